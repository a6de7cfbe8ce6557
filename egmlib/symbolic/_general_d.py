"""The stationary point for a symbolic dimension d (IndexedBase and symbolic sums).

Private module of :mod:`egmlib.symbolic` (Lemma 4.1 and Theorem 3 for every d >= 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from egmlib.validation import check_choice

from ._common import _KINDS


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
