#!/usr/bin/env python
"""The book's PDF edition: the built HTML book bound into one document and printed once by
headless Chromium.

The articles of the pages of the table of contents (``_toc.yml``), from the landing page to
the bibliography, are put behind a title page and a table of contents into one HTML
document (``_build/pdf/book.html``, outside the book's pages):

- every id is prefixed with its page's name and every link between the book's pages
  becomes a link inside the document, so that each one resolves inside the PDF (a link to
  a page the PDF leaves out, such as the API reference, keeps its text and loses its
  target); links to the web stay as they are;
- collapsed code, toggles and "Show code" summaries are left out; the rest of a long table
  is shown in full and dropdowns are open;
- what a chapter marks for the screen only (a block in ``egm-web-only``, e.g. a sentence
  about the HTML book's collapsed cells) is left out, and what it marks for print only
  (``egm-print-only``, hidden on screen by ``_static/egm.css``) is printed:
  ``{container} egm-web-only`` and ``{container} egm-print-only`` in MyST;
- each page of the book starts a new printed page; the running header names the chapter
  and the section, the footer numbers the pages through the whole book (CSS ``@page``
  margin boxes over named pages, ``scripts/pdf_edition.css``);
- a section of a chapter (4.2) is demoted one heading level, so that Chromium's document
  outline gives nested bookmarks: chapter, section, subsection.

Chromium opens the document, MathJax typesets it and ``_static/egm.js`` fits its tables and
equations to the printed column, exactly as a reader's browser does. It is printed once;
the print gives the page on which every chapter and section starts (the PDF's named
destinations), and those page numbers are printed on transparent pages laid over the table of
contents. pypdf then adds the bookmarks and draws each recurring glyph outline once (a form
painted at each use, ``share_paths``), which makes the file less than half as large.
Numbers (sections, figures, equations, the report's statements) are the HTML's by
construction. The API reference stays in the HTML book only: it is a reference to search
and follow links in, not to read in print.

Run from the repository root after building the HTML book (README command 1)::

    python scripts/build_pdf.py            # writes _build/html/<PDF_NAME>

Needs Debian's ``chromium`` and ``chromium-driver`` (as the browser test does), ``pypdf``
and ``beautifulsoup4`` (both in the book's environment); no network.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urlsplit

import yaml

if TYPE_CHECKING:
    from bs4 import Tag

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
OUT = HTML  # beside the landing page, which links to it
PDF_NAME = "dp-vector-sums-for-gaussian-data.pdf"
CSS = Path(__file__).with_name("pdf_edition.css")
# A4; the margins are set by scripts/pdf_edition.css (@page): a text column of 182 mm,
# 688 CSS px at 96 px per inch, the width egm.js fits tables and equations to.
COLUMN_PX = 688
#: Seconds allowed for loading and typesetting the whole book, and for each command to the
#: browser, printing included (selenium's own limit for a command is 120 s, which Chromium's
#: print of the book exceeds on a busy machine). Raise it with the environment variable
#: ``EGM_PDF_TIMEOUT``.
PAGE_TIMEOUT = float(os.environ.get("EGM_PDF_TIMEOUT", "1800"))
SKIP_FILES = ("chapters/api/",)  # the API reference is HTML only
LONG_TABLE_ROWS = 8  # a table with more rows may break across printed pages (between rows)
LONG_BOX_CHARS = 1600  # so may a statement, proof or note with more text
LANDING_TITLE = "Overview"  # the landing page's heading in print (the title page has the book's title)

# Theme and extension styles the articles need; their scripts (search, toggles, copy
# buttons) are left out: a printed page has nothing to click.
STYLES = ("styles/theme.css", "styles/pydata-sphinx-theme.css", "pygments.css", "styles/sphinx-book-theme.css",
          "mystnb.", "proof.css", "sphinx-design.min.css", "egm.css")

# Waits until the page has loaded (every deferred script run), MathJax reports the book typeset
# (its startup promise) and egm.js has fitted tables and equations, however long that takes;
# the script timeout (PAGE_TIMEOUT) bounds the wait.
_WAIT_JS = r"""
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(img => { img.loading = "eager"; });
const loaded = Promise.all(images.map(img => img.complete ? null : new Promise(resolve => {
  img.addEventListener("load", resolve); img.addEventListener("error", resolve); })));
const pageLoaded = document.readyState === "complete" ? Promise.resolve()
  : new Promise(resolve => window.addEventListener("load", resolve));
