"""The black-box privacy audit (chapter 7b): attacks on released outputs, with controls.

:func:`black_box_audit` runs a released mechanism many times on each of two neighbouring
datasets (:mod:`egmbook.neighbours`) and sees only the released outputs (:func:`released`).
A distinguishing attack (:func:`distinguishing_attack`) learns a statistic, a threshold and
a side from one half of the outputs and is scored on the other half; its true and false
positive rates, with one-sided Clopper-Pearson bounds, give a lower bound on epsilon at a
given delta by the hypothesis-testing characterisation of (eps, delta)-DP (Kairouz, Oh and
Viswanath 2015; used for auditing by Jagielski, Ullman and Oprea 2020 and Nasr et al. 2021):

    eps >= log((TPR - delta) / FPR)   and   eps >= log((1 - FPR - delta) / (1 - TPR))

for every test (:func:`eps_lower_bound`).  Negative controls: Algorithm 3 deliberately
mis-calibrated to add 10 % and 30 % less noise than its claim (:func:`weakened_algorithm3`),
and the private pipelines run with CoinPress's cancelling distance formula of before issue 25
(:func:`with_cancelling_distances`).  :func:`pair_audit` audits a rho-zCDP pipeline on any
pair.  What it can and cannot show: a lower bound for one pair and one family of tests; it
can refute a claim, never prove one (see :func:`trials_needed` for the cost of catching
small calibration errors).

The book's own run of the audit, with its setting and stored results, is
:mod:`egmbook.book_audit`; chapter 7a's white-box check is :mod:`egmbook.privacy_check`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from egmbook.neighbours import worst_case_pair
from egmlib import calibration, mechanisms
from egmlib import validation as _v

__all__ = [
    "ALGORITHM3",
    "CONFIDENCE",
    "INTERMEDIATE",
    "STATISTICS",
    "WEAKENED_FACTORS",
    "AttackResult",
    "AuditRow",
    "black_box_audit",
    "cancelling_step_sum",
    "clopper_pearson",
    "default_pipeline",
    "distinguishing_attack",
    "eps_lower_bound",
    "expected_eps_lower_bound",
    "pair_audit",
    "pipeline_audit",
    "released",
    "run_releases",
    "trials_needed",
    "weakened_algorithm3",
    "with_cancelling_distances",
]

#: Largest count of outputs of the audit's bounds: integers up to 2^53 are exact in float64,
#: the arithmetic of the Beta quantiles.
_COUNT_MAX = 2**53

#: Smallest level alpha of the audit's bounds.  scipy's Beta quantiles (Boost's root finder)
#: give up and return a wrong value below about 1e-100; the bounds use alpha / 2, and no
#: audit states a confidence beyond 1 - 1e-40.
_ALPHA_MIN = 1e-40


def _check_alpha(alpha: Any) -> float:
    """The level of a bound: ``_ALPHA_MIN <= alpha < 1``."""
    a = _v.check_probability("alpha", alpha)
    if a < _ALPHA_MIN:
        raise ValueError(f"alpha must be >= {_ALPHA_MIN:g} (the Beta quantiles lose their accuracy "
                         f"below), got alpha={a!r}")
    return a



ALGORITHM3: Callable[..., Any] = mechanisms.algorithm3

#: Negative controls of :func:`black_box_audit`: (name, noise factor).  The mechanism adds
#: ``factor`` times the noise its claim requires.
WEAKENED_FACTORS = (("10% less noise", 0.9), ("30% less noise", 0.7))

#: Overall confidence of every lower bound of the audit (each bound holds with at least
#: this probability over the mechanism's randomness; the union bound over the two or four
#: one-sided Clopper-Pearson bounds it uses is accounted for).
CONFIDENCE = 0.95


def _check_deltas(deltas: Any, *, open_interval: bool = False) -> list[float]:
    """The audited deltas: a non-empty list of numbers in [0, 1], or in (0, 1) where a claim's
    epsilon is computed at each (Theorem 2's profile is defined for 0 < delta < 1)."""
    arr = _v.as_real_array("deltas", deltas).ravel()
    for x in arr:
        if open_interval:
            _v.check_probability("deltas entry", float(x))
        else:
            _v.check_closed_interval("deltas entry", float(x), low=0.0, high=1.0)
    return [float(x) for x in arr]


def _check_factors(factors: Any) -> list[tuple[str, float]]:
    """The audited mechanisms: a non-empty sequence of (name, noise factor > 0) pairs."""
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Iterable):
        raise TypeError("factors must be a sequence of (name, noise factor) pairs, got factors of type "
                        f"{type(factors).__name__}")
    out = []
    for entry in factors:
        if not isinstance(entry, (tuple, list)):
            raise TypeError("factors must hold (name, noise factor) pairs, got an entry of type "
                            f"{type(entry).__name__}")
        if len(entry) != 2:
            raise ValueError(f"factors must hold (name, noise factor) pairs, got an entry of length {len(entry)}")
        name, factor = entry
        if not isinstance(name, str):
            raise TypeError(f"factors' names must be strings, got a name of type {type(name).__name__}")
        out.append((name, _v.check_positive_finite("factors' noise factor", factor)))
    if not out:
        raise ValueError("factors must name at least one mechanism, got an empty factors")
    return out


