r"""Optimal scalings and expected noise errors (report, Sections 3-5).

Two optimisation problems of the report share one shape, *minimise*
:math:`\sum_j c_j b_j^{-2}` *subject to* :math:`\sum_j a_j b_j^2 = 1`:

* the Elliptical Gaussian Mechanism (Algorithm 2, Theorem 3): noise standard deviation
  :math:`\sigma_{opt}\Delta_j/b_j` in coordinate :math:`j`, constraint :math:`\|b\|=1`,
  optimum :func:`egm_scaling` and error eq. (6);
* the EGM for Gaussian data (Algorithm 3, Lemma 4.1): noise standard deviation
  :math:`2C\sigma_{opt}/b_j`, constraint eq. (10) :math:`\sum_j (b_j\sigma_j)^2 = 1`,
  optimum :func:`gaussian_data_scaling` and error eqs. (9)/(24).

Every ``sigma_opt`` argument here is the report's *unit-sensitivity* :math:`\sigma_{opt}`
of Theorem 2 (:func:`egmlib.calibration.sigma_opt` with ``sensitivity=1``); the
sensitivity enters through :math:`\Delta` or :math:`2C`.

Zero coordinates
----------------
A coordinate with :math:`\Delta_j = 0` (Algorithm 2) or :math:`\sigma_j = 0` (Algorithm 3)
carries no information that needs protecting; the optimal scalings treat it as follows.

* :func:`egm_scaling` gives :math:`b_j = 0` and Algorithm 2 adds no noise there
  (:math:`\Delta_j/b_j := 0`).
* :func:`gaussian_data_scaling` gives :math:`b_j = +\infty` (the limit of Lemma 4.1's
  formula).  Then :math:`b_j^{-2} = 0`: :func:`algorithm3_noise_error` counts no noise for
  that coordinate, and Algorithm 3 releases :math:`n\hat\mu_j` there (every point equals
  :math:`\mu_j` almost surely; the transformed coordinate is not defined, so the
  mechanism must skip it -- see :mod:`egmlib.mechanisms`).
"""

from __future__ import annotations

import math

import numpy as np

from egmlib._validation import (
    check_count,
    check_nonnegative_finite,
    check_nonnegative_vector,
    check_positive_finite,
    check_probability_array,
    check_same_shape,
)

__all__ = [
    "egm_scaling",
    "gaussian_data_scaling",
    "noise_error",
    "gaussian_mechanism_error",
    "egm_error",
    "egm_improvement",
    "algorithm3_constraint",
    "algorithm3_noise_error",
    "clipping_thresholds",
    "figure2_errors",
    "figure2_improvement",
]

_B_NORM_TOL = 1e-9


def _check_scaling_vector(name: str, b) -> np.ndarray:
    """A 1-D vector with entries in [0, inf]; NaN and negative entries are rejected."""
    try:
        a = np.array(b, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a vector of real numbers: {exc}") from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional vector, got shape {a.shape}")
    if np.any(np.isnan(a)):
        j = int(np.flatnonzero(np.isnan(a))[0])
        raise ValueError(f"{name} must not contain NaN, got {name}[{j}]=nan")
    if np.any(a < 0.0):
        j = int(np.flatnonzero(a < 0.0)[0])
        raise ValueError(f"{name} must be >= 0 entrywise, got {name}[{j}]={float(a[j])!r}")
    return a


# ----------------------------------------------------------------------------------------
# Optimal scalings
# ----------------------------------------------------------------------------------------
def egm_scaling(Delta) -> np.ndarray:
    r"""Optimal scaling of the Elliptical Gaussian Mechanism (Theorem 3).

    :math:`b_j = \sqrt{\Delta_j / \sum_i \Delta_i}`, so :math:`\|b\| = 1`.

    Parameters
    ----------
    Delta : 1-D array of finite values >= 0, at least one > 0
        Per-coordinate sensitivities, eq. (3).

    Examples
    --------
    >>> egm_scaling([1.0, 1.0, 2.0]).round(6).tolist()
    [0.5, 0.5, 0.707107]
    """
    D = check_nonnegative_vector("Delta", Delta)
    D = D / D.max()  # scale-free, avoids overflow of the sum
    return np.sqrt(D / D.sum())


