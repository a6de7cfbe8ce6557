r"""An audit of ESM with power (chapter 7b): a likelihood-ratio attack on its final release, with controls.

ESM (``egmlib.peers.arms.ARMS["Alg3"]``, the book's recommended private mean estimator) is
:math:`\rho`-zCDP in total.  :func:`run_power_audit` runs it ``trials`` times on each of two
neighbouring datasets (:func:`esm_pair`: shared Gaussian rows and one row at opposite corners of
the box, which attains the sensitivity :math:`2C` of the final step) and turns the releases into
lower bounds on :math:`\varepsilon` at several :math:`\delta'`
(:func:`egmbook.privacy_audit.distinguishing_attack`; Kairouz, Oh and Viswanath 2015).

**The audited path.**  At the setting's :math:`n, d, \rho` (:class:`PowerSetting`) ESM's public
stage releases IOME searching the whole box: the path is a function of :math:`n, d,
\rho` only, the same on both datasets and in every run, and a release costs a few milliseconds, so
:math:`10^5` of them per dataset fit in a run.  The statistic also reads Algorithm 3's path (for a
caller who forces it); a release through any other path is an outcome with a sentinel value.

**The distinguisher uses the release's law.**  IOME's release is
:math:`R^{-1}(\tilde c + (T + \xi)/n)`, with :math:`R` its public random rotation, :math:`\tilde c`
its private centre, :math:`T` the clipped sum of the rotated rows around :math:`\tilde c` at its
private radius :math:`C`, and :math:`\xi \sim \mathcal N(0, s^2 I)`; ESM maps it back to the
caller's box.  The auditor reads :math:`R, \tilde c, C, s` inside the call (``_Capture``, which
leaves the release unchanged bit for bit).  ESM reports :math:`C`; :math:`R` is public randomness;
:math:`\tilde c` is an intermediate release that ESM does not output but that its proof composes, so
the audit is of the transcript the proof covers, and a bound above the claim would refute the proof.
It computes both clipped sums :math:`T_X, T_{X'}` and the log likelihood
ratio of the observed noisy sum :math:`y` (the released estimate read back into IOME's rotated space),

.. math:: L = \bigl(\|y - T_{X'}\|^2 - \|y - T_X\|^2\bigr)/(2 s^2),

which is the Neyman-Pearson statistic of the final step (Gaussian with mean
:math:`\pm\|T_X - T_{X'}\|^2/(2s^2)`).  On Algorithm 3's path the same holds with its released centre,
scales (the transform :math:`b`) and radius.  The attack chooses, on a training half, between
:math:`L` and every recorded coordinate (the estimate, the centre, the radius), and scores the chosen
test on the other half.  An exception is an outcome like any release (a sentinel value of :math:`L`
that the thresholds can separate).

**Controls** (:data:`CONTROLS`) share each run's rotation, centre and radius with ESM and redo only
the final step with fresh noise: a fraction of the final noise (half, a quarter, the fraction that
doubles the total :math:`\rho`, and two in between), the final sum without clipping, and the centre
step skipped (the rows' exact mean as the centre).  Their true :math:`\rho` follows from the budget:
:math:`\rho - \rho_{\rm noise} + \rho_{\rm noise}/f^2` for noise :math:`f s`
(:func:`final_noise_share`); without clipping or without the centre step no finite :math:`\rho` holds.

**The claim** at :math:`\delta'` is the conversion of :math:`\rho`-zCDP to
:math:`(\varepsilon, \delta')`-DP of Canonne, Kamath and Steinke 2020
(:func:`zcdp_epsilon`), tighter than Bun and Steinke's :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}`;
a bound above it refutes the claim.  All bounds of a run hold jointly with probability at least
:data:`egmbook.privacy_audit.CONFIDENCE` (a union bound).

The book's run is stored under ``"power"`` in ``data/privacy_audit.json`` by
``scripts/privacy_power_audit.py`` and read back by :func:`load_power_audit`; the first
``saved`` likelihood ratios of every mechanism are stored too, so a test can recompute that
slice and find them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from egmbook import privacy_audit as pa
from egmlib import calibration, clipping
from egmlib import validation as _v

__all__ = [
    "CONTROLS",
    "TWICE",
    "Control",
    "PowerAudit",
    "PowerReleases",
    "PowerRow",
    "PowerSetting",
    "PowerSummary",
    "audit_from_releases",
    "audit_rows",
    "esm_pair",
    "final_noise_share",
    "join_releases",
    "load_power_audit",
    "power_figure",
    "power_releases",
    "power_summary",
    "power_table",
    "power_to_json",
    "run_power_audit",
    "zcdp_epsilon",
]

#: Where the book's run is stored (the key ``"power"`` of the audit's file).
POWER_FILE = Path(__file__).resolve().parents[1] / "data" / "privacy_audit.json"

#: The sentinel value of the likelihood ratio for a call that raised, and for a release through a
#: path whose final step the statistic does not read (the attack's thresholds separate both from the
#: Gaussian bulk).
EXCEPTION_VALUE = 1e6
FEW_ROWS_VALUE = -1e6
#: The runs (seeded apart from the audit's) over which the final step's mu is measured.
MU_RUNS = 25


def zcdp_epsilon(rho: float, *, delta: float) -> float:
    r"""The :math:`\varepsilon` at :math:`\delta` of any :math:`\rho`-zCDP release (Canonne, Kamath and Steinke 2020).

    Their conversion of Rényi differential privacy, at the divergences of a zCDP release:

    .. math::

        \varepsilon = \inf_{\alpha > 1}\ \alpha\rho + \frac{\ln(1/\delta) + (\alpha-1)\ln(\alpha-1)
        - \alpha\ln\alpha}{\alpha - 1},

    from the Rényi divergence of order :math:`\alpha`, :math:`\alpha\rho`, of a zCDP release;
    smaller than Bun and Steinke's :math:`\rho + 2\sqrt{\rho\ln(1/\delta)}`
    (:func:`egmlib.calibration.rho_to_eps`).

    Examples
    --------
    >>> round(zcdp_epsilon(1.0, delta=0.05), 3), round(calibration.rho_to_eps(1.0, delta=0.05), 3)
    (3.374, 4.462)
    """
    delta = _v.check_probability("delta", delta)
    rho = _v.check_positive_finite("rho", rho)
    return _zcdp_epsilon(rho, delta)


def _zcdp_epsilon(rho: float, delta: float) -> float:
    if rho == math.inf:
        return math.inf
    log_inv = -math.log(delta)

    def eps(log_a1: float) -> float:  # alpha = 1 + e^log_a1
        a1 = math.exp(log_a1)
        a = 1.0 + a1
        return a * rho + (log_inv + a1 * log_a1 - a * math.log(a)) / a1

    best = optimize.minimize_scalar(eps, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-10})
    return max(0.0, float(best.fun))


@dataclass(frozen=True)
class Control:
    """A mechanism of the audit: ESM itself, or ESM with its final step weakened."""

    name: str  #: the label of tables and figures
    kind: str  #: "esm", "noise", "no clipping" or "skipped centre"
    factor: float = 1.0  #: the final noise's multiple of ESM's (kind "noise")


def _twice_rho_factor(noise_share: float) -> float:
    """The noise multiple f that doubles the total rho: 1 - a + a / f^2 = 2 for noise share a."""
    return math.sqrt(noise_share / (1.0 + noise_share))


@dataclass(frozen=True)
class PowerSetting:
    r"""The audit's setting: the claim, the pair and the work.

    At :math:`\rho = 1`, :math:`n = 100` rows in :math:`d = 2` dimensions in the box
    :math:`[-1, 1]^2` with spread 0.1, ESM's public stage releases IOME (the scales could not be
    resolved at this :math:`n`, :func:`egmlib.peers.algorithm3_robust.scales_resolvable`), searching
    its centre over the whole box (:func:`egmlib.peers.algorithm3_robust.whole_box_tracks`): the path is
    a function of :math:`n, d, \rho`, the same on both datasets and in every run.  IOME's final step
    alone is then a Gaussian mechanism with :math:`\mu = \sqrt{2\rho_{\rm noise}} = 1.14`
    (:func:`final_noise_share`).  The runs are
    looked at once, when all of them are done (``looks``).
    """

    rho: float = 1.0
    n: int = 100
    d: int = 2
    spread: float = 0.1
    lower: float = -1.0
    upper: float = 1.0
    trials: int = 100_000
    deltas: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2)
    primary_delta: float = 0.1
    seed: int = 20261201
    saved: int = 40  #: the first likelihood ratios stored per mechanism and dataset
    #: How often the run's bounds are looked at; every bound is taken at the level that makes all of
    #: them, at every look, hold jointly.
    looks: int = 1

    def __post_init__(self) -> None:
        _v.check_positive_finite("rho", self.rho)
        _v.check_count("n", self.n, minimum=2, maximum=10**7)
        _v.check_count("d", self.d, maximum=10**4)
        _v.check_positive_finite("spread", self.spread)
        _v.check_bounds(self.lower, self.upper)
        _v.check_count("trials", self.trials, minimum=4, maximum=10**8)
        for dd in self.deltas:
            _v.check_probability("deltas entry", dd)
        if self.primary_delta not in self.deltas:
            raise ValueError(f"primary_delta must be one of deltas {self.deltas}, got {self.primary_delta!r}")
        _v.check_count("saved", self.saved, minimum=0, maximum=self.trials)
        _v.check_count("looks", self.looks)

    @property
    def bounds(self) -> int:
        """The number of bounds of a run, one per mechanism and delta."""
        return len(CONTROLS) * len(self.deltas)

    @property
    def alpha_each(self) -> float:
        """The level of each bound, (1 - CONFIDENCE) / (bounds x looks), a union bound."""
        return (1.0 - pa.CONFIDENCE) / (self.bounds * self.looks)


def _check_setting(power_setting: Any) -> PowerSetting:
    if not isinstance(power_setting, PowerSetting):
        raise TypeError(f"power_setting must be a PowerSetting, got power_setting of type "
                        f"{type(power_setting).__name__}")
    return power_setting


def final_noise_share(power_setting: PowerSetting) -> float:
    r"""The share of :math:`\rho` that ESM spends on its final noise on the setting's datasets.

    Where the scales cannot be resolved (:func:`egmlib.peers.algorithm3_robust.scales_resolvable`),
    ESM's public stage releases IOME with the whole budget, less what it released before IOME: the
    coarse centre (:func:`egmlib.peers.algorithm3_robust.coarse_centre`, on the unit box ESM runs in)
    and the reach test (:func:`egmlib.peers.algorithm3_robust.reach_test_runs`); IOME's noise gets its
    share of :func:`egmlib.peers.algorithm3_robust.iome_shares` of what is left.  Elsewhere the audit
    reads Algorithm 3's path, ``SHARES["noise"]``.  Read from the code's constants.

    Examples
    --------
    >>> round(final_noise_share(PowerSetting()), 4)   # IOME over the whole box; its radius search takes 1/10
    0.65
    """
    from egmlib.peers import algorithm3_robust as a3

    st = _check_setting(power_setting)
    if a3.scales_resolvable(st.n, d=st.d, rho=st.rho):
        return float(a3.SHARES["noise"])
    coarse = a3.coarse_centre(st.n, d=st.d, rho=st.rho, lower=0.0, upper=1.0)
    share = a3.IOME_ANCHOR_SHARE if coarse == "anchor" else 0.0
    test = a3.reach_test_runs(st.n, d=st.d, rho=(1.0 - share) * st.rho)
    left = (1.0 - share) * (1.0 - a3.REACH_SHARE if test else 1.0)
    return float(a3.iome_shares(st.n, rho=st.rho, rho_iome=left * st.rho)["noise"]) * left


def _controls() -> tuple[Control, ...]:
    twice = _twice_rho_factor(final_noise_share(PowerSetting()))
    return (Control("ESM", "esm"),
            Control("0.85 of the final noise", "noise", 0.85),
            Control("0.75 of the final noise", "noise", 0.75),
            Control(TWICE, "noise", twice),
            Control("half the final noise", "noise", 0.5),
            Control("a quarter of the final noise", "noise", 0.25),
            Control("no clipping", "no clipping"),
            Control("no centre step", "skipped centre"))


#: The control that spends twice the stated budget (the audit's goal is to refute it).
TWICE = "twice the stated ρ"


#: ESM and its controls, in the order of the tables.
CONTROLS: tuple[Control, ...] = _controls()


def esm_pair(power_setting: PowerSetting) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The audited neighbours: n - 1 shared rows N(0, spread^2 I) in the box, and a last row at the
    upper corner in X and at the lower corner in X' (both far outside every clipping ball, so the
    clipped sums differ by about 2C; the report's Definition 2.1)."""
    st = _check_setting(power_setting)
    rng = np.random.default_rng([st.seed, 0])
    shared = np.clip(st.spread * rng.standard_normal((st.n - 1, st.d)), st.lower, st.upper)
    X = np.vstack([shared, np.full((1, st.d), st.upper)])
    Xp = np.vstack([shared, np.full((1, st.d), st.lower)])
    return X, Xp


