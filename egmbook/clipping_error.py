"""The error of a clipped noisy sum: noise, clipping and centre terms, and the best p_C.

Algorithm 3 and its baseline (:mod:`egmlib.mechanisms`) release
M(X) = sum_i clip(x_i) + eta, where clip moves a row towards the centre mu_hat
when it lies outside the clipping ball (of radius C_t after Lemma 4.1's
transformation for Algorithm 3, of radius C_n in the original space for the
baseline) and eta is Gaussian noise independent of the data.  The report
compares the two by E||eta||^2 alone (eqs. (5), (24), Figure 2) and leaves the
clipping bias and the choice of the clipping probability p_C open (Sections 6
and 6.1).  With D_i = clip(x_i) - x_i and i.i.d. rows, the book's chapter 7
(proposition "Decomposition of the error") has

    E||M(X) - sum_i x_i||^2 = E||eta||^2 + n E||D||^2 + n (n - 1) ||E D||^2,

and the last term vanishes when mu_hat is the true mean.  This module computes
the pieces:

* :func:`noise_error_at_radius` -- the noise term of either method at a radius C,
  eq. (24) and eq. (5) with ||Delta|| = 2 C_n (the radii themselves at a tail
  probability p come from :func:`egmbook.experiments.clipping_radii`);
* :func:`row_clip_moments` -- E||D||^2 and ||E D||^2 of one row by importance
  sampling (exponential tilting of ||u||^2, common random numbers, antithetic
  pairs); :func:`baseline_clip_moment_exact` -- the baseline's E||D||^2 as a
  one-dimensional integral of the generalized chi-square tail (a cross-check);
* :func:`expected_error` -- the decomposition above; :func:`optimal_clipping` --
  the p_C (or radius) that minimises it.

The same error measured by running the mechanisms on simulated datasets is
:mod:`egmbook.error_simulation`.  Methods are named as in
:data:`egmlib.mechanisms.METHODS`: ``"alg3"`` (Algorithm 3,
``mechanisms.algorithm3``) and ``"base"`` (the baseline,
``mechanisms.clipped_gaussian_mechanism``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import interpolate, optimize

from egmlib import _validation as _v
from egmlib import gchisq, mechanisms, scaling

__all__ = [
    "RowClipMoments",
    "ClippingOptimum",
    "noise_error_at_radius",
    "row_clip_moments",
    "expected_error",
    "optimal_clipping",
    "baseline_clip_moment_exact",
]

_PER_COLUMN = "one entry per column of Z"


def _logit(p: ArrayLike) -> NDArray[np.float64]:
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


def _expit(x: ArrayLike) -> NDArray[np.float64]:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


# --------------------------------------------------------------------------- #
# the noise term
# --------------------------------------------------------------------------- #
def noise_error_at_radius(method: str, *, sigma: ArrayLike, C: float, sigma_opt: float) -> float:
    """Predicted E||eta||^2 of a method at radius C.

    ``"alg3"``: eq. (9) with Lemma 4.1's b, i.e. eq. (24),
    (2 C sigma_opt)^2 sum_j b_j^-2 = (2 C sigma_opt sum_j sigma_j)^2;
    ``"base"``: eq. (5) with ||Delta|| = 2 C, i.e. d (2 C sigma_opt)^2 (Section 5's
    E_n with the factor d).  C = 0 (every row clipped to the centre: the
    data-free release n mu_hat) needs no noise and gives 0.

    Examples
    --------
    >>> round(noise_error_at_radius("base", sigma=[1.0, 1.0], C=1.0, sigma_opt=1.0), 12)   # 2 (2 C)^2
    8.0
    >>> round(noise_error_at_radius("alg3", sigma=[1.0, 1.0], C=1.0, sigma_opt=1.0), 12)   # (2 C * 2)^2
    16.0
    """
    method = _v.check_choice("method", method, mechanisms.METHODS)
    sigma = _v.check_positive_vector("sigma", sigma)
    C = _v.check_nonnegative_finite("C", C)
    so = _v.check_positive_finite("sigma_opt", sigma_opt)
    if C == 0.0:
        return 0.0
    if method == "alg3":
        return scaling.algorithm3_noise_error(scaling.algorithm3_scaling(sigma), C=C, sigma_opt=so)
    d = len(sigma)
    Delta = np.full(d, 2.0 * C / math.sqrt(d))  # Python floats: inf on overflow, no warning
    _v.check_finite_result(Delta, what="the sensitivity 2 C", inputs="C")
    return scaling.gaussian_mechanism_error(Delta, sigma_opt=so)


# --------------------------------------------------------------------------- #
# the per-row model
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class RowClipMoments:
    """Moments of the clipping loss D = clip(x) - x of one row (:func:`row_clip_moments`)."""

    e2: float  #: E||D||^2
    e2_se: float  #: its Monte Carlo standard error
    m2: float  #: ||E D||^2 (unbiased U-statistic; 0 without offset, by symmetry)
    m2_se: float  #: its standard error (delta method; 0 without offset)
    pclip: float  #: P(||u|| > C), the clipping probability of one row
    pclip_se: float
    theta: float  #: the tilt used (0 for plain Monte Carlo)


def row_clip_moments(
    Z: ArrayLike,
    *,
    method: str,
    C: float,
    sigma_data: ArrayLike,
    sigma_mech: ArrayLike | None = None,
    offset: ArrayLike | None = None,
    tilt: bool = True,
) -> RowClipMoments:
    """E||D||^2, ||E D||^2 and P(clip) of one row, by importance sampling.

    Row model: x = mu + sigma_data * z.  The mechanism centres at
    mu_hat = mu + offset and clips u = (x - mu_hat) * b to radius C, with b =
    Lemma 4.1's scaling of sigma_mech (``"alg3"``, Algorithm 3) or b = 1
    (``"base"``), so D = -(1 - C/||u||)_+ (x - mu_hat).  These are the per-row
    terms of the decomposition (:func:`expected_error`); E D = 0 when offset is
    None (the law of x - mu_hat is then symmetric).

    Sampling: u_j ~ N(m_j / a_j, v_j / a_j), a_j = 1 - 2 theta v_j (v_j, m_j the
    variance and mean of u_j), i.e. the law of u tilted by exp(theta ||u||^2),
    with likelihood ratio exp(-theta ||u||^2) prod_j a_j^(-1/2)
    exp(theta m_j^2 / a_j).  With ``tilt``, theta >= 0 puts the tilted mean of
    ||u||^2 at C^2 (theta = 0 when the untilted mean is already above C^2), which
    keeps the relative error bounded for tiny clipping probabilities.  Z (N x d
    standard normals) may be shared across calls (common random numbers).  With
    an offset every z is paired with -z (antithetic pairs): at offset 0 the
    pair's D cancel exactly, so the estimate of E D has a variance that vanishes
    with the offset, which keeps n (n - 1) ||E D||^2 usable for large n.

    Parameters
    ----------
    Z : array_like, shape (N, d), finite, N >= 2
        Standard normal draws.
    method : "alg3" or "base"
    C : float, finite and >= 0
        Radius (in the transformed space for "alg3").
    sigma_data : array_like, shape (d,), finite, >= 0, at least one > 0
        Standard deviations of the data.
    sigma_mech : array_like, shape (d,), optional
        Standard deviations the mechanism uses for b (default sigma_data);
        every entry > 0 for "alg3".
    offset : array_like, shape (d,), finite, optional
        mu_hat - mu.
    tilt : bool

    Returns
    -------
    RowClipMoments
    """
    method = _v.check_choice("method", method, mechanisms.METHODS)
    Z = _v.check_finite_array("Z", Z, ndim=2)
    N, d = Z.shape
    if N < 2:
        raise ValueError(f"Z must have at least 2 rows (draws), got Z of shape {Z.shape}")
    C = _v.check_nonnegative_finite("C", C)
    sigma_data = _v.check_nonnegative_vector("sigma_data", sigma_data, length=d, of=_PER_COLUMN)
    if sigma_mech is None:
        sigma_mech = sigma_data
    else:
        sigma_mech = _v.check_nonnegative_vector("sigma_mech", sigma_mech, length=d, of=_PER_COLUMN)
    if offset is not None:
        offset = _v.check_finite_vector("offset", offset, length=d, of=_PER_COLUMN)
    tilt = _v.check_bool("tilt", tilt)
    if method == "alg3":
        if np.any(sigma_mech == 0):
            raise ValueError("sigma_mech must be > 0 entrywise for method='alg3' "
                             "(Lemma 4.1's b_j = (sigma_j sum sigma)^(-1/2))")
        try:
            b = scaling.algorithm3_scaling(sigma_mech)
        except ValueError as exc:  # its message names its own argument, sigma
            raise ValueError(f"sigma_mech gives no finite scaling: {exc}") from None
    else:
        b = np.ones(d)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
        v = (sigma_data * b) ** 2
        m = np.zeros(d) if offset is None else -offset * b
        C2 = C * C
        theta = 0.0
        vmax = float(v.max())
        if vmax == 0.0:
            raise ValueError("the transformed variances (sigma_data b)^2 underflow to 0: sigma_data or "
                             "sigma_mech out of the float range relative to each other")
        if tilt and float(np.sum(v + m * m)) < C2:

            def excess(t):
                a = 1.0 - 2.0 * t * v
                return float(np.sum(v / a + (m / a) ** 2)) - C2

            hi = 0.5 / vmax * (1.0 - 1e-12)
            theta = optimize.brentq(excess, 0.0, hi, xtol=1e-14 / vmax, rtol=1e-12) if excess(hi) > 0 else hi
        a = 1.0 - 2.0 * theta * v
        const = float(np.sum(-0.5 * np.log(a) + theta * m * m / a))
        signs = (1.0,) if offset is None else (1.0, -1.0)
        g_parts, h_parts, wd_parts = [], [], []
        for sgn in signs:
            U = Z * (sgn * np.sqrt(v / a))
            U += m / a
            q = np.einsum("ij,ij->i", U, U)
            w = np.exp(-theta * q + const)
            r = np.sqrt(q)
            fac = np.where(r > C, 1.0 - C / np.maximum(r, 1e-300), 0.0)
            U /= b  # now x - mu_hat in the original space
            y2 = np.einsum("ij,ij->i", U, U)
            g_parts.append(w * fac * fac * y2)
            h_parts.append(w * (r > C))
            if offset is not None:
                wd_parts.append((w * fac)[:, None] * U)  # -w D, per row
        g = np.mean(g_parts, axis=0)  # pair averages (or the rows themselves)
        h = np.mean(h_parts, axis=0)
        m2 = m2_se = 0.0
        if offset is not None:
            A = 0.5 * (wd_parts[0] + wd_parts[1])  # i.i.d. pair averages, E A = -E D
            s = A.sum(axis=0)
            mean = s / N
            m2 = (float(s @ s) - float(np.einsum("ij,ij->", A, A))) / (N * (N - 1.0))
            proj = A @ mean  # ||mean||^2 moves with the projection of A on the mean (delta method)
            m2_se = float(2.0 * proj.std(ddof=1) / math.sqrt(N))
    out = RowClipMoments(
        e2=float(g.mean()), e2_se=float(g.std(ddof=1) / math.sqrt(N)), m2=m2, m2_se=m2_se,
        pclip=float(h.mean()), pclip_se=float(h.std(ddof=1) / math.sqrt(N)), theta=theta,
    )
    _v.check_finite_result([out.e2, out.e2_se, out.m2, out.m2_se], what="the clipping moments",
                           inputs="Z, C, sigma_data, sigma_mech or offset")
    return out


def expected_error(
    noise: ArrayLike, *, e2: ArrayLike, m2: ArrayLike, n: int
) -> float | NDArray[np.float64]:
    """E||M(X) - f(X)||^2 = noise + n E||D||^2 + n (n - 1) ||E D||^2.

    The decomposition of chapter 7 (proposition "Decomposition of the error") for
    n i.i.d. rows: ``noise`` = E||eta||^2 (:func:`noise_error_at_radius`), ``e2`` =
    E||D||^2 and ``m2`` = ||E D||^2 of one row (:func:`row_clip_moments`).  Broadcasts.
    ``m2`` may be slightly negative (the unbiased estimate of
    :func:`row_clip_moments`), but a negative total is a ValueError.

    Examples
    --------
    >>> expected_error(1.0, e2=0.5, m2=0.25, n=3)
    4.0
    """
    noise = _v.check_finite_array("noise", noise)
    e2 = _v.check_finite_array("e2", e2)
    m2 = _v.check_finite_array("m2", m2)
    for name, a in (("noise", noise), ("e2", e2)):
        if np.any(a < 0):
            raise ValueError(f"{name} must be >= 0 (an expected squared norm), got {name}={a.min()!r}")
    n = _v.check_count("n", n)
    try:
        with np.errstate(over="ignore"):
            out = noise + n * e2 + n * (n - 1.0) * m2
    except ValueError as exc:
        raise ValueError(f"noise, e2 and m2 must broadcast together: {exc}") from None
    _v.check_finite_result(out, what="the expected error", inputs="noise, e2, m2 or n")
    if np.any(out < 0):
        raise ValueError(
            f"m2 is too negative: the expected error noise + n e2 + n (n - 1) m2 must be >= 0, got {out.min()!r}"
        )
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------- #
# the optimum over p_C
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class ClippingOptimum:
    """The radius minimising noise + n E||D||^2 (:func:`optimal_clipping`)."""

    p_opt: float | None  #: optimal p_C; None when the optimum lies below the grid
    C_opt: float  #: optimal radius
    noise: float  #: noise term at the optimum
    bias: float  #: clipping term n E||D||^2 at the optimum
    bias_se: float  #: its Monte Carlo standard error
    total: float  #: noise + bias
    at_edge: bool  #: the minimum is at an end of the searched range
    below_grid: bool  #: the minimum is at one of the radii below the grid


def optimal_clipping(
    p: ArrayLike,
    *,
    C: ArrayLike,
    noise: ArrayLike,
    e2: ArrayLike,
    e2_se: ArrayLike,
    n: int,
    below: Mapping[str, ArrayLike] | None = None,
) -> ClippingOptimum:
    """Minimise noise + n E||D||^2 over the clipping probability p_C (mu_hat = mu).

    On the grid ``p`` (strictly increasing, in (0, 1)) with radii ``C``, noise
    terms ``noise`` (:func:`noise_error_at_radius`) and per-row E||D||^2 ``e2`` with
    standard errors ``e2_se`` (:func:`row_clip_moments`): cubic splines in
    logit(p) of log noise, log e2 and log C through the grid values (points with
    e2 = 0 left out), minimised on 4001 points between the first grid point with
    e2 > 0 and the last.  The standard error of the clipping term is e2's,
    interpolated relative to e2.  ``below`` optionally gives radii smaller than
    the grid's (a mapping with equal-length sequences "C", "noise", "e2",
    "e2_se"), where the values themselves are compared; if one of them beats the
    spline minimum, it is returned with ``p_opt = None`` and ``below_grid``.
    This answers the report's open question of the bias-variance choice of p_C
    (Section 6) for the total error of the decomposition.
    """
    p = _v.check_probability_array("p", p)
    if p.ndim != 1 or p.size < 4 or not np.all(np.diff(p) > 0):
        raise ValueError(f"p must be a strictly increasing 1-D grid of at least 4 values, got p of shape {p.shape}")
    k = p.size
    C = _v.check_positive_vector("C", C, length=k, of="one entry per entry of p")
    noise = _v.check_positive_vector("noise", noise, length=k, of="one entry per entry of p")
    e2 = _v.check_nonnegative_vector("e2", e2, length=k, of="one entry per entry of p", allow_all_zero=True)
    e2_se = _v.check_nonnegative_vector("e2_se", e2_se, length=k, of="one entry per entry of p",
                                        allow_all_zero=True)
    if int(np.count_nonzero(e2 > 0)) < 4:
        raise ValueError("e2 must be > 0 at 4 or more grid points (log e2 is interpolated), "
                         f"got {int(np.count_nonzero(e2 > 0))}")
    n = _v.check_count("n", n)
    x = _logit(p)
    fn = interpolate.CubicSpline(x, np.log(noise))
    fc = interpolate.CubicSpline(x, np.log(C))
    good = e2 > 0
    fe = interpolate.CubicSpline(x[good], np.log(e2[good]))
    xf = np.linspace(x[good][0], x[-1], 4001)
    with np.errstate(over="ignore"):  # an overflow is reported just below
        nz, bz = np.exp(fn(xf)), np.exp(fe(xf))
        tot = nz + n * bz
    _v.check_finite_result(tot, what="noise + n e2 on the grid", inputs="noise, e2 or n")
    i = int(np.argmin(tot))
    with np.errstate(over="ignore"):  # reported with the result below
        rel = np.interp(xf[i], x[good], (e2_se[good] / e2[good]))
        out = ClippingOptimum(
            p_opt=float(_expit(xf[i])), C_opt=float(np.exp(fc(xf[i]))), noise=float(nz[i]),
            bias=float(n * bz[i]), bias_se=float(rel * n * bz[i]), total=float(tot[i]),
            at_edge=bool(i == 0 or i == len(xf) - 1), below_grid=False)
    _v.check_finite_result([out.C_opt, out.bias, out.bias_se], what="the optimum",
                           inputs="C, noise, e2, e2_se or n")
    if below is None:
        return out
    below = _v.check_mapping("below", below, keys=("C", "noise", "e2", "e2_se"))
    sm = {"C": _v.check_nonnegative_vector("below['C']", below["C"], allow_all_zero=True)}
    for name in ("noise", "e2", "e2_se"):
        sm[name] = _v.check_nonnegative_vector(f"below[{name!r}]", below[name], length=sm["C"].size,
                                               of="one entry per radius of below['C']", allow_all_zero=True)
    with np.errstate(over="ignore"):
        st = sm["noise"] + n * sm["e2"]
    _v.check_finite_result(st, what="noise + n e2 below the grid", inputs="below or n")
    j = int(np.argmin(st))
    if st[j] < out.total:
        out = ClippingOptimum(
            p_opt=None, C_opt=float(sm["C"][j]), noise=float(sm["noise"][j]),
            bias=float(n * sm["e2"][j]), bias_se=float(n * sm["e2_se"][j]), total=float(st[j]),
            at_edge=j == len(st) - 1, below_grid=True)
    return out


# --------------------------------------------------------------------------- #
# the baseline's E||D||^2 exactly
# --------------------------------------------------------------------------- #
def baseline_clip_moment_exact(sigma: ArrayLike, *, p: ArrayLike, nodes: int = 64) -> float | NDArray[np.float64]:
    """The baseline's E||D||^2 at clipping probability p, by quadrature of gchisq.sf.

    The clipping term of chapter 7's decomposition for the report's baseline (Section 5's
    clipped Gaussian mechanism), computed without Monte Carlo.

    For the baseline (b = 1, mu_hat = mu) ||D|| = (R - C_n)_+ with
    R^2 = ||x - mu||^2 = sum_j sigma_j^2 Z_j^2, so

        E||D||^2 = E (R - C_n)_+^2 = int_{C_n}^inf 2 (r - C_n) P(R > r) dr,

    evaluated by Gauss-Legendre quadrature with ``nodes`` nodes on
    [C_n, C_n + 12 sigma_max] (beyond it P(R > r) < e^{-72} relative to the
    integrand's scale) with :func:`egmlib.gchisq` tails: an analytic cross-check
    of :func:`row_clip_moments`.  ``p`` scalar or 1-D; returns a float or an array.

    Examples
    --------
    >>> # d = 1: E(|Z| - C)_+^2 = 2 [(1 + C^2) sf(C) - C phi(C)] with C the upper p/2 quantile
    >>> from scipy import stats
    >>> C = stats.norm.isf(0.05)
    >>> exact = 2 * ((1 + C**2) * 0.05 - C * stats.norm.pdf(C))
    >>> bool(abs(baseline_clip_moment_exact([1.0], p=0.1) / exact - 1) < 1e-12)
    True
    """
    sigma = _v.check_nonnegative_vector("sigma", sigma)
    pa = _v.check_probability_array("p", p)
    if pa.ndim > 1:
        raise ValueError(f"p must be a scalar or one-dimensional, got p of shape {pa.shape}")
    nodes = _v.check_count("nodes", nodes, minimum=2, maximum=10**4)
    smax = float(np.max(sigma))
    dist = gchisq.WeightedChiSquare((sigma / smax) ** 2)
    xg, wg = np.polynomial.legendre.leggauss(nodes)
    out = []
    for pv in np.atleast_1d(pa):
        Cn = smax * math.sqrt(float(dist.isf(float(pv))))
        L = 12.0 * smax
        with np.errstate(over="ignore", invalid="ignore"):  # reported below
            r = Cn + 0.5 * L * (xg + 1.0)
            out.append(float(0.5 * L * np.sum(wg * 2.0 * (r - Cn) * dist.sf((r / smax) ** 2))))
    _v.check_finite_result(out, what="E||D||^2", inputs="sigma")
    return out[0] if pa.ndim == 0 else np.array(out)
