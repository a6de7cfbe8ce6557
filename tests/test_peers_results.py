"""Tests of egmbook.peer_results, the typed loader of the peers benchmarks' results.

What could fail: a results file with other columns, a text where a number belongs, a
setting listed twice, the two summary files covering different settings, a lookup of a
setting that is not there (each must be a clear error naming the file, line or argument);
and, on the committed results, a grid that is not the full sweep (3 datasets, 21 settings,
5 budgets, 9 arms, 50 runs each).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from egmbook import gaussian_benchmarks as gb
from egmbook.peer_results import ALGORITHMS, PEERS_RESULTS_DIR, load_peers_results

FILES = ("peers.csv", "peers_excess.csv", "peers_privacy.csv", "peers_faithfulness.csv")


def test_committed_results_cover_the_whole_sweep():
    res = load_peers_results()
    settings = [s for ds in ("GaussianA", "GaussianB", "GaussianC") for s in gb.settings(ds)]
    assert len(res.error) == len(settings) * len(gb.RHOS) * len(ALGORITHMS)
    for s in settings:
        for rho in gb.RHOS:
            for a in ALGORITHMS:
                e = res.error_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho)
                x = res.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho)
                assert e.runs == x.runs == 50 and e.n == s.n and e.mean > 0 and x.sd >= 0
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
    _edit(folder / "peers.csv", lambda rows: [rows[0], [*rows[1][:7], "abc", rows[1][8]], *rows[2:]])
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
