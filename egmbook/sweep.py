"""The peers sweeps' engine: Algorithm 3 and its peers on PLAN's Gaussian benchmarks and off its model.

The command line is benchmarks/peers_sweep.py; this module holds the cases, the tasks and
their seeding, the run log and the summaries, so that joblib's workers (local loky processes or
the workers of a dask cluster, where egmbook is installed) import them by name.

Two sweeps share one engine:

  gaussian   PLAN's benchmarks GaussianA, GaussianB and GaussianC
             (egmbook.gaussian_benchmarks; Aumuller, Lebeda, Nelson and Pagh 2024, Figure 3),
             behind chapter 8; results peers.csv, peers_excess.csv
  offmodel   real datasets shipped inside scikit-learn and synthetic off-model families
             (egmbook.offmodel_data), behind chapter 9; results offmodel.csv,
             offmodel_excess.csv

For every case (one point of a benchmark, or one dataset or family), ``--runs`` datasets
are drawn (a real dataset is the same every run; only the mechanisms' noise changes); on
each, every arm of ``egmlib.peers.arms.ARMS`` runs at every rho in {1/16, 1/8, 1/4, 1/2, 1}
and two errors are recorded: ``error`` = ||mu_tilde - mu||_2 against the population mean
(for a real dataset, whose population is the dataset itself, the empirical mean) and
``excess`` = ||mu_tilde - x_bar||_2 against the empirical mean of the same rows (the error
that privacy adds, without the sampling error that every arm shares).

Outputs (benchmarks/results/), for SWEEP in {peers, offmodel}:
  SWEEP_runs.csv     one row per (case, run, arm, rho), floats in full precision, with the
                     CPU time of the call (cpu_s: the regeneration time is estimated from it); the
                     resume log (git-ignored): an (case, run, arm) is appended when its five
                     budgets are in, so an interrupted sweep restarts where it stopped, and
                     a new arm runs alone on the old data
  SWEEP.csv          dataset,algorithm,n,d,rho,alpha,runs,error_mean,error_sd,error_median
                     for every (case, arm) whose runs are complete (sd with ddof = 1)
  SWEEP_excess.csv   the same for the excess over the empirical mean
  peers_privacy.csv  the (epsilon, delta) each rho corresponds to

Seeding, by coordinates only: the data of (dataset, case index, run) come from
default_rng([SEED, id(dataset), case, run]); arm a at budget index r from
default_rng([SEED, id(dataset), case, run, r, id(a)]), where id is the CRC-32 of the name and r
the budget's index among the five (PLAN-last-step uses the name "Alg3": STREAM); IOME's
public rotation, shared by its five budgets, from
default_rng([SEED, id(dataset), case, run, id("rotation")]) (public_inputs).
A task is one (case, run) with the arms it still lacks; its results do not depend on
which other arms it runs, on the number of workers or on the order in which they finish
(tests/test_peers_sweep.py compares 1 and 2 workers bit for bit).

Parallel engine: joblib.  Locally ``--jobs N`` runs N loky worker processes (one BLAS
thread each).  On a cluster, start a dask scheduler and workers (``pip install
distributed``; ``dask scheduler`` and ``dask worker ADDRESS`` on the nodes, each with
this repository installed), then pass ``--scheduler ADDRESS`` (for example
tcp://10.0.0.1:8786): joblib's dask backend ships the tasks there.  Progress: a tqdm bar
over the tasks (``--no-progress`` to silence it).

Run:  python benchmarks/peers_sweep.py [--sweep gaussian offmodel] [--jobs 2] [--runs 50]
      python benchmarks/peers_sweep.py --arms Alg3 PLAN IOME --datasets digits
      python benchmarks/peers_sweep.py --quick      (2 runs, d <= 64, results to /tmp)
"""

from __future__ import annotations

import csv
import ctypes
import ctypes.util
import functools
import math
import os
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from egmbook import gaussian_benchmarks as gb
from egmlib import calibration
from egmlib.peers import budget

