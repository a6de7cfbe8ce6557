"""Quantiles: Halley's method on log T(x) - log t from the r* start.

Private helper of :mod:`egmlib.gchisq`. T is the upper tail P(Q > x) or the lower
tail P(Q <= x) of the scaled Q; the values come from the primary contours planned
once at the start, certified on the check contour at convergence
(:mod:`._certify`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ._certify import certified, replan
from ._cumulants import Cumulants
from ._planner import ContourPair, plan_contours
from ._records import BoolArray, FloatArray, TailValue
from ._saddlepoint import SaddlePoints, rstar_start, saddlepoint
from ._tails import PLAN_BATCH

_EPS = float(np.finfo(float).eps)


@dataclass(frozen=True)
class Quantiles:
    """Scaled quantiles x, their estimated relative errors, and where Halley's
    method did not converge (the caller finishes those with Brent's method)."""

    x: FloatArray
    err: FloatArray
    failed: BoolArray


def quantiles(cum: Cumulants, logt: FloatArray, upper: bool, maxiter: int = 40) -> Quantiles:
    """Scaled x with log P(Q > x) = logt (upper) or log P(Q <= x) = logt.

    Halley's method on g(x) = log T(x) - logt, from the r* saddlepoint start,
    on the primary contours planned once at the start. At convergence the value
    is certified on the check contour (:func:`._certify.certified`); if that
    repaired the contours, the bracket built from the earlier (untrusted) values
    is discarded and the iteration continues on the repaired pair. Where Halley
    does not converge the caller finishes with Brent's method on certified
    values (:meth:`egmlib.gchisq.WeightedChiSquare._bracketed`).
    """
    logt = np.asarray(logt, dtype=float)
    x = np.empty(logt.size)
    xerr = np.full(logt.size, np.inf)
    failed = np.zeros(logt.size, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # (at most PLAN_BATCH points planned at a time: bounded memory)
        for lo in range(0, logt.size, PLAN_BATCH):
            sl = slice(lo, lo + PLAN_BATCH)
            xs, start = _start(cum, logt[sl], upper)
            pairs = plan_contours(cum, xs, start, np.full(xs.size, upper))
            for i, pair in enumerate(pairs):
                k = lo + i
                x[k], xerr[k], ok = _halley(cum, pair, float(xs[i]), float(logt[k]), upper, maxiter)
                failed[k] = not ok
    return Quantiles(x, xerr, failed)


def _start(cum: Cumulants, logt: FloatArray, upper: bool) -> tuple[FloatArray, SaddlePoints]:
    """The r* start x = K'(s) with r*(s) = z (z the normal quantile of t), and the
    saddlepoints of the starts; a start that is not positive is replaced by
    mean / 1000 (with K unknown there)."""
    t = np.exp(logt)
    z = -special.ndtri(t) if upper else special.ndtri(t)
    start = rstar_start(cum, z)  # start.s is the saddlepoint of x = K'(s)
    if start.k is None:
        raise RuntimeError("gchisq: the r* start carries K")
    x = start.k[1].copy()
    bad = ~(x > 0)
    if np.any(bad):
        x = np.where(bad, cum.mean * 1e-3, x)
        s, zeta = start.s.copy(), start.zeta.copy()
        fix = saddlepoint(cum, x[bad])
        s[bad], zeta[bad] = fix.s, fix.zeta
        start = SaddlePoints(s, zeta)
    return x, start


def _g_of(r: TailValue, logt: float, upper: bool) -> tuple[float, float, float]:
    """g = log T - logt and its first two derivatives in x."""
    lt, fo, fpo = r.log_t, r.f_over_t, r.fp_over_t
    g = lt - logt
    if upper:
        return g, -fo, -fpo - fo * fo
    return g, fo, fpo - fo * fo


def _halley_step(g: float, g1: float, g2: float) -> float:
    """Halley's step -2 g g' / (2 g'^2 - g g''), Newton's where that fails."""
    den = 2.0 * g1 * g1 - g * g2
    step = -2.0 * g * g1 / den if den != 0 else -g / g1
    if not math.isfinite(step):
        step = -g / g1
    return step


def _halley(cum: Cumulants, pair: ContourPair, xi: float, logt: float, upper: bool, maxiter: int
            ) -> tuple[float, float, bool]:
    """Halley iteration for one quantile; returns (x, relative error, converged)."""
    lo, hi = 0.0, math.inf
    trusted = False
    repairs = 0
    for _ in range(maxiter):
        if abs(xi - pair[0].plan.x_plan) > 0.05 * xi:
            pair = replan(cum, xi, upper)
            trusted = False
        r = pair[0].tail(xi)
        if not (math.isfinite(r.log_t) and (r.ok or trusted)):
            c = certified(cum, pair, xi)
            pair, r = c.pair, c.value
            trusted = r.err < 1e-11
        g, g1, g2 = _g_of(r, logt, upper)
        if not (math.isfinite(g) and math.isfinite(g1) and g1 != 0):
            return xi, math.inf, False
        tol_g = max(4.0 * _EPS * max(1.0, abs(logt)), 2.0 * r.err)
        step = _halley_step(g, g1, g2)
        if abs(g) <= tol_g or abs(step) <= 4.0 * _EPS * xi or hi - lo <= 4.0 * _EPS * xi:
            c = certified(cum, pair, xi, r if r.ok else None)
            g, g1, g2 = _g_of(c.value, logt, upper)
            step = -g / g1 if g1 != 0 else 0.0
            err = c.value.err
            close = abs(g) <= max(4.0 * _EPS * max(1.0, abs(logt)), 2.0 * err) or abs(step) <= 4.0 * _EPS * xi
            if close or repairs >= 3 or not math.isfinite(step):
                return _converged(xi, step, g, g1, g2, err)
            # the contours were repaired and the value moved: restart the bracket
            repairs += 1
            pair, trusted = c.pair, err < 1e-11
            lo, hi = 0.0, math.inf
        if (g > 0) == upper:
            lo = max(lo, xi)
        elif g != 0:
            hi = min(hi, xi)
        new = xi + step
        if not (lo < new < hi) or not math.isfinite(new):
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * xi
        xi = new
    return xi, math.inf, False


def _converged(xi: float, step: float, g: float, g1: float, g2: float, err: float) -> tuple[float, float, bool]:
    """The final Newton step (if small) on a certified value, the relative error of
    x from the residual and the value's error, and whether x is trustworthy."""
    if abs(step) <= 1e-8 * xi:
        xi += step
        g = 0.5 * g2 * step * step  # Newton residual
    xerr = (abs(g) + err) / abs(xi * g1) + 2.0 * _EPS
    return xi, xerr, err < 1.0 and abs(step) <= 1e-8 * xi

