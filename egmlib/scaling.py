r"""Optimal scalings and expected noise errors (report, Sections 3-5).

Two optimisation problems of the report share one shape, *minimise*
:math:`\sum_j c_j b_j^{-2}` *subject to* :math:`\sum_j a_j b_j^2 = 1`:

* the Elliptical Gaussian Mechanism (Algorithm 2, Theorem 3): noise standard deviation
  :math:`\sigma_{opt}\Delta_j/b_j` in coordinate :math:`j`, constraint :math:`\|b\|=1`,
  optimum :func:`egm_scaling` and error eq. (6);
* the EGM for Gaussian data (Algorithm 3, Lemma 4.1): noise standard deviation
  :math:`2C\sigma_{opt}/b_j`, constraint eq. (10) :math:`\sum_j (b_j\sigma_j)^2 = 1`,
  optimum :func:`algorithm3_scaling` and error eqs. (9)/(24).

Everything here is a closed form.  The clipping radii, which need the generalized
chi-square quantiles of :mod:`egmlib.gchisq`, and the Figure 2 errors built from them are
the book's code (``egmbook.experiments``, outside this library).

Every ``sigma_opt`` argument here is the report's *unit-sensitivity* :math:`\sigma_{opt}`
of Theorem 2 (:func:`egmlib.calibration.sigma_opt` with ``sensitivity=1``); the
sensitivity enters through :math:`\Delta` or :math:`2C`.

Zero coordinates
----------------
A coordinate with :math:`\Delta_j = 0` (Algorithm 2) or :math:`\sigma_j = 0` (Algorithm 3)
carries no information that needs protecting; the optimal scalings treat it as follows.

* :func:`egm_scaling` gives :math:`b_j = 0` and Algorithm 2 adds no noise there
  (:math:`\Delta_j/b_j := 0`).
* :func:`algorithm3_scaling` gives :math:`b_j = +\infty` (the limit of Lemma 4.1's
  formula).  Then :math:`b_j^{-2} = 0`: :func:`algorithm3_noise_error` counts no noise for
  that coordinate, and Algorithm 3 releases :math:`n\hat\mu_j` there (every point equals
  :math:`\mu_j` almost surely; the transformed coordinate is not defined, so the
  mechanism must skip it -- see :mod:`egmlib.mechanisms`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib.validation import (
    check_finite_result,
    check_nonnegative_finite,
    check_nonnegative_vector,
    check_positive_finite,
    check_scaling_vector,
)

__all__ = [
    "egm_scaling",
    "algorithm3_scaling",
    "gaussian_noise_error",
    "gaussian_mechanism_error",
    "egm_error",
    "egm_improvement",
    "algorithm3_constraint",
    "algorithm3_noise_error",
]

_B_NORM_TOL = 1e-9


# ----------------------------------------------------------------------------------------
# Optimal scalings
# ----------------------------------------------------------------------------------------
def egm_scaling(Delta: ArrayLike) -> NDArray[np.float64]:
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


def algorithm3_scaling(sigma: ArrayLike) -> NDArray[np.float64]:
    r"""Optimal scaling of Algorithm 3 (Lemma 4.1).

    :math:`b_j = 1/\sqrt{\sigma_j\sum_i\sigma_i}`, which satisfies eq. (10)
    :math:`\sum_j(b_j\sigma_j)^2 = 1`.  For :math:`\sigma_j = 0` the value is
    :math:`+\infty` (see the module docstring).

    Examples
    --------
    >>> algorithm3_scaling([0.5, 0.25, 0.25, 0.0]).round(6).tolist()
    [1.414214, 2.0, 2.0, inf]
    """
    s = check_nonnegative_vector("sigma", sigma)
    smax = s.max()
    w = s / smax  # b_j = 1 / (smax * sqrt(w_j * sum w))
    with np.errstate(divide="ignore", over="ignore"):
        b = 1.0 / (smax * np.sqrt(w * w.sum()))
    # b_j = inf where sigma_j = 0 by design; elsewhere an infinity is an overflow
    # (sigma_j * sum sigma below about 1e-616, e.g. subnormal sigma)
    if not np.all(np.isfinite(b[s > 0])):
        raise ValueError(
            "sigma must be large enough that b_j = 1/sqrt(sigma_j sum_i sigma_i) is a finite "
            f"float64 where sigma_j > 0, got sigma with smallest positive entry {float(s[s > 0].min())!r}; "
            "rescale the data")
    return b


# ----------------------------------------------------------------------------------------
# Expected errors
# ----------------------------------------------------------------------------------------
def gaussian_noise_error(noise_std: ArrayLike) -> float:
    r"""Expected squared norm of independent centred Gaussian noise (Corollary 2.1).

    :math:`\mathbb E\|\eta\|^2 = \sum_j s_j^2`; with equal :math:`s_j=\sigma_{\varepsilon,\delta}`
    this is eq. (1), :math:`d\,\sigma_{\varepsilon,\delta}^2`.

    Examples
    --------
    >>> gaussian_noise_error([2.0, 2.0, 2.0])
    12.0
    """
    s = check_nonnegative_vector("noise_std", noise_std, allow_all_zero=True)
    smax = float(s.max())
    if smax == 0.0:
        return 0.0
    out = smax * smax * float(np.sum((s / smax) ** 2))  # Python floats: an overflow gives inf, reported below
    check_finite_result(out, what="the noise error", inputs="noise_std")
    return out


def gaussian_mechanism_error(Delta: ArrayLike, *, sigma_opt: float) -> float:
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
    dmax = float(D.max())
    out = D.size * so * so * dmax * dmax * float(np.sum((D / dmax) ** 2))  # Python floats: inf on overflow
    check_finite_result(out, what="the expected error of eq. (5)", inputs="Delta or sigma_opt")
    return out


def egm_error(Delta: ArrayLike, *, sigma_opt: float, b: ArrayLike | None = None) -> float:
    r"""Expected error of the Elliptical Gaussian Mechanism (Algorithm 2).

    Without ``b``: the optimum of Theorem 3, eq. (6), :math:`\sigma_{opt}^2\|\Delta\|_1^2`.
    With ``b`` (a finite scaling with :math:`\|b\| = 1` to 1e-9): the error of Algorithm 2
    for that scaling, :math:`\sigma_{opt}^2\sum_j \Delta_j^2/b_j^2`, where a coordinate
    with :math:`\Delta_j = 0` contributes 0; :math:`b_j = 0 < \Delta_j` (infinite noise)
    is a ValueError.

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
        dmax = float(D.max())
        out = so * so * dmax * dmax * float(np.sum(D / dmax) ** 2)  # Python floats: inf on overflow
        check_finite_result(out, what="the expected error of eq. (6)", inputs="Delta or sigma_opt")
        return out
    bb = check_scaling_vector("b", b, length=D.size, of="one entry per entry of Delta")
    if np.any(np.isinf(bb)):
        raise ValueError(f"b must be finite for Algorithm 2 (its constraint is ||b|| = 1), got b={bb.tolist()}")
    with np.errstate(over="ignore"):  # an infinite norm fails the test below
        norm = math.sqrt(float(np.sum(bb * bb)))
    if not abs(norm - 1.0) <= _B_NORM_TOL:
        raise ValueError(f"b must satisfy ||b||_2 = 1 (Algorithm 2), got ||b||_2={norm!r}")
    pos = D > 0.0
    if np.any(bb[pos] == 0.0):
        j = int(np.flatnonzero(pos & (bb == 0.0))[0])
        raise ValueError(f"b must be > 0 where Delta > 0 (b_j = 0 means infinite noise), got b[{j}]=0.0")
    ratio = np.zeros_like(D)
    with np.errstate(over="ignore"):  # an overflow is reported just below
        ratio[pos] = D[pos] / bb[pos]
        out = float(so * so * np.sum(ratio * ratio))
    check_finite_result(out, what="the expected error of Algorithm 2", inputs="Delta, sigma_opt or 1/b")
    return out


