"""egmbook.improvement_margin: R >= 1 measured on the scale of Theorem 3's factor."""

import math

import numpy as np
import pytest

from egmbook import improvement_margin as im
from egmbook.experiments import figure2_improvement
from egmlib import gchisq
from egmlib.scaling import egm_improvement


def test_equal_weights_margin_closed_form_d2_n2():
    assert im.equal_weights_margin(2, n=2) == pytest.approx((3 * math.log(2) - 2) / 4, rel=1e-12)


@pytest.mark.parametrize("d,n", [(2, 2), (2, 100), (3, 2), (10, 3), (50, 1000)])
def test_equal_weights_margin_is_the_limit(d, n):
    e = np.zeros(d)
    e[0], e[1] = 0.01, -0.01
    got = im.normalized_margin((1 + e) / d, n=n)
    assert got == pytest.approx(im.equal_weights_margin(d, n=n), abs=2e-3)


def test_equal_weights_margin_positive_and_increasing_in_n():
    for d in (2, 3, 5, 30, 1000, 10**5):
        vals = [im.equal_weights_margin(d, n=n) for n in (2, 3, 10, 1000, 10**6)]
        assert vals[0] > 0.0198 and all(a < b for a, b in zip(vals, vals[1:], strict=False))


def test_normalized_margin_definition_and_equal_sigma():
    s = np.array([3.0, 1.0, 0.5])
    R, rbar = figure2_improvement(s, n=100), egm_improvement(s)
    assert im.normalized_margin(s, n=100) == pytest.approx((R - 1) / (rbar - 1), rel=1e-12)
    with pytest.raises(ValueError, match="not have all entries equal"):
        im.normalized_margin([2.0, 2.0, 2.0], n=10)


def test_log_cdf_is_concave_in_log_weights():
    """Prekopa: u -> log P(sum e^{u_j} Z_j^2 <= x) is concave (midpoint test on random chords)."""
    rng = np.random.default_rng(7)
    for _ in range(25):
        d = int(rng.integers(2, 6))
        u, v = rng.normal(0, 1.5, d), rng.normal(0, 1.5, d)
        x = float(rng.uniform(0.5, 8.0))
        phi = lambda z, x=x: float(gchisq.logcdf(x, w=np.exp(z)))
        assert phi(0.5 * (u + v)) >= 0.5 * (phi(u) + phi(v)) - 1e-9


def test_weight_derivative_identity():
    """dF/dw_j = -f_{Q + w_j chi2_2}(x) = -(F_Q - F_{Q + w_j chi2_2})(x) / (2 w_j)."""
    w = np.array([0.5, 0.3, 0.2])
    x, h = 2.0, 1e-5
    for j in range(3):
        wp, wm = w.copy(), w.copy()
        wp[j] += h
        wm[j] -= h
        fd = (float(gchisq.cdf(x, w=wp)) - float(gchisq.cdf(x, w=wm))) / (2 * h)
        ident = -(float(gchisq.cdf(x, w=w)) - float(gchisq.cdf(x, w=np.r_[w, w[j], w[j]]))) / (2 * w[j])
        assert fd == pytest.approx(ident, rel=1e-5)


def test_certificate_is_sufficient():
    rng = np.random.default_rng(11)
    proved = 0
    for _ in range(12):
        s = rng.lognormal(0.0, 1.0, int(rng.integers(2, 8)))
        n = int(rng.choice([3, 10, 1000]))
        c = im.tangent_certificate(s, n=n)
        assert np.all(c.increments >= 0)
        if c.proves:
            proved += 1
            assert figure2_improvement(s, n=n) >= 1.0
    assert proved >= 10


def test_certificate_fails_near_equal_weights_at_n2_although_R_ge_1():
    c = im.tangent_certificate([0.6, 0.4], n=2)
    assert c.value < -c.tolerance and not c.proves
    assert figure2_improvement([0.6, 0.4], n=2) > 1.0


def test_validation():
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        im.equal_weights_margin(3, n=1)
    with pytest.raises(ValueError, match="d must be an integer >= 2"):
        im.equal_weights_margin(1, n=10)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        im.tangent_certificate([1.0, 0.0], n=10)
    with pytest.raises(ValueError, match="d must be an integer <= 10000000"):
        im.equal_weights_margin(10**8, n=10)


