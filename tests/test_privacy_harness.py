"""The sensitivity harness over the whole double range (issue 35): every private arm, each of ESM's paths.

For box widths on a log grid from 1e-300 to 1e300, boxes centred at 0 and far from it, and
neighbouring datasets built at the box's extremes -- every row at one corner and one row moved
to the opposite corner, mixed corners with one flipped, every row tied at the centre and one
moved by 1e-9 of the width, cancelling pairs (centre +- w/4) with one flipped -- the harness
checks two things:

1. **No exception that data decide.**  For each arm and box, every call (both neighbours of
   every pair, every seed) has the same outcome: all release, or all raise the same public
   refusal.  An exception that one row decides is a release with unbounded privacy loss.
2. **No release outside its noise** (ESM, each forced path).  The proof conditions on the
   intermediate releases (scales, centres, radii, thresholds): given them, the final step is a
   Gaussian mechanism on a clipped sum.  The harness couples the two neighbours the same way: ESM
   runs on X, recording each intermediate release and its generator's state after it; on X' it
   runs again from the same seed with those releases and states replayed (:class:`Replay`), so the
   intermediates are equal bit for bit and the final noise is the same draw.  (Neighbours whose
   intermediates come out equal by themselves no longer arise on the paths that buy scales: the
   paired scales and CoinPress's first step see every row.)  The two final releases then differ
   only through the clipped sum, so ``n b (estimate - estimate')`` must be within the sum's stated
   sensitivity (:func:`egmlib.clipping.sum_sensitivity`) plus the rounding of the last steps.  A
   control with a quarter of the stated sensitivity must fail there, on every path.

ESM's paths are read from ``RobustResult.path``'s ``Literal`` type where it has one (the
forced paths of :func:`egmlib.peers.algorithm3_robust.algorithm3_robust`), so a path added
later is covered.  The work is counted, not timed: the CI profile makes ``CI_CALLS_PER_VARIANT``
calls per variant (every private arm and every path; a minute or two in all);
``PRIVACY_HARNESS=large python -m pytest -n 0 tests/test_privacy_harness.py`` runs the larger
profile (every tenth decade, more rows, dimensions and seeds; much longer).
"""

from __future__ import annotations

import copy
import functools
import math
import os
import typing
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from egmlib import clipping
from egmlib.peers import algorithm3_robust as ar
from egmlib.peers import iome as _iome
from egmlib.peers import plan as _plan
from egmlib.peers.arms import ARMS, Arm
from egmlib.peers.hadamard import random_hadamard
from egmlib.peers.normalise import unit_box

LARGE = os.environ.get("PRIVACY_HARNESS", "") == "large"

#: Box widths: a log grid over the double range, and the widths of issue 35's two leaks
#: (2 x 6.71e153, whose squared half-differences overflowed, and 1e-157, whose floor underflowed).
WIDTHS = sorted({*(10.0 ** np.arange(-300, 301, 10 if LARGE else 100)), 1.342e154, 1e-157})
ROWS = (2, 3, 16, 200) if LARGE else (16,)
DIMS = (1, 3) if LARGE else (2,)
SEEDS = range(3) if LARGE else range(1)
RHO = 1.0


def _paths() -> tuple[str, ...]:
    """ESM's forced paths: the Literal values of RobustResult.path."""
    hint = typing.get_type_hints(ar.RobustResult).get("path")
    values = typing.get_args(hint) if typing.get_origin(hint) is typing.Literal else ()
    return tuple(values) or ("algorithm3", "iome")


PATHS = _paths()


def _variants() -> dict[str, Arm]:
    """Every private arm, and ESM forced onto each path (normalised as its arm is)."""
    out = {f"ESM, {p} path": Arm(ARMS["Alg3"].name, functools.partial(ar.algorithm3_robust, path=p),
                                 normalised=ARMS["Alg3"].normalised) for p in PATHS}
    out.update({name: arm for name, arm in ARMS.items() if arm.private})
    return out


VARIANTS = _variants()


def _boxes(w: float) -> list[tuple[float, float]]:
    """[-w/2, w/2], [0, w] and [o, o + w] with o = 1e8 w (where finite)."""
    out = [(-0.5 * w, 0.5 * w), (0.0, w)]
    o = 1e8 * w
    if math.isfinite(o + w) and o + w > o:
        out.append((o, o + w))
    return out


