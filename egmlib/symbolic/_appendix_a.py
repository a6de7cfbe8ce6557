"""Appendix A for a symbolic dimension: entries derived, recurrence proved for every size.

Private module of :mod:`egmlib.symbolic`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ._common import _is_zero
from ._general_d import GeneralSolution, general_stationary_point
from ._hessian import prove_arrowhead_determinant


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