def gaussian_data_scaling(sigma) -> np.ndarray:
    r"""Optimal scaling of Algorithm 3 (Lemma 4.1).

    :math:`b_j = 1/\sqrt{\sigma_j\sum_i\sigma_i}`, which satisfies eq. (10)
    :math:`\sum_j(b_j\sigma_j)^2 = 1`.  For :math:`\sigma_j = 0` the value is
    :math:`+\infty` (see the module docstring).

    Examples
    --------
    >>> gaussian_data_scaling([0.5, 0.25, 0.25, 0.0]).round(6).tolist()
    [1.414214, 2.0, 2.0, inf]
    """
    s = check_nonnegative_vector("sigma", sigma)
    smax = s.max()
    w = s / smax  # b_j = 1 / (smax * sqrt(w_j * sum w))
    with np.errstate(divide="ignore"):
        return 1.0 / (smax * np.sqrt(w * w.sum()))


# ----------------------------------------------------------------------------------------
# Expected errors
# ----------------------------------------------------------------------------------------
def noise_error(noise_std) -> float:
    r"""Expected squared norm of independent centred Gaussian noise (Corollary 2.1).

    :math:`\mathbb E\|\eta\|^2 = \sum_j s_j^2`; with equal :math:`s_j=\sigma_{\varepsilon,\delta}`
    this is eq. (1), :math:`d\,\sigma_{\varepsilon,\delta}^2`.

    Examples
    --------
    >>> noise_error([2.0, 2.0, 2.0])
    12.0
    """
    s = check_nonnegative_vector("noise_std", noise_std, allow_all_zero=True)
    smax = s.max()
    if smax == 0.0:
        return 0.0
    return float(smax * smax * np.sum((s / smax) ** 2))


def gaussian_mechanism_error(Delta, *, sigma_opt: float) -> float:
    r"""Expected error of the Gaussian mechanism on the sum, eq. (5).

    :math:`d\,\sigma_{opt}^2\,\|\Delta\|_2^2` (Algorithm 1 with
    :math:`\sigma_{\varepsilon,\delta} = \|\Delta\|\sigma_{opt}`, eq. (4)).

    Examples
    --------
    >>> gaussian_mechanism_error([3.0, 4.0], sigma_opt=2.0)
    200.0
    """
    D = check_nonnegative_vector("Delta", Delta)
    so = check_positive_finite("sigma_opt", sigma_opt)
    dmax = D.max()
    return float(D.size * so * so * dmax * dmax * np.sum((D / dmax) ** 2))


def egm_error(Delta, *, sigma_opt: float, b=None) -> float:
    r"""Expected error of the Elliptical Gaussian Mechanism (Algorithm 2).

    Without ``b``: the optimum of Theorem 3, eq. (6), :math:`\sigma_{opt}^2\|\Delta\|_1^2`.
    With ``b`` (a scaling with :math:`\|b\| = 1` to 1e-9): the error of Algorithm 2 for
    that scaling, :math:`\sigma_{opt}^2\sum_j \Delta_j^2/b_j^2`, where a coordinate with
    :math:`\Delta_j = 0` contributes 0 and one with :math:`b_j = 0 < \Delta_j` makes the
    error infinite.

    Examples
    --------
    >>> egm_error([1.0, 3.0], sigma_opt=1.0)
    16.0
    >>> round(egm_error([1.0, 3.0], sigma_opt=1.0, b=[0.6, 0.8]), 6)
    16.840278
    """
    D = check_nonnegative_vector("Delta", Delta)
    so = check_positive_finite("sigma_opt", sigma_opt)
    if b is None:
        dmax = D.max()
        return float(so * so * dmax * dmax * np.sum(D / dmax) ** 2)
    bb = _check_scaling_vector("b", b)
    check_same_shape("Delta", D, "b", bb)
    if np.any(np.isinf(bb)):
        raise ValueError("b must be finite for Algorithm 2 (its constraint is ||b|| = 1)")
    norm = math.sqrt(float(np.sum(bb * bb)))
    if abs(norm - 1.0) > _B_NORM_TOL:
        raise ValueError(f"b must satisfy ||b||_2 = 1 (Algorithm 2), got ||b||_2={norm!r}")
    ratio = np.zeros_like(D)
    pos = D > 0.0
    with np.errstate(divide="ignore"):
        ratio[pos] = D[pos] / bb[pos]
    return float(so * so * np.sum(ratio * ratio))


