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
from egmlib.peers.scales import coinpress_log_scales

__all__ = [
    "FEW_ROWS_CONSTANT",
    "RADIUS_BETA",
    "RADIUS_GRID",
    "SHARES",
    "SIGMA_FLOOR_SHARE",
    "RadiusChoice",
    "RobustResult",
    "algorithm3_robust",
    "few_rows",
    "plan_last_step_private_inputs",
    "radius_probabilities",
    "radius_utility",
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
#: The radius step tolerates at least this share of the rows clipped.
TARGET_SHARE = 0.05
#: The rule :func:`few_rows`: n sqrt(rho) below it releases IOME's estimate.  Calibrated by
#: ``benchmarks/offmodel_crossover.py`` on Gaussian rows (Algorithm 3's model): the smallest
#: n sqrt(rho) of its grid (565.7) from which on Algorithm 3's path adds at most 1.5 times
#: IOME's error at every d and rho, rounded down to a multiple of 10.
FEW_ROWS_CONSTANT = 560.0
#: Largest number of grid points above C_0.
_MAX_GRID = 400


@dataclass(frozen=True)
class RadiusChoice:
    """Output of :func:`select_radius`: the grid, the target and the chosen radius."""

    C: float  #: the chosen radius C_k
    k: int  #: its index on the grid
    C0: float  #: the model radius (k = 0)
    grid_size: int  #: K + 1
    target: float  #: t, the number of clipped rows tolerated
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


def _robust_inputs(X: np.ndarray, *, rho_scale: float, rho_centre: float, lower: float,
                  upper: float, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    r"""The private inputs :math:`(\hat\sigma, \hat\mu)` of :func:`algorithm3_robust`.

    :math:`\hat\sigma` = :func:`~egmlib.peers.scales.coinpress_log_scales` at ``rho_scale``, floored at
    ``SIGMA_FLOOR_SHARE`` times its mean (post-processing); :math:`\hat\mu` = CoinPress
    whitened by it (:func:`~egmlib.peers.coinpress.coinpress_known_scales`, Biswas et al.
    2020) at ``rho_centre``, projected on the box (post-processing).  Together
    (``rho_scale`` + ``rho_centre``)-zCDP (Bun and Steinke 2016, Lemma 1.7).
    ``X`` is checked by the caller.
    """
    sigma_hat = _floored(coinpress_log_scales(X, rho=rho_scale, lower=lower, upper=upper,
                                              rng=rng).sigma_hat)
    centre = np.clip(coinpress_known_scales(X, sigma=sigma_hat, rho=rho_centre, lower=lower,
                                            upper=upper, rng=rng).estimate, lower, upper)
    return sigma_hat, centre


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def radius_utility(norms: Any, *, radii: Any, target: float) -> FloatArray:
    r"""The utility :math:`u(k) = -(c_k - t)_+ - (t - c_{k-1})_+` of every radius on the grid.

    :math:`c_k = \#\{i: \|y_i\| > C_k\}` for increasing radii :math:`C_0 < C_1 < \dots`,
    :math:`c_{-1} = +\infty`, :math:`t` = ``target``.  It is largest (0) at the smallest
    radius that clips at most :math:`t` rows.  Sensitivity 1 under substitution of one
    row (the Lemma "The utility of a radius has sensitivity 1" of the book's chapter on
    this pipeline's privacy: the counts :math:`c_k, c_{k-1}` never move in opposite
    directions).

    Examples
    --------
    >>> radius_utility([0.5, 1.5, 2.5, 3.5], radii=[1.0, 2.0, 3.0, 4.0], target=1.0).tolist()
    [-2.0, -1.0, 0.0, 0.0]
    """
    norms = _v.check_finite_vector("norms", norms)
    radii = _v.check_finite_vector("radii", radii)
    if radii.shape[0] > 1 and not np.all(np.diff(radii) > 0):
        raise ValueError("radii must be strictly increasing, got radii that are not")
    target = _v.check_nonnegative_finite("target", target)
    return _utility(np.sort(norms), radii, target)


def _utility(sorted_norms: FloatArray, radii: FloatArray, target: float) -> FloatArray:
    n = sorted_norms.shape[0]
    c = n - np.searchsorted(sorted_norms, radii, side="right")  # rows strictly beyond C_k
    over = np.maximum(c - target, 0.0)
    under = np.zeros_like(over)
    under[1:] = np.maximum(target - c[:-1], 0.0)
    return 0.0 - (over + under)  # 0.0 - x: no negative zeros


def _grid(C0: float, C_max: float, grid: float) -> FloatArray:
    # where C_max / C0 overflows (a subnormal C0), log(C_max) - log(C0): at most about 1454
    # for any positive finite pair
    ratio = C_max / C0
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(C_max) - math.log(C0)
    K = 0 if C_max <= C0 else min(_MAX_GRID, math.ceil(log_ratio / math.log(grid)))
    return C0 * grid ** np.arange(K + 1, dtype=float)


def _target(K1: int, n: int, eps: float, beta: float) -> float:
    # where K1 / beta overflows (a subnormal beta), log(K1) - log(beta), which does not
    ratio = K1 / beta
    log_ratio = math.log(ratio) if math.isfinite(ratio) else math.log(K1) - math.log(beta)
    return max(1.0 + 2.0 * log_ratio / eps, TARGET_SHARE * n)


def radius_probabilities(norms: Any, *, C0: float, C_max: float, rho: float,
                         grid: float = RADIUS_GRID, beta: float = RADIUS_BETA) -> FloatArray:
    r"""The exact output distribution of :func:`select_radius` over the grid.

    :math:`P(k) = e^{\varepsilon u(k)/2}/\sum_l e^{\varepsilon u(l)/2}` with
    :math:`\varepsilon = \sqrt{8\rho}` and :math:`u` = :func:`radius_utility` at the target
    :math:`t = \max(1 + 2\ln((K+1)/\beta)/\varepsilon,\ \text{TARGET\_SHARE}\cdot n)`
    (exponential mechanism, McSherry and Talwar 2007; :math:`\rho`-zCDP by its bounded range,
    Cesar and Rogers 2021).

    Examples
    --------
    >>> p = radius_probabilities(np.full(1000, 0.5), C0=1.0, C_max=16.0, rho=1.0)
    >>> bool(p[0] > 0.99), round(float(p.sum()), 12)
    (True, 1.0)
    """
    norms, C0, C_max, rho, grid, beta = _check_radius_args(norms, C0, C_max, rho, grid, beta)
    return _probabilities(np.sort(norms), C0, C_max, rho, grid, beta)[1]


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


def _probabilities(sorted_norms: FloatArray, C0: float, C_max: float, rho: float, grid: float,
                   beta: float) -> tuple[FloatArray, FloatArray, float, float]:
    radii = _grid(C0, C_max, grid)
    eps = _budget.exponential_mechanism_epsilon(rho)
    target = _target(radii.shape[0], sorted_norms.shape[0], eps, beta)
    logits = 0.5 * eps * _utility(sorted_norms, radii, target)
    logits -= logits.max()
    p = np.exp(logits)
    p /= p.sum()
    return radii, p, target, eps


def select_radius(norms: Any, *, C0: float, C_max: float, rho: float,
                  rng: np.random.Generator, grid: float = RADIUS_GRID,
                  beta: float = RADIUS_BETA) -> RadiusChoice:
    r"""The private radius: exponential mechanism over :math:`C_k = C_0 g^k`, :math:`k = 0..K`.

    :math:`K = \lceil \ln(C_{\max}/C_0)/\ln g\rceil` (at most 400), :math:`\varepsilon =
    \sqrt{8\rho}`, target :math:`t = \max(1 + 2\ln((K+1)/\beta)/\varepsilon,\
    \text{TARGET\_SHARE}\cdot n)`, utility :func:`radius_utility` (sensitivity 1);
    :math:`P(k) \propto e^{\varepsilon u(k)/2}` (:func:`radius_probabilities`; McSherry and
    Talwar 2007), :math:`\varepsilon`-DP and hence :math:`\varepsilon^2/8 = \rho`-zCDP
    (Cesar and Rogers 2021).  The grid depends only on public or already released
    quantities (:math:`C_0, C_{\max}`, :math:`n`).  ``norms`` are the rows' transformed
    norms :math:`\|(x_i - \hat\mu)\odot b\|`.

    Examples
    --------
    >>> select_radius(np.full(100, 0.5), C0=1.0, C_max=8.0, rho=1.0,
    ...               rng=np.random.default_rng(0)).k
    0
    """
    norms, C0, C_max, rho, grid, beta = _check_radius_args(norms, C0, C_max, rho, grid, beta)
    rng = _v.check_rng("rng", rng)
    return _select_radius(norms, C0, C_max, rho, rng, grid, beta)


def _select_radius(norms: FloatArray, C0: float, C_max: float, rho: float,
                   rng: np.random.Generator, grid: float, beta: float) -> RadiusChoice:
    radii, p, target, eps = _probabilities(np.sort(norms), C0, C_max, rho, grid, beta)
    k = int(rng.choice(radii.shape[0], p=p))
    return RadiusChoice(C=float(radii[k]), k=k, C0=float(C0), grid_size=radii.shape[0],
                        target=target, eps=eps)


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


def _iome_path(X: np.ndarray, *, rho: float, lower: float, upper: float,
               rng: np.random.Generator) -> RobustResult:
    """IOME's release with the whole rho, as ``iome_mean(X, rho, lower, upper, rng)``.

    The rotation is drawn here exactly as :func:`~egmlib.peers.iome.iome_mean` draws it
    (same generator, same rounds), so the release is the same bit for bit; having it
    lets the centre be reported in the original coordinates.
    """
    R = random_hadamard(X.shape[1], rng=rng)
    r = iome_mean(X, rho=rho, lower=lower, upper=upper, rng=rng, rotation=R)
    d = X.shape[1]
    return RobustResult(estimate=r.estimate, centre=R.unrotate(r.centre), sigma=None, C=r.C,
                        radius=None, noise_std=np.full(d, r.noise_std), n_clipped=r.n_clipped,
                        budget=r.budget, path="iome")


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
    choice = _select_radius(norms, C0, C_max, budget["radius"], rng, RADIUS_GRID, RADIUS_BETA)
    C = choice.C
    clipped = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b, norms=norms)
    total, n_clipped = clipped.total, clipped.n_clipped
    s = _budget.gaussian_noise_std(budget["noise"], sensitivity=clipping.sum_sensitivity(C, n=n, d=d))
    noisy = (total + s * rng.standard_normal(X.shape[1])) / n
    estimate = centre + noisy / b
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
