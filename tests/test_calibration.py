"""egmlib.calibration: Theorems 1 and 2, the privacy profile, the lecture notes' rho."""

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import integrate, stats

from egmlib import calibration as cal

from conftest import bad_positive, bad_probability, log_delta, log_eps


def mp_profile(sigma, eps, sensitivity=1.0, dps=60):
    """Eq. (2) evaluated literally in 60-digit arithmetic (independent of the library)."""
    with mpmath.workdps(dps):
        s, e, D = mpmath.mpf(sigma), mpmath.mpf(eps), mpmath.mpf(sensitivity)
        return mpmath.ncdf(D / (2 * s) - e * s / D) - mpmath.exp(e) * mpmath.ncdf(-D / (2 * s) - e * s / D)


def pld_profile(sigma, eps):
    """delta from the privacy loss distribution: L ~ N(eta, 2 eta), eta = 1/(2 sigma^2),
    delta = E[(1 - e^(eps - L))_+], integrated numerically (another independent route)."""
    eta = 0.5 / sigma**2
    sd = math.sqrt(2.0 * eta)
    f = lambda z: -math.expm1(eps - (eta + sd * z)) * stats.norm.pdf(z)  # noqa: E731
    z0 = (eps - eta) / sd
    val, _ = integrate.quad(f, z0, np.inf, epsabs=0.0, epsrel=1e-13, limit=200)
    return val


# --------------------------------------------------------------------------- Theorem 2
@given(log_eps, log_delta)
def test_sigma_opt_inverts_profile_and_is_minimal(eps, delta):
    s = cal.sigma_opt(eps=eps, delta=delta)
    assert s > 0 and math.isfinite(s)
    assert abs(cal.privacy_profile(s, eps=eps) / delta - 1.0) <= 1e-10
    # a hair smaller is no longer private: sigma is minimal to 1e-9 relative
    assert cal.privacy_profile(s * (1.0 - 1e-9), eps=eps) > delta


@pytest.mark.parametrize("eps", [1e-3, 0.05, 1.0, 7.0, 120.0, 1e3])
@pytest.mark.parametrize("delta", [1e-15, 1e-9, 1e-4, 0.1, 0.5])
def test_sigma_opt_against_60_digit_profile(eps, delta):
    s = cal.sigma_opt(eps=eps, delta=delta)
    exact = float(mp_profile(s, eps))
    assert abs(exact / delta - 1.0) <= 1e-10
    assert float(mp_profile(s * (1 - 1e-10), eps)) > delta


EVERY_EPS = [1e-300, 1e-100, 1e-10, 1e-3, 1.0, 1e3, 1e6, 1e9, 1e12, 1e14, 1e16, 1e30, 1e100,
             1e200, 1e300, float(np.finfo(float).max)]


@pytest.mark.parametrize("delta", [1e-5, 1e-12, 0.3])
def test_sigma_opt_private_and_minimal_at_every_eps(delta):
    """Issue 14: the exact profile (mpmath, enough digits to resolve
    1/(2 sigma) - eps sigma) at sigma_opt never exceeds delta by more than
    1e-12 relative, for eps from 1e-300 to the largest double, and the next
    smaller double is not private. (The profile exceeded delta by 5.5e-10 at
    eps = 1e12 and was ~1 at 1e100; beyond ~1e12 one ulp of sigma moves the
    profile by more than 1e-12, and sigma_opt is the smallest private double.)"""
    for eps in EVERY_EPS:
        s = cal.sigma_opt(eps=eps, delta=delta)
        assert 0.0 < s < math.inf
        dps = 60 + int(0.6 * max(0.0, math.log10(eps)))
        exact = mp_profile(s, eps, dps=dps)
        assert exact <= delta * (1 + mpmath.mpf(1e-12)), (eps, float(exact / delta - 1))
        below = mp_profile(float(np.nextafter(s, 0.0)), eps, dps=dps)
        assert below > delta * (1 - mpmath.mpf(1e-12)), (eps, float(below / delta - 1))


