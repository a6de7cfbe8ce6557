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
* :func:`expected_error` -- the decomposition above; :func:`optimal_radius` -- the
  radius (equivalently p_C, :func:`clipping_log10_probability`) that minimises it, found
  by a free search over every radius with a bracket check, not on a grid of p_C.

The same error measured by running the mechanisms on simulated datasets is
:mod:`egmbook.error_simulation`.  Methods are named as in
:data:`egmlib.mechanisms.METHODS`: ``"alg3"`` (Algorithm 3,
``mechanisms.algorithm3``) and ``"base"`` (the baseline,
``mechanisms.clipped_gaussian_mechanism``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from egmlib import gchisq, mechanisms, scaling
from egmlib import validation as _v

__all__ = [
    "RowClipMoments",
    "RadiusOptimum",
    "ClippingOptimum",
    "noise_error_at_radius",
    "row_clip_moments",
    "expected_error",
    "optimal_radius",
    "clipping_log10_probability",
    "baseline_clip_moment_exact",
]

_PER_COLUMN = "one entry per column of Z"


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
# the optimum over the radius (equivalently over p_C)
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class RadiusOptimum:
    """The radius minimising an error curve, with the bracket that shows it (:func:`optimal_radius`).

    ``value_below >= value <= value_above`` with ``C_below <= C <= C_above < C_max``: the
    minimum is bracketed inside the searched range, never at its upper edge.
    """

    C: float  #: the minimising radius
    value: float  #: the error there
    C_below: float  #: the scanned radius just below the scan's minimum (0 is scanned too)
    value_below: float  #: the error there
    C_above: float  #: the scanned radius just above the scan's minimum
    value_above: float  #: the error there
    C_max: float  #: the largest radius searched
    evaluations: int  #: calls of the error function


def optimal_radius(
    error: Callable[[float], float], *, C_lo: float, C_hi: float, per_decade: int = 6, rtol: float = 1e-5
) -> RadiusOptimum:
    """Minimise ``error(C)`` over every radius C in [0, C_hi], with a bracket check.

    The free optimisation of chapter 7 (the report leaves the choice of p_C open, Section 6):
    ``error`` is a deterministic error curve, e.g. the decomposition of
    :func:`expected_error` from :func:`row_clip_moments` with fixed draws Z (common random
    numbers).  The radius C and the clipping probability p_C are one-to-one (p_C is the tail
    probability of the centred law at C, :func:`clipping_log10_probability`), so this is the
    optimum over p_C, including p_C below any float (C large) and p_C = 1 (C = 0, the
    data-free release).

    Method: ``error`` on C = 0 and on a geometric grid from ``C_lo`` to ``C_hi`` with
    ``per_decade`` points per decade; the grid's minimum and its two neighbours bracket the
    optimum (C = 0 and the first grid radius when the grid's minimum is at 0), which bounded
    Brent (:func:`scipy.optimize.minimize_scalar`) then refines in log C (in C when the bracket
    starts at 0) to a relative tolerance ``rtol``.  A minimum
    at ``C_hi`` is a ValueError: the optimum lies beyond the search, which must not pass for
    an optimum (as the first version of chapter 7 let p_C = 1e-8, the end of its grid, do).
    C = 0 is a genuine end of the range, not an artefact, and may be returned.

    Examples
    --------
    >>> o = optimal_radius(lambda C: (C - 2.0) ** 2 + 1.0, C_lo=1e-3, C_hi=1e3)
    >>> round(o.C, 6), round(o.value, 12), o.C_below < o.C < o.C_above < o.C_max
    (2.0, 1.0, True)
    """
    error = _v.check_callable("error", error)
    C_lo = _v.check_positive_finite("C_lo", C_lo)
    C_hi = _v.check_positive_finite("C_hi", C_hi)
    if not C_hi > C_lo:
        raise ValueError(f"C_hi must be larger than C_lo, got C_lo={C_lo!r}, C_hi={C_hi!r}")
    if not C_hi <= 1e30 * C_lo:  # also catches the overflow of C_hi / C_lo
        raise ValueError(f"C_hi must be at most 1e30 times C_lo (a scan of at most 30 decades), got C_lo={C_lo!r}, "
                         f"C_hi={C_hi!r}")
    per_decade = _v.check_count("per_decade", per_decade, minimum=2, maximum=1000)
    rtol = _v.check_positive_finite("rtol", rtol)
    if rtol >= 0.1:
        raise ValueError(f"rtol must be < 0.1 (a relative tolerance on the radius), got rtol={rtol!r}")
    calls = 0

    def f(C: float) -> float:
        nonlocal calls
        calls += 1
        v = error(float(C))
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v):
            raise ValueError(f"error must return a finite number, got {v!r} at C={C!r}")
        return float(v)

    k = max(3, int(math.ceil(per_decade * math.log10(C_hi / C_lo))) + 1)
    grid = np.concatenate([[0.0], np.geomspace(C_lo, C_hi, k)])
    vals = np.array([f(c) for c in grid])
    i = int(np.argmin(vals))
    if i == len(grid) - 1:
        raise ValueError(f"the error still falls at the largest radius searched, C_hi={C_hi!r} (error "
                         f"{vals[-2]!r} -> {vals[-1]!r}): the optimum lies beyond the search; raise C_hi")
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[i + 1])
    if lo == 0.0:  # the bracket starts at C = 0: refine in C (0 itself may be the minimum)
        r = optimize.minimize_scalar(f, bounds=(0.0, hi), method="bounded",
                                     options={"xatol": rtol * float(grid[max(i, 1)])})
        C_star = float(r.x)
    else:
        r = optimize.minimize_scalar(lambda u: f(math.exp(u)), bounds=(math.log(lo), math.log(hi)),
                                     method="bounded", options={"xatol": rtol})
        C_star = math.exp(float(r.x))
    v_star = float(r.fun)
    if not v_star <= vals[i]:  # Brent's last point is no better than the scan's: keep the scan's
        C_star, v_star = float(grid[i]), float(vals[i])
    return RadiusOptimum(C=C_star, value=v_star, C_below=lo, value_below=float(vals[max(i - 1, 0)]), C_above=hi,
                         value_above=float(vals[i + 1]), C_max=C_hi, evaluations=calls)


