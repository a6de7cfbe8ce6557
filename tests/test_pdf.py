"""The PDF edition (``scripts/build_pdf.py``): every chapter printed, math typeset, the same
numbers as the HTML book, and a document to navigate: a table of contents with page numbers,
nested bookmarks, page numbers that run through the book, running headers, and every link
resolved inside the PDF; nothing in it asks the reader to click.

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
import sys
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"

_spec = importlib.util.spec_from_file_location("build_pdf", ROOT / "scripts" / "build_pdf.py")
build_pdf = importlib.util.module_from_spec(_spec)
sys.modules["build_pdf"] = build_pdf  # its dataclasses look their module up
_spec.loader.exec_module(build_pdf)

PDF = build_pdf.OUT / build_pdf.PDF_NAME
REQUIRED = os.environ.get("REQUIRE_PDF_TEST") == "1"
needs_pdf = pytest.mark.skipif(not PDF.is_file() and not REQUIRED,
                               reason=f"no PDF edition at {PDF}: run python scripts/build_pdf.py")
MIN_PAGES = 100  # the chapters alone fill more than this
# 4.1 MB as built (192 pages, math as text in MathJax's fonts, figures 1.8 MB); with the math
# as SVG glyph paths it was 4.3 MB with each path drawn once (build_pdf.share_paths), 9.7 MB
# without, and 15.8 MB before the print style dropped the glyphs' strokes and the blurred
# shadows. Twice the size leaves room for the book to grow and still fails if one of those
# comes back (or the math falls back to outlines).
MAX_PDF_BYTES = 8_000_000


@cache
def _layout_text(reader, first: int, last: int) -> str:  # noqa: ANN001
    """The text of pages first..last (1-based) line by line as laid out on the page: the
    reading order of plain extraction can move a right-aligned column (the contents' page
    numbers) below the next line."""
    pdftotext = shutil.which("pdftotext")
    if pdftotext:
        out = subprocess.run([pdftotext, "-enc", "UTF-8", "-layout", "-f", str(first), "-l", str(last), str(PDF), "-"],
                             capture_output=True, check=True)
        return out.stdout.decode("utf-8")
    return "\n".join(page.extract_text(extraction_mode="layout") or "" for page in reader.pages[first - 1:last])


@cache
def _pdf():
    """The PDF's reader and each page's text, read once for all the tests of a worker."""
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


def _outline(reader) -> list[tuple[int, str, int]]:
    """The bookmarks as (depth, title, page index), in order."""
    out = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, item.title, reader.get_destination_page_number(item)))

    walk(reader.outline, 0)
    return out


def _chapter_pages(reader) -> dict[str, tuple[int, int]]:
    """Title -> (first page, end page) of each printed page of the book (a chapter, a section
    of one, the contents): the bookmarks of depth 0 and, for a chapter's sections, of depth 1
    whose title carries a section number of the chapter's own pages ("4.2. ...")."""
    pages = {build_pdf.plain(p.title): p for p in build_pdf.printed_pages()}
    marks = [(title, start) for depth, title, start in _outline(reader) if depth <= 1 and title in pages
             or title == "Contents"]
    ends = [start for _, start in marks[1:]] + [len(reader.pages)]
    return {title: (start, end) for (title, start), end in zip(marks, ends, strict=True)}


