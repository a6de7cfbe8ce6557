"""Sections 4c and 4d's findings (egmbook.findings.theorem4) on Figure 2's grid."""

from __future__ import annotations

import dataclasses
import math

import pytest

from egmbook.findings import theorem4 as th4


@pytest.fixture(scope="module")
def grid():
    return th4.theorem4_grid()


def test_theorem4_holds_at_seven_points_and_bounds_the_exact_error(grid):
    assert len(grid.points) == 108 and grid.ok and grid.exact_ok
    assert grid.glue() == {"thm4-points": 7, "thm4-ratio-min": grid.ratio_min, "thm4-ratio-max": grid.ratio_max}
    assert 1.0 < grid.ratio_min <= grid.ratio_max < 1.2
    assert not dataclasses.replace(grid, consistent=False).ok
    assert not dataclasses.replace(grid, same_path=False).exact_ok


def test_outside_the_condition_the_formula_falls_below(grid):
    out = th4.outside_condition()
    assert out.ok and out.n_outside == 101 and out.n_below == 58
    assert all(not grid.points[k].bound.holds for k in out.below)
    assert 2 < out.one_coordinate_n < 1000
    assert not dataclasses.replace(out, after=False).ok


def test_laurent_massart_bounds_everywhere():
    lm = th4.laurent_massart()
    assert lm.ok and lm.useful_ok and 1.0 <= lm.ratio_min < lm.ratio_max < 2.2
    assert math.isclose(lm.ratio_max, lm.one_coord, rel_tol=1e-9)
    assert not dataclasses.replace(lm, tail_ok=False).ok


def test_section6_needs_sqrt_log_n():
    s = th4.Section6(True, 300, 0.02, 1e-4, (1.05, 1.77), {"sqrt": 7, "ln": 2}, 7)
    assert s.ok and s.points_ln == 2 and s.literal_1e2 == math.exp(-math.log(100) ** 2)
    assert not dataclasses.replace(s, holds=6).ok
    assert not dataclasses.replace(s, admissible={"sqrt": 7, "ln": 7}).ok


def test_symbolic_checks_hold():
    for check in (th4.second_moments, th4.product_bound, th4.proof_sigma_star, th4.proof_sqrt2):
        result = check()
        assert result.ok and "$" in result.evidence
