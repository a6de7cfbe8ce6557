r"""Findings of chapter 4 and section 4a (the report's Section 4): the constraint, clipping and Algorithm 3.

Chapter 4: the data model (normal marginals without correlation are not the joint model),
the expected transformed norm behind eqs. (7)-(8) and (10), and Algorithm 3's noise error,
eqs. (9) and (24).  Section 4a: the clipped sum's sensitivity (Proposition 4.B),
data-independent inputs, the corrected Algorithm 3 against the report's pseudo-code, the
transformed norm's law, the expected number of clipped rows, a misplaced centre and the
uncentred constraint, eq. (6.1) of chapter 6 (the report's eq. 25).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import sympy as sp
from numpy.typing import NDArray
from scipy import stats
from sympy.stats import E as expect
from sympy.stats import Normal

from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import calibration, gchisq, mechanisms, scaling
from egmlib.validation import check_count

__all__ = ["TransformedNorm", "transformed_norm", "NoiseError", "noise_error", "ClippedSensitivity",
           "clipped_sensitivity", "PublicInputs", "public_inputs", "CorrectedAlgorithm3", "corrected_algorithm3",
           "TransformedLaw", "transformed_law", "ClippedRows", "clipped_rows", "CentreOffset", "centre_offset",
           "Eq25", "uncentred_eq25", "NormalMarginals", "normal_marginals"]


def _noise_std(release: mechanisms.GaussianDataResult) -> NDArray[np.float64]:
    """Algorithm 3's noise scale per coordinate, sensitivity * sigma_opt / b_j (eq. (24)); the
    release must have been given a budget."""
    if release.noise_std is None:
        raise ValueError("the release has no noise_std: Algorithm 3 needs eps and delta for it")
    return release.noise_std


@dataclass(frozen=True)
class TransformedNorm(Finding):
    """Eqs. (7)-(8) and (10): E||(x - mu_hat) * b||^2, term by term in sympy and by Monte Carlo."""

    symbolic_ok: bool
    mean: float  #: Monte Carlo mean
    exact: float  #: sum (b sigma)^2 + ||b (mu - mu_hat)||^2
    z: float  #: their difference in standard errors

    @property
    def ok(self) -> bool:
        return bool(self.symbolic_ok) and abs(self.z) < 4

    @property
    def evidence(self) -> str:
        return (r"sympy: $\mathbb E[(b(X-\hat\mu))^2]$ is $b^2\sigma^2 + b^2(\mu-\hat\mu)^2$ exactly; "
                f"Monte Carlo {self.mean:.5f} against {self.exact:.5f} ({self.z:+.2f} standard errors).")


def transformed_norm() -> TransformedNorm:
    """Eqs. (7)-(8) and (10): the expected squared transformed norm with the bias term, in sympy, and a
    Monte Carlo mean over 400 000 rows in d = 4."""
    b_, s_ = sp.symbols("b sigma", positive=True)
    m_, mh_ = sp.symbols("mu mu_hat", real=True)
    term = sp.simplify(expect((b_ * (Normal("X", m_, s_) - mh_)) ** 2))
    symbolic_ok = sp.simplify(term - (b_**2 * s_**2 + b_**2 * (m_ - mh_) ** 2)) == 0
    rng = np.random.default_rng(8)
    sig = np.array([2.0, 1.0, 0.5, 0.25])
    mu, muh = np.array([1.0, -2.0, 0.0, 3.0]), np.array([1.2, -2.1, 0.3, 3.0])
    b = np.array([0.3, 0.6, 1.1, 1.9])
    x = mu + sig * rng.standard_normal((400_000, 4))
    sq = np.sum(((x - muh) * b) ** 2, axis=1)
    rhs = np.sum((b * sig) ** 2) + np.sum((b * (mu - muh)) ** 2)
    z = (sq.mean() - rhs) / (sq.std() / math.sqrt(sq.size))
    return TransformedNorm(bool(symbolic_ok), float(sq.mean()), float(rhs), float(z))


@dataclass(frozen=True)
class NoiseError(Finding):
    """Eqs. (9) and (24): Algorithm 3's noise error in closed form, from the library and simulated."""

    C: float
    s_opt: float
    closed: float  #: eq. (9)
    library: float  #: egmlib.scaling.algorithm3_noise_error
    eq24: float
    mc: float
    z: float

    @property
    def ok(self) -> bool:
        return (math.isclose(self.closed, self.library, rel_tol=1e-12) and math.isclose(self.closed, self.eq24,
                                                                                        rel_tol=1e-12)
                and abs(self.z) < 4)

    @property
    def evidence(self) -> str:
        return (f"$C$ = {self.C:.6f}, $\\sigma_{{opt}}$ = {self.s_opt:.6f}: eq. (9) {self.closed:.6f}, library "
                f"{self.library:.6f}, eq. (24) {self.eq24:.6f}; Monte Carlo {self.mc:.1f} ({self.z:+.2f} standard "
                "errors).")


