r"""Exact privacy profiles of composed mechanisms beyond the Gaussian (the report's Lemma 2.2).

Lemma 2.2 of the report {cite}`poulsen2023` (basic composition, {cite}`dwork2014`
Theorem 3.16): running independent :math:`(\varepsilon_i, \delta_i)`-DP mechanisms on the
same data is :math:`(\sum_i\varepsilon_i, \sum_i\delta_i)`-DP. The smallest :math:`\delta`
at a given :math:`\varepsilon` for one pair of neighbouring inputs is the hockey-stick
divergence :math:`\delta(\varepsilon) = \sup_S P(S) - e^\varepsilon Q(S)
= \mathbb E_P[(1 - e^{\varepsilon - L})_+]`, :math:`L` the privacy loss. This module
computes it exactly for two non-Gaussian compositions, so that the lemma can be checked
where the Gaussian closed form does not apply:

- :func:`randomized_response_composition`: :math:`k` independent randomized responses
  (pure :math:`\varepsilon_0`-DP each), from the binomial law of the privacy loss;
- :func:`laplace_gaussian_delta`: a Laplace mechanism (pure :math:`\varepsilon_L`-DP)
  composed with a Gaussian mechanism, by one-dimensional quadrature over the Laplace
  privacy loss (the Gaussian part in closed form, as in Balle and Wang's eq. (2)).

Both concern the pair of neighbouring inputs at which each component attains its
sensitivity (the worst case of each component).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, special

from egmlib._validation import (
    check_count,
    check_nonnegative_vector,
    check_positive_finite,
    check_real,
    check_same_shape,
)

__all__ = [
    "hockey_stick",
    "randomized_response",
    "randomized_response_composition",
    "gaussian_loss_profile",
    "laplace_gaussian_delta",
]


def hockey_stick(p, q, *, eps: float) -> float:
    r"""Hockey-stick divergence :math:`\sum_y \max(0, p_y - e^\varepsilon q_y)` of two discrete laws.

    The smallest :math:`\delta` for which the pair of output distributions ``p`` (on
    input :math:`X`) and ``q`` (on :math:`X'`) satisfies Definition 2.3 at this
    :math:`\varepsilon`; the supremum over events is attained at
    :math:`\{y: p_y > e^\varepsilon q_y\}`.

    Parameters
    ----------
    p, q : array_like
        Probability vectors of the same shape (entries :math:`\ge 0`; they are used as
        given, so pass normalised vectors).
    eps : float
        Any real :math:`\varepsilon`.

    Examples
    --------
    >>> hockey_stick([0.75, 0.25], [0.25, 0.75], eps=math.log(3))
    0.0
    """
    pv = check_nonnegative_vector("p", p, allow_all_zero=True)
    qv = check_nonnegative_vector("q", q, allow_all_zero=True)
    check_same_shape("p", pv, "q", qv)
    e = check_real("eps", eps)
    if not math.isfinite(e):
        raise ValueError(f"eps must be finite, got eps={e!r}")
    return float(math.fsum(np.maximum(0.0, pv - math.exp(e) * qv)))


def randomized_response(eps0: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Randomized response on one bit: output laws on the inputs 0 and 1.

    The true bit is reported with probability :math:`e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`
    and flipped otherwise; this is :math:`(\varepsilon_0, 0)`-DP and no better.
    Returns ``(p, q)`` over the outputs ``(0, 1)``.
    """
    e0 = check_positive_finite("eps0", eps0)
    keep = 1.0 / (1.0 + math.exp(-e0))
    return np.array([keep, 1.0 - keep]), np.array([1.0 - keep, keep])


