"""Algorithm 3 among its peers, on PLAN's Gaussian benchmarks and off its model: the sweeps.

Runs the sweeps behind chapter 8 (gaussian: PLAN's benchmarks GaussianA, B and C) and
chapter 9 (offmodel: real datasets shipped in scikit-learn and synthetic off-model
families) with every arm of egmlib.peers.arms.ARMS at the five budgets, 50 runs each,
in parallel with joblib, resumable, with a progress bar.  The engine, its seeding and its
output files are described in egmbook/sweep.py.

Locally:    python benchmarks/peers_sweep.py [--sweep gaussian offmodel] [--jobs 2] [--runs 50]
Some arms:  python benchmarks/peers_sweep.py --arms Alg3 PLAN IOME --datasets digits
On a cluster (joblib's dask backend): start `dask scheduler` and `dask worker ADDRESS` on
the nodes, each with this repository installed (pip install -r requirements.txt
distributed), then
            python benchmarks/peers_sweep.py --scheduler tcp://HOST:8786
Smoke test: python benchmarks/peers_sweep.py --quick      (2 runs, d <= 64, results to /tmp)
"""

from __future__ import annotations

import os

# one BLAS thread per worker: the sweep parallelises over processes
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from egmbook.sweep import (  # noqa: E402
    RESULTS,
    RHOS,
    SWEEPS,
    arms_registry,
    default_arms,
    keep_freed_memory,
    run_sweep,
)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sweep", nargs="+", default=list(SWEEPS), choices=list(SWEEPS))
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--jobs", type=int, default=2, help="local worker processes (loky)")
    p.add_argument("--scheduler", default=None,
                   help="address of a dask scheduler (e.g. tcp://host:8786): run on its workers")
    p.add_argument("--datasets", nargs="+", default=None, help="only these datasets (names in the results)")
    p.add_argument("--arms", nargs="+", default=None, help="only these arms (names in egmlib.peers.arms.ARMS)")
    p.add_argument("--redo", nargs="+", default=(), help="drop these arms' rows from the log first, to run again")
    p.add_argument("--rhos", nargs="+", type=float, default=None,
                   help="only these of the five budgets (the summaries keep the other budgets' rows)")
    p.add_argument("--max-d", type=int, default=None, help="skip cases with larger d")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="2 runs, d <= 64, results to /tmp/peers_quick (a smoke test)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.max_d, args.results = 2, 64, Path("/tmp/peers_quick")
    keep_freed_memory()
    for sweep in args.sweep:
        arms = tuple(args.arms) if args.arms else default_arms(sweep)
        unknown = [a for a in arms if a not in arms_registry()]
        if unknown:
            p.error(f"unknown arms {unknown}; ARMS has {list(arms_registry())}")
        run_sweep(sweep, arms=arms, runs=args.runs, jobs=args.jobs, results=args.results,
                  datasets=args.datasets, max_d=args.max_d, scheduler=args.scheduler,
                  progress=not args.no_progress, redo=args.redo,
                  rhos=tuple(args.rhos) if args.rhos else RHOS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
