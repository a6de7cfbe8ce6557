r"""Findings of section 4b (the report's Lemma 4.1 and eqs. (11)-(16)): the scaling, its derivation and its minimum.

The symbolic checks run egmlib.symbolic's constructions (sympy) and return a
:class:`~egmbook.findings.theorem4.SymbolicCheck`; :func:`fixed_radius` measures, with the exact
radius of egmlib.gchisq, what Lemma 4.1's scaling loses when the radius depends on b.
:func:`induction_cases`, :func:`expansion_cases` and :func:`arrowhead_instances` are appendix A's
checks of the report's induction, eqs. (26)-(27), and of the arrowhead determinant (A.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import sympy as sp
from scipy import optimize

from egmbook.display import Table, table
from egmbook.findings import Finding
from egmbook.findings.theorem4 import SymbolicCheck
from egmlib import gchisq, symbolic
from egmlib.validation import check_count

__all__ = ["FixedRadius", "fixed_radius", "lagrangian", "eq11_index", "eq12_14", "stationary_point", "Minors",
           "GlobalMinimum",
           "general_d", "theorem3_link", "hessian_entries", "minors", "minors_general", "global_minimum",
           "induction_terms", "InductionCases", "induction_cases", "ExpansionCases", "expansion_cases",
           "ArrowheadInstances", "arrowhead_instances"]


@dataclass(frozen=True)
class FixedRadius(Finding):
    """Lemma 4.1's scaling against the best scaling when the radius C depends on b (d = 2)."""

    cases: tuple[tuple[str, int, float, float, float], ...]  #: sigma, n, error ratio, cos^2 at Lemma 4.1, best

    GLUE = MappingProxyType({"fixed-radius-min": "gain_min", "fixed-radius-max": "gain_max"})

    gains = property(lambda self: [c[2] for c in self.cases])
    gain_min = property(lambda self: float(min(self.gains)))
    gain_max = property(lambda self: float(max(self.gains)))

    @property
    def ok(self) -> bool:
        return min(self.gains) > 1.0

    @property
    def evidence(self) -> str:
        return "error at Lemma 4.1's $b$ / minimum: " + ", ".join(f"{g:.4f}" for g in self.gains) + "."

    def table(self) -> Table:
        c = self.cases
        return table({r"$\sigma$": [x[0] for x in c], "$n$": [f"$10^{{{round(np.log10(x[1]))}}}$" for x in c],
                      "error at Lemma 4.1 / minimum": [x[2] for x in c],
                      r"$\cos^2\theta$, Lemma 4.1": [x[3] for x in c], r"$\cos^2\theta$, best": [x[4] for x in c]},
                     formats={"error at Lemma 4.1 / minimum": "{:.4f}", r"$\cos^2\theta$, Lemma 4.1": "{:.4f}",
                              r"$\cos^2\theta$, best": "{:.4f}"},
                     caption="Lemma 4.1 with the radius depending on $b$ ($d = 2$): the noise error at Lemma 4.1's "
                             "scaling over its minimum, and where each lies.", label="ch4-tab-fixed-radius")


def fixed_radius() -> FixedRadius:
    """Lemma 4.1 with the radius depending on b: for d = 2 the noise error C(b)^2 sum sigma_j^2/w_j over the
    unit circle b = (cos, sin), minimised (scipy), against its value at Lemma 4.1's scaling."""
    cases = []
    for sig in (np.array([1.0, 0.5]), np.array([1.0, 0.1])):
        for n in (100, 10**6):
            def actual(th: float, sig: np.ndarray = sig, n: int = n) -> float:
                w = np.array([np.cos(th) ** 2, np.sin(th) ** 2])
                return float(gchisq.isf(1.0 / n, w=w)) * (sig[0] ** 2 / w[0] + sig[1] ** 2 / w[1])
            th41 = np.arccos(np.sqrt(sig[0] / sig.sum()))
            best = optimize.minimize_scalar(actual, bounds=(1e-3, np.pi / 2 - 1e-3), method="bounded",
                                            options={"xatol": 1e-7})
            cases.append((f"({sig[0]:g}, {sig[1]:g})", n, actual(th41) / best.fun, float(np.cos(th41) ** 2),
                          float(np.cos(best.x) ** 2)))
    return FixedRadius(tuple(cases))


