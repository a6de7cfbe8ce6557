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

Many columns without sorting them
---------------------------------
PLAN's centre and scale steps need one exponential-mechanism median per column, at
:math:`\rho/d` each.  Sorting the columns costs about 0.5 s at :math:`n = 10^4`,
:math:`d = 2048`; when :math:`n\varepsilon` is small (as there) the columns are not sorted
but sampled by rejection from the same density (``_em_columns_rejection``): one pass
builds a histogram of each column on a few hundred bins between its minimum and maximum,
whose counts bound the rank :math:`\#\{x_i\le y\}` on each bin and hence the density;
a draw from that piecewise-constant envelope (the pieces below the minimum and above the
maximum exactly) is accepted with probability density / envelope, which needs one count
per proposal.  Rejection sampling returns an exact draw from the target density whatever
the data, so this changes the random numbers drawn, not the mechanism or its privacy
(the tests compare the draws with the exact distribution).  Columns that have not
accepted a draw after ``_MAX_ROUNDS`` proposals, and columns whose range floats cannot
split into the bins, are sorted and sampled as below.

Sorted columns and their cache
------------------------------
The exact sampler over sorted columns (``_em_sorted_rows``) serves single quantiles,
large :math:`n\varepsilon`, and the leftovers above.  :func:`sorted_columns` memoises the
sorted columns for **read-only** arrays that own their memory (``X.flags.writeable``
false and ``X.base is None``): such an array cannot change, the cache is keyed by the
array object and an entry is dropped when the array is garbage collected (at most
``SORT_CACHE_SIZE`` entries are kept).  Writable arrays are sorted afresh on every call.
The cache never changes a result.  For such arrays the sorted columns are also the
default route: the column medians of :func:`coordinatewise_quantiles` are then drawn from
the sorted rows (rejection is kept for writable arrays, which would be sorted afresh),
and the counts of :func:`binary_search_quantiles` are bisections of the sorted rows
instead of passes over the data.  A sweep that releases at several budgets from one
read-only matrix thus sorts it once (about 0.3 s at :math:`n = 10^4`, :math:`d = 2048`)
where it would otherwise pass over it once per count.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from egmlib import _validation as _v
from egmlib._validation import FloatArray
from egmlib.peers import budget as _budget

__all__ = [
    "MAX_BISECTION_STEPS",
    "SORT_CACHE_SIZE",
    "binary_search_quantile",
    "binary_search_quantiles",
    "coordinatewise_quantiles",
    "private_quantile",
    "sorted_columns",
]

#: Number of sorted matrices kept by :func:`sorted_columns`.
SORT_CACHE_SIZE = 2
#: Elements per block of columns processed at once by the exponential mechanism.
_BLOCK_ELEMENTS = 2**18
#: Rows per block of the blocked transpose in :func:`sorted_columns`.
_TRANSPOSE_ROWS = 1024

#: Most bisection steps (a finite float64 interval stops shrinking after about 1100 halvings).
MAX_BISECTION_STEPS = 1100

_sort_cache: dict[int, tuple[weakref.ref[np.ndarray], np.ndarray]] = {}


def _sort_transposed(X: np.ndarray) -> np.ndarray:
    n, d = X.shape
    out = np.empty((d, n))
    for start in range(0, n, _TRANSPOSE_ROWS):  # blocked: far faster than X.T.copy() here
        out[:, start:start + _TRANSPOSE_ROWS] = X[start:start + _TRANSPOSE_ROWS].T
    out.sort(axis=1)
    return out


def sorted_columns(X: Any) -> FloatArray:
    """The columns of ``X`` sorted ascending, as the rows of a (d, n) read-only array.

    The order statistics that the exponential-mechanism quantiles of Kaplan, Schnapp and
    Stemmer (2022) and PLAN (Aumuller et al. 2024) sample between.  Memoised for read-only
    arrays that own their memory (see the module docstring); the result is read-only either
    way.

    Examples
    --------
    >>> X = np.array([[3.0, 0.0], [1.0, 2.0], [2.0, 1.0]])
    >>> sorted_columns(X).tolist()
    [[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]]
    """
    X = _v.check_finite_data("X", X)
    cacheable = _v.is_immutable(X)
    if cacheable:
        hit = _sort_cache.get(id(X))
        if hit is not None and hit[0]() is X:
            return hit[1]
    S = _sort_transposed(X)
    S.setflags(write=False)
    if cacheable:
        key = id(X)
        while len(_sort_cache) >= SORT_CACHE_SIZE:
            _sort_cache.pop(next(iter(_sort_cache)))
        def _forget(_: object, k: int = key) -> None:
            _sort_cache.pop(k, None)

        _sort_cache[key] = (weakref.ref(X, _forget), S)
    return S


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


