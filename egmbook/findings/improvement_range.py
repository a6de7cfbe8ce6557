r"""Findings of chapters 5c and 5d: the reduction of :math:`R \ge \bar R` to Schur-concavity, and its thresholds.

:math:`R(\sigma, n)` is Figure 2's improvement and :math:`\bar R = d\sum_j\sigma_j^2/(\sum_j\sigma_j)^2`
Theorem 3's factor; :math:`F(x; w) = P(\sum_jw_jZ_j^2 \le x)`.  The book proves :math:`R \ge \bar R`
wherever :math:`F(\cdot\,; \cdot)` is Schur-concave at :math:`C_t^2` (Theorem 5.E), for two weights
from :math:`x = 2` (Proposition 5.F, hence Corollary 5.G: every :math:`\sigma` once :math:`n \ge 8`)
and in every dimension from :math:`x = 3` (Proposition 5.H, Corollary 5.I).

- :func:`schur_reduction` -- Lemma 5.E, Theorem 5.E(a) and (c) and the stored scan behind Conjecture 5.B;
- :func:`two_weights` -- Proposition 5.F and Corollary 5.G at :math:`n = 8`;
- :func:`two_weight_sharpness` -- Corollary 5.G's threshold is sharp: :math:`R < \bar R` near equal
  weights for every :math:`n < e^2`, at 30 digits;
- :func:`level_three` -- Proposition 5.H and Corollary 5.I(a) on Figure 2's dense grid;
- :func:`chi_one_level` -- where a :math:`\chi^2_1` quantile passes 3 (the dominant-coordinate end of
  Corollary 5.I(a));
- :func:`equal_weights_radius` -- equal weights minimise :math:`C_t^2` only once it is at least 2;
- :func:`uniform_thresholds` -- the uniform thresholds of Theorem 5.E(b) with the levels 3 and 2, and the
  lower bound on any uniform threshold from equal weights (Proposition 5.D(b)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from scipy import stats

from egmbook import experiments, improvement_margin
from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import gchisq, scaling
from egmlib.validation import check_count, check_mapping

__all__ = ["SchurReduction", "schur_reduction", "TwoWeights", "two_weights", "TwoWeightSharpness",
           "two_weight_sharpness", "LevelThree", "level_three", "ChiOneLevel", "chi_one_level",
           "EqualWeightsRadius", "equal_weights_radius", "UniformThresholds", "uniform_thresholds"]

D_VALUES, N_VALUES = experiments.FIGURE2_D, experiments.FIGURE2_N


# --------------------------------------------------------------------------------------------
# chapter 5c: the reduction
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SchurReduction(Finding):
    """Lemma 5.E, Theorem 5.E(a) and (c), and the stored Schur-Ostrowski scan (Conjecture 5.B)."""

    lemma_ok: bool  #: v = sigma^2 / sum sigma^2 majorizes sigma at 300 random sigma, two routes
    theorem_ok: bool  #: R >= R_bar at every random sigma whose C_t^2 is at least 2
    theorem_points: int  #: how many such sigma were drawn
    part_c_ok: bool  #: P(chi2_d <= d) < P(Z^2 <= 1) for d from 2 to 1e5
    live_ok: bool  #: a live recomputation of stored scan points agrees
    live_points: int
    d2_points_above: int  #: d = 2 grid points at x >= 2
    d2_nonneg_above: bool  #: their gaps are all >= 0
    d2_negative_below: int  #: d = 2 grid points at x < 2 with a negative gap
    d2_threshold: float  #: the x from which the gap is non-negative for every t
    dn_vectors: int  #: weight vectors of the scan for d = 3..10
    dn_nonneg_above: bool  #: their gaps at x >= 2 are all >= 0
    dn_gap_at_2: float  #: the smallest of their gaps at x = 2

    GLUE = MappingProxyType({"schur-d2-points": "d2_points_above", "schur-dn-vectors": "dn_vectors",
                             "schur-d2-threshold": "d2_threshold"})

    @property
    def ok(self) -> bool:
        return (self.lemma_ok and self.theorem_ok and self.theorem_points >= 10 and self.part_c_ok and self.live_ok
                and self.d2_nonneg_above and self.d2_negative_below > 0 and self.d2_threshold == 2.0
                and self.dn_nonneg_above)

    @property
    def evidence(self) -> str:
        return (f"300 random lemma instances; {self.theorem_points} random points with $C_t^2 \\ge 2$, all with "
                f"$R \\ge \\bar R$; $d = 2$: {self.d2_points_above} grid points at $x \\ge 2$ with gap $\\ge 0$ and "
                f"{self.d2_negative_below} negative below 2, the gap is non-negative from $x$ = {self.d2_threshold:g} "
                f"on for every $t$; $d = 3..10$: {self.dn_vectors} weight vectors, smallest gap at $x$ = 2: "
                f"{readable(self.dn_gap_at_2, 3)}; live recomputation of {self.live_points} stored points agrees.")


def schur_reduction(scan: Mapping[str, Any]) -> SchurReduction:
    """The checks of chapter 5c's reduction (seeded): ``scan`` is the stored Schur-Ostrowski scan
    (``data/schur_threshold_scan.json``, loaded by the chapter)."""
    check_mapping("scan", scan, keys=["t", "x_d2", "gap_d2", "x_d", "rows"])
    rng = np.random.default_rng(55)
    lemma_ok, thm_ok, thm_pts = True, True, 0
    for _ in range(300):
        d = int(rng.integers(2, 12))
        s = rng.lognormal(0.0, float(rng.uniform(0.05, 2.0)), d)
        lemma_ok &= improvement_margin.majorizes(s * s, s)
        a = np.sort(s * s / np.sum(s * s))[::-1].cumsum()  # partial sums by hand, an independent route
        b = np.sort(s / np.sum(s))[::-1].cumsum()
        lemma_ok &= bool(np.all(a >= b - 1e-12))
    for _ in range(40):
        d = int(rng.integers(2, 8))
        s = rng.lognormal(0.0, float(rng.uniform(0.05, 1.5)), d)
        n = int(rng.choice([10, 100, 1000, 10**6]))
        if improvement_margin.transformed_radius_squared(s, n=n) >= 2.0:
            thm_pts += 1
            thm_ok &= experiments.figure2_improvement(s, n=n) >= scaling.egm_improvement(s) * (1.0 - 1e-9)
    d_c = np.unique(np.round(np.logspace(np.log10(2), 5, 60)).astype(int))
    c_ok = bool(np.all(stats.chi2.cdf(d_c, d_c) < stats.chi2.cdf(1.0, 1)))
    x2, g2 = np.array(scan["x_d2"]), np.array(scan["gap_d2"])
    xd, gd = np.array(scan["x_d"]), np.array([r["gaps"] for r in scan["rows"]])
    t_live, x_live = [scan["t"][i] for i in (3, 20)], [2.0, 3.0, 1.9]
    live = [[improvement_margin.schur_ostrowski_gap(x, [1 - t, t]) for x in x_live] for t in t_live]
    stored = [[g2[scan["t"].index(t)][list(x2).index(x)] for x in x_live] for t in t_live]
    first_ok = [float(x2[np.flatnonzero(row < 0).max() + 1]) if np.any(row < 0) else float(x2[0]) for row in g2]
    return SchurReduction(
        lemma_ok=bool(lemma_ok), theorem_ok=bool(thm_ok), theorem_points=thm_pts, part_c_ok=c_ok,
        live_ok=bool(np.allclose(live, stored, rtol=1e-9, atol=1e-15)), live_points=len(t_live) * len(x_live),
        d2_points_above=int(g2[:, x2 >= 2].size), d2_nonneg_above=bool(np.all(g2[:, x2 >= 2] >= 0)),
        d2_negative_below=int(np.sum(g2[:, x2 < 2] < 0)), d2_threshold=max(first_ok), dn_vectors=int(gd.shape[0]),
        dn_nonneg_above=bool(np.all(gd[:, xd >= 2] >= 0)), dn_gap_at_2=float(gd[:, list(xd).index(2.0)].min()))


@dataclass(frozen=True)
class TwoWeights(Finding):
    """Proposition 5.F (two weights: Schur-concave exactly from x = 2) and Corollary 5.G at n = 8."""

    routes_ok: bool  #: polar form = library cdf, its slope = half the Schur-Ostrowski gap, 30 random points
    grid_points: int  #: (x, t) grid points with x >= 2
    slope_ok: bool  #: the slope is >= 0 at all of them
    slope_below: float  #: the smallest slope at x in (1.5, 1.8, 1.95), t = 0.45 (negative)
    series_ok: bool  #: y/(1 - y^2) - artanh(y) has positive odd coefficients to y^41 (sympy)
    margin_n8: float  #: the smallest R/R_bar - 1 at n = 8 over 49 values of t

    @property
    def ok(self) -> bool:
        return self.routes_ok and self.slope_ok and self.slope_below < 0 and self.series_ok and self.margin_n8 >= 0

    @property
    def evidence(self) -> str:
        return (f"polar form and slope agree with the library's distribution function and the Schur-Ostrowski gap "
                f"at 30 random points; slope $\\ge 0$ at all {self.grid_points} grid points with $x \\ge 2$, "
                f"{self.slope_below:.3g} at $x < 2$, $t = 0.45$; series coefficients of "
                f"$y/(1-y^2) - \\operatorname{{artanh}} y$ positive to $y^{{41}}$; $R/\\bar R - 1 \\ge$ "
                f"{readable(self.margin_n8, 3)} on 49 values of $t$ at $n = 8$.")


def two_weights() -> TwoWeights:
    """The checks of Proposition 5.F and Corollary 5.G (seeded)."""
    rng = np.random.default_rng(56)
    routes_ok = True
    for _ in range(30):
        x, t = float(rng.uniform(0.3, 8.0)), float(rng.uniform(0.01, 0.49))
        routes_ok &= abs(improvement_margin.two_weight_cdf(x, t) - float(gchisq.cdf(x, w=[1 - t, t]))) < 1e-10
        routes_ok &= abs(improvement_margin.two_weight_cdf_slope(x, t)
                         - improvement_margin.schur_ostrowski_gap(x, [1 - t, t]) / 2) < 1e-8
    xs, ts = np.r_[np.linspace(2.0, 6.0, 17), 10.0, 20.0], np.linspace(0.0, 0.499, 25)
    slope_ok = all(improvement_margin.two_weight_cdf_slope(x, t) >= 0 for x in xs for t in ts)
    below = min(improvement_margin.two_weight_cdf_slope(x, 0.45) for x in (1.5, 1.8, 1.95))
    y = sp.symbols("y")
    coeffs = sp.Poly(sp.series(y / (1 - y**2) - sp.atanh(y), y, 0, 42).removeO(), y).all_coeffs()[::-1]
    series_ok = all(c >= 0 for c in coeffs) and all(coeffs[2 * k + 1] > 0 for k in range(1, 21))
    t8 = np.linspace(0.01, 0.49, 49)
    ratio = [experiments.figure2_improvement(np.array([1 - t, t]), n=8) / scaling.egm_improvement([1 - t, t])
             for t in t8]
    return TwoWeights(bool(routes_ok), int(xs.size * ts.size), slope_ok, float(below), bool(series_ok),
                      float(min(ratio) - 1))


def _two_weight_tail(x: Any, t: Any) -> Any:
    """P((1 - t) Z_1^2 + t Z_2^2 > x) in mpmath: the polar form of Proposition 5.F,
    (1/pi) int_0^pi exp(-x / (1 + a cos phi)) dphi with a = 1 - 2t."""
    a = 1 - 2 * t
    return mpmath.quad(lambda ph: mpmath.exp(-x / (1 + a * mpmath.cos(ph))), [0, mpmath.pi]) / mpmath.pi


def _two_weight_quantile(t: Any, n: int) -> Any:
    """The upper 1/n-quantile of (1 - t) Z_1^2 + t Z_2^2 in mpmath (root of the polar tail)."""
    p = mpmath.mpf(1) / n
    return mpmath.findroot(lambda x: _two_weight_tail(x, t) - p, mpmath.log(n))


def _margin_mp(sigma: Sequence[str], n: int) -> Any:
    """R/R_bar - 1 for two standard deviations (decimal strings) at 1/n, by Proposition 5.C in mpmath:
    R/R_bar is the ratio of the quantiles of the squared and the plain weights, each normalised."""
    s1, s2 = (mpmath.mpf(v) for v in sigma)
    return _two_weight_quantile(s2**2 / (s1**2 + s2**2), n) / _two_weight_quantile(s2 / (s1 + s2), n) - 1


@dataclass(frozen=True)
class TwoWeightSharpness(Finding):
    """Corollary 5.G's n >= 8 is sharp: near equal weights R < R_bar for every n < e^2 (Proposition 5.D(b))."""

    digits: int  #: mpmath's working precision (decimal digits)
    margin_n7: float  #: R/R_bar - 1 at sigma = (0.55, 0.45), n = 7, in mpmath
    margin_n8: float  #: the same at n = 8
    library_n7: float  #: the library's double-precision value at n = 7
    ns: tuple[int, ...]  #: n = 2..8
    limits: tuple[float, ...]  #: (R - 1)/(R_bar - 1) at equal weights, 1 - 3 (2 - ln n) / 4, by n
    limits_library: tuple[float, ...]  #: the same from improvement_margin.equal_weights_margin
    near: tuple[float, ...]  #: R/R_bar - 1 at sigma = (0.51, 0.49), in mpmath, by n
    near_rbar: float  #: R_bar there, 1.0004

    GLUE = MappingProxyType({"sharp-margin-n7": "margin_n7", "sharp-margin-n8": "margin_n8",
                             "sharp-boundary": "boundary", "sharp-limit-n7": "limit_n7"})

    @property
    def boundary(self) -> float:
        """The boundary e^2 (below it some sigma has R < R_bar, from it on none; Corollary 5.G)."""
        return math.exp(2.0)

    @property
    def limit_n7(self) -> float:
        return self.limits[self.ns.index(7)]

    @property
    def predicted_near(self) -> tuple[float, ...]:
        """R/R_bar - 1 at sigma = (0.51, 0.49) as the limit predicts it, (limit - 1)(R_bar - 1)/R_bar."""
        return tuple((lim - 1.0) * (self.near_rbar - 1.0) / self.near_rbar for lim in self.limits)

    @property
    def ok(self) -> bool:
        below = [n < self.boundary for n in self.ns]
        return (self.margin_n7 < 0 < self.margin_n8 and abs(self.library_n7 - self.margin_n7) < 1e-8
                and all((lim < 1) == b for lim, b in zip(self.limits, below, strict=True))
                and all((v < 0) == b for v, b in zip(self.near, below, strict=True))
                and max(abs(a - b) for a, b in zip(self.limits, self.limits_library, strict=True)) < 1e-9
                and all(abs(v / p - 1) < 0.05 for v, p in zip(self.near, self.predicted_near, strict=True)))

    @property
    def evidence(self) -> str:
        return (f"at {self.digits} digits, $R/\\bar R - 1$ = {readable(self.margin_n7, 3)} at "
                f"$\\sigma = (0.55, 0.45)$, $n = 7$ (the library: {readable(self.library_n7, 3)}), and "
                f"{readable(self.margin_n8, 3)} at $n = 8$; "
                "near equal weights the limit of $(R - 1)/(\\bar R - 1)$ is "
                + ", ".join(f"{v:.4f}" for v in self.limits) + " for $n$ = 2, ..., 8, and at $\\sigma = (0.51, 0.49)$ "
                "$R/\\bar R - 1$ = " + ", ".join(readable(v, 2) for v in self.near)
                + ", within 5 % of what the limit predicts.")


