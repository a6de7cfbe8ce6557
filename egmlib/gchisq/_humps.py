r"""Humps of clustered weights on the strip edges of the inversion contour.

Private helper of :mod:`egmlib.gchisq` (its planner, :mod:`._planner`).

Geometry. The map y -> s(y) = c + i y + gamma y^2 sends the horizontal lines
Im y = -eta to confocal parabolas with focus F = c + 1/(4 gamma):
Re s = c_eta + gamma t^2, Im s = kappa t (y = t - i eta, c_eta = c + eta - gamma eta^2,
kappa = 1 - 2 gamma eta). A branch point S = 1/(2 w) > F lies on the line
Im y = -1/(2 gamma) at Re y = +-t_S, t_S = sqrt((S - F) / gamma), for every
eta; along the line Im y = -eta the factor |1 - 2 w s|^(-1/2) of that weight
peaks at t = t_S and is there kappa^(-1/2) times its peak on the real y axis.
A bin of n (nearly) equal weights therefore makes a hump of height
~kappa^(-n/2) and width ~kappa / (gamma sqrt(2 n)) at t_S on every edge, which
the value of the integrand at the centre of the edge (Re y = 0) does not see.
This is what misled the earlier planner on weight vectors such as
1 x 1 + 500 x 0.05.

:func:`hump_analysis` finds these humps: every bin of at least three weights
whose branch points lie beyond the focus is a potential hump; the total slope
available (over all bins) screens out positions where no local maximum can be,
a rigorous upper bound of the height (the bin's own factor at its distance
from the contour, :func:`kplus` for all other factors, and exp(-x Re s))
discards the negligible ones, and Newton steps on the exact log-modulus
(:func:`edge_logmod`) find the peaks of the others, whose Laplace mass enters
the planner's M(eta), truncation point and rejection of contours that pass
through large humps (cancellation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._contour import DESIGN_TOL
from ._cumulants import Cumulants
from ._records import BoolArray, Crossings, FloatArray, IntArray


@dataclass(frozen=True)
class Humps:
    """What :func:`hump_analysis` found, one row per contour candidate.

    Attributes
    ----------
    lmass : float array (H, 1 + k)
        log of the humps' mass (half line y > 0) on the real axis and on each
        examined lower edge (-inf: none).
    ymin : float array (H,)
        Truncation point the real-axis humps need.
    lpeak : float array (H,)
        Largest real-axis hump's log-value (-inf: none).
    """

    lmass: FloatArray
    ymin: FloatArray
    lpeak: FloatArray

    @classmethod
    def none(cls, H: int, k: int) -> Humps:
        """No humps for H candidates with k lower edges."""
        return cls(np.full((H, k + 1), -np.inf), np.zeros(H), np.full(H, -np.inf))


@dataclass(frozen=True)
class _BinGeometry:
    """Every bin as seen from every edge (arrays (H, 1 + k, B) unless said):
    closest approach r of its branch points, the range [sst_lo, sst_hi] in Re s of
    its factors' peaks, the largest slope its factors can give (maxslope), and
    whether it is a candidate hump (cand); nb (B,) its count and s_hi (B,) its
    largest branch point 1 / (2 w) (w its smallest weight)."""

    nb: FloatArray
    s_hi: FloatArray
    r: FloatArray
    sst_lo: FloatArray
    sst_hi: FloatArray
    maxslope: FloatArray
    cand: BoolArray


@dataclass(frozen=True)
class _Followed:
    """Candidate humps to follow: candidate row hh, edge ee, bin bb, and where to
    start the peak search (start_sig, in Re s)."""

    hh: IntArray
    ee: IntArray
    bb: IntArray
    start_sig: FloatArray


def edge_logmod(cum: Cumulants, x: Any, cs: Any, zc: Any, kc0: Any, gam: Any, eta: Any, t: Any) -> Any:
    """log |g(t - i eta)| (the integrand's modulus on the line Im y = -eta),
    unnormalised as in the planner: Re K(s) - K(c) - x Re(s - c) + log|s'/s|.
    All arguments broadcast together; zc NaN where the s form is used."""
    kap = 1.0 - 2.0 * gam * eta
    off_re = eta - gam * eta * eta + gam * t * t
    sp = cs + off_re + 1j * kap * t
    kv = cum.coarse(sp, zc - (sp - cs))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lv = kv.real - kc0 - off_re * x \
            + 0.5 * np.log(kap * kap + 4.0 * gam * gam * t * t) - np.log(np.abs(sp))
    return np.where(np.isfinite(lv), lv, -np.inf)


def kplus(cum: Cumulants, s_a: Any, s_b: Any, tau: Any, n_own: Any) -> Any:
    """Upper bound of the sum over all weights but n_own of -1/2 log|1 - 2 w s|
    at any point s = sigma + i tau' with s_a <= sigma <= s_b, |tau'| >= tau > 0
    (arrays). Per weight, with S = 1/(2 w): for S > 2 sigma the term is at most
    log(2) 2 w sigma (|1 - 2 w s| >= 1 - 2 w sigma >= 1/2); for S < sigma/2
    it is negative (|1 - 2 w s| >= 2 w sigma - 1 >= 1); in between at most
    1/2 log(S / |tau'|) <= 1/2 log(2 s_b / tau)."""
    w = cum.w
    ok = s_a > 0
    sa = np.where(ok, s_a, 1.0)
    sb = np.where(ok, s_b, 1.0)
    # weights with S > 2 s_a (w < 1/(4 s_a)): sum of w, times log(2) 2 s_b
    k1 = np.searchsorted(-w, -1.0 / (4.0 * sa), side="right")
    far = cum.mean - cum.cumw[k1]
    # weights with S in [s_a / 2, 2 s_b]: w in [1/(4 s_b), 1/s_a]
    k2 = np.searchsorted(-w, -1.0 / (4.0 * sb), side="right")
    k3 = np.searchsorted(-w, -1.0 / sa, side="left")
    nmid = np.maximum((k2 - k3) - n_own, 0.0)
    with np.errstate(divide="ignore"):
        lmid = np.maximum(0.0, 0.5 * np.log(2.0 * sb / tau))
    return np.where(ok, 2.0 * math.log(2.0) * sb * far + nmid * lmid, np.inf)


def hump_analysis(cum: Cumulants, cr: Crossings, gam: FloatArray, etas: FloatArray) -> Humps:
    """Humps of clustered weights on the real y axis and on lower edges.

    Along the line Im y = -eta, parametrised by sigma = Re s, a bin of n weights
    with branch points S >= S_lo beyond the focus F contributes
    -(n/4) log|s - S|^2, whose slope in sigma is at most n / (4 r) with
    r = kappa sqrt((S_lo - F) / gamma) its closest approach; exp(-x sigma)
    has slope -x. A local maximum (a hump) needs the total slope to reach x:
    the sum over all bins of their maximal slopes at sigma (n / (4 r) among
    their peaks sigma* = S - kappa^2 / (4 gamma), n / (2 v) at a distance v
    in front of them, nothing behind them) is checked at trial positions in
    front of each bin of >= 3 weights; where it falls short of x there is no
    hump, and the first position where it reaches x bounds the hump's position
    from below, hence exp(-x sigma) from above. Bins whose rigorous height
    bound is negligible are dropped; for the others a few Newton steps
    (finite differences) on the exact log-modulus, started at the last trial
    position with enough slope, find the peak and its curvature, and the
    hump's mass is the Laplace estimate exp(peak) sqrt(2 pi / |L''|).

    One row per contour candidate: cr (its crossing) and gam (H,); etas (H, k),
    the half-widths of the lower edges to examine (the real axis is added as
    eta = 0).
    """
    H = gam.size
    etas = np.concatenate([np.zeros((H, 1)), etas], axis=1)  # (H, 1+k)
    none = Humps.none(H, etas.shape[1] - 1)
    if H == 0 or not np.any(cum.count >= 3):
        return none
    geo = _bin_geometry(cum, cr, gam, etas)
    hh, ee, bb = np.nonzero(geo.cand)
    if hh.size == 0:
        return none
    fol = _screen(cum, cr, gam, etas, geo, hh, ee, bb)
    if fol.hh.size == 0:
        return none
    L, L2, t, dt = _peaks(cum, cr, gam, etas, geo.nb, fol)
    return _collect(none, cr, fol, L, L2, t, dt)


def _bin_geometry(cum: Cumulants, cr: Crossings, gam: FloatArray, etas: FloatArray) -> _BinGeometry:
    """Closest approach, peak range and largest slope of every bin from every edge;
    a bin is a candidate if its factors peak away from the edge's vertex, it has
    >= 3 weights and can supply a quarter of the slope x by itself (its neighbours
    may be followed instead; their slopes all enter the screen)."""
    x = cr.x
    nb = cum.count
    s_lo = 0.5 / cum.wtop
    s_hi = 0.5 / cum.wbot
    g3 = gam[:, None, None]
    kap = 1.0 - 2.0 * g3 * etas[:, :, None]  # (H, K1, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv4g = np.where(g3 > 0, 0.25 / g3, np.inf)
        zc3 = cr.zc_eff[:, None, None]
        # S - F = (S - 1/2) + zeta_c - 1/(4 gamma), S - 1/2 = (1 - w)/(2 w)
        Dlo = (1.0 - cum.wtop) / (2.0 * cum.wtop) + zc3 - inv4g  # (H, 1, B)
        q = kap * kap * inv4g  # kappa^2 / (4 gamma)
        gpos = np.where(g3 > 0, g3, 1.0)
        # a factor peaks away from the edge's vertex only if S - F > q; its
        # closest approach is then r = kappa sqrt((S - F) / gamma)
        humpy = (g3 > 0) & (kap > 0) & (Dlo > q)
        r = np.where(humpy, kap * np.sqrt(np.maximum(Dlo, 0.0) / gpos), np.inf)
        sst_lo = s_lo - q  # (H, K1, B)
        sst_hi = s_hi - q
        maxslope = np.where(humpy, nb / (4.0 * r), 0.0)  # (H, K1, B)
        cand = humpy & (nb >= 3) & (maxslope > 0.25 * x[:, None, None])
    return _BinGeometry(nb, s_hi, r, sst_lo, sst_hi, maxslope, cand)


#: Trial positions sigma = sst - v r in front of a bin, v in units of its closest approach r.
_TRIALS = np.concatenate([[0.0], 0.5 * 2.0 ** np.arange(0, 12, 1.5)])


def _total_slope(geo: _BinGeometry, x: FloatArray, hh: IntArray, ee: IntArray, sig_t: FloatArray) -> FloatArray:
    """Upper bound of the total slope available at the trial positions sig_t (C, V)
    over all bins: a bin with its peaks at sigma* >= sst_lo contributes at most
    n min(1/(4 r), 1/(2 (sst_lo - sigma))) in front of them, n / (4 r) among them,
    and a negative amount (0 here) once sigma is past them by more than 3 r.
    Strong bins (max slope >= x / 100 on some examined edge) enter one by one, the
    others with their maximal slopes summed."""
    maxslope = geo.maxslope
    strong = np.nonzero(np.any(maxslope >= 0.01 * x[:, None, None], axis=(0, 1)))[0]
    weak = np.sum(maxslope, axis=2) - np.sum(maxslope[:, :, strong], axis=2)  # (H, K1)
    rr = geo.r[hh, ee][:, None, strong]  # (C, 1, Bs)
    lo_b = geo.sst_lo[hh, ee][:, None, strong]
    hi_b = geo.sst_hi[hh, ee][:, None, strong]
    ns = geo.nb[strong]
    st = sig_t[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        front = ns * np.minimum(1.0 / (4.0 * rr), 1.0 / (2.0 * np.maximum(lo_b - st, 0.0)))
        slope = np.where(st < lo_b, front, np.where(st <= hi_b + 3.0 * rr, ns / (4.0 * rr), 0.0))
        slope = np.where(np.isfinite(rr), slope, 0.0)
    return np.sum(slope, axis=2) + weak[hh, ee][:, None]  # (C, V)


def _screen(cum: Cumulants, cr: Crossings, gam: FloatArray, etas: FloatArray, geo: _BinGeometry,
            hh: IntArray, ee: IntArray, bb: IntArray) -> _Followed:
    """The candidate humps worth following: the total slope must reach x somewhere
    in front of the bin (a hump needs it), the rigorous height bound must not be
    negligible, and per edge only the three bins with the largest bounds are
    followed (neighbouring bins of one spread cluster lead to the same hump)."""
    x = cr.x
    vt = _TRIALS
    rb = geo.r[hh, ee, bb]
    sig_t = geo.sst_lo[hh, ee, bb][:, None] - rb[:, None] * vt[None, :]  # (C, V)
    able = _total_slope(geo, x, hh, ee, sig_t) >= x[hh][:, None]
    keep = np.any(able, axis=1)
    # the hump (a local maximum) lies beyond the first trial position where the
    # slope can be positive: sigma >= sigma_low
    first = np.argmax(able[:, ::-1], axis=1)  # from the largest v down
    kfirst = vt.size - 1 - first
    slow = sig_t[np.arange(hh.size), np.minimum(kfirst + 1, vt.size - 1)]
    last = np.argmax(able, axis=1)  # smallest v with slope >= x: Newton start
    start_sig = sig_t[np.arange(hh.size), last]
    ub, negligible = _height_bound(cum, cr, gam, etas, geo, (hh, ee, bb), slow)
    keep &= ~negligible
    hh, ee, bb, ub, start_sig = hh[keep], ee[keep], bb[keep], ub[keep], start_sig[keep]
    if hh.size > 3:
        order = np.lexsort((-ub, ee, hh))
        hh, ee, bb, start_sig = hh[order], ee[order], bb[order], start_sig[order]
        grp = hh * etas.shape[1] + ee
        first = np.concatenate([[0], np.nonzero(np.diff(grp))[0] + 1])
        rank = np.arange(grp.size) - np.repeat(first, np.diff(np.concatenate([first, [grp.size]])))
        sel = rank < 3
        hh, ee, bb, start_sig = hh[sel], ee[sel], bb[sel], start_sig[sel]
    return _Followed(hh, ee, bb, start_sig)


def _height_bound(cum: Cumulants, cr: Crossings, gam: FloatArray, etas: FloatArray, geo: _BinGeometry,
                  at: tuple[IntArray, IntArray, IntArray], slow: FloatArray) -> tuple[FloatArray, BoolArray]:
    """A rigorous bound of the hump's log-height (inf where the hump may lie left of
    the edge's vertex) and whether it is negligible: there exp(-x sigma) <=
    exp(-x sigma_low), the bin's own factors are at most (S_hi / r)^(n/2), and all
    others are bounded by :func:`kplus`."""
    hh, ee, bb = at
    nb = geo.nb
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gs = gam[hh]
        es = etas[hh, ee]
        ks = 1.0 - 2.0 * gs * es
        ce = cr.c[hh] + es - gs * es * es
        sstar = geo.sst_hi[hh, ee, bb]
        tau_min = ks * np.sqrt(np.maximum(slow - ce, 0.0) / gs)
        own = 0.5 * nb[bb] * np.log(geo.s_hi[bb] / geo.r[hh, ee, bb])
        kp = kplus(cum, slow, sstar, tau_min, nb[bb])
        jac = 0.5 * np.log(ks * ks + 4.0 * gs * (sstar - ce)) - np.log(np.maximum(slow, 1e-300))
        ub = own + kp - cr.k[0][hh] - cr.x[hh] * (slow - cr.c[hh]) + jac \
            + np.log(np.sqrt(np.maximum(sstar - ce, 0.0) / gs) + 1.0)
        negligible = (slow > ce) & (ub < cr.lsize[hh] + math.log(DESIGN_TOL) - 30.0)
        ub = np.where(slow > ce, ub, np.inf)
    return ub, negligible


def _peaks(cum: Cumulants, cr: Crossings, gam: FloatArray, etas: FloatArray, nb: FloatArray, fol: _Followed
           ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Newton steps (central differences with step dt) on the exact log-modulus
    along each followed edge, from its start: the peak's log-value L, the second
    derivative L2 there, its position t (in Re y) and dt."""
    hh = fol.hh
    gs = gam[hh]
    es = etas[hh, fol.ee]
    ks = 1.0 - 2.0 * gs * es
    nbs = nb[fol.bb]
    xs = cr.x[hh]
    ce = cr.c[hh] + es - gs * es * es
    t = np.sqrt(np.maximum(fol.start_sig - ce, 0.0) / gs)
    dt = np.maximum(0.25 * ks / (gs * np.sqrt(2.0 * nbs)), 1e-12 * np.maximum(t, 1.0))
    cs, zc, kc0 = cr.c[hh], cr.zc[hh], cr.k[0][hh]
    stencil = np.array([-1.0, 0.0, 1.0])
    live = np.ones(hh.size, dtype=bool)
    L = np.full(hh.size, -np.inf)
    L2 = np.zeros(hh.size)
    for _ in range(3):
        k = np.nonzero(live)[0]
        tt = np.maximum(t[k, None] + dt[k, None] * stencil, 0.0)
        lv = edge_logmod(cum, xs[k, None], cs[k, None], zc[k, None], kc0[k, None], gs[k, None], es[k, None], tt)
        L[k] = lv[:, 1]
        with np.errstate(invalid="ignore"):
            d1 = (lv[:, 2] - lv[:, 0]) / (2.0 * dt[k])
            d2 = (lv[:, 2] - 2.0 * lv[:, 1] + lv[:, 0]) / (dt[k] * dt[k])
            step = np.where(d2 < 0, -d1 / d2, np.sign(d1) * 20.0 * dt[k])
        L2[k] = d2
        step = np.where(np.isfinite(step), np.clip(step, -20.0 * dt[k], 20.0 * dt[k]), 0.0)
        t[k] = np.maximum(t[k] + step, 0.0)
        live[k] = np.abs(step) > 0.05 * dt[k]
        # a hump found 25 nats below the tolerance at the first evaluation (from
        # a start near its peak, over a width of at most t) is not followed up
        with np.errstate(divide="ignore", invalid="ignore"):
            tiny = L[k] + np.log(np.maximum(t[k], 20.0 * dt[k])) \
                < cr.lsize[hh[k]] + math.log(DESIGN_TOL) - 25.0
        live[k] &= ~tiny
        if not np.any(live):
            break
    return L, L2, t, dt


def _collect(humps: Humps, cr: Crossings, fol: _Followed, L: FloatArray, L2: FloatArray, t: FloatArray,
             dt: FloatArray) -> Humps:
    """Laplace masses exp(L) sqrt(2 pi / |L''|) summed per candidate and edge (into
    ``humps``' arrays), the largest real-axis peak, and the truncation point that
    significant real-axis humps need (6 widths beyond the peak)."""
    hh, ee = fol.hh, fol.ee
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(L2 < 0, np.sqrt(2.0 * math.pi / np.abs(L2)), np.maximum(t, 20.0 * dt))
        width = np.where(np.isfinite(width), width, np.maximum(t, 20.0 * dt))
    lmh = L + np.log(width)
    ok = np.isfinite(lmh)
    np.logaddexp.at(humps.lmass, (hh[ok], ee[ok]), lmh[ok])
    real = ok & (ee == 0)
    np.maximum.at(humps.lpeak, hh[real], L[real])
    sig = real & (lmh > cr.lsize[hh] + math.log(DESIGN_TOL) - 10.0)
    np.maximum.at(humps.ymin, hh[sig], (t + 6.0 * width)[sig])
    return humps
