r"""Findings of section 7a: Algorithm 3 with a wrong, a private or an estimated centre and scales (beyond the report).

Every function reads chapter 7's saved simulations (:func:`egmbook.beyond_report.load_beyond_report`,
written by ``scripts/beyond_report.py``): :func:`wrong_centre` summarises the model's errors
with a centre off by ``c`` standard deviations, :func:`centre_direct` puts them against runs
of the mechanisms (Proposition 7.A), :func:`private_centre` uses a centre released privately
on another batch, and :func:`estimated_sigma` standard deviations estimated from a public
sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy import stats

from egmbook import experiments
from egmbook.beyond_report import BeyondReport
from egmbook.claims import readable
from egmbook.display import Table, table
from egmbook.findings import Finding

__all__ = ["METHOD_NAMES", "WrongCentre", "wrong_centre", "CentreDirect", "centre_direct", "PrivateCentre",
           "private_centre", "EstimatedSigma", "estimated_sigma"]

#: The two mechanisms of Section 5 as the tables name them.
METHOD_NAMES: Mapping[str, str] = MappingProxyType({"alg3": "Algorithm 3", "base": "baseline"})


def _check(res: Any) -> BeyondReport:
    if not isinstance(res, BeyondReport):
        raise TypeError(f"res must be egmbook.beyond_report.BeyondReport (load_beyond_report()), got res of type "
                        f"{type(res).__name__}")
    return res


def _ten(n: int) -> str:
    return f"$10^{round(math.log10(n))}$"


def _pow(n: int) -> int:
    return round(math.log10(n))


@dataclass(frozen=True)
class WrongCentre(Finding):
    """The model's errors with a centre off by c standard deviations (proportional) or by the same
    Euclidean norm (isotropic), relative to the errors with the exact centre."""

    res: BeyondReport
    ratios: Mapping[tuple[Any, ...], tuple[float, ...]]  #: (method, shape, c, what[, n]) -> ratios over the configs

    def _s(self, *key: Any) -> tuple[float, ...]:
        return self.ratios[key]

    def glue(self) -> dict[str, Any]:
        """The wrong centre's numbers the chapter quotes, by glue name (``ch7-`` prefix)."""
        s, n_grid, res = self._s, self.res.n_values, self.res
        g = {"c1-base-max-pct": 100 * (max(s("base", "prop", 1.0, "1n")) - 1),
             "c1-alg3-max": max(s("alg3", "prop", 1.0, "1n")),
             "c2-alg3-min": min(s("alg3", "prop", 2.0, "1n")), "c2-alg3-max": max(s("alg3", "prop", 2.0, "1n")),
             "c2-base-max": max(s("base", "prop", 2.0, "1n")),
             "reopt-alg3-min": min(s("alg3", "prop", 0.1, "reopt")),
             "reopt-alg3-max": max(s("alg3", "prop", 0.1, "reopt")),
             "reopt-base-min": min(s("base", "prop", 0.1, "reopt")),
             "reopt-base-max": max(s("base", "prop", 0.1, "reopt")),
             "batch-alg3-pct": 100 * (max(v for n in n_grid if n >= 10**4 for v in s("alg3", "batch", "opt0", n)) - 1),
             "batch-alg3-1e3": max(s("alg3", "batch", "opt0", 10**3)),
             "batch-base-max": max(v for n in n_grid if n >= 10**4 for v in s("base", "batch", "opt0", n))}
        for m in ("alg3", "base"):
            for n in (10**4, 10**6):
                v = s(m, "prop", 0.1, "opt0", n)
                g[f"p01-{m}-1e{_pow(n)}-min"], g[f"p01-{m}-1e{_pow(n)}-max"] = min(v), max(v)
        iso = {(r.d, r.alpha): r.offsets["iso"][0].per_n[10**4].ratio_1n / (r.mse_1n[10**4] / r.mse_star[10**4])
               for r in res.centre if r.method == "alg3"}
        g["iso-d100"], g["iso-d1000"] = iso[(100, 2.0)], iso[(1000, 2.0)]
        reopt_iso = [r.offsets["iso"][0].per_n[n].ratio_reopt for r in res.centre if r.method == "alg3"
                     and r.alpha == 2.0 and r.d in (100, 1000) for n in (10**4, 10**6)]
        g["iso-reopt-min"], g["iso-reopt-max"] = min(reopt_iso), max(reopt_iso)
        s_b = experiments.zipf_sigmas(1000, alpha=2.0)
        offset_b = 2 * experiments.clipping_radii(s_b, p=1e-4).Cn * res.settings.sigma_opt / 10**4  # release noise / n
        g["batch-base-offset"] = float(np.sqrt(np.mean((offset_b / s_b) ** 2)))
        g = {k: float(v) for k, v in g.items()}
        g["c2-alg3-max-millions"] = g["c2-alg3-max"] / 1e6
        return g

    def table(self) -> Table:
        cell = lambda v: " / ".join(readable(x, 3) for x in (v.ratio_1n, v.ratio_opt0, v.ratio_reopt))  # noqa: E731
        cols: dict[str, list[Any]] = {k: [] for k in ("$d$", r"$\alpha$", "method", "$n$", "prop., $c = 0.1$",
                                                      "prop., $c = 0.5$", "iso., $c = 0.1$", "private batch")}
        for rec in self.res.centre:
            for n in (10**4, 10**6):
                pb = rec.private_batch[n]
                for k, v in zip(cols, (rec.d, rec.alpha, METHOD_NAMES[rec.method], _ten(n),
                                       cell(rec.offsets["prop"][0].per_n[n]), cell(rec.offsets["prop"][1].per_n[n]),
                                       cell(rec.offsets["iso"][0].per_n[n]),
                                       f"{readable(pb.ratio_1n, 3)} / {readable(pb.ratio_opt0, 3)} ± "
                                       f"{readable(pb.ratio_opt0_ci)}"),
                                strict=True):
                    cols[k].append(v)
        return table(cols, formats={r"$\alpha$": "{:g}"}, label="tab-ch7-wrong-centre",
                     caption=r"Every configuration with a wrong centre: the error relative to the exact-centre "
                             r"optimum, at $p_C = 1/n$ / at $p_C^*$ (exact centre) / re-optimised for the offset "
                             r"(private batch: at $1/n$ / at $p_C^*$ with its 95 % half-width).")


