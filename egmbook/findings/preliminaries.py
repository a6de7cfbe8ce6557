r"""Findings of chapter 2 (the report's Section 2): sensitivity, post-processing, composition, Gaussian facts, rho.

Each function is one of the chapter's seeded experiments and returns a frozen record with
its verdict (``ok``), the evidence its check shows and, where the chapter shows one, its
table: eqs. (3)-(4) on boxes and balls, Lemma 2.1 (post-processing), Lemma 2.2 (composition,
with and without independence), Lemma 2.3 (affine maps of a normal variable), Lemma 2.4 and
Corollary 2.1 (the expected quadratic form), and the lecture notes' Proposition 2.A (zCDP).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import sympy as sp
from scipy import stats

from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import calibration, composition

__all__ = ["BoxSensitivity", "box_sensitivity", "PostProcessing", "post_processing", "GaussianComposition",
           "gaussian_composition", "CompositionBeyond", "composition_beyond_gaussian", "SharedNoise",
           "shared_noise", "AffineLaws", "affine_laws", "QuadraticForm", "quadratic_form", "Corollary21",
           "corollary_2_1", "RhoIdentity", "rho_identity", "RhoCalibration", "rho_calibration",
           "RhoApproximation", "rho_approximation", "UnionBound", "union_bound_accuracy"]

_Z99 = stats.norm.isf(0.005)


def _frozen(columns: Mapping[str, list[Any]]) -> Mapping[str, tuple[Any, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in columns.items()})


@dataclass(frozen=True)
class BoxSensitivity(Finding):
    """Eqs. (3)-(4): the sensitivity of the sum on boxes and on inscribed balls."""

    box_ok: bool  #: brute force over corner replacements equals ||Delta||; interior ones never exceed it
    ball_ok: bool  #: on balls at most 2R, below 2R sqrt(d) for d >= 2
    worst_deviation: float  #: largest relative difference of the brute force from ||Delta||

    @property
    def ok(self) -> bool:
        return bool(self.box_ok and self.ball_ok)

    @property
    def evidence(self) -> str:
        return (f"40 random boxes, $d$ from 1 to 8: brute force over all replacements by corners and "
                f"$\\|\\Delta\\|$ differ by at most {readable(self.worst_deviation)} relatively; "
                "random interior replacements never larger; inscribed balls: at most $2R$, below $2R\\sqrt d$ for "
                "every $d \\ge 2$.")


def box_sensitivity() -> BoxSensitivity:
    """Eqs. (3)-(4) of the report: on 40 random boxes the sum's sensitivity is ||Delta|| (brute force
    over replacements of a row by corners), and smaller on the balls of the same widths."""
    rng = np.random.default_rng(20230120)
    box_ok, ball_ok, ratios = True, True, []
    for _ in range(40):
        d = int(rng.integers(1, 9))
        lo, width = rng.normal(0.0, 3.0, d), rng.lognormal(0.0, 1.0, d)  # the box prod_j [lo_j, lo_j + Delta_j]
        X = lo + width * rng.random((5, d))  # a dataset of 5 rows in the box
        corners = lo + width * np.array(list(itertools.product([0.0, 1.0], repeat=d)))
        # replace row 0 by corner u, in X and in X' by corner v: ||f(X) - f(X')|| = ||u - v||, through the sums
        sums = X[1:].sum(axis=0) + corners
        brute = float(np.linalg.norm(sums[:, None, :] - sums[None, :, :], axis=2).max())
        inner = lo + width * rng.random((2000, d))
        inner_max = float(np.linalg.norm(inner[:1000] - inner[1000:], axis=1).max())
        box_ok &= bool(np.isclose(brute, np.linalg.norm(width), rtol=1e-12) and inner_max <= brute)
        R = float(width.min()) / 2  # the inscribed ball of a cube of side 2R
        g = rng.standard_normal((2000, d))
        sph = R * g / np.linalg.norm(g, axis=1, keepdims=True)
        ball = float(np.linalg.norm(sph[:1000] - sph[1000:], axis=1).max())
        ball_ok &= ball <= 2 * R * (1 + 1e-12) and (d == 1 or ball < 0.999 * 2 * R * math.sqrt(d))
        ratios.append(brute / np.linalg.norm(width))
    return BoxSensitivity(bool(box_ok), bool(ball_ok), float(max(abs(r - 1) for r in ratios)))


@dataclass(frozen=True)
class PostProcessing(Finding):
    """Lemma 2.1: delta(1) after three post-processings, by Monte Carlo and in closed form."""

    rows: Mapping[str, tuple[Any, ...]]
    delta0: float  #: delta(1) before post-processing
    same_ratio: float  #: the profile at three (sigma, Delta) with one ratio
    ok: bool

    @property
    def evidence(self) -> str:
        return ("Monte Carlo within its 99% interval of the closed form in all three cases; "
                f"profile {self.same_ratio:.6g} at $(\\sigma, \\Delta)$ = (0.5, 0.3), (2, 1.2), (7, 4.2)")

    def table(self) -> Table:
        return table(dict(self.rows), formats={"Monte Carlo $\\delta(1)$": "{:.5f}", "99% half-width": "{:.5f}",
                                               "closed form": "{:.5f}"},
                     caption=f"Lemma 2.1: $\\delta(1)$ after post-processing, by Monte Carlo and in closed form; "
                             f"before post-processing, $\\delta_0 = \\delta(1)$ = {self.delta0:.5f}.",
                     label="ch2-tab-post-processing")


def post_processing() -> PostProcessing:
    """Lemma 2.1: a Gaussian mechanism post-processed by an invertible linear map, a projection and
    added noise; delta(1) by Monte Carlo (400 000 draws) against the closed form (Balle and Wang 2018)."""
    rng = np.random.default_rng(21)
    eps, sigma, N = 1.0, 0.8, 400_000
    a, a2 = np.array([0.3, -0.2]), np.array([0.9, 0.6])  # f(X), f(X'), ||a - a2|| = 1
    Delta = float(np.linalg.norm(a - a2))
    A = np.array([[2.0, 1.5], [-0.4, 0.7]])  # invertible, not orthogonal
    u = np.array([1.0, 0.0])
    tau = 0.5

    def hockey_stick_mc(logp: Any, logq: Any, y: np.ndarray) -> tuple[float, float]:
        # Monte Carlo estimate of E_P[(1 - exp(eps - L))_+] and its standard error
        h = np.maximum(0.0, 1.0 - np.exp(eps - (logp(y) - logq(y))))
        return h.mean(), h.std(ddof=1) / np.sqrt(len(h))

    z = rng.standard_normal((N, 2))
    cov = sigma**2 * A @ A.T
    s2 = np.sqrt(sigma**2 + tau**2)
    cases = [
        ("invertible linear map", stats.multivariate_normal(A @ a, cov), stats.multivariate_normal(A @ a2, cov),
         (a + sigma * z) @ A.T, float(calibration.privacy_profile(sigma, eps=eps, sensitivity=Delta)), "unchanged"),
        ("projection", stats.norm(u @ a, sigma), stats.norm(u @ a2, sigma), (a + sigma * z) @ u,
         float(calibration.privacy_profile(sigma, eps=eps, sensitivity=float(abs(u @ (a - a2))))), "smaller"),
        ("added noise", stats.multivariate_normal(a, s2**2 * np.eye(2)),
         stats.multivariate_normal(a2, s2**2 * np.eye(2)),
         a + sigma * z + tau * rng.standard_normal((N, 2)),
         float(calibration.privacy_profile(s2, eps=eps, sensitivity=Delta)), "smaller")]
    delta0 = calibration.privacy_profile(sigma, eps=eps, sensitivity=Delta)
    rows: dict[str, list[Any]] = {"post-processing": [], "Monte Carlo $\\delta(1)$": [], "99% half-width": [],
                                  "closed form": [], "against $\\delta_0$": []}
    ok = True
    for name, P, Q, y, closed, expect in cases:
        m, se = hockey_stick_mc(P.logpdf, Q.logpdf, y)
        ok &= bool(abs(m - closed) <= 2.576 * se)
        ok &= bool(np.isclose(closed, delta0, rtol=1e-12) if expect == "unchanged" else closed < delta0)
        for key, val in zip(rows, (name, m, 2.576 * se, closed, expect), strict=True):
            rows[key].append(val)
    vals = [float(calibration.privacy_profile(s, eps=eps, sensitivity=D))
            for s, D in [(0.5, 0.3), (2.0, 1.2), (7.0, 4.2)]]
    ok &= bool(np.allclose(vals, vals[0], rtol=1e-12, atol=0))
    return PostProcessing(_frozen(rows), float(delta0), float(vals[0]), bool(ok))


@dataclass(frozen=True)
class GaussianComposition(Finding):
    """Lemma 2.2 for k independent Gaussian mechanisms, each (0.5, 1e-6)."""

    ks: tuple[int, ...]
    exact_delta: tuple[float, ...]  #: the joint delta at k eps
    exact_eps: tuple[float, ...]  #: the joint eps at k delta
    ok: bool

    @property
    def evidence(self) -> str:
        return "each mechanism $(0.5, 10^{-6})$; " + "; ".join(
            f"$k = {k}$: exact $\\delta$ at $k\\varepsilon$ {readable(dd)}, exact $\\varepsilon$ at $k\\delta$ "
            f"{readable(ee, 3)}" for k, dd, ee in zip(self.ks, self.exact_delta, self.exact_eps, strict=True))


def gaussian_composition() -> GaussianComposition:
    """Lemma 2.2 on k = 2, 10, 50 Gaussian mechanisms: their composition is a Gaussian mechanism of
    sensitivity sqrt(k), whose exact delta at k eps and eps at k delta (Theorem 2) are compared
    with the lemma's (k eps, k delta)."""
    eps, delta = 0.5, 1e-6
    s = calibration.sigma_opt(eps=eps, delta=delta)  # per mechanism, sensitivity 1
    ks, deltas, epss = (2, 10, 50), [], []
    ok = True
    for k in ks:
        exact_delta = calibration.privacy_profile(s, eps=k * eps, sensitivity=np.sqrt(k))
        exact_eps = calibration.eps_from_sigma(s, delta=k * delta, sensitivity=float(np.sqrt(k)))
        ok &= bool(exact_delta <= k * delta and exact_eps <= k * eps)
        deltas.append(float(exact_delta))
        epss.append(exact_eps)
    return GaussianComposition(ks, tuple(deltas), tuple(epss), bool(ok))


