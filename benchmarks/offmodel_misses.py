"""Why ESM misses a goal: the release it took in each off-model cell where a goal fails.

For every cell of chapter 9's off-model sweep (a dataset at one budget) where ESM adds more than
twice the error of the better of PLAN and IOME (G1), or, in the few-rows and d > n cells, more than
1.25 times (G3) -- egmbook.findings.offmodel.goals on the committed results -- this script calls ESM
(egmlib.peers.arms.ARMS["Alg3"]) again exactly as the sweep did (egmbook.sweep: the same data, the
same seeds, run by run) and records, over the sweep's runs:

  path        the release ESM took most often (egmlib.peers.path_errors.PATHS) and how often
  public      the share of runs stopped at the public stage (IOME with the whole budget)
  error       ESM's median error added (it equals the sweep's, a check that the call is the same)
  longer      ESM's and the better peer's median errors over LONGER runs each (the sweep's runs and
              the ones its seeding gives next, egmbook.sweep.run_task), and their ratio: a miss
              that is the spread of a median over the sweep's runs shrinks there, a fault does not

with the better peer and its median error from the results.  Chapter 9 reads the file to say why
each goal fails where it does.

Run:  nice -n 10 python benchmarks/offmodel_misses.py   (a few minutes; writes
benchmarks/results/offmodel_misses.csv)
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import csv  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from egmbook import sweep  # noqa: E402
from egmbook.cli import argument_parser  # noqa: E402
from egmbook.findings import offmodel as om  # noqa: E402
from egmbook.peer_results import load_offmodel_results, load_peers_results  # noqa: E402
from egmlib.peers.arms import ARMS  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "offmodel_misses.csv"
FIELDS = ("dataset", "rho", "goal", "ratio", "best_peer", "best_error", "esm_error", "path", "path_share",
          "public_share", "runs", "longer_ratio", "longer_runs")
#: The runs of the longer check of every miss.
LONGER = 100


def esm_runs(dataset: str, rho: float, runs: int) -> list[tuple[float, str, bool]]:
    """(error added, path, stopped at the public stage) of ESM in every run of one cell, as the sweep ran it."""
    case = sweep._find_case("offmodel", dataset, 0)
    ds = sweep.name_id(dataset)
    r_i = sweep.RHOS.index(rho)
    out = []
    for run in range(runs):
        data = sweep._read_only(case.draw([sweep.SEED, ds, case.index, run]))
        rng = np.random.default_rng([sweep.SEED, ds, case.index, run, r_i, sweep.name_id("Alg3")])
        r = ARMS["Alg3"](data.X, rho=rho, lower=data.lower, upper=data.upper, rng=rng)
        out.append((float(np.linalg.norm(r.estimate - data.X.mean(axis=0))), r.path, r.predicted is None))
    return out


def longer_ratio(dataset: str, rho: float, peer: str, runs: int = LONGER) -> float:
    """ESM's median error added over ``peer``'s, each over ``runs`` runs of the sweep's tasks (the same
    seeds as the sweep for its runs, continued)."""
    case = sweep._find_case("offmodel", dataset, 0)
    errors: dict[str, list[float]] = {"Alg3": [], peer: []}
    for run in range(runs):
        _, rows = sweep.run_task(sweep.Task("offmodel", dataset, case.index, run, ("Alg3", peer), (rho,)))
        for row in rows:
            errors[row[2]].append(row[9])  # the error added, ||estimate - x_bar||
    return float(np.median(errors["Alg3"]) / np.median(errors[peer]))


def main(argv: list[str] | None = None) -> int:
    argument_parser(doc=__doc__).parse_args(argv)
    off = load_offmodel_results()
    goals = om.goals(load_peers_results(), off)
    cells: dict[tuple[str, float], list[tuple[str, float]]] = {}
    for name, goal in (("G1", goals.off_model), ("G3", goals.parts)):
        for c in goal.misses:
            if c.d is None:
                cells.setdefault((c.dataset, c.rho), []).append((name, c.ratio))
    rows = []
    for (dataset, rho), misses in sorted(cells.items()):
        runs = off.excess_of(dataset, "Alg3", rho=rho).runs
        found = esm_runs(dataset, rho, runs)
        paths = Counter(p for _, p, _ in found)
        path, count = paths.most_common(1)[0]
        med = {a: float(off.excess_of(dataset, a, rho=rho).median or 0.0) for a in om.PEERS}
        best = min(om.PEERS, key=med.__getitem__)
        longer = longer_ratio(dataset, rho, best)
        for name, ratio in misses:
            rows.append((dataset, f"{rho:.6g}", name, f"{ratio:.6g}", best, f"{med[best]:.6g}",
                         f"{np.median([e for e, _, _ in found]):.6g}", path, f"{count / runs:.4g}",
                         f"{np.mean([p for _, _, p in found]):.4g}", runs, f"{longer:.6g}", LONGER))
        print(f"{dataset:14s} rho={rho:<7g} {' '.join(g for g, _ in misses):6s} ratio {misses[0][1]:7.3g}  "
              f"best {best:4s}  ESM path {path} ({count}/{runs}); over {LONGER} runs {longer:.3g}", flush=True)
    with OUT.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(FIELDS)
        w.writerows(rows)
    print(f"{len(rows)} misses in {len(cells)} cells; saved {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
