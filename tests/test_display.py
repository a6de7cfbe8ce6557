"""egmbook.display: the book's tables and figure style."""

import matplotlib
import numpy as np
import pytest

from egmbook.display import STYLE, glue_values, table, use_book_style


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


def test_palette_png_keeps_the_pixels_in_a_third_of_the_bytes():
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    from egmbook.display import _palette_png

    use_book_style()
    fig, ax = plt.subplots()
    x = np.linspace(0, 1, 200)
    for k in range(6):
        ax.plot(x, np.sin(3 * x + k), label=f"line {k}")
    ax.legend()
    data, size = _palette_png(fig)
    full = io.BytesIO()
    fig.savefig(full, format="png", facecolor="white")
    plt.close(fig)
    im = Image.open(io.BytesIO(data))
    ref = np.asarray(Image.open(full).convert("RGB"), dtype=float)
    assert im.mode == "P" and im.info["dpi"] == pytest.approx((200, 200), abs=0.01)
    assert im.size == (1352, 760) and {k: size[k] for k in ("width", "height")} == {"width": 676, "height": 380}
    assert size["egm_phone"]["width"] == 360  # the phone rendition (test_phone_rendition_...)
    assert len(data) < 0.5 * full.getbuffer().nbytes
    # the same picture: the palette differs from the full-colour pixels by little on average
    assert np.abs(np.asarray(im.convert("RGB"), dtype=float) - ref).mean() < 1.0


def test_glue_values_glues_plain_numbers(monkeypatch):
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, v, display=True: calls.append((name, v, display)))
    out = glue_values({"a": np.float64(1.23456), "n": np.int64(7), "z": np.array(2.5)}, digits=2, prefix="ch9-")
    assert out == {"ch9-a": 1.23, "ch9-n": 7, "ch9-z": 2.5}
    assert calls == [("ch9-a", 1.23, False), ("ch9-n", 7, False), ("ch9-z", 2.5, False)]
    assert all(type(v) in (int, float) for _, v, _ in calls)  # no numpy scalars in the glue store
    assert glue_values({"x": 1 / 3})["x"] == 1 / 3  # no rounding unless asked


def test_glue_values_refuses_bad_input_and_glues_nothing(monkeypatch):
    import myst_nb

    calls = []
    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: calls.append(a))
    with pytest.raises(ValueError, match=r"values\['b'\] must be finite"):
        glue_values({"a": 1.0, "b": float("nan")})
    with pytest.raises(TypeError, match=r"values\['a'\] must be a real number"):
        glue_values({"a": True})
    with pytest.raises(TypeError, match="non-empty strings"):
        glue_values({"": 1.0})
    with pytest.raises(TypeError, match="values must be a mapping"):
        glue_values([("a", 1.0)])
    with pytest.raises(ValueError, match="digits must be an integer >= 0"):
        glue_values({"a": 1.0}, digits=-1)
    assert calls == []


def test_phone_rendition_stacks_the_panels_in_one_narrow_column():
    import matplotlib.pyplot as plt

    from egmbook.display import PHONE_WIDTH_IN, phone_rendition

    use_book_style()
    fig, axes = plt.subplots(2, 2, figsize=(6.76, 6), sharex=True, sharey=True)
    for k, ax in enumerate(axes.flat):
        ax.plot([1, 2, 3], [k, k + 1, k], label=f"series {k}")
        ax.set_title(f"panel {k}")
    axes[0, 0].set_ylabel("error")
    axes[1, 0].set_xlabel("d")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), ncols=4, loc="outside lower center")
    phone = phone_rendition(fig)
    assert phone is not fig and tuple(fig.get_size_inches()) == (6.76, 6)  # the original is untouched
    assert phone.get_size_inches()[0] == pytest.approx(PHONE_WIDTH_IN)
    phone.canvas.draw()
    boxes = [ax.get_position() for ax in phone.axes]
    assert [ax.get_title() for ax in sorted(phone.axes, key=lambda a: -a.get_position().y0)] == [
        f"panel {k}" for k in range(4)], "the panels are not stacked in reading order"
    assert max(b.x1 - b.x0 for b in boxes) > 0.6, "a stacked panel should take the width"
    assert all(ax.get_ylabel() == "error" and ax.get_xlabel() == "d" for ax in phone.axes)
    assert all(t.get_visible() for ax in phone.axes for t in ax.get_xticklabels() if t.get_text())
    assert len(phone.legends) == 1 and phone.legends[0]._ncols == 1
    plt.close(phone)
    plt.close(fig)
    narrow = plt.figure(figsize=(3.2, 3))
    assert phone_rendition(narrow) is None  # already fits a phone
    plt.close(narrow)