SEED = 20240613
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
RHOS = gb.RHOS
SWEEPS = {"gaussian": "peers", "offmodel": "offmodel"}  # sweep -> file stem
RUN_FIELDS = ("dataset", "case", "algorithm", "n", "d", "alpha", "run", "rho", "error", "excess", "cpu_s")
SUMMARY_FIELDS = ("dataset", "algorithm", "n", "d", "rho", "alpha", "runs")
PRIVACY_DELTAS = (1e-5, 1e-6, 1e-8)
#: Arms that draw from another arm's random stream: PLAN's last step on Algorithm 3's private
#: inputs gets the very sigma_hat and mu_hat of "Alg3" (same seed; the library memoises them),
#: so that the two arms differ only in their last step.
STREAM = {"PLAN-last-step": "Alg3"}


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed large blocks instead of unmapping them (mallopt).

    By default glibc serves arrays above 128 KiB with mmap and unmaps them when freed,
    so every new (n, d) temporary is faulted in and zeroed again by the kernel; on this
    machine that was a fifth of the run time (sys time, measured with getrusage).
    Called in every worker (loky starts fresh processes).  Returns False where it is not glibc.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)
                    and libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
    except (OSError, AttributeError):
        return False


def name_id(name: str) -> int:
    """A stable integer for a name (CRC-32): the seed coordinate of a dataset or an arm."""
    return zlib.crc32(name.encode("utf-8"))


# ------------------------------------------------------------------ cases
@dataclass(frozen=True)
class Drawn:
    """The data of one run and what the arms may be given: the public box, the standard
    deviations of the arms "given sigma", and the reference mean (the error's target)."""

    X: np.ndarray
    mean: np.ndarray
    sigma: np.ndarray
    lower: float
    upper: float


@dataclass(frozen=True)
class Case:
    """One point of a sweep: how to draw its data from a seed."""

    sweep: str  #: "gaussian" or "offmodel"
    dataset: str  #: the name in the results files
    index: int  #: position within the dataset (the setting of a benchmark; 0 otherwise)
    n: int
    d: int
    alpha: float  #: the skew of PLAN's benchmarks; 0 off the model
    draw: Callable[[list[int]], Drawn]  #: the data of one run, from its seed

    @property
    def key(self) -> tuple[str, int]:
        return self.dataset, self.index

    @property
    def cost(self) -> int:
        return self.n * self.d


def _gaussian_draw(s: gb.GaussianSetting, seed: list[int]) -> Drawn:
    lo, hi = s.universe
    return Drawn(gb.sample(s, rng=np.random.default_rng(seed)), s.mean, s.sigma, lo, hi)


def _gaussian_cases() -> list[Case]:
    return [Case("gaussian", dataset, i, s.n, s.d, s.alpha, draw=functools.partial(_gaussian_draw, s))
            for dataset in ("GaussianA", "GaussianB", "GaussianC") for i, s in enumerate(gb.settings(dataset))]


def _offmodel_draw(name: str, seed: list[int]) -> Drawn:
    from egmbook import offmodel_data as od
    smp = od.load(name, seed=seed)
    return Drawn(smp.X, smp.mean, smp.sigma, smp.lower, smp.upper)


def _offmodel_cases() -> list[Case]:
    """The datasets and families of egmbook.offmodel_data, in its order."""
    from egmbook import offmodel_data as od
    return [Case("offmodel", name, 0, spec.n, spec.d, 0.0, draw=functools.partial(_offmodel_draw, name))
            for name, spec in od.DATASETS.items()]


@functools.cache
def all_cases(sweep: str) -> tuple[Case, ...]:
    """Every case of one sweep, in the order of the results files."""
    if sweep == "gaussian":
        return tuple(_gaussian_cases())
    if sweep == "offmodel":
        return tuple(_offmodel_cases())
    raise ValueError(f"sweep must be one of {sorted(SWEEPS)}, got {sweep!r}")


