"""Tests of egmlib.mechanisms: Algorithms 1-3 of the report.

What is checked, and why it could fail:
- exactness: with no clipping and no noise each mechanism returns sum_i x_i;
- Algorithm 3's privacy argument: substituting one row (any row, however far
  away) moves the clipped transformed sum T by at most 2 C in l2 norm;
- the Monte Carlo squared error of each mechanism agrees with eqs. (1)/(5), (6),
  (9) within 5 standard errors (the standard error is exact: for noise
  eta_j ~ N(0, s_j^2), Var ||eta||^2 = 2 sum_j s_j^4);
- the fraction of clipped rows for data from the model agrees with p_clip
  within 5 binomial standard deviations;
- zero standard deviations, validation rules, determinism, chunking, memmaps,
  overflow-prone rows;
- the clipped baseline (clipped_gaussian_mechanism): exactness, sensitivity 2 C_n
  attained and never exceeded, Monte Carlo noise error d (2 C_n sigma_opt)^2
  (eq. (5), Section 5's E_n), C_n against Section 5's threshold, validation;
- the radius cache returns gchisq.isf's value exactly and is keyed on the weights.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from egmbook import experiments
from egmbook.experiments import zipf_sigmas
from egmlib import calibration, clipping, gchisq, mechanisms, scaling
from egmlib.mechanisms import (
    _clipping_radius,
    algorithm3,
    clipped_gaussian_mechanism,
    elliptical_gaussian_mechanism,
    gaussian_mechanism,
)

from conftest import bad_positive, bad_probability

EPS, DELTA = 1.0, 1e-6


def _zipf(d, alpha):
    s = np.arange(1, d + 1, dtype=float) ** -alpha
    return s / s.sum()


def _model_data(rng, n, sigma, mu):
    return mu + sigma * rng.standard_normal((n, sigma.shape[0]))


def _assert_sum_close(est, X):
    """est equals sum_i x_i up to rounding relative to sum_i |x_i|."""
    X = np.asarray(X, dtype=float)
    scale = np.abs(X).sum(axis=0) + 1.0
    np.testing.assert_array_less(np.abs(est - X.sum(axis=0)), 1e-11 * scale)


# --------------------------------------------------------------------------- #
# exactness
# --------------------------------------------------------------------------- #
@given(n=st.integers(1, 40), d=st.integers(1, 12), seed=st.integers(0, 2**32 - 1),
       chunk=st.one_of(st.none(), st.integers(1, 50)), n_zero=st.integers(0, 3))
def test_alg3_no_clipping_no_noise_is_exact_sum(n, d, seed, chunk, n_zero):
    """Rows inside the radius and noise=False: the release is sum_i x_i (any chunking,
    with or without zero-sigma coordinates, whose data is then at mu_hat)."""
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.1, 3.0, d)
    sigma[: min(n_zero, d - 1)] = 0.0
    mu_hat = rng.uniform(-1e3, 1e3, d)
    # rows well inside the ball: |x_hat| <= 0.3 per coordinate ...
    X = mu_hat + 0.3 * rng.uniform(-1, 1, (n, d)) * np.sqrt(sigma * sigma.sum())
    r = algorithm3(X, sigma=sigma, mu_hat=mu_hat, eps=EPS, delta=DELTA, rng=None,
                          p_clip=1e-9, noise=False, chunk_rows=chunk)
    assert r.C > 0.3 * math.sqrt(d)  # ... so ||x_hat_i|| <= 0.3 sqrt(d) < C
    assert r.n_clipped == 0
    assert not r.noise_added and np.all(r.noise == 0)
    np.testing.assert_array_equal(r.sum, r.clipped_sum)
    _assert_sum_close(r.sum, X)


def test_alg3_with_noise_estimate_minus_noise_is_sum():
    rng = np.random.default_rng(1)
    sigma = _zipf(30, 1.5)
    mu = rng.normal(size=30)
    X = _model_data(rng, 500, sigma, mu)
    r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng, p_clip=1e-12)
    assert r.n_clipped == 0 and r.noise_added
    assert np.all(r.noise != 0)
    _assert_sum_close(r.sum - r.noise, X)


@pytest.mark.parametrize("mech", ["gm", "egm", "egm_b"])
def test_alg1_alg2_estimate_minus_noise_is_sum(mech):
    rng = np.random.default_rng(2)
    X = rng.uniform(-5, 5, (300, 7))
    Delta = np.full(7, 10.0)
    if mech == "gm":
        r = gaussian_mechanism(X, eps=EPS, delta=DELTA, sensitivity=float(np.linalg.norm(Delta)), rng=rng)
    elif mech == "egm":
        r = elliptical_gaussian_mechanism(X, Delta=Delta, eps=EPS, delta=DELTA, rng=rng)
    else:
        b = rng.uniform(0.1, 1, 7)
        r = elliptical_gaussian_mechanism(X, Delta=Delta, eps=EPS, delta=DELTA, rng=rng, b=b / np.linalg.norm(b))
    assert np.all(r.noise != 0)
    _assert_sum_close(r.sum - r.noise, X)


def test_noise_scales_match_calibration():
    """noise_std is sigma_opt (Theorem 2) times the sensitivity, in each mechanism."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    s1 = calibration.sigma_opt(eps=EPS, delta=DELTA)
    r1 = gaussian_mechanism(X, eps=EPS, delta=DELTA, sensitivity=3.0, rng=rng)
    np.testing.assert_allclose(r1.noise_std, 3.0 * s1, rtol=1e-12)
    Delta = np.array([1.0, 2.0, 0.0, 5.0])
    r2 = elliptical_gaussian_mechanism(X, Delta=Delta, eps=EPS, delta=DELTA, rng=rng)
    np.testing.assert_allclose(r2.b, scaling.egm_scaling(Delta), rtol=1e-12)
    np.testing.assert_allclose(r2.noise_std, s1 * np.sqrt(Delta * Delta.sum()), rtol=1e-12)
    assert r2.noise_std[2] == 0 and r2.noise[2] == 0  # Delta_j = 0: a public constant
    sigma = np.array([1.0, 0.2, 0.0, 3.0])
    r3 = algorithm3(X, sigma=sigma, mu_hat=np.zeros(4), eps=EPS, delta=DELTA, rng=rng)
    np.testing.assert_allclose(
        r3.transformed_noise_std, calibration.sigma_opt(eps=EPS, delta=DELTA, sensitivity=2 * r3.C), rtol=1e-9)
    np.testing.assert_allclose(r3.b, scaling.algorithm3_scaling(sigma), rtol=1e-12)
    np.testing.assert_allclose(r3.noise_std, 2 * r3.C * s1 * np.sqrt(sigma * sigma.sum()), rtol=1e-12)
    # 2 C plus the bound on the summation's rounding (egmlib.clipping.rounding_slack)
    assert r3.sensitivity == clipping.sum_sensitivity(r3.C, n=50, d=3)
    assert 2 * r3.C < r3.sensitivity < 2 * r3.C * (1 + 1e-12)


