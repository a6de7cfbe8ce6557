"""Tests of egmbook.clipping_error: the error of a clipped noisy sum and the best p_C.

What is checked, and why it could fail:
- the radii: P(clip) of the model row is p exactly (gchisq.sf), for both methods;
- the importance-sampling model: its clipping probability matches the exact p_C
  within 5 SE from p = 1e-8 to 0.9 (a wrong tilt or likelihood ratio shifts it),
  with small relative SE at tiny p (the point of the tilt), and tilted = untilted;
- the baseline's E||D||^2: model vs the quadrature of gchisq.sf within 5 SE, and
  the quadrature vs an independent integral over the chi density (equal sigmas);
- the centre term: ||E D||^2 is exactly 0 at zero offset and, with an offset, the whole
  decomposition noise + n E||D||^2 + n (n-1) ||E D||^2 agrees with a direct simulation
  through both mechanisms within 5 SE;
- the model's accuracy at cells of chapter 7's offset table: within 4 SE of 200 000 pairs of
  rows clipped by the definition, with its own SE at most 0.1 % of the error (a fixed 4000 draws);
- the free optimum over the radius (optimal_radius): a closed-form minimiser found to
  its tolerance with a bracket around it, a minimum at C = 0 accepted, and a minimum at
  the upper end of the search refused (the artefact of chapter 7's first p_C grid);
  the optimum of the real error model against a dense scan of radii; the clipping
  probability at a radius inverts the radii (clipping_log10_probability);
- validation of every public function.
(The simulation helpers themselves are tested in test_error_simulation.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from egmbook.clipping_error import (
    RowClipModel,
    RowDraws,
    baseline_clip_moment_exact,
    clipping_log10_probability,
    expected_error,
    noise_error_at_radius,
    optimal_radius,
    row_clip_moments,
)
from egmbook.error_simulation import SimulationRun, mean_ci, simulate_errors
from egmbook.experiments import clipping_radii, zipf_sigmas
from egmlib import calibration, gchisq, scaling

EPS, DELTA = 1.0, 1e-6
S_OPT = calibration.sigma_opt(eps=EPS, delta=DELTA)


@pytest.fixture(scope="module")
def Z():
    return np.random.default_rng(100).standard_normal((40_000, 8))


# --------------------------------------------------------------------------- #
# radii and noise
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("p", [1e-9, 1e-3, 0.5])
def test_radii_have_exact_tail_probability(p):
    sigma = zipf_sigmas(8, alpha=1.5)
    Cn, Ct, _, _ = clipping_radii(sigma, p=p)
    w_t = sigma / sigma.sum()
    smax = sigma.max()
    np.testing.assert_allclose(gchisq.sf(Ct**2, w=w_t), p, rtol=1e-9)
    np.testing.assert_allclose(gchisq.sf((Cn / smax) ** 2, w=(sigma / smax) ** 2), p, rtol=1e-9)
    Cn_a, Ct_a, _, _ = clipping_radii(sigma, p=[p, 0.7])  # vectorised
    assert Ct_a[0] == Ct and Cn_a[0] == Cn


def test_noise_error_is_eq24_and_eq5():
    sigma = zipf_sigmas(8, alpha=1.5)
    C = 1.7
    np.testing.assert_allclose(noise_error_at_radius("alg3", sigma=sigma, C=C, sigma_opt=S_OPT),
                               (2 * C * S_OPT * sigma.sum()) ** 2, rtol=1e-12)
    np.testing.assert_allclose(noise_error_at_radius("base", sigma=sigma, C=C, sigma_opt=S_OPT),
                               8 * (2 * C * S_OPT) ** 2, rtol=1e-12)
    assert noise_error_at_radius("base", sigma=sigma, C=0.0, sigma_opt=S_OPT) == 0.0


# --------------------------------------------------------------------------- #
# the per-row model
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("method", ["alg3", "base"])
def test_model_clipping_probability_matches_exact_p(Z, method):
    """P(||u|| > C) from the model, with the exact radius at p: within 5 SE of p, and
    with relative SE below 5% even at p = 1e-8 (exponential tilting)."""
    sigma = zipf_sigmas(8, alpha=2.0)
    for p in (1e-8, 1e-4, 0.05, 0.5, 0.9):
        r = row_clip_moments(Z, method=method, C=clipping_radii(sigma, p=p).of(method), sigma_data=sigma)
        assert abs(r.pclip - p) <= 5 * r.pclip_se, (p, r.pclip, r.pclip_se)
        if p <= 0.05:
            assert r.theta > 0 and r.pclip_se < 0.05 * p
        assert r.m2 == 0.0 and r.m2_se == 0.0  # exact centre: no centre term


def test_tilt_does_not_change_the_estimate(Z):
    """Tilted and plain Monte Carlo estimate the same E||D||^2 (p = 0.01)."""
    sigma = zipf_sigmas(8, alpha=1.0)
    C = clipping_radii(sigma, p=0.01).Ct
    a = row_clip_moments(Z, method="alg3", C=C, sigma_data=sigma)
    b = row_clip_moments(Z, method="alg3", C=C, sigma_data=sigma, tilt=False)
    assert a.theta > 0 and b.theta == 0
    assert abs(a.e2 - b.e2) <= 5 * math.hypot(a.e2_se, b.e2_se)
    assert a.e2_se < b.e2_se  # the point of the tilt


def test_baseline_moment_model_vs_quadrature(Z):
    """Baseline E||D||^2 = E (R - C_n)_+^2: importance sampling vs the exact integral of
    gchisq.sf, within 5 SE, from p = 1e-7 to 0.5."""
    sigma = zipf_sigmas(8, alpha=1.0)
    ps = [1e-7, 1e-4, 1e-2, 0.5]
    exact = baseline_clip_moment_exact(sigma, p=ps)
    for p, e in zip(ps, exact, strict=True):
        Cn = clipping_radii(sigma, p=p).Cn
        r = row_clip_moments(Z, method="base", C=Cn, sigma_data=sigma)
        assert abs(r.e2 - e) <= 5 * r.e2_se, (p, r.e2, e, r.e2_se)
    assert baseline_clip_moment_exact(sigma, p=1e-4) == exact[1]


@pytest.mark.parametrize("d", [2, 5])
def test_quadrature_vs_chi_density(d):
    """Equal sigmas: R / sigma ~ chi_d, so E (R - C)_+^2 = int_C (r - C)^2 f(r) dr with
    scipy's chi density (no gchisq involved)."""
    s = 0.7
    for p in (1e-6, 0.1):
        C = s * stats.chi(d).isf(p)
        ref, _ = integrate.quad(lambda r, C=C: (r - C) ** 2 * stats.chi(d, scale=s).pdf(r), C, np.inf,
                                epsabs=0, epsrel=1e-12)
        np.testing.assert_allclose(baseline_clip_moment_exact(np.full(d, s), p=p), ref, rtol=1e-9)