def test_save_figure_writes_the_phone_rendition_beside_the_figure(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    from egmbook.display import save_figure

    use_book_style()
    fig, axes = plt.subplots(1, 2)
    save_figure(fig, tmp_path / "f.png")
    plt.close(fig)
    wide, phone = Image.open(tmp_path / "f.png"), Image.open(tmp_path / "f-phone.png")
    assert wide.size[0] == 1352 and phone.size[0] == 720 and phone.size[1] > phone.size[0]


def test_heatmap_colours_ratios_and_keeps_the_numbers():
    from egmbook.display import heatmap

    h = heatmap({"data": ["A", "B", "C"], "ratio": [(0.5, 0.4, 0.6), 1.0, 8.0]}, heat=["ratio"], digits=2,
                key="blue: Algorithm 3 adds less")
    assert h.text.splitlines()[1:] == ["A     0.50 (0.40-0.60)", "B                  1.0",
                                       "C                  8.0", "blue: Algorithm 3 adds less"]
    cells = h.html.split("<td")
    assert "background:#d6604d" not in cells[2] and "background:" in cells[2]  # 0.5: orange, not full
    assert "style=" not in cells[4]  # 1.0: white
    assert "background:#4393c3" in cells[6]  # 8 > saturate 4: full blue
    assert "0.40\N{EN DASH}0.60" in h.html and "egm-heat-key" in h.html
    with pytest.raises(ValueError, match="heat names columns"):
        heatmap({"a": [1.0]}, heat=["b"])
    with pytest.raises(ValueError, match="saturate"):
        heatmap({"a": [1.0]}, heat=["a"], saturate=1.0)
    with pytest.raises(TypeError, match="a ratio or a tuple"):
        heatmap({"a": ["x"]}, heat=["a"])


def test_glue_text_rejects_what_is_not_a_text():
    from egmbook.display import _Text, glue_text

    assert repr(_Text("4.6 × 10⁶")) == "4.6 × 10⁶"  # no quotes in the glued text/plain
    with pytest.raises(TypeError, match="must be str"):
        glue_text("x", 4.6)
    with pytest.raises(ValueError, match="must not be empty"):
        glue_text("", "x")


def test_table_caption_goes_in_the_caption_element_and_label_is_checked():
    from egmbook.display import heatmap

    t = table({"a": [1, 2]}, caption="Goals at $n = 10$", label="ch9-tab-goals")
    assert t.html.startswith('<div class="egm-table-wrap" data-egm-label="ch9-tab-goals">')
    assert ('<caption class="egm-table-caption"><span class="caption-text">Goals at \\(n = 10\\)</span>'
            "</caption>") in t.html
    assert t.text.splitlines()[0] == "Goals at n = 10"  # the plain form: no number
    long = table({"k": list(range(30))}, head=5, caption="All of them")
    assert long.html.count("<caption") == 1  # the first rows carry the caption, not the collapsed copy
    h = heatmap({"d": ["A"], "r": [0.5]}, heat=["r"], caption="Ratios", label="h-1")
    assert 'data-egm-label="h-1"' in h.html and '<span class="caption-text">Ratios</span>' in h.html
    with pytest.raises(ValueError, match="needs a caption"):
        table({"a": [1]}, label="x")
    with pytest.raises(ValueError, match="lower-case letters"):
        table({"a": [1]}, caption="c", label="Tab X")
    with pytest.raises(TypeError, match="label must be a str"):
        heatmap({"r": [1.0]}, heat=["r"], caption="c", label=3)


def test_heatmap_colours_are_the_blue_and_orange_its_keys_name():
    """The colour a key calls orange is orange (hue 30-40 degrees), not the salmon red of
    ColorBrewer's RdBu; the other side is blue."""
    import colorsys

    from egmbook.display import HEAT_HIGH, HEAT_LOW

    hue = {name: 360 * colorsys.rgb_to_hsv(*(c / 255 for c in rgb))[0] for name, rgb in
           (("high", HEAT_HIGH), ("low", HEAT_LOW))}
    assert 25 <= hue["low"] <= 40, f"the 'orange' side has hue {hue['low']:.0f} degrees"
    assert 190 <= hue["high"] <= 220, f"the 'blue' side has hue {hue['high']:.0f} degrees"


def _mini_book(tmp_path, pages: dict[str, str]):
    """Build a small Sphinx project with myst-nb and the book's table numbering; return
    (html directory, warnings)."""
    import io
    from pathlib import Path

    from sphinx.application import Sphinx

    root = Path(__file__).resolve().parent.parent
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(root / '_ext')!r})\n"
        "extensions = ['myst_nb', 'numbered_tables']\n"
        "numfig = True\nnumfig_secnum_depth = 1\nnb_execution_mode = 'off'\n"
        "myst_enable_extensions = ['colon_fence', 'dollarmath']\n"
        "exclude_patterns = ['_build']\n", encoding="utf-8")
    for name, text in pages.items():
        (src / name).write_text(text, encoding="utf-8")
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    return tmp_path / "html", warnings.getvalue()


