"""egmlib.scaling: Theorem 3, Lemma 4.1, eqs. (1), (5), (6), (9), (24)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from egmbook.experiments import zipf_sigmas
from egmlib import scaling as sc

from conftest import positive_vectors

pos_vec = positive_vectors()
sigma_opt = st.floats(min_value=1e-3, max_value=1e3)


@st.composite
def vec_and_random_direction(draw, max_size=30):
    v = draw(pos_vec.filter(lambda xs: len(xs) <= max_size))
    c = draw(st.lists(st.floats(min_value=1e-3, max_value=1e3), min_size=len(v), max_size=len(v)))
    return np.array(v), np.array(c)


# --------------------------------------------------------------------------- Theorem 3
@given(pos_vec)
def test_egm_scaling_is_feasible_and_attains_eq6(D):
    b = sc.egm_scaling(D)
    assert np.linalg.norm(b) == pytest.approx(1.0, rel=1e-14)
    assert sc.egm_error(D, sigma_opt=2.0, b=b) == pytest.approx(
        sc.egm_error(D, sigma_opt=2.0), rel=1e-12)
    assert sc.egm_error(D, sigma_opt=2.0) == pytest.approx(4.0 * sum(D) ** 2, rel=1e-12)


@given(vec_and_random_direction(), sigma_opt)
def test_theorem3_scaling_beats_random_feasible_b(Dc, so):
    D, c = Dc
    b_rand = c / np.linalg.norm(c)  # a random point of the constraint ||b|| = 1
    assert sc.egm_error(D, sigma_opt=so) <= sc.egm_error(D, sigma_opt=so, b=b_rand) * (1 + 1e-12)


@given(pos_vec)
def test_theorem3_improvement_in_1_d_and_ratio_of_eq5_eq6(D):
    d = len(D)
    imp = sc.egm_improvement(D)
    assert 1.0 - 1e-12 <= imp <= d * (1 + 1e-12)
    assert imp == pytest.approx(sc.gaussian_mechanism_error(D, sigma_opt=1.7)
                                / sc.egm_error(D, sigma_opt=1.7), rel=1e-12)


def test_theorem3_improvement_extremes():
    assert sc.egm_improvement([3.0] * 7) == pytest.approx(1.0, rel=1e-15)
    assert sc.egm_improvement([0.0] * 6 + [2.0]) == pytest.approx(7.0, rel=1e-15)


def test_gaussian_mechanism_error_is_eq5_and_eq1():
    D = np.array([3.0, 4.0, 12.0])  # ||D|| = 13
    # eq. (5): d sigma_opt^2 ||Delta||^2 ; eq. (1) with sigma_{eps,delta} = ||Delta|| sigma_opt
    assert sc.gaussian_mechanism_error(D, sigma_opt=0.5) == pytest.approx(3 * 0.25 * 169, rel=1e-15)
    assert sc.gaussian_noise_error([13 * 0.5] * 3) == pytest.approx(3 * 0.25 * 169, rel=1e-15)


def test_egm_zero_sensitivity_coordinate_gets_no_noise():
    D = [1.0, 0.0, 3.0]
    b = sc.egm_scaling(D)
    assert b[1] == 0.0
    assert sc.egm_error(D, sigma_opt=1.0, b=b) == pytest.approx(16.0, rel=1e-14)
    with pytest.raises(ValueError, match="b must be > 0 where Delta > 0"):
        sc.egm_error([1.0, 3.0], sigma_opt=1.0, b=[0.0, 1.0])


def test_egm_error_rejects_infeasible_b():
    with pytest.raises(ValueError, match=r"b must satisfy \|\|b\|\|_2 = 1"):
        sc.egm_error([1.0, 2.0], sigma_opt=1.0, b=[0.5, 0.5])
    with pytest.raises(ValueError, match="b must have length d=2"):
        sc.egm_error([1.0, 2.0], sigma_opt=1.0, b=[1.0])


# --------------------------------------------------------------------------- Lemma 4.1
@given(pos_vec)
def test_lemma41_scaling_satisfies_eq10(s):
    b = sc.algorithm3_scaling(s)
    assert sc.algorithm3_constraint(b, sigma=s) == pytest.approx(1.0, rel=1e-13)


@given(vec_and_random_direction(), st.floats(min_value=1e-3, max_value=1e3), sigma_opt)
def test_lemma41_scaling_beats_random_feasible_b(sc_, C, so):
    s, c = sc_
    b_rand = c / math.sqrt(float(np.sum((c * s) ** 2)))  # random point of eq. (10)
    assert sc.algorithm3_constraint(b_rand, sigma=s) == pytest.approx(1.0, rel=1e-12)
    best = sc.algorithm3_noise_error(sc.algorithm3_scaling(s), C=C, sigma_opt=so)
    assert best <= sc.algorithm3_noise_error(b_rand, C=C, sigma_opt=so) * (1 + 1e-12)


@given(pos_vec, st.floats(min_value=1e-3, max_value=1e3), sigma_opt)
def test_eq24_at_lemma41_b_is_sum_sigma_squared(s, C, so):
    """eq. (9)/(24) with Lemma 4.1's b: sum_j b_j^-2 = (sum_j sigma_j)^2 (proof of Theorem 4)."""
    b = sc.algorithm3_scaling(s)
    direct = (2 * C * so) ** 2 * float(np.sum(1.0 / b**2))
    assert sc.algorithm3_noise_error(b, C=C, sigma_opt=so) == pytest.approx(direct, rel=1e-12)
    assert direct == pytest.approx((2 * C * so) ** 2 * math.fsum(s) ** 2, rel=1e-12)