def test_antithetic_pairs_give_zero_centre_term_at_zero_offset(Z):
    sigma = zipf_sigmas(8, alpha=1.0)
    r = row_clip_moments(Z, method="alg3", C=0.5, sigma_data=sigma, offset=np.zeros(8))
    assert r.m2 == 0.0 or abs(r.m2) < 1e-30
    r2 = row_clip_moments(Z, method="alg3", C=0.5, sigma_data=sigma, offset=0.1 * sigma)
    assert r2.m2 > 10 * r2.m2_se > 0


@pytest.mark.parametrize("method", ["alg3", "base"])
def test_decomposition_vs_direct_simulation(Z, method):
    """Model noise + n E||D||^2 + n(n-1)||E D||^2 vs the mean squared error of the
    mechanisms themselves on 400 datasets (d = 8, n = 100, p_C = 0.3, centre off by
    0.3 sigma_j, so all three terms matter), within 5 combined SE."""
    d, n, p, reps = 8, 100, 0.3, 400
    sigma = zipf_sigmas(d, alpha=1.0)
    off = 0.3 * sigma
    C = clipping_radii(sigma, p=p).of(method)
    mom = row_clip_moments(Z, method=method, C=C, sigma_data=sigma, offset=off)
    noise = noise_error_at_radius(method, sigma=sigma, C=C, sigma_opt=S_OPT)
    model = expected_error(noise, e2=mom.e2, m2=mom.m2, n=n)
    assert n * (n - 1) * mom.m2 > 0.03 * model  # the centre term is not negligible
    (sim,) = simulate_errors(n, sigmas={"s": sigma}, runs=[SimulationRun("s", method, p, off)], reps=reps,
                             rng=np.random.default_rng(101), eps=EPS, delta=DELTA)
    np.testing.assert_allclose(sim.bias2, np.sum(sim.bias_vec**2, axis=1), rtol=1e-12)
    m, se, _ = mean_ci(sim.total2)
    model_se = math.hypot(n * mom.e2_se, n * (n - 1) * mom.m2_se)
    assert abs(m - model) <= 5 * math.hypot(se, model_se), (m, model, se, model_se)
    mb, seb, _ = mean_ci(sim.bias2)  # the clipping part alone
    assert abs(mb - (n * mom.e2 + n * (n - 1) * mom.m2)) <= 5 * math.hypot(seb, model_se)
    mn, sen, _ = mean_ci(sim.noise2)  # and the noise part: eq. (24) / (5)
    assert abs(mn - noise) <= 5 * sen