# --------------------------------------------------------------------------- #
# privacy of Algorithm 3: sensitivity of the clipped transformed sum
# --------------------------------------------------------------------------- #
@st.composite
def _row(draw, mu_hat):
    d = mu_hat.shape[0]
    kind = draw(st.sampled_from(["moderate", "huge", "at_mu", "axis", "mixed"]))
    if kind == "moderate":
        return np.array(draw(st.lists(st.floats(-1e6, 1e6), min_size=d, max_size=d)))
    if kind == "huge":
        return np.array(draw(st.lists(st.sampled_from([-1e300, 1e300, -1e6, 1e6, 0.0]), min_size=d, max_size=d)))
    if kind == "at_mu":
        return mu_hat.copy()
    if kind == "axis":
        x = mu_hat.copy()
        x[draw(st.integers(0, d - 1))] += draw(st.sampled_from([-1e300, -1e6, -1.0, 1e-300, 1.0, 1e6, 1e300]))
        return x
    return mu_hat + np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=d, max_size=d)))


@st.composite
def _neighbours(draw):
    d = draw(st.integers(1, 6))
    n = draw(st.integers(1, 8))
    mu_hat = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=d, max_size=d)))
    sigma = np.array(draw(st.lists(st.sampled_from([0.0, 1e-300, 1e-8, 0.5, 1.0, 7.0, 1e8]), min_size=d, max_size=d)))
    assume(np.any(sigma > 0))
    X = np.stack([draw(_row(mu_hat)) for _ in range(n)])
    i = draw(st.integers(0, n - 1))
    X2 = X.copy()
    X2[i] = draw(_row(mu_hat))
    return X, X2, sigma, mu_hat


@settings(max_examples=150)
@given(data=_neighbours(), chunk=st.one_of(st.none(), st.integers(1, 3)))
def test_alg3_substituting_one_row_moves_T_by_at_most_2C(data, chunk):
    """The l2 sensitivity of T is 2C (Section 4): for any two datasets that differ
    in one row -- far-away rows (1e6, 1e300), rows at mu_hat, rows along one axis --
    ||T(X) - T(X')|| <= 2C up to rounding, and T is finite."""
    X, X2, sigma, mu_hat = data
    kw = dict(sigma=sigma, mu_hat=mu_hat, eps=EPS, delta=DELTA, rng=None, p_clip=0.01,
              noise=False, chunk_rows=chunk)
    r1 = algorithm3(X, **kw)
    r2 = algorithm3(X2, **kw)
    assert r1.C == r2.C  # C depends on public inputs only
    for r in (r1, r2):
        assert np.all(np.isfinite(r.transformed_sum)) and np.all(np.isfinite(r.sum))
    n = X.shape[0]
    gap = np.linalg.norm(r1.transformed_sum - r2.transformed_sum)
    assert gap <= 2 * r1.C * (1 + 1e-12) + 4 * n * r1.C * 1e-15


@settings(max_examples=150)
@given(d=st.integers(1, 8), C=st.floats(1e-3, 1e3), seed=st.integers(0, 2**32 - 1),
       far=st.sampled_from([1.0, 1e6, 1e150, 1e300]))
