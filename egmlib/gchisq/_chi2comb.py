"""The report's quantile procedure, on chi2comb (Davies' algorithm) when installed.

How the report's Figure 2 thresholds were computed {cite}`poulsen2023`: the CDF
of Q = sum_j w_j Z_j^2 from chi2comb (Davies' AS 155 {cite}`davies1980`) at
absolute tolerance 1/n, and bisection on that CDF, stopped as soon as
|F(c) - (1 - 1/n)| <= 1/(10 n). The published thresholds are all dyadic
rationals (e.g. 6.875 = 55/8, 0.0140380859375 = 115/8192), which fits a bracket
that starts at [0, 1] and doubles its upper end until F(hi) >= 1 - 1/n; that is
the bracket used here.

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

import numpy as np


def chi2comb_available():
    """(True, "") if chi2comb imports, else (False, reason)."""
    try:
        import chi2comb  # noqa: F401
    except Exception as exc:  # ImportError, or the cffi library failing to load
        return False, f"chi2comb not importable ({type(exc).__name__}: {exc})"
    return True, ""


def davies_cdf(w, *, atol, lim=1000):
    """The function c -> P(Q <= c) from chi2comb at absolute tolerance atol."""
    ok, reason = chi2comb_available()
    if not ok:
        raise ModuleNotFoundError(
            "backend='chi2comb' needs the optional package chi2comb and its C "
            "library libchi2comb (e.g. `conda install -c conda-forge chi2comb`); "
            + reason)
    from chi2comb import ChiSquared, chi2comb_cdf

    chi2s = [ChiSquared(float(wj), 0.0, 1) for wj in np.asarray(w, float) if wj > 0]

    def F(c):
        result, errno, _info = chi2comb_cdf(float(c), chi2s, 0.0, lim, float(atol))
        if errno != 0:
            warnings.warn(f"chi2comb: Davies fault indicator {errno} at c={c!r}",
                          RuntimeWarning, stacklevel=2)
        return float(result)

    return F


def bisect_report(F, p, *, maxiter=200):
    """The report's bisection: c with |F(c) - (1 - p)| <= p / 10.

    Bracket [0, 1], upper end doubled until F(hi) >= 1 - p, then halved.
    """
    target = 1.0 - p
    lo, hi = 0.0, 1.0
    for _ in range(2000):
        if F(hi) >= target:
            break
        lo, hi = hi, 2.0 * hi
    c = 0.5 * (lo + hi)
    for _ in range(maxiter):
        c = 0.5 * (lo + hi)
        f = F(c)
        if abs(f - target) <= p / 10.0:
            return c
        if f < target:
            lo = c
        else:
            hi = c
    raise RuntimeError(f"report bisection did not stop within {maxiter} steps at p={p!r}")


def isf_report(p, w, *, lim=1000):
    """The report's C^2 at each tail probability in p (1-d array)."""
    out = np.empty(len(p))
    for i, pi in enumerate(p):
        F = davies_cdf(w, atol=float(pi), lim=lim)
        out[i] = bisect_report(F, float(pi))
    return out
