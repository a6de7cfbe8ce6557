"""Algorithms 1-3 of the report: private release of the vector sum f(X) = sum_i x_i.

* :func:`gaussian_mechanism` -- Algorithm 1, the Gaussian mechanism with the
  analytic calibration of Theorem 2 (eq. (2)); expected squared error eq. (1).
* :func:`elliptical_gaussian_mechanism` -- Algorithm 2, the Elliptical Gaussian
  Mechanism for box-bounded data with per-coordinate sensitivities Delta
  (eqs. (3)-(4)), scaling b of Theorem 3 by default; error eq. (6).
* :func:`algorithm3` -- Algorithm 3, the Elliptical Gaussian Mechanism
  for Gaussian data: centre at mu_hat, scale by the b of Lemma 4.1 (eq. (7)),
  clip to the radius C whose tail probability is p_clip, add isotropic noise of
  standard deviation 2 C sigma_opt in the transformed space, transform back;
  noise error eqs. (9) and (24).
* :func:`clipped_gaussian_mechanism` -- the report's baseline for Algorithm 3
  (Section 5, E_n): clip x_i - mu_hat to the radius C_n whose tail probability
  under the model is p_clip, then Algorithm 1 with sensitivity 2 C_n; noise
  error eq. (5) with ||Delta|| = 2 C_n.

Neighbouring datasets differ in one row (substitution, Definition 2.1).  Every
mechanism takes an explicit :class:`numpy.random.Generator` and returns a frozen
dataclass whose ``sum`` is the private release of the sum (in egmlib a result's
``estimate`` is always a private mean, as in :mod:`egmlib.peers`).  The other fields are what a
reader of the report inspects (noise scales, b, C, rows clipped ...).  Several of
them -- ``noise``, ``clipped_sum``, ``transformed_sum``, ``n_clipped`` -- are
functions of the data: they exist for tests and bias studies, and publishing any
of them voids the privacy guarantee.  Arrays in the results are read-only.

Floating point.  Algorithm 3 and its baseline sum their clipped rows with
:func:`egmlib.clipping.clipped_sum` (centred rows, in chunks) and calibrate their noise to
:func:`egmlib.clipping.sum_sensitivity`, ``2 C (1 + nu)``, which adds the bound on the
summation's rounding to the sensitivity 2 C (``nu`` is 1e-9 or less up to n = 1e5).
Algorithms 1 and 2 add noise to the plain column sum for a sensitivity the caller states:
it must bound the computed sums of neighbouring datasets, rounding included (for rows of
l2 norm at most M, ``clipping.sum_sensitivity(M, n=n, d=d)`` does).  The mechanisms draw
noise with numpy's Gaussian sampler, whose floating-point attacks on textbook samplers are
out of scope here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib import calibration, clipping, gchisq, scaling
from egmlib import validation as _v

__all__ = [
    "METHODS",
    "B_NORM_TOL",
    "RADIUS_CACHE_SIZE",
    "RADIUS_CACHE_MAX_D",
    "GaussianMechanismResult",
    "EllipticalGaussianResult",
    "GaussianDataResult",
    "gaussian_mechanism",
    "elliptical_gaussian_mechanism",
    "algorithm3",
    "clipped_gaussian_mechanism",
]

#: Tolerance on | ||b|| - 1 | for a caller-supplied scaling of Algorithm 2.
B_NORM_TOL = 1e-9

_PER_COLUMN = "one entry per column of X"

#: Radius cache size, at most this many (p_clip, weights) pairs, each kept only when the
#: weight vector has at most RADIUS_CACHE_MAX_D entries (so the cache holds at most
#: 256 * 8192 * 8 bytes = 16 MiB of keys).
RADIUS_CACHE_SIZE = 256
RADIUS_CACHE_MAX_D = 8192


# --------------------------------------------------------------------------- #
# results
# --------------------------------------------------------------------------- #
def _readonly(a: ArrayLike) -> NDArray[np.float64]:
    a = np.array(a, dtype=np.float64)  # always a private copy
    a.setflags(write=False)
    return a


class _NoiseErrorMixin:
    noise_std: NDArray[np.float64]

    @property
    def expected_noise_error(self) -> float:
        """E||noise||^2 = sum_j noise_std_j^2 (eq. (1) / (5), (6), (9) for Alg. 1, 2, 3)."""
        return scaling.gaussian_noise_error(self.noise_std)


@dataclass(frozen=True)
class GaussianMechanismResult(_NoiseErrorMixin):
    """Output of :func:`gaussian_mechanism` (Algorithm 1).

    Only ``sum``, the private release of sum_i x_i, is private.  ``noise`` is the
    drawn noise vector eta (``sum`` = the exact sum + ``noise``), kept for tests;
    never publish it.
    """

    sum: np.ndarray  #: (d,) the private release of sum_i x_i
    noise: np.ndarray  #: (d,) the noise eta added (diagnostic, not private)
    noise_std: np.ndarray  #: (d,) standard deviation of each noise coordinate
    sigma_opt: float  #: Theorem 2 sigma_opt(eps, delta) for unit sensitivity
    sensitivity: float  #: l2 sensitivity Delta(f) supplied by the caller
    eps: float
    delta: float
    n: int  #: number of rows of X

    def __post_init__(self):
        for name in ("sum", "noise", "noise_std"):
            object.__setattr__(self, name, _readonly(getattr(self, name)))


@dataclass(frozen=True)
class EllipticalGaussianResult(_NoiseErrorMixin):
    """Output of :func:`elliptical_gaussian_mechanism` (Algorithm 2).

    ``noise_std[j] = sigma_opt * Delta[j] / b[j]`` (0 where ``Delta[j] == 0``).
    Only ``sum`` is private; ``noise`` is kept for tests.
    """

    sum: np.ndarray  #: (d,) the private release of sum_i x_i
    noise: np.ndarray  #: (d,) the noise eta added (diagnostic, not private)
    noise_std: np.ndarray  #: (d,) sigma_opt * Delta_j / b_j
    b: np.ndarray  #: (d,) scaling vector used, ||b|| = 1
    Delta: np.ndarray  #: (d,) per-coordinate sensitivities, eq. (3)
    sigma_opt: float  #: Theorem 2 sigma_opt(eps, delta) for unit sensitivity
    eps: float
    delta: float
    n: int

    def __post_init__(self):
        for name in ("sum", "noise", "noise_std", "b", "Delta"):
            object.__setattr__(self, name, _readonly(getattr(self, name)))


@dataclass(frozen=True)
class GaussianDataResult:
    """Output of :func:`algorithm3` (Algorithm 3) and of
    :func:`clipped_gaussian_mechanism` (the baseline, which is the same release
    with b = 1: its "transformed" space is the original space centred at mu_hat).

    All vectors are in the original space except ``transformed_sum``.  Only
    ``sum`` is private (and only when ``noise_added``).  ``clipped_sum``,
    ``transformed_sum``, ``noise`` and ``n_clipped`` depend on the data and are
    returned for tests and bias studies only.

    Coordinates with ``sigma[j] == 0`` (``b[j] == inf``) are not used:
    ``sum[j] = clipped_sum[j] = n * mu_hat[j]``, ``noise_std[j] = 0``,
    ``transformed_sum[j] = 0``.
    """

    sum: np.ndarray  #: (d,) clipped_sum + noise
    clipped_sum: np.ndarray  #: (d,) sum_i clip(x_i) = T / b + n mu_hat (noiseless)
    transformed_sum: np.ndarray  #: (d,) T = sum_i clip_C((x_i - mu_hat) * b)
    noise: np.ndarray  #: (d,) eta / b in the original space (zeros if not noise_added)
    #: (d,) sensitivity * sigma_opt / b_j (what Algorithm 3 adds); None without a budget
    noise_std: np.ndarray | None
    b: np.ndarray  #: (d,) Lemma 4.1 scaling, inf where sigma_j == 0
    C: float  #: clipping radius in the transformed space
    p_clip: float  #: tail probability defining C
    n_clipped: int  #: rows with ||(x_i - mu_hat) * b|| > C (not private)
    n: int
    sigma_opt: float | None  #: Theorem 2 sigma_opt(eps, delta) for unit sensitivity (None without a budget)
    #: the l2 sensitivity of the computed T, 2 C (1 + nu) with nu the rounding bound of
    #: :func:`egmlib.clipping.rounding_slack` (about 1e-10 at the book's sizes)
    sensitivity: float
    transformed_noise_std: float | None  #: sensitivity * sigma_opt, per coordinate of T
    eps: float | None  #: None for the noiseless clipped sum called without a budget
    delta: float | None
    noise_added: bool  #: False for the noiseless clipped sum (noise=False)

    def __post_init__(self):
        for name in ("sum", "clipped_sum", "transformed_sum", "noise", "noise_std", "b"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _readonly(getattr(self, name)))

    @property
    def expected_noise_error(self) -> float:
        """E||noise||^2 = sum_j noise_std_j^2 (eqs. (5), (9) and (24)); needs the budget."""
        if self.noise_std is None:
            raise ValueError("expected_noise_error needs eps and delta: the clipped sum was computed "
                             "with noise=False and no budget")
        return scaling.gaussian_noise_error(self.noise_std)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def _column_sum(X: np.ndarray) -> NDArray[np.float64]:
    """sum_i x_i in float64 without copying X; ValueError on NaN/inf in the data."""
    with np.errstate(over="ignore"):  # an overflowing sum is reported just below
        s = np.asarray(np.sum(X, axis=0, dtype=np.float64))
    if not np.all(np.isfinite(s)):
        j = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ValueError(
            f"X must be finite: the sum of column {j} is {s[j]} "
            "(NaN or inf in the data, or overflow of the sum)"
        )
    return s


def _draw(rng: np.random.Generator, std: NDArray[np.float64]) -> NDArray[np.float64]:
    """eta_j ~ N(0, std_j^2), one standard normal per coordinate."""
    return std * rng.standard_normal(std.shape[0])


# --------------------------------------------------------------------------- #
# Algorithm 1
# --------------------------------------------------------------------------- #
def gaussian_mechanism(
    X: ArrayLike, *, eps: float, delta: float, sensitivity: float, rng: np.random.Generator
) -> GaussianMechanismResult:
    """Algorithm 1 (the Gaussian mechanism) for f(X) = sum_i x_i.

    Adds eta ~ N(0, (sensitivity * sigma_opt)^2 I_d) to the column sum, with
    sigma_opt(eps, delta) the smallest value satisfying eq. (2) (Theorem 2).
    Expected squared error d * (sensitivity * sigma_opt)^2, eq. (1); for box data
    with sensitivity ||Delta|| this is eq. (5).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Dataset, one row per individual; any array-like, including np.memmap.
    eps : float, finite and > 0
    delta : float in (0, 1)
    sensitivity : float, finite and > 0
        l2 sensitivity Delta(f) of the sum under substitution of one row
        (eq. (4)).  The guarantee holds only if this bound is true for the data
        domain; the mechanism does not clip and does not inspect the data for it.
    rng : numpy.random.Generator

    Returns
    -------
    GaussianMechanismResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5]])
    >>> r = gaussian_mechanism(X, eps=1.0, delta=1e-6, sensitivity=1.0,
    ...                        rng=np.random.default_rng(0))
    >>> bool(np.allclose(r.sum - r.noise, [1.0, 1.5]))
    True
    """
    X = _v.check_data_matrix("X", X)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    sensitivity = _v.check_positive_finite("sensitivity", sensitivity)
    rng = _v.check_rng("rng", rng)
    n, d = X.shape
    s_opt = float(calibration.sigma_opt(eps=eps, delta=delta))
    total = _column_sum(X)
    std = np.full(d, sensitivity * s_opt)
    _v.check_finite_result(std, what="the noise standard deviation sensitivity * sigma_opt", inputs="sensitivity")
    eta = _draw(rng, std)
    _v.check_finite_result(total + eta, what="the release sum + noise", inputs="X or sensitivity")
    return GaussianMechanismResult(
        sum=total + eta, noise=eta, noise_std=std, sigma_opt=s_opt,
        sensitivity=sensitivity, eps=eps, delta=delta, n=n,
    )


# --------------------------------------------------------------------------- #
# Algorithm 2
# --------------------------------------------------------------------------- #
def elliptical_gaussian_mechanism(
    X: ArrayLike,
    *,
    Delta: ArrayLike,
    eps: float,
    delta: float,
    rng: np.random.Generator,
    b: ArrayLike | None = None,
) -> EllipticalGaussianResult:
    """Algorithm 2 (the Elliptical Gaussian Mechanism) for f(X) = sum_i x_i.

    Coordinate j receives noise N(0, (sigma_opt * Delta_j / b_j)^2) where
    Delta_j bounds ``|x_ij - x'_ij|`` over all pairs of possible rows (eq. (3)) and
    ||b|| = 1.  Privacy: in the space scaled by b_j / Delta_j the sum has l2
    sensitivity ||b|| = 1, so N(0, sigma_opt^2 I) noise there (Theorem 2) and the
    inverse scaling (post-processing, Lemma 2.1) give (eps, delta)-DP.  With the
    default b of Theorem 3, b_j = sqrt(Delta_j / ||Delta||_1), the expected
    squared error is sigma_opt^2 ||Delta||_1^2 (eq. (6)).

    Coordinates with Delta_j = 0 are constant across neighbouring datasets and
    receive no noise (the limit Delta_j / b_j -> 0 of Theorem 3's scaling).

    Parameters
    ----------
    X : array_like, shape (n, d)
    Delta : array_like, shape (d,), finite, >= 0, at least one > 0
        Per-coordinate sensitivities.  The guarantee holds only if they bound the
        data domain; the mechanism does not inspect the data for it.
    eps : float, finite and > 0
    delta : float in (0, 1)
    rng : numpy.random.Generator
    b : array_like, shape (d,), optional
        Scaling vector with every b_j > 0 and ||b|| = 1 (within 1e-9; it is then
        renormalised so the transformed sensitivity is 1 to rounding).
        Default: Theorem 3's optimum (``scaling.egm_scaling(Delta)``).

    Returns
    -------
    EllipticalGaussianResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, 0.5]])
    >>> r = elliptical_gaussian_mechanism(X, Delta=[1.0, 4.0], eps=1.0, delta=1e-6,
    ...                                   rng=np.random.default_rng(0))
    >>> bool(np.allclose(r.b, [np.sqrt(0.2), np.sqrt(0.8)]))
    True
    >>> bool(np.allclose(r.noise_std, r.sigma_opt * np.sqrt([1.0 * 5.0, 4.0 * 5.0])))
    True
    """
    X = _v.check_data_matrix("X", X)
    n, d = X.shape
    Delta = _v.check_nonnegative_vector("Delta", Delta, length=d, of=_PER_COLUMN)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    rng = _v.check_rng("rng", rng)
    if b is None:
        b = np.asarray(scaling.egm_scaling(Delta), dtype=np.float64)
        # Theorem 3: Delta_j / b_j = sqrt(Delta_j * ||Delta||_1), no 0/0 at Delta_j = 0
        with np.errstate(over="ignore"):  # an overflow is reported with the noise scale below
            ratio = np.sqrt(Delta * np.sum(Delta))
    else:
        b = _v.check_positive_vector("b", b, length=d, of=_PER_COLUMN)
        with np.errstate(over="ignore"):  # an infinite norm fails the test below
            norm = math.sqrt(float(np.sum(b * b)))
        if not abs(norm - 1.0) <= B_NORM_TOL:
            raise ValueError(f"b must have l2 norm 1 (within {B_NORM_TOL}), got ||b||={norm!r}")
        b = b / norm
        with np.errstate(over="ignore"):  # an overflow is reported with the noise scale below
            ratio = Delta / b
    s_opt = float(calibration.sigma_opt(eps=eps, delta=delta))
    total = _column_sum(X)
    with np.errstate(over="ignore"):
        std = s_opt * ratio
    _v.check_finite_result(std, what="the noise standard deviation sigma_opt * Delta_j / b_j", inputs="Delta")
    eta = _draw(rng, std)
    _v.check_finite_result(total + eta, what="the release sum + noise", inputs="X or Delta")
    return EllipticalGaussianResult(
        sum=total + eta, noise=eta, noise_std=std, b=b, Delta=Delta,
        sigma_opt=s_opt, eps=eps, delta=delta, n=n,
    )


# --------------------------------------------------------------------------- #
# Algorithm 3
# --------------------------------------------------------------------------- #
# --------------------------------------------------------------------------- #
# the clipping radius (memoised)
# --------------------------------------------------------------------------- #
@functools.lru_cache(maxsize=RADIUS_CACHE_SIZE)
def _cached_quantile(p: float, w_bytes: bytes) -> float:
    return float(gchisq.isf(p, w=np.frombuffer(w_bytes, dtype=np.float64)))


def _clipping_radius(p: float, w: NDArray[np.float64]) -> float:
    """sqrt(gchisq.isf(p, w=w)): the radius C with P(sum_j w_j Z_j^2 > C^2) = p.

    Algorithm 3 and its baseline recompute their radius from the public inputs
    (p_clip, sigma) on every call, and a simulation calls them thousands of times
    with a few such pairs, so the quantile is memoised (least recently used, at
    most RADIUS_CACHE_SIZE pairs).  The key is p and the exact bytes of the float64
    weights, and gchisq.isf is a pure function, so the cache never changes a
    result; weight vectors longer than RADIUS_CACHE_MAX_D are not cached.
    """
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape[0] > RADIUS_CACHE_MAX_D:
        return math.sqrt(float(gchisq.isf(p, w=w)))
    return math.sqrt(_cached_quantile(float(p), w.tobytes()))


def _check_clipping_inputs(
    X: Any, sigma: Any, mu_hat: Any, eps: Any, delta: Any, rng: Any, p_clip: Any, noise: Any, chunk_rows: Any
) -> tuple[np.ndarray, NDArray[np.float64], NDArray[np.float64], float | None, float | None, Any, float, bool,
           int | None]:
    """The shared argument checks of Algorithm 3 and the clipped baseline."""
    X = _v.check_data_matrix("X", X)
    n, d = X.shape
    sigma = _v.check_nonnegative_vector("sigma", sigma, length=d, of=_PER_COLUMN)
    mu_hat = _v.check_finite_vector("mu_hat", mu_hat, length=d, of=_PER_COLUMN)
    noise = _v.check_bool("noise", noise)
    if noise or eps is not None or delta is not None:  # a budget: needed to add noise
        eps = _v.check_positive_finite("eps", eps)
        delta = _v.check_probability("delta", delta)
    if p_clip is None:
        if n < 2:
            raise ValueError(
                "p_clip must be in (0, 1); its default 1/n is 1 for n=1 rows (every row "
                "clipped), pass p_clip explicitly"
            )
        p_clip = 1.0 / n
    p_clip = _v.check_probability("p_clip", p_clip)
    if noise:
        rng = _v.check_rng("rng", rng)
    if chunk_rows is not None:
        chunk_rows = _v.check_count("chunk_rows", chunk_rows)
    return X, sigma, mu_hat, eps, delta, rng, p_clip, noise, chunk_rows


def _scaled_clipped_release(
    X: np.ndarray,
    *,
    active: NDArray[np.bool_],
    b: NDArray[np.float64],
    C: float,
    mu_hat: NDArray[np.float64],
    p_clip: float,
    eps: float | None,
    delta: float | None,
    rng: np.random.Generator | None,
    noise: bool,
    chunk_rows: int | None,
) -> GaussianDataResult:
    """sum_i clip_C((x_i - mu_hat) * b) / b + n mu_hat + eta / b, eta ~ N(0, (2 C sigma_opt)^2 I).

    The common last steps of Algorithm 3 (b from Lemma 4.1) and of the baseline
    (b = 1).  Only the coordinates in ``active`` are transformed, clipped and
    noised; the others are released as n * mu_hat_j.
    """
    n, d = X.shape
    b_act = b[active]
    k = b_act.shape[0]
    rows = clipping.chunk_rows(k) if chunk_rows is None else chunk_rows
    _v.check_finite_result(C, what="the clipping radius C", inputs="sigma")
    sensitivity = clipping.sum_sensitivity(C, n=n, d=k, rows=rows)  # 2 C and the rounding bound
    std: NDArray[np.float64] | None = None
    s_opt = s_t = None
    if eps is not None and delta is not None:  # with a budget: the noise it calls for
        s_opt = float(calibration.sigma_opt(eps=eps, delta=delta))
        s_t = sensitivity * s_opt  # = sigma_opt(eps, delta, sensitivity)
        with np.errstate(over="ignore"):
            std_act = s_t / b_act
        _v.check_finite_result(std_act, what="the noise standard deviation 2 C sigma_opt / b_j", inputs="sigma")
        std = np.zeros(d)
        std[active] = std_act

    cols = None if np.all(active) else np.flatnonzero(active)
    r = clipping.clipped_sum(X, C=C, mu_hat=mu_hat[active], b=b_act, cols=cols, rows=rows)
    T_act, n_clipped = r.total, r.n_clipped

    with np.errstate(over="ignore"):
        clipped_sum = n * mu_hat  # inactive coordinates: n * mu_hat_j exactly
        clipped_sum[active] += T_act / b_act
    _v.check_finite_result(clipped_sum, what="the clipped sum n mu_hat + T / b", inputs="mu_hat or sigma")
    T = np.zeros(d)
    T[active] = T_act
    eta = np.zeros(d)
    if noise and s_t is not None:
        # a Generator: _check_clipping_inputs requires one when noise=True
        eta[active] = _draw(cast(np.random.Generator, rng), np.full(b_act.shape[0], s_t)) / b_act
        _v.check_finite_result(clipped_sum + eta, what="the release clipped sum + noise", inputs="mu_hat or sigma")
    return GaussianDataResult(
        sum=clipped_sum + eta, clipped_sum=clipped_sum, transformed_sum=T,
        noise=eta, noise_std=std, b=b, C=C, p_clip=p_clip, n_clipped=n_clipped, n=n,
        sigma_opt=s_opt, sensitivity=sensitivity, transformed_noise_std=s_t,
        eps=eps, delta=delta, noise_added=bool(noise),
    )


def algorithm3(
    X: ArrayLike,
    *,
    sigma: ArrayLike,
    mu_hat: ArrayLike,
    eps: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | None,
    p_clip: float | None = None,
    noise: bool = True,
    chunk_rows: int | None = None,
) -> GaussianDataResult:
    """Algorithm 3: the Elliptical Gaussian Mechanism for Gaussian data.

    With S = sum_j sigma_j and Lemma 4.1's scaling b_j = 1 / sqrt(sigma_j S):

    1. x_hat_i = (x_i - mu_hat) * b  (eq. (7)); if x_i ~ N(mu_hat, diag(sigma^2))
       then x_hat_i ~ N(0, diag((b sigma)^2)) with (b_j sigma_j)^2 = sigma_j / S.
    2. C = sqrt(gchisq.isf(p_clip, w=sigma / S)): P(||x_hat|| > C) = p_clip.
    3. T = sum_i min(1, C / ||x_hat_i||) x_hat_i.  Neighbours differ in one row
       and every clipped row has norm <= C, so Delta(T) = 2 C.
    4. Release T / b + n mu_hat + eta / b, eta ~ N(0, (2 C sigma_opt)^2 I)
       (Theorem 2 in the transformed space, then post-processing, Lemma 2.1).
       In floating point the computed T of neighbours differ by at most
       2 C (1 + nu) (:func:`egmlib.clipping.sum_sensitivity`; nu about 1e-10 at the
       book's sizes), and the noise is calibrated to that.

    With no row clipped and no noise the release is exactly sum_i x_i.  The
    report's pseudo-code adds mu_hat inside the transformed-space sum
    ("T <- T + min(C/||x_hat_i||, 1) x_hat_i + mu_hat") and then multiplies the
    whole T by b^-1, which returns n mu_hat / b instead of n mu_hat; step 4 is
    the corrected form (see the errata; the pseudo-code also never initialises
    T = 0, and its "x_hat ~ N(0, sigma_hat)" means covariance diag(sigma_hat^2)).
    Noise error: eq. (9),
    E||eta / b||^2 = (2 C sigma_opt)^2 sum_j b_j^-2 = (2 C sigma_opt S)^2 (eq. (24)).

    Zero standard deviations.  Coordinates with sigma_j = 0 (Zipf sigmas
    underflow to 0 for large alpha) have b_j = inf and are not used: the
    transformation, the radius C (whose weights sigma_j / S are 0 there anyway),
    the clipping and the noise involve only the coordinates with sigma_j > 0,
    and the release there is n * mu_hat_j, a function of public inputs, so the
    privacy guarantee is unchanged.  The error in such a coordinate is the bias
    n (mu_j - mu_hat_j) (zero when the model holds).  Their entries of X are
    checked to be finite and otherwise ignored.  All-zero sigma is an error.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, one row per individual; any array-like, including np.memmap
        (read in row chunks, never copied whole).
    sigma : array_like, shape (d,), finite, >= 0, at least one > 0
        Standard deviations of the coordinates (public).
    mu_hat : array_like, shape (d,), finite
        Centre (a public or separately privatised estimate of the mean).
    eps : float, finite and > 0
        Required to add noise; optional with ``noise=False`` (then ``noise_std``,
        ``sigma_opt`` and ``eps`` are None).
    delta : float in (0, 1)
        As ``eps``.
    rng : numpy.random.Generator
        Not used (may be None) when ``noise=False``.
    p_clip : float in (0, 1), optional
        Probability that a row drawn from the model is clipped; default 1 / n
        (needs n >= 2; n is public for substitution neighbours, Definition 2.1).
    noise : bool
        False returns the clipped sum without noise (for bias studies; not
        private), with ``noise_std`` still reporting what would be added.
    chunk_rows : int >= 1, optional
        Rows per chunk (default: about 2**17 elements, 1 MiB, per chunk).

    Returns
    -------
    GaussianDataResult

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [1.5, 2.5], [0.5, 1.0]])
    >>> r = algorithm3(X, sigma=[1.0, 1.0], mu_hat=[1.0, 2.0], eps=1.0,
    ...                       delta=1e-6, rng=None, p_clip=1e-3, noise=False)
    >>> r.n_clipped, bool(np.allclose(r.sum, X.sum(axis=0)))
    (0, True)
    """
    X, sigma, mu_hat, eps, delta, rng, p_clip, noise, chunk_rows = _check_clipping_inputs(
        X, sigma, mu_hat, eps, delta, rng, p_clip, noise, chunk_rows)
    active = sigma > 0
    b = np.asarray(scaling.algorithm3_scaling(sigma), dtype=np.float64)
    b_act = b[active]
    if b_act.shape != (int(active.sum()),) or not np.all(np.isfinite(b_act) & (b_act > 0)):
        raise ValueError("scaling.algorithm3_scaling returned a non-finite or non-positive b "
                         "where sigma > 0; cannot transform the data")
    rel = sigma[active] / np.max(sigma)  # scale-free: sum(sigma) may overflow
    w = rel / np.sum(rel)  # (b_j sigma_j)^2 = sigma_j / sum_i sigma_i, Lemma 4.1
    C = _clipping_radius(p_clip, w)
    return _scaled_clipped_release(X, active=active, b=b, C=C, mu_hat=mu_hat, p_clip=p_clip, eps=eps,
                            delta=delta, rng=rng, noise=noise, chunk_rows=chunk_rows)


def clipped_gaussian_mechanism(
    X: ArrayLike,
    *,
    sigma: ArrayLike,
    mu_hat: ArrayLike,
    eps: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | None,
    p_clip: float | None = None,
    noise: bool = True,
    chunk_rows: int | None = None,
) -> GaussianDataResult:
    """The report's baseline for Algorithm 3: clip in the original space, then Algorithm 1.

    Section 5 compares Algorithm 3 with "the most natural thing to do if one were
    to use the Gaussian Mechanism" (Section 6): clip at the same probability
    without the transformation and add isotropic noise.  Concretely:

    1. C_n = sqrt(gchisq.isf(p_clip, w=sigma^2)): if x ~ N(mu_hat, diag(sigma^2)),
       P(||x - mu_hat|| > C_n) = p_clip (Section 5's C_n at p_clip = 1/n).
    2. T = sum_i min(1, C_n / ||x_i - mu_hat||) (x_i - mu_hat); substituting one
       row moves T by at most 2 C_n, so Delta(T) = 2 C_n.
    3. Release T + n mu_hat + eta, eta ~ N(0, (2 C_n sigma_opt)^2 I_d): Algorithm 1
       with sensitivity 2 C_n (Theorem 2), then post-processing (Lemma 2.1).

    This is :func:`algorithm3` with b = 1 (same clipping code, same
    result type; ``transformed_sum`` is T, ``b`` is all ones).  Its expected
    noise error is eq. (5) with ||Delta|| = 2 C_n, i.e. d (2 C_n sigma_opt)^2:
    Section 5's E_n, which the report writes without the factor d (see the
    errata).  Every coordinate is clipped and noised, also those with
    sigma_j = 0 (they add nothing to C_n^2); all-zero sigma is an error.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, one row per individual; any array-like, including np.memmap.
    sigma : array_like, shape (d,), finite, >= 0, at least one > 0
        Standard deviations of the coordinates (public); they set C_n only.
    mu_hat : array_like, shape (d,), finite
        Centre of the clipping ball (public).
    eps : float, finite and > 0
        Required to add noise; optional with ``noise=False`` (then ``noise_std``,
        ``sigma_opt`` and ``eps`` are None).
    delta : float in (0, 1)
        As ``eps``.
    rng : numpy.random.Generator
        Not used (may be None) when ``noise=False``.
    p_clip : float in (0, 1), optional
        Probability that a row drawn from the model is clipped; default 1 / n
        (needs n >= 2).
    noise : bool
        False returns the clipped sum without noise (not private).
    chunk_rows : int >= 1, optional
        Rows per chunk (default: about 2**17 elements per chunk).

    Returns
    -------
    GaussianDataResult
        With ``b`` all ones, ``C`` = C_n and ``noise_std`` = 2 C_n sigma_opt in
        every coordinate.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [1.5, 2.5], [9.0, 2.0]])
    >>> r = clipped_gaussian_mechanism(X, sigma=[1.0, 1.0], mu_hat=[1.0, 2.0], eps=1.0,
    ...                                delta=1e-6, rng=None, p_clip=0.01, noise=False)
    >>> r.n_clipped, round(r.C, 6)    # C^2 = -2 ln 0.01 for chi^2_2
    (1, 3.034854)
    >>> bool(np.allclose(r.sum, [1.0 + 1.5 + 1.0 + r.C, 2.0 + 2.5 + 2.0]))
    True
    """
    X, sigma, mu_hat, eps, delta, rng, p_clip, noise, chunk_rows = _check_clipping_inputs(
        X, sigma, mu_hat, eps, delta, rng, p_clip, noise, chunk_rows)
    d = X.shape[1]
    smax = float(np.max(sigma))
    C = smax * _clipping_radius(p_clip, (sigma / smax) ** 2)  # no underflow of tiny sigma^2
    return _scaled_clipped_release(X, active=np.ones(d, dtype=bool), b=np.ones(d), C=C, mu_hat=mu_hat,
                            p_clip=p_clip, eps=eps, delta=delta, rng=rng, noise=noise,
                            chunk_rows=chunk_rows)


#: The two mechanisms of Section 5 by method name (the book's code, ``egmbook``, selects
#: them by these names): ``"alg3"`` is
#: Algorithm 3 (:func:`algorithm3`), ``"base"`` the report's baseline
#: (:func:`clipped_gaussian_mechanism`).  Read-only.
METHODS: Mapping[str, Callable[..., GaussianDataResult]] = MappingProxyType(
    {"alg3": algorithm3, "base": clipped_gaussian_mechanism}
)