const typeset = pageLoaded.then(() => {
  const mj = window.MathJax;
  if (!(mj && mj.startup && mj.startup.promise)) throw new Error("MathJax did not load");
  return mj.startup.promise;
});
Promise.all([typeset, loaded]).then(() => window.egmLayoutDone || null).then(() => {
  if (window.egmLayout) window.egmLayout();
  const broken = images.filter(img => !img.naturalWidth).map(img => img.getAttribute("src"));
  done({errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length, broken: broken,
        output: window.MathJax.startup.output.name});
}, e => done({errors: -1, failure: String(e)}));
"""


@dataclass(frozen=True)
class Page:
    """One page of the book as printed: its file (``chapters/04b_...``), the key that
    prefixes its ids, its heading level (0 the landing page, 1 a chapter, 2 a section of
    one), the part of the book it opens (if any) and its numbered title."""

    file: str
    key: str
    level: int
    part: str
    title: str
    chapter: str  # the numbered title of its chapter (its own for a chapter)


def toc_pages() -> list[str]:
    """The pages to print, in reading order: the landing page, then every entry of every
    part of ``_toc.yml`` (the API reference aside)."""
    return [page.file for page in _toc_entries()]


class _Entry(NamedTuple):
    file: str
    level: int  # 0 the landing page, 1 a chapter, 2 a section of one
    part: str  # the caption of the part of the book it opens, if any


def _toc_entries() -> list[_Entry]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    out = [_Entry(toc["root"], 0, "")]
    for part in toc["parts"]:
        caption = part.get("caption", "")
        for entry in part["chapters"]:
            if not entry["file"].startswith(SKIP_FILES):
                out.append(_Entry(entry["file"], 1, caption))
                caption = ""
            out += [_Entry(sub["file"], 2, "") for sub in entry.get("sections", [])
                    if not sub["file"].startswith(SKIP_FILES)]
    return out


def page_title(html_text: str) -> str:
    """A built page's title as its ``<h1>`` shows it, with the book's number ("4.2. Lemma
    4.1 and ..."): its entry in the PDF's table of contents and its bookmark."""
    article = html_text[html_text.find("<article"):]  # the theme's header repeats the title, unnumbered
    match = re.search(r"<h1[^>]*>(.*?)</h1>", article, re.DOTALL)
    if not match:
        return ""
    text = re.sub(r"<a class=\"headerlink\".*?</a>", "", match.group(1), flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def _key(file: str) -> str:
    return Path(file).name


def _attr(tag: Tag, name: str) -> str:
    """The value of a tag's single-valued attribute (``href``, ``src``, ``id``); a TypeError if
    bs4 parsed it as a list (it does so for ``class`` only)."""
    value = tag[name]
    if not isinstance(value, str):
        raise TypeError(f"build_pdf: <{tag.name} {name}=...> is a list, not one value")
    return value


def _add_class(tag: Tag, name: str) -> None:
    """Add a class to a tag (bs4 keeps ``class`` as a list, and a tag may have none)."""
    from bs4.element import AttributeValueList

    value = tag.get("class")
    classes = [] if value is None else [value] if isinstance(value, str) else list(value)
    tag["class"] = AttributeValueList([*classes, name])


def _first_heading(key: str) -> str:
    """The id of a printed page's title (see ``_Binder.article``)."""
    return f"{key}--heading-0"


def printed_pages() -> list[Page]:
    """The printed pages with their titles, read from the built HTML."""
    pages, chapter = [], ""
    for entry in _toc_entries():
        path = HTML / (entry.file + ".html")
        title = page_title(path.read_text(encoding="utf-8")) if path.is_file() else entry.file
        if entry.level == 0:
            title = LANDING_TITLE
        if entry.level <= 1:
            chapter = title
        pages.append(Page(entry.file, _key(entry.file), entry.level, entry.part, title, chapter))
    return pages


# --------------------------------------------------------------------------------------
# one document from the book's pages


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "varepsilon": "ε", "epsilon": "ε",
          "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "chi": "χ",
          "Delta": "Δ", "Sigma": "Σ", "ge": "≥", "le": "≤", "times": "×", "infty": "∞", "sqrt": "√"}


def plain(text: str) -> str:
    r"""A heading as plain text, for a running header or a bookmark (which show no
    typeset math): inline math ``\(p_C = 1/n\)`` as ``p_C = 1/n``, Greek letters as
    letters."""
    def tex(match: re.Match) -> str:
        body = re.sub(r"\\([A-Za-z]+)\s*", lambda m: _GREEK.get(m.group(1), ""), match.group(1))
        return body.replace("{", "").replace("}", "")
    return " ".join(re.sub(r"\\\((.*?)\\\)", tex, text).split())


class _Binder:
    """Rewrites the articles of the printed pages into one document."""

    def __init__(self, pages: list[Page]):
        self.pages = pages
        self.keys = {p.file + ".html": p.key for p in pages}
        self.problems: list[str] = []
        self.headings: list[tuple[int, str, str]] = []  # (level, text, id) in reading order

    def _target(self, href: str, page: Page) -> str | None:
        """Where a link of ``page`` points inside the bound document (None: nowhere)."""
        parts = urlsplit(href)
        if parts.scheme in ("http", "https", "mailto"):
            return href
        if parts.scheme or parts.netloc:
            return None
        if parts.path:
            file = posixpath.normpath(posixpath.join(posixpath.dirname(page.file), unquote(parts.path)))
            key = self.keys.get(file)
            if key is None:
                return None  # a page left out of the PDF (API reference, indices) or a file
        else:
            key = page.key
        # a page's own address: its title (an element that starts a printed page has its
        # destination at the foot of the page before)
        return f"#{key}--{unquote(parts.fragment)}" if parts.fragment else f"#{_first_heading(key)}"

    def article(self, page: Page):  # noqa: ANN201 - a bs4 Tag
        from bs4 import BeautifulSoup
        from bs4.element import AttributeValueList

        soup = BeautifulSoup((HTML / (page.file + ".html")).read_text(encoding="utf-8"), "html.parser")
        article = soup.select_one("article.bd-article")
        if article is None:
            raise SystemExit(f"build_pdf: {page.file}.html has no article")
        # what a printed page cannot use: collapsed code, buttons, link symbols, and what the
        # chapters mark as for the screen only (```{container} egm-web-only```)
        for el in article.select("details.hide, a.headerlink, button, .toctree-wrapper, "
                                 "script, .copybtn, .toggle-button, .egm-web-only"):
            el.decompose()
        # the rest of a long table: the full table instead of its first rows
        for full in article.select("details.egm-table-full"):
            head = full.find_previous_sibling("table")
            if head is not None:
                caption = head.find("caption")  # the caption, with its number, goes to the full table
                table = full.find("table")
                if caption is not None and table is not None:
                    table.insert(0, caption.extract())
                head.decompose()
            if full.summary is None:
                raise ValueError(f"build_pdf: {page.file}.html has a full table without its <summary>")
            full.summary.decompose()
            full.unwrap()
        for details in article.select("details"):  # dropdowns: open, their title as a heading
            details.name = "div"
            details.attrs.pop("open", None)
            _add_class(details, "egm-pdf-open")
            if details.summary is not None:
                details.summary.name = "div"
        for el in article.select(".toggle-hidden"):
            el["class"] = AttributeValueList(c for c in el.get_attribute_list("class") if c != "toggle-hidden")
        if page.level == 0:  # the landing page: the title page has the title
            h1 = article.find("h1")
            if h1 is not None:
                h1.clear()
                h1.append(LANDING_TITLE)
        if page.level == 2:  # a section of a chapter: one level down, for nested bookmarks
            for level in range(5, 0, -1):
                for h in article.find_all(f"h{level}"):
                    h.name = f"h{level + 1}"
        for el in article.find_all(id=True):
            el["id"] = f"{page.key}--{el['id']}"
        for attr in ("aria-labelledby", "aria-describedby", "aria-controls", "for"):
            for el in article.find_all(None, {attr: True}):
                del el[attr]
        for a in article.find_all("a", href=True):
            target = self._target(_attr(a, "href"), page)
            if target is None:
                a.unwrap()
            else:
                a["href"] = target
        # every heading a link target, so that Chromium gives it a named destination: the
        # bookmarks point there (Chromium's own outline needs a tagged PDF, 25 % larger)
        for k, h in enumerate(article.find_all(["h1", "h2", "h3"])):
            anchor = _first_heading(page.key) if k == 0 else f"{page.key}--heading-{k}"
            h["id"] = anchor
            self.headings.append((int(h.name[1]), plain(h.get_text(" ")), anchor))
            link = soup.new_tag("a", attrs={"href": "#" + anchor, "class": "egm-pdf-heading"})
            link.extend(list(h.contents))
            h.append(link)
        # keep a table or a box whole only if it is short: a long one breaks between rows
        # and paragraphs instead of leaving most of a page blank
        for table in article.find_all("table"):
            if len(table.find_all("tr")) > LONG_TABLE_ROWS:
                for el in [table, *table.find_parents("div", class_=["egm-table-wrap", "cell_output", "output"])]:
                    _add_class(el, "egm-pdf-long")
        for box in article.select("div.proof, div.admonition, div.egm-check"):
            if len(box.get_text()) > LONG_BOX_CHARS:
                _add_class(box, "egm-pdf-long")
        for source in article.select("picture > source"):
            source.decompose()  # print the figure drawn for the text column, not its phone rendition
        for img in article.find_all("img", src=True):
            img["src"] = (HTML / posixpath.dirname(page.file) / _attr(img, "src")).resolve().as_uri()
            img.attrs.pop("loading", None)
        section = soup.new_tag("section", attrs={
            "id": page.key, "class": f"egm-pdf-page egm-pdf-level-{page.level}", "data-page": page.key})
        section.extend(list(article.contents))
        return section

    def check_links(self, body) -> None:  # noqa: ANN001
        ids = {el["id"] for el in body.find_all(id=True)}
        for a in body.find_all("a", href=True):
            if a["href"].startswith("#") and a["href"][1:] not in ids:
                page = a["href"][1:].split("--")[0]
                if _first_heading(page) in ids:
                    a["href"] = "#" + _first_heading(page)  # an anchor the page lost (a removed cell)
                else:
                    self.problems.append(f"link to {a['href']} has no target")
                    a.unwrap()


def _title_page(config: dict, commit: str) -> str:
    title, author = html.escape(config["title"]), html.escape(config["author"])
    built = f" Built from commit {html.escape(commit)}." if commit else ""
    return f"""<section class="egm-pdf-title" id="title-page"><div class="egm-pdf-title-main">{title}</div>
<p class="egm-pdf-subtitle">An executable book on the report <em>Differentially private vector sums
in the case of normally distributed data</em> (T. S. Poulsen, 2023)</p><p class="egm-pdf-author">{author}</p>
<p class="egm-pdf-small">Printed from the pages of the HTML book: chapters, sections, figures,
tables and equations carry the same numbers. The API reference is in the HTML book only.{built}</p>
</section>"""


def _contents(pages: list[Page]) -> str:
    rows = ['<nav class="egm-pdf-toc" id="contents"><h1><a class="egm-pdf-heading" href="#contents">Contents</a></h1>']
    for page in pages:
        if page.part:
            rows.append(f'<div class="egm-toc-part">{html.escape(page.part)}</div>')
        rows.append(f'<a class="egm-toc-entry egm-toc-level-{page.level}" href="#{_first_heading(page.key)}">'
                    f'<span class="egm-toc-title">{html.escape(page.title)}</span>'
                    f'<span class="egm-toc-page" data-for="{page.key}"></span></a>')
    rows.append("</nav>")
    return "\n".join(rows)


def _page_styles(pages: list[Page]) -> str:
    """One named page per printed page of the book: its running header (CSS margin boxes)."""
    rules = [".egm-pdf-toc { page: contents; }"]
    for page in pages:
        name = "p-" + re.sub(r"[^A-Za-z0-9_-]", "-", page.key)
        right = page.title if page.level == 2 else ""
        rules.append(f'section[data-page="{page.key}"] {{ page: {name}; }}')
        rules.append(f"@page {name} {{ @top-left {{ content: {_css_string(plain(page.chapter))}; }} "
                     f"@top-right {{ content: {_css_string(plain(right))}; }} }}")
    return "\n".join(rules)


#: MathJax's CommonHTML output (with the TeX fonts of the same MathJax 3.2.2 that the HTML
#: book typesets with, from the PyPI package django-static-mathjax), which Chromium prints
#: as text in those fonts: a reader of the PDF can search and copy every formula. (The HTML
#: book keeps the SVG output, whose glyphs are paths: it needs no web fonts, which a browser
#: refuses to load from ``file:`` pages.)
CHTML_COMPONENT = "tex-chtml-full.js"


def _mathjax_es5() -> Path:
    """The ``es5`` directory of the installed MathJax (the one ``_ext/offline_mathjax.py`` serves)."""
    from importlib import resources

    try:
        root = Path(str(resources.files("mathjax"))) / "static" / "mathjax" / "es5"
    except ModuleNotFoundError:
        sys.exit("build_pdf: needs the Python package django-static-mathjax (pip install -r requirements.txt)")
    if not (root / CHTML_COMPONENT).is_file():
        sys.exit(f"build_pdf: {root / CHTML_COMPONENT} not found: not django-static-mathjax's MathJax 3")
    return root


def _js_string(text: str) -> str:
    import json

    return json.dumps(text)


def bind(pages: list[Page], config: dict, commit: str) -> tuple[str, _Binder]:
    """The whole book as one HTML document (for a file outside ``_build/html``: its styles,
    scripts and images are linked by absolute ``file:`` addresses)."""
    from bs4 import BeautifulSoup

    binder = _Binder(pages)
    template = BeautifulSoup((HTML / "chapters" / "index.html").read_text(encoding="utf-8"), "html.parser")
    static = (HTML / "_static").resolve()
    links = []
    for link in template.select('link[rel="stylesheet"]'):
        href = _attr(link, "href").split("?")[0].removeprefix("../_static/")
        if href.startswith(STYLES):
            links.append(f'<link rel="stylesheet" href="{(static / href).as_uri()}">')
    mathjax_config = next(s.string for s in template.find_all("script")
                          if s.string and s.string.strip().startswith("window.MathJax"))
    mathjax = _mathjax_es5()
    fonts = (mathjax / "output" / "chtml" / "fonts" / "woff-v2").as_uri()
    body = BeautifulSoup("<main><article class='bd-article'></article></main>", "html.parser")
    article = body.article
    if article is None:
        raise ValueError("build_pdf: the document's skeleton has no <article>")
    for page in pages:
        article.append(binder.article(page))
    binder.check_links(body)
    doc = f"""<!DOCTYPE html>
<html lang="en" data-mode="light" data-theme="light" class="egm-pdf"><head><meta charset="utf-8">
<title>{html.escape(config["title"])}</title>
{"".join(links)}
<style>{CSS.read_text(encoding="utf-8")}
{_page_styles(pages)}</style>
<script>{mathjax_config}
window.MathJax.chtml = Object.assign(window.MathJax.chtml || {{}}, {{fontURL: {_js_string(fonts)}}});</script>
<script defer src="{(mathjax / CHTML_COMPONENT).as_uri()}"></script>
<script src="{(static / "egm.js").as_uri()}"></script>
</head><body>
{_title_page(config, commit)}
{_contents(pages)}
{body}
</body></html>"""
    return doc, binder


# --------------------------------------------------------------------------------------
# printing


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    chromedriver = shutil.which("chromedriver")
    if not chromium or not chromedriver:
        sys.exit("build_pdf: needs chromium and chromedriver (apt-get install chromium chromium-driver)")
    profile = tempfile.mkdtemp(prefix="chromium-pdf-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-extensions", "--hide-scrollbars", "--allow-file-access-from-files",
                 "--force-device-scale-factor=1", f"--window-size={COLUMN_PX},1000",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    # every command to the browser, the print among them, may take as long (selenium's own
    # limit for Chromium is 120 s)
    driver.command_executor.client_config.timeout = PAGE_TIMEOUT
    return driver, profile


#: Prints of one page, at most: Chromium now and then answers a print with "Printing failed" and
#: prints the same page on the next try (seen once in CI, on the contents' numbers).
PRINT_ATTEMPTS = 3


def _print_to_pdf(driver, options: dict) -> bytes:
    """``Page.printToPDF`` with ``options``, once the page's fonts are ready; Chromium's transient
    "Printing failed" is tried again, ``PRINT_ATTEMPTS`` times in all (any other error is raised)."""
    from selenium.common.exceptions import WebDriverException

    for attempt in range(1, PRINT_ATTEMPTS + 1):
        driver.execute_async_script("const done = arguments[arguments.length - 1];"
                                    "document.fonts.ready.then(() => done(null));")
        try:
            return base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", options)["data"])
        except WebDriverException as error:
            if "Printing failed" not in str(error) or attempt == PRINT_ATTEMPTS:
                raise
            print(f"build_pdf: Chromium's print failed (attempt {attempt} of {PRINT_ATTEMPTS}); printing again",
                  file=sys.stderr)
    raise AssertionError("unreachable")


def _print(driver) -> bytes:
    return _print_to_pdf(driver, {
        "printBackground": True, "preferCSSPageSize": True, "displayHeaderFooter": False,
        "generateDocumentOutline": False, "generateTaggedPDF": False})


# --------------------------------------------------------------------------------------
# no page left mostly blank before a figure

#: A page is mostly blank when its content ends above this share of its text area.
MOSTLY_BLANK = 0.5
#: A figure that would leave the page before it mostly blank is printed smaller, to fit the
#: room left there, down to this share of its height (and width); a larger one is left as
#: it is, and the build says so.
MIN_FIGURE_SCALE = 0.7
#: The text area of a printed page, in mm from the top of the A4 page (pdf_edition.css's
#: @page margins: 17 mm above, 15 mm below).
BODY_MM = (17.0, 297.0 - 15.0)
MM_PER_PX = 25.4 / 96
_CAPTION = re.compile(r"Fig\. (\d+\.\d+):")  # a figure's own caption; a cross-reference has no colon


def _page_texts(pdf: Path) -> list[str] | None:
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        return None
    out = subprocess.run([pdftotext, "-enc", "UTF-8", str(pdf), "-"], capture_output=True, check=True)
    return out.stdout.decode("utf-8").split("\f")


def page_fill(pdf: Path, page: int) -> float:
    """How far down its text area the content of ``page`` (1-based) reaches, from 0 (empty)
    to 1 (full), read from the page drawn at 30 dpi by poppler's ``pdftoppm``; the running
    header and the page number, in the margins, do not count."""
    import numpy as np
    from PIL import Image

    png = subprocess.run(["pdftoppm", "-r", "30", "-gray", "-f", str(page), "-l", str(page), str(pdf)],
                         capture_output=True, check=True).stdout
    with Image.open(io.BytesIO(png)) as im:
        if im.mode != "L":
            raise ValueError(f"build_pdf: pdftoppm -gray drew page {page} in mode {im.mode}, not 8-bit grey")
        grey = np.asarray(im)  # (height, width) grey levels, 0 black to 255 white
    height = grey.shape[0]
    top, bottom = round(height * BODY_MM[0] / 297), round(height * BODY_MM[1] / 297)
    inked = np.flatnonzero((grey[top:bottom] < 200).any(axis=1))  # rows of the text area with ink
    if inked.size == 0:
        return 0.0
    return float(inked[-1] + 1) / (bottom - top)


def blank_before_figures(pdf: Path, starts: set[int]) -> list[tuple[int, str, float]]:
    """The pages left mostly blank because the figure after them did not fit: (page, the
    figure's number, the page's fill), for each page P-1 before a page P whose first figure
    caption is "Fig. X.Y:", unless P starts a page of the book (``starts``, 1-based), where
    the page before ends its chapter or section."""
    texts = _page_texts(pdf)
    if texts is None or shutil.which("pdftoppm") is None:
        return []
    out = []
    for k, text in enumerate(texts, start=1):
        caption = _CAPTION.search(text)
        if caption is None or k == 1 or k in starts:
            continue
        fill = page_fill(pdf, k - 1)
        if fill < MOSTLY_BLANK:
            out.append((k - 1, caption.group(1), fill))
    return out


_FIGURE_JS = r"""
const number = arguments[0];
for (const fig of document.querySelectorAll("figure")) {
  const n = fig.querySelector("figcaption span.caption-number");
  if (!n || n.textContent.trim() !== "Fig. " + number + ":") continue;
  const img = fig.querySelector("img");
  if (!img) return null;
  return {figure: fig.getBoundingClientRect().height, image: img.getBoundingClientRect().height, id: fig.id};
}
return null;
"""

_SHRINK_JS = r"""
const [id, height] = arguments;
const img = document.getElementById(id).querySelector("img");
img.style.setProperty("width", "auto", "important");
img.style.setProperty("max-height", height + "px", "important");
if (window.egmLayout) window.egmLayout();
"""


def _fit_figures(driver, pdf: bytes, pages: list[Page], passes: int = 3) -> tuple[bytes, dict[str, float], list[str]]:  # noqa: ANN001
    """Print again, with smaller figures, while a figure leaves the page before it mostly
    blank and fits the room there at ``MIN_FIGURE_SCALE`` of its height or more. Returns the
    PDF, the figures shrunk (number -> scale) and the blank pages left."""
    shrunk: dict[str, float] = {}
    blank: list[str] = []
    with tempfile.TemporaryDirectory(prefix="egm-pdf-") as tmp:
        path = Path(tmp) / "book.pdf"
        for attempt in range(passes + 1):
            path.write_bytes(pdf)
            starts = set(_start_pages(pdf, [_first_heading(p.key) for p in pages]).values())
            found = blank_before_figures(path, starts)
            blank, changed = [], False
            for page, number, fill in found:
                sizes = driver.execute_script(_FIGURE_JS, number)
                room_px = (1 - fill) * (BODY_MM[1] - BODY_MM[0]) / MM_PER_PX - 24  # less a margin
                scale = 1 - (sizes["figure"] - room_px) / sizes["image"] if sizes else 0.0
                if sizes and scale >= MIN_FIGURE_SCALE and number not in shrunk and attempt < passes:
                    driver.execute_script(_SHRINK_JS, sizes["id"], int(scale * sizes["image"]))
                    shrunk[number] = scale
                    changed = True
                else:
                    blank.append(f"page {page} is {fill:.0%} full before Fig. {number}, which would need "
                                 f"{scale:.0%} of its height to fit there")
            if not changed:
                break
            pdf = _print(driver)
    return pdf, shrunk, blank


def _destination(reader, name: str):  # noqa: ANN001, ANN202
    named = reader.named_destinations
    return named.get("/" + name) or named.get(name)


def _start_pages(pdf: bytes, keys: list[str]) -> dict[str, int]:
    """The printed page (1-based) on which each page of the book starts, from the PDF's
    named destinations (Chromium names one per link target)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    out = {}
    for key in keys:
        dest = _destination(reader, key)
        if dest is not None:
            number = reader.get_destination_page_number(dest)
            if number is None:
                raise ValueError(f"build_pdf: the PDF's destination {key!r} is on no page")
            out[key] = number + 1
    return out


def _toc_links(reader, pages: list[Page]) -> list[tuple[int, list[float], str]]:
    """The links of the table of contents: (page index, rectangle in points, target key).
    The contents run from their own title to the page where the book's first page starts."""
    targets = {"/" + _first_heading(p.key): p.key for p in pages} | {_first_heading(p.key): p.key for p in pages}
    first = reader.get_destination_page_number(_destination(reader, "contents"))
    end = reader.get_destination_page_number(_destination(reader, _first_heading(pages[0].key)))
    out = []
    for k, page in enumerate(reader.pages[first:end], start=first):
        for annot in page.get("/Annots") or []:
            annot = annot.get_object()
            dest = annot.get("/Dest")
            if dest is None and annot.get("/A") is not None:
                dest = annot["/A"].get("/D")
            if dest is not None and str(dest) in targets:
                out.append((k, [float(v) for v in annot["/Rect"]], targets[str(dest)]))
    return out


def _contents_pages(reader, pages: list[Page]) -> list[int]:  # noqa: ANN001
    return sorted({k for k, _, _ in _toc_links(reader, pages)})


def _numbers_overlay(pdf: bytes, pages: list[Page], numbers: dict[str, int], style: dict) -> str:
    """An HTML document of one transparent page per page of the contents, each number set
    where its entry's link ends (the entry's right edge, its first line)."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    links = _toc_links(reader, pages)
    level = {p.key: p.level for p in pages}
    width, height = (float(v) for v in reader.pages[0].mediabox.upper_right)
    line = float(style["line"].removesuffix("px")) * 0.75 if style["line"].endswith("px") else 15.0  # pt
    sheets = []
    for k in sorted({k for k, _, _ in links}):
        spans = []
        for page_index, (_, _, x2, y2), key in links:
            if page_index != k:
                continue
            weight = 600 if level[key] <= 1 else 400
            spans.append(f'<span style="position:absolute;right:{width - x2:.2f}pt;top:{height - y2:.2f}pt;'
                         f'height:{line:.2f}pt;line-height:{line:.2f}pt;font-weight:{weight}">'
                         f'{numbers.get(_first_heading(key), "")}</span>')
        sheets.append(f'<div class="sheet">{"".join(spans)}</div>')
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>
@page {{ size: {width:.2f}pt {height:.2f}pt; margin: 0; }}
html, body {{ margin: 0; padding: 0; background: transparent; }}
div.sheet {{ position: relative; width: {width:.2f}pt; height: {height:.2f}pt; overflow: hidden;
  break-after: page; font-family: {style["family"]}; font-size: {style["size"]}; color: {style["color"]}; }}
div.sheet:last-child {{ break-after: auto; }}
</style></head><body>{"".join(sheets)}</body></html>"""


def _add_outline(writer, reader, headings: list[tuple[int, str, str]]) -> list[str]:  # noqa: ANN001
    """Nested bookmarks: chapter, section, subsection, each at its heading."""
    from pypdf.generic import Fit

    parents: dict[int, object] = {}
    lost = []
    for level, text, anchor in headings:
        dest = _destination(reader, anchor)
        if dest is None:
            lost.append(anchor)
            continue
        page = reader.get_destination_page_number(dest)
        top = dest.top if dest.top is not None else None
        item = writer.add_outline_item(title=text, page_number=page, parent=parents.get(level - 1),
                                       fit=Fit.xyz(left=0, top=top, zoom=None) if top is not None else Fit.fit())
        parents[level] = item
        for deeper in [k for k in parents if k > level]:
            del parents[deeper]
    return lost


_PATH_OPS = {b"m", b"l", b"c", b"v", b"y", b"h", b"re"}
SHARED_PATH_LINES = 6  # a path this long or longer, drawn twice or more, is drawn once and reused


def _filled_paths(lines: list[bytes]) -> list[tuple[int, int]]:
    """The paths of a content stream (one operator a line, as Chromium writes them) that a
    plain fill paints and nothing else: (start, end) with ``lines[start]`` a moveto,
    ``lines[start:end]`` path construction without rectangles, ``lines[end]`` ``f`` or ``f*``."""
    out, start = [], None
    for k, line in enumerate(lines):
        op = line[line.rfind(b" ") + 1:]
        if op in _PATH_OPS:
            if start is None:
                start = k if op == b"m" else -1
            elif op == b"re":
                start = -1
        else:
            if start is not None and start >= 0 and line in (b"f", b"f*") and k - start >= SHARED_PATH_LINES:
                out.append((start, k))
            start = None
    return out


def share_paths(writer) -> int:  # noqa: ANN001
    """Draw each path that recurs once, as a form XObject, and paint it where it recurs.

    Chromium prints MathJax's SVG glyphs as paths, the whole outline again at each use of a
    glyph: about 31,000 uses of some 220 glyph outlines, two thirds of the PDF's bytes. A
    glyph's path is the same at each use (in the glyph's own units; the ``cm`` before it
    places it), so the content stream can name a form that holds it (``/P12 Do``). A form
    takes the current colour and graphics state from where it is painted, so the page
    renders as before (poppler's rendering of every page is pixel for pixel the same).
    Returns the number of shared paths."""
    from collections import Counter

    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, FloatObject, NameObject

    pages = []
    uses: Counter[bytes] = Counter()
    for page in writer.pages:
        contents = page.get_contents()
        lines = contents.get_data().split(b"\n") if contents is not None else []
        paths = _filled_paths(lines)
        pages.append((page, lines, paths))
        uses.update(b"\n".join(lines[start:end + 1]) for start, end in paths)
    forms: dict[bytes, tuple[str, object]] = {}
    for page, lines, paths in pages:
        used, out, last = {}, [], 0
        for start, end in paths:
            path = b"\n".join(lines[start:end + 1])
            if uses[path] < 2:
                continue
            if path not in forms:
                numbers = [float(v) for line in lines[start:end] for v in line.split()[:-1]]
                xs, ys = numbers[0::2], numbers[1::2]  # every operand pair is a point
                pad = 1 + 0.1 * max(max(xs) - min(xs), max(ys) - min(ys))  # room for anti-aliasing
                form = DecodedStreamObject()
                form.set_data(path)
                form.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Form"),
                             NameObject("/BBox"): ArrayObject(FloatObject(round(v, 3)) for v in (
                                 min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)),
                             NameObject("/Resources"): DictionaryObject()})
                forms[path] = (f"/P{len(forms)}", writer._add_object(form.flate_encode(level=9)))
            name, ref = forms[path]
            used[name] = ref
            out += [*lines[last:start], name.encode() + b" Do"]
            last = end + 1
        if not used:
            continue
        resources = page["/Resources"].get_object()
        if "/XObject" not in resources:
            resources[NameObject("/XObject")] = DictionaryObject()
        xobjects = resources["/XObject"].get_object()
        for name, ref in used.items():
            xobjects[NameObject(name)] = ref
        contents = DecodedStreamObject()
        contents.set_data(b"\n".join([*out, *lines[last:]]))
        page.replace_contents(contents)
        page.compress_content_streams(level=9)
    return len(forms)


