"""Privacy audits of Algorithm 3 on a worst-case pair of neighbours.

Two different things live here; only the first is an audit.

**The black-box audit** (chapter 7b, :func:`black_box_audit`).  It runs a released
mechanism many times on each of two neighbouring datasets and sees only the released
outputs.  A distinguishing attack (:func:`distinguishing_attack`) learns a direction and a
threshold from one half of the outputs and is scored on the other half; its true and false
positive rates, with one-sided Clopper-Pearson bounds, give a lower bound on epsilon at a
given delta by the hypothesis-testing characterisation of (eps, delta)-DP (Kairouz, Oh and
Viswanath 2015; used for auditing by Jagielski, Ullman and Oprea 2020 and Nasr et al. 2021):

    eps >= log((TPR - delta) / FPR)   and   eps >= log((1 - FPR - delta) / (1 - TPR))

for every test (:func:`eps_lower_bound`).  Negative controls are the same mechanism
deliberately mis-calibrated to add 10 % and 30 % less noise than its claim
(:func:`weakened_algorithm3`).  What it can and cannot show: a lower bound for one pair and
one test family; it can refute a claim, never prove one (see :func:`trials_needed` for the
cost of catching small calibration errors).

**The white-box consistency check** (:func:`privacy_check`, kept for chapter 7a and the
stored results of ``scripts/beyond_report.py``).  It reads the mechanism's own noise-free
sums and reported noise scales, so it restates Theorem 2 for the implementation's
bookkeeping rather than auditing its releases:

* :func:`worst_case_pair` -- neighbouring datasets whose clipped sums differ by
  exactly 2 C (the sensitivity is attained); also the pair of the black-box audit;
* :func:`privacy_loss` -- L(y) = log p(y) / p'(y) for two Gaussian releases with
  the same diagonal covariance;
* :func:`gaussian_loss_delta` -- delta(eps) = E[(1 - e^(eps - L))_+] for
  L ~ N(Delta^2 / 2, Delta^2), by importance sampling; its expectation is the
  Balle-Wang profile :func:`egmlib.calibration.privacy_profile` at sigma = 1/Delta;
* :func:`privacy_check` -- the white-box check (sensitivity attained, the law of the
  privacy loss computed from the reported scales, delta against the profile).

Neither sees floating-point effects of the Gaussian sampler, nor the privacy of the
public inputs (sigma, mu_hat, p_C, n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from egmbook import experiments
from egmlib import _validation as _v
from egmlib import calibration, mechanisms, scaling

__all__ = [
    "ALGORITHM3",
    "WEAKENED_FACTORS",
    "CONFIDENCE",
    "released",
    "clopper_pearson",
    "eps_lower_bound",
    "AttackResult",
    "distinguishing_attack",
    "weakened_algorithm3",
    "run_releases",
    "AuditRow",
    "black_box_audit",
    "pipeline_audit",
    "default_pipeline",
    "book_pipelines",
    "expected_eps_lower_bound",
    "trials_needed",
    "NEGATIVE_CONTROLS",
    "NeighbourPair",
    "DeltaEstimate",
    "ControlDelta",
    "ProfilePoint",
    "PrivacyCheck",
    "worst_case_pair",
    "privacy_loss",
    "gaussian_loss_delta",
    "privacy_check",
]

#: The negative controls of :func:`privacy_check`, the same pair released with too
#: little noise, the noise standard deviation multiplied by the factor.
NEGATIVE_CONTROLS = (("sensitivity C instead of 2C", 0.5), ("noise 2% too small", 0.98))

#: Draws of the check of the one-dimensional reduction of the privacy loss.
_REDUCTION_DRAWS = 10**4

_PER_SIGMA = "one entry per entry of sigma"

#: Largest dataset of the worst-case pair (two dense n x d arrays are built) and largest
#: number of Monte Carlo draws (one float64 array of that length).
_N_MAX = 10**8
_DRAWS_MAX = 10**9

#: Largest count of outputs of the audit's bounds: integers up to 2^53 are exact in float64,
#: the arithmetic of the Beta quantiles.
_COUNT_MAX = 2**53

#: Smallest level alpha of the audit's bounds.  scipy's Beta quantiles (Boost's root finder)
#: give up and return a wrong value below about 1e-100; the bounds use alpha / 2, and no
#: audit states a confidence beyond 1 - 1e-40.
_ALPHA_MIN = 1e-40


def _check_alpha(alpha: Any) -> float:
    """The level of a bound: ``_ALPHA_MIN <= alpha < 1``."""
    a = _v.check_probability("alpha", alpha)
    if a < _ALPHA_MIN:
        raise ValueError(f"alpha must be >= {_ALPHA_MIN:g} (the Beta quantiles lose their accuracy "
                         f"below), got alpha={a!r}")
    return a


class NeighbourPair(NamedTuple):
    """Two neighbouring datasets (Definition 2.1: they differ in one row)."""

    X: NDArray[np.float64]  #: (n, d)
    X_prime: NDArray[np.float64]  #: (n, d), equal to X except in the last row


class DeltaEstimate(NamedTuple):
    """A Monte Carlo estimate of delta(eps) and its standard error."""

    delta: float  #: the estimate of delta(eps)
    se: float  #: its standard error


class ControlDelta(NamedTuple):
    """delta(eps) of a negative control of :func:`privacy_check`."""

    delta_is: float  #: importance-sampling estimate
    delta_is_se: float  #: its standard error
    profile: float  #: the Balle-Wang profile for the control's noise


class ProfilePoint(NamedTuple):
    """One point of the empirical privacy profile of :func:`privacy_check`."""

    eps: float  #: the privacy parameter
    delta_is: float  #: importance-sampling estimate of delta(eps)
    delta_is_se: float  #: its standard error
    profile: float  #: the Balle-Wang profile at eps


def worst_case_pair(
    sigma: ArrayLike,
    *,
    n: int,
    rng: np.random.Generator,
    mu_hat: ArrayLike | None = None,
    p_clip: float | None = None,
    far: float = 10.0,
) -> NeighbourPair:
    """Neighbouring datasets X ~ X' of Algorithm 3 whose clipped sums differ by 2 C.

    n - 1 shared rows from the model N(mu_hat, diag(sigma^2)), plus one row that
    lies far outside the clipping ball on opposite sides of mu_hat:
    x = mu_hat + far C u / b and x' = mu_hat - far C u / b, with b Lemma 4.1's
    scaling, C the radius at p_clip (default 1/n) and u a random unit vector of
    the transformed space.  Both are clipped, to +-C u, so the transformed
    clipped sums differ by exactly 2 C u: the sensitivity of Section 4 is attained.

    Random numbers: u first (d normals), then the shared rows.

    Returns
    -------
    NeighbourPair
        ``(X, X_prime)``: two (n, d) arrays that differ in the last row only.
    """
    sigma = _v.check_positive_vector("sigma", sigma)
    d = sigma.size
    mu_hat = np.zeros(d) if mu_hat is None else _v.check_finite_vector("mu_hat", mu_hat, length=d, of=_PER_SIGMA)
    n = _v.check_count("n", n, minimum=2, maximum=_N_MAX)
    rng = _v.check_rng("rng", rng)
    p = _v.check_probability("p_clip", 1.0 / n if p_clip is None else p_clip)
    far = _v.check_positive_finite("far", far)
    if not far > 1.0:
        raise ValueError(f"far must be > 1 (the row must lie outside the ball), got far={far!r}")
    b = scaling.algorithm3_scaling(sigma)
    Ct = math.sqrt(experiments.clipping_radii(sigma, p=p).Ct_squared)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    with np.errstate(over="ignore"):
        shared = rng.standard_normal((n - 1, d)) * sigma + mu_hat
        row = mu_hat + far * Ct * u / b
        X = np.vstack([shared, row])
        Xp = np.vstack([shared, 2.0 * mu_hat - row])
    _v.check_finite_result([X, Xp], what="the neighbouring datasets", inputs="sigma, mu_hat or far")
    return NeighbourPair(X, Xp)


def privacy_loss(
    y: ArrayLike, *, mean: ArrayLike, mean_prime: ArrayLike, std: ArrayLike
) -> float | NDArray[np.float64]:
    """L(y) = log p(y) / p'(y) for releases N(mean, diag(std^2)) and N(mean_prime, diag(std^2)).

    L(y) = sum_j [(y_j - mean'_j)^2 - (y_j - mean_j)^2] / (2 std_j^2), over the last
    axis of ``y`` (one release per row).  Under y ~ N(mean, diag(std^2)) it is
    N(Delta^2 / 2, Delta^2) with Delta = ||(mean - mean') / std||: the privacy loss
    random variable of the Gaussian mechanism (Balle and Wang 2018).

    Examples
    --------
    >>> float(privacy_loss([1.0], mean=[1.0], mean_prime=[0.0], std=[1.0]))   # Delta^2 / 2 at y = mean
    0.5
    """
    s = _v.check_positive_vector("std", std)
    d = s.size
    m = _v.check_finite_vector("mean", mean, length=d, of="one entry per entry of std")
    mp = _v.check_finite_vector("mean_prime", mean_prime, length=d, of="one entry per entry of std")
    y = _v.check_finite_array("y", y)
    if y.ndim == 0 or y.shape[-1] != d:
        raise ValueError(f"y must have a last axis of length d={d} (one release per row), got y of shape {y.shape}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked just below
        out = np.sum(((y - mp) ** 2 - (y - m) ** 2) / (2.0 * s * s), axis=-1)
    _v.check_finite_result(out, what="the privacy loss", inputs="y, mean, mean_prime or 1/std")
    return float(out) if out.ndim == 0 else out


def gaussian_loss_delta(Delta: float, *, eps: float, n_draws: int, rng: np.random.Generator) -> DeltaEstimate:
    """delta(eps) = E[(1 - e^(eps - L))_+], L ~ N(Delta^2 / 2, Delta^2), by importance sampling.

    The smallest delta at eps for two Gaussians at Mahalanobis distance Delta
    (the hockey-stick divergence of the Gaussian mechanism); in expectation it is
    the Balle-Wang profile (Theorem 2's eq. (2)),
    ``calibration.privacy_profile(1 / Delta, eps=eps)``.  L = Delta z + Delta^2 / 2
    with z ~ N(t, 1) shifted to L = eps (t = (eps - Delta^2 / 2) / Delta) and
    weighted by the likelihood ratio exp(-t z + t^2 / 2), so the standard error is
    small even when delta is (about 5e-4 relative at delta = 1e-6 for 10^7 draws).

    Returns
    -------
    DeltaEstimate
        ``(delta, se)``: the estimate and its standard error.
    """
    Delta = _v.check_positive_finite("Delta", Delta)
    eps = _v.check_positive_finite("eps", eps)
    n_draws = _v.check_count("n_draws", n_draws, minimum=2, maximum=_DRAWS_MAX)
    rng = _v.check_rng("rng", rng)
    try:
        half_sq = 0.5 * Delta**2
    except OverflowError:
        raise ValueError(
            f"Delta^2 overflows the float64 range: Delta too large in magnitude, got Delta={Delta!r}"
        ) from None
    with np.errstate(over="ignore", invalid="ignore"):
        t = (eps - half_sq) / Delta
        z = rng.standard_normal(n_draws) + t
        L = Delta * z + half_sq
        g = np.where(L > eps, -np.expm1(eps - L), 0.0) * np.exp(-t * z + 0.5 * t * t)
        out = DeltaEstimate(float(g.mean()), float(g.std(ddof=1) / math.sqrt(n_draws)))
    _v.check_finite_result(out, what="the estimate of delta(eps)", inputs="Delta or eps")
    return out


@dataclass(frozen=True)
class PrivacyCheck:
    """Result of :func:`privacy_check`.  ``passed`` is the verdict."""

    n: int
    C: float  #: the mechanism's radius
    sigma_opt: float
    n_clipped_X: int  #: rows of X clipped (the far row, and model rows beyond C)
    sens_rel_err: float  #: | ||T - T'|| / (2 C) - 1 |
    Delta: float  #: ||(m - m') / s||, should be 1 / sigma_opt
    Delta_times_sigma_opt: float
    outputs: int  #: actual releases whose privacy loss was computed
    L_mean: float
    L_var: float
    L_mean_pred: float  #: Delta^2 / 2
    L_var_pred: float  #: Delta^2
    ks_stat: float  #: Kolmogorov-Smirnov statistic of (L - Delta^2/2) / Delta against N(0, 1)
    ks_p: float
    reduction_err: float  #: largest ``|L(y) - L|`` (full vs along the difference) over the reduction draws
    n_mc: int
    delta: float  #: the target delta
    eps: float
    delta_mc: float  #: plain Monte Carlo delta(eps)
    delta_mc_se: float
    delta_is: float  #: importance-sampling delta(eps)
    delta_is_se: float
    profile: float  #: Balle-Wang profile at sigma = 1 / Delta
    controls: dict[str, ControlDelta]  #: the NEGATIVE_CONTROLS, by name
    curve: tuple[ProfilePoint, ...] | None = None  #: the empirical profile over eps_grid
    L_outputs: NDArray[np.float64] | None = None  #: privacy losses of the actual releases (return_losses)

    @property
    def L_mean_se(self) -> float:
        """Standard error of L_mean under the predicted law."""
        return math.sqrt(self.L_var_pred / self.outputs)

    @property
    def L_var_se(self) -> float:
        """Standard error of L_var under the predicted (normal) law."""
        return self.L_var_pred * math.sqrt(2.0 / (self.outputs - 1))

    @property
    def passed(self) -> bool:
        """True when no privacy violation is seen.

        That is, delta(eps) <= delta + 4 SE (both estimates), and the actual releases'
        privacy loss has the law the estimates assume (mean and variance within 4 SE, KS
        p-value > 1e-3)."""
        return bool(
            self.delta_mc <= self.delta + 4 * self.delta_mc_se
            and self.delta_is <= self.delta + 4 * self.delta_is_se
            and abs(self.L_mean - self.L_mean_pred) < 4 * self.L_mean_se
            and abs(self.L_var - self.L_var_pred) < 4 * self.L_var_se
            and self.ks_p > 1e-3
        )

    def as_dict(self) -> dict[str, Any]:
        """The results as plain JSON material (without L_outputs, and curve only when computed)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "L_outputs" or (f.name == "curve" and v is None):
                continue
            if f.name == "controls":
                v = {name: c._asdict() for name, c in v.items()}
            elif f.name == "curve":
                v = [p._asdict() for p in v]
            out[f.name] = v
        return out


def privacy_check(
    sigma: ArrayLike,
    *,
    n: int,
    eps: float,
    delta: float,
    rng: np.random.Generator,
    mu_hat: ArrayLike | None = None,
    p_clip: float | None = None,
    n_mc: int = 10**7,
    n_outputs: int = 2000,
    eps_grid: Iterable[float] | None = None,
    far: float = 10.0,
    mechanism: Callable[..., mechanisms.GaussianDataResult] | None = None,
    return_losses: bool = False,
) -> PrivacyCheck:
    """Empirical delta(eps) of Algorithm 3 on a worst-case pair, from its actual outputs.

    1. :func:`worst_case_pair` builds X ~ X'; the noise-free releases m = E[M(X)],
       m' = E[M(X')] and the noise scales s come from the mechanism
       (``noise=False``), and the check measures how far ||T - T'|| is from 2 C.
    2. ``n_outputs`` actual releases M(X): their privacy loss L = log p/p'
       (:func:`privacy_loss`) must be N(Delta^2/2, Delta^2) with
       Delta = ||(m - m') / s||, which is 1 / sigma_opt for the calibrated mechanism.
    3. L depends on the release only through its component along (m - m') / s^2,
       so delta(eps) = E_P[(1 - e^(eps - L))_+] is estimated from ``n_mc``
       one-dimensional draws along that direction: plain Monte Carlo, and
       importance sampling shifted to L = eps (:func:`gaussian_loss_delta`); the
       loss of the first 10^4 draws is also computed from the full d-dimensional
       densities as a check of the reduction.  Both are compared with the
       Balle-Wang profile at sigma = 1 / Delta.
    4. Negative controls (:data:`NEGATIVE_CONTROLS`): delta(eps) of the same pair
       with the noise scaled down (sensitivity C instead of 2 C; 2% too small),
       which must come out far above delta.
    5. With ``eps_grid``: the empirical profile delta(e) for each e (n_mc // 10 draws).

    Random numbers are drawn from ``rng`` in this order: the pair, the releases,
    the plain draws, the shifted draws, the controls, the curve.

    Parameters
    ----------
    sigma : array_like, shape (d,), finite, > 0
    n : int >= 2
    eps : float, finite and > 0
    delta : float in (0, 1)
    rng : numpy.random.Generator
    mu_hat : array_like, shape (d,), optional (default 0)
    p_clip : float in (0, 1), optional (default 1 / n)
    n_mc : int >= 10^4
    n_outputs : int >= 3
    eps_grid : sequence of float > 0, optional
    far : float > 1
        Distance of the differing rows from mu_hat, in radii.
    mechanism : callable, optional
        A function with the signature and result of
        :func:`egmlib.mechanisms.algorithm3` (the default), e.g. a
        deliberately miscalibrated variant as a control; the pair is Algorithm 3's.
    return_losses : bool
        Keep the privacy losses of the actual releases in ``L_outputs``.

    Returns
    -------
    PrivacyCheck
    """
    sigma = _v.check_positive_vector("sigma", sigma)
    mu_hat = (np.zeros(sigma.size) if mu_hat is None
              else _v.check_finite_vector("mu_hat", mu_hat, length=sigma.size, of=_PER_SIGMA))
    n = _v.check_count("n", n, minimum=2, maximum=_N_MAX)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    rng = _v.check_rng("rng", rng)
    p = _v.check_probability("p_clip", 1.0 / n if p_clip is None else p_clip)
    n_mc = _v.check_count("n_mc", n_mc, minimum=_REDUCTION_DRAWS, maximum=_DRAWS_MAX)
    n_outputs = _v.check_count("n_outputs", n_outputs, minimum=3, maximum=10**6)
    if eps_grid is not None:
        grid = _v.as_real_array("eps_grid", eps_grid)
        eps_grid = [_v.check_positive_finite("eps_grid entry", e) for e in grid.ravel()]
    mechanism = mechanisms.algorithm3 if mechanism is None else _v.check_callable("mechanism", mechanism)
    return_losses = _v.check_bool("return_losses", return_losses)
    if calibration.sigma_opt(eps=eps, delta=delta) < 1e-154:  # 1 / sigma_opt^2 overflows
        raise ValueError(
            f"eps is too large for the audit: the privacy loss of the calibrated mechanism has "
            f"variance 1/sigma_opt^2 beyond the float64 range, got eps={eps!r}"
        )

    X, Xp = worst_case_pair(sigma, n=n, rng=rng, mu_hat=mu_hat, p_clip=p, far=far)
    kw = dict(sigma=sigma, mu_hat=mu_hat, eps=eps, delta=delta, p_clip=p)
    r = mechanism(X, rng=None, noise=False, **kw)
    rp = mechanism(Xp, rng=None, noise=False, **kw)
    m, mp, s = np.array(r.clipped_sum), np.array(rp.clipped_sum), np.array(r.noise_std)
    dT = np.array(r.transformed_sum) - np.array(rp.transformed_sum)
    sens_rel_err = abs(float(np.linalg.norm(dT)) / (2.0 * r.C) - 1.0)
    v = (m - mp) / s
    Delta = float(np.linalg.norm(v))
    # 2. actual releases
    Y = np.array([mechanism(X, rng=rng, noise=True, **kw).sum for _ in range(n_outputs)])
    L_out = privacy_loss(Y, mean=m, mean_prime=mp, std=s)
    z_out = (L_out - 0.5 * Delta**2) / Delta
    ks = stats.kstest(z_out, "norm")
    # 3. Monte Carlo along the difference
    e1 = v / Delta
    z = rng.standard_normal(n_mc)
    L = Delta * z + 0.5 * Delta**2
    k = _REDUCTION_DRAWS
    yk = m + s * (z[:k, None] * e1[None, :])
    red_err = float(np.max(np.abs(privacy_loss(yk, mean=m, mean_prime=mp, std=s) - L[:k])))
    f = -np.expm1(eps - L)
    f[f < 0] = 0.0
    d_mc, se_mc = float(f.mean()), float(f.std(ddof=1) / math.sqrt(n_mc))
    d_is, se_is = gaussian_loss_delta(Delta, eps=eps, n_draws=n_mc, rng=rng)
    profile = float(calibration.privacy_profile(1.0 / Delta, eps=eps))
    # 4. negative controls: the same pair released with too little noise
    controls = {}
    for name, factor in NEGATIVE_CONTROLS:
        dc, sec = gaussian_loss_delta(Delta / factor, eps=eps, n_draws=n_mc, rng=rng)
        controls[name] = ControlDelta(delta_is=dc, delta_is_se=sec,
                                      profile=float(calibration.privacy_profile(factor / Delta, eps=eps)))
    curve = None
    if eps_grid is not None:
        points = []
        for e in eps_grid:
            try:
                de, see = gaussian_loss_delta(Delta, eps=e, n_draws=n_mc // 10, rng=rng)
            except ValueError as exc:
                raise ValueError(f"eps_grid entry {e!r}: {exc}") from None
            points.append(ProfilePoint(eps=float(e), delta_is=de, delta_is_se=see,
                                       profile=float(calibration.privacy_profile(1.0 / Delta, eps=float(e)))))
        curve = tuple(points)
    return PrivacyCheck(
        n=n, C=float(r.C), sigma_opt=float(r.sigma_opt), n_clipped_X=int(r.n_clipped),
        sens_rel_err=sens_rel_err, Delta=Delta, Delta_times_sigma_opt=Delta * float(r.sigma_opt),
        outputs=n_outputs, L_mean=float(L_out.mean()), L_var=float(L_out.var(ddof=1)),
        L_mean_pred=0.5 * Delta**2, L_var_pred=Delta**2, ks_stat=float(ks.statistic),
        ks_p=float(ks.pvalue), reduction_err=red_err, n_mc=n_mc, delta=delta, eps=eps,
        delta_mc=d_mc, delta_mc_se=se_mc, delta_is=d_is, delta_is_se=se_is, profile=profile,
        controls=controls, curve=curve, L_outputs=L_out if return_losses else None,
    )


# --------------------------------------------------------------------------------------- #
# The black-box audit
# --------------------------------------------------------------------------------------- #
#: The mechanism the audit runs: Algorithm 3.
ALGORITHM3: Callable[..., Any] = mechanisms.algorithm3

#: Negative controls of :func:`black_box_audit`: (name, noise factor).  The mechanism adds
#: ``factor`` times the noise its claim requires.
WEAKENED_FACTORS = (("10% less noise", 0.9), ("30% less noise", 0.7))

#: Overall confidence of every lower bound of the audit (each bound holds with at least
#: this probability over the mechanism's randomness; the union bound over the two or four
#: one-sided Clopper-Pearson bounds it uses is accounted for).
CONFIDENCE = 0.95


def _check_deltas(deltas: Any, *, open_interval: bool = False) -> list[float]:
    """The audited deltas: a non-empty list of numbers in [0, 1], or in (0, 1) where a claim's
    epsilon is computed at each (Theorem 2's profile is defined for 0 < delta < 1)."""
    arr = _v.as_real_array("deltas", deltas).ravel()
    for x in arr:
        if open_interval:
            _v.check_probability("deltas entry", float(x))
        else:
            _v.check_closed_interval("deltas entry", float(x), low=0.0, high=1.0)
    return [float(x) for x in arr]


def _check_factors(factors: Any) -> list[tuple[str, float]]:
    """The audited mechanisms: a non-empty sequence of (name, noise factor > 0) pairs."""
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Iterable):
        raise TypeError("factors must be a sequence of (name, noise factor) pairs, got factors of type "
                        f"{type(factors).__name__}")
    out = []
    for entry in factors:
        if not isinstance(entry, (tuple, list)):
            raise TypeError("factors must hold (name, noise factor) pairs, got an entry of type "
                            f"{type(entry).__name__}")
        if len(entry) != 2:
            raise ValueError(f"factors must hold (name, noise factor) pairs, got an entry of length {len(entry)}")
        name, factor = entry
        if not isinstance(name, str):
            raise TypeError(f"factors' names must be strings, got a name of type {type(name).__name__}")
        out.append((name, _v.check_positive_finite("factors' noise factor", factor)))
    if not out:
        raise ValueError("factors must name at least one mechanism, got an empty factors")
    return out


def released(result: Any) -> NDArray[np.float64]:
    """The private release of a mechanism's result, and nothing else.

    Algorithm 3's results release a private sum, ``sum``; the peers' pipelines release a
    private mean, ``estimate``.  The attack only ever sees this vector.
    """
    out = getattr(result, "sum", None)
    if out is None or callable(out):
        out = getattr(result, "estimate", None)
    if out is None or callable(out):
        raise TypeError("result must be a mechanism's result with a released vector `sum` (Algorithm 3) "
                        f"or `estimate` (a peer's pipeline), got result of type {type(result).__name__}")
    return _v.check_finite_array("result's release", out)


def clopper_pearson(k: int, n: int, *, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds (lo, hi) on a binomial proportion, each at level alpha.

    ``P(p < lo) <= alpha`` and ``P(p > hi) <= alpha`` for k ~ Bin(n, p) (Clopper and
    Pearson 1934): lo is the alpha-quantile of Beta(k, n - k + 1) (0 if k = 0), hi the
    (1 - alpha)-quantile of Beta(k + 1, n - k) (1 if k = n).  ``alpha`` must be at least
    1e-40 (below about 1e-100 scipy's Beta quantiles are wrong), ``n`` at most 2^53.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, alpha=0.05)
    >>> lo, round(hi, 4)                       # the "rule of three": about 3/n
    (0.0, 0.0295)
    """
    n = _v.check_count("n", n, minimum=1, maximum=_COUNT_MAX)
    k = _v.check_count("k", k, minimum=0, maximum=n)
    return _clopper_pearson(k, n, _check_alpha(alpha))


def _clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """:func:`clopper_pearson` without its checks (alpha down to _ALPHA_MIN / 2)."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))
    return lo, hi


def eps_lower_bound(tp: int, fp: int, *, n_pos: int, n_neg: int, delta: float,
                    alpha: float = 1.0 - CONFIDENCE, both_directions: bool = True) -> float:
    """Lower bound on epsilon at delta from one test's counts (hypothesis-testing DP).

    A test rejects ("the output came from X") with true positive rate TPR = P_X(reject)
    and false positive rate FPR = P_X'(reject).  If the mechanism is (eps, delta)-DP then
    TPR <= e^eps FPR + delta and, for the complementary test run the other way,
    1 - FPR <= e^eps (1 - TPR) + delta (Kairouz, Oh and Viswanath 2015, Theorem 2.1).
    Replacing TPR by a lower and FPR by an upper Clopper-Pearson bound
    (:func:`clopper_pearson`) gives

        eps_lb = max(log((TPR_lo - delta) / FPR_hi), log((1 - FPR_hi - delta) / (1 - TPR_lo)))

    (0 where neither is positive), which holds with probability at least 1 - alpha: the
    two one-sided bounds are each taken at level alpha / 2, and they serve both
    directions at once.  ``tp`` of ``n_pos`` outputs from X rejected, ``fp`` of ``n_neg``
    outputs from X' rejected.

    Examples
    --------
    >>> round(eps_lower_bound(900, 100, n_pos=1000, n_neg=1000, delta=1e-6), 2)
    1.99
    """
    n_pos = _v.check_count("n_pos", n_pos, minimum=1, maximum=_COUNT_MAX)
    n_neg = _v.check_count("n_neg", n_neg, minimum=1, maximum=_COUNT_MAX)
    tp = _v.check_count("tp", tp, minimum=0, maximum=n_pos)
    fp = _v.check_count("fp", fp, minimum=0, maximum=n_neg)
    delta = _v.check_closed_interval("delta", delta, low=0.0, high=1.0)
    alpha = _check_alpha(alpha)
    both_directions = _v.check_bool("both_directions", both_directions)
    tpr_lo = _clopper_pearson(tp, n_pos, alpha / 2)[0]
    fpr_hi = _clopper_pearson(fp, n_neg, alpha / 2)[1]
    best = 0.0
    if tpr_lo - delta > 0.0 and fpr_hi > 0.0:
        best = max(best, math.log((tpr_lo - delta) / fpr_hi))
    if both_directions and 1.0 - fpr_hi - delta > 0.0 and 1.0 - tpr_lo > 0.0:
        best = max(best, math.log((1.0 - fpr_hi - delta) / (1.0 - tpr_lo)))
    return best


class AttackResult(NamedTuple):
    """One threshold test of :func:`distinguishing_attack`, scored on the held-out half."""

    delta: float  #: the delta at which the bound is stated
    threshold: float  #: on the statistic, chosen on the training half
    direction: int  #: 1 to flag X when T > threshold, -1 to flag X' when T <= threshold
    tp: int  #: held-out outputs of the flagged dataset that are flagged
    fp: int  #: held-out outputs of the other dataset that are flagged
    n_pos: int
    n_neg: int
    eps_lb: float  #: :func:`eps_lower_bound` of the held-out counts (one direction, fixed in advance)


def _one_direction_lb(tp: np.ndarray, fp: np.ndarray, n_pos: int, n_neg: int, delta: float,
                      alpha: float) -> np.ndarray:
    """Vectorised log((TPR_lo - delta)/FPR_hi) over many thresholds (-inf where undefined)."""
    tp, fp = np.asarray(tp), np.asarray(fp)
    lo = np.where(tp > 0, stats.beta.ppf(alpha, np.maximum(tp, 1), n_pos - tp + 1), 0.0)
    hi = np.where(fp < n_neg, stats.beta.ppf(1.0 - alpha, fp + 1, np.maximum(n_neg - fp, 1)), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((lo - delta > 0) & (hi > 0), np.log((lo - delta) / hi), -np.inf)
    return out


def distinguishing_attack(Y: ArrayLike, Y_prime: ArrayLike, *, deltas: Iterable[float],
                          alpha: float = 1.0 - CONFIDENCE, n_thresholds: int = 400) -> list[AttackResult]:
    """A black-box distinguishing attack on two samples of releases; one result per delta.

    ``Y`` holds releases of M(X), ``Y_prime`` of M(X') (one per row, same count).  The first
    half of each is for training, the second for scoring, so the threshold and direction are
    fixed before the scored outputs are looked at:

    1. direction w = (mean_X - mean_X') / v on the training half, v the pooled
       per-coordinate variance (the likelihood-ratio direction for Gaussian releases with
       diagonal covariance, learned from the outputs only);
    2. statistic T(y) = w . y;
    3. for each delta: among ``n_thresholds`` candidate thresholds (quantiles of the pooled
       training statistic) and both directions, the one with the largest
       :func:`eps_lower_bound`-style bound on the training half;
    4. that single test scored on the held-out half: the one-sided bound in its chosen
       direction, at level alpha / 2 for each rate (holds with probability >= 1 - alpha).

    Returns
    -------
    list of AttackResult
    """
    Y = _v.check_finite_array("Y", Y, ndim=2)
    Yp = _v.check_finite_array("Y_prime", Y_prime, ndim=2)
    if Y.shape != Yp.shape or Y.shape[0] < 4:
        raise ValueError(f"Y and Y_prime must have the same shape with at least 4 rows, got {Y.shape} "
                         f"and {Yp.shape}")
    alpha = _check_alpha(alpha)
    n_thresholds = _v.check_count("n_thresholds", n_thresholds, minimum=2, maximum=10**5)
    deltas = _check_deltas(deltas)
    # T(y) = w . y is invariant under a common rescaling of Y and Y_prime (w scales inversely):
    # where the largest magnitude is extreme, dividing by it keeps the variances finite for
    # entries near 1e308 and non-zero for subnormal ones (ordinary data are left untouched).
    scale = float(max(np.max(np.abs(Y)), np.max(np.abs(Yp))))
    if scale > 0.0 and not 1e-100 < scale < 1e100:
        Y, Yp = Y / scale, Yp / scale
    h = Y.shape[0] // 2
    tr, trp, te, tep = Y[:h], Yp[:h], Y[h:], Yp[h:]
    v = 0.5 * (tr.var(axis=0, ddof=1) + trp.var(axis=0, ddof=1))
    v = np.where(v > 0, v, 1.0)
    w = (tr.mean(axis=0) - trp.mean(axis=0)) / v
    t_tr, t_trp, t_te, t_tep = tr @ w, trp @ w, te @ w, tep @ w
    cand = np.quantile(np.r_[t_tr, t_trp], np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1])
    s_tr, s_trp = np.sort(t_tr), np.sort(t_trp)
    above = h - np.searchsorted(s_tr, cand, side="right")  # T > c among X's training outputs
    above_p = h - np.searchsorted(s_trp, cand, side="right")
    out = []
    for delta in deltas:
        # direction +1: reject when T > c (TP = above, FP = above_p); -1: when T <= c
        plus = _one_direction_lb(above, above_p, h, h, delta, alpha / 2)
        minus = _one_direction_lb(h - above_p, h - above, h, h, delta, alpha / 2)
        if np.max(plus) >= np.max(minus):
            c, direction = float(cand[int(np.argmax(plus))]), 1
        else:
            c, direction = float(cand[int(np.argmax(minus))]), -1
        n_pos, n_neg = te.shape[0], tep.shape[0]
        if direction == 1:
            tp, fp = int(np.sum(t_te > c)), int(np.sum(t_tep > c))
            lb = eps_lower_bound(tp, fp, n_pos=n_pos, n_neg=n_neg, delta=delta, alpha=alpha,
                                 both_directions=False)
        else:  # the test "from X' if T > c": its TP are X' outputs above c, FP X outputs above c
            tp, fp = int(np.sum(t_tep <= c)), int(np.sum(t_te <= c))
            lb = eps_lower_bound(tp, fp, n_pos=n_neg, n_neg=n_pos, delta=delta, alpha=alpha,
                                 both_directions=False)
        out.append(AttackResult(delta=delta, threshold=c, direction=direction, tp=tp, fp=fp,
                                n_pos=n_pos, n_neg=n_neg, eps_lb=lb))
    return out


def weakened_algorithm3(factor: float) -> Callable[..., Any]:
    """Algorithm 3 that adds ``factor`` times the noise its (eps, delta) claim requires.

    A negative control built by mis-calibration: the returned function takes Algorithm 3's
    arguments, and calls :data:`ALGORITHM3` with eps replaced by
    eps' = eps_from_sigma(factor * sigma_opt(eps, delta), delta), so the noise standard
    deviation 2 C sigma_opt(eps', delta) is ``factor`` times the claimed one.  With
    factor = 1 it is Algorithm 3 itself.
    """
    factor = _v.check_positive_finite("factor", factor)

    def mechanism(X: Any, *, eps: float, delta: float, **kw: Any) -> Any:
        eps_used = calibration.eps_from_sigma(factor * calibration.sigma_opt(eps=eps, delta=delta), delta=delta)
        return ALGORITHM3(X, eps=eps_used, delta=delta, **kw)

    mechanism.__name__ = f"algorithm3_noise_times_{factor:g}"
    return mechanism


def run_releases(mechanism: Callable[..., Any], X: ArrayLike, *, trials: int,
                 rng: np.random.Generator, **kw: Any) -> NDArray[np.float64]:
    """``trials`` independent releases of ``mechanism(X, rng=rng, **kw)``, one per row."""
    mechanism = _v.check_callable("mechanism", mechanism)
    trials = _v.check_count("trials", trials, minimum=1, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    return np.array([released(mechanism(X, rng=rng, **kw)) for _ in range(trials)])


class AuditRow(NamedTuple):
    """One audited mechanism of :func:`black_box_audit`."""

    name: str
    noise_factor: float  #: noise added / noise the claim requires (1 for the honest mechanism)
    claimed_eps: dict[float, float]  #: the claim's epsilon at each audited delta
    true_eps: dict[float, float]  #: epsilon of the noise actually added (known for the controls)
    attacks: list[AttackResult]  #: one per audited delta

    @property
    def caught(self) -> dict[float, bool]:
        """Whether the lower bound exceeds the claim (the claim refuted at CONFIDENCE), by delta."""
        return {a.delta: a.eps_lb > self.claimed_eps[a.delta] for a in self.attacks}


def black_box_audit(sigma: ArrayLike, *, n: int, eps: float, delta: float, trials: int,
                    rng: np.random.Generator, deltas: Iterable[float],
                    factors: Iterable[tuple[str, float]] = (("Algorithm 3", 1.0),) + WEAKENED_FACTORS,
                    far: float = 10.0) -> list[AuditRow]:
    """The black-box audit of Algorithm 3 and its weakened controls on one worst-case pair.

    :func:`worst_case_pair` (n rows, d = len(sigma), centre 0, p_C = 1/n) gives X ~ X';
    each mechanism in ``factors`` (:func:`weakened_algorithm3`) is run ``trials`` times on
    X and on X' (half for training the attack, half for scoring it), and
    :func:`distinguishing_attack` turns the outputs into a lower bound on epsilon at each
    delta in ``deltas``.  The claim at delta' is Theorem 2's exact profile of the claimed
    noise, eps_from_sigma(sigma_opt(eps, delta), delta') -- the same calibration that gives
    (eps, delta) also gives (eps', delta') for every delta' on that curve.

    Random numbers: the pair, then for each mechanism the releases on X, then on X'.
    """
    sigma = _v.check_positive_vector("sigma", sigma)
    n = _v.check_count("n", n, minimum=2, maximum=10**6)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    trials = _v.check_count("trials", trials, minimum=4, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    deltas = _check_deltas(deltas, open_interval=True)
    factors = _check_factors(factors)
    X, Xp = worst_case_pair(sigma, n=n, rng=rng, far=far)
    s_claim = calibration.sigma_opt(eps=eps, delta=delta)
    kw = dict(sigma=sigma, mu_hat=np.zeros(sigma.size), eps=eps, delta=delta, p_clip=1.0 / n)
    rows = []
    for name, factor in factors:
        mech = weakened_algorithm3(factor)
        Y = run_releases(mech, X, trials=trials, rng=rng, **kw)
        Yp = run_releases(mech, Xp, trials=trials, rng=rng, **kw)
        attacks = distinguishing_attack(Y, Yp, deltas=deltas)
        rows.append(AuditRow(
            name=name, noise_factor=float(factor),
            claimed_eps={dd: calibration.eps_from_sigma(s_claim, delta=dd) for dd in deltas},
            true_eps={dd: calibration.eps_from_sigma(factor * s_claim, delta=dd) for dd in deltas},
            attacks=attacks))
    return rows


def pipeline_audit(sigma: ArrayLike, *, n: int, rho: float, trials: int, rng: np.random.Generator,
                   deltas: Iterable[float], lower: float, upper: float, far: float = 10.0,
                   pipeline: Callable[..., Any] | None = None) -> AuditRow:
    """The black-box audit of the end-to-end private Algorithm 3 (scales, centre, release).

    ``pipeline`` defaults to ``egmlib.peers.arms.ARMS["Alg3"]`` (the robust pipeline
    :func:`egmlib.peers.algorithm3_robust.algorithm3_robust`) when the library has it, and
    otherwise to :func:`egmlib.peers.algorithm3.algorithm3_private` (private scales and centre
    from the data, then Algorithm 3; rho-zCDP in total).  Same pair as
    :func:`black_box_audit` (its universe [lower, upper] must contain it), same attack; the
    claim at delta' is the library's conversion :func:`egmlib.calibration.rho_to_eps`, an
    upper bound on the pipeline's epsilon, so a lower bound above it would refute it.
    """
    pipeline = default_pipeline() if pipeline is None else _v.check_callable("pipeline", pipeline)
    sigma = _v.check_positive_vector("sigma", sigma)
    rho = _v.check_positive_finite("rho", rho)
    trials = _v.check_count("trials", trials, minimum=4, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    deltas = _check_deltas(deltas, open_interval=True)
    lower, upper = _v.check_bounds(lower, upper)
    X, Xp = worst_case_pair(sigma, n=n, rng=rng, far=far)
    if not (X.min() > lower and Xp.min() > lower and X.max() < upper and Xp.max() < upper):
        raise ValueError(f"lower and upper must contain the pair, got [{lower}, {upper}] for data in "
                         f"[{min(X.min(), Xp.min()):.3g}, {max(X.max(), Xp.max()):.3g}]")
    kw = dict(rho=rho, lower=lower, upper=upper)
    Y = run_releases(pipeline, X, trials=trials, rng=rng, **kw)
    Yp = run_releases(pipeline, Xp, trials=trials, rng=rng, **kw)
    attacks = distinguishing_attack(Y, Yp, deltas=deltas)
    claim = {dd: calibration.rho_to_eps(rho, delta=dd) for dd in deltas}
    name = getattr(pipeline, "name", None) or getattr(pipeline, "__name__", "pipeline")
    return AuditRow(name=str(name), noise_factor=1.0, claimed_eps=claim,
                    true_eps=claim, attacks=attacks)


def default_pipeline() -> Callable[..., Any]:
    """``egmlib.peers.arms.ARMS["Alg3"]`` if present, else ``algorithm3_private``."""
    try:
        from egmlib.peers.arms import ARMS  # type: ignore[import-not-found]
        return ARMS["Alg3"]
    except (ImportError, KeyError):
        from egmlib.peers.algorithm3 import algorithm3_private
        return algorithm3_private


def expected_eps_lower_bound(mu: float, *, trials: int, delta: float,
                             alpha: float = 1.0 - CONFIDENCE) -> float:
    """The lower bound the attack reaches at the expected counts, for Gaussian releases.

    For releases whose statistic is N(0, 1) under X' and N(mu, 1) under X (mu = 1/sigma for
    the Gaussian mechanism at noise multiplier sigma), the best threshold test has
    FPR = Phi(-t), TPR = Phi(mu - t); this is the largest :func:`eps_lower_bound` over t
    (both directions) with counts rounded from ``trials`` held-out outputs per dataset.
    The attack's realised bound scatters around it.
    """
    mu = _v.check_positive_finite("mu", mu)
    trials = _v.check_count("trials", trials, minimum=1, maximum=10**12)
    delta = _v.check_closed_interval("delta", delta, low=0.0, high=1.0)
    alpha = _check_alpha(alpha)
    t = np.linspace(-4.0, mu + 8.0, 600)
    tp = np.rint(stats.norm.sf(t - mu) * trials).astype(np.int64)
    fp = np.rint(stats.norm.sf(t) * trials).astype(np.int64)
    plus = _one_direction_lb(tp, fp, trials, trials, delta, alpha / 2)
    return float(max(0.0, np.max(plus)))


def trials_needed(factor: float, *, sigma_claim: float, delta: float,
                  alpha: float = 1.0 - CONFIDENCE) -> int:
    """Held-out outputs per dataset for the attack to refute a claim at the expected counts.

    The mechanism claims noise multiplier ``sigma_claim`` (Theorem 2's profile gives its
    claim eps_from_sigma(sigma_claim, delta)) but adds ``factor`` times that noise; this is the
    smallest number of held-out outputs per dataset (to 2 significant digits, by bisection
    on a log scale) at which :func:`expected_eps_lower_bound` exceeds the claim.  A
    property of this attack and this pair, not of every audit.
    """
    factor = _v.check_positive_finite("factor", factor)
    sigma_claim = _v.check_positive_finite("sigma_claim", sigma_claim)
    if not factor < 1.0:
        raise ValueError(f"factor must be < 1 (less noise than claimed), got factor={factor!r}")
    delta = _v.check_probability("delta", delta)
    alpha = _check_alpha(alpha)
    mu = 1.0 / (factor * sigma_claim)
    if not (math.isfinite(mu) and mu > 0.0):
        raise ValueError(f"factor * sigma_claim must be a positive noise multiplier with a finite inverse, got "
                         f"factor={factor!r} and sigma_claim={sigma_claim!r}")
    claim = calibration.eps_from_sigma(sigma_claim, delta=delta)

    def caught(N: int) -> bool:
        return expected_eps_lower_bound(mu, trials=N, delta=delta, alpha=alpha) > claim

    hi = 100
    while not caught(hi):
        hi *= 4
        if hi > 10**12:
            raise ValueError("no number of trials up to 1e12 catches this control at the expected counts: "
                             f"factor={factor!r} is too close to 1 or sigma_claim={sigma_claim!r} too large "
                             f"(claim eps={claim:.3g} at delta={delta!r}, bounds at level alpha={alpha!r})")
    lo = max(1, hi // 4)
    while hi / lo > 1.01:
        mid = int(math.sqrt(lo * hi))
        lo, hi = (lo, mid) if caught(mid) else (mid, hi)
    return int(float(f"{hi:.2g}"))


# --------------------------------------------------------------------------------------- #
# The book's audit run (chapter 7b), cached in data/privacy_audit.json
# --------------------------------------------------------------------------------------- #
#: The setting of chapter 7b's audit.  eps = 8 at delta = 1e-6 is the claim; the attack's
#: power depends on the noise multiplier only, and at this claim 10^4 held-out outputs per
#: dataset catch a 10% noise deficit (:func:`trials_needed`: about 4 x 10^3 needed at the
#: expected counts), which at eps = 1 would take about 4 x 10^4.  PRIMARY_DELTA is fixed in
#: advance as the delta at which "caught" is decided; the other deltas trace the curve.
AUDIT_SETTING: dict[str, Any] = dict(d=10, zipf_alpha=1.0, n=100, eps=8.0, delta=1e-6, trials=20_000,
                                     deltas=(1e-6, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.2, 0.3),
                                     primary_delta=0.1, seed=20261126, pipeline_n=2000,
                                     pipeline_trials=1_200, pipeline_bounds=(-10.0, 10.0))


def _row_json(row: AuditRow) -> dict[str, Any]:
    return {"name": row.name, "noise_factor": row.noise_factor,
            "claimed_eps": [[k, v] for k, v in row.claimed_eps.items()],
            "true_eps": [[k, v] for k, v in row.true_eps.items()],
            "attacks": [a._asdict() for a in row.attacks]}


def row_from_json(rec: dict[str, Any]) -> AuditRow:
    """Inverse of the cache's record of one :class:`AuditRow`."""
    return AuditRow(name=rec["name"], noise_factor=float(rec["noise_factor"]),
                    claimed_eps={float(k): float(v) for k, v in rec["claimed_eps"]},
                    true_eps={float(k): float(v) for k, v in rec["true_eps"]},
                    attacks=[AttackResult(**a) for a in rec["attacks"]])


def book_pipelines() -> list[Callable[..., Any]]:
    """The pipelines chapter 7b audits: :func:`default_pipeline` and, when that is not it,
    :func:`egmlib.peers.algorithm3.algorithm3_private` (chapter 8's pipeline)."""
    from egmlib.peers.algorithm3 import algorithm3_private

    first = default_pipeline()
    return [first] if first is algorithm3_private else [first, algorithm3_private]


def _book_pipeline_audit(st: dict[str, Any], sigma: NDArray[np.float64]) -> tuple[list[AuditRow], float]:
    """The pipeline part of :func:`run_book_audit` (pipeline k on its own random stream, seed + 1 + k)."""
    rho = calibration.eps_to_rho(st["eps"], delta=st["delta"])
    lo, hi = st["pipeline_bounds"]
    rows = [pipeline_audit(sigma, n=st["pipeline_n"], rho=rho, trials=st["pipeline_trials"],
                           rng=np.random.default_rng(st["seed"] + 1 + k), deltas=st["deltas"], lower=lo,
                           upper=hi, pipeline=pipe)
            for k, pipe in enumerate(book_pipelines())]
    return rows, rho


def run_book_audit(setting: dict[str, Any] | None = None) -> dict[str, Any]:
    """Chapter 7b's audit: Algorithm 3, its two weakened controls and the private pipeline.

    Plain JSON material; ``python -m egmbook.privacy_audit`` writes it to
    ``data/privacy_audit.json`` (several minutes on one core: 1.2 x 10^5 runs of Algorithm 3
    on n = 100 rows and 2.4 x 10^3 of each pipeline on n = 2000 rows; the pipelines need
    more rows than Algorithm 3 because at n = 100 their private scales and centre are so
    noisy that one row's influence is lost in them).
    """
    from egmbook.experiments import zipf_sigmas  # the book's Zipf law

    st = dict(AUDIT_SETTING if setting is None else setting)
    sigma = zipf_sigmas(st["d"], alpha=st["zipf_alpha"])
    rng = np.random.default_rng(st["seed"])
    rows = black_box_audit(sigma, n=st["n"], eps=st["eps"], delta=st["delta"], trials=st["trials"],
                           rng=rng, deltas=st["deltas"])
    pipes, rho = _book_pipeline_audit(st, sigma)
    st["deltas"] = list(st["deltas"])
    st["pipeline_bounds"] = list(st["pipeline_bounds"])
    return {"setting": st, "rho": rho, "pipelines": [_row_json(r) for r in pipes],
            "mechanisms": [_row_json(r) for r in rows]}


if __name__ == "__main__":  # pragma: no cover - writes the book's cache
    import json
    import sys
    from pathlib import Path

    default = Path(__file__).resolve().parents[1] / "data" / "privacy_audit.json"
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    out.write_text(json.dumps(run_book_audit(), indent=1) + "\n", encoding="utf-8")
    print("wrote", out)
