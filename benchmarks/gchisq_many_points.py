"""egmlib.gchisq.sf (and isf) on many points at once: time and peak memory (issue 25, item 6).

Run from the repository root:

    python benchmarks/gchisq_many_points.py                 # 10^5 points (writes results/gchisq_many_points.txt)
    python benchmarks/gchisq_many_points.py --points 10000  # a quicker run (not saved)

Each case runs in a fresh process (so that its peak resident memory is its own) with
an address-space cap (``--mem-cap-gb``; a case that needs more fails with MemoryError
instead of taking the machine's memory from others). The points are log-uniform over
[0.05, 30] times the mean of Q: the bulk and both tails. For each case it prints the
wall and CPU time of ``gchisq.sf(x, w=w)``, the peak resident memory of the process,
the RuntimeWarnings issued, and the largest relative difference from evaluating 200 of
the points one at a time (each then has a contour pair planned for it alone); then the
same for ``gchisq.isf`` on a tenth as many probabilities, log-uniform over [1e-12, 0.99].

To measure another version of the engine (e.g. before a change), put its checkout
first on the path: ``PYTHONPATH=/path/to/checkout python benchmarks/gchisq_many_points.py``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

CASES = {
    "3 weights (1, 1/2, 1/4)": "np.array([1.0, 0.5, 0.25])",
    "Zipf d = 1000, sigma_j^2": "(1.0 / np.arange(1, 1001)) ** 2",
    "1 x 1 + 500 x 0.05": "np.r_[1.0, np.full(500, 0.05)]",
    # issue 36: many distinct weights, dense near the largest (bins of thousands of weights)
    "Zipf d = 10^5, sigma_j^2": "(1.0 / np.arange(1, 100_001)) ** 2",
    "uniform(0, 1), d = 10^4": "np.random.default_rng(36).random(10_000)",
    "uniform(0, 1), d = 10^5": "np.random.default_rng(36).random(100_000)",
}


def run_case(expr: str, n: int, seed: int, fn: str) -> dict[str, float | int | str]:
    """One case, in this process: time, peak memory, warnings, agreement."""
    from egmlib import gchisq

    w = eval(expr, {"np": np})  # noqa: S307 - the expressions above
    rng = np.random.default_rng(seed)
    if fn == "sf":
        x = float(np.sum(w)) * np.exp(rng.uniform(np.log(0.05), np.log(30.0), n))
    else:
        x = np.exp(rng.uniform(np.log(1e-12), np.log(0.99), n))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0, c0 = time.perf_counter(), time.process_time()
        val = getattr(gchisq, fn)(x, w=w)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB -> GB
    idx = rng.choice(n, size=min(200, n), replace=False)
    alone = np.array([getattr(gchisq, fn)(float(x[i]), w=w) for i in idx])
    with np.errstate(invalid="ignore", divide="ignore"):  # far tails underflow to 0 in both
        diff = float(np.max(np.where(val[idx] == alone, 0.0, np.abs(val[idx] / alone - 1.0))))
    return {"wall": wall, "cpu": cpu, "peak_gb": peak, "warnings": len(caught), "diff": diff,
            "engine": os.path.dirname(gchisq.__file__)}


def main() -> None:
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--points", type=int, default=100_000, help="number of points per call")
    ap.add_argument("--mem-cap-gb", type=float, default=14.0, help="address-space cap per case")
    ap.add_argument("--seed", type=int, default=25, help="seed of the points")
    ap.add_argument("--only", nargs="+", default=None, help="the cases whose name contains one of these words "
                    "(default: every case; a run of fewer cases is not saved)")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case in this process
    ap.add_argument("--fn", default="sf", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case is not None:
        print(json.dumps(run_case(CASES[args.case], args.points, args.seed, args.fn)))
        return
    say(f"one process per case, address space capped at {args.mem_cap_gb:g} GB; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cap = int(args.mem_cap_gb * 2**30)
    engine = "?"
    for fn, n, what in (("sf", args.points, "points, log-uniform over [0.05, 30] x mean"),
                        ("isf", args.points // 10, "probabilities, log-uniform over [1e-12, 0.99]")):
        say(f"\ngchisq.{fn} on {n} {what}")
        say(f"{'weights':<28} {'wall s':>8} {'CPU s':>8} {'us/point':>9} {'peak GB':>8} {'warnings':>8} "
              f"{'vs alone':>9}")
        for name in CASES:
            if args.only and not any(word in name for word in args.only):
                continue
            proc = subprocess.run(
                [sys.executable, __file__, "--case", name, "--fn", fn, "--points", str(n), "--seed", str(args.seed)],
                capture_output=True, text=True,
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)), check=False)
            if proc.returncode != 0:
                last = (proc.stderr.strip().splitlines() or ["?"])[-1]
                say(f"{name:<28} failed: {last[:90]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            engine = str(r["engine"])
            say(f"{name:<28} {r['wall']:>8.2f} {r['cpu']:>8.2f} {1e6 * r['cpu'] / n:>9.1f} "
                  f"{r['peak_gb']:>8.2f} {r['warnings']:>8d} {r['diff']:>9.1e}")
    say(f"\nengine: {engine}")
    _save(lines, engine, args.points == 100_000 and not args.only)



def _save(lines: list[str], used: str, defaults: bool) -> None:
    """Keep the output in benchmarks/results/gchisq_many_points.txt when this checkout's engine was
    measured with the default arguments (a partial run goes to the scratch folder beside it)."""
    here = Path(__file__).resolve().parent
    if not Path(used).resolve().is_relative_to(here.parent):
        print("not saved: another checkout's engine was measured")
        return
    from egmbook.cli import result_path  # this checkout's egmbook (imported once it is the one on the path)

    out = result_path(here / "results" / "gchisq_many_points.txt", full_run=defaults)
    out.write_text("\n".join(lines) + "\n")
    print(f"saved to {out}")


if __name__ == "__main__":
    main()
