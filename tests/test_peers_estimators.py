"""Tests of the peer estimators: CoinPress, PLAN (and its variants), IOME, Algorithm 3 under zCDP.

What could fail, and how it is caught:
- privacy of the noisy steps: with the same seed the noise cancels, so the difference of
  two releases on adversarial neighbouring datasets (one row replaced by far antipodal
  points) is the difference of the clipped sums, which must be at most the sensitivity
  the noise was calibrated to (2R/n for a CoinPress step, 2C in Algorithm 3's
  transformed space) and close to it;
- the noise scale: Algorithm 3's release is exactly clipped sum + (2C/sqrt(2 rho)) z / b
  for the seeded z, and matches Theorem 2's calibration at the exact (eps, delta);
  PLAN's and IOME's noise std is 2C/sqrt(2 rho_noise);
- every budget split sums to the target rho, with the documented shares;
- PLAN's k, Delta and norm bound formulas; IOME's rank target;
- seeded reproducibility, accuracy on easy data (large rho), clear errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from egmbook import gaussian_benchmarks as GB
from egmlib import calibration, clipping, mechanisms
from egmlib.clipping import clipped_sum
from egmlib.peers import algorithm3 as A3
from egmlib.peers import budget as B
from egmlib.peers import coinpress as CP
from egmlib.peers import iome as IO
from egmlib.peers import plan as PL


def _data(seed, n=3000, sigma=(4.0, 2.0, 1.0, 0.5), mu=3.0):
    sigma = np.asarray(sigma)
    return mu + sigma * np.random.default_rng(seed).standard_normal((n, len(sigma))), sigma, mu


def _far_neighbours(X, i, far=1e9, seed=0):
    u = np.random.default_rng(seed).normal(size=X.shape[1])
    u /= np.linalg.norm(u)
    X1, X2 = X.copy(), X.copy()
    X1[i] = X[i] + far * u
    X2[i] = X[i] - far * u
    return X1, X2


# -------------------------------------------------------------------------- CoinPress
def test_coinpress_step_sensitivity():
    X, _, _ = _data(0, n=500)
    worst = 0.0
    for i in (0, 250):
        X1, X2 = _far_neighbours(X, i)
        r1 = CP.coinpress_mean(X1, rho=0.5, prior_centre=np.zeros(4), prior_radius=10.0,
                               rng=np.random.default_rng(3), steps=1)
        r2 = CP.coinpress_mean(X2, rho=0.5, prior_centre=np.zeros(4), prior_radius=10.0,
                               rng=np.random.default_rng(3), steps=1)
        bound = 2 * r1.clip_radii[0] / X.shape[0]
        d = np.linalg.norm(r1.estimate - r2.estimate)
        assert d <= bound * (1 + 1e-9)
        worst = max(worst, d / bound)
    assert worst > 0.999
    # the noise of that step is the zCDP Gaussian scale for sensitivity 2R/n
    # (the sensitivity 2R/n with the bound on the sum's rounding, egmlib.clipping)
    slack = 1 + clipping.rounding_slack(X.shape[0], d=4)
    assert r1.noise_stds[0] == pytest.approx(bound * slack / math.sqrt(2 * 0.5), rel=1e-14)


def test_coinpress_budget_schedule_and_accuracy():
    X, sigma, mu = _data(1, n=20000)
    r = CP.coinpress_known_scales(X, sigma=sigma, rho=1.0, lower=-1e4, upper=1e4,
                                  rng=np.random.default_rng(2))
    assert math.fsum(r.budget.parts.values()) == pytest.approx(1.0, rel=1e-14)
    assert r.steps > 1 and len(r.clip_radii) == r.steps
    assert r.budget[f"step {r.steps}"] in (0.75, 0.5)
    assert np.linalg.norm(r.estimate - mu) < 0.15
    # the schedule is a function of public quantities only
    schedule = CP.coinpress_schedule(20000, d=4, prior_radius=r.radii[0], rho=1.0)
    assert (schedule.steps, 1 - schedule.preliminary_share) == (r.steps, r.budget[f"step {r.steps}"])
    again = CP.coinpress_known_scales(X, sigma=sigma, rho=1.0, lower=-1e4, upper=1e4,
                                      rng=np.random.default_rng(2))
    np.testing.assert_array_equal(r.estimate, again.estimate)


def test_coinpress_validation():
    X, sigma, _ = _data(2, n=50)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sigma must have at least one entry > 0"):
        CP.coinpress_known_scales(X, sigma=np.zeros(4), rho=1.0, lower=-1, upper=1, rng=rng)
    with pytest.raises(ValueError, match="prior_centre must have length d=4"):
        CP.coinpress_mean(X, rho=1.0, prior_centre=np.zeros(3), prior_radius=1.0, rng=rng)
    with pytest.raises(ValueError, match="prior_radius must be finite and > 0"):
        CP.coinpress_mean(X, rho=1.0, prior_centre=np.zeros(4), prior_radius=-1.0, rng=rng)
    with pytest.raises(ValueError, match="beta must lie in the open interval"):
        CP.coinpress_mean(X, rho=1.0, prior_centre=np.zeros(4), prior_radius=1.0, rng=rng,
                          beta=2.0)
    with pytest.raises(ValueError, match="steps must be an integer <= 60"):
        CP.coinpress_mean(X, rho=1.0, prior_centre=np.zeros(4), prior_radius=1.0, rng=rng,
                          steps=61)
    with pytest.raises(TypeError, match="steps must be an integer"):
        CP.coinpress_schedule(50, d=4, prior_radius=1.0, rho=1.0, steps="3")
    with pytest.raises(ValueError, match="whitened (box|prior radius) overflows.*lower, upper or 1/sigma"):
        CP.coinpress_known_scales(X, sigma=np.full(4, 1e-300), rho=1.0, lower=-1e10, upper=1e10,
                                  rng=rng)


# ------------------------------------------------------------------------------- PLAN
def test_plan_formulas():
    np.testing.assert_allclose(PL.plan_scaling([1.0, 3.0, 0.0]), [2 + 8 / 3, 6 + 8 / 3, 8 / 3])
    np.testing.assert_array_equal(PL.plan_scaling([0.0, 0.0]), [1.0, 1.0])
    n, rho_t, lo, hi = 10000, 3 / 16 / 8, -3200.0, 3200.0
    T = math.log(hi - lo)
    k = (math.sqrt(n) + math.sqrt(T / 2 * math.log(T / 0.1) / rho_t)) / n
    assert PL.plan_clip_fraction(n, rho_threshold=rho_t, lower=lo, upper=hi) == pytest.approx(k)
    s = np.array([3.0, 1.0, 0.5])
    assert PL.plan_norm_bound(s) == pytest.approx(math.sqrt(math.log(3) * math.log(10) * 4.5))
    assert math.fsum(PL.PLAN_SHARES.values()) == 1.0
    assert math.fsum(PL.PLAN_NOSCALE_SHARES.values()) == 1.0


@pytest.mark.parametrize("which", ["plan", "noscale", "oracle"])
def test_plan_variants_budget_noise_and_accuracy(which):
    X, sigma, mu = _data(3, n=20000)
    rng = np.random.default_rng(4)
    kw = dict(rho=2.0, lower=-100.0, upper=100.0, rng=rng)
    if which == "plan":
        r = PL.plan_mean(X, **kw)
        assert set(r.budget.parts) == {"centre", "scale", "threshold", "noise"}
    elif which == "noscale":
        r = PL.plan_noscale_mean(X, **kw)
        assert r.sigma_hat is None and r.norm_upper == pytest.approx(2 * 200.0)
    else:
        r = PL.plan_oracle_mean(X, mu_hat=np.full(4, mu), sigma=sigma, **kw)
        np.testing.assert_array_equal(r.centre, mu)
    assert math.fsum(r.budget.parts.values()) == pytest.approx(2.0, rel=1e-14)
    sensitivity = clipping.sum_sensitivity(r.C, n=20000, d=4)  # 2C and the rounding bound
    assert r.noise_std == pytest.approx(sensitivity / math.sqrt(2 * r.budget["noise"]), rel=1e-14)
    assert np.linalg.norm(r.estimate - mu) < 0.15
    # about k n rows clipped (not 1, as Algorithm 3)
    k = 1 - r.clip_quantile
    assert 0.3 * k * 20000 < r.n_clipped < 3 * k * 20000


def test_plan_release_is_clipped_mean_plus_small_noise():
    X, sigma, mu = _data(5, n=4000)
    r = PL.plan_oracle_mean(X, mu_hat=np.full(4, mu), sigma=sigma, rho=1e12, lower=-50,
                            upper=50, rng=np.random.default_rng(6))
    root = np.sqrt(r.Delta)
    total = clipped_sum((X - mu) / root, C=r.C).total
    np.testing.assert_allclose(r.estimate, mu + root * total / 4000, atol=1e-6)


def test_plan_reproducible_and_validated():
    X, _, _ = _data(7, n=400)
    a = PL.plan_mean(X, rho=0.5, lower=-50, upper=50, rng=np.random.default_rng(1))
    b = PL.plan_mean(X, rho=0.5, lower=-50, upper=50, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(a.estimate, b.estimate)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="shares must have the steps"):
        PL.plan_mean(X, rho=0.5, lower=-50, upper=50, rng=rng, shares={"noise": 1.0})
    with pytest.raises(TypeError, match="shares must be a mapping"):
        PL.plan_mean(X, rho=0.5, lower=-50, upper=50, rng=rng, shares=[0.5, 0.5])
    with pytest.raises(ValueError, match="lower must be < upper"):
        PL.plan_mean(X, rho=0.5, lower=50, upper=-50, rng=rng)
    with pytest.raises(ValueError, match="X must have at least 2 rows"):
        PL.plan_mean(X[:1], rho=0.5, lower=-50, upper=50, rng=rng)
    with pytest.raises(ValueError, match="mu_hat must have length d=4"):
        PL.plan_oracle_mean(X, mu_hat=np.zeros(3), sigma=np.ones(4), rho=0.5, lower=-5, upper=5,
                            rng=rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        PL.plan_noscale_mean(X, rho=0.5, lower=-50, upper=50, rng=None)
    with pytest.raises(TypeError, match="beta must be a real number"):
        PL.plan_mean(X, rho=0.5, lower=-50, upper=50, rng=rng, beta="0.1")
    with pytest.raises(ValueError, match="sigma must be >= 0 entrywise"):
        PL.plan_scaling([1.0, -1.0])


# ------------------------------------------------------------------------------- IOME
def test_iome_budget_rank_noise_and_accuracy():
    X, _, mu = _data(8, n=20000, sigma=(1.0, 1.0, 1.0, 1.0, 1.0, 1.0))
    r = IO.iome_mean(X, rho=2.0, lower=-50.0, upper=50.0, rng=np.random.default_rng(9))
    assert math.fsum(r.budget.parts.values()) == pytest.approx(2.0, rel=1e-14)
    rn, rt = r.budget["noise"], r.budget["threshold"]
    assert r.rank_target == int(20000 - 4 * math.sqrt(8 / (2 * rn)) - 2 * math.sqrt(20 / (2 * rt)))
    sensitivity = clipping.sum_sensitivity(r.C, n=20000, d=8)  # 2C and the rounding bound, N = 8
    assert r.noise_std == pytest.approx(sensitivity / math.sqrt(2 * rn) / 20000, rel=1e-14)
    assert r.centre.shape == (8,)  # padded to a power of two
    assert np.linalg.norm(r.estimate - mu) < 0.1


def test_iome_shared_rotation_and_validation():
    X, _, _ = _data(10, n=300)
    X.setflags(write=False)
    R = IO.random_hadamard(4, rng=np.random.default_rng(0))
    a = IO.iome_mean(X, rho=1.0, lower=-50, upper=50, rng=np.random.default_rng(1), rotation=R)
    b = IO.iome_mean(X, rho=1.0, lower=-50, upper=50, rng=np.random.default_rng(1), rotation=R)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    with pytest.raises(ValueError, match="rotation must act on d=4"):
        IO.iome_mean(X, rho=1.0, lower=-50, upper=50, rng=np.random.default_rng(1),
                     rotation=IO.random_hadamard(5, rng=np.random.default_rng(0)))
    with pytest.raises(TypeError, match="rotation must be a RandomizedHadamard"):
        IO.iome_mean(X, rho=1.0, lower=-50, upper=50, rng=np.random.default_rng(1), rotation=1)


# ------------------------------------------------------------------------ Algorithm 3
def test_algorithm3_zcdp_release_is_clipped_sum_plus_calibrated_noise():
    X, sigma, mu = _data(11, n=2000)
    rho, seed = 0.3, 12
    r = A3.algorithm3_zcdp(X, sigma=sigma, mu_hat=np.full(4, mu), rho=rho,
                           rng=np.random.default_rng(seed))
    ref = mechanisms.algorithm3(X, sigma=sigma, mu_hat=np.full(4, mu), eps=1.0,
                                       delta=1e-6, rng=None, noise=False)
    assert r.C == ref.C and r.n_clipped == ref.n_clipped
    s = ref.sensitivity / math.sqrt(2 * rho)  # 2C and the rounding bound
    np.testing.assert_allclose(r.noise_std, s / ref.b, rtol=1e-14)
    z = np.random.default_rng(seed).standard_normal(4)
    np.testing.assert_allclose(r.estimate * 2000, ref.clipped_sum + s * z / ref.b, rtol=1e-12)
    # beside it: Theorem 2's calibration at the exact (eps, delta) of this release
    np.testing.assert_allclose(r.analytic_noise_std, r.noise_std, rtol=1e-8)
    assert calibration.privacy_profile(1 / math.sqrt(2 * rho), eps=r.eps) == \
        pytest.approx(r.delta, rel=1e-8)


def test_algorithm3_zcdp_sensitivity_on_adversarial_neighbours():
    X, sigma, mu = _data(13, n=500)
    worst = 0.0
    for i in (0, 499):
        X1, X2 = _far_neighbours(X, i, far=1e8)
        kw = dict(sigma=sigma, mu_hat=np.full(4, mu), rho=0.5)
        r1 = A3.algorithm3_zcdp(X1, rng=np.random.default_rng(1), **kw)
        r2 = A3.algorithm3_zcdp(X2, rng=np.random.default_rng(1), **kw)
        b = 1 / np.sqrt(sigma * sigma.sum())
        d = np.linalg.norm((r1.estimate - r2.estimate) * 500 * b)
        assert d <= 2 * r1.C * (1 + 1e-9)
        worst = max(worst, d / (2 * r1.C))
    assert worst > 0.999


@pytest.mark.parametrize("which", ["centre", "private"])
def test_algorithm3_pipelines_budget_and_accuracy(which):
    X, sigma, mu = _data(14, n=20000)
    rng = np.random.default_rng(15)
    if which == "centre":
        r = A3.algorithm3_private_centre(X, sigma=sigma, rho=1.0, lower=-100, upper=100, rng=rng)
        assert r.budget.parts == {"centre": 0.25, "noise": 0.75}
    else:
        r = A3.algorithm3_private(X, rho=1.0, lower=-100, upper=100, rng=rng)
        assert r.budget.parts == {"scale": 0.125, "centre": 0.125, "noise": 0.75}
        np.testing.assert_allclose(r.sigma, sigma, rtol=0.1)
    np.testing.assert_allclose(r.noise_std / np.sqrt(r.sigma * r.sigma.sum()),
                               clipping.sum_sensitivity(r.C, n=20000, d=4) / math.sqrt(2 * r.budget["noise"]),
                               rtol=1e-12)
    assert np.linalg.norm(r.centre - mu) < 0.1
    assert np.linalg.norm(r.estimate - mu) < 0.1


def test_algorithm3_validation():
    X, sigma, mu = _data(16, n=100)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="scale_share \\+ centre_share must be < 1"):
        A3.algorithm3_private(X, rho=1.0, lower=-9, upper=9, rng=rng, scale_share=0.5,
                              centre_share=0.5)
    with pytest.raises(ValueError, match="centre_share must lie in the open interval"):
        A3.algorithm3_private_centre(X, sigma=sigma, rho=1.0, lower=-9, upper=9, rng=rng,
                                     centre_share=1.0)
    with pytest.raises(TypeError, match="centre_share must be a real number"):
        A3.algorithm3_private_centre(X, sigma=sigma, rho=1.0, lower=-9, upper=9, rng=rng,
                                     centre_share=True)
    with pytest.raises(ValueError, match="mu_hat must have length d=4"):
        A3.algorithm3_zcdp(X, sigma=sigma, mu_hat=[0.0], rho=1.0, rng=rng)
    with pytest.raises(ValueError, match="sigma must be >= 0 entrywise"):
        A3.algorithm3_zcdp(X, sigma=-sigma, mu_hat=np.zeros(4), rho=1.0, rng=rng)
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        A3.algorithm3_zcdp(X, sigma=sigma, mu_hat=np.zeros(4), rho=0.0, rng=rng)
    with pytest.raises(ValueError, match="delta must lie in the open interval"):
        A3.algorithm3_zcdp(X, sigma=sigma, mu_hat=np.zeros(4), rho=1.0, rng=rng, delta=0.0)
    with pytest.raises(TypeError, match="X must hold real numbers, got strings"):
        A3.algorithm3_zcdp([["1", "2", "3", "4"]], sigma=sigma, mu_hat=np.zeros(4), rho=1.0,
                           rng=rng)


# ------------------------------------------------------------------ PLAN's benchmarks
def test_benchmark_settings_match_published_universes():
    c = {s.d: s for s in GB.settings("GaussianC")}
    assert c[16].universe == (-3200.0, 3200.0)
    assert c[2048].universe[1] == pytest.approx(4634095.001184158, rel=1e-12)
    b = GB.settings("GaussianB")
    assert [s.alpha for s in b] == [0.0, 0.5, 1.0, 1.5, 2.0] and b[0].universe == (-25600.0, 25600.0)
    a = GB.settings("GaussianA")
    assert a[0].universe == (-100.0, 100.0) and a[0].mu == 0.0 and a[0].n == 4000
    np.testing.assert_allclose(c[16].sigma ** 2, (16 / np.arange(1, 17)) ** 2)
    with pytest.raises(ValueError, match="dataset must be one of"):
        GB.settings("GaussianD")
    with pytest.raises(TypeError, match="dataset must be one of the strings"):
        GB.settings(1)
    with pytest.raises(ValueError, match="alpha\\)? overflows|d or alpha"):
        GB.plan_sigmas(2048, alpha=1e4)


def test_benchmark_sample_is_read_only_and_seeded():
    s = GB.settings("GaussianC")[0]
    X = GB.sample(s, rng=np.random.default_rng(0))
    assert X.shape == (10000, 16) and not X.flags.writeable
    np.testing.assert_array_equal(X, GB.sample(s, rng=np.random.default_rng(0)))
    np.testing.assert_allclose(X.std(axis=0), s.sigma, rtol=0.05)


def test_zcdp_conversion_used_by_algorithm3_matches_budget_module():
    assert B.gaussian_epsilon_exact(0.5, delta=1e-6) == pytest.approx(
        calibration.eps_from_sigma(1.0, delta=1e-6))


def test_iome_clip_count_is_what_iome_aims_to_clip():
    """The library's clip count (chapter 8's table) is n minus IOME's rank target."""
    from egmlib.peers import iome

    rng = np.random.default_rng(11)
    for n, d, rho in [(4000, 5, 0.5), (6000, 16, 1.0), (5000, 33, 2.0)]:
        X = rng.normal(size=(n, d))
        r = iome.iome_mean(X, rho=rho, lower=-8.0, upper=8.0, rng=rng)
        assert abs((n - r.rank_target) - iome.iome_clip_count(d, rho=rho)) <= 1.0
    # the padded dimension: d = 17..32 all pad to 32
    assert iome.iome_clip_count(17, rho=0.5) == iome.iome_clip_count(32, rho=0.5) < iome.iome_clip_count(33, rho=0.5)


