"""Time per run of every peer estimator at n = 10^4, d = 2048 (target: at most 1 s each).

The data are one GaussianC dataset of PLAN's benchmarks (sigma_j = d/j, mean 10,
universe +-50 d^1.5).  Each method runs ``--reps`` times on a *writable* copy of the
data, so nothing is shared between runs (the sort cache of egmlib.peers.quantiles only
serves read-only arrays): a run pays for everything it needs, including sorting the
columns.  The median and the minimum over the repetitions are printed; timings taken
while other jobs use the machine are inflated (``uptime`` is printed with them).

Run:  python benchmarks/peers_timing.py [--reps 5] [--threads N]
      (writes benchmarks/results/peers_timing.txt)
"""

from __future__ import annotations

import argparse
import os
import sys

if "--threads" in sys.argv:  # BLAS threads must be fixed before numpy is imported
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]

import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from egmlib.peers import algorithm3, coinpress, iome, plan  # noqa: E402
from egmlib.peers import gaussian_benchmarks as gb  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "peers_timing.txt"
TARGET_S = 1.0


def methods(s, X):
    lo, hi = s.universe
    mu, sigma = s.mean, s.sigma
    return {
        "PLAN": lambda rng: plan.plan_mean(X, rho=0.125, lower=lo, upper=hi, rng=rng),
        "PLAN-noscale": lambda rng: plan.plan_noscale_mean(X, rho=0.125, lower=lo, upper=hi,
                                                           rng=rng),
        "IOME": lambda rng: iome.iome_mean(X, rho=0.125, lower=lo, upper=hi, rng=rng),
        "CoinPress": lambda rng: coinpress.coinpress_known_scales(X, sigma=sigma, rho=0.125,
                                                                  lower=lo, upper=hi, rng=rng),
        "Alg3-oracle": lambda rng: algorithm3.algorithm3_zcdp(X, sigma=sigma, mu_hat=mu,
                                                              rho=0.125, rng=rng),
        "PLAN-oracle": lambda rng: plan.plan_oracle_mean(X, mu=mu, sigma=sigma, rho=0.125,
                                                         lower=lo, upper=hi, rng=rng),
        "Alg3-private-centre": lambda rng: algorithm3.algorithm3_private_centre(
            X, sigma=sigma, rho=0.125, lower=lo, upper=hi, rng=rng),
        "Alg3-private": lambda rng: algorithm3.algorithm3_private(X, rho=0.125, lower=lo,
                                                                  upper=hi, rng=rng),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=str, default=None, help="OPENBLAS_NUM_THREADS")
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args(argv)
    s = [x for x in gb.settings("GaussianC") if x.d == 2048][0]
    X = np.array(gb.sample(s, rng=np.random.default_rng(0)))  # writable: no caching
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"peer estimators at n = {s.n}, d = {s.d} (GaussianC), rho = 1/8; "
        f"{args.reps} runs each, target {TARGET_S:.1f} s per run",
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}",
        f"load before: {load}",
        f"{'method':22s} {'median s':>9s} {'min s':>7s}  target",
    ]
    print("\n".join(lines), flush=True)
    for name, f in methods(s, X).items():
        times = []
        for rep in range(args.reps):
            rng = np.random.default_rng(rep)
            t0 = time.perf_counter()
            f(rng)
            times.append(time.perf_counter() - t0)
        med, low = float(np.median(times)), float(np.min(times))
        line = f"{name:22s} {med:9.3f} {low:7.3f}  {'met' if med <= TARGET_S else 'MISSED'}"
        print(line, flush=True)
        lines.append(line)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines.append(f"load after: {load}")
    print(lines[-1])
    if not args.no_save:
        RESULTS.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
