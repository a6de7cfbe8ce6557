"""Private numerical core of :mod:`egmlib.gchisq`: contour-integral inversion.

For Q = sum_j w_j Z_j^2 (weights scaled so that the largest is 1) with cumulant
generating function K(s) = -1/2 sum_j log(1 - 2 w_j s),

    P(Q > x) = (1 / 2 pi i) * integral over Gamma of exp(K(s) - s x) / s ds,

Gamma crossing the real axis at c in (0, 1/2); with c < 0 the same integral is
-P(Q <= x). Gamma is the parabola s(y) = c + i y + gamma y^2, bent to the right
so that exp(-s x) decays like exp(-gamma x y^2) (along the vertical line the
integrand decays only like |y|^(-1 - d_eff/2)). By conjugate symmetry

    P = e^{K(c) - c x} / pi * int_0^inf Re[ e^{E(y)} s'(y) / (i s(y)) ] dy,
    E(y) = K(s(y)) - K(c) - (s(y) - c) x,

and the integral is taken with the trapezoidal rule in y, which converges
geometrically when the integrand is analytic in a strip |Im y| < a
{cite}`trefethen2014`: the error is at most 2 M / (exp(2 pi eta / h) - 1) per
side, M the integral of |integrand| along Im y = +-eta < a. The strip is bounded
by the images of the pole s = 0 and of the branch point s = 1/2; M is measured on
a probe grid, the step h follows, and the coarse rule (every other node) checks
the model a posteriori. Densities come from the same nodes (integrands e^E and
-s e^E), for Halley's method on the quantile.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._cumulants import Cumulants  # noqa: F401  (re-exported)

_EPS = np.finfo(float).eps
#: Relative accuracy the quadrature is designed for (far below the 1e-10
#: promise, so that the a-posteriori check has room).
_DESIGN_TOL = 1e-17
#: Largest number of nodes accepted for one contour.
_MAX_NODES = 40000
#: Probe grid in units of 1/sqrt(K2(c)): 0 and 2^(k/2), k = -3 .. 26.
_PROBE = np.concatenate([[0.0], 2.0 ** (np.arange(-3, 27) / 2.0)])
#: Strip half-widths tried, as fractions of the distance to the singularity...
_ETA_FRACS = (0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9)
#: ... or, on a side without one, in units of 1/sqrt(K2(c)).
_ETA_SIGS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0, 16.0)
#: Absolute accuracy of K at the probes (the modulus is needed to a few %).
_PROBE_TOL = 0.02
#: Largest modulus of the integrand along the contour, relative to y = 0.
_MAX_GROWTH = 100.0
_GAMMA_FRACS = (1.0, 0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0)


# ---------------------------------------------------------------------------
# Saddlepoint and the r* approximation
# ---------------------------------------------------------------------------

def _s_of_tau(tau):
    # s = (1 - exp(-tau)) / 2, accurate for small tau
    return -0.5 * np.expm1(-tau)


def saddlepoint(cum, x):
    """Solve K'(s) = x for s < 1/2 (vectorised), Newton in tau = -log(1 - 2 s).

    Bracket: ln(x / mean) <= tau <= ln(x) for x >= mean, and
    -ln(1 + d / x) <= tau <= ln(x / mean) for x < mean.
    """
    x = np.asarray(x, dtype=float)
    lx = np.log(x)
    lm = math.log(cum.mean)
    up = x >= cum.mean
    lo = np.where(up, lx - lm, -np.log1p(cum.d / x))
    hi = np.where(up, np.maximum(lx, lx - lm), lx - lm)
    tau = 0.5 * (lo + hi)
    for _ in range(100):
        s = _s_of_tau(tau)
        k = cum.real(s)
        f = np.log(k[1]) - lx
        # d ln K' / d tau = K'' / K' * (1 - 2 s) / 2
        df = k[2] / k[1] * 0.5 * np.exp(-tau)
        lo = np.where(f < 0, tau, lo)
        hi = np.where(f > 0, tau, hi)
        new = tau - f / df
        bad = ~((new > lo) & (new < hi)) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (lo + hi), new)
        done = np.abs(new - tau) <= 1e-11 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(done | (hi - lo <= 1e-12 * np.maximum(1.0, np.abs(tau)))):
            break
    return _s_of_tau(tau)


def rstar(s, x, k):
    """Barndorff-Nielsen's r* = r + log(v / r) / r, the Lugannani-Rice family's
    tail approximation P(Q > x) ~ Phi(-r*), at saddlepoints s of x (k = K..K''')."""
    r2 = np.maximum(2.0 * (s * x - k[0]), 0.0)
    r = np.sign(s) * np.sqrt(r2)
    v = s * np.sqrt(k[2])
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.log(v / r) / r
    small = np.abs(r) < 1e-6
    corr = np.where(small | ~np.isfinite(corr), 0.0, corr)
    return r + corr


def rstar_start(cum, z):
    """Saddlepoint start for the quantile: s with r*(s) = z; returns (s, x = K'(s)).

    Newton in tau = -log(1 - 2 s) with the derivative of r*, safeguarded by a
    bracket (r* increases with s); started from the normal approximation
    s = z / sqrt(K''(0)).
    """
    z = np.asarray(z, dtype=float)
    s0 = z / math.sqrt(cum.var)
    tau = np.where(s0 < 0.45, -np.log1p(-2.0 * np.minimum(s0, 0.45)), 2.3)
    lo = np.where(z > 0, 0.0, -np.inf)
    hi = np.where(z > 0, np.inf, 0.0)
    for _ in range(100):
        s = _s_of_tau(tau)
        k = cum.real(s)
        r = rstar(s, k[1], k)
        f = r - z
        lo = np.where(f < 0, tau, lo)
        hi = np.where(f > 0, tau, hi)
        if np.all(np.abs(f) <= 1e-9 * np.maximum(1.0, np.abs(z))):
            break
        rr = np.sign(s) * np.sqrt(np.maximum(2.0 * (s * k[1] - k[0]), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            drds = np.where(np.abs(rr) > 1e-8, s * k[2] / rr, np.sqrt(k[2]))
            # derivative of r* = r + log(v / r) / r, v = s sqrt(K''):
            # dr*/ds = dr/ds (1 - (1 + log(v / r)) / r^2) + (1/s + K'''/(2 K'')) / r
            v = s * np.sqrt(k[2])
            dstar = drds * (1.0 - (1.0 + np.log(v / rr)) / rr ** 2) \
                + (1.0 / s + 0.5 * k[3] / k[2]) / rr
            dstar = np.where(np.isfinite(dstar) & (dstar > 0) & (np.abs(rr) > 1e-3),
                             dstar, drds)
            new = tau - f / (dstar * 0.5 * np.exp(-tau))
        inside = (new > lo) & (new < hi) & np.isfinite(new)
        fb = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi),
                      np.where(np.isfinite(lo), tau + 2.0, tau - 2.0))
        tau = np.where(inside, new, fb)
    s = _s_of_tau(tau)
    return s, cum.real(s)[1]