@dataclass(frozen=True)
class Pair:
    kind: str
    X: np.ndarray
    Xp: np.ndarray  #: X with its last row substituted


def _pairs(lo: float, hi: float, n: int, d: int, rng: np.random.Generator) -> list[Pair]:
    """The neighbouring datasets of the module docstring, in the box [lo, hi]."""
    w = hi - lo
    mid = lo + 0.5 * w
    out = []
    X = np.full((n, d), lo)
    Xp = X.copy()
    Xp[-1] = hi
    out.append(Pair("corners", X, Xp))
    X = np.where(rng.random((n, d)) < 0.5, lo, hi)
    Xp = X.copy()
    Xp[-1] = np.where(X[-1] == lo, hi, lo)
    out.append(Pair("mixed corners", X, Xp))
    X = np.full((n, d), mid)
    Xp = X.copy()
    Xp[-1] = mid + 1e-9 * w
    if np.any(Xp[-1] != X[-1]):
        out.append(Pair("ties", X, Xp))
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[:, None]
    X = mid + signs * (0.25 * w) * np.ones((1, d))
    Xp = X.copy()
    Xp[-1] = X[-2]
    out.append(Pair("cancelling", X, Xp))
    return out


def _given(arm: Arm, lo: float, hi: float, d: int) -> dict[str, Any]:
    values = {"sigma": np.full(d, 0.25 * (hi - lo)), "mu": np.full(d, lo + 0.5 * (hi - lo))}
    return {g: values[g] for g in arm.given}


def _outcome(arm: Arm, X: np.ndarray, lo: float, hi: float, seed: int) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            arm(X, rho=RHO, lower=lo, upper=hi, rng=np.random.default_rng(seed), **_given(arm, lo, hi, X.shape[1]))
    except Exception as exc:  # noqa: BLE001 - every exception is an outcome
        return f"{type(exc).__name__}: {str(exc)[:80]}"
    return "release"


def _cases(rows: tuple[int, ...] = ROWS, dims: tuple[int, ...] = DIMS) -> list[tuple[float, float, int, int]]:
    return [(lo, hi, n, d) for w in WIDTHS for lo, hi in _boxes(w) for n in rows for d in dims]


CASES = _cases()
#: Rows at which ESM's IOME searches the whole box (egmlib.peers.algorithm3_robust.whole_box_tracks at
#: d = 2, rho = 1; at ROWS it searches the caller's box): the IOME path is checked at both.
WHOLE_BOX_ROWS = (200,)
#: Rows and dimensions at which ESM's IOME path runs its reach test first
#: (egmlib.peers.algorithm3_robust.reach_test_runs at rho = 1; at ROWS it is too noisy to run, at
#: WHOLE_BOX_ROWS the whole box tracks).
REACH_ROWS, REACH_DIMS = (80,), (8,)
#: The calls of the CI profile per variant (the work guard: the harness makes exactly these): 9 widths
#: (7 decades of the grid and the two leaks'), each in 3 boxes, with 4 pairs in the 2 boxes centred at
#: 0 or starting at it and 3 in the offset box (whose ties round away), 2 datasets per pair, 1 seed:
#: 9 x (4 + 4 + 3) x 2 = 198.
CI_CALLS_PER_VARIANT = 198
#: The variants: ESM on each of its paths and every private arm of the registry.
PRIVATE_ARMS = tuple(name for name, arm in ARMS.items() if arm.private)


def exception_findings(variant: str, rows: tuple[int, ...] = ROWS,
                       dims: tuple[int, ...] = DIMS) -> tuple[list[str], int]:
    """Boxes where the outcomes of ``variant`` differ between datasets or seeds, and the calls made."""
    arm = VARIANTS[variant]
    problems, calls = [], 0
    for lo, hi, n, d in _cases(rows, dims):
        seen: dict[str, list[str]] = defaultdict(list)
        for pair in _pairs(lo, hi, n, d, np.random.default_rng(n * 10 + d)):
            for which, X in (("X", pair.X), ("X'", pair.Xp)):
                for seed in SEEDS:
                    seen[_outcome(arm, X, lo, hi, seed)].append(f"{pair.kind} {which} seed {seed}")
                    calls += 1
        if len(seen) > 1:
            problems.append(f"box [{lo:.3g}, {hi:.3g}], n={n}, d={d}: "
                            + "; ".join(f"{k} ({len(v)}x, e.g. {v[0]})" for k, v in seen.items()))
    return problems, calls


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_no_exception_that_the_data_decide(variant):
    problems, calls = exception_findings(variant)
    expected = sum(2 * len(_pairs(lo, hi, n, d, np.random.default_rng(0))) * len(SEEDS) for lo, hi, n, d in CASES)
    assert calls == expected
    assert not problems, f"{variant}: " + "\n".join(problems[:10])


