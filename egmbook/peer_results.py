r"""Typed access to the results of the peers benchmarks (chapter 8 of the book).

``benchmarks/peers_sweep.py`` runs Algorithm 3 and its peers (PLAN, Aumuller, Lebeda,
Nelson and Pagh 2024; IOME, Huang, Liang and Yi 2021; CoinPress, Biswas et al. 2020) on
PLAN's Gaussian benchmarks and writes, to ``benchmarks/results/``:

* ``peers.csv`` -- for each (dataset, algorithm, d, alpha, rho), the mean, standard
  deviation and median over the runs of the error :math:`\|\tilde\mu - \mu\|_2` against the
  population mean (the median is empty in rows kept from the sweep before medians were
  recorded);
* ``peers_excess.csv`` -- the same for :math:`\|\tilde\mu - \bar x\|_2`, the distance to
  the empirical mean of the same data (the error that privacy adds);
* ``peers_privacy.csv`` -- the :math:`(\varepsilon, \delta)` that each :math:`\rho`
  gives (:mod:`egmlib.peers.budget`);

and ``benchmarks/peers_faithfulness.py`` writes ``peers_faithfulness.csv``, the
comparison with PLAN's published errors.  :func:`load_peers_results` reads all four,
checks every column and every number, and returns them keyed by the setting, so that a
reader writes ``res.excess_of("GaussianC", "PLAN", d=1024, alpha=2.0, rho=0.125).mean``.

The same sweep, off Algorithm 3's model (chapter 9: real datasets and synthetic families of
:mod:`egmbook.offmodel_data`), writes ``offmodel.csv`` and ``offmodel_excess.csv`` in the
same format; :func:`load_offmodel_results` reads them, keyed by (dataset, algorithm, rho):
``off.excess_of("digits", "Alg3", rho=0.25).median``.  The arms' names are those of
:data:`egmlib.peers.arms.ARMS`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypedDict, overload

from egmlib import validation as _v
from egmlib.peers.arms import ARMS

__all__ = [
    "PEERS_RESULTS_DIR",
    "ALGORITHMS",
    "Summary",
    "PrivacyRow",
    "FaithfulnessRow",
    "PeersResults",
    "OffModelResults",
    "load_peers_results",
    "load_offmodel_results",
]

#: Where the benchmark scripts write their results (``benchmarks/results`` in the repository).
PEERS_RESULTS_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "results"

#: The arms of the sweeps as named in their files, the keys of egmlib.peers.arms.ARMS.
ALGORITHMS = tuple(ARMS)

Key = tuple[str, str, int, float, float]  # dataset, algorithm, d, alpha, rho


@dataclass(frozen=True)
class Summary:
    """One row of ``peers.csv`` or ``peers_excess.csv``: mean and sd over ``runs`` runs."""

    dataset: str
    algorithm: str
    n: int
    d: int
    rho: float
    alpha: float
    runs: int
    mean: float
    sd: float  #: with ddof = 1
    median: float | None  #: None in rows kept from before medians were recorded


@dataclass(frozen=True)
class PrivacyRow:
    """One row of ``peers_privacy.csv``: the (epsilon, delta) of a rho-zCDP release."""

    rho: float
    delta: float
    eps_zcdp_bound: float  #: bound of Bun and Steinke (2016, Prop. 1.3) for any rho-zCDP release
    eps_exact_gaussian: float  #: exact, for one Gaussian mechanism (Balle and Wang 2018)
    noise_multiplier_zcdp: float  #: 1 / sqrt(2 rho)
    noise_multiplier_analytic_at_bound: float  #: Theorem 2's noise at (eps_zcdp_bound, delta)


@dataclass(frozen=True)
class FaithfulnessRow:
    """One row of ``peers_faithfulness.csv``: this project's estimator against PLAN's paper.

    ``extra_mean`` / ``extra_sd`` / ``extra_z`` describe the arm that explains the gap:
    PLAN run at the budgets its published code spent (for PLAN) or the private median
    alone at that accounting (for PLAN-noscale); None for the other algorithms.
    """

    dataset: str
    algorithm: str
    n: int
    d: int
    rho: float
    alpha: float
    runs: int
    ours_mean: float
    ours_sd: float
    published_mean: float
    published_sd: float | None  #: None where the paper gives no spread
    z: float
    extra_mean: float | None
    extra_sd: float | None
    extra_z: float | None


@dataclass(frozen=True)
class PeersResults:
    """The four results files of the peers benchmarks (see the module docstring)."""

    error: Mapping[Key, Summary]
    excess: Mapping[Key, Summary]
    privacy: tuple[PrivacyRow, ...]
    faithfulness: tuple[FaithfulnessRow, ...]

    def error_of(self, dataset: str, algorithm: str, *, d: int, alpha: float,
                 rho: float) -> Summary:
        """The error :math:`\\|\\tilde\\mu - \\mu\\|_2` of one arm in one setting (Aumuller et al. 2024)."""
        return _lookup(self.error, "error", dataset, algorithm, d, alpha, rho)

    def excess_of(self, dataset: str, algorithm: str, *, d: int, alpha: float,
                  rho: float) -> Summary:
        """The excess :math:`\\|\\tilde\\mu - \\bar x\\|_2` of one arm in one setting (Aumuller et al. 2024)."""
        return _lookup(self.excess, "excess", dataset, algorithm, d, alpha, rho)


def _lookup(table: Mapping[Key, Summary], what: str, dataset: Any, algorithm: Any, d: Any,
            alpha: Any, rho: Any) -> Summary:
    dataset = _v.check_choice("dataset", dataset, sorted({k[0] for k in table}))
    algorithm = _v.check_choice("algorithm", algorithm, ALGORITHMS)
    key = (dataset, algorithm, _v.check_count("d", d), _v.check_nonnegative_finite("alpha", alpha),
           _v.check_positive_finite("rho", rho))
    if key not in table:
        raise ValueError(f"d, alpha and rho must name a setting of the {what} table, got "
                         f"d={key[2]}, alpha={key[3]!r} and rho={key[4]!r} for {dataset}")
    return table[key]


@overload
def _number(row: Mapping[str, str], field: str, where: str, *, optional: Literal[False] = False) -> float: ...
@overload
def _number(row: Mapping[str, str], field: str, where: str, *, optional: Literal[True]) -> float | None: ...
def _number(row: Mapping[str, str], field: str, where: str, *, optional: bool = False) -> float | None:
    text = row.get(field)
    if text is None:
        raise ValueError(f"{where}: the column {field!r} is missing")
    if text == "" and optional:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {field} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: {field} must be finite, got {text!r}")
    return value


def _integer(row: Mapping[str, str], field: str, where: str) -> int:
    value = _number(row, field, where)
    if not float(value).is_integer() or value < 1:
        raise ValueError(f"{where}: {field} must be a positive integer, got {row.get(field)!r}")
    return int(value)


def _read(path: Path, columns: tuple[str, ...]) -> list[dict[str, str]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path.name} not found in {path.parent}; run the peers benchmarks "
                                "(python benchmarks/peers_sweep.py, then benchmarks/peers_faithfulness.py)")
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = tuple(reader.fieldnames or ())
        if header != columns:
            raise ValueError(f"{path.name}: the columns must be {list(columns)}, got {list(header)}")
        return list(reader)


class _Setting(TypedDict):
    """The fields that name a setting, shared by Summary and FaithfulnessRow."""

    dataset: str
    algorithm: str
    n: int
    d: int
    rho: float
    alpha: float
    runs: int


def _setting(row: Mapping[str, str], where: str) -> _Setting:
    """The fields that name a setting, shared by Summary and FaithfulnessRow."""
    return _Setting(dataset=row["dataset"], algorithm=row["algorithm"], n=_integer(row, "n", where),
                    d=_integer(row, "d", where), rho=_number(row, "rho", where),
                    alpha=_number(row, "alpha", where), runs=_integer(row, "runs", where))


def _summaries(path: Path, field: str) -> Mapping[Key, Summary]:
    columns = ("dataset", "algorithm", "n", "d", "rho", "alpha", "runs", f"{field}_mean", f"{field}_sd",
               f"{field}_median")
    out: dict[Key, Summary] = {}
    for i, row in enumerate(_read(path, columns), start=2):
        where = f"{path.name} line {i}"
        if row["algorithm"] not in ALGORITHMS:
            raise ValueError(f"{where}: algorithm must be one of {list(ALGORITHMS)}, got {row['algorithm']!r}")
        s = Summary(**_setting(row, where), mean=_number(row, f"{field}_mean", where),
                    sd=_number(row, f"{field}_sd", where),
                    median=_number(row, f"{field}_median", where, optional=True))
        key = (s.dataset, s.algorithm, s.d, s.alpha, s.rho)
        if key in out:
            raise ValueError(f"{where}: a second row for {key}")
        out[key] = s
    return MappingProxyType(out)


def load_peers_results(path: str | Path | None = None) -> PeersResults:
    """Load the results of the peers benchmarks (chapter 8; Aumuller et al. 2024's benchmarks).

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The folder with ``peers.csv``, ``peers_excess.csv``, ``peers_privacy.csv`` and
        ``peers_faithfulness.csv``; defaults to :data:`PEERS_RESULTS_DIR`.

    Returns
    -------
    PeersResults

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    ValueError
        If a file has other columns, a value is not a number where one belongs, or a
        setting appears twice (the message names the file and the line).
    """
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    folder = Path(path) if path is not None else PEERS_RESULTS_DIR
    error = _summaries(folder / "peers.csv", "error")
    excess = _summaries(folder / "peers_excess.csv", "excess")
    if set(error) != set(excess):
        raise ValueError("peers.csv and peers_excess.csv must hold the same settings")
    privacy = []
    cols = tuple(f.name for f in PrivacyRow.__dataclass_fields__.values())
    for i, row in enumerate(_read(folder / "peers_privacy.csv", cols), start=2):
        where = f"peers_privacy.csv line {i}"
        privacy.append(PrivacyRow(**{c: _number(row, c, where) for c in cols}))
    faith = []
    fcols = ("dataset", "algorithm", "n", "d", "rho", "alpha", "runs", "ours_mean", "ours_sd",
             "published_mean", "published_sd", "z", "agrees_within_spread",
             "plan_published_accounting_mean", "median_published_accounting_mean",
             "published_accounting_sd", "z_published_accounting")
    for i, row in enumerate(_read(folder / "peers_faithfulness.csv", fcols), start=2):
        where = f"peers_faithfulness.csv line {i}"
        plan_x = _number(row, "plan_published_accounting_mean", where, optional=True)
        median_x = _number(row, "median_published_accounting_mean", where, optional=True)
        faith.append(FaithfulnessRow(
            **_setting(row, where), ours_mean=_number(row, "ours_mean", where),
            ours_sd=_number(row, "ours_sd", where),
            published_mean=_number(row, "published_mean", where),
            published_sd=_number(row, "published_sd", where, optional=True),
            z=_number(row, "z", where), extra_mean=plan_x if plan_x is not None else median_x,
            extra_sd=_number(row, "published_accounting_sd", where, optional=True),
            extra_z=_number(row, "z_published_accounting", where, optional=True)))
    return PeersResults(error=error, excess=excess, privacy=tuple(privacy), faithfulness=tuple(faith))


OffKey = tuple[str, str, float]  # dataset, algorithm, rho


@dataclass(frozen=True)
class OffModelResults:
    """The off-model sweep's two summary files (chapter 9; see the module docstring)."""

    error: Mapping[OffKey, Summary]
    excess: Mapping[OffKey, Summary]

    @property
    def datasets(self) -> tuple[str, ...]:
        """The datasets and families present, in the order of the files."""
        return tuple(dict.fromkeys(k[0] for k in self.excess))

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The arms present, in the order of egmlib.peers.arms.ARMS."""
        have = {k[1] for k in self.excess}
        return tuple(a for a in ALGORITHMS if a in have)

    def error_of(self, dataset: str, algorithm: str, *, rho: float) -> Summary:
        """Error :math:`\\|\\tilde\\mu - \\mu\\|_2` to the reference mean (population, or empirical for real data)."""
        return _off_lookup(self.error, "error", dataset, algorithm, rho)

    def excess_of(self, dataset: str, algorithm: str, *, rho: float) -> Summary:
        """Error added by privacy, :math:`\\|\\tilde\\mu - \\bar x\\|_2`, over the runs of one arm on one dataset."""
        return _off_lookup(self.excess, "excess", dataset, algorithm, rho)


def _off_lookup(table: Mapping[OffKey, Summary], what: str, dataset: Any, algorithm: Any, rho: Any) -> Summary:
    dataset = _v.check_choice("dataset", dataset, sorted({k[0] for k in table}))
    algorithm = _v.check_choice("algorithm", algorithm, ALGORITHMS)
    key = (dataset, algorithm, _v.check_positive_finite("rho", rho))
    if key not in table:
        raise ValueError(f"algorithm and rho must name a row of the off-model {what} table, got "
                         f"{algorithm!r} and rho={key[2]!r} for {dataset}")
    return table[key]


def load_offmodel_results(path: str | Path | None = None) -> OffModelResults:
    """Load the off-model sweep's results (chapter 9), ``offmodel.csv`` and ``offmodel_excess.csv``.

    Same checks as :func:`load_peers_results`; keyed by (dataset, algorithm, rho).

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    ValueError
        If a file has other columns, a value is not a number, a row appears twice, or the
        two files cover different rows.
    """
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    folder = Path(path) if path is not None else PEERS_RESULTS_DIR
    tables = []
    for name, field in (("offmodel.csv", "error"), ("offmodel_excess.csv", "excess")):
        out: dict[OffKey, Summary] = {}
        for key, s in _summaries(folder / name, field).items():
            out[(key[0], key[1], key[4])] = s
        tables.append(MappingProxyType(out))
    if set(tables[0]) != set(tables[1]):
        raise ValueError("offmodel.csv and offmodel_excess.csv must hold the same rows")
    return OffModelResults(error=tables[0], excess=tables[1])
