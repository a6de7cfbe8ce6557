r"""Planning the inversion contours: crossing point, curvature, step and length.

Private helper of :mod:`egmlib.gchisq` (the contour and its trapezoidal rule are
in :mod:`._contour`). For a batch of scaled x, a priori, for several curvatures
gamma (multiples of the osculating value K'''(c) / (6 K''(c)) of the
steepest-descent path, and 0):

- the crossing point c is the saddlepoint, unless it is within half a standard
  deviation (in s) of the pole at 0 (:func:`choose_crossings`);
- the integrand on the real y axis on a geometric probe grid gives its mass and
  the truncation point (candidates whose integrand grows far above its value at
  y = 0 are dropped);
- the strip edges Im y = +-eta cross the real s axis at s = c -+ eta - gamma
  eta^2, where the integrand is evaluated with real arithmetic; its value there
  over its value at c, times the mass, estimates the smooth part of M(eta);
- humps of clustered weights (:mod:`._humps`) add to the mass, the truncation
  point and the lower edge's M(eta), and candidates that pass through large
  humps (cancellation) are rejected;
- each side's step is the best over a few eta below the distance to the pole /
  branch point; h is the smaller of the two; the candidate with fewest nodes is
  the primary contour, the best one whose gamma differs from it by a factor
  >= 4 (or 0 against > 0) the check contour (:mod:`._certify`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from . import _checks
from ._contour import DESIGN_TOL, Contour, ContourPlan, fill_nodes
from ._cumulants import Cumulants
from ._humps import Humps, hump_analysis
from ._records import BoolArray, Crossings, FloatArray
from ._saddlepoint import SaddlePoints, rstar, zeta_arg

#: The check contour only has to confirm the primary one to ~1e-12 (the two
#: must agree to 1e-12, :mod:`._certify`): it is designed for this accuracy.
CHECK_TOL = 1e-13
#: Largest number of nodes planned for one contour.
MAX_NODES = 40000
#: Probe grid in units of 1/sqrt(K2(c)): 0 and 2^(k/2), k = -3 .. 26.
_PROBE = np.concatenate([[0.0], 2.0 ** (np.arange(-3, 27) / 2.0)])
#: Strip half-widths tried, as fractions of the distance to the singularity...
_ETA_FRACS = (0.1, 0.25, 0.45, 0.65, 0.8, 0.9)
#: ... or, on a side without one, in units of 1/sqrt(K2(c)).
_ETA_SIGS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: Absolute accuracy of K at the probes (the modulus is needed to a few %).
_PROBE_TOL = 0.02
#: Largest modulus of the integrand along the contour, relative to y = 0.
_MAX_GROWTH = 100.0
#: Candidate curvatures, as multiples of the osculating value.
GAMMA_FRACS = (1.0, 0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0)
#: Lower edges examined for humps per candidate (positions in the sorted list
#: of candidate half-widths); log M in between is interpolated linearly in eta,
#: an overestimate because log M(eta) is convex.
_HUMP_ETAS = (2, 5, 8, 11)

#: A primary contour and its check contour (None: no candidate differs enough).
ContourPair = tuple[Contour, Contour | None]


@dataclass(frozen=True)
class _RealLine:
    """The integrand's modulus on the real y axis at the probes ys (m, P), per
    candidate (m, nf, P); its trapezoidal mass over both halves; whether it stays
    finite and below _MAX_GROWTH times its value at y = 0 (fin)."""

    ys: FloatArray
    mag: FloatArray
    mass: FloatArray
    fin: BoolArray


@dataclass(frozen=True)
class _Edges:
    """The strip edges per candidate (m, nf, side = upper/lower, E half-widths):
    the half-widths eta, those of the lower side (eta_dn), which of them are usable
    (ok), the log growth of the integrand from c to the edge's centre, and the
    distances a_up, a_dn (m, nf) to the nearest singularity on each side."""

    eta: FloatArray
    eta_dn: FloatArray
    ok: BoolArray
    lgrowth: FloatArray
    a_up: FloatArray
    a_dn: FloatArray


@dataclass
class _HumpState:
    """What the hump analysis has added so far, per candidate (m, nf): log of the
    humps' mass on the real axis, the truncation point they need, log M on the
    lower edges (m, nf, E), which candidates were analysed (done), and which were
    rejected for passing through a large hump."""

    lmass: FloatArray
    ymin: FloatArray
    ledge: FloatArray
    done: BoolArray
    rejected: BoolArray


@dataclass(frozen=True)
class _Steps:
    """For one design tolerance, per candidate: nodes n (inf: invalid) and step h
    (m, nf), and per side (m, nf, 2) the half-width and log(M / integral) of the
    error model."""

    n: FloatArray
    h: FloatArray
    eta: FloatArray
    lm: FloatArray


def strip_distance(delta: Any, gamma: Any) -> Any:
    """Distance from the real y axis of the y with s(y) = c + delta (delta real)."""
    delta = np.asarray(delta, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    q = 4.0 * gamma * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = 2.0 * np.abs(delta) / (1.0 + np.sqrt(np.maximum(1.0 - q, 0.0)))
        capped = np.where(q >= 1.0, 0.5 / gamma, inner)
    return np.where(gamma == 0.0, np.abs(delta), capped)


def choose_crossings(cum: Cumulants, saddle: SaddlePoints, upper: BoolArray
                     ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Crossing points (vectorised): the saddlepoint, unless it is within half a
    standard deviation (in s) of the pole at 0 or on the wrong side of it, where
    c = +-0.5 / sqrt(K''(0)). Returns c, zeta_c (NaN where the s form is used),
    K..K''' at c and at the saddlepoint."""
    s_hat, z_hat = saddle.s, saddle.zeta
    kh = saddle.k if saddle.k is not None else cum.real(s_hat, zeta_arg(z_hat))
    sd = 1.0 / np.sqrt(kh[2])
    good = ((s_hat > 0) == upper) & (np.abs(s_hat) >= 0.5 * sd) & (s_hat != 0)
    if np.all(good):
        return s_hat, zeta_arg(z_hat), kh, kh
    k0 = cum.real(np.array([0.0]))[:, 0]
    cm = np.where(upper, 0.5, -0.5) / math.sqrt(k0[2])
    c = np.where(good, s_hat, cm)
    z = np.where(good, z_hat, 0.5 - cm)
    zc = zeta_arg(z)
    kc = np.where(good[None, :], kh, cum.real(c, zc))
    return c, zc, kc, kh


