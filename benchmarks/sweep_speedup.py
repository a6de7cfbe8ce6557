"""Speed-up of the peers sweep on 2 workers against 1, on a small fixed slice (target >= 1.8x).

The slice: GaussianB at alpha = 1 (n = 10^4, d = 512), ``--runs`` runs (default 16 tasks of
equal cost), the arms PLAN, IOME and Alg3 of egmlib.peers.arms.ARMS at the five budgets.
It runs with ``--jobs 1`` and then with ``--jobs 2`` (loky) into two temporary folders,
``--reps`` times each (alternating), through egmbook.sweep.run_sweep, exactly as the
sweep does; the loky workers are started once before the clock (a long sweep pays for that
once).  Printed: the wall time of each pass, the CPU time of the process and its workers,
the load averages before and after (the machine may be shared: the wall time of the
2-worker pass is what the other processes leave it), the speed-up (best wall time at 1
worker / best at 2) and whether the two passes wrote the same files byte for byte.

Run:  python benchmarks/sweep_speedup.py [--runs 16] [--reps 2]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import csv  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from egmbook import sweep  # noqa: E402
from egmbook.cli import argument_parser  # noqa: E402

TARGET = 1.8
DATASET, D = "GaussianB", 512


def _cpu_of_calls(folder: Path) -> float:
    """CPU seconds of the estimator calls, summed from the run log's cpu_s column (measured in
    whichever process ran them: the same work at 1 and 2 workers)."""
    with (folder / "peers_runs.csv").open(newline="") as f:
        return sum(float(r["cpu_s"]) for r in csv.DictReader(f))


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int | None:
    p = argument_parser(doc=__doc__)
    p.add_argument("--runs", type=int, default=16)
    p.add_argument("--reps", type=int, default=2)
    args = p.parse_args(argv)
    sweep.keep_freed_memory()
    arms = ("PLAN", "IOME", "Alg3")
    case = next(c for c in sweep.all_cases("gaussian") if c.dataset == DATASET and c.alpha == 1.0)
    kw = dict(arms=arms, runs=args.runs, datasets=[DATASET], progress=False)
    print(f"slice: {DATASET} alpha = 1 (n = {case.n}, d = {case.d}), {args.runs} runs x {len(arms)} arms "
          f"({', '.join(arms)}) x {len(sweep.RHOS)} budgets; {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        # start the loky workers once (their imports) before any clock runs
        (Path(tmp) / "warm").mkdir()
        sweep.run_sweep("gaussian", **{**kw, "runs": 1}, jobs=2, results=Path(tmp) / "warm")
        walls: dict[int, list[float]] = {1: [], 2: []}
        for rep in range(args.reps):
            for jobs in (1, 2):
                out = Path(tmp) / f"j{jobs}_{rep}"
                out.mkdir()
                load0, t0 = _load(), time.perf_counter()
                sweep.run_sweep("gaussian", **kw, jobs=jobs, results=out)
                wall = time.perf_counter() - t0
                cpu = _cpu_of_calls(out)
                walls[jobs].append(wall)
                print(f"  {jobs} worker(s), pass {rep + 1}: wall {wall:.1f} s, CPU of the calls {cpu:.1f} s "
                      f"({cpu / wall:.2f} cores busy on average); load {load0} -> {_load()}", flush=True)
        same = all((Path(tmp) / "j1_0" / f).read_bytes() == (Path(tmp) / f"j2_{r}" / f).read_bytes()
                   for r in range(args.reps) for f in ("peers.csv", "peers_excess.csv"))
    speedup = min(walls[1]) / min(walls[2])
    print(f"best wall: 1 worker {min(walls[1]):.1f} s, 2 workers {min(walls[2]):.1f} s; "
          f"speed-up {speedup:.2f}x (target {TARGET}x: {'met' if speedup >= TARGET else 'MISSED'}); "
          f"results identical: {same}", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
