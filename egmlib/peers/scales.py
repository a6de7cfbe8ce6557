r"""Private per-coordinate standard deviations from pairwise differences (PLAN's scale step).

PLAN (Aumuller, Lebeda, Nelson and Pagh 2024, Section 5 and its experiments) estimates
:math:`\sigma_j` without knowing the mean: pair the rows at random,
:math:`(x_{\pi(2i-1)}, x_{\pi(2i)})` for :math:`i = 1,\dots,\lfloor n/2\rfloor`, and form

.. math::

    v_{ij} = \tfrac12\,(x_{\pi(2i-1),j} - x_{\pi(2i),j})^2 ,

which has mean :math:`\sigma_j^2` whatever the mean of the data.  The private
coordinate-wise median of the :math:`v_{ij}`
(:func:`egmlib.peers.quantiles.coordinatewise_quantiles`, universe
:math:`[0, \tfrac12(\text{upper}-\text{lower})^2]`) estimates
:math:`\sigma_j^2\,\mathrm{med}(\chi^2_1)` for Gaussian coordinates, so

.. math::

    \hat\sigma_j = \sqrt{\widetilde{\mathrm{med}}_j(v) / \mathrm{med}(\chi^2_1)},
    \qquad \mathrm{med}(\chi^2_1) = 0.45494\ldots

Privacy: the pairing is drawn from ``rng``, independently of the data; substituting one
row changes one pair, i.e. one :math:`v_i`, so each column's median sees a substitution
of one value and the estimate has the privacy of
:func:`~egmlib.peers.quantiles.coordinatewise_quantiles` at the same :math:`\rho`.

Choices where PLAN's experiments differ (group size ``k_groups = 1`` there, as here):

* they divide the median by the Wilson-Hilferty approximation
  :math:`(1 - 2/9)^3 = 0.4705` of :math:`\mathrm{med}(\chi^2_1)`, which inflates
  :math:`\hat\sigma_j^2` by 3.4 %; this module uses the exact median;
* they first triple the data (:math:`x - 0.1, x, x + 0.1`, to separate ties) and charge
  :math:`\rho/3` for it, but a tripled row moves three ranks, which costs :math:`9\times`
  in :math:`\rho`; for continuous data there are no ties and this module does not triple.

Ties and discrete columns: :func:`second_moments`
-------------------------------------------------
Logarithms and medians of :math:`v_{ij}` see only the pairs that differ: in a column of
counts, ordinal answers or sparse 0/1 items most pairs are tied, :math:`v_{ij} = 0`, and the
log scale collapses towards its floor (the more ties, the lower), while the median is 0 once
half the pairs tie.  The mean does not: :math:`\mathbb E v_{ij} = \sigma_j^2` for every law
with a variance.  :func:`second_moments` estimates it for all :math:`d` columns at once, as an
:math:`\ell_2`-clipped mean of the rows :math:`v_i \in \mathbf R^d` (one Gaussian mechanism,
radius a private quantile of :math:`\|v_i\|`), which is accurate for the columns whose
:math:`\sigma_j^2` stands out of its noise, the columns of a sparse or tied dataset among them.

A robust alternative: :func:`coinpress_log_scales`
--------------------------------------------------
The exponential-mechanism median on :math:`[0, \tfrac12(\text{upper}-\text{lower})^2]`
needs :math:`\varepsilon n/4 \gtrsim \ln(\text{universe}/\sigma_j^2)` to stay inside
the data: with PLAN's universes, :math:`n = 10^4`, :math:`d = 2048` and
:math:`\rho/d \approx 10^{-5}` per coordinate the outermost interval (length about
:math:`10^{13}`) outweighs the data and :math:`\hat\sigma_j` lands anywhere up to the
universe's end.  :func:`coinpress_log_scales` (this project's construction from
published parts) instead takes logarithms,
:math:`w_{ij} = \ln v_{ij} = \ln\sigma_j^2 + \ln\chi^2_1`, whose noise has the same law
in every coordinate (mean :math:`\psi(\tfrac12)+\ln 2 = -1.2704`, variance
:math:`\pi^2/2`), standardises them and estimates their mean with CoinPress
(:func:`egmlib.peers.coinpress.coinpress_mean`; Biswas et al. 2020), whose iterations
shrink the prior ball geometrically instead of searching the whole universe at once.
It needs a public floor :math:`\sigma_j \ge` ``floor`` :math:`\cdot(\text{upper}-\text{lower})`
for the prior ball of :math:`\ln\sigma_j^2`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from egmlib import clipping
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers.coinpress import CoinPressResult, coinpress_mean
from egmlib.peers.quantiles import coordinatewise_quantiles, private_quantile
from egmlib.validation import FloatArray

__all__ = [
    "CHI2_1_MEDIAN",
    "LOG_CHI2_1_MEAN",
    "LOG_CHI2_1_SD",
    "SECOND_MOMENT_QUANTILE",
    "LogScalesResult",
    "SecondMoments",
    "coinpress_log_scales",
    "pairwise_scales",
    "pairwise_squared_differences",
    "second_moments",
    "shrunk_log_scales",
]

#: Median of the chi-square distribution with one degree of freedom, 2 P^{-1}(1/2, 1/2)
#: (what scipy.stats.chi2.ppf(0.5, 1) computes, without importing scipy.stats).
CHI2_1_MEDIAN = 2.0 * float(special.gammaincinv(0.5, 0.5))
#: Mean of ln(chi^2_1), equal to digamma(1/2) + ln 2.
LOG_CHI2_1_MEAN = float(special.digamma(0.5) + math.log(2.0))
#: Standard deviation of ln(chi^2_1), equal to sqrt(trigamma(1/2)) = pi / sqrt(2).
LOG_CHI2_1_SD = math.pi / math.sqrt(2.0)
#: The quantile of the rows' norms at which :func:`second_moments` clips them.
SECOND_MOMENT_QUANTILE = 0.9


@dataclass(frozen=True)
class LogScalesResult:
    """Output of :func:`coinpress_log_scales`."""

    sigma_hat: FloatArray  #: (d,) private standard deviations
    coinpress: CoinPressResult  #: the CoinPress run on the standardised logarithms
    pairs: int  #: m, the number of paired rows whose logarithms CoinPress averaged


def pairwise_squared_differences(X: Any, *, rng: np.random.Generator) -> FloatArray:
    r"""Half squared differences of randomly paired rows.

    :math:`v_{ij} = \tfrac12(x_{\pi(2i-1),j} - x_{\pi(2i),j})^2` for a random pairing :math:`\pi`.

    The pairing is a uniformly random permutation drawn from ``rng`` (independent of
    the data); with odd ``n`` one row is left out.  Each :math:`v_{ij}` has mean
    :math:`\sigma_j^2` when the rows are independent with common coordinate variances
    (PLAN's scale step, Aumuller et al. 2024).  A difference beyond the float64 range is
    a ValueError.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (n // 2, d)

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0]])
    >>> pairwise_squared_differences(X, rng=np.random.default_rng(0)).tolist()
    [[2.0, 0.0]]
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    rng = _v.check_rng("rng", rng)
    return _pairwise(X, rng)


