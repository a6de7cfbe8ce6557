r"""Which of the report's numbered items the book checks, read from the notebooks themselves.

Every numbered non-definition item of the report {cite}`poulsen2023` (Lemmas 2.1-2.4,
Corollary 2.1, Theorems 1-4, Lemmas 4.1-4.2, Algorithms 1-3, eqs. (1)-(27), Figures 1-2,
Lemma 7.1, Corollary 7.1 and Appendix A) is mapped in :data:`REPORT_ITEMS` to the labels of
the notebook checks that test it. :func:`coverage_table` finds each label in
``chapters/*.ipynb`` (a Markdown cell containing ``(label)=``), takes the next code cell as
the check, and reports whether that cell asserts (``assert``, ``verdict(`` or ``check(``)
and the last line of its stored output. Nothing in the table is typed by hand except the
mapping item -> labels.

Labels that do not exist yet (checks still to be written) are reported as ``"missing"``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPORT_ITEMS", "CheckCell", "CoverageRow", "scan_checks", "coverage_table"]

#: (item, labels of the checks that test it), in the order of the report.
REPORT_ITEMS: tuple = (
    ("Lemma 2.1", ("ch2-check-post-processing",)),
    ("Lemma 2.2", ("ch2-check-composition", "ch2-check-composition-general")),
    ("Lemma 2.3", ("ch2-check-affine",)),
    ("Lemma 2.4", ("ch2-check-quadratic",)),
    ("Corollary 2.1", ("ch2-check-corollary",)),
    ("Eq. (1)", ("ch3-check-monte-carlo",)),
    ("Theorem 1", ("ch3-check-classical",)),
    ("Theorem 2, eq. (2)", ("ch3-check-profile",)),
    ("Eq. (3)", ("ch2-check-sensitivity",)),
    ("Eq. (4)", ("ch2-check-sensitivity",)),
    ("Eq. (5)", ("ch3-check-monte-carlo",)),
    ("Algorithm 1", ("ch3-check-monte-carlo",)),
    ("Algorithm 2", ("ch3-check-ellipsoid", "ch3-check-monte-carlo")),
    ("Theorem 3, eq. (6)", ("ch3-check-theorem3", "ch3-check-improvement")),
    ("Eqs. (7)-(8)", ("ch4-check-constraint",)),
    ("Eq. (9)", ("ch4-check-eq9",)),
    ("Eq. (10)", ("ch4-check-constraint", "ch4-check-lagrangian")),
    ("Algorithm 3", ("ch4-check-alg3",)),
    ("Lemma 4.1", ("ch4-check-lagrangian", "ch4-check-solve", "ch4-check-general-d",
                   "ch4-check-hessian", "ch4-check-minors", "ch4-check-global",
                   "ch4-check-radius-depends-on-b")),
    ("Eq. (11)", ("ch4-check-lagrangian",)),
    ("Eq. (12)", ("ch4-check-eq12-14",)),
    ("Eq. (13)", ("ch4-check-lagrangian",)),
    ("Eq. (14)", ("ch4-check-eq12-14",)),
    ("Eqs. (15)-(16)", ("ch4-check-solve",)),
    ("Lemma 4.2", ("ch4-check-chi2-moments", "ch4-check-abs-moments", "ch4-check-product",
                   "ch4-check-L", "ch4-check-bernstein", "ch4-check-lemma42-numeric")),
    ("Eq. (17)", ("ch4-check-L", "ch4-check-L2")),
    ("Eqs. (18)-(22)", ("ch4-check-second-moment",)),
    ("Eq. (23)", ("ch4-check-bernstein",)),
    ("Theorem 4", ("ch4-check-thm4-algebra", "ch4-check-thm4-grid", "ch4-check-thm4-exact",
                   "ch4-check-thm4-all")),
    ("Eq. (24)", ("ch4-check-eq9",)),
    ("Figure 1", ("ch5-check-figure1",)),
    ("Figure 2", ("ch5-check-dfactor", "ch5-check-accuracy", "ch5-check-tail", "ch5-check-mc",
                  "ch5-check-range", "ch5-check-n", "ch5-check-limits", "ch5-check-procedure")),
    ("Eq. (25)", ("ch4-check-eq25",)),
    ("Lemma 7.1", ("appb-check-lemma71",)),
    ("Corollary 7.1", ("appb-check-cor71",)),
    ("Appendix A, eqs. (26)-(27)", ("appa-check-entries", "appa-check-signs",
                                    "appa-check-induction", "appa-check-arrowhead",
                                    "appa-check-closed-form", "appa-check-general-d")),
)

_LABEL = re.compile(r"^\(([\w-]+)\)=\s*$", re.M)
_ASSERTS = re.compile(r"\bassert\b|\bverdict\(|\bcheck\(")


@dataclass(frozen=True)
class CheckCell:
    """The code cell that follows a check label.

    ``notebook`` is the file name, ``cell`` the index of the code cell, ``asserts`` whether
    its source can fail (``assert``, ``verdict(`` or ``check(``), ``outcome`` the last
    non-empty line of its stored stream output (``""`` if none).
    """

    notebook: str
    cell: int
    asserts: bool
    outcome: str


@dataclass(frozen=True)
class CoverageRow:
    """One row of :func:`coverage_table`.

    ``status`` is ``"asserted"`` when every label exists and its cell asserts,
    ``"partial"`` when some do, ``"printed only"`` when the labels exist but no cell
    asserts, ``"missing"`` when no label exists yet.
    """

    item: str
    labels: tuple
    found: tuple
    status: str


def _outcome(cell: dict) -> str:
    lines = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            lines += "".join(out.get("text", "")).splitlines()
    lines = [ln for ln in lines if ln.strip()]
    return lines[-1] if lines else ""


def scan_checks(chapters_dir: str | Path) -> dict[str, CheckCell]:
    """Every ``(label)=`` in the notebooks of ``chapters_dir`` with the code cell that follows it.

    Raises
    ------
    FileNotFoundError
        If ``chapters_dir`` is not a directory.
    """
    root = Path(chapters_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"chapters_dir must be a directory, got {str(root)!r}")
    found: dict[str, CheckCell] = {}
    for path in sorted(root.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell.get("cell_type") != "markdown":
                continue
            for label in _LABEL.findall("".join(cell.get("source", ""))):
                j = i + 1
                while j < len(cells) and cells[j].get("cell_type") != "code":
                    j += 1
                if j == len(cells):
                    continue
                code = "".join(cells[j].get("source", ""))
                found[label] = CheckCell(path.name, j, bool(_ASSERTS.search(code)),
                                         _outcome(cells[j]))
    return found


def coverage_table(chapters_dir: str | Path, items=REPORT_ITEMS) -> list[CoverageRow]:
    """The coverage of the report's numbered items by the checks in ``chapters_dir``."""
    checks = scan_checks(chapters_dir)
    rows = []
    for item, labels in items:
        found = tuple(lb for lb in labels if lb in checks)
        asserting = [lb for lb in found if checks[lb].asserts]
        if not found:
            status = "missing"
        elif len(asserting) == len(labels):
            status = "asserted"
        elif asserting:
            status = "partial"
        else:
            status = "printed only"
        rows.append(CoverageRow(item, tuple(labels), found, status))
    return rows
