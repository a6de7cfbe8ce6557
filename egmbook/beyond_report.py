"""Typed access to the results of chapter 7's simulations (``scripts/beyond_report.py``).

The report (Poulsen 2023) compares Algorithm 3 with the clipped Gaussian mechanism by
their noise alone (Section 5, Figure 2) and leaves the clipping bias, the choice of p_C,
a wrong centre and estimated standard deviations open (Sections 6 and 6.1).  The script
``scripts/beyond_report.py`` answers them by simulation and writes one JSON file,
``data/beyond_report.json``; chapter 7 of the book reads it through
:func:`load_beyond_report`, which checks every record against the frozen dataclasses
below (no missing or unknown field, numbers where numbers belong) and returns them with
integer keys for ``n`` and read-only arrays for grids, so that a reader writes
``res.sweep.config(d=10, alpha=2.0).methods["alg3"].opt[1000].p_opt`` instead of
nested string keys.

The sections, in the script's order:

* :attr:`BeyondReport.sweep` (experiment B) -- the p_C sweep of the per-row error model
  (:mod:`egmbook.clipping_error`) and its optimum for every (d, alpha, method, n), searched
  freely over the radius (:func:`egmbook.clipping_error.optimal_radius`), as are the
  re-optimised radii of C and E;
* :attr:`BeyondReport.sweep_direct` -- the same curve measured through the mechanisms;
* :attr:`BeyondReport.direct` (A) -- direct simulation on the Figure 2 grid;
* :attr:`BeyondReport.centre` and :attr:`BeyondReport.centre_direct` (C) -- a wrong centre;
* :attr:`BeyondReport.estimated` and :attr:`BeyondReport.estimated_direct` (D) -- standard
  deviations from a public sample;
* :attr:`BeyondReport.private_centre` (E) -- the centre claim with centres released
  privately on an independent batch;
* :attr:`BeyondReport.privacy` (P) -- the empirical privacy check
  (:func:`egmbook.privacy_check.privacy_check`).
"""

from __future__ import annotations

import functools
import json
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from egmbook.clipping_error import ClippingOptimum, RadiusOptimum
from egmbook.privacy_check import PrivacyCheck
from egmlib import validation as _v

__all__ = [
    "BEYOND_REPORT_PATH",
    "Settings",
    "AtOneOverN",
    "MethodSweep",
    "SweepConfig",
    "QuadratureCheck",
    "Sweep",
    "CurvePoint",
    "DirectRun",
    "OffsetAtN",
    "Offset",
    "PrivateBatch",
    "CentreConfig",
    "CentreDirect",
    "PrivateCentreAtN",
    "PrivateCentre",
    "EstimatedSigma",
    "EstimatedSigmaDirect",
    "PrivacyRun",
    "BeyondReport",
    "load_beyond_report",
    "TuningRow",
    "tuning_table",
    "CentreImprovement",
    "centre_improvements",
]

#: The results of the full run, committed with the repository.
BEYOND_REPORT_PATH = Path(__file__).resolve().parent.parent / "data" / "beyond_report.json"

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Settings:
    """The parameters of the run (privacy level, seed, Monte Carlo budgets)."""

    eps: float
    delta: float
    seed: int
    quick: bool  #: a smoke run (``--quick``), not the results the book quotes
    sigma_opt: float  #: Theorem 2's sigma_opt(eps, delta), unit sensitivity
    rows_elems_B: float
    budget_A: float
    min_noise_draws: int
    rows_elems_CD: float
    batch_draws: int
    draws_D: int
    reps_C_direct: int
    reps_D_direct: int
    n_mc: int
    n_outputs: int
    radius_range: tuple[float, ...]  #: the radii searched for an optimum, in units of the median radius
    radius_per_decade: int  #: points per decade of that search's scan


@dataclass(frozen=True)
class AtOneOverN:
    """The per-row model at the report's p_C = 1/n."""

    C: float  #: radius
    noise: float  #: E||eta||^2
    bias: float  #: n E||D||^2
    bias_se: float
    total: float  #: noise + bias
    pclip: float  #: clipping probability of one row under the model


@dataclass(frozen=True)
class MethodSweep:
    """One method's per-row model along the p_C grid, its optimum (searched freely over the
    radius, not on the grid) and its value at 1/n."""

    C: Floats  #: radius at each p_C of the grid
    noise: Floats  #: E||eta||^2 there
    e2: Floats  #: E||D||^2 of one row
    e2_se: Floats
    pclip: Floats  #: the model's clipping probability (should equal p_C)
    pclip_se: Floats
    opt: dict[int, ClippingOptimum]  #: by n
    at_1n: dict[int, AtOneOverN]  #: by n


