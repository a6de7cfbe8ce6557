"""Precomputations never change a result, and nothing is cached behind the caller's back.

CoinPress steps that clip no row skip the data (the same value to rounding); sorted
columns and rotated data are explicit objects the caller builds and passes (the same
release bit for bit); and egmlib keys no cache on an array's identity, so a read-only
array changed through an earlier view, or made writable and changed, gives the new
release (issue 25 found stale results both ways).
"""

from __future__ import annotations

import numpy as np
import pytest

from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import coinpress, iome, plan, quantiles
from egmlib.peers.hadamard import random_hadamard


@pytest.mark.parametrize("spread", [1.0, 40.0])  # no step clips / the early steps clip rows
def test_coinpress_skipped_steps_change_nothing_but_rounding(monkeypatch, spread):
    rng = np.random.default_rng(1)
    X = 3.0 + spread * rng.standard_normal((3000, 16))
    X[:5] += 500.0  # far rows: the last steps clip them
    kw = dict(rho=0.5, prior_centre=np.zeros(16), prior_radius=1e4)
    fast = coinpress.coinpress_mean(X, rng=np.random.default_rng(7), **kw)
    monkeypatch.setattr(coinpress, "_SAFETY", 2.0)  # R (1 - 2) < 0: every step passes over the data
    full = coinpress.coinpress_mean(X, rng=np.random.default_rng(7), **kw)
    np.testing.assert_allclose(fast.estimate, full.estimate, rtol=0, atol=1e-12 * (3 + spread))
    assert fast.n_clipped == full.n_clipped
    assert max(full.n_clipped) > 0


def test_rotated_data_give_the_release_of_the_rotation():
    rng = np.random.default_rng(2)
    X = np.round(rng.standard_normal((2001, 12)), 1)  # ties
    R = random_hadamard(12, rng=rng)
    kw = dict(rho=0.5, lower=-10.0, upper=10.0)
    pre = iome.rotate_data(X, rotation=R, lower=-10.0, upper=10.0)
    a = iome.iome_mean(X, rng=np.random.default_rng(3), rotation=R, **kw)
    b = iome.iome_mean(X, rng=np.random.default_rng(3), rotated=pre, **kw)
    c = iome.iome_mean(X, rng=np.random.default_rng(3), rotation=R, rotated=pre, **kw)
    assert np.array_equal(a.estimate, b.estimate) and np.array_equal(a.estimate, c.estimate)
    with pytest.raises(ValueError, match="rotated must be clamped to the box"):
        iome.iome_mean(X, rng=rng, rotated=pre, rho=0.5, lower=-20.0, upper=10.0)
    with pytest.raises(ValueError, match="rotation must be rotated.rotation"):
        iome.iome_mean(X, rng=rng, rotated=pre, rotation=random_hadamard(12, rng=rng), **kw)
    with pytest.raises(ValueError, match="rotated must hold the n=2000 rows"):
        iome.iome_mean(X[:2000], rng=rng, rotated=pre, **kw)


def test_presorted_plan_centre_gives_the_same_release():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((4000, 64))
    S = quantiles.sorted_columns(np.clip(X, -50.0, 50.0))
    kw = dict(rho=0.5, lower=-50.0, upper=50.0)
    a = plan.plan_mean(X, rng=np.random.default_rng(5), **kw)
    b = plan.plan_mean(X, rng=np.random.default_rng(5), presorted=S, **kw)
    assert np.array_equal(a.estimate, b.estimate)


def _frozen_after_view(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A read-only array that owns its memory, and a writable view taken before freezing."""
    Y = np.array(X, copy=True)
    view = Y[:]
    Y.setflags(write=False)
    return Y, view


@pytest.mark.parametrize("estimator", ["plan", "plan_last_step", "robust", "iome", "medians"])
def test_no_stale_results_after_the_data_change(estimator):
    """Issue 25: PLAN gave the old mean 3.4 instead of 100 for a read-only X changed through
    a view; IOME with a fixed rotation gave the old mean after X was made writable."""
    rng = np.random.default_rng(6)
    X0 = 3.4 + rng.standard_normal((3000, 8))
    kw = dict(rho=1.0, lower=-200.0, upper=200.0)
    R = random_hadamard(8, rng=rng)
    run = {
        "plan": lambda X: plan.plan_mean(X, rng=np.random.default_rng(9), **kw).estimate,
        "plan_last_step": lambda X: ar.plan_last_step_private_inputs(X, rng=np.random.default_rng(9),
                                                                     **kw).estimate,
        "robust": lambda X: ar.algorithm3_robust(X, rng=np.random.default_rng(9), **kw).estimate,
        "iome": lambda X: iome.iome_mean(X, rng=np.random.default_rng(9), rotation=R, **kw).estimate,
        "medians": lambda X: quantiles.coordinatewise_quantiles(X, q=0.5, rng=np.random.default_rng(9),
                                                                **kw),
    }[estimator]
    X, view = _frozen_after_view(X0)
    before = run(X)
    view[...] = 100.0 + (X0 - 3.4)  # the read-only array changes through the earlier view
    after = run(X)
    assert np.abs(after - 100.0).max() < 1.0 and np.abs(before - 3.4).max() < 1.0
    X.setflags(write=True)  # made writable and changed again
    X[...] = X0
    np.testing.assert_array_equal(run(X), before)
