"""Privacy and path choice of ESM (egmlib.peers.algorithm3_robust) and the arms registry.

Each private step of ESM is checked on adversarial substitution neighbours (one row replaced
by a row at the box's corner, at the centre, or by a copy of another row): the sensitivity it
is calibrated for is never exceeded, the exponential mechanism's log-probability ratio never
exceeds epsilon, and the budget sums to rho on every path.  The choice of path reads public
values and released ones only.  The proofs are in chapters/09a_offmodel_privacy.md.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy import stats

from egmlib import clipping, gchisq
from egmlib.clipping import clipped_sum
from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import budget as _budget
from egmlib.peers import coinpress as cp
from egmlib.peers import path_errors as pe
from egmlib.peers import scales
from egmlib.peers.arms import ARMS, GIVEN, Arm, nothing_known
from egmlib.peers.hadamard import random_hadamard
from egmlib.peers.iome import IOME_SHARES, iome_clip_count, iome_mean
from egmlib.peers.scales import paired_scales


def _data(n=400, d=6, seed=0):
    rng = np.random.default_rng(seed)
    return 3.0 + np.array([5.0, 2.0, 1.0, 0.5, 0.2, 0.1])[:d] * rng.standard_normal((n, d))


def _neighbours(X, lower, upper):
    """Adversarial substitution neighbours of X: row i replaced by a corner of the box,
    the opposite corner, the centre of the box, a copy of another row."""
    d = X.shape[1]
    out = []
    for i in (0, X.shape[0] // 2, X.shape[0] - 1):
        for row in (np.full(d, upper), np.full(d, lower), np.full(d, 0.5 * (lower + upper)),
                    X[(i + 1) % X.shape[0]], np.where(np.arange(d) % 2 == 0, upper, lower)):
            Y = X.copy()
            Y[i] = row
            out.append(Y)
    return out


# ---------------------------------------------------------------------------------------
# budget
# ---------------------------------------------------------------------------------------
def test_shares_sum_to_one_and_are_named():
    assert math.isclose(math.fsum(ar.SHARES.values()), 1.0, abs_tol=1e-15)
    assert set(ar.SHARES) == {"scale", "centre", "radius", "noise"}
    assert math.isclose(math.fsum(ar.PLAN_LAST_STEP_SHARES.values()), 1.0, abs_tol=1e-15)
    assert ar.PLAN_LAST_STEP_SHARES["scale"] == ar.SHARES["scale"]
    assert ar.PLAN_LAST_STEP_SHARES["centre"] == ar.SHARES["centre"]


@pytest.mark.parametrize("rho", [1 / 16, 0.25, 1.0])
def test_budget_of_each_release_sums_to_rho(rho):
    X = _data()
    runs = [ar.algorithm3_robust, ar.plan_last_step_private_inputs]
    runs += [functools.partial(ar.algorithm3_robust, path=p, scales_first=f) for p in ar.PATHS for f in (False, True)]
    for f in runs:
        r = f(X, rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(1))
        assert math.isclose(math.fsum(r.budget.parts.values()), rho, rel_tol=1e-12)
        assert r.budget.total == rho and r.path in ar.PATHS
        assert np.all(np.isfinite(r.estimate))


# ---------------------------------------------------------------------------------------
# scale step: one substituted row changes at most one row of the paired differences
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,d", [(101, 6), (3000, 6), (2100, 300)])
def test_block_pairing_puts_every_row_in_at_most_one_pair(n, d):
    runs = scales._pairing(n, d, np.random.default_rng(2))
    used = np.zeros(n, dtype=int)
    for a, b, k in runs:
        used[a:a + k] += 1
        used[b:b + k] += 1
    B = scales._pair_blocks(n, d)
    assert used.max() == 1 and used.sum() >= n - 2 * B - 1
    assert B == max(1, min(clipping.chunk_rows(d), n // scales.PAIR_BLOCK_SHARE))


def test_pairing_changes_one_row_of_differences_under_substitution():
    for n in (101, 3000):
        X = _data(n=n)
        for Y in _neighbours(X, -50.0, 50.0):
            V, nv = scales._paired_rows(X, np.random.default_rng(3), np.float32)
            W, nw = scales._paired_rows(Y, np.random.default_rng(3), np.float32)
            assert np.any(V != W, axis=1).sum() <= 1 and np.sum(nv != nw) <= 1
            # the norms are those the clipped sum computes from the stored rows
            assert np.array_equal(nv, clipping.transformed_norms(V))


@pytest.mark.parametrize("lower,upper", [(0.0, 1.0), (-0.1, 0.3), (1e6 - 0.7, 1e6 + 0.3), (-3e150, 1e150),
                                         (-1e-3, 7e-3)])
def test_paired_rows_stay_within_the_public_universe_without_a_cap(lower, upper):
    """Rows at the box's corners, and random rows clamped to it: every v_ij is at most
    (u - l)^2 / 2 as computed in float64, by monotone rounding alone (the scale step's universe)."""
    rng = np.random.default_rng(9)
    n, d = 400, 7
    X = np.where(rng.random((n, d)) < 0.5, lower, upper)
    X[::3] = np.clip(lower + (upper - lower) * rng.random((len(X[::3]), d)), lower, upper)
    w = upper - lower
    V, _ = scales._paired_rows(X, np.random.default_rng(1), np.float64)
    assert V.max() <= 0.5 * w * w and V.max() >= 0.25 * w * w


def _moment_sums(X, tau, lower, upper):
    """The second moments' clipped sum and the logarithms' first-step statistic, as the scale step
    computes them (egmlib.peers.scales._moments_and_logs)."""
    w = upper - lower
    V, norms = scales._paired_rows(X, np.random.default_rng(4), np.float32)
    lo, hi = scales._log_range(w, scales.PAIRED_LOG_FLOOR)
    centre = np.full(X.shape[1], 0.5 * (lo + hi) / scales.LOG_CHI2_1_SD)
    total, deviation, spread = scales._moments_and_logs(V, norms, tau, lo, 0.5 * w * w, centre)
    return total, deviation, spread, V.shape[0]


@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_second_moments_sum_moves_at_most_its_sensitivity(offset):
    X = _data(n=600) + offset
    lower, upper = offset - 50.0, offset + 50.0
    tau = 30.0
    base, dev, _, m = _moment_sums(X, tau, lower, upper)
    bound = clipping.sum_sensitivity(tau, n=m, d=X.shape[1])
    worst = max(np.linalg.norm(_moment_sums(Y, tau, lower, upper)[0] - base) for Y in _neighbours(X, lower, upper))
    assert 0.9 * tau < worst <= bound
    # the logarithms: one row of z moves, inside the public log range
    lo, hi = scales._log_range(upper - lower, scales.PAIRED_LOG_FLOOR)
    half = math.sqrt(X.shape[1]) * (hi - lo + 2 * abs(scales.LOG_CHI2_1_MEAN)) / scales.LOG_CHI2_1_SD
    for Y in _neighbours(X, lower, upper):
        assert np.linalg.norm(_moment_sums(Y, tau, lower, upper)[1] - dev) <= half


def test_mostly_zero_columns_do_not_collapse_the_scales():
    """Columns with 80 to 99 % zeros: the log scales of the paired differences collapse towards
    the floor, the second moments and their total do not."""
    rng = np.random.default_rng(12)
    p = 0.2 * 0.05 ** (np.arange(32) / 31)
    X = (rng.random((20000, 32)) < p) * np.exp(rng.normal(2.0, 1.0, size=(20000, 32)))
    s = paired_scales(X, rho=1 / 8, lower=0.0, upper=1e4, rng=np.random.default_rng(1))
    sd = X.std(axis=0)
    assert np.median(s.log_scales / sd) < 0.05
    assert 0.2 < np.median(s.sigma_hat / sd) < 1.5 and np.min(s.sigma_hat / sd) > 0.05


def test_floor_and_maximum_are_functions_of_the_releases():
    """The released scales are the larger of the shrunk log scales and the significant second
    moments, floored at a share of the level the releases vouch for: recomputed from the record."""
    X = _data(n=3000)
    s = paired_scales(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(2))
    z = scales.second_moment_threshold(X.shape[1])
    sig = np.maximum(s.log_scales, np.sqrt(np.maximum(s.variance - z * s.noise_sd, 0.0)))
    z0 = math.sqrt(2 * math.log(1 / scales.PAIRED_LEVEL))
    v_low = max(s.variance.sum() - z0 * math.sqrt(X.shape[1]) * s.noise_sd, 0.0)
    level = max(sig.mean(), math.sqrt(v_low / X.shape[1]))
    assert np.array_equal(s.sigma_hat, np.minimum(np.maximum(sig, scales.PAIRED_FLOOR_SHARE * level), 50.0))


# ---------------------------------------------------------------------------------------
# radius step: the utility has sensitivity 1; the mechanism's privacy loss is <= eps
# ---------------------------------------------------------------------------------------
def _all_neighbour_norms(norms, radii):
    """Neighbours of a vector of norms: each entry replaced by 0, by a value on each
    radius, between radii, and far beyond the grid (every case of the proof)."""
    candidates = np.concatenate([[0.0, 10.0 * radii[-1]], radii,
                                 0.5 * (radii[1:] + radii[:-1]) if radii.size > 1 else []])
    for i in range(norms.shape[0]):
        for v in candidates:
            m = norms.copy()
            m[i] = v
            yield m


@pytest.mark.parametrize("target", [0.0, 1.0, 2.5, 7.0])
def test_radius_utility_has_sensitivity_one(target):
    rng = np.random.default_rng(4)
    radii = np.array([1.0, 1.5, 2.0, 3.0, 5.0])
    norms = np.sort(rng.exponential(2.0, size=12))
    u = ar.radius_utility(norms, radii=radii, target=target)
    worst = 0.0
    for m in _all_neighbour_norms(norms, radii):
        worst = max(worst, float(np.max(np.abs(ar.radius_utility(m, radii=radii, target=target) - u))))
    assert worst <= 1.0
    assert worst == 1.0  # attained: the bound of the lemma is tight


def test_radius_utility_is_zero_from_the_smallest_radius_within_the_target_on():
    norms = np.array([0.5, 1.2, 1.7, 2.5, 4.0])
    radii = np.array([1.0, 2.0, 3.0, 5.0])
    # counts beyond the radii: 4, 2, 1, 0
    assert ar.radius_utility(norms, radii=radii, target=2.0).tolist() == [-2.0, 0.0, 0.0, 0.0]
    assert ar.radius_utility(norms, radii=radii, target=0.5).tolist() == [-3.5, -1.5, -0.5, 0.0]


def test_radius_prior_prefers_the_smallest_radius_within_the_target():
    """Of the radii that clip at most t rows the smallest is the likeliest, and every step up
    divides the probability by e^RADIUS_PRIOR (the public base measure)."""
    norms = np.full(500, 0.99)
    p = ar.radius_probabilities(norms, C0=1.0, C_max=20.0, rho=1.0, d=4, rho_noise=1.0)
    k0 = ar.RADIUS_DOWN
    assert int(np.argmax(p)) == k0
    assert np.allclose(p[k0 + 1:] / p[k0:-1], math.exp(-ar.RADIUS_PRIOR), rtol=1e-12)


@pytest.mark.parametrize("rho", [1e-3, 0.05, 1.0])
def test_radius_mechanism_privacy_loss_at_most_eps_on_adversarial_neighbours(rho):
    rng = np.random.default_rng(5)
    norms = rng.exponential(1.0, size=60)
    C0, C_max = 0.8, 30.0
    kw = dict(C0=C0, C_max=C_max, rho=rho, d=4, rho_noise=0.5)
    p = ar.radius_probabilities(norms, **kw)
    radii = C0 * ar.RADIUS_GRID ** np.arange(-ar.RADIUS_DOWN, p.shape[0] - ar.RADIUS_DOWN)
    eps = math.sqrt(8.0 * rho)
    worst = worst_range = 0.0
    for m in _all_neighbour_norms(norms, radii[::7]):
        q = ar.radius_probabilities(m, **kw)
        loss = np.log(p) - np.log(q)
        worst = max(worst, float(np.max(np.abs(loss))))
        worst_range = max(worst_range, float(loss.max() - loss.min()))  # bounded range
    assert worst <= eps * (1 + 1e-12)
    assert worst_range <= eps * (1 + 1e-12)  # eps-bounded range: rho-zCDP (Cesar and Rogers)
    assert worst > 0.3 * eps  # the neighbours do move the distribution


def test_select_radius_samples_the_stated_distribution():
    rng = np.random.default_rng(6)
    norms = np.concatenate([rng.uniform(0, 1, 40), [1.3, 1.6, 2.5, 4.0]])
    kw = dict(C0=1.0, C_max=3.0, rho=0.02, d=3, rho_noise=1.0)
    p = ar.radius_probabilities(norms, **kw)
    draws = np.array([ar.select_radius(norms, rng=rng, **kw).k + ar.RADIUS_DOWN for _ in range(4000)])
    freq = np.bincount(draws, minlength=p.shape[0]) / draws.shape[0]
    assert np.max(np.abs(freq - p)) < 4.0 * math.sqrt(0.25 / draws.shape[0])


def test_on_the_model_the_radius_step_stays_near_the_model_radius():
    """On Gaussian rows the chosen radius lies between 0.7 and 1.2 times the model radius (k in
    [-4, 2] on the grid 2^(1/8)) and clips few rows."""
    rng = np.random.default_rng(7)
    sigma = np.array([4.0, 2.0, 1.0, 0.5])
    X = 10.0 + sigma * rng.standard_normal((5000, 4))
    rs = [ar.algorithm3_robust(X, rho=0.25, lower=-100.0, upper=100.0, rng=np.random.default_rng(s),
                               path="algorithm3") for s in range(20)]
    assert all(-4 <= r.radius.k <= 2 for r in rs)
    # C_0 clips about one row and the step tolerates t (here 4.7) and prefers small radii: it takes
    # a radius a little below, which clips a few rows more than t (the mechanism's eps is 0.18)
    assert -3 <= np.median([r.radius.k for r in rs]) <= 0
    assert np.median([r.n_clipped for r in rs]) <= 4 * rs[0].radius.target
    assert max(r.n_clipped for r in rs) <= 0.02 * X.shape[0]


def test_off_the_model_the_radius_step_enlarges_the_radius():
    rng = np.random.default_rng(8)
    X = 10.0 + np.exp(2.0 * rng.standard_normal((5000, 4)))  # heavy, skewed
    r = ar.algorithm3_robust(X, rho=0.25, lower=-1e4, upper=1e4, rng=np.random.default_rng(0),
                             path="algorithm3")
    assert r.radius.k > 0 and r.C > r.radius.C0


# ---------------------------------------------------------------------------------------
# noise step: sensitivity 2C of the clipped sum, noise 2C / sqrt(2 rho_noise)
# ---------------------------------------------------------------------------------------
def test_clipped_transformed_sum_moves_at_most_2C_on_adversarial_neighbours():
    X = _data()
    r = ar.algorithm3_robust(X, rho=0.25, lower=-50.0, upper=50.0, rng=np.random.default_rng(2),
                             path="algorithm3")
    assert r.path == "algorithm3"
    b = 1.0 / np.sqrt(r.sigma * r.sigma.sum())
    base = clipped_sum(X, C=r.C, mu_hat=r.centre, b=b).total
    worst = max(np.linalg.norm(clipped_sum(Y, C=r.C, mu_hat=r.centre, b=b).total - base)
                for Y in _neighbours(X, -50.0, 50.0))
    assert worst <= 2.0 * r.C * (1 + 1e-12)
    assert worst > 1.0 * r.C  # a far corner row does move it by more than C


@pytest.mark.parametrize("rho", [1 / 16, 1.0])
def test_noise_is_calibrated_to_2C(rho):
    X = _data()
    r = ar.algorithm3_robust(X, rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(3),
                             path="algorithm3")
    assert r.path == "algorithm3"
    b = 1.0 / np.sqrt(r.sigma * r.sigma.sum())
    s = r.noise_std * X.shape[0] * b  # back in the transformed space, per coordinate of the sum
    expected = 2.0 * r.C / math.sqrt(2.0 * rho * ar.SHARES["noise"])
    assert np.allclose(s, expected, rtol=1e-12)
    assert math.isclose(expected, _budget.gaussian_noise_std(rho * ar.SHARES["noise"],
                                                             sensitivity=2.0 * r.C), rel_tol=1e-12)


def test_release_is_seeded_and_rng_driven():
    X = _data()
    a = ar.algorithm3_robust(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(9))
    b = ar.algorithm3_robust(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(9))
    c = ar.algorithm3_robust(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(10))
    assert np.array_equal(a.estimate, b.estimate)
    assert not np.array_equal(a.estimate, c.estimate)


# ---------------------------------------------------------------------------------------
# the choice of path: public values first, then the released scales only
# ---------------------------------------------------------------------------------------
def test_public_stage_reads_n_d_rho_only():
    """Where the scales cannot be resolved ESM releases IOME with the whole budget and buys no
    scales; the decision is the same for any data of that shape."""
    rng = np.random.default_rng(21)
    for X in (rng.normal(size=(512, 1024)), np.zeros((512, 1024)), 40.0 + rng.normal(size=(512, 1024))):
        r = ar.algorithm3_robust(X, rho=1.0, lower=-50.0, upper=50.0, rng=np.random.default_rng(1))
        assert not ar.scales_resolvable(512, d=1024, rho=1.0)
        assert r.path in ("iome", "centred-iome") and r.sigma is None and r.predicted is None
        assert "scale" not in r.budget.parts
    noise = scales.log_scale_noise(512, d=1024, rho=ar.PAIRED_LOG_SHARE * ar.SHARES["scale"] * 1.0)
    assert noise > ar.SCALE_RESOLUTION


@pytest.mark.parametrize("n,d,rho", [(3000, 6, 0.25), (20000, 16, 1.0), (600, 30, 1.0)])
def test_scale_stage_runs_the_path_its_released_predictions_pick(n, d, rho):
    rng = np.random.default_rng(22)
    X = 5.0 + (d / np.arange(1, d + 1)) ** 0.75 * rng.standard_normal((n, d))
    assert ar.scales_resolvable(n, d=d, rho=rho)
    r = ar.algorithm3_robust(X, rho=rho, lower=-100.0, upper=100.0, rng=np.random.default_rng(3))
    T = np.clip((X + 100.0) / 200.0, 0.0, 1.0)  # ESM computes on the unit box (egmlib.peers.normalise)
    s = paired_scales(T, rho=ar.SHARES["scale"] * rho, lower=0.0, upper=1.0, rng=np.random.default_rng(3))
    again = ar.predict_paths(n, rho=rho, lower=0.0, upper=1.0, scales=s)
    if r.sigma is not None:
        assert np.array_equal(r.sigma, 200.0 * s.sigma_hat)
    assert dict(r.predicted.errors) == {k: 200.0 * v for k, v in again.errors.items()}
    # an IOME path around a coarse centre runs IOME alone where that centre is within IOME's reach
    assert r.path == again.best or (again.best, r.path) == ("centred-iome", "iome")
    assert set(again.errors) == {"algorithm3", "plan", "centred-iome" if ar.coarse_centre(
        n, d=d, rho=(1 - ar.SHARES["scale"]) * rho, lower=0.0, upper=1.0) else "iome"}


def test_predictions_grow_where_the_model_says_they_should():
    sigma = (64 / np.arange(1, 65)) ** 0.75
    kw = dict(lower=-500.0, upper=500.0)
    a = [pe.algorithm3_error(n, sigma=sigma, rho_centre=1 / 32, rho_noise=0.18, **kw) for n in (1000, 10000)]
    i = [pe.iome_error(n, rho=0.25, variances=sigma**2, **kw) for n in (1000, 10000)]
    assert a[1] < a[0] and i[1] < i[0]
    # skewed scales: Algorithm 3's path beats IOME at many rows; equal scales: it does not
    flat = np.ones(64)
    assert a[1] < i[1]
    assert pe.algorithm3_error(10000, sigma=flat, rho_centre=1 / 32, rho_noise=0.18, **kw) > \
        0.9 * pe.iome_error(10000, rho=0.25, variances=flat, **kw)
    # a box far wider than the data costs CoinPress rows: the centre's accuracy falls
    assert pe.coinpress_accuracy(300, d=16, prior_radius=4e4, rho=1 / 32) > \
        10 * pe.coinpress_accuracy(300, d=16, prior_radius=40.0, rho=1 / 32)
    # second moments above the model's raise the prediction, never lower it
    assert pe.algorithm3_error(10000, sigma=sigma, rho_centre=1 / 32, rho_noise=0.18, mismatch=4.0, **kw) > a[1]
    assert pe.algorithm3_error(10000, sigma=sigma, rho_centre=1 / 32, rho_noise=0.18, mismatch=0.5, **kw) == a[1]


@pytest.mark.parametrize("v", [np.ones(8), np.array([2.5]), np.array([1.0, 0.0, 0.0]), (8 / np.arange(1, 9)) ** 0.75,
                               np.full(4096, 1e-4)])
@pytest.mark.parametrize("p", [0.05, 0.2, 0.4])
def test_clipped_excess_matches_the_rows_it_describes(v, p):
    rng = np.random.default_rng(5)
    live = v[v > 0]
    if np.ptp(live) == 0:  # equal variances: the norm's law is a scaled chi, drawn directly
        R = np.sqrt(live[0] * rng.chisquare(live.size, size=200_000))
    else:
        R = np.linalg.norm(rng.standard_normal((200_000, v.size)) * np.sqrt(v), axis=1)
    c = float(np.quantile(R, 1 - p))
    e2, kappa = pe.clipped_excess(v, radius=c)
    # Satterthwaite's law is exact where the variances are equal (here: all but the last case)
    tol = 0.06 if np.ptp(v[v > 0]) == 0 else (0.12 if p > 0.1 else 0.35)  # far in the tail Satterthwaite is rougher
    assert e2 == pytest.approx(np.mean(np.maximum(R - c, 0.0) ** 2), rel=tol)
    assert kappa == pytest.approx(np.mean(np.maximum(1.0 - c / R, 0.0)), rel=tol)
    assert pe.clipped_excess(v, radius=0.0)[1] == pytest.approx(1.0)  # a radius of 0 clips every row to the centre


def test_clipped_excess_names_its_bad_arguments():
    with pytest.raises(ValueError, match="variances"):
        pe.clipped_excess(np.zeros(3), radius=1.0)
    with pytest.raises(ValueError, match="variances"):
        pe.clipped_excess([1.0, -1.0], radius=1.0)
    with pytest.raises(ValueError, match="radius"):
        pe.clipped_excess(np.ones(3), radius=-1.0)
    with pytest.raises(TypeError, match="radius"):
        pe.clipped_excess(np.ones(3), radius="1")


def test_iome_prediction_counts_what_its_clipping_moves_where_rows_are_few():
    """IOME clips about k rows whatever n.  Where k is two fifths of n (n = 200, d = 8, rho = 1) the
    clipped excess adds to the noise, and the prediction meets IOME's median error over 60 runs on
    the model's rows (within 20 %, nearer than the noise alone); where k is a small share of n the
    prediction is the noise's alone."""
    v = np.ones(8)

    def noise_only(n, rho):
        q = float(gchisq.isf(iome_clip_count(8, rho=rho) / n, w=v))
        return pe.ERROR_FACTORS["iome"] * math.sqrt(8) * 2 * math.sqrt(q) / (n * math.sqrt(2 * 0.7425 * rho))

    assert iome_clip_count(8, rho=1.0) / 200 > 0.4
    errors = []
    for run in range(60):
        rng = np.random.default_rng([7, run])
        X = rng.standard_normal((200, 8))
        errors.append(np.linalg.norm(iome_mean(X, rho=1.0, lower=-10.0, upper=10.0, rng=rng).estimate - X.mean(0)))
    measured, predicted = float(np.median(errors)), pe.iome_error(200, rho=1.0, variances=v, lower=-10.0, upper=10.0)
    assert predicted == pytest.approx(measured, rel=0.2)
    assert abs(predicted - measured) < abs(noise_only(200, 1.0) - measured)
    assert pe.iome_error(10**6, rho=0.25, variances=v, lower=-10.0, upper=10.0) == \
        pytest.approx(noise_only(10**6, 0.25), rel=0.01)


def test_iome_prediction_reads_the_second_moments_total_where_the_scales_understate_it():
    """Released scales a tenth of what the second moments say: IOME's prediction follows the second
    moments' total (within 10 % of the prediction from the scales that match them), not the scales'."""
    d = 16
    s = paired_scales(np.random.default_rng(1).uniform(size=(4000, d)), rho=1 / 8, lower=0.0, upper=1.0,
                      rng=np.random.default_rng(2))
    low = dataclasses.replace(s, sigma_hat=0.1 * s.sigma_hat, log_scales=0.1 * s.log_scales)
    a = ar.predict_paths(4000, rho=1.0, lower=0.0, upper=1.0, scales=s).errors
    b = ar.predict_paths(4000, rho=1.0, lower=0.0, upper=1.0, scales=low).errors
    iome = "centred-iome" if "centred-iome" in a else "iome"
    assert b[iome] == pytest.approx(a[iome], rel=0.1)


def test_coarse_centre_and_whole_box_are_chosen_by_public_rules():
    assert ar.whole_box_tracks(10_000, d=64, rho=1 / 16)
    assert ar.coarse_centre(10_000, d=64, rho=1 / 16, lower=0.0, upper=1.0) is None  # the whole box instead
    assert not ar.whole_box_tracks(300, d=16, rho=1 / 16)
    assert ar.coarse_centre(300, d=16, rho=1 / 16, lower=-50.0, upper=50.0) == "anchor"
    assert ar.coarse_centre(20, d=16, rho=1.0, lower=-500.0, upper=500.0) is None
    # the whole box's rule: no wrong turn expected in the N T steps of IOME's centre, from first principles
    for n, d, rho in ((1797, 64, 1 / 16), (200, 8, 1 / 8), (500, 16, 1 / 8), (500, 16, 1 / 16), (100, 2, 1.0)):
        N = 1 << (d - 1).bit_length()
        sigma_c = math.sqrt(N * 20 / (2 * 0.25 * rho))
        q = stats.norm.cdf(-n / (2 * sigma_c))
        assert ar.whole_box_tracks(n, d=d, rho=rho) == (N * 20 * q < math.log(2))
    # the anchor's rule: its noise sd against a quarter of the search interval's width w / sqrt(N)
    for n, d, rho in ((50, 8, 0.25), (500, 64, 1.0), (128, 256, 0.0625)):
        sd = 100.0 / (n * math.sqrt(2 * ar.IOME_ANCHOR_SHARE * rho))
        N = 1 << (d - 1).bit_length()
        assert ar._anchor_pays(n, d, rho, -50.0, 50.0) == (sd <= 0.25 * 100.0 / math.sqrt(N))


@pytest.mark.parametrize("path,n,shift", [("iome", 2000, 0.0), ("iome", 2000, 42.0), ("iome", 20, 0.0),
                                          ("centred-iome", 2000, 0.0), ("centred-iome", 100, 0.0),
                                          ("centred-iome", 2000, 42.0), ("centred-iome", 100, 42.0)])
def test_iome_paths_are_iome_on_the_centred_rows(path, n, shift):
    """IOME alone searches the whole box about its centre where its bisection tracks (n = 2000) and is
    PLAN's IOME in the caller's box otherwise (n = 20); around the anchor, IOME's rotation is drawn
    first, then the anchor, and IOME runs on the rows less the anchor in a box as wide as the caller's
    where the anchor is out of reach of IOME alone (rows near a corner), else IOME alone; the same as
    those calls by hand, bit for bit."""
    X = np.clip(_data(n=n) + shift, -50.0, 50.0)
    r = ar.algorithm3_robust(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(8), path=path)
    g = np.random.default_rng(8)
    T = np.clip((X + 50.0) / 100.0, 0.0, 1.0)  # ESM computes on the unit box (egmlib.peers.normalise)
    back = lambda t: np.clip(-50.0 + 100.0 * t, -50.0, 50.0)  # noqa: E731
    if path == "iome":
        if n == 2000:  # the whole box [-W, W], W = sqrt(d N) / 2 on the unit rows, radius up to the diameter
            assert ar.whole_box_tracks(n, d=6, rho=0.5)
            W = 0.5 * math.sqrt(6 * 8)
            ref = iome_mean(T - 0.5, rho=0.5, lower=-W, upper=W, rng=g, radius_top=math.sqrt(6))
        else:  # IOME in the caller's box, scaled to the unit width; 20 rows: its radius search gets more
            assert not ar.whole_box_tracks(n, d=6, rho=0.5)
            assert ar.iome_shares(n, rho=0.5) is not IOME_SHARES
            ref = iome_mean(T - 0.5, rho=0.5, lower=-0.5, upper=0.5, rng=g, shares=ar.iome_shares(n, rho=0.5))
        assert np.allclose(r.estimate, back(np.clip(ref.estimate + 0.5, 0.0, 1.0)), rtol=0, atol=1e-12)
        assert set(r.budget.parts) == {"iome"} and r.path == "iome"
        return
    share = ar.IOME_ANCHOR_SHARE
    R = random_hadamard(6, rng=g)
    centre = np.full(6, ar._anchor(T, share * 0.5, 0.0, 1.0, g))
    noise = ar._anchor_noise(n, 6, share * 0.5, 0.0, 1.0)
    rotated = R.rotate(centre[None, :] - 0.5)[0]  # IOME alone searches [-1/2, 1/2] / sqrt(N) on the unit rows
    margin = 2.0 * noise * np.abs(R.rotate(np.ones((1, 6)))[0])
    centred = bool(np.any(np.abs(rotated) - 0.5 / math.sqrt(R.padded_dim) > margin))
    assert centred == (shift > 0)  # rows near a corner are out of reach, rows near the middle are not
    rho_iome, whole = (1 - share) * 0.5, False
    tested = ar.reach_test_runs(n, d=6, rho=rho_iome)
    assert tested == (n == 100)  # at 2000 rows the anchor's path is forced where the whole box tracks
    if tested:  # the reach test on the rows IOME would search, then IOME with the rest
        rows = T - centre if centred else T - 0.5
        rho_test = r.budget.parts["reach test"]
        sd = ar._reach_sensitivity(n, 6, -0.5, 0.5) / math.sqrt(2 * rho_test)
        whole = ar._reach_gap(rows, R, -0.5, 0.5) + sd * g.standard_normal() > 0.5
        rho_iome = r.budget.parts["iome"]
        assert rho_test == pytest.approx(ar.REACH_SHARE * (1 - share) * 0.5, rel=1e-12)
    # the anchor and the test are paid from IOME's noise: its centre and radius get the budgets of
    # ESM's IOME with the path's 0.5, the noise the rest
    rho_iome = r.budget.parts["iome"]
    centre_share, threshold_share = (ar.iome_shares(n, rho=0.5)[k] * 0.5 / rho_iome for k in ("centre", "threshold"))
    shares = {"centre": centre_share, "threshold": threshold_share, "noise": 1 - centre_share - threshold_share}
    if whole:
        W = 0.5 * math.sqrt(6 * 8)
        ref = iome_mean(T - 0.5, rho=rho_iome, lower=-W, upper=W, rng=g, radius_top=math.sqrt(6), shares=shares)
        expected = ref.estimate + 0.5
    elif centred:
        ref = iome_mean(T - centre, rho=rho_iome, lower=-0.5, upper=0.5, rng=g, rotation=R, shares=shares)
        expected = centre + ref.estimate
    else:
        ref = iome_mean(T - 0.5, rho=rho_iome, lower=-0.5, upper=0.5, rng=g, rotation=R, shares=shares)
        expected = ref.estimate + 0.5
    whole_split = ar.iome_shares(n, rho=0.5)  # ESM's IOME with the path's 0.5 and nothing paid before
    assert ref.budget["centre"] == pytest.approx(whole_split["centre"] * 0.5, rel=1e-12)
    assert ref.budget["threshold"] == pytest.approx(whole_split["threshold"] * 0.5, rel=1e-12)
    assert ref.budget["noise"] == pytest.approx(rho_iome - (whole_split["centre"] + whole_split["threshold"]) * 0.5,
                                                rel=1e-12)
    assert r.path == ("centred-iome" if centred and not whole else "iome")
    assert np.allclose(r.estimate, back(np.clip(expected, 0.0, 1.0)), rtol=0, atol=1e-12)
    assert set(r.budget.parts) == {"coarse centre", "iome"} | ({"reach test"} if tested else set())


def test_anchor_sum_moves_at_most_its_sensitivity():
    for lower, upper, offset in ((-50.0, 50.0, 0.0), (1e6 - 50.0, 1e6 + 50.0, 1e6)):
        X = _data(n=500) + offset
        base = ar._anchor_sum(X, lower, upper)
        C = 0.5 * X.shape[1] * (upper - lower)
        bound = clipping.sum_sensitivity(C, n=X.shape[0], d=1)
        worst = max(abs(ar._anchor_sum(Y, lower, upper) - base) for Y in _neighbours(X, lower, upper))
        assert 0.4 * C < worst <= bound


def test_centre_first_step_from_the_entry_pass_moves_at_most_its_sensitivity():
    """CoinPress's first step reads sum_i (t_i - 1/2) of the unit rows from ESM's entry pass, whitened:
    the whitened box's ball holds every row, and a substituted row moves it by at most twice that
    ball's radius."""
    X = _data(n=500)
    sigma = np.array([5.0, 2.0, 1.0, 0.5, 0.2, 0.1]) / 100.0  # on the unit box
    R0 = pe._whitened_radius(sigma, 0.0, 1.0)
    T, box, _, colsum = ar._check(X, -50.0, 50.0, np.random.default_rng(0))
    assert (box.lower, box.upper) == (-50.0, 50.0) and np.array_equal(T, np.clip((X + 50.0) / 100.0, 0.0, 1.0))
    first = colsum / sigma
    assert np.allclose(first, ((T - 0.5) / sigma).sum(axis=0), rtol=1e-12, atol=1e-9)
    worst = max(np.linalg.norm(ar._check(Y, -50.0, 50.0, np.random.default_rng(0))[3] / sigma - first)
                for Y in _neighbours(X, -50.0, 50.0))
    assert R0 < worst <= 2 * R0 * (1 + 1e-12)
    # on the unit box itself the entry pass keeps X (no copy) and gives the same sum
    T2, _, _, colsum2 = ar._check(T, 0.0, 1.0, np.random.default_rng(0))
    assert T2 is T and np.array_equal(colsum2, colsum)


def test_iome_paths_reach_a_mean_far_from_the_box_centre():
    """N(40, 1) in [-50, 50]^16 with 300 rows: IOME alone searches its centre within 50 / 4 of the
    box's centre in every rotated coordinate and misses; around a coarse centre it finds it."""
    rng = np.random.default_rng(9)
    X = 40.0 + rng.standard_normal((300, 16))
    kw = dict(rho=1.0, lower=-50.0, upper=50.0)
    errs = [np.linalg.norm(ar.algorithm3_robust(X, rng=np.random.default_rng(s), **kw).estimate - 40.0)
            for s in range(5)]
    iome = [np.linalg.norm(iome_mean(X, rng=np.random.default_rng(s), **kw).estimate - 40.0) for s in range(5)]
    assert np.median(errs) < 1.0 < 30.0 < np.median(iome)


def test_reach_test_measures_the_mean_out_of_iome_reach():
    """The reach test's statistic from first principles: the distance from the rows' rotated mean to
    IOME's search cube [l, u]^N / sqrt(N) (rows clamped to [l, u]^d).  Its sensitivity: 2 h sqrt(d) / n
    on paper, with the rounding of the sum and of the distance (below 1e-3 of it at a million rows),
    not exceeded on neighbours at the box's extremes.  Its rule: a noise sd of at most h / REACH_Z
    where the whole box does not track.  On rows at a corner of the box (N(2, 1) and N(98, 1)
    coordinates in [0, 100]^16, 500 rows, rho = 1/16) it sends IOME over the whole box."""
    rng = np.random.default_rng(4)
    R = random_hadamard(5, rng=rng)
    rows = rng.uniform(-1.0, 1.0, size=(300, 5))
    root = math.sqrt(R.padded_dim)
    mean = R.rotate(np.clip(rows, -0.5, 0.5)).mean(axis=0)
    gap = np.linalg.norm(mean - np.clip(mean, -0.5 / root, 0.5 / root))
    assert ar._reach_gap(rows, R, -0.5, 0.5) == pytest.approx(gap, rel=1e-12, abs=1e-15)
    corner = np.full((300, 5), 0.5)
    far = R.rotate(corner)[0]
    assert ar._reach_gap(corner, R, -0.5, 0.5) == pytest.approx(
        np.linalg.norm(far - np.clip(far, -0.5 / root, 0.5 / root)), rel=1e-12) and gap < 0.5 < 1.0
    for n, d in ((300, 5), (10**6, 4096)):
        paper = 2 * 0.5 * math.sqrt(d) / n
        assert paper < ar._reach_sensitivity(n, d, -0.5, 0.5) < paper * (1 + 1e-3)
    near = np.clip(0.4 + 0.05 * rng.standard_normal((300, 5)), -0.5, 0.5)  # a mean beyond IOME's search
    assert ar._reach_gap(near, R, -0.5, 0.5) > 0.1
    worst = max(abs(ar._reach_gap(Y, R, -0.5, 0.5) - ar._reach_gap(near, R, -0.5, 0.5))
                for Y in _neighbours(near, -0.5, 0.5))
    assert 0.3 * ar._reach_sensitivity(300, 5, -0.5, 0.5) < worst <= ar._reach_sensitivity(300, 5, -0.5, 0.5)
    for n, d, rho in ((500, 16, 1 / 16), (300, 16, 1 / 16), (80, 8, 1.0), (20, 16, 1 / 16), (10_000, 64, 1 / 16)):
        sd = 2 * 0.5 * math.sqrt(d) / n / math.sqrt(2 * ar.REACH_SHARE * rho)
        expected = not ar.whole_box_tracks(n, d=d, rho=rho) and sd <= 0.5 / ar.REACH_Z * (1 - 1e-9)
        assert ar.reach_test_runs(n, d=d, rho=rho) == expected
    X = np.where(np.arange(16) < 8, 2.0, 98.0) + rng.standard_normal((500, 16))
    kw = dict(rho=1 / 16, lower=0.0, upper=100.0)
    assert not ar.scales_resolvable(500, d=16, rho=1 / 16) and ar.reach_test_runs(500, d=16, rho=1 / 16)
    runs = [ar.algorithm3_robust(X, rng=np.random.default_rng(s), **kw) for s in range(5)]
    truth = np.where(np.arange(16) < 8, 2.0, 98.0)
    assert all(r.path == "iome" and "reach test" in r.budget.parts for r in runs)
    assert np.median([np.linalg.norm(r.estimate - truth) for r in runs]) < 5.0


def test_bad_paths_are_refused():
    X = _data()
    kw = dict(rho=1.0, lower=-50.0, upper=50.0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="path"):
        ar.algorithm3_robust(X, path=1, **kw)
    with pytest.raises(ValueError, match="path"):
        ar.algorithm3_robust(X, path="few-rows", **kw)
    with pytest.raises(TypeError, match="scales"):
        ar.predict_paths(100, rho=1.0, lower=-1.0, upper=1.0, scales=np.ones(3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n"):
        ar.scales_resolvable(0, d=3, rho=1.0)


# ---------------------------------------------------------------------------------------
# data that broke chapter 8's pipeline: ties and zero-variance columns
# ---------------------------------------------------------------------------------------
def test_small_integer_data_with_constant_columns_does_not_collapse():
    rng = np.random.default_rng(11)
    X = np.concatenate([rng.poisson(0.3, size=(2000, 6)), np.zeros((2000, 2)),
                        rng.poisson(6.0, size=(2000, 4))], axis=1).astype(float)
    xbar = X.mean(axis=0)
    errs = [np.linalg.norm(ar.algorithm3_robust(X, rho=0.25, lower=-80.0, upper=80.0,
                                                rng=np.random.default_rng(s)).estimate - xbar)
            for s in range(5)]
    # the spread of the data is ||sd|| ~ 4.6; chapter 8's pipeline adds errors of order 10-100
    assert np.median(errs) < 1.0


def test_bad_arguments_name_the_argument():
    X = _data()
    with pytest.raises(ValueError, match="lower"):
        ar.algorithm3_robust(X, rho=1.0, lower=5.0, upper=-5.0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        ar.algorithm3_robust(X, rho=1.0, lower=-5.0, upper=5.0, rng=0)
    with pytest.raises(ValueError, match="rho"):
        ar.algorithm3_robust(X, rho=-1.0, lower=-5.0, upper=5.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="radii"):
        ar.radius_utility([1.0], radii=[2.0, 1.0], target=1.0)
    with pytest.raises(ValueError, match="grid"):
        ar.radius_probabilities([1.0], C0=1.0, C_max=2.0, rho=1.0, d=1, rho_noise=1.0, grid=1.0)
    with pytest.raises(ValueError, match="rho_noise"):
        ar.select_radius([1.0], C0=1.0, C_max=2.0, rho=1.0, d=1, rho_noise=0.0, rng=np.random.default_rng(0))


# ---------------------------------------------------------------------------------------
# CoinPress: the authors' clipping rule
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [16, 512])
def test_coinpress_authors_rule_radii_follow_the_formula(d):
    n, r0, rho, beta = 10000, 1e3, 0.25, 0.01
    sch = cp.coinpress_schedule(n, d=d, prior_radius=r0, rho=rho, beta=beta, clip_rule="authors")
    radii, clips, stds = cp._recursion(n, d, r0, rho, beta, sch.steps, sch.preliminary_share,
                                       "authors")
    g = cp.chi2_radius(d, beta=beta)
    for r, R in zip(radii, clips, strict=True):
        assert math.isclose(R, min(math.sqrt(r * r + 6 * r + g * g), r + g), rel_tol=1e-14)
    shares = cp._shares(sch.steps, sch.preliminary_share)
    for R, s, sh in zip(clips, stds, shares, strict=True):  # noise 2R/n / sqrt(2 rho_s)
        slack = 1 + clipping.rounding_slack(n, d=d)  # the rounding bound of egmlib.clipping
        assert math.isclose(s, 2 * R * slack / n / math.sqrt(2 * sh * rho), rel_tol=1e-14)
    paper = cp._recursion(n, d, r0, rho, beta, sch.steps, sch.preliminary_share, "paper")
    assert stds[-1] < paper[2][-1]  # the authors' radius adds less noise in the last step


def test_coinpress_rejects_unknown_rule():
    with pytest.raises(ValueError, match="clip_rule"):
        cp.coinpress_mean(np.zeros((10, 2)), rho=1.0, prior_centre=np.zeros(2), prior_radius=1.0,
                          rng=np.random.default_rng(0), clip_rule="mine")


# ---------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------
def test_registry_has_the_named_arms():
    for name in ("Alg3", "PLAN", "IOME", "PLAN-noscale", "CoinPress", "CoinPress-authors",
                 "PLAN-oracle", "Alg3-oracle", "Alg3-private", "Alg3-private-centre",
                 "PLAN-last-step", "empirical"):
        assert name in ARMS and ARMS[name].name == name
    assert ARMS["Alg3"].estimator is ar.algorithm3_robust
    assert set(nothing_known()) == {a for a, arm in ARMS.items() if arm.private and not arm.given}


def test_every_arm_runs_through_the_common_call():
    X = _data(n=300)
    sigma = np.array([5.0, 2.0, 1.0, 0.5, 0.2, 0.1])
    inputs = {"sigma": sigma, "mu": np.full(6, 3.0)}
    for name, arm in ARMS.items():
        assert isinstance(arm, Arm) and set(arm.given) <= set(GIVEN)
        r = arm(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(0),
                **{g: inputs[g] for g in arm.given})
        assert r.estimate.shape == (6,) and np.all(np.isfinite(r.estimate)), name
        if arm.private and arm.given:
            with pytest.raises(TypeError, match="must be given"):
                arm(X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="takes the inputs"):
        ARMS["PLAN"](X, rho=0.5, lower=-50.0, upper=50.0, rng=np.random.default_rng(0), sigma=sigma)


def test_iome_paths_pay_earlier_releases_from_the_noise():
    """The anchor and the reach test are paid from IOME's noise: IOME's centre and radius searches keep
    the budgets ESM's IOME has with the path's whole budget, and the model's error of such a split lies
    between that IOME's and that of IOME with the path's budget cut in proportion."""
    assert ar.iome_shares(10**6, rho=0.5) is IOME_SHARES
    assert ar.iome_shares(10**6, rho=0.5, rho_iome=0.4) is not IOME_SHARES
    rho, rho_iome = 0.125, 0.125 * (1 - ar.IOME_ANCHOR_SHARE) * (1 - ar.REACH_SHARE)
    whole, shares = ar.iome_shares(300, rho=rho), ar.iome_shares(300, rho=rho, rho_iome=rho_iome)
    for step in ("centre", "threshold"):
        assert shares[step] * rho_iome == pytest.approx(whole[step] * rho, rel=1e-12)
    assert math.fsum(shares.values()) == pytest.approx(1.0, abs=1e-12) and shares["noise"] > 0.55
    # a few hundred rows in a box 1000 times their spread, where IOME's bisections take wrong turns
    sigma = (16 / np.arange(1, 17)) ** 0.75
    box = dict(lower=-1000.0 * sigma[0], upper=1000.0 * sigma[0])
    alone = pe.iome_error(300, rho=rho, variances=sigma**2, **box, shares=whole)
    split = pe.iome_error(300, rho=rho_iome, variances=sigma**2, **box, shares=shares)
    cut = pe.iome_error(300, rho=rho_iome, variances=sigma**2, **box, shares=ar.iome_shares(300, rho=rho_iome))
    assert alone < split < cut and split < 1.1 * alone


def test_iome_radius_search_gets_the_budget_that_keeps_its_margin_small():
    """Where rows are few ESM's IOME gives its radius search what keeps the rows it clips against the
    search's noisy counts (2 sds of a count) below IOME_RADIUS_ROWS of n, up to IOME_RADIUS_CAP of the
    budget; elsewhere PLAN's split.  The clip count follows the split."""
    T, f = 20, ar.IOME_RADIUS_ROWS
    for n, rho in [(200, 0.875), (600, 0.0625), (300, 0.125), (21, 1.0)]:
        s = ar.iome_shares(n, rho=rho)
        margin = 2 * math.sqrt(T / (2 * s["threshold"] * rho))
        capped = s["threshold"] == pytest.approx(ar.IOME_RADIUS_CAP, rel=1e-12)
        assert margin <= f * n * (1 + 1e-12) or capped
        assert s["threshold"] > IOME_SHARES["threshold"] and s["centre"] == IOME_SHARES["centre"]
        assert iome_clip_count(16, rho=rho, shares=s) < iome_clip_count(16, rho=rho)
    assert ar.iome_shares(21, rho=1.0)["threshold"] == pytest.approx(ar.IOME_RADIUS_CAP)
    with pytest.raises(ValueError, match="rho_iome"):
        ar.iome_shares(100, rho=0.5, rho_iome=0.6)
    with pytest.raises(ValueError, match="rho_iome must exceed"):
        ar.iome_shares(21, rho=1.0, rho_iome=0.3)
    with pytest.raises(ValueError, match="n"):
        ar.iome_shares(0, rho=0.5)


def test_iome_paid_from_its_noise_searches_as_iome_alone():
    """Goal G3's hardest cell: 300 rows in 16 dimensions in a box 1000 times their spread at rho = 1/8,
    where ESM releases the anchor and the reach test before IOME, and IOME's bisections take wrong
    turns (its error over datasets spans two orders of magnitude).  Paid from the noise, IOME there finds
    the same centre as IOME alone from the same noise draws, about the same radius, and a final noise
    larger by sqrt(its noise share / (that share - what was paid before)) per unit of radius; cut in
    proportion, the bisections' counts are noisier and the centres move."""
    sigma = (16 / np.arange(1, 17)) ** 0.75
    top = 1000.0 * sigma[0]
    n, d, rho = 300, 16, 0.125
    share = ar.IOME_ANCHOR_SHARE
    assert not ar.scales_resolvable(n, d=d, rho=rho) and ar.coarse_centre(n, d=d, rho=rho, lower=-top, upper=top)
    assert ar.reach_test_runs(n, d=d, rho=(1 - share) * rho)
    before = share + ar.REACH_SHARE * (1 - share)
    rho_iome = (1 - before) * rho
    whole, shares = ar.iome_shares(n, rho=rho), ar.iome_shares(n, rho=rho, rho_iome=rho_iome)
    moved = 0
    for run in range(20):
        X = sigma * np.random.default_rng([7, run]).standard_normal((n, d))
        alone = iome_mean(X, rho=rho, lower=-top, upper=top, rng=np.random.default_rng([9, run]), shares=whole)
        paid = iome_mean(X, rho=rho_iome, lower=-top, upper=top, rng=np.random.default_rng([9, run]), shares=shares)
        cut = iome_mean(X, rho=rho_iome, lower=-top, upper=top, rng=np.random.default_rng([9, run]),
                        shares=ar.iome_shares(n, rho=rho_iome))
        assert np.allclose(paid.centre, alone.centre, rtol=0, atol=1e-9 * top)
        # the radius's search has the same budget; it aims at the few more clipped rows the noise hides
        assert 0 < alone.rank_target - paid.rank_target <= 5 and paid.C == pytest.approx(alone.C, rel=0.05)
        assert paid.noise_std == pytest.approx(alone.noise_std * paid.C / alone.C * math.sqrt(
            whole["noise"] / (whole["noise"] - before)), rel=1e-9)
        moved += not np.allclose(cut.centre, alone.centre, rtol=0, atol=1e-9 * top)
    assert moved >= 10
