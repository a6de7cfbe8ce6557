r"""Findings of chapter 5 (the report's Section 5): Figure 1's Zipf laws and Figure 2's improvement, recomputed.

:func:`figure1_laws` checks Figure 1's laws and what they concentrate; :func:`published_d_factor`
finds the factor d the published improvements carry; :func:`figure2_exact` recomputes Figure 2
with exact quantiles (egmbook.experiments.figure2_grid) on the report's and a dense grid of
exponents; :func:`published_accuracy` measures the published values' errors and confirms the
worst three by an independent route, Imhof's (1961) inversion formula; :func:`published_tails`
gives the exact clipping probability at every published radius, and :func:`simulated_ct_rates`
simulates three of them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import integrate, optimize

from egmbook import experiments
from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import gchisq, scaling
from egmlib.validation import check_count, check_finite_vector, check_positive_finite

__all__ = ["Figure1", "figure1_laws", "DFactor", "published_d_factor", "Figure2", "figure2_exact",
           "Accuracy", "published_accuracy", "PublishedTails", "published_tails", "SimulatedRate",
           "simulated_ct_rates"]

D_VALUES, N_VALUES = experiments.FIGURE2_D, experiments.FIGURE2_N
_pct = "{:.2%}".format


@dataclass(frozen=True)
class Figure1(Finding):
    """Figure 1's three Zipf laws at d = 100: sums, slopes, and the coordinates holding 99 %."""

    rows: tuple[tuple[float, float, float, int, int, float], ...]  #: alpha, sigma_1, ratio, 99% std, 99% var, var share
    laws_ok: bool  #: each sums to 1, decreases with slope -alpha, and sigma_1/sigma_100 = 100^alpha

    GLUE = MappingProxyType({"figure1-std-share": "std_share", "figure1-var-share": "var_share"})

    counts_std = property(lambda self: tuple(r[3] for r in self.rows))
    counts_var = property(lambda self: tuple(r[4] for r in self.rows))
    std_share = property(lambda self: float(self.rows[1][1]))
    var_share = property(lambda self: float(self.rows[1][5]))

    @property
    def ok(self) -> bool:
        return self.laws_ok and self.counts_std == (99, 95, 6)

    @property
    def variance_ok(self) -> bool:
        return self.counts_var == (99, 38, 2) and self.rows[1][5] > 3 * self.rows[1][1]

    @property
    def evidence(self) -> str:
        return ("coordinates holding 99% of $\\sum_j\\sigma_j$: " + ", ".join(map(str, self.counts_std))
                + " for $\\alpha$ = 0.1, 1, 3; $\\sigma_1/\\sigma_{100} = 100^\\alpha$ to $10^{-12}$.")

    @property
    def variance_evidence(self) -> str:
        return (f"$\\alpha = 1$: first coordinate's share {self.rows[1][1]:.4f} of $\\sum_j\\sigma_j$ against "
                f"{self.rows[1][5]:.4f} of $\\sum_j\\sigma_j^2$; 99% held by {self.counts_std[1]} against "
                f"{self.counts_var[1]} coordinates.")

    def table(self) -> Table:
        rows = self.rows
        return table({r"$\alpha$": [r[0] for r in rows], r"$\sigma_1$": [r[1] for r in rows],
                      r"$\sigma_1/\sigma_{100}$": [r[2] for r in rows],
                      "99% of $\\sum\\sigma_j$ in": [r[3] for r in rows],
                      "99% of $\\sum\\sigma_j^2$ in": [r[4] for r in rows],
                      r"$\sigma_1^2/\sum\sigma_j^2$": [r[5] for r in rows]},
                     formats={r"$\alpha$": "{:g}", r"$\sigma_1$": "{:.4f}", r"$\sigma_1/\sigma_{100}$": "{:.4g}",
                              r"$\sigma_1^2/\sum\sigma_j^2$": "{:.4f}"},
                     caption="The three laws of Figure 1 ($d = 100$): leading coordinates needed for 99% of the "
                             "total.", label="ch5-tab-figure1")


