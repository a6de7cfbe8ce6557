"""egmlib.bounds: Lemma 4.2 against the exact tail, Theorem 4's condition and bound."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from egmbook.experiments import clipping_radii, figure2_errors, zipf_sigmas
from egmlib import bounds as bd
from egmlib import gchisq

from conftest import positive_vectors

pos_vec = positive_vectors(1e-4, 1e4, max_size=40)


def _configs():
    rng = np.random.default_rng(20230120)
    yield "equal d=20", np.full(20, 0.7)
    yield "equal d=200", np.ones(200)
    for alpha in (0.1, 0.5, 1.0):
        yield f"zipf d=100 alpha={alpha}", zipf_sigmas(100, alpha=alpha)
    yield "uniform(0.5,1) d=60", rng.uniform(0.5, 1.0, 60)
    yield "lognormal d=80", rng.lognormal(0.0, 0.5, 80)
    yield "two levels d=90", np.r_[np.full(10, 1.0), np.full(80, 0.4)]
    yield "with zeros d=50", np.r_[np.ones(45), np.zeros(5)]


CONFIGS = list(_configs())


@pytest.mark.parametrize("name,sigma", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_lemma42_holds_against_exact_tail(name, sigma):
    """P[sum X_j^2 >= x_t] < e^{-t^2} for all admissible t, with the exact tail (gchisq)."""
    tmax = bd.bernstein_t_max(sigma)
    ts = np.linspace(0.0, tmax, 9)
    x = np.array([bd.bernstein_threshold(sigma, t=t) for t in ts])
    exact = np.asarray(gchisq.sf(x, w=sigma**2))
    bound = np.array([bd.bernstein_tail_bound(sigma, t=t) for t in ts])
    assert np.all(exact < bound), (name, exact / bound)


@pytest.mark.parametrize("name,sigma", CONFIGS[:4], ids=[c[0] for c in CONFIGS[:4]])
def test_lemma42_threshold_dominates_exact_quantile(name, sigma):
    """Equivalent statement: x_t >= the exact upper e^{-t^2}-quantile."""
    tmax = bd.bernstein_t_max(sigma)
    for t in (0.3 * tmax, tmax):
        q = float(gchisq.isf(math.exp(-t * t), w=sigma**2))
        assert bd.bernstein_threshold(sigma, t=t) >= q


@given(pos_vec)
def test_t_max_formula_and_scale_invariance(s):
    s = np.array(s)
    tmax = bd.bernstein_t_max(s)
    assert tmax == pytest.approx(math.sqrt(2 * np.sum(s**4)) / (6 * s.max() ** 2), rel=1e-12)
    assert bd.bernstein_t_max(1e-100 * s) == pytest.approx(tmax, rel=1e-12)  # s^4 would underflow


@pytest.mark.parametrize("d", [1, 2, 18, 1000])
def test_t_max_equal_sigmas(d):
    assert bd.bernstein_t_max(np.full(d, 0.3)) == pytest.approx(math.sqrt(2 * d) / 6, rel=1e-14)


@given(pos_vec, st.floats(min_value=0.0, max_value=50.0), st.floats(min_value=-50, max_value=50))
def test_threshold_formula_and_scaling(s, t, log_c):
    s = np.array(s)
    x = bd.bernstein_threshold(s, t=t)
    assert x == pytest.approx(t * math.sqrt(8 * np.sum(s**4)) + np.sum(s**2), rel=1e-12)
    c = 10.0**log_c
    assert bd.bernstein_threshold(c * s, t=t) == pytest.approx(c * c * x, rel=1e-12)


@given(pos_vec, st.floats(min_value=1e-9, max_value=10.0))
def test_tail_bound_refuses_t_outside_range(s, excess):
    s = np.array(s)
    tmax = bd.bernstein_t_max(s)
    assert bd.bernstein_tail_bound(s, t=tmax) == pytest.approx(math.exp(-tmax * tmax), rel=1e-15)
    with pytest.raises(ValueError, match=r"t must satisfy 0 <= t <= t_max"):
        bd.bernstein_tail_bound(s, t=tmax * (1 + excess))
    with pytest.raises(ValueError, match="t must be finite and >= 0"):
        bd.bernstein_tail_bound(s, t=-excess)


def test_t_for_probability():
    assert bd.bernstein_t_for_probability(1e-6) == pytest.approx(math.sqrt(math.log(1e6)), rel=1e-15)


# --------------------------------------------------------------------------- Theorem 4
@given(pos_vec, st.integers(min_value=2, max_value=10**12))
def test_condition_is_lemma42_range_in_transformed_space(s, n):
    """The report's algebra: t = sqrt(ln n) admissible for variances sigma_j / sum sigma
    iff ln n <= sum sigma^2 / (18 sigma_*^2)."""
    s = np.array(s)
    cond = bd.theorem4_condition(s, n=n)
    tmax_t = bd.bernstein_t_max(np.sqrt(s / s.sum()))
    assert cond.lhs == pytest.approx(math.log(n), rel=1e-15)
    assert cond.rhs == pytest.approx(np.sum(s**2) / (18 * s.max() ** 2), rel=1e-12)
    margin = abs(math.sqrt(math.log(n)) - tmax_t)
    if margin > 1e-9:
        assert cond.holds == (math.sqrt(math.log(n)) <= tmax_t)


@given(pos_vec, st.integers(min_value=2, max_value=10**9))
def test_ct2_bound_is_lemma42_threshold_in_transformed_space(s, n):
    s = np.array(s)
    x_t = bd.bernstein_threshold(np.sqrt(s / s.sum()), t=math.sqrt(math.log(n)))
    assert bd.transformed_ct2_bound(s, n=n) == pytest.approx(x_t, rel=1e-12)
    assert bd.theorem4_bound(s, n=n).ct2_bound == pytest.approx(x_t, rel=1e-12)


@pytest.mark.parametrize("sigma,n", [
    (np.ones(200), 100), (np.ones(200), 10**4), (zipf_sigmas(400, alpha=0.1), 1000),
    (np.random.default_rng(7).uniform(0.5, 1.0, 300), 10**4)])
def test_theorem4_bound_holds_against_exact_error(sigma, n):
    res = bd.theorem4_bound(sigma, n=n, sigma_opt=0.8)
    assert res.holds and res.bound is not None
    ct2 = clipping_radii(sigma, p=1.0 / n).Ct_squared
    assert ct2 <= res.ct2_bound
    _, e_t = figure2_errors(sigma, n=n, sigma_opt=0.8)
    assert e_t <= res.bound
    s1, s2 = sigma.sum(), np.sum(sigma**2)
    assert res.bound == pytest.approx(4 * 0.64 * s1 * (math.sqrt(8 * math.log(n) * s2) + s1), rel=1e-12)


@pytest.mark.parametrize("sigma,n", [(np.ones(10), 100), (zipf_sigmas(1000, alpha=1.0), 100),
                                     (np.ones(200), 10**6)])
def test_theorem4_reports_failed_condition(sigma, n):
    res = bd.theorem4_bound(sigma, n=n)
    assert not res.holds and res.bound is None
    assert res.lhs > res.rhs
    cond = bd.theorem4_condition(sigma, n=n)
    assert not cond.holds and math.log(n) > cond.rhs  # rhs = ln of the largest n allowed


def test_theorem4_needs_at_least_18_ln_n_dimensions():
    # equal sigmas: condition <=> d >= 18 ln n
    n = 100
    d_min = math.ceil(18 * math.log(n))
    assert bd.theorem4_condition(np.ones(d_min), n=n).holds
    assert not bd.theorem4_condition(np.ones(d_min - 1), n=n).holds


def test_theorem4_result_is_frozen():
    res = bd.theorem4_bound(np.ones(200), n=100)
    with pytest.raises(AttributeError):
        res.bound = 0.0  # type: ignore[misc]


# --------------------------------------------------------------------------- validation
@given(pos_vec, st.sampled_from([-1.0, math.nan, math.inf]), st.data())
def test_bad_sigma_rejected(xs, bad, data):
    j = data.draw(st.integers(0, len(xs) - 1))
    ys = list(xs)
    ys[j] = bad
    for call in (lambda: bd.bernstein_t_max(ys), lambda: bd.bernstein_threshold(ys, t=1.0),
                 lambda: bd.theorem4_condition(ys, n=10), lambda: bd.theorem4_bound(ys, n=10)):
        with pytest.raises(ValueError, match="sigma must be"):
            call()


@pytest.mark.parametrize("n", [0, 1, -5, 2.5, math.nan, math.inf])
def test_bad_n_rejected(n):
    with pytest.raises(ValueError, match="n must be"):
        bd.theorem4_bound(np.ones(100), n=n)


@pytest.mark.parametrize("n", [True, "100", None, 1j])
def test_n_of_the_wrong_type_rejected(n):
    with pytest.raises(TypeError, match="n must be an integer"):
        bd.theorem4_bound(np.ones(100), n=n)


def test_overflowing_threshold_is_a_value_error():
    with pytest.raises(ValueError, match="threshold x_t overflows.*sigma"):
        bd.bernstein_threshold([1e200, 1e200], t=1.0)


def test_bad_sigma_opt_and_t_rejected():
    with pytest.raises(ValueError, match="sigma_opt must be finite and > 0"):
        bd.theorem4_bound(np.ones(100), n=10, sigma_opt=-1.0)
    with pytest.raises(ValueError, match="t must be finite and >= 0"):
        bd.bernstein_threshold([1.0], t=math.inf)
