"""The sweeps' engine: Algorithm 3 and its peers on PLAN's Gaussian benchmarks and off its model.

The command line is benchmarks/peers_sweep.py; this module holds the cases, the tasks and
their seeding, the run log and the summaries, so that the workers (local loky processes or
the workers of a dask cluster, where egmbook is installed) import them by name.  The public
entry point is :func:`run_sweep`.

Two sweeps share one engine::

  gaussian   PLAN's benchmarks GaussianA, GaussianB and GaussianC
             (egmbook.gaussian_benchmarks; Aumuller, Lebeda, Nelson and Pagh 2024, Figure 3),
             behind chapter 8; results peers.csv, peers_excess.csv
  offmodel   real datasets shipped inside scikit-learn and synthetic off-model families
             (egmbook.offmodel_data), behind chapter 9; results offmodel.csv,
             offmodel_excess.csv

For every case (one point of a benchmark, or one dataset or family), ``--runs`` datasets
are drawn (a real dataset is the same every run; only the mechanisms' noise changes); on
each, every arm of ``egmlib.peers.arms.ARMS`` runs at every rho in {1/16, 1/8, 1/4, 1/2, 1}
and two errors are recorded: ``error`` = ``||mu_tilde - mu||_2`` against the population mean
(for a real dataset, whose population is the dataset itself, the empirical mean) and
``excess`` = ``||mu_tilde - x_bar||_2`` against the empirical mean of the same rows (the error
that privacy adds, without the sampling error that every arm shares).

Outputs (benchmarks/results/), for SWEEP in {peers, offmodel}::

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

Parallel engines.  Locally, joblib: ``jobs=N`` runs N loky worker processes (one BLAS
thread each; ``jobs=1`` runs in this process).  On a cluster, dask.distributed (the
``cluster`` extra, pinned: ``pip install -e .[cluster]`` on the client and on every node):
start ``dask scheduler`` and ``dask worker ADDRESS --nthreads 1`` on the nodes (the nanny
gives each worker one BLAS thread), then pass ``scheduler=ADDRESS`` (for example
tcp://10.0.0.1:8786) or a ``distributed.Client``.  Every task is submitted at once, the most
expensive first, and waits in the scheduler's queue until a worker thread is free, so a
worker that joins later gets work at once and no worker idles while tasks remain; a task
never runs on the client.  Before the first task, and again inside every task (workers that
join later), the workers' :func:`code_fingerprint` (egmlib, egmbook, numpy, scipy) must equal
the client's, or the sweep stops with the difference.  A cluster with a single worker thread
runs the sweep serially and says so (a warning).  Progress: a tqdm bar over the tasks.

Committed results are never replaced by a smaller sample: :func:`run_sweep` refuses to write
fewer than :data:`RUNS_OF` runs into :data:`RESULTS` (quick slices go to :data:`SCRATCH`,
git-ignored), and a summary row is never replaced by one over fewer runs.

Run:  python benchmarks/peers_sweep.py [--sweep gaussian offmodel] [--jobs 2] [--runs 50]
      python benchmarks/peers_sweep.py --arms Alg3 PLAN IOME --datasets digits
      python benchmarks/peers_sweep.py --quick      (2 runs, d <= 64, results to SCRATCH)
"""

from __future__ import annotations

import csv
import ctypes
import ctypes.util
import functools
import hashlib
import math
import numbers
import os
import sys
import time
import warnings
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from egmbook import gaussian_benchmarks as gb
from egmlib import calibration
from egmlib import validation as _v
from egmlib.peers import budget
from egmlib.peers.arms import ARMS

__all__ = ["SEED", "RESULTS", "SCRATCH", "RUNS", "RUNS_OF", "RHOS", "SWEEPS", "STREAM", "RUN_FIELDS",
           "Drawn", "Case", "Task", "all_cases", "run_task", "run_sweep", "code_fingerprint",
           "name_id", "keep_freed_memory"]

