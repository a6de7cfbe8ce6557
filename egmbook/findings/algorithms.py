r"""Findings of chapter 3 (the report's Section 3): Theorems 1-3 and Algorithms 1-2.

Theorem 2's sigma_opt against an independent quadrature of the privacy profile; Theorem 1's
classical calibration and how far beyond eps < 1 it stays private; the ellipsoid of
Algorithm 2 and the report's radii; the variance reading of Algorithm 2's noise; Theorem 3's
optimal scaling and improvement factor; and both mechanisms' errors by simulation (eqs. (1),
(5), (6)).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import integrate, optimize, stats

from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import calibration, mechanisms, scaling

__all__ = ["ProfileAtSigmaOpt", "profile_at_sigma_opt", "Classical", "classical_calibration", "Ellipsoid",
           "ellipsoid", "VarianceReading", "variance_reading", "Theorem3", "theorem3_scaling", "Improvement",
           "improvement_range", "MonteCarlo", "mechanisms_by_simulation"]


def _frozen(columns: Mapping[str, list[Any]]) -> Mapping[str, tuple[Any, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in columns.items()})


@dataclass(frozen=True)
class ProfileAtSigmaOpt(Finding):
    """Theorem 2 and eq. (2): the privacy profile at the computed sigma_opt, closed form and quadrature."""

    rows: Mapping[str, tuple[Any, ...]]
    decreasing: bool  #: the profile strictly decreases in sigma on [1e-2, 1e3]

    worst_lib = property(lambda self: max(abs(v) for v in self.rows["profile / $\\delta$ - 1"]))
    worst_quad = property(lambda self: max(abs(v) for v in self.rows["quadrature / $\\delta$ - 1"]))

    @property
    def ok(self) -> bool:
        return bool(self.worst_lib < 1e-10 and self.worst_quad < 1e-8 and self.decreasing)

    def table(self) -> Table:
        return table(dict(self.rows), formats={
            "$\\varepsilon$": "{:g}", "$\\delta$": lambda v: readable(v, 1), "$\\sigma_{\\mathrm{opt}}$": "{:.6g}",
            "profile / $\\delta$ - 1": lambda v: "< " + readable(1e-10, 1) if abs(v) < 1e-10 else readable(v),
            "quadrature / $\\delta$ - 1": lambda v: "< " + readable(1e-8, 1) if abs(v) < 1e-8 else readable(v)},
            caption="The privacy profile at the computed $\\sigma_{\\mathrm{opt}}$.", head=3, label="ch3-tab-profile")


def profile_at_sigma_opt() -> ProfileAtSigmaOpt:
    """Theorem 2: at sigma_opt the privacy profile of eq. (2) equals delta, in closed form and by an
    independent quadrature of the privacy loss, at 15 (eps, delta); and it decreases in sigma."""

    def profile_by_quadrature(sigma: float, eps: float) -> float:
        # E[(1 - exp(eps - L))_+] for the privacy loss L ~ N(m^2/2, m^2), m = 1/sigma
        m = 1.0 / sigma
        f = lambda loss: -np.expm1(eps - loss) * stats.norm.pdf(loss, m * m / 2, m)  # noqa: E731
        val, _ = integrate.quad(f, eps, m * m / 2 + 40 * m, epsabs=0, epsrel=1e-12, limit=200)
        return val

    rows: dict[str, list[Any]] = {"$\\varepsilon$": [], "$\\delta$": [], "$\\sigma_{\\mathrm{opt}}$": [],
                                  "profile / $\\delta$ - 1": [], "quadrature / $\\delta$ - 1": []}
    for eps in [0.1, 0.5, 1.0, 3.0, 10.0]:
        for delta in [1e-3, 1e-6, 1e-10]:
            s = calibration.sigma_opt(eps=eps, delta=delta)
            for key, val in zip(rows, (eps, delta, s, calibration.privacy_profile(s, eps=eps) / delta - 1,
                                       profile_by_quadrature(s, eps) / delta - 1), strict=True):
                rows[key].append(val)
    sig = np.geomspace(1e-2, 1e3, 2001)
    decreasing = True
    for eps in [0.1, 1.0, 10.0]:
        prof = np.asarray(calibration.privacy_profile(sig, eps=eps))  # an array, as sig is
        inside = prof[(prof > 1e-300) & (prof < 1 - 1e-12)]  # away from under/overflow
        decreasing &= bool(len(inside) > 500 and np.all(np.diff(inside) < 0))
    return ProfileAtSigmaOpt(_frozen(rows), decreasing)


@dataclass(frozen=True)
class Classical(Finding):
    """Theorem 1: the classical sigma against sigma_opt for eps < 1, and where it stops being private beyond."""

    rows: Mapping[str, tuple[Any, ...]]
    private: bool  #: private and above sigma_opt at all 15 points with eps < 1
    thresholds: tuple[float, ...]  #: the largest private eps at delta = 1e-3, 1e-6, 1e-10

    GLUE = MappingProxyType({"classical-max-ratio": "max_ratio", "classical-limit-1e-3": "limit_1e3",
                             "classical-limit-1e-10": "limit_1e10"})
    DELTAS = (1e-3, 1e-6, 1e-10)

    max_ratio = property(lambda self: float(max(self.rows["variance ratio"])))
    limit_1e3 = property(lambda self: float(self.thresholds[0]))
    limit_1e10 = property(lambda self: float(self.thresholds[2]))

    @property
    def ok(self) -> bool:
        return self.private

    @property
    def range_ok(self) -> bool:
        return bool(np.all(np.isfinite(self.thresholds)))

    @property
    def evidence(self) -> str:
        ratios = self.rows["variance ratio"]
        return f"variance ratio from {min(ratios):.3f} to {max(ratios):.2f}"

    @property
    def range_evidence(self) -> str:
        return "threshold " + ", ".join(f"{t:.4g} at $\\delta = 10^{{{int(np.log10(d))}}}$"
                                        for t, d in zip(self.thresholds, self.DELTAS, strict=True))

    def table(self) -> Table:
        return table(dict(self.rows), formats={
            "$\\varepsilon$": "{:g}", "$\\delta$": lambda v: readable(v, 1), "classical $\\sigma$": "{:.5g}",
            "$\\sigma_{\\mathrm{opt}}$": "{:.5g}", "variance ratio": "{:.3f}",
            "profile(classical) / $\\delta$": lambda v: readable(v, 3)},
            caption="Classical against exact calibration, unit sensitivity.", head=4, label="ch3-tab-classical")


def classical_calibration() -> Classical:
    """Theorem 1: sigma = sqrt(2 ln(1.25/delta))/eps is private and above Theorem 2's sigma_opt for
    eps < 1; beyond, it stays private up to a threshold (brentq on the log of profile / delta)."""
    rows: dict[str, list[Any]] = {"$\\varepsilon$": [], "$\\delta$": [], "classical $\\sigma$": [],
                                  "$\\sigma_{\\mathrm{opt}}$": [], "variance ratio": [],
                                  "profile(classical) / $\\delta$": []}
    private = True
    for eps in [0.01, 0.1, 0.5, 0.9, 0.99]:
        for delta in [1e-3, 1e-6, 1e-10]:
            s_cl = calibration.sigma_classical(eps=eps, delta=delta)
            s_op = calibration.sigma_opt(eps=eps, delta=delta)
            p_cl = calibration.privacy_profile(s_cl, eps=eps)
            private &= bool(s_op < s_cl and p_cl <= delta)
            for key, val in zip(rows, (eps, delta, s_cl, s_op, (s_cl / s_op) ** 2, p_cl / delta), strict=True):
                rows[key].append(val)
    classical_formula = lambda eps, delta: np.sqrt(2 * np.log(1.25 / delta)) / eps  # noqa: E731  (outside eps < 1)
    thresholds = []
    for delta in Classical.DELTAS:
        excess = lambda e, delta=delta: np.log(calibration.privacy_profile(classical_formula(e, delta), eps=e)  # noqa: E731
                                               / delta)
        bracket = bool(excess(1.0) < 0 and excess(50.0) > 0)
        thresholds.append(optimize.brentq(excess, 1.0, 50.0, xtol=1e-10) if bracket else np.nan)
    return Classical(_frozen(rows), bool(private), tuple(thresholds))


@dataclass(frozen=True)
class Ellipsoid(Finding):
    """Algorithm 2: the exact delta on the box corners, on the semi-axes Delta_j/b_j and at the report's radii."""

    b: tuple[float, ...]
    corners: tuple[float, ...]  #: delta at the 8 corners
    on_axes: tuple[float, ...]
    on_report: tuple[float, ...]
    ok: bool
    delta: float

    @property
    def evidence(self) -> str:
        return (f"8 corners: $\\delta/10^{{-6}}$ from {min(self.corners) / self.delta:.6f} to "
                f"{max(self.corners) / self.delta:.6f}")

    def table(self) -> Table:
        on_axes = np.array(self.on_axes) / self.delta
        return table({"direction $j$": [1, 2, 3], "$b_j$": list(self.b),
                      "$\\delta$ on the semi-axis $\\Delta_j/b_j$, $\\times 10^{-6}$": on_axes,
                      "$\\delta$ at the report's radius $b_j/\\Delta_j$, $\\times 10^{-6}$":
                          np.array(self.on_report) / self.delta},
                     formats={"$b_j$": "{:.4f}",
                              "$\\delta$ on the semi-axis $\\Delta_j/b_j$, $\\times 10^{-6}$": "{:.6f}",
                              "$\\delta$ at the report's radius $b_j/\\Delta_j$, $\\times 10^{-6}$":
                                  lambda v: readable(v, 3)},
                     caption="The exact $\\delta$ of Algorithm 2 along each semi-axis $\\Delta_j/b_j$ and along the "
                             "report's radius $b_j/\\Delta_j$, in units of the target $10^{-6}$.",
                     label="ch3-tab-ellipsoid")


