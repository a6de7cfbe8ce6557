"""Slow, independent references for the generalized chi-square tail.

Used by ``tests/test_gchisq.py`` and ``benchmarks/gchisq.py`` to check
:mod:`egmlib.gchisq` (the radius C of the report's Algorithm 3 and the thresholds
C_n, C_t of its Section 5, Poulsen 2023); not part of the public API. None of
them shares a code path with the engine:

- :func:`hypoexp_sf`: weights of multiplicity two, a sum of exponentials in
  mpmath (closed form);
- :func:`two_value_sf`: two distinct weights with any multiplicities,
  a w1 chi2_m1 + b chi2_m2, as a one-dimensional convolution of a gamma density
  with a regularized incomplete gamma function, integrated by mpmath.quad;
- :func:`mp_sf`: the inversion integral by mpmath.quad on a parabola through
  the saddlepoint (curvature an eighth of the osculating one);
- :func:`mp_tail_vertical`: the inversion integral by mpmath.quad on the
  vertical line through the saddlepoint, with equal weights grouped; along a
  vertical line every factor |1 - 2 w s|^(-1/2) decreases with |Im s|, so the
  integrand has no humps and its modulus bounds the truncation;
- :func:`np_tail_vertical`: the same vertical line in double precision with
  the trapezoidal rule, the weights summed by value with their counts (a second
  contour that shares nothing with the engine's planner, bins or series);
  :func:`vertical_logsf` runs it through the saddlepoint that :func:`saddlepoint`
  finds from the weights alone (scipy's brentq, nothing of the engine).

mpmath.quad's error control is absolute, so every integrand is scaled by its
largest modulus first.
"""

import math

import mpmath
import numpy as np
from scipy.optimize import brentq


def hypoexp_sf(v, x, dps=60):
    """P(sum_k v_k chi2_2 > x) = sum_k e^{-x/(2 v_k)} prod_{j != k} v_k / (v_k - v_j)."""
    with mpmath.workdps(dps):
        vs = [mpmath.mpf(float(t)) for t in v]
        xm = mpmath.mpf(float(x))
        tot = mpmath.mpf(0)
        for k, vk in enumerate(vs):
            term = mpmath.exp(-xm / (2 * vk))
            for j, vj in enumerate(vs):
                if j != k:
                    term *= vk / (vk - vj)
            tot += term
        return tot


