"""The sweep's shortcuts never change a result.

CoinPress steps that clip no row skip the data; read-only data are sorted once and
serve the coordinate medians and the bisection counts; Algorithm 3's private inputs are
memoised by the generator's state.  Each is compared here with the computation it
replaces, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import coinpress, quantiles


def _read_only(X: np.ndarray) -> np.ndarray:
    Y = np.array(X, copy=True)
    Y.setflags(write=False)
    return Y


@pytest.mark.parametrize("spread", [1.0, 40.0])  # no step clips / the early steps clip rows
def test_coinpress_skipped_steps_change_nothing(monkeypatch, spread):
    rng = np.random.default_rng(1)
    X = 3.0 + spread * rng.standard_normal((3000, 16))
    X[:5] += 500.0  # far rows: the last steps clip them
    kw = dict(rho=0.5, prior_centre=np.zeros(16), prior_radius=1e4)
    fast = coinpress.coinpress_mean(X, rng=np.random.default_rng(7), **kw)
    monkeypatch.setattr(coinpress, "_SAFETY", 2.0)  # R (1 - 2) < 0: every step passes over the data
    full = coinpress.coinpress_mean(X, rng=np.random.default_rng(7), **kw)
    assert np.array_equal(fast.estimate, full.estimate)
    assert fast.n_clipped == full.n_clipped
    assert max(full.n_clipped) > 0


def test_bisection_counts_from_sorted_columns_are_exact():
    rng = np.random.default_rng(2)
    X = np.round(rng.standard_normal((2001, 12)), 1)  # ties
    kw = dict(rank=1000.5, rho=0.5, lower=-10.0, upper=10.0)
    writable = quantiles.binary_search_quantiles(X, rng=np.random.default_rng(3), **kw)
    sorted_route = quantiles.binary_search_quantiles(_read_only(X), rng=np.random.default_rng(3), **kw)
    assert np.array_equal(writable, sorted_route)


def test_read_only_medians_take_the_sorted_route():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((4000, 64))
    kw = dict(q=0.5, rho=0.01, lower=-50.0, upper=50.0)
    ro = quantiles.coordinatewise_quantiles(_read_only(X), rng=np.random.default_rng(5), **kw)
    eps = quantiles._budget.exponential_mechanism_epsilon(0.01 / 64)
    by_sort = quantiles._em_columns(X, q=0.5, eps=eps, lower=-50.0, upper=50.0,
                                    rng=np.random.default_rng(5), method="sort")
    assert np.array_equal(ro, by_sort)


def test_private_inputs_memo_returns_what_the_computation_returns():
    rng = np.random.default_rng(6)
    X = _read_only(2.0 + np.array([3.0, 1.0, 0.5, 2.0]) * rng.standard_normal((6000, 4)))
    kw = dict(rho=0.25, lower=-100.0, upper=100.0)
    ar._inputs_memo.clear()
    g1 = np.random.default_rng(9)
    first = ar.plan_last_step_private_inputs(X, rng=g1, **kw)  # computes and memoises
    g2 = np.random.default_rng(9)
    second = ar.plan_last_step_private_inputs(X, rng=g2, **kw)  # memo hit
    assert np.array_equal(first.estimate, second.estimate)
    assert g1.bit_generator.state == g2.bit_generator.state
    alg3 = ar.algorithm3_robust(X, rng=np.random.default_rng(9), **kw)  # the same stream
    assert np.array_equal(alg3.sigma, first.sigma) and np.array_equal(alg3.centre, first.centre)
    other = ar.plan_last_step_private_inputs(X, rng=np.random.default_rng(10), **kw)
    assert not np.array_equal(other.centre, first.centre)  # another stream: fresh inputs
