r"""Noise calibration of the Gaussian mechanism (report, Section 3: Theorems 1 and 2).

For a query with :math:`\ell_2` sensitivity :math:`\Delta`, the Gaussian mechanism adds
:math:`\mathcal N(0, \sigma^2 I)` noise.  Three calibrations appear in the sources:

* :func:`sigma_classical` -- Theorem 1 of the report (Dwork and Roth, Thm 3.22):
  :math:`\sigma = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`, valid only for
  :math:`\varepsilon < 1`.
* :func:`sigma_opt` -- Theorem 2 / eq. (2) of the report (Balle and Wang 2018, Thm 8):
  the smallest :math:`\sigma` whose *privacy profile* :func:`privacy_profile` is at most
  :math:`\delta`.  This is exact: the mechanism is :math:`(\varepsilon,\delta)`-DP if and
  only if :math:`\sigma \ge` ``sigma_opt``.
* :func:`sigma_from_rho`, :func:`rho_to_eps` and :func:`eps_to_rho` -- zero-concentrated
  DP as Bun and Steinke (2016) define it, the one meaning of :math:`\rho` in egmlib:
  :math:`\sigma = \Delta/\sqrt{2\rho}` (their Prop. 1.6) and
  :math:`\varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}` (their Prop. 1.3).
* :func:`rho_from_lecture_notes` and :func:`lecture_notes_rho` -- the conversion from and
  to the parameter of the lecture notes *Gaussian Noise Mechanism* supplied with the
  report, :math:`\rho_{\rm notes} = 2\rho` (noise :math:`\mathcal N(0,
  \Delta^2/\rho_{\rm notes}\, I)`).

Numerics of the privacy profile
-------------------------------
With :math:`a = \Delta/(2\sigma)` and :math:`b = \varepsilon\sigma/\Delta` the profile is
:math:`\delta(\sigma) = \Phi(a-b) - e^{\varepsilon}\Phi(-a-b)`.  Evaluated as written,
:math:`e^\varepsilon` overflows for :math:`\varepsilon > 709` and the two terms cancel
catastrophically when :math:`\delta` is tiny.  Write :math:`u = b - a` and
:math:`\operatorname{erfcx}(y) = e^{y^2}\operatorname{erfc}(y)`.  Because
:math:`ab = \varepsilon/2`, the exponents of both terms coincide and

.. math::

    \delta = \tfrac12 e^{-y_1^2}\bigl(\operatorname{erfcx}(y_1) - \operatorname{erfcx}(y_2)\bigr),
    \qquad y_1 = \frac{u}{\sqrt2},\quad y_2 = \sqrt{y_1^2 + \varepsilon},

exactly, with no :math:`e^{\varepsilon}` anywhere.  The remaining difference is computed
directly when it is not small compared with its terms, and otherwise as a Taylor series
about the midpoint :math:`m = (y_1+y_2)/2` whose derivatives
:math:`\operatorname{erfcx}^{(k)}(m) = \operatorname{erfcx}(m)(-2)^k\prod_{i\le k} r_i(m)`
come from a backward recurrence (a continued fraction) for
:math:`r_k = M_k/M_{k-1}`, :math:`M_k(y) = \int_0^\infty t^k e^{-t^2-2yt}\,dt`:
every term is positive, so nothing cancels.  For :math:`u < 0` (where
:math:`\delta > \Phi(0) - \tfrac12\operatorname{erfcx}(\sqrt\varepsilon)`) the first
term is :math:`\Phi(-u) \ge 1/2` and the plain difference is well conditioned.

The derivative is analytic: :math:`\partial\delta/\partial\sigma = -2a\,\varphi(a-b)/\sigma`
(the :math:`\varepsilon`-terms cancel because :math:`e^\varepsilon\varphi(-a-b) = \varphi(a-b)`).
:math:`\log\delta` is a decreasing, concave function of :math:`\log\sigma`, so Newton's
method started to the right of the root converges monotonically; :func:`sigma_opt` starts
from the :math:`\sigma` at which the first term alone equals :math:`\delta` (always to the
right of the root) and typically needs 3 to 6 steps.
"""

