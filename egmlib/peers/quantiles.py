r"""Private quantiles: the exponential mechanism and noisy binary search.

Two private ways to find a value with about ``q n`` of ``n`` numbers below it, both
used by the peers of Algorithm 3:

* :func:`private_quantile` / :func:`coordinatewise_quantiles` -- the exponential
  mechanism over the real line (Smith 2011, "Privacy-preserving statistical estimation
  with optimal convergence rates", STOC; in the form of Kaplan, Schnapp and Stemmer
  2022, "Differentially private approximate quantiles", ICML, Alg. 1 with one
  quantile).  This is PLAN's ``PrivQuantile`` (Aumuller, Lebeda, Nelson and Pagh 2024),
  which its experiments run with ``kaplan=True``.
* :func:`binary_search_quantile` / :func:`binary_search_quantiles` -- bisection on the
  universe with Gaussian-noised counts, the quantile routine of the IOME code that
  PLAN's experiments run (Huang, Liang and Yi 2021).

Neighbouring datasets differ in one row (substitution, the report's Definition 2.1).

The exponential mechanism
-------------------------
Sort the values, clip them to the public universe :math:`[a, b]` and add :math:`a` and
:math:`b` as end points: :math:`a = z_0 \le z_1 \le \dots \le z_n \le z_{n+1} = b`.  Every
point of the interval :math:`I_i = [z_i, z_{i+1})` has exactly :math:`i` values below it,
so its utility is :math:`u_i = -|i - qn|`.  The mechanism picks :math:`I_i` with
probability proportional to :math:`(z_{i+1} - z_i)\exp(\varepsilon u_i/2)` and returns a
uniform point of it, i.e. it samples the density
:math:`\propto\exp(\varepsilon u(y)/2)` on :math:`[a,b]`.  Substituting one value moves
every rank by at most 1, so :math:`u` has sensitivity 1 and the output is
:math:`\varepsilon`-DP, i.e. :math:`\varepsilon^2/8`-zCDP
(:func:`egmlib.peers.budget.exponential_mechanism_epsilon`).  Intervals of length 0
(tied values) get probability 0, exactly.

PLAN's code divides the utility by :math:`\max(q, 1-q)` (1/2 for the median), the
sensitivity under addition or removal of a value; under substitution it is 1, which is
what this module uses.  For the median this halves the effective :math:`\varepsilon` of
PLAN's published runs, i.e. their centre and scale steps spent 4 times the
:math:`\rho` they were charged for.

Sorted columns, computed once
-----------------------------
The sampler draws from the sorted values of each column (``_em_sorted_rows``), whatever
the data's memory layout or flags: one seed gives one release.  A caller that releases
several quantiles of the same data (PLAN's centre at several budgets, IOME's centre on
the same rotated rows) sorts them once with :func:`sorted_columns` and passes the result
as ``presorted``: an explicit :class:`SortedColumns` object holding its own read-only copy,
never looked up by the array's identity, so the caller owns the pairing of the data and
its sorted columns.  The draws are the same with or without it (the tests check this);
only the time to sort is saved.

Floating point
--------------
The utilities are exact integer counts of a sort or of comparisons, so their sensitivity
is 1 exactly.  The sampling probabilities are formed from interval lengths, logarithms,
exponentials and a cumulative sum, each within :math:`(n+10)u` relative error
(:math:`u = 2^{-53}`), which moves the privacy loss by at most :math:`4(n+10)u`
(:math:`4.4\times10^{-10}` at :math:`n = 10^6`), below anything the budget can resolve;
the noisy bisection's counts are exact integers and its Gaussian noise is calibrated to
sensitivity 1 exactly.  As elsewhere, the samplers' floating-point outputs (the uniform
point of an interval, the Gaussian noise) are not analysed (Mironov 2012).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.validation import FloatArray

__all__ = [
    "MAX_BISECTION_STEPS",
    "binary_search_quantile",
    "binary_search_quantiles",
    "coordinatewise_quantiles",
    "private_quantile",
    "SortedColumns",
    "sorted_columns",
]

#: Elements per block of columns processed at once by the exponential mechanism.
_BLOCK_ELEMENTS = 2**18
#: Rows per block of the blocked transpose in :func:`sorted_columns`.
_TRANSPOSE_ROWS = 1024

#: Most bisection steps (a finite float64 interval stops shrinking after about 1100 halvings).
MAX_BISECTION_STEPS = 1100

def _sort_transposed(X: np.ndarray) -> np.ndarray:
    n, d = X.shape
    out = np.empty((d, n))
    for start in range(0, n, _TRANSPOSE_ROWS):  # blocked: far faster than X.T.copy() here
        out[:, start:start + _TRANSPOSE_ROWS] = X[start:start + _TRANSPOSE_ROWS].T
    out.sort(axis=1)
    return out


@dataclass(frozen=True)
class SortedColumns:
    """The columns of a data matrix sorted ascending: a precomputation the caller passes.

    Built by :func:`sorted_columns`; ``values`` is its own read-only (d, n) array, row j
    column j of the data in ascending order.  Passed as ``presorted`` to
    :func:`coordinatewise_quantiles` and :func:`binary_search_quantiles` (and PLAN's
    estimators), it saves sorting the same data again; the draws are the same without it.
    """

    values: FloatArray  #: (d, n) read-only, each row ascending

    @property
    def data_shape(self) -> tuple[int, int]:
        """(n, d), the shape of the data the columns were sorted from."""
        d, n = self.values.shape
        return n, d


def sorted_columns(X: Any) -> SortedColumns:
    """The columns of ``X`` sorted ascending (:class:`SortedColumns`).

    The order statistics that the exponential-mechanism quantiles of Kaplan, Schnapp and
    Stemmer (2022) and PLAN (Aumuller et al. 2024) sample between.

    Examples
    --------
    >>> X = np.array([[3.0, 0.0], [1.0, 2.0], [2.0, 1.0]])
    >>> sorted_columns(X).values.tolist()
    [[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]]
    """
    X = _v.check_finite_data("X", X)
    S = _sort_transposed(X)
    S.setflags(write=False)
    return SortedColumns(values=S)


def _presorted(presorted: Any, X: np.ndarray) -> np.ndarray | None:
    """The sorted values of ``presorted`` after checking that it fits ``X`` (None passes)."""
    if presorted is None:
        return None
    if not isinstance(presorted, SortedColumns):
        raise TypeError(f"presorted must be a SortedColumns (from sorted_columns(X)), got presorted of type "
                        f"{type(presorted).__name__}")
    if presorted.data_shape != X.shape:
        raise ValueError(f"presorted must hold the sorted columns of X, of shape {X.shape}, got the columns "
                         f"of data of shape {presorted.data_shape}")
    return presorted.values


def _em_sorted_rows(S: np.ndarray, *, q: float, eps: float, lower: float, upper: float,
                    rng: np.random.Generator) -> np.ndarray:
    """One exponential-mechanism quantile per row of the row-sorted (k, n) array S."""
    k, n = S.shape
    out = np.empty(k)
    penalty = (0.5 * eps) * np.abs(np.arange(n + 1) - q * n)  # -eps u_i / 2
    block = max(1, min(k, _BLOCK_ELEMENTS // (n + 2)))
    Z = np.empty((block, n + 2))  # work buffers reused by every block
    W = np.empty((block, n + 1))
    for start in range(0, k, block):
        rows = S[start:start + block]
        m = rows.shape[0]
        z, w = Z[:m], W[:m]
        z[:, 0] = lower
        z[:, -1] = upper
        np.clip(rows, lower, upper, out=z[:, 1:-1])
        np.subtract(z[:, 1:], z[:, :-1], out=w)  # interval lengths
        with np.errstate(divide="ignore"):
            np.log(w, out=w)  # -inf for ties
        w -= penalty
        w -= w.max(axis=1, keepdims=True)
        np.exp(w, out=w)
        np.cumsum(w, axis=1, out=w)
        u = rng.random(m) * w[:, -1]
        idx = np.minimum(np.count_nonzero(w < u[:, None], axis=1), n)
        r = np.arange(m)
        left, right = z[r, idx], z[r, idx + 1]
        out[start:start + m] = left + rng.random(m) * (right - left)
    return out


def _em_columns(X: np.ndarray, S: np.ndarray | None, *, q: float, eps: float, lower: float,
                upper: float, rng: np.random.Generator) -> FloatArray:
    """One exponential-mechanism q-quantile per column of X (n, d), from its sorted columns
    (``S``, sorted here when None)."""
    return _em_sorted_rows(_sort_transposed(X) if S is None else S, q=q, eps=eps, lower=lower,
                           upper=upper, rng=rng)


def private_quantile(values: Any, *, q: float, rho: float, lower: float, upper: float,
                     rng: np.random.Generator) -> float:
    r"""A :math:`\rho`-zCDP ``q``-quantile of ``values`` by the exponential mechanism.

    Smith (2011) / Kaplan, Schnapp and Stemmer (2022, Alg. 1); PLAN's ``PrivQuantile``
    (Aumuller et al. 2024).  The density of the output is
    :math:`\propto\exp(-\tfrac{\varepsilon}{2}|\#\{x_i\le y\} - qn|)` on
    :math:`[\text{lower}, \text{upper}]`, with :math:`\varepsilon = \sqrt{8\rho}`.
    Values outside the universe count as lying on its boundary.

    Parameters
    ----------
    values : array_like, shape (n,), finite, n >= 1
    q : float in [0, 1]
        Target quantile (``q = 1/2``: the median).
    rho : float, finite and > 0
        zCDP budget of this release.
    lower, upper : float, finite, lower < upper
        Public universe; the output lies in it.
    rng : numpy.random.Generator

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=2001)
    >>> m = private_quantile(x, q=0.5, rho=1.0, lower=-100.0, upper=100.0, rng=rng)
    >>> bool(abs(m - np.median(x)) < 0.05)
    True
    """
    v = _v.check_finite_vector("values", values)
    q = _v.check_closed_interval("q", q, low=0.0, high=1.0)
    eps = _budget.exponential_mechanism_epsilon(rho)
    lower, upper = _v.check_bounds(lower, upper)
    rng = _v.check_rng("rng", rng)
    return float(_em_sorted_rows(np.sort(v)[None, :], q=q, eps=eps, lower=lower, upper=upper,
                                 rng=rng)[0])


def coordinatewise_quantiles(X: Any, *, q: float, rho: float, lower: float, upper: float,
                             rng: np.random.Generator,
                             presorted: SortedColumns | None = None) -> FloatArray:
    r"""The ``q``-quantile of every column of ``X``, :math:`\rho`-zCDP in total.

    Column :math:`j` gets :func:`private_quantile` with budget :math:`\rho/d`; by
    composition over the :math:`d` columns (Bun and Steinke 2016, Lemma 1.7) the whole
    vector is :math:`\rho`-zCDP.  With ``q = 1/2`` this is the private coordinate-wise
    median that PLAN (Aumuller et al. 2024) uses as its centre and, on pairwise
    differences, for its scales (:func:`egmlib.peers.scales.pairwise_scales`).

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    q : float in [0, 1]
    rho : float, finite and > 0
        Total zCDP budget over the d columns.
    lower, upper : float, finite, lower < upper
        Public universe of every coordinate.
    rng : numpy.random.Generator
    presorted : SortedColumns, optional
        ``sorted_columns(X)``, when the caller has it (the draws are the same).

    Returns
    -------
    numpy.ndarray, shape (d,)

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> X = rng.normal(loc=[0.0, 5.0], size=(4001, 2))
    >>> m = coordinatewise_quantiles(X, q=0.5, rho=2.0, lower=-50.0, upper=50.0, rng=rng)
    >>> bool(np.abs(m - [0.0, 5.0]).max() < 0.15)
    True
    """
    X = _v.check_finite_data("X", X)
    q = _v.check_closed_interval("q", q, low=0.0, high=1.0)
    d = X.shape[1]
    rho = _v.check_positive_finite("rho", rho)
    eps = _budget.exponential_mechanism_epsilon(rho / d)
    lower, upper = _v.check_bounds(lower, upper)
    rng = _v.check_rng("rng", rng)
    return _em_columns(X, _presorted(presorted, X), q=q, eps=eps, lower=lower, upper=upper, rng=rng)


def _count_leq(S: np.ndarray, v: np.ndarray) -> np.ndarray:
    """#{S[j, :] <= v[j]} for every row j of the row-sorted array S (vectorised bisect_right)."""
    k, n = S.shape
    lo = np.zeros(k, dtype=np.int64)
    hi = np.full(k, n, dtype=np.int64)
    rows = np.arange(k)
    for _ in range(max(1, n.bit_length() + 1)):
        active = lo < hi
        if not np.any(active):
            break
        mid = (lo + hi) // 2
        le = S[rows, np.minimum(mid, n - 1)] <= v
        lo = np.where(active & le, mid + 1, lo)
        hi = np.where(active & ~le, mid, hi)
    return lo


