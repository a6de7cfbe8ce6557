"""egmlib.display: the book's tables and figure style."""

import matplotlib
import numpy as np
import pytest

from egmlib.display import STYLE, table, use_book_style


def test_table_formats_aligns_and_escapes():
    t = table({"name": ["a<b", "c"], "$\\alpha$": [np.float64(0.5), 12.25]},
              formats={"$\\alpha$": "{:.2f}"}, caption="Caption $x$")
    assert t.text.splitlines() == ["Caption x", "name  \\alpha", "a<b     0.50", "c      12.25"]
    assert "a&lt;b" in t.html and r"\(\alpha\)" in t.html and "egm-num" in t.html
    assert t._repr_mimebundle_()["text/plain"] == t.text


def test_long_table_collapses_all_rows_but_keeps_them_in_plain_text():
    t = table({"k": list(range(30))}, head=5)
    assert t.html.count("<tr>") == 1 + 5 + 1 + 30 and "All 30 rows" in t.html
    assert len(t.text.splitlines()) == 31


def test_table_rejects_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        table({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError, match="not in data"):
        table({"a": [1]}, formats={"b": "{}"})
    with pytest.raises(ValueError, match="head must be"):
        table({"a": [1]}, head=0)
    with pytest.raises(TypeError, match="data must be"):
        table([[1, 2]])


def test_book_style_sets_column_width_and_legible_fonts():
    use_book_style()
    rc = matplotlib.rcParams
    assert STYLE.is_file()
    assert rc["figure.figsize"][0] == pytest.approx(6.76)
    sizes = [rc[k] for k in ("xtick.labelsize", "ytick.labelsize", "legend.fontsize", "font.size")]
    assert min(float(s) for s in sizes) >= 9
    matplotlib.rcdefaults()
