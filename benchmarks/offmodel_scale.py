"""ESM at scale: CPU time and added peak memory of one call on 10^5 x 1024 rows, with PLAN beside it.

ESM (egmlib.peers.arms.ARMS["Alg3"]) must stay lean on large data (issue 34): one call on
n = 10^5 rows and d = 1024 columns uses at most 25 times the CPU time of ``X.mean(axis=0)`` on the
same data, and adds at most half the data's size to the peak memory (chunked passes, no copy of a
read-only X).  The data are sparse binary rows like the baskets of chapter 9 (item j with
probability 0.5/j, independently; a read-only float64 array of 800 MB) in the box [0, 1], rho = 1/4.

For each estimator, in a fresh process (one BLAS thread):

  cpu      time.process_time of one call (the median of ``--reps`` calls), and the same for
           X.mean(axis=0); their ratio is the target's.  The kernel's share of that call (system
           CPU: zeroing the fresh pages of the paired rows, with transparent huge pages sometimes
           compacting memory first) is printed beside it: it varies from call to call far more
           than the rest
  memory   tracemalloc's peak during one call, above what was allocated before it (numpy reports
           its arrays to tracemalloc), in a second fresh process (tracing slows the call down)

and the path ESM took.  PLAN (Aumuller et al. 2024, egmlib.peers.plan.plan_mean) runs the same way.

Run:  python benchmarks/offmodel_scale.py [--reps 5]   (a few minutes; writes
benchmarks/results/offmodel_scale.txt and offmodel_scale.csv, which chapter 9 reads, on the full
size only: --n or --d print a slice)
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from egmbook.cli import argument_parser  # noqa: E402
from egmbook.offmodel_results import SCALE_FILE, ScaleRow, write_scale_rows  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "offmodel_scale.txt"
N, D, RHO, SEED = 100_000, 1024, 0.25, 20261202
CPU_TARGET, MEMORY_TARGET = 25.0, 0.5

_CHILD = r'''
import json, os, statistics, sys, time, tracemalloc
import numpy as np
from egmlib.peers.arms import ARMS
arm, mode = sys.argv[1], sys.argv[7]
n, d, rho, seed, reps = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
rng = np.random.default_rng(seed)
X = np.zeros((n, d))
p = 0.5 / np.arange(1, d + 1)
for j, k in enumerate(rng.binomial(n, p)):
    X[rng.choice(n, size=int(k), replace=False, shuffle=False), j] = 1.0
X.setflags(write=False)
call = lambda: ARMS[arm](X, rho=rho, lower=0.0, upper=1.0, rng=np.random.default_rng(1))
if mode == "cpu":
    def cpu(f):
        t, k = time.process_time(), os.times().system
        out = f()
        return time.process_time() - t, os.times().system - k, out
    mean = statistics.median(cpu(lambda: X.mean(axis=0))[0] for _ in range(max(reps, 5)))
    runs = sorted((cpu(call) for _ in range(reps)), key=lambda r: r[0])
    middle = runs[(len(runs) - 1) // 2]
    out = {"mean_cpu": mean, "cpu": middle[0], "sys_cpu": middle[1], "path": getattr(middle[2], "path", "")}
else:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    call()
    out = {"peak_added": tracemalloc.get_traced_memory()[1] - base, "data": X.nbytes}
print(json.dumps(out))
'''


def measure(arm: str, n: int, d: int, reps: int) -> dict:
    """CPU and memory of one arm, each in a fresh process."""
    res = {}
    for mode in ("cpu", "memory"):
        proc = subprocess.run([sys.executable, "-c", _CHILD, arm, str(n), str(d), str(RHO), str(SEED), str(reps), mode],
                              capture_output=True, text=True, check=True)
        res.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return res


def main(argv=None) -> int:
    p = argument_parser(doc=__doc__)
    p.add_argument("--reps", type=int, default=5, help="calls timed per estimator (their median)")
    p.add_argument("--n", type=int, default=N)
    p.add_argument("--d", type=int, default=D)
    args = p.parse_args(argv)
    lines = [f"n = {args.n}, d = {args.d}, sparse binary rows (item j with probability 0.5/j), box [0, 1], "
             f"rho = {RHO}; one BLAS thread; CPU the median of {args.reps} calls",
             f"{'estimator':10s} {'path':14s} {'CPU s':>7s} {'x mean':>7s} {'peak added':>11s} {'x data':>7s}"]
    ok = True
    rows = []
    for arm, label in (("Alg3", "ESM"), ("PLAN", "PLAN")):
        r = measure(arm, args.n, args.d, args.reps)
        rows.append(ScaleRow(arm=arm, path=r["path"] or "", n=args.n, d=args.d, cpu_s=r["cpu"],
                             kernel_cpu_s=r["sys_cpu"], mean_cpu_s=r["mean_cpu"], peak_added_bytes=int(r["peak_added"]),
                             data_bytes=int(r["data"]), reps=args.reps))
        ratio, share = r["cpu"] / r["mean_cpu"], r["peak_added"] / r["data"]
        lines.append(f"{label:10s} {r['path'] or '-':14s} {r['cpu']:7.2f} {ratio:7.1f} "
                     f"{r['peak_added'] / 2**20:8.0f} MB {share:7.2f}")
        if arm == "Alg3":
            ok = ratio <= CPU_TARGET and share <= MEMORY_TARGET
            mean_line = f"X.mean(axis=0): {r['mean_cpu']:.3f} s of CPU; the data: {r['data'] / 2**20:.0f} MB"
            own = r["cpu"] - r["sys_cpu"]
            kernel_line = (f"ESM's median call: {own:.2f} s in the process ({own / r['mean_cpu']:.1f} x mean) "
                           f"and {r['sys_cpu']:.2f} s in the kernel")
        print(lines[-1], flush=True)
    lines.insert(2, mean_line)
    lines.append(kernel_line)
    lines.append(f"ESM's targets (at most {CPU_TARGET:g} x the mean's CPU, at most {MEMORY_TARGET:g} x the data's size "
                 f"added): {'met' if ok else 'NOT met'}")
    text = "\n".join(lines) + "\n"
    print(text)
    if (args.n, args.d) == (N, D):
        OUT.write_text(text)
        write_scale_rows(rows, SCALE_FILE)
        print(f"saved {OUT} and {SCALE_FILE}")
    else:
        print("a slice: nothing saved")
    return 0


if __name__ == "__main__":
    sys.exit(main())
