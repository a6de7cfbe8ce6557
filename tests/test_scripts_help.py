"""Every benchmark and pipeline script answers ``--help`` without running (issue 29).

Three scripts used to start their benchmark on ``--help`` and overwrite their saved
output.  Each script is run with ``--help``: it must exit at once with a usage line, and
no file under ``benchmarks/results/`` or ``data/`` may change.  The scripts run one after
the other in one fresh interpreter (``runpy``, as ``python script.py --help`` runs it),
which pays for the imports once instead of once per script (issue 36: 9 s of interpreters).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])

#: Runs each script given on its command line as ``python SCRIPT --help`` would, in this one
#: interpreter, and prints {script: {"status", "stdout", "error"}} as JSON.  The environment
#: and sys.argv are restored after each; variables that make a script re-execute itself are
#: removed first.
_DRIVER = r"""
import contextlib, io, json, os, runpy, sys
for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(var, None)
out = {}
for path in sys.argv[1:]:
    env, argv, buf = dict(os.environ), sys.argv, io.StringIO()
    status, error = None, ""
    sys.argv = [path, "--help"]
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(path, run_name="__main__")
        status = "ran to the end"
    except SystemExit as exc:
        status = exc.code if exc.code is not None else 0
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        sys.argv = argv
        os.environ.clear()
        os.environ.update(env)
    out[path] = {"status": status, "stdout": buf.getvalue(), "error": error}
sys.stdout.write(json.dumps(out))
"""


def _snapshot() -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_mtime_ns, p.stat().st_size)
            for folder in (ROOT / "benchmarks" / "results", ROOT / "data") for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def helped() -> dict[str, dict[str, object]]:
    """Every script's ``--help``, run once, and whether any saved result changed."""
    before = _snapshot()
    run = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, SCRIPTS)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout)
    out["changed files"] = {"changed": _snapshot() != before}
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_help_prints_usage_and_runs_nothing(script, helped):
    got = helped[str(script)]
    assert not got["error"], got["error"]
    assert got["status"] == 0, f"{script.name} --help: {got['status']}"
    assert str(got["stdout"]).startswith("usage:"), str(got["stdout"])[:500]


def test_help_changes_no_saved_result(helped):
    assert not helped["changed files"]["changed"], "a script's --help changed files under benchmarks/results or data"


def test_defaults_are_shown(helped):
    text = str(helped[str(ROOT / "benchmarks" / "peers_sweep.py")]["stdout"])
    flat = " ".join(text.split())  # argparse wraps the help text
    assert "{'gaussian': 50, 'offmodel': 12}" in flat and "(default: ['gaussian', 'offmodel'])" in flat


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
