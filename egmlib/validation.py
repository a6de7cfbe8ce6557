"""Argument checks: the validators behind every public function of egmlib, public.

The library's functions check their arguments through these validators, and code built on
egmlib (the book's own package ``egmbook`` among it) may call them to give its functions
the same rules and the same messages::

    >>> from egmlib import validation
    >>> validation.check_positive_finite("eps", 0.5)
    0.5
    >>> try:
    ...     validation.check_positive_finite("eps", -1.0)
    ... except ValueError as error:
    ...     print(error)
    eps must be finite and > 0, got eps=-1.0

Each validator is named for the rule it checks (``check_probability``: a number in
``(0, 1)``; ``check_positive_vector``: a vector of finite entries ``> 0``) and returns the
checked value in a canonical form.  One rule for the whole library:

* a wrong **type** raises :class:`TypeError`: a bool, a string, ``None``, a complex
  number or an arbitrary object where a real number belongs, an array of such entries
  where a real array belongs, a method name that is not a string, a random generator
  that is not a :class:`numpy.random.Generator`;
* a wrong **value** of the right type raises :class:`ValueError`: NaN, an infinity,
  a number out of range, an empty, ragged or wrongly shaped array, a vector of the
  wrong length, a name that is not one of the allowed ones, and a result that
  overflows the float64 range (see :func:`check_finite_result`).

Every message names the argument, the rule it broke and the value it got, e.g.
``"eps must be finite and > 0, got eps=-1.0"``.  Nothing here uses ``assert``
(which disappears under ``python -O``).

Scalars come back as Python ``float``/``int``/``bool``; arrays as fresh ``float64``
arrays (callers may modify them without touching the caller's data), except
:func:`check_data_matrix`, which keeps a data matrix (possibly a large
:class:`numpy.memmap`) as it is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "FloatArray",
    "check_real",
    "check_positive_finite",
    "check_nonnegative_finite",
    "check_probability",
    "check_closed_interval",
    "check_bounds",
    "check_count",
    "check_bool",
    "check_choice",
    "check_rng",
    "check_callable",
    "check_mapping",
    "as_real_array",
    "check_finite_array",
    "check_finite_vector",
    "check_nonnegative_vector",
    "check_positive_vector",
    "check_scaling_vector",
    "check_probability_array",
    "check_length",
    "check_data_matrix",
    "check_finite_data",
    "check_finite_result",
    "check_symbolic_scalar",
    "check_symbolic_vector",
    "check_unnormalised_box",
    "check_arm_rho",
    "check_arm_inputs",
    "check_finite_rows",
    "check_budget_parts",
    "check_instance",
    "check_dimension",
]

#: The type of the float64 arrays the array validators return.
FloatArray = npt.NDArray[np.float64]

#: The largest float64 as an exact integer.
_FLOAT_MAX_INT = int(np.finfo(np.float64).max)

#: dtype kinds accepted as real numbers (signed, unsigned integers and floats).
_REAL_KINDS = "iuf"


def _fmt(value: Any) -> str:
    """Short, stable representation of a bad value for an error message."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return repr(value.item())
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else f"an object of type {type(value).__name__}"


def _type_error(name: str, rule: str, value: Any) -> TypeError:
    return TypeError(f"{name} must be {rule}, got {name}={_fmt(value)} (type {type(value).__name__})")


# ----------------------------------------------------------------------------------------
# scalars
# ----------------------------------------------------------------------------------------
def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a Python float; TypeError for anything that is not a real scalar.

    Bools, strings, ``None``, complex numbers and arrays with more than zero dimensions
    are type errors.  NaN and infinities pass here; the more specific checks reject them.
    A Python int beyond the float range (``10**400``) becomes an infinity of its sign, so
    that those checks reject it with a ValueError naming the argument.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise _type_error(name, "a real number (not a bool)", value)
    if isinstance(value, (np.timedelta64, np.datetime64)):  # numpy registers timedelta64 as an integer
        raise _type_error(name, "a real number (not a time)", value)
    if not isinstance(value, numbers.Real):
        raise _type_error(name, "a real number", value)
    try:
        return float(value)
    except OverflowError:  # a Python int (or Fraction) beyond the float range
        positive: bool = value > 0  # type: ignore[operator]  # numbers.Real has no __gt__ in typeshed
        return math.inf if positive else -math.inf


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


