"""Named records and array types shared by the modules of :mod:`egmlib.gchisq`.

Private helper. A tail T is the probability on the side of the mean that x lies on
(P(Q > x) above the mean, P(Q <= x) below it), f the density of Q; every module
that computes tails returns them as a :class:`TailRows` (vectorised) or a
:class:`TailValue` (one point on one contour).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.floating[Any]]
ComplexArray = NDArray[np.complexfloating[Any, Any]]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class TailValue:
    """The tail at one scaled x as one contour (or a certified pair) gives it.

    Attributes
    ----------
    log_t : float
        log T.
    f_over_t : float
        f / T (the density over the tail: minus the derivative of log T for the
        upper tail, plus it for the lower one).
    fp_over_t : float
        f' / T.
    err : float
        Estimated relative error of T.
    ok : bool
        False if the contour's own checks failed (non-finite values, a coarse rule
        far off the error model, a non-negligible last node).
    """

    log_t: float
    f_over_t: float
    fp_over_t: float
    err: float
    ok: bool


@dataclass(frozen=True, slots=True)
class TailRows:
    """Tails at many scaled x (the arrays have one entry per point; filled in place).

    Attributes
    ----------
    upper : bool array
        Whether T is the upper tail P(Q > x) (else the lower tail P(Q <= x)).
    log_t, f_over_t, fp_over_t, err : float arrays
        As in :class:`TailValue`.
    """

    upper: BoolArray
    log_t: FloatArray
    f_over_t: FloatArray
    fp_over_t: FloatArray
    err: FloatArray

    @classmethod
    def empty(cls, n: int) -> TailRows:
        """Rows for n points, to be filled."""
        return cls(np.zeros(n, dtype=bool), np.empty(n), np.empty(n), np.empty(n), np.empty(n))

    def put(self, where: BoolArray | IntArray | int | np.integer[Any],
            rows: TailRows | tuple[bool, Any, Any, Any, Any]) -> None:
        """Store rows (or one point's (upper, log T, f/T, f'/T, err)) at the positions ``where``."""
        src = rows if isinstance(rows, tuple) else (rows.upper, rows.log_t, rows.f_over_t, rows.fp_over_t, rows.err)
        for dst, val in zip((self.upper, self.log_t, self.f_over_t, self.fp_over_t, self.err), src, strict=True):
            dst[where] = val

    def at(self, i: int) -> tuple[bool, np.float64, np.float64, np.float64, np.float64]:
        """(upper, log T, f/T, f'/T, err) of point i (numpy scalars: arithmetic on them
        follows numpy's floating-point rules, e.g. x / 0 = inf)."""
        return bool(self.upper[i]), self.log_t[i], self.f_over_t[i], self.fp_over_t[i], self.err[i]


@dataclass(frozen=True)
class Crossings:
    """Where the contours for a batch of scaled x cross the real axis (one entry per x).

    Attributes
    ----------
    x : float array
        The scaled points.
    upper : bool array
        Upper tail (crossing right of 0) or lower tail.
    c : float array
        The crossing points.
    zc : float array
        zeta_c = 1/2 - c where the zeta form is used, NaN elsewhere.
    zc_eff : float array
        zeta_c everywhere (1/2 - c where zc is NaN).
    k : float array, shape (4, m)
        K, K', K'', K''' at c.
    lsize : float array
        log of the normalised half-line integral (the size the errors are relative to).
    """

    x: FloatArray
    upper: BoolArray
    c: FloatArray
    zc: FloatArray
    zc_eff: FloatArray
    k: FloatArray
    lsize: FloatArray

    def take(self, idx: IntArray) -> Crossings:
        """The crossings of the points ``idx`` (with repetitions)."""
        return Crossings(self.x[idx], self.upper[idx], self.c[idx], self.zc[idx], self.zc_eff[idx],
                         self.k[:, idx], self.lsize[idx])