# ----------------------------------------------------------------------------------------
# The exponential mechanism for many columns without sorting them: rejection sampling
# ----------------------------------------------------------------------------------------
#: Bins per column of the rejection sampler: the next power of two >= this times n eps ...
_BINS_PER_N_EPS = 6
#: ... and at least this many ...
_MIN_BINS = 64
#: ... used only when at most this many and at most n / 4 (about four values a bin);
#: otherwise the columns are sorted (``_em_sorted_rows``).
_MAX_BINS = 4096
#: Proposal rounds before the columns still without an accepted draw are sorted.
_MAX_ROUNDS = 64
#: Slack on a bin's length against its nominal length (width / bins) in the envelope.
_BIN_SLACK = 1e-6
#: Floats of data per chunk of the histogram pass.
_HIST_ELEMENTS = 2**22


def rejection_bins(n: int, eps: float) -> int:
    """Bins per column for :func:`_em_columns_rejection`, or 0 when sorting is used."""
    want = max(1.0, _BINS_PER_N_EPS * n * eps)
    bins = max(_MIN_BINS, 1 << int(np.ceil(np.log2(want))))
    return bins if bins <= min(_MAX_BINS, n // 4) else 0


def _bin_of(y: np.ndarray, lo: np.ndarray, scale: np.ndarray, bins: int) -> np.ndarray:
    """The bin floor(clip((y - lo) scale, 0, bins - 1)) of each value: monotone in y."""
    with np.errstate(over="ignore", invalid="ignore"):
        t = (y - lo) * scale
    return np.floor(np.clip(t, 0.0, bins - 1.0))


def _float_key(y: np.ndarray) -> np.ndarray:
    """An int64 key with the order of the floats y (-0.0 and 0.0 share key 0)."""
    bits = np.abs(y).view(np.int64)
    return np.where(y < 0, -bits, bits)


def _key_float(key: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_float_key`."""
    mag = np.abs(key).view(np.float64)
    return np.where(key < 0, -mag, mag)


def _bin_edge(k: np.ndarray, lo: np.ndarray, hi: np.ndarray, scale: np.ndarray,
              bins: int) -> np.ndarray:
    """The smallest float y with bin(y) >= k: the left end of bin k (lo for k = 0, hi for
    k = bins).  Bisection over the floats between two brackets around the nominal edge
    lo + k (hi - lo) / bins (at most 64 steps)."""
    kf = k.astype(np.float64)
    inner = (k > 0) & (k < bins)
    y0 = lo + kf * ((hi - lo) / bins)
    delta = 16.0 * (np.spacing(np.maximum(np.abs(lo), np.abs(hi))) + np.spacing(hi - lo))
    for _ in range(60):
        a, b = y0 - delta, y0 + delta
        bad = inner & ((_bin_of(a, lo, scale, bins) >= kf) | (_bin_of(b, lo, scale, bins) < kf))
        if not bad.any():
            break
        delta = np.where(bad, 16.0 * delta, delta)
    else:  # pragma: no cover - the brackets hold by the rounding analysis
        raise RuntimeError("no bracket for a bin edge")
    ka, kb = _float_key(a), _float_key(b)
    for _ in range(64):
        open_ = inner & (kb - ka > 1)
        if not open_.any():
            break
        mid = ka + (kb - ka) // 2
        ge = _bin_of(_key_float(mid), lo, scale, bins) >= kf
        kb = np.where(open_ & ge, mid, kb)
        ka = np.where(open_ & ~ge, mid, ka)
    return np.where(k <= 0, lo, np.where(k >= bins, hi, _key_float(kb)))


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


def _em_columns_rejection(X: np.ndarray, *, q: float, eps: float, lower: float, upper: float,
                          bins: int, rng: np.random.Generator) -> tuple[FloatArray, np.ndarray]:
    """Exponential-mechanism quantiles of the columns of X by rejection sampling.

    Returns the draws and a mask of the columns that still need one (sorted afterwards).
    The target density of column j is f(y) ∝ exp(-eps/2 |c(y) - qn|) on [lower, upper),
    c(y) = #{x_ij <= y}: exactly that of :func:`_em_sorted_rows`.  Split [lower, upper)
    into [lower, lo), where c = 0, [hi, upper), where c = n (lo, hi: the column's minimum
    and maximum clipped to the universe), and ``bins`` bins between, bin(y) =
    floor(clip((y - lo) bins / (hi - lo), 0, bins - 1)).  From one histogram pass, C_k =
    #{x : bin(x) < k} bounds c(y) in bin k by [C_k, C_k+1], hence f by W_k =
    exp(-eps/2 dist(qn, [C_k, C_k+1])).  Propose from the envelope (the two end pieces
    exactly, bin k with mass W_k (hi - lo) / bins and a uniform point of it), accept with
    probability f(y) / envelope(y): an exact draw from f, whatever the data.
    """
    n, d = X.shape
    qn = q * n
    half = 0.5 * eps
    lo = np.clip(X.min(axis=0), lower, upper)
    hi = np.clip(X.max(axis=0), lower, upper)
    width = hi - lo
    with np.errstate(divide="ignore", over="ignore"):
        scale = bins / width
        # bins resolvable in floats: the nominal edges are within 1e-7 of a bin's width
        reliable = (width > 0) & np.isfinite(scale) & (
            width / bins >= 1e7 * np.spacing(np.maximum(np.abs(lo), np.abs(hi))))
    scale = np.where(reliable, scale, 0.0)
    # histogram of the bins, all columns at once (key bin + j * bins)
    keytype = np.int32 if d * bins < 2**31 else np.int64
    offsets = (np.arange(d) * bins).astype(keytype)
    counts = np.zeros(d * bins, dtype=np.int64)
    step = max(1, _HIST_ELEMENTS // d)
    buf = np.empty((min(step, n), d))
    keys = np.empty((min(step, n), d), dtype=keytype)
    for a in range(0, n, step):
        block = X[a:a + step]
        m = block.shape[0]
        t, kb = buf[:m], keys[:m]
        with np.errstate(over="ignore", invalid="ignore"):
            np.subtract(block, lo, out=t)
            t *= scale
        np.clip(t, 0.0, bins - 1.0, out=t)
        kb[...] = t  # truncation = floor for t >= 0
        kb += offsets
        counts += np.bincount(kb.ravel(), minlength=d * bins)
    C = np.zeros((d, bins + 1))
    np.cumsum(counts.reshape(d, bins), axis=1, out=C[:, 1:])
    dist = np.maximum(0.0, np.maximum(C[:, :-1] - qn, qn - C[:, 1:]))  # (d, bins)
    # masses of the envelope's pieces, in logs: [lower, lo), the bins, [hi, upper)
    logm = np.empty((d, bins + 2))
    with np.errstate(divide="ignore"):
        logm[:, 0] = -half * qn + np.log(lo - lower)
        logm[:, 1:-1] = -half * dist + np.log(width / bins)[:, None]
        logm[:, -1] = -half * (n - qn) + np.log(upper - hi)
    logm[~reliable, 1:-1] = -np.inf
    logm -= logm.max(axis=1, keepdims=True)
    cum = np.cumsum(np.exp(logm), axis=1)
    out = np.empty(d)
    pending = np.flatnonzero(reliable)
    for _ in range(_MAX_ROUNDS):
        if pending.size == 0:
            break
        m = pending.size
        cp = cum[pending]
        u = rng.random(m) * cp[:, -1]
        comp = np.minimum(np.count_nonzero(cp < u[:, None], axis=1), bins + 1)
        r = rng.random(m)
        v = rng.random(m)
        y = np.empty(m)
        accept = np.zeros(m, dtype=bool)
        left, right = comp == 0, comp == bins + 1
        y[left] = lower + r[left] * (lo[pending[left]] - lower)
        y[right] = hi[pending[right]] + r[right] * (upper - hi[pending[right]])
        accept[left | right] = True
        inner = np.flatnonzero(~(left | right))
        if inner.size:
            cols = pending[inner]
            k = comp[inner] - 1
            e0 = _bin_edge(k, lo[cols], hi[cols], scale[cols], bins)
            e1 = _bin_edge(k + 1, lo[cols], hi[cols], scale[cols], bins)
            length = e1 - e0
            nominal = width[cols] / bins
            if np.any(length > nominal * (1.0 + _BIN_SLACK)):  # pragma: no cover - a bug
                raise RuntimeError("a bin is longer than the envelope allows")
            yb = np.minimum(e0 + r[inner] * length, np.nextafter(e1, -np.inf))
            c = _count_leq_subset(X, None if cols.size == d and bool(np.all(cols == np.arange(d)))
                                  else cols, yb)
            excess = np.abs(c - qn) - dist[cols, k]
            if np.any(excess < -1e-9):  # pragma: no cover - a bug
                raise RuntimeError("the envelope does not dominate the density")
            prob = np.exp(-half * excess) * (length / (nominal * (1.0 + _BIN_SLACK)))
            y[inner] = yb
            accept[inner] = v[inner] < prob
        out[pending[accept]] = y[accept]
        pending = pending[~accept]
    todo = ~reliable
    todo[pending] = True
    return out, todo


def _em_columns(X: np.ndarray, *, q: float, eps: float, lower: float, upper: float,
                rng: np.random.Generator, method: str = "auto") -> FloatArray:
    """One exponential-mechanism q-quantile per column of X (n, d), exactly.

    ``method``: "rejection" (:func:`_em_columns_rejection`, whose leftover columns are
    sorted), "sort" (:func:`_em_sorted_rows` on the sorted columns) or "auto": rejection
    when :func:`rejection_bins` allows it (small n eps, as in PLAN's centre and scale
    steps at d >= a few hundred), else sort.  Every method draws from the same
    distribution; they use the random generator differently.
    """
    n, d = X.shape
    if method == "auto" and _v.is_immutable(X):
        method = "sort"  # the sorted columns are memoised: one sort serves every release
    bins = rejection_bins(n, eps) if method == "auto" else (
        max(_MIN_BINS, min(_MAX_BINS, n // 4)) if method == "rejection" else 0)
    if bins == 0 or method == "sort":
        return _em_sorted_rows(sorted_columns(X), q=q, eps=eps, lower=lower, upper=upper,
                               rng=rng)
    out, todo = _em_columns_rejection(X, q=q, eps=eps, lower=lower, upper=upper, bins=bins,
                                      rng=rng)
    if todo.any():
        cols = np.flatnonzero(todo)
        S = np.sort(X[:, cols].T, axis=1)
        out[cols] = _em_sorted_rows(S, q=q, eps=eps, lower=lower, upper=upper, rng=rng)
    return out


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
                             rng: np.random.Generator) -> FloatArray:
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
    return _em_columns(X, q=q, eps=eps, lower=lower, upper=upper, rng=rng)


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


def _bisect(count, k: int, *, rank: float, noise_std: float, lower: float, upper: float,
            steps: int, rng: np.random.Generator) -> np.ndarray:
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
                            rng: np.random.Generator, steps: int = 20) -> FloatArray:
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

    Returns
    -------
    numpy.ndarray, shape (d,)
    """
    X = _v.check_finite_data("X", X)
    rank, rho, lower, upper, steps, rng = _check_binary_search(rank, rho, lower, upper, steps, rng)
    d = X.shape[1]
    noise_std = _budget.gaussian_noise_std(rho / (d * steps), sensitivity=1.0)
    if _v.is_immutable(X):  # the memoised sorted columns: exact counts by bisection
        S = sorted_columns(X)
        return _bisect(lambda mid: _count_leq(S, mid), d, rank=rank, noise_std=noise_std,
                       lower=lower, upper=upper, steps=steps, rng=rng)
    lo, hi = X.min(axis=0), X.max(axis=0)
    return _bisect(lambda mid: _count_leq_columns(X, mid, lo, hi), d, rank=rank,
                   noise_std=noise_std, lower=lower, upper=upper, steps=steps, rng=rng)