@dataclass(frozen=True)
class CompositionBeyond(Finding):
    """Lemma 2.2 beyond Gaussian mechanisms: randomized responses and a Laplace with a Gaussian mechanism."""

    rr_tight: bool  #: k randomized responses give delta = 0 at k eps0, positive just below
    strict: tuple[bool, ...]  #: Laplace + Gaussian strictly below the Gaussian's delta, 36 combinations
    exact: float  #: the joint delta at (eps_L, sigma, eps) = (0.5, 2, 1)
    mc: float  #: its Monte Carlo estimate
    mc_se: float
    ok: bool

    @property
    def evidence(self) -> str:
        return (f"Laplace + Gaussian at (0.5, 2, 1): exact {self.exact:.5f}, Monte Carlo {self.mc:.5f} "
                f"$\\pm$ {self.mc_se:.5f}; {sum(self.strict)} of {len(self.strict)} combinations strictly below "
                "$\\delta_G$")


def composition_beyond_gaussian() -> CompositionBeyond:
    """Lemma 2.2 with independent randomness beyond Gaussian mechanisms: exact profiles of randomized
    responses and of a Laplace with a Gaussian mechanism (egmlib.composition), one by Monte Carlo."""
    rr_ok = all(composition.randomized_response_composition(0.3, k=k, eps=0.3 * k) == 0.0
                and composition.randomized_response_composition(0.3, k=k, eps=0.3 * k - 1e-6) > 0
                for k in (2, 10, 50))
    strict = []
    for eL in (0.1, 0.5, 2.0):
        for sg in (0.7, 1.0, 4.0):
            for eG in (0.1, 0.5, 1.0, 3.0):
                joint = composition.laplace_gaussian_delta(eL + eG, laplace_eps=eL, sigma=sg)
                strict.append(bool(joint < calibration.privacy_profile(sg, eps=eG)))
    # Monte Carlo of the joint privacy loss at (eps_L, sigma, eps) = (0.5, 2, 1): neighbours f = 0, f' = 1
    rng = np.random.default_rng(22)
    eL, sg, e, N = 0.5, 2.0, 1.0, 400_000
    y = rng.laplace(0.0, 1.0 / eL, N)
    L = eL * (np.abs(y - 1.0) - np.abs(y)) + rng.normal(1 / (2 * sg**2), 1 / sg, N)  # Laplace + Gaussian loss
    h = np.maximum(0.0, -np.expm1(e - L))
    exact = composition.laplace_gaussian_delta(e, laplace_eps=eL, sigma=sg)
    se = h.std(ddof=1) / np.sqrt(N)
    mc_ok = abs(h.mean() - exact) <= 4 * se
    return CompositionBeyond(bool(rr_ok), tuple(strict), float(exact), float(h.mean()), float(se),
                             bool(rr_ok and all(strict) and mc_ok))