def _band(top: bool) -> list[str]:
    """The text of each page's top (running header) or bottom (page number) margin, by
    pdftotext's crop box, in points of the A4 page."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) reads the margins; it is not installed")
    y, height = (0, 45) if top else (805, 37)
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", "-r", "72", "-x", "0", "-y", str(y), "-W", "595",
                          "-H", str(height), str(PDF), "-"], capture_output=True, check=True)
    return [" ".join(t.split()) for t in out.stdout.decode("utf-8").split("\f")][: len(_pdf()[0].pages)]


@needs_pdf
def test_pdf_has_title_pages_and_a_bookmark_per_chapter():
    reader, texts = _pdf()
    assert len(reader.pages) > MIN_PAGES, f"{PDF.name} has only {len(reader.pages)} pages"
    assert PDF.stat().st_size <= MAX_PDF_BYTES, f"{PDF.name} is {PDF.stat().st_size / 1e6:.1f} MB"
    assert PDF.name != "projectnamenotset.pdf"
    assert reader.metadata.title == "Differentially private vector sums for Gaussian data", reader.metadata
    assert "Differentially private vector sums" in texts[0], f"no title page: {texts[0][:200]!r}"
    outline = _outline(reader)
    top = [title for depth, title, _ in outline if depth == 0]
    expected = build_pdf.printed_pages()
    chapters = ["Contents"] + [build_pdf.plain(p.title) for p in expected if p.level <= 1]
    assert top == chapters, f"the top-level bookmarks are {top}, not the chapters {chapters}"
    # each section of a chapter is a bookmark nested in its chapter's
    for page in (p for p in expected if p.level == 2):
        title = build_pdf.plain(page.title)
        k = next((k for k, (d, t, _) in enumerate(outline) if t == title), None)
        assert k is not None and outline[k][0] == 1, f"section {title!r} is not a bookmark of depth 1"
        parent = next(t for d, t, _ in reversed(outline[:k]) if d == 0)
        assert parent == build_pdf.plain(page.chapter), f"{title!r} is filed under {parent!r}"
    assert any(d == 2 for d, _, _ in outline), "no bookmark for the sections inside a page"
    marks = _chapter_pages(reader)
    empty = [title for title, (start, end) in marks.items() if not "".join(texts[start:end]).strip()]
    assert not empty, f"chapters printed without text: {empty}"
    assert any(title.startswith("Bibliography") for title in marks), f"no bibliography among {list(marks)}"
    biblio = "".join(texts[slice(*marks[next(t for t in marks if t.startswith("Bibliography"))])])
    assert "Prékopa" in biblio and "\\'" not in biblio, "the bibliography's accents are not decoded"


@needs_pdf
def test_pdf_contents_give_each_chapter_its_page():
    """The table of contents lists every printed page of the book with its number, and the
    number is the page its bookmark opens (chapter titles keep their numbers: "4. Problem setup")."""
    reader, _ = _pdf()
    contents = " ".join(_layout_text(reader, 2, 4).split())
    outline = {title: page for _, title, page in _outline(reader)}
    for page in build_pdf.printed_pages():
        title = build_pdf.plain(page.title)
        number = outline[title] + 1
        assert re.search(re.escape(" ".join(title.split())) + r"[ .]*" + str(number) + r"\b", contents), (
            f"the contents do not list {title!r} at page {number}")
    assert re.search(r"\b4\. Problem setup\b", contents), "chapter titles lost their numbers"


@needs_pdf
def test_pdf_links_resolve_inside_the_pdf():
    """Every link is either a destination inside the PDF (a named one that exists) or an
    address on the web: none points to a file of the machine that built it."""
    from pypdf.generic import ArrayObject, NameObject, TextStringObject

    reader, _ = _pdf()
    named = reader.named_destinations
    internal, external, problems = 0, 0, []
    for k, page in enumerate(reader.pages):
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            action = annot.get("/A")
            dest = annot.get("/Dest") if action is None else action.get("/D")
            if action is not None and action.get("/S") == "/URI":
                uri = str(action["/URI"])
                external += 1
                if not uri.startswith(("http://", "https://", "mailto:")):
                    problems.append(f"page {k + 1}: link to {uri[:80]}")
            elif isinstance(dest, (NameObject, TextStringObject, str)):
                internal += 1
                if str(dest) not in named and "/" + str(dest).lstrip("/") not in named:
                    problems.append(f"page {k + 1}: link to missing destination {dest}")
            elif isinstance(dest, ArrayObject):
                internal += 1
            else:
                problems.append(f"page {k + 1}: link with neither a destination nor a web address: {annot}")
    assert not problems, f"{len(problems)} links that do not resolve inside the PDF: " + "; ".join(problems[:8])
    assert internal > 300, f"only {internal} internal links: cross-references were lost"


@needs_pdf
def test_pdf_pages_are_numbered_through_the_book():
    """The footer numbers the pages 2, 3, ... without a restart (the title page has none),
    and the running header names the page's chapter."""
    reader, _ = _pdf()
    footers = _band(top=False)
    assert footers[0] == "", f"the title page has a footer: {footers[0]!r}"
    wrong = [(k + 1, f) for k, f in enumerate(footers) if k and f != str(k + 1)]
    assert not wrong, f"{len(wrong)} pages whose footer is not their number, e.g. {wrong[:6]}"
    headers, outline = _band(top=True), _outline(reader)
    for page in build_pdf.printed_pages():
        start = next(p for _, t, p in outline if t == build_pdf.plain(page.title))
        chapter = " ".join(build_pdf.plain(page.chapter).split())
        assert headers[start].startswith(chapter[:40]), (
            f"page {start + 1} ({page.title!r}) has the running header {headers[start]!r}, not {chapter!r}")


