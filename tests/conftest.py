"""Shared test configuration: hypothesis profiles and the strategies the test files share.

Profiles (choose with ``HYPOTHESIS_PROFILE=name``; ``default`` otherwise):

* ``default`` -- 60 examples per property, derandomized: every run (the README's test
  command, ``.ci/run``) draws the same examples, so that a test fails for a change in
  the code, never for the luck of a draw; no deadline (the machine is shared: timings
  are not what a property test checks), the "too slow" health check off because some
  strategies build whole datasets;
* ``nightly`` -- the same with fresh random examples on every run, to look for new
  counterexamples (a failure prints the example to add to the test with ``@example``);
* ``thorough`` -- 1000 random examples per property, for a run on a quiet machine.

A test that needs a different number of examples says so with its own
``@settings(max_examples=...)``, which inherits everything else from the profile.
Test files import the strategies with ``from conftest import ...`` (pytest puts this
directory on ``sys.path``).
"""

from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile(
    "nightly", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("default", settings.get_profile("nightly"), derandomize=True)
settings.register_profile("thorough", settings.get_profile("nightly"), max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: NaN and the two infinities.
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])

#: Finite floats of any sign.
finite = st.floats(allow_nan=False, allow_infinity=False)

#: Values that a "finite and > 0" argument must reject: zero, negatives, NaN, infinities.
bad_positive = st.one_of(st.floats(max_value=0.0, allow_nan=False), non_finite)

#: Values that a probability in the open interval (0, 1) must reject.
bad_probability = st.one_of(
    st.floats(max_value=0.0, allow_nan=False), st.floats(min_value=1.0, allow_nan=False), non_finite
)

#: eps from 1e-3 to 1e3 and delta from 1e-15 to 1/2, log-uniform: the calibration ranges.
log_eps = st.floats(min_value=-3.0, max_value=3.0).map(lambda x: 10.0**x)
log_delta = st.floats(min_value=-15.0, max_value=math.log10(0.5)).map(lambda x: 10.0**x)


def positive_vectors(lo: float = 1e-6, hi: float = 1e6, *, max_size: int = 30) -> st.SearchStrategy[list[float]]:
    """Non-empty lists of floats in [lo, hi]: standard deviations, sensitivities."""
    return st.lists(st.floats(min_value=lo, max_value=hi), min_size=1, max_size=max_size)
