"""The budget of ESM's IOME radius search, calibrated on synthetic Gaussian rows: IOME_RADIUS_ROWS.

IOME (as PLAN's experiments run it) clips, besides the rows its noise allows, a margin of 2 sds of
its radius search's noisy counts: 73 rows at rho = 1, whatever n.  ESM's IOME gives the search
enough budget that the margin is at most f n rows, up to IOME_RADIUS_CAP of IOME's budget
(egmlib.peers.algorithm3_robust.iome_shares).  This script measures, on the calibration cells of
benchmarks/offmodel_paths.py (rows N(10, diag(sigma^2)), never the book's datasets), the error added
by ESM's IOME path for each f of a grid and for PLAN's split (f = inf):

  * at the public stage (IOME with the whole budget, path="iome") and
  * after the scale step (path="iome", scales_first=True), where n >= 4,

RUNS runs a cell, the same rows and seeds for every f.  For each f it prints the geometric mean over
the cells of (median error with f) / (median error with PLAN's split), and the largest such ratio;
the f with the smallest geometric mean is the calibrated IOME_RADIUS_ROWS.  Cells where no f of the
grid changes the split are left out (every ratio is 1 there).

Run:  python benchmarks/iome_radius_rows.py [--runs 7] [--jobs 2]   (about 5 min on 2 cores; writes
benchmarks/results/iome_radius_rows.txt and iome_radius_rows.csv, which chapter 9 reads)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import joblib  # noqa: E402
import numpy as np  # noqa: E402

from egmbook.cli import argument_parser  # noqa: E402
from egmbook.findings import offmodel as om  # noqa: E402
from egmbook.offmodel_results import RADIUS_FILE, RadiusRow, write_radius_rows  # noqa: E402
from egmlib.peers import algorithm3_robust as esm  # noqa: E402
from egmlib.peers.iome import IOME_SHARES  # noqa: E402

GRID = (math.inf, 0.4, 0.2, 0.1, 0.05, 0.025)  # inf: PLAN's split
OUT = Path(__file__).resolve().parent / "results" / "iome_radius_rows.txt"


def _changes(n: int, rho: float) -> bool:
    """Whether some f of the grid moves the split at the public stage or after the scale step."""
    old = esm.IOME_RADIUS_ROWS
    try:
        out = False
        for f in GRID[1:]:
            esm.IOME_RADIUS_ROWS = f
            out = out or any(esm.iome_shares(n, rho=r) is not IOME_SHARES for r in (rho, 7 / 8 * rho))
        return out
    finally:
        esm.IOME_RADIUS_ROWS = old


def run_cell(alpha: float, d: int, width: float, n: int, rho: float, runs: int) -> dict[str, list[list[float]]]:
    """{stage: errors[f][run]} of ESM's IOME path in one cell, for every f of GRID."""
    out: dict[str, list[list[float]]] = {"public": [[] for _ in GRID], "after scales": [[] for _ in GRID]}
    for run in range(runs):
        X, H = om.calibration_rows(alpha, d, width, n, rho, run)
        xbar = X.mean(axis=0)
        for i, f in enumerate(GRID):
            esm.IOME_RADIUS_ROWS = f
            for stage, first in (("public", False), ("after scales", True)):
                if first and n < 4:
                    continue
                rng = np.random.default_rng([om.CALIBRATION_SEED, run, 1])
                r = esm.algorithm3_robust(X, rho=rho, lower=-H, upper=H, rng=rng, path="iome", scales_first=first)
                out[stage][i].append(float(np.linalg.norm(r.estimate - xbar)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argument_parser(doc=__doc__)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    todo = [c for c in om.calibration_cells() if _changes(c[3], c[4])]
    print(f"{len(todo)} of {len(om.calibration_cells())} calibration cells where the grid moves IOME's split; "
          f"{args.runs} runs each", flush=True)
    t0 = time.perf_counter()
    results = joblib.Parallel(n_jobs=args.jobs)(joblib.delayed(run_cell)(*c, args.runs) for c in todo)
    ratios: dict[str, list[list[float]]] = {"public": [], "after scales": []}
    for res in results:
        for stage, errs in res.items():
            if errs[0]:
                med = [float(np.median(e)) for e in errs]
                ratios[stage].append([m / med[0] for m in med])
    lines = [f"ESM's IOME path on {len(todo)} synthetic Gaussian cells ({args.runs} runs each, "
             f"{(time.perf_counter() - t0) / 60:.1f} min): median error with f over PLAN's split",
             f"{'f':>7s} {'public: geo. mean':>18s} {'max':>6s} {'after scales: geo. mean':>24s} {'max':>6s} "
             f"{'both: geo. mean':>16s}"]
    score, records = [], []
    for i, f in enumerate(GRID):
        cols, logs = [], []
        for stage in ("public", "after scales"):
            r = np.array([row[i] for row in ratios[stage]])
            logs.extend(np.log(r))
            geo = math.exp(float(np.mean(np.log(r))))
            cols.append(f"{geo:{18 if stage == 'public' else 24}.3f} {r.max():6.2f}")
            records.append(RadiusRow(f=f, stage=stage, geomean=geo, worst=float(r.max()), cells=len(r),
                                     runs=args.runs))
        score.append(math.exp(float(np.mean(logs))))
        records.append(RadiusRow(f=f, stage="both", geomean=score[-1], worst=float(np.exp(max(logs))),
                                 cells=len(todo), runs=args.runs))
        lines.append(f"{f:7g} {cols[0]} {cols[1]} {score[-1]:16.3f}")
    best = GRID[int(np.argmin(score))]
    lines.append(f"the smallest geometric mean over both stages: f = {best:g} (IOME_RADIUS_ROWS = "
                 f"{esm.IOME_RADIUS_ROWS:g} in the code)")
    write_radius_rows(records, RADIUS_FILE)
    text = "\n".join(lines)
    print(text)
    OUT.write_text(text + "\n")
    print(f"saved {RADIUS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