@dataclass(frozen=True)
class PowerReleases:
    """The releases of runs ``start`` to ``stop`` of every mechanism on both datasets.

    ``values[i, m, j]`` is run ``start + j`` of mechanism ``CONTROLS[m]`` on dataset ``i`` (0 for
    X, 1 for X'): the likelihood ratio of its final release, then its estimate, centre, scales and
    radius.
    """

    start: int
    stop: int
    values: NDArray[np.float64]  #: shape (2, mechanisms, stop - start, 1 + 3 d + 1)


def join_releases(parts: Sequence[PowerReleases]) -> PowerReleases:
    """Consecutive blocks of :func:`power_releases` as one (runs in order, no gap)."""
    if isinstance(parts, PowerReleases) or not isinstance(parts, Sequence) or not parts or not all(
            isinstance(p, PowerReleases) for p in parts):
        raise TypeError("parts must be a non-empty sequence of PowerReleases (from power_releases)")
    for a, b in zip(parts[:-1], parts[1:], strict=True):
        if b.start != a.stop:
            raise ValueError(f"parts must be consecutive, got runs {a.start}-{a.stop} then {b.start}-{b.stop}")
    return PowerReleases(start=parts[0].start, stop=parts[-1].stop,
                         values=np.concatenate([p.values for p in parts], axis=2))


