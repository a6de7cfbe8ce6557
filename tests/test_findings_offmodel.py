"""Chapter 9's findings (egmbook.findings.offmodel): ESM's goals, the comparison with chapter 8's
pipeline and the verdicts on the sweeps' results, the step-by-step diagnosis, and the calibration
of ESM's predictions.

The goals are tested on the committed results and on copies of them with one summary
changed, so that each threshold is seen to bite at its edge.
"""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

import numpy as np
import pytest

from egmbook import gaussian_benchmarks as gb
from egmbook import offmodel_data as od
from egmbook import offmodel_results as omr
from egmbook.findings import offmodel as om
from egmbook.peer_results import OffModelResults, PeersResults, load_offmodel_results, load_peers_results

PEERS_RES, OFF_RES = load_peers_results(), load_offmodel_results()


def _off_with(ds, arm, rho, median, off=OFF_RES):
    excess = dict(off.excess)
    excess[(ds, arm, rho)] = dataclasses.replace(excess[(ds, arm, rho)], median=median)
    return OffModelResults(error=off.error, excess=MappingProxyType(excess))


def _med(ds, arm, rho, off=OFF_RES):
    return off.excess_of(ds, arm, rho=rho).median


def test_goals_count_every_cell_once():
    g = om.goals(PEERS_RES, OFF_RES)
    gauss = sum(len(gb.settings(b)) for b in ("GaussianA", "GaussianB", "GaussianC"))
    cells = (len(OFF_RES.datasets) + gauss) * len(gb.RHOS)
    assert g.off_model.n == g.near_best.n == cells
    few = [ds for ds in OFF_RES.datasets if om.few_rows_or_wide(od.DATASETS[ds].n, od.DATASETS[ds].d)]
    assert g.parts.n == len(few) * len(gb.RHOS) and {c.dataset for c in g.parts.cells} == set(few)
    for goal in g:
        assert 0 <= goal.met <= goal.n
        assert goal.worst.ratio == max(c.ratio for c in goal.cells)
        assert len(goal.misses) == goal.n - goal.met
    c = g.off_model.cells[0]
    assert c.ratio == _med(c.dataset, "Alg3", c.rho) / min(_med(c.dataset, a, c.rho) for a in om.PEERS)
    c = g.near_best.cells[0]
    assert c.ratio == _med(c.dataset, "Alg3", c.rho) / min(_med(c.dataset, a, c.rho) for a in om.VERDICT_ARMS)
    s = gb.settings("GaussianC")[2]
    ratio = PEERS_RES.excess_of("GaussianC", "Alg3", d=s.d, alpha=s.alpha, rho=1.0).median / min(
        PEERS_RES.excess_of("GaussianC", a, d=s.d, alpha=s.alpha, rho=1.0).median for a in om.PEERS)
    assert g.off_model.of("GaussianC", 1.0, s.d, s.alpha) == ratio
    assert set(g.glue()) == {f"goal{i}-{k}" for i in (1, 2, 3) for k in ("met", "n", "worst", "median")}


def test_goal_one_threshold_is_inclusive_and_needs_its_median():
    ds, rho = "t4", 0.25
    best = min(_med(ds, a, rho) for a in om.PEERS)
    at = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, om.GOAL_OFF_MODEL * best)).off_model
    assert at.of(ds, rho) == om.GOAL_OFF_MODEL
    above = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, np.nextafter(om.GOAL_OFF_MODEL * best, np.inf))).off_model
    assert (ds, rho) in {(c.dataset, c.rho) for c in above.misses} and not above.ok
    assert above.met == at.met - 1
    # the median part: a goal whose every cell passes still fails when the median ratio is above 1
    high = om.Goal(2.0, tuple(om.Comparison(1.5, "x", r) for r in gb.RHOS), median_at_most=1.0)
    assert high.met == high.n and not high.ok


def test_goal_two_is_a_share_of_the_cells():
    cells = tuple(om.Comparison(1.0 if k < 9 else 3.0, "x", 1.0) for k in range(10))
    assert om.Goal(om.GOAL_NEAR_BEST, cells, share=om.GOAL_NEAR_BEST_SHARE).ok  # 9 of 10
    worse = cells[:8] + (om.Comparison(1.6, "x", 1.0), cells[9])
    assert not om.Goal(om.GOAL_NEAR_BEST, worse, share=om.GOAL_NEAR_BEST_SHARE).ok  # 8 of 10


