r"""The book reads as a paper (issue 33): rules of writing, checked on the BUILT book.

On the landing page and every page of chapters 7, 8 and 9 (with their sections, as
``_toc.yml`` lists them):

- **numbers**: no prose paragraph with more than ``HARD_LIMIT`` (8) numbers, and at most
  ``MAX_SHARE`` (5 %) of the paragraphs with more than ``SOFT_LIMIT`` (4);
- **verdict cells**: every cell of a table with a "verdict" column holds at most
  ``MAX_VERDICT_WORDS`` (30) words, and the landing page's verdicts are the five words of
  ``_ext/verdicts.py`` (holds, holds if, corrected, refuted, open);
- **aliases**: the recommended estimator is called ESM; none of ``ALIASES`` appears;
- **code**: no code identifier in prose, captions or tables (a snake_case name with an
  underscore, an indexing such as ``ARMS[``, a call ``name()``, inline code), and no
  e-notation (``2.05e+03``; write 2.1 × 10³);
- **tables**: at least ``MIN_NUMBERED`` (90 %) of the tables shown are numbered in their
  caption ("Table 9.2: ...", ``_ext/numbered_tables.py``).

On every chapter of the book (every page of ``_toc.yml`` but the API reference):

- **history**: no revision history or tracker reference (``HISTORY``): "first version",
  "this revision", "issue 25", "was set before", "no longer", and "now" only where it
  tells a change ("now uses", "has now"; "we now show" and "the rows are now Gaussian"
  are the argument's "now", not history).

In the PDF edition (``scripts/build_pdf.py``): no web-only word (``WEB_ONLY``: "click",
"button", "collapsed", "hidden cell", "the PDF edition", "Show code"), on any page, and its
text holds its math: ``pdftotext`` finds ε, δ, σ and a summation sign (∑ or Σ) and a whole
formula.

What a *number* is (:func:`count_numbers`): a numeral as a reader reads one value, in the
text or in its math (glued values are text like any other):

- a decimal with its sign, thousands separators (``3,265``, ``10 000`` with a thin space)
  and unit (``18 %``) is one number; so is a value with its power of ten (``2.1 × 10³``,
  ``$2.1\times10^{3}$``, ``$10^{4}$``, ``4.1 × 10⁻⁵``) and a fraction of two numerals
  (``1/4``, ``$\frac{1}{4}$``); a range is two (``0.5 % to 84 %``, ``1.07–1.30``);
- in math, digits that index or raise a symbol are not numbers (``$x_1$``, ``$\sigma_j^2$``,
  ``$\ell_2$``, ``$\chi^2_d$``), digits standing for values are (``$n \ge 8$``,
  ``$p_C = 1/n$`` counts one);
- references are not numbers: the text of the book's own links (cross-references to
  figures, tables, equations, statements, chapters, and citations with their years) and a
  numeral after a reference word ("Lemma 4.1", "Figure 2", "Algorithm 3", "chapter 9",
  "Section 7", "eqs. (18)-(22)", "Limitation 6.1");
- a date written in the prose (outside a citation) counts, as any number does.

A *paragraph* is a ``<p>`` of the article, or a list item without one, outside code,
outputs of code cells (tables, badges), tables, figures and captions, display math, the
bibliography and footnotes: the prose a reader reads.

Needs the built book (``_build/html``, README command 1) and skips, saying so, without it,
unless ``REQUIRE_BROWSER_TEST=1`` (CI, after the build), which turns the skip into a
failure; the PDF tests need the PDF (``REQUIRE_PDF_TEST=1`` likewise). The detectors are
also tested on small HTML snippets, which need no build.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
PDF = HTML / "dp-vector-sums-for-gaussian-data.pdf"  # scripts/build_pdf.py's PDF_NAME

HARD_LIMIT = 8  # numbers in one paragraph, never more
SOFT_LIMIT = 4  # numbers in one paragraph, ...
MAX_SHARE = 0.05  # ... exceeded by at most this share of the paragraphs
MAX_VERDICT_WORDS = 30
MIN_NUMBERED = 0.90  # share of the tables shown that are numbered in their caption
VERDICT_WORDS = ("holds", "holds if", "corrected", "refuted", "open")  # _ext/verdicts.py

#: Names of the recommended estimator other than ESM (COMMON.md's list), as patterns.
ALIASES = (
    r"chapter 9['’]s pipeline", r"robust pipeline", r"this chapter['’]s pipeline", r"robust Algorithm 3",
    r"Algorithm 3\s*[,(]\s*nothing known", r"the recommended pipeline",
)

#: Revision history and tracker references. "now" only where it tells a change.
HISTORY = (
    r"\bfirst version\b", r"\b(?:this|the previous|an? earlier|the earlier|the last|the next) revision\b",
    r"\bbefore this (?:revision|version|change)\b",
    r"\b(?:earlier|previous|older|former) (?:version|edition|draft)s?\b",
    r"\bthis version of (?:the|this) (?:book|chapter|page|proof)\b",
    r"\b(?:issue|ticket|pull request|PR)s?\s+#?\d+\b", r"\btracker\b",
    r"\b(?:was|were) set before\b", r"\bno longer\b", r"\bany ?more\b",
    r"\b(?:has|have|had) now\b",  # not "is now": "the rows are now Gaussian" is the argument's "now"
    r"\bnow (?:uses|gives|reads|returns|applies|computes|reports|checks|says|states|includes|replaces|keeps|"
    r"holds|shows|takes|runs|covers)\b",
    r"\b(?:has|have|had) been (?:fixed|renamed|removed|replaced|rewritten|updated|changed)\b",
    r"\b(?:was|were) (?:renamed|rewritten|updated)\b", r"\bused to (?:be|say|read|use|give)\b",
)

#: Words that only make sense on a screen, which the PDF must not print.
WEB_ONLY = (r"\bclick(?:s|ed|ing)?\b", r"\bbuttons?\b", r"\bcollapsed\b(?!\s+(?:under|into|onto|to)\b)",
            r"\bhidden cells?\b",
            r"\bthe PDF edition\b", r"\b(?:Show|Hide) code\b", r"\btap(?:s|ped)? (?:on|to)\b")

#: A numeral after one of these words names a reference, not a value.
_REFERENCE_WORDS = (r"(?:Lemma|Theorem|Corollar(?:y|ies)|Proposition|Observation|Definition|Algorithm|Figure|Fig\.|"
                    r"Table|Section|[Cc]hapter|Part|Appendix|Appendices|eqs?\.|[Ee]quation|Limitation|Conjecture|"
                    r"Remark|Step|Example|Assumption|Criterion|Claim)s?")
_ITEM = r"\(?(?:\d+(?:\.[0-9A-Z]+)*|[A-Z](?:\.[0-9A-Z]+)*)\)?(?![A-Za-z0-9])"  # 4.1, 8.B, A.1, (12), A
_REFERENCE = re.compile(_REFERENCE_WORDS + r"\s+" + _ITEM + r"(?:\s*(?:,|and|or|to|-|–|—)\s*" + _ITEM + r")*")
_SUPERSCRIPTS = "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"
_NUMBER = re.compile(
    r"(?<![\w.^])[-−+]?\d+(?:[,\u2009\u202f ]\d{3}(?!\d))*(?:\.\d+)?"  # 3,265  10 000  0.5
    r"(?:\^[-−]?\d+)?"  # a power of a numeral: 10^4
    r"(?:e[-+]?\d+)?"  # e-notation (a number still; test_no_e_notation forbids it)
    r"(?:\s*[×x·]\s*10(?:\^\{?[-−]?\d+\}?|[" + _SUPERSCRIPTS + r"]+))?"  # × 10³
    r"(?:\s*/\s*\d+(?:\.\d+)?(?![\w.]))?"  # 1/4
)
_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]|\$\$(.+?)\$\$", re.DOTALL)


def _tex_numbers(tex: str) -> str:
    r"""The TeX of a formula as text whose numerals are its values: ``\frac{1}{4}`` as
    ``1/4``, ``2.1\times10^{3}`` as one numeral, indices and exponents of symbols dropped."""
    tex = re.sub(r"\\[dt]?frac\s*\{\s*(\d+(?:\.\d+)?)\s*\}\s*\{\s*(\d+(?:\.\d+)?)\s*\}", r" \1/\2 ", tex)
    tex = re.sub(r"\\[dt]?frac\s*(\d)\s*(\d)", r" \1/\2", tex)  # \tfrac78
    tex = re.sub(r"(\d)\s*\\(?:times|cdot)\s*10\s*\^\s*\{?\s*([-−]?\d+)\s*\}?", r"\1×10^\2", tex)
    tex = re.sub(r"(?<![\d.])10\s*\^\s*\{\s*([-−]?\d+)\s*\}", r"10^\1", tex)
    tex = tex.replace(r"\,", " ").replace(r"\;", " ").replace(r"\!", "").replace("~", " ")
    previous = None
    while previous != tex:  # an index or exponent of a symbol (not of a numeral) is no number
        previous = tex
        tex = re.sub(r"(?<=[^\d\s^_])\s*[_^]\s*(?:\{[^{}]*\}|\\[A-Za-z]+|[^\s{}\\])", "", tex)
    # a coefficient of a symbol (2C, 2s, \tfrac78\rho) is part of the formula's shape, no value
    tex = re.sub(r"(?<![\w.^/])\d+(?:\.\d+)?(?:/\d+)?\s*(?=[A-Za-z(]|\\(?!" + _NOT_SYMBOLS + r")[A-Za-z])", " ", tex)
    tex = re.sub(r"\\[A-Za-z]+", " ", tex)
    return re.sub(r"[{}]", " ", tex)


# TeX commands after a numeral that are not a symbol it multiplies
_NOT_SYMBOLS = (r"(?:times|cdot|le|ge|leq|geq|lt|gt|ne|neq|approx|sim|quad|qquad|in|to|text|mathrm|rm|ldots|dots|cdots|"
                r"right|big|Big|bigr|Bigr|rangle|rbrace|%|,|;|!)\b")


def count_numbers(text: str) -> int:
    """The numbers a reader meets in ``text`` (see the module's docstring): references
    removed, math read as values, each value counted once."""
    text = _MATH.sub(lambda m: " " + _tex_numbers(next(g for g in m.groups() if g is not None)) + " ", text)
    text = _REFERENCE.sub(" ", text)
    return len(_NUMBER.findall(text))


# --------------------------------------------------------------------------------------
# the built pages


@dataclass
class Block:
    """A paragraph of prose: its whole text (math as TeX between ``\\(...\\)``) and the text
    whose numbers count (without the book's own links)."""

    text: str
    counted: str

    @property
    def numbers(self) -> int:
        return count_numbers(self.counted)


@dataclass
class Page:
    name: str
    blocks: list[Block] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    tables: list[dict] = field(default_factory=list)  # {"numbered": bool, "header": [...], "rows": [[...]], "text"}
    literals: list[str] = field(default_factory=list)  # inline code in prose, captions and tables


# Left out of the prose: code, the outputs of code cells (tables, badges: the table rules
# judge those), tables, figures, display math, bibliography, footnotes, navigation.
_NOT_PROSE = ("div.cell_input", "div.cell_output", "pre", "div.highlight", "table", "figure", "div.math",
              "div.citation", "aside.footnote", "div.footnote", "nav", "div.toctree-wrapper", "a.headerlink",
              "details.egm-table-full", "div.egm-check", "div.egm-check-tag", "script", "style", "button",
              "div.bibliography", "dl.citation")


def _text(el) -> str:  # noqa: ANN001 - a bs4 Tag
    return " ".join(el.get_text(" ").split())


def parse_page(html: str, name: str = "") -> Page:
    """The prose paragraphs, captions, tables and inline code of a built page's article."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.bd-article") or soup.body or soup
    page = Page(name)
    for table in article.select("table"):
        if table.find_parent("details", class_="egm-table-full") or table.find_parent("div", class_="cell_input"):
            continue  # the full copy of a long table, shown collapsed; code
        caption = table.find("caption")
        number = caption.select_one("span.caption-number") if caption is not None else None
        header = [_text(th) for th in table.select("thead tr:last-child th")]
        rows = [[_text(td) for td in tr.find_all(["td", "th"], recursive=False)]
                for tr in table.find_all("tr") if tr.find_parent("thead") is None]
        page.tables.append({"numbered": bool(number and re.match(r"Table \d+\.\d+", _text(number))),
                            "caption": _text(caption) if caption is not None else "",
                            "header": header, "rows": rows})
    for caption in article.select("figcaption, table caption"):
        page.captions.append(_text(caption))
    for code in article.select("code"):
        if code.find_parent(["pre", "div"], class_=["highlight", "cell_input"]) or code.find_parent("pre"):
            continue
        if code.find_parent(["p", "li", "td", "th", "figcaption", "caption", "dd"]):
            page.literals.append(_text(code))
    for selector in _NOT_PROSE:
        for el in article.select(selector):
            el.decompose()
    candidates = [*article.find_all("p"), *[li for li in article.find_all("li") if li.find("p") is None]]
    for el in candidates:
        if el.find_parent("li") is not None and el.name == "li":
            pass
        full = _text(el)
        if not full:
            continue
        counted = el.__copy__()
        for nested in counted.find_all(["ul", "ol"]):
            nested.decompose()
        for link in counted.select("a.reference.internal, a.citation, a[href^='#']"):
            link.decompose()
        page.blocks.append(Block(full, _text(counted)))
    return page


def toc_pages() -> tuple[list[str], list[str]]:
    """(the pages judged as a paper: the landing page and chapters 7-9 with their sections;
    every chapter of the book), as paths under ``_build/html`` from ``_toc.yml``."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    paper, every = [toc["root"]], [toc["root"]]
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            files = [chapter["file"], *[s["file"] for s in chapter.get("sections", [])]]
            files = [f for f in files if not f.startswith("chapters/api/")]
            every += files
            if re.match(r"chapters/0?[789]", chapter["file"]):
                paper += files
    return [f + ".html" for f in paper], [f + ".html" for f in every if not f.endswith("bibliography")]


PAPER_PAGES, EVERY_PAGE = toc_pages()
REQUIRED = os.environ.get("REQUIRE_BROWSER_TEST") == "1"
BUILT = (HTML / "chapters" / "index.html").is_file()
needs_build = pytest.mark.skipif(not BUILT and not REQUIRED,
                                 reason=f"{HTML} has no built book: run jupyter-book build . (README, command 1)")


@cache
def page(name: str) -> Page:
    path = HTML / name
    if not path.is_file():
        pytest.fail(f"{path} does not exist: build the book (is {name} in _toc.yml?)")
    return parse_page(path.read_text(encoding="utf-8"), name)


# --------------------------------------------------------------------------------------
# the detectors: (rule, page) -> problems


def number_problems(p: Page) -> list[str]:
    """Paragraphs with more than ``HARD_LIMIT`` numbers."""
    return [f"{b.numbers} numbers: {b.text[:110]}..." for b in p.blocks if b.numbers > HARD_LIMIT]


def _verdict_tables(p: Page) -> list[dict]:
    return [t for t in p.tables if any(h.strip().lower() == "verdict" for h in t["header"])]


def verdict_cell_problems(p: Page) -> list[str]:
    """Cells of a verdict table longer than ``MAX_VERDICT_WORDS`` words."""
    out = []
    for t in _verdict_tables(p):
        for row in t["rows"]:
            out += [f"{len(c.split())} words: {c[:90]}..." for c in row if len(c.split()) > MAX_VERDICT_WORDS]
    return out


def verdict_word_problems(p: Page) -> list[str]:
    """Verdicts of a verdict table that are not one of the five words."""
    out = []
    for t in _verdict_tables(p):
        column = [h.strip().lower() for h in t["header"]].index("verdict")
        out += [f"verdict {row[column]!r}" for row in t["rows"]
                if len(row) > column and row[column].strip() not in VERDICT_WORDS]
    return out


def _matches(patterns, texts: list[str], flags: int = re.IGNORECASE) -> list[str]:  # noqa: ANN001
    out = []
    for text in texts:
        for pattern in patterns:
            for m in re.finditer(pattern, text, flags):
                out.append(f"{m.group(0)!r} in ...{text[max(m.start() - 50, 0):m.end() + 40]}...")
    return out


def _all_text(p: Page) -> list[str]:
    return [b.text for b in p.blocks] + p.captions + [" | ".join(c for row in t["rows"] for c in row) for t in p.tables]


def alias_problems(p: Page) -> list[str]:
    return _matches(ALIASES, _all_text(p))


def history_problems(p: Page) -> list[str]:
    return _matches(HISTORY, _all_text(p))


_OUTSIDE_MATH = re.compile(r"\\\(.+?\\\)|\\\[.+?\\\]", re.DOTALL)
_CODE = (r"(?<![\\\w])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w(])(?!\.(?:csv|json|py|ipynb|png)\b)",  # rho_to_eps
         r"\b[A-Za-z_]\w*\[['\"]", r"\b[A-Z]{2,}\[",  # ARMS['Alg3'], ARMS[
         r"\b[a-z_][a-z0-9_]*\(\)")  # run_sweep()


def code_problems(p: Page) -> list[str]:
    """Code identifiers in prose, captions and tables (outside math) and inline code."""
    texts = [_OUTSIDE_MATH.sub(" ", t) for t in _all_text(p)]
    return _matches(_CODE, texts, flags=0) + [f"inline code {c!r}" for c in p.literals]


_E_NOTATION = re.compile(r"(?<![\w.])[-−+]?\d+(?:\.\d+)?[eE][-+−]?\d+\b")


def e_notation_problems(p: Page) -> list[str]:
    return _matches([_E_NOTATION.pattern], _all_text(p), flags=0)


RULES = {"numbers": number_problems, "verdict-cells": verdict_cell_problems, "verdict-words": verdict_word_problems,
         "aliases": alias_problems, "code": code_problems, "e-notation": e_notation_problems}


def _cases(pages: list[str]) -> list:
    return [pytest.param(name, id=name.removeprefix("chapters/").removesuffix(".html")) for name in pages]


def _assert_none(rule: str, name: str, problems: list[str]) -> None:
    shown = problems[:12] + ([f"... and {len(problems) - 12} more"] if len(problems) > 12 else [])
    assert not problems, f"{name}: {len(problems)} {rule} problems:\n  " + "\n  ".join(shown)


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_no_paragraph_has_more_than_8_numbers(name):
    _assert_none("numbers", name, number_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_verdict_cells_are_at_most_30_words(name):
    _assert_none("verdict-cells", name, verdict_cell_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_verdicts_are_the_five_words(name):
    _assert_none("verdict-words", name, verdict_word_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_the_recommended_estimator_has_one_name(name):
    _assert_none("aliases", name, alias_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_no_code_identifiers_in_prose_or_tables(name):
    _assert_none("code", name, code_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(PAPER_PAGES))
def test_no_e_notation(name):
    _assert_none("e-notation", name, e_notation_problems(page(name)))


@needs_build
@pytest.mark.parametrize("name", _cases(EVERY_PAGE))
def test_no_revision_history_or_tracker_reference(name):
    _assert_none("history", name, history_problems(page(name)))


def _share_over_soft_limit() -> tuple[float, list[str]]:
    blocks = [(name, b) for name in PAPER_PAGES for b in page(name).blocks]
    over = [(name, b) for name, b in blocks if b.numbers > SOFT_LIMIT]
    worst = {}
    for name, _ in over:
        worst[name] = worst.get(name, 0) + 1
    return len(over) / max(len(blocks), 1), [f"{n}: {k}" for n, k in sorted(worst.items(), key=lambda x: -x[1])]


def _numbered_share() -> tuple[float, list[str]]:
    tables = [(name, t) for name in PAPER_PAGES for t in page(name).tables]
    unnumbered = {}
    for name, t in tables:
        if not t["numbered"]:
            unnumbered[name] = unnumbered.get(name, 0) + 1
    share = sum(t["numbered"] for _, t in tables) / max(len(tables), 1)
    return share, [f"{n}: {k}" for n, k in sorted(unnumbered.items(), key=lambda x: -x[1])]


@needs_build
def test_at_most_5_percent_of_paragraphs_have_more_than_4_numbers():
    share, pages = _share_over_soft_limit()
    assert share <= MAX_SHARE, (f"{share:.1%} of the paragraphs of the landing page and chapters 7-9 have more than "
                                f"{SOFT_LIMIT} numbers (limit {MAX_SHARE:.0%}); by page: " + ", ".join(pages))


@needs_build
def test_at_least_90_percent_of_tables_are_numbered():
    share, pages = _numbered_share()
    assert share >= MIN_NUMBERED, (f"{share:.0%} of the tables of the landing page and chapters 7-9 are numbered in "
                                   f"their caption (at least {MIN_NUMBERED:.0%}); unnumbered by page: "
                                   + ", ".join(pages))


# --------------------------------------------------------------------------------------
# the PDF


PDF_REQUIRED = os.environ.get("REQUIRE_PDF_TEST") == "1"
needs_pdf = pytest.mark.skipif(not PDF.is_file() and not PDF_REQUIRED,
                               reason=f"no PDF edition at {PDF}: run python scripts/build_pdf.py")


@cache
def pdf_pages() -> list[str]:
    """The text of each page of the PDF (pdftotext, poppler-utils)."""
    if not PDF.is_file():
        pytest.fail(f"REQUIRE_PDF_TEST=1 but {PDF} does not exist: run python scripts/build_pdf.py")
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        pytest.fail("pdftotext (Debian's poppler-utils) is needed to read the PDF's text")
    out = subprocess.run([pdftotext, "-enc", "UTF-8", str(PDF), "-"], capture_output=True, check=True)
    return out.stdout.decode("utf-8").split("\f")


def _build_pdf_module():
    """``scripts/build_pdf.py`` as a module (tests/test_pdf.py loads it the same way)."""
    import importlib.util
    import sys

    if "build_pdf" not in sys.modules:
        spec = importlib.util.spec_from_file_location("build_pdf", ROOT / "scripts" / "build_pdf.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["build_pdf"] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["build_pdf"]


@cache
def pdf_page_owner() -> list[str]:
    """For each page of the PDF, the book's page printed on it (``chapters/index``, from the
    named destination of each page's title, as build_pdf.py numbers its contents), or "front
    matter" (the title page and the contents)."""
    build_pdf = _build_pdf_module()
    pages = build_pdf.printed_pages()
    data = PDF.read_bytes()
    starts = build_pdf._start_pages(data, [build_pdf._first_heading(p.key) for p in pages])
    heading = {p.file: build_pdf._first_heading(p.key) for p in pages}
    first = {starts[heading[p.file]]: p.file for p in pages if heading[p.file] in starts}
    owners, owner = [], "front matter"
    for k in range(1, len(pdf_pages()) + 1):
        owner = first.get(k, owner)
        owners.append(owner)
    return owners


def web_only_problems(texts: list[str], owners: list[str]) -> dict[str, list[str]]:
    """Web-only words in the PDF's text, by the book's page that prints them."""
    out: dict[str, list[str]] = {}
    for k, (text, owner) in enumerate(zip(texts, owners, strict=False)):
        flat = " ".join(text.split())
        for problem in _matches(WEB_ONLY, [flat]):
            out.setdefault(owner, []).append(f"page {k + 1}: {problem}")
    return out


@needs_pdf
def test_pdf_has_no_web_only_words():
    """No page prints a web-only word (a sentence meant for the screen goes in a
    ``{container} egm-web-only`` block, which the PDF leaves out)."""
    found = web_only_problems(pdf_pages(), pdf_page_owner())
    assert not found, "web-only words in the PDF:\n  " + "\n  ".join(
        f"{owner}: {'; '.join(p[:3])}" for owner, p in found.items())


@needs_pdf
def test_pdf_text_holds_its_math():
    """Math is printed as text (MathJax's CommonHTML output with its fonts), so that a reader
    can search and copy it: pdftotext finds ε, δ, σ and a summation sign, and a formula of
    chapter 2 whole."""
    text = "\n".join(pdf_pages())
    counts = {symbol: text.count(symbol) for symbol in ("ε", "δ", "σ", "∑", "Σ")}
    assert counts["ε"] >= 50 and counts["δ"] >= 50 and counts["σ"] >= 100, counts
    assert counts["∑"] + counts["Σ"] >= 20, counts
    flat = " ".join(text.split())
    assert re.search(r"\(\s*ε\s*,\s*δ\s*\)", flat), "no '(ε, δ)' in the PDF's text"


# --------------------------------------------------------------------------------------
# the detectors themselves, on small snippets (no build needed)


def _article(body: str) -> str:
    return f'<html><body><article class="bd-article">{body}</article></body></html>'


@pytest.mark.parametrize(("text", "expected"), [
    ("Algorithm 3 adds 18 % less error at $d \\ge 64$.", 2),
    ("The gain is 0.5 % to 84 % of Figure 2's, at n = 10 000 and 3,265 rows.", 4),
    (r"It costs \(2.1\times10^{3}\) and \(10^{4}\) rows, \(\rho = \frac{1}{4}\).", 3),
    (r"With \(p_C = 1/n\), \(\sigma_j^2\) and \(\chi^2_d\), \(\ell_2\) and \(x_1\).", 1),
    (r"So \(\|T(X) - T(X')\| \le 2C\) and \((2C)^2/(2s^2)\) with \(\tfrac78\rho\) in \([-50, 50]^{16}\).", 2),
    ("Lemma 4.1, Theorems 1-3, eqs. (18)-(22), chapter 9, Section 7 and Limitation 6.1.", 0),
    ("A value of 4.1 × 10⁻⁵ and 2.05e+03.", 2),
    ("From 1.07–1.30 with 12 runs.", 3),
])
def test_count_numbers(text, expected):
    assert count_numbers(text) == expected


def test_paragraphs_leave_out_code_outputs_tables_and_links():
    html = _article(
        '<p>Up to 18 % at <span class="math">\\(n = 10^4\\)</span>, see '
        '<a class="reference internal" href="#t"><span>Table 9.2</span></a> and '
        '<a class="reference internal" href="bib.html#x">Poulsen, 2023</a>.</p>'
        '<div class="cell_output"><p>1 2 3 4 5 6 7 8 9 10</p></div>'
        '<table><caption><span class="caption-number">Table 9.2: </span>x</caption><tr><td>1 2 3</td></tr></table>'
        '<ul><li>First 1, 2, 3</li><li><p>second 4</p></li></ul>'
        '<pre>1 2 3 4 5 6 7 8 9</pre>')
    p = parse_page(html)
    assert [b.numbers for b in p.blocks] == [2, 1, 3], [(b.text, b.numbers) for b in p.blocks]
    assert p.tables[0]["numbered"]


def test_number_rule_catches_a_wall_of_numbers_and_passes_a_paragraph():
    wall = _article("<p>" + ", ".join(f"{k}.5 %" for k in range(9)) + "</p>")
    fine = _article("<p>It adds 18 % less error than PLAN at every d ≥ 64 (Lemma 4.1).</p>")
    assert number_problems(parse_page(wall)) and not number_problems(parse_page(fine))


def _verdict_table(verdict: str, cell: str) -> str:
    return _article("<table><thead><tr><th>claim</th><th>verdict</th><th>why</th></tr></thead><tbody>"
                    f"<tr><td>Lemma 4.1</td><td>{verdict}</td><td>{cell}</td></tr></tbody></table>")


def test_verdict_rules_catch_long_cells_and_other_words():
    long = parse_page(_verdict_table("holds", " ".join(["word"] * 31)))
    short = parse_page(_verdict_table("holds if", "only for a fixed radius"))
    assert verdict_cell_problems(long) and not verdict_cell_problems(short)
    assert verdict_word_problems(parse_page(_verdict_table("confirmed", "x"))) and not verdict_word_problems(short)


@pytest.mark.parametrize(("text", "bad"), [
    ("Chapter 9's pipeline wins.", True), ("the robust pipeline", True), ("robust Algorithm 3 is", True),
    ("Algorithm 3, nothing known, loses", True), ("Algorithm 3 (nothing known)", True),
    ("ESM wins; Algorithm 3 given sigma and a centre.", False), ("the pipeline of PLAN", False),
])
def test_alias_rule(text, bad):
    assert bool(alias_problems(parse_page(_article(f"<p>{text}</p>")))) == bad


@pytest.mark.parametrize(("text", "bad"), [
    ("The first version of this chapter used a fixed radius.", True), ("This revision applied the rule again.", True),
    ("as issue 25 showed", True), ("the goals were set before the sweep", True), ("It no longer clips.", True),
    ("The radius now uses the checked quantile.", True), ("It has now two paths.", True),
    ("In Algorithm 3 the rows are now Gaussian.", False),
    ("We now show that the bound holds.", False), ("Now fix n and let d grow.", False),
    ("The report's first lemma", False), ("a revision of the report would say", False),
])
def test_history_rule(text, bad):
    assert bool(history_problems(parse_page(_article(f"<p>{text}</p>")))) == bad


@pytest.mark.parametrize(("html", "bad"), [
    ("<p>the pipeline ARMS['Alg3'] (robust)</p>", True), ("<p>converted by rho_to_eps here</p>", True),
    ("<p>call <code>sigma_opt</code></p>", True), ("<p>run load_results() first</p>", True),
    ("<table><tr><td>ARMS[Alg3]</td></tr></table>", True),
    (r"<p>the scale \(\sigma_j\) and \(p_{C}\) of ESM</p>", False), ("<p>zero-concentrated DP, ε-DP</p>", False),
])
def test_code_rule(html, bad):
    assert bool(code_problems(parse_page(_article(html)))) == bad


@pytest.mark.parametrize(("text", "bad"), [("2.05e+03", True), ("1e-6", True), ("1.2E5 rows", True),
                                          ("2.1 × 10³", False), ("see e.g. 3 cases", False), ("the 1e4 rule", True)])
def test_e_notation_rule(text, bad):
    assert bool(e_notation_problems(parse_page(_article(f"<p>{text}</p>")))) == bad


@pytest.mark.parametrize(("text", "bad"), [
    ("Press the button to see the code.", True), ("the collapsed blocks hold it", True),
    ("the hidden cell computes it", True), ("Click on a figure", True), ("as the PDF edition shows", True),
    ("Show code cell source", True), ("the button-free print; clicked links", True),
    ("the collapse of the error", False), ("the buttonhole", False), ("the hidden constant", False),
    ("a sum of Kronecker deltas, collapsed under j = k", False),
])
def test_web_only_rule(text, bad):
    assert bool(web_only_problems([text], ["p"])) == bad
