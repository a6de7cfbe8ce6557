"""The error of a clipped noisy sum: noise, clipping and centre terms, and the best p_C.

Algorithm 3 and its baseline (:mod:`egmlib.mechanisms`) release
M(X) = sum_i clip(x_i) + eta, where clip moves a row towards the centre mu_hat
when it lies outside the clipping ball (of radius C_t after Lemma 4.1's
transformation for Algorithm 3, of radius C_n in the original space for the
baseline) and eta is Gaussian noise independent of the data.  The report
compares the two by E||eta||^2 alone (eqs. (5), (24), Figure 2) and leaves the
clipping bias and the choice of the clipping probability p_C open (Sections 6
and 6.1).  With D_i = clip(x_i) - x_i and i.i.d. rows, the book's chapter 7
(Proposition 7.A) has

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

import functools
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import interpolate, optimize, special

from egmlib import gchisq, mechanisms, scaling
from egmlib import validation as _v

__all__ = [
    "RowClipMoments",
    "RowDraws",
    "RowClipModel",
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


class RowDraws:
    """Standard normal draws Z (N x d) for :class:`RowClipModel`, validated once, with their squares.

    Models built on one ``RowDraws`` (several centres, methods or standard deviations with the same
    draws: common random numbers) share the two N x d arrays instead of each holding a copy.
    """

    def __init__(self, Z: ArrayLike) -> None:
        Z = _v.check_finite_array("Z", Z, ndim=2)
        if Z.shape[0] < 2:
            raise ValueError(f"Z must have at least 2 rows (draws), got Z of shape {Z.shape}")
        Z = np.array(Z, dtype=np.float64)  # an own copy: the model reads it at every radius
        Z.setflags(write=False)
        Z2 = Z * Z
        Z2.setflags(write=False)
        self.Z, self.Z2 = Z, Z2

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.Z.shape[0]), int(self.Z.shape[1]))


class RowClipModel:
    """The per-row model of the clipping loss for fixed draws Z: E||D||^2, ||E D||^2 and P(clip) at any radius.

    Build it once for given draws and inputs, then call :meth:`moments` for each radius C
    (:func:`row_clip_moments` does both for one radius); the validated draws, their squares
    and the centre term's nodes are computed once.

    Row model: x = mu + sigma_data * z.  The mechanism centres at
    mu_hat = mu + offset and clips u = (x - mu_hat) * b to radius C, with b =
    Lemma 4.1's scaling of sigma_mech (``"alg3"``, Algorithm 3) or b = 1
    (``"base"``), so D = -h(||u||^2) (x - mu_hat) with the shrink factor
    h(q) = (1 - C/sqrt(q))_+.  These are the per-row terms of the decomposition
    (:func:`expected_error`); E D = 0 when offset is None (the law of x - mu_hat is
    then symmetric).  u_j ~ N(m_j, v_j) with v_j = (b_j sigma_data_j)^2, m_j = -b_j offset_j.

    *Conditioning.*  The coordinate k of largest variance v_k is integrated exactly, given
    the others, by quadrature (``_top_coordinate_integrals``); only the other d - 1
    coordinates are sampled.  When one coordinate carries most of the variance, as with
    Zipf standard deviations, this removes most of the Monte Carlo error: the clipping
    of a row is mostly decided by that coordinate.

    *Importance sampling.*  The other coordinates are drawn as u_j ~ N(m_j / a_j, v_j / a_j),
    a_j = 1 - 2 theta v_j, the law of u tilted by exp(theta ||u||^2), with likelihood ratio
    exp(-theta ||u||^2) prod_j a_j^(-1/2) exp(theta m_j^2 / a_j).  With ``tilt``, theta >= 0
    puts the tilted mean of the whole ||u||^2 at C^2 (theta = 0 when the untilted mean is
    already above C^2), which keeps the relative error bounded for tiny clipping
    probabilities.  Z (N x d standard normals) may be shared across calls (common random
    numbers); its column k is not used as a coordinate.  With an offset every z is paired
    with -z (antithetic pairs).

    *The centre term.*  E D is not estimated from the rows' D, whose signs cancel in the
    mean, but from the size-biasing identity of a Gaussian coordinate (Stein's identity for
    a non-central chi-square: for X ~ N(m, 1), E[X f(X^2)] = m E f(chi'^2_3(m^2))): for
    y_j = x_j - mu_hat_j ~ N(-offset_j, sigma_data_j^2),
    E[y_j h(||u||^2)] = -offset_j E[h(||u||^2 + v_j E)], with E ~ chi^2_2 independent (drawn
    from column k of Z).  So E_j D = offset_j H(v_j), H(t) = E h(||u||^2 + t E), a positive
    smooth function of t, computed at the nodes of ``_variance_nodes`` (with coordinate k
    integrated exactly) and interpolated; coordinate k's own E_k D is integrated exactly.
    No cancellation is left, and n (n - 1) ||E D||^2, which dominates the error for large n
    with an offset centre, keeps a small relative standard error: at d = 100, alpha = 2,
    n = 10^4, an isotropic offset of 0.1 ||sigma|| and the baseline's optimal radius, the
    whole decomposition has a relative standard error of 0.03 % with N = 5000 rows, where
    averaging the rows' own D over plain draws of all coordinates gives 1.3 %.

    Parameters
    ----------
    Z : array_like, shape (N, d), finite, N >= 2, or RowDraws
        Standard normal draws (a :class:`RowDraws` to share them between models).
    method : "alg3" or "base"
    sigma_data : array_like, shape (d,), finite, >= 0, at least one > 0
        Standard deviations of the data.
    sigma_mech : array_like, shape (d,), optional
        Standard deviations the mechanism uses for b (default sigma_data);
        every entry > 0 for "alg3".
    offset : array_like, shape (d,), finite, optional
        mu_hat - mu.
    tilt : bool

    Notes
    -----
    The squared norms of the sampled coordinates come from two matrix-vector products with
    Z and Z * Z (and their sign-flipped twins for the antithetic rows), so a radius costs
    O(N d) multiply-adds and no copy of Z.
    """

    def __init__(
        self,
        Z: ArrayLike | RowDraws,
        *,
        method: str,
        sigma_data: ArrayLike,
        sigma_mech: ArrayLike | None = None,
        offset: ArrayLike | None = None,
        tilt: bool = True,
    ) -> None:
        method = _v.check_choice("method", method, mechanisms.METHODS)
        draws = Z if isinstance(Z, RowDraws) else RowDraws(Z)
        N, d = draws.shape
        sigma_data = _v.check_nonnegative_vector("sigma_data", sigma_data, length=d, of=_PER_COLUMN)
        if sigma_mech is None:
            sigma_mech = sigma_data
        else:
            sigma_mech = _v.check_nonnegative_vector("sigma_mech", sigma_mech, length=d, of=_PER_COLUMN)
        if offset is not None:
            offset = _v.check_finite_vector("offset", offset, length=d, of=_PER_COLUMN)
        self.tilt = _v.check_bool("tilt", tilt)
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
        if float(v.max()) == 0.0:
            raise ValueError("the transformed variances (sigma_data b)^2 underflow to 0: sigma_data or "
                             "sigma_mech out of the float range relative to each other")
        with np.errstate(over="ignore", invalid="ignore"):
            spread = float(np.sum(v + m * m))  # E||u||^2
        if not math.isfinite(spread):
            raise ValueError("the clipping moments overflow: sigma_data, sigma_mech or offset out of the "
                             "float range (the transformed variances or centre are not finite)")
        self.N, self.b, self.v, self.m = N, b, v, m
        self.k = int(np.argmax(v))  # the coordinate integrated exactly
        self.rest = np.arange(d) != self.k
        self.Z, self.Z2 = draws.Z, draws.Z2
        self.offset = offset
        if offset is not None:
            # E ~ chi^2_2 for the size-biasing identity, from the column of Z that coordinate k leaves unused
            self.E = -2.0 * (math.log(2.0) + special.log_ndtr(-np.abs(self.Z[:, self.k])))
            self.nodes, basis = _variance_nodes(v[self.rest])
            W = offset[self.rest][:, None] * basis  # coordinate j of E D from the values at the nodes
            with np.errstate(over="ignore", invalid="ignore"):
                self.G = W.T @ W
            if not np.all(np.isfinite(self.G)):
                raise ValueError("the clipping moments overflow: offset out of the float range (||offset||^2 "
                                 "is not finite)")

    def _tilt(self, C2: float) -> float:
        """theta >= 0 with the tilted mean of ||u||^2 at C^2 (0 when the mean is already there)."""
        v, m = self.v, self.m
        if not self.tilt or float(np.sum(v + m * m)) >= C2:
            return 0.0

        def excess(t: float) -> float:
            a = 1.0 - 2.0 * t * v
            return float(np.sum(v / a + (m / a) ** 2)) - C2

        hi = 0.5 / float(v.max()) * (1.0 - 1e-12)
        return float(optimize.brentq(excess, 0.0, hi, xtol=1e-14 / float(v.max()), rtol=1e-12)) if excess(hi) > 0 \
            else hi

    def moments(self, C: float) -> RowClipMoments:
        """E||D||^2, ||E D||^2 and P(clip) of one row at radius C (in the transformed space for "alg3")."""
        C = _v.check_nonnegative_finite("C", C)
        if not math.isfinite(C * C):
            raise ValueError(f"C must be at most 1e154 (C**2, the squared radius, overflows the float range), "
                             f"got C={C!r}")
        if C > 0.0 and C * C < sys.float_info.min:
            raise ValueError(f"C must be 0 or at least 1.5e-154 (C**2, the squared radius, underflows), got C={C!r}")
        N, b, v, m, k, rest = self.N, self.b, self.v, self.m, self.k, self.rest
        theta = self._tilt(C * C)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
            a = np.where(rest, 1.0 - 2.0 * theta * v, 1.0)
            scale = np.where(rest, np.sqrt(v / a), 0.0)  # the sampled coordinates: u_j = scale_j z_j + shift_j
            shift = np.where(rest, m / a, 0.0)
            const = float(np.sum(np.where(rest, -0.5 * np.log(a) + theta * m * m / a, 0.0)))
            quad = (self.Z2 @ (scale * scale), self.Z @ (2.0 * scale * shift), float(shift @ shift))
            quad_y = (self.Z2 @ (scale / b) ** 2, self.Z @ (2.0 * scale * shift / (b * b)),
                      float(np.sum((shift / b) ** 2)))
            signs = (1.0,) if self.offset is None or not _ANTITHETIC else (1.0, -1.0)
            draws = [(quad[0] + sgn * quad[1] + quad[2], quad_y[0] + sgn * quad_y[1] + quad_y[2]) for sgn in signs]
            s_max = 2.0 * max(float(q.max()) for q, _ in draws)
            if self.offset is not None:
                s_max += 2.0 * float(self.nodes.max(initial=0.0) * self.E.max())
            if not math.isfinite(s_max):
                raise ValueError("the clipping moments overflow: Z, sigma_data, sigma_mech or offset out of the "
                                 "float range (the squared norm of a row is not finite)")
            top = _TopCoordinate(mean=float(m[k]), var=float(v[k]), C=C, s_max=s_max)
            g_parts, h_parts, c_parts, a_parts = [], [], [], []
            for q, y2 in draws:
                q = np.maximum(q, 0.0)  # a squared norm: rounding must not make it negative
                w = np.exp(-theta * q + const)
                t_q = top(q)
                g_parts.append(w * (t_q.f2u2 / b[k] ** 2 + np.maximum(y2, 0.0) * t_q.f2))
                h_parts.append(w * t_q.p)
                if self.offset is not None:
                    c_parts.append(-w * t_q.fu / b[k])  # E D_k given the rest, exact
                    a_parts.append(w[:, None] * top.shrink(q[:, None] + self.nodes * self.E[:, None]))
            g = np.mean(g_parts, axis=0)  # pair averages (or the rows themselves)
            h = np.mean(h_parts, axis=0)
            m2 = m2_se = 0.0
            if self.offset is not None:
                c = np.mean(c_parts, axis=0)  # i.i.d. pair averages: coordinate k of E D ...
                A = np.mean(a_parts, axis=0)  # ... and the values at the nodes that give the others
                G = self.G
                Sc, SA = float(c.sum()), A.sum(axis=0)
                m2 = (Sc * Sc + float(SA @ G @ SA) - float(c @ c) - float(np.sum((A @ G) * A))) / (N * (N - 1.0))
                proj = c * (Sc / N) + A @ (G @ (SA / N))  # the delta method: projection of a row on the mean
                m2_se = float(2.0 * proj.std(ddof=1) / math.sqrt(N))
        out = RowClipMoments(
            e2=float(g.mean()), e2_se=float(g.std(ddof=1) / math.sqrt(N)), m2=m2, m2_se=m2_se,
            pclip=float(h.mean()), pclip_se=float(h.std(ddof=1) / math.sqrt(N)), theta=theta,
        )
        _v.check_finite_result([out.e2, out.e2_se, out.m2, out.m2_se], what="the clipping moments",
                               inputs="Z, C, sigma_data, sigma_mech or offset")
        return out


def row_clip_moments(
    Z: ArrayLike | RowDraws,
    *,
    method: str,
    C: float,
    sigma_data: ArrayLike,
    sigma_mech: ArrayLike | None = None,
    offset: ArrayLike | None = None,
    tilt: bool = True,
) -> RowClipMoments:
    """E||D||^2, ||E D||^2 and P(clip) of one row at radius C: ``RowClipModel(Z, ...).moments(C)``.

    The per-row terms of chapter 7's decomposition (:func:`expected_error`); see
    :class:`RowClipModel` for the model, the estimator and the arguments.  To evaluate many
    radii with the same draws, build the :class:`RowClipModel` once.
    """
    C = _v.check_nonnegative_finite("C", C)
    return RowClipModel(Z, method=method, sigma_data=sigma_data, sigma_mech=sigma_mech, offset=offset,
                        tilt=tilt).moments(C)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_VARIANCE_NODES = 13
_ANTITHETIC = True


@dataclass(frozen=True)
class _TopIntegrals:
    p: NDArray[np.float64]  #: P(u^2 + s > C^2)
    f: NDArray[np.float64]  #: E h(u^2 + s), h(q) = (1 - C / sqrt(q))_+ the shrink factor
    f2: NDArray[np.float64]  #: E h^2
    f2u2: NDArray[np.float64]  #: E h^2 u^2
    fu: NDArray[np.float64]  #: E h u


def _top_coordinate_integrals(s: NDArray[np.float64], *, mean: float, var: float, C: float,
                              shrink_only: bool = False) -> _TopIntegrals:
    """Expectations over one Gaussian coordinate u ~ N(mean, var) of functions of q = u^2 + s, per s.

    The conditional Monte Carlo step of :func:`row_clip_moments`: given the other coordinates
    (s = their squared norm), the coordinate of largest variance is integrated exactly, by
    Gauss-Legendre quadrature on each side of the clipping boundary |u| = sqrt((C^2 - s)_+)
    (where the shrink factor has its kink) over mean +- sqrt(80 var) (the Gaussian beyond is
    below e^-40 of its peak); 16 nodes a side reach the rounding level.  ``shrink_only``: only
    ``f`` is computed (the other fields are zeros).
    """
    r = np.sqrt(np.maximum(C * C - s, 0.0))
    sd = math.sqrt(var)
    half_width = math.sqrt(80.0) * sd
    acc = [np.zeros(s.shape) for _ in range(5)]
    for side in (1.0, -1.0):  # u = side * t, t >= r
        mt = side * mean
        lo = np.maximum(r, mt - half_width)
        half = 0.5 * (np.maximum(lo, mt + half_width) - lo)
        t = lo[:, None] + half[:, None] * (_GL_NODES + 1.0)
        wq = half[:, None] * _GL_WEIGHTS * np.exp(-0.5 * ((t - mt) / sd) ** 2) / (sd * math.sqrt(2.0 * math.pi))
        q = t * t + s[:, None]
        h = np.where(q > C * C, 1.0 - C / np.sqrt(np.maximum(q, 1e-300)), 0.0)
        wh = wq * h
        acc[1] += wh.sum(axis=1)
        if not shrink_only:
            acc[0] += np.sum(wq * (q > C * C), axis=1)
            acc[2] += np.sum(wh * h, axis=1)
            acc[3] += np.sum(wh * h * t * t, axis=1)
            acc[4] += side * np.sum(wh * t, axis=1)
    return _TopIntegrals(*acc)


class _TopCoordinate:
    """``_top_coordinate_integrals`` as cubic splines in s, for s in [0, s_max]: built once per
    call of :func:`row_clip_moments`, evaluated at every row (and every node of the centre term).

    Each integral is smooth in tau = sqrt(C^2 - s) for s < C^2 (the square root takes the clipping
    boundary's sqrt-behaviour) and in y = log(s - C^2 + var) for s >= C^2 (fine steps near C^2, where
    the integrals vary on the scale var, coarse far above); 32 steps per standard deviation of the
    coordinate in tau and steps of 0.02 in y keep the interpolation error below 1e-7 of the largest
    value.  For tau beyond |mean| + sqrt(80 var) no clipping is possible within e^-40: zeros.
    """

    def __init__(self, *, mean: float, var: float, C: float, s_max: float) -> None:
        self.C2, self.var = C * C, var
        sd = math.sqrt(var)
        self.tau_hi = min(C, abs(mean) + math.sqrt(80.0) * sd)
        self.left = self.right = None
        integrals = functools.partial(_top_coordinate_integrals, mean=mean, var=var, C=C)
        self.left_f = self.right_f = None
        if self.tau_hi > 0.0:
            tau = np.linspace(0.0, self.tau_hi, min(20001, max(9, math.ceil(32.0 * self.tau_hi / sd) + 1)))
            values = self._stack(integrals(self.C2 - tau * tau))
            self.left = interpolate.CubicSpline(tau, values, axis=0)
            self.left_f = interpolate.CubicSpline(tau, values[:, 1])
        if s_max > self.C2:
            y_hi = math.log(s_max - self.C2 + var)
            y = np.linspace(math.log(var), y_hi, max(9, math.ceil((y_hi - math.log(var)) / 0.02) + 1))
            s_grid = self.C2 + var * np.expm1(y - math.log(var))  # exactly C^2 at the first node
            values = self._stack(integrals(s_grid))
            self.right = interpolate.CubicSpline(y, values, axis=0)
            self.right_f = interpolate.CubicSpline(y, values[:, 1])

    @staticmethod
    def _stack(t: _TopIntegrals) -> NDArray[np.float64]:
        return np.stack([t.p, t.f, t.f2, t.f2u2, t.fu], axis=-1)

    @staticmethod
    def _on_grid(spline: Any, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """A cubic spline on a uniform grid evaluated at x within it: the interval by arithmetic, then
        Horner on its coefficients (scipy's evaluation searches the knots for every point)."""
        knots = spline.x
        h = (knots[-1] - knots[0]) / (knots.size - 1)
        i = np.clip(((x - knots[0]) / h).astype(np.intp), 0, knots.size - 2)
        t = x - knots[i]
        c = spline.c[:, i]  # (4, points, ...)
        if c.ndim == 3:
            t = t[:, None]
        return ((c[0] * t + c[1]) * t + c[2]) * t + c[3]

    def _evaluate(self, s: NDArray[np.float64], left: Any, right: Any, width: tuple[int, ...]) -> NDArray[np.float64]:
        out = np.zeros(s.shape + width)
        above = s >= self.C2
        if np.any(above):
            out[above] = self._on_grid(right, np.log(s[above] - self.C2 + self.var))
        tau = np.sqrt(np.maximum(self.C2 - s, 0.0))
        near = ~above & (tau <= self.tau_hi)
        if np.any(near):
            out[near] = self._on_grid(left, tau[near])
        return out

    def __call__(self, s: NDArray[np.float64]) -> _TopIntegrals:
        return _TopIntegrals(*np.moveaxis(self._evaluate(s, self.left, self.right, (5,)), -1, 0))

    def shrink(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        """The field ``f`` alone (E h(u^2 + s)), for the nodes of the centre term."""
        return self._evaluate(s, self.left_f, self.right_f, ())


def _variance_nodes(vR: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes t_l in [0, max vR] and the Lagrange basis L (len(vR) x nodes) with f(v_j) ~ sum_l L_jl f(t_l).

    The centre term of coordinate j is H(v_j) = E h(||u||^2 + v_j E) (:func:`row_clip_moments`), a smooth
    function of the variance v_j; it is computed at 13 Chebyshev-Lobatto nodes and interpolated (the
    variances themselves when there are at most 13).
    """
    if vR.size <= _VARIANCE_NODES:
        return vR.copy(), np.eye(vR.size)
    K = _VARIANCE_NODES
    t = 0.5 * float(vR.max()) * (1.0 - np.cos(np.pi * np.arange(K) / (K - 1)))
    L = np.ones((vR.size, K))
    for i in range(K):
        for j in range(K):
            if j != i:
                L[:, i] *= (vR - t[j]) / (t[i] - t[j])
    return t, L


def expected_error(
    noise: ArrayLike, *, e2: ArrayLike, m2: ArrayLike, n: int
) -> float | NDArray[np.float64]:
    """E||M(X) - f(X)||^2 = noise + n E||D||^2 + n (n - 1) ||E D||^2.

    The decomposition of chapter 7 (Proposition 7.A) for
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
    #: the Monte Carlo standard error of ``value`` when the error curve is a Monte Carlo estimate
    #: (filled in by the caller, e.g. from :class:`RowClipMoments`); None for an exact curve
    value_se: float | None = None


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
    an optimum (a grid of p_C that stops at 1e-8 would report its end as the optimum).
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
