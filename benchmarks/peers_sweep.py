"""Algorithm 3 among its peers on PLAN's Gaussian benchmarks: the sweep behind peers.csv.

For every point of PLAN's experiments GaussianA, GaussianB and GaussianC
(egmbook.gaussian_benchmarks; Aumuller, Lebeda, Nelson and Pagh 2024, Figure 3),
50 datasets are drawn; on each, every method runs at every rho in {1/16, 1/8, 1/4, 1/2, 1}
(the dataset is shared by all methods and budgets, as the issue allows) and its error
||mu_tilde - mu||_2 against the population mean is recorded.  The methods:

  PLAN, PLAN-noscale, IOME         nothing known (egmlib.peers.plan, .iome)
  CoinPress, Alg3-private-centre   sigma known, mu unknown (egmlib.peers.coinpress, .algorithm3)
  Alg3-private                     nothing known: private scales and centre, then Algorithm 3
  Alg3-oracle, PLAN-oracle         sigma and mu given: Algorithm 3 vs PLAN's last step
  empirical                        the non-private mean

Outputs (benchmarks/results/):
  peers_runs.csv     one row per (dataset, setting, run, rho, method): the error and the
                     excess ||mu_tilde - x_bar||_2 over the empirical mean of the same
                     data (the error privacy adds, without the sampling error all methods
                     share); the resume log: a run is appended when all its rho x method
                     errors are in, so an interrupted sweep restarts where it stopped
  peers.csv          dataset,algorithm,n,d,rho,alpha,runs,error_mean,error_sd for every
                     setting whose runs are complete (error_sd with ddof = 1)
  peers_excess.csv   the same for the excess over the empirical mean
  peers_privacy.csv  the (epsilon, delta) each rho corresponds to

Seeding: the data of (dataset, setting, run) come from default_rng([SEED, dataset,
setting, run]); method m at budget r from default_rng([SEED, dataset, setting, run, r, m]);
IOME's public rotation is drawn once per dataset and shared by its five budgets.  Results
do not depend on the order in which workers finish.

Run:  python benchmarks/peers_sweep.py [--jobs 2] [--runs 50] [--datasets GaussianA ...]
      python benchmarks/peers_sweep.py --quick      (2 runs, small settings, to /tmp)
"""

from __future__ import annotations

import os

# one BLAS thread per worker: the sweep parallelises over processes
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import ctypes  # noqa: E402
import ctypes.util  # noqa: E402


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed large blocks instead of unmapping them (mallopt).

    By default glibc serves arrays above 128 KiB with mmap and unmaps them when freed,
    so every new (n, d) temporary is faulted in and zeroed again by the kernel; on this
    machine that was a fifth of the run time (sys time, measured with getrusage).
    Workers forked afterwards inherit the setting.  Returns False where it is not glibc.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)
                    and libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
    except (OSError, AttributeError):
        return False


import argparse  # noqa: E402
import csv  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from egmbook import gaussian_benchmarks as gb  # noqa: E402
from egmbook.peer_results import ALGORITHMS  # noqa: E402
from egmlib import calibration  # noqa: E402
from egmlib.peers import algorithm3, budget, coinpress, iome, plan  # noqa: E402
from egmlib.peers.hadamard import random_hadamard  # noqa: E402

SEED = 20240613  # with the order of ALGORITHMS (egmbook.peer_results), seeds the runs
RESULTS = Path(__file__).resolve().parent / "results"
DATASETS = ("GaussianA", "GaussianB", "GaussianC")
RUN_FIELDS = ("dataset", "algorithm", "n", "d", "rho", "alpha", "run", "error", "excess")
SUMMARY_FIELDS = ("dataset", "algorithm", "n", "d", "rho", "alpha", "runs", "error_mean",
                  "error_sd")
PRIVACY_DELTAS = (1e-5, 1e-6, 1e-8)


