"""The PDF edition (``scripts/build_pdf.py``): every chapter printed, math typeset, the same
numbers as the HTML book.

The text is extracted by ``pdftotext`` (Debian's poppler-utils) where it is installed, else by
pypdf (the same text, a hundred times slower).

Needs the PDF (``python scripts/build_pdf.py`` after the HTML build); skips, saying so,
without it, unless the environment sets ``REQUIRE_PDF_TEST=1`` (CI does, after building
it), which turns the skip into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"

_spec = importlib.util.spec_from_file_location("build_pdf", ROOT / "scripts" / "build_pdf.py")
build_pdf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_pdf)

PDF = build_pdf.OUT / build_pdf.PDF_NAME
REQUIRED = os.environ.get("REQUIRE_PDF_TEST") == "1"
needs_pdf = pytest.mark.skipif(not PDF.is_file() and not REQUIRED,
                               reason=f"no PDF edition at {PDF}: run python scripts/build_pdf.py")
MIN_PAGES = 100  # the chapters alone fill more than this
MAX_PDF_BYTES = 16_000_000  # mostly MathJax's glyphs, printed as vector paths


@cache
def _pdf():
    from pypdf import PdfReader

    if not PDF.is_file():
        pytest.fail(f"REQUIRE_PDF_TEST=1 but {PDF} does not exist: run python scripts/build_pdf.py")
    reader = PdfReader(PDF)
    pdftotext = shutil.which("pdftotext")
    if pdftotext:  # poppler's extractor (Debian poppler-utils): seconds instead of minutes
        out = subprocess.run([pdftotext, "-enc", "UTF-8", str(PDF), "-"], capture_output=True, check=True)
        texts = out.stdout.decode("utf-8").split("\f")[: len(reader.pages)]
    else:
        texts = [page.extract_text() or "" for page in reader.pages]
    assert len(texts) == len(reader.pages), f"{len(texts)} page texts for {len(reader.pages)} pages"
    return reader, texts


def _chapter_pages(reader) -> dict[str, tuple[int, int]]:
    """Bookmark title -> (first page, end page) of each printed chapter."""
    marks = [(item.title, reader.get_destination_page_number(item)) for item in reader.outline
             if not isinstance(item, list)]
    ends = [start for _, start in marks[1:]] + [len(reader.pages)]
    return {title: (start, end) for (title, start), end in zip(marks, ends, strict=True)}


@needs_pdf
def test_pdf_has_title_pages_and_a_bookmark_per_chapter():
    reader, texts = _pdf()
    assert len(reader.pages) > MIN_PAGES, f"{PDF.name} has only {len(reader.pages)} pages"
    assert PDF.stat().st_size <= MAX_PDF_BYTES, f"{PDF.name} is {PDF.stat().st_size / 1e6:.1f} MB"
    assert PDF.name != "projectnamenotset.pdf"
    assert reader.metadata.title == "Differentially private vector sums for Gaussian data", reader.metadata
    assert "Differentially private vector sums" in texts[0], f"no title page: {texts[0][:200]!r}"
    expected = build_pdf.toc_pages()
    marks = _chapter_pages(reader)
    assert len(marks) == len(expected), f"{len(marks)} bookmarks for {len(expected)} pages: {list(marks)}"
    empty = [title for title, (start, end) in marks.items() if not "".join(texts[start:end]).strip()]
    assert not empty, f"chapters printed without text: {empty}"
    assert any(title.startswith("Bibliography") for title in marks), f"no bibliography among {list(marks)}"
    biblio = "".join(texts[slice(*marks[next(t for t in marks if t.startswith("Bibliography"))])])
    assert "Prékopa" in biblio and "\\'" not in biblio, "the bibliography's accents are not decoded"


@needs_pdf
def test_pdf_has_no_raw_tex():
    """Math is typeset (MathJax's SVG, not text): no ``$``, ``\\(`` or TeX command in the text."""
    _, texts = _pdf()
    raw = re.compile(r"\$|\\[()\[\]]|\\(?:begin|end)\{|\\(?:frac|sigma|mathbb|mathrm|sqrt|varepsilon)\b")
    found = [(k + 1, text[max(m.start() - 40, 0): m.end() + 40].replace("\n", " "))
             for k, text in enumerate(texts) for m in raw.finditer(text)]
    assert not found, f"{len(found)} raw TeX fragments, e.g. " + "; ".join(f"page {p}: {c!r}" for p, c in found[:5])


class _Eqnos(HTMLParser):
    """The equation numbers of a page, in order (Sphinx's ``span.eqno``)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.numbers, self._depth = [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "span" and "eqno" in (dict(attrs).get("class") or "").split():
            self._depth, self._text = 1, []
        elif self._depth:
            self._depth += 1 if tag == "span" else 0

    def handle_endtag(self, tag):
        if self._depth and tag == "span":
            self._depth -= 1
            if not self._depth:
                self.numbers.append("".join(self._text).replace("#", "").strip())

    def handle_data(self, data):
        if self._depth:
            self._text.append(data)


SAMPLE = ["chapters/02_preliminaries", "chapters/04b_lemma41_second_order", "chapters/04c_lemma42_theorem4",
          "chapters/appendix_a_bordered_hessian"]


@needs_pdf
@pytest.mark.parametrize("file", SAMPLE)
def test_pdf_equation_numbers_match_the_html(file):
    """The equation numbers printed in a chapter are the HTML page's, in the same order."""
    reader, texts = _pdf()
    parser = _Eqnos()
    parser.feed((HTML / (file + ".html")).read_text(encoding="utf-8"))
    assert parser.numbers, f"{file}.html has no numbered equation: choose another sample"
    title = build_pdf.page_title((HTML / (file + ".html")).read_text(encoding="utf-8"))
    marks = _chapter_pages(reader)
    assert title in marks, f"no bookmark {title!r} for {file} among {list(marks)}"
    text = " ".join(texts[slice(*marks[title])])
    printed = [n for n in re.findall(r"\((?:[A-Z]?\d+(?:\.[0-9A-Z]+)*|[A-Z]\.\d+)\)", text)]
    position = 0
    for eqno in parser.numbers:  # each HTML number appears, in order
        found = [k for k in range(position, len(printed)) if printed[k] == eqno]
        assert found, f"{file}: equation {eqno} of the HTML is not printed after position {position}: {printed}"
        position = found[0] + 1
