"""Cumulant generating function of Q = sum_j w_j Z_j^2 at a cost independent of d.

Private helper of :mod:`egmlib.gchisq`. K(s) = -1/2 sum_j log(1 - 2 w_j s) for
weights scaled so that the largest is 1, at real points (with K', K'', K''')
and at complex points on the inversion contour.
"""

from __future__ import annotations

import math

import numpy as np

_BINS_PER_OCTAVE = 4  # bin width 2^(1/4): |w - w0| <= 0.09 w0 inside a bin
_KMAX = 48  # power sums kept per bin
_RHO_BIN = 0.3  # series about a bin centre used only where |delta u| <= 0.3
_RHO_TAIL = 0.25  # weights with 2 w |s| <= 0.25 summed as one power series
_SERIES_TOL = 1e-19  # truncation of the series (absolute, in K)
_CHUNK = 1 << 18


def clog1p(z):
    """log(1 + z) for complex z, accurate for tiny |z| and for 1 + z near 0.

    Real part 1/2 log1p(a (2 + a) + b^2) (a + i b = z) where |z| < 1/2, else
    1/2 log((1 + a)^2 + b^2); imaginary part atan2(b, 1 + a). (numpy's complex
    log of 1 + z has an absolute, not relative, error in the real part for tiny
    z, and is several times slower.)
    """
    a = z.real
    b = z.imag
    ap = 1.0 + a
    b2 = b * b
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        re = np.where(np.abs(z) < 0.5, 0.5 * np.log1p(a * (2.0 + a) + b2),
                      0.5 * np.log(ap * ap + b2))
    out = np.empty(z.shape, dtype=complex)
    out.real = re
    out.imag = np.arctan2(b, ap)
    return out


def _poly_derivs(coef, u):
    """p(u) = sum_{k>=1} coef[:, k-1] u^k and its first three derivatives.

    coef: (B, n); u: (B, N). Returns a list of four (B, N) arrays.
    """
    n = coef.shape[1]
    q0 = np.zeros_like(u)
    q1 = np.zeros_like(u)
    q2 = np.zeros_like(u)
    q3 = np.zeros_like(u)
    # Horner for q(u) = sum_{k>=1} coef_k u^(k-1) and its derivatives
    for k in range(n - 1, -1, -1):
        q3 = q3 * u + 3.0 * q2
        q2 = q2 * u + 2.0 * q1
        q1 = q1 * u + q0
        q0 = q0 * u + coef[:, k, None]
    # p = u q: p' = q + u q', p'' = 2 q' + u q'', p''' = 3 q'' + u q'''
    return [u * q0, q0 + u * q1, 2.0 * q1 + u * q2, 3.0 * q2 + u * q3]


