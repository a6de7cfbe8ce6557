"""The role ``{verdict}`confirmed``` : a verdict of the landing page's table as a label a
reader can scan, its word in a colour of its own (``_static/egm.css``: green confirmed,
red corrected, dark red refuted, amber open, blue beyond), with a symbol before it that
tells them apart without colour. The text stays the word itself, so that the table reads
the same to a screen reader, in the search index and in the PDF's text.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

VERDICTS = ("confirmed", "corrected", "refuted", "open", "beyond")


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):  # noqa: ANN001, ANN201
    word = text.strip()
    if word not in VERDICTS:
        message = inliner.reporter.error(f"verdict must be one of {VERDICTS}, got {word!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    node = nodes.inline(rawtext, word, classes=["egm-verdict", f"egm-verdict-{word}"])
    return [node], []


def setup(app: Sphinx) -> dict:
    app.add_role("verdict", verdict_role)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
