"""Symbolic (sympy) verification of the optimisation results of the report.

The report (Poulsen, 2023) derives its scalings with Lagrange multipliers and checks the
second-order condition with a bordered Hessian. This module rebuilds those objects in
sympy so that every step can be re-derived, not just re-substituted:

* **Lemma 4.1** (eqs. (9)-(16)): minimise ``s^2 sum_j b_j^-2`` subject to
  ``sum_j (sigma_j b_j)^2 = 1``, where ``s = sigma_{eps,delta} = 2 C sigma_opt``.
  Stationary point ``b_j = 1 / sqrt(sigma_j sum_i sigma_i)`` (eq. (16)),
  ``lambda = s^2 (sum_i sigma_i)^2`` (eq. (15)).
* **Theorem 3** (the Elliptical Gaussian Mechanism of Pagh and Lebeda): minimise
  ``sigma_opt^2 sum_j Delta_j^2 / b_j^2`` subject to ``sum_j b_j^2 = 1``.
  Stationary point ``b_j = sqrt(Delta_j / sum_i Delta_i)``, minimum
  ``sigma_opt^2 ||Delta||_1^2`` (eq. (6)).
* **Appendix A**: the bordered Hessian, its leading principal minors at the stationary
  point, and the closed form of the determinant of an "arrowhead" matrix
  ``[[0, c^T], [c, diag(a)]]``, namely ``-sum_k c_k^2 prod_{l != k} a_l``.
  The sign test is the bordered-determinant criterion that the report cites as
  Theorem 7.12 of Magnus and Neudecker (2019): with one equality constraint, a
  stationary point of the Lagrangian is a strict local constrained minimum if the
  leading principal minors of the bordered Hessian of orders ``3, ..., d + 1`` are
  all negative (the report also lists order 2, which is ``-c_1^2 < 0`` always).
* **Global optimality**: in the variables ``u_j = b_j^2`` both problems minimise a
  strictly convex function over an affine constraint, so the stationary point is the
  unique global minimum; :func:`squared_variable_form` and
  :func:`cauchy_schwarz_certificate` give two sympy-checkable certificates.
* **Lemma 4.2** (proof): exact moments of a chi-square variable with one degree of
  freedom, ``E[Z^k] = (2k - 1)!!`` and the absolute central moments ``E|Z - 1|^k``.

Symbols are declared positive (``sigma_j, Delta_j, b_j, s, sigma_opt > 0``), as in the
report, which fixes ``b_j >= 0`` "to make calculations easier"; the multiplier is then
shown to be positive at every stationary point (:func:`multiplier_at_stationarity`).

sympy is an optional dependency of egmlib: ``pip install 'egmlib[symbolic]'`` (without it,
importing this module raises an ImportError that says so).

Indexing follows Appendix A: the bordered Hessian is ordered ``(lambda, b_1, ..., b_d)``
and ``H_r`` is its leading ``r x r`` block, ``r = 2, ..., d + 1`` (``H_r`` involves the
first ``r - 1`` scalings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

try:
    import sympy as sp
    from sympy.simplify.simplify import product_simplify
except ImportError as exc:  # sympy is an optional dependency of egmlib
    raise ImportError(
        "egmlib.symbolic needs sympy, an optional dependency of egmlib: install it with the "
        "'symbolic' extra, pip install 'egmlib[symbolic]'") from exc

from .validation import (
    as_real_array,
    check_bool,
    check_choice,
    check_count,
    check_symbolic_scalar,
    check_symbolic_vector,
)

__all__ = [
    "LagrangeProblem",
    "StationaryPoint",
    "GeneralSolution",
    "ArrowheadProof",
    "MinorClosedForm",
    "AppendixAMatrix",
    "SquaredVariableForm",
    "CauchySchwarzCertificate",
    "lemma41_problem",
    "theorem3_problem",
    "stationarity_system",
    "multiplier_at_stationarity",
    "solve_stationary_point",
    "expected_stationary_point",
    "general_stationary_point",
    "bordered_hessian",
    "leading_principal_minors",
    "arrowhead_matrix",
    "arrowhead_det_closed_form",
    "prove_arrowhead_determinant",
    "lemma41_minor_closed_form",
    "theorem3_minor_closed_form",
    "general_minor_closed_form",
    "report_appendix_a_matrix",
    "squared_variable_form",
    "cauchy_schwarz_certificate",
    "chi2_moment",
    "chi2_abs_central_moment",
    "GeneralBorderedHessian",
    "ArrowheadRecurrenceProof",
    "GeneralMinors",
    "LaurentMassartSteps",
    "PrintedSteps",
    "general_bordered_hessian",
    "prove_arrowhead_recurrence",
    "general_minors",
    "laurent_massart_steps",
    "report_printed_steps",
]

_HALF = sp.Rational(1, 2)
_KINDS = ("lemma4.1", "theorem3")
#: Largest dimension of the symbolic problems (sympy's cost grows fast with d), and the
#: report's statements are checked for small d and for symbolic d.
_D_MAX = 200


def _is_zero(expr: sp.Expr) -> bool:
    """True when sympy proves ``expr == 0`` (``simplify`` then exact comparison)."""
    return sp.simplify(expr) == 0


# --------------------------------------------------------------------------------------
# The two constrained problems for a concrete dimension d
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LagrangeProblem:
    """An equality-constrained minimisation ``min objective s.t. constraint = 0``.

    Built by :func:`lemma41_problem` (eqs. (9), (10)) and :func:`theorem3_problem`.
    """

    name: str  #: ``"lemma4.1"`` or ``"theorem3"``
    b: tuple[sp.Symbol, ...]  #: the scalings ``b_1, ..., b_d`` (positive symbols)
    #: ``lambda`` (declared positive; see :func:`multiplier_at_stationarity`)
    multiplier: sp.Symbol
    #: ``sigma_1, ..., sigma_d`` (Lemma 4.1) or ``Delta_1, ..., Delta_d`` (Theorem 3)
    params: tuple[sp.Symbol, ...]
    #: ``s = sigma_{eps,delta} = 2 C sigma_opt`` (Lemma 4.1) or ``sigma_opt`` (Theorem 3)
    scale: sp.Symbol
    objective: sp.Expr  #: the expression to minimise
    constraint: sp.Expr  #: the constraint, ``constraint = 0``
    lagrangian: sp.Expr  #: ``objective + multiplier * constraint``

    @property
    def d(self) -> int:
        """Number of coordinates."""
        return len(self.b)


def _symbols(prefix: str, d: int) -> tuple[sp.Symbol, ...]:
    return tuple(sp.symbols(f"{prefix}_1:{d + 1}", positive=True))


def _check_problem(problem: Any) -> LagrangeProblem:
    if not isinstance(problem, LagrangeProblem):
        raise TypeError(
            "problem must be a LagrangeProblem (from lemma41_problem or theorem3_problem), "
            f"got problem of type {type(problem).__name__}"
        )
    return problem


def lemma41_problem(d: int) -> LagrangeProblem:
    """Lemma 4.1's Lagrangian for ``d`` coordinates (report eqs. (9), (10)).

    ``L(b, lambda) = s^2 sum_j b_j^-2 + lambda (sum_j (sigma_j b_j)^2 - 1)`` with
    ``s = sigma_{eps,delta} = 2 C sigma_opt``: the noise error of Algorithm 3
    (eq. (9), up to the constant factor) under the relaxed constraint (10).

    >>> P = lemma41_problem(2)
    >>> P.lagrangian
    lambda*(b_1**2*sigma_1**2 + b_2**2*sigma_2**2 - 1) + s**2/b_2**2 + s**2/b_1**2
    """
    d = check_count("d", d, minimum=1, maximum=_D_MAX)
    b = _symbols("b", d)
    sigma = _symbols("sigma", d)
    s, lam = sp.symbols("s lambda", positive=True)
    objective = sp.Add(*[s**2 * bj**-2 for bj in b])
    constraint = sp.Add(*[(sj * bj) ** 2 for sj, bj in zip(sigma, b, strict=True)]) - 1
    return LagrangeProblem(
        "lemma4.1", b, lam, sigma, s, objective, constraint, objective + lam * constraint
    )


def theorem3_problem(d: int) -> LagrangeProblem:
    """Theorem 3's Lagrangian (the Elliptical Gaussian Mechanism) for ``d`` coordinates.

    Algorithm 2 adds ``N(0, (sigma_opt Delta_j / b_j)^2)`` noise to coordinate ``j``;
    its expected squared error ``sigma_opt^2 sum_j Delta_j^2 / b_j^2`` is minimised
    subject to ``||b||^2 = 1``:
    ``L(b, lambda) = sigma_opt^2 sum_j Delta_j^2 b_j^-2 + lambda (sum_j b_j^2 - 1)``.
    """
    d = check_count("d", d, minimum=1, maximum=_D_MAX)
    b = _symbols("b", d)
    delta = _symbols("Delta", d)
    sigma_opt = sp.Symbol("sigma_opt", positive=True)
    lam = sp.Symbol("lambda", positive=True)
    objective = sp.Add(*[sigma_opt**2 * Dj**2 * bj**-2 for Dj, bj in zip(delta, b, strict=True)])
    constraint = sp.Add(*[bj**2 for bj in b]) - 1
    return LagrangeProblem(
        "theorem3", b, lam, delta, sigma_opt, objective, constraint,
        objective + lam * constraint,
    )


def stationarity_system(problem: LagrangeProblem) -> tuple[sp.Expr, ...]:
    """The equations ``dL/db_1 = ... = dL/db_d = dL/dlambda = 0`` (left-hand sides).

    For Lemma 4.1, ``dL/db_j = -2 s^2 b_j^-3 + 2 lambda sigma_j^2 b_j`` (eq. (11)) and
    ``dL/dlambda = sum_j (sigma_j b_j)^2 - 1`` (eq. (13)).
    """
    problem = _check_problem(problem)
    L = problem.lagrangian
    return tuple(sp.diff(L, v) for v in (*problem.b, problem.multiplier))


def multiplier_at_stationarity(problem: LagrangeProblem) -> tuple[sp.Expr, ...]:
    """Solve each ``dL/db_j = 0`` for the multiplier, treating it as an unknown real.

    ``dL/db_j`` is affine in ``lambda``, so each equation has exactly one solution,
    e.g. ``lambda = s^2 / (sigma_j^2 b_j^4)`` for Lemma 4.1. Every one of them is
    positive for positive ``b_j``: no stationary point with ``b > 0`` has
    ``lambda <= 0``, which justifies declaring ``lambda`` positive when solving
    (eq. (12) takes a fourth root of ``s^2 / (lambda sigma_j^2)``).

    Returns the tuple of the ``d`` expressions.
    """
    problem = _check_problem(problem)
    lam_real = sp.Symbol("lambda_real", real=True)
    out = []
    for bj in problem.b:
        eq = sp.diff(problem.lagrangian, bj).subs(problem.multiplier, lam_real)
        roots = sp.solve(eq, lam_real)
        if len(roots) != 1:
            raise RuntimeError(f"expected one multiplier from dL/d{bj} = 0, got {roots}")
        out.append(sp.simplify(roots[0]))
    return tuple(out)


@dataclass(frozen=True)
class StationaryPoint:
    """A stationary point of a :class:`LagrangeProblem`.

    ``b`` and ``multiplier`` are the solved values; ``value`` is the objective there;
    ``residuals`` are the stationarity equations evaluated at the point (all ``0``);
    ``steps`` records the intermediate solutions (``b_j`` as a function of lambda,
    eq. (12), the constraint after substitution, eq. (14)).
    """

    b: tuple[sp.Expr, ...]
    multiplier: sp.Expr
    value: sp.Expr
    residuals: tuple[sp.Expr, ...] | None
    steps: Mapping[str, Any]

    def as_dict(self, problem: LagrangeProblem) -> dict[sp.Symbol, sp.Expr]:
        """Substitution dictionary ``{b_j: ..., lambda: ...}``."""
        problem = _check_problem(problem)
        return {**dict(zip(problem.b, self.b, strict=True)), problem.multiplier: self.multiplier}


def solve_stationary_point(problem: LagrangeProblem) -> StationaryPoint:
    """Solve the stationarity system along the report's route (eqs. (11)-(16)).

    1. ``dL/db_j = 0`` is solved for ``b_j > 0`` (eqs. (11)-(12)): sympy solves the
       equation of a generic coordinate (``b_1``'s, with ``b_1`` and its parameter
       replaced by fresh symbols) and returns its single positive root; every
       coordinate's equation is checked to be that equation with its own ``b_j`` and
       parameter, so its root ``b_j(lambda)`` is the generic root with its parameter;
    2. these are substituted into ``dL/dlambda = 0`` (eqs. (13)-(14)), which is solved
       for ``lambda > 0`` (eq. (15)), with the sum ``S`` of the parameters carried as
       one positive symbol (so that sympy's cost does not grow with ``d``);
    3. ``lambda`` is substituted back (eq. (16)), the whole system is evaluated at the
       point and simplified, and ``S`` is written out: every residual is zero.

    Every root comes from a ``sympy.solve`` call, so the point is derived, not assumed;
    ``d = 200`` takes a few seconds (``benchmarks/symbolic_stationary.py``). Raises
    ``RuntimeError`` if a step does not have exactly one admissible root (it always
    has: uniqueness is part of what this verifies).
    """
    problem = _check_problem(problem)
    lam = problem.multiplier
    system = stationarity_system(problem)
    b_of_lam = _coordinate_roots(problem, system[:-1])
    constraint_in_lam = sp.simplify(system[-1].xreplace(dict(zip(problem.b, b_of_lam, strict=True))))
    total = sp.Add(*problem.params)
    S = sp.Dummy("S", positive=True)
    lam_roots = sp.solve(constraint_in_lam.subs(sp.expand(problem.scale * total), problem.scale * S), lam)
    if len(lam_roots) != 1:
        raise RuntimeError(f"expected one positive multiplier, got {lam_roots}")
    lam_star = sp.factor(lam_roots[0])
    b_star = tuple(sp.simplify(e.xreplace({lam: lam_star})) for e in b_of_lam)
    point = {**dict(zip(problem.b, b_star, strict=True)), lam: lam_star}
    back = {S: total}
    residuals = tuple(sp.simplify(sp.simplify(e.xreplace(point)).xreplace(back)) for e in system)
    if any(r != 0 for r in residuals):
        raise RuntimeError(f"stationarity residuals do not vanish: {residuals}")
    value = sp.factor_terms(problem.objective.xreplace(point)).xreplace(back)
    steps = {"b_of_lambda": b_of_lam, "constraint_in_lambda": constraint_in_lam}
    return StationaryPoint(tuple(e.xreplace(back) for e in b_star), lam_star.xreplace(back), value, residuals, steps)


def _coordinate_roots(problem: LagrangeProblem, equations: Sequence[sp.Expr]) -> tuple[sp.Expr, ...]:
    """``b_j(lambda)``, the positive root of each ``dL/db_j = 0`` (eq. (12)), from one
    ``sympy.solve`` of a generic coordinate's equation; RuntimeError if a coordinate's
    equation is not the generic one with its own symbols, or the root is not unique."""
    b, p = sp.Dummy("b", positive=True), sp.Dummy("p", positive=True)
    generic = equations[0].xreplace({problem.b[0]: b, problem.params[0]: p})
    roots = sp.solve(generic, b)
    if len(roots) != 1:
        raise RuntimeError(f"expected one positive root of dL/d{problem.b[0]} = 0, got {roots}")
    out = []
    for eq, bj, pj in zip(equations, problem.b, problem.params, strict=True):
        if eq != generic.xreplace({b: bj, p: pj}):
            raise RuntimeError(f"dL/d{bj} is not the equation of the other coordinates: {eq}")
        out.append(roots[0].xreplace({p: pj}))
    return tuple(out)


def expected_stationary_point(problem: LagrangeProblem) -> StationaryPoint:
    """The report's closed forms, for comparison with :func:`solve_stationary_point`.

    Lemma 4.1: ``b_j = 1/sqrt(sigma_j S)``, ``lambda = s^2 S^2`` (eqs. (15)-(16)),
    minimum ``s^2 S^2`` with ``S = sum_i sigma_i``. Theorem 3:
    ``b_j = sqrt(Delta_j / T)``, ``lambda = sigma_opt^2 T^2``, minimum
    ``sigma_opt^2 T^2`` (eq. (6)) with ``T = sum_i Delta_i``.
    The residuals are *not* recomputed here; they are returned as ``None``.
    """
    problem = _check_problem(problem)
    total = sp.Add(*problem.params)
    if problem.name == "lemma4.1":
        b = tuple(1 / sp.sqrt(p * total) for p in problem.params)
    elif problem.name == "theorem3":
        b = tuple(sp.sqrt(p / total) for p in problem.params)
    else:  # pragma: no cover - only the two constructors exist
        raise ValueError(f"problem.name must be 'lemma4.1' or 'theorem3', got {problem.name!r}")
    lam = problem.scale**2 * total**2
    return StationaryPoint(b, lam, lam, None, {})


# --------------------------------------------------------------------------------------
# General d: IndexedBase and symbolic sums
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneralSolution:
    """Stationary point for a *symbolic* dimension ``d`` (sympy ``IndexedBase``).

    ``stationarity`` is ``dL/db_j`` after sympy differentiated the symbolic sums (the
    Kronecker delta collapses for ``1 <= j <= d``); ``b_of_lambda`` its positive root
    (eq. (12)); ``constraint_in_lambda`` eq. (14); ``multiplier`` and ``b`` the solved
    values (eqs. (15)-(16)); ``value`` the minimum; ``residual_b`` and
    ``residual_constraint`` the stationarity equations at the point, simplified
    (both ``0``).
    """

    d: sp.Symbol
    j: sp.Symbol
    params: sp.IndexedBase
    scale: sp.Symbol
    lagrangian: sp.Expr
    stationarity: sp.Expr
    b_of_lambda: sp.Expr
    constraint_in_lambda: sp.Expr
    multiplier: sp.Expr
    b: sp.Expr
    value: sp.Expr
    residual_b: sp.Expr
    residual_constraint: sp.Expr


def general_stationary_point(*, kind: str = "lemma4.1") -> GeneralSolution:
    """Derive the stationary point for symbolic ``d`` (Lemma 4.1 or Theorem 3).

    The Lagrangian is written with ``Sum(..., (i, 1, d))`` over an ``IndexedBase``;
    sympy differentiates it with respect to ``b[j]`` (a Kronecker-delta sum, collapsed
    under ``1 <= j <= d``), solves for ``b[j] > 0``, substitutes into the constraint,
    which becomes ``s Sum(sigma[i]) / sqrt(lambda) - 1`` (eq. (14)), solves for
    ``lambda`` and back-substitutes. Valid for every ``d >= 1``.
    """
    kind = check_choice("kind", kind, _KINDS)
    d = sp.Symbol("d", integer=True, positive=True)
    i, j = sp.symbols("i j", integer=True, positive=True)
    b = sp.IndexedBase("b", positive=True)
    lam = sp.Symbol("lambda", positive=True)
    if kind == "lemma4.1":
        p = sp.IndexedBase("sigma", positive=True)
        scale = sp.Symbol("s", positive=True)
        objective = scale**2 * sp.Sum(b[i] ** -2, (i, 1, d))
        constraint = sp.Sum((p[i] * b[i]) ** 2, (i, 1, d)) - 1
    else:
        p = sp.IndexedBase("Delta", positive=True)
        scale = sp.Symbol("sigma_opt", positive=True)
        objective = scale**2 * sp.Sum(p[i] ** 2 * b[i] ** -2, (i, 1, d))
        constraint = sp.Sum(b[i] ** 2, (i, 1, d)) - 1
    L = objective + lam * constraint
    raw = sp.diff(L, b[j]).doit()
    stationarity = sp.simplify(sp.refine(sp.piecewise_fold(raw), sp.Q.le(j, d)))
    if stationarity.has(sp.Piecewise):
        raise RuntimeError(f"could not collapse the Kronecker delta: {stationarity}")
    roots = sp.solve(stationarity, b[j])
    if len(roots) != 1:
        raise RuntimeError(f"expected one positive root for b[j], got {roots}")
    b_of_lam = roots[0]
    b_i = b_of_lam.subs(j, i)
    constraint_in_lam = sp.simplify(constraint.xreplace({b[i]: b_i}))
    lam_roots = sp.solve(constraint_in_lam, lam)
    if len(lam_roots) != 1:
        raise RuntimeError(f"expected one positive multiplier, got {lam_roots}")
    lam_star = lam_roots[0]
    b_star = sp.simplify(b_of_lam.subs(lam, lam_star))
    value = sp.simplify(objective.xreplace({b[i]: b_star.subs(j, i)}))
    residual_b = sp.simplify(stationarity.subs(b[j], b_star).subs(lam, lam_star))
    residual_c = sp.simplify(constraint.xreplace({b[i]: b_star.subs(j, i)}))
    return GeneralSolution(
        d, j, p, scale, L, stationarity, b_of_lam, constraint_in_lam, lam_star, b_star,
        value, residual_b, residual_c,
    )


# --------------------------------------------------------------------------------------
# Bordered Hessian and its leading principal minors
# --------------------------------------------------------------------------------------


def bordered_hessian(
    problem: LagrangeProblem, *, point: Mapping[sp.Symbol, Any] | StationaryPoint | None = None
) -> sp.Matrix:
    """The bordered Hessian of the Lagrangian, ordered ``(lambda, b_1, ..., b_d)``.

    ``H[0, 0] = d^2L/dlambda^2 = 0``, ``H[0, j] = d^2L/(dlambda db_j)`` (the constraint
    gradient; ``2 sigma_j^2 b_j`` for Lemma 4.1) and the lower-right block is
    ``d^2L/db^2``, diagonal with ``6 s^2 b_j^-4 + 2 lambda sigma_j^2`` (Appendix A).
    With ``point`` (a :class:`StationaryPoint` or a substitution dict) the entries are
    evaluated there and simplified (Appendix A's matrix at eq. (16)).
    """
    problem = _check_problem(problem)
    H = sp.hessian(problem.lagrangian, (problem.multiplier, *problem.b))
    if point is None:
        return H
    if not isinstance(point, (StationaryPoint, Mapping)):
        raise TypeError(f"point must be a StationaryPoint or a mapping, got point of type {type(point).__name__}")
    subs = point.as_dict(problem) if isinstance(point, StationaryPoint) else dict(point)
    return H.subs(subs).applyfunc(sp.simplify)


def leading_principal_minors(H: sp.Matrix, *, orders: Iterable[int] | None = None) -> dict[int, sp.Expr]:
    """``{r: det(H[:r, :r])}`` for ``r`` in ``orders`` (default ``2, ..., n``), factored.

    In Appendix A's notation these are ``|H_r|``, ``r = 2, ..., d + 1``.
    """
    if not isinstance(H, sp.MatrixBase):
        raise TypeError(f"H must be a sympy Matrix, got H of type {type(H).__name__}")
    if H.rows != H.cols or H.rows < 1:
        raise ValueError(f"H must be a non-empty square matrix, got H of shape {H.shape}")
    n = H.shape[0]
    if orders is None:
        orders = range(2, n + 1)
    else:
        orders = as_real_array("orders", orders, ndim=1, nonempty=False).tolist()
    out = {}
    for r in orders:
        r = check_count("orders entry", r, minimum=1)
        if r > n:
            raise ValueError(f"orders entry must be <= {n} (the matrix size), got {r}")
        out[r] = sp.factor(H[:r, :r].det(method="berkowitz"))
    return out


def arrowhead_matrix(a: Sequence[Any], *, c: Sequence[Any]) -> sp.Matrix:
    """The matrix ``[[0, c^T], [c, diag(a)]]``, the shape of every bordered Hessian of Appendix A."""
    a, c = check_symbolic_vector("a", a), check_symbolic_vector("c", c)
    if len(a) != len(c) or not a:
        raise ValueError(
            f"a and c must be non-empty and of equal length, got len(a)={len(a)}, len(c)={len(c)}"
        )
    m = len(a)
    M = sp.zeros(m + 1, m + 1)
    for k in range(m):
        M[0, k + 1] = M[k + 1, 0] = c[k]
        M[k + 1, k + 1] = a[k]
    return M


def arrowhead_det_closed_form(a: Sequence[Any], *, c: Sequence[Any]) -> sp.Expr:
    """``det [[0, c^T], [c, diag(a)]] = -sum_k c_k^2 prod_{l != k} a_l`` (Appendix A).

    >>> a1, a2, c1, c2 = sp.symbols("a1 a2 c1 c2")
    >>> M = arrowhead_matrix([a1, a2], c=[c1, c2])
    >>> sp.expand(M.det() - arrowhead_det_closed_form([a1, a2], c=[c1, c2]))
    0
    """
    a, c = check_symbolic_vector("a", a), check_symbolic_vector("c", c)
    if len(a) != len(c) or not a:
        raise ValueError(
            f"a and c must be non-empty and of equal length, got len(a)={len(a)}, len(c)={len(c)}"
        )
    m = len(a)
    return -sp.Add(*[c[k] ** 2 * sp.Mul(*[a[i] for i in range(m) if i != k]) for k in range(m)])


@dataclass(frozen=True)
class ArrowheadProof:
    """What :func:`prove_arrowhead_determinant` verified (each flag a sympy check).

    ``closed_form`` is ``D_m = -P_m Sigma_m`` with ``P_m = Product(a[l], (l, 1, m))``
    and ``Sigma_m = Sum(c[k]^2 / a[k], (k, 1, m))`` for a symbolic ``m``;
    ``base_case``: ``D_1 = -c_1^2 = det [[0, c_1], [c_1, a_1]]``;
    ``inductive_step``: ``D_m = a_m D_{m-1} - c_m^2 P_{m-1}`` for symbolic ``m``
    (sympy peels the last factor of the Product and the last term of the Sum);
    ``cofactor_sign``: ``(-1)^m (-1)^(m-1) = -1`` for every integer ``m``, the sign
    of the second cofactor in the last-row expansion;
    ``expansion_sizes``: the sizes ``m`` for which the recurrence
    ``det A_m = a_m det A_{m-1} - c_m^2 prod_{l<m} a_l`` was checked by expanding
    generic symbolic determinants; ``statement`` says precisely what is proved.
    """

    m: sp.Symbol
    closed_form: sp.Expr
    base_case: bool
    inductive_step: bool
    cofactor_sign: bool
    expansion_sizes: tuple[int, ...]
    statement: str

    @property
    def verified(self) -> bool:
        """All checks passed."""
        return self.base_case and self.inductive_step and self.cofactor_sign and bool(
            self.expansion_sizes
        )


def prove_arrowhead_determinant(*, max_explicit: int = 6) -> ArrowheadProof:
    """Verify ``det [[0, c^T], [c, diag(a)]] = -(prod_l a_l) sum_k c_k^2 / a_k`` for all m.

    The proof is an induction on the size ``m`` (number of diagonal entries), the same
    route as Appendix A's proof of the sign pattern:

    * recurrence: expand ``det A_m`` along its last row, whose only nonzero entries
      are ``c_m`` (first column) and ``a_m`` (diagonal). The ``a_m`` cofactor is
      ``det A_{m-1}``. Deleting the last row and the first column leaves
      ``[[c_1 .. c_{m-1}, c_m], [diag(a_1..a_{m-1}), 0]]``; moving its first row to the
      bottom (``m - 1`` transpositions) makes it lower triangular, so its determinant
      is ``(-1)^(m-1) c_m prod_{l<m} a_l``, and with the cofactor sign ``(-1)^m`` the
      term is ``-c_m^2 prod_{l<m} a_l``. sympy checks the sign identity for symbolic
      integer ``m`` and the whole recurrence for ``m = 2, ..., max_explicit`` on generic
      symbols; the structural description of the minor is the argument for general m;
    * closed form: sympy checks that ``D_m = -P_m Sigma_m`` satisfies the base case and
      the recurrence for a *symbolic* ``m`` (``IndexedBase``, ``Sum``, ``Product``).

    Since the recurrence and ``D_1`` determine ``det A_m`` for every ``m``, the formula
    holds for all ``m >= 1`` and all ``a_l != 0``; multiplying out,
    ``det A_m = -sum_k c_k^2 prod_{l != k} a_l``, a polynomial identity that then holds
    for all real ``a`` by continuity.
    """
    max_explicit = check_count("max_explicit", max_explicit, minimum=2, maximum=10)
    m = sp.Symbol("m", integer=True, positive=True)
    k, ll = sp.symbols("k l", integer=True, positive=True)  # ll is the index l
    a = sp.IndexedBase("a", nonzero=True)
    c = sp.IndexedBase("c", real=True)

    def P(top: Any) -> sp.Expr:
        return sp.Product(a[ll], (ll, 1, top))

    def Sig(top: Any) -> sp.Expr:
        return sp.Sum(c[k] ** 2 / a[k], (k, 1, top))

    def D(top: Any) -> sp.Expr:
        return -P(top) * Sig(top)

    # base case m = 1
    base = _is_zero(D(1).doit() - sp.Matrix([[0, c[1]], [c[1], a[1]]]).det())
    # peel the last factor / term (sympy's product_simplify and sum_combine)
    prod_peel = _is_zero(
        product_simplify(sp.Mul(P(m - 1), sp.Product(a[ll], (ll, m, m)), evaluate=False)) - P(m)
    )
    sum_peel = _is_zero(Sig(m - 1) + sp.Sum(c[k] ** 2 / a[k], (k, m, m)) - Sig(m))
    last_factor = sp.Product(a[ll], (ll, m, m)).doit()
    last_term = sp.Sum(c[k] ** 2 / a[k], (k, m, m)).doit()
    # inductive step with the peeled forms (P_m = P_{m-1} a_m, Sigma_m = Sigma_{m-1} + c_m^2/a_m)
    Pm1, Sm1 = sp.symbols("P_prev Sigma_prev")
    Dm = -(Pm1 * last_factor) * (Sm1 + last_term)
    Dm1 = -Pm1 * Sm1
    step_algebra = _is_zero(Dm - (a[m] * Dm1 - c[m] ** 2 * Pm1))
    inductive = prod_peel and sum_peel and step_algebra
    # sign of the c_m cofactor
    sign = sp.powsimp((-1) ** m * (-1) ** (m - 1)) == -1
    # the recurrence itself on generic symbolic matrices
    sizes = []
    for mm in range(2, max_explicit + 1):
        A = sp.symbols(f"a1:{mm + 1}")
        C = sp.symbols(f"c1:{mm + 1}")
        big = arrowhead_matrix(A, c=C).det(method="berkowitz")
        small = arrowhead_matrix(A[:-1], c=C[:-1]).det(method="berkowitz")
        rec = A[-1] * small - C[-1] ** 2 * sp.Mul(*A[:-1])
        closed = arrowhead_det_closed_form(A, c=C)
        if sp.expand(big - rec) == 0 and sp.expand(big - closed) == 0:
            sizes.append(mm)
        else:  # pragma: no cover - would be a sympy or algebra error
            break
    statement = (
        "For every integer m >= 1, all nonzero a_1..a_m and all real c_1..c_m: "
        "det [[0, c^T], [c, diag(a)]] = -(prod_l a_l) * sum_k c_k^2/a_k "
        "= -sum_k c_k^2 prod_{l != k} a_l. sympy verified the base case m = 1, the "
        "inductive step for symbolic m, the cofactor sign for symbolic integer m, and the "
        f"last-row expansion explicitly for m = 2..{sizes[-1] if sizes else '-'}."
    )
    return ArrowheadProof(m, D(m), base, inductive, sign, tuple(sizes), statement)


def lemma41_minor_closed_form(r: int, *, sigma: Sequence[Any], s: Any) -> sp.Expr:
    """``|H_r|`` at Lemma 4.1's stationary point, in closed form (Appendix A, corrected).

    At ``b_j = 1/sqrt(sigma_j S)``, ``lambda = s^2 S^2`` (``S = sum_{i=1}^d sigma_i``)
    the border entries are ``c_j = 2 sigma_j^(3/2) / sqrt(S)`` and the diagonal entries
    ``a_j = 8 s^2 S^2 sigma_j^2``, so with ``m = r - 1``:
    ``|H_r| = -4 (8 s^2 S^2)^(m-1) (prod_{l<=m} sigma_l^2) (sum_{k<=m} sigma_k) / S < 0``.
    """
    r = check_count("r", r, minimum=2)
    sigma = check_symbolic_vector("sigma", sigma)
    s = check_symbolic_scalar("s", s)
    if r > len(sigma) + 1:
        raise ValueError(f"r must be <= d + 1 = {len(sigma) + 1} (d = len(sigma)), got r={r}")
    m = r - 1
    S = sp.Add(*sigma)
    return (
        -4 * (8 * s**2 * S**2) ** (m - 1)
        * sp.Mul(*[x**2 for x in sigma[:m]]) * sp.Add(*sigma[:m]) / S
    )


def theorem3_minor_closed_form(r: int, *, Delta: Sequence[Any], sigma_opt: Any) -> sp.Expr:
    """``|H_r|`` at Theorem 3's stationary point: ``-4 a^(m-1) (sum_{k<=m} Delta_k) / T``.

    Border ``c_j = 2 sqrt(Delta_j / T)``, diagonal ``a = 8 sigma_opt^2 T^2`` (the same for
    every ``j``), ``T = sum_i Delta_i``, ``m = r - 1`` (Appendix A's argument for Theorem 3).
    """
    r = check_count("r", r, minimum=2)
    Delta = check_symbolic_vector("Delta", Delta)
    sigma_opt = check_symbolic_scalar("sigma_opt", sigma_opt)
    if r > len(Delta) + 1:
        raise ValueError(f"r must be <= d + 1 = {len(Delta) + 1} (d = len(Delta)), got r={r}")
    m = r - 1
    T = sp.Add(*Delta)
    return -4 * (8 * sigma_opt**2 * T**2) ** (m - 1) * sp.Add(*Delta[:m]) / T


class MinorClosedForm(NamedTuple):
    """The minors ``|H_{m+1}|`` for a symbolic ``m`` (:func:`general_minor_closed_form`)."""

    m: sp.Symbol  #: the number of scalings in the leading block
    from_arrowhead: sp.Expr  #: the arrowhead formula at the stationary point
    expected: sp.Expr  #: the closed form of Appendix A (corrected)
    equal: bool  #: sympy proved the two equal


def general_minor_closed_form(*, kind: str = "lemma4.1") -> MinorClosedForm:
    """Closed-form minors of Appendix A for symbolic ``m`` from the arrowhead formula.

    Substitutes the stationary-point entries (see :func:`lemma41_minor_closed_form`)
    into ``-P_m Sigma_m`` with ``Sum``/``Product`` over ``k = 1..m`` and lets sympy
    simplify. ``S`` (or ``T``) is the sum over *all* ``d`` coordinates, a positive
    constant here.
    """
    kind = check_choice("kind", kind, _KINDS)
    m = sp.Symbol("m", integer=True, positive=True)
    k = sp.Symbol("k", integer=True, positive=True)
    tot = sp.Symbol("S" if kind == "lemma4.1" else "T", positive=True)
    if kind == "lemma4.1":
        p = sp.IndexedBase("sigma", positive=True)
        s = sp.Symbol("s", positive=True)
        a_k = 8 * s**2 * tot**2 * p[k] ** 2
        c_k = 2 * p[k] ** sp.Rational(3, 2) / sp.sqrt(tot)
        expected = (
            -4 * (8 * s**2 * tot**2) ** (m - 1)
            * sp.Product(p[k] ** 2, (k, 1, m)) * sp.Sum(p[k], (k, 1, m)) / tot
        )
    else:
        p = sp.IndexedBase("Delta", positive=True)
        s = sp.Symbol("sigma_opt", positive=True)
        a_k = 8 * s**2 * tot**2
        c_k = 2 * sp.sqrt(p[k] / tot)
        expected = -4 * (8 * s**2 * tot**2) ** (m - 1) * sp.Sum(p[k], (k, 1, m)) / tot
    from_arrowhead = -sp.Product(a_k, (k, 1, m)).doit() * sp.Sum(
        sp.simplify(c_k**2 / a_k), (k, 1, m)
    )
    equal = _is_zero(sp.powsimp(sp.expand_power_base(from_arrowhead / expected, force=True)) - 1)
    return MinorClosedForm(m, from_arrowhead, expected, equal)


class AppendixAMatrix(NamedTuple):
    """Appendix A's matrix as printed, with its symbols (:func:`report_appendix_a_matrix`)."""

    sigma: tuple[sp.Symbol, ...]  #: sigma_1, ..., sigma_d
    s: sp.Symbol  #: the noise scale s = 2 C sigma_opt
    H: sp.Matrix  #: the (d + 1) x (d + 1) matrix


def report_appendix_a_matrix(d: int, *, as_printed: bool = True) -> AppendixAMatrix:
    """Appendix A's matrix ``H_{d+1}`` *as the report prints it* (for comparison).

    Border entries ``2 sigma_j^(2/3) / sqrt(S)`` and diagonal entries
    ``2 s^2 S^2 (3 sigma_j^2 + 1)``. With ``as_printed=True`` the first *column* repeats
    ``sigma_1`` in its last row, as in the report; ``as_printed=False`` gives the
    symmetric matrix the report evidently intended.
    """
    d = check_count("d", d, minimum=1, maximum=_D_MAX)
    as_printed = check_bool("as_printed", as_printed)
    sigma = _symbols("sigma", d)
    s = sp.Symbol("s", positive=True)
    S = sp.Add(*sigma)
    c = [2 * x ** sp.Rational(2, 3) / sp.sqrt(S) for x in sigma]
    a = [2 * s**2 * S**2 * (3 * x**2 + 1) for x in sigma]
    H = arrowhead_matrix(a, c=c)
    if as_printed and d >= 2:
        H[d, 0] = c[0]
    return AppendixAMatrix(sigma, s, H)


# --------------------------------------------------------------------------------------
# Global optimality
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquaredVariableForm:
    """The problem rewritten in ``u_j = b_j^2 > 0``.

    ``objective`` is ``s^2 sum_j 1/u_j`` (Lemma 4.1) or ``sigma_opt^2 sum_j
    Delta_j^2/u_j`` (Theorem 3), ``constraint`` is affine in ``u``; ``hessian`` is the
    objective's Hessian in ``u`` (diagonal, entries ``2 s^2 / u_j^3``), ``convex`` is true
    when sympy proves every diagonal entry positive, every off-diagonal entry zero and
    every second derivative of the constraint zero.
    """

    u: tuple[sp.Symbol, ...]
    objective: sp.Expr
    constraint: sp.Expr
    hessian: sp.Matrix
    convex: bool


def squared_variable_form(problem: LagrangeProblem) -> SquaredVariableForm:
    """Rewrite in ``u_j = b_j^2``: a strictly convex objective on an affine constraint.

    With ``b_j > 0`` the map ``b_j -> u_j = b_j^2`` is a bijection onto ``u_j > 0``.
    A strictly convex function restricted to the convex set
    ``{u > 0 : constraint(u) = 0}`` has at most one minimiser, and any stationary point
    of its Lagrangian is that minimiser (the Lagrangian at the multiplier is convex in
    ``u`` and equals the objective on the constraint set). Hence the stationary point of
    eq. (16) is the unique *global* minimum, a stronger statement than the local
    second-order test of Appendix A.
    """
    problem = _check_problem(problem)
    u = _symbols("u", problem.d)
    back = {bj: sp.sqrt(uj) for bj, uj in zip(problem.b, u, strict=True)}
    obj = sp.expand(problem.objective.subs(back))
    con = sp.expand(problem.constraint.subs(back))
    H = sp.hessian(obj, u).applyfunc(sp.simplify)
    diag_pos = all(H[i, i].is_positive for i in range(problem.d))
    off_zero = all(H[i, k] == 0 for i in range(problem.d) for k in range(problem.d) if i != k)
    affine = all(e == 0 for e in sp.hessian(con, u))
    return SquaredVariableForm(u, obj, con, H, bool(diag_pos and off_zero and affine))


class CauchySchwarzCertificate(NamedTuple):
    """Lagrange's identity for one problem (:func:`cauchy_schwarz_certificate`)."""

    gap: sp.Expr  #: objective x constraint sum minus the stationary value
    sum_of_squares: sp.Expr  #: the sum of squares it equals
    holds: bool  #: sympy proved gap == sum_of_squares


def cauchy_schwarz_certificate(problem: LagrangeProblem) -> CauchySchwarzCertificate:
    """Lagrange's identity: a sum-of-squares proof that the stationary value is global.

    For Lemma 4.1, with ``x_j = 1/b_j`` and ``y_j = sigma_j b_j``:
    ``(sum_j b_j^-2)(sum_j sigma_j^2 b_j^2) - (sum_j sigma_j)^2
    = sum_{j<k} (sigma_k b_k / b_j - sigma_j b_j / b_k)^2 >= 0``,
    so on the constraint ``sum_j sigma_j^2 b_j^2 = 1`` the objective is at least
    ``s^2 (sum_j sigma_j)^2``, with equality iff ``b_j^2 sigma_j`` is constant, i.e. at
    eq. (16). For Theorem 3, ``x_j = Delta_j / b_j`` and ``y_j = b_j``.

    """
    problem = _check_problem(problem)
    b, p = problem.b, problem.params
    if problem.name == "lemma4.1":
        x = [1 / bj for bj in b]
        y = [pj * bj for pj, bj in zip(p, b, strict=True)]
    else:
        x = [pj / bj for pj, bj in zip(p, b, strict=True)]
        y = list(b)
    gap = sp.Add(*[t**2 for t in x]) * sp.Add(*[t**2 for t in y]) - sp.Add(
        *[xi * yi for xi, yi in zip(x, y, strict=True)]
    ) ** 2
    n = problem.d
    sos = sp.Add(
        *[(x[j] * y[k] - x[k] * y[j]) ** 2 for j in range(n) for k in range(j + 1, n)]
    )
    return CauchySchwarzCertificate(gap, sos, _is_zero(sp.expand(gap - sos)))


# --------------------------------------------------------------------------------------
# Moments used in the proof of Lemma 4.2
# --------------------------------------------------------------------------------------


def chi2_moment(k: int) -> sp.Integer:
    """``E[Z^k]`` for ``Z ~ chi^2_1``, from ``E[Z^k] = 2^k Gamma(k + 1/2) / sqrt(pi)``.

    Equals the double factorial ``(2k - 1)!! = 1 * 3 * ... * (2k - 1)`` (Lemma 4.2's
    proof calls these the values of the moment-generating function; they are the
    moments).

    >>> [chi2_moment(k) for k in range(5)]
    [1, 1, 3, 15, 105]
    """
    k = check_count("k", k, minimum=0, maximum=1000)
    return sp.Integer(sp.gammasimp(2**k * sp.gamma(k + _HALF) / sp.sqrt(sp.pi)))


def _chi2_truncated_moment(i: int) -> sp.Expr:
    """``E[Z^i ; Z < 1]`` for ``Z ~ chi^2_1``: ``2^i gamma_lower(i + 1/2, 1/2) / sqrt(pi)``."""
    return sp.expand_func(2**i * sp.lowergamma(i + _HALF, _HALF) / sp.sqrt(sp.pi))


def chi2_abs_central_moment(k: int) -> sp.Expr:
    """Exact ``E|Z - 1|^k`` for ``Z ~ chi^2_1`` (closed form in ``erf`` and ``exp``).

    For even ``k`` this is the central moment ``sum_i C(k, i) (-1)^(k-i) E[Z^i]``; for
    odd ``k`` the part below 1 is added twice with its sign flipped:
    ``E|Z-1|^k = E[(Z-1)^k] + 2 E[(1-Z)^k ; Z < 1]``, the truncated moments being
    lower incomplete gamma functions. For ``X ~ N(0, sigma^2)`` and
    ``Y = X^2 - sigma^2`` (Lemma 4.2), ``E|Y|^k = sigma^(2k) E|Z - 1|^k``.

    >>> chi2_abs_central_moment(2)
    2
    """
    k = check_count("k", k, minimum=0, maximum=100)
    central = sp.Add(*[sp.binomial(k, i) * (-1) ** (k - i) * chi2_moment(i) for i in range(k + 1)])
    if k % 2 == 0:
        return sp.Integer(central)
    below = sp.Add(*[sp.binomial(k, i) * (-1) ** i * _chi2_truncated_moment(i) for i in range(k + 1)])
    return sp.expand(central + 2 * below)


# --------------------------------------------------------------------------------------
# Appendix A for a symbolic dimension: entries derived, recurrence proved for every size
# --------------------------------------------------------------------------------------


def _collapse_deltas(expr: sp.Expr, d: sp.Symbol, indices: Sequence[sp.Symbol]) -> sp.Expr:
    """``doit`` a derivative of ``Sum(..., (i, 1, d))`` and collapse the Kronecker deltas.

    sympy returns ``Piecewise((term, (1 <= j) & (j <= d)), (0, True))``; the indices are
    declared positive, and ``j <= d`` is assumed (they index coordinates ``1..d``).
    """
    e = sp.piecewise_fold(expr.doit())
    for x in indices:
        e = sp.refine(e, sp.Q.le(x, d))
    e = sp.simplify(e)
    if e.has(sp.Piecewise):
        raise RuntimeError(f"could not collapse the Kronecker deltas in {e}")
    return e


@dataclass(frozen=True)
class GeneralBorderedHessian:
    r"""Appendix A's bordered Hessian for a symbolic dimension ``d`` (Lemma 4.1).

    Every entry is a second derivative, taken by sympy, of the Lagrangian written with
    ``Sum(..., (i, 1, d))`` over ``IndexedBase`` symbols, for generic coordinates ``j, k``:

    ``corner`` :math:`\partial^2\mathcal L/\partial\lambda^2`; ``border``
    :math:`\partial^2\mathcal L/\partial\lambda\,\partial b_j`; ``block``
    :math:`\partial^2\mathcal L/\partial b_j\,\partial b_k` (a multiple of
    ``KroneckerDelta(j, k)``: the block is diagonal); ``diagonal`` its value at ``k = j``.
    ``point`` is the stationary point of :func:`general_stationary_point` (derived there,
    not typed in); ``border_at_point`` and ``diagonal_at_point`` are the entries there,
    simplified; ``matches_closed_form`` says they equal
    :math:`c_j = 2\sigma_j^{3/2}/\sqrt S` and :math:`a_j = 8s^2S^2\sigma_j^2`
    (:math:`S = \sum_{i=1}^d\sigma_i`); ``positive`` that sympy proves both positive
    from :math:`\sigma_i, s > 0`.
    """

    d: sp.Symbol
    j: sp.Symbol
    k: sp.Symbol
    lagrangian: sp.Expr
    corner: sp.Expr
    border: sp.Expr
    block: sp.Expr
    diagonal: sp.Expr
    point: GeneralSolution
    border_at_point: sp.Expr
    diagonal_at_point: sp.Expr
    matches_closed_form: bool
    positive: bool


def general_bordered_hessian() -> GeneralBorderedHessian:
    r"""Derive Appendix A's matrix for symbolic ``d`` and evaluate it at Lemma 4.1's point.

    The Lagrangian :math:`s^2\sum_ib_i^{-2} + \lambda(\sum_i(\sigma_ib_i)^2 - 1)` is
    differentiated twice with respect to :math:`\lambda` and to :math:`b_j, b_k` (generic
    integer symbols in ``1..d``); the derivative of a ``Sum`` is a Kronecker-delta sum,
    collapsed for :math:`1 \le j, k \le d`. The block :math:`\partial^2\mathcal L/\partial b_j
    \partial b_k` comes out as ``KroneckerDelta(j, k)`` times
    :math:`6s^2b_j^{-4} + 2\lambda\sigma_j^2`, so the matrix is an arrowhead for every ``d``
    (the report's Appendix A states this in words). The stationary point
    :math:`b_j = 1/\sqrt{\sigma_jS}`, :math:`\lambda = s^2S^2` is the one derived by
    :func:`general_stationary_point`, and is substituted symbolically.

    Examples
    --------
    >>> H = general_bordered_hessian()
    >>> H.border, H.corner
    (2*b[j]*sigma[j]**2, 0)
    >>> H.matches_closed_form, H.positive
    (True, True)
    """
    g = general_stationary_point(kind="lemma4.1")
    d, j, sigma, s = g.d, g.j, g.params, g.scale
    i = sp.Symbol("i", integer=True, positive=True)
    k = sp.Symbol("k", integer=True, positive=True)
    b = sp.IndexedBase("b", positive=True)
    lam = sp.Symbol("lambda", positive=True)
    L = g.lagrangian
    corner = sp.simplify(sp.diff(L, lam, 2))
    border = _collapse_deltas(sp.diff(L, lam, b[j]), d, [j])
    block = _collapse_deltas(sp.diff(sp.diff(L, b[j]), b[k]), d, [j, k])
    diagonal = sp.simplify(block.subs(k, j))
    off_diagonal_ok = _is_zero(block - sp.KroneckerDelta(j, k) * diagonal)
    at = {b[j]: g.b, lam: g.multiplier}
    border_pt = sp.simplify(border.subs(at))
    diagonal_pt = sp.simplify(diagonal.subs(at))
    S = sp.Sum(sigma[i], (i, 1, d))
    c_expected = 2 * sigma[j] ** sp.Rational(3, 2) / sp.sqrt(S)
    a_expected = 8 * s**2 * S**2 * sigma[j] ** 2
    matches = (off_diagonal_ok and corner == 0 and _is_zero(border_pt - c_expected)
               and _is_zero(diagonal_pt - a_expected))
    positive = bool(border_pt.is_positive) and bool(diagonal_pt.is_positive)
    return GeneralBorderedHessian(d, j, k, L, corner, border, block, diagonal, g,
                                  border_pt, diagonal_pt, bool(matches), positive)


def _block_identity(product: sp.BlockMatrix, target: sp.BlockMatrix) -> bool:
    """True when every block of ``product - target`` simplifies to a zero matrix."""
    P = sp.block_collapse(product)
    for p in range(2):
        for q in range(2):
            diff = sp.simplify(sp.block_collapse(P.blocks[p, q] - target.blocks[p, q]))
            if not (diff == 0 or getattr(diff, "is_ZeroMatrix", False)):
                return False
    return True


def _arrow_entry(r: Any, col: Any, a: sp.IndexedBase, c: sp.IndexedBase) -> sp.Expr:
    """Entry ``(r, col)`` (0-based; row/column 0 is lambda) of ``[[0, c^T], [c, diag(a)]]``."""
    KD = sp.KroneckerDelta
    return (KD(r, 0) * (1 - KD(col, 0)) * c[col] + (1 - KD(r, 0)) * KD(col, 0) * c[r]
            + (1 - KD(r, 0)) * (1 - KD(col, 0)) * KD(r, col) * a[r])


@dataclass(frozen=True)
class ArrowheadRecurrenceProof:
    r"""What :func:`prove_arrowhead_recurrence` verified, for a symbolic size.

    :math:`H_m` is the arrowhead matrix ``[[0, c^T], [c, diag(a_1..a_m)]]`` of size
    :math:`m + 1`, with entries given by one formula in Kronecker deltas for symbolic row
    and column indices, and :math:`D_m = \det H_m`. Each flag is a sympy identity checked
    with :math:`m` a symbolic positive integer:

    ``last_column``: the last column of :math:`H_m` above the corner is :math:`c_m e_0` and
    the corner is :math:`a_m`, so :math:`H_m = [[H_{m-1}, u], [u^T, a_m]]` with
    :math:`u = c_me_0`; ``schur_factorisation``: for ``MatrixSymbol`` blocks of symbolic size,
    :math:`[[A, u], [u^T, \alpha]] = [[I, u/\alpha], [0, 1]]\,
    [[A - uu^T/\alpha, 0], [0, \alpha]]\,[[I, 0], [u^T/\alpha, 1]]`;
    ``rank_one_update``: :math:`uu^T/a_m` is :math:`c_m^2/a_m` times the matrix unit
    :math:`e_0e_0^T`, so the Schur complement differs from :math:`H_{m-1}` in entry
    :math:`(0, 0)` only; ``cofactor_diagonal``: deleting row 0 and column 0 of
    :math:`H_{m-1}` leaves the entries :math:`\delta_{ij}a_i`, i.e.
    :math:`\operatorname{diag}(a_1..a_{m-1})`; ``recurrence``: with these,
    :math:`D_m = a_m(D_{m-1} - (c_m^2/a_m)\prod_{l<m}a_l) = a_mD_{m-1} - c_m^2\prod_{l<m}a_l`;
    ``closed_form``: :math:`D_m = -\prod_{l\le m}a_l\sum_{k\le m}c_k^2/a_k` satisfies the base
    case :math:`D_1 = -c_1^2` and the recurrence for symbolic :math:`m`
    (:func:`prove_arrowhead_determinant`), hence holds for every :math:`m \ge 1` by
    induction; ``schur_route``: the same closed form directly, from the factorisation
    :math:`[[0, c^T], [c, D]] = [[1, c^TD^{-1}], [0, I]]\,[[-c^TD^{-1}c, 0], [0, D]]\,
    [[1, 0], [D^{-1}c, I]]` (block identity for symbolic size) and
    :math:`c^TD^{-1}c = \sum_kc_k^2/a_k` for :math:`D = \operatorname{diag}(a)` (entrywise
    Kronecker-delta sums, with :math:`DD^{-1} = I` checked the same way).

    ``axioms`` lists the properties of the determinant used and not re-derived by sympy.
    """

    m: sp.Symbol
    last_column: bool
    schur_factorisation: bool
    rank_one_update: bool
    cofactor_diagonal: bool
    recurrence: bool
    closed_form: bool
    schur_route: bool
    axioms: tuple[str, ...]

    @property
    def verified(self) -> bool:
        """Every identity checked."""
        return all((self.last_column, self.schur_factorisation, self.rank_one_update,
                    self.cofactor_diagonal, self.recurrence, self.closed_form, self.schur_route))


def prove_arrowhead_recurrence() -> ArrowheadRecurrenceProof:
    r"""Prove :math:`\det H_m = a_m\det H_{m-1} - c_m^2\prod_{l<m}a_l` for a symbolic size.

    This is the cofactor step of the report's Appendix A (its eqs. (26)-(27)), proved here
    for every :math:`m \ge 2` instead of being argued for the displayed matrix: the Schur
    complement of the corner :math:`a_m` (``a_m != 0``; the identity is polynomial, so it
    extends to :math:`a_m = 0`), a rank-one update of one entry, and the cofactor of that
    entry. The closed form then follows by induction (base case and step checked for
    symbolic :math:`m`), and a second, induction-free route through the Schur complement
    of :math:`\operatorname{diag}(a)` confirms it. See :class:`ArrowheadRecurrenceProof`.

    Examples
    --------
    >>> proof = prove_arrowhead_recurrence()
    >>> proof.verified
    True
    """
    m = sp.Symbol("m", integer=True, positive=True)
    r, t, col = sp.symbols("r t col", integer=True, positive=True)
    a = sp.IndexedBase("a", nonzero=True)
    c = sp.IndexedBase("c", real=True)
    KD = sp.KroneckerDelta
    # H_m = [[H_{m-1}, u], [u^T, a_m]] with u = c_m e_0: column m, rows 0 and r = m - t >= 1
    top = _arrow_entry(0, m, a, c)
    mid = _arrow_entry(r, r + t, a, c)            # row r >= 1 strictly above the corner
    corner = _arrow_entry(m, m, a, c)
    last_column = _is_zero(top - c[m]) and _is_zero(mid) and _is_zero(corner - a[m])
    # Schur complement of the scalar corner, blocks of symbolic size m
    A = sp.MatrixSymbol("A", m, m)
    u = sp.MatrixSymbol("u", m, 1)
    alpha = sp.Symbol("alpha", nonzero=True)
    I1, Im, Z = sp.Identity(1), sp.Identity(m), sp.ZeroMatrix(m, 1)
    M = sp.BlockMatrix([[A, u], [u.T, alpha * I1]])
    Lf = sp.BlockMatrix([[Im, u / alpha], [Z.T, I1]])
    Bf = sp.BlockMatrix([[A - u * u.T / alpha, Z], [Z.T, alpha * I1]])
    Uf = sp.BlockMatrix([[Im, Z], [u.T / alpha, I1]])
    schur = _block_identity(Lf * Bf * Uf, M)
    # the rank-one update: (u u^T / a_m)[r, col] with u = c_m e_0, for symbolic r, col >= 0
    r0, c0 = sp.symbols("r0 c0", integer=True, nonnegative=True)
    uuT = (c[m] * KD(r0, 0)) * (c[m] * KD(c0, 0)) / a[m]
    rank_one = _is_zero(uuT - c[m] ** 2 / a[m] * KD(r0, 0) * KD(c0, 0))
    # the (0, 0) cofactor of H_{m-1}: rows and columns 1..m-1 hold delta_{r,col} a_r
    cofactor = _is_zero(_arrow_entry(r, col, a, c) - KD(r, col) * a[r])
    # combine: D_m = a_m det(S) and det(S) = D_{m-1} - (c_m^2/a_m) * prod_{l<m} a_l
    D_prev, P_prev = sp.symbols("D_prev P_prev")
    D_m = a[m] * (D_prev - c[m] ** 2 / a[m] * P_prev)
    recurrence = _is_zero(sp.expand(D_m) - (a[m] * D_prev - c[m] ** 2 * P_prev))
    closed = prove_arrowhead_determinant(max_explicit=3)
    closed_form = closed.base_case and closed.inductive_step
    # induction-free route: Schur complement of D = diag(a)
    Dm = sp.MatrixSymbol("D", m, m)
    cv = sp.MatrixSymbol("c", m, 1)
    Dinv = Dm.inverse()
    M2 = sp.BlockMatrix([[sp.ZeroMatrix(1, 1), cv.T], [cv, Dm]])
    L2 = sp.BlockMatrix([[I1, cv.T * Dinv], [sp.ZeroMatrix(m, 1), Im]])
    B2 = sp.BlockMatrix([[-(cv.T * Dinv * cv), sp.ZeroMatrix(1, m)],
                         [sp.ZeroMatrix(m, 1), Dm]])
    U2 = sp.BlockMatrix([[I1, sp.ZeroMatrix(1, m)], [Dinv * cv, Im]])
    schur2 = _block_identity(L2 * B2 * U2, M2)
    k, h, q = sp.symbols("k l q", integer=True, positive=True)
    D_entry = lambda x, y: KD(x, y) * a[x]
    Dinv_entry = lambda x, y: KD(x, y) / a[x]
    inverse_ok = _is_zero(
        sp.refine(sp.piecewise_fold(sp.Sum(D_entry(k, h) * Dinv_entry(h, q), (h, 1, m)).doit()),
                  sp.Q.le(k, m)) - KD(k, q))
    quad = sp.Sum(sp.Sum(c[k] * Dinv_entry(k, h) * c[h], (h, 1, m)), (k, 1, m))
    quad_ok = _is_zero(sp.refine(sp.piecewise_fold(quad.doit()), sp.Q.le(k, m))
                       - sp.Sum(c[k] ** 2 / a[k], (k, 1, m)))
    axioms = (
        "det(XYZ) = det X det Y det Z",
        "a block-triangular matrix with identity diagonal blocks has determinant 1",
        "det [[S, 0], [0, alpha]] = alpha det S and det [[s, 0], [0, D]] = s det D",
        "det is affine in one entry, with slope the cofactor of that entry (Laplace)",
        "the determinant of a diagonal matrix is the product of its diagonal",
    )
    return ArrowheadRecurrenceProof(
        m, bool(last_column), bool(schur), bool(rank_one), bool(cofactor),
        bool(recurrence), bool(closed_form), bool(schur2 and inverse_ok and quad_ok), axioms)


@dataclass(frozen=True)
class GeneralMinors:
    r"""The leading principal minors of Appendix A's matrix for symbolic ``d`` and ``m``.

    ``minor`` is :math:`|\bar H_{m+1}| = -\prod_{k\le m}a_k\sum_{k\le m}c_k^2/a_k` with the
    entries :math:`a_k, c_k` *derived* by :func:`general_bordered_hessian` (``j`` renamed
    ``k``); ``expected`` the closed form
    :math:`-\frac4S(8s^2S^2)^{m-1}\prod_{k\le m}\sigma_k^2\sum_{k\le m}\sigma_k`;
    ``equal`` that they agree; ``negative`` that the minor is negative for every
    :math:`1 \le m \le d`, because sympy proves each factor :math:`a_k` and each term
    :math:`c_k^2/a_k` positive (a product of positive factors and a non-empty sum of
    positive terms are positive); ``recurrence`` is :func:`prove_arrowhead_recurrence`.
    """

    m: sp.Symbol
    minor: sp.Expr
    expected: sp.Expr
    equal: bool
    negative: bool
    recurrence: ArrowheadRecurrenceProof

    @property
    def verified(self) -> bool:
        """Entries, determinant formula, closed form and sign all checked."""
        return self.equal and self.negative and self.recurrence.verified


def general_minors() -> GeneralMinors:
    r"""Appendix A for a symbolic dimension: every leading principal minor is negative.

    Combines :func:`general_bordered_hessian` (entries from the Lagrangian with an indexed
    symbolic dimension, stationary point substituted) with
    :func:`prove_arrowhead_recurrence` (the determinant of the arrowhead matrix for every
    size, cofactor step included): for :math:`r = m + 1`, :math:`1 \le m \le d`,

    .. math::

        |\bar H_r| = -\frac{4}{S}\,(8s^2S^2)^{m-1}\Bigl(\prod_{k=1}^m\sigma_k^2\Bigr)
        \sum_{k=1}^m\sigma_k < 0 ,

    with :math:`S = \sum_{i=1}^d\sigma_i`. This is the report's Appendix A with its entries
    corrected (see the errata) and its induction carried out for a symbolic size.

    Examples
    --------
    >>> g = general_minors()
    >>> g.verified
    True
    """
    H = general_bordered_hessian()
    k = sp.Symbol("k", integer=True, positive=True)
    m = sp.Symbol("m", integer=True, positive=True)
    c_k = H.border_at_point.subs(H.j, k)
    a_k = H.diagonal_at_point.subs(H.j, k)
    term = sp.simplify(c_k**2 / a_k)
    minor = -sp.Product(a_k, (k, 1, m)) * sp.Sum(term, (k, 1, m))
    sigma, s = H.point.params, H.point.scale
    i = sp.Symbol("i", integer=True, positive=True)
    S = sp.Sum(sigma[i], (i, 1, H.d))
    expected = (-4 * (8 * s**2 * S**2) ** (m - 1) * sp.Product(sigma[k] ** 2, (k, 1, m))
                * sp.Sum(sigma[k], (k, 1, m)) / S)
    Ssym = sp.Symbol("S", positive=True)
    ratio = sp.simplify(
        sp.powsimp(sp.expand_power_base((minor / expected).subs(S, Ssym).doit(), force=True)))
    equal = _is_zero(ratio - 1)
    negative = bool(a_k.is_positive) and bool(term.is_positive)
    return GeneralMinors(m, minor, expected, bool(equal), negative, prove_arrowhead_recurrence())


# --------------------------------------------------------------------------------------
# Beyond the report: the steps of the Laurent-Massart bound and of the error bound for all n
# --------------------------------------------------------------------------------------


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