def figure1_laws() -> Figure1:
    """Figure 1 of the report: the Zipf standard deviations at d = 100 for alpha = 0.1, 1, 3
    (egmbook.experiments.zipf_sigmas) and how many leading coordinates hold 99 % of sum sigma and
    of sum sigma^2."""
    d1, i = 100, np.arange(1, 101)
    rows, ok = [], True
    for a in (0.1, 1.0, 3.0):
        s = experiments.zipf_sigmas(d1, alpha=a)
        slope = np.polyfit(np.log(i), np.log(s), 1)[0]
        ok &= bool(abs(s.sum() - 1) < 1e-15 and np.all(np.diff(s) <= 0) and abs(slope + a) < 1e-12
                   and abs(s[0] / s[-1] / 100**a - 1) < 1e-12)
        rows.append((a, s[0], s[0] / s[-1], experiments.leading_count(s), experiments.leading_count(s, power=2),
                     s[0] ** 2 / np.sum(s**2)))
    return Figure1(tuple(rows), bool(ok))


@dataclass(frozen=True)
class DFactor(Finding):
    """Figure 2's published improvements carry the factor d of eq. (1)."""

    dev_with_d: float  #: largest deviation of the published improvement from d C_n^2 / C_t^2
    dev_without_d: float  #: ... from C_n^2 / C_t^2
    ratio_range: tuple[float, float]  #: the published C_n^2 / C_t^2
    identity: float  #: E_n / E_t over d C_n^2 / (C_t^2 (sum sigma)^2) - 1 on one example

    @property
    def ok(self) -> bool:
        return self.dev_with_d < 1e-8 and self.dev_without_d > 0.5 and abs(self.identity) < 1e-12

    @property
    def evidence(self) -> str:
        return (f"largest deviation from $d\\,C_n^2/C_t^2$ {readable(self.dev_with_d)}, from $C_n^2/C_t^2$ "
                f"{self.dev_without_d:.3f}; $C_n^2/C_t^2$ ranges over [{self.ratio_range[0]:.4g}, "
                f"{self.ratio_range[1]:.4g}].")


def published_d_factor() -> DFactor:
    """Figure 2 as the report publishes it: the improvement is d C_n^2/C_t^2, with the factor d of eq. (1)
    that the report's E_n = (2 C_n sigma_opt)^2 omits."""
    pub = experiments.load_published_figure2()
    d_pub = pub.d
    Cn2_pub, Ct2_pub, R_pub = pub.Cn_squared, pub.Ct_squared, pub.improvement
    dev_with_d = float(np.max(np.abs(d_pub * Cn2_pub / Ct2_pub / R_pub - 1)))
    dev_without_d = float(np.max(np.abs(Cn2_pub / Ct2_pub / R_pub - 1)))
    sigma = 3.0 * experiments.zipf_sigmas(20, alpha=1.5)  # sum(sigma) = 3
    E_n, E_t = experiments.figure2_errors(sigma, n=1000, sigma_opt=0.7)
    radii = experiments.clipping_radii(sigma, p=1e-3)
    lhs, rhs = E_n / E_t, 20 * radii.Cn_squared / (radii.Ct_squared * sigma.sum() ** 2)
    return DFactor(dev_with_d, dev_without_d, (float(np.min(Cn2_pub / Ct2_pub)), float(np.max(Cn2_pub / Ct2_pub))),
                   float(lhs / rhs - 1))


@dataclass(frozen=True)
class Figure2(Finding):
    """Figure 2 with exact quantiles: the report's 108 points and 60 exponents per (d, n)."""

    grid: np.ndarray  #: the improvement at the report's points, shape (d, n, alpha)
    published: np.ndarray  #: the published improvement, same shape
    dense_alpha: np.ndarray
    dense: np.ndarray  #: the improvement on the dense exponents, shape (d, n, 60)
    expectation: np.ndarray  #: d ||sigma||_2^2 / ||sigma||_1^2 on the dense exponents, shape (d, 60)

    @property
    def increasing(self) -> bool:
        return bool(np.all(np.diff(self.dense, axis=2) >= -1e-9 * self.dense[:, :, 1:]))

    @property
    def top(self) -> np.ndarray:
        """The improvement over d at the largest exponent."""
        return self.grid[:, :, -1] / np.array(D_VALUES)[:, None]

    @property
    def ok(self) -> bool:
        return bool(np.all(self.grid > 1)) and self.increasing and bool(np.all(self.top > 1 - 1e-9))

    @property
    def evidence(self) -> str:
        top = self.top
        return (f"smallest improvement {self.grid.min():.5f}; non-decreasing in $\\alpha$ on the 60-exponent grid; "
                f"at $\\alpha = 100$, $|R/d - 1|$ < {readable(max(abs(top.min() - 1), abs(top.max() - 1), 1e-12), 1)}.")