def noise_error() -> NoiseError:
    """Eqs. (9) and (24) at Lemma 4.1's scaling of sigma = (3, 1, 0.5, 0.1), p_C = 1e-3 and
    (1, 1e-6): the closed forms against the library's error and 200 000 simulated noise vectors."""
    sigma = np.array([3.0, 1.0, 0.5, 0.1])
    b = scaling.algorithm3_scaling(sigma)  # Lemma 4.1
    C = math.sqrt(float(gchisq.isf(1e-3, w=(b * sigma) ** 2)))  # clipping prob. 1/n
    s_opt = float(calibration.sigma_opt(eps=1.0, delta=1e-6))
    error = scaling.algorithm3_noise_error(b, C=C, sigma_opt=s_opt)
    closed = (2 * C * s_opt) ** 2 * np.sum(b**-2)
    eq24 = (2 * C * s_opt * sigma.sum()) ** 2
    rng = np.random.default_rng(9)
    err = np.sum((rng.normal(scale=2 * C * s_opt, size=(200_000, 4)) / b) ** 2, axis=1)
    z = (err.mean() - closed) / (err.std() / math.sqrt(err.size))
    return NoiseError(C, s_opt, float(closed), float(error), float(eq24), float(err.mean()), float(z))


@dataclass(frozen=True)
class ClippedSensitivity(Finding):
    """Proposition 4.B: how far one replaced row moves the clipped sum."""

    C: float
    outside: float  #: share of the rows outside the ball
    largest_move: float  #: over 2000 random replacements
    antipodal: float  #: two antipodal rows

    @property
    def ok(self) -> bool:
        return (self.largest_move <= 2 * self.C + 1e-12 and abs(self.antipodal - 2 * self.C) < 1e-12
                and self.largest_move > self.C)

    @property
    def evidence(self) -> str:
        return (f"{self.outside:.0%} of the rows lie outside the ball; largest move over 2000 replacements "
                f"{self.largest_move:.6f} (C = {self.C}, 2C = {2 * self.C}); antipodal replacement "
                f"{self.antipodal:.12f}.")


def clipped_sensitivity() -> ClippedSensitivity:
    """Proposition 4.B: the clipping map of Definition 4.A on 400 rows in d = 5 (C = 1.5); replacing one
    row moves the clipped sum by at most 2C, and two antipodal rows attain it."""
    rng = np.random.default_rng(20230120)
    d, n, C = 5, 400, 1.5
    mu_hat = rng.normal(size=d)

    def clip(x: np.ndarray, centre: np.ndarray, radius: float) -> np.ndarray:
        """The clipping map of Definition 4.A, row-wise."""
        y = x - centre
        norm = np.linalg.norm(y, axis=-1, keepdims=True)
        return centre + np.minimum(1.0, radius / np.maximum(norm, 1e-300)) * y

    X = mu_hat + rng.normal(size=(n, d))  # most rows lie outside the ball
    base = clip(X, mu_hat, C).sum(axis=0)
    moves = []
    for _ in range(2000):
        Xp = X.copy()
        Xp[rng.integers(n)] = mu_hat + rng.normal(scale=3.0, size=d)
        moves.append(np.linalg.norm(clip(Xp, mu_hat, C).sum(axis=0) - base))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    A, B = X.copy(), X.copy()
    A[0], B[0] = mu_hat + 10 * u, mu_hat - 10 * u
    attained = np.linalg.norm(clip(A, mu_hat, C).sum(axis=0) - clip(B, mu_hat, C).sum(axis=0))
    outside = np.mean(np.linalg.norm(X - mu_hat, axis=1) > C)
    return ClippedSensitivity(C, float(outside), float(max(moves)), float(attained))


