"""egmlib.composition: Lemma 2.2 (basic composition) beyond Gaussian mechanisms."""

import math

import numpy as np
import pytest

from egmlib import composition as co
from egmlib.calibration import privacy_profile


def test_hockey_stick_randomized_response():
    p, q = co.randomized_response(1.0)
    assert co.hockey_stick(p, q=q, eps=1.0) == pytest.approx(0.0, abs=1e-15)   # rounding only
    assert co.hockey_stick(p, q=q, eps=0.0) == pytest.approx(0.5 * np.abs(p - q).sum(), rel=1e-15)
    assert co.hockey_stick(p, q=q, eps=0.999) > 0.0


@pytest.mark.parametrize("k", [1, 3, 6])
def test_randomized_response_composition_matches_enumeration(k):
    p1, q1 = co.randomized_response(0.4)
    p, q = np.ones(1), np.ones(1)
    for _ in range(k):
        p, q = np.outer(p, p1).ravel(), np.outer(q, q1).ravel()
    for eps in np.linspace(0.0, 0.4 * k + 0.5, 9):
        assert co.randomized_response_composition(0.4, k=k, eps=eps) == pytest.approx(
            co.hockey_stick(p, q=q, eps=eps), abs=1e-15)


@pytest.mark.parametrize("k", [2, 10, 50])
def test_basic_composition_is_tight_for_pure_dp(k):
    eps0 = 0.3
    assert co.randomized_response_composition(eps0, k=k, eps=k * eps0) == 0.0
    assert co.randomized_response_composition(eps0, k=k, eps=k * eps0 - 1e-6) > 0.0


def test_gaussian_loss_profile_is_eq2():
    for sigma, eps in [(4.22468, 1.0), (0.5, 3.0), (30.0, 0.1)]:
        assert co.gaussian_loss_profile(eps, m=1 / sigma) == pytest.approx(
            privacy_profile(sigma, eps=eps), rel=1e-10)


def test_laplace_gaussian_against_simulation():
    rng = np.random.default_rng(20230120)
    eL, s, eps, N = 0.5, 2.0, 1.2, 400_000
    y = rng.laplace(0.0, 1 / eL, N)
    z = rng.normal(0.0, s, N)
    loss = (np.abs(y - 1) - np.abs(y)) * eL + ((z - 1) ** 2 - z**2) / (2 * s * s)
    h = np.maximum(0.0, 1.0 - np.exp(eps - loss))
    exact = co.laplace_gaussian_delta(eps, laplace_eps=eL, sigma=s)
    assert abs(h.mean() - exact) < 4 * h.std() / math.sqrt(N)


@pytest.mark.parametrize("eL,s", [(0.1, 1.0), (0.5, 4.0), (2.0, 0.7)])
def test_lemma_2_2_for_laplace_and_gaussian(eL, s):
    for eG in (0.1, 0.5, 1.0, 3.0):
        joint = co.laplace_gaussian_delta(eL + eG, laplace_eps=eL, sigma=s)
        assert joint <= privacy_profile(s, eps=eG) * (1 + 1e-9)
        assert joint < privacy_profile(s, eps=eG)      # and strictly: the bound is loose


def test_laplace_term_vanishes():
    assert co.laplace_gaussian_delta(1.0, laplace_eps=1e-9, sigma=3.0) == pytest.approx(
        privacy_profile(3.0, eps=1.0), rel=1e-6)


def test_validation():
    with pytest.raises(ValueError, match="q must have length"):
        co.hockey_stick([0.5, 0.5], q=[1.0], eps=0.0)
    with pytest.raises(ValueError, match="p must be a probability vector"):
        co.hockey_stick([0.5, 0.6], q=[0.5, 0.5], eps=0.0)
    with pytest.raises(TypeError, match="eps"):
        co.hockey_stick([0.5, 0.5], q=[0.5, 0.5], eps="1")
    with pytest.raises(ValueError, match="eps0"):
        co.randomized_response(0.0)
    with pytest.raises(ValueError, match="eps must be finite"):
        co.laplace_gaussian_delta(math.inf, laplace_eps=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="k must be an integer"):
        co.randomized_response_composition(0.5, k=0, eps=1.0)
    with pytest.raises(ValueError, match="laplace_eps must be <= 1000"):
        co.laplace_gaussian_delta(1.0, laplace_eps=1e4, sigma=1.0)
    with pytest.raises(ValueError, match="t must be finite"):
        co.gaussian_loss_profile(math.nan, m=1.0)


def test_hockey_stick_at_huge_eps():
    """e^eps overflows: only the outputs impossible under q count."""
    assert co.hockey_stick([0.5, 0.5, 0.0], q=[0.0, 0.5, 0.5], eps=1e308) == 0.5
    p, q = co.randomized_response(1.0)
    assert co.hockey_stick(p, q=q, eps=800.0) == 0.0
