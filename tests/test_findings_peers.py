"""Chapter 8's findings (egmbook.findings.peers): each record's verdict on the committed
results, and the same verdict flipped when one number it rests on is moved past its threshold."""

from __future__ import annotations

import dataclasses
import math
import numbers
from types import MappingProxyType

import pytest

from egmbook import gaussian_benchmarks as gb
from egmbook.findings import Finding
from egmbook.findings import peers as pf
from egmbook.peer_results import PeersResults, load_peers_results

RES = load_peers_results()


def _glue_ok(record: Finding) -> None:
    values = record.glue()
    assert set(values) == set(type(record).GLUE)
    assert all(isinstance(v, numbers.Real) and math.isfinite(v) for v in values.values())


@pytest.mark.parametrize("finding", [pf.run_counts, pf.last_step_gain, pf.faithfulness, pf.zcdp_calibration,
                                     pf.notes_convention, pf.private_inputs_price, pf.same_inputs_two_radii,
                                     pf.peers_by_what_they_know, pf.means_and_medians])
def test_findings_on_the_committed_results_hold_and_glue_numbers(finding):
    record = finding(RES)
    assert dataclasses.is_dataclass(record) and type(record).__dataclass_params__.frozen
    ok = getattr(record, "ok", None)
    assert ok in (True, None) or (record.iome_ok and record.plan_ok)
    _glue_ok(record)


def test_run_counts_want_fifty_runs_for_chapter_8s_arms():
    assert pf.run_counts(RES).ok
    assert pf.RunCounts(frozenset({50}), frozenset({50}), frozenset({6})).ok
    assert not pf.RunCounts(frozenset({50, 49}), frozenset({50}), frozenset({6})).ok
    assert not pf.RunCounts(frozenset({50}), frozenset({20, 50}), frozenset({6})).ok
    assert not pf.RunCounts(frozenset({50}), frozenset({50}), frozenset({6, 50})).ok


def test_published_accounting_is_twelve_times_on_centre_and_scales():
    acc = pf.published_accounting()
    assert acc.ok and acc.factor == 12.0 and math.isclose(acc.total, 3.75)
    assert list(acc.shares) == ["centre", "scale", "threshold", "noise"]


def test_centre_outside_data_is_an_exact_probability():
    edge = pf.centre_outside_data()
    assert edge.ok and len(edge.rows["d"]) == 6
    assert all(0.0 <= p <= 1.0 for pair in edge.worst.values() for p in pair)
    assert all(stated >= published for stated, published in edge.worst.values())  # more budget, nearer the data


def test_faithfulness_verdicts_flip_with_one_row():
    f = pf.faithfulness(RES)
    assert f.iome_ok and f.plan_ok and f.iome_n == len(f.by_alg("IOME"))
    first = next(i for i, r in enumerate(f.rows) if r.algorithm == "IOME")
    rows = list(f.rows)
    rows[first] = dataclasses.replace(rows[first], z=3.01)
    assert not pf.Faithfulness(tuple(rows)).iome_ok


def test_calibration_fails_on_a_wrong_epsilon():
    assert pf.zcdp_calibration(RES).ok
    privacy = tuple(dataclasses.replace(p, eps_exact_gaussian=p.eps_exact_gaussian * 1.001)
                    if p.delta == 1e-6 and p.rho == 0.125 else p for p in RES.privacy)
    bad = PeersResults(error=RES.error, excess=RES.excess, privacy=privacy, faithfulness=RES.faithfulness)
    assert not pf.zcdp_calibration(bad).ok


def test_notes_convention_understates_by_about_thirty_percent():
    notes = pf.notes_convention(RES)
    assert notes.ok and 25 < notes.under_min <= notes.under_max < 35


def test_private_inputs_partition_the_settings():
    q2 = pf.private_inputs_price(RES)
    assert q2.n_conv + len(q2.fail) == q2.n_cells == sum(len(gb.settings(ds)) for ds in pf.DATASETS) * len(gb.RHOS)
    assert q2.centre_min > 1 and q2.private_min > 1


def test_two_radii_counts():
    radii = pf.same_inputs_two_radii(RES)
    assert radii.n == 85 and 0 <= radii.above <= radii.n and radii.ratio_min <= radii.ratio_median <= radii.ratio_max
    flat = pf.TwoRadii(MappingProxyType({("x", "0"): (0.9, 0.95, 1.2)}), (1.0,))
    assert not flat.ok and flat.above == 1


def test_means_and_medians_verdict():
    mm = pf.means_and_medians(RES)
    assert mm.ok and mm.plan_sd > mm.plan_mean > 2 * mm.plan_median
    light = dataclasses.replace(mm, plan_256=dataclasses.replace(mm.plan_256, median=mm.plan_256.mean))
    assert not light.ok


def test_findings_refuse_other_results():
    with pytest.raises(TypeError, match="peers must be egmbook.peer_results.PeersResults"):
        pf.last_step_gain({})  # type: ignore[arg-type]


def test_ratio_tables_are_heat_maps_of_medians_within_their_ranges():
    from egmbook.display import HeatMap

    q2 = pf.private_inputs_price(RES)
    converged, failed = q2.table(), q2.fail_table()
    assert isinstance(converged, HeatMap) and isinstance(failed, HeatMap)
    assert len(failed.cells) == len(q2.fail) and sum(int(row[1]) for row in converged.cells) == q2.n_conv
    for record in (pf.last_step_gain(RES), pf.peers_by_what_they_know(RES)):
        assert isinstance(record.table(), HeatMap)
        spans = [v for col in record.columns.values() for v in col if isinstance(v, tuple)]
        assert spans and all(low <= median <= high for median, low, high in spans)
    assert isinstance(pf.same_inputs_two_radii(RES).table(), HeatMap)
