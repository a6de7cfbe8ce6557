"""Tests of egmlib.peers.scales, .hadamard and .clipping.

What could fail, and how it is caught:
- pairwise differences: substituting one row (however far) changes exactly one row of
  the squared differences for the same pairing -- the property both scale estimators'
  privacy rests on; each v_ij has mean sigma_j^2;
- the scale estimators recover sigma on easy data and are reproducible with a seed;
- the Walsh-Hadamard transform equals the dense Sylvester matrix, is an involution,
  and the randomised rotation is orthogonal, with padding to a power of two;
- the clipped sum: on adversarial neighbours (two antipodal far rows) it moves by at
  most 2C and nearly 2C; rows inside the ball are untouched; C = 0 clips all.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import hadamard

from egmlib import clipping
from egmlib.peers import hadamard as H
from egmlib.peers import scales


# ----------------------------------------------------------------------------- scales
def test_one_substituted_row_changes_one_pair():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(21, 3))
    for i in (0, 7, 20):
        Xp = X.copy()
        Xp[i] = [1e6, -1e6, 3e5]
        V = scales.pairwise_squared_differences(X, rng=np.random.default_rng(5))
        Vp = scales.pairwise_squared_differences(Xp, rng=np.random.default_rng(5))
        changed = np.any(V != Vp, axis=1)
        assert changed.sum() <= 1  # 0 when row i is the one left out (odd n)
    assert V.shape == (10, 3)


def test_pairwise_differences_are_unbiased_for_variance():
    rng = np.random.default_rng(1)
    sigma = np.array([0.5, 2.0, 7.0])
    X = 3.0 + sigma * rng.standard_normal((40000, 3))
    V = scales.pairwise_squared_differences(X, rng=rng)
    np.testing.assert_allclose(V.mean(axis=0), sigma**2, rtol=0.04)


def test_scale_estimators_recover_sigma():
    rng = np.random.default_rng(2)
    sigma = np.array([1.0, 5.0, 40.0, 0.2])
    X = -7.0 + sigma * rng.standard_normal((20000, 4))
    s1 = scales.pairwise_scales(X, rho=4.0, lower=-500, upper=500, rng=rng)
    res = scales.coinpress_log_scales(X, rho=4.0, lower=-500, upper=500, rng=rng)
    s2 = res.sigma_hat
    np.testing.assert_allclose(s1, sigma, rtol=0.05)
    np.testing.assert_allclose(s2, sigma, rtol=0.05)
    assert sum(res.coinpress.budget.parts.values()) == pytest.approx(4.0, rel=1e-14)


def test_log_scales_stay_in_the_public_range_when_the_budget_is_tiny():
    X = np.random.default_rng(9).normal(size=(40, 64))
    s = scales.coinpress_log_scales(X, rho=1e-9, lower=-10, upper=10,
                                    rng=np.random.default_rng(2), floor=1e-6).sigma_hat
    assert np.all(s >= 1e-6 * 20 * (1 - 1e-12)) and np.all(s <= 10 * (1 + 1e-12))


def test_log_chi2_constants():
    z = np.log(np.random.default_rng(3).chisquare(1, size=400000))
    assert z.mean() == pytest.approx(scales.LOG_CHI2_1_MEAN, abs=0.02)
    assert z.std() == pytest.approx(scales.LOG_CHI2_1_SD, rel=0.01)
    assert scales.CHI2_1_MEDIAN == pytest.approx(0.454936, abs=1e-6)


def test_scales_reproducible_and_validated():
    X = np.random.default_rng(4).normal(size=(100, 3))
    a = scales.pairwise_scales(X, rho=1.0, lower=-9, upper=9, rng=np.random.default_rng(1))
    b = scales.pairwise_scales(X, rho=1.0, lower=-9, upper=9, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="X must have at least 2 rows"):
        scales.pairwise_scales(X[:1], rho=1.0, lower=-9, upper=9, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="floor must lie in the open interval"):
        scales.coinpress_log_scales(X, rho=1.0, lower=-9, upper=9, rng=np.random.default_rng(1),
                                    floor=0.0)
    with pytest.raises(ValueError, match="universe of squared differences overflows.*lower, upper"):
        scales.pairwise_scales(X, rho=1.0, lower=-1e200, upper=1e200, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="squared difference of two rows overflows.*X"):
        scales.pairwise_squared_differences([[1e300], [-1e300]], rng=np.random.default_rng(1))


# --------------------------------------------------------------------------- hadamard
@pytest.mark.parametrize("N", [1, 2, 4, 8, 32, 128, 1024])
def test_transform_equals_dense_sylvester_matrix(N):
    Y = np.random.default_rng(N).normal(size=(3, N))
    np.testing.assert_allclose(H.hadamard_transform(Y), Y @ hadamard(N) / np.sqrt(N),
                               atol=1e-12)
    np.testing.assert_allclose(H.hadamard_transform(H.hadamard_transform(Y)), Y, atol=1e-12)


def test_transform_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="Y must have a last axis of power-of-two length"):
        H.hadamard_transform(np.zeros((2, 6)))
    with pytest.raises(TypeError, match="Y must hold real numbers"):
        H.hadamard_transform([["a", "b"]])
    with pytest.raises(ValueError, match="Hadamard transform overflows.*Y"):
        H.hadamard_transform([1e308, 1e308])


@pytest.mark.parametrize("d", [1, 3, 16, 100])
def test_rotation_is_orthogonal_with_padding(d):
    rng = np.random.default_rng(d)
    R = H.random_hadamard(d, rng=rng, rounds=3)
    assert R.padded_dim == 1 << (d - 1).bit_length()
    assert set(np.unique(R.signs)) <= {-1.0, 1.0}
    X = rng.normal(size=(5, d))
    Y = R.rotate(X)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=1), np.linalg.norm(X, axis=1), rtol=1e-12)
    for i in range(5):
        np.testing.assert_allclose(R.unrotate(Y[i]), X[i], atol=1e-12)


def test_rotation_seeded_and_validated():
    a = H.random_hadamard(8, rng=np.random.default_rng(1))
    b = H.random_hadamard(8, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a.signs, b.signs)
    with pytest.raises(ValueError, match="X must have d=8 columns"):
        a.rotate(np.zeros((2, 7)))
    with pytest.raises(ValueError, match="y must have length d=8"):
        a.unrotate(np.zeros(7))
    with pytest.raises(ValueError, match="rounds must be an integer >= 1"):
        H.random_hadamard(8, rng=np.random.default_rng(1), rounds=0)
    with pytest.raises(ValueError, match="d must be an integer <= "):
        H.random_hadamard(10**9, rng=np.random.default_rng(1))


# --------------------------------------------------------------------------- clipping
def test_clipped_sum_sensitivity_on_adversarial_neighbours():
    rng = np.random.default_rng(6)
    Y = rng.normal(size=(30, 4))
    C = 1.5
    worst = 0.0
    u = rng.normal(size=4)
    u /= np.linalg.norm(u)
    for far in (1e3, 1e12):
        for i in range(0, 30, 7):
            Y1, Y2 = Y.copy(), Y.copy()
            Y1[i] = far * u
            Y2[i] = -far * u
            d = np.linalg.norm(clipping.clipped_sum(Y1, C=C).total
                               - clipping.clipped_sum(Y2, C=C).total)
            assert d <= 2 * C * (1 + 1e-12)
            worst = max(worst, d)
    assert worst >= 2 * C * (1 - 1e-9)


def test_clipped_sum_keeps_inner_rows_and_zero_radius():
    Y = np.array([[0.3, 0.4], [3.0, 4.0]])
    r = clipping.clipped_sum(Y, C=1.0)
    np.testing.assert_allclose(r.total, [0.3 + 0.6, 0.4 + 0.8])
    np.testing.assert_allclose(clipping.transformed_norms(Y), [0.5, 5.0])
    assert r.n_clipped == 1
    np.testing.assert_array_equal(clipping.clipped_sum(Y, C=0.0).total, [0.0, 0.0])
    # centre and scaling: rows (x - mu_hat) * b
    r2 = clipping.clipped_sum(Y + 1.0, C=1.0, mu_hat=[1.0, 1.0], b=[2.0, 0.5])
    np.testing.assert_allclose(clipping.transformed_norms(Y + 1.0, mu_hat=[1.0, 1.0], b=[2.0, 0.5]),
                               np.linalg.norm(Y * [2.0, 0.5], axis=1))
    # precomputed norms and a column subset give the same sum
    n2 = clipping.transformed_norms(Y + 1.0, mu_hat=[1.0, 1.0], b=[2.0, 0.5])
    np.testing.assert_array_equal(clipping.clipped_sum(Y + 1.0, C=1.0, mu_hat=[1.0, 1.0], b=[2.0, 0.5], norms=n2).total,
                                  r2.total)
    np.testing.assert_allclose(clipping.clipped_sum(np.c_[Y, 7 * Y], C=1.0, cols=[0, 1]).total, r.total)
    with pytest.raises(ValueError, match="C must be finite and >= 0"):
        clipping.clipped_sum(Y, C=-1.0)
    with pytest.raises(ValueError, match="b must be >= 0 entrywise"):
        clipping.clipped_sum(Y, C=1.0, b=[1.0, -1.0])
    with pytest.raises(ValueError, match="mu_hat must have length d=2"):
        clipping.transformed_norms(Y, mu_hat=[1.0])
    # a squared norm that overflows: the norm itself, by exact scaling; beyond float64: inf
    np.testing.assert_allclose(clipping.transformed_norms([[1e200, 1e200]]), [math.sqrt(2) * 1e200],
                               rtol=1e-14)
    np.testing.assert_allclose(clipping.transformed_norms([[1e308, 1e308]]), [math.sqrt(2) * 1e308], rtol=1e-14)
    assert clipping.transformed_norms([[1.5e308, 1.5e308]]).tolist() == [math.inf]
    assert clipping.transformed_norms([[1e308, -1e308]], mu_hat=[-1e308, 1e308]).tolist() == [math.inf]
