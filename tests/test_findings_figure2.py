"""Chapter 5's findings (egmbook.findings.figure2): Figure 1's laws, the published Figure 2's factor d
and errors, and the independent Imhof route against the library."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from egmbook.findings import figure2 as f2
from egmlib import gchisq


def test_figure1_counts():
    fig1 = f2.figure1_laws()
    assert fig1.ok and fig1.variance_ok and fig1.counts_std == (99, 95, 6) and fig1.counts_var == (99, 38, 2)
    assert not dataclasses.replace(fig1, laws_ok=False).ok


def test_published_improvements_carry_d():
    dfac = f2.published_d_factor()
    assert dfac.ok and dfac.dev_with_d < 1e-8 < 0.5 < dfac.dev_without_d


def test_imhof_route_matches_closed_forms_and_the_library():
    assert f2._imhof_sf(2.0, np.full(5, 0.2)) == pytest.approx(stats.chi2.sf(10.0, 5), abs=1e-9)
    w = np.array([0.5, 0.3, 0.15, 0.05])
    assert f2._imhof_sf(1.7, w) == pytest.approx(float(gchisq.sf(1.7, w=w)), abs=1e-9)


def test_imhof_quantile_widens_its_bracket(monkeypatch):
    """The quantile is found from a guess off by 1 % or 40 % (the bracket widens), not from one off
    by 3x; the tail is chi2's closed form here (Imhof's quadrature takes most of a second a point)."""
    monkeypatch.setattr(f2, "_imhof_sf", lambda x, w: float(stats.chi2.sf(x / w[0], w.size)))
    exact = float(stats.chi2.isf(1e-3, 5)) / 5
    for guess in (exact * 1.01, exact / 1.4):
        assert f2._imhof_isf(1e-3, np.full(5, 0.2), guess) == pytest.approx(exact, rel=1e-9)
    with pytest.raises(ValueError, match="no quantile within a factor 2"):
        f2._imhof_isf(1e-3, np.full(5, 0.2), 3 * exact)


def test_accuracy_verdict_on_a_built_record():
    d, n, a = np.array([10, 100]), np.array([100, 1000]), np.array([0.1, 0.1])
    rel = {"R": np.array([0.01, 0.2023]), "Cn": np.array([0.06, -0.01]), "Ct": np.array([0.001, 0.166])}
    acc = f2.Accuracy(d, n, a, np.array([1.05, 1.2256]), np.array([1.04, 1.0194]), rel, 1e-8)
    assert acc.ok and acc.worst("R") == (0.2023, 100, 1000, 0.1) and acc.err_r_max == pytest.approx(20.23)
    assert "+20.23% at $d$ = 100" in acc.evidence
    assert not dataclasses.replace(acc, agree=2e-6).ok


def test_published_tails_at_exact_radii_are_one_over_n():
    """At the exact radii n P = 1 and the tail exponent is negative; the published radii give the
    chapter's range."""
    from egmbook import experiments

    exact = experiments.figure2_grid()
    at_exact = f2.published_tails(exact, exact)
    np.testing.assert_allclose(np.concatenate([at_exact.n_tail_n, at_exact.n_tail_t]), 1.0, rtol=1e-6)
    assert np.all(at_exact.eta_n < 0) and np.all(at_exact.eta_t < 0)
    published = f2.published_tails(experiments.load_published_figure2(), exact)
    both = np.concatenate([published.n_tail_n, published.n_tail_t])
    assert np.all(both > 0) and both.max() > 40 and np.sum((both < 0.9) | (both > 1.1)) == 149


def test_simulated_rates_bracket_the_exact_tail():
    from egmbook import experiments

    published = experiments.load_published_figure2()
    exact = f2.published_tails(published, experiments.figure2_grid())
    rows = f2.simulated_ct_rates(published, alphas=(1.0,), draws=40_000, seed=5)
    assert len(rows) == 1 and rows[0].lower < exact.n_tail_t[rows[0].index] < rows[0].upper
    assert rows[0].ct_squared == published.Ct_squared[rows[0].index] and rows[0].lower > 2.1
