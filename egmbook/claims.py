r"""One way to state a checked claim of the report.

Every check in the book ends in a call of :func:`check`. It

- raises :class:`CheckFailed` (an :class:`AssertionError`) when the check does not hold,
  so a failing check fails the notebook's execution and nbval loudly;
- otherwise shows a badge with the verdict in one word, in the colour the word names: the
  claim *holds* (green ✓: the check confirms the report, or a statement of the book's own)
  or is *corrected* (red ✎: the report is wrong; the badge links to the entry on the
  errata page), the words and colours of the landing page's verdicts
  (``_ext/verdicts.py``);
- has a stable plain-text form (compared by nbval) and an HTML form (shown in the book
  and in Jupyter), both free of object addresses and timings;
- records the claim, the outcome and a stable label in the output's metadata, from which
  :func:`collect_checks` rebuilds the book's table of claims and checks.

A statement carries its check as a tag: with ``tag=True`` the check is not shown where it
is computed but glued (myst-nb) under its label, and the page pastes it as a one-line tag
(the verdict's chip, then "Checked:" and the evidence) at the foot of the statement, so
that the statement is made once, with its check beside it, and never repeated as a
"Check." paragraph. In a numbered box (the book's Observation 8.B, Proposition 4.A)::

    ```{prf:observation} ...
    :label: book-observation-8-b
    The statement, with its headline number.

    :::{glue} ch8-check-q1
    :::
    ```

or after the paragraph that makes the statement, the same ``:::{glue} label`` block. The
badge (``tag=False``, the default) is for a check shown in its cell, with its statement.

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
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, TypedDict, TypeGuard

import numpy as np

from egmbook.display import math_html
from egmlib import validation as _v

__all__ = ["OUTCOMES", "VERDICT_COLOURS", "VERDICT_WORDS", "Check", "CheckFailed", "check", "checks_by_section",
           "collect_checks", "errata_backing", "readable", "report_items"]

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

#: The verdict a check's chip shows, in the words of the landing page's verdicts
#: (``{verdict}`holds```): a check that confirms the report, or the book's own statement
#: that its check confirms, *holds*; a claim the check corrects is *corrected*. The claim's
#: number tells the report's claims (Lemma 4.1) from the book's (Proposition 4.A), and the
#: plain text (what nbval compares) keeps the outcome's words (``OUTCOMES``).
VERDICT_WORDS: dict[str, str] = {"confirms": "holds", "corrects": "corrected", "beyond": "holds"}

#: Colour of each verdict word (text and border, background), those of ``_static/egm.css``'s
#: ``span.egm-verdict-<word>``; the symbol tells them apart without colour.
VERDICT_COLOURS: dict[str, tuple[str, str]] = {"holds": ("#1e7b34", "#e6f4ea"), "corrected": ("#b3261e", "#fdecea")}
_SYMBOLS = {"holds": "\u2713", "corrected": "\u270e"}
_LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")

# Labels used by the checks of this run (this kernel or process): label -> (claim,
# statement).  A label names one check; reusing it for another check is an error.
_USED_LABELS: dict[str, tuple[str, str]] = {}


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
    def verdict(self) -> str:
        """The verdict word of the chip, ``holds`` or ``corrected`` (``VERDICT_WORDS``)."""
        return VERDICT_WORDS[self.outcome]

    def _chip(self) -> str:
        word = self.verdict
        colour, background = VERDICT_COLOURS[word]
        return (f'<span class="egm-check-chip egm-check-chip-{word}" title="{OUTCOMES[self.outcome]}" '
                f'style="display:inline-block;background:{background};color:{colour};border:1px solid {colour};'
                f'border-radius:3px;padding:0 0.4em;margin-right:0.5em;font-weight:600;font-size:0.9em;'
                f'line-height:1.5;white-space:nowrap">{_SYMBOLS[word]} {word}</span>')

    def _erratum_link(self, text: str) -> str:
        return f'<a class="egm-check-erratum" href="{ERRATA_PAGE}#{self.erratum}">{text}</a>'

    @property
    def html(self) -> str:
        """The HTML badge, with the verdict's chip and the claim, the statement, the evidence
        and the link to the erratum; math between ``$...$`` becomes ``\\(...\\)`` for
        MathJax."""
        colour, _ = VERDICT_COLOURS[self.verdict]
        parts = [
            f'<div class="egm-check egm-check-{self.outcome} mathjax_process" '
            f'id="check-{self.label}" style="background:#f7f8f9;border-left:4px solid {colour};'
            f'padding:0.45em 0.8em;margin:0.3em 0;border-radius:3px;white-space:normal;'
            f'overflow-wrap:anywhere;line-height:1.45">',
            f'{self._chip()}<strong class="egm-check-claim">{math_html(self.claim)}</strong>',
            f'<div class="egm-check-statement">{math_html(self.statement)}</div>',
        ]
        if self.evidence:
            parts.append(
                f'<div class="egm-check-evidence" style="font-size:0.9em;color:#333">'
                f"Checked: {math_html(self.evidence)}</div>"
            )
        if self.erratum:
            parts.append(f'<div style="font-size:0.9em">{self._erratum_link("The erratum")}</div>')
        parts.append("</div>")
        return "".join(parts)

    @property
    def tag_html(self) -> str:
        """The tag form, for the foot of the statement (its box, or its paragraph), with the
        verdict's chip, then the evidence, and the link to the erratum."""
        parts = [
            f'<div class="egm-check-tag egm-check-{self.outcome} mathjax_process" id="check-{self.label}" '
            f'style="margin:0.5em 0 0;padding-top:0.35em;border-top:1px solid rgba(0,0,0,0.12);'
            f'font-size:0.88em;line-height:1.45;overflow-wrap:anywhere">',
            self._chip(),
        ]
        if self.evidence:
            parts.append(f'<span class="egm-check-evidence" style="color:#333">Checked: '
                         f'{math_html(self.evidence)}</span>')
        if self.erratum:
            parts.append(" " + self._erratum_link("erratum"))
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None):  # noqa: ANN001, ANN202
        return {"text/plain": self.text, "text/html": self.html}, {METADATA_KEY: asdict(self)}