def lagrangian() -> SymbolicCheck:
    """Eqs. (11) and (13): sympy's derivatives of Lemma 4.1's Lagrangian (d = 3) and the positive multiplier."""
    P = symbolic.lemma41_problem(3)
    s, lam = P.scale, P.multiplier
    eqs = symbolic.stationarity_system(P)
    ok11 = all(sp.simplify(e - (-2 * s**2 * bj**-3 + 2 * lam * x**2 * bj)) == 0
               for e, bj, x in zip(eqs, P.b, P.params, strict=False))
    ok13 = sp.expand(eqs[-1] - (sum((x * bj) ** 2 for x, bj in zip(P.params, P.b, strict=True)) - 1)) == 0
    lams = symbolic.multiplier_at_stationarity(P)
    return SymbolicCheck(bool(ok11 and ok13) and all(bool(m.is_positive) for m in lams),
                         f"$d = 3$: $\\lambda$ from $\\partial\\mathcal L/\\partial b_1 = 0$ is ${sp.latex(lams[0])}$, "
                         "positive for positive parameters.")


def eq11_index() -> SymbolicCheck:
    """Eq. (11) at the stationary point (d = 2): with one index it holds, with the printed mix of i and j not."""
    P2 = symbolic.lemma41_problem(2)
    pt2 = symbolic.solve_stationary_point(P2)
    at: dict[Any, Any] = dict(zip(P2.b, pt2.b, strict=True))
    at[P2.multiplier] = pt2.multiplier
    (b1, b2), (s1, _) = P2.b, P2.params
    as_printed = sp.simplify((P2.multiplier * s1**2 * b2 - P2.scale**2 * b1**-3).subs(at))
    as_meant = sp.simplify((P2.multiplier * s1**2 * b1 - P2.scale**2 * b1**-3).subs(at))
    return SymbolicCheck(bool(as_meant == 0 and as_printed != 0),
                         f"$d = 2$, $i = 1$, $j = 2$: $\\lambda\\sigma_1^2b_2 - s^2b_1^{{-3}} = "
                         f"{sp.latex(sp.factor(as_printed))}$ at the stationary point.")


def _general_sum(g: Any) -> Any:
    i_ = sp.Symbol("i", integer=True, positive=True)
    return sp.Sum(g.params[i_], (i_, 1, g.d))


def eq12_14() -> SymbolicCheck:
    """Eqs. (12) and (14): solving the stationarity conditions for b_j > 0 and substituting into the
    constraint, for d = 1..4 and a symbolic d."""
    same = []
    for d in range(1, 5):
        Pd = symbolic.lemma41_problem(d)
        pt, printed = symbolic.solve_stationary_point(Pd), symbolic.report_printed_steps(Pd)
        same.append(all(sp.simplify(a - b) == 0 for a, b in zip(pt.steps["b_of_lambda"], printed.eq12, strict=True))
                    and sp.simplify(pt.steps["constraint_in_lambda"] - printed.eq14) == 0)
    g = symbolic.general_stationary_point(kind="lemma4.1")
    lam_g = sp.Symbol("lambda", positive=True)
    eq12_g = sp.sqrt(g.scale) / (lam_g ** sp.Rational(1, 4) * sp.sqrt(g.params[g.j]))
    eq14_g = g.scale * _general_sum(g) / sp.sqrt(lam_g) - 1
    general = sp.simplify(g.b_of_lambda - eq12_g) == 0 and sp.simplify(g.constraint_in_lambda - eq14_g) == 0
    return SymbolicCheck(bool(all(same) and general),
                         f"symbolic $d$: $b_j(\\lambda) = {sp.latex(g.b_of_lambda)}$, constraint "
                         f"${sp.latex(g.constraint_in_lambda)} = 0$.")


