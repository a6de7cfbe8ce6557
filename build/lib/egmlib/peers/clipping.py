r"""The clipped sum shared by PLAN and IOME: :math:`\sum_i \min(1, C/\|y_i\|)\,y_i`.

The rows are :math:`y_i = (x_i - \hat\mu)\odot b` for a public centre :math:`\hat\mu` and
scaling :math:`b` (the report's eq. (7) for Algorithm 3; PLAN: :math:`b = \Delta^{-1/2}`;
IOME: the rotated data, :math:`b = 1`).
Every clipped row has norm at most :math:`C`, so substituting one row moves the sum by
at most :math:`2C` in :math:`\ell_2` (attained by two antipodal far rows): the
sensitivity for which PLAN (Aumuller et al. 2024) and IOME (Huang, Liang and Yi 2021)
calibrate their Gaussian noise, as Algorithm 3 does for its transformed sum (report,
Section 4).

The rows are formed chunk by chunk in one reused buffer of ``CHUNK_ELEMENTS`` floats
(as :mod:`egmlib.mechanisms` does), so no transformed copy of the data is ever made
whole: at :math:`n = 10^4`, :math:`d = 2048` allocating one costs more than the
arithmetic on this kind of machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import _validation as _v
from egmlib._validation import FloatArray

__all__ = ["CHUNK_ELEMENTS", "ClippedSum", "clipped_sum", "transformed_norms"]

#: Elements per chunk of rows (1 MiB of float64).
CHUNK_ELEMENTS = 2**17

_PER_COLUMN = "one entry per column of X"


@dataclass(frozen=True)
class ClippedSum:
    """Output of :func:`clipped_sum`."""

    total: FloatArray  #: (d,) the clipped sum
    norms: FloatArray  #: (n,) the norms before clipping (a diagnostic of the data, not private)


def _rows(X: np.ndarray, mu_hat: FloatArray | None,
          b: FloatArray | None) -> Iterator[tuple[int, int, FloatArray]]:
    """Yield (start, stop, transformed rows) chunk by chunk, in one reused buffer."""
    n, d = X.shape
    step = max(1, CHUNK_ELEMENTS // d)
    buf = np.empty((min(step, n), d))
    for start in range(0, n, step):
        block = X[start:start + step]
        B = buf[:block.shape[0]]
        if mu_hat is None:
            B[...] = block
        else:
            np.subtract(block, mu_hat, out=B)
        if b is not None:
            B *= b
        yield start, start + block.shape[0], B


def _check(X: Any, mu_hat: Any, b: Any) -> tuple[np.ndarray, FloatArray | None, FloatArray | None]:
    X = _v.check_finite_data("X", X)
    d = X.shape[1]
    if mu_hat is not None:
        mu_hat = _v.check_finite_vector("mu_hat", mu_hat, length=d, of=_PER_COLUMN)
    if b is not None:
        b = _v.check_nonnegative_vector("b", b, length=d, of=_PER_COLUMN, allow_all_zero=True)
    return X, mu_hat, b


def _norms(B: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        return np.sqrt(np.einsum("ij,ij->i", B, B))


def transformed_norms(X: Any, *, mu_hat: Any = None, b: Any = None) -> FloatArray:
    r"""The norms :math:`\|(x_i - \hat\mu)\odot b\|` of every row (the report's eq. (7) rows).

    :math:`\hat\mu = 0` and :math:`b = 1` by default.  A norm beyond the float64 range is
    a ValueError.

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    mu_hat : array_like, shape (d,), finite, optional
        Public centre.
    b : array_like, shape (d,), finite, >= 0, optional
        Public per-coordinate scaling.

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    >>> transformed_norms(np.array([[3.0, 5.0]]), mu_hat=[0.0, 1.0]).tolist()
    [5.0]
    """
    X, mu_hat, b = _check(X, mu_hat, b)
    return row_norms(X, mu_hat, b, inputs="X, mu_hat or b")


def row_norms(X: np.ndarray, mu_hat: FloatArray | None, b: FloatArray | None, *,
              inputs: str) -> FloatArray:
    """:func:`transformed_norms` for checked arguments; an overflow names ``inputs``."""
    norms = np.empty(X.shape[0])
    for start, stop, B in _rows(X, mu_hat, b):
        norms[start:stop] = _norms(B)
    _v.check_finite_result(norms, what="a row norm", inputs=inputs)
    return norms


def clipped_sum(X: Any, *, C: float, mu_hat: Any = None, b: Any = None) -> ClippedSum:
    r"""The clipped sum :math:`\sum_i \min(1, C/\|y_i\|)\,y_i` of :math:`y_i = (x_i - \hat\mu)\odot b`.

    Step 3 of the report's Algorithm 3 (sensitivity :math:`2C`), and the clipped sum of
    PLAN (Aumuller et al. 2024) and IOME (Huang, Liang and Yi 2021).  Rows with norm at
    most :math:`C` are kept as they are; the others are scaled onto the sphere of radius
    :math:`C`.  ``C = 0`` clips every row to 0.

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    C : float, finite and >= 0
    mu_hat : array_like, shape (d,), finite, optional
        Public centre (default 0).
    b : array_like, shape (d,), finite, >= 0, optional
        Public per-coordinate scaling (default 1).

    Returns
    -------
    ClippedSum
        ``total`` and the norms before clipping (``norms > C`` marks the clipped rows; a
        diagnostic of the data, not private).

    Examples
    --------
    >>> r = clipped_sum(np.array([[3.0, 4.0], [0.0, 1.0]]), C=2.0)
    >>> np.round(r.total, 12).tolist(), r.norms.tolist()
    ([1.2, 2.6], [5.0, 1.0])
    """
    X, mu_hat, b = _check(X, mu_hat, b)
    C = _v.check_nonnegative_finite("C", C)
    inputs = "X, mu_hat, b or C"
    norms = row_norms(X, mu_hat, b, inputs=inputs)
    return ClippedSum(total=clip_rows(X, C, mu_hat, b, norms, inputs=inputs), norms=norms)


def clip_rows(X: np.ndarray, C: float, mu_hat: FloatArray | None, b: FloatArray | None,
              norms: FloatArray, *, inputs: str) -> FloatArray:
    """The total of :func:`clipped_sum` for checked arguments and the rows' ``norms``
    (from :func:`row_norms`, which PLAN and IOME need before clipping for their private
    threshold, so they are not computed twice); an overflow names ``inputs``."""
    total = np.zeros(X.shape[1])
    for start, stop, B in _rows(X, mu_hat, b):
        nb = norms[start:stop]
        factor = np.ones(stop - start)
        far = nb > C
        factor[far] = C / nb[far]
        total += np.einsum("i,ij->j", factor, B)
    _v.check_finite_result(total, what="the clipped sum", inputs=inputs)
    return total
