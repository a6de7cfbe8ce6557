r"""The arms of the book's comparisons: one registry, name -> estimator.

:data:`ARMS` maps an arm's name (the key in the sweeps' files) to an :class:`Arm`: the
estimator and the inputs it is given (how a book or a report shows the arms -- labels,
colours -- is the caller's business).  Every arm is called the same way,

.. code-block:: python

    ARMS[name](X, rho=rho, lower=lower, upper=upper, rng=rng, **given)

where ``given`` holds exactly the inputs named in ``ARMS[name].given`` (``"sigma"``: the
coordinate standard deviations, ``"mu"``: the mean; oracle arms only), plus optional
keywords listed in ``ARMS[name].accepts``: IOME's public ``rotation`` and the data rotated by
it once (``rotated``, :func:`egmlib.peers.iome.rotate_data`), PLAN's sorted columns
(``presorted``, :func:`egmlib.peers.quantiles.sorted_columns`), which a sweep computes once and
shares across the budgets of one dataset (the same releases, bit for bit, without redoing the
work five times).  The call returns an object whose ``estimate`` is the private
mean (the empirical mean for the non-private reference ``"empirical"``).

=============================  =========  ==========================================================
name                           given      estimator
=============================  =========  ==========================================================
``Alg3``                       --         the book's recommended nothing-known pipeline:
                                          :func:`egmlib.peers.algorithm3_robust.algorithm3_robust`
                                          (IOME's release when a public rule finds too few rows)
``Alg3-private``               --         the earlier nothing-known pipeline,
                                          :func:`egmlib.peers.algorithm3.algorithm3_private`
``PLAN-last-step``             --         PLAN's last step with the same private inputs as ``Alg3``
``PLAN``                       --         :func:`egmlib.peers.plan.plan_mean`
``PLAN-noscale``               --         :func:`egmlib.peers.plan.plan_noscale_mean`
``IOME``                       --         PLAN's adaptation of IOME, :func:`egmlib.peers.iome.iome_mean`
``CoinPress``                  sigma      :func:`egmlib.peers.coinpress.coinpress_known_scales`, the
                                          paper's clipping radius
``CoinPress-authors``          sigma      the same with the authors' code's radius
``Alg3-private-centre``        sigma      :func:`egmlib.peers.algorithm3.algorithm3_private_centre`
``Alg3-oracle``                sigma, mu  :func:`egmlib.peers.algorithm3.algorithm3_zcdp`
``PLAN-oracle``                sigma, mu  :func:`egmlib.peers.plan.plan_oracle_mean`
``empirical``                  --         the mean, not private (the sampling error's reference)
=============================  =========  ==========================================================

Every private arm is :math:`\rho`-zCDP (Bun and Steinke 2016) under substitution
neighbours for any data; the oracle arms treat their given inputs as public.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmlib import clipping
from egmlib import validation as _v
from egmlib.peers import algorithm3, algorithm3_robust, coinpress, iome, plan
from egmlib.validation import FloatArray

__all__ = ["ARMS", "GIVEN", "Arm", "EmpiricalMean", "nothing_known"]

#: The inputs an oracle arm may be given.
GIVEN = ("sigma", "mu")


@dataclass(frozen=True)
class EmpiricalMean:
    """Result of the non-private reference arm ``"empirical"``."""

    estimate: FloatArray  #: (d,) the empirical mean (not private)


@dataclass(frozen=True)
class Arm:
    """One arm: an estimator called as ``arm(X, rho=, lower=, upper=, rng=, **given)``.

    ``given`` names the inputs the arm must be given (a subset of :data:`GIVEN`);
    ``accepts`` the optional keywords it passes on.
    """

    name: str
    estimator: Callable[..., Any]
    given: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()
    private: bool = True

    def __call__(self, X: Any, *, rho: float, lower: float, upper: float,
                 rng: np.random.Generator, **inputs: Any) -> Any:
        """Run the arm; ``inputs`` must hold every name in ``given`` and nothing outside
        ``given`` and ``accepts``."""
        missing = [g for g in self.given if g not in inputs]
        if missing:
            raise TypeError(f"arm {self.name!r} must be given {list(self.given)}, got no {missing}")
        extra = [k for k in inputs if k not in self.given and k not in self.accepts]
        if extra:
            raise TypeError(f"arm {self.name!r} takes the inputs {list(self.given + self.accepts)}, "
                            f"got {extra}")
        # every arm checks the common arguments, also those its estimator does not use (issue 25)
        X = _v.check_finite_data("X", X)
        _v.check_positive_finite("rho", rho)
        lower, upper = _v.check_bounds(lower, upper)
        _v.check_rng("rng", rng)
        d = X.shape[1]
        for g in ("sigma", "mu"):
            if g in inputs:
                check = _v.check_nonnegative_vector if g == "sigma" else _v.check_finite_vector
                inputs[g] = check(g, inputs[g], length=d, of="one entry per column of X")
        return self.estimator(X, rho=rho, lower=lower, upper=upper, rng=rng, **inputs)


# ---------------------------------------------------------------------------------------
# adapters to the common call
# ---------------------------------------------------------------------------------------
def _alg3_oracle(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
                 sigma: Any, mu: Any) -> Any:
    # the box is the data's public domain here too (egmlib.clipping.clamp_to_box)
    return algorithm3.algorithm3_zcdp(clipping.clamp_to_box(X, lower=lower, upper=upper), sigma=sigma,
                                      mu_hat=mu, rho=rho, rng=rng)


def _plan_oracle(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
                 sigma: Any, mu: Any) -> Any:
    return plan.plan_oracle_mean(X, mu_hat=mu, sigma=sigma, rho=rho, lower=lower, upper=upper,
                                 rng=rng)


def _coinpress(rule: str) -> Callable[..., Any]:
    def run(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
            sigma: Any) -> Any:
        return coinpress.coinpress_known_scales(X, sigma=sigma, rho=rho, lower=lower, upper=upper,
                                                rng=rng, clip_rule=rule)
    run.__name__ = f"coinpress_{rule}"
    return run


def _alg3_private_centre(X: Any, *, rho: float, lower: float, upper: float,
                         rng: np.random.Generator, sigma: Any) -> Any:
    return algorithm3.algorithm3_private_centre(X, sigma=sigma, rho=rho, lower=lower,
                                                upper=upper, rng=rng)


def _empirical(X: Any, *, rho: float, lower: float, upper: float,
               rng: np.random.Generator) -> EmpiricalMean:
    X = _v.check_finite_data("X", X)
    return EmpiricalMean(estimate=X.mean(axis=0))


_ARMS = (
    Arm("Alg3", algorithm3_robust.algorithm3_robust),
    Arm("Alg3-private", algorithm3.algorithm3_private),
    Arm("PLAN-last-step", algorithm3_robust.plan_last_step_private_inputs),
    Arm("PLAN", plan.plan_mean, accepts=("presorted",)),
    Arm("PLAN-noscale", plan.plan_noscale_mean, accepts=("presorted",)),
    Arm("IOME", iome.iome_mean, accepts=("rotation", "rotated")),
    Arm("CoinPress", _coinpress("paper"), given=("sigma",)),
    Arm("CoinPress-authors", _coinpress("authors"), given=("sigma",)),
    Arm("Alg3-private-centre", _alg3_private_centre, given=("sigma",)),
    Arm("Alg3-oracle", _alg3_oracle, given=("sigma", "mu")),
    Arm("PLAN-oracle", _plan_oracle, given=("sigma", "mu")),
    Arm("empirical", _empirical, private=False),
)

#: Name -> arm, in the order of the tables.
ARMS: Mapping[str, Arm] = MappingProxyType({a.name: a for a in _ARMS})


def nothing_known() -> tuple[str, ...]:
    """Names of the private arms that are given no inputs (Algorithm 3 end to end, PLAN, IOME ...).

    The arms a sweep runs on data whose scales and mean it does not know (the peers of
    Aumuller et al. 2024 and Huang, Liang and Yi 2021 among them).

    Examples
    --------
    >>> nothing_known()[:3]
    ('Alg3', 'Alg3-private', 'PLAN-last-step')
    """
    return tuple(a.name for a in _ARMS if a.private and not a.given)
