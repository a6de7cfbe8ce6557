r"""Tails and quantiles of weighted sums of chi-square variables.

The squared norm of a centred Gaussian vector with independent coordinates is

.. math:: Q = \sum_{j=1}^d w_j Z_j^2, \qquad w_j \ge 0,\ Z_j \sim N(0, 1) \text{ i.i.d.},

a generalized chi-square. The report {cite}`poulsen2023` needs its upper quantile
at probability :math:`1/n` in two places: the clipping radius :math:`C` of
Algorithm 3 (Section 4, :math:`\Pr[\|(x_i - \hat\mu) \odot b\|^2 > C^2] \le 1/n`),
and the thresholds :math:`C_n^2` (weights :math:`\sigma_j^2`) and :math:`C_t^2`
(weights :math:`\sigma_j / \sum_i \sigma_i`) of the empirical Section 5. The report
obtained them with chi2comb (Davies' algorithm {cite}`davies1980`) at absolute
tolerance :math:`1/n`, which does not bound the relative error of a tail
probability that is itself :math:`1/n`.

Method (default ``backend="native"``, numpy and scipy only):

- the upper tail is computed directly, never as ``1 - cdf``, by inverting the
  moment generating function :math:`M(s) = \prod_j (1 - 2 w_j s)^{-1/2}`:
  :math:`\Pr(Q > x) = \frac{1}{2\pi i}\int_\Gamma M(s) e^{-sx} \frac{ds}{s}` along a
  parabola :math:`\Gamma` that crosses the real axis at the saddlepoint
  :math:`\hat s` (:math:`K'(\hat s) = x`, :math:`K = \log M`) and bends to the right,
  so that :math:`e^{-sx}` decays like a Gaussian; below the mean the same integral
  with the crossing point left of 0 gives the lower tail; within half a standard
  deviation of the mean the crossing point is moved away from the pole at 0;
  the curvature of the parabola is chosen among multiples of the osculating
  value of the steepest-descent path, rejecting those that pass close to the
  branch cuts :math:`[1/(2 w_j), \infty)`;
- the integral is evaluated with the trapezoidal rule, which converges
  geometrically for integrands analytic in a strip {cite}`trefethen2014`; the step
  and the number of nodes come from measured bounds of the integrand on the
  strip's edges, including the humps that a cluster of n (nearly) equal weights
  raises there (height ~ kappa^(-n/2) at a fixed Re y, invisible at the edge's
  centre);
- every value is computed on two parabolas of different curvature, whose
  singularities sit at different places: their discretisation errors are
  unrelated, so their agreement certifies the value (halving the step cannot:
  near a high-order singularity the rules with steps h and h/2 can agree while
  both are wrong); they are refined or re-planned until they agree, and the
  reported error estimate is the larger of their difference and the a-priori,
  rounding and truncation estimates;
- everything is in logarithms, with :math:`e^{K(c) - cx}` factored out, so that
  tail probabilities down to the underflow limit keep full relative accuracy;
- the cost of a node does not grow with :math:`d`: the sorted weights are cut
  into bins of relative width :math:`2^{1/4}`, each summed through power series
  about its centre, the small weights through one series in the power sums
  :math:`\sum_j w_j^k` (set-up :math:`O(48 d)` once per weight vector), with a
  weight-by-weight fallback wherever a series would converge slowly;
- near the largest branch point the contour is also carried as
  :math:`\zeta = 1/2 - s`, so that far upper tails keep full accuracy; beyond
  :math:`x / \max_j w_j = 2^{250}` the leading term of the expansion at that branch
  point is exact in double precision, below :math:`2^{-200}` the weights far above
  x enter through their exact leading factor (a branch point of order n/2 at 0)
  and the rest through the contour; one weight uses the chi-square(1) closed
  forms: sf, logsf, cdf and logcdf are defined and accurate for every x from the
  smallest positive double to the largest;
- many points: points on one side of the mean within 1 % of each other share a
  contour pair planned at their median (the values at the nodes do not depend on
  x), each value still certified on that pair at its own point, and a new pair is
  planned where the primary contour fails its own checks there; at most 256 points
  are planned at a time, so that memory stays bounded (10^5 points in about 3 s and
  0.1 GB, ``benchmarks/gchisq_many_points.py``);
- quantiles: Halley's method on :math:`\log \Pr(Q > x) - \log p`, started from
  the saddlepoint approximation (Lugannani-Rice {cite}`lugannani1980`, in
  Barndorff-Nielsen's :math:`r^*` form), whose relative error stays bounded but
  not small in the far tail {cite}`chen2019`; Brent's method on certified values
  where Halley does not converge.

Where the error estimate exceeds ``1e-10`` (relative; plus a few units in the last
place of :math:`\log T` in tails beyond the doubles) a :class:`RuntimeWarning` is
issued with the estimate; no value is returned silently with a larger error.
Tested against independent references for p from 1e-300 to 0.5 on equal weights,
weights of multiplicity two, Zipf weights, a few large weights over hundreds of
equal ones, near-equal clusters, random clusters and many multiplicities, weight
ratios to 1e300, zeros and subnormals (see ``tests/test_gchisq.py`` and
``benchmarks/gchisq.py``).

``backend="chi2comb"`` in :func:`isf` repeats the report's computation (Davies at
absolute tolerance ``p``, bisection on the CDF stopped once
``|F(c) - (1 - p)| <= p / 10``) when the optional package chi2comb is importable.

Examples
--------
>>> import numpy as np
>>> from egmlib import gchisq
>>> w = np.array([1.0, 0.5, 0.25])
>>> float(gchisq.sf(0.0, w=w)), gchisq.mean(w), gchisq.var(w)
(1.0, 1.75, 2.625)
>>> x = gchisq.isf(1e-6, w=w)
>>> print(f"{float(gchisq.sf(x, w=w)):.12e}")
1.000000000000e-06
>>> from scipy import stats   # equal weights: a scaled chi-square
>>> x = gchisq.isf(1e-12, w=np.full(10, 2.0))
>>> bool(abs(x / (2.0 * stats.chi2.isf(1e-12, 10)) - 1.0) < 1e-12)
True
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib import validation as _v

from . import _checks, _chi2comb, _cumulants, _extreme, _quantiles, _tails
from ._chi2comb import BisectionTrace, report_bisection
from ._records import FloatArray, TailRows

__all__ = [
    "WeightedChiSquare",
    "sf",
    "logsf",
    "cdf",
    "logcdf",
    "isf",
    "mean",
    "var",
    "RTOL",
    "engine_checks",
    "BisectionTrace",
    "report_bisection",
    "STOP_FRACTION",
    "MAX_BISECTION_STEPS",
]

# defined in the private module of the chi2comb backend; documented and referenced here
BisectionTrace.__module__ = report_bisection.__module__ = __name__

#: The relative accuracy promised for tail probabilities and quantiles.
RTOL = 1e-10
#: Half-width of the report's stopping rule in :func:`report_bisection`, in units of p
#: (stop once ``|F(c) - (1 - p)| <= p / 10``).
STOP_FRACTION = _chi2comb.STOP_FRACTION
#: Most steps a run of :func:`report_bisection` can take (``max_steps`` at most): 1024
#: doublings reach the largest float, and about 1130 halvings take a float bracket down
#: to adjacent floats.
MAX_BISECTION_STEPS = _chi2comb.MAX_STEPS
_EPS = float(np.finfo(float).eps)


def _validate_weights(w: ArrayLike) -> NDArray[np.float64]:
    """Weights: a non-empty 1-d array, finite, ``>= 0``, at least one positive."""
    return _v.check_nonnegative_vector("w", w)


def _validate_x(x: ArrayLike) -> NDArray[np.float64]:
    """Points: real numbers of any shape; +-inf allowed (the limits), NaN not."""
    arr = _v.as_real_array("x", x, nonempty=False)
    if np.any(np.isnan(arr)):
        raise ValueError("x must not be NaN (x = +-inf are the limits), got a NaN in x")
    return arr


def _out(arr: NDArray[np.float64], shape: tuple[int, ...]) -> Any:
    arr = arr.reshape(shape)
    return arr[()] if arr.ndim == 0 else arr


class WeightedChiSquare:
    r"""The distribution of :math:`Q = \sum_j w_j Z_j^2` for one weight vector.

    The set-up (validation, sorting, scaling by :math:`\max_j w_j`, dropping zero
    weights) is done once; the methods are vectorised over ``x`` or ``p``.
    This is the generalized chi-square behind the clipping radius :math:`C` of
    the report's Algorithm 3 (Section 4) and the thresholds :math:`C_n`, :math:`C_t`
    of its Section 5 {cite}`poulsen2023`.

    Parameters
    ----------
    w : array_like
        Weights, finite and ``>= 0``, at least one positive. Zero weights (for
        instance Zipf weights that underflow in float64) contribute nothing.
    """

    def __init__(self, w: ArrayLike) -> None:
        arr = _validate_weights(w)
        pos = arr[arr > 0]
        scale = float(pos.max())
        ws = np.sort(pos / scale)[::-1].copy()
        ws[0] = 1.0
        self._scale = scale
        self._cum = _cumulants.Cumulants(ws)
        self.d = int(arr.size)
        self.d_positive = int(pos.size)
        self._upper_far: _extreme.UpperTail | None = None
        self._lower_far: _extreme.LowerTail | None = None

    # -- moments -----------------------------------------------------------
    def mean(self) -> float:
        r""":math:`E[Q] = \sum_j w_j`: with weights :math:`\sigma_j/\sum_i\sigma_i`
        (Algorithm 3, Section 4 of the report) it is 1."""
        with np.errstate(over="ignore"):
            out = float(self._scale * self._cum.mean)
        _v.check_finite_result(out, what="the mean sum(w)", inputs="w")
        return out

    def var(self) -> float:
        r""":math:`\mathrm{Var}[Q] = 2\sum_j w_j^2`, the variance in the report's
        Bernstein bound on :math:`C` (Section 4)."""
        with np.errstate(over="ignore"):
            out = float(self._scale ** 2 * self._cum.var)
        _v.check_finite_result(out, what="the variance 2 sum(w^2)", inputs="w")
        return out

    # -- tails -------------------------------------------------------------
    def _upper(self) -> _extreme.UpperTail:
        """The far upper tail's leading term (built on first use)."""
        if self._upper_far is None:
            self._upper_far = _extreme.UpperTail(self._cum.w)
        return self._upper_far

    def _lower(self) -> _extreme.LowerTail:
        """The far lower tail (built on first use)."""
        if self._lower_far is None:
            self._lower_far = _extreme.LowerTail(self._cum.w)
        return self._lower_far

    def _raw(self, xs: ArrayLike, shift: int = 0) -> TailRows:
        """Tails at scaled x > 0 (finite array), T the tail on the side of the mean:
        chi-square(1) closed forms for one weight, the contour integral, or the
        far-tail forms of :mod:`._extreme`. With shift > 0 the scaled x is
        xs 2^-shift (far lower tail only)."""
        xs = np.asarray(xs, dtype=float)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
            if shift:
                if self.d_positive == 1:
                    return _extreme.chi2_1(np.ldexp(xs, -shift))
                return self._lower()(xs, shift)
            if self.d_positive == 1:
                return _extreme.chi2_1(xs)
            out = TailRows.empty(xs.size)
            huge = xs >= _extreme.X_HUGE
            tiny = xs <= _extreme.X_TINY
            mid = ~(huge | tiny)
            if np.any(mid):
                out.put(mid, _tails.tails(self._cum, xs[mid]))
            if np.any(huge):
                out.put(huge, self._upper()(xs[huge]))
            if np.any(tiny):
                out.put(tiny, self._lower()(xs[tiny]))
        return out

    def _tails(self, x: ArrayLike, want_sf: bool) -> NDArray[np.float64]:
        """log sf (want_sf) or log cdf at x (array), after checking the error
        estimate of that quantity (the computed tail T carries relative error e;
        1 - T then carries e T / (1 - T))."""
        return self._tails_and_errors(x, want_sf)[0]

    def _tails_and_errors(self, x: ArrayLike, want_sf: bool) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(log sf or log cdf, its estimated relative error) at x, warning where the
        estimate exceeds RTOL (see :meth:`_tails`)."""
        x = _validate_x(x)
        flat = x.ravel()
        lsf = np.empty(flat.size)
        lcdf = np.empty(flat.size)
        errors = np.zeros(flat.size)
        low = flat <= 0
        inf = np.isposinf(flat)
        with np.errstate(over="ignore"):
            # x / max(w) overflowing: the far upper tail from x/2 / max(w)
            over = np.isposinf(flat / self._scale) & ~low & ~inf
        lsf[low], lcdf[low] = 0.0, -np.inf
        lsf[inf], lcdf[inf] = -np.inf, 0.0
        if np.any(over):
            res = self._beyond_doubles(flat[over])
            lsf[over], lcdf[over] = res, -np.exp(res)
            inf |= over
        mid = ~(low | inf)
        if np.any(mid):
            rows = self._rows(flat[mid])
            upper = rows.upper
            lt = rows.log_t
            with np.errstate(divide="ignore"):
                other = np.log(-np.expm1(lt))
            lsf[mid] = np.where(upper, lt, other)
            lcdf[mid] = np.where(upper, other, lt)
            err_t = rows.err
            with np.errstate(over="ignore", invalid="ignore"):
                err_o = err_t * np.exp(lt - other)
            err = np.where(upper == want_sf, err_t, err_o)
            mine = np.where(upper == want_sf, lt, other)
            what = "tail probability P(Q > x)" if want_sf else "distribution function P(Q <= x)"
            self._check(err, what, flat[mid], mine)
            errors[mid] = err
        out = lsf if want_sf else lcdf
        return out.reshape(x.shape), errors.reshape(x.shape)

    def _beyond_doubles(self, x: FloatArray) -> FloatArray:
        """log P(Q > x) where x / max(w) overflows: the far upper tail from
        x/2 / max(w) and log x (if even x/2 / max(w) overflows, log P(Q > x) is
        below -1.8e308: -inf)."""
        with np.errstate(over="ignore", invalid="ignore"):
            half = (0.5 * x) / self._scale
            lx = np.log(x) - math.log(self._scale)
            if self.d_positive > 1:
                return np.asarray(self._upper().from_half(half, lx))
            return np.asarray(_extreme.chi2_1_far(half, lx))

    def _rows(self, x: FloatArray) -> TailRows:
        """Tails at unscaled finite x > 0, raising RuntimeError where one is not a
        number. Below 2^-1000, x / max(w) would lose digits (or underflow): the far
        lower tail takes x 2^a / (max(w) 2^-b), both normal, and the shift a + b."""
        xs = x / self._scale
        rows = TailRows.empty(xs.size)
        sub = xs < 2.0 ** -1000
        if np.any(~sub):
            rows.put(~sub, self._raw(xs[~sub]))
        for i in np.nonzero(sub)[0]:
            xi = float(x[i])
            a, b = -math.frexp(xi)[1], math.frexp(self._scale)[1]
            xr = math.ldexp(xi, a) / math.ldexp(self._scale, -b)
            rows.put(i, self._raw(np.array([xr]), shift=a + b).at(0))
        ok = np.isfinite(rows.log_t) | (rows.log_t == -np.inf)
        if not np.all(ok):
            raise RuntimeError(f"gchisq: the tail computation failed at x={x[~ok][0]!r}")
        return rows

    @staticmethod
    def _check(err: FloatArray, what: str, at: FloatArray, logt: FloatArray | None = None) -> None:
        """Warn where the estimated relative error exceeds RTOL (plus the few
        units in the last place of log T that a double can represent: in the
        far tails log T itself is a large number)."""
        lim = RTOL if logt is None else RTOL + 8.0 * _EPS * np.abs(np.nan_to_num(logt))
        bad = ~(err <= lim)
        if np.any(bad):
            i = int(np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1.0)))
            warnings.warn(
                f"gchisq: estimated relative error {float(err[i]):.2e} of the {what} "
                f"exceeds {RTOL:g} at {float(at[i])!r}",
                RuntimeWarning, stacklevel=4)

    def logsf(self, x: ArrayLike) -> float | NDArray[np.float64]:
        r""":math:`\log\Pr(Q > x)`, the log of the report's clipping probability
        (Algorithm 3, Section 4), accurate down to the smallest tails (below the doubles)."""
        return _out(self._tails(x, True), np.shape(x))

    def sf(self, x: ArrayLike) -> float | NDArray[np.float64]:
        r""":math:`\Pr(Q > x)`, the report's clipping probability at :math:`C^2 = x`
        (Algorithm 3, Section 4); 1 for :math:`x \le 0`, 0 for :math:`x = \infty`."""
        return _out(np.exp(self._tails(x, True)), np.shape(x))

    def sf_error(self, x: ArrayLike) -> float | NDArray[np.float64]:
        r"""The engine's estimate of the relative error of :meth:`sf` at ``x``: the larger of
        the two contours' relative difference and the a-priori, rounding and truncation
        estimates (the number that :meth:`sf` compares with :data:`RTOL` before it warns), for
        the clipping probability of the report's Algorithm 3 (Section 4). 0 where the value
        is exact (``x <= 0``, ``x = inf``)."""
        return _out(self._tails_and_errors(x, True)[1], np.shape(x))

    def logcdf(self, x: ArrayLike) -> float | NDArray[np.float64]:
        r""":math:`\log\Pr(Q \le x)`, the report's :math:`\log F` of Section 5, with full
        relative accuracy in the lower tail."""
        return _out(self._tails(x, False), np.shape(x))

    def cdf(self, x: ArrayLike) -> float | NDArray[np.float64]:
        r""":math:`\Pr(Q \le x)`, the distribution function :math:`F` that the report's
        Section 5 bisects; 0 for :math:`x \le 0`, 1 for :math:`x = \infty`."""
        return _out(np.exp(self._tails(x, False)), np.shape(x))

    # -- quantiles ---------------------------------------------------------
    def _inverse(self, logt: FloatArray, upper: bool) -> tuple[FloatArray, FloatArray]:
        """Scaled x with log T(x) = logt, T the upper (or lower) tail; returns
        (x, estimated relative error of x)."""
        logt = np.asarray(logt, dtype=float)
        if self.d_positive == 1:
            with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
                return _chi2_1_quantile(logt, upper)
        x = np.empty(logt.size)
        xerr = np.full(logt.size, np.inf)
        far = np.zeros(logt.size, dtype=bool)
        if not upper:
            # leading term of the lower tail: P(Q <= x) ~ C x^(d/2); where it
            # puts x in the far lower tail, solve on the far-tail forms
            w = self._cum.w
            half = 0.5 * w.size
            lx = (logt + math.lgamma(half + 1.0) + 0.5 * float(np.sum(np.log(2.0 * w)))) / half
            far = lx < math.log(_extreme.X_TINY) + 40.0
        if np.any(~far):
            q = _quantiles.quantiles(self._cum, logt[~far], upper)
            x[~far], xerr[~far] = q.x, q.err
            far[np.nonzero(~far)[0][q.failed]] = True
        for i in np.nonzero(far)[0]:
            x[i], xerr[i] = self._bracketed(float(logt[i]), upper)
        return x, xerr

    def _side(self, xs: float, upper: bool) -> tuple[float, float, float]:
        """(log of the requested tail, d log T / dx, relative error) at scaled xs."""
        up, lt_own, fo, _, err = self._raw(np.array([xs])).at(0)
        if up == upper:
            return lt_own, (-fo if upper else fo), err
        lt = math.log(-math.expm1(lt_own))
        ratio = math.exp(lt_own - lt)
        return lt, (fo * ratio if upper else -fo * ratio), err * ratio

    def _bracketed(self, logt: float, upper: bool) -> tuple[float, float]:
        """Brent's method (scipy.optimize.brentq) on log T(x) - logt in log x,
        with T from :meth:`_raw`; T is monotone, so the sign change found by
        doubling (halving) the bracket is the only one."""
        from scipy.optimize import brentq

        cache: dict[float, tuple[float, float, float]] = {}

        def g(u: float) -> float:
            if u not in cache:
                cache[u] = self._side(math.exp(u), upper)
            return cache[u][0] - logt

        sgn = 1.0 if upper else -1.0  # sign of g left of the root
        a = b = math.log(self._cum.mean) if upper else max(
            (logt + 50.0) / max(0.5 * self._cum.d, 0.5), math.log(5e-324))
        for _ in range(3000):
            if g(a) * sgn > 0 or a < -744.0:
                break
            a -= 1.0
        for _ in range(3000):
            if g(b) * sgn < 0 or b > 709.0:
                break
            b += 1.0
        if not (g(a) * sgn > 0 > g(b) * sgn):
            if not upper and g(a) * sgn <= 0:
                return 0.0, 0.0  # the quantile is below the smallest double
            raise RuntimeError(f"gchisq: no bracket for log T = {logt!r}")
        u = brentq(g, a, b, xtol=1e-15, rtol=4.0 * _EPS, maxiter=500)
        g(u)
        lt, slope, err = cache[u]
        xs = math.exp(u)
        e = (abs(lt - logt) + err) / max(abs(xs * slope), 1e-300) + 4.0 * _EPS
        return xs, e

    def isf(self, p: ArrayLike) -> float | NDArray[np.float64]:
        r"""Upper quantile: the :math:`x` with :math:`\Pr(Q > x) = p`, :math:`0 < p < 1`;
        at :math:`p = 1/n` the squared radius :math:`C^2` of Algorithm 3 (Section 4).

        For p <= 1/2 the upper tail is inverted; for p > 1/2 the lower tail
        P(Q <= x) = 1 - p (exact in floating point there).
        """
        p = _v.check_probability_array("p", p)
        flat = p.ravel()
        x = np.empty(flat.size)
        xerr = np.empty(flat.size)
        up = flat <= 0.5
        for mask, upper in ((up, True), (~up, False)):
            if np.any(mask):
                t = flat[mask] if upper else 1.0 - flat[mask]
                xs, e = self._inverse(np.log(t), upper)
                with np.errstate(over="ignore"):  # an overflow is reported below
                    x[mask] = xs * self._scale
                xerr[mask] = e
        self._check(xerr, "quantile", flat)
        _v.check_finite_result(x, what="the quantile", inputs="w")
        return _out(x, p.shape)

    def ppf(self, q: ArrayLike) -> float | NDArray[np.float64]:
        r"""Lower quantile: the :math:`x` with :math:`\Pr(Q \le x) = q` (``isf(1 - q)``,
        computed on the lower tail for q < 1/2), the inverse of the report's :math:`F`
        (Section 5)."""
        q = _v.check_probability_array("q", q)
        flat = q.ravel()
        x = np.empty(flat.size)
        lowq = flat < 0.5
        if np.any(lowq):
            xs, e = self._inverse(np.log(flat[lowq]), False)
            self._check(e, "quantile", flat[lowq])
            x[lowq] = xs * self._scale
        if np.any(~lowq):
            x[~lowq] = self.isf(1.0 - flat[~lowq])
        _v.check_finite_result(x, what="the quantile", inputs="w")
        return _out(x, q.shape)


def _chi2_1_quantile(logt: FloatArray, upper: bool) -> tuple[FloatArray, FloatArray]:
    """Quantiles of Z^2: 2 erfcinv(p)^2 (upper) or 2 erfinv(q)^2 (lower) as a
    start, then Newton steps on log T in log x with the closed-form tails."""
    from scipy import special

    t = np.exp(logt)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if upper:
            x = 2.0 * special.erfcinv(np.maximum(t, 1e-300)) ** 2
        else:
            x = 2.0 * special.erfinv(t) ** 2
            # below erfinv's range: P(Z^2 <= x) ~ sqrt(2 x / pi)
            x = np.where(x > 0, x, 0.5 * math.pi * np.exp(2.0 * logt))
    u = np.log(np.where(x > 0, x, 5e-324))
    for _ in range(6):
        xs = np.exp(u)
        r = _extreme.chi2_1(xs)
        same = r.upper == upper  # r holds the requested tail, else its complement
        lt = np.where(same, r.log_t, np.log(-np.expm1(r.log_t)))
        fo = r.f_over_t * np.where(same, 1.0, np.exp(r.log_t - lt))
        slope = (-fo if upper else fo) * xs  # d log T / d log x
        step = np.where(np.isfinite(slope) & (slope != 0), (lt - logt) / slope, 0.0)
        u = u - step
    xs = np.exp(u)
    err = 8.0 * _EPS * (1.0 + np.abs(logt)) / np.maximum(np.abs(slope), 1e-300) + 4.0 * _EPS
    if not upper:
        # below P(Z^2 <= smallest double) the quantile underflows: 0 is the answer
        floor = float(_extreme.chi2_1(np.array([5e-324])).log_t[0])
        xs = np.where(logt < floor, 0.0, xs)
    return xs, err


# -- the engine's checks --------------------------------------------------------

class engine_checks:  # a context manager, named like numpy.errstate and warnings.catch_warnings
    """Switch the engine's certification checks off inside a ``with`` block, to measure what
    they cost or to show what they catch.

    Every value behind the report's radius :math:`C` (Algorithm 3, Section 4) and the
    book's Figure 2 is computed with all three checks on, the default; switching one off
    is a diagnostic (``benchmarks/gchisq.py`` prices the checks, the gchisq tests show
    that the check contour catches a planner blind to clusters). Values computed with a
    check off are not certified. The switch holds in the current thread (or task) only
    and ends with the block, also when the block raises.

    Parameters
    ----------
    hump_analysis : bool
        The planner counts the humps that clusters of equal weights raise on the strip's
        edges (off: the planner of before that analysis).
    check_contour : bool
        Every value is also computed on a second contour of different curvature and the
        two must agree (off: the primary contour alone, with its own checks).
    repairs : bool
        Where the two contours disagree, they are refined and re-planned until they agree
        (off: the first pair's value is returned, with its error estimate).

    Examples
    --------
    >>> import numpy as np
    >>> from egmlib import gchisq
    >>> w = np.array([1.0, 0.5, 0.25])
    >>> with gchisq.engine_checks(check_contour=False):
    ...     x = gchisq.isf(1e-6, w=w)
    >>> print(f"{float(gchisq.sf(x, w=w)):.10e}")
    1.0000000000e-06
    """

    def __init__(self, *, hump_analysis: bool = True, check_contour: bool = True, repairs: bool = True) -> None:
        self._checks = _checks.EngineChecks(
            hump_analysis=_v.check_bool("hump_analysis", hump_analysis),
            check_contour=_v.check_bool("check_contour", check_contour),
            repairs=_v.check_bool("repairs", repairs))
        self._tokens: list[Any] = []

    def __enter__(self) -> None:
        self._tokens.append(_checks.enter(self._checks))

    def __exit__(self, *exc: object) -> None:
        _checks.leave(self._tokens.pop())


# -- module-level wrappers ----------------------------------------------------

def sf(x: ArrayLike, *, w: ArrayLike) -> float | NDArray[np.float64]:
    r"""Survival function :math:`\Pr(Q > x)` of :math:`Q = \sum_j w_j Z_j^2`.

    The clipping probability of the report's Algorithm 3 (Section 4)
    {cite}`poulsen2023`; see the module docstring for the method.
    """
    return WeightedChiSquare(w).sf(x)


def logsf(x: ArrayLike, *, w: ArrayLike) -> float | NDArray[np.float64]:
    r""":math:`\log \Pr(Q > x)` (the report's clipping probability, Algorithm 3), with
    full relative accuracy in the far tail."""
    return WeightedChiSquare(w).logsf(x)


def cdf(x: ArrayLike, *, w: ArrayLike) -> float | NDArray[np.float64]:
    r"""Distribution function :math:`\Pr(Q \le x)`, the :math:`F` bisected in the report's
    Section 5."""
    return WeightedChiSquare(w).cdf(x)


def logcdf(x: ArrayLike, *, w: ArrayLike) -> float | NDArray[np.float64]:
    r""":math:`\log \Pr(Q \le x)`, the log of the report's :math:`F` (Section 5)."""
    return WeightedChiSquare(w).logcdf(x)


def isf(p: ArrayLike, *, w: ArrayLike, backend: str = "native") -> float | NDArray[np.float64]:
    r"""Upper quantile :math:`x` with :math:`\Pr(Q > x) = p`.

    With :math:`p = 1/n` this is the squared clipping radius :math:`C^2` of the
    report's Algorithm 3 (Section 4) and, for weights :math:`\sigma_j^2` and
    :math:`\sigma_j/\sum_i\sigma_i`, the thresholds :math:`C_n^2`, :math:`C_t^2` of
    Section 5 {cite}`poulsen2023`.

    Parameters
    ----------
    p : float or array_like
        Tail probabilities, finite, ``0 < p < 1``.
    w : array_like
        Weights, finite and ``>= 0``, at least one positive.
    backend : {"native", "chi2comb"}
        ``"native"``: contour-integral inversion (relative error <= 1e-10 or a
        RuntimeWarning). ``"chi2comb"``: the report's own procedure, Davies'
        algorithm {cite}`davies1980` at absolute tolerance ``p`` and
        :func:`report_bisection` (stopped at ``|F - (1 - p)| <= p / 10``, the final
        bracket's midpoint returned, as the report's code did); needs the optional
        package chi2comb.
    """
    backend = _v.check_choice("backend", backend, ("native", "chi2comb"))
    if backend == "native":
        return WeightedChiSquare(w).isf(p)
    arr = _validate_weights(w)
    pp = _v.check_probability_array("p", p)
    return _out(_chi2comb.isf_report(pp.ravel(), arr), pp.shape)


def mean(w: ArrayLike) -> float:
    r""":math:`E[Q] = \sum_j w_j`; 1 for the weights :math:`\sigma_j/\sum_i\sigma_i` of
    Algorithm 3 (Section 4 of the report)."""
    with np.errstate(over="ignore"):
        out = float(np.sum(_validate_weights(w)))
    _v.check_finite_result(out, what="the mean sum(w)", inputs="w")
    return out


def var(w: ArrayLike) -> float:
    r""":math:`\mathrm{Var}[Q] = 2 \sum_j w_j^2`, the variance in the report's Bernstein
    bound on :math:`C` (Section 4)."""
    arr = _validate_weights(w)
    m = float(arr.max())
    out = 2.0 * m * m * float(np.sum((arr / m) ** 2))
    _v.check_finite_result(out, what="the variance 2 sum(w^2)", inputs="w")
    return out