def estimate(name, X, s, rho, rng, rotation=None):
    """The estimate of method ``name`` at budget rho on the data X of setting s."""
    lo, hi = s.universe
    if name == "PLAN":
        return plan.plan_mean(X, rho=rho, lower=lo, upper=hi, rng=rng).estimate
    if name == "PLAN-noscale":
        return plan.plan_noscale_mean(X, rho=rho, lower=lo, upper=hi, rng=rng).estimate
    if name == "IOME":
        return iome.iome_mean(X, rho=rho, lower=lo, upper=hi, rng=rng, rotation=rotation).estimate
    if name == "CoinPress":
        return coinpress.coinpress_known_scales(X, sigma=s.sigma, rho=rho, lower=lo, upper=hi,
                                                rng=rng).estimate
    if name == "Alg3-oracle":
        return algorithm3.algorithm3_zcdp(X, sigma=s.sigma, mu_hat=s.mean, rho=rho,
                                          rng=rng).estimate
    if name == "PLAN-oracle":
        return plan.plan_oracle_mean(X, mu_hat=s.mean, sigma=s.sigma, rho=rho, lower=lo, upper=hi,
                                     rng=rng).estimate
    if name == "Alg3-private-centre":
        return algorithm3.algorithm3_private_centre(X, sigma=s.sigma, rho=rho, lower=lo,
                                                    upper=hi, rng=rng).estimate
    if name == "Alg3-private":
        return algorithm3.algorithm3_private(X, rho=rho, lower=lo, upper=hi, rng=rng).estimate
    if name == "empirical":
        return X.mean(axis=0)
    raise ValueError(f"unknown algorithm {name!r}")


def run_task(task):
    """All errors of one dataset: (dataset index, setting index, run, rhos, algorithms)."""
    ds_i, set_i, run, rhos, algorithms = task
    s = gb.settings(DATASETS[ds_i])[set_i]
    X = gb.sample(s, rng=np.random.default_rng([SEED, ds_i, set_i, run]))
    rotation = random_hadamard(s.d, rng=np.random.default_rng([SEED, ds_i, set_i, run, 99]))
    xbar = X.mean(axis=0)
    rows = []
    for r_i, rho in enumerate(rhos):
        for name in algorithms:
            a_i = ALGORITHMS.index(name)
            rng = np.random.default_rng([SEED, ds_i, set_i, run, r_i, a_i])
            est = estimate(name, X, s, rho, rng, rotation)
            err = float(np.linalg.norm(est - s.mean))
            excess = float(np.linalg.norm(est - xbar))
            rows.append((s.dataset, name, s.n, s.d, rho, s.alpha, run, err, excess))
    return task[:3], rows


def _key(dataset, d, alpha):
    return dataset, int(d), float(alpha)


def load_runs(path, rhos, algorithms):
    """Completed runs in the log: {(dataset, d, alpha): {run: rows}} with all rho x algorithms."""
    per = defaultdict(lambda: defaultdict(list))
    if path.exists():
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                per[_key(row["dataset"], row["d"], row["alpha"])][int(row["run"])].append(row)
    need = {(float(r), a) for r in rhos for a in algorithms}
    done = {}
    for k, runs in per.items():
        for run, rows in runs.items():
            if {(float(r["rho"]), r["algorithm"]) for r in rows} >= need:
                done.setdefault(k, {})[run] = rows
    return done


def write_summary(path, done, runs, rhos, algorithms, selected, field="error"):
    """peers.csv (or, with field="excess", peers_excess.csv) from the completed settings."""
    out = []
    for ds_i, dataset in enumerate(DATASETS):
        for s in gb.settings(dataset):
            k = _key(s.dataset, s.d, s.alpha)
            if (ds_i, k) not in selected or k not in done:
                continue
            have = [r for r in range(runs) if r in done[k]]
            if len(have) < runs:
                continue
            errs = defaultdict(list)
            for r in have:
                for row in done[k][r]:
                    errs[(float(row["rho"]), row["algorithm"])].append(float(row[field]))
            for rho in rhos:
                for a in algorithms:
                    e = np.array(errs[(float(rho), a)])
                    out.append((s.dataset, a, s.n, s.d, f"{rho:.6g}", f"{s.alpha:g}", len(e),
                                f"{e.mean():.6g}", f"{e.std(ddof=1):.6g}"))
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(SUMMARY_FIELDS[:-2] + (f"{field}_mean", f"{field}_sd"))
        w.writerows(out)
    tmp.replace(path)
    return len(out)