#: The intermediate private releases of a pipeline's result that the attack sees with its
#: estimate (each covered by the pipeline's budget): the centre, the scales and the radius.
INTERMEDIATE = ("centre", "sigma", "sigma_hat", "C")


def released(result: Any) -> NDArray[np.float64]:
    """The private releases of a mechanism's result, and nothing else, as one vector.

    Algorithm 3's results release a private sum, ``sum``; the peers' pipelines release a
    private mean, ``estimate``, and with it the intermediate releases that their budget
    covers (:data:`INTERMEDIATE`: the private centre, scales and radius), which the attack
    sees too: the centre and radius steps are where issue 25's leaks were.  A result that names
    the path it took (ESM's, ``path``, one of ``egmlib.peers.path_errors.PATHS``) releases
    that path too, as its index, and its scales as zeros where the path bought none: every release
    of a mechanism then has one length, whichever path each run took, and the attack can read the
    path (a function of public and released values, itself released).
    """
    out = getattr(result, "sum", None)
    if out is not None and not callable(out):
        return _v.check_finite_array("result's release", out)
    out = getattr(result, "estimate", None)
    if out is None or callable(out):
        raise TypeError("result must be a mechanism's result with a released vector `sum` (Algorithm 3) "
                        f"or `estimate` (a peer's pipeline), got result of type {type(result).__name__}")
    parts = [np.ravel(_v.check_finite_array("result's release", out))]
    path = _path_index(result)
    for name in INTERMEDIATE:
        extra = getattr(result, name, None)
        if extra is not None and not callable(extra):
            parts.append(np.ravel(_v.check_finite_array(f"result's {name}", extra)))
        elif path is not None and name == "sigma" and hasattr(result, name):
            parts.append(np.zeros(parts[0].shape[0]))  # scales this path did not buy
    if path is not None:
        parts.append(np.array([float(path)]))
    return np.concatenate(parts)


def _path_index(result: Any) -> int | None:
    """The index in ESM's PATHS of the path a result names (None for a result that names none)."""
    from egmlib.peers.path_errors import PATHS

    path = getattr(result, "path", None)
    return PATHS.index(path) if isinstance(path, str) and path in PATHS else None