def wrong_centre(res: BeyondReport) -> WrongCentre:
    """Chapter 7's model (beyond the report) with a wrong centre: for every method, offset shape and c,
    its error over the exact centre's at p_C = 1/n, at the exact centre's optimum, and re-optimised."""
    res = _check(res)
    out: dict[tuple[Any, ...], list[float]] = {}
    for rec in res.centre:
        m = rec.method
        for n in res.n_values:
            r0 = rec.mse_1n[n] / rec.mse_star[n]
            for shape in ("prop", "iso"):
                for v in rec.offsets[shape]:
                    q = v.per_n[n]
                    out.setdefault((m, shape, v.c, "1n"), []).append(q.ratio_1n / r0)
                    out.setdefault((m, shape, v.c, "opt0", n), []).append(q.ratio_opt0)
                    out.setdefault((m, shape, v.c, "reopt"), []).append(q.ratio_reopt)
            pb = rec.private_batch[n]
            out.setdefault((m, "batch", "1n"), []).append(pb.ratio_1n / r0)
            out.setdefault((m, "batch", "opt0", n), []).append(pb.ratio_opt0)
    return WrongCentre(res, MappingProxyType({k: tuple(v) for k, v in out.items()}))


@dataclass(frozen=True)
class CentreDirect(Finding):
    """Proposition 7.A: a wrong centre's errors measured through the mechanisms against the model's."""

    columns: Mapping[str, tuple[Any, ...]]
    worst: float  #: the largest absolute z

    @property
    def ok(self) -> bool:
        return self.worst < 4

    @property
    def evidence(self) -> str:
        return f"{len(self.columns['$z$'])} cases; largest |z| = {self.worst:.2f}."

    def table(self) -> Table:
        return table(dict(self.columns), formats={"$z$": "{:+.2f}"}, label="tab-ch7-centre-direct",
                     caption=r"Errors relative to $n\operatorname{tr}\Sigma$ with a wrong centre at $d = 100$, "
                             r"$\alpha = 2$, $n = 10^4$, measured through the mechanisms (95 % interval) and from the "
                             "model; $z$: difference over the combined standard error.")