from __future__ import annotations

import math
import struct

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq
from scipy.special import erfcx, erfinv, ndtr, ndtri

from egmlib.validation import (
    as_real_array,
    check_finite_result,
    check_positive_finite,
    check_probability,
)

__all__ = [
    "sigma_classical",
    "privacy_profile",
    "log_privacy_profile",
    "sigma_opt",
    "eps_from_sigma",
    "sigma_from_rho",
    "rho_to_eps",
    "eps_to_rho",
    "rho_from_lecture_notes",
    "lecture_notes_rho",
]

_SQRT2 = math.sqrt(2.0)
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LOG_HALF = math.log(0.5)

_FLOAT_MAX = float(np.finfo(float).max)


# ----------------------------------------------------------------------------------------
# Theorem 1
# ----------------------------------------------------------------------------------------
def sigma_classical(*, eps: float, delta: float, sensitivity: float = 1.0) -> float:
    r"""Classical noise scale of Theorem 1 (Dwork and Roth, Theorem 3.22).

    :math:`\sigma_{\varepsilon,\delta} = \Delta\sqrt{2\ln(1.25/\delta)}/\varepsilon`, which
    makes the Gaussian mechanism :math:`(\varepsilon,\delta)`-DP for
    :math:`\varepsilon\in(0,1)` only.

    Parameters
    ----------
    eps : float in (0, 1)
    delta : float in (0, 1)
    sensitivity : float > 0
        The :math:`\ell_2` sensitivity :math:`\Delta(g)`.

    Raises
    ------
    ValueError
        For ``eps >= 1`` (the theorem does not apply; use :func:`sigma_opt`, which is
        exact for every ``eps > 0``) and for any other out-of-range argument.

    Examples
    --------
    >>> round(sigma_classical(eps=0.5, delta=1e-5), 6)
    9.689611
    """
    eps = check_positive_finite("eps", eps)
    delta = check_probability("delta", delta)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    if eps >= 1.0:
        raise ValueError(
            f"eps must be < 1 for Theorem 1 (classical calibration), got eps={eps!r}; "
            "use egmlib.calibration.sigma_opt (Theorem 2, analytic calibration), "
            "which is exact for every eps > 0"
        )
    # ln(1.25/delta), with 1.25/delta overflowing for subnormal delta
    log_term = math.log(1.25 / delta) if delta > 1e-300 else math.log(1.25) - math.log(delta)
    out = sensitivity * math.sqrt(2.0 * log_term) / eps
    check_finite_result(out, what="sigma", inputs="sensitivity or 1/eps")
    return out


# ----------------------------------------------------------------------------------------
# The privacy profile (eq. (2)) and its derivative: scalar kernels
# ----------------------------------------------------------------------------------------
def _erfcx_derivative_ratios(m: float, kmax: int) -> list[float]:
    """r_k(m) = M_k/M_{k-1}, k = 1..kmax, by the backward recurrence (used for m >= 8).

    M_k(m) = int_0^inf t^k exp(-t^2 - 2 m t) dt satisfies M_{k+1} = (k/2) M_{k-1} - m M_k,
    so r_k = (k/2) / (m + r_{k+1}).  Started 20 steps above kmax from the fixed point
    of the recurrence, it is accurate to rounding for m >= 8 (a continued fraction that
    converges the faster the larger m is).
    """
    n = kmax + 20
    r = 0.5 * (-m + math.sqrt(m * m + 2.0 * n))
    out = [0.0] * (kmax + 1)
    for k in range(n, 0, -1):
        r = (0.5 * k) / (m + r)
        if k <= kmax:
            out[k] = r
    return out