def test_plan_last_step_noise_ratio_model():
    """Eq. (8.B): the ratio is the radius part over sqrt(PLAN's noise share); for equal
    sigma the radius part is C_P sqrt(sum Delta) / (C_t d sigma) with Delta = 3 sigma."""
    from egmlib import gchisq
    from egmlib.peers import plan

    ratio, radius = plan.plan_last_step_noise_ratio([2.0] * 64, n=10_000, rho=0.5, lower=-50.0, upper=50.0)
    assert ratio == pytest.approx(radius / math.sqrt(plan.PLAN_ORACLE_SHARES["noise"]), rel=1e-15)
    k = plan.plan_clip_fraction(10_000, rho_threshold=0.5 / 4, lower=-50.0, upper=50.0)
    C_P = math.sqrt(float(gchisq.isf(k, w=[2.0 / 3.0] * 64)))
    C_t = math.sqrt(float(gchisq.isf(1e-4, w=[1 / 64] * 64)))
    assert radius == pytest.approx(C_P * math.sqrt(64 * 6.0) / (C_t * 128.0), rel=1e-12)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        plan.plan_last_step_noise_ratio([1.0, 0.0], n=100, rho=0.5, lower=-1.0, upper=1.0)


def test_algorithm3_pipelines_default_shares_are_the_published_constants():
    """Chapter 8's table reads the splits from the library's constants, which must be the
    functions' defaults (and sum to 1)."""
    from egmlib.peers import algorithm3

    c = algorithm3.algorithm3_private_centre.__kwdefaults__
    p = algorithm3.algorithm3_private.__kwdefaults__
    assert dict(algorithm3.PRIVATE_CENTRE_SHARES) == {"centre": c["centre_share"], "noise": 1 - c["centre_share"]}
    assert dict(algorithm3.PRIVATE_SHARES) == {"scale": p["scale_share"], "centre": p["centre_share"],
                                               "noise": 1 - p["scale_share"] - p["centre_share"]}
    for shares in (algorithm3.PRIVATE_CENTRE_SHARES, algorithm3.PRIVATE_SHARES):
        assert math.fsum(shares.values()) == 1.0


