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
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, special

from egmlib.validation import (
    check_count,
    check_finite_array,
    check_length,
    check_nonnegative_vector,
    check_positive_finite,
)

__all__ = [
    "OutputLaws",
    "hockey_stick",
    "randomized_response",
    "randomized_response_composition",
    "gaussian_loss_profile",
    "laplace_gaussian_delta",
]

#: Largest number of composed randomized responses (the sum has k + 1 terms).
_K_MAX = 10**6

#: Largest Laplace parameter: the quadrature in :func:`laplace_gaussian_delta` resolves the
#: Laplace loss density, whose mass lies within about 1/laplace_eps of one end of [0, 1],
#: up to here (it agrees with the substitution v = u laplace_eps to 1e-14 relative; from
#: about 5000 on it misses the mass).
_LAPLACE_EPS_MAX = 1000.0

#: How far the entries of a probability vector may sum from 1 (rounding of products).
_MASS_TOL = 1e-9

#: Largest eps with a finite e^eps.
_LOG_FLOAT_MAX = math.log(np.finfo(np.float64).max)


class OutputLaws(NamedTuple):
    """The output distributions of a mechanism on one pair of neighbouring inputs."""

    p: NDArray[np.float64]  #: the law of the output on the input X
    q: NDArray[np.float64]  #: the law of the output on the neighbouring input X'


def hockey_stick(p: ArrayLike, *, q: ArrayLike, eps: float) -> float:
    r"""Hockey-stick divergence :math:`\sum_y \max(0, p_y - e^\varepsilon q_y)` of two discrete laws.

    The smallest :math:`\delta` for which the pair of output distributions ``p`` (on
    input :math:`X`) and ``q`` (on :math:`X'`) satisfies the report's Definition 2.3 at this
    :math:`\varepsilon`; the supremum over events is attained at
    :math:`\{y: p_y > e^\varepsilon q_y\}`.

    Parameters
    ----------
    p, q : array_like
        Probability vectors of the same length (entries :math:`\ge 0` summing to 1 within
        :math:`10^{-9}`).
    eps : float
        Any finite real :math:`\varepsilon`.

    Examples
    --------
    >>> hockey_stick([0.75, 0.25], q=[0.25, 0.75], eps=math.log(3))
    0.0
    """
    laws = []
    for name, value in (("p", p), ("q", q)):
        v = check_nonnegative_vector(name, value, allow_all_zero=True)
        if np.any(v > 1.0) or abs(math.fsum(v) - 1.0) > _MASS_TOL:
            raise ValueError(f"{name} must be a probability vector (entries in [0, 1] summing to 1), "
                             f"got {name} with entries summing to {math.fsum(np.minimum(v, 1.0))!r}")
        laws.append(v)
    pv, qv = laws
    check_length("q", qv, length=pv.size, of="the length of p")
    e = float(check_finite_array("eps", eps, ndim=0))
    if e > _LOG_FLOAT_MAX:  # e^eps q_y is infinite wherever q_y > 0
        return float(math.fsum(pv[qv == 0.0]))
    return float(math.fsum(np.maximum(0.0, pv - math.exp(e) * qv)))


def randomized_response(eps0: float) -> OutputLaws:
    r"""Randomized response on one bit: output laws on the inputs 0 and 1.

    The true bit is reported with probability :math:`e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`
    and flipped otherwise; this is :math:`(\varepsilon_0, 0)`-DP and no better
    ({cite}`dwork2014`, Section 3.2). Returns the laws ``p`` (input 0) and ``q`` (input 1)
    over the outputs ``(0, 1)``.

    Examples
    --------
    >>> laws = randomized_response(math.log(3))
    >>> laws.p.round(12).tolist(), laws.q.round(12).tolist()
    ([0.75, 0.25], [0.25, 0.75])
    """
    e0 = check_positive_finite("eps0", eps0)
    keep = 1.0 / (1.0 + math.exp(-e0))
    return OutputLaws(p=np.array([keep, 1.0 - keep]), q=np.array([1.0 - keep, keep]))


