r"""ESM: the book's private mean, a path chosen by predicted error (rho-zCDP in total).

ESM ("elliptical scaled mean", the book's recommended estimator; the arm ``ARMS["Alg3"]``)
releases the mean of :math:`n` rows in a public box :math:`[l, u]^d` by one of four paths,
the one whose error :mod:`egmlib.peers.path_errors` predicts to be smallest.  The choice
reads public quantities and released ones only, so it is post-processing, and the budget of
every release that feeds it is paid before it is made:

1. *Public stage.*  From :math:`n, d, \rho` alone: when the scale step could not resolve the
   scales (:func:`scales_resolvable`: the public noise :math:`\tau_\ell` of a log scale,
   :func:`egmlib.peers.scales.log_scale_noise`, at least ``SCALE_RESOLUTION`` nats), the paths
   that buy scales cannot gain over IOME, which needs none: ESM releases IOME with the whole
   budget and spends nothing on scales.
2. *Scale stage.*  Otherwise it buys the scales (:func:`egmlib.peers.scales.paired_scales`,
   ``SHARES["scale"]``), predicts each path's error with the rest of the budget from the
   released scales and second moments (:func:`predict_paths`) and runs the smallest:

   =================  =================================================================  ==========
   path               release                                                            budget
   =================  =================================================================  ==========
   ``iome``           IOME alone (PLAN's version, its box)                               the rest
   ``centred-iome``   a coarse centre, then IOME around it                               the rest
   ``algorithm3``     CoinPress's centre whitened by the scales (:math:`\rho/8`), a       ``SHARES``
                      radius (:math:`\rho/64`), Algorithm 3's noise (:math:`47\rho/64`)
   ``plan``           the same centre, then PLAN's last step (threshold, noise)          ``PLAN_LAST_STEP_SHARES``
   =================  =================================================================  ==========

ESM's IOME (``iome``) searches its centre over the whole box, about the box's centre, where the
bisection of that search tracks the data (:func:`whole_box_tracks`, public), so that it reaches a
mean at a face or a corner of the box; elsewhere it is IOME as PLAN's experiments run it, whose
search, each rotated coordinate in the box divided by :math:`\sqrt N`, holds only the means whose
rotation lies near 0 (near the middle of a box symmetric about 0, near the corner at 0 of a box that
starts there).  ``centred-iome``'s coarse centre, where the
whole box does not track, is the rows' private grand mean in every coordinate (the *anchor*, one
number whatever :math:`d`) where its noise is well inside IOME's search (:func:`coarse_centre`,
public); whichever stage releases IOME takes ``centred-iome`` where the anchor pays and lies out of
IOME's reach, and ``iome`` otherwise.  Where the whole box does not track and the rows are many
enough (:func:`reach_test_runs`, public), a *reach test* first releases, with ``REACH_SHARE`` of
IOME's budget, how far the rows' rotated mean lies from the search of the box IOME would search; where
it lies beyond IOME's reach, IOME searches the whole box after all (a mean at a corner that no
diagonal passes through, which the anchor does not bring within reach).  The anchor and the reach
test are paid from IOME's noise: IOME's centre and radius searches keep the budgets IOME alone has
with the path's budget, and where rows are few the radius search gets more, so that IOME does not
clip a large share of them as a margin against its noisy counts (:func:`iome_shares`, the ``shares`` of
:func:`egmlib.peers.iome.iome_mean`).

Privacy, under substitution neighbours (one row replaced; the report's Definition 2.1),
is proved in the book (:prf:ref:`book-theorem-9-l` and the statements before it): each step
has the sensitivity its noise is calibrated to, the choices read public and released values
only, and on every path the shares sum to 1.

:func:`plan_last_step_private_inputs` is the arm that runs the ``plan`` path always: PLAN's last
step (Aumuller et al. 2024) on exactly ESM's private scales and centre.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmlib import clipping, gchisq
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers import coinpress as _cp
from egmlib.peers import normalise
from egmlib.peers import path_errors as _pe
from egmlib.peers import plan as _plan
from egmlib.peers.hadamard import RandomizedHadamard, random_hadamard
from egmlib.peers.iome import IOME_SHARES, iome_mean
from egmlib.peers.path_errors import PATHS, Path
from egmlib.peers.scales import (
    PAIRED_LEVEL,
    PAIRED_LOG_FLOOR,
    PAIRED_LOG_SHARE,
    PairedScales,
    _log_scale_noise,
    _paired_scales,
)
from egmlib.validation import FloatArray

__all__ = [
    "IOME_ANCHOR_SHARE",
    "IOME_RADIUS_CAP",
    "IOME_RADIUS_ROWS",
    "LOG_SCALE_FLOOR",
    "PATHS",
    "coarse_centre",
    "PLAN_LAST_STEP_SHARES",
    "RADIUS_DOWN",
    "RADIUS_GRID",
    "RADIUS_PRIOR",
    "REACH_SHARE",
    "REACH_Z",
    "SCALE_RESOLUTION",
    "SHARES",
    "TARGET_COEF",
    "Path",
    "PathPrediction",
    "RadiusChoice",
    "RobustResult",
    "algorithm3_robust",
    "iome_shares",
    "plan_last_step_private_inputs",
    "predict_paths",
    "reach_test_runs",
    "radius_probabilities",
    "radius_target",
    "radius_utility",
    "scales_resolvable",
    "select_radius",
    "whole_box_tracks",
]

#: Budget shares of the ``algorithm3`` path; they sum to 1.
SHARES = MappingProxyType({"scale": 1 / 8, "centre": 1 / 8, "radius": 1 / 64, "noise": 47 / 64})
#: Budget shares of the ``plan`` path: the same scales and centre, then PLAN's split of its last
#: step (threshold 1/4, noise 3/4 of the rest).
PLAN_LAST_STEP_SHARES = MappingProxyType({
    "scale": SHARES["scale"], "centre": SHARES["centre"],
    "threshold": 0.25 * (1.0 - SHARES["scale"] - SHARES["centre"]),
    "noise": 0.75 * (1.0 - SHARES["scale"] - SHARES["centre"])})
#: The public floor of ESM's log scales, sigma_j >= LOG_SCALE_FLOOR * (upper - lower)
#: (:data:`egmlib.peers.scales.PAIRED_LOG_FLOOR`).
LOG_SCALE_FLOOR = PAIRED_LOG_FLOOR
#: The share of an IOME path's budget spent on its anchor (the rest on IOME).
IOME_ANCHOR_SHARE = 1 / 32
#: The share of IOME's budget spent on its reach test (:func:`reach_test_runs`), where it runs.
REACH_SHARE = 1 / 16
#: IOME clips, besides what its noise allows, 2 sds of its radius search's noisy counts as a margin
#: (:func:`egmlib.peers.iome.iome_clip_count`); ESM's IOME gives that search enough budget that the
#: margin is at most this share of the rows (:func:`iome_shares`).  On synthetic Gaussian rows it is
#: the share that makes the product of IOME's errors the smallest (``benchmarks/iome_radius_rows.py``).
IOME_RADIUS_ROWS = 0.2
#: The most of an IOME path's budget that IOME's radius search takes under ``IOME_RADIUS_ROWS``.
IOME_RADIUS_CAP = 1 / 8
#: The reach test runs where its noise sd is at most IOME's reach h / REACH_Z (h half the width of
#: IOME's box): a mean inside IOME's search is then sent over the whole box with probability at most
#: Phi(-REACH_Z) = 3e-5.
REACH_Z = 4.0
#: The public stage releases IOME when a log scale's noise sd is at least this many nats.  On
#: synthetic Gaussian rows it is the threshold that makes the product of the error ratios it
#: accepts (the scale stage's pick over IOME alone, in every cell below it) the smallest
#: (``benchmarks/offmodel_paths.py``, by :func:`egmbook.findings.offmodel.resolution_threshold`).
SCALE_RESOLUTION = 1.487
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
class PathPrediction:
    """Output of :func:`predict_paths`: the predicted error of each path ESM can still take."""

    errors: Mapping[str, float]  #: path -> predicted error (one IOME path, by :func:`coarse_centre`)
    mismatch: float  #: the rows' mean squared transformed norm over the model's (at least 1)

    @property
    def best(self) -> Path:
        """The path with the smallest predicted error (the first of :data:`egmlib.peers.path_errors.PATHS` on a tie)."""
        return min((p for p in PATHS if p in self.errors), key=lambda p: self.errors[p])


@dataclass(frozen=True)
class RobustResult:
    """Output of :func:`algorithm3_robust` and :func:`plan_last_step_private_inputs`.

    ``estimate`` is the release; ``sigma``, ``centre``, ``C`` and ``predicted`` are private
    intermediate releases (or public functions of them) covered by the budget.  ``n_clipped``
    is a diagnostic of the data, not private.
    """

    estimate: FloatArray  #: (d,) private estimate of the mean
    centre: FloatArray  #: (d,) the centre the release clipped around
    sigma: FloatArray | None  #: (d,) the released scales (None when the public stage chose IOME)
    C: float  #: clipping radius (transformed space; IOME's in its rotated space)
    radius: RadiusChoice | None  #: the radius step (``algorithm3`` path only)
    noise_std: FloatArray  #: (d,) std of the noise on the mean in the original coordinates
    n_clipped: int
    budget: _budget.ZCDPBudget
    path: Path = "algorithm3"  #: the release that ran (:data:`egmlib.peers.path_errors.PATHS`)
    predicted: PathPrediction | None = None  #: the scale stage's predictions (None at the public stage)


# ---------------------------------------------------------------------------------------
# the public stage and the predictions
# ---------------------------------------------------------------------------------------
def scales_resolvable(n: int, *, d: int, rho: float) -> bool:
    r"""The public stage of ESM: can the scale step tell the scales apart at all?

    True when :math:`\tau_\ell` = :func:`egmlib.peers.scales.log_scale_noise` at the log scales'
    budget (``PAIRED_LOG_SHARE`` of ``SHARES["scale"]`` of :math:`\rho`) is below
    ``SCALE_RESOLUTION``.  Otherwise a log scale is off by more than a factor
    :math:`e^{\tau_\ell}` in a typical coordinate, the James-Stein step shrinks the scales to a
    common one, and the paths that buy scales become isotropic releases that pay for inputs
    IOME does not need: ESM then releases IOME with the whole budget.  A function of
    :math:`n, d, \rho` only: the public stage of the book's Lemma 9.N, whose choice costs no
    budget (Theorem 9.L).

    Examples
    --------
    >>> scales_resolvable(20_000, d=64, rho=0.25), scales_resolvable(512, d=1024, rho=1.0)
    (True, False)
    """
    n = _pe._check_size("n", n)
    d = _pe._check_size("d", d)
    rho = _pe._check_rho("rho", rho)
    return _resolvable(n, d, rho)


def _resolvable(n: int, d: int, rho: float) -> bool:
    if n < 4:
        return False
    return _log_scale_noise(n, d, PAIRED_LOG_SHARE * SHARES["scale"] * rho, _scales_floor()) < SCALE_RESOLUTION


def _scales_floor() -> float:
    return PAIRED_LOG_FLOOR


def coarse_centre(n: int, *, d: int, rho: float, lower: float, upper: float) -> str | None:
    r"""The coarse centre an IOME path of ESM uses at budget ``rho``: ``"anchor"`` or None.

    IOME (as PLAN's experiments run it) searches its centre within :math:`\pm w/(2\sqrt N)` of its
    box's centre in every rotated coordinate, :math:`N` the padded dimension, and cannot reach a
    mean far from it.  Where its bisection tracks, ESM's IOME searches the whole box instead
    (:func:`whole_box_tracks`) and needs no coarse centre.  Elsewhere the *anchor*, the rows' private
    grand mean in every coordinate (one number, whatever :math:`d`, at ``IOME_ANCHOR_SHARE``), moves
    IOME's box to the data where its noise sd :math:`w/(n\sqrt{2\rho_a})` is at most a quarter of the
    search interval's width :math:`w/\sqrt N`; otherwise None, IOME alone.

    A function of :math:`n, d, \rho` and the box only, so the choice costs no budget (the
    book's Lemma 9.H, by Lemma 9.G with :math:`\rho_1 = 0`).

    Examples
    --------
    >>> coarse_centre(10_000, d=64, rho=1 / 16, lower=0.0, upper=1.0) is None   # the whole box tracks
    True
    >>> coarse_centre(20, d=16, rho=1.0, lower=0.0, upper=1.0) is None
    True
    >>> coarse_centre(300, d=16, rho=1 / 16, lower=-50.0, upper=50.0)
    'anchor'
    """
    n = _pe._check_size("n", n)
    d = _pe._check_size("d", d)
    rho = _pe._check_rho("rho", rho)
    lower, upper = _v.check_bounds(lower, upper)
    return _coarse_centre(n, d, rho, lower, upper)


def predict_paths(n: int, *, rho: float, lower: float, upper: float, scales: PairedScales) -> PathPrediction:
    r"""The predicted error of each path after the scale step: ESM's choice, from released values only.

    ``rho`` is ESM's whole budget; each path is predicted with what the scale step left
    (:mod:`egmlib.peers.path_errors`): the IOME path that :func:`coarse_centre` allows
    (:func:`~egmlib.peers.path_errors.iome_error` with the variances :math:`\hat\sigma^2`, their
    total raised to the second moments' total where that is larger: the second moments estimate each
    variance without bias, while log scales shrunk towards a common level understate a total of
    unequal variances), the ``algorithm3`` path
    (:func:`~egmlib.peers.path_errors.algorithm3_error`) and the ``plan`` path
    (:func:`~egmlib.peers.path_errors.plan_last_step_error`).  The last two get ``mismatch``,
    the lower confidence bound of :math:`\sum_j\hat s_jb_j^2` (the model's value is 1) from the
    released second moments :math:`\hat s`: rows much farther out than the scales say raise
    those predictions.  Every input is public or released by the scale step: post-processing
    (the book's Lemma 9.N, which makes the choice of path the :math:`g` of its Lemma 9.G).
    """
    n = _pe._check_size("n", n, minimum=2)
    rho = _pe._check_rho("rho", rho)
    lower, upper = _v.check_bounds(lower, upper)
    if not isinstance(scales, PairedScales):
        raise TypeError(f"scales must be an egmlib.peers.scales.PairedScales, got scales of type "
                        f"{type(scales).__name__}")
    try:
        return _predict(n, rho, lower, upper, scales)
    except OverflowError:
        raise ValueError("the predicted errors overflow the float64 range: lower, upper or scales too large in "
                         "magnitude; rescale the data") from None


def _lower_bound(values: FloatArray, weights: FloatArray, sd: float) -> float:
    """sum_j w_j v_j less z0 noise sds of it (v_j with independent noise of sd ``sd``)."""
    z0 = math.sqrt(2.0 * math.log(1.0 / PAIRED_LEVEL))
    return float(np.dot(weights, values)) - z0 * sd * float(np.linalg.norm(weights))


def _predict(n: int, rho: float, lower: float, upper: float, scales: PairedScales) -> PathPrediction:
    s = scales.sigma_hat
    d = s.shape[0]
    rest = (1.0 - SHARES["scale"]) * rho
    S = float(np.sum(s))
    b2 = 1.0 / (s * S)
    # log scales off by a factor e^eps_j, eps_j of variance k tau^2 after the shrinkage, put the rows
    # about e^(k tau^2) further out in mean square than the model says, and sum_j sigma_hat_j^2 about
    # e^(2 k tau^2) above the total variance; the released second moments can only raise either
    noise2 = scales.shrinkage * scales.log_noise ** 2
    mismatch = max(math.exp(min(noise2, 50.0)), _lower_bound(scales.variance, b2, scales.noise_sd))
    v = s * s
    total = max(float(np.sum(v)) * math.exp(-2.0 * min(noise2, 50.0)), float(np.sum(scales.variance)))
    v = v * (total / float(np.sum(v)))
    coarse = _coarse_centre(n, d, rest, lower, upper)
    errors: dict[str, float] = {}
    rho_iome = _before_iome(n, d, rest, coarse)[-1]
    errors["centred-iome" if coarse else "iome"] = _pe._iome_error(
        n, rho_iome, v, *_iome_box(n, d, rho_iome, lower, upper), shares=_iome_shares(n, rest, rho_iome))
    errors["algorithm3"] = _pe._algorithm3_error(n, s, SHARES["centre"] * rho, SHARES["noise"] * rho,
                                                 lower, upper, mismatch)
    Delta = _plan.plan_scaling(s)
    inv = 1.0 / Delta
    m_plan = max(math.exp(min(noise2, 50.0)),
                 _lower_bound(scales.variance, inv, scales.noise_sd) / float(np.dot(s * s, inv)))
    errors["plan"] = _pe._plan_error(n, s, PLAN_LAST_STEP_SHARES["centre"] * rho,
                                     PLAN_LAST_STEP_SHARES["threshold"] * rho,
                                     PLAN_LAST_STEP_SHARES["noise"] * rho, lower, upper, m_plan)
    return PathPrediction(errors=MappingProxyType(errors), mismatch=mismatch)


# ---------------------------------------------------------------------------------------
# centre
# ---------------------------------------------------------------------------------------
def _private_centre(X: np.ndarray, sigma: FloatArray, rho: float, lower: float, upper: float,
                    rng: np.random.Generator, colsum: FloatArray | None = None) -> FloatArray:
    r""":math:`\hat\mu`: CoinPress whitened by the released :math:`\hat\sigma`, projected on the box.

    CoinPress (Biswas et al. 2020) on :math:`x_i\oslash\hat\sigma` at ``rho`` from the ball that
    holds the whitened box, formed chunk by chunk (no whitened copy of ``X``;
    :func:`egmlib.peers.coinpress.coinpress_known_scales` does the same with checks); scaling
    back and the projection are post-processing.  ``X`` is checked and clamped by the caller;
    ``colsum``, :math:`\sum_i(x_i - c)` about the box's centre :math:`c` from the caller's pass, spares
    the pass of CoinPress's first step, whose ball (the whitened box's) holds every row: its
    statistic is then :math:`\hat\sigma^{-1}\odot\sum_i(x_i - c)`.
    """
    b = 1.0 / sigma
    centre = (0.5 * (lower + upper)) * b
    radius = _pe._whitened_radius(sigma, lower, upper)
    ref = None if colsum is None else _cp._Reference(point=centre, spread=radius, deviation=colsum * b)
    r = _cp._coinpress(X, rho=rho, centre=centre, radius=radius, rng=rng, beta=0.01, steps=None,
                       clip_rule="paper", b=b, ref=ref, lean=_pe.CENTRE_LEAN)
    return np.clip(sigma * r.estimate, lower, upper)


# ---------------------------------------------------------------------------------------
# radius
# ---------------------------------------------------------------------------------------
def radius_utility(norms: Any, *, radii: Any, target: float) -> FloatArray:
    r"""The utility :math:`u(k) = -(c_k - t)_+` of every radius on the grid.

    :math:`c_k = \#\{i: \|y_i\| > C_k\}`, the rows a radius :math:`C_k` clips, and :math:`t` =
    ``target``.  Every radius that clips at most :math:`t` rows has utility 0; each row more
    costs 1.  Substituting one row moves every :math:`c_k` by at most 1, so :math:`u` has
    sensitivity 1 for any public target (shown in the proof of the book's Proposition 9.J,
    :prf:ref:`book-proposition-9-j`).

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
    (Cesar and Rogers 2021; the book's :prf:ref:`book-proposition-9-j`).  The grid and the target depend
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
# the paths
# ---------------------------------------------------------------------------------------
def _check(X: Any, lower: Any, upper: Any, rng: Any) -> tuple[np.ndarray, normalise.UnitBox, np.random.Generator,
                                                                FloatArray]:
    """X finite (n >= 2), the box and rng checked; X on the unit box (:mod:`egmlib.peers.normalise`:
    a new array unless the box is [0, 1] and every entry lies in it), and sum_i (t_i - 1/2) of the
    unit rows t_i (CoinPress's first step reads it).  One chunked pass over X gives its finiteness,
    the unit rows and that sum."""
    X = _v.check_data_matrix("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    rng = _v.check_rng("rng", rng)
    box = normalise.unit_box(lower=lower, upper=upper)
    if X.dtype != np.float64:
        X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    unit = (box.lower, box.upper) == (0.0, 1.0)
    T = None if unit else np.empty((n, d))
    low, high, finite = math.inf, -math.inf, True
    step = clipping.chunk_rows(d)
    buf = np.empty((min(step, n), d))
    total = np.zeros(d)
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, n, step):
            block = X[a:a + step]
            lo_b, hi_b = float(block.min()), float(block.max())
            finite = finite and math.isfinite(lo_b) and math.isfinite(hi_b)
            low, high = min(low, lo_b), max(high, hi_b)
            if T is not None:  # the public map of the box onto [0, 1], one chunk at a time
                block = T[a:a + step]
                block[...] = normalise._to_unit(X[a:a + step], box.lower, box.width)
            B = buf[:block.shape[0]]
            np.subtract(block, 0.5, out=B)
            total += B.sum(axis=0)
    if not finite:
        _v.check_finite_data("X", X)  # raises, naming the first entry that is not finite
    if T is not None:
        return T, box, rng, total
    if low >= 0.0 and high <= 1.0:
        return X, box, rng, total
    X = np.clip(X, 0.0, 1.0)
    total = np.zeros(d)
    for a in range(0, n, step):
        total += (X[a:a + step] - 0.5).sum(axis=0)
    return X, box, rng, total


def _to_caller(r: RobustResult, box: normalise.UnitBox) -> RobustResult:
    """A result computed on the unit box in the caller's units (post-processing): points by
    ``box.from_unit``, lengths (scales, noise, IOME's radius, predicted errors) times the width; the
    radii of the other paths are in their transformed spaces on the unit box, as
    :func:`egmlib.peers.arms` reports them."""
    if (box.lower, box.upper) == (0.0, 1.0):
        return r
    w = box.width
    C = r.C * w if r.path in _IOME else r.C
    predicted = None if r.predicted is None else PathPrediction(
        errors=MappingProxyType({k: v * w for k, v in r.predicted.errors.items()}), mismatch=r.predicted.mismatch)
    return dataclasses.replace(
        r, estimate=box.from_unit(r.estimate), centre=box.from_unit(r.centre), C=float(C),
        sigma=None if r.sigma is None else box.length_from_unit(r.sigma),
        noise_std=box.length_from_unit(r.noise_std), predicted=predicted)


def _check_path(path: Any) -> Path | None:
    if path is None:
        return None
    if not isinstance(path, str):
        raise TypeError(f"path must be None or a str, got path of type {type(path).__name__}")
    if path not in PATHS:
        raise ValueError(f"path must be None or one of {list(PATHS)}, got path={path!r}")
    return path


def algorithm3_robust(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
                      p_clip: float | None = None, path: str | None = None,
                      scales_first: bool = False) -> RobustResult:
    r"""ESM: the book's private mean of the rows of ``X``, :math:`\rho`-zCDP in total.

    The public stage (:func:`scales_resolvable`) releases IOME with the whole budget where the
    scales could not be resolved; otherwise the scales are bought
    (:func:`egmlib.peers.scales.paired_scales`, ``SHARES["scale"]``) and the path with the
    smallest predicted error (:func:`predict_paths`) runs with the rest (module docstring).

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate.
    rng : numpy.random.Generator
    p_clip : float in (0, 1), optional
        Tail probability of the ``algorithm3`` path's model radius; default 1/n (the report's
        Section 4).
    path : {None, "iome", "centred-iome", "algorithm3", "plan"}, default None
        None lets ESM choose; a name forces that path, for the calibration and the privacy
        tests of each path.  ``"centred-iome"`` forces the IOME path with a coarse centre as ESM
        runs it: IOME around the released centre where that centre lies out of reach of IOME
        around the box's centre, else IOME around the box's centre (the result's ``path`` then
        reads ``"iome"``).
    scales_first : bool, default False
        With a forced IOME path: run the scale step first and IOME with the rest, as when the
        scale stage chooses IOME (default: IOME with the whole budget, as the public stage).

    Returns
    -------
    RobustResult

    Examples
    --------
    >>> rng = np.random.default_rng(11)
    >>> X = 5.0 + np.array([4.0, 2.0, 1.0, 0.5]) * rng.standard_normal((20000, 4))
    >>> r = algorithm3_robust(X, rho=1.0, lower=-100.0, upper=100.0, rng=rng)
    >>> r.path, bool(np.linalg.norm(r.estimate - 5.0) < 0.15)
    ('plan', True)
    >>> round(sum(r.budget.parts.values()), 12)
    1.0
    >>> algorithm3_robust(X[:40], rho=0.25, lower=-100.0, upper=100.0, rng=rng).path
    'iome'
    """
    X, box, rng, colsum = _check(X, lower, upper, rng)
    n, d = X.shape
    p = 1.0 / n if p_clip is None else _v.check_probability("p_clip", p_clip)
    forced = _check_path(path)
    scales_first = _v.check_bool("scales_first", scales_first)
    rho = _pe._check_rho("rho", rho)
    _budget.split_budget(rho, shares=SHARES)  # a rho whose shares underflow names rho
    return _to_caller(_esm(X, rho, 0.0, 1.0, rng, p, forced, scales_first, colsum, box.lower / box.width), box)


def _esm(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator, p: float,
         forced: Path | None, scales_first: bool = False, colsum: FloatArray | None = None,
         offset: float = 0.0) -> RobustResult:
    n, d = X.shape
    if (forced in _IOME and not scales_first) or (forced is None and not _resolvable(n, d, rho)):
        coarse = _coarse_centre(n, d, rho, lower, upper)
        if forced == "centred-iome":
            coarse = coarse or "anchor"
        elif forced == "iome":
            coarse = None
        return _iome_path(X, rho, lower, upper, rng, coarse=coarse, offset=offset, spent={})
    scale_rho = SHARES["scale"] * rho
    scales = _paired_scales(X, scale_rho, lower, upper, rng, _scales_floor())
    predicted = _predict(n, rho, lower, upper, scales)
    chosen = forced if forced is not None else predicted.best
    if chosen in _IOME:
        coarse = _coarse_centre(n, d, rho - scale_rho, lower, upper)
        coarse = (coarse or "anchor") if chosen == "centred-iome" else None
        r = _iome_path(X, rho - scale_rho, lower, upper, rng, coarse=coarse, offset=offset,
                       spent={"scale": scale_rho})
    elif chosen == "plan":
        r = _plan_path(X, rho, lower, upper, rng, scales.sigma_hat, colsum)
    else:
        r = _algorithm3_path(X, rho, lower, upper, rng, scales.sigma_hat, p, colsum)
    return RobustResult(**{**r.__dict__, "predicted": predicted})


_IOME = ("iome", "centred-iome")


def whole_box_tracks(n: int, *, d: int, rho: float) -> bool:
    r"""Whether ESM's IOME at budget ``rho`` searches its centre over the whole box (public).

    IOME as PLAN's experiments run it searches each rotated coordinate of the mean in its box
    divided by :math:`\sqrt N` (:mod:`egmlib.peers.iome`), which holds only the means whose rotation
    lies near 0 (the box's centre where the box is symmetric about 0).  Every rotated coordinate of
    a point of the box lies within :math:`\pm w\sqrt d/2` of the rotated centre (:math:`\|x - c\|
    \le w\sqrt d/2`), so IOME on the rows :math:`x_i - c` in the box :math:`[-W, W]^d`, :math:`W =
    \tfrac12 w\sqrt{dN}`, reaches any mean, with the same bisection steps and the same noise on each
    count.  Its price: the steps whose interval is wider than the data are more, and a step whose
    rows all lie on one side of its midpoint turns the wrong way with probability :math:`q =
    \Phi(-n/(2\sigma_c))`, :math:`\sigma_c = \sqrt{NT/(2\rho_c)}` (:math:`\rho_c` IOME's centre
    share of ``rho``).  ESM searches the whole box where the median run of its :math:`NT` steps has
    no such turn (:math:`NTq < \ln 2`), and the box as PLAN's experiments do otherwise.  A function
    of :math:`n, d, \rho` only: the choice costs no budget (the book's Lemma 9.H).

    Examples
    --------
    >>> whole_box_tracks(1797, d=64, rho=1 / 16), whole_box_tracks(200, d=8, rho=1 / 8)
    (True, False)
    """
    n = _pe._check_size("n", n)
    d = _pe._check_size("d", d)
    rho = _pe._check_rho("rho", rho)
    return _whole_box_tracks(n, d, rho)


def _whole_box_tracks(n: int, d: int, rho: float) -> bool:
    N = _pe._padded(d)
    q = _pe._wrong_turn(n, _pe._count_noise(N, IOME_SHARES["centre"] * rho, _pe.IOME_STEPS))
    return N * _pe.IOME_STEPS * q < math.log(2.0)


def _whole_box_half(d: int, lower: float, upper: float) -> float:
    """W = w sqrt(d N) / 2: IOME in [-W, W]^d searches every rotated coordinate of the box about its centre."""
    return 0.5 * (upper - lower) * math.sqrt(d * _pe._padded(d))


def _iome_box(n: int, d: int, rho: float, lower: float, upper: float) -> tuple[float, float]:
    """The box ESM's IOME at budget ``rho`` searches, about the box's centre: [-W, W] where
    :func:`whole_box_tracks`, else the caller's box [lower, upper] (public)."""
    if _whole_box_tracks(n, d, rho):
        W = _whole_box_half(d, lower, upper)
        return -W, W
    return lower, upper


def _anchor_pays(n: int, d: int, rho: float, lower: float, upper: float) -> bool:
    N = 1 << (d - 1).bit_length()
    sd = (upper - lower) / (n * math.sqrt(2.0 * IOME_ANCHOR_SHARE * rho))
    return sd <= 0.25 * (upper - lower) / math.sqrt(N)


def _coarse_centre(n: int, d: int, rho: float, lower: float, upper: float) -> str | None:
    """The coarse centre an IOME path at budget ``rho`` uses: "anchor" or None (public)."""
    if not _whole_box_tracks(n, d, rho) and _anchor_pays(n, d, rho, lower, upper):
        return "anchor"
    return None


def _coarse_share(kind: str | None) -> float:
    return {"anchor": IOME_ANCHOR_SHARE, None: 0.0}[kind]


def _anchor(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator) -> float:
    r"""The rows' private grand mean :math:`\hat a`, a scalar: the anchor of an IOME path.

    The row sums :math:`r_i = \sum_j (x_{ij} - c)` about the box's centre :math:`c` lie in
    :math:`[-dw/2, dw/2]`; their clipped sum at :math:`C = dw/2` (a clip that rounding alone can
    trigger) has sensitivity :func:`egmlib.clipping.sum_sensitivity` of :math:`C`, and Gaussian
    noise for it makes :math:`\hat a = c + (\sum_i r_i + \eta)/(nd)`, projected on the box,
    ``rho``-zCDP.  Chunked: no copy of ``X``.
    """
    n, d = X.shape
    c = 0.5 * (lower + upper)
    C = 0.5 * d * (upper - lower)
    total = _anchor_sum(X, lower, upper)
    s = _budget.gaussian_noise_std(rho, sensitivity=clipping.sum_sensitivity(C, n=n, d=1))
    return float(np.clip(c + (total + s * float(rng.standard_normal())) / (n * d), lower, upper))


def _anchor_sum(X: np.ndarray, lower: float, upper: float) -> float:
    """The anchor's statistic before noise: the rows' sums about the box's centre, clipped at d w / 2."""
    n, d = X.shape
    c = 0.5 * (lower + upper)
    sums = np.empty((n, 1))
    step = clipping.chunk_rows(d)
    for a in range(0, n, step):
        sums[a:a + step, 0] = (X[a:a + step] - c).sum(axis=1)
    return float(clipping.clipped_sum(sums, C=0.5 * d * (upper - lower)).total[0])


def _anchor_noise(n: int, d: int, rho: float, lower: float, upper: float) -> float:
    r"""The sd of the anchor's noise, :math:`\sigma_a` (public): :func:`_anchor`'s Gaussian sd over :math:`nd`."""
    C = 0.5 * d * (upper - lower)
    return _budget.gaussian_noise_std(rho, sensitivity=clipping.sum_sensitivity(C, n=n, d=1)) / (n * d)


def _out_of_reach(centre: FloatArray, R: RandomizedHadamard, lower: float, upper: float, noise: float) -> bool:
    r"""Whether IOME around the box's centre, with the rotation ``R``, cannot reach ``centre``.

    IOME searches each rotated coordinate of the mean in :math:`[l/\sqrt N, u/\sqrt N]`
    (:mod:`egmlib.peers.iome`).  The released centre :math:`c` is out of its reach when some rotated
    coordinate :math:`(Rc)_k` lies outside that interval by more than twice its noise's sd,
    :math:`2\sigma_a|(R\mathbf 1)_k|` for the anchor (:math:`\sigma_a` = ``noise``, the same noise in
    every coordinate).  A function of the released centre, the public rotation and
    the box: post-processing."""
    root = math.sqrt(R.padded_dim)
    rotated = R._rotate(centre[None, :])[0]
    margin = 2.0 * noise * np.abs(R._rotate(np.ones((1, centre.shape[0])))[0])
    outside = np.maximum(lower / root - rotated, rotated - upper / root)
    return bool(np.any(outside > margin))


def reach_test_runs(n: int, *, d: int, rho: float) -> bool:
    r"""Whether an IOME path of ESM with IOME's budget ``rho`` tests its reach first (public).

    Where IOME does not search the whole box (:func:`whole_box_tracks` is False), it searches each
    rotated coordinate of the mean in an interval about its box's centre, the cube
    :math:`Q = [l/\sqrt N, u/\sqrt N]^N`, and clips the rows to a radius of at most
    :math:`h = (u - l)/2` about the centre it finds there: a mean farther than :math:`h` from
    :math:`Q` is out of its reach (a mean at a corner of the box, say).  The *reach test* releases,
    with ``REACH_SHARE`` of ``rho``, that distance for the rows' mean plus Gaussian noise for its
    sensitivity; IOME searches the whole box instead where the noisy distance exceeds
    :math:`h`.  It runs where its noise sd, :math:`\sqrt d/(n\sqrt{2\rho_r})` on the unit box
    (:math:`\rho_r` its share), is at most :math:`h/\mathrm{REACH\_Z}`.  A function of :math:`n, d,
    \rho` only (the book's Lemma 9.H).

    Examples
    --------
    >>> reach_test_runs(500, d=16, rho=1 / 16), reach_test_runs(300, d=16, rho=1 / 16)
    (True, False)
    >>> reach_test_runs(10_000, d=64, rho=1 / 16)   # the whole box tracks: nothing to test
    False
    """
    n = _pe._check_size("n", n)
    d = _pe._check_size("d", d)
    rho = _pe._check_rho("rho", rho)
    return _reach_test_runs(n, d, rho)


def _reach_test_runs(n: int, d: int, rho: float) -> bool:
    if _whole_box_tracks(n, d, rho):
        return False
    sd = _reach_sensitivity(n, d, -0.5, 0.5) / math.sqrt(2.0 * REACH_SHARE * rho)
    return sd <= 0.5 / REACH_Z


def _reach_sensitivity(n: int, d: int, lower: float, upper: float) -> float:
    r"""The sensitivity of :func:`_reach_gap` as computed, for rows in the box :math:`[l, u]^d`.

    On paper :math:`\Delta_S/n`, :math:`\Delta_S` = :func:`egmlib.clipping.sum_sensitivity` of the
    clipped sum at :math:`C = h\sqrt d` in :math:`N` coordinates (the distance to a fixed cube is
    1-Lipschitz in the mean :math:`S/n`), plus twice a bound on the rounding of the distance computed
    from :math:`S`: the division, the subtraction and the norm, each within :math:`(N + 4)u` relatively
    of terms at most :math:`\sqrt N(2B + A)`, :math:`B = \Delta_S/2 \ge |S_k|/n`,
    :math:`A = (|l| + |u|)/\sqrt N + |c|\sqrt d` bounding the cube's shifted faces."""
    N = _pe._padded(d)
    h, c = 0.5 * (upper - lower), 0.5 * (lower + upper)
    delta_s = clipping.sum_sensitivity(h * math.sqrt(d), n=n, d=N)
    B = 0.5 * delta_s
    A = (abs(lower) + abs(upper)) / math.sqrt(N) + abs(c) * math.sqrt(d)
    rounding = 1.01 * (N + 4) * math.sqrt(N) * clipping._U * (2.0 * B + A)
    return delta_s / n * (1.0 + 2.0 * clipping._U) + 2.0 * rounding


def _reach_gap(rows: np.ndarray, R: RandomizedHadamard, lower: float, upper: float) -> float:
    r"""The reach test's statistic: the distance from the rows' rotated mean to IOME's search cube.

    The rows :math:`y_i`, clamped to IOME's box :math:`[l, u]^d` as IOME clamps them, centred at the
    box's centre :math:`c` and rotated, :math:`z_i = R(y_i - c)`, have norms at most
    :math:`h\sqrt d`; their clipped sum :math:`S` at that radius (:func:`egmlib.clipping.clipped_sum`,
    a clip only rounding can trigger) gives the mean :math:`S/n` of the rotations less :math:`cR\mathbf 1`,
    and the statistic is :math:`\|S/n - \mathrm{clip}(S/n, Q - cR\mathbf 1)\|` for IOME's cube
    :math:`Q = [l/\sqrt N, u/\sqrt N]^N`.  Its sensitivity is :func:`_reach_sensitivity`."""
    n, d = rows.shape
    root = math.sqrt(R.padded_dim)
    h, c = 0.5 * (upper - lower), 0.5 * (lower + upper)
    Z = R._rotate(clipping.clamp_to_box(rows, lower=lower, upper=upper) - c)
    m = clipping.clipped_sum(Z, C=h * math.sqrt(d), finite=True).total / n
    shift = c * R._rotate(np.ones((1, d)))[0]
    return float(np.linalg.norm(m - np.clip(m, lower / root - shift, upper / root - shift)))


def _reach_test(rows: np.ndarray, R: RandomizedHadamard, lower: float, upper: float, rho: float,
                rng: np.random.Generator) -> float:
    """The reach test's release, rho-zCDP: :func:`_reach_gap` plus Gaussian noise for its sensitivity."""
    sd = _budget.gaussian_noise_std(rho, sensitivity=_reach_sensitivity(rows.shape[0], rows.shape[1], lower, upper))
    return _reach_gap(rows, R, lower, upper) + sd * float(rng.standard_normal())


def _before_iome(n: int, d: int, rho: float, coarse: str | None) -> tuple[float, float | None, float]:
    """What an IOME path of budget ``rho`` spends before IOME (public): the coarse centre's budget, the
    reach test's (None where it does not run), and what is left for IOME."""
    rest = (1.0 - _coarse_share(coarse)) * rho
    test = REACH_SHARE * rest if _reach_test_runs(n, d, rest) else None
    return _coarse_share(coarse) * rho, test, rest if test is None else (1.0 - REACH_SHARE) * rest


def iome_shares(n: int, *, rho: float, rho_iome: float | None = None) -> Mapping[str, float]:
    r"""The split of IOME's budget ``rho_iome`` on an IOME path of ESM with budget ``rho`` (public).

    IOME as PLAN's experiments run it (:data:`egmlib.peers.iome.IOME_SHARES`) gives its radius search
    :math:`\rho_t = 0.0075\rho` and clips, besides the rows its noise allows, a margin of
    :math:`2\sigma_t` rows, :math:`\sigma_t = \sqrt{T/(2\rho_t)}` the sd of each of the search's
    :math:`T` noisy counts (:func:`egmlib.peers.iome.iome_clip_count`): 73 rows at :math:`\rho = 1`,
    a fifth of a table of 400 rows and all of one of 70.  ESM's IOME gives the radius search

    .. math:: \rho_t = \max\bigl(0.0075\rho,\ \min(2T/(fn)^2,\ c\rho)\bigr),

    :math:`f` = ``IOME_RADIUS_ROWS`` and :math:`c` = ``IOME_RADIUS_CAP``: the margin is then at most
    :math:`fn` rows unless that would cost more than :math:`c` of the path's budget.  The centre's
    search gets :math:`0.25\rho`, as IOME alone has with the path's whole budget, and the noise the
    rest of ``rho_iome``: what the path spends before IOME (a coarse centre, the reach test) is paid
    from IOME's noise, never from its searches, whose noisy counts decide each step where rows are
    few, while the noise's sd grows only as :math:`\rho^{-1/2}`.  ``IOME_SHARES`` itself where nothing
    was paid before IOME and the margin is already below :math:`fn`.  A function of :math:`n` and the
    budgets only, so the split costs nothing (the book's Lemma 9.H).

    Examples
    --------
    >>> iome_shares(100_000, rho=1.0) is IOME_SHARES
    True
    >>> {k: round(v, 4) for k, v in iome_shares(200, rho=1.0).items()}
    {'centre': 0.25, 'threshold': 0.025, 'noise': 0.725}
    """
    n = _pe._check_size("n", n)
    rho = _pe._check_rho("rho", rho)
    rho_iome = rho if rho_iome is None else _pe._check_rho("rho_iome", rho_iome)
    if rho_iome > rho:
        raise ValueError(f"rho_iome must be at most rho (IOME gets what the path leaves), got rho_iome={rho_iome!r} "
                         f"> rho={rho!r}")
    shares = _iome_shares(n, rho, rho_iome)
    if not shares["noise"] > 0.0:
        raise ValueError(f"rho_iome must exceed what IOME's searches take of rho ({1.0 - shares['noise']:.3g} of "
                         f"rho_iome), got rho_iome={rho_iome!r} with rho={rho!r}")
    return shares


def _iome_shares(n: int, rho: float, rho_iome: float) -> Mapping[str, float]:
    centre = IOME_SHARES["centre"] * rho
    plain = IOME_SHARES["threshold"] * rho
    wanted = 2.0 * _pe.IOME_STEPS / (IOME_RADIUS_ROWS * n) ** 2
    threshold = max(plain, min(wanted, IOME_RADIUS_CAP * rho))
    if rho_iome == rho and threshold == plain:
        return IOME_SHARES
    return MappingProxyType({"centre": centre / rho_iome, "threshold": threshold / rho_iome,
                             "noise": 1.0 - (centre + threshold) / rho_iome})


def _iome_path(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator, *,
               coarse: str | None, offset: float, spent: dict[str, float]) -> RobustResult:
    r"""IOME alone (``iome``), or around the anchor (``centred-iome``), with budget ``rho``.

    IOME alone is :func:`egmlib.peers.iome.iome_mean` (Huang, Liang and Yi 2021, as PLAN's
    experiments run it) on the rows :math:`x_i - c` about the box's centre :math:`c` in the box
    :math:`[-W, W]^d`, :math:`W = \tfrac12 w\sqrt{dN}`, whose search interval holds every rotated
    coordinate of the box, with the radius searched up to the box's diameter :math:`w\sqrt d`, where
    :func:`whole_box_tracks`; elsewhere in the caller's box: on the unit rows shifted by ``offset``
    (the caller's :math:`l/w`), in the box :math:`[l/w, u/w]`, which is IOME on the caller's rows
    scaled by :math:`1/w`.  Around the anchor :math:`c` (``coarse == "anchor"``,
    ``IOME_ANCHOR_SHARE`` of ``rho``, :func:`_anchor`): IOME's rotation is drawn first, then the
    anchor, then IOME with the rest on the rows :math:`x_i - c` clamped to the box
    :math:`[-w/2, w/2]` (IOME clamps its rows to its box) where the anchor lies out of reach of IOME in
    the caller's box (:func:`_out_of_reach`), else IOME in the caller's box.  Where IOME would not
    search the whole box and :func:`reach_test_runs`, the rotation is drawn first and the *reach
    test* (:func:`_reach_test`, ``REACH_SHARE`` of IOME's budget) releases the distance from the rows'
    rotated mean to the search cube of the box IOME would search; where it exceeds IOME's reach, half
    that box's width, IOME searches the whole box with the rest instead.  What the anchor and the test
    spend comes out of IOME's noise, not its searches, and where rows are few IOME's radius search
    gets more than IOME alone gives it (:func:`iome_shares`).  Adding the centre back and
    projecting on the box are post-processing.  ``spent`` names the budget already spent (the
    scales), for the record.
    """
    n, d = X.shape
    total = rho + sum(spent.values())
    anchor, tested, rho_iome = _before_iome(n, d, rho, coarse)
    test = tested is not None
    own = {"coarse centre": anchor} if coarse else {}
    if tested is not None:
        own["reach test"] = tested
    own["iome"] = rho_iome
    budget = _budget.split_budget(total, shares={k: v / total for k, v in {**spent, **own}.items()})
    shares = _iome_shares(n, rho, budget["iome"])
    centred = False
    whole = coarse is None and _whole_box_tracks(n, d, budget["iome"])
    R: RandomizedHadamard | None = None  # drawn inside IOME where nothing needs it before
    if coarse is not None or test:
        R = rotation = random_hadamard(d, rng=rng)  # IOME's rotation, drawn before any look at the data
        if coarse is not None:
            centre = np.full(d, _anchor(X, budget["coarse centre"], lower, upper, rng))
            noise = _anchor_noise(n, d, budget["coarse centre"], lower, upper)
            centred = _out_of_reach(centre + offset, rotation, lower + offset, upper + offset, noise)
        if test:  # can IOME in the box it would search reach the rows' mean?
            h = 0.5 * (upper - lower)
            rows, lo, hi = (X - centre, -h, h) if centred else (X + offset, lower + offset, upper + offset)
            whole = _reach_test(rows, rotation, lo, hi, budget["reach test"], rng) > 0.5 * (hi - lo)
            centred = centred and not whole
    if whole:  # IOME over the whole box, about its centre c
        c, W = 0.5 * (lower + upper), _whole_box_half(d, lower, upper)
        r = iome_mean(X - c, rho=budget["iome"], lower=-W, upper=W, rng=rng, shares=shares,
                      radius_top=(upper - lower) * math.sqrt(d))  # the box's diameter
        centre, estimate = np.full(d, c), r.estimate + c
    elif centred:
        h = 0.5 * (upper - lower)
        r = iome_mean(X - centre, rho=budget["iome"], lower=-h, upper=h, rng=rng, rotation=R,
                      shares=shares)  # IOME clamps
        estimate = centre + r.estimate
    else:  # IOME in the caller's box, as PLAN's experiments run it
        r = iome_mean(X + offset, rho=budget["iome"], lower=lower + offset, upper=upper + offset, rng=rng,
                      rotation=R, shares=shares)
        estimate = r.estimate - offset
        if coarse is None:
            centre = np.full(d, offset)
    estimate = np.clip(estimate, lower, upper)
    _v.check_finite_result(estimate, what="the estimate", inputs="X, lower or upper")
    return RobustResult(estimate=estimate, centre=centre, sigma=None,
                        C=r.C, radius=None, noise_std=np.full(d, r.noise_std), n_clipped=r.n_clipped,
                        budget=budget, path="centred-iome" if centred else "iome")


def _algorithm3_path(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator,
                     sigma: FloatArray, p: float, colsum: FloatArray | None) -> RobustResult:
    n, d = X.shape
    budget = _budget.split_budget(rho, shares=SHARES)
    centre = _private_centre(X, sigma, budget["centre"], lower, upper, rng, colsum)
    b = 1.0 / np.sqrt(sigma * float(np.sum(sigma)))
    norms = clipping.transformed_norms(X, mu_hat=centre, b=b, finite=True)  # X checked at the entry
    C0 = _model_radius(sigma, p)
    C_max = (upper - lower) * float(np.linalg.norm(b))
    choice = _select_radius(norms, C0, C_max, budget["radius"], d, budget["noise"], rng, RADIUS_GRID)
    C = choice.C
    clipped = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b, norms=norms, finite=True)
    s = _budget.gaussian_noise_std(budget["noise"], sensitivity=clipping.sum_sensitivity(C, n=n, d=d))
    noisy = (clipped.total + s * rng.standard_normal(d)) / n
    estimate = np.clip(centre + noisy / b, lower, upper)  # the mean lies in the box: post-processing
    _v.check_finite_result(estimate, what="the estimate", inputs="X, lower or upper")
    return RobustResult(estimate=estimate, centre=centre, sigma=sigma, C=C, radius=choice,
                        noise_std=s / (n * b), n_clipped=clipped.n_clipped, budget=budget, path="algorithm3")


def _plan_path(X: np.ndarray, rho: float, lower: float, upper: float, rng: np.random.Generator,
               sigma: FloatArray, colsum: FloatArray | None, beta: float = 0.1) -> RobustResult:
    n, d = X.shape
    budget = _budget.split_budget(rho, shares=PLAN_LAST_STEP_SHARES)
    centre = _private_centre(X, sigma, budget["centre"], lower, upper, rng, colsum)
    Delta = _plan.plan_scaling(sigma)
    k = _plan._clip_fraction(n, budget["threshold"], lower, upper, beta)
    last = _budget.ZCDPBudget(total=budget["threshold"] + budget["noise"],
                              parts={"threshold": budget["threshold"], "noise": budget["noise"]})
    r = _plan._clipped_release(X, centre=centre, sigma_hat=sigma, Delta=Delta,
                               norm_upper=_plan._norm_bound(sigma, beta), k=k, budget=last, rng=rng)
    estimate = np.clip(r.estimate, lower, upper)
    return RobustResult(estimate=estimate, centre=centre, sigma=sigma, C=r.C, radius=None,
                        noise_std=r.noise_std * np.sqrt(r.Delta) / n, n_clipped=r.n_clipped, budget=budget,
                        path="plan")


def plan_last_step_private_inputs(X: Any, *, rho: float, lower: float, upper: float,
                                  rng: np.random.Generator) -> RobustResult:
    r"""PLAN's last step on ESM's private scales and centre: ESM's ``plan`` path, always; rho-zCDP.

    The scale step of ESM (:func:`egmlib.peers.scales.paired_scales`, ``SHARES["scale"]``), its
    CoinPress centre (``PLAN_LAST_STEP_SHARES["centre"]``), then PLAN's threshold and noise
    (Aumuller et al. 2024; :func:`egmlib.peers.plan.plan_oracle_mean`'s last step with the private
    :math:`\hat\mu, \hat\sigma`): scaling :math:`\Delta` = :func:`~egmlib.peers.plan.plan_scaling`
    of :math:`\hat\sigma`, an exponential-mechanism quantile at :math:`1-k` of the scaled norms
    (sensitivity 1), Gaussian noise for sensitivity :math:`2C`.  Drawn from the same generator
    as ESM, it sees the very scales and centre ESM's ``plan`` and ``algorithm3`` paths see, so
    against them only the last step differs.

    Parameters
    ----------
    X, rho, lower, upper, rng : as in :func:`algorithm3_robust`

    Returns
    -------
    RobustResult
        ``path`` is "plan"; ``predicted`` holds ESM's predictions for the same scales.
    """
    X, box, rng, colsum = _check(X, lower, upper, rng)
    rho = _pe._check_rho("rho", rho)
    _budget.split_budget(rho, shares=PLAN_LAST_STEP_SHARES)
    return _to_caller(_esm(X, rho, 0.0, 1.0, rng, 1.0 / X.shape[0], "plan", colsum=colsum,
                           offset=box.lower / box.width), box)
