r"""Findings of chapter 9: ESM off Algorithm 3's model -- diagnosis, goals, verdicts, calibration.

ESM is the book's recommended private mean (the arm ``ARMS["Alg3"]``,
:func:`egmlib.peers.algorithm3_robust.algorithm3_robust`).  Every function here is pure: it
takes loaded results or data (:mod:`egmbook.peer_results`, ``egmbook.offmodel_results``,
:mod:`egmbook.offmodel_data`) and returns frozen records with their glue values.

- :func:`diagnose` runs Algorithm 3 with private inputs and ESM's Algorithm 3 path on one
  dataset and records each step (scales, centre, radius, clipped rows, error) next to the errors
  of the arms given more inputs.
- :func:`goals` measures ESM's three goals on the sweeps' results, cell by cell (dataset or
  benchmark setting, and budget; medians over the runs): G1, at most :data:`GOAL_OFF_MODEL` times
  the error of the better of PLAN (Aumuller, Lebeda, Nelson and Pagh 2024) and IOME (Huang, Liang
  and Yi 2021) in every cell, with a median ratio of at most 1; G2, within
  :data:`GOAL_NEAR_BEST` times the best method given nothing (ESM, PLAN's last step on ESM's
  inputs, PLAN, IOME) in at least :data:`GOAL_NEAR_BEST_SHARE` of the cells; G3, at most
  :data:`GOAL_PARTS` times the better of IOME and PLAN in the few-rows and d > n cells
  (:func:`few_rows_or_wide`).
- :func:`comparison` sets ESM against Algorithm 3 with private inputs over the better peer (Observation 9.M).
- :func:`verdicts` says, for each kind of data, which method given nothing adds the least error
  most often.
- :func:`path_runs` and :func:`calibrate_paths` turn ``benchmarks/offmodel_paths.py``'s runs on
  synthetic Gaussian rows into ESM's constants and chapter 9's figure of predicted against
  measured errors.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from egmbook import gaussian_benchmarks as gb
from egmbook import offmodel_data as od
from egmbook.claims import readable
from egmbook.findings import Finding
from egmbook.peer_results import OffModelResults, PeersResults
from egmlib import validation as _v
from egmlib.peers import algorithm3, algorithm3_robust
from egmlib.peers.arms import ARMS
from egmlib.peers.scales import pairwise_squared_differences

__all__ = ["GOAL_OFF_MODEL", "GOAL_OFF_MODEL_MEDIAN", "GOAL_NEAR_BEST", "GOAL_NEAR_BEST_SHARE", "GOAL_PARTS",
           "FEW_ROWS", "PEERS", "NEW", "OLD", "few_rows_or_wide",
           "StepDiagnostics", "Diagnosis", "diagnose", "DIAGNOSIS_DATASETS", "DIAGNOSIS_RUNS", "DIAGNOSIS_RHO",
           "DIAGNOSIS_SEED", "Comparison", "Goal", "Goals", "goals", "KindGoals", "goals_by_kind", "PeerRatio",
           "best_peer_ratios",
           "OffModelComparison", "comparison", "VERDICT_ARMS", "VERDICT_GROUPS", "Verdict", "verdicts",
           "RELEASES", "RELEASE_KIND", "RELEASE_NAMES", "PathRun",
           "PathCell", "PathCalibration",
           "CALIBRATION_SEED", "calibration_cells", "calibration_rows",
           "path_runs", "resolution_threshold", "calibrate_paths", "MissKinds", "miss_kinds", "RadiusCalibration",
           "radius_calibration"]

#: G1 -- ESM adds at most this times the better of PLAN's and IOME's error, in every cell ...
GOAL_OFF_MODEL = 2.0
#: ... with a median ratio of at most this.
GOAL_OFF_MODEL_MEDIAN = 1.0
#: G2 -- within this factor of the best method given nothing ...
GOAL_NEAR_BEST = 1.5
#: ... in at least this share of the cells.
GOAL_NEAR_BEST_SHARE = 0.9
#: G3 -- in the few-rows and d > n cells, at most this times the better of IOME and PLAN, each run
#: alone with the whole budget: a composite never far behind its own parts.
GOAL_PARTS = 1.25
#: A dataset has few rows when n is at most this (or at most d).
FEW_ROWS = 600
#: The peers G1 and G3 compare with (the better of the two, cell by cell).
PEERS = ("PLAN", "IOME")
#: The methods given nothing that G2 and the verdicts compare (Algorithm 3 with private inputs left out).
VERDICT_ARMS = ("Alg3", "PLAN-last-step", "PLAN", "IOME")
#: ESM and Algorithm 3 with private inputs, by their names in the sweeps.
NEW, OLD = "Alg3", "Alg3-private"
#: The seed of the diagnosis (benchmarks/offmodel_diagnosis.py).
DIAGNOSIS_SEED = 20261126
#: The datasets, runs and budget of chapter 9's diagnosis, which ``benchmarks/offmodel_diagnosis.py``
#: saves and chapter 9 reads (``egmbook.offmodel_results.load_diagnoses``).
DIAGNOSIS_DATASETS = ("digits", "breast_cancer", "wine", "diabetes", "fair", "randhie", "baskets_n1e4")
DIAGNOSIS_RUNS, DIAGNOSIS_RHO = 10, 0.25


def few_rows_or_wide(n: int, d: int) -> bool:
    """G3's regimes: few rows (n at most :data:`FEW_ROWS`) or more coordinates than rows.

    Examples
    --------
    >>> few_rows_or_wide(178, 13), few_rows_or_wide(2048, 4096), few_rows_or_wide(10_000, 64)
    (True, True, False)
    """
    n = _v.check_count("n", n)
    d = _v.check_count("d", d)
    return n <= FEW_ROWS or d >= n


# ---------------------------------------------------------------------------------------
# the step-by-step diagnosis
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
    """Chapter 8's pipeline (``"Alg3-private"``) and ESM's Algorithm 3 path (``"Alg3"``) step by step
    on one dataset, and the errors of the arms given more (``reference``)."""

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


def diagnose(sample: od.OffModelSample, *, runs: int, rho: float) -> Diagnosis:
    """Chapter 9's diagnosis of the pipelines with private inputs on one loaded dataset at budget
    ``rho`` (medians over ``runs`` runs): Algorithm 3 with private inputs and ESM's Algorithm 3 path (forced).

    The reference errors are those of Algorithm 3 given sigma with a private centre, given sigma and
    mu, of PLAN, IOME (Huang, Liang and Yi 2021) and of ESM as released (``ARMS["Alg3"]``, drawing
    from the generators of the path's runs, so the two coincide where ESM takes that path).
    """
    if not isinstance(sample, od.OffModelSample):
        raise TypeError(f"sample must be an egmbook.offmodel_data.OffModelSample (offmodel_data.load()), got "
                        f"sample of type {type(sample).__name__}")
    runs = _v.check_count("runs", runs, maximum=10**4)
    rho = _v.check_positive_finite("rho", rho)
    s = sample
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
    return Diagnosis(dataset=s.name, n=X.shape[0], d=X.shape[1], runs=runs, rho=rho, ties=ties,
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

    def of(self, dataset: str, rho: float, d: int | None = None, alpha: float | None = None) -> float:
        """The ratio of one cell."""
        for c in self.cells:
            if (c.dataset, c.rho, c.d, c.alpha) == (dataset, rho, d, alpha):
                return c.ratio
        raise KeyError((dataset, rho, d, alpha))


@dataclass(frozen=True)
class Goals(Finding):
    """ESM's three goals (medians over the runs): G1 against the better peer everywhere, G2 against
    the best method given nothing, G3 against its parts where rows are few."""

    off_model: Goal
    near_best: Goal
    parts: Goal

    def __iter__(self) -> Iterator[Goal]:
        return iter((self.off_model, self.near_best, self.parts))

    def glue(self) -> dict[str, Any]:
        """``goal{i}-met``, ``goal{i}-n``, ``goal{i}-worst`` and ``goal{i}-median`` for i = 1, 2, 3."""
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


@dataclass(frozen=True)
class PeerRatio(Finding):
    """One off-model dataset at one budget: the better of PLAN and IOME, and ESM's and chapter 8's
    pipeline's error added over its."""

    dataset: str
    rho: float
    best_peer: str  #: "PLAN" or "IOME"
    best: float  #: its median error added
    esm: float  #: ESM's median over it
    old: float  #: Algorithm 3 with private inputs's median over it


def best_peer_ratios(offmodel: OffModelResults, *, rho: float) -> tuple[PeerRatio, ...]:
    """Per off-model dataset (chapter 9) at budget rho: the better of PLAN and IOME by the median
    error added, its median, and the ratios of ESM and of Algorithm 3 with private inputs to it."""
    if not isinstance(offmodel, OffModelResults):
        raise TypeError(f"offmodel must be egmbook.peer_results.OffModelResults, got offmodel of type "
                        f"{type(offmodel).__name__}")
    rho = _v.check_positive_finite("rho", rho)
    out = []
    for ds in offmodel.datasets:
        med = {a: _median(offmodel.excess_of(ds, a, rho=rho)) for a in (NEW, OLD, *PEERS)}
        best = min(PEERS, key=lambda a: med[a])
        out.append(PeerRatio(ds, rho, best, med[best], med[NEW] / med[best], med[OLD] / med[best]))
    return tuple(out)


def _median(summary: Any) -> float:
    """The median of a summary of the sweeps' results (every row of the committed results has one)."""
    if summary.median is None:
        raise ValueError("the results must record medians over the runs: run benchmarks/peers_sweep.py again")
    return float(summary.median)


def goals(peers: PeersResults, offmodel: OffModelResults) -> Goals:
    """ESM's three goals on both sweeps' results (error added, medians over the runs), cell by cell:
    G1 against the better of PLAN and IOME (Aumuller et al. 2024; Huang, Liang and Yi 2021), G2
    against the best of :data:`VERDICT_ARMS`, in every cell of both sweeps; G3 against the better of
    PLAN and IOME in the cells of :func:`few_rows_or_wide` (off-model datasets; PLAN's benchmarks
    have 4000 rows or more and fewer coordinates).
    """
    _check_results(peers, offmodel)
    def med(ds: str, a: str, rho: float) -> float:
        return _median(offmodel.excess_of(ds, a, rho=rho))

    def ex(s: gb.GaussianSetting, a: str, rho: float) -> float:
        return _median(peers.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=rho))

    g1: list[Comparison] = []
    g2: list[Comparison] = []
    g3: list[Comparison] = []
    for ds in offmodel.datasets:
        spec = od.DATASETS[ds]
        for rho in gb.RHOS:
            peer = med(ds, NEW, rho) / min(med(ds, a, rho) for a in PEERS)
            g1.append(Comparison(peer, ds, rho))
            g2.append(Comparison(med(ds, NEW, rho) / min(med(ds, a, rho) for a in VERDICT_ARMS), ds, rho))
            if few_rows_or_wide(spec.n, spec.d):
                g3.append(Comparison(peer, ds, rho))
    for name in ("GaussianA", "GaussianB", "GaussianC"):
        for s in gb.settings(name):
            for r in gb.RHOS:
                g1.append(Comparison(ex(s, NEW, r) / min(ex(s, a, r) for a in PEERS), s.dataset, r, s.d, s.alpha))
                g2.append(Comparison(ex(s, NEW, r) / min(ex(s, a, r) for a in VERDICT_ARMS), s.dataset, r, s.d,
                                     s.alpha))
    return Goals(off_model=Goal(GOAL_OFF_MODEL, tuple(g1), median_at_most=GOAL_OFF_MODEL_MEDIAN),
                 near_best=Goal(GOAL_NEAR_BEST, tuple(g2), share=GOAL_NEAR_BEST_SHARE),
                 parts=Goal(GOAL_PARTS, tuple(g3)))