def ellipsoid() -> Ellipsoid:
    """Algorithm 2 at Delta = (3, 1, 0.2), (1, 1e-6): the exact delta of a difference v is the Gaussian
    profile at its Mahalanobis length; on the corners and the semi-axes Delta_j/b_j it equals the target."""
    eps, delta = 1.0, 1e-6
    Delta = np.array([3.0, 1.0, 0.2])
    X = np.zeros((5, 3))  # the data do not matter here
    res = mechanisms.elliptical_gaussian_mechanism(X, Delta=Delta, eps=eps, delta=delta,
                                                   rng=np.random.default_rng(31))
    s, b, so = res.noise_std, res.b, res.sigma_opt

    def delta_for_difference(v: np.ndarray) -> float:
        m = np.sqrt(np.sum((v / s) ** 2))  # Mahalanobis distance
        return float(calibration.privacy_profile(1.0, eps=eps, sensitivity=m))

    corners = [delta_for_difference(np.array(c) * Delta) for c in itertools.product([-1, 1], repeat=3)]
    on_axes = [delta_for_difference(np.eye(3)[j] * Delta[j] / b[j]) for j in range(3)]
    on_report = [delta_for_difference(np.eye(3)[j] * b[j] / Delta[j]) for j in range(3)]
    ok = bool(np.allclose(b, np.sqrt(Delta / Delta.sum())) and np.allclose(s, so * Delta / b)
              and np.allclose(corners, delta, rtol=1e-9) and np.allclose(on_axes, delta, rtol=1e-9)
              and not np.allclose(on_report, delta, rtol=0.01))
    return Ellipsoid(tuple(float(x) for x in b), tuple(corners), tuple(on_axes), tuple(on_report), ok, delta)