@dataclass(frozen=True)
class SweepConfig:
    """Experiment B for one (d, alpha): both methods along the p_C grid."""

    d: int
    alpha: float
    rows: int  #: Monte Carlo draws of the per-row model
    trace: float  #: sum_j sigma_j^2
    fig2_improvement: dict[int, float]  #: Figure 2's E_n / E_t, by n
    methods: dict[str, MethodSweep]  #: by method, "alg3" and "base"


@dataclass(frozen=True)
class QuadratureCheck:
    """The baseline's E||D||^2, per-row model against quadrature of gchisq.sf."""

    d: int
    alpha: float
    p: Floats
    quad: Floats
    model: Floats
    model_se: Floats


@dataclass(frozen=True)
class Sweep:
    """Experiment B: the p_C sweep of the per-row model."""

    p_grid: Floats
    configs: tuple[SweepConfig, ...]
    quadrature: tuple[QuadratureCheck, ...]

    def config(self, *, d: int, alpha: float) -> SweepConfig:
        """The configuration with dimension ``d`` and Zipf exponent ``alpha``."""
        for c in self.configs:
            if c.d == d and c.alpha == alpha:
                return c
        raise ValueError(f"d and alpha must name a configuration of the sweep, got d={d!r}, alpha={alpha!r}")


@dataclass(frozen=True)
class CurvePoint:
    """One point of the p_C curve measured through the mechanisms."""

    d: int
    alpha: float
    n: int
    method: str
    p: float
    reps: int
    total_mean: float
    total_ci: float
    bias_mean: float
    bias_ci: float


@dataclass(frozen=True)
class DirectRun:
    """Experiment A: one (d, n, alpha, method, p_C) through the mechanisms."""

    d: int
    n: int
    alpha: float
    method: str
    p: float
    is_opt: bool  #: p is the method's optimal p_C (else 1/n)
    reps: int
    noise_draws: int
    C: float
    noise_pred: float
    noise_mean: float
    noise_se: float
    noise_ci: float
    bias_mean: float
    bias_se: float | None  #: None with a single repetition
    bias_ci: float | None
    total_mean: float
    total_se: float | None
    total_ci: float | None
    nclip_mean: float
    trace_n: float  #: n sum_j sigma_j^2


@dataclass(frozen=True)
class OffsetAtN:
    """Experiment C: the error with a wrong centre at one n, relative to the exact centre's optimum."""

    ratio_1n: float
    ratio_opt0: float
    ratio_reopt: float  #: at the radius re-optimised for the offset (a free search), over the exact optimum
    C_reopt: float  #: that radius
    log10_p_reopt: float  #: log10 of its exact-centre clipping probability (may lie below 1e-308)
    search: RadiusOptimum  #: the search and its bracket
    sys_share_opt0: float
    mse_1n: float
    mse_opt0: float
    mse_1n_se: float
    mse_opt0_se: float
    pclip_1n: float
    pclip_opt0: float


@dataclass(frozen=True)
class Offset:
    """One offset size c (in standard deviations) of experiment C."""

    c: float
    per_n: dict[int, OffsetAtN]


@dataclass(frozen=True)
class PrivateBatch:
    """Experiment C with mu_hat from a private release on an independent batch."""

    ratio_1n: float
    ratio_1n_ci: float
    ratio_opt0: float
    ratio_opt0_ci: float
    offset_rms_sigma: float
    draws: int


@dataclass(frozen=True)
class CentreConfig:
    """Experiment C for one (d, alpha, method)."""

    d: int
    alpha: float
    method: str
    trace: float
    mse_star: dict[int, float]  #: the exact centre's error at its optimal p_C, by n
    mse_star_se: dict[int, float]
    mse_1n: dict[int, float]  #: the exact centre's error at p_C = 1/n, by n
    mse_1n_se: dict[int, float]
    offsets: dict[str, tuple[Offset, ...]]  #: "prop" (c sigma_j) and "iso" (same norm)
    private_batch: dict[int, PrivateBatch]


@dataclass(frozen=True)
class CentreDirect:
    """Experiment C's direct-simulation check."""

    d: int
    alpha: float
    n: int
    method: str
    p: float
    offset: str  #: "exact", or the shape and size, e.g. "prop0.1"
    reps: int
    total_mean: float
    total_ci: float
    bias_mean: float
    bias_ci: float
    nclip_mean: float


