r"""Predicted errors of ESM's paths, from public and released quantities only.

ESM (:func:`egmlib.peers.algorithm3_robust.algorithm3_robust`, the book's recommended
private mean) has four releases; it runs the one whose *predicted* error is smallest:

=================  ==========================================================================
path               release
=================  ==========================================================================
``iome``           IOME (Huang, Liang and Yi 2021, as PLAN's experiments run it) alone, with
                   the whole budget (or what the scale step left), searching the whole box
                   where its bisection tracks the data
``centred-iome``   a coarse centre (the rows' private grand mean), then IOME around it
``algorithm3``     private scales, CoinPress's whitened centre, a private radius, Algorithm 3
``plan``           the same scales and centre, then PLAN's last step (Aumuller et al. 2024)
=================  ==========================================================================

Every prediction is a function of :math:`n, d, \rho`, the box and (after the scale step)
the released scales and second moments, so choosing by it is post-processing.  Each is the
norm of the path's noise under Algorithm 3's model (rows
:math:`\mathcal N(\mu, \mathrm{diag}(\hat\sigma^2))`), with every term that the model fixes:

* :func:`bisection_accuracy` -- a noisy-bisection median (IOME's centre, per rotated
  coordinate) misses by about :math:`\sqrt{2\pi}\,s\,\sigma_c/n`, :math:`\sigma_c` the sd of each
  noisy count, :math:`s` the coordinate's sd: the count's noise moves the rank, and the
  density at the median is :math:`n/(\sqrt{2\pi}s)`; when :math:`\sigma_c` is a sizeable share of
  :math:`n` the bisection wanders over its whole interval instead;
* :func:`coinpress_accuracy` -- CoinPress's last step (Biswas et al. 2020) adds noise of sd
  :math:`s_t` per whitened coordinate, read off its public radius recursion at this
  :math:`n`, :math:`d`, budget and prior ball: it is large when the rows cannot shrink the ball
  from the box to the data in the steps the budget buys;
* :func:`iome_error`, :func:`algorithm3_error`, :func:`plan_last_step_error` -- the radius each
  release clips at (a quantile of the rows' norms around a centre that misses by the above),
  times the release's noise multiplier; IOME, which clips a fifth of the rows and more where they
  are few, also moves away from the rows' mean by what it clips (:func:`clipped_excess`).

The multiplicative factors :data:`ERROR_FACTORS` turn the model's noise into the median
error measured on synthetic Gaussian data (``benchmarks/offmodel_paths.py``); chapter 9 shows
the predictions against the measurements.  Off the model the second moments released with
the scales correct the predicted radii upwards (``mismatch``), never downwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, get_args

import numpy as np
from scipy import special

from egmlib import clipping, gchisq
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers import coinpress as _cp
from egmlib.peers import plan as _plan
from egmlib.peers.iome import IOME_SHARES, _check_shares, iome_clip_count
from egmlib.validation import FloatArray

__all__ = [
    "CENTRE_LEAN",
    "ERROR_FACTORS",
    "MAX_COUNT",
    "RHO_FLOOR",
    "IOME_STEPS",
    "PATHS",
    "Path",
    "algorithm3_error",
    "bisection_accuracy",
    "clipped_excess",
    "coinpress_accuracy",
    "iome_error",
    "plan_last_step_error",
]

#: ESM's paths, by name (:func:`egmlib.peers.algorithm3_robust.algorithm3_robust`).
Path = Literal["iome", "centred-iome", "algorithm3", "plan"]
#: The paths in the order that breaks a tie between equal predictions.
PATHS: tuple[Path, ...] = get_args(Path)
#: Measured median error over the model's predicted noise, per kind of release, on synthetic
#: Gaussian rows (``benchmarks/offmodel_paths.py``; chapter 9's figure of predictions).
ERROR_FACTORS: Mapping[str, float] = MappingProxyType({"iome": 0.959, "algorithm3": 1.016, "plan": 1.019})
#: ESM's CoinPress centre takes the fewest steps whose last noise is within 1 + CENTRE_LEAN of the
#: least (each step is a pass over the data; egmlib.peers.coinpress._lean_schedule).
CENTRE_LEAN = 0.01
#: IOME's bisection steps over the interval of PLAN's experiments (Huang, Liang and Yi 2021).
IOME_STEPS = 20
#: The smallest budget the predictions take, the arms' smallest (below it a share's noise leaves the float64 range).
RHO_FLOOR = 1e-300
#: The largest count (rows, coordinates) the predictions take.
MAX_COUNT = 10**12


def _check_rho(name: str, value: Any) -> float:
    """A budget the predictions can use: positive, finite and at least :data:`RHO_FLOOR` (ValueError naming it)."""
    rho = _v.check_positive_finite(name, value)
    if rho < RHO_FLOOR:
        raise ValueError(f"{name} must be at least {RHO_FLOOR:g}: below it the noise of its shares leaves the "
                         f"float64 range, got {name}={rho!r}")
    return rho


def _check_size(name: str, value: Any, *, minimum: int = 1) -> int:
    """A count of rows or coordinates the predictions can use: an int from ``minimum`` to :data:`MAX_COUNT`."""
    return _v.check_count(name, value, minimum=minimum, maximum=MAX_COUNT)


def _finite(value: float, inputs: str) -> float:
    _v.check_finite_result(value, what="the predicted error", inputs=inputs)
    return value


def _padded(d: int) -> int:
    return 1 << (d - 1).bit_length()


def bisection_accuracy(n: int, *, coordinates: int, rho: float, steps: int) -> float:
    r"""A noisy-bisection median's miss per coordinate, in units of the coordinate's sd.

    :math:`\sqrt{2\pi}\,\sigma_c/n` with :math:`\sigma_c = \sqrt{kT/(2\rho)}`, the sd of each
    noisy count when :math:`k` coordinates share :math:`\rho` over :math:`T` steps
    (:func:`egmlib.peers.quantiles.binary_search_quantiles`): near the median a count of
    Gaussian values moves by :math:`n/(\sqrt{2\pi}s)` per unit of :math:`s`, so the noise
    displaces the threshold where the noisy count crosses :math:`n/2` by about
    :math:`\sqrt{2\pi}s\,\sigma_c/n`.  Valid while :math:`\sigma_c` is well below :math:`n/2`;
    beyond it the bisection wanders over its interval (:func:`iome_error`).  The bisection is
    IOME's median step (Huang, Liang and Yi 2021); the prediction reads public values only
    (the book's Lemma 9.N).

    Examples
    --------
    >>> round(bisection_accuracy(10_000, coordinates=64, rho=0.25, steps=20), 4)
    0.0127
    """
    n = _check_size("n", n)
    coordinates = _check_size("coordinates", coordinates)
    rho = _check_rho("rho", rho)
    steps = _v.check_count("steps", steps, maximum=10**4)
    return _finite(math.sqrt(2.0 * math.pi) * _count_noise(coordinates, rho, steps) / n, "coordinates or rho")


def _count_noise(coordinates: int, rho: float, steps: int) -> float:
    return math.sqrt(coordinates * steps / (2.0 * rho))


def coinpress_accuracy(n: int, *, d: int, prior_radius: float, rho: float, beta: float = 0.01) -> float:
    r"""CoinPress's miss per whitened coordinate: the noise sd :math:`s_t` of its last step.

    From the public radius recursion of Biswas et al. (2020) with the schedule ESM's centre runs at
    this :math:`n`, :math:`d`, prior radius and budget (the fewest steps whose last noise is within
    ``1 + CENTRE_LEAN`` of the least of :func:`egmlib.peers.coinpress.coinpress_schedule`):
    :math:`s_t = 2(r_{t-1}+\gamma_1)(1+\nu)/(n\sqrt{2\rho_t})`.  When
    the rows cannot shrink the prior ball to the data's size in the steps the budget buys,
    :math:`r_{t-1}` and hence :math:`s_t` stay large.

    Examples
    --------
    >>> a = coinpress_accuracy(10_000, d=64, prior_radius=8.0 * 50, rho=1 / 8)
    >>> b = coinpress_accuracy(300, d=64, prior_radius=8.0 * 5000, rho=1 / 8)
    >>> bool(a < 0.1 < 10 < b)
    True
    """
    n = _check_size("n", n)
    d = _check_size("d", d)
    prior_radius = _v.check_positive_finite("prior_radius", prior_radius)
    rho = _check_rho("rho", rho)
    beta = _v.check_probability("beta", beta)
    return _finite(_coinpress_accuracy(n, d, prior_radius, rho, beta), "d, prior_radius or rho")


def _coinpress_accuracy(n: int, d: int, radius: float, rho: float, beta: float = 0.01) -> float:
    t, pre = _cp._lean_schedule(n, d, radius, rho, beta, CENTRE_LEAN, "paper")
    return float(_cp._recursion(n, d, radius, rho, beta, t, pre, "paper")[2][-1])


def _quantile(p: float, w: FloatArray) -> float:
    """x with P(sum_j w_j Z_j^2 > x) = p (the model's squared norm), p clipped to [1e-15, 0.99]."""
    return float(gchisq.isf(min(max(p, 1e-15), 0.99), w=w))


def iome_error(n: int, *, rho: float, variances: Any, lower: float, upper: float,
               shares: Mapping[str, float] | None = None) -> float:
    r"""The model's error of IOME (Huang, Liang and Yi 2021; PLAN's experiments) at budget ``rho``.

    Rows :math:`\mathcal N(\mu, \mathrm{diag}(v))`, :math:`V = \sum_j v_j`, rotated by a random
    Hadamard transform into :math:`N` coordinates of sd :math:`\sqrt{V/N}` each, centred in IOME's
    search interval (of half-width :math:`h = (u-l)/(2\sqrt N)` per rotated coordinate).  The
    centre misses each rotated coordinate by :math:`a` = :func:`bisection_accuracy`
    :math:`\cdot\sqrt{V/N}` (IOME's quarter of the budget over :math:`N` coordinates), and with
    probability :math:`q = \Phi(-n/(2\sigma_c))` a step turns the wrong way while every row lies on
    one side of its midpoint, which leaves the centre about that step's interval away:
    :math:`\delta^2 = N(a^2 + \tfrac43 q h^2)`, the second term only where the median run takes such
    a turn (:math:`N T_c q \ge \ln 2`, :math:`T_c` the steps whose interval is wider than the
    coordinate's sd).  IOME clips :math:`k` = :func:`egmlib.peers.iome.iome_clip_count` rows on
    purpose; with :math:`m = n - k` kept, the radius is :math:`C^2 = q_{k/n} + \delta^2`, :math:`q_p`
    the upper :math:`p` quantile of :math:`\sum_j v_jZ_j^2`, and the noise's norm is
    :math:`\sqrt d\cdot 2C/(n\sqrt{2\rho_{\rm noise}})`.  What the clipping removes moves the release
    from the rows' mean even for symmetric rows (:func:`clipped_excess` at the radius
    :math:`c = \sqrt{q_{k/n}}` about the mean: :math:`e_2` and :math:`\kappa`): by
    :math:`\sqrt{e_2/n}`, the spread of the clipped excess of :math:`n` rows, and by
    :math:`\kappa\sqrt{(\pi/2-1)V/n}`, the clipping's pull towards IOME's centre, the rows'
    median, which lies that far from their mean.  The error is the root of the three squares; when
    :math:`m \le 0` the release is the centre and the error :math:`\sqrt{d/N}\,\delta`.  Times
    ``ERROR_FACTORS["iome"]``.  ``lower``
    and ``upper`` are the box IOME searches: the caller's, or for ESM's search over the whole box
    (:func:`egmlib.peers.algorithm3_robust.whole_box_tracks`) :math:`[-W, W]`.  ``shares`` is IOME's
    split of ``rho`` (default :data:`egmlib.peers.iome.IOME_SHARES`; ESM's IOME:
    :func:`egmlib.peers.algorithm3_robust.iome_shares`).

    Examples
    --------
    >>> v = np.ones(64)
    >>> e = iome_error(10_000, rho=0.25, variances=v, lower=-50.0, upper=50.0)
    >>> round(e / (8.0 * 2 * 8.0 / (10_000 * math.sqrt(2 * 0.7425 * 0.25))), 2)   # over sqrt(d) 2 sqrt(V) / ...
    1.13
    """
    n = _check_size("n", n, minimum=2)
    rho = _check_rho("rho", rho)
    v = _v.check_nonnegative_vector("variances", variances)
    if not math.isfinite(float(np.sum(v))):
        raise ValueError("variances must have a finite sum (the predictions add them), got entries too large")
    lower, upper = _v.check_bounds(lower, upper)
    split = _check_shares(shares)
    _budget.split_budget(rho, shares=split)  # every share positive, summing to 1
    return _finite(_iome_error(n, rho, v, lower, upper, shares=split), "variances, lower or upper")


def _iome_error(n: int, rho: float, v: FloatArray, lower: float, upper: float,
                shares: Mapping[str, float] = IOME_SHARES) -> float:
    """:func:`iome_error`, with IOME's budget split by ``shares`` (ESM's IOME paths pay their
    earlier releases from the noise: :mod:`egmlib.peers.algorithm3_robust`)."""
    d = v.shape[0]
    N = _padded(d)
    half = 0.5 * (upper - lower) / math.sqrt(N)
    V = float(np.sum(v))
    sd_rot = math.sqrt(V / N)
    sigma_c = _count_noise(N, shares["centre"] * rho, IOME_STEPS)
    a = math.sqrt(2.0 * math.pi) * sigma_c / n * sd_rot
    delta2 = N * (a * a + _wander(n, sigma_c, half, sd_rot, N))
    k = iome_clip_count(d, rho=rho, steps=IOME_STEPS, shares=shares)
    if k >= n:
        return ERROR_FACTORS["iome"] * math.sqrt(d / N * delta2)
    q = _quantile(k / n, v) if V > 0 else 0.0
    slack = 1.0 + clipping.rounding_slack(n, d=N)
    s = 2.0 * math.sqrt(q + delta2) * slack / (n * math.sqrt(2.0 * shares["noise"] * rho))
    e2, kappa = _clipped_excess(v, math.sqrt(q)) if V > 0 else (0.0, 0.0)
    moved2 = e2 / n + kappa * kappa * (0.5 * math.pi - 1.0) * V / n
    return ERROR_FACTORS["iome"] * math.sqrt(d * s * s + moved2)


def clipped_excess(variances: Any, *, radius: float) -> tuple[float, float]:
    r"""What clipping at ``radius`` about the mean removes from rows :math:`\mathcal N(\mu, \mathrm{diag}(v))`.

    With :math:`R` the norm of a row about the mean and :math:`c` the radius, returns

    * :math:`e_2 = \mathbb E[(R-c)_+^2]`, the mean square length clipped off a row: the clipped mean
      of :math:`n` rows differs from their mean by about :math:`\sqrt{e_2/n}` even for symmetric rows;
    * :math:`\kappa = \mathbb E[(1-c/R)_+]`, the share by which clipping pulls the mean towards a
      centre slightly off it (a clipped row shrinks towards the centre by :math:`1 - c/R`).

    :math:`R^2 = \sum_j v_jZ_j^2` is taken as the scaled chi-square :math:`g\chi^2_h` with its mean and
    variance (Satterthwaite: :math:`g = \sum_j v_j^2/\sum_j v_j`, :math:`h = (\sum_j v_j)^2/\sum_j v_j^2`;
    exact for equal variances), whose moments above :math:`c` are chi-square tails:
    :math:`\mathbb E[R^a;\,R>c] = (2g)^{a/2}\,\Gamma(\tfrac{h+a}2)/\Gamma(\tfrac h2)\;
    Q_{h+a}(c^2/g)` for :math:`a = 2, 1, -1`, :math:`Q_\nu` the chi-square survival function.  The
    prediction of IOME (Huang, Liang and Yi 2021), which clips a share of the rows on purpose, reads
    both (:func:`iome_error`).

    Examples
    --------
    >>> e2, kappa = clipped_excess(np.ones(8), radius=3.3212)   # clips a fifth of chi_8
    >>> round(e2, 4), round(kappa, 4)
    (0.064, 0.0214)
    """
    v = _v.check_nonnegative_vector("variances", variances)
    total = float(np.sum(v))
    if not (math.isfinite(total) and total > 0.0):
        raise ValueError(f"variances must have a positive, finite sum (the rows must spread), got a sum of {total!r}")
    radius = _v.check_nonnegative_finite("radius", radius)
    return _clipped_excess(v, radius)


def _clipped_excess(v: FloatArray, c: float) -> tuple[float, float]:
    top = float(np.max(v))
    w = v / top  # in [0, 1] with a 1: no sum below underflows
    w1, w2 = float(np.sum(w)), float(np.sum(w * w))
    if c == 0.0:  # every row is clipped onto the centre
        return top * w1, 1.0
    g, h = top * w2 / w1, w1 * w1 / w2
    z = c / math.sqrt(g)
    x = z * z if z < 1e150 else math.inf
    Qh = float(special.chdtrc(h, x))
    if Qh == 0.0:  # no row reaches the radius in float64 (x may be inf)
        return 0.0, 0.0
    log_half = float(special.gammaln(0.5 * h))
    lead = math.sqrt(2.0 * g) * math.exp(float(special.gammaln(0.5 * (h + 1.0))) - log_half)
    e2 = g * h * float(special.chdtrc(h + 2.0, x)) - 2.0 * c * lead * float(special.chdtrc(h + 1.0, x)) + c * c * Qh
    a = 0.5 * (h - 1.0)  # E[R^-1; R > c] by the upper incomplete gamma of a (E1 where a is 0), in logs
    ratio = float(special.exp1(0.5 * x)) / math.exp(log_half) if a < 1e-9 else \
        math.exp(float(special.gammaln(a)) - log_half) * float(special.gammaincc(a, 0.5 * x))
    inverse = ratio / math.sqrt(2.0 * g)
    return max(e2, 0.0), min(max(Qh - c * inverse, 0.0), 1.0)


def _wrong_turn(n: int, sigma_c: float) -> float:
    """The probability that a noisy count of n rows all on one side of the midpoint (margin n/2)
    sends the bisection the wrong way."""
    return float(special.ndtr(-0.5 * n / sigma_c))


def _wander(n: int, sigma_c: float, half: float, sd: float, N: int) -> float:
    """The mean square miss a wandering bisection adds per coordinate, where the median run wanders.

    A wrong turn at step t, while every row lies on one side of the midpoint (probability q), leaves
    the centre about the interval's half-width h 2^-t from the data: q h^2 (4/3) in mean square.
    Only the steps whose interval is wider than the coordinate's sd cost; with lam = N T_c q of them
    expected over the N coordinates, the median run has none when lam < ln 2 (then 0)."""
    q = _wrong_turn(n, sigma_c)
    costly = max(0, math.ceil(math.log2(half / sd))) if sd > 0 else 0
    if N * costly * q < math.log(2.0):
        return 0.0
    return (4.0 / 3.0) * q * half * half


def _check_sigma(sigma: Any) -> FloatArray:
    s = _v.check_positive_vector("sigma", sigma)
    with np.errstate(over="ignore", under="ignore"):
        squares = s * s
    if not (np.all(np.isfinite(squares)) and np.all(squares > 0) and math.isfinite(float(np.sum(s)))):
        raise ValueError("sigma's entries must have positive, finite squares and a finite sum (the predictions "
                         "weight by them), got entries too large or too small")
    return s


def algorithm3_error(n: int, *, sigma: Any, rho_centre: float, rho_noise: float, lower: float, upper: float,
                     mismatch: float = 1.0) -> float:
    r"""The model's error of ESM's Algorithm 3 path: CoinPress's centre, a radius, Algorithm 3's noise.

    With :math:`S = \sum_j\hat\sigma_j` and :math:`b_j = (\hat\sigma_jS)^{-1/2}` (the report's
    eq. (7)), the centre misses by :math:`s_t` per whitened coordinate (:func:`coinpress_accuracy`
    from the whitened box's radius :math:`\|(u-l)/(2\hat\sigma)\|`), which moves every transformed
    row by about :math:`o = s_t` (:math:`\sum_j s_t^2\hat\sigma_j/S`).  The radius step keeps about
    :math:`t = \sqrt{d/\rho_{\rm noise}}` rows beyond its radius, so
    :math:`C^2 = \mathrm{mismatch}\cdot q_{t/n} + o^2`, :math:`q_p` the upper :math:`p` quantile of
    :math:`\sum_j(\hat\sigma_j/S)Z_j^2`, at least :math:`C_0/2` (the grid's bottom), and the
    error is the norm of the noise, :math:`2CS/(n\sqrt{2\rho_{\rm noise}})` (the report's eq. (9)).
    ``mismatch`` (at least 1) is how many times the rows' mean squared transformed norm exceeds
    the model's 1, from the released second moments.  Times ``ERROR_FACTORS["algorithm3"]``.

    Examples
    --------
    >>> s = (64 / np.arange(1, 65)) ** 0.75
    >>> e = algorithm3_error(10_000, sigma=s, rho_centre=1 / 32, rho_noise=0.18, lower=-500.0, upper=500.0)
    >>> bool(0 < e < iome_error(10_000, rho=0.25, variances=s**2, lower=-500.0, upper=500.0))
    True
    """
    n = _check_size("n", n, minimum=2)
    s = _check_sigma(sigma)
    rho_centre = _check_rho("rho_centre", rho_centre)
    rho_noise = _check_rho("rho_noise", rho_noise)
    lower, upper = _v.check_bounds(lower, upper)
    mismatch = _v.check_positive_finite("mismatch", mismatch)
    return _finite(_algorithm3_error(n, s, rho_centre, rho_noise, lower, upper, max(mismatch, 1.0)),
                   "sigma, lower, upper or mismatch")


def _whitened_radius(s: FloatArray, lower: float, upper: float) -> float:
    half = 0.5 * (upper - lower) / s
    top = float(np.max(half))
    return top * float(np.linalg.norm(half / top))


def _algorithm3_error(n: int, s: FloatArray, rho_centre: float, rho_noise: float, lower: float, upper: float,
                      mismatch: float) -> float:
    d = s.shape[0]
    S = float(np.sum(s))
    w = s / S
    o2 = _coinpress_accuracy(n, d, _whitened_radius(s, lower, upper), rho_centre) ** 2
    t = math.sqrt(d / rho_noise)
    C2 = mismatch * _quantile(t / n, w) + o2
    C = max(math.sqrt(C2), 0.5 * math.sqrt(_quantile(1.0 / n, w)))
    noise = 2.0 * C * S * (1.0 + clipping.rounding_slack(n, d=d)) / (n * math.sqrt(2.0 * rho_noise))
    return ERROR_FACTORS["algorithm3"] * noise


def plan_last_step_error(n: int, *, sigma: Any, rho_centre: float, rho_threshold: float, rho_noise: float,
                         lower: float, upper: float, mismatch: float = 1.0) -> float:
    r"""The model's error of PLAN's last step (Aumuller et al. 2024) on ESM's scales and centre.

    With :math:`\Delta` = :func:`egmlib.peers.plan.plan_scaling` of :math:`\hat\sigma` and PLAN's
    clip fraction :math:`k` (:func:`egmlib.peers.plan.plan_clip_fraction`), the centre's miss moves
    every scaled row by :math:`o^2 = s_t^2\sum_j\hat\sigma_j^2/\Delta_j`, the radius is
    :math:`C^2 = \mathrm{mismatch}\cdot q_k + o^2` (:math:`q_k` the upper :math:`k` quantile of
    :math:`\sum_j(\hat\sigma_j^2/\Delta_j)Z_j^2`) and the error the noise's norm
    :math:`2C\sqrt{\sum_j\Delta_j}/(n\sqrt{2\rho_{\rm noise}})`; with :math:`k \ge 1` every row is
    clipped and the release is the centre, off by :math:`s_t\|\hat\sigma\|`.  Times
    ``ERROR_FACTORS["plan"]``.

    Examples
    --------
    >>> s = np.ones(16)
    >>> e = plan_last_step_error(10_000, sigma=s, rho_centre=1 / 32, rho_threshold=0.05, rho_noise=0.14,
    ...                          lower=-50.0, upper=50.0)
    >>> bool(0 < e < 0.1)
    True
    """
    n = _check_size("n", n, minimum=2)
    s = _check_sigma(sigma)
    rho_centre = _check_rho("rho_centre", rho_centre)
    rho_threshold = _check_rho("rho_threshold", rho_threshold)
    rho_noise = _check_rho("rho_noise", rho_noise)
    lower, upper = _v.check_bounds(lower, upper)
    mismatch = _v.check_positive_finite("mismatch", mismatch)
    return _finite(_plan_error(n, s, rho_centre, rho_threshold, rho_noise, lower, upper, max(mismatch, 1.0)),
                   "sigma, lower, upper or mismatch")


def _plan_error(n: int, s: FloatArray, rho_centre: float, rho_threshold: float, rho_noise: float,
                lower: float, upper: float, mismatch: float) -> float:
    d = s.shape[0]
    st = _coinpress_accuracy(n, d, _whitened_radius(s, lower, upper), rho_centre)
    Delta = _plan.plan_scaling(s)
    k = _plan._clip_fraction(n, rho_threshold, lower, upper, 0.1)
    if k >= 1.0:
        return ERROR_FACTORS["plan"] * st * float(np.linalg.norm(s))
    w = s * s / Delta
    C2 = mismatch * _quantile(k, w) + st * st * float(np.sum(w))
    noise = 2.0 * math.sqrt(C2) * math.sqrt(float(np.sum(Delta))) * (1.0 + clipping.rounding_slack(n, d=d)) \
        / (n * math.sqrt(2.0 * rho_noise))
    return ERROR_FACTORS["plan"] * noise
