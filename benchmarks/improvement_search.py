"""Search for a counterexample to R >= 1 (the improvement of the report's Section 5).

R(sigma, n) = d C_n^2 / (C_t^2 (sum sigma)^2) (egmbook.experiments.figure2_improvement, exact
quantiles). R = 1 at equal sigma, so the search measures the margin on the scale of
Theorem 3's factor Rbar = d sum sigma^2 / (sum sigma)^2 >= 1:
rho = (R - 1)/(Rbar - 1) (egmbook.improvement_margin.normalized_margin); R >= 1 iff rho >= 0.

1. Grid: d in {2, ..., 1000} x n in {2, ..., 10^6} x structured sigma (Zipf, two levels,
   one dominant coordinate) and random sigma (lognormal, uniform, Dirichlet).
2. Optimisation: Nelder-Mead on log sigma minimising rho from random starts (d <= 10), and
   one-dimensional minimisation over the Zipf exponent and the two-level ratio (d >= 30).
3. The closed-form limit of rho at equal weights (egmbook.improvement_margin.equal_weights_margin)
   on d = 2..10^5, n = 2..10^6.
4. The tangent certificate (egmbook.improvement_margin.tangent_certificate), a sufficient
   condition for R >= 1, on a subsample: how often it proves R >= 1 by itself.

Prints a summary and writes benchmarks/results/improvement_search.txt (the summary) and
benchmarks/results/improvement_search.json (the details).
Run: python benchmarks/improvement_search.py  (about 3-6 minutes on 2 shared cores).

``python benchmarks/improvement_search.py --schur`` instead scans the hypothesis of chapter
5b's reduction theorem, the Schur-concavity of w -> P(sum_j w_j Z_j^2 <= x) for x >= x0
(egmbook.improvement_margin.schur_ostrowski_gap): a grid over d = 2 (weights (1 - t, t),
x from 1.5 to 40) and random, Zipf and two-level weights for d = 3..10 at x from 1.9 to 20;
it writes data/schur_threshold_scan.json (a few minutes).  A numerical scan, not a proof.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from scipy import optimize

from egmbook.cli import argument_parser
from egmbook.experiments import figure2_improvement, zipf_sigmas
from egmbook.improvement_margin import equal_weights_margin, schur_ostrowski_gap, tangent_certificate
from egmlib.scaling import egm_improvement

D_VALUES = (2, 3, 4, 5, 10, 30, 100, 300, 1000)
N_VALUES = (2, 3, 4, 5, 10, 100, 10**3, 10**4, 10**6)
OUT = Path(__file__).resolve().parent / "results" / "improvement_search.json"
LINES: list[str] = []


def emit(line: str) -> None:
    """Print a line of the summary and keep it for the .txt file."""
    print(line, flush=True)
    LINES.append(line)


def families(d: int, rng: np.random.Generator) -> Iterator[tuple[str, float, np.ndarray]]:
    """(family, parameter, sigma) triples for one dimension d."""
    for a in (1e-3, 1e-2, 0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0):
        yield "zipf", a, zipf_sigmas(d, alpha=a)
    ks = sorted({1, max(1, d // 10), max(1, d // 2), d - 1})
    for k in ks:
        for h in (0.01, 0.1, 0.5, 0.9, 0.99, 1.01, 1.1, 2.0, 10.0, 100.0):
            yield f"two-level k={k}", h, np.r_[np.full(k, h), np.ones(d - k)]
    for s in (0.01, 0.1, 0.5, 1.0, 2.0):
        for _ in range(2):
            yield "lognormal", s, rng.lognormal(0.0, s, d)
    for rep in range(2):
        yield "uniform(0,1)", rep, rng.uniform(1e-3, 1.0, d)
        yield "dirichlet(1)", rep, rng.dirichlet(np.ones(d)) + 1e-12


def margin(sigma: np.ndarray, n: int) -> tuple[float, float, float]:
    """(R, Rbar, rho); rho is set to +inf where Rbar - 1 < 1e-6, too close to equal weights
    for the quantiles' 1e-10 accuracy to resolve R - 1 on the scale of Rbar - 1."""
    R = figure2_improvement(sigma, n=n)
    rbar = egm_improvement(sigma)
    rho = (R - 1.0) / (rbar - 1.0) if rbar - 1.0 >= 1e-6 else math.inf
    return R, rbar, rho


def grid(rng: np.random.Generator) -> list[dict]:
    rows = []
    for d in D_VALUES:
        fam = list(families(d, rng))
        for n in N_VALUES:
            for name, par, s in fam:
                R, rbar, rho = margin(s, n)
                rows.append({"d": d, "n": n, "family": name, "param": float(par),
                             "R": R, "Rbar": rbar, "rho": rho})
    return rows


