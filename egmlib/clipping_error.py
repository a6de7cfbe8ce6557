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

* :func:`clipping_radii` and :func:`noise_error` -- the radii (C_t, C_n) at a
  tail probability p and the noise terms, eq. (24) and eq. (5) with
  ||Delta|| = 2 C_n;
* :func:`row_clip_moments` -- E||D||^2 and ||E D||^2 of one row by importance
  sampling (exponential tilting of ||u||^2, common random numbers, antithetic
  pairs); :func:`baseline_clip_moment_exact` -- the baseline's E||D||^2 as a
  one-dimensional integral of the generalized chi-square tail (a cross-check);
* :func:`expected_error` -- the decomposition above; :func:`optimal_clipping` --
  the p_C (or radius) that minimises it;
* :func:`simulate_errors` -- the same error measured by running the mechanisms
  on simulated datasets, split into its clipping and noise parts, and
  :func:`mean_ci` to summarise repetitions.

Methods are named ``"alg3"`` (Algorithm 3, ``mechanisms.egm_gaussian_data``)
and ``"base"`` (the baseline, ``mechanisms.clipped_gaussian_mechanism``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import interpolate, optimize, stats

from egmlib import gchisq, mechanisms, scaling
from egmlib import _validation as _v

__all__ = [
    "MECHANISMS",
    "RowClipMoments",
    "ClippingOptimum",
    "SimulatedErrors",
    "clipping_radii",
    "noise_error",
    "row_clip_moments",
    "expected_error",
    "optimal_clipping",
    "baseline_clip_moment_exact",
    "simulate_errors",
    "mean_ci",
]

#: The two mechanisms compared, by method name.
MECHANISMS = {"alg3": mechanisms.egm_gaussian_data, "base": mechanisms.clipped_gaussian_mechanism}


# --------------------------------------------------------------------------- #
# argument checks specific to this module
# --------------------------------------------------------------------------- #
def _check_method(method):
    if not isinstance(method, str) or method not in MECHANISMS:
        raise ValueError(f"method must be one of {sorted(MECHANISMS)}, got method={method!r}")
    return method


def _check_vector_length(name, v, d):
    if v.shape != (d,):
        raise ValueError(f"{name} must have length d={d}, got shape {v.shape}")


def _check_finite_array(name, a, *, ndim=None, min_rows=1):
    """A float64 array (no copy if already one) with finite entries."""
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if a.ndim >= 1 and a.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got NaN or inf")
    return a


def _logit(p):
    p = np.asarray(p, dtype=float)
    return np.log(p) - np.log1p(-p)


def _expit(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


# --------------------------------------------------------------------------- #
# radii and noise
# --------------------------------------------------------------------------- #
def clipping_radii(sigma, *, p):
    """Clipping radii (C_t, C_n) at tail probability p (scalar or array).

    C_t: Algorithm 3's radius in the transformed space (weights sigma_j / sum sigma,
    Lemma 4.1); C_n: the baseline's radius in the original space (weights
    sigma_j^2).  Square roots of Section 5's thresholds
    (:func:`egmlib.scaling.clipping_thresholds`, exact gchisq quantiles).

    Examples
    --------
    >>> ct, cn = clipping_radii([1.0, 1.0], p=0.5)   # chi^2_2: C^2 = 2 ln 2 (C_n), ln 2 (C_t)
    >>> round(float(ct), 10), round(float(cn), 10)
    (0.8325546112, 1.1774100225)
    """
    cn2, ct2 = scaling.clipping_thresholds(sigma, p=p)
    return np.sqrt(ct2), np.sqrt(cn2)


def noise_error(method, *, sigma, C, sigma_opt) -> float:
    """Predicted E||eta||^2 of a method at radius C.

    ``"alg3"``: eq. (9) with Lemma 4.1's b, i.e. eq. (24),
    (2 C sigma_opt)^2 sum_j b_j^-2 = (2 C sigma_opt sum_j sigma_j)^2;
    ``"base"``: eq. (5) with ||Delta|| = 2 C, i.e. d (2 C sigma_opt)^2 (Section 5's
    E_n with the factor d).  C = 0 (every row clipped to the centre: the
    data-free release n mu_hat) needs no noise and gives 0.

    Examples
    --------
    >>> round(noise_error("base", sigma=[1.0, 1.0], C=1.0, sigma_opt=1.0), 12)   # 2 (2 C)^2
    8.0
    >>> round(noise_error("alg3", sigma=[1.0, 1.0], C=1.0, sigma_opt=1.0), 12)   # (2 C * 2)^2
    16.0
    """
    method = _check_method(method)
    sigma = _v.check_positive_vector("sigma", sigma)
    C = _v.check_nonnegative_finite("C", C)
    so = _v.check_positive_finite("sigma_opt", sigma_opt)
    if C == 0.0:
        return 0.0
    if method == "alg3":
        return scaling.algorithm3_noise_error(scaling.gaussian_data_scaling(sigma), C=C, sigma_opt=so)
    d = len(sigma)
    return scaling.gaussian_mechanism_error(np.full(d, 2.0 * C / math.sqrt(d)), sigma_opt=so)


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
    theta: float  #: the tilt used (0: plain Monte Carlo)


def row_clip_moments(Z, *, method, C, sigma_data, sigma_mech=None, offset=None,
                     tilt=True) -> RowClipMoments:
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
    method = _check_method(method)
    Z = _check_finite_array("Z", Z, ndim=2, min_rows=2)
    N, d = Z.shape
    C = _v.check_nonnegative_finite("C", C)
    sigma_data = _v.check_nonnegative_vector("sigma_data", sigma_data)
    _check_vector_length("sigma_data", sigma_data, d)
    if sigma_mech is None:
        sigma_mech = sigma_data
    else:
        sigma_mech = _v.check_nonnegative_vector("sigma_mech", sigma_mech)
        _check_vector_length("sigma_mech", sigma_mech, d)
    if offset is not None:
        offset = _check_finite_array("offset", offset, ndim=1)
        _check_vector_length("offset", offset, d)
    if not isinstance(tilt, (bool, np.bool_)):
        raise ValueError(f"tilt must be True or False, got tilt={tilt!r}")
    if method == "alg3":
        if np.any(sigma_mech == 0):
            raise ValueError("sigma_mech must be > 0 entrywise for method='alg3' "
                             "(Lemma 4.1's b_j = (sigma_j sum sigma)^(-1/2))")
        b = scaling.gaussian_data_scaling(sigma_mech)
    else:
        b = np.ones(d)
    v = (sigma_data * b) ** 2
    m = np.zeros(d) if offset is None else -offset * b
    C2 = C ** 2
    theta = 0.0
    if tilt and float(np.sum(v + m * m)) < C2:
        vmax = float(v.max())

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
    return RowClipMoments(
        e2=float(g.mean()), e2_se=float(g.std(ddof=1) / math.sqrt(N)), m2=m2, m2_se=m2_se,
        pclip=float(h.mean()), pclip_se=float(h.std(ddof=1) / math.sqrt(N)), theta=theta,
    )


def expected_error(noise, *, e2, m2, n):
    """E||M(X) - f(X)||^2 = noise + n E||D||^2 + n (n - 1) ||E D||^2.

    The decomposition of chapter 7 (proposition "Decomposition of the error") for
    n i.i.d. rows: ``noise`` = E||eta||^2 (:func:`noise_error`), ``e2`` = E||D||^2
    and ``m2`` = ||E D||^2 of one row (:func:`row_clip_moments`).  Broadcasts.

    Examples
    --------
    >>> expected_error(1.0, e2=0.5, m2=0.25, n=3)
    4.0
    """
    noise = _check_finite_array("noise", noise)
    e2 = _check_finite_array("e2", e2)
    m2 = _check_finite_array("m2", m2)
    for name, a in (("noise", noise), ("e2", e2)):
        if np.any(a < 0):
            raise ValueError(f"{name} must be >= 0 (an expected squared norm)")
    n = _v.check_count("n", n)
    out = noise + n * e2 + n * (n - 1.0) * m2
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


def optimal_clipping(p, *, C, noise, e2, e2_se, n, below=None) -> ClippingOptimum:
    """Minimise noise + n E||D||^2 over the clipping probability p_C (mu_hat = mu).

    On the grid ``p`` (strictly increasing, in (0, 1)) with radii ``C``, noise
    terms ``noise`` (:func:`noise_error`) and per-row E||D||^2 ``e2`` with
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
        raise ValueError(f"p must be a strictly increasing 1-D grid of at least 4 values, got shape {p.shape}")
    arrays = {}
    for name, a in (("C", C), ("noise", noise), ("e2", e2), ("e2_se", e2_se)):
        a = _check_finite_array(name, a, ndim=1)
        _v.check_same_shape("p", p, name, a)
        arrays[name] = a
    C, noise, e2, e2_se = arrays["C"], arrays["noise"], arrays["e2"], arrays["e2_se"]
    if np.any(C <= 0) or np.any(noise <= 0):
        raise ValueError("C and noise must be > 0 on the grid (their logarithms are interpolated)")
    if np.any(e2 < 0) or np.any(e2_se < 0):
        raise ValueError("e2 and e2_se must be >= 0")
    if int(np.count_nonzero(e2 > 0)) < 4:
        raise ValueError("e2 must be > 0 at 4 or more grid points (log e2 is interpolated)")
    n = _v.check_count("n", n)
    x = _logit(p)
    fn = interpolate.CubicSpline(x, np.log(noise))
    fc = interpolate.CubicSpline(x, np.log(C))
    good = e2 > 0
    fe = interpolate.CubicSpline(x[good], np.log(e2[good]))
    xf = np.linspace(x[good][0], x[-1], 4001)
    nz, bz = np.exp(fn(xf)), np.exp(fe(xf))
    tot = nz + n * bz
    i = int(np.argmin(tot))
    rel = np.interp(xf[i], x[good], (e2_se[good] / e2[good]))
    out = ClippingOptimum(
        p_opt=float(_expit(xf[i])), C_opt=float(np.exp(fc(xf[i]))), noise=float(nz[i]),
        bias=float(n * bz[i]), bias_se=float(rel * n * bz[i]), total=float(tot[i]),
        at_edge=bool(i == 0 or i == len(xf) - 1), below_grid=False)
    if below is None:
        return out
    if not isinstance(below, Mapping) or set(below) < {"C", "noise", "e2", "e2_se"}:
        raise ValueError("below must be a mapping with keys 'C', 'noise', 'e2', 'e2_se'")
    sm = {}
    for name in ("C", "noise", "e2", "e2_se"):
        sm[name] = _check_finite_array(f"below[{name!r}]", below[name], ndim=1)
        _v.check_same_shape("below['C']", sm["C"], f"below[{name!r}]", sm[name])
    st = sm["noise"] + n * sm["e2"]
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
def baseline_clip_moment_exact(sigma, *, p, nodes=64):
    """The baseline's E||D||^2 at clipping probability p, by quadrature of gchisq.sf.

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
        raise ValueError(f"p must be a scalar or one-dimensional, got shape {pa.shape}")
    nodes = _v.check_count("nodes", nodes, minimum=2)
    smax = float(np.max(sigma))
    dist = gchisq.WeightedChiSquare((sigma / smax) ** 2)
    xg, wg = np.polynomial.legendre.leggauss(nodes)
    out = []
    for pv in np.atleast_1d(pa):
        Cn = smax * math.sqrt(float(dist.isf(float(pv))))
        L = 12.0 * smax
        r = Cn + 0.5 * L * (xg + 1.0)
        out.append(float(0.5 * L * np.sum(wg * 2.0 * (r - Cn) * dist.sf((r / smax) ** 2))))
    return out[0] if pa.ndim == 0 else np.array(out)


# --------------------------------------------------------------------------- #
# direct simulation through the mechanisms
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class SimulatedErrors:
    """Per-repetition errors of one run of :func:`simulate_errors` (arrays of length reps)."""

    bias2: np.ndarray  #: ||B||^2, B = clipped sum - true sum (the clipping error)
    noise2: np.ndarray  #: ||eta||^2
    total2: np.ndarray  #: ||B + eta||^2 = ||release - true sum||^2
    n_clipped: np.ndarray  #: rows clipped
    bias_vec: np.ndarray  #: (reps, d) the vectors B


def simulate_errors(n, *, sigmas, runs, reps, rng, eps, delta, chunk_elems=2**24):
    """Run the mechanisms on ``reps`` simulated datasets and split each error.

    For every repetition one matrix of standard normals Z (n x d) is drawn, and
    for each key k of ``sigmas`` the dataset X_k = Z * sigmas[k] (rows from
    N(0, diag(sigma_k^2)); all keys share Z).  Each run (sigma_key, method,
    p_clip, mu_hat) releases M(X_k) with ``MECHANISMS[method]`` at that p_clip
    and centre (mu_hat None: 0, the true mean), and its error
    M(X) - sum_i x_i = B + eta is split into the clipping error B and the noise
    eta of the decomposition (:func:`expected_error`).

    Datasets larger than ``chunk_elems`` are streamed in row blocks: with p_clip
    given, the noise-free release is additive over row blocks, so the sum of the
    blocks' clipped sums is the clipped sum of the whole dataset; the noise comes
    from the call on the first block (it does not depend on the data).  Random
    numbers are drawn from ``rng`` in a fixed order (per repetition and block:
    Z, then the noise of each run in the order of ``sigmas``, then of ``runs``).

    Returns
    -------
    list of SimulatedErrors, one per run, in the order of ``runs``.
    """
    n = _v.check_count("n", n)
    reps = _v.check_count("reps", reps)
    rng = _v.check_rng(rng)
    chunk_elems = _v.check_count("chunk_elems", chunk_elems)
    if not isinstance(sigmas, Mapping) or not sigmas:
        raise ValueError("sigmas must be a non-empty mapping {key: standard deviations}")
    sig = {}
    for k, s in sigmas.items():
        sig[k] = _v.check_nonnegative_vector(f"sigmas[{k!r}]", s)
    d = len(next(iter(sig.values())))
    for k, s in sig.items():
        _check_vector_length(f"sigmas[{k!r}]", s, d)
    if not isinstance(runs, Sequence) or not runs:
        raise ValueError("runs must be a non-empty sequence of (sigma_key, method, p_clip, mu_hat)")
    plan = []
    for i, run in enumerate(runs):
        if len(run) != 4:
            raise ValueError(f"runs[{i}] must be (sigma_key, method, p_clip, mu_hat), got {run!r}")
        key, method, p, mu_hat = run
        if key not in sig:
            raise ValueError(f"runs[{i}]: sigma_key {key!r} is not a key of sigmas")
        _check_method(method)
        p = _v.check_probability(f"runs[{i}] p_clip", p)
        mu_hat = np.zeros(d) if mu_hat is None else _check_finite_array(f"runs[{i}] mu_hat", mu_hat, ndim=1)
        _check_vector_length(f"runs[{i}] mu_hat", mu_hat, d)
        plan.append((key, MECHANISMS[method], p, mu_hat))
    res = [{"bias2": [], "noise2": [], "total2": [], "nclip": [], "bias_vec": []} for _ in plan]
    rows = max(1, min(n, chunk_elems // d))
    for _ in range(reps):
        acc = [np.zeros(d) for _ in plan]
        ncl = [0] * len(plan)
        eta = [None] * len(plan)
        true = {k: np.zeros(d) for k in sig}
        for start in range(0, n, rows):
            Z = rng.standard_normal((min(rows, n - start), d))
            for k, sigma in sig.items():
                X = Z * sigma
                true[k] += X.sum(axis=0)
                for i, (kk, mech, p, mu_hat) in enumerate(plan):
                    if kk != k:
                        continue
                    first = start == 0
                    r = mech(X, sigma=sigma, mu_hat=mu_hat, eps=eps, delta=delta, rng=rng if first else None,
                             p_clip=p, noise=first)
                    acc[i] += r.clipped_sum
                    ncl[i] += r.n_clipped
                    if first:
                        eta[i] = np.array(r.noise)
        for i, (k, _, _, _) in enumerate(plan):
            B = acc[i] - true[k]
            e = eta[i]
            res[i]["bias2"].append(float(B @ B))
            res[i]["noise2"].append(float(e @ e))
            res[i]["total2"].append(float((B + e) @ (B + e)))
            res[i]["nclip"].append(ncl[i])
            res[i]["bias_vec"].append(B)
    return [SimulatedErrors(bias2=np.array(r["bias2"]), noise2=np.array(r["noise2"]),
                            total2=np.array(r["total2"]), n_clipped=np.array(r["nclip"]),
                            bias_vec=np.array(r["bias_vec"])) for r in res]


def mean_ci(x, axis=0):
    """Mean, standard error and half-width of a two-sided 95% Student-t interval.

    Over ``axis`` of the repetitions ``x``.  With a single repetition the
    standard error is unknown and both are returned as inf (an unbounded
    interval), never NaN.

    Examples
    --------
    >>> m, se, ci = mean_ci([1.0, 2.0, 3.0])
    >>> float(m), float(se), round(float(ci), 4)
    (2.0, 0.5773502691896258, 2.4841)
    """
    x = _check_finite_array("x", x)
    r = x.shape[axis]
    m = x.mean(axis=axis)
    if r < 2:
        return m, np.full_like(m, np.inf), np.full_like(m, np.inf)
    se = x.std(axis=axis, ddof=1) / math.sqrt(r)
    return m, se, stats.t.ppf(0.975, r - 1) * se