# ---------------------------------------------------------------------------
# Contours
# ---------------------------------------------------------------------------

def _strip_distance(delta, gamma):
    """Distance from the real y axis of the y with s(y) = c + delta (delta real)."""
    if gamma == 0.0:
        return abs(delta)
    q = 4.0 * gamma * delta
    if q >= 1.0:
        return 0.5 / gamma
    return 2.0 * abs(delta) / (1.0 + math.sqrt(1.0 - q))


class Contour:
    """One parabola with its trapezoidal nodes and K at the nodes.

    K at the nodes does not depend on x, so the same contour serves every x
    near the one it was planned for (the Halley steps of a quantile); each
    evaluation re-checks truncation and the coarse rule.
    """

    __slots__ = ("upper", "c", "gamma", "h", "n", "kc", "model", "y", "s", "dK",
                 "dsi", "wts", "x_plan", "pred")

    def tail(self, x):
        """(log T, f/T, f'/T, err, ok) at scaled x: T the tail on this contour's side."""
        y = self.y
        e = self.dK - (1j * y + self.gamma * y * y) * x
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.exp(e) * self.dsi
        gs = g / self.s
        t_terms = gs.real * self.wts
        tot = float(np.sum(t_terms))
        if not self.upper:
            tot = -tot
        if not np.all(np.isfinite(g)) or not tot > 0:
            return math.nan, math.nan, math.nan, math.inf, False
        dens = float(np.sum(g.real * self.wts))
        ddens = -float(np.sum((g * self.s).real * self.wts))
        coarse = 2.0 * float(np.sum(t_terms[::2]))
        if not self.upper:
            coarse = -coarse
        est = abs(tot - coarse) / tot
        # truncation: the integrand at the last nodes must be negligible
        # (geometric bound on the terms beyond the last node)
        g1, g2 = abs(gs[-1]), abs(gs[-2])
        q = g1 / g2 if g2 > 0 else 0.0
        tr = g1 * self.h * (q / (1.0 - q) if q < 0.9 else 10.0 + y[-1] / self.h) / tot
        # rounding: each term carries the absolute error of its exponent
        kabs = np.abs(self.dK) + np.abs(self.s) * x + 10.0 + abs(self.kc) + abs(self.c * x)
        rnd = float(np.sum(np.abs(t_terms) * kabs)) / tot * _EPS
        pred, pred2 = self.pred
        ok = ((est <= max(100.0 * pred2, 1e-13) or est <= 1e-7) and tr <= 1e-15
              and math.isfinite(pred))
        err = rnd + max(pred, est * est if est > 100.0 * pred2 else 0.0) + _DESIGN_TOL + tr
        phic = self.kc - self.c * x
        logt = phic + math.log(tot / math.pi)
        if self.upper:
            return logt, dens / tot, ddens / tot, err, ok
        return logt, dens / tot, ddens / tot, err, ok


