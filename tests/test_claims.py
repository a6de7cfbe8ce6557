"""egmbook.claims: the one way the book states a checked claim."""

import json

import numpy as np
import pytest

from egmbook.claims import METADATA_KEY, Check, CheckFailed, check, collect_checks


def test_a_check_that_holds_prints_its_plain_form(capsys):
    check(np.bool_(True), claim="eq. (12)", label="t-ok", outcome="confirms",
          statement="Stationarity gives $b_j^4$.", evidence="max error 0")
    out = capsys.readouterr().out
    assert out == "[confirms the report] eq. (12): Stationarity gives $b_j^4$.\n    max error 0\n"


def test_a_check_that_fails_raises_an_assertion_naming_it():
    with pytest.raises(CheckFailed, match=r"'t-bad' failed: Lemma 4.2: tail bound"):
        check(False, claim="Lemma 4.2", label="t-bad", outcome="confirms", statement="tail bound")
    assert issubclass(CheckFailed, AssertionError)


@pytest.mark.parametrize("ok", [1, 0.0, "True", None, np.array([True]), np.array(True, dtype=object)])
def test_ok_must_be_a_bool_not_something_truthy(ok):
    with pytest.raises(TypeError, match="ok must be a bool"):
        check(ok, claim="x", label="t", outcome="confirms", statement="s")


def test_outcome_erratum_and_label_rules():
    with pytest.raises(ValueError, match="erratum must name"):
        check(True, claim="x", label="t", outcome="corrects", statement="s")
    with pytest.raises(ValueError, match="erratum is only for"):
        check(True, claim="x", label="t", outcome="confirms", statement="s", erratum="err-a")
    with pytest.raises(ValueError, match="outcome must be one of"):
        check(True, claim="x", label="t", outcome="verified", statement="s")
    with pytest.raises(ValueError, match="label must be lower-case"):
        check(True, claim="x", label="Bad Label", outcome="confirms", statement="s")
    with pytest.raises(ValueError, match="statement must not be empty"):
        check(True, claim="x", label="t", outcome="confirms", statement="  ")
    with pytest.raises(TypeError, match="claim must be a str"):
        check(True, claim=4.1, label="t", outcome="confirms", statement="s")


def test_html_form_escapes_text_links_the_erratum_and_marks_math():
    c = Check(claim="eq. (25)", label="t-html", outcome="corrects",
              statement="P[<x> & y] uses $\\|x\\|^2 > C^2$", erratum="err-eq25")
    h = c.html
    assert 'id="check-t-html"' in h and "&lt;x&gt; &amp; y" in h
    assert r"\(\|x\|^2 &gt; C^2\)" in h and 'href="errata.html#err-eq25"' in h
    assert "corrects the report" in h and "mathjax_process" in h
    data, meta = c._repr_mimebundle_()
    assert data["text/plain"] == c.text and meta[METADATA_KEY]["erratum"] == "err-eq25"


def test_collect_checks_reads_the_records_from_executed_notebooks(tmp_path):
    record = {"claim": "Lemma 4.1", "label": "l41", "outcome": "confirms", "statement": "s",
              "evidence": "", "erratum": ""}
    nb = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "metadata": {METADATA_KEY: record}, "data": {}},
        {"output_type": "stream", "text": "x"}]},
        {"cell_type": "markdown", "source": "m"}], "nbformat": 4}
    path = tmp_path / "ch.ipynb"
    path.write_text(json.dumps(nb))
    assert collect_checks(tmp_path) == [{**record, "notebook": "ch"}]
    with pytest.raises(ValueError, match="existing folder"):
        collect_checks(tmp_path / "missing")
    with pytest.raises(TypeError, match="directory must be"):
        collect_checks([path])


def test_report_items_expands_ranges_and_lists_into_canonical_items():
    from egmbook.claims import report_items

    assert report_items("eqs. (18)-(22)") == [f"eq. ({k})" for k in range(18, 23)]
    assert report_items("Lemma 4.1 and eqs. (12), (14)") == ["Lemma 4.1", "eq. (12)", "eq. (14)"]
    assert report_items("Theorems 1-3") == ["Theorem 1", "Theorem 2", "Theorem 3"]
    assert report_items("Appendix A") == ["Appendix A"]
    assert report_items("Proposition 4.A") == [] and report_items("Lemma A.1") == []


def test_the_report_items_file_lists_46_checkable_items():
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "data" / "report_items.csv"
    items = [row["item"] for row in csv.DictReader(path.open())]
    assert len(items) == len(set(items)) == 46
    assert [f"eq. ({k})" for k in range(1, 28)] == [i for i in items if i.startswith("eq.")]


def test_a_label_names_one_check_in_a_run():
    check(True, claim="Lemma 2.3", label="t-unique-label", outcome="confirms", statement="first")
    # the same check again (a cell re-run) is fine
    check(True, claim="Lemma 2.3", label="t-unique-label", outcome="confirms", statement="first")
    with pytest.raises(ValueError, match="already used in this run"):
        check(True, claim="Lemma 2.4", label="t-unique-label", outcome="confirms", statement="another")


