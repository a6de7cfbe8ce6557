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
    cells = len(OFF_RES.datasets) * len(gb.RHOS)
    assert g.off_model.n == g.near_best.n == cells
    skewed = [s for s in gb.settings("GaussianB") if s.alpha >= 1] + gb.settings("GaussianC")
    assert g.recommended.n == (len(om.RECOMMENDED) + len(skewed)) * len(gb.RHOS)
    for goal in g:
        assert 0 <= goal.met <= goal.n
        assert goal.worst.ratio == max(c.ratio for c in goal.cells)
        assert len(goal.misses) == goal.n - goal.met
    c = g.off_model.cells[0]
    assert c.ratio == _med(c.dataset, "Alg3", c.rho) / min(_med(c.dataset, a, c.rho) for a in om.PEERS)
    c = g.near_best.cells[0]
    assert c.ratio == _med(c.dataset, "Alg3", c.rho) / min(_med(c.dataset, a, c.rho) for a in om.VERDICT_ARMS)
    assert set(g.glue()) == {f"goal{i}-{k}" for i in (1, 2, 3) for k in ("met", "n", "worst", "median")}


def test_goal_one_threshold_is_inclusive_and_needs_its_median():
    ds, rho = "t4", 0.25
    best = min(_med(ds, a, rho) for a in om.PEERS)
    base = om.goals(PEERS_RES, OFF_RES).off_model
    at = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, om.GOAL_OFF_MODEL * best)).off_model
    cell = next(c for c in at.cells if (c.dataset, c.rho) == (ds, rho))
    assert cell.ratio == om.GOAL_OFF_MODEL
    above = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, np.nextafter(om.GOAL_OFF_MODEL * best, np.inf))).off_model
    assert (ds, rho) in {(c.dataset, c.rho) for c in above.misses} and not above.ok
    assert above.met == at.met - 1
    # the median part: a goal whose every cell passes still fails when the median ratio is above 1
    high = om.Goal(2.0, tuple(om.Comparison(1.5, "x", r) for r in gb.RHOS), median_at_most=1.0)
    assert high.met == high.n and not high.ok
    assert base.ok == (base.met == base.n and base.median <= om.GOAL_OFF_MODEL_MEDIAN)


def test_goal_two_is_a_share_of_the_cells():
    cells = tuple(om.Comparison(1.0 if k < 9 else 3.0, "x", 1.0) for k in range(10))
    assert om.Goal(om.GOAL_NEAR_BEST, cells, share=om.GOAL_NEAR_BEST_SHARE).ok  # 9 of 10
    worse = cells[:8] + (om.Comparison(1.6, "x", 1.0), cells[9])
    assert not om.Goal(om.GOAL_NEAR_BEST, worse, share=om.GOAL_NEAR_BEST_SHARE).ok  # 8 of 10


def test_goal_three_compares_with_the_best_method_given_nothing():
    ds, rho = "t4", 0.25
    best = min(_med(ds, a, rho) for a in om.VERDICT_ARMS if a != "Alg3")
    at = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, om.GOAL_RECOMMENDED * best)).recommended
    cell = next(c for c in at.cells if (c.dataset, c.rho) == (ds, rho))
    assert cell.ratio == pytest.approx(om.GOAL_RECOMMENDED, rel=1e-12)
    assert {c.dataset for c in at.cells} == set(om.RECOMMENDED) | {"GaussianB", "GaussianC"}


def test_verdicts_cover_every_group_and_break_ties_in_order():
    vs = om.verdicts(PEERS_RES, OFF_RES)
    assert [v.group for v in vs] == list(om.VERDICT_GROUPS)
    real = vs[0]
    assert real.cells == len(om.VERDICT_GROUPS[real.group]) * len(gb.RHOS)
    assert real.gap_max >= real.gap_median >= 1.0
    tie = om.Verdict("g", MappingProxyType({"Alg3": 2, "PLAN-last-step": 2, "PLAN": 0, "IOME": 1}), 1.0, 1.0)
    assert tie.top == "Alg3"


