"""Bit-for-bit fingerprint of egmlib.gchisq's public outputs (issue 29, item 3).

A refactoring of the tail engine must not change a single bit of what it returns.
This script evaluates sf, logsf, cdf, logcdf (on vectors of points from the smallest
positive double to the largest, the bulk and the far tails), isf and ppf (on
probabilities from 5e-324 to 1 - 2^-53) on a broad set of weight vectors -- the
families of the tests and of the benchmark: one weight, equal weights up to d = 10^5,
multiplicity two, Zipf weights (Figure 2's grid among them, and underflowing ones),
clusters of equal and near-equal weights under a few large ones, random clusters,
many multiplicities, ratios to 1e300, zeros and subnormals -- and records every value
with the warnings each call issued.

    python benchmarks/gchisq_fingerprint.py record FILE.npz    # before a change
    python benchmarks/gchisq_fingerprint.py compare FILE.npz   # after: bit-for-bit

``compare`` recomputes everything and reports, per family and function, whether the
values are bit-identical (NaN equal to NaN, +0 distinct from -0) and the warnings the
same; it exits with status 1 on any difference. Both print the SHA-256 of the whole
record. One BLAS thread, so that dot products sum in a fixed order.

Measured (issue 29): the split of gchisq's _core module into subjects left all 10289
values and their warnings bit-identical. The contour reuse for many points (issue 25)
then changed the values at points within 1 % of each other (the bulk near the mean,
where this record's grid is dense) by at most a few units in the last place.
"""

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse
import hashlib
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from egmbook.experiments import FIGURE2_ALPHA, FIGURE2_D, FIGURE2_N, zipf_sigmas
from egmlib import gchisq

#: Points x (raw, not scaled by the weights) from the smallest positive double to the largest.
WHOLE_RANGE = np.array([5e-324, 1e-320, 1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-8, 1e-3, 0.3, 1.0, 3.0,
                        30.0, 300.0, 3e3, 1e5, 1e8, 1e15, 1e30, 1e90, 1e100, 1e200, 1e300,
                        np.finfo(float).max, 0.0, -1.0, np.inf])
#: Multiples of the mean: the bulk, its neighbourhood (the pole at 0) and the tails.
MEAN_MULT = np.concatenate([[1e-6, 1e-3, 0.05, 0.2, 0.5, 0.9, 0.99, 0.999999, 1.0, 1.000001, 1.01, 1.1],
                            [1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 1e3, 1e4]])
P_UPPER = np.array([5e-324, 1e-300, 1e-100, 1e-30, 1e-15, 1e-12, 1e-9, 1e-7, 1e-6, 1e-4, 1e-3, 1e-2,
                    0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-9, 1 - 2.0 ** -53])
Q_LOWER = np.array([1e-300, 1e-100, 1e-15, 1e-6, 1e-2, 0.3, 0.6])