def write_privacy(path, rhos):
    """rho -> epsilon at several delta: the zCDP bound (any pipeline) and the exact value
    for a single Gaussian mechanism (Algorithm 3 with public inputs)."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("rho", "delta", "eps_zcdp_bound", "eps_exact_gaussian",
                    "noise_multiplier_zcdp", "noise_multiplier_analytic_at_bound"))
        for rho in rhos:
            for delta in PRIVACY_DELTAS:
                bound = budget.approx_dp_epsilon(rho, delta=delta)
                exact = budget.gaussian_epsilon_exact(rho, delta=delta)
                w.writerow((f"{rho:.6g}", f"{delta:g}", f"{bound:.6f}", f"{exact:.6f}",
                            f"{1 / math.sqrt(2 * rho):.6f}",
                            f"{calibration.sigma_opt(eps=bound, delta=delta):.6f}"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    p.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    p.add_argument("--max-d", type=int, default=None, help="skip settings with larger d")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--quick", action="store_true",
                   help="2 runs, d <= 64, results to /tmp/peers_quick (a smoke test)")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.max_d, args.results = 2, 64, Path("/tmp/peers_quick")
    args.results.mkdir(parents=True, exist_ok=True)
    keep_freed_memory()
    rhos = gb.RHOS
    runs_path = args.results / "peers_runs.csv"
    done = load_runs(runs_path, rhos, args.algorithms)

    tasks, selected = [], set()
    for dataset in args.datasets:
        ds_i = DATASETS.index(dataset)
        for set_i, s in enumerate(gb.settings(dataset)):
            if args.max_d is not None and s.d > args.max_d:
                continue
            k = _key(s.dataset, s.d, s.alpha)
            selected.add((ds_i, k))
            for run in range(args.runs):
                if run not in done.get(k, {}):
                    tasks.append((ds_i, set_i, run, rhos, tuple(args.algorithms)))
    # biggest first, so that the two workers finish together
    tasks.sort(key=lambda t: -gb.settings(DATASETS[t[0]])[t[1]].n * gb.settings(DATASETS[t[0]])[t[1]].d)
    cost = {t: gb.settings(DATASETS[t[0]])[t[1]].n * gb.settings(DATASETS[t[0]])[t[1]].d
            for t in [x[:2] for x in tasks]}
    total_cost = sum(cost[t[:2]] for t in tasks)
    print(f"{len(tasks)} dataset-runs to do ({sum(len(v) for v in done.values())} already in "
          f"{runs_path}), {len(rhos)} budgets x {len(args.algorithms)} methods each, "
          f"{args.jobs} worker(s)", flush=True)

    write_privacy(args.results / "peers_privacy.csv", rhos)
    new_file = not runs_path.exists()
    t0, done_cost, n_done = time.perf_counter(), 0, 0
    with runs_path.open("a", newline="") as log:
        w = csv.writer(log)
        if new_file:
            w.writerow(RUN_FIELDS)
        ctx = mp.get_context("fork")
        with ctx.Pool(args.jobs) as pool:
            for (ds_i, set_i, run), rows in pool.imap_unordered(run_task, tasks):
                w.writerows(rows)
                log.flush()
                os.fsync(log.fileno())
                s = gb.settings(DATASETS[ds_i])[set_i]
                done.setdefault(_key(s.dataset, s.d, s.alpha), {})[run] = [
                    dict(zip(RUN_FIELDS, map(str, r), strict=True)) for r in rows]
                n_done += 1
                done_cost += cost[(ds_i, set_i)]
                el = time.perf_counter() - t0
                eta = el * (total_cost - done_cost) / done_cost
                print(f"[{n_done}/{len(tasks)}] {s.dataset} d={s.d} alpha={s.alpha:g} run={run}"
                      f"  elapsed {el / 60:.1f} min, eta {eta / 60:.1f} min", flush=True)
                if n_done % 25 == 0:
                    write_summary(args.results / "peers.csv", done, args.runs, rhos,
                                  args.algorithms, selected)
    rows = write_summary(args.results / "peers.csv", done, args.runs, rhos, args.algorithms,
                         selected)
    write_summary(args.results / "peers_excess.csv", done, args.runs, rhos, args.algorithms,
                  selected, field="excess")
    print(f"wrote {rows} rows to {args.results / 'peers.csv'} in "
          f"{(time.perf_counter() - t0) / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
