"""Where Algorithm 3's private path starts to beat IOME: the calibration of the few-rows rule.

``egmlib.peers.algorithm3_robust.algorithm3_robust`` spends its budget on d private
scales, a whitened private centre, a radius and the noise.  With few rows the first two
steps cannot converge and the release is worse than IOME's (Huang, Liang and Yi 2021, as
PLAN's experiments run it), which needs neither.  The pipeline therefore releases IOME's
estimate, with the whole budget, when the public rule ``few_rows(n, d=d, rho=rho)`` holds:

    n * sqrt(rho) < FEW_ROWS_CONSTANT.

This script calibrates that constant on data Algorithm 3's model generates, not on the
real datasets the rule is tested on: rows x_i ~ N(mu, diag(sigma^2)), mu_j = 10,
sigma_j = (d/j)^(3/4) (PLAN's GaussianB at alpha = 1.5, the synthetic families' scales),
the sweeps' box [-u, u], u = 4 max|x| + 10 (egmbook.offmodel_data.box), at

    d in {10, 30, 64},  rho in {1/16, 1/8, 1/4, 1/2, 1},  n on a sqrt(2) grid 100 .. 3200,

RUNS runs each (fresh data per run).  For every cell it prints the ratio of the median
error added, ||estimate - x_bar||, of Algorithm 3's path (the pipeline with the rule
switched off, ``rule=False``) to IOME's.  The grids make n sqrt(rho) fall on the common
grid 100 * 2^(m/2) (25, 35, 50, 71, 100, 141, 200, 283, 400, 566, 800, ...), so the
second table collects, for every d and every value of n sqrt(rho), the worst ratio over
the budgets.  The constant is the smallest value of n sqrt(rho) on that grid from which
on every cell (every d, every rho) has a ratio of at most TOLERANCE = 1.5, rounded down
to a multiple of 10.  Below it Algorithm 3's path can add many times IOME's error (its
scale and centre steps have not converged); from it on Algorithm 3's path adds at most
half as much again as IOME, and less than IOME where the scales are unequal enough
(d = 64).  The tolerance leaves room below the goal's factor 2 (against the better of
PLAN and IOME) for the spread of a 20-run median and for data off the model.

Run:  python benchmarks/offmodel_crossover.py [--runs 20]  (about two minutes on one core;
the output is saved to benchmarks/results/offmodel_crossover.txt)
"""

from __future__ import annotations

import io
import math
import sys
from contextlib import redirect_stdout
from fractions import Fraction
from pathlib import Path

import numpy as np

from egmbook.cli import argument_parser
from egmbook.offmodel_data import box
from egmlib.peers import algorithm3_robust as a3r
from egmlib.peers.iome import iome_mean

OUT = Path(__file__).resolve().parent / "results" / "offmodel_crossover.txt"
DS = (10, 30, 64)
RHOS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
NS = tuple(int(round(100 * 2 ** (k / 2))) for k in range(11))  # 100, 141, ..., 3200
SEED = 20261126
TOLERANCE = 1.5


def medians(n: int, d: int, runs: int) -> dict[float, tuple[float, float]]:
    """Median error added of Algorithm 3's path and of IOME at every rho, on ``runs`` draws."""
    sigma = (d / np.arange(1, d + 1)) ** 0.75
    errs: dict[float, list[tuple[float, float]]] = {rho: [] for rho in RHOS}
    for run in range(runs):
        rng = np.random.default_rng([SEED, n, d, run])
        X = 10.0 + sigma * rng.standard_normal((n, d))
        lower, upper = box(X)
        xbar = X.mean(axis=0)
        for i, rho in enumerate(RHOS):
            r1 = np.random.default_rng([SEED, n, d, run, i, 1])
            r2 = np.random.default_rng([SEED, n, d, run, i, 2])
            alg3 = a3r.algorithm3_robust(X, rho=rho, lower=lower, upper=upper, rng=r1, rule=False)
            iome = iome_mean(X, rho=rho, lower=lower, upper=upper, rng=r2)
            errs[rho].append((float(np.linalg.norm(alg3.estimate - xbar)),
                              float(np.linalg.norm(iome.estimate - xbar))))
    return {rho: (float(np.median([e[0] for e in v])), float(np.median([e[1] for e in v])))
            for rho, v in errs.items()}


def crossover(ratios: list[float], tolerance: float) -> int | None:
    """Index of the first entry from which on every ratio is <= tolerance (None: none)."""
    for k in range(len(ratios)):
        if all(r <= tolerance for r in ratios[k:]):
            return k
    return None


def grid_point(n: int, rho: float) -> int:
    """m with n sqrt(rho) = 100 * 2^(m/2) (exact on this script's grids)."""
    return round(2.0 * math.log2(n * math.sqrt(rho) / 100.0))


class _Tee(io.TextIOBase):
    """Write to several streams (the terminal and the saved copy)."""

    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()


def main(runs: int) -> None:
    print(f"Algorithm 3's path / IOME, median error added over {runs} runs; Gaussian rows, "
          "mu_j = 10, sigma_j = (d/j)^0.75, box [-(4 max|x| + 10), 4 max|x| + 10]")
    worst: dict[tuple[int, int], float] = {}  # (d, m) -> worst ratio over rho
    for d in DS:
        table = {n: medians(n, d, runs) for n in NS}
        print(f"\nd = {d}")
        print("rho \\ n " + " ".join(f"{n:>6d}" for n in NS))
        for rho in RHOS:
            ratios = [table[n][rho][0] / table[n][rho][1] for n in NS]
            for n, r in zip(NS, ratios, strict=True):
                key = (d, grid_point(n, rho))
                worst[key] = max(worst.get(key, 0.0), r)
            cells = " ".join(f"{r:6.2f}" for r in ratios)
            print(f"{str(Fraction(rho)):<8s} {cells}", flush=True)
    ms = sorted({m for _, m in worst})
    print("\nworst ratio over the five budgets at each n sqrt(rho)")
    print("d \\ n sqrt(rho) " + " ".join(f"{100 * 2 ** (m / 2):6.0f}" for m in ms))
    for d in DS:
        print(f"{d:<16d} " + " ".join(f"{worst[(d, m)]:6.2f}" if (d, m) in worst else "     -"
                                      for m in ms))
    overall = [max(worst[(d, m)] for d in DS if (d, m) in worst) for m in ms]
    k = crossover(overall, TOLERANCE)
    if k is None:
        print(f"\nno n sqrt(rho) on the grid from which on every ratio is <= {TOLERANCE}")
        return
    value = 100 * 2 ** (ms[k] / 2)
    constant = 10 * math.floor(value / 10)
    print(f"\nfrom n sqrt(rho) = {value:.1f} on, every cell has a ratio <= {TOLERANCE} "
          f"(largest {max(overall[k:]):.2f}); just below it, at {100 * 2 ** (ms[k - 1] / 2):.1f}, "
          f"the worst is {overall[k - 1]:.2f}; the largest ratio below it is {max(overall[:k]):.2f}")
    print(f"constant (rounded down to a multiple of 10): {constant}")
    print(f"egmlib.peers.algorithm3_robust.FEW_ROWS_CONSTANT = {a3r.FEW_ROWS_CONSTANT:g}")


if __name__ == "__main__":
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-save", action="store_true", help="print only")
    args = parser.parse_args()
    buf = io.StringIO()
    with redirect_stdout(_Tee(buf, sys.stdout)):
        main(args.runs)
    if not args.no_save:
        OUT.write_text(buf.getvalue())