def find_case(sweep: str, dataset: str, index: int) -> Case:
    for c in all_cases(sweep):
        if c.key == (dataset, index):
            return c
    raise ValueError(f"no case {dataset!r} #{index} in the {sweep} sweep")


# ------------------------------------------------------------------ arms
def arms_registry():
    """egmlib.peers.arms.ARMS: display name -> arm (see that module)."""
    from egmlib.peers.arms import ARMS
    return ARMS


def default_arms(sweep: str) -> tuple[str, ...]:
    """Every arm of the registry (with the non-private mean, the reference "empirical")."""
    return tuple(arms_registry())


def estimate(name: str, data: Drawn, rho: float, rng: np.random.Generator,
             public: dict | None = None) -> np.ndarray:
    """The private mean of arm ``name`` on ``data`` at budget rho.

    Arms that are given inputs (``arm.given``: "sigma", "mu") get the case's standard
    deviations and reference mean; every arm gets the case's public box, and the entries
    of ``public`` (public randomness shared by the budgets of a task, see
    :func:`public_inputs`) that it accepts (``arm.accepts``).
    """
    arm = arms_registry()[name]
    known = {"sigma": data.sigma, "mu": data.mean}
    given = {}
    for inp in arm.given:
        if inp not in known:
            raise ValueError(f"arm {name!r} asks for the input {inp!r}, which the sweep does not know")
        given[inp] = known[inp]
    for key in arm.accepts:
        if public is not None and key in public:
            given[key] = public[key]
    return arm(data.X, rho=rho, lower=data.lower, upper=data.upper, rng=rng, **given).estimate


def public_inputs(seed: list[int], d: int) -> dict:
    """Public randomness drawn once per task, independently of the data, and shared by the
    five budgets of every arm that accepts it: IOME's randomised Hadamard rotation
    (egmlib.peers.hadamard.random_hadamard, 3 rounds) from default_rng(seed + [id("rotation")]).
    A release stays rho-zCDP for any fixed rotation; sharing one across budgets lets IOME
    rotate the data once per task instead of once per budget."""
    from egmlib.peers.hadamard import random_hadamard
    return {"rotation": random_hadamard(d, rng=np.random.default_rng(seed + [name_id("rotation")]), rounds=3)}


def read_only(data: Drawn) -> Drawn:
    """The same data with X a read-only array that owns its memory: the arms' caches keyed
    by the array (IOME's rotated data and its sorted columns) recognise it across budgets."""
    X = np.array(data.X, dtype=np.float64, order="C", copy=True)
    X.setflags(write=False)
    return Drawn(X, data.mean, data.sigma, data.lower, data.upper)


# ------------------------------------------------------------------ tasks
@dataclass(frozen=True)
class Task:
    """One (case, run) with the arms it still lacks."""

    sweep: str
    dataset: str
    index: int
    run: int
    arms: tuple[str, ...]
    rhos: tuple[float, ...] = RHOS


def run_task(task: Task) -> tuple[Task, list[tuple]]:
    """The errors of every arm of ``task`` at every budget: rows of the run log."""
    keep_freed_memory()
    case = find_case(task.sweep, task.dataset, task.index)
    ds = name_id(case.dataset)
    data = read_only(case.draw([SEED, ds, case.index, task.run]))
    xbar = data.X.mean(axis=0)
    mu = data.mean
    public = public_inputs([SEED, ds, case.index, task.run], case.d)
    rows = []
    for name in task.arms:
        a = name_id(STREAM.get(name, name))
        for rho in task.rhos:
            r_i = RHOS.index(rho)  # the budget's place among all five, whichever a task runs
            rng = np.random.default_rng([SEED, ds, case.index, task.run, r_i, a])
            c0 = time.process_time()
            est = estimate(name, data, rho, rng, public)
            cpu = time.process_time() - c0
            rows.append((case.dataset, case.index, name, case.n, case.d, case.alpha, task.run, rho,
                         float(np.linalg.norm(est - mu)), float(np.linalg.norm(est - xbar)), round(cpu, 4)))
    return task, rows