def _erfcx_diff(y1: float, eps: float) -> float:
    """erfcx(y1) - erfcx(y2), y2 = sqrt(y1^2 + eps), y1 >= 0, without cancellation.

    The gap y2 - y1 is formed as eps / (y1 + y2): subtracting the rounded y2 from y1
    would lose its relative accuracy exactly where the Taylor branch is needed.
    """
    y2 = math.sqrt(y1 * y1 + eps)
    f1 = float(erfcx(y1))
    f2 = float(erfcx(y2))
    if f2 <= 0.99 * f1:
        return f1 - f2  # relative error <= ~100 ulp
    t = 0.5 * eps / (y1 + y2)  # half the gap; here t / max(m, 1) < ~0.005
    m = y1 + t
    fm = float(erfcx(m))
    kmax = 15
    # Odd Taylor terms about m: erfcx(m - t) - erfcx(m + t) = -2 sum_{k odd} f^(k)(m) t^k / k!
    if m >= 8.0:
        # f^(k)(m) = fm (-2)^k prod_{i<=k} r_i: every term positive, nothing cancels.
        r = _erfcx_derivative_ratios(m, kmax)
        prod = 1.0
        total = 0.0
        coef = 1.0  # (2t)^k / k!
        for k in range(1, kmax + 1):
            prod *= r[k]
            coef *= 2.0 * t / k
            if k % 2 == 1:
                term = prod * coef
                total += term
                if term <= 1e-17 * total:
                    break
        return 2.0 * fm * total
    # 0 <= m < 8: forward recurrence f^(k+1) = 2k f^(k-1) + 2m f^(k), f' = 2 m f - 2/sqrt(pi).
    # The cancellation in f' costs at most ~2 m^2 + 1 < 130 ulp; the higher derivatives
    # lose more but enter with weights (t/m)^(k-1) < 0.005^(k-1).
    fkm1, fk = fm, 2.0 * m * fm - _TWO_OVER_SQRTPI
    total = fk * t
    coef = t
    k = 1
    while k < kmax:
        fk1 = 2.0 * k * fkm1 + 2.0 * m * fk
        fk2 = 2.0 * (k + 1) * fk + 2.0 * m * fk1
        fkm1, fk = fk1, fk2
        coef *= t * t / ((k + 1) * (k + 2))
        k += 2
        term = fk * coef
        total += term
        if abs(term) <= 1e-17 * abs(total):
            break
    return -2.0 * total


def _a_plus_b(u: float, eps: float) -> float:
    """a + b = sqrt(u^2 + 2 eps) (since (a + b)^2 = (b - a)^2 + 4 a b), overflow-safe."""
    if abs(u) > 1e150 or eps > 1e300:
        s = max(abs(u), math.sqrt(eps))
        return s * math.sqrt((u / s) ** 2 + 2.0 * (eps / s) / s)
    return math.sqrt(u * u + 2.0 * eps)


def _logdelta_u(u: float, eps: float) -> tuple[float, float]:
    """(log delta, d log delta / d log sigma) at u = b - a for unit sensitivity.

    The sigma-derivative uses d delta / d sigma = -2 a phi(a - b) / sigma.
    For u < 0 the profile is Phi(a - b) - Phi(-a - b) - expm1(eps) Phi(-a - b)
    = (erf((a - b)/sqrt 2) + erf((a + b)/sqrt 2)) / 2 - expm1(eps) Phi(-a - b):
    the two erf are positive there, and for small eps (delta then as small as
    it likes) the last term is a small correction; where it is not (eps of
    order 1 and more, delta near its u = 0 value or above) Phi(-u) minus the
    erfcx form of the second term is well conditioned.
    """
    y1 = u / _SQRT2
    r = _a_plus_b(u, eps)  # a + b
    # a = (r - u) / 2, written without cancellation for u > 0
    a = eps / (r + u) if u > 0.0 else 0.5 * (r - u)
    if u >= 0.0:
        diff = _erfcx_diff(y1, eps)
        if not diff > 0.0:  # underflow far beyond any meaningful delta
            return -math.inf, -math.inf
        logdelta = _LOG_HALF + math.log(diff) - y1 * y1
        slope = -4.0 * a * _INV_SQRT2PI / diff
    else:
        first = 0.5 * (math.erf(-y1) + math.erf(r / _SQRT2))
        second = math.expm1(eps) * float(ndtr(-r)) if eps < 700.0 else math.inf
        if second <= 0.25 * first:
            delta = first - second
        else:
            y2 = r / _SQRT2
            delta = float(ndtr(-u)) - 0.5 * math.exp(-y1 * y1) * float(erfcx(y2))
        if not delta > 0.0:  # pragma: no cover - delta >= 1/2 - ... here
            return -math.inf, -math.inf
        logdelta = math.log(delta)
        slope = -2.0 * a * _INV_SQRT2PI * math.exp(-0.5 * u * u) / delta
    return logdelta, slope


