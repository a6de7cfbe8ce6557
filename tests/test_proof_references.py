"""Every reference to a statement of the book in a docstring resolves in the built book (issue 36).

The docstrings of egmlib and egmbook cite the report's and the book's statements by the
names and numbers the built book shows: "Proposition 9.J", "Lemma 4.1", "Theorem 4",
"eq. (16)", "eq. (8.B)", or a sphinx-proof label (``{prf:ref}`book-proposition-9-j```), never by
title (``Lemma "A title"``).
This test reads the built HTML (``_build/html``, README command 1) for the numbers it
shows -- each statement's caption ("Proposition 9.J"), each equation's number ("(8.B)")
and every anchor -- and fails on a docstring reference that names none of them.

What is not a reference to the book: a statement or equation of another work (within the
same sentence as its citation: "Bun and Steinke 2016, Lemma 1.7", "Theorem 7.12 of Magnus
and Neudecker"), doctest examples and ``literal`` text.  Without a built book the test skips
and says so; under CI (``REQUIRE_BUILT_BOOK`` or ``CI`` set; ``.ci/run`` sets the first once it has
built the book) the built book is required.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"

KINDS = ("Algorithm|Assumption|Claim|Conjecture|Corollary|Criterion|Definition|Example|Lemma|Observation|"
         "Proposition|Remark|Theorem")
STATEMENT = re.compile(rf"\b({KINDS}) ((?:[0-9]+|[A-Z])(?:\.[0-9]+[a-z]?|\.[A-Z])?)\b")
EQUATIONS = re.compile(r"\beqs?\.\s*((?:\([0-9A-Z]+(?:\.[0-9A-Z]+)?\)(?:\s*(?:-|–|,|and|to|or)\s*)?)+)")
PRF_REF = re.compile(r"\{prf:ref\}`(?:[^`<]*<)?([A-Za-z0-9_-]+)>?`")
#: A statement or chapter cited by its title in quotes: never resolves (titles change and
#: repeat); cite its number or label instead.
BY_TITLE = re.compile(rf'\b(chapter|section|{KINDS})\s+"([^"]+)"', re.I)
#: A citation of another work: an author-year, a {cite} role, or "Author and Author,".
CITATION = re.compile(r"\{cite\}`[^`]+`|\b[A-Z][A-Za-z-]+(?: et al\.)?,? (?:19|20)\d\d\b|\((?:19|20)\d\d\b|"
                      r"\b[A-Z][a-z]+ and [A-Z][a-z]+(?: \(\d{4}\))?,\s*$")
#: The report itself, whose statements the book restates with the report's numbers.
THE_REPORT = re.compile(r"poulsen|Poulsen")


def _built_book() -> str:
    """The text of every page of the built book, or skip (fail under CI) when there is none."""
    if not (HTML / "index.html").is_file():
        if os.environ.get("REQUIRE_BUILT_BOOK") or os.environ.get("CI"):
            pytest.fail(f"{HTML} is not built: under CI the book is built first (README command 1)")
        pytest.skip(f"the book is not built ({HTML / 'index.html'} missing): run README command 1 first")
    return "".join(p.read_text(encoding="utf-8") for p in sorted(HTML.rglob("*.html")))


def shown_names(html: str) -> tuple[set[str], set[str], set[str]]:
    """(statement captions such as "Proposition 9.J", equation numbers such as "8.B", anchors)."""
    captions = {" ".join(m.group(1).split()) for m in re.finditer(r'<span class="caption-number">([^<]*)</span>', html)}
    equations = set(re.findall(r'class="eqno">\(([^)<]*)\)', html))
    return captions, equations, set(re.findall(r'\bid="([^"]+)"', html))


def _prose(doc: str) -> str:
    """The docstring without doctest examples (from a >>> line to the next blank line) and
    without ``literal`` text."""
    kept, in_example = [], False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_example = True
        elif not stripped:
            in_example = False
        if not in_example:
            kept.append(line)
    return re.sub(r"``.*?``", "``…``", "\n".join(kept), flags=re.S)


def _cites_another_work(before: str, after: str) -> bool:
    """Whether the reference belongs to another work: its sentence cites one just before it
    (and that citation is not the report's), or it is followed by "of Author"."""
    clause = re.split(r"[.;:!?]\s|\n\s*\n", before)[-1]
    cites = list(CITATION.finditer(clause))
    if cites and not THE_REPORT.search(cites[-1].group(0)):
        return True
    return re.match(r"\s+(?:of|in) (?:[A-Z][a-z]+|\{cite\})", after) is not None


def references(doc: str) -> list[str]:
    """The references to statements, equations and labels of the book in one docstring."""
    text = _prose(doc)
    flat = " ".join(text.split())
    found = []
    for m in STATEMENT.finditer(flat):
        if not _cites_another_work(flat[max(0, m.start() - 120):m.start()], flat[m.end():m.end() + 40]):
            found.append(f"{m.group(1)} {m.group(2)}")
    for m in EQUATIONS.finditer(flat):
        if not _cites_another_work(flat[max(0, m.start() - 120):m.start()], flat[m.end():m.end() + 40]):
            first_last = re.findall(r"\(([0-9A-Z]+(?:\.[0-9A-Z]+)?)\)", m.group(1))
            found += [f"eq. ({n})" for n in first_last]
    found += [f"prf:{label}" for label in PRF_REF.findall(text)]
    found += [f'{m.group(1)} "{m.group(2)}" (by title)' for m in BY_TITLE.finditer(flat)]
    return found


def _docstrings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [d for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (d := ast.get_docstring(node, clean=True))]


def unresolved(html: str) -> dict[str, int]:
    """``"file: reference"`` -> how often, for every docstring reference the built book does not show."""
    captions, equations, anchors = shown_names(html)
    out: dict[str, int] = {}
    for path in sorted([*(ROOT / "egmlib").rglob("*.py"), *(ROOT / "egmbook").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        for doc in _docstrings(path):
            for ref in references(doc):
                ok = (False if ref.endswith("(by title)") else ref[3:] in anchors if ref.startswith("prf:")
                      else ref[5:-1] in equations if ref.startswith("eq. (") else ref in captions)
                if not ok:
                    out[f"{rel}: {ref}"] = out.get(f"{rel}: {ref}", 0) + 1
    return out


def test_the_reference_finder():
    doc = ("Algorithm 3's radius (report eq. (16), Lemma 4.1; see Proposition 9.J and eqs. (8.B)-(9)).\n"
           "Composition (Bun and Steinke 2016, Lemma 1.7); Higham 2002, eq. (4.4); Theorem 7.12 of Magnus and\n"
           "Neudecker; {cite}`dwork2014` Theorem 3.16; Dwork and Roth, Theorem 3.22; {prf:ref}`book-lemma-9-c`;\n"
           "Laurent and Massart's bound (2000, Lemma 1);\n"
           "the report {cite}`poulsen2023`, Theorem 4.\n\n>>> check('eq. (99)')\n'eq. (99)'\n\n``\"eq. (98)\"``\n"
           'as proved in the book (chapter "The title").')
    assert references(doc) == ["Algorithm 3", "Lemma 4.1", "Proposition 9.J", "Theorem 4", "eq. (16)", "eq. (8.B)",
                                "eq. (9)", "prf:book-lemma-9-c", 'chapter "The title" (by title)']


def test_every_reference_in_a_docstring_resolves_in_the_built_book():
    html = _built_book()
    captions, equations, _ = shown_names(html)
    assert {"Lemma 4.1", "Theorem 4", "Proposition 9.J"} <= captions and {"16", "8.B"} <= equations, (
        "the built book shows none of the statements this test looks for: is the build complete?")
    found = unresolved(html)
    assert not found, ("docstrings cite statements the built book does not show (cite what it shows: its "
                       f"caption, equation number or label): {found}")