def figure2_exact() -> Figure2:
    """Figure 2 recomputed with exact quantiles (egmbook.experiments.figure2_grid) at the report's points, on
    60 exponents from 1e-2 to 1e2 per (d, n), with the expectation-based factor of Theorem 3 beside it."""
    exact, pub = experiments.figure2_grid(), experiments.load_published_figure2()
    for key in ("d", "n", "alpha"):
        if not np.array_equal(getattr(exact, key), getattr(pub, key)):  # same points, same order
            raise RuntimeError(f"the recomputed and published Figure 2 differ in {key}")
    dense_alpha = np.logspace(-2, 2, 60)
    dense = experiments.figure2_grid(alphas=dense_alpha)
    shape = (len(D_VALUES), len(N_VALUES), -1)
    expectation = np.array([[scaling.egm_improvement(experiments.zipf_sigmas(d, alpha=a)) for a in dense_alpha]
                            for d in D_VALUES])
    return Figure2(exact.improvement.reshape(shape), pub.improvement.reshape(shape), dense_alpha,
                   dense.improvement.reshape(len(D_VALUES), len(N_VALUES), dense_alpha.size), expectation)


def _imhof_sf(x: float, w: np.ndarray) -> float:
    """P[sum_j w_j Z_j^2 > x] by Imhof's (1961) inversion formula and scipy's quad: a route independent of
    egmlib.gchisq (no saddlepoint, no contour), accurate to about 1e-9 absolute; chapter 5 uses it to
    confirm Figure 2's worst published radii."""
    f = lambda u: math.sin(0.5 * np.sum(np.arctan(w * u)) - 0.5 * x * u) / (u * np.prod((1 + (w * u) ** 2) ** 0.25))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val = integrate.quad(f, 0.0, np.inf, limit=4000, epsabs=1e-13, epsrel=1e-11)[0]
    return 0.5 + val / math.pi


def _imhof_isf(p: float, w: np.ndarray, guess: float) -> float:
    """The x with P[sum_j w_j Z_j^2 > x] = p by Imhof's formula, bracketed around ``guess`` (the
    library's value): from a factor 1 +- 1e-6, widened a hundredfold until the bracket holds the
    root (each quadrature takes up to a second at d = 1000, and a narrow bracket needs a third of them)."""
    for width in (1e-6, 1e-4, 1e-2, 1.0):
        try:
            return optimize.brentq(lambda x: _imhof_sf(x, w) - p, guess / (1.0 + width), guess * (1.0 + width),
                                   xtol=1e-12, rtol=1e-12)
        except ValueError:  # no change of sign in this bracket
            continue
    raise ValueError(f"Imhof's formula finds no quantile within a factor 2 of guess={guess!r}")