@dataclass(frozen=True)
class PublicInputs(Finding):
    """Algorithm 3 on ten neighbouring pairs without noise, public against data-dependent sigma."""

    public: tuple[tuple[float, float], ...]  #: per pair, Delta sigma_opt and the largest absolute log noise-scale ratio
    from_data: tuple[tuple[float, float], ...]

    GLUE = MappingProxyType({"public-inputs-delta": "data_delta", "public-inputs-scale": "data_scale"})

    data_delta = property(lambda self: max(v[0] for v in self.from_data))
    data_scale = property(lambda self: max(math.exp(v[1]) for v in self.from_data))

    @property
    def ok(self) -> bool:
        return (all(v[0] <= 1 + 1e-9 and v[1] == 0.0 for v in self.public)
                and all(v[0] > 1 or v[1] > 0.1 for v in self.from_data))

    @property
    def evidence(self) -> str:
        return (f"public: largest $\\Delta\\sigma_{{opt}}$ {max(v[0] for v in self.public):.4f}; from the data: "
                f"$\\Delta\\sigma_{{opt}}$ up to {self.data_delta:.3g}, noise scales off by up to a factor "
                f"{self.data_scale:.3g}.")

    def table(self) -> Table:
        rows = {"public": self.public, "from the data": self.from_data}
        return table({"$\\boldsymbol\\sigma$": list(rows),
                      "largest $\\Delta\\sigma_{opt}$": [max(v[0] for v in rows[k]) for k in rows],
                      "largest ratio of noise scales": [max(math.exp(v[1]) for v in rows[k]) for k in rows]},
                     formats={"largest $\\Delta\\sigma_{opt}$": "{:.4g}", "largest ratio of noise scales": "{:.4g}"},
                     caption="Ten neighbouring pairs through Algorithm 3 without noise: public against "
                             "data-dependent standard deviations.", label="ch4-tab-public-inputs")


def public_inputs() -> PublicInputs:
    """Algorithm 3 (egmlib.mechanisms.algorithm3, no noise) on ten neighbouring pairs (n = 200, d = 5; one
    row moved 50 standard deviations out): with sigma public the pair meets Delta sigma_opt <= 1 with
    equal noise; with sigma estimated from the rows the noise scale itself moves."""
    rng = np.random.default_rng(61)
    eps_, delta_ = 1.0, 1e-6
    s_opt = float(calibration.sigma_opt(eps=eps_, delta=delta_))
    rows: dict[str, list[tuple[float, float]]] = {"public": [], "from the data": []}
    for _ in range(10):
        sig_true = rng.lognormal(0.0, 1.0, 5)
        X = sig_true * rng.standard_normal((200, 5))
        Xp = X.copy()
        Xp[-1] = 0.0
        Xp[-1, int(rng.integers(5))] = 50.0 * sig_true.max()
        for kind in rows:
            sx, sxp = (sig_true, sig_true) if kind == "public" else (X.std(axis=0, ddof=1), Xp.std(axis=0, ddof=1))
            r = mechanisms.algorithm3(X, sigma=sx, mu_hat=np.zeros(5), eps=eps_, delta=delta_, rng=None,
                                      p_clip=1e-3, noise=False)
            rp = mechanisms.algorithm3(Xp, sigma=sxp, mu_hat=np.zeros(5), eps=eps_, delta=delta_, rng=None,
                                       p_clip=1e-3, noise=False)
            rows[kind].append((float(np.linalg.norm((r.sum - rp.sum) / _noise_std(r))) * s_opt,
                               float(np.max(np.abs(np.log(_noise_std(rp) / _noise_std(r)))))))
    return PublicInputs(tuple(rows["public"]), tuple(rows["from the data"]))