def stationary_point() -> SymbolicCheck:
    """Lemma 4.1 and eqs. (15)-(16): the unique stationary point and its value for d = 1..4."""
    ok, residuals = [], []
    for d in range(1, 5):
        Pd = symbolic.lemma41_problem(d)
        got, want = symbolic.solve_stationary_point(Pd), symbolic.expected_stationary_point(Pd)
        ok.append(all(sp.simplify(u - v) == 0 for u, v in zip(got.b, want.b, strict=True))
                  and sp.simplify(got.multiplier - want.multiplier) == 0
                  and sp.simplify(got.value - want.value) == 0)
        if got.residuals is None:  # only the expected point, not the solved one, comes without them
            raise ValueError(f"symbolic.solve_stationary_point returned no residuals for d = {d}")
        residuals.append(all(r == 0 for r in got.residuals))
    pt3 = symbolic.solve_stationary_point(symbolic.lemma41_problem(3))
    return SymbolicCheck(all(ok) and all(residuals),
                         f"$d = 3$: $\\lambda = {sp.latex(pt3.multiplier)}$, $b_1 = {sp.latex(pt3.b[0])}$, "
                         f"objective ${sp.latex(pt3.value)}$; residuals zero.")


def general_d() -> SymbolicCheck:
    """Lemma 4.1 and eqs. (11)-(16) for a symbolic dimension d."""
    g = symbolic.general_stationary_point(kind="lemma4.1")
    S_g = _general_sum(g)
    ok = (sp.simplify(g.b - 1 / sp.sqrt(g.params[g.j] * S_g)) == 0
          and sp.simplify(g.multiplier - g.scale**2 * S_g**2) == 0 and g.residual_b == 0
          and g.residual_constraint == 0)
    return SymbolicCheck(bool(ok), f"$\\partial\\mathcal L/\\partial b_j = {sp.latex(g.stationarity)}$; "
                                   f"$b_j = {sp.latex(g.b)}$; minimum ${sp.latex(g.value)}$.")


def theorem3_link() -> SymbolicCheck:
    """Theorem 3's optimum, and Lemma 4.1 as Theorem 3 with Delta = sigma under b' = sigma * b (d = 3 and
    symbolic d)."""
    P = symbolic.lemma41_problem(3)
    pt3 = symbolic.solve_stationary_point(P)
    P3 = symbolic.theorem3_problem(3)
    sol3 = symbolic.solve_stationary_point(P3)
    to_lemma: dict[Any, Any] = dict(zip(P3.params, P.params, strict=True))
    to_lemma[P3.scale] = P.scale
    subst = {bp: x * bj for bp, x, bj in zip(P3.b, P.params, P.b, strict=True)}  # b'_j = sigma_j b_j
    same_obj = sp.simplify(P3.objective.subs(to_lemma).subs(subst) - P.objective) == 0
    same_con = sp.simplify(P3.constraint.subs(subst) - P.constraint) == 0
    same_pt = all(sp.simplify(bp.subs(to_lemma) / x - bj) == 0 for bp, x, bj in zip(sol3.b, P.params, pt3.b,
                                                                                     strict=True))
    g3 = symbolic.general_stationary_point(kind="theorem3")
    return SymbolicCheck(bool(same_obj and same_con and same_pt) and g3.residual_b == 0
                         and g3.residual_constraint == 0,
                         f"symbolic $d$: $b_j = {sp.latex(g3.b)}$, minimum ${sp.latex(g3.value)}$.")


def hessian_entries() -> SymbolicCheck:
    """Lemma 4.1's bordered Hessian (d = 3): its zeros, and its border and diagonal at the stationary point."""
    P = symbolic.lemma41_problem(3)
    s = P.scale
    H = symbolic.bordered_hessian(P)
    zero_rest = all(H[i, j] == 0 for i in range(1, 4) for j in range(1, 4) if i != j) and H[0, 0] == 0
    Hs = symbolic.bordered_hessian(P, point=symbolic.solve_stationary_point(P))
    S3 = sum(P.params)
    entries_ok = all(sp.simplify(Hs[0, j] - 2 * x ** sp.Rational(3, 2) / sp.sqrt(S3)) == 0
                     and sp.simplify(Hs[j, j] - 8 * s**2 * S3**2 * x**2) == 0
                     for j, x in enumerate(P.params, start=1))
    return SymbolicCheck(bool(zero_rest and entries_ok),
                         f"$d = 3$: $\\bar H_{{01}} = {sp.latex(H[0, 1])}$, $\\bar H_{{11}} = {sp.latex(H[1, 1])}$; "
                         f"at the point $\\bar H_{{01}} = {sp.latex(Hs[0, 1])}$, "
                         f"$\\bar H_{{11}} = {sp.latex(Hs[1, 1])}$.")