def check_closed_interval(name: str, value: Any, *, low: float, high: float) -> float:
    """Return ``value`` as a float in the closed interval ``[low, high]`` (e.g. a quantile level)."""
    x = check_real(name, value)
    if not (low <= x <= high):
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {name}={x!r}")
    return x


def check_bounds(lower: Any, upper: Any, *, names: tuple[str, str] = ("lower", "upper")) -> tuple[float, float]:
    """A public interval ``[lower, upper]``: finite ends, ``lower < upper`` and a finite width.

    ``names`` are the two arguments' names in the messages.
    """
    lo_name, hi_name = names
    lo, hi = check_real(lo_name, lower), check_real(hi_name, upper)
    for name, x in ((lo_name, lo), (hi_name, hi)):
        if not np.isfinite(x):
            raise ValueError(f"{name} must be finite, got {name}={x!r}")
    if not lo < hi:
        raise ValueError(f"{lo_name} must be < {hi_name}, got {lo_name}={lo!r} and {hi_name}={hi!r}")
    if not np.isfinite(hi - lo):
        raise ValueError(
            f"{hi_name} - {lo_name} must be finite (it overflows the float64 range), got "
            f"{lo_name}={lo!r} and {hi_name}={hi!r}; rescale the data"
        )
    return lo, hi


def check_count(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Return ``value`` as an int in ``[minimum, maximum]``.

    Integral floats such as ``1e6`` are accepted (the report writes ``n = 10^6``); a
    non-integral or non-finite float is a ValueError, a non-number a TypeError.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise _type_error(name, "an integer (not a bool)", value)
    if isinstance(value, (np.timedelta64, np.datetime64)):  # numpy registers timedelta64 as an integer
        raise _type_error(name, "an integer (not a time)", value)
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real):
        x = float(value)
        if not (np.isfinite(x) and x.is_integer()):
            raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={x!r}")
        n = int(x)
    else:
        raise _type_error(name, "an integer", value)
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {name}={n}")
    if n > _FLOAT_MAX_INT:  # every count is used in float arithmetic
        raise ValueError(f"{name} must be an integer within the float64 range (<= 1.8e308), got {name} "
                         f"of {len(str(n))} digits")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {name}={n}")
    return n


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a bool; only ``True`` and ``False`` (also numpy's) are accepted."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise _type_error(name, "True or False", value)


def check_choice(name: str, value: Any, choices: Collection[str]) -> str:
    """Return ``value`` if it is one of the strings ``choices``."""
    if not isinstance(value, str):
        raise _type_error(name, f"one of the strings {sorted(choices)}", value)
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {name}={value!r}")
    return value


def check_rng(name: str, value: Any) -> np.random.Generator:
    """Require an explicit :class:`numpy.random.Generator` (no global state, no seeds)."""
    if not isinstance(value, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed), "
            f"got {name} of type {type(value).__name__}"
        )
    return value


def check_callable(name: str, value: Any) -> Callable[..., Any]:
    """Require a callable."""
    if not callable(value):
        raise _type_error(name, "callable", value)
    return value


def check_mapping(name: str, value: Any, *, keys: Collection[str] | None = None) -> Mapping[Any, Any]:
    """Require a non-empty mapping, with at least ``keys`` when given."""
    if not isinstance(value, Mapping):
        raise _type_error(name, "a mapping", value)
    if not value:
        raise ValueError(f"{name} must be a non-empty mapping, got an empty one")
    if keys is not None:
        missing = [k for k in keys if k not in value]
        if missing:
            raise ValueError(f"{name} must have the keys {list(keys)}, got {name} without {missing}")
    return value