def centre_direct(res: BeyondReport) -> CentreDirect:
    """Proposition 7.A (chapter 7): the direct runs with a wrong centre (d = 100, alpha = 2, n = 10^4) against
    the model's centre term, at p_C = 1/n and at the exact centre's optimum."""
    res = _check(res)
    rec = {r.method: r for r in res.centre if (r.d, r.alpha) == (100, 2.0)}
    n = 10**4
    cols: dict[str, list[Any]] = {k: [] for k in ("method", "$p_C$", "offset", "measured", "model", "$z$")}
    worst = 0.0
    for r in res.centre_direct:
        m, name = r.method, r.offset
        kind = "ratio_1n" if r.p == 1.0 / n else "ratio_opt0"
        if name == "exact":
            pred, pse = ((rec[m].mse_1n[n], rec[m].mse_1n_se[n]) if kind == "ratio_1n"
                         else (rec[m].mse_star[n], rec[m].mse_star_se[n]))
        else:
            shape = "prop" if name.startswith("prop") else "iso"
            v = next(v for v in rec[m].offsets[shape] if v.c == float(name[len(shape):])).per_n[n]
            pred, pse = (v.mse_1n, v.mse_1n_se) if kind == "ratio_1n" else (v.mse_opt0, v.mse_opt0_se)
        t = n * rec[m].trace
        z = (r.total_mean - pred) / math.hypot(r.total_ci / stats.t.ppf(0.975, r.reps - 1), pse)
        worst = max(worst, abs(z))
        label = "exact" if name == "exact" else (f"{'proportional' if shape == 'prop' else 'isotropic'}, "
                                                  f"$c = {float(name[len(shape):]):g}$")
        measured = f"{readable(r.total_mean / t, 4)} ± {readable(r.total_ci / t)}"
        for k, val in zip(cols, (METHOD_NAMES[m], readable(r.p), label, measured, readable(pred / t, 4), z),
                          strict=True):
            cols[k].append(val)
    return CentreDirect(MappingProxyType({k: tuple(v) for k, v in cols.items()}), float(worst))