def _lr(y: NDArray[np.float64], T: NDArray[np.float64], Tp: NDArray[np.float64], s: float) -> float:
    """log N(y; T, s^2 I) / N(y; T', s^2 I)."""
    return float((np.sum((y - Tp) ** 2) - np.sum((y - T) ** 2)) / (2.0 * s * s))


class _Capture:
    """IOME's inputs and result inside one call of ESM: a wrapper around ``iome_mean`` in ESM's module.

    When ESM passes no rotation, the wrapper draws it as ``iome_mean`` would (first, from the same
    generator, with the same rounds) and passes it on, so the release is the same bit for bit; it
    records the rows IOME got, its box, the rotation and its result.  The rotation is public
    randomness; IOME's centre and radius are intermediate releases that ESM's proof covers (each is
    private on its own), so a statistic that reads them audits the transcript the proof is about.
    """

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __enter__(self) -> _Capture:
        from egmlib.peers import algorithm3_robust as a3
        from egmlib.peers.hadamard import random_hadamard

        self._module, self._original = a3, a3.iome_mean
        original, calls = a3.iome_mean, self.calls

        def iome_mean(X: Any, **kw: Any) -> Any:
            if kw.get("rotation") is None and kw.get("rotated") is None:
                kw["rotation"] = random_hadamard(np.shape(X)[1], rng=kw["rng"], rounds=kw.get("rounds", 3))
            r = original(X, **kw)
            calls.append({"X": np.asarray(X, dtype=float), "lower": kw["lower"], "upper": kw["upper"],
                          "R": kw["rotation"], "result": r})
            return r

        a3.iome_mean = iome_mean
        return self

    def __exit__(self, *exc: object) -> None:
        self._module.iome_mean = self._original


