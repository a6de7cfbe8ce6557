"""Shared validators (egmlib._validation): every rule, property-tested."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egmlib import _validation as v

FAST = settings(max_examples=60, deadline=None)

finite = st.floats(allow_nan=False, allow_infinity=False)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])


# --------------------------------------------------------------------------- scalars
@FAST
@given(st.floats(min_value=5e-324, max_value=1.7e308))
def test_positive_finite_accepts_and_returns_float(x):
    out = v.check_positive_finite("eps", np.float64(x))
    assert type(out) is float and out == x


@FAST
@given(st.one_of(st.floats(max_value=0.0, allow_nan=False), non_finite))
def test_positive_finite_rejects_with_name_and_rule(x):
    with pytest.raises(ValueError, match=r"eps must be finite and > 0, got eps="):
        v.check_positive_finite("eps", x)


@FAST
@given(st.one_of(st.floats(max_value=-5e-324, allow_nan=False), non_finite))
def test_nonnegative_finite_rejects(x):
    with pytest.raises(ValueError, match=r"t must be finite and >= 0"):
        v.check_nonnegative_finite("t", x)


def test_nonnegative_finite_accepts_zero():
    assert v.check_nonnegative_finite("t", 0) == 0.0


@pytest.mark.parametrize("bad", [True, np.bool_(False), "1.0", [1.0], np.array([1.0, 2.0]), None, 1j])
def test_real_rejects_non_real_scalars(bad):
    with pytest.raises(ValueError, match="x must be a real"):
        v.check_real("x", bad)


def test_real_accepts_zero_dim_array_and_integers():
    assert v.check_real("x", np.array(2.5)) == 2.5
    assert v.check_real("x", np.int32(3)) == 3.0


@FAST
@given(st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True))
def test_probability_accepts_open_interval(p):
    assert v.check_probability("delta", p) == p


@FAST
@given(st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0), non_finite))
def test_probability_rejects_closed_ends_and_outside(p):
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
        v.check_probability("delta", p)


@FAST
@given(st.lists(st.floats(min_value=1e-300, max_value=0.999), min_size=1, max_size=5),
       st.sampled_from([0.0, 1.0, math.nan, -0.5, 2.0]))
def test_probability_array_rejects_any_bad_entry(good, bad):
    arr = np.array(good)
    assert np.array_equal(v.check_probability_array("p", arr), arr)
    with pytest.raises(ValueError, match=r"p must lie in the open interval"):
        v.check_probability_array("p", np.append(arr, bad))


@FAST
@given(st.integers(min_value=2, max_value=10**12))
def test_count_accepts_integers_and_integral_floats(n):
    assert v.check_count("n", n, minimum=2) == n
    if n < 2**53:
        assert v.check_count("n", float(n), minimum=2) == n


@FAST
@given(st.one_of(st.integers(max_value=1), st.floats(min_value=2.01, max_value=1e6).filter(
    lambda x: not float(x).is_integer()), non_finite, st.just(True)))
def test_count_rejects(n):
    with pytest.raises(ValueError, match="n must be an integer"):
        v.check_count("n", n, minimum=2)


# --------------------------------------------------------------------------- vectors
vec = st.lists(st.floats(min_value=0.0, max_value=1e300), min_size=1, max_size=20)


@FAST
@given(vec.filter(lambda xs: any(x > 0 for x in xs)))
def test_nonnegative_vector_accepts_and_copies(xs):
    a = np.array(xs)
    out = v.check_nonnegative_vector("sigma", a)
    assert out.dtype == np.float64 and np.array_equal(out, a)
    out[0] = -1.0
    assert a[0] >= 0.0  # a fresh copy


@FAST
@given(vec, st.sampled_from([math.nan, math.inf, -math.inf, -1.0, -5e-324]), st.data())
def test_nonnegative_vector_rejects_bad_entry_naming_index(xs, bad, data):
    j = data.draw(st.integers(min_value=0, max_value=len(xs)))
    ys = list(xs)
    ys.insert(j, bad)
    rule = "must be finite" if not math.isfinite(bad) else "must be >= 0 entrywise"
    with pytest.raises(ValueError, match=rf"sigma {rule}, got sigma\[{j}\]"):
        v.check_nonnegative_vector("sigma", ys)


@pytest.mark.parametrize("shape", [(), (0,), (2, 2), (1, 3)])
def test_nonnegative_vector_rejects_wrong_shape(shape):
    with pytest.raises(ValueError, match="sigma must"):
        v.check_nonnegative_vector("sigma", np.ones(shape))


@FAST
@given(st.integers(min_value=1, max_value=50))
def test_all_zero_vector_rule(d):
    with pytest.raises(ValueError, match="at least one entry > 0"):
        v.check_nonnegative_vector("sigma", np.zeros(d))
    assert np.array_equal(v.check_nonnegative_vector("sigma", np.zeros(d), allow_all_zero=True),
                          np.zeros(d))


@FAST
@given(st.lists(st.floats(min_value=1e-300, max_value=1e300), min_size=1, max_size=20), st.data())
def test_positive_vector_rejects_zero(xs, data):
    assert np.array_equal(v.check_positive_vector("Delta", xs), np.array(xs))
    j = data.draw(st.integers(min_value=0, max_value=len(xs)))
    ys = xs[:j] + [0.0] + xs[j:]
    with pytest.raises(ValueError, match=rf"Delta must be > 0 entrywise, got Delta\[{j}\]=0.0"):
        v.check_positive_vector("Delta", ys)


def test_vector_rejects_non_numeric():
    with pytest.raises(ValueError, match="sigma must be a vector of real numbers"):
        v.check_nonnegative_vector("sigma", ["a", "b"])


@FAST
@given(st.integers(1, 6), st.integers(1, 6))
def test_same_shape(m, k):
    a, b = np.ones(m), np.ones(k)
    if m == k:
        v.check_same_shape("b", a, "sigma", b)
    else:
        with pytest.raises(ValueError, match="b and sigma must have the same shape"):
            v.check_same_shape("b", a, "sigma", b)


@pytest.mark.parametrize("bad", [None, 42, np.random.RandomState(0), "seed"])
def test_rng_must_be_generator(bad):
    with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator"):
        v.check_rng(bad)


def test_rng_accepts_generator():
    g = np.random.default_rng(1)
    assert v.check_rng(g) is g