def _two_product(x: float, y: float) -> tuple[float, float]:
    """(p, e) with p + e = x y exactly (Dekker; |x|, |y| < 1e290)."""
    c = 134217729.0  # 2^27 + 1
    p = x * y
    t = c * x
    xh = t - (t - x)
    xl = x - xh
    t = c * y
    yh = t - (t - y)
    yl = y - yh
    return p, ((xh * yh - p) + xh * yl + xl * yh) + xl * yl


def _u_of_sigma(sigma: float, eps: float) -> float:
    """u = b - a = eps * sigma - 1 / (2 sigma) (unit sensitivity), to a few ulps.

    Near the calibrated sigma both terms are about sqrt(eps / 2) while u is of
    order one, so the plain difference loses log10(sqrt(eps)) digits (at eps =
    1e12 the profile came out 5e-10 too small); both products are formed
    exactly (Dekker's two-product, arguments rescaled by a power of two).
    """
    k = (math.frexp(eps)[1] - math.frexp(sigma)[1]) // 2
    ah, al = _two_product(math.ldexp(eps, -k), math.ldexp(sigma, k))  # eps sigma
    bh = 0.5 / sigma
    if math.isinf(ah) or math.isinf(bh):  # u beyond the float range, where delta is 0 or 1
        return math.copysign(_FLOAT_MAX, ah - bh)
    m = math.frexp(bh)[1]  # rescaled as above: bh sigma ~ 1/2 even where bh or sigma is near the float range
    ph, pl = _two_product(math.ldexp(bh, -m), math.ldexp(sigma, m))
    bl = ((0.5 - ph) - pl) / sigma  # 1/(2 sigma) = bh + bl
    return (ah - bh) + (al - bl)


def _sigma_of_u(u: float, eps: float) -> float:
    """Inverse of :func:`_u_of_sigma`, stable for either sign of u."""
    r = _a_plus_b(u, eps)
    return 0.5 * (r + u) / eps if u >= 0.0 else 1.0 / (r - u)


def _log_profile_scalar(sigma: float, eps: float) -> float:
    if sigma == math.inf:
        return -math.inf
    if sigma == 0.0:
        return 0.0
    return _logdelta_u(_u_of_sigma(sigma, eps), eps)[0]


def _check_sigma_array(sigma: ArrayLike) -> NDArray[np.float64]:
    """sigma as a float array (any shape) with entries in (0, inf]."""
    s = as_real_array("sigma", sigma)
    bad = ~(s > 0.0)  # also catches NaN
    if np.any(bad):
        first = s[bad].flat[0]
        raise ValueError(f"sigma must be > 0 (inf allowed), got sigma={float(first)!r}")
    return s


def log_privacy_profile(
    sigma: ArrayLike, *, eps: float, sensitivity: float = 1.0
) -> float | NDArray[np.float64]:
    r"""Natural log of :func:`privacy_profile` (eq. (2)); finite far below the float range of delta.

    Vectorised over ``sigma``; returns a float for scalar input.  ``sigma = inf`` (no
    privacy loss at all) gives ``-inf``, the logarithm of a profile that is exactly 0.

    Examples
    --------
    >>> round(float(log_privacy_profile(1.0, eps=1000.0)), 4)   # delta ~ 10**-216935
    -499514.8595
    """
    eps = check_positive_finite("eps", eps)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    with np.errstate(over="ignore"):  # sigma / sensitivity = inf: no privacy loss, log delta = -inf
        s = _check_sigma_array(sigma) / sensitivity
    # a plain loop: np.vectorize would turn the scalar code's handled overflows into warnings
    out = np.array([_log_profile_scalar(float(x), eps) for x in s.flat]).reshape(s.shape)
    return float(out) if out.ndim == 0 else out