def test_clipped_rows_have_norm_at_most_C(d, C, seed, far):
    """Each row contributes a vector of norm <= C for any radius C (one row at a time,
    so T is that row's contribution), including rows whose squared norm overflows."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=d)
    b = 10.0 ** rng.uniform(-100, 100, d)
    X = mu + far * rng.standard_normal((5, d))
    for x in X:
        r = clipping.clipped_sum(x[None, :], C=C, mu_hat=mu, b=b)
        T, k = r.total, r.n_clipped
        norm = np.linalg.norm(T)
        with np.errstate(over="ignore"):
            y = (x - mu) * b
            true_norm = np.linalg.norm(y) if np.all(np.isfinite(y)) else np.inf
        assert np.isfinite(norm)
        if true_norm > C * (1 + 1e-12):
            assert k == 1 and abs(norm - C) <= 1e-12 * C
            # clipping keeps the direction
            if np.isfinite(true_norm):
                np.testing.assert_allclose(T, y * (C / true_norm), rtol=1e-9, atol=1e-12 * C)
        elif true_norm < C * (1 - 1e-12):
            assert k == 0 and np.array_equal(T, y)


def test_sensitivity_2C_is_attained():
    """Two antipodal far-away rows make ||T(X) - T(X')|| = 2C: the calibration is tight."""
    sigma = np.array([1.0, 4.0, 0.25])
    mu = np.array([3.0, -1.0, 2.0])
    X = np.tile(mu, (4, 1))
    X2 = X.copy()
    X[0] = mu + np.array([1e9, 0, 0])
    X2[0] = mu - np.array([1e9, 0, 0])
    kw = dict(sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=None, noise=False)
    r1, r2 = algorithm3(X, **kw), algorithm3(X2, **kw)
    assert r1.n_clipped == r2.n_clipped == 1
    gap = np.linalg.norm(r1.transformed_sum - r2.transformed_sum)
    assert abs(gap - 2 * r1.C) <= 1e-12 * r1.C


# --------------------------------------------------------------------------- #
# Monte Carlo squared error vs the formulas
# --------------------------------------------------------------------------- #
def _mc_check(errors, std):
    """Mean of ||eta||^2 within 5 exact standard errors of sum s_j^2."""
    R = errors.shape[0]
    mean_exact = float(np.sum(std**2))
    se = math.sqrt(2.0 * np.sum(std**4) / R)
    assert abs(errors.mean() - mean_exact) <= 5 * se, (errors.mean(), mean_exact, se)
    return mean_exact


def test_mc_error_alg1_eq1_eq5():
    """Algorithm 1, R = 3000 runs, d = 20: mean ||estimate - sum||^2 vs eq. (5),
    d sigma_opt^2 ||Delta||^2 (eq. (1) with sensitivity ||Delta||), within 5 SE."""
    rng = np.random.default_rng(10)
    d, R = 20, 3000
    Delta = rng.uniform(0.5, 3, d)
    X = rng.uniform(-1, 1, (30, d)) * Delta / 2
    exact = X.sum(axis=0)
    errs = np.empty(R)
    for t in range(R):
        r = gaussian_mechanism(X, eps=0.5, delta=1e-5, sensitivity=float(np.linalg.norm(Delta)), rng=rng)
        errs[t] = np.sum((r.sum - exact) ** 2)
    formula = scaling.gaussian_mechanism_error(Delta, sigma_opt=calibration.sigma_opt(eps=0.5, delta=1e-5))
    np.testing.assert_allclose(r.expected_noise_error, formula, rtol=1e-12)
    _mc_check(errs, r.noise_std)


@pytest.mark.parametrize("given_b", [False, True])
def test_mc_error_alg2_eq6(given_b):
    """Algorithm 2, R = 3000 runs, d = 20, skewed Delta: mean squared error vs eq. (6),
    sigma_opt^2 ||Delta||_1^2 (Theorem 3's b), or sum (sigma_opt Delta_j / b_j)^2 for a
    given b; within 5 SE.  Theorem 3's b must also beat the given b."""
    rng = np.random.default_rng(11)
    d, R = 20, 3000
    Delta = _zipf(d, 1.2) * 10
    b = rng.uniform(0.2, 1.0, d)
    b /= np.linalg.norm(b)
    X = rng.uniform(-0.5, 0.5, (30, d)) * Delta
    exact = X.sum(axis=0)
    errs = np.empty(R)
    for t in range(R):
        r = elliptical_gaussian_mechanism(X, Delta=Delta, eps=2.0, delta=1e-8, rng=rng,
                                          b=b if given_b else None)
        errs[t] = np.sum((r.sum - exact) ** 2)
    s_opt = calibration.sigma_opt(eps=2.0, delta=1e-8)
    formula = scaling.egm_error(Delta, sigma_opt=s_opt, b=b if given_b else None)
    np.testing.assert_allclose(r.expected_noise_error, formula, rtol=1e-9)
    if not given_b:
        np.testing.assert_allclose(formula, s_opt**2 * Delta.sum() ** 2, rtol=1e-12)
    else:
        assert formula > s_opt**2 * Delta.sum() ** 2
    _mc_check(errs, r.noise_std)


def test_mc_error_alg3_eq9():
    """Algorithm 3, R = 300 runs on one dataset from the model that is never clipped
    (checked each run), d = 30 Zipf(0.7) sigmas with two set to zero: mean squared
    error vs eq. (9), (2 C sigma_opt)^2 sum_j b_j^-2 = (2 C sigma_opt sum_j sigma_j)^2
    (eq. (24)), within 5 SE (about 9 % here)."""
    rng = np.random.default_rng(12)
    d, R = 30, 300
    sigma = zipf_sigmas(d, alpha=0.7)
    sigma[[3, 29]] = 0.0
    mu = rng.normal(size=d)
    X = _model_data(rng, 40, sigma, mu)
    exact = X.sum(axis=0)
    errs = np.empty(R)
    for t in range(R):
        r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng, p_clip=1e-4)
        assert r.n_clipped == 0
        errs[t] = np.sum((r.sum - exact) ** 2)
    s_opt = calibration.sigma_opt(eps=EPS, delta=DELTA)
    formula = scaling.algorithm3_noise_error(r.b, C=r.C, sigma_opt=s_opt)
    np.testing.assert_allclose(r.expected_noise_error, formula, rtol=1e-9)
    np.testing.assert_allclose(formula, (2 * r.C * s_opt * sigma.sum()) ** 2, rtol=1e-9)
    _mc_check(errs, r.noise_std)