def build(out: Path) -> dict:
    from pypdf import PdfReader, PdfWriter

    if not (HTML / "chapters" / "index.html").is_file():
        sys.exit(f"build_pdf: no built book in {HTML}: run the HTML build first (README, command 1)")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = ""
    start = time.time()
    pages = printed_pages()
    missing = [p.file for p in pages if not (HTML / (p.file + ".html")).is_file()]
    if missing:
        sys.exit(f"build_pdf: pages not built: {missing}")
    document, binder = bind(pages, config, commit)
    problems = binder.problems
    out.parent.mkdir(parents=True, exist_ok=True)
    source = ROOT / "_build" / "pdf" / "book.html"  # outside _build/html: not a page of the book
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(document, encoding="utf-8")
    driver, profile = _driver()
    try:
        driver.get(source.resolve().as_uri())
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        info = driver.execute_async_script(_WAIT_JS)
        if info.get("errors"):
            problems.append(f"{info['errors']} MathJax errors {info.get('failure', '')}")
        if info.get("broken"):
            problems.append(f"images that did not load: {info['broken'][:5]}")
        pdf = _print(driver)
        pdf, shrunk, blank = _fit_figures(driver, pdf, pages)
        # the table of contents' page numbers: known only once the book is printed, so they
        # are printed on a transparent page of their own, laid over the contents
        style = driver.execute_script(
            "const s = getComputedStyle(document.querySelector('.egm-toc-page'));"
            "return {family: s.fontFamily, size: s.fontSize, color: s.color, line: s.lineHeight};")
        numbers = _start_pages(pdf, [_first_heading(p.key) for p in pages])
        lost = [p.key for p in pages if _first_heading(p.key) not in numbers]
        if lost:
            problems.append(f"pages with no destination in the PDF: {lost}")
        overlay_file = source.with_name("contents-numbers.html")
        overlay_file.write_text(_numbers_overlay(pdf, pages, numbers, style), encoding="utf-8")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
        driver.get(overlay_file.resolve().as_uri())
        overlay = _print_to_pdf(driver, {
            "printBackground": False, "preferCSSPageSize": True, "displayHeaderFooter": False})
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    reader = PdfReader(io.BytesIO(pdf))
    writer = PdfWriter(clone_from=reader)
    numbers_pages = PdfReader(io.BytesIO(overlay)).pages
    for page_index, overlay_page in zip(_contents_pages(reader, pages), numbers_pages, strict=True):
        writer.pages[page_index].merge_page(overlay_page)
        writer.pages[page_index].compress_content_streams()
    lost = _add_outline(writer, reader, [(1, "Contents", "contents"), *binder.headings])
    if lost:
        problems.append(f"headings with no destination in the PDF: {lost[:5]}")
    writer.add_metadata({"/Title": config["title"], "/Author": config["author"],
                         "/Subject": "Differential privacy: releasing the sum of Gaussian vectors (Algorithm 3)",
                         "/Creator": "scripts/build_pdf.py (headless Chromium, pypdf)"})
    writer.page_mode = "/UseOutlines"
    shared = share_paths(writer)
    writer.compress_identical_objects()
    with out.open("wb") as f:
        writer.write(f)
    if problems:
        sys.exit("build_pdf: " + "; ".join(problems))
    return {"pages": len(reader.pages), "bytes": out.stat().st_size, "seconds": time.time() - start,
            "shared": shared, "shrunk": shrunk, "blank": blank}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT / PDF_NAME, help="where to write the PDF")
    args = parser.parse_args(argv)
    result = build(args.out)
    print(f"build_pdf: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}: "
          f"{result['pages']} pages, {result['bytes'] / 1e6:.1f} MB ({result['shared']} recurring paths drawn "
          f"once), {result['seconds']:.0f} s")
    for figure, scale in result["shrunk"].items():
        print(f"build_pdf: {figure} printed at {scale:.0%} of its height, so that the page before it is not left "
              "mostly blank")
    for note in result["blank"]:
        print(f"build_pdf: warning: {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