@dataclass(frozen=True)
class VarianceReading(Finding):
    """Algorithm 2's noise read as a variance: private exactly when sigma_opt <= 1."""

    rows: Mapping[str, tuple[Any, ...]]  #: four of the 21 pairs
    agree: bool  #: the three conditions agree at all 21 pairs

    GLUE = MappingProxyType({"variance-delta-low": "delta_low", "variance-sigma-high": "sigma_high"})

    delta_low = property(lambda self: float(self.rows["$\\delta$ with variance $\\sigma_{\\mathrm{opt}}$"][0]))
    sigma_high = property(lambda self: float(self.rows["$\\sigma_{\\mathrm{opt}}$"][-1]))

    @property
    def ok(self) -> bool:
        return self.agree

    def table(self) -> Table:
        return table(dict(self.rows), formats={
            "$\\varepsilon$": "{:g}", "$\\delta$": lambda v: readable(v, 1), "$\\sigma_{\\mathrm{opt}}$": "{:.6g}",
            "$\\delta$ with variance $\\sigma_{\\mathrm{opt}}$": lambda v: readable(v, 3)},
            caption="The noise read as a variance: four of the 21 pairs.", label="ch3-tab-variance-reading")


def variance_reading() -> VarianceReading:
    """Algorithm 2 with the noise N(0, sigma_opt) read as a variance (Theorem 2's sigma_opt as the
    variance): private exactly when sigma_opt <= 1, at 21 pairs (eps, delta)."""
    rows: dict[str, list[Any]] = {"$\\varepsilon$": [], "$\\delta$": [], "$\\sigma_{\\mathrm{opt}}$": [],
                                  "$\\delta$ with variance $\\sigma_{\\mathrm{opt}}$": [], "private": []}
    agree = True
    for eps in [0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0]:
        for delta in [1e-3, 1e-6, 1e-10]:
            s_opt = calibration.sigma_opt(eps=eps, delta=delta)
            d_var = calibration.privacy_profile(np.sqrt(s_opt), eps=eps)
            private = bool(d_var <= delta * (1 + 1e-9))
            agree &= private == bool(s_opt <= 1) == bool(delta >= calibration.privacy_profile(1.0, eps=eps))
            if (eps, delta) in {(1.0, 1e-6), (3.0, 1e-3), (5.0, 1e-6), (10.0, 1e-3)}:
                for key, val in zip(rows, (eps, delta, s_opt, d_var, "yes" if private else "no"), strict=True):
                    rows[key].append(val)
    return VarianceReading(_frozen(rows), bool(agree))


