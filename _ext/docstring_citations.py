"""Let docstrings cite the bibliography the way the chapters do.

The chapters are MyST and cite with ``{cite}`key```; autodoc reads docstrings as
reStructuredText, where the same citation is ``:cite:p:`key```.  This extension rewrites
the MyST form in docstrings before autodoc parses them, so a docstring written for the
book renders its citations as links to the bibliography page.
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx

MYST_CITE = re.compile(r"\{cite(?::(p|t))?\}`([^`]+)`")


def _rst(match: re.Match[str]) -> str:
    return f":cite:{match.group(1) or 'p'}:`{match.group(2)}`"


def rewrite_citations(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    lines[:] = [MYST_CITE.sub(_rst, line) for line in lines]


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("autodoc-process-docstring", rewrite_citations)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