@needs_pdf
def test_pdf_has_no_toggles_or_screen_instructions():
    """Nothing in print asks to click: no "Show code cell", no collapsed "All N rows", no
    dropdown hint."""
    _, texts = _pdf()
    # the toggles' own words (a sentence may still speak of "all 48 rows")
    pattern = re.compile(r"[Ss]how code|[Hh]ide code|\bAll \d+ rows\b|[Cc]lick to (?:show|hide|see)")
    found = [(k + 1, text[max(m.start() - 40, 0): m.end() + 20].replace("\n", " "))
             for k, text in enumerate(texts) for m in pattern.finditer(text)]
    assert not found, f"{len(found)} screen instructions in print, e.g. " + "; ".join(
        f"page {p}: {c!r}" for p, c in found[:5])


@needs_pdf
def test_pdf_has_no_raw_tex():
    """Math is typeset (MathJax's CommonHTML, printed as text in MathJax's fonts), never left as
    TeX: no ``$``, ``\\(`` or TeX command in the text."""
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
    title = build_pdf.plain(build_pdf.page_title((HTML / (file + ".html")).read_text(encoding="utf-8")))
    marks = _chapter_pages(reader)
    assert title in marks, f"no bookmark {title!r} for {file} among {list(marks)}"
    text = " ".join(texts[slice(*marks[title])])
    printed = [n for n in re.findall(r"\((?:[A-Z]?\d+(?:\.[0-9A-Z]+)*|[A-Z]\.\d+)\)", text)]
    position = 0
    for eqno in parser.numbers:  # each HTML number appears, in order
        found = [k for k in range(position, len(printed)) if printed[k] == eqno]
        assert found, f"{file}: equation {eqno} of the HTML is not printed after position {position}: {printed}"
        position = found[0] + 1