@dataclass(frozen=True)
class SharedNoise(Finding):
    """Lemma 2.2 without independence: two mechanisms that share one noise draw."""

    draws: int
    shared_wrong: int  #: wrong decisions of the averaging test with shared noise
    independent_z: tuple[float, ...]  #: its error rate with independent noise, in standard errors

    @property
    def ok(self) -> bool:
        return self.shared_wrong == 0 and max(map(abs, self.independent_z)) < 4.5

    @property
    def evidence(self) -> str:
        return (f"30 random neighbour pairs ($f(X') - f(X)$ from $10^{{-6}}$ to 1 noise standard deviation), "
                f"{2 * self.draws:,} releases each: shared noise, {self.shared_wrong} wrong decisions; independent "
                f"noise, error rate within {max(map(abs, self.independent_z)):.1f} standard errors of "
                "$\\Phi(-\\Delta/(\\sqrt2\\,\\sigma))$.")


def shared_noise() -> SharedNoise:
    """Lemma 2.2 fails without independence: M1 = f + Z and M2 = f - Z average to f exactly, so a test
    tells neighbours apart without error; with independent draws it errs as the Gaussian law says."""
    rng = np.random.default_rng(23)
    shared_wrong, indep_z, draws = 0, [], 20_000
    for _ in range(30):
        sg = 10 ** rng.uniform(-2, 3)
        f0 = rng.normal(0.0, 100.0)
        gap = sg * 10 ** rng.uniform(-6, 0)
        for f_true in (f0, f0 + gap):
            Z = rng.normal(0.0, sg, draws)
            avg = ((f_true + Z) + (f_true - Z)) / 2  # shared noise, in floating point
            shared_wrong += int(np.sum((np.abs(avg - f0) < np.abs(avg - f0 - gap)) != (f_true == f0)))
            Z1, Z2 = rng.normal(0.0, sg, draws), rng.normal(0.0, sg, draws)  # independent noise: Lemma 2.2 applies
            avg = ((f_true + Z1) + (f_true - Z2)) / 2
            wrong = np.mean((np.abs(avg - f0) < np.abs(avg - f0 - gap)) != (f_true == f0))
            p_wrong = stats.norm.cdf(-gap / (math.sqrt(2) * sg))  # avg ~ N(f, sigma^2 / 2)
            indep_z.append(float((wrong - p_wrong) / math.sqrt(p_wrong * (1 - p_wrong) / draws)))
    return SharedNoise(draws, shared_wrong, tuple(indep_z))


