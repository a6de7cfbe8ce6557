"""Beyond the report: the steps of the Laurent-Massart bound and the report's printed steps.

Private module of :mod:`egmlib.symbolic`: the algebra of the error bound of Algorithm 3
for every n, and the report's eqs. (12)-(16) as printed.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ._common import _is_zero
from ._problems import LagrangeProblem, _check_problem


@dataclass(frozen=True)
class LaurentMassartSteps:
    r"""The algebra behind :func:`egmlib.bounds.algorithm3_noise_bound`, each a sympy check.

    ``log_mgf_series``: :math:`-\tfrac12\log(1-2u) - u = \sum_{k\ge2}2^{k-1}u^k/k` and
    :math:`u^2/(1-2u) = \sum_{k\ge2}2^{k-2}u^k` for :math:`|u| < 1/2` (sympy sums both series);
    ``coefficients``: :math:`2^{k-1}/k \le 2^{k-2}` for every integer :math:`k \ge 2` (the
    ratio is :math:`2/k`), hence :math:`\log\mathbb E e^{u(Z^2-1)} \le u^2/(1-2u)` on
    :math:`0 \le u < 1/2`; ``chernoff``: for a log-MGF bound :math:`vs^2/(2(1-cs))`, the point
    :math:`s^* = a/(v + ca)` with :math:`a = \sqrt{2vx}` lies in :math:`(0, 1/c)` and gives the
    exponent :math:`s^*(a + cx) - v{s^*}^2/(2(1 - cs^*)) = x` exactly, so
    :math:`P(\cdot \ge \sqrt{2vx} + cx) \le e^{-x}`; with :math:`v = 2\sum_jw_j^2`,
    :math:`c = 2\max_jw_j` this is Laurent and Massart's threshold; ``radius``: at
    :math:`w_j = \sigma_j/S` and :math:`x = \ln n` the threshold is
    :math:`1 + (2\sqrt{\ln n\sum_j\sigma_j^2} + 2\sigma_*\ln n)/S` (symbolic ``d``);
    ``error``: times :math:`4\sigma_{opt}^2\sum_jb_j^{-2} = 4\sigma_{opt}^2S^2` it is
    :math:`4\sigma_{opt}^2S(S + 2\sqrt{\ln n\sum\sigma^2} + 2\sigma_*\ln n)`;
    ``beats_theorem4``: under :math:`\ln n \le \sum\sigma^2/(18\sigma_*^2)`,
    :math:`2\sigma_*\ln n \le (2/\sqrt{18})\sqrt{\ln n\sum\sigma^2}` and
    :math:`2 + 2/\sqrt{18} < \sqrt8`.
    """

    log_mgf_series: bool
    coefficients: bool
    chernoff: bool
    radius: bool
    error: bool
    beats_theorem4: bool

    @property
    def verified(self) -> bool:
        """All steps checked."""
        return all((self.log_mgf_series, self.coefficients, self.chernoff, self.radius,
                    self.error, self.beats_theorem4))


def laurent_massart_steps() -> LaurentMassartSteps:
    r"""Check the steps of the error bound for Algorithm 3 valid for every ``n`` (sympy).

    See :class:`LaurentMassartSteps`; the result is stated in
    :func:`egmlib.bounds.algorithm3_noise_bound` and proved in the book's findings
    (Laurent and Massart 2000, Lemma 1; Boucheron, Lugosi and Massart 2013, Section 2.4).

    Examples
    --------
    >>> laurent_massart_steps().verified
    True
    """
    u = sp.Symbol("u", positive=True)
    k = sp.Symbol("k", integer=True, positive=True)
    lhs_series = sp.Sum(2 ** (k - 1) * u**k / k, (k, 2, sp.oo)).doit()
    rhs_series = sp.Sum(2 ** (k - 2) * u**k, (k, 2, sp.oo)).doit()
    # sympy returns Piecewise results with their convergence condition |2u| < 1
    cond = {u: sp.Rational(1, 5)}
    lhs_closed = -sp.log(1 - 2 * u) / 2 - u
    rhs_closed = u**2 / (1 - 2 * u)
    series_ok = all(
        abs(sp.N((expr - closed).subs(cond), 30)) < 1e-25
        for expr, closed in ((sp.piecewise_fold(lhs_series), lhs_closed),
                             (sp.piecewise_fold(rhs_series), rhs_closed)))
    kk = sp.Symbol("kk", integer=True, positive=True)          # k = kk + 1 >= 2
    ratio = sp.simplify((2 ** kk / (kk + 1)) / 2 ** (kk - 1))  # 2^(k-1)/k over 2^(k-2)
    coeff_ok = (_is_zero(ratio - 2 / (kk + 1))
                and bool(sp.simplify(2 / (kk + 1) - 1).is_nonpositive))
    v, c, x = sp.symbols("v c x", positive=True)
    a = sp.sqrt(2 * v * x)
    s_star = a / (v + c * a)
    exponent = s_star * (a + c * x) - v * s_star**2 / (2 * (1 - c * s_star))
    chernoff_ok = (_is_zero(exponent - x) and _is_zero(1 - c * s_star - v / (v + c * a)))
    # the radius and the error for a symbolic dimension
    d = sp.Symbol("d", integer=True, positive=True)
    i = sp.Symbol("i", integer=True, positive=True)
    sg = sp.IndexedBase("sigma", positive=True)
    n_, so, sstar = sp.symbols("n sigma_opt sigma_star", positive=True)
    S = sp.Sum(sg[i], (i, 1, d))
    P2 = sp.Sum(sg[i] ** 2, (i, 1, d))
    w = sg[i] / S
    sum_w = sp.simplify(sp.Sum(w, (i, 1, d)))
    sum_w2 = sp.simplify(sp.Sum(w**2, (i, 1, d)))
    L = sp.log(n_)
    threshold = sum_w + 2 * sp.sqrt(L * sum_w2) + 2 * (sstar / S) * L
    radius_claim = 1 + (2 * sp.sqrt(L * P2) + 2 * sstar * L) / S
    radius_ok = _is_zero(threshold - radius_claim)
    error = 4 * so**2 * radius_claim * S**2
    error_ok = _is_zero(error - 4 * so**2 * S * (S + 2 * sp.sqrt(L * P2) + 2 * sstar * L))
    # under Theorem 4's condition ln n <= P2 / (18 sigma_*^2): sigma_* ln n <= sqrt(ln n P2 / 18)
    Ls, P2s = sp.symbols("L P2", positive=True)
    at_edge = sp.simplify((sstar * Ls).subs(Ls, P2s / (18 * sstar**2))
                          - sp.sqrt(Ls * P2s / 18).subs(Ls, P2s / (18 * sstar**2)))
    monotone = sp.simplify(sp.diff(sstar * Ls / sp.sqrt(Ls * P2s / 18), Ls)).is_positive
    constant_ok = bool(2 + 2 / sp.sqrt(18) < sp.sqrt(8))
    beats = at_edge == 0 and bool(monotone) and constant_ok
    return LaurentMassartSteps(bool(series_ok), bool(coeff_ok), bool(chernoff_ok),
                               bool(radius_ok), bool(error_ok), bool(beats))


@dataclass(frozen=True)
class PrintedSteps:
    r"""The report's eqs. (12), (14), (15) and (16) as printed (:func:`report_printed_steps`).

    ``eq12``: :math:`b_j = \sqrt s/(\lambda^{1/4}\sqrt{\sigma_j})` for each :math:`j`;
    ``eq14``: the constraint after substitution, left side minus right side,
    :math:`\sum_j\sigma_j^2\,s/(\sqrt\lambda\sigma_j) - 1`; ``eq15``:
    :math:`\lambda = (s\sum_j\sigma_j)^2` (from :math:`s\sum_j\sigma_j = \sqrt\lambda`);
    ``eq16``: :math:`b_j = 1/(\sqrt{\sigma_j}\sqrt{\sum_i\sigma_i})` for each :math:`j`.
    """

    eq12: tuple[sp.Expr, ...]
    eq14: sp.Expr
    eq15: sp.Expr
    eq16: tuple[sp.Expr, ...]


def report_printed_steps(problem: LagrangeProblem) -> PrintedSteps:
    r"""The report's eqs. (12), (14), (15) and (16) as printed, for comparison with a solve.

    For Lemma 4.1 (``problem.name == "lemma4.1"``), with :math:`s = \sigma_{\varepsilon,\delta}`,
    the steps of :class:`PrintedSteps`, in the problem's symbols. Compare with
    :func:`solve_stationary_point`'s ``steps["b_of_lambda"]``,
    ``steps["constraint_in_lambda"]``, ``multiplier`` and ``b``.

    Examples
    --------
    >>> import sympy as sp
    >>> from egmlib.symbolic import lemma41_problem, solve_stationary_point
    >>> P = lemma41_problem(2)
    >>> pt, printed = solve_stationary_point(P), report_printed_steps(P)
    >>> all(sp.simplify(a - b) == 0 for a, b in zip(pt.steps["b_of_lambda"], printed.eq12, strict=True))
    True
    >>> sp.simplify(pt.steps["constraint_in_lambda"] - printed.eq14)
    0
    """
    problem = _check_problem(problem)
    if problem.name != "lemma4.1":
        raise ValueError(f"problem must be Lemma 4.1's (lemma41_problem), got problem.name={problem.name!r}")
    s, lam, sig = problem.scale, problem.multiplier, problem.params
    total = sp.Add(*sig)
    return PrintedSteps(
        eq12=tuple(sp.sqrt(s) / (lam ** sp.Rational(1, 4) * sp.sqrt(x)) for x in sig),
        eq14=sp.Add(*[x**2 * (s / (sp.sqrt(lam) * x)) for x in sig]) - 1,
        eq15=(s * total) ** 2,
        eq16=tuple(1 / (sp.sqrt(x) * sp.sqrt(total)) for x in sig),
    )