def clopper_pearson(k: int, n: int, *, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds (lo, hi) on a binomial proportion, each at level alpha.

    ``P(p < lo) <= alpha`` and ``P(p > hi) <= alpha`` for k ~ Bin(n, p) (Clopper and
    Pearson 1934): lo is the alpha-quantile of Beta(k, n - k + 1) (0 if k = 0), hi the
    (1 - alpha)-quantile of Beta(k + 1, n - k) (1 if k = n).  ``alpha`` must be at least
    1e-40 (below about 1e-100 scipy's Beta quantiles are wrong), ``n`` at most 2^53.

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, alpha=0.05)
    >>> lo, round(hi, 4)                       # the "rule of three": about 3/n
    (0.0, 0.0295)
    """
    n = _v.check_count("n", n, minimum=1, maximum=_COUNT_MAX)
    k = _v.check_count("k", k, minimum=0, maximum=n)
    return _clopper_pearson(k, n, _check_alpha(alpha))


def _clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """:func:`clopper_pearson` without its checks (alpha down to _ALPHA_MIN / 2)."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))
    return lo, hi


def eps_lower_bound(tp: int, fp: int, *, n_pos: int, n_neg: int, delta: float,
                    alpha: float = 1.0 - CONFIDENCE, both_directions: bool = True) -> float:
    """Lower bound on epsilon at delta from one test's counts (hypothesis-testing DP).

    A test rejects ("the output came from X") with true positive rate TPR = P_X(reject)
    and false positive rate FPR = P_X'(reject).  If the mechanism is (eps, delta)-DP then
    TPR <= e^eps FPR + delta and, for the complementary test run the other way,
    1 - FPR <= e^eps (1 - TPR) + delta (Kairouz, Oh and Viswanath 2015, Theorem 2.1).
    Replacing TPR by a lower and FPR by an upper Clopper-Pearson bound
    (:func:`clopper_pearson`) gives

        eps_lb = max(log((TPR_lo - delta) / FPR_hi), log((1 - FPR_hi - delta) / (1 - TPR_lo)))

    (0 where neither is positive), which holds with probability at least 1 - alpha: the
    two one-sided bounds are each taken at level alpha / 2, and they serve both
    directions at once.  ``tp`` of ``n_pos`` outputs from X rejected, ``fp`` of ``n_neg``
    outputs from X' rejected.

    Examples
    --------
    >>> round(eps_lower_bound(900, 100, n_pos=1000, n_neg=1000, delta=1e-6), 2)
    1.99
    """
    n_pos = _v.check_count("n_pos", n_pos, minimum=1, maximum=_COUNT_MAX)
    n_neg = _v.check_count("n_neg", n_neg, minimum=1, maximum=_COUNT_MAX)
    tp = _v.check_count("tp", tp, minimum=0, maximum=n_pos)
    fp = _v.check_count("fp", fp, minimum=0, maximum=n_neg)
    delta = _v.check_closed_interval("delta", delta, low=0.0, high=1.0)
    alpha = _check_alpha(alpha)
    both_directions = _v.check_bool("both_directions", both_directions)
    tpr_lo = _clopper_pearson(tp, n_pos, alpha / 2)[0]
    fpr_hi = _clopper_pearson(fp, n_neg, alpha / 2)[1]
    best = 0.0
    if tpr_lo - delta > 0.0 and fpr_hi > 0.0:
        best = max(best, math.log((tpr_lo - delta) / fpr_hi))
    if both_directions and 1.0 - fpr_hi - delta > 0.0 and 1.0 - tpr_lo > 0.0:
        best = max(best, math.log((1.0 - fpr_hi - delta) / (1.0 - tpr_lo)))
    return best


#: The statistics :func:`distinguishing_attack` chooses from on its training half.
STATISTICS = ("linear", "coordinates")


class AttackResult(NamedTuple):
    """One threshold test of :func:`distinguishing_attack`, scored on the held-out half."""

    delta: float  #: the delta at which the bound is stated
    threshold: float  #: on the statistic, chosen on the training half
    #: which test, 1 flags X when T > threshold, -1 flags X' when T <= threshold, 2 flags X' when
    #: T > threshold, -2 flags X when T <= threshold
    direction: int
    tp: int  #: held-out outputs of the flagged dataset that are flagged
    fp: int  #: held-out outputs of the other dataset that are flagged
    n_pos: int
    n_neg: int
    eps_lb: float  #: :func:`eps_lower_bound` of the held-out counts (one direction, fixed in advance)
    statistic: str = "linear"  #: the statistic of :data:`STATISTICS` chosen on the training half


def _one_direction_lb(tp: np.ndarray, fp: np.ndarray, n_pos: int, n_neg: int, delta: float,
                      alpha: float) -> np.ndarray:
    """Vectorised log((TPR_lo - delta)/FPR_hi) over many thresholds (-inf where undefined)."""
    tp, fp = np.asarray(tp), np.asarray(fp)
    lo = np.where(tp > 0, stats.beta.ppf(alpha, np.maximum(tp, 1), n_pos - tp + 1), 0.0)
    hi = np.where(fp < n_neg, stats.beta.ppf(1.0 - alpha, fp + 1, np.maximum(n_neg - fp, 1)), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((lo - delta > 0) & (hi > 0), np.log((lo - delta) / hi), -np.inf)
    return out


def _statistics(tr: np.ndarray, trp: np.ndarray, *rest: np.ndarray,
                names: Iterable[str]) -> dict[str, list[np.ndarray]]:
    """Each statistic of ``names``, learned on the training halves and applied to all four."""
    v = 0.5 * (tr.var(axis=0, ddof=1) + trp.var(axis=0, ddof=1))
    v = np.where(v > 0, v, 1.0)
    # centred at the pooled training mean: releases far from the origin with a tiny spread
    # (5000 +- 1e-10) keep their differences
    m = 0.5 * (tr.mean(axis=0) + trp.mean(axis=0))
    centred = [A - m for A in (tr, trp, *rest)]
    out = {}
    for name in names:
        if name == "linear":  # w . y, w the likelihood-ratio direction for diagonal Gaussian releases
            w = (tr.mean(axis=0) - trp.mean(axis=0)) / v
            out[name] = [A @ w for A in centred]
        else:  # each released coordinate, and its distance from the pooled median: a difference of
            # location or of spread in one coordinate, also in a share of the runs only
            med = np.median(np.r_[tr, trp], axis=0) - m
            for j in range(tr.shape[1]):
                out[f"coordinate {j}"] = [A[:, j] for A in centred]
                out[f"spread {j}"] = [np.abs(A[:, j] - med[j]) for A in centred]
    return out


def _counts(t_x: np.ndarray, t_xp: np.ndarray, c: np.ndarray | float,
            direction: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(tp, fp, n_pos, n_neg) of the test ``direction`` at threshold(s) c (AttackResult)."""
    above = t_x.shape[0] - np.searchsorted(np.sort(t_x), c, side="right")  # T > c among X's outputs
    above_p = t_xp.shape[0] - np.searchsorted(np.sort(t_xp), c, side="right")
    nx, nxp = t_x.shape[0], t_xp.shape[0]
    return {1: (above, above_p, nx, nxp), -1: (nxp - above_p, nx - above, nxp, nx),
            2: (above_p, above, nxp, nx), -2: (nx - above, nxp - above_p, nx, nxp)}[direction]


def _best_threshold(t_tr: np.ndarray, t_trp: np.ndarray, delta: float, alpha: float,
                    n_thresholds: int) -> tuple[float, float, int]:
    """The training bound, threshold and test (AttackResult.direction) of the best test on one statistic."""
    cand = np.quantile(np.r_[t_tr, t_trp], np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1])
    best = (-math.inf, float(cand[0]), 1)
    for direction in (1, -1, 2, -2):
        tp, fp, n_pos, n_neg = _counts(t_tr, t_trp, cand, direction)
        lb = _one_direction_lb(tp, fp, n_pos, n_neg, delta, alpha / 2)
        k = int(np.argmax(lb))
        if lb[k] > best[0]:
            best = (float(lb[k]), float(cand[k]), direction)
    return best


def distinguishing_attack(Y: ArrayLike, Y_prime: ArrayLike, *, deltas: Iterable[float],
                          alpha: float = 1.0 - CONFIDENCE, n_thresholds: int = 400,
                          statistics: Iterable[str] = STATISTICS) -> list[AttackResult]:
    """A black-box distinguishing attack on two samples of releases; one result per delta.

    ``Y`` holds releases of M(X), ``Y_prime`` of M(X') (one per row, same count).  The first
    half of each is for training, the second for scoring, so the statistic, threshold and
    direction are fixed before the scored outputs are looked at:

    1. the statistics of ``statistics``, learned on the training half with v the pooled
       per-coordinate variance: ``"linear"``, T(y) = w . y with w = (mean_X - mean_X') / v
       (the likelihood-ratio direction for Gaussian releases with diagonal covariance);
       ``"coordinates"``, for every released coordinate j, ``T(y) = y_j`` and
       ``T(y) = abs(y_j - med_j)`` with the pooled median (a difference of location or spread in
       one coordinate, also in a share of the runs only, which a linear test misses: issue
       25's leaks widened the releases of the private centre on one dataset);
    2. for each delta: among ``n_thresholds`` candidate thresholds (quantiles of the pooled
       training statistic), the four tests (flag X, or X', above or at most the threshold)
       and the statistics, the one with the largest :func:`eps_lower_bound`-style bound on
       the training half;
    3. that single test scored on the held-out half: the one-sided bound in its chosen
       direction, at level alpha / 2 for each rate (holds with probability >= 1 - alpha;
       the hypothesis-testing characterisation of Kairouz, Oh and Viswanath 2015).

    Returns
    -------
    list of AttackResult
    """
    Y = _v.check_finite_array("Y", Y, ndim=2)
    Yp = _v.check_finite_array("Y_prime", Y_prime, ndim=2)
    if Y.shape != Yp.shape or Y.shape[0] < 4:
        raise ValueError(f"Y and Y_prime must have the same shape with at least 4 rows, got {Y.shape} "
                         f"and {Yp.shape}")
    alpha = _check_alpha(alpha)
    n_thresholds = _v.check_count("n_thresholds", n_thresholds, minimum=2, maximum=10**5)
    deltas = _check_deltas(deltas)
    if isinstance(statistics, str):
        raise TypeError(f"statistics must be a sequence of names, got the string {statistics!r}")
    names = [_v.check_choice("statistics entry", s, STATISTICS) for s in statistics]
    if not names:
        raise ValueError("statistics must name at least one statistic, got none")
    # Both statistics are invariant under a common rescaling of Y and Y_prime (v scales with
    # it): where the largest magnitude is extreme, dividing by it keeps the variances finite
    # for entries near 1e308 and non-zero for subnormal ones (ordinary data are left untouched).
    scale = float(max(np.max(np.abs(Y)), np.max(np.abs(Yp))))
    if scale > 0.0 and not 1e-100 < scale < 1e100:
        Y, Yp = Y / scale, Yp / scale
    h = Y.shape[0] // 2
    T = _statistics(Y[:h], Yp[:h], Y[h:], Yp[h:], names=names)
    out = []
    for delta in deltas:
        trained = {s: _best_threshold(T[s][0], T[s][1], delta, alpha, n_thresholds) for s in T}
        best = max(trained, key=lambda s: trained[s][0])
        _, c, direction = trained[best]
        tp, fp, n_p, n_n = (int(x) for x in _counts(T[best][2], T[best][3], c, direction))
        lb = eps_lower_bound(tp, fp, n_pos=n_p, n_neg=n_n, delta=delta, alpha=alpha, both_directions=False)
        out.append(AttackResult(delta=delta, threshold=c, direction=direction, tp=tp, fp=fp,
                                n_pos=n_p, n_neg=n_n, eps_lb=lb, statistic=best))
    return out


def weakened_algorithm3(factor: float) -> Callable[..., Any]:
    """Algorithm 3 that adds ``factor`` times the noise its (eps, delta) claim requires.

    A negative control built by mis-calibration: the returned function takes Algorithm 3's
    arguments, and calls :data:`ALGORITHM3` with eps replaced by
    eps' = eps_from_sigma(factor * sigma_opt(eps, delta), delta), so the noise standard
    deviation 2 C sigma_opt(eps', delta) is ``factor`` times the claimed one.  With
    factor = 1 it is Algorithm 3 itself.
    """
    factor = _v.check_positive_finite("factor", factor)

    def mechanism(X: Any, *, eps: float, delta: float, **kw: Any) -> Any:
        eps_used = calibration.eps_from_sigma(factor * calibration.sigma_opt(eps=eps, delta=delta), delta=delta)
        return ALGORITHM3(X, eps=eps_used, delta=delta, **kw)

    mechanism.__name__ = f"algorithm3_noise_times_{factor:g}"
    return mechanism


def run_releases(mechanism: Callable[..., Any], X: ArrayLike, *, trials: int,
                 rng: np.random.Generator, **kw: Any) -> NDArray[np.float64]:
    """``trials`` independent releases of ``mechanism(X, rng=rng, **kw)``, one per row."""
    mechanism = _v.check_callable("mechanism", mechanism)
    trials = _v.check_count("trials", trials, minimum=1, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    return np.array([released(mechanism(X, rng=rng, **kw)) for _ in range(trials)])


class AuditRow(NamedTuple):
    """One audited mechanism of :func:`black_box_audit` or :func:`pair_audit`."""

    name: str
    noise_factor: float  #: noise added / noise the claim requires (1 for the honest mechanism)
    claimed_eps: dict[float, float]  #: the claim's epsilon at each audited delta
    true_eps: dict[float, float]  #: epsilon of the noise actually added (known for the controls)
    attacks: list[AttackResult]  #: one per audited delta
    #: median over the released coordinates of sd(releases on X') / sd(releases on X), the sds
    #: as 1.4826 median absolute deviations
    spread_ratio: float | None = None
    #: largest absolute difference of a coordinate's medians on X' and on X, in its sd on X
    shift_sd: float | None = None

    @property
    def caught(self) -> dict[float, bool]:
        """Whether the lower bound exceeds the claim (the claim refuted), by delta."""
        return {a.delta: a.eps_lb > self.claimed_eps[a.delta] for a in self.attacks}


def _spread_and_shift(Y: NDArray[np.float64], Yp: NDArray[np.float64]) -> tuple[float, float]:
    """:attr:`AuditRow.spread_ratio` and :attr:`AuditRow.shift_sd` of two samples of releases.

    Robust versions (medians, and 1.4826 median absolute deviations for the sds), so that a
    rare large release, which privacy allows, does not dominate them.
    """
    med, medp = np.median(Y, axis=0), np.median(Yp, axis=0)
    sd = 1.4826 * np.median(np.abs(Y - med), axis=0)
    sdp = 1.4826 * np.median(np.abs(Yp - medp), axis=0)
    live = sd > 0
    if not np.any(live):
        return (1.0 if not np.any(sdp > 0) else math.inf), (0.0 if np.array_equal(med, medp) else math.inf)
    return float(np.median(sdp[live] / sd[live])), float(np.max(np.abs(medp[live] - med[live]) / sd[live]))


def black_box_audit(sigma: ArrayLike, *, n: int, eps: float, delta: float, trials: int,
                    rng: np.random.Generator, deltas: Iterable[float],
                    factors: Iterable[tuple[str, float]] = (("Algorithm 3", 1.0),) + WEAKENED_FACTORS,
                    far: float = 10.0, alpha: float = 1.0 - CONFIDENCE) -> list[AuditRow]:
    """The black-box audit of Algorithm 3 and its weakened controls on one worst-case pair.

    :func:`egmbook.neighbours.worst_case_pair` (n rows, d = len(sigma), centre 0, p_C = 1/n) gives X ~ X';
    each mechanism in ``factors`` (:func:`weakened_algorithm3`) is run ``trials`` times on
    X and on X' (half for training the attack, half for scoring it), and
    :func:`distinguishing_attack` turns the outputs into a lower bound on epsilon at each
    delta in ``deltas``.  The claim at delta' is Theorem 2's exact profile of the claimed
    noise, eps_from_sigma(sigma_opt(eps, delta), delta') -- the same calibration that gives
    (eps, delta) also gives (eps', delta') for every delta' on that curve.

    Each bound holds with probability at least 1 - ``alpha``.  Random numbers: the pair,
    then for each mechanism the releases on X, then on X'.
    """
    alpha = _check_alpha(alpha)
    sigma = _v.check_positive_vector("sigma", sigma)
    n = _v.check_count("n", n, minimum=2, maximum=10**6)
    eps = _v.check_positive_finite("eps", eps)
    delta = _v.check_probability("delta", delta)
    trials = _v.check_count("trials", trials, minimum=4, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    deltas = _check_deltas(deltas, open_interval=True)
    factors = _check_factors(factors)
    X, Xp = worst_case_pair(sigma, n=n, rng=rng, far=far)
    s_claim = calibration.sigma_opt(eps=eps, delta=delta)
    kw = dict(sigma=sigma, mu_hat=np.zeros(sigma.size), eps=eps, delta=delta, p_clip=1.0 / n)
    rows = []
    for name, factor in factors:
        mech = weakened_algorithm3(factor)
        Y = run_releases(mech, X, trials=trials, rng=rng, **kw)
        Yp = run_releases(mech, Xp, trials=trials, rng=rng, **kw)
        attacks = distinguishing_attack(Y, Yp, deltas=deltas, alpha=alpha)
        rows.append(AuditRow(
            name=name, noise_factor=float(factor),
            claimed_eps={dd: calibration.eps_from_sigma(s_claim, delta=dd) for dd in deltas},
            true_eps={dd: calibration.eps_from_sigma(factor * s_claim, delta=dd) for dd in deltas},
            attacks=attacks))
    return rows


def pair_audit(X: ArrayLike, X_prime: ArrayLike, *, pipeline: Callable[..., Any], rho: float, trials: int,
               rng: np.random.Generator, deltas: Iterable[float], lower: float, upper: float,
               name: str = "", alpha: float = 1.0 - CONFIDENCE) -> AuditRow:
    """The black-box audit of a rho-zCDP pipeline on one pair of neighbouring datasets ``X``, ``X_prime``.

    ``pipeline(X, rho=, lower=, upper=, rng=)`` is run ``trials`` times on X and on X'
    (:func:`run_releases`); the attack (:func:`distinguishing_attack`) sees every private
    release (:func:`released`: the estimate and the private centre, scales and radius).
    The claim at delta' is the library's conversion :func:`egmlib.calibration.rho_to_eps`
    (Bun and Steinke 2016), an upper bound on the pipeline's epsilon, so a lower bound above
    it refutes it.  Each bound holds with probability at least 1 - ``alpha``.

    Random numbers: the releases on X, then on X'.
    """
    X = _v.check_finite_data("X", X)
    Xp = _v.check_finite_data("X_prime", X_prime)
    if X.shape != Xp.shape:
        raise ValueError(f"X and X_prime must have the same shape, got {X.shape} and {Xp.shape}")
    pipeline = _v.check_callable("pipeline", pipeline)
    rho = _v.check_positive_finite("rho", rho)
    trials = _v.check_count("trials", trials, minimum=4, maximum=10**7)
    rng = _v.check_rng("rng", rng)
    deltas = _check_deltas(deltas, open_interval=True)
    lower, upper = _v.check_bounds(lower, upper)
    alpha = _check_alpha(alpha)
    if not isinstance(name, str):
        raise TypeError(f"name must be a string ('' for the pipeline's own name), got name of type "
                        f"{type(name).__name__}")
    kw = dict(rho=rho, lower=lower, upper=upper)
    Y = run_releases(pipeline, X, trials=trials, rng=rng, **kw)
    Yp = run_releases(pipeline, Xp, trials=trials, rng=rng, **kw)
    attacks = distinguishing_attack(Y, Yp, deltas=deltas, alpha=alpha)
    claim = {dd: calibration.rho_to_eps(rho, delta=dd) for dd in deltas}
    label = name or getattr(pipeline, "name", None) or getattr(pipeline, "__name__", "pipeline")
    ratio, shift = _spread_and_shift(Y, Yp)
    return AuditRow(name=str(label), noise_factor=1.0, claimed_eps=claim, true_eps=claim, attacks=attacks,
                    spread_ratio=ratio, shift_sd=shift)


def pipeline_audit(sigma: ArrayLike, *, n: int, rho: float, trials: int, rng: np.random.Generator,
                   deltas: Iterable[float], lower: float, upper: float, far: float = 10.0,
                   pipeline: Callable[..., Any] | None = None, alpha: float = 1.0 - CONFIDENCE) -> AuditRow:
    """:func:`pair_audit` of a pipeline on the worst-case pair of :func:`black_box_audit`.

    ``pipeline`` defaults to ``egmlib.peers.arms.ARMS["Alg3"]`` (the robust pipeline
    :func:`egmlib.peers.algorithm3_robust.algorithm3_robust`); the pair is
    :func:`egmbook.neighbours.worst_case_pair` of ``sigma`` with ``n`` rows, and
    [lower, upper] must contain it.  Random numbers: the pair, then the releases.
    """
    pipeline = default_pipeline() if pipeline is None else _v.check_callable("pipeline", pipeline)
    sigma = _v.check_positive_vector("sigma", sigma)
    rng = _v.check_rng("rng", rng)
    lower, upper = _v.check_bounds(lower, upper)
    X, Xp = worst_case_pair(sigma, n=n, rng=rng, far=far)
    if not (X.min() > lower and Xp.min() > lower and X.max() < upper and Xp.max() < upper):
        raise ValueError(f"lower and upper must contain the pair, got [{lower}, {upper}] for data in "
                         f"[{min(X.min(), Xp.min()):.3g}, {max(X.max(), Xp.max()):.3g}]")
    return pair_audit(X, Xp, pipeline=pipeline, rho=rho, trials=trials, rng=rng,
                      deltas=deltas, lower=lower, upper=upper, alpha=alpha)


def default_pipeline() -> Callable[..., Any]:
    """``egmlib.peers.arms.ARMS["Alg3"]``, the book's recommended pipeline."""
    from egmlib.peers.arms import ARMS

    return ARMS["Alg3"]


# --------------------------------------------------------------------------------------- #
# A negative control of the pipelines: CoinPress's distances before issue 25
# --------------------------------------------------------------------------------------- #
def cancelling_step_sum(X: ArrayLike, c: ArrayLike, R: float) -> tuple[NDArray[np.float64], int]:
    """CoinPress's step before issue 25: ``sum_i clip_R(x_i - c)`` from the cancelling expansion.

    As :func:`egmlib.peers.coinpress.coinpress_mean` computed it (Biswas et al. 2020's step):
    a step whose ball held every row (tested with centred distances from the mean) took the
    plain sum ``X^T 1``; any other step took the distances from ``||x||^2 - 2 x.c + ||c||^2``
    and the sum ``X^T s + (n - sum s) c``.  Both are returned centred (minus n c), with the number of rows
    clipped.  Once the rows are about 1e8 times their spread from the origin the expansion cancels, a far row is
    judged inside the ball and enters whole.  Kept as a negative control: the audit and the
    sensitivity harness (tests/test_privacy_floating_point.py) must catch it.
    """
    X = _v.check_finite_data("X", X)
    c = _v.check_finite_vector("c", c, length=X.shape[1], of="one entry per column of X")
    R = _v.check_positive_finite("R", R)
    n = X.shape[0]
    with np.errstate(invalid="ignore", over="ignore"):
        m = X.T @ np.ones(n) / n
        spread = float(np.sqrt(np.einsum("ij,ij->i", X - m, X - m).max()))
        if spread + float(np.linalg.norm(m - c)) <= R * (1.0 - 1e-6):
            out, k = X.T @ np.ones(n) - n * c, 0
        else:
            sq = np.einsum("ij,ij->i", X, X)
            dist = np.sqrt(np.maximum(sq - 2.0 * (X @ c) + float(c @ c), 0.0))
            scale = np.ones(n)
            far = dist > R
            scale[far] = R / dist[far]
            out, k = X.T @ scale + (n - scale.sum()) * c - n * c, int(np.count_nonzero(far))
    _v.check_finite_result(out, what="the cancelling step's sum", inputs="X or c")
    return out, k


def with_cancelling_distances(pipeline: Callable[..., Any]) -> Callable[..., Any]:
    """``pipeline`` run with CoinPress's step replaced by :func:`cancelling_step_sum`.

    A negative control for chapter 7b's audit of the pipelines on the constant-column and
    far-from-origin pairs (:mod:`egmbook.neighbours`): the same pipeline with distances
    that cancel, which the audit must refute.  The replacement lasts only for the call.
    """
    pipeline = _v.check_callable("pipeline", pipeline)
    from egmlib.peers import coinpress

    def old_step_sum(X: NDArray[np.float64], c: NDArray[np.float64], R: float, ref: object,
                     b: NDArray[np.float64] | None = None) -> tuple[NDArray[np.float64], int]:
        """CoinPress's step with the cancelling distances, on the rows x_i * b (b = 1 when None) as
        the current step takes them; ``ref`` (the current step's reference point) is not used."""
        return cancelling_step_sum(X if b is None else X * b, c, R)

    def control(*args: Any, **kwargs: Any) -> Any:
        saved = coinpress._step_sum
        coinpress._step_sum = old_step_sum
        try:
            return pipeline(*args, **kwargs)
        finally:
            coinpress._step_sum = saved

    base = getattr(pipeline, "name", None) or getattr(pipeline, "__name__", "pipeline")
    control.__name__ = f"{base}, cancelling distances"
    return control


def expected_eps_lower_bound(mu: float, *, trials: int, delta: float,
                             alpha: float = 1.0 - CONFIDENCE) -> float:
    """The lower bound the attack reaches at the expected counts, for Gaussian releases.

    For releases whose statistic is N(0, 1) under X' and N(mu, 1) under X (mu = 1/sigma for
    the Gaussian mechanism at noise multiplier sigma), the best threshold test has
    FPR = Phi(-t), TPR = Phi(mu - t); this is the largest :func:`eps_lower_bound` over t
    (both directions) with counts rounded from ``trials`` held-out outputs per dataset.
    The attack's realised bound scatters around it.
    """
    mu = _v.check_positive_finite("mu", mu)
    trials = _v.check_count("trials", trials, minimum=1, maximum=10**12)
    delta = _v.check_closed_interval("delta", delta, low=0.0, high=1.0)
    alpha = _check_alpha(alpha)
    t = np.linspace(-4.0, mu + 8.0, 600)
    tp = np.rint(stats.norm.sf(t - mu) * trials).astype(np.int64)
    fp = np.rint(stats.norm.sf(t) * trials).astype(np.int64)
    plus = _one_direction_lb(tp, fp, trials, trials, delta, alpha / 2)
    return float(max(0.0, np.max(plus)))


def trials_needed(factor: float, *, sigma_claim: float, delta: float,
                  alpha: float = 1.0 - CONFIDENCE) -> int:
    """Held-out outputs per dataset for the attack to refute a claim at the expected counts.

    The mechanism claims noise multiplier ``sigma_claim`` (Theorem 2's profile gives its
    claim eps_from_sigma(sigma_claim, delta)) but adds ``factor`` times that noise; this is the
    smallest number of held-out outputs per dataset (to 2 significant digits, by bisection
    on a log scale) at which :func:`expected_eps_lower_bound` exceeds the claim.  A
    property of this attack and this pair, not of every audit.
    """
    factor = _v.check_positive_finite("factor", factor)
    sigma_claim = _v.check_positive_finite("sigma_claim", sigma_claim)
    if not factor < 1.0:
        raise ValueError(f"factor must be < 1 (less noise than claimed), got factor={factor!r}")
    delta = _v.check_probability("delta", delta)
    alpha = _check_alpha(alpha)
    mu = 1.0 / (factor * sigma_claim)
    if not (math.isfinite(mu) and mu > 0.0):
        raise ValueError(f"factor * sigma_claim must be a positive noise multiplier with a finite inverse, got "
                         f"factor={factor!r} and sigma_claim={sigma_claim!r}")
    claim = calibration.eps_from_sigma(sigma_claim, delta=delta)

    def caught(N: int) -> bool:
        return expected_eps_lower_bound(mu, trials=N, delta=delta, alpha=alpha) > claim

    hi = 100
    while not caught(hi):
        hi *= 4
        if hi > 10**12:
            raise ValueError("no number of trials up to 1e12 catches this control at the expected counts: "
                             f"factor={factor!r} is too close to 1 or sigma_claim={sigma_claim!r} too large "
                             f"(claim eps={claim:.3g} at delta={delta!r}, bounds at level alpha={alpha!r})")
    lo = max(1, hi // 4)
    while hi / lo > 1.01:
        mid = int(math.sqrt(lo * hi))
        lo, hi = (lo, mid) if caught(mid) else (mid, hi)
    return int(float(f"{hi:.2g}"))