# ----------------------------------------------------------------------------------------
# arrays
# ----------------------------------------------------------------------------------------
def _as_numeric(name: str, value: Any) -> np.ndarray:
    """``np.asarray(value)`` with a real dtype, or the right exception.

    Ragged nested sequences are a ValueError (a shape error); strings, bools, complex
    numbers, ``None`` and other objects are TypeErrors.  Nothing is coerced: a list of
    numeric strings is not an array of numbers.
    """
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise _type_error(name, "an array of real numbers", value)
    if isinstance(value, np.ma.MaskedArray):  # np.asarray would drop the mask
        raise TypeError(f"{name} must be a plain array of real numbers, got a masked array: fill or drop the "
                        f"masked entries first (e.g. {name}.filled(...) or {name}.compressed())")
    try:
        arr = np.asarray(value)
    except ValueError as exc:  # numpy 2: inhomogeneous (ragged) nesting
        raise ValueError(
            f"{name} must be a rectangular array of real numbers (rows of equal length), "
            f"got a ragged sequence: {exc}"
        ) from None
    except TypeError as exc:
        raise TypeError(f"{name} must be an array of real numbers: {exc}") from None
    kind = arr.dtype.kind
    if kind == "O" and arr.size and all(
            isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in arr.flat):
        # Python ints beyond the float range: real numbers whose value is out of range
        big = next((v for v in arr.flat if isinstance(v, numbers.Integral) and abs(int(v)) > _FLOAT_MAX_INT), None)
        if big is None:  # e.g. Fractions, or ints next to floats: exact reals numpy kept as objects
            try:
                return arr.astype(np.float64)
            except OverflowError:
                raise ValueError(f"{name} must hold finite float64 values, got an entry beyond "
                                 "the float range") from None
        raise ValueError(f"{name} must hold finite float64 values, got an integer of "
                         f"{len(str(abs(int(big))))} digits in {name}, beyond the float range")
    if kind == "b":
        raise TypeError(f"{name} must hold real numbers, got booleans (dtype {arr.dtype})")
    if kind not in _REAL_KINDS:
        what = {"U": "strings", "S": "bytes", "c": "complex numbers", "O": "objects"}.get(kind, "non-numbers")
        raise TypeError(f"{name} must hold real numbers, got {what} (dtype {arr.dtype})")
    return arr


def as_real_array(name: str, value: Any, *, ndim: int | None = None, nonempty: bool = True) -> FloatArray:
    """``value`` as a fresh float64 array; type and shape checked, entries not.

    ``ndim`` (when given) is the required number of dimensions; ``nonempty`` requires at
    least one entry.
    """
    arr = _as_numeric(name, value)
    if ndim is not None and arr.ndim != ndim:
        rule = {0: "a scalar", 1: "one-dimensional", 2: "two-dimensional"}.get(ndim, f"{ndim}-dimensional")
        raise ValueError(f"{name} must be {rule}, got {name} of shape {arr.shape}")
    if nonempty and arr.size == 0:
        raise ValueError(f"{name} must have at least one entry, got {name} of shape {arr.shape}")
    return np.array(arr, dtype=np.float64)


def _first_bad(name: str, a: np.ndarray, bad: np.ndarray) -> str:
    idx = np.unravel_index(int(np.flatnonzero(bad)[0]), a.shape)
    where = ", ".join(str(int(i)) for i in idx)
    return f"{name}[{where}]={float(a[idx])!r}" if a.ndim else f"{name}={float(a)!r}"


def check_finite_array(name: str, value: Any, *, ndim: int | None = None, nonempty: bool = True) -> FloatArray:
    """A fresh float64 array with finite entries (any shape unless ``ndim`` is given)."""
    a = as_real_array(name, value, ndim=ndim, nonempty=nonempty)
    bad = ~np.isfinite(a)
    if np.any(bad):
        raise ValueError(f"{name} must be finite, got {_first_bad(name, a, bad)}")
    return a


