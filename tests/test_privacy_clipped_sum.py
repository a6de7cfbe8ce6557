"""The clipped sum's bound for every row, subnormals included (issue 35, leak 3; Proposition F.2).

A row whose squares underflow once got the norm 0 and was never clipped: with C = 1e-170 a row
of entries 1e-163 moved the sum by 1e7 times the sensitivity 2C, and inside ESM's second moments,
in a box of width 1e-100, by 125 times.  Such rows are now rescaled by exact powers of two, as
rows whose squares overflow already were, and the sensitivity carries an absolute term for the
products that underflow (egmlib.clipping.sum_sensitivity).  The neighbours' difference is
measured without underflow (``_norm``: scaled by a power of two first).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egmlib import clipping
from egmlib.peers import scales


def _norm(v: np.ndarray) -> float:
    """The l2 norm of ``v`` without underflow or overflow of its squares."""
    top = float(np.max(np.abs(v)))
    if top == 0.0:
        return 0.0
    e = math.frexp(top)[1]
    return math.ldexp(float(np.linalg.norm(np.ldexp(v, -e))), e)


def _moved(X: np.ndarray, Xp: np.ndarray, C: float, **kw) -> float:
    """||clipped sum of X - clipped sum of X'|| in units of the stated sensitivity."""
    n, d = X.shape
    diff = clipping.clipped_sum(X, C=C, **kw).total - clipping.clipped_sum(Xp, C=C, **kw).total
    return _norm(diff) / clipping.sum_sensitivity(C, n=n, d=d if kw.get("cols") is None else len(kw["cols"]))


def test_leak_3_a_row_whose_squares_underflow_is_clipped():
    """Issue 35's reproduction: before, 1e7 times the sensitivity; after, at most 1."""
    X = np.zeros((3, 4))
    X[0] = 1e-163
    assert clipping.transformed_norms(X)[0] == pytest.approx(2e-163, rel=1e-15)
    assert clipping.clipped_sum(X, C=1e-170).n_clipped == 1
    assert _moved(X, np.zeros((3, 4)), 1e-170) <= 0.5 + 1e-12  # the row against 0: C, half of 2C


def test_leak_3_in_the_second_moments_at_a_box_of_width_1e_minus_100():
    """The second moments' clipped sum of paired half squared differences (ESM's scale step):
    rows at opposite corners of a box of width 1e-100 give v_i of about 1e-200, whose squares
    underflow.  Before: 125 times the sensitivity; after: at most 1."""
    w = 1e-100
    rng = np.random.default_rng(3)
    X = w * rng.random((40, 3))
    Xp = X.copy()
    Xp[7] = [0.0, w, 0.0]
    V = scales.pairwise_squared_differences(X, rng=np.random.default_rng(5))
    Vp = scales.pairwise_squared_differences(Xp, rng=np.random.default_rng(5))
    norms = clipping.transformed_norms(V)
    tau = float(np.quantile(norms, 0.5))
    assert 0.0 < tau < 1e-199
    moved = _moved(V, Vp, tau, norms=None)
    assert moved <= 1.0
    assert _moved(V, Vp, tau, norms=norms) <= 1.0 and _moved(V, Vp, tau) == moved


MAGNITUDES = st.sampled_from([5e-324, 1e-320, 1e-310, 1e-300, 1e-200, 1e-163, 1e-160, 1e-100, 1.0, 1e100,
                              1e200, 1e300])


@settings(max_examples=250, deadline=None)
@given(scale=MAGNITUDES, C_rel=st.sampled_from([0.0, 1e-3, 0.5, 1.0, 3.0, 1e3]),
       d=st.integers(1, 5), n=st.integers(1, 6), seed=st.integers(0, 2**16),
       centre=st.booleans(), b=st.sampled_from([None, 1e-30, 1.0, 1e30]), kind=st.sampled_from(
           ["random", "corner", "subnormal", "tied"]))
def test_clipped_sum_moves_at_most_its_sensitivity_at_every_magnitude(scale, C_rel, d, n, seed, centre, b, kind):
    """Rows and radius at magnitudes from the smallest subnormal to 1e300, with a public centre
    and scaling: the neighbours' clipped sums differ by at most sum_sensitivity."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        X = scale * rng.standard_normal((n, d))
    elif kind == "corner":
        X = scale * np.where(rng.random((n, d)) < 0.5, -1.0, 1.0)
    elif kind == "subnormal":
        X = rng.integers(-3, 4, (n, d)) * 5e-324
    else:
        X = np.full((n, d), scale)
    Xp = X.copy()
    Xp[-1] = -X[-1] if kind != "tied" else np.nextafter(X[-1], np.inf)
    with np.errstate(over="ignore", under="ignore"):
        C = C_rel * scale * (1.0 if b is None else b)
    if not math.isfinite(C):
        return
    kw = {"mu_hat": np.full(d, 0.5 * scale) if centre else None, "b": None if b is None else np.full(d, b)}
    assert _moved(X, Xp, C, **kw) <= 1.0 if C > 0 else _norm(
        clipping.clipped_sum(X, C=0.0, **kw).total) == 0.0


def test_the_absolute_term_of_the_sensitivity():
    """Proposition F.2: 2C(1 + nu) + 2 sqrt(d) eta (1 + n gamma_D); the absolute term is below the
    rounding of 2C(1 + nu) from C = 1e-290 on, and the bound is 0 at C = 0."""
    for C in (1e-290, 1.0, 1e300):
        assert clipping.sum_sensitivity(C, n=100, d=3) == 2.0 * C * (1.0 + clipping.rounding_slack(100, d=3))
    assert clipping.sum_sensitivity(5e-324, n=1, d=4) > 2 * 5e-324
    assert clipping.sum_sensitivity(0.0, n=10, d=3) == 0.0


@pytest.mark.parametrize("C", [0.0, 1e-3, 1e290])
def test_given_norms_find_entries_that_overflow_only_before_scaling(C):
    """A clipped sum whose norms are given takes every transformed entry as finite first, and tries
    the chunk again with the row check where the sum is not finite.  Rows at opposite ends of the
    float64 range about the centre make x - centre overflow to inf, while the scaled entry (b = 1e-10,
    or 0) is finite: the given-norms sum equals the one that computes its own norms, bit for bit, and
    every row adds at most C."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 5))
    X[[3, 150, 299], 0] = [1.5e308, -1.5e308, 1.5e308]
    X[150, 4] = 1.7e308
    centre = np.array([-1.5e308, 0.0, 0.0, 0.0, -1.0e308])
    b = np.array([1e-10, 1.0, 2.0, 0.5, 0.0])
    norms = clipping.transformed_norms(X, mu_hat=centre, b=b)
    assert np.all(np.isfinite(norms))
    given = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b, norms=norms)
    own = clipping.clipped_sum(X, C=C, mu_hat=centre, b=b)
    assert np.array_equal(given.total, own.total) and given.n_clipped == own.n_clipped
    assert np.all(np.isfinite(given.total))
    assert np.linalg.norm(given.total / C) <= 300 * (1 + 1e-12) if C else not np.any(given.total)
