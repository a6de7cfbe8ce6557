"""Slow, independent high-precision references for the generalized chi-square tail.

Used by ``tests/test_gchisq.py`` and ``benchmarks/gchisq.py`` to check
:mod:`egmlib.gchisq` (the radius C of the report's Algorithm 3 and the thresholds
C_n, C_t of its Section 5, Poulsen 2023); not part of the public API.
Every operation runs in mpmath at the requested number of digits, with its own
saddlepoint, logarithms and quadrature, so it shares no code path with the
double-precision engine.
"""

import mpmath


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
