"""The bordered Hessian, its leading principal minors and the arrowhead determinant.

Private module of :mod:`egmlib.symbolic`: the second-order test of Appendix A for a
concrete dimension, and the arrowhead determinant proved for every size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import sympy as sp
from sympy.core.exprtools import Factors
from sympy.simplify.simplify import product_simplify

from egmlib.validation import (
    as_real_array,
    check_bool,
    check_choice,
    check_count,
    check_symbolic_scalar,
    check_symbolic_vector,
)

from ._common import _D_MAX, _KINDS, _hessian, _is_zero, _simplify_with_sum, _symbols
from ._problems import LagrangeProblem, StationaryPoint, _check_problem


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
    H = _hessian(problem.lagrangian, (problem.multiplier, *problem.b))  # sympy.hessian's entries
    if point is None:
        return H
    if not isinstance(point, (StationaryPoint, Mapping)):
        raise TypeError(f"point must be a StationaryPoint or a mapping, got point of type {type(point).__name__}")
    subs = point.as_dict(problem) if isinstance(point, StationaryPoint) else dict(point)
    total = sp.Add(*problem.params)
    # the zero entries stay 0; the others are evaluated and simplified with the parameters'
    # sum carried as one symbol
    by_symbol = all(isinstance(k, sp.Symbol) for k in subs)
    return H.applyfunc(lambda e: e if e == 0 else _simplify_with_sum(
        e.xreplace(subs) if by_symbol else e.subs(subs), total))


#: Most symbols in an arrowhead minor that is put through sympy.factor; beyond, factor would
#: expand sums of hundreds of parameters (see leading_principal_minors).
_FACTOR_MAX_SYMBOLS = 16


def _arrowhead_parts(H: sp.MatrixBase) -> tuple[list[sp.Expr], list[sp.Expr]] | None:
    """``(a, c)`` if ``H = [[0, c^T], [c, diag(a)]]`` with every ``a_l`` provably nonzero, else None."""
    n = H.rows
    if H[0, 0] != 0 or any(H[0, k] != H[k, 0] for k in range(1, n)):
        return None
    if any(H[i, k] != 0 for i in range(1, n) for k in range(1, n) if i != k):
        return None
    a = [H[k, k] for k in range(1, n)]
    if any(x.is_zero is not False for x in a):
        return None
    return a, [H[0, k] for k in range(1, n)]


def leading_principal_minors(H: sp.Matrix, *, orders: Iterable[int] | None = None) -> dict[int, sp.Expr]:
    """``{r: det(H[:r, :r])}`` for ``r`` in ``orders`` (default ``2, ..., n``), factored.

    In Appendix A's notation these are ``|H_r|``, ``r = 2, ..., d + 1``. A minor of a
    general matrix is sympy's Berkowitz determinant, factored (``sympy.factor``); its cost
    grows fast with the order and the entries, so a general matrix of symbols is practical
    to about order 8. A minor of an arrowhead matrix ``[[0, c^T], [c, diag(a)]]`` with nonzero ``a_l`` (every
    bordered Hessian of Lemma 4.1 and Theorem 3, at the stationary point or not) is
    ``-(prod_{l<r} a_l) sum_{k<r} c_k^2 / a_k``, the determinant that
    :func:`prove_arrowhead_determinant` proves for every size, factored by ``sympy.factor``
    when it holds at most 16 symbols and otherwise with the factors common to every
    ``c_k^2 / a_k`` taken out of the sum (``factor`` would expand sums of hundreds of
    parameters): all ``d + 1 = 201`` orders at ``d = 200`` take seconds
    (``benchmarks/symbolic_stationary.py``).
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
    wanted = []
    for r in orders:
        r = check_count("orders entry", r, minimum=1)
        if r > n:
            raise ValueError(f"orders entry must be <= {n} (the matrix size), got {r}")
        wanted.append(r)
    arrow = _arrowhead_parts(H)
    prefix_product: list[sp.Expr] = [sp.S.One]
    terms: list[sp.Expr] = []
    common = sp.S.One
    if arrow is not None:
        for a_l, c_l in zip(*arrow, strict=True):
            prefix_product.append(prefix_product[-1] * a_l)
            terms.append(c_l**2 / a_l)
        # the factors common to every term c_k^2 / a_k, taken out of every sum
        shared = Factors(terms[0])
        for t in terms[1:]:
            shared = shared.gcd(Factors(t))
        common = shared.as_expr()
    out = {}
    for r in wanted:
        if arrow is None:
            out[r] = sp.factor(H[:r, :r].det(method="berkowitz"))
            continue
        minor = -prefix_product[r - 1] * sp.Add(*terms[:r - 1])
        if len(minor.free_symbols) <= _FACTOR_MAX_SYMBOLS:
            out[r] = sp.factor(minor)
        else:
            out[r] = -prefix_product[r - 1] * common * sp.Add(*[t / common for t in terms[:r - 1]])
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

    >>> import sympy as sp
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
