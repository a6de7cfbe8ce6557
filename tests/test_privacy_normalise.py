"""Public normalisation (egmlib.peers.normalise) and its use by the arms (issue 35, leaks 1 and 2).

* the map is public and per row: neighbours map to neighbours, bit for bit the other rows;
* it is the identity on the unit box, clamps rounding spill, and maps points and lengths back;
* the normalised arms release what their estimator releases on the caller's box with the same
  draws, up to rounding (normalisation changes only the range of the intermediates);
* issue 35's leaks 1 and 2 (an exception decided by one row at the edges of the double range):
  through the arms both neighbours release every time, and so does ESM's estimator called
  directly, which normalises its box at its entry.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from egmlib.peers import algorithm3_robust as ar
from egmlib.peers.arms import ARMS
from egmlib.peers.normalise import UnitBox, unit_box

FINITE = st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False, allow_subnormal=True)


@st.composite
def boxes(draw):
    lo = draw(FINITE)
    width = draw(st.floats(1e-320, 1e300, allow_subnormal=True))
    hi = lo + width
    if not (np.isfinite(hi) and hi > lo):
        hi = np.nextafter(lo, np.inf)
    return lo, hi


@settings(max_examples=300, deadline=None)
@given(boxes(), st.lists(FINITE, min_size=1, max_size=6))
def test_map_is_per_entry_into_the_unit_box_and_back_into_the_box(box, row):
    lo, hi = box
    m = unit_box(lower=lo, upper=hi)
    X = np.array([row, row])
    Xp = X.copy()
    Xp[1] = np.clip(Xp[1][::-1], lo, hi)  # a neighbour: the last row substituted
    T, Tp = m.to_unit(X), m.to_unit(Xp)
    assert np.all((T >= 0.0) & (T <= 1.0)) and np.all((Tp >= 0.0) & (Tp <= 1.0))
    assert np.array_equal(T[0], Tp[0])  # the shared row maps to the same bits
    back = m.from_unit(T)
    assert np.all((back >= lo) & (back <= hi))


def test_identity_on_the_unit_box_bit_for_bit():
    m = unit_box(lower=0.0, upper=1.0)
    x = np.array([[0.0, 5e-324, 1e-310, 0.1, 0.5, 1.0 - 2**-53, 1.0]])
    assert np.array_equal(m.to_unit(x), x) and np.array_equal(m.from_unit(x[0]), x[0])
    assert np.array_equal(m.length_from_unit([0.25, 5e-324]), [0.25, 5e-324])


def test_clamps_spill_and_maps_lengths():
    m = unit_box(lower=0.1, upper=0.3)
    T = m.to_unit([[0.1, 0.3, 0.3000000000000001, -5.0]])
    assert T.tolist() == [[0.0, 1.0, 1.0, 0.0]]
    assert m.from_unit([1.0 + 1e-15, -1e-15]).tolist() == [0.3, 0.1]
    assert np.isclose(m.length_to_unit([0.05])[0], 0.25)
    assert np.isclose(m.length_from_unit(0.25), 0.05)
    with pytest.raises(ValueError, match="lower must be < upper"):
        unit_box(lower=1.0, upper=1.0)
    with pytest.raises(ValueError, match="upper - lower must be finite"):
        unit_box(lower=-1.7e308, upper=1.7e308)
    assert isinstance(unit_box(lower=-1e308, upper=1e308 * 0.7), UnitBox)


NORMALISED = [name for name, arm in ARMS.items() if arm.normalised]


def test_normalised_arms_are_the_affine_equivariant_ones():
    assert set(NORMALISED) == {"Alg3-private", "Alg3-private-centre", "Alg3-oracle", "CoinPress",
                               "CoinPress-authors"}
    # ESM and PLAN's last step on its inputs map the box to the unit box themselves, at their entry
    assert {name for name, arm in ARMS.items() if arm.self_normalised} == {"Alg3", "PLAN-last-step"}


@pytest.mark.parametrize("name", NORMALISED)
@pytest.mark.parametrize("n", [120, 3000])
def test_normalisation_changes_nothing_but_the_intermediates(name, n):
    """Same draws, same release up to rounding, on both of ESM's paths (n = 120 takes the few-rows one)."""
    rng = np.random.default_rng(n)
    sigma = np.array([3.0, 1.0, 0.5, 2.0])
    X = 4.0 + sigma * rng.standard_normal((n, 4))
    arm = ARMS[name]
    given_inputs = {"sigma": sigma, "mu": np.full(4, 4.0)}
    kw = {g: given_inputs[g] for g in arm.given}
    a = arm(X, rho=0.5, lower=-30.0, upper=20.0, rng=np.random.default_rng(7), **kw)
    b = arm.estimator(X, rho=0.5, lower=-30.0, upper=20.0, rng=np.random.default_rng(7), **kw)
    assert getattr(a, "path", None) == getattr(b, "path", None)
    for field in ("estimate", "centre", "sigma", "noise_std", "C"):
        if getattr(b, field, None) is not None:
            assert np.allclose(getattr(a, field), getattr(b, field), rtol=1e-9, atol=1e-12), field


def _outcomes(f, X, lo, hi, runs):
    """(releases, exceptions) of ``runs`` seeded calls."""
    ok = 0
    for seed in range(runs):
        try:
            f(X, rho=1.0, lower=lo, upper=hi, rng=np.random.default_rng(seed))
            ok += 1
        except ValueError:
            pass
    return ok, runs - ok


def _leak1():
    B = 6.71e153
    X = np.full((50, 2), B)
    Xp = X.copy()
    Xp[-1] = -B
    return X, Xp, -B, B


def _leak2():
    w = 1e-157
    return np.array([[0.0], [w]]), np.zeros((2, 1)), 0.0, w


@pytest.mark.parametrize("leak", [_leak1, _leak2], ids=["overflow", "underflow"])
def test_leaks_1_and_2_closed_through_the_arm(leak):
    X, Xp, lo, hi = leak()
    assert _outcomes(ARMS["Alg3"], X, lo, hi, 20) == _outcomes(ARMS["Alg3"], Xp, lo, hi, 20) == (20, 0)


@pytest.mark.parametrize("leak", [_leak1, _leak2], ids=["overflow", "underflow"])
def test_leaks_1_and_2_inside_esm_called_directly(leak):
    X, Xp, lo, hi = leak()
    assert _outcomes(ar.algorithm3_robust, X, lo, hi, 10) == _outcomes(ar.algorithm3_robust, Xp, lo, hi, 10)


def test_box_check_of_the_unnormalised_arms():
    """PLAN's arms and IOME keep the caller's box: widths whose squares leave the normal range
    are refused up front, naming the box; the normalised arms take them."""
    from egmlib import validation as v

    assert v._LOG_SCALE_FLOOR == ar.LOG_SCALE_FLOOR
    X = np.zeros((10, 2))
    for w in (1e-149, 1.35e154):
        with pytest.raises(ValueError, match="upper - lower must lie in"):
            ARMS["PLAN"](X, rho=1.0, lower=0.0, upper=w, rng=np.random.default_rng(0))
        r = ARMS["Alg3"](X, rho=1.0, lower=0.0, upper=w, rng=np.random.default_rng(0))
        assert np.all((r.estimate >= 0.0) & (r.estimate <= w))
    for w in (1.5e-148, 1.3e154):
        ARMS["IOME"](X, rho=1.0, lower=0.0, upper=w, rng=np.random.default_rng(0))
