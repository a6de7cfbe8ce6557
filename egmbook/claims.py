r"""One way to state a checked claim of the report.

Every check in the book ends in a call of :func:`check`. It

- raises :class:`CheckFailed` (an :class:`AssertionError`) when the check does not hold,
  so a failing check fails the notebook's execution and nbval loudly;
- otherwise shows a wrapped badge that tells three outcomes apart: the check *confirms
  the report*, *corrects the report* (the report is wrong; the badge links to the entry
  on the errata page), or goes *beyond the report* (a statement of the book's own);
- has a stable plain-text form (compared by nbval) and an HTML form (shown in the book
  and in Jupyter), both free of object addresses and timings;
- records the claim, the outcome and a stable label in the output's metadata, from which
  :func:`collect_checks` rebuilds the book's table of claims and checks.

Outside IPython (scripts, tests) the plain-text form is printed.

Examples
--------
>>> from egmbook.claims import CheckFailed, check
>>> check(2 + 2 == 4, claim="Lemma 2.3", label="doc-example", outcome="confirms",
...       statement="Scaling a Gaussian scales its mean and standard deviation.")
[confirms the report] Lemma 2.3: Scaling a Gaussian scales its mean and standard deviation.
>>> try:
...     check(False, claim="eq. (99)", label="doc-fail", outcome="confirms", statement="x")
... except CheckFailed as failure:
...     print(failure)
check 'doc-fail' failed: eq. (99): x
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from egmbook.display import _math

__all__ = ["OUTCOMES", "Check", "CheckFailed", "check", "collect_checks", "report_items"]

Outcome = Literal["confirms", "corrects", "beyond"]

#: The outcomes a check can have, with the words the badge shows.
OUTCOMES: dict[str, str] = {
    "confirms": "confirms the report",
    "corrects": "corrects the report",
    "beyond": "beyond the report",
}

#: Key of the output metadata that carries a check's record.
METADATA_KEY = "egmlib_check"

#: Page (relative to a chapter) that holds the errata entries.
ERRATA_PAGE = "errata.html"

_COLOURS = {  # badge background, border; readable on white, distinct without colour too
    "confirms": ("#e6f4ea", "#1e7b34"),
    "corrects": ("#fdecea", "#b3261e"),
    "beyond": ("#e8f0fe", "#1a56b0"),
}
_SYMBOLS = {"confirms": "\u2713", "corrects": "\u2717", "beyond": "+"}
_LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class CheckFailed(AssertionError):
    """A check of the book did not hold."""


@dataclass(frozen=True)
class Check:
    """The record of one check that held.

    Attributes
    ----------
    claim : str
        The item checked: the report's own number (``"Lemma 4.1"``, ``"eq. (12)"``,
        ``"Figure 2"``) or the book's (``"Proposition 4.A"``).
    label : str
        Stable identifier of the check; the badge carries the HTML anchor
        ``check-<label>``.
    outcome : str
        What the check shows about the report: ``"confirms"``, ``"corrects"`` or
        ``"beyond"``.
    statement : str
        What was checked, one or two sentences; inline math between ``$...$``.
    evidence : str
        The numbers behind the verdict (may be empty).
    erratum : str
        Anchor of the errata entry (``"corrects"`` only, else empty).
    """

    claim: str
    label: str
    outcome: str
    statement: str
    evidence: str = ""
    erratum: str = ""

    @property
    def text(self) -> str:
        """The plain-text form (one line per part; what nbval compares)."""
        head = f"[{OUTCOMES[self.outcome]}"
        head += f": see erratum '{self.erratum}']" if self.erratum else "]"
        lines = [f"{head} {self.claim}: {self.statement}"]
        if self.evidence:
            lines.append(f"    {self.evidence}")
        return "\n".join(lines)

    @property
    def html(self) -> str:
        """The HTML badge; math between ``$...$`` becomes ``\\(...\\)`` for MathJax."""
        bg, border = _COLOURS[self.outcome]
        badge = (
            f'<span class="egm-check-badge" style="display:inline-block;font-weight:600;'
            f'font-size:0.8em;letter-spacing:0.02em;text-transform:uppercase;color:{border};'
            f'margin-right:0.5em">{_SYMBOLS[self.outcome]} {OUTCOMES[self.outcome]}</span>'
        )
        parts = [
            f'<div class="egm-check egm-check-{self.outcome} mathjax_process" '
            f'id="check-{self.label}" style="background:{bg};border-left:4px solid {border};'
            f'padding:0.45em 0.8em;margin:0.3em 0;border-radius:3px;white-space:normal;'
            f'overflow-wrap:anywhere;line-height:1.45">',
            f'{badge}<strong class="egm-check-claim">{_math(self.claim)}</strong>',
            f'<div class="egm-check-statement">{_math(self.statement)}</div>',
        ]
        if self.evidence:
            parts.append(
                f'<div class="egm-check-evidence" style="font-size:0.9em;color:#444">'
                f"{_math(self.evidence)}</div>"
            )
        if self.erratum:
            parts.append(
                f'<div class="egm-check-erratum" style="font-size:0.9em"><a href="'
                f'{ERRATA_PAGE}#{self.erratum}">The erratum on the errata page</a></div>'
            )
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None):  # noqa: ANN001, ANN202
        return {"text/plain": self.text, "text/html": self.html}, {METADATA_KEY: asdict(self)}


def _text_arg(name: str, value: object, *, required: bool) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {name}={value!r} (type {type(value).__name__})")
    value = " ".join(value.split())
    if required and not value:
        raise ValueError(f"{name} must not be empty, got {name}={value!r}")
    return value


def check(
    ok: bool | np.bool_,
    *,
    claim: str,
    label: str,
    outcome: Outcome,
    statement: str,
    evidence: str = "",
    erratum: str = "",
) -> None:
    """State a checked claim of the report (or the book's own): raise if ``ok`` is false,
    else show its badge.

    Parameters
    ----------
    ok : bool
        The outcome of an explicit comparison (``sympy.simplify(a - b) == 0``, a
        tolerance against an independent computation, ...). A Python or numpy bool;
        anything else (an array, a number) is a TypeError, so that a check never passes
        by truthiness.
    claim, label, outcome, statement, evidence, erratum
        See :class:`Check`. ``outcome="corrects"`` requires ``erratum`` (the anchor of
        the errata entry); the other outcomes forbid it. ``label`` is lower-case
        letters, digits and hyphens.

    Raises
    ------
    CheckFailed
        If ``ok`` is false; the message names the label, the claim and the statement.
    """
    if not isinstance(ok, (bool, np.bool_)):
        raise TypeError(f"ok must be a bool, got ok={ok!r} (type {type(ok).__name__})")
    claim = _text_arg("claim", claim, required=True)
    label = _text_arg("label", label, required=True)
    statement = _text_arg("statement", statement, required=True)
    evidence = _text_arg("evidence", evidence, required=False)
    erratum = _text_arg("erratum", erratum, required=False)
    outcome = _text_arg("outcome", outcome, required=True)
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got outcome={outcome!r}")
    if not _LABEL.match(label):
        raise ValueError(
            f"label must be lower-case letters, digits and hyphens, got label={label!r}")
    if outcome == "corrects" and not erratum:
        raise ValueError("erratum must name the errata entry when outcome='corrects', got ''")
    if outcome != "corrects" and erratum:
        raise ValueError(f"erratum is only for outcome='corrects', got outcome={outcome!r}")
    if not bool(ok):
        raise CheckFailed(f"check {label!r} failed: {claim}: {statement}"
                          + (f" ({evidence})" if evidence else ""))
    record = Check(claim=claim, label=label, outcome=outcome, statement=statement,
                   evidence=evidence, erratum=erratum)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(record)
    else:
        print(record.text)


def collect_checks(directory: str | Path) -> list[dict[str, str]]:
    """The checks stored in the executed notebooks of a directory, by file name.

    Each record is the :class:`Check` as a dict plus ``"notebook"`` (the file's stem),
    read from the metadata that :func:`check` attaches to its output. A notebook that
    was not executed contributes nothing. The book's table of the report's claims and
    their checks (every numbered item of the report, Sections 2-7 and Appendix A) is
    built from this list, not written by hand.
    """
    if not isinstance(directory, (str, Path)):
        raise TypeError(f"directory must be a str or Path, got directory={directory!r} "
                        f"(type {type(directory).__name__})")
    folder = Path(directory)
    if not folder.is_dir():
        raise ValueError(f"directory must be an existing folder, got directory={str(directory)!r}")
    out: list[dict[str, str]] = []
    for path in sorted(folder.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        for cell in cells:
            for output in cell.get("outputs", []):
                record = output.get("metadata", {}).get(METADATA_KEY)
                if record:
                    out.append({**record, "notebook": path.stem})
    return out


_NAMED = re.compile(r"\b(Lemma|Theorem|Corollary|Algorithm|Figure|Definition)s?\s+(\d+(?:\.\d+)?)"
                    r"((?:\s*(?:,|and|-|\u2013)\s*\d+(?:\.\d+)?)*)")
_EQS = re.compile(r"\beqs?\.\s*((?:\(\d+\)(?:\s*(?:,|and|-|\u2013)\s*)?)+)")


def report_items(claim: str) -> list[str]:
    """The report's numbered items (Lemma 4.1, eq. (9), ...) that a check's ``claim`` names,
    in canonical form.

    ``"eq. (9)"`` gives ``["eq. (9)"]``; ``"eqs. (18)-(22)"`` the five equations;
    ``"eqs. (12), (14)"`` two; ``"Lemma 4.1 and eq. (16)"`` both; ``"Appendix A"``
    itself. The book's own statements (``"Proposition 4.A"``) name none. The book's
    coverage table counts a report item as checked when some check names it.

    >>> report_items("Theorem 4 and eqs. (18)-(20), (24)")
    ['Theorem 4', 'eq. (18)', 'eq. (19)', 'eq. (20)', 'eq. (24)']
    """
    if not isinstance(claim, str):
        raise TypeError(f"claim must be a str, got type {type(claim).__name__}")
    items: list[str] = []
    for kind, first, rest in _NAMED.findall(claim):
        numbers = [first] + re.findall(r"\d+(?:\.\d+)?", rest)
        if "-" in rest or "\u2013" in rest:  # a range of whole numbers: Theorems 1-3
            lo, hi = int(float(numbers[0])), int(float(numbers[-1]))
            numbers = [str(k) for k in range(lo, hi + 1)]
        items += [f"{kind} {n}" for n in numbers]
    for group in _EQS.findall(claim):
        tokens = re.findall(r"\((\d+)\)|(-|\u2013)", group)
        numbers: list[int] = []
        pending_range = False
        for number, dash in tokens:
            if dash:
                pending_range = True
            elif pending_range and numbers:
                numbers += list(range(numbers[-1] + 1, int(number) + 1))
                pending_range = False
            else:
                numbers.append(int(number))
        items += [f"eq. ({n})" for n in numbers]
    if re.search(r"\bAppendix A\b", claim):
        items.append("Appendix A")
    return list(dict.fromkeys(items))