@dataclass(frozen=True)
class KindGoals(Finding):
    """ESM's goals on one kind of data (:data:`VERDICT_GROUPS`), budget by budget: the largest
    ratio to the better of PLAN and IOME over the kind's datasets (G1 and, where the kind has
    few-rows or d > n cells, G3 over those) and the share of its cells within 1.5 times the best
    method given nothing (G2)."""

    kind: str
    g1: Mapping[float, float]  #: rho -> the largest ratio to the better peer
    g2: Mapping[float, float]  #: rho -> the share of cells within GOAL_NEAR_BEST of the best
    g3: Mapping[float, float] | None  #: rho -> the largest ratio in the few-rows cells, or None without such cells

    @property
    def g1_ok(self) -> bool:
        return max(self.g1.values()) <= GOAL_OFF_MODEL

    @property
    def g3_ok(self) -> bool | None:
        return None if self.g3 is None else max(self.g3.values()) <= GOAL_PARTS

    @property
    def g2_ok(self) -> bool:
        """At least GOAL_NEAR_BEST_SHARE of the kind's cells within GOAL_NEAR_BEST at every budget."""
        return min(self.g2.values()) >= GOAL_NEAR_BEST_SHARE

    @property
    def held(self) -> str:
        """The goals that hold on the kind's cells ("G1, G2, G3"; G3 only where the kind has
        few-rows or d > n cells), or "none"."""
        names = [g for g, ok in (("G1", self.g1_ok), ("G2", self.g2_ok), ("G3", self.g3_ok)) if ok]
        return ", ".join(names) or "none"

    @property
    def all_held(self) -> bool:
        """Every goal that applies to the kind holds on its cells."""
        return self.g1_ok and self.g2_ok and self.g3_ok is not False


