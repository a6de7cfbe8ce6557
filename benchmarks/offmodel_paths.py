"""ESM's paths on synthetic Gaussian rows: measured errors against the predicted ones, and the calibration.

ESM (egmlib.peers.algorithm3_robust.algorithm3_robust, the arm ARMS["Alg3"]) chooses among four
releases by their predicted error (egmlib.peers.path_errors).  This script measures every path on
data from Algorithm 3's own model -- never on the data the book evaluates ESM on:

    x_i ~ N(10, diag(sigma^2)),  sigma_j = (d/j)^alpha,  alpha in {0, 0.75, 1.5},
    d in {8, 64, 256},  boxes [-H, H] with H = 50 sigma_1 and 2000 sigma_1,
    n in {20, 60, 200, 600, 2000, 6000, 20000} (n d <= 2e6),  rho in {1/16, 1/4, 1},

RUNS runs a cell (fresh rows a run).  In every run it records the error added,
||estimate - x_bar||, of IOME with the whole budget (the public stage's release; alone and around
the anchor), and after the scale step of the Algorithm 3 path, the plan path and the IOME path
the scale stage would take, with the released scales (egmlib.peers.scales.PairedScales) that the
predictions read.  From the cells (egmbook.findings.offmodel.calibrate_paths):

  * ERROR_FACTORS -- the median over the cells of measured / predicted, for each kind of
    release (the model's noise times the factor is the prediction ESM compares);
  * SCALE_RESOLUTION -- the smallest noise tau_l of the log scales at which, in some cell, the
    release the scale stage picks adds more than 1.25 times the error of IOME with the whole
    budget: below it buying scales never cost more than that, from it on ESM does not buy them.

Run:  nice -n 10 python benchmarks/offmodel_paths.py [--runs 7]   (about an hour on one core;
cells are cached in benchmarks/results/scratch/offmodel_paths_cache.jsonl, so an interrupted run
resumes; a full run writes benchmarks/results/offmodel_paths.csv, which chapter 9 reads, and
prints the calibration; --quick runs a slice into the scratch folder only)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from egmbook.cli import argument_parser  # noqa: E402
from egmbook.findings import offmodel as om  # noqa: E402
from egmbook.offmodel_results import PATHS_FILE, write_path_runs  # noqa: E402
from egmlib.peers import algorithm3_robust as esm  # noqa: E402
from egmlib.peers.scales import _paired_scales  # noqa: E402  (the same scale step ESM runs, to record it)

SCRATCH = Path(__file__).resolve().parent / "results" / "scratch"
CACHE = SCRATCH / "offmodel_paths_cache.jsonl"
VERSION = 6  # the cache's cells from an older ESM are run again


def run_cell(alpha: float, d: int, width: float, n: int, rho: float, runs: int) -> list[dict]:
    """Every run of one cell: the errors of each path and the released scales."""
    out = []
    for run in range(runs):
        X, H = om.calibration_rows(alpha, d, width, n, rho, run)
        xbar = X.mean(axis=0)
        seed = [om.CALIBRATION_SEED, run, 1]
        row: dict[str, Any] = {"alpha": alpha, "d": d, "width": width, "n": n, "rho": rho, "run": run, "half": H}
        for path in ("iome", "centred-iome"):
            r = esm.algorithm3_robust(X, rho=rho, lower=-H, upper=H, rng=np.random.default_rng(seed), path=path)
            row[f"whole {path}"] = float(np.linalg.norm(r.estimate - xbar))
        if n >= 4:
            s = _paired_scales(np.clip(X, -H, H), esm.SHARES["scale"] * rho, -H, H, np.random.default_rng(seed))
            row["scales"] = {"sigma_hat": s.sigma_hat.tolist(), "log_scales": s.log_scales.tolist(),
                             "log_noise": s.log_noise, "variance": s.variance.tolist(), "noise_sd": s.noise_sd,
                             "radius": s.radius, "pairs": s.pairs, "shrinkage": s.shrinkage}
            rest = esm.predict_paths(n, rho=rho, lower=-H, upper=H, scales=s).errors
            iome_kind = next(p for p in ("iome", "centred-iome") if p in rest)
            for path in ("algorithm3", "plan", iome_kind):
                r = esm.algorithm3_robust(X, rho=rho, lower=-H, upper=H, rng=np.random.default_rng(seed), path=path,
                                          scales_first=True)
                row[f"after {path}"] = float(np.linalg.norm(r.estimate - xbar))
        out.append(row)
    return out


def main(runs: int, quick: bool) -> int:
    SCRATCH.mkdir(parents=True, exist_ok=True)
    cache = SCRATCH / "offmodel_paths_quick.jsonl" if quick else CACHE
    done = set()
    if cache.exists():
        for line in cache.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("version") == VERSION:
                done.add((rec["alpha"], rec["d"], rec["width"], rec["n"], rec["rho"], rec["runs"]))
    todo = [c for c in om.calibration_cells(quick) if (*c, runs) not in done]
    print(f"{len(todo)} cells to run, {len(done)} cached in {cache}", flush=True)
    t0 = time.perf_counter()
    with cache.open("a") as f:
        for i, c in enumerate(todo):
            t = time.perf_counter()
            rows = run_cell(*c, runs)
            f.write(json.dumps({"alpha": c[0], "d": c[1], "width": c[2], "n": c[3], "rho": c[4], "runs": runs,
                                "version": VERSION, "rows": rows}) + "\n")
            f.flush()
            print(f"[{i + 1}/{len(todo)}] alpha={c[0]} d={c[1]} H={c[2]:g} sigma_1 n={c[3]} rho={c[4]:g}: "
                  f"{time.perf_counter() - t:.1f} s", flush=True)
    print(f"{len(todo)} cells in {(time.perf_counter() - t0) / 60:.1f} min", flush=True)
    records = [rec for line in cache.read_text().splitlines() if (rec := json.loads(line)).get("version") == VERSION]
    runs_rows = om.path_runs([row for rec in records if rec["runs"] == runs for row in rec["rows"]])
    cal = om.calibrate_paths(runs_rows)
    print(cal.report())
    if not quick and len([r for r in records if r["runs"] == runs]) >= len(om.calibration_cells()):
        write_path_runs(runs_rows, PATHS_FILE)
        print(f"saved {PATHS_FILE}")
    else:
        print("a slice: nothing saved")
    return 0


if __name__ == "__main__":
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a small slice into the scratch folder")
    args = parser.parse_args()
    sys.exit(main(args.runs, args.quick))