# --------------------------------------------------------------------------- #
# clipping fraction for data from the model
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("p_clip,alpha", [(0.05, 0.5), (0.003, 2.0)])
def test_fraction_clipped_matches_p_clip(p_clip, alpha):
    """n = 2e5 rows from N(mu, diag(sigma^2)) with mu_hat = mu: n_clipped ~ Bin(n, p_clip);
    accept within 5 binomial SD.  A zero-sigma coordinate with garbage data must not
    change which rows are clipped."""
    rng = np.random.default_rng(20)
    n, d = 200_000, 12
    sigma = _zipf(d, alpha)
    sigma[-1] = 0.0
    mu = rng.normal(size=d)
    X = _model_data(rng, n, sigma, mu)
    X[:, -1] = rng.uniform(-1e9, 1e9, n)
    r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng, p_clip=p_clip)
    sd = math.sqrt(n * p_clip * (1 - p_clip))
    assert abs(r.n_clipped - n * p_clip) <= 5 * sd, (r.n_clipped, n * p_clip, sd)
    # an independent count of the rows outside the radius
    Y = (X[:, :-1] - mu[:-1]) * r.b[:-1]
    assert r.n_clipped == int(np.count_nonzero(np.linalg.norm(Y, axis=1) > r.C))


def test_default_p_clip_is_one_over_n():
    X = np.random.default_rng(0).normal(size=(250, 3))
    r = algorithm3(X, sigma=np.ones(3), mu_hat=np.zeros(3), eps=EPS, delta=DELTA,
                          rng=np.random.default_rng(1))
    assert r.p_clip == 1 / 250


# --------------------------------------------------------------------------- #
# zero standard deviations
# --------------------------------------------------------------------------- #
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 10), n=st.integers(1, 30),
       junk=st.sampled_from([0.0, 1.0, 1e300, -1e300]))
def test_zero_sigma_coordinates(seed, d, n, junk):
    """sigma_j = 0: release exactly n * mu_hat_j, zero noise there, no NaN; the other
    coordinates equal the release on the sub-problem without them (same seed)."""
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0, 2, d)
    zero = rng.random(d) < 0.4
    zero[0] = True
    zero[-1] = False
    sigma[zero] = 0.0
    mu_hat = rng.normal(size=d) * 10
    X = mu_hat + rng.normal(size=(n, d)) * 3
    X[:, zero] = junk + rng.normal(size=(n, int(zero.sum())))
    kw = dict(eps=EPS, delta=DELTA, p_clip=0.2)
    r = algorithm3(X, sigma=sigma, mu_hat=mu_hat, rng=np.random.default_rng(seed), **kw)
    assert np.all(np.isfinite(r.sum)) and np.all(np.isfinite(r.noise_std))
    np.testing.assert_array_equal(r.sum[zero], n * mu_hat[zero])
    assert np.all(r.noise_std[zero] == 0) and np.all(r.transformed_sum[zero] == 0)
    assert np.all(np.isinf(r.b[zero]))
    keep = ~zero
    sub = algorithm3(np.ascontiguousarray(X[:, keep]), sigma=sigma[keep], mu_hat=mu_hat[keep],
                            rng=np.random.default_rng(seed), **kw)
    assert sub.C == r.C and sub.n_clipped == r.n_clipped
    np.testing.assert_allclose(r.sum[keep], sub.sum, rtol=1e-13, atol=1e-13)


def test_zipf_alpha_100_underflow():
    """Zipf sigmas at alpha = 100, d = 1800 (experiments.zipf_sigmas): the last 78
    underflow to 0, others are subnormal.  The mechanism runs and is finite,
    coordinates with sigma = 0 get exactly n * mu_hat, and with no row clipped the
    estimate minus the noise is the exact sum."""
    d, n = 1800, 200
    sigma = zipf_sigmas(d, alpha=100.0)
    assert np.any(sigma == 0) and np.any((sigma > 0) & (sigma < 1e-308))
    rng = np.random.default_rng(30)
    mu = rng.normal(size=d)
    X = _model_data(rng, n, sigma, mu)
    r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng, p_clip=1e-12)
    assert np.all(np.isfinite(r.sum)) and np.all(np.isfinite(r.noise_std))
    np.testing.assert_array_equal(r.sum[sigma == 0], n * mu[sigma == 0])
    assert r.n_clipped == 0
    _assert_sum_close(r.sum - r.noise, X)


def test_all_zero_sigma_rejected():
    with pytest.raises(ValueError, match="sigma"):
        algorithm3(np.ones((3, 2)), sigma=[0.0, 0.0], mu_hat=[0.0, 0.0], eps=EPS,
                          delta=DELTA, rng=np.random.default_rng(0))


# --------------------------------------------------------------------------- #
# robustness: overflow-prone rows
# --------------------------------------------------------------------------- #
def test_far_rows_are_clipped_not_nan():
    """Rows at +-1e300 (squared norm overflows) are clipped to norm C along the right
    direction; the estimate is finite."""
    sigma = np.array([1e-200, 1.0, 1e-10])
    mu = np.zeros(3)
    X = np.array([[1e300, -1e300, 0.0], [0.0, 0.0, 0.0], [-1e300, 0.0, 0.0]])
    r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=None, noise=False,
                          p_clip=1e-3)
    assert r.n_clipped == 2
    assert np.all(np.isfinite(r.sum)) and np.all(np.isfinite(r.transformed_sum))
    # row 0 transformed is dominated by coordinate 0 (b_0 = 1e100 b_1), row 2 lies on axis 0:
    # their clipped versions are (C, ~0, 0) and (-C, 0, 0), which cancel.
    np.testing.assert_allclose(r.transformed_sum, 0.0, atol=1e-90 * r.C)


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
_bad_eps = bad_positive
_bad_prob = bad_probability
_X = np.random.default_rng(0).normal(size=(6, 3))
_RNG = np.random.default_rng(0)


