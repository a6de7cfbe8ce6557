r"""Findings of chapter 9: where Algorithm 3 with private inputs fails off its model; its robust pipeline's goals.

- :func:`diagnose` runs chapter 8's and chapter 9's pipelines of Algorithm 3 with private
  inputs on one dataset of :mod:`egmbook.offmodel_data` and records each step (scales,
  centre, radius, clipped rows, error) next to the errors of the arms given more inputs;
  ``benchmarks/offmodel_diagnosis.py`` saves chapter 9's diagnoses (:func:`save_diagnoses`)
  and the chapter reads them (:func:`load_diagnoses`), which its test re-runs.
- :func:`goals` measures the three goals of chapter 9's pipeline (``"Alg3"``) on the sweeps'
  results, cell by cell (dataset and budget, medians over the runs): off the model it adds at
  most :data:`GOAL_OFF_MODEL` times the error of the better of PLAN (Aumuller, Lebeda, Nelson
  and Pagh 2024) and IOME (Huang, Liang and Yi 2021), with a median ratio of at most 1; it is
  within :data:`GOAL_NEAR_BEST` times the best method given nothing (PLAN, IOME, PLAN's last
  step on the same private inputs) in at least :data:`GOAL_NEAR_BEST_SHARE` of the cells; and
  where chapter 9 recommended it before the wider sweep (:data:`RECOMMENDED`) it is the best
  method given nothing or within :data:`GOAL_RECOMMENDED` times it.
- :func:`verdicts` says, for each kind of data, which method given nothing adds the least
  error most often.
- :func:`load_crossover` reads the calibration of the few-rows rule
  (``benchmarks/offmodel_crossover.py``) as a :class:`Crossover`: the switch point of the rule's
  statistic and the constant it gives; :func:`few_rows_share` says how often the rule takes
  the few-rows path on a dataset.

``benchmarks/offmodel_ratios.py`` and ``benchmarks/offmodel_diagnosis.py`` print these.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from egmbook import gaussian_benchmarks as gb
from egmbook import offmodel_data as od
from egmbook.findings import Finding
from egmbook.peer_results import OffModelResults, PeersResults
from egmlib import validation as _v
from egmlib.peers import algorithm3, algorithm3_robust
from egmlib.peers.arms import ARMS
from egmlib.peers.scales import pairwise_squared_differences

__all__ = ["GOAL_OFF_MODEL", "GOAL_OFF_MODEL_MEDIAN", "GOAL_NEAR_BEST", "GOAL_NEAR_BEST_SHARE",
           "GOAL_RECOMMENDED", "RECOMMENDED", "PEERS", "NEW", "OLD",
           "StepDiagnostics", "Diagnosis", "diagnose", "DIAGNOSIS_DATASETS", "DIAGNOSIS_RUNS", "DIAGNOSIS_RHO",
           "DIAGNOSIS_FILE",
           "save_diagnoses", "load_diagnoses", "Comparison", "Goal", "Goals", "goals",
           "best_peer_ratios", "VERDICT_ARMS", "VERDICT_GROUPS", "Verdict", "verdicts",
           "CROSSOVER_TOLERANCE", "CrossoverCell", "Crossover", "crossover_switch",
           "load_crossover", "few_rows_share"]

#: Goal 1 -- off the model, chapter 9's pipeline adds at most this times the better peer's error ...
GOAL_OFF_MODEL = 2.0
#: ... with a median ratio of at most this.
GOAL_OFF_MODEL_MEDIAN = 1.0
#: Goal 2 -- within this factor of the best method given nothing ...
GOAL_NEAR_BEST = 1.5
#: ... in at least this share of the cells.
GOAL_NEAR_BEST_SHARE = 0.9
#: Goal 3 -- at most this times the best method given nothing where chapter 9 recommended it.
GOAL_RECOMMENDED = 1.05
#: The peers goal 1 compares with (the better of the two, cell by cell).
PEERS = ("PLAN", "IOME")
#: The methods given nothing that goals 2 and 3 and the verdicts compare (chapter 8's pipeline left out).
VERDICT_ARMS = ("Alg3", "PLAN-last-step", "PLAN", "IOME")
#: Where chapter 9 recommended its pipeline before the wider sweep; Gaussian-like data with
#: unequal scales, symmetric heavy tails, correlated coordinates or a mixture, with 10^4 rows
#: (off-model families), and PLAN's skewed Gaussian benchmarks (GaussianB at alpha >= 1, GaussianC).
RECOMMENDED = ("t3", "t4", "t10", "ar1", "equicorrelated", "mixture", "sigma_x0.5", "sigma_x2")
#: Chapter 9's pipeline and chapter 8's, by their names in the sweeps.
NEW, OLD = "Alg3", "Alg3-private"
#: The seed of the diagnosis (benchmarks/offmodel_diagnosis.py).
DIAGNOSIS_SEED = 20261126
#: The datasets, runs and budget of chapter 9's diagnosis (Observation 9.A), which
#: ``benchmarks/offmodel_diagnosis.py`` saves and :func:`load_diagnoses` reads.
DIAGNOSIS_DATASETS = ("digits", "breast_cancer", "wine", "diabetes", "fair", "randhie", "baskets_n1e4")
DIAGNOSIS_RUNS, DIAGNOSIS_RHO = 10, 0.25
#: Where ``benchmarks/offmodel_diagnosis.py`` saves chapter 9's diagnoses, the repository's
#: ``benchmarks/results/offmodel_diagnosis.json``.
#:
#: :meta hide-value:
DIAGNOSIS_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "offmodel_diagnosis.json"


# ---------------------------------------------------------------------------------------
# the step-by-step diagnosis (Observation 9.A)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StepDiagnostics(Finding):
    """One pipeline's steps on one dataset, medians over the runs."""

    sig_med: float  #: median over the varying columns of sigma_hat_j / sd_j
    sig_min: float  #: smallest sigma_hat_j / sd_j
    sig_max: float  #: largest sigma_hat_j / sd_j
    centre: float  #: ||mu_hat - x_bar||_2
    centre_t: float  #: ||(mu_hat - x_bar) * b||_2, in the transformed space
    C: float  #: the clipping radius
    norm_med: float  #: median transformed norm ||(x_i - mu_hat) * b||
    clipped: float  #: share of the rows clipped
    error: float  #: ||estimate - x_bar||_2, the error privacy adds