SEED = 20240613
#: The committed results that chapters 8 and 9 read.
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
#: Where slices with fewer than RUNS runs go (git-ignored).
SCRATCH = RESULTS / "scratch"
#: The number of runs of the committed results of chapter 8's sweep.
RUNS = 50
#: The runs of each sweep's committed results, 50 for chapter 8's Gaussian sweep and 12 for chapter
#: 9's off-model sweep, a reduced sweep on the final ESM (every dataset, family and budget kept, fewer runs a
#: cell, so that it ran in about an hour on the book's two shared cores).
RUNS_OF: Mapping[str, int] = MappingProxyType({"gaussian": RUNS, "offmodel": 12})
#: The five budgets rho of every sweep.
RHOS = gb.RHOS
SWEEPS = {"gaussian": "peers", "offmodel": "offmodel"}  # sweep -> file stem
RUN_FIELDS = ("dataset", "case", "algorithm", "n", "d", "alpha", "run", "rho", "error", "excess", "cpu_s")
SUMMARY_FIELDS = ("dataset", "algorithm", "n", "d", "rho", "alpha", "runs")
PRIVACY_DELTAS = (1e-5, 1e-6, 1e-8)
#: Arms that draw from another arm's random stream (PLAN's last step on Algorithm 3's private
#: inputs gets the very sigma_hat and mu_hat of "Alg3", from the same seed), so that the two arms
#: differ only in their last step.
STREAM = {"PLAN-last-step": "Alg3"}
_MAX_RUNS = 10**6  # a bound that no sweep reaches: a runaway count is an error, not a hang
_MAX_JOBS = 4096
_MAX_D = 10**6


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed large blocks instead of unmapping them (mallopt), as the sweeps
    behind chapters 8 and 9 do in every worker.

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
    """A stable integer for a name (CRC-32): the seed coordinate of a dataset or an arm in
    the sweeps of chapters 8 and 9."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got name of type {type(name).__name__}")
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
def _cases(sweep: str) -> tuple[Case, ...]:
    return tuple(_gaussian_cases() if sweep == "gaussian" else _offmodel_cases())


def all_cases(sweep: str) -> tuple[Case, ...]:
    """Every case of one sweep ("gaussian": PLAN's benchmarks, Aumuller et al. 2024;
    "offmodel": chapter 9's data), in the order of the results files."""
    return _cases(_v.check_choice("sweep", sweep, SWEEPS))


def _find_case(sweep: str, dataset: str, index: int) -> Case:
    for c in all_cases(sweep):
        if c.key == (dataset, index):
            return c
    raise ValueError(f"task must name a case of the {sweep} sweep, got {dataset!r} #{index}")


# ------------------------------------------------------------------ arms
def _estimate(name: str, data: Drawn, rho: float, rng: np.random.Generator,
              public: Any = None) -> np.ndarray:
    """The private mean of arm ``name`` on ``data`` at budget rho.

    Arms that are given inputs (``arm.given``: "sigma", "mu") get the case's standard
    deviations and reference mean; every arm gets the case's public box, and the entries
    of ``public`` (public randomness shared by the budgets of a task, see
    :func:`_public_inputs`) that it accepts (``arm.accepts``).
    """
    arm = ARMS[name]
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


class _SharedInputs:
    """Inputs shared by the five budgets of every arm that accepts them, computed on first use.

    ``rotation``: IOME's public randomised Hadamard rotation
    (egmlib.peers.hadamard.random_hadamard, 3 rounds) from default_rng(seed + [id("rotation")]),
    drawn independently of the data (a release stays rho-zCDP for any fixed rotation);
    ``rotated``: the task's data rotated by it once (egmlib.peers.iome.rotate_data);
    ``presorted``: the data's sorted columns (egmlib.peers.quantiles.sorted_columns), PLAN's
    order statistics.  The last two are computations on the data, not releases: passing them
    gives the same estimates, bit for bit, as letting each call redo them.  Each is computed
    inside the first call that needs it, so the call's recorded CPU time includes it once.
    """

    def __init__(self, seed: list[int], data: Drawn) -> None:
        self._seed, self._data = seed, data
        self._values: dict[str, Any] = {}

    def __contains__(self, key: str) -> bool:
        return key in ("rotation", "rotated", "presorted")

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            self._values[key] = self._compute(key)
        return self._values[key]

    def _compute(self, key: str) -> Any:
        from egmlib.peers.hadamard import random_hadamard
        from egmlib.peers.iome import rotate_data
        from egmlib.peers.quantiles import sorted_columns
        X = self._data.X
        if key == "rotation":
            return random_hadamard(X.shape[1], rng=np.random.default_rng(self._seed + [name_id("rotation")]), rounds=3)
        if key == "rotated":
            return rotate_data(X, rotation=self["rotation"], lower=self._data.lower, upper=self._data.upper)
        return sorted_columns(X)


def _public_inputs(seed: list[int], data: Drawn) -> _SharedInputs:
    """The inputs a task's arms share across their budgets (see :class:`_SharedInputs`)."""
    return _SharedInputs(seed, data)


def _read_only(data: Drawn) -> Drawn:
    """The same data with X a fresh, read-only, C-ordered float64 copy: no arm can change the task's
    data for the arms and budgets that follow it."""
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


def run_task(task: Task) -> tuple[Task, list[tuple[Any, ...]]]:
    """The errors of every arm of ``task`` at every budget: rows of the run log (the sweeps
    behind chapters 8 and 9, seeded by the task's coordinates only)."""
    if not isinstance(task, Task):
        raise TypeError(f"task must be an egmbook.sweep.Task, got task of type {type(task).__name__}")
    keep_freed_memory()
    case = _find_case(task.sweep, task.dataset, task.index)
    ds = name_id(case.dataset)
    data = _read_only(case.draw([SEED, ds, case.index, task.run]))
    xbar = data.X.mean(axis=0)
    mu = data.mean
    public = _public_inputs([SEED, ds, case.index, task.run], data)
    rows = []
    for name in task.arms:
        a = name_id(STREAM.get(name, name))
        for rho in task.rhos:
            r_i = RHOS.index(rho)  # the budget's place among all five, whichever a task runs
            rng = np.random.default_rng([SEED, ds, case.index, task.run, r_i, a])
            c0 = time.process_time()
            est = _estimate(name, data, rho, rng, public)
            cpu = time.process_time() - c0
            rows.append((case.dataset, case.index, name, case.n, case.d, case.alpha, task.run, rho,
                         float(np.linalg.norm(est - mu)), float(np.linalg.norm(est - xbar)), round(cpu, 4)))
    return task, rows


def _load_log(path: Path, rhos: Sequence[float]) -> dict[tuple[str, int, int, str], list[dict[str, str]]]:
    """Complete (dataset, case, run, arm) entries of a run log: those with all the budgets ``rhos``
    (one row per budget; a budget run twice, by sweeps over different budgets, gives the same row)."""
    per: dict[tuple[str, int, int, str], dict[float, dict[str, str]]] = defaultdict(dict)
    if path.exists():
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                per[(row["dataset"], int(row["case"]), int(row["run"]), row["algorithm"])][float(row["rho"])] = row
    need = {float(r) for r in rhos}
    return {k: list(rows.values()) for k, rows in per.items() if set(rows) >= need}


def _plan_tasks(sweep: str, cases: Sequence[Case], arms: Sequence[str], runs: int,
                done: dict[Any, Any], rhos: tuple[float, ...]) -> list[Task]:
    """The tasks still to do, the most expensive first (so that the workers finish together)."""
    tasks = []
    for c in cases:
        for run in range(runs):
            missing = tuple(a for a in arms if (c.dataset, c.index, run, a) not in done)
            if missing:
                tasks.append(Task(sweep, c.dataset, c.index, run, missing, rhos))
    cost = {c.key: c.cost for c in cases}
    tasks.sort(key=lambda t: -cost[(t.dataset, t.index)] * len(t.arms))
    return tasks


def _summaries(done: dict[Any, Any], cases: Sequence[Case], runs: int, rhos: Sequence[float],
               field: str) -> list[tuple[Any, ...]]:
    """Mean, sd and median of ``field`` over the runs of every complete (case, arm, rho) in the log."""
    present = {k[3] for k in done}
    order = [a for a in ARMS if a in present] + sorted(present - set(ARMS))
    out = []
    for c in cases:
        for rho in rhos:
            for a in order:
                found = [done.get((c.dataset, c.index, r, a)) for r in range(runs)]
                entries = [e for e in found if e is not None]
                if len(entries) < len(found):
                    continue
                e = np.array([float(row[field]) for rows in entries for row in rows
                              if float(row["rho"]) == float(rho)])
                out.append((c.dataset, a, c.n, c.d, f"{rho:.6g}", f"{c.alpha:g}", len(e), f"{e.mean():.6g}",
                            f"{e.std(ddof=1):.6g}", f"{np.median(e):.6g}"))
    return out


def _summary_key(row: Sequence[Any]) -> tuple[str, str, int, float, float]:
    return str(row[0]), str(row[1]), int(row[3]), float(row[4]), float(row[5])


def _write_summary(path: Path, rows: list[tuple[Any, ...]], field: str, cases: Sequence[Case]) -> tuple[int, int]:
    """Write the summary file: the new rows, and the rows of the file already there that they
    do not replace (other arms or cases, or an earlier sweep's; a row without a median, from
    the sweep before medians were kept, keeps its median empty).  A row over more runs is
    never replaced by one over fewer (the key names no run count: a quick slice must not
    overwrite the committed 50-run rows).  Returns the number of rows written and of new
    rows kept out by that rule."""
    header = SUMMARY_FIELDS + (f"{field}_mean", f"{field}_sd", f"{field}_median")
    merged = {_summary_key(r): tuple(r) for r in rows}
    kept_out = 0
    if path.exists():
        with path.open(newline="") as f:
            for old in csv.DictReader(f):
                vals = tuple(old.get(h, "") or "" for h in header)
                key = _summary_key(vals)
                if key in merged and int(merged[key][6]) < int(vals[6]):
                    merged[key] = vals
                    kept_out += 1
                merged.setdefault(key, vals)
    case_rank = {(c.dataset, c.d, float(c.alpha)): i for i, c in enumerate(cases)}
    arm_rank = {a: i for i, a in enumerate(ARMS)}
    ordered = sorted(merged.values(), key=lambda r: (case_rank.get((r[0], int(r[3]), float(r[5])), 10**6), r[0],
                                                     int(r[3]), float(r[5]), float(r[4]),
                                                     arm_rank.get(r[1], 10**6), r[1]))
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(ordered)
    tmp.replace(path)
    return len(ordered), kept_out


def _drop_from_log(path: Path, arms: Sequence[str], datasets: Sequence[str] | None) -> int:
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


def _write_privacy(path: Path, rhos: Sequence[float]) -> None:
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


# ------------------------------------------------------------------ engines
def _package_digest(package: str) -> str:
    """SHA-256 of the files of an installed package (paths and contents; caches left out)."""
    import importlib

    source = importlib.import_module(package).__file__
    if source is None:
        raise RuntimeError(f"the package {package} has no source files to fingerprint")
    root = Path(source).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts and not any(p.endswith(".egg-info") for p in f.parts) \
                and f.suffix not in (".pyc", ".tmp"):
            h.update(str(f.relative_to(root)).encode())
            h.update(b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()[:16]


@functools.cache
def code_fingerprint() -> tuple[tuple[str, str], ...]:
    """What a sweep's numbers depend on, as (name, version or digest) pairs: the sources of
    egmlib and egmbook (a digest of their files) and the versions of numpy and scipy.

    A cluster's workers must all give the client's fingerprint (chapters 8 and 9 compare
    results computed on different machines bit for bit)."""
    return (("egmlib", _package_digest("egmlib")), ("egmbook", _package_digest("egmbook")),
            ("numpy", np.__version__), ("scipy", metadata.version("scipy")))


def _differences(mine: tuple[tuple[str, str], ...], theirs: Any) -> list[str]:
    m, t = dict(mine), dict(theirs)
    return [f"{k} {t.get(k)} (client: {m[k]})" for k in m if t.get(k) != m[k]]


def _run_on_worker(task: Task, fingerprint: tuple[tuple[str, str], ...]) -> tuple[Task, list[tuple[Any, ...]]]:
    """run_task on a cluster's worker, after checking that it runs the client's code."""
    diff = _differences(fingerprint, code_fingerprint())
    if diff:
        raise RuntimeError(f"this worker runs other code than the client: {', '.join(diff)}; "
                           "install the same egmlib and egmbook on every node")
    return run_task(task)


def _cluster_results(tasks: Sequence[Task], scheduler: Any, progress: bool) -> Iterator[tuple[Task, list[Any]]]:
    """Yield run_task(t) for every task as a dask cluster's workers finish them.

    Every task is submitted at once with a priority (the most expensive first); the
    scheduler queues them and hands one to each worker thread as it frees, so workers that
    join later get work at once.  No task runs on the client."""
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - the cluster extra is in the lock
        raise ImportError("a sweep on a cluster needs dask.distributed: pip install -e .[cluster]") from e
    from tqdm.auto import tqdm

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        client.wait_for_workers(1, timeout=120)
        mine = code_fingerprint()
        for worker, theirs in client.run(code_fingerprint).items():
            diff = _differences(mine, theirs)
            if diff:
                raise RuntimeError(f"worker {worker} runs other code than the client: {', '.join(diff)}; "
                                   "install the same egmlib and egmbook on every node")
        threads = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values())
        if threads == 1 and len(tasks) > 1:
            warnings.warn("the cluster has one worker thread: the sweep runs serially on it "
                          "(add workers; those that join later take tasks at once)", stacklevel=2)
        futures = [client.submit(_run_on_worker, t, mine, priority=len(tasks) - i, pure=False)
                   for i, t in enumerate(tasks)]
        for fut in tqdm(as_completed(futures), total=len(futures), disable=not progress, unit="task",
                        smoothing=0.05, mininterval=2.0, file=sys.stderr):
            result = fut.result()
            fut.release()
            yield result
    finally:
        if own:
            client.close()


def _local_results(tasks: Sequence[Task], jobs: int, progress: bool) -> Iterator[tuple[Task, list[Any]]]:
    """Yield run_task(t) for every task as joblib's local workers finish (loky; jobs = 1: here)."""
    import joblib
    from tqdm.auto import tqdm

    if jobs == 1:
        config = joblib.parallel_config(backend="sequential", n_jobs=1)
    else:
        config = joblib.parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1)
    with config:
        gen = joblib.Parallel(return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")(
            joblib.delayed(run_task)(t) for t in tasks)
        yield from tqdm(gen, total=len(tasks), disable=not progress, unit="task", smoothing=0.05,
                        mininterval=2.0, file=sys.stderr)


