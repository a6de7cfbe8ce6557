"""Benchmark and accuracy table of egmlib.gchisq (issue 3).

Run from the repository root:

    python benchmarks/gchisq.py            # full run, a few minutes
    python benchmarks/gchisq.py --quick    # no peers, fewer references

It prints tables (no assertions; the tests live in tests/test_gchisq.py):

1. the Figure 2 grid of the report (d in {10, 100, 1000}, n in {1e2, 1e3, 1e6},
   12 Zipf exponents, weights sigma_j^2 and sigma_j / sum sigma: 216 quantiles at
   p = 1/n): wall-clock and CPU time, best of 3, and what issue 14's checks cost
   (the same run with the hump analysis off and no check contour);
2. one quantile at d = 1e6 for several weight vectors, with the engine's own
   error estimate (two contours of different curvature must agree);
3. accuracy: closed forms (scipy.stats.chi2 for equal weights, a sum of
   exponentials in mpmath for weights of multiplicity two), a 30-digit mpmath
   evaluation of the inversion integral, issue 14's families (a few large
   weights over hundreds of equal ones against a 1-d convolution in mpmath;
   near-equal clusters, random clusters, many multiplicities against the
   vertical-line contour in double precision and in mpmath), extreme arguments
   from 5e-324 to the largest double against closed forms, the Figure 2 grid
   against the vertical-line contour, and round trips;
4. the report's published thresholds (C_n^2, C_t^2; chi2comb at absolute
   tolerance 1/n) against the exact quantiles, and the report's bisection rule
   alone (fed with the exact CDF);
5. peers: gx2 (PyPI; Das and Geisler, the report's reference [5]) on a subset
   with a time cap per quantile, and chi2comb when importable.

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, if set, are removed for this process only
(the script re-executes itself), as they slow a current numpy down.

To price the engine's checks it switches them off with the documented switch
``gchisq.engine_checks`` (the planner's hump analysis, the check contour); it reads the
engine's error estimates through ``WeightedChiSquare.sf_error``, and computes saddle points
and the saddlepoint approximation from the weights alone (``tests/gchisq_reference.py``).
"""

import os
import sys

_BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(v in os.environ for v in _BLAS_VARS) and "--keep-env" not in sys.argv:
    _env = {k: v for k, v in os.environ.items() if k not in _BLAS_VARS}
    _env["GCHISQ_BENCH_UNSET"] = ",".join(v for v in _BLAS_VARS if v in os.environ)
    os.execve(sys.executable, [sys.executable] + sys.argv, _env)

import csv  # noqa: E402
import importlib.util  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy import stats  # noqa: E402

from egmbook.cli import argument_parser  # noqa: E402
from egmbook.experiments import FIGURE2_ALPHA, FIGURE2_D, FIGURE2_N  # noqa: E402
from egmbook.experiments import zipf_sigmas as zipf
from egmlib import gchisq  # noqa: E402