@dataclass(frozen=True)
class CorrectedAlgorithm3(Finding):
    """Algorithm 3 without noise against the exact sum, the corrected step 8 and the report's pseudo-code."""

    truth: tuple[float, ...]
    release: tuple[float, ...]  #: the library's noiseless release
    corrected: tuple[float, ...]
    literal: tuple[float, ...]  #: the report's pseudo-code, taken literally
    n_clipped: int
    radius_ok: bool  #: the release's C and noise scales are the model's
    n: int
    C: float  #: the model's radius
    sensitivity: float  #: the release's sensitivity, 2C raised by the bound on its sum's rounding

    GLUE = MappingProxyType({"alg3-literal-factor": "factor"})

    def _rel(self, a: tuple[float, ...]) -> float:
        t = np.array(self.truth)
        return float(np.max(np.abs(np.array(a) - t) / np.abs(t)))

    factor = property(lambda self: float(self.literal[0] / self.truth[0]))

    @property
    def ok(self) -> bool:
        return (self.n_clipped == 0 and self._rel(self.release) < 1e-12 and self._rel(self.corrected) < 1e-12
                and self.radius_ok and 2 * self.C < self.sensitivity < 2 * self.C * (1 + 1e-9)
                and self._rel(self.literal) > 0.1)

    @property
    def evidence(self) -> str:
        return (f"rows clipped: {self.n_clipped}; largest relative error: Algorithm 3 "
                f"{readable(self._rel(self.release))}, corrected {readable(self._rel(self.corrected))}, literal "
                f"{self._rel(self.literal):.2f} (first coordinate {self.factor:.2f} times the true sum); sensitivity "
                f"2C times 1 + {readable(self.sensitivity / (2 * self.C) - 1)}.")

    def table(self) -> Table:
        d = len(self.truth)
        cols = (self.truth, self.release, self.corrected, self.literal)
        return table({"": ["true sum", "Algorithm 3", "corrected step 8", "the report, literally"],
                      **{f"$j = {j + 1}$": [c[j] for c in cols] for j in range(d)}},
                     formats={f"$j = {j + 1}$": "{:.3f}" for j in range(d)},
                     caption=f"Noiseless outputs of Algorithm 3 on {self.n} rows, coordinate by coordinate.",
                     label="ch4-tab-algorithm3")


def corrected_algorithm3() -> CorrectedAlgorithm3:
    """Algorithm 3's noiseless release (egmlib.mechanisms.algorithm3; 1000 rows, sigma = (3, 1, 0.5, 0.1),
    mu given, p_C = 1e-12, the chapter's example) against the exact sum, step 8 corrected by hand, and
    the report's pseudo-code taken literally."""
    rng = np.random.default_rng(3)
    sigma, mu = np.array([3.0, 1.0, 0.5, 0.1]), np.array([10.0, -5.0, 2.0, 7.0])
    X = mu + sigma * rng.standard_normal((1000, 4))
    release = mechanisms.algorithm3(X, sigma=sigma, mu_hat=mu, eps=1.0, delta=1e-6, rng=None, p_clip=1e-12,
                                    noise=False)
    n = X.shape[0]
    b = scaling.algorithm3_scaling(sigma)
    C = math.sqrt(float(gchisq.isf(1e-12, w=(sigma * b) ** 2)))
    xt = (X - mu) * b
    kept = np.minimum(1.0, C / np.linalg.norm(xt, axis=1))[:, None] * xt
    corrected = kept.sum(axis=0) / b + n * mu
    literal = (kept + mu).sum(axis=0) / b
    truth = X.sum(axis=0)
    s_opt = float(calibration.sigma_opt(eps=1.0, delta=1e-6))
    # the noise is the release's sensitivity (2C raised by the bound on its sum's rounding) times sigma_opt / b
    radius_ok = bool(math.isclose(C, release.C, rel_tol=1e-12)
                     and np.allclose(_noise_std(release), release.sensitivity * s_opt / b, rtol=1e-12, atol=0))
    as_t = lambda a: tuple(float(v) for v in a)  # noqa: E731
    return CorrectedAlgorithm3(as_t(truth), as_t(release.sum), as_t(corrected), as_t(literal), int(release.n_clipped),
                               radius_ok, n, C, float(release.sensitivity))


@dataclass(frozen=True)
class TransformedLaw(Finding):
    """Algorithm 3: the transformed squared norm at Lemma 4.1's scaling against its exact law."""

    w: tuple[float, ...]  #: the weights sigma_j / S
    mean: float
    exact_mean: float
    var: float
    exact_var: float
    zs: tuple[float, ...]  #: the mean's and two tails' deviations in standard errors
    tails: tuple[str, ...]
    x_eq: float  #: the library's quantile for ten equal weights
    x_scipy: float  #: scipy's chi-square quantile
    weights_ok: bool

    @property
    def ok(self) -> bool:
        return (self.weights_ok and max(abs(z) for z in self.zs) < 4 and abs(self.var / self.exact_var - 1) < 0.01
                and abs(self.x_eq / self.x_scipy - 1) < 1e-9)

    @property
    def evidence(self) -> str:
        return (f"mean {self.mean:.5f} (exact {self.exact_mean:.5f}), variance {self.var:.5f} "
                f"(exact {self.exact_var:.5f}); " + "; ".join(self.tails)
                + f"; equal weights: {self.x_eq:.10f} against scipy {self.x_scipy:.10f}.")


