r"""How the book shows results: its figure style and its tables.

- :func:`use_book_style` applies the book's one matplotlib style (``book.mplstyle`` beside
  this module): figures drawn at the width of the text column, text no smaller than
  9 pt, colours that survive colour-vision deficiencies, stored at twice the screen
  resolution as 8-bit palette PNGs (``_palette_png``).
- :func:`glue_values` glues many numbers for the prose at once (myst-nb ``glue``), in
  place of one ``glue(name, float(x), display=False)`` call per number.
- :func:`table` shows a table as HTML (in the book and in Jupyter) with a plain-text twin
  (what nbval compares): formatted numbers, optional caption, inline math between
  ``$...$``; a long table shows its first rows and keeps the full table in a collapsed
  block.

Examples
--------
>>> from egmbook.display import table
>>> table({"d": [10, 100], "ratio": [1.23456, 7.0]}, formats={"ratio": "{:.3f}"})
  d  ratio
 10  1.235
100  7.000
"""

from __future__ import annotations

import html
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from egmlib._validation import check_count

__all__ = ["STYLE", "glue_values", "math_html", "table", "use_book_style"]  # Table: what table() returns

#: The book's matplotlib style file.
STYLE = Path(__file__).with_name("book.mplstyle")


def use_book_style() -> None:
    """Use the book's matplotlib style (for the report's Figures 1-2 and the book's own);
    in IPython, store figures at 2x resolution as palette PNGs (``_palette_png``).

    Figures keep the size the style gives them (no tight cropping), so that a figure
    fills the text column and its smallest text is legible where it is shown.
    """
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is not None and hasattr(shell, "kernel"):
        # load the inline backend now (matplotlib resolves it lazily, at the first
        # figure, and loading it would then replace the PNG formatter set below)
        shell.run_line_magic("matplotlib", "inline")
    plt.style.use(STYLE)
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, _palette_png)


def _palette_png(fig: Any) -> tuple[bytes, dict[str, int]]:
    """A figure of the book (the report's Figure 2 among them) as a palette PNG, with its size.

    The PNG has 8-bit colour indices; the size is the display size in CSS px. The matplotlib
    figure is drawn at ``savefig.dpi`` (twice ``figure.dpi`` in the book's style, for
    high-density screens), on white, and its colours are reduced to an adaptive palette of
    256 without dithering: line plots in a handful of colours and their anti-aliased
    edges look the same, in about a third of the bytes of a full-colour PNG (the book's
    size limit counts each figure twice, as an image and inside its notebook). The PNG
    records its resolution; the metadata gives the size at ``figure.dpi``, the size at
    which the text column shows it.
    """
    import io

    import matplotlib as mpl
    from PIL import Image

    dpi = float(mpl.rcParams["savefig.dpi"]) if mpl.rcParams["savefig.dpi"] != "figure" else fig.dpi
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white", bbox_inches=None)
    rgb = Image.open(buf).convert("RGB")
    out = io.BytesIO()
    rgb.quantize(256, dither=Image.Dither.NONE).save(out, format="PNG", optimize=True, dpi=(dpi, dpi))
    scale = fig.dpi / dpi
    return out.getvalue(), {"width": round(rgb.width * scale), "height": round(rgb.height * scale)}


