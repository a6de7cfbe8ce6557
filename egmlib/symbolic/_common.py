"""Constants and helpers shared by the modules of :mod:`egmlib.symbolic` (private)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import reduce

import sympy as sp

_HALF = sp.Rational(1, 2)
_KINDS = ("lemma4.1", "theorem3")
#: Largest dimension of the symbolic problems (sympy's cost grows fast with d), and the
#: report's statements are checked for small d and for symbolic d.
_D_MAX = 200


def _is_zero(expr: sp.Expr) -> bool:
    """True when sympy proves ``expr == 0`` (``simplify`` then exact comparison)."""
    return sp.simplify(expr) == 0


def _symbols(prefix: str, d: int) -> tuple[sp.Symbol, ...]:
    return tuple(sp.symbols(f"{prefix}_1:{d + 1}", positive=True))


def _partials(expr: sp.Expr, variables: Iterable[sp.Symbol]) -> dict[sp.Symbol, sp.Expr]:
    """``{v: d expr / d v}`` for the ``variables`` that ``expr`` contains (the others' are 0).

    Each derivative is the expression ``sympy.diff(expr, v)`` returns, built in one walk of
    the expression tree instead of one walk per variable: a sum is differentiated term by
    term and a product by the product rule, as sympy's ``Add`` and ``Mul`` do, but only
    the terms and factors that contain ``v`` are visited (a coordinate's derivative of a
    sum over ``d`` coordinates costs one term, not ``d``); any other node (a power, a
    function) is differentiated by sympy itself.
    """
    wanted = frozenset(variables)
    memo: dict[sp.Basic, dict[sp.Symbol, sp.Expr]] = {}

    def walk(e: sp.Basic) -> dict[sp.Symbol, sp.Expr]:
        if e in memo:
            return memo[e]
        if e.is_Symbol:
            out: dict[sp.Symbol, sp.Expr] = {e: sp.S.One} if e in wanted else {}
        elif e.is_Atom:
            out = {}
        elif e.is_Add:
            parts: dict[sp.Symbol, list[sp.Expr]] = {}
            for a in e.args:
                for v, da in walk(a).items():
                    parts.setdefault(v, []).append(da)
            out = {v: sp.Add(*ds) for v, ds in parts.items()}
        elif e.is_Mul:
            args = list(e.args)
            terms: dict[sp.Symbol, list[sp.Expr]] = {}
            for i, a in enumerate(args):
                for v, da in walk(a).items():
                    if da != 0:
                        terms.setdefault(v, []).append(
                            reduce(lambda x, y: x * y, args[:i] + [da] + args[i + 1:], sp.S.One))
            out = {v: sp.Add.fromiter(ts) for v, ts in terms.items()}
        else:
            inside = e.free_symbols & wanted
            out = {v: e.diff(v) for v in inside}
        out = {v: dv for v, dv in out.items() if dv != 0}
        memo[e] = out
        return out

    return walk(expr)


def _hessian(f: sp.Expr, variables: Sequence[sp.Symbol]) -> sp.Matrix:
    """``sympy.hessian(f, variables)`` entry for entry, from :func:`_partials`: an entry whose
    first derivative does not contain the second variable is 0 without a call to sympy."""
    n = len(variables)
    out = sp.zeros(n, n)
    grad = _partials(f, variables)
    for i, vi in enumerate(variables):
        if vi not in grad:
            continue
        second = _partials(grad[vi], variables[i:])
        for j in range(i, n):
            out[i, j] = out[j, i] = second.get(variables[j], sp.S.Zero)
    return out


def _simplify_with_sum(expr: sp.Expr, total: sp.Expr) -> sp.Expr:
    """``sympy.simplify(expr)`` with the sum ``total`` of positive parameters carried as one
    positive symbol (so that sympy's cost does not grow with the number of terms of the
    sum), written out again afterwards."""
    if not isinstance(total, sp.Add):
        return sp.simplify(expr)
    S = sp.Dummy("S", positive=True)
    return sp.simplify(expr.xreplace({total: S})).xreplace({S: total})
