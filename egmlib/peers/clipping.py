r"""The clipped sum shared by PLAN and IOME: :math:`\sum_i \min(1, C/\|y_i\|)\,y_i`.

Every clipped row has norm at most :math:`C`, so substituting one row moves the sum by
at most :math:`2C` in :math:`\ell_2` (attained by two antipodal far rows): the
sensitivity for which PLAN (Aumuller et al. 2024) and IOME (Huang, Liang and Yi 2021)
calibrate their Gaussian noise, as Algorithm 3 does for its transformed sum (report,
Section 4).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from egmlib import _validation as _v
from egmlib.peers._checks import check_data

__all__ = ["clipped_sum"]


def clipped_sum(Y: Any, *, C: float) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\sum_i \min(1, C/\|y_i\|)\,y_i` and the row norms :math:`\|y_i\|`.

    Rows with norm at most :math:`C` are kept as they are; the others are scaled onto
    the sphere of radius :math:`C`.  ``C = 0`` clips every row to 0.

    Parameters
    ----------
    Y : array_like, shape (n, d), finite
    C : float, finite and >= 0

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
    Y = check_data(Y)
    C = _v.check_nonnegative_finite("C", C)
    norms = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    scale = np.ones(Y.shape[0])
    far = norms > C
    scale[far] = C / norms[far]
    return scale @ Y, norms