def two_weight_sharpness(*, digits: int = 30) -> TwoWeightSharpness:
    """R/R_bar - 1 for two coordinates at n = 2..8, in mpmath with ``digits`` digits (the polar form of
    Proposition 5.F, an independent route from the library's tails), against the equal-weights limit of
    Proposition 5.D(b) at d = 2: 1 - 3 (2 - ln n)/4, below 1 exactly when n < e^2."""
    digits = check_count("digits", digits, minimum=15, maximum=1000)  # at least double precision
    ns = tuple(range(2, 9))
    with mpmath.workdps(digits):
        m7, m8 = (float(_margin_mp(("0.55", "0.45"), n)) for n in (7, 8))
        near = tuple(float(_margin_mp(("0.51", "0.49"), n)) for n in ns)
    lib = (experiments.figure2_improvement(np.array([0.55, 0.45]), n=7) / scaling.egm_improvement([0.55, 0.45])
           - 1.0)
    return TwoWeightSharpness(
        digits=digits, margin_n7=m7, margin_n8=m8, library_n7=float(lib), ns=ns,
        limits=tuple(1.0 - 0.75 * (2.0 - math.log(n)) for n in ns),
        limits_library=tuple(improvement_margin.equal_weights_margin(2, n=n) for n in ns), near=near,
        near_rbar=float(scaling.egm_improvement([0.51, 0.49])))


