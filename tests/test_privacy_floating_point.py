"""Every private step is private in floating point: a sensitivity harness on adversarial neighbours.

For each private step of egmlib, the deterministic statistic the step adds noise to (or the
utility its exponential mechanism or noisy counts read) is computed on two neighbouring
datasets, with the step's public inputs and random draws fixed, and must move by at most the
sensitivity the step calibrates to: for a clipped sum :func:`egmlib.clipping.sum_sensitivity`
(2C plus the bound on the summation's rounding), for counts and utilities exactly 1.

The pairs are built to stress floating point (issue 25): offsets up to 1e12 times the spread,
constant and tied columns, scales at the floor (whitening by 1e-12 of the box), rows on the
box's corners, and n up to 1e6.  The harness is shown to catch the cancelling distance formula
that CoinPress used before (``_cancelling_step_sum``), which it must.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from egmbook.privacy_audit import cancelling_step_sum
from egmlib import clipping, mechanisms
from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import coinpress, quantiles, scales
from egmlib.peers.hadamard import random_hadamard


# --------------------------------------------------------------------------------------- #
# adversarial neighbouring datasets
# --------------------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Pair:
    X: np.ndarray
    Xp: np.ndarray  #: X with row k replaced
    k: int
    lower: float
    upper: float
    spread: float  #: the scale of the rows around their centre


def _pair(seed: int, n: int, d: int, offset_exp: int, kind: str, neighbour: str) -> Pair:
    """n rows around an offset 10^offset_exp times their spread, with constant, tied or
    ordinary columns, and row k replaced as ``neighbour`` says."""
    rng = np.random.default_rng(seed)
    spread = 1.0
    offset = 10.0 ** offset_exp * spread
    Z = rng.standard_normal((n, d)) * spread
    if kind == "constant column":
        Z[:, 0] = 0.0
    elif kind == "tied":
        Z = np.round(Z)
    elif kind == "binary":
        Z = (Z > 1.0).astype(float)
    elif kind == "all constant":
        Z[:] = 0.0
    X = offset + Z
    half = max(4.0 * offset, 10.0)
    lower, upper = offset - half, offset + half
    k = int(rng.integers(n))
    Xp = X.copy()
    if neighbour == "far corner":
        Xp[k] = np.where(rng.random(d) < 0.5, lower, upper)
    elif neighbour == "antipode":
        Xp[k] = offset - (X[k] - offset) - 7.0 * spread
    elif neighbour == "tiny move":
        Xp[k, 0] = np.nextafter(np.nextafter(X[k, 0], np.inf), np.inf) + 1e-4 * spread
    elif neighbour == "constant column moved":
        Xp[k, 0] = X[k, 0] + 14.0 * spread
    return Pair(X, Xp, k, lower, upper, spread)


SIZES = st.sampled_from([(2, 1), (3, 2), (17, 3), (200, 5), (1000, 64), (20_000, 4), (10**6, 2)])
PAIRS = st.builds(
    lambda seed, size, e, kind, nb: _pair(seed, size[0], size[1], e, kind, nb),
    st.integers(0, 2**32 - 1), SIZES, st.sampled_from([0, 3, 8, 10, 12]),
    st.sampled_from(["ordinary", "constant column", "tied", "binary", "all constant"]),
    st.sampled_from(["far corner", "antipode", "tiny move", "constant column moved"]))
HARNESS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _moved(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


# --------------------------------------------------------------------------------------- #
# Gaussian steps: the clipped sums
# --------------------------------------------------------------------------------------- #
def _public_centre(p: Pair, rng: np.random.Generator, where: str) -> np.ndarray:
    """A public centre: near the data, at a corner of the box, or its middle."""
    d = p.X.shape[1]
    if where == "near":
        return p.X[0] + 0.1 * p.spread * rng.standard_normal(d)
    if where == "corner":
        return np.where(rng.random(d) < 0.5, p.lower, p.upper)
    return np.full(d, 0.5 * (p.lower + p.upper))


@HARNESS
@given(p=PAIRS, where=st.sampled_from(["near", "corner", "middle"]),
       C=st.sampled_from([1e-3, 1.0, 30.0, 1e9]), floor=st.booleans())
def test_clipped_sum_moves_at_most_its_sensitivity(p, where, C, floor):
    """egmlib.clipping.clipped_sum, the clipped sum of Algorithm 3, PLAN, IOME and the robust
    pipeline, with a public centre and scaling (b at the floor: 1 / (1e-12 of the box))."""
    rng = np.random.default_rng(1)
    n, d = p.X.shape
    c = _public_centre(p, rng, where)
    b = np.full(d, 1.0 / (1e-12 * (p.upper - p.lower))) if floor else rng.uniform(0.1, 10.0, d)
    T = clipping.clipped_sum(p.X, C=C, mu_hat=c, b=b).total
    Tp = clipping.clipped_sum(p.Xp, C=C, mu_hat=c, b=b).total
    assert _moved(T, Tp) <= clipping.sum_sensitivity(C, n=n, d=d)


@HARNESS
@given(p=PAIRS, baseline=st.booleans(), zero_sigma=st.booleans())
def test_report_algorithm3_and_baseline_move_at_most_their_sensitivity(p, baseline, zero_sigma):
    """mechanisms.algorithm3 (the report's Algorithm 3) and its baseline, noise=False: the
    transformed sum T moves by at most result.sensitivity, also with a sigma_j = 0 column."""
    n, d = p.X.shape
    sigma = np.linspace(1.0, 0.1, d) * p.spread
    if zero_sigma and d > 1:
        sigma[-1] = 0.0
    mech = mechanisms.clipped_gaussian_mechanism if baseline else mechanisms.algorithm3
    kw = dict(sigma=sigma, mu_hat=p.X[0], eps=1.0, delta=1e-6, rng=None, noise=False)
    r, rp = mech(p.X, **kw), mech(p.Xp, **kw)
    assert r.sensitivity == rp.sensitivity
    assert _moved(r.transformed_sum, rp.transformed_sum) <= r.sensitivity


def _cancelling_step_sum(X: np.ndarray, c: np.ndarray, R: float) -> np.ndarray:
    """CoinPress's step before issue 25 (the negative control of egmbook.privacy_audit)."""
    return cancelling_step_sum(X, c, R)[0]


def _coinpress_step(X: np.ndarray, c: np.ndarray, R: float) -> np.ndarray:
    return coinpress._step_sum(X, c, R, coinpress._reference(X))[0]


def _whitened_pair(p: Pair) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pair whitened by scales at the floor 1e-12 of the box (a tied or constant column's
    private scale), as CoinPress's centre step sees it in the private pipelines."""
    sigma = np.full(p.X.shape[1], 1e-12 * (p.upper - p.lower))
    return p.X / sigma, p.Xp / sigma, sigma


@HARNESS
@given(p=PAIRS, whiten=st.booleans(), where=st.sampled_from(["near", "corner", "middle"]),
       R_factor=st.sampled_from([1e-3, 1.0, 3.0, 1e3]))
def test_coinpress_step_moves_at_most_its_sensitivity(p, whiten, where, R_factor):
    """One CoinPress step (its shortcut included) with a public centre and radius."""
    X, Xp = (p.X, p.Xp) if not whiten else _whitened_pair(p)[:2]
    n, d = X.shape
    rng = np.random.default_rng(2)
    scale = float(np.abs(X - X[0]).max()) or 1.0
    c = {"near": X[0] + 0.01 * scale * rng.standard_normal(d), "corner": X.max(axis=0) + scale,
         "middle": X.mean(axis=0)}[where]
    R = R_factor * scale * math.sqrt(d)
    assert _moved(_coinpress_step(X, c, R), _coinpress_step(Xp, c, R)) <= clipping.sum_sensitivity(R, n=n, d=d)


def test_harness_catches_the_cancelling_distance_formula():
    """The negative control: rows 1e11 to 1e12 times their spread from the origin (as a
    constant column whitened by a scale at the floor puts them), one row moved by 1000
    spreads.  The old formula judges the moved row inside the ball in some of these pairs
    and lets it in whole, 83 times the sensitivity; the centred step never leaves the bound."""
    worst_old, worst_new = 0.0, 0.0
    for offset in (1e11, 1e12):
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = offset + rng.standard_normal((4000, 4))
            Xp = X.copy()
            Xp[7, 0] += 1000.0
            c, R = X.mean(axis=0), 6.0
            bound = clipping.sum_sensitivity(R, n=4000, d=4)
            worst_old = max(worst_old, _moved(_cancelling_step_sum(X, c, R), _cancelling_step_sum(Xp, c, R)) / bound)
            worst_new = max(worst_new, _moved(_coinpress_step(X, c, R), _coinpress_step(Xp, c, R)) / bound)
    assert worst_old > 10.0
    assert worst_new <= 1.0


@HARNESS
@given(p=PAIRS)
def test_iome_rotated_rows_differ_in_one_row_and_clip_within_sensitivity(p):
    """IOME: the rotation acts on each row alone (bit for bit), then a clipped sum in N dims."""
    n, d = p.X.shape
    R = random_hadamard(d, rng=np.random.default_rng(3))
    Y, Yp = R.rotate(p.X), R.rotate(p.Xp)
    same = np.all(Y == Yp, axis=1)
    assert same.sum() >= n - 1 and (same[p.k] or not np.array_equal(p.X[p.k], p.Xp[p.k]))
    N = R.padded_dim
    c = Y[0]
    C = 3.0 * p.spread * math.sqrt(d)
    T, Tp = clipping.clipped_sum(Y, C=C, mu_hat=c).total, clipping.clipped_sum(Yp, C=C, mu_hat=c).total
    assert _moved(T, Tp) <= clipping.sum_sensitivity(C, n=n, d=N)


# --------------------------------------------------------------------------------------- #
# counts and utilities: sensitivity 1 exactly
# --------------------------------------------------------------------------------------- #
def _probes(X: np.ndarray, Xp: np.ndarray) -> np.ndarray:
    """Thresholds at which counts are compared: every value of both datasets and its
    neighbouring floats, per column (at most 2000 rows of them)."""
    vals = np.concatenate([X[:1000], Xp[:1000], X[-1000:], Xp[-1000:]])
    return np.concatenate([vals, np.nextafter(vals, -np.inf), np.nextafter(vals, np.inf)])


@HARNESS
@given(p=PAIRS)
def test_quantile_counts_move_by_at_most_one(p):
    """The exponential-mechanism quantiles (PLAN's centre) count #{x_ij <= y} from the sorted
    columns, the noisy bisection (IOME's centre) by passes or by sorted columns: every count
    at every threshold moves by at most 1 between neighbours, and both routes agree."""
    S = quantiles.sorted_columns(p.X).values
    Sp = quantiles.sorted_columns(p.Xp).values
    lo, hi = p.X.min(axis=0), p.X.max(axis=0)
    lop, hip = p.Xp.min(axis=0), p.Xp.max(axis=0)
    for v in _probes(p.X, p.Xp)[:: max(1, len(p.X) // 50)]:
        a, ap = quantiles._count_leq(S, v), quantiles._count_leq(Sp, v)
        assert np.abs(a - ap).max() <= 1
        np.testing.assert_array_equal(a, quantiles._count_leq_columns(p.X, v, lo, hi))
        np.testing.assert_array_equal(ap, quantiles._count_leq_columns(p.Xp, v, lop, hip))


@HARNESS
@given(p=PAIRS, target=st.sampled_from([0.0, 1.0, 7.5, 1e3]))
def test_radius_utility_moves_by_at_most_one(p, target):
    """The robust pipeline's radius check: the utility of every radius on its grid moves by
    at most 1, with the norms of rows transformed by scales at the floor."""
    n, d = p.X.shape
    c = p.X[0]
    b = np.full(d, 1.0 / (1e-12 * (p.upper - p.lower)))
    norms, normsp = clipping.transformed_norms(p.X, mu_hat=c, b=b), clipping.transformed_norms(p.Xp, mu_hat=c, b=b)
    positive = norms[norms > 0]
    C0 = float(np.median(positive)) if positive.size else 1.0
    radii = C0 * ar.RADIUS_GRID ** np.arange(200)
    u = ar._utility(np.sort(norms), radii, target)
    up = ar._utility(np.sort(normsp), radii, target)
    assert np.abs(u - up).max() <= 1.0


@HARNESS
@given(p=PAIRS)
def test_scale_step_changes_one_pair_and_its_coinpress_step_stays_within(p):
    """The scale steps (PLAN's and the log scales): with the pairing drawn from the same
    generator, one substituted row changes one row of the paired differences, then of their
    standardised logarithms; CoinPress's step on those moves within its sensitivity."""
    n, d = p.X.shape
    if n < 2:
        return
    V = scales._pairwise(np.clip(p.X, p.lower, p.upper), np.random.default_rng(4))
    Vp = scales._pairwise(np.clip(p.Xp, p.lower, p.upper), np.random.default_rng(4))
    assert np.count_nonzero(np.any(V != Vp, axis=1)) <= 1
    width = p.upper - p.lower
    lo, hi = 2.0 * math.log(1e-12 * width), 2.0 * math.log(0.5 * width)

    def standardised(W: np.ndarray) -> np.ndarray:
        return (np.log(np.clip(W, math.exp(lo), 0.5 * width * width)) - scales.LOG_CHI2_1_MEAN) / scales.LOG_CHI2_1_SD

    Z, Zp = standardised(V), standardised(Vp)
    c = np.full(d, 0.5 * (lo + hi) / scales.LOG_CHI2_1_SD)
    R = math.sqrt(d) * 0.5 * (hi - lo) / scales.LOG_CHI2_1_SD
    m = V.shape[0]
    for radius in (R, 1e-3 * R):
        bound = clipping.sum_sensitivity(radius, n=m, d=d)
        assert _moved(_coinpress_step(Z, c, radius), _coinpress_step(Zp, c, radius)) <= bound


@HARNESS
@given(p=PAIRS, tau=st.sampled_from([1e-6, 1.0, 1e6, None]))
def test_second_moment_step_moves_within_its_sensitivity(p, tau):
    """Pipeline v3's second moments (egmlib.peers.scales.second_moments): with the pairing drawn
    from the same generator one substituted row changes one paired half squared difference v_i,
    so the norms the private quantile counts move by one row and the clipped sum of the v_i at
    any public radius tau (None: the largest norm, nothing clipped) within its sensitivity."""
    n, d = p.X.shape
    if n < 2:
        return
    V = scales._pairwise(np.clip(p.X, p.lower, p.upper), np.random.default_rng(5))
    Vp = scales._pairwise(np.clip(p.Xp, p.lower, p.upper), np.random.default_rng(5))
    assert np.count_nonzero(np.any(V != Vp, axis=1)) <= 1
    norms, normsp = clipping.transformed_norms(V), clipping.transformed_norms(Vp)
    assert np.count_nonzero(norms != normsp) <= 1
    C = float(max(norms.max(), normsp.max(), 1e-300)) if tau is None else tau
    moved = _moved(clipping.clipped_sum(V, C=C, norms=norms).total, clipping.clipped_sum(Vp, C=C, norms=normsp).total)
    assert moved <= clipping.sum_sensitivity(C, n=V.shape[0], d=d)


# --------------------------------------------------------------------------------------- #
# the rounding bound itself
# --------------------------------------------------------------------------------------- #
@pytest.mark.parametrize("n,d", [(1, 1), (10, 3), (10**4, 2048), (10**6, 1), (10**8, 1)])
def test_rounding_slack_is_small_and_grows_with_n(n, d):
    nu = clipping.rounding_slack(n, d=d)
    assert 0.0 < nu < 0.02
    if n > 1:
        assert nu > clipping.rounding_slack(max(1, n // 10), d=d)


def test_rounding_slack_covers_an_adversarial_summation():
    """n equal rows at distance C in one direction (partial sums as large as they get) and the
    antipodal neighbour: the computed difference stays within 2C(1 + nu)."""
    for n, d in [(1000, 1), (131_072, 1), (300_000, 2)]:
        C = 1.0
        X = np.ones((n, d)) * (C / math.sqrt(d)) * (1 + 1e-9)
        Xp = X.copy()
        Xp[n // 2] = -X[n // 2]
        T, Tp = clipping.clipped_sum(X, C=C).total, clipping.clipped_sum(Xp, C=C).total
        assert _moved(T, Tp) <= clipping.sum_sensitivity(C, n=n, d=d)
