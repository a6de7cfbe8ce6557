"""Number the book's tables per chapter, as Sphinx numbers its figures, and let the prose
cite them: "Table 9.2: ..." in the table's ``<caption>``, ``{numref}`label``` in the text.

Two kinds of table are numbered in one sequence per chapter (``numfig_secnum_depth: 1``;
a chapter's section pages, 9.1 and 9.2, continue the chapter's sequence, as figures do):

- MyST's ``{table}`` and ``{list-table}`` directives (a caption, and ``:name:`` to cite
  one): Sphinx numbers them itself;
- the tables that ``egmbook.display.table`` and ``heatmap`` draw in a notebook's outputs,
  which reach Sphinx as raw HTML: a ``<div class="egm-table-wrap" data-egm-label="...">``
  around a ``<table>`` whose ``<caption>`` holds the caption. For each such table with a
  caption, this extension puts an invisible anchor node (:class:`egm_table`, enumerable as
  a ``table``) before the output, which Sphinx numbers and registers under the label (an
  explicit target, so ``{numref}`` and ``{ref}`` resolve it and a label used twice is a
  build warning); when the page is written, the number is put into the caption and the
  label becomes the table's HTML ``id``.

Every caption number (figures, tables, code blocks) is followed by a colon:
"Table 9.2: The goals ...", "Fig. 8.1: The error ...". A cross-reference reads
"Table 9.2" (``numfig_format``).
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.writers.html5 import HTML5Translator

logger = logging.getLogger(__name__)

#: One table of ``egmbook.display``: the wrapper (with its label, if any), then the first
#: ``<caption>`` inside it, which holds the caption text.
WRAP = re.compile(r'<div class="egm-table-wrap"(?P<attrs>[^>]*)>')
CAPTION = re.compile(r'<caption class="egm-table-caption"><span class="caption-text">(?P<text>.*?)</span></caption>',
                     re.DOTALL)
LABEL = re.compile(r'\sdata-egm-label="(?P<label>[^"]*)"')
ID = re.compile(r'\sid="(?P<id>[^"]*)"')


class egm_table(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lower case
    """The anchor of a table drawn by ``egmbook.display`` (its HTML is a notebook output):
    numbered by Sphinx as a ``table``, titled by its caption; it renders nothing."""


def _caption_title(node: egm_table) -> str:
    return node.get("caption", "")


def _plain(fragment: str) -> str:
    r"""A caption's HTML as text (the title of a cross-reference ``{numref}`Table {number}: {name} <label>```):
    tags dropped, entities decoded, inline math ``\(x\)`` as ``x``."""
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    text = re.sub(r"\\\((.*?)\\\)", r"\1", text)
    return " ".join(text.split())


def _html_raws(node: nodes.Node) -> list[nodes.raw]:
    return [raw for raw in node.findall(nodes.raw) if "html" in raw.get("format", "").split()
            and "egm-table-wrap" in raw.astext()]


def _insertion_point(raw: nodes.raw) -> nodes.Element:
    """The node before which a table's anchor goes: the notebook output's whole bundle of
    formats (myst-nb keeps one format per builder later), else the raw node itself."""
    ancestor = raw.parent
    while ancestor is not None and not isinstance(ancestor, nodes.document):
        if ancestor.get("nb_element") == "mime_bundle":
            return ancestor
        ancestor = ancestor.parent
    return raw


class NumberDisplayTables(SphinxTransform):
    """Anchor each captioned table of ``egmbook.display`` in a page's doctree (before the
    domains collect the labels, priority 850, and before Sphinx numbers what it found)."""

    default_priority = 400

    def _auto_id(self, anchor: egm_table) -> None:
        """``table-1``, ``table-2``, ...: the page's first free one."""
        k = 1
        while f"table-{k}" in self.document.ids:
            k += 1
        anchor["ids"].append(f"table-{k}")
        self.document.ids[f"table-{k}"] = anchor

    def apply(self, **kwargs) -> None:  # noqa: ANN003
        for raw in _html_raws(self.document):
            text = raw.astext()
            pieces, last, anchors = [], 0, []
            for wrap in WRAP.finditer(text):
                caption = CAPTION.search(text, wrap.end())
                following = WRAP.search(text, wrap.end())
                if caption is None or (following is not None and following.start() < caption.start()):
                    continue  # a table without a caption: not numbered
                label_match = LABEL.search(wrap.group("attrs"))
                label = label_match.group("label") if label_match else ""
                anchor = egm_table(caption=_plain(caption.group("text")))
                if label:
                    anchor["names"].append(label)
                    self.document.note_explicit_target(anchor, anchor)
                if not anchor["ids"]:  # no label, or one used twice (docutils warned): still numbered
                    self._auto_id(anchor)
                anchors.append(anchor)
                attrs = ID.sub("", wrap.group("attrs"))
                pieces += [text[last:wrap.start()], f'<div class="egm-table-wrap" id="{anchor["ids"][0]}"{attrs}>']
                last = wrap.end()
            if not anchors:
                continue
            pieces.append(text[last:])
            raw.children = []
            raw += nodes.Text("".join(pieces))
            place = _insertion_point(raw)
            for anchor in anchors:
                anchor.source, anchor.line = raw.source, raw.line
                place.parent.insert(place.parent.index(place), anchor)