def test_goal_three_compares_with_the_parts_where_rows_are_few():
    ds, rho = "wine", 0.25
    best = min(_med(ds, a, rho) for a in om.PEERS)
    at = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, om.GOAL_PARTS * best)).parts
    assert at.of(ds, rho) == pytest.approx(om.GOAL_PARTS, rel=1e-12)
    over = om.goals(PEERS_RES, _off_with(ds, "Alg3", rho, 1.01 * om.GOAL_PARTS * best)).parts
    assert not over.ok and (ds, rho) in {(c.dataset, c.rho) for c in over.misses}
    assert om.few_rows_or_wide(178, 13) and om.few_rows_or_wide(2048, 4096) and not om.few_rows_or_wide(6366, 9)


def test_goals_by_kind_say_which_goals_hold():
    """Chapter 9's headline table: per kind of data, the goals that hold on its cells."""
    kinds = om.goals_by_kind(om.goals(PEERS_RES, OFF_RES))
    assert {k.kind for k in kinds} <= set(om.VERDICT_GROUPS)
    for k in kinds:
        assert k.g1_ok == (max(k.g1.values()) <= om.GOAL_OFF_MODEL)
        assert k.g2_ok == (min(k.g2.values()) >= om.GOAL_NEAR_BEST_SHARE)
        assert k.all_held == (k.g1_ok and k.g2_ok and k.g3_ok is not False)
        assert k.held == (", ".join(g for g, ok in (("G1", k.g1_ok), ("G2", k.g2_ok), ("G3", k.g3_ok)) if ok)
                          or "none")
    rhos = MappingProxyType(dict.fromkeys(gb.RHOS, 1.0))
    good = om.KindGoals("x", rhos, rhos, None)
    assert good.held == "G1, G2" and good.all_held  # no few-rows cells: G3 does not apply
    bad = om.KindGoals("x", MappingProxyType({**rhos, 1.0: 2.5}), MappingProxyType({**rhos, 1.0: 0.5}), rhos)
    assert bad.held == "G3" and not bad.all_held
    worse = om.KindGoals("x", bad.g1, bad.g2, MappingProxyType({**rhos, 1.0: 1.3}))
    assert worse.held == "none"


def test_comparison_flips_with_a_cell():
    """Observation 9.M: ESM's worst ratio, median and share within twice the better peer against
    chapter 8's pipeline's; one cell moved past each edge flips the verdict."""
    c = om.comparison(OFF_RES)
    assert c.n == len(OFF_RES.datasets) * len(gb.RHOS)
    assert c.new_worst == max(r.esm for r in c.ratios) and c.old_worst == max(r.old for r in c.ratios)
    assert set(c.glue()) >= {"new-worst", "old-worst", "within2", "cells", "new-median"}
    ds, rho = "t4", 0.25
    best = min(_med(ds, a, rho) for a in om.PEERS)
    # ESM at a tenth of chapter 8's worst ratio or more: the verdict fails whatever the rest
    bad = om.comparison(_off_with(ds, "Alg3", rho, best * c.old_worst / 5))
    assert not bad.ok and bad.new_worst == pytest.approx(c.old_worst / 5)
    flipped = om.OffModelComparison(ratios=tuple(dataclasses.replace(r, esm=3.0) for r in c.ratios), real=c.real)
    assert not flipped.ok and flipped.within_two == 0
    good = om.OffModelComparison(ratios=tuple(dataclasses.replace(r, esm=0.9, old=50.0) for r in c.ratios),
                                 real=c.real)
    assert good.ok and "ESM" in good.evidence


def test_best_peer_ratios_are_named_records():
    rs = om.best_peer_ratios(OFF_RES, rho=0.25)
    r = next(x for x in rs if x.dataset == "wine")
    assert r.best_peer in om.PEERS and r.best == min(_med("wine", a, 0.25) for a in om.PEERS)
    assert r.esm == _med("wine", "Alg3", 0.25) / r.best and r.old == _med("wine", "Alg3-private", 0.25) / r.best