def check_length(name: str, v: np.ndarray, *, length: int, of: str = "") -> None:
    """Require ``v.shape == (length,)``; ``of`` says what the length counts."""
    if v.shape != (length,):
        what = f" ({of})" if of else ""
        raise ValueError(f"{name} must have length d={length}{what}, got {name} of shape {v.shape}")


def check_finite_vector(name: str, value: Any, *, length: int | None = None, of: str = "") -> FloatArray:
    """A fresh non-empty 1-D float64 array of finite entries (of ``length`` when given)."""
    a = check_finite_array(name, value, ndim=1)
    if length is not None:
        check_length(name, a, length=length, of=of)
    return a


def check_nonnegative_vector(
    name: str, value: Any, *, length: int | None = None, of: str = "", allow_all_zero: bool = False
) -> FloatArray:
    """A fresh non-empty 1-D float64 array of finite entries ``>= 0``.

    Unless ``allow_all_zero``, at least one entry must be ``> 0``.
    """
    a = check_finite_vector(name, value, length=length, of=of)
    if np.any(a < 0.0):
        raise ValueError(f"{name} must be >= 0 entrywise, got {_first_bad(name, a, a < 0.0)}")
    if not allow_all_zero and not np.any(a > 0.0):
        raise ValueError(f"{name} must have at least one entry > 0, got all zeros")
    return a


def check_positive_vector(name: str, value: Any, *, length: int | None = None, of: str = "") -> FloatArray:
    """A fresh non-empty 1-D float64 array of finite entries ``> 0``."""
    a = check_nonnegative_vector(name, value, length=length, of=of)
    if np.any(a == 0.0):
        raise ValueError(f"{name} must be > 0 entrywise, got {_first_bad(name, a, a == 0.0)}")
    return a


def check_scaling_vector(name: str, value: Any, *, length: int | None = None, of: str = "") -> FloatArray:
    """A fresh non-empty 1-D float64 array with entries in ``[0, inf]`` (a scaling b).

    ``+inf`` is allowed: Lemma 4.1's scaling is infinite where a standard deviation is 0.
    """
    a = as_real_array(name, value, ndim=1)
    bad = np.isnan(a) | (a < 0.0)
    if np.any(bad):
        raise ValueError(f"{name} must be >= 0 entrywise (inf allowed), got {_first_bad(name, a, bad)}")
    if length is not None:
        check_length(name, a, length=length, of=of)
    return a


def check_probability_array(name: str, value: Any) -> FloatArray:
    """A fresh float64 array (any shape, 0-d for a scalar) with every entry in ``(0, 1)``."""
    a = as_real_array(name, value)
    bad = ~((a > 0.0) & (a < 1.0))  # also catches NaN
    if np.any(bad):
        raise ValueError(f"{name} must lie in the open interval (0, 1) entrywise, got {_first_bad(name, a, bad)}")
    return a


def check_data_matrix(name: str, value: Any, *, min_rows: int = 1) -> np.ndarray:
    """A data matrix of shape (n, d), n >= ``min_rows``, d >= 1, of integers or floats.

    An :class:`numpy.ndarray` (including a :class:`numpy.memmap`) is returned as it is,
    without a copy; its entries are checked for finiteness by the caller, chunk by chunk.
    Boolean data is a TypeError (convert 0/1 data with ``X.astype(float)``).
    """
    if isinstance(value, np.ndarray) and not isinstance(value, (np.ma.MaskedArray, np.matrix)):
        arr = value  # also a np.memmap: no copy
    else:  # np.matrix becomes a plain 2-D array; a masked array is a TypeError
        arr = _as_numeric(name, value)
    if arr.dtype.kind == "b" or arr.dtype.kind not in _REAL_KINDS:
        arr = _as_numeric(name, arr)  # raises the TypeError naming the dtype, or converts exact reals
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d), got {name} of shape {arr.shape}")
    n, d = arr.shape
    if n < 1 or d < 1:
        raise ValueError(f"{name} must have n >= 1 rows and d >= 1 columns, got {name} of shape {arr.shape}")
    if n < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got {name} with n={n}")
    return arr