def privacy_profile(sigma: ArrayLike, *, eps: float, sensitivity: float = 1.0) -> float | NDArray[np.float64]:
    r"""Privacy profile of the Gaussian mechanism (Balle and Wang 2018, Thm 8; eq. (2)).

    .. math::

        \delta(\sigma) = \Phi\Bigl(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr)
            - e^{\varepsilon}\,\Phi\Bigl(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Bigr),

    the smallest :math:`\delta` for which noise :math:`\mathcal N(0,\sigma^2 I)` on a query of
    :math:`\ell_2` sensitivity :math:`\Delta` is :math:`(\varepsilon,\delta)`-DP.  Eq. (2)
    of the report is the case :math:`\Delta = 1`.  Computed without :math:`e^\varepsilon`
    and without cancellation (see the module docstring): relative error about 1e-14 for
    :math:`\varepsilon\in[10^{-3},10^3]`, down to the smallest positive float.

    Parameters
    ----------
    sigma : float or array, > 0 (``inf`` gives 0)
    eps : float > 0
    sensitivity : float > 0

    Examples
    --------
    >>> round(float(privacy_profile(1.0, eps=1.0)), 10)
    0.1269367375
    """
    logd = log_privacy_profile(sigma, eps=eps, sensitivity=sensitivity)
    return float(np.exp(logd)) if np.ndim(logd) == 0 else np.exp(logd)


# ----------------------------------------------------------------------------------------
# Theorem 2: the analytic calibration
# ----------------------------------------------------------------------------------------
def _sigma_opt_unit(eps: float, delta: float) -> float:
    """Smallest sigma (unit sensitivity) with profile <= delta: Newton on log delta(log sigma)."""
    target = math.log(delta)
    # Start where Phi(-u) = delta: the first term alone already reaches delta there and the
    # second term only lowers the profile, so this start lies right of (above) the root.
    # The profile decreases in eps, so the eps -> 0 root sigma_0, where
    # erf(1 / (2 sqrt(2) sigma_0)) = delta, is right of the root too; it is the nearer start
    # for tiny eps, where the first one overflows (eps = 5e-324 used to hang here).
    start = _sigma_of_u(-float(ndtri(delta)), eps)
    with np.errstate(over="ignore", divide="ignore"):
        sigma0 = float(0.5 / (_SQRT2 * erfinv(delta)))
    start = min(start, sigma0)
    if not (0.0 < start < math.inf):
        raise ValueError(
            f"sigma_opt overflows the float64 range at eps={eps!r}, delta={delta!r} "
            "(eps and delta both too small); increase eps or delta")
    t = math.log(start)
    for _ in range(60):
        logd, slope = _logdelta_u(_u_of_sigma(math.exp(t), eps), eps)
        if not (math.isfinite(logd) and math.isfinite(slope) and slope < 0.0):
            # for huge eps the start is the root to within ulps, where the
            # profile jumps between 0 and 1: settle it on the doubles
            if abs(logd - target) > 1.0 and _ulp_steep(t, eps):
                return _smallest_private(math.exp(t), eps, target)
            break
        step = (logd - target) / slope
        t -= step
        if abs(step) <= 1e-10:
            # quadratic convergence: the error left is O(step^2), below rounding;
            # where one ulp of sigma moves the profile by more than that (large
            # eps), settle the root on the doubles
            s = math.exp(t)
            if abs(_log_profile_scalar(s, eps) - target) <= _ROOT_TOL:
                return s
            return _smallest_private(s, eps, target)
    # Fallback (never observed): bracket and brentq in log sigma, in at most 60 doublings
    # each way (log sigma spans [-745, 710]).
    if not math.isfinite(t):
        raise ValueError(f"sigma_opt: no finite root at eps={eps!r}, delta={delta!r}")
    lo, hi = t - 1.0, t + 1.0
    for _ in range(60):
        if _log_profile_scalar(math.exp(lo), eps) >= target:
            break
        lo -= 2.0 * (hi - lo)
    for _ in range(60):
        if _log_profile_scalar(math.exp(hi), eps) <= target:
            break
        hi += 2.0 * (hi - lo)
    root = brentq(
        lambda x: _log_profile_scalar(math.exp(x), eps) - target, lo, hi, xtol=1e-15, rtol=1e-15
    )
    return _smallest_private(math.exp(root), eps, target)