def transformed_law() -> TransformedLaw:
    """Lemma 4.1's scaling of sigma = (3, 1, 0.5, 0.1): 10^6 simulated transformed squared norms against
    the generalized chi-square law of egmlib.gchisq (mean, variance, tails at 1e-2 and 1e-3), and
    the library's quantile against scipy's chi-square for equal weights."""
    sig = np.array([3.0, 1.0, 0.5, 0.1])
    w = (scaling.algorithm3_scaling(sig) * sig) ** 2
    rng = np.random.default_rng(12)
    q = (rng.standard_normal((1_000_000, 4)) ** 2) @ w
    zs = [(q.mean() - gchisq.mean(w)) / (q.std() / 1000.0)]
    tails = []
    for p in (1e-2, 1e-3):
        x = float(gchisq.isf(p, w=w))
        freq = float(np.mean(q > x))
        zs.append((freq - p) / math.sqrt(p * (1 - p) / q.size))
        tails.append(f"$P(Q > {x:.5f})$: {freq:.5f} against {p:g}")
    x_eq = float(gchisq.isf(1e-6, w=np.full(10, 0.1)))
    x_scipy = 0.1 * stats.chi2.isf(1e-6, 10)
    return TransformedLaw(tuple(float(v) for v in w), float(q.mean()), float(gchisq.mean(w)), float(q.var()),
                          float(gchisq.var(w)), tuple(float(z) for z in zs), tuple(tails), x_eq, float(x_scipy),
                          bool(np.allclose(w, sig / sig.sum(), rtol=1e-12)))


@dataclass(frozen=True)
class ClippedRows(Finding):
    """Algorithm 3 at p_C = 1/n: the number of clipped rows per dataset."""

    n: int
    datasets: int
    mean: float  #: mean number of clipped rows
    share: float  #: share of the datasets with a clipped row

    GLUE = MappingProxyType({"clipped-any-1e2": "any_1e2", "clipped-any-1e3": "any_1e3",
                             "clipped-any-1e6": "any_1e6"})

    any_1e2 = property(lambda self: 1 - (1 - 1 / 100) ** 100)
    any_1e3 = property(lambda self: 1 - (1 - 1 / 1000) ** 1000)
    any_1e6 = property(lambda self: 1 - (1 - 1 / 10**6) ** 10**6)
    p_any = property(lambda self: 1 - (1 - 1 / self.n) ** self.n)
    z_mean = property(lambda self: (self.mean - 1) / math.sqrt((1 - 1 / self.n) / self.datasets))
    z_share = property(lambda self: (self.share - self.p_any) / math.sqrt(self.p_any * (1 - self.p_any)
                                                                          / self.datasets))

    @property
    def ok(self) -> bool:
        return abs(self.z_mean) < 4 and abs(self.z_share) < 4 and self.share > 0.6

    @property
    def evidence(self) -> str:
        return (f"n = {self.n}: mean number of clipped rows {self.mean:.4f} ({self.z_mean:+.2f} standard errors from "
                f"1); datasets with a clipped row {self.share:.4f}, exact {self.p_any:.4f} ({self.z_share:+.2f} "
                "standard errors).")