# --------------------------------------------------------------------------------------------
# chapter 5d: every dimension
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LevelThree(Finding):
    """Proposition 5.H (the derivative along a transfer, the mode below the mean) and Corollary 5.I(a)."""

    laplace_ok: bool  #: the Laplace-side identity of eq. (5.k) in sympy
    fd_err: float  #: largest relative difference of the slope from a finite difference (20 random w)
    mode_ratio: float  #: largest mode / mean of Y (must be < 1)
    gap3: float  #: smallest Schur-Ostrowski gap at x = 3 (25 Dirichlet vectors, d up to 40)
    certified: np.ndarray  #: dense-grid points (d, n, alpha) where C_t^2 reaches the level, bool
    ratio: np.ndarray  #: R / R_bar on the dense grid
    dense_alpha: np.ndarray
    ct2: np.ndarray  #: C_t^2 on the dense grid

    GLUE = MappingProxyType({"level-covered": "covered", "level-grid": "grid", "schur-covered": "covered2",
                             "schur-covered3": "covered3", "schur-grid": "grid"})

    @property
    def covered2(self) -> int:
        """Dense-grid points with C_t^2 >= 2 (Conjecture 5.B's level)."""
        return int((self.ct2 >= 2.0).sum())

    @property
    def covered3(self) -> int:
        """Dense-grid points with C_t^2 >= 3 (Proposition 5.H's level)."""
        return int((self.ct2 >= 3.0).sum())

    def certified_by_d(self) -> dict[int, str]:
        """The certified points per d, as "165 of 180"."""
        return {d: f"{int(self.certified[k].sum())} of {self.certified[k].size}" for k, d in enumerate(D_VALUES)}

    @property
    def covered(self) -> int:
        return int(self.certified.sum())

    @property
    def grid(self) -> int:
        return int(self.certified.size)

    @property
    def missed_alpha(self) -> tuple[float, float]:
        k_a = np.nonzero(~self.certified)[2]
        return float(self.dense_alpha[k_a].min()), float(self.dense_alpha[k_a].max())

    @property
    def where_ok(self) -> bool:
        """The points the certificate misses have d >= 100, n <= 10^3 and alpha in [0.35, 1.3]."""
        k_d, k_n, _ = np.nonzero(~self.certified)
        lo, hi = self.missed_alpha
        return (all(D_VALUES[k] >= 100 for k in k_d) and all(N_VALUES[k] <= 1000 for k in k_n)
                and 0.35 <= lo and hi <= 1.3)

    @property
    def ok(self) -> bool:
        return (self.laplace_ok and self.fd_err < 1e-4 and self.mode_ratio < 1 and self.gap3 >= 0
                and bool(np.all(self.ratio[self.certified] >= 1 - 1e-9)) and self.where_ok)

    @property
    def evidence(self) -> str:
        lo, hi = self.missed_alpha
        return (f"sympy: the Laplace identity holds; largest relative difference from a finite difference "
                f"{readable(self.fd_err, 2)} (20 random weight vectors); largest mode over mean {self.mode_ratio:.3f}; "
                f"smallest gap at $x = 3$: {readable(self.gap3, 2)} (25 Dirichlet vectors, $d$ up to 40); the "
                f"certificate holds at {self.covered} of {self.grid} dense-grid points, where the smallest "
                f"$R/\\bar R$ is {self.ratio[self.certified].min():.6f} (1 at the ends of the $\\alpha$ range); it "
                f"misses {self.grid - self.covered} points, with $d \\ge 100$, $n \\le 10^3$ and $\\alpha$ from "
                f"{lo:.2f} to {hi:.2f}.")