def _direct_totals(sigma, *, method, C, offset, n, pairs, rng, chunk=50_000):
    """The noise-free part of the error, n E||D||^2 + n (n - 1) ||E D||^2, and its standard error, from
    rows clipped by the definition: ``pairs`` plain draws z, each with its mirror -z (antithetic
    pairs; no tilt, no conditioning, no identity)."""
    d = len(sigma)
    b = scaling.algorithm3_scaling(sigma) if method == "alg3" else np.ones(d)

    def loss(y):  # D = clip(x) - x for rows y = x - mu_hat
        r = np.linalg.norm(y * b, axis=1)
        return -np.where(r > C, 1.0 - C / np.maximum(r, 1e-300), 0.0)[:, None] * y

    sq_parts, d_parts = [], []
    for start in range(0, pairs, chunk):
        z = rng.standard_normal((min(chunk, pairs - start), d)) * sigma
        D1, D2 = loss(z - offset), loss(-z - offset)
        sq_parts.append(0.5 * (np.einsum("ij,ij->i", D1, D1) + np.einsum("ij,ij->i", D2, D2)))
        d_parts.append(0.5 * (D1 + D2))
    sq, D = np.concatenate(sq_parts), np.concatenate(d_parts)
    mean_d = D.mean(axis=0)
    m2 = (float(D.sum(axis=0) @ D.sum(axis=0)) - float(np.einsum("ij,ij->", D, D))) / (pairs * (pairs - 1.0))
    contrib = n * sq + 2.0 * n * (n - 1.0) * (D @ mean_d)  # a pair's share, to first order (delta method)
    return n * float(sq.mean()) + n * (n - 1.0) * m2, float(contrib.std(ddof=1) / math.sqrt(pairs))


@pytest.mark.parametrize(("d", "alpha", "n", "method", "shape", "p", "pairs"), [
    (100, 2.0, 10**4, "base", "iso", 0.22, 200_000),   # the baseline's optimum with an isotropic offset, chapter 7
    (100, 1.0, 10**4, "alg3", "prop", 0.05, 300_000),  # the centre term is a sixth of the error
    (10, 2.0, 10**5, "base", "iso", 0.1, 5_000_000),   # the centre term is nearly all of it
])
def test_model_agrees_with_plain_rows_at_chapter_cells(d, alpha, n, method, shape, p, pairs):
    """The per-row model (4000 draws: conditioning, tilt, size-biasing identity) against antithetic
    pairs of rows clipped by the definition, at cells of chapter 7's offset table (offset 0.1 sigma_j or
    0.1 ||sigma|| / sqrt(d) in every coordinate): within 4 combined standard errors. The model's own
    standard error is at most 0.35 % of the error (chapter 7's tables are stated with at most 0.26 %),
    and the plain rows' too, so that an error of 1.5 %, the size of the per-row model's error before
    conditioning, would fail. Plain rows estimate the centre term n (n - 1) ||E D||^2 poorly when few
    rows are clipped (its relative error is twice that of E D), hence the larger samples where it
    dominates."""
    sigma = zipf_sigmas(d, alpha=alpha)
    off = 0.1 * sigma if shape == "prop" else np.full(d, 0.1 * np.linalg.norm(sigma) / math.sqrt(d))
    C = float(clipping_radii(sigma, p=p).of(method))
    noise = noise_error_at_radius(method, sigma=sigma, C=C, sigma_opt=S_OPT)
    r = row_clip_moments(np.random.default_rng(7).standard_normal((4000, d)), method=method, C=C, sigma_data=sigma,
                         offset=off)
    model, model_se = n * r.e2 + n * (n - 1) * r.m2, math.hypot(n * r.e2_se, n * (n - 1) * r.m2_se)
    direct, direct_se = _direct_totals(sigma, method=method, C=C, offset=off, n=n, pairs=pairs,
                                       rng=np.random.default_rng(8))
    total = noise + direct
    assert n * (n - 1) * r.m2 > 0.15 * total  # the centre term matters
    assert model_se <= 3.5e-3 * total, (model_se / total)
    assert direct_se <= 3.5e-3 * total, (direct_se / total)
    assert abs(model - direct) <= 4 * math.hypot(model_se, direct_se), (model / total, direct / total)