def _crossings(cum: Cumulants, x: FloatArray, saddle: SaddlePoints, upper: BoolArray) -> Crossings:
    """The crossings and the size of the integral: from r* where the factored
    exponent is moderate, else (far tails, where log T and the exponent are huge and
    nearly equal) the Gaussian saddlepoint value sigma sqrt(pi/2) / |c|."""
    cs, zc, kc, kh = choose_crossings(cum, saddle, upper)
    zc_eff = np.where(np.isnan(zc), 0.5 - cs, zc)
    rs = rstar(saddle.s, x, kh)
    sig = 1.0 / np.sqrt(kc[2])
    phic = np.where(np.isnan(zc), kc[0] - cs * x, kc[0] - 0.5 * x + zc_eff * x)
    lt0 = np.where(upper, special.log_ndtr(-rs), special.log_ndtr(rs))
    lt0 = np.minimum(lt0, math.log(0.75))
    with np.errstate(divide="ignore"):
        lgauss = np.log(sig * math.sqrt(0.5 * math.pi) / np.abs(cs))
    lsize = np.where(np.abs(phic) < 1e3, math.log(math.pi) + (lt0 - phic), lgauss)
    return Crossings(x=x, upper=upper, c=cs, zc=zc, zc_eff=zc_eff, k=kc, lsize=lsize)


