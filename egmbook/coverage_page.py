"""The coverage page's helpers: the book's chapter of each page, and the item table whose check
references link to the badges (chapters/coverage.ipynb).

The page reads the book's executed notebooks back (:func:`egmbook.claims.collect_checks`) and
matches their checks against the report's numbered items; these helpers turn the table of contents
into chapter labels ("ch. 4", "App. A") and draw the item-by-item table with one link per check.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from egmbook.claims import report_items
from egmbook.display import table
from egmlib.validation import check_mapping

__all__ = ["SYMBOL", "chapter_numbers", "LinkedTable", "item_table"]

#: The outcome of a check as one character (confirms, corrects, goes beyond); a correction is
#: marked as its badge marks it (the pencil of :mod:`egmbook.claims`; a cross means "refuted" on the
#: landing page).
SYMBOL: Mapping[str, str] = {"confirms": "\u2713", "corrects": "\u270e", "beyond": "+"}
_WORDS = {"confirms": "confirmed", "corrects": "corrected", "beyond": "extended"}


def chapter_numbers(toc: Mapping[str, Any]) -> dict[str, str]:
    """The book's chapter of each page ("ch. 4" for chapter 4 and its sections, appendices "App. A"),
    by notebook stem, from the parsed ``_toc.yml``."""
    check_mapping("toc", toc, keys=["parts"])
    numbers: dict[str, str] = {}
    chapter = letter = 0
    for part in toc["parts"]:
        for entry in part["chapters"]:
            stems = [Path(entry["file"]).name] + [Path(sub["file"]).name for sub in entry.get("sections", [])]
            if part.get("numbered"):
                chapter += 1
                numbers.update(dict.fromkeys(stems, f"ch. {chapter}"))
            elif stems[0].startswith("appendix_"):
                numbers.update(dict.fromkeys(stems, "App. " + chr(ord("A") + letter)))
                letter += 1
    return numbers


class LinkedTable:
    """A table (HTML and its plain-text twin) whose check references link to the badges."""

    def __init__(self, html_text: str, plain: str, links: Mapping[str, tuple[str, str]]) -> None:
        for name, value in (("html_text", html_text), ("plain", plain)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {name} of type {type(value).__name__}")
        if not isinstance(links, Mapping):
            raise TypeError(f"links must be a mapping from tokens to (href, text), got links of type "
                            f"{type(links).__name__}")
        for token, link in links.items():
            if not (isinstance(token, str) and isinstance(link, tuple) and len(link) == 2
                    and all(isinstance(part, str) for part in link)):
                raise TypeError(f"links must map each token (a string) to a pair of strings (href, text), got "
                                f"{token!r}: {link!r:.60}")
        self.html_text, self.plain, self.links = html_text, plain, links

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        out = self.html_text
        for token, (href, text) in self.links.items():
            out = out.replace(token, f'<a href="{href}">{html.escape(text)}</a>')
        out = out.replace("</a>, <a", "</a>,<br><a")  # one check per line
        return {"text/plain": self.plain, "text/html": out}


def item_table(items: Sequence[Mapping[str, str]], records: Sequence[Mapping[str, str]],
               numbers: Mapping[str, str], *, caption: str, label: str) -> LinkedTable:
    """For each numbered item of the report: what its checks found and a link to each check's badge
    (shown as the badge's chapter and outcome, "ch. 4 ✓")."""
    if not isinstance(numbers, Mapping):
        raise TypeError(f"numbers must be a mapping from notebook stems to chapter labels, got numbers of type "
                        f"{type(numbers).__name__}")
    for name, value in (("caption", caption), ("label", label)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {name} of type {type(value).__name__}")
    links: dict[str, tuple[str, str]] = {}
    rows: dict[str, list[str]] = {"report item": [], "found": [], "badges": []}
    for item in items:
        found = [r for r in records if item["item"] in report_items(r["claim"])]
        refs = []
        for record in found:
            token = f"@@{len(links)}@@"
            links[token] = (f"{record['notebook']}.html#check-{record['label']}",
                            f"{numbers.get(record['notebook'], record['notebook'])} {SYMBOL[record['outcome']]}")
            refs.append(token)
        rows["report item"].append(item["item"])
        rows["found"].append(", ".join(w for o, w in _WORDS.items() if any(r["outcome"] == o for r in found)) or "-")
        rows["badges"].append(", ".join(refs) or "none")
    shown = table(rows, head=8, caption=caption, label=label)
    with_tokens = shown.html
    shown.cells = [[re.sub(r"@@\d+@@", lambda m: links[m.group(0)][1], cell) for cell in cells]
                   for cells in shown.cells]
    return LinkedTable(with_tokens, shown.text, links)

