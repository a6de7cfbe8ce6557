"""Chapter 9's findings (egmbook.findings.offmodel): the goals and verdicts on the sweeps'
results, and the step-by-step diagnosis.

The goals are tested on the committed results and on copies of them with one summary
changed, so that each threshold is seen to bite at its edge.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import numpy as np
import pytest

from egmbook import gaussian_benchmarks as gb
from egmbook.findings import offmodel as om
from egmbook.peer_results import OffModelResults, PeersResults, load_offmodel_results, load_peers_results

PEERS_RES, OFF_RES = load_peers_results(), load_offmodel_results()


def _off_with(ds, arm, rho, median):
    excess = dict(OFF_RES.excess)
    excess[(ds, arm, rho)] = dataclasses.replace(excess[(ds, arm, rho)], median=median)
    return OffModelResults(error=OFF_RES.error, excess=MappingProxyType(excess))


def _med(ds, arm, rho, off=OFF_RES):
    return off.excess_of(ds, arm, rho=rho).median


def test_goals_count_every_cell_once():
    g = om.goals(PEERS_RES, OFF_RES)
    assert g.off_model.n == len(OFF_RES.datasets) * len(gb.RHOS)
    skewed = [s for s in gb.settings("GaussianB") if s.alpha >= 1] + gb.settings("GaussianC")
    assert g.skewed.n == len(skewed) * len(gb.RHOS)
    for goal in g:
        assert 0 <= goal.met <= goal.n and goal.ok == (goal.worst.ratio <= goal.threshold)
        assert goal.worst.ratio == max(c.ratio for c in goal.cells)
    c = g.off_model.cells[0]
    assert c.ratio == _med(c.dataset, "Alg3", c.rho) / min(_med(c.dataset, a, c.rho) for a in om.PEERS)
    assert set(g.glue()) == {f"goal{i}-{k}" for i in (1, 2, 3) for k in ("met", "n", "worst")} | {"goal3-median"}


def test_goal_one_threshold_is_inclusive():
    ds, rho = "t4", 0.25
    best = min(_med(ds, a, rho) for a in om.PEERS)
    at = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, om.GOAL_OFF_MODEL * best))
    cell = next(c for c in at.off_model.cells if (c.dataset, c.rho) == (ds, rho))
    assert cell.ratio == om.GOAL_OFF_MODEL and at.off_model.ok
    above = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, np.nextafter(om.GOAL_OFF_MODEL * best, np.inf)))
    assert not above.off_model.ok and (above.off_model.worst.dataset, above.off_model.worst.rho) == (ds, rho)
    assert above.off_model.met == at.off_model.met - 1


def test_goal_three_counts_only_where_chapter_8s_pipeline_converges():
    ds, rho = "t4", 0.25
    oracle = _med(ds, "Alg3-oracle", rho)
    base = om.goals(PEERS_RES, OFF_RES).converged
    inside = om.goals(PEERS_RES, _off_with(ds, "Alg3-private", rho, om.CONVERGES_WITHIN * oracle)).converged
    outside = om.goals(PEERS_RES, _off_with(ds, "Alg3-private", rho, 1.01 * om.CONVERGES_WITHIN * oracle)).converged
    where = lambda goal: {(c.dataset, c.rho) for c in goal.cells}  # noqa: E731
    assert (ds, rho) in where(inside) and (ds, rho) not in where(outside)
    assert len(where(inside)) == len(where(outside)) + 1
    assert len(where(base)) in (len(where(inside)), len(where(outside)))


def test_goals_by_the_mean_read_the_mean_on_plans_benchmarks_only():
    by_median, by_mean = om.goals(PEERS_RES, OFF_RES), om.goals(PEERS_RES, OFF_RES, stat="mean")
    assert by_median.off_model == dataclasses.replace(by_mean.off_model)  # off the model: always the median
    s = gb.settings("GaussianC")[0]
    cell = next(c for c in by_mean.skewed.cells if (c.dataset, c.d, c.rho) == (s.dataset, s.d, 1.0))
    ex = lambda a: PEERS_RES.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=1.0).mean  # noqa: E731
    assert cell.ratio == ex("Alg3") / min(ex("PLAN"), ex("IOME"))


def test_verdicts_cover_every_group_and_break_ties_in_order():
    vs = om.verdicts(PEERS_RES, OFF_RES)
    assert [v.group for v in vs] == list(om.VERDICT_GROUPS)
    real = vs[0]
    assert real.cells == len(om.VERDICT_GROUPS[real.group]) * len(gb.RHOS)
    assert real.gap_max >= real.gap_median >= 1.0
    tie = om.Verdict("g", MappingProxyType({"Alg3": 2, "PLAN-last-step": 2, "PLAN": 0, "IOME": 1}), 1.0, 1.0)
    assert tie.top == "Alg3"


def test_diagnosis_is_a_typed_record():
    g = om.diagnose("wine", runs=2, rho=0.25)
    assert (g.n, g.d, g.runs) == (178, 13, 2) and set(g.steps) == {"Alg3-private", "Alg3"}
    for step in g.steps.values():
        assert 0.0 <= step.clipped <= 1.0 and step.sig_min <= step.sig_med <= step.sig_max
    assert set(g.reference) == {"Alg3-private-centre", "Alg3-oracle", "PLAN", "IOME", "Alg3"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.ties = 0.0  # type: ignore[misc]


def test_bad_results_are_refused():
    with pytest.raises(TypeError, match="peers must be"):
        om.goals(OFF_RES, OFF_RES)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="offmodel must be"):
        om.verdicts(PEERS_RES, PEERS_RES)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stat must be one of"):
        om.goals(PEERS_RES, OFF_RES, stat="max")
    assert isinstance(PEERS_RES, PeersResults)
