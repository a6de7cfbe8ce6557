r"""Algorithm 3 under rho-zCDP, alone and end to end with a private centre and scales.

The report's Algorithm 3 (:func:`egmlib.mechanisms.algorithm3`) takes the
standard deviations :math:`\sigma` and the centre :math:`\hat\mu` as free public inputs
(its Limitation 6.1) and calibrates its noise to :math:`(\varepsilon,\delta)` with the
analytic Gaussian mechanism (Theorem 2).  Its peers account in zCDP.  This module puts
Algorithm 3 on their footing.

:math:`\rho`-zCDP calibration (:func:`algorithm3_zcdp`).  With :math:`\sigma` and
:math:`\hat\mu` public, the only private step of Algorithm 3 is one Gaussian mechanism
on the clipped transformed sum :math:`T`, whose :math:`\ell_2` sensitivity is
:math:`2C` (report, Section 4).  Noise :math:`\mathcal N(0, s^2 I)` with

.. math::

    s = \frac{2C}{\sqrt{2\rho}}

makes it :math:`\rho`-zCDP (Bun and Steinke 2016, Prop. 1.6).  The same release is
:math:`(\varepsilon,\delta)`-DP exactly for
:math:`\varepsilon = ` :func:`egmlib.peers.budget.gaussian_epsilon_exact` (the Balle-Wang
profile, the report's eq. (2)), and the analytic calibration at that
:math:`(\varepsilon,\delta)` returns the same :math:`s` -- the result records both
(``noise_std`` and ``analytic_noise_std``), which agree to the root finder's precision.
The clipped sum itself comes from :func:`egmlib.mechanisms.algorithm3` with
``noise=False``; the radius is the report's, :math:`p_C = 1/n` by default.

End to end.  Two pipelines pay for the free inputs:

* :func:`algorithm3_private_centre` -- :math:`\sigma` known, :math:`\mu` unknown:
  :math:`\hat\mu` is CoinPress on the data whitened by :math:`\sigma`
  (:func:`egmlib.peers.coinpress.coinpress_known_scales`, budget :math:`\rho/4`),
  projected onto the public box (post-processing), then Algorithm 3 with :math:`3\rho/4`.
* :func:`algorithm3_private` -- nothing known: :math:`\hat\sigma` from
  :func:`egmlib.peers.scales.coinpress_log_scales` (:math:`\rho/8`), :math:`\hat\mu` by
  CoinPress whitened by :math:`\hat\sigma` (:math:`\rho/8`), then Algorithm 3 with
  :math:`\hat\sigma` in place of :math:`\sigma` and :math:`3\rho/4`: a quarter for the
  inputs, as PLAN spends on its centre and scales.

Why not PLAN's own estimators?  Algorithm 3 clips at a model quantile of
:math:`\|(x-\hat\mu)\odot b\|`, so an error in :math:`\hat\mu` or an underestimated
:math:`\hat\sigma_j` moves rows beyond :math:`C` wholesale, where PLAN's empirical
threshold adapts.  PLAN's coordinate-wise exponential-mechanism medians
(:mod:`egmlib.peers.quantiles`) on its benchmark universes put whole coordinates at
the universe's edge once :math:`\rho/d` is small (see :mod:`egmlib.peers.scales`);
CoinPress shrinks its prior ball step by step and has no such failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import special

from egmlib import calibration, clipping, mechanisms
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers.coinpress import coinpress_known_scales
from egmlib.peers.scales import coinpress_log_scales
from egmlib.validation import FloatArray

__all__ = [
    "PRIVATE_CENTRE_SHARES",
    "PRIVATE_SHARES",
    "REPORT_DELTA",
    "PRIVATE_CENTRE_SHARES",
    "PRIVATE_SHARES",
    "Algorithm3Result",
    "algorithm3_private",
    "algorithm3_private_centre",
    "algorithm3_zcdp",
]

#: Default delta at which the exact (epsilon, delta) of the noise step is reported.
REPORT_DELTA = 1e-6

#: The default budget split of :func:`algorithm3_private_centre` (centre, then noise) and
#: of :func:`algorithm3_private` (scales, centre, noise), as shares of rho; the functions'
#: ``centre_share`` and ``scale_share`` defaults (tests check that they agree).
PRIVATE_CENTRE_SHARES = MappingProxyType({"centre": 0.25, "noise": 0.75})
PRIVATE_SHARES = MappingProxyType({"scale": 0.125, "centre": 0.125, "noise": 0.75})

_PER_COLUMN = "one entry per column of X"


@dataclass(frozen=True)
class Algorithm3Result:
    """Output of the Algorithm 3 estimators (estimates of the **mean**: the sum over n).

    ``estimate`` is the release; ``centre`` and ``sigma`` are the inputs used (private
    releases themselves in the end-to-end pipelines).  ``n_clipped`` is a diagnostic
    of the data only.
    """

    estimate: FloatArray  #: (d,) private estimate of the mean
    centre: FloatArray  #: (d,) mu_hat used
    sigma: FloatArray  #: (d,) standard deviations used
    C: float  #: clipping radius in the transformed space
    p_clip: float
    noise_std: FloatArray  #: (d,) std of the noise on the sum, 2C/(sqrt(2 rho_noise) b_j)
    #: (d,) Theorem 2's std at the noise step's exact eps and delta, which is noise_std when
    #: eps > 0, and smaller at eps = 0, where the zCDP noise is more than (0, delta)-DP needs
    analytic_noise_std: FloatArray
    eps: float  #: exact epsilon of the noise step at delta (Balle-Wang profile; 0 if delta allows)
    delta: float
    n_clipped: int
    budget: _budget.ZCDPBudget


def _alg3(X: np.ndarray, *, sigma: FloatArray, mu_hat: FloatArray, rho_noise: float,
          rng: np.random.Generator, p_clip: float | None, delta: float,
          budget: _budget.ZCDPBudget) -> Algorithm3Result:
    eps = _budget.gaussian_epsilon_exact(rho_noise, delta=delta)
    r = mechanisms.algorithm3(X, sigma=sigma, mu_hat=mu_hat, rng=None, p_clip=p_clip, noise=False)
    n = X.shape[0]
    active = sigma > 0
    s = _budget.gaussian_noise_std(rho_noise, sensitivity=r.sensitivity)  # 2C and the rounding bound
    std = np.zeros_like(sigma)
    std[active] = s / r.b[active]
    analytic = np.zeros_like(sigma)
    analytic[active] = _analytic_std(eps, delta, r.sensitivity) / r.b[active]
    noise = np.zeros_like(sigma)
    noise[active] = std[active] * rng.standard_normal(int(active.sum()))
    estimate = (r.clipped_sum + noise) / n
    _v.check_finite_result(estimate, what="the estimate", inputs="X or sigma")
    return Algorithm3Result(
        estimate=estimate, centre=np.array(mu_hat, dtype=float),
        sigma=np.array(sigma, dtype=float), C=r.C, p_clip=r.p_clip, noise_std=std,
        analytic_noise_std=analytic, eps=eps, delta=delta,
        n_clipped=r.n_clipped, budget=budget)


def _analytic_std(eps: float, delta: float, sensitivity: float) -> float:
    """Theorem 2's noise (Balle and Wang 2018, Thm. 8) at (eps, delta) for ``sensitivity``.

    At eps = 0, which :func:`egmlib.peers.budget.gaussian_epsilon_exact` returns when the
    zCDP noise already gives (0, delta)-DP, the profile is 2 Phi(Delta / (2 s)) - 1 and
    the smallest s with profile delta is Delta / (2 Phi^-1((1 + delta) / 2)).
    """
    if eps > 0.0:
        return float(calibration.sigma_opt(eps=eps, delta=delta, sensitivity=sensitivity))
    return sensitivity / (2.0 * float(special.ndtri(0.5 * (1.0 + delta))))


def _check_parts(budget: _budget.ZCDPBudget, **shares: tuple[str, float]) -> None:
    """ValueError naming the share whose step's rho underflows to 0 (a subnormal share)."""
    for step, (name, share) in shares.items():
        if not budget[step] > 0.0:
            raise ValueError(f"{name} is too small: {name} * rho underflows to 0, got {name}={share!r} "
                             f"and rho={budget.total!r}")