def _sigma(cr: Crossings) -> FloatArray:
    """The scale 1 / sqrt(K''(c)) of the integrand near y = 0."""
    return 1.0 / np.sqrt(cr.k[2])


def _gammas(cum: Cumulants, cr: Crossings, fracs: tuple[float, ...]) -> FloatArray:
    """Candidate curvatures (m, nf): fractions of the osculating value."""
    gosc = cr.k[3] / (6.0 * cr.k[2])
    gam = gosc[:, None] * np.array(fracs)[None, :]
    if cum.pole:
        # a branch point of high order at s = 0 stays on the imaginary y axis
        # (where the edge-centre model sees it) if the focus c + 1/(4 gamma)
        # is not left of it
        gam = np.minimum(gam, 0.25 / np.abs(cr.c)[:, None])
    return gam


def _real_line(cum: Cumulants, cr: Crossings, gam: FloatArray) -> _RealLine:
    """The integrand on the real y axis at the probes, all x and candidates in one
    (rough) K evaluation."""
    ys = _PROBE[None, :] * _sigma(cr)[:, None]  # (m, P)
    x, cs = cr.x, cr.c
    dsp = 1j * ys[:, None, :] + gam[:, :, None] * ys[:, None, :] ** 2  # s - c
    sp = cs[:, None, None] + dsp
    kv = cum.complex(sp, cr.zc[:, None, None] - dsp, tol=_PROBE_TOL)
    e = (kv.real - cr.k[0][:, None, None]) - (dsp * x[:, None, None]).real
    with np.errstate(over="ignore", invalid="ignore"):
        mag = np.exp(e) * np.abs((1j + 2.0 * gam[:, :, None] * ys[:, None, :]) / sp)
    fin = np.all(np.isfinite(mag), axis=2) & (np.max(mag, axis=2) <= _MAX_GROWTH * mag[:, :, 0])
    mag = np.where(np.isfinite(mag), mag, 0.0)
    dy = np.diff(ys, axis=1)[:, None, :]
    mass = np.sum((mag[:, :, 1:] + mag[:, :, :-1]) * dy, axis=2)  # both halves
    return _RealLine(ys, mag, mass, fin)


def _half_widths(a: FloatArray, sig: FloatArray) -> FloatArray:
    """Strip half-widths to try (m, nf, E) for distances a (m, nf) to the nearest
    singularity: fractions of a, and multiples of sigma below 0.9 a (only multiples
    of sigma where there is no singularity)."""
    sig3 = sig[:, None, None]
    frs = np.array(_ETA_FRACS)
    sgs = np.array(_ETA_SIGS)
    a3 = a[:, :, None]
    fin_a = np.isfinite(a3)
    a0 = np.where(fin_a, a3, 0.0)
    by_sig = np.where(fin_a, np.minimum(sig3 * sgs, 0.9 * a0), sig3 * sgs)
    by_a = np.where(fin_a, a0 * frs, sig3 * sgs[-1])
    return np.concatenate([by_a, by_sig], axis=2)