def _laplace_identity() -> bool:
    """Eq. (5.k)'s Laplace side: d/dt of L_t(u)/u at t = 0 is 2 (w_i - w_j) u L(u) / ((1 + 2 w_i u)(1 + 2 w_j u))."""
    u, t, wi, wj, c = sp.symbols("u t w_i w_j c", positive=True)
    lap = ((1 + 2 * (wi + t) * u) * (1 + 2 * (wj - t) * u) * (1 + 2 * c * u)) ** sp.Rational(-1, 2)
    lhs = sp.diff(lap / u, t).subs(t, 0)
    rhs = 2 * (wi - wj) * u * lap.subs(t, 0) / ((1 + 2 * wi * u) * (1 + 2 * wj * u))
    return bool(sp.simplify(lhs - rhs) == 0)


def level_three(dense: experiments.Figure2Table) -> LevelThree:
    """The checks of Proposition 5.H and Corollary 5.I (seeded); ``dense`` is Figure 2 on 60 exponents
    from 1e-2 to 1e2 (egmbook.experiments.figure2_grid)."""
    rng = np.random.default_rng(58)
    fd_err, mode_ratio, gap3 = 0.0, 0.0, np.inf
    for _ in range(20):
        d = int(rng.integers(2, 12))
        w = rng.dirichlet(np.full(d, rng.uniform(0.2, 3.0)))
        x = float(rng.uniform(0.5, 6.0))
        i = int(np.argmax(w))
        rest = np.delete(np.arange(d), i)
        j = int(rest[np.argmin(w[rest])])
        h = 1e-5 * w[j]
        e = np.zeros(d)
        e[i], e[j] = 1.0, -1.0
        fd = (float(gchisq.cdf(x, w=w + h * e)) - float(gchisq.cdf(x, w=w - h * e))) / (2 * h)
        slope = improvement_margin.transfer_slope(x, w)
        fd_err = max(fd_err, abs(fd - slope) / max(abs(slope), 1e-3))
        mode_ratio = max(mode_ratio, improvement_margin.augmented_mode(w) / (1 + 2 * (w[i] + w[j])))
    for _ in range(25):
        w = rng.dirichlet(np.full(int(rng.integers(3, 41)), rng.uniform(0.1, 3.0)))
        gap3 = min(gap3, improvement_margin.schur_ostrowski_gap(3.0, w))
    alphas = np.unique(dense.alpha)
    shape = (len(D_VALUES), len(N_VALUES), alphas.size)
    sig = [experiments.zipf_sigmas(d, alpha=a) for d in D_VALUES for a in alphas]
    level = np.array([improvement_margin.schur_concavity_level((s / s.max()) ** 2) for s in sig])
    ct2 = dense.Ct_squared.reshape(shape)
    certified = ct2 >= np.broadcast_to(level.reshape(len(D_VALUES), 1, -1), shape)
    rbar = np.array([scaling.egm_improvement(s) for s in sig]).reshape(len(D_VALUES), 1, -1)
    return LevelThree(_laplace_identity(), float(fd_err), float(mode_ratio), float(gap3), certified,
                      dense.improvement.reshape(shape) / rbar, alphas, ct2)


