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

from ._gchisq_cumulants import Cumulants  # noqa: F401  (re-exported)

_EPS = np.finfo(float).eps
#: Relative accuracy the quadrature is designed for (far below the 1e-10
#: promise, so that the a-posteriori check has room).
_DESIGN_TOL = 1e-17
#: Largest number of nodes accepted for one contour.
_MAX_NODES = 40000
#: Probe grid in units of 1/sqrt(K''(c)): 0 and 2^(k/2), k = -4 .. 36.
_PROBE = np.concatenate([[0.0], 2.0 ** (np.arange(-4, 37) / 2.0)])
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
    """Saddlepoint start for the quantile: s with r*(s) = z; returns (s, x = K'(s))."""
    z = np.asarray(z, dtype=float)
    lo = np.where(z > 0, 0.0, -1.0)
    hi = np.where(z > 0, 1.0, 0.0)

    def rs_at(t):
        s = _s_of_tau(t)
        k = cum.real(s)
        return rstar(s, k[1], k), s, k

    for _ in range(60):  # expand the brackets
        r_hi = rs_at(hi)[0]
        r_lo = rs_at(lo)[0]
        need_hi = r_hi < z
        need_lo = r_lo > z
        if not (np.any(need_hi) or np.any(need_lo)):
            break
        lo = np.where(need_hi, hi, lo)
        hi = np.where(need_hi, 2.0 * hi, hi)
        hi = np.where(need_lo, lo, hi)
        lo = np.where(need_lo, 2.0 * lo, lo)
    tau = 0.5 * (lo + hi)
    for _ in range(200):
        r, s, k = rs_at(tau)
        f = r - z
        lo = np.where(f < 0, tau, lo)
        hi = np.where(f > 0, tau, hi)
        rr = np.sign(s) * np.sqrt(np.maximum(2.0 * (s * k[1] - k[0]), 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            drds = np.where(np.abs(rr) > 1e-8, s * k[2] / rr, np.sqrt(k[2]))
        df = drds * 0.5 * np.exp(-tau)
        new = tau - f / df
        bad = ~((new > lo) & (new < hi)) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (lo + hi), new)
        conv = np.abs(new - tau) <= 1e-9 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(conv | (hi - lo <= 1e-12 * np.maximum(1.0, np.abs(tau)))):
            break
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
                 "dsi", "wts", "x_plan")

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
        pred = _predicted_error(self.model, self.h)
        pred2 = _predicted_error(self.model, 2.0 * self.h)
        ok = (est <= max(100.0 * pred2, 1e-13) or est <= 1e-7) and tr <= 1e-15
        err = rnd + max(pred, est * est if est > 100.0 * pred2 else 0.0) + _DESIGN_TOL + tr
        phic = self.kc - self.c * x
        logt = phic + math.log(tot / math.pi)
        if self.upper:
            return logt, dens / tot, ddens / tot, err, ok
        return logt, dens / tot, ddens / tot, err, ok


def _predicted_error(model, h):
    """Trapezoidal error bound sum 2 M / (exp(2 pi eta / h) - 1), relative."""
    tot = 0.0
    for eta, m in model:
        if not eta > 0 or not math.isfinite(m):
            return math.inf
        q = 2.0 * math.pi * eta / h
        tot += 2.0 * m * math.exp(-q) / -math.expm1(-q)
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