def _call(which, **over):
    if which == 1:
        kw = dict(eps=EPS, delta=DELTA, sensitivity=1.0, rng=_RNG)
        kw.update(over)
        return gaussian_mechanism(kw.pop("X", _X), **kw)
    if which == 2:
        kw = dict(Delta=np.ones(3), eps=EPS, delta=DELTA, rng=_RNG)
        kw.update(over)
        return elliptical_gaussian_mechanism(kw.pop("X", _X), **kw)
    kw = dict(sigma=np.ones(3), mu_hat=np.zeros(3), eps=EPS, delta=DELTA, rng=_RNG)
    kw.update(over)
    mech = algorithm3 if which == 3 else clipped_gaussian_mechanism
    return mech(kw.pop("X", _X), **kw)


@given(which=st.sampled_from([1, 2, 3, 4]), eps=_bad_eps)
def test_rejects_bad_eps(which, eps):
    with pytest.raises(ValueError, match=r"eps must be finite and > 0"):
        _call(which, eps=eps)


@given(which=st.sampled_from([1, 2, 3, 4]), delta=_bad_prob)
def test_rejects_bad_delta(which, delta):
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
        _call(which, delta=delta)


@given(which=st.sampled_from([3, 4]), p=_bad_prob)
def test_rejects_bad_p_clip(which, p):
    with pytest.raises(ValueError, match=r"p_clip must lie in the open interval \(0, 1\)"):
        _call(which, p_clip=p)


@pytest.mark.parametrize("which", [3, 4])
def test_default_p_clip_needs_two_rows(which):
    with pytest.raises(ValueError, match="p_clip"):
        _call(which, X=np.zeros((1, 3)))
    r = _call(which, X=np.zeros((1, 3)), p_clip=0.5)  # explicit p_clip is fine for n = 1
    assert r.n == 1


@given(which=st.sampled_from([1, 2, 3, 4]), s=_bad_eps)
def test_rejects_bad_sensitivity_or_vectors(which, s):
    """sensitivity (Alg. 1) must be finite > 0; Delta (Alg. 2) and sigma (Alg. 3) must be
    finite and >= 0 entrywise: a non-positive or non-finite entry is rejected unless it is 0."""
    if which == 1:
        with pytest.raises(ValueError, match="sensitivity must be finite and > 0"):
            _call(1, sensitivity=s)
        return
    assume(s != 0.0)
    name = "Delta" if which == 2 else "sigma"
    v = np.ones(3)
    v[1] = s
    with pytest.raises(ValueError, match=rf"{name} must be (finite|>= 0 entrywise)"):
        _call(which, **{name: v})


@given(which=st.sampled_from([2, 3, 4]), d=st.integers(1, 6).filter(lambda k: k != 3))
def test_rejects_vector_length_mismatch(which, d):
    if which == 2:
        with pytest.raises(ValueError, match="Delta must have length d=3"):
            _call(2, Delta=np.ones(d))
        b = np.ones(d) / math.sqrt(d)
        with pytest.raises(ValueError, match="b must have length d=3"):
            _call(2, b=b)
    else:
        with pytest.raises(ValueError, match="sigma must have length d=3"):
            _call(which, sigma=np.ones(d))
        with pytest.raises(ValueError, match="mu_hat must have length d=3"):
            _call(which, mu_hat=np.zeros(d))


@given(which=st.sampled_from([3, 4]), bad=st.sampled_from([math.nan, math.inf, -math.inf]),
       j=st.integers(0, 2))
def test_rejects_nonfinite_mu_hat(which, bad, j):
    mu = np.zeros(3)
    mu[j] = bad
    with pytest.raises(ValueError, match="mu_hat must be finite"):
        _call(which, mu_hat=mu)


@given(which=st.sampled_from([1, 2, 3, 4]), shape=st.sampled_from([(), (5,), (2, 3, 1), (0, 3), (3, 0)]))
def test_rejects_bad_data_shape(which, shape):
    X = np.zeros(shape)
    with pytest.raises(ValueError, match=r"X must (be a 2-D array|have n >= 1 rows and d >= 1 columns)"):
        _call(which, X=X)


@given(which=st.sampled_from([1, 2, 3, 4]), bad=st.sampled_from([math.nan, math.inf, -math.inf]),
       i=st.integers(0, 49), j=st.integers(0, 2), chunk=st.integers(1, 20),
       zero_col=st.booleans())
def test_rejects_nonfinite_data(which, bad, i, j, chunk, zero_col):
    """NaN or inf anywhere in X (any chunk, also in a zero-sigma column) -> ValueError."""
    X = np.random.default_rng(i).normal(size=(50, 3))
    X[i, j] = bad
    extra = {}
    if which >= 3:
        extra = dict(chunk_rows=chunk, sigma=np.array([1.0, 0.0, 1.0]) if zero_col else np.ones(3))
    with pytest.raises(ValueError, match="X must be finite"):
        _call(which, X=X, **extra)


