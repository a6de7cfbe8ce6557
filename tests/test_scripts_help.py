"""Every benchmark and pipeline script answers ``--help`` without running (issue 29).

Three scripts used to start their benchmark on ``--help`` and overwrite their saved
output.  Each script is run with ``--help`` in a fresh interpreter: it must exit at once
with a usage line, and no file under ``benchmarks/results/`` or ``data/`` may change.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])


def _snapshot() -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_mtime_ns, p.stat().st_size)
            for folder in (ROOT / "benchmarks" / "results", ROOT / "data") for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_help_prints_usage_and_runs_nothing(script):
    before = _snapshot()
    run = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("usage:"), run.stdout[:500]
    assert _snapshot() == before, f"{script.name} --help changed files"


def test_defaults_are_shown():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peers_sweep.py"), "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert "(default: 50)" in run.stdout and "(default: ['gaussian', 'offmodel'])" in run.stdout


def test_a_partial_run_goes_to_scratch(tmp_path, capsys):
    """egmbook.cli.result_path: a full run writes its committed result, a slice the same file
    name in a scratch folder beside it (created then, and said)."""
    from egmbook.cli import result_path

    target = tmp_path / "results" / "peers_timing.txt"
    assert result_path(target, full_run=True) == target
    assert not (tmp_path / "results").exists()
    slice_ = result_path(str(target), full_run=False)
    assert slice_ == tmp_path / "results" / "scratch" / "peers_timing.txt" and slice_.parent.is_dir()
    assert "partial run" in capsys.readouterr().out
    with pytest.raises(TypeError, match="full_run must be True or False"):
        result_path(target, full_run=1)
    with pytest.raises(TypeError, match="path must be a str or a Path"):
        result_path(None, full_run=True)