class _Tag:
    """A check shown as the tag of its statement's box (``check(..., tag=True)``): the same
    plain text and metadata as the badge, the tag as HTML."""

    def __init__(self, record: Check) -> None:
        self.record = record

    def _repr_mimebundle_(self, include=None, exclude=None):  # noqa: ANN001, ANN202
        return {"text/plain": self.record.text, "text/html": self.record.tag_html}, {
            METADATA_KEY: asdict(self.record)}


def _is_outcome(text: str) -> TypeGuard[Outcome]:
    """Whether ``text`` is one of the outcomes (:data:`OUTCOMES`)."""
    return text in OUTCOMES


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
    tag: bool = False,
) -> None:
    """State a checked claim of the report (or the book's own): raise if ``ok`` is false,
    else show its badge (or, with ``tag``, glue its tag for the statement's box).

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
        letters, digits and hyphens, and unique: a second check with the same label and
        another claim or statement in the same run is a ValueError. The badge states the
        claim, the verdict and the evidence in words; write numbers in ``evidence`` with
        :func:`readable` (rounded, no ``e-03``) and with their units.
    tag : bool
        The claim is a statement that the page sets out in a numbered box (an observation,
        a proposition of the book): the check is not shown in its cell but glued under
        ``label`` (myst-nb ``glue``), for the box to paste as its tag with
        ``:::{glue} <label>``. The record, its plain text and what nbval compares are
        those of the badge.

    Raises
    ------
    CheckFailed
        If ``ok`` is false; the message names the label, the claim and the statement.
    """
    if not isinstance(ok, (bool, np.bool_)):
        raise TypeError(f"ok must be a bool, got ok={ok!r} (type {type(ok).__name__})")
    if not isinstance(tag, bool):
        raise TypeError(f"tag must be a bool, got tag={tag!r} (type {type(tag).__name__})")
    claim = _text_arg("claim", claim, required=True)
    label = _text_arg("label", label, required=True)
    statement = _text_arg("statement", statement, required=True)
    evidence = _text_arg("evidence", evidence, required=False)
    erratum = _text_arg("erratum", erratum, required=False)
    outcome_text = _text_arg("outcome", outcome, required=True)
    if not _is_outcome(outcome_text):
        raise ValueError(f"outcome must be one of {sorted(OUTCOMES)}, got outcome={outcome_text!r}")
    outcome = outcome_text
    if not _LABEL.match(label):
        raise ValueError(
            f"label must be lower-case letters, digits and hyphens, got label={label!r}")
    if outcome == "corrects" and not erratum:
        raise ValueError("erratum must name the errata entry when outcome='corrects', got ''")
    if outcome != "corrects" and erratum:
        raise ValueError(f"erratum is only for outcome='corrects', got outcome={outcome!r}")
    used = _USED_LABELS.get(label)
    if used is not None and used != (claim, statement):
        raise ValueError(
            f"label {label!r} is already used in this run by the check of {used[0]!r} "
            f"({used[1][:60]!r}): every check needs a label of its own (re-running one cell "
            "after changing its claim or statement needs a fresh kernel)")
    if not bool(ok):
        raise CheckFailed(f"check {label!r} failed: {claim}: {statement}"
                          + (f" ({evidence})" if evidence else ""))
    _USED_LABELS[label] = (claim, statement)
    record = Check(claim=claim, label=label, outcome=outcome, statement=statement,
                   evidence=evidence, erratum=erratum)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython ships with the book's environment
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is not None and tag and hasattr(shell, "kernel"):  # a notebook: glued for its box
        from myst_nb import glue  # the book's toolchain, only where a tag is glued

        glue(label, _Tag(record), display=False)
    elif shell is not None and not tag:
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
        equations: list[int] = []
        pending_range = False
        for number, dash in tokens:
            if dash:
                pending_range = True
            elif pending_range and equations:
                equations += list(range(equations[-1] + 1, int(number) + 1))
                pending_range = False
            else:
                equations.append(int(number))
        items += [f"eq. ({n})" for n in equations]
    if re.search(r"\bAppendix A\b", claim):
        items.append("Appendix A")
    return list(dict.fromkeys(items))


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def readable(value: float, digits: int = 2, unit: str = "") -> str:
    """A number for a badge's evidence, as a reader writes it: ``digits`` significant
    digits, no exponent between 0.001 and one million (``0.0041``, ``2100``), else
    ``4.1 × 10⁻⁵``; a minus sign, and ``unit`` after a thin space (``"12 %"``).

    >>> print(readable(-4.13e-03), readable(2.06e+03, 3), readable(3.2e-10))
    −0.0041 2060 3.2 × 10⁻¹⁰

    An integer of at most ``digits`` significant digits is exact, and keeps no trailing zeros:

    >>> print(readable(10**6), readable(2_500_000), readable(1_234_567), readable(1e6))
    10⁶ 2.5 × 10⁶ 1.2 × 10⁶ 1.0 × 10⁶
    >>> readable(12.34, 2, "%") == "12\N{THIN SPACE}%"
    True
    """
    x = _v.check_real("value", value)
    if not math.isfinite(x):
        raise ValueError(f"value must be finite (a badge states a number), got value={value!r}")
    digits = _v.check_count("digits", digits, maximum=17)
    if not isinstance(unit, str):
        raise TypeError(f"unit must be a str, got unit={unit!r}")
    if x == 0:
        text = "0"
    elif isinstance(value, (int, np.integer)) and abs(x) < 1e6:
        text = str(int(value))
    elif isinstance(value, (int, np.integer)) and len(lead := str(abs(int(value))).rstrip("0")) <= digits:
        # an exact integer of at most ``digits`` significant digits: its digits, no trailing zeros
        power = "10" + str(len(str(abs(int(value)))) - 1).translate(_SUPERSCRIPT)
        mantissa = lead if len(lead) == 1 else f"{lead[0]}.{lead[1:]}"
        text = ("\u2212" if value < 0 else "") + (power if mantissa == "1" else f"{mantissa} \u00d7 {power}")
    else:
        mantissa, exp = f"{x:.{digits - 1}e}".split("e")  # exact decimal rounding, any magnitude
        exponent = int(exp)
        if -3 <= exponent < 6:
            text = f"{float(f'{x:.{digits - 1}e}'):.{max(digits - 1 - exponent, 0)}f}"
        else:
            text = f"{mantissa} \u00d7 10" + str(exponent).translate(_SUPERSCRIPT)
        text = text.replace("-", "\u2212")
    return f"{text}\u2009{unit}" if unit else text


