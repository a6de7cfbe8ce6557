r"""CoinPress: iterative private mean estimation with a known covariance.

Biswas, Dong, Kamath and Ullman (2020), "CoinPress: Practical private mean and
covariance estimation", NeurIPS (arXiv 2006.06618), Algorithms 1 (``MVMRec``) and 2
(``MVM``), for data :math:`y_i \sim \mathcal N(\mu, I_d)` and a public prior ball
:math:`B_2(c_0, r_0) \ni \mu`.  Step :math:`s` (budget :math:`\rho_s`, failure
probability :math:`\beta_s`):

1. :math:`\gamma_1 = \gamma(d, \beta_s/n)`, :math:`\gamma_2 = \gamma(d, \beta_s)` with
   :math:`\gamma(d,\beta) = \sqrt{d + 2\sqrt{d\ln(1/\beta)} + 2\ln(1/\beta)}` (the
   Laurent-Massart bound on a :math:`\chi^2_d` tail);
2. project every :math:`y_i` onto :math:`B_2(c, r + \gamma_1)`;
3. :math:`c \leftarrow \frac1n\sum_i \mathrm{proj}(y_i) + \mathcal N(0, s^2 I)`,
   :math:`s = \frac{2(r+\gamma_1)}{n}\big/\sqrt{2\rho_s}` (the projected mean has
   :math:`\ell_2` sensitivity :math:`2(r+\gamma_1)/n`; Bun and Steinke 2016, Prop. 1.6);
4. :math:`r \leftarrow \gamma_2\sqrt{1/n + s^2}`.

The failure probabilities are :math:`\beta_s = \beta/(4(t-1))` for the first
:math:`t-1` steps and :math:`\beta/4` for the last (Algorithm 2); the budget gives the
last step :math:`3\rho/4` and splits :math:`\rho/4` equally over the others, the split of
the authors' experiments (their ``Ps10`` for ``t = 10``).  Privacy holds for any radii:
every step is a Gaussian mechanism on a clipped mean, and the steps compose (Bun and
Steinke 2016, Lemma 2.3); the radii only affect accuracy.

Number of steps and split.  The paper fixes :math:`t` per experiment and notes that
:math:`t = O(\log(r_0/\sqrt d))` steps suffice.  The radius recursion (steps 1 and 4)
depends only on public quantities (:math:`n, d, r_0, \rho, \beta`), so by default
:func:`coinpress_schedule` runs it for every :math:`t \le` ``MAX_STEPS`` and
:math:`a \in \{1/4, 1/2\}` and takes the pair with the least noise in the last step,
:math:`s_t = 2(r_{t-1}+\gamma_1)/(n\sqrt{2\rho_t})`.  This data-independent choice costs
no privacy; :math:`a = 1/2` wins only when the budget is small relative to
:math:`\sqrt d\ln(r_0)/n` (it then lowers :math:`s_t` by up to a third).

Two clipping rules.  The steps above are the paper's (``clip_rule="paper"``, the
default).  The authors' public code (twistedcubic/coin-press, ``algos.py``) clips
instead at

.. math::

    R = \min\bigl(\sqrt{r^2 + 6r + \gamma^2},\ r + \gamma\bigr),\qquad
    \gamma = \gamma(d, \beta)\ (\beta = 0.01 \text{ there}),

and updates :math:`r \leftarrow \gamma\sqrt{1/n + s^2}` with the same :math:`\gamma`
(``clip_rule="authors"``).  The first term bounds
:math:`\|y_i - c\|^2 = \|\mu - c\|^2 + 2\langle\mu - c, z_i\rangle + \|z_i\|^2` with the
cross term, a :math:`\mathcal N(0, \|\mu - c\|^2)` variable, at 3 standard deviations;
:math:`\gamma` has no :math:`1/n` in its failure probability, so :math:`R` is smaller
than the paper's :math:`r + \gamma_1` (10-35 % on PLAN's benchmarks) and so is the
noise.  Privacy is unchanged (any radius will do); the rule changes accuracy only.

Floating point.  Step 3 is computed on centred rows, :math:`c + \frac1n\sum_i
\mathrm{clip}_{R}(y_i - c)` with :func:`egmlib.clipping.clipped_sum`, never through the
expansion :math:`\|y_i\|^2 - 2\langle y_i, c\rangle + \|c\|^2`, which cancels once
:math:`|y|` is about :math:`10^8` times the spread of the data (whitened by a tiny
:math:`\hat\sigma_j`, an ordinary constant column gets there) and then lets a far row into
the ball.  The noise is calibrated to :func:`egmlib.clipping.sum_sensitivity`, the
sensitivity :math:`2R` plus the bound on the sum's rounding.  A step whose ball holds
every row (tested with the centred distances from a reference point :math:`m` and a
relative margin of :math:`10^{-6}`) takes the centred sum :math:`\sum_i(y_i - m) +
n(m - c)` computed once instead of a pass over the data: the same value up to a rounding
within the same bound.

Known diagonal covariance.  :func:`coinpress_known_scales` whitens coordinate
:math:`j` by the public :math:`\sigma_j`, takes the prior ball that contains the public
box :math:`[\text{lower}, \text{upper}]^d` after whitening, runs :func:`coinpress_mean`
and scales back: the competitor for "sigma known, mu unknown" in the issue's sweep.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from egmlib import clipping
from egmlib import validation as _v
from egmlib.peers import budget as _budget
from egmlib.validation import FloatArray

__all__ = [
    "CLIP_RULES",
    "MAX_STEPS",
    "PRELIMINARY_SHARES",
    "CoinPressResult",
    "CoinPressSchedule",
    "chi2_radius",
    "coinpress_known_scales",
    "coinpress_mean",
    "coinpress_schedule",
]

#: Largest number of steps considered when the number of steps is chosen automatically.
MAX_STEPS = 60
#: The clipping rules, the paper's r + gamma(d, beta_s/n) and the authors' code's
#: min(sqrt(r^2 + 6r + gamma^2), r + gamma) with gamma = gamma(d, beta) (module docstring).
CLIP_RULES = ("paper", "authors")


@dataclass(frozen=True)
class CoinPressResult:
    """Output of :func:`coinpress_mean` / :func:`coinpress_known_scales`.

    Only ``estimate`` depends on the data; ``radii`` and ``clip_radii`` are the public
    radii of the steps.  ``n_clipped`` (rows projected in each step) is a diagnostic of
    the data: publishing it voids the guarantee.
    """

    estimate: FloatArray  #: (d,) private estimate of the mean
    steps: int
    radii: tuple[float, ...]  #: r before each step (r_0 first)
    clip_radii: tuple[float, ...]  #: r + gamma_1 of each step
    noise_stds: tuple[float, ...]  #: s of each step (per coordinate of the mean)
    n_clipped: tuple[int, ...]
    budget: _budget.ZCDPBudget


def chi2_radius(d: int, *, beta: float) -> float:
    r"""The radius gamma(d, beta) with P(||Z|| > gamma) <= beta for Z ~ N(0, I_d).

    :math:`\gamma(d,\beta) = \sqrt{d + 2\sqrt{d\ln(1/\beta)} + 2\ln(1/\beta)}`.

    Laurent and Massart (2000, Lemma 1), as used by CoinPress (Biswas et al. 2020).

    Examples
    --------
    >>> round(chi2_radius(1, beta=0.05), 4)
    3.2331
    """
    d = _v.check_count("d", d)
    beta = _v.check_probability("beta", beta)
    gamma = _gamma(d, beta)
    _v.check_finite_result(gamma, what="the radius", inputs="d")
    return gamma


def _gamma(d: int, beta: float) -> float:
    if not beta > 0.0:  # a step's share beta / (4 n t) of a subnormal beta
        raise ValueError("beta is too small: a step's failure probability beta / (4 n t) underflows to 0; "
                         "beta must be at least about 1e-300 * n * t")
    L = -math.log(beta)
    dd = float(d)
    return math.sqrt(dd + 2.0 * math.sqrt(dd) * math.sqrt(L) + 2.0 * L)


#: Candidate shares a of the budget for the steps before the last.
PRELIMINARY_SHARES = (0.25, 0.5)


def _shares(t: int, pre: float) -> list[float]:
    if t == 1:
        return [1.0]
    return [pre / (t - 1)] * (t - 1) + [1.0 - pre]


def _betas(t: int, beta: float) -> list[float]:
    if t == 1:
        return [beta / 4.0]
    return [beta / (4.0 * (t - 1))] * (t - 1) + [beta / 4.0]


def _recursion(n: int, d: int, radius: float, rho: float, beta: float, t: int,
               pre: float, rule: str = "paper") -> tuple[list[float], list[float], list[float]]:
    """Public radii of t steps: r before each step, clip radius, noise std of each step.

    The noise std is that of a clipped mean whose sensitivity is 2R (1 + nu), nu the
    rounding bound of :func:`egmlib.clipping.rounding_slack` (the module docstring).
    """
    r = radius
    radii, clips, stds = [], [], []
    g = _gamma(d, beta)  # the authors' rule: one gamma for every step
    slack = 1.0 + clipping.rounding_slack(n, d=d)
    for share, b in zip(_shares(t, pre), _betas(t, beta), strict=True):
        if rule == "paper":
            R = r + _gamma(d, b / n)
        else:
            R = min(math.sqrt(r * r + 6.0 * r + g * g), r + g)
        two_share_rho = 2.0 * share * rho
        # budget.gaussian_noise_std; the product underflows for subnormal rho (5e-324)
        root = math.sqrt(two_share_rho) if two_share_rho > 1e-300 else math.sqrt(2.0 * share) * math.sqrt(rho)
        s = 2.0 * R * slack / n / root
        radii.append(r)
        clips.append(R)
        stds.append(s)
        r = (_gamma(d, b) if rule == "paper" else g) * math.sqrt(1.0 / n + s * s)
    return radii, clips, stds


@dataclass(frozen=True)
class CoinPressSchedule:
    """Output of :func:`coinpress_schedule`: the number of steps and the preliminary share."""

    steps: int  #: t
    preliminary_share: float  #: a, the share of rho spread over the first t - 1 steps


def coinpress_schedule(n: int, *, d: int, prior_radius: float, rho: float, beta: float = 0.01,
                       steps: int | None = None, clip_rule: str = "paper") -> CoinPressSchedule:
    r"""The number of steps t and the preliminary share a whose last step adds the least noise.

    Over t <= MAX_STEPS (only ``steps`` if given) and a in ``PRELIMINARY_SHARES``, the
    noise of the last step :math:`s_t = 2(r_{t-1}+\gamma_1)/(n\sqrt{2\rho_t})` from the
    public radius recursion of the module docstring (Biswas et al. 2020, Alg. 1) is
    smallest; the choice never looks at the data.

    Parameters
    ----------
    n : int >= 1
        Number of rows (public under substitution neighbours).
    d : int >= 1
    prior_radius : float, finite and > 0
        Radius :math:`r_0` of the public prior ball.
    rho : float, finite and > 0
    beta : float in (0, 1), default 0.01
    steps : int in [1, MAX_STEPS], optional
        Fix t; default: the best t <= MAX_STEPS.
    clip_rule : {"paper", "authors"}, default "paper"
        The radius rule (module docstring).

    Returns
    -------
    CoinPressSchedule

    Examples
    --------
    >>> coinpress_schedule(10000, d=50, prior_radius=1.0, rho=0.5)
    CoinPressSchedule(steps=1, preliminary_share=0.25)
    >>> coinpress_schedule(10000, d=50, prior_radius=1e6, rho=0.5).steps > 3
    True
    """
    n = _v.check_count("n", n)
    d = _v.check_count("d", d)
    prior_radius = _v.check_positive_finite("prior_radius", prior_radius)
    rho = _v.check_positive_finite("rho", rho)
    beta = _v.check_probability("beta", beta)
    if steps is not None:
        steps = _v.check_count("steps", steps, maximum=MAX_STEPS)
    clip_rule = _v.check_choice("clip_rule", clip_rule, CLIP_RULES)
    t, pre = _best_schedule(n, d, prior_radius, rho, beta, steps, clip_rule)
    final = _recursion(n, d, prior_radius, rho, beta, t, pre, clip_rule)[2][-1]
    _v.check_finite_result(final, what="the noise of the last step",
                           inputs="prior_radius, d or 1/rho")
    return CoinPressSchedule(steps=t, preliminary_share=pre)


@functools.lru_cache(maxsize=256)
def _best_schedule(n: int, d: int, radius: float, rho: float, beta: float,
                   steps: int | None, rule: str = "paper") -> tuple[int, float]:
    candidates = range(1, MAX_STEPS + 1) if steps is None else [steps]
    best, choice = math.inf, (1, PRELIMINARY_SHARES[0])
    for t in candidates:
        for pre in PRELIMINARY_SHARES:
            final = _recursion(n, d, radius, rho, beta, t, pre, rule)[2][-1]
            if final < best:
                best, choice = final, (t, pre)
            if t == 1:
                break
    return choice


@functools.lru_cache(maxsize=256)
def _lean_schedule(n: int, d: int, radius: float, rho: float, beta: float, tolerance: float,
                   rule: str = "paper") -> tuple[int, float]:
    """The fewest steps whose last noise is within ``1 + tolerance`` of the least (the schedule of
    :func:`coinpress_schedule`, which takes the least): each step is a pass over the data, and a step
    that lowers the last noise by under ``tolerance`` is not worth its pass.  Public, like the
    schedule it trims."""
    t_best, pre_best = _best_schedule(n, d, radius, rho, beta, None, rule)
    best = _recursion(n, d, radius, rho, beta, t_best, pre_best, rule)[2][-1]
    for t in range(1, t_best + 1):
        for pre in PRELIMINARY_SHARES:
            if _recursion(n, d, radius, rho, beta, t, pre, rule)[2][-1] <= (1.0 + tolerance) * best:
                return t, pre
            if t == 1:
                break
    return t_best, pre_best


#: Relative margin of the test that a step clips no row (float rounding of the distances).
_SAFETY = 1e-6


@dataclass(frozen=True)
class _Reference:
    """A reference point m of the rows, their largest distance from it and sum_i (x_i - m)."""

    point: FloatArray
    spread: float
    deviation: FloatArray


def _reference(X: np.ndarray, point: FloatArray | None = None, b: FloatArray | None = None) -> _Reference:
    """The rows y_i = x_i * b (b = 1 when None) seen from a ``point`` (any point will do; CoinPress
    takes its prior ball's centre, default the rows' mean): their largest distance from it and
    sum_i (y_i - point), on centred rows in chunks, in one pass (no cancellation, no copy of X).  The
    spread is inf when a centred row overflows (a step then never skips the data)."""
    n, d = X.shape
    if point is None:
        with np.errstate(over="ignore", invalid="ignore"):
            point = np.asarray(X.sum(axis=0, dtype=np.float64) / n, dtype=np.float64)
            if b is not None:
                point = point * b
        if not np.all(np.isfinite(point)):
            return _Reference(point=np.zeros(d), spread=math.inf, deviation=np.zeros(d))
    rows = clipping.chunk_rows(d)
    buf = np.empty((min(rows, n), d))
    top = 0.0
    total = np.zeros(d)
    with np.errstate(over="ignore", invalid="ignore"):
        origin = point if b is None else point / b  # the point in the data's units
        if not np.all(np.isfinite(origin)):
            return _Reference(point=point, spread=math.inf, deviation=np.zeros(d))
        for a in range(0, n, rows):
            B = buf[:min(rows, n - a)]
            B[...] = X[a:a + rows]
            B -= origin
            if b is not None:
                B *= b
            top = max(top, float(np.einsum("ij,ij->i", B, B).max()))
            total += B.sum(axis=0)
    return _Reference(point=point, spread=math.sqrt(top) if math.isfinite(top) else math.inf, deviation=total)


def _step_sum(X: np.ndarray, c: FloatArray, R: float, ref: _Reference,
              b: FloatArray | None = None) -> tuple[FloatArray, int]:
    """The statistic of one CoinPress step before noise: sum_i clip_R(y_i - c), y_i = x_i * b (b = 1
    when None), and the rows clipped.

    Its sensitivity is :func:`egmlib.clipping.sum_sensitivity` of R (the module docstring).
    A ball B(c, R) that holds B(m, spread) clips no row: the sum is then
    sum_i (y_i - m) + n (m - c), with no pass over the data.  With a scaling b the rows are
    formed chunk by chunk as (x_i - c / b) * b, never as a whole scaled copy of X.
    """
    if ref.spread + float(np.linalg.norm(ref.point - c)) <= R * (1.0 - _SAFETY):
        return ref.deviation + X.shape[0] * (ref.point - c), 0
    if b is None:
        r = clipping.clipped_sum(X, C=R, mu_hat=c, finite=True)
    else:
        with np.errstate(over="ignore"):
            centre = c / b  # the centre in the data's units; a public function of released values
        if not np.all(np.isfinite(centre)):
            raise ValueError("the whitened centre overflows in the data's units: scale too small for the data")
        r = clipping.clipped_sum(X, C=R, mu_hat=centre, b=b, finite=True)
    return r.total, r.n_clipped


def coinpress_mean(X: Any, *, rho: float, prior_centre: Any, prior_radius: float,
                   rng: np.random.Generator, beta: float = 0.01,
                   steps: int | None = None, clip_rule: str = "paper") -> CoinPressResult:
    r"""CoinPress mean of rows from N(mu, I_d), mu in the prior ball B(centre, radius).

    Biswas, Dong, Kamath and Ullman (2020), Algorithms 1-2; :math:`\rho`-zCDP for any
    data (see the module docstring for the steps, radii, budget split and the choice of
    the number of steps).

    Parameters
    ----------
    X : array_like, shape (n, d), finite
        Rows modelled as :math:`\mathcal N(\mu, I_d)`.
    rho : float, finite and > 0
    prior_centre : array_like, shape (d,), finite
        Centre :math:`c_0` of the public prior ball.
    prior_radius : float, finite and > 0
        Radius :math:`r_0` of the prior ball.
    rng : numpy.random.Generator
    beta : float in (0, 1), default 0.01 (the value in the authors' code)
        Total failure probability behind the radii.
    steps : int in [1, MAX_STEPS], optional
        Number of steps t; default: chosen with the split by :func:`coinpress_schedule`.
    clip_rule : {"paper", "authors"}, default "paper"
        The paper's radii or those of the authors' code (module docstring).

    Returns
    -------
    CoinPressResult

    Examples
    --------
    >>> rng = np.random.default_rng(5)
    >>> X = rng.normal(loc=3.0, size=(20000, 4))
    >>> r = coinpress_mean(X, rho=0.5, prior_centre=np.zeros(4), prior_radius=100.0, rng=rng)
    >>> bool(np.abs(r.estimate - 3.0).max() < 0.05), r.steps > 1
    (True, True)
    """
    X = _v.check_finite_data("X", X)
    n, d = X.shape
    centre = _v.check_finite_vector("prior_centre", prior_centre, length=d,
                                    of="one entry per column of X")
    radius = _v.check_positive_finite("prior_radius", prior_radius)
    rng = _v.check_rng("rng", rng)
    return _coinpress(X, rho=rho, centre=centre, radius=radius, rng=rng, beta=beta, steps=steps,
                      clip_rule=clip_rule)


def _coinpress(X: np.ndarray, *, rho: float, centre: FloatArray, radius: float, rng: np.random.Generator,
               beta: float, steps: int | None, clip_rule: str, b: FloatArray | None = None,
               ref: _Reference | None = None, lean: float | None = None) -> CoinPressResult:
    """CoinPress on the rows y_i = x_i * b (b = 1 when None), from the prior ball B(centre, radius) in
    those units; X is read chunk by chunk, never copied (checked arguments; X checked finite).  ``ref`` is the rows'
    :func:`_reference` when the caller has it from a pass of its own (its spread may be any public
    upper bound of the rows' distance from its point).  ``lean`` (a tolerance) takes the fewest steps
    whose last noise is within ``1 + lean`` of the least (:func:`_lean_schedule`)."""
    n, d = X.shape
    if lean is None:
        schedule = coinpress_schedule(n, d=d, prior_radius=radius, rho=rho, beta=beta, steps=steps,
                                      clip_rule=clip_rule)
        t, pre = schedule.steps, schedule.preliminary_share
    else:
        t, pre = _lean_schedule(n, d, float(radius), float(rho), float(beta), float(lean), clip_rule)
    rho, beta = float(rho), float(beta)
    shares = _shares(t, pre)
    budget = _budget.split_budget(rho, shares={f"step {s + 1}": sh for s, sh in enumerate(shares)})
    radii, clips, stds = _recursion(n, d, radius, rho, beta, t, pre, clip_rule)
    c = centre.copy()
    n_clipped = []
    if ref is None:  # once: steps that clip no row then cost no pass over the data
        ref = _reference(X, centre, b)
    for R, s in zip(clips, stds, strict=True):
        total, k = _step_sum(X, c, R, ref, b)
        n_clipped.append(k)
        # the noisy clipped mean of the centred rows, then c + it (post-processing)
        c = c + (total / n + s * rng.standard_normal(d))
    _v.check_finite_result(c, what="the estimate", inputs="X or prior_centre")
    return CoinPressResult(estimate=c, steps=t, radii=tuple(radii), clip_radii=tuple(clips),
                           noise_stds=tuple(stds), n_clipped=tuple(n_clipped), budget=budget)


def coinpress_known_scales(X: Any, *, sigma: Any, rho: float, lower: float, upper: float,
                           rng: np.random.Generator, beta: float = 0.01,
                           steps: int | None = None, clip_rule: str = "paper") -> CoinPressResult:
    r"""CoinPress for data with known coordinate standard deviations :math:`\sigma_j`.

    Whitens :math:`y_{ij} = x_{ij}/\sigma_j` (so :math:`y_i\sim\mathcal N(\mu/\sigma, I)`
    for the model :math:`x_i\sim\mathcal N(\mu, \mathrm{diag}(\sigma^2))`), takes the
    prior ball :math:`B_2(c_0, r_0)` with :math:`c_{0j} = (\text{lower}+\text{upper})/(2\sigma_j)`
    and :math:`r_0 = \|(\text{upper}-\text{lower})/(2\sigma)\|_2`, which contains the
    whitened public box, runs :func:`coinpress_mean` and returns
    :math:`\sigma\odot\hat\mu_{\rm white}` (Biswas et al. 2020, whose Section 3 treats a
    known covariance by this change of variables).

    Parameters
    ----------
    X : array_like, shape (n, d), finite
    sigma : array_like, shape (d,), finite and > 0
        Public standard deviations.
    rho : float, finite and > 0
    lower, upper : float, finite, lower < upper
        Public box of every coordinate of the data (entries outside it are moved onto it
        first, :func:`egmlib.clipping.clamp_to_box`), which then contains the mean.
    rng : numpy.random.Generator
    beta, steps, clip_rule : see :func:`coinpress_mean`

    Returns
    -------
    CoinPressResult
        ``estimate`` is in the original coordinates; the radii are in whitened units.
    """
    X = _v.check_finite_data("X", X)
    d = X.shape[1]
    sigma = _v.check_positive_vector("sigma", sigma, length=d, of="one entry per column of X")
    lower, upper = _v.check_bounds(lower, upper)
    X = clipping.clamp_to_box(X, lower=lower, upper=upper)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # public: the whitened box is finite, so the whitened rows (in it) are
        _v.check_finite_result(max(abs(lower), abs(upper)) / sigma, what="the whitened box",
                               inputs="lower, upper or 1/sigma")
        b = 1.0 / sigma
        centre = (0.5 * (lower + upper)) / sigma
        half = (0.5 * (upper - lower)) / sigma
        top = float(half.max())
        radius = top * float(np.linalg.norm(half / top)) if top > 0.0 else 0.0
    _v.check_finite_result(radius, what="the whitened prior radius", inputs="lower, upper or 1/sigma")
    if not radius > 0.0:
        raise ValueError(f"(upper - lower) / (2 sigma) underflows to 0: sigma too large for the box, "
                         f"got max(sigma)={float(sigma.max())!r}, lower={lower!r}, upper={upper!r}")
    _v.check_finite_result(centre, what="the whitened prior centre", inputs="lower, upper or 1/sigma")
    _v.check_finite_result(b, what="1/sigma", inputs="sigma")
    rho = _v.check_positive_finite("rho", rho)
    beta = _v.check_probability("beta", beta)
    if steps is not None:
        steps = _v.check_count("steps", steps, maximum=MAX_STEPS)
    clip_rule = _v.check_choice("clip_rule", clip_rule, CLIP_RULES)
    rng = _v.check_rng("rng", rng)
    # the whitened rows x / sigma are formed chunk by chunk inside the steps: no whitened copy of X
    r = _coinpress(X, rho=rho, centre=centre, radius=radius, rng=rng, beta=beta, steps=steps,
                   clip_rule=clip_rule, b=b)
    with np.errstate(over="ignore"):
        estimate = sigma * r.estimate
    _v.check_finite_result(estimate, what="the estimate", inputs="X or sigma")
    return replace(r, estimate=estimate)