def clipping_log10_probability(method: str, *, sigma: ArrayLike, C: float) -> float:
    """log10 of the clipping probability p_C of a row at radius C, with the exact centre.

    The inverse of :func:`egmbook.experiments.clipping_radii`: for ``"alg3"`` the tail
    P(sum_j (sigma_j / sum_i sigma_i) Z_j^2 > C^2) of the transformed row (Lemma 4.1's b),
    for ``"base"`` P(sum_j sigma_j^2 Z_j^2 > C^2), from :func:`egmlib.gchisq.logsf`, so
    that probabilities far below the float range (an offset centre's optimum) keep their
    exponent.  C = 0 gives 0 (p_C = 1).

    Examples
    --------
    >>> C = math.sqrt(2 * math.log(2))         # the median of chi^2_2 is 2 ln 2
    >>> round(clipping_log10_probability("base", sigma=[1.0, 1.0], C=C), 12) == round(math.log10(0.5), 12)
    True
    """
    method = _v.check_choice("method", method, mechanisms.METHODS)
    sigma = _v.check_positive_vector("sigma", sigma)
    C = _v.check_nonnegative_finite("C", C)
    smax = float(sigma.max())
    rel = sigma / smax
    if method == "alg3":
        w, x = rel / float(np.sum(rel)), C * C
    else:
        w, x = rel**2, (C / smax) ** 2
    _v.check_finite_result(x, what="the squared radius", inputs="C or sigma")
    return float(gchisq.logsf(x, w=w)) / math.log(10.0)


@dataclass(frozen=True)
class ClippingOptimum:
    """The radius minimising noise + n E||D||^2 with the exact centre, and its terms."""

    p_opt: float  #: the clipping probability p_C at the optimal radius (1.0 at C = 0)
    C_opt: float  #: optimal radius
    noise: float  #: noise term at the optimum
    bias: float  #: clipping term n E||D||^2 at the optimum
    bias_se: float  #: its Monte Carlo standard error
    total: float  #: noise + bias
    below_grid: bool  #: the radius lies below the plotted p_C grid's smallest (p_C > 1 - 1e-6)
    search: RadiusOptimum  #: how the optimum was found (:func:`optimal_radius`)


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
