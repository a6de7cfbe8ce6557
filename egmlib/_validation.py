"""Shared argument checks for egmlib.

Every public function of egmlib validates its inputs with these helpers, so that bad
input fails early with a :class:`ValueError` whose message names the argument, the rule
it broke and the value it got, e.g. ``"eps must be finite and > 0, got eps=-1.0"``.
Nothing here uses ``assert`` (which disappears under ``python -O``).

Scalars are returned as Python ``float``; vectors as fresh one-dimensional ``float64``
arrays, so callers may modify the result without touching the caller's data.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = [
    "check_real",
    "check_positive_finite",
    "check_nonnegative_finite",
    "check_probability",
    "check_probability_array",
    "check_count",
    "check_nonnegative_vector",
    "check_positive_vector",
    "check_same_shape",
    "check_rng",
]


def _fmt(value: Any) -> str:
    """Short, stable representation of a bad value for an error message."""
    try:
        arr = np.asarray(value)
    except Exception:  # pragma: no cover - exotic objects
        return repr(value)
    if arr.ndim == 0:
        return repr(value.item() if isinstance(value, np.generic) else value)
    return f"array of shape {arr.shape}"


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a Python float; reject bools, non-numbers and arrays.

    NaN and infinities pass here; the more specific checks reject them.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got {name}={value!r} (a bool)")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, numbers.Real):
        raise ValueError(
            f"{name} must be a real scalar, got {name}={_fmt(value)} "
            f"(type {type(value).__name__})"
        )
    return float(value)


def check_positive_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float, requiring ``0 < value < inf``."""
    x = check_real(name, value)
    if not (np.isfinite(x) and x > 0.0):
        raise ValueError(f"{name} must be finite and > 0, got {name}={x!r}")
    return x


def check_nonnegative_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float, requiring ``0 <= value < inf``."""
    x = check_real(name, value)
    if not (np.isfinite(x) and x >= 0.0):
        raise ValueError(f"{name} must be finite and >= 0, got {name}={x!r}")
    return x


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as a float in the open interval ``(0, 1)``."""
    x = check_real(name, value)
    if not (0.0 < x < 1.0):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {name}={x!r}")
    return x


def check_probability_array(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a float array (any shape) with every entry in ``(0, 1)``."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be real, got {name}={value!r} (a bool)")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    bad = ~((arr > 0.0) & (arr < 1.0))  # also catches NaN
    if np.any(bad):
        first = arr[bad].flat[0]
        raise ValueError(
            f"{name} must lie in the open interval (0, 1) entrywise, "
            f"got {name} containing {first!r}"
        )
    return arr


def check_count(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, requiring an integral value ``>= minimum``.

    Integral floats such as ``1e6`` are accepted (the report writes ``n = 10^6``).
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got {name}={value!r} (a bool)")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real) and np.isfinite(value) and float(value).is_integer():
        n = int(value)
    else:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={_fmt(value)}")
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={n}")
    return n


def check_nonnegative_vector(name: str, arr: Any, *, allow_all_zero: bool = False) -> np.ndarray:
    """Return ``arr`` as a non-empty 1-D float64 array of finite entries ``>= 0``.

    Unless ``allow_all_zero`` is true, at least one entry must be ``> 0``.
    """
    if isinstance(arr, (bool, np.bool_)):
        raise ValueError(f"{name} must be a vector of reals, got {name}={arr!r}")
    try:
        a = np.array(arr, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a vector of real numbers: {exc}") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must have at least one entry, got an empty vector")
    finite = np.isfinite(a)
    if not np.all(finite):
        j = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"{name} must be finite, got {name}[{j}]={float(a[j])!r}")
    if np.any(a < 0.0):
        j = int(np.flatnonzero(a < 0.0)[0])
        raise ValueError(f"{name} must be >= 0 entrywise, got {name}[{j}]={float(a[j])!r}")
    if not allow_all_zero and not np.any(a > 0.0):
        raise ValueError(f"{name} must have at least one entry > 0, got all zeros")
    return a


def check_positive_vector(name: str, arr: Any) -> np.ndarray:
    """Return ``arr`` as a non-empty 1-D float64 array of finite entries ``> 0``."""
    a = check_nonnegative_vector(name, arr)
    if np.any(a == 0.0):
        j = int(np.flatnonzero(a == 0.0)[0])
        raise ValueError(f"{name} must be > 0 entrywise, got {name}[{j}]=0.0")
    return a


def check_same_shape(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    """Require ``a`` and ``b`` to have the same shape."""
    sa, sb = np.shape(a), np.shape(b)
    if sa != sb:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape, got {name_a} of shape {sa} "
            f"and {name_b} of shape {sb}"
        )


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """Require an explicit :class:`numpy.random.Generator` (no global state, no seeds)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{name} must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed), "
            f"got {name} of type {type(rng).__name__}"
        )
    return rng
