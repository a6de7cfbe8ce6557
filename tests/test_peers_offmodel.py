"""Privacy and calibration of Algorithm 3's robust pipeline and the arms registry.

Each private step of egmlib.peers.algorithm3_robust is checked on adversarial
substitution neighbours (one row replaced by a row at the box's corner, at the centre, or
by a copy of another row): the sensitivity it is calibrated for is never exceeded, the
exponential mechanism's log-probability ratio never exceeds epsilon, and the budget sums
to rho.  The proofs are in chapters/09a_offmodel_privacy.md.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest

from egmlib import clipping
from egmlib.clipping import clipped_sum
from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import budget as _budget
from egmlib.peers import coinpress as cp
from egmlib.peers.arms import ARMS, GIVEN, Arm, nothing_known
from egmlib.peers.iome import iome_mean
from egmlib.peers.scales import pairwise_squared_differences


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
    runs = (ar.algorithm3_robust, ar.plan_last_step_private_inputs,
            functools.partial(ar.algorithm3_robust, rule=False))
    for f in runs:
        r = f(X, rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(1))
        assert math.isclose(math.fsum(r.budget.parts.values()), rho, rel_tol=1e-12)
        assert r.budget.total == rho
        assert np.all(np.isfinite(r.estimate))


# ---------------------------------------------------------------------------------------
# scale step: one substituted row changes one row of the paired differences
# ---------------------------------------------------------------------------------------
def test_pairing_changes_one_row_of_differences_under_substitution():
    X = _data(n=101)
    for Y in _neighbours(X, -50.0, 50.0):
        V = pairwise_squared_differences(X, rng=np.random.default_rng(3))
        W = pairwise_squared_differences(Y, rng=np.random.default_rng(3))
        changed = np.any(V != W, axis=1)
        assert changed.sum() <= 1


def test_floor_is_a_function_of_the_released_scales_only():
    s = np.array([1e-12, 1.0, 2.0, 9.0])
    f = ar._floored(s)
    assert np.all(f >= ar.SIGMA_FLOOR_SHARE * s.mean() - 1e-15)
    assert np.array_equal(f[1:], np.maximum(s[1:], ar.SIGMA_FLOOR_SHARE * s.mean()))
    # the floor raises sum(sigma) by at most the factor 1 + SIGMA_FLOOR_SHARE
    assert f.sum() <= (1.0 + ar.SIGMA_FLOOR_SHARE) * s.sum()


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


def test_radius_utility_is_zero_at_the_smallest_radius_within_the_target():
    norms = np.array([0.5, 1.2, 1.7, 2.5, 4.0])
    radii = np.array([1.0, 2.0, 3.0, 5.0])
    # counts beyond the radii: 4, 2, 1, 0; target 2 -> k = 1 (k = 2 ties: c_1 = t exactly)
    u = ar.radius_utility(norms, radii=radii, target=2.0)
    assert u.tolist() == [-2.0, 0.0, 0.0, -1.0]
    u = ar.radius_utility(norms, radii=radii, target=2.5)
    assert u.tolist() == [-1.5, 0.0, -0.5, -1.5]


@pytest.mark.parametrize("rho", [1e-3, 0.05, 1.0])
def test_radius_mechanism_privacy_loss_at_most_eps_on_adversarial_neighbours(rho):
    rng = np.random.default_rng(5)
    norms = rng.exponential(1.0, size=60)
    C0, C_max = 0.8, 30.0
    p = ar.radius_probabilities(norms, C0=C0, C_max=C_max, rho=rho)
    radii = C0 * ar.RADIUS_GRID ** np.arange(p.shape[0])
    eps = math.sqrt(8.0 * rho)
    worst = worst_range = 0.0
    for m in _all_neighbour_norms(norms, radii[::7]):
        q = ar.radius_probabilities(m, C0=C0, C_max=C_max, rho=rho)
        loss = np.log(p) - np.log(q)
        worst = max(worst, float(np.max(np.abs(loss))))
        worst_range = max(worst_range, float(loss.max() - loss.min()))  # bounded range
    assert worst <= eps * (1 + 1e-12)
    assert worst_range <= eps * (1 + 1e-12)  # eps-bounded range: rho-zCDP (Cesar and Rogers)
    assert worst > 0.3 * eps  # the neighbours do move the distribution


def test_select_radius_samples_the_stated_distribution():
    rng = np.random.default_rng(6)
    norms = np.concatenate([rng.uniform(0, 1, 40), [1.3, 1.6, 2.5, 4.0]])
    kw = dict(C0=1.0, C_max=3.0, rho=0.02)
    p = ar.radius_probabilities(norms, **kw)
    draws = np.array([ar.select_radius(norms, rng=rng, **kw).k for _ in range(4000)])
    freq = np.bincount(draws, minlength=p.shape[0]) / draws.shape[0]
    assert np.max(np.abs(freq - p)) < 4.0 * math.sqrt(0.25 / draws.shape[0])


def test_on_the_model_the_radius_step_keeps_the_model_radius():
    rng = np.random.default_rng(7)
    sigma = np.array([4.0, 2.0, 1.0, 0.5])
    X = 10.0 + sigma * rng.standard_normal((5000, 4))
    ks = [ar.algorithm3_robust(X, rho=0.25, lower=-100.0, upper=100.0,
                               rng=np.random.default_rng(s)).radius.k for s in range(20)]
    assert sum(k == 0 for k in ks) >= 19


def test_off_the_model_the_radius_step_enlarges_the_radius():
    rng = np.random.default_rng(8)
    X = 10.0 + np.exp(2.0 * rng.standard_normal((5000, 4)))  # heavy, skewed
    r = ar.algorithm3_robust(X, rho=0.25, lower=-1e4, upper=1e4, rng=np.random.default_rng(0))
    assert r.radius.k > 0 and r.C > r.radius.C0


# ---------------------------------------------------------------------------------------
# noise step: sensitivity 2C of the clipped sum, noise 2C / sqrt(2 rho_noise)
# ---------------------------------------------------------------------------------------
def test_clipped_transformed_sum_moves_at_most_2C_on_adversarial_neighbours():
    X = _data()
    r = ar.algorithm3_robust(X, rho=0.25, lower=-50.0, upper=50.0, rng=np.random.default_rng(2),
                             rule=False)
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
                             rule=False)
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
# the public path rule: IOME's release when n sqrt(rho) < FEW_ROWS_CONSTANT
# ---------------------------------------------------------------------------------------
def test_path_rule_reads_no_data():
    """Two data sets of the same shape, one on the model and one far off it (a constant
    block, a far outlier), take the same path at every budget: the rule sees (n, d, rho)."""
    rng = np.random.default_rng(21)
    for n, d in ((300, 5), (700, 5), (2500, 3)):
        A = rng.normal(size=(n, d))
        B = np.zeros((n, d))
        B[0] = 40.0
        for rho in (1 / 16, 0.25, 1.0):
            kw = dict(rho=rho, lower=-50.0, upper=50.0)
            pa = ar.algorithm3_robust(A, rng=np.random.default_rng(1), **kw).path
            pb = ar.algorithm3_robust(B, rng=np.random.default_rng(2), **kw).path
            assert pa == pb == ("iome" if ar.few_rows(n, d=d, rho=rho) else "algorithm3")
            assert ar.few_rows(n, d=d, rho=rho) == (n * math.sqrt(rho) < ar.FEW_ROWS_CONSTANT)


@pytest.mark.parametrize("rho", [1 / 16, 0.25, 1.0])
def test_path_rule_boundary(rho):
    """The switch sits at n sqrt(rho) = FEW_ROWS_CONSTANT: the last n below it takes IOME's
    path, the first n at or above it Algorithm 3's, whatever d."""
    c = ar.FEW_ROWS_CONSTANT
    n_first = math.ceil(c / math.sqrt(rho))
    if (n_first - 1) * math.sqrt(rho) >= c:  # rounding of the square root
        n_first -= 1
    for d in (1, 64, 10**6):
        assert ar.few_rows(n_first - 1, d=d, rho=rho)
        assert not ar.few_rows(n_first, d=d, rho=rho)
    X = _data(n=n_first + 1, d=3)
    kw = dict(rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(5))
    assert ar.algorithm3_robust(X[:n_first - 1], **kw).path == "iome"
    assert ar.algorithm3_robust(X[:n_first], **kw).path == "algorithm3"


