"""Tests of egmbook.coverage_page: the coverage page's chapter labels and its linked item table.

What is checked, and why it could fail: numbered parts count chapters and their sections share the
chapter's label, appendices get letters in order, other pages none; the item table has one row per
report item, says what the checks found, and links each check to its badge (its HTML anchors and
the plain text agree, and an item without a check says so).
"""

from __future__ import annotations

from egmbook.coverage_page import chapter_numbers, item_table

TOC = {"parts": [
    {"caption": "front", "chapters": [{"file": "chapters/index"}]},
    {"numbered": True, "chapters": [{"file": "chapters/02_a", "sections": [{"file": "chapters/02b"}]},
                                    {"file": "chapters/03_c"}]},
    {"chapters": [{"file": "chapters/appendix_a_x"}, {"file": "chapters/appendix_b_y"}, {"file": "chapters/coverage"}]},
]}


def test_chapter_numbers():
    numbers = chapter_numbers(TOC)
    assert numbers == {"02_a": "ch. 1", "02b": "ch. 1", "03_c": "ch. 2", "appendix_a_x": "App. A",
                       "appendix_b_y": "App. B"}


def test_item_table_links_every_check():
    items = [{"item": "Lemma 4.1", "section": "4"}, {"item": "eq. (9)", "section": "4"},
             {"item": "Theorem 1", "section": "3"}]
    records = [{"claim": "Lemma 4.1 and eq. (9)", "notebook": "02_a", "label": "ch1-check-x", "outcome": "confirms"},
               {"claim": "Lemma 4.1", "notebook": "appendix_a_x", "label": "appa-check-y", "outcome": "corrects"}]
    shown = item_table(items, records, chapter_numbers(TOC), caption="Items.", label="cov-tab-test")
    bundle = shown._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    assert html.count("<a href=") == 3
    assert ('href="02_a.html#check-ch1-check-x">ch. 1 \u2713</a>,<br>'
            '<a href="appendix_a_x.html#check-appa-check-y"') in html
    assert "confirmed, corrected" in text and "App. A \u270e" in text and "@@" not in text
    assert "Theorem 1" in text and "none" in text
