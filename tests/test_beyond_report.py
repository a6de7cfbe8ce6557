"""egmbook.beyond_report: the typed loader of chapter 7's results.

What is checked, and why it could fail: the committed results file loads with every
record typed (integer keys for n, arrays for grids, ClippingOptimum, RadiusOptimum and
PrivacyCheck objects), so a renamed or dropped field in scripts/beyond_report.py fails here instead of
deep inside chapter 7; a record with a missing, unknown or mistyped field is a
ValueError naming the record and the field; a missing file says how to make it; every
stored optimum (exact centre, offsets, private centres) is a free search bracketed strictly
inside its range, never the end of a grid of p_C, and its p_C is the clipping probability of
its radius.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from egmbook import beyond_report as br
from egmbook.clipping_error import ClippingOptimum, RadiusOptimum, clipping_log10_probability
from egmbook.experiments import zipf_sigmas
from egmbook.privacy_check import ControlDelta, PrivacyCheck


@pytest.fixture(scope="module")
def raw():
    return json.loads(br.BEYOND_REPORT_PATH.read_text())


@pytest.fixture(scope="module")
def res():
    return br.load_beyond_report()


def test_committed_results_load_typed(res, raw):
    assert isinstance(res, br.BeyondReport) and not res.settings.quick
    assert res.n_values == (1000, 10**4, 10**5, 10**6)
    cfg = res.sweep.config(d=10, alpha=2.0)
    opt = cfg.methods["alg3"].opt[1000]
    assert isinstance(opt, ClippingOptimum)
    assert opt.p_opt == raw["B"]["configs"][2]["methods"]["alg3"]["opt"]["1000"]["p_opt"]
    assert isinstance(opt.search, RadiusOptimum) and opt.search.C == opt.C_opt
    assert res.settings.radius_range == (1e-3, 1e4)
    assert isinstance(res.sweep.p_grid, np.ndarray) and not res.sweep.p_grid.flags.writeable
    assert len(res.sweep.p_grid) == len(raw["B"]["p_grid"])
    assert len(res.direct) == len(raw["A"]) and len(res.estimated) == len(raw["D"])
    check = res.privacy[0].check
    assert isinstance(check, PrivacyCheck) and check.passed
    assert all(isinstance(c, ControlDelta) for c in check.controls.values())
    assert res.direct[-1].reps == 1 and res.direct[-1].total_ci is None  # one repetition: no interval


def test_config_lookup_names_the_arguments(res):
    with pytest.raises(ValueError, match="d and alpha must name a configuration"):
        res.sweep.config(d=11, alpha=2.0)


def _write(tmp_path, data):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    return path


def test_missing_unknown_and_mistyped_fields_are_errors(tmp_path, raw):
    bad = json.loads(json.dumps(raw))
    del bad["A"][0]["noise_pred"]
    with pytest.raises(ValueError, match=r"A\[0\] lacks the field 'noise_pred'"):
        br.load_beyond_report(_write(tmp_path, bad))
    bad = json.loads(json.dumps(raw))
    bad["D"][3]["surprise"] = 1
    with pytest.raises(ValueError, match=r"D\[3\] has unknown fields \['surprise'\]"):
        br.load_beyond_report(_write(tmp_path, bad))
    bad = json.loads(json.dumps(raw))
    bad["B"]["configs"][0]["methods"]["base"]["opt"]["1000"]["total"] = "1.0"
    with pytest.raises(ValueError, match=r"B.configs\[0\].methods\['base'\].opt\[1000\].total must be a number"):
        br.load_beyond_report(_write(tmp_path, bad))


def test_missing_file_and_wrong_path_type(tmp_path):
    with pytest.raises(FileNotFoundError, match="run python scripts/beyond_report.py"):
        br.load_beyond_report(tmp_path / "nope.json")
    with pytest.raises(TypeError, match="path must be a str or pathlib.Path"):
        br.load_beyond_report(3)


def test_tuning_table_recomputes_the_sweep(res, raw):
    """The typed summary of chapter 7 against the raw JSON, read without the loader."""
    rows = br.tuning_table(res)
    assert len(rows) == len(raw["B"]["configs"]) * len(res.n_values)
    for r in rows:
        cfg = next(c for c in raw["B"]["configs"] if (c["d"], c["alpha"]) == (r.d, r.alpha))
        oa, ob = cfg["methods"]["alg3"]["opt"][str(r.n)], cfg["methods"]["base"]["opt"][str(r.n)]
        assert r.improvement == pytest.approx(ob["total"] / oa["total"], rel=1e-12)
        assert r.figure2 == cfg["fig2_improvement"][str(r.n)]
        t = r.n * cfg["trace"]
        assert r.alg3_at_1n == pytest.approx(cfg["methods"]["alg3"]["at_1n"][str(r.n)]["total"] / t, rel=1e-12)
        assert r.ratio_of_improvements == pytest.approx(r.improvement / r.figure2)
        if 1 < r.improvement < r.figure2:  # then the share above 1 is the smallest of the three measures
            # (R - 1)/(F - 1) < R/F as R < F, and < ln R/ln F as ln(x)/(x - 1) decreases
            assert r.share_above_one < min(r.share_log, r.ratio_of_improvements)


def test_centre_improvements_against_raw(res, raw):
    out = br.centre_improvements(res, c=0.1)
    by = {(c["d"], c["alpha"], c["method"]): c for c in raw["C"]}
    r = next(x for x in out if (x.d, x.alpha, x.n) == (100, 2.0, 10**4))
    A, B = by[(100, 2.0, "alg3")], by[(100, 2.0, "base")]
    assert r.exact == pytest.approx(B["mse_star"]["10000"] / A["mse_star"]["10000"], rel=1e-12)
    for shape, got in (("prop", r.proportional), ("iso", r.isotropic)):
        a = A["offsets"][shape][0]["per_n"]["10000"]["ratio_reopt"] * A["mse_star"]["10000"]
        b = B["offsets"][shape][0]["per_n"]["10000"]["ratio_reopt"] * B["mse_star"]["10000"]
        assert got == pytest.approx(b / a, rel=1e-12)
    with pytest.raises(ValueError, match="c must be one of experiment C's offsets"):
        br.centre_improvements(res, c=0.3)
    with pytest.raises(TypeError, match="res must be a BeyondReport"):
        br.tuning_table({"B": raw["B"]})


def test_private_centre_records(res, raw):
    assert len(res.private_centre) == len(raw["E"])
    rec = res.private_centre[0]
    assert isinstance(rec, br.PrivateCentre) and rec.source in ("base", "alg3") and rec.method in ("alg3", "base")
    assert set(rec.per_n) == set(res.n_values)
    at = rec.per_n[res.n_values[0]]
    assert isinstance(at, br.PrivateCentreAtN) and at.ratio_1n > 0 and at.ratio_reopt > 0


def _searches(res):
    for c in res.sweep.configs:
        for m in c.methods.values():
            for o in m.opt.values():
                yield o.search
    for r in res.centre:
        for shape in ("prop", "iso"):
            for off in r.offsets[shape]:
                for v in off.per_n.values():
                    yield v.search
    for r in res.private_centre:
        for v in r.per_n.values():
            yield v.search


def test_every_optimum_is_bracketed_inside_its_search(res):
    """The isotropic centre's optimum lay beyond the first version's p_C grid (1e-8); no stored
    optimum may sit at the end of its range now."""
    found = list(_searches(res))
    assert len(found) == 672
    for s in found:
        assert 0 <= s.C_below < s.C < s.C_above < s.C_max
        assert s.value <= s.value_below and s.value <= s.value_above


def test_stored_optima_agree_with_their_records(res):
    for c in res.sweep.configs:
        sigma = zipf_sigmas(c.d, alpha=c.alpha)
        for method, m in c.methods.items():
            for o in m.opt.values():
                assert o.total == pytest.approx(o.search.value, rel=1e-12)
                assert o.below_grid == (o.C_opt < m.C[-1])
                if not o.below_grid:
                    lp = clipping_log10_probability(method, sigma=sigma, C=o.C_opt)
                    assert o.p_opt == pytest.approx(10**lp, rel=1e-9)
    iso = next(r for r in res.centre if (r.d, r.alpha, r.method) == (1000, 2.0, "alg3")).offsets["iso"][0]
    assert iso.per_n[10**6].log10_p_reopt < -300        # far below any float: stored as a logarithm
    for r in res.centre:
        for shape in ("prop", "iso"):
            for off in r.offsets[shape]:
                for n, v in off.per_n.items():
                    assert v.ratio_reopt * r.mse_star[n] == pytest.approx(v.search.value, rel=1e-12)
                    assert v.C_reopt == v.search.C
