r"""Certified tail values: two contours of different curvature must agree.

Private helper of :mod:`egmlib.gchisq`. Halving the step cannot certify a
trapezoidal value: near a singularity of high order m at distance a from the
real axis, the Fourier transform G(omega) of the integrand grows like
omega^(m-1) exp(-a omega) up to omega ~ (m - 1) / a, and in that regime the
rules with steps 2h, h and h/2 (or the midpoint rule, which has the same
aliasing terms with alternating signs) can agree closely while all of them are
wrong, because their errors are sums of G at multiples of the same frequency.
Every value is therefore computed on two contours of different curvature (the
planner's primary contour, and the best one whose gamma differs by at least a
factor 4, :mod:`._planner`): their singularities sit at different distances
and positions, their aliasing errors are unrelated numbers, and agreement to
1e-12 cannot happen by accident. The reported error estimate is the larger of
their difference and the a-priori, rounding and truncation estimates; if they
disagree, both steps are halved and, if needed, the contours are re-planned
with flatter parabolas and a wider safety margin, before the estimate is
returned as it stands (and the caller warns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _checks, _planner
from ._contour import refine
from ._cumulants import Cumulants
from ._planner import ContourPair, plan_contours
from ._records import TailValue
from ._saddlepoint import saddlepoint

#: Two contours must agree to this (relative, plus their own estimates) for a
#: value to be certified without further refinement.
AGREE = 1e-12
#: Largest number of nodes allowed after refinement.
HARD_NODES = 1 << 19
#: Repairs tried, in order, when the two contours disagree: halve both steps, or
#: re-plan with these gamma fractions and this margin (nats) on every log M.
REPAIRS: tuple[tuple[str, tuple[float, ...], float], ...] = (
    ("refine", (), 0.0), ("refine", (), 0.0), ("plan", (0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0), 10.0),
    ("refine", (), 0.0), ("plan", (1.0 / 16.0, 1.0 / 64.0, 0.0), 25.0), ("refine", (), 0.0))


@dataclass(frozen=True)
class Certified:
    """A tail value checked on a contour pair (:func:`certified`).

    Attributes
    ----------
    pair : ContourPair
        The pair that produced the value (the best one found).
    value : TailValue
        The primary contour's value; ``err`` is the larger of its own estimate and
        the relative difference of the two contours (``ok`` is True: the value has
        been through the check).
    repaired : bool
        Whether the pair had to be refined or re-planned.
    """

    pair: ContourPair
    value: TailValue
    repaired: bool


def combine(ra: TailValue, rb: TailValue | None) -> tuple[float, bool]:
    """(error estimate of the primary value ra given the check value rb,
    whether the two agree): the estimate is the larger of ra's own one
    (a priori, rounding, truncation) and the relative difference of the two;
    they agree if that difference is within AGREE plus twice their own
    estimates (rounding shared by both, e.g. of K(c) - c x, is in ra's own
    estimate and cannot be reduced by refining). A contour without partner
    counts as agreeing only if its own checks pass."""
    if rb is None:
        return (ra.err, True) if ra.ok else (max(ra.err, 1.0), False)
    if not (math.isfinite(ra.log_t) and math.isfinite(rb.log_t)):
        return math.inf, False
    diff = abs(math.expm1(ra.log_t - rb.log_t))
    return max(ra.err, diff), diff <= AGREE + 2.0 * (ra.err + rb.err)


def replan(cum: Cumulants, x: float, upper: bool, fracs: tuple[float, ...] = _planner.GAMMA_FRACS,
           margin: float = 0.0) -> ContourPair:
    """A fresh contour pair planned for the scaled point x alone."""
    return plan_contours(cum, np.array([x]), saddlepoint(cum, np.array([x])), np.array([upper]), fracs=fracs,
                         margin=margin)[0]


def _repair(cum: Cumulants, pair: ContourPair, x: float, step: tuple[str, tuple[float, ...], float]
            ) -> ContourPair | None:
    """One repair of the pair (None if refining would exceed HARD_NODES)."""
    a, b = pair
    if step[0] == "plan":
        return replan(cum, x, a.plan.upper, step[1], step[2])
    if a.plan.n * 2 > HARD_NODES or (b is not None and b.plan.n * 2 > HARD_NODES):
        return None
    return refine(cum, a), (refine(cum, b) if b is not None else None)


def certified(cum: Cumulants, pair: ContourPair, x: float, ra: TailValue | None = None) -> Certified:
    """Tail at scaled x on the contour pair (``ra``: the primary contour's value if
    already computed); refine or re-plan until the two contours agree (see
    :func:`combine`), or the repairs run out. A pair planned for another x is
    first re-planned for x."""
    a, b = pair
    if ra is None:
        ra = a.tail(x)
    rb = b.tail(x) if b is not None else None
    err, agree = combine(ra, rb)
    if agree:
        return Certified(pair, TailValue(ra.log_t, ra.f_over_t, ra.fp_over_t, err, True), False)
    best = (err, pair, ra)
    first = (("plan", _planner.GAMMA_FRACS, 0.0),) if abs(x - a.plan.x_plan) > 1e-3 * x else ()
    repairs = REPAIRS if _checks.current().repairs else ()  # egmlib.gchisq.engine_checks
    for step in first + repairs:
        repaired = _repair(cum, pair, x, step)
        if repaired is None:
            continue
        pair = repaired
        a, b = pair
        ra = a.tail(x)
        rb = b.tail(x) if b is not None else None
        err, agree = combine(ra, rb)
        if agree:
            best = (err, pair, ra)
            break
        if err < best[0]:
            best = (err, pair, ra)
    err, pair, ra = best
    return Certified(pair, TailValue(ra.log_t, ra.f_over_t, ra.fp_over_t, err, True), True)