def test_zero_sigma_coordinates_drop_out():
    s = np.array([0.5, 0.0, 0.3, 0.0, 0.2])
    b = sc.algorithm3_scaling(s)
    assert np.isinf(b[[1, 3]]).all() and np.isfinite(b[[0, 2, 4]]).all()
    assert sc.algorithm3_constraint(b, sigma=s) == pytest.approx(1.0, rel=1e-14)
    e_full = sc.algorithm3_noise_error(b, C=1.5, sigma_opt=2.0)
    e_drop = sc.algorithm3_noise_error(sc.algorithm3_scaling(s[[0, 2, 4]]), C=1.5, sigma_opt=2.0)
    assert e_full == pytest.approx(e_drop, rel=1e-14)
    with pytest.raises(ValueError, match="b must be > 0 entrywise"):
        sc.algorithm3_noise_error([1.0, 0.0], C=1.0, sigma_opt=1.0)


def test_lemma41_tiny_sigmas_do_not_underflow():
    s = zipf_sigmas(1000, alpha=50.0)  # entries down to 1e-150, squares would underflow
    b = sc.algorithm3_scaling(s)
    assert np.all(np.isfinite(b)) and np.all(b > 0)
    assert sc.algorithm3_constraint(b, sigma=s) == pytest.approx(1.0, rel=1e-13)


def test_algorithm3_constraint_rejects_inf_b_on_positive_sigma():
    with pytest.raises(ValueError, match="b must be finite where sigma > 0"):
        sc.algorithm3_constraint([np.inf, 1.0], sigma=[1.0, 1.0])


# --------------------------------------------------------------------------- validation
bad_entry = st.sampled_from([-1.0, math.nan, math.inf, -math.inf])


@given(pos_vec, bad_entry, st.data())
def test_vector_arguments_rejected(xs, bad, data):
    j = data.draw(st.integers(0, len(xs) - 1))
    ys = list(xs)
    ys[j] = bad
    for name, call in (("Delta", lambda: sc.egm_scaling(ys)),
                       ("Delta", lambda: sc.egm_improvement(ys)),
                       ("Delta", lambda: sc.gaussian_mechanism_error(ys, sigma_opt=1.0)),
                       ("Delta", lambda: sc.egm_error(ys, sigma_opt=1.0)),
                       ("sigma", lambda: sc.algorithm3_scaling(ys))):
        with pytest.raises(ValueError, match=rf"{name} must be"):
            call()


def test_scalar_arguments_rejected():
    with pytest.raises(ValueError, match="sigma_opt must be finite and > 0"):
        sc.egm_error([1.0], sigma_opt=0.0)
    with pytest.raises(ValueError, match="C must be finite and >= 0"):
        sc.algorithm3_noise_error([1.0], C=math.nan, sigma_opt=1.0)
    with pytest.raises(ValueError, match=r"b must be >= 0 entrywise \(inf allowed\), got b\[1\]=nan"):
        sc.algorithm3_noise_error([1.0, math.nan], C=1.0, sigma_opt=1.0)
    with pytest.raises(ValueError, match="b must be >= 0"):
        sc.algorithm3_noise_error([1.0, -1.0], C=1.0, sigma_opt=1.0)
    with pytest.raises(ValueError, match="at least one entry > 0"):
        sc.algorithm3_scaling([0.0, 0.0])
