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
