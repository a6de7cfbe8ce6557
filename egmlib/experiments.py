r"""The report's empirical setup (Section 5): Zipf standard deviations and Figure 2.

The report draws no data: a hypothetical data set is described by its standard
deviations :math:`\sigma_i = i^{-\alpha}/\sum_{j\le d} j^{-\alpha}` (a normalised Zipf law,
:math:`\sum_i\sigma_i = 1`), the dimension :math:`d` and the number of points :math:`n`
(clipping probability :math:`1/n`).  Figure 2 plots the improvement
:math:`\mathcal E_n/\mathcal E_t` of Algorithm 3 over the clipped Gaussian mechanism
(:func:`egmlib.scaling.figure2_errors`) on the grid
``FIGURE2_D x FIGURE2_N x FIGURE2_ALPHA``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from egmlib._validation import check_count, check_nonnegative_finite

__all__ = [
    "FIGURE2_D",
    "FIGURE2_N",
    "FIGURE2_ALPHA",
    "PUBLISHED_FIGURE2_PATH",
    "zipf_sigmas",
    "load_published_figure2",
    "figure2_grid",
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


def zipf_sigmas(d: int, alpha: float) -> np.ndarray:
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
    >>> zipf_sigmas(3, 1.0).round(6).tolist()
    [0.545455, 0.272727, 0.181818]
    >>> s = zipf_sigmas(10**6, 100.0)
    >>> float(s.sum()), bool(s[0] > 0.99999), int(np.count_nonzero(s))
    (1.0, True, 1722)
    """
    d = check_count("d", d, minimum=1)
    if d > _D_MAX:
        raise ValueError(f"d must be <= {_D_MAX}, got d={d}")
    alpha = check_nonnegative_finite("alpha", alpha)
    i = np.arange(1, d + 1, dtype=float)
    w = np.exp(-alpha * np.log(i))
    return w / math.fsum(w)


def load_published_figure2(path: str | Path | None = None) -> dict[str, np.ndarray]:
    r"""The 108 published Figure 2 points as a dict of 1-D arrays.

    Keys: ``d`` and ``n`` (int64), ``alpha``, ``Cn_squared``, ``Ct_squared``,
    ``improvement`` (float64), in the file's row order (``d``, then ``n``, then ``alpha``
    ascending -- the same order as :func:`figure2_grid`).  These are the values as the
    report's authors computed them (chi2comb, absolute tolerance 1/n), not ground truth.

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
    cols = list(zip(*body))
    out: dict[str, np.ndarray] = {}
    for name, col in zip(expected, cols):
        if name in ("d", "n"):
            out[name] = np.array([int(float(v)) for v in col], dtype=np.int64)
        else:
            out[name] = np.array([float(v) for v in col], dtype=float)
    return out


def figure2_grid(
    d_values=FIGURE2_D, n_values=FIGURE2_N, alphas=FIGURE2_ALPHA
) -> dict[str, np.ndarray]:
    r"""Recompute Figure 2: exact :math:`C_n^2`, :math:`C_t^2` and the improvement.

    For every :math:`(d, n, \alpha)` (``d`` outermost, ``alpha`` innermost, as in the
    published CSV): Zipf standard deviations, the squared clipping radii at tail
    probability :math:`1/n` from :func:`egmlib.scaling.clipping_thresholds` (one vectorised
    :func:`egmlib.gchisq.isf` call per :math:`(d,\alpha)` for all :math:`n`), and
    :math:`\mathcal E_n/\mathcal E_t = d\,C_n^2/C_t^2` (:math:`\sum\sigma = 1`; the factor
    :math:`d` is explained in :func:`egmlib.scaling.figure2_errors`).

    Returns a dict of 1-D arrays with the keys of :func:`load_published_figure2`.
    """
    from egmlib.scaling import clipping_thresholds

    ds = [check_count("d_values entry", d, minimum=1) for d in d_values]
    ns = [check_count("n_values entry", n, minimum=2) for n in n_values]
    als = [check_nonnegative_finite("alphas entry", a) for a in alphas]
    if not ds or not ns or not als:
        raise ValueError("d_values, n_values and alphas must each have at least one entry")
    p = 1.0 / np.array(ns, dtype=float)
    rows_d, rows_n, rows_a, cn, ct, imp = [], [], [], [], [], []
    for d in ds:
        cn_da = np.empty((len(ns), len(als)))
        ct_da = np.empty((len(ns), len(als)))
        for k, a in enumerate(als):
            sig = zipf_sigmas(d, a)
            cn2, ct2 = clipping_thresholds(sig, p=p)
            cn_da[:, k] = cn2
            ct_da[:, k] = ct2
        for i, n in enumerate(ns):
            for k, a in enumerate(als):
                rows_d.append(d)
                rows_n.append(n)
                rows_a.append(a)
                cn.append(cn_da[i, k])
                ct.append(ct_da[i, k])
                imp.append(d * cn_da[i, k] / ct_da[i, k])
    return {
        "d": np.array(rows_d, dtype=np.int64),
        "n": np.array(rows_n, dtype=np.int64),
        "alpha": np.array(rows_a, dtype=float),
        "Cn_squared": np.array(cn),
        "Ct_squared": np.array(ct),
        "improvement": np.array(imp),
    }


def leading_count(sigma, *, share: float = 0.99, power: int = 1) -> int:
    r"""How many of the largest entries hold ``share`` of :math:`\sum_j\sigma_j^{power}` (Figure 1).

    The report's Figure 1 shows normalised Zipf standard deviations for
    :math:`\alpha \in \{0.1, 1, 3\}`, :math:`d = 100`, and says that "for high :math:`\alpha`
    only a few dimensions have any variance, and for low :math:`\alpha` it is almost
    uniformly distributed". With ``power=1`` this counts standard deviations (what the
    figure plots), with ``power=2`` variances (what the text says).

    Examples
    --------
    >>> [leading_count(zipf_sigmas(100, a)) for a in (0.1, 1.0, 3.0)]
    [99, 95, 6]
    >>> [leading_count(zipf_sigmas(100, a), power=2) for a in (0.1, 1.0, 3.0)]
    [99, 38, 2]
    """
    from egmlib._validation import check_nonnegative_vector, check_probability

    s = check_nonnegative_vector("sigma", sigma)
    share = check_probability("share", share)
    power = check_count("power", power, minimum=1)
    v = np.sort(s**power)[::-1]
    c = np.cumsum(v) / math.fsum(v)
    return int(np.searchsorted(c, share) + 1)