@dataclass(frozen=True)
class Accuracy(Finding):
    """The published Figure 2 against the exact values: relative errors, and the worst three confirmed."""

    d: np.ndarray
    n: np.ndarray
    alpha: np.ndarray
    published: np.ndarray  #: the published improvement
    exact: np.ndarray  #: the exact improvement
    rel: Mapping[str, np.ndarray]  #: "R", "Cn", "Ct" -> published / exact - 1
    agree: float  #: the Imhof route's worst errors against the library's, relative

    GLUE = MappingProxyType({"err-R-max": "err_r_max", "err-Cn-max": "err_cn_max", "err-Ct-max": "err_ct_max"})

    def worst(self, name: str) -> tuple[float, int, int, float]:
        """``(abs(error), d, n, alpha)`` at the worst point of ``name`` ("R", "Cn" or "Ct")."""
        j = int(np.argmax(np.abs(self.rel[name])))
        return float(abs(self.rel[name][j])), int(self.d[j]), int(self.n[j]), float(self.alpha[j])

    err_r_max = property(lambda self: 100 * self.worst("R")[0])
    err_cn_max = property(lambda self: 100 * self.worst("Cn")[0])
    err_ct_max = property(lambda self: 100 * self.worst("Ct")[0])

    @property
    def ok(self) -> bool:
        return self.agree < 1e-6 and all(self.worst(k)[0] > 0.05 for k in ("R", "Cn", "Ct"))

    @property
    def evidence(self) -> str:
        wR, wC, wT = self.worst("R"), self.worst("Cn"), self.worst("Ct")
        jR = int(np.argmax(np.abs(self.rel["R"])))
        p10 = lambda n: round(np.log10(n))  # noqa: E731
        return (f"worst improvement: {self.rel['R'][jR]:+.2%} at $d$ = {wR[1]}, $n = 10^{p10(wR[2])}$, "
                f"$\\alpha$ = {wR[3]:g} (published {self.published[jR]:.6g}, exact {self.exact[jR]:.6g}); worst "
                f"$C_n^2$ at $d$ = {wC[1]}, $n = 10^{p10(wC[2])}$, $\\alpha$ = {wC[3]:g}; worst "
                f"$C_t^2$ at $d$ = {wT[1]}, $n = 10^{p10(wT[2])}$, $\\alpha$ = {wT[3]:g}; the two routes agree to "
                f"{readable(self.agree, 1)} relative.")

    def table_by_setting(self) -> Table:
        per: dict[str, list[Any]] = {"$d$": [], "$n$": [], "improvement": [], "$C_n^2$": [], "$C_t^2$": []}
        for d in D_VALUES:
            for n in N_VALUES:
                m = (self.d == d) & (self.n == n)
                for key, v in (("$d$", d), ("$n$", f"$10^{round(np.log10(n))}$"),
                               ("improvement", np.max(np.abs(self.rel["R"][m]))),
                               ("$C_n^2$", np.max(np.abs(self.rel["Cn"][m]))),
                               ("$C_t^2$", np.max(np.abs(self.rel["Ct"][m])))):
                    per[key].append(v)
        return table(per, formats={"improvement": _pct, "$C_n^2$": _pct, "$C_t^2$": _pct},
                     caption="Largest relative error of the published values over the twelve exponents.",
                     label="ch5-tab-accuracy-by-setting")

    def table(self) -> Table:
        return table({"$d$": self.d, "$n$": [f"$10^{round(np.log10(n))}$" for n in self.n], r"$\alpha$": self.alpha,
                      "published $R$": self.published, "exact $R$": self.exact, "error $R$": self.rel["R"],
                      "error $C_n^2$": self.rel["Cn"], "error $C_t^2$": self.rel["Ct"]},
                     formats={r"$\alpha$": "{:g}", "published $R$": "{:.6g}", "exact $R$": "{:.6g}",
                              "error $R$": "{:+.2%}", "error $C_n^2$": "{:+.2%}", "error $C_t^2$": "{:+.2%}"},
                     caption="Figure 2's 108 points: published and exact improvement, and the signed relative errors.",
                     head=6, label="ch5-tab-accuracy")


def published_accuracy() -> Accuracy:
    """The published Figure 2 (the report's chi2comb radii) against the exact values: relative errors of the
    improvement, C_n^2 and C_t^2 at the 108 points; the three worst recomputed by Imhof's formula."""
    exact, pub = experiments.figure2_grid(), experiments.load_published_figure2()
    rel = {"R": pub.improvement / exact.improvement - 1, "Cn": pub.Cn_squared / exact.Cn_squared - 1,
           "Ct": pub.Ct_squared / exact.Ct_squared - 1}
    found = Accuracy(pub.d, pub.n, pub.alpha, pub.improvement, exact.improvement, MappingProxyType(rel), 0.0)
    radii: dict[tuple[str, int], float] = {}  # the exact radii by the independent route, each once

    def radius(kind: str, j: int) -> float:
        if (kind, j) not in radii:
            sg = experiments.zipf_sigmas(int(pub.d[j]), alpha=float(pub.alpha[j]))
            w, guess = (sg**2, exact.Cn_squared[j]) if kind == "Cn" else (sg / sg.sum(), exact.Ct_squared[j])
            radii[(kind, j)] = _imhof_isf(1.0 / float(pub.n[j]), w, float(guess))
        return radii[(kind, j)]

    second = {}  # the three worst points, recomputed
    for name in ("R", "Cn", "Ct"):
        _, d, n, a = found.worst(name)
        j = int(np.flatnonzero((pub.d == d) & (pub.n == n) & (pub.alpha == a))[0])
        if name == "R":
            sg = experiments.zipf_sigmas(d, alpha=a)
            second[name] = pub.improvement[j] / (d * radius("Cn", j) / (radius("Ct", j) * sg.sum() ** 2)) - 1
        else:
            second[name] = (pub.Cn_squared[j] if name == "Cn" else pub.Ct_squared[j]) / radius(name, j) - 1
    agree = max(abs(abs(second[k]) / found.worst(k)[0] - 1) for k in second)
    return Accuracy(pub.d, pub.n, pub.alpha, pub.improvement, exact.improvement, MappingProxyType(rel), float(agree))


