r"""The saddlepoint of Q = sum_j w_j Z_j^2 and the r* approximation of its tails.

Private helper of :mod:`egmlib.gchisq`; weights scaled so that the largest is 1,
K(s) = -1/2 sum_j log(1 - 2 w_j s) (:mod:`._cumulants`). Points s < 1/2 are
parametrised by tau = -log(1 - 2 s): s = (1 - e^{-tau}) / 2 is accurate for small
tau and zeta = 1/2 - s = e^{-tau} / 2 for large tau, so that a saddlepoint closer
to the branch point 1/2 than the spacing of doubles there keeps its relative
accuracy as zeta.

- :func:`saddlepoint` solves K'(s) = x (the crossing point of the inversion
  contour, :mod:`._planner`);
- :func:`rstar` is Barndorff-Nielsen's r* form of the Lugannani-Rice
  approximation {cite}`lugannani1980`, P(Q > x) ~ Phi(-r*), whose relative error
  is bounded but not small in the far tail {cite}`chen2019`: the planner's guess of
  the size of the integral;
- :func:`rstar_start` solves r*(s) = z, the start of the quantile iteration
  (:mod:`._quantiles`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._cumulants import Cumulants
from ._records import FloatArray

#: Representation switch: carry zeta = 1/2 - s when zeta_c < this.
ZETA_FORM = 0.25


@dataclass(frozen=True)
class SaddlePoints:
    """Real points s < 1/2 with zeta = 1/2 - s to full relative accuracy, and (where
    computed) K, K', K'', K''' at them (rows of ``k``)."""

    s: FloatArray
    zeta: FloatArray
    k: FloatArray | None = None


def s_of_tau(tau: Any) -> Any:
    """s = (1 - exp(-tau)) / 2, accurate for small tau."""
    return -0.5 * np.expm1(-tau)


def zeta_of_tau(tau: Any) -> Any:
    """zeta = 1/2 - s = exp(-tau) / 2, accurate for large tau."""
    return 0.5 * np.exp(-tau)


def zeta_arg(zeta: Any) -> Any:
    """zeta where the zeta form is used (zeta < ZETA_FORM), NaN elsewhere."""
    return np.where(zeta < ZETA_FORM, zeta, np.nan)


def saddlepoint(cum: Cumulants, x: Any) -> SaddlePoints:
    """Solve K'(s) = x for s < 1/2 (vectorised), Newton in tau = -log(1 - 2 s).

    Bracket: ln(x / mean) <= tau <= ln(x) for x >= mean, and
    -ln(1 + d / x) <= tau <= ln(x / mean) for x < mean; a Newton step that leaves
    the bracket is replaced by bisection.
    """
    x = np.asarray(x, dtype=float)
    lx = np.log(x)
    lm = math.log(cum.mean)
    up = x >= cum.mean
    # K'(s) <= d_eff / (2 |s|) for s < 0 (d_eff counts a pole term twice)
    lo = np.where(up, lx - lm, -np.log1p(cum.d_eff / x))
    # (with a branch point at 0, K' -> inf as s -> 0-: the root is at tau < 0)
    hi = np.where(up, np.maximum(lx, lx - lm), lx - lm if math.isfinite(lm) else 0.0)
    tau = 0.5 * (lo + hi)
    for _ in range(200):
        s = s_of_tau(tau)
        z = zeta_of_tau(tau)
        k = cum.real(s, zeta_arg(z))
        f = np.log(k[1]) - lx
        # d ln K' / d tau = K'' / K' * (1 - 2 s) / 2 = K'' / K' * zeta
        df = k[2] / k[1] * z
        lo = np.where(f < 0, tau, lo)
        hi = np.where(f > 0, tau, hi)
        new = tau - f / df
        bad = ~((new > lo) & (new < hi)) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (lo + hi), new)
        done = np.abs(new - tau) <= 1e-11 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(done | (hi - lo <= 1e-12 * np.maximum(1.0, np.abs(tau)))):
            break
    return SaddlePoints(s_of_tau(tau), zeta_of_tau(tau))


def rstar(s: FloatArray, x: FloatArray, k: FloatArray) -> FloatArray:
    """Barndorff-Nielsen's r* = r + log(v / r) / r, the Lugannani-Rice family's
    tail approximation P(Q > x) ~ Phi(-r*), at saddlepoints s of x (k = K..K''')."""
    r2 = np.maximum(2.0 * (s * x - k[0]), 0.0)
    r = np.sign(s) * np.sqrt(r2)
    v = s * np.sqrt(k[2])
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.log(v / r) / r
    small = np.abs(r) < 1e-6
    corr = np.where(small | ~np.isfinite(corr), 0.0, corr)
    return r + corr


def _rstar1(s: float, k0: Any, k1: Any, k2: Any) -> tuple[Any, Any]:
    """Scalar (r*, r) at a saddlepoint s (K, K', K'' given)."""
    r = math.copysign(math.sqrt(max(2.0 * (s * k1 - k0), 0.0)), s)
    if abs(r) < 1e-6:
        return r, r
    v = s * math.sqrt(k2)
    q = v / r
    corr = math.log(q) / r if q > 0 else 0.0
    return r + (corr if math.isfinite(corr) else 0.0), r


def _drstar_ds(s: float, r: Any, k2: Any, k3: Any) -> Any:
    """dr*/ds at a saddlepoint (dr/ds = s K'' / r where r is not tiny):
    dr*/ds = dr/ds (1 - (1 + log(v / r)) / r^2) + (1/s + K'''/(2 K'')) / r where that
    is positive and finite, else dr/ds."""
    sq = math.sqrt(k2)
    drds = s * k2 / r if abs(r) > 1e-8 else sq
    if abs(r) > 1e-3 and s != 0:
        q = s * sq / r
        if q > 0:
            d = drds * (1.0 - (1.0 + math.log(q)) / (r * r)) + (1.0 / s + 0.5 * k3 / k2) / r
            if math.isfinite(d) and d > 0:
                return d
    return drds


def _safeguarded(new: Any, tau: float, lo: float, hi: float) -> Any:
    """A Newton iterate kept inside the bracket (lo, hi): bisection where both ends
    are known, else a step of 2 towards the open end."""
    if lo < new < hi and math.isfinite(new):
        return new
    if math.isfinite(lo) and math.isfinite(hi):
        return 0.5 * (lo + hi)
    return tau + 2.0 if math.isfinite(lo) else tau - 2.0


def rstar_start(cum: Cumulants, z: Any) -> SaddlePoints:
    """Saddlepoint start for the quantile: the s with r*(s) = z, with zeta and
    K..K''' at s; x = K'(s) is the start.

    Newton in tau = -log(1 - 2 s) with the derivative of r*, safeguarded by a
    bracket (r* increases with s); started from the normal approximation
    s = z / sqrt(K''(0)). K comes from one vectorised call per iteration, the
    rest is scalar arithmetic (the batches are a few points).
    """
    z = [float(t) for t in np.ravel(z)]
    sd = math.sqrt(cum.var)
    tau = [-math.log1p(-2.0 * min(zi / sd, 0.45)) if zi / sd < 0.45 else 2.3 for zi in z]
    lo = [0.0 if zi > 0 else -math.inf for zi in z]
    hi = [math.inf if zi > 0 else 0.0 for zi in z]
    for _ in range(100):
        t = np.array(tau)
        s, zeta = s_of_tau(t), zeta_of_tau(t)
        k = cum.real(s, zeta_arg(zeta))
        done = True
        for i in range(len(z)):
            si = float(s[i])
            rs, rr = _rstar1(si, k[0, i], k[1, i], k[2, i])
            f = rs - z[i]
            if f < 0:
                lo[i] = tau[i]
            elif f > 0:
                hi[i] = tau[i]
            # a start only: Halley finishes, and the contours planned here serve
            # every x within 5 % of it
            if abs(f) <= 1e-4 * max(1.0, abs(z[i])):
                continue
            done = False
            new = tau[i] - f / (_drstar_ds(si, rr, k[2, i], k[3, i]) * 0.5 * math.exp(-tau[i]))
            tau[i] = _safeguarded(new, tau[i], lo[i], hi[i])
        if done:
            return SaddlePoints(s, zeta, k)
    t = np.array(tau)
    s, zeta = s_of_tau(t), zeta_of_tau(t)
    return SaddlePoints(s, zeta, cum.real(s, zeta_arg(zeta)))
