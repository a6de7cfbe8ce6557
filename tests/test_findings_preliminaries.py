"""Chapter 2's findings (egmbook.findings.preliminaries): the deterministic ones recomputed
against an independent method, the Monte Carlo ones' verdicts on records built by hand."""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest
from scipy import optimize

from egmbook.findings import preliminaries as pre
from egmlib import calibration


def test_composition_eps_agrees_with_root_finding():
    comp = pre.gaussian_composition()
    assert comp.ok and comp.ks == (2, 10, 50)
    s = calibration.sigma_opt(eps=0.5, delta=1e-6)
    for k, e in zip(comp.ks, comp.exact_eps, strict=True):
        root = optimize.brentq(lambda x, k=k: calibration.privacy_profile(s, eps=x, sensitivity=math.sqrt(k))
                               - k * 1e-6, 1e-9, k * 0.5, xtol=1e-14)
        assert e == pytest.approx(root, rel=1e-9)
    assert "exact $\\varepsilon$ at $k\\delta$ 0.697" in comp.evidence


def test_rho_findings_hold():
    assert pre.rho_identity().ok and pre.rho_calibration().ok
    approx = pre.rho_approximation()
    assert approx.ok and approx.delta_at[1.0] > 1e-6 and approx.ratio[0.001] == pytest.approx(0.5, abs=1e-3)


def test_quadratic_form_is_exact():
    assert pre.quadratic_form().ok


def test_shared_noise_verdict():
    assert pre.SharedNoise(100, 0, (1.0, -4.4)).ok
    assert not pre.SharedNoise(100, 1, (1.0,)).ok  # one wrong decision with shared noise
    assert not pre.SharedNoise(100, 0, (4.6,)).ok  # independent noise off its law


def test_corollary_verdict_needs_every_report_value_outside():
    assert pre.Corollary21(19.4, 0.04, 19.42, (6.2, 9.2), 400_000).ok
    assert not pre.Corollary21(19.4, 0.04, 19.42, (6.2, 19.39), 400_000).ok
    assert not pre.Corollary21(19.4, 0.04, 19.5, (6.2,), 400_000).ok
    assert "report, $j = 2$" in pre.Corollary21(19.4, 0.04, 19.42, (6.2, 9.2), 10).table().text


def test_union_bound_verdict_and_evidence():
    u = pre.UnionBound(77885, 0.0027, 0.0021, 0.05, 0.0042)
    assert u.ok and "$n$ = 77885" in u.evidence
    assert not pre.UnionBound(77885, 0.049, 0.0021, 0.05, 0.0042).ok


def test_post_processing_table_and_box_evidence():
    rows = MappingProxyType({"post-processing": ("a",), "Monte Carlo $\\delta(1)$": (0.2,), "99% half-width": (0.01,),
                             "closed form": (0.2,), "against $\\delta_0$": ("unchanged",)})
    pp = pre.PostProcessing(rows, 0.22102, 0.0189657, True)
    assert "0.22102" in pp.table().text and "0.0189657" in pp.evidence
    assert not pre.BoxSensitivity(True, False, 1e-15).ok