@dataclass(frozen=True)
class Minors(Finding):
    """Lemma 4.1's leading principal minors against the closed form (4.E), d = 2..6."""

    results: tuple[tuple[int, int, bool, bool], ...]  #: d, r, equals the closed form, negative
    example: str  #: the minor of order 4 at d = 3, in LaTeX

    @property
    def ok(self) -> bool:
        return all(x[2] and x[3] for x in self.results)

    @property
    def evidence(self) -> str:
        return f"{len(self.results)} minors; e.g. $d = 3$: $|\\bar H_4| = {self.example}$."


def minors() -> Minors:
    """Lemma 4.1: every leading principal minor of the bordered Hessian at the stationary point equals the
    closed form (4.E) (egmlib.symbolic) and is negative, d = 2..6."""
    results, h4 = [], None
    for d in range(2, 7):
        Pd = symbolic.lemma41_problem(d)
        Hd = symbolic.bordered_hessian(Pd, point=symbolic.expected_stationary_point(Pd))
        for r, det in symbolic.leading_principal_minors(Hd).items():
            cf = symbolic.lemma41_minor_closed_form(r, sigma=Pd.params, s=Pd.scale)
            same_cf = sp.factor(det) == sp.factor(cf) or sp.simplify(det - cf) == 0
            results.append((d, r, bool(same_cf), bool(cf.is_negative)))
            if (d, r) == (3, 4):
                h4 = det
    return Minors(tuple(results), sp.latex(sp.factor(h4)))


def minors_general() -> SymbolicCheck:
    """Lemma 4.1: the closed form (4.E) for a symbolic number m of coordinates, and the arrowhead determinant
    proved by induction (egmlib.symbolic)."""
    _, from_arrowhead, expected, equal = symbolic.general_minor_closed_form(kind="lemma4.1")
    proof = symbolic.prove_arrowhead_determinant(max_explicit=5)
    return SymbolicCheck(bool(equal) and bool(proof.verified),
                         f"arrowhead formula: ${sp.latex(from_arrowhead)}$; closed form: ${sp.latex(expected)}$.")


@dataclass(frozen=True)
class GlobalMinimum(Finding):
    """Lemma 4.1's stationary point is the global minimum: convexity, Lagrange's identity, random b."""

    certificates: bool  #: convexity in u = b^2 and the Cauchy-Schwarz certificate, d = 2..5, both problems
    smallest: float  #: the smallest sum b^-2 / S^2 over 100 000 random feasible b (d = 6)

    @property
    def ok(self) -> bool:
        return bool(self.certificates) and self.smallest >= 1 - 1e-12

    @property
    def evidence(self) -> str:
        return (f"convexity and Lagrange's identity verified for $d$ = 2..5; 100 000 random feasible $b$ "
                f"($d = 6$): smallest $\\sum_j b_j^{{-2}}/S^2$ = {self.smallest:.6f} (1 at the optimum).")


def global_minimum() -> GlobalMinimum:
    """Lemma 4.1: strict convexity in u_j = b_j^2 and Lagrange's identity (egmlib.symbolic) for d = 2..5, and
    100 000 random points of the constraint eq. (10) at d = 6."""
    ok = True
    for d in range(2, 6):
        for make in (symbolic.lemma41_problem, symbolic.theorem3_problem):
            Pd = make(d)
            ok &= symbolic.squared_variable_form(Pd).convex
            ok &= symbolic.cauchy_schwarz_certificate(Pd).holds
    rng = np.random.default_rng(41)
    sig = rng.uniform(0.05, 5.0, size=6)
    b = rng.uniform(0.01, 10.0, size=(100_000, 6))
    b /= np.sqrt(np.sum((sig * b) ** 2, axis=1, keepdims=True))  # onto eq. (10)
    ratio = np.sum(b**-2, axis=1) / sig.sum() ** 2
    return GlobalMinimum(bool(ok), float(ratio.min()))




def _is_zero(expr: Any) -> bool:
    return bool(sp.expand(expr) == 0)


