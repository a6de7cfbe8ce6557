r"""Algorithm 3 with private inputs that survives data off its model (rho-zCDP in total).

:func:`egmlib.peers.algorithm3.algorithm3_private` (chapter 8's pipeline) trusts its
private inputs: the clipping radius :math:`C` is the model quantile of
:math:`\|(x-\hat\mu)\odot b\|` computed from :math:`\hat\sigma` as if the rows were
:math:`\mathcal N(\hat\mu, \mathrm{diag}(\hat\sigma^2))`.  On real data that chain breaks
(``benchmarks/offmodel_diagnosis.py`` measures it step by step): ties in small-integer
data make many paired differences exactly 0 and zero-variance columns make all of them 0,
so the log-scale estimate of those columns falls to its floor (:math:`10^{-12}` of the
box); :math:`b_j = (\hat\sigma_j\sum_l\hat\sigma_l)^{-1/2}` then puts almost all weight on
them, the whitened prior ball of the centre is too large for CoinPress to converge, the
centre lands far from the data, and the model radius clips every row.

:func:`algorithm3_robust` first applies a public rule, :func:`few_rows`: when
:math:`n\sqrt\rho <` ``FEW_ROWS_CONSTANT`` (560) there are too few rows to learn
:math:`d` scales and a whitened centre privately, and it releases IOME's estimate
(:func:`egmlib.peers.iome.iome_mean` with the whole budget; ``path == "iome"``).  The
constant is calibrated on data from Algorithm 3's model by
``benchmarks/offmodel_crossover.py`` (Gaussian rows, :math:`\sigma_j = (d/j)^{3/4}`,
:math:`d \in \{10, 30, 64\}`, the five budgets, :math:`n` from 100 to 3200): below
:math:`n\sqrt\rho \approx 400` Algorithm 3's path adds up to 18 times IOME's error, from
566 on at most 1.34 times, and less than IOME at :math:`d = 64`.  The rule reads no data,
so the choice costs no budget.

Otherwise (``path == "algorithm3"``) it keeps Algorithm 3's release (transform by
:math:`b`, clip at :math:`C`, Gaussian noise for sensitivity :math:`2C`, transform back) and
changes two things, one free and one cheap:

===========  =====================================================================  ================
step         what                                                                   budget
===========  =====================================================================  ================
``scale``    :math:`\hat\sigma` from chapter 8's log scales                         :math:`\rho/8`
             (:func:`egmlib.peers.scales.coinpress_log_scales`), then the floor
             :math:`\hat\sigma_j \ge f\,\overline{\hat\sigma}`, :math:`f` =
             ``SIGMA_FLOOR_SHARE`` (post-processing: free)
``centre``   CoinPress whitened by the floored :math:`\hat\sigma`, projected on     :math:`\rho/8`
             the box
``radius``   exponential mechanism over :math:`C_k = C_0 g^k \ge C_0`, :math:`C_0`  :math:`\rho/64`
             the model radius: the smallest radius that clips at most
             :math:`t` rows (:func:`select_radius`)
``noise``    Gaussian noise on the clipped transformed sum, sensitivity             :math:`47\rho/64`
             :math:`2C`
===========  =====================================================================  ================

(``SHARES``; chapter 8's pipeline spends the same on the scales and the centre and
:math:`3\rho/4` on the noise: the radius check costs the noise 2 % of its budget, 1 % of
its standard deviation.  Taking it from the centre instead costs more: at
:math:`d = 2048`, :math:`\rho = 1/16` a poorer centre puts hundreds of rows beyond
:math:`C_0` and the check then doubles the radius.)  The floor raises :math:`\sum_j\hat\sigma_j`,
to which Algorithm 3's noise error is proportional, by at most the factor :math:`1+f`; it
keeps an underestimated column from taking the weight of the others.  The radius step
tolerates :math:`t = \max(1 + 2\ln((K+1)/\beta)/\varepsilon,\ \tau n)` clipped rows,
:math:`\tau` = ``TARGET_SHARE``: on the model :math:`C_0` clips about one row and is kept
except with probability ``RADIUS_BETA``; symmetric heavy tails, whose clipping bias
cancels, are clipped as the model radius clips them up to a share :math:`\tau` of the
rows; when the model radius clips more (an asymmetric tail, a bad centre or bad scales)
the radius grows until about :math:`t` rows are clipped, as PLAN's threshold does from
the start.

Sensitivities under substitution neighbours (one row replaced; the report's Definition
2.1), proved in the book (chapter "The robust pipeline is rho-zCDP"):

* scale: the pairing is a data-independent permutation, so one substituted row changes
  one pair, one row of the matrix CoinPress sees (Biswas et al. 2020); the floor is
  post-processing;
* centre: CoinPress, one row of the whitened data changes;
* radius: the utility :math:`u(k) = -(c_k - t)_+ - (t - c_{k-1})_+`, :math:`c_k` the
  number of rows with norm above :math:`C_k` (:math:`c_{-1} = +\infty`), has sensitivity 1
  (:math:`c_k` and :math:`c_{k-1}` never move in opposite directions), so the exponential
  mechanism at :math:`\varepsilon = \sqrt{8\rho_{\rm radius}}` has :math:`\varepsilon`-bounded
  range and is :math:`\rho_{\rm radius}`-zCDP (Cesar and Rogers 2021);
* noise: every clipped row has norm at most :math:`C`, so the clipped sum moves by at
  most :math:`2C`; noise :math:`2C/\sqrt{2\rho_{\rm noise}}` (Bun and Steinke 2016,
  Prop. 1.6).

The steps compose (Bun and Steinke 2016, Lemma 2.3) and the shares sum to 1.  The path
rule is a function of :math:`(n, d, \rho)` only, which substitution neighbours share, so
both neighbours take the same path and the release is :math:`\rho`-zCDP on either (the
book's Lemma "Choosing the path by a public rule costs nothing"; IOME's release is
:math:`\rho`-zCDP with its own shares).

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

from egmlib import _validation as _v
from egmlib import clipping, gchisq
from egmlib._validation import FloatArray
from egmlib.peers import budget as _budget
from egmlib.peers import plan as _plan
from egmlib.peers.coinpress import coinpress_known_scales
from egmlib.peers.hadamard import random_hadamard
from egmlib.peers.iome import iome_mean
from egmlib.peers.quantiles import coordinatewise_quantiles
from egmlib.peers.scales import coinpress_log_scales, second_moments

__all__ = [
    "FEW_ROWS_CONSTANT",
    "RADIUS_BETA",
    "RADIUS_DOWN",
    "RADIUS_GRID",
    "SECOND_MOMENT_SHARE",
    "SHARES",
    "SIGMA_FLOOR_SHARE",
    "TARGET_COEF",
    "RadiusChoice",
    "RobustResult",
    "algorithm3_robust",
    "few_rows",
    "plan_last_step_private_inputs",
    "radius_probabilities",
    "radius_targets",
    "radius_utility",
    "robust_scales",
    "select_radius",
]

#: Budget shares of :func:`algorithm3_robust`; they sum to 1.
SHARES = MappingProxyType({"scale": 1 / 8, "centre": 1 / 8, "radius": 1 / 64, "noise": 47 / 64})
#: The floor sigma_hat_j >= SIGMA_FLOOR_SHARE * mean(sigma_hat) (post-processing, free).
SIGMA_FLOOR_SHARE = 0.2
#: Ratio g between neighbouring radii of the grid C_k = C_0 g^k.
RADIUS_GRID = 2.0 ** 0.125
#: Probability that the radius step leaves C_0 although at most one row is beyond it.  Leaving
#: it on the model draws a radius from the whole grid (at 0.01, one release in a hundred at
#: n = 4000, rho = 1/16 added about 170 times the median error), so it is kept rare.
RADIUS_BETA = 1e-4
#: Grid points below C_0 (the grid reaches C_0 g^-RADIUS_DOWN = C_0 / 2): lighter tails than
#: the model's, or overestimated scales, may take a smaller radius.
RADIUS_DOWN = 8
#: The radius step aims at clipping at most TARGET_COEF sqrt(d / rho_noise) rows: the clipping
#: bias of that many rows, each clipped by about the radius, is the size of the noise
#: (2 C sqrt(d) / (n sqrt(2 rho_noise)) in norm), at every n.
TARGET_COEF = 1.0
#: The share of the scale step's budget spent on the second moments (the rest on the log scales).
SECOND_MOMENT_SHARE = 0.5
#: The rule :func:`few_rows`: n sqrt(rho) below it releases IOME's estimate.  Calibrated by
#: ``benchmarks/offmodel_crossover.py`` on Gaussian rows (Algorithm 3's model): the smallest
#: n sqrt(rho) of its grid (565.7) from which on Algorithm 3's path adds at most 1.5 times
#: IOME's error at every d and rho, rounded down to a multiple of 10.
FEW_ROWS_CONSTANT = 560.0
#: Largest number of grid points above C_0.
_MAX_GRID = 400


@dataclass(frozen=True)
class RadiusChoice:
    """Output of :func:`select_radius`: the grid, the targets and the chosen radius."""

    C: float  #: the chosen radius C_0 g^k
    k: int  #: its place on the grid, from -RADIUS_DOWN (C_0 / 2) up; 0 is the model radius
    C0: float  #: the model radius
    grid_size: int  #: the number of radii of the grid
    target: float  #: t, the clipped rows tolerated from C_0 up (at least the mechanism's resolution)
    target_below: float  #: the clipped rows tolerated below C_0, TARGET_COEF sqrt(d / rho_noise)
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

    :math:`\hat\sigma_j = \max\bigl(\ell_j,\ \sqrt{(s_j - 2\,\mathrm{sd})_+}\bigr)`, floored at
    ``SIGMA_FLOOR_SHARE`` times its mean, with :math:`\ell` the log scales of
    :func:`~egmlib.peers.scales.coinpress_log_scales` (budget :math:`(1-a)\rho`, accurate for
    continuous columns whatever their spread of scales) and :math:`s` the second moments of
    :func:`~egmlib.peers.scales.second_moments` with their noise sd (budget :math:`a\rho`,
    :math:`a` = ``SECOND_MOMENT_SHARE``; unbiased where the log scales collapse: tied,
    count and 0/1 columns).  A second moment counts only where it stands two noise sds above
    0, so noise cannot inflate a scale.  The maximum and the floor are post-processing; the
    two steps compose (Bun and Steinke 2016, Lemma 1.7) into :math:`\rho`-zCDP.

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
    logs = coinpress_log_scales(X, rho=(1.0 - a) * rho, lower=lower, upper=upper, rng=rng).sigma_hat
    sm = second_moments(X, rho=a * rho, lower=lower, upper=upper, rng=rng)
    return _floored(np.maximum(logs, np.sqrt(np.maximum(sm.variance - 2.0 * sm.noise_sd, 0.0))))


def _robust_inputs(X: np.ndarray, *, rho_scale: float, rho_centre: float, lower: float,
                  upper: float, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    r"""The private inputs :math:`(\hat\sigma, \hat\mu)` of :func:`algorithm3_robust`.

    :math:`\hat\sigma` = :func:`robust_scales` at ``rho_scale``; :math:`\hat\mu` = CoinPress
    whitened by it (:func:`~egmlib.peers.coinpress.coinpress_known_scales`, Biswas et al.
    2020) at ``rho_centre``, projected on the box (post-processing).  Together
    (``rho_scale`` + ``rho_centre``)-zCDP (Bun and Steinke 2016, Lemma 1.7).
    ``X`` is checked by the caller.
    """
    sigma_hat = _robust_scales(X, rho_scale, lower, upper, rng)
    centre = np.clip(coinpress_known_scales(X, sigma=sigma_hat, rho=rho_centre, lower=lower,
                                            upper=upper, rng=rng).estimate, lower, upper)
    return sigma_hat, centre


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def radius_utility(norms: Any, *, radii: Any, target: Any) -> FloatArray:
    r"""The utility :math:`u(k) = -(c_k - t_k)_+ - (t_k - c_{k-1})_+` of every radius on the grid.

    :math:`c_k = \#\{i: \|y_i\| > C_k\}` for increasing radii :math:`C_0 < C_1 < \dots`,
    :math:`c_{-1} = +\infty`, :math:`t_k` = ``target`` (one number, or one per radius).  It is
    largest (0) at the smallest radius that clips at most its target.  Sensitivity 1 under
    substitution of one row, for any public targets (the Lemma "The utility of a radius has
    sensitivity 1" of the book's chapter on this pipeline's privacy: the counts
    :math:`c_k, c_{k-1}` never move in opposite directions).

    Examples
    --------
    >>> radius_utility([0.5, 1.5, 2.5, 3.5], radii=[1.0, 2.0, 3.0, 4.0], target=1.0).tolist()
    [-2.0, -1.0, 0.0, 0.0]
    """
    norms = _v.check_finite_vector("norms", norms)
    radii = _v.check_finite_vector("radii", radii)
    if radii.shape[0] > 1 and not np.all(np.diff(radii) > 0):
        raise ValueError("radii must be strictly increasing, got radii that are not")
    t = np.asarray(_v.as_real_array("target", target, nonempty=True), dtype=float)
    if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != radii.shape[0]):
        raise ValueError(f"target must be one number or one per radius ({radii.shape[0]}), got shape {t.shape}")
    if not np.all(np.isfinite(t) & (t >= 0)):
        raise ValueError("target must be finite and >= 0")
    return _utility(np.sort(norms), radii, np.broadcast_to(t, radii.shape))


def _utility(sorted_norms: FloatArray, radii: FloatArray, targets: FloatArray) -> FloatArray:
    n = sorted_norms.shape[0]
    c = n - np.searchsorted(sorted_norms, radii, side="right")  # rows strictly beyond C_k
    over = np.maximum(c - targets, 0.0)
    under = np.zeros_like(over)
    under[1:] = np.maximum(targets[1:] - c[:-1], 0.0)
    return 0.0 - (over + under)  # 0.0 - x: no negative zeros


def _grid(C0: float, C_max: float, grid: float, down: int) -> FloatArray:
    # where C_max / C0 overflows (a subnormal C0), log(C_max) - log(C0): at most about 1454
    # for any positive finite pair
    ratio = C_max / C0
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(C_max) - math.log(C0)
    K = 0 if C_max <= C0 else min(_MAX_GRID, math.ceil(log_ratio / math.log(grid)))
    return C0 * grid ** np.arange(-down, K + 1, dtype=float)


def radius_targets(grid_size: int, *, d: int, rho_noise: float, eps: float,
                   beta: float = RADIUS_BETA) -> tuple[float, float]:
    r"""The clipped rows the radius step tolerates: (from :math:`C_0` up, below :math:`C_0`).

    Below the model radius :math:`t_- = a\sqrt{d/\rho_{\rm noise}}`, :math:`a` =
    ``TARGET_COEF``: clipping that many rows, each by about the radius, biases the sum by
    about :math:`a\sqrt{d/\rho_{\rm noise}}\,C`, the norm of the Gaussian noise
    :math:`2C\sqrt{d}/\sqrt{2\rho_{\rm noise}}` up to a constant, at every :math:`n`
    (Bun and Steinke 2016's noise).  From :math:`C_0` up
    :math:`t_+ = \max(t_-, 1 + 2\ln(G/\beta)/\varepsilon)`, also the exponential
    mechanism's resolution over :math:`G` radii (McSherry and Talwar 2007): the model radius
    is kept unless it clips clearly more.  Both depend on public quantities only.

    Examples
    --------
    >>> lo_up = radius_targets(100, d=64, rho_noise=0.5, eps=1.0)
    >>> [round(t, 1) for t in lo_up]
    [28.6, 11.3]
    """
    grid_size = _v.check_count("grid_size", grid_size)
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    eps = _v.check_positive_finite("eps", eps)
    beta = _v.check_probability("beta", beta)
    return _targets(grid_size, d, rho_noise, eps, beta)


def _targets(grid_size: int, d: int, rho_noise: float, eps: float, beta: float) -> tuple[float, float]:
    ratio = grid_size / beta
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(grid_size) - math.log(beta)
    below = TARGET_COEF * math.sqrt(d / rho_noise)
    return max(below, 1.0 + 2.0 * log_ratio / eps), below


def radius_probabilities(norms: Any, *, C0: float, C_max: float, rho: float, d: int,
                         rho_noise: float, grid: float = RADIUS_GRID,
                         beta: float = RADIUS_BETA) -> FloatArray:
    r"""The exact output distribution of :func:`select_radius` over the grid.

    :math:`P(k) = e^{\varepsilon u(k)/2}/\sum_l e^{\varepsilon u(l)/2}` with
    :math:`\varepsilon = \sqrt{8\rho}` and :math:`u` = :func:`radius_utility` with the targets
    of :func:`radius_targets` (exponential mechanism, McSherry and Talwar 2007;
    :math:`\rho`-zCDP by its bounded range, Cesar and Rogers 2021), over the radii
    :math:`C_0 g^k`, :math:`k = -` ``RADIUS_DOWN`` :math:`\dots K`.

    Examples
    --------
    >>> p = radius_probabilities(np.full(1000, 0.99), C0=1.0, C_max=16.0, rho=1.0, d=4, rho_noise=1.0)
    >>> int(np.argmax(p)) - RADIUS_DOWN, round(float(p.sum()), 12)   # k = 0, the model radius
    (0, 1.0)
    """
    norms, C0, C_max, rho, grid, beta = _check_radius_args(norms, C0, C_max, rho, grid, beta)
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    return _probabilities(np.sort(norms), C0, C_max, rho, d, rho_noise, grid, beta)[1]


def _check_radius_args(norms: Any, C0: Any, C_max: Any, rho: Any, grid: Any,
                       beta: Any) -> tuple[FloatArray, float, float, float, float, float]:
    norms = _v.check_finite_vector("norms", norms)
    if np.any(norms < 0):
        raise ValueError("norms must be >= 0, got a negative entry")
    C0 = _v.check_positive_finite("C0", C0)
    C_max = _v.check_positive_finite("C_max", C_max)
    rho = _v.check_positive_finite("rho", rho)
    grid = _v.check_positive_finite("grid", grid)
    if not grid > 1.0:
        raise ValueError(f"grid must be > 1, got grid={grid!r}")
    beta = _v.check_probability("beta", beta)
    _budget.exponential_mechanism_epsilon(rho)  # a rho too large for a finite eps names rho
    return norms, C0, C_max, rho, grid, beta


def _probabilities(sorted_norms: FloatArray, C0: float, C_max: float, rho: float, d: int,
                   rho_noise: float, grid: float,
                   beta: float) -> tuple[FloatArray, FloatArray, float, float, float]:
    radii = _grid(C0, C_max, grid, RADIUS_DOWN)
    eps = _budget.exponential_mechanism_epsilon(rho)
    up, below = _targets(radii.shape[0], d, rho_noise, eps, beta)
    targets = np.where(np.arange(radii.shape[0]) < RADIUS_DOWN, below, up)
    logits = 0.5 * eps * _utility(sorted_norms, radii, targets)
    logits -= logits.max()
    p = np.exp(logits)
    p /= p.sum()
    return radii, p, up, below, eps


def select_radius(norms: Any, *, C0: float, C_max: float, rho: float, d: int, rho_noise: float,
                  rng: np.random.Generator, grid: float = RADIUS_GRID,
                  beta: float = RADIUS_BETA) -> RadiusChoice:
    r"""The private radius: exponential mechanism over :math:`C_0 g^k`, :math:`k = -D..K`.

    :math:`D` = ``RADIUS_DOWN``, :math:`K = \lceil \ln(C_{\max}/C_0)/\ln g\rceil` (at most
    400), :math:`\varepsilon = \sqrt{8\rho}`, the targets of :func:`radius_targets` (a
    noise-sized number of clipped rows below :math:`C_0`, at least the mechanism's resolution
    from :math:`C_0` up), utility :func:`radius_utility` (sensitivity 1);
    :math:`P(k) \propto e^{\varepsilon u(k)/2}` (:func:`radius_probabilities`; McSherry and
    Talwar 2007), :math:`\varepsilon`-DP and hence :math:`\varepsilon^2/8 = \rho`-zCDP
    (Cesar and Rogers 2021).  The grid and the targets depend only on public or already
    released quantities (:math:`C_0, C_{\max}, d, \rho_{\rm noise}`).  ``norms`` are the
    rows' transformed norms :math:`\|(x_i - \hat\mu)\odot b\|`.

    Examples
    --------
    >>> select_radius(np.full(100, 0.99), C0=1.0, C_max=8.0, rho=1.0, d=4, rho_noise=1.0,
    ...               rng=np.random.default_rng(0)).k
    0
    """
    norms, C0, C_max, rho, grid, beta = _check_radius_args(norms, C0, C_max, rho, grid, beta)
    d = _v.check_count("d", d)
    rho_noise = _v.check_positive_finite("rho_noise", rho_noise)
    rng = _v.check_rng("rng", rng)
    return _select_radius(norms, C0, C_max, rho, d, rho_noise, rng, grid, beta)


def _select_radius(norms: FloatArray, C0: float, C_max: float, rho: float, d: int, rho_noise: float,
                   rng: np.random.Generator, grid: float, beta: float) -> RadiusChoice:
    radii, p, up, below, eps = _probabilities(np.sort(norms), C0, C_max, rho, d, rho_noise, grid, beta)
    i = int(rng.choice(radii.shape[0], p=p))
    return RadiusChoice(C=float(radii[i]), k=i - RADIUS_DOWN, C0=float(C0), grid_size=radii.shape[0],
                        target=up, target_below=below, eps=eps)


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


def few_rows(n: int, *, d: int, rho: float) -> bool:
    r"""The public rule of :func:`algorithm3_robust`: too few rows for Algorithm 3's path.

    True when :math:`n\sqrt\rho < c`, :math:`c` = ``FEW_ROWS_CONSTANT``; then
    :func:`algorithm3_robust` releases IOME's estimate
    (:func:`egmlib.peers.iome.iome_mean`, Huang, Liang and Yi 2021, as PLAN's experiments
    run it) with the whole budget instead of spending it on :math:`d` private scales and a
    whitened private centre, which need rows to converge.  The rule reads only public
    quantities (the number of rows, the dimension and the budget), never the data, so
    either release is :math:`\rho`-zCDP (the book's remark "Choosing the path by a public
    rule costs nothing").

    :math:`c = 560` comes from ``benchmarks/offmodel_crossover.py`` on Gaussian rows
    (Algorithm 3's model; :math:`\sigma_j = (d/j)^{3/4}`, the sweeps' box, :math:`d \in
    \{10, 30, 64\}`, :math:`\rho \in \{1/16, \dots, 1\}`, :math:`n` from 100 to 3200,
    medians of 20 runs): Algorithm 3's path fails where :math:`n\sqrt\rho` is between
    about 100 and 283, at every budget and dimension (up to 18 times IOME's error), and
    from :math:`n\sqrt\rho = 400\sqrt2 \approx 566` on it adds at most 1.5 times IOME's
    error everywhere; :math:`c` is that point rounded down.  The failure's position in
    :math:`n\sqrt\rho` did not move with :math:`d`, so the rule does not use ``d``; it is
    an argument so that the signature names every public quantity a rule may use.

    Parameters
    ----------
    n : int >= 1, rows
    d : int >= 1, dimension
    rho : float, finite and > 0

    Examples
    --------
    >>> few_rows(178, d=13, rho=0.25), few_rows(1797, d=64, rho=1 / 8)
    (True, False)
    """
    n = _v.check_count("n", n, maximum=2**62)
    _v.check_count("d", d, maximum=2**62)
    rho = _v.check_positive_finite("rho", rho)
    return _few_rows(n, rho)


def _few_rows(n: int, rho: float) -> bool:
    return float(n) * math.sqrt(rho) < FEW_ROWS_CONSTANT


def algorithm3_robust(X: Any, *, rho: float, lower: float, upper: float,
                      rng: np.random.Generator, p_clip: float | None = None,
                      rule: bool = True) -> RobustResult:
    r"""Algorithm 3 with private inputs, robust off its model; :math:`\rho`-zCDP in total.

    First the public rule :func:`few_rows` on :math:`(n, d, \rho)`: when it holds the
    release is IOME's (:func:`egmlib.peers.iome.iome_mean` with the whole :math:`\rho`
    and the same ``rng``; ``path == "iome"``).  Otherwise (``path == "algorithm3"``) the
    steps and budget ``SHARES`` of the module docstring: ``_robust_inputs``
    (:math:`\hat\sigma` floored, :math:`\hat\mu`), the model radius :math:`C_0` of
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
    rule : bool, default True
        Apply :func:`few_rows`; False always runs Algorithm 3's path (for the
        calibration ``benchmarks/offmodel_crossover.py`` and the privacy tests of its
        steps).

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
    if not isinstance(rule, bool | np.bool_):
        raise TypeError(f"rule must be a bool, got rule of type {type(rule).__name__}")
    rho = _v.check_positive_finite("rho", rho)
    if rule and _few_rows(n, rho):
        return _iome_path(X, rho=rho, lower=lower, upper=upper, rng=rng)
    return _algorithm3_path(X, rho=rho, lower=lower, upper=upper, rng=rng, p=p)


#: The share of the few-rows path's budget spent on its coarse centre (the rest on IOME).
COARSE_CENTRE_SHARE = 0.125
__all__.append("COARSE_CENTRE_SHARE")


def _iome_path(X: np.ndarray, *, rho: float, lower: float, upper: float,
               rng: np.random.Generator) -> RobustResult:
    r"""The few-rows release: a coarse private centre, then IOME around it, projected on the box.

    :math:`c_0` = the private coordinate-wise medians
    (:func:`~egmlib.peers.quantiles.coordinatewise_quantiles`, budget ``COARSE_CENTRE_SHARE``
    :math:`\cdot\rho`, the exponential mechanism of PLAN's centre step, which reaches any
    point of the box); then IOME (:func:`~egmlib.peers.iome.iome_mean`, Huang, Liang and Yi
    2021, as PLAN's experiments run it) with the rest of the budget on the rows
    :math:`x_i - c_0` in the box :math:`[-w, w]`, :math:`w = \max_j\max(u - c_{0j}, c_{0j} - l)`,
    which contains them; the release is :math:`c_0` plus IOME's estimate, projected on the box.
    IOME alone searches its centre within :math:`\pm w/\sqrt N` of the box's centre in every
    rotated coordinate, and a mean far from that centre (40 in :math:`[-50, 50]^{16}`) is out
    of its reach; around :math:`c_0` it is not.  Shifting by the released :math:`c_0` and
    projecting are post-processing, and the two steps compose into :math:`\rho`-zCDP.
    """
    d = X.shape[1]
    budget = _budget.split_budget(rho, shares={"coarse centre": COARSE_CENTRE_SHARE,
                                               "iome": 1.0 - COARSE_CENTRE_SHARE})
    c0 = coordinatewise_quantiles(X, q=0.5, rho=budget["coarse centre"], lower=lower, upper=upper, rng=rng)
    w = max(float(np.max(upper - c0)), float(np.max(c0 - lower)))
    R = random_hadamard(d, rng=rng)
    r = iome_mean(X - c0, rho=budget["iome"], lower=-w, upper=w, rng=rng, rotation=R)
    estimate = np.clip(c0 + r.estimate, lower, upper)
    return RobustResult(estimate=estimate, centre=c0 + R.unrotate(r.centre), sigma=None, C=r.C,
                        radius=None, noise_std=np.full(d, r.noise_std), n_clipped=r.n_clipped,
                        budget=budget, path="iome")


def _algorithm3_path(X: np.ndarray, *, rho: float, lower: float, upper: float,
                     rng: np.random.Generator, p: float) -> RobustResult:
    n = X.shape[0]
    budget = _budget.split_budget(rho, shares=SHARES)
    sigma, centre = _robust_inputs(X, rho_scale=budget["scale"], rho_centre=budget["centre"],
                                  lower=lower, upper=upper, rng=rng)
    d = X.shape[1]
    b = 1.0 / np.sqrt(sigma * float(np.sum(sigma)))
    norms = clipping.transformed_norms(X, mu_hat=centre, b=b)
    C0 = _model_radius(sigma, p)
    C_max = (upper - lower) * float(np.linalg.norm(b))
    choice = _select_radius(norms, C0, C_max, budget["radius"], X.shape[1], budget["noise"], rng,
                            RADIUS_GRID, RADIUS_BETA)
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

    The same ``_robust_inputs`` (same shares), then PLAN's threshold and noise
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
    sigma, centre = _robust_inputs(X, rho_scale=budget["scale"], rho_centre=budget["centre"],
                                  lower=lower, upper=upper, rng=rng)
    # PLAN_ORACLE_SHARES splits the rest 1/4 : 3/4, as PLAN_LAST_STEP_SHARES states
    r = _plan.plan_oracle_mean(X, mu_hat=centre, sigma=sigma,
                               rho=budget["threshold"] + budget["noise"], lower=lower,
                               upper=upper, rng=rng, beta=beta)
    std = r.noise_std * np.sqrt(r.Delta) / X.shape[0]
    return RobustResult(estimate=r.estimate, centre=centre, sigma=sigma, C=r.C, radius=None,
                        noise_std=std, n_clipped=r.n_clipped, budget=budget, path="plan")
