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
    glued = tun.glue()
    assert set(glued) == set(cc.Tuning.GLUE)
    assert glued["interior-cells"] == len(inn) and isinstance(glued["interior-cells"], int)
    assert glued["configurations"] == 12 and glued["cells"] == 48
    assert glued["gain-kept-max"] == 100 * max(r.improvement / r.figure2 for r in inn)
    assert glued["share-above1-1e6-max"] == 100 * max((r.improvement - 1) / (r.figure2 - 1) for r in inn
                                                      if r.n == 10**6)
    # what survives grows with n: its largest share at n = 10^6 exceeds that at n = 10^3
    assert glued["share-above1-1e3-max"] < glued["share-above1-1e6-max"] <= glued["share-above1-max"]
    assert glued["share-above1-min"] <= glued["share-above1-1e6-min"]
    assert 1 < glued["tuning-gain-min"] and glued["clipped-1e3-min"] <= glued["clipped-1e3-max"] <= 100
    # the optimal p_C falls with n: a negative power of n in every (d, alpha) fitted
    assert len(tun.slopes) == 6 and all(s < 0 for s in tun.slopes)
    assert all(isinstance(v, int | float) and math.isfinite(v) for v in glued.values())
    assert f"{tun.above_one_1e6_max_pct:.0f} %" in tun.statement and f"{len(inn)} of" in tun.evidence


def test_tuning_tables_have_one_row_per_n_and_per_configuration():
    tun = cc.tuning(RES)
    by_n, full = tun.by_n_table(), tun.optima_table()
    assert len(by_n.cells) == len(RES.n_values) and len(full.cells) == len(tun.rows)
    assert "≈1" in {cell for row in full.cells for cell in row}   # optima below the grid are marked


def test_tuning_verdict_fails_when_a_row_contradicts_it():
    tun = cc.tuning(RES)
    first = tun.interior[0]
    # Algorithm 3's optimum no better than the baseline's in one configuration: the verdict must flip
    worse = dataclasses.replace(first, improvement=0.9)
    rows = tuple(worse if r is first else r for r in tun.rows)
    assert not dataclasses.replace(tun, rows=rows).ok


def test_realistic_centre_holds_and_clips_every_row_it_faces():
    real = cc.realistic_centre(RES)
    assert real.ok and real.cells == 24 and 0 < real.iso_loses < real.cells
    glued = real.glue()
    assert set(glued) == set(cc.RealisticCentre.GLUE)
    assert glued["real-iso-min"] < 1 < glued["real-exact-min"] < glued["real-prop-min"]
    # the isotropic optimum at d = 1000, alpha = 2: far beyond the smallest double by the exact centre's
    # law, yet it clips every row of the law it faces at n = 10^4
    at_1e4 = next(c for c in real.clipping if c.n == 10**4)
    assert at_1e4.log10_p_exact_law < -308 and at_1e4.p_offset_law > 0.99
    assert glued["iso-clip-all-n"] >= 10**4 and 0 < glued["iso-clip-1e6-pct"] < 100
    assert len(real.summary_table().cells) == len(RES.n_values) and len(real.full_table().cells) == real.cells


def test_realistic_centre_verdict_flips_on_a_contradicting_cell():
    real = cc.realistic_centre(RES)
    first = real.rows[0]
    # a proportional offset that hurts Algorithm 3 relative to the exact centre contradicts the statement
    rows = (dataclasses.replace(first, proportional=0.5 * first.exact), *real.rows[1:])
    assert not dataclasses.replace(real, rows=rows).ok
    # no cell where the isotropic centre makes Algorithm 3 lose: the "below 1 in some cells" part fails
    rows = tuple(dataclasses.replace(r, isotropic=max(r.isotropic, 1.01)) for r in real.rows)
    assert not dataclasses.replace(real, rows=rows).ok
    # a radius that clips few of the rows it faces at n = 10^4 refutes the corrected statement
    clipping = tuple(dataclasses.replace(c, p_offset_law=0.3) if c.n == 10**4 else c for c in real.clipping)
    assert not dataclasses.replace(real, clipping=clipping).ok


def test_free_optimum_is_bracketed_and_agrees_with_the_saved_one():
    free = cc.free_optimum(RES)
    assert free.ok and free.inside and free.headroom > 2
    assert free.live_log10_p < -8 and free.agreement < 0.1 and free.grid_end_factor > 1.2
    assert free.searches > 600
    assert free.glue() == {"live-grid-end-factor": free.grid_end_factor, "searches": free.searches}
    # an optimum at the grid's end, or one that disagrees with the saved search, fails the verdict
    assert not dataclasses.replace(free, live_log10_p=-7.5).ok
    assert not dataclasses.replace(free, stored_error=2 * free.live_error).ok
    assert not dataclasses.replace(free, inside=False).ok


def test_findings_refuse_other_results():
    for finding in (cc.tuning, cc.realistic_centre, cc.free_optimum):
        with pytest.raises(TypeError, match="res must be egmbook.beyond_report.BeyondReport"):
            finding(object())  # type: ignore[arg-type]