@dataclass(frozen=True)
class Theorem3(Finding):
    """Theorem 3 and eq. (6): the optimal scaling against random scalings and a constrained minimiser."""

    ok: bool
    best_random: float  #: the best of 200 000 random scalings, over the optimum
    gaps: tuple[float, ...]  #: the constrained minimiser's distance to b from three starts

    @property
    def evidence(self) -> str:
        return (f"best of 200 000 random scalings: {self.best_random:.4f} times the optimum; "
                "constrained minimiser within $10^{-5}$ of $b$ from 3 starts")


def theorem3_scaling() -> Theorem3:
    """Theorem 3 and eq. (6) at six random Delta: b_j = sqrt(Delta_j / sum Delta) has unit norm and
    gives sigma_opt^2 ||Delta||_1^2, no random scaling does better, and SLSQP finds b from 3 starts."""
    rng = np.random.default_rng(33)
    d = 6
    Delta = rng.lognormal(0.0, 1.0, d)
    so = calibration.sigma_opt(eps=0.5, delta=1e-6)
    b_opt = scaling.egm_scaling(Delta)
    e_opt = scaling.egm_error(Delta, sigma_opt=so, b=b_opt)
    ok = bool(np.isclose(np.linalg.norm(b_opt), 1.0) and np.allclose(b_opt, np.sqrt(Delta / Delta.sum()))
              and np.isclose(e_opt, so**2 * Delta.sum()**2, rtol=1e-12)
              and np.isclose(scaling.egm_error(Delta, sigma_opt=so), e_opt, rtol=1e-12))
    B = np.abs(rng.standard_normal((200_000, d)))
    B /= np.linalg.norm(B, axis=1, keepdims=True)
    errs = so**2 * np.sum((Delta / B) ** 2, axis=1)  # Algorithm 2's error for each b
    ok &= bool(errs.min() >= e_opt)
    gaps = []
    for _start in range(3):
        b0 = np.abs(rng.standard_normal(d))
        b0 /= np.linalg.norm(b0)
        sol = optimize.minimize(lambda b: np.sum((Delta / b) ** 2), b0, method="SLSQP",
                                bounds=[(1e-6, 1.0)] * d,
                                constraints=[{"type": "eq", "fun": lambda b: b @ b - 1.0}],
                                options={"ftol": 1e-14, "maxiter": 500})
        ok &= bool(sol.success)
        gaps.append(float(np.abs(sol.x - b_opt).max()))
    return Theorem3(bool(ok and max(gaps) < 1e-5), float(errs.min() / e_opt), tuple(gaps))


@dataclass(frozen=True)
class Improvement(Finding):
    """Theorem 3: Algorithm 2's improvement over Algorithm 1 lies in [1, d)."""

    rows: Mapping[str, tuple[Any, ...]]
    dominant: tuple[float, ...]  #: d = 10, Delta = (1, t, ..., t) for t = 1e-1, 1e-2, 1e-4, 1e-8
    ok: bool

    @property
    def evidence(self) -> str:
        return ("$d = 10$, $\\Delta = (1, t, \\dots, t)$: " + ", ".join(f"{r:.10g}" for r in self.dominant)
                + " for $t = 10^{-1}, 10^{-2}, 10^{-4}, 10^{-8}$")

    def table(self) -> Table:
        return table(dict(self.rows), formats={"smallest ratio": "{:.4f}", "largest ratio": "{:.4f}"}, head=4,
                     caption="Theorem 3's improvement of Algorithm 2 over Algorithm 1 on 2000 random sensitivity "
                             "vectors per family and dimension.", label="ch3-tab-improvement")