def test_certificate_is_scale_free():
    """R is invariant under rescaling sigma, and so is the certificate (no overflow near 1e308)."""
    c = im.tangent_certificate([3.0, 1.0, 1.0], n=10)
    big = im.tangent_certificate([3e307, 1e307, 1e307], n=10)
    assert big.proves == c.proves and big.value == pytest.approx(c.value, rel=1e-9)


# ------------------------------------------------------------------------------------- #
# the Schur route of chapter 5b
# ------------------------------------------------------------------------------------- #
def test_majorizes_against_definition_and_lemma():
    assert im.majorizes([0.9, 0.1], [0.5, 0.5]) and not im.majorizes([0.5, 0.5], [0.9, 0.1])
    assert im.majorizes([3.0, 2.0, 1.0], [6.0, 4.0, 2.0])          # equal after normalising
    assert not im.majorizes([0.5, 0.4, 0.1], [0.6, 0.2, 0.2])      # incomparable pair
    assert not im.majorizes([0.6, 0.2, 0.2], [0.5, 0.4, 0.1])
    rng = np.random.default_rng(3)
    for _ in range(200):
        s = rng.lognormal(0.0, 1.0, int(rng.integers(2, 20)))
        assert im.majorizes(s * s, s)                             # Lemma 5.E


def test_schur_ostrowski_gap_is_a_directional_derivative():
    """For d = 2 the gap is, up to the factor 2, the derivative of F(x; (1 - t, t)) in t:
    dF/dt = dF/dw_2 - dF/dw_1 = (Delta_1/w_1 - Delta_2/w_2)/2 = gap/2 (w_1 > w_2).
    Checked against a central difference of gchisq's cdf."""
    for x, t in ((3.0, 0.2), (1.5, 0.3), (2.2, 0.45)):
        h = 1e-5
        fd = (float(gchisq.cdf(x, w=[1 - t - h, t + h])) - float(gchisq.cdf(x, w=[1 - t + h, t - h]))) / (2 * h)
        assert im.schur_ostrowski_gap(x, [1 - t, t]) == pytest.approx(2 * fd, rel=1e-4, abs=1e-9)


def test_schur_ostrowski_gap_sign_and_threshold_d2():
    assert im.schur_ostrowski_gap(1.5, [0.7, 0.3]) < 0 < im.schur_ostrowski_gap(2.5, [0.7, 0.3])
    assert im.schur_ostrowski_gap(1.95, [0.58, 0.42]) < 0 < im.schur_ostrowski_gap(2.05, [0.58, 0.42])
    with pytest.raises(ValueError, match="two distinct entries"):
        im.schur_ostrowski_gap(2.0, [1.0, 1.0])
    with pytest.raises(ValueError, match="x must be finite and > 0"):
        im.schur_ostrowski_gap(-1.0, [0.6, 0.4])


def test_schur_threshold_p0():
    assert im.schur_threshold_p0(2, x0=2.0) == pytest.approx(math.exp(-2.0), rel=1e-12)
    vals = [im.schur_threshold_p0(d, x0=2.0) for d in (2, 10, 100, 1000)]
    assert all(a > b for a, b in zip(vals, vals[1:], strict=False)) and vals[-1] < 1e-50


def test_transformed_radius_squared_matches_clipping_radii():
    from egmbook.experiments import clipping_radii
    s = np.array([3.0, 1.0, 0.5, 0.25])
    assert im.transformed_radius_squared(s, n=100) == pytest.approx(clipping_radii(s, p=0.01).Ct_squared, rel=1e-12)


def test_theorem_5e_a_where_the_hypothesis_holds_numerically():
    """Part (a): at sigma with C_t^2 >= 2 where the Schur-Ostrowski gap is >= 0 along the
    segment from sigma to v = sigma^2 / sum sigma^2, R >= 1."""
    for s, n in (([0.6, 0.4], 100), ([3.0, 1.0, 1.0], 10), ([2.0, 1.5, 1.0, 0.5], 1000)):
        s = np.asarray(s) / np.sum(s)
        x = im.transformed_radius_squared(s, n=n)
        assert x >= 2.0
        v = s * s / np.sum(s * s)
        assert all(im.schur_ostrowski_gap(x, (1 - a) * s + a * v) >= 0 for a in (0.0, 0.5, 1.0))
        assert figure2_improvement(s, n=n) >= egm_improvement(s)      # R >= R-bar, not only R >= 1


