"""The role ``{verdict}`holds``` : the verdict on one of the report's claims, as a label of
one or two words a reader can scan, in the colour its word names (``_static/egm.css``):

========== ===================================================== ===========
word        meaning                                               colour
========== ===================================================== ===========
holds       the claim holds as stated                             green ✓
holds if    it holds under a condition the cell says              teal ✓
corrected   it is wrong as stated; a corrected form holds         red ✎
refuted     it is false                                           dark red ✕
open        neither proved nor refuted                            grey ?
========== ===================================================== ===========

The symbol before the word tells the verdicts apart without colour; the text stays the word
itself, so that a table reads the same to a screen reader, in the search index and in the
PDF's text. Any other word is a build error.

The words the landing page used before these five (``confirmed``, ``beyond``) are accepted in
the meantime, in their old colours, and listed by ``tests/test_writing.py``, which expects
the five words only; remove ``LEGACY`` once no page uses them.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The verdicts, in the order of the table above.
VERDICTS = ("holds", "holds if", "corrected", "refuted", "open")
#: Words of the landing page's first verdict table, to be replaced by the five above.
LEGACY = ("confirmed", "beyond")


def css_class(word: str) -> str:
    """``egm-verdict-holds-if`` for ``holds if``."""
    return "egm-verdict-" + "-".join(word.split())


def verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):  # noqa: ANN001, ANN201
    word = " ".join(text.split())
    if word not in VERDICTS + LEGACY:
        message = inliner.reporter.error(f"verdict must be one of {VERDICTS}, got {word!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    node = nodes.inline(rawtext, word, classes=["egm-verdict", css_class(word)])
    return [node], []


def setup(app: Sphinx) -> dict:
    app.add_role("verdict", verdict_role)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