@dataclass(frozen=True)
class PrivateCentre(Finding):
    """Algorithm 3 with a centre released privately on m independent rows, over its error with the exact centre."""

    res: BeyondReport

    def _at(self, d: int, a: float, msz: int, n: int) -> Any:
        return self._by_key[(d, a, "base", msz, "alg3")].per_n[n]

    @property
    def _by_key(self) -> dict[tuple[Any, ...], Any]:
        return {(r.d, r.alpha, r.source, r.m, r.method): r for r in self.res.private_centre}

    sizes = property(lambda self: tuple(sorted({r.m for r in self.res.private_centre})))
    configs = property(lambda self: sorted({(r.d, r.alpha) for r in self.res.private_centre}))

    def glue(self) -> dict[str, Any]:
        """The numbers the chapter quotes, by glue name (``ch7-`` prefix)."""
        res, at, E, n_grid = self.res, self._at, self._by_key, self.res.n_values
        A3 = [r for r in res.private_centre if r.source == "base" and r.method == "alg3"]
        m_lo, m_hi = self.sizes[0], self.sizes[-1]
        g = {"e-a1-1n-max": max(r.per_n[n].ratio_1n for r in A3 if r.alpha == 1.0 for n in n_grid),
             "e-d100-a2-1n-max": max(at(100, 2.0, msz, n).ratio_1n for msz in self.sizes for n in n_grid),
             "e-d100-a2-opt-min": min(at(100, 2.0, m_lo, n).ratio_opt0 for n in n_grid),
             "e-d100-a2-opt-max": max(at(100, 2.0, m_lo, n).ratio_opt0 for n in n_grid),
             "e-d1000-a1-opt-min": min(at(1000, 1.0, m_lo, n).ratio_opt0 for n in n_grid),
             "e-d1000-a1-opt-max": max(at(1000, 1.0, m_lo, n).ratio_opt0 for n in n_grid),
             "e-mhi-1n-max": max(r.per_n[n].ratio_1n for r in A3 if r.m == m_hi for n in n_grid),
             "e-mhi-opt-max": max(r.per_n[n].ratio_opt0 for r in A3 if r.m == m_hi for n in n_grid),
             "e-reopt-mlo-max": max(r.per_n[n].ratio_reopt for r in A3 if r.m == m_lo and (r.d, r.alpha) != (1000, 2.0)
                                    for n in n_grid),
             "e-own-max": max(E[(d, a, "alg3", msz, "alg3")].per_n[n].ratio_opt0 for d, a in self.configs
                              for msz in self.sizes for n in n_grid)}
        for msz in self.sizes:
            g[f"e-d1000-m{_pow(msz)}"] = at(1000, 2.0, msz, 10**4).ratio_1n
            g[f"e-d1000-rms-m{_pow(msz)}"] = E[(1000, 2.0, "base", msz, "alg3")].offset_rms_sigma
            g[f"e-d100-rms-m{_pow(msz)}"] = E[(100, 2.0, "base", msz, "alg3")].offset_rms_sigma
        g["e-1n-others-pct"] = 100 * (max(g["e-a1-1n-max"], g["e-d100-a2-1n-max"]) - 1)
        g = {k: float(v) for k, v in g.items()}
        g["draws"] = min(r.draws for r in res.private_centre)
        return g

    @property
    def ok(self) -> bool:
        g, E_M = self.glue(), self.sizes
        falls = all(self._at(1000, 2.0, E_M[i], n).ratio_1n > self._at(1000, 2.0, E_M[i + 1], n).ratio_1n
                    for i in range(len(E_M) - 1) for n in self.res.n_values)
        return (g["e-a1-1n-max"] < 1.01 and g["e-d100-a2-1n-max"] < 1.01 and falls and g["e-d1000-m4"] > 100
                and g["e-d100-a2-opt-min"] > 2 and g["e-mhi-opt-max"] < 1.25)

    @property
    def evidence(self) -> str:
        g, m_lo, m_hi = self.glue(), self.sizes[0], self.sizes[-1]
        return (f"at $p_C = 1/n$: $\\alpha = 1$ at most {g['e-a1-1n-max']:.3f}, $d$ = 100, $\\alpha$ = 2 at most "
                f"{g['e-d100-a2-1n-max']:.3f}; $d$ = 1000, $\\alpha$ = 2, $n = 10^4$: "
                + ", ".join(f"{g[f'e-d1000-m{_pow(m)}']:.3g} ($m = 10^{_pow(m)}$)" for m in self.sizes)
                + f"; at $p_C^*$ with $m = 10^{_pow(m_lo)}$: {g['e-d100-a2-opt-min']:.2g} to "
                f"{g['e-d100-a2-opt-max']:.2g} ($d$ = 100, $\\alpha$ = 2), {g['e-d1000-a1-opt-min']:.2g} to "
                f"{g['e-d1000-a1-opt-max']:.3g} ($d$ = 1000, $\\alpha$ = 1); $m = 10^{_pow(m_hi)}$: at "
                f"most {g['e-mhi-1n-max']:.3f} at $1/n$ and {g['e-mhi-opt-max']:.3f} at $p_C^*$.")

    def table(self, sizes: tuple[int, ...] = (10**4, 10**6)) -> Table:
        """The ratios by configuration, batch size m and n in ``sizes`` (at n = 10^4 the evidence of
        Observation 7.F; at both the supplement's table)."""
        E = self._by_key
        fmt = lambda v, ci: f"{readable(v, 3)} ± {readable(ci)}"  # noqa: E731
        cols: dict[str, list[Any]] = {k: [] for k in ("$d$", r"$\alpha$", "$m$", "$n$",
                                                      "centre's error / $\\sigma_j$ (rms)", "at $1/n$", "at $p_C^*$",
                                                      "re-optimised", "own release, at $p_C^*$")}
        for d, a in self.configs:
            for msz in self.sizes:
                rb, ro = E[(d, a, "base", msz, "alg3")], E[(d, a, "alg3", msz, "alg3")]
                for n in sizes:
                    v, w = rb.per_n[n], ro.per_n[n]
                    for k, val in zip(cols, (d, a, _ten(msz), _ten(n), rb.offset_rms_sigma,
                                             fmt(v.ratio_1n, v.ratio_1n_ci), fmt(v.ratio_opt0, v.ratio_opt0_ci),
                                             fmt(v.ratio_reopt, v.ratio_reopt_ci), fmt(w.ratio_opt0, w.ratio_opt0_ci)),
                                      strict=True):
                        cols[k].append(val)
        draws = min(r.draws for r in self.res.private_centre)
        return table(cols, formats={r"$\alpha$": "{:g}",
                                    "centre's error / $\\sigma_j$ (rms)": lambda v: readable(v, 3)},
                     label="tab-ch7-private-centre" if len(sizes) == 1 else "tab-ch7-private-centre-all",
                     caption="Algorithm 3 with a centre released privately on $m$ independent rows: its error over "
                             f"its error with the exact centre (mean ± 95 % half-width over {draws} centres). The "
                             "centre is the baseline's release (isotropic noise) except in the last column.")