def _predicted_error(model, h):
    """Trapezoidal error bound sum 2 M / (exp(2 pi eta / h) - 1), relative to the
    integral; model holds (eta, log(M / integral)) per side."""
    tot = 0.0
    for eta, lm in model:
        if not eta > 0 or not math.isfinite(lm):
            return math.inf
        q = 2.0 * math.pi * eta / h
        tot += 2.0 * math.exp(min(lm - q, 700.0)) / -math.expm1(-q)
    return tot


def _choose_c(k_hat, s_hat, upper, cum):
    """Crossing point: the saddlepoint, unless it is within half a standard
    deviation (in s) of the pole at 0 or on the wrong side of it."""
    sd = 1.0 / math.sqrt(k_hat[2])
    if (s_hat > 0) == upper and abs(s_hat) >= 0.5 * sd and s_hat != 0:
        return s_hat, k_hat
    k0 = cum.real(np.array([0.0]))[:, 0]
    c = (0.5 if upper else -0.5) / math.sqrt(k0[2])
    return c, cum.real(np.array([c]))[:, 0]


def _strip_distance_v(delta, gamma):
    """Vectorised _strip_distance."""
    delta = np.asarray(delta, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    q = 4.0 * gamma * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = 2.0 * np.abs(delta) / (1.0 + np.sqrt(np.maximum(1.0 - q, 0.0)))
        capped = np.where(q >= 1.0, 0.5 / gamma, inner)
    return np.where(gamma == 0.0, np.abs(delta), capped)


def plan_contours(cum, x, s_hat, upper, fracs=_GAMMA_FRACS):
    """Plan one contour per scaled x (arrays); nodes evaluated in one K call.

    For each x and each candidate gamma (multiples of the osculating value
    K3(c) / (6 K2(c)) of the steepest-descent path, K2, K3 the 2nd and 3rd
    derivatives of K):
    - the integrand along the real y axis, on a geometric probe grid, gives the
      truncation point Y and the mass of the integrand (candidates whose
      integrand does not decay within the grid are dropped);
    - the strip edges Im y = +-eta cross the real s axis at s = c -+ eta - gamma
      eta^2, where the integrand is evaluated with real arithmetic; its value
      there over its value at c, times the mass, estimates M(eta). Each side's
      step is the best over a few eta below the distance to the pole / branch
      point; h is the smaller of the two.
    The candidate with the fewest nodes Y / h wins. The probes need the
    integrand's modulus to a few per cent only, so K is evaluated there with
    short series.
    """
    x = np.asarray(x, dtype=float)
    upper = np.asarray(upper, dtype=bool)
    m = x.size
    kh = cum.real(s_hat)
    rs = rstar(s_hat, x, kh)
    cs = np.empty(m)
    kc = np.empty((4, m))
    for i in range(m):
        c, k = _choose_c(kh[:, i], float(s_hat[i]), bool(upper[i]), cum)
        cs[i] = c
        kc[:, i] = k
    sig = 1.0 / np.sqrt(kc[2])
    gosc = kc[3] / (6.0 * kc[2])
    gam = gosc[:, None] * np.array(fracs)[None, :]  # (m, nf)
    ys = _PROBE[None, :] * sig[:, None]  # (m, P)
    # real-line probes, all x and candidates in one (rough) K evaluation
    dsp = 1j * ys[:, None, :] + gam[:, :, None] * ys[:, None, :] ** 2  # s - c
    sp = cs[:, None, None] + dsp
    kv = cum.complex(sp, tol=_PROBE_TOL)
    e = (kv.real - kc[0][:, None, None]) - (dsp * x[:, None, None]).real
    with np.errstate(over="ignore", invalid="ignore"):
        mag = np.exp(e) * np.abs((1j + 2.0 * gam[:, :, None] * ys[:, None, :]) / sp)
    # candidates whose integrand grows far above its value at y = 0 pass close
    # to branch cuts (many comparable weights): cancellation, rejected
    fin = np.all(np.isfinite(mag), axis=2) & (np.max(mag, axis=2) <= _MAX_GROWTH * mag[:, :, 0])
    mag = np.where(np.isfinite(mag), mag, 0.0)
    dy = np.diff(ys, axis=1)[:, None, :]
    mass = np.sum((mag[:, :, 1:] + mag[:, :, :-1]) * dy, axis=2)  # both halves
    mass = np.where(fin, mass, np.inf)
    phic = kc[0] - cs * x
    lt0 = np.where(upper, special.log_ndtr(-rs), special.log_ndtr(rs))
    lt0 = np.minimum(lt0, math.log(0.75))
    lsize = math.log(math.pi) + (lt0 - phic)  # log of the normalised integral
    # strip edges: real points s = c - sgn * eta - gamma eta^2, sgn = +1 above
    c3 = cs[:, None]
    a_br = _strip_distance_v(0.5 - c3, gam)
    a_pole = _strip_distance_v(-c3 + 0.0 * gam, gam)
    a_up = np.where(c3 > 0, a_pole, np.inf)
    a_dn = np.where(c3 > 0, a_br, np.minimum(a_pole, a_br))
    fr = np.array(_ETA_FRACS)
    sg = np.array(_ETA_SIGS)
    sig3 = sig[:, None, None]

    def etas(a):
        a3 = a[:, :, None]
        fin = np.isfinite(a3)
        by_sig = np.where(fin, np.minimum(sig3 * sg, 0.9 * np.where(fin, a3, 0.0)), sig3 * sg)
        by_a = np.where(fin, np.where(fin, a3, 0.0) * fr, sig3 * sg[-1])
        return np.concatenate([by_a, by_sig], axis=2)

    eta = np.stack([etas(a_up), etas(a_dn)], axis=2)  # (m, nf, 2, E)
    sgn = np.array([1.0, -1.0])[None, None, :, None]
    g4 = gam[:, :, None, None]
    ds_edge = -sgn * eta - g4 * eta * eta
    s_edge = cs[:, None, None, None] + ds_edge
    ok_edge = (s_edge < 0.5) & (eta > 0)
    ke = cum.real(np.where(ok_edge, s_edge, 0.0).ravel(), tol=_PROBE_TOL)[0]
    ke = ke.reshape(s_edge.shape)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # log of the integrand's modulus at the edge centre over its value at c
        lgrowth = (ke - kc[0][:, None, None, None]) - ds_edge * x[:, None, None, None] \
            + np.log(np.abs(cs)[:, None, None, None] / np.abs(s_edge))
        lmm = np.log(mass)[:, :, None, None] + np.maximum(lgrowth, 0.0)  # log M(eta)
        lrel = lmm - lsize[:, None, None, None]  # log of M relative to the integral
        lratio = math.log(2.0 / _DESIGN_TOL) + lrel
        hh = 2.0 * math.pi * eta / np.maximum(lratio, math.log(2.0))
    hh = np.where(np.isfinite(hh) & ok_edge, hh, 0.0)
    kbest = np.argmax(hh, axis=3)
    h_side = np.take_along_axis(hh, kbest[..., None], axis=3)[..., 0]  # (m, nf, 2)
    eta_b = np.take_along_axis(eta, kbest[..., None], axis=3)[..., 0]
    m_b = np.take_along_axis(lrel, kbest[..., None], axis=3)[..., 0]  # log, relative
    h = np.min(h_side, axis=2)
    # truncation point: first probe after the last one that is not negligible
    tmag = mag * np.maximum(ys, sig[:, None])[:, None, :]
    with np.errstate(divide="ignore"):
        bigm = ~(np.log(tmag) < math.log(0.1 * _DESIGN_TOL) + lsize[:, None, None])
    P = ys.shape[1]
    last = np.where(bigm.any(axis=2), P - 1 - np.argmax(bigm[:, :, ::-1], axis=2), 0)
    valid = (last + 1 < P) & (h > 0) & np.isfinite(mass)
    ymax = np.take_along_axis(ys, np.minimum(last + 1, P - 1), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.where(valid, np.ceil(ymax / h) + 2, np.inf)
    jbest = np.argmin(n, axis=1)
    contours = []
    for i in range(m):
        j = int(jbest[i])
        if not n[i, j] <= _MAX_NODES:
            raise RuntimeError(
                f"gchisq: no contour within {_MAX_NODES} nodes at scaled x={float(x[i])!r}")
        ct = Contour()
        ct.upper, ct.c, ct.kc, ct.x_plan = bool(upper[i]), float(cs[i]), float(kc[0, i]), float(x[i])
        ct.gamma, ct.h, ct.n = float(gam[i, j]), float(h[i, j]), int(n[i, j])
        ct.model = [(float(eta_b[i, j, t]), float(m_b[i, j, t])) for t in (0, 1)]
        contours.append(ct)
    _fill_nodes(cum, contours)
    return contours


def _fill_nodes(cum, contours):
    ys = [ct.h * np.arange(ct.n) for ct in contours]
    ss = [ct.c + 1j * y + ct.gamma * y * y for ct, y in zip(contours, ys)]
    kv = cum.complex(np.concatenate(ss))
    pos = 0
    for ct, y, s in zip(contours, ys, ss):
        ct.y, ct.s = y, s
        ct.dK = kv[pos:pos + ct.n] - ct.kc
        pos += ct.n
        ct.dsi = (1j + 2.0 * ct.gamma * y) / 1j
        wts = np.full(ct.n, ct.h)
        wts[0] = 0.5 * ct.h
        ct.wts = wts
        ct.pred = (_predicted_error(ct.model, ct.h), _predicted_error(ct.model, 2.0 * ct.h))


def _refine(cum, ct):
    """Same contour, half the step (used when the a-posteriori check fails)."""
    new = Contour()
    new.upper, new.c, new.kc, new.x_plan = ct.upper, ct.c, ct.kc, ct.x_plan
    new.gamma, new.h, new.n, new.model = ct.gamma, 0.5 * ct.h, 2 * ct.n, ct.model
    _fill_nodes(cum, [new])
    return new


# ---------------------------------------------------------------------------
# Batched tails and quantiles
# ---------------------------------------------------------------------------

def _evaluate(cum, ct, x):
    """Evaluate a contour at x; if a check fails: re-plan at x (if x moved),
    halve the step, then re-plan with flatter parabolas."""
    res = ct.tail(x)
    plans = []
    if abs(x - ct.x_plan) > 1e-6 * x:
        plans.append(_GAMMA_FRACS)
    plans += ["refine", (1.0 / 16.0, 1.0 / 64.0, 0.0), (0.0,)]
    for how in plans:
        if res[4]:
            break
        if how == "refine":
            ct = _refine(cum, ct)
        else:
            sh = saddlepoint(cum, np.array([x]))
            try:
                ct = plan_contours(cum, np.array([x]), sh, np.array([ct.upper]), fracs=how)[0]
            except RuntimeError:
                continue
        res = ct.tail(x)
    if not res[4]:
        res = (res[0], res[1], res[2], max(res[3], 1.0), False)
    return ct, res


def tails(cum, x):
    """Tails at scaled x > 0 (1-d array): rows (upper?, log T, f/T, f'/T, err),
    T the smaller-side tail (upper if x >= mean)."""
    x = np.asarray(x, dtype=float)
    sh = saddlepoint(cum, x)
    upper = x >= cum.mean
    cts = plan_contours(cum, x, sh, upper)
    out = np.empty((5, x.size))
    for i, ct in enumerate(cts):
        _, r = _evaluate(cum, ct, float(x[i]))
        out[:, i] = (upper[i], r[0], r[1], r[2], r[3])
    return out


def quantile(cum, logt, upper, maxiter=40):
    """Scaled x with log P(Q > x) = logt (upper) or log P(Q <= x) = logt.

    Halley's method on g(x) = log T(x) - logt, from the r* saddlepoint start,
    on contours planned once at the start (re-planned only if a check fails).
    Returns (x, estimated relative error of x, not-converged mask).
    """
    logt = np.asarray(logt, dtype=float)
    t = np.exp(logt)
    z = -special.ndtri(t) if upper else special.ndtri(t)
    s0, x = rstar_start(cum, z)
    x = np.where(x > 0, x, cum.mean * 1e-3)
    m = x.size
    cts = plan_contours(cum, x, s0, np.full(m, upper))
    xerr = np.full(m, np.inf)
    failed = np.zeros(m, dtype=bool)
    for i in range(m):
        ct = cts[i]
        xi = float(x[i])
        lo, hi = 0.0, math.inf
        done = False
        for _ in range(maxiter):
            ct, (lt, fo, fpo, err, ok) = _evaluate(cum, ct, xi)
            g = lt - logt[i]
            if upper:
                g1, g2 = -fo, -fpo - fo * fo
                if g > 0:
                    lo = max(lo, xi)
                elif g < 0:
                    hi = min(hi, xi)
            else:
                g1, g2 = fo, fpo - fo * fo
                if g < 0:
                    lo = max(lo, xi)
                elif g > 0:
                    hi = min(hi, xi)
            den = 2.0 * g1 * g1 - g * g2
            step = -2.0 * g * g1 / den if den != 0 else -g / g1
            if not math.isfinite(step):
                step = -g / g1
            tol_g = max(4.0 * _EPS * max(1.0, abs(logt[i])), 2.0 * err)
            if abs(g) <= tol_g or abs(step) <= 4.0 * _EPS * xi or hi - lo <= 4.0 * _EPS * xi:
                if abs(step) <= 1e-8 * xi:
                    xi += step
                xerr[i] = (g * g + err) / abs(xi * g1) + 2.0 * _EPS
                done = ok
                break
            new = xi + step
            if not (lo < new < hi) or not math.isfinite(new):
                new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * xi
            xi = new
        x[i] = xi
        failed[i] = not done
    return x, xerr, failed