@dataclass(frozen=True)
class ChiOneLevel(Finding):
    """Where the upper 1/n-quantile of chi^2_1 (C_t^2 with one dominant coordinate) passes 3."""

    n_first: int  #: the smallest n with the quantile above 3
    q_before: float  #: the quantile at n_first - 1
    q_at: float  #: the quantile at n_first
    tail3: float  #: P(chi^2_1 > 3)

    GLUE = MappingProxyType({"chi1-n3": "n_first", "chi1-q-before": "q_before"})

    @property
    def ok(self) -> bool:
        return self.q_before < 3.0 < self.q_at and self.n_first == math.ceil(1.0 / self.tail3 + 1e-12)

    @property
    def evidence(self) -> str:
        return (f"$P(\\chi^2_1 > 3)$ = {self.tail3:.5f} = 1/{1 / self.tail3:.3f}; the upper $1/n$-quantile is "
                f"{self.q_before:.4f} at $n$ = {self.n_first - 1} and {self.q_at:.4f} at $n$ = {self.n_first}.")


def chi_one_level() -> ChiOneLevel:
    """The first n whose upper 1/n-quantile of chi^2_1 exceeds 3 (scipy's chi2)."""
    n = 2
    while stats.chi2.isf(1.0 / n, 1) <= 3.0:
        n += 1
    return ChiOneLevel(n, float(stats.chi2.isf(1.0 / (n - 1), 1)), float(stats.chi2.isf(1.0 / n, 1)),
                       float(stats.chi2.sf(3.0, 1)))