def private_centre(res: BeyondReport) -> PrivateCentre:
    """Chapter 7: Algorithm 3 with a real private centre (the baseline's release, or its own, on an independent
    batch of m rows), from the saved simulations."""
    return PrivateCentre(_check(res))


@dataclass(frozen=True)
class EstimatedSigma(Finding):
    """Algorithm 3 and the baseline with standard deviations (and a centre) estimated from a public sample."""

    res: BeyondReport

    def glue(self) -> dict[str, Any]:
        """The numbers the chapter quotes, by glue name (``ch7-`` prefix)."""
        g = {}
        for msz in (100, 1000):
            est = [r for r in self.res.estimated if r.m == msz]
            sig_only = [r.ratio_mean for r in est if r.variant == "sigma"]
            pcl = [r.pclip_ratio_median for r in est if r.variant == "sigma" and r.p_kind == "1/n"]
            both = [r.ratio_mean for r in est if r.variant == "sigma+mu" and r.p_kind == "opt"]
            g[f"est-{msz}-pct"] = 100 * max(abs(x - 1) for x in sig_only)
            g[f"pclip-{msz}-min"], g[f"pclip-{msz}-max"] = min(pcl), max(pcl)
            g[f"both-{msz}-min"], g[f"both-{msz}-max"] = min(both), max(both)
        g = {k: float(v) for k, v in g.items()}
        g["samples"] = min(r.draws for r in self.res.estimated)
        return g

    @property
    def ok(self) -> bool:
        g = self.glue()
        return (g["est-100-pct"] < 10 and g["est-1000-pct"] < 3
                and all(abs(r.est_mean - r.known_mean) <= math.hypot(r.known_ci, r.est_ci)
                        for r in self.res.estimated_direct))

    @property
    def evidence(self) -> str:
        g = self.glue()
        return (f"error ratio within {g['est-100-pct']:.0f}% ($m$ = 100) and {g['est-1000-pct']:.0f}% ($m$ = 1000); "
                + "; ".join(f"direct, {METHOD_NAMES[r.method]}, $d$ = {r.d}, $\\alpha$ = {r.alpha:g}, $n$ = "
                            f"{_ten(r.n)}, $m$ = {r.m}: {r.est_mean:.4g} ± {readable(r.est_ci)} with $\\hat\\sigma$, "
                            f"{r.known_mean:.4g} ± {readable(r.known_ci)} with $\\sigma$"
                            for r in self.res.estimated_direct) + ".")

    def table(self) -> Table:
        rows = {(r.d, r.alpha, r.m, r.n, r.p_kind, r.method, r.variant): r for r in self.res.estimated}
        cols: dict[str, list[Any]] = {k: [] for k in ("$d$", r"$\alpha$", "$m$", "$n$", "$p_C$", "method",
                                                      r"error ratio, $\sigma$ only", "clipping / $p_C$",
                                                      r"error ratio, $\sigma$ and $\mu$")}
        for (d, a, msz, n, kind, m, v), r in rows.items():
            if v != "sigma":
                continue
            r2 = rows[(d, a, msz, n, kind, m, "sigma+mu")]
            for k, val in zip(cols, (d, a, msz, _ten(n), "$1/n$" if kind == "1/n" else "$p_C^*$", METHOD_NAMES[m],
                                     f"{r.ratio_mean:.3f} ± {readable(r.ratio_ci)}", r.pclip_ratio_median,
                                     f"{readable(r2.ratio_mean, 3)} ± {readable(r2.ratio_ci)}"), strict=True):
                cols[k].append(val)
        samples = min(r.draws for r in self.res.estimated)
        return table(cols, formats={r"$\alpha$": "{:g}", "clipping / $p_C$": "{:.2f}"}, label="tab-ch7-estimated-all",
                     caption=r"Every configuration with estimated standard deviations: the error relative to known "
                             rf"$\sigma$ (mean ± 95 % interval over {samples} public samples), and the realised "
                             "clipping probability over $p_C$ (median).")

    def summary_table(self) -> Table:
        """The evidence of Observation 7.G: by the size m of the public sample and the choice of p_C, the
        ranges over the configurations of the error ratio (sigma estimated; sigma and mu estimated) and of
        the realised clipping probability over p_C."""
        cols: dict[str, list[Any]] = {k: [] for k in ("$m$", "$p_C$", r"error ratio, $\sigma$ only",
                                                      "clipping / $p_C$", r"error ratio, $\sigma$ and $\mu$")}
        for msz in sorted({r.m for r in self.res.estimated}):
            for kind in ("1/n", "opt"):
                rows = [r for r in self.res.estimated if r.m == msz and r.p_kind == kind]
                only = [r for r in rows if r.variant == "sigma"]
                both = [r.ratio_mean for r in rows if r.variant == "sigma+mu"]
                span = lambda v, k: f"{readable(min(v), k)} to {readable(max(v), k)}"  # noqa: E731
                for key, value in zip(cols, (msz, "$1/n$" if kind == "1/n" else "$p_C^*$",
                                             span([r.ratio_mean for r in only], 3),
                                             span([r.pclip_ratio_median for r in only], 2), span(both, 3)),
                                      strict=True):
                    cols[key].append(value)
        return table(cols, label="tab-ch7-estimated",
                     caption=r"Standard deviations estimated from $m$ public rows: the error over the error with "
                             r"the true $\sigma$ (and $\mu$), and the realised clipping probability over $p_C$; ranges "
                             "over the configurations and both methods.")


def estimated_sigma(res: BeyondReport) -> EstimatedSigma:
    """Chapter 7: Algorithm 3 with sigma (and mu) estimated from a public sample of m rows, from the saved
    simulations, and the direct runs through the mechanisms."""
    return EstimatedSigma(_check(res))