def check_finite_data(name: str, value: Any, *, min_rows: int = 1) -> np.ndarray:
    """A data matrix of shape (n, d) with finite entries, as float64, and ``n >= min_rows``.

    A float64 :class:`numpy.ndarray` is returned as it is, without a copy; integer data
    are converted to a new float64 array.  Types and shape as in
    :func:`check_data_matrix`.
    """
    arr = check_data_matrix(name, value, min_rows=min_rows)
    if arr.dtype != np.float64:
        arr = np.asarray(arr, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(arr))  # finite iff every entry is, unless the sum overflows
    if not np.isfinite(total):
        bad = ~np.isfinite(arr)
        if np.any(bad):
            raise ValueError(f"{name} must be finite, got {_first_bad(name, arr, bad)}")
    return arr


def check_finite_result(value: Any, *, what: str, inputs: str) -> None:
    """Raise ValueError when a computed ``value`` is not finite (an overflow of float64).

    ``what`` names the quantity, ``inputs`` the arguments whose size caused it, so that
    the message says which argument to rescale.
    """
    a = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(a)
    if np.any(bad):
        first = float(a.flat[int(np.flatnonzero(bad)[0])])
        raise ValueError(
            f"{what} overflows the float64 range (got {first!r}): {inputs} too large in "
            "magnitude; rescale the data"
        )


# ----------------------------------------------------------------------------------------
# sympy arguments (egmlib.symbolic); sympy is imported only when these run
# ----------------------------------------------------------------------------------------
def check_symbolic_scalar(name: str, value: Any) -> Any:
    """A real, finite sympy expression or number (a symbol of unknown sign passes).

    A number that is not a sympy object (a Python or numpy integer or float, a
    ``fractions.Fraction``) becomes the exact sympy number of its value: an integer an
    ``Integer``, a float the ``Rational`` of its exact binary value (``numpy.float16(-2/3)``
    is ``-1365/2048``, never a 3-digit ``Float``), so that no precision is lost or invented.
    TypeError for bools, strings, ``None``, what sympy cannot parse strictly and what is
    known not to be real; ValueError for NaN and infinities (``sp.nan``, ``sp.oo``, ``sp.zoo``).
    """
    import sympy as sp

    if isinstance(value, (bool, str, bytes, np.bool_)) or value is None:
        raise TypeError(f"{name} must be a sympy expression or a real number, got {name}={value!r}")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, numbers.Real) and not isinstance(value, sp.Basic):
        if isinstance(value, (np.timedelta64, np.datetime64)):
            raise TypeError(f"{name} must be a sympy expression or a real number, got {name}={value!r}")
        if isinstance(value, numbers.Integral):
            return sp.Integer(int(value))
        if isinstance(value, numbers.Rational):
            return sp.Rational(int(value.numerator), int(value.denominator))
        x = value if isinstance(value, (float, np.floating)) else float(value)
        if not np.isfinite(x):
            raise ValueError(f"{name} must be finite, got {name}={value!r}")
        numerator, denominator = x.as_integer_ratio()  # exact, numpy's long double included
        return sp.Rational(int(numerator), int(denominator))
    try:
        expr = sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError):
        raise TypeError(f"{name} must be a sympy expression or a real number, got {name}={value!r}") from None
    if not isinstance(expr, sp.Expr):
        raise TypeError(f"{name} must be a sympy expression or a real number, got {name}={value!r}")
    if expr.is_real is False and expr.is_finite is not False:
        raise TypeError(f"{name} must be real, got {name}={value!r}")
    if expr.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
        raise ValueError(f"{name} must be finite, got {name}={value!r}")
    return expr


