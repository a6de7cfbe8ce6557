r"""zCDP budget bookkeeping for Algorithm 3 and its peers.

Every private step of PLAN, IOME, CoinPress and the private pipelines around
Algorithm 3 is one of two mechanisms, each of which is :math:`\rho`-zCDP
(zero-concentrated differential privacy, Bun and Steinke 2016, Def. 1.1) for an
explicit :math:`\rho`:

* the Gaussian mechanism with :math:`\ell_2` sensitivity :math:`\Delta` and noise
  :math:`\mathcal N(0, \sigma^2 I)`, :math:`\sigma = \Delta/\sqrt{2\rho}`
  (Bun and Steinke 2016, Prop. 1.6): :func:`gaussian_noise_std`;
* the exponential mechanism with utility sensitivity 1 run at
  :math:`\varepsilon`-DP, which has :math:`\varepsilon`-bounded range and is therefore
  :math:`\varepsilon^2/8`-zCDP (Cesar and Rogers 2021, arXiv 2004.07223):
  :func:`exponential_mechanism_epsilon` returns :math:`\varepsilon = \sqrt{8\rho}`.

zCDP composes additively (Bun and Steinke 2016, Lemma 1.7), so a pipeline is
:math:`\rho`-zCDP when the budgets of its steps sum to :math:`\rho`.  Each estimator
states its split with :func:`split_budget` and returns the :class:`ZCDPBudget`, whose
parts sum to the total (tests check this for every estimator).

One meaning of rho
------------------
:math:`\rho` is Bun and Steinke's zCDP parameter here and in :mod:`egmlib.calibration`
(:func:`egmlib.calibration.sigma_from_rho`, :func:`egmlib.calibration.rho_to_eps`); the
lecture notes supplied with the report use :math:`\rho_{\rm notes} = 2\rho`, converted by
:func:`egmlib.calibration.rho_from_lecture_notes`.

(epsilon, delta) for a given rho
--------------------------------
:func:`approx_dp_epsilon` is that conversion, valid for any :math:`\rho`-zCDP pipeline
(a sufficient condition, not the tightest one).  A pipeline whose only private step is
one Gaussian mechanism -- Algorithm 3 with :math:`\sigma` and :math:`\hat\mu` public --
has the exact privacy profile of Balle and Wang (2018, Thm. 8; the report's eq. (2)),
and :func:`gaussian_epsilon_exact` inverts it with
:func:`egmlib.calibration.eps_from_sigma`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from egmlib import calibration
from egmlib.validation import check_finite_result, check_positive_finite, check_probability

__all__ = [
    "SHARE_SUM_TOL",
    "ZCDPBudget",
    "approx_dp_epsilon",
    "exponential_mechanism_epsilon",
    "gaussian_epsilon_exact",
    "gaussian_noise_std",
    "split_budget",
]

#: How far the shares given to :func:`split_budget` may sum from 1.
SHARE_SUM_TOL = 1e-12


@dataclass(frozen=True)
class ZCDPBudget:
    """A total zCDP budget and its split over the steps of one release.

    ``parts`` maps a step's name to its :math:`\\rho`; the values sum to ``total`` (to
    rounding).  The mapping is read-only.
    """

    total: float
    parts: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))

    def __getitem__(self, step: str) -> float:
        return self.parts[step]


def split_budget(rho: float, *, shares: Mapping[str, float]) -> ZCDPBudget:
    r"""Split a :math:`\rho`-zCDP budget over the steps of a release.

    Part ``name`` gets :math:`\rho \cdot` ``shares[name]``; by additive composition
    (Bun and Steinke 2016, Lemma 1.7) the release is :math:`\rho`-zCDP when every step
    ``name`` is :math:`\rho\,s_{\rm name}`-zCDP and the shares sum to 1.

    Parameters
    ----------
    rho : float, finite and > 0
        Total budget.
    shares : mapping of str to float
        At least one step; every share finite and > 0; the shares sum to 1 within
        ``SHARE_SUM_TOL``.

    Returns
    -------
    ZCDPBudget

    Examples
    --------
    >>> b = split_budget(0.5, shares={"centre": 0.25, "noise": 0.75})
    >>> b["centre"], b["noise"], b.total
    (0.125, 0.375, 0.5)
    """
    rho = check_positive_finite("rho", rho)
    if not isinstance(shares, Mapping):
        raise TypeError(
            f"shares must be a mapping from step names to shares, got shares of type "
            f"{type(shares).__name__}"
        )
    if len(shares) == 0:
        raise ValueError("shares must name at least one step, got an empty mapping")
    parts = {}
    for name, share in shares.items():
        if not isinstance(name, str):
            raise TypeError(f"shares must be keyed by step names (str), got key {name!r}")
        s = check_positive_finite(f"shares[{name!r}]", share)
        parts[name] = rho * s
    total_share = math.fsum(float(s) for s in shares.values())
    if not abs(total_share - 1.0) <= SHARE_SUM_TOL:
        raise ValueError(
            f"shares must sum to 1 (within {SHARE_SUM_TOL}), got shares summing to "
            f"{total_share!r}"
        )
    return ZCDPBudget(total=rho, parts=parts)


def gaussian_noise_std(rho: float, *, sensitivity: float) -> float:
    r"""Noise standard deviation Delta/sqrt(2 rho) of a rho-zCDP Gaussian mechanism.

    Bun and Steinke (2016, Prop. 1.6): adding :math:`\mathcal N(0,\sigma^2 I)` to a query
    of :math:`\ell_2` sensitivity :math:`\Delta` is :math:`\Delta^2/(2\sigma^2)`-zCDP.
    Computed by :func:`egmlib.calibration.sigma_from_rho`.  For Algorithm 3, :math:`\Delta = 2C`:
    :math:`\sigma = 2C/\sqrt{2\rho}`.

    Examples
    --------
    >>> gaussian_noise_std(0.5, sensitivity=2.0)
    2.0
    """
    rho = check_positive_finite("rho", rho)
    sensitivity = check_positive_finite("sensitivity", sensitivity)
    return calibration.sigma_from_rho(rho, sensitivity=sensitivity)


def exponential_mechanism_epsilon(rho: float) -> float:
    r"""eps = sqrt(8 rho): the exponential mechanism run at this eps is rho-zCDP.

    An :math:`\varepsilon`-DP exponential mechanism is :math:`\varepsilon`-bounded range
    and hence :math:`\varepsilon^2/8`-zCDP (Cesar and Rogers 2021, arXiv 2004.07223).
    PLAN's experiments use the same conversion.

    Examples
    --------
    >>> exponential_mechanism_epsilon(0.125)
    1.0
    """
    rho = check_positive_finite("rho", rho)
    eps = math.sqrt(8.0 * rho)
    check_finite_result(eps, what="eps", inputs="rho")
    return eps


def approx_dp_epsilon(rho: float, *, delta: float) -> float:
    r"""eps = rho + 2 sqrt(rho ln(1/delta)): a rho-zCDP release is (eps, delta)-DP.

    Bun and Steinke (2016, Prop. 1.3), computed by
    :func:`egmlib.calibration.rho_to_eps`.  Holds
    for every :math:`\rho`-zCDP pipeline, not only Gaussian ones; it is not the tightest
    conversion (for a single Gaussian mechanism see :func:`gaussian_epsilon_exact`).

    Examples
    --------
    >>> round(approx_dp_epsilon(0.125, delta=1e-6), 4)
    2.7533
    """
    rho = check_positive_finite("rho", rho)
    delta = check_probability("delta", delta)
    return calibration.rho_to_eps(rho, delta=delta)


def gaussian_epsilon_exact(rho: float, *, delta: float) -> float:
    r"""Exact :math:`\varepsilon` at :math:`\delta` of one :math:`\rho`-zCDP Gaussian mechanism.

    A Gaussian mechanism with :math:`\sigma/\Delta = 1/\sqrt{2\rho}` is
    :math:`(\varepsilon,\delta)`-DP exactly when its privacy profile (Balle and Wang 2018,
    Thm. 8; the report's eq. (2)) is at most :math:`\delta`; this returns the smallest
    such :math:`\varepsilon` (:func:`egmlib.calibration.eps_from_sigma`).  It applies to
    Algorithm 3 with public :math:`\sigma` and :math:`\hat\mu`, whose only private step
    is one Gaussian mechanism of sensitivity :math:`2C`.

    Examples
    --------
    >>> e = gaussian_epsilon_exact(0.125, delta=1e-6)
    >>> bool(e < approx_dp_epsilon(0.125, delta=1e-6)), round(e, 4)
    (True, 2.2541)
    """
    rho = check_positive_finite("rho", rho)
    delta = check_probability("delta", delta)
    try:
        return calibration.eps_from_sigma(1.0 / math.sqrt(2.0 * rho), delta=delta)
    except ValueError as exc:
        raise ValueError(f"rho is too large for an exact epsilon, got rho={rho!r}: {exc}") from None
