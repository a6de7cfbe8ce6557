"""The ratio table of chapter 9: ESM and chapter 8's pipeline against the best peer, off the model.

For every real dataset and synthetic family of egmbook.offmodel_data, the error that
privacy adds, ||mu_tilde - x_bar||_2, median over the runs of benchmarks/peers_sweep.py
(results/offmodel_excess.csv), of

  Alg3           ESM, the book's recommended private mean (egmlib.peers.arms.ARMS["Alg3"])
  Alg3-private   chapter 8's pipeline, egmlib.peers.algorithm3.algorithm3_private

divided by that of the best peer, min(PLAN, IOME), at each budget (``--rho all``) or at one
(default rho = 1/4).  Then ESM's three goals (egmbook.findings.offmodel.goals), each with its
verdict, on both sweeps:
  G1. ESM adds at most 2x the error of the better of PLAN and IOME in every cell (dataset or
      benchmark setting, and budget), and at most as much in the median cell;
  G2. ESM is within 1.5x the best method given nothing (ESM, PLAN's last step on its private
      inputs, PLAN, IOME) in at least 90 % of the cells;
  G3. where rows are few (n <= 600) or d >= n, ESM adds at most 1.25x the error of the better of
      IOME and PLAN, each run alone with the whole budget.
Run:  python benchmarks/offmodel_ratios.py [--rho 0.25 | --rho all]
"""

from __future__ import annotations

import sys
from fractions import Fraction

from egmbook import gaussian_benchmarks as gb
from egmbook.cli import argument_parser
from egmbook.findings.offmodel import NEW, OLD, PEERS, best_peer_ratios, goals
from egmbook.peer_results import load_offmodel_results, load_peers_results


def rho_text(rho: float) -> str:
    return str(Fraction(rho).limit_denominator(64))


def main(argv=None) -> int:
    p = argument_parser(doc=__doc__)
    p.add_argument("--rho", default="0.25", help="a budget of the sweep, or 'all'")
    args = p.parse_args(argv)
    off = load_offmodel_results()
    rhos = gb.RHOS if args.rho == "all" else (float(args.rho),)
    runs = {off.excess_of(ds, NEW, rho=r).runs for ds in off.datasets for r in gb.RHOS}
    print(f"error added by privacy, median over {'/'.join(map(str, sorted(runs)))} runs, "
          f"relative to the best of {' and '.join(PEERS)}")
    for rho in rhos:
        print(f"\nrho = {rho_text(rho)}")
        print(f"{'dataset':16s} {'best peer':>9s} {'its error':>10s} {NEW + ' / best':>14s} {OLD + ' / best':>20s}")
        for r in best_peer_ratios(off, rho=rho):
            print(f"{r.dataset:16s} {r.best_peer:>9s} {r.best:10.4g} {r.esm:14.3g} {r.old:20.3g}")
    res = load_peers_results()
    texts = (f"{NEW} <= 2 x the better of {' and '.join(PEERS)}, median <= 1",
             f"{NEW} <= 1.5 x the best method given nothing in >= 90 % of the cells",
             f"few rows or d >= n: {NEW} <= 1.25 x the better of {' and '.join(PEERS)}")
    for i, (text, g) in enumerate(zip(texts, goals(res, off), strict=True), start=1):
        w = g.worst
        where = w.dataset if w.d is None else f"{w.dataset} d = {w.d} alpha = {w.alpha:g}"
        print(f"\ngoal {i} ({text}): {g.met} of {g.n} cells, median ratio {g.median:.3g}, worst {w.ratio:.3g} "
              f"({where}, rho = {rho_text(w.rho)}): {'met' if g.ok else 'MISSED'}")
        for c in g.misses[:8]:
            where = c.dataset if c.d is None else f"{c.dataset} d = {c.d} alpha = {c.alpha:g}"
            print(f"  above: {c.ratio:.3g} ({where}, rho = {rho_text(c.rho)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
