r"""PLAN's synthetic Gaussian benchmarks (Aumuller, Lebeda, Nelson and Pagh 2024, Figure 3).

Rows :math:`x_i \sim \mathcal N(\mu\mathbf 1, \mathrm{diag}(\lambda))` with
:math:`\lambda_j = (d/j)^\alpha` (their "Zipf" covariance; :math:`\alpha = 0` is the
identity), i.e. :math:`\sigma_j = (d/j)^{\alpha/2}`, and the public universe
:math:`[-u, u]` of every coordinate that their experiments use:

=========  =====  ================  ================  ==  ==============================
setting    n      d                 alpha             mu  u
=========  =====  ================  ================  ==  ==============================
GaussianA  4000   16, 32, .., 2048  0                 0   :math:`25\sqrt d`
GaussianB  10000  512               0, .5, 1, 1.5, 2  10  :math:`50\,d\,\lambda_1^{1/4}`
GaussianC  10000  16, 32, .., 2048  2                 10  :math:`50\,d\,\lambda_1^{1/4}`
=========  =====  ================  ================  ==  ==============================

(:math:`\lambda_1 = d^\alpha` is the largest variance.)  Every setting is run at
:math:`\rho\in\{1/16, 1/8, 1/4, 1/2, 1\}`, 50 fresh datasets each, and scored by
:math:`\|\tilde\mu - \mu\mathbf 1\|_2` against the population mean.  These values are
read off their public code (ChristianLebeda/PLAN-experiments,
``simulations/baseline_comparison.py``) and the universes in their published result
files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from egmlib import validation as _v
from egmlib.validation import FloatArray

__all__ = [
    "ALPHAS",
    "DIMENSIONS",
    "RHOS",
    "GaussianSetting",
    "plan_sigmas",
    "sample",
    "settings",
]

#: zCDP budgets of PLAN's Gaussian experiments.
RHOS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
#: Dimensions of GaussianA and GaussianC.
DIMENSIONS = (16, 32, 64, 128, 256, 512, 1024, 2048)
#: Skews of GaussianB.
ALPHAS = (0.0, 0.5, 1.0, 1.5, 2.0)
_NAMES = ("GaussianA", "GaussianB", "GaussianC")
#: Largest d of plan_sigmas (as egmbook.experiments.zipf_sigmas).
_D_MAX = 10**7


@dataclass(frozen=True)
class GaussianSetting:
    """One point of one of PLAN's Gaussian experiments."""

    dataset: str  #: "GaussianA", "GaussianB" or "GaussianC"
    n: int
    d: int
    alpha: float
    mu: float  #: every coordinate of the population mean

    @property
    def sigma(self) -> FloatArray:
        """The coordinate standard deviations (d/j)^(alpha/2)."""
        return plan_sigmas(self.d, alpha=self.alpha)

    @property
    def mean(self) -> FloatArray:
        """The population mean mu 1."""
        return np.full(self.d, float(self.mu))

    @property
    def universe(self) -> tuple[float, float]:
        """(lower, upper) of every coordinate, as in PLAN's experiments."""
        if self.dataset == "GaussianA":
            u = 25.0 * math.sqrt(self.d)
        else:
            u = 50.0 * self.d * float(self.d) ** (self.alpha / 4.0)
        return -u, u


def plan_sigmas(d: int, *, alpha: float) -> FloatArray:
    r"""sigma_j = (d/j)^(alpha/2), j = 1..d: the square roots of PLAN's Zipf variances.

    The covariance of PLAN's Gaussian benchmarks (Aumuller et al. 2024); with
    :math:`\alpha` = 2 the report's Zipf standard deviations (Section 5) up to a factor.

    Examples
    --------
    >>> plan_sigmas(4, alpha=2.0).tolist()
    [4.0, 2.0, 1.3333333333333333, 1.0]
    """
    d = _v.check_count("d", d, maximum=_D_MAX)
    alpha = _v.check_nonnegative_finite("alpha", alpha)
    with np.errstate(over="ignore"):
        out = (d / np.arange(1, d + 1, dtype=float)) ** (alpha / 2.0)
    _v.check_finite_result(out, what="a standard deviation (d/j)^(alpha/2)", inputs="d or alpha")
    return out


def settings(dataset: str) -> list[GaussianSetting]:
    """The points of one experiment, in PLAN's order (by d, or by alpha for GaussianB).

    Aumuller et al. (2024), Figure 3 and their experiments' code (module docstring).

    Examples
    --------
    >>> [s.d for s in settings("GaussianA")][:3], settings("GaussianB")[1].alpha
    ([16, 32, 64], 0.5)
    """
    dataset = _v.check_choice("dataset", dataset, _NAMES)
    if dataset == "GaussianA":
        return [GaussianSetting("GaussianA", 4000, d, 0.0, 0.0) for d in DIMENSIONS]
    if dataset == "GaussianB":
        return [GaussianSetting("GaussianB", 10000, 512, a, 10.0) for a in ALPHAS]
    return [GaussianSetting("GaussianC", 10000, d, 2.0, 10.0) for d in DIMENSIONS]


def sample(setting: GaussianSetting, *, rng: np.random.Generator) -> np.ndarray:
    """n rows of N(mu 1, diag(sigma^2)) for ``setting``, as a read-only float64 array.

    PLAN's Gaussian benchmark data (Aumuller et al. 2024, Figure 3).  Read-only: the
    sweeps release from it many times and must not change it.
    """
    if not isinstance(setting, GaussianSetting):
        raise TypeError(f"setting must be a GaussianSetting, got setting of type "
                        f"{type(setting).__name__}")
    rng = _v.check_rng("rng", rng)
    X = rng.standard_normal((setting.n, setting.d))
    X *= setting.sigma
    X += setting.mu
    X.setflags(write=False)
    return X