@dataclass(frozen=True)
class AffineLaws(Finding):
    """Lemma 2.3: simulated rX and X - r against their stated normal laws."""

    rows: Mapping[str, tuple[Any, ...]]
    ok: bool

    @property
    def evidence(self) -> str:
        r = self.rows
        return ("means " + ", ".join(f"{m:.3f} (claimed {c:.3f})" for m, c in zip(r["mean"], r["claimed mean"],
                                                                                 strict=True))
                + "; variances " + ", ".join(f"{v:.2f} ({c:.2f})" for v, c in zip(r["variance"], r["claimed variance"],
                                                                                 strict=True))
                + f"; all within 99% intervals; KS p-value {r['KS p-value'][0]:.2f} (200 000 draws)")


def affine_laws() -> AffineLaws:
    """Lemma 2.3: means, variances and a Kolmogorov-Smirnov test of rX and X - r (200 000 draws)."""
    rng = np.random.default_rng(23)
    mu, sigma, N = 1.5, 2.0, 200_000
    x = rng.normal(mu, sigma, N)
    rows: dict[str, list[Any]] = {"variable": [], "mean": [], "claimed mean": [], "variance": [],
                                  "claimed variance": [], "KS p-value": []}
    ok = True
    for name, y, m, v in [("$rX$, $r = -3$", -3 * x, -3 * mu, (3 * sigma)**2),
                          ("$rX$, $r = 0.7$", 0.7 * x, 0.7 * mu, (0.7 * sigma)**2),
                          ("$X - r$, $r = 4$", x - 4, mu - 4, sigma**2)]:
        ks = stats.kstest(y, stats.norm(m, np.sqrt(v)).cdf)
        ok &= bool(abs(y.mean() - m) <= _Z99 * np.sqrt(v / N)
                   and abs(y.var(ddof=1) - v) <= _Z99 * np.sqrt(2 * v**2 / (N - 1)) and ks.pvalue > 0.01)
        for key, val in zip(rows, (name, y.mean(), m, y.var(ddof=1), v, ks.pvalue), strict=True):
            rows[key].append(val)
    return AffineLaws(_frozen(rows), bool(ok))


