"""The two constrained problems for a concrete dimension d, and their stationary point.

Private module of :mod:`egmlib.symbolic`: Lemma 4.1's and Theorem 3's Lagrangians
(report eqs. (9), (10)), the stationarity system and its solution along the report's
route (eqs. (11)-(16)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from egmlib.validation import check_count

from ._common import _D_MAX, _partials, _symbols


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
    variables = (*problem.b, problem.multiplier)
    grad = _partials(problem.lagrangian, variables)  # each is sympy.diff(L, v)
    return tuple(grad.get(v, sp.S.Zero) for v in variables)


def multiplier_at_stationarity(problem: LagrangeProblem) -> tuple[sp.Expr, ...]:
    """Solve each ``dL/db_j = 0`` for the multiplier, treating it as an unknown real.

    ``dL/db_j`` is affine in ``lambda``, so each equation has exactly one solution,
    e.g. ``lambda = s^2 / (sigma_j^2 b_j^4)`` for Lemma 4.1. Every one of them is
    positive for positive ``b_j``: no stationary point with ``b > 0`` has
    ``lambda <= 0``, which justifies declaring ``lambda`` positive when solving
    (eq. (12) takes a fourth root of ``s^2 / (lambda sigma_j^2)``).

    Returns the tuple of the ``d`` expressions. sympy solves the equation of a generic
    coordinate (``b_1``'s, with ``b_1`` and its parameter replaced by fresh symbols), and
    every coordinate's equation is checked to be that equation with its own ``b_j`` and
    parameter, so that ``d = 200`` costs one solve.
    """
    problem = _check_problem(problem)
    lam_real = sp.Symbol("lambda_real", real=True)
    equations = [eq.xreplace({problem.multiplier: lam_real}) for eq in stationarity_system(problem)[:-1]]
    b, p = sp.Dummy("b", positive=True), sp.Dummy("p", positive=True)
    generic = equations[0].xreplace({problem.b[0]: b, problem.params[0]: p})
    roots = sp.solve(generic, lam_real)
    if len(roots) != 1:
        raise RuntimeError(f"expected one multiplier from dL/d{problem.b[0]} = 0, got {roots}")
    root = sp.simplify(roots[0])
    out = []
    for eq, bj, pj in zip(equations, problem.b, problem.params, strict=True):
        if eq != generic.xreplace({b: bj, p: pj}):
            raise RuntimeError(f"dL/d{bj} is not the equation of the other coordinates: {eq}")
        out.append(root.xreplace({b: bj, p: pj}))
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
