"""Chapter 9's own results files: where the benchmarks write them and how the chapter reads them.

The analysis is in :mod:`egmbook.findings.offmodel` (pure functions of the records read here);
this module is the only one that touches the files:

* ``benchmarks/results/offmodel_paths.csv`` -- ESM's releases on synthetic Gaussian rows, one
  row per (cell, run, release): the error measured and the error predicted
  (``benchmarks/offmodel_paths.py``; :func:`load_path_runs`, :func:`write_path_runs`);
* ``benchmarks/results/offmodel_diagnosis.json`` -- the step-by-step diagnosis of the
  pipelines with private inputs on the real datasets (``benchmarks/offmodel_diagnosis.py``;
  :func:`load_diagnoses`, :func:`save_diagnoses`);
* ``benchmarks/results/offmodel_scale.csv`` -- ESM's and PLAN's cost at scale
  (``benchmarks/offmodel_scale.py``; :func:`load_scale_rows`, :func:`write_scale_rows`);
* ``benchmarks/results/offmodel_misses.csv`` -- the release ESM took in each off-model cell
  where it misses a goal (``benchmarks/offmodel_misses.py``; :func:`load_misses`);
* ``benchmarks/results/iome_radius_rows.csv`` -- the calibration of ESM's IOME radius search on
  synthetic Gaussian rows (``benchmarks/iome_radius_rows.py``; :func:`load_radius_rows`,
  :func:`write_radius_rows`);

The sweeps' summaries (``offmodel.csv``, ``peers.csv``) are read by :mod:`egmbook.peer_results`.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from egmbook.findings.offmodel import Diagnosis, PathRun, StepDiagnostics

__all__ = ["DIAGNOSIS_FILE", "MISSES_FILE", "PATHS_FILE", "RADIUS_FILE", "SCALE_FILE", "Miss", "RadiusRow",
           "ScaleRow", "load_diagnoses", "load_misses", "load_path_runs", "load_radius_rows", "load_scale_rows",
           "save_diagnoses", "write_path_runs", "write_radius_rows", "write_scale_rows"]

_RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
#: Where ``benchmarks/offmodel_paths.py`` writes its runs (the repository's
#: ``benchmarks/results/offmodel_paths.csv``).
#:
#: :meta hide-value:
PATHS_FILE = _RESULTS / "offmodel_paths.csv"
#: Where ``benchmarks/offmodel_diagnosis.py`` saves chapter 9's diagnoses (the repository's
#: ``benchmarks/results/offmodel_diagnosis.json``).
#:
#: :meta hide-value:
DIAGNOSIS_FILE = _RESULTS / "offmodel_diagnosis.json"
#: Where ``benchmarks/offmodel_scale.py`` writes its measurements.
#:
#: :meta hide-value:
SCALE_FILE = _RESULTS / "offmodel_scale.csv"
#: Where ``benchmarks/offmodel_misses.py`` writes the cells where ESM misses a goal.
#:
#: :meta hide-value:
MISSES_FILE = _RESULTS / "offmodel_misses.csv"
#: Where ``benchmarks/iome_radius_rows.py`` writes its calibration.
#:
#: :meta hide-value:
RADIUS_FILE = _RESULTS / "iome_radius_rows.csv"
_PATH_COLUMNS = tuple(f.name for f in dataclasses.fields(PathRun))


@dataclass(frozen=True)
class ScaleRow:
    """One estimator's cost on one large dataset (``benchmarks/offmodel_scale.py``)."""

    arm: str  #: the name in egmlib.peers.arms.ARMS
    path: str  #: ESM's path ("" for PLAN)
    n: int
    d: int
    cpu_s: float  #: CPU seconds of one call (median over ``reps``)
    kernel_cpu_s: float  #: the part of ``cpu_s`` spent in the kernel (system time: fresh pages)
    mean_cpu_s: float  #: CPU seconds of X.mean(axis=0) on the same data
    peak_added_bytes: int  #: the peak memory the call adds (tracemalloc)
    data_bytes: int  #: the data's size
    reps: int

    @property
    def cpu_ratio(self) -> float:
        return self.cpu_s / self.mean_cpu_s

    @property
    def process_cpu_ratio(self) -> float:
        """``cpu_ratio`` without the kernel's part."""
        return (self.cpu_s - self.kernel_cpu_s) / self.mean_cpu_s

    @property
    def memory_share(self) -> float:
        return self.peak_added_bytes / self.data_bytes