def test_rejects_non_numeric_data():
    for X in (np.array([["a", "b"]]), np.ones((2, 2), dtype=complex), np.ones((2, 3), dtype=bool),
              [["1", "2", "3"]]):
        with pytest.raises(TypeError, match="X must hold real numbers"):
            _call(1, X=X)
    with pytest.raises(ValueError, match="X must be a rectangular array"):
        _call(3, X=[[1.0, 2.0, 3.0], [1.0]])  # ragged rows


@pytest.mark.parametrize("which", [3, 4])
def test_rejects_wrong_types(which):
    with pytest.raises(TypeError, match="sigma must hold real numbers, got booleans"):
        _call(which, sigma=[True, False, True])
    with pytest.raises(TypeError, match="noise must be True or False"):
        _call(which, noise=1)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        _call(which, rng=42)
    with pytest.raises(TypeError, match="eps must be a real number"):
        _call(which, eps="1")


@pytest.mark.parametrize("which", [1, 2, 3, 4])
def test_overflowing_release_is_a_value_error(which):
    """Inputs near the float limit: the release would be inf; a ValueError says which input."""
    if which == 1:
        with pytest.raises(ValueError, match="overflows.*sensitivity"):
            _call(1, sensitivity=1e308)
    elif which == 2:
        with pytest.raises(ValueError, match="overflows.*Delta"):
            _call(2, Delta=[1e308] * 3)
    else:
        with pytest.raises(ValueError, match="overflows.*sigma"):
            _call(which, sigma=[1e308] * 3)


@given(scale=st.floats(0.5, 2.0).filter(lambda s: abs(s - 1) > 1e-6), j=st.integers(0, 2))
def test_rejects_bad_b(scale, j):
    """Algorithm 2's b: ||b|| must be 1 and every b_j > 0."""
    b = np.ones(3) / math.sqrt(3)
    with pytest.raises(ValueError, match="b must have l2 norm 1"):
        _call(2, b=b * scale)
    b2 = b.copy()
    b2[j] = 0.0
    with pytest.raises(ValueError, match="b must be > 0"):
        _call(2, b=b2)


def test_rejects_bad_rng_and_flags():
    for which in (1, 2, 3, 4):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
            _call(which, rng=42)
    for which in (3, 4):
        with pytest.raises(TypeError, match="noise must be True or False"):
            _call(which, noise="yes")
        for c in (0, -3, 1.5):
            with pytest.raises(ValueError, match="chunk_rows must be an integer >= 1"):
                _call(which, chunk_rows=c)
        _call(which, rng=None, noise=False)  # no rng needed without noise
    with pytest.raises(ValueError, match="sigma must have at least one entry > 0"):
        _call(4, sigma=np.zeros(3))


# --------------------------------------------------------------------------- #
# determinism, input types, chunking, results
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("which", [1, 2, 3, 4])
def test_same_seed_same_output(which):
    a = _call(which, rng=np.random.default_rng(123))
    b = _call(which, rng=np.random.default_rng(123))
    c = _call(which, rng=np.random.default_rng(124))
    np.testing.assert_array_equal(a.sum, b.sum)
    assert not np.array_equal(a.sum, c.sum)


def test_chunking_memmap_and_dtypes_agree(tmp_path):
    """Same release for any chunk size, for a np.memmap, float32 and int data (to rounding)."""
    rng = np.random.default_rng(40)
    n, d = 1000, 6
    sigma = np.array([1.0, 0.0, 2.0, 0.5, 3.0, 1.0])
    X = np.round(rng.normal(size=(n, d)) * 4)
    X[::97] *= 50  # some rows clipped
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(n, d))
    mm[:] = X
    mm.flush()
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="r", shape=(n, d))
    kw = dict(sigma=sigma, mu_hat=np.zeros(d), eps=EPS, delta=DELTA, p_clip=1e-3)
    ref = algorithm3(X, rng=np.random.default_rng(5), **kw)
    assert ref.n_clipped > 0
    for data, chunk in [(X, 1), (X, 7), (X, n), (mm, None), (mm, 64),
                        (X.astype(np.float32), 33), (X.astype(np.int64), None), (X.tolist(), None)]:
        r = algorithm3(data, rng=np.random.default_rng(5), chunk_rows=chunk, **kw)
        assert r.n_clipped == ref.n_clipped
        np.testing.assert_allclose(r.clipped_sum, ref.clipped_sum, rtol=1e-12, atol=1e-9)
        # the noise is calibrated to 2C plus the rounding bound of the chunking, which
        # depends on the rows per chunk (egmlib.clipping.rounding_slack): 1e-10 here
        np.testing.assert_allclose(r.sum, ref.sum, rtol=1e-8, atol=1e-8)


def test_results_are_frozen_and_readonly():
    r = _call(3)
    with pytest.raises(AttributeError):
        r.C = 0.0
    with pytest.raises(ValueError):
        r.sum[0] = 0.0
    r1 = _call(1)
    with pytest.raises(ValueError):
        r1.noise[0] = 0.0


def test_input_not_modified():
    X = _X.copy()
    sigma, mu = np.ones(3), np.zeros(3)
    algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(X, _X)
    assert np.all(sigma == 1) and np.all(mu == 0)


# --------------------------------------------------------------------------- #
# the baseline: clipping in the original space, then Algorithm 1
# --------------------------------------------------------------------------- #
@given(n=st.integers(1, 40), d=st.integers(1, 12), seed=st.integers(0, 2**32 - 1),
       chunk=st.one_of(st.none(), st.integers(1, 50)), n_zero=st.integers(0, 3))