def egm_improvement(Delta) -> float:
    r"""Improvement of Algorithm 2 over Algorithm 1: eq. (5) / eq. (6) (Theorem 3).

    :math:`d\sum_j\Delta_j^2/(\sum_j\Delta_j)^2 \in [1, d]`, equal to 1 iff all
    :math:`\Delta_j` are equal, and to :math:`d` iff exactly one is non-zero.

    Examples
    --------
    >>> egm_improvement([1.0, 1.0, 1.0, 1.0]), egm_improvement([0.0, 0.0, 5.0, 0.0])
    (1.0, 4.0)
    """
    D = check_nonnegative_vector("Delta", Delta)
    w = D / D.max()
    return float(D.size * np.sum(w * w) / np.sum(w) ** 2)


def algorithm3_constraint(b, sigma) -> float:
    r"""Left-hand side of eq. (10), :math:`\sum_j (b_j\sigma_j)^2` (should equal 1).

    Coordinates with :math:`\sigma_j = 0` contribute 0 whatever :math:`b_j` (also
    :math:`b_j = \infty`, see the module docstring).

    Examples
    --------
    >>> round(algorithm3_constraint(gaussian_data_scaling([0.7, 0.2, 0.1, 0.0]),
    ...                             [0.7, 0.2, 0.1, 0.0]), 12)
    1.0
    """
    bb = _check_scaling_vector("b", b)
    s = check_nonnegative_vector("sigma", sigma)
    check_same_shape("b", bb, "sigma", s)
    prod = np.zeros_like(s)
    pos = s > 0.0
    prod[pos] = bb[pos] * s[pos]
    if np.any(np.isinf(prod)):
        j = int(np.flatnonzero(np.isinf(prod))[0])
        raise ValueError(f"b must be finite where sigma > 0, got b[{j}]=inf")
    return float(np.sum(prod * prod))


def algorithm3_noise_error(b, *, C: float, sigma_opt: float) -> float:
    r"""Expected squared norm of Algorithm 3's noise, eqs. (9) and (24).

    :math:`(2C\sigma_{opt})^2\sum_j b_j^{-2}`, with :math:`b_j^{-2} := 0` for
    :math:`b_j = \infty` (a coordinate with :math:`\sigma_j = 0` gets no noise; Algorithm 3
    releases :math:`n\hat\mu_j` there) and an infinite result if some :math:`b_j = 0`.
    ``C`` is the clipping radius (not squared).

    Examples
    --------
    >>> algorithm3_noise_error([1.0, 2.0, float("inf")], C=0.5, sigma_opt=1.0)
    1.25
    """
    bb = _check_scaling_vector("b", b)
    C = check_nonnegative_finite("C", C)
    so = check_positive_finite("sigma_opt", sigma_opt)
    with np.errstate(divide="ignore"):
        inv2 = 1.0 / (bb * bb)  # inf -> 0, 0 -> inf
    return float((2.0 * C * so) ** 2 * np.sum(inv2))