class CaptionNumbers(SphinxPostTransform):
    """Write each numbered table's number into its caption (HTML builders)."""

    default_priority = 100  # after myst-nb's choice of one output format (priority 4)
    formats = ("html",)

    def run(self, **kwargs) -> None:  # noqa: ANN003
        numbers = self.env.toc_fignumbers.get(self.env.docname, {}).get("table", {})
        prefix = self.config.numfig_format.get("table", "Table %s")
        for raw in _html_raws(self.document):
            text = raw.astext()
            pieces, last = [], 0
            for wrap in WRAP.finditer(text):
                found = ID.search(wrap.group("attrs"))
                number = numbers.get(found.group("id")) if found else None
                caption = CAPTION.search(text, wrap.end())
                if number is None or caption is None:
                    continue
                at = caption.start() + len('<caption class="egm-table-caption">')
                label = prefix % ".".join(map(str, number))
                pieces += [text[last:at], f'<span class="caption-number">{label}: </span>']
                last = at
            if pieces:
                raw.children = []
                raw += nodes.Text("".join(pieces) + text[last:])


def visit_skip(self, node: egm_table) -> None:  # noqa: ANN001
    raise nodes.SkipNode


_ORIGINAL_ADD_FIGNUMBER = HTML5Translator.add_fignumber


#: The captions whose number gets a colon (sphinx-proof's statements keep Sphinx's form,
#: which that extension looks for in the output).
COLON_AFTER = frozenset({"figure", "table", "code-block"})


def add_fignumber(self: HTML5Translator, node: nodes.Element) -> None:
    """Sphinx's caption number ("Table 9.2 ") followed by a colon: "Table 9.2: "."""
    start = len(self.body)
    _ORIGINAL_ADD_FIGNUMBER(self, node)
    if self.builder.env.domains["std"].get_enumerable_node_type(node) not in COLON_AFTER:
        return
    for k in range(start + 1, len(self.body)):
        if self.body[k - 1] == '<span class="caption-number">' and self.body[k].endswith(" "):
            self.body[k] = self.body[k].rstrip() + ": "


def setup(app: Sphinx) -> dict:
    skip = (visit_skip, None)
    app.add_enumerable_node(egm_table, "table", _caption_title, html=skip, latex=skip, text=skip, man=skip,
                            texinfo=skip)
    app.add_transform(NumberDisplayTables)
    app.add_post_transform(CaptionNumbers)
    HTML5Translator.add_fignumber = add_fignumber
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
