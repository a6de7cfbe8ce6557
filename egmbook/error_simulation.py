"""The error of Algorithm 3 and of its baseline measured by simulation (chapter 7).

:mod:`egmbook.clipping_error` predicts the squared error of a clipped noisy sum from a
per-row model, E||M(X) - sum_i x_i||^2 = E||eta||^2 + n E||D||^2 + n (n - 1) ||E D||^2
(the decomposition of chapter 7).  This module measures the same error by running the
two mechanisms compared in Section 5 of the report (:data:`egmlib.mechanisms.METHODS`)
on simulated datasets, split into its clipping part B and its noise part eta, so that
every term of the prediction is checked against the mechanisms themselves:

* :func:`simulate_errors` -- ``reps`` datasets with rows from N(0, diag(sigma^2)), each
  released as every requested :class:`SimulationRun` says;
* :func:`mean_ci` -- mean, standard error and 95% Student-t half-width over repetitions.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from egmlib import mechanisms
from egmlib import validation as _v

__all__ = [
    "SimulationRun",
    "SimulatedErrors",
    "MeanCI",
    "simulate_errors",
    "mean_ci",
]


class SimulationRun(NamedTuple):
    """One release to simulate: which standard deviations, mechanism, p_C and centre."""

    sigma_key: Hashable  #: key of the standard deviations in ``sigmas``
    method: str  #: "alg3" or "base" (:data:`egmlib.mechanisms.METHODS`)
    p_clip: float  #: clipping probability p_C in (0, 1)
    mu_hat: ArrayLike | None  #: centre of the clipping ball; None for the true mean 0


@dataclass(frozen=True)
class SimulatedErrors:
    """Per-repetition errors of one run of :func:`simulate_errors` (arrays of length reps)."""

    bias2: NDArray[np.float64]  #: ||B||^2, B = clipped sum - true sum (the clipping error)
    noise2: NDArray[np.float64]  #: ||eta||^2
    total2: NDArray[np.float64]  #: ||B + eta||^2 = ||release - true sum||^2
    n_clipped: NDArray[np.int64]  #: rows clipped
    bias_vec: NDArray[np.float64]  #: (reps, d) the vectors B


def simulate_errors(
    n: int,
    *,
    sigmas: Mapping[Hashable, ArrayLike],
    runs: Sequence[SimulationRun | tuple[Any, str, float, ArrayLike | None]],
    reps: int,
    rng: np.random.Generator,
    eps: float,
    delta: float,
    chunk_elems: int = 2**24,
) -> list[SimulatedErrors]:
    """Run the mechanisms on ``reps`` simulated datasets of ``n`` rows and split each error.

    For every repetition one matrix of standard normals Z (n x d) is drawn, and
    for each key k of ``sigmas`` the dataset X_k = Z * sigmas[k] (rows from
    N(0, diag(sigma_k^2)); all keys share Z).  Each run, a :class:`SimulationRun`
    (sigma_key, method, p_clip, mu_hat) or a 4-tuple in that order, releases M(X_k)
    with ``mechanisms.METHODS[method]`` (Algorithm 3 or the baseline of Section 5)
    at that p_clip and centre (mu_hat None: 0, the true mean), and its error
    M(X) - sum_i x_i = B + eta is split into the clipping error B and the noise
    eta of the decomposition (:func:`egmbook.clipping_error.expected_error`).

    Datasets larger than ``chunk_elems`` are streamed in row blocks: with p_clip
    given, the noise-free release is additive over row blocks, so the sum of the
    blocks' clipped sums is the clipped sum of the whole dataset; the noise comes
    from the call on the first block (it does not depend on the data).  Random
    numbers are drawn from ``rng`` in a fixed order (per repetition and block:
    Z, then the noise of each run in the order of ``sigmas``, then of ``runs``).

    Returns
    -------
    list of SimulatedErrors
        One per run, in the order of ``runs``.
    """
    n = _v.check_count("n", n, maximum=10**12)
    reps = _v.check_count("reps", reps, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    chunk_elems = _v.check_count("chunk_elems", chunk_elems)
    _v.check_mapping("sigmas", sigmas)
    sig: dict[Hashable, NDArray[np.float64]] = {}
    first_len: int | None = None
    for k, s in sigmas.items():
        sig[k] = _v.check_nonnegative_vector(f"sigmas[{k!r}]", s, length=first_len, of="the first entry's")
        first_len = sig[k].size
    d = next(iter(sig.values())).size
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise TypeError(f"runs must be a sequence of SimulationRun, got runs of type {type(runs).__name__}")
    if not runs:
        raise ValueError("runs must have at least one SimulationRun, got an empty sequence")
    plan = []
    for i, run in enumerate(runs):
        if not isinstance(run, tuple):
            raise TypeError(f"runs[{i}] must be a SimulationRun, got runs[{i}] of type {type(run).__name__}")
        if len(run) != 4:
            raise ValueError(f"runs[{i}] must be (sigma_key, method, p_clip, mu_hat), got {len(run)} entries")
        key, method, p, mu_hat = run
        if key not in sig:
            raise ValueError(f"runs[{i}].sigma_key must be a key of sigmas, got {key!r}")
        _v.check_choice(f"runs[{i}].method", method, mechanisms.METHODS)
        p = _v.check_probability(f"runs[{i}].p_clip", p)
        mu_hat = (np.zeros(d) if mu_hat is None
                  else _v.check_finite_vector(f"runs[{i}].mu_hat", mu_hat, length=d, of="one entry per coordinate"))
        plan.append((key, mechanisms.METHODS[method], p, mu_hat))
    res: list[dict[str, list[Any]]] = [
        {"bias2": [], "noise2": [], "total2": [], "nclip": [], "bias_vec": []} for _ in plan
    ]
    rows = max(1, min(n, chunk_elems // d))
    for _ in range(reps):
        acc = [np.zeros(d) for _ in plan]
        ncl = [0] * len(plan)
        eta: list[NDArray[np.float64]] = [np.zeros(d) for _ in plan]
        true = {k: np.zeros(d) for k in sig}
        for start in range(0, n, rows):
            Z = rng.standard_normal((min(rows, n - start), d))
            for k, sigma in sig.items():
                X = Z * sigma
                true[k] += X.sum(axis=0)
                for i, (kk, mech, p, mu_hat) in enumerate(plan):
                    if kk != k:
                        continue
                    first = start == 0
                    r = mech(X, sigma=sigma, mu_hat=mu_hat, eps=eps, delta=delta, rng=rng if first else None,
                             p_clip=p, noise=first)
                    acc[i] += r.clipped_sum
                    ncl[i] += r.n_clipped
                    if first:
                        eta[i] = np.array(r.noise)
        for i, (k, *_) in enumerate(plan):
            B = acc[i] - true[k]
            e = eta[i]
            res[i]["bias2"].append(float(B @ B))
            res[i]["noise2"].append(float(e @ e))
            res[i]["total2"].append(float((B + e) @ (B + e)))
            res[i]["nclip"].append(ncl[i])
            res[i]["bias_vec"].append(B)
    out = [SimulatedErrors(bias2=np.array(r["bias2"]), noise2=np.array(r["noise2"]),
                           total2=np.array(r["total2"]), n_clipped=np.array(r["nclip"]),
                           bias_vec=np.array(r["bias_vec"])) for r in res]
    _v.check_finite_result([o.total2 for o in out], what="the squared errors", inputs="sigmas or n")
    return out


class MeanCI(NamedTuple):
    """Mean over repetitions, its standard error and the 95% half-width (:func:`mean_ci`)."""

    mean: float | NDArray[np.float64]  #: mean over the repetitions
    se: float | NDArray[np.float64]  #: its standard error; inf for a single repetition
    ci: float | NDArray[np.float64]  #: half-width of the two-sided 95% Student-t interval; inf for one


def mean_ci(x: ArrayLike, *, axis: int = 0) -> MeanCI:
    """Mean, standard error and half-width of a two-sided 95% Student-t interval.

    Over ``axis`` of the repetitions ``x`` (at least one-dimensional): the summary of
    every simulated error in chapter 7.  With a single repetition the standard error is
    unknown and both it and the half-width are returned as inf (an unbounded interval),
    never NaN.

    Examples
    --------
    >>> m, se, ci = mean_ci([1.0, 2.0, 3.0])
    >>> float(m), float(se), round(float(ci), 4)
    (2.0, 0.5773502691896258, 2.4841)
    """
    x = _v.check_finite_array("x", x)
    if x.ndim == 0:
        raise ValueError("x must be at least one-dimensional (one entry per repetition), got a scalar")
    axis = _v.check_count("axis", axis, minimum=-x.ndim, maximum=x.ndim - 1)
    r = x.shape[axis]
    with np.errstate(over="ignore"):
        m = x.mean(axis=axis)
    if r < 2:
        _v.check_finite_result(m, what="the mean", inputs="x")
        return MeanCI(m, np.full_like(m, np.inf), np.full_like(m, np.inf))
    with np.errstate(over="ignore", invalid="ignore"):
        se = x.std(axis=axis, ddof=1) / math.sqrt(r)
    out = MeanCI(m, se, stats.t.ppf(0.975, r - 1) * se)
    _v.check_finite_result(out, what="the mean and its interval", inputs="x")
    return out