@dataclass(frozen=True)
class PrivateCentreAtN:
    """Experiment E at one n: the mean error with a private centre over the exact centre's."""

    ratio_1n: float  #: at p_C = 1/n, over the exact centre's error at 1/n
    ratio_1n_ci: float  #: 95% half-width over the draws of the centre
    ratio_opt0: float  #: at the exact centre's optimum p*_0, over the exact centre's error there
    ratio_opt0_ci: float
    ratio_reopt: float  #: at the p_C minimising the mean error over the draws, over the error at p*_0
    ratio_reopt_ci: float
    C_reopt: float  #: that radius, searched freely
    log10_p_reopt: float  #: log10 of its exact-centre clipping probability (may lie below 1e-308)
    search: RadiusOptimum  #: the search and its bracket
    mse_exact_opt0: float  #: the exact centre's error at p*_0
    mse_reopt: float  #: the mean error with the private centre at the re-optimised p_C


@dataclass(frozen=True)
class PrivateCentre:
    """Experiment E: one method with a centre released privately on an independent batch."""

    d: int
    alpha: float
    source: str  #: the mechanism that released the centre, "base" (isotropic noise) or "alg3"
    m: int  #: rows of the independent batch
    method: str  #: the mechanism that uses the centre
    draws: int  #: independent centres
    offset_rms_sigma: float  #: root mean square of (mu_hat_j - mu_j) / sigma_j, mean over the draws
    per_n: dict[int, PrivateCentreAtN]


@dataclass(frozen=True)
class EstimatedSigma:
    """Experiment D: error with sigma (and mu) from a public sample of size m."""

    d: int
    alpha: float
    m: int
    n: int
    p_kind: str  #: "1/n" or "opt"
    method: str
    variant: str  #: "sigma" or "sigma+mu"
    ratio_mean: float
    ratio_ci: float
    ratio_q90: float
    pclip_ratio_median: float
    draws: int


@dataclass(frozen=True)
class EstimatedSigmaDirect:
    """Experiment D's direct-simulation check."""

    d: int
    alpha: float
    n: int
    m: int
    method: str
    reps: int
    known_mean: float
    known_ci: float
    est_mean: float
    est_ci: float
    ratio: float


@dataclass(frozen=True)
class PrivacyRun:
    """Experiment P: the privacy check of one (d, alpha)."""

    d: int
    alpha: float
    check: PrivacyCheck


@dataclass(frozen=True)
class BeyondReport:
    """Everything ``scripts/beyond_report.py`` wrote, typed (see the module docstring)."""

    settings: Settings  #: the parameters of the run
    timings: dict[str, float]  #: seconds per experiment
    sweep: Sweep = field(metadata={"key": "B"})  #: experiment B, the p_C sweep of the model
    #: experiment B, the p_C curve through the mechanisms
    sweep_direct: tuple[CurvePoint, ...] = field(metadata={"key": "B_direct"})
    direct: tuple[DirectRun, ...] = field(metadata={"key": "A"})  #: experiment A, the Figure 2 grid
    centre: tuple[CentreConfig, ...] = field(metadata={"key": "C"})  #: experiment C, a wrong centre
    #: experiment C, its direct-simulation check
    centre_direct: tuple[CentreDirect, ...] = field(metadata={"key": "C_direct"})
    #: experiment D, sigma (and mu) from a public sample
    estimated: tuple[EstimatedSigma, ...] = field(metadata={"key": "D"})
    #: experiment D, its direct-simulation check
    estimated_direct: tuple[EstimatedSigmaDirect, ...] = field(metadata={"key": "D_direct"})
    privacy: tuple[PrivacyRun, ...] = field(metadata={"key": "P"})  #: experiment P, the privacy check
    #: experiment E, the centre claim with real private centres
    private_centre: tuple[PrivateCentre, ...] = field(metadata={"key": "E"})

    @property
    def n_values(self) -> tuple[int, ...]:
        """The numbers of points n of the run, ascending."""
        return tuple(sorted(self.sweep.configs[0].fig2_improvement))


# ----------------------------------------------------------------------------------------
# the loader: JSON -> dataclasses, checked against the type hints
# ----------------------------------------------------------------------------------------
def _fail(where: str, rule: str, value: Any) -> ValueError:
    text = repr(value)
    return ValueError(f"{where} must be {rule}, got {text if len(text) < 60 else type(value).__name__}")


