"""Give the report's statements and equations the report's own numbers.

Sphinx numbers sphinx-proof statements and labelled equations by their position in the
book ("Algorithm 4.1", "(5.3)"), which would clash with the numbers the report uses and
the book quotes ("Algorithm 3", "eq. (9)"). This extension takes the number from the
label instead, after Sphinx has assigned its own:

- ``report-<kind>-<number>``: a statement or equation of the report keeps the report's
  number: ``report-lemma-4-1`` is Lemma 4.1, ``report-algorithm-3`` Algorithm 3,
  ``report-eq-9`` equation (9);
- ``book-<kind>-<number>``: the book's own statements and equations are numbered so that
  they cannot be mistaken for the report's: ``book-proposition-4-a`` is Proposition 4.A,
  ``book-lemma-a-1`` Lemma A.1, ``book-eq-a-2`` equation (A.2).

Everything else keeps Sphinx's numbering, and so do figures and tables whatever their
label: they are numbered by the book's chapters (Fig. 5.2 is chapter 5's second figure;
the report's Figure 2 recomputed is one of them, and its caption says so), so that a
chapter never mixes "Fig. 1" with "Fig. 5.3". ``<kind>`` must be the statement's type
(``eq`` for equations), and two items of one type may not share a number; either mistake
is a build warning (an error under ``-W``).
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Numbered by the book's chapters even when their label names the report.
BOOK_NUMBERED = frozenset({"figure", "table", "code-block"})

LABEL = re.compile(r"^(?:equation-)?(report|book)-([a-z]+)-([0-9a-z]+(?:-[0-9a-z]+)*)$")


def _number(parts: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p.upper() for p in parts.split("-"))


def renumber(app: Sphinx, env: BuildEnvironment) -> list[str]:
    seen: dict[tuple[str, tuple], str] = {}
    for docname, figtypes in env.toc_fignumbers.items():
        for figtype, ids in figtypes.items():
            for node_id in list(ids):
                match = LABEL.match(node_id)
                if not match or figtype in BOOK_NUMBERED:
                    continue
                origin, kind, number = match.groups()
                expected = "displaymath" if kind == "eq" else kind
                if figtype != expected:
                    logger.warning(f"report_numbers: label {node_id!r} in {docname} names a "
                                   f"{kind!r} but marks a {figtype!r}")
                    continue
                ids[node_id] = _number(number)
                key = (figtype, ids[node_id])
                if key in seen and seen[key] != f"{docname}#{node_id}":
                    logger.warning(f"report_numbers: {figtype} {'.'.join(map(str, ids[node_id]))} "
                                   f"is used twice: {seen[key]} and {docname}#{node_id}")
                seen[key] = f"{docname}#{node_id}"
    return []


def setup(app: Sphinx) -> dict:
    # after sphinx.environment.collectors.toctree has assigned its numbers (priority 500)
    app.connect("env-get-updated", renumber, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