def test_model_object_shares_draws_and_matches_the_function(Z):
    """RowClipModel over RowDraws: one model evaluates many radii, and its moments are those of
    row_clip_moments with the same draws (bit for bit)."""
    sigma = zipf_sigmas(8, alpha=1.0)
    draws = RowDraws(Z)
    for method in ("alg3", "base"):
        model = RowClipModel(draws, method=method, sigma_data=sigma, offset=0.2 * sigma)
        for C in (0.0, 0.4, 1.5):
            assert model.moments(C) == row_clip_moments(Z, method=method, C=C, sigma_data=sigma, offset=0.2 * sigma)
    with pytest.raises(ValueError, match="Z must have at least 2 rows"):
        RowDraws(Z[:1])


def test_top_coordinate_splines_match_the_quadrature():
    """The splines of the exactly integrated coordinate against its quadrature, below 1e-7 of the scale
    (of 1e-6 where the values themselves are smaller)."""
    from egmbook.clipping_error import _top_coordinate_integrals, _TopCoordinate

    s = np.concatenate([np.random.default_rng(4).uniform(0.0, 4.0, 3000), [0.6 - 1e-9, 0.6, 0.6 + 1e-9]])
    for mean, var, C in ((0.02, 0.37, 0.6**0.5), (0.3, 0.01, 0.5), (0.0, 1e-4, 2.0), (-0.05, 0.13, 1.5)):
        top = _TopCoordinate(mean=mean, var=var, C=C, s_max=4.0)
        got, ref = top(s), _top_coordinate_integrals(s, mean=mean, var=var, C=C)
        for field in ("p", "f", "f2", "f2u2", "fu"):
            a, b = getattr(got, field), getattr(ref, field)
            assert np.max(np.abs(a - b)) <= 1e-7 * max(np.max(np.abs(b)), 1e-6), (mean, var, C, field)
        np.testing.assert_allclose(top.shrink(s), ref.f, atol=1e-7)


# --------------------------------------------------------------------------- #
# the optimum over p_C
# --------------------------------------------------------------------------- #
def test_optimal_radius_finds_closed_form_minimum():
    """noise A C^2 plus clipping B/C: the minimum is at C* = (B / 2A)^(1/3)."""
    A, B = 3.0, 0.5
    o = optimal_radius(lambda C: A * C * C + B / max(C, 1e-300), C_lo=1e-4, C_hi=1e4)
    c_star = (B / (2 * A)) ** (1 / 3)
    assert abs(o.C / c_star - 1) < 1e-4
    np.testing.assert_allclose(o.value, A * c_star**2 + B / c_star, rtol=1e-8)
    assert o.C_below < o.C < o.C_above < o.C_max == 1e4
    assert o.value <= o.value_below and o.value <= o.value_above
    assert o.evaluations < 80


def test_optimal_radius_at_zero_and_at_the_edge():
    zero = optimal_radius(lambda C: 1.0 + C, C_lo=1e-3, C_hi=10.0)      # increasing: the data-free release
    assert zero.C == 0.0 and zero.value == 1.0 and zero.C_above > 0
    near = optimal_radius(lambda C: (C - 2e-4) ** 2, C_lo=1e-3, C_hi=10.0)   # between 0 and C_lo: refined linearly
    assert abs(near.C - 2e-4) < 1e-8 and near.C_below == 0.0
    with pytest.raises(ValueError, match="the error still falls at the largest radius searched, C_hi=10.0"):
        optimal_radius(lambda C: 1.0 / (1.0 + C), C_lo=1e-3, C_hi=10.0)
    with pytest.raises(ValueError, match="error must return a finite number"):
        optimal_radius(lambda C: math.nan, C_lo=1e-3, C_hi=10.0)
    with pytest.raises(ValueError, match="C_hi must be larger than C_lo"):
        optimal_radius(lambda C: C, C_lo=1.0, C_hi=1.0)
    with pytest.raises(TypeError, match="error must be callable"):
        optimal_radius(3.0, C_lo=1e-3, C_hi=10.0)