#: sigma_opt keeps the Newton root where its profile is within this (relative)
#: of delta; elsewhere it returns the smallest double with profile <= delta.
_ROOT_TOL = 1e-13


def _ulp_steep(t: float, eps: float) -> bool:
    """Whether one ulp of sigma = exp(t) moves u = eps sigma - 1/(2 sigma) by more
    than 1 (the profile is then a step function on the doubles)."""
    s = math.exp(t)
    return (eps * s + 0.5 / s) * math.ulp(s) / s > 1.0


def _smallest_private(sigma: float, eps: float, target: float) -> float:
    """The smallest double with log profile <= target, next to the root sigma.

    The root found in double precision can sit an ulp or more on either side of
    the boundary; the profile is decreasing in sigma and positive doubles are
    ordered like their bit patterns, so a bracket grown geometrically in ulps
    around sigma and bisection on the integers finds the boundary. For large
    eps one ulp of sigma moves log delta by about u sqrt(2 eps) ulps (more
    than 1e-12 relative beyond eps ~ 1e8, orders of magnitude near 1e100):
    returning this double is then the only way to return a private sigma.
    """
    def ok(i: int) -> bool:
        return _log_profile_scalar(_from_bits(i), eps) <= target

    i = _to_bits(sigma)
    if ok(i):
        hi, lo, step = i, i - 1, 1
        while lo > 0 and ok(lo):
            hi, lo, step = lo, lo - step, 2 * step
        lo = max(lo, 0)
    else:
        lo, hi, step = i, i + 1, 1
        while not ok(hi):
            lo, hi, step = hi, hi + step, 2 * step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return _from_bits(hi)


