"""Section 7c's findings (egmbook.findings.clipping_choice) on chapter 7's saved model computations."""

from __future__ import annotations

import dataclasses
import math

import pytest

from egmbook.beyond_report import load_beyond_report, tuning_table
from egmbook.findings import clipping_choice as cc

RES = load_beyond_report()


def test_tuning_holds_and_its_numbers_are_the_rows():
    tun = cc.tuning(RES)
    assert tun.ok
    assert tun.rows == tuning_table(RES) and len(tun.rows) == 48
    inn = tun.interior
    assert 0 < len(inn) < len(tun.rows) and all(r.both_on_grid for r in inn)
    g = tun.glue()
    assert g["interior-cells"] == len(inn) and isinstance(g["interior-cells"], int)
    assert g["gain-kept-max"] == 100 * max(r.improvement / r.figure2 for r in inn)
    assert g["gain-kept-min"] <= g["gain-kept-1e6-min"] <= g["gain-kept-max"] < 100
    assert 1 < g["tuning-gain-min"] <= g["tuning-gain-max"]
    assert g["clipped-1e3-min"] <= g["clipped-1e3-max"] <= 100
    # the optimal p_C falls with n: a negative power of n in every (d, alpha) fitted
    assert len(tun.slopes) == 6 and all(s < 0 for s in tun.slopes)
    assert all(isinstance(v, float) and math.isfinite(v) for k, v in g.items()
               if k not in ("worse-than-free", "below-grid-cells", "interior-cells"))
    assert f"{min(tun.kept):.1%}" in tun.statement and f"{tun.smaller_clipping}" in tun.evidence


def test_tuning_verdict_fails_when_a_row_contradicts_it():
    tun = cc.tuning(RES)
    first = tun.interior[0]
    # Algorithm 3's optimum no better than the baseline's in one configuration: the verdict must flip
    worse = dataclasses.replace(first, improvement=0.9)
    rows = tuple(worse if r is first else r for r in tun.rows)
    assert not dataclasses.replace(tun, rows=rows).ok


def test_free_optimum_is_bracketed_and_agrees_with_the_saved_one():
    free = cc.free_optimum(RES)
    assert free.ok and free.inside and free.headroom > 2
    assert free.live_log10_p < -8 and free.agreement < 0.1 and free.grid_end_factor > 1.2
    assert free.searches > 600
    g = free.glue()
    assert g["iso-p-exponent-min"] <= g["iso-p-exponent-max"] and g["live-grid-end-factor"] == free.grid_end_factor
    # an optimum at the grid's end, or one that disagrees with the saved search, fails the verdict
    assert not dataclasses.replace(free, live_log10_p=-7.5).ok
    assert not dataclasses.replace(free, stored_error=2 * free.live_error).ok
    assert not dataclasses.replace(free, inside=False).ok


def test_findings_refuse_other_results():
    for fn in (cc.tuning, cc.free_optimum):
        with pytest.raises(TypeError, match="res must be egmbook.beyond_report.BeyondReport"):
            fn(object())  # type: ignore[arg-type]
