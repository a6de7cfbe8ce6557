r"""Findings of chapter 9: where Algorithm 3 with private inputs fails off its model; its robust pipeline's goals.

- :func:`diagnose` runs chapter 8's and chapter 9's pipelines of Algorithm 3 with private
  inputs on one dataset of :mod:`egmbook.offmodel_data` and records each step (scales,
  centre, radius, clipped rows, error) next to the errors of the arms given more inputs.
- :func:`goals` measures the three goals of chapter 9's pipeline (``"Alg3"``) on the sweeps'
  results: off the model it adds at most :data:`GOAL_OFF_MODEL` times the error of the better
  of PLAN (Aumuller, Lebeda, Nelson and Pagh 2024) and IOME (Huang, Liang and Yi 2021); on
  the skewed Gaussian benchmarks at most :data:`GOAL_SKEWED` times it; and at most
  :data:`GOAL_CONVERGED` times the error of chapter 8's pipeline (``"Alg3-private"``) wherever
  that one converges (within :data:`CONVERGES_WITHIN` times Algorithm 3 given
  :math:`\sigma` and :math:`\mu`).
- :func:`verdicts` says, for each kind of data, which method given nothing adds the least
  error most often.

``benchmarks/offmodel_ratios.py`` and ``benchmarks/offmodel_diagnosis.py`` print these.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmbook import gaussian_benchmarks as gb
from egmbook import offmodel_data as od
from egmbook.findings import Finding
from egmbook.peer_results import OffModelResults, PeersResults
from egmlib import _validation as _v
from egmlib.peers import algorithm3, algorithm3_robust
from egmlib.peers.arms import ARMS
from egmlib.peers.scales import pairwise_squared_differences

__all__ = ["GOAL_OFF_MODEL", "GOAL_SKEWED", "GOAL_CONVERGED", "CONVERGES_WITHIN", "PEERS", "NEW", "OLD",
           "StepDiagnostics", "Diagnosis", "diagnose", "Comparison", "Goal", "Goals", "goals",
           "best_peer_ratios", "VERDICT_ARMS", "VERDICT_GROUPS", "Verdict", "verdicts"]

#: Goal 1 -- off the model, chapter 9's pipeline adds at most this times the better peer's error.
GOAL_OFF_MODEL = 2.0
#: Goal 2 -- on the skewed Gaussian benchmarks, at most this times the better peer's error.
GOAL_SKEWED = 1.0
#: Goal 3 -- at most this times chapter 8's pipeline's error where that one converges ...
GOAL_CONVERGED = 1.05
#: ... which is where it adds at most this times the error of Algorithm 3 given sigma and mu.
CONVERGES_WITHIN = 1.5
#: The peers the goals compare with (the better of the two, cell by cell).
PEERS = ("PLAN", "IOME")
#: Chapter 9's pipeline and chapter 8's, by their names in the sweeps.
NEW, OLD = "Alg3", "Alg3-private"
#: The seed of the diagnosis (benchmarks/offmodel_diagnosis.py).
DIAGNOSIS_SEED = 20261126


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
    (medians over ``runs`` runs; the robust pipeline with its few-rows rule off, ``rule=False``).

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
        "Alg3": functools.partial(algorithm3_robust.algorithm3_robust, rule=False)}
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
    """A goal: every cell's ratio must be at most ``threshold``."""

    threshold: float
    cells: tuple[Comparison, ...]

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
    def ok(self) -> bool:
        return self.worst.ratio <= self.threshold


@dataclass(frozen=True)
class Goals(Finding):
    """The three goals of chapter 9's pipeline; PLAN's benchmarks summarised by ``stat`` over
    the runs (off the model always by the median)."""

    stat: str
    off_model: Goal
    skewed: Goal
    converged: Goal

    def __iter__(self) -> Iterator[Goal]:
        return iter((self.off_model, self.skewed, self.converged))

    def glue(self) -> dict[str, Any]:
        """``goal{i}-met``, ``goal{i}-n`` and ``goal{i}-worst`` for the goals i = 1, 2, 3, and
        ``goal3-median``, the median ratio of goal 3."""
        out: dict[str, Any] = {}
        for i, g in enumerate(self, start=1):
            out.update({f"goal{i}-met": g.met, f"goal{i}-n": g.n, f"goal{i}-worst": float(g.worst.ratio)})
        out["goal3-median"] = self.converged.median
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


def goals(peers: PeersResults, offmodel: OffModelResults, *, stat: str = "median") -> Goals:
    """The three goals of chapter 9's pipeline on the sweeps' results (error added): off the
    model against the better of PLAN and IOME (Aumuller et al. 2024; Huang, Liang and Yi 2021),
    on the skewed Gaussian benchmarks (GaussianB at alpha >= 1, GaussianC) against the same,
    and against chapter 8's pipeline where it converges, on both sweeps.

    ``stat`` ("median" or "mean") summarises PLAN's benchmarks over the runs; the off-model
    data are always summarised by the median.
    """
    _check_results(peers, offmodel)
    stat = _v.check_choice("stat", stat, ("median", "mean"))
    med = lambda ds, a, rho: offmodel.excess_of(ds, a, rho=rho).median  # noqa: E731
    ex = lambda s, a, rho: getattr(peers.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho), stat)  # noqa: E731
    g1 = []
    for ds in offmodel.datasets:
        for rho in gb.RHOS:
            best = min(med(ds, a, rho) for a in PEERS)
            g1.append(Comparison(med(ds, NEW, rho) / best, ds, rho))
    skewed = [s for s in gb.settings("GaussianB") if s.alpha >= 1] + gb.settings("GaussianC")
    g2 = [Comparison(ex(s, NEW, r) / min(ex(s, a, r) for a in PEERS), s.dataset, r, s.d, s.alpha)
          for s in skewed for r in gb.RHOS]
    every = [s for ds in ("GaussianA", "GaussianB", "GaussianC") for s in gb.settings(ds)]
    g3 = [Comparison(ex(s, NEW, r) / ex(s, OLD, r), s.dataset, r, s.d, s.alpha) for s in every for r in gb.RHOS
          if ex(s, OLD, r) <= CONVERGES_WITHIN * ex(s, "Alg3-oracle", r)]
    g3 += [Comparison(med(ds, NEW, r) / med(ds, OLD, r), ds, r) for ds in offmodel.datasets for r in gb.RHOS
           if med(ds, OLD, r) <= CONVERGES_WITHIN * med(ds, "Alg3-oracle", r)]
    return Goals(stat=stat, off_model=Goal(GOAL_OFF_MODEL, tuple(g1)), skewed=Goal(GOAL_SKEWED, tuple(g2)),
                 converged=Goal(GOAL_CONVERGED, tuple(g3)))


# ---------------------------------------------------------------------------------------
# verdicts by kind of data
# ---------------------------------------------------------------------------------------
#: The methods given nothing that the verdicts compare (chapter 8's pipeline left out).
VERDICT_ARMS = ("Alg3", "PLAN-last-step", "PLAN", "IOME")
#: Kinds of data (off-model datasets by name, and PLAN's Gaussian benchmarks).
VERDICT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "real data, n = 178 to 1797": od.REAL,
    "symmetric heavy tails": ("t3", "t4", "t10"),
    "skewed heavy tails": ("lognormal", "gamma"),
    "correlated coordinates": ("ar1", "equicorrelated"),
    "two clusters": ("mixture",),
    "on the model (d = 256, skewed)": ("sigma_x0.5", "sigma_x2"),
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
