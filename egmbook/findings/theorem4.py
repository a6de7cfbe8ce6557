r"""Findings of sections 4c and 4d: Lemma 4.2 (Bernstein's bound), Theorem 4 and Proposition 4.A.

Section 4c checks the lemma's moments and constants symbolically (sympy, mpmath), Theorem 4's
algebra and proof, the theorem on Figure 2's 108 points (:func:`theorem4_grid`), its centre
and Section 6's exponent.  Section 4d puts the lemma against the exact tail, Theorem 4's
formula outside its condition, and the Laurent-Massart bound (Proposition 4.A) everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mpmath as mp
import numpy as np
import sympy as sp
from scipy import optimize, stats
from scipy.special import zeta
from sympy.stats import E as expect
from sympy.stats import Normal

from egmbook import experiments
from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding
from egmlib import bounds, gchisq, symbolic

__all__ = ["SymbolicCheck", "second_moments", "chi2_moments", "abs_moments", "product_bound", "constant_l",
           "constant_l2", "bernstein_form", "theorem4_algebra", "proof_sigma_star", "proof_sqrt2", "GridPoint",
           "Theorem4Grid", "theorem4_grid", "CentreOff", "theorem4_centre", "Section6", "section6_exponent",
           "Lemma42Numeric", "lemma42_numeric", "OutsideCondition", "outside_condition", "LaurentMassart",
           "laurent_massart"]

D_VALUES, N_VALUES, ALPHAS = experiments.FIGURE2_D, experiments.FIGURE2_N, experiments.FIGURE2_ALPHA


@dataclass(frozen=True)
class SymbolicCheck(Finding):
    """A symbolic check: its verdict and the expressions it shows as evidence."""

    ok: bool
    evidence: str


def second_moments() -> SymbolicCheck:
    """Eqs. (18)-(22): E[X^4] = 3 sigma^4 and E[(X^2 - sigma^2)^2] = 2 sigma^4 (sympy.stats)."""
    sg = sp.Symbol("sigma", positive=True)
    Xg = Normal("X", 0, sg)
    EX4, EY2 = sp.simplify(expect(Xg**4)), sp.simplify(expect((Xg**2 - sg**2) ** 2))
    return SymbolicCheck(bool(EX4 == 3 * sg**4 and EY2 == 2 * sg**4),
                         f"sympy: $\\mathbb E[X^4] = {sp.latex(EX4)}$, "
                         f"$\\mathbb E[(X^2-\\sigma^2)^2] = {sp.latex(EY2)}$.")


def chi2_moments() -> SymbolicCheck:
    """Lemma 4.2: (2k - 1)!! are the moments of chi-square(1), three ways for k <= 40 (the moment
    generating function's Taylor coefficients, the Gamma function, and mpmath quadrature for k <= 8)."""
    th = sp.Symbol("theta")
    series = sp.series((1 - 2 * th) ** sp.Rational(-1, 2), th, 0, 41).removeO()
    from_mgf = [series.coeff(th, k) * sp.factorial(k) for k in range(41)]
    from_gamma = [symbolic.chi2_moment(k) for k in range(41)]
    dfact = [sp.factorial2(2 * k - 1) for k in range(41)]
    with mp.workdps(30):
        quad = [mp.quad(lambda w, k=k: 2 * w ** (2 * k) * mp.npdf(w), [0, mp.inf]) for k in range(1, 9)]
        close = all(abs(x - y) < 1e-20 * y for x, y in zip(quad, dfact[1:9], strict=True))
    return SymbolicCheck(bool(from_mgf == dfact == from_gamma and close),
                         "$\\mathbb E Z^k$, $k = 0..8$: " + ", ".join(str(v) for v in from_gamma[:9])
                         + "; agree for $k \\le 40$ three ways.")


def abs_moments() -> SymbolicCheck:
    """Lemma 4.2's first inequality E|Z - 1|^k <= E Z^k: exactly for k <= 40 (egmlib.symbolic), and for
    k >= 5 because 5 P[Z >= 2] > P[Z < 1]."""
    ratios = {k: sp.N(symbolic.chi2_abs_central_moment(k), 40) / symbolic.chi2_moment(k) for k in range(1, 41)}
    p_below1, p_above2 = stats.chi2.cdf(1, 1), stats.chi2.sf(2, 1)
    return SymbolicCheck(bool(max(ratios.values()) < 1 and 5 * p_above2 > p_below1),
                         "$\\mathbb E|Z-1|^k/\\mathbb E Z^k$ = " + ", ".join(f"{float(ratios[k]):.4f} ($k$ = {k})"
                                                                       for k in (1, 2, 3, 10, 40))
                         + f"; $\\Pr[Z<1]$ = {p_below1:.6f}, $5\\Pr[Z\\ge2]$ = {5 * p_above2:.6f}.")


def product_bound() -> SymbolicCheck:
    """Lemma 4.2's product: (2k - 1)!! <= 3 prod_{c=3}^k 2c = (3/2) 2^(k-2) k!, and the product from
    c = 2 is four times it (sympy)."""
    k = sp.Symbol("k", integer=True, positive=True)
    c = sp.Symbol("c", integer=True, positive=True)
    A = 2**k * sp.gamma(k + sp.Rational(1, 2)) / sp.sqrt(sp.pi)  # (2k-1)!!
    B = sp.Rational(3, 2) * 2 ** (k - 2) * sp.factorial(k)
    ratio_A = sp.simplify(sp.expand_func(A.subs(k, k + 1) / A))
    ratio_B = sp.combsimp(B.subs(k, k + 1) / B)
    exact = all(sp.factorial2(2 * j - 1) <= B.subs(k, j) for j in range(2, 41))
    from_c2 = sp.simplify(3 * sp.product(2 * c, (c, 2, k)) / B)
    from_c3 = sp.simplify(3 * sp.product(2 * c, (c, 3, k)) / B)
    ok = bool(exact and ratio_A == 2 * k + 1 and ratio_B == 2 * k + 2 and A.subs(k, 2) == B.subs(k, 2)
              and from_c3 == 1 and from_c2 == 4)
    return SymbolicCheck(ok, f"ratios of consecutive terms ${sp.latex(ratio_A)}$ and ${sp.latex(ratio_B)}$, equal "
                             f"at $k = 2$; $3\\prod_{{c=2}}^k 2c$ / right-hand side = {from_c2}, from $c = 3$: "
                             f"{from_c3}.")


def constant_l() -> SymbolicCheck:
    """Eq. (17): the admissible L_k = 2 (3/2)^(1/(k-2)) decrease to 2, so k = 3 forces L = 3 sigma_*^2;
    L = 2 fails at k = 3 and L = 3 holds for all k <= 40."""
    k = sp.Symbol("k", integer=True, positive=True)
    Lk = [2 * sp.Rational(3, 2) ** sp.Rational(1, j - 2) for j in range(3, 41)]
    decreasing = all(Lk[i] > Lk[i + 1] for i in range(len(Lk) - 1))
    cond = lambda L, j: sp.Rational(3, 2) * 2 ** (j - 2) * sp.factorial(j) <= L ** (j - 2) * sp.factorial(j)  # noqa: E731
    exact_ok = all(sp.N(symbolic.chi2_abs_central_moment(j), 40) <= 3 ** (j - 2) * sp.factorial(j)
                   for j in range(2, 41))
    ok = bool(decreasing and Lk[0] == 3 and not cond(2, 3) and all(cond(3, j) for j in range(3, 41)) and exact_ok)
    return SymbolicCheck(ok, "admissible $L_k$ for $k$ = 3..6: " + ", ".join(f"{float(x):.5f}" for x in Lk[:4])
                         + f", limit {sp.limit(2 * sp.Rational(3, 2) ** (1 / (k - 2)), k, sp.oo)}.")


def constant_l2() -> SymbolicCheck:
    """Remark 4.A: Bernstein's condition (17) holds with L = 2 sigma_*^2 for every k >= 2."""
    k = sp.Symbol("k", integer=True, positive=True)
    Lexact = {j: (sp.N(symbolic.chi2_abs_central_moment(j), 40) / sp.factorial(j)) ** sp.Rational(1, j - 2)
              for j in range(3, 41)}
    binom_ratio = sp.combsimp(sp.binomial(2 * k + 2, k + 1) / sp.binomial(2 * k, k))
    ok = bool(max(Lexact.values()) < 2 and sp.binomial(12, 6) <= 4**5
              and bool(sp.simplify(4 - binom_ratio).is_positive))
    return SymbolicCheck(ok, r"$(\mathbb E|Z-1|^k/k!)^{1/(k-2)}$ = " + ", ".join(f"{float(Lexact[j]):.5f} ($k$ = {j})"
                                                                                 for j in (3, 4, 6, 40))
                         + f"; $\\binom{{2k+2}}{{k+1}}/\\binom{{2k}}{{k}} = {sp.latex(binom_ratio)} < 4$.")


def bernstein_form() -> SymbolicCheck:
    """Eq. (23) from the Bernstein form (4.G): the Chernoff exponent at x = 2t sqrt(v) is at least t^2
    exactly when t <= sqrt(v)/(2L) (sympy)."""
    v, L, x, t, theta, s4, smax = sp.symbols("v L x t theta Sigma4 sigma_*", positive=True)
    f = theta**2 * v / (2 * (1 - L * theta)) - theta * x
    th_star = x / (v + L * x)
    chernoff = sp.simplify(f.subs(theta, th_star) + x**2 / (2 * (v + L * x))) == 0
    inside = sp.simplify(1 - L * th_star - v / (v + L * x)) == 0
    gap = sp.simplify((x**2 / (2 * (v + L * x))).subs(x, 2 * t * sp.sqrt(v)) - t**2)
    sign_ok = sp.simplify(gap - t**2 * (v - 2 * L * t * sp.sqrt(v)) / (v + 2 * L * t * sp.sqrt(v))) == 0
    threshold = sp.simplify(2 * t * sp.sqrt(2 * s4) - t * sp.sqrt(8 * s4)) == 0
    t_max = sp.simplify(sp.sqrt(2 * s4) / (2 * 3 * smax**2) - sp.sqrt(2 * s4) / (6 * smax**2)) == 0
    return SymbolicCheck(bool(chernoff and inside and sign_ok and threshold and t_max),
                         f"exponent $- t^2$ at $x = 2t\\sqrt v$: ${sp.latex(sp.factor(gap))}$.")


def _theorem4_symbols() -> tuple[Any, ...]:
    d_ = sp.Symbol("d", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, positive=True)
    sgm = sp.IndexedBase("sigma", positive=True)
    S = sp.Sum(sgm[i], (i, 1, d_))
    P2 = sp.Sum(sgm[i] ** 2, (i, 1, d_))
    return d_, i, sgm, S, P2


def theorem4_algebra() -> SymbolicCheck:
    """Theorem 4 and eq. (24) with w_j = sigma_j / S: the sums, Lemma 4.2's threshold at t = sqrt(ln n),
    the error bound and the condition t <= t_max (sympy, general d)."""
    d_, i, sgm, S, P2 = _theorem4_symbols()
    n_, so, sstar = sp.symbols("n sigma_opt sigma_*", positive=True)
    w_i = sgm[i] / S
    b_i = 1 / sp.sqrt(sgm[i] * S)
    sum_w = sp.simplify(sp.Sum(w_i, (i, 1, d_)))
    sum_w2 = sp.simplify(sp.Sum(w_i**2, (i, 1, d_)))
    sum_binv2 = sp.simplify(sp.Sum(b_i**-2, (i, 1, d_)))
    C2 = sp.sqrt(sp.log(n_)) * sp.sqrt(8 * sum_w2) + sum_w
    err = 4 * so**2 * C2 * sum_binv2
    err_report = 4 * so**2 * S * (sp.sqrt(8 * sp.log(n_) * P2) + S)
    tmax2 = (sp.sqrt(2 * sum_w2) / (6 * (sstar / S))) ** 2
    ok = bool(sp.simplify(sum_w - 1) == 0 and sp.simplify(sum_binv2 - S**2) == 0
              and sp.simplify(C2 - (sp.sqrt(8 * sp.log(n_) * P2) / S + 1)) == 0
              and sp.simplify(err - err_report) == 0 and sp.simplify(tmax2 - P2 / (18 * sstar**2)) == 0)
    return SymbolicCheck(ok, f"$t_{{\\max}}^2 = {sp.latex(sp.simplify(tmax2))}$.")


def proof_sigma_star() -> SymbolicCheck:
    """Theorem 4's proof: (b_j sigma_*)^2 differs from max_j (b_j sigma_j)^2 = sigma_*/S unless
    sigma_j = sigma_* (sympy)."""
    _, _, sgm, S, _ = _theorem4_symbols()
    j = sp.Symbol("j", integer=True, positive=True)
    sstar = sp.Symbol("sigma_*", positive=True)
    b_j = 1 / sp.sqrt(sgm[j] * S)
    printed_first = sp.simplify((b_j * sstar) ** 2 - sstar / S)
    ok = bool(sp.simplify(printed_first) != 0 and sp.simplify(printed_first.subs(sgm[j], sstar)) == 0)
    return SymbolicCheck(ok, f"$(b_j\\sigma_*)^2 - \\sigma_*/S = {sp.latex(sp.factor(printed_first))}$.")


def proof_sqrt2() -> SymbolicCheck:
    """Theorem 4's proof: the printed second line of the condition, squared, is half the condition;
    with the lost factor sqrt(2) it is sum sigma_j^2 / (18 sigma_*^2) (sympy)."""
    _, _, _, S, P2 = _theorem4_symbols()
    sstar = sp.Symbol("sigma_*", positive=True)
    correct_second = (sp.sqrt(2 * P2 / S**2) / (6 * sstar / S)) ** 2
    printed_second = ((S / sstar) * sp.sqrt(P2 / S**2) / 6) ** 2
    ok = bool(sp.simplify(correct_second - P2 / (18 * sstar**2)) == 0
              and sp.simplify(printed_second - P2 / (36 * sstar**2)) == 0)
    return SymbolicCheck(ok, f"printed, squared: ${sp.latex(sp.simplify(printed_second))}$; corrected: "
                             f"${sp.latex(sp.simplify(correct_second))}$.")


# ---------------------------------------------------------------------------------------
# Theorem 4 on Figure 2's grid
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridPoint:
    """One point (d, alpha, n) of Figure 2: Theorem 4's result, the exact C_t^2 and noise error, sigma."""

    bound: Any  #: egmlib.bounds.theorem4_bound's result
    ct2: float  #: the exact C_t^2
    exact_error: float  #: 4 C_t^2 (sum sigma)^2
    sigma: np.ndarray


@dataclass(frozen=True)
class Theorem4Grid(Finding):
    """Theorem 4 on the 108 points of Figure 2."""

    points: Mapping[tuple[int, float, int], GridPoint]
    consistent: bool  #: the condition is ln n <= sum (sigma/sigma_*)^2 / 18 everywhere
    same_path: bool  #: the exact error equals the empirical chapter's everywhere

    GLUE = MappingProxyType({"thm4-points": "n_holds", "thm4-ratio-min": "ratio_min", "thm4-ratio-max": "ratio_max"})

    holds = property(lambda self: [k for k, g in self.points.items() if g.bound.holds])
    inside = property(lambda self: [(k, g) for k, g in self.points.items() if g.bound.holds])
    ratios = property(lambda self: [g.bound.bound / g.exact_error for _, g in self.inside])
    n_holds = property(lambda self: len(self.holds))
    ratio_min = property(lambda self: float(min(self.ratios)))
    ratio_max = property(lambda self: float(max(self.ratios)))

    @property
    def ok(self) -> bool:
        """The condition holds at 7 points, all with d > 10 and alpha <= 0.1."""
        return len(self.holds) == 7 and all(k[0] > 10 and k[1] <= 0.1 for k in self.holds) and self.consistent

    @property
    def evidence(self) -> str:
        return "points $(d, \\alpha, n)$: " + ", ".join(f"({d}, {a:g}, $10^{round(math.log10(n))}$)"
                                                        for d, a, n in self.holds) + "."

    @property
    def exact_ok(self) -> bool:
        """Where the condition holds, the bound lies above the exact error (and C^2 above C_t^2)."""
        return all(g.bound.ct2_bound >= g.ct2 and g.bound.bound >= g.exact_error
                   and math.isclose(g.bound.bound / g.exact_error, g.bound.ct2_bound / g.ct2, rel_tol=1e-12)
                   for _, g in self.inside) and self.same_path

    @property
    def exact_evidence(self) -> str:
        return (f"bound / exact error {min(self.ratios):.4f} to {max(self.ratios):.4f}; the exact error equals "
                "the empirical chapter's at all 108 points.")

    def table(self) -> Table:
        inside = self.inside
        return table({"$d$": [k[0] for k, _ in inside], r"$\alpha$": [k[1] for k, _ in inside],
                      "$n$": [f"$10^{round(math.log10(k[2]))}$" for k, _ in inside],
                      "exact $C_t^2$": [g.ct2 for _, g in inside],
                      "Lemma 4.2's $C^2$": [g.bound.ct2_bound for _, g in inside],
                      "Theorem 4 / exact error": self.ratios},
                     formats={r"$\alpha$": "{:g}", "exact $C_t^2$": "{:.5f}", "Lemma 4.2's $C^2$": "{:.5f}",
                              "Theorem 4 / exact error": "{:.4f}"},
                     caption="The points of Figure 2's grid where Theorem 4's condition holds: the exact squared "
                             "radius, Lemma 4.2's bound and Theorem 4 over the exact error.",
                     label="ch4-tab-theorem4-grid")


def theorem4_grid() -> Theorem4Grid:
    """Theorem 4 (egmlib.bounds.theorem4_bound) at every point of Figure 2 (Zipf sigmas, the report's
    d, alpha and n), with the exact C_t^2 of egmlib.gchisq and the noise error of Section 5."""
    points = {}
    for d in D_VALUES:
        for alpha in ALPHAS:
            sig = experiments.zipf_sigmas(d, alpha=alpha)
            ct2 = np.atleast_1d(gchisq.isf(1.0 / np.array(N_VALUES, dtype=float), w=sig / sig.sum()))
            for n, c2 in zip(N_VALUES, ct2, strict=True):
                res = bounds.theorem4_bound(sig, n=n, sigma_opt=1.0)
                points[(d, alpha, n)] = GridPoint(res, float(c2), 4 * float(c2) * sig.sum() ** 2, sig)
    consistent = all(g.bound.holds == (math.log(k[2]) <= float(np.sum((g.sigma / g.sigma.max()) ** 2)) / 18)
                     for k, g in points.items())
    same_path = all(math.isclose(experiments.figure2_errors(g.sigma, n=k[2]).Et, g.exact_error, rel_tol=1e-12)
                    for k, g in points.items())
    return Theorem4Grid(MappingProxyType(points), consistent, same_path)


@dataclass(frozen=True)
class CentreOff(Finding):
    """Theorem 4's radius when the centre is off: n times the clipping probability, centred and offset."""

    rows: tuple[tuple[tuple[int, float, int], tuple[float, float, float]], ...]

    @property
    def ok(self) -> bool:
        return all(r[0] <= 1 and r[1] > 1 and r[2] > 10 for _, r in self.rows)

    @property
    def evidence(self) -> str:
        rows = self.rows
        return (f"at the {len(rows)} points where the theorem applies: centred, $n\\Pr$ at most "
                f"{max(r[0] for _, r in rows):.3g}; offset $0.5\\sigma_j$, at least "
                f"{min(r[1] for _, r in rows):.3g}; offset $1\\sigma_j$, at least {min(r[2] for _, r in rows):.3g}.")

    def table(self) -> Table:
        cols = {"$(d, \\alpha, n)$": [f"({d}, {a:g}, $10^{round(math.log10(n))}$)" for (d, a, n), _ in self.rows],
                "$n\\,\\Pr$, centred (exact)": [r[0] for _, r in self.rows],
                "$n\\,\\Pr$, offset $0.5\\sigma_j$": [r[1] for _, r in self.rows],
                "$n\\,\\Pr$, offset $1\\sigma_j$": [r[2] for _, r in self.rows]}
        return table(cols, formats={k: "{:.3g}" for k in list(cols)[1:]},
                     caption="$n$ times the clipping probability at Lemma 4.2's radius (Theorem 4's $C^2$): centred "
                             "law, and the law of Section 4's definition with a centre off by $c\\,\\sigma_j$ (Monte "
                             "Carlo, 40 000 rows).", label="ch4-tab-theorem4-centre")


def theorem4_centre() -> CentreOff:
    """Theorem 4's radius with the centre off by 0.5 and 1 sigma_j (Section 4's definition): exact
    centred tail (egmlib.gchisq) and Monte Carlo (40 000 rows) at the 7 points where the theorem applies."""
    rng = np.random.default_rng(2024)
    rows = []
    for (d, alpha, n), g in theorem4_grid().inside:
        w = g.sigma / g.sigma.sum()  # transformed variances: x_hat_j ~ N(-c sqrt(w_j), w_j)
        exact_centred = float(gchisq.sf(g.bound.ct2_bound, w=w))  # Algorithm 3's law: at most 1/n
        row = [n * exact_centred]
        for c_off in (0.5, 1.0):
            hits = 0
            for _ in range(8):  # 8 blocks of 5000 rows
                Y = rng.standard_normal((5000, d)) - c_off
                hits += int(np.sum(np.einsum("ij,ij->i", Y, Y * w) > g.bound.ct2_bound))
            row.append(n * hits / 40_000)
        rows.append(((d, alpha, n), (row[0], row[1], row[2])))
    return CentreOff(tuple(rows))


@dataclass(frozen=True)
class Section6(Finding):
    """Section 6's exponent: t = sqrt(ln n) against t = ln n for clipping probability 1/n."""

    ok_instances: bool
    cases: int
    worst_sqrt: float
    worst_ln: float
    radius_ratio: tuple[float, ...]
    admissible: Mapping[str, int]  #: points of Figure 2 where t <= t_max
    holds: int  #: points where Theorem 4's condition holds

    GLUE = MappingProxyType({"sec6-literal-1e2": "literal_1e2", "sec6-points": "points_ln"})

    literal_1e2 = property(lambda self: float(math.exp(-math.log(100) ** 2)))
    points_ln = property(lambda self: int(self.admissible["ln"]))

    @property
    def ok(self) -> bool:
        return bool(self.ok_instances) and self.admissible["ln"] < self.admissible["sqrt"] == self.holds

    @property
    def evidence(self) -> str:
        return (f"{self.cases} random instances, exact tails: at $t = \\sqrt{{\\ln n}}$, $n$ times the tail at most "
                f"{self.worst_sqrt:.3g} ($\\le 1$); at $t = \\ln n$ at most {self.worst_ln:.2g}, at a squared radius "
                f"{min(self.radius_ratio):.3g} to {max(self.radius_ratio):.3g} times larger; admissible on Figure "
                f"2's grid: $t = \\sqrt{{\\ln n}}$ at {self.admissible['sqrt']} of 108 points, $t = \\ln n$ at "
                f"{self.admissible['ln']}.")


def section6_exponent() -> Section6:
    """Lemma 4.2 at clipping probability 1/n needs t = sqrt(ln n) (Theorem 4's proof), not Section 6's
    t = ln n: exact tails on 300 random instances, and the admissible points of Figure 2."""
    rng = np.random.default_rng(2019)
    ok, cases, worst_sqrt, worst_ln, radius_ratio = True, 0, 0.0, 0.0, []
    while cases < 300:
        d = int(rng.integers(20, 3001))
        sig = rng.lognormal(0.0, rng.uniform(0.0, 0.6), d)
        sd = np.sqrt(sig / sig.sum())  # transformed standard deviations
        n = int(round(10 ** rng.uniform(1.0, 6.0)))
        t_sqrt, t_ln = bounds.bernstein_t_for_probability(1.0 / n), math.log(n)
        if t_sqrt > bounds.bernstein_t_max(sd):
            continue
        cases += 1
        x_sqrt, x_ln = bounds.bernstein_threshold(sd, t=t_sqrt), bounds.bernstein_threshold(sd, t=t_ln)
        p_sqrt, p_ln = float(gchisq.sf(x_sqrt, w=sd**2)), float(gchisq.sf(x_ln, w=sd**2))
        ok &= math.isclose(t_sqrt**2, math.log(n), rel_tol=1e-12) and n * p_sqrt <= 1.0 and n * p_ln < 0.1 * n * p_sqrt
        worst_sqrt, worst_ln = max(worst_sqrt, n * p_sqrt), max(worst_ln, n * p_ln)
        radius_ratio.append(x_ln / x_sqrt)
    admissible = {"sqrt": 0, "ln": 0}
    for d in D_VALUES:
        for alpha in ALPHAS:
            sig = experiments.zipf_sigmas(d, alpha=alpha)
            tmax = bounds.bernstein_t_max(np.sqrt(sig / sig.sum()))
            for n in N_VALUES:
                admissible["sqrt"] += math.sqrt(math.log(n)) <= tmax
                admissible["ln"] += math.log(n) <= tmax
    return Section6(bool(ok), cases, worst_sqrt, worst_ln, tuple(radius_ratio), MappingProxyType(admissible),
                    theorem4_grid().n_holds)


# ---------------------------------------------------------------------------------------
# section 4d
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lemma42Numeric(Finding):
    """Lemma 4.2 against the exact tail in 13 configurations, over its admissible range of t."""

    rows: Mapping[str, tuple[Any, ...]]
    curves: Mapping[tuple[str, int, float], tuple[np.ndarray, np.ndarray, np.ndarray]]  #: key -> (t, exact, bound)
    summary: Mapping[tuple[str, int, float], tuple[float, float, float]]  #: key -> (t_max, bound/exact, x_t/quantile)
    all_ok: bool
    smallest: float  #: the smallest equal-weights tail checked against scipy
    limit05: float  #: sqrt(2 zeta(2)) / 6, t_max's limit for Zipf with alpha = 0.5

    GLUE = MappingProxyType({"lemma42-long-bound-min": "long_bound_min", "lemma42-long-bound-max": "long_bound_max",
                             "lemma42-long-radius-min": "long_radius_min",
                             "lemma42-long-radius-max": "long_radius_max"})

    long = property(lambda self: [v for v in self.summary.values() if v[0] > 0.5])
    long_bound_min = property(lambda self: float(min(v[1] for v in self.long)))
    long_bound_max = property(lambda self: float(max(v[1] for v in self.long)))
    long_radius_min = property(lambda self: float(min(v[2] for v in self.long)))
    long_radius_max = property(lambda self: float(max(v[2] for v in self.long)))

    @property
    def ok(self) -> bool:
        return self.all_ok

    @property
    def evidence(self) -> str:
        return (f"largest exact / bound {max(self.rows['max exact / bound']):.4f}; equal weights agree with scipy's "
                f"chi-square down to the tail {readable(self.smallest)}; Zipf with $\\alpha$ = 0.5: $t_{{\\max}}$ = "
                f"{self.summary[('Zipf', 1000, 0.5)][0]:.4f} at $d$ = 1000, below the limit "
                f"$\\sqrt{{2\\zeta(2)}}/6$ = {self.limit05:.4f}.")

    def table(self) -> Table:
        return table(dict(self.rows), formats={r"$t_{\max}$": "{:.4f}", "max exact / bound": "{:.4f}",
                                               "bound / exact": "{:.4g}", "$x_t$ / quantile": "{:.4f}"},
                     caption=r"Lemma 4.2 against the exact tail: largest ratio over 25 values of $t$, and at "
                             "$t = t_{\\max}$ the bound over the exact tail and the threshold over the exact quantile.",
                     label="ch4-tab-lemma42-numeric")


def lemma42_numeric() -> Lemma42Numeric:
    """Lemma 4.2's bound (egmlib.bounds) against the exact tail (egmlib.gchisq; scipy's chi-square for
    equal weights) at 25 values of t in [0, t_max], for equal and Zipf sigmas at d = 10, 100, 1000."""
    configs = [("equal", 10, 0.0), ("equal", 100, 0.0), ("equal", 1000, 0.0),
               ("Zipf", 10, 0.5), ("Zipf", 10, 1.0), ("Zipf", 10, 2.0),
               ("Zipf", 100, 0.1), ("Zipf", 100, 1.0), ("Zipf", 100, 5.0),
               ("Zipf", 1000, 0.1), ("Zipf", 1000, 0.5), ("Zipf", 1000, 1.0), ("Zipf", 1000, 5.0)]
    all_ok, curves, summary, smallest = True, {}, {}, 1.0
    rows: dict[str, list[Any]] = {k: [] for k in ("$\\sigma$", "$d$", r"$\alpha$", r"$t_{\max}$", "max exact / bound",
                                                  "bound / exact", "$x_t$ / quantile")}
    for kind, d, alpha in configs:
        sig = experiments.zipf_sigmas(d, alpha=alpha)
        w = sig**2
        tmax = bounds.bernstein_t_max(sig)
        ts = np.linspace(0.0, tmax, 25)
        xt = np.array([bounds.bernstein_threshold(sig, t=t) for t in ts])
        exact = np.asarray(gchisq.sf(xt, w=w))
        bound = np.array([bounds.bernstein_tail_bound(sig, t=t) for t in ts])
        if kind == "equal":
            all_ok &= bool(np.allclose(exact, stats.chi2.sf(xt / w[0], d), rtol=1e-9, atol=0))
            smallest = min(smallest, float(exact[-1]))
        q_exact = float(gchisq.isf(bound[-1], w=w))
        all_ok &= bool(np.all(exact < bound))
        curves[(kind, d, alpha)] = (ts, exact, bound)
        summary[(kind, d, alpha)] = (tmax, bound[-1] / exact[-1], xt[-1] / q_exact)
        for key, val in zip(rows, (kind, d, "" if kind == "equal" else f"{alpha:g}", tmax,
                                   np.max(exact / bound), bound[-1] / exact[-1], xt[-1] / q_exact), strict=True):
            rows[key].append(val)
    limit05 = math.sqrt(2 * zeta(2.0)) / 6  # sum_i i^(-4 alpha) -> zeta(2) at alpha = 0.5
    all_ok &= summary[("Zipf", 1000, 0.5)][0] < limit05
    return Lemma42Numeric(MappingProxyType({k: tuple(v) for k, v in rows.items()}), MappingProxyType(curves),
                          MappingProxyType(summary), bool(all_ok), smallest, limit05)


@dataclass(frozen=True)
class OutsideCondition(Finding):
    """Theorem 4's formula where its condition fails: its C^2 over the exact C_t^2."""

    grid: Theorem4Grid
    ln_star: float  #: ln n from which on the one-coordinate formula is below the exact radius
    after: bool  #: and stays below up to ln n = 500

    GLUE = MappingProxyType({"thm4-outside-count": "n_outside", "thm4-below": "n_below",
                             "thm4-below-1e3": "below_1e3", "thm4-below-1e6": "below_1e6", "thm4-worst": "worst",
                             "thm4-one-coordinate-n": "one_coordinate_n"})

    ratio = property(lambda self: {k: g.bound.ct2_bound / g.ct2 for k, g in self.grid.points.items()})
    below = property(lambda self: [k for k, r in self.ratio.items() if r < 1])
    outside = property(lambda self: [k for k, g in self.grid.points.items() if not g.bound.holds])
    limits = property(lambda self: {n: (math.sqrt(8 * math.log(n)) + 1) / stats.chi2.isf(1 / n, 1) for n in N_VALUES})
    below_by_n = property(lambda self: {n: sum(k[2] == n for k in self.below) for n in N_VALUES})
    n_outside = property(lambda self: len(self.outside))
    n_below = property(lambda self: len(self.below))
    below_1e3 = property(lambda self: int(self.below_by_n[1000]))
    below_1e6 = property(lambda self: int(self.below_by_n[10**6]))
    worst = property(lambda self: float(min(self.ratio.values())))
    one_coordinate_n = property(lambda self: float(math.exp(self.ln_star)))

    @property
    def ok(self) -> bool:
        ratio, below, lim = self.ratio, self.below, self.limits
        upper = all(ratio[(d, a2, n)] < 1 for (d, a, n) in below for a2 in ALPHAS if a2 >= a)
        limit_ok = all(math.isclose(ratio[(d, 100, n)], lim[n], rel_tol=1e-9) for d in D_VALUES for n in N_VALUES)
        return (all(not self.grid.points[k].bound.holds for k in below) and upper and limit_ok and self.after
                and self.below_by_n[100] == 0 and math.isclose(min(ratio.values()), lim[10**6], rel_tol=1e-6))

    @property
    def evidence(self) -> str:
        b = self.below_by_n
        return (f"below at {b[100]}, {b[1000]}, {b[10**6]} of 36 points for "
                f"$n$ = $10^2$, $10^3$, $10^6$; one-coordinate limits "
                + ", ".join(f"{self.limits[n]:.4f}" for n in N_VALUES) + f"; smallest ratio {self.worst:.4f}.")


def outside_condition() -> OutsideCondition:
    """Theorem 4's formula outside its condition on Figure 2's grid: below the exact C_t^2 at many points,
    and, with one dominant coordinate, for every n beyond a threshold (brentq on the closed forms)."""
    gap_fn = lambda ln: math.sqrt(8 * ln) + 1 - stats.chi2.isf(math.exp(-ln), 1)  # noqa: E731  (ln = ln n)
    ln_star = optimize.brentq(gap_fn, math.log(2), math.log(1e6), xtol=1e-14)
    after = all(gap_fn(ln) < 0 for ln in np.linspace(ln_star + 1e-6, 500, 2000))
    return OutsideCondition(theorem4_grid(), float(ln_star), bool(after))


@dataclass(frozen=True)
class LaurentMassart(Finding):
    """Proposition 4.A: the Laurent-Massart bound on C_t^2 at every point of Figure 2."""

    grid: Theorem4Grid
    lm: Mapping[tuple[int, float, int], float]  #: the bound on C_t^2
    steps_ok: bool  #: the proof's steps (egmlib.symbolic.laurent_massart_steps)
    tail_ok: bool  #: 50 random tail checks
    err_ok: bool  #: the error bound above the exact error everywhere
    beats: bool  #: below Theorem 4's bound where that applies
    one_coord: float  #: the closed form for one dominant coordinate at the largest ratio
    equal_w: float  #: the closed form for equal weights at the smallest ratio

    GLUE = MappingProxyType({"lm-ratio-min": "ratio_min", "lm-ratio-max": "ratio_max"})

    lm_ratio = property(lambda self: np.array([self.lm[k] / self.grid.points[k].ct2 for k in self.grid.points]))
    ratio_min = property(lambda self: float(self.lm_ratio.min()))
    ratio_max = property(lambda self: float(self.lm_ratio.max()))
    k_min = property(lambda self: list(self.grid.points)[int(np.argmin(self.lm_ratio))])
    k_max = property(lambda self: [k for k, r in zip(self.grid.points, self.lm_ratio, strict=True)
                                   if r > self.lm_ratio.max() * (1 - 1e-9)][0])

    @property
    def ok(self) -> bool:
        r = self.lm_ratio
        return bool(self.steps_ok and self.tail_ok and np.all(r >= 1) and self.err_ok and self.beats
                    and abs(r.max() / self.one_coord - 1) < 1e-9 and self.k_min[1] == min(ALPHAS)
                    and abs(r.min() / self.equal_w - 1) < 0.01)

    @property
    def evidence(self) -> str:
        k_min, (_, a_hi, n_hi) = self.k_min, self.k_max
        return (f"bound / exact $C_t^2$ from {self.ratio_min:.4f} (at $d$ = {k_min[0]}, $\\alpha$ = {k_min[1]:g}, "
                f"$n$ = $10^{round(math.log10(k_min[2]))}$; equal weights, $\\chi^2_{{{k_min[0]}}}$: "
                f"{self.equal_w:.4f}) to {self.ratio_max:.4f} (at $\\alpha$ = {a_hi:g}, $n = "
                f"10^{round(math.log10(n_hi))}$; one coordinate, $\\chi^2_1$: {self.one_coord:.4f}); proof steps "
                "and 50 random tail checks verified.")

    @property
    def useful_ok(self) -> bool:
        """Everywhere a bound, within 2.2 of the exact radius, where Theorem 4 covers fewer than 10 points."""
        return bool(np.all(self.lm_ratio >= 1)) and self.ratio_max < 2.2 and len(self.grid.inside) < 10

    @property
    def useful_evidence(self) -> str:
        return f"bound / exact from {self.ratio_min:.4f} to {self.ratio_max:.4f} at all {self.lm_ratio.size} points."

    def table(self) -> Table:
        inside = self.grid.inside
        return table({"$d$": [k[0] for k, _ in inside], r"$\alpha$": [k[1] for k, _ in inside],
                      "$n$": [f"$10^{round(math.log10(k[2]))}$" for k, _ in inside],
                      "exact $C_t^2$": [g.ct2 for _, g in inside],
                      "Proposition 4.A": [self.lm[k] / g.ct2 for k, g in inside],
                      "Theorem 4": [g.bound.ct2_bound / g.ct2 for _, g in inside]},
                     formats={r"$\alpha$": "{:g}", "exact $C_t^2$": "{:.5f}", "Proposition 4.A": "{:.4f}",
                              "Theorem 4": "{:.4f}"},
                     caption="Where Theorem 4 applies: the two bounds on $C_t^2$ over its exact value.",
                     label="ch4-tab-two-bounds")


def laurent_massart() -> LaurentMassart:
    """Proposition 4.A (Laurent and Massart 2000; egmlib.bounds.laurent_massart_ct2_bound) at every point of
    Figure 2, against the exact C_t^2, Theorem 4 and the closed forms at its two ends."""
    grid = theorem4_grid()
    steps = symbolic.laurent_massart_steps()
    rng = np.random.default_rng(2000)
    tail_ok = True
    for _ in range(10):
        wr = rng.lognormal(0.0, 1.5, int(rng.integers(1, 30)))
        for t_ in (0.05, 0.5, 2.0, 10.0, 30.0):
            tail_ok &= float(gchisq.sf(bounds.laurent_massart_threshold(wr, t=t_), w=wr)) <= math.exp(-t_)
    lm = {k: bounds.laurent_massart_ct2_bound(g.sigma, n=k[2]) for k, g in grid.points.items()}
    err_ok = all(bounds.algorithm3_noise_bound(g.sigma, n=k[2]) >= g.exact_error * (1 - 1e-12)
                 for k, g in grid.points.items())
    beats = all(bounds.algorithm3_noise_bound(g.sigma, n=k[2]) < g.bound.bound for k, g in grid.inside)
    found = LaurentMassart(grid, MappingProxyType(lm), bool(steps.verified), bool(tail_ok), err_ok, beats, 1.0, 1.0)
    # independent routes for the two ends: one dominant coordinate (chi-square with 1 degree of freedom) and equal
    # weights (chi-square with d degrees of freedom), from scipy.stats, with Proposition 4.A's bound in closed form
    n_hi = found.k_max[2]
    one_coord = (1 + 2 * math.sqrt(math.log(n_hi)) + 2 * math.log(n_hi)) / stats.chi2.isf(1.0 / n_hi, 1)
    d_lo, _, n_lo = found.k_min
    L_lo = math.log(n_lo)
    equal_w = (1 + 2 * math.sqrt(L_lo / d_lo) + 2 * L_lo / d_lo) / (stats.chi2.isf(1.0 / n_lo, d_lo) / d_lo)
    return LaurentMassart(grid, MappingProxyType(lm), bool(steps.verified), bool(tail_ok), err_ok, beats,
                          float(one_coord), float(equal_w))