def families() -> Iterator[tuple[str, np.ndarray, bool]]:
    """(name, weights, light): light families get the whole grid, heavy ones (large d)
    a smaller one."""
    rng = np.random.default_rng(1414)
    yield "one weight", np.array([1.0]), True
    yield "one weight 3", np.array([3.0]), True
    yield "1, 0.5, 0.25", np.array([1.0, 0.5, 0.25]), True
    for d in (2, 3, 7, 10, 1000):
        yield f"equal d={d}", np.full(d, 0.37), True
    for v in ([1.0, 0.5], [1.0, 0.99], [1.0, 1e-3, 1e-6], [1.0, 0.3, 0.1, 0.03, 0.01], [1.0, 1e-100, 1e-300]):
        yield f"multiplicity two {v}", np.repeat(np.asarray(v), 2), True
    yield "zipf10 a1 sq", zipf_sigmas(10, alpha=1.0) ** 2, True
    yield "zipf10 a0.5 t", zipf_sigmas(10, alpha=0.5) / zipf_sigmas(10, alpha=0.5).sum(), True
    yield "one dominant + 5", np.array([1.0, 1e-2, 5e-3, 1e-3, 1e-4, 1e-5]), True
    yield "two dominant + tail", np.array([1.0, 0.8, 1e-3, 1e-3, 2e-4]), True
    yield "ratio 1e300", np.array([1.0, 1e-150, 1e-300]), True
    yield "zeros", np.r_[0.0, 0.0, 0.3, 0.7, 0.2, 0.0], True
    yield "subnormal", np.r_[1.0, 1e-310, 3e-320, 0.5], True
    yield "1, 1e-200 x2", np.r_[1.0, 1e-200, 1e-200], True
    yield "1, 1e-300", np.array([1.0, 1e-300]), True
    yield "zipf100 a1 sq", zipf_sigmas(100, alpha=1.0) ** 2, True
    yield "zipf1000 a0.1 t", zipf_sigmas(1000, alpha=0.1) / zipf_sigmas(1000, alpha=0.1).sum(), True
    yield "zipf1500 a0.5", zipf_sigmas(1500, alpha=0.5), True
    yield "zipf50 a100 sq (underflow)", zipf_sigmas(50, alpha=100.0) ** 2, True
    yield "d=2 [3, 1]", np.array([3.0, 1.0]), True
    yield "1 + 500 x 0.05", np.r_[1.0, np.full(500, 0.05)], True
    yield "1 + 500 x 0.1", np.r_[1.0, np.full(500, 0.1)], True
    yield "1 + 1000 x 0.05", np.r_[1.0, np.full(1000, 0.05)], True
    yield "2 + 500 x 0.05", np.r_[np.ones(2), np.full(500, 0.05)], True
    yield "2 x 1 + 100 x 0.2", np.r_[np.ones(2), np.full(100, 0.2)], True
    yield "5 x 1 + 1000 x 0.1", np.r_[np.ones(5), np.full(1000, 0.1)], True
    yield "near-equal 300", 1.0 + 0.01 * np.random.default_rng(3).random(300), True
    yield "1 over 600 near-equal", np.r_[1.0, 0.05 * (1 + 0.02 * rng.random(600))], True
    yield "2 over 400 x 0.1, 300 x 0.02", np.r_[1.0, 1.0, np.full(400, 0.1), np.full(300, 0.02)], True
    yield "many multiplicities", np.repeat([1.0, 0.5, 0.2, 0.1, 0.05, 0.02], [1, 3, 10, 40, 150, 400]), True
    for k in range(3):
        vals = 10.0 ** -rng.uniform(0, 2.5, rng.integers(2, 6))
        vals[0] = 1.0
        mult = rng.integers(1, 300, vals.size)
        mult[0] = rng.integers(1, 4)
        yield f"random clusters {k}", np.repeat(vals, mult), True
    yield "random uniform d=50", rng.random(50), True
    yield "equal d=1e5", np.full(100_000, 0.37), False
    yield "zipf1e5 a1 sq", zipf_sigmas(100_000, alpha=1.0) ** 2, False
    yield "zipf1e5 a0.25 t", zipf_sigmas(100_000, alpha=0.25) / zipf_sigmas(100_000, alpha=0.25).sum(), False


def figure2() -> Iterator[tuple[str, np.ndarray]]:
    """Figure 2's weight vectors (C_n^2 and C_t^2), quantiles at p = 1/n."""
    for d in FIGURE2_D:
        for a in FIGURE2_ALPHA:
            s = zipf_sigmas(d, alpha=a)
            yield f"fig2 d={d} a={a} n", s * s
            yield f"fig2 d={d} a={a} t", s / s.sum()


def blind_planner(repairs: bool) -> gchisq.engine_checks:
    """The planner without its hump analysis (as before issue 14), with or without
    the check contour's repairs: the paths that repair or warn, through the documented
    switch ``gchisq.engine_checks``. (The split of the engine's _core module into
    subjects, issue 29, was compared with a version of this function that patched _core's
    _hump_analysis and _REPAIRS: commit 5125af0.)"""
    return gchisq.engine_checks(hump_analysis=False, repairs=repairs)