def _build(tp: Any, value: Any, where: str) -> Any:
    """``value`` (parsed JSON) converted to the annotated type ``tp``, or ValueError."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _build(inner, value, where)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(where, "a number", value)
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(where, "an integer", value)
        return value
    if tp in (bool, str):
        if not isinstance(value, tp):
            raise _fail(where, tp.__name__, value)
        return value
    if origin is np.ndarray:  # NDArray[np.float64]: a list of numbers
        if not isinstance(value, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
        ):
            raise _fail(where, "a list of numbers", value)
        arr = np.array(value, dtype=np.float64)
        arr.setflags(write=False)
        return arr
    if origin is tuple:
        (inner, _) = typing.get_args(tp)
        if not isinstance(value, list):
            raise _fail(where, "a list", value)
        return tuple(_build(inner, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        key_tp, val_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise _fail(where, "an object", value)
        out = {}
        for k, v in value.items():
            if key_tp is int:
                if not (isinstance(k, str) and k.isdigit()):
                    raise _fail(f"{where} key", "an integer", k)
                out[int(k)] = _build(val_tp, v, f"{where}[{k}]")
            else:
                out[k] = _build(val_tp, v, f"{where}[{k!r}]")
        return out
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):  # NamedTuple
        hints = _hints(tp)
        if not isinstance(value, dict) or set(value) != set(tp._fields):
            raise _fail(where, f"an object with the keys {list(tp._fields)}", value)
        return tp(**{k: _build(hints[k], value[k], f"{where}.{k}") for k in tp._fields})
    if tp is PrivacyRun:
        return _privacy_run(value, where)
    if is_dataclass(tp):
        return _build_dataclass(tp, value, where)
    raise TypeError(f"{where}: no conversion for {tp!r}")  # pragma: no cover - a missing case


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved type hints of a record class, computed once per class (resolving them
    evaluates every annotation string anew, and a load builds thousands of records)."""
    return typing.get_type_hints(cls)


@functools.cache
def _json_keys(cls: type) -> dict[str, Any]:
    """The JSON key of each field of a dataclass (its ``key`` metadata, else its name), once
    per class."""
    return {f.metadata.get("key", f.name): f for f in fields(cls)}


def _build_dataclass(cls: Any, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(where, "an object", value)
    hints = _hints(cls)
    keys = _json_keys(cls)
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}")
    kwargs = {}
    for key, f in keys.items():
        if key not in value:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"{where} lacks the field {key!r}")
            continue
        kwargs[f.name] = _build(hints[f.name], value[key], f"{where}.{key}")
    return cls(**kwargs)


def _privacy_run(value: Any, where: str) -> PrivacyRun:
    """A record of the P section: d, alpha and the fields of a :class:`PrivacyCheck`, flat."""
    if not isinstance(value, dict) or "d" not in value or "alpha" not in value:
        raise _fail(where, "an object with d, alpha and the fields of a PrivacyCheck", value)
    rest = {k: v for k, v in value.items() if k not in ("d", "alpha")}
    return PrivacyRun(d=_build(int, value["d"], f"{where}.d"), alpha=_build(float, value["alpha"], f"{where}.alpha"),
                      check=_build_dataclass(PrivacyCheck, rest, where))


def load_beyond_report(path: str | Path | None = None) -> BeyondReport:
    """Load the results of ``scripts/beyond_report.py`` (chapter 7) as a :class:`BeyondReport`.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        Defaults to :data:`BEYOND_REPORT_PATH` (``data/beyond_report.json`` in the
        repository).

    Raises
    ------
    FileNotFoundError
        If the file is missing (run ``python scripts/beyond_report.py``).
    ValueError
        If a record lacks a field, has an unknown one or holds a value of the wrong kind
        (the message names the record and the field).
    """
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = Path(path) if path is not None else BEYOND_REPORT_PATH
    if not p.is_file():
        raise FileNotFoundError(f"results of chapter 7 not found at {p}; run python scripts/beyond_report.py")
    out: BeyondReport = _build_dataclass(BeyondReport, json.loads(p.read_text()), p.name)
    return out


