"""The CPU time of regenerating every sweep behind chapters 8 and 9, estimated from the run logs.

Every row of benchmarks/results/peers_runs.csv and offmodel_runs.csv records the CPU time
of its estimator call (cpu_s, measured inside the worker).  Per arm, a line
cpu = a + b n d is fitted to those rows (least squares; the cost of every estimator is
dominated by passes over the n x d data), and summed over every case of both sweeps,
every arm of egmlib.peers.arms.ARMS, the five budgets and each sweep's committed runs (``--runs``
for another count).  Drawing the
data is timed here once per case and counted once per run.  Printed: the CPU time per
sweep and arm, the total, and the wall time it implies on 2 workers at the measured
speed-up (benchmarks/sweep_speedup.py; ``--speedup``, default 2, i.e. an idle machine).
This is an estimate from CPU time, not a measured wall time: the machine these logs were
written on was shared with other jobs.

Run:  python benchmarks/sweep_cost.py [--runs N] [--speedup 1.73] [--results FOLDER]

The logs of a short run of every arm serve, e.g. ``peers_sweep.py --runs 2 --results FOLDER``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import csv  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from egmbook import sweep  # noqa: E402
from egmbook.cli import argument_parser  # noqa: E402
from egmlib.peers.arms import ARMS  # noqa: E402


def fits(results: Path = sweep.RESULTS,
         stems: tuple[str, ...] = ("peers", "offmodel")) -> dict[str, tuple[float, float, int]]:
    """arm -> (a, b, rows): cpu_s = a + b n d fitted over both run logs in ``results``."""
    pts = defaultdict(list)
    for stem in stems:
        path = results / f"{stem}_runs.csv"
        if not path.exists():
            continue
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                pts[r["algorithm"]].append((int(r["n"]) * int(r["d"]), float(r["cpu_s"])))
    out = {}
    for arm, p in pts.items():
        x, y = np.array(p, dtype=float).T
        if np.ptp(x) > 0:
            b, a = np.polyfit(x, y, 1)
        else:
            a, b = float(np.mean(y)), 0.0
        out[arm] = (max(a, 0.0), max(b, 0.0), len(p))
    return out


def draw_cost(case: sweep.Case) -> float:
    t0 = time.process_time()
    case.draw([sweep.SEED, sweep.name_id(case.dataset), case.index, 0])
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> int:
    p = argument_parser(doc=__doc__)
    p.add_argument("--runs", type=int, default=None,
                   help=f"runs per case; default each sweep's committed count {dict(sweep.RUNS_OF)}")
    p.add_argument("--speedup", type=float, default=2.0)
    p.add_argument("--results", type=Path, default=sweep.RESULTS,
                   help="folder of the run logs (a sweep run with --results writes them there)")
    args = p.parse_args(argv)
    f = fits(args.results)
    arms = list(ARMS)
    missing = [a for a in arms if a not in f]
    print(f"fitted cpu = a + b n d per arm from {sum(v[2] for v in f.values())} logged calls"
          + (f"; no rows for {missing} (counted as 0)" if missing else ""))
    total = 0.0
    for name in sweep.SWEEPS:
        runs = sweep.RUNS_OF[name] if args.runs is None else args.runs
        per_arm: defaultdict[str, float] = defaultdict(float)
        draws = 0.0
        for c in sweep.all_cases(name):
            draws += draw_cost(c) * runs
            for a in arms:
                if a in f:
                    per_arm[a] += (f[a][0] + f[a][1] * c.n * c.d) * len(sweep.RHOS) * runs
        s = sum(per_arm.values()) + draws
        total += s
        print(f"\n{name}: {len(sweep.all_cases(name))} cases x {len(arms)} arms x {len(sweep.RHOS)} budgets x "
              f"{runs} runs: {s / 60:.1f} CPU min (drawing the data {draws / 60:.1f})")
        for a, v in sorted(per_arm.items(), key=lambda kv: -kv[1]):
            print(f"  {a:22s} {v / 60:7.1f} CPU min")
    print(f"\ntotal {total / 60:.1f} CPU min; on 2 workers at a speed-up of {args.speedup:.2f}: "
          f"{total / args.speedup / 60:.1f} min wall (target 40)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
