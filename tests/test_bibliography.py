"""The bibliography shows names as they are spelled: accents in UTF-8, not LaTeX commands.

pybtex prints a LaTeX accent such as ``{\\'e}`` as the text ``\\'e`` ("Pr\\'ekopa") in the
bibliography and in citations, so ``references.bib`` writes accented letters in UTF-8.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "references.bib"
PAGE = ROOT / "_build" / "html" / "chapters" / "bibliography.html"
# \'e, {\"u}, \`a, \^o, \~n, \=a, \.z, \u{g}, \v{s}, \H{o}, \c{c}, \k{a}, \r{a}, \ss, \o, \l ...
ACCENT = re.compile(r"""\\(?:['"`^~=.]\s*\{?[A-Za-z]|[uvHckbdrt]\{[A-Za-z]\}|(?:ss|o|O|l|L|ae|AE|aa|AA)\b)""")


def _outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", "", text)


def test_references_bib_spells_accents_in_utf8():
    text = BIB.read_text(encoding="utf-8")
    found = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)
             if ACCENT.search(_outside_math(line))]
    assert not found, f"LaTeX accents in references.bib (write the letter in UTF-8): {found[:5]}"
    assert "Prékopa" in text


def test_the_accent_pattern_sees_latex_accents():
    for tex in (r"Pr{\'e}kopa", r'Aum{\"u}ller', r"\v{S}", r"Erd\H{o}s", r"{\ss}"):
        assert ACCENT.search(tex), tex
    assert not ACCENT.search(_outside_math(r"$\ell_2$ and $\chi^2$ variables"))


@pytest.mark.skipif(not PAGE.is_file(), reason=f"{PAGE} not built: run the build (README, command 1)")
def test_built_bibliography_shows_the_accents():
    text = PAGE.read_text(encoding="utf-8")
    assert "Prékopa" in text and "Aumüller" in text
    assert not re.search(r"\\['\"`^~]", text), "a LaTeX accent is printed on the bibliography page"
