"""Time per run of every private arm of egmlib.peers.arms.ARMS at n = 10^4, d = 2048 (target: at most 1 s each).

The data are one GaussianC dataset of PLAN's benchmarks (sigma_j = d/j, mean 10,
universe +-50 d^1.5).  Each method runs ``--reps`` times at each of the budgets
rho = 1/16, 1/8 and 1 (the ends and the middle of PLAN's range) on a *writable* copy of
the data, so nothing is shared between runs (the sort cache of egmlib.peers.quantiles
only serves read-only arrays): a run pays for everything it needs.  Printed per method:
the median CPU time of the process (user + system) at each budget, and the median
wall-clock time at rho = 1/8; the target is checked on the largest CPU time.  With one
BLAS thread (the default here) the CPU time is what the wall-clock time would be on an
idle machine; on a shared machine the wall clock is inflated by waiting (``uptime`` is
printed with the table).  glibc is asked to keep freed memory (benchmarks/peers_sweep.py,
keep_freed_memory), as in the sweep.

Run:  python benchmarks/peers_timing.py [--reps 5] [--threads N]
      (writes benchmarks/results/peers_timing.txt)
"""

from __future__ import annotations

import os
import sys

# BLAS threads must be fixed before numpy is imported (default 1: CPU time = idle wall time)
os.environ["OPENBLAS_NUM_THREADS"] = (sys.argv[sys.argv.index("--threads") + 1]
                                      if "--threads" in sys.argv else "1")

import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from egmbook import gaussian_benchmarks as gb  # noqa: E402
from egmbook.cli import argument_parser, result_path  # noqa: E402
from egmbook.sweep import keep_freed_memory  # noqa: E402
from egmlib.peers.arms import ARMS, Arm  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "peers_timing.txt"
TARGET_S = 1.0


RHOS = (1 / 16, 1 / 8, 1.0)
WALL_RHO = 1 / 8


def methods(s: gb.GaussianSetting, X: np.ndarray) -> dict[str, Callable[[np.random.Generator, float], Any]]:
    """name -> f(rng, rho): one release of each private arm of egmlib.peers.arms.ARMS on the
    data X of setting s, called as the sweeps call it (oracle arms given the setting's sigma
    and mean; IOME draws its rotation from rng, so a run pays for it)."""
    lo, hi = s.universe
    given = {"sigma": s.sigma, "mu": s.mean}

    def call(arm: Arm) -> Callable[[np.random.Generator, float], Any]:
        inputs = {g: given[g] for g in arm.given}
        return lambda rng, rho: arm(X, rho=rho, lower=lo, upper=hi, rng=rng, **inputs)
    return {name: call(arm) for name, arm in ARMS.items() if arm.private}


def main(argv: list[str] | None = None) -> int | None:
    p = argument_parser(doc=__doc__)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=str, default="1", help="OPENBLAS_NUM_THREADS (default 1)")
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args(argv)
    keep_freed_memory()
    s = [x for x in gb.settings("GaussianC") if x.d == 2048][0]
    X = np.array(gb.sample(s, rng=np.random.default_rng(0)))  # writable: no caching
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rho_names = ("1/16", "1/8", "1")
    lines = [
        f"peer estimators at n = {s.n}, d = {s.d} (GaussianC); {args.reps} runs each at "
        f"rho = {', '.join(rho_names)}; target {TARGET_S:.1f} s per run",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}",
        f"load before: {load}",
        f"{'method':22s} " + " ".join(f"{'CPU s ' + r:>11s}" for r in rho_names)
        + f" {'wall s 1/8':>11s}  target (largest CPU time)",
    ]
    print("\n".join(lines), flush=True)
    for name, f in methods(s, X).items():
        cpu_by_rho, wall_mid = [], float("nan")
        for rho in RHOS:
            wall, cpu = [], []
            for rep in range(args.reps):
                rng = np.random.default_rng(rep)
                t0, c0 = time.perf_counter(), time.process_time()
                f(rng, rho)
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            cpu_by_rho.append(float(np.median(cpu)))
            if rho == WALL_RHO:
                wall_mid = float(np.median(wall))
        worst = max(cpu_by_rho)
        line = (f"{name:22s} " + " ".join(f"{c:11.3f}" for c in cpu_by_rho)
                + f" {wall_mid:11.3f}  {'met' if worst <= TARGET_S else 'MISSED'}")
        print(line, flush=True)
        lines.append(line)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines.append(f"load after: {load}")
    print(lines[-1])
    if not args.no_save:
        # the committed result is the default run: 5 repetitions on one BLAS thread
        out = result_path(RESULTS, full_run=args.reps >= 5 and args.threads == "1")
        out.write_text("\n".join(lines) + "\n")
        print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