@dataclass(frozen=True)
class EqualWeightsRadius(Finding):
    """Equal weights give the smallest C_t^2 only where it is at least 2 (d = 2): at n = 2 and n = 7 not."""

    median_one: float  #: C_t^2 at n = 2 with one dominant coordinate, the median of Z^2
    median_equal: float  #: C_t^2 at n = 2 with two equal weights, the median of chi^2_2 / 2 (ln 2)
    t_grid: np.ndarray  #: the smaller weight t of (1 - t, t), 0.001 to 0.5
    radius_n7: np.ndarray  #: C_t^2 at n = 7 along t
    radius_n8: np.ndarray  #: C_t^2 at n = 8 along t

    GLUE = MappingProxyType({"ew-median-one": "median_one", "ew-median-equal": "median_equal",
                             "ew-min-n7": "min_n7", "ew-min-n7-t": "argmin_n7"})

    @property
    def min_n7(self) -> float:
        return float(self.radius_n7.min())

    @property
    def argmin_n7(self) -> float:
        return float(self.t_grid[int(np.argmin(self.radius_n7))])

    @property
    def ok(self) -> bool:
        equal7, equal8 = self.radius_n7[-1], self.radius_n8[-1]
        return (self.median_one < self.median_equal and abs(self.median_equal - math.log(2.0)) < 1e-10
                and self.min_n7 < equal7 - 1e-6 and abs(equal7 - math.log(7.0)) < 1e-10
                and int(np.argmin(self.radius_n8)) == self.t_grid.size - 1 and equal8 >= 2.0)

    @property
    def evidence(self) -> str:
        return (f"$n = 2$: $C_t^2$ = {self.median_one:.3f} with one coordinate, {self.median_equal:.3f} with two "
                f"equal ones; $n = 7$: {self.radius_n7[-1]:.4f} at equal weights, {self.min_n7:.4f} at $t$ = "
                f"{self.argmin_n7:.3f}; $n = 8$: smallest at equal weights ({self.radius_n8[-1]:.4f}) on "
                f"{self.t_grid.size} values of $t$.")