@dataclass(frozen=True)
class Diagnosis(Finding):
    """Chapter 8's (``"Alg3-private"``) and chapter 9's (``"Alg3"``, its Algorithm 3 path) pipelines
    step by step on one dataset, and the errors of the arms given more (``reference``)."""

    dataset: str
    n: int
    d: int
    runs: int
    rho: float
    ties: float  #: share of the paired half squared differences that are exactly 0
    zero_columns: int  #: columns with zero variance
    steps: Mapping[str, StepDiagnostics]  #: pipeline name -> its steps
    reference: Mapping[str, float]  #: arm -> median error added


def _steps(r: Any, X: np.ndarray, sd: np.ndarray, xbar: np.ndarray) -> dict[str, float]:
    ok = sd > 0
    ratio = r.sigma[ok] / sd[ok]
    b = 1.0 / np.sqrt(r.sigma * r.sigma.sum())
    norms = np.linalg.norm((X - r.centre) * b, axis=1)
    return {
        "sig_med": float(np.median(ratio)), "sig_min": float(ratio.min()),
        "sig_max": float(ratio.max()),
        "centre": float(np.linalg.norm(r.centre - xbar)),
        "centre_t": float(np.linalg.norm((r.centre - xbar) * b)),
        "C": float(r.C), "norm_med": float(np.median(norms)),
        "clipped": float(np.mean(norms > r.C)),
        "error": float(np.linalg.norm(r.estimate - xbar)),
    }


