r"""The report's own quantile procedure for Figure 2, run with an exact or a perturbed CDF.

Section 5 of the report {cite}`poulsen2023` obtains its squared clipping radii
:math:`C_n^2` and :math:`C_t^2` (upper :math:`1/n`-quantiles of
:math:`Q = \sum_j w_j Z_j^2`) from chi2comb (Davies' algorithm {cite}`davies1980`) at
absolute tolerance :math:`1/n`. The authors' public code (``generate.py`` of
``TSPoulsen/egm``) wraps that CDF in a bisection which, in its fault-free branch, does
the following with :math:`t = 1 - p` and :math:`p = 1/n`:

1. bracket: ``lo, hi = 0, 1``; while :math:`\hat F(hi) < t`: ``lo, hi = hi, 2 hi``;
2. bisection: ``c = (lo + hi) / 2``; if :math:`\hat F(c) < t` then ``lo = c`` else
   ``hi = c``; repeat until :math:`|\hat F(c) - t| \le p/10` at the point :math:`c` just
   evaluated;
3. return ``(lo + hi) / 2``, the midpoint of the final bracket, **not** the point
   :math:`c` at which the stopping rule was met.

Step 3 is why the published radii are dyadic rationals and why they can be far from
the quantile even when :math:`\hat F` is exact: the returned value is half a bracket
width away from a point that passed the test. (On a Davies fault the code moves the
upper end by 10, or the evaluation point by 1; no published radius needs that branch,
see :func:`reproducing_path`.)

Everything here works with the tail :math:`P(c) = 1 - F(c)` instead of :math:`F`, which
is exactly equivalent for every comparison above (:math:`\hat F(c) < t \iff \hat P(c) > p`,
:math:`|\hat F(c) - t| \le p/10 \iff |\hat P(c) - p| \le p/10`) and keeps full relative
accuracy. A CDF error :math:`|\hat F - F| \le \tau` is the same as :math:`|\hat P - P| \le
\tau`; errors are reported in units of :math:`p = 1/n`, so Davies' tolerance is 1.

- :func:`egmlib.gchisq.report_bisection` (re-exported here): the procedure for any tail
  function (exact or perturbed), the same code that ``gchisq.isf(..., backend="chi2comb")``
  runs on chi2comb's CDF;
- :func:`exact_report_radius`: the procedure with the exact tail of :mod:`egmlib.gchisq`;
- :func:`reproducing_path`: for a given output value (a published radius), the unique
  run that returns it and the smallest uniform CDF error that makes the procedure take
  that run;
- :func:`published_radii_procedure`: both, for the 216 published radii of Figure 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from egmbook.experiments import load_published_figure2, zipf_sigmas
from egmlib import gchisq
from egmlib.gchisq import MAX_BISECTION_STEPS, STOP_FRACTION, BisectionTrace, report_bisection
from egmlib.validation import (
    check_count,
    check_finite_result,
    check_nonnegative_vector,
    check_positive_finite,
    check_probability,
)

# report_bisection, BisectionTrace and STOP_FRACTION are the library's
# (egmlib.gchisq), importable from here too; documented there.
__all__ = [
    "ReproducingPath",
    "PublishedRadiiProcedure",
    "exact_tail",
    "exact_report_radius",
    "reproducing_path",
    "snap_to_dyadic",
    "published_radii_procedure",
]


#: Smallest sum of the weights the exact tail accepts: below it the quantiles of Q are
#: subnormal floats, whose spacing no bisection can refine to the stopping rule.
_MIN_MEAN = 1e-300

#: Largest denominator exponent of a dyadic float: every positive float is k / 2**m, m <= 1074.
_MAX_LOG2_DENOMINATOR = 1074


@dataclass(frozen=True)
class ReproducingPath:
    r"""The run of the report's bisection that returns a given value.

    Attributes
    ----------
    value : float
        The output to be reproduced (a published radius, snapped to its dyadic value).
    points : tuple of float
        The evaluation points of that run, in order.
    decisions : tuple of str
        At each point what the run must decide: ``"double"`` (:math:`\hat P > p`, double the
        bracket), ``"bracketed"`` (:math:`\hat P \le p`), ``"lo"``
        (:math:`\hat P > 1.1p`, raise the lower end and go on), ``"hi"``
        (:math:`\hat P < 0.9p`, lower the upper end and go on), ``"stop-lo"``
        (:math:`p < \hat P \le 1.1p`, raise the lower end and stop), ``"stop-hi"``
        (:math:`0.9p \le \hat P \le p`, lower the upper end and stop).
    tail_ratio : tuple of float or None
        :math:`n P(c)` with the exact tail at each point (``None`` where a Chernoff bound
        already showed that the exact tail takes the required decision, so it was not
        computed).
    required_error : tuple of float
        At each point the smallest :math:`n|\hat P(c) - P(c)|` for which that decision is
        taken (0 where the exact tail takes it).
    max_required_error : float
        :math:`\varepsilon^* = \max` of ``required_error``: the smallest uniform CDF error,
        in units of :math:`1/n`, with which the procedure returns ``value``; ``inf`` if no
        run of the procedure returns ``value`` (then the other fields are empty).
    last_point : float or None
        The point at which that run stops (``None`` if there is no such run).
    """

    value: float
    points: tuple[float, ...]
    decisions: tuple[str, ...]
    tail_ratio: tuple[float | None, ...]
    required_error: tuple[float, ...]
    max_required_error: float
    last_point: float | None

    @property
    def exact(self) -> bool:
        """True when the exact CDF itself makes the procedure return ``value``."""
        return self.max_required_error == 0.0


# --------------------------------------------------------------------------------------
# The exact tail, with Chernoff bounds deciding the far-away points
# --------------------------------------------------------------------------------------


def _log_chernoff(w: np.ndarray, x: float, upper: bool) -> float:
    r"""log of a Chernoff bound on P(Q >= x) (upper) or P(Q <= x) (lower).

    :math:`\log P \le \min_s K(s) - s x` with :math:`K(s) = -\tfrac12\sum_j\log(1 - 2w_js)`,
    over :math:`0 \le s < 1/(2\max_j w_j)` (upper) or :math:`s \le 0` (lower). Any ``s``
    gives a valid bound; the minimiser only makes it tight.
    """
    wmax = float(w.max())
    if wmax < 1e-300:  # the optimiser's bounds ~ 1/wmax would overflow: no bound (log P <= 0)
        return 0.0

    def g(s: float) -> float:
        return -0.5 * float(np.sum(np.log1p(-2.0 * w * s))) - s * x

    from scipy import optimize  # imported here: scipy.optimize costs 0.2 s at import

    if upper:
        res = optimize.minimize_scalar(g, bounds=(0.0, (1.0 - 1e-12) / (2.0 * wmax)),
                                       method="bounded", options={"xatol": 1e-12 / wmax})
    else:
        res = optimize.minimize_scalar(g, bounds=(-1e6 / wmax, 0.0), method="bounded",
                                       options={"xatol": 1e-12 / wmax})
    return min(0.0, float(res.fun), g(0.0))


class _Tail:
    """Exact tail of Q = sum_j w_j Z_j^2, or a Chernoff bound where that decides (see exact_tail)."""

    def __init__(self, w: ArrayLike, p: float) -> None:
        wv = check_nonnegative_vector("w", w)
        self.p = check_probability("p", p)
        if not self.p >= _MIN_MEAN:
            raise ValueError(f"p must be >= {_MIN_MEAN:g} for the report's decisions at 0.9p, p, 1.1p "
                             f"(their bounds underflow below), got p={self.p!r}")
        self.w = wv[wv > 0]
        with np.errstate(over="ignore"):
            self.mean = float(np.sum(self.w))
        check_finite_result(self.mean, what="the mean sum(w) of Q", inputs="w")
        if not self.mean >= _MIN_MEAN:
            raise ValueError(
                f"w must have sum(w) >= {_MIN_MEAN:g}, got sum(w)={self.mean!r}: the quantiles of Q "
                "would lie among the subnormal floats, too coarse for the report's stopping rule "
                "|F(c) - (1 - p)| <= p/10; rescale w")
        self.wmax = float(self.w.max())
        self.law = gchisq.WeightedChiSquare(self.w)
        self.log_low = math.log(0.5 * self.p)
        self.log_high = math.log(0.5 * (1.0 - 1.1 * self.p))
        # each point's answer, kept: the run of the report's procedure and the run that reproduces
        # a published value visit mostly the same points (published_radii_procedure)
        self._flags: dict[float, tuple[float, bool]] = {}
        self._exact: dict[float, float] = {}

    def with_flag(self, c: float) -> tuple[float, bool]:
        """(value, exact): the exact P(Q > c), or (a bound, False) far from the thresholds."""
        c = float(c)
        if c not in self._flags:
            self._flags[c] = self._with_flag(c)
        return self._flags[c]

    def _with_flag(self, c: float) -> tuple[float, bool]:
        # Markov's and a one-weight bound first: cheap, and they decide the ~1000 points a
        # run visits when the weights are near the float range (w = [1e300, 1e300]).
        if c > 0 and self.mean / c < 0.5 * self.p:  # P(Q > c) <= E[Q] / c
            return self.mean / c, False
        if 0 < c < self.wmax:  # P(Q <= c) <= P(w_max Z^2 <= c) <= sqrt(2 c / (pi w_max))
            low = math.sqrt(2.0 * (c / self.wmax) / math.pi)
            if low < 0.5 * (1.0 - 1.1 * self.p):
                return 1.0 - low, False
        if c > self.mean:
            lb = _log_chernoff(self.w, c, upper=True)
            if lb < self.log_low:
                return math.exp(lb), False
        elif c > 0:
            lb = _log_chernoff(self.w, c, upper=False)  # bound on P(Q <= c)
            if lb < self.log_high:
                return -math.expm1(lb), False
        return self.exact(c), True

    def exact(self, c: float) -> float:
        c = float(c)
        if c not in self._exact:
            self._exact[c] = float(self.law.sf(c))
        return self._exact[c]

    def __call__(self, c: float) -> float:
        return self.with_flag(c)[0]


def exact_tail(w: ArrayLike, *, p: float) -> Callable[[float], float]:
    r"""The exact tail :math:`c \mapsto P(Q > c)` for the report's decisions at level ``p``.

    Returns :math:`P(Q > c)` from :class:`egmlib.gchisq.WeightedChiSquare` (relative error
    about :math:`10^{-10}`), except where a Chernoff bound already places :math:`P(c)` below
    :math:`p/2` or above :math:`(1 + 1.1p)/2`, far from every threshold
    :math:`0.9p, p, 1.1p` of :func:`~egmlib.gchisq.report_bisection`; there it returns that bound, which
    leads to the same decisions. This keeps the far tails, which underflow, away from
    :mod:`egmlib.gchisq`.

    Parameters
    ----------
    w : array_like
        Weights :math:`w_j \ge 0`, at least one positive, with a finite sum of at least 1e-300 (e.g.
        :math:`\sigma_j^2` for :math:`C_n^2`, :math:`\sigma_j/\sum_i\sigma_i` for
        :math:`C_t^2`).
    p : float in (0, 1)
        The level the decisions are taken at.

    Examples
    --------
    >>> tail = exact_tail([1.0, 1.0], p=0.01)      # chi^2_2: P(Q > c) = exp(-c/2)
    >>> round(tail(9.0) / math.exp(-4.5), 9), tail(200.0) < 0.005
    (1.0, True)
    """
    return _Tail(w, p)


def exact_report_radius(w: ArrayLike, *, p: float) -> BisectionTrace:
    r"""The report's procedure (:func:`~egmlib.gchisq.report_bisection`) with the exact CDF.

    What the published radii of Figure 2 would have been had chi2comb returned the exact
    :math:`F`: the midpoint return and the stopping rule :math:`|F - (1 - p)| \le p/10`
    are the only sources of error left.

    Examples
    --------
    >>> from egmbook.experiments import zipf_sigmas
    >>> s = zipf_sigmas(100, alpha=0.1)
    >>> tr = exact_report_radius(s / s.sum(), p=1e-3)   # C_t^2 at d=100, n=1e3, alpha=0.1
    >>> tr.last_point, tr.value                         # exact quantile 1.49807
    (1.5, 1.25)
    """
    # every run on floats ends within MAX_BISECTION_STEPS doublings and halvings (weights near the
    # float range need about 1000 of either)
    return report_bisection(exact_tail(w, p=p), p=p, max_steps=MAX_BISECTION_STEPS)


# --------------------------------------------------------------------------------------
# Which CDF errors reproduce a given output
# --------------------------------------------------------------------------------------

#: decision -> (lowest allowed n P-hat, highest allowed n P-hat, lowest open?, highest open?)
_ALLOWED = {
    "double": (1.0, math.inf, True, True),
    "bracketed": (0.0, 1.0, False, False),
    "lo": (1.0 + STOP_FRACTION, math.inf, True, True),
    "hi": (0.0, 1.0 - STOP_FRACTION, False, True),
    "stop-lo": (1.0, 1.0 + STOP_FRACTION, True, False),
    "stop-hi": (1.0 - STOP_FRACTION, 1.0, False, False),
}


def _required(r: float, decision: str) -> float:
    """Distance from n P = r to the interval of n P-hat values that take ``decision``."""
    a, b, _, _ = _ALLOWED[decision]
    return max(0.0, a - r, r - b)


def reproducing_path(w: ArrayLike, *, p: float, value: float, max_steps: int = 200) -> ReproducingPath:
    r"""The run of the report's bisection that returns ``value``, and the CDF error it needs.

    Every output of :func:`~egmlib.gchisq.report_bisection` is the midpoint of a final bracket, and the
    brackets are nested halves of :math:`[2^{k-1}, 2^k]` (or :math:`[0, 1]`). Hence a given
    ``value`` determines the run completely: the doubling must stop at the first power of
    two above ``value``, each bisection step must keep the half that contains ``value``,
    and the run must stop at the step whose new bracket has ``value`` as its midpoint. Each
    decision needs :math:`\hat P(c)` in an interval (see :class:`ReproducingPath`); the
    smallest perturbation :math:`n|\hat P(c) - P(c)|` that achieves it is computed with the
    exact tail, and its maximum over the run is the smallest uniform CDF error
    :math:`\varepsilon^*` (units of :math:`1/n`) under which the procedure returns
    ``value``. With chi2comb at absolute tolerance :math:`1/n`, every ``value`` with
    :math:`\varepsilon^* \le 1` is a possible output; :math:`\varepsilon^* = 0` means the
    exact CDF returns it.

    (Open and closed ends of the decision intervals are ignored in the distance: a
    required error of 0 at a point where the exact tail lies exactly on a threshold is
    reported as 0.)

    Parameters
    ----------
    w : array_like
        Weights of :math:`Q = \sum_j w_jZ_j^2`.
    p : float in (0, 1)
        The report's :math:`1/n`.
    value : float > 0
        The output to reproduce, e.g. a published :math:`C^2` (pass it through
        :func:`snap_to_dyadic` first: the published file rounds some radii to 12 digits).
    max_steps : int, 1 <= max_steps <= 2200, optional
        As in :func:`~egmlib.gchisq.report_bisection`.

    Returns
    -------
    ReproducingPath
        With ``max_required_error = inf`` if no run returns ``value`` (a value at which
        the run would evaluate the CDF, or one needing more than ``max_steps`` steps);
        ``last_point`` is then ``None``. Every float is a dyadic rational, so a value such
        as ``0.3`` is reachable, in about 55 steps and with a huge required error: snap
        printed values first.
    """
    p = check_probability("p", p)
    value = check_positive_finite("value", value)
    max_steps = check_count("max_steps", max_steps, minimum=1, maximum=MAX_BISECTION_STEPS)
    return _reproducing_path(_Tail(w, p), value, max_steps)


def _reproducing_path(tail: _Tail, value: float, max_steps: int) -> ReproducingPath:
    """:func:`reproducing_path` on a tail already built (and perhaps already evaluated)."""
    n_scale = 1.0 / tail.p
    points, decisions = [], []
    lo, hi = 0.0, 1.0
    for _ in range(max_steps):
        points.append(hi)
        if value < hi:
            decisions.append("bracketed")
            break
        decisions.append("double")
        lo, hi = hi, 2.0 * hi
    else:
        return _no_path(value)
    found = False
    for _ in range(max_steps):
        c = 0.5 * (lo + hi)
        if value == 0.5 * (c + hi):
            points.append(c)
            decisions.append("stop-lo")
            found = True
            break
        if value == 0.5 * (lo + c):
            points.append(c)
            decisions.append("stop-hi")
            found = True
            break
        if value == c:
            break  # an evaluated point is never returned
        points.append(c)
        if value > c:
            decisions.append("lo")
            lo = c
        else:
            decisions.append("hi")
            hi = c
    if not found:
        return _no_path(value)
    ratios: list[float | None] = []
    required: list[float] = []
    for c, dec in zip(points, decisions, strict=True):
        P, exact = tail.with_flag(c)
        need = _required(n_scale * P, dec)
        if not exact and need == 0.0:  # a bound shows the exact tail takes this decision
            ratios.append(None)
            required.append(0.0)
            continue
        if not exact:  # a bound on the wrong side: the distance needs the exact tail
            P = tail.exact(c)
            need = _required(n_scale * P, dec)
        ratios.append(n_scale * P)
        required.append(need)
    return ReproducingPath(value, tuple(points), tuple(decisions), tuple(ratios),
                           tuple(required), float(max(required)), points[-1])


def _no_path(value: float) -> ReproducingPath:
    return ReproducingPath(value, (), (), (), (), math.inf, None)


def snap_to_dyadic(x: float, *, max_log2_denominator: int = 30, rtol: float = 1e-11) -> float:
    r"""The dyadic rational :math:`k/2^m` nearest to ``x`` within relative distance ``rtol``.

    The published Figure 2 file prints some radii with 12 significant digits
    (``0.00123596191406`` for :math:`81/65536 = 0.0012359619140625`); every output of the
    report's bisection is a dyadic rational, so the printed value is snapped back before
    :func:`reproducing_path` looks for the run that produced it.

    Parameters
    ----------
    x : float > 0
        The printed value.
    max_log2_denominator : int, 0 <= max_log2_denominator <= 1074, optional
        Largest :math:`m` tried (every positive float is :math:`k/2^m` with :math:`m \le 1074`).
    rtol : float > 0, optional
        Largest relative distance accepted.

    Raises
    ------
    ValueError
        If no :math:`k/2^m` with :math:`m \le` ``max_log2_denominator`` lies within
        ``rtol`` of ``x``.

    Examples
    --------
    >>> snap_to_dyadic(0.00123596191406) == 81 / 65536
    True
    """
    x = check_positive_finite("x", x)
    max_log2_denominator = check_count("max_log2_denominator", max_log2_denominator, minimum=0,
                                       maximum=_MAX_LOG2_DENOMINATOR)
    rtol = check_positive_finite("rtol", rtol)
    for m in range(max_log2_denominator + 1):
        k = round(math.ldexp(x, m))  # x 2^m, exact, without forming the float 2.0**m
        if k > 0 and abs(k / 2**m - x) <= rtol * x:
            return float(Fraction(k, 2**m))
    raise ValueError(
        f"x must lie within relative distance rtol={rtol!r} of a dyadic rational k/2^m with "
        f"m <= {max_log2_denominator}, got x={x!r}")


@dataclass(frozen=True)
class PublishedRadiiProcedure:
    r"""The report's procedure against the published squared radii of Figure 2.

    One row per published point and radius, in the published file's row order with
    :math:`C_n^2` before :math:`C_t^2` at each point; every field is a read-only 1-D array
    of the same length (216).
    """

    d: NDArray[np.int64]  #: dimension
    n: NDArray[np.int64]  #: number of points (p = 1/n)
    alpha: NDArray[np.float64]  #: Zipf exponent
    radius: NDArray[np.str_]  #: ``"Cn"`` (weights sigma_j^2) or ``"Ct"`` (weights sigma_j / sum sigma)
    published: NDArray[np.float64]  #: the published squared radius, snapped to its dyadic rational
    exact: NDArray[np.float64]  #: the exact quantile (egmlib.gchisq.isf)
    procedure: NDArray[np.float64]  #: the report's procedure with the exact CDF (exact_report_radius)
    procedure_last: NDArray[np.float64]  #: the point at which that run stopped
    #: epsilon* of reproducing_path for the published value (units of 1/n)
    required_error: NDArray[np.float64]
    #: where the run that returns the published value stopped (the procedure's output
    #: without the midpoint step)
    last_point: NDArray[np.float64]
    #: the exact clipping probability at the published radius, n P(Q > published), in units of 1/n
    tail_ratio: NDArray[np.float64]

    def __post_init__(self) -> None:
        for f in fields(self):
            dtype = {"d": np.int64, "n": np.int64, "radius": np.str_}.get(f.name, np.float64)
            a: np.ndarray = np.array(getattr(self, f.name), dtype=dtype)
            a.setflags(write=False)
            object.__setattr__(self, f.name, a)

    def __len__(self) -> int:
        return int(self.d.size)


def published_radii_procedure() -> PublishedRadiiProcedure:
    r"""The report's procedure (Section 5) against the 216 published squared radii of Figure 2.

    For every published point (:func:`egmbook.experiments.load_published_figure2`) and both
    radii (:math:`C_n^2`: weights :math:`\sigma_j^2`; :math:`C_t^2`: weights
    :math:`\sigma_j/\sum_i\sigma_i`; :math:`p = 1/n`): the published value snapped to its
    dyadic rational, the exact quantile, :func:`exact_report_radius` and where its run
    stopped, :math:`\varepsilon^*` of :func:`reproducing_path` for the published value and
    where that run stopped, and the exact clipping probability at the published radius
    (see :class:`PublishedRadiiProcedure`). Every published radius is the output of some
    run of the procedure, so ``required_error`` and ``last_point`` are finite. Takes a few
    seconds (about 15 tail evaluations per radius).
    """
    pub = load_published_figure2()
    cols: dict[str, Any] = {f.name: [] for f in fields(PublishedRadiiProcedure)}
    for d, n, a, cn2, ct2 in zip(pub.d, pub.n, pub.alpha, pub.Cn_squared, pub.Ct_squared, strict=True):
        s = zipf_sigmas(int(d), alpha=float(a))
        for name, w, v in (("Cn", s * s, cn2), ("Ct", s / s.sum(), ct2)):
            p = 1.0 / float(n)
            v = snap_to_dyadic(float(v))
            tail = _Tail(w, p)  # one tail for both runs: most of their points are the same
            tr = report_bisection(tail, p=p, max_steps=MAX_BISECTION_STEPS)  # exact_report_radius(w, p=p)
            path = _reproducing_path(tail, v, 200)  # reproducing_path(w, p=p, value=v)
            if path.last_point is None:
                raise RuntimeError(f"no run of the report's procedure returns the published {name}^2 = {v!r} "
                                   f"at d={int(d)}, n={int(n)}, alpha={float(a)!r}")
            law = gchisq.WeightedChiSquare(w)
            row = {"d": int(d), "n": int(n), "alpha": float(a), "radius": name, "published": v,
                   "exact": float(law.isf(p)), "procedure": tr.value, "procedure_last": tr.last_point,
                   "required_error": path.max_required_error, "last_point": path.last_point,
                   "tail_ratio": float(n) * float(law.sf(v))}
            for key, val in row.items():
                cols[key].append(val)
    return PublishedRadiiProcedure(**cols)