class Cumulants:
    """K(s) and derivatives for sorted weights 1 = w[0] >= w[1] >= ... > 0.

    The sorted weights are cut into bins of relative width 2^(1/4) (contiguous
    runs). A bin with centre w0 and n members contributes

        -(n/2) log(1 - 2 w0 s) + 1/2 sum_k P_k u^k / k,   u = 2 s / (1 - 2 w0 s),

    with central power sums P_k = sum over the bin of (w_j - w0)^k; the series
    is used only where |(w_j - w0) u| <= 0.3 at every point at hand, otherwise
    the bin is summed weight by weight. All bins with 2 w |s| <= 1/4 at every
    point are summed as one series 1/2 sum_k p_k (2 s)^k / k, p_k the suffix
    power sums sum_j w_j^k. Series are truncated at an absolute error 1e-19 in K.
    This also sidesteps the loss of accuracy of complex log1p for tiny
    arguments, which costs ~1e-13 in P at d = 1e5 when summed weight by weight.
    Set-up: O(48 d) operations, once per weight vector.
    """

    def __init__(self, w):
        w = np.asarray(w, dtype=float)
        self.w = w
        self.d = w.size
        self.mean = float(np.sum(w))
        self.var = 2.0 * float(np.sum(w * w))
        lb = np.floor(-np.log2(w) * _BINS_PER_OCTAVE).astype(np.int64)
        starts = np.concatenate([[0], np.nonzero(np.diff(lb))[0] + 1])
        ends = np.concatenate([starts[1:], [w.size]])
        self.starts, self.ends = starts, ends
        self.count = (ends - starts).astype(float)
        self.wtop = w[starts]
        wbot = w[ends - 1]
        self.w0 = 0.5 * (self.wtop + wbot)
        self.dmax = 0.5 * (self.wtop - wbot)
        nb = starts.size
        cen = np.zeros((nb, _KMAX))
        spread = self.dmax > 0
        if np.any(spread):
            delta = w - np.repeat(self.w0, ends - starts)
            pw = delta.copy()
            with np.errstate(under="ignore"):
                for k in range(_KMAX):
                    cen[:, k] = np.add.reduceat(pw, starts)
                    pw *= delta
        cen[~spread] = 0.0
        self.cen = cen
        raw = np.zeros((nb + 1, _KMAX))
        pw = w.copy()
        with np.errstate(under="ignore"):
            for k in range(_KMAX):
                raw[:nb, k] = np.add.reduceat(pw, starts)
                pw *= w
        self.suffix = np.cumsum(raw[::-1], axis=0)[::-1]  # sums over bins >= b
        self.kdiv = np.arange(1, _KMAX + 1, dtype=float)

    # -- which weights go where ------------------------------------------------
    def _parts(self, s, tol=_SERIES_TOL, mixed_ok=False):
        smax = float(np.max(np.abs(s))) if s.size else 0.0
        lim = _RHO_TAIL / (2.0 * smax) if smax > 0 else np.inf
        bstar = int(np.searchsorted(-self.wtop, -lim, side="left"))
        series_idx, series_nt, exact_bins, mixed = [], [], [], []
        u = denom = None
        if bstar:
            w0 = self.w0[:bstar]
            denom = 1.0 - 2.0 * np.multiply.outer(w0, s)
            u = 2.0 * s[None, :] / denom
            rho = self.dmax[:bstar] * np.max(np.abs(u), axis=1)
            for b in range(bstar):
                if self.dmax[b] == 0.0:
                    series_idx.append(b)
                    series_nt.append(0)
                elif rho[b] <= _RHO_BIN:
                    nt = math.ceil(math.log(tol / self.count[b]) / math.log(rho[b])) \
                        if rho[b] > 0 else 1
                    if self.count[b] <= 0.4 * nt:
                        # a few logarithms are cheaper than a long series
                        exact_bins.append(b)
                    else:
                        series_idx.append(b)
                        series_nt.append(min(max(nt, 1), _KMAX))
                elif mixed_ok and self.count[b] > 32:
                    # series where it converges, weight by weight elsewhere
                    r_pt = self.dmax[b] * np.abs(u[b])
                    bad = r_pt > _RHO_BIN
                    rg = float(np.max(r_pt[~bad])) if np.any(~bad) else 0.0
                    nt = math.ceil(math.log(tol / self.count[b]) / math.log(rg)) if rg > 0 else 1
                    mixed.append((len(series_idx), b, bad))
                    series_idx.append(b)
                    series_nt.append(min(max(nt, 1), _KMAX))
                else:
                    exact_bins.append(b)
        nt_tail = 0
        tail = None
        if bstar < self.count.size:
            tail = self.suffix[bstar]
            with np.errstate(under="ignore", over="ignore", invalid="ignore"):
                mag = tail * (2.0 * smax) ** self.kdiv / self.kdiv
            big = np.nonzero(mag > tol)[0]
            # at least four terms, so that the third derivative is right at s = 0
            nt_tail = max(int(big[-1]) + 1 if big.size else 0, 4)
            if nt_tail >= _KMAX:
                raise FloatingPointError("gchisq: tail power series did not converge")
        idx = np.array(series_idx, dtype=np.int64)
        nts = max(series_nt) if series_nt else 0
        we = None
        if exact_bins:
            we = np.concatenate([self.w[self.starts[b]:self.ends[b]] for b in exact_bins])
        return idx, nts, denom, u, we, tail, nt_tail, mixed

    # -- evaluation -------------------------------------------------------------
    def complex(self, s, tol=_SERIES_TOL):
        """K(s) at complex points s (any shape), principal branch along Gamma."""
        s = np.asarray(s, dtype=complex)
        shape = s.shape
        s = s.ravel()
        idx, nts, denom, u, we, tail, nt_tail, mixed = self._parts(s, tol, True)
        out = np.zeros(s.size, dtype=complex)
        if idx.size:
            logs = clog1p(-2.0 * np.multiply.outer(self.w0[idx], s))
            acc = -0.5 * self.count[idx, None] * logs
            if nts > 0:
                uu = u[idx]
                coef = self.cen[idx, :nts] / (2.0 * self.kdiv[:nts])
                poly = np.zeros_like(uu)
                with np.errstate(over="ignore", invalid="ignore"):
                    for k in range(nts - 1, -1, -1):
                        poly = (poly + coef[:, k, None]) * uu
                acc += poly
            for row, b, bad in mixed:
                acc[row, bad] = -0.5 * np.sum(clog1p(-2.0 * np.multiply.outer(
                    s[bad], self.w[self.starts[b]:self.ends[b]])), axis=1)
            out += acc.sum(axis=0)
        if we is not None:
            step = max(1, _CHUNK // max(1, s.size))
            for lo in range(0, we.size, step):
                wc = we[lo:lo + step]
                out -= 0.5 * np.sum(clog1p(-2.0 * np.multiply.outer(s, wc)), axis=1)
        if nt_tail:
            coef = tail[:nt_tail] / (2.0 * self.kdiv[:nt_tail])
            z = 2.0 * s
            poly = np.zeros_like(z)
            for k in range(nt_tail - 1, -1, -1):
                poly = (poly + coef[k]) * z
            out += poly
        return out.reshape(shape)

    def real(self, s, tol=_SERIES_TOL):
        """K and its first three derivatives at real points s (1-d array, all
        < 1/2); returns an array of shape (4, N)."""
        s = np.asarray(s, dtype=float).ravel()
        idx, nts, denom, u, we, tail, nt_tail, mixed = self._parts(s, tol, True)
        out = np.zeros((4, s.size))
        if idx.size:
            w0 = self.w0[idx, None]
            n = self.count[idx, None]
            keep = np.ones((idx.size, s.size))
            for row, _, bad in mixed:
                keep[row, bad] = 0.0
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                a = 1.0 / denom[idx]
                aw = w0 * a
                terms = [-0.5 * n * np.log1p(-2.0 * w0 * s[None, :]), n * aw,
                         2.0 * n * aw * aw, 8.0 * n * aw * aw * aw]
                if nts > 0:
                    uu = u[idx]
                    d1 = 2.0 * a * a
                    d2 = 8.0 * w0 * a ** 3
                    d3 = 48.0 * w0 * w0 * a ** 4
                    S = _poly_derivs(self.cen[idx, :nts] / (2.0 * self.kdiv[:nts]), uu)
                    terms[0] = terms[0] + S[0]
                    terms[1] = terms[1] + S[1] * d1
                    terms[2] = terms[2] + S[2] * d1 * d1 + S[1] * d2
                    terms[3] = terms[3] + S[3] * d1 ** 3 + 3.0 * S[2] * d1 * d2 + S[1] * d3
            for r in range(4):
                t = terms[r]
                out[r] += np.sum(np.where(keep > 0, t, 0.0), axis=0) if mixed else np.sum(t, axis=0)
            for _, b, bad in mixed:
                out[:, bad] += _exact_real(s[bad], self.w[self.starts[b]:self.ends[b]])
        if we is not None:
            out += _exact_real(s, we)
        if nt_tail:
            coef = tail[:nt_tail] / (2.0 * self.kdiv[:nt_tail])
            S = _poly_derivs(coef[None, :], 2.0 * s[None, :])
            out[0] += S[0][0]
            out[1] += 2.0 * S[1][0]
            out[2] += 4.0 * S[2][0]
            out[3] += 8.0 * S[3][0]
        return out


def _exact_real(s, we):
    """K, K', K'', K''' of the weights we, summed one by one, at real s."""
    out = np.zeros((4, s.size))
    step = max(1, _CHUNK // max(1, s.size))
    for lo in range(0, we.size, step):
        wc = we[lo:lo + step]
        z = 2.0 * np.multiply.outer(s, wc)
        t = wc / (1.0 - z)
        out[0] -= 0.5 * np.sum(np.log1p(-z), axis=1)
        out[1] += np.sum(t, axis=1)
        t2 = t * t
        out[2] += 2.0 * np.sum(t2, axis=1)
        out[3] += 8.0 * np.sum(t2 * t, axis=1)
    return out
