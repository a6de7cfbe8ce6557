r"""IOME: instance-optimal mean estimation (Huang, Liang and Yi 2021), as run in PLAN's experiments.

Huang, Liang and Yi, "Instance-optimal mean estimation under differential privacy",
NeurIPS 2021 (the report's reference [11]), estimate a mean in :math:`\mathbf R^d` by

1. rotating the data with a randomised Hadamard transform
   :math:`R = HD_3HD_2HD_1` (:mod:`egmlib.peers.hadamard`), after which every coordinate
   concentrates like a sum of many independent terms;
2. a private centre :math:`\tilde c`: per rotated coordinate, a noisy-binary-search
   median on :math:`[\text{lower}/\sqrt N, \text{upper}/\sqrt N]`
   (:func:`egmlib.peers.quantiles.binary_search_quantiles`, 20 steps);
3. a private radius :math:`C`: the noisy-binary-search value with
   :math:`m = \lfloor n - 4\sqrt{N/(2\rho_{\rm noise})} - 2\sqrt{T/(2\rho_{\rm threshold})}\rfloor`
   of the norms :math:`\|Rx_i - \tilde c\|` below it, on
   :math:`[0, (\text{upper}-\text{lower})/2]` (the code's :math:`[0, \text{upper}]` for its
   symmetric boxes), i.e.
   about :math:`\sqrt{N/\rho}` rows are clipped, as many as the noise can hide;
4. the clipped mean plus :math:`\mathcal N(0, (2C)^2/(2\rho_{\rm noise})/n^2\, I)`, rotated
   back.

This is the version PLAN's experiments run (Aumuller, Lebeda, Nelson and Pagh 2024,
who adapted the authors' code; their repository ChristianLebeda/PLAN-experiments):
budget :math:`\rho/4` for the centre, then :math:`1\%` of the remaining
:math:`3\rho/4` for the radius and :math:`99\%` for the noise; :math:`T = 20` bisection
steps; :math:`N` the padded dimension.  Its accounting is correct under substitution
(a count has sensitivity 1), and this module reproduces it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import clipping
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.peers.hadamard import MAX_ROUNDS, RandomizedHadamard, random_hadamard
from egmlib.peers.quantiles import (
    MAX_BISECTION_STEPS,
    SortedColumns,
    binary_search_quantile,
    binary_search_quantiles,
    sorted_columns,
)
from egmlib.validation import FloatArray

__all__ = ["IOME_SHARES", "IOMEResult", "RotatedData", "iome_clip_count", "iome_mean", "rotate_data"]

#: IOME's budget split in PLAN's experiments.
IOME_SHARES = {"centre": 0.25, "threshold": 0.75 * 0.01, "noise": 0.75 * 0.99}

@dataclass(frozen=True)
class RotatedData:
    """Data clamped to a box and rotated by a public rotation, with its sorted columns.

    Built by :func:`rotate_data` and passed to :func:`iome_mean` as ``rotated`` by a caller
    that releases several times from the same data with the same public rotation (a sweep
    over budgets): the rotation and the sort, most of the cost of a release at
    :math:`n = 10^4`, :math:`d = 2048`, are done once.  It holds its own read-only arrays
    and is never looked up: the caller owns the pairing with the data.
    """

    rotation: RandomizedHadamard
    lower: float  #: the box the rows were clamped to
    upper: float
    rows: FloatArray  #: (n, N) read-only, R clamp(x_i)
    sorted: SortedColumns  #: the columns of ``rows``, sorted


def rotate_data(X: Any, *, rotation: RandomizedHadamard, lower: float, upper: float) -> RotatedData:
    """IOME's first step once: clamp ``X`` to the box, rotate it, sort its columns.

    Step 1 of Huang, Liang and Yi (2021) and the sort behind step 2's counts, for
    :func:`iome_mean`'s ``rotated``.

    Examples
    --------
    >>> rng = np.random.default_rng(7)
    >>> X = rng.normal(size=(1000, 5))
    >>> R = random_hadamard(5, rng=rng)
    >>> pre = rotate_data(X, rotation=R, lower=-50.0, upper=50.0)
    >>> a = iome_mean(X, rho=1.0, lower=-50.0, upper=50.0, rng=np.random.default_rng(1), rotation=R)
    >>> b = iome_mean(X, rho=1.0, lower=-50.0, upper=50.0, rng=np.random.default_rng(1), rotated=pre)
    >>> bool(np.array_equal(a.estimate, b.estimate))
    True
    """
    X = _v.check_finite_data("X", X)
    lower, upper = _v.check_bounds(lower, upper)
    R = _check_rotation(rotation, X.shape[1])
    Y = R._rotate(clipping.clamp_to_box(X, lower=lower, upper=upper))
    Y.setflags(write=False)
    return RotatedData(rotation=R, lower=lower, upper=upper, rows=Y, sorted=sorted_columns(Y))


def _check_rotation(rotation: Any, d: int) -> RandomizedHadamard:
    R = _v.check_instance("rotation", rotation, RandomizedHadamard)
    _v.check_dimension("rotation", R.d, expected=d, of="d")
    return R


@dataclass(frozen=True)
class IOMEResult:
    """Output of :func:`iome_mean`.  ``n_clipped`` is a diagnostic of the data only."""

    estimate: FloatArray  #: (d,) private estimate of the mean
    centre: FloatArray  #: (N,) private centre in the rotated space
    C: float  #: clipping radius
    rank_target: int  #: m, the number of rows the radius should keep
    noise_std: float  #: per-coordinate noise std on the clipped mean
    n_clipped: int
    budget: _budget.ZCDPBudget


def iome_mean(X: Any, *, rho: float, lower: float, upper: float, rng: np.random.Generator,
              rotation: RandomizedHadamard | None = None, rounds: int = 3,
              steps: int = 20, rotated: RotatedData | None = None, radius_top: float | None = None,
              shares: Mapping[str, float] | None = None) -> IOMEResult:
    r"""IOME (Huang, Liang and Yi 2021) as in PLAN's experiments, :math:`\rho`-zCDP.

    See the module docstring for the steps and the split ``IOME_SHARES``.

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate of the data.
    rng : numpy.random.Generator
    rotation : RandomizedHadamard, optional
        A public rotation drawn independently of the data
        (:func:`egmlib.peers.hadamard.random_hadamard`); default: drawn from ``rng``
        with ``rounds`` rounds.
    rounds : int in [1, MAX_ROUNDS], default 3
        Hadamard rounds of the rotation drawn when ``rotation`` is None.
    steps : int in [1, MAX_BISECTION_STEPS], default 20
        Bisection steps of each private quantile.
    rotated : RotatedData, optional
        ``rotate_data(X, rotation=R, lower=lower, upper=upper)`` for the rotation R to use
        (then ``rotation`` may be omitted or must be R): the rotated rows and their sorted
        columns, computed once for several releases.  The release is the same as with
        ``rotation=R`` alone.
    radius_top : float, finite and > 0, optional
        The top of step 3's search interval for the radius, public; default
        :math:`(\text{upper}-\text{lower})/2`, PLAN's experiments' choice.  The norms are clamped
        to it before they are counted, so any public value keeps the release private.
    shares : mapping, optional
        The split of ``rho`` over the steps ``"centre"``, ``"threshold"`` and ``"noise"``
        (every share > 0, summing to 1); default :data:`IOME_SHARES`.  Public, like ``rho``:
        the release is :math:`\rho`-zCDP for any split.  ESM passes the split that gives the
        centre and the radius the budgets IOME alone would have, and pays its own earlier
        releases from the noise (:mod:`egmlib.peers.algorithm3_robust`).

    Returns
    -------
    IOMEResult

    Examples
    --------
    >>> rng = np.random.default_rng(7)
    >>> X = rng.normal(loc=2.0, size=(20000, 8))
    >>> r = iome_mean(X, rho=1.0, lower=-50.0, upper=50.0, rng=rng)
    >>> bool(np.linalg.norm(r.estimate - 2.0) < 0.1)
    True
    """
    X = _v.check_finite_data("X", X)
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    rng = _v.check_rng("rng", rng)
    rounds = _v.check_count("rounds", rounds, maximum=MAX_ROUNDS)
    steps = _v.check_count("steps", steps, maximum=MAX_BISECTION_STEPS)
    budget = _budget.split_budget(rho, shares=_check_shares(shares))
    n, d = X.shape
    if rotated is not None:
        R, Y, presorted = _check_rotated(rotated, rotation, n, d, lower, upper)
    else:
        R = random_hadamard(d, rng=rng, rounds=rounds) if rotation is None else _check_rotation(rotation, d)
        Y, presorted = R._rotate(X), None
    N = R.padded_dim
    root = math.sqrt(N)
    centre = binary_search_quantiles(Y, rank=0.5 * n, rho=budget["centre"], lower=lower / root,
                                     upper=upper / root, rng=rng, steps=steps, presorted=presorted)
    norms = clipping.transformed_norms(Y, mu_hat=centre)
    m = int(n - _clip_count(d, budget, steps))
    top = 0.5 * (upper - lower) if radius_top is None else _v.check_positive_finite("radius_top", radius_top)
    C = binary_search_quantile(np.minimum(norms, top), rank=m, rho=budget["threshold"], lower=0.0,
                               upper=top, rng=rng, steps=steps)
    clipped = clipping.clipped_sum(Y, C=C, mu_hat=centre, norms=norms)
    total, n_clipped = clipped.total, clipped.n_clipped
    sensitivity = clipping.sum_sensitivity(C, n=n, d=N)  # 2C and the rounding bound
    s = _budget.gaussian_noise_std(budget["noise"], sensitivity=sensitivity) / n if C > 0 else 0.0
    noisy = total / n + s * rng.standard_normal(N)
    estimate = R.unrotate(noisy + centre)
    _v.check_finite_result(estimate, what="the estimate", inputs="X, lower or upper")
    return IOMEResult(estimate=estimate, centre=centre, C=C, rank_target=m,
                      noise_std=s, n_clipped=n_clipped, budget=budget)


def _check_rotated(rotated: Any, rotation: Any, n: int, d: int, lower: float, upper: float,
                   ) -> tuple[RandomizedHadamard, FloatArray, SortedColumns]:
    if not isinstance(rotated, RotatedData):
        raise TypeError(f"rotated must be a RotatedData (from rotate_data), got rotated of type "
                        f"{type(rotated).__name__}")
    if rotation is not None and rotation is not rotated.rotation:
        raise ValueError("rotation must be rotated.rotation (or omitted) when rotated is given, got another rotation")
    if rotated.rotation.d != d or rotated.rows.shape[0] != n:
        raise ValueError(f"rotated must hold the n={n} rows of X rotated from d={d} coordinates, got "
                         f"{rotated.rows.shape[0]} rows from d={rotated.rotation.d}")
    if (rotated.lower, rotated.upper) != (lower, upper):
        raise ValueError(f"rotated must be clamped to the box [lower, upper] = [{lower!r}, {upper!r}], got the box "
                         f"[{rotated.lower!r}, {rotated.upper!r}]")
    return rotated.rotation, rotated.rows, rotated.sorted


def _check_shares(shares: Any) -> Mapping[str, float]:
    """IOME's split of its budget: :data:`IOME_SHARES` when None, else a mapping with exactly its
    keys (the values are checked by :func:`egmlib.peers.budget.split_budget`)."""
    if shares is None:
        return IOME_SHARES
    if not isinstance(shares, Mapping):
        raise TypeError(f"shares must be None or a mapping of {sorted(IOME_SHARES)} to shares, got shares of "
                        f"type {type(shares).__name__}")
    if set(shares) != set(IOME_SHARES):
        raise ValueError(f"shares must have exactly the keys {sorted(IOME_SHARES)}, got {sorted(map(str, shares))}")
    return shares


def iome_clip_count(d: int, *, rho: float, steps: int = 20, shares: Mapping[str, float] | None = None) -> float:
    r"""How many rows IOME (Huang, Liang and Yi 2021, as in PLAN's experiments) aims to clip.

    Step 3 of the module docstring: the radius is the noisy-binary-search value with
    :math:`m = n - 4\sqrt{N/(2\rho_{\rm noise})} - 2\sqrt{T/(2\rho_{\rm threshold})}` rows
    below it, so about

    .. math:: 4\sqrt{N/(2\rho_{\rm noise})} + 2\sqrt{T/(2\rho_{\rm threshold})}

    rows are clipped, whatever :math:`n`; :math:`N` is the padded dimension (the power of
    two :math:`\ge d`), :math:`T` = ``steps`` the bisection steps, and the budgets are
    ``rho`` split by ``shares`` (default :data:`IOME_SHARES`, as in :func:`iome_mean`).

    Examples
    --------
    >>> round(iome_clip_count(1000, rho=0.125), 1)   # N = 1024
    503.7
    """
    d = _v.check_count("d", d, maximum=2**52)
    rho = _v.check_positive_finite("rho", rho)
    steps = _v.check_count("steps", steps, maximum=MAX_BISECTION_STEPS)
    return _clip_count(d, _budget.split_budget(rho, shares=_check_shares(shares)), steps)


def _clip_count(d: int, budget: _budget.ZCDPBudget, steps: int) -> float:
    if not (budget["threshold"] > 0.0 and budget["noise"] > 0.0):
        raise ValueError(f"rho is too small: the threshold's or the noise's share of it underflows to 0, got "
                         f"rho={budget.total!r}")
    N = 1 << (d - 1).bit_length()
    out = 4.0 * math.sqrt(N / (2.0 * budget["noise"])) + 2.0 * math.sqrt(steps / (2.0 * budget["threshold"]))
    _v.check_finite_result(out, what="the clip count", inputs="d or 1/rho")
    return out
