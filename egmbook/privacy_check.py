"""The white-box consistency check of Algorithm 3 on a worst-case pair (chapter 7a).

:func:`privacy_check` reads the mechanism's own noise-free sums and reported noise scales,
so it restates Theorem 2 for the implementation's bookkeeping rather than auditing its
releases (chapter 7b's black-box audit, :mod:`egmbook.privacy_audit`, does that):

* :func:`egmbook.neighbours.worst_case_pair` -- neighbouring datasets whose clipped sums
  differ by exactly 2 C (the sensitivity is attained);
* :func:`privacy_loss` -- L(y) = log p(y) / p'(y) for two Gaussian releases with
  the same diagonal covariance;
* :func:`gaussian_loss_delta` -- delta(eps) = E[(1 - e^(eps - L))_+] for
  L ~ N(Delta^2 / 2, Delta^2), by importance sampling; its expectation is the
  Balle-Wang profile :func:`egmlib.calibration.privacy_profile` at sigma = 1/Delta;
* :func:`privacy_check` -- the white-box check (sensitivity attained, the law of the
  privacy loss computed from the reported scales, delta against the profile).

It does not see floating-point effects of the Gaussian sampler, nor the privacy of the
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

from egmbook.neighbours import worst_case_pair
from egmlib import calibration, mechanisms
from egmlib import validation as _v

__all__ = [
    "NEGATIVE_CONTROLS",
    "DeltaEstimate",
    "ControlDelta",
    "ProfilePoint",
    "PrivacyCheck",
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

    1. :func:`egmbook.neighbours.worst_case_pair` builds X ~ X'; the noise-free releases m = E[M(X)],
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
    release: Callable[..., mechanisms.GaussianDataResult] = (
        mechanisms.algorithm3 if mechanism is None else _v.check_callable("mechanism", mechanism))
    return_losses = _v.check_bool("return_losses", return_losses)
    if calibration.sigma_opt(eps=eps, delta=delta) < 1e-154:  # 1 / sigma_opt^2 overflows
        raise ValueError(
            f"eps is too large for the audit: the privacy loss of the calibrated mechanism has "
            f"variance 1/sigma_opt^2 beyond the float64 range, got eps={eps!r}"
        )

    X, Xp = worst_case_pair(sigma, n=n, rng=rng, mu_hat=mu_hat, p_clip=p, far=far)

    def mechanism_on(data: NDArray[np.float64], *, rng: np.random.Generator | None,
                     noise: bool) -> mechanisms.GaussianDataResult:
        """The mechanism under audit, with the audit's sigma, centre, budget and clipping."""
        return release(data, rng=rng, noise=noise, sigma=sigma, mu_hat=mu_hat, eps=eps, delta=delta, p_clip=p)

    r = mechanism_on(X, rng=None, noise=False)
    rp = mechanism_on(Xp, rng=None, noise=False)
    if r.sigma_opt is None:
        raise ValueError("mechanism must return sigma_opt (it is given eps and delta), got None")
    sigma_opt = float(r.sigma_opt)
    m, mp, s = np.array(r.clipped_sum), np.array(rp.clipped_sum), np.array(r.noise_std)
    dT = np.array(r.transformed_sum) - np.array(rp.transformed_sum)
    sens_rel_err = abs(float(np.linalg.norm(dT)) / (2.0 * r.C) - 1.0)
    v = (m - mp) / s
    Delta = float(np.linalg.norm(v))
    # 2. actual releases
    Y = np.array([mechanism_on(X, rng=rng, noise=True).sum for _ in range(n_outputs)])
    L_out = np.asarray(privacy_loss(Y, mean=m, mean_prime=mp, std=s), dtype=np.float64)  # one per release
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
        n=n, C=float(r.C), sigma_opt=sigma_opt, n_clipped_X=int(r.n_clipped),
        sens_rel_err=sens_rel_err, Delta=Delta, Delta_times_sigma_opt=Delta * sigma_opt,
        outputs=n_outputs, L_mean=float(L_out.mean()), L_var=float(L_out.var(ddof=1)),
        L_mean_pred=0.5 * Delta**2, L_var_pred=Delta**2, ks_stat=float(ks.statistic),
        ks_p=float(ks.pvalue), reduction_err=red_err, n_mc=n_mc, delta=delta, eps=eps,
        delta_mc=d_mc, delta_mc_se=se_mc, delta_is=d_is, delta_is_se=se_is, profile=profile,
        controls=controls, curve=curve, L_outputs=L_out if return_losses else None,
    )