def check_symbolic_vector(name: str, value: Any) -> list[Any]:
    """A one-dimensional sequence of real sympy expressions or numbers, as a list
    (each entry checked by :func:`check_symbolic_scalar`, named ``name[i]``)."""
    import sympy as sp

    if isinstance(value, (str, bytes, bool)) or value is None:
        raise TypeError(f"{name} must be a sequence of sympy expressions or numbers, got {name}={value!r}")
    if isinstance(value, np.ma.MaskedArray):  # iterating would drop the mask
        raise TypeError(f"{name} must be a plain sequence, got a masked array: fill or drop the masked entries first")
    if isinstance(value, (int, float, sp.Expr)):
        raise ValueError(f"{name} must be a sequence (one-dimensional), got the scalar {name}={value!r}")
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a sequence of sympy expressions or numbers, "
                        f"got {name} of type {type(value).__name__}")
    out = list(value)
    for i, v in enumerate(out):
        if isinstance(v, (Iterable, sp.MatrixBase)) and not isinstance(v, (str, bytes, sp.Expr)):
            raise ValueError(f"{name} must be one-dimensional, got a nested sequence at {name}[{i}]")
        out[i] = check_symbolic_scalar(f"{name}[{i}]", v)
    return out


# ----------------------------------------------------------------------------------------
# privacy in floating point (issues 35 and 36: validation that lived in the private modules)
# ----------------------------------------------------------------------------------------
#: The smallest positive normal float64, 2^-1022.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)

#: The public floor of the log scales relative to the box's width (the value of
#: ``egmlib.peers.algorithm3_robust.LOG_SCALE_FLOOR``, which the test of this module checks).
_LOG_SCALE_FLOOR = 1e-6


def check_unnormalised_box(lower: Any, upper: Any, *, d: int, arm: str) -> tuple[float, float]:
    r"""The box of an arm that computes on the caller's box (PLAN's arms, IOME), refused where it must be.

    Those arms' intermediates are bounded by the box's width :math:`w = u - \ell` (the
    book's floating-point page lists them): the squared differences of two rows lie in
    :math:`[0, w^2]`, the norms of the second moments' rows in :math:`[0, \sqrt d\,w^2/2]`,
    and the public floor of the log scales is :math:`(10^{-6} w)^2`.  All three stay normal
    float64 numbers, so no row can make one of them overflow or underflow, exactly when

    .. math:: (10^{-6} w)^2 \ge 2^{-1022} \quad\text{and}\quad \max(1, \sqrt d/2)\, w^2 < \infty ,

    i.e. :math:`1.5\times10^{-148} \le w \lesssim 1.3\times10^{154}`; any other box is a
    ValueError here, before the data are read (the box is public, so the refusal leaks
    nothing).  The arms that normalise their box take any box.
    """
    lower, upper = check_bounds(lower, upper)
    w = upper - lower
    with np.errstate(over="ignore", under="ignore"):
        floor_sq = (_LOG_SCALE_FLOOR * w) * (_LOG_SCALE_FLOOR * w)
        top = max(1.0, 0.5 * math.sqrt(d)) * w * w
    if not floor_sq >= SMALLEST_NORMAL or not math.isfinite(top):
        raise ValueError(
            f"upper - lower must lie in [1.5e-148, 1.3e154] for the arm {arm!r}, which computes on the "
            f"caller's box (its squared differences of rows must stay normal float64 numbers; the "
            f"normalised arms take any box), got lower={lower!r} and upper={upper!r}")
    return lower, upper


#: The budgets every arm of ``egmlib.peers.arms`` accepts (the common call checks them first).
ARM_RHO_RANGE = (1e-300, 1e300)


