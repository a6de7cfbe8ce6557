r"""The clipped sum shared by PLAN and IOME: :math:`\sum_i \min(1, C/\|y_i\|)\,y_i`.

The rows are :math:`y_i = (x_i - c)\odot s` for a public centre :math:`c` and scaling
:math:`s` (PLAN: :math:`s = \Delta^{-1/2}`; IOME: the rotated data, :math:`s = 1`).
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

from typing import Any

import numpy as np

from egmlib import _validation as _v
from egmlib.peers._checks import check_data, check_vector

__all__ = ["CHUNK_ELEMENTS", "transformed_norms", "clipped_sum"]

#: Elements per chunk of rows (1 MiB of float64).
CHUNK_ELEMENTS = 2**17


def _rows(Y, centre, scale):
    """Yield (start, stop, transformed rows) chunk by chunk, in one reused buffer."""
    n, d = Y.shape
    step = max(1, CHUNK_ELEMENTS // d)
    buf = np.empty((min(step, n), d))
    for start in range(0, n, step):
        block = Y[start:start + step]
        B = buf[:block.shape[0]]
        if centre is None:
            B[...] = block
        else:
            np.subtract(block, centre, out=B)
        if scale is not None:
            B *= scale
        yield start, start + block.shape[0], B


def _check(Y, centre, scale):
    Y = check_data(Y)
    d = Y.shape[1]
    if centre is not None:
        centre = check_vector("centre", centre, d)
    if scale is not None:
        scale = check_vector("scale", scale, d)
    return Y, centre, scale


def transformed_norms(Y: Any, *, centre: Any = None, scale: Any = None) -> np.ndarray:
    r"""The norms :math:`\|(y_i - c)\odot s\|` of every row (centre 0 and scale 1 by default).

    Examples
    --------
    >>> transformed_norms(np.array([[3.0, 5.0]]), centre=[0.0, 1.0]).tolist()
    [5.0]
    """
    Y, centre, scale = _check(Y, centre, scale)
    norms = np.empty(Y.shape[0])
    for a, b, B in _rows(Y, centre, scale):
        norms[a:b] = np.sqrt(np.einsum("ij,ij->i", B, B))
    return norms


def clipped_sum(Y: Any, *, C: float, centre: Any = None,
                scale: Any = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The clipped sum of the rows :math:`y_i = (x_i - c)\odot s`, and their norms.

    :math:`\sum_i \min(1, C/\|y_i\|)\,y_i` and :math:`\|y_i\|`.

    Rows with norm at most :math:`C` are kept as they are; the others are scaled onto
    the sphere of radius :math:`C`.  ``C = 0`` clips every row to 0.

    Parameters
    ----------
    Y : array_like, shape (n, d), finite
    C : float, finite and >= 0
    centre : array_like, shape (d,), optional
        Public centre c (default 0).
    scale : array_like, shape (d,), optional
        Public per-coordinate scaling s (default 1).

    Returns
    -------
    total : numpy.ndarray, shape (d,)
    norms : numpy.ndarray, shape (n,)
        The norms before clipping (``norms > C`` marks the clipped rows; a diagnostic
        of the data, not private).

    Examples
    --------
    >>> total, norms = clipped_sum(np.array([[3.0, 4.0], [0.0, 1.0]]), C=2.0)
    >>> np.round(total, 12).tolist(), norms.tolist()
    ([1.2, 2.6], [5.0, 1.0])
    """
    Y, centre, scale = _check(Y, centre, scale)
    C = _v.check_nonnegative_finite("C", C)
    n, d = Y.shape
    total = np.zeros(d)
    norms = np.empty(n)
    for a, b, B in _rows(Y, centre, scale):
        nb = np.sqrt(np.einsum("ij,ij->i", B, B))
        norms[a:b] = nb
        factor = np.ones(b - a)
        far = nb > C
        factor[far] = C / nb[far]
        total += np.einsum("i,ij->j", factor, B)
    return total, norms
