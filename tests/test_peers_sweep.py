"""The peers sweep's engine (egmbook.sweep): results do not depend on the workers.

A tiny sweep (GaussianA at d = 16, 3 runs, two budgets, three arms) runs with one worker
and with two loky workers; the summaries must agree byte for byte and the run logs row
for row.  Resuming with an arm added must give the same files as running all arms at once.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("joblib")
pytest.importorskip("tqdm")

from egmbook import sweep as ps  # noqa: E402

ARMS = ("PLAN", "IOME", "empirical")
RHOS = (1 / 16, 1.0)


def _sweep(path, *, jobs, arms=ARMS):
    path.mkdir(exist_ok=True)
    return ps.run_sweep("gaussian", arms=arms, runs=3, jobs=jobs, results=path, datasets=["GaussianA"],
                        max_d=16, rhos=RHOS, progress=False)


def _log(path):
    with (path / "peers_runs.csv").open(newline="") as f:
        return sorted(tuple(v for k, v in r.items() if k != "cpu_s") for r in csv.DictReader(f))


@pytest.mark.slow
def test_one_and_two_workers_agree_bit_for_bit(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    r1 = _sweep(one, jobs=1)
    r2 = _sweep(two, jobs=2)
    assert r1["tasks"] == r2["tasks"] == 3
    for name in ("peers.csv", "peers_excess.csv"):
        assert (one / name).read_bytes() == (two / name).read_bytes()
    rows = _log(one)
    assert rows == _log(two)
    assert len(rows) == 3 * len(ARMS) * len(RHOS)
    # the private arms really are random: the runs differ
    errors = {r[-1] for r in rows if r[2] == "PLAN"}
    assert len(errors) == 3 * len(RHOS)


@pytest.mark.slow
def test_resume_with_an_added_arm_equals_one_pass(tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    _sweep(whole, jobs=1)
    _sweep(parts, jobs=1, arms=("PLAN", "empirical"))
    again = _sweep(parts, jobs=2)
    assert again["tasks"] == 3 and again["arm_runs"] == 3  # only IOME was missing
    assert _sweep(parts, jobs=1)["tasks"] == 0  # nothing left
    for name in ("peers.csv", "peers_excess.csv"):
        assert (whole / name).read_bytes() == (parts / name).read_bytes()
    assert _log(whole) == _log(parts)


def test_seeds_come_from_coordinates_only():
    task = ps.Task("gaussian", "GaussianA", 0, 1, ("empirical", "PLAN"), RHOS)
    alone = ps.Task("gaussian", "GaussianA", 0, 1, ("PLAN",), RHOS)
    rows = [r[:-1] for r in ps.run_task(task)[1]]  # without the CPU time
    rows_alone = [r[:-1] for r in ps.run_task(alone)[1]]
    assert [r for r in rows if r[2] == "PLAN"] == rows_alone
    other_run = ps.Task("gaussian", "GaussianA", 0, 2, ("PLAN",), RHOS)
    assert [r[:-1] for r in ps.run_task(other_run)[1]] != rows_alone
    assert ps.name_id("PLAN") == ps.name_id("PLAN") != ps.name_id("IOME")


def test_summary_statistics(tmp_path):
    _sweep(tmp_path, jobs=1, arms=("PLAN",))
    with (tmp_path / "peers_runs.csv").open(newline="") as f:
        runs = [r for r in csv.DictReader(f) if float(r["rho"]) == 1.0]
    e = np.array([float(r["excess"]) for r in runs])
    with (tmp_path / "peers_excess.csv").open(newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if float(r["rho"]) == 1.0]
    assert int(row["runs"]) == 3
    assert float(row["excess_mean"]) == pytest.approx(e.mean(), rel=1e-5)
    assert float(row["excess_sd"]) == pytest.approx(e.std(ddof=1), rel=1e-5)
    assert float(row["excess_median"]) == pytest.approx(np.median(e), rel=1e-5)


@pytest.mark.slow
def test_one_budget_first_then_all_equals_all_at_once(tmp_path):
    """A sweep over one budget seeds it as the full sweep does, and is not counted twice."""
    once, split = tmp_path / "once", tmp_path / "split"
    kw = dict(arms=("PLAN",), runs=2, jobs=1, datasets=["GaussianA"], max_d=16, progress=False)
    once.mkdir()
    split.mkdir()
    ps.run_sweep("gaussian", results=once, **kw)
    ps.run_sweep("gaussian", results=split, rhos=(0.125,), **kw)
    ps.run_sweep("gaussian", results=split, **kw)
    for name in ("peers.csv", "peers_excess.csv"):
        assert (once / name).read_bytes() == (split / name).read_bytes()


def test_a_misspelt_dataset_is_an_error_not_zero_tasks(tmp_path):
    with pytest.raises(ValueError, match=r"datasets must be names of the gaussian sweep, got \['GausianA'\]"):
        ps.run_sweep("gaussian", arms=("PLAN",), runs=2, jobs=1, results=tmp_path, datasets=["GausianA"])
    with pytest.raises(ValueError, match="datasets must be names of the gaussian sweep"):
        ps.run_sweep("gaussian", arms=("PLAN",), runs=2, jobs=1, results=tmp_path, datasets=["digits"])
    with pytest.raises(ValueError, match="arms must be names of egmlib.peers.arms.ARMS"):
        ps.run_sweep("gaussian", arms=("PLAN", "Plan"), runs=2, jobs=1, results=tmp_path)
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_a_quick_slice_never_replaces_the_committed_results():
    before = {p.name: p.read_bytes() for p in ps.RESULTS.glob("*.csv")}
    with pytest.raises(ValueError, match=r"runs=3 into results=.* would replace the committed 50-run"):
        ps.run_sweep("gaussian", arms=("PLAN",), runs=3, jobs=1, results=ps.RESULTS, datasets=["GaussianA"])
    assert {p.name: p.read_bytes() for p in ps.RESULTS.glob("*.csv")} == before


def test_each_sweep_has_its_committed_run_count():
    """Chapter 8's sweep keeps 50 runs a cell; chapter 9's reduced sweep fewer, and no slice below
    it reaches the committed results."""
    assert ps.RUNS_OF["gaussian"] == ps.RUNS == 50 and 2 <= ps.RUNS_OF["offmodel"] < ps.RUNS
    before = {p.name: p.read_bytes() for p in ps.RESULTS.glob("*.csv")}
    k = ps.RUNS_OF["offmodel"] - 1
    with pytest.raises(ValueError, match=rf"runs={k} into results=.* would replace the committed {k + 1}-run"):
        ps.run_sweep("offmodel", arms=("PLAN",), runs=k, jobs=1, results=ps.RESULTS, datasets=["wine"])
    assert {p.name: p.read_bytes() for p in ps.RESULTS.glob("*.csv")} == before


def test_a_summary_over_fewer_runs_never_replaces_one_over_more(tmp_path):
    """The summary's key names no run count: a 2-run slice written where a 3-run summary is must
    leave the 3-run rows, and add only rows the file did not have."""
    kw = dict(arms=("PLAN",), jobs=1, results=tmp_path, datasets=["GaussianA"], max_d=16, rhos=RHOS,
              progress=False)
    ps.run_sweep("gaussian", runs=3, **kw)
    three = (tmp_path / "peers.csv").read_bytes()
    (tmp_path / "peers_runs.csv").unlink()  # a fresh log: the 2-run slice computes new rows
    ps.run_sweep("gaussian", runs=2, **kw)
    assert (tmp_path / "peers.csv").read_bytes() == three
    ps.run_sweep("gaussian", runs=2, **{**kw, "arms": ("IOME",)})
    with (tmp_path / "peers.csv").open(newline="") as f:
        runs = {(r["algorithm"], r["rho"]): r["runs"] for r in csv.DictReader(f)}
    assert runs == {("PLAN", "0.0625"): "3", ("PLAN", "1"): "3", ("IOME", "0.0625"): "2", ("IOME", "1"): "2"}
