"""The arms' common call (egmlib.peers.arms): one rule for n, releases in the box, the caller's names.

Issue 35's fuzz leftovers: n = 1 was refused by five arms and accepted by five (CoinPress then
released a point outside the box); errors named parameters the caller never passed
(``rho_threshold``, ``mu_hat`` for ``mu``, ``sigma=0.0`` for a huge ``rho``, "pass p_clip" to an
arm without one); the empirical arm returned inf for rows at 1e308 whose mean is finite.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from egmlib.peers.arms import ARMS
from egmlib.validation import ARM_RHO_RANGE

INPUTS = {"sigma": [0.5, 0.3, 0.2], "mu": [0.5, 0.6, 0.4]}


def _call(name, X, *, rho=0.5, lower=-10.0, upper=10.0, **given):
    arm = ARMS[name]
    kw = {g: given.get(g, INPUTS[g]) for g in arm.given}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return arm(X, rho=rho, lower=lower, upper=upper, rng=np.random.default_rng(1), **kw)


@pytest.mark.parametrize("name", list(ARMS))
def test_one_rule_for_one_row(name):
    with pytest.raises(ValueError, match=r"X must have at least 2 rows, got X with n=1"):
        _call(name, np.zeros((1, 3)))
    assert _call(name, np.zeros((2, 3))).estimate.shape == (3,)


@pytest.mark.parametrize("name", [a for a in ARMS if ARMS[a].private])
@pytest.mark.parametrize("rho", [ARM_RHO_RANGE[0], 1e-6, 1e3])
def test_every_private_release_lies_in_the_box(name, rho):
    """Post-processing: the noisiest budgets push the raw estimate far outside; the release is projected."""
    X = np.random.default_rng(2).uniform(0.0, 1.0, (4, 3))
    r = _call(name, X, rho=rho, lower=0.0, upper=1.0)
    assert np.all((r.estimate >= 0.0) & (r.estimate <= 1.0))


def test_empirical_mean_of_rows_near_the_largest_double():
    X = np.full((5, 2), 1e308)
    X[0, 1] = -1e308
    m = ARMS["empirical"](X, rho=1.0, lower=-1.0, upper=1.0, rng=np.random.default_rng(0)).estimate
    assert np.all(np.isfinite(m)) and m[0] == pytest.approx(1e308) and m[1] == pytest.approx(6e307)


#: Names that the common call's caller never passes.
INTERNAL = re.compile(r"rho_threshold|mu_hat|scale_share|centre_share|prior_radius|p_clip|sigma=0\.0|\beps\b")


@pytest.mark.parametrize("name", [a for a in ARMS if ARMS[a].private])
def test_errors_name_the_callers_parameters(name):
    """Budgets, boxes and given inputs at the edges of the double range: every error is a
    ValueError that names what the caller passed, never an internal quantity."""
    rng = np.random.default_rng(0)
    datasets = [rng.normal(size=(6, 3)), np.full((6, 3), 1e308), np.full((6, 3), 5e-324), rng.normal(size=(300, 3))]
    cases = [dict(rho=r) for r in (5e-324, 1e-301, 1e-300, 1e32, 1e300, 1e301, 1.7e308)]
    cases += [dict(lower=lo, upper=hi) for lo, hi in ((0.0, 5e-324), (-1e300, 1e300), (1e15, 1e15 + 1))]
    if "sigma" in ARMS[name].given:
        cases += [dict(sigma=s) for s in ([1e300] * 3, [5e-324] * 3, [0.0, 0.0, 1.0], [25.0, 1.0, 1.0])]
        cases += [dict(sigma=[5e-324] * 3, rho=1e-300)]
    if "mu" in ARMS[name].given:
        cases += [dict(mu=m) for m in ([1e308] * 3, [11.0, 0.0, 0.0])]
    seen = 0
    for X in datasets:
        for case in cases:
            try:
                _call(name, X, **case)
            except ValueError as exc:
                msg = str(exc)
                assert not INTERNAL.search(msg), f"{name}({case}): {msg}"
                assert any(k in msg for k in ("rho", "X", "sigma", "mu", "lower", "upper")), msg
                seen += 1
    assert seen > 0


@pytest.mark.parametrize("rho", [ARM_RHO_RANGE[0] / 2, ARM_RHO_RANGE[1] * 2])
def test_budgets_outside_the_arms_range_are_refused_up_front(rho):
    for name in ARMS:
        with pytest.raises(ValueError, match=r"rho must lie in \[1e-300, 1e\+300\]"):
            _call(name, np.zeros((4, 3)), rho=rho)


def test_oracle_inputs_are_checked_against_the_box():
    X = np.zeros((10, 3))
    with pytest.raises(ValueError, match=r"mu must lie in the box"):
        _call("PLAN-oracle", X, mu=[0.0, 0.0, 11.0])
    with pytest.raises(ValueError, match=r"sigma must be at most upper - lower"):
        _call("Alg3-oracle", X, sigma=[21.0, 1.0, 1.0])
