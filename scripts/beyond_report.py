#!/usr/bin/env python
"""Beyond the report: Algorithm 3 end to end -- the data pipeline of chapter 7 of the book.

The report (Poulsen 2023) compares Algorithm 3 with the clipped Gaussian mechanism by
the expected squared norm of the added noise only (eq. (24) against d (2 C_n sigma_opt)^2,
Figure 2).  Its Sections 6 and 6.1 leave open the clipping bias, the choice of the
clipping probability p_C and the effect of a wrong centre mu_hat or of estimated
standard deviations.  This script answers them by simulation with egmlib and writes

    data/beyond_report.json

which chapters/07_beyond_the_report.ipynb loads through egmbook.beyond_report
(load_beyond_report, typed records).  Run from the repository root:

    python scripts/beyond_report.py            # full run, about 1.5 h on 2 busy cores (see the log's timings)
    python scripts/beyond_report.py --quick    # smoke test, writes data/beyond_report_quick.json

Experiments (eps = 1, delta = 1e-6, substitution neighbours, Zipf sigmas, mu = 0):

A  direct simulation through the mechanisms (egmlib.mechanisms.algorithm3 and
   the baseline egmlib.mechanisms.clipped_gaussian_mechanism) for the Figure 2 grid
   d in {10, 100, 1000}, n in {1e3, ..., 1e6},
   alpha in {0.5, 1, 2, 5}, at p_C = 1/n and at each method's optimal p_C: the squared
   error split into noise and clipping error, means with 95% confidence intervals;
B  the p_C sweep: total error = exact noise error + n E||D||^2, where D is the clipping
   loss of one row, estimated by the per-row model of egmbook.clipping_error (the coordinate
   of largest variance integrated exactly, the others drawn with exponential tilting, common
   random numbers; its Monte Carlo standard error is stored with every value); the
   optimal p_C per method, searched freely over every radius with a bracket check
   (egmbook.clipping_error.optimal_radius), and the improvement at each method's optimum;
   a quadrature cross-check of the baseline's E||D||^2 (gchisq.sf) and a direct
   simulation of the whole p_C curve for two configurations;
C  a wrong centre: mu_hat = mu + c sigma (c in {0, 0.1, 0.5, 1, 2}), an isotropic offset of
   the same norm (c ||sigma|| / sqrt(d) in every coordinate), and mu_hat from a private
   release on an independent batch; the radius re-optimised for each offset, freely;
D  standard deviations (and the centre) estimated from a public sample of size m;
E  the centre claim with real private centres: mu_hat released by the baseline (isotropic
   noise) or by Algorithm 3 on an independent batch of m rows, m in {1e4, 1e5, 1e6};
P  the privacy check: worst-case neighbouring datasets of Algorithm 3, the privacy loss
   of the actual release along the difference of the clipped sums, and the empirical
   delta at eps against delta and the Balle-Wang profile (also a negative control).
   Chapter 7 does not show it: it reads the mechanism's own noise-free sums and noise
   scales, so it restates Theorem 2; the book's privacy audit is a black-box attack on its
   own page.

Everything is seeded (numpy Generators spawned from one SeedSequence per experiment).
The library code lives in egmlib: the two mechanisms in egmlib.mechanisms (which
memoise their radius), the radii in egmbook.experiments, the per-row error model and its
optimum over p_C in egmbook.clipping_error, the direct simulation in
egmbook.error_simulation, the privacy check in egmbook.privacy_check.  This script only
runs the experiments and writes their results; the summary it prints is read back
through egmbook.beyond_report, as the chapter reads it.
"""

from __future__ import annotations

import os

# Single-threaded BLAS for the error model's small products (egmbook.clipping_error,
# e.g. A @ mean): faster on a busy 2-core machine, and the summation order, hence the
# results file bit for bit, does not depend on the core count.  (The mechanisms
# themselves use no BLAS.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import dataclasses
import functools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from egmbook import experiments, privacy_check
from egmbook.beyond_report import BeyondReport, centre_improvements, load_beyond_report
from egmbook.cli import argument_parser
from egmbook.clipping_error import (
    ClippingOptimum,
    RowClipModel,
    RowDraws,
    baseline_clip_moment_exact,
    clipping_log10_probability,
    expected_error,
    noise_error_at_radius,
    optimal_radius,
    row_clip_moments,
)
from egmbook.error_simulation import mean_ci, simulate_errors
from egmbook.experiments import clipping_radii
from egmlib import calibration, mechanisms

EPS = 1.0
DELTA = 1e-6
SEED = 20230120  # the report's date
D_GRID = (10, 100, 1000)
N_GRID = (10**3, 10**4, 10**5, 10**6)
ALPHA_GRID = (0.5, 1.0, 2.0, 5.0)
METHODS = ("alg3", "base")
METHOD_NAMES = {"alg3": "Algorithm 3", "base": "clipped Gaussian mechanism"}
#: p_C grid of the sweep's curves (the figures): 1e-8 ... 0.5 on a log scale, then 1 - p
#: down to 1e-6.  The optima are not taken on it: they are searched over every radius
#: (optimal_radius below), since with a wrong centre they lie far beyond 1e-8.
P_GRID = np.concatenate([np.logspace(-8.0, math.log10(0.5), 23),
                         1.0 - np.logspace(math.log10(0.5), -6.0, 17)[1:]])
RESULTS = Path(__file__).resolve().parent.parent / "data"


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
@functools.cache
def zipf(d: int, alpha: float) -> np.ndarray:
    """Section 5's normalised Zipf standard deviations (egmbook.experiments), read-only."""
    s = experiments.zipf_sigmas(d, alpha=alpha)
    s.setflags(write=False)
    return s


@functools.cache
def sigma_opt() -> float:
    """Theorem 2 / eq. (2): sigma_opt(eps, delta) for unit sensitivity."""
    return float(calibration.sigma_opt(eps=EPS, delta=DELTA))


def noise_error(method, sigma, C):
    """Predicted E||eta||^2 at EPS, DELTA: eq. (24) (Algorithm 3) or eq. (5) with ||Delta|| = 2 C_n."""
    return noise_error_at_radius(method, sigma=sigma, C=C, sigma_opt=sigma_opt())


