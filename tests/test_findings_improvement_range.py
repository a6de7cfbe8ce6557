"""Tests of egmbook.findings.improvement_range (chapters 5c and 5d) and egmbook.findings.report_review.

What is checked, and why it could fail:
- Corollary 5.G's sharpness: at n = 7 R < R_bar at (0.55, 0.45) in mpmath and in the library alike, not
  at n = 8; the equal-weights limit 1 - 3 (2 - ln n)/4 is Proposition 5.D(b)'s at d = 2, and the
  record's verdict flips when a margin has the wrong sign;
- the chi^2_1 quantile passes 3 at n = 13, not 12;
- equal weights minimise C_t^2 at n = 8 but not at n = 2 or 7 (d = 2);
- the uniform thresholds: for d = 2 the equal-weights failures end at 7 and the level-2 threshold is 8;
- the reduction's and Proposition 5.H's checks, with a verdict that a wrong input flips;
- the three-lens review: consistent with the errata page as it is, and a misranked or missing entry,
  an agreeing row with an erratum or a table not shown are caught;
- Section 4's counterexample: normal, uncorrelated coordinates whose squared norm is not chi^2_2.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from egmbook import improvement_margin
from egmbook.claims import errata_backing
from egmbook.findings import improvement_range as ir
from egmbook.findings import problem_setup, report_review

ERRATA = Path(__file__).resolve().parent.parent / "chapters" / "errata.md"


@pytest.fixture(scope="module")
def sharp():
    return ir.two_weight_sharpness(digits=20)


def test_two_weight_threshold_is_sharp(sharp):
    assert sharp.ok
    assert sharp.margin_n7 < -1e-4 and sharp.margin_n8 > 0
    assert abs(sharp.library_n7 - sharp.margin_n7) < 1e-8
    assert sharp.glue()["sharp-boundary"] == pytest.approx(math.e**2)
    for n, lim in zip(sharp.ns, sharp.limits, strict=True):
        assert lim == pytest.approx(improvement_margin.equal_weights_margin(2, n=n), abs=1e-9)
        assert (lim < 1) == (n <= 7)
    assert not dataclasses.replace(sharp, margin_n7=-sharp.margin_n7).ok
    assert not dataclasses.replace(sharp, near=(*sharp.near[:-1], -sharp.near[-1])).ok


def test_chi_one_quantile_passes_three_at_13():
    c = ir.chi_one_level()
    assert c.ok and c.n_first == 13 and c.q_before == pytest.approx(2.9987, abs=1e-4)
    assert not dataclasses.replace(c, n_first=12).ok


def test_equal_weights_smallest_radius_only_from_level_two():
    e = ir.equal_weights_radius()
    assert e.ok
    assert e.median_one == pytest.approx(0.4549, abs=1e-4) and e.median_equal == pytest.approx(math.log(2))
    assert e.min_n7 < math.log(7) and 0.2 < e.argmin_n7 < 0.5
    assert not dataclasses.replace(e, radius_n8=e.radius_n8[::-1]).ok


def test_uniform_thresholds_meet_for_two_coordinates():
    u = ir.uniform_thresholds({10: "1 of 1"})
    assert u.ok and u.fails_up_to[0] == 7 and u.nmin2_d10 == 35 and u.nmin3_d10 == 1168
    assert all(a <= b for a, b in zip(u.fails_up_to, [math.ceil(1 / p) for p in u.p2], strict=True))
    assert "1 of 1" in u.table().text
    assert not dataclasses.replace(u, fails_up_to=(8, *u.fails_up_to[1:])).ok


def test_level_three_record():
    """The record's logic on synthetic arrays (the computation itself runs in chapter 5d under nbval)."""
    shape = (3, 3, 4)
    alphas = np.array([0.05, 0.5, 1.0, 20.0])
    certified = np.ones(shape, dtype=bool)
    certified[1, 0, 1:3] = False  # d = 100, n = 1e2, alpha 0.5 and 1: where chapter 5d's misses lie
    ratio = np.where(certified, 1.2, 0.97)
    ct2 = np.full(shape, 2.5)
    ct2[2] = 3.5
    lv = ir.LevelThree(True, 1e-6, 0.8, 1e-8, certified, ratio, alphas, ct2)
    assert lv.ok and lv.covered == 34 and lv.grid == 36 and lv.covered2 == 36 and lv.covered3 == 12
    assert lv.missed_alpha == (0.5, 1.0) and lv.certified_by_d()[100] == "10 of 12"
    assert not dataclasses.replace(lv, ratio=np.where(certified, 0.99, 0.97)).ok  # R < R_bar where certified
    far = certified.copy()
    far[0, 2, 0] = False  # d = 10, n = 1e6: a miss where the chapter says there is none
    assert not dataclasses.replace(lv, certified=far).where_ok


def test_schur_reduction_verdict_flips_on_a_negative_stored_gap():
    scan = {"t": [0.01 * k for k in range(25)], "x_d2": [1.5, 1.9, 2.0, 3.0], "x_d": [2.0, 3.0],
            "rows": [{"gaps": [1e-4, 2e-4]}]}
    scan["gap_d2"] = [[improvement_margin.schur_ostrowski_gap(x, [1 - t, t]) if t > 0 else 0.0
                       for x in scan["x_d2"]] for t in scan["t"]]
    r = ir.schur_reduction(scan)
    assert r.lemma_ok and r.theorem_ok and r.part_c_ok and r.live_ok and r.d2_nonneg_above
    bad = dict(scan, rows=[{"gaps": [-1e-3, 2e-4]}])
    assert not ir.schur_reduction(bad).dn_nonneg_above


def test_review_is_consistent_with_the_errata_page():
    ranks = errata_backing([], ERRATA.read_text(encoding="utf-8"))
    page = "\n".join(report_review.list_table(lens, label=f"cov-tab-review-{k + 1}")
                     for k, lens in enumerate(report_review.LENSES))
    c = report_review.consistency(ranks, page)
    assert c.ok, (c.missing, c.misranked, c.unlinked)
    assert c.rows == len(report_review.ROWS) and sum(c.by_rank.values()) == c.rows
    assert not report_review.consistency(ranks, page.replace("cov-tab-review-2", "cov-tab-x")).tables_match
    moved = [dict(r, anchors=[a for a in r["anchors"] if a != "err-normal-marginals"]) for r in ranks]
    moved[0]["anchors"] = [*moved[0]["anchors"], "err-normal-marginals"]  # now under "change a result"
    assert any("err-normal-marginals" in m for m in report_review.consistency(moved, page).misranked)
    gone = [dict(r, anchors=[a for a in r["anchors"] if a != "err-theorem-1-boundary"]) for r in ranks]
    assert "err-theorem-1-boundary" in report_review.consistency(gone, page).missing
    with pytest.raises(ValueError, match="lens must be one of"):
        report_review.list_table("sideways", label="x")


def test_normal_marginals_counterexample():
    m = problem_setup.normal_marginals(draws=200_000)
    assert m.ok
    assert m.pclip_exact == pytest.approx(math.erfc(math.sqrt(m.radius2 / 4)), rel=1e-12)  # P(Z^2 > C^2 / 2)
    assert 3.0 < m.pclip_times_n < 3.3 and abs(m.zero_sum - 0.5) < 0.01
    assert not dataclasses.replace(m, zero_sum=0.0).ok
