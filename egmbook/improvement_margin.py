r"""How far the improvement of Section 5 stays above 1: margins and a sufficient certificate.

The report's Section 5 {cite}`poulsen2023` compares Algorithm 3 with the clipped Gaussian
mechanism through the improvement (with the factor :math:`d` of eq. (1), see the errata)

.. math::

    R(\sigma, n) = \frac{\mathcal E_n}{\mathcal E_t}
                 = \frac{d\,C_n^2}{C_t^2\,(\sum_i\sigma_i)^2},

:math:`C_n^2` and :math:`C_t^2` the upper :math:`1/n`-quantiles of :math:`\sum_j\sigma_j^2Z_j^2`
and :math:`\sum_j(\sigma_j/\sum_i\sigma_i)Z_j^2` (:func:`egmbook.experiments.figure2_improvement`).
The report observes :math:`R \in [1, d]`; the upper half is proved in the book, the lower
half, :math:`R \ge 1`, is open. Its expectation-based counterpart
:math:`\bar R = d\sum_j\sigma_j^2/(\sum_j\sigma_j)^2 \ge 1` (Cauchy-Schwarz;
:func:`egmlib.scaling.egm_improvement`) equals 1 exactly when all :math:`\sigma_j` are
equal, and so does :math:`R`. This module measures :math:`R \ge 1` on the scale of
:math:`\bar R`:

- :func:`normalized_margin`: :math:`\rho = (R - 1)/(\bar R - 1)`, so :math:`R \ge 1` iff
  :math:`\rho \ge 0`;
- :func:`equal_weights_margin`: the limit of :math:`\rho` as :math:`\sigma` tends to equal
  weights, in closed form (second-order expansion of the quantiles);
- :func:`tangent_certificate`: a sufficient condition for :math:`R \ge 1` at a given
  :math:`\sigma` that follows from the concavity of
  :math:`u \mapsto \log P(\sum_j e^{u_j}Z_j^2 \le x)` (Prékopa's theorem): if the
  certificate is :math:`\ge 0` then :math:`R \ge 1` (the proof is in the book's findings);
- the Schur route (chapter 5b, the reduction theorem): :func:`majorizes`,
  :func:`schur_ostrowski_gap` (the sign condition for :math:`w \mapsto F(x; w)` to be
  Schur-concave at a point), :func:`schur_threshold_p0` (the clipping probability below
  which the reduction applies to every :math:`\sigma`) and :func:`transformed_radius_squared`;
- Proposition 5.H (Schur-concavity from three times the mean, every :math:`d`):
  :func:`transfer_slope` (the derivative of :math:`F` along a transfer of weight, eq. (5.K)),
  :func:`augmented_mode` (the mode that decides its sign) and :func:`schur_concavity_level`
  (the level above which the sign is right at every point majorized by :math:`w`).

Notation: :math:`F(x; w) = P(\sum_j w_jZ_j^2 \le x)`; :math:`q_p(w)` its upper
:math:`p`-quantile; :math:`\chi^2_k` a chi-square with :math:`k` degrees of freedom.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, optimize, stats

from egmbook.experiments import figure2_improvement
from egmlib import gchisq
from egmlib.scaling import egm_improvement
from egmlib.validation import (
    check_closed_interval,
    check_count,
    check_finite_result,
    check_nonnegative_finite,
    check_nonnegative_vector,
    check_positive_finite,
    check_positive_vector,
)

__all__ = [
    "normalized_margin",
    "equal_weights_margin",
    "TangentCertificate",
    "tangent_certificate",
    "majorizes",
    "schur_ostrowski_gap",
    "schur_threshold_p0",
    "transformed_radius_squared",
    "schur_concavity_level",
    "transfer_slope",
    "augmented_mode",
    "two_weight_cdf",
    "two_weight_cdf_slope",
]

#: Largest dimension of :func:`equal_weights_margin`: beyond it the closed form, a
#: difference of two numbers within about 1/sqrt(d) of each other, loses its digits.
_D_MAX = 10**7


def normalized_margin(sigma: ArrayLike, *, n: int) -> float:
    r""":math:`\rho = (R - 1)/(\bar R - 1)`: the improvement's margin above 1 relative to Theorem 3's factor.

    :math:`R` is Figure 2's improvement (:func:`egmbook.experiments.figure2_improvement`, exact
    quantiles) and :math:`\bar R = d\sum_j\sigma_j^2/(\sum_j\sigma_j)^2` its
    expectation-based counterpart (:func:`egmlib.scaling.egm_improvement`). :math:`R \ge 1`
    exactly when :math:`\rho \ge 0`; :math:`\rho = 1` would mean :math:`R = \bar R`.

    The quantiles carry a relative error of about :math:`10^{-10}`, so :math:`\rho` is
    meaningful when :math:`\bar R - 1 \gg 10^{-9}`.

    Parameters
    ----------
    sigma : array_like
        Positive standard deviations, not all equal.
    n : int >= 2
        Number of points (clipping probability :math:`1/n`).

    Raises
    ------
    ValueError
        If all entries of ``sigma`` are equal (then :math:`R = \bar R = 1` and the ratio is
        undefined).

    Examples
    --------
    >>> round(normalized_margin([0.51, 0.49], n=2), 3)     # near equal weights: limit 0.0199
    0.02
    """
    s = check_positive_vector("sigma", sigma)
    n = check_count("n", n, minimum=2)
    rbar = egm_improvement(s)
    if not rbar > 1.0:
        raise ValueError(
            "sigma must not have all entries equal (then R = Rbar = 1 and the margin "
            f"(R - 1)/(Rbar - 1) is undefined), got sigma with {s.size} equal entries")
    return (figure2_improvement(s, n=n) - 1.0) / (rbar - 1.0)


def equal_weights_margin(d: int, *, n: int) -> float:
    r"""Limit of :func:`normalized_margin` (Figure 2's improvement against Theorem 3's) at equal weights.

    Write :math:`\sigma_j = (1 + e_j)/d` with :math:`\sum_je_j = 0`. At equal weights the
    gradient of :math:`F(x; w)` is orthogonal to :math:`\sum_j\delta w_j = 0` and its Hessian
    is :math:`g'(x)(2I + J)` with :math:`g` the density of :math:`\chi^2_{d+4}/d`
    (:math:`\partial_{w_j}F = -f_{Q + w_j\chi^2_2}`, hence
    :math:`\partial^2_{w_jw_j}F = 3f'_{Q + w_j\chi^2_4}`,
    :math:`\partial^2_{w_jw_k}F = f'_{Q + w_j\chi^2_2 + w_k\chi^2_2}`). So
    :math:`q_p(w) = q_0 - g'(q_0)\|\delta w\|^2/f_0(q_0) + \dots` with :math:`q_0` the upper
    :math:`p`-quantile and :math:`f_0` the density of :math:`\chi^2_d/d`. The transformed
    weights deviate by :math:`e_j/d`, the squared weights :math:`\sigma_j^2/\sum\sigma^2` by
    :math:`2e_j/d`, and :math:`\bar R = 1 + \sum_je_j^2/d`, whence

    .. math::

        \lim \rho = 1 - \frac{3\,g'(q_0)}{d\,f_0(q_0)\,q_0} .

    At :math:`d = 2`, :math:`n = 2` this is :math:`(3\ln 2 - 2)/4 = 0.01986`, the smallest
    value over :math:`d \ge 2`, :math:`n \ge 2` found (it grows with :math:`n` and with
    :math:`d`).

    Parameters
    ----------
    d : int, 2 <= d <= 10**7
        Dimension (beyond :math:`10^7` the difference above loses its digits).
    n : int >= 2
        Number of points (clipping probability :math:`1/n`).

    Examples
    --------
    >>> round(equal_weights_margin(2, n=2), 12) == round((3 * math.log(2) - 2) / 4, 12)
    True
    """
    d = check_count("d", d, minimum=2, maximum=_D_MAX)
    n = check_count("n", n, minimum=2)
    p = 1.0 / n
    y = float(stats.chi2.isf(p, d))        # d q0
    q0 = y / d
    f0 = d * float(stats.chi2.pdf(y, d))   # density of chi2_d / d at q0
    k = d + 4                              # g(x) = d pdf_k(d x), g'(x) = d^2 pdf_k'(d x)
    dpdf = float(stats.chi2.pdf(y, k)) * ((k / 2.0 - 1.0) / y - 0.5)
    g_prime = d * d * dpdf
    out = 1.0 - 3.0 * g_prime / (d * f0 * q0)
    check_finite_result(out, what="the equal-weights margin", inputs="n")
    return out


@dataclass(frozen=True)
class TangentCertificate:
    r"""Outcome of :func:`tangent_certificate`.

    Attributes
    ----------
    value : float
        :math:`D = \sum_j \log(d\,\sigma_j/S)\,\Delta_j` (:math:`S = \sum_i\sigma_i`).
    increments : numpy.ndarray
        :math:`\Delta_j = P(Q_t + (\sigma_j/S)\chi^2_2 > C_t^2) - 1/n \ge 0`, with
        :math:`Q_t = \sum_i(\sigma_i/S)Z_i^2`.
    tolerance : float
        The size of :math:`D` below which its sign is not trusted (from the
        :math:`10^{-10}` relative accuracy of the tails).
    proves : bool
        ``value > tolerance``: then :math:`R(\sigma, n) \ge 1` (indeed :math:`> 1`).
    """

    value: float
    increments: NDArray[np.float64]
    tolerance: float
    proves: bool


def tangent_certificate(sigma: ArrayLike, *, n: int) -> TangentCertificate:
    r"""A sufficient condition for Figure 2's improvement :math:`R(\sigma, n) \ge 1` (tangent-plane certificate).

    Normalise :math:`\sum_j\sigma_j = 1` (:math:`R` is scale invariant) and let
    :math:`x = C_t^2 = q_{1/n}(\sigma)`. :math:`R \ge 1` is equivalent to
    :math:`F(x; d\sigma^2) \le F(x; \sigma) = 1 - 1/n`. The function
    :math:`\varphi(u) = \log F(x; e^u)` is concave (Prékopa: the indicator of the convex set
    :math:`\{(u, y): \log\sum_je^{u_j + y_j} \le \log x\}` times the log-concave density of
    :math:`y_j = \log Z_j^2` is log-concave, and marginals of log-concave functions are
    log-concave), and :math:`\partial\varphi/\partial u_j = -\Delta_j/(2F)` with
    :math:`\Delta_j` as in :class:`TangentCertificate` (from
    :math:`\partial_{w_j}F = -f_{Q + w_j\chi^2_2}(x)` and
    :math:`F_Q - F_{Q + c\chi^2_2} = 2c f_{Q + c\chi^2_2}`). The tangent plane at
    :math:`u = \log\sigma` in the direction :math:`\log(d\sigma^2) - \log\sigma = \log(d\sigma)`
    gives

    .. math::

        \log F(x; d\sigma^2) \le \log(1 - \tfrac1n) - \frac{D}{2(1 - 1/n)},\qquad
        D = \sum_j \log(d\sigma_j)\,\Delta_j ,

    so :math:`D \ge 0` implies :math:`R \ge 1`. :math:`D` is always :math:`\ge 0` far enough
    in the tail (large :math:`n` for fixed :math:`\sigma`), but not near equal weights at
    :math:`n = 2`, where :math:`R \ge 1` nevertheless holds (:func:`equal_weights_margin`).

    Parameters
    ----------
    sigma : array_like
        Positive standard deviations.
    n : int >= 2

    Returns
    -------
    TangentCertificate

    Examples
    --------
    >>> c = tangent_certificate([3.0, 1.0, 1.0], n=10)
    >>> c.proves, bool(np.all(c.increments > 0))
    (True, True)
    """
    s = check_positive_vector("sigma", sigma)
    n = check_count("n", n, minimum=2)
    p = 1.0 / n
    if not math.isfinite(float(s.max()) * s.size):  # the sum could overflow: R is scale-free
        s = s / s.max()
    w = s / math.fsum(s)
    d = w.size
    x = float(gchisq.isf(p, w=w))
    values, inverse = np.unique(w, return_inverse=True)
    inc_unique = np.array([float(gchisq.sf(x, w=np.r_[w, v, v])) - p for v in values])
    inc = inc_unique[inverse]
    logs = np.log(d * w)
    terms = logs * inc
    value = math.fsum(terms)
    tolerance = 1e-8 * (math.fsum(np.abs(terms)) + p * math.fsum(np.abs(logs)))
    return TangentCertificate(value, inc, tolerance, bool(value > tolerance))


def _normalised(name: str, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``v / sum(v)`` for positive finite ``v``, rescaled first by its largest entry so that
    the sum cannot overflow (entries near 1e308) and subnormal entries keep their ratios."""
    w = v / float(v.max())
    total = math.fsum(w)
    if not (math.isfinite(total) and total > 0):  # pragma: no cover - w has an entry 1
        raise ValueError(f"{name} must have a finite positive sum after rescaling, got {name} summing to {total!r}")
    return w / total


def majorizes(a: ArrayLike, b: ArrayLike, *, rtol: float = 1e-12) -> bool:
    r"""True when :math:`a/\sum a` majorizes :math:`b/\sum b` (Marshall and Olkin's order).

    Both are normalised to sum 1, sorted in decreasing order, and compared by partial sums:
    :math:`\sum_{i\le k}a_{[i]} \ge \sum_{i\le k}b_{[i]}` for every :math:`k`, up to
    ``rtol``.

    Examples
    --------
    >>> majorizes([0.9, 0.1], [0.5, 0.5]), majorizes([0.5, 0.5], [0.9, 0.1])
    (True, False)
    """
    a = check_positive_vector("a", a)
    b = check_positive_vector("b", b, length=a.size, of="one entry per entry of a")
    rtol = check_nonnegative_finite("rtol", rtol)
    ca = np.cumsum(np.sort(_normalised("a", a))[::-1])
    cb = np.cumsum(np.sort(_normalised("b", b))[::-1])
    return bool(np.all(ca >= cb - rtol))


def schur_ostrowski_gap(x: float, w: ArrayLike) -> float:
    r"""The Schur-Ostrowski condition for :math:`w \mapsto F(x; w)` to be Schur-concave at :math:`w`.

    :math:`F(x; w) = P(\sum_j w_jZ_j^2 \le x)` is Schur-concave on a symmetric convex set
    exactly when :math:`(w_i - w_j)(\partial_iF - \partial_jF) \le 0` everywhere in it
    (Schur-Ostrowski, Marshall and Olkin 3.A.4). With
    :math:`\partial_jF = -f_{Q + w_j\chi^2_2}(x) = -\Delta_j/(2w_j)`, where
    :math:`\Delta_j = P(Q + w_j\chi^2_2 > x) - P(Q > x)` (the identities of
    :func:`tangent_certificate`), the condition reads: :math:`\Delta_j/w_j` is non-decreasing
    in :math:`w_j`. This returns the smallest increment of :math:`\Delta_j/w_j` between
    consecutive distinct weights (sorted increasingly); the condition holds at :math:`w` when it is
    :math:`\ge 0`. Weights are normalised to sum 1 (x is in units of the mean).

    Examples
    --------
    >>> schur_ostrowski_gap(3.0, [0.7, 0.3]) > 0, schur_ostrowski_gap(1.5, [0.7, 0.3]) > 0
    (True, False)
    """
    x = check_positive_finite("x", x)
    w = _normalised("w", check_positive_vector("w", w))
    values = np.unique(w)
    if values.size < 2:
        raise ValueError("w must have at least two distinct entries (at equal weights the "
                         f"condition holds trivially), got w with {w.size} equal entries")
    base = float(gchisq.sf(x, w=w))
    ratio = np.array([(float(gchisq.sf(x, w=np.r_[w, v, v])) - base) / v for v in values])
    return float(np.min(np.diff(ratio)))


def schur_threshold_p0(d: int, *, x0: float = 2.0) -> float:
    r""":math:`p_0(d) = P(\chi^2_d > d\,x_0)`: below this clipping probability every :math:`C_t^2 \ge x_0`.

    If :math:`F(x_0; \cdot)` is Schur-concave on the simplex, equal weights (majorized by every
    :math:`w`) maximise it, so :math:`P(\sum_jw_jZ_j^2 > x_0) \ge P(\chi^2_d/d > x_0) = p_0`
    for every :math:`w` with :math:`\sum_j w_j = 1`, and the upper :math:`p`-quantile is
    :math:`\ge x_0` whenever :math:`p \le p_0` (the first step of the book's reduction
    theorem in chapter 5b).

    Examples
    --------
    >>> round(schur_threshold_p0(2), 6) == round(math.exp(-2.0), 6)
    True
    """
    d = check_count("d", d, minimum=2, maximum=_D_MAX)
    x0 = check_positive_finite("x0", x0)
    return float(stats.chi2.sf(d * x0, d))


def transformed_radius_squared(sigma: ArrayLike, *, n: int) -> float:
    r""":math:`C_t^2`, the upper :math:`1/n`-quantile of :math:`\sum_j(\sigma_j/\sum_i\sigma_i)Z_j^2`.

    The point at which the reduction theorem of chapter 5b needs :math:`F(\cdot\,; w)` to be
    Schur-concave; :math:`R(\sigma, n) \ge 1` follows when it is at least the threshold
    :math:`x_0` of the hypothesis.
    """
    s = check_positive_vector("sigma", sigma)
    n = check_count("n", n, minimum=2)
    if not math.isfinite(float(s.max()) * s.size):
        s = s / s.max()
    return float(gchisq.isf(1.0 / n, w=s / math.fsum(s)))


def schur_concavity_level(w: ArrayLike) -> float:
    r""":math:`1 + 2(w_{(1)} + w_{(2)})` for :math:`w` normalised to sum 1 (Proposition 5.H's level).

    :math:`w_{(1)} \ge w_{(2)}` are the two largest weights. Moving weight between entries
    :math:`i` and :math:`j` of a point :math:`u` changes :math:`F(x; u)` with the slope of a density
    at :math:`x` (:func:`transfer_slope`), of a variable whose mean is :math:`1 + 2(u_i + u_j)`; the
    slope is :math:`\le 0` beyond the mode, which lies below that mean. Every :math:`u` majorized
    by :math:`w` has :math:`u_i + u_j \le w_{(1)} + w_{(2)}`, so :math:`F(x; \cdot)` is Schur-concave
    on :math:`\{u: u \prec w\}` for every :math:`x` at least this level, which never exceeds 3.
    With :math:`w = \sigma^2/\sum_j\sigma_j^2` and :math:`x = C_t^2(\sigma, n)` this is the pointwise
    certificate of chapter 5c: :math:`R(\sigma, n) \ge \bar R(\sigma)` whenever :math:`C_t^2` is at
    least the level.

    Examples
    --------
    >>> schur_concavity_level([0.5, 0.3, 0.2])   # 1 + 2 (0.5 + 0.3)
    2.6
    """
    w = check_nonnegative_vector("w", w)  # zero weights (underflowed squares) drop out
    v = np.sort(w / float(w.max()))[::-1]
    v = v / math.fsum(v)
    if v.size < 2:
        raise ValueError(f"w must have at least two entries, got w of length {v.size}")
    return float(round(1.0 + 2.0 * (float(v[0]) + float(v[1])), 15))


def _extreme_pair(name: str, w: ArrayLike) -> tuple[NDArray[np.float64], int, int]:
    """Normalised ``w`` and the indices of its largest and (another) smallest entry."""
    v = _normalised(name, check_positive_vector(name, w))
    if v.size < 2:
        raise ValueError(f"{name} must have at least two entries, got {name} of length {v.size}")
    i = int(np.argmax(v))
    rest = np.delete(np.arange(v.size), i)
    return v, i, int(rest[np.argmin(v[rest])])


def _augmented_density(x: ArrayLike, v: NDArray[np.float64], i: int, j: int) -> NDArray[np.float64]:
    """Density at x (vectorised) of Y = sum_k v_k Z_k^2 + v_i chi^2_2 + v_j chi^2_2, from
    F_Q - F_{Q + c chi^2_2} = 2c f_{Q + c chi^2_2} (upper tails: no cancellation near 1)."""
    part = np.r_[v, v[i], v[i]]
    full = np.r_[part, v[j], v[j]]
    x = np.asarray(x, dtype=float)
    return (np.asarray(gchisq.sf(x, w=full)) - np.asarray(gchisq.sf(x, w=part))) / (2.0 * float(v[j]))


def transfer_slope(x: float, w: ArrayLike) -> float:
    r"""The slope of :math:`F(x; w)` as weight moves from the smallest entry to the largest, eq. (5.K).

    With :math:`w` normalised, :math:`i` its largest and :math:`j` its smallest entry and
    :math:`w(t) = w + t(e_i - e_j)`,

    .. math::

        \frac{\partial}{\partial t}F(x; w(t))\Big|_{t=0} = 2(w_i - w_j)\,g'(x),

    :math:`g` the density of :math:`Y = \sum_kw_kZ_k^2 + w_iE_1 + w_jE_2`,
    :math:`E_1, E_2 \sim \chi^2_2` (Proposition 5.H of chapter 5c: comparing Laplace
    transforms). :math:`g` comes from :func:`egmlib.gchisq.sf` through
    :math:`F_Q - F_{Q + c\chi^2_2} = 2c\,f_{Q + c\chi^2_2}`, and :math:`g'` by a central
    difference; :math:`\le 0` means that spreading the weights does not raise :math:`F`.

    Examples
    --------
    >>> transfer_slope(3.0, [0.6, 0.3, 0.1]) < 0 < transfer_slope(1.0, [0.6, 0.3, 0.1])
    True
    """
    x = check_positive_finite("x", x)
    v, i, j = _extreme_pair("w", w)
    h = 1e-4 * max(x, 1.0)
    lo = max(x - h, 0.0)
    g_hi, g_lo = _augmented_density(np.array([x + h, lo]), v, i, j)
    slope = float(g_hi - g_lo) / (x + h - lo)
    return 2.0 * float(v[i] - v[j]) * slope


def augmented_mode(w: ArrayLike) -> float:
    r"""The mode of :math:`Y = \sum_kw_kZ_k^2 + w_iE_1 + w_jE_2` (:func:`transfer_slope`'s :math:`g`).

    :math:`w` normalised, :math:`i` and :math:`j` its largest and smallest entries. Found by
    maximising the density on :math:`[0, 2\,\mathbb EY]` (a grid, then bounded Brent), so that
    the bound of Proposition 5.H, mode :math:`< \mathbb EY = 1 + 2(w_i + w_j)`, is checked rather
    than assumed.

    Examples
    --------
    >>> m = augmented_mode([0.5, 0.5])          # Y = chi^2_6 / 2: mode (6 - 2) / 2 = 2
    >>> round(m, 4)
    2.0
    """
    v, i, j = _extreme_pair("w", w)
    top = 2.0 * (1.0 + 2.0 * float(v[i] + v[j]))
    grid = np.linspace(top / 200, top, 200)
    k = int(np.argmax(_augmented_density(grid, v, i, j)))
    lo, hi = float(grid[max(k - 1, 0)]), float(grid[min(k + 1, grid.size - 1)])
    r = optimize.minimize_scalar(lambda x: -float(_augmented_density(x, v, i, j)), bounds=(lo, hi),
                                 method="bounded", options={"xatol": 1e-9 * top})
    return float(r.x)


def _two_weight_integrand(x: float, a: float, deriv: bool) -> tuple[float, float]:
    def g(phi: float) -> float:
        u = 1.0 + a * math.cos(phi)
        e = math.exp(-x / u)
        return x * math.cos(phi) * e / (u * u) if deriv else e
    val, err = integrate.quad(g, 0.0, math.pi, epsabs=1e-14, epsrel=1e-12, limit=200)
    return val / math.pi, err / math.pi


def two_weight_cdf(x: float, t: float) -> float:
    r"""Two-weight distribution function :math:`F(x; (1 - t, t))` in polar form (Proposition 5.F).

    :math:`F(x; (1 - t, t)) = 1 - \frac1\pi\int_0^\pi \exp\bigl(-x/(1 + a\cos\varphi)\bigr)\,d\varphi`
    with :math:`a = 1 - 2t`.

    The polar form behind Proposition 5.F of chapter 5b: with :math:`Z_1 = \rho\cos\theta`,
    :math:`Z_2 = \rho\sin\theta`, :math:`\rho^2 \sim \chi^2_2` (exponential with mean 2) independent of
    the uniform angle, :math:`(1 - t)Z_1^2 + tZ_2^2 = \rho^2(1 + a\cos 2\theta)/2`. One quadrature,
    an independent route to :func:`egmlib.gchisq.cdf` for two weights.

    Examples
    --------
    >>> round(two_weight_cdf(2.0, 0.5), 12) == round(1 - math.exp(-2.0), 12)   # chi2_2 / 2
    True
    """
    x = check_positive_finite("x", x)
    t = check_closed_interval("t", t, low=0.0, high=0.5)
    return 1.0 - _two_weight_integrand(x, 1.0 - 2.0 * t, False)[0]


def two_weight_cdf_slope(x: float, t: float) -> float:
    r"""The slope :math:`\partial F(x; (1 - t, t))/\partial t = 2\,G'(a)` of Proposition 5.F (:math:`a = 1 - 2t`).

    Here :math:`G(a) = \frac1\pi\int_0^\pi e^{-x/(1 + a\cos\varphi)}d\varphi` and
    :math:`G'(a) = \frac1\pi\int_0^\pi \frac{x\cos\varphi}{(1 + a\cos\varphi)^2}e^{-x/(1 + a\cos\varphi)}\,d\varphi`
    (Proposition 5.F: :math:`\ge 0` for :math:`x \ge 2`, so :math:`F = 1 - G` is non-decreasing in
    :math:`t \in [0, 1/2]`).

    Examples
    --------
    >>> two_weight_cdf_slope(2.5, 0.3) > 0 > two_weight_cdf_slope(1.5, 0.45)
    True
    """
    x = check_positive_finite("x", x)
    t = check_closed_interval("t", t, low=0.0, high=0.5)
    return 2.0 * _two_weight_integrand(x, 1.0 - 2.0 * t, True)[0]