def improvement_range() -> Improvement:
    """Theorem 3's improvement factor (egmlib.scaling.egm_improvement) on 2000 random sensitivity
    vectors per family and d, against the two errors' ratio computed directly."""
    rng = np.random.default_rng(34)
    rows: dict[str, list[Any]] = {"$d$": [], "family": [], "smallest ratio": [], "largest ratio": []}
    ok = True
    for d in [2, 10, 100, 1000]:
        families = {"uniform": rng.uniform(0.0, 1.0, (2000, d)) + 1e-12,
                    "lognormal": rng.lognormal(0.0, 2.0, (2000, d)),
                    "Zipf": np.arange(1, d + 1) ** -rng.uniform(0.0, 5.0, (2000, 1))}
        for name, Ds in families.items():
            r = np.array([scaling.egm_improvement(D) for D in Ds])
            direct = np.array([scaling.gaussian_mechanism_error(D, sigma_opt=1.0)
                               / scaling.egm_error(D, sigma_opt=1.0) for D in Ds[:50]])
            ok &= bool(np.allclose(r[:50], direct, rtol=1e-12) and np.all(r >= 1 - 1e-12) and np.all(r < d))
            for key, val in zip(rows, (d, name, r.min(), r.max()), strict=True):
                rows[key].append(val)
    d = 10
    ok &= scaling.egm_improvement(np.full(d, 0.7)) == 1.0
    dominant = [scaling.egm_improvement(np.r_[1.0, np.full(d - 1, t)]) for t in [1e-1, 1e-2, 1e-4, 1e-8]]
    ok &= bool(np.all(np.diff(dominant) > 0) and max(dominant) < d)
    ok &= scaling.egm_improvement(np.r_[1.0, np.zeros(d - 1)]) == d
    return Improvement(_frozen(rows), tuple(dominant), bool(ok))


@dataclass(frozen=True)
class MonteCarlo(Finding):
    """Algorithms 1-2 and eqs. (1), (5)-(6): measured squared errors against the formulas."""

    rows: Mapping[str, tuple[Any, ...]]
    reps: int
    measured_improvement: float
    predicted_improvement: float
    ok: bool

    @property
    def evidence(self) -> str:
        return (f"{self.reps} releases each; measured improvement {self.measured_improvement:.2f}, "
                f"predicted {self.predicted_improvement:.2f}")

    def table(self) -> Table:
        return table(dict(self.rows), formats={"predicted": "{:.1f}", "measured": "{:.1f}", "99% half-width": "{:.1f}"},
                     caption="Algorithms 1 and 2 simulated: measured squared errors against eqs. (5) and (6).",
                     label="ch3-tab-simulation")


def mechanisms_by_simulation() -> MonteCarlo:
    """Algorithms 1 and 2 on 50 rows in d = 8, 20 000 releases each: their mean squared errors against
    eqs. (5) and (6), and the noise of Algorithm 2 against Algorithm 1's coordinate by coordinate."""
    rng = np.random.default_rng(35)
    n, d, eps, delta, reps = 50, 8, 1.0, 1e-6, 20_000
    Delta = np.array([4.0, 2.0, 1.0, 1.0, 0.5, 0.25, 0.1, 0.05])
    X = rng.uniform(0.0, 1.0, (n, d)) * Delta
    true_sum = X.sum(axis=0)
    so = calibration.sigma_opt(eps=eps, delta=delta)
    z99 = stats.norm.isf(0.005)
    sq1, sq2 = np.empty(reps), np.empty(reps)
    for r in range(reps):
        g = mechanisms.gaussian_mechanism(X, eps=eps, delta=delta, sensitivity=float(np.linalg.norm(Delta)), rng=rng)
        e = mechanisms.elliptical_gaussian_mechanism(X, Delta=Delta, eps=eps, delta=delta, rng=rng)
        sq1[r] = np.sum((g.sum - true_sum) ** 2)
        sq2[r] = np.sum((e.sum - true_sum) ** 2)
    rows: dict[str, list[Any]] = {"mechanism": ["Algorithm 1", "Algorithm 2"], "formula": ["eq. (5)", "eq. (6)"],
                                  "predicted": [], "measured": [], "99% half-width": []}
    ok = True
    for sq, formula in [(sq1, scaling.gaussian_mechanism_error(Delta, sigma_opt=so)),
                        (sq2, scaling.egm_error(Delta, sigma_opt=so))]:
        m, half = sq.mean(), z99 * sq.std(ddof=1) / np.sqrt(reps)
        ok &= bool(abs(m - formula) <= half)
        rows["predicted"].append(formula)
        rows["measured"].append(m)
        rows["99% half-width"].append(half)
    ok &= bool(e.noise_std[0] >= g.noise_std[0] and np.all(e.noise_std[1:] < g.noise_std[1:]))
    return MonteCarlo(_frozen(rows), reps, float(sq1.mean() / sq2.mean()), float(scaling.egm_improvement(Delta)),
                      bool(ok))
