"""egmbook.error_simulation: the mechanisms on simulated datasets, and mean_ci.

What is checked, and why it could fail: streaming a dataset in row blocks gives the same
clipping error and clipped-row counts as one block (a block boundary that lost or doubled
rows would change them); mean_ci is scipy's Student-t interval; every argument is
validated.  The agreement of the simulation with the per-row model of
egmbook.clipping_error is tested in test_clipping_error.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from egmbook.error_simulation import MeanCI, SimulationRun, mean_ci, simulate_errors
from egmbook.experiments import zipf_sigmas

EPS, DELTA = 1.0, 1e-6


def test_simulate_errors_streaming_and_exact_centre():
    """Datasets streamed in blocks give the same clipping error as in one block when
    nothing is clipped (up to rounding), and the clipped-row counts agree with p."""
    sigma = zipf_sigmas(4, alpha=1.0)
    runs = [SimulationRun("s", "alg3", 1e-12, None), ("s", "base", 0.5, None)]  # tuples work too
    kw = dict(sigmas={"s": sigma}, runs=runs, reps=3, eps=EPS, delta=DELTA)
    one = simulate_errors(1000, rng=np.random.default_rng(5), **kw)
    blocks = simulate_errors(1000, rng=np.random.default_rng(5), chunk_elems=400, **kw)
    assert np.all(one[0].bias2 < 1e-20) and np.all(blocks[0].bias2 < 1e-20)
    assert np.all(one[0].n_clipped == 0)
    assert np.all(np.abs(one[1].n_clipped - 500) < 5 * math.sqrt(250))
    assert np.all(np.abs(blocks[1].n_clipped - 500) < 5 * math.sqrt(250))


def test_mean_ci_matches_scipy():
    x = np.random.default_rng(7).normal(size=25)
    m, se, ci = mean_ci(x)
    lo, hi = stats.t.interval(0.95, 24, loc=x.mean(), scale=stats.sem(x))
    np.testing.assert_allclose([m - ci, m + ci], [lo, hi], rtol=1e-12)
    m1, se1, ci1 = mean_ci([2.5])
    assert m1 == 2.5 and se1 == np.inf and ci1 == np.inf
    assert isinstance(mean_ci(x), MeanCI) and mean_ci(x).se == se
    np.testing.assert_allclose(mean_ci(np.stack([x, 2 * x]), axis=1).mean, [m, 2 * m], rtol=1e-12)


def test_validation_messages():
    s = np.ones(8)
    with pytest.raises(ValueError, match=r"runs\[0\].sigma_key must be a key of sigmas, got 'x'"):
        simulate_errors(10, sigmas={"s": s}, runs=[("x", "base", 0.1, None)], reps=1,
                        rng=np.random.default_rng(0), eps=EPS, delta=DELTA)
    with pytest.raises(ValueError, match=r"runs\[0\].p_clip must lie in the open interval"):
        simulate_errors(10, sigmas={"s": s}, runs=[("s", "base", 1.5, None)], reps=1,
                        rng=np.random.default_rng(0), eps=EPS, delta=DELTA)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        simulate_errors(10, sigmas={"s": s}, runs=[("s", "base", 0.5, None)], reps=1, rng=1,
                        eps=EPS, delta=DELTA)
    with pytest.raises(TypeError, match=r"runs\[0\] must be a SimulationRun"):
        simulate_errors(10, sigmas={"s": s}, runs=["s"], reps=1, rng=np.random.default_rng(0),
                        eps=EPS, delta=DELTA)
    with pytest.raises(ValueError, match=r"sigmas\['b'\] must have length d=8"):
        simulate_errors(10, sigmas={"a": s, "b": np.ones(3)}, runs=[("a", "base", 0.5, None)], reps=1,
                        rng=np.random.default_rng(0), eps=EPS, delta=DELTA)
    with pytest.raises(ValueError, match="x must be finite"):
        mean_ci([1.0, math.nan])
    with pytest.raises(ValueError, match="x must be at least one-dimensional"):
        mean_ci(1.0)
    with pytest.raises(TypeError, match="x must hold real numbers, got strings"):
        mean_ci(["1", "2", "3"])
