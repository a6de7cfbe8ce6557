"""Private numerical core of :mod:`egmlib.gchisq`.

The cumulant generating function of Q = sum_j w_j Z_j^2 (weights scaled so that
the largest is 1) is K(s) = -1/2 sum_j log(1 - 2 w_j s). Tail probabilities come
from the inversion integral

    P(Q > x) = (1 / 2 pi i) * integral over Gamma of exp(K(s) - s x) / s ds,

Gamma crossing the real axis at c in (0, 1/2); with c < 0 the same integral is
-P(Q <= x). Gamma is the parabola s(y) = c + i y + gamma y^2, which bends to the
right so that exp(-s x) decays like exp(-gamma x y^2), and the integral is taken
with the trapezoidal rule in y, which converges geometrically for an integrand
analytic in a strip around the real y axis {cite}`trefethen2014`. The step comes
from the strip width (distance to the pole at s = 0 and to the branch point at
s = 1/2) and from the size of the integrand on the strip's edge, both measured.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_EPS = np.finfo(float).eps
#: Relative accuracy the quadrature is designed for (far below the 1e-10 promise,
#: so that the a-posteriori estimate has room).
_DESIGN_TOL = 1e-17
#: Largest number of nodes accepted for one contour.
_MAX_NODES = 40000
_CHUNK = 1 << 18


def _clog1p(z):
    """log(1 + z) for complex z, accurate for tiny |z| and for 1 + z near 0."""
    a = z.real
    b = z.imag
    small = np.abs(z) < 0.5
    # |1 + z|^2 - 1 = a (2 + a) + b^2, accurate when |z| is small.
    re_small = 0.5 * np.log1p(a * (2.0 + a) + b * b)
    re_big = np.log(np.hypot(1.0 + a, b))
    return np.where(small, re_small, re_big) + 1j * np.arctan2(b, 1.0 + a)


class Cumulants:
    """K(s) and its real derivatives for weights scaled to max 1 (exact sums)."""

    def __init__(self, w):
        # w: 1-d float array, sorted descending, w[0] == 1, all > 0
        self.w = w
        self.d = w.size
        self.mean = float(np.sum(w))
        self.var = 2.0 * float(np.sum(w * w))

    def real(self, s):
        """K, K', K'', K''' at real points s (1-d array, all < 1/2)."""
        s = np.asarray(s, dtype=float)
        out = np.zeros((4, s.size))
        w = self.w
        step = max(1, _CHUNK // max(1, s.size))
        for lo in range(0, self.d, step):
            wc = w[lo:lo + step]
            z = 2.0 * np.multiply.outer(s, wc)  # 2 w s
            t = wc / (1.0 - z)  # w / (1 - 2 w s)
            out[0] -= 0.5 * np.sum(np.log1p(-z), axis=1)
            out[1] += np.sum(t, axis=1)
            t2 = t * t
            out[2] += 2.0 * np.sum(t2, axis=1)
            out[3] += 8.0 * np.sum(t2 * t, axis=1)
        return out

    def complex(self, s):
        """K(s) at complex points s (any shape), principal branch along Gamma."""
        s = np.asarray(s, dtype=complex)
        flat = s.ravel()
        out = np.zeros(flat.size, dtype=complex)
        w = self.w
        step = max(1, _CHUNK // max(1, flat.size))
        for lo in range(0, self.d, step):
            wc = w[lo:lo + step]
            z = -2.0 * np.multiply.outer(flat, wc)
            out -= 0.5 * np.sum(_clog1p(z), axis=1)
        return out.reshape(s.shape)


# ---------------------------------------------------------------------------
# Saddlepoint
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
    tau = np.where(up, lo, hi)
    tau = np.clip(0.5 * (lo + hi), lo, hi)
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
        done = np.abs(new - tau) <= 1e-13 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(done | (hi - lo <= 1e-14 * np.maximum(1.0, np.abs(tau)))):
            break
    return _s_of_tau(tau)


def rstar(cum, s, x, k=None):
    """Barndorff-Nielsen r* = r + log(v / r) / r of the Lugannani-Rice family."""
    if k is None:
        k = cum.real(s)
    r2 = np.maximum(2.0 * (s * x - k[0]), 0.0)
    r = np.sign(s) * np.sqrt(r2)
    v = s * np.sqrt(k[2])
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.log(v / r) / r
    small = np.abs(r) < 1e-6
    corr = np.where(small | ~np.isfinite(corr), 0.0, corr)
    return r + corr


# ---------------------------------------------------------------------------
# Contour integral for one x at a time (vectorised over nodes)
# ---------------------------------------------------------------------------

def _strip_distance(delta, gamma):
    """Distance from the real y axis of the y with s(y) = c + delta (delta real)."""
    if gamma == 0.0:
        return abs(delta)
    q = 4.0 * gamma * delta
    if q >= 1.0:
        return 0.5 / gamma
    return 2.0 * abs(delta) / (1.0 + math.sqrt(1.0 - q))


_PROBE = np.concatenate([[0.0], 2.0 ** (np.arange(-4, 84) / 2.0)])


def _integrand(cum, x, c, gamma, phic, y):
    """Normalised integrand e^{phi(s)-phi(c)} ds/(i dy) at parameters y (complex ok)."""
    s = c + 1j * y + gamma * y * y
    e = cum.complex(s) - s * x - phic
    ds = (1j + 2.0 * gamma * y) / 1j
    return s, e, ds


def _edge_mass(cum, x, c, gamma, phic, ys, eta):
    """Integral of |integrand| along the line Im y = eta (both halves of y)."""
    s, e, ds = _integrand(cum, x, c, gamma, phic, ys + 1j * eta)
    with np.errstate(over="ignore", invalid="ignore"):
        mag = np.exp(e.real) * np.abs(ds / s)
    if not np.all(np.isfinite(mag)):
        return math.inf
    return 2.0 * float(np.sum(0.5 * (mag[1:] + mag[:-1]) * np.diff(ys)))


def _plan(cum, x, c, phic, k2, k3, size):
    """Choose gamma, step h and node count for one contour.

    size: estimate of the normalised integral (pi * tail / e^{phi(c)}).
    The trapezoidal error for an integrand analytic in the strip
    -a_- < Im y < a_+ is at most sum over the two sides of
    2 M(eta) / (exp(2 pi eta / h) - 1), M(eta) the integral of |integrand| on
    Im y = +-eta; M is measured on a probe grid for a few eta per side.
    Returns (gamma, h, n) minimising n, or None if nothing fits the node budget.
    """
    sig = 1.0 / math.sqrt(k2)
    gosc = k3 / (6.0 * k2)
    ys = _PROBE * sig
    best = None
    for frac in (1.0, 0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0):
        gamma = gosc * frac
        # nearest singularity above and below the real y axis
        a_br = _strip_distance(0.5 - c, gamma)
        a_pole = _strip_distance(-c, gamma)
        if c > 0:
            sides = (a_pole, a_br)
        else:
            sides = (math.inf, min(a_pole, a_br))
        h = math.inf
        model = []
        for sgn, a in zip((1.0, -1.0), sides):
            if math.isfinite(a):
                etas = [t * a for t in (0.5, 0.75, 0.9)]
            else:
                etas = [t * sig for t in (0.5, 1.0, 2.0, 4.0)]
            h_side = 0.0
            for eta in etas:
                m = _edge_mass(cum, x, c, gamma, phic, ys, sgn * eta)
                if not math.isfinite(m) or m <= 0:
                    continue
                ratio = 2.0 * m / (_DESIGN_TOL * size)
                hh = 2.0 * math.pi * eta / math.log(max(ratio, 2.0))
                if hh > h_side:
                    h_side = hh
                    model_side = (eta, m / size)
            if h_side < h:
                h = h_side
            model.append(model_side if h_side > 0 else (0.0, math.inf))
        if not h > 0:
            continue
        s, e, ds = _integrand(cum, x, c, gamma, phic, ys)
        with np.errstate(over="ignore", invalid="ignore"):
            mag = np.exp(e.real) * np.abs(ds / s) * np.maximum(ys, sig)
        big = np.nonzero(~(mag < _DESIGN_TOL * 0.1 * size))[0]
        if big.size == 0:
            ymax = ys[1]
        elif big[-1] + 1 >= ys.size:
            continue
        else:
            ymax = ys[big[-1] + 1]
        n = int(math.ceil(ymax / h)) + 1
        if best is None or n < best[2]:
            best = (gamma, h, n, model)
    if best is None or best[2] > _MAX_NODES:
        return None
    return best


def _predicted_error(model, h):
    """Trapezoidal error bound sum 2 M / (exp(2 pi eta / h) - 1), relative."""
    tot = 0.0
    for eta, m in model:
        if not eta > 0 or not math.isfinite(m):
            return math.inf
        q = 2.0 * math.pi * eta / h
        tot += 2.0 * m * math.exp(-q) / -math.expm1(-q)
    return tot


class TailResult:
    __slots__ = ("upper", "logtail", "f_over_t", "fp_over_t", "err")

    def __init__(self, upper, logtail, f_over_t, fp_over_t, err):
        self.upper = upper
        self.logtail = logtail
        self.f_over_t = f_over_t
        self.fp_over_t = fp_over_t
        self.err = err


def tail_one(cum, x, s_hat=None):
    """Contour evaluation at one scaled x > 0.

    Returns TailResult: the smaller-side tail T (upper: P(Q > x), else P(Q <= x))
    in logs, f/T and f'/T (density and its derivative over T), and an estimate
    of the relative error of T.
    """
    if s_hat is None:
        s_hat = float(saddlepoint(cum, np.array([x]))[0])
    upper = x >= cum.mean
    k = cum.real(np.array([s_hat]))[:, 0]
    c = s_hat
    if abs(s_hat) * math.sqrt(k[2]) < 0.5 or (s_hat > 0) != upper or s_hat == 0:
        c = (0.5 if upper else -0.5) / math.sqrt(k[2])
        k = cum.real(np.array([c]))[:, 0]
    phic = k[0] - c * x
    # estimate of the tail from the saddlepoint (r*) approximation
    kh = cum.real(np.array([s_hat]))
    rs = float(rstar(cum, np.array([s_hat]), np.array([x]), kh)[0])
    ltail0 = special.log_ndtr(-rs) if upper else special.log_ndtr(rs)
    ltail0 = min(ltail0, math.log(0.75))
    size = math.pi * math.exp(ltail0 - phic) if ltail0 - phic < 700 else math.inf
    if not np.isfinite(size):
        raise FloatingPointError("tail normalisation overflow")
    plan = _plan(cum, x, c, phic, k[2], k[3], size)
    if plan is None:
        raise RuntimeError(f"gchisq: no contour within {_MAX_NODES} nodes at x={x}")
    gamma, h, n, model = plan
    for _ in range(4):
        res, est = _integrate(cum, x, c, phic, gamma, h, n, upper)
        pred = _predicted_error(model, h)
        pred2 = _predicted_error(model, 2.0 * h)
        # the coarse rule (step 2h) must be about as good as the model says;
        # otherwise the model is not trusted: halve h and compare again.
        if est <= max(100.0 * pred2, 1e-13):
            res.err += pred + _DESIGN_TOL
            return res
        if est <= 1e-7:
            # geometric convergence: error of the fine rule ~ est^2
            res.err += max(pred, est * est) + _DESIGN_TOL
            return res
        h *= 0.5
        n = 2 * n - 1
        model = [(eta, m) for eta, m in model]
    res.err = max(res.err, est)
    return res


def _integrate(cum, x, c, phic, gamma, h, n, upper):
    y = h * np.arange(n)
    s, e, ds = _integrand(cum, x, c, gamma, phic, y)
    g = np.exp(e) * ds  # e^{phi - phi(c)} ds/(i dy)
    wts = np.full(n, h)
    wts[0] = 0.5 * h
    t_terms = (g / s).real * wts
    tail = np.sum(t_terms)
    dens = np.sum(g.real * wts)
    ddens = -np.sum((g * s).real * wts)
    # coarse rule (step 2h) from the even nodes
    tail2 = 2.0 * np.sum(t_terms[::2])
    if not upper:
        tail, tail2, dens, ddens = -tail, -tail2, dens, ddens
        # d/dx of F is +f; keep f/T with sign convention of the caller
    if not tail > 0:
        raise FloatingPointError(f"gchisq: non-positive tail sum at x={x}")
    est = abs(tail - tail2) / tail
    # rounding: each term carries the absolute error of its exponent
    cond = np.sum(np.abs(t_terms) * (np.abs(e + phic) + np.abs(s) * x + 10.0)) / tail
    err = cond * _EPS
    logtail = phic + math.log(tail / math.pi)
    return TailResult(upper, logtail, dens / tail, ddens / tail, err), est


# ---------------------------------------------------------------------------
# Batched evaluation and quantiles
# ---------------------------------------------------------------------------

def tails(cum, x):
    """tail_one over a 1-d array of scaled x > 0 (finite); returns arrays."""
    x = np.asarray(x, dtype=float)
    sh = saddlepoint(cum, x)
    out = np.empty((5, x.size))
    for i, (xi, si) in enumerate(zip(x, sh)):
        r = tail_one(cum, float(xi), float(si))
        out[:, i] = (r.upper, r.logtail, r.f_over_t, r.fp_over_t, r.err)
    return out


def _rstar_start(cum, z):
    """Saddlepoint start for the quantile: s with r*(s) = z, then x = K'(s)."""
    z = np.asarray(z, dtype=float)
    tau = np.zeros_like(z)
    lo = np.where(z > 0, 0.0, -1.0)
    hi = np.where(z > 0, 1.0, 0.0)

    def rs_at(t):
        s = _s_of_tau(t)
        k = cum.real(s)
        return rstar(cum, s, k[1], k), s, k

    # expand brackets
    for _ in range(60):
        r_hi, _, _ = rs_at(hi)
        r_lo, _, _ = rs_at(lo)
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
        conv = np.abs(new - tau) <= 1e-12 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(conv | (hi - lo <= 1e-13 * np.maximum(1.0, np.abs(tau)))):
            break
    s = _s_of_tau(tau)
    return cum.real(s)[1]