def test_verdicts_cover_every_group_and_break_ties_in_order():
    vs = om.verdicts(PEERS_RES, OFF_RES)
    held = [g for g, ms in om.VERDICT_GROUPS.items() if ms[0].startswith("Gaussian") or set(ms) & set(OFF_RES.datasets)]
    assert [v.group for v in vs] == held
    named = [m for ms in om.VERDICT_GROUPS.values() for m in ms if not m.startswith("Gaussian")]
    assert sorted(named) == sorted(od.DATASETS)  # every dataset in exactly one kind
    for v in vs:
        assert v.gap_max >= v.gap_median >= 1.0 and v.cells > 0
    tie = om.Verdict("g", MappingProxyType({"Alg3": 2, "PLAN-last-step": 2, "PLAN": 0, "IOME": 1}), 1.0, 1.0)
    assert tie.top == "Alg3"


def _flat(g):
    return {**{k: v for k, v in vars(g).items() if k not in ("steps", "reference")}, **dict(g.reference),
            **{(p, k): v for p, step in g.steps.items() for k, v in vars(step).items()}}


@pytest.mark.parametrize("dataset", ["wine", "diabetes"])
def test_saved_diagnosis_is_what_diagnose_gives(dataset):
    """Chapter 9 reads the diagnosis benchmarks/offmodel_diagnosis.py saved: re-run, it gives the same numbers."""
    saved = omr.load_diagnoses()
    assert tuple(saved) == om.DIAGNOSIS_DATASETS
    g = om.diagnose(od.load(dataset), runs=om.DIAGNOSIS_RUNS, rho=om.DIAGNOSIS_RHO)
    assert _flat(g) == pytest.approx(_flat(saved[dataset]), rel=1e-9, abs=0)


def test_diagnoses_round_trip_and_bad_files_are_refused(tmp_path):
    saved = omr.load_diagnoses()
    path = omr.save_diagnoses(list(saved.values()), tmp_path / "d.json")
    assert omr.load_diagnoses(path) == saved
    (tmp_path / "bad.json").write_text('[{"dataset": "wine"}]')
    with pytest.raises(ValueError, match="does not hold diagnoses"):
        omr.load_diagnoses(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="benchmarks/offmodel_diagnosis.py"):
        omr.load_diagnoses(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="diagnoses must be a non-empty sequence"):
        omr.save_diagnoses(saved["wine"], tmp_path / "x.json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="path must name a .json file"):
        omr.save_diagnoses(list(saved.values()), tmp_path / "x.csv")


def test_diagnosis_is_a_typed_record():
    g = om.diagnose(od.load("wine"), runs=2, rho=0.25)
    assert (g.n, g.d, g.runs) == (178, 13, 2) and set(g.steps) == {"Alg3-private", "Alg3"}
    for step in g.steps.values():
        assert 0.0 <= step.clipped <= 1.0 and step.sig_min <= step.sig_med <= step.sig_max
    assert set(g.reference) == {"Alg3-private-centre", "Alg3-oracle", "PLAN", "IOME", "Alg3"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.ties = 0.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="sample must be"):
        om.diagnose("wine", runs=2, rho=0.25)  # type: ignore[arg-type]


def test_bad_results_are_refused():
    with pytest.raises(TypeError, match="peers must be"):
        om.goals(OFF_RES, OFF_RES)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="offmodel must be"):
        om.verdicts(PEERS_RES, PEERS_RES)  # type: ignore[arg-type]
    assert isinstance(PEERS_RES, PeersResults)


# ---------------------------------------------------------------------------------------
# the calibration of ESM's predictions
# ---------------------------------------------------------------------------------------
def test_resolution_threshold_minimises_the_summed_log_ratio():
    pairs = [(0.1, 3.0), (0.5, 1.1), (1.0, 1.4), (2.0, 0.5), (3.0, 0.9), (4.0, 1.3)]
    # buying below t costs sum ln r over the cells below t; checked against every threshold by brute force
    for subset in (pairs, pairs[1:], pairs[:3], [(2.0, 2.0), (2.0, 0.3)], [(1.0, 0.5), (2.0, 2.0)]):
        costs = {t: sum(math.log(r) for tau, r in subset if tau < t) for t in [tau for tau, _ in subset] + [math.inf]}
        least = min(costs.values())
        assert om.resolution_threshold(subset) == min(t for t, c in costs.items() if c == least)
    assert om.resolution_threshold(pairs) == 0.1  # the first cell's 3.0 outweighs the 0.5 later on
    assert om.resolution_threshold(pairs[1:]) == 4.0  # buy below 4: the 0.5 pays for 1.1 and 1.4, not for 1.3
    assert om.resolution_threshold([(1.0, 0.5), (2.0, 1.5)] + [(3.0, 0.9)]) == 2.0
    assert om.resolution_threshold([(1.0, 0.5), (2.0, 0.9)]) == math.inf  # buy everywhere
    assert om.resolution_threshold([(1.0, 1.5), (2.0, 0.9)]) == 1.0  # never buy
    with pytest.raises(ValueError, match="ratios must be > 0"):
        om.resolution_threshold([(1.0, 0.0)])
    with pytest.raises(ValueError, match="pairs"):
        om.resolution_threshold([(1.0, 2.0, 3.0)])


