"""Chapter 9's results files (egmbook.offmodel_results): the loaders read what the writers write."""

from __future__ import annotations

import pytest

from egmbook import offmodel_results as omr
from egmbook.findings.offmodel import PathRun


def test_path_runs_round_trip_and_bad_files_are_refused(tmp_path):
    runs = [PathRun(alpha=0.75, d=8, width=50.0, n=200, rho=0.25, run=k, release="after plan", measured=0.1 * (k + 1),
                    predicted=0.1234567890123, log_noise=0.5) for k in range(3)]
    path = omr.write_path_runs(runs, tmp_path / "runs.csv")
    assert omr.load_path_runs(path) == tuple(runs)
    (tmp_path / "bad.csv").write_text("alpha,d\n0.75,8\n")
    with pytest.raises(ValueError, match="must have the columns"):
        omr.load_path_runs(tmp_path / "bad.csv")
    with pytest.raises(ValueError, match=r"path must name a \.csv file"):
        omr.write_path_runs(runs, tmp_path / "runs.json")
    with pytest.raises(TypeError, match="PathRun"):
        omr.write_path_runs([1.0], tmp_path / "x.csv")  # type: ignore[list-item]


def test_scale_rows_round_trip(tmp_path):
    rows = [omr.ScaleRow(arm="Alg3", path="algorithm3", n=1000, d=16, cpu_s=0.5, kernel_cpu_s=0.1, mean_cpu_s=0.02,
                         peak_added_bytes=1000, data_bytes=128000, reps=3)]
    loaded = omr.load_scale_rows(omr.write_scale_rows(rows, tmp_path / "scale.csv"))
    assert (loaded == tuple(rows) and loaded[0].cpu_ratio == 25.0
            and loaded[0].process_cpu_ratio == 20.0 and loaded[0].memory_share == 1000 / 128000)
    with pytest.raises(TypeError, match="ScaleRow"):
        omr.write_scale_rows([], tmp_path / "scale.csv")


def test_misses_load_and_bad_files_are_refused(tmp_path):
    path = tmp_path / "misses.csv"
    path.write_text("dataset,rho,goal,ratio,best_peer,best_error,esm_error,path,path_share,public_share,runs,"
                    "longer_ratio,longer_runs\n"
                    "corner,0.0625,G1,5.5,PLAN,17.6,97.0,centred-iome,0.75,1,12,4.9,100\n")
    (m,) = omr.load_misses(path)
    assert (m.dataset, m.rho, m.goal, m.path) == ("corner", 0.0625, "G1", "centred-iome")
    assert (m.runs, m.longer_runs) == (12, 100)
    assert m.ratio == 5.5 and m.path_share == 0.75 and m.public_share == 1.0 and m.longer_ratio == 4.9
    with pytest.raises(FileNotFoundError, match="offmodel_misses.py"):
        omr.load_misses(tmp_path / "none.csv")
    (tmp_path / "bad.csv").write_text("dataset,rho\ncorner,1\n")
    with pytest.raises(ValueError, match="columns"):
        omr.load_misses(tmp_path / "bad.csv")


def test_committed_files_load():
    runs = omr.load_path_runs()
    assert len(runs) > 10_000 and {r.release for r in runs} >= {"whole iome", "after algorithm3", "after plan"}
