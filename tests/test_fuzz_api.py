"""Every public function of egmlib called with bad arguments (issue 10, item 1).

The test enumerates egmlib's modules, those of its subpackages included (``pkgutil``), and
every callable in each module's ``__all__`` -- functions, and the constructor and methods of classes that are not result
types -- so a module added later is fuzzed without editing this file, as long as its
parameter names are in the vocabulary below (``VALID``); a new name fails
``test_every_public_parameter_has_a_valid_example`` until it is added.

For one valid call per function, each parameter in turn is replaced by bad values:

* wrong **types** -- a bool, a string, ``None`` (unless the parameter is optional), a
  complex number, an arbitrary object, and for arrays lists of strings, bools or complex
  numbers of the right length: the call must raise ``TypeError`` naming the parameter;
* wrong **values** -- NaN, +-inf, -1, 0, 1e308 (whose results overflow), the subnormal
  5e-324, Python ints beyond the float range (+-10**400), and for arrays empty, ragged,
  3-D, wrong-length vectors, vectors with a NaN, inf, negative or zero entry, all zeros,
  [1e308] * d, [5e-324] * d, a 10**400 entry: the call must raise ``ValueError`` naming the parameter
  (for an overflow: naming it among the inputs to rescale), or -- where the value is legal,
  e.g. 0 for a radius -- return a result with no NaN and no infinity except the documented
  ones (``DOCUMENTED_INFINITIES``).

Every call runs under a guard against hangs: it is stopped after ``HANG_LIMIT`` seconds of
CPU time (60 unless the environment's ``EGM_TEST_HANG_LIMIT`` says otherwise), far above
what any call needs, so that a busy machine cannot fail the test; how long the calls take
is measured by ``benchmarks/fuzz_call_times.py`` (target: 1 s of CPU per call).  The book
layer's public callables (egmbook) are fuzzed too, named ``egmbook.<module>.<name>``.

``python tests/test_fuzz_api.py`` prints the counts (calls, exceptions by type).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import itertools
import math
import os
import pkgutil
import signal
import threading
import types
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sympy as sp

import egmlib
from egmlib import symbolic

# --------------------------------------------------------------------------------------
# the public callables
# --------------------------------------------------------------------------------------


def _is_result_type(obj: Any) -> bool:
    return dataclasses.is_dataclass(obj) or (isinstance(obj, type) and issubclass(obj, tuple)
                                             and hasattr(obj, "_fields"))


@functools.lru_cache(maxsize=1)
def public_modules() -> tuple[str, ...]:
    """Every public module of egmlib, those of its subpackages included, by its dotted name
    below ``egmlib`` (``"calibration"``, ``"peers"``, ``"peers.plan"``).  A module is public
    when no part of its name starts with an underscore."""
    out = []
    for info in pkgutil.walk_packages(egmlib.__path__, prefix="egmlib."):
        rel = info.name.removeprefix("egmlib.")
        if not any(part.startswith("_") for part in rel.split(".")):
            out.append(rel)
    return tuple(sorted(out))


@functools.lru_cache(maxsize=1)
def book_modules() -> tuple[str, ...]:
    """Every public module of the book layer egmbook, those of its subpackages included (the
    chapters' findings), as ``"egmbook.<name>"`` or ``"egmbook.<package>.<name>"``."""
    import egmbook

    return tuple(sorted(info.name for info in pkgutil.walk_packages(egmbook.__path__, prefix="egmbook.")
                        if not any(part.startswith("_") for part in info.name.split(".")[1:])))


def _import(rel: str) -> Any:
    """The module of a name from :func:`public_modules` or :func:`book_modules`."""
    return importlib.import_module(rel if rel.startswith("egmbook.") else f"egmlib.{rel}")


#: Public modules whose callables are not fuzzed here, and why.
NOT_FUZZED = {
    "validation": "the validators are the checks themselves, called as check_x(name, value) with the "
                  "argument's name first; tests/test_validation.py tests every rule of each",
}


def public_callables(*, book: bool = False) -> list[tuple[str, Callable[..., Any]]]:
    """(``module.name``, callable) for every function in every public module's ``__all__``,
    and for the constructor and public methods of every class that is not a result type:
    egmlib's, and with ``book=True`` also egmbook's (named ``egmbook.<module>.<name>``).
    The modules of :data:`NOT_FUZZED` are left out."""
    out = []
    for rel in public_modules() + (book_modules() if book else ()):
        if rel in NOT_FUZZED:
            continue
        mod = _import(rel)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                if _is_result_type(obj) or issubclass(obj, BaseException):
                    continue  # built by egmlib from validated inputs, not called by readers
                out.append((f"{rel}.{name}", obj))
                for meth, fn in vars(obj).items():
                    if not meth.startswith("_") and inspect.isfunction(fn):
                        out.append((f"{rel}.{name}.{meth}", fn))
            elif inspect.isfunction(obj):
                out.append((f"{rel}.{name}", obj))
    return out


def split_qualname(qualname: str) -> tuple[str, list[str]]:
    """(module, [name] or [class, method]) of a name from :func:`public_callables`."""
    parts = qualname.split(".")
    modules = set(public_modules()) | set(book_modules())
    for i in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:i]) in modules:
            return ".".join(parts[:i]), parts[i:]
    raise ValueError(f"{qualname} names no public module of egmlib or egmbook")


def _params(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]


# --------------------------------------------------------------------------------------
# valid calls: one vocabulary, a few per-function overrides
# --------------------------------------------------------------------------------------
D = 3
SIGMA = [0.5, 0.3, 0.2]
P_GRID = [0.1, 0.2, 0.3, 0.4, 0.5]


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _algorithm3_on_sigma(X: Any, *, rng: np.random.Generator) -> Any:
    """Algorithm 3 with every argument but the data and the generator fixed (a mechanism
    for :func:`egmbook.privacy_audit.run_releases`)."""
    return importlib.import_module("egmlib.mechanisms").algorithm3(
        X, sigma=SIGMA, mu_hat=[0.0, 0.0, 0.0], eps=1.0, delta=1e-6, rng=rng)


