r"""PLAN: variance-aware private mean estimation (Aumuller, Lebeda, Nelson and Pagh 2024).

PLAN ("Private Limit Adapted Noise", PETS 2024, arXiv 2306.08745, Algorithm 1 for the
:math:`\ell_2` error) estimates the mean of :math:`n` rows in :math:`\mathbf R^d` under
:math:`\rho`-zCDP in four private steps, with the budget split of the paper's
experiments (their public code: a quarter for the preprocessing, of which a quarter for
the centre; a quarter of the rest for the clipping threshold):

===============  =============================================================  ===============
step             what                                                           budget
===============  =============================================================  ===============
``centre``       private coordinate-wise median :math:`\tilde\mu`               :math:`\rho/16`
``scale``        private :math:`\hat\sigma_j` from pairwise differences         :math:`3\rho/16`
``threshold``    private :math:`(1-k)`-quantile :math:`C` of the scaled norms   :math:`3\rho/16`
``noise``        Gaussian noise for the clipped scaled sum, sensitivity 2C      :math:`9\rho/16`
===============  =============================================================  ===============

Scaling: :math:`\Delta_j = 2\hat\sigma_j + \|2\hat\sigma\|_1/d` (the "regularised"
:math:`\Delta` their experiments use) and :math:`y_i = (x_i - \tilde\mu)\odot\Delta^{-1/2}`;
with :math:`\Delta\propto\sigma` this is the report's Lemma 4.1 exponent,
:math:`b_j\propto\sigma_j^{-1/2}`.  Threshold: the exponential-mechanism quantile of
:math:`\|y_i\|` (:func:`egmlib.peers.quantiles.private_quantile`) at :math:`1-k`,

.. math::

    k = \frac{\sqrt n + \sqrt{\tfrac T2\ln(T/\beta)/\rho_{\rm threshold}}}{n},
    \qquad T = \ln(\text{upper} - \text{lower}),\ \beta = 0.1,

so that about :math:`\sqrt n` rows are clipped (Algorithm 3 clips about one, PLAN's
:math:`\sqrt n` balances clipping bias against noise without knowing the distribution),
on the universe :math:`[0, \sqrt{\ln d\,\ln(1/\beta)\,\|\hat\sigma\|_1}]`.  Release:
:math:`\tilde\mu + \Delta^{1/2}\odot\bigl(\tfrac1n\sum_i \mathrm{clip}_C(y_i) + \eta/n\bigr)`,
:math:`\eta\sim\mathcal N(0, (2C)^2/(2\rho_{\rm noise})\,I)`.

Where the paper leaves a choice open this module follows the experiments' code (budget
split, :math:`\beta`, :math:`T`, the regularised :math:`\Delta`, the norm universe); where
that code's privacy accounting undercounts, it does not follow it:

* substitution neighbours (the report's Definition 2.1, and PLAN's own noise scale
  :math:`2C`): an exponential-mechanism quantile has utility sensitivity 1; the code
  uses :math:`\max(q, 1-q) = 1/2` for the median (the add/remove value), i.e. its centre
  and scale steps ran with 4 times the :math:`\rho` they were charged for;
* the code triples the data (:math:`x\pm0.1`, :math:`x`) before the centre and scale
  steps and charges :math:`\rho/3`, but a tripled row moves 3 ranks, which costs
  :math:`9\times` in :math:`\rho`; this module does not triple (continuous data has no
  ties to separate).

Together the published centre and scale steps spent 12 times their nominal budget
under substitution.  ``shares`` lets a caller reproduce that (see the faithfulness
benchmark).  :math:`T < 1` (a universe narrower than :math:`e`) is raised to 1 so that
:math:`k` stays real, and :math:`\ln d` to at least 1 in the norm universe.

Variants:

* :func:`plan_noscale_mean` -- PLAN without the scaling step: :math:`\Delta_j = 1`, the
  whole preprocessing budget (:math:`\rho/4`) on the centre, norm universe
  :math:`[0, \sqrt d(\text{upper}-\text{lower})]` (the largest distance in the box).  The
  published code instead keeps the :math:`\hat\sigma`-based norm universe with
  :math:`\hat\sigma = 10^{-30}`, which makes :math:`C` about :math:`10^{-15}`: every row is
  clipped to nothing and its published "PLAN-noscale" numbers are those of the private
  coordinate-wise median alone.
* :func:`plan_oracle_mean` -- PLAN's last two steps given the true :math:`\sigma` and
  :math:`\mu` for free (threshold :math:`\rho/4`, noise :math:`3\rho/4`, the split of
  PLAN's last step): the counterpart of Algorithm 3 with oracle inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import clipping, gchisq
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers.quantiles import SortedColumns, coordinatewise_quantiles, private_quantile
from egmlib.peers.scales import pairwise_scales
from egmlib.validation import FloatArray

__all__ = [
    "PLAN_NOSCALE_SHARES",
    "PLAN_ORACLE_SHARES",
    "PLAN_SHARES",
    "PlanResult",
    "plan_clip_fraction",
    "plan_last_step_noise_ratio",
    "plan_mean",
    "plan_norm_bound",
    "plan_noscale_mean",
    "plan_oracle_mean",
    "plan_scaling",
]

#: PLAN's budget split in its experiments.
PLAN_SHARES = {"centre": 1 / 16, "scale": 3 / 16, "threshold": 3 / 16, "noise": 9 / 16}
#: Budget split of PLAN without scaling (the preprocessing quarter goes to the centre).
PLAN_NOSCALE_SHARES = {"centre": 1 / 4, "threshold": 3 / 16, "noise": 9 / 16}
#: PLAN's last step alone (oracle centre and scales).
PLAN_ORACLE_SHARES = {"threshold": 1 / 4, "noise": 3 / 4}


@dataclass(frozen=True)
class PlanResult:
    """Output of the PLAN estimators.

    Only ``estimate`` is the release; ``centre``, ``sigma_hat`` and ``C`` are private
    intermediate releases (covered by the budget).  ``n_clipped`` depends on the data
    and is a diagnostic only.
    """

    estimate: FloatArray  #: (d,) private estimate of the mean
    centre: FloatArray  #: (d,) centre used (private median, or the oracle mu_hat)
    sigma_hat: FloatArray | None  #: (d,) scales used (None without scaling)
    Delta: FloatArray  #: (d,) scaling, y = (x - centre) / sqrt(Delta)
    C: float  #: clipping radius in the scaled space
    clip_quantile: float  #: 1 - k, the target quantile of the scaled norms
    norm_upper: float  #: upper end of the threshold's universe
    noise_std: float  #: per-coordinate noise std on the scaled sum, 2C/sqrt(2 rho_noise)
    n_clipped: int
    budget: _budget.ZCDPBudget


def plan_scaling(sigma: Any) -> FloatArray:
    r"""PLAN's regularised scaling :math:`\Delta_j = 2\hat\sigma_j + \|2\hat\sigma\|_1/d`.

    Rows are scaled by :math:`\Delta^{-1/2}`; :math:`\hat\sigma` = ``sigma`` is PLAN's
    private estimate or, in the oracle arm, the true standard deviations.

    The factor 2 is the experiments' ``max_std_distance``; the regularisation keeps
    :math:`\Delta_j \ge 2\|\hat\sigma\|_1/d > 0` (Aumuller et al. 2024).  All-zero
    :math:`\hat\sigma` gives :math:`\Delta = 1` (no scaling).

    Examples
    --------
    >>> plan_scaling([1.0, 3.0]).tolist()
    [6.0, 10.0]
    """
    s = _v.check_nonnegative_vector("sigma", sigma, allow_all_zero=True)
    with np.errstate(over="ignore"):
        total = float(np.sum(s))
        out = 2.0 * s + 2.0 * total / s.shape[0]
    if total == 0.0:
        return np.ones_like(s)
    _v.check_finite_result(out, what="Delta", inputs="sigma")
    return out


def plan_clip_fraction(n: int, *, rho_threshold: float, lower: float, upper: float,
                       beta: float = 0.1) -> float:
    r"""The fraction k of rows PLAN aims to clip (Aumuller et al. 2024, their experiments' k).

    :math:`k = (\sqrt n + \sqrt{\tfrac T2\ln(T/\beta)/\rho_{\rm threshold}})/n`.

    :math:`T = \max(1, \ln(\text{upper}-\text{lower}))` (PLAN's experiments).  The
    threshold is the :math:`\max(1-k, 0)` quantile of the scaled norms.

    Examples
    --------
    >>> round(plan_clip_fraction(10000, rho_threshold=0.1875 / 8, lower=-1e6, upper=1e6), 4)
    0.0139
    """
    n = _v.check_count("n", n)
    rho_threshold = _v.check_positive_finite("rho_threshold", rho_threshold)
    lower, upper = _v.check_bounds(lower, upper)
    beta = _v.check_probability("beta", beta)
    k = _clip_fraction(n, rho_threshold, lower, upper, beta)
    _v.check_finite_result(k, what="k", inputs="1/rho_threshold")
    return k


def _clip_fraction(n: int, rho_threshold: float, lower: float, upper: float,
                   beta: float) -> float:
    T = max(1.0, math.log(upper - lower))
    log_t_beta = math.log(T / beta) if beta > 1e-300 else math.log(T) - math.log(beta)  # T/beta overflows below
    return (math.sqrt(n) + math.sqrt(0.5 * T * log_t_beta / rho_threshold)) / n


def plan_norm_bound(sigma: Any, *, beta: float = 0.1) -> float:
    r"""Upper end of the threshold's universe in PLAN's experiments.

    :math:`\sqrt{\ln d\,\ln(1/\beta)\,\|\hat\sigma\|_1}`.

    :math:`\ln d` is raised to 1 for :math:`d \le 2` (Aumuller et al. 2024, whose
    experiments use this bound with :math:`\hat\sigma` = ``sigma``).

    Examples
    --------
    >>> round(plan_norm_bound(np.ones(16)), 4)
    10.1067
    """
    s = _v.check_nonnegative_vector("sigma", sigma)
    beta = _v.check_probability("beta", beta)
    bound = _norm_bound(s, beta)
    _v.check_finite_result(bound, what="the norm bound", inputs="sigma")
    return bound


def _norm_bound(s: FloatArray, beta: float) -> float:
    d = s.shape[0]
    with np.errstate(over="ignore"):
        total = float(np.sum(s))
    log_inv_beta = math.log(1.0 / beta) if beta > 1e-300 else -math.log(beta)  # 1/beta overflows below
    return math.sqrt(max(1.0, math.log(d)) * log_inv_beta * total)


def _clipped_release(X: np.ndarray, *, centre: FloatArray, sigma_hat: FloatArray | None,
                     Delta: FloatArray, norm_upper: float, k: float, budget: _budget.ZCDPBudget,
                     rng: np.random.Generator, inputs: str = "X, lower or upper") -> PlanResult:
    """PLAN's last step, shared by its variants: private threshold at the 1 - k quantile
    of the scaled norms, clip, noise, scale back."""
    n, d = X.shape
    q = max(1.0 - k, 0.0)
    root = np.sqrt(Delta)
    b = 1.0 / root
    norms = clipping.transformed_norms(X, mu_hat=centre, b=b)
    # norms beyond the universe count as its end (inf where a norm exceeds float64)
    C = private_quantile(np.minimum(norms, norm_upper), q=q, rho=budget["threshold"], lower=0.0,
                         upper=norm_upper, rng=rng)
    with np.errstate(over="ignore"):  # C lies in the public universe [0, norm_upper]
        _v.check_finite_result(2.0 * C / math.sqrt(2.0 * budget["noise"]), what="the noise 2C/sqrt(2 rho_noise)",
                               inputs=inputs)
        # every clipped row has norm <= C (up to rounding), so 2 n C bounds the sum: a huge universe
        # is named here, not as the clipped sum's X, mu_hat, b or C
        _v.check_finite_result(2.0 * n * C, what="the bound 2 n C on the clipped sum", inputs=inputs)
    clipped = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b, norms=norms)
    total, n_clipped = clipped.total, clipped.n_clipped
    sensitivity = clipping.sum_sensitivity(C, n=n, d=d)  # 2C and the rounding bound
    s = _budget.gaussian_noise_std(budget["noise"], sensitivity=sensitivity) if C > 0 else 0.0
    noisy = (total + s * rng.standard_normal(X.shape[1])) / n
    estimate = centre + root * noisy
    _v.check_finite_result(estimate, what="the estimate", inputs=inputs)
    return PlanResult(estimate=estimate, centre=centre, sigma_hat=sigma_hat, Delta=Delta, C=C,
                      clip_quantile=q, norm_upper=norm_upper, noise_std=s,
                      n_clipped=n_clipped, budget=budget)


def _check_common(X: Any, rho: Any, lower: Any, upper: Any, rng: Any, beta: Any, shares: Any,
                  default: Mapping[str, float], min_rows: int = 2,
                  ) -> tuple[np.ndarray, float, float, np.random.Generator, float, _budget.ZCDPBudget]:
    X = _v.check_finite_data("X", X, min_rows=min_rows)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rng = _v.check_rng("rng", rng)
    beta = _v.check_probability("beta", beta)
    shares = default if shares is None else shares
    if isinstance(shares, Mapping) and set(shares) != set(default):
        raise ValueError(f"shares must have the steps {sorted(default)}, got {sorted(shares)}")
    budget = _budget.split_budget(rho, shares=shares)
    return X, lower, upper, rng, beta, budget


def _in_box(presorted: Any, lower: float, upper: float) -> Any:
    """``presorted`` after checking that its values lie in the box (those of the clamped data)."""
    if isinstance(presorted, SortedColumns) and presorted.values.size and not (
            float(presorted.values[:, 0].min()) >= lower and float(presorted.values[:, -1].max()) <= upper):
        raise ValueError("presorted must hold the sorted columns of X clamped to [lower, upper] "
                         "(egmlib.clipping.clamp_to_box), got values outside the box")
    return presorted


def plan_mean(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
              beta: float = 0.1, shares: Mapping[str, float] | None = None,
              presorted: SortedColumns | None = None) -> PlanResult:
    r"""PLAN (Aumuller, Lebeda, Nelson and Pagh 2024, Algorithm 1), :math:`\rho`-zCDP.

    Steps, split and scaling as in the module docstring: private coordinate-wise
    median (:func:`~egmlib.peers.quantiles.coordinatewise_quantiles`), private scales
    (:func:`~egmlib.peers.scales.pairwise_scales`), exponential-mechanism threshold at
    the :math:`1-k` quantile of the scaled norms (:func:`plan_clip_fraction`,
    :func:`plan_norm_bound`), Gaussian noise for sensitivity :math:`2C`.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 2
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate (PLAN's experiments: a symmetric box).
    rng : numpy.random.Generator
    beta : float in (0, 1), default 0.1 (the experiments' failure probability)
    shares : mapping with the steps ``centre``, ``scale``, ``threshold``, ``noise``
        Budget split; default ``PLAN_SHARES``.
    presorted : SortedColumns, optional
        ``sorted_columns(clamp_to_box(X, lower=lower, upper=upper))``
        (:func:`egmlib.peers.quantiles.sorted_columns`, :func:`egmlib.clipping.clamp_to_box`)
        when the caller releases several times from the same data: the centre's medians
        then skip the sort (the same release).

    Returns
    -------
    PlanResult

    Examples
    --------
    >>> rng = np.random.default_rng(6)
    >>> X = rng.normal(loc=1.0, scale=[4.0, 2.0, 1.0, 0.5], size=(20000, 4))
    >>> r = plan_mean(X, rho=1.0, lower=-100.0, upper=100.0, rng=rng)
    >>> bool(np.linalg.norm(r.estimate - 1.0) < 0.2), round(sum(r.budget.parts.values()), 12)
    (True, 1.0)
    """
    X, lower, upper, rng, beta, budget = _check_common(X, rho, lower, upper, rng, beta,
                                                       shares, PLAN_SHARES)
    n = X.shape[0]
    centre = coordinatewise_quantiles(X, q=0.5, rho=budget["centre"], lower=lower, upper=upper,
                                      rng=rng, presorted=_in_box(presorted, lower, upper))
    sigma_hat = pairwise_scales(X, rho=budget["scale"], lower=lower, upper=upper, rng=rng)
    Delta = plan_scaling(sigma_hat)
    k = plan_clip_fraction(n, rho_threshold=budget["threshold"], lower=lower, upper=upper,
                           beta=beta)
    norm_upper = _norm_bound(sigma_hat, beta) if np.any(sigma_hat > 0) else 1.0
    return _clipped_release(X, centre=centre, sigma_hat=sigma_hat, Delta=Delta,
                            norm_upper=norm_upper, k=k, budget=budget, rng=rng)


def plan_noscale_mean(X: Any, *, rho: float, lower: float, upper: float,
                      rng: np.random.Generator, beta: float = 0.1,
                      shares: Mapping[str, float] | None = None,
                      presorted: SortedColumns | None = None) -> PlanResult:
    r"""PLAN without the scaling step (Aumuller et al. 2024, "PLAN-noscale"), :math:`\rho`-zCDP.

    :math:`\Delta_j = 1`; budget ``PLAN_NOSCALE_SHARES`` (centre :math:`\rho/4`);
    threshold universe :math:`[0, \sqrt d(\text{upper}-\text{lower})]`.  See the module
    docstring for how the published runs differ.

    Parameters
    ----------
    X, rho, lower, upper, rng, beta, presorted : as in :func:`plan_mean`
    shares : mapping with the steps ``centre``, ``threshold``, ``noise``

    Returns
    -------
    PlanResult
        ``sigma_hat`` is None.
    """
    X, lower, upper, rng, beta, budget = _check_common(X, rho, lower, upper, rng, beta,
                                                       shares, PLAN_NOSCALE_SHARES)
    n, d = X.shape
    centre = coordinatewise_quantiles(X, q=0.5, rho=budget["centre"], lower=lower, upper=upper,
                                      rng=rng, presorted=_in_box(presorted, lower, upper))
    k = plan_clip_fraction(n, rho_threshold=budget["threshold"], lower=lower, upper=upper,
                           beta=beta)
    norm_upper = math.sqrt(d) * (upper - lower)
    _v.check_finite_result(norm_upper, what="the norm universe sqrt(d) (upper - lower)",
                           inputs="lower, upper")
    return _clipped_release(X, centre=centre, sigma_hat=None, Delta=np.ones(d),
                            norm_upper=norm_upper, k=k, budget=budget, rng=rng)


def plan_oracle_mean(X: Any, *, mu_hat: Any, sigma: Any, rho: float, lower: float, upper: float,
                     rng: np.random.Generator, beta: float = 0.1,
                     shares: Mapping[str, float] | None = None) -> PlanResult:
    r"""PLAN's last step given the centre mu_hat and sigma (the "oracle" arm), rho-zCDP.

    Centre :math:`\hat\mu` (the true mean in the oracle arm), :math:`\Delta` from
    :func:`plan_scaling` of :math:`\sigma`, then
    the private threshold (:math:`\rho/4`) and the noise (:math:`3\rho/4`) as in
    :func:`plan_mean` (Aumuller et al. 2024).  With the same oracle inputs Algorithm 3
    spends nothing on its radius (it is a model quantile) and clips about one row;
    PLAN pays for a private quantile and clips about :math:`\sqrt n`.

    Parameters
    ----------
    X : array_like, shape (n, d), finite, n >= 1
    mu_hat : array_like, shape (d,), finite
        Public centre (the true mean in the oracle arm).
    sigma : array_like, shape (d,), finite, >= 0, not all 0
        Public standard deviations.
    rho, lower, upper, rng, beta : as in :func:`plan_mean`
        ``lower`` and ``upper`` enter only through :math:`k` (PLAN's :math:`T`).
    shares : mapping with the steps ``threshold``, ``noise``

    Returns
    -------
    PlanResult
    """
    X, lower, upper, rng, beta, budget = _check_common(X, rho, lower, upper, rng, beta,
                                                       shares, PLAN_ORACLE_SHARES, min_rows=1)
    n, d = X.shape
    mu = _v.check_finite_vector("mu_hat", mu_hat, length=d, of="one entry per column of X")
    sigma = _v.check_nonnegative_vector("sigma", sigma, length=d, of="one entry per column of X")
    Delta = plan_scaling(sigma)
    k = plan_clip_fraction(n, rho_threshold=budget["threshold"], lower=lower, upper=upper,
                           beta=beta)
    norm_upper = plan_norm_bound(sigma, beta=beta)
    return _clipped_release(X, centre=mu, sigma_hat=sigma, Delta=Delta, norm_upper=norm_upper,
                            k=k, budget=budget, rng=rng, inputs="X, mu_hat or sigma")


def plan_last_step_noise_ratio(sigma: Any, *, n: int, rho: float, lower: float,
                               upper: float) -> tuple[float, float]:
    r"""The book's model (eq. (8.B), chapter 8) of PLAN's last step against Algorithm 3.

    With :math:`\sigma` and :math:`\mu` given, PLAN's last step (Aumuller, Lebeda, Nelson
    and Pagh 2024; :func:`plan_oracle_mean`) and Algorithm 3 (:mod:`egmlib.peers.algorithm3`)
    both add Gaussian noise proportional to a clipping radius.  The ratio of their noise
    standard deviations (in the original space, summed over coordinates) is

    .. math::

        \frac{C_P\sqrt{\sum_j\Delta_j}}{C_t\sum_j\sigma_j}\Big/\sqrt{s_{\rm noise}},

    with :math:`C_t^2` the upper :math:`1/n` quantile of :math:`\sum_j(\sigma_j/S)Z_j^2`
    (Algorithm 3, :math:`S=\sum_j\sigma_j`), :math:`\Delta` = :func:`plan_scaling`,
    :math:`C_P^2` the upper :math:`k` quantile of :math:`\sum_j(\sigma_j^2/\Delta_j)Z_j^2`
    with :math:`k` = :func:`plan_clip_fraction` at the threshold's budget, and
    :math:`s_{\rm noise}` PLAN's noise share (:data:`PLAN_ORACLE_SHARES`; Algorithm 3 spends
    all of :math:`\rho` on noise).

    Returns
    -------
    (ratio, radius_part) : tuple of float
        The model's ratio and its radius part (the ratio times :math:`\sqrt{s_{\rm noise}}`).

    Examples
    --------
    >>> r, radius = plan_last_step_noise_ratio([1.0] * 64, n=10_000, rho=0.125, lower=-10.0, upper=10.0)
    >>> round(r / radius, 4)   # sqrt(4/3): the threshold's quarter of the budget
    1.1547
    """
    sig = _v.check_nonnegative_vector("sigma", sigma)
    n = _v.check_count("n", n, minimum=2)
    rho = _v.check_positive_finite("rho", rho)
    lower, upper = _v.check_bounds(lower, upper)
    if not np.all(sig > 0):
        raise ValueError("sigma must be > 0 in every coordinate (PLAN's scaling and Lemma 4.1's "
                         f"weights), got sigma with {int(np.sum(sig == 0))} zero entries")
    sig = sig / sig.max()  # the ratio is scale-free; no underflow or overflow of sigma^2
    S = float(sig.sum())
    C_t = math.sqrt(float(gchisq.isf(1.0 / n, w=sig / S)))
    Delta = plan_scaling(sig)
    rho_threshold = rho * PLAN_ORACLE_SHARES["threshold"]
    if not rho_threshold > 0.0:
        raise ValueError(f"rho is too small: the threshold's share of it underflows to 0, got rho={rho!r}")
    k = plan_clip_fraction(n, rho_threshold=rho_threshold, lower=lower, upper=upper)
    if not 0.0 < k < 1.0:
        raise ValueError(f"n, rho, lower and upper must give PLAN's clip fraction k in (0, 1), got k={k!r} "
                         f"(n={n}, rho={rho!r}, lower={lower!r}, upper={upper!r}): n too small for the box")
    C_P = math.sqrt(float(gchisq.isf(k, w=sig**2 / Delta)))
    radius = C_P * math.sqrt(float(Delta.sum())) / (C_t * S)
    ratio = radius / math.sqrt(PLAN_ORACLE_SHARES["noise"])
    _v.check_finite_result(ratio, what="the noise ratio", inputs="sigma")
    return ratio, radius
