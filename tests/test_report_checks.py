"""Helpers for the checks of Figure 1 and of eqs. (12)-(16) (issue 12)."""

import numpy as np
import pytest
import sympy as sp

from egmbook.experiments import leading_count, zipf_sigmas
from egmlib import symbolic


def test_leading_count_figure1():
    assert [leading_count(zipf_sigmas(100, alpha=a)) for a in (0.1, 1.0, 3.0)] == [99, 95, 6]
    assert [leading_count(zipf_sigmas(100, alpha=a), power=2) for a in (0.1, 1.0, 3.0)] == [99, 38, 2]
    assert leading_count(np.ones(10), share=0.5) == 5
    assert leading_count([5.0, 0.0, 0.0]) == 1


def test_leading_count_validation():
    with pytest.raises(ValueError, match="share"):
        leading_count([1.0, 2.0], share=1.0)
    with pytest.raises(ValueError, match="power"):
        leading_count([1.0, 2.0], power=0)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_printed_steps_equal_the_solve(d):
    P = symbolic.lemma41_problem(d)
    pt, printed = symbolic.solve_stationary_point(P), symbolic.report_printed_steps(P)
    assert all(sp.simplify(a - b) == 0 for a, b in zip(pt.steps["b_of_lambda"], printed.eq12, strict=True))
    assert sp.simplify(pt.steps["constraint_in_lambda"] - printed.eq14) == 0
    assert sp.simplify(pt.multiplier - printed.eq15) == 0
    assert all(sp.simplify(a - b) == 0 for a, b in zip(pt.b, printed.eq16, strict=True))


def test_printed_steps_would_catch_a_wrong_formula():
    P = symbolic.lemma41_problem(2)
    pt = symbolic.solve_stationary_point(P)
    wrong = P.scale / (P.multiplier ** sp.Rational(1, 4) * sp.sqrt(P.params[0]))   # no sqrt(s)
    assert sp.simplify(pt.steps["b_of_lambda"][0] - wrong) != 0


def test_printed_steps_validation():
    with pytest.raises(ValueError, match="Lemma 4.1"):
        symbolic.report_printed_steps(symbolic.theorem3_problem(2))
    with pytest.raises(TypeError, match="problem must be a LagrangeProblem"):
        symbolic.report_printed_steps(None)


def test_leading_count_is_scale_free():
    """No overflow for huge entries, no underflow for tiny ones: only ratios matter."""
    s = zipf_sigmas(100, alpha=1.0)
    for power in (1, 2, 8):
        expected = leading_count(s, power=power)
        assert leading_count(s * 1e300, power=power) == expected
        assert leading_count(s * 1e-300, power=power) == expected
