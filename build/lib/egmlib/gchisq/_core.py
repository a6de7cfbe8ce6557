r"""Private numerical core of :mod:`egmlib.gchisq`: contour-integral inversion.

For Q = sum_j w_j Z_j^2 (weights scaled so that the largest is 1) with cumulant
generating function K(s) = -1/2 sum_j log(1 - 2 w_j s),

    P(Q > x) = (1 / 2 pi i) * integral over Gamma of exp(K(s) - s x) / s ds,

Gamma crossing the real axis at c in (0, 1/2); with c < 0 the same integral is
-P(Q <= x). Gamma is the parabola s(y) = c + i y + gamma y^2, bent to the right
so that exp(-s x) decays like exp(-gamma x y^2). By conjugate symmetry

    P = e^{K(c) - c x} / pi * int_0^inf Re[ e^{E(y)} s'(y) / (i s(y)) ] dy,
    E(y) = K(s(y)) - K(c) - (s(y) - c) x,

and the integral is taken with the trapezoidal rule in y. For an integrand g
analytic in the strip |Im y| < a, the rule with step h has error
sum_{k != 0} G(2 pi k / h) (G the Fourier transform of g), at most
2 M(eta) / (exp(2 pi eta / h) - 1) per side, M(eta) the integral of |g| along
Im y = -+eta < a {cite}`trefethen2014`.

Geometry. The map y -> s(y) sends the horizontal lines Im y = -eta to confocal
parabolas with focus F = c + 1/(4 gamma): Re s = c_eta + gamma t^2,
Im s = kappa t (y = t - i eta, c_eta = c + eta - gamma eta^2,
kappa = 1 - 2 gamma eta). A branch point S = 1/(2 w) > F lies on the line
Im y = -1/(2 gamma) at Re y = +-t_S, t_S = sqrt((S - F) / gamma), for every
eta; along the line Im y = -eta the factor |1 - 2 w s|^(-1/2) of that weight
peaks at t = t_S and is there kappa^(-1/2) times its peak on the real y axis.
A bin of n (nearly) equal weights therefore makes a hump of height
~kappa^(-n/2) and width ~kappa / (gamma sqrt(2 n)) at t_S on every edge, which
the value of the integrand at the centre of the edge (Re y = 0) does not see.
This is what misled the earlier planner on weight vectors such as
1 x 1 + 500 x 0.05.

Planning (a priori), for several curvatures gamma (multiples of the osculating
value of the steepest-descent path, and 0):
- the integrand on the real y axis on a geometric probe grid gives its mass and
  the truncation point;
- every bin of at least two weights whose branch points lie beyond the focus is
  a potential hump; a cheap upper bound of the integrand at the hump (the bin's
  own factor at its distance from the contour, a bound of all other factors,
  and exp(-x Re s)) discards the negligible ones, and the others are evaluated
  at three points around t_S on the real axis and on every candidate lower
  edge; their mass enters M(eta), the truncation point and the rejection of
  contours that pass through large humps (cancellation);
- M(eta) of the smooth part is the real-axis mass times the growth of the
  integrand from the real axis to the edge at Re y = 0; the step h is the best
  over a few eta per side, and the contour with fewest nodes wins.

Checking (a posteriori). Halving the step cannot certify the result: near a
singularity of high order m at distance a from the real axis, G(omega) grows
like omega^(m-1) exp(-a omega) up to omega ~ (m - 1) / a, and in that regime
the rules with steps 2h, h and h/2 (or the midpoint rule, which has the same
aliasing terms with alternating signs) can agree closely while all of them are
wrong, because their errors are sums of G at multiples of the same frequency.
Every value is therefore computed on two contours of different curvature (the
best candidate, and the best one whose gamma differs by at least a factor 4):
their singularities sit at different distances and positions, their aliasing
errors are unrelated numbers, and agreement to 1e-12 cannot happen by
accident. The reported error estimate is the larger of their difference and
the a-priori, rounding and truncation estimates; if they disagree, both steps
are halved and, if needed, the contours are re-planned with flatter parabolas
and a wider safety margin, before the estimate is returned as it stands (and
the caller warns).

Representation near s = 1/2. In the far upper tail c approaches the branch
point 1/2 at a distance below the spacing of doubles there; the contour is
then carried as zeta = 1/2 - s as well (see :mod:`._cumulants`), and the
factored exponent is K(c) - x/2 + zeta_c x.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

_EPS = np.finfo(float).eps
#: Relative accuracy the quadrature is designed for (far below the 1e-10
#: promise, so that the a-posteriori check has room).
_DESIGN_TOL = 1e-17
#: Two contours must agree to this (relative, plus their own estimates) for a
#: value to be certified without further refinement; the check contour is
#: designed for _CHECK_TOL.
_AGREE = 1e-12
_CHECK_TOL = 1e-13
#: Largest number of nodes planned for one contour, and allowed after
#: refinement.
_MAX_NODES = 40000
_HARD_NODES = 1 << 19
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
_GAMMA_FRACS = (1.0, 0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0)
#: Representation switch: carry zeta = 1/2 - s when zeta_c < this.
_ZETA_FORM = 0.25


# ---------------------------------------------------------------------------
# Saddlepoint and the r* approximation
# ---------------------------------------------------------------------------

def _s_of_tau(tau):
    # s = (1 - exp(-tau)) / 2, accurate for small tau
    return -0.5 * np.expm1(-tau)


def _zeta_of_tau(tau):
    # zeta = 1/2 - s = exp(-tau) / 2, accurate for large tau
    return 0.5 * np.exp(-tau)


def _zeta_arg(zeta):
    """zeta where the zeta form is used (zeta < _ZETA_FORM), NaN elsewhere."""
    return np.where(zeta < _ZETA_FORM, zeta, np.nan)


def saddlepoint(cum, x, with_zeta=False):
    """Solve K'(s) = x for s < 1/2 (vectorised), Newton in tau = -log(1 - 2 s).

    Bracket: ln(x / mean) <= tau <= ln(x) for x >= mean, and
    -ln(1 + d / x) <= tau <= ln(x / mean) for x < mean. Returns s, or (s, zeta)
    with zeta = 1/2 - s = exp(-tau)/2 to full relative accuracy.
    """
    x = np.asarray(x, dtype=float)
    lx = np.log(x)
    lm = math.log(cum.mean)
    up = x >= cum.mean
    # K'(s) <= d_eff / (2 |s|) for s < 0 (d_eff counts a pole term twice)
    lo = np.where(up, lx - lm, -np.log1p(cum.d_eff / x))
    # (with a branch point at 0, K' -> inf as s -> 0-: the root is at tau < 0)
    hi = np.where(up, np.maximum(lx, lx - lm), lx - lm if math.isfinite(lm) else 0.0)
    tau = 0.5 * (lo + hi)
    for _ in range(200):
        s = _s_of_tau(tau)
        z = _zeta_of_tau(tau)
        k = cum.real(s, _zeta_arg(z))
        f = np.log(k[1]) - lx
        # d ln K' / d tau = K'' / K' * (1 - 2 s) / 2 = K'' / K' * zeta
        df = k[2] / k[1] * z
        lo = np.where(f < 0, tau, lo)
        hi = np.where(f > 0, tau, hi)
        new = tau - f / df
        bad = ~((new > lo) & (new < hi)) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (lo + hi), new)
        done = np.abs(new - tau) <= 1e-11 * np.maximum(1.0, np.abs(tau))
        tau = new
        if np.all(done | (hi - lo <= 1e-12 * np.maximum(1.0, np.abs(tau)))):
            break
    if with_zeta:
        return _s_of_tau(tau), _zeta_of_tau(tau)
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


def _rstar1(s, k0, k1, k2):
    """Scalar r* at a saddlepoint s (K, K', K'' given)."""
    r = math.copysign(math.sqrt(max(2.0 * (s * k1 - k0), 0.0)), s)
    if abs(r) < 1e-6:
        return r, r
    v = s * math.sqrt(k2)
    q = v / r
    corr = math.log(q) / r if q > 0 else 0.0
    return r + (corr if math.isfinite(corr) else 0.0), r


def rstar_start(cum, z):
    """Saddlepoint start for the quantile: s with r*(s) = z; returns
    (s, zeta = 1/2 - s, K and its derivatives at s); x = K'(s) is the start.

    Newton in tau = -log(1 - 2 s) with the derivative of r*, safeguarded by a
    bracket (r* increases with s); started from the normal approximation
    s = z / sqrt(K''(0)). K comes from one vectorised call per iteration, the
    rest is scalar arithmetic (the batches are a few points).
    """
    z = [float(t) for t in np.ravel(z)]
    m = len(z)
    sd = math.sqrt(cum.var)
    tau = [-math.log1p(-2.0 * min(zi / sd, 0.45)) if zi / sd < 0.45 else 2.3 for zi in z]
    lo = [0.0 if zi > 0 else -math.inf for zi in z]
    hi = [math.inf if zi > 0 else 0.0 for zi in z]
    for _ in range(100):
        t = np.array(tau)
        s, zeta = _s_of_tau(t), _zeta_of_tau(t)
        k = cum.real(s, _zeta_arg(zeta))
        done = True
        for i in range(m):
            si, k0, k1, k2, k3 = float(s[i]), k[0, i], k[1, i], k[2, i], k[3, i]
            rs, rr = _rstar1(si, k0, k1, k2)
            f = rs - z[i]
            if f < 0:
                lo[i] = tau[i]
            elif f > 0:
                hi[i] = tau[i]
            # a start only: Halley finishes, and the contours planned here serve
            # every x within 5 % of it
            if abs(f) <= 1e-4 * max(1.0, abs(z[i])):
                continue
            done = False
            sq = math.sqrt(k2)
            drds = si * k2 / rr if abs(rr) > 1e-8 else sq
            dstar = drds
            if abs(rr) > 1e-3 and si != 0:
                q = si * sq / rr
                if q > 0:
                    # dr*/ds = dr/ds (1 - (1 + log(v / r)) / r^2) + (1/s + K3/(2 K2)) / r
                    d = drds * (1.0 - (1.0 + math.log(q)) / (rr * rr)) \
                        + (1.0 / si + 0.5 * k3 / k2) / rr
                    if math.isfinite(d) and d > 0:
                        dstar = d
            new = tau[i] - f / (dstar * 0.5 * math.exp(-tau[i]))
            if not (lo[i] < new < hi[i] and math.isfinite(new)):
                if math.isfinite(lo[i]) and math.isfinite(hi[i]):
                    new = 0.5 * (lo[i] + hi[i])
                else:
                    new = tau[i] + 2.0 if math.isfinite(lo[i]) else tau[i] - 2.0
            tau[i] = new
        if done:
            return s, zeta, k
    t = np.array(tau)
    s, zeta = _s_of_tau(t), _zeta_of_tau(t)
    return s, zeta, cum.real(s, _zeta_arg(zeta))


# ---------------------------------------------------------------------------
# Contours
# ---------------------------------------------------------------------------

def _strip_distance_v(delta, gamma):
    """Distance from the real y axis of the y with s(y) = c + delta (delta real)."""
    delta = np.asarray(delta, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    q = 4.0 * gamma * delta
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = 2.0 * np.abs(delta) / (1.0 + np.sqrt(np.maximum(1.0 - q, 0.0)))
        capped = np.where(q >= 1.0, 0.5 / gamma, inner)
    return np.where(gamma == 0.0, np.abs(delta), capped)


class Contour:
    """One parabola with its trapezoidal nodes and K at the nodes.

    K at the nodes does not depend on x, so the same contour serves every x
    near the one it was planned for (the Halley steps of a quantile).
    """

    __slots__ = ("upper", "c", "zc", "gamma", "h", "n", "kc", "model", "y", "s", "dK",
                 "dsi", "wts", "x_plan", "pred", "off", "dsis", "dss", "adk", "aoff")

    def copy_plan(self):
        new = Contour()
        for k in ("upper", "c", "zc", "gamma", "h", "n", "kc", "model", "x_plan"):
            setattr(new, k, getattr(self, k))
        return new

    def phic(self, x):
        """The factored exponent K(c) - c x (K(c) - x/2 + zeta_c x near 1/2)."""
        if math.isnan(self.zc):
            return self.kc - self.c * x
        return self.kc - 0.5 * x + self.zc * x

    def tail(self, x):
        """(log T, f/T, f'/T, err, ok) at scaled x: T the tail on this contour's
        side, err the a-priori + rounding + truncation estimate, ok False if the
        contour's own checks fail (non-finite values, a coarse rule far off the
        model, a non-negligible last node)."""
        with np.errstate(over="ignore", invalid="ignore"):
            ee = np.exp(self.dK - self.off * x)
            t_re = (ee * self.dsis).real  # Re[g / s]
            wts = self.wts
            tot = float(t_re @ wts)
            dens = float((ee * self.dsi).real @ wts)
            ddens = -float((ee * self.dss).real @ wts)
        if not self.upper:
            tot = -tot
        if not (tot > 0 and math.isfinite(tot) and math.isfinite(dens) and math.isfinite(ddens)):
            return math.nan, math.nan, math.nan, math.inf, False
        coarse = 2.0 * float(t_re[::2] @ wts[::2])
        if not self.upper:
            coarse = -coarse
        est = abs(tot - coarse) / tot
        # truncation: geometric bound on the terms beyond the last node
        g1 = abs(ee[-1] * self.dsis[-1])
        g2 = abs(ee[-2] * self.dsis[-2])
        q = g1 / g2 if g2 > 0 else 0.0
        tr = g1 * self.h * (q / (1.0 - q) if q < 0.9 else 10.0 + self.y[-1] / self.h) / tot
        # rounding: each term carries the absolute error of its exponent
        # (near 1/2 the exponent is K(c) - x/2 + zeta_c x with x/2 exact)
        lin = abs(self.c * x) if math.isnan(self.zc) else abs(self.zc * x)
        at = np.abs(t_re) * wts
        rnd = (float(at @ self.adk) + x * float(at @ self.aoff)
               + (10.0 + abs(self.kc) + lin) * float(at.sum())) / tot * _EPS
        pred, pred2 = self.pred
        # the coarse rule (step 2h) is a sanity check of the model only: its
        # agreement proves nothing (see the module docstring)
        ok = est <= max(100.0 * pred2, 1e-11) and tr <= 1e-15 and math.isfinite(pred)
        err = rnd + pred + _DESIGN_TOL + tr
        logt = self.phic(x) + math.log(tot / math.pi)
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


def _choose_c(cum, s_hat, z_hat, upper, kh=None):
    """Crossing points (vectorised): the saddlepoint, unless it is within half a
    standard deviation (in s) of the pole at 0 or on the wrong side of it.
    Returns c, zeta_c (NaN where the s form is used) and K..K''' at c."""
    if kh is None:
        kh = cum.real(s_hat, _zeta_arg(z_hat))
    sd = 1.0 / np.sqrt(kh[2])
    good = ((s_hat > 0) == upper) & (np.abs(s_hat) >= 0.5 * sd) & (s_hat != 0)
    if np.all(good):
        return s_hat, _zeta_arg(z_hat), kh, kh
    k0 = cum.real(np.array([0.0]))[:, 0]
    cm = np.where(upper, 0.5, -0.5) / math.sqrt(k0[2])
    c = np.where(good, s_hat, cm)
    z = np.where(good, z_hat, 0.5 - cm)
    zc = _zeta_arg(z)
    kc = np.where(good[None, :], kh, cum.real(c, zc))
    return c, zc, kc, kh


def _edge_logmod(cum, x, cs, zc, kc0, gam, eta, t):
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


def _kplus(cum, s_a, s_b, tau, n_own):
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


def _hump_analysis(cum, x, cs, zc, zc_eff, kc0, gam, lsize, etas):
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

    One row per contour candidate: x, cs, zc, zc_eff, kc0, lsize, gam: (H,);
    etas: (H, k), the half-widths of the lower edges to examine (the real axis
    is added as eta = 0). Returns (log hump mass (H, 1 + k), truncation point
    needed (H,), largest real-axis hump log-value (H,)); masses are for the
    half line y > 0.
    """
    H = gam.size
    etas = np.concatenate([np.zeros((H, 1)), etas], axis=1)  # (H, 1+k)
    K1 = etas.shape[1]
    lmass = np.full((H, K1), -np.inf)
    ymin = np.zeros(H)
    lpeak = np.full(H, -np.inf)
    if H == 0 or not np.any(cum.count >= 3):
        return lmass, ymin, lpeak
    # every bin, as seen from every edge: closest approach r and the range of
    # its factors' peaks sigma* in Re s
    nb = cum.count
    s_lo = 0.5 / cum.wtop
    s_hi = 0.5 / cum.wbot
    g3 = gam[:, None, None]
    kap = 1.0 - 2.0 * g3 * etas[:, :, None]  # (H, K1, 1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv4g = np.where(g3 > 0, 0.25 / g3, np.inf)
        zc3 = zc_eff[:, None, None]
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
        # a bin that cannot supply a quarter of the slope by itself is not
        # followed (its neighbours may be; their slopes all enter G below)
        cand = humpy & (nb >= 3) & (maxslope > 0.25 * x[:, None, None])
    hh, ee, bb = np.nonzero(cand)
    if hh.size == 0:
        return lmass, ymin, lpeak
    # Total slope available at sigma (upper bound, over all bins): a bin with
    # its peaks at sigma* >= sst_lo contributes at most n min(1/(4 r),
    # 1/(2 (sst_lo - sigma))) in front of them, n / (4 r) among them, and a
    # negative amount (0 here) once sigma is past them by more than 3 r. A
    # hump needs this slope to reach x. Trial positions sigma = sst - v.
    vt = np.concatenate([[0.0], 0.5 * 2.0 ** np.arange(0, 12, 1.5)])  # in units of r
    rb = r[hh, ee, bb]
    sig_t = sst_lo[hh, ee, bb][:, None] - rb[:, None] * vt[None, :]  # (C, V)
    # strong bins (max slope >= x / 100 on some examined edge) enter one by
    # one, the others with their maximal slopes summed
    strong = np.nonzero(np.any(maxslope >= 0.01 * x[:, None, None], axis=(0, 1)))[0]
    weak = np.sum(maxslope, axis=2) - np.sum(maxslope[:, :, strong], axis=2)  # (H, K1)
    rr = r[hh, ee][:, None, strong]  # (C, 1, Bs)
    lo_b = sst_lo[hh, ee][:, None, strong]
    hi_b = sst_hi[hh, ee][:, None, strong]
    ns = nb[strong]
    st = sig_t[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        front = ns * np.minimum(1.0 / (4.0 * rr), 1.0 / (2.0 * np.maximum(lo_b - st, 0.0)))
        slope = np.where(st < lo_b, front, np.where(st <= hi_b + 3.0 * rr, ns / (4.0 * rr), 0.0))
        slope = np.where(np.isfinite(rr), slope, 0.0)
    G = np.sum(slope, axis=2) + weak[hh, ee][:, None]  # (C, V)
    able = G >= x[hh][:, None]
    keep = np.any(able, axis=1)
    # the hump (a local maximum) lies beyond the first trial position where the
    # slope can be positive: sigma >= sigma_low
    first = np.argmax(able[:, ::-1], axis=1)  # from the largest v down
    kfirst = vt.size - 1 - first
    slow = sig_t[np.arange(hh.size), np.minimum(kfirst + 1, vt.size - 1)]
    last = np.argmax(able, axis=1)  # smallest v with slope >= x: Newton start
    start_sig = sig_t[np.arange(hh.size), last]
    # a rigorous bound of the hump's height discards the hopeless ones: there
    # exp(-x sigma) <= exp(-x sigma_low), the bin's own factors are at most
    # (S_hi / r)^(n/2), and all others are bounded as in _kplus
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gs = gam[hh]
        es = etas[hh, ee]
        ks = 1.0 - 2.0 * gs * es
        ce = cs[hh] + es - gs * es * es
        sstar = sst_hi[hh, ee, bb]
        tau_min = ks * np.sqrt(np.maximum(slow - ce, 0.0) / gs)
        own = 0.5 * nb[bb] * np.log(s_hi[bb] / rb)
        kp = _kplus(cum, slow, sstar, tau_min, nb[bb])
        jac = 0.5 * np.log(ks * ks + 4.0 * gs * (sstar - ce)) - np.log(np.maximum(slow, 1e-300))
        ub = own + kp - kc0[hh] - x[hh] * (slow - cs[hh]) + jac \
            + np.log(np.sqrt(np.maximum(sstar - ce, 0.0) / gs) + 1.0)
        keep &= ~((slow > ce) & (ub < lsize[hh] + math.log(_DESIGN_TOL) - 30.0))
        ub = np.where(slow > ce, ub, np.inf)
    # neighbouring bins of one spread cluster lead to the same hump: per edge,
    # the three bins with the largest bounds are followed
    hh, ee, bb, ub, start_sig = hh[keep], ee[keep], bb[keep], ub[keep], start_sig[keep]
    if hh.size > 3:
        order = np.lexsort((-ub, ee, hh))
        hh, ee, bb, start_sig = hh[order], ee[order], bb[order], start_sig[order]
        grp = hh * K1 + ee
        first = np.concatenate([[0], np.nonzero(np.diff(grp))[0] + 1])
        rank = np.arange(grp.size) - np.repeat(first, np.diff(np.concatenate([first, [grp.size]])))
        sel = rank < 3
        hh, ee, bb, start_sig = hh[sel], ee[sel], bb[sel], start_sig[sel]
    if hh.size == 0:
        return lmass, ymin, lpeak
    gs = gam[hh]
    es = etas[hh, ee]
    ks = 1.0 - 2.0 * gs * es
    nbs = nb[bb]
    xs = x[hh]
    ce = cs[hh] + es - gs * es * es
    t = np.sqrt(np.maximum(start_sig - ce, 0.0) / gs)
    dt = np.maximum(0.25 * ks / (gs * np.sqrt(2.0 * nbs)), 1e-12 * np.maximum(t, 1.0))
    args = (cs[hh], zc[hh], kc0[hh], gs, es)
    stencil = np.array([-1.0, 0.0, 1.0])
    live = np.ones(hh.size, dtype=bool)
    L = np.full(hh.size, -np.inf)
    L2 = np.zeros(hh.size)
    for _ in range(3):
        k = np.nonzero(live)[0]
        tt = np.maximum(t[k, None] + dt[k, None] * stencil, 0.0)
        lv = _edge_logmod(cum, xs[k, None], *(a[k, None] for a in args), tt)
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
                < lsize[hh[k]] + math.log(_DESIGN_TOL) - 25.0
        live[k] &= ~tiny
        if not np.any(live):
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.where(L2 < 0, np.sqrt(2.0 * math.pi / np.abs(L2)), np.maximum(t, 20.0 * dt))
        width = np.where(np.isfinite(width), width, np.maximum(t, 20.0 * dt))
    lmh = L + np.log(width)
    ok = np.isfinite(lmh)
    np.logaddexp.at(lmass, (hh[ok], ee[ok]), lmh[ok])
    real = ok & (ee == 0)
    np.maximum.at(lpeak, hh[real], L[real])
    sig = real & (lmh > lsize[hh] + math.log(_DESIGN_TOL) - 10.0)
    np.maximum.at(ymin, hh[sig], (t + 6.0 * width)[sig])
    return lmass, ymin, lpeak


#: Lower edges examined for humps per candidate (positions in the sorted list
#: of candidate half-widths); log M in between is interpolated linearly in eta,
#: an overestimate because log M(eta) is convex.
_HUMP_ETAS = (2, 5, 8, 11)


def plan_contours(cum, x, s_hat, z_hat, upper, fracs=_GAMMA_FRACS, margin=0.0, k_hat=None):
    """Plan a primary and a check contour per scaled x (arrays); the nodes of
    both are evaluated in one K call. Returns a list of (primary, check).

    For each x and each candidate gamma (multiples of the osculating value
    K3(c) / (6 K2(c)) of the steepest-descent path, K2, K3 the 2nd and 3rd
    derivatives of K):
    - the integrand along the real y axis, on a geometric probe grid, gives the
      truncation point Y and the mass of the integrand (candidates whose
      integrand grows far above its value at y = 0 are dropped);
    - humps of clustered weights (module docstring) add to the mass, the
      truncation point and the lower edge's M(eta);
    - the strip edges Im y = +-eta cross the real s axis at s = c -+ eta - gamma
      eta^2, where the integrand is evaluated with real arithmetic; its value
      there over its value at c, times the mass, estimates the smooth part of
      M(eta). Each side's step is the best over a few eta below the distance
      to the pole / branch point; h is the smaller of the two.
    The candidate with the fewest nodes Y / h is the primary contour; the best
    candidate whose gamma differs from it by a factor >= 4 (or 0 against > 0)
    is the check contour. ``margin`` (nats) is added to every log M (used when
    a first plan failed its checks).
    """
    x = np.asarray(x, dtype=float)
    upper = np.asarray(upper, dtype=bool)
    m = x.size
    cs, zc, kc, kh = _choose_c(cum, np.asarray(s_hat, float), np.asarray(z_hat, float), upper,
                               k_hat)
    zc_eff = np.where(np.isnan(zc), 0.5 - cs, zc)
    rs = rstar(s_hat, x, kh)
    sig = 1.0 / np.sqrt(kc[2])
    gosc = kc[3] / (6.0 * kc[2])
    fr = np.array(fracs)
    nf = fr.size
    gam = gosc[:, None] * fr[None, :]  # (m, nf)
    if cum.pole:
        # a branch point of high order at s = 0 stays on the imaginary y axis
        # (where the edge-centre model sees it) if the focus c + 1/(4 gamma)
        # is not left of it
        gam = np.minimum(gam, 0.25 / np.abs(cs)[:, None])
    ys = _PROBE[None, :] * sig[:, None]  # (m, P)
    P = ys.shape[1]
    phic = np.where(np.isnan(zc), kc[0] - cs * x, kc[0] - 0.5 * x + zc_eff * x)
    lt0 = np.where(upper, special.log_ndtr(-rs), special.log_ndtr(rs))
    lt0 = np.minimum(lt0, math.log(0.75))
    # log of the normalised (half-line) integral: from r* where the factored
    # exponent is moderate, else (far tails, where log T and phic are huge and
    # nearly equal) the Gaussian saddlepoint value sigma sqrt(pi/2) / |c|
    with np.errstate(divide="ignore"):
        lgauss = np.log(sig * math.sqrt(0.5 * math.pi) / np.abs(cs))
    lsize = np.where(np.abs(phic) < 1e3, math.log(math.pi) + (lt0 - phic), lgauss)
    # real-line probes, all x and candidates in one (rough) K evaluation
    dsp = 1j * ys[:, None, :] + gam[:, :, None] * ys[:, None, :] ** 2  # s - c
    sp = cs[:, None, None] + dsp
    kv = cum.complex(sp, zc[:, None, None] - dsp, tol=_PROBE_TOL)
    e = (kv.real - kc[0][:, None, None]) - (dsp * x[:, None, None]).real
    with np.errstate(over="ignore", invalid="ignore"):
        mag = np.exp(e) * np.abs((1j + 2.0 * gam[:, :, None] * ys[:, None, :]) / sp)
    fin = np.all(np.isfinite(mag), axis=2) & (np.max(mag, axis=2) <= _MAX_GROWTH * mag[:, :, 0])
    mag = np.where(np.isfinite(mag), mag, 0.0)
    dy = np.diff(ys, axis=1)[:, None, :]
    mass = np.sum((mag[:, :, 1:] + mag[:, :, :-1]) * dy, axis=2)  # both halves
    # strip edges: real points s = c - sgn * eta - gamma eta^2, sgn = +1 above
    c3 = cs[:, None]
    a_br = _strip_distance_v(zc_eff[:, None] + 0.0 * gam, gam)
    a_pole = _strip_distance_v(-c3 + 0.0 * gam, gam)
    a_up = np.where(c3 > 0, a_pole, np.inf)
    a_dn = np.where(c3 > 0, a_br, np.minimum(a_pole, a_br))
    frs = np.array(_ETA_FRACS)
    sgs = np.array(_ETA_SIGS)
    sig3 = sig[:, None, None]

    def etas(a):
        a3 = a[:, :, None]
        fin_a = np.isfinite(a3)
        a0 = np.where(fin_a, a3, 0.0)
        by_sig = np.where(fin_a, np.minimum(sig3 * sgs, 0.9 * a0), sig3 * sgs)
        by_a = np.where(fin_a, a0 * frs, sig3 * sgs[-1])
        return np.concatenate([by_a, by_sig], axis=2)

    eta_dn = etas(a_dn)
    eta = np.stack([etas(a_up), eta_dn], axis=2)  # (m, nf, 2, E)
    E = eta.shape[3]
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
        lgrowth = (ke - kc[0][:, None, None, None]) - ds_edge * x[:, None, None, None] \
            + np.log(np.abs(cs)[:, None, None, None] / np.abs(s_edge))
        lgrowth = np.maximum(lgrowth, 0.0)
    # truncation point from the probes: first probe after the last one that is
    # not negligible
    tmag = mag * np.maximum(ys, sig[:, None])[:, None, :]
    with np.errstate(divide="ignore"):
        bigm = ~(np.log(tmag) < math.log(0.1 * _DESIGN_TOL) + lsize[:, None, None] - margin)
    last = np.where(bigm.any(axis=2), P - 1 - np.argmax(bigm[:, :, ::-1], axis=2), 0)
    ymax0 = np.take_along_axis(ys, np.minimum(last + 1, P - 1), axis=1)
    valid0 = (last + 1 < P) & fin
    # humps, filled in lazily for the candidates that can win
    h_lmass = np.full((m, nf), -np.inf)
    h_ymin = np.zeros((m, nf))
    h_ledge = np.full((m, nf, E), -np.inf)
    done = gam == 0.0  # the vertical line has no humps (|g| decreases along it)
    order_dn = np.argsort(eta_dn, axis=2)
    sub = np.take_along_axis(order_dn, np.array(_HUMP_ETAS)[None, None, :], axis=2)

    def solve(tols=(_DESIGN_TOL,)):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            mass_t = np.where(valid0, mass + 2.0 * np.exp(np.minimum(h_lmass, 700.0)), np.inf)
            lmm = np.log(mass_t)[:, :, None, None] + lgrowth  # log M(eta)
            lmm[:, :, 1, :] = np.logaddexp(lmm[:, :, 1, :], h_ledge + math.log(2.0))
            lrel = lmm - lsize[:, None, None, None] + margin
        ymax = np.maximum(ymax0, h_ymin)
        out = []
        for tol in tols:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                lratio = math.log(2.0 / tol) + lrel
                hh = 2.0 * math.pi * eta / np.maximum(lratio, math.log(2.0))
            hh = np.where(np.isfinite(hh) & ok_edge, hh, 0.0)
            kbest = np.argmax(hh, axis=3)[..., None]
            h_side = np.take_along_axis(hh, kbest, axis=3)[..., 0]  # (m, nf, 2)
            eta_b = np.take_along_axis(eta, kbest, axis=3)[..., 0]
            m_b = np.take_along_axis(lrel, kbest, axis=3)[..., 0]  # log, relative
            h = np.min(h_side, axis=2)
            valid = valid0 & (h > 0) & np.isfinite(mass_t)
            with np.errstate(divide="ignore", invalid="ignore"):
                n = np.where(valid, np.ceil(ymax / h) + 2, np.inf)
            out += [n, h, eta_b, m_b]
        return out

    def choose(n, nb=None):
        """(primary, check) candidate indices per x (the check ranked by nb)."""
        nb = n if nb is None else nb
        out = []
        for i in range(m):
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

    n, h, eta_b, m_b = solve()
    for _ in range(nf):
        picks = choose(n)
        todo = [(i, j) for i, pr in enumerate(picks) for j in pr
                if j is not None and not done[i, j] and np.isfinite(n[i, j])]
        if not todo:
            break
        ti = np.array([t[0] for t in todo])
        tj = np.array([t[1] for t in todo])
        done[ti, tj] = True
        es = np.take_along_axis(eta_dn[ti, tj], sub[ti, tj], axis=1)  # (H, k)
        lm, ym, lp = _hump_analysis(cum, x[ti], cs[ti], zc[ti], zc_eff[ti], kc[0][ti],
                                    gam[ti, tj], lsize[ti], es)
        floor = lsize[ti][:, None] - 1000.0
        lm = np.maximum(lm, floor)
        # a hump far above the integrand at y = 0: cancellation, rejected
        bad = lp > math.log(_MAX_GROWTH) + np.log(np.maximum(mag[ti, tj, 0], 1e-300))
        valid0[ti[bad], tj[bad]] = False
        h_lmass[ti, tj] = lm[:, 0]
        h_ymin[ti, tj] = ym
        for k in np.nonzero(np.any(lm > floor, axis=1))[0]:  # where humps were found
            i, j = ti[k], tj[k]
            xp = np.concatenate([[0.0], es[k]])
            srt = np.argsort(xp)
            h_ledge[i, j] = np.interp(eta_dn[i, j], xp[srt], lm[k][srt])
    # the check contour only has to confirm the primary one to ~1e-12
    n, h, eta_b, m_b, n_c, h_c, eta_c, m_c = solve((_DESIGN_TOL, _CHECK_TOL))
    picks = choose(n, n_c)
    pairs = []
    for i in range(m):
        ja, jb = picks[i]
        cts = []
        for j in (ja, jb):
            if j is None:
                cts.append(None)
                continue
            ct = Contour()
            ct.upper, ct.c, ct.kc, ct.x_plan = bool(upper[i]), float(cs[i]), float(kc[0, i]), float(x[i])
            ct.zc = float(zc[i])
            ct.gamma = float(gam[i, j])
            if j == jb:
                nn, hs, etb, mb = n_c, h_c, eta_c, m_c
            else:
                nn, hs, etb, mb = n, h, eta_b, m_b
            if np.isfinite(nn[i, j]):
                ct.h, ct.n = float(hs[i, j]), int(min(nn[i, j], _MAX_NODES))
            else:
                # nothing valid: the vertical line with a step from the pole /
                # branch distance and a long truncation; the checks will tell
                a_min = float(min(a_dn[i, j], a_up[i, j]))
                ct.gamma = 0.0
                ct.h = 2.0 * math.pi * 0.5 * a_min / 60.0 if a_min > 0 else float(sig[i]) / 8
                ct.n = _MAX_NODES
            ct.model = [(float(etb[i, j, t]), float(mb[i, j, t])) for t in (0, 1)]
            cts.append(ct)
        pairs.append(tuple(cts))
    _fill_nodes(cum, [ct for pr in pairs for ct in pr if ct is not None])
    return pairs


def _fill_nodes(cum, contours):
    if not contours:
        return
    ys = [ct.h * np.arange(ct.n) for ct in contours]
    offs = [1j * y + ct.gamma * y * y for ct, y in zip(contours, ys, strict=True)]
    ss = [ct.c + o for ct, o in zip(contours, offs, strict=True)]
    zs = [(ct.zc - o) if not math.isnan(ct.zc) else np.full(o.size, np.nan + 0j)
          for ct, o in zip(contours, offs, strict=True)]
    kv = cum.complex(np.concatenate(ss), np.concatenate(zs))
    pos = 0
    for ct, y, s, o in zip(contours, ys, ss, offs, strict=True):
        ct.y, ct.s, ct.off = y, s, o
        ct.dK = kv[pos:pos + ct.n] - ct.kc
        pos += ct.n
        ct.dsi = (1j + 2.0 * ct.gamma * y) / 1j
        ct.dsis = ct.dsi / s
        ct.dss = ct.dsi * s
        ct.adk = np.abs(ct.dK)
        ct.aoff = np.abs(o)
        wts = np.full(ct.n, ct.h)
        wts[0] = 0.5 * ct.h
        ct.wts = wts
        ct.pred = (_predicted_error(ct.model, ct.h), _predicted_error(ct.model, 2.0 * ct.h))


def _refine(cum, ct):
    """Same contour, half the step, same truncation point."""
    new = ct.copy_plan()
    new.h, new.n = 0.5 * ct.h, 2 * ct.n
    _fill_nodes(cum, [new])
    return new


# ---------------------------------------------------------------------------
# Certified evaluation: two contours
# ---------------------------------------------------------------------------

def _combine(ra, rb):
    """(error estimate of the primary value ra given the check value rb,
    whether the two agree): the estimate is the larger of ra's own one
    (a priori, rounding, truncation) and the relative difference of the two;
    they agree if that difference is within _AGREE plus twice their own
    estimates (rounding shared by both, e.g. of K(c) - c x, is in ra's own
    estimate and cannot be reduced by refining). A contour without partner
    counts as agreeing only if its own checks pass."""
    if rb is None:
        return (ra[3], True) if ra[4] else (max(ra[3], 1.0), False)
    if not (math.isfinite(ra[0]) and math.isfinite(rb[0])):
        return math.inf, False
    diff = abs(math.expm1(ra[0] - rb[0]))
    return max(ra[3], diff), diff <= _AGREE + 2.0 * (ra[3] + rb[3])


def _replan(cum, x, upper, fracs=_GAMMA_FRACS, margin=0.0):
    s, z = saddlepoint(cum, np.array([x]), with_zeta=True)
    return plan_contours(cum, np.array([x]), s, z, np.array([upper]), fracs=fracs,
                         margin=margin)[0]


#: Repairs tried, in order, when the two contours disagree.
_REPAIRS = (("refine",), ("refine",), ("plan", (0.25, 1.0 / 16.0, 1.0 / 64.0, 0.0), 10.0),
            ("refine",), ("plan", (1.0 / 16.0, 1.0 / 64.0, 0.0), 25.0), ("refine",))


def certified(cum, pair, x, ra=None):
    """Tail at x on the contour pair; refine or re-plan until the two contours
    agree (see :func:`_combine`; or the repairs run out).

    Returns (pair, (log T, f/T, f'/T, err), repaired): err is the larger of the
    primary contour's own estimate and the relative difference of the two;
    pair is the one that produced the value (the best one found).
    """
    a, b = pair
    if ra is None:
        ra = a.tail(x)
    rb = b.tail(x) if b is not None else None
    err, agree = _combine(ra, rb)
    if agree:
        return pair, (ra[0], ra[1], ra[2], err), False
    best = (err, pair, ra)
    steps = (("plan", _GAMMA_FRACS, 0.0),) if abs(x - a.x_plan) > 1e-3 * x else ()
    for step in steps + _REPAIRS:
        if step[0] == "refine":
            if a.n * 2 > _HARD_NODES or (b is not None and b.n * 2 > _HARD_NODES):
                continue
            a = _refine(cum, a)
            b = _refine(cum, b) if b is not None else None
        else:
            a, b = _replan(cum, x, a.upper, step[1], step[2])
        ra = a.tail(x)
        rb = b.tail(x) if b is not None else None
        err, agree = _combine(ra, rb)
        if agree:
            best = (err, (a, b), ra)
            break
        if err < best[0]:
            best = (err, (a, b), ra)
    err, pair, ra = best
    return pair, (ra[0], ra[1], ra[2], err), True


# ---------------------------------------------------------------------------
# Batched tails and quantiles
# ---------------------------------------------------------------------------

def tails(cum, x):
    """Tails at scaled x > 0 (1-d array): rows (upper?, log T, f/T, f'/T, err),
    T the smaller-side tail (upper if x >= mean)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _tails(cum, x)


def _tails(cum, x):
    x = np.asarray(x, dtype=float)
    sh, zh = saddlepoint(cum, x, with_zeta=True)
    upper = x >= cum.mean
    pairs = plan_contours(cum, x, sh, zh, upper)
    out = np.empty((5, x.size))
    for i, pair in enumerate(pairs):
        _, r, _ = certified(cum, pair, float(x[i]))
        out[:, i] = (upper[i], r[0], r[1], r[2], r[3])
    return out


def _g_of(r, logt, upper):
    """g = log T - logt and its first two derivatives in x."""
    lt, fo, fpo = r[0], r[1], r[2]
    g = lt - logt
    if upper:
        return g, -fo, -fpo - fo * fo
    return g, fo, fpo - fo * fo


def quantile(cum, logt, upper, maxiter=40):
    """See :func:`_quantile` (floating-point warnings are handled there)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return _quantile(cum, logt, upper, maxiter)


def _quantile(cum, logt, upper, maxiter=40):
    """Scaled x with log P(Q > x) = logt (upper) or log P(Q <= x) = logt.

    Halley's method on g(x) = log T(x) - logt, from the r* saddlepoint start,
    on the primary contours planned once at the start. At convergence the value
    is certified on the check contour (:func:`certified`); if that repaired the
    contours, the bracket built from the earlier (untrusted) values is
    discarded and the iteration continues on the repaired pair. Where Halley
    does not converge the caller finishes with Brent's method on certified
    values (:meth:`egmlib.gchisq.WeightedChiSquare._bracketed`).
    Returns (x, estimated relative error of x, not-converged mask).
    """
    logt = np.asarray(logt, dtype=float)
    t = np.exp(logt)
    z = -special.ndtri(t) if upper else special.ndtri(t)
    s0, z0, k0 = rstar_start(cum, z)  # s0 is the saddlepoint of x = K'(s0)
    x = k0[1].copy()
    bad = ~(x > 0)
    if np.any(bad):
        x = np.where(bad, cum.mean * 1e-3, x)
        s0[bad], z0[bad] = saddlepoint(cum, x[bad], with_zeta=True)
        k0 = None
    m = x.size
    pairs = plan_contours(cum, x, s0, z0, np.full(m, upper), k_hat=k0)
    xerr = np.full(m, np.inf)
    failed = np.zeros(m, dtype=bool)
    for i in range(m):
        xi, e, ok = _halley(cum, pairs[i], float(x[i]), float(logt[i]), upper, maxiter)
        x[i], xerr[i], failed[i] = xi, e, not ok
    return x, xerr, failed


def _halley(cum, pair, xi, logt, upper, maxiter):
    """Halley iteration for one quantile; returns (x, relative error, converged)."""
    lo, hi = 0.0, math.inf
    trusted = False
    repairs = 0
    for _ in range(maxiter):
        if abs(xi - pair[0].x_plan) > 0.05 * xi:
            pair = _replan(cum, xi, upper)
            trusted = False
        r = pair[0].tail(xi)
        if not (math.isfinite(r[0]) and (r[4] or trusted)):
            pair, rc, _ = certified(cum, pair, xi)
            r = (rc[0], rc[1], rc[2], rc[3], True)
            trusted = rc[3] < 1e-11
        g, g1, g2 = _g_of(r, logt, upper)
        if not (math.isfinite(g) and math.isfinite(g1) and g1 != 0):
            return xi, math.inf, False
        tol_g = max(4.0 * _EPS * max(1.0, abs(logt)), 2.0 * r[3])
        den = 2.0 * g1 * g1 - g * g2
        step = -2.0 * g * g1 / den if den != 0 else -g / g1
        if not math.isfinite(step):
            step = -g / g1
        if abs(g) <= tol_g or abs(step) <= 4.0 * _EPS * xi or hi - lo <= 4.0 * _EPS * xi:
            pair2, rc, _ = certified(cum, pair, xi, r if r[4] else None)
            g, g1, g2 = _g_of(rc, logt, upper)
            step = -g / g1 if g1 != 0 else 0.0
            close = abs(g) <= max(4.0 * _EPS * max(1.0, abs(logt)), 2.0 * rc[3]) \
                or abs(step) <= 4.0 * _EPS * xi
            if close or repairs >= 3 or not math.isfinite(step):
                if abs(step) <= 1e-8 * xi:
                    xi += step
                    g = 0.5 * g2 * step * step  # Newton residual
                xerr = (abs(g) + rc[3]) / abs(xi * g1) + 2.0 * _EPS
                return xi, xerr, rc[3] < 1.0 and abs(step) <= 1e-8 * xi
            # the contours were repaired and the value moved: restart the bracket
            repairs += 1
            pair, trusted = pair2, rc[3] < 1e-11
            lo, hi = 0.0, math.inf
        if (g > 0) == upper:
            lo = max(lo, xi)
        elif g != 0:
            hi = min(hi, xi)
        new = xi + step
        if not (lo < new < hi) or not math.isfinite(new):
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * xi
        xi = new
    return xi, math.inf, False
