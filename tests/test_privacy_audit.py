"""Tests of egmbook.privacy_audit: the empirical privacy check of Algorithm 3.

What is checked, and why it could fail:
- the worst-case pair differs in one row and attains the sensitivity 2 C exactly;
- the privacy loss equals log p - log p' computed from scipy's normal densities;
- the importance-sampling delta(eps) of the Gaussian privacy loss lies within 4 SE
  of the Balle-Wang profile (Theorem 2) over a range of Delta and eps, and its SE is
  honest (the spread over independent seeds matches it);
- the whole check passes for the calibrated Algorithm 3, with Delta sigma_opt = 1,
  and its built-in negative controls land far above delta;
- it fails for real miscalibrated mechanisms: one that calibrates its noise to
  sensitivity C instead of 2 C (delta_emp hundreds of SE, and a factor 1000, above delta), and one that
  reports the calibrated noise scale but adds 30% less noise (invisible to the delta
  estimate, which uses the reported scale; caught by the law of the privacy loss of
  its actual releases);
- validation.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from egmbook.experiments import zipf_sigmas
from egmbook.privacy_audit import (
    NEGATIVE_CONTROLS,
    gaussian_loss_delta,
    privacy_check,
    privacy_loss,
    worst_case_pair,
)
from egmlib import calibration
from egmlib.mechanisms import algorithm3

EPS, DELTA = 1.0, 1e-6
SIGMA = zipf_sigmas(10, alpha=1.0)
QUICK = dict(n=300, eps=EPS, delta=DELTA, n_mc=400_000, n_outputs=600)


def test_worst_case_pair_attains_2C():
    X, Xp = worst_case_pair(SIGMA, n=50, rng=np.random.default_rng(1), mu_hat=np.full(10, 3.0))
    assert X.shape == Xp.shape == (50, 10)
    np.testing.assert_array_equal(X[:-1], Xp[:-1])
    assert not np.array_equal(X[-1], Xp[-1])
    kw = dict(sigma=SIGMA, mu_hat=np.full(10, 3.0), eps=EPS, delta=DELTA, rng=None, noise=False, p_clip=1 / 50)
    r, rp = algorithm3(X, **kw), algorithm3(Xp, **kw)
    gap = np.linalg.norm(r.transformed_sum - rp.transformed_sum)
    assert abs(gap / (2 * r.C) - 1) < 1e-12


def test_privacy_loss_is_log_density_ratio():
    rng = np.random.default_rng(2)
    m, mp, s = rng.normal(size=5), rng.normal(size=5), rng.uniform(0.5, 2, 5)
    y = rng.normal(size=(7, 5))
    ref = np.sum(stats.norm.logpdf(y, m, s) - stats.norm.logpdf(y, mp, s), axis=1)
    np.testing.assert_allclose(privacy_loss(y, mean=m, mean_prime=mp, std=s), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("Delta,eps", [(0.2, 1.0), (1 / 4.2247, 1.0), (0.5, 0.3), (1.0, 2.0), (2.0, 1.0)])
def test_gaussian_loss_delta_matches_balle_wang_profile(Delta, eps):
    d, se = gaussian_loss_delta(Delta, eps=eps, n_draws=200_000, rng=np.random.default_rng(3))
    prof = calibration.privacy_profile(1 / Delta, eps=eps)
    assert abs(d - prof) <= 4 * se, (d, prof, se)
    assert se < 0.02 * prof


def test_gaussian_loss_delta_standard_error_is_honest():
    """Over 40 seeds the estimates scatter like their reported SE (chi^2 test on the
    standardised deviations from the profile)."""
    Delta, prof = 0.3, calibration.privacy_profile(1 / 0.3, eps=EPS)
    z = []
    for seed in range(40):
        d, se = gaussian_loss_delta(Delta, eps=EPS, n_draws=20_000, rng=np.random.default_rng(seed))
        z.append((d - prof) / se)
    chi2 = float(np.sum(np.square(z)))
    assert stats.chi2(40).sf(chi2) > 1e-3 and stats.chi2(40).cdf(chi2) > 1e-3


def test_check_passes_for_algorithm3():
    pc = privacy_check(SIGMA, rng=np.random.default_rng(4), eps_grid=[0.5, 1.5], return_losses=True, **QUICK)
    assert pc.passed
    assert pc.sens_rel_err < 1e-12 and abs(pc.Delta_times_sigma_opt - 1) < 1e-9
    assert pc.reduction_err < 1e-9
    assert abs(pc.delta_is - pc.profile) <= 4 * pc.delta_is_se
    np.testing.assert_allclose(pc.profile, DELTA, rtol=1e-6)  # sigma_opt solves eq. (2)
    for name, _ in NEGATIVE_CONTROLS:
        c = pc.controls[name]
        assert c.delta_is > DELTA + 100 * c.delta_is_se
        assert abs(c.delta_is - c.profile) <= 4 * c.delta_is_se
    assert [c.eps for c in pc.curve] == [0.5, 1.5]
    assert pc.L_outputs.shape == (QUICK["n_outputs"],)
    rec = pc.as_dict()
    assert "L_outputs" not in rec and "curve" in rec and rec["n"] == 300
    assert rec["curve"][0]["eps"] == 0.5 and set(rec["controls"][NEGATIVE_CONTROLS[0][0]]) == {
        "delta_is", "delta_is_se", "profile"}  # plain JSON material
    assert list(rec)[:3] == ["n", "C", "sigma_opt"]


def _noise_scaled(factor, *, report_true_scale):
    """Algorithm 3 with its noise multiplied by factor; it reports the noise scale it
    adds (report_true_scale) or the calibrated one (a lying implementation)."""
    def mech(X, *, rng, noise, **kw):
        r = algorithm3(X, rng=rng, noise=noise, **kw)
        if not noise:
            return r if not report_true_scale else dataclasses.replace(r, noise_std=factor * r.noise_std)
        return dataclasses.replace(r, sum=r.clipped_sum + factor * r.noise, noise=factor * r.noise)
    return mech


def test_check_fails_for_noise_calibrated_to_sensitivity_C():
    pc = privacy_check(SIGMA, rng=np.random.default_rng(5),
                       mechanism=_noise_scaled(0.5, report_true_scale=True), **QUICK)
    assert not pc.passed
    np.testing.assert_allclose(pc.Delta_times_sigma_opt, 2.0, rtol=1e-9)
    assert pc.delta_is > DELTA + 100 * pc.delta_is_se and pc.delta_is > 1000 * DELTA


def test_check_fails_for_a_mechanism_that_adds_less_noise_than_it_reports():
    """30% less noise than reported: delta computed from the reported scale looks fine,
    but the privacy loss of the actual releases has variance 0.49 Delta^2 (about 9 SE
    below Delta^2 with 600 releases)."""
    pc = privacy_check(SIGMA, rng=np.random.default_rng(6),
                       mechanism=_noise_scaled(0.7, report_true_scale=False), **QUICK)
    assert not pc.passed
    assert pc.delta_is <= DELTA + 4 * pc.delta_is_se  # invisible to the delta estimate alone
    assert abs(pc.L_var - pc.L_var_pred) > 4 * pc.L_var_se


def test_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sigma must be > 0 entrywise"):
        worst_case_pair(np.r_[0.0, 1.0], n=5, rng=rng)
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        worst_case_pair(SIGMA, n=1, rng=rng)
    with pytest.raises(ValueError, match="far must be > 1"):
        worst_case_pair(SIGMA, n=5, rng=rng, far=0.5)
    with pytest.raises(ValueError, match="mu_hat must have length d=10"):
        worst_case_pair(SIGMA, n=5, rng=rng, mu_hat=np.zeros(3))
    with pytest.raises(ValueError, match="Delta must be finite and > 0"):
        gaussian_loss_delta(0.0, eps=1.0, n_draws=10, rng=rng)
    with pytest.raises(ValueError, match="n_draws must be an integer >= 2"):
        gaussian_loss_delta(1.0, eps=1.0, n_draws=1, rng=rng)
    with pytest.raises(ValueError, match="std must be > 0 entrywise"):
        privacy_loss(np.zeros(2), mean=np.zeros(2), mean_prime=np.zeros(2), std=[1.0, 0.0])
    with pytest.raises(ValueError, match="y must have a last axis of length d=2"):
        privacy_loss(np.zeros(3), mean=np.zeros(2), mean_prime=np.zeros(2), std=[1.0, 1.0])
    with pytest.raises(ValueError, match="n_mc must be an integer >= 10000"):
        privacy_check(SIGMA, n=10, eps=EPS, delta=DELTA, rng=rng, n_mc=100)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
        privacy_check(SIGMA, n=10, eps=EPS, delta=0.0, rng=rng)
    with pytest.raises(TypeError, match="mechanism must be callable"):
        privacy_check(SIGMA, n=10, eps=EPS, delta=DELTA, rng=rng, mechanism=3)
    with pytest.raises(TypeError, match="return_losses must be True or False"):
        privacy_check(SIGMA, n=10, eps=EPS, delta=DELTA, rng=rng, return_losses="yes")
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        worst_case_pair(SIGMA, n=5, rng=None)
    with pytest.raises(ValueError, match="overflows.*sigma"):
        worst_case_pair([1e308, 1e308], n=5, rng=rng)
