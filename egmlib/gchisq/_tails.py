"""Certified tails at a batch of scaled points, in bounded memory.

Private helper of :mod:`egmlib.gchisq`. Points on the same side of the mean that lie
within a relative distance REUSE of each other share one contour pair, planned at
their median (:mod:`._planner`): K at a contour's nodes does not depend on x, and
the value at every point is certified on the pair at that point itself
(:mod:`._certify`: the two contours must agree there, or they are refined or
re-planned for that point). A point whose primary contour fails its own checks
away from the point it was planned for gets a pair of its own. The planned points
go to the planner at most PLAN_BATCH at a time, so that memory stays bounded
however many points are asked for; an isolated point is planned exactly as when
it is asked for alone in a batch of such points.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._certify import certified
from ._cumulants import Cumulants
from ._planner import ContourPair, plan_contours
from ._records import BoolArray, FloatArray, IntArray, TailRows
from ._saddlepoint import saddlepoint

#: Points within this relative distance of a planned point share its contour pair.
REUSE = 0.01
#: Most points planned in one batch (the planner's memory grows with the batch).
PLAN_BATCH = 256


def tails(cum: Cumulants, x: Any) -> TailRows:
    """Tails at scaled x > 0 (1-d array), T the smaller-side tail (upper if x >= mean),
    with floating-point warnings silenced (the values are checked instead)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        x = np.asarray(x, dtype=float)
        upper = x >= cum.mean
        rows = TailRows.empty(x.size)
        alone = []
        for idx, groups in _batches(x, upper):
            for pair, members in zip(_plans(cum, x[idx], upper[idx]), groups, strict=True):
                alone += _certify_group(cum, pair, x, upper, members, rows)
        alone_idx = np.array(alone, dtype=np.int64)
        for start in range(0, alone_idx.size, PLAN_BATCH):
            sel = alone_idx[start:start + PLAN_BATCH]
            for pair, i in zip(_plans(cum, x[sel], upper[sel]), sel, strict=True):
                _certify_group(cum, pair, x, upper, np.array([i]), rows)
    return rows


def _plans(cum: Cumulants, x: FloatArray, upper: BoolArray) -> list[ContourPair]:
    """A contour pair for each point (one planner batch)."""
    return plan_contours(cum, x, saddlepoint(cum, x), upper)


def _groups(x: FloatArray, upper: BoolArray) -> list[IntArray]:
    """The points grouped by proximity, each group on one side of the mean and
    spanning at most a factor 1 + REUSE; its median comes first (it is planned)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    n_lower = int(np.count_nonzero(~upper))  # the points below the mean come first
    out = []
    i = 0
    while i < xs.size:
        j = int(np.searchsorted(xs, xs[i] * (1.0 + REUSE), side="right"))
        if i < n_lower:
            j = min(j, n_lower)
        members = order[i:j]
        mid = (j - i) // 2
        out.append(np.concatenate([members[mid:mid + 1], members[:mid], members[mid + 1:]]))
        i = j
    return out


def _batches(x: FloatArray, upper: BoolArray) -> Iterator[tuple[IntArray, list[IntArray]]]:
    """Planner batches: the planned points (in the order they were given) and their
    groups, at most PLAN_BATCH groups at a time."""
    groups = sorted(_groups(x, upper), key=lambda g: int(g[0]))
    for start in range(0, len(groups), PLAN_BATCH):
        batch = groups[start:start + PLAN_BATCH]
        yield np.array([int(g[0]) for g in batch], dtype=np.int64), batch


def _certify_group(cum: Cumulants, pair: ContourPair, x: FloatArray, upper: BoolArray, members: IntArray,
                   rows: TailRows) -> list[int]:
    """Certified values at the group's points on the pair planned for its first
    point; returns the other points whose primary contour fails its own checks
    there (to be planned alone)."""
    alone = []
    for k, i in enumerate(members):
        xi = float(x[i])
        ra = None
        if k:
            ra = pair[0].tail(xi)
            if not ra.ok:
                alone.append(int(i))
                continue
        v = certified(cum, pair, xi, ra).value
        rows.put(i, (bool(upper[i]), v.log_t, v.f_over_t, v.fp_over_t, v.err))
    return alone