def test_the_profile_makes_the_calls_it_states():
    """The work guard: the CI profile's calls per variant (a change of the grid shows here), and a
    variant for each of ESM's paths and each private arm (a new path or arm shows here)."""
    per_variant = sum(2 * len(_pairs(lo, hi, n, d, np.random.default_rng(0))) * len(SEEDS) for lo, hi, n, d in CASES)
    if not LARGE:
        assert per_variant == CI_CALLS_PER_VARIANT, per_variant
    assert list(VARIANTS) == [f"ESM, {p} path" for p in PATHS] + list(PRIVATE_ARMS)
    assert set(PATHS) == set(typing.get_args(ar.Path)) >= {"algorithm3", "iome", "centred-iome", "plan"}
    assert min(WIDTHS) <= 1e-300 and max(WIDTHS) >= 1e300


# --------------------------------------------------------------------------------------- #
# releases within their noise (ESM, each path)
# --------------------------------------------------------------------------------------- #
_U = 2.0**-53


def _norm(v: np.ndarray) -> float:
    top = float(np.max(np.abs(v)))
    if top == 0.0:
        return 0.0
    e = math.frexp(top)[1]
    return math.ldexp(float(np.linalg.norm(np.ldexp(v, -e))), e)


class Replay:
    """Record ESM's intermediate releases on one dataset and replay them on its neighbour.

    Every function of ``STEPS`` is a private intermediate step of one of ESM's paths; each draws its
    noise from the generator it is passed.  In ``"record"`` mode a call runs and its output and the
    generator's state after it are kept; in ``"replay"`` mode the next kept output is returned and the
    generator set to the kept state, so the neighbour's run sees the same intermediate releases and
    draws the same final noise.  Only the final step runs on the neighbour's own rows.
    """

    STEPS = ((ar, "_paired_scales"), (ar, "_private_centre"), (ar, "_select_radius"), (ar, "_anchor"),
             (ar, "_reach_test"),
             (_iome, "binary_search_quantiles"),
             (_iome, "binary_search_quantile"), (_plan, "private_quantile"))

    def __init__(self) -> None:
        self.kept: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
        self.mode = "record"

    def __enter__(self) -> Replay:
        self._saved = [(m, name, getattr(m, name)) for m, name in self.STEPS]
        for m, name, original in self._saved:
            setattr(m, name, self._wrap(f"{m.__name__}.{name}", original))
        return self

    def __exit__(self, *exc: object) -> None:
        for m, name, original in self._saved:
            setattr(m, name, original)

    def _wrap(self, key: str, original: Any) -> Any:
        def step(*args: Any, **kwargs: Any) -> Any:
            rng = next(v for v in (*args, *kwargs.values()) if isinstance(v, np.random.Generator))
            if self.mode == "record":
                out = original(*args, **kwargs)
                self.kept[key].append((out, copy.deepcopy(rng.bit_generator.state)))
                return out
            out, state = self.kept[key].pop(0)
            rng.bit_generator.state = copy.deepcopy(state)
            return out
        return step

    def run(self, X: np.ndarray, Xp: np.ndarray, seed: int, path: str) -> tuple[Any, Any]:
        """ESM forced onto ``path`` (unit box) on X, then on Xp with X's intermediate releases."""
        self.kept.clear()
        self.mode = "record"
        r = ar.algorithm3_robust(X, rho=RHO, lower=0.0, upper=1.0, rng=np.random.default_rng(seed), path=path)
        self.mode = "replay"
        rp = ar.algorithm3_robust(Xp, rho=RHO, lower=0.0, upper=1.0, rng=np.random.default_rng(seed), path=path)
        assert not any(self.kept.values()), "the neighbour's run made fewer private steps"
        return r, rp


