#!/usr/bin/env python
"""The book's PDF edition: headless Chromium prints the built HTML book, pypdf binds it.

Each page of the table of contents (``_toc.yml``), from the landing page to the
bibliography, is opened in headless Chromium at the printed page's width, typeset by
MathJax and fitted by ``_static/egm.js`` exactly as a reader's browser shows it, its
proofs and dropdowns opened, and printed with the print style of ``_static/egm.css``
(the article alone: no sidebars, no buttons, collapsed code left out).  The pages are
bound behind a title page into one A4 PDF with a bookmark per chapter and the book's
title and author in its metadata.  Numbers (sections, figures, equations, the report's
statements) are therefore the HTML's, by construction.  The API reference stays in the
HTML book only: it is a reference to search and follow links in, not to read in print.

Run from the repository root after building the HTML book (README command 1)::

    python scripts/build_pdf.py            # writes _build/html/<PDF_NAME>

Needs Debian's ``chromium`` and ``chromium-driver`` (as the browser test does) and
``pypdf``; no network.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
OUT = HTML  # beside the landing page, which links to it
PDF_NAME = "dp-vector-sums-for-gaussian-data.pdf"
# A4 with 14 mm margins: a text column of 182 mm, 688 CSS px at 96 px per inch.
PAPER = {"paperWidth": 8.27, "paperHeight": 11.69, "marginTop": 0.55, "marginBottom": 0.6,
         "marginLeft": 0.55, "marginRight": 0.55}
WINDOW = (688, 1000)
PAGE_TIMEOUT = 60  # s
SKIP_FILES = ("chapters/api/",)  # the API reference is HTML only

_WAIT_JS = r"""
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(img => { img.loading = "eager"; });
const loaded = Promise.all(images.map(img => img.complete ? null : new Promise(resolve => {
  img.addEventListener("load", resolve); img.addEventListener("error", resolve); })));
const mj = window.MathJax;
const typeset = (mj && mj.startup && mj.startup.promise) ? mj.startup.promise : Promise.resolve();
Promise.all([typeset, loaded]).then(() => window.egmLayoutDone || null).then(() => {
  // proofs and dropdowns open; collapsed code and the rest of long tables stay closed
  document.querySelectorAll("details").forEach(d => {
    if (!d.matches(".hide.above-input, .egm-table-full")) d.open = true; });
  document.querySelectorAll(".toggle-hidden, .toggle-details__container").forEach(el => {
    el.classList.remove("toggle-hidden"); });
  if (window.egmLayout) window.egmLayout();
  done({errors: document.querySelectorAll("mjx-merror, [data-mjx-error]").length});
}, e => done({errors: -1, failure: String(e)}));
"""


def toc_pages() -> list[str]:
    """The pages to print, in reading order: the landing page, then every entry of every
    part of ``_toc.yml`` (the API reference aside)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc["parts"]:
        for entry in part["chapters"]:
            pages.append(entry["file"])
            pages += [sub["file"] for sub in entry.get("sections", [])]
    return [f for f in pages if not f.startswith(SKIP_FILES)]


def page_title(html_text: str) -> str:
    """A built page's title as its ``<h1>`` shows it, with the book's number ("4.2. Lemma
    4.1 and ..."): the PDF's bookmark for the page."""
    article = html_text[html_text.find("<article"):]  # the theme's header repeats the title, unnumbered
    match = re.search(r"<h1[^>]*>(.*?)</h1>", article, re.DOTALL)
    if not match:
        return ""
    text = re.sub(r"<a class=\"headerlink\".*?</a>", "", match.group(1), flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


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
                 "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                 "--force-device-scale-factor=1", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    return driver, profile


def _print(driver, footer: str) -> bytes:
    data = driver.execute_cdp_cmd("Page.printToPDF", {
        **PAPER, "printBackground": True, "preferCSSPageSize": False,
        "displayHeaderFooter": True, "headerTemplate": "<span></span>",
        "footerTemplate": ('<div style="font-size:7.5px;width:100%;padding:0 14mm;color:#444;'
                           'font-family:sans-serif;display:flex;justify-content:space-between">'
                           f"<span>{html.escape(footer)}</span>"
                           '<span><span class="pageNumber"></span>/<span class="totalPages"></span>'
                           "</span></div>")})
    return base64.b64decode(data["data"])


def _title_page(config: dict, commit: str) -> str:
    title, author = html.escape(config["title"]), html.escape(config["author"])
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>
<style>body {{ font-family: sans-serif; margin: 0; }}
.t {{ margin-top: 28vh; text-align: center; padding: 0 10%; }}
h1 {{ font-size: 30px; line-height: 1.25; }} p {{ font-size: 15px; color: #222; }}
.small {{ font-size: 11px; color: #444; margin-top: 30vh; }}</style></head><body><div class="t">
<h1>{title}</h1><p>An executable book on the report <em>Differentially private vector sums
in the case of normally distributed data</em> (T. S. Poulsen, 2023)</p><p>{author}</p>
<p class="small">The PDF edition of the HTML book, printed from the same pages: chapters,
sections, figures, tables and equations carry the same numbers. The API reference is in
the HTML book only.{(" Built from commit " + html.escape(commit) + ".") if commit else ""}</p>
</div></body></html>"""


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
    writer = PdfWriter()
    driver, profile = _driver()
    problems = []
    try:
        title_file = Path(profile) / "title.html"
        title_file.write_text(_title_page(config, commit), encoding="utf-8")
        driver.get(title_file.as_uri())
        writer.append(PdfReader(io.BytesIO(_print(driver, ""))))
        for file in toc_pages():
            page = HTML / (file + ".html")
            if not page.is_file():
                problems.append(f"{file}: not built")
                continue
            driver.get(page.resolve().as_uri())
            info = driver.execute_async_script(_WAIT_JS)
            if info.get("errors"):
                problems.append(f"{file}: {info['errors']} MathJax errors {info.get('failure', '')}")
            heading = page_title(page.read_text(encoding="utf-8")) or file
            first = len(writer.pages)
            writer.append(PdfReader(io.BytesIO(_print(driver, f"{config['title']} \u2014 {heading}"))))
            writer.add_outline_item(title=heading, page_number=first)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    writer.add_metadata({"/Title": config["title"], "/Author": config["author"],
                         "/Subject": "Differential privacy: releasing the sum of Gaussian vectors (Algorithm 3)",
                         "/Creator": "scripts/build_pdf.py (headless Chromium, pypdf)"})
    writer.page_mode = "/UseOutlines"
    for page in writer.pages:
        page.compress_content_streams(level=9)
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    if problems:
        sys.exit("build_pdf: " + "; ".join(problems))
    return {"pages": len(writer.pages), "bytes": out.stat().st_size, "seconds": time.time() - start}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT / PDF_NAME, help="where to write the PDF")
    args = parser.parse_args(argv)
    result = build(args.out)
    print(f"build_pdf: {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}: "
          f"{result['pages']} pages, {result['bytes'] / 1e6:.1f} MB, {result['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