def write_scale_rows(rows: Sequence[ScaleRow], path: str | Path) -> Path:
    """Write the scale benchmark's rows as CSV."""
    if not rows or not all(isinstance(r, ScaleRow) for r in rows):
        raise TypeError("rows must be a non-empty sequence of egmbook.offmodel_results.ScaleRow")
    p = _check_path(path, ".csv")
    names = [f.name for f in dataclasses.fields(ScaleRow)]
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for r in rows:
            w.writerow([repr(getattr(r, c)) if isinstance(getattr(r, c), float) else getattr(r, c) for c in names])
    return p


def load_scale_rows(path: str | Path | None = None) -> tuple[ScaleRow, ...]:
    """The scale benchmark's rows (by default :data:`SCALE_FILE`)."""
    rows = _csv_records(SCALE_FILE if path is None else _check_path(path, ".csv"), ScaleRow)
    ints = {"n", "d", "peak_added_bytes", "data_bytes", "reps"}
    out = []
    for r in rows:
        values: dict[str, Any] = {k: int(v) if k in ints else float(v) if k.endswith("_s") else v for k, v in r.items()}
        out.append(ScaleRow(**values))
    return tuple(out)


@dataclass(frozen=True)
class Miss:
    """One off-model cell where ESM misses G1 or G3 (``benchmarks/offmodel_misses.py``), and the
    release it took there."""

    dataset: str
    rho: float
    goal: str  #: "G1" or "G3"
    ratio: float  #: ESM's median error added over the better of PLAN and IOME
    best_peer: str  #: "PLAN" or "IOME"
    best_error: float  #: that peer's median error added
    esm_error: float  #: ESM's median error added, recomputed
    path: str  #: the release ESM took most often (egmlib.peers.path_errors.PATHS)
    path_share: float  #: the share of the runs that took it
    public_share: float  #: the share of the runs stopped at the public stage
    runs: int
    longer_ratio: float  #: the same ratio over ``longer_runs`` runs of both (the sweep's seeds continued)
    longer_runs: int


def load_misses(path: str | Path | None = None) -> tuple[Miss, ...]:
    """The cells where ESM misses a goal (by default :data:`MISSES_FILE`), in the file's order."""
    p = MISSES_FILE if path is None else _check_path(path, ".csv")
    names = [f.name for f in dataclasses.fields(Miss)]
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist: run benchmarks/offmodel_misses.py")
    with p.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and list(rows[0]) != names:
        raise ValueError(f"{p} must have the columns {', '.join(names)}")
    text, ints = {"dataset", "goal", "best_peer", "path"}, {"runs", "longer_runs"}
    out = []
    for r in rows:
        values: dict[str, Any] = {k: v if k in text else int(v) if k in ints else float(v) for k, v in r.items()}
        out.append(Miss(**values))
    return tuple(out)


@dataclass(frozen=True)
class RadiusRow:
    """ESM's IOME on the synthetic calibration cells with one margin share ``f`` of its radius search
    (``benchmarks/iome_radius_rows.py``): the error over that with PLAN's split, over the cells."""

    f: float  #: the margin's share of the rows (inf: PLAN's split)
    stage: str  #: "public", "after scales" or "both"
    geomean: float  #: the geometric mean over the cells of the ratio of median errors
    worst: float  #: the largest such ratio
    cells: int
    runs: int


def write_radius_rows(rows: Sequence[RadiusRow], path: str | Path) -> Path:
    """Write the radius search's calibration to ``path`` (a .csv file)."""
    p = _check_path(path, ".csv")
    if not rows or not all(isinstance(r, RadiusRow) for r in rows):
        raise TypeError("rows must be a non-empty sequence of RadiusRow")
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([fl.name for fl in dataclasses.fields(RadiusRow)])
        w.writerows([[f"{v:.6g}" if isinstance(v, float) else v for v in dataclasses.astuple(r)] for r in rows])
    return p