def test_readable_numbers_have_no_exponent_notation():
    from egmbook.claims import readable

    assert readable(-4.13e-03) == "\u22120.0041"
    assert readable(2.06e03, 3) == "2060"
    assert readable(99.96) == "100"
    assert readable(7.3e-16) == "7.3 \u00d7 10\u207b\u00b9\u2076"
    assert readable(0) == "0" and readable(12, unit="%") == "12\u2009%"
    assert "e" not in readable(1.23e-7) and "e" not in readable(4.5e8)
    with pytest.raises(TypeError, match="value must be a real number"):
        readable("1.0")
    with pytest.raises(ValueError, match="digits must be"):
        readable(1.0, 0)


def test_a_tag_carries_the_verdict_the_evidence_and_the_erratum():
    c = Check(claim="Observation 8.B", label="t-tag", outcome="corrects", statement="s",
              evidence="ratio $r$ = 1.2", erratum="err-x")
    h = c.tag_html
    assert 'id="check-t-tag"' in h and "egm-check-chip" in h and "corrects the report" in h
    assert r"Checked: ratio \(r\) = 1.2" in h and 'href="errata.html#err-x"' in h
    with pytest.raises(TypeError, match="tag must be a bool"):
        check(True, claim="x", label="t-tag2", outcome="confirms", statement="s", tag=1)


def test_a_tagged_check_outside_ipython_prints_its_plain_form(capsys):
    check(True, claim="Proposition 4.A", label="t-tag3", outcome="beyond", statement="s", tag=True)
    assert capsys.readouterr().out == "[beyond the report] Proposition 4.A: s\n"


@pytest.mark.parametrize(("outcome", "word", "symbol"), [("confirms", "holds", "\u2713"), ("beyond", "holds", "\u2713"),
                                                        ("corrects", "corrected", "\u270e")])
def test_badge_and_tag_show_one_verdict_word(outcome, word, symbol):
    """The chip of a badge and of a tag is one verdict word with its symbol (the plain text
    keeps the outcome's words, which nbval compares), and the words of the outcomes are
    nowhere else in the HTML but the chip's tooltip."""
    import re

    from egmbook.claims import OUTCOMES

    c = Check(claim="Lemma 4.1", label=f"t-chip-{outcome}", outcome=outcome, statement="s", evidence="e",
              erratum="err-a" if outcome == "corrects" else "")
    for h in (c.html, c.tag_html):
        chips = re.findall(r'<span class="egm-check-chip[^"]*"[^>]*>([^<]*)</span>', h)
        assert chips == [f"{symbol} {word}"], chips
        visible = re.sub(r"<[^>]+>", " ", h)
        assert OUTCOMES[outcome] not in visible, visible
    assert c.text.startswith(f"[{OUTCOMES[outcome]}")


def test_chip_colours_are_the_landing_page_verdicts_colours():
    """A check's chip and the landing page's ``{verdict}`` label of the same word have the
    same colours (``_static/egm.css``)."""
    import re
    from pathlib import Path

    from egmbook.claims import VERDICT_COLOURS, VERDICT_WORDS

    css = (Path(__file__).resolve().parent.parent / "_static" / "egm.css").read_text(encoding="utf-8")
    assert set(VERDICT_WORDS.values()) == set(VERDICT_COLOURS)
    for word, (colour, background) in VERDICT_COLOURS.items():
        rule = re.search(r"span\.egm-verdict-" + word + r" \{([^}]*)\}", css)
        assert rule, f"egm.css has no rule for the verdict {word!r}"
        assert f"color: {colour}" in rule.group(1) and f"background: {background}" in rule.group(1), rule.group(1)


def _verdict_extension():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "_ext" / "verdicts.py"
    spec = importlib.util.spec_from_file_location("egm_verdicts_ext", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("word", ["holds", "holds if", "corrected", "refuted", "open"])
def test_verdict_role_takes_the_five_words(word):
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles

    ext = _verdict_extension()
    roles.register_local_role("verdict", ext.verdict_role)
    tree = publish_doctree(f"The claim :verdict:`{word}` here.", settings_overrides={"report_level": 5})
    labels = [n for n in tree.findall() if "egm-verdict" in getattr(n, "get", lambda *_: [])("classes", [])]
    assert len(labels) == 1 and labels[0].astext() == word
    assert labels[0]["classes"] == ["egm-verdict", "egm-verdict-" + word.replace(" ", "-")]


@pytest.mark.parametrize("word", ["confirmed — holds at 7 points", "true", "holds if not", "Holds"])
def test_verdict_role_refuses_other_words(word):
    from docutils.core import publish_doctree
    from docutils.parsers.rst import roles

    ext = _verdict_extension()
    roles.register_local_role("verdict", ext.verdict_role)
    tree = publish_doctree(f"The claim :verdict:`{word}` here.", settings_overrides={"report_level": 5})
    errors = [n for n in tree.findall() if n.tagname == "system_message" and n["level"] >= 3]
    assert errors and "verdict must be one of" in errors[0].astext()
