"""Static checks on the stored notebooks that nbval alone would not catch.

nbval compares stored outputs with a fresh execution, so a code cell that was never
executed (no outputs, no execution count) passes vacuously. These tests make such a
notebook fail, together with stored errors and volatile reprs.
"""

import json
import re
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))
VOLATILE = re.compile(r" at 0x[0-9a-fA-F]+|<[a-zA-Z_.]+ object at ")


def _code_cells(path):
    nb = json.loads(path.read_text())
    return [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]


def _text(output):
    if "text" in output:
        return "".join(output["text"])
    return "".join(output.get("data", {}).get("text/plain", ""))


def test_chapters_contain_notebooks():
    assert NOTEBOOKS, f"no notebooks found in {CHAPTERS}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_and_saved(path):
    cells = _code_cells(path)
    assert cells, f"{path.name} has no code cell"
    never_run = [i for i, c in enumerate(cells) if c.get("execution_count") is None]
    assert not never_run, f"{path.name}: code cells {never_run} were never executed"
    counts = [c["execution_count"] for c in cells]
    assert counts == sorted(counts) and len(set(counts)) == len(counts), (
        f"{path.name}: execution counts {counts} are not in order; re-execute top to bottom"
    )
    silent = [i for i, c in enumerate(cells) if not c.get("outputs")]
    assert len(silent) < len(cells), f"{path.name}: no code cell has a stored output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_errors_or_volatile_reprs_stored(path):
    for i, cell in enumerate(_code_cells(path)):
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name}: cell {i} stored an error"
            assert out.get("name") != "stderr", f"{path.name}: cell {i} stored stderr: {_text(out)[:200]}"
            assert not VOLATILE.search(_text(out)), f"{path.name}: cell {i} stores a memory address"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernel_is_python3(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