def _notebook(cells: list[dict]) -> str:
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}, "cells": cells})


def _output_cell(obj) -> dict:
    bundle = obj._repr_mimebundle_()
    return {"cell_type": "code", "metadata": {}, "source": "t", "execution_count": 1, "outputs": [
        {"output_type": "execute_result", "execution_count": 1, "metadata": {}, "data": bundle}]}


def test_tables_are_numbered_per_chapter_and_cited_by_numref(tmp_path):
    """In a built book: the tables of ``display.table`` in a notebook's outputs and MyST's
    ``{list-table}`` are numbered in one sequence per chapter, which a chapter's section
    page continues; "Table 2.2: " is in the caption, ``{numref}`` reads "Table 2.2" and
    links to the table; a table without a caption is not numbered."""
    import re

    from egmbook.display import heatmap

    md = lambda text: {"cell_type": "markdown", "metadata": {}, "source": text}  # noqa: E731
    pages = {
        "index.md": "# Book\n\n```{toctree}\n:numbered:\nch1\nch2\n```\n",
        "ch1.md": "# One\n\n```{list-table} A first table\n:name: tab-one\n* - a\n  - b\n```\n",
        "ch2.md": "# Two\n\n```{list-table} The chapter's first\n:name: tab-two\n* - a\n```\n\n"
                  "```{toctree}\nch2a\n```\n",
        "ch2a.ipynb": _notebook([
            md("# Two, a section\n\nSee {numref}`tab-goals` and {numref}`tab-two`; also {numref}`tab-heat`."),
            _output_cell(table({"x": [1]})),  # no caption: not numbered
            _output_cell(table({"x": [1.5]}, caption="Goals, $n$", label="tab-goals")),
            _output_cell(heatmap({"r": [0.5]}, heat=["r"], caption="Ratios")),
            _output_cell(heatmap({"r": [2.0]}, heat=["r"], caption="Cited ratios", label="tab-heat")),
        ]),
    }
    html, warnings = _mini_book(tmp_path, pages)
    assert "WARNING" not in warnings and "ERROR" not in warnings, warnings
    one = (html / "ch1.html").read_text(encoding="utf-8")
    assert '<span class="caption-number">Table 1.1: </span>' in one
    section = (html / "ch2a.html").read_text(encoding="utf-8")
    numbers = re.findall(r'<span class="caption-number">([^<]*)</span>', section)
    assert numbers == ["Table 2.2: ", "Table 2.3: ", "Table 2.4: "], numbers
    assert re.search(r'<div class="egm-table-wrap" id="tab-goals"[^>]*><table[^>]*><caption class="egm-table-caption">'
                     r'<span class="caption-number">Table 2.2: </span><span class="caption-text">Goals', section)
    refs = dict((text, href) for href, text in re.findall(r'<a class="reference internal" href="([^"]+)">'
                                                         r'<span class="std std-numref">([^<]+)</span>', section))
    assert refs == {"Table 2.2": "#tab-goals", "Table 2.1": "ch2.html#tab-two", "Table 2.4": "#tab-heat"}, refs


def test_a_table_label_used_twice_is_a_build_warning(tmp_path):
    pages = {"index.md": "# Book\n\n```{toctree}\n:numbered:\nch1\n```\n",
             "ch1.ipynb": _notebook([{"cell_type": "markdown", "metadata": {}, "source": "# One"},
                                     _output_cell(table({"x": [1]}, caption="A", label="tab-a")),
                                     _output_cell(table({"x": [2]}, caption="B", label="tab-a"))])}
    _, warnings = _mini_book(tmp_path, pages)
    assert "tab-a" in warnings and "WARNING" in warnings, warnings