@dataclass(frozen=True)
class QuadraticForm(Finding):
    """Lemma 2.4 in sympy: E[X^T A X] = tr(A Sigma) + mu^T A mu for d = 2 and 3."""

    ok: bool


def quadratic_form() -> QuadraticForm:
    """Lemma 2.4: with X = mu + L Z (L lower-triangular, Z uncorrelated, centred, unit variance) the
    expectation of X^T A X term by term equals tr(A L L^T) + mu^T A mu, symbolically, d = 2, 3."""

    def expectation_second_order(poly: Any, zs: list[Any]) -> Any:
        # E[.] of a polynomial of degree <= 2 in uncorrelated, centred, unit-variance zs
        total = 0
        for monom, coeff in sp.Poly(sp.expand(poly), *zs).terms():
            if sum(monom) == 0 or (sum(monom) == 2 and max(monom) == 2):
                total += coeff  # constant term, or E[Z_k^2] = 1
        return total

    ok = True
    for d in (2, 3):
        A = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"a{min(i, j) + 1}{max(i, j) + 1}"))
        L = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"l{i + 1}{j + 1}") if j <= i else 0)
        mu = sp.Matrix(sp.symbols(f"mu1:{d + 1}"))
        Z = sp.Matrix(sp.symbols(f"z1:{d + 1}"))
        X = mu + L * Z
        lhs = expectation_second_order((X.T * A * X)[0, 0], list(Z))
        rhs = (A * L * L.T).trace() + (mu.T * A * mu)[0, 0]
        ok &= sp.simplify(sp.expand(lhs - rhs)) == 0
    return QuadraticForm(bool(ok))


@dataclass(frozen=True)
class Corollary21(Finding):
    """Corollary 2.1: the simulated mean of ||X||^2 against tr Sigma + ||mu||^2 and the report's expression."""

    mean: float
    half: float  #: the 99 % half-width of the simulated mean
    corrected: float
    report: tuple[float, ...]  #: the report's expression for j = 1..d
    draws: int

    @property
    def ok(self) -> bool:
        return bool(abs(self.corrected - self.mean) <= self.half
                    and all(abs(r - self.mean) > self.half for r in self.report))

    def table(self) -> Table:
        values = [self.corrected, *self.report]
        return table({"expression": ["$\\mathrm{tr}\\,\\Sigma + \\|\\mu\\|^2$"]
                      + [f"report, $j = {j}$" for j in range(1, len(self.report) + 1)],
                      "value": values,
                      "in the 99% interval": ["yes" if abs(v - self.mean) <= self.half else "no" for v in values]},
                     formats={"value": "{:.3f}"},
                     caption=f"Corollary 2.1: simulated $\\mathbb E\\|X\\|^2$ = {self.mean:.3f} $\\pm$ {self.half:.3f} "
                             f"(99%, {self.draws} draws) against the corrected and the report's expression.",
                     label="ch2-tab-corollary")


def corollary_2_1() -> Corollary21:
    """Corollary 2.1 with a non-diagonal covariance in d = 4: 400 000 draws of ||X||^2."""
    rng = np.random.default_rng(24)
    d, N = 4, 400_000
    mu = np.array([1.0, -2.0, 0.5, 3.0])
    B = rng.standard_normal((d, d))
    Sigma = B @ B.T / d + 0.5 * np.eye(d)  # a general (non-diagonal) covariance
    X = rng.multivariate_normal(mu, Sigma, size=N)
    sq = (X**2).sum(axis=1)
    m, half = sq.mean(), stats.norm.isf(0.005) * sq.std(ddof=1) / np.sqrt(N)
    corrected = np.trace(Sigma) + mu @ mu
    report = np.trace(Sigma) + mu**2  # sum_i sigma_i^2 + mu_j^2, j = 1..d
    return Corollary21(float(m), float(half), float(corrected), tuple(float(r) for r in report), N)