def optimise_small(rng: np.random.Generator) -> list[dict]:
    """Nelder-Mead on log sigma (first entry fixed at 0) minimising rho."""
    out = []
    for d in (2, 3, 5, 10):
        for n in (2, 3, 5, 10, 1000, 10**6):
            best = None

            def f(z: np.ndarray, n: int = n) -> float:
                rho = margin(np.exp(np.r_[0.0, np.clip(z, -30.0, 30.0)]), n)[2]
                return min(rho, 10.0)                    # a finite value near equal weights

            for start in range(4 if d <= 5 else 2):
                z0 = rng.normal(0.0, 1.0 if start % 2 else 0.1, d - 1)
                res = optimize.minimize(f, z0, method="Nelder-Mead",
                                        options={"xatol": 1e-4, "fatol": 1e-6,
                                                 "maxfev": 150 * d})
                if best is None or res.fun < best.fun:
                    best = res
            if best is None:
                raise RuntimeError("no optimisation was run")
            s = np.exp(np.r_[0.0, np.clip(best.x, -30.0, 30.0)])
            R, rbar, rho = margin(s, n)
            out.append({"d": d, "n": n, "rho": rho, "R": R, "Rbar": rbar,
                        "sigma_over_max": (s / s.max()).tolist(),
                        "equal_weights_limit": equal_weights_margin(d, n=n)})
    return out