@pytest.mark.parametrize("rho", [1 / 16, 0.5])
def test_iome_path_is_iome_bit_for_bit(rho):
    X = _data(n=200)
    assert ar.few_rows(X.shape[0], d=X.shape[1], rho=rho)
    r = ar.algorithm3_robust(X, rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(8))
    ref = iome_mean(X, rho=rho, lower=-50.0, upper=50.0, rng=np.random.default_rng(8))
    assert r.path == "iome"
    assert np.array_equal(r.estimate, ref.estimate)
    assert r.C == ref.C and r.n_clipped == ref.n_clipped
    assert r.sigma is None and r.radius is None
    assert np.array_equal(r.noise_std, np.full(X.shape[1], ref.noise_std))
    assert r.centre.shape == (X.shape[1],) and np.all(np.isfinite(r.centre))
    assert math.isclose(math.fsum(r.budget.parts.values()), rho, rel_tol=1e-12)
    # the same generator state continues identically after both releases
    g1, g2 = np.random.default_rng(8), np.random.default_rng(8)
    ar.algorithm3_robust(X, rho=rho, lower=-50.0, upper=50.0, rng=g1)
    iome_mean(X, rho=rho, lower=-50.0, upper=50.0, rng=g2)
    assert g1.random() == g2.random()


def test_rule_off_runs_algorithm3_path_on_few_rows():
    X = _data(n=200)
    r = ar.algorithm3_robust(X, rho=0.25, lower=-50.0, upper=50.0, rng=np.random.default_rng(0),
                             rule=False)
    assert r.path == "algorithm3" and r.sigma is not None and r.radius is not None
    assert set(r.budget.parts) == set(ar.SHARES)


def test_calibration_output_states_the_constant():
    """benchmarks/offmodel_crossover.py's saved output names the constant the library uses."""
    text = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
            / "offmodel_crossover.txt").read_text()
    line = [x for x in text.splitlines() if x.startswith("constant (rounded down")][0]
    assert float(line.rsplit(":", 1)[1]) == ar.FEW_ROWS_CONSTANT


def test_few_rows_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n"):
        ar.few_rows(0, d=3, rho=1.0)
    with pytest.raises(ValueError, match="d"):
        ar.few_rows(10, d=2.5, rho=1.0)
    with pytest.raises(TypeError, match="d"):
        ar.few_rows(10, d="3", rho=1.0)
    with pytest.raises(ValueError, match="rho"):
        ar.few_rows(10, d=3, rho=0.0)
    with pytest.raises(TypeError, match="rule"):
        ar.algorithm3_robust(_data(), rho=1.0, lower=-50.0, upper=50.0,
                             rng=np.random.default_rng(0), rule=1)


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
        ar.radius_probabilities([1.0], C0=1.0, C_max=2.0, rho=1.0, grid=1.0)


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