def _kind_of(c: Comparison) -> str:
    for kind, members in VERDICT_GROUPS.items():
        if c.d is None and c.dataset in members:
            return kind
        if c.d is not None and members[0].startswith("Gaussian"):
            equal = c.alpha == 0.0
            if ("GaussianA" in members and equal) or ("GaussianC" in members and not equal):
                return kind
    raise KeyError(c.dataset)


def goals_by_kind(g: Goals) -> tuple[KindGoals, ...]:
    """:func:`goals` per kind of data (:data:`VERDICT_GROUPS`) and budget, in the groups' order;
    a kind the results do not hold is left out."""
    if not isinstance(g, Goals):
        raise TypeError(f"g must be egmbook.findings.offmodel.Goals (goals()), got g of type {type(g).__name__}")
    out = []
    for kind in VERDICT_GROUPS:
        g1 = [c for c in g.off_model.cells if _kind_of(c) == kind]
        if not g1:
            continue
        g2 = [c for c in g.near_best.cells if _kind_of(c) == kind]
        g3 = [c for c in g.parts.cells if _kind_of(c) == kind]
        worst = lambda cells, r: max(c.ratio for c in cells if c.rho == r)  # noqa: E731
        share = lambda cells, r: float(np.mean([c.ratio <= GOAL_NEAR_BEST for c in cells if c.rho == r]))  # noqa: E731
        out.append(KindGoals(kind, MappingProxyType({r: worst(g1, r) for r in gb.RHOS}),
                             MappingProxyType({r: share(g2, r) for r in gb.RHOS}),
                             MappingProxyType({r: worst(g3, r) for r in gb.RHOS}) if g3 else None))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# ESM against Algorithm 3 with private inputs (Observation 9.M)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OffModelComparison(Finding):
    """ESM and Algorithm 3 with private inputs over the better of PLAN and IOME, over every off-model cell.

    ``ok`` is Observation 9.M's verdict: ESM's worst ratio is more than ten times below chapter 8's,
    its median ratio is at most 1, and it is within twice the better peer in at least 90 % of the cells.
    """

    ratios: tuple[PeerRatio, ...]
    real: tuple[str, ...]  #: the real datasets

    GLUE = MappingProxyType({"new-worst": "new_worst", "old-worst": "old_worst", "within2": "within_two",
                             "cells": "n", "new-median": "new_median", "old-median": "old_median",
                             "real-max": "real_max", "real-median": "real_median"})

    @property
    def n(self) -> int:
        return len(self.ratios)

    def _worst(self, attr: str) -> PeerRatio:
        return max(self.ratios, key=lambda r: getattr(r, attr))

    @property
    def new_worst(self) -> float:
        return self._worst("esm").esm

    @property
    def old_worst(self) -> float:
        return self._worst("old").old

    @property
    def new_worst_where(self) -> str:
        r = self._worst("esm")
        return _where(r.dataset, r.rho)

    @property
    def old_worst_where(self) -> str:
        r = self._worst("old")
        return _where(r.dataset, r.rho)

    @property
    def new_median(self) -> float:
        return float(np.median([r.esm for r in self.ratios]))

    @property
    def old_median(self) -> float:
        return float(np.median([r.old for r in self.ratios]))

    @property
    def within_two(self) -> int:
        return sum(r.esm <= 2.0 for r in self.ratios)

    @property
    def real_max(self) -> float:
        return max(r.esm for r in self.ratios if r.dataset in self.real)

    @property
    def real_median(self) -> float:
        return float(np.median([r.esm for r in self.ratios if r.dataset in self.real]))

    @property
    def ok(self) -> bool:
        return self.new_worst < self.old_worst / 10 and self.new_median <= 1.0 and self.within_two >= 0.9 * self.n

    @property
    def evidence(self) -> str:
        return (f"{self.n} pairs of dataset and budget, error added, medians over the runs: ESM at most "
                f"{readable(self.new_worst, 3)} times the better peer ({self.new_worst_where}), median "
                f"{self.new_median:.2f}, within twice in {self.within_two}; Algorithm 3 with private inputs up "
                f"to {readable(self.old_worst, 3)} times ({self.old_worst_where}), median {self.old_median:.2f}.")