def two_value_sf(a, m1, b, m2, x, dps=30):
    """P(a chi2_m1 + b chi2_m2 > x) for a >= b > 0 and integer multiplicities:
    P(a A > x) + int_0^{x/a} f_A(t) Q_B((x - a t) / b) dt, A ~ chi2_m1 with
    density f_A, Q_B the upper regularized incomplete gamma of B ~ chi2_m2.
    With t = 2 v^2 the integrand is smooth at 0; its support is located on a
    600-point grid, and two subdivisions (40 and 97 pieces) must agree."""
    with mpmath.workdps(dps):
        a, b, x = mpmath.mpf(float(a)), mpmath.mpf(float(b)), mpmath.mpf(float(x))
        h1, h2 = mpmath.mpf(m1) / 2, mpmath.mpf(m2) / 2
        lg1 = mpmath.loggamma(h1)
        vmax = mpmath.sqrt(x / (2 * a))

        def logf(v):
            if v == 0:
                return -mpmath.inf
            g = v * v
            t = (x - 2 * a * g) / b
            q = mpmath.gammainc(h2, t / 2, mpmath.inf, regularized=True) if t > 0 else mpmath.mpf(1)
            if q == 0:
                return -mpmath.inf
            return mpmath.log(2 * v) + (h1 - 1) * mpmath.log(g) - g - lg1 + mpmath.log(q)

        n = 600
        grid = [vmax * k / n for k in range(n + 1)]
        lg = [logf(v) for v in grid]
        top = max(lg)
        keep = [i for i, v in enumerate(lg) if v > top - 120]
        lo, hi = grid[max(keep[0] - 1, 0)], grid[min(keep[-1] + 1, n)]

        def f(v):
            lv = logf(v)
            return mpmath.exp(lv - top) if lv != -mpmath.inf else mpmath.mpf(0)

        def integral(pieces):
            return mpmath.quad(f, [lo + (hi - lo) * k / pieces for k in range(pieces + 1)])

        i1, i2 = integral(40), integral(97)
        if abs(i1 - i2) > abs(i2) * mpmath.mpf(10) ** (-(dps // 2)):
            raise ArithmeticError(f"two_value_sf: quadratures disagree ({i1} vs {i2})")
        return mpmath.gammainc(h1, x / (2 * a), mpmath.inf, regularized=True) + i2 * mpmath.exp(top)


def mp_sf(w, x, dps=30):
    """P(Q > x) by mpmath.quad of the inversion integral on a parabola through
    the saddlepoint, every operation at `dps` digits (independent of the
    double-precision engine: its own saddlepoint, logarithms and quadrature)."""
    with mpmath.workdps(dps):
        ws = [mpmath.mpf(float(t)) for t in w if t > 0]
        xm = mpmath.mpf(float(x))

        def K(s):
            return -mpmath.fsum(mpmath.log(1 - 2 * wj * s) for wj in ws) / 2

        def K1(s):
            return mpmath.fsum(wj / (1 - 2 * wj * s) for wj in ws)

        def K2(s):
            return mpmath.fsum(2 * wj ** 2 / (1 - 2 * wj * s) ** 2 for wj in ws)

        def K3(s):
            return mpmath.fsum(8 * wj ** 3 / (1 - 2 * wj * s) ** 3 for wj in ws)

        lo, hi = mpmath.mpf(0), 1 / (2 * max(ws))
        for _ in range(120):
            mid = (lo + hi) / 2
            if K1(mid) < xm:
                lo = mid
            else:
                hi = mid
        c = (lo + hi) / 2
        g = K3(c) / (6 * K2(c)) / 8
        base = K(c) - c * xm
        sig = 1 / mpmath.sqrt(K2(c))

        def f(y):
            s = c + 1j * y + g * y * y
            return mpmath.re(mpmath.exp(K(s) - s * xm - base) * (1j + 2 * g * y) / (1j * s))

        pts = [0] + [sig * 2 ** k for k in range(-2, 40, 2)] + [mpmath.inf]
        return mpmath.exp(base) * mpmath.quad(f, pts) / mpmath.pi


def _groups(w):
    vals, counts = np.unique(np.asarray(w, float)[np.asarray(w, float) > 0], return_counts=True)
    return vals[::-1], counts[::-1]


def mp_tail_vertical(w, x, dps=30):
    """(upper, T): T = P(Q > x) if x >= E Q (upper), else P(Q <= x), by the
    inversion integral on the vertical line Re s = c (c the saddlepoint, moved
    to half a standard deviation from the pole at 0 if closer), equal weights
    grouped, mpmath.quad on pieces of the real line up to where the modulus
    (decreasing in |y|) has fallen below 1e-(dps + 5) of its value at 0."""
    vals, counts = _groups(w)
    with mpmath.workdps(dps):
        ws = [mpmath.mpf(float(v)) for v in vals]
        ns = [int(n) for n in counts]
        xm = mpmath.mpf(float(x))
        mean = mpmath.fsum(n * v for n, v in zip(ns, ws, strict=True))
        upper = xm >= mean

        def K(s):
            return -mpmath.fsum(n * mpmath.log(1 - 2 * v * s) for n, v in zip(ns, ws, strict=True)) / 2

        def K1(s):
            return mpmath.fsum(n * v / (1 - 2 * v * s) for n, v in zip(ns, ws, strict=True))

        def K2(s):
            return mpmath.fsum(2 * n * v ** 2 / (1 - 2 * v * s) ** 2 for n, v in zip(ns, ws, strict=True))

        # saddlepoint by bisection in tau = -log(1 - 2 s)
        lo, hi = mpmath.mpf(-2000), mpmath.log(2 * max(xm, mean) / min(ws) + 2)
        for _ in range(400):
            mid = (lo + hi) / 2
            s = (1 - mpmath.exp(-mid)) / 2
            if K1(s) < xm:
                lo = mid
            else:
                hi = mid
        c = (1 - mpmath.exp(-(lo + hi) / 2)) / 2
        sd = 1 / mpmath.sqrt(K2(c))
        if abs(c) < sd / 2 or (c > 0) != upper:
            c = mpmath.mpf(0.5 if upper else -0.5) / mpmath.sqrt(K2(0))
        base = K(c) - c * xm

        def g(y):
            s = c + 1j * y
            return mpmath.exp(K(s) - s * xm - base) / s

        def f(y):
            return mpmath.re(g(y))

        # truncation: |g| decreases along the vertical line
        scale = 1 / mpmath.sqrt(K2(c))
        y = scale
        g0 = abs(g(0))
        while abs(g(y)) * y > g0 * mpmath.mpf(10) ** (-(dps + 5)) * scale:
            y *= 2
        # pieces of at most ~1/4 oscillation of exp(-i y x) or one scale
        step = min(scale, mpmath.pi / (2 * max(xm, 1 / scale)))
        npieces = int(min(max(8, y / step), 4000))
        pts = [y * k / npieces for k in range(npieces + 1)]
        val = mpmath.quad(f, pts) * mpmath.exp(base) / mpmath.pi
        return bool(upper), (val if upper else -val)


def _clog1m(z):
    """log(1 - z) for complex arrays z, accurate for tiny z."""
    a, b = -z.real, -z.imag
    small = np.abs(z) < 0.5
    re = np.where(small, 0.5 * np.log1p(a * (2.0 + a) + b * b),
                  0.5 * np.log((1.0 + a) ** 2 + b * b))
    return re + 1j * np.arctan2(b, 1.0 + a)


def np_tail_vertical(w, x, c, *, h=None, chunk=4096, max_nodes=2_000_000):
    """log of the tail on the side of c (upper if c > 0: P(Q > x); lower if c < 0:
    P(Q <= x)) by the trapezoidal rule on the vertical line Re s = c in double
    precision, equal weights grouped by value: a contour with nothing in common
    with the engine's planning. Along the line the integrand's modulus
    decreases; it is truncated where |integrand| * y drops below 1e-19 of its
    value at 0 (NaN if that takes more than max_nodes nodes: a slowly decaying
    integrand, few effective weights). The step is 2 pi (0.8 a) / (45 + n/2)
    minimised over the groups of n equal weights with branch point at distance
    a (and the pole at 0): a singularity of order n/2 makes the integrand's
    Fourier transform grow up to frequency ~ n / (2 a); the rule is repeated at
    half the step, and NaN returned unless the two agree to 1e-13."""
    w = np.asarray(w, float)
    w = w[w > 0]
    vals, counts = np.unique(w, return_counts=True)
    with np.errstate(over="ignore"):
        dist = 0.5 / vals - c  # distances of the branch points
        hs = [2.0 * math.pi * 0.8 * abs(c) / 45.0]
        hs += list(2.0 * math.pi * 0.8 * dist / (45.0 + 0.5 * counts))
    h = min(hs) if h is None else h

    def K(s):
        # equal weights grouped: sum_v count_v log(1 - 2 s v), the same sum regrouped
        return -0.5 * (_clog1m(2.0 * np.multiply.outer(s, vals)) @ counts)

    k0 = float(K(np.array([c + 0j]))[0].real)
    g0 = 1.0 / abs(c)
    y_max = h
    while True:
        gy = abs(np.exp(K(np.array([c + 1j * y_max]))[0] - k0) / (c + 1j * y_max))
        if gy * y_max < 1e-19 * g0 * h:
            break
        if y_max > max_nodes * h:
            return math.nan
        y_max *= 1.5

    # the trapezoidal rule at steps h and h/2; the nodes of the first are every second node
    # of the second, so the integrand is evaluated once
    n1 = math.ceil(y_max / h) + 1
    n2 = max(math.ceil(y_max / (0.5 * h)) + 1, 2 * n1 - 1)
    sign = -1.0 if c < 0 else 1.0
    tot1 = tot2 = 0.0
    for lo in range(0, n2, chunk):
        idx = np.arange(lo, min(n2, lo + chunk))
        y = 0.5 * h * idx
        s = c + 1j * y
        terms = (np.exp(K(s) - k0 - 1j * y * x) / s).real
        if lo == 0:
            terms[0] *= 0.5
        tot2 += float(np.sum(terms[idx < math.ceil(y_max / (0.5 * h)) + 1]))
        tot1 += float(np.sum(terms[(idx % 2 == 0) & (idx // 2 < n1)]))
    t1 = tot1 * h / math.pi * sign
    t2 = tot2 * (0.5 * h) / math.pi * sign
    if not (t2 > 0 and abs(t1 / t2 - 1.0) <= 1e-13):
        return math.nan
    return k0 - c * x + math.log(t2)


def saddlepoint(w, x):
    """The saddlepoint s of Q = sum_j w_j Z_j^2 at x > 0: K'(s) = sum_j w_j / (1 - 2 w_j s) = x,
    by brentq on (-inf, 1 / (2 max w)) (K' increases there from 0 to infinity)."""
    w = np.asarray(w, float)
    w = w[w > 0]
    wmax = float(w.max())

    def excess(s):
        return float(np.sum(w / (1.0 - 2.0 * w * s))) - x

    if x >= float(np.sum(w)):  # upper side: s in [0, 1 / (2 max w))
        lo, hi = 0.0, 0.5 / wmax * (1.0 - min(0.5, 0.25 * wmax / x))
        while excess(hi) < 0.0:
            hi = 0.5 / wmax - 0.5 * (0.5 / wmax - hi)
    else:  # lower side: K'(s) <= d / (2 |s|) below 0
        lo, hi = -float(w.size) / x, 0.0
        while excess(lo) > 0.0:
            lo *= 2.0
    return brentq(excess, lo, hi, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500)


def vertical_logsf(w, x, *, upper=None):
    """log of the tail on the side of the mean at x (P(Q > x) above the mean, P(Q <= x)
    below; ``upper=True``: P(Q > x) wherever x is): :func:`np_tail_vertical` on the weights
    scaled by the largest, on the vertical line through the saddlepoint, moved out to half a
    standard deviation of Q's exponent where it lies closer to the pole at 0 or on the other
    side (NaN where the reference cannot certify itself)."""
    w = np.asarray(w, float)
    w = w[w > 0]
    scale = float(w.max())
    ws, xs = w / scale, float(x) / scale
    c = saddlepoint(ws, xs)
    half_sd = 0.5 / math.sqrt(2.0 * float(np.sum(ws * ws)))
    above = xs >= float(np.sum(ws)) if upper is None else upper
    if abs(c) < half_sd or (c > 0) != above:
        c = half_sd if above else -half_sd
    return np_tail_vertical(ws, xs, c)


def saddlepoint_sf(w, x):
    """Barndorff-Nielsen's r* approximation P(Q > x) ~ Phi(-r*), r* = r + log(v / r) / r with
    r = sign(s) sqrt(2 (s x - K(s))) and v = s sqrt(K''(s)) at the saddlepoint s of x
    (the engine's starting point for quantiles, here from the weights alone), for comparison."""
    from scipy import stats

    w = np.asarray(w, float)
    w = w[w > 0]
    scale = float(w.max())
    ws, xs = w / scale, float(x) / scale
    s = saddlepoint(ws, xs)
    k0 = -0.5 * float(np.sum(np.log1p(-2.0 * ws * s)))
    k2 = 2.0 * float(np.sum((ws / (1.0 - 2.0 * ws * s)) ** 2))
    r = math.copysign(math.sqrt(max(2.0 * (s * xs - k0), 0.0)), s)
    if abs(r) < 1e-6:
        return float(stats.norm.sf(r))
    corr = math.log(s * math.sqrt(k2) / r) / r
    return float(stats.norm.sf(r + (corr if math.isfinite(corr) else 0.0)))