def clipped_rows() -> ClippedRows:
    """Algorithm 3 at clipping probability 1/n (n = 1000, Lemma 4.1's weights of sigma = (3, 1, 0.5,
    0.1)): 10 000 simulated datasets' clipped rows, one on average and at least one with probability
    1 - (1 - 1/n)^n."""
    sig = np.array([3.0, 1.0, 0.5, 0.1])
    w = (scaling.algorithm3_scaling(sig) * sig) ** 2
    n, datasets = 1000, 10_000
    C2 = float(gchisq.isf(1 / n, w=w))
    rng = np.random.default_rng(46)
    counts = np.concatenate([np.sum(((rng.standard_normal((500, n, 4)) ** 2) @ w) > C2, axis=1)
                             for _ in range(datasets // 500)])
    return ClippedRows(n, datasets, float(counts.mean()), float(np.mean(counts > 0)))


@dataclass(frozen=True)
class CentreOffset(Finding):
    """Eq. (10): a centre off by 0.3 sigma in every coordinate against the radius set for 1e-3."""

    C2: float
    p: float
    actual: float  #: the clipping probability from the noncentral chi-square law
    freq: float  #: in the simulation
    z: float

    GLUE = MappingProxyType({"centre-offset-factor": "factor"})

    factor = property(lambda self: float(self.actual / self.p))

    @property
    def ok(self) -> bool:
        return abs(self.z) < 4 and self.actual > 2 * self.p

    @property
    def evidence(self) -> str:
        return (f"$C^2$ = {self.C2:.4f}; clipping probability {readable(self.actual)} from the noncentral chi-square "
                f"law, {readable(self.freq)} in the simulation ({readable(self.z)} standard errors).")


def centre_offset() -> CentreOffset:
    """Eq. (10) with mu_hat_j = mu_j + 0.3 sigma_j, d = 10: the radius set for clipping probability 1e-3
    clips more often; the noncentral chi-square law against 10^6 simulated rows."""
    d, p, offset = 10, 1e-3, 0.3
    sig = np.ones(d)
    C2 = float(gchisq.isf(p, w=scaling.algorithm3_scaling(sig) ** 2 * sig**2))  # weights all 1/d
    actual = float(stats.ncx2.sf(C2 * d, d, d * offset**2))
    rng = np.random.default_rng(10)
    rows = offset + rng.standard_normal((1_000_000, d))  # x - mu_hat, in units of sigma
    freq = float(np.mean(np.sum(rows**2, axis=1) / d > C2))
    z = (freq - actual) / math.sqrt(actual * (1 - actual) / rows.shape[0])
    return CentreOffset(C2, p, actual, freq, float(z))


@dataclass(frozen=True)
class Eq25(Finding):
    """Eq. (25) uncentred: n Pr[||x b|| > 1/2] against the mean."""

    n: int
    probs: Mapping[float, float]  #: mu_j / sigma_j -> clipping probability
    r2: float
    mc: float  #: simulated probability at mu_j = sigma_j
    se: float

    GLUE = MappingProxyType({"eq25-prob-small": "small", "eq25-prob-large": "large"})

    small = property(lambda self: float(self.n * self.probs[0.1]))
    large = property(lambda self: float(self.n * self.probs[1.0]))

    @property
    def ok(self) -> bool:
        ms = sorted(self.probs)
        return (math.isclose(self.n * float(stats.chi2.sf(self.r2, 10)), 1.0, rel_tol=1e-9)
                and all(self.probs[a] < self.probs[b] for a, b in zip(ms, ms[1:], strict=False))
                and self.probs[3.0] > 0.99 and abs(self.mc - self.probs[1.0]) < 4 * self.se)

    @property
    def evidence(self) -> str:
        ms = sorted(self.probs)
        return ("$n\\Pr[\\|x_i\\odot b\\| > 1/2]$ for $\\mu_j/\\sigma_j$ = 0, 0.1, 0.5, 1, 3: "
                + ", ".join(f"{self.n * self.probs[m]:.4g}" for m in ms)
                + f"; simulation at $\\mu_j = \\sigma_j$: {self.mc:.4f} against {self.probs[1.0]:.4f} "
                  f"({(self.mc - self.probs[1.0]) / self.se:+.2f} standard errors).")


def uncentred_eq25() -> Eq25:
    """Eq. (25) without a centre (d = 10, n = 1000, all b_j equal, centred clipping probability 1/n): the
    probability grows with the mean (noncentral chi-square; a simulation at mu_j = sigma_j)."""
    d, n = 10, 1000
    q = float(gchisq.isf(1.0 / n, w=np.ones(d)))
    b = 1.0 / (2.0 * math.sqrt(q))  # all b_j equal: centred probability 1/n
    r2 = 0.25 / b**2
    probs = {m: float(stats.ncx2.sf(r2, d, d * m**2) if m > 0 else stats.chi2.sf(r2, d))
             for m in (0.0, 0.1, 0.5, 1.0, 3.0)}
    rng = np.random.default_rng(25)
    xs = 1.0 + rng.standard_normal((400_000, d))
    mc = float(np.mean(np.sum(xs**2, axis=1) > r2))
    se = math.sqrt(probs[1.0] * (1 - probs[1.0]) / xs.shape[0])
    return Eq25(n, MappingProxyType(probs), r2, mc, se)


@dataclass(frozen=True)
class NormalMarginals(Finding):
    """Section 4: normal, uncorrelated coordinates are not the joint model N(mu, diag(sigma^2)).

    The counterexample x = (Z, S Z), S = +-1 a fair sign independent of Z: both coordinates are N(0, 1)
    and uncorrelated, but x_1 + x_2 = (1 + S) Z is 0 with probability 1/2, so x is not Gaussian, and
    ||x||^2 = 2 Z^2 is not chi^2_2: the radius the joint model gives for p_C = 1/n clips another share.
    """

    draws: int  #: Monte Carlo draws of x
    ks_p: tuple[float, float]  #: Kolmogorov-Smirnov p-values of the two coordinates against N(0, 1)
    correlation: float  #: their sample correlation
    zero_sum: float  #: the share of draws with x_1 + x_2 = 0 (a Gaussian law has none)
    n: int  #: rows, p_C = 1/n
    radius2: float  #: C^2 of the joint model with sigma = (1, 1), the upper 1/n-quantile of chi^2_2 (2 ln n)
    pclip_exact: float  #: P(2 Z^2 > C^2) under the counterexample
    pclip_mc: float  #: its Monte Carlo frequency

    GLUE = MappingProxyType({"marginals-n": "n", "marginals-pclip-n": "pclip_times_n"})

    @property
    def pclip_times_n(self) -> float:
        """The counterexample's clipping probability at the joint model's radius, in units of 1/n."""
        return self.pclip_exact * self.n

    @property
    def ok(self) -> bool:
        se = math.sqrt(self.pclip_exact * (1 - self.pclip_exact) / self.draws)
        return (min(self.ks_p) > 1e-3 and abs(self.correlation) < 5 / math.sqrt(self.draws)
                and abs(self.zero_sum - 0.5) < 5 * 0.5 / math.sqrt(self.draws)
                and abs(self.pclip_mc - self.pclip_exact) < 5 * se and self.pclip_times_n > 2)

    @property
    def evidence(self) -> str:
        return (f"{self.draws:,} draws of $(Z, SZ)$: Kolmogorov-Smirnov $p$-values {self.ks_p[0]:.2f} and "
                f"{self.ks_p[1]:.2f} against $\\mathcal N(0, 1)$, correlation {self.correlation:+.4f}, "
                f"$x_1 + x_2 = 0$ in {self.zero_sum:.1%} of them; at the joint model's radius for $n$ = {self.n}, "
                f"$C^2 = 2\\ln n$ = {self.radius2:.3f}, the clipping probability is {self.pclip_exact:.4f} "
                f"(Monte Carlo {self.pclip_mc:.4f}), {self.pclip_times_n:.2f}$/n$ instead of $1/n$.")


def normal_marginals(*, n: int = 100, draws: int = 10**6) -> NormalMarginals:
    """The counterexample of :class:`NormalMarginals` (seeded): ``draws`` pairs (Z, S Z), their marginals,
    correlation and zero sums, and the clipping probability at the radius of the joint model with
    sigma = (1, 1) and p_C = 1/n (scipy's chi2 for the exact values)."""
    n = check_count("n", n, minimum=2)  # p_C = 1/n below 1
    draws = check_count("draws", draws, minimum=2, maximum=10**7)  # two coordinates each: at most 0.3 GB
    rng = np.random.default_rng(404)
    z = rng.standard_normal(draws)
    x = np.stack([z, np.where(rng.random(draws) < 0.5, -1.0, 1.0) * z], axis=1)
    radius2 = float(stats.chi2.isf(1.0 / n, 2))
    q = np.sum(x * x, axis=1)
    return NormalMarginals(draws, (float(stats.kstest(x[:, 0], "norm").pvalue), float(stats.kstest(x[:, 1], "norm")
                                                                                       .pvalue)),
                           float(np.asarray(np.corrcoef(x.T))[0, 1]), float(np.mean(x[:, 0] + x[:, 1] == 0)), n,
                           radius2,
                           float(stats.chi2.sf(radius2 / 2, 1)), float(np.mean(q > radius2)))