def load_radius_rows(path: str | Path | None = None) -> tuple[RadiusRow, ...]:
    """The radius search's calibration (by default :data:`RADIUS_FILE`)."""
    rows = _csv_records(RADIUS_FILE if path is None else _check_path(path, ".csv"), RadiusRow)
    return tuple(RadiusRow(f=float(r["f"]), stage=r["stage"], geomean=float(r["geomean"]), worst=float(r["worst"]),
                           cells=int(r["cells"]), runs=int(r["runs"])) for r in rows)


def _csv_records(p: Path, record: type) -> list[dict[str, str]]:
    """The rows of a results file whose columns are the fields of ``record``, at least one."""
    names = [f.name for f in dataclasses.fields(record)]
    with p.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or list(rows[0]) != names:
        raise ValueError(f"{p} must have the columns {', '.join(names)} and at least one row")
    return rows


def _check_path(path: object, suffix: str) -> Path:
    if isinstance(path, bool) or not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = Path(path)
    if p.suffix != suffix:
        raise ValueError(f"path must name a {suffix} file, got path={str(p)!r}")
    return p


def write_path_runs(runs: Sequence[PathRun], path: str | Path) -> Path:
    """Write ESM's calibration runs (:class:`egmbook.findings.offmodel.PathRun`) as CSV, floats exactly."""
    if not runs or not all(isinstance(r, PathRun) for r in runs):
        raise TypeError("runs must be a non-empty sequence of egmbook.findings.offmodel.PathRun")
    p = _check_path(path, ".csv")
    with p.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(_PATH_COLUMNS)
        for r in runs:
            w.writerow([repr(getattr(r, c)) if isinstance(getattr(r, c), float) else getattr(r, c)
                        for c in _PATH_COLUMNS])
    return p


def load_path_runs(path: str | Path | None = None) -> tuple[PathRun, ...]:
    """ESM's calibration runs written by ``benchmarks/offmodel_paths.py`` (by default :data:`PATHS_FILE`)."""
    p = PATHS_FILE if path is None else _check_path(path, ".csv")
    with p.open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or tuple(rows[0]) != _PATH_COLUMNS:
        raise ValueError(f"{p} must have the columns {', '.join(_PATH_COLUMNS)} and at least one row")
    kinds = {f.name: f.type for f in dataclasses.fields(PathRun)}
    conv: dict[str, Callable[[str], Any]] = {"float": float, "int": int, "str": str, "bool": lambda v: v == "True"}
    try:
        return tuple(PathRun(**{k: conv[str(kinds[k])](v) for k, v in r.items()}) for r in rows)
    except (KeyError, ValueError) as err:
        raise ValueError(f"{p} does not hold ESM's runs as write_path_runs writes them ({err})") from None


def save_diagnoses(diagnoses: Sequence[Diagnosis], path: str | Path) -> Path:
    """Write chapter 9's diagnoses (:class:`egmbook.findings.offmodel.Diagnosis`) as JSON to ``path``,
    a ``.json`` file (chapter 9 reads :data:`DIAGNOSIS_FILE`); floats are written exactly (their repr)."""
    if isinstance(diagnoses, Diagnosis) or not isinstance(diagnoses, Sequence) or not diagnoses or not all(
            isinstance(g, Diagnosis) for g in diagnoses):
        raise TypeError("diagnoses must be a non-empty sequence of egmbook.findings.offmodel.Diagnosis (diagnose())")
    p = _check_path(path, ".json")
    rows = [{**{f.name: getattr(g, f.name) for f in dataclasses.fields(g) if f.name not in ("steps", "reference")},
             "steps": {k: dataclasses.asdict(v) for k, v in g.steps.items()}, "reference": dict(g.reference)}
            for g in diagnoses]
    p.write_text(json.dumps(rows, indent=1) + "\n")
    return p


def load_diagnoses(path: str | Path | None = None) -> Mapping[str, Diagnosis]:
    """Chapter 9's diagnoses saved by ``benchmarks/offmodel_diagnosis.py`` (by default
    :data:`DIAGNOSIS_FILE`), by dataset, in the saved order."""
    p = DIAGNOSIS_FILE if path is None else _check_path(path, ".json")
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