def _one_run(esm: Callable[..., Any], D: np.ndarray, X: np.ndarray, Xp: np.ndarray, st: PowerSetting,
             rng: np.random.Generator, noise_rng: np.random.Generator) -> NDArray[np.float64]:
    """One release of every mechanism on dataset D: rows [L, estimate, centre, sigma, C]."""
    n, d = D.shape
    k = 1 + 3 * d + 1
    out = np.zeros((len(CONTROLS), k))
    try:
        with _Capture() as cap:
            r = esm(D, rho=st.rho, lower=st.lower, upper=st.upper, rng=rng)
    except Exception:  # noqa: BLE001 - an exception is an outcome of the release
        out[:, 0] = EXCEPTION_VALUE
        return out
    if r.path in ("iome", "centred-iome") and len(cap.calls) == 1:
        return _iome_run(r, cap.calls[0], D, X, Xp, st, noise_rng, out)
    if r.path != "algorithm3":
        out[:, 0] = FEW_ROWS_VALUE
        out[:, 1:1 + d] = r.estimate
        return out
    c, sigma, C = r.centre, r.sigma, float(r.C)
    b = 1.0 / np.sqrt(sigma * float(np.sum(sigma)))
    s = float(np.median(r.noise_std * n * b))  # the noise ESM added to its sum
    T = {key: clipping.clipped_sum(A, C=C, mu_hat=c, b=b).total for key, A in (("X", X), ("X'", Xp))}
    TD = T["X"] if D is X else T["X'"]
    for i, ctl in enumerate(CONTROLS):
        centre, TX, TXp, TD_ctl, scale = c, T["X"], T["X'"], TD, s
        if ctl.kind == "esm":
            est = r.estimate
        else:
            if ctl.kind == "noise":
                scale = ctl.factor * s
            elif ctl.kind == "no clipping":
                TX, TXp = (((A - c) * b).sum(axis=0) for A in (X, Xp))
                TD_ctl = TX if D is X else TXp
            else:  # the centre step skipped: the data's own mean, without noise
                centre = np.clip(D.mean(axis=0), st.lower, st.upper)
                TX, TXp = (clipping.clipped_sum(A, C=C, mu_hat=centre, b=b).total for A in (X, Xp))
                TD_ctl = TX if D is X else TXp
            est = np.clip(centre + (TD_ctl + scale * noise_rng.standard_normal(d)) / (n * b), st.lower, st.upper)
        y = (est - centre) * b * n
        out[i] = [_lr(y, TX, TXp, scale), *est, *centre, *sigma, C]
    return out


def _iome_inputs(call: Mapping[str, Any], D: np.ndarray, X: np.ndarray, Xp: np.ndarray,
                 st: PowerSetting) -> tuple[np.ndarray, np.ndarray, NDArray[np.float64]]:
    """IOME's rows on X and on X' (rotated, in its box) from the rows it got on D, and the shift k of
    ESM's public map x -> (x - l)/w + k onto IOME's rows (k: the offset, or minus the coarse centre)."""
    w = st.upper - st.lower
    rows = call["X"]
    k = rows[0] - (D[0] - st.lower) / w  # the rows share their first one
    other = rows.copy()
    other[-1] = rows[-1] + ((Xp[-1] - X[-1]) if D is X else (X[-1] - Xp[-1])) / w
    R, lo, hi = call["R"], call["lower"], call["upper"]
    YD, Yo = (R._rotate(np.clip(A, lo, hi)) for A in (rows, other))
    return (YD, Yo, k) if D is X else (Yo, YD, k)