def _immutable(value: Any, depth: int = 0) -> bool:
    """Whether nothing in ``value`` can be changed in place: numbers, strings, read-only
    arrays, and tuples, read-only mappings and frozen dataclasses of such values."""
    if depth > 12:
        return False
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.number, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype != object and not value.flags.writeable
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return bool(type(value).__dataclass_params__.frozen) and all(
            _immutable(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    if isinstance(value, tuple):
        return all(_immutable(v, depth + 1) for v in value)
    if isinstance(value, (types.MappingProxyType, frozenset)):
        items = value.items() if isinstance(value, types.MappingProxyType) else ((v, v) for v in value)
        return all(_immutable(k, depth + 1) and _immutable(v, depth + 1) for k, v in items)
    return False


def _shared(load: Callable[[], Any]) -> Callable[[], Any]:
    """A valid example that is costly to build (a stored result parsed from disk, a summary
    of one): built once per test process.  Every call gets it as built when nothing in it can
    change (:func:`_immutable`), else its own deep copy, equal to a fresh build, so that no
    call sees what another did to it.  (The bad-value cases rebuild their valid arguments for
    every case: parsing chapter 7's stored results each time was half the file's time.)"""
    built: list[Any] = []

    def example() -> Any:
        if not built:
            value = load()
            built.append((value, _immutable(value)))
        value, frozen = built[0]
        return value if frozen else copy.deepcopy(value)

    return example


#: A valid example per parameter name: the library's vocabulary.  Callables build fresh
#: objects (random generators) per call.
VALID: dict[str, Any] = {
    "eps": 1.0, "delta": 1e-6, "sensitivity": 1.0, "sigma_opt": 2.0, "rho": 0.5, "rho_notes": 1.0,
    "sigma": SIGMA, "sigma_data": SIGMA, "sigma_mech": SIGMA, "Delta": [1.0, 2.0, 3.0],
    "noise_std": [1.0, 2.0, 0.5], "b": [0.6, 0.0, 0.8], "mu_hat": [0.0, 0.1, -0.1],
    "offset": [0.1, 0.0, -0.1], "X": np.random.default_rng(1).normal(size=(6, D)),
    "Z": np.random.default_rng(2).normal(size=(200, D)), "C": 1.5, "t": 0.5, "p": 0.01,
    "p_clip": 0.05, "q": 0.3, "n": 100, "d": 4, "alpha": 1.0, "method": "alg3", "noise": True,
    "tilt": True, "rng": _rng, "chunk_rows": 2, "chunk_elems": 12, "reps": 2, "x": 1.0,
    "w": [1.0, 0.5, 0.25], "k": 3, "r": 2, "kind": "lemma4.1", "as_printed": True,
    "max_explicit": 3, "axis": 0, "e2": 0.5, "m2": 0.01, "far": 10.0, "n_draws": 1000,
    "n_mc": 10**4, "n_outputs": 10, "return_losses": False, "eps_grid": [0.5, 1.0],
    "y": [[0.1, 0.2, 0.3], [0.0, 0.0, 0.0]], "mean": [0.0, 0.0, 0.0], "mean_prime": [1.0, 0.0, 0.0],
    "std": [1.0, 1.0, 2.0], "nodes": 8, "backend": "native", "d_values": (10,), "n_values": (100,),
    "alphas": (1.0,), "path": None, "mechanism": None, "orders": [2, 3], "point": None,
    "problem": lambda: symbolic.lemma41_problem(2), "H": lambda: sp.Matrix([[0, 1, 1], [1, 2, 0], [1, 0, 3]]),
    "a": [1, 2], "c": [3, 4], "s": 1,
    "sigmas": {"s": SIGMA}, "runs": [("s", "base", 0.5, None)],
    # egmbook.claims and egmbook.display: how the book states checks and shows tables
    "ok": True, "claim": "Lemma 4.1", "label": "fuzz-check", "outcome": "confirms",
    "statement": "b minimises the noise.", "evidence": "", "erratum": "",
    "directory": lambda: str(Path(__file__).resolve().parent.parent / "chapters"),
    "data": {"d": [10, 100], "ratio": [1.5, 2.5]}, "formats": None, "caption": "", "head": None,
    # issue 27: checks as tags, heat maps, figures with their phone rendition, glued texts
    # (text: glue_text's number written for a reader, and math_html's text)
    "tag": False, "heat": ["ratio"], "centre": 1.0, "saturate": 4.0, "key": "", "blue_above": True,
    "fig": lambda: _small_figure(), "text": "4.6 × 10⁶",
    # beyond the report: composition, the improvement's margin, the report's quantile procedure
    "eps0": 0.5, "m": 0.5, "laplace_eps": 0.5, "share": 0.99, "power": 1,
    "tail": lambda: (lambda c: math.exp(-c)), "max_steps": 200, "value": 1.25,
    "max_log2_denominator": 30, "rtol": 1e-11,
    # gchisq's switch of its checks; where a script's result goes
    "hump_analysis": True, "check_contour": True, "repairs": True, "full_run": True,
    # Algorithm 3 among its peers (egmlib.peers): universes, budgets, private steps
    "lower": -10.0, "upper": 10.0, "beta": 0.1, "shares": {"centre": 0.25, "noise": 0.75},
    "rank": 3.0, "steps": 5, "rounds": 2, "rotation": None, "floor": 1e-6, "centre_share": 0.25,
    "scale_share": 0.125, "prior_centre": [0.0, 0.0, 0.0], "prior_radius": 10.0,
    "rho_threshold": 0.1, "values": [0.3, -1.2, 0.5, 2.0, 0.1], "dataset": "GaussianA",
    "setting": lambda: importlib.import_module("egmbook.gaussian_benchmarks").settings("GaussianA")[0],
    "Y": np.random.default_rng(3).normal(size=(5, 4)),
    # the robust Algorithm 3 pipeline's radius step and CoinPress's clipping rule
    "norms": [0.5, 1.5, 2.5], "radii": [1.0, 2.0, 3.0], "target": 1.0, "C0": 1.0, "C_max": 8.0,
    "radius_top": 4.0,
    "grid": 1.5, "clip_rule": "paper", "rho_noise": 0.5,
    "log_scales": lambda: importlib.import_module("egmlib.peers.scales").coinpress_log_scales(
        np.random.default_rng(6).normal(size=(40, 5)), rho=1.0, lower=-10.0, upper=10.0,
        rng=np.random.default_rng(7), floor=1e-6),
    # chapter 7's stored results, chapter 5b's threshold, the off-model datasets
    "res": _shared(lambda: importlib.import_module("egmbook.beyond_report").load_beyond_report()), "x0": 2.0,
    "name": "wine", "seed": 0,
    # chapter 7b's black-box audit: counts, releases, controls (small trial counts: 1 s per call)
    "result": lambda: _algorithm3_on_sigma(np.random.default_rng(1).normal(size=(6, D)), rng=_rng()),
    "tp": 90, "fp": 10, "n_pos": 100, "n_neg": 100, "both_directions": True,
    "Y_prime": np.random.default_rng(4).normal(size=(5, 4)), "deltas": [1e-6, 0.1], "n_thresholds": 20,
    "factor": 0.9, "trials": 8, "factors": (("Algorithm 3", 1.0),), "pipeline": None, "mu": 2.0,
    "sigma_claim": 1.0,
    # explicit precomputations (issue 25: no identity-keyed caches) and the rounding bound
    "presorted": None, "rotated": None, "rows": None, "cols": None,
    # chapter 7b's attacked pairs and the cancelling-distance control
    "X_prime": np.random.default_rng(5).normal(size=(6, D)), "moved_to": 15.0, "move": 1e-4, "R": 2.0,
    "statistics": ("linear", "coordinates"),
    "audit_setting": lambda: _tiny_audit_setting(),
    # chapter 7b's audit of ESM with power (four runs per dataset: a fraction of a second)
    "power_setting": lambda: _tiny_power_setting(), "start": 0, "stop": 2, "esm": None, "noise_share": 0.75,
    "mu_final": None, "block": 2, "progress": None,
    "parts": lambda: [importlib.import_module("egmbook.power_audit").power_releases(_tiny_power_setting(), start=a,
                                                                                    stop=a + 2) for a in (0, 2)],
    "releases": lambda: importlib.import_module("egmbook.power_audit").power_releases(
        _tiny_power_setting(), start=0, stop=4),
    "audit": lambda: importlib.import_module("egmbook.book_audit").load_book_audit(),
    "rec": lambda: importlib.import_module("egmbook.book_audit").to_json(
        importlib.import_module("egmbook.book_audit").load_book_audit())["mechanisms"][0],
    # the sweeps' engine (egmbook.sweep) and the scripts' command lines (egmbook.cli)
    "peers": _shared(lambda: importlib.import_module("egmbook.peer_results").load_peers_results()),
    "offmodel": _shared(lambda: importlib.import_module("egmbook.peer_results").load_offmodel_results()),
    "stat": "median",
    "sweep": "gaussian", "arm": "Alg3", "reference": False, "doc": "A script.\n\nRun:  python benchmarks/x.py",
    "task": lambda: importlib.import_module("egmbook.sweep").Task("gaussian", "GaussianA", 0, 0, ("empirical",),
                                                                   (1.0,)),
    # ESM's predictions and scale step (egmlib.peers.path_errors, algorithm3_robust, scales)
    "coordinates": 4, "variances": [1.0, 0.5, 0.25], "rho_centre": 0.1, "mismatch": 1.0, "scales_first": False,
    "scales": lambda: importlib.import_module("egmlib.peers.scales").paired_scales(
        np.random.default_rng(6).normal(size=(40, 3)), rho=1.0, lower=-10.0, upper=10.0, rng=np.random.default_rng(7)),
    "finite": False, "band": [0.5, 1.0], "ticks": ["a", "b"], "ylim": (0.01, 30.0),
    "ratios": {"Alg3": [0.5, 2.0]}, "ax": lambda: _small_figure().axes[0],
    "sample": lambda: importlib.import_module("egmbook.offmodel_data").load("wine"),
    "pairs": [(0.5, 1.0), (2.0, 0.9)],
    # the coverage page: chapter labels from a parsed _toc.yml, the linked item table
    "toc": {"parts": [{"numbered": True,
                       "chapters": [{"file": "chapters/02_a", "sections": [{"file": "chapters/02b"}]}]},
                      {"chapters": [{"file": "chapters/appendix_a_x"}]}]},
    "html_text": "<table><tr><td>@@0@@</td></tr></table>", "plain": "ch. 1 \u2713",
    "links": {"@@0@@": ("02_a.html#check-ch1-check-x", "ch. 1 \u2713")},
    "items": [{"item": "Lemma 4.1", "section": "4"}, {"item": "Theorem 1", "section": "3"}],
    "records": [{"claim": "Lemma 4.1", "notebook": "02_a", "label": "ch1-check-x", "outcome": "confirms"}],
    "numbers": {"02_a": "ch. 1"},
    # chapters 3-5's findings at small sizes (a few hundred draws; one exponent of Figure 2)
    "draws": 400, "step": 1e-3, "digits": 15, "order": 2,
    "published": lambda: _figure2_at_alpha_one(), "exact": lambda: _figure2_at_alpha_one(),
    "dense": lambda: _figure2_at_alpha_one(),
    "scan": lambda: __import__("json").loads((Path(__file__).resolve().parent.parent / "data"
                                              / "schur_threshold_scan.json").read_text(encoding="utf-8")),
    "certified": {2: "9 of 9"}, "matrix": lambda: sp.Matrix([[0, 1, 1], [1, 2, 0], [1, 0, 3]]),
    # chapter 1's three-lens review (the errata page's ranks: egmbook.claims.errata_backing's records)
    "lens": "sources", "errata_ranks": [{"rank": "Results", "anchors": ["err-a"]}], "page_markdown": "",
}


def _figure2_at_alpha_one() -> Any:
    """The published Figure 2 at one exponent (alpha = 1: every d and n), a small Figure2Table."""
    experiments = importlib.import_module("egmbook.experiments")
    published = experiments.load_published_figure2()
    keep = published.alpha == 1.0
    return experiments.Figure2Table(**{f.name: getattr(published, f.name)[keep] for f in dataclasses.fields(published)})


def _small_figure() -> Any:
    """A figure of two panels, not registered with pyplot (nothing to close)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.76, 3.0), layout="constrained")
    for ax in fig.subplots(1, 2):
        ax.plot([1, 2, 3], [1, 4, 9])
    return fig


def _tiny_audit_setting() -> Any:
    """Chapter 7b's audit at toy sizes (a valid call that runs in a fraction of a second)."""
    return importlib.import_module("egmbook.book_audit").AuditSetting(
        d=3, n=10, trials=8, deltas=(0.1,), pipeline_n=30, pipeline_trials=8, constant_n=30, constant_d=2,
        far_n=30, far_d=2, pair_trials=8)


def _tiny_power_setting() -> Any:
    """Chapter 7b's audit of ESM at four runs per dataset."""
    return importlib.import_module("egmbook.power_audit").PowerSetting(trials=4, saved=2, deltas=(0.1,))


@functools.cache
def _scratch() -> str:
    """A folder for the files of the fuzzed sweep (one per test process)."""
    import tempfile

    return tempfile.mkdtemp(prefix="egm-fuzz-sweep-")


#: Per-function valid values where the vocabulary's example does not fit.
#: A fresh check label for every call: egmbook.claims.check refuses a label reused for another claim.
_CHECK_LABELS = itertools.count()
#: Where save_figure writes during the test (removed at exit).
_FUZZ_DIR = __import__("tempfile").TemporaryDirectory(prefix="fuzz-figures-")

OVERRIDES: dict[str, dict[str, Any]] = {
    "egmbook.claims.check": {"label": lambda: f"fuzz-check-{next(_CHECK_LABELS)}"},
    # a labelled table is numbered in its caption: a label needs one
    "egmbook.display.table": {"label": "tab-fuzz", "caption": "A table of the fuzz test"},
    "egmbook.claims.readable": {"value": 0.0123, "digits": 2, "unit": " %"},
    "egmbook.claims.checks_by_section": {
        "records": [{"claim": "Lemma 2.1", "outcome": "confirms"}],
        "items": [{"item": "Lemma 2.1", "section": "2.1"}]},
    "egmbook.claims.errata_backing": {
        "records": [{"label": "ch2-check-a", "outcome": "corrects", "erratum": "err-a"}],
        "errata": "## Results\n(err-a)=\n## Cosmetic\n(err-b)=\n"},
    "calibration.sigma_classical": {"eps": 0.5},
    "calibration.eps_from_sigma": {"sigma": 3.0},
    "calibration.privacy_profile": {"sigma": [1.0, 2.0]},
    "calibration.log_privacy_profile": {"sigma": [1.0, 2.0]},
    "bounds.bernstein_tail_bound": {"sigma": [1.0] * 72, "t": 1.5},
    "scaling.algorithm3_noise_error": {"b": [1.0, 2.0, np.inf]},
    "scaling.algorithm3_constraint": {"b": [1.0, 2.0, 3.0]},
    "scaling.egm_error": {"b": [0.6, 0.8, 0.0], "Delta": [1.0, 2.0, 0.0]},
    "egmbook.clipping_error.noise_error_at_radius": {},
    "egmbook.clipping_error.expected_error": {"noise": 1.0},
    "egmbook.clipping_error.optimal_radius": {
        "error": lambda: (lambda C: (C - 1.0) ** 2 + 0.5), "C_lo": 1e-2, "C_hi": 1e2, "per_decade": 4,
        "rtol": 1e-5},
    "egmbook.error_simulation.simulate_errors": {"n": 8},
    "egmbook.error_simulation.mean_ci": {"x": [1.0, 2.0, 4.0]},
    "egmbook.privacy_check.privacy_check": {"n": 20},
    "egmbook.neighbours.worst_case_pair": {"n": 5},
    "egmbook.privacy_check.gaussian_loss_delta": {"Delta": 0.5},
    "mechanisms.elliptical_gaussian_mechanism": {"b": [0.6, 0.48, 0.64]},
    "symbolic.arrowhead_matrix": {}, "symbolic.arrowhead_det_closed_form": {},
    "symbolic.leading_principal_minors": {},
    "symbolic.lemma41_minor_closed_form": {"sigma": [1, 2, 3]},
    "symbolic.theorem3_minor_closed_form": {"Delta": [1, 2, 3], "sigma_opt": 1},
    "symbolic.report_appendix_a_matrix": {"d": 3},
    "gchisq.WeightedChiSquare.isf": {"p": [0.01, 0.5]},
    "gchisq.isf": {"p": [0.01, 0.5]},
    "gchisq.sf": {"x": [0.5, 2.0]},
    "composition.hockey_stick": {"p": [0.75, 0.25], "q": [0.25, 0.75]},
    "composition.laplace_gaussian_delta": {"sigma": 4.0},
    # PLAN's own budget splits are the default; a caller's split must name PLAN's steps
    "egmbook.display.glue_values": {"values": {"a": 1.5, "n": 3}, "digits": 2, "prefix": "fuzz-"},
    "egmbook.display.heatmap": {"digits": 2, "label": "tab-fuzz-heat", "caption": "A heat map of the fuzz test"},
    "egmbook.display.glue_text": {"name": "fuzz-text"},
    "egmbook.display.save_figure": {"path": lambda: str(Path(_FUZZ_DIR.name) / "figure.png")},
    "egmbook.cli.result_path": {"path": lambda: str(Path(_FUZZ_DIR.name) / "result.txt")},
    "egmbook.beyond_report.centre_improvements": {"c": 0.1},
    # written to the fuzz run's own folder, never over the committed results
    "egmbook.offmodel_results.save_diagnoses": {
        "diagnoses": lambda: list(importlib.import_module("egmbook.offmodel_results").load_diagnoses().values())[:1],
        "path": lambda: str(Path(_FUZZ_DIR.name) / "diagnoses.json")},
    # only the synthetic families have a law
    "egmbook.offmodel_data.outside_probability": {"name": "t3"},
    # the audit's alpha is a confidence level's complement, not the Zipf exponent
    **{f"egmbook.privacy_audit.{f}": {"alpha": 0.05} for f in (
        "clopper_pearson", "eps_lower_bound", "distinguishing_attack", "expected_eps_lower_bound",
        "trials_needed", "black_box_audit", "pipeline_audit")},
    "egmbook.privacy_audit.pair_audit": {"alpha": 0.05, "pipeline": lambda: importlib.import_module(
        "egmlib.peers.arms").ARMS["Alg3"]},
    "egmbook.privacy_audit.cancelling_step_sum": {"c": [0.0, 0.0, 0.0]},
    "clipping.clipped_sum": {"norms": None},
    "egmbook.privacy_audit.with_cancelling_distances": {"pipeline": lambda: importlib.import_module(
        "egmlib.peers.arms").ARMS["Alg3"]},

    "egmbook.privacy_audit.run_releases": {"mechanism": lambda: _algorithm3_on_sigma},
    "egmbook.power_audit.power_to_json": {"audit": lambda: importlib.import_module(
        "egmbook.power_audit").load_power_audit()},
    "egmbook.improvement_margin.majorizes": {"a": [0.6, 0.3, 0.1], "b": [0.4, 0.3, 0.3]},
    # the smallest sweep: one arm, two runs, one case, one budget, in a scratch folder of the test
    "egmbook.sweep.run_sweep": {"arms": ["empirical"], "runs": 2, "jobs": 1, "results": lambda: _scratch(),
                                "datasets": ["GaussianA"], "max_d": 16, "rhos": [1.0], "progress": False,
                                "scheduler": None, "redo": None},
    "egmbook.findings.offmodel.diagnose": {"runs": 2},
    "egmbook.findings.offmodel.miss_kinds": {"misses": _shared(lambda: list(importlib.import_module(
        "egmbook.offmodel_results").load_misses()))},
    "egmbook.findings.offmodel.calibrate_paths": {"runs": _shared(lambda: list(importlib.import_module(
        "egmbook.offmodel_results").load_path_runs()[:60]))},
    "egmbook.findings.offmodel.path_runs": {"rows": lambda: [{"alpha": 0.75, "d": 3, "width": 50.0, "n": 40, "rho": 1.0,
                                                              "run": 0, "half": 50.0, "whole iome": 1.0,
                                                              "whole centred-iome": 1.0}]},
    "egmbook.findings.offmodel.goals_by_kind": {"g": _shared(lambda: importlib.import_module(
        "egmbook.findings.offmodel").goals(importlib.import_module("egmbook.peer_results").load_peers_results(),
                                           importlib.import_module("egmbook.peer_results").load_offmodel_results()))},
    "egmbook.offmodel_results.write_path_runs": {
        "runs": _shared(lambda: list(importlib.import_module("egmbook.offmodel_results").load_path_runs()[:3])),
        "path": lambda: str(Path(_FUZZ_DIR.name) / "runs.csv")},
    "egmbook.offmodel_results.load_path_runs": {"path": None},
    "egmbook.offmodel_results.write_scale_rows": {
        "rows": _shared(lambda: list(importlib.import_module("egmbook.offmodel_results").load_scale_rows())),
        "path": lambda: str(Path(_FUZZ_DIR.name) / "scale.csv")},
    "egmbook.offmodel_results.load_scale_rows": {"path": None},
    "egmbook.offmodel_results.write_radius_rows": {
        "rows": _shared(lambda: list(importlib.import_module("egmbook.offmodel_results").load_radius_rows())),
        "path": lambda: str(Path(_FUZZ_DIR.name) / "radius.csv")},
    "egmbook.offmodel_results.load_radius_rows": {"path": None},
    "egmbook.offmodel_results.load_diagnoses": {"path": None},
    "egmbook.display.ratio_panel": {"reference": "IOME"},
    # a labelled table is numbered in its caption: a label needs one
    "egmbook.coverage_page.item_table": {"label": "tab-fuzz-items", "caption": "The report's items in the fuzz test"},
    "egmbook.findings.report_review.list_table": {"label": "tab-fuzz-review"},
    "egmbook.findings.clipping_choice.realistic_centre": {"draws": 20},
    # chapter 7b's audit of ESM: the stored audit, not the book audit of the vocabulary
    **{f"egmbook.power_audit.{f}": {"audit": lambda: importlib.import_module("egmbook.power_audit").load_power_audit()}
       for f in ("power_figure", "power_summary", "power_table")},
    "egmbook.findings.offmodel.calibration_cells": {"quick": True},
    "egmbook.findings.offmodel.calibration_rows": {"alpha": 0.75, "d": 8, "width": 50.0, "n": 20, "rho": 0.25,
                                                   "run": 0},
    "egmbook.findings.offmodel.radius_calibration": {"rows": _shared(lambda: list(importlib.import_module(
        "egmbook.offmodel_results").load_radius_rows()))},
    "peers.path_errors.iome_error": {"shares": None},
    "peers.path_errors.clipped_excess": {"variances": [1.0, 2.0, 0.5], "radius": 1.5},
    "peers.algorithm3_robust.iome_shares": {"n": 300, "rho_iome": None},
    "peers.plan.plan_mean": {"shares": None},
    "peers.plan.plan_noscale_mean": {"shares": None},
    "peers.plan.plan_oracle_mean": {"shares": None},
    **{f"peers.iome.{f}": {"shares": {"centre": 0.3, "threshold": 0.01, "noise": 0.69}}
       for f in ("iome_mean", "iome_clip_count")},
    "peers.iome.rotate_data": {"rotation": lambda: importlib.import_module("egmlib.peers.hadamard").random_hadamard(
        D, rng=np.random.default_rng(0))},
}

#: Functions whose results may hold infinities by design (each documented in its docstring).
DOCUMENTED_INFINITIES = {
    "scaling.algorithm3_scaling": "b_j = inf where sigma_j = 0 (Lemma 4.1's limit)",
    "calibration.log_privacy_profile": "log delta = -inf at sigma = inf",
    "egmbook.error_simulation.mean_ci": "standard error and half-width inf for one repetition",
    "mechanisms.algorithm3": "result.b = inf where sigma_j = 0",
    "egmbook.privacy_audit.ALGORITHM3": "mechanisms.algorithm3 itself: result.b = inf where sigma_j = 0",
    "gchisq.logsf": "log 0 = -inf beyond the support", "gchisq.logcdf": "log 0 = -inf below 0",
    "gchisq.WeightedChiSquare.logsf": "log 0", "gchisq.WeightedChiSquare.logcdf": "log 0",
    "egmbook.offmodel_results.load_radius_rows": "f = inf names PLAN's split, which bounds no margin",
    "egmbook.findings.offmodel.radius_calibration": "its shares hold inf, PLAN's split",
    "egmbook.report_quantile_procedure.reproducing_path": "max_required_error = inf when no run returns value",
    "egmbook.findings.offmodel.resolution_threshold": "inf when buying scales in every cell costs least",
    "egmbook.findings.offmodel.calibrate_paths": "resolution = inf when buying scales in every cell costs least",
    **{f"egmbook.power_audit.{f}": "rho_true and the true epsilon are inf for the controls without a finite rho"
       for f in ("audit_rows", "audit_from_releases", "run_power_audit", "load_power_audit")},
}


def _resolve(value: Any) -> Any:
    return value() if callable(value) and not isinstance(value, type) else value


def valid_kwargs(qualname: str, fn: Callable[..., Any]) -> dict[str, Any]:
    over = OVERRIDES.get(qualname, {})
    out = {}
    for p in _params(fn):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in over:
            out[p.name] = over[p.name]
        elif p.name in VALID:
            out[p.name] = VALID[p.name]
        else:
            raise KeyError(f"{qualname}: no valid example for parameter {p.name!r}: add it to VALID")
    return {k: _resolve(v) for k, v in out.items()}


def _instance_and_method(qualname: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """The callable to call: the function itself, or a bound method of a valid instance."""
    module, names = split_qualname(qualname)
    if len(names) == 2:  # module.Class.method
        cls = getattr(_import(module), names[0])
        inst = cls(**valid_kwargs(f"{module}.{names[0]}", cls))
        return getattr(inst, names[1])
    return fn


# --------------------------------------------------------------------------------------
# bad values by the kind of the valid example
# --------------------------------------------------------------------------------------
class _Opaque:
    """An object that is not array-like, not a number, not a mapping."""

    def __repr__(self) -> str:
        return "<opaque>"


def _kind(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, np.random.Generator):
        return "rng"
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, (sp.Basic, sp.MatrixBase, symbolic.LagrangeProblem)):
        return "symbolic"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "records"  # rows of a table (egmbook.claims): no numeric bad values apply
    if isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
        return "records"  # typed records (the findings' diagnoses): no numeric bad values apply
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return "names"  # a sequence of choices (the audit's statistics, a sweep's arms or datasets)
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value, dtype=object)
        if arr.dtype == object and any(isinstance(v, tuple) for v in value):
            return "runs"
        return {1: "vector", 2: "matrix"}.get(np.ndim(value), "array")
    if value is None:
        return "optional"
    return "other"


def bad_values(value: Any, param: inspect.Parameter) -> Iterator[tuple[str, str, Any]]:
    """(label, expected category 'type' or 'value', bad value) for one parameter."""
    kind = _kind(value)
    optional = param.default is None
    if kind in ("int", "float"):
        yield from [("bool", "type", True), ("str", "type", "1.0"), ("complex", "type", 1 + 1j),
                    ("object", "type", _Opaque()), ("list of strings", "type", ["1.0"]),
                    ("timedelta", "type", np.timedelta64(1, "s"))]
        if not optional:
            yield ("None", "type", None)
        yield from [("nan", "value", math.nan), ("inf", "value", math.inf), ("-inf", "value", -math.inf),
                    ("negative", "value", -1.0), ("zero", "value", 0.0), ("huge", "value", 1e308),
                    ("subnormal", "value", 5e-324), ("huge int", "value", 10**400),
                    ("negative huge int", "value", -(10**400))]
        if kind == "int":
            yield ("non-integral", "value", 2.5)
    elif kind in ("vector", "matrix", "array"):
        arr = np.asarray(value, dtype=float)
        yield from [("bool", "type", True), ("str", "type", "1.0"), ("object", "type", _Opaque()),
                    ("strings", "type", np.full(arr.shape, "1").tolist()),
                    ("bools", "type", np.ones(arr.shape, dtype=bool).tolist()),
                    ("complexes", "type", (arr + 1j).tolist()),
                    # issue 25: a masked array would lose its mask; times are not numbers
                    ("masked", "type", np.ma.masked_array(arr, mask=np.eye(*arr.shape, dtype=bool)
                                                          if arr.ndim == 2 else arr * 0 == 0)),
                    ("timedeltas", "type", np.ones(arr.shape, dtype="timedelta64[s]"))]
        # a matrix as np.matrix, and the valid values as an object array: used as the array
        # (or refused with a ValueError), never a matrix-shaped or object result
        yield ("np.matrix", "value", np.asmatrix(arr) if arr.ndim == 2 else np.asmatrix(arr[None, :]))
        yield ("object dtype", "value", arr.astype(object))
        if not optional:
            yield ("None", "type", None)
        yield from [("empty", "value", []), ("ragged", "value", [[1.0], [1.0, 2.0]]),
                    ("3-D", "value", np.ones((2, 2, 2))), ("huge", "value", np.full(arr.shape, 1e308)),
                    ("subnormal", "value", np.full(arr.shape, 5e-324)),
                    ("huge int entry", "value", [10**400] + np.asarray(arr.flat[1:]).tolist()
                     if arr.ndim == 1 else [[10**400] * arr.shape[1]] + arr[1:].tolist())]
        for label, bad in (("nan entry", math.nan), ("inf entry", math.inf), ("negative entry", -1.0),
                           ("zero entry", 0.0)):
            a = arr.copy()
            a.flat[0] = bad
            yield (label, "value", a)
        yield ("all zeros", "value", np.zeros(arr.shape))
        if arr.ndim == 1:
            yield ("too long", "value", np.append(arr, arr[0]))
            yield ("scalar", "value", 1.0)
    elif kind == "names":
        yield from [("str", "type", "linear"), ("ints", "type", [1, 2]), ("unknown", "value", ["no-such-name"]),
                    ("empty", "value", [])]
    elif kind == "bool":
        yield from [("int", "type", 1), ("str", "type", "yes"), ("None", "type", None)]
    elif kind == "str":
        yield from [("int", "type", 3), ("bytes", "type", b"alg3"), ("unknown", "value", "no-such-name")]
        if not optional:
            yield ("None", "type", None)
    elif kind == "rng":
        yield from [("seed", "type", 42), ("str", "type", "seed"), ("legacy", "type", np.random.RandomState(0))]
        if not optional:
            yield ("None", "type", None)
    elif kind == "mapping":
        yield from [("list", "type", [1.0]), ("str", "type", "s"), ("empty", "value", {})]
    elif kind == "symbolic":
        yield from [("None", "type", None), ("str", "type", "x"), ("number", "type", 1.0)]
    elif kind == "runs":
        yield from [("str", "type", "runs"), ("None", "type", None), ("empty", "value", []),
                    ("bad entry", "type", ["s"]),
                    # the valid first entry without its last element, whatever the entries' length
                    ("short entry", "value", [tuple(value[0])[:-1]])]
    elif kind == "optional":
        yield from [("bool", "type", True), ("object", "type", _Opaque())]


# --------------------------------------------------------------------------------------
# checking one call
# --------------------------------------------------------------------------------------
def _non_finite(result: Any, depth: int = 0) -> list[str]:
    """Paths of NaN and infinite values in a result (arrays, numbers, tuples, dataclasses)."""
    if depth > 6:
        return []
    if isinstance(result, (bool, np.bool_, str, sp.Basic, sp.MatrixBase)):
        return []
    if isinstance(result, (float, np.floating)):
        return ["nan" if math.isnan(result) else "inf"] if not math.isfinite(result) else []
    if isinstance(result, np.ndarray):
        if result.dtype.kind in "fc" and not np.all(np.isfinite(result)):
            return ["nan" if np.any(np.isnan(result)) else "inf"]
        return []
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return [p for f in dataclasses.fields(result) for p in _non_finite(getattr(result, f.name), depth + 1)]
    if isinstance(result, (tuple, list)):
        return [p for v in result for p in _non_finite(v, depth + 1)]
    if isinstance(result, dict):
        return [p for v in result.values() for p in _non_finite(v, depth + 1)]
    return []


def _odd_arrays(result: Any, depth: int = 0) -> list[str]:
    """Masked arrays, np.matrix and object arrays in a result (issue 25: such inputs once
    came back as such outputs)."""
    if depth > 6:
        return []
    if isinstance(result, np.ndarray):
        if isinstance(result, (np.ma.MaskedArray, np.matrix)) or result.dtype == object:
            return [type(result).__name__ + f"[{result.dtype}]"]
        return []
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return [p for f in dataclasses.fields(result) for p in _odd_arrays(getattr(result, f.name), depth + 1)]
    if isinstance(result, (tuple, list)):
        return [p for v in result for p in _odd_arrays(v, depth + 1)]
    if isinstance(result, dict):
        return [p for v in result.values() for p in _odd_arrays(v, depth + 1)]
    return []


#: CPU seconds after which a call counts as hung and is stopped: a guard against hangs, not
#: a speed target (issue 36: a test fails because the code is wrong, never because the
#: machine is busy). The calls' times are measured by benchmarks/fuzz_call_times.py.
HANG_LIMIT = float(os.environ.get("EGM_TEST_HANG_LIMIT", "60"))

#: Callables the valid-example test does not call, with where they run instead.  Each
#: takes no argument, so there is no bad-argument case for them either.
RUN_ELSEWHERE: dict[str, str] = {
    "egmbook.report_quantile_procedure.published_radii_procedure":
        "the book's pipeline over the 216 published radii of Figure 2 (about a minute); "
        "chapters/05a_figure2_cause.ipynb runs it and nbval checks its outputs",
}


def run_by_its_chapter(qualname: str, fn: Callable[..., Any]) -> bool:
    """A finding that takes no argument is a chapter's fixed, seeded experiment (seconds of
    Monte Carlo or quadrature): its chapter runs it and nbval compares the outputs, so the
    valid-example test does not run it again (it has no bad-argument case either)."""
    return qualname.startswith("egmbook.findings.") and not _params(fn)


class CallTooSlow(Exception):
    """Raised inside a call that exceeded its CPU-time limit."""


@contextlib.contextmanager
def time_limit(what: str, seconds: float = HANG_LIMIT) -> Iterator[None]:
    """Interrupt the block after ``seconds`` of process CPU time (SIGPROF timer), so that
    a hang fails the test instead of stalling it.  Where no such timer exists (not the
    main thread, or no setitimer), the block runs unguarded."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise CallTooSlow(f"{what} took more than {seconds} s of CPU time (a hang?)")

    old = signal.signal(signal.SIGPROF, _raise)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def run_case(qualname: str, fn: Callable[..., Any], param: str, category: str, bad: Any) -> str:
    """Call with one bad argument; return the outcome ('TypeError', 'ValueError', 'returned')
    or raise AssertionError saying what is wrong."""
    kwargs = valid_kwargs(qualname, fn)
    kwargs[param] = bad
    call = _instance_and_method(qualname, fn)
    try:
        with warnings.catch_warnings(), time_limit(f"{qualname}({param}=<{category}>)"):
            warnings.simplefilter("ignore", DeprecationWarning)
            result = call(**kwargs)
    except CallTooSlow as exc:
        raise AssertionError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        kind = type(exc).__name__
        if category == "type":
            assert isinstance(exc, TypeError), f"{qualname}({param}=<{category}>) raised {kind}: {exc}"
        else:
            assert isinstance(exc, ValueError) and not isinstance(exc, TypeError), (
                f"{qualname}({param}=<{category}>) raised {kind}: {exc}")
        assert param in str(exc), f"{qualname}({param}=...): the message does not name {param!r}: {exc}"
        return kind
    except Exception as exc:  # noqa: BLE001 - any other exception is the finding
        raise AssertionError(f"{qualname}({param}=...) raised {type(exc).__name__}: {exc}") from None
    assert category == "value", f"{qualname}({param}=...) accepted a wrong type and returned {result!r:.80}"
    bad_paths = _non_finite(result)
    if qualname in DOCUMENTED_INFINITIES:
        bad_paths = [p for p in bad_paths if p != "inf"]
    assert not bad_paths, f"{qualname}({param}=...) returned {bad_paths} in {result!r:.120}"
    odd = _odd_arrays(result)
    assert not odd, f"{qualname}({param}=...) returned {odd} in {result!r:.120}"
    return "returned"


def cases() -> list[tuple[str, Callable[..., Any], str, str, str, Any]]:
    out = []
    for qualname, fn in public_callables(book=True):
        example = {**VALID, **OVERRIDES.get(qualname, {})}
        for p in _params(fn):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name not in example:
                continue
            for label, category, bad in bad_values(_resolve(example[p.name]), p):
                out.append((qualname, fn, p.name, label, category, bad))
    return out


CASES = cases()


def _case_id(c: tuple[Any, ...]) -> str:
    return f"{c[0]}[{c[2]}={c[3]}]"


#: Known findings left to the modules' owners (issue 19), by case id
#: (``"<callable>[<param>=<label>]"``), strict: each must still fail, so that a fix shows up
#: as a failure asking to remove it from here.
KNOWN_FINDINGS: dict[str, str] = {}

#: The cases by (callable, parameter): one test item runs all the bad values of one
#: parameter (pytest's own cost per item was as much as the ten thousand calls).
CASES_BY_PARAM: dict[tuple[str, str], list[tuple[str, Callable[..., Any], str, str, str, Any]]] = {}
for _c in CASES:
    CASES_BY_PARAM.setdefault((_c[0], _c[2]), []).append(_c)


def check_bad_values(cases: list[tuple[str, Callable[..., Any], str, str, str, Any]],
                     known: Mapping[str, str]) -> list[str]:
    """Run every case; the problems: a case that fails (unless ``known``), or a known one that passes."""
    problems = []
    for c in cases:
        qualname, fn, param, label, category, bad = c
        try:
            run_case(qualname, fn, param, category, bad)
        except AssertionError as exc:
            if _case_id(c) not in known:
                problems.append(f"[{label}] {exc}")
        else:
            if _case_id(c) in known:
                problems.append(f"[{label}] passes now: remove {_case_id(c)!r} from KNOWN_FINDINGS")
    return problems


@pytest.mark.parametrize("qualname,param", list(CASES_BY_PARAM), ids=lambda v: v)
def test_bad_arguments_are_rejected_clearly(qualname, param):
    """Each bad value of the parameter: TypeError or ValueError naming it, or a finite result."""
    problems = check_bad_values(CASES_BY_PARAM[(qualname, param)], KNOWN_FINDINGS)
    assert not problems, f"{qualname}({param}=...): {len(problems)} bad values handled wrongly\n" + "\n".join(problems)


def test_a_wrongly_handled_bad_value_is_reported():
    """The grouped test fails for one bad case among good ones, and for a known finding that passes."""
    qualname, param = next(iter(CASES_BY_PARAM))
    cases = CASES_BY_PARAM[(qualname, param)]
    good = [c for c in cases if c[4] == "type"][:2]
    assert good and not check_bad_values(good, {})
    wrong = (*good[0][:4], "value", good[0][5])  # a wrong type said to be a wrong value: TypeError is wrong then
    assert check_bad_values([*good, wrong], {}) == [check_bad_values([wrong], {})[0]]
    assert "passes now" in check_bad_values(good[:1], {_case_id(good[0]): "listed"})[0]


@pytest.mark.parametrize("qualname,fn", [(q, f) for q, f in public_callables(book=True)
                                         if q not in RUN_ELSEWHERE and not run_by_its_chapter(q, f)],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_valid_example_call_works(qualname, fn):
    """The valid call that every bad call perturbs succeeds and returns finite numbers."""
    call = _instance_and_method(qualname, fn)
    with time_limit(qualname):
        result = call(**valid_kwargs(qualname, fn))
    paths = _non_finite(result)
    if qualname in DOCUMENTED_INFINITIES:
        paths = [p for p in paths if p != "inf"]
    assert not paths, f"{qualname} returned {paths}"


def test_callables_run_elsewhere_take_no_argument():
    fns = dict(public_callables(book=True))
    for qualname in RUN_ELSEWHERE:
        assert qualname in fns and not _params(fns[qualname]), qualname


def test_every_public_parameter_has_a_valid_example():
    for qualname, fn in public_callables(book=True):
        valid_kwargs(qualname, fn)  # raises KeyError naming the missing parameter


def test_enumeration_covers_every_module():
    """Every public module, subpackages' included, declares ``__all__`` and has public
    callables, except a package whose empty ``__all__`` says it only groups modules."""
    modules = {split_qualname(q)[0] for q, _ in public_callables()}
    expected = set()
    for rel in public_modules():
        mod = importlib.import_module(f"egmlib.{rel}")
        assert hasattr(mod, "__all__"), f"egmlib.{rel} has no __all__"
        if (mod.__all__ or not hasattr(mod, "__path__")) and rel not in NOT_FUZZED:
            expected.add(rel)
    assert modules == expected
    assert {"peers", "peers.plan", "peers.iome", "peers.coinpress", "peers.algorithm3"} <= set(public_modules())
    assert len(CASES) > 1000


def tally() -> Counter[str]:
    """Outcome counts over all cases (what ``python tests/test_fuzz_api.py`` prints)."""
    counts: Counter[str] = Counter()
    for qualname, fn, param, _label, category, bad in CASES:
        try:
            counts[run_case(qualname, fn, param, category, bad)] += 1
        except AssertionError:
            counts["failed expectation" + (" (gchisq, pending)" if qualname.startswith("gchisq") else "")] += 1
    return counts


if __name__ == "__main__":  # pragma: no cover - a report, not a test
    c = tally()
    print(f"{len(CASES)} calls with one bad argument over {len(public_callables(book=True))} public callables")
    for k, v in sorted(c.items()):
        print(f"  {k:32s} {v}")


def test_the_hang_guard_stops_a_call_that_does_not_end():
    """The guard is a CPU-time limit against hangs: a call that never ends is stopped (here
    after a tenth of a second of CPU), and the handler and timer are restored after it."""
    if not hasattr(signal, "setitimer"):
        pytest.skip("no setitimer on this platform: calls run unguarded")
    spins = 0
    with pytest.raises(CallTooSlow, match="spin took more than 0.1 s of CPU time"), time_limit("spin", 0.1):
        while True:
            spins += 1
    assert spins > 0 and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert HANG_LIMIT >= 10.0  # generous: a guard against hangs, never a speed target


def test_shared_examples_are_fresh_unless_immutable():
    """A costly valid example built once (:func:`_shared`) reaches each call as its own copy,
    or as the same object only when nothing in it can change."""
    for name in ("res", "peers", "offmodel"):
        first, second = VALID[name](), VALID[name]()
        assert first is not second or _immutable(first), name
    res = VALID["res"]()
    assert not _immutable(res) and VALID["res"]() is not res
    assert not _immutable((1.0, "a", np.zeros(2)))  # a writeable array
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    assert _immutable((1.0, "a", frozen, types.MappingProxyType({"k": frozen})))
