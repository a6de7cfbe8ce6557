"""Tests of egmlib.peers.quantiles: the exponential mechanism and noisy binary search.

What could fail, and how it is caught:
- privacy: the exact output density of the exponential mechanism on adversarial
  neighbouring datasets (one value moved from far below to far above the rest, and the
  reverse) has log ratio at most epsilon = sqrt(8 rho) everywhere, and not much less
  (the bound is nearly attained, so a mis-scaled exponent would show);
- the sampler draws from that density: interval frequencies over many draws against
  the exact probabilities (5 standard errors), also coordinate-wise at budget rho/d;
- noisy binary search: with a seeded generator the result equals a plain reference loop
  (count + N(0, T d / (2 rho)) noise per step), so the noise scale is the zCDP one;
- the sort cache: hit for read-only owning arrays, miss for writable ones, dropped with
  the array; accuracy on easy data; validation.
"""

from __future__ import annotations

import numpy as np
import pytest

from egmlib.peers import quantiles as Q


def _em_interval_probs(x, q, eps, lower, upper):
    """Exact probabilities of the n + 1 intervals and their end points (independent code)."""
    z = np.concatenate(([lower], np.sort(np.clip(x, lower, upper)), [upper]))
    n = len(x)
    lengths = np.diff(z)
    logw = np.full(n + 1, -np.inf)
    pos = lengths > 0
    logw[pos] = np.log(lengths[pos]) - 0.5 * eps * np.abs(np.arange(n + 1)[pos] - q * n)
    w = np.exp(logw - logw.max())
    return w / w.sum(), z


def _log_density(x, q, eps, lower, upper, y):
    """log of the output density at the points y."""
    p, z = _em_interval_probs(x, q, eps, lower, upper)
    idx = np.clip(np.searchsorted(z, y, side="right") - 1, 0, len(x))
    with np.errstate(divide="ignore"):
        return np.log(p[idx]) - np.log(np.diff(z)[idx])


@pytest.mark.parametrize("q", [0.5, 0.9, 0.02])
def test_exponential_mechanism_density_ratio_bounded_by_eps(q):
    rng = np.random.default_rng(0)
    rho = 0.02
    eps = np.sqrt(8 * rho)
    lower, upper = -100.0, 100.0
    x = rng.normal(size=40)
    worst = 0.0
    for move_to in (-99.0, 99.0, 0.0):
        for i in (int(np.argmin(x)), int(np.argmax(x)), 7):
            xp = x.copy()
            xp[i] = move_to
            y = np.linspace(lower + 1e-9, upper - 1e-9, 200001)
            y = np.concatenate((y, x, xp, np.nextafter(x, np.inf), np.nextafter(xp, np.inf)))
            lr = _log_density(x, q, eps, lower, upper, y) - _log_density(xp, q, eps, lower, upper, y)
            worst = max(worst, float(np.max(np.abs(lr))))
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps  # the neighbours are adversarial enough to matter


def test_exponential_mechanism_samples_match_density():
    rng = np.random.default_rng(1)
    x = np.sort(rng.normal(size=12))
    q, rho, lower, upper = 0.5, 0.5, -4.0, 4.0
    p, z = _em_interval_probs(x, q, np.sqrt(8 * rho), lower, upper)
    draws = np.array([Q.private_quantile(x, q=q, rho=rho, lower=lower, upper=upper, rng=rng)
                      for _ in range(6000)])
    assert np.all((draws >= lower) & (draws <= upper))
    counts = np.bincount(np.searchsorted(z, draws, side="right") - 1, minlength=len(p))[:len(p)]
    freq = counts / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.all(np.abs(freq - p) <= 5 * se + 1e-12)


