"""egmbook.display.ratio_panel: chapter 9's panel of errors relative to a reference method."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from egmbook.arm_styles import ARM_STYLES  # noqa: E402
from egmbook.display import ratio_panel  # noqa: E402


def _panel(**kw):
    ax = Figure().subplots()
    args = dict(ratios={"Alg3": [0.5, 2.0, 100.0], "PLAN": [1.0, 1.5, 0.02]}, band=[0.5, 1.0, 0.02],
                ticks=["a", "b", "c"], reference="IOME")
    args.update(kw)
    ratio_panel(ax, **args)
    return ax


def test_markers_band_and_clipped_values():
    ax = _panel()
    assert ax.get_yscale() == "log" and ax.get_ylim() == (0.01, 30.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    lines = [ln for ln in ax.get_lines() if ln.get_marker() not in (None, "None", "")]
    inside = [ln for ln in lines if ln.get_markeredgecolor() != "k"]
    above = [ln for ln in lines if ln.get_markeredgecolor() == "k" and len(ln.get_xdata())]
    # ESM's 100 is above the axis: drawn at its top with a black edge; every other value where it is
    assert len(above) == 1 and np.allclose(above[0].get_ydata(), 0.75 * 30.0)
    assert sorted(np.concatenate([ln.get_ydata() for ln in inside]).tolist()) == [0.02, 0.5, 1.0, 1.5, 2.0]
    assert len(ax.collections) == 3  # one grey bar a dataset, from 1 to 2 times the better peer
    assert ax.get_lines()[0].get_color() == ARM_STYLES["IOME"].color  # the reference's line at 1


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="ARM_STYLES"):
        _panel(reference="nobody")
    with pytest.raises(ValueError, match="one value per tick"):
        _panel(band=[1.0, 2.0])
    with pytest.raises(ValueError, match="ratios"):  # an empty mapping is a bad value, as for every mapping
        _panel(ratios={})
    with pytest.raises(TypeError, match="ratios"):
        _panel(ratios=[0.5, 2.0, 100.0])