def _rho_text(rho: float) -> str:
    from fractions import Fraction

    return str(Fraction(rho).limit_denominator(64))


def _where(dataset: str, rho: float) -> str:
    return f"{od.TITLES.get(dataset, dataset)} at ρ = {_rho_text(rho)}"


def comparison(offmodel: OffModelResults) -> OffModelComparison:
    """ESM and Algorithm 3 with private inputs over the better of PLAN and IOME on every off-model dataset and
    budget (:func:`best_peer_ratios`; Observation 9.M)."""
    if not isinstance(offmodel, OffModelResults):
        raise TypeError(f"offmodel must be egmbook.peer_results.OffModelResults, got offmodel of type "
                        f"{type(offmodel).__name__}")
    ratios = tuple(r for rho in gb.RHOS for r in best_peer_ratios(offmodel, rho=rho))
    return OffModelComparison(ratios=ratios, real=tuple(ds for ds in offmodel.datasets if ds in od.REAL))


# ---------------------------------------------------------------------------------------
# verdicts by kind of data
# ---------------------------------------------------------------------------------------
#: Kinds of data (off-model datasets by name, and PLAN's Gaussian benchmarks).
VERDICT_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "small real tables (n = 21 to 1797)": ("stackloss", "hprice1", "gpa1", "wine", "diabetes", "breast_cancer",
                                           "digits"),
    "surveys and registers (n = 2725 to 31857)": ("crime1", "fair", "randhie", "alcohol", "k401ksubs", "labsup"),
    "counts (Poisson, negative binomial)": ("poisson", "negbin"),
    "ordinal answers with ties": ("likert",),
    "sparse binary baskets": ("baskets_n1e4", "baskets_n1e5"),
    "mostly zeros (80 to 99 % a column)": ("zeros_n1e3", "zeros_n1e4"),
    "symmetric heavy tails": ("t3", "t4", "t10"),
    "skewed heavy tails": ("lognormal", "gamma", "lomax_n1e5"),
    "correlated coordinates": ("ar1", "equicorrelated"),
    "two clusters": ("mixture",),
    "Gaussian, σ given wrongly": ("sigma_x0.5", "sigma_x2"),
    "a mean far from the box's centre, or a box far wider than the data": ("far_mean", "corner", "wide_box_100",
                                                                           "wide_box_1000"),
    "Gaussian, n = 20 to 200": ("gaussian_n20", "gaussian_n50", "gaussian_n1e2", "gaussian_n200"),
    "Gaussian, n = 10³ to 10⁶": ("gaussian_n1e3", "gaussian_n1e4", "gaussian_n1e5", "gaussian_n1e6"),
    "Gaussian, d > n (d = 256 to 4096)": tuple(f"dgtn_d{d}" for d in od.WIDE_DS),
    "Gaussian, equal variances (GaussianA, B at α = 0)": ("GaussianA", "GaussianB α = 0"),
    "Gaussian, skewed variances (GaussianB at α ≥ 1, C)": ("GaussianB α ≥ 1", "GaussianC"),
})