def load_log(path: Path, rhos: Sequence[float]) -> dict[tuple[str, int, int, str], list[dict]]:
    """Complete (dataset, case, run, arm) entries of a run log: those with all the budgets ``rhos``
    (one row per budget; a budget run twice, by sweeps over different budgets, gives the same row)."""
    per = defaultdict(dict)
    if path.exists():
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                per[(row["dataset"], int(row["case"]), int(row["run"]), row["algorithm"])][float(row["rho"])] = row
    need = {float(r) for r in rhos}
    return {k: list(rows.values()) for k, rows in per.items() if set(rows) >= need}


def plan_tasks(sweep: str, cases: Sequence[Case], arms: Sequence[str], runs: int,
               done: dict) -> list[Task]:
    """The tasks still to do, the most expensive first (so that the workers finish together)."""
    tasks = []
    for c in cases:
        for run in range(runs):
            missing = tuple(a for a in arms if (c.dataset, c.index, run, a) not in done)
            if missing:
                tasks.append(Task(sweep, c.dataset, c.index, run, missing))
    cost = {c.key: c.cost for c in cases}
    tasks.sort(key=lambda t: -cost[(t.dataset, t.index)] * len(t.arms))
    return tasks


def summaries(done: dict, cases: Sequence[Case], runs: int, rhos: Sequence[float], field: str) -> list[tuple]:
    """Mean, sd and median of ``field`` over the runs of every complete (case, arm, rho) in the log."""
    present = {k[3] for k in done}
    order = [a for a in arms_registry() if a in present] + sorted(present - set(arms_registry()))
    out = []
    for c in cases:
        for rho in rhos:
            for a in order:
                entries = [done.get((c.dataset, c.index, r, a)) for r in range(runs)]
                if any(e is None for e in entries):
                    continue
                e = np.array([float(row[field]) for rows in entries for row in rows
                              if float(row["rho"]) == float(rho)])
                out.append((c.dataset, a, c.n, c.d, f"{rho:.6g}", f"{c.alpha:g}", len(e), f"{e.mean():.6g}",
                            f"{e.std(ddof=1):.6g}", f"{np.median(e):.6g}"))
    return out


def _summary_key(row: Sequence) -> tuple[str, str, int, float, float]:
    return str(row[0]), str(row[1]), int(row[3]), float(row[4]), float(row[5])


def write_summary(path: Path, rows: list[tuple], field: str, cases: Sequence[Case]) -> int:
    """Write the summary file: the new rows, and the rows of the file already there that they
    do not replace (other arms or cases, or an earlier sweep's; a row without a median, from
    the sweep before medians were kept, keeps its median empty).  Returns the number of rows."""
    header = SUMMARY_FIELDS + (f"{field}_mean", f"{field}_sd", f"{field}_median")
    merged = {_summary_key(r): tuple(r) for r in rows}
    if path.exists():
        with path.open(newline="") as f:
            for old in csv.DictReader(f):
                vals = tuple(old.get(h, "") or "" for h in header)
                merged.setdefault(_summary_key(vals), vals)
    case_rank = {(c.dataset, c.d, float(c.alpha)): i for i, c in enumerate(cases)}
    arm_rank = {a: i for i, a in enumerate(arms_registry())}
    ordered = sorted(merged.values(), key=lambda r: (case_rank.get((r[0], int(r[3]), float(r[5])), 10**6), r[0],
                                                     int(r[3]), float(r[5]), float(r[4]),
                                                     arm_rank.get(r[1], 10**6), r[1]))
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(ordered)
    tmp.replace(path)
    return len(ordered)


def drop_from_log(path: Path, arms: Sequence[str], datasets: Sequence[str] | None) -> int:
    """Remove the rows of ``arms`` (on ``datasets``, or all) from a run log, so that they run again."""
    if not path.exists():
        return 0
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    keep = [r for r in rows if not (r["algorithm"] in arms and (datasets is None or r["dataset"] in datasets))]
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RUN_FIELDS)
        w.writeheader()
        w.writerows(keep)
    tmp.replace(path)
    return len(rows) - len(keep)