def test_profile_against_60_digits_on_wide_grid():
    worst = 0.0
    for eps in np.logspace(-3, 3, 13):
        for sigma in np.logspace(-2.5, 4, 27):
            exact = mp_profile(sigma, eps)
            if exact < mpmath.mpf("1e-300"):
                continue
            got = cal.privacy_profile(sigma, eps=eps)
            worst = max(worst, abs(got / float(exact) - 1.0))
    assert worst <= 1e-12


@pytest.mark.parametrize("eps,sigma", [(1e-3, 300.0), (0.1, 5.0), (1.0, 1.0), (1.0, 3.0),
                                       (5.0, 0.3), (30.0, 0.12)])
def test_profile_against_privacy_loss_distribution(eps, sigma):
    assert cal.privacy_profile(sigma, eps=eps) == pytest.approx(pld_profile(sigma, eps), rel=1e-9)


def test_log_profile_far_below_float_range():
    # delta ~ 10^-216935 at eps = 1000, sigma = 1: finite log, matches 60 digits
    got = cal.log_privacy_profile(1.0, eps=1000.0)
    exact = float(mpmath.log(mp_profile(1.0, 1000.0, dps=80)))
    assert got == pytest.approx(exact, rel=1e-13)
    assert cal.privacy_profile(1.0, eps=1000.0) == 0.0  # underflows honestly, no NaN


def test_no_overflow_at_large_eps():
    for eps in (700.0, 710.0, 1e3, 1e4):
        s = cal.sigma_opt(eps=eps, delta=1e-10)
        assert math.isfinite(s) and s > 0
        assert cal.privacy_profile(s, eps=eps) == pytest.approx(1e-10, rel=1e-10)


def test_profile_at_the_ends_of_the_float_range():
    # u = eps sigma - 1/(2 sigma) formed exactly must not lose its sign where 1/(2 sigma)
    # or eps sigma is near or beyond the float range: almost no noise gives delta = 1
    # (privacy_profile(1e-308, eps=1) once came out 0.0), almost infinite noise delta = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for sigma in (1e-300, 1e-308, 2.3e-308, 1e-310, 5e-324):
            assert cal.privacy_profile(sigma, eps=1.0) == 1.0
            assert cal.privacy_profile(sigma, eps=1e-300) == 1.0
        for sigma, eps in ((1e308, 1.0), (2.6e302, 9.3e215), (1.0, 1e308)):
            assert cal.privacy_profile(sigma, eps=eps) == 0.0


@given(log_eps, st.floats(min_value=-3.0, max_value=4.0), st.floats(min_value=1e-6, max_value=0.5))
@example(eps=0.3301861379002528, log_sigma=math.log10(0.07252855336048786), rel=8.751047923058552e-06)
def test_profile_decreasing_in_sigma_and_eps(eps, log_sigma, rel):
    """log delta decreases in sigma and eps, up to its rounding: near delta = 1 (log delta
    near 0) delta itself is rounded to the spacing 2^-53 of the doubles below 1, which is
    an absolute error of that size in log delta (the example above: log delta = -6.4e-12
    rises by 1.1e-16 when eps grows by 9e-6); elsewhere a few units in the last place
    of log delta."""
    s = 10.0**log_sigma
    d0 = cal.log_privacy_profile(s, eps=eps)
    tol = 2.0 * np.finfo(float).eps * max(1.0, abs(d0))
    assert cal.log_privacy_profile(s * (1 + rel), eps=eps) <= d0 + tol
    assert cal.log_privacy_profile(s, eps=eps * (1 + rel)) <= d0 + tol


def test_profile_limits_and_vectorisation():
    assert cal.privacy_profile(np.inf, eps=1.0) == 0.0
    assert cal.privacy_profile(1e-6, eps=1.0) == pytest.approx(1.0, abs=1e-12)
    sig = np.array([[0.5, 1.0], [2.0, 4.0]])
    out = cal.privacy_profile(sig, eps=0.7)
    assert out.shape == (2, 2)
    assert np.all(np.diff(out.ravel()) < 0)
    assert out[1, 0] == cal.privacy_profile(2.0, eps=0.7)