def run_mechanism(method, X, *, sigma, mu_hat, p_clip, noise, rng=None):
    """Algorithm 3 or the baseline (egmlib.mechanisms.METHODS) on X at EPS, DELTA."""
    return mechanisms.METHODS[method](X, sigma=sigma, mu_hat=mu_hat, eps=EPS, delta=DELTA, rng=rng,
                                      p_clip=p_clip, noise=noise)


# --------------------------------------------------------------------------------------
# the free optimum over the radius (equivalently over p_C)
# --------------------------------------------------------------------------------------
#: The radii searched for an optimum (egmbook.clipping_error.optimal_radius): 0 and a
#: geometric grid from RADIUS_RANGE[0] to RADIUS_RANGE[1] times the method's median radius
#: (p_C = 1/2), RADIUS_PER_DECADE points per decade, refined by bounded Brent.  An optimum
#: at the upper end stops the run (optimal_radius raises); C = 0 is the data-free release.
RADIUS_RANGE = (1e-3, 1e4)
RADIUS_PER_DECADE = 5


@functools.cache
def median_radius(method, d, alpha):
    """The method's radius at p_C = 1/2 for the Zipf sigma of (d, alpha): the search's unit."""
    return float(clipping_radii(zipf(d, alpha), p=0.5).of(method))


def moments_at(Z, method, sigma, offset=None):
    """C -> RowClipModel(Z, ...).moments(C) memoised by the value of C: the scan of the search is
    shared by every n, whose error curves differ only in the weights of the same moments."""
    return functools.cache(RowClipModel(Z, method=method, sigma_data=sigma, offset=offset).moments)


def search(error, method, d, alpha):
    """optimal_radius over RADIUS_RANGE (in units of the median radius); a dict for the JSON."""
    unit = median_radius(method, d, alpha)
    return optimal_radius(error, C_lo=RADIUS_RANGE[0] * unit, C_hi=RADIUS_RANGE[1] * unit,
                          per_decade=RADIUS_PER_DECADE)


def offset_errors(method, sigma, moms, n):
    """C -> the errors noise + n E||D||^2 + n (n - 1) ||E D||^2 (Proposition 7.A), one per
    centre whose memoised moments are in ``moms`` (m2 < 0, Monte Carlo noise, counts as 0)."""
    def errors(C):
        nz = noise_error(method, sigma, C)
        return np.array([nz + n * r.e2 + n * (n - 1.0) * max(r.m2, 0.0) for r in (mo(C) for mo in moms)])
    return errors


#: Rows of the per-row model (egmbook.clipping_error.row_clip_moments): about
#: rows_elems / d, clipped to these bounds.  The model integrates the coordinate of
#: largest variance exactly and the centre term through the size-biasing identity, so a
#: few thousand rows put its relative standard error near or below 0.1 % (it is stored
#: with every value; see the search's value_se).
ROWS_B = (10000, 20000)
ROWS_CD = (8000, 16000)
ROWS_E = (4000, 8000)  # experiment E: its interval over the random centres dwarfs the model's error