def _centre(X: np.ndarray, *, sigma: FloatArray, rho: float, lower: float, upper: float,
            rng: np.random.Generator) -> FloatArray:
    """CoinPress centre, projected onto the public box (post-processing: mu lies in it)."""
    c = coinpress_known_scales(X, sigma=sigma, rho=rho, lower=lower, upper=upper,
                               rng=rng).estimate
    return np.clip(c, lower, upper)


def algorithm3_zcdp(X: Any, *, sigma: Any, mu_hat: Any, rho: float, rng: np.random.Generator,
                    p_clip: float | None = None, delta: float = REPORT_DELTA) -> Algorithm3Result:
    r"""Algorithm 3 (the report's EGM for Gaussian data) with rho-zCDP noise 2C/sqrt(2 rho).

    Transformation :math:`b_j = 1/\sqrt{\sigma_j\sum_i\sigma_i}` (Lemma 4.1, eq. (7)),
    radius :math:`C` with tail probability ``p_clip`` (default :math:`1/n`), clipped
    sum :math:`T` (sensitivity :math:`2C`) from :func:`egmlib.mechanisms.algorithm3`,
    then :math:`\mathcal N(0, (2C)^2/(2\rho)\,I)` on :math:`T` (Bun and Steinke 2016,
    Prop. 1.6) and back-transformation; returned divided by :math:`n`.

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    sigma : array_like, shape (d,), finite, >= 0, not all 0
        Public standard deviations.
    mu_hat : array_like, shape (d,), finite
        Public centre.
    rho : float, finite and > 0
    rng : numpy.random.Generator
    p_clip : float in (0, 1), optional
        Default 1/n (needs n >= 2).
    delta : float in (0, 1), default ``REPORT_DELTA``
        Where the exact :math:`\varepsilon` of the release is reported (``eps``).

    Returns
    -------
    Algorithm3Result

    Examples
    --------
    >>> rng = np.random.default_rng(9)
    >>> sigma = np.array([4.0, 2.0, 1.0])
    >>> X = 5.0 + sigma * rng.standard_normal((20000, 3))
    >>> r = algorithm3_zcdp(X, sigma=sigma, mu_hat=np.full(3, 5.0), rho=1.0, rng=rng)
    >>> bool(np.linalg.norm(r.estimate - 5.0) < 0.1)
    True
    >>> bool(np.allclose(r.noise_std, r.analytic_noise_std))
    True
    """
    X = _v.check_finite_data("X", X)
    d = X.shape[1]
    sigma = _v.check_nonnegative_vector("sigma", sigma, length=d, of=_PER_COLUMN)
    mu_hat = _v.check_finite_vector("mu_hat", mu_hat, length=d, of=_PER_COLUMN)
    rng = _v.check_rng("rng", rng)
    delta = _v.check_probability("delta", delta)
    budget = _budget.split_budget(rho, shares={"noise": 1.0})
    return _alg3(X, sigma=sigma, mu_hat=mu_hat, rho_noise=budget["noise"], rng=rng,
                 p_clip=p_clip, delta=delta, budget=budget)


