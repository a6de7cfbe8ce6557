"""Shared validators (egmlib.validation): every rule, property-tested.

The rule under test: a wrong type (bool, string, None, complex, object, an array of
those) is a TypeError, a wrong value (NaN, inf, out of range, wrong shape or length,
ragged, empty, an overflowing result) a ValueError, and each message names the argument.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from egmlib import validation

from conftest import non_finite


# --------------------------------------------------------------------------- scalars
@given(st.floats(min_value=5e-324, max_value=1.7e308))
def test_positive_finite_accepts_and_returns_float(x):
    out = validation.check_positive_finite("eps", np.float64(x))
    assert type(out) is float and out == x


@given(st.one_of(st.floats(max_value=0.0, allow_nan=False), non_finite))
def test_positive_finite_rejects_with_name_and_rule(x):
    with pytest.raises(ValueError, match=r"eps must be finite and > 0, got eps="):
        validation.check_positive_finite("eps", x)


@given(st.one_of(st.floats(max_value=-5e-324, allow_nan=False), non_finite))
def test_nonnegative_finite_rejects(x):
    with pytest.raises(ValueError, match=r"t must be finite and >= 0"):
        validation.check_nonnegative_finite("t", x)


def test_nonnegative_finite_accepts_zero():
    assert validation.check_nonnegative_finite("t", 0) == 0.0


@pytest.mark.parametrize("bad", [True, np.bool_(False), "1.0", [1.0], np.array([1.0, 2.0]), None, 1j])
def test_real_rejects_non_real_scalars(bad):
    with pytest.raises(TypeError, match="x must be a real number"):
        validation.check_real("x", bad)


def test_real_accepts_zero_dim_array_and_integers():
    assert validation.check_real("x", np.array(2.5)) == 2.5
    assert validation.check_real("x", np.int32(3)) == 3.0


@given(st.floats(min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True))
def test_probability_accepts_open_interval(p):
    assert validation.check_probability("delta", p) == p


@given(st.one_of(st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0), non_finite))
def test_probability_rejects_closed_ends_and_outside(p):
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
        validation.check_probability("delta", p)


@given(st.lists(st.floats(min_value=1e-300, max_value=0.999), min_size=1, max_size=5),
       st.sampled_from([0.0, 1.0, math.nan, -0.5, 2.0]))
def test_probability_array_rejects_any_bad_entry(good, bad):
    arr = np.array(good)
    assert np.array_equal(validation.check_probability_array("p", arr), arr)
    with pytest.raises(ValueError, match=r"p must lie in the open interval"):
        validation.check_probability_array("p", np.append(arr, bad))


@given(st.integers(min_value=2, max_value=10**12))
def test_count_accepts_integers_and_integral_floats(n):
    assert validation.check_count("n", n, minimum=2) == n
    if n < 2**53:
        assert validation.check_count("n", float(n), minimum=2) == n


@given(st.one_of(st.integers(max_value=1), st.floats(min_value=2.01, max_value=1e6).filter(
    lambda x: not float(x).is_integer()), non_finite))
def test_count_rejects(n):
    with pytest.raises(ValueError, match="n must be an integer"):
        validation.check_count("n", n, minimum=2)


@pytest.mark.parametrize("bad", [True, "3", None, 3j, [3]])
def test_count_rejects_wrong_types(bad):
    with pytest.raises(TypeError, match="n must be an integer"):
        validation.check_count("n", bad)


def test_count_maximum():
    assert validation.check_count("d", 10, maximum=10) == 10
    with pytest.raises(ValueError, match="d must be an integer <= 10, got d=11"):
        validation.check_count("d", 11, maximum=10)


# --------------------------------------------------------------------------- vectors
vec = st.lists(st.floats(min_value=0.0, max_value=1e300), min_size=1, max_size=20)


@given(vec.filter(lambda xs: any(x > 0 for x in xs)))
def test_nonnegative_vector_accepts_and_copies(xs):
    a = np.array(xs)
    out = validation.check_nonnegative_vector("sigma", a)
    assert out.dtype == np.float64 and np.array_equal(out, a)
    out[0] = -1.0
    assert a[0] >= 0.0  # a fresh copy


@given(vec, st.sampled_from([math.nan, math.inf, -math.inf, -1.0, -5e-324]), st.data())
def test_nonnegative_vector_rejects_bad_entry_naming_index(xs, bad, data):
    j = data.draw(st.integers(min_value=0, max_value=len(xs)))
    ys = list(xs)
    ys.insert(j, bad)
    rule = "must be finite" if not math.isfinite(bad) else "must be >= 0 entrywise"
    with pytest.raises(ValueError, match=rf"sigma {rule}, got sigma\[{j}\]"):
        validation.check_nonnegative_vector("sigma", ys)


@pytest.mark.parametrize("shape", [(), (0,), (2, 2), (1, 3), (2, 2, 2)])
def test_nonnegative_vector_rejects_wrong_shape(shape):
    with pytest.raises(ValueError, match="sigma must"):
        validation.check_nonnegative_vector("sigma", np.ones(shape))


def test_vector_length():
    assert validation.check_nonnegative_vector("sigma", [1.0, 2.0], length=2).shape == (2,)
    with pytest.raises(ValueError, match=r"sigma must have length d=3 \(one per column\), got sigma of shape \(2,\)"):
        validation.check_nonnegative_vector("sigma", [1.0, 2.0], length=3, of="one per column")


@given(st.integers(min_value=1, max_value=50))
def test_all_zero_vector_rule(d):
    with pytest.raises(ValueError, match="at least one entry > 0"):
        validation.check_nonnegative_vector("sigma", np.zeros(d))
    assert np.array_equal(validation.check_nonnegative_vector("sigma", np.zeros(d), allow_all_zero=True),
                          np.zeros(d))


@given(st.lists(st.floats(min_value=1e-300, max_value=1e300), min_size=1, max_size=20), st.data())
def test_positive_vector_rejects_zero(xs, data):
    assert np.array_equal(validation.check_positive_vector("Delta", xs), np.array(xs))
    j = data.draw(st.integers(min_value=0, max_value=len(xs)))
    ys = xs[:j] + [0.0] + xs[j:]
    with pytest.raises(ValueError, match=rf"Delta must be > 0 entrywise, got Delta\[{j}\]=0.0"):
        validation.check_positive_vector("Delta", ys)


@pytest.mark.parametrize("bad,what", [
    (["a", "b"], "strings"), (["1", "2"], "strings"), ([True, False], "booleans"),
    ([1j, 2.0], "complex numbers"), ([1.0, None], "objects"), (np.array([b"1"]), "bytes")])
def test_vector_rejects_non_numeric_entries(bad, what):
    """Nothing is coerced: numeric strings and bools are type errors, not numbers."""
    with pytest.raises(TypeError, match=f"sigma must hold real numbers, got {what}"):
        validation.check_nonnegative_vector("sigma", bad)


@pytest.mark.parametrize("bad", [None, "1.0", True, object()])
def test_array_rejects_non_arrays(bad):
    with pytest.raises(TypeError, match="sigma must"):
        validation.as_real_array("sigma", bad)


def test_ragged_is_a_value_error():
    with pytest.raises(ValueError, match="sigma must be a rectangular array .* ragged"):
        validation.as_real_array("sigma", [[1.0], [1.0, 2.0]])


def test_scaling_vector_allows_inf_and_zero_only():
    np.testing.assert_array_equal(validation.check_scaling_vector("b", [0.0, np.inf, 2.0]), [0.0, np.inf, 2.0])
    for bad in (math.nan, -1.0, -np.inf):
        with pytest.raises(ValueError, match=r"b must be >= 0 entrywise \(inf allowed\), got b\[1\]"):
            validation.check_scaling_vector("b", [1.0, bad])


def test_data_matrix_keeps_memmap_and_checks_type(tmp_path):
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(4, 3))
    assert validation.check_data_matrix("X", mm) is mm
    assert validation.check_data_matrix("X", [[1, 2], [3, 4]]).dtype.kind == "i"
    with pytest.raises(TypeError, match="X must hold real numbers, got booleans"):
        validation.check_data_matrix("X", np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        validation.check_data_matrix("X", np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="X must have n >= 1 rows"):
        validation.check_data_matrix("X", np.ones((0, 3)))


def test_finite_data_keeps_float64_without_copy_and_rejects_non_finite():
    X = np.arange(6.0).reshape(3, 2)
    X.setflags(write=False)
    assert validation.check_finite_data("X", X) is X  # read-only float64: no copy (the sort cache needs it)
    out = validation.check_finite_data("X", [[1, 2], [3, 4]])
    assert out.dtype == np.float64 and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match=r"X must be finite, got X\[1, 0\]=nan"):
        validation.check_finite_data("X", [[0.0, 1.0], [math.nan, 2.0]])
    # entries that are finite although their sum overflows pass
    assert validation.check_finite_data("X", [[1e308], [1e308]]).shape == (2, 1)
    with pytest.raises(ValueError, match="X must have at least 2 rows, got X with n=1"):
        validation.check_finite_data("X", [[1.0, 2.0]], min_rows=2)
    with pytest.raises(TypeError, match="X must hold real numbers, got strings"):
        validation.check_finite_data("X", [["1"]])


def test_bounds_and_closed_interval():
    assert validation.check_bounds(-1, 2) == (-1.0, 2.0)
    with pytest.raises(ValueError, match="lower must be < upper, got lower=2.0 and upper=2.0"):
        validation.check_bounds(2.0, 2.0)
    with pytest.raises(ValueError, match="upper must be finite"):
        validation.check_bounds(0.0, math.inf)
    with pytest.raises(ValueError, match="upper - lower must be finite"):
        validation.check_bounds(-1e308, 1e308)
    with pytest.raises(TypeError, match="a must be a real number"):
        validation.check_bounds("0", 1.0, names=("a", "b"))
    assert validation.check_closed_interval("q", 1, low=0.0, high=1.0) == 1.0
    for bad in (-1e-12, 1.5, math.nan):
        with pytest.raises(ValueError, match=r"q must lie in \[0, 1\]"):
            validation.check_closed_interval("q", bad, low=0.0, high=1.0)


def test_flags_choices_callables_mappings():
    assert validation.check_bool("noise", np.bool_(True)) is True
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="noise must be True or False"):
            validation.check_bool("noise", bad)
    assert validation.check_choice("method", "alg3", ("alg3", "base")) == "alg3"
    with pytest.raises(ValueError, match=r"method must be one of \['alg3', 'base'\], got method='alg2'"):
        validation.check_choice("method", "alg2", ("alg3", "base"))
    with pytest.raises(TypeError, match="method must be one of the strings"):
        validation.check_choice("method", 3, ("alg3", "base"))
    with pytest.raises(TypeError, match="mechanism must be callable"):
        validation.check_callable("mechanism", 3)
    with pytest.raises(TypeError, match="below must be a mapping"):
        validation.check_mapping("below", [1])
    with pytest.raises(ValueError, match=r"below must have the keys \['C'\]"):
        validation.check_mapping("below", {"x": 1}, keys=("C",))


def test_finite_result_names_the_inputs():
    validation.check_finite_result([1.0, 2.0], what="E", inputs="sigma")
    with pytest.raises(ValueError, match="E overflows the float64 range \\(got inf\\): sigma too large"):
        validation.check_finite_result([1.0, np.inf], what="E", inputs="sigma")


@pytest.mark.parametrize("bad", [None, 42, np.random.RandomState(0), "seed"])
def test_rng_must_be_generator(bad):
    with pytest.raises(TypeError, match=r"rng must be a numpy.random.Generator"):
        validation.check_rng("rng", bad)


def test_rng_accepts_generator():
    g = np.random.default_rng(1)
    assert validation.check_rng("rng", g) is g


def test_symbolic_checks_live_in_the_validation_module():
    """egmlib.symbolic's argument checks are egmlib.validation's (issue 19): one rule set."""
    import sympy as sp

    from egmlib import validation

    x = sp.Symbol("x")
    assert validation.check_symbolic_scalar("a", 2) == 2 and validation.check_symbolic_scalar("a", x) == x
    assert validation.check_symbolic_vector("a", [1, x]) == [1, x]
    with pytest.raises(TypeError, match=r"a must be a sympy expression or a real number"):
        validation.check_symbolic_scalar("a", "x")
    with pytest.raises(TypeError, match="a must be real"):
        validation.check_symbolic_scalar("a", sp.I)
    with pytest.raises(ValueError, match="a must be finite"):
        validation.check_symbolic_scalar("a", sp.oo)
    with pytest.raises(ValueError, match=r"a must be one-dimensional, got a nested sequence at a\[1\]"):
        validation.check_symbolic_vector("a", [1, [2]])
    with pytest.raises(TypeError, match=r"a\[0\] must be a sympy expression"):
        validation.check_symbolic_vector("a", [None])
