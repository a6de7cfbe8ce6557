"""Moments of a chi-square variable used in the proof of Lemma 4.2.

Private module of :mod:`egmlib.symbolic`.
"""

from __future__ import annotations

import sympy as sp

from egmlib.validation import check_count

from ._common import _HALF


def chi2_moment(k: int) -> sp.Integer:
    """``E[Z^k]`` for ``Z ~ chi^2_1``, from ``E[Z^k] = 2^k Gamma(k + 1/2) / sqrt(pi)``.

    Equals the double factorial ``(2k - 1)!! = 1 * 3 * ... * (2k - 1)`` (Lemma 4.2's
    proof calls these the values of the moment-generating function; they are the
    moments).

    >>> [chi2_moment(k) for k in range(5)]
    [1, 1, 3, 15, 105]
    """
    k = check_count("k", k, minimum=0, maximum=1000)
    return sp.Integer(sp.gammasimp(2**k * sp.gamma(k + _HALF) / sp.sqrt(sp.pi)))


def _chi2_truncated_moment(i: int) -> sp.Expr:
    """``E[Z^i ; Z < 1]`` for ``Z ~ chi^2_1``: ``2^i gamma_lower(i + 1/2, 1/2) / sqrt(pi)``."""
    return sp.expand_func(2**i * sp.lowergamma(i + _HALF, _HALF) / sp.sqrt(sp.pi))


def chi2_abs_central_moment(k: int) -> sp.Expr:
    """Exact ``E|Z - 1|^k`` for ``Z ~ chi^2_1`` (closed form in ``erf`` and ``exp``).

    For even ``k`` this is the central moment ``sum_i C(k, i) (-1)^(k-i) E[Z^i]``; for
    odd ``k`` the part below 1 is added twice with its sign flipped:
    ``E|Z-1|^k = E[(Z-1)^k] + 2 E[(1-Z)^k ; Z < 1]``, the truncated moments being
    lower incomplete gamma functions. For ``X ~ N(0, sigma^2)`` and
    ``Y = X^2 - sigma^2`` (Lemma 4.2), ``E|Y|^k = sigma^(2k) E|Z - 1|^k``.

    >>> chi2_abs_central_moment(2)
    2
    """
    k = check_count("k", k, minimum=0, maximum=100)
    central = sp.Add(*[sp.binomial(k, i) * (-1) ** (k - i) * chi2_moment(i) for i in range(k + 1)])
    if k % 2 == 0:
        return sp.Integer(central)
    below = sp.Add(*[sp.binomial(k, i) * (-1) ** i * _chi2_truncated_moment(i) for i in range(k + 1)])
    return sp.expand(central + 2 * below)
