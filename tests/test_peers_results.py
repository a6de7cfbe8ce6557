"""Tests of egmbook.peer_results, the typed loader of the peers benchmarks' results.

What could fail: a results file with other columns, a text where a number belongs, a
setting listed twice, the two summary files covering different settings, a lookup of a
setting that is not there (each must be a clear error naming the file, line or argument);
and, on the committed results, a grid that is not the full sweep (3 datasets, 21 settings,
5 budgets, every arm of egmlib.peers.arms.ARMS with 50 runs and a median), or an
off-model table that misses a dataset of egmbook.offmodel_data or one of the arms the
chapter compares (its runs: egmbook.sweep.RUNS_OF).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from egmbook import gaussian_benchmarks as gb
from egmbook import offmodel_data as od
from egmbook.findings import peers as pf
from egmbook.peer_results import PEERS_RESULTS_DIR, load_offmodel_results, load_peers_results
from egmbook.sweep import RUNS_OF
from egmlib.peers.arms import ARMS

#: Every arm of the registry: every setting has them, 50 runs each (one regeneration).
CHAPTER8 = tuple(ARMS)

FILES = ("peers.csv", "peers_excess.csv", "peers_privacy.csv", "peers_faithfulness.csv")


def test_committed_results_cover_the_whole_sweep():
    res = load_peers_results()
    settings = [s for ds in ("GaussianA", "GaussianB", "GaussianC") for s in gb.settings(ds)]
    arms = {k[1] for k in res.error}
    assert arms >= set(CHAPTER8)
    assert len(res.error) == len(settings) * len(gb.RHOS) * len(arms)
    for s in settings:
        for rho in gb.RHOS:
            for a in arms:
                e = res.error_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho)
                x = res.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho)
                # ESM and PLAN's last step on its inputs: rerun on ESM's final code with --runs 6
                assert e.runs == x.runs == (6 if a in pf.ESM_ARMS else 50)
                assert e.n == s.n and e.mean > 0 and x.sd >= 0
                assert e.median is not None and e.median > 0
    # the empirical mean's excess over itself is zero
    assert res.excess_of("GaussianC", "empirical", d=16, alpha=2.0, rho=1.0).mean == 0
    assert {p.rho for p in res.privacy} == set(gb.RHOS)
    assert {r.algorithm for r in res.faithfulness} >= {"PLAN", "IOME", "empirical", "PLAN-noscale"}
    assert all((r.extra_mean is None) == (r.algorithm not in ("PLAN", "PLAN-noscale"))
               for r in res.faithfulness)


def test_lookup_names_the_argument():
    res = load_peers_results()
    with pytest.raises(ValueError, match="algorithm must be one of"):
        res.error_of("GaussianC", "PLAN2", d=16, alpha=2.0, rho=1.0)
    with pytest.raises(ValueError, match="d, alpha and rho must name a setting"):
        res.error_of("GaussianC", "PLAN", d=17, alpha=2.0, rho=1.0)
    with pytest.raises(TypeError, match="dataset must be one of the strings"):
        res.excess_of(3, "PLAN", d=16, alpha=2.0, rho=1.0)


def _copy(tmp_path: Path) -> Path:
    for name in FILES:
        shutil.copy(PEERS_RESULTS_DIR / name, tmp_path / name)
    return tmp_path


def _edit(path: Path, fn) -> None:
    rows = list(csv.reader(path.open(newline="")))
    rows = fn(rows)
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)


def test_bad_files_are_clear_errors(tmp_path):
    folder = _copy(tmp_path)
    _edit(folder / "peers.csv", lambda rows: [rows[0], [*rows[1][:7], "abc", *rows[1][8:]], *rows[2:]])
    with pytest.raises(ValueError, match="peers.csv line 2: error_mean must be a number"):
        load_peers_results(folder)
    folder = _copy(tmp_path)
    _edit(folder / "peers_excess.csv", lambda rows: [rows[0][:-1] + ["sd"], *rows[1:]])
    with pytest.raises(ValueError, match="peers_excess.csv: the columns must be"):
        load_peers_results(folder)
    folder = _copy(tmp_path)
    _edit(folder / "peers.csv", lambda rows: [*rows, rows[1]])
    with pytest.raises(ValueError, match="a second row for"):
        load_peers_results(folder)
    folder = _copy(tmp_path)
    _edit(folder / "peers_excess.csv", lambda rows: rows[:-1])
    with pytest.raises(ValueError, match="must hold the same settings"):
        load_peers_results(folder)
    folder = _copy(tmp_path)
    (folder / "peers_privacy.csv").unlink()
    with pytest.raises(FileNotFoundError, match="peers_privacy.csv not found"):
        load_peers_results(folder)
    with pytest.raises(TypeError, match="path must be a str or pathlib.Path"):
        load_peers_results(3)


def test_committed_offmodel_results():
    off = load_offmodel_results()
    assert off.datasets == tuple(od.DATASETS)
    assert set(off.algorithms) >= {"Alg3", "Alg3-private", "PLAN", "IOME", "PLAN-last-step", "Alg3-oracle",
                                   "empirical"}
    for ds in off.datasets:
        for a in off.algorithms:
            for rho in gb.RHOS:
                x = off.excess_of(ds, a, rho=rho)
                assert x.runs == RUNS_OF["offmodel"] and x.median is not None and x.sd >= 0
                assert (x.mean == 0) == (a == "empirical")
    # real data: the reference mean is the empirical one, so the two errors coincide
    for ds in od.REAL:
        assert off.error_of(ds, "PLAN", rho=0.25).mean == off.excess_of(ds, "PLAN", rho=0.25).mean
    with pytest.raises(ValueError, match="algorithm must be one of"):
        off.excess_of("digits", "PLAN2", rho=0.25)
    with pytest.raises(ValueError, match="must name a row"):
        off.excess_of("digits", "PLAN", rho=0.3)