def test_valid_budgets_that_give_eps_zero_are_accepted():
    """Issue 25: a delta above the profile's value at eps = 0 (delta = 0.4 at rho = 1/2, or
    rho = 1e-12 at delta = 1e-6) makes the exact eps 0; that is valid input, not an error."""
    X, sigma, mu = _data(16, n=500)
    r = A3.algorithm3_zcdp(X, sigma=sigma, mu_hat=np.full(4, mu), rho=0.5, delta=0.4, rng=np.random.default_rng(1))
    assert r.eps == 0.0 and np.all(np.isfinite(r.estimate))
    assert np.all(r.analytic_noise_std < r.noise_std)  # (0, 0.4)-DP needs less noise than rho = 1/2 gives
    from egmlib.peers.arms import ARMS
    r2 = ARMS["Alg3-private"](X, rho=1e-12, lower=-100.0, upper=100.0, rng=np.random.default_rng(2))
    assert r2.eps == 0.0 and np.all(np.isfinite(r2.estimate))


@pytest.mark.parametrize("name", ["Alg3-oracle", "PLAN-oracle", "CoinPress", "empirical"])
def test_every_arm_checks_the_common_arguments(name):
    """Issue 25: the oracle arms ignored lower, upper and rng, and named mu_hat for mu."""
    from egmlib.peers.arms import ARMS
    X, sigma, mu = _data(17, n=300)
    arm = ARMS[name]
    given = {g: {"sigma": sigma, "mu": np.full(4, mu)}[g] for g in arm.given}
    kw = dict(rho=0.5, lower=-100.0, upper=100.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="lower must be < upper"):
        arm(X, **{**kw, "lower": 1.0, "upper": 0.0}, **given)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        arm(X, **{**kw, "rng": 3}, **given)
    if "mu" in arm.given:
        with pytest.raises(ValueError, match="mu must have length d=4"):
            arm(X, **kw, **{**given, "mu": np.zeros(3)})
