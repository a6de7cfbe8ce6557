"""Where Algorithm 3 with private inputs fails off its model: a step-by-step table.

For each dataset of egmbook.offmodel_data (default: the real ones and a few synthetic
families) and each nothing-known Algorithm 3 pipeline -- chapter 8's
egmlib.peers.algorithm3.algorithm3_private ("Alg3-private") and the book's robust one,
egmlib.peers.algorithm3_robust.algorithm3_robust with its path rule switched off
(``path="algorithm3"``: always Algorithm 3's path, whose steps are the subject here; "Alg3") -- it
prints, as medians over ``--runs`` runs at rho = ``--rho`` (egmbook.findings.offmodel.diagnose):

  ties      share of the paired half squared differences v_ij that are exactly 0, and
            the number of zero-variance columns (properties of the data)
  scale     sigma_hat_j / sd_j over the columns with sd_j > 0: median, min, max
  centre    ||mu_hat - x_bar||_2 and in the transformed space ||(mu_hat - x_bar) * b||_2
  radius    the clipping radius C, the median transformed norm ||(x_i - mu_hat) * b||,
            and the share of rows clipped (diagnostics of the data, not private)
  error     ||estimate - x_bar||_2, the error privacy adds

and, for reference, the errors of Algorithm 3 with sigma given (sigma floored as
egmbook.offmodel_data does) and a private centre, with sigma and mu given, of PLAN and
IOME, of ESM as released (ARMS["Alg3"], the path it chooses), and the ratio of each pipeline's
error to the better of PLAN and IOME.

Run:  python benchmarks/offmodel_diagnosis.py [--runs 10] [--rho 0.25] [--datasets digits ...]

With chapter 9's runs and budget and at least its datasets (the defaults), it also saves the
chapter's diagnoses to benchmarks/results/offmodel_diagnosis.json, which chapter 9 reads
(egmbook.offmodel_results.load_diagnoses); a slice with other settings only prints.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from egmbook import offmodel_data as od  # noqa: E402
from egmbook import offmodel_results as omr  # noqa: E402
from egmbook.cli import argument_parser  # noqa: E402
from egmbook.findings import offmodel as om  # noqa: E402

DEFAULT = (*om.DIAGNOSIS_DATASETS, "alcohol", "k401ksubs", "labsup", "likert", "poisson", "lognormal", "t4",
           "mixture")


def main(argv=None):
    p = argument_parser(doc=__doc__)
    p.add_argument("--runs", type=int, default=om.DIAGNOSIS_RUNS, help="runs per dataset (medians over them)")
    p.add_argument("--rho", type=float, default=om.DIAGNOSIS_RHO, help="the budget, rho-zCDP")
    p.add_argument("--datasets", nargs="*", default=list(DEFAULT), choices=list(od.DATASETS), metavar="NAME",
                   help="datasets of egmbook.offmodel_data")
    args = p.parse_args(argv)
    print(f"rho = {args.rho:g}, medians over {args.runs} runs; error = ||estimate - x_bar||_2\n")
    head = (f"{'data':14s} {'pipeline':13s} {'sig/sd med':>10s} {'min':>8s} {'max':>8s} "
            f"{'centre':>9s} {'(transf)':>9s} {'C':>7s} {'med norm':>9s} {'clipped':>8s} "
            f"{'error':>9s}")
    print(head)
    print("-" * len(head))
    found = []
    for name in args.datasets:
        g = om.diagnose(od.load(name), runs=args.runs, rho=args.rho)
        for label, r in g.steps.items():
            print(f"{name:14s} {label:13s} {r.sig_med:10.3g} {r.sig_min:8.2g} {r.sig_max:8.3g} {r.centre:9.3g} "
                  f"{r.centre_t:9.3g} {r.C:7.3g} {r.norm_med:9.3g} {r.clipped:8.1%} {r.error:9.3g}", flush=True)
        found.append(g)
    print("\ndata           n x d        ties  zero-var cols  sigma given + private centre  "
          "sigma, mu given     PLAN      IOME  Alg3 path/best  Alg3 released/best  "
          "Alg3-private/best")
    for g in found:
        ref, best = g.reference, min(g.reference["PLAN"], g.reference["IOME"])
        print(f"{g.dataset:14s} {g.n:5d} x {g.d:<4d} {g.ties:5.1%} {g.zero_columns:14d} "
              f"{ref['Alg3-private-centre']:29.3g} {ref['Alg3-oracle']:16.3g} "
              f"{ref['PLAN']:8.3g} {ref['IOME']:9.3g} {g.steps['Alg3'].error / best:15.3g} "
              f"{ref['Alg3'] / best:19.3g} {g.steps['Alg3-private'].error / best:18.3g}")
    if (args.runs, args.rho) == (om.DIAGNOSIS_RUNS, om.DIAGNOSIS_RHO) and set(om.DIAGNOSIS_DATASETS) <= set(
            args.datasets):
        chapter = [g for g in found if g.dataset in om.DIAGNOSIS_DATASETS]
        print(f"\nsaved chapter 9's diagnoses to {omr.save_diagnoses(chapter, omr.DIAGNOSIS_FILE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