def diagnose(dataset: str, *, runs: int, rho: float) -> Diagnosis:
    """Chapter 9's diagnosis of Algorithm 3 with private inputs on ``dataset`` at budget ``rho``
    (medians over ``runs`` runs; the robust pipeline with its path rule off, ``path="algorithm3"``).

    The reference errors are those of Algorithm 3 given sigma with a private centre, given
    sigma and mu, of PLAN, IOME (Huang, Liang and Yi 2021) and of the released pipeline
    ``ARMS["Alg3"]`` (with its rule; it draws from the generators of the path's runs, so the
    two coincide where the rule keeps Algorithm 3's path).
    """
    dataset = _v.check_choice("dataset", dataset, od.DATASETS)
    runs = _v.check_count("runs", runs, maximum=10**4)
    rho = _v.check_positive_finite("rho", rho)
    s = od.load(dataset, seed=0)
    X, xbar = s.X, s.X.mean(axis=0)
    V = pairwise_squared_differences(X, rng=np.random.default_rng(DIAGNOSIS_SEED))
    ties = float(np.mean(V == 0.0))
    zero_cols = int(np.count_nonzero(s.sd == 0.0))
    pipelines: dict[str, Callable[..., Any]] = {
        "Alg3-private": algorithm3.algorithm3_private,
        "Alg3": functools.partial(algorithm3_robust.algorithm3_robust, path="algorithm3")}
    steps = {}
    for label, f in pipelines.items():
        per = [_steps(f(X, rho=rho, lower=s.lower, upper=s.upper,
                        rng=np.random.default_rng([DIAGNOSIS_SEED, run, i])), X, s.sd, xbar)
               for i, run in enumerate(range(runs))]
        steps[label] = StepDiagnostics(**{k: float(np.median([p[k] for p in per])) for k in per[0]})
    ref = {}
    for a in ("Alg3-private-centre", "Alg3-oracle", "PLAN", "IOME", "Alg3"):
        arm = ARMS[a]
        given = {"sigma": s.sigma, "mu": xbar}
        errs = [np.linalg.norm(arm(X, rho=rho, lower=s.lower, upper=s.upper,
                                   rng=np.random.default_rng([DIAGNOSIS_SEED, run, run if a == "Alg3" else 7]),
                                   **{g: given[g] for g in arm.given}).estimate - xbar)
                for run in range(runs)]
        ref[a] = float(np.median(errs))
    return Diagnosis(dataset=dataset, n=X.shape[0], d=X.shape[1], runs=runs, rho=rho, ties=ties,
                     zero_columns=zero_cols, steps=MappingProxyType(steps), reference=MappingProxyType(ref))


def save_diagnoses(diagnoses: Sequence[Diagnosis], path: str | Path) -> Path:
    """Write ``diagnoses`` (Observation 9.A's records) as JSON to ``path``, a ``.json`` file
    (chapter 9 reads :data:`DIAGNOSIS_FILE`); floats are written exactly (their repr)."""
    if isinstance(diagnoses, Diagnosis) or not isinstance(diagnoses, Sequence) or not diagnoses or not all(
            isinstance(g, Diagnosis) for g in diagnoses):
        raise TypeError("diagnoses must be a non-empty sequence of egmbook.findings.offmodel.Diagnosis (diagnose())")
    if isinstance(path, bool) or not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = Path(path)
    if p.suffix != ".json":
        raise ValueError(f"path must name a .json file, got path={str(p)!r}")
    rows = [{**{f.name: getattr(g, f.name) for f in dataclasses.fields(g) if f.name not in ("steps", "reference")},
             "steps": {k: dataclasses.asdict(v) for k, v in g.steps.items()}, "reference": dict(g.reference)}
            for g in diagnoses]
    p.write_text(json.dumps(rows, indent=1) + "\n")
    return p


