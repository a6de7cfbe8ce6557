"""Where Algorithm 3's private path starts to beat the few-rows path: the calibration of the rule.

``egmlib.peers.algorithm3_robust.algorithm3_robust`` has two releases.  Algorithm 3's path
spends its budget on d private scales, a whitened private centre, a radius and the noise;
with few rows the first two steps cannot converge.  The few-rows path (IOME around a coarse
private centre from noisy bisection medians) needs neither.  The pipeline takes the few-rows
path when the rule ``few_rows(n, rho=rho, sigma=sigma_hat, lower=l, upper=u)`` holds on the
released scales sigma_hat:

    n * sqrt(rho) < FEW_ROWS_CONSTANT * ln(1 + R_w),

R_w the box's half-width in units of sigma_hat (``whitened_box_radius``).

This script calibrates that constant on data Algorithm 3's model generates, never on the
datasets the pipeline is evaluated on: rows x_i ~ N(mu, diag(sigma^2)), mu_j = 10,
sigma_j = (d/j)^(3/4) (PLAN's GaussianB at alpha = 1.5, the synthetic families' scales),
three public boxes, [-50, 50] (2 to 9 sds of the widest coordinate), [-1000, 1000] and
[-20000, 20000] (loose boxes), at

    d in {10, 30, 64},  rho in {1/16, 1/8, 1/4, 1/2, 1},  n on a sqrt(2) grid 100 .. 3200,

RUNS runs each (fresh data per run).  For every cell it prints the ratio of the median
error added, ||estimate - x_bar||, of Algorithm 3's path (``path="algorithm3"``) to the
few-rows path's (``path="iome"``; both spend the same first share on the scales), and the
median over the runs of the rule's statistic n sqrt(rho) / ln(1 + R_w), R_w the released
scales' ``whitened_box_radius``.  The constant is the smallest value of the statistic from
which on every cell has a ratio of at most egmbook.findings.offmodel.CROSSOVER_TOLERANCE =
1.25, rounded down to a multiple of 10 (``Crossover.constant``): from it on
Algorithm 3's path is never much worse than the alternative, and it is the better release
where the scales differ (its noise shrinks by up to the factor of the report's Figure 2).

Run:  python benchmarks/offmodel_crossover.py [--runs 20]  (about ten minutes on one core;
the cells are written to benchmarks/results/offmodel_crossover.csv, which chapter 9 reads
with egmbook.findings.offmodel.load_crossover, and the printed tables to
offmodel_crossover.txt)
"""

from __future__ import annotations

import csv
import io
import math
import sys
from contextlib import redirect_stdout
from fractions import Fraction
from pathlib import Path

import numpy as np

from egmbook.cli import argument_parser
from egmbook.findings.offmodel import Crossover, CrossoverCell
from egmlib.peers import algorithm3_robust as a3r

OUT = Path(__file__).resolve().parent / "results" / "offmodel_crossover.txt"
CELLS = OUT.with_suffix(".csv")  # read by egmbook.findings.offmodel.load_crossover
DS = (10, 30, 64)
BOXES = (50.0, 1000.0, 20000.0)
RHOS = (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
NS = tuple(int(round(100 * 2 ** (k / 2))) for k in range(11))  # 100, 141, ..., 3200
SEED = 20261126


def medians(n: int, d: int, width: float, runs: int) -> dict[float, tuple[float, float, float]]:
    """At every rho: median error added of Algorithm 3's path and of the few-rows path, and the
    median of the rule's statistic n sqrt(rho) / ln(1 + R_w) over the runs."""
    sigma = (d / np.arange(1, d + 1)) ** 0.75
    errs: dict[float, list[tuple[float, float, float]]] = {rho: [] for rho in RHOS}
    for run in range(runs):
        rng = np.random.default_rng([SEED, n, d, int(width), run])
        X = 10.0 + sigma * rng.standard_normal((n, d))
        xbar = X.mean(axis=0)
        for i, rho in enumerate(RHOS):
            r = {path: a3r.algorithm3_robust(X, rho=rho, lower=-width, upper=width, path=path,
                                             rng=np.random.default_rng([SEED, n, d, int(width), run, i]))
                 for path in ("algorithm3", "iome")}
            R_w = a3r.whitened_box_radius(r["algorithm3"].sigma, lower=-width, upper=width)
            errs[rho].append((float(np.linalg.norm(r["algorithm3"].estimate - xbar)),
                              float(np.linalg.norm(r["iome"].estimate - xbar)),
                              n * math.sqrt(rho) / math.log1p(R_w)))
    return {rho: tuple(float(np.median([e[k] for e in v])) for k in range(3))  # type: ignore[misc]
            for rho, v in errs.items()}


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


def main(runs: int) -> Crossover:
    print(f"Algorithm 3's path / the few-rows path, median error added over {runs} runs; "
          "Gaussian rows, mu_j = 10, sigma_j = (d/j)^0.75; in brackets the median of the "
          "rule's statistic n sqrt(rho) / ln(1 + R_w)")
    cells: list[CrossoverCell] = []
    for width in BOXES:
        for d in DS:
            table = {n: medians(n, d, width, runs) for n in NS}
            print(f"\nbox [-{width:g}, {width:g}], d = {d}")
            print("rho \\ n " + " ".join(f"{n:>12d}" for n in NS))
            for rho in RHOS:
                row = []
                for n in NS:
                    a, b, stat = table[n][rho]
                    cells.append(CrossoverCell(half_width=width, d=d, rho=rho, n=n, runs=runs, error_algorithm3=a,
                                               error_few_rows=b, statistic=stat))
                    row.append(f"{a / b:5.2f} [{stat:4.0f}]")
                print(f"{str(Fraction(rho)):<8s} " + " ".join(f"{c:>12s}" for c in row), flush=True)
    cross = Crossover(tuple(cells))
    print(f"\nfrom n sqrt(rho) / ln(1 + R_w) = {cross.switch:.1f} on, every cell has a ratio <= {cross.tolerance} "
          f"(largest {max(c.ratio for c in cross.above):.2f}, {len(cross.above)} cells); below it the largest "
          f"ratio is {max(c.ratio for c in cross.below):.2f} ({len(cross.below)} cells)")
    print(f"constant (rounded down to a multiple of 10): {cross.constant:g}")
    return cross


def write_cells(cross: Crossover, path: Path = CELLS) -> None:
    """The cells, full precision, for egmbook.findings.offmodel.load_crossover."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("half_width", "d", "rho", "n", "runs", "error_algorithm3", "error_few_rows", "statistic"))
        for c in cross.cells:
            w.writerow((repr(c.half_width), c.d, repr(c.rho), c.n, c.runs, repr(c.error_algorithm3),
                        repr(c.error_few_rows), repr(c.statistic)))


if __name__ == "__main__":
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-save", action="store_true", help="print only")
    args = parser.parse_args()
    buf = io.StringIO()
    with redirect_stdout(_Tee(buf, sys.stdout)):
        result = main(args.runs)
    if not args.no_save:
        OUT.write_text(buf.getvalue())
        write_cells(result)
