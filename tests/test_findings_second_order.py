"""Section 4b's findings (egmbook.findings.second_order): Lemma 4.1's derivation and its minimum."""

from __future__ import annotations

import dataclasses

from egmbook.findings import second_order as so


def test_lemma41_scaling_is_not_optimal_with_a_moving_radius():
    f = so.fixed_radius()
    assert f.ok and 1.0 < f.gain_min <= f.gain_max < 1.2 and len(f.cases) == 4
    assert all(c[4] < c[3] for c in f.cases)  # the best scaling puts less weight on the first coordinate
    assert not so.FixedRadius((("(1, 0.5)", 100, 0.999, 0.67, 0.6),)).ok


def test_derivation_checks_hold():
    for finding in (so.lagrangian, so.eq11_index, so.stationary_point, so.hessian_entries):
        result = finding()
        assert result.ok and result.evidence.count("$") >= 2


def test_global_minimum_verdict():
    g = so.GlobalMinimum(True, 1.0094)
    assert g.ok and "1.009400" in g.evidence
    assert not dataclasses.replace(g, smallest=0.99).ok and not dataclasses.replace(g, certificates=False).ok


def test_appendix_a_induction_and_expansion():
    """Appendix A: the induction step in all 10 cases; the zero entries 1 + d(d - 1); eq. (26) with its
    factor in every case, without it in none."""
    induction = so.induction_cases()
    assert induction.ok and (induction.passed, induction.cases) == (10, 10) and "10 of 10" in induction.evidence
    expansion = so.expansion_cases()
    assert expansion.ok and expansion.zeros == (3, 7, 13, 21) and expansion.cases == 1 + 2 + 3 + 4
    assert not dataclasses.replace(expansion, without_factor=1).factor_ok
    assert not dataclasses.replace(expansion, zeros=(3, 7, 13, 20)).positive_ok


def test_induction_terms_of_a_small_arrowhead():
    import sympy as sp

    a1, a2, c1, c2 = sp.symbols("a1 a2 c1 c2")
    matrix = sp.Matrix([[0, c1, c2], [c1, a1, 0], [c2, 0, a2]])
    minor, previous, border_det, inner_det = so.induction_terms(matrix, 3)
    assert sp.expand(minor - (-c1**2 * a2 - c2**2 * a1)) == 0 and sp.expand(previous + c1**2) == 0
    assert sp.expand(border_det - (-c2 * a1)) == 0 and inner_det == a1


def test_arrowhead_instances_agree_and_count():
    result = so.arrowhead_instances(seed=31)
    assert result.ok and (result.exact_cases, result.float_cases) == (36, 40)
    assert not dataclasses.replace(result, float_ok=39).ok
