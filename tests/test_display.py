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
    assert im.size == (1352, 760) and size == {"width": 676, "height": 380}
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