def load_diagnoses(path: str | Path | None = None) -> Mapping[str, Diagnosis]:
    """Observation 9.A's diagnoses saved by ``benchmarks/offmodel_diagnosis.py`` (by default the
    repository's ``benchmarks/results/offmodel_diagnosis.json``), by dataset, in the saved order."""
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = DIAGNOSIS_FILE if path is None else Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"diagnoses not found at {p}; run python benchmarks/offmodel_diagnosis.py")
    try:
        out = {}
        for row in json.loads(p.read_text()):
            steps = MappingProxyType({k: StepDiagnostics(**v) for k, v in row.pop("steps").items()})
            reference = MappingProxyType({str(k): float(v) for k, v in row.pop("reference").items()})
            out[row["dataset"]] = Diagnosis(**row, steps=steps, reference=reference)
    except (TypeError, KeyError, AttributeError, ValueError) as err:
        raise ValueError(f"{p} does not hold diagnoses as save_diagnoses writes them ({err})") from None
    return MappingProxyType(out)


# ---------------------------------------------------------------------------------------
# the three goals
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison(Finding):
    """One cell of a goal: a ratio of errors added, and where (a Gaussian benchmark's setting
    has its ``d`` and ``alpha``; an off-model dataset has neither)."""

    ratio: float
    dataset: str
    rho: float
    d: int | None = None
    alpha: float | None = None

    @property
    def _order(self) -> tuple[float, str, int, float]:
        return self.ratio, self.dataset, self.d or 0, self.rho


@dataclass(frozen=True)
class Goal(Finding):
    """A goal: at least ``share`` of the cells have a ratio of at most ``threshold`` (and, where
    ``median_at_most`` is given, the median ratio is at most it)."""

    threshold: float
    cells: tuple[Comparison, ...]
    share: float = 1.0
    median_at_most: float | None = None

    @property
    def n(self) -> int:
        return len(self.cells)

    @property
    def met(self) -> int:
        """Cells whose ratio is at most the threshold."""
        return sum(c.ratio <= self.threshold for c in self.cells)

    @property
    def worst(self) -> Comparison:
        return max(self.cells, key=lambda c: c._order)

    @property
    def median(self) -> float:
        return float(np.median([c.ratio for c in self.cells]))

    @property
    def misses(self) -> tuple[Comparison, ...]:
        """The cells above the threshold, worst first."""
        return tuple(sorted((c for c in self.cells if c.ratio > self.threshold), key=lambda c: c._order,
                            reverse=True))

    @property
    def ok(self) -> bool:
        share_ok = self.met >= self.share * self.n
        return share_ok and (self.median_at_most is None or self.median <= self.median_at_most)


@dataclass(frozen=True)
class Goals(Finding):
    """The three goals of chapter 9's pipeline (medians over the runs)."""

    off_model: Goal
    near_best: Goal
    recommended: Goal

    def __iter__(self) -> Iterator[Goal]:
        return iter((self.off_model, self.near_best, self.recommended))

    def glue(self) -> dict[str, Any]:
        """``goal{i}-met``, ``goal{i}-n``, ``goal{i}-worst`` and ``goal{i}-median`` for the goals
        i = 1, 2, 3."""
        out: dict[str, Any] = {}
        for i, g in enumerate(self, start=1):
            out.update({f"goal{i}-met": g.met, f"goal{i}-n": g.n, f"goal{i}-worst": float(g.worst.ratio),
                        f"goal{i}-median": g.median})
        return out


def _check_results(peers: Any, offmodel: Any) -> None:
    if not isinstance(peers, PeersResults):
        raise TypeError(f"peers must be egmbook.peer_results.PeersResults (load_peers_results()), got peers "
                        f"of type {type(peers).__name__}")
    if not isinstance(offmodel, OffModelResults):
        raise TypeError(f"offmodel must be egmbook.peer_results.OffModelResults (load_offmodel_results()), "
                        f"got offmodel of type {type(offmodel).__name__}")