# ---------------------------------------------------------------------------------------
# Proposition 2.A (the lecture notes on zCDP)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RhoIdentity(Finding):
    """Proposition 2.A: the notes' two forms of eps(rho, delta) and Bun and Steinke's conversion."""

    ok: bool
    example_eps: float  #: eps at rho_notes = 0.5, delta = 1e-6

    @property
    def evidence(self) -> str:
        return f"e.g. $\\rho = 0.5$, $\\delta = 10^{{-6}}$: $\\varepsilon$ = {self.example_eps:.6g}"


def rho_identity() -> RhoIdentity:
    """Proposition 2.A of the lecture notes: the two forms of eps(rho, delta) agree (sympy), the
    Gaussian tail bound of the proof holds, and the conversion of Bun and Steinke at rho/2 gives the
    same eps."""
    rho_notes, delta = sp.symbols("rho_notes delta", positive=True)
    form1 = sp.sqrt(rho_notes) / 2 * (sp.sqrt(rho_notes) + 2 * sp.sqrt(2 * sp.log(1 / delta)))
    form2 = rho_notes / 2 + sp.sqrt(2 * rho_notes * sp.log(1 / delta))
    t = np.linspace(0.0, 12.0, 241)
    f = sp.lambdify((rho_notes, delta), form2)
    ok = bool(sp.simplify(form1 - form2) == 0 and np.all(stats.norm.sf(t) <= np.exp(-t**2 / 2))
              and all(np.isclose(calibration.rho_to_eps(calibration.rho_from_lecture_notes(r), delta=dl), f(r, dl),
                                 rtol=1e-12) for r, dl in [(0.01, 1e-5), (0.5, 1e-6), (4.0, 1e-10)]))
    return RhoIdentity(ok, calibration.rho_to_eps(calibration.rho_from_lecture_notes(0.5), delta=1e-6))


@dataclass(frozen=True)
class RhoCalibration(Finding):
    """Proposition 2.A: sigma from rho against sigma_opt and the classical calibration, unit sensitivity."""

    rows: Mapping[str, tuple[Any, ...]]
    ok: bool

    @property
    def evidence(self) -> str:
        ratios = self.rows["$\\sigma_\\rho$ / opt"]
        return (f"it spends {100 * (min(ratios) - 1):.0f}% to {100 * (max(ratios) - 1):.0f}% more noise "
                "than $\\sigma_{\\mathrm{opt}}$")

    def table(self) -> Table:
        return table(dict(self.rows), formats={
            "$\\varepsilon$": "{:g}", "$\\delta$": lambda v: readable(v, 1), "$\\sigma_{\\mathrm{opt}}$": "{:.4g}",
            "$\\sigma_\\rho$ / opt": "{:.3f}", "$\\delta(\\sigma_\\rho)$": lambda v: readable(v, 4)},
            caption="Three calibrations, unit sensitivity.", head=4, label="ch2-tab-rho-calibration")


def rho_calibration() -> RhoCalibration:
    """Proposition 2.A: the notes' rho calibration is private at ten (eps, delta) and never below
    sigma_opt (Theorem 2); the classical sigma (Theorem 1) beside it for eps < 1."""
    rows: dict[str, list[Any]] = {"$\\varepsilon$": [], "$\\delta$": [], "$\\sigma_{\\mathrm{opt}}$": [],
                                  "$\\sigma_\\rho$ / opt": [], "classical / opt": [], "$\\delta(\\sigma_\\rho)$": []}
    ok = True
    for eps in [0.1, 0.5, 0.9, 2.0, 8.0]:
        for delta in [1e-5, 1e-10]:
            s_opt = calibration.sigma_opt(eps=eps, delta=delta)
            ell = np.log(1 / delta)
            rho_notes = calibration.lecture_notes_rho(calibration.eps_to_rho(eps, delta=delta))
            ok &= bool(np.isclose(rho_notes, (np.sqrt(2 * (ell + eps)) - np.sqrt(2 * ell))**2, rtol=1e-8)
                       and np.isclose(calibration.rho_to_eps(calibration.rho_from_lecture_notes(rho_notes),
                                                             delta=delta), eps, rtol=1e-12))
            s_rho = calibration.sigma_from_rho(calibration.rho_from_lecture_notes(rho_notes))
            d_rho = calibration.privacy_profile(s_rho, eps=eps)
            ok &= bool(d_rho <= delta and s_rho >= s_opt)
            classical = "-"
            if eps < 1:
                s_cl = calibration.sigma_classical(eps=eps, delta=delta)
                ok &= bool(s_cl >= s_opt)
                classical = f"{s_cl / s_opt:.3f}"
            for key, val in zip(rows, (eps, delta, s_opt, s_rho / s_opt, classical, d_rho), strict=True):
                rows[key].append(val)
    return RhoCalibration(_frozen(rows), bool(ok))