def rows_for(d, rows_elems, bounds):
    """Rows of standard normals for dimension d: rows_elems / d within ``bounds``."""
    return int(min(bounds[1], max(bounds[0], rows_elems // d)))


#: The rows an experiment draws from its own generator before its other random draws (the private
#: centres, public samples and batches), about STREAM_ELEMS / d of them, at least 2000, as the book's
#: results have always drawn them: the other draws then stay the same whatever the model's size.
STREAM_ELEMS = {"C": 5e5, "D": 5e5, "E": 2.5e5}


def model_draws(rng, d, rows, *, stage, seed, key):
    """``rows`` rows of standard normals for the per-row model: the experiment's first draws from ``rng``
    (STREAM_ELEMS), then, if the model wants more, rows from a stream of their own (seeded by ``seed``,
    the stage and ``key``), so that ``rng``'s later draws do not depend on ``rows``."""
    first = rng.standard_normal((max(2000, int(STREAM_ELEMS[stage] // d)), d))
    if rows <= first.shape[0]:
        return RowDraws(first[:rows])
    own = np.random.default_rng(np.random.SeedSequence([seed, 10, ord(stage), *key]))
    return RowDraws(np.vstack([first, own.standard_normal((rows - first.shape[0], d))]))


def with_se(s, r, n):
    """The search ``s`` with the Monte Carlo standard error of its value from the moments ``r``
    (RowClipMoments at the optimum): n E||D||^2 and n (n - 1) ||E D||^2 add their errors."""
    return dataclasses.replace(s, value_se=float(math.hypot(n * r.e2_se, n * (n - 1.0) * r.m2_se)))


def log10_pclip(method, sigma, C):
    """log10 of the exact-centre clipping probability at radius C (may lie far below 1e-308)."""
    return clipping_log10_probability(method, sigma=sigma, C=C)


# --------------------------------------------------------------------------------------
# B: the p_C sweep (model) and its optimum
# --------------------------------------------------------------------------------------
def exact_centre_optimum(method, d, alpha, n, mom, C_grid_min):
    """The radius minimising noise + n E||D||^2 (exact centre), found freely (optimal_radius)."""
    sigma = zipf(d, alpha)
    s = search(lambda C: noise_error(method, sigma, C) + n * mom(C).e2, method, d, alpha)
    r, noise = mom(s.C), noise_error(method, sigma, s.C)
    s = with_se(s, r, n)
    return ClippingOptimum(p_opt=10.0 ** log10_pclip(method, sigma, s.C), C_opt=s.C, noise=noise, bias=n * r.e2,
                           bias_se=n * r.e2_se, total=noise + n * r.e2, below_grid=s.C < C_grid_min, search=s)


def experiment_B(seed, rows_elems, p_grid, log):
    """p_C sweep of the per-row model for every (d, alpha) (the curves of the chapter's
    figures); the optimum for every n, searched freely over the radius."""
    ss = np.random.SeedSequence([seed, 2])
    out = {"p_grid": p_grid.tolist(), "configs": []}
    for d, child in zip(D_GRID, ss.spawn(len(D_GRID)), strict=True):
        N = rows_for(d, rows_elems, ROWS_B)
        Z = RowDraws(np.random.default_rng(child).standard_normal((N, d)))
        for alpha in ALPHA_GRID:
            t0 = time.time()
            sigma = zipf(d, alpha)
            radii = clipping_radii(sigma, p=p_grid)
            cfg = {"d": d, "alpha": alpha, "rows": N, "trace": float(np.sum(sigma**2)),
                   "fig2_improvement": None, "methods": {}}
            for method in METHODS:
                Cs = radii.of(method)
                mom = moments_at(Z, method, sigma)
                res = [mom(float(c)) for c in Cs]
                noise = np.array([noise_error(method, sigma, c) for c in Cs])
                per_n, at_1n = {}, {}
                for n in N_GRID:
                    per_n[str(n)] = dataclasses.asdict(exact_centre_optimum(method, d, alpha, n, mom, float(Cs[-1])))
                    C1 = float(clipping_radii(sigma, p=1.0 / n).of(method))
                    r1 = mom(C1)
                    nz1 = noise_error(method, sigma, C1)
                    at_1n[str(n)] = {"C": C1, "noise": nz1, "bias": n * r1.e2, "bias_se": n * r1.e2_se,
                                     "total": nz1 + n * r1.e2, "pclip": r1.pclip}
                cfg["methods"][method] = {
                    "C": Cs.tolist(), "noise": noise.tolist(), "e2": [r.e2 for r in res],
                    "e2_se": [r.e2_se for r in res], "pclip": [r.pclip for r in res],
                    "pclip_se": [r.pclip_se for r in res], "opt": per_n, "at_1n": at_1n}
            cfg["fig2_improvement"] = {str(n): experiments.figure2_improvement(sigma, n=n) for n in N_GRID}
            out["configs"].append(cfg)

            def fmt(o):
                return f"{o['p_opt']:.1e}" if not o["below_grid"] else f"C={o['C_opt']:.2g}"
            log(f"  B d={d:5d} alpha={alpha:3.1f}: {time.time() - t0:5.1f} s; " + ", ".join(
                f"n={n:.0e} p*={fmt(cfg['methods']['alg3']['opt'][str(n)])}/"
                f"{fmt(cfg['methods']['base']['opt'][str(n)])}" for n in N_GRID))
    return out


# --------------------------------------------------------------------------------------
# A: direct simulation through the mechanisms
# --------------------------------------------------------------------------------------
def simulate_direct(d, n, p_lists, reps, rng, *, mu_offsets=None):
    """Both mechanisms on reps datasets of n rows x ~ N(0, diag(sigma_alpha^2)), through
    egmbook.clipping_error.simulate_errors (all alphas share the standard normals).

    p_lists: {(alpha, method): [p, ...]}; mu_offsets: {name: {alpha: offset vector}}
    (default: only the exact centre mu_hat = mu = 0).  Returns {(alpha, method, p, name):
    SimulatedErrors}.
    """
    if mu_offsets is None:
        mu_offsets = {"exact": None}
    keys = [(a, m, p, name) for (a, m), ps in p_lists.items() for p in ps for name in mu_offsets]
    sigmas = {a: zipf(d, a) for a in sorted({a for a, _ in p_lists})}
    runs = [(a, m, p, None if mu_offsets[name] is None else mu_offsets[name][a]) for (a, m, p, name) in keys]
    sim = simulate_errors(n, sigmas=sigmas, runs=runs, reps=reps, rng=rng, eps=EPS, delta=DELTA)
    return dict(zip(keys, sim, strict=True))


def extra_noise_draws(method, sigma, p, k, rng):
    """k further draws of the mechanism's noise vector (a 2-row dataset; the noise does
    not depend on the data), to tighten the confidence interval of the noise part."""
    X = np.zeros((2, len(sigma)))
    out = []
    for _ in range(k):
        e = np.array(run_mechanism(method, X, sigma=sigma, mu_hat=np.zeros(len(sigma)), p_clip=p,
                                   noise=True, rng=rng).noise)
        out.append(float(e @ e))
    return out


def reps_for(n, d, budget):
    """Repetitions of a Figure 2 configuration: about budget / (n d) (at most 400), at
    least 2 for a confidence interval, and 1 for the largest (n d = 10^9) case."""
    if n * d >= 10**9:
        return 1
    return int(min(400, max(2, round(budget / (n * d)))))


def experiment_A(seed, B, budget, min_noise_draws, log):
    """Direct simulation at p_C = 1/n and at each method's optimum from B."""
    ss = np.random.SeedSequence([seed, 1])
    children = iter(ss.spawn(len(D_GRID) * len(N_GRID)))
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    out = []
    for d in D_GRID:
        for n in N_GRID:
            rng = np.random.default_rng(next(children))
            reps = reps_for(n, d, budget)
            p_lists = {}
            for a in ALPHA_GRID:
                for m in METHODS:
                    ps = [1.0 / n]
                    o = bycfg[(d, a)]["methods"][m]["opt"][str(n)]
                    # the largest configuration: p = 1/n only; optima below the grid
                    # (p_C within 1e-6 of 1) are not run through the mechanisms
                    if n * d < 10**9 and not o["below_grid"]:
                        ps.append(o["p_opt"])
                    p_lists[(a, m)] = ps
            t0 = time.time()
            sim = simulate_direct(d, n, p_lists, reps, rng)
            t_sim = time.time() - t0
            for (a, m, p, _), r in sim.items():
                sigma = zipf(d, a)
                C = float(clipping_radii(sigma, p=p).of(m))
                noise_pred = noise_error(m, sigma, C)
                extra = extra_noise_draws(m, sigma, p, max(0, min_noise_draws - reps), rng)
                noise_all = r.noise2.tolist() + extra
                nm, nse, nci = mean_ci(noise_all)
                bm, bse, bci = mean_ci(r.bias2)
                tm, tse, tci = mean_ci(r.total2)
                out.append({
                    "d": d, "n": n, "alpha": a, "method": m, "p": p, "is_opt": p != 1.0 / n,
                    "reps": reps, "noise_draws": len(noise_all), "C": C,
                    "noise_pred": noise_pred, "noise_mean": float(nm), "noise_se": float(nse), "noise_ci": float(nci),
                    "bias_mean": float(bm), "bias_se": float(bse), "bias_ci": float(bci),
                    "total_mean": float(tm), "total_se": float(tse), "total_ci": float(tci),
                    "nclip_mean": float(np.mean(r.n_clipped)), "trace_n": float(n * np.sum(sigma**2)),
                })
            log(f"  A d={d:5d} n={n:.0e}: {reps:3d} reps, {t_sim:6.1f} s")
    return out


# --------------------------------------------------------------------------------------
# C: a wrong centre
# --------------------------------------------------------------------------------------
CENTRE_OFFSETS = (0.0, 0.1, 0.5, 1.0, 2.0)
C_CONFIGS = [(d, a) for d in D_GRID for a in (1.0, 2.0)]


def offset_vector(shape, c, sigma):
    """mu_hat - mu: c sigma_j in every coordinate ('prop'), or the same Euclidean norm
    c ||sigma|| spread equally over the coordinates ('iso', the shape of the error of an
    isotropic private mean estimate)."""
    if shape == "prop":
        return c * sigma
    return np.full(len(sigma), c * float(np.linalg.norm(sigma)) / math.sqrt(len(sigma)))


def experiment_C(seed, B, rows_elems, batch_draws, log):
    """Wrong centre, per-row model.  For each offset: the error at p_C = 1/n, at the
    optimum p*_0 found for the exact centre, and at the radius re-optimised for that offset
    (a free search over every radius, optimal_radius), each relative to the optimum with the
    exact centre.  Plus mu_hat from a private release on an independent batch."""
    ss = np.random.SeedSequence([seed, 3])
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    out = []
    for (d, a), child in zip(C_CONFIGS, ss.spawn(len(C_CONFIGS)), strict=True):
        t0 = time.time()
        rng = np.random.default_rng(child)
        Z = model_draws(rng, d, rows_for(d, rows_elems, ROWS_CD), stage="C", seed=seed, key=(d, int(10 * a)))
        sigma = zipf(d, a)
        tr = float(np.sum(sigma**2))
        for m in METHODS:
            opt = bycfg[(d, a)]["methods"][m]["opt"]
            # the special radii: p_C = 1/n and the exact-centre optimum C*_0(n) for every n
            C1 = clipping_radii(sigma, p=np.array([1.0 / n for n in N_GRID])).of(m)
            special = {("1/n", n): float(C1[i]) for i, n in enumerate(N_GRID)}
            special.update({("opt0", n): opt[str(n)]["C_opt"] for n in N_GRID})
            Cs = np.array(list(special.values()))
            noise = np.array([noise_error(m, sigma, c) for c in Cs])
            mom_exact = moments_at(Z, m, sigma)
            mom0 = [mom_exact(float(c)) for c in Cs]
            e2_0 = np.array([r.e2 for r in mom0])
            e2_0se = np.array([r.e2_se for r in mom0])
            k_special = {key: i for i, key in enumerate(special)}
            mse_star = {n: float(noise[k_special[("opt0", n)]] + n * e2_0[k_special[("opt0", n)]]) for n in N_GRID}
            rec = {"d": d, "alpha": a, "method": m, "trace": tr, "mse_star": {str(n): mse_star[n] for n in N_GRID},
                   "mse_star_se": {str(n): float(n * e2_0se[k_special[("opt0", n)]]) for n in N_GRID},
                   "mse_1n": {str(n): float(noise[k_special[("1/n", n)]] + n * e2_0[k_special[("1/n", n)]])
                              for n in N_GRID},
                   "mse_1n_se": {str(n): float(n * e2_0se[k_special[("1/n", n)]]) for n in N_GRID},
                   "offsets": {}}
            for shape in ("prop", "iso"):
                rows = []
                for c in CENTRE_OFFSETS[1:]:
                    off = offset_vector(shape, c, sigma)
                    mom_c = moments_at(Z, m, sigma, offset=off)
                    mom = [mom_c(float(cc)) for cc in Cs]
                    e2 = np.array([r.e2 for r in mom])
                    m2 = np.array([r.m2 for r in mom])
                    e2se = np.array([r.e2_se for r in mom])
                    m2se = np.array([r.m2_se for r in mom])
                    pcl = np.array([r.pclip for r in mom])
                    per_n = {}
                    for n in N_GRID:
                        tot = noise + n * e2 + n * (n - 1.0) * m2
                        err = offset_errors(m, sigma, [mom_c], n)
                        s_n = search(lambda C, err=err: float(err(C)[0]), m, d, a)
                        s_n = with_se(s_n, mom_c(s_n.C), n)
                        i1, io = k_special[("1/n", n)], k_special[("opt0", n)]
                        per_n[str(n)] = {
                            "ratio_1n": float(tot[i1] / mse_star[n]), "ratio_opt0": float(tot[io] / mse_star[n]),
                            "ratio_reopt": s_n.value / mse_star[n], "C_reopt": s_n.C,
                            "log10_p_reopt": log10_pclip(m, sigma, s_n.C), "search": dataclasses.asdict(s_n),
                            "sys_share_opt0": float(n * (n - 1.0) * m2[io] / tot[io]),
                            "mse_1n": float(tot[i1]), "mse_opt0": float(tot[io]),
                            "mse_1n_se": float(math.hypot(n * e2se[i1], n * (n - 1.0) * m2se[i1])),
                            "mse_opt0_se": float(math.hypot(n * e2se[io], n * (n - 1.0) * m2se[io])),
                            "pclip_1n": float(pcl[i1]), "pclip_opt0": float(pcl[io])}
                    rows.append({"c": c, "per_n": per_n})
                rec["offsets"][shape] = rows
            # mu_hat from a private release on an independent batch of n rows (same method,
            # p = 1/n, exact centre): mu_hat - mu = (batch sum - n mu + eta') / n.
            batch = {}
            for n in N_GRID:
                i1, io = k_special[("1/n", n)], k_special[("opt0", n)]
                r1, ro, offn = [], [], []
                for _ in range(batch_draws):
                    eta = np.array(run_mechanism(m, np.zeros((2, d)), sigma=sigma, mu_hat=np.zeros(d),
                                                 p_clip=1.0 / n, noise=True, rng=rng).noise)
                    off = (rng.standard_normal(d) * sigma * math.sqrt(n) + eta) / n
                    offn.append(float(np.sqrt(np.mean((off / sigma) ** 2))))
                    for i, acc in ((i1, r1), (io, ro)):
                        r = row_clip_moments(Z, method=m, C=Cs[i], sigma_data=sigma, offset=off)
                        acc.append(expected_error(noise[i], e2=r.e2, m2=r.m2, n=n) / mse_star[n])
                m1, _, c1 = mean_ci(r1)
                mo, _, co = mean_ci(ro)
                batch[str(n)] = {"ratio_1n": float(m1), "ratio_1n_ci": float(c1), "ratio_opt0": float(mo),
                                 "ratio_opt0_ci": float(co), "offset_rms_sigma": float(np.mean(offn)),
                                 "draws": batch_draws}
            rec["private_batch"] = batch
            out.append(rec)
        log(f"  C d={d:5d} alpha={a:3.1f}: {time.time() - t0:5.1f} s")
    return out


def experiment_C_direct(seed, B, reps, log):
    """Direct-simulation check of the offset model: d = 100, alpha = 2, n = 1e4."""
    d, a, n = 100, 2.0, 10**4
    rng = np.random.default_rng(np.random.SeedSequence([seed, 4]))
    sigma = zipf(d, a)
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    p_lists = {(a, m): [1.0 / n, bycfg[(d, a)]["methods"][m]["opt"][str(n)]["p_opt"]] for m in METHODS}
    offs = {f"{shape}{c}": {a: offset_vector(shape, c, sigma)} for shape in ("prop", "iso") for c in (0.1, 0.5)}
    offs["exact"] = None
    t0 = time.time()
    sim = simulate_direct(d, n, p_lists, reps, rng, mu_offsets=offs)
    out = []
    for (_, m, p, name), r in sim.items():
        tm, tse, tci = mean_ci(r.total2)
        bm, bse, bci = mean_ci(r.bias2)
        out.append({"d": d, "alpha": a, "n": n, "method": m, "p": p, "offset": name, "reps": reps,
                    "total_mean": float(tm), "total_ci": float(tci), "bias_mean": float(bm),
                    "bias_ci": float(bci), "nclip_mean": float(np.mean(r.n_clipped))})
    log(f"  C direct d={d} alpha={a} n={n:.0e}: {reps} reps, {time.time() - t0:5.1f} s")
    return out


# --------------------------------------------------------------------------------------
# E: the centre claim with real private centres
# --------------------------------------------------------------------------------------
E_CONFIGS = [(d, a) for d in (100, 1000) for a in (1.0, 2.0)]
E_M = (10**4, 10**5, 10**6)
E_SOURCES = ("base", "alg3")
E_DRAWS = 6
E_ROWS_ELEMS = 2.5e5


def private_centre_offset(source, sigma, m, rng):
    """mu_hat - mu for the centre released by ``source`` (the baseline or Algorithm 3, at
    p_C = 1/m, clipped around the true mean) on an independent batch of m rows, divided by
    m: the batch's sampling error sigma z / sqrt(m) plus the release's own noise / m.  The
    noise is the mechanism's actual draw (a 2-row call; the noise does not depend on the
    data); the batch's clipping at p_C = 1/m is left out (about one row clipped)."""
    d = len(sigma)
    eta = np.array(run_mechanism(source, np.zeros((2, d)), sigma=sigma, mu_hat=np.zeros(d), p_clip=1.0 / m,
                                 noise=True, rng=rng).noise)
    return (rng.standard_normal(d) * sigma * math.sqrt(m) + eta) / m


def experiment_E(seed, B, log):
    """The centre claim tested with real private centres.  For each (d, alpha), source of
    the centre (the baseline's isotropic release or Algorithm 3's own) and batch size m:
    E_DRAWS independent centres; for each method and n, the mean error with that centre at
    p_C = 1/n, at the exact-centre optimum p*_0 and at the radius that minimises the mean error
    over the draws (a free search over every radius, optimal_radius), each over the exact
    centre's error at the same p_C (1/n, p*_0) or at p*_0 (re-optimised)."""
    ss = np.random.SeedSequence([seed, 9])
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    out = []
    for (d, a), child in zip(E_CONFIGS, ss.spawn(len(E_CONFIGS)), strict=True):
        t0 = time.time()
        rng = np.random.default_rng(child)
        Z = model_draws(rng, d, rows_for(d, E_ROWS_ELEMS, ROWS_E), stage="E", seed=seed, key=(d, int(10 * a)))
        sigma = zipf(d, a)
        offsets = {(src, m): [private_centre_offset(src, sigma, m, rng) for _ in range(E_DRAWS)]
                   for src in E_SOURCES for m in E_M}
        for meth in METHODS:
            opt = bycfg[(d, a)]["methods"][meth]["opt"]
            C1 = clipping_radii(sigma, p=np.array([1.0 / n for n in N_GRID])).of(meth)
            C1 = {n: float(C1[i]) for i, n in enumerate(N_GRID)}
            Co = {n: opt[str(n)]["C_opt"] for n in N_GRID}
            mom0 = moments_at(Z, meth, sigma)
            exact_1n = {n: noise_error(meth, sigma, C1[n]) + n * mom0(C1[n]).e2 for n in N_GRID}
            exact_o = {n: noise_error(meth, sigma, Co[n]) + n * mom0(Co[n]).e2 for n in N_GRID}
            for src in E_SOURCES:
                for m in E_M:
                    moms = [moments_at(Z, meth, sigma, offset=off) for off in offsets[(src, m)]]
                    per_n = {}
                    for n in N_GRID:
                        totals = offset_errors(meth, sigma, moms, n)
                        r1, _, c1 = mean_ci(totals(C1[n]) / exact_1n[n])
                        ro, _, co = mean_ci(totals(Co[n]) / exact_o[n])
                        s_n = search(lambda C, totals=totals: float(np.mean(totals(C))), meth, d, a)
                        rr, _, cr = mean_ci(totals(s_n.C) / exact_o[n])
                        per_n[str(n)] = {"ratio_1n": float(r1), "ratio_1n_ci": float(c1), "ratio_opt0": float(ro),
                                         "ratio_opt0_ci": float(co), "ratio_reopt": float(rr),
                                         "ratio_reopt_ci": float(cr), "C_reopt": s_n.C,
                                         "log10_p_reopt": log10_pclip(meth, sigma, s_n.C),
                                         "search": dataclasses.asdict(s_n),
                                         "mse_exact_opt0": float(exact_o[n]), "mse_reopt": s_n.value}
                    rms = [float(np.sqrt(np.mean((o / sigma) ** 2))) for o in offsets[(src, m)]]
                    out.append({"d": d, "alpha": a, "source": src, "m": m, "method": meth, "draws": E_DRAWS,
                                "offset_rms_sigma": float(np.mean(rms)), "per_n": per_n})
        log(f"  E d={d:5d} alpha={a:3.1f}: {time.time() - t0:5.1f} s")
    return out


# --------------------------------------------------------------------------------------
# D: standard deviations (and centre) from a public sample
# --------------------------------------------------------------------------------------
D_CONFIGS = [(d, a) for d in (10, 100) for a in (1.0, 2.0)]
D_M = (100, 1000)


def experiment_D(seed, B, rows_elems, draws, log):
    ss = np.random.SeedSequence([seed, 5])
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    out = []
    for (d, a), child in zip(D_CONFIGS, ss.spawn(len(D_CONFIGS)), strict=True):
        t0 = time.time()
        rng = np.random.default_rng(child)
        Z = model_draws(rng, d, rows_for(d, rows_elems, ROWS_CD), stage="D", seed=seed, key=(d, int(10 * a)))
        sigma = zipf(d, a)
        plist = []  # (n, kind, method, p)
        for n in (N_GRID[1], N_GRID[-1]):
            for m in METHODS:
                plist.append((n, "1/n", m, 1.0 / n))
                o = bycfg[(d, a)]["methods"][m]["opt"][str(n)]
                if o["below_grid"]:
                    raise RuntimeError(f"D: optimum below the p_C grid for d={d}, alpha={a}, n={n}")
                plist.append((n, "opt", m, o["p_opt"]))
        known = {}
        for (n, kind, m, p) in plist:
            C = float(clipping_radii(sigma, p=p).of(m))
            noise = noise_error(m, sigma, C)
            r = row_clip_moments(Z, method=m, C=C, sigma_data=sigma)
            known[(n, kind, m)] = expected_error(noise, e2=r.e2, m2=0.0, n=n)
        for msize in D_M:
            acc = {(n, kind, m, v): [] for (n, kind, m, _) in plist for v in ("sigma", "sigma+mu")}
            pcl = {k: [] for k in acc}
            for _ in range(draws):
                pub = rng.standard_normal((msize, d)) * sigma
                s_hat = pub.std(axis=0, ddof=1)
                mu_pub = pub.mean(axis=0)
                ps = np.array(sorted({p for (_, _, _, p) in plist}))
                radii_h = clipping_radii(s_hat, p=ps)
                for (n, kind, m, p) in plist:
                    i = int(np.searchsorted(ps, p))
                    C = float(radii_h.of(m)[i])
                    noise = noise_error(m, s_hat, C)
                    for v, off in (("sigma", None), ("sigma+mu", mu_pub)):
                        r = row_clip_moments(Z, method=m, C=C, sigma_data=sigma, sigma_mech=s_hat, offset=off)
                        acc[(n, kind, m, v)].append(expected_error(noise, e2=r.e2, m2=r.m2, n=n) / known[(n, kind, m)])
                        pcl[(n, kind, m, v)].append(r.pclip / p)
            for (n, kind, m, v), ratios in acc.items():
                rm, rse, rci = mean_ci(ratios)
                out.append({"d": d, "alpha": a, "m": msize, "n": n, "p_kind": kind, "method": m, "variant": v,
                            "ratio_mean": float(rm), "ratio_ci": float(rci),
                            "ratio_q90": float(np.quantile(ratios, 0.9)),
                            "pclip_ratio_median": float(np.median(pcl[(n, kind, m, v)])), "draws": draws})
        log(f"  D d={d:5d} alpha={a:3.1f}: {time.time() - t0:5.1f} s")
    return out


def experiment_D_direct(seed, B, reps, log):
    """Direct-simulation check of D: d = 10, alpha = 2, n = 1e4, m = 100, sigma from the sample."""
    d, a, n, msize = 10, 2.0, 10**4, 100
    rng = np.random.default_rng(np.random.SeedSequence([seed, 6]))
    sigma = zipf(d, a)
    bycfg = {(c["d"], c["alpha"]): c for c in B["configs"]}
    t0 = time.time()
    tot = {(m, k): [] for m in METHODS for k in ("known", "estimated")}
    for _ in range(reps):
        pub = rng.standard_normal((msize, d)) * sigma
        s_hat = pub.std(axis=0, ddof=1)
        X = rng.standard_normal((n, d)) * sigma
        true = X.sum(axis=0)
        for m in METHODS:
            p = bycfg[(d, a)]["methods"][m]["opt"][str(n)]["p_opt"]
            for k, s in (("known", sigma), ("estimated", s_hat)):
                r = run_mechanism(m, X, sigma=s, mu_hat=np.zeros(d), p_clip=p, noise=True, rng=rng)
                e = np.array(r.sum) - true
                tot[(m, k)].append(float(e @ e))
    out = []
    for m in METHODS:
        known = np.array(tot[(m, "known")])
        est = np.array(tot[(m, "estimated")])
        km, _, kci = mean_ci(known)
        em, _, eci = mean_ci(est)
        out.append({"d": d, "alpha": a, "n": n, "m": msize, "method": m, "reps": reps,
                    "known_mean": float(km), "known_ci": float(kci), "est_mean": float(em), "est_ci": float(eci),
                    "ratio": float(em / km)})
    log(f"  D direct d={d} alpha={a} n={n:.0e} m={msize}: {reps} reps, {time.time() - t0:5.1f} s")
    return out


# --------------------------------------------------------------------------------------
# P: the privacy check
# --------------------------------------------------------------------------------------
def experiment_P(seed, n_mc, n_outputs, log):
    ss = np.random.SeedSequence([seed, 7])
    cfgs = [(d, a) for d in D_GRID for a in (1.0, 5.0)]
    out = []
    for (d, a), child in zip(cfgs, ss.spawn(len(cfgs)), strict=True):
        t0 = time.time()
        check = privacy_check.privacy_check(zipf(d, a), n=1000, eps=EPS, delta=DELTA,
                                            rng=np.random.default_rng(child), n_mc=n_mc, n_outputs=n_outputs)
        res = {"d": d, "alpha": a, **check.as_dict()}
        out.append(res)
        ok = res["delta_mc"] <= DELTA + 4 * res["delta_mc_se"] and res["delta_is"] <= DELTA + 4 * res["delta_is_se"]
        log(f"  P d={d:5d} alpha={a:3.1f}: delta_mc={res['delta_mc']:.3e}+-{res['delta_mc_se']:.1e} "
            f"delta_is={res['delta_is']:.5e}+-{res['delta_is_se']:.1e} ({'ok' if ok else 'EXCEEDS'}), "
            f"{time.time() - t0:4.1f} s")
    return out


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------
def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    return x


def stage_B(args, settings, log):
    B = experiment_B(args.seed, settings["rows_elems_B"], P_GRID, log)
    log("B: quadrature cross-check of the baseline's E||D||^2")
    qc = []
    for c in B["configs"]:
        if args.quick and c["d"] > 10:
            continue
        idx = [5, 11, 17, 22, 28]
        ps = [P_GRID[i] for i in idx]
        exact = baseline_clip_moment_exact(zipf(c["d"], c["alpha"]), p=ps).tolist()
        model = [c["methods"]["base"]["e2"][i] for i in idx]
        se = [c["methods"]["base"]["e2_se"][i] for i in idx]
        qc.append({"d": c["d"], "alpha": c["alpha"], "p": ps, "quad": exact, "model": model, "model_se": se})
    B["quadrature"] = qc
    return {"B": B}


def stage_B_direct(args, settings, log, B):
    """Direct simulation of the whole p_C curve (every third grid point) for two configurations."""
    curve = []
    q = args.quick
    for (d, a, n, reps) in ((10, 2.0, 10**3, 30 if q else 300), (100, 2.0, 10**4, 10 if q else 60)):
        idx = list(range(0, len(P_GRID), 3))
        p_lists = {(a, m): [P_GRID[i] for i in idx] for m in METHODS}
        rng = np.random.default_rng(np.random.SeedSequence([args.seed, 8, d]))
        t0 = time.time()
        sim = simulate_direct(d, n, p_lists, reps, rng)
        for (_, m, p, _), r in sim.items():
            tm, tse, tci = mean_ci(r.total2)
            bm, bse, bci = mean_ci(r.bias2)
            curve.append({"d": d, "alpha": a, "n": n, "method": m, "p": p, "reps": reps,
                          "total_mean": float(tm), "total_ci": float(tci),
                          "bias_mean": float(bm), "bias_ci": float(bci)})
        log(f"  curve d={d} n={n:.0e}: {reps} reps, {time.time() - t0:5.1f} s")
    return {"B_direct": curve}


def stage_A(args, settings, log, B):
    return {"A": experiment_A(args.seed, B, settings["budget_A"], settings["min_noise_draws"], log)}


def stage_C(args, settings, log, B):
    return {"C": experiment_C(args.seed, B, settings["rows_elems_CD"], settings["batch_draws"], log),
            "C_direct": experiment_C_direct(args.seed, B, settings["reps_C_direct"], log)}


def stage_D(args, settings, log, B):
    return {"D": experiment_D(args.seed, B, settings["rows_elems_CD"], settings["draws_D"], log),
            "D_direct": experiment_D_direct(args.seed, B, settings["reps_D_direct"], log)}


def stage_E(args, settings, log, B):
    return {"E": experiment_E(args.seed, B, log)}


def stage_P(args, settings, log, B):
    return {"P": experiment_P(args.seed, settings["n_mc"], settings["n_outputs"], log)}


STAGES = {"B": "p_C sweep of the per-row model", "B_direct": "direct simulation of the p_C curve",
          "A": "direct simulation on the Figure 2 grid", "C": "wrong centre",
          "D": "standard deviations from a public sample", "E": "the centre claim with private centres",
          "P": "privacy check"}


def main(argv=None):
    ap = argument_parser(doc=__doc__)
    ap.add_argument("--quick", action="store_true", help="small smoke run (about a minute), separate output file")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", nargs="+", choices=[k for k in STAGES if k != "B"], default=None,
                    help="rerun only these stages, reusing B and the other stages from the existing output file")
    args = ap.parse_args(argv)
    q = args.quick
    if q:  # smoke run: the two smaller dimensions and sample sizes only
        global D_GRID, N_GRID, C_CONFIGS, E_CONFIGS, E_M, E_DRAWS
        D_GRID, N_GRID = (10, 100), (10**3, 10**4)
        C_CONFIGS = [(d, a) for d in D_GRID for a in (1.0, 2.0)]
        E_CONFIGS = [(100, 2.0)]
        E_M, E_DRAWS = (10**4,), 3
    out_path = args.out or RESULTS / ("beyond_report_quick.json" if q else "beyond_report.json")
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:6.1f} s] {msg}", flush=True)

    settings = {
        "eps": EPS, "delta": DELTA, "seed": args.seed, "quick": q, "sigma_opt": sigma_opt(),
        "rows_elems_B": 4e5 if q else 1e7, "budget_A": 2e6 if q else 2e7, "min_noise_draws": 50 if q else 400,
        "rows_elems_CD": 2e5 if q else 8e6, "batch_draws": 3 if q else 8, "draws_D": 4 if q else 12,
        "reps_C_direct": 10 if q else 100, "reps_D_direct": 10 if q else 100,
        "n_mc": 10**6 if q else 10**7, "n_outputs": 300 if q else 2000,
        "radius_range": list(RADIUS_RANGE), "radius_per_decade": RADIUS_PER_DECADE,
    }
    if args.only:
        results = json.loads(out_path.read_text())
        if results["settings"] != settings:
            raise SystemExit(f"--only: {out_path} was written with other settings; rerun everything")
        stages = args.only
    else:
        results = {"settings": settings, "timings": {}}
        stages = list(STAGES)
    funcs = {"B": stage_B, "B_direct": stage_B_direct, "A": stage_A, "C": stage_C, "D": stage_D, "E": stage_E,
             "P": stage_P}
    for name in stages:
        t = time.time()
        log(f"{name}: {STAGES[name]}")
        if name == "B":
            results.update(stage_B(args, settings, log))
        else:
            results.update(funcs[name](args, settings, log, results["B"]))
        results["timings"][name] = time.time() - t
    if not args.only:
        results["timings"]["total"] = time.time() - t_start
    RESULTS.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(_jsonable(results), indent=1))
    tmp.replace(out_path)
    log(f"wrote {out_path}")
    summary(load_beyond_report(out_path))
    return 0


def summary(res: BeyondReport) -> None:
    """Print the headline numbers, read back through the typed loader as chapter 7 reads them."""
    print("\nA: measured / predicted noise error at p = 1/n, and the clipping share of the total (model)")
    print(f"{'d':>5} {'n':>8} {'alpha':>5} {'method':>6} {'noise meas/pred (95% CI)':>25} "
          f"{'clip share':>11} {'reps':>5}")
    for r in res.direct:
        if r.is_opt:
            continue
        m = res.sweep.config(d=r.d, alpha=r.alpha).methods[r.method].at_1n[r.n]
        print(f"{r.d:5d} {r.n:8.0e} {r.alpha:5.1f} {r.method:>6} "
              f"{r.noise_mean / r.noise_pred:16.3f} +- {r.noise_ci / r.noise_pred:.3f} "
              f"{m.bias / m.total:11.1e} {r.reps:5d}")
    print("\nB: optimal p_C and the improvement of Algorithm 3 over the baseline")
    print(f"{'d':>5} {'alpha':>5} {'n':>8} {'p*_alg3':>9} {'p*_base':>9} {'Fig. 2 (noise, 1/n)':>20} "
          f"{'total, 1/n':>11} {'total, own p*':>14}")

    def fp(o):
        return f"{o.p_opt:9.2e}" if not o.below_grid else f"{'~1':>9}"

    for c in res.sweep.configs:
        for n in res.n_values:
            oa, ob = c.methods["alg3"].opt[n], c.methods["base"].opt[n]
            a1, b1 = c.methods["alg3"].at_1n[n], c.methods["base"].at_1n[n]
            print(f"{c.d:5d} {c.alpha:5.1f} {n:8.0e} {fp(oa)} {fp(ob)} "
                  f"{c.fig2_improvement[n]:20.3f} {b1.total / a1.total:11.3f} {ob.total / oa.total:14.3f}")
    for shape, what in (("prop", "0.1 sigma_j"), ("iso", "0.1 ||sigma|| / sqrt(d)")):
        print(f"\nC: error with mu_hat_j = mu_j + {what} relative to the optimum with the exact centre")
        print(f"{'d':>5} {'alpha':>5} {'method':>6} {'n':>8} {'at 1/n':>9} {'at p*_0':>9} {'re-optimised':>13} "
              f"{'log10 p_C':>10}")
        for cc in res.centre:
            for n in res.n_values:
                v = cc.offsets[shape][0].per_n[n]
                print(f"{cc.d:5d} {cc.alpha:5.1f} {cc.method:>6} {n:8.0e} {v.ratio_1n:9.3g} "
                      f"{v.ratio_opt0:9.3g} {v.ratio_reopt:13.3g} {v.log10_p_reopt:10.1f}")
    print("\nC: improvement of Algorithm 3 over the baseline, each at its own optimum (exact / prop. / iso.)")
    for ci in centre_improvements(res, c=0.1):
        print(f"{ci.d:5d} {ci.alpha:5.1f} {ci.n:8.0e} {ci.exact:9.3g} {ci.proportional:9.3g} {ci.isotropic:9.3g}")
    print("\nE: Algorithm 3's error with a centre released by the baseline on m independent rows, "
          "over its error with the exact centre (at 1/n / at p*_0 / re-optimised)")
    for pc in res.private_centre:
        if pc.source != "base" or pc.method != "alg3":
            continue
        for n in res.n_values:
            at_n = pc.per_n[n]
            print(f"{pc.d:5d} {pc.alpha:5.1f} m={pc.m:8.0e} n={n:8.0e} {at_n.ratio_1n:9.3g} {at_n.ratio_opt0:9.3g} "
                  f"{at_n.ratio_reopt:9.3g}")
    print(f"\nP: empirical delta at eps = {res.settings.eps:g} (delta = {res.settings.delta:g})")
    for pr in res.privacy:
        ch = pr.check
        print(f"  d={pr.d:5d} alpha={pr.alpha:3.1f}: MC {ch.delta_mc:.3e} +- {ch.delta_mc_se:.1e}, "
              f"IS {ch.delta_is:.6e} +- {ch.delta_is_se:.1e}, profile {ch.profile:.6e}")
    print("\nModel accuracy: largest relative Monte Carlo standard error of the per-row model's error")
    b_se = max(o.bias_se / o.total for c in res.sweep.configs for m in c.methods.values() for o in m.opt.values())
    c_se = {shape: max(v.search.value_se / v.search.value for c in res.centre for o in c.offsets[shape]
                       for v in o.per_n.values() if v.search.value_se is not None) for shape in ("prop", "iso")}
    print(f"  B, each method at its optimum (exact centre): {b_se:.2e}")
    print(f"  C, at the re-optimised radius: {c_se['prop']:.2e} (c sigma_j), {c_se['iso']:.2e} (isotropic)")
    print("\ntimings (s):", {k: round(v, 1) for k, v in res.timings.items()})


if __name__ == "__main__":
    sys.exit(main())
