"""Global optimality: the problems in the squared variables, and Lagrange's identity.

Private module of :mod:`egmlib.symbolic`: two certificates that the stationary point of
eq. (16) is the unique global minimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import sympy as sp

from ._common import _hessian, _symbols
from ._problems import LagrangeProblem, _check_problem


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
    obj = sp.expand(problem.objective.xreplace(back))
    con = sp.expand(problem.constraint.xreplace(back))
    H = _hessian(obj, u).applyfunc(lambda e: e if e == 0 else sp.simplify(e))  # sympy.hessian's entries
    diag_pos = all(H[i, i].is_positive for i in range(problem.d))
    off_zero = all(H[i, k] == 0 for i in range(problem.d) for k in range(problem.d) if i != k)
    affine = all(e == 0 for e in _hessian(con, u))
    return SquaredVariableForm(u, obj, con, H, bool(diag_pos and off_zero and affine))


class CauchySchwarzCertificate(NamedTuple):
    """Lagrange's identity for one problem (:func:`cauchy_schwarz_certificate`)."""

    gap: sp.Expr  #: objective x constraint sum minus the stationary value
    sum_of_squares: sp.Expr  #: the sum of squares it equals
    holds: bool  #: both expand to the same polynomial in the x_j and y_j (Lagrange's identity, checked exactly)


def cauchy_schwarz_certificate(problem: LagrangeProblem) -> CauchySchwarzCertificate:
    """Lagrange's identity: a sum-of-squares proof that the stationary value is global.

    For Lemma 4.1, with ``x_j = 1/b_j`` and ``y_j = sigma_j b_j``:
    ``(sum_j b_j^-2)(sum_j sigma_j^2 b_j^2) - (sum_j sigma_j)^2
    = sum_{j<k} (sigma_k b_k / b_j - sigma_j b_j / b_k)^2 >= 0``,
    so on the constraint ``sum_j sigma_j^2 b_j^2 = 1`` the objective is at least
    ``s^2 (sum_j sigma_j)^2``, with equality iff ``b_j^2 sigma_j`` is constant, i.e. at
    eq. (16). For Theorem 3, ``x_j = Delta_j / b_j`` and ``y_j = b_j``. ``holds`` is the
    identity checked by expanding both sides in independent variables ``x_j, y_j`` and
    comparing them monomial by monomial (``d = 200`` in seconds).

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
    return CauchySchwarzCertificate(gap, sos, _lagrange_identity_holds(n))


_Monomial = tuple[tuple[int, int], ...]


def _times(p: dict[_Monomial, int], q: dict[_Monomial, int]) -> dict[_Monomial, int]:
    """The product of two polynomials with integer coefficients, each a dict from monomials
    (sorted pairs (variable, power)) to coefficients."""
    out: dict[_Monomial, int] = {}
    for ma, ca in p.items():
        for mb, cb in q.items():
            powers = dict(ma)
            for v, e in mb:
                powers[v] = powers.get(v, 0) + e
            m = tuple(sorted(powers.items()))
            out[m] = out.get(m, 0) + ca * cb
    return out


def _plus(*polys: dict[_Monomial, int]) -> dict[_Monomial, int]:
    out: dict[_Monomial, int] = {}
    for p in polys:
        for m, c in p.items():
            out[m] = out.get(m, 0) + c
    return {m: c for m, c in out.items() if c}


def _lagrange_identity_holds(d: int) -> bool:
    """Lagrange's identity in ``2d`` independent variables, both sides expanded exactly:
    ``(sum_j x_j^2)(sum_j y_j^2) - (sum_j x_j y_j)^2 = sum_{j<k} (x_j y_k - x_k y_j)^2``.

    Each side is expanded into a polynomial with integer coefficients (a dict from
    monomials to coefficients, :func:`_times`), and the two are compared monomial by
    monomial: ``d = 200`` takes about a second, where sympy's ``expand`` of the 19,900
    squares takes about a minute. The identity holds in the variables, so it holds for
    any expressions put in their place, such as the ``x_j`` and ``y_j`` of
    :func:`cauchy_schwarz_certificate`.
    """
    def var(i: int) -> dict[_Monomial, int]:
        return {((i, 1),): 1}

    x, y = [var(j) for j in range(d)], [var(d + j) for j in range(d)]
    minus_one: dict[_Monomial, int] = {(): -1}
    cross = _plus(*[_times(a, b) for a, b in zip(x, y, strict=True)])
    lhs = _plus(_times(_plus(*[_times(t, t) for t in x]), _plus(*[_times(t, t) for t in y])),
                _times(minus_one, _times(cross, cross)))
    squares = []
    for j in range(d):
        for k in range(j + 1, d):
            diff = _plus(_times(x[j], y[k]), _times(minus_one, _times(x[k], y[j])))
            squares.append(_times(diff, diff))
    return lhs == _plus(*squares)
