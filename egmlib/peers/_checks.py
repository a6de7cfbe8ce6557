"""Argument checks shared by the modules of :mod:`egmlib.peers`.

They add to :mod:`egmlib._validation` the checks that only these estimators need: a
finite data matrix with enough rows, and the public data universe ``[lower, upper]``.
A wrong type raises :class:`TypeError`, a wrong value :class:`ValueError`; every
message names the argument, the rule and the value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from egmlib import _validation as _v


def check_data(X: Any, *, min_rows: int = 1, name: str = "X") -> np.ndarray:
    """``X`` as a 2-D float64 array with finite entries and at least ``min_rows`` rows.

    A float64 ndarray is returned as it is (no copy), so a read-only array stays
    read-only and can be recognised by the sort cache of :mod:`egmlib.peers.quantiles`.
    """
    if isinstance(X, (bool, np.bool_, str, bytes)) or X is None:
        raise TypeError(f"{name} must be a 2-D array of real numbers, got {name} of type "
                        f"{type(X).__name__}")
    if not isinstance(X, np.ndarray):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a 2-D array of real numbers: {exc}") from None
    if X.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (int or float), got dtype={X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d), got {name}.ndim={X.ndim}")
    n, d = X.shape
    if n < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got n={n}")
    if d < 1:
        raise ValueError(f"{name} must have at least one column, got d={d}")
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(X)  # finite iff every entry is finite, unless the sum overflows
    if not np.isfinite(total) and not np.all(np.isfinite(X)):
        i, j = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(f"{name} must be finite, got {name}[{i}, {j}]={X[i, j]!r}")
    return X


def check_universe(lower: Any, upper: Any) -> tuple[float, float]:
    """The public universe ``[lower, upper]`` of every coordinate: finite, lower < upper."""
    lo = _v.check_real("lower", lower)
    hi = _v.check_real("upper", upper)
    if not np.isfinite(lo):
        raise ValueError(f"lower must be finite, got lower={lo!r}")
    if not np.isfinite(hi):
        raise ValueError(f"upper must be finite, got upper={hi!r}")
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower={lo!r} and upper={hi!r}")
    return lo, hi


def check_vector(name: str, v: Any, d: int, *, positive: bool = False) -> np.ndarray:
    """A length-``d`` float64 vector of finite entries (all > 0 when ``positive``)."""
    if positive:
        a = _v.check_positive_vector(name, v)
    else:
        if isinstance(v, (bool, np.bool_, str, bytes)) or v is None:
            raise TypeError(f"{name} must be a vector of real numbers, got {name} of type "
                            f"{type(v).__name__}")
        try:
            a = np.array(v, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a vector of real numbers: {exc}") from None
        if a.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise ValueError(f"{name} must be finite, got {name}[{bad[0]}]={a[bad[0]]!r}")
    if a.shape != (d,):
        raise ValueError(f"{name} must have length d={d} (one entry per column of X), "
                         f"got shape {a.shape}")
    return a


def check_share(name: str, value: Any) -> float:
    """A budget share in the open interval (0, 1)."""
    return _v.check_probability(name, value)
