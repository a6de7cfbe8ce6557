"""The library holds no presentation (issue 29): the arms' labels and styles live in the book.

egmlib.peers.arms.ARMS keeps the estimators and the inputs they are given;
egmbook.arm_styles.ARM_STYLES shows every one of them, under the same names and in the same
order, and nothing else.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import matplotlib.colors as mcolors
import pytest

import egmlib.peers.arms as arms_module
from egmbook.arm_styles import ARM_STYLES, legend_handle
from egmlib.peers.arms import ARMS, Arm


def test_one_style_per_arm_in_the_registry_order():
    assert tuple(ARM_STYLES) == tuple(ARMS)


def test_the_registry_holds_no_presentation():
    fields = {f.name for f in dataclasses.fields(Arm)}
    assert fields == {"name", "estimator", "given", "accepts", "private", "normalised",
                      "self_normalised"}
    source = Path(arms_module.__file__).read_text()
    assert not re.search(r"chapter \d|#[0-9A-Fa-f]{6}\b|\$\\\\sigma\$", source)


def test_styles_are_drawable_and_told_apart():
    for name, s in ARM_STYLES.items():
        assert mcolors.is_color_like(s.color) and s.ls in ("-", "--", ":", "-.") and s.label, name
        assert "$" not in s.text
    seen = {(s.color, s.ls, s.marker) for s in ARM_STYLES.values()}
    assert len(seen) == len(ARM_STYLES)  # no two arms look alike in a figure
    assert ARM_STYLES["Alg3-oracle"].text == "Algorithm 3, σ and μ given"


def test_legend_handles():
    h = legend_handle("Alg3-oracle")
    assert h.get_label() == "Algorithm 3, σ and μ given" and h.get_markerfacecolor() == "white"
    assert legend_handle("IOME", reference=True).get_label() == "IOME (PLAN's adaptation) (reference)"
    with pytest.raises(ValueError, match="arm must be a name of ARM_STYLES"):
        legend_handle("Alg 3")
