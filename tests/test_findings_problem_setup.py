"""Chapter 4's findings (egmbook.findings.problem_setup): verdicts on the computed records and
flipped on records moved past their thresholds."""

from __future__ import annotations

import dataclasses
import math

from egmbook.findings import problem_setup as ps


def test_corrected_algorithm3_against_the_literal_pseudo_code():
    a = ps.corrected_algorithm3()
    assert a.ok and a.n_clipped == 0 and a.n == 1000
    assert math.isclose(a.factor, a.literal[0] / a.truth[0]) and a.factor > 3
    assert not dataclasses.replace(a, literal=a.truth).ok  # the pseudo-code would then be right
    assert "the report, literally" in a.table().text


def test_public_inputs_and_noise_error():
    pub = ps.public_inputs()
    assert pub.ok and len(pub.public) == len(pub.from_data) == 10 and pub.data_scale > 1.1
    assert not dataclasses.replace(pub, public=((1.0 + 1e-6, 0.0),)).ok
    ne = ps.noise_error()
    assert ne.ok and math.isclose(ne.closed, ne.eq24, rel_tol=1e-12)
    assert not dataclasses.replace(ne, z=4.1).ok


def test_clipped_rows_statistics():
    r = ps.ClippedRows(1000, 10_000, 1.005, 0.634)
    assert r.ok and math.isclose(r.p_any, 1 - (1 - 1e-3) ** 1000)
    assert abs(r.z_mean - 0.5) < 0.01
    assert not dataclasses.replace(r, mean=1.05).ok  # 5 standard errors from one clipped row
    assert set(r.glue()) == {"clipped-any-1e2", "clipped-any-1e3", "clipped-any-1e6"}


def test_eq25_grows_with_the_mean():
    e = ps.uncentred_eq25()
    assert e.ok and e.small < e.large and e.probs[3.0] > 0.99
    flat = dict(e.probs)
    flat[0.5] = flat[1.0]
    assert not dataclasses.replace(e, probs=flat).ok


def test_clipped_sensitivity_verdict():
    s = ps.ClippedSensitivity(1.5, 0.84, 2.97, 3.0)
    assert s.ok and not dataclasses.replace(s, largest_move=3.01).ok and not dataclasses.replace(s, antipodal=2.9).ok