def _load_references():
    """The slow independent references (mpmath quadrature, closed forms) live with the tests, in
    tests/gchisq_reference.py: load that file as a module by its path, so that nothing edits
    sys.path (the tests import it as pytest puts their folder on the path)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "gchisq_reference.py"
    spec = importlib.util.spec_from_file_location("gchisq_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_references()
hypoexp_sf, mp_sf = ref.hypoexp_sf, ref.mp_sf

ALPHA = list(FIGURE2_ALPHA)
FIG2_D = list(FIGURE2_D)
FIG2_N = list(FIGURE2_N)
QUICK = "--quick" in sys.argv
ROOT = Path(__file__).resolve().parents[1]


def fig2_weights():
    """[(d, alpha, kind, w)]: kind 'n' -> sigma^2 (C_n^2), 't' -> sigma/sum sigma (C_t^2)."""
    out = []
    for d in FIG2_D:
        for a in ALPHA:
            s = zipf(d, alpha=a)
            out.append((d, a, "n", s * s))
            out.append((d, a, "t", s / s.sum()))
    return out


def timed(fn, repeat=3):
    """(result, best wall seconds, best CPU seconds) over `repeat` runs."""
    best_w = best_c = math.inf
    res = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        best_w = min(best_w, time.perf_counter() - t0)
        best_c = min(best_c, time.process_time() - c0)
    return res, best_w, best_c


def header(title):
    print()
    print(title)
    print("=" * len(title))


# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------

def quantile_rel_err(dist, x, p, p_ref):
    """Relative error of the quantile x implied by the reference tail p_ref = P(Q > x):
    |log(p_ref / p)| / (x |d log P / dx|)."""
    h = 1e-6
    slope = abs(float(dist.logsf(x * (1 + h)) - dist.logsf(x * (1 - h)))) / (2 * h * x)
    return abs(math.log(p_ref / p)) / (x * slope)


def unchecked():
    """The engine without issue 14's checks (no hump analysis, no check contour), to measure
    what they cost."""
    return gchisq.engine_checks(hump_analysis=False, check_contour=False)


def chi2comb_available():
    """(True, "") if the optional package chi2comb imports, else (False, the reason)."""
    try:
        import chi2comb  # noqa: F401
    except Exception as exc:  # ImportError, or its C library failing to load
        return False, f"chi2comb not importable ({type(exc).__name__}: {exc})"
    return True, ""


# ---------------------------------------------------------------------------
# sections
# ---------------------------------------------------------------------------

def section_env():
    header("Environment")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"mpmath {mpmath.__version__}, machine {platform.machine()}, cores {os.cpu_count()}")
    unset = os.environ.get("GCHISQ_BENCH_UNSET", "")
    print("OPENBLAS variables unset for this run: " + (unset or "none were set"))
    try:
        la = os.getloadavg()
        print(f"load average at start: {la[0]:.2f} (timings are best of 3; CPU time is "
              "process time and less sensitive to other load)")
    except OSError:
        pass


def section_grid(weights):
    header("Figure 2 grid: 216 quantiles at p = 1/n (one WeightedChiSquare per weight vector, "
           "the three n batched)")
    p = 1.0 / np.array(FIG2_N, dtype=float)

    def run():
        return {(d, a, k): gchisq.WeightedChiSquare(w).isf(p) for d, a, k, w in weights}

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        run()  # warm-up
        res, tw, tc = timed(run)
    print(f"{'d':>6} {'quantiles':>10} {'wall s':>8} {'CPU s':>8}")
    for d in FIG2_D:
        sub = [x for x in weights if x[0] == d]

        def run_d(sub=sub):
            return [gchisq.WeightedChiSquare(w).isf(p) for _, _, _, w in sub]

        _, twd, tcd = timed(run_d)
        print(f"{d:>6} {3 * len(sub):>10} {twd:>8.3f} {tcd:>8.3f}")
    print(f"{'all':>6} {3 * len(weights):>10} {tw:>8.3f} {tc:>8.3f}   (target <= 0.25 s)")
    with unchecked():
        run()
        _, tw0, tc0 = timed(run)
    print(f"without issue 14's checks (no hump analysis, no check contour): {tw0:.3f} s wall, "
          f"{tc0:.3f} s CPU; the checks cost {tc / tc0 - 1:+.0%} CPU")
    return res


def section_big():
    header("One quantile at d = 1e6 (p = 1e-6, set-up included)")
    d = 10 ** 6
    cases = [("equal weights", np.ones(d))]
    for a in (0.01, 0.5, 1.0, 2.0, 25.0, 100.0):
        s = zipf(d, alpha=a)
        cases.append((f"zipf alpha={a:g} sigma^2", s * s))
        cases.append((f"zipf alpha={a:g} sigma/sum", s / s.sum()))
    print(f"{'weights':<28} {'wall s':>8} {'CPU s':>8} {'|sf(x)/p - 1|':>14} {'check':>28}")
    worst = 0.0
    for name, w in cases:
        x, tw, tc = timed(lambda w=w: gchisq.isf(1e-6, w=w), repeat=2)
        dist = gchisq.WeightedChiSquare(w)
        rt = abs(float(dist.sf(x)) / 1e-6 - 1.0)
        if name == "equal weights":
            chk = f"vs chi2: {abs(x / stats.chi2.isf(1e-6, d) - 1):.1e}"
        else:
            est = float(dist.sf_error(x))
            chk = f"engine's estimate: {est:.1e}"
        worst = max(worst, tw)
        print(f"{name:<28} {tw:>8.3f} {tc:>8.3f} {rt:>14.1e} {chk:>28}")
    print(f"slowest: {worst:.3f} s wall (target <= 0.2 s)")


def _row(rows, fam, refname, cnt, ep, eq):
    rows.append((fam, refname, cnt, ep, eq))


def section_accuracy(grid, weights):
    header("Accuracy (relative errors; maxima over each family)")
    rows = []
    pgrid = np.array([1e-300, 1e-200, 1e-100, 1e-50, 1e-30, 1e-15, 1e-12, 1e-9, 1e-6, 1e-4, 1e-2,
                      0.1, 0.3, 0.5])
    # 1. equal weights, closed form
    for d in (1, 2, 10, 1000, 10 ** 5, 10 ** 6):
        dist = gchisq.WeightedChiSquare(np.full(d, 0.7))
        x = dist.isf(pgrid)
        refx = 0.7 * stats.chi2.isf(pgrid, d)
        eq = np.max(np.abs(x / refx - 1))
        ep = np.max(np.abs(dist.logsf(refx) - np.log(pgrid)))
        _row(rows, f"equal weights d={d}", "scipy.stats.chi2", pgrid.size, ep, eq)
    # 2. multiplicity two, sum of exponentials at 60 digits
    for v in ([1.0, 0.5], [1.0, 0.99], [1.0, 0.3, 0.1, 0.03, 0.01], [1.0, 1e-100, 1e-300],
              list(zipf(20, alpha=2.0) ** 2)):
        dist = gchisq.WeightedChiSquare(np.repeat(v, 2))
        x = dist.isf(pgrid)
        refp = [hypoexp_sf(v, xi) for xi in x]
        ep = max(abs(float(dist.logsf(xi)) - float(mpmath.log(r))) for xi, r in zip(x, refp, strict=True))
        eq = max(quantile_rel_err(dist, xi, pi, float(r)) for xi, pi, r in zip(x, pgrid, refp, strict=True))
        _row(rows, f"multiplicity 2, {len(v)} distinct", "closed form, mpmath 60 digits",
             pgrid.size, ep, eq)
    # 3. mpmath inversion integral at 30 digits, Figure 2 weights
    sel = [x for x in weights if x[0] == 10]
    if not QUICK:
        sel += [x for x in weights if x[0] == 100 and x[1] in (0.5, 2, 10)]
    for dd in sorted({x[0] for x in sel}):
        ep = eq = 0.0
        cnt = 0
        for d, a, k, w in sel:
            if d != dd:
                continue
            dist = gchisq.WeightedChiSquare(w)
            for pi, xi in zip(1.0 / np.array(FIG2_N, float), grid[(d, a, k)], strict=True):
                r = float(mp_sf(w, xi))
                ep = max(ep, abs(float(dist.sf(xi)) / r - 1))
                eq = max(eq, quantile_rel_err(dist, xi, pi, r))
                cnt += 1
        _row(rows, f"Figure 2 weights d={dd}", "mpmath quad, 30 digits", cnt, ep, eq)
    # 4. issue 14: a few large weights over hundreds of equal ones
    fams = [(1, 0.05, 500), (1, 0.1, 500), (2, 0.05, 1000), (2, 0.2, 100), (5, 0.1, 1000),
            (5, 0.5, 500), (3, 0.02, 800), (1, 0.5, 100)]
    if QUICK:
        fams = fams[:3]
    ps = np.array([1e-300, 1e-100, 1e-30, 1e-12, 1e-7, 1e-4, 1e-2, 0.3])
    ep = eq = 0.0
    for k1, v, k2 in fams:
        w = np.r_[np.ones(k1), np.full(k2, v)]
        dist = gchisq.WeightedChiSquare(w)
        for pi, xi in zip(ps, dist.isf(ps), strict=True):
            r = ref.two_value_sf(1.0, k1, v, k2, xi, dps=24)
            ep = max(ep, abs(float(dist.logsf(xi)) - float(mpmath.log(r))))
            eq = max(eq, quantile_rel_err(dist, xi, pi, float(r)))
    _row(rows, f"{len(fams)} x (1-5 ones + 100-1000 equal)", "1-d convolution, mpmath 24 dig.",
         len(fams) * ps.size, ep, eq)
    # 5. issue 14: clusters against the vertical line in double precision
    rng = np.random.default_rng(1414)
    clus = [("near-equal 1 + 600 x 0.05(1+U/50)", np.r_[1.0, 0.05 * (1 + 0.02 * rng.random(600))]),
            ("multiplicities 1,3,10,40,150,400", np.repeat([1.0, 0.5, 0.2, 0.1, 0.05, 0.02],
                                                          [1, 3, 10, 40, 150, 400]))]
    for k in range(4 if QUICK else 12):
        vals = 10.0 ** -rng.uniform(0, 2.5, rng.integers(2, 6))
        vals[0] = 1.0
        mult = rng.integers(1, 400, vals.size)
        mult[0] = rng.integers(1, 4)
        clus.append((f"random clusters {k}", np.repeat(vals, mult)))
    ps2 = np.array([1e-30, 1e-12, 1e-6, 1e-3, 0.1, 0.5])
    ep = eq = 0.0
    cnt = 0
    for _name, w in clus:
        dist = gchisq.WeightedChiSquare(w)
        for pi, xi in zip(ps2, dist.isf(ps2), strict=True):
            lr = ref.vertical_logsf(w, xi)
            if math.isnan(lr):
                continue  # the reference could not certify itself
            ep = max(ep, abs(float(dist.logsf(xi)) - lr))
            eq = max(eq, quantile_rel_err(dist, xi, pi, math.exp(lr)))
            cnt += 1
    _row(rows, f"{len(clus)} clustered / multi-valued", "vertical line, double, 1 by 1", cnt, ep, eq)
    print(f"(vertical-line references certified for {cnt} of {len(clus) * ps2.size} clustered points)")
    # 6. issue 14: grouped clusters in the far tail, mpmath on the vertical line
    if not QUICK:
        ep = eq = 0.0
        grp = [np.repeat([1.0, 0.3, 0.1, 0.01], [2, 10, 50, 300]), np.r_[1.0, np.full(500, 0.05)]]
        for w in grp:
            dist = gchisq.WeightedChiSquare(w)
            for pi in (1e-300, 1e-100):
                xi = float(dist.isf(pi))
                _, t = ref.mp_tail_vertical(w, xi, dps=20)
                ep = max(ep, abs(float(dist.logsf(xi)) - float(mpmath.log(t))))
                eq = max(eq, quantile_rel_err(dist, xi, pi, float(t)))
        _row(rows, "2 grouped clusters, p=1e-300, 1e-100", "vertical line, mpmath 20 digits", 4, ep, eq)
    # 7. skewed weights with ratios to 1e300, zeros, subnormals (mpmath, parabola)
    ep = 0.0
    for w in (np.array([1.0, 1e-150, 1e-300]), np.r_[0.0, 1.0, 0.0, 0.3, 1e-200],
              np.r_[1.0, 1e-310, 0.5]):
        dist = gchisq.WeightedChiSquare(w)
        for xi in dist.isf(np.array([1e-15, 1e-6, 0.1])):
            ep = max(ep, abs(float(dist.sf(xi)) / float(mp_sf(w, xi)) - 1))
    _row(rows, "ratios to 1e300, zeros, subnormals", "mpmath quad, 30 digits", 9, ep, math.nan)
    # 8. extreme arguments against closed forms (log tails; error in log T)
    xs = [5e-324, 1e-300, 1e-150, 1e-61, 1e-20, 1e-3, 1.0, 10.0, 1e3, 1e8, 1e20, 1e80, 1e100,
          1e300, float(np.finfo(float).max)]
    ep1 = epd = 0.0
    for xi in xs:
        with mpmath.workdps(60):
            z = mpmath.sqrt(mpmath.mpf(xi) / 2)
            for got, want in ((gchisq.logsf(xi, w=[1.0]), mpmath.log(mpmath.erfc(z))),
                              (gchisq.logcdf(xi, w=[1.0]), mpmath.log(mpmath.erf(z)))):
                ep1 = max(ep1, abs(float(got) - float(want)) / max(1.0, abs(float(want))))
            for d in (2, 3, 7):
                a, t = mpmath.mpf(d) / 2, mpmath.mpf(xi) / (2 * mpmath.mpf(0.7))
                for got, want in ((gchisq.logsf(xi, w=np.full(d, 0.7)),
                                   mpmath.log(mpmath.gammainc(a, t, mpmath.inf, regularized=True))),
                                  (gchisq.logcdf(xi, w=np.full(d, 0.7)),
                                   mpmath.log(mpmath.gammainc(a, 0, t, regularized=True)))):
                    epd = max(epd, abs(float(got) - float(want)) / max(1.0, abs(float(want))))
    _row(rows, "1 weight, x from 5e-324 to 1.8e308", "erfc / erf, mpmath 60 digits (*)",
         2 * len(xs), ep1, math.nan)
    _row(rows, "2, 3, 7 equal, x 5e-324..1.8e308", "incomplete gamma, mpmath (*)",
         6 * len(xs), epd, math.nan)
    # 9. the Figure 2 grid against the vertical line, and round trips
    e_alt = e_rt = 0.0
    n_alt = 0
    for d, a, k, w in weights:
        dist = gchisq.WeightedChiSquare(w)
        x = grid[(d, a, k)]
        p = 1.0 / np.array(FIG2_N, float)
        e_rt = max(e_rt, float(np.max(np.abs(dist.sf(x) / p - 1))))
        if d <= 100 or not QUICK:
            for xi in x:
                lr = ref.vertical_logsf(w, xi)
                if not math.isnan(lr):  # (few effective weights: no truncation)
                    e_alt = max(e_alt, abs(lr - float(dist.logsf(xi))))
                    n_alt += 1
    _row(rows, "Figure 2 grid", "vertical line, double, 1 by 1", n_alt, e_alt, math.nan)
    # for comparison: the saddlepoint (Barndorff-Nielsen r*) approximation alone
    e_sp = 0.0
    for d, a, k, w in weights:
        p = 1.0 / np.array(FIG2_N, float)
        approx = np.array([ref.saddlepoint_sf(w, xi) for xi in grid[(d, a, k)]])
        e_sp = max(e_sp, float(np.max(np.abs(approx / p - 1))))
    _row(rows, "Figure 2 grid, all 216", "exact; error of r* saddlepoint", 216, e_sp, math.nan)
    _row(rows, "Figure 2 grid, all 216", "round trip sf(isf(p))/p", 216, e_rt, math.nan)
    print(f"{'family':<38} {'reference':<34} {'count':>6} {'tail P':>9} {'quantile':>9}")
    for fam, refname, cnt, ep, eq in rows:
        qs = "" if math.isnan(eq) else f"{eq:9.1e}"
        print(f"{fam:<38} {refname:<34} {cnt:>6} {ep:9.1e} {qs:>9}")
    print("tail P: relative error of P (|difference of log P|) at the computed quantiles, "
          "p from 1e-300 to 0.5 where the family's p range allows; quantile: relative error "
          "of x implied by the reference; (*): |error of log T| / max(1, |log T|), log T down "
          "to -1e308")


def section_report(grid):
    header("The report's thresholds (chi2comb, absolute tolerance 1/n) against the exact ones")
    path = ROOT / "data" / "report_figure2_published.csv"
    rows = list(csv.DictReader(open(path)))
    errs = {n: [] for n in FIG2_N}
    stop = {n: [] for n in FIG2_N}
    allv = []
    for r in rows:
        d, n, a = int(r["d"]), int(r["n"]), float(r["alpha"])
        j = FIG2_N.index(n)
        for kind, col in (("n", "Cn_squared"), ("t", "Ct_squared")):
            exact = float(grid[(d, a, kind)][j])
            rel = float(r[col]) / exact - 1
            errs[n].append(rel)
            allv.append((abs(rel), d, n, a, kind, float(r[col]), exact))
    # the report's procedure alone: exact CDF, stop at |F - (1 - p)| <= p/10, bracket midpoint
    for d, a, kind, w in fig2_weights():
        dist = gchisq.WeightedChiSquare(w)
        for j, n in enumerate(FIG2_N):
            p = 1.0 / n
            c = gchisq.report_bisection(lambda t, dist=dist: 1.0 - float(dist.cdf(t)), p=p).value
            stop[n].append(c / float(grid[(d, a, kind)][j]) - 1)
    print(f"{'n':>8} {'published: median |rel|':>24} {'max |rel|':>10} "
          f"{'bisection rule alone: median':>29} {'max':>9}")
    for n in FIG2_N:
        e = np.abs(errs[n])
        s = np.abs(stop[n])
        print(f"{n:>8} {np.median(e):>24.2e} {np.max(e):>10.2e} {np.median(s):>29.2e} {np.max(s):>9.2e}")
    allv.sort(reverse=True)
    print("largest deviations of the published thresholds:")
    print(f"  {'d':>5} {'n':>8} {'alpha':>6} {'C^2':>4} {'published':>12} {'exact':>14} {'rel':>9}")
    for _e, d, n, a, kind, pub, ex in allv[:6]:
        print(f"  {d:>5} {n:>8} {a:>6g} {kind:>4} {pub:>12.6g} {ex:>14.10g} {pub / ex - 1:>+9.2e}")
    print("(the bisection rule stops once |F(c) - (1 - 1/n)| <= 1/(10 n), i.e. a relative "
          "error of 10% in the tail probability; Davies at absolute tolerance 1/n adds an "
          "error of the size of the tail itself)")


def _gx2_worker(args):
    import gx2

    p, w = args
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    x = gx2.inv(p, w, np.ones(w.size), np.zeros(w.size), 0, 0, side="upper")
    return float(np.asarray(x).ravel()[0]), time.perf_counter() - t0


def section_peers(grid, weights, cap=60.0):
    header("Peers")
    ok, reason = chi2comb_available()
    if ok:
        print("chi2comb: importable; the report's procedure on the d = 10 grid:")
        err = []
        t0 = time.perf_counter()
        for d, a, k, w in [x for x in weights if x[0] == 10]:
            for j, n in enumerate(FIG2_N):
                c = float(gchisq.isf(1.0 / n, w=w, backend="chi2comb"))
                err.append(abs(c / float(grid[(d, a, k)][j]) - 1))
        print(f"  {len(err)} quantiles, max rel error {max(err):.2e}, "
              f"{time.perf_counter() - t0:.1f} s")
    else:
        print(f"chi2comb: skipped, {reason}")
    if QUICK:
        print("gx2: skipped (--quick)")
        return
    try:
        import gx2
        ver = gx2.__version__
    except Exception as exc:  # pragma: no cover
        print(f"gx2: not importable ({exc})")
        return
    subset = []
    for d, a, k, w in weights:
        if (d, k) in ((10, "n"), (10, "t")) and a in (0.5, 2, 10):
            subset += [(d, a, k, w, 0), (d, a, k, w, 2)]
        elif d == 100 and k == "n" and a == 1:
            subset += [(d, a, k, w, 0), (d, a, k, w, 2)]
        elif d == 1000 and k == "n" and a == 1:
            subset += [(d, a, k, w, 1)]
    print(f"gx2 {ver} `inv(p, w, k=1, l=0, s=0, m=0, side='upper')`, {len(subset)} quantiles, "
          f"cap {cap:.0f} s each; native time is one WeightedChiSquare(w).isf(p) incl. set-up")
    print(f"{'d':>5} {'alpha':>6} {'C^2':>4} {'p':>7} {'gx2 rel err':>12} {'gx2 s':>7} "
          f"{'native s':>9}")
    ctx = mp.get_context("fork")
    errs, times = [], []
    for d, a, k, w, j in subset:
        p = 1.0 / FIG2_N[j]
        exact = float(grid[(d, a, k)][j])
        _, tn, _ = timed(lambda w=w, p=p: gchisq.WeightedChiSquare(w).isf(p), repeat=3)
        with ctx.Pool(1) as pool:
            job = pool.apply_async(_gx2_worker, ((p, w),))
            try:
                xg, tg = job.get(timeout=cap)
                rel = f"{abs(xg / exact - 1):12.2e}"
                errs.append(abs(xg / exact - 1))
                times.append(tg)
            except mp.TimeoutError:
                pool.terminate()
                rel, tg = f"{'timeout':>12}", cap
            except Exception as exc:  # gx2 failing is a result too
                rel, tg = f"{type(exc).__name__:>12}", math.nan
        print(f"{d:>5} {a:>6g} {k:>4} {p:>7.0e} {rel} {tg:>7.2f} {tn:>9.4f}")
    if errs:
        print(f"gx2: median rel error {np.median(errs):.1e}, max {max(errs):.1e}; "
              f"median time {np.median(times):.1f} s")


def main():
    section_env()
    weights = fig2_weights()
    grid = section_grid(weights)
    section_big()
    section_accuracy(grid, weights)
    section_report(grid)
    section_peers(grid, weights)


if __name__ == "__main__":
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--quick", action="store_true", help="no peers, fewer references")
    parser.add_argument("--keep-env", action="store_true",
                        help="keep OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (no re-execution)")
    parser.parse_args()
    main()
