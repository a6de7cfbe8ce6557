"""Cumulant generating function of Q = sum_j w_j Z_j^2 at a cost independent of d.

Private helper of :mod:`egmlib.gchisq`. K(s) = -1/2 sum_j log(1 - 2 w_j s) for
weights scaled so that the largest is 1, at real points (with K', K'', K''')
and at complex points on the inversion contour.

Near the largest branch point s = 1/2 (the far upper tail, where the contour
passes at a distance zeta_c = 1/2 - c that can be far below the spacing of
doubles near 1/2) every point may be given twice: as s and as zeta = 1/2 - s,
each accurate to its own relative precision (zeta = NaN: not given). The factors of weights w > 1/2 are
then formed as 1 - 2 w s = (1 - w) + 2 w zeta, where 1 - w is exact, so that
1 - 2 s = 2 zeta keeps its relative accuracy however close the contour comes to
1/2; every other factor is formed from s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from ._records import BoolArray, ComplexArray, FloatArray, IntArray

_BINS_PER_OCTAVE = 4  # bin width 2^(1/4): |w - w0| <= 0.09 w0 inside a bin
_KMAX = 48  # power sums kept per bin
_RHO_BIN = 0.3  # series about a bin centre used only where |delta u| <= 0.3
_RHO_TAIL = 0.25  # weights with 2 w |s| <= 0.25 summed as one power series
_SERIES_TOL = 1e-19  # truncation of the series (absolute, in K)
_CHUNK = 1 << 18
#: Sub-bins (of equal width in w) of a bin whose series converges too slowly at some
#: points: there each sub-bin is summed through its own centre where that converges, and
#: weight by weight only where even that does not (points near its branch points).
_SUB_BINS = 32
_NOIDX = np.zeros(0, dtype=np.int64)
#: Below this many (weight, point) pairs the weights are summed one by one
#: (exact, and cheaper than sorting them into bins and series).
_DIRECT = 20000


@dataclass(frozen=True)
class MixedBin:
    """A bin summed as a series at some points and weight by weight at others.

    ``row``: its row among the series bins; ``bin``: its index; ``bad``: the points
    where its series would converge too slowly (summed weight by weight there)."""

    row: int
    bin: int
    bad: BoolArray


@dataclass(frozen=True)
class Partition:
    """How the bins are summed at a batch of points (:meth:`Cumulants._parts`).

    Attributes
    ----------
    series : int array
        Bins summed through their centre (pure bins, series bins and mixed bins), in
        increasing order.
    n_terms : int
        Terms of the bins' series.
    denom, u : complex or float arrays (bins before the tail series, points) or None
        1 - 2 w0 s and u = 2 s / (1 - 2 w0 s) of every bin before the tail series.
    exact : int array
        Bins summed weight by weight.
    tail : float array or None
        Suffix power sums p_k of the bins summed as the small-weight series.
    n_tail : int
        Terms of that series (0: no such bins).
    mixed : tuple of MixedBin
    """

    series: IntArray
    n_terms: int
    denom: Any
    u: Any
    exact: IntArray
    tail: FloatArray | None
    n_tail: int
    mixed: tuple[MixedBin, ...]


@dataclass(frozen=True)
class SubBins:
    """The sub-bins of one bin (:meth:`Cumulants._sub_bins`): per sub-bin the slice
    ``starts:ends`` of the sorted weights, its centre, half-width and count, and its
    central power sums (``cen[:, k-1] = sum (w - w0)^k``)."""

    starts: IntArray
    ends: IntArray
    w0: FloatArray
    dmax: FloatArray
    count: FloatArray
    cen: FloatArray


@dataclass(frozen=True)
class Atoms:
    """Compressed weights for :meth:`Cumulants.coarse`: per atom its mean, count and
    central sums of order 2 and 3; the atoms of bin b are ``lo[b]:hi[b]``."""

    mean: FloatArray
    n: FloatArray
    p2: FloatArray
    p3: FloatArray
    lo: IntArray
    hi: IntArray


def clog1p(z: ComplexArray) -> ComplexArray:
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
    small = a * a + b2 < 0.25
    if small.all():
        re = 0.5 * np.log1p(a * (2.0 + a) + b2)
    elif not small.any():
        re = 0.5 * np.log(ap * ap + b2)
    else:
        re = np.where(small, 0.5 * np.log1p(a * (2.0 + a) + b2), 0.5 * np.log(ap * ap + b2))
    out = np.empty(z.shape, dtype=complex)
    out.real = re
    out.imag = np.arctan2(b, ap)
    return out


def _poly_derivs(coef: FloatArray, u: Any) -> list[Any]:
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
    the bin is summed weight by weight; a bin of more than 32 weights is instead cut,
    at the points where its series is slow, into 32 sub-bins summed the same way, so
    that only the sub-bins next to a point's branch points go weight by weight (in
    chunks of bounded memory). All bins with 2 w |s| <= 1/4 at every
    point are summed as one series 1/2 sum_k p_k (2 s)^k / k, p_k the suffix
    power sums sum_j w_j^k. Series are truncated at an absolute error 1e-19 in K.
    This also sidesteps the loss of accuracy of complex log1p for tiny
    arguments, which costs ~1e-13 in P at d = 1e5 when summed weight by weight.
    Set-up: O(48 d) operations, once per weight vector.
    """

    def __init__(self, w: FloatArray, pole: float = 0.0, pole_c: float = 0.0) -> None:
        w = np.asarray(w, dtype=float)
        self.w = w
        self.d = w.size
        self.mean = float(np.sum(w))
        self.var = 2.0 * float(np.sum(w * w))
        # optional term -pole log(-s) + pole_c (lower tail only, Re s < 0 at the
        # crossing): weights so far above the scale of the problem that their
        # factors (1 - 2 u s)^(-1/2) equal (2 u)^(-1/2) (-s)^(-1/2) to 2^-78
        self.pole = float(pole)
        self.pole_c = float(pole_c)
        self.d_eff = self.d + 2.0 * self.pole
        if self.pole:
            self.mean = math.inf
        lb = np.floor(-np.log2(w) * _BINS_PER_OCTAVE).astype(np.int64)
        starts = np.concatenate([[0], np.nonzero(np.diff(lb))[0] + 1])
        ends = np.concatenate([starts[1:], [w.size]])
        self.starts, self.ends = starts, ends
        self.count = (ends - starts).astype(float)
        self.wtop = w[starts]
        self.wbot = w[ends - 1]
        self.w0 = 0.5 * (self.wtop + self.wbot)
        self.dmax = 0.5 * (self.wtop - self.wbot)
        # bins and weights whose factor is formed from zeta near s = 1/2
        self.bin_top = self.w0 > 0.5
        self.n_top = int(np.count_nonzero(w > 0.5))
        self.kdiv = np.arange(1, _KMAX + 1, dtype=float)
        # prefix sums over the sorted weights (bounds in the contour planner)
        self.cumw = np.concatenate([[0.0], np.cumsum(w)])
        self._subs: dict[int, SubBins] = {}  # sub-bins of the bins that needed them, built on first use

    @cached_property
    def _power_sums(self) -> tuple[FloatArray, FloatArray]:
        """Central power sums per bin (cen) and suffix power sums (suffix),
        computed on first use: O(48 d), not needed when few enough (weight,
        point) pairs are summed directly."""
        w, starts, ends = self.w, self.starts, self.ends
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
        raw = np.zeros((nb + 1, _KMAX))
        pw = w.copy()
        with np.errstate(under="ignore"):
            for k in range(_KMAX):
                raw[:nb, k] = np.add.reduceat(pw, starts)
                pw *= w
        return cen, np.cumsum(raw[::-1], axis=0)[::-1]  # suffix: bins >= b

    @property
    def cen(self) -> FloatArray:
        return self._power_sums[0]

    @property
    def suffix(self) -> FloatArray:
        return self._power_sums[1]

    # -- the factors 1 - 2 w s -------------------------------------------------
    def _denoms(self, w: FloatArray, s: Any, zeta: Any) -> Any:
        """(len(w), N) array of 1 - 2 w s; rows of weights w > 1/2 formed as
        (1 - w) + 2 w zeta at the points where zeta is given (not NaN)."""
        d = 1.0 - 2.0 * np.multiply.outer(w, s)
        if zeta is not None:
            top = w > 0.5
            if np.any(top):
                d[top] = np.where(np.isnan(zeta)[None, :], d[top], _zeta_factors(w[top], zeta))
        return d

    def _logs(self, w: FloatArray, s: Any, zeta: Any) -> ComplexArray:
        """log(1 - 2 w s) for weights w at complex points s, an (len(w), N)
        array; factors of weights > 1/2 from zeta where zeta is given."""
        out = clog1p(-2.0 * np.multiply.outer(w, s))
        if zeta is not None:
            top = w > 0.5
            if np.any(top):
                zf = np.log(_zeta_factors(w[top], zeta))
                out[top] = np.where(np.isnan(zeta)[None, :], out[top], zf)
        return out

    # -- which weights go where ------------------------------------------------
    def _parts(self, s: ComplexArray | FloatArray, zeta: ComplexArray | FloatArray | None,
               tol: float = _SERIES_TOL, mixed_ok: bool = False) -> Partition:
        """Split the bins for the points s (see :class:`Partition`): bins with
        2 w |s| <= 1/4 at every point go to the tail series; of the others, a bin
        is a series where its series converges fast enough at every point and it
        has enough members to be worth it, else it is summed weight by weight
        (or, with ``mixed_ok``, a mixed bin if it is large)."""
        smax = _finite_max(np.abs(s))
        lim = _RHO_TAIL / (2.0 * smax) if smax > 0 else np.inf
        bstar = int(np.searchsorted(-self.wtop, -lim, side="left"))
        part = Partition(series=_NOIDX, n_terms=0, denom=None, u=None, exact=_NOIDX,
                         tail=None, n_tail=0, mixed=())
        if bstar:
            part = self._bin_series(s, zeta, bstar, tol, mixed_ok)
        if bstar < self.count.size:
            part = replace(part, **self._tail_series(bstar, smax, tol))
        return part

    def _bin_series(self, s: ComplexArray | FloatArray, zeta: ComplexArray | FloatArray | None, bstar: int,
                    tol: float, mixed_ok: bool) -> Partition:
        """The bins before ``bstar`` (2 w |s| > 1/4 somewhere): series, weight by
        weight, or mixed; the number of series terms for an absolute error tol."""
        denom = self._denoms(self.w0[:bstar], s, zeta)
        u = (2.0 * s) / denom
        au = np.abs(u)
        dmax = self.dmax[:bstar]
        rho = dmax * au.max(axis=1)
        cnt = self.count[:bstar]
        pure = dmax == 0.0
        conv = (rho <= _RHO_BIN) & ~pure
        nt = np.ones(bstar)
        if conv.any():
            rc = rho[conv]
            pos = rc > 0
            nt[conv] = np.where(pos, np.ceil(np.log(tol / cnt[conv]) / np.log(np.where(pos, rc, 0.5))), 1.0)
        series = pure | (conv & (cnt > 0.4 * nt))
        mix = ~(pure | conv) & (cnt > 32) if mixed_ok else np.zeros(bstar, bool)
        idx = np.nonzero(series | mix)[0]
        ntl = nt[series & ~pure]
        nts = int(min(max(ntl.max(), 1.0), _KMAX)) if ntl.size else 0
        mixed = []
        if mix.any():
            for b in np.nonzero(mix)[0]:
                r_pt = dmax[b] * au[b]
                bad = r_pt > _RHO_BIN
                rg = float(r_pt[~bad].max()) if not bad.all() else 0.0
                ntb = math.ceil(math.log(tol / cnt[b]) / math.log(rg)) if rg > 0 else 1
                nts = max(nts, min(max(ntb, 1), _KMAX))
                mixed.append(MixedBin(int(np.searchsorted(idx, b)), int(b), bad))
        ex = np.nonzero(~(series | mix))[0]
        return Partition(series=idx, n_terms=nts, denom=denom, u=u, exact=ex, tail=None, n_tail=0,
                         mixed=tuple(mixed))

    def _tail_series(self, bstar: int, smax: float, tol: float) -> dict[str, Any]:
        """The power series 1/2 sum_k p_k (2 s)^k / k of the bins from ``bstar`` on:
        their suffix power sums and the number of terms."""
        tail = self.suffix[bstar]
        mag = tail * (2.0 * smax) ** self.kdiv / self.kdiv
        big = np.nonzero(mag > tol)[0]
        # at least four terms, so that the third derivative is right at s = 0
        nt_tail = max(int(big[-1]) + 1 if big.size else 0, 4)
        if nt_tail >= _KMAX:
            raise FloatingPointError("gchisq: tail power series did not converge")
        return {"tail": tail, "n_tail": nt_tail}

    def _members(self, bins: IntArray) -> FloatArray | None:
        """The weights of the given bins (indices in increasing order), or
        None if there are none."""
        if bins.size == 0:
            return None
        if bins.size == 1:
            return self.w[self.starts[bins[0]]:self.ends[bins[0]]]
        return np.concatenate([self.w[self.starts[b]:self.ends[b]] for b in bins])

    # -- a coarse K for the contour planner ---------------------------------------
    @cached_property
    def _atoms(self) -> Atoms:
        """Compressed weights for :meth:`coarse`: bins of <= 64 weights as they
        are, larger ones as 32 sub-bins of equal width in w, each with its
        count, mean and central sums of order 2 and 3 (built once)."""
        w = self.w
        nb = self.starts.size
        binid = np.repeat(np.arange(nb), (self.ends - self.starts))
        big = (self.count > 64)[binid]
        width = (self.wtop - self.wbot)[binid]
        with np.errstate(divide="ignore", invalid="ignore"):
            sub = np.floor((self.wtop[binid] - w) / width * 32.0)
        sub = np.where(big & (width > 0), np.clip(sub, 0, 31), 0).astype(np.int64)
        key = np.where(big, binid * 33 + sub, -1)
        # runs of equal key (big bins) or single weights (small bins)
        brk = np.ones(w.size, dtype=bool)
        brk[1:] = (key[1:] != key[:-1]) | (key[1:] < 0)
        starts = np.nonzero(brk)[0]
        n = np.diff(np.concatenate([starts, [w.size]])).astype(float)
        mean = np.add.reduceat(w, starts) / n
        dl = w - np.repeat(mean, n.astype(np.int64))
        with np.errstate(under="ignore"):
            p2 = np.add.reduceat(dl * dl, starts)
            p3 = np.add.reduceat(dl * dl * dl, starts)
        abin = binid[starts]
        a_lo = np.searchsorted(abin, np.arange(nb), side="left")
        a_hi = np.searchsorted(abin, np.arange(nb), side="right")
        return Atoms(mean, n, p2, p3, a_lo, a_hi)

    def _atom_terms(self, bins: IntArray, s: ComplexArray, zeta: ComplexArray | None) -> ComplexArray:
        """Sum over the atoms of the given bins of -(n/2) log(1 - 2 a s) plus the
        series about a to third order (the coarse stand-in for those weights)."""
        at = self._atoms
        sel = np.concatenate([np.arange(at.lo[b], at.hi[b]) for b in bins])
        m, nn = at.mean[sel], at.n[sel]
        lg = self._logs(m, s, zeta)
        u = (2.0 * s) / self._denoms(m, s, zeta)
        corr = 0.25 * at.p2[sel, None] * u * u + at.p3[sel, None] * u * u * u / 6.0
        return np.sum(-0.5 * nn[:, None] * lg + corr, axis=0)

    def coarse(self, s: Any, zeta: Any = None) -> ComplexArray:
        """K(s) at complex points s (any shape) to about 0.1 absolute, cheaply
        for any d: as :meth:`complex` at a rough tolerance, with every bin
        that would be summed weight by weight replaced by its compressed
        weights (:attr:`_atoms`, series about each sub-bin's mean to third
        order); planner use only (zeta as in :meth:`complex`)."""
        return self._at_complex(s, zeta, lambda s, zeta: self._complex(s, zeta, 0.02, coarse=True))

    # -- evaluation -------------------------------------------------------------
    def complex(self, s: Any, zeta: Any = None, tol: float = _SERIES_TOL) -> ComplexArray:
        """K(s) at complex points s (any shape), principal branch along Gamma;
        zeta = 1/2 - s (same shape) may be given for accuracy near s = 1/2."""

        def grouped(s: ComplexArray, zeta: ComplexArray | None) -> ComplexArray:
            out = np.empty(s.size, dtype=complex)
            for sel in _groups(s):
                out[sel] = self._complex(s[sel], None if zeta is None else zeta[sel], tol)
            return out

        return self._at_complex(s, zeta, grouped)

    def _points(self, s: Any, zeta: Any, dtype: type) -> tuple[Any, Any]:
        """s and zeta as flat arrays of dtype; zeta None where no weight is
        formed from it (no weight > 1/2, or zeta not given at any point)."""
        s = np.asarray(s, dtype=dtype).ravel()
        if zeta is not None:
            zeta = np.asarray(zeta, dtype=dtype).ravel()
            if self.n_top == 0 or np.isnan(zeta).all():
                zeta = None
        return s, zeta

    def _at_complex(self, s: Any, zeta: Any,
                    series: Callable[[ComplexArray, ComplexArray | None], ComplexArray]) -> ComplexArray:
        """K at complex points s (any shape): weight by weight where few
        (weight, point) pairs, else ``series(s, zeta)`` on the flat points;
        plus the branch point at 0 if any."""
        shape = np.shape(s)
        s, zeta = self._points(s, zeta, complex)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            if self.d * s.size <= _DIRECT:
                out = -0.5 * np.sum(self._logs(self.w, s, zeta), axis=0)
            else:
                out = series(s, zeta)
            if self.pole:
                out = out - self.pole * np.log(-s) + self.pole_c
        return out.reshape(shape)

    def _complex(self, s: ComplexArray, zeta: ComplexArray | None, tol: float,
                 coarse: bool = False) -> ComplexArray:
        """K at complex points: the bins through their centres, the bins summed
        weight by weight (coarse: through their atoms), the small-weight series."""
        part = self._parts(s, zeta, tol, not coarse)
        # coarse: the bins to be summed weight by weight enter as their atoms
        we = None if coarse else self._members(part.exact)
        out = np.zeros(s.size, dtype=complex)
        if part.series.size:
            out += self._series_bins_complex(part, s, zeta, tol).sum(axis=0)
        if we is not None:
            out += self._direct_complex(we, s, zeta)
        if coarse and part.exact.size:
            out += self._atom_terms(part.exact, s, zeta)
        if part.n_tail:
            out += _tail_poly(self._tail_coef(part), 2.0 * s)
        return out

    def _series_bins_complex(self, part: Partition, s: ComplexArray, zeta: ComplexArray | None,
                             tol: float) -> ComplexArray:
        """Per series bin (rows) and point: -(n/2) log(1 - 2 w0 s) plus the bin's
        series about its centre (mixed bins through their sub-bins where it is slow)."""
        idx, nts = part.series, part.n_terms
        logs = clog1p(-2.0 * np.multiply.outer(self.w0[idx], s))
        top = self.bin_top[idx]
        if zeta is not None and np.any(top):
            zl = np.log(part.denom[idx[top]])
            logs[top] = np.where(np.isnan(zeta)[None, :], logs[top], zl)
        acc = -0.5 * self.count[idx, None] * logs
        sp = np.nonzero(self.dmax[idx] > 0)[0]  # pure bins have no series
        if nts > 0 and sp.size:
            uu = part.u[idx[sp]]
            coef = self.cen[idx[sp], :nts] / (2.0 * self.kdiv[:nts])
            poly = np.zeros_like(uu)
            for k in range(nts - 1, -1, -1):
                poly = (poly + coef[:, k, None]) * uu
            acc[sp] += poly
        for mb in part.mixed:
            zb = zeta[mb.bad] if zeta is not None else None
            acc[mb.row, mb.bad] = self._sub_bins_complex(mb.bin, s[mb.bad], zb, tol)
        return acc

    def _sub_bins(self, b: int) -> SubBins:
        """Bin b cut into at most _SUB_BINS sub-bins of equal width in w, with their
        central power sums (O(48 n) for a bin of n weights, once per bin)."""
        if b not in self._subs:
            lo, hi = int(self.starts[b]), int(self.ends[b])
            w = self.w[lo:hi]
            width = float(self.wtop[b] - self.wbot[b])
            key = np.clip(np.floor((self.wtop[b] - w) / width * _SUB_BINS), 0, _SUB_BINS - 1) if width > 0 \
                else np.zeros(w.size)
            st = np.concatenate([[0], np.nonzero(np.diff(key))[0] + 1]).astype(np.int64)
            en = np.concatenate([st[1:], [w.size]]).astype(np.int64)
            w0 = 0.5 * (w[st] + w[en - 1])
            delta = w - np.repeat(w0, en - st)
            cen = np.zeros((st.size, _KMAX))
            pw = delta.copy()
            with np.errstate(under="ignore"):
                for k in range(_KMAX):
                    cen[:, k] = np.add.reduceat(pw, st)
                    pw *= delta
            self._subs[b] = SubBins(st + lo, en + lo, w0, 0.5 * (w[st] - w[en - 1]), (en - st).astype(float), cen)
        return self._subs[b]

    def _sub_bins_complex(self, b: int, s: ComplexArray, zeta: ComplexArray | None, tol: float) -> ComplexArray:
        """-1/2 sum_j log(1 - 2 w_j s) over the weights of bin b: each sub-bin through
        the series about its centre where |delta u| <= _RHO_BIN (truncated at tol),
        weight by weight (in bounded chunks) where not."""
        sb = self._sub_bins(b)
        denom = self._denoms(sb.w0, s, zeta)
        u = (2.0 * s) / denom
        rho = sb.dmax[:, None] * np.abs(u)
        fast = rho <= _RHO_BIN
        acc = -0.5 * sb.count[:, None] * self._logs(sb.w0, s, zeta)
        spread = sb.dmax > 0
        if np.any(fast & spread[:, None]):
            worst = float(np.max(np.where(fast & spread[:, None], rho, 0.0)))
            nts = 1 if worst <= 0 else int(min(max(math.ceil(math.log(tol / float(sb.count.max())) / math.log(worst)),
                                                   1), _KMAX))
            coef = sb.cen[spread, :nts] / (2.0 * self.kdiv[:nts])
            uu = np.where(fast[spread], u[spread], 0.0)
            poly = np.zeros_like(uu)
            for k in range(nts - 1, -1, -1):
                poly = (poly + coef[:, k, None]) * uu
            acc[spread] += poly
        for i in np.nonzero(~np.all(fast, axis=1))[0]:
            slow = ~fast[i]
            acc[i, slow] = self._direct_complex(self.w[sb.starts[i]:sb.ends[i]], s[slow],
                                                None if zeta is None else zeta[slow])
        return np.sum(acc, axis=0)

    def _direct_complex(self, we: FloatArray, s: ComplexArray, zeta: ComplexArray | None) -> ComplexArray:
        """-1/2 sum_j log(1 - 2 w_j s) over the weights we, one by one, in chunks of at
        most _CHUNK (weight, point) pairs, so that memory stays bounded whatever the
        number of weights and points."""
        out = np.zeros(s.size, dtype=complex)
        step = max(1, _CHUNK // max(1, s.size))
        for lo in range(0, we.size, step):
            out -= 0.5 * np.sum(self._logs(we[lo:lo + step], s, zeta), axis=0)
        return out

    def _tail_coef(self, part: Partition) -> FloatArray:
        """Coefficients p_k / (2 k) of the small-weight series 1/2 sum_k p_k (2 s)^k / k."""
        if part.tail is None:
            raise RuntimeError("gchisq: no small-weight series in this partition")
        return part.tail[:part.n_tail] / (2.0 * self.kdiv[:part.n_tail])

    def real(self, s: Any, zeta: Any = None, tol: float = _SERIES_TOL) -> FloatArray:
        """K and its first three derivatives at real points s (1-d array, all
        < 1/2; zeta = 1/2 - s may be given); returns an array of shape (4, N)."""
        s, zeta = self._points(s, zeta, float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            if self.d * s.size <= _DIRECT:
                out = _exact_real(s, zeta, self.w)
            else:
                out = self._real(s, zeta, tol)
            if self.pole:
                p = self.pole
                out[0] += -p * np.log(-s) + self.pole_c
                out[1] += -p / s
                out[2] += p / (s * s)
                out[3] += -2.0 * p / (s * s * s)
        return out

    def _real(self, s: FloatArray, zeta: FloatArray | None, tol: float) -> FloatArray:
        """K..K''' at real points: the bins through their centres, the bins summed
        weight by weight, the small-weight series."""
        part = self._parts(s, zeta, tol, True)
        we = self._members(part.exact)
        out = np.zeros((4, s.size))
        if part.series.size:
            terms = self._series_bins_real(part, s, zeta)
            keep = np.ones((part.series.size, s.size))
            for mb in part.mixed:
                keep[mb.row, mb.bad] = 0.0
            for r in range(4):
                t = terms[r]
                out[r] += np.sum(np.where(keep > 0, t, 0.0), axis=0) if part.mixed else np.sum(t, axis=0)
            for mb in part.mixed:
                zb = zeta[mb.bad] if zeta is not None else None
                out[:, mb.bad] += _exact_real(s[mb.bad], zb, self.w[self.starts[mb.bin]:self.ends[mb.bin]])
        if we is not None:
            out += _exact_real(s, zeta, we)
        if part.n_tail:
            S = _poly_derivs(self._tail_coef(part)[None, :], 2.0 * s[None, :])
            out[0] += S[0][0]
            out[1] += 2.0 * S[1][0]
            out[2] += 4.0 * S[2][0]
            out[3] += 8.0 * S[3][0]
        return out

    def _series_bins_real(self, part: Partition, s: FloatArray, zeta: FloatArray | None) -> list[FloatArray]:
        """Per series bin (rows) and point, the bin's terms of K, K', K'', K''':
        -(n/2) log(1 - 2 w0 s) and its derivatives plus those of its series (the
        chain rule through u = 2 s / (1 - 2 w0 s))."""
        idx, nts = part.series, part.n_terms
        w0 = self.w0[idx, None]
        n = self.count[idx, None]
        dn = part.denom[idx]
        a = 1.0 / dn
        aw = w0 * a
        lg = np.log1p(-2.0 * w0 * s[None, :])
        top = self.bin_top[idx]
        if zeta is not None and np.any(top):
            lg[top] = np.where(np.isnan(zeta)[None, :], lg[top], np.log(dn[top]))
        terms = [-0.5 * n * lg, n * aw, 2.0 * n * aw * aw, 8.0 * n * aw * aw * aw]
        sp = np.nonzero(self.dmax[idx] > 0)[0]  # pure bins have no series
        if nts > 0 and sp.size:
            a_, w0_ = a[sp], w0[sp]
            d1 = 2.0 * a_ * a_
            d2 = 8.0 * w0_ * a_ ** 3
            d3 = 48.0 * w0_ * w0_ * a_ ** 4
            S = _poly_derivs(self.cen[idx[sp], :nts] / (2.0 * self.kdiv[:nts]), part.u[idx[sp]])
            terms[0][sp] += S[0]
            terms[1][sp] += S[1] * d1
            terms[2][sp] += S[2] * d1 * d1 + S[1] * d2
            terms[3][sp] += S[3] * d1 ** 3 + 3.0 * S[2] * d1 * d2 + S[1] * d3
        return terms


def _tail_poly(coef: FloatArray, z: ComplexArray) -> ComplexArray:
    """sum_k coef[k-1] z^k by Horner's rule."""
    poly = np.zeros_like(z)
    for k in range(coef.size - 1, -1, -1):
        poly = (poly + coef[k]) * z
    return poly


def _groups(s: ComplexArray, span: float = 1e4, ratio: float = 256.0, min_size: int = 200
            ) -> list[Any]:
    """Index groups of the points s by |s| for large batches spanning more
    than `span` in |s| (the bins a point needs summed exactly depend on how far
    out it is; a batch is split into groups each spanning a factor <= ratio)."""
    if s.size < min_size:
        return [slice(None)]
    a = np.abs(s)
    fin = np.isfinite(a) & (a > 0)
    if not np.any(fin):
        return [slice(None)]
    lo, hi = float(a[fin].min()), float(a[fin].max())
    if hi <= span * lo:
        return [slice(None)]
    key = np.floor(np.log(np.where(fin, a, lo) / lo) / math.log(ratio))
    order = np.argsort(key, kind="stable")
    cuts = np.nonzero(np.diff(key[order]))[0] + 1
    return np.split(order, cuts)


def _finite_max(a: FloatArray) -> float:
    """Largest finite entry (0 if none): one non-finite point must not decide
    how every other point of a batch is evaluated."""
    f = a[np.isfinite(a)]
    return float(f.max()) if f.size else 0.0


def _zeta_factors(w: FloatArray, zeta: Any) -> Any:
    """(len(w), N) array of the factors 1 - 2 w s = (1 - w) + 2 w zeta of
    weights w > 1/2 (1 - w exact) at the points zeta = 1/2 - s; entries at
    NaN zeta (not given) are to be discarded by the caller."""
    return (1.0 - w)[:, None] + 2.0 * np.multiply.outer(w, np.where(np.isnan(zeta), 0.0, zeta))


def _exact_real(s: FloatArray, zeta: FloatArray | None, we: FloatArray) -> FloatArray:
    """K, K', K'', K''' of the weights we, summed one by one, at real s
    (factors of weights > 1/2 from zeta = 1/2 - s when given)."""
    out = np.zeros((4, s.size))
    step = max(1, _CHUNK // max(1, s.size))
    for lo in range(0, we.size, step):
        wc = we[lo:lo + step]
        z = 2.0 * np.multiply.outer(s, wc)
        den = 1.0 - z
        lg = np.log1p(-z)
        if zeta is not None:
            top = wc > 0.5
            if np.any(top):
                use = ~np.isnan(zeta)[:, None]
                dt = _zeta_factors(wc[top], zeta).T
                den[:, top] = np.where(use, dt, den[:, top])
                lg[:, top] = np.where(use, np.log(dt), lg[:, top])
        t = wc / den
        out[0] -= 0.5 * np.sum(lg, axis=1)
        out[1] += np.sum(t, axis=1)
        t2 = t * t
        out[2] += 2.0 * np.sum(t2, axis=1)
        out[3] += 8.0 * np.sum(t2 * t, axis=1)
    return out