def optimise_families() -> list[dict]:
    """One-dimensional minimisation of rho over the Zipf exponent and the two-level ratio."""
    out = []
    for d in (30, 100, 1000):
        for n in (2, 3, 10, 1000, 10**6):
            res = optimize.minimize_scalar(
                lambda la, d=d, n=n: margin(zipf_sigmas(d, alpha=10.0**la), n)[2],
                bounds=(-2.5, 1.5), method="bounded", options={"xatol": 1e-3})
            out.append({"d": d, "n": n, "family": "zipf", "param": 10.0**res.x, "rho": res.fun})
            for k in (1, d // 2):
                res = optimize.minimize_scalar(
                    lambda lh, d=d, n=n, k=k: margin(np.r_[np.full(k, 10.0**lh), np.ones(d - k)], n)[2],
                    bounds=(-2.0, 2.0), method="bounded", options={"xatol": 1e-3})
                out.append({"d": d, "n": n, "family": f"two-level k={k}",
                            "param": 10.0**res.x, "rho": res.fun})
    return out


def equal_limit_table() -> dict:
    ds = sorted({int(x) for x in np.unique(np.round(np.logspace(math.log10(2), 5, 60)))})
    ns = sorted({int(x) for x in np.unique(np.round(np.logspace(math.log10(2), 6, 40)))})
    vals = np.array([[equal_weights_margin(d, n=n) for n in ns] for d in ds])
    i, j = np.unravel_index(np.argmin(vals), vals.shape)
    return {"d_values": ds, "n_values": ns, "min": float(vals.min()),
            "argmin": [ds[i], ns[j]], "min_over_d_at_n": {str(n): float(vals[:, k].min())
                                                           for k, n in enumerate(ns)}}


def certificates(rows: list[dict], rng: np.random.Generator) -> dict:
    """Tangent certificate on the grid points with d <= 100 (sigma rebuilt from the row)."""
    tried, proved = 0, 0
    failures: dict[str, int] = {}
    for d in (2, 3, 5, 10, 100):
        fam = list(families(d, np.random.default_rng(rng.integers(2**32))))
        for n in (2, 3, 10, 1000, 10**6):
            for _name, _par, s in fam[::3]:
                c = tangent_certificate(s, n=n)
                tried += 1
                proved += c.proves
                if not c.proves:
                    failures.setdefault(f"n={n}", 0)
                    failures[f"n={n}"] += 1
    return {"tried": tried, "proved": proved, "failures_by_n": failures}


def main() -> None:
    t0 = time.perf_counter()
    rng = np.random.default_rng(20230120)
    rows = grid(rng)
    t1 = time.perf_counter()
    small = optimise_small(rng)
    t2 = time.perf_counter()
    fam = optimise_families()
    t3 = time.perf_counter()
    eq = equal_limit_table()
    cert = certificates(rows, rng)
    t4 = time.perf_counter()

    R = np.array([r["R"] for r in rows])
    rho = np.array([r["rho"] for r in rows])          # +inf where Rbar - 1 < 1e-6
    worst = rows[int(np.argmin(rho))]
    emit(f"grid: {len(rows)} (sigma, n) points, d in {D_VALUES}, n in {N_VALUES}  "
          f"[{t1 - t0:.0f} s]")
    emit(f"  min R - 1 = {np.min(R - 1):.3e}  (R >= 1 at every point: {bool(np.all(R >= 1 - 1e-9))}; "
          f"{int(np.sum(np.isinf(rho)))} points with Rbar - 1 < 1e-6 count for R only)")
    emit(f"  min rho = (R-1)/(Rbar-1) = {rho.min():.5f} at d={worst['d']}, n={worst['n']}, "
          f"{worst['family']} {worst['param']:g} (Rbar = {worst['Rbar']:.6g})")
    for n in N_VALUES:
        m = np.array([r["n"] == n for r in rows])
        emit(f"    n = {n:>7}: min rho {rho[m].min():.5f}")
    emit(f"Nelder-Mead on log sigma (d <= 10)  [{t2 - t1:.0f} s]")
    for r in small:
        emit(f"  d={r['d']:>2} n={r['n']:>7}: min rho {r['rho']:.5f} (R = {r['R']:.8f}, "
              f"Rbar = {r['Rbar']:.6f}); equal-weights limit {r['equal_weights_limit']:.5f}")
    emit(f"1-d minimisation over Zipf alpha and two-level ratio (d >= 30)  [{t3 - t2:.0f} s]")
    for r in fam:
        emit(f"  d={r['d']:>4} n={r['n']:>7} {r['family']:<16} min rho {r['rho']:.5f} at {r['param']:.4g}")
    emit(f"equal-weights limit of rho, d = 2..1e5, n = 2..1e6: min {eq['min']:.6f} at d, n = {eq['argmin']}"
          f"  ((3 ln 2 - 2)/4 = {(3 * math.log(2) - 2) / 4:.6f})")
    emit(f"tangent certificate: proves R >= 1 at {cert['proved']} of {cert['tried']} points; "
          f"fails at {cert['failures_by_n']}  [{t4 - t3:.0f} s]")
    all_rho = min(rho.min(), min(r["rho"] for r in small), min(r["rho"] for r in fam))
    emit(f"overall: smallest rho found {all_rho:.5f}; smallest R - 1 on the grid {np.min(R - 1):.3e}; "
          f"total {t4 - t0:.0f} s (timings on a shared machine)")
    OUT.parent.mkdir(exist_ok=True)
    OUT.with_suffix(".txt").write_text("\n".join(LINES) + "\n")
    OUT.write_text(json.dumps({
        "grid_summary": {"points": len(rows), "min_R_minus_1": float(np.min(R - 1)),
                         "min_rho": float(rho.min()), "argmin": worst},
        "nelder_mead": small, "families": fam, "equal_weights_limit": eq,
        "certificate": cert, "seconds": round(t4 - t0, 1)}, indent=1))


SCHUR_OUT = Path(__file__).resolve().parents[1] / "data" / "schur_threshold_scan.json"
SCHUR_T = tuple(float(t) for t in np.round(np.linspace(0.02, 0.48, 24), 4))
SCHUR_X2 = tuple(float(x) for x in np.round(np.concatenate([np.arange(1.5, 2.5001, 0.05),
                                                         [3.0, 4.0, 6.0, 10.0, 20.0, 40.0]]), 4))
SCHUR_XD = (1.9, 2.0, 2.1, 3.0, 5.0, 20.0)


def schur_scan() -> dict:
    """The Schur-Ostrowski gap on the grids of the module docstring (``--schur``)."""
    t0 = time.time()
    d2 = [[schur_ostrowski_gap(x, [1.0 - t, t]) for x in SCHUR_X2] for t in SCHUR_T]
    emit(f"d = 2: {len(SCHUR_T)} x {len(SCHUR_X2)} points in {time.time() - t0:.0f} s")
    rng = np.random.default_rng(5)
    rows = []
    for d in range(3, 11):
        ws = [("zipf", zipf_sigmas(d, alpha=a)) for a in (0.3, 1.0, 3.0)]
        ws += [("two-level", np.r_[np.full(k, h), np.ones(d - k)]) for k, h in ((1, 3.0), (d // 2, 0.3))]
        ws += [(f"dirichlet({c})", rng.dirichlet(np.full(d, c))) for c in (0.3, 1.0, 5.0)]
        for fam, w in ws:
            w = np.maximum(w, 1e-12)
            rows.append({"d": d, "family": fam, "w": [float(v) for v in w / w.sum()],
                         "gaps": [schur_ostrowski_gap(x, w) for x in SCHUR_XD]})
    emit(f"d = 3..10: {len(rows)} weight vectors x {len(SCHUR_XD)} levels in {time.time() - t0:.0f} s")
    return {"t": list(SCHUR_T), "x_d2": list(SCHUR_X2), "gap_d2": d2, "x_d": list(SCHUR_XD), "rows": rows}


if __name__ == "__main__":
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--schur", action="store_true",
                        help="scan the Schur-concavity hypothesis of chapter 5b instead (writes "
                             "data/schur_threshold_scan.json)")
    if parser.parse_args().schur:
        SCHUR_OUT.write_text(json.dumps(schur_scan(), indent=1) + "\n", encoding="utf-8")
        print("wrote", SCHUR_OUT)
        raise SystemExit(0)
    main()
