"""Tests of egmlib.peers.budget: zCDP splits and (epsilon, delta) conversions.

What could fail: a split whose parts do not add up to the total; the zCDP Gaussian
noise scale (Delta / sqrt(2 rho), Bun and Steinke 2016, Prop. 1.6) confused with the
lecture notes' Delta / sqrt(rho); the (epsilon, delta) conversion of Prop. 1.3; the
exact epsilon of a Gaussian mechanism not inverting the Balle-Wang profile.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from egmlib import calibration
from egmlib.peers import budget


def test_split_sums_to_total_and_keeps_names():
    b = budget.split_budget(0.3, shares={"a": 1 / 16, "b": 3 / 16, "c": 3 / 16, "d": 9 / 16})
    assert math.isclose(math.fsum(b.parts.values()), 0.3, rel_tol=1e-15)
    assert b["a"] == pytest.approx(0.3 / 16, rel=1e-15)
    assert b.total == 0.3
    with pytest.raises(TypeError):
        b.parts["a"] = 1.0  # read-only


@pytest.mark.parametrize(
    "shares, exc, match",
    [
        ({}, ValueError, "at least one step"),
        ({"a": 0.5}, ValueError, "sum to 1"),
        ({"a": 0.5, "b": 0.6}, ValueError, "sum to 1"),
        ({"a": -0.5, "b": 1.5}, ValueError, "shares\\['a'\\]"),
        ({"a": float("nan")}, ValueError, "shares\\['a'\\]"),
        ([0.5, 0.5], TypeError, "mapping"),
        ({1: 1.0}, TypeError, "step names"),
    ],
)
def test_split_rejects_bad_shares(shares, exc, match):
    with pytest.raises(exc, match=match):
        budget.split_budget(1.0, shares=shares)


@pytest.mark.parametrize("rho", [0.0, -1.0, float("inf"), float("nan")])
def test_split_rejects_bad_rho(rho):
    with pytest.raises(ValueError, match="rho"):
        budget.split_budget(rho, shares={"a": 1.0})


def test_gaussian_noise_std_is_zcdp_scale():
    # rho = Delta^2 / (2 sigma^2)  <=>  sigma = Delta / sqrt(2 rho)
    for rho, sens in [(1 / 16, 1.0), (0.5, 2.0), (3.0, 0.1)]:
        s = budget.gaussian_noise_std(rho, sensitivity=sens)
        assert sens**2 / (2 * s**2) == pytest.approx(rho, rel=1e-14)
        # one rho in egmlib: calibration's is the same zCDP rho; the notes' is twice it
        assert s == pytest.approx(calibration.sigma_from_rho(rho, sensitivity=sens), rel=1e-15)
        notes = calibration.lecture_notes_rho(rho)
        assert s == pytest.approx(sens / math.sqrt(notes), rel=1e-15)


def test_exponential_mechanism_epsilon():
    assert budget.exponential_mechanism_epsilon(0.125) == 1.0
    assert budget.exponential_mechanism_epsilon(2.0) ** 2 / 8 == pytest.approx(2.0)


@pytest.mark.parametrize("rho", [1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-10])
def test_epsilon_conversions(rho, delta):
    bound = budget.approx_dp_epsilon(rho, delta=delta)
    assert bound == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-14)
    exact = budget.gaussian_epsilon_exact(rho, delta=delta)
    assert 0 < exact < bound
    sigma = 1 / math.sqrt(2 * rho)
    # the exact epsilon puts the Balle-Wang profile at delta ...
    assert calibration.privacy_profile(sigma, eps=exact) == pytest.approx(delta, rel=1e-8)
    # ... and the analytic calibration at that (eps, delta) gives back the zCDP noise
    assert calibration.sigma_opt(eps=exact, delta=delta) == pytest.approx(sigma, rel=1e-8)


def test_conversion_validation():
    with pytest.raises(ValueError, match="delta"):
        budget.approx_dp_epsilon(0.5, delta=1.5)
    with pytest.raises(ValueError, match="rho"):
        budget.gaussian_epsilon_exact(-0.5, delta=1e-6)
    with pytest.raises(ValueError, match="sensitivity"):
        budget.gaussian_noise_std(0.5, sensitivity=0.0)
    with pytest.raises(TypeError, match="rho"):
        budget.exponential_mechanism_epsilon("0.5")
    with pytest.raises(ValueError, match="rho"):
        budget.exponential_mechanism_epsilon(1e308)  # eps = sqrt(8 rho) overflows
    assert np.isfinite(budget.gaussian_epsilon_exact(1e-4, delta=0.5))


def test_library_constants_behind_chapter_8_table():
    """The shares and clip counts chapter 8 reads from the library, checked independently."""
    import math

    from egmlib.peers import algorithm3, iome, plan

    for shares in (algorithm3.PRIVATE_SHARES, algorithm3.PRIVATE_CENTRE_SHARES):
        assert math.isclose(sum(shares.values()), 1.0)
    assert algorithm3.algorithm3_private.__kwdefaults__["scale_share"] == algorithm3.PRIVATE_SHARES["scale"]
    # IOME's clip count: 4 sqrt(N / (2 rho_noise)) + 2 sqrt(T / (2 rho_threshold)), N = 128 for d = 100
    rho = 0.5
    expect = 4 * math.sqrt(128 / (2 * rho * 0.75 * 0.99)) + 2 * math.sqrt(20 / (2 * rho * 0.75 * 0.01))
    assert math.isclose(iome.iome_clip_count(100, rho=rho), expect, rel_tol=1e-12)
    assert iome.iome_clip_count(100, rho=rho) == iome.iome_clip_count(128, rho=rho)
    assert iome.iome_clip_count(129, rho=rho) > iome.iome_clip_count(128, rho=rho)
    # eq. (8.B): equal sigma, the radius part is C_P sqrt(d * 4) / (C_t d); the ratio is that over sqrt(3/4)
    sigma = np.ones(32)
    ratio, part = plan.plan_last_step_noise_ratio(sigma, n=4000, rho=0.25, lower=-100.0, upper=100.0)
    assert math.isclose(ratio, part / math.sqrt(0.75), rel_tol=1e-12)
    assert 0.5 < part < 1.5
    with pytest.raises(ValueError, match="sigma"):
        plan.plan_last_step_noise_ratio(np.zeros(4), n=100, rho=1.0, lower=-1.0, upper=1.0)