def randomized_response_composition(eps0: float, *, k: int, eps: float) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of :math:`k` independent randomized responses (Lemma 2.2).

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
    k : int, 1 <= k <= 10**6
        Number of mechanisms.
    eps : float
        The finite :math:`\varepsilon` at which :math:`\delta` is evaluated.

    Examples
    --------
    >>> randomized_response_composition(0.5, k=4, eps=2.0)
    0.0
    >>> randomized_response_composition(0.5, k=4, eps=1.9) > 0
    True
    """
    e0 = check_positive_finite("eps0", eps0)
    k = check_count("k", k, minimum=1, maximum=_K_MAX)
    e = float(check_finite_array("eps", eps, ndim=0))
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
    eq. (2), {cite}`balle2018`); here :math:`t` may be any finite real number, as needed
    inside a composition. Evaluated with ``log_ndtr`` so that it keeps its relative
    accuracy in the tails.

    Examples
    --------
    >>> from egmlib.calibration import privacy_profile
    >>> bool(abs(gaussian_loss_profile(1.0, m=0.25) - privacy_profile(4.0, eps=1.0)) < 1e-15)
    True
    """
    t = float(check_finite_array("t", t, ndim=0))
    m = check_positive_finite("m", m)
    a = special.log_ndtr(m / 2.0 - t / m)
    b = t + special.log_ndtr(-m / 2.0 - t / m)
    if b >= a:
        return 0.0
    return float(math.exp(a) * -math.expm1(b - a))


def laplace_gaussian_delta(eps: float, *, laplace_eps: float, sigma: float,
                           sensitivity: float = 1.0) -> float:
    r"""Exact :math:`\delta(\varepsilon)` of a Laplace and a Gaussian mechanism run independently (Lemma 2.2).

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

    Parameters
    ----------
    eps : float
        The finite :math:`\varepsilon` at which :math:`\delta` is evaluated.
    laplace_eps : float, 0 < laplace_eps <= 1000
        :math:`\varepsilon_L` (beyond 1000 the quadrature would no longer resolve the
        Laplace loss density).
    sigma : float > 0
        Standard deviation of the Gaussian noise.
    sensitivity : float > 0, optional
        :math:`\Delta` of both queries.

    Examples
    --------
    >>> from egmlib.calibration import privacy_profile
    >>> joint = laplace_gaussian_delta(1.5, laplace_eps=0.5, sigma=4.0)
    >>> bool(joint <= privacy_profile(4.0, eps=1.0))
    True
    """
    e = float(check_finite_array("eps", eps, ndim=0))
    eL = check_positive_finite("laplace_eps", laplace_eps)
    if eL > _LAPLACE_EPS_MAX:
        raise ValueError(f"laplace_eps must be <= {_LAPLACE_EPS_MAX!r} (the quadrature resolves the "
                         f"Laplace loss density up to there), got laplace_eps={eL!r}")
    s = check_positive_finite("sigma", sigma)
    D = check_positive_finite("sensitivity", sensitivity)
    with np.errstate(over="ignore"):
        m = D / s
    if not math.isfinite(m):
        raise ValueError(f"sensitivity / sigma must be a finite float64, got sensitivity={D!r} and "
                         f"sigma={s!r}, whose ratio overflows; rescale sigma and sensitivity")
    if m == 0.0:
        raise ValueError(f"sensitivity / sigma must be representable (> 0), got sensitivity={D!r} and "
                         f"sigma={s!r}, whose ratio underflows to 0")

    def g(t: float) -> float:
        return gaussian_loss_profile(t, m=m)

    atoms = 0.5 * g(e - eL) + 0.5 * math.exp(-eL) * g(e + eL)
    cont, _ = integrate.quad(lambda u: g(e - (1.0 - 2.0 * u) * eL) * 0.5 * eL * math.exp(-u * eL),
                             0.0, 1.0, epsabs=0.0, epsrel=1e-12, limit=200)
    return float(atoms + cont)
