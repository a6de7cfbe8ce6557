r"""The clipped sum :math:`\sum_i \min(1, C/\|y_i\|)\,y_i` and its sensitivity in floating point.

Every private release in egmlib that adds Gaussian noise to data goes through this module:
the report's Algorithm 3 and its baseline (:mod:`egmlib.mechanisms`), and the clipped sums
of PLAN, IOME, CoinPress and the private pipelines around Algorithm 3 (:mod:`egmlib.peers`).
The rows are

.. math:: y_i = (x_i - c)\odot b

for a public centre :math:`c` and scaling :math:`b` (the report's eq. (7) for Algorithm 3;
PLAN: :math:`b = \Delta^{-1/2}`; IOME: the rotated data, :math:`b = 1`; CoinPress: the
current centre, :math:`b = 1`), restricted to some public columns where asked.  The sum is
formed on these **centred** rows, never as :math:`\sum_i x_i\odot b - n\,c\odot b`, whose
cancellation lets a row far from the centre escape its clip once :math:`|x|` is about
:math:`10^8` times the spread of the data.

Sensitivity on paper: every clipped row has norm at most :math:`C`, so substituting one
row moves the sum by at most :math:`2C` in :math:`\ell_2` (the report, Section 4; PLAN,
IOME and CoinPress calibrate their noise to the same :math:`2C`).

Sensitivity in floating point (:func:`sum_sensitivity`, the book's Proposition F.2)
-----------------------------------------------------------------------------------
With unit roundoff :math:`u = 2^{-53}`, :math:`\gamma_k = ku/(1-ku)` and the model of
floating-point arithmetic with underflow, :math:`\mathrm{fl}(x \circ y) = (x\circ y)(1+\delta)
+ \eta`, :math:`|\delta| \le u`, :math:`|\eta| \le 2^{-1075}`, :math:`\eta = 0` for additions
and subtractions (Higham 2002, Lemma 3.1 and eq. (2.8)):

1. *One row.*  The row :math:`y_i` is computed from :math:`x_i` alone, so whatever its
   rounding, it is a function of that row.  Its squared norm is a sum of :math:`d` rounded
   squares; where it is at least :math:`2^{-900}` and finite, the squares that underflow
   move it by at most :math:`d\,2^{-1075} \le d\,2^{-175}` of itself, so it is within a factor
   :math:`1\pm\gamma_d` of the exact one up to that; the square root, the factor
   :math:`C/\hat\nu_i` and the products :math:`f_i y_{ij}` each add one rounding, and each
   product an :math:`\eta`.  Every other row (a squared norm that overflows, or that is below
   :math:`2^{-900}` though the row is not exactly the centre) is recomputed with exact powers
   of two: its largest entry is scaled into :math:`[1/4, 1)`, where nothing that matters
   overflows or underflows, its norm and unit direction come from the scaled row, and its
   contribution is :math:`\min(\hat\nu_i, C)` times that direction.  Hence every computed
   contribution has :math:`\|z_i\| \le C(1+\kappa_d) + \sqrt d\,\eta`, clipped or not, with
   :math:`\kappa_d = (d+8)u`.  (Before this rescaling, a row whose squares all underflow got
   the norm 0 and was never clipped: with :math:`C = 10^{-170}` a row of entries
   :math:`10^{-163}` moved the sum by :math:`10^7` times :math:`2C`.)
2. *The sum.*  The rows are added in chunks of :math:`m` rows (:func:`chunk_rows`; each
   chunk is reduced in any order, then added to a running total), so every row passes
   through at most :math:`D = (m-1) + \lceil n/m\rceil + 2` roundings, all additions (no
   :math:`\eta`), and the computed sum differs from the exact sum of the :math:`z_i` by at most
   :math:`\gamma_D\sum_i\|z_i\|` (Higham 2002, eq. (4.4)).
3. *Neighbours.*  The computed sums of neighbouring datasets share every contribution but
   one, so they differ by at most

   .. math:: 2\bigl(C(1+\kappa_d) + \sqrt d\,\eta\bigr)(1 + n\gamma_D)
             = 2C(1+\nu) + 2\sqrt d\,\eta\,(1+n\gamma_D),
             \qquad 1+\nu = (1+\kappa_d)(1+n\gamma_D).

:func:`sum_sensitivity` returns this bound (with :math:`\eta = 2^{-1074}`), and every
Gaussian release on a clipped sum calibrates its noise to it (the OpenDP convention of
adding the rounding bound to the sensitivity; Casacuberta, Shoemate, Vadhan and Wagaman 2022
show what happens otherwise).  The absolute term changes the computed bound only for
:math:`C` below about :math:`10^{-290}`; at :math:`C = 0` every contribution is exactly 0 and
so is the bound.  :math:`\nu` is at most :math:`1.2\times10^{-8}` for :math:`n \le 10^4`,
:math:`1.2\times10^{-6}` for :math:`n \le 10^5`, :math:`1.5\times10^{-5}` for
:math:`n \le 10^6` and :math:`0.018` for :math:`n \le 10^8`, whatever :math:`d`
(:math:`2.5\times10^{-10}` at :math:`n = 10^4`, :math:`d = 2048`): the noise grows by that
factor, nothing more.  The tests check the bound on adversarial neighbours, subnormal rows
and radii included (``tests/test_privacy_floating_point.py``,
``tests/test_privacy_harness.py``).

Not covered: the floating-point Gaussian sampler itself (numpy's; the attacks of Mironov
2012 and Jin et al. 2022 on textbook samplers are out of scope here), as in every module
of egmlib.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import validation as _v
from egmlib.validation import FloatArray

__all__ = [
    "CHUNK_ELEMENTS",
    "ClippedSum",
    "chunk_rows",
    "clamp_to_box",
    "clipped_sum",
    "rounding_slack",
    "sum_sensitivity",
    "transformed_norms",
]

#: Floats per chunk of rows (2**17 float64 values, 1 MiB), small enough to stay in cache
#: for the passes made over each chunk.  No pass calls BLAS (the row norms and the
#: weighted row sums are numpy einsum loops), so the result does not depend on the number
#: of BLAS threads.
CHUNK_ELEMENTS = 2**17

#: Unit roundoff of float64.
_U = 2.0**-53
#: Absolute error of a product whose result underflows (the smallest subnormal, twice the
#: bound 2^-1075 of Higham 2002, eq. (2.8)); additions and subtractions are exact there.
_ETA = 2.0**-1074

_PER_COLUMN = "one entry per column of X"


def chunk_rows(d: int) -> int:
    """Rows per chunk for rows of ``d`` entries: ``max(1, CHUNK_ELEMENTS // d)``.

    The :math:`m` of the rounding bound (module docstring; Higham 2002, eq. (4.4)): a row
    passes through at most :math:`m - 1` roundings in its chunk.

    Examples
    --------
    >>> chunk_rows(2048), chunk_rows(10**6)
    (64, 1)
    """
    d = _v.check_count("d", d)
    return max(1, CHUNK_ELEMENTS // d)


def rounding_slack(n: int, *, d: int, rows: int | None = None) -> float:
    r"""The relative rounding bound :math:`\nu` of the clipped sum (module docstring; Higham 2002).

    :math:`1+\nu = (1+(d+8)u)\,(1+n\gamma_D)`, :math:`D = (m-1)+\lceil n/m\rceil+2`,
    :math:`m` = ``rows`` (default :func:`chunk_rows` of ``d``): the computed clipped sums of
    two neighbouring datasets of ``n`` rows in ``d`` columns differ by at most
    :math:`2C(1+\nu)`.

    Parameters
    ----------
    n : int >= 1, rows
    d : int >= 1, columns summed
    rows : int >= 1, optional
        Rows per chunk of the summation.

    Examples
    --------
    >>> f"{rounding_slack(10_000, d=2048):.2e}"
    '2.47e-10'
    >>> f"{rounding_slack(10**8, d=1):.2e}"
    '1.46e-03'
    """
    n = _v.check_count("n", n)
    d = _v.check_count("d", d)
    m = chunk_rows(d) if rows is None else _v.check_count("rows", rows)
    return _slack(n, d, m)


def _gamma(n: int, m: int) -> float:
    """gamma_D of the chunked sum of n rows, m rows per chunk (module docstring)."""
    m = min(m, n)
    depth = (m - 1) + -(-n // m) + 2
    return depth * _U / (1.0 - depth * _U)


def _slack(n: int, d: int, m: int) -> float:
    m = min(m, n)
    depth = (m - 1) + -(-n // m) + 2
    if not depth * _U < 0.5 and (d + 8) * _U < 0.5:  # pragma: no cover - n, d beyond 2^51
        raise ValueError(f"n and d too large for the rounding bound, got n={n}, d={d}")
    return (1.0 + (d + 8) * _U) * (1.0 + n * _gamma(n, m)) - 1.0


def sum_sensitivity(C: float, *, n: int, d: int, rows: int | None = None) -> float:
    r"""The :math:`\ell_2` sensitivity :math:`2C(1+\nu) + 2\sqrt d\,\eta\,(1+n\gamma_D)` of the computed clipped sum.

    :math:`2C` is the sensitivity on paper (substitution of one row, each clipped row of
    norm at most :math:`C`); :math:`\nu` = :func:`rounding_slack` bounds the rounding of
    the computed sum, and :math:`\eta = 2^{-1074}` the absolute error of a product that
    underflows (module docstring; Higham 2002, eqs. (2.8) and (4.4)).  The absolute term
    matters only for :math:`C` below about :math:`10^{-290}`; at :math:`C = 0` every row
    is clipped to exactly 0 and the sensitivity is 0.  Every Gaussian release on a clipped
    sum in egmlib calibrates its noise to this value.

    Examples
    --------
    >>> 0.0 < sum_sensitivity(1.0, n=100, d=3) - 2.0 < 1e-11
    True
    >>> sum_sensitivity(1.0, n=100, d=3) == 2.0 * (1.0 + rounding_slack(100, d=3))
    True
    >>> sum_sensitivity(0.0, n=100, d=3)
    0.0
    """
    C = _v.check_nonnegative_finite("C", C)
    n = _v.check_count("n", n)
    d = _v.check_count("d", d)
    m = chunk_rows(d) if rows is None else _v.check_count("rows", rows)
    if C == 0.0:
        return 0.0
    nu = _slack(n, d, m)
    out = 2.0 * C * (1.0 + nu) + 2.0 * math.sqrt(d) * _ETA * (1.0 + n * _gamma(n, m))
    _v.check_finite_result(out, what="the sensitivity 2 C (1 + nu)", inputs="C")
    return out


def clamp_to_box(X: Any, *, lower: float, upper: float) -> np.ndarray:
    """``X`` with every entry moved into the public box ``[lower, upper]`` (``np.clip``).

    The box is the public domain of the data in the report's Definition 2.1 sense: the
    guarantees of the estimators hold for every dataset, inside the box or not.

    Every estimator of :mod:`egmlib.peers` with a public box applies this first.  It is a
    map of each row on its own, so the release stays private for any data, and what
    follows can rely on the box: a whitened or transformed row is bounded by public
    quantities and cannot overflow.  ``X`` itself is returned (no copy) when every entry is
    already inside.

    Examples
    --------
    >>> clamp_to_box(np.array([[-5.0, 0.5, 7.0]]), lower=0.0, upper=1.0).tolist()
    [[0.0, 0.5, 1.0]]
    """
    X = _v.check_finite_data("X", X)
    lower, upper = _v.check_bounds(lower, upper)
    if float(X.min()) >= lower and float(X.max()) <= upper:
        return X
    return np.clip(X, lower, upper)


# --------------------------------------------------------------------------------------- #
# the chunked kernel (checked arguments)
# --------------------------------------------------------------------------------------- #
def _chunks(X: np.ndarray, centre: FloatArray | None, b: FloatArray | None,
            cols: np.ndarray | None, rows: int, checked: bool = False) -> Iterator[tuple[int, np.ndarray, FloatArray]]:
    """Yield (start, raw block, transformed rows) chunk by chunk, in one reused buffer.

    Every raw block is checked to be finite (all columns, also those not in ``cols``).

    The transformed rows are ``((block[:, cols] - centre) * b)``; entries that overflow
    are inf (callers recompute those rows with :func:`_far_rows`).  The caller's loop runs
    under :func:`_quiet` (a generator runs in its caller's context), so no chunk pays for an
    error-state switch of its own.
    """
    n = X.shape[0]
    k = X.shape[1] if cols is None else cols.size
    buf = np.empty((min(rows, n), k))
    for start in range(0, n, rows):
        block = X[start:start + rows]
        if not checked:  # the caller has not checked X finite
            _v.check_finite_rows("X", block, start=start)
        B = buf[:block.shape[0]]
        src = block if cols is None else block[:, cols]
        if centre is None:
            B[...] = src
        else:  # single precision (ESM's paired rows) is widened exactly by the float64 loop: the same subtraction
            np.subtract(src, centre, out=B)
        if b is not None:
            B *= b
        yield start, block, B


def _quiet() -> Any:
    """The floating-point error state of the chunked kernel: overflow, underflow and invalid
    operations give inf, 0 and NaN silently (the kernel finds and recomputes those rows)."""
    return np.errstate(over="ignore", under="ignore", invalid="ignore")


def _far_rows(raw: np.ndarray, centre: FloatArray | None,
              b: FloatArray | None) -> tuple[FloatArray, FloatArray]:
    """Unit directions and norms of rows ``(raw - centre) * b`` whose squares overflow or underflow.

    Exact powers of two carry the magnitudes: each entry's mantissa (times that of ``b``) is
    scaled by the row's largest exponent, so the largest lies in [1/4, 1) and no square that
    matters overflows or underflows.  A row such as 1e300 with b_j = 1e100 gets its direction
    to a few ulps instead of inf or NaN, and its norm (inf where it exceeds the float64 range)
    to (d + 4) ulps; a row of entries 1e-163, whose squares underflow to 0, gets its norm
    (2e-163 for four entries) instead of 0.  The difference ``raw - centre`` is formed as it
    is, and as half of each where it overflows (one more power of two).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        diff = raw if centre is None else raw - centre
    shift = np.zeros((raw.shape[0], 1), dtype=np.int64)
    over = ~np.all(np.isfinite(diff), axis=1)
    if np.any(over):
        diff = np.array(diff, dtype=np.float64)
        diff[over] = 0.5 * raw[over] - (0.0 if centre is None else 0.5 * centre)
        shift[over] = 1
    mant, ex = np.frexp(diff)
    if b is not None:
        mb, eb = np.frexp(b)
        mant = mant * mb
        ex = ex + eb
    top = np.max(np.where(mant != 0.0, ex, np.iinfo(np.int32).min), axis=1, keepdims=True)
    top = np.where(np.any(mant != 0.0, axis=1, keepdims=True), top, 0)
    v = np.ldexp(mant, np.maximum(ex - top, -1100))  # entries far below the largest underflow to 0
    length = np.sqrt(np.einsum("ij,ij->i", v, v))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        norms = np.ldexp(length, (top + shift)[:, 0])
        u = v / length[:, None]
    return np.where(length[:, None] > 0, u, 0.0), norms


#: Squared norms below this are recomputed by :func:`_far_rows`: above it, the squares that
#: underflow (each off by at most 2^-1075) move the squared norm by a relative d 2^-175 at most.
_SMALL_SQUARE = 2.0**-900


def _rescale(B: FloatArray, sq: FloatArray, raw_block: np.ndarray, centre: FloatArray | None,
             b: FloatArray | None) -> np.ndarray:
    """Rows of a chunk whose squared norm ``sq`` is not finite, or below ``_SMALL_SQUARE`` and
    not exactly 0 (the row equal to the centre, or its entries where b_j = 0)."""
    smallest = sq.min(initial=np.inf)
    if smallest >= _SMALL_SQUARE and sq.max(initial=0.0) < np.inf:  # every row as it is (NaN fails both)
        return np.empty(0, dtype=np.intp)
    bad = ~np.isfinite(sq)
    small = np.flatnonzero(sq < _SMALL_SQUARE)
    if small.size:
        raw = np.asarray(raw_block[small], dtype=np.float64)
        moved = raw != (0.0 if centre is None else centre)
        if b is not None:
            moved &= b != 0.0
        bad[small[np.any(moved, axis=1)]] = True
    return np.flatnonzero(bad)


def _chunk_norms(B: FloatArray, block: np.ndarray, centre: FloatArray | None,
                 b: FloatArray | None, cols: np.ndarray | None,
                 ) -> tuple[FloatArray, np.ndarray, FloatArray | None]:
    """Norms of the transformed rows of one chunk, safe from overflow and underflow.

    Returns the norms, the indices of the rows recomputed by :func:`_far_rows` and their
    unit directions (None when there are none).
    """
    sq = np.einsum("ij,ij->i", B, B)  # under the caller's _quiet()
    norms = np.sqrt(sq)
    src = block if cols is None else block[:, cols]
    bad = _rescale(B, sq, src, centre, b)
    if bad.size == 0:
        return norms, bad, None
    u, far = _far_rows(np.asarray(src[bad], dtype=np.float64), centre, b)
    norms[bad] = far
    return norms, bad, u


def _row_norms(X: np.ndarray, centre: FloatArray | None, b: FloatArray | None,
               cols: np.ndarray | None, rows: int, checked: bool = False) -> FloatArray:
    out = np.empty(X.shape[0])
    with _quiet():
        for start, block, B in _chunks(X, centre, b, cols, rows, checked):
            out[start:start + B.shape[0]] = _chunk_norms(B, block, centre, b, cols)[0]
    return out


def _clip_rows(X: np.ndarray, C: float, centre: FloatArray | None, b: FloatArray | None,
               norms: FloatArray | None, cols: np.ndarray | None, rows: int,
               checked: bool = False) -> tuple[FloatArray, int]:
    d = X.shape[1] if cols is None else cols.size
    total = np.zeros(d)
    n_clipped = 0
    with _quiet():
        for start, block, B in _chunks(X, centre, b, cols, rows, checked):
            stop = start + B.shape[0]
            if norms is None:
                nb, bad, u = _chunk_norms(B, block, centre, b, cols)
                part = _clipped_part(B, nb, C, bad, u)
            else:
                nb = norms[start:stop]
                part = _given_norms_part(B, block, nb, C, centre, b, cols, finite=True)
                if not np.all(np.isfinite(part)):  # a transformed entry overflowed: find its rows
                    part = _given_norms_part(B, block, nb, C, centre, b, cols, finite=False)
            n_clipped += int(np.count_nonzero(nb > C))
            total += part
        return total, n_clipped


def _given_norms_part(B: FloatArray, block: np.ndarray, nb: FloatArray, C: float, centre: FloatArray | None,
                      b: FloatArray | None, cols: np.ndarray | None, finite: bool) -> FloatArray:
    """The clipped sum of one chunk whose rows' norms ``nb`` are given.  ``finite``: take every
    transformed entry as finite (a first try: an entry that is not makes the sum inf or NaN, since
    its factor is positive or, with C = 0, gives 0 * inf = NaN, and the caller tries again);
    otherwise a row with an entry that is not finite is recomputed from its direction."""
    finite_rows = True if finite else np.isfinite(B).all(axis=1)
    sq = np.where(finite_rows, nb * nb, np.inf)
    src = block if cols is None else block[:, cols]
    bad = _rescale(B, sq, src, centre, b)
    u = _far_rows(np.asarray(src[bad], dtype=np.float64), centre, b)[0] if bad.size else None
    return _clipped_part(B, nb, C, bad, u)


def _clipped_part(B: FloatArray, nb: FloatArray, C: float, bad: np.ndarray, u: FloatArray | None) -> FloatArray:
    """sum_i min(1, C / nb_i) B_i over the chunk's rows in order, without BLAS; the rows in ``bad``
    taken as min(nb_i, C) along their unit directions ``u`` (B is left as it is)."""
    factor = np.ones(B.shape[0])
    np.divide(C, nb, out=factor, where=nb > C)
    if u is None:
        return np.einsum("i,ij->j", factor, B)
    R = B.copy()
    R[bad] = u * np.minimum(nb[bad], C)[:, None]
    factor[bad] = 1.0
    return np.einsum("i,ij->j", factor, R)


# --------------------------------------------------------------------------------------- #
# public
# --------------------------------------------------------------------------------------- #
def _check(X: Any, mu_hat: Any, b: Any, cols: Any,
           rows: Any) -> tuple[np.ndarray, FloatArray | None, FloatArray | None, np.ndarray | None, int]:
    """Cheap checks (no pass over X: its entries are checked chunk by chunk as they are read)."""
    X = _v.check_data_matrix("X", X)
    d = X.shape[1]
    if cols is not None:
        cols = np.asarray(_v.as_real_array("cols", cols, ndim=1))
        if not (np.all(cols == np.round(cols)) and np.all((cols >= 0) & (cols < d))
                and np.unique(cols).size == cols.size):
            raise ValueError(f"cols must hold distinct column indices in [0, {d}), got cols={cols.tolist()!r:.80}")
        cols = cols.astype(np.intp)
    k = d if cols is None else cols.size
    of = "one entry per column of X" if cols is None else "one entry per column in cols"
    if mu_hat is not None:
        mu_hat = _v.check_finite_vector("mu_hat", mu_hat, length=k, of=of)
    if b is not None:
        b = _v.check_nonnegative_vector("b", b, length=k, of=of, allow_all_zero=True)
    rows = chunk_rows(k) if rows is None else _v.check_count("rows", rows)
    return X, mu_hat, b, cols, rows


def transformed_norms(X: Any, *, mu_hat: Any = None, b: Any = None, cols: Any = None,
                      rows: int | None = None, finite: bool = False) -> FloatArray:
    r"""The norms :math:`\|(x_i - \hat\mu)\odot b\|` of every row (the report's eq. (7) rows).

    :math:`\hat\mu = 0` and :math:`b = 1` by default; with ``cols``, only those columns
    (``mu_hat`` and ``b`` then have one entry per column in ``cols``).  Computed on centred
    rows, chunk by chunk of ``rows`` rows (default :func:`chunk_rows`); a squared norm that
    overflows is recomputed by exact scaling, and a norm beyond the float64 range is ``inf``.

    Parameters
    ----------
    X : array_like, shape (n, d), finite (checked chunk by chunk as it is read)
    mu_hat : array_like, finite, optional
        Public centre.
    b : array_like, finite, >= 0, optional
        Public per-coordinate scaling.
    cols : array_like of distinct ints in [0, d), optional
    rows : int >= 1, optional
    finite : bool, default False
        True when the caller has checked every entry of ``X`` finite (a pass over the data
        of its own): the chunks are then not checked again.

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    >>> transformed_norms(np.array([[3.0, 5.0]]), mu_hat=[0.0, 1.0]).tolist()
    [5.0]
    >>> transformed_norms(np.array([[1e300, 1e300]]), b=[1e10, 1e10]).tolist()
    [inf]
    """
    X, mu_hat, b, cols, rows = _check(X, mu_hat, b, cols, rows)
    return _row_norms(X, mu_hat, b, cols, rows, _v.check_bool("finite", finite))


@dataclass(frozen=True)
class ClippedSum:
    """Output of :func:`clipped_sum`."""

    total: FloatArray  #: the clipped sum, one entry per column summed
    n_clipped: int  #: rows beyond the radius (a diagnostic of the data, not private)


def clipped_sum(X: Any, *, C: float, mu_hat: Any = None, b: Any = None, norms: Any = None,
                cols: Any = None, rows: int | None = None, finite: bool = False) -> ClippedSum:
    r"""The clipped sum :math:`\sum_i \min(1, C/\|y_i\|)\,y_i` of :math:`y_i = (x_i - \hat\mu)\odot b`.

    Step 3 of the report's Algorithm 3 (sensitivity :math:`2C` on paper,
    :func:`sum_sensitivity` in floating point), and the clipped sum of PLAN (Aumuller et
    al. 2024), IOME (Huang, Liang and Yi 2021) and CoinPress (Biswas et al. 2020).  Rows
    with norm at most :math:`C` are kept as they are; the others are scaled onto the
    sphere of radius :math:`C`; rows whose norm exceeds the float64 range are clipped along
    their direction.  ``C = 0`` clips every row to 0.  The rows are transformed chunk by
    chunk in one reused buffer, so no transformed copy of the data is ever whole.

    Parameters
    ----------
    X : array_like, shape (n, d), finite (checked chunk by chunk as it is read)
    C : float, finite and >= 0
    mu_hat : array_like, finite, optional
        Public centre (default 0).
    b : array_like, finite, >= 0, optional
        Public per-coordinate scaling (default 1).
    norms : array_like, shape (n,), >= 0, optional
        :func:`transformed_norms` of the same rows, when the caller has them (PLAN, IOME
        and the radius check need them before clipping); the sum is the same.
    cols, rows, finite : as in :func:`transformed_norms`

    Returns
    -------
    ClippedSum

    Examples
    --------
    >>> r = clipped_sum(np.array([[3.0, 4.0], [0.0, 1.0]]), C=2.0)
    >>> np.round(r.total, 12).tolist(), r.n_clipped
    ([1.2, 2.6], 1)
    >>> X = np.array([[1e12 + 3.0, 4.0], [1e12, 1.0]])
    >>> np.round(clipped_sum(X, C=2.0, mu_hat=[1e12, 0.0]).total, 12).tolist()
    [1.2, 2.6]
    """
    X, mu_hat, b, cols, rows = _check(X, mu_hat, b, cols, rows)
    C = _v.check_nonnegative_finite("C", C)
    if norms is not None:
        norms = np.asarray(_v.as_real_array("norms", norms, ndim=1))
        _v.check_length("norms", norms, length=X.shape[0], of="one entry per row of X")
        if np.any(np.isnan(norms)) or np.any(norms < 0):
            raise ValueError("norms must be >= 0 (inf allowed), got a NaN or a negative entry")
    total, n_clipped = _clip_rows(X, C, mu_hat, b, norms, cols, rows, _v.check_bool("finite", finite))
    _v.check_finite_result(total, what="the clipped sum", inputs="X, mu_hat, b or C")
    return ClippedSum(total=total, n_clipped=n_clipped)
