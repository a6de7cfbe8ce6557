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

What the common call adds to every estimator:

* **one rule for** :math:`n`: every arm needs at least two rows (a ValueError naming ``X``
  otherwise).  The scale steps pair rows, so the nothing-known arms cannot run on one row;
  the arms given their inputs could, but one public rule for all keeps a sweep's table
  rectangular, and :math:`n` is public, so refusing one row leaks nothing;
* **public normalisation** (:mod:`egmlib.peers.normalise`): the arms whose estimator is
  equivariant under affine maps of the box (every constant relative to the box's width:
  ``Alg3``, ``Alg3-private``, ``Alg3-private-centre``, ``Alg3-oracle`` and both CoinPress
  arms; ``Arm.normalised``) run on the data mapped to the unit box, with their given
  :math:`\sigma` and :math:`\mu` mapped alike, and their result is mapped back.  In exact
  arithmetic this is the same release with the same random draws; in floating point no
  intermediate depends on the box's magnitude, so no box makes an intermediate overflow or
  underflow (the book's Proposition F.1).  PLAN's arms (whose :math:`T = \ln(u - \ell)`
  and norm universe :math:`\sqrt{\|\hat\sigma\|_1}` are not equivariant) and IOME (whose
  centre search is centred at 0, not at the box's centre) keep the caller's box, and boxes
  whose intermediates leave the float64 range are refused up front
  (:func:`egmlib.validation.check_unnormalised_box`);
* **the release in the box**: every private arm's estimate is projected onto the public box
  (post-processing: the mean of data in the box lies in it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmlib import clipping
from egmlib import validation as _v
from egmlib.peers import algorithm3, algorithm3_robust, coinpress, iome, normalise, plan
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
    ``accepts`` the optional keywords it passes on; ``normalised`` says that the estimator
    runs on the unit box (module docstring); ``self_normalised`` that the estimator maps the
    caller's box to the unit box itself (ESM), so the arm passes the caller's box on unchanged.
    """

    name: str
    estimator: Callable[..., Any]
    given: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()
    private: bool = True
    normalised: bool = False
    self_normalised: bool = False

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
        # every arm checks the common arguments, also those its estimator does not use (issue 25);
        # a self-normalised estimator checks X finite in its own first pass (the same message),
        # so its arm checks only the shape and type (one pass over X less)
        check = _v.check_data_matrix if self.self_normalised else _v.check_finite_data
        X = check("X", X, min_rows=2)
        rho = _v.check_arm_rho(rho)
        lower, upper = _v.check_bounds(lower, upper)
        _v.check_rng("rng", rng)
        d = X.shape[1]
        inputs = _v.check_arm_inputs(inputs, d=d, lower=lower, upper=upper)
        if not self.private:
            return self.estimator(X, rho=rho, lower=lower, upper=upper, rng=rng, **inputs)
        if self.self_normalised:
            return _in_box(self.estimator(X, rho=rho, lower=lower, upper=upper, rng=rng, **inputs), lower, upper)
        if not self.normalised:
            _v.check_unnormalised_box(lower, upper, d=d, arm=self.name)
            result = self.estimator(X, rho=rho, lower=lower, upper=upper, rng=rng, **inputs)
            return _in_box(result, lower, upper)
        box = normalise.unit_box(lower=lower, upper=upper)
        if "sigma" in inputs:
            inputs["sigma"] = box.length_to_unit(inputs["sigma"], name="sigma")
        if "mu" in inputs:
            inputs["mu"] = box.to_unit(inputs["mu"])
        try:
            result = self.estimator(box.to_unit(X), rho=rho, lower=0.0, upper=1.0, rng=rng, **inputs)
        except ValueError as exc:
            if "prior_radius" not in str(exc) or "sigma" not in inputs:
                raise
            # CoinPress's prior ball is the box whitened by the given sigma (public): name the caller's inputs
            raise ValueError(f"sigma is too small against upper - lower for rho={rho!r}: the noise of CoinPress's "
                             f"first step, whose prior ball is the box whitened by sigma, overflows the float64 "
                             f"range, got min(sigma)={float(np.min(inputs['sigma'])) * box.width!r}, "
                             f"lower={lower!r} and upper={upper!r}") from None
        return _from_unit(result, box)


#: Fields of the arms' results that are points of the data space, and lengths in its units
#: (the result types of :mod:`egmlib.peers`); every other field is free of the data's units
#: (radii in whitened or transformed coordinates, counts, budgets).
_POINTS = ("estimate", "centre")
_LENGTHS = ("sigma", "sigma_hat", "noise_std", "analytic_noise_std")


def _from_unit(result: Any, box: normalise.UnitBox) -> Any:
    """The result of an estimator run on the unit box, in the caller's units (post-processing).

    Points are mapped back by ``box.from_unit`` (which projects them on the box), lengths by
    ``box.length_from_unit``; the radius ``C`` is a length only on the few-rows path of
    ``Alg3`` (IOME's radius of the rotated rows), and in transformed units elsewhere.
    """
    if not dataclasses.is_dataclass(result):
        raise TypeError(f"the estimator must return a dataclass, got {type(result).__name__}")
    untyped: Any = result  # a dataclass instance of the estimator's own record type
    names = {f.name for f in dataclasses.fields(untyped)}
    changes: dict[str, Any] = {}
    for name in _POINTS:
        if name in names and getattr(result, name) is not None:
            changes[name] = box.from_unit(getattr(result, name))
    for name in _LENGTHS:
        if name in names and getattr(result, name) is not None:
            value = box.length_from_unit(getattr(result, name))
            changes[name] = float(value) if np.ndim(value) == 0 else value
    if "C" in names and getattr(result, "path", None) in ("iome", "centred-iome"):
        changes["C"] = float(box.length_from_unit(untyped.C))
    return dataclasses.replace(untyped, **changes)


def _in_box(result: Any, lower: float, upper: float) -> Any:
    """The result with its estimate projected on the public box (post-processing)."""
    estimate = np.clip(result.estimate, lower, upper)
    if np.array_equal(estimate, result.estimate):
        return result
    return dataclasses.replace(result, estimate=estimate)


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
    with np.errstate(over="ignore", invalid="ignore"):
        mean = X.mean(axis=0)
    if not np.all(np.isfinite(mean)):  # the sum overflows (rows near 1e308): sum each column scaled
        # by the exact power of two that brings its largest entry into [0.5, 1)
        exponent = np.frexp(np.max(np.abs(X), axis=0))[1]
        mean = np.ldexp(np.ldexp(X, -exponent).mean(axis=0), exponent)
    return EmpiricalMean(estimate=mean)


_ARMS = (
    Arm("Alg3", algorithm3_robust.algorithm3_robust, self_normalised=True),
    Arm("Alg3-private", algorithm3.algorithm3_private, normalised=True),
    Arm("PLAN-last-step", algorithm3_robust.plan_last_step_private_inputs, self_normalised=True),
    Arm("PLAN", plan.plan_mean, accepts=("presorted",)),
    Arm("PLAN-noscale", plan.plan_noscale_mean, accepts=("presorted",)),
    Arm("IOME", iome.iome_mean, accepts=("rotation", "rotated")),
    Arm("CoinPress", _coinpress("paper"), given=("sigma",), normalised=True),
    Arm("CoinPress-authors", _coinpress("authors"), given=("sigma",), normalised=True),
    Arm("Alg3-private-centre", _alg3_private_centre, given=("sigma",), normalised=True),
    Arm("Alg3-oracle", _alg3_oracle, given=("sigma", "mu"), normalised=True),
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
