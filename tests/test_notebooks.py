"""Static checks on the stored notebooks that nbval alone would not catch.

nbval compares stored outputs with a fresh execution, so a code cell that was never
executed (no outputs, no execution count) passes vacuously. These tests make such a
notebook fail, together with stored errors and volatile reprs.
"""

import ast
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


# ------------------------------------------------------------------------------------
# the form a reader meets (issue: "the book reads like a paper")

MAX_VISIBLE_LINES = 15
HIDDEN = {"hide-input", "remove-input", "remove-cell", "hide-cell"}
INTERNAL = re.compile(r"seed 00\d|registr(?:y|ies) reachable|\bTODO\b")
RAW_LABEL = re.compile(r"\((?:ch\d+|app[ab]?|report|book)-[a-z0-9-]+\)")
PAGES_MD = sorted(CHAPTERS.glob("*.md"))


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_visible_code_is_short_and_checks_use_the_one_helper(path):
    problems = []
    for i, cell in enumerate(_code_cells(path)):
        src = "".join(cell["source"])
        if re.search(r"^def (verdict|check)\b", src, re.M):
            problems.append(f"cell {i} defines its own check helper: use egmbook.claims.check")
        lines = [ln for ln in src.splitlines() if ln.strip()]
        if len(lines) > MAX_VISIBLE_LINES and not (_tags(cell) & HIDDEN):
            problems.append(f"cell {i} shows {len(lines)} lines of code: tag it hide-input")
        for out in cell.get("outputs", []):
            if re.search(r":\s*verified\s*$", _text(out), re.M):
                problems.append(f"cell {i} prints 'verified': state the check with egmbook.claims.check")
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_figure_has_alt_text(path):
    missing = []
    for i, cell in enumerate(_code_cells(path)):
        has_image = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
        alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
        if has_image and len(alt.split()) < 4:
            missing.append(i)
    assert not missing, f"{path.name}: figure cells {missing} need mystnb.image.alt saying what they show"


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES_MD, ids=lambda p: p.name)
def test_no_workshop_words_reach_the_reader(path):
    outputs = []
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        texts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
        outputs = [_text(o) for c in _code_cells(path) for o in c.get("outputs", [])]
    else:
        texts = [path.read_text()]
    hits = sorted({m.group(0) for t in texts + outputs for m in INTERNAL.finditer(t)})
    hits += sorted({m.group(0) for t in outputs for m in RAW_LABEL.finditer(t)})
    assert not hits, f"{path.name} shows internal words to the reader: {hits}"


#: Issue 29: the chapters' analysis lives in egmbook.findings; a notebook calls it, shows the
#: table or figure, checks and glues. Lines of code (blank lines too), in all and per notebook.
MAX_CODE_LINES_TOTAL, MAX_CODE_LINES_NOTEBOOK = 2600, 180


def _code_lines(path):
    return sum(len("".join(c["source"]).splitlines()) for c in _code_cells(path))


def test_chapters_call_findings_rather_than_compute():
    per = {p.name: _code_lines(p) for p in NOTEBOOKS}
    over = {name: n for name, n in per.items() if n > MAX_CODE_LINES_NOTEBOOK}
    assert not over, (f"notebooks over {MAX_CODE_LINES_NOTEBOOK} lines of code (move their analysis to "
                      f"egmbook.findings): {over}")
    assert sum(per.values()) <= MAX_CODE_LINES_TOTAL, f"{sum(per.values())} lines of code in the chapters"


def test_nothing_edits_sys_path():
    """Chapters, benchmarks, scripts and both packages import what is installed, never by path tricks."""
    root = CHAPTERS.parent
    files = [*NOTEBOOKS, *(p for d in ("benchmarks", "scripts", "egmlib", "egmbook", "_ext", "tests")
                           for p in (root / d).rglob("*.py"))]
    edits = [p.relative_to(root).as_posix() for p in files if re.search(r"sys\.path\.(insert|append)|sys\.path\s*\+?=",
                                                                        p.read_text(encoding="utf-8"))]
    assert not edits, f"sys.path edited in {edits}"


