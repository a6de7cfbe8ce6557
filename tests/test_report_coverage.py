"""egmlib.report_coverage: the coverage table is read from the notebooks."""

import json
from pathlib import Path

import pytest

from egmlib import report_coverage as rc

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"


def _nb(path, cells):
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))


def _md(src):
    return {"cell_type": "markdown", "metadata": {}, "source": src}


def _code(src, out=""):
    return {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": src,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": out}] if out else []}


def test_statuses_on_a_synthetic_book(tmp_path):
    _nb(tmp_path / "a.ipynb", [
        _md("(x-check-one)=\n**Check.**"), _code("assert 1 == 1\nprint('ok')", "ok\nLemma: verified\n"),
        _md("(x-check-two)=\ntext"), _md("more"), _code("print(2)", "2\n"),
    ])
    checks = rc.scan_checks(tmp_path)
    assert checks["x-check-one"] == rc.CheckCell("a.ipynb", 1, True, "Lemma: verified")
    assert checks["x-check-two"].asserts is False and checks["x-check-two"].cell == 4
    items = (("A", ("x-check-one",)), ("B", ("x-check-one", "x-check-two")),
             ("C", ("x-check-two",)), ("D", ("x-check-three",)))
    status = {r.item: r.status for r in rc.coverage_table(tmp_path, items)}
    assert status == {"A": "asserted", "B": "partial", "C": "printed only", "D": "missing"}


def test_every_item_has_a_label_and_the_book_is_scannable():
    assert len(rc.REPORT_ITEMS) == 36 and all(labels for _, labels in rc.REPORT_ITEMS)
    rows = rc.coverage_table(CHAPTERS)
    assert len(rows) == len(rc.REPORT_ITEMS)
    assert all(r.status in ("asserted", "partial", "printed only", "missing") for r in rows)


def test_missing_directory():
    with pytest.raises(FileNotFoundError, match="chapters_dir"):
        rc.scan_checks("/nonexistent/chapters")