def test_coordinatewise_spends_rho_over_d():
    rng = np.random.default_rng(2)
    x = np.sort(rng.normal(size=10))
    d, rho, lower, upper = 4, 0.8, -3.0, 3.0
    X = np.repeat(x[:, None], d, axis=1)
    p, z = _em_interval_probs(x, 0.5, np.sqrt(8 * rho / d), lower, upper)
    draws = np.concatenate([Q.coordinatewise_quantiles(X, q=0.5, rho=rho, lower=lower,
                                                       upper=upper, rng=rng)
                            for _ in range(1500)])
    freq = np.bincount(np.searchsorted(z, draws, side="right") - 1, minlength=len(p))[:len(p)]
    freq = freq / len(draws)
    se = np.sqrt(p * (1 - p) / len(draws))
    assert np.all(np.abs(freq - p) <= 5 * se + 1e-12)
    # and not at budget rho per coordinate: the distributions differ visibly
    p_wrong, _ = _em_interval_probs(x, 0.5, np.sqrt(8 * rho), lower, upper)
    assert np.max(np.abs(freq - p_wrong)) > 10 * se.max()


def test_ties_get_probability_zero_and_universe_is_respected():
    rng = np.random.default_rng(3)
    x = np.array([1.0, 1.0, 1.0, 2.0, 50.0, -50.0])  # beyond the universe: clipped
    out = np.array([Q.private_quantile(x, q=0.5, rho=5.0, lower=-10.0, upper=10.0, rng=rng)
                    for _ in range(500)])
    assert np.all((out >= -10) & (out <= 10))


def _reference_bisect(x, rank, noise_std, lower, upper, steps, rng, d):
    left, right = np.full(d, lower), np.full(d, upper)
    for _ in range(steps):
        mid = 0.5 * (left + right)
        c = (x <= mid).sum(axis=0) + noise_std * rng.standard_normal(d)
        below = c <= rank
        left = np.where(below, mid, left)
        right = np.where(below, right, mid)
    return 0.5 * (left + right)


def test_binary_search_matches_reference_loop():
    X = np.random.default_rng(4).normal(size=(301, 5))
    rho, steps, lower, upper = 0.3, 17, -8.0, 8.0
    got = Q.binary_search_quantiles(X, rank=150, rho=rho, lower=lower, upper=upper,
                                    rng=np.random.default_rng(9), steps=steps)
    ref = _reference_bisect(X, 150, np.sqrt(steps * 5 / (2 * rho)), lower, upper, steps,
                            np.random.default_rng(9), 5)
    np.testing.assert_array_equal(got, ref)
    one = Q.binary_search_quantile(X[:, 0], rank=150, rho=rho, lower=lower, upper=upper,
                                   rng=np.random.default_rng(9), steps=steps)
    ref1 = _reference_bisect(X[:, :1], 150, np.sqrt(steps / (2 * rho)), lower, upper, steps,
                             np.random.default_rng(9), 1)
    assert one == ref1[0]


def test_count_leq_equals_searchsorted():
    rng = np.random.default_rng(5)
    S = np.sort(rng.integers(0, 5, size=(7, 13)).astype(float), axis=1)
    v = rng.integers(-1, 6, size=7).astype(float)
    expect = [np.searchsorted(S[j], v[j], side="right") for j in range(7)]
    np.testing.assert_array_equal(Q._count_leq(S, v), expect)


def test_accuracy_on_easy_data():
    rng = np.random.default_rng(6)
    X = rng.normal(loc=[1.0, -2.0, 30.0], size=(5001, 3))
    m = Q.coordinatewise_quantiles(X, q=0.5, rho=3.0, lower=-100, upper=100, rng=rng)
    assert np.max(np.abs(m - [1.0, -2.0, 30.0])) < 0.1
    b = Q.binary_search_quantiles(X, rank=2500, rho=3.0, lower=-100, upper=100, rng=rng)
    assert np.max(np.abs(b - [1.0, -2.0, 30.0])) < 0.1
    top = Q.private_quantile(X[:, 0], q=0.9, rho=3.0, lower=-100, upper=100, rng=rng)
    assert abs(top - np.quantile(X[:, 0], 0.9)) < 0.1


def test_seeded_reproducibility():
    X = np.random.default_rng(7).normal(size=(200, 3))
    a = Q.coordinatewise_quantiles(X, q=0.5, rho=0.1, lower=-5, upper=5,
                                   rng=np.random.default_rng(11))
    b = Q.coordinatewise_quantiles(X, q=0.5, rho=0.1, lower=-5, upper=5,
                                   rng=np.random.default_rng(11))
    np.testing.assert_array_equal(a, b)