def best_peer_ratios(offmodel: OffModelResults, *, rho: float) -> tuple[tuple[str, str, float, float, float], ...]:
    """Per off-model dataset (chapter 9) at budget rho: the better of PLAN and IOME by the median
    error added, its median, and the ratios of chapter 9's and chapter 8's pipelines to it."""
    if not isinstance(offmodel, OffModelResults):
        raise TypeError(f"offmodel must be egmbook.peer_results.OffModelResults, got offmodel of type "
                        f"{type(offmodel).__name__}")
    rho = _v.check_positive_finite("rho", rho)
    out = []
    for ds in offmodel.datasets:
        med = {a: offmodel.excess_of(ds, a, rho=rho).median for a in (NEW, OLD, *PEERS)}
        best = min(PEERS, key=lambda a: med[a])
        out.append((ds, best, med[best], med[NEW] / med[best], med[OLD] / med[best]))
    return tuple(out)


def goals(peers: PeersResults, offmodel: OffModelResults) -> Goals:
    """The three goals of chapter 9's pipeline on the sweeps' results (error added, medians over
    the runs), cell by cell: goal 1 on every off-model dataset against the better of PLAN and IOME
    (Aumuller et al. 2024; Huang, Liang and Yi 2021); goal 2 on every off-model dataset against
    the best of :data:`VERDICT_ARMS`; goal 3 against the same, on :data:`RECOMMENDED` and on
    PLAN's skewed Gaussian benchmarks (GaussianB at alpha >= 1, GaussianC).
    """
    _check_results(peers, offmodel)
    med = lambda ds, a, rho: offmodel.excess_of(ds, a, rho=rho).median  # noqa: E731
    ex = lambda s, a, rho: peers.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho).median  # noqa: E731
    g1, g2, g3 = [], [], []
    for ds in offmodel.datasets:
        for rho in gb.RHOS:
            g1.append(Comparison(med(ds, NEW, rho) / min(med(ds, a, rho) for a in PEERS), ds, rho))
            ratio = med(ds, NEW, rho) / min(med(ds, a, rho) for a in VERDICT_ARMS)
            g2.append(Comparison(ratio, ds, rho))
            if ds in RECOMMENDED:
                g3.append(Comparison(ratio, ds, rho))
    skewed = [s for s in gb.settings("GaussianB") if s.alpha >= 1] + list(gb.settings("GaussianC"))
    g3 += [Comparison(ex(s, NEW, r) / min(ex(s, a, r) for a in VERDICT_ARMS), s.dataset, r, s.d, s.alpha)
           for s in skewed for r in gb.RHOS]
    return Goals(off_model=Goal(GOAL_OFF_MODEL, tuple(g1), median_at_most=GOAL_OFF_MODEL_MEDIAN),
                 near_best=Goal(GOAL_NEAR_BEST, tuple(g2), share=GOAL_NEAR_BEST_SHARE),
                 recommended=Goal(GOAL_RECOMMENDED, tuple(g3)))


# ---------------------------------------------------------------------------------------
# verdicts by kind of data
# ---------------------------------------------------------------------------------------
#: Kinds of data (off-model datasets by name, and PLAN's Gaussian benchmarks).
VERDICT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "small real data (n = 178 to 1797)": ("digits", "breast_cancer", "wine", "diabetes"),
    "surveys and registers (n = 6366 to 31857)": ("fair", "randhie", "alcohol", "k401ksubs", "labsup"),
    "counts (Poisson, negative binomial)": ("poisson", "negbin"),
    "ordinal answers with ties": ("likert",),
    "sparse binary baskets": ("baskets_n1e4", "baskets_n1e5"),
    "symmetric heavy tails": ("t3", "t4", "t10"),
    "skewed heavy tails": ("lognormal", "gamma", "lomax_n1e5"),
    "correlated coordinates": ("ar1", "equicorrelated"),
    "two clusters": ("mixture",),
    "Gaussian, σ given wrongly": ("sigma_x0.5", "sigma_x2"),
    "mean far from the box's centre": ("far_mean",),
    "Gaussian, n = 100 to 10^6": ("gaussian_n1e2", "gaussian_n1e3", "gaussian_n1e4", "gaussian_n1e5",
                                  "gaussian_n1e6"),
    "Gaussian, equal variances (GaussianA, B at α = 0)": ("GaussianA", "GaussianB α = 0"),
    "Gaussian, skewed variances (GaussianB at α ≥ 1, C)": ("GaussianB α ≥ 1", "GaussianC"),
})