def randomized_response_composition(eps0: float, *, k: int, eps: float) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of :math:`k` independent randomized responses.

    The joint output laws are the :math:`k`-fold products of :func:`randomized_response`
    (all :math:`k` bits of a record flip between the neighbours). The privacy loss of an
    output is :math:`(2j - k)\varepsilon_0`, :math:`j` the number of truthful reports, which
    is binomial :math:`(k, e^{\varepsilon_0}/(1 + e^{\varepsilon_0}))` under :math:`P`, so
    :math:`\delta(\varepsilon) = \sum_j \binom kj\,\pi^j(1-\pi)^{k-j}
    (1 - e^{\varepsilon - (2j - k)\varepsilon_0})_+` (the same value as
    :func:`hockey_stick` on the :math:`2^k` outputs, without enumerating them). Lemma 2.2
    promises :math:`\delta(k\varepsilon_0) = 0`; the value is positive for every
    :math:`\varepsilon < k\varepsilon_0` (the output that reports all bits truthfully has
    loss exactly :math:`k\varepsilon_0`), so basic composition is tight here, unlike for
    Gaussian mechanisms.

    Parameters
    ----------
    eps0 : float > 0
        Privacy parameter of each randomized response.
    k : int >= 1
        Number of mechanisms.
    eps : float
        The :math:`\varepsilon` at which :math:`\delta` is evaluated.

    Examples
    --------
    >>> randomized_response_composition(0.5, k=4, eps=2.0)
    0.0
    >>> randomized_response_composition(0.5, k=4, eps=1.9) > 0
    True
    """
    e0 = check_positive_finite("eps0", eps0)
    k = check_count("k", k, minimum=1)
    e = check_real("eps", eps)
    if not math.isfinite(e):
        raise ValueError(f"eps must be finite, got eps={e!r}")
    log_keep = -math.log1p(math.exp(-e0))
    log_flip = -e0 + log_keep
    terms = []
    for j in range(k + 1):
        loss = (2 * j - k) * e0
        if loss > e:
            log_w = (math.lgamma(k + 1) - math.lgamma(j + 1) - math.lgamma(k - j + 1)
                     + j * log_keep + (k - j) * log_flip)
            terms.append(math.exp(log_w) * -math.expm1(e - loss))
    return float(math.fsum(terms))


def gaussian_loss_profile(t: float, *, m: float) -> float:
    r""":math:`\mathbb E[(1 - e^{t - L})_+]` for a Gaussian privacy loss :math:`L \sim \mathcal N(m^2/2, m^2)`.

    :math:`\Phi(m/2 - t/m) - e^{t}\Phi(-m/2 - t/m)`: for :math:`t = \varepsilon` this is the
    privacy profile of the Gaussian mechanism with :math:`m = \Delta/\sigma` (the report's
    eq. (2)); here :math:`t` may be any real number, as needed inside a composition.
    Evaluated with ``log_ndtr`` so that it keeps its relative accuracy in the tails.
    """
    t = check_real("t", t)
    m = check_positive_finite("m", m)
    a = special.log_ndtr(m / 2.0 - t / m)
    b = t + special.log_ndtr(-m / 2.0 - t / m)
    if b >= a:
        return 0.0
    return float(math.exp(a) * -math.expm1(b - a))


def laplace_gaussian_delta(eps: float, *, laplace_eps: float, sigma: float,
                           sensitivity: float = 1.0) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of a Laplace and a Gaussian mechanism run independently.

    The Laplace mechanism adds :math:`\mathrm{Lap}(\Delta/\varepsilon_L)` to a query of
    sensitivity :math:`\Delta` (pure :math:`\varepsilon_L`-DP), the Gaussian mechanism adds
    :math:`\mathcal N(0, \sigma^2)` to another query of sensitivity :math:`\Delta`
    (:math:`(\varepsilon_G, \delta_G)`-DP along its profile). On the neighbouring pair where
    both queries move by :math:`\Delta`, the joint privacy loss is
    :math:`L = L_{\mathrm{Lap}} + L_G`, independent, with :math:`L_G \sim \mathcal N(m^2/2, m^2)`,
    :math:`m = \Delta/\sigma`, and :math:`L_{\mathrm{Lap}}` equal to :math:`+\varepsilon_L` with
    probability :math:`1/2`, to :math:`-\varepsilon_L` with probability
    :math:`e^{-\varepsilon_L}/2`, and to :math:`(1 - 2u)\varepsilon_L` for :math:`u \in (0, 1)`
    with density :math:`\tfrac12\varepsilon_Le^{-u\varepsilon_L}` otherwise. Conditioning on
    :math:`L_{\mathrm{Lap}}` and using :func:`gaussian_loss_profile`,

    .. math::

        \delta(\varepsilon) = \tfrac12 g(\varepsilon - \varepsilon_L)
          + \tfrac12e^{-\varepsilon_L}g(\varepsilon + \varepsilon_L)
          + \int_0^1 g\bigl(\varepsilon - (1 - 2u)\varepsilon_L\bigr)\,
              \tfrac12\varepsilon_Le^{-u\varepsilon_L}\,du ,

    :math:`g(t) = \mathbb E[(1 - e^{t - L_G})_+]`, the integral by adaptive quadrature
    (relative tolerance :math:`10^{-12}`). Lemma 2.2 with :math:`\delta_{\mathrm{Lap}} = 0`
    promises :math:`\delta(\varepsilon_L + \varepsilon_G) \le \delta_G(\varepsilon_G)`.

    Examples
    --------
    >>> from egmlib.calibration import privacy_profile
    >>> joint = laplace_gaussian_delta(1.5, laplace_eps=0.5, sigma=4.0)
    >>> bool(joint <= privacy_profile(4.0, eps=1.0))
    True
    """
    e = check_real("eps", eps)
    if not math.isfinite(e):
        raise ValueError(f"eps must be finite, got eps={e!r}")
    eL = check_positive_finite("laplace_eps", laplace_eps)
    s = check_positive_finite("sigma", sigma)
    D = check_positive_finite("sensitivity", sensitivity)
    m = D / s

    def g(t):
        return gaussian_loss_profile(t, m=m)

    atoms = 0.5 * g(e - eL) + 0.5 * math.exp(-eL) * g(e + eL)
    cont, _ = integrate.quad(lambda u: g(e - (1.0 - 2.0 * u) * eL) * 0.5 * eL * math.exp(-u * eL),
                             0.0, 1.0, epsabs=0.0, epsrel=1e-12, limit=200)
    return float(atoms + cont)