def _section_key(section: str) -> tuple:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in section.split("."))


class SectionRow(TypedDict):
    """One row of the coverage table (:func:`checks_by_section`)."""

    section: str | None  #: the report's section; None for the checks that name no item of the report
    items: int  #: numbered items of the section
    checked: int  #: those with a check
    checks: int  #: checks counted in the section


def checks_by_section(records: list[dict[str, str]], items: list[dict[str, str]]) -> list[SectionRow]:
    """The coverage table: for each section of the report, its numbered items, how many have
    a check, and the checks that name them, so that the checks column adds up.

    ``records`` are :func:`collect_checks`' records, ``items`` the rows of
    ``data/report_items.csv`` (``item``, ``section``). A check naming items of several
    sections is counted once, in the first of them (report order); a check that names no
    item of the report (a statement of the book's own) is counted in a last row with
    section ``None``. The ``checks`` column therefore sums to ``len(records)``.

    >>> items = [{"item": "Lemma 4.1", "section": "4"}, {"item": "eq. (3)", "section": "2"}]
    >>> recs = [{"claim": "Lemma 4.1 and eq. (3)"}, {"claim": "Lemma 4.1"}, {"claim": "Proposition 4.A"}]
    >>> [(r["section"], r["items"], r["checked"], r["checks"]) for r in checks_by_section(recs, items)]
    [('2', 1, 1, 1), ('4', 1, 1, 1), (None, 0, 0, 1)]
    """
    _check_records("records", records, keys=("claim",))
    _check_records("items", items, keys=("item", "section"))
    section_of = {row["item"]: row["section"] for row in items}
    order = sorted({row["section"] for row in items}, key=_section_key)
    rows = {sec: SectionRow(section=sec, items=0, checked=0, checks=0) for sec in order}
    own = SectionRow(section=None, items=0, checked=0, checks=0)
    checked_items = set()
    for rec in records:
        named = [i for i in report_items(rec["claim"]) if i in section_of]
        checked_items.update(named)
        if named:
            first = min((section_of[i] for i in named), key=_section_key)
            rows[first]["checks"] += 1
        else:
            own["checks"] += 1
    for row in items:
        rows[row["section"]]["items"] += 1
        rows[row["section"]]["checked"] += row["item"] in checked_items
    return [*rows.values(), own]