@dataclass(frozen=True)
class Verdict(Finding):
    """Which method given nothing adds the least error in a group of (dataset, budget) cells."""

    group: str
    wins: Mapping[str, int]  #: arm -> cells in which it adds the least error
    gap_median: float  #: ESM over the cell's winner, median over the cells
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
    """For every group of :data:`VERDICT_GROUPS` (chapter 9b), which of the methods given nothing
    (:data:`VERDICT_ARMS`: ESM, PLAN's last step, PLAN of Aumuller et al. 2024 and IOME) adds the
    least error, by the median over the runs, cell by cell; a group none of whose datasets the
    results hold is left out."""
    _check_results(peers, offmodel)
    out = []
    for group, members in VERDICT_GROUPS.items():
        values = []
        if members[0].startswith("Gaussian"):
            for s in [s for m in members for s in _gaussian_settings(m)]:
                for r in gb.RHOS:
                    values.append({a: _median(peers.excess_of(s.dataset, a, d=s.d, alpha=s.alpha, rho=r))
                                   for a in VERDICT_ARMS})
        else:
            for ds in (m for m in members if m in offmodel.datasets):
                for r in gb.RHOS:
                    values.append({a: _median(offmodel.excess_of(ds, a, rho=r)) for a in VERDICT_ARMS})
        if values:
            out.append(_verdict(group, values))
    return tuple(out)


# ---------------------------------------------------------------------------------------
# ESM's predicted errors against the measured ones (chapter 9's figure; the calibration)
# ---------------------------------------------------------------------------------------
#: The releases ``benchmarks/offmodel_paths.py`` measures: IOME with the whole budget (the
#: public stage, each search), and after the scale step each path ESM can take.
RELEASES = ("whole iome", "whole centred-iome", "after algorithm3", "after plan", "after iome",
            "after centred-iome")
#: The kind of prediction each release is compared with (its factor in
#: :data:`egmlib.peers.path_errors.ERROR_FACTORS`).
RELEASE_KIND = MappingProxyType({"whole iome": "iome", "whole centred-iome": "iome", "after iome": "iome",
                                 "after centred-iome": "iome", "after algorithm3": "algorithm3",
                                 "after plan": "plan"})
#: The prose names of ESM's releases (egmlib.peers.path_errors.PATHS).
RELEASE_NAMES = MappingProxyType({"iome": "IOME alone", "centred-iome": "IOME around a coarse centre",
                                  "algorithm3": "Algorithm 3", "plan": "PLAN's last step"})
#: The seed of the calibration's synthetic rows (:func:`calibration_rows`).
CALIBRATION_SEED = 20261201
_GRID = {"alphas": (0.0, 0.75, 1.5), "ds": (8, 64, 256), "widths": (50.0, 2000.0),
         "ns": (20, 60, 200, 600, 2000, 6000, 20000), "rhos": (1 / 16, 1 / 4, 1.0)}
_QUICK = {"alphas": (0.75,), "ds": (8,), "widths": (50.0,), "ns": (60, 2000), "rhos": (0.25,)}
_MAX_CELL = 2_000_000  # n d


def calibration_cells(quick: bool = False) -> tuple[tuple[float, int, float, int, float], ...]:
    r"""The cells on which ESM's constants are calibrated, (alpha, d, half-width in sigma_1, n, rho), the
    cheapest first: rows :math:`\mathcal N(10, \mathrm{diag}(\sigma^2))` with :math:`\sigma_j = (d/j)^\alpha`,
    alpha in {0, 0.75, 1.5}, d in {8, 64, 256}, boxes of half-width 50 and 2000 sigma_1, n from 20 to
    20000 (n d at most 2e6) and rho in {1/16, 1/4, 1} (``benchmarks/offmodel_paths.py``,
    ``benchmarks/iome_radius_rows.py``); ``quick`` a slice of two cells."""
    g = _QUICK if _v.check_bool("quick", quick) else _GRID
    out = [(float(a), int(d), float(w), int(n), float(r)) for a in g["alphas"] for d in g["ds"]
           for w in g["widths"] for n in g["ns"] for r in g["rhos"] if n * d <= _MAX_CELL]
    return tuple(sorted(out, key=lambda c: (c[1] * c[3], c)))


def calibration_rows(alpha: float, d: int, width: float, n: int, rho: float, run: int) -> tuple[np.ndarray, float]:
    """Run ``run`` of one cell of :func:`calibration_cells`: the read-only rows and the box's half-width
    H = width sigma_1."""
    alpha, width = _v.check_nonnegative_finite("alpha", alpha), _v.check_positive_finite("width", width)
    d, n = _v.check_count("d", d, maximum=10**5), _v.check_count("n", n, maximum=10**7)
    rho = _v.check_positive_finite("rho", rho)
    run = _v.check_count("run", run, minimum=0, maximum=2**31)
    for name, value in (("alpha", alpha), ("d", d), ("width", width), ("n", n), ("rho", rho)):
        if value not in _GRID[name + "s"]:
            raise ValueError(f"{name} must be one of the calibration's {_GRID[name + 's']}, got {name}={value!r}")
    if n * d > _MAX_CELL:
        raise ValueError(f"n * d must be at most {_MAX_CELL} (the calibration's largest cell), got n={n}, d={d}")
    sigma = (d / np.arange(1, d + 1)) ** alpha
    rng = np.random.default_rng([CALIBRATION_SEED, d, n, int(alpha * 100), int(width), int(rho * 64), run])
    X = 10.0 + sigma * rng.standard_normal((n, d))
    X.setflags(write=False)
    return X, width * float(sigma[0])