def _check_names(name: str, value: Any, known: Sequence[str], *, where: str) -> tuple[str, ...] | None:
    """None, or a non-empty sequence of distinct names, each one of ``known``."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, list | tuple):
        raise TypeError(f"{name} must be a sequence of names, got {name} of type {type(value).__name__}")
    names = tuple(value)
    bad_type = [v for v in names if not isinstance(v, str)]
    if bad_type:
        raise TypeError(f"{name} must hold strings, got {bad_type[0]!r} in {name}")
    if not names:
        raise ValueError(f"{name} must name at least one entry, got an empty {name}")
    unknown = [v for v in names if v not in known]
    if unknown:
        raise ValueError(f"{name} must be names of {where}, got {unknown}; known: {list(known)}")
    if len(set(names)) < len(names):
        raise ValueError(f"{name} must not repeat a name, got {list(names)}")
    return names


def _check_rhos(value: Any) -> tuple[float, ...]:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        raise ValueError(f"rhos must be a sequence of budgets, got the number rhos={value!r}")
    arr = _v.check_finite_vector("rhos", value)
    out = tuple(float(r) for r in arr)
    unknown = [r for r in out if r not in RHOS]
    if unknown:
        raise ValueError(f"rhos must be budgets of the sweep {list(RHOS)}, got {unknown}")
    if len(set(out)) < len(out):
        raise ValueError(f"rhos must not repeat a budget, got rhos={list(out)}")
    return out


def run_sweep(sweep: str, *, arms: Sequence[str] | None = None, runs: int | None = None, jobs: int = 2,
              results: str | Path = RESULTS, datasets: Sequence[str] | None = None, max_d: int | None = None,
              rhos: Sequence[float] = RHOS, scheduler: Any = None, progress: bool = True,
              redo: Sequence[str] | None = None) -> dict[str, float]:
    """Run (or resume) one sweep behind chapters 8 and 9 (PLAN's benchmarks of Aumuller et al.
    2024, or the off-model data) and write its files; returns counts and the wall time.

    Parameters
    ----------
    sweep : {"gaussian", "offmodel"}
    arms : sequence of str, optional
        Names of :data:`egmlib.peers.arms.ARMS` (default: every arm).
    runs : int, optional
        Runs per case, at least 2 (the summaries give a standard deviation; default
        :data:`RUNS_OF` of the sweep); fewer than that only into a folder other than
        :data:`RESULTS` (e.g. :data:`SCRATCH`).
    jobs : int
        Local worker processes (loky; 1 runs here); ignored with ``scheduler``.
    results : str or pathlib.Path
        An existing folder for the run log and the summaries.
    datasets : sequence of str, optional
        Only these datasets of the sweep (a name of the other sweep, or a misspelt one, is
        an error).
    max_d : int, optional
        Skip cases with a larger dimension.
    rhos : sequence of float
        Some of the five budgets :data:`RHOS`.
    scheduler : str or distributed.Client, optional
        Run on a dask cluster: its scheduler's address or a client.
    progress : bool
        A progress bar on stderr.
    redo : sequence of str, optional
        Arms whose rows (on ``datasets``) are dropped from the log first, to run again
        (after a change to their code).

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong type or value, naming it; a slice of fewer than
        :data:`RUNS_OF` runs aimed at :data:`RESULTS` is refused.
    """
    sweep = _v.check_choice("sweep", sweep, SWEEPS)
    arm_names = _check_names("arms", arms, tuple(ARMS), where="egmlib.peers.arms.ARMS") or tuple(ARMS)
    committed = RUNS_OF[sweep]
    runs = committed if runs is None else _v.check_count("runs", runs, minimum=2, maximum=_MAX_RUNS)  # sd needs two
    jobs = _v.check_count("jobs", jobs, maximum=_MAX_JOBS)
    if isinstance(results, bool) or not isinstance(results, (str, Path)):
        raise TypeError(f"results must be a str or pathlib.Path, got results of type {type(results).__name__}")
    results = Path(results)
    if not results.is_dir():
        raise ValueError(f"results must be an existing folder, got results={str(results)!r}")
    names = tuple(c.dataset for c in all_cases(sweep))
    datasets = _check_names("datasets", datasets, tuple(dict.fromkeys(names)), where=f"the {sweep} sweep")
    if max_d is not None:
        max_d = _v.check_count("max_d", max_d, maximum=_MAX_D)
    rhos = _check_rhos(rhos)
    if scheduler is not None and (isinstance(scheduler, bool) or not (isinstance(scheduler, str)
                                                                        or hasattr(scheduler, "submit"))):
        raise TypeError(f"scheduler must be an address or a distributed.Client, got scheduler of type "
                        f"{type(scheduler).__name__}")
    progress = _v.check_bool("progress", progress)
    redo = _check_names("redo", redo, tuple(ARMS), where="egmlib.peers.arms.ARMS") or ()
    if runs < committed and results.resolve() == RESULTS.resolve():
        raise ValueError(f"runs={runs} into results={str(results)!r} would replace the committed {committed}-run "
                         f"summaries that chapters 8 and 9 read; write a slice to a scratch folder "
                         f"(results={str(SCRATCH)!r})")
    return _run(sweep, arm_names, runs, jobs, results, datasets, max_d, rhos, scheduler, progress, redo)


def _run(sweep: str, arms: tuple[str, ...], runs: int, jobs: int, results: Path, datasets: tuple[str, ...] | None,
         max_d: int | None, rhos: tuple[float, ...], scheduler: Any, progress: bool,
         redo: Sequence[str]) -> dict[str, float]:
    stem = SWEEPS[sweep]
    cases = [c for c in all_cases(sweep) if (datasets is None or c.dataset in datasets)
             and (max_d is None or c.d <= max_d)]
    log_path = results / f"{stem}_runs.csv"
    if redo:
        print(f"{sweep}: dropped {_drop_from_log(log_path, redo, datasets)} rows of {list(redo)} to run again")
    done = _load_log(log_path, rhos)
    tasks = _plan_tasks(sweep, cases, arms, runs, done, rhos)
    n_arm_runs = sum(len(t.arms) for t in tasks)
    where = ("dask at " + (scheduler if isinstance(scheduler, str) else "the client's cluster")
             if scheduler is not None else f"{jobs} worker(s)")
    print(f"{sweep}: {len(tasks)} tasks ({n_arm_runs} arm-runs of {len(rhos)} budgets) to do, "
          f"{len(done)} arm-runs already in {log_path.name}; {where}", flush=True)
    new_file = not log_path.exists()
    t0 = time.perf_counter()
    stream = (_cluster_results(tasks, scheduler, progress) if scheduler is not None
              else _local_results(tasks, jobs, progress))
    with log_path.open("a", newline="") as log:
        w = csv.writer(log)
        if new_file:
            w.writerow(RUN_FIELDS)
        for task, rows in stream:
            w.writerows(rows)
            log.flush()
            os.fsync(log.fileno())
            for a in task.arms:
                done[(task.dataset, task.index, task.run, a)] = [
                    dict(zip(RUN_FIELDS, map(str, r), strict=True)) for r in rows if r[2] == a]
    wall = time.perf_counter() - t0
    kept = 0
    for field, suffix in (("error", ""), ("excess", "_excess")):
        rows = _summaries(done, all_cases(sweep), runs, rhos, field)
        n_rows, k = _write_summary(results / f"{stem}{suffix}.csv", rows, field, all_cases(sweep))
        kept += k
    _write_privacy(results / "peers_privacy.csv", RHOS)
    print(f"{sweep}: {n_rows} rows in {stem}.csv and {stem}_excess.csv; "
          f"{len(tasks)} tasks in {wall / 60:.1f} min wall"
          + (f"; {kept} rows over more runs kept" if kept else ""), flush=True)
    return {"tasks": len(tasks), "arm_runs": n_arm_runs, "wall_s": wall, "rows": n_rows}