def _layouts(X):
    """The same values as a writable, a read-only, a Fortran-ordered and a strided array."""
    ro = np.array(X, copy=True)
    ro.setflags(write=False)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    return {"writable": X, "read-only": ro, "fortran": np.asfortranarray(X), "strided": wide[:, ::2]}


def test_one_seed_one_release_whatever_the_layout_or_presorting():
    """The draws depend on the values and the seed only: not on the array's flags or memory
    layout, nor on whether the caller passes the sorted columns (issue 25: a cache keyed on
    read-only arrays once took another route and drew differently)."""
    X = np.round(np.random.default_rng(8).normal(size=(300, 40)), 1)  # ties
    S = Q.sorted_columns(X)
    kw = dict(rho=0.05, lower=-10.0, upper=10.0)
    runs = []
    for arr in _layouts(X).values():
        for pre in (None, S):
            runs.append((Q.coordinatewise_quantiles(arr, q=0.5, rng=np.random.default_rng(1), presorted=pre, **kw),
                         Q.binary_search_quantiles(arr, rank=150.0, rng=np.random.default_rng(1), presorted=pre,
                                                   **kw)))
    for med, bis in runs[1:]:
        np.testing.assert_array_equal(med, runs[0][0])
        np.testing.assert_array_equal(bis, runs[0][1])


def test_sorted_columns_is_an_explicit_read_only_copy():
    X = np.random.default_rng(8).normal(size=(50, 4))
    S = Q.sorted_columns(X)
    np.testing.assert_array_equal(S.values, np.sort(X, axis=0).T)
    assert not S.values.flags.writeable and S.data_shape == (50, 4)
    X[0, 0] = 1e6  # the caller's array changes; the sorted copy does not
    assert S.values.max() < 1e6
    assert Q.sorted_columns(X) is not Q.sorted_columns(X)  # nothing is looked up
    with pytest.raises(ValueError, match="presorted must hold the sorted columns of X, of shape \\(50, 3\\)"):
        Q.coordinatewise_quantiles(X[:, :3], q=0.5, rho=1.0, lower=-5, upper=5,
                                   rng=np.random.default_rng(0), presorted=S)
    with pytest.raises(TypeError, match="presorted must be a SortedColumns"):
        Q.binary_search_quantiles(X, rank=2.0, rho=1.0, lower=-5, upper=5, rng=np.random.default_rng(0),
                                  presorted=np.sort(X, axis=0).T)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(q=1.5), ValueError, "q must lie in \\[0, 1\\], got q=1.5"),
        (dict(q="0.5"), TypeError, "q must be a real number"),
        (dict(rho=0.0), ValueError, "rho must be finite and > 0"),
        (dict(lower=1.0, upper=1.0), ValueError, "lower must be < upper"),
        (dict(upper=float("inf")), ValueError, "upper must be finite"),
        (dict(lower=-1e308, upper=1e308), ValueError, "upper - lower must be finite"),
        (dict(rng=np.random.RandomState(0)), TypeError, "rng must be a numpy.random.Generator"),
        (dict(rng=1), TypeError, "rng must be a numpy.random.Generator"),
    ],
)
def test_validation(kwargs, exc, match):
    args = dict(q=0.5, rho=1.0, lower=-1.0, upper=1.0, rng=np.random.default_rng(0))
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        Q.coordinatewise_quantiles(np.zeros((3, 2)), **args)