@dataclass(frozen=True)
class PathRun(Finding):
    """One release in one run of one calibration cell: the error it added and the model's prediction.

    ``predicted`` is the model's error with every factor of
    :data:`egmlib.peers.path_errors.ERROR_FACTORS` at 1 (IOME with the whole budget is predicted at
    the cell's true variances, the releases after the scale step at the released scales, as ESM
    predicts them); ``log_noise`` is the public noise sd of a log scale at the cell's budget.
    """

    alpha: float
    d: int
    width: float  #: the box's half-width in units of sigma_1
    n: int
    rho: float
    run: int
    release: str  #: one of :data:`RELEASES`
    measured: float
    predicted: float
    log_noise: float


def _model(value: float, kind: str) -> float:
    from egmlib.peers.path_errors import ERROR_FACTORS

    return value / ERROR_FACTORS[kind]


def path_runs(rows: Sequence[Mapping[str, Any]]) -> tuple[PathRun, ...]:
    """The runs that ``benchmarks/offmodel_paths.py`` records, with the model's predictions.

    Each row holds a cell's coordinates, the measured errors by release and the released scales
    (:class:`egmlib.peers.scales.PairedScales` as a mapping); the predictions are recomputed from
    them with :func:`egmlib.peers.algorithm3_robust.predict_paths` (released scales) and
    :func:`egmlib.peers.path_errors.iome_error` (true variances, whole budget), every factor
    divided out.
    """
    from egmlib.peers import algorithm3_robust as esm
    from egmlib.peers import path_errors as pe
    from egmlib.peers.scales import PairedScales, log_scale_noise

    out = []
    for row in rows:
        d, n, rho, half = int(row["d"]), int(row["n"]), float(row["rho"]), float(row["half"])
        sigma = (d / np.arange(1, d + 1)) ** float(row["alpha"])
        coords: dict[str, Any] = dict(alpha=float(row["alpha"]), d=d, width=float(row["width"]), n=n, rho=rho,
                                      run=int(row["run"]))
        tau = log_scale_noise(n, d=d, rho=esm.PAIRED_LOG_SHARE * esm.SHARES["scale"] * rho) if n >= 4 else math.inf
        for path in ("iome", "centred-iome"):
            share = 1.0 - esm._coarse_share(esm._coarse_centre(n, d, rho, -half, half) or "anchor") \
                if path == "centred-iome" else 1.0
            pred = pe.iome_error(n, rho=share * rho, variances=sigma**2, lower=-half, upper=half,
                                 shares=esm.iome_shares(n, rho=rho, rho_iome=share * rho))
            out.append(PathRun(**coords, release=f"whole {path}", measured=float(row[f"whole {path}"]),
                               predicted=_model(pred, "iome"), log_noise=tau))
        if "scales" not in row:
            continue
        sc: dict[str, Any] = {k: (np.asarray(v, dtype=float) if isinstance(v, list) else v)
                              for k, v in row["scales"].items()}
        errors = esm.predict_paths(n, rho=rho, lower=-half, upper=half, scales=PairedScales(**sc)).errors
        for path, pred in errors.items():
            release = f"after {path}"
            out.append(PathRun(**coords, release=release, measured=float(row[release]),
                               predicted=_model(pred, RELEASE_KIND[release]), log_noise=tau))
    return tuple(out)


@dataclass(frozen=True)
class PathCell(Finding):
    """One calibration cell and release: the medians over its runs."""

    alpha: float
    d: int
    width: float
    n: int
    rho: float
    release: str
    measured: float
    predicted: float  #: the model's, times the calibrated factor of its kind
    log_noise: float
    runs: int


@dataclass(frozen=True)
class PathCalibration(Finding):
    """ESM's constants from synthetic Gaussian rows: the factors of the predictions and the
    public stage's threshold, with the cells they come from."""

    factors: Mapping[str, float]  #: kind -> median over the cells of measured / model
    resolution: float  #: the threshold on the log scales' noise (nats)
    cells: tuple[PathCell, ...]

    GLUE = MappingProxyType({"paths-cells": "n_cells", "paths-runs": "runs", "paths-resolution": "resolution",
                             "paths-within2": "within_two", "paths-within-cells": "n_scored",
                             "paths-iome-factor": "iome_factor", "paths-a3-factor": "a3_factor",
                             "paths-plan-factor": "plan_factor"})

    @property
    def n_cells(self) -> int:
        return len({(c.alpha, c.d, c.width, c.n, c.rho) for c in self.cells})

    @property
    def runs(self) -> int:
        return min(c.runs for c in self.cells)

    @property
    def scored(self) -> tuple[PathCell, ...]:
        """The cells where ESM uses the prediction, after the scale step with resolvable scales."""
        return tuple(c for c in self.cells if c.release.startswith("after") and c.log_noise < self.resolution)

    @property
    def n_scored(self) -> int:
        return len(self.scored)

    @property
    def within_two(self) -> float:
        """The share of the scored cells whose prediction is within a factor 2 of the measured error."""
        return float(np.mean([0.5 <= c.measured / c.predicted <= 2.0 for c in self.scored]))

    @property
    def iome_factor(self) -> float:
        return self.factors["iome"]

    @property
    def a3_factor(self) -> float:
        return self.factors["algorithm3"]

    @property
    def plan_factor(self) -> float:
        return self.factors["plan"]

    def report(self) -> str:
        """The calibration as text, for the benchmark's log."""
        lines = [f"{self.n_cells} cells, {self.runs} runs each; factors (measured / model, median): "
                 + ", ".join(f"{k} {v:.3f}" for k, v in self.factors.items()),
                 f"public stage: IOME alone where the log scales' noise is at least {self.resolution:.3g} nats "
                 "(the threshold of least summed log ratio to IOME alone)",
                 f"predictions within a factor 2 of the measured error in {self.within_two:.0%} of the "
                 f"{self.n_scored} cells where ESM uses them"]
        return "\n".join(lines)