def _count_leq_subset(X: np.ndarray, cols: np.ndarray | None, v: np.ndarray) -> np.ndarray:
    """#{X[:, cols[i]] <= v[i]} for every i (all columns when ``cols`` is None): one pass.

    Rows are compared in blocks of at most 255, whose comparisons are summed in bytes
    (exact: a byte holds up to 255) before they are added to the int64 counts.
    """
    n, d = X.shape
    width = d if cols is None else cols.size
    acc = np.zeros(width, dtype=np.int64)
    step = min(255, max(1, 2**17 // max(1, width)))
    buf = np.empty((min(step, n), width), dtype=bool)
    for a in range(0, n, step):
        block = X[a:a + step] if cols is None else X[a:a + step][:, cols]
        m = block.shape[0]
        np.less_equal(block, v, out=buf[:m])
        acc += np.add.reduce(buf[:m].view(np.uint8), axis=0, dtype=np.uint8)
    return acc


def _count_leq_columns(X: np.ndarray, v: np.ndarray, lo: np.ndarray,
                       hi: np.ndarray) -> np.ndarray:
    """#{X[:, j] <= v[j]} for every column j, without sorting.

    Columns whose threshold lies outside their data range [lo_j, hi_j] (the column
    minima and maxima) are answered without looking at the data; the others are
    counted in row chunks (one pass over X).
    """
    n, d = X.shape
    counts = np.where(v >= hi, n, 0)
    inside = np.flatnonzero((v >= lo) & (v < hi))
    if inside.size:
        counts[inside] = _count_leq_subset(X, None if inside.size == d else inside, v[inside])
    return counts


def _bisect(count: Callable[[np.ndarray], np.ndarray], k: int, *, rank: float, noise_std: float, lower: float,
            upper: float, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Noisy bisection for k quantiles at once; ``count(mid)`` returns the exact counts."""
    left = np.full(k, lower)
    right = np.full(k, upper)
    for _ in range(steps):
        mid = 0.5 * (left + right)
        noisy = count(mid) + noise_std * rng.standard_normal(k)
        below = noisy <= rank
        left = np.where(below, mid, left)
        right = np.where(below, right, mid)
    return 0.5 * (left + right)


def _check_binary_search(rank: Any, rho: Any, lower: Any, upper: Any, steps: Any,
                         rng: Any) -> tuple[float, float, float, float, int, np.random.Generator]:
    rank = _v.check_real("rank", rank)
    if not np.isfinite(rank):
        raise ValueError(f"rank must be finite, got rank={rank!r}")
    rho = _v.check_positive_finite("rho", rho)
    lower, upper = _v.check_bounds(lower, upper)
    steps = _v.check_count("steps", steps, maximum=MAX_BISECTION_STEPS)
    rng = _v.check_rng("rng", rng)
    return rank, rho, lower, upper, steps, rng


def binary_search_quantile(values: Any, *, rank: float, rho: float, lower: float,
                           upper: float, rng: np.random.Generator, steps: int = 20) -> float:
    r"""A rho-zCDP value with about ``rank`` of ``values`` at or below it (noisy bisection).

    Starting from :math:`[\ell, r]` = [lower, upper], each of the ``steps`` rounds
    counts :math:`c = \#\{x_i \le (\ell+r)/2\}`, adds :math:`\mathcal N(0, T/(2\rho))`
    noise (:math:`T` = ``steps``) and keeps the left half when the noisy count exceeds
    ``rank``.  A count has sensitivity 1, so each round is :math:`\rho/T`-zCDP and the
    search :math:`\rho`-zCDP.  This is the quantile routine of the IOME code run in
    PLAN's experiments (Huang, Liang and Yi 2021; Aumuller et al. 2024), which returns
    the midpoint of the final interval.

    Parameters
    ----------
    values : array_like, shape (n,), finite
    rank : float
        Target number of values at or below the output (e.g. ``n / 2``).
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
    rng : numpy.random.Generator
    steps : int in [1, MAX_BISECTION_STEPS], default 20 (PLAN's experiments)

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> x = rng.normal(size=10001)
    >>> m = binary_search_quantile(x, rank=5000.5, rho=1.0, lower=-10.0, upper=10.0, rng=rng)
    >>> bool(abs(m) < 0.05)
    True
    """
    v = _v.check_finite_vector("values", values)
    rank, rho, lower, upper, steps, rng = _check_binary_search(rank, rho, lower, upper, steps, rng)
    noise_std = _budget.gaussian_noise_std(rho / steps, sensitivity=1.0)
    S = np.sort(v)[None, :]
    return float(_bisect(lambda mid: _count_leq(S, mid), 1, rank=rank, noise_std=noise_std,
                         lower=lower, upper=upper, steps=steps, rng=rng)[0])


def binary_search_quantiles(X: Any, *, rank: float, rho: float, lower: float, upper: float,
                            rng: np.random.Generator, steps: int = 20,
                            presorted: SortedColumns | None = None) -> FloatArray:
    r""":func:`binary_search_quantile` for every column of ``X``, :math:`\rho`-zCDP in total.

    Column :math:`j` gets budget :math:`\rho/d` (composition over the columns, Bun and
    Steinke 2016, Lemma 2.3), i.e. count noise :math:`\mathcal N(0, Td/(2\rho))` in each
    of its :math:`T` rounds.  IOME's private centre in PLAN's experiments is this with
    ``rank = n/2`` on the rotated data (:func:`egmlib.peers.iome.iome_mean`).

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    rank : float
    rho : float, finite and > 0
        Total budget over the d columns.
    lower, upper : float, finite, lower < upper
    rng : numpy.random.Generator
    steps : int in [1, MAX_BISECTION_STEPS], default 20
    presorted : SortedColumns, optional
        ``sorted_columns(X)``, when the caller has it: the exact counts are then
        bisections of the sorted columns instead of passes over ``X`` (same counts, same
        draws).

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    X = _v.check_finite_data("X", X)
    rank, rho, lower, upper, steps, rng = _check_binary_search(rank, rho, lower, upper, steps, rng)
    d = X.shape[1]
    noise_std = _budget.gaussian_noise_std(rho / (d * steps), sensitivity=1.0)
    S = _presorted(presorted, X)
    if S is not None:  # exact counts by bisection of the sorted columns
        return _bisect(lambda mid: _count_leq(S, mid), d, rank=rank, noise_std=noise_std,
                       lower=lower, upper=upper, steps=steps, rng=rng)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return _bisect(lambda mid: _count_leq_columns(X, mid, lo, hi), d, rank=rank,
                   noise_std=noise_std, lower=lower, upper=upper, steps=steps, rng=rng)

