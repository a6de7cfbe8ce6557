"""The off-model datasets (egmbook.offmodel_data): shapes, seeding, moments, box, sigma."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from egmbook import offmodel_data as od


def test_registry_lists_real_and_synthetic_data():
    assert len(od.REAL) >= 3 and len(od.SYNTHETIC) >= 8
    assert set(od.REAL) | set(od.SYNTHETIC) == set(od.DATASETS)
    for spec in od.DATASETS.values():
        assert spec.kind in ("real", "synthetic") and spec.description
    # every family the issue asks for
    for name in ("t3", "t4", "lognormal", "gamma", "ar1", "equicorrelated", "mixture",
                 "sigma_x0.5", "sigma_x2"):
        assert name in od.SYNTHETIC


def test_real_data_load_from_the_package_without_download():
    src = inspect.getsource(od)
    assert "fetch_" not in src.replace("``fetch_*``", "")
    expected = {"digits": (1797, 64), "breast_cancer": (569, 30), "wine": (178, 13),
                "diabetes": (442, 10)}
    for name, shape in expected.items():
        s = od.load(name, seed=3)
        assert s.X.shape == shape == (od.DATASETS[name].n, od.DATASETS[name].d)
        assert not s.population
        assert np.allclose(s.mean, s.X.mean(axis=0)) and np.allclose(s.sd, s.X.std(axis=0))
        assert np.array_equal(s.X, od.load(name, seed=4).X)  # the seed does not change real data
    assert np.count_nonzero(od.load("digits").sd == 0) == 3  # the three constant pixels


@pytest.mark.parametrize("name", ["t3", "t4", "t10", "lognormal", "gamma", "ar1",
                                  "equicorrelated", "mixture", "sigma_x2"])
def test_synthetic_families_have_the_stated_marginal_moments(name):
    s = od.load(name, seed=1)
    n, d = s.X.shape
    assert (n, d) == (od.FAMILY_N, od.FAMILY_D) and s.population
    assert np.array_equal(s.mean, np.full(d, od.FAMILY_MU))
    assert np.allclose(s.sd, od.family_sigmas(d))
    W = (s.X - s.mean) / s.sd  # standardised: mean 0, variance 1 in every coordinate
    # pooled over coordinates (the correlated families pool fewer independent values)
    tol = 6.0 / math.sqrt(n) * (math.sqrt(d) if name == "equicorrelated" else 1.0)
    assert abs(W.mean()) < tol
    var = W.var(axis=0).mean()
    assert abs(var - 1.0) < (0.1 if name.startswith("t3") else 0.03)


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


def test_seeding_is_reproducible_and_data_read_only():
    a, b, c = od.load("t4", seed=7), od.load("t4", seed=[7]), od.load("t4", seed=8)
    assert np.array_equal(a.X, od.load("t4", seed=7).X)
    assert not np.array_equal(a.X, c.X)
    assert a.X.shape == b.X.shape
    assert not a.X.flags.writeable


def test_box_contains_the_data_with_the_stated_margin():
    for name in ("digits", "lognormal"):
        s = od.load(name, seed=0)
        u = od.BOX_FACTOR * np.abs(s.X).max() + od.BOX_OFFSET
        assert (s.lower, s.upper) == (-u, u)
        assert s.X.min() >= s.lower and s.X.max() <= s.upper


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
    with pytest.raises(TypeError, match="seed"):
        od.load("wine", seed="1")
    with pytest.raises(TypeError, match="seed"):
        od.load("wine", seed=True)
    with pytest.raises(ValueError, match="seed"):
        od.load("wine", seed=-1)
