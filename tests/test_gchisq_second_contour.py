"""egmlib.gchisq against a second contour (issue 14): clustered and multi-valued weights.

The tail at the quantile, for p from 1e-30 to 0.5, against the vertical line through the
saddlepoint in double precision with the weights summed by value
(``gchisq_reference.np_tail_vertical``: a contour that shares nothing with the engine's
planning; benchmarks/gchisq.py adds mpmath on the vertical line).  The slowest
check of gchisq (few effective weights make the integrand decay slowly, millions of
nodes), in a file of its own.
"""

import math
import warnings

import numpy as np
import pytest

from egmlib import gchisq

import gchisq_reference as ref

RTOL = 1e-10


def _dlogsf(dist, x, h=1e-6):
    return abs(dist.logsf(x * (1 + h)) - dist.logsf(x * (1 - h))) / (2 * h * x)


def _clustered_families():
    rng = np.random.default_rng(1414)
    fams = [
        ("1 over 600 near-equal", np.r_[1.0, 0.05 * (1 + 0.02 * rng.random(600))]),
        ("2 over 400 x 0.1 and 300 x 0.02", np.r_[1.0, 1.0, np.full(400, 0.1), np.full(300, 0.02)]),
        ("many multiplicities", np.repeat([1.0, 0.5, 0.2, 0.1, 0.05, 0.02], [1, 3, 10, 40, 150, 400])),
    ]
    for k in range(3):
        vals = 10.0 ** -rng.uniform(0, 2.5, rng.integers(2, 6))
        vals[0] = 1.0
        mult = rng.integers(1, 300, vals.size)
        mult[0] = rng.integers(1, 4)
        fams.append((f"random clusters {k}", np.repeat(vals, mult)))
    return fams


@pytest.mark.parametrize("name,w", _clustered_families(), ids=[f[0] for f in _clustered_families()])
def test_clustered_against_second_contour(name, w):
    """Clustered and multi-valued weights: sf at isf(p) against the vertical
    line in double precision with every weight summed one by one (a contour
    that shares nothing with the engine's planning), p from 1e-30 to 0.5."""
    dist = gchisq.WeightedChiSquare(w)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ps = np.array([1e-30, 1e-12, 1e-6, 1e-3, 0.1, 0.5])
        xs = dist.isf(ps)
        for p, x in zip(ps, xs, strict=True):
            lref = ref.vertical_logsf(w, x, upper=True)
            assert abs(float(dist.logsf(x)) - lref) <= RTOL, (name, p)
            assert abs(lref - math.log(p)) / (x * abs(_dlogsf(dist, x))) <= RTOL