def plan_contours(cum, x, s_hat, upper):
    """Plan one contour per scaled x (arrays), nodes evaluated in one K call."""
    x = np.asarray(x, dtype=float)
    m = x.size
    kh = cum.real(s_hat)
    rs = rstar(s_hat, x, kh)
    cs, ks = [], []
    for i in range(m):
        c, k = _choose_c(kh[:, i], float(s_hat[i]), bool(upper[i]), cum)
        cs.append(c)
        ks.append(k)
    # probe points for every x, gamma candidate and line, in one K evaluation
    lines = []  # (i, j, kind, eta)
    pts = []
    geo = []
    for i in range(m):
        c, k = cs[i], ks[i]
        sig = 1.0 / math.sqrt(k[2])
        gosc = k[3] / (6.0 * k[2])
        ys = _PROBE * sig
        geo.append((c, k, sig, ys))
        for j, frac in enumerate(_GAMMA_FRACS):
            gamma = gosc * frac
            a_br = _strip_distance(0.5 - c, gamma)
            a_pole = _strip_distance(-c, gamma)
            sides = (a_pole, a_br) if c > 0 else (math.inf, min(a_pole, a_br))
            etas = [(0, 0.0)]
            for sgn, a in zip((1.0, -1.0), sides):
                # strip half-widths tried: up to 0.8 of the distance to the
                # nearest singularity, and a few multiples of the Gaussian
                # width sig (the integrand may grow off the axis long before)
                cand = [t * sig for t in (0.5, 1.5, 4.0) if t * sig < 0.8 * a]
                if math.isfinite(a):
                    cand += [0.8 * a] if 0.8 * a < 8.0 * sig else [8.0 * sig]
                etas += [(sgn, eta) for eta in cand]
            for sgn, eta in etas:
                yc = ys + 1j * sgn * eta
                pts.append(c + 1j * yc + gamma * yc * yc)
                lines.append((i, j, sgn, eta, gamma))
    allp = np.concatenate(pts)
    kval = cum.complex(allp).reshape(len(pts), _PROBE.size)
    P = np.array(pts)
    contours = []
    pos = 0
    for i in range(m):
        c, k, sig, ys = geo[i]
        xi = float(x[i])
        phic = k[0] - c * xi
        ut = bool(upper[i])
        lt0 = special.log_ndtr(-rs[i]) if ut else special.log_ndtr(rs[i])
        lt0 = min(float(lt0), math.log(0.75))
        size = math.pi * math.exp(min(lt0 - phic, 700.0))
        best = None
        for j in range(len(_GAMMA_FRACS)):
            h = math.inf
            model = []
            side_best = {}
            real_row = None
            gamma = None
            while pos < len(lines) and lines[pos][0] == i and lines[pos][1] == j:
                _, _, sgn, eta, gamma = lines[pos]
                s = P[pos]
                yc = ys + 1j * sgn * eta
                e = kval[pos] - k[0] - (s - c) * xi
                with np.errstate(over="ignore", invalid="ignore"):
                    mag = np.exp(e.real) * np.abs((1j + 2.0 * gamma * yc) / s)
                if sgn == 0:
                    real_row = mag
                else:
                    if np.all(np.isfinite(mag)):
                        mm = 2.0 * float(np.sum(0.5 * (mag[1:] + mag[:-1]) * np.diff(ys)))
                        ratio = 2.0 * mm / (_DESIGN_TOL * size)
                        hh = 2.0 * math.pi * eta / math.log(max(ratio, 2.0))
                        if hh > side_best.get(sgn, (0.0,))[0]:
                            side_best[sgn] = (hh, eta, mm / size)
                pos += 1
            if len(side_best) < 2 or real_row is None:
                continue
            for hh, eta, mrel in side_best.values():
                h = min(h, hh)
                model.append((eta, mrel))
            mag = real_row * np.maximum(ys, sig)
            big = np.nonzero(~(mag < 0.1 * _DESIGN_TOL * size))[0]
            if big.size and big[-1] + 1 >= ys.size:
                continue
            ymax = ys[big[-1] + 1] if big.size else ys[1]
            n = int(math.ceil(ymax / h)) + 2
            if best is None or n < best[2]:
                best = (gamma, h, n, model)
        if best is None or best[2] > _MAX_NODES:
            raise RuntimeError(
                f"gchisq: no contour within {_MAX_NODES} nodes at scaled x={xi!r}")
        ct = Contour()
        ct.upper, ct.c, ct.kc, ct.x_plan = ut, c, float(k[0]), xi
        ct.gamma, ct.h, ct.n, ct.model = best
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

def _evaluate(cum, ct, x, x_for_replan=None):
    """Evaluate a contour at x, refining or re-planning until the checks pass."""
    res = ct.tail(x)
    tries = 0
    while not res[4] and tries < 3:
        tries += 1
        if tries == 1 and abs(x - ct.x_plan) > 1e-6 * x:
            sh = saddlepoint(cum, np.array([x]))
            ct = plan_contours(cum, np.array([x]), sh, np.array([ct.upper]))[0]
        else:
            ct = _refine(cum, ct)
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