def math_html(text: str) -> str:
    r"""``text`` as HTML for MathJax: inline math between ``$...$`` becomes ``\(...\)``,
    everything else is HTML-escaped (the form of a table's cells and of a checked claim).

    >>> math_html("a < b for $x_1 < 2$")
    'a &lt; b for \\(x_1 &lt; 2\\)'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got text={text!r} (type {type(text).__name__})")
    pieces = re.split(r"(\$[^$]+\$)", text)
    return "".join(
        r"\(" + html.escape(p[1:-1], quote=False) + r"\)"
        if len(p) > 1 and p.startswith("$") and p.endswith("$")
        else html.escape(p, quote=False)
        for p in pieces
    )


def _plain(text: str) -> str:
    return text.replace("$", "")


class Table:
    """A formatted table with an HTML and a plain-text form (see :func:`table`)."""

    def __init__(self, columns: list[str], cells: list[list[str]], numeric: list[bool],
                 caption: str, head: int | None) -> None:
        self.columns, self.cells, self.numeric = columns, cells, numeric
        self.caption, self.head = caption, head

    @property
    def text(self) -> str:
        """Aligned plain text (numbers right-aligned, text left-aligned)."""
        heads = [_plain(c) for c in self.columns]
        widths = [max([len(h)] + [len(r[k]) for r in self.cells]) for k, h in enumerate(heads)]

        def line(vals: list[str]) -> str:
            return "  ".join(v.rjust(w) if num else v.ljust(w)
                             for v, w, num in zip(vals, widths, self.numeric, strict=True)).rstrip()

        out = [_plain(self.caption)] if self.caption else []
        out.append(line(heads))
        out.extend(line(r) for r in self.cells)
        return "\n".join(out)

    def _html_table(self, rows: list[list[str]]) -> str:
        head = "".join(
            f'<th class="{"egm-num" if num else "egm-txt"}">{math_html(c)}</th>'
            for c, num in zip(self.columns, self.numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(
                f'<td class="{"egm-num" if num else "egm-txt"}">{math_html(v)}</td>'
                for v, num in zip(r, self.numeric, strict=True)) + "</tr>"
            for r in rows)
        return (f'<table class="egm-table mathjax_process"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>")

    @property
    def html(self) -> str:
        """The table as HTML; a long one shows ``head`` rows and collapses the rest."""
        parts = ['<div class="egm-table-wrap">']
        if self.caption:
            parts.append(f'<div class="egm-table-caption mathjax_process">{math_html(self.caption)}</div>')
        n = len(self.cells)
        if self.head is not None and n > self.head:
            parts.append(self._html_table(self.cells[: self.head]))
            parts.append(f'<details class="egm-table-full"><summary>All {n} rows</summary>'
                         f"{self._html_table(self.cells)}</details>")
        else:
            parts.append(self._html_table(self.cells))
        parts.append("</div>")
        return "".join(parts)

    def _repr_mimebundle_(self, include=None, exclude=None):  # noqa: ANN001, ANN202
        return {"text/plain": self.text, "text/html": self.html}

    def __repr__(self) -> str:
        return self.text


def _columns_of(data: Any) -> tuple[list[str], list[list[Any]]]:
    if hasattr(data, "columns") and hasattr(data, "itertuples"):  # a pandas DataFrame
        return [str(c) for c in data.columns], [list(r) for r in data.itertuples(index=False)]
    if isinstance(data, Mapping):
        names = [str(k) for k in data]
        if any(isinstance(v, (str, bytes)) or not isinstance(v, Sequence | np.ndarray) for v in data.values()):
            raise TypeError(f"data must map column names to sequences of values, got data={data!r:.60}")
        cols = [list(v) for v in data.values()]
        if len({len(c) for c in cols}) > 1:
            raise ValueError(
                f"data must have columns of equal length, got lengths {[len(c) for c in cols]}")
        return names, [list(r) for r in zip(*cols, strict=True)]
    raise TypeError(
        "data must be a mapping of column name to values or a pandas DataFrame, "
        f"got data={data!r:.60} (type {type(data).__name__})")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _formatter(spec: str | Callable[[Any], str] | None) -> Callable[[Any], str]:
    if spec is None:
        return lambda v: f"{v:.6g}" if isinstance(v, float) else str(v)
    if callable(spec):
        return spec
    if isinstance(spec, str):
        return spec.format
    raise TypeError(f"formats values must be format strings or callables, got {spec!r}")


def table(
    data: Mapping[str, Sequence[Any]] | Any,
    *,
    formats: Mapping[str, str | Callable[[Any], str]] | None = None,
    caption: str = "",
    head: int | None = None,
) -> Table:
    """A table of the book's results (e.g. the report's Figure 2 values): HTML in the book,
    aligned text for nbval.

    Parameters
    ----------
    data : mapping or pandas.DataFrame
        Columns in order, ``{"d": [...], "$\\alpha$": [...]}``; inline math in column
        names between ``$...$``.
    formats : mapping, optional
        Per column, a format string (``"{:.4g}"``) or a callable; floats default to
        ``"{:.6g}"``, everything else to ``str``.
    caption : str
        Shown above the table.
    head : int, optional
        Show only the first ``head`` rows on the page and the full table in a
        collapsed block (the plain-text form always has every row).

    Returns
    -------
    Table
        Displayed by IPython as the cell's result.
    """
    columns, rows = _columns_of(data)
    if formats is not None and not isinstance(formats, Mapping):
        raise TypeError(f"formats must be a mapping of column name to format, got formats={formats!r}")
    formats = dict(formats or {})
    unknown = sorted(set(formats) - set(columns))
    if unknown:
        raise ValueError(f"formats names columns that are not in data: {unknown}")
    if head is not None and (isinstance(head, bool) or not isinstance(head, int)):
        raise TypeError(f"head must be an int or None, got head={head!r} (type {type(head).__name__})")
    if head is not None and head < 1:
        raise ValueError(f"head must be >= 1, got head={head!r}")
    if not isinstance(caption, str):
        raise TypeError(f"caption must be a str, got caption={caption!r} (type {type(caption).__name__})")
    fmt = [_formatter(formats.get(c)) for c in columns]
    cells = [[f(v) for f, v in zip(fmt, r, strict=True)] for r in rows]
    numeric = [bool(rows) and all(_is_number(r[k]) for r in rows) for k in range(len(columns))]
    return Table(columns, cells, numeric, caption, head)


def glue_values(values: Mapping[str, Any], *, digits: int | None = None,
                prefix: str = "") -> dict[str, int | float]:
    r"""Glue every number of ``values`` for the prose, under ``prefix + name``.

    One call per cell instead of one ``glue(name, float(x), display=False)`` per number:
    each value is converted to a plain Python ``int`` (integers) or ``float`` (other real
    numbers, numpy scalars and 0-d arrays included), rounded to ``digits`` decimals when
    given, and glued with myst-nb's ``glue(..., display=False)``; the prose formats it
    (``{glue:text}`ch3-x:.3f```).

    Parameters
    ----------
    values : mapping of str to real number
        Names (non-empty strings) and finite real values; bools are refused.
    digits : int >= 0, optional
        Decimals to round floats to (``round(x, digits)``).
    prefix : str
        Prepended to every name, e.g. ``"ch3-"``.

    Returns
    -------
    dict
        What was glued, by full name (so that a cell can also check or print it).

    Raises
    ------
    TypeError, ValueError
        For a name that is not a non-empty string, a value that is not a real number or
        not finite, or a bad ``digits``; nothing is glued then.
    """
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a mapping of names to numbers, got values of type "
                        f"{type(values).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string, got prefix of type {type(prefix).__name__}")
    if digits is not None:
        digits = check_count("digits", digits, minimum=0)
    out: dict[str, int | float] = {}
    for name, value in values.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"values must be keyed by non-empty strings, got key {name!r}")
        v = value.item() if isinstance(value, (np.generic, np.ndarray)) and np.ndim(value) == 0 else value
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise TypeError(f"values[{name!r}] must be a real number, got {type(value).__name__}")
        if isinstance(v, numbers.Integral):
            out[prefix + name] = int(v)
            continue
        x = float(v)
        if not np.isfinite(x):
            raise ValueError(f"values[{name!r}] must be finite, got {x!r}")
        out[prefix + name] = round(x, int(digits)) if digits is not None else x
    from myst_nb import glue  # the book's toolchain (the book extra), only where gluing happens

    for full, v in out.items():
        glue(full, v, display=False)
    return out