def algorithm3_private_centre(X: Any, *, sigma: Any, rho: float, lower: float, upper: float,
                              rng: np.random.Generator, centre_share: float = PRIVATE_CENTRE_SHARES["centre"],
                              p_clip: float | None = None,
                              delta: float = REPORT_DELTA) -> Algorithm3Result:
    r"""Algorithm 3 with :math:`\sigma` known and a private centre, :math:`\rho`-zCDP in total.

    :math:`\hat\mu` = :func:`~egmlib.peers.coinpress.coinpress_known_scales` (Biswas et
    al. 2020) with budget ``centre_share`` :math:`\cdot\rho`, then :func:`algorithm3_zcdp`
    with the rest (composition, Bun and Steinke 2016, Lemma 1.7).

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    sigma : array_like, shape (d,), finite and > 0
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public box containing the mean (CoinPress's prior).
    rng : numpy.random.Generator
    centre_share : float in (0, 1), default 1/4
    p_clip, delta : as in :func:`algorithm3_zcdp`

    Returns
    -------
    Algorithm3Result
    """
    X = _v.check_finite_data("X", X)
    d = X.shape[1]
    sigma = _v.check_positive_vector("sigma", sigma, length=d, of=_PER_COLUMN)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rng = _v.check_rng("rng", rng)
    share = _v.check_probability("centre_share", centre_share)
    delta = _v.check_probability("delta", delta)
    budget = _budget.split_budget(rho, shares={"centre": share, "noise": 1.0 - share})
    _check_parts(budget, centre=("centre_share", share))
    centre = _centre(X, sigma=sigma, rho=budget["centre"], lower=lower, upper=upper, rng=rng)
    return _alg3(X, sigma=sigma, mu_hat=centre, rho_noise=budget["noise"], rng=rng,
                 p_clip=p_clip, delta=delta, budget=budget)