@dataclass(frozen=True)
class RhoApproximation(Finding):
    """Proposition 2.A: rho ~ eps^2 / ln(1/delta) against the exact rho, at delta = 1e-6."""

    ratio: Mapping[float, float]  #: eps -> exact rho_notes / approximate rho
    delta_at: Mapping[float, float]  #: eps -> the delta that the approximate rho gives

    @property
    def ok(self) -> bool:
        private = [d <= 1e-6 for d in self.delta_at.values()]
        return bool(abs(self.ratio[0.001] - 0.5) < 1e-3 and private == [False, True, True, True])

    @property
    def evidence(self) -> str:
        return (f"$\\delta = 10^{{-6}}$; ratio {self.ratio[1.0]:.4f} at $\\varepsilon = 1$, {self.ratio[0.001]:.4f} "
                f"at $10^{{-3}}$; at $\\varepsilon = 1$ the approximate $\\rho$ gives $\\delta$ = "
                f"{readable(self.delta_at[1.0])}")


def rho_approximation() -> RhoApproximation:
    """Proposition 2.A's approximation rho ~ eps^2 / ln(1/delta): off by a factor 2 as eps -> 0, and not
    private at eps = 1 taken literally (delta = 1e-6)."""
    delta = 1e-6
    ell = np.log(1 / delta)
    ratio, delta_at = {}, {}
    for eps in [1.0, 0.1, 0.01, 0.001]:
        rho_approx = eps**2 / ell
        ratio[eps] = float(calibration.lecture_notes_rho(calibration.eps_to_rho(eps, delta=delta)) / rho_approx)
        delta_at[eps] = float(calibration.privacy_profile(
            calibration.sigma_from_rho(calibration.rho_from_lecture_notes(rho_approx)), eps=eps))
    return RhoApproximation(MappingProxyType(ratio), MappingProxyType(delta_at))


@dataclass(frozen=True)
class UnionBound(Finding):
    """Proposition 2.A's accuracy: k = 1000 counting queries with n from the union bound."""

    n: int
    failure_rate: float
    half: float  #: its 99 % half-width
    beta: float
    exact_union: float  #: 2k P(abs(Z) > alpha)

    @property
    def ok(self) -> bool:
        return bool(self.failure_rate + self.half < self.beta)

    @property
    def evidence(self) -> str:
        return (f"$n$ = {self.n}; failure rate {self.failure_rate:.4f} $\\pm$ {self.half:.4f} (99%) against "
                f"$\\beta$ = {self.beta:g}; exact union value {self.exact_union:.4f}")


def union_bound_accuracy() -> UnionBound:
    """Proposition 2.A: with n from the union bound, the largest of k = 1000 Gaussian errors exceeds
    alpha = 0.01 in fewer than beta = 0.05 of 4000 simulated releases at (1, 1e-6)."""
    rng = np.random.default_rng(26)
    k, eps, delta, beta, alpha = 1000, 1.0, 1e-6, 0.05, 0.01
    rho_notes = calibration.lecture_notes_rho(calibration.eps_to_rho(eps, delta=delta))
    n = int(np.ceil(np.sqrt(2 * k * np.log(2 * k / beta)) / (alpha * np.sqrt(rho_notes))))
    sigma = calibration.sigma_from_rho(calibration.rho_from_lecture_notes(rho_notes), sensitivity=np.sqrt(k) / n)
    runs = 4000
    frac = np.mean(np.abs(rng.normal(0.0, sigma, size=(runs, k))).max(axis=1) > alpha)
    se = np.sqrt(frac * (1 - frac) / runs)
    return UnionBound(n, float(frac), float(2.576 * se), beta, float(2 * k * stats.norm.sf(alpha / sigma)))