def _moved_release(r: Any, rp: Any, n: int) -> tuple[float, float]:
    """(the releases' difference in sum units, the bound it must meet) of two releases with the same
    intermediate releases and the same final noise."""
    assert r.path == rp.path and r.C == rp.C and np.array_equal(r.centre, rp.centre) and (
        (r.sigma is None and rp.sigma is None) or np.array_equal(r.sigma, rp.sigma))
    d = r.estimate.shape[0]
    if r.path in ("algorithm3", "plan"):
        # the final sum is of the rows times b, around the centre; PLAN's b is 1 / sqrt(Delta)
        b = (1.0 / np.sqrt(r.sigma * float(np.sum(r.sigma))) if r.path == "algorithm3"
             else 1.0 / np.sqrt(_plan.plan_scaling(r.sigma)))
        moved = _norm((r.estimate - rp.estimate) * n * b)
        bound = clipping.sum_sensitivity(r.C, n=n, d=d) + 16.0 * _U * n * _norm(b) * (2.0 + _norm(r.noise_std * b * n))
    else:  # IOME's release, around the coarse centre or the box's: rotated back, an isometry of the padded space
        N = 1 << (d - 1).bit_length()
        moved = n * _norm(r.estimate - rp.estimate)
        bound = clipping.sum_sensitivity(r.C, n=n, d=N) + 64.0 * _U * n * math.sqrt(N) * (2.0 + 10.0 * float(
            np.max(r.noise_std)) * math.sqrt(N))
    return moved, bound


@functools.cache
def coupled_releases(path: str, rows: tuple[int, ...] = ROWS,
                     dims: tuple[int, ...] = DIMS) -> tuple[tuple[str, float, float], ...]:
    """ESM forced onto ``path``, on the unit box, on both neighbours of every pair coupled by
    :class:`Replay`: (what, the releases' difference, its bound).  On the boxes centred at 0, the
    corner and tie pairs, three seeds each."""
    out = []
    for lo, hi, n, d in _cases(rows, dims):
        if lo != -hi:
            continue
        box = unit_box(lower=lo, upper=hi)
        for pair in _pairs(lo, hi, n, d, np.random.default_rng(n * 10 + d)):
            if pair.kind not in ("corners", "ties"):
                continue
            for seed in range(3 * len(SEEDS)):
                with warnings.catch_warnings(), Replay() as replay:
                    warnings.simplefilter("ignore", RuntimeWarning)
                    r, rp = replay.run(box.to_unit(pair.X), box.to_unit(pair.Xp), seed, path)
                out.append((f"box [{lo:.3g}, {hi:.3g}] n={n} d={d} {pair.kind} seed {seed}",
                            *_moved_release(r, rp, n)))
    return tuple(out)


def release_findings(path: str, *, scale: float = 1.0, rows: tuple[int, ...] = ROWS,
                     dims: tuple[int, ...] = DIMS) -> tuple[list[str], int]:
    """The coupled pairs whose releases moved beyond ``scale`` times their bound, and the pairs compared."""
    rows = coupled_releases(path, rows, dims)
    return [f"{what}: moved {moved:.6g} > {scale:g} x bound {bound:.6g}"
            for what, moved, bound in rows if moved > scale * bound], len(rows)


@functools.cache
def final_statistics() -> tuple[tuple[str, float, float], ...]:
    """The statistic of ESM's last step before noise, on both neighbours, at the centre, scales and
    radius ESM released on X (algorithm3 path, unit box): (what, its move, the stated sensitivity)."""
    out = []
    for lo, hi, n, d in CASES:
        box = unit_box(lower=lo, upper=hi)
        for pair in _pairs(lo, hi, n, d, np.random.default_rng(n * 10 + d)):
            U, Up = box.to_unit(pair.X), box.to_unit(pair.Xp)
            r = ar.algorithm3_robust(U, rho=RHO, lower=0.0, upper=1.0, rng=np.random.default_rng(0), path="algorithm3")
            assert r.sigma is not None  # Algorithm 3's path releases its scales
            b = 1.0 / np.sqrt(r.sigma * float(np.sum(r.sigma)))
            T, Tp = (clipping.clipped_sum(A, C=r.C, mu_hat=r.centre, b=b).total for A in (U, Up))
            out.append((f"box [{lo:.3g}, {hi:.3g}] n={n} d={d} {pair.kind}", _norm(T - Tp),
                        clipping.sum_sensitivity(r.C, n=n, d=d)))
    return tuple(out)