def _to_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _from_bits(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def sigma_opt(*, eps: float, delta: float, sensitivity: float = 1.0) -> float:
    r"""Analytic Gaussian calibration, Theorem 2 / eq. (2) (Balle and Wang 2018, Thm 8).

    Returns :math:`\Delta\cdot\sigma_{opt}`, where :math:`\sigma_{opt}` is the smallest
    :math:`\sigma > 0` with :func:`privacy_profile` :math:`(\sigma;\varepsilon, \Delta=1)
    \le\delta`.  The Gaussian mechanism with noise :math:`\mathcal N(0,\sigma^2 I)` is
    :math:`(\varepsilon,\delta)`-DP if and only if :math:`\sigma` is at least this value.
    With ``sensitivity=1`` (the default) this is the report's :math:`\sigma_{opt}`.

    Accuracy: for every finite :math:`\varepsilon > 0` the exact profile at the
    returned value is at most ``delta (1 + 2e-13)`` and at the next smaller
    double above ``delta (1 - 2e-13)`` (checked against 60-245-digit mpmath for
    :math:`\varepsilon` from 1e-300 to the largest double): the Newton root is
    kept where its profile (computed to about 1e-14 relative, with
    u = b - a formed exactly) is within 1e-13 of ``delta``, which holds for
    :math:`\varepsilon` up to about 1e6; beyond, one ulp of :math:`\sigma`
    moves the profile by :math:`\approx u\sqrt{2\varepsilon}` ulps (1e-9
    relative at 1e12, orders of magnitude near 1e100), and the smallest double
    with profile at most ``delta`` is returned.
    Cost: some microseconds (3-6 Newton steps on :math:`\log\delta` against
    :math:`\log\sigma` with the analytic derivative, then a check of the
    neighbouring doubles).

    Parameters
    ----------
    eps : float > 0
    delta : float in (0, 1)
    sensitivity : float > 0
        The :math:`\ell_2` sensitivity :math:`\Delta`.

    Examples
    --------
    >>> round(sigma_opt(eps=1.0, delta=1e-5), 8)
    3.73063163
    >>> sigma_opt(eps=0.5, delta=1e-5) < sigma_classical(eps=0.5, delta=1e-5)
    True
    """
    eps = check_positive_finite("eps", eps)
    delta = check_probability("delta", delta)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    out = sensitivity * _sigma_opt_unit(eps, delta)
    check_finite_result(out, what="sigma_opt", inputs="sensitivity (or 1/eps)")
    return out


def eps_from_sigma(sigma: float, *, delta: float, sensitivity: float = 1.0) -> float:
    r"""Smallest :math:`\varepsilon \ge 0` with :func:`privacy_profile` :math:`\le\delta`.

    The companion of :func:`sigma_opt`: eq. (2) of Theorem 2 solved for
    :math:`\varepsilon` instead of :math:`\sigma` (noise scale in, privacy level out).  Returns
    ``0.0`` when the mechanism is already :math:`(0,\delta)`-DP, i.e. when
    :math:`2\Phi(\Delta/(2\sigma)) - 1 \le \delta`.

    Examples
    --------
    >>> s = sigma_opt(eps=2.0, delta=1e-6)
    >>> round(eps_from_sigma(s, delta=1e-6), 10)
    2.0
    """
    sigma = check_positive_finite("sigma", sigma)
    delta = check_probability("delta", delta)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    s = sigma / sensitivity
    if s == 0.0:
        raise ValueError(
            f"sigma / sensitivity underflows to 0 (sigma={sigma!r}, sensitivity={sensitivity!r}): "
            "no finite eps makes so little noise private"
        )
    target = math.log(delta)
    # eps -> 0: delta -> 2 Phi(1/(2s)) - 1 = erf(1/(2 sqrt(2) s))
    if math.erf(0.5 / (_SQRT2 * s)) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _log_profile_scalar(s, hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > _FLOAT_MAX / 2.0:
            raise ValueError(
                f"sigma / sensitivity is too small: the eps it achieves exceeds the largest double "
                f"(sigma={sigma!r}, sensitivity={sensitivity!r})"
            )
    def f(e: float) -> float:
        log_d = math.log(math.erf(0.5 / (_SQRT2 * s))) if e == 0.0 else _log_profile_scalar(s, e)
        return log_d - target

    out = float(brentq(f, lo, hi, xtol=1e-300, rtol=1e-15))
    check_finite_result(out, what="eps", inputs="1/sigma or sensitivity")
    return out


# ----------------------------------------------------------------------------------------
# zero-concentrated DP (Bun and Steinke 2016), and the lecture notes' parameter
# ----------------------------------------------------------------------------------------
def rho_from_lecture_notes(rho_notes: float) -> float:
    r"""The zCDP :math:`\rho` of the lecture notes' parameter: :math:`\rho = \rho_{\rm notes}/2`.

    The lecture notes *Gaussian Noise Mechanism* supplied with the report add
    :math:`Z\sim\mathcal N(0, (\Delta_2 f)^2/\rho_{\rm notes}\, I)` and state
    :math:`\varepsilon = \tfrac{\sqrt{\rho_{\rm notes}}}{2}(\sqrt{\rho_{\rm notes}}
    + 2\sqrt{2\ln(1/\delta)})`.  The same noise is :math:`\rho`-zCDP (Bun and Steinke
    2016, Prop. 1.6) with :math:`\rho = \rho_{\rm notes}/2`, and the notes'
    :math:`\varepsilon` is then Bun and Steinke's :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}`
    (:func:`rho_to_eps`).  egmlib's ``rho`` is always the zCDP one; convert the notes'
    parameter with this function first.

    Examples
    --------
    >>> rho_from_lecture_notes(0.5)
    0.25
    >>> sigma_from_rho(rho_from_lecture_notes(0.25), sensitivity=2.0)   # Delta / sqrt(rho_notes)
    4.0
    """
    rho_notes = check_positive_finite("rho_notes", rho_notes)
    out = 0.5 * rho_notes
    if out == 0.0:
        raise ValueError(f"rho_notes / 2 underflows to 0, got rho_notes={rho_notes!r}; rho_notes must be >= 1e-323")
    return out


def lecture_notes_rho(rho: float) -> float:
    r"""The lecture notes' parameter of a :math:`\rho`-zCDP Gaussian mechanism: :math:`2\rho`.

    Inverse of :func:`rho_from_lecture_notes`.

    Examples
    --------
    >>> lecture_notes_rho(0.25)
    0.5
    """
    rho = check_positive_finite("rho", rho)
    out = 2.0 * rho
    check_finite_result(out, what="rho_notes = 2 rho", inputs="rho")
    return out


def sigma_from_rho(rho: float, *, sensitivity: float = 1.0) -> float:
    r"""Noise scale of a :math:`\rho`-zCDP Gaussian mechanism: :math:`\sigma = \Delta/\sqrt{2\rho}`.

    Bun and Steinke (2016, Prop. 1.6): adding :math:`\mathcal N(0,\sigma^2 I)` to a query
    of :math:`\ell_2` sensitivity :math:`\Delta` is :math:`\Delta^2/(2\sigma^2)`-zCDP.
    (For the lecture notes' parameter use :func:`rho_from_lecture_notes` first.)

    Examples
    --------
    >>> sigma_from_rho(0.125, sensitivity=2.0)
    4.0
    """
    rho = check_positive_finite("rho", rho)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    two_rho = 2.0 * rho
    # sqrt(2) sqrt(rho) where 2 rho overflows (rho above half the float maximum)
    out = sensitivity / (math.sqrt(two_rho) if two_rho < math.inf else math.sqrt(2.0) * math.sqrt(rho))
    check_finite_result(out, what="sigma", inputs="sensitivity or 1/rho")
    return out


def rho_to_eps(rho: float, *, delta: float) -> float:
    r"""The :math:`\varepsilon` at :math:`\delta` of any :math:`\rho`-zCDP release.

    .. math::

        \varepsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}

    (Bun and Steinke 2016, Prop. 1.3).  A sufficient condition, not the exact curve:
    :func:`privacy_profile` at ``sigma_from_rho(rho)`` and this :math:`\varepsilon` is
    below :math:`\delta`, and :func:`eps_from_sigma` is smaller.  The lecture notes'
    formula :math:`\tfrac{\sqrt{\rho_n}}{2}(\sqrt{\rho_n} + 2\sqrt{2\ln(1/\delta)})`
    is this at :math:`\rho = \rho_n/2` (:func:`rho_from_lecture_notes`).

    Examples
    --------
    >>> round(rho_to_eps(0.25, delta=1e-5), 6)
    3.64307
    """
    rho = check_positive_finite("rho", rho)
    delta = check_probability("delta", delta)
    L = math.log(1.0 / delta) if delta > 1e-300 else -math.log(delta)  # 1/delta overflows below
    # sqrt(4 rho L): bit for bit the notes' sqrt(2 rho_notes L) at rho_notes = 2 rho
    root = math.sqrt(4.0 * rho * L) if rho < 1e300 else 2.0 * math.sqrt(rho) * math.sqrt(L)
    out = rho + root
    check_finite_result(out, what="eps", inputs="rho")
    return out


def eps_to_rho(eps: float, *, delta: float) -> float:
    r"""Inverse of :func:`rho_to_eps`: the largest zCDP :math:`\rho` whose bound gives
    :math:`(\varepsilon,\delta)` (Bun and Steinke 2016, Prop. 1.3).

    With :math:`L=\ln(1/\delta)`, :math:`\rho = (\sqrt{L+\varepsilon}-\sqrt L)^2
    = \varepsilon^2/(\sqrt{L+\varepsilon}+\sqrt L)^2` (the second form has no cancellation).

    Examples
    --------
    >>> round(eps_to_rho(rho_to_eps(0.25, delta=1e-5), delta=1e-5), 12)
    0.25
    """
    eps = check_positive_finite("eps", eps)
    delta = check_probability("delta", delta)
    L = math.log(1.0 / delta) if delta > 1e-300 else -math.log(delta)  # 1/delta overflows below
    den = (math.sqrt(L + eps) + math.sqrt(L)) ** 2
    out = eps * eps / den if eps < 1e150 else eps * (eps / den)
    if out == 0.0:
        raise ValueError(
            f"eps is too small: the rho it allows underflows to 0 (eps={eps!r}, delta={delta!r})")
    check_finite_result(out, what="rho", inputs="eps")
    return out