def egm_improvement(Delta: ArrayLike) -> float:
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


def algorithm3_constraint(b: ArrayLike, *, sigma: ArrayLike) -> float:
    r"""Left-hand side of eq. (10), :math:`\sum_j (b_j\sigma_j)^2` (should equal 1).

    Coordinates with :math:`\sigma_j = 0` contribute 0 whatever :math:`b_j` (also
    :math:`b_j = \infty`, see the module docstring).

    Examples
    --------
    >>> s = [0.7, 0.2, 0.1, 0.0]
    >>> round(algorithm3_constraint(algorithm3_scaling(s), sigma=s), 12)
    1.0
    """
    bb = check_scaling_vector("b", b)
    s = check_nonnegative_vector("sigma", sigma, length=bb.size, of="one entry per entry of b")
    prod = np.zeros_like(s)
    pos = s > 0.0
    with np.errstate(over="ignore"):  # overflows are reported below
        prod[pos] = bb[pos] * s[pos]
    if np.any(np.isinf(prod)):
        j = int(np.flatnonzero(np.isinf(prod))[0])
        raise ValueError(f"b must be finite where sigma > 0, got b[{j}]=inf")
    with np.errstate(over="ignore"):
        out = float(np.sum(prod * prod))
    check_finite_result(out, what="sum_j (b_j sigma_j)^2", inputs="b or sigma")
    return out


def algorithm3_noise_error(b: ArrayLike, *, C: float, sigma_opt: float) -> float:
    r"""Expected squared norm of Algorithm 3's noise, eqs. (9) and (24).

    :math:`(2C\sigma_{opt})^2\sum_j b_j^{-2}`, with :math:`b_j^{-2} := 0` for
    :math:`b_j = \infty` (a coordinate with :math:`\sigma_j = 0` gets no noise; Algorithm 3
    releases :math:`n\hat\mu_j` there); :math:`b_j = 0` (infinite noise) is a ValueError.
    ``C`` is the clipping radius (not squared).

    Examples
    --------
    >>> algorithm3_noise_error([1.0, 2.0, float("inf")], C=0.5, sigma_opt=1.0)
    1.25
    """
    bb = check_scaling_vector("b", b)
    C = check_nonnegative_finite("C", C)
    so = check_positive_finite("sigma_opt", sigma_opt)
    if np.any(bb == 0.0):
        j = int(np.flatnonzero(bb == 0.0)[0])
        raise ValueError(f"b must be > 0 entrywise (b_j = 0 means infinite noise), got b[{j}]=0.0")
    with np.errstate(over="ignore", divide="ignore"):
        inv2 = 1.0 / (bb * bb)  # inf -> 0
        # a numpy square: Python's float ** raises OverflowError instead of giving inf
        out = float(np.float64(2.0 * C * so) ** 2 * np.sum(inv2))
    check_finite_result(out, what="the noise error of eq. (24)", inputs="C, sigma_opt or 1/b")
    return out