@pytest.mark.parametrize("path", PATHS)
def test_releases_move_within_the_sensitivity_on_coupled_noise(path):
    problems, compared = release_findings(path)
    assert compared >= 1, "no coupled pair had equal intermediate releases: the check did not run"
    assert not problems, "\n".join(problems[:10])


def test_last_statistic_moves_within_the_sensitivity_at_the_released_inputs():
    rows = final_statistics()
    assert len(rows) == sum(len(_pairs(lo, hi, n, d, np.random.default_rng(0))) for lo, hi, n, d in CASES)
    assert not [r for r in rows if r[1] > r[2]], [r for r in rows if r[1] > r[2]][:5]


def test_the_checks_catch_a_quarter_of_the_sensitivity():
    """Controls: with a quarter of the stated sensitivity, the corner pairs (which attain C or 2C) fail,
    on every path."""
    assert any("corners" in what for what, moved, bound in final_statistics() if moved > 0.25 * bound)
    for path in PATHS:
        assert any("corners" in p for p in release_findings(path, scale=0.25)[0]), path


def test_iome_over_the_whole_box_at_the_edges():
    """ESM's IOME searches the whole box where its bisection tracks (many rows); the CI rows take the
    caller's box.  At WHOLE_BOX_ROWS the forced IOME path takes the whole box: no exception that the
    data decide, coupled releases within the sensitivity, and the quarter-sensitivity control caught."""
    assert all(ar.whole_box_tracks(n, d=d, rho=RHO) for n in WHOLE_BOX_ROWS for d in DIMS)
    assert not any(ar.whole_box_tracks(n, d=d, rho=RHO) for n in ROWS for d in DIMS) or LARGE
    problems, calls = exception_findings("ESM, iome path", WHOLE_BOX_ROWS)
    assert calls == CI_CALLS_PER_VARIANT or LARGE
    assert not problems, "\n".join(problems[:10])
    problems, compared = release_findings("iome", rows=WHOLE_BOX_ROWS)
    assert compared >= 1 and not problems, "\n".join(problems[:10])
    assert any("corners" in p for p in release_findings("iome", scale=0.25, rows=WHOLE_BOX_ROWS)[0])


def test_iome_reach_test_at_the_edges():
    """Where the reach test runs, the forced IOME path at REACH_ROWS x REACH_DIMS: no exception that the
    data decide, coupled releases (the test's noisy release replayed, so both neighbours search the same
    box) within the sensitivity, and the quarter-sensitivity control caught.  On the unit box the corner
    pairs' rows (all at 0) lie inside IOME's search and the tie pairs' (all at 1/2) beyond its reach,
    each more than 4 noise sds from the threshold, so the test sends IOME over the whole box in some
    pairs and not in others."""
    assert all(ar.reach_test_runs(n, d=d, rho=RHO) for n in REACH_ROWS for d in REACH_DIMS)
    assert not any(ar.reach_test_runs(n, d=d, rho=RHO) for n in ROWS + WHOLE_BOX_ROWS for d in DIMS) or LARGE
    n, d = REACH_ROWS[0], REACH_DIMS[0]
    R = random_hadamard(d, rng=np.random.default_rng(0))
    sd = ar._reach_sensitivity(n, d, 0.0, 1.0) / math.sqrt(2 * ar.REACH_SHARE * RHO)
    assert ar._reach_gap(np.zeros((n, d)), R, 0.0, 1.0) < 0.5 - 4 * sd < 0.5 + 4 * sd < ar._reach_gap(
        np.full((n, d), 0.5), R, 0.0, 1.0)
    problems, calls = exception_findings("ESM, iome path", REACH_ROWS, REACH_DIMS)
    assert calls == CI_CALLS_PER_VARIANT or LARGE
    assert not problems, "\n".join(problems[:10])
    problems, compared = release_findings("iome", rows=REACH_ROWS, dims=REACH_DIMS)
    assert compared >= 1 and not problems, "\n".join(problems[:10])
    assert any("corners" in p for p in release_findings("iome", scale=0.25, rows=REACH_ROWS, dims=REACH_DIMS)[0])
