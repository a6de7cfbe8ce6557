"""Certified tails at a batch of scaled points.

Private helper of :mod:`egmlib.gchisq`: the saddlepoints of the points, one contour
pair planned per point (:mod:`._planner`, all in one batch), and a certified value
on each pair (:mod:`._certify`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._certify import certified
from ._cumulants import Cumulants
from ._planner import plan_contours
from ._records import TailRows
from ._saddlepoint import saddlepoint


def tails(cum: Cumulants, x: Any) -> TailRows:
    """Tails at scaled x > 0 (1-d array), T the smaller-side tail (upper if x >= mean),
    with floating-point warnings silenced (the values are checked instead)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        x = np.asarray(x, dtype=float)
        upper = x >= cum.mean
        pairs = plan_contours(cum, x, saddlepoint(cum, x), upper)
        rows = TailRows.empty(x.size)
        for i, pair in enumerate(pairs):
            v = certified(cum, pair, float(x[i])).value
            rows.put(i, (bool(upper[i]), v.log_t, v.f_over_t, v.fp_over_t, v.err))
    return rows