def _call(fn: Callable[[], object]) -> tuple[np.ndarray, str]:
    """The call's value as a float array (an exception recorded as its text) and its warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            val = np.atleast_1d(np.asarray(fn(), dtype=float))
            exc = ""
        except Exception as e:  # noqa: BLE001 - recorded, not hidden
            val = np.zeros(0)
            exc = f"{type(e).__name__}: {e}"
    msgs = [f"{c.category.__name__}: {c.message}" for c in caught]
    return val, "\n".join(msgs + ([exc] if exc else []))


def record() -> dict[str, np.ndarray]:
    """Every value, keyed 'family | function'; warnings under 'family | function | warnings'."""
    out: dict[str, np.ndarray] = {}

    def put(key: str, fn: Callable[..., object], *args: Any, **kw: Any) -> None:
        val, msg = _call(lambda: fn(*args, **kw))
        out[key] = val
        out[key + " | warnings"] = np.array(msg)

    def one_at_a_time(dist: gchisq.WeightedChiSquare, xs: np.ndarray) -> list[float]:
        return [dist.logsf(float(x)) for x in xs]

    for name, w, light in families():
        dist = gchisq.WeightedChiSquare(w)
        mean = float(np.sum(w))
        xs = np.concatenate([WHOLE_RANGE, mean * MEAN_MULT]) if light else mean * MEAN_MULT[::2]
        ps = P_UPPER if light else P_UPPER[::3]
        for fname in ("sf", "logsf", "cdf", "logcdf"):
            put(f"{name} | {fname}", getattr(dist, fname), xs)
        # one point at a time (a batch of one plans alone)
        put(f"{name} | logsf scalar", one_at_a_time, dist, xs[:: 4 if light else 3])
        put(f"{name} | isf", dist.isf, ps)
        put(f"{name} | ppf", dist.ppf, Q_LOWER if light else Q_LOWER[::3])
        # the module-level functions (a fresh set-up each call)
        put(f"{name} | gchisq.sf", gchisq.sf, xs[-6:], w=w)
        put(f"{name} | gchisq.isf", gchisq.isf, ps[4:8], w=w)
    for name, w in figure2():
        put(f"{name} | isf 1/n", gchisq.isf, 1.0 / np.array(FIGURE2_N, dtype=float), w=w)
    put("equal d=1e6 | isf", gchisq.isf, np.array([1e-6, 0.5]), w=np.full(1_000_000, 0.37))
    blind = [("1 + 500 x 0.05", np.r_[1.0, np.full(500, 0.05)], [48.4532928336, 30.0, 80.0]),
             ("2 + 500 x 0.05", np.r_[np.ones(2), np.full(500, 0.05)], [40.0, 60.0, 100.0]),
             ("many multiplicities", np.repeat([1.0, 0.5, 0.2, 0.1, 0.05, 0.02], [1, 3, 10, 40, 150, 400]),
              [60.0, 90.0, 150.0])]
    for repairs in (True, False):
        with blind_planner(repairs):
            for name, w, xs in blind:
                tag = f"blind planner{'' if repairs else ', no repairs'} {name}"
                put(f"{tag} | logsf", gchisq.logsf, np.array(xs), w=w)
                put(f"{tag} | isf", gchisq.isf, np.array([1e-7, 1e-3, 0.3]), w=w)
    return out


def digest(rec: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for k in sorted(rec):
        h.update(k.encode())
        v = rec[k]
        h.update(v.tobytes() if v.dtype.kind == "f" else str(v).encode())
    return h.hexdigest()


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        return str(a) == str(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("mode", choices=("record", "compare"), help="record a fingerprint, or compare with one")
    ap.add_argument("file", help="the .npz file written by record and read by compare")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rec = record()
    n_vals = sum(v.size for k, v in rec.items() if not k.endswith("warnings"))
    print(f"{n_vals} values in {len(rec) // 2} calls, {time.perf_counter() - t0:.1f} s; sha256 {digest(rec)}")
    if args.mode == "record":
        np.savez_compressed(args.file, **rec)
        print(f"recorded to {args.file}")
        return 0
    with np.load(args.file) as f:
        old = {k: f[k] for k in f.files}
    print(f"reference sha256 {digest(old)}")
    bad = [k for k in sorted(set(old) | set(rec)) if k not in old or k not in rec or not _same(old[k], rec[k])]
    for k in bad[:40]:
        a, b = old.get(k), rec.get(k)
        if a is not None and b is not None and a.dtype.kind == "f" and a.shape == b.shape:
            i = np.nonzero(a.view(np.int64) != b.view(np.int64))[0]
            print(f"DIFFERS {k}: {i.size} of {a.size} values, first at {i[0]}: {a[i[0]]!r} -> {b[i[0]]!r}")
        else:
            print(f"DIFFERS {k}: {a!r:.200} -> {b!r:.200}")
    print("bit-identical" if not bad else f"{len(bad)} of {len(old)} records differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