def test_baseline_no_clipping_no_noise_is_exact_sum(n, d, seed, chunk, n_zero):
    """Rows inside the ball of radius C_n around mu_hat and noise=False: the release is
    sum_i x_i, for any chunking and with zero sigmas (which only shrink C_n)."""
    rng = np.random.default_rng(seed)
    sigma = rng.uniform(0.1, 3.0, d)
    sigma[: min(n_zero, d - 1)] = 0.0
    mu_hat = rng.uniform(-1e3, 1e3, d)
    u = rng.standard_normal((n, d))
    u *= (0.9 * np.min(sigma[sigma > 0]) * rng.random((n, 1))) / np.linalg.norm(u, axis=1, keepdims=True)
    X = mu_hat + u  # ||x_i - mu_hat|| < 0.9 min sigma <= C_n (C_n^2 >= sigma_max^2 chi2_1 quantile)
    r = clipped_gaussian_mechanism(X, sigma=sigma, mu_hat=mu_hat, eps=EPS, delta=DELTA, rng=None,
                                   p_clip=1e-9, noise=False, chunk_rows=chunk)
    assert r.C > np.max(sigma) * 6.0  # sigma_max^2 Z^2 > 36 sigma_max^2 has probability 2e-9
    assert r.n_clipped == 0 and not r.noise_added and np.all(r.noise == 0)
    np.testing.assert_array_equal(r.b, np.ones(d))
    np.testing.assert_array_equal(r.sum, r.clipped_sum)
    _assert_sum_close(r.sum, X)
    _assert_sum_close(r.transformed_sum + n * mu_hat, X)


def test_baseline_radius_is_section5_threshold():
    """C_n^2 is Section 5's threshold (experiments.clipping_radii, weights sigma_j^2),
    and P(||x - mu|| > C_n) = p_clip exactly by gchisq.sf; C_n does not depend on the data."""
    sigma = zipf_sigmas(50, alpha=1.3)
    for p in (1e-6, 1e-3, 0.4):
        r = clipped_gaussian_mechanism(np.zeros((3, 50)), sigma=sigma, mu_hat=np.zeros(50), eps=EPS,
                                       delta=DELTA, rng=None, p_clip=p, noise=False)
        cn2 = experiments.clipping_radii(sigma, p=p).Cn_squared
        np.testing.assert_allclose(r.C**2, cn2, rtol=1e-13)
        smax = sigma.max()
        np.testing.assert_allclose(gchisq.sf((r.C / smax) ** 2, w=(sigma / smax) ** 2), p, rtol=1e-9)
        assert r.sensitivity == clipping.sum_sensitivity(r.C, n=r.n, d=r.b.size)
        np.testing.assert_allclose(r.noise_std, 2 * r.C * calibration.sigma_opt(eps=EPS, delta=DELTA),
                                   rtol=1e-14)


@settings(max_examples=150)
@given(data=_neighbours(), chunk=st.one_of(st.none(), st.integers(1, 3)))
def test_baseline_substituting_one_row_moves_sum_by_at_most_2Cn(data, chunk):
    """Delta = 2 C_n: for any two datasets that differ in one row (far rows up to 1e300,
    rows at mu_hat, rows along one axis) the clipped sums differ by at most 2 C_n."""
    X, X2, sigma, mu_hat = data
    kw = dict(sigma=sigma, mu_hat=mu_hat, eps=EPS, delta=DELTA, rng=None, p_clip=0.01,
              noise=False, chunk_rows=chunk)
    r1 = clipped_gaussian_mechanism(X, **kw)
    r2 = clipped_gaussian_mechanism(X2, **kw)
    assert r1.C == r2.C
    for r in (r1, r2):
        assert np.all(np.isfinite(r.transformed_sum)) and np.all(np.isfinite(r.sum))
    n = X.shape[0]
    gap = np.linalg.norm(r1.transformed_sum - r2.transformed_sum)
    assert gap <= 2 * r1.C * (1 + 1e-12) + 4 * n * r1.C * 1e-15


@pytest.mark.parametrize("far", [10.0, 1e6, 1e300])
def test_baseline_sensitivity_2Cn_is_attained(far):
    """An adversarial substitution: the last row moves from mu_hat + far C_n u to
    mu_hat - far C_n u (u a random unit vector); both are clipped to +-C_n u, so the
    release moves by exactly 2 C_n, and the noise is calibrated to that sensitivity."""
    rng = np.random.default_rng(50)
    d, n = 7, 200
    sigma = zipf_sigmas(d, alpha=1.0)
    mu = rng.normal(size=d)
    C = clipped_gaussian_mechanism(np.zeros((2, d)), sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA,
                                   rng=None, p_clip=1e-3, noise=False).C
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    X = _model_data(rng, n, sigma, mu)
    X2 = X.copy()
    X[-1] = mu + far * C * u if far < 1e300 else far * u
    X2[-1] = mu - far * C * u if far < 1e300 else -far * u
    kw = dict(sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=None, p_clip=1e-3, noise=False)
    r1, r2 = clipped_gaussian_mechanism(X, **kw), clipped_gaussian_mechanism(X2, **kw)
    gap = r1.clipped_sum - r2.clipped_sum
    assert abs(np.linalg.norm(gap) - 2 * C) <= 1e-10 * C
    np.testing.assert_allclose(gap / np.linalg.norm(gap), u, atol=1e-9)
    assert r1.sensitivity == clipping.sum_sensitivity(C, n=n, d=d)
    np.testing.assert_allclose(r1.noise_std, calibration.sigma_opt(eps=EPS, delta=DELTA,
                                                                    sensitivity=r1.sensitivity), rtol=1e-12)