def test_optimal_radius_of_the_error_model_against_a_dense_scan(Z):
    """The exact-centre error of Algorithm 3 at n = 1e4 (d = 8): the free optimum is at least as
    good as every radius of a dense scan, and lies inside it."""
    sigma = zipf_sigmas(8, alpha=1.5)
    n = 10**4

    def error(C):
        return noise_error_at_radius("alg3", sigma=sigma, C=C, sigma_opt=S_OPT) + n * row_clip_moments(
            Z[:4000], method="alg3", C=C, sigma_data=sigma).e2

    o = optimal_radius(error, C_lo=1e-3, C_hi=1e3)
    scan = np.linspace(0.5 * o.C, 2.0 * o.C, 61)
    assert o.value <= min(error(c) for c in scan) * (1 + 1e-9)
    assert 0 < o.C_below < o.C < o.C_above
    p = 10 ** clipping_log10_probability("alg3", sigma=sigma, C=o.C)
    assert 1e-4 < p < 0.5                       # a tuned p_C, far above 1/n


@pytest.mark.parametrize("method", ["alg3", "base"])
def test_clipping_probability_inverts_the_radii(method):
    sigma = zipf_sigmas(8, alpha=1.5)
    for p in (1e-12, 1e-3, 0.5):
        C = float(clipping_radii(sigma, p=p).of(method))
        assert abs(clipping_log10_probability(method, sigma=sigma, C=C) - math.log10(p)) < 1e-8
    assert clipping_log10_probability(method, sigma=sigma, C=0.0) == 0.0
    assert clipping_log10_probability(method, sigma=sigma, C=1e3) < -1e4    # far below the float range


# --------------------------------------------------------------------------- #
# helpers and validation
# --------------------------------------------------------------------------- #
def test_expected_error_and_validation():
    assert expected_error(np.array([1.0, 2.0]), e2=0.5, m2=0.0, n=4).tolist() == [3.0, 4.0]
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        expected_error(1.0, e2=0.5, m2=0.0, n=0)
    assert expected_error(1.0, e2=0.5, m2=-0.01, n=3) == pytest.approx(2.44)  # an unbiased m2 may be < 0
    with pytest.raises(ValueError, match="m2 is too negative"):
        expected_error(1.0, e2=0.5, m2=-1.0, n=3)
    with pytest.raises(ValueError, match="e2 must be >= 0"):
        expected_error(1.0, e2=-0.5, m2=0.0, n=3)
    with pytest.raises(ValueError, match="noise must be finite"):
        expected_error(math.nan, e2=0.5, m2=0.0, n=3)


def test_validation_messages(Z):
    s = np.ones(8)
    with pytest.raises(ValueError, match=r"method must be one of \['alg3', 'base'\]"):
        row_clip_moments(Z, method="gauss", C=1.0, sigma_data=s)
    with pytest.raises(TypeError, match="method must be one of the strings"):
        row_clip_moments(Z, method=None, C=1.0, sigma_data=s)
    with pytest.raises(ValueError, match="Z must be two-dimensional"):
        row_clip_moments(Z[0], method="base", C=1.0, sigma_data=s)
    with pytest.raises(ValueError, match="C must be finite and >= 0"):
        row_clip_moments(Z, method="base", C=-1.0, sigma_data=s)
    with pytest.raises(ValueError, match="sigma_data must have length d=8"):
        row_clip_moments(Z, method="base", C=1.0, sigma_data=np.ones(3))
    with pytest.raises(ValueError, match="sigma_mech must be > 0 entrywise"):
        row_clip_moments(Z, method="alg3", C=1.0, sigma_data=s, sigma_mech=np.r_[0.0, np.ones(7)])
    with pytest.raises(ValueError, match="offset must be finite"):
        row_clip_moments(Z, method="base", C=1.0, sigma_data=s, offset=np.full(8, np.inf))
    with pytest.raises(TypeError, match="tilt must be True or False"):
        row_clip_moments(Z, method="base", C=1.0, sigma_data=s, tilt="yes")
    with pytest.raises(ValueError, match="sigma_opt must be finite and > 0"):
        noise_error_at_radius("base", sigma=s, C=1.0, sigma_opt=0.0)
    with pytest.raises(ValueError, match=r"p must lie in the open interval \(0, 1\)"):
        baseline_clip_moment_exact(s, p=1.0)
    with pytest.raises(ValueError, match="per_decade must be"):
        optimal_radius(lambda C: C, C_lo=1e-3, C_hi=10.0, per_decade=1)
    with pytest.raises(ValueError, match="rtol must be < 0.1"):
        optimal_radius(lambda C: C, C_lo=1e-3, C_hi=10.0, rtol=0.5)
    with pytest.raises(ValueError, match="offset overflows|clipping moments overflow"):
        row_clip_moments(Z, method="base", C=1.0, sigma_data=s, offset=np.full(8, 1e308))