@given(log_eps, log_delta, st.floats(min_value=-6.0, max_value=6.0).map(lambda x: 10.0**x))
def test_sensitivity_scales_sigma_linearly(eps, delta, D):
    s1 = cal.sigma_opt(eps=eps, delta=delta)
    sD = cal.sigma_opt(eps=eps, delta=delta, sensitivity=D)
    assert sD == pytest.approx(D * s1, rel=1e-14)
    assert cal.privacy_profile(sD, eps=eps, sensitivity=D) == pytest.approx(delta, rel=1e-10)


@pytest.mark.parametrize("eps", [1e-3, 0.3, 1.0, 30.0, 1e3])
@pytest.mark.parametrize("delta", [1e-15, 1e-7, 1e-3, 0.5])
def test_agrees_with_dp_accounting(eps, delta):
    dp_accounting = pytest.importorskip("dp_accounting")
    theirs = dp_accounting.get_sigma_gaussian(eps, delta)  # (epsilon, delta) order
    assert cal.sigma_opt(eps=eps, delta=delta) == pytest.approx(theirs, rel=1e-9)


@given(log_eps, log_delta)
def test_eps_from_sigma_inverts_sigma_opt(eps, delta):
    s = cal.sigma_opt(eps=eps, delta=delta)
    assert cal.eps_from_sigma(s, delta=delta) == pytest.approx(eps, rel=1e-8)


def test_eps_from_sigma_zero_when_already_zero_eps_private():
    # 2 Phi(1/(2 sigma)) - 1 <= delta  =>  (0, delta)-DP
    assert cal.eps_from_sigma(1e4, delta=0.1) == 0.0


# --------------------------------------------------------------------------- Theorem 1
@given(st.floats(min_value=1e-3, max_value=0.999), log_delta)
def test_classical_sigma_is_private_and_not_below_sigma_opt(eps, delta):
    sc = cal.sigma_classical(eps=eps, delta=delta)
    assert cal.sigma_opt(eps=eps, delta=delta) <= sc
    assert cal.privacy_profile(sc, eps=eps) <= delta  # Theorem 1's claim, checked exactly


def test_classical_formula_value():
    # Delta sqrt(2 ln(1.25/delta)) / eps at a hand-checkable point: ln(1.25/(1.25 e^-2)) = 2
    assert cal.sigma_classical(eps=0.5, delta=1.25 * math.exp(-2.0), sensitivity=3.0) == \
        pytest.approx(3.0 * 2.0 / 0.5, rel=1e-15)


@given(st.floats(min_value=1.0, max_value=1e6))
def test_classical_refuses_eps_at_least_one(eps):
    with pytest.raises(ValueError, match=r"eps must be < 1 .*sigma_opt"):
        cal.sigma_classical(eps=eps, delta=1e-5)


# --------------------------------------------------------------------------- rho (zCDP)
@given(st.floats(min_value=-6.0, max_value=3.0).map(lambda x: 10.0**x), log_delta,
       st.floats(min_value=1e-3, max_value=1e3))
def test_zcdp_rho_calibration_is_private(rho, delta, D):
    """Bun and Steinke: N(0, D^2/(2 rho)) noise is rho-zCDP, hence (rho + 2 sqrt(rho ln(1/delta)), delta)-DP."""
    eps = cal.rho_to_eps(rho, delta=delta)
    assert eps == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-14)
    s = cal.sigma_from_rho(rho, sensitivity=D)
    assert s == pytest.approx(D / math.sqrt(2 * rho), rel=1e-15)
    assert cal.privacy_profile(s, eps=eps, sensitivity=D) <= delta * (1 + 1e-12)
    # ... and it is a bound, not the exact curve: the exact eps is smaller
    assert cal.eps_from_sigma(s, delta=delta, sensitivity=D) < eps


@given(st.floats(min_value=-6.0, max_value=3.0).map(lambda x: 10.0**x), log_delta,
       st.floats(min_value=1e-3, max_value=1e3))