def _flat(g):
    return {**{k: v for k, v in vars(g).items() if k not in ("steps", "reference")}, **dict(g.reference),
            **{(p, k): v for p, step in g.steps.items() for k, v in vars(step).items()}}


@pytest.mark.parametrize("dataset", ["wine", "diabetes"])
def test_saved_diagnosis_is_what_diagnose_gives(dataset):
    """Chapter 9 reads the diagnosis benchmarks/offmodel_diagnosis.py saved: re-run, it gives the same numbers."""
    saved = om.load_diagnoses()
    assert tuple(saved) == om.DIAGNOSIS_DATASETS
    g = om.diagnose(dataset, runs=om.DIAGNOSIS_RUNS, rho=om.DIAGNOSIS_RHO)
    assert _flat(g) == pytest.approx(_flat(saved[dataset]), rel=1e-9, abs=0)


def test_diagnoses_round_trip_and_bad_files_are_refused(tmp_path):
    saved = om.load_diagnoses()
    path = om.save_diagnoses(list(saved.values()), tmp_path / "d.json")
    assert om.load_diagnoses(path) == saved
    (tmp_path / "bad.json").write_text('[{"dataset": "wine"}]')
    with pytest.raises(ValueError, match="does not hold diagnoses"):
        om.load_diagnoses(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="benchmarks/offmodel_diagnosis.py"):
        om.load_diagnoses(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="diagnoses must be a non-empty sequence"):
        om.save_diagnoses(saved["wine"], tmp_path / "x.json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="path must name a .json file"):
        om.save_diagnoses(list(saved.values()), tmp_path / "x.csv")


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
    assert isinstance(PEERS_RES, PeersResults)


# ---------------------------------------------------------------------------------------
# the calibration of the few-rows rule
# ---------------------------------------------------------------------------------------
def test_crossover_switch_is_the_first_statistic_from_which_every_ratio_passes():
    cells = [(10.0, 3.0), (20.0, 1.1), (30.0, 1.4), (40.0, 1.2), (50.0, 0.9)]
    assert om.crossover_switch(cells, 1.25) == 40.0
    assert om.crossover_switch(cells, 1.5) == 20.0
    assert om.crossover_switch(cells, 5.0) == 10.0
    assert om.crossover_switch([(1.0, 0.5), (2.0, 2.0)], 1.25) is None   # the largest statistic fails


def test_committed_crossover_gives_the_pipelines_constant():
    from egmlib.peers import algorithm3_robust

    cross = om.load_crossover()
    assert cross.constant == algorithm3_robust.FEW_ROWS_CONSTANT
    assert len(cross.above) + len(cross.below) == len(cross.cells) == 3 * 3 * 5 * 11
    assert max(c.ratio for c in cross.above) <= cross.tolerance < max(c.ratio for c in cross.below)
    assert set(cross.glue()) == {"cross-runs", "cross-at", "cross-c", "cross-after", "cross-after-n", "cross-peak"}


def test_crossover_file_must_have_its_columns(tmp_path):
    bad = tmp_path / "cross.csv"
    bad.write_text("half_width,d,rho\n50,10,1\n")
    with pytest.raises(ValueError, match="must have the columns"):
        om.load_crossover(bad)
    with pytest.raises(TypeError, match="path must be"):
        om.load_crossover(3)  # type: ignore[arg-type]


def test_few_rows_share_follows_the_rows():
    # 178 rows at the smallest budget take the few-rows path; 31857 rows at rho = 1 never do
    assert om.few_rows_share("wine", rho=1 / 16, runs=3) == 1.0
    assert om.few_rows_share("labsup", rho=1.0, runs=2) == 0.0
    with pytest.raises(ValueError, match="dataset must be one of"):
        om.few_rows_share("nope", rho=1.0, runs=2)
    with pytest.raises(ValueError, match="rho"):
        om.few_rows_share("wine", rho=-1.0, runs=2)