def _pairwise(X: np.ndarray, rng: np.random.Generator) -> FloatArray:
    n, d = X.shape
    perm = rng.permutation(n)
    m = n // 2
    first, second = perm[0:2 * m:2], perm[1:2 * m:2]
    out = np.empty((m, d))
    step = max(1, 2**17 // d)  # chunks: no whole-size temporaries
    for a in range(0, m, step):
        b = min(a + step, m)
        np.subtract(X[first[a:b]], X[second[a:b]], out=out[a:b])
    with np.errstate(over="ignore"):
        out *= out
    out *= 0.5
    _v.check_finite_result(out.max(), what="a squared difference of two rows", inputs="X")
    return out


def pairwise_scales(X: Any, *, rho: float, lower: float, upper: float,
                    rng: np.random.Generator) -> FloatArray:
    r"""Private standard deviations, rho-zCDP in total (PLAN's scale step).

    :math:`\hat\sigma_j = \sqrt{\widetilde{\mathrm{med}}_j / \mathrm{med}(\chi^2_1)}` where
    :math:`\widetilde{\mathrm{med}}_j` is the exponential-mechanism median (budget
    :math:`\rho/d`) of column :math:`j` of :func:`pairwise_squared_differences`; see the
    module docstring (Aumuller et al. 2024).

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
        Total zCDP budget over the d coordinates.
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate of the data; the squared differences then
        lie in :math:`[0, \tfrac12(\text{upper}-\text{lower})^2]`.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (d,), entries >= 0

    Examples
    --------
    >>> rng = np.random.default_rng(4)
    >>> X = rng.normal(scale=[1.0, 3.0], size=(20000, 2))
    >>> s = pairwise_scales(X, rho=4.0, lower=-30.0, upper=30.0, rng=rng)
    >>> bool(np.all(np.abs(s / [1.0, 3.0] - 1) < 0.05))
    True
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rho = _v.check_positive_finite("rho", rho)
    rng = _v.check_rng("rng", rng)
    width = upper - lower
    v_upper = 0.5 * width * width
    _v.check_finite_result(v_upper, what="the universe of squared differences",
                           inputs="lower, upper")
    V = _pairwise(X, rng)
    med = coordinatewise_quantiles(V, q=0.5, rho=rho, lower=0.0, upper=v_upper, rng=rng)
    return np.sqrt(med / CHI2_1_MEDIAN)


@dataclass(frozen=True)
class SecondMoments:
    """Output of :func:`second_moments`."""

    variance: FloatArray  #: (d,) private estimates of sigma_j^2 (noise can make an entry negative)
    noise_sd: float  #: standard deviation of the Gaussian noise on each entry of ``variance``
    radius: float  #: the private l2 radius tau at which the rows v_i were clipped


def second_moments(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
                   q: float = SECOND_MOMENT_QUANTILE) -> SecondMoments:
    r"""Private :math:`\sigma_j^2` of every column: the clipped mean of paired half squared differences.

    With :math:`v_i` the rows of :func:`pairwise_squared_differences` (:math:`m = \lfloor
    n/2\rfloor` of them, :math:`\mathbb E v_{ij} = \sigma_j^2` for any law with a variance:
    ties, counts and 0/1 columns included; PLAN's pairing, Aumuller et al. 2024):

    1. :math:`\tau` = the exponential-mechanism ``q``-quantile of :math:`\|v_i\|` on
       :math:`[0, \sqrt d\,(\text{upper}-\text{lower})^2/2]`, budget :math:`\rho/2`
       (:func:`egmlib.peers.quantiles.private_quantile`; sensitivity 1);
    2. :math:`\hat s = \frac1m\bigl(\sum_i \min(1, \tau/\|v_i\|)\,v_i + \eta\bigr)`,
       :math:`\eta\sim\mathcal N(0, s^2 I)` with :math:`s` the Gaussian noise of budget
       :math:`\rho/2` for the sensitivity :func:`egmlib.clipping.sum_sensitivity` of
       :math:`\tau` (Bun and Steinke 2016, Prop. 1.6).

    The pairing is drawn from ``rng``, independently of the data, so one substituted row
    changes one :math:`v_i`: the two steps are :math:`\rho/2`-zCDP each and the release
    :math:`\rho`-zCDP (composition, Bun and Steinke 2016, Lemma 1.7).  Clipping makes
    :math:`\hat s_j` biased low for columns whose :math:`v_{ij}` are heavy-tailed; the
    noise is the same in every column, so the estimate is informative where
    :math:`\sigma_j^2` exceeds a few times ``noise_sd``.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate (entries outside are moved onto it first).
    rng : numpy.random.Generator
    q : float in (0, 1), default ``SECOND_MOMENT_QUANTILE``
        The quantile of the rows' norms at which they are clipped.

    Returns
    -------
    SecondMoments

    Examples
    --------
    >>> rng = np.random.default_rng(4)
    >>> X = (rng.random((20000, 3)) < [0.5, 0.1, 0.02]).astype(float)   # 0/1 columns, mostly tied
    >>> r = second_moments(X, rho=1.0, lower=0.0, upper=1.0, rng=rng)
    >>> bool(np.all(np.abs(r.variance - [0.25, 0.09, 0.0196]) < 4 * r.noise_sd + 0.01))
    True
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rho = _v.check_positive_finite("rho", rho)
    rng = _v.check_rng("rng", rng)
    q = _v.check_probability("q", q)
    width = upper - lower
    top = math.sqrt(X.shape[1]) * 0.5 * width * width
    _v.check_finite_result(top, what="the universe of the rows' norms", inputs="lower, upper")
    V = _pairwise(X, rng)
    m, d = V.shape
    norms = clipping.transformed_norms(V)
    tau = private_quantile(np.minimum(norms, top), q=q, rho=0.5 * rho, lower=0.0, upper=top, rng=rng)
    total = clipping.clipped_sum(V, C=tau, norms=norms).total
    s = _budget.gaussian_noise_std(0.5 * rho, sensitivity=clipping.sum_sensitivity(tau, n=m, d=d))
    variance = (total + s * rng.standard_normal(d)) / m
    return SecondMoments(variance=variance, noise_sd=s / m, radius=tau)


def coinpress_log_scales(X: Any, *, rho: float, lower: float, upper: float,
                         rng: np.random.Generator, floor: float = 1e-12,
                         beta: float = 0.01) -> LogScalesResult:
    r"""Private standard deviations by CoinPress on log pairwise differences, rho-zCDP.

    With :math:`v_{ij}` from :func:`pairwise_squared_differences` (:math:`m = \lfloor n/2\rfloor`
    rows), :math:`\ell = \ln(\text{floor}^2(\text{upper}-\text{lower})^2)` and
    :math:`h = \ln(\tfrac14(\text{upper}-\text{lower})^2)`, the largest variance in the box:

    .. math::

        z_{ij} = \frac{\ln \min(\max(v_{ij}, e^{\ell}), 2e^{h}) - (-1.2704)}{\pi/\sqrt2},
        \qquad \mathbb E z_{ij} = \frac{\ln\sigma_j^2}{\pi/\sqrt2}\ (\text{Gaussian data}),

    with unit variance in every coordinate.  :func:`~egmlib.peers.coinpress.coinpress_mean`
    estimates :math:`\mathbb E z` from the prior ball with centre :math:`(\ell+h)/2` and
    radius :math:`\sqrt d\,(h-\ell)/2` (standardised), and
    :math:`\hat\sigma_j = \exp(\tfrac12\cdot\tfrac{\pi}{\sqrt2}\hat{\mathbb E} z_j)`,
    clipped to the public range :math:`[e^{\ell/2}, e^{h/2}]` (post-processing: CoinPress's
    noise can carry an estimate outside its prior ball when the budget is too small for
    its radius to converge).
    Privacy: one row changes one :math:`z_i` (the pairing is data-independent), which
    is all CoinPress's analysis needs (Biswas et al. 2020); the rows of :math:`z` are
    not Gaussian (:math:`\ln\chi^2_1` has a long left tail), which costs some clipping,
    never privacy.  This is this project's construction (see the module docstring).

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate.
    rng : numpy.random.Generator
    floor : float in (0, 1), default 1e-12
        Public assumption :math:`\sigma_j \ge` floor :math:`\cdot` (upper - lower).
    beta : float in (0, 1), default 0.01
        CoinPress's failure probability.

    Returns
    -------
    LogScalesResult
        ``sigma_hat`` and the CoinPress run on the standardised logarithms.

    Examples
    --------
    >>> rng = np.random.default_rng(8)
    >>> X = rng.normal(scale=[1.0, 10.0, 100.0], size=(20000, 3))
    >>> s = coinpress_log_scales(X, rho=1.0, lower=-1e4, upper=1e4, rng=rng).sigma_hat
    >>> bool(np.all(np.abs(s / [1.0, 10.0, 100.0] - 1) < 0.05))
    True
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rho = _v.check_positive_finite("rho", rho)
    floor = _v.check_probability("floor", floor)
    beta = _v.check_probability("beta", beta)
    rng = _v.check_rng("rng", rng)
    d = X.shape[1]
    width = upper - lower
    low_sd = floor * width
    if not low_sd > 0.0:
        raise ValueError(f"floor * (upper - lower) must be > 0 (it underflows), got floor={floor!r}, "
                         f"lower={lower!r} and upper={upper!r}")
    if not low_sd < 1e154:  # its square, the lower end of the clipped v, must stay finite
        raise ValueError(f"(floor * (upper - lower))^2 overflows the float64 range, got floor={floor!r}, "
                         f"lower={lower!r} and upper={upper!r}; rescale the data")
    lo = 2.0 * math.log(low_sd)
    hi = 2.0 * math.log(0.5 * width)
    # public: the squared differences of rows in the box stay finite
    _v.check_finite_result(0.5 * width * width, what="the universe of squared differences",
                           inputs="lower, upper")
    V = _pairwise(X, rng)
    np.clip(V, math.exp(lo), 0.5 * width * width, out=V)
    Z = np.log(V)
    Z -= LOG_CHI2_1_MEAN
    Z /= LOG_CHI2_1_SD
    centre = np.full(d, 0.5 * (lo + hi) / LOG_CHI2_1_SD)
    radius = math.sqrt(d) * 0.5 * (hi - lo) / LOG_CHI2_1_SD
    r = coinpress_mean(Z, rho=rho, prior_centre=centre, prior_radius=radius, rng=rng, beta=beta)
    # post-processing: no standard deviation of data in the box exceeds half its width
    sigma_hat = np.exp(np.clip(0.5 * LOG_CHI2_1_SD * r.estimate, 0.5 * lo, 0.5 * hi))
    return LogScalesResult(sigma_hat=sigma_hat, coinpress=r, pairs=V.shape[0])


def shrunk_log_scales(log_scales: LogScalesResult) -> FloatArray:
    r"""Log scales shrunk towards their common level by their public noise (James-Stein).

    With :math:`\ell_j = \ln\hat\sigma_j` from :func:`coinpress_log_scales` (``log_scales``) and
    :math:`\bar\ell` their mean over the :math:`d` coordinates, the positive-part
    James-Stein estimate (James and Stein 1961; Efron and Morris 1973)

    .. math::

        \tilde\ell_j = \bar\ell + \Bigl(1 - \frac{(d-3)\,\tau^2}{\sum_l(\ell_l-\bar\ell)^2}\Bigr)_+
        (\ell_j - \bar\ell),
        \qquad
        \tau^2 = \Bigl(\tfrac12\,\mathrm{sd}\,\ln\chi^2_1\Bigr)^2\Bigl(s_T^2 + \frac1m\Bigr),

    where :math:`s_T` is the noise standard deviation of CoinPress's last step on the
    standardised logarithms and :math:`m` the number of pairs: :math:`\tau^2` is the
    variance of :math:`\ell_j` around :math:`\ln\sigma_j` for Gaussian coordinates
    (sampling variance of a mean of :math:`m` standardised :math:`\ln\chi^2_1` values plus
    the privacy noise), a function of public quantities only.  When the spread of the
    :math:`\ell_j` is no larger than their noise (few rows, a small budget, or equal
    scales) the scales shrink to one common scale, and Algorithm 3 becomes the isotropic
    Gaussian mechanism around the private centre instead of weighting coordinates by noise;
    when the spread stands out of the noise they are kept nearly as they are.  For
    :math:`d \le 3` nothing is shrunk (James-Stein needs :math:`d \ge 3`; at :math:`d = 3`
    the factor is 1).  Post-processing of a private release: no budget.

    Returns
    -------
    numpy.ndarray, shape (d,), entries > 0
        :math:`\exp(\tilde\ell_j)`.

    Examples
    --------
    >>> rng = np.random.default_rng(5)
    >>> X = rng.normal(0.0, 1.0, size=(400, 8))              # equal scales, few rows
    >>> r = coinpress_log_scales(X, rho=1 / 32, lower=-100.0, upper=100.0, rng=rng, floor=1e-6)
    >>> s = shrunk_log_scales(r)
    >>> bool(np.ptp(np.log(s)) < np.ptp(np.log(r.sigma_hat)))
    True
    """
    if not isinstance(log_scales, LogScalesResult):
        raise TypeError(f"log_scales must be a LogScalesResult, got {type(log_scales).__name__}")
    return _shrink(log_scales)[0]


def _shrink(log_scales: LogScalesResult) -> tuple[FloatArray, float]:
    """:func:`shrunk_log_scales` and its factor (1 for d <= 3)."""
    ell = np.log(log_scales.sigma_hat)
    d = ell.shape[0]
    if d <= 3:
        return log_scales.sigma_hat.copy(), 1.0
    tau2 = (0.5 * LOG_CHI2_1_SD) ** 2 * (log_scales.coinpress.noise_stds[-1] ** 2 + 1.0 / log_scales.pairs)
    centred = ell - float(np.mean(ell))
    spread = float(np.dot(centred, centred))
    factor = max(0.0, 1.0 - (d - 3) * tau2 / spread) if spread > 0.0 else 0.0
    return np.exp(float(np.mean(ell)) + factor * centred), factor


# ---------------------------------------------------------------------------------------
# the scale step of ESM: one pairing, both estimators, in one quarter of the data's memory
# ---------------------------------------------------------------------------------------
#: The public floor of :func:`paired_scales`' log scales, sigma_j >= PAIRED_LOG_FLOOR * (upper - lower).
PAIRED_LOG_FLOOR = 1e-6
#: The share of :func:`paired_scales`' budget spent on the log scales (the rest on the second moments).
PAIRED_LOG_SHARE = 0.5
#: A second moment counts only where it stands sqrt(2 ln(d / PAIRED_LEVEL)) noise sds above 0, and
#: their total only where it stands sqrt(2 ln(1 / PAIRED_LEVEL)) sds above 0 (Gaussian tails).
PAIRED_LEVEL = 0.05
#: The log scales' CoinPress takes the fewest steps whose last noise is within 1 + PAIRED_LEAN of the
#: least (each step is a pass over the pairs).
PAIRED_LEAN = 0.01
#: The floor of the released scales, as this share of the larger of their mean and the root mean
#: square scale the second moments' total vouches for.
PAIRED_FLOOR_SHARE = 0.2
__all__ += ["PAIRED_FLOOR_SHARE", "PAIRED_LEVEL", "PAIRED_LOG_FLOOR", "PAIRED_LOG_SHARE", "PairedScales",
            "log_scale_noise", "paired_scales", "second_moment_threshold"]


@dataclass(frozen=True)
class PairedScales:
    """Output of :func:`paired_scales`: the released scales and the private releases behind them.

    Every field is a release of the scale step or a public function of one (its budget covers
    them all); none is a diagnostic of the data.
    """

    sigma_hat: FloatArray  #: (d,) the scales ESM uses
    log_scales: FloatArray  #: (d,) exp of the shrunk log scales
    log_noise: float  #: tau_l, the public sd of each log scale around ln sigma_j (Gaussian columns)
    variance: FloatArray  #: (d,) the second moments, noisy (an entry may be negative)
    noise_sd: float  #: sd of the Gaussian noise on each entry of ``variance``
    radius: float  #: tau, the private radius at which the rows v_i were clipped
    pairs: int  #: m, the number of pairs
    shrinkage: float  #: the James-Stein factor applied to the log scales' spread (1 keeps it, 0 removes it)


def second_moment_threshold(d: int) -> float:
    r"""How many noise sds a second moment must stand above 0 to count: :math:`\sqrt{2\ln(d/\alpha)}`.

    :math:`\alpha` = ``PAIRED_LEVEL``.  For a column whose variance is 0 the probability
    that Gaussian noise passes :math:`z` sds is at most :math:`e^{-z^2/2}/2`, so over
    :math:`d` columns at most :math:`\alpha/2` (a union bound).  Public: it depends on
    :math:`d` only (the :math:`z` of the book's Lemma 9.F, whose post-processing costs no
    budget).

    Examples
    --------
    >>> round(second_moment_threshold(1), 2), round(second_moment_threshold(512), 2)
    (2.45, 4.3)
    """
    d = _v.check_count("d", d, maximum=2**62)
    return math.sqrt(2.0 * math.log(d / PAIRED_LEVEL))


def _log_range(width: float, floor: float) -> tuple[float, float]:
    """ln of the smallest and the largest variance the log scales consider: (floor w)^2 and (w/2)^2."""
    return 2.0 * math.log(floor * width), 2.0 * math.log(0.5 * width)


def log_scale_noise(n: int, *, d: int, rho: float, floor: float = PAIRED_LOG_FLOOR,
                    beta: float = 0.01) -> float:
    r"""The public sd :math:`\tau_\ell` of one log scale of :func:`paired_scales` around :math:`\ln\sigma_j`.

    :math:`\tau_\ell = \tfrac12\,\mathrm{sd}(\ln\chi^2_1)\,\sqrt{s_T^2 + 1/m}`, :math:`m = \lfloor n/2\rfloor`
    pairs and :math:`s_T` the noise sd of the last step of CoinPress (Biswas et al. 2020) on the
    standardised logarithms, from its public radius recursion
    (:func:`egmlib.peers.coinpress.coinpress_schedule`) with the prior ball of
    :func:`coinpress_log_scales` at budget ``rho`` (the log scales' share).  It depends on
    :math:`n, d, \rho` and the floor only, never on the data or the box's width: the scale
    step's resolution, known before any budget is spent.  Gaussian columns; a column of ties
    is further off.

    Examples
    --------
    >>> round(log_scale_noise(20000, d=64, rho=1 / 16), 3), round(log_scale_noise(512, d=1024, rho=1 / 16), 2)
    (0.014, 5.51)
    """
    n = _v.check_count("n", n, minimum=2, maximum=10**12)
    d = _v.check_count("d", d, maximum=10**12)
    rho = _v.check_positive_finite("rho", rho)
    if rho < 1e-300:  # egmlib.peers.path_errors.RHO_FLOOR (that module imports this one)
        raise ValueError(f"rho must be at least 1e-300: below it the noise leaves the float64 range, got rho={rho!r}")
    floor = _v.check_probability("floor", floor)
    beta = _v.check_probability("beta", beta)
    out = _log_scale_noise(n, d, rho, floor, beta)
    _v.check_finite_result(out, what="the log scales' noise", inputs="d or rho")
    return out


def _log_scale_noise(n: int, d: int, rho: float, floor: float, beta: float = 0.01) -> float:
    from egmlib.peers import coinpress as _cp

    m = n // 2
    span = -2.0 * math.log(2.0 * floor)  # hi - lo, whatever the width
    radius = math.sqrt(d) * 0.5 * span / LOG_CHI2_1_SD
    t, pre = _cp._lean_schedule(m, d, radius, rho, beta, PAIRED_LEAN, "paper")
    s_T = _cp._recursion(m, d, radius, rho, beta, t, pre, "paper")[2][-1]
    return 0.5 * LOG_CHI2_1_SD * math.sqrt(s_T * s_T + 1.0 / m)


#: Pairs are drawn between blocks of consecutive rows, at most this many rows a block (and at most
#: n / PAIR_BLOCK_SHARE), so that a pair's rows are read as slices, not gathered one by one.
PAIR_BLOCK_SHARE = 256


def _pair_blocks(n: int, d: int) -> int:
    """The public block size B of the pairing: chunk_rows(d), at most n // PAIR_BLOCK_SHARE, at least 1."""
    return max(1, min(clipping.chunk_rows(d), n // PAIR_BLOCK_SHARE))


def _pairing(n: int, d: int, rng: np.random.Generator) -> list[tuple[int, int, int]]:
    """A uniformly random pairing of blocks of B consecutive rows, as (first, second, length) runs.

    The rows are cut into blocks of B = :func:`_pair_blocks` consecutive rows (the last one
    shorter), the blocks are put in a uniformly random order, and the k-th block of the first
    half of that order is paired with the k-th block of its second half, row by row (a shorter
    block with the first rows of its partner).  Every row lies in at most one pair; the draw
    does not look at the data.  With B = 1 this is a uniformly random pairing of the rows."""
    B = _pair_blocks(n, d)
    starts = np.arange(0, n, B)
    order = rng.permutation(starts.shape[0])
    half = order.shape[0] // 2
    runs = []
    for a, b in zip(order[:half], order[half:2 * half], strict=True):
        sa, sb = int(starts[a]), int(starts[b])
        length = min(B, n - sa, n - sb)
        runs.append((sa, sb, length))
    return runs


def _small_pages(shape: tuple[int, int], dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)`` without numpy's request for transparent huge pages.

    The paired rows are written once and read in a few sequential passes, which huge pages do not
    speed up; but where the kernel grants them only after compacting memory (``defrag`` set to
    ``madvise``, a common default), the request cost up to 0.5 s of kernel time per call on
    :math:`10^5\times 1024` rows, against a steady 0.06-0.09 s for ordinary pages
    (``benchmarks/offmodel_scale.py``).  Where numpy has no such switch the array is allocated as
    usual.
    """
    switch = getattr(getattr(np, "_core", None), "multiarray", None)
    switch = getattr(switch, "_set_madvise_hugepage", None)
    if switch is None:  # pragma: no cover - depends on the numpy version
        return np.empty(shape, dtype=dtype)
    before = switch(False)
    try:
        return np.empty(shape, dtype=dtype)
    finally:
        switch(before)


def _paired_rows(X: np.ndarray, rng: np.random.Generator, dtype: Any) -> tuple[np.ndarray, FloatArray]:
    """v_i = (x_a - x_b)^2 / 2 over the pairs (a, b) of :func:`_pairing`, as one (m, d) array of
    ``dtype`` built run by run from slices of X (no gather, no temporary of the data's size), and the
    rows' norms computed as :func:`egmlib.clipping.transformed_norms` computes them from the stored
    values.  Every v_ij is at most the public half_w2 = w^2 / 2 in float64: X lies in its box, so
    |x_a - x_b| <= w, and rounding to nearest is monotone (fl(x_a - x_b) <= fl(u - l) = w, then
    fl(diff^2) <= fl(w^2), and halving is exact), so no cap is needed."""
    n, d = X.shape
    runs = _pairing(n, d, rng)
    m = sum(k for _, _, k in runs)
    out = _small_pages((m, d), dtype)
    norms = np.empty(m)
    buf = np.empty((max((k for _, _, k in runs), default=1), d))
    i = 0
    for a, b, k in runs:
        B = buf[:k]
        np.subtract(X[a:a + k], X[b:b + k], out=B)
        np.multiply(B, B, out=B)
        np.multiply(B, 0.5, out=out[i:i + k], casting="same_kind")  # halving is exact; then the dtype's rounding
        B[...] = out[i:i + k]  # the stored values, as the clipped sum will read them
        norms[i:i + k] = np.sqrt(np.einsum("ij,ij->i", B, B))
        i += k
    return out, norms


def _moments_and_logs(V: np.ndarray, norms: FloatArray, tau: float, lo: float, half_w2: float,
                      centre: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """One pass over V, chunk by chunk: the second moments' clipped sum at ``tau`` (chunk sums added in
    order, the summation :func:`egmlib.clipping.sum_sensitivity` bounds), then each chunk turned in
    place into its standardised logarithms, with their sum about ``centre`` and their largest
    distance from it (the statistic and the spread CoinPress's first step reads)."""
    m, d = V.shape
    total, deviation, spread = np.zeros(d), np.zeros(d), 0.0
    step = clipping.chunk_rows(d)
    buf = np.empty((min(step, m), d))
    for a in range(0, m, step):
        b = min(a + step, m)
        total += clipping._clip_rows(V[a:b], tau, None, None, norms[a:b], None, step, True)[0]
        block = V[a:b]
        np.clip(block, math.exp(lo), half_w2, out=block)
        np.log(block, out=block)
        block -= LOG_CHI2_1_MEAN
        block /= LOG_CHI2_1_SD
        B = buf[:b - a]
        np.subtract(block, centre, out=B)  # the float64 loop widens the single-precision block exactly
        spread = max(spread, float(np.einsum("ij,ij->i", B, B).max()))
        deviation += B.sum(axis=0)
    _v.check_finite_result(total, what="the second moments' clipped sum", inputs="X, lower or upper")
    return total, deviation, math.sqrt(spread)


def paired_scales(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
                  floor: float = PAIRED_LOG_FLOOR) -> PairedScales:
    r"""ESM's private scales, :math:`\rho`-zCDP: log scales and second moments of one random pairing.

    With one data-independent pairing :math:`\pi` and the :math:`m = \lfloor n/2\rfloor` rows
    :math:`v_i = \tfrac12(x_{\pi(2i-1)} - x_{\pi(2i)})^{\odot2}` (PLAN's pairing; Aumuller et al. 2024):

    1. *second moments* (budget :math:`(1-a)\rho`, :math:`a` = ``PAIRED_LOG_SHARE``): a radius
       :math:`\tau = e^{q}`, :math:`q` the exponential-mechanism 0.9-quantile of
       :math:`\ln\|v_i\|` on the public range of those logarithms (half the budget; a private
       quantile in log space, which lands near the data however wide the box), then
       :math:`\hat s = (\sum_i \min(1, \tau/\|v_i\|)v_i + \eta)/m`, :math:`\eta` Gaussian for the
       sensitivity :func:`egmlib.clipping.sum_sensitivity` of :math:`\tau` (the other half).
       :math:`\mathbb E v_{ij} = \sigma_j^2` for any law with a variance: ties and zeros add 0
       to the mean, they do not drag it to a floor;
    2. *log scales* (budget :math:`a\rho`): CoinPress on the standardised logarithms, as
       :func:`coinpress_log_scales` with ``floor``, shrunk by :func:`shrunk_log_scales`
       (James-Stein): relative accuracy in every column whatever the spread of the scales;
    3. post-processing: :math:`\hat\sigma_j = \max(e^{\tilde\ell_j}, \sqrt{(\hat s_j - z s)_+})`,
       :math:`z` = :func:`second_moment_threshold`, then the floor ``PAIRED_FLOOR_SHARE``
       times the larger of :math:`\overline{\hat\sigma}` and :math:`\sqrt{V_-/d}`,
       :math:`V_- = (\sum_j\hat s_j - z_0\sqrt d\,s)_+` (:math:`z_0 = \sqrt{2\ln(1/\alpha)}`), a
       lower confidence bound on the total variance.  A column whose pairs are mostly tied
       (mostly-zero columns) has a log scale near the floor, and a second moment that its
       noise may hide; the total of all second moments is not hidden, so such columns are
       raised to a share of the root mean square scale instead of collapsing.

    The pairing is drawn from ``rng`` independently of the data and every row lies in at most one
    pair, so a substituted row changes at most one :math:`v_i`; each release is private for that
    (the book's statements on the scale step) and they compose to :math:`\rho`.  The rows
    :math:`v_i` are stored once, in float32 where the box allows (a quarter of the data's memory),
    and turned into the
    logarithms in place after the second moments.

    Examples
    --------
    >>> rng = np.random.default_rng(4)
    >>> X = (rng.random((20000, 3)) < [0.5, 0.1, 0.02]) * rng.gamma(2.0, 3.0, (20000, 3))  # mostly zeros
    >>> s = paired_scales(X, rho=1.0, lower=0.0, upper=100.0, rng=rng).sigma_hat
    >>> bool(np.all(np.abs(s / X.std(axis=0) - 1) < 0.3))
    True
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rho = _v.check_positive_finite("rho", rho)
    rng = _v.check_rng("rng", rng)
    floor = _v.check_probability("floor", floor)
    return _paired_scales(X, rho, lower, upper, rng, floor)


def _paired_scales(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator,
                   floor: float = PAIRED_LOG_FLOOR) -> PairedScales:
    from egmlib.peers import coinpress as _cp

    n, d = X.shape
    width = upper - lower
    half_w2 = 0.5 * width * width
    _v.check_finite_result(half_w2, what="the universe of squared differences", inputs="lower, upper")
    lo, hi = _log_range(width, floor)
    if not (math.isfinite(lo) and lo < hi):
        raise ValueError(f"(floor * (upper - lower))^2 must be a positive float64 below the box's, got "
                         f"floor={floor!r}, lower={lower!r} and upper={upper!r}")
    top = math.sqrt(d) * half_w2
    _v.check_finite_result(top, what="the universe of the rows' norms", inputs="lower, upper")
    # float32 holds every v_ij (and the floor e^lo) where the box allows: a quarter of the data's memory
    small = math.exp(lo) > 1e-30 and top < 1e30
    V, norms = _paired_rows(X, rng, np.float32 if small else np.float64)
    m = V.shape[0]
    # 1. second moments: a radius from the log-space quantile of the norms, the clipped sum, noise
    rho_sm = (1.0 - PAIRED_LOG_SHARE) * rho
    lo_norm = math.exp(lo)
    q = private_quantile(np.log(np.clip(norms, lo_norm, top)), q=SECOND_MOMENT_QUANTILE, rho=0.5 * rho_sm,
                         lower=lo, upper=math.log(top), rng=rng)
    tau = min(math.exp(q), top)
    centre = np.full(d, 0.5 * (lo + hi) / LOG_CHI2_1_SD)
    total, deviation, spread = _moments_and_logs(V, norms, tau, lo, half_w2, centre)
    s = _budget.gaussian_noise_std(0.5 * rho_sm, sensitivity=clipping.sum_sensitivity(tau, n=m, d=d))
    variance = (total + s * rng.standard_normal(d)) / m
    noise_sd = s / m
    # 2. log scales: CoinPress on the standardised logarithms from the prior ball of the log range
    radius = math.sqrt(d) * 0.5 * (hi - lo) / LOG_CHI2_1_SD
    ref = _cp._Reference(point=centre, spread=spread, deviation=deviation)
    r = _cp._coinpress(V, rho=PAIRED_LOG_SHARE * rho, centre=centre, radius=radius, rng=rng, beta=0.01,
                       steps=None, clip_rule="paper", ref=ref, lean=PAIRED_LEAN)
    del V
    raw = np.exp(np.clip(0.5 * LOG_CHI2_1_SD * r.estimate, 0.5 * lo, 0.5 * hi))
    shrunk, factor = _shrink(LogScalesResult(sigma_hat=raw, coinpress=r, pairs=m))
    log_noise = 0.5 * LOG_CHI2_1_SD * math.sqrt(r.noise_stds[-1] ** 2 + 1.0 / m)
    # 3. post-processing: the larger of the two, then a floor the second moments' total vouches for
    z = second_moment_threshold(d)
    sigma = np.maximum(shrunk, np.sqrt(np.maximum(variance - z * noise_sd, 0.0)))
    z0 = math.sqrt(2.0 * math.log(1.0 / PAIRED_LEVEL))
    v_low = max(float(np.sum(variance)) - z0 * math.sqrt(d) * noise_sd, 0.0)
    level = max(float(np.mean(sigma)), math.sqrt(v_low / d))
    sigma = np.minimum(np.maximum(sigma, PAIRED_FLOOR_SHARE * level), 0.5 * width)
    return PairedScales(sigma_hat=sigma, log_scales=shrunk, log_noise=log_noise, variance=variance,
                        noise_sd=noise_sd, radius=tau, pairs=m, shrinkage=factor)