@dataclass(frozen=True)
class Verdict(Finding):
    """Which method given nothing adds the least error in a group of (dataset, budget) cells."""

    group: str
    wins: Mapping[str, int]  #: arm -> cells in which it adds the least error
    gap_median: float  #: chapter 9's pipeline over the cell's winner, median over the cells
    gap_max: float

    @property
    def top(self) -> str:
        """The arm that wins most cells (the first of VERDICT_ARMS on a tie)."""
        return max(VERDICT_ARMS, key=self.wins.__getitem__)

    @property
    def cells(self) -> int:
        return sum(self.wins.values())


def _verdict(group: str, values: Sequence[Mapping[str, float]]) -> Verdict:
    wins = dict.fromkeys(VERDICT_ARMS, 0)
    gap = []
    for v in values:
        w = min(VERDICT_ARMS, key=v.__getitem__)
        wins[w] += 1
        gap.append(v["Alg3"] / v[w])
    return Verdict(group, MappingProxyType(wins), float(np.median(gap)), float(np.max(gap)))


def _gaussian_settings(member: str) -> list[gb.GaussianSetting]:
    if member == "GaussianB α = 0":
        return [gb.settings("GaussianB")[0]]
    if member == "GaussianB α ≥ 1":
        return [s for s in gb.settings("GaussianB") if s.alpha >= 1]
    return list(gb.settings(member))


def verdicts(peers: PeersResults, offmodel: OffModelResults) -> tuple[Verdict, ...]:
    """For every group of :data:`VERDICT_GROUPS` (chapter 9b), which of the methods given
    nothing (:data:`VERDICT_ARMS`: chapter 9's pipeline, PLAN's last step, PLAN of Aumuller
    et al. 2024 and IOME) adds the least error, by the median over the runs, cell by cell."""
    _check_results(peers, offmodel)
    out = []
    for group, members in VERDICT_GROUPS.items():
        values = []
        if members[0].startswith("Gaussian"):
            for s in [s for m in members for s in _gaussian_settings(m)]:
                for r in gb.RHOS:
                    values.append({a: peers.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=r).median
                                   for a in VERDICT_ARMS})
        else:
            for ds in members:
                for r in gb.RHOS:
                    values.append({a: offmodel.excess_of(ds, a, rho=r).median for a in VERDICT_ARMS})
        out.append(_verdict(group, values))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# the calibration of the few-rows rule (Proposition 9.B)
# ---------------------------------------------------------------------------------------
#: The largest ratio of Algorithm 3's path's error to the few-rows path's that the rule's
#: switch point tolerates on data from Algorithm 3's model.
CROSSOVER_TOLERANCE = 1.25
# Where benchmarks/offmodel_crossover.py writes its cells (private: a path of the machine).
_CROSSOVER_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "offmodel_crossover.csv"
_CROSSOVER_COLUMNS = ("half_width", "d", "rho", "n", "runs", "error_algorithm3", "error_few_rows", "statistic")


@dataclass(frozen=True)
class CrossoverCell(Finding):
    """One cell of the calibration: medians over the runs of the error each path adds and of the
    rule's statistic :math:`n\\sqrt\\rho/\\ln(1 + R_w)`."""

    half_width: float  #: the box is [-half_width, half_width]
    d: int
    rho: float
    n: int
    runs: int
    error_algorithm3: float
    error_few_rows: float
    statistic: float

    @property
    def ratio(self) -> float:
        return self.error_algorithm3 / self.error_few_rows