def check_arm_rho(rho: Any) -> float:
    r"""The budget of an arm of :mod:`egmlib.peers.arms`: finite, in ``ARM_RHO_RANGE``.

    Below :math:`10^{-300}` a step's share of :math:`\rho` or the square of its noise leaves the
    float64 range, above :math:`10^{300}` the exact :math:`\varepsilon` of a noise step does; the
    arms refuse such budgets up front, naming ``rho``, instead of an internal quantity.
    """
    rho = check_positive_finite("rho", rho)
    low, high = ARM_RHO_RANGE
    if not low <= rho <= high:
        raise ValueError(f"rho must lie in [{low:g}, {high:g}] for the arms (smaller or larger budgets "
                         f"leave the float64 range inside their steps), got rho={rho!r}")
    return rho


def check_arm_inputs(inputs: Mapping[str, Any], *, d: int, lower: float, upper: float) -> dict[str, Any]:
    r"""The public inputs ``sigma`` and ``mu`` of an oracle arm of :mod:`egmlib.peers.arms`.

    ``sigma``: one finite entry per column, :math:`0 \le \sigma_j \le u - \ell` (no standard
    deviation of data in the box exceeds half its width), not all 0.  ``mu``: one entry per column,
    inside the box (where the mean of data in the box lies).  Each a ValueError naming the input.
    """
    out = dict(inputs)
    per = "one entry per column of X"
    if "sigma" in out:
        sigma = check_nonnegative_vector("sigma", out["sigma"], length=d, of=per)
        width = upper - lower
        if np.any(sigma > width):
            j = int(np.argmax(sigma > width))
            raise ValueError(f"sigma must be at most upper - lower = {width!r} (no standard deviation of data "
                             f"in the box is larger), got sigma[{j}]={float(sigma[j])!r}")
        out["sigma"] = sigma
    if "mu" in out:
        mu = check_finite_vector("mu", out["mu"], length=d, of=per)
        outside = (mu < lower) | (mu > upper)
        if np.any(outside):
            j = int(np.argmax(outside))
            raise ValueError(f"mu must lie in the box [lower, upper] = [{lower!r}, {upper!r}] (the mean of data "
                             f"in the box does), got mu[{j}]={float(mu[j])!r}")
        out["mu"] = mu
    return out


def check_finite_rows(name: str, block: np.ndarray, *, start: int = 0) -> None:
    """ValueError naming the first row of ``block`` (rows numbered from ``start``) with a NaN or an
    infinity: the chunk-by-chunk check of a data matrix as it is read (``egmlib.clipping``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(block)):  # finite iff every entry is, unless the sum overflows
            return
    bad = ~np.all(np.isfinite(block), axis=1)
    if np.any(bad):
        raise ValueError(f"{name} must be finite, got NaN or inf in row {start + int(np.flatnonzero(bad)[0])}")


def check_budget_parts(budget: Any, **shares: tuple[str, float]) -> None:
    """ValueError naming the share whose step's rho underflows to 0 (a subnormal share).

    ``budget`` maps each step to its rho and has the total as ``budget.total``
    (:class:`egmlib.peers.budget.ZCDPBudget`); ``shares`` maps the same steps to the caller's
    (name, value) of the share.
    """
    for step, (name, share) in shares.items():
        if not budget[step] > 0.0:
            raise ValueError(f"{name} is too small: {name} * rho underflows to 0, got {name}={share!r} "
                             f"and rho={budget.total!r}")


def check_instance(name: str, value: Any, cls: type) -> Any:
    """``value`` if it is an instance of ``cls``, else a TypeError naming the argument and the class."""
    if not isinstance(value, cls):
        raise TypeError(f"{name} must be a {cls.__name__}, got {name} of type {type(value).__name__}")
    return value


def check_dimension(name: str, value: int, *, expected: int, of: str) -> None:
    """ValueError unless ``value`` (an object's dimension, e.g. a rotation's ``d``) is ``expected``."""
    if value != expected:
        raise ValueError(f"{name} must act on {of}={expected} coordinates, got {name}.d={value}")