# ----------------------------------------------------------------------------------------
# summaries of chapter 7, as typed records
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TuningRow:
    """Chapter 7's comparison at one (d, alpha, n), with the exact centre mu_hat = mu.

    Errors are relative to n tr(Sigma), the error of the data-free release n mu_hat.
    """

    d: int
    alpha: float
    n: int
    alg3_opt: ClippingOptimum  #: Algorithm 3 at its own optimal p_C
    base_opt: ClippingOptimum  #: the baseline at its own optimal p_C
    alg3_at_1n: float  #: Algorithm 3's relative error at p_C = 1/n (noise and clipping)
    base_at_1n: float  #: the baseline's relative error at p_C = 1/n
    alg3_at_opt: float  #: Algorithm 3's relative error at its optimum
    base_at_opt: float  #: the baseline's relative error at its optimum
    figure2: float  #: Figure 2's improvement (noise only, both at p_C = 1/n)
    improvement: float  #: base_opt.total / alg3_opt.total, each at its own optimum

    @property
    def both_on_grid(self) -> bool:
        """Both optima lie on the p_C grid (not at a radius below it)."""
        return not (self.alg3_opt.below_grid or self.base_opt.below_grid)

    @property
    def ratio_of_improvements(self) -> float:
        """The ratio of the two improvement factors, improvement over figure2."""
        return self.improvement / self.figure2

    @property
    def share_above_one(self) -> float:
        """The share of Figure 2's gain above 1 that remains, (improvement - 1) over (figure2 - 1)."""
        return (self.improvement - 1.0) / (self.figure2 - 1.0)

    @property
    def share_log(self) -> float:
        """The share of Figure 2's gain on a log scale, log(improvement) over log(figure2)."""
        return float(np.log(self.improvement) / np.log(self.figure2))

    @property
    def tuning_gain_alg3(self) -> float:
        """Factor by which tuning p_C divides Algorithm 3's error."""
        return self.alg3_at_1n / self.alg3_at_opt

    @property
    def tuning_gain_base(self) -> float:
        """Factor by which tuning p_C divides the baseline's error."""
        return self.base_at_1n / self.base_at_opt


def tuning_table(res: BeyondReport) -> tuple[TuningRow, ...]:
    """One :class:`TuningRow` per (d, alpha, n) of the sweep (experiment B), in the sweep's order.

    Answers the report's open question of the choice of p_C (Section 6) for the total error of
    chapter 7's decomposition, with the exact centre.
    """
    if not isinstance(res, BeyondReport):
        raise TypeError(f"res must be a BeyondReport, got res of type {type(res).__name__}")
    rows = []
    for c in res.sweep.configs:
        A, B = c.methods["alg3"], c.methods["base"]
        for n in res.n_values:
            t = n * c.trace
            oa, ob = A.opt[n], B.opt[n]
            rows.append(TuningRow(d=c.d, alpha=c.alpha, n=n, alg3_opt=oa, base_opt=ob,
                                  alg3_at_1n=A.at_1n[n].total / t, base_at_1n=B.at_1n[n].total / t,
                                  alg3_at_opt=oa.total / t, base_at_opt=ob.total / t,
                                  figure2=c.fig2_improvement[n], improvement=ob.total / oa.total))
    return tuple(rows)


@dataclass(frozen=True)
class CentreImprovement:
    """Algorithm 3's improvement over the baseline at one (d, alpha, n) of experiment C, each
    method at the p_C that minimises its own error for the centre it is given."""

    d: int
    alpha: float
    n: int
    c: float  #: the size of the offset, in standard deviations
    exact: float  #: with the exact centre (each at its optimum p*_0)
    proportional: float  #: with mu_hat - mu = c sigma_j, p_C re-optimised
    isotropic: float  #: with the same Euclidean norm spread equally, p_C re-optimised


def centre_improvements(res: BeyondReport, *, c: float = 0.1) -> tuple[CentreImprovement, ...]:
    """The improvement with a wrong centre of size ``c`` (one of experiment C's offsets), by (d, alpha, n)."""
    if not isinstance(res, BeyondReport):
        raise TypeError(f"res must be a BeyondReport, got res of type {type(res).__name__}")
    c = _v.check_real("c", c)
    sizes = {v.c for v in res.centre[0].offsets["prop"]}
    if c not in sizes:
        raise ValueError(f"c must be one of experiment C's offsets {sorted(sizes)}, got c={c!r}")
    by = {(r.d, r.alpha, r.method): r for r in res.centre}
    out = []
    for d, alpha in sorted({(r.d, r.alpha) for r in res.centre}):
        A, B = by[(d, alpha, "alg3")], by[(d, alpha, "base")]
        for n in res.n_values:
            reopt = {shape: [next(v for v in r.offsets[shape] if v.c == c).per_n[n].ratio_reopt * r.mse_star[n]
                             for r in (A, B)] for shape in ("prop", "iso")}
            out.append(CentreImprovement(d=d, alpha=alpha, n=n, c=c, exact=B.mse_star[n] / A.mse_star[n],
                                         proportional=reopt["prop"][1] / reopt["prop"][0],
                                         isotropic=reopt["iso"][1] / reopt["iso"][0]))
    return tuple(out)
