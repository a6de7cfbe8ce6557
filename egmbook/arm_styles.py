r"""How the book shows the arms of chapters 8 and 9: labels, plot styles and descriptions.

:data:`egmlib.peers.arms.ARMS` holds each arm's estimator and the inputs it is given; the
words and colours the book shows it with live here, under the same name, in
:data:`ARM_STYLES`.  One colour per family (Algorithm 3 blue, PLAN vermillion, IOME green,
CoinPress orange; the Okabe-Ito palette, which survives colour-vision deficiencies); within a
family the line style tells the variants apart, and arms given oracle inputs, and Algorithm 3
with private inputs, are drawn with open markers.

Examples
--------
>>> ARM_STYLES["Alg3-oracle"].text
'Algorithm 3, σ and μ given'
>>> ARM_STYLES["Alg3-oracle"].line
{'color': '#0072B2', 'ls': ':', 'marker': 'o'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["ARM_STYLES", "ArmStyle", "legend_handle"]

_BLUE, _VERMILLION, _PINK, _GREEN, _ORANGE, _GREY = ("#0072B2", "#D55E00", "#CC79A7", "#009E73",
                                                     "#E69F00", "#999999")


@dataclass(frozen=True)
class ArmStyle:
    """How one arm is shown: ``label`` may hold MathJax (tables, captions); ``text`` is the
    same without it (matplotlib legends, plain text); ``color``, ``ls`` and ``marker`` are
    matplotlib's keywords."""

    label: str
    color: str
    ls: str
    marker: str
    description: str = ""

    @property
    def text(self) -> str:
        """The label with its inline math as Unicode (σ, μ)."""
        return self.label.replace(r"$\sigma$", "σ").replace(r"$\mu$", "μ")

    @property
    def line(self) -> dict[str, str]:
        """``color``, ``ls`` and ``marker``, to pass to ``plot``."""
        return {"color": self.color, "ls": self.ls, "marker": self.marker}

    @property
    def filled(self) -> bool:
        """Filled markers, except for the dotted (oracle) and dash-dotted (Algorithm 3 with private inputs) variants."""
        return self.ls not in (":", "-.")


#: Arm name (the key of egmlib.peers.arms.ARMS) -> how the book shows it, in the tables' order.
ARM_STYLES: Mapping[str, ArmStyle] = MappingProxyType({
    "Alg3": ArmStyle(
        "ESM", _BLUE, "-", "o",
        "the elliptical scaled mean, the book's recommended estimator (chapter 9): private scales and centre, "
        "Algorithm 3's release at a radius with a private check"),
    "Alg3-private": ArmStyle(
        "Algorithm 3 with private inputs", _BLUE, "-.", "P",
        "chapter 8's end-to-end Algorithm 3: log scales, CoinPress centre, model radius"),
    "PLAN-last-step": ArmStyle(
        "PLAN's last step, ESM's private inputs", _VERMILLION, "--", "v",
        "the inputs of ESM, PLAN's private threshold: isolates the radius"),
    "PLAN": ArmStyle("PLAN", _VERMILLION, "-", "^", "Aumuller, Lebeda, Nelson and Pagh 2024"),
    "PLAN-noscale": ArmStyle("PLAN without scaling", _PINK, "-", "v"),
    "IOME": ArmStyle("IOME (PLAN's adaptation)", _GREEN, "-", "D",
                     "Huang, Liang and Yi 2021, as PLAN's experiments run it"),
    "CoinPress": ArmStyle(r"CoinPress, $\sigma$ given", _ORANGE, "--", "X",
                          "Biswas, Dong, Kamath and Ullman 2020, the paper's radius r + gamma(d, beta/n)"),
    "CoinPress-authors": ArmStyle(
        r"CoinPress, $\sigma$ given (authors' radius)", _ORANGE, ":", "x",
        "the authors' code's radius min(sqrt(r^2 + 6r + gamma^2), r + gamma)"),
    "Alg3-private-centre": ArmStyle(r"Algorithm 3, $\sigma$ given", _BLUE, "--", "s"),
    "Alg3-oracle": ArmStyle(r"Algorithm 3, $\sigma$ and $\mu$ given", _BLUE, ":", "o"),
    "PLAN-oracle": ArmStyle(r"PLAN's last step, $\sigma$ and $\mu$ given", _VERMILLION, ":", "^"),
    "empirical": ArmStyle("empirical mean (not private)", _GREY, "-", ""),
})


def legend_handle(arm: str, *, reference: bool = False) -> Any:
    """A legend entry for ``arm`` in the figures of chapters 8 and 9: its marker and line, or,
    for the ``reference`` arm that the others are divided by, a plain line labelled
    "(reference)"."""
    from matplotlib.lines import Line2D

    if not isinstance(arm, str):
        raise TypeError(f"arm must be an arm's name (a str), got arm of type {type(arm).__name__}")
    if arm not in ARM_STYLES:
        raise ValueError(f"arm must be a name of ARM_STYLES {list(ARM_STYLES)}, got arm={arm!r}")
    if not isinstance(reference, bool):
        raise TypeError(f"reference must be True or False, got reference of type {type(reference).__name__}")
    s = ARM_STYLES[arm]
    if reference:
        return Line2D([], [], color=s.color, lw=1.0, label=s.text + " (reference)")
    return Line2D([], [], color=s.color, ls=s.ls, marker=s.marker, ms=4.5, mfc=s.color if s.filled else "white",
                  label=s.text)