def _to_side(res, want_upper):
    """Convert tail results (rows of tails()) to the requested side."""
    upper, lt, fo, fpo, err = res
    lt = lt.copy()
    fo = fo.copy()
    fpo = fpo.copy()
    err = err.copy()
    flip = (upper > 0.5) != want_upper
    if np.any(flip):
        lo = lt[flip]
        other = np.log(-np.expm1(lo))  # log(1 - T)
        ratio = np.exp(lo - other)  # T / (1 - T)
        lt[flip] = other
        fo[flip] = fo[flip] * ratio
        fpo[flip] = fpo[flip] * ratio
        err[flip] = err[flip] * ratio
    return lt, fo, fpo, err


def quantile(cum, logt, upper, maxiter=40):
    """Scaled x with log P(Q > x) = logt (upper) or log P(Q <= x) = logt.

    Halley's method on g(x) = log T(x) - logt from the r* saddlepoint start.
    Returns (x, estimated relative error of x).
    """
    logt = np.asarray(logt, dtype=float)
    upper = bool(upper)
    if upper:
        z = -special.ndtri(np.exp(logt))
    else:
        z = special.ndtri(np.exp(logt))
    x = _rstar_start(cum, z)
    x = np.where(x > 0, x, cum.mean * 1e-3)
    lo = np.zeros_like(x)
    hi = np.full_like(x, np.inf)
    active = np.ones(x.size, dtype=bool)
    xerr = np.full(x.size, np.inf)
    for _ in range(maxiter):
        idx = np.nonzero(active)[0]
        if idx.size == 0:
            break
        xa = x[idx]
        res = tails(cum, xa)
        lt, fo, fpo, err = _to_side(res, upper)
        g = lt - logt[idx]
        if upper:
            g1 = -fo
            g2 = -fpo - fo * fo
            lo[idx] = np.where(g > 0, xa, lo[idx])
            hi[idx] = np.where(g < 0, xa, hi[idx])
        else:
            g1 = fo
            g2 = fpo - fo * fo
            lo[idx] = np.where(g < 0, xa, lo[idx])
            hi[idx] = np.where(g > 0, xa, hi[idx])
        step = -2.0 * g * g1 / (2.0 * g1 * g1 - g * g2)
        newton = -g / g1
        step = np.where(np.isfinite(step), step, newton)
        new = xa + step
        bad = ~((new > lo[idx]) & (new < hi[idx])) | ~np.isfinite(new)
        bis = np.where(np.isfinite(hi[idx]), 0.5 * (lo[idx] + hi[idx]), 2.0 * xa)
        new = np.where(bad, bis, new)
        tol_g = np.maximum(4.0 * _EPS * np.maximum(1.0, np.abs(logt[idx])), 2.0 * err)
        tiny = (np.abs(step) <= 4.0 * _EPS * xa) | (hi[idx] - lo[idx] <= 4.0 * _EPS * xa)
        done = (np.abs(g) <= tol_g) | tiny
        # relative error of x: residual after the last (tiny) Halley step plus
        # the tail's own error, both divided by |x g'|
        xerr_i = (np.abs(g) ** 2 + err) / np.abs(xa * g1) + 2 * _EPS
        # converged: apply the last (tiny) Halley correction, which the
        # bracket test may reject only through rounding
        fin = np.where(np.abs(step) <= 1e-8 * xa, xa + step, xa)
        x[idx] = np.where(done, fin, new)
        xerr[idx] = np.where(done, xerr_i, xerr[idx])
        active[idx] = ~done
    return x, xerr, active