def _run(release, measured, predicted, tau=0.5, n=1000, rho=0.25, run=0):
    return om.PathRun(alpha=0.75, d=8, width=50.0, n=n, rho=rho, run=run, release=release, measured=measured,
                      predicted=predicted, log_noise=tau)


def test_calibration_takes_medians_per_kind_and_the_stage_threshold():
    runs = [_run("after algorithm3", 2.0, 1.0, run=k) for k in range(3)]
    runs += [_run("after plan", 3.0, 1.0), _run("after centred-iome", 1.0, 2.0), _run("whole iome", 5.0, 10.0),
             _run("whole centred-iome", 5.0, 10.0)]
    cal = om.calibrate_paths(runs)
    assert dict(cal.factors) == {"iome": 0.5, "algorithm3": 2.0, "plan": 3.0}
    assert cal.n_cells == 1 and cal.runs == 1 and cal.within_two == 1.0
    # the pick after the scales (algorithm3, 2.0 measured) against IOME alone (5.0): 0.4, buy everywhere
    assert cal.resolution == math.inf
    with pytest.raises(TypeError, match="PathRun"):
        om.calibrate_paths([1.0])  # type: ignore[list-item]


def test_committed_calibration_gives_the_library_s_constants():
    from egmlib.peers import algorithm3_robust as esm
    from egmlib.peers import path_errors as pe

    cal = om.calibrate_paths(omr.load_path_runs())
    for kind, factor in cal.factors.items():
        assert pe.ERROR_FACTORS[kind] == pytest.approx(factor, abs=0.005)
    assert esm.SCALE_RESOLUTION == pytest.approx(cal.resolution, abs=0.005)
    assert cal.n_cells >= 300 and cal.within_two >= 0.6
    assert set(cal.glue()) >= {"paths-cells", "paths-resolution", "paths-within2"}


def _miss(dataset, rho, goal, longer, public=1.0):
    return omr.Miss(dataset=dataset, rho=rho, goal=goal, ratio=3.0, best_peer="IOME", best_error=1.0, esm_error=3.0,
                    path="iome", path_share=1.0, public_share=public, runs=12, longer_ratio=longer, longer_runs=100)


def test_miss_kinds_split_chance_from_real_by_the_longer_check():
    # a G1 miss at 1.9 over the longer runs is chance; at 2.1 it is real; a cell missing G1 and G3 is real when
    # its longer ratio exceeds G3's 1.25, even if within G1's 2
    misses = [_miss("a", 0.25, "G1", 1.9), _miss("b", 0.25, "G1", 2.1), _miss("c", 1.0, "G1", 1.3),
              _miss("c", 1.0, "G3", 1.3), _miss("d", 1.0, "G3", 1.2)]
    k = om.miss_kinds(misses)
    assert [m.dataset for m in k.real] == ["b", "c"] and [m.dataset for m in k.chance] == ["a", "d"]
    assert k.glue() == {"miss-cells": 4, "miss-chance": 2, "miss-chance-max": 1.9, "miss-real": 2,
                        "miss-longer-runs": 100}
    assert om.miss_kinds([]).glue()["miss-cells"] == 0
    with pytest.raises(TypeError, match="Miss"):
        om.miss_kinds([("a", 0.25)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="G1 or G3"):
        om.miss_kinds([_miss("a", 0.25, "G2", 1.0)])


def test_committed_misses_split_as_chapter_9_says():
    k = om.miss_kinds(omr.load_misses())
    assert k.n_cells >= 1 and k.longer_runs >= 50
    assert all(m.longer_ratio <= (om.GOAL_OFF_MODEL if m.goal == "G1" else om.GOAL_PARTS) for m in k.chance)
