r"""How the book shows results: its figure style and its tables.

- :func:`use_book_style` applies the book's one matplotlib style (``book.mplstyle`` beside
  this module): figures drawn at the width of the text column, text no smaller than
  9 pt, colours that survive colour-vision deficiencies, stored at twice the screen
  resolution as 8-bit palette PNGs (``_palette_png``), each with a phone rendition
  (:func:`phone_rendition`: the panels stacked in a 360 px column, the same text sizes)
  that ``_ext/phone_figures.py`` serves to narrow screens; :func:`save_figure` does the
  same for a figure shown from a file.
- :func:`glue_values` glues many numbers for the prose at once (myst-nb ``glue``), in
  place of one ``glue(name, float(x), display=False)`` call per number.
- :func:`table` shows a table as HTML (in the book and in Jupyter) with a plain-text twin
  (what nbval compares): formatted numbers, optional caption, inline math between
  ``$...$``; a long table shows its first rows and keeps the full table in a collapsed
  block. A table with a caption is numbered per chapter in the book ("Table 9.2: ..." in
  its ``<caption>``, ``_ext/numbered_tables.py``), and one with a ``label`` is cited from the
  prose by number: ``table(data, caption="...", label="ch9-tab-goals")`` in the cell,
  ``{numref}`ch9-tab-goals``` in the Markdown.
- :func:`heatmap` draws a table of ratios as a heat map: the numbers (and their ranges) in
  the cells, coloured blue on one side of a centre and orange on the other.

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
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from egmlib.validation import (
    as_real_array,
    check_bool,
    check_count,
    check_positive_finite,
    check_positive_vector,
)

__all__ = ["PHONE_WIDTH_IN", "STYLE", "glue_text", "glue_values", "heatmap",
           "legend_beside_on_phone", "math_html", "phone_rendition", "ratio_panel", "save_figure", "table",
           "use_book_style"]  # Table: what table() returns

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


#: Width (inches at ``figure.dpi``, i.e. hundreds of CSS px) of a figure's phone rendition:
#: the text column of a 360-400 px screen.
PHONE_WIDTH_IN = 3.6
#: Height of one panel of the phone rendition, inches (panels are stacked in one column).
PHONE_PANEL_IN = (2.1, 2.7)
#: Key of the phone rendition in the metadata of a notebook's ``image/png`` output
#: (``_ext/phone_figures.py`` reads it and serves it to narrow screens).
PHONE_KEY = "egm_phone"


def _png(fig: Any) -> tuple[bytes, int, int]:
    """The figure as an 8-bit palette PNG at ``savefig.dpi``, with its size in CSS px."""
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
    return out.getvalue(), round(rgb.width * scale), round(rgb.height * scale)


def _palette_png(fig: Any) -> tuple[bytes, dict[str, Any]]:
    """A figure of the book (the report's Figure 2 among them) as a palette PNG, with its size
    and its phone rendition.

    The PNG has 8-bit colour indices; the size is the display size in CSS px. The matplotlib
    figure is drawn at ``savefig.dpi`` (twice ``figure.dpi`` in the book's style, for
    high-density screens), on white, and its colours are reduced to an adaptive palette of
    256 without dithering: line plots in a handful of colours and their anti-aliased
    edges look the same, in about a third of the bytes of a full-colour PNG (the book's
    size limit counts each figure twice, as an image and inside its notebook). The PNG
    records its resolution; the metadata gives the size at ``figure.dpi``, the size at
    which the text column shows it, and under ``PHONE_KEY`` the figure drawn again for a
    phone's column (:func:`phone_rendition`), which the book serves to narrow screens.
    """
    import base64

    png, width, height = _png(fig)
    meta: dict[str, Any] = {"width": width, "height": height}
    phone = phone_rendition(fig)
    if phone is not None:
        data, w, h = _png(phone)
        meta[PHONE_KEY] = {"png": base64.b64encode(data).decode("ascii"), "width": w, "height": h}
        import matplotlib.pyplot as plt

        plt.close(phone)
    return png, meta


def save_figure(fig: Any, path: str | Path) -> None:
    """Save a figure for a page that shows it as a file (the landing page's Figure 2): the
    palette PNG at ``path`` and its phone rendition beside it, ``<stem>-phone.png``, which
    ``_ext/phone_figures.py`` serves to narrow screens."""
    if isinstance(path, bool) or not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a Path, got path={path!r} (type {type(path).__name__})")
    _check_figure(fig)
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"path must name a .png file, got path={str(path)!r}")
    png, _, _ = _png(fig)
    path.write_bytes(png)
    phone = phone_rendition(fig)
    target = path.with_name(path.stem + "-phone" + path.suffix)
    if phone is None:
        target.unlink(missing_ok=True)
        return
    target.write_bytes(_png(phone)[0])
    import matplotlib.pyplot as plt

    plt.close(phone)


def _check_figure(fig: Any) -> None:
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got fig={fig!r:.60} (type {type(fig).__name__})")


def phone_rendition(fig: Any) -> Any | None:
    """The figure drawn again for a phone's text column, or None if it already fits one.

    A copy of ``fig`` is set ``PHONE_WIDTH_IN`` wide with its fonts unchanged (so its
    smallest text is as large on a phone as in the text column of a laptop), its panels
    stacked in one column in reading order, each ``PHONE_PANEL_IN`` high; tick labels hidden
    by shared axes are shown and axis labels repeated on every panel; a legend of the
    figure gets one column. Figures the copy cannot restack (panels spanning several
    cells) keep their arrangement.
    """
    import pickle

    from matplotlib.gridspec import GridSpec

    _check_figure(fig)
    width, height = fig.get_size_inches()
    if width <= PHONE_WIDTH_IN + 0.01:
        return None
    try:  # a copy: cloudpickle (joblib's) also copies lambdas, such as tick formatters
        import cloudpickle

        dumps = cloudpickle.dumps
    except ImportError:  # pragma: no cover - joblib brings it
        dumps = pickle.dumps
    try:
        phone = pickle.loads(dumps(fig))
    except Exception:  # noqa: BLE001 - an artist that cannot be copied: no phone rendition
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(phone)  # measured and drawn by Agg, whatever canvas the original has
    grid_axes = [ax for ax in phone.axes if ax.get_subplotspec() is not None
                 and not getattr(ax, "_colorbar", None) and ax.get_label() != "<colorbar>"]
    specs = [ax.get_subplotspec() for ax in grid_axes]
    grids = {id(spec.get_gridspec()) for spec in specs}
    rows = cols = 1
    if grid_axes and len(grids) == 1:
        rows, cols = specs[0].get_gridspec().get_geometry()
    panel_height = height / max(rows, 1)
    stack = (len(grids) == 1 and all(len(sp.rowspan) == 1 and len(sp.colspan) == 1 for sp in specs))
    if stack:
        order = sorted(range(len(grid_axes)), key=lambda k: (specs[k].rowspan.start, specs[k].colspan.start))
        # labels of the panel's row (y) and column (x), for panels that shared them
        ylabel = {specs[k].rowspan.start: grid_axes[k].get_ylabel() for k in order if grid_axes[k].get_ylabel()}
        xlabel = {specs[k].colspan.start: grid_axes[k].get_xlabel() for k in order if grid_axes[k].get_xlabel()}
        # one label shared by the whole grid goes on every panel
        ylabel = ylabel if len(set(ylabel.values())) != 1 else dict.fromkeys(range(rows), next(iter(ylabel.values())))
        xlabel = xlabel if len(set(xlabel.values())) != 1 else dict.fromkeys(range(cols), next(iter(xlabel.values())))
        panels = len(order)
        new = GridSpec(panels, 1, figure=phone)
        for position, k in enumerate(order):
            ax, spec = grid_axes[k], specs[k]
            ax.set_subplotspec(new[position])
            ax.tick_params(labelbottom=True, labelleft=True)
            if not ax.get_ylabel() and spec.rowspan.start in ylabel:
                ax.set_ylabel(ylabel[spec.rowspan.start])
            if not ax.get_xlabel() and spec.colspan.start in xlabel:
                ax.set_xlabel(xlabel[spec.colspan.start])
        low, high = PHONE_PANEL_IN
        panel = min(max(panel_height * 0.8, low), high)
    else:
        panels, panel = 1, min(max(height * PHONE_WIDTH_IN / width, PHONE_PANEL_IN[0]), 2 * PHONE_PANEL_IN[1])
    phone.set_size_inches(PHONE_WIDTH_IN, panels * panel)
    phone.canvas.draw()
    # legends that a narrow panel cannot hold (several columns, or half the panel's width)
    # go below the panels, with the figure's own, in one column: one entry per label
    handles, labels = [], []
    for legend in list(phone.legends):
        handles += legend.legend_handles
        labels += [t.get_text() for t in legend.texts]
        legend.remove()
    for ax in phone.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        wide = legend._ncols > 1 or legend.get_window_extent().width > 0.5 * ax.get_window_extent().width
        if wide:
            handles += legend.legend_handles
            labels += [t.get_text() for t in legend.texts]
            legend.remove()
    unique = dict(zip(labels, handles, strict=True))
    if stack and getattr(fig, PHONE_LEGEND_ATTR, None) == "beside":
        unique, panel = _legends_beside(phone, [grid_axes[k] for k in order], unique, panel)
        phone.set_size_inches(PHONE_WIDTH_IN, panels * panel)
    if unique:
        phone.legend(handles=list(unique.values()), labels=list(unique), loc="outside lower center", ncols=1)
    _wrap_labels(phone)
    if phone.legends:  # room for the legend below the panels
        phone.canvas.draw()
        extra = sum(lg.get_window_extent().height for lg in phone.legends) / phone.dpi
        phone.set_size_inches(PHONE_WIDTH_IN, panels * panel + extra + 0.1)
    return phone


#: Attribute of a figure that :func:`legend_beside_on_phone` sets.
PHONE_LEGEND_ATTR = "_egm_phone_legend"
#: Characters per line of a legend's label beside a panel of the phone rendition.
PHONE_LEGEND_CHARS = 16


def legend_beside_on_phone(fig: Any) -> Any:
    """Mark ``fig`` so that its phone rendition (:func:`phone_rendition`) sets, beside each of
    its stacked panels, the legend of that panel's own series, instead of one legend for
    the figure below the last panel (screens below the first, on a phone).

    Each panel's legend lists the entries of the figure's legends (and of the panels' own)
    whose label is the label of a line, a marker or a patch drawn in that panel, in the
    legend's order, each drawn as that panel draws it, in one column, its labels wrapped at
    ``PHONE_LEGEND_CHARS`` characters; the panel is narrowed to make room (constrained
    layout) and made at least as tall as its legend. Entries that label nothing in any
    panel (proxy artists) stay in one legend below the panels. Meant for a figure of a few
    series a panel (five or fewer), whose labels are short. The laptop rendition is
    unchanged. Returns ``fig``.

    In a notebook cell: ``fig, axes = plt.subplots(2, 2); ...; fig.legend(...);
    legend_beside_on_phone(fig)``, and the cell shows ``fig`` as usual.
    """
    _check_figure(fig)
    setattr(fig, PHONE_LEGEND_ATTR, "beside")
    return fig


def _legends_beside(phone: Any, panels: list[Any], entries: dict[str, Any],
                    panel: float) -> tuple[dict[str, Any], float]:
    """The legend of each panel's own series beside it; returns the entries that label no
    panel and the panel height, raised to hold the tallest legend."""
    used: set[str] = set()
    for ax in panels:
        own = dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))  # label -> the panel's artist
        labels = [label for label in entries if label in own]
        if not labels:
            continue
        used.update(labels)
        # the panel's own artists: the legend shows each series as this panel draws it
        ax.legend([own[label] for label in labels], [_wrap(label, PHONE_LEGEND_CHARS) for label in labels],
                  loc="center left", bbox_to_anchor=(1.02, 0.5), ncols=1, borderaxespad=0, handlelength=1.6)
    phone.canvas.draw()
    tallest = max((ax.get_legend().get_window_extent().height / phone.dpi for ax in panels
                   if ax.get_legend() is not None), default=0.0)
    return {label: h for label, h in entries.items() if label not in used}, max(panel, tallest + 0.5)


def _wrap(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, never breaking inside ``$...$``."""
    lines, line = [], ""
    for word in re.findall(r"\S*\$[^$]*\$\S*|\S+", text):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def _wrap_labels(fig: Any) -> None:
    """Axis labels and titles wider (taller) than their panel, broken into lines."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for text, room, setter in ((ax.xaxis.label, box.width, ax.set_xlabel), (ax.title, box.width, ax.set_title),
                                   (ax.yaxis.label, box.height, ax.set_ylabel)):
            label = text.get_text()
            extent = text.get_window_extent(renderer)
            size = extent.height if setter is ax.set_ylabel else extent.width
            if label and "\n" not in label and size > room:
                setter(_wrap(label, max(int(len(label) * room / size * 0.95), 8)))


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
                 caption: str, head: int | None, label: str | None = None) -> None:
        self.columns, self.cells, self.numeric = columns, cells, numeric
        self.caption, self.head, self.label = caption, head, label

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

    def _caption_html(self) -> str:
        """The caption element (its number is added by the book's build, see :func:`table`)."""
        return (f'<caption class="egm-table-caption"><span class="caption-text">{math_html(self.caption)}'
                "</span></caption>") if self.caption else ""

    def _html_table(self, rows: list[list[str]], caption: bool = False) -> str:
        head = "".join(
            f'<th class="{"egm-num" if num else "egm-txt"}">{math_html(c)}</th>'
            for c, num in zip(self.columns, self.numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(
                f'<td class="{"egm-num" if num else "egm-txt"}">{math_html(v)}</td>'
                for v, num in zip(r, self.numeric, strict=True)) + "</tr>"
            for r in rows)
        return (f'<table class="egm-table mathjax_process">{self._caption_html() if caption else ""}'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def _wrap_open(self) -> str:
        label = f' data-egm-label="{self.label}"' if self.label else ""
        return f'<div class="egm-table-wrap"{label}>'

    @property
    def html(self) -> str:
        """The table as HTML, its caption in the table's ``<caption>``; a long one shows
        ``head`` rows and collapses the rest."""
        parts = [self._wrap_open()]
        n = len(self.cells)
        if self.head is not None and n > self.head:
            parts.append(self._html_table(self.cells[: self.head], caption=True))
            parts.append(f'<details class="egm-table-full"><summary>All {n} rows</summary>'
                         f"{self._html_table(self.cells)}</details>")
        else:
            parts.append(self._html_table(self.cells, caption=True))
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
    label: str | None = None,
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
        The table's caption, shown above it in the HTML ``<caption>`` element. In the book a
        table with a caption is numbered per chapter, like a figure ("Table 9.2: ..."), by
        ``_ext/numbered_tables.py``; the plain-text form (what nbval compares) has the
        caption without its number.
    head : int, optional
        Show only the first ``head`` rows on the page and the full table in a
        collapsed block (the plain-text form always has every row).
    label : str, optional
        The name by which the prose cites the table, ``{numref}`label``` ("Table 9.2");
        lower-case letters, digits and hyphens, unique in the book (``ch9-tab-goals``).
        Needs a caption (the number is shown in it).

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
    label = _check_label(label, caption)
    fmt = [_formatter(formats.get(c)) for c in columns]
    cells = [[f(v) for f, v in zip(fmt, r, strict=True)] for r in rows]
    numeric = [bool(rows) and all(_is_number(r[k]) for r in rows) for k in range(len(columns))]
    return Table(columns, cells, numeric, caption, head, label)


_LABEL = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _check_label(label: object, caption: str) -> str | None:
    """A table's label: None, or lower-case letters, digits and hyphens, with a caption."""
    if label is None:
        return None
    if not isinstance(label, str):
        raise TypeError(f"label must be a str or None, got label={label!r} (type {type(label).__name__})")
    if not _LABEL.match(label):
        raise ValueError(f"label must be lower-case letters, digits and hyphens, got label={label!r}")
    if not caption.strip():
        raise ValueError(f"label={label!r} needs a caption: a table is numbered in its caption")
    return label


#: Heat-map colours, blue and orange (ColorBrewer's RdBu blue and PuOr orange: a pair told
#: apart with every common colour-vision deficiency, and named by the words the keys use):
#: a ratio above the centre is blue, below it orange; black text keeps a contrast above
#: 5:1 on the deepest tint. (Red would be the colour of a refuted claim, _static/egm.css.)
HEAT_HIGH, HEAT_LOW = (67, 147, 195), (224, 130, 20)


def _heat_colour(value: float, centre: float, saturate: float, blue_above: bool = True) -> str:
    """The background of a heat-map cell: white at ``centre``, the full tint at a factor
    ``saturate`` away from it (on a log scale), in between a mix."""
    if not (value > 0 and math.isfinite(value)):
        return ""
    share = min(abs(math.log(value / centre)) / math.log(saturate), 1.0)
    if share < 0.02:
        return ""
    rgb = HEAT_HIGH if (value > centre) == blue_above else HEAT_LOW
    mix = [round(255 + (c - 255) * share) for c in rgb]
    return f"background:#{mix[0]:02x}{mix[1]:02x}{mix[2]:02x}"


class HeatMap(Table):
    """A table whose value cells are coloured by their ratio to a centre (see :func:`heatmap`)."""

    def __init__(self, columns: list[str], cells: list[list[str]], numeric: list[bool], caption: str,
                 shown: list[list[tuple[str, str]]], styles: list[list[str]], key: str,
                 label: str | None = None) -> None:
        super().__init__(columns, cells, numeric, caption, None, label)
        self.shown, self.styles, self.key = shown, styles, key

    @property
    def text(self) -> str:
        """The aligned plain text of :class:`Table` and the colour key."""
        return super().text + (f"\n{_plain(self.key)}" if self.key else "")

    def _html_table(self, rows: list[list[str]], caption: bool = False) -> str:
        def cell(value: tuple[str, str]) -> str:
            main, spread = value
            return math_html(main) + (f'<br><span class="egm-heat-range" style="font-size:0.8em;color:#222">'
                                  f"{math_html(spread)}</span>" if spread else "")

        head = "".join(
            f'<th class="{"egm-num" if num else "egm-txt"}">{math_html(c)}</th>'
            for c, num in zip(self.columns, self.numeric, strict=True))
        body = "".join(
            "<tr>" + "".join(
                f'<td class="{"egm-num" if num else "egm-txt"}"' + (f' style="{style}"' if style else "")
                + f">{cell(v)}</td>"
                for v, num, style in zip(r, self.numeric, styles, strict=True)) + "</tr>"
            for r, styles in zip(self.shown, self.styles, strict=True))
        return (f'<table class="egm-table egm-heatmap mathjax_process">{self._caption_html() if caption else ""}'
                f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    @property
    def html(self) -> str:
        """The heat map as HTML, with its colour key below it."""
        key = (f'<div class="egm-heat-key" style="font-size:0.85em;color:#333">{math_html(self.key)}</div>'
               if self.key else "")
        return super().html.removesuffix("</div>") + key + "</div>"


def heatmap(
    data: Mapping[str, Sequence[Any]] | Any,
    *,
    heat: Sequence[str],
    caption: str = "",
    centre: float = 1.0,
    saturate: float = 4.0,
    digits: int = 3,
    key: str = "",
    blue_above: bool = True,
    label: str | None = None,
) -> HeatMap:
    """A ratio table drawn as a heat map, with the numbers in its cells: HTML in the book,
    aligned text (and the key) for nbval.

    Parameters
    ----------
    data : mapping or pandas.DataFrame
        Columns in order, as for :func:`table`. The columns named in ``heat`` hold ratios:
        a number, or a tuple ``(value, low, high)`` shown as the value with its range
        below it (``1.16`` over ``1.07–1.30``), coloured by the value; ``None`` leaves a
        cell empty.
    heat : sequence of str
        The columns to colour.
    caption : str
        The caption, numbered in the book like :func:`table`'s.
    centre : float > 0
        The ratio shown white (1: both sides equal).
    saturate : float > 1
        The factor away from ``centre`` at which the colour is full (log scale).
    blue_above : bool
        Ratios above ``centre`` are blue and those below orange (the default), or the
        other way round: the book colours blue what favours the method the table is about.
    digits : int
        Significant digits of the numbers.
    key : str
        What the colours mean, shown below the table ("blue: Algorithm 3 adds less;
        orange: more").
    label : str, optional
        The name by which the prose cites the table (``{numref}`label```), as for :func:`table`.

    Returns
    -------
    HeatMap
        Displayed by IPython as the cell's result.

    Examples
    --------
    >>> heatmap({"data": ["A", "B"], "IOME": [(0.9, 0.8, 1.1), 4.2]}, heat=["IOME"], digits=2)
    data             IOME
    A     0.90 (0.80-1.1)
    B                 4.2
    """
    columns, rows = _columns_of(data)
    if isinstance(heat, str) or not isinstance(heat, Sequence) or not all(isinstance(h, str) for h in heat):
        raise TypeError(f"heat must be a sequence of column names, got heat={heat!r:.60}")
    heat = list(heat)
    unknown = sorted(set(heat) - set(columns))
    if unknown:
        raise ValueError(f"heat names columns that are not in data: {unknown}")
    centre = check_positive_finite("centre", centre)
    saturate = check_positive_finite("saturate", saturate)
    if not saturate > 1:
        raise ValueError(f"saturate must be a factor > 1, got saturate={saturate!r}")
    digits = check_count("digits", digits, minimum=1, maximum=6)
    for name, value in (("caption", caption), ("key", key)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {name}={value!r} (type {type(value).__name__})")
    blue_above = check_bool("blue_above", blue_above)
    label = _check_label(label, caption)

    def number(x: float) -> str:
        return f"{float(f'{x:.{digits}g}'):#.{digits}g}".rstrip(".") if abs(x) < 10 ** digits else f"{x:.0f}"

    shown, styles, texts = [], [], []
    for r in rows:
        shown_row, style_row, text_row = [], [], []
        for name, v in zip(columns, r, strict=True):
            style, spread = "", ""
            if name not in heat:
                main = v if isinstance(v, str) else (f"{v:.6g}" if isinstance(v, float) else str(v))
            elif v is None:
                main = ""
            else:
                ok = _is_number(v) or (isinstance(v, tuple) and len(v) == 3 and all(_is_number(x) for x in v))
                if not ok:
                    raise TypeError(f"column {name!r} holds {v!r}: a ratio or a tuple (value, low, high)")
                if _is_number(v):
                    value = v
                else:
                    value, low, high = v
                    spread = f"{number(float(low))}\N{EN DASH}{number(float(high))}"
                main = number(float(value))
                style = _heat_colour(float(value), centre, saturate, blue_above)
            shown_row.append((main, spread))
            text_row.append(f"{main} ({spread.replace(chr(0x2013), '-')})" if spread else main)
            style_row.append(style)
        shown.append(shown_row)
        styles.append(style_row)
        texts.append(text_row)
    numeric = [name in heat or (bool(rows) and all(_is_number(r[k]) for r in rows))
               for k, name in enumerate(columns)]
    return HeatMap(columns, texts, numeric, caption, shown, styles, key, label)


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


class _Text(str):
    """A glued text shown as it is (the repr of a str would add quotes)."""

    def __repr__(self) -> str:
        return str(self)


def glue_text(name: str, text: str) -> str:
    """Glue a text for the prose (``{glue:text}`name```), shown without quotes: a number
    already written for a reader, such as :func:`egmbook.claims.readable`'s ``4.6 × 10⁶``.

    Returns the text; raises TypeError for a name or text that is not a str and ValueError
    for an empty name.
    """
    if not isinstance(name, str) or not isinstance(text, str):
        raise TypeError(f"name and text must be str, got name={name!r}, text={text!r}")
    if not name:
        raise ValueError("name must not be empty")
    from myst_nb import glue  # the book's toolchain (the book extra), only where gluing happens

    glue(name, _Text(text), display=False)
    return text


def clipping_tradeoff_figure(res: Any, panels: Sequence[tuple[int, float, int]], *,
                             colors: Mapping[str, str], names: Mapping[str, str]) -> Any:
    """The trade-off of the clipping probability (chapter 7's Proposition 7.A, the report's open
    question of Section 6): for each ``(d, alpha, n)`` of ``panels``, one panel of the noise, the
    clipping term and their sum against p_C on a logit axis, relative to n tr(Sigma), for each
    method of ``names`` (``"alg3"``, ``"base"``) in its colour; a star at each method's optimum,
    the direct simulations of ``res.sweep_direct`` with their 95 % intervals where there are any,
    a grey line at p_C = 1/n and a black one at the data-free release's error. ``res`` is a
    :class:`egmbook.beyond_report.BeyondReport`. Returns the matplotlib figure (two columns).
    """
    import matplotlib.pyplot as plt

    if not isinstance(panels, Sequence) or not panels or len(panels) % 2:
        raise ValueError(f"panels must be a non-empty sequence of (d, alpha, n) of even length, got panels={panels!r}")
    fig, axes = plt.subplots(len(panels) // 2, 2, figsize=(6.76, 3.0 * len(panels) // 2), sharey=True,
                             squeeze=False)
    grid = res.sweep.p_grid
    for ax, (d, alpha, n) in zip(axes.flat, panels, strict=True):
        config = res.sweep.config(d=d, alpha=alpha)
        scale = n * config.trace
        for method, colour in ((m, colors[m]) for m in names):
            sweep = config.methods[method]
            for values, style in ((sweep.noise + n * sweep.e2, "-"), (sweep.noise, ":"), (n * sweep.e2, "--")):
                ax.plot(grid, values / scale, style, color=colour, lw=1.6 if style == "-" else 1.2)
            best = sweep.opt[n]
            if best.p_opt is not None:
                ax.plot(best.p_opt, best.total / scale, "*", color=colour, ms=11, mec="k", mew=0.5)
            points = [r for r in res.sweep_direct if (r.d, r.alpha, r.n, r.method) == (d, alpha, n, method)]
            if points:
                ax.errorbar([r.p for r in points], [r.total_mean / scale for r in points],
                            yerr=[r.total_ci / scale for r in points], fmt="o", ms=3.5, color=colour, mfc="white")
        ax.axvline(1.0 / n, color="gray", lw=0.8)
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_xscale("logit")
        ax.set_xticks([1e-6, 1e-3, 0.5, 1 - 1e-3], ["$10^{-6}$", "$10^{-3}$", "$\\frac{1}{2}$", "$1-10^{-3}$"])
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.set(yscale="log", ylim=(1e-4, 1e3))
        ax.set_title(f"$d = {d}$, $\\alpha = {alpha:g}$, $n = 10^{round(math.log10(n))}$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"error / ($n$ tr $\Sigma$)")
    for ax in axes[-1]:
        ax.set_xlabel("clipping probability $p_C$")
    handles = [plt.Line2D([], [], color=colors[m], label=label) for m, label in names.items()]
    handles += [plt.Line2D([], [], color="0.3", ls=ls, label=lab) for ls, lab in (("-", "total"), (":", "noise"),
                                                                                    ("--", "clipping"))]
    fig.legend(handles=handles, loc="outside lower center", ncol=5)
    return fig


def ratio_panel(ax: Any, ratios: Mapping[str, Any], *, band: Any, ticks: Sequence[str],
                reference: str, ylim: tuple[float, float] = (0.01, 30.0)) -> None:
    """One panel of chapter 9's figure of errors relative to a reference method, drawn on ``ax``.

    ``ratios`` maps an arm (a name of :data:`egmbook.arm_styles.ARM_STYLES`) to its error over the
    ``reference`` arm's, one value per dataset (the x axis, labelled ``ticks``); ``band`` is, per
    dataset, the lower edge of a grey bar from 1 to 2 times it (the better peer's ratio).  The arms
    sit side by side within a dataset with their markers (open for oracle and private-input
    variants); a value above the axis is drawn at its top with a black edge.  Log scale, 1 marked
    by a line in the reference's colour.
    """
    from egmbook.arm_styles import ARM_STYLES

    if not isinstance(ratios, Mapping):
        raise TypeError(f"ratios must be a mapping from arm names to ratios, got ratios of type "
                        f"{type(ratios).__name__}")
    if not ratios:
        raise ValueError("ratios must name at least one arm, got an empty mapping")
    if not isinstance(reference, str):
        raise TypeError(f"reference must be the name of an arm of ARM_STYLES, got reference of type "
                        f"{type(reference).__name__}")
    unknown = [a for a in [*ratios, reference] if a not in ARM_STYLES]
    if unknown:
        raise ValueError(f"ratios and reference must name arms of ARM_STYLES, got {unknown}")
    if isinstance(ticks, (str, bytes)) or not isinstance(ticks, Sequence) or not all(isinstance(t, str) for t in ticks):
        raise TypeError(f"ticks must be a sequence of strings (the datasets' names), got ticks={ticks!r:.60}")
    if not ticks:
        raise ValueError("ticks must name at least one dataset, got none")
    low, high = check_positive_vector("ylim", ylim, length=2, of="the axis' lower and upper limits")
    if not low < high:
        raise ValueError(f"ylim must be increasing, got ylim=({low!r}, {high!r})")
    ylim = (low, high)
    band = as_real_array("band", band, ndim=1)
    x = np.arange(len(ticks))
    if band.shape != x.shape:
        raise ValueError(f"band must have one value per tick ({len(ticks)} in ticks), got band of shape {band.shape}")
    if any(np.shape(v) != x.shape for v in ratios.values()):
        raise ValueError(f"every ratio must have one value per tick ({len(ticks)} in ticks), got other lengths")
    for xi, b in zip(x, band, strict=True):
        ax.fill_between([xi - 0.42, xi + 0.42], b, 2 * b, color="0.85", lw=0)
    ax.axhline(1.0, color=ARM_STYLES[reference].color, lw=1.2)
    arms = list(ratios)
    for k, a in enumerate(arms):
        st = ARM_STYLES[a]
        y = np.asarray(ratios[a], dtype=float)
        xs = x + 0.6 * (k / max(len(arms) - 1, 1) - 0.5)  # side by side within a dataset
        top = y > ylim[1]
        face = st.color if st.filled else "white"
        ax.plot(xs[~top], y[~top], ls="none", marker=st.marker, color=st.color, ms=5, mfc=face)
        ax.plot(xs[top], np.full(int(top.sum()), 0.75 * ylim[1]), ls="none", marker=st.marker, color=st.color,
                ms=6, mec="k", mew=0.8)
    ax.set(yscale="log", ylim=ylim, xlim=(-0.6, len(ticks) - 0.4))
    marks = [v for v in (0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100) if ylim[0] <= v <= ylim[1]]
    ax.set_yticks(marks, [f"{v:g}" for v in marks])
    ax.yaxis.set_minor_locator(_null_locator())
    ax.set_xticks(x, list(ticks), rotation=45, ha="right")
    ax.xaxis.grid(False)


def _null_locator() -> Any:
    from matplotlib.ticker import NullLocator

    return NullLocator()