# ----------------------------------------------------------------------------------------
# Figure 2: clipping thresholds and the two errors
# ----------------------------------------------------------------------------------------
def clipping_thresholds(sigma, *, p):
    r"""Squared clipping radii of Section 5: :math:`(C_n^2, C_t^2)` at tail probability p.

    * :math:`C_n^2`: the upper p-quantile of :math:`\|x_i-\mu\|^2 = \sum_j\sigma_j^2Z_j^2`
      (no transformation; weights :math:`\sigma_j^2`);
    * :math:`C_t^2`: the upper p-quantile of :math:`\|(x_i-\mu)\odot b\|^2` with
      Lemma 4.1's :math:`b`, i.e. weights :math:`(b_j\sigma_j)^2 = \sigma_j/\sum_i\sigma_i`.

    Both come from :func:`egmlib.gchisq.isf` (exact to about 1e-10 relative), not from a
    bound.  The report uses :math:`p = 1/n`.  ``p`` may be an array (returns arrays).
    :math:`C_n^2` is computed as :math:`\sigma_*^2`-scaled quantile of
    :math:`(\sigma_j/\sigma_*)^2`-weights, so tiny :math:`\sigma` do not underflow.

    Examples
    --------
    >>> cn2, ct2 = clipping_thresholds([1.0, 1.0], p=0.5)   # both 2 ln 2 (chi^2_2 / 1, / 2)
    >>> round(cn2, 10), round(ct2, 10)
    (1.3862943611, 0.6931471806)
    """
    from egmlib import gchisq

    s = check_nonnegative_vector("sigma", sigma)
    pa = check_probability_array("p", p)
    smax = s.max()
    w_n = (s / smax) ** 2
    w_t = (s / smax) / np.sum(s / smax)  # = sigma / sum sigma, without overflow
    cn2 = smax * smax * np.asarray(gchisq.isf(pa, w_n), dtype=float)
    ct2 = np.asarray(gchisq.isf(pa, w_t), dtype=float)
    if pa.ndim == 0:
        return float(cn2), float(ct2)
    return cn2, ct2


def figure2_errors(sigma, *, n, sigma_opt: float = 1.0):
    r"""The two expected noise errors compared in Figure 2: :math:`(\mathcal E_n, \mathcal E_t)`.

    * :math:`\mathcal E_n = d\,(2C_n\sigma_{opt})^2`: the Gaussian mechanism on data clipped
      to radius :math:`C_n` (sensitivity :math:`2C_n`), eqs. (1)/(5).  **The report writes**
      :math:`\mathcal E_n = (2C_n\sigma_{opt})^2` **without the factor** :math:`d`; its
      published Figure 2 values do include it (improvement :math:`= d\,C_n^2/C_t^2`, e.g.
      :math:`d=10,\ \alpha=0.01,\ n=100`: :math:`10\cdot0.2421875/2.3125 = 1.0473`).  See the
      errata page.
    * :math:`\mathcal E_t = (2C_t\sigma_{opt})^2\sum_j b_j^{-2} = (2C_t\sigma_{opt})^2
      (\sum_j\sigma_j)^2`: Algorithm 3 with Lemma 4.1's scaling, eq. (24).

    Both use the exact quantiles of :func:`clipping_thresholds` at :math:`p = 1/n`.
    ``n`` is an integer >= 2 (the number of data points).

    Examples
    --------
    >>> En, Et = figure2_errors([0.5, 0.5], n=4)   # equal sigmas: no improvement
    >>> round(En / Et, 12)
    1.0
    """
    s = check_nonnegative_vector("sigma", sigma)
    n = check_count("n", n, minimum=2)
    so = check_positive_finite("sigma_opt", sigma_opt)
    cn2, ct2 = clipping_thresholds(s, p=1.0 / n)
    smax = s.max()
    ssum = smax * np.sum(s / smax)
    e_n = s.size * 4.0 * so * so * cn2
    e_t = 4.0 * so * so * ct2 * ssum * ssum
    return float(e_n), float(e_t)


def figure2_improvement(sigma, *, n) -> float:
    r"""Figure 2's improvement :math:`\mathcal E_n/\mathcal E_t = d\,C_n^2/(C_t^2(\sum_j\sigma_j)^2)`.

    Invariant under rescaling :math:`\sigma`; :math:`\sigma_{opt}` cancels.
    """
    e_n, e_t = figure2_errors(sigma, n=n)
    return e_n / e_t
