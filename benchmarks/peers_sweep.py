"""Algorithm 3 among its peers, on PLAN's Gaussian benchmarks and off its model: the sweeps.

Runs the sweeps behind chapter 8 (gaussian: PLAN's benchmarks GaussianA, B and C) and
chapter 9 (offmodel: real datasets shipped in scikit-learn and synthetic off-model
families) with every arm of egmlib.peers.arms.ARMS at the five budgets (chapter 8: 50 runs a
cell; chapter 9: 12, the reduced sweep on the final ESM, egmbook.sweep.RUNS_OF), in parallel,
resumable, with a progress bar.  The engine, its seeding and its output files are described in
egmbook/sweep.py.

Locally:    python benchmarks/peers_sweep.py [--sweep gaussian offmodel] [--jobs 2] [--runs 50]
Some arms:  python benchmarks/peers_sweep.py --arms Alg3 PLAN IOME --datasets digits
On a cluster (dask.distributed, the cluster extra: pip install -e .[cluster] on every node):
            dask scheduler; dask worker tcp://HOST:8786 --nthreads 1   (on each node)
            python benchmarks/peers_sweep.py --scheduler tcp://HOST:8786
Smoke test: python benchmarks/peers_sweep.py --quick      (2 runs, d <= 64, into the scratch folder)

A sweep with fewer runs than the committed ones writes to benchmarks/results/scratch/
(git-ignored), never over the committed results that chapters 8 and 9 read.
"""

from __future__ import annotations

import os

# one BLAS thread per worker: the sweep parallelises over processes
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from egmbook import sweep as sw  # noqa: E402
from egmbook.cli import argument_parser  # noqa: E402
from egmlib.peers.arms import ARMS  # noqa: E402

QUICK_RUNS, QUICK_MAX_D = 2, 64


def parser() -> argparse.ArgumentParser:
    p = argument_parser(doc=__doc__)
    p.add_argument("--sweep", nargs="+", default=list(sw.SWEEPS), choices=list(sw.SWEEPS))
    p.add_argument("--runs", type=int, default=None,
                   help=f"runs per case; default each sweep's committed count {dict(sw.RUNS_OF)} "
                        "(fewer: results go to the scratch folder)")
    p.add_argument("--jobs", type=int, default=None, help="local worker processes (loky); if not given, 2")
    p.add_argument("--scheduler", default=None,
                   help="address of a dask scheduler (e.g. tcp://host:8786): run on its workers")
    p.add_argument("--datasets", nargs="+", default=None, help="only these datasets (names in the results)")
    p.add_argument("--arms", nargs="+", default=None, choices=list(ARMS), metavar="ARM",
                   help=f"only these arms of egmlib.peers.arms.ARMS: {', '.join(ARMS)}")
    p.add_argument("--redo", nargs="+", default=None, choices=list(ARMS), metavar="ARM",
                   help="drop these arms' rows from the log first, to run again")
    p.add_argument("--rhos", nargs="+", type=float, default=None, choices=list(sw.RHOS), metavar="RHO",
                   help="only these of the five budgets (the summaries keep the other budgets' rows)")
    p.add_argument("--max-d", type=int, default=None, help="skip cases with larger d")
    p.add_argument("--results", type=Path, default=None,
                   help=f"output folder; default {sw.RESULTS} for the committed runs, else {sw.SCRATCH}")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help=f"{QUICK_RUNS} runs, d <= {QUICK_MAX_D}, into the scratch folder (a smoke test)")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.max_d = QUICK_RUNS, QUICK_MAX_D
    if args.scheduler is not None and args.jobs is not None:
        p.error("--jobs sets local workers; a cluster's size is set by its workers (drop --jobs)")
    results = args.results
    if results is None:
        full = args.runs is None or all(args.runs >= sw.RUNS_OF[s] for s in args.sweep)
        results = sw.RESULTS if full else sw.SCRATCH
        if results == sw.SCRATCH:
            print(f"{args.runs} runs < {dict(sw.RUNS_OF)}: results go to {sw.SCRATCH}", flush=True)
    results.mkdir(parents=True, exist_ok=True)
    by_sweep = {s: {c.dataset for c in sw.all_cases(s)} for s in args.sweep}
    if args.datasets:
        unknown = sorted(set(args.datasets) - set().union(*by_sweep.values()))
        if unknown:
            p.error(f"unknown datasets {unknown} in the sweeps {args.sweep}; known: "
                    + ", ".join(dict.fromkeys(c.dataset for s in args.sweep for c in sw.all_cases(s))))
    sw.keep_freed_memory()
    for sweep in args.sweep:
        datasets = None
        if args.datasets:
            datasets = [d for d in args.datasets if d in by_sweep[sweep]]
            if not datasets:
                continue  # the named datasets all belong to the other sweep
        try:
            sw.run_sweep(sweep, arms=args.arms, runs=args.runs, jobs=args.jobs or 2, results=results,
                         datasets=datasets, max_d=args.max_d, scheduler=args.scheduler,
                         progress=not args.no_progress, redo=args.redo,
                         rhos=tuple(args.rhos) if args.rhos else sw.RHOS)
        except ValueError as e:
            p.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