def test_data_validation():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="values must be finite, got values\\[1\\]=nan"):
        Q.private_quantile([0.0, np.nan], q=0.5, rho=1.0, lower=-1, upper=1, rng=rng)
    with pytest.raises(ValueError, match="values must be one-dimensional"):
        Q.private_quantile(np.zeros((2, 2)), q=0.5, rho=1.0, lower=-1, upper=1, rng=rng)
    with pytest.raises(TypeError, match="X must hold real numbers"):
        Q.coordinatewise_quantiles(np.array([["a"]]), q=0.5, rho=1.0, lower=-1, upper=1,
                                   rng=rng)
    with pytest.raises(TypeError, match="X must hold real numbers, got booleans"):
        Q.coordinatewise_quantiles(np.ones((2, 2), dtype=bool), q=0.5, rho=1.0, lower=-1,
                                   upper=1, rng=rng)
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        Q.coordinatewise_quantiles(np.zeros(3), q=0.5, rho=1.0, lower=-1, upper=1, rng=rng)
    with pytest.raises(ValueError, match="X must be finite, got X\\[1, 0\\]=inf"):
        Q.coordinatewise_quantiles([[0.0], [np.inf]], q=0.5, rho=1.0, lower=-1, upper=1, rng=rng)
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        Q.binary_search_quantile([0.0], rank=0, rho=1.0, lower=-1, upper=1, rng=rng, steps=0)
    with pytest.raises(ValueError, match="steps must be an integer <= 1100"):
        Q.binary_search_quantiles([[0.0]], rank=0, rho=1.0, lower=-1, upper=1, rng=rng,
                                  steps=10**6)
    with pytest.raises(TypeError, match="rank must be a real number"):
        Q.binary_search_quantile([0.0], rank=None, rho=1.0, lower=-1, upper=1, rng=rng)


# ------------------------------------------- the sampler over sorted columns, exactly
def _exact_cdf(x, q, eps, lower, upper, y):
    """CDF of the exponential mechanism's output at the points y (independent code)."""
    p, z = _em_interval_probs(x, q, eps, lower, upper)
    cum = np.concatenate(([0.0], np.cumsum(p)))
    i = np.clip(np.searchsorted(z, y, side="right") - 1, 0, len(p) - 1)
    length = np.diff(z)[i]
    frac = np.where(length > 0, (y - z[i]) / np.where(length > 0, length, 1.0), 1.0)
    return np.clip(cum[i] + p[i] * np.clip(frac, 0.0, 1.0), 0.0, 1.0)


@pytest.mark.parametrize(
    "case",
    [
        dict(dist="normal", q=0.5, rho_per_col=1e-5, lower=-1e4, upper=1e4),  # tiny eps, wide universe
        dict(dist="normal", q=0.9, rho_per_col=2e-3, lower=-10.0, upper=10.0),
        dict(dist="chi2", q=0.5, rho_per_col=5e-4, lower=0.0, upper=1e3),  # PLAN's scale step
        dict(dist="cauchy", q=0.3, rho_per_col=1e-3, lower=-50.0, upper=50.0),  # beyond the universe
        dict(dist="ties", q=0.5, rho_per_col=1e-3, lower=-5.0, upper=5.0),
    ],
)
def test_column_sampler_draws_the_exact_distribution(case):
    """Kolmogorov-Smirnov distance of 12000 draws of the many-columns sampler (every column
    the same data, so each column is one draw) to the exact CDF of the exponential
    mechanism, at the 1e-3 level (critical value 1.95 / sqrt(12000))."""
    rng = np.random.default_rng(20)
    n = 400
    base = {"normal": rng.normal(size=n), "chi2": rng.chisquare(1, size=n),
            "cauchy": rng.standard_cauchy(size=n),
            "ties": np.round(rng.normal(size=n), 1)}[case["dist"]]
    d, calls = 2000, 6
    X = np.repeat(base[:, None], d, axis=1)
    eps = np.sqrt(8 * case["rho_per_col"])
    draws = np.concatenate([
        Q._em_columns(X, None, q=case["q"], eps=eps, lower=case["lower"], upper=case["upper"], rng=rng)
        for _ in range(calls)])
    assert np.all((draws >= case["lower"]) & (draws <= case["upper"]))
    srt = np.sort(draws)
    F = _exact_cdf(base, case["q"], eps, case["lower"], case["upper"], srt)
    m = srt.size
    ks = max(np.max(np.arange(1, m + 1) / m - F), np.max(F - np.arange(m) / m))
    assert ks < 1.95 / np.sqrt(m), ks
