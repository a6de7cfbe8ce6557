"""Typeset the ``$...$`` math of bibliography entries instead of printing it as text.

sphinxcontrib-bibtex (through pybtex) turns a title such as
``... Linear Combination of $\\chi^2$ Random Variables`` into plain text, so the reader
would see ``$\\chi ^2$``. After references are resolved, this extension splits every
text node inside a citation at ``$...$`` and puts an inline math node in place of each
formula, which MathJax then renders like any other inline math of the book (the page is marked as
having math, so Sphinx includes MathJax on it).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

INLINE_MATH = re.compile(r"\$([^$]+)\$")


def _split(text: str) -> list[nodes.Node]:
    pieces: list[nodes.Node] = []
    position = 0
    for match in INLINE_MATH.finditer(text):
        if match.start() > position:
            pieces.append(nodes.Text(text[position : match.start()]))
        latex = match.group(1).strip()
        pieces.append(nodes.math(latex, latex))
        position = match.end()
    if position < len(text):
        pieces.append(nodes.Text(text[position:]))
    return pieces


def typeset_citation_math(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    changed = False
    for citation in doctree.findall(nodes.citation):
        for text in list(citation.findall(nodes.Text)):
            if isinstance(text.parent, (nodes.literal, nodes.math, nodes.raw)):
                continue
            if INLINE_MATH.search(text.astext()):
                text.parent.replace(text, _split(text.astext()))
                changed = True
    if changed:
        # The math domain decided at read time, before the citations existed, whether
        # this page needs MathJax; tell it that the page has math now.
        app.env.get_domain("math").data["has_equations"][docname] = True


def setup(app: Sphinx) -> dict:
    app.connect("doctree-resolved", typeset_citation_math)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
