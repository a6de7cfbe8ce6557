r"""The inversion contour and its trapezoidal rule.

Private helper of :mod:`egmlib.gchisq`. For Q = sum_j w_j Z_j^2 (weights scaled
so that the largest is 1) with cumulant generating function
K(s) = -1/2 sum_j log(1 - 2 w_j s),

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
Im y = -+eta < a {cite}`trefethen2014` (:func:`predicted_error`; the planner,
:mod:`._planner`, chooses gamma, h and the number of nodes).

K at the nodes does not depend on x, so the same contour serves every x near the
one it was planned for (the Halley steps of a quantile).

Representation near s = 1/2. In the far upper tail c approaches the branch
point 1/2 at a distance below the spacing of doubles there; the contour is
then carried as zeta = 1/2 - s as well (see :mod:`._cumulants`), and the
factored exponent is K(c) - x/2 + zeta_c x.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ._cumulants import Cumulants
from ._records import ComplexArray, FloatArray, TailValue

_EPS = float(np.finfo(float).eps)
#: Relative accuracy the quadrature is designed for (far below the 1e-10
#: promise, so that the a-posteriori check has room).
DESIGN_TOL = 1e-17

#: Per side of the strip (upper, lower): (eta, log(M(eta) / integral)).
ErrorModel = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class ContourPlan:
    """A parabola s(y) = c + i y + gamma y^2 and its trapezoidal rule.

    Attributes
    ----------
    upper : bool
        Crossing right of 0 (the upper tail) or left of it (the lower tail).
    c, zc : float
        The crossing point and zeta_c = 1/2 - c (NaN where the s form is used).
    kc : float
        K(c).
    x_plan : float
        The scaled x the contour was planned for.
    gamma, h : float
        Curvature and step.
    n : int
        Number of nodes (y = 0, h, ..., (n - 1) h).
    model : ErrorModel
        The error model of the planner, for :func:`predicted_error`.
    """

    upper: bool
    c: float
    zc: float
    kc: float
    x_plan: float
    gamma: float
    h: float
    n: int
    model: ErrorModel

    def refined(self) -> ContourPlan:
        """Same contour, half the step, same truncation point."""
        return replace(self, h=0.5 * self.h, n=2 * self.n)

    def phic(self, x: float) -> float:
        """The factored exponent K(c) - c x (K(c) - x/2 + zeta_c x near 1/2)."""
        if math.isnan(self.zc):
            return self.kc - self.c * x
        return self.kc - 0.5 * x + self.zc * x


@dataclass(frozen=True)
class Contour:
    """A planned contour with K at its nodes (see :func:`fill_nodes`).

    Attributes
    ----------
    plan : ContourPlan
    y : float array
        The nodes' parameters.
    off : complex array
        s(y) - c at the nodes.
    dk : complex array
        K(s(y)) - K(c).
    dsi, dsis, dss : complex arrays
        s'(y) / i, and that divided and multiplied by s(y): the integrands of the
        tail, the density and its derivative carry these factors.
    adk, aoff : float arrays
        |dk| and |off|, for the rounding estimate.
    wts : float array
        The trapezoidal weights (h, the first h/2).
    pred : (float, float)
        The predicted discretisation error with steps h and 2h.
    """

    plan: ContourPlan
    y: FloatArray
    off: ComplexArray
    dk: ComplexArray
    dsi: ComplexArray
    dsis: ComplexArray
    dss: ComplexArray
    adk: FloatArray
    aoff: FloatArray
    wts: FloatArray
    pred: tuple[float, float]

    def tail(self, x: float) -> TailValue:
        """The tail on this contour's side at scaled x: log T, f/T, f'/T, the
        a-priori + rounding + truncation estimate, and whether the contour's own
        checks pass (finite values, a coarse rule near the model, a negligible
        last node)."""
        with np.errstate(over="ignore", invalid="ignore"):
            ee = np.exp(self.dk - self.off * x)
            t_re = (ee * self.dsis).real  # Re[g / s]
            wts = self.wts
            tot = float(t_re @ wts)
            dens = float((ee * self.dsi).real @ wts)
            ddens = -float((ee * self.dss).real @ wts)
        if not self.plan.upper:
            tot = -tot
        if not (tot > 0 and math.isfinite(tot) and math.isfinite(dens) and math.isfinite(ddens)):
            return TailValue(math.nan, math.nan, math.nan, math.inf, False)
        coarse = 2.0 * float(t_re[::2] @ wts[::2])
        if not self.plan.upper:
            coarse = -coarse
        est = abs(tot - coarse) / tot
        tr = self._truncation(ee, tot)
        rnd = self._rounding(x, t_re, tot)
        pred, pred2 = self.pred
        # the coarse rule (step 2h) is a sanity check of the model only: its
        # agreement proves nothing (see :mod:`._certify`)
        ok = est <= max(100.0 * pred2, 1e-11) and tr <= 1e-15 and math.isfinite(pred)
        err = rnd + pred + DESIGN_TOL + tr
        logt = self.plan.phic(x) + math.log(tot / math.pi)
        return TailValue(logt, dens / tot, ddens / tot, err, ok)

    def _truncation(self, ee: ComplexArray, tot: float) -> float:
        """Geometric bound on the terms beyond the last node, relative to the sum."""
        h = self.plan.h
        g1 = abs(ee[-1] * self.dsis[-1])
        g2 = abs(ee[-2] * self.dsis[-2])
        q = g1 / g2 if g2 > 0 else 0.0
        return float(g1 * h * (q / (1.0 - q) if q < 0.9 else 10.0 + self.y[-1] / h) / tot)

    def _rounding(self, x: float, t_re: FloatArray, tot: float) -> float:
        """Rounding: each term carries the absolute error of its exponent (near 1/2
        the exponent is K(c) - x/2 + zeta_c x with x/2 exact)."""
        plan = self.plan
        lin = abs(plan.c * x) if math.isnan(plan.zc) else abs(plan.zc * x)
        at = np.abs(t_re) * self.wts
        return float((float(at @ self.adk) + x * float(at @ self.aoff)
                      + (10.0 + abs(plan.kc) + lin) * float(at.sum())) / tot * _EPS)


def predicted_error(model: ErrorModel, h: float) -> float:
    """Trapezoidal error bound sum 2 M / (exp(2 pi eta / h) - 1), relative to the
    integral; model holds (eta, log(M / integral)) per side."""
    tot = 0.0
    for eta, lm in model:
        if not eta > 0 or not math.isfinite(lm):
            return math.inf
        q = 2.0 * math.pi * eta / h
        tot += 2.0 * math.exp(min(lm - q, 700.0)) / -math.expm1(-q)
    return tot


def fill_nodes(cum: Cumulants, plans: Sequence[ContourPlan]) -> list[Contour]:
    """The contours of the plans, with K at all their nodes from one call."""
    if not plans:
        return []
    ys = [p.h * np.arange(p.n) for p in plans]
    offs = [1j * y + p.gamma * y * y for p, y in zip(plans, ys, strict=True)]
    ss = [p.c + o for p, o in zip(plans, offs, strict=True)]
    zs = [(p.zc - o) if not math.isnan(p.zc) else np.full(o.size, np.nan + 0j)
          for p, o in zip(plans, offs, strict=True)]
    kv = cum.complex(np.concatenate(ss), np.concatenate(zs))
    out = []
    pos = 0
    for p, y, s, o in zip(plans, ys, ss, offs, strict=True):
        dk = kv[pos:pos + p.n] - p.kc
        pos += p.n
        dsi = (1j + 2.0 * p.gamma * y) / 1j
        wts = np.full(p.n, p.h)
        wts[0] = 0.5 * p.h
        out.append(Contour(plan=p, y=y, off=o, dk=dk, dsi=dsi, dsis=dsi / s, dss=dsi * s, adk=np.abs(dk),
                           aoff=np.abs(o), wts=wts,
                           pred=(predicted_error(p.model, p.h), predicted_error(p.model, 2.0 * p.h))))
    return out


def refine(cum: Cumulants, ct: Contour) -> Contour:
    """Same contour, half the step, same truncation point."""
    return fill_nodes(cum, [ct.plan.refined()])[0]
