"""The off-model datasets (egmbook.offmodel_data): shapes, seeding, moments, the public box, sigma."""

from __future__ import annotations

import dataclasses
import inspect
import math
import socket

import numpy as np
import pytest

from egmbook import offmodel_data as od

ALL = tuple(od.DATASETS)
#: the synthetic families whose box is drawn from their law (the others: support or design)
LAW_BOXES = tuple(n for n in od.SYNTHETIC if od.DATASETS[n].box.rule.startswith("the law"))
#: laws without a finite fourth moment: their sample variance converges slowly
HEAVY = ("t3", "t4", "lomax_n1e5")


def test_registry_lists_real_and_synthetic_data():
    assert len(od.REAL) >= 7 and len(od.SYNTHETIC) >= 20
    assert set(od.REAL) | set(od.SYNTHETIC) == set(od.DATASETS)
    assert not set(od.REAL) & set(od.SYNTHETIC)
    for spec in od.DATASETS.values():
        assert spec.kind in ("real", "synthetic") and spec.description and spec.box.rule
        assert (spec.law is None) == (spec.kind == "real")
    # every family the issues ask for
    for name in ("t3", "t4", "lognormal", "gamma", "ar1", "equicorrelated", "mixture", "sigma_x0.5", "sigma_x2",
                 "baskets_n1e4", "baskets_n1e5", "poisson", "negbin", "likert", "lomax_n1e5", "far_mean",
                 "gaussian_n1e2", "gaussian_n1e3", "gaussian_n1e5", "gaussian_n1e6"):
        assert name in od.SYNTHETIC
    # at least three real datasets with n >= 5000 (the condition)
    assert sum(od.DATASETS[n].n >= 5000 for n in od.REAL) >= 3
    # the API page's table of boxes is built from the specs
    for name, spec in od.DATASETS.items():
        assert f"``{name}``" in od.__doc__ and spec.box.rule in od.__doc__


@pytest.mark.parametrize("name", ALL)
def test_every_dataset_loads_with_its_shape_inside_its_box(name):
    spec = od.DATASETS[name]
    s = od.load(name, seed=11)
    assert s.name == name and s.X.shape == (spec.n, spec.d)
    assert s.X.dtype == np.float64 and s.X.flags.c_contiguous and not s.X.flags.writeable
    assert np.all(np.isfinite(s.X))
    assert s.mean.shape == s.sd.shape == s.sigma.shape == (spec.d,)
    assert np.all(s.sd >= 0) and np.all(s.sigma > 0)
    assert (s.lower, s.upper) == od.box(name) == (spec.box.lower, spec.box.upper)
    # nothing to clamp: real data lie in their documented ranges, bounded laws in their support,
    # and an entry of an unbounded law leaves its box with probability <= 1e-12
    assert s.outside_fraction() == 0.0
    assert s.X.min() >= s.lower and s.X.max() <= s.upper
    assert s.population == (spec.kind == "synthetic")
    if spec.kind == "real":
        assert np.allclose(s.mean, s.X.mean(axis=0)) and np.allclose(s.sd, s.X.std(axis=0))


def test_real_datasets_name_their_source_and_columns():
    shapes = {"digits": (1797, 64), "breast_cancer": (569, 30), "wine": (178, 13), "diabetes": (442, 10),
              "fair": (6366, 9), "randhie": (20190, 10), "alcohol": (9822, 28), "k401ksubs": (9275, 9),
              "labsup": (31857, 19), "stackloss": (21, 4), "hprice1": (88, 6), "gpa1": (141, 29),
              "crime1": (2725, 13)}
    assert set(shapes) == set(od.REAL)
    for name, shape in shapes.items():
        spec = od.DATASETS[name]
        assert (spec.n, spec.d) == shape and len(spec.columns) == spec.d == len(set(spec.columns))
        assert any(c.isdigit() for c in spec.description)  # a year: the source is cited
        for dropped in spec.dropped.split("(")[0].replace(",", " ").split():
            assert dropped not in spec.columns
    assert "agesq" in od.DATASETS["alcohol"].dropped and "incsq" in od.DATASETS["k401ksubs"].dropped
    assert "inc86sq" in od.DATASETS["crime1"].dropped and "lprice" in od.DATASETS["hprice1"].dropped