def crossover_switch(cells: Sequence[tuple[float, float]], tolerance: float = CROSSOVER_TOLERANCE) -> float | None:
    """The smallest statistic from which on every cell's ratio is at most ``tolerance``.

    ``cells`` are (statistic, ratio) pairs; None when the cell of the largest statistic fails."""
    pairs = _v.check_finite_data("cells", cells)
    if pairs.shape[1] != 2:
        raise ValueError(f"cells must be (statistic, ratio) pairs, got rows of {pairs.shape[1]} entries")
    tolerance = _v.check_positive_finite("tolerance", tolerance)
    ordered = sorted(map(tuple, pairs.tolist()))
    above = [k for k, (_, r) in enumerate(ordered) if r > tolerance]   # one pass, not one per start
    first = above[-1] + 1 if above else 0
    return float(ordered[first][0]) if first < len(ordered) else None


@dataclass(frozen=True)
class Crossover(Finding):
    """The calibration of :data:`egmlib.peers.algorithm3_robust.FEW_ROWS_CONSTANT` on data from
    Algorithm 3's model: Algorithm 3's path against the few-rows path, cell by cell."""

    cells: tuple[CrossoverCell, ...]
    tolerance: float = CROSSOVER_TOLERANCE

    @property
    def runs(self) -> int:
        return self.cells[0].runs

    @property
    def switch(self) -> float:
        """The statistic from which on every ratio is at most the tolerance."""
        value = crossover_switch([(c.statistic, c.ratio) for c in self.cells], self.tolerance)
        if value is None:
            raise ValueError(f"no value of the statistic from which on every ratio is <= {self.tolerance}")
        return value

    @property
    def constant(self) -> float:
        """The rule's constant, the switch point rounded down to a multiple of 10."""
        return float(10 * math.floor(self.switch / 10))

    @property
    def above(self) -> tuple[CrossoverCell, ...]:
        return tuple(c for c in self.cells if c.statistic >= self.switch)

    @property
    def below(self) -> tuple[CrossoverCell, ...]:
        return tuple(c for c in self.cells if c.statistic < self.switch)

    def glue(self) -> dict[str, Any]:
        """``cross-runs``, ``cross-at``, ``cross-c``, ``cross-after``, ``cross-after-n``, ``cross-peak``."""
        return {"cross-runs": self.runs, "cross-at": self.switch, "cross-c": self.constant,
                "cross-after": max(c.ratio for c in self.above), "cross-after-n": len(self.above),
                "cross-peak": max(c.ratio for c in self.below)}


def load_crossover(path: str | Path | None = None) -> Crossover:
    """The cells written by ``benchmarks/offmodel_crossover.py`` (by default the repository's
    ``benchmarks/results/offmodel_crossover.csv``)."""
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = _CROSSOVER_FILE if path is None else Path(path)
    with p.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or tuple(rows[0]) != _CROSSOVER_COLUMNS:
        raise ValueError(f"{p} must have the columns {', '.join(_CROSSOVER_COLUMNS)} and at least one row")
    cells = tuple(CrossoverCell(half_width=float(r["half_width"]), d=int(r["d"]), rho=float(r["rho"]), n=int(r["n"]),
                                runs=int(r["runs"]), error_algorithm3=float(r["error_algorithm3"]),
                                error_few_rows=float(r["error_few_rows"]), statistic=float(r["statistic"]))
                  for r in rows)
    return Crossover(cells)


def few_rows_share(dataset: str, *, rho: float, runs: int) -> float:
    """The share of ``runs`` runs in which the pipeline's rule
    (:func:`egmlib.peers.algorithm3_robust.few_rows`) takes the few-rows path on ``dataset`` at
    budget ``rho``: the rule reads the released scales, which differ from run to run."""
    dataset = _v.check_choice("dataset", dataset, od.DATASETS)
    rho = _v.check_positive_finite("rho", rho)
    runs = _v.check_count("runs", runs, maximum=10**4)
    s = od.load(dataset, seed=0)
    share = algorithm3_robust.SHARES["scale"]
    hits = sum(algorithm3_robust.few_rows(s.X.shape[0], rho=rho, sigma=algorithm3_robust.robust_scales(
                   s.X, rho=share * rho, lower=s.lower, upper=s.upper,
                   rng=np.random.default_rng([DIAGNOSIS_SEED, run])), lower=s.lower, upper=s.upper)
               for run in range(runs))
    return hits / runs