@dataclass(frozen=True)
class PublishedTails:
    """The exact clipping probability at the published radii, in units of 1/n, and the local tail exponents
    eta = d ln P / d ln C^2 (negative) at the exact radii, in the published order."""

    n_tail_n: np.ndarray  #: n P(chi^2 law of C_n^2 > published C_n^2)
    n_tail_t: np.ndarray  #: the same at C_t^2
    eta_n: np.ndarray  #: tail exponent at the exact C_n^2
    eta_t: np.ndarray  #: tail exponent at the exact C_t^2


def published_tails(published: experiments.Figure2Table, exact: experiments.Figure2Table, *,
                    step: float = 1e-3) -> PublishedTails:
    """n P at each published C_n^2 and C_t^2 (egmlib.gchisq's exact tail of the weighted chi-square laws with
    weights sigma_j^2 and sigma_j / sum sigma), and the tail exponents by a central difference of ``step`` in
    ln C^2 at the exact radii."""
    step = check_positive_finite("step", step)
    if step > 1.0:
        raise ValueError(f"step must be at most 1 (a relative step in ln C^2), got step={step!r}")
    size = published.improvement.size
    n_tail_n, n_tail_t, eta_n, eta_t = (np.empty(size) for _ in range(4))
    for dimension in D_VALUES:
        for alpha in experiments.FIGURE2_ALPHA:
            mask = (published.d == dimension) & (published.alpha == alpha)
            sigma = experiments.zipf_sigmas(dimension, alpha=alpha)
            for weights, c_pub, c_ex, n_tail, tail_exp in (
                    (sigma * sigma, published.Cn_squared, exact.Cn_squared, n_tail_n, eta_n),
                    (sigma / sigma.sum(), published.Ct_squared, exact.Ct_squared, n_tail_t, eta_t)):
                law = gchisq.WeightedChiSquare(weights)
                n_tail[mask] = published.n[mask] * law.sf(c_pub[mask])
                log_up, log_down = law.logsf(c_ex[mask] * np.exp(step)), law.logsf(c_ex[mask] * np.exp(-step))
                tail_exp[mask] = (log_up - log_down) / (2 * step)
    return PublishedTails(n_tail_n, n_tail_t, eta_n, eta_t)


@dataclass(frozen=True)
class SimulatedRate:
    """The simulated clipping rate of one published C_t^2 (d = 100, n = 10^3), in units of 1/n."""

    alpha: float  #: Zipf exponent
    index: int  #: the point's position in the published order
    ct_squared: float  #: the published C_t^2
    rate: float  #: n times the share of simulated points beyond it
    lower: float  #: 99 % interval of n times the rate (normal approximation)
    upper: float


def simulated_ct_rates(published: experiments.Figure2Table, *, alphas: tuple[float, ...] = (0.01, 0.1, 1.0),
                       draws: int = 200_000, seed: int = 20230120) -> tuple[SimulatedRate, ...]:
    """Simulate sum_j w_j Z_j^2 (w = sigma / sum sigma, d = 100) ``draws`` times, in 4 chunks, for each
    exponent, and count how often it exceeds the published C_t^2 at n = 10^3."""
    draws = check_count("draws", draws, minimum=4, maximum=10**6)
    if draws % 4:
        raise ValueError(f"draws must be a multiple of 4 (the draws come in 4 equal chunks), got draws={draws}")
    generator, dimension, rows = np.random.default_rng(check_count("seed", seed, minimum=0)), 100, []
    shown = published.alpha[(published.d == dimension) & (published.n == 1000)]
    missing = [a for a in check_finite_vector("alphas", alphas) if a not in shown]
    if missing:
        raise ValueError(f"alphas must be Zipf exponents of the published Figure 2 at d = 100 and n = 1000 "
                         f"({sorted(shown.tolist())}), got {missing}")
    for alpha in alphas:
        sigma = experiments.zipf_sigmas(dimension, alpha=alpha)
        weights = sigma / sigma.sum()
        point = int(np.flatnonzero((published.d == dimension) & (published.n == 1000)
                                   & (published.alpha == alpha))[0])
        hits = 0
        for _chunk in range(4):
            points = generator.standard_normal((draws // 4, dimension))
            hits += int(np.count_nonzero((points * points) @ weights > published.Ct_squared[point]))
        rate = hits / draws
        half = 2.576 * np.sqrt(rate * (1 - rate) / draws)
        rows.append(SimulatedRate(alpha, point, float(published.Ct_squared[point]), 1000 * rate,
                                  1000 * (rate - half), 1000 * (rate + half)))
    return tuple(rows)