def test_mc_error_baseline_eq5():
    """The baseline's noise error, R = 2000 runs, d = 15, data never clipped: mean
    ||estimate - sum||^2 vs d (2 C_n sigma_opt)^2 (eq. (5) with ||Delta|| = 2 C_n;
    Section 5's E_n with the factor d) within 5 exact SE (about 8 % here); at
    p_clip = 1/n this is experiments.figure2_errors' E_n."""
    rng = np.random.default_rng(51)
    d, n, R = 15, 60, 2000
    sigma = zipf_sigmas(d, alpha=1.5)
    mu = rng.normal(size=d)
    X = _model_data(rng, n, sigma, mu) * 0.1 + 0.9 * mu  # well inside the ball
    exact = X.sum(axis=0)
    errs = np.empty(R)
    for t in range(R):
        r = clipped_gaussian_mechanism(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng)
        assert r.n_clipped == 0
        errs[t] = np.sum((r.sum - exact) ** 2)
    s_opt = calibration.sigma_opt(eps=EPS, delta=DELTA)
    formula = d * (2 * r.C * s_opt) ** 2
    np.testing.assert_allclose(r.expected_noise_error, formula, rtol=1e-12)
    np.testing.assert_allclose(
        formula, scaling.gaussian_mechanism_error(np.full(d, 2 * r.C / math.sqrt(d)), sigma_opt=s_opt), rtol=1e-12)
    E_n, _ = experiments.figure2_errors(sigma, n=n, sigma_opt=s_opt)
    np.testing.assert_allclose(formula, E_n, rtol=1e-9)
    _mc_check(errs, r.noise_std)


def test_baseline_fraction_clipped_matches_p_clip():
    """n = 2e5 rows from the model: n_clipped ~ Bin(n, p_clip) within 5 SD; an
    independent count of the rows with ||x_i - mu_hat|| > C_n agrees exactly."""
    rng = np.random.default_rng(52)
    n, d, p = 200_000, 12, 0.01
    sigma = _zipf(d, 1.0)
    mu = rng.normal(size=d)
    X = _model_data(rng, n, sigma, mu)
    r = clipped_gaussian_mechanism(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng, p_clip=p)
    assert abs(r.n_clipped - n * p) <= 5 * math.sqrt(n * p * (1 - p))
    assert r.n_clipped == int(np.count_nonzero(np.linalg.norm(X - mu, axis=1) > r.C))


def test_baseline_is_algorithm3_clipping_with_b_one():
    """With equal sigmas Lemma 4.1's b is constant, so Algorithm 3 and the baseline clip
    the same rows and release the same vector in the original space (up to rounding)."""
    rng = np.random.default_rng(53)
    d, n = 5, 400
    sigma = np.full(d, 2.0)
    X = _model_data(rng, n, sigma, np.zeros(d))
    kw = dict(sigma=sigma, mu_hat=np.zeros(d), eps=EPS, delta=DELTA, p_clip=0.05)
    a = algorithm3(X, rng=np.random.default_rng(1), **kw)
    b = clipped_gaussian_mechanism(X, rng=np.random.default_rng(1), **kw)
    assert a.n_clipped == b.n_clipped > 0
    np.testing.assert_allclose(a.clipped_sum, b.clipped_sum, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.sum, b.sum, rtol=1e-12, atol=1e-10)


# --------------------------------------------------------------------------- #
# the radius cache
# --------------------------------------------------------------------------- #
def test_radius_cache_is_exact_and_keyed_on_the_weights():
    """_clipping_radius returns sqrt(gchisq.isf) bit for bit, on a hit as on a miss;
    a caller mutating its weight array afterwards gets the new radius, not a stale one."""
    w = np.array([0.5, 0.3, 0.2])
    expected = math.sqrt(float(gchisq.isf(0.01, w=w)))
    assert _clipping_radius(0.01, w) == expected
    assert _clipping_radius(0.01, w.copy()) == expected  # a hit
    w[0] = 0.1
    assert _clipping_radius(0.01, w) == math.sqrt(float(gchisq.isf(0.01, w=w))) != expected
    assert _clipping_radius(0.02, w) == math.sqrt(float(gchisq.isf(0.02, w=w)))
    info = mechanisms._cached_quantile.cache_info()
    assert info.maxsize == mechanisms.RADIUS_CACHE_SIZE and info.hits >= 1
    big = np.full(mechanisms.RADIUS_CACHE_MAX_D + 1, 1.0)
    before = mechanisms._cached_quantile.cache_info().currsize
    assert _clipping_radius(0.5, big) == math.sqrt(float(gchisq.isf(0.5, w=big)))
    assert mechanisms._cached_quantile.cache_info().currsize == before  # long weights: not cached


def test_clipped_sum_adds_rows_in_order_without_blas():
    """Within a chunk T is the sequential sum of the clipped rows, bit for bit (an einsum
    loop, not a BLAS gemv whose summation order depends on the number of threads)."""
    rng = np.random.default_rng(60)
    n, d = 500, 7
    mu, b = rng.normal(size=d), rng.uniform(0.5, 2.0, d)
    X = mu + rng.standard_normal((n, d)) * 3
    C = 4.0
    r = clipping.clipped_sum(X, C=C, mu_hat=mu, b=b, rows=n)
    T, k = r.total, r.n_clipped
    ref = np.zeros(d)
    for x in X:
        y = (x - mu) * b
        norm = math.sqrt(float(np.einsum("i,i->", y, y)))
        ref = ref + (C / norm if norm > C else 1.0) * y
    assert k > 0
    np.testing.assert_array_equal(T, ref)
