"""Chapter 3's findings (egmbook.findings.algorithms): deterministic ones recomputed, verdicts flipped."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from egmbook.findings import algorithms as alg
from egmlib import calibration


def test_classical_thresholds_are_where_the_profile_crosses_delta():
    cl = alg.classical_calibration()
    assert cl.ok and cl.range_ok and cl.max_ratio > 16
    for t, delta in zip(cl.thresholds, alg.Classical.DELTAS, strict=True):
        sigma = lambda e, delta=delta: math.sqrt(2 * math.log(1.25 / delta)) / e  # noqa: E731
        assert calibration.privacy_profile(sigma(t * (1 - 1e-6)), eps=t * (1 - 1e-6)) <= delta
        assert calibration.privacy_profile(sigma(t * (1 + 1e-6)), eps=t * (1 + 1e-6)) > delta
    assert set(cl.glue()) == {"classical-max-ratio", "classical-limit-1e-3", "classical-limit-1e-10"}
    unbracketed = dataclasses.replace(cl, thresholds=(7.0, np.nan, 9.0))
    assert not unbracketed.range_ok


def test_ellipsoid_and_variance_reading():
    ell = alg.ellipsoid()
    assert ell.ok and np.allclose(ell.corners, 1e-6, rtol=1e-9) and not np.allclose(ell.on_report, 1e-6, rtol=0.01)
    var = alg.variance_reading()
    assert var.ok and var.rows["private"] == ("no", "no", "yes", "yes")
    assert var.glue() == {"variance-delta-low": var.rows["$\\delta$ with variance $\\sigma_{\\mathrm{opt}}$"][0],
                          "variance-sigma-high": var.rows["$\\sigma_{\\mathrm{opt}}$"][-1]}


def test_profile_verdict_needs_both_methods_and_monotony():
    prof = alg.profile_at_sigma_opt()
    assert prof.ok and prof.worst_lib < 1e-10
    assert not dataclasses.replace(prof, decreasing=False).ok
    rows = dict(prof.rows)
    rows["quadrature / $\\delta$ - 1"] = (2e-8,) + rows["quadrature / $\\delta$ - 1"][1:]
    assert not dataclasses.replace(prof, rows=rows).ok


@pytest.mark.slow
def test_theorem3_and_improvement():
    th3 = alg.theorem3_scaling()
    assert th3.ok and 1.0 <= th3.best_random < 1.1 and max(th3.gaps) < 1e-5
    imp = alg.improvement_range()
    assert imp.ok and list(imp.dominant) == sorted(imp.dominant)


def test_monte_carlo_evidence():
    mc = alg.MonteCarlo({"mechanism": ("Algorithm 1",), "formula": ("eq. (5)",), "predicted": (3187.6,),
                         "measured": (3183.4,), "99% half-width": (29.3,)}, 20000, 2.254, 2.253, True)
    assert mc.evidence == "20000 releases each; measured improvement 2.25, predicted 2.25"
    assert "3183.4" in mc.table().text