def induction_terms(matrix: Any, order: int) -> tuple[Any, Any, Any, Any]:
    r""":math:`|\bar H_r|`, :math:`|\bar H_{r-1}|`, :math:`|B_{r-1}|` and :math:`|\tilde B_{r-1}|` for the
    leading block of size ``order`` (:math:`r`) of a sympy matrix: :math:`B` deletes the block's first row and
    last column, :math:`\tilde B` then :math:`B`'s last row and first column (eqs. (26)-(27))."""
    if not isinstance(matrix, sp.MatrixBase):
        raise TypeError(f"matrix must be a sympy Matrix, got matrix of type {type(matrix).__name__}")
    if not matrix.is_square:
        raise ValueError(f"matrix must be square, got matrix of shape {matrix.shape}")
    order = check_count("order", order, minimum=2, maximum=matrix.rows)
    block = matrix[:order, :order]
    previous = block[: order - 1, : order - 1].det(method="berkowitz")
    border = block[1:, : order - 1]
    inner = border[: order - 2, 1:]
    inner_det = inner.det(method="berkowitz") if order > 2 else sp.Integer(1)
    return block.det(method="berkowitz"), previous, border.det(method="berkowitz"), inner_det


@dataclass(frozen=True)
class InductionCases(Finding):
    r"""The report's induction step, :math:`|\bar H_r| = a_{r-1}|\bar H_{r-1}| - c_{r-1}^2\prod_{l<r-1}a_l`, both
    terms negative."""

    passed: int  #: cases where every identity and sign holds
    cases: int  #: r = 2..6 for a generic arrowhead and for Lemma 4.1's matrix at d = 5

    @property
    def ok(self) -> bool:
        return self.passed == self.cases

    @property
    def evidence(self) -> str:
        return (f"{self.passed} of {self.cases} cases: $r = 2, \\dots, 6$, generic entries and Lemma 4.1's "
                "matrix with $d = 5$")


def induction_cases() -> InductionCases:
    """Appendix A: eq. (26), the cofactor identities behind it and eq. (27)'s negative term, for r = 2..6, on an
    arrowhead with symbolic entries (diagonal positive) and on Lemma 4.1's bordered Hessian at d = 5."""
    diagonal = sp.symbols("a1:6", positive=True)
    edge = sp.symbols("c1:6", nonzero=True, real=True)
    problem = symbolic.lemma41_problem(5)
    total = sp.Symbol("S", positive=True)  # S = sigma_1 + ... + sigma_5 as one symbol
    lemma = symbolic.bordered_hessian(problem, point=symbolic.expected_stationary_point(problem))
    passed = cases = 0
    for matrix in (symbolic.arrowhead_matrix(diagonal, c=edge), lemma.subs(sum(problem.params), total)):
        for order in range(2, 7):
            minor, previous, border_det, inner_det = induction_terms(matrix, order)
            c_last, a_last = matrix[0, order - 1], matrix[order - 1, order - 1]
            product = sp.Mul(*[matrix[index, index] for index in range(1, order - 1)])
            term = sp.expand((-1) ** (1 + order) * c_last * border_det)
            cases += 1
            passed += (_is_zero(minor - (a_last * previous + (-1) ** (1 + order) * c_last * border_det))  # (26)
                       and _is_zero(border_det - (-1) ** order * matrix[order - 1, 0] * inner_det)
                       and _is_zero(inner_det - product)
                       and _is_zero(term + c_last**2 * product)  # (27)
                       and bool(sp.factor(term).is_negative)
                       and (order == 2 or bool(sp.factor(a_last * previous).is_negative)))
    return InductionCases(passed, cases)


@dataclass(frozen=True)
class ExpansionCases(Finding):
    """Lemma 4.1's bordered Hessian at the stationary point, d = 2..5: its zero entries and eq. (26) with and
    without the factor H_{1,r} that eq. (27) drops."""

    zeros: tuple[int, ...]  #: zero entries for d = 2..5
    nonpositive: int  #: entries that are neither zero nor proved positive
    with_factor: int  #: minors (r = 3..d+1) for which eq. (26) holds with its factor
    without_factor: int  #: and without it
    cases: int  #: minors examined

    @property
    def positive_ok(self) -> bool:
        """The zero entries are the corner and those off the arrow (1 + d(d - 1)); all the others are positive."""
        return self.zeros == tuple(1 + d * (d - 1) for d in range(2, 6)) and self.nonpositive == 0

    @property
    def factor_ok(self) -> bool:
        """Eq. (26) holds with its factor in every case, and without it in none."""
        return self.with_factor == self.cases and self.without_factor == 0

    @property
    def ok(self) -> bool:
        return self.positive_ok and self.factor_ok


