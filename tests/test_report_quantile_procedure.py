"""egmbook.report_quantile_procedure: the report's bisection for Figure 2's radii."""

import math

import pytest

from egmbook import report_quantile_procedure as rq
from egmbook.experiments import zipf_sigmas
from egmlib import gchisq


def _ct_weights(d, alpha):
    s = zipf_sigmas(d, alpha=alpha)
    return s / s.sum()


def test_bisection_returns_midpoint_not_the_tested_point():
    tr = rq.report_bisection(lambda c: math.exp(-c), p=0.01)
    lo, hi = tr.bracket
    assert tr.value == 0.5 * (lo + hi)
    assert tr.last_point in (lo, hi) and tr.last_point == tr.points[-1]
    assert abs(math.exp(-tr.last_point) - 0.01) <= 0.001          # the stopping rule
    assert tr.value != tr.last_point and abs(tr.value - tr.last_point) == 0.5 * (hi - lo)
    for c in tr.points:                                            # dyadic evaluation points
        assert float(c * 2**20).is_integer()


def test_issue_example_d100_n1e3_alpha01():
    """F(1.5) passes the test, the upper end becomes 1.5 and (1 + 1.5)/2 = 1.25 is returned."""
    w = _ct_weights(100, 0.1)
    tr = rq.exact_report_radius(w, p=1e-3)
    assert (tr.points[:3], tr.last_point, tr.value) == ((1.0, 2.0, 1.5), 1.5, 1.25)
    exact = float(gchisq.isf(1e-3, w=w))
    assert exact == pytest.approx(1.49807, abs=1e-5)
    assert 1e3 * float(gchisq.sf(1.25, w=w)) == pytest.approx(46.8, abs=0.05)


@pytest.mark.parametrize("d,alpha,p", [(10, 0.5, 1e-2), (100, 1.0, 1e-3), (1000, 2.0, 1e-6)])
def test_chernoff_screen_does_not_change_the_run(d, alpha, p):
    w = _ct_weights(d, alpha)
    law = gchisq.WeightedChiSquare(w)
    plain = rq.report_bisection(lambda c: float(law.sf(c)), p=p)
    screened = rq.exact_report_radius(w, p=p)
    assert plain == screened


def test_reproducing_path_of_the_exact_run_needs_no_error():
    w = _ct_weights(10, 1.0)
    tr = rq.exact_report_radius(w, p=1e-3)
    path = rq.reproducing_path(w, p=1e-3, value=tr.value)
    assert path.exact and path.max_required_error == 0.0
    assert path.points == tr.points and path.last_point == tr.last_point


@pytest.mark.parametrize("scale", [0.3, -0.3, 0.8])
def test_reproducing_path_finds_at_most_the_error_used(scale):
    """A run under a tail perturbed by at most |scale| p is found with eps* <= |scale|."""
    w = _ct_weights(100, 0.5)
    p = 1e-3
    law = gchisq.WeightedChiSquare(w)
    perturbed = lambda c: float(law.sf(c)) + scale * p * math.cos(7.0 * c)  # noqa: E731
    tr = rq.report_bisection(perturbed, p=p)
    path = rq.reproducing_path(w, p=p, value=tr.value)
    assert path.points == tr.points
    assert path.max_required_error <= abs(scale) + 1e-9


def test_unreachable_values():
    w = _ct_weights(10, 1.0)
    # every float is a dyadic rational, but 0.3 (54 bits) needs a CDF error of ~95/n
    assert rq.reproducing_path(w, p=1e-2, value=0.3).max_required_error > 50
    # 3 is the first bisection point of the bracket [2, 4]: evaluated, so never returned
    path = rq.reproducing_path(w, p=1e-2, value=3.0)
    assert math.isinf(path.max_required_error) and path.points == () and path.last_point is None


def test_published_radii_examples():
    """Two published radii: one the exact CDF reproduces, one that needs about 0.54/n."""
    w = _ct_weights(100, 0.1)
    path = rq.reproducing_path(w, p=1e-3, value=1.25)
    assert path.exact and path.last_point == 1.5
    s = zipf_sigmas(10, alpha=7.5)
    path = rq.reproducing_path(s * s, p=1e-6, value=24.9375)
    assert path.last_point == 24.875
    assert 0.5 < path.max_required_error < 0.55


def test_snap_to_dyadic():
    assert rq.snap_to_dyadic(0.00123596191406) == 81 / 65536
    assert rq.snap_to_dyadic(6.875) == 6.875
    with pytest.raises(ValueError, match="dyadic"):
        rq.snap_to_dyadic(0.3)
    assert rq.snap_to_dyadic(5e-324, max_log2_denominator=1074) == 5e-324   # 2^-1074
    assert rq.snap_to_dyadic(0.3, max_log2_denominator=1074, rtol=1e-300) == 0.3  # exact at m = 54


@pytest.mark.parametrize("kwargs,match", [
    ({"p": 0.0}, "p must lie"), ({"p": 1.5}, "p must lie"), ({"p": 0.1, "max_steps": 0}, "max_steps")])
def test_validation_bisection(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rq.report_bisection(lambda c: math.exp(-c), **kwargs)


def test_validation_path():
    with pytest.raises(ValueError, match="value"):
        rq.reproducing_path([1.0, 1.0], p=0.1, value=-1.0)
    with pytest.raises(ValueError, match="w must"):
        rq.reproducing_path([-1.0, 1.0], p=0.1, value=1.0)


def test_tail_values_are_checked():
    with pytest.raises(ValueError, match="tail"):
        rq.report_bisection(lambda c: math.nan, p=0.1)
    with pytest.raises(TypeError, match="tail"):
        rq.report_bisection("exp", p=0.1)


def test_chernoff_screened_points_have_no_ratio():
    """Where a Chernoff bound decided, the exact tail was not computed: None, not NaN."""
    w = [1.0] * 50                                  # chi^2_50: 1, 2, ..., 32 lie far below the mean
    path = rq.reproducing_path(w, p=0.01, value=rq.exact_report_radius(w, p=0.01).value)
    assert path.tail_ratio[:5] == (None,) * 5 and path.required_error[:5] == (0.0,) * 5
    assert all(r is None or math.isfinite(r) for r in path.tail_ratio)


def test_bisection_that_cannot_bracket_raises():
    with pytest.raises(RuntimeError, match="doublings"):
        rq.report_bisection(lambda c: 0.5, p=0.1, max_steps=10)


def test_one_report_bisection_shared_with_the_library():
    """The book's procedure is the library's (issue 19): the chi2comb backend of
    gchisq.isf and this module run the same code, which returns the bracket's midpoint."""
    assert rq.report_bisection is gchisq.report_bisection
    assert rq.BisectionTrace is gchisq.BisectionTrace
    tr = gchisq.report_bisection(lambda c: math.exp(-c), p=0.01)
    assert (tr.last_point, tr.value) == (4.625, 4.5625)