def test_lecture_notes_parameter_is_a_named_conversion(rho_notes, delta, D):
    """The notes' noise N(0, D^2/rho_notes) and epsilon, through rho_from_lecture_notes."""
    rho = cal.rho_from_lecture_notes(rho_notes)
    assert rho == rho_notes / 2 and cal.lecture_notes_rho(rho) == rho_notes
    assert cal.sigma_from_rho(rho, sensitivity=D) == pytest.approx(D / math.sqrt(rho_notes), rel=1e-15)
    notes_eps = math.sqrt(rho_notes) / 2 * (math.sqrt(rho_notes) + 2 * math.sqrt(2 * math.log(1 / delta)))
    assert cal.rho_to_eps(rho, delta=delta) == pytest.approx(notes_eps, rel=1e-14)


@given(st.floats(min_value=-8.0, max_value=4.0).map(lambda x: 10.0**x), log_delta)
def test_eps_to_rho_inverts_rho_to_eps(rho, delta):
    assert cal.eps_to_rho(cal.rho_to_eps(rho, delta=delta), delta=delta) == pytest.approx(rho, rel=1e-12)


# --------------------------------------------------------------------------- validation
bad_pos = bad_positive
bad_prob = bad_probability


@given(bad_pos)
def test_bad_eps_rejected_everywhere(eps):
    for call in (lambda: cal.sigma_opt(eps=eps, delta=1e-5),
                 lambda: cal.sigma_classical(eps=eps, delta=1e-5),
                 lambda: cal.privacy_profile(1.0, eps=eps)):
        with pytest.raises(ValueError, match=r"eps must be finite and > 0"):
            call()


@given(bad_prob)
def test_bad_delta_rejected_everywhere(delta):
    for call in (lambda: cal.sigma_opt(eps=1.0, delta=delta),
                 lambda: cal.sigma_classical(eps=0.5, delta=delta),
                 lambda: cal.rho_to_eps(1.0, delta=delta),
                 lambda: cal.eps_from_sigma(1.0, delta=delta)):
        with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\)"):
            call()


@given(bad_pos)
def test_bad_sensitivity_rho_and_sigma_rejected(x):
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0"):
        cal.sigma_opt(eps=1.0, delta=1e-5, sensitivity=x)
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        cal.sigma_from_rho(x)
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        cal.rho_to_eps(x, delta=1e-5)
    if not (isinstance(x, float) and x == math.inf):
        with pytest.raises(ValueError, match="sigma must be > 0"):
            cal.privacy_profile(x, eps=1.0)


def test_sigma_array_with_one_bad_entry_rejected():
    with pytest.raises(ValueError, match="sigma must be > 0"):
        cal.privacy_profile([1.0, -2.0], eps=1.0)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        cal.privacy_profile([1.0, math.nan], eps=1.0)


def test_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        cal.sigma_opt(1.0, 1e-5)  # type: ignore[misc]


@pytest.mark.parametrize("bad", [True, "1.0", None, 1 + 1j, [1.0]])
def test_wrong_types_are_type_errors(bad):
    with pytest.raises(TypeError, match="eps must be a real number"):
        cal.sigma_opt(eps=bad, delta=1e-5)
    with pytest.raises(TypeError, match="delta must be a real number"):
        cal.eps_from_sigma(1.0, delta=bad)


def test_sigma_arrays_of_the_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match="sigma must hold real numbers, got strings"):
        cal.privacy_profile(["1.0", "2.0"], eps=1.0)
    with pytest.raises(TypeError, match="sigma must hold real numbers, got booleans"):
        cal.privacy_profile([True, True], eps=1.0)


def test_overflowing_results_are_value_errors():
    with pytest.raises(ValueError, match="sigma_opt overflows.*sensitivity"):
        cal.sigma_opt(eps=1.0, delta=1e-5, sensitivity=1e308)
    with pytest.raises(ValueError, match="sigma overflows.*sensitivity"):
        cal.sigma_classical(eps=0.5, delta=1e-5, sensitivity=1e308)
    # large but representable results are returned, without overflow in between
    assert cal.eps_to_rho(1e300, delta=1e-5) == pytest.approx(1e300, rel=1e-12)
    assert cal.rho_to_eps(1e306, delta=1e-5) == pytest.approx(1e306, rel=1e-12)
    assert cal.sigma_from_rho(5e-324) == pytest.approx(1 / math.sqrt(1e-323), rel=1e-6)