def _medians(runs: Sequence[PathRun]) -> dict[tuple[Any, ...], tuple[float, float, float, int]]:
    groups: dict[tuple[Any, ...], list[PathRun]] = {}
    for r in runs:
        groups.setdefault((r.alpha, r.d, r.width, r.n, r.rho, r.release), []).append(r)
    return {k: (float(np.median([r.measured for r in v])), float(np.median([r.predicted for r in v])),
                v[0].log_noise, len(v)) for k, v in groups.items()}


def resolution_threshold(pairs: Sequence[tuple[float, float]]) -> float:
    r"""The noise from which ESM's public stage stops buying scales: the threshold of least summed log ratio.

    ``pairs`` are (log scales' noise, error of the release the scale stage picks over the error of
    IOME with the whole budget), one per calibration cell.  A threshold :math:`t` buys scales in the
    cells whose noise is below it and releases IOME alone (ratio 1) in the others, so its cost is
    :math:`\sum_{\tau < t}\ln r`, the log of the product of the ratios it accepts; the result is the
    smallest of the cells' noises (and inf, buy everywhere) that minimises it.  Every cell counts by its
    size, not by whether it crosses a tolerance: a cell where the scales are wasted (the pick is IOME
    after the scales, about sqrt(8/7) times IOME alone) and one where they pay (Algorithm 3 on skewed
    scales, a fraction of it) weigh against each other, and a single cell's chance excess moves the
    threshold only as far as its log ratio.

    Examples
    --------
    >>> resolution_threshold([(0.1, 0.5), (0.5, 1.1), (1.0, 1.4), (2.0, 0.9), (3.0, 3.0)])   # buy below 0.5
    0.5
    """
    arr = _v.check_finite_data("pairs", pairs)
    if arr.shape[1] != 2:
        raise ValueError(f"pairs must be (noise, ratio) pairs, got rows of {arr.shape[1]} entries")
    if not np.all(arr[:, 1] > 0):
        raise ValueError("pairs' ratios must be > 0, got a ratio <= 0")
    order = np.argsort(arr[:, 0], kind="stable")
    noise, logs = arr[order, 0], np.log(arr[order, 1])
    thresholds = np.unique(noise)
    before = np.concatenate([[0.0], np.cumsum(logs)])  # before[k]: the summed log ratios of the k smallest noises
    costs = np.append(before[np.searchsorted(noise, thresholds, side="left")], before[-1])
    best = int(np.argmin(costs))
    return float(thresholds[best]) if best < thresholds.size else math.inf


def calibrate_paths(runs: Sequence[PathRun]) -> PathCalibration:
    """ESM's constants from the calibration runs (synthetic Gaussian rows only).

    * factors: for each kind of release, the median over the cells of (median measured error) /
      (median model error), over the cells where ESM would use that prediction: the public
      stage's IOME in every cell, the releases after the scale step where the log scales' noise
      is at most 1 nat;
    * resolution: :func:`resolution_threshold` of the cells' (noise, ratio), the ratio of IOME
      with the whole budget to the release
      the scale stage picks by the calibrated predictions.
    """
    from egmlib.peers import algorithm3_robust as esm

    if not runs or not all(isinstance(r, PathRun) for r in runs):
        raise TypeError("runs must be a non-empty sequence of egmbook.findings.offmodel.PathRun (path_runs())")
    med = _medians(runs)
    factors = {}
    for kind in ("iome", "algorithm3", "plan"):
        ratios = [m / p for (a, d, w, n, r, rel), (m, p, tau, _) in med.items()
                  if RELEASE_KIND[rel] == kind and p > 0 and (rel.startswith("whole") or tau <= 1.0)]
        factors[kind] = float(np.median(ratios)) if ratios else 1.0
    cells = tuple(PathCell(alpha=a, d=d, width=w, n=n, rho=r, release=rel, measured=m,
                           predicted=p * factors[RELEASE_KIND[rel]], log_noise=tau, runs=k)
                  for (a, d, w, n, r, rel), (m, p, tau, k) in sorted(med.items()))
    pairs = []
    by_cell: dict[tuple[Any, ...], dict[str, PathCell]] = {}
    for c in cells:
        by_cell.setdefault((c.alpha, c.d, c.width, c.n, c.rho), {})[c.release] = c
    for (a, d, w, n, r), rel in by_cell.items():
        after = [c for k, c in rel.items() if k.startswith("after")]
        if not after:
            continue
        pick = min(after, key=lambda c: c.predicted)
        box = w * (d ** a)  # the box's half-width, w sigma_1 with sigma_1 = d^alpha
        alone = rel["whole centred-iome" if esm.coarse_centre(n, d=d, rho=r, lower=-box, upper=box) else "whole iome"]
        pairs.append((pick.log_noise, pick.measured / alone.measured))
    return PathCalibration(factors=MappingProxyType(factors), resolution=resolution_threshold(pairs),
                           cells=cells)


