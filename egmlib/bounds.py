r"""Lemma 4.2 (a Bernstein tail bound for weighted chi-square sums) and Theorem 4.

Lemma 4.2: for independent :math:`X_j\sim\mathcal N(0,\sigma_j^2)` and
:math:`\sigma_* = \max_j\sigma_j`,

.. math::

    \Pr\Bigl[\sum_j X_j^2 \ge x_t\Bigr] < e^{-t^2},\qquad
    x_t = t\sqrt{8\textstyle\sum_j\sigma_j^4} + \textstyle\sum_j\sigma_j^2,

for :math:`0\le t\le t_{\max} = \sqrt{2\sum_j\sigma_j^4}/(6\sigma_*^2)`.

Theorem 4 applies it in the space transformed by Lemma 4.1's scaling, where the
coordinate variances are :math:`\sigma_j/\sum_i\sigma_i`, with :math:`t=\sqrt{\ln n}`:

.. math::

    C_t^2 \le \frac{\sqrt{8\ln n\sum_j\sigma_j^2}}{\sum_j\sigma_j} + 1,

.. math::

    \mathbb E\|\eta\|^2 \le 4\sigma_{opt}^2\sum_j\sigma_j
        \Bigl(\sqrt{8\ln n\textstyle\sum_j\sigma_j^2} + \textstyle\sum_j\sigma_j\Bigr),

valid when :math:`t \le t_{\max}` there, i.e. :math:`\ln n \le \sum_j\sigma_j^2/(18\sigma_*^2)`.

Design choice: :func:`theorem4_bound` never raises because the condition fails; it returns
a frozen :class:`Theorem4Result` with ``holds=False`` and ``bound=None``, so a grid of
configurations can be evaluated in one pass and the failing ones reported.  Bad *input*
(negative sigma, n < 2, ...) still raises ``ValueError``.

Beyond the report: Laurent and Massart's bound (2000, Lemma 1) has no range condition, so
:func:`laurent_massart_ct2_bound` and :func:`algorithm3_noise_bound` bound :math:`C_t^2`
and Algorithm 3's error for every :math:`n \ge 2`, below Theorem 4's bound wherever that
applies.

All sums of powers are formed after dividing by :math:`\sigma_*`, so
:math:`\sigma_j^4` never underflows for Zipf weights with large exponents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmlib.validation import (
    check_count,
    check_finite_result,
    check_nonnegative_finite,
    check_nonnegative_vector,
    check_positive_finite,
    check_probability,
)

__all__ = [
    "bernstein_t_max",
    "bernstein_threshold",
    "bernstein_tail_bound",
    "bernstein_t_for_probability",
    "transformed_ct2_bound",
    "Theorem4Condition",
    "Theorem4Result",
    "theorem4_condition",
    "theorem4_bound",
    "laurent_massart_threshold",
    "laurent_massart_ct2_bound",
    "algorithm3_noise_bound",
]


def _power_sums(s: NDArray[np.float64]) -> tuple[float, float, float]:
    """(sigma_*, sum (sigma/sigma_*)^2, sum (sigma/sigma_*)^4)."""
    smax = float(s.max())
    w = s / smax
    w2 = w * w
    return smax, float(np.sum(w2)), float(np.sum(w2 * w2))


def bernstein_t_max(sigma: ArrayLike) -> float:
    r"""Largest admissible :math:`t` in Lemma 4.2: :math:`\sqrt{2\sum_j\sigma_j^4}/(6\sigma_*^2)`.

    Scale-free; equals :math:`\sqrt{2d}/6` for :math:`d` equal standard deviations.

    Examples
    --------
    >>> round(bernstein_t_max([1.0] * 18), 12)
    1.0
    """
    s = check_nonnegative_vector("sigma", sigma)
    _, _, p4 = _power_sums(s)
    return math.sqrt(2.0 * p4) / 6.0


def bernstein_threshold(sigma: ArrayLike, *, t: float) -> float:
    r"""Lemma 4.2's threshold :math:`x_t = t\sqrt{8\sum_j\sigma_j^4} + \sum_j\sigma_j^2`.

    Defined for every :math:`t \ge 0`; the tail bound :math:`e^{-t^2}` holds only for
    :math:`t\le` :func:`bernstein_t_max` (see :func:`bernstein_tail_bound`).

    Examples
    --------
    >>> round(bernstein_threshold([1.0, 1.0], t=1.0), 12)   # sqrt(16) + 2
    6.0
    """
    s = check_nonnegative_vector("sigma", sigma)
    t = check_nonnegative_finite("t", t)
    smax, p2, p4 = _power_sums(s)
    out = smax * smax * (t * math.sqrt(8.0 * p4) + p2)
    check_finite_result(out, what="the threshold x_t", inputs="sigma or t")
    return out


def bernstein_tail_bound(sigma: ArrayLike, *, t: float) -> float:
    r"""Lemma 4.2's bound :math:`e^{-t^2}` on :math:`\Pr[\sum_j X_j^2\ge x_t]`.

    Raises
    ------
    ValueError
        If :math:`t` lies outside the admissible range :math:`[0, t_{\max}]`, where the
        lemma says nothing.

    Examples
    --------
    >>> round(bernstein_tail_bound([1.0] * 72, t=1.5), 12)   # t_max = 2
    0.105399224562
    """
    s = check_nonnegative_vector("sigma", sigma)
    t = check_nonnegative_finite("t", t)
    tmax = bernstein_t_max(s)
    if t > tmax:
        raise ValueError(
            f"t must satisfy 0 <= t <= t_max = sqrt(2 sum sigma^4) / (6 sigma_*^2) = {tmax!r} "
            f"(Lemma 4.2), got t={t!r}"
        )
    return math.exp(-t * t)


def bernstein_t_for_probability(p: float) -> float:
    r""":math:`t` with :math:`e^{-t^2} = p` in Lemma 4.2, i.e. :math:`\sqrt{\ln(1/p)}`.

    For :math:`p = 1/n` this is the :math:`t = \sqrt{\ln n}` of Theorem 4's proof.

    Examples
    --------
    >>> round(bernstein_t_for_probability(math.exp(-4.0)), 12)
    2.0
    """
    p = check_probability("p", p)
    return math.sqrt(-math.log(p))


def transformed_ct2_bound(sigma: ArrayLike, *, n: int) -> float:
    r"""Lemma 4.2's bound on :math:`C_t^2` in the proof of Theorem 4.

    :math:`\sqrt{8\ln n\sum_j\sigma_j^2}/\sum_j\sigma_j + 1`: the threshold :math:`x_t` at
    :math:`t=\sqrt{\ln n}` for the transformed variances :math:`\sigma_j/\sum_i\sigma_i`.
    It bounds the exact :math:`C_t^2` only when :func:`theorem4_condition` holds.

    Examples
    --------
    >>> round(transformed_ct2_bound([1.0] * 8, n=100), 12)   # sqrt(8 ln(100) 8)/8 + 1
    3.145966026289
    """
    s = check_nonnegative_vector("sigma", sigma)
    ln_n = math.log(check_count("n", n, minimum=2))
    smax, p2, _ = _power_sums(s)
    p1 = float(np.sum(s / smax))
    return math.sqrt(8.0 * ln_n * p2) / p1 + 1.0


@dataclass(frozen=True)
class Theorem4Condition:
    r"""Theorem 4's condition :math:`\ln n \le \sum_j\sigma_j^2/(18\sigma_*^2)`.

    ``holds`` is ``lhs <= rhs`` with ``lhs`` :math:`=\ln n` and ``rhs``
    :math:`=\sum_j\sigma_j^2/(18\sigma_*^2)`, the logarithm of the largest number of
    points for which the theorem applies.
    """

    holds: bool
    lhs: float
    rhs: float


@dataclass(frozen=True)
class Theorem4Result:
    r"""Outcome of :func:`theorem4_bound`.

    ``bound`` is Theorem 4's upper bound on :math:`\mathbb E\|\eta\|^2` when ``holds``,
    otherwise ``None`` (the theorem makes no claim).  ``ct2_bound`` is the Lemma 4.2 bound
    on :math:`C_t^2` used in the proof (reported either way, with the same caveat).
    """

    holds: bool
    lhs: float
    rhs: float
    bound: float | None
    ct2_bound: float


def theorem4_condition(sigma: ArrayLike, *, n: int) -> Theorem4Condition:
    r"""Check Theorem 4's condition :math:`\ln n \le \sum_j\sigma_j^2/(18\sigma_*^2)`.

    Equivalent to :math:`t=\sqrt{\ln n}` being admissible in Lemma 4.2 for the transformed
    variances :math:`\sigma_j/\sum_i\sigma_i`.  Needs
    :math:`\sum_j\sigma_j^2/\sigma_*^2 \ge 18\ln n`, hence at least :math:`18\ln n`
    coordinates (83 for :math:`n=100`).

    Examples
    --------
    >>> c = theorem4_condition([1.0] * 100, n=100)
    >>> c.holds, round(c.lhs, 4), round(c.rhs, 4)
    (True, 4.6052, 5.5556)
    """
    s = check_nonnegative_vector("sigma", sigma)
    ln_n = math.log(check_count("n", n, minimum=2))
    _, p2, _ = _power_sums(s)
    rhs = p2 / 18.0
    return Theorem4Condition(holds=bool(ln_n <= rhs), lhs=ln_n, rhs=rhs)


def theorem4_bound(sigma: ArrayLike, *, n: int, sigma_opt: float = 1.0) -> Theorem4Result:
    r"""Theorem 4: upper bound on Algorithm 3's expected noise error with Lemma 4.1's b.

    :math:`4\sigma_{opt}^2\sum_j\sigma_j\bigl(\sqrt{8\ln n\sum_j\sigma_j^2}+\sum_j\sigma_j\bigr)`,
    returned in a :class:`Theorem4Result` whose ``bound`` is ``None`` when the condition
    :math:`\ln n\le\sum_j\sigma_j^2/(18\sigma_*^2)` fails (no ``ValueError`` for that; see
    the module docstring).  ``sigma_opt`` is the unit-sensitivity value of Theorem 2.

    Examples
    --------
    >>> r = theorem4_bound([1.0] * 100, n=100)
    >>> r.holds, round(r.bound, 2)
    (True, 64278.83)
    >>> theorem4_bound([1.0] * 10, n=100).bound is None   # ln 100 > 10/18
    True
    """
    s = check_nonnegative_vector("sigma", sigma)
    ln_n = math.log(check_count("n", n, minimum=2))
    so = check_positive_finite("sigma_opt", sigma_opt)
    cond = theorem4_condition(s, n=n)
    smax, p2, _ = _power_sums(s)
    p1 = float(np.sum(s / smax))
    ct2 = math.sqrt(8.0 * ln_n * p2) / p1 + 1.0
    bound = None
    if cond.holds:
        # 4 so^2 (sum s) (sqrt(8 ln n sum s^2) + sum s), in units of smax^2
        bound = 4.0 * so * so * smax * smax * p1 * (math.sqrt(8.0 * ln_n * p2) + p1)
        check_finite_result(bound, what="Theorem 4's bound", inputs="sigma or sigma_opt")
    return Theorem4Result(holds=cond.holds, lhs=cond.lhs, rhs=cond.rhs, bound=bound, ct2_bound=ct2)


# ----------------------------------------------------------------------------------------
# Beyond the report: the Laurent-Massart bound, valid for every n
# ----------------------------------------------------------------------------------------


def laurent_massart_threshold(w: ArrayLike, *, t: float) -> float:
    r"""Laurent and Massart's threshold :math:`\sum_jw_j + 2\sqrt{t\sum_jw_j^2} + 2t\max_jw_j`.

    For :math:`Q = \sum_jw_jZ_j^2` with :math:`w_j \ge 0` and :math:`Z_j` independent standard
    normal, :math:`P(Q \ge x_t) \le e^{-t}` for **every** :math:`t > 0`
    (Laurent and Massart 2000, Lemma 1): no range restriction, unlike Lemma 4.2.

    Raises
    ------
    ValueError
        Also when the threshold overflows the float64 range (``w`` or ``t`` near 1e308).

    Examples
    --------
    >>> round(laurent_massart_threshold([1.0], t=1.0), 12)    # 1 + 2 + 2
    5.0
    """
    wv = check_nonnegative_vector("w", w)
    t = check_nonnegative_finite("t", t)
    wmax = float(wv.max())
    u = wv / wmax
    out = wmax * (float(np.sum(u)) + 2.0 * math.sqrt(t * float(np.sum(u * u))) + 2.0 * t)
    check_finite_result(out, what="the Laurent-Massart threshold", inputs="w or t")
    return out


def laurent_massart_ct2_bound(sigma: ArrayLike, *, n: int) -> float:
    r"""Upper bound on Algorithm 3's squared radius :math:`C_t^2` valid for every :math:`n \ge 2`.

    With Lemma 4.1's scaling the transformed weights are :math:`w_j = \sigma_j/S`,
    :math:`S = \sum_i\sigma_i`, and :func:`laurent_massart_threshold` at :math:`t = \ln n`
    gives :math:`P(\|\tilde x\|^2 \ge x) \le 1/n` at

    .. math:: x = 1 + \frac{2\sqrt{\ln n\sum_j\sigma_j^2} + 2\sigma_*\ln n}{S} \ \ge\ C_t^2 .

    Examples
    --------
    >>> round(laurent_massart_ct2_bound([1.0], n=100), 6)    # 1 + 2 sqrt(ln 100) + 2 ln 100
    14.502272
    """
    s = check_nonnegative_vector("sigma", sigma)
    ln_n = math.log(check_count("n", n, minimum=2))
    smax, p2, _ = _power_sums(s)
    p1 = float(np.sum(s / smax))
    return 1.0 + (2.0 * math.sqrt(ln_n * p2) + 2.0 * ln_n) / p1


def algorithm3_noise_bound(sigma: ArrayLike, *, n: int, sigma_opt: float = 1.0) -> float:
    r"""Error bound for Algorithm 3 without Theorem 4's condition (beyond the report).

    For rows :math:`\mathcal N(\mu, \operatorname{diag}(\sigma^2))`, Lemma 4.1's scaling and
    the radius :math:`C` with clipping probability :math:`1/n`, for every :math:`n \ge 2`:

    .. math::

        \mathbb E\|\eta\|^2 \le 4\sigma_{opt}^2\,S\Bigl(S + 2\sqrt{\ln n\textstyle\sum_j\sigma_j^2}
            + 2\sigma_*\ln n\Bigr),\qquad S = \sum_j\sigma_j,\ \sigma_* = \max_j\sigma_j ,

    i.e. eq. (9) with :math:`\sum_jb_j^{-2} = S^2` and :func:`laurent_massart_ct2_bound`.
    Wherever Theorem 4's condition :math:`\ln n \le \sum_j\sigma_j^2/(18\sigma_*^2)` holds
    it is at most Theorem 4's bound (:math:`2 + 2/\sqrt{18} < \sqrt 8`).

    Examples
    --------
    >>> b = algorithm3_noise_bound([1.0] * 100, n=100)      # Theorem 4 gives 64278.83
    >>> round(b, 2), b < theorem4_bound([1.0] * 100, n=100).bound
    (60851.86, True)
    """
    s = check_nonnegative_vector("sigma", sigma)
    ln_n = math.log(check_count("n", n, minimum=2))
    so = check_positive_finite("sigma_opt", sigma_opt)
    smax, p2, _ = _power_sums(s)
    p1 = float(np.sum(s / smax))
    out = 4.0 * so * so * smax * smax * p1 * (p1 + 2.0 * math.sqrt(ln_n * p2) + 2.0 * ln_n)
    check_finite_result(out, what="the error bound", inputs="sigma or sigma_opt")
    return out
