r"""Tails of Q = sum_j w_j Z_j^2 where the contour integral is not needed or not
usable on its own. Private helper of :mod:`egmlib.gchisq`; weights scaled so
that the largest is 1, x scaled alike. Every function returns
:class:`._records.TailRows` (upper?, log T, f/T, f'/T, err), T the tail on the side
of the mean x lies on, f the density, err an estimated relative error of T.

- One weight: Q = Z^2, P(Q > x) = erfc(sqrt(x/2)), in logarithms through
  erfcx for large x; P(Q <= x) = erf(sqrt(x/2)).
- Far upper tail, x >= 2^250: with m weights equal to the largest (1) and
  G(s) = prod_{w_j < 1} (1 - 2 w_j s)^(-1/2) analytic at s = 1/2, expanding
  G(s)/s about s = 1/2 in the inversion integral (Watson's lemma) gives
      P(Q > x) = e^{-x/2} (x/2)^{m/2-1} / Gamma(m/2) prod_{w_j<1} (1 - w_j)^{-1/2}
                 (1 + O(m (2 + sum_{w_j<1} w_j/(1 - w_j)) / x)),
  and since 1 - w_j >= 2^-53 for every w_j < 1, the correction is below
  d^2 2^53 2^-250 < 1e-41 for any d <= 1e9: the leading term is exact.
- Far lower tail, x <= 2^-200: a weight w >= x 2^80 contributes the factor
  (1 - 2 w s)^(-1/2) = (2 w)^(-1/2) (-s)^(-1/2) (1 + O(2^-78)) wherever the
  inversion contour for P(Q <= x) runs (|s| >~ 1/x there), so n such weights
  make a branch point of order n/2 at s = 0 with a known constant
  (Cumulants(pole=n/2)); weights whose total is below x 2^-90 change
  P(Q <= x) by less than d 2^-70 (relative) and are dropped. Without other
  weights the integral is Hankel's, P(Q <= x) = x^{n/2} / Gamma(n/2 + 1)
  prod_j (2 w_j)^{-1/2}, the leading term of the small-x series; otherwise
  the contour integral (:mod:`._tails`) is taken with the branch point, on
  the remaining weights rescaled so that the largest is 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from . import _tails
from ._cumulants import Cumulants
from ._records import FloatArray, TailRows

#: Beyond these scaled arguments the contour is replaced (see module docstring).
X_HUGE = 2.0 ** 250
X_TINY = 2.0 ** -200
_HUGE_W = 2.0 ** 80  # weights >= x 2^80 enter the far lower tail as a branch point
_DROP = 2.0 ** -90  # weights summing to <= x 2^-90 are dropped there
_EPS = np.finfo(float).eps
_SQRT2PI = math.sqrt(2.0 * math.pi)


def chi2_1(x: Any) -> TailRows:
    """Tails of Q = Z^2 at x > 0 (array)."""
    x = np.asarray(x, dtype=float)
    z = np.sqrt(x) * math.sqrt(0.5)  # (x / 2 would underflow for subnormal x)
    up = x >= 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # upper: erfc(z) = erfcx(z) exp(-z^2), exp(-x/2) formed from x itself
        ex = special.erfcx(z)
        lt_up = np.log(ex) - 0.5 * x
        fo_up = 1.0 / (_SQRT2PI * np.sqrt(x) * ex)
        # lower: erf(z), accurate to the last digits for tiny z
        er = special.erf(z)
        lt_lo = np.log(er)
        fo_lo = np.exp(-0.5 * x) / (_SQRT2PI * np.sqrt(x) * er)
    fo = np.where(up, fo_up, fo_lo)
    return TailRows(up, np.where(up, lt_up, lt_lo), fo, fo * (-0.5 / x - 0.5), np.full(x.shape, 8.0 * _EPS))


def chi2_1_far(xh: Any, lx: Any) -> Any:
    """log P(Z^2 > x) from x/2 and log x, x beyond the doubles:
    erfc(z) = e^{-z^2} / (z sqrt(pi)) (1 - 1/(2 z^2) + ...), z^2 = x/2 >= 1e307."""
    return -xh - 0.5 * (lx - math.log(2.0)) - 0.5 * math.log(math.pi)


class UpperTail:
    """Leading term of the far upper tail (module docstring)."""

    def __init__(self, w: FloatArray) -> None:
        w = np.asarray(w, dtype=float)
        one = w == 1.0
        self.m = int(np.count_nonzero(one))
        rest = w[~one]
        self.lprod = -0.5 * float(np.sum(np.log1p(-rest)))
        self.h1 = 2.0 + float(np.sum(rest / (1.0 - rest)))

    def from_half(self, xh: Any, lx: Any) -> Any:
        """log P(Q > x) from x/2 and log x (for x itself beyond the doubles)."""
        half = 0.5 * self.m
        return -xh + (half - 1.0) * (lx - math.log(2.0)) - math.lgamma(half) + self.lprod

    def __call__(self, x: Any) -> TailRows:
        x = np.asarray(x, dtype=float)
        half = 0.5 * self.m
        lt = -0.5 * x + (half - 1.0) * np.log(0.5 * x) - math.lgamma(half) + self.lprod
        fo = 0.5 + (1.0 - half) / x
        corr = abs(half - 1.0) * self.h1 / x
        return TailRows(np.ones(x.size, dtype=bool), lt, fo, -0.5 * fo, corr + corr * corr + 8.0 * _EPS)


class LowerTail:
    """The far lower tail (module docstring); rescaled problems are cached by
    which weights they keep."""

    def __init__(self, w: FloatArray) -> None:
        self.w = np.asarray(w, dtype=float)  # sorted, descending, w[0] = 1
        self.logw2 = np.log(2.0 * self.w)
        self.cum_from_end = np.cumsum(self.w[::-1])
        self._cache: dict[tuple[int, int], Cumulants] = {}

    def __call__(self, x: Any, shift: int = 0) -> TailRows:
        """Rows at scaled x 2^-shift (x given times 2^shift, so that subnormal
        arguments keep their digits)."""
        x = np.asarray(x, dtype=float)
        out = TailRows.empty(x.size)
        for i, xi in enumerate(x):
            out.put(i, self._one(float(xi), shift))
        return out

    def _split(self, x: float, shift: int = 0) -> tuple[int, int]:
        """(kh, ke): the weights w[:kh] enter as the branch point at 0, w[ke:] are dropped."""
        w = self.w
        thr = math.ldexp(x * _HUGE_W, -shift)
        kh = int(np.searchsorted(-w, -thr, side="right"))  # w >= x 2^80
        kd = int(np.searchsorted(self.cum_from_end, math.ldexp(x * _DROP, -shift), side="right"))
        return kh, max(w.size - kd, kh)

    def _one(self, x: float, shift: int = 0) -> tuple[bool, float, float, float, float]:
        """(upper, log T, f/T, f'/T, err) of the lower tail at x 2^-shift."""
        kh, ke = self._split(x, shift)
        w = self.w
        half = 0.5 * kh
        lconst = -0.5 * float(np.sum(self.logw2[:kh]))
        lx = math.log(x) - shift * math.log(2.0)
        if ke == kh:
            # Hankel: P(Q <= x) = x^(n/2) / Gamma(n/2 + 1) prod (2 w_j)^(-1/2)
            lt = half * lx - math.lgamma(half + 1.0) + lconst
            fo = float(np.ldexp(half / x, shift))  # may overflow to inf: fine
            err = kh * 2.0 ** -78 + w.size * 2.0 ** -70 + 8.0 * _EPS * (1.0 + abs(lt))
            return False, lt, fo, fo * float(np.ldexp((half - 1.0) / x, shift)), err
        r = float(w[kh])
        key = (kh, ke)
        cum = self._cache.get(key)
        if cum is None:
            # log(2 u_j) with u_j = w_j / r, summed: the constant of the branch point
            pole_c = -0.5 * float(np.sum(self.logw2[:kh] - math.log(r)))
            cum = Cumulants(w[kh:ke] / r, pole=half, pole_c=pole_c)
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = cum
        q = x / r
        xv = math.ldexp(q, -shift) if math.isfinite(q) else \
            math.exp(math.log(x) - math.log(r) - shift * math.log(2.0))
        _, lt, fo, fpo, err = _tails.tails(cum, np.array([xv])).at(0)
        return False, lt, fo / r, fpo / (r * r), err + kh * 2.0 ** -78 + w.size * 2.0 ** -70