def expansion_cases() -> ExpansionCases:
    """Appendix A: count the zero and the non-positive entries of Lemma 4.1's bordered Hessian at the stationary
    point, d = 2..5, and test eq. (26) with and without its factor H_{1,r} for r = 3..d+1."""
    total = sp.Symbol("S", positive=True)
    zeros, nonpositive, with_factor, without_factor, cases = [], 0, 0, 0, 0
    for d_value in range(2, 6):
        problem = symbolic.lemma41_problem(d_value)
        point = symbolic.expected_stationary_point(problem)
        matrix = symbolic.bordered_hessian(problem, point=point).subs(sum(problem.params), total)
        entries = [(row, col) for row in range(d_value + 1) for col in range(d_value + 1)]
        zero_entries = [(row, col) for row, col in entries if sp.simplify(matrix[row, col]) == 0]
        zeros.append(len(zero_entries))
        nonpositive += sum(not bool(sp.simplify(matrix[row, col]).is_positive)
                           for row, col in entries if (row, col) not in zero_entries)
        for order in range(3, d_value + 2):
            minor, previous, border_det, _inner = induction_terms(matrix, order)
            diag_term = matrix[order - 1, order - 1] * previous
            cases += 1
            with_factor += _is_zero(minor - (diag_term + (-1) ** (1 + order) * matrix[0, order - 1] * border_det))
            without_factor += _is_zero(minor - (diag_term + (-1) ** (1 + order) * border_det))
    return ExpansionCases(tuple(zeros), nonpositive, with_factor, without_factor, cases)


@dataclass(frozen=True)
class ArrowheadInstances(Finding):
    """The closed form (A.3) of the arrowhead determinant against the determinant computed directly."""

    exact_ok: int  #: exact rational instances that agree
    exact_cases: int  #: 3 random instances for each m = 1..12 (zeros and negative entries included)
    float_ok: int  #: floating-point sizes whose sign and log-determinant agree (within 1e-8)
    float_cases: int  #: 40 random sizes from 13 to 200

    @property
    def ok(self) -> bool:
        return self.exact_ok == self.exact_cases and self.float_ok == self.float_cases


def arrowhead_instances(seed: int = 31) -> ArrowheadInstances:
    """Appendix A (Theorem A.1): det [[0, c^T], [c, diag(a)]] = -sum_j c_j^2 prod_{l != j} a_l, exactly on random
    rationals for m = 1..12 (Bareiss) and in floating point (slogdet) for random sizes up to 200."""
    generator = np.random.default_rng(check_count("seed", seed, minimum=0))

    def rationals(size: int) -> list[Any]:
        pairs = zip(generator.integers(-9, 10, size), generator.integers(1, 9, size), strict=True)
        return [sp.Rational(int(numer), int(denom)) for numer, denom in pairs]

    exact_cases = exact_ok = 0
    for size in range(1, 13):
        for _repeat in range(3):
            diagonal, edge = rationals(size), rationals(size)
            direct = symbolic.arrowhead_matrix(diagonal, c=edge).det(method="bareiss")
            closed = -sum(edge[skip] ** 2 * sp.Mul(*[diagonal[index] for index in range(size) if index != skip])
                          for skip in range(size))
            exact_cases += 1
            exact_ok += direct == closed
    float_cases = float_ok = 0
    for size in generator.integers(13, 201, 40):
        diag_f = generator.uniform(0.5, 2.0, size) * generator.choice([-1.0, 1.0], size)
        edge_f = generator.normal(size=size)
        matrix = np.zeros((size + 1, size + 1))
        matrix[0, 1:], matrix[1:, 0], matrix[1:, 1:] = edge_f, edge_f, np.diag(diag_f)
        sign, logdet = np.linalg.slogdet(matrix)
        quotient = float(np.sum(edge_f**2 / diag_f))
        float_cases += 1
        expected_log = np.sum(np.log(np.abs(diag_f))) + np.log(abs(quotient))
        float_ok += sign == -np.prod(np.sign(diag_f)) * np.sign(quotient) and abs(logdet - expected_log) < 1e-8
    return ArrowheadInstances(exact_ok, exact_cases, float_ok, float_cases)