def test_the_wider_sweep_has_its_kinds():
    """Few rows, more coordinates than rows, mostly zeros, wide boxes and a mean at the corners."""
    assert [od.DATASETS[f"dgtn_d{d}"].n for d in od.WIDE_DS] == [d // 2 for d in od.WIDE_DS] and od.WIDE_DS[-1] == 4096
    assert {od.DATASETS[f"gaussian_n{n}"].n for n in od.SMALL_NS} == {20, 50, 200}
    X = od.load("zeros_n1e4", seed=2).X
    zeros = np.mean(X == 0.0, axis=0)
    assert 0.75 < zeros.min() and zeros.max() < 0.995 and zeros[0] < zeros[-1]
    for k in od.WIDE_BOX_FACTORS:
        s = od.load(f"wide_box_{k}", seed=1)
        assert s.upper == k * s.sd.max() and s.X.shape[0] == 300
    c = od.load("corner", seed=1)
    assert np.all(c.mean[:8] < 5) and np.all(c.mean[8:] > 95) and (c.lower, c.upper) == (0.0, 100.0)
    assert min(od.DATASETS[n].n for n in od.REAL) == 21  # stack loss: 21 rows


def test_real_data_load_from_the_packages_without_the_network(monkeypatch):
    src = inspect.getsource(od)
    assert "fetch_" not in src.replace("``fetch_*``", "")
    assert "get_rdataset" not in src.replace("``get_rdataset``", "")

    def refuse(*args, **kwargs):
        raise OSError("the network is not to be used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    for name in od.REAL:
        s = od.load(name, seed=3)
        assert s.X.shape == (od.DATASETS[name].n, od.DATASETS[name].d)


def test_real_data_do_not_depend_on_the_seed():
    for name in od.REAL:
        a, b = od.load(name, seed=3), od.load(name, seed=[4, 5])
        assert np.array_equal(a.X, b.X) and np.array_equal(a.mean, b.mean)
    assert np.count_nonzero(od.load("digits").sd == 0) == 3  # the three constant pixels


def test_real_data_are_the_documented_columns():
    fair = od.load("fair").X
    for j, top in ((0, 5), (4, 4), (6, 6), (7, 6)):  # codes 1..5, 1..4, 1..6, 1..6
        assert set(np.unique(fair[:, j])) <= set(range(1, top + 1))
    assert set(np.unique(fair[:, 5])) <= {9, 12, 14, 16, 17, 20}  # education codes
    hie = od.load("randhie").X
    assert np.all(hie[:, 1] <= math.log(101) + 1e-12)  # ln(coinsurance + 1), coinsurance <= 100
    for j in (2, 7, 8, 9):
        assert set(np.unique(hie[:, j])) <= {0.0, 1.0}
    # physlm is documented as 0/1, but 5 % of its rows hold fractions (imputed): still in [0, 1]
    assert 0.0 < np.mean((hie[:, 5] > 0) & (hie[:, 5] < 1)) < 0.1 and hie[:, 5].max() == 1.0
    alc = od.load("alcohol").X
    assert set(np.unique(alc[:, 1])) <= {1.0, 2.0, 3.0}  # status
    k401 = od.load("k401ksubs").X
    assert k401[:, 6].min() < 0  # net financial assets can be negative: the box is two-sided


def test_the_box_is_public_it_does_not_move_with_the_data():
    for name in ("digits", "fair", "t3", "baskets_n1e4", "far_mean"):
        spec = od.DATASETS[name]
        a, b = od.load(name, seed=1), od.load(name, seed=2)
        assert (a.lower, a.upper) == (b.lower, b.upper) == od.box(name)

        def shifted(rng, spec=spec):  # the same dataset moved far outside, and rescaled
            X, mean, sd, f = spec._make(rng)
            return 1e9 + 1e3 * X, 1e9 + 1e3 * mean, 1e3 * sd, f

        moved = dataclasses.replace(spec, _make=shifted).sample(1)
        assert (moved.lower, moved.upper) == od.box(name)
        assert moved.outside_fraction() == 1.0  # the estimators will clamp every entry
    with pytest.raises(TypeError, match="name"):
        od.box(np.zeros((3, 2)))  # the box is looked up by name, never computed from data


def test_a_bad_box_is_rejected():
    with pytest.raises(ValueError, match="lower"):
        od.Box(1.0, 1.0, "empty")
    with pytest.raises(ValueError):
        od.Box(0.0, math.inf, "unbounded")


def _round_outwards(x: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten >= |x|, with x's sign (0 for x >= 0 below)."""
    a = abs(x)
    e = math.floor(math.log10(a))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0**e >= a * (1 - 1e-12):
            return math.copysign(m * 10.0**e, x)
    raise AssertionError  # pragma: no cover


def _worst_quantile(fn, p: float, lo: float, hi: float) -> float:
    """The x in [lo, hi] at which the nonincreasing max_j fn(x) crosses p (bisection)."""
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if fn(mid) > p:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize("name", LAW_BOXES)
def test_a_law_box_is_the_rounded_quantile_of_the_law(name):
    spec = od.DATASETS[name]
    law = spec.law()
    assert od.outside_probability(name) <= od.OUTSIDE_PROBABILITY
    half = od.OUTSIDE_PROBABILITY / 2
    upper = _worst_quantile(lambda x: float(np.max(law.sf(x))), half, -1e9, 1e9)
    lower = -_worst_quantile(lambda x: float(np.max(law.cdf(-x))), half, -1e9, 1e9)
    assert spec.box.upper == _round_outwards(upper)
    assert spec.box.lower == (0.0 if lower >= -1e-9 else _round_outwards(lower))  # counts: P(x < 0) = 0
    # so the box is not looser than a 1-2-5 rounding: it is at most 2.5 times the quantile
    assert spec.box.upper <= 2.5 * upper


def test_bounded_families_have_their_support_as_the_box():
    assert od.box("baskets_n1e5") == (0.0, 1.0) and od.box("likert") == (1.0, 7.0)
    for name in ("baskets_n1e4", "likert", "far_mean", "poisson", "gamma"):
        assert od.outside_probability(name) <= od.OUTSIDE_PROBABILITY
    assert od.outside_probability("baskets_n1e4") == od.outside_probability("likert") == 0.0


@pytest.mark.parametrize("name", [n for n in od.SYNTHETIC if n not in ("gaussian_n1e6", "baskets_n1e5")])
def test_population_moments_are_the_laws_and_agree_with_samples(name):
    spec = od.DATASETS[name]
    law = spec.law()
    s = od.load(name, seed=0)
    # the stated moments are the law's (scipy.stats, or the exact mixture / categorical laws)
    assert np.allclose(law.mean(), s.mean, rtol=1e-12, atol=1e-12)
    assert np.allclose(law.std(), s.sd, rtol=1e-10, atol=0.0)
    # pooled over seeds to at least 20 000 rows (the two largest families: their own tests)
    seeds = max(1, math.ceil(20_000 / spec.n))
    N, s1, s2, s4 = 0, 0.0, 0.0, 0.0
    for seed in range(seeds):
        D = od.load(name, seed=[7, seed]).X - s.mean
        D2 = D * D  # D**4 as (D * D)**2: numpy's power would take most of the test's time at d = 4096
        N, s1, s2, s4 = N + D.shape[0], s1 + D.sum(axis=0), s2 + D2.sum(axis=0), s4 + np.einsum("ij,ij->j", D2, D2)
    m1, m2, m4 = s1 / N, s2 / N, s4 / N
    z = m1 / (s.sd / math.sqrt(N))
    assert np.max(np.abs(z)) < 5.5, (name, float(np.max(np.abs(z))))
    var = m2 - m1 * m1
    ratio = var / s.sd**2
    if name in HEAVY:
        # no finite fourth moment, so the sample variance is erratic: the law's quantiles instead
        X = od.load(name, seed=[7, 0]).X
        q = (0.1, 0.5, 0.9)
        emp = np.quantile(X, q, axis=0)
        exact = np.array([law.ppf(p) for p in q])
        se = np.array([math.sqrt(p * (1 - p) / X.shape[0]) for p in q])[:, None] / law.pdf(exact)
        assert np.all(np.abs(emp - exact) <= 6 * se), (name, float(np.max(np.abs(emp - exact) / se)))
    else:
        # the sample variance's sd is about sqrt((kurtosis - 1) / N) var; the second term is
        # the square of the mean's error, which is all there is when the kurtosis is 1 (p = 1/2)
        kurt = m4 / m2**2
        tol = 6.0 * np.sqrt(np.maximum(kurt - 1.0, 0.0) / N) + 40.0 / N
        assert np.all(np.abs(ratio - 1.0) <= tol), (name, float(np.max(np.abs(ratio - 1.0) / tol)))


def test_the_largest_family_has_its_moments():
    s = od.load("gaussian_n1e6", seed=0)
    assert s.X.shape == (10**6, 8)
    z = (s.X.mean(axis=0) - s.mean) / (s.sd / 1e3)
    assert np.max(np.abs(z)) < 5.0
    assert np.allclose(s.X.std(axis=0) / s.sd, 1.0, atol=0.005)


@pytest.mark.parametrize("name", [n for n in od.SYNTHETIC if od.DATASETS[n].n * od.DATASETS[n].d <= 3e6])
def test_seeding_is_reproducible_and_data_read_only(name):
    a, b, c = od.load(name, seed=7), od.load(name, seed=[7]), od.load(name, seed=8)
    assert np.array_equal(a.X, od.load(name, seed=7).X)
    assert a.X.shape == b.X.shape
    assert not np.array_equal(a.X, c.X)
    assert not a.X.flags.writeable


def test_baskets_are_sparse_binary_with_zipf_frequencies():
    s = od.load("baskets_n1e4", seed=5)
    assert set(np.unique(s.X)) == {0.0, 1.0}
    p = 0.5 / np.arange(1, 513)
    assert np.array_equal(s.mean, p) and np.allclose(s.sd, np.sqrt(p * (1 - p)))
    assert abs(s.X.mean() - p.mean()) < 6 * math.sqrt(p.mean() / s.X.size)
    # independent items: the number of items in a basket has the Poisson-binomial variance
    sizes = s.X.sum(axis=1)
    assert abs(sizes.var() / np.sum(p * (1 - p)) - 1) < 0.1
    big = od.load("baskets_n1e5", seed=5)
    assert big.X.shape == (100_000, 512) and np.array_equal(big.mean, p)
    counts = big.X.sum(axis=0)  # Binomial(1e5, p_j) each
    z = (counts - 1e5 * p) / np.sqrt(1e5 * p * (1 - p))
    assert np.max(np.abs(z)) < 5.5 and abs(float(np.mean(z))) < 6 / math.sqrt(512)


def test_counts_are_integers_with_the_stated_dispersion():
    po, nb = od.load("poisson", seed=2), od.load("negbin", seed=2)
    for s in (po, nb):
        assert np.array_equal(s.X, np.round(s.X)) and s.X.min() == 0
    lam = po.mean
    assert math.isclose(lam[0], 0.5) and math.isclose(lam[-1], 50.0) and np.allclose(po.sd, np.sqrt(lam))
    assert np.allclose(nb.mean, lam) and np.allclose(nb.sd**2, lam + lam**2 / 2)
    assert np.all(nb.X.var(axis=0)[32:] > 3 * po.X.var(axis=0)[32:])  # overdispersed


def test_likert_items_are_tied_skewed_and_correlated():
    s = od.load("likert", seed=4)
    five, seven = s.X[:, :12], s.X[:, 12:]
    assert set(np.unique(five)) == set(range(1, 6)) and set(np.unique(seven)) == set(range(1, 8))
    assert np.all(five <= 5)
    # heavy ties: every item takes at most 7 values, the commonest on at least a quarter of the rows
    for j in range(s.X.shape[1]):
        _, counts = np.unique(s.X[:, j], return_counts=True)
        assert counts.max() >= 0.25 * s.X.shape[0]
    # the category probabilities are the stated patterns
    p = od.LIKERT_PATTERNS[5][0]
    freq = np.bincount(five[:, 0].astype(int), minlength=6)[1:] / s.X.shape[0]
    assert np.allclose(freq, p, atol=0.015)
    # one latent factor: every two items are positively correlated
    C = np.corrcoef(s.X, rowvar=False)
    assert C[np.triu_indices_from(C, 1)].min() > 0.15


def test_one_sided_tail_and_far_mean():
    s = od.load("lomax_n1e5", seed=3)
    W = (s.X - s.mean) / s.sd
    assert W.min() > -0.45 and W.max() > 30  # bounded below, a long right tail
    assert float(np.mean(W**3)) > 3
    f = od.load("far_mean", seed=3)
    centre = 0.5 * (f.lower + f.upper)
    assert np.all(f.mean - centre == 40.0) and np.all(f.sd == 1.0)


def test_correlations_are_as_stated():
    W = (od.load("ar1", seed=2).X - od.FAMILY_MU) / od.family_sigmas()
    assert abs(np.corrcoef(W[:, 10], W[:, 11])[0, 1] - 0.8) < 0.03
    assert abs(np.corrcoef(W[:, 10], W[:, 12])[0, 1] - 0.64) < 0.03
    W = (od.load("equicorrelated", seed=2).X - od.FAMILY_MU) / od.family_sigmas()
    assert abs(np.corrcoef(W[:, 3], W[:, 200])[0, 1] - 0.5) < 0.03


def test_skewed_families_are_skewed_and_symmetric_ones_are_not():
    def skew(name):
        W = (od.load(name, seed=5).X[:, :20] - od.FAMILY_MU) / od.family_sigmas()[:20]
        return float(np.mean(W ** 3))
    assert skew("lognormal") > 3.0 and skew("gamma") > 2.0 and skew("mixture") > 1.0
    assert abs(skew("t10")) < 0.3 and abs(skew("ar1")) < 0.2


def test_sigma_given_to_oracle_arms_is_floored_and_misestimated():
    s = od.load("digits")
    assert np.all(s.sigma >= od.SIGMA_FLOOR_SHARE * s.sd.mean() - 1e-12)
    assert np.all(s.sigma > 0)
    g, half, double = (od.load(n, seed=0) for n in ("t10", "sigma_x0.5", "sigma_x2"))
    assert np.allclose(half.sigma, 0.5 * half.sd) and np.allclose(double.sigma, 2.0 * double.sd)
    assert np.array_equal(half.X, double.X)  # same data, different sigma given
    assert np.allclose(g.sigma, g.sd)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="name"):
        od.load("iris")
    with pytest.raises(ValueError, match="name"):
        od.box("iris")
    with pytest.raises(ValueError, match="name"):
        od.outside_probability("digits")  # real data have no law
    with pytest.raises(TypeError, match="seed"):
        od.load("wine", seed="1")
    with pytest.raises(TypeError, match="seed"):
        od.load("wine", seed=True)
    with pytest.raises(ValueError, match="seed"):
        od.load("wine", seed=-1)


def test_every_dataset_has_a_distinct_title_without_internal_tokens():
    assert set(od.TITLES) == set(od.DATASETS)
    titles = list(od.TITLES.values())
    assert len(set(titles)) == len(titles)
    assert not [t for t in titles if "_" in t or t != t.strip()]
