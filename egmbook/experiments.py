r"""The report's empirical setup (Section 5): Zipf standard deviations, the clipping radii
:math:`C_n` and :math:`C_t`, the two errors of Figure 2 and its grid.

The report draws no data: a hypothetical data set is described by its standard
deviations :math:`\sigma_i = i^{-\alpha}/\sum_{j\le d} j^{-\alpha}` (a normalised Zipf law,
:math:`\sum_i\sigma_i = 1`), the dimension :math:`d` and the number of points :math:`n`
(clipping probability :math:`1/n`).  Figure 2 plots the improvement
:math:`\mathcal E_n/\mathcal E_t` of Algorithm 3 over the clipped Gaussian mechanism
(:func:`figure2_errors`) on the grid ``FIGURE2_D x FIGURE2_N x FIGURE2_ALPHA``.  The
radii are exact quantiles of generalized chi-square laws (:func:`egmlib.gchisq.isf`),
not bounds; the closed forms they enter live in :mod:`egmlib.scaling`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib import gchisq
from egmlib import validation as _v

__all__ = [
    "FIGURE2_D",
    "FIGURE2_N",
    "FIGURE2_ALPHA",
    "PUBLISHED_FIGURE2_PATH",
    "ClippingRadii",
    "Figure2Errors",
    "Figure2Table",
    "zipf_sigmas",
    "clipping_radii",
    "figure2_errors",
    "figure2_improvement",
    "load_published_figure2",
    "figure2_grid",
    "leading_count",
]

#: Dimensions of Figure 2's three panels.
FIGURE2_D = (10, 100, 1000)
#: Numbers of points (clipping probability 1/n).
FIGURE2_N = (10**2, 10**3, 10**6)
#: Zipf exponents on Figure 2's horizontal axis.
FIGURE2_ALPHA = (0.01, 0.1, 0.5, 1, 2, 5, 7.5, 10, 25, 50, 75, 100)

#: The published Figure 2 values, committed with the repository.
PUBLISHED_FIGURE2_PATH = Path(__file__).resolve().parent.parent / "data" / "report_figure2_published.csv"

_D_MAX = 10**7


def zipf_sigmas(d: int, *, alpha: float) -> NDArray[np.float64]:
    r"""Normalised Zipf standard deviations of Section 5.

    :math:`\sigma_i = i^{-\alpha}/\sum_{j=1}^d j^{-\alpha}`, :math:`i = 1,\dots,d`: positive
    entries (up to underflow), non-increasing, summing to 1.

    Computed as :math:`\exp(-\alpha\ln i)`, which is :math:`\le 1` with first term exactly 1,
    so the normalising sum lies in :math:`[1, d]`: no overflow, no division by zero, no
    NaN for any :math:`\alpha\ge 0` and :math:`d\le 10^7`.  At :math:`\alpha = 100`
    the entries with :math:`i\ge 1200` fall below :math:`10^{-308}` (subnormal, fewer
    significant digits) and those with :math:`i\ge 1723` below the smallest subnormal
    :math:`5\cdot10^{-324}`: they are exactly 0, a legitimate value for weights that small
    (zero standard deviations drop out of every formula downstream).

    Parameters
    ----------
    d : int, 1 <= d <= 10**7
    alpha : float >= 0 (0 gives equal standard deviations)

    Examples
    --------
    >>> zipf_sigmas(3, alpha=1.0).round(6).tolist()
    [0.545455, 0.272727, 0.181818]
    >>> s = zipf_sigmas(10**6, alpha=100.0)
    >>> float(s.sum()), bool(s[0] > 0.99999), int(np.count_nonzero(s))
    (1.0, True, 1722)
    """
    d = _v.check_count("d", d, minimum=1, maximum=_D_MAX)
    alpha = _v.check_nonnegative_finite("alpha", alpha)
    i = np.arange(1, d + 1, dtype=float)
    with np.errstate(over="ignore"):  # -inf exponents at huge alpha give exact zeros
        w = np.exp(-alpha * np.log(i))
    return w / math.fsum(w)


class ClippingRadii(NamedTuple):
    r"""The two clipping radii of Section 5 at one tail probability (or an array of them).

    ``Cn`` is the baseline's radius in the original space, ``Ct`` Algorithm 3's radius in
    the space transformed by Lemma 4.1; ``Cn_squared`` and ``Ct_squared`` are the
    quantiles themselves (as computed, not squares of the rounded radii).  Always in this
    order: the baseline (``n``) first, as in the report's :math:`\mathcal E_n/\mathcal E_t`.
    """

    Cn: float | NDArray[np.float64]  #: the baseline's radius C_n in the original space
    Ct: float | NDArray[np.float64]  #: Algorithm 3's radius C_t in the transformed space
    Cn_squared: float | NDArray[np.float64]  #: C_n^2, the upper p-quantile of sum_j sigma_j^2 Z_j^2
    Ct_squared: float | NDArray[np.float64]  #: C_t^2, the upper p-quantile of sum_j sigma_j Z_j^2 / sum_i sigma_i

    def of(self, method: str) -> float | NDArray[np.float64]:
        """The radius used by ``method``: ``Ct`` for ``"alg3"``, ``Cn`` for ``"base"``."""
        method = _v.check_choice("method", method, ("alg3", "base"))
        return self.Ct if method == "alg3" else self.Cn


def clipping_radii(sigma: ArrayLike, *, p: ArrayLike) -> ClippingRadii:
    r"""Section 5's clipping radii :math:`C_n` and :math:`C_t` at tail probability ``p``.

    * :math:`C_n^2`: the upper p-quantile of :math:`\|x_i-\mu\|^2 = \sum_j\sigma_j^2Z_j^2`
      (no transformation; weights :math:`\sigma_j^2`): the baseline's radius;
    * :math:`C_t^2`: the upper p-quantile of :math:`\|(x_i-\mu)\odot b\|^2` with
      Lemma 4.1's :math:`b`, i.e. weights :math:`(b_j\sigma_j)^2 = \sigma_j/\sum_i\sigma_i`:
      Algorithm 3's radius.

    Both come from :func:`egmlib.gchisq.isf` (exact to about 1e-10 relative), not from a
    bound.  The report uses :math:`p = 1/n`.  ``p`` may be an array (the fields are then
    arrays of its shape).  :math:`C_n^2` is computed as the :math:`\sigma_*^2`-scaled
    quantile of :math:`(\sigma_j/\sigma_*)^2`-weights, so tiny :math:`\sigma` do not
    underflow.

    Examples
    --------
    >>> r = clipping_radii([1.0, 1.0], p=0.5)   # chi^2_2: 2 ln 2 (C_n^2) and ln 2 (C_t^2)
    >>> round(r.Cn_squared, 10), round(r.Ct_squared, 10)
    (1.3862943611, 0.6931471806)
    >>> r.of("alg3") == r.Ct, r.of("base") == r.Cn
    (True, True)
    """
    s = _v.check_nonnegative_vector("sigma", sigma)
    pa = _v.check_probability_array("p", p)
    smax = s.max()
    rel = s / smax
    cn2 = np.asarray(gchisq.isf(pa, w=rel**2), dtype=float)
    ct2 = np.asarray(gchisq.isf(pa, w=rel / np.sum(rel)), dtype=float)  # = sigma / sum sigma
    with np.errstate(over="ignore"):
        cn2 = smax * smax * cn2
    _v.check_finite_result(cn2, what="C_n^2", inputs="sigma")
    if pa.ndim == 0:
        cn2_0, ct2_0 = float(cn2), float(ct2)
        return ClippingRadii(Cn=math.sqrt(cn2_0), Ct=math.sqrt(ct2_0), Cn_squared=cn2_0, Ct_squared=ct2_0)
    return ClippingRadii(Cn=np.sqrt(cn2), Ct=np.sqrt(ct2), Cn_squared=cn2, Ct_squared=ct2)


class Figure2Errors(NamedTuple):
    r"""The two expected noise errors of Figure 2, :math:`(\mathcal E_n, \mathcal E_t)`."""

    En: float  #: the baseline's error d (2 C_n sigma_opt)^2
    Et: float  #: Algorithm 3's error (2 C_t sigma_opt sum_j sigma_j)^2


def figure2_errors(sigma: ArrayLike, *, n: int, sigma_opt: float = 1.0) -> Figure2Errors:
    r"""The two expected noise errors compared in Figure 2: :math:`(\mathcal E_n, \mathcal E_t)`.

    * :math:`\mathcal E_n = d\,(2C_n\sigma_{opt})^2`: the Gaussian mechanism on data clipped
      to radius :math:`C_n` (sensitivity :math:`2C_n`), eqs. (1)/(5).  **The report writes**
      :math:`\mathcal E_n = (2C_n\sigma_{opt})^2` **without the factor** :math:`d`; its
      published Figure 2 values do include it (improvement :math:`= d\,C_n^2/C_t^2`, e.g.
      :math:`d=10,\ \alpha=0.01,\ n=100`: :math:`10\cdot0.2421875/2.3125 = 1.0473`).  See the
      errata page.
    * :math:`\mathcal E_t = (2C_t\sigma_{opt})^2\sum_j b_j^{-2} = (2C_t\sigma_{opt})^2
      (\sum_j\sigma_j)^2`: Algorithm 3 with Lemma 4.1's scaling, eq. (24).

    Both use the exact quantiles of :func:`clipping_radii` at :math:`p = 1/n`.
    ``n`` is an integer >= 2 (the number of data points).

    Examples
    --------
    >>> En, Et = figure2_errors([0.5, 0.5], n=4)   # equal sigmas: no improvement
    >>> round(En / Et, 12)
    1.0
    """
    s = _v.check_nonnegative_vector("sigma", sigma)
    n = _v.check_count("n", n, minimum=2)
    so = _v.check_positive_finite("sigma_opt", sigma_opt)
    r = clipping_radii(s, p=1.0 / n)  # at one p: Python floats
    smax = float(s.max())
    ssum = smax * float(np.sum(s / smax))
    # Python floats: an overflow gives inf without a warning, reported just below
    e_n = s.size * 4.0 * so * so * float(r.Cn_squared)
    e_t = 4.0 * so * so * float(r.Ct_squared) * ssum * ssum
    _v.check_finite_result([e_n, e_t], what="E_n or E_t", inputs="sigma or sigma_opt")
    return Figure2Errors(En=e_n, Et=e_t)


def figure2_improvement(sigma: ArrayLike, *, n: int) -> float:
    r"""Figure 2's improvement :math:`\mathcal E_n/\mathcal E_t = d\,C_n^2/(C_t^2(\sum_j\sigma_j)^2)`.

    Invariant under rescaling :math:`\sigma` (computed for :math:`\sigma/\max_j\sigma_j`, so
    it never overflows); :math:`\sigma_{opt}` cancels.

    Examples
    --------
    >>> round(figure2_improvement([1.0, 0.0], n=100), 12)   # one coordinate: the largest, d
    2.0
    """
    s = _v.check_nonnegative_vector("sigma", sigma)
    n = _v.check_count("n", n, minimum=2)
    rel = s / s.max()
    r = clipping_radii(rel, p=1.0 / n)
    return float(s.size * r.Cn_squared / (r.Ct_squared * float(np.sum(rel)) ** 2))


@dataclass(frozen=True)
class Figure2Table:
    r"""Figure 2 as a table: one entry per :math:`(d, n, \alpha)`, in the published order.

    Rows are ordered ``d``, then ``n``, then ``alpha`` ascending (``alpha`` innermost), the
    order of the published CSV and of :func:`figure2_grid`; every field is a read-only 1-D
    array of the same length.
    """

    d: NDArray[np.int64]  #: dimension
    n: NDArray[np.int64]  #: number of points (clipping probability 1/n)
    alpha: NDArray[np.float64]  #: Zipf exponent
    Cn_squared: NDArray[np.float64]  #: C_n^2, the baseline's squared radius
    Ct_squared: NDArray[np.float64]  #: C_t^2, Algorithm 3's squared radius
    improvement: NDArray[np.float64]  #: E_n / E_t = d C_n^2 / C_t^2 (sum sigma = 1)

    def __post_init__(self) -> None:
        sizes = set()
        for f in fields(self):
            a = np.array(getattr(self, f.name), dtype=np.int64 if f.name in ("d", "n") else np.float64)
            a.setflags(write=False)
            object.__setattr__(self, f.name, a)
            sizes.add(a.shape)
        if len(sizes) != 1 or len(next(iter(sizes))) != 1:
            raise ValueError(f"Figure2Table fields must be 1-D arrays of one length, got shapes {sizes}")

    def __len__(self) -> int:
        return int(self.d.size)


def load_published_figure2(path: str | Path | None = None) -> Figure2Table:
    r"""The 108 published points of Figure 2 (Section 5), as a :class:`Figure2Table`.

    In the file's row order (``d``, then ``n``, then ``alpha`` ascending -- the same order
    as :func:`figure2_grid`).  These are the values as the report's authors computed them
    (chi2comb, absolute tolerance 1/n), not ground truth.

    Parameters
    ----------
    path : optional
        Defaults to :data:`PUBLISHED_FIGURE2_PATH` (``data/report_figure2_published.csv``
        in the repository).

    Raises
    ------
    FileNotFoundError
        If the CSV is missing (e.g. egmlib installed without the repository's ``data/``).
    ValueError
        If its header is not the expected one.
    """
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path, got path of type {type(path).__name__}")
    p = Path(path) if path is not None else PUBLISHED_FIGURE2_PATH
    if not p.is_file():
        raise FileNotFoundError(
            f"published Figure 2 data not found at {p}; it ships with the repository as "
            "data/report_figure2_published.csv (install egmlib editable from the repository)"
        )
    expected = ["d", "n", "alpha", "Cn_squared", "Ct_squared", "improvement"]
    with p.open(newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows or rows[0] != expected:
        raise ValueError(f"{p}: header must be {expected}, got {rows[0] if rows else None}")
    body = [r for r in rows[1:] if r]
    if not body:
        raise ValueError(f"{p}: the file has a header and no rows")
    cols = dict(zip(expected, zip(*body, strict=True), strict=True))

    def column(name: str) -> list[float]:
        return [float(v) for v in cols[name]]

    return Figure2Table(d=np.array(column("d"), dtype=np.int64), n=np.array(column("n"), dtype=np.int64),
                        alpha=np.array(column("alpha")), Cn_squared=np.array(column("Cn_squared")),
                        Ct_squared=np.array(column("Ct_squared")), improvement=np.array(column("improvement")))


def _entries(name: str, values: Iterable[float]) -> list[float]:
    """The entries of a grid argument: a non-empty one-dimensional sequence of numbers."""
    if isinstance(values, Iterable) and not isinstance(values, (str, bytes, np.ndarray)):
        values = list(values)
    return _v.as_real_array(name, values, ndim=1).tolist()


def figure2_grid(
    *,
    d_values: Iterable[int] = FIGURE2_D,
    n_values: Iterable[int] = FIGURE2_N,
    alphas: Iterable[float] = FIGURE2_ALPHA,
) -> Figure2Table:
    r"""Recompute Figure 2 (Section 5): exact :math:`C_n^2`, :math:`C_t^2` and the improvement.

    For every :math:`(d, n, \alpha)` (``d`` outermost, ``alpha`` innermost, as in the
    published CSV): Zipf standard deviations, the squared clipping radii at tail
    probability :math:`1/n` from :func:`clipping_radii` (one vectorised
    :func:`egmlib.gchisq.isf` call per :math:`(d,\alpha)` for all :math:`n`), and
    :math:`\mathcal E_n/\mathcal E_t = d\,C_n^2/C_t^2` (:math:`\sum\sigma = 1`; the factor
    :math:`d` is explained in :func:`figure2_errors`).

    Returns a :class:`Figure2Table` in the row order of :func:`load_published_figure2`.
    """
    ds = [_v.check_count("d_values entry", d, minimum=1, maximum=_D_MAX) for d in _entries("d_values", d_values)]
    ns = [_v.check_count("n_values entry", n, minimum=2, maximum=10**18) for n in _entries("n_values", n_values)]
    als = [_v.check_nonnegative_finite("alphas entry", a) for a in _entries("alphas", alphas)]
    p = np.array([1.0 / n for n in ns])
    rows_d: list[int] = []
    rows_n: list[int] = []
    rows_a: list[float] = []
    cn: list[float] = []
    ct: list[float] = []
    imp: list[float] = []
    for d in ds:
        cn_da = np.empty((len(ns), len(als)))
        ct_da = np.empty((len(ns), len(als)))
        for k, a in enumerate(als):
            r = clipping_radii(zipf_sigmas(d, alpha=a), p=p)
            cn_da[:, k] = r.Cn_squared
            ct_da[:, k] = r.Ct_squared
        for i, n in enumerate(ns):
            for k, a in enumerate(als):
                rows_d.append(d)
                rows_n.append(n)
                rows_a.append(a)
                cn.append(cn_da[i, k])
                ct.append(ct_da[i, k])
                imp.append(d * cn_da[i, k] / ct_da[i, k])
    return Figure2Table(d=np.array(rows_d, dtype=np.int64), n=np.array(rows_n, dtype=np.int64),
                        alpha=np.array(rows_a), Cn_squared=np.array(cn), Ct_squared=np.array(ct),
                        improvement=np.array(imp))


def leading_count(sigma: ArrayLike, *, share: float = 0.99, power: int = 1) -> int:
    r"""How many of the largest entries hold ``share`` of :math:`\sum_j\sigma_j^{power}` (Figure 1).

    The report's Figure 1 shows normalised Zipf standard deviations for
    :math:`\alpha \in \{0.1, 1, 3\}`, :math:`d = 100`, and says that "for high :math:`\alpha`
    only a few dimensions have any variance, and for low :math:`\alpha` it is almost
    uniformly distributed". With ``power=1`` this counts standard deviations (what the
    figure plots), with ``power=2`` variances (what the text says).

    Parameters
    ----------
    sigma : array_like
        Standard deviations :math:`\ge 0`, at least one positive.
    share : float in (0, 1), optional
        The share of the total to be held.
    power : int, 1 <= power <= 8, optional
        1 for standard deviations, 2 for variances.

    Examples
    --------
    >>> [leading_count(zipf_sigmas(100, alpha=a)) for a in (0.1, 1.0, 3.0)]
    [99, 95, 6]
    >>> [leading_count(zipf_sigmas(100, alpha=a), power=2) for a in (0.1, 1.0, 3.0)]
    [99, 38, 2]
    """
    s = _v.check_nonnegative_vector("sigma", sigma)
    share = _v.check_probability("share", share)
    power = _v.check_count("power", power, minimum=1, maximum=8)
    v = np.sort((s / s.max()) ** power)[::-1]  # relative to the largest: no overflow, no underflow to 0
    c = np.cumsum(v) / math.fsum(v)
    return int(np.searchsorted(c, share) + 1)