# ------------------------------------------------------------------------------------
# issue 36: short cells, hidden or not, and every table and figure a cell builds is shown

#: No code cell, hidden or not, holds more than this many lines (blank lines aside): a longer
#: computation or plotting helper belongs in egmbook (findings, display).
MAX_CELL_LINES = 25

def cell_lines(src):
    """Lines of code of a cell, blank lines aside."""
    return sum(1 for line in src.splitlines() if line.strip())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_code_cell_is_long_hidden_or_not(path):
    long = {i: cell_lines("".join(c["source"])) for i, c in enumerate(_code_cells(path))}
    long = {i: n for i, n in long.items() if n > MAX_CELL_LINES}
    assert not long, (f"{path.name}: code cells over {MAX_CELL_LINES} lines (cell: lines) {long}; move the "
                      "computation to egmbook.findings and plotting helpers to egmbook.display")


#: Calls that build a table (egmbook.display.table and heatmap, a record's .table() or
#: .table_by_setting()) and the pyplot calls that build a figure.
TABLE_BUILDERS = {"table", "heatmap", "table_by_setting"}
FIGURE_BUILDERS = {("plt", "subplots"), ("plt", "figure"), ("plt", "subplot_mosaic")}


def _callee(func):
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _inside_showing_calls(tree):
    """Every node inside a display(...) or glue(...) call (a glue without display=False shows)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node.func) in ("display", "glue"):
            if any(k.arg == "display" and isinstance(k.value, ast.Constant) and k.value.value is False
                   for k in node.keywords):
                continue
            inside |= {id(m) for m in ast.walk(node) if m is not node}
    return inside


def unshown(src):
    """The tables and figures a cell builds and never shows: a table that is neither inside a
    display (or glue) call, nor the cell's last expression, nor assigned to a name that is
    shown so; a pyplot figure in a cell without plt.show() that is not shown so either."""
    tree = ast.parse("\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))))
    inside = _inside_showing_calls(tree)
    last = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    shown_names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) in inside}
    for shown in (last.elts if isinstance(last, ast.Tuple) else [last]):
        if isinstance(shown, ast.Name):  # the cell ends with the name (or a tuple of names)
            shown_names.add(shown.id)
    plt_show = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "show"
                   and isinstance(n.func.value, ast.Name) and n.func.value.id == "plt" for n in ast.walk(tree))
    found = []
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call) or id(node) in inside or node is last:
                continue
            func = node.func
            is_table = _callee(func) in TABLE_BUILDERS
            is_figure = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                         and (func.value.id, func.attr) in FIGURE_BUILDERS)
            if not (is_table or (is_figure and not plt_show)):
                continue
            what = f"line {node.lineno}: {_callee(func)}(...)"
            if isinstance(stmt, ast.Assign) and stmt.value is node:
                names = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if not names & shown_names:
                    found.append(f"{what} is assigned to {sorted(names)} and never shown")
            elif isinstance(stmt, ast.Expr) and stmt.value is node:
                found.append(f"{what} is neither displayed nor the cell's last expression")
    return found


def test_the_unshown_check_finds_what_it_should():
    assert unshown("t = table({'a': [1]})\nx = 1") == [
        "line 1: table(...) is assigned to ['t'] and never shown"]
    assert unshown("table({'a': [1]})\nglue('n', 1, display=False)") == [
        "line 1: table(...) is neither displayed nor the cell's last expression"]
    assert unshown("fig, ax = plt.subplots()\nax.plot([1])") != []
    for fine in ("table({'a': [1]})", "display(table({'a': [1]}))", "t = r.table()\ndisplay(t)",
                 "t = heatmap(c, heat=['x'])\nt", "fig, ax = plt.subplots()\nax.plot([1])\nplt.show()",
                 "glue('t', table({'a': [1]}))", "rows = tuning_table(res)\nx = 1"):
        assert unshown(fine) == [], fine


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_table_and_figure_a_cell_builds_is_shown(path):
    found = {i: p for i, c in enumerate(_code_cells(path)) if (p := unshown("".join(c["source"])))}
    assert not found, f"{path.name}: built and never shown (cell: where) {found}"