@dataclass(frozen=True)
class MissKinds(Finding):
    """The off-model cells where ESM misses G1 or G3, by what the longer check says
    (``benchmarks/offmodel_misses.py``): a cell whose ratio over the longer runs is within the goal
    it missed was the spread of a median over the sweep's runs (``chance``); the others are misses of
    ESM's (``real``).  One record per cell, the first of its misses."""

    chance: tuple[Any, ...]  #: the chance cells' records (egmbook.offmodel_results.Miss)
    real: tuple[Any, ...]  #: the real misses' records

    GLUE = MappingProxyType({"miss-cells": "n_cells", "miss-chance": "n_chance", "miss-chance-max": "chance_max",
                             "miss-real": "n_real", "miss-longer-runs": "longer_runs"})

    @property
    def n_cells(self) -> int:
        return len(self.chance) + len(self.real)

    @property
    def n_chance(self) -> int:
        return len(self.chance)

    @property
    def n_real(self) -> int:
        return len(self.real)

    @property
    def chance_max(self) -> float:
        """The largest ratio over the longer runs among the chance cells (1 when there are none)."""
        return max((m.longer_ratio for m in self.chance), default=1.0)

    @property
    def longer_runs(self) -> int:
        return min((m.longer_runs for m in self.chance + self.real), default=0)


def miss_kinds(misses: Sequence[Any]) -> MissKinds:
    """Split ESM's misses (``egmbook.offmodel_results.load_misses()``) into chance and real, cell by
    cell: a cell is real when, over the longer runs, its ratio still exceeds a goal it missed
    (G1: :data:`GOAL_OFF_MODEL`, G3: :data:`GOAL_PARTS`)."""
    from egmbook.offmodel_results import Miss

    if isinstance(misses, (str, bytes)) or not isinstance(misses, Sequence) or not all(
            isinstance(m, Miss) for m in misses):
        raise TypeError("misses must be a sequence of egmbook.offmodel_results.Miss (load_misses())")
    limits = {"G1": GOAL_OFF_MODEL, "G3": GOAL_PARTS}
    cells: dict[tuple[str, float], list[Any]] = {}
    for m in misses:
        if m.goal not in limits:
            raise ValueError(f"misses' goals must be G1 or G3, got goal={m.goal!r}")
        cells.setdefault((m.dataset, m.rho), []).append(m)
    kinds: dict[bool, list[Any]] = {False: [], True: []}
    for ms in cells.values():
        kinds[any(m.longer_ratio > limits[m.goal] for m in ms)].append(ms[0])
    return MissKinds(chance=tuple(kinds[False]), real=tuple(kinds[True]))


@dataclass(frozen=True)
class RadiusCalibration(Finding):
    """The margin share of ESM's IOME radius search on the synthetic calibration cells
    (``benchmarks/iome_radius_rows.py``; :func:`egmlib.peers.algorithm3_robust.iome_shares`): for each
    share f of the grid (inf: PLAN's split), IOME's median error with f over that with PLAN's split,
    its geometric mean and largest value over the cells, at the public stage, after the scale step and
    over both."""

    rows: Mapping[tuple[float, str], Any]  #: (f, stage) -> egmbook.offmodel_results.RadiusRow
    shares: tuple[float, ...]  #: the grid's shares, in the file's order

    GLUE = MappingProxyType({"radius-cells": "cells", "radius-gain": "gain_pct", "radius-best": "best"})

    @property
    def best(self) -> float:
        """The calibrated ``IOME_RADIUS_ROWS``, the share whose geometric mean over both stages is the smallest."""
        return min(self.shares, key=lambda f: self.rows[f, "both"].geomean)

    @property
    def cells(self) -> int:
        return int(self.rows[self.best, "both"].cells)

    @property
    def gain_pct(self) -> float:
        """How much lower IOME's error is with the best share, in % of PLAN's split's (geometric mean)."""
        return 100.0 * (1.0 - self.rows[self.best, "both"].geomean)

    def columns(self) -> dict[str, list[str]]:
        """The table of the calibration: the share, then per stage the geometric mean and the largest ratio."""
        out = {"margin share f": ["PLAN's split" if math.isinf(f) else f"{f:g}" for f in self.shares]}
        for stage, name in (("public", "public stage"), ("after scales", "after the scales"), ("both", "both")):
            out[f"{name}: geometric mean"] = [f"{self.rows[f, stage].geomean:.3f}" for f in self.shares]
            if stage != "both":
                out[f"{name}: largest"] = [f"{self.rows[f, stage].worst:.2f}" for f in self.shares]
        return out


def radius_calibration(rows: Sequence[Any]) -> RadiusCalibration:
    """The calibration of ESM's IOME radius search from ``egmbook.offmodel_results.load_radius_rows()``."""
    from egmbook.offmodel_results import RadiusRow

    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not rows or not all(
            isinstance(r, RadiusRow) for r in rows):
        raise TypeError("rows must be a non-empty sequence of egmbook.offmodel_results.RadiusRow (load_radius_rows())")
    table = {(r.f, r.stage): r for r in rows}
    shares = tuple(dict.fromkeys(r.f for r in rows))
    missing = [(f, stage) for f in shares for stage in ("public", "after scales", "both") if (f, stage) not in table]
    if missing:
        raise ValueError(f"rows must hold every stage of every share, missing {missing[:3]}")
    return RadiusCalibration(rows=MappingProxyType(table), shares=shares)