def test_two_weight_polar_form_matches_gchisq_and_the_gap():
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, t = float(rng.uniform(0.2, 10.0)), float(rng.uniform(0.0, 0.5))
        assert im.two_weight_cdf(x, t) == pytest.approx(float(gchisq.cdf(x, w=[1 - t, t])), abs=1e-11)
        if 0.005 < t < 0.495:
            assert im.two_weight_cdf_slope(x, t) == pytest.approx(im.schur_ostrowski_gap(x, [1 - t, t]) / 2,
                                                                  rel=1e-6, abs=1e-12)


def test_proposition_5f_sign_of_the_slope():
    """Non-negative from x = 2 on (Proposition 5.F), negative near equal weights below 2."""
    for x in (2.0, 2.3, 3.0, 7.0, 30.0):
        assert all(im.two_weight_cdf_slope(x, t) >= 0 for t in np.linspace(0.0, 0.5, 11))
    for x in (1.2, 1.7, 1.97):
        assert im.two_weight_cdf_slope(x, 0.49) < 0
    with pytest.raises(ValueError, match="t must lie in"):
        im.two_weight_cdf(2.0, 0.7)


def test_corollary_5g_two_coordinates_n_at_least_8():
    for n in (8, 9, 20, 1000):
        for t in (0.02, 0.2, 0.4, 0.49):
            s = np.array([1 - t, t])
            assert figure2_improvement(s, n=n) >= egm_improvement(s) >= 1.0


def test_transfer_slope_is_the_derivative_along_a_transfer():
    """Eq. (5.K): a finite difference of gchisq.cdf along w + t (e_max - e_min)."""
    rng = np.random.default_rng(9)
    for _ in range(8):
        w = rng.dirichlet(np.ones(int(rng.integers(2, 7))))
        x = float(rng.uniform(0.5, 5.0))
        i = int(np.argmax(w))
        rest = np.delete(np.arange(w.size), i)
        j = int(rest[np.argmin(w[rest])])
        e = np.zeros(w.size)
        e[i], e[j] = 1.0, -1.0
        h = 1e-5 * w[j]
        fd = (float(gchisq.cdf(x, w=w + h * e)) - float(gchisq.cdf(x, w=w - h * e))) / (2 * h)
        assert im.transfer_slope(x, w) == pytest.approx(fd, rel=1e-4, abs=1e-9)


def test_proposition_5h_mode_below_the_mean_and_level_three():
    rng = np.random.default_rng(10)
    for _ in range(6):
        w = rng.dirichlet(np.full(int(rng.integers(2, 20)), 0.5))
        w = w / w.sum()
        mean = 1 + 2 * (w.max() + np.delete(w, np.argmax(w)).min())
        assert im.augmented_mode(w) < mean <= 3
        assert im.transfer_slope(3.0, w) <= 0 and im.transfer_slope(mean, w) <= 0
        assert im.schur_ostrowski_gap(3.0, w) >= 0
    assert im.augmented_mode([0.5, 0.5]) == pytest.approx(2.0, abs=1e-6)    # chi^2_6 / 2: mode 2


def test_corollary_5i_certificate():
    """R >= R-bar wherever C_t^2 reaches 1 + 2 (v_(1) + v_(2)), v = sigma^2 / sum sigma^2."""
    assert im.schur_concavity_level([0.5, 0.3, 0.2]) == pytest.approx(2.6)
    assert im.schur_concavity_level([1.0, 0.0, 0.0]) == pytest.approx(3.0)
    assert im.schur_concavity_level(np.ones(1000)) == pytest.approx(1.004)
    hits = 0
    for d, a, n in ((10, 1.0, 100), (100, 0.3, 10**4), (1000, 2.0, 100), (30, 0.1, 10**6), (5, 3.0, 12)):
        s = np.arange(1, d + 1, dtype=float) ** -a
        if im.transformed_radius_squared(s, n=n) >= im.schur_concavity_level(s * s):
            hits += 1
            assert figure2_improvement(s, n=n) >= egm_improvement(s) * (1 - 1e-12)
    assert hits >= 4
    with pytest.raises(ValueError, match="w must have at least two entries"):
        im.schur_concavity_level([1.0])
