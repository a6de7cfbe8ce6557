r"""Algorithm 3 with private inputs that survives data off its model (rho-zCDP in total).

:func:`egmlib.peers.algorithm3.algorithm3_private` (chapter 8's pipeline) trusts its
private inputs: the clipping radius :math:`C` is the model quantile of
:math:`\|(x-\hat\mu)\odot b\|` computed from :math:`\hat\sigma` as if the rows were
:math:`\mathcal N(\hat\mu, \mathrm{diag}(\hat\sigma^2))`.  On real data that chain breaks
(``benchmarks/offmodel_diagnosis.py`` measures it step by step): ties in small-integer
data make many paired differences exactly 0 and zero-variance columns make all of them 0,
so the log-scale estimate of those columns falls to its floor;
:math:`b_j = (\hat\sigma_j\sum_l\hat\sigma_l)^{-1/2}` then puts almost all weight on
them, the whitened prior ball of the centre is too large for CoinPress to converge, the
centre lands far from the data, and the model radius clips every row.

:func:`algorithm3_robust` keeps Algorithm 3's release (transform by :math:`b`, clip at
:math:`C`, Gaussian noise for sensitivity :math:`2C`, transform back) and makes each
private input robust:

===========  =====================================================================  ================
step         what                                                                   budget
===========  =====================================================================  ================
``scale``    :func:`robust_scales`: log scales (public floor ``LOG_SCALE_FLOOR``)   :math:`\rho/8`
             shrunk towards a common scale by their public noise (James-Stein),
             raised to the private second moments where ties collapse them,
             floored at ``SIGMA_FLOOR_SHARE`` of their mean
``centre``   CoinPress whitened by :math:`\hat\sigma`, projected on the box         :math:`\rho/8`
``radius``   exponential mechanism over :math:`C_k = C_0 g^k`,                      :math:`\rho/64`
             :math:`k \ge -` ``RADIUS_DOWN``, :math:`C_0` the model radius: it
             prefers the smallest radius that clips at most a noise-sized number
             of rows (:func:`select_radius`)
``noise``    Gaussian noise on the clipped transformed sum, sensitivity             :math:`47\rho/64`
             :math:`2C` (raised by the rounding bound of
             :func:`egmlib.clipping.sum_sensitivity`)
===========  =====================================================================  ================

(``SHARES``.)  After the scale step, the rule :func:`few_rows` reads the released scales:
when :math:`n\sqrt\rho < c\ln(1 + R_w)`, :math:`R_w` the box's half-width in units of
:math:`\hat\sigma` (:func:`whitened_box_radius`) and :math:`c` = ``FEW_ROWS_CONSTANT``,
there are too few rows for CoinPress to find the whitened centre from the box, and the
release is instead IOME's around a coarse private centre (``path == "iome"``; noisy
bisection medians, then :func:`egmlib.peers.iome.iome_mean` on the shifted rows, with the
budget the scales left).  The constant is calibrated on data from Algorithm 3's model by
``benchmarks/offmodel_crossover.py``, never on the data the pipeline is evaluated on.

Sensitivities under substitution neighbours (one row replaced; the report's Definition
2.1), proved in the book (chapter "The robust pipeline is rho-zCDP"):

* scale: the pairing is a data-independent permutation, so one substituted row changes
  one pair, one row of the matrix CoinPress sees (Biswas et al. 2020) and one row of the
  second moments' clipped sum; the shrinkage, the maximum and the floor are
  post-processing;
* centre: CoinPress, one row of the whitened data changes;
* radius: the utility :math:`u(k) = -(c_k - t)_+`, :math:`c_k` the number of rows with norm
  above :math:`C_k`, has sensitivity 1, and the base measure :math:`e^{-\gamma k}` is
  public, so the exponential mechanism at :math:`\varepsilon = \sqrt{8\rho_{\rm radius}}` is
  :math:`\varepsilon`-DP with bounded range and :math:`\rho_{\rm radius}`-zCDP (Cesar and
  Rogers 2021);
* noise: every clipped row has norm at most :math:`C`, so the clipped sum moves by at
  most :math:`2C`; noise :math:`2C/\sqrt{2\rho_{\rm noise}}` (Bun and Steinke 2016,
  Prop. 1.6).

The steps compose adaptively (Bun and Steinke 2016, Lemma 2.3) and the shares sum to 1.
The path rule is a function of public quantities and the released scales, so the choice is
post-processing; either path spends :math:`\rho` in total.

:func:`plan_last_step_private_inputs` is the arm that isolates the radius: PLAN's last
step (Aumuller et al. 2024; private quantile threshold and noise) with exactly the same
private :math:`\hat\sigma` and :math:`\hat\mu` as :func:`algorithm3_robust`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmlib import clipping, gchisq
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers import plan as _plan
from egmlib.peers.coinpress import coinpress_known_scales
from egmlib.peers.hadamard import random_hadamard
from egmlib.peers.iome import iome_mean
from egmlib.peers.quantiles import binary_search_quantiles
from egmlib.peers.scales import coinpress_log_scales, second_moments, shrunk_log_scales
from egmlib.validation import FloatArray

__all__ = [
    "FEW_ROWS_CONSTANT",
    "RADIUS_DOWN",
    "RADIUS_GRID",
    "RADIUS_PRIOR",
    "LOG_SCALE_FLOOR",
    "SECOND_MOMENT_LEVEL",
    "SECOND_MOMENT_SHARE",
    "SHARES",
    "SIGMA_FLOOR_SHARE",
    "TARGET_COEF",
    "RadiusChoice",
    "RobustResult",
    "algorithm3_robust",
    "few_rows",
    "whitened_box_radius",
    "plan_last_step_private_inputs",
    "radius_probabilities",
    "radius_target",
    "radius_utility",
    "robust_scales",
    "second_moment_threshold",
    "select_radius",
]

#: Budget shares of :func:`algorithm3_robust`; they sum to 1.
SHARES = MappingProxyType({"scale": 1 / 8, "centre": 1 / 8, "radius": 1 / 64, "noise": 47 / 64})
#: The floor sigma_hat_j >= SIGMA_FLOOR_SHARE * mean(sigma_hat) (post-processing, free).
SIGMA_FLOOR_SHARE = 0.2
#: Ratio g between neighbouring radii of the grid C_k = C_0 g^k.
RADIUS_GRID = 2.0 ** 0.125
#: The radius step's public preference for small radii; the base measure exp(-RADIUS_PRIOR k)
#: over the grid's radii, one factor e per step g.  Of the radii that clip at most the target,
#: the smallest is the likeliest and one j steps above it at most e^-j times as likely: a radius
#: far above what the data need, which the exponential mechanism's utility alone cannot tell
#: from the right one (both clip no row), is rare, and its noise is g^j times larger.
RADIUS_PRIOR = 1.0
#: Grid points below C_0 (the grid reaches C_0 g^-RADIUS_DOWN = C_0 / 2); lighter tails than
#: the model's, or overestimated scales, may take a smaller radius.
RADIUS_DOWN = 8
#: The radius step aims at clipping at most TARGET_COEF sqrt(d / rho_noise) rows; the clipping
#: bias of that many rows, each clipped by about the radius, is the size of the noise
#: (2 C sqrt(d) / (n sqrt(2 rho_noise)) in norm), at every n.
TARGET_COEF = 1.0
#: The share of the scale step's budget spent on the second moments (the rest on the log scales).
SECOND_MOMENT_SHARE = 0.5
#: A second moment replaces a smaller log scale only where it stands
#: sqrt(2 ln(d / SECOND_MOMENT_LEVEL)) noise sds above 0: with d columns, noise alone lifts one
#: of them with probability about SECOND_MOMENT_LEVEL (a union bound on Gaussian tails).
SECOND_MOMENT_LEVEL = 0.05
#: The public floor of the log scales, sigma_j >= LOG_SCALE_FLOOR * (upper - lower); the prior
#: interval of ln sigma_j^2 CoinPress searches is 2 ln(1 / (2 LOG_SCALE_FLOOR)) = 26.2 wide
#: (55.3 at chapter 8's 1e-12), which it narrows with fewer rows.  A column below the floor
#: (a constant column) gets a scale at the floor, and the sigma floor below lifts it further.
LOG_SCALE_FLOOR = 1e-6
#: The rule :func:`few_rows`: n sqrt(rho) below FEW_ROWS_CONSTANT ln(1 + R_w) takes the few-rows
#: path.  Calibrated by ``benchmarks/offmodel_crossover.py`` on Gaussian rows (Algorithm 3's
#: model): the smallest n sqrt(rho) / ln(1 + R_w) of its 495 cells (44.7) from which on
#: Algorithm 3's path adds at most 1.25 times the few-rows path's error in every cell, rounded
#: down to a multiple of 10.
FEW_ROWS_CONSTANT = 40.0
#: Largest number of grid points above C_0.
_MAX_GRID = 400


@dataclass(frozen=True)
class RadiusChoice:
    """Output of :func:`select_radius`: the grid, the targets and the chosen radius."""

    C: float  #: the chosen radius C_0 g^k
    k: int  #: its place on the grid, from -RADIUS_DOWN (C_0 / 2) up; 0 is the model radius
    C0: float  #: the model radius
    grid_size: int  #: the number of radii of the grid
    target: float  #: t, the clipped rows tolerated, TARGET_COEF sqrt(d / rho_noise)
    eps: float  #: epsilon of the exponential mechanism, sqrt(8 rho_radius)


@dataclass(frozen=True)
class RobustResult:
    """Output of :func:`algorithm3_robust` and :func:`plan_last_step_private_inputs`.

    ``estimate`` is the release; ``sigma``, ``centre`` and ``C`` are private
    intermediate releases covered by the budget.  ``n_clipped`` is a diagnostic of
    the data, not private.
    """

    estimate: FloatArray  #: (d,) private estimate of the mean
    centre: FloatArray  #: (d,) mu_hat used
    sigma: FloatArray | None  #: (d,) floored sigma_hat used (None on IOME's path)
    C: float  #: clipping radius in the transformed space
    radius: RadiusChoice | None  #: the radius step (None for PLAN's last step)
    noise_std: FloatArray  #: (d,) std of the noise on the mean in the original coordinates
    n_clipped: int
    budget: _budget.ZCDPBudget
    #: The release that ran, "algorithm3" (Algorithm 3's path), "iome" (:func:`few_rows`
    #: held; IOME's release, ``sigma`` and ``radius`` None, ``C`` IOME's radius of the
    #: rotated rows, ``centre`` IOME's centre rotated back) or "plan" (PLAN's last step).
    path: str = "algorithm3"


# ---------------------------------------------------------------------------------------
# scale and centre
# ---------------------------------------------------------------------------------------
def _floored(sigma_hat: FloatArray) -> FloatArray:
    return np.maximum(sigma_hat, SIGMA_FLOOR_SHARE * float(np.mean(sigma_hat)))


def robust_scales(X: Any, *, rho: float, lower: float, upper: float,
                  rng: np.random.Generator) -> FloatArray:
    r"""Private standard deviations robust to ties, :math:`\rho`-zCDP: the scale step of :func:`algorithm3_robust`.

    :math:`\hat\sigma_j = \max\bigl(\tilde\ell_j,\ \sqrt{(s_j - z\,\mathrm{sd})_+}\bigr)`, floored at
    ``SIGMA_FLOOR_SHARE`` times its mean, with

    * :math:`\tilde\ell` the log scales of :func:`~egmlib.peers.scales.coinpress_log_scales`
      (budget :math:`(1-a)\rho`, public floor ``LOG_SCALE_FLOOR``; accurate for continuous
      columns whatever their spread of scales), shrunk towards their common level by their
      public noise (:func:`~egmlib.peers.scales.shrunk_log_scales`, James-Stein): with few
      rows their spread is mostly noise, and weighting coordinates by noise costs more than
      it gains;
    * :math:`s` the second moments of :func:`~egmlib.peers.scales.second_moments` with their
      noise sd (budget :math:`a\rho`, :math:`a` = ``SECOND_MOMENT_SHARE``; unbiased where the
      log scales collapse: tied, count and 0/1 columns).  A second moment counts only where it
      stands :math:`z` = :func:`second_moment_threshold` noise sds above 0, so noise rarely
      inflates a scale in any of the :math:`d` columns.

    The shrinkage, the maximum and the floor are post-processing; the two private steps
    compose (Bun and Steinke 2016, Lemma 1.7) into :math:`\rho`-zCDP.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (d,), entries > 0

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> X = np.round(rng.normal(3.0, [2.0, 0.6, 0.3], size=(20000, 3)))   # small integers: ties
    >>> s = robust_scales(X, rho=1.0, lower=-20.0, upper=20.0, rng=rng)
    >>> bool(np.all(np.abs(s / X.std(axis=0) - 1) < 0.25))
    True
    """
    X, lower, upper, rng = _check(X, lower, upper, rng)
    rho = _v.check_positive_finite("rho", rho)
    return _robust_scales(X, rho, lower, upper, rng)


def _robust_scales(X: np.ndarray, rho: float, lower: float, upper: float,
                   rng: np.random.Generator) -> FloatArray:
    a = SECOND_MOMENT_SHARE
    logs = shrunk_log_scales(coinpress_log_scales(X, rho=(1.0 - a) * rho, lower=lower, upper=upper,
                                                  rng=rng, floor=LOG_SCALE_FLOOR))
    sm = second_moments(X, rho=a * rho, lower=lower, upper=upper, rng=rng)
    z = second_moment_threshold(X.shape[1])
    return _floored(np.maximum(logs, np.sqrt(np.maximum(sm.variance - z * sm.noise_sd, 0.0))))


def second_moment_threshold(d: int) -> float:
    r"""How many noise sds a second moment must stand above 0 to count: :math:`\sqrt{2\ln(d/\alpha)}`.

    :math:`\alpha` = ``SECOND_MOMENT_LEVEL``.  For a column whose variance is 0, the
    probability that Gaussian noise passes :math:`z` sds is at most
    :math:`e^{-z^2/2}/2`, so over :math:`d` columns at most :math:`\alpha/2` (union bound):
    noise alone rarely lifts a scale, which the floor at a share of the mean would then
    pass on to every small column.  Public (it depends on :math:`d` only), so taking the
    maximum with the log scales is post-processing (the book's Lemma 9.E).

    Examples
    --------
    >>> round(second_moment_threshold(1), 2), round(second_moment_threshold(512), 2)
    (2.45, 4.3)
    """
    d = _v.check_count("d", d, maximum=2**62)
    return math.sqrt(2.0 * math.log(d / SECOND_MOMENT_LEVEL))


def _private_centre(X: np.ndarray, sigma: FloatArray, rho: float, lower: float, upper: float,
                    rng: np.random.Generator) -> FloatArray:
    r""":math:`\hat\mu`: CoinPress whitened by the released :math:`\hat\sigma`, projected on the box.

    :func:`~egmlib.peers.coinpress.coinpress_known_scales` (Biswas et al. 2020) at ``rho``;
    the projection is post-processing.  ``X`` is checked by the caller.
    """
    return np.clip(coinpress_known_scales(X, sigma=sigma, rho=rho, lower=lower, upper=upper,
                                          rng=rng).estimate, lower, upper)


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def radius_utility(norms: Any, *, radii: Any, target: float) -> FloatArray:
    r"""The utility :math:`u(k) = -(c_k - t)_+` of every radius on the grid.

    :math:`c_k = \#\{i: \|y_i\| > C_k\}`, the rows a radius :math:`C_k` clips, and :math:`t` =
    ``target``.  Every radius that clips at most :math:`t` rows has utility 0; each row more
    costs 1.  Substituting one row moves every :math:`c_k` by at most 1, so :math:`u` has
    sensitivity 1 for any public target (the Lemma "The utility of a radius has sensitivity 1"
    of the book's chapter on this pipeline's privacy).

    Examples
    --------
    >>> radius_utility([0.5, 1.5, 2.5, 3.5], radii=[1.0, 2.0, 3.0, 4.0], target=1.0).tolist()
    [-2.0, -1.0, 0.0, 0.0]
    """
    norms = _v.check_finite_vector("norms", norms)
    radii = _v.check_finite_vector("radii", radii)
    if radii.shape[0] > 1 and not np.all(np.diff(radii) > 0):
        raise ValueError("radii must be strictly increasing, got radii that are not")
    t = _v.check_real("target", target)
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"target must be finite and >= 0, got target={t!r}")
    return _utility(np.sort(norms), radii, t)


def _utility(sorted_norms: FloatArray, radii: FloatArray, target: float) -> FloatArray:
    c = sorted_norms.shape[0] - np.searchsorted(sorted_norms, radii, side="right")  # beyond C_k
    return 0.0 - np.maximum(c - target, 0.0)  # 0.0 - x: no negative zeros


def _grid(C0: float, C_max: float, grid: float, down: int) -> FloatArray:
    # where C_max / C0 overflows (a subnormal C0), log(C_max) - log(C0): at most about 1454
    # for any positive finite pair
    ratio = C_max / C0
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(C_max) - math.log(C0)
    K = 0 if C_max <= C0 else min(_MAX_GRID, math.ceil(log_ratio / math.log(grid)))
    return C0 * grid ** np.arange(-down, K + 1, dtype=float)


def radius_target(*, d: int, rho_noise: float) -> float:
    r"""The clipped rows the radius step tolerates: :math:`t = a\sqrt{d/\rho_{\rm noise}}`.

    :math:`a` = ``TARGET_COEF``.  Clipping :math:`t` rows, each by about the radius
    :math:`C`, biases the clipped sum by at most about :math:`tC`; the Gaussian noise on it
    has norm about :math:`2C\sqrt d/\sqrt{2\rho_{\rm noise}}` (Bun and Steinke 2016), so the
    bias stays the size of the noise at every :math:`n`: the tolerance shrinks with the noise
    instead of being a share of the rows.  Public: it depends on :math:`d` and the budget.

    Examples
    --------
    >>> round(radius_target(d=64, rho_noise=0.5), 1)
    11.3
    """
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    return _target(d, rho_noise)


def _target(d: int, rho_noise: float) -> float:
    t = TARGET_COEF * math.sqrt(d / rho_noise)
    _v.check_finite_result(t, what="the radius step's target sqrt(d / rho_noise)", inputs="d or rho_noise")
    return t


def radius_probabilities(norms: Any, *, C0: float, C_max: float, rho: float, d: int,
                         rho_noise: float, grid: float = RADIUS_GRID) -> FloatArray:
    r"""The exact output distribution of :func:`select_radius` over the grid.

    :math:`P(k) \propto e^{-\gamma (k + D)}\,e^{\varepsilon u(k)/2}` with
    :math:`\varepsilon = \sqrt{8\rho}`, :math:`u` = :func:`radius_utility` at the target
    :func:`radius_target`, :math:`\gamma` = ``RADIUS_PRIOR`` and :math:`D` = ``RADIUS_DOWN``,
    over the radii :math:`C_0 g^k`, :math:`k = -D, \dots, K`: the exponential mechanism
    (McSherry and Talwar 2007) with the public base measure :math:`e^{-\gamma(k+D)}`, which
    prefers the smaller of two radii that both clip at most :math:`t` rows.  A base measure
    that does not depend on the data leaves the mechanism :math:`\varepsilon`-DP, and its
    bounded range makes it :math:`\rho`-zCDP (Cesar and Rogers 2021).

    Examples
    --------
    >>> p = radius_probabilities(np.full(1000, 0.99), C0=1.0, C_max=16.0, rho=1.0, d=4, rho_noise=1.0)
    >>> int(np.argmax(p)) - RADIUS_DOWN, round(float(p.sum()), 12)   # k = 0, the model radius
    (0, 1.0)
    """
    norms, C0, C_max, rho, grid = _check_radius_args(norms, C0, C_max, rho, grid)
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    return _probabilities(np.sort(norms), C0, C_max, rho, d, rho_noise, grid)[1]


def _check_radius_args(norms: Any, C0: Any, C_max: Any, rho: Any,
                       grid: Any) -> tuple[FloatArray, float, float, float, float]:
    norms = _v.check_finite_vector("norms", norms)
    if np.any(norms < 0):
        raise ValueError("norms must be >= 0, got a negative entry")
    C0 = _v.check_positive_finite("C0", C0)
    C_max = _v.check_positive_finite("C_max", C_max)
    rho = _v.check_positive_finite("rho", rho)
    grid = _v.check_positive_finite("grid", grid)
    if not grid > 1.0:
        raise ValueError(f"grid must be > 1, got grid={grid!r}")
    _budget.exponential_mechanism_epsilon(rho)  # a rho too large for a finite eps names rho
    return norms, C0, C_max, rho, grid


def _probabilities(sorted_norms: FloatArray, C0: float, C_max: float, rho: float, d: int,
                   rho_noise: float, grid: float) -> tuple[FloatArray, FloatArray, float, float]:
    radii = _grid(C0, C_max, grid, RADIUS_DOWN)
    eps = _budget.exponential_mechanism_epsilon(rho)
    t = _target(d, rho_noise)
    logits = 0.5 * eps * _utility(sorted_norms, radii, t) - RADIUS_PRIOR * np.arange(radii.shape[0])
    logits -= logits.max()
    p = np.exp(logits)
    p /= p.sum()
    return radii, p, t, eps


def select_radius(norms: Any, *, C0: float, C_max: float, rho: float, d: int, rho_noise: float,
                  rng: np.random.Generator, grid: float = RADIUS_GRID) -> RadiusChoice:
    r"""The private radius: exponential mechanism over :math:`C_0 g^k`, :math:`k = -D..K`.

    :math:`D` = ``RADIUS_DOWN``, :math:`K = \lceil \ln(C_{\max}/C_0)/\ln g\rceil` (at most
    400), :math:`\varepsilon = \sqrt{8\rho}`, the target :func:`radius_target` (a noise-sized
    number of clipped rows), utility :func:`radius_utility` (sensitivity 1) and the public
    preference ``RADIUS_PRIOR`` for smaller radii (:func:`radius_probabilities`; McSherry and
    Talwar 2007), :math:`\varepsilon`-DP and hence :math:`\varepsilon^2/8 = \rho`-zCDP
    (Cesar and Rogers 2021; the book's Proposition 9.J).  The grid and the target depend
    only on public or already released quantities (:math:`C_0, C_{\max}, d, \rho_{\rm noise}`).  ``norms`` are the rows'
    transformed norms :math:`\|(x_i - \hat\mu)\odot b\|`.

    Examples
    --------
    >>> select_radius(np.full(100, 0.99), C0=1.0, C_max=8.0, rho=1.0, d=4, rho_noise=1.0,
    ...               rng=np.random.default_rng(1)).k   # C_0 clips no row; 63 % of draws take it
    0
    """
    norms, C0, C_max, rho, grid = _check_radius_args(norms, C0, C_max, rho, grid)
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    rng = _v.check_rng("rng", rng)
    return _select_radius(norms, C0, C_max, rho, d, rho_noise, rng, grid)


def _select_radius(norms: FloatArray, C0: float, C_max: float, rho: float, d: int, rho_noise: float,
                   rng: np.random.Generator, grid: float) -> RadiusChoice:
    radii, p, t, eps = _probabilities(np.sort(norms), C0, C_max, rho, d, rho_noise, grid)
    i = int(rng.choice(radii.shape[0], p=p))
    return RadiusChoice(C=float(radii[i]), k=i - RADIUS_DOWN, C0=float(C0), grid_size=radii.shape[0],
                        target=t, eps=eps)


def _model_radius(sigma: FloatArray, p: float) -> float:
    w = sigma / float(np.sum(sigma))
    return math.sqrt(float(gchisq.isf(p, w=w)))


# ---------------------------------------------------------------------------------------
# the pipelines
# ---------------------------------------------------------------------------------------
def _check(X: Any, lower: Any, upper: Any, rng: Any) -> tuple[np.ndarray, float, float,
                                                                np.random.Generator]:
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    rng = _v.check_rng("rng", rng)
    return clipping.clamp_to_box(X, lower=lower, upper=upper), lower, upper, rng


def whitened_box_radius(sigma: Any, *, lower: float, upper: float) -> float:
    r"""How many released scales the box's half-width spans, in root mean square over coordinates.

    :math:`R_w = \sqrt{\tfrac1d\sum_j ((u-l)/(2\hat\sigma_j))^2}`, the box's half-width in units
    of :math:`\hat\sigma_j`; :math:`\sqrt d\,R_w` is the radius of the prior ball from which
    CoinPress's whitened centre starts.  CoinPress halves that ball about once per step,
    so the rows it needs grow like :math:`\ln R_w`.  A function of the released
    :math:`\hat\sigma` and the public box: post-processing (the book's Lemma 9.G).

    Examples
    --------
    >>> round(whitened_box_radius([1.0, 2.0], lower=-10.0, upper=10.0), 3)
    7.906
    """
    sigma = _v.check_finite_vector("sigma", sigma)
    if not np.all(sigma > 0):
        raise ValueError("sigma must be > 0 in every coordinate")
    lower, upper = _v.check_bounds(lower, upper)
    R_w = _whitened_box_radius(sigma, lower, upper)
    _v.check_finite_result(R_w, what="the whitened box radius", inputs="sigma, lower or upper")
    return R_w


def _whitened_box_radius(sigma: FloatArray, lower: float, upper: float) -> float:
    half = 0.5 * (upper - lower) / sigma
    top = float(np.max(half))  # scaled by the largest term: no overflow in the squares
    return top * float(np.sqrt(np.mean((half / top) ** 2))) if top > 0 else 0.0


def few_rows(n: int, *, rho: float, sigma: Any, lower: float, upper: float) -> bool:
    r"""The path rule of :func:`algorithm3_robust`: too few rows for Algorithm 3's centre.

    True when :math:`n\sqrt\rho < c\,\ln(1 + R_w)`, :math:`c` = ``FEW_ROWS_CONSTANT`` and
    :math:`R_w` = :func:`whitened_box_radius` of the released scales; then
    :func:`algorithm3_robust` releases IOME's estimate around a coarse private centre with
    the budget the scales left, instead of a whitened private centre and Algorithm 3's
    release, which need rows to converge from the box's prior ball.  The rule reads the
    public :math:`n`, :math:`\rho` and box and the released :math:`\hat\sigma`, never the
    data again, so the choice is post-processing and either release is :math:`\rho`-zCDP by
    adaptive composition (the book's lemma "Choosing the path from released scales costs
    nothing").

    :math:`c = 40` comes from ``benchmarks/offmodel_crossover.py`` on Gaussian rows (Algorithm
    3's model; :math:`\sigma_j = (d/j)^{3/4}`, the boxes :math:`[-50, 50]`, :math:`[-10^3, 10^3]`
    and :math:`[-2\cdot 10^4, 2\cdot 10^4]`, :math:`d \in \{10, 30, 64\}`,
    :math:`\rho \in \{1/16, \dots, 1\}`, :math:`n` from 100 to 3200, medians of 20 runs):
    from :math:`n\sqrt\rho/\ln(1+R_w) = 44.7` on Algorithm 3's path adds at most 1.24 times
    the few-rows path's error in all 245 cells, while below it it adds up to 900 times (its
    centre has not converged); :math:`c` is 44.7 rounded down.  The failure sits at about the
    same value of the statistic in all three boxes, where it sits at different
    :math:`n\sqrt\rho`.  The logarithm
    is CoinPress's: each of its steps halves the prior ball, so a box wide in units of the
    data's spread costs steps, and each step costs rows.

    Parameters
    ----------
    n : int >= 1, rows
    rho : float, finite and > 0, the pipeline's whole budget
    sigma : array_like, shape (d,), entries > 0, the released scales
    lower, upper : float, the public box

    Examples
    --------
    >>> sigma = np.array([1.0, 0.5, 0.2])
    >>> few_rows(200, rho=0.25, sigma=sigma, lower=-1000.0, upper=1000.0)
    True
    >>> few_rows(20000, rho=0.25, sigma=sigma, lower=-1000.0, upper=1000.0)
    False
    """
    n = _v.check_count("n", n, maximum=2**62)
    rho = _v.check_positive_finite("rho", rho)
    R_w = whitened_box_radius(sigma, lower=lower, upper=upper)
    return _few_rows(n, rho, R_w)


def _few_rows(n: int, rho: float, R_w: float) -> bool:
    return float(n) * math.sqrt(rho) < FEW_ROWS_CONSTANT * math.log1p(R_w)


def algorithm3_robust(X: Any, *, rho: float, lower: float, upper: float,
                      rng: np.random.Generator, p_clip: float | None = None,
                      path: str | None = None) -> RobustResult:
    r"""Algorithm 3 with private inputs, robust off its model; :math:`\rho`-zCDP in total.

    First the private scales :math:`\hat\sigma` (:func:`robust_scales`, budget share
    ``SHARES["scale"]``), then the rule :func:`few_rows` on :math:`n, \rho`, the box and
    :math:`\hat\sigma`: when it holds the release is IOME's around a coarse private centre
    with the rest of the budget (``_iome_path``; ``path == "iome"``).  Otherwise
    (``path == "algorithm3"``) the steps and budget ``SHARES`` of the module docstring:
    the whitened private centre :math:`\hat\mu` (``_private_centre``), the model radius :math:`C_0` of
    Algorithm 3 at tail probability ``p_clip`` (default :math:`1/n`; the report's
    Section 4) from :math:`\hat\sigma`, :func:`select_radius` on the grid from
    :math:`C_0` to :math:`C_{\max} = \|(\text{upper}-\text{lower})\,b\|` (no row of the box
    is farther from :math:`\hat\mu`), the clipped transformed sum and Gaussian noise
    :math:`2C/\sqrt{2\rho_{\rm noise}}` (sensitivity :math:`2C`; Bun and Steinke 2016).

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate.
    rng : numpy.random.Generator
    p_clip : float in (0, 1), optional
        Tail probability of the model radius; default 1/n.
    path : {None, "algorithm3", "iome"}, default None
        None lets :func:`few_rows` choose; "algorithm3" and "iome" force that path (for the
        calibration ``benchmarks/offmodel_crossover.py`` and the privacy tests of each path).

    Returns
    -------
    RobustResult

    Examples
    --------
    >>> rng = np.random.default_rng(11)
    >>> X = 5.0 + np.array([4.0, 2.0, 1.0]) * rng.standard_normal((20000, 3))
    >>> r = algorithm3_robust(X, rho=1.0, lower=-100.0, upper=100.0, rng=rng)
    >>> r.path, bool(np.linalg.norm(r.estimate - 5.0) < 0.15)
    ('algorithm3', True)
    >>> round(sum(r.budget.parts.values()), 12)
    1.0
    >>> algorithm3_robust(X[:300], rho=0.25, lower=-100.0, upper=100.0, rng=rng).path
    'iome'
    """
    X, lower, upper, rng = _check(X, lower, upper, rng)
    n = X.shape[0]
    p = 1.0 / n if p_clip is None else _v.check_probability("p_clip", p_clip)
    if path is not None and not isinstance(path, str):
        raise TypeError(f"path must be None or a str, got path of type {type(path).__name__}")
    if path not in (None, "algorithm3", "iome"):
        raise ValueError(f"path must be None, 'algorithm3' or 'iome', got path={path!r}")
    rho = _v.check_positive_finite("rho", rho)
    budget = _budget.split_budget(rho, shares=SHARES)
    sigma = _robust_scales(X, budget["scale"], lower, upper, rng)
    if path == "iome" or (path is None and _few_rows(n, rho, _whitened_box_radius(sigma, lower, upper))):
        return _iome_path(X, rho=rho, lower=lower, upper=upper, rng=rng, sigma=sigma)
    return _algorithm3_path(X, budget=budget, sigma=sigma, lower=lower, upper=upper, rng=rng, p=p)


#: The share of the few-rows path's budget spent on its coarse centre (the rest on IOME).
COARSE_CENTRE_SHARE = 0.125
#: The bisection steps of the coarse centre; it lands within 2^-20 of the box's width of a
#: noisy median (noise counts: the median's rank moves by the count noise).
COARSE_CENTRE_STEPS = 20
__all__ += ["COARSE_CENTRE_SHARE", "COARSE_CENTRE_STEPS"]


def _iome_path(X: np.ndarray, *, rho: float, lower: float, upper: float,
               rng: np.random.Generator, sigma: FloatArray) -> RobustResult:
    r"""The few-rows release: a coarse private centre, then IOME around it, projected on the box.

    :math:`c_0` = the private coordinate-wise medians by noisy bisection
    (:func:`~egmlib.peers.quantiles.binary_search_quantiles`, ``COARSE_CENTRE_STEPS`` halvings of
    the box, budget ``COARSE_CENTRE_SHARE`` :math:`\cdot\rho`), which reach any point of the
    box; then IOME (:func:`~egmlib.peers.iome.iome_mean`, Huang, Liang and Yi 2021, as PLAN's
    experiments run it) with the rest of the budget on the rows :math:`x_i - c_0` in the box
    :math:`[-w, w]`, :math:`w = \max_j\max(u - c_{0j}, c_{0j} - l)`, which contains them; the
    release is :math:`c_0` plus IOME's estimate, projected on the box.  IOME alone searches its
    centre within :math:`\pm w/\sqrt N` of the box's centre in every rotated coordinate, and a
    mean far from that centre (40 in :math:`[-50, 50]^{16}`) is out of its reach; around
    :math:`c_0` it is not.  (The exponential-mechanism medians of PLAN's centre step, tried
    first, were worse where a few columns spread thinly over a wide box: on breast cancer at
    :math:`\rho = 1/4`, median of 5 runs, this path added 7.2 times the better of PLAN's and
    IOME's error around them and 0.8 times around the bisection medians.)  Shifting by the released :math:`c_0` and
    projecting are post-processing, and the two steps compose into :math:`\rho`-zCDP.
    """
    n, d = X.shape
    rest = 1.0 - SHARES["scale"]
    budget = _budget.split_budget(rho, shares={"scale": SHARES["scale"],
                                               "coarse centre": COARSE_CENTRE_SHARE * rest,
                                               "iome": (1.0 - COARSE_CENTRE_SHARE) * rest})
    c0 = binary_search_quantiles(X, rank=0.5 * n, rho=budget["coarse centre"], lower=lower,
                                 upper=upper, rng=rng, steps=COARSE_CENTRE_STEPS)
    w = max(float(np.max(upper - c0)), float(np.max(c0 - lower)))
    R = random_hadamard(d, rng=rng)
    r = iome_mean(X - c0, rho=budget["iome"], lower=-w, upper=w, rng=rng, rotation=R)
    estimate = np.clip(c0 + r.estimate, lower, upper)
    return RobustResult(estimate=estimate, centre=c0 + R.unrotate(r.centre), sigma=sigma, C=r.C,
                        radius=None, noise_std=np.full(d, r.noise_std), n_clipped=r.n_clipped,
                        budget=budget, path="iome")


def _algorithm3_path(X: np.ndarray, *, budget: _budget.ZCDPBudget, sigma: FloatArray, lower: float,
                     upper: float, rng: np.random.Generator, p: float) -> RobustResult:
    n = X.shape[0]
    centre = _private_centre(X, sigma, budget["centre"], lower, upper, rng)
    d = X.shape[1]
    b = 1.0 / np.sqrt(sigma * float(np.sum(sigma)))
    norms = clipping.transformed_norms(X, mu_hat=centre, b=b)
    C0 = _model_radius(sigma, p)
    C_max = (upper - lower) * float(np.linalg.norm(b))
    choice = _select_radius(norms, C0, C_max, budget["radius"], X.shape[1], budget["noise"], rng,
                            RADIUS_GRID)
    C = choice.C
    clipped = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b, norms=norms)
    total, n_clipped = clipped.total, clipped.n_clipped
    s = _budget.gaussian_noise_std(budget["noise"], sensitivity=clipping.sum_sensitivity(C, n=n, d=d))
    noisy = (total + s * rng.standard_normal(X.shape[1])) / n
    estimate = np.clip(centre + noisy / b, lower, upper)  # the mean lies in the box: post-processing
    _v.check_finite_result(estimate, what="the estimate", inputs="X, lower or upper")
    return RobustResult(estimate=estimate, centre=centre, sigma=sigma, C=C, radius=choice,
                        noise_std=s / (n * b), n_clipped=n_clipped,
                        budget=budget, path="algorithm3")


#: Budget of :func:`plan_last_step_private_inputs`: Algorithm 3's inputs, then PLAN's split
#: of its last step (threshold 1/4, noise 3/4 of the rest).
PLAN_LAST_STEP_SHARES = MappingProxyType({
    "scale": SHARES["scale"], "centre": SHARES["centre"],
    "threshold": 0.25 * (1.0 - SHARES["scale"] - SHARES["centre"]),
    "noise": 0.75 * (1.0 - SHARES["scale"] - SHARES["centre"])})
__all__.append("PLAN_LAST_STEP_SHARES")


def plan_last_step_private_inputs(X: Any, *, rho: float, lower: float, upper: float,
                                  rng: np.random.Generator, beta: float = 0.1) -> RobustResult:
    r"""PLAN's last step with the private inputs of :func:`algorithm3_robust`, rho-zCDP.

    The same :func:`robust_scales` and ``_private_centre`` (same shares), then PLAN's threshold and noise
    (Aumuller et al. 2024; :func:`egmlib.peers.plan.plan_oracle_mean` with the private
    :math:`\hat\mu, \hat\sigma` in place of the oracle's): scaling
    :math:`\Delta = ` :func:`~egmlib.peers.plan.plan_scaling` of :math:`\hat\sigma`,
    exponential-mechanism quantile at :math:`1-k` of the scaled norms (sensitivity 1),
    Gaussian noise for sensitivity :math:`2C`.  Against :func:`algorithm3_robust` only the
    radius (and the scaling's regularisation) differs.

    Parameters
    ----------
    X, rho, lower, upper, rng : as in :func:`algorithm3_robust`
    beta : float in (0, 1), default 0.1 (PLAN's)

    Returns
    -------
    RobustResult
        ``radius`` is None; ``sigma`` is :math:`\hat\sigma`.
    """
    X, lower, upper, rng = _check(X, lower, upper, rng)
    beta = _v.check_probability("beta", beta)
    budget = _budget.split_budget(rho, shares=PLAN_LAST_STEP_SHARES)
    sigma = _robust_scales(X, budget["scale"], lower, upper, rng)
    centre = _private_centre(X, sigma, budget["centre"], lower, upper, rng)
    # PLAN_ORACLE_SHARES splits the rest 1/4 : 3/4, as PLAN_LAST_STEP_SHARES states
    r = _plan.plan_oracle_mean(X, mu_hat=centre, sigma=sigma,
                               rho=budget["threshold"] + budget["noise"], lower=lower,
                               upper=upper, rng=rng, beta=beta)
    std = r.noise_std * np.sqrt(r.Delta) / X.shape[0]
    return RobustResult(estimate=r.estimate, centre=centre, sigma=sigma, C=r.C, radius=None,
                        noise_std=std, n_clipped=r.n_clipped, budget=budget, path="plan")
