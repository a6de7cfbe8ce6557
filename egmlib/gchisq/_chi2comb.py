"""The report's quantile procedure, on chi2comb (Davies' algorithm) when installed.

How the report's Figure 2 thresholds were computed {cite}`poulsen2023`: the CDF
of Q = sum_j w_j Z_j^2 from chi2comb (Davies' AS 155 {cite}`davies1980`) at
absolute tolerance 1/n, and bisection on that CDF, stopped as soon as
|F(c) - (1 - 1/n)| <= 1/(10 n). The published thresholds are all dyadic
rationals (e.g. 6.875 = 55/8, 0.0140380859375 = 115/8192), which fits a bracket
that starts at [0, 1] and doubles its upper end until F(hi) >= 1 - 1/n; that is
the bracket used here, and the value returned is the midpoint of the final
bracket, as in the report's code (:func:`report_bisection`).

chi2comb 0.1.0 (PyPI) is a cffi wrapper of the C library libchi2comb, which
must be installed on the system (e.g. from conda-forge); its API is
``chi2comb_cdf(q, chi2s, gcoef, lim=1000, atol=1e-9) -> (result, errno, info)``
with ``chi2s`` a list of ``ChiSquared(coef, ncent, dof)``. ``errno`` is Davies'
fault indicator: 0 fine, 1 requested accuracy not reached, 2 round-off possibly
significant, 3 invalid parameters, 4 integration parameters not located,
5 out of memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib import validation as _v


def chi2comb_available() -> tuple[bool, str]:
    """(True, "") if chi2comb imports, else (False, reason)."""
    try:
        import chi2comb  # noqa: F401
    except Exception as exc:  # ImportError, or the cffi library failing to load
        return False, f"chi2comb not importable ({type(exc).__name__}: {exc})"
    return True, ""


def davies_cdf(w: ArrayLike, *, atol: float, lim: int = 1000) -> Callable[[float], float]:
    """The function c -> P(Q <= c) from chi2comb at absolute tolerance atol."""
    ok, reason = chi2comb_available()
    if not ok:
        raise ModuleNotFoundError(
            "backend='chi2comb' needs the optional package chi2comb and its C "
            "library libchi2comb (e.g. `conda install -c conda-forge chi2comb`); "
            + reason)
    from chi2comb import ChiSquared, chi2comb_cdf

    chi2s = [ChiSquared(float(wj), 0.0, 1) for wj in np.asarray(w, float) if wj > 0]

    def F(c: float) -> float:
        result, errno, _info = chi2comb_cdf(float(c), chi2s, 0.0, lim, float(atol))
        if errno != 0:
            warnings.warn(f"chi2comb: Davies fault indicator {errno} at c={c!r}",
                          RuntimeWarning, stacklevel=2)
        return float(result)

    return F


#: Half-width of the report's stopping rule in units of p (stop once ``|F(c) - (1 - p)| <= p / 10``).
STOP_FRACTION = 0.1

#: Most steps a run can take: 1024 doublings reach the largest float, and about 1130
#: halvings take a float bracket down to adjacent floats.
MAX_STEPS = 2200


@dataclass(frozen=True)
class BisectionTrace:
    """One run of the report's bisection (:func:`report_bisection`).

    Attributes
    ----------
    value : float
        What the procedure returns: the midpoint of the final bracket.
    last_point : float
        The last point at which the CDF was evaluated (the one that met the stopping
        rule); returning it instead of ``value`` is the obvious fix.
    points : tuple of float
        Every evaluation point in order (the doubling phase first).
    bracket : tuple of float
        The final ``(lo, hi)``; ``value = (lo + hi) / 2`` and ``last_point`` is one end.
    """

    value: float
    last_point: float
    points: tuple[float, ...]
    bracket: tuple[float, float]


def report_bisection(tail: Callable[[float], float], *, p: float, max_steps: int = 200) -> BisectionTrace:
    r"""Run the report's bisection (Section 5, fault-free branch) on a tail function.

    The procedure of the report's Section 5 as its authors' code (``generate.py`` of
    ``TSPoulsen/egm``) does it: bracket :math:`[0, 1]`, the upper end doubled until
    :math:`\hat F(hi) \ge 1 - p`, then bisection until :math:`|\hat F(c) - (1 - p)| \le p/10`
    at the evaluated point :math:`c`, and the **midpoint of the final bracket** returned
    (not :math:`c`).  It works on the tail :math:`\hat P = 1 - \hat F`, which takes the
    same decisions (:math:`\hat F(c) < 1 - p \iff \hat P(c) > p`) with full relative
    accuracy.  ``isf(p, w=w, backend="chi2comb")`` runs it on chi2comb's CDF.

    Parameters
    ----------
    tail : callable
        ``tail(c)`` returns :math:`\hat P(Q > c) = 1 - \hat F(c)`, exact or perturbed.
    p : float in (0, 1)
        The tail probability (the report's :math:`1/n`).
    max_steps : int, 1 <= max_steps <= 2200, optional
        Upper limit on the number of doublings and on the number of bisection steps
        (no run on floats needs more than 2200).

    Returns
    -------
    BisectionTrace

    Raises
    ------
    RuntimeError
        If the bracket or the bisection does not terminate within ``max_steps`` steps
        (a tail that never drops below ``p``, or one that jumps over the stopping band).
    ValueError
        If ``tail`` returns NaN or an infinity (TypeError: something not a real number).

    Examples
    --------
    >>> import math
    >>> tr = report_bisection(lambda c: math.exp(-c), p=0.01)   # exact quantile ln 100 = 4.605
    >>> tr.points
    (1.0, 2.0, 4.0, 8.0, 6.0, 5.0, 4.5, 4.75, 4.625)
    >>> tr.last_point, tr.bracket, tr.value        # exp(-4.625) = 0.0098 passed the test
    (4.625, (4.5, 4.625), 4.5625)
    """
    tail = _v.check_callable("tail", tail)
    p = _v.check_probability("p", p)
    max_steps = _v.check_count("max_steps", max_steps, minimum=1, maximum=MAX_STEPS)
    tol = STOP_FRACTION * p

    def evaluate(c: float) -> float:
        return float(_v.check_finite_array("tail(c)", tail(c), ndim=0))

    points = []
    lo, hi = 0.0, 1.0
    for _ in range(max_steps):
        points.append(hi)
        if not evaluate(hi) > p:  # F(hi) >= 1 - p
            break
        lo, hi = hi, 2.0 * hi
    else:
        raise RuntimeError(
            f"report_bisection: no upper end with F(hi) >= 1 - p after {max_steps} doublings "
            f"(p={p!r}, last hi={hi!r})")
    for _ in range(max_steps):
        c = 0.5 * (lo + hi)
        points.append(c)
        P = evaluate(c)
        if P > p:  # F(c) < 1 - p
            lo = c
        else:
            hi = c
        if abs(P - p) <= tol:
            return BisectionTrace(0.5 * (lo + hi), c, tuple(points), (lo, hi))
    raise RuntimeError(
        f"report_bisection: the stopping rule |F(c) - (1 - p)| <= p/10 was not met within "
        f"{max_steps} bisection steps (p={p!r}, bracket [{lo!r}, {hi!r}])")


def isf_report(p: NDArray[np.float64], w: NDArray[np.float64], *, lim: int = 1000) -> NDArray[np.float64]:
    """The report's C^2 at each tail probability in p (1-d array): its bisection on
    chi2comb's CDF, returning the final bracket's midpoint as the report's code did."""
    out = np.empty(len(p))
    for i, pi in enumerate(p):
        F = davies_cdf(w, atol=float(pi), lim=lim)

        def tail(c: float, F: Callable[[float], float] = F) -> float:
            return 1.0 - F(c)

        out[i] = report_bisection(tail, p=float(pi)).value
    return out