def equal_weights_radius() -> EqualWeightsRadius:
    """C_t^2 for d = 2 along the weights (1 - t, t) at n = 7 and 8, and the medians at n = 2 (egmlib.gchisq)."""
    t_grid = np.r_[np.linspace(0.001, 0.45, 60), np.linspace(0.4525, 0.5, 20)]
    radius = {n: np.array([float(gchisq.isf(1.0 / n, w=[1 - t, t])) for t in t_grid]) for n in (7, 8)}
    return EqualWeightsRadius(float(stats.chi2.isf(0.5, 1)), float(gchisq.isf(0.5, w=[0.5, 0.5])), t_grid,
                              radius[7], radius[8])


@dataclass(frozen=True)
class UniformThresholds(Finding):
    """Theorem 5.E(b)'s thresholds with x_0 = 3 (proved) and 2 (Conjecture 5.B), and the equal-weights lower bound."""

    ds: tuple[int, ...]
    p3: tuple[float, ...]  #: P(chi^2_d > 3d)
    p2: tuple[float, ...]  #: P(chi^2_d > 2d)
    p_low: tuple[float, ...]  #: P(chi^2_d > d + 2); below 1/p_low, R < R_bar near equal weights
    fails_up_to: tuple[int, ...]  #: the largest integer n < 1/p_low
    margins_ok: bool  #: equal_weights_margin (Proposition 5.D(b)) is < 1 at fails_up_to and >= 1 one above
    certified: Mapping[int, str]  #: Figure 2 points certified by Corollary 5.I(a), by d

    GLUE = MappingProxyType({"schur3-nmin-d10": "nmin3_d10", "schur-nmin-d10": "nmin2_d10"})

    @property
    def nmin3_d10(self) -> int:
        return math.ceil(1 / self.p3[self.ds.index(10)])

    @property
    def nmin2_d10(self) -> int:
        return math.ceil(1 / self.p2[self.ds.index(10)])

    @property
    def ok(self) -> bool:
        d2 = self.ds.index(2)
        return self.margins_ok and self.fails_up_to[d2] == 7 and math.ceil(1 / self.p2[d2]) == 8

    @property
    def evidence(self) -> str:
        return ("the equal-weights limit of $(R - 1)/(\\bar R - 1)$ is below 1 at $n$ = "
                + ", ".join(f"{n}" for n in self.fails_up_to) + f" for $d$ = {', '.join(map(str, self.ds))} and "
                "at least 1 one step above; for $d = 2$ the failure ends at 7 and the proof starts at 8.")

    def table(self) -> Table:
        def nmin(p: float) -> str:
            return f"{math.ceil(1 / p)}" if 1 / p < 1e6 else readable(math.ceil(1 / p), 2)

        def prob(p: float) -> str:
            return readable(p, 3)

        return table({"$d$": list(self.ds), "$R < \\bar R$ somewhere for $n \\le$": list(self.fails_up_to),
                      "$\\Pr[\\chi^2_d > 3d]$": list(self.p3),
                      "proved for every $\\sigma$ from $n =$": [nmin(p) for p in self.p3],
                      "$\\Pr[\\chi^2_d > 2d]$": list(self.p2),
                      "from $n =$, if Conjecture 5.B holds": [nmin(p) for p in self.p2],
                      "Figure 2 points certified": [self.certified.get(d, "") for d in self.ds]},
                     formats={"$\\Pr[\\chi^2_d > 3d]$": prob, "$\\Pr[\\chi^2_d > 2d]$": prob},
                     caption="Uniform thresholds for $R \\ge \\bar R$: up to the first column's $n$ some "
                             "$\\sigma$ near equal weights has $R < \\bar R$ (Proposition 5.D(b)); Theorem 5.E(b) "
                             "proves $R \\ge \\bar R$ for every $\\sigma$ from the $n$ of the fourth column "
                             "($x_0 = 3$, Proposition 5.H) and would from the sixth ($x_0 = 2$, Conjecture 5.B; "
                             "proved for $d = 2$, where the two bounds meet); the last column counts the dense-grid "
                             "points of Figure 2 where Corollary 5.I(a) proves it for their own $n$.",
                     label="ch5-tab-uniform-thresholds")


def uniform_thresholds(certified: Mapping[int, str]) -> UniformThresholds:
    """The thresholds for d in (2, 3, 5, 10, 30, 100, 300, 1000); ``certified`` the counts of
    :func:`level_three` by d (text, e.g. "180 of 180")."""
    check_mapping("certified", certified)
    ds = (2, 3, 5, 10, 30, 100, 300, 1000)
    p_low = tuple(improvement_margin.schur_threshold_p0(d, x0=(d + 2) / d) for d in ds)
    fails = tuple(math.ceil(1 / p - 1e-12) - 1 for p in p_low)
    margins_ok = all(improvement_margin.equal_weights_margin(d, n=n) < 1 <= improvement_margin.equal_weights_margin(
        d, n=n + 1) for d, n in zip(ds, fails, strict=True) if n >= 2)
    return UniformThresholds(ds, tuple(improvement_margin.schur_threshold_p0(d, x0=3.0) for d in ds),
                             tuple(improvement_margin.schur_threshold_p0(d, x0=2.0) for d in ds), p_low, fails,
                             bool(margins_ok), dict(certified))