def _check_records(name: str, rows: object, *, keys: tuple[str, ...]) -> None:
    """``rows`` must be a list of dicts holding ``keys`` (a TypeError or ValueError naming ``name``)."""
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"{name} must be a list of dicts (one per row), got {type(rows).__name__}")
    missing = sorted({k for r in rows for k in keys if k not in r})
    if missing:
        raise ValueError(f"{name} must give every row the keys {list(keys)}; missing {missing}")


_ERRATUM = re.compile(r"^\((err-[a-z0-9-]+)\)=\s*$")


def errata_backing(records: list[dict[str, str]], errata: str) -> list[dict]:
    r"""How the errata page's entries stand against the correcting badges: for each rank
    (a ``## `` heading of the errata page, in order), its entries (``(err-...)=`` anchors)
    and how many of them a badge that *corrects the report* links to.

    ``errata`` is the text of ``chapters/errata.md``. Some entries have no badge of their
    own: typographical and notational slips found by reading, shown on the errata page
    with the report's text; several badges may link to one entry, and one entry may be
    backed by a badge of another outcome (a check that confirms the corrected form).

    >>> text = "## Results\n(err-a)=\n(err-b)=\n## Cosmetic\n(err-c)=\n"
    >>> recs = [{"outcome": "corrects", "erratum": "err-a"}, {"outcome": "corrects", "erratum": "err-a"}]
    >>> [(r["rank"], r["entries"], r["with_badge"]) for r in errata_backing(recs, text)]
    [('Results', 2, 1), ('Cosmetic', 1, 0)]
    """
    _check_records("records", records, keys=())
    if not isinstance(errata, str):
        raise TypeError(f"errata must be the text of the errata page (a str), got {type(errata).__name__}")
    linked = {r.get("erratum") for r in records if r.get("outcome") == "corrects" and r.get("erratum")}
    ranks: list[dict] = []
    for line in errata.splitlines():
        if line.startswith("## "):
            ranks.append({"rank": line[3:].strip(), "entries": 0, "with_badge": 0, "anchors": []})
            continue
        match = _ERRATUM.match(line.strip())
        if match and ranks:
            ranks[-1]["entries"] += 1
            ranks[-1]["with_badge"] += match.group(1) in linked
            ranks[-1]["anchors"].append(match.group(1))
    return [r for r in ranks if r["entries"]]
