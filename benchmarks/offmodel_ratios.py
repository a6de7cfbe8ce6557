"""The ratio table of chapter 9: Algorithm 3 with private inputs against the best peer, off its model.

For every real dataset and synthetic family of egmbook.offmodel_data, the error that
privacy adds, ||mu_tilde - x_bar||_2, median over the runs of benchmarks/peers_sweep.py
(results/offmodel_excess.csv), of

  Alg3           the book's recommended nothing-known pipeline (egmlib.peers.arms.ARMS["Alg3"])
  Alg3-private   chapter 8's pipeline, egmlib.peers.algorithm3.algorithm3_private

divided by that of the best peer, min(PLAN, IOME), at each budget (``--rho all``) or at one
(default rho = 1/4).  Then the three goals of egmbook.findings.offmodel, each with its verdict:
  1. off the model, Alg3 adds at most 2x the error of the better of PLAN and IOME in every
     cell (dataset and budget), and at most as much in the median cell;
  2. Alg3 is within 1.5x the best method given nothing (Alg3, PLAN's last step on its
     private inputs, PLAN, IOME) in at least 90 % of the cells;
  3. where chapter 9 first recommended it (symmetric tails, correlations, a mixture, sigma
     given wrongly; GaussianB at alpha >= 1 and GaussianC of results/peers_excess.csv) Alg3
     is the best method given nothing or within 5 % of it.
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
        for ds, best, e, r_new, r_old in best_peer_ratios(off, rho=rho):
            print(f"{ds:16s} {best:>9s} {e:10.4g} {r_new:14.3g} {r_old:20.3g}")
    res = load_peers_results()
    texts = (f"off the model, {NEW} <= 2 x the better of {' and '.join(PEERS)}, median <= 1",
             f"{NEW} <= 1.5 x the best method given nothing in >= 90 % of the cells",
             f"where first recommended, {NEW} <= 1.05 x the best method given nothing")
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