def algorithm3_private(X: Any, *, rho: float, lower: float, upper: float,
                       rng: np.random.Generator, scale_share: float = PRIVATE_SHARES["scale"],
                       centre_share: float = PRIVATE_SHARES["centre"], p_clip: float | None = None,
                       floor: float = 1e-12, delta: float = REPORT_DELTA) -> Algorithm3Result:
    r"""Algorithm 3 end to end: private scales and centre, then Algorithm 3 (rho-zCDP in total).

    :math:`\hat\sigma` = :func:`~egmlib.peers.scales.coinpress_log_scales` (budget
    ``scale_share`` :math:`\cdot\rho`), :math:`\hat\mu` =
    :func:`~egmlib.peers.coinpress.coinpress_known_scales` whitened by :math:`\hat\sigma`
    (``centre_share`` :math:`\cdot\rho`), then :func:`algorithm3_zcdp` with
    :math:`\hat\sigma`, :math:`\hat\mu` and the rest of the budget.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate.
    rng : numpy.random.Generator
    scale_share, centre_share : float in (0, 1), default 1/8 each, summing to < 1
    p_clip, delta : as in :func:`algorithm3_zcdp`
    floor : float in (0, 1), default 1e-12
        Public lower bound on :math:`\sigma_j/(\text{upper}-\text{lower})`.

    Returns
    -------
    Algorithm3Result

    Examples
    --------
    >>> rng = np.random.default_rng(10)
    >>> X = 5.0 + np.array([4.0, 2.0, 1.0]) * rng.standard_normal((20000, 3))
    >>> r = algorithm3_private(X, rho=1.0, lower=-100.0, upper=100.0, rng=rng)
    >>> bool(np.linalg.norm(r.estimate - 5.0) < 0.15), sorted(r.budget.parts)
    (True, ['centre', 'noise', 'scale'])
    """
    X = _v.check_finite_data("X", X, min_rows=2)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rng = _v.check_rng("rng", rng)
    s_share = _v.check_probability("scale_share", scale_share)
    c_share = _v.check_probability("centre_share", centre_share)
    if not s_share + c_share < 1.0:
        raise ValueError(f"scale_share + centre_share must be < 1, got "
                         f"{s_share!r} + {c_share!r} = {s_share + c_share!r}")
    delta = _v.check_probability("delta", delta)
    budget = _budget.split_budget(rho, shares={"scale": s_share, "centre": c_share,
                                               "noise": 1.0 - s_share - c_share})
    _check_parts(budget, scale=("scale_share", s_share), centre=("centre_share", c_share))
    sigma_hat = coinpress_log_scales(X, rho=budget["scale"], lower=lower, upper=upper,
                                     rng=rng, floor=floor).sigma_hat
    centre = _centre(X, sigma=sigma_hat, rho=budget["centre"], lower=lower, upper=upper,
                     rng=rng)
    return _alg3(X, sigma=sigma_hat, mu_hat=centre, rho_noise=budget["noise"], rng=rng,
                 p_clip=p_clip, delta=delta, budget=budget)