def _iome_run(r: Any, call: Mapping[str, Any], D: np.ndarray, X: np.ndarray, Xp: np.ndarray, st: PowerSetting,
              noise_rng: np.random.Generator, out: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""The statistics of a run in which ESM released IOME (its ``iome`` and ``centred-iome`` paths).

    IOME's release is :math:`R^{-1}(\tilde c + (T + \xi)/n)`, :math:`T` the clipped sum of the rotated
    rows around its centre :math:`\tilde c` at radius :math:`C`, :math:`\xi \sim \mathcal N(0, s^2 I)`;
    ESM maps it back to the caller's box (public).  The released estimate read back into IOME's rotated
    space gives the observed noisy sum :math:`y`, and :math:`L` is its log likelihood ratio between
    :math:`T_X` and :math:`T_{X'}`."""
    n, d = D.shape
    w = st.upper - st.lower
    res, R = call["result"], call["R"]
    if R.padded_dim != d:
        raise ValueError(f"the audit reads IOME's release back only where d is a power of two, got d={d}")
    YX, YXp, k = _iome_inputs(call, D, X, Xp, st)
    c, C, s = res.centre, float(res.C), float(res.noise_std) * n  # the noise IOME added to its sum
    T = {key: clipping.clipped_sum(Y, C=C, mu_hat=c).total for key, Y in (("X", YX), ("X'", YXp))}
    YD = YX if D is X else YXp

    def read_back(est: NDArray[np.float64], centre: NDArray[np.float64]) -> NDArray[np.float64]:
        e = (est - st.lower) / w + k  # IOME's units
        return (R._rotate(e[None, :])[0] - centre) * n

    def release(centre: NDArray[np.float64], total: NDArray[np.float64], scale: float) -> NDArray[np.float64]:
        e = R.unrotate(centre + (total + scale * noise_rng.standard_normal(d)) / n)
        return st.lower + w * np.clip(e - k, 0.0, 1.0)

    for i, ctl in enumerate(CONTROLS):
        centre, TX, TXp, scale = c, T["X"], T["X'"], s
        if ctl.kind == "esm":
            est = r.estimate
        else:
            if ctl.kind == "noise":
                scale = ctl.factor * s
            elif ctl.kind == "no clipping":
                TX, TXp = ((Y - c).sum(axis=0) for Y in (YX, YXp))
            else:  # the centre step skipped: the rotated rows' own mean, without noise
                centre = YD.mean(axis=0)
                TX, TXp = (clipping.clipped_sum(Y, C=C, mu_hat=centre).total for Y in (YX, YXp))
            est = release(centre, TX if D is X else TXp, scale)
        L = _lr(read_back(est, centre), TX, TXp, scale) if scale > 0 else 0.0
        out[i] = [L, *est, *(st.lower + w * (R.unrotate(centre) - k)), *np.zeros(d), C * w]
    return out


def power_releases(power_setting: PowerSetting, *, start: int, stop: int,
                   esm: Callable[..., Any] | None = None) -> PowerReleases:
    """The releases of runs ``start`` to ``stop`` of ESM and its controls on both datasets (the
    report's Definition 2.1 neighbours of :func:`esm_pair`).

    Run ``j`` on dataset ``i`` (0 for X, 1 for X') draws ESM's randomness from
    ``default_rng([seed, 1, i, j])`` and the controls' fresh noise from
    ``default_rng([seed, 2, i, j])``, so any slice is recomputed bit for bit.  ``esm`` defaults
    to ``egmlib.peers.arms.ARMS["Alg3"]``.
    """
    st = _check_setting(power_setting)
    start = _v.check_count("start", start, minimum=0, maximum=10**8)
    stop = _v.check_count("stop", stop, minimum=start + 1, maximum=10**8)
    if esm is None:
        from egmlib.peers.arms import ARMS

        esm = ARMS["Alg3"]
    else:
        esm = _v.check_callable("esm", esm)
    X, Xp = esm_pair(st)
    out = np.empty((2, len(CONTROLS), stop - start, 1 + 3 * st.d + 1))
    for i, D in enumerate((X, Xp)):
        for j in range(start, stop):
            out[i, :, j - start] = _one_run(esm, D, X, Xp, st, np.random.default_rng([st.seed, 1, i, j]),
                                            np.random.default_rng([st.seed, 2, i, j]))
    return PowerReleases(start=start, stop=stop, values=out)


@dataclass(frozen=True)
class PowerRow:
    """One mechanism of the power audit: its claim, its true privacy and the bounds reached."""

    name: str
    kind: str
    factor: float
    rho_true: float  #: the mechanism's true zCDP rho (inf where none holds)
    #: The final step's Gaussian mu, the median over runs of ||T_X - T_X'|| over the noise sd (None
    #: where not measured).
    mu_final: float | None
    claim: dict[float, float]  #: the claim's epsilon at each delta (ESM's, at the stated rho)
    eps_true: dict[float, float]  #: zcdp_epsilon(rho_true) at each delta
    eps_final: dict[float, float] | None  #: the exact epsilon of the final step alone on this pair
    attacks: list[pa.AttackResult]  #: one per delta
    exceptions: tuple[int, int]  #: calls that raised, on X and on X'
    few_rows: tuple[int, int]  #: releases through a path the statistic does not read, on X and on X'

    @property
    def caught(self) -> dict[float, bool]:
        """Whether the lower bound exceeds ESM's claim, by delta."""
        return {a.delta: a.eps_lb > self.claim[a.delta] for a in self.attacks}

    def bound(self, delta: float) -> float:
        """The lower bound on epsilon reached at ``delta`` (one of the run's deltas)."""
        for a in self.attacks:
            if a.delta == delta:
                return a.eps_lb
        raise ValueError(f"delta must be one of {[a.delta for a in self.attacks]}, got delta={delta!r}")


@dataclass(frozen=True)
class PowerAudit:
    """A run of :func:`run_power_audit`: the setting, the rows, and the first stored statistics."""

    setting: PowerSetting
    rows: tuple[PowerRow, ...]
    #: the first ``saved`` likelihood ratios, by mechanism name and dataset ("X", "X'")
    first: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)

    def row(self, name: str) -> PowerRow:
        """The row of the mechanism called ``name``."""
        for r in self.rows:
            if r.name == name:
                return r
        raise ValueError(f"name must be one of {[r.name for r in self.rows]}, got name={name!r}")


def audit_rows(releases: PowerReleases, power_setting: PowerSetting, *, noise_share: float,
               mu_final: Sequence[float] | NDArray[np.float64] | None = None) -> tuple[PowerRow, ...]:
    """The attack (Kairouz, Oh and Viswanath 2015) on every mechanism's releases, with the claim, the
    true rho (``noise_share`` is ESM's share of rho for its final noise) and the final step's exact
    epsilon at ``mu_final`` (one per mechanism; Balle and Wang 2018)."""
    st = _check_setting(power_setting)
    Y = _check_releases(releases)
    noise_share = _v.check_probability("noise_share", noise_share)
    mus = None if mu_final is None else _v.as_real_array("mu_final", mu_final, ndim=1)
    if mus is not None:
        _v.check_length("mu_final", mus, length=len(CONTROLS), of="one entry per mechanism")
    claim = {dd: zcdp_epsilon(st.rho, delta=dd) for dd in st.deltas}
    rows = []
    for m, ctl in enumerate(CONTROLS):
        if ctl.kind in ("esm", "noise"):
            rho_true = st.rho * (1.0 - noise_share + noise_share / ctl.factor**2)
        else:
            rho_true = math.inf
        mu = None if mus is None else float(mus[m])
        attacks = pa.distinguishing_attack(Y[0, m], Y[1, m], deltas=st.deltas, alpha=st.alpha_each)
        rows.append(PowerRow(
            name=ctl.name, kind=ctl.kind, factor=ctl.factor, rho_true=rho_true, mu_final=mu, claim=claim,
            eps_true={dd: _zcdp_epsilon(rho_true, dd) for dd in st.deltas},
            eps_final=None if mu is None else {dd: _gaussian_eps(mu, dd) for dd in st.deltas}, attacks=attacks,
            exceptions=(int(np.sum(Y[0, m, :, 0] == EXCEPTION_VALUE)), int(np.sum(Y[1, m, :, 0] == EXCEPTION_VALUE))),
            few_rows=(int(np.sum(Y[0, m, :, 0] == FEW_ROWS_VALUE)), int(np.sum(Y[1, m, :, 0] == FEW_ROWS_VALUE)))))
    return tuple(rows)


def _check_releases(releases: Any) -> NDArray[np.float64]:
    if not isinstance(releases, PowerReleases):
        raise TypeError(f"releases must be PowerReleases (from power_releases), got releases of type "
                        f"{type(releases).__name__}")
    Y = releases.values
    if Y.ndim != 4 or Y.shape[:2] != (2, len(CONTROLS)) or Y.shape[2] < 4:
        raise ValueError(f"releases must hold at least 4 runs of the {len(CONTROLS)} mechanisms on both datasets, "
                         f"got values of shape {Y.shape}")
    return Y


def _gaussian_eps(mu: float, delta: float) -> float:
    """The exact epsilon at delta of a Gaussian mechanism with mu = sensitivity / sd (Balle and Wang 2018)."""
    if not math.isfinite(mu) or mu <= 0.0:
        return math.inf if mu == math.inf else math.nan
    return float(calibration.eps_from_sigma(1.0 / mu, delta=delta))


def _mu_final(X: np.ndarray, Xp: np.ndarray, st: PowerSetting, esm: Callable[..., Any], runs: int) -> NDArray:
    """Per mechanism, the median over ``runs`` runs on X of ||T_X - T_X'|| / (its noise sd)."""
    vals = np.full((len(CONTROLS), max(runs, 1)), np.nan)
    n = X.shape[0]
    for j in range(runs):
        with _Capture() as cap:
            r = esm(X, rho=st.rho, lower=st.lower, upper=st.upper, rng=np.random.default_rng([st.seed, 3, j]))
        if r.path in ("iome", "centred-iome") and len(cap.calls) == 1:
            call = cap.calls[0]
            YX, YXp, _ = _iome_inputs(call, X, X, Xp, st)
            res = call["result"]
            s = float(res.noise_std) * n
            gap = float(np.linalg.norm(clipping.clipped_sum(YX, C=res.C, mu_hat=res.centre).total
                                       - clipping.clipped_sum(YXp, C=res.C, mu_hat=res.centre).total))
        elif r.path == "algorithm3":
            b = 1.0 / np.sqrt(r.sigma * float(np.sum(r.sigma)))
            s = float(np.median(r.noise_std * n * b))
            gap = float(np.linalg.norm(clipping.clipped_sum(X, C=r.C, mu_hat=r.centre, b=b).total
                                       - clipping.clipped_sum(Xp, C=r.C, mu_hat=r.centre, b=b).total))
        else:
            continue
        for m, ctl in enumerate(CONTROLS):
            vals[m, j] = gap / (ctl.factor * s) if ctl.kind in ("esm", "noise") and s > 0 else math.inf
    if np.all(np.isnan(vals)):  # no run released through a final step the audit reads
        return np.full(len(CONTROLS), np.nan)
    return np.nanmedian(vals, axis=1)


def run_power_audit(power_setting: PowerSetting | None = None, *, block: int = 500,
                    progress: Callable[[int, int], None] | None = None) -> PowerAudit:
    """The power audit of ESM and its controls (module docstring), ``block`` runs at a time.

    ``progress(done, total)`` is called after each block (the script prints it).  The result does
    not depend on ``block``.
    """
    st = PowerSetting() if power_setting is None else _check_setting(power_setting)
    block = _v.check_count("block", block, maximum=10**8)
    if progress is not None:
        progress = _v.check_callable("progress", progress)
    from egmlib.peers.arms import ARMS

    esm = ARMS["Alg3"]
    parts = []
    for start in range(0, st.trials, block):
        stop = min(st.trials, start + block)
        parts.append(power_releases(st, start=start, stop=stop, esm=esm))
        if progress is not None:
            progress(stop, st.trials)
    return audit_from_releases(join_releases(parts), st)


def audit_from_releases(releases: PowerReleases, power_setting: PowerSetting) -> PowerAudit:
    """The :class:`PowerAudit` of all runs' releases (the blocks of :func:`power_releases` joined by
    :func:`join_releases`): :func:`audit_rows` (Kairouz, Oh and Viswanath 2015) with ESM's noise share
    and the final step's mu over ``MU_RUNS`` runs of its own, and the first ``saved`` likelihood ratios."""
    st = _check_setting(power_setting)
    from egmlib.peers.arms import ARMS

    Y = _check_releases(releases)
    X, Xp = esm_pair(st)
    mu = _mu_final(X, Xp, st, ARMS["Alg3"], min(MU_RUNS, Y.shape[2]))
    rows = audit_rows(releases, st, noise_share=final_noise_share(st), mu_final=mu)
    k = min(st.saved, Y.shape[2])
    first = {ctl.name: {"X": tuple(float(v) for v in Y[0, m, :k, 0]), "X'": tuple(float(v) for v in Y[1, m, :k, 0])}
             for m, ctl in enumerate(CONTROLS)}
    return PowerAudit(setting=st, rows=rows, first=first)


# --------------------------------------------------------------------------------------- #
# what chapter 7b shows
# --------------------------------------------------------------------------------------- #
@dataclass(frozen=True)
class PowerSummary:
    """Chapter 7b's findings from a :class:`PowerAudit`, at the primary delta; ``glue()`` names them."""

    delta: float  #: the primary delta', fixed in advance
    claim: float  #: ESM's claim there, zcdp_epsilon(rho, delta')
    esm_bound: float  #: the lower bound reached on ESM itself
    esm_final: float  #: the most the attack on the final step could reach on ESM (its exact epsilon)
    twice_bound: float  #: the bound reached on the control at twice the stated rho
    twice_final: float  #: that control's final step's exact epsilon
    caught: int  #: controls whose bound exceeds the claim
    controls: int  #: controls run
    weakest_caught: float  #: the smallest true rho, in multiples of the stated one, of a caught control
    trials: int  #: releases per dataset
    heldout: int  #: of which scored
    exceptions: int  #: exceptions over every call of ESM
    rho: float
    n: int
    d: int
    bounds: int  #: the bounds of the run, jointly at the confidence below
    looks: int  #: how often they were looked at (all looks jointly at the confidence below)
    confidence: float  #: percent

    #: The glued values' names (prefixed "ch7b-power-" by the chapter).
    GLUE = ("delta", "claim", "esm_bound", "esm_final", "twice_bound", "twice_final", "caught", "controls",
            "weakest_caught", "trials", "heldout", "exceptions", "rho", "n", "d", "bounds", "looks", "confidence")

    def glue(self) -> dict[str, float | int]:
        """The values of ``GLUE``, by name."""
        return {k: getattr(self, k) for k in self.GLUE}


def _at(row: PowerRow, delta: float) -> pa.AttackResult:
    return {a.delta: a for a in row.attacks}[delta]


def power_summary(audit: PowerAudit) -> PowerSummary:
    """The findings of chapter 7b from the stored audit (:func:`load_power_audit`)."""
    if not isinstance(audit, PowerAudit):
        raise TypeError(f"audit must be a PowerAudit, got audit of type {type(audit).__name__}")
    st = audit.setting
    P = st.primary_delta
    esm, twice = audit.row("ESM"), audit.row(TWICE)
    controls = [r for r in audit.rows if r.kind != "esm"]
    caught = [r for r in controls if r.caught[P]]
    return PowerSummary(
        delta=P, claim=esm.claim[P], esm_bound=_at(esm, P).eps_lb,
        esm_final=math.nan if esm.eps_final is None else esm.eps_final[P], twice_bound=_at(twice, P).eps_lb,
        twice_final=math.nan if twice.eps_final is None else twice.eps_final[P], caught=len(caught),
        controls=len(controls), weakest_caught=min((r.rho_true for r in caught), default=math.inf) / st.rho,
        trials=st.trials, heldout=st.trials // 2, exceptions=sum(esm.exceptions), rho=st.rho, n=st.n, d=st.d,
        bounds=st.bounds, looks=st.looks, confidence=100.0 * pa.CONFIDENCE)


def power_table(audit: PowerAudit) -> dict[str, list[Any]]:
    """Chapter 7b's table: every mechanism's true rho, the claim, the bound reached and the verdict."""
    if not isinstance(audit, PowerAudit):
        raise TypeError(f"audit must be a PowerAudit, got audit of type {type(audit).__name__}")
    P = audit.setting.primary_delta
    return {
        "mechanism": [r.name for r in audit.rows],
        "true $\\rho$ / stated $\\rho$": [f"{r.rho_true / audit.setting.rho:.2f}" if math.isfinite(r.rho_true)
                                            else "none" for r in audit.rows],
        "exact $\\varepsilon$ of the final step": [f"{r.eps_final[P]:.2f}" if r.eps_final and math.isfinite(
            r.eps_final[P]) else "unbounded" for r in audit.rows],
        "bound reached": [_at(r, P).eps_lb for r in audit.rows],
        "refuted": ["yes" if r.caught[P] else "no" for r in audit.rows],
    }


def power_figure(audit: PowerAudit) -> Any:
    """The power curve: the bound reached at the primary delta against each mechanism's true rho.

    Lines: ESM's claim; the exact epsilon of the final step alone on the pair (the most this
    attack can reach) and the zCDP epsilon of the whole mechanism, both against the true rho of a
    mechanism with a fraction of the final noise.  Points: the bounds reached, filled where the
    claim is refuted; the controls with no finite rho at the right edge.
    """
    import matplotlib.pyplot as plt

    if not isinstance(audit, PowerAudit):
        raise TypeError(f"audit must be a PowerAudit, got audit of type {type(audit).__name__}")
    st, P = audit.setting, audit.setting.primary_delta
    share = final_noise_share(st)
    esm = audit.row("ESM")
    mult = np.geomspace(1.0, 16.0, 60)
    half = st.trials // 2
    ceiling = pa.eps_lower_bound(half, 0, n_pos=half, n_neg=half, delta=P, alpha=st.alpha_each, both_directions=False)
    fig, ax = plt.subplots(figsize=(6.76, 3.8))
    ax.axhline(esm.claim[P], color="0.2", ls="--", lw=1.2, label="claim at the stated $\\rho$")
    ax.axhline(ceiling, color="0.5", ls=":", lw=1.2, label="the most these runs can show")
    ax.plot(mult, [zcdp_epsilon(m * st.rho, delta=P) for m in mult], color="C4", lw=1.2,
            label="bound of the true $\\rho$ (any mechanism)")
    if esm.mu_final is not None and math.isfinite(esm.mu_final):
        mu = esm.mu_final * np.sqrt((mult - 1.0 + share) / share)
        ax.plot(mult, [_gaussian_eps(float(x), P) for x in mu], color="C0", lw=1.2,
                label="exact $\\varepsilon$ of the final step")
    edge = 24.0
    for r in audit.rows:
        x = r.rho_true / st.rho if math.isfinite(r.rho_true) else edge
        colour = "C2" if r.kind == "esm" else "C1"
        ax.plot([x], [_at(r, P).eps_lb], "o", ms=7, color=colour, mfc=colour if r.caught[P] else "white", zorder=3)
    ax.set(xscale="log", xlabel="true $\\rho$ / stated $\\rho$", ylabel=f"$\\varepsilon$ at $\\delta'$ = {P:g}",
           xlim=(0.85, 32.0), ylim=(0.0, 1.35 * ceiling))
    ax.set_xticks([1, 2, 4, 8, 16, edge], ["1", "2", "4", "8", "16", "none\nfinite"])
    ax.minorticks_off()
    ax.plot([], [], "o", color="C2", mfc="white", label="ESM, bound reached")
    ax.plot([], [], "o", color="C1", label="control, refuted")
    ax.plot([], [], "o", color="C1", mfc="white", label="control, not refuted")
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    return fig


# --------------------------------------------------------------------------------------- #
# JSON
# --------------------------------------------------------------------------------------- #
def _finite_or_str(x: float) -> float | str:
    return x if math.isfinite(x) else repr(x)


def _float(x: Any) -> float:
    return float(x)


def power_to_json(audit: PowerAudit) -> dict[str, Any]:
    """Plain JSON material of a :class:`PowerAudit` (infinities as the strings 'inf')."""
    if not isinstance(audit, PowerAudit):
        raise TypeError(f"audit must be a PowerAudit, got audit of type {type(audit).__name__}")
    rows = []
    for r in audit.rows:
        rows.append({"name": r.name, "kind": r.kind, "factor": r.factor, "rho_true": _finite_or_str(r.rho_true),
                     "mu_final": None if r.mu_final is None else _finite_or_str(r.mu_final),
                     "claim": [[k, v] for k, v in r.claim.items()],
                     "eps_true": [[k, _finite_or_str(v)] for k, v in r.eps_true.items()],
                     "eps_final": None if r.eps_final is None else [[k, _finite_or_str(v)] for k, v in
                                                                   r.eps_final.items()],
                     "attacks": [a._asdict() for a in r.attacks], "exceptions": list(r.exceptions),
                     "few_rows": list(r.few_rows)})
    return {"setting": asdict(audit.setting), "rows": rows,
            "first": {k: {w: list(v) for w, v in d.items()} for k, d in audit.first.items()}}


def load_power_audit(path: str | Path | None = None) -> PowerAudit:
    """The stored power audit (default: ``"power"`` in the repository's ``data/privacy_audit.json``)."""
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str, a Path or None, got path of type {type(path).__name__}")
    rec = json.loads(Path(POWER_FILE if path is None else path).read_text(encoding="utf-8"))["power"]
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in rec["setting"].items()}
    st = PowerSetting(**fields)
    rows = tuple(PowerRow(
        name=r["name"], kind=r["kind"], factor=float(r["factor"]), rho_true=_float(r["rho_true"]),
        mu_final=None if r["mu_final"] is None else _float(r["mu_final"]),
        claim={float(k): float(v) for k, v in r["claim"]}, eps_true={float(k): _float(v) for k, v in r["eps_true"]},
        eps_final=None if r["eps_final"] is None else {float(k): _float(v) for k, v in r["eps_final"]},
        attacks=[pa.AttackResult(**a) for a in r["attacks"]], exceptions=tuple(r["exceptions"]),
        few_rows=tuple(r["few_rows"])) for r in rec["rows"])
    first = {k: {w: tuple(v) for w, v in d.items()} for k, d in rec["first"].items()}
    return PowerAudit(setting=st, rows=rows, first=first)