def test_share_paths_draws_a_recurring_path_once():
    """A filled path drawn twice becomes one form painted twice; a path that is drawn once,
    is clipped with (``W n``) or starts with a rectangle stays where it is."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject

    glyph = b"0 0 m\n10 0 l\n10 10 l\n5 12 2 12 0 10 c\n0 5 l\nh"
    other = b"0 0 m\n20 0 l\n20 20 l\n15 22 2 22 0 20 c\n0 5 l\nh"
    clip = glyph + b"\nW n"
    rect = b"0 0 5 5 re\n" + glyph + b"\nf"
    body = b"\n".join([b"q", b"1 0 0 1 10 10 cm", glyph, b"f", b"Q", b"q", b"1 0 0 1 40 10 cm", glyph, b"f*", b"Q",
                        b"q", b"1 0 0 1 70 10 cm", glyph, b"f", b"Q", other, b"f", clip, rect])
    writer = PdfWriter()
    page = writer.add_blank_page(100, 100)
    contents = DecodedStreamObject()
    contents.set_data(body)
    page.replace_contents(contents)
    assert build_pdf.share_paths(writer) == 1
    data = writer.pages[0].get_contents().get_data()
    assert data.count(b"/P0 Do") == 2, data  # the two plain fills; f* is another path
    assert glyph + b"\nf*" in data and other + b"\nf" in data and clip in data and rect in data
    form = writer.pages[0]["/Resources"]["/XObject"]["/P0"].get_object()
    assert form.get_data() == glyph + b"\nf" and form["/Subtype"] == "/Form"
    x0, y0, x1, y1 = (float(v) for v in form["/BBox"])
    assert x0 < 0 and y0 < 0 and x1 > 10 and y1 > 12, "the form's box cuts its path"


@needs_pdf
def test_pdf_leaves_no_page_mostly_blank_before_a_figure():
    """A figure too tall for the room left on a page is printed smaller (build_pdf.py, down to
    70 % of its height) rather than leave the page before it mostly blank; a page that ends a
    chapter or a section of the book may end anywhere."""
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) draws the pages; it is not installed")
    reader, _ = _pdf()
    starts = {page + 1 for depth, _, page in _outline(reader) if depth <= 1}
    blank = build_pdf.blank_before_figures(PDF, starts)
    assert not blank, "pages left mostly blank before a figure: " + "; ".join(
        f"page {page} is {fill:.0%} full before Fig. {number}" for page, number, fill in blank)


def test_page_fill_measures_how_far_down_the_text_area_a_page_is_filled(tmp_path):
    """build_pdf.page_fill on a drawn A4 page: content down to 40 % of the text area reads
    as 0.4, a page number in the bottom margin does not count, an empty page is 0."""
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) draws the pages; it is not installed")
    from PIL import Image, ImageDraw

    dpi = 72
    width, height = round(210 / 25.4 * dpi), round(297 / 25.4 * dpi)
    top, bottom = (v / 297 * height for v in build_pdf.BODY_MM)
    pages = []
    for share in (0.4, 0.0):
        im = Image.new("L", (width, height), 255)
        draw = ImageDraw.Draw(im)
        if share:
            draw.rectangle([40, top + 5, width - 40, top + share * (bottom - top)], fill=0)
        draw.rectangle([width // 2 - 5, bottom + 15, width // 2 + 5, bottom + 25], fill=0)  # the page number
        pages.append(im)
    path = tmp_path / "pages.pdf"
    pages[0].save(path, save_all=True, append_images=pages[1:], resolution=dpi)
    assert build_pdf.page_fill(path, 1) == pytest.approx(0.4, abs=0.03)
    assert build_pdf.page_fill(path, 2) == 0.0


class _FlakyPrinter:
    """A stand-in for the driver: its print fails with ``errors`` first, then succeeds."""

    def __init__(self, errors):
        self.errors, self.prints = list(errors), 0

    def execute_async_script(self, script, *args):
        assert "document.fonts.ready" in script
        return None

    def execute_cdp_cmd(self, cmd, options):
        assert cmd == "Page.printToPDF"
        self.prints += 1
        if self.errors:
            raise self.errors.pop(0)
        return {"data": "JVBERg=="}  # base64 of "%PDF"


def test_print_tries_again_after_chromium_s_transient_failure_only():
    from selenium.common.exceptions import WebDriverException

    failed = WebDriverException('unknown error: unhandled inspector error: {"message":"Printing failed"}')
    driver = _FlakyPrinter([failed, failed])
    assert build_pdf._print_to_pdf(driver, {}) == b"%PDF" and driver.prints == 3
    driver = _FlakyPrinter([failed] * build_pdf.PRINT_ATTEMPTS)
    with pytest.raises(WebDriverException, match="Printing failed"):
        build_pdf._print_to_pdf(driver, {})
    assert driver.prints == build_pdf.PRINT_ATTEMPTS
    driver = _FlakyPrinter([WebDriverException("unknown error: no such window")])
    with pytest.raises(WebDriverException, match="no such window"):
        build_pdf._print_to_pdf(driver, {})
    assert driver.prints == 1
