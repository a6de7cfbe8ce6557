"""Where Algorithm 3 with private inputs fails off its model: a step-by-step table.

For each dataset of egmbook.offmodel_data (default: the real ones and a few synthetic
families) and each nothing-known Algorithm 3 pipeline -- chapter 8's
egmlib.peers.algorithm3.algorithm3_private ("Alg3-private") and the book's robust one,
egmlib.peers.algorithm3_robust.algorithm3_robust with its path rule switched off
(``path="algorithm3"``: always Algorithm 3's path, whose steps are the subject here; "Alg3") -- it
prints, as medians over ``--runs`` runs at rho = ``--rho``:

  ties      share of the paired half squared differences v_ij that are exactly 0, and
            the number of zero-variance columns (properties of the data)
  scale     sigma_hat_j / sd_j over the columns with sd_j > 0: median, min, max
  centre    ||mu_hat - x_bar||_2 and in the transformed space ||(mu_hat - x_bar) * b||_2
  radius    the clipping radius C, the median transformed norm ||(x_i - mu_hat) * b||,
            and the share of rows clipped (diagnostics of the data, not private)
  error     ||estimate - x_bar||_2, the error privacy adds

and, for reference, the errors of Algorithm 3 with sigma given (sigma floored as
egmbook.offmodel_data does) and a private centre, with sigma and mu given, of PLAN and
IOME, of the released pipeline ARMS["Alg3"] (with its rule: the few-rows path when
n sqrt(rho) < c ln(1 + R_w)), and the ratio of each pipeline's error to the better of PLAN and
IOME.

Run:  python benchmarks/offmodel_diagnosis.py [--runs 6] [--rho 0.25] [--datasets digits ...]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from egmbook import offmodel_data as od  # noqa: E402
from egmlib.peers import algorithm3, algorithm3_robust  # noqa: E402
from egmlib.peers.arms import ARMS  # noqa: E402
from egmlib.peers.scales import pairwise_squared_differences  # noqa: E402

DEFAULT = ("digits", "breast_cancer", "wine", "diabetes", "fair", "randhie", "alcohol", "k401ksubs", "labsup",
           "baskets_n1e4", "likert", "poisson", "lognormal", "t4", "mixture")
SEED = 20261126


def _steps(r, X, sd, xbar):
    """Per-step diagnostics of one result r (any Algorithm 3 pipeline)."""
    ok = sd > 0
    ratio = r.sigma[ok] / sd[ok]
    b = 1.0 / np.sqrt(r.sigma * r.sigma.sum())
    norms = np.linalg.norm((X - r.centre) * b, axis=1)
    return {
        "sig_med": float(np.median(ratio)), "sig_min": float(ratio.min()),
        "sig_max": float(ratio.max()),
        "centre": float(np.linalg.norm(r.centre - xbar)),
        "centre_t": float(np.linalg.norm((r.centre - xbar) * b)),
        "C": float(r.C), "norm_med": float(np.median(norms)),
        "clipped": float(np.mean(norms > r.C)),
        "error": float(np.linalg.norm(r.estimate - xbar)),
    }


def diagnose(name, runs, rho):
    s = od.load(name, seed=0)
    X, xbar = s.X, s.X.mean(axis=0)
    V = pairwise_squared_differences(X, rng=np.random.default_rng(SEED))
    ties = float(np.mean(V == 0.0))
    zero_cols = int(np.count_nonzero(s.sd == 0.0))
    pipelines = {"Alg3-private": algorithm3.algorithm3_private,
                 "Alg3": functools.partial(algorithm3_robust.algorithm3_robust, path="algorithm3")}
    rows = {}
    for label, f in pipelines.items():
        per = [_steps(f(X, rho=rho, lower=s.lower, upper=s.upper,
                        rng=np.random.default_rng([SEED, run, i])), X, s.sd, xbar)
               for i, run in enumerate(range(runs))]
        rows[label] = {k: float(np.median([p[k] for p in per])) for k in per[0]}
    ref = {}
    for a in ("Alg3-private-centre", "Alg3-oracle", "PLAN", "IOME", "Alg3"):
        arm = ARMS[a]
        given = {"sigma": s.sigma, "mu": xbar}
        # ARMS["Alg3"] draws from the generators of the path's runs above, so that the two
        # coincide where the rule runs Algorithm 3's path
        errs = [np.linalg.norm(arm(X, rho=rho, lower=s.lower, upper=s.upper,
                                   rng=np.random.default_rng([SEED, run, run if a == "Alg3" else 7]),
                                   **{g: given[g] for g in arm.given}).estimate - xbar)
                for run in range(runs)]
        ref[a] = float(np.median(errs))
    return s, ties, zero_cols, rows, ref


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=6)
    p.add_argument("--rho", type=float, default=0.25)
    p.add_argument("--datasets", nargs="*", default=list(DEFAULT), choices=list(od.DATASETS))
    args = p.parse_args(argv)
    print(f"rho = {args.rho:g}, medians over {args.runs} runs; error = ||estimate - x_bar||_2\n")
    head = (f"{'data':14s} {'pipeline':13s} {'sig/sd med':>10s} {'min':>8s} {'max':>8s} "
            f"{'centre':>9s} {'(transf)':>9s} {'C':>7s} {'med norm':>9s} {'clipped':>8s} "
            f"{'error':>9s}")
    print(head)
    print("-" * len(head))
    refs = []
    for name in args.datasets:
        s, ties, zero_cols, rows, ref = diagnose(name, args.runs, args.rho)
        for label, r in rows.items():
            print(f"{name:14s} {label:13s} {r['sig_med']:10.3g} {r['sig_min']:8.2g} "
                  f"{r['sig_max']:8.3g} {r['centre']:9.3g} {r['centre_t']:9.3g} {r['C']:7.3g} "
                  f"{r['norm_med']:9.3g} {r['clipped']:8.1%} {r['error']:9.3g}", flush=True)
        refs.append((name, s.X.shape, ties, zero_cols, ref, rows))
    print("\ndata           n x d        ties  zero-var cols  sigma given + private centre  "
          "sigma, mu given     PLAN      IOME  Alg3 path/best  Alg3 released/best  "
          "Alg3-private/best")
    for name, shape, ties, zero_cols, ref, rows in refs:
        best = min(ref["PLAN"], ref["IOME"])
        print(f"{name:14s} {shape[0]:5d} x {shape[1]:<4d} {ties:5.1%} {zero_cols:14d} "
              f"{ref['Alg3-private-centre']:29.3g} {ref['Alg3-oracle']:16.3g} "
              f"{ref['PLAN']:8.3g} {ref['IOME']:9.3g} {rows['Alg3']['error'] / best:15.3g} "
              f"{ref['Alg3'] / best:19.3g} {rows['Alg3-private']['error'] / best:18.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