def _edges(cum: Cumulants, cr: Crossings, gam: FloatArray) -> _Edges:
    """The strip edges: real points s = c - sgn * eta - gamma eta^2 (sgn = +1 above),
    where the integrand's growth from c is evaluated with real arithmetic."""
    x, cs, zc, zc_eff = cr.x, cr.c, cr.zc, cr.zc_eff
    c3 = cs[:, None]
    a_br = strip_distance(zc_eff[:, None] + 0.0 * gam, gam)
    a_pole = strip_distance(-c3 + 0.0 * gam, gam)
    a_up = np.where(c3 > 0, a_pole, np.inf)
    a_dn = np.where(c3 > 0, a_br, np.minimum(a_pole, a_br))
    sig = _sigma(cr)
    eta_dn = _half_widths(a_dn, sig)
    eta = np.stack([_half_widths(a_up, sig), eta_dn], axis=2)  # (m, nf, 2, E)
    sgn = np.array([1.0, -1.0])[None, None, :, None]
    g4 = gam[:, :, None, None]
    ds_edge = -sgn * eta - g4 * eta * eta
    s_edge = cs[:, None, None, None] + ds_edge
    z_edge = zc[:, None, None, None] - ds_edge
    ok_edge = (zc_eff[:, None, None, None] - ds_edge > 0) & (eta > 0)
    ke = cum.real(np.where(ok_edge, s_edge, 0.0).ravel(),
                  np.where(ok_edge, z_edge, np.nan).ravel(), tol=_PROBE_TOL)[0]
    ke = ke.reshape(s_edge.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # log of the integrand's modulus at the edge centre over its value at c
        lgrowth = (ke - cr.k[0][:, None, None, None]) - ds_edge * x[:, None, None, None] \
            + np.log(np.abs(cs)[:, None, None, None] / np.abs(s_edge))
        lgrowth = np.maximum(lgrowth, 0.0)
    return _Edges(eta, eta_dn, ok_edge, lgrowth, a_up, a_dn)


def _truncation(cr: Crossings, line: _RealLine, margin: float) -> tuple[FloatArray, BoolArray]:
    """Truncation point from the probes (the first probe after the last one that is
    not negligible) and whether the candidate is valid (finite, not growing, and
    negligible before the last probe)."""
    ys, P = line.ys, line.ys.shape[1]
    tmag = line.mag * np.maximum(ys, _sigma(cr)[:, None])[:, None, :]
    with np.errstate(divide="ignore"):
        bigm = ~(np.log(tmag) < math.log(0.1 * DESIGN_TOL) + cr.lsize[:, None, None] - margin)
    last = np.where(bigm.any(axis=2), P - 1 - np.argmax(bigm[:, :, ::-1], axis=2), 0)
    ymax0 = np.take_along_axis(ys, np.minimum(last + 1, P - 1), axis=1)
    valid0 = (last + 1 < P) & line.fin
    return ymax0, valid0


def _log_edge_mass(cr: Crossings, line: _RealLine, edges: _Edges, humps: _HumpState, valid0: BoolArray,
                   margin: float) -> tuple[FloatArray, FloatArray]:
    """The mass with the humps' (inf where invalid), and log(M(eta) / integral) +
    margin on every edge (m, nf, 2, E)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mass_t = np.where(valid0 & ~humps.rejected, line.mass + 2.0 * np.exp(np.minimum(humps.lmass, 700.0)),
                          np.inf)
        lmm = np.log(mass_t)[:, :, None, None] + edges.lgrowth  # log M(eta)
        lmm[:, :, 1, :] = np.logaddexp(lmm[:, :, 1, :], humps.ledge + math.log(2.0))
        lrel = lmm - cr.lsize[:, None, None, None] + margin
    return mass_t, lrel


def _steps(tol: float, lrel: FloatArray, mass_t: FloatArray, ymax: FloatArray, edges: _Edges, valid: BoolArray
           ) -> _Steps:
    """Step and nodes for a design tolerance: per side the best step over the
    half-widths (error 2 M / (exp(2 pi eta / h) - 1) <= tol / 2), the smaller side's."""
    eta = edges.eta
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        lratio = math.log(2.0 / tol) + lrel
        hh = 2.0 * math.pi * eta / np.maximum(lratio, math.log(2.0))
    hh = np.where(np.isfinite(hh) & edges.ok, hh, 0.0)
    kbest = np.argmax(hh, axis=3)[..., None]
    h_side = np.take_along_axis(hh, kbest, axis=3)[..., 0]  # (m, nf, 2)
    eta_b = np.take_along_axis(eta, kbest, axis=3)[..., 0]
    m_b = np.take_along_axis(lrel, kbest, axis=3)[..., 0]  # log, relative
    h = np.min(h_side, axis=2)
    valid = valid & (h > 0) & np.isfinite(mass_t)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(valid, np.ceil(ymax / h) + 2, np.inf)
    return _Steps(n, h, eta_b, m_b)


def _solve(cr: Crossings, line: _RealLine, edges: _Edges, humps: _HumpState, ymax0: FloatArray,
           valid0: BoolArray, margin: float, tols: tuple[float, ...] = (DESIGN_TOL,)) -> list[_Steps]:
    """Steps and nodes of every candidate for each design tolerance."""
    mass_t, lrel = _log_edge_mass(cr, line, edges, humps, valid0, margin)
    ymax = np.maximum(ymax0, humps.ymin)
    return [_steps(tol, lrel, mass_t, ymax, edges, valid0 & ~humps.rejected) for tol in tols]


def _pick(n: FloatArray, nb: FloatArray, gam: FloatArray) -> list[tuple[int, int | None]]:
    """(primary, check) candidate indices per x: the primary has fewest nodes n;
    the check is the first by nb whose gamma differs from the primary's by a factor
    >= 4 (3.9, for rounding), or is 0 against > 0."""
    out = []
    for i in range(n.shape[0]):
        ja = int(np.argmin(n[i]))
        jb = None
        for j in np.argsort(nb[i], kind="stable"):
            if j == ja:
                continue
            if not np.isfinite(nb[i, j]):
                break
            ga, gb = gam[i, ja], gam[i, j]
            if (ga == 0.0) != (gb == 0.0) or max(ga, gb) >= 3.9 * min(ga, gb):
                jb = int(j)
                break
        out.append((ja, jb))
    return out


def _analyse_humps(cum: Cumulants, cr: Crossings, gam: FloatArray, line: _RealLine, edges: _Edges,
                   humps: _HumpState, picks: list[tuple[int, int | None]], n: FloatArray) -> None:
    """Add the humps of the picked candidates (valid and not yet analysed) to
    ``humps``: their mass, the truncation point they need, log M on the lower
    edges (interpolated between the examined ones), and reject those that pass
    through a hump far above the integrand at y = 0 (cancellation)."""
    todo = [(i, j) for i, pr in enumerate(picks) for j in pr
            if j is not None and not humps.done[i, j] and np.isfinite(n[i, j])]
    if not todo:
        return
    ti = np.array([t[0] for t in todo])
    tj = np.array([t[1] for t in todo])
    humps.done[ti, tj] = True
    order_dn = np.argsort(edges.eta_dn, axis=2)
    sub = np.take_along_axis(order_dn, np.array(_HUMP_ETAS)[None, None, :], axis=2)
    es = np.take_along_axis(edges.eta_dn[ti, tj], sub[ti, tj], axis=1)  # (H, k)
    if _checks.current().hump_analysis:
        found = hump_analysis(cum, cr.take(ti), gam[ti, tj], es)
    else:  # switched off (egmlib.gchisq.engine_checks): the planner of before the hump analysis
        found = Humps.none(ti.size, es.shape[1])
    floor = cr.lsize[ti][:, None] - 1000.0
    lm = np.maximum(found.lmass, floor)
    bad = found.lpeak > math.log(_MAX_GROWTH) + np.log(np.maximum(line.mag[ti, tj, 0], 1e-300))
    humps.rejected[ti[bad], tj[bad]] = True
    humps.lmass[ti, tj] = lm[:, 0]
    humps.ymin[ti, tj] = found.ymin
    for k in np.nonzero(np.any(lm > floor, axis=1))[0]:  # where humps were found
        i, j = ti[k], tj[k]
        xp = np.concatenate([[0.0], es[k]])
        srt = np.argsort(xp)
        humps.ledge[i, j] = np.interp(edges.eta_dn[i, j], xp[srt], lm[k][srt])


def _plan(cr: Crossings, i: int, j: int, gam: FloatArray, steps: _Steps, edges: _Edges) -> ContourPlan:
    """The plan of candidate j for point i. Where no candidate is valid: the
    vertical line with a step from the pole / branch distance and a long
    truncation (the checks will tell)."""
    if np.isfinite(steps.n[i, j]):
        gamma, h, n = float(gam[i, j]), float(steps.h[i, j]), int(min(steps.n[i, j], MAX_NODES))
    else:
        a_min = float(min(edges.a_dn[i, j], edges.a_up[i, j]))
        gamma, n = 0.0, MAX_NODES
        h = 2.0 * math.pi * 0.5 * a_min / 60.0 if a_min > 0 else float(_sigma(cr)[i]) / 8
    model = ((float(steps.eta[i, j, 0]), float(steps.lm[i, j, 0])),
             (float(steps.eta[i, j, 1]), float(steps.lm[i, j, 1])))
    return ContourPlan(upper=bool(cr.upper[i]), c=float(cr.c[i]), zc=float(cr.zc[i]), kc=float(cr.k[0, i]),
                       x_plan=float(cr.x[i]), gamma=gamma, h=h, n=n, model=model)


def plan_contours(cum: Cumulants, x: Any, saddle: SaddlePoints, upper: Any,
                  fracs: tuple[float, ...] = GAMMA_FRACS, margin: float = 0.0) -> list[ContourPair]:
    """Plan a primary and a check contour per scaled x (arrays; ``saddle`` the
    saddlepoints of x, with K there if known); the nodes of all of them are
    evaluated in one K call.

    The candidates' real-line probes and strip edges give each a step and a number
    of nodes (module docstring); the humps of the candidates that would be picked
    are analysed once and added, and the pair is picked again with the check
    contour designed for CHECK_TOL. ``margin`` (nats) is added to every log M
    (used when a first plan failed its checks).
    """
    x = np.asarray(x, dtype=float)
    upper = np.asarray(upper, dtype=bool)
    saddle = SaddlePoints(np.asarray(saddle.s, float), np.asarray(saddle.zeta, float), saddle.k)
    cr = _crossings(cum, x, saddle, upper)
    gam = _gammas(cum, cr, fracs)
    line = _real_line(cum, cr, gam)
    edges = _edges(cum, cr, gam)
    ymax0, valid0 = _truncation(cr, line, margin)
    m, nf = gam.shape
    # humps, filled in for the candidates that would be picked; the vertical line
    # has none (|g| decreases along it)
    humps = _HumpState(np.full((m, nf), -np.inf), np.zeros((m, nf)), np.full((m, nf, edges.eta.shape[3]), -np.inf),
                       gam == 0.0, np.zeros((m, nf), dtype=bool))
    (first,) = _solve(cr, line, edges, humps, ymax0, valid0, margin)
    # one pass: the candidates picked before the humps are counted are analysed
    # (a candidate that wins only afterwards is not; its check contour is)
    _analyse_humps(cum, cr, gam, line, edges, humps, _pick(first.n, first.n, gam), first.n)
    prim, check = _solve(cr, line, edges, humps, ymax0, valid0, margin, (DESIGN_TOL, CHECK_TOL))
    picks = _pick(prim.n, check.n, gam)
    plans: list[ContourPlan] = []
    for i, (ja, jb) in enumerate(picks):
        plans.append(_plan(cr, i, ja, gam, prim, edges))
        if jb is not None:
            plans.append(_plan(cr, i, jb, gam, check, edges))
    contours = iter(fill_nodes(cum, plans))
    pairs = [(next(contours), next(contours) if jb is not None else None) for _, jb in picks]
    if not _checks.current().check_contour:  # switched off (egmlib.gchisq.engine_checks)
        return [(a, None) for a, _ in pairs]
    return pairs
