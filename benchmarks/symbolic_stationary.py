"""egmlib.symbolic.solve_stationary_point up to the documented d = 200 (issue 25, item 6).

Run from the repository root:

    python benchmarks/symbolic_stationary.py            # d = 10, 50, 100, 200 (writes results/symbolic_stationary.txt)
    python benchmarks/symbolic_stationary.py --cap 60   # CPU seconds allowed per call

Each call runs in a fresh process (sympy caches results across calls) with a CPU-time
limit; it prints the CPU and wall time of ``solve_stationary_point`` on Lemma 4.1's
and Theorem 3's problems (building the problem not included), and checks that the
multiplier is the report's ``scale^2 (sum of the parameters)^2`` (eq. (15)).

To time another version of the library (e.g. before a change), put its checkout first
on the path: ``PYTHONPATH=/path/to/checkout python benchmarks/symbolic_stationary.py``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def run_one(kind: str, d: int) -> dict[str, float | bool | str]:
    """One call in this process."""
    import sympy as sp

    from egmlib import symbolic

    problem = symbolic.lemma41_problem(d) if kind == "lemma4.1" else symbolic.theorem3_problem(d)
    t0, c0 = time.perf_counter(), time.process_time()
    point = symbolic.solve_stationary_point(problem)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ok = sp.expand(point.multiplier - problem.scale**2 * sp.Add(*problem.params) ** 2) == 0
    return {"wall": wall, "cpu": cpu, "ok": bool(ok), "engine": symbolic.__file__}


def main() -> None:
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--d", type=int, nargs="+", default=[10, 50, 100, 200], help="dimensions")
    ap.add_argument("--cap", type=float, default=200.0, help="CPU seconds allowed per call")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: KIND D in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return
    cap = int(args.cap)
    say(f"solve_stationary_point, one process per call, CPU capped at {cap} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    say(f"{'problem':<10} {'d':>5} {'CPU s':>8} {'wall s':>8}  multiplier = scale^2 S^2")
    engine = "?"
    for kind in ("lemma4.1", "theorem3"):
        for d in args.d:
            proc = subprocess.run([sys.executable, __file__, "--one", kind, str(d)], capture_output=True, text=True,
                                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 5)),
                                  check=False)
            if proc.returncode != 0:
                say(f"{kind:<10} {d:>5} {'> ' + str(cap):>8} {'':>8}  (stopped at the CPU cap)")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            engine = str(r["engine"])
            say(f"{kind:<10} {d:>5} {r['cpu']:>8.2f} {r['wall']:>8.2f}  {'yes' if r['ok'] else 'NO'}")
    say(f"library: {engine}")
    _save(lines, engine, args.d == [10, 50, 100, 200])



def _save(lines: list[str], used: str, defaults: bool) -> None:
    """Keep the output in benchmarks/results/symbolic_stationary.txt when this checkout's library was
    measured with the default arguments."""
    here = Path(__file__).resolve().parent
    if defaults and Path(used).resolve().is_relative_to(here.parent):
        (here / "results" / "symbolic_stationary.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
