r"""Public normalisation: estimate on the unit box, report on the caller's box.

A private estimator with a public box :math:`[\ell, u]^d` can compute on the data mapped to
the unit box :math:`[0, 1]^d` by the public affine map

.. math::

    T(x) = \operatorname{clip}\bigl((x - \ell)/w,\ 0,\ 1\bigr), \qquad w = u - \ell,

applied to every entry of every row, and map its release back by
:math:`T^{-1}(t) = \operatorname{clip}(\ell + t\,w,\ \ell,\ u)` (and a length :math:`s`, such as a
standard deviation, by :math:`s\,w`).  Then no intermediate quantity of the estimator depends
on the magnitude of the box: the data, the squared differences of rows, the logarithms of
scales and the distances all lie in ranges fixed by :math:`n`, :math:`d` and :math:`\rho`
alone.  Without the map, a box of :math:`\pm 6.7\times10^{153}` makes the square of a
difference of two rows overflow and a box :math:`[0, 10^{-157}]` makes the public floor of the
log scales underflow to 0, and in both an exception decided by one row is a release with
unbounded privacy loss.

Privacy (the book's Proposition F.1, on the floating-point page): :math:`T` is computed from
the public :math:`\ell, u` and one row at a time, in floating point as in exact arithmetic,
so neighbouring datasets (one row substituted) map to neighbouring datasets of the unit box,
and every step's sensitivity, stated for rows in its box, holds unchanged; mapping the
release back is post-processing.  The clamp puts the rounding spill of :math:`T`
(an entry at :math:`1 + 2^{-52}`) back in the box, so each step's bound sees rows in
:math:`[0, 1]^d` exactly.

:class:`UnitBox` holds the map; :func:`unit_box` builds it from a checked box.  The map is the
identity on the unit box itself, bit for bit, so an estimator that normalises on entry can be
called on normalised data again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import validation as _v
from egmlib.validation import FloatArray

__all__ = ["UnitBox", "unit_box"]


@dataclass(frozen=True)
class UnitBox:
    """The public affine map of the box ``[lower, upper]`` onto ``[0, 1]`` (module docstring).

    Build it with :func:`unit_box`, which checks the box.
    """

    lower: float  #: the caller's box, lower end
    upper: float  #: the caller's box, upper end
    width: float  #: upper - lower, finite and > 0 (rounded)

    def to_unit(self, X: Any) -> FloatArray:
        r"""Every entry :math:`x` of ``X`` as :math:`\operatorname{clip}((x - \ell)/w, 0, 1)`.

        ``X`` must be finite; entries outside the box land on its faces (the data's public
        domain, as :func:`egmlib.clipping.clamp_to_box`).  A fresh float64 array.

        Examples
        --------
        >>> unit_box(lower=-2.0, upper=6.0).to_unit([[-2.0, 0.0, 6.0, 9.0]]).tolist()
        [[0.0, 0.25, 1.0, 1.0]]
        """
        A = _v.check_finite_array("X", X)
        return _to_unit(A, self.lower, self.width)

    def from_unit(self, T: Any) -> FloatArray:
        r"""Points of the unit box back in the caller's box: :math:`\operatorname{clip}(\ell + t\,w, \ell, u)`.

        Post-processing of a release; entries of ``T`` outside ``[0, 1]`` (a noisy release)
        land on the box's faces, where the mean of data in the box lies.

        Examples
        --------
        >>> unit_box(lower=-2.0, upper=6.0).from_unit([0.0, 0.25, 1.0, 1.5]).tolist()
        [-2.0, 0.0, 6.0, 6.0]
        """
        A = _v.check_finite_array("T", T)
        with np.errstate(over="ignore", under="ignore"):
            out = self.lower + A * self.width
        return np.clip(out, self.lower, self.upper)

    def length_to_unit(self, s: Any, *, name: str = "s") -> FloatArray:
        r"""Lengths (standard deviations, radii) in units of the box's width: :math:`s / w`.

        ``name`` is the caller's name of ``s`` in the messages (a ValueError where
        :math:`s/w` overflows).

        Examples
        --------
        >>> unit_box(lower=-2.0, upper=6.0).length_to_unit([4.0, 2.0]).tolist()
        [0.5, 0.25]
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got name of type {type(name).__name__}")
        A = _v.check_finite_array(name, s)
        with np.errstate(over="ignore", under="ignore"):
            out = A / self.width
        _v.check_finite_result(out, what=f"{name} / (upper - lower)", inputs=f"{name} or 1 / (upper - lower)")
        return out

    def length_from_unit(self, s: Any) -> FloatArray:
        r"""Lengths on the unit box back in the caller's units: :math:`s\,w` (inf beyond the float64 range).

        Examples
        --------
        >>> unit_box(lower=-2.0, upper=6.0).length_from_unit([0.5]).tolist()
        [4.0]
        """
        A = _v.as_real_array("s", s, nonempty=False)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return A * self.width


def _to_unit(A: np.ndarray, lower: float, width: float) -> FloatArray:
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.subtract(A, lower)  # finite: lower <= x <= upper after the clip below, beyond: +-inf at worst
        out /= width
    np.clip(out, 0.0, 1.0, out=out)
    return out


def unit_box(*, lower: float, upper: float) -> UnitBox:
    r"""The public map of ``[lower, upper]`` onto the unit box (the book's Proposition F.1).

    It maps neighbours in the report's Definition 2.1 sense (one row substituted) to
    neighbours of the unit box.

    Parameters
    ----------
    lower, upper : float, finite, lower < upper, with a finite width ``upper - lower``

    Returns
    -------
    UnitBox

    Examples
    --------
    >>> box = unit_box(lower=0.0, upper=1e-157)
    >>> box.to_unit([[5e-158]]).tolist(), box.from_unit([0.5]).tolist()
    ([[0.5]], [5e-158])
    >>> unit_box(lower=0.0, upper=1.0).width
    1.0
    """
    lower, upper = _v.check_bounds(lower, upper)
    return UnitBox(lower=lower, upper=upper, width=upper - lower)