def write_privacy(path: Path, rhos: Sequence[float]) -> None:
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


def parallel_results(tasks: Sequence[Task], *, jobs: int, scheduler: str | None, progress: bool):
    """Yield run_task(t) for every task as workers finish (joblib: loky or dask)."""
    import joblib
    from tqdm.auto import tqdm

    if scheduler is not None:
        try:
            from dask.distributed import Client
        except ImportError as e:
            raise SystemExit("--scheduler needs dask.distributed (pip install distributed)") from e
        client = Client(scheduler)  # noqa: F841  (joblib's dask backend uses the current client)
        config = joblib.parallel_config(backend="dask", n_jobs=-1)
    elif jobs == 1:
        config = joblib.parallel_config(backend="sequential", n_jobs=1)
    else:
        config = joblib.parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1)
    with config:
        gen = joblib.Parallel(return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")(
            joblib.delayed(run_task)(t) for t in tasks)
        yield from tqdm(gen, total=len(tasks), disable=not progress, unit="task", smoothing=0.05,
                        mininterval=2.0, file=sys.stderr)


def run_sweep(sweep: str, *, arms: Sequence[str], runs: int, jobs: int = 2, results: Path = RESULTS,
              datasets: Sequence[str] | None = None, max_d: int | None = None, rhos: Sequence[float] = RHOS,
              scheduler: str | None = None, progress: bool = True, redo: Sequence[str] = ()) -> dict:
    """Run (or resume) one sweep and write its files; returns counts and the wall time.

    ``redo`` names arms whose rows (on ``datasets``) are dropped from the log first, to be
    run again (after a change to their code).
    """
    stem = SWEEPS[sweep]
    results.mkdir(parents=True, exist_ok=True)
    cases = [c for c in all_cases(sweep) if (datasets is None or c.dataset in datasets)
             and (max_d is None or c.d <= max_d)]
    log_path = results / f"{stem}_runs.csv"
    if redo:
        print(f"{sweep}: dropped {drop_from_log(log_path, redo, datasets)} rows of {list(redo)} to run again")
    done = load_log(log_path, rhos)
    tasks = plan_tasks(sweep, cases, arms, runs, done)
    tasks = [Task(t.sweep, t.dataset, t.index, t.run, t.arms, tuple(rhos)) for t in tasks]
    n_arm_runs = sum(len(t.arms) for t in tasks)
    print(f"{sweep}: {len(tasks)} tasks ({n_arm_runs} arm-runs of {len(rhos)} budgets) to do, "
          f"{len(done)} arm-runs already in {log_path.name}; "
          f"{'dask at ' + scheduler if scheduler else str(jobs) + ' worker(s)'}", flush=True)
    new_file = not log_path.exists()
    t0 = time.perf_counter()
    with log_path.open("a", newline="") as log:
        w = csv.writer(log)
        if new_file:
            w.writerow(RUN_FIELDS)
        for task, rows in parallel_results(tasks, jobs=jobs, scheduler=scheduler, progress=progress):
            w.writerows(rows)
            log.flush()
            os.fsync(log.fileno())
            for a in task.arms:
                done[(task.dataset, task.index, task.run, a)] = [
                    dict(zip(RUN_FIELDS, map(str, r), strict=True)) for r in rows if r[2] == a]
    wall = time.perf_counter() - t0
    for field, suffix in (("error", ""), ("excess", "_excess")):
        n_rows = write_summary(results / f"{stem}{suffix}.csv", summaries(done, all_cases(sweep), runs, rhos, field),
                               field, all_cases(sweep))
    write_privacy(results / "peers_privacy.csv", RHOS)
    print(f"{sweep}: {n_rows} rows in {stem}.csv and {stem}_excess.csv; "
          f"{len(tasks)} tasks in {wall / 60:.1f} min wall", flush=True)
    return {"tasks": len(tasks), "arm_runs": n_arm_runs, "wall_s": wall, "rows": n_rows}
