"""Author-year labels for the bibliography, so the book's citations never clash with the
report's bracketed numbers ([15] in the report is Pagh and Lebeda; here it would be
whatever the book's 15th entry happened to be).

Citations in the text use sphinxcontrib-bibtex's author-year referencing style with round
brackets, registered here as ``author_year_round`` (``bibtex_reference_style`` in
``_config.yml``): ``{cite:t}`` gives "Poulsen (2023)", ``{cite}`` "(Poulsen, 2023)".
The bibliography page lists each entry under the same author-year label, using the
pybtex formatting style ``authoryear`` registered here: pybtex's ``plain`` style with
entries sorted by author, year and title, and labels "Poulsen 2023" ("Dwork et al.
2014" beyond two authors; "a"/"b" suffixes where two labels would be equal).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from sphinx.application import Sphinx
from sphinxcontrib.bibtex.plugin import register_plugin as register_bibtex_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle


def _surname(person) -> str:  # noqa: ANN001 - pybtex Person
    return " ".join(person.prelast_names + person.last_names).replace("{", "").replace("}", "")


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Surname Year", "Surname and Surname Year", "Surname et al. Year"."""

    def format_labels(self, sorted_entries):  # noqa: ANN001, ANN201 - pybtex API
        base = [self._label(entry) for entry in sorted_entries]
        counts = Counter(base)
        seen: Counter = Counter()
        for label in base:
            if counts[label] > 1:
                seen[label] += 1
                yield f"{label}{chr(ord('a') + seen[label] - 1)}"
            else:
                yield label

    @staticmethod
    def _label(entry) -> str:  # noqa: ANN001
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        if not people:
            key = entry.fields.get("key") or entry.fields.get("organization") or entry.key
            names = str(key).replace("{", "").replace("}", "")
        elif len(people) == 1:
            names = _surname(people[0])
        elif len(people) == 2:
            names = f"{_surname(people[0])} and {_surname(people[1])}"
        else:
            names = f"{_surname(people[0])} et al."
        year = entry.fields.get("year", "n.d.")
        return f"{names} {year}"


class AuthorYearStyle(PlainStyle):
    """pybtex's plain style with author-year labels, sorted by author, year, title."""

    default_label_style = "authoryear"
    default_sorting_style = "author_year_title"


def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclass
class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author-year citations in round brackets: "(Poulsen, 2023)",
    "Dwork and Roth (2014)"."""

    bracket_parenthetical: BracketStyle = field(default_factory=_round)
    bracket_textual: BracketStyle = field(default_factory=_round)
    bracket_author: BracketStyle = field(default_factory=_round)
    bracket_label: BracketStyle = field(default_factory=_round)
    bracket_year: BracketStyle = field(default_factory=_round)


def setup(app: Sphinx) -> dict:
    register_bibtex_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round",
                           RoundAuthorYearReferenceStyle)
    register_plugin("pybtex.style.labels", "authoryear", AuthorYearLabelStyle)
    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
