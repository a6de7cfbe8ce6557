"""Every function of egmlib.symbolic up to the documented d = 200 (issue 25, item 6; issue 36).

Run from the repository root:

    python benchmarks/symbolic_stationary.py                      # every function at d = 200 (saved)
    python benchmarks/symbolic_stationary.py --d 10 50 100 200    # a scan in d
    python benchmarks/symbolic_stationary.py --only solve_stationary_point --cap 60

Each call runs in a fresh process (sympy caches results across calls) with a CPU-time
limit; it prints the CPU and wall time of the call alone (its inputs -- the problem, a
stationary point, a bordered Hessian, d symbols -- are built first and not timed) and
checks one property of the result: the multiplier is the report's ``scale^2 S^2``
(eq. (15)), a certificate holds, a matrix has the right size, every leading principal
minor is negative (Appendix A).  Functions that take no dimension run once, at their
largest argument.

Only a run of every function at the default dimension saves its table, and only when it
measured this checkout's library.  To time another version of the library (e.g. before a
change), put its checkout first on the path:
``PYTHONPATH=/path/to/checkout python benchmarks/symbolic_stationary.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egmbook.cli import argument_parser

#: The dimension every function of egmlib.symbolic is documented to handle.
D_MAX = 200


def _problem(kind: str, d: int) -> Any:
    from egmlib import symbolic

    return symbolic.lemma41_problem(d) if kind == "lemma4.1" else symbolic.theorem3_problem(d)


def _multiplier_ok(problem: Any, multiplier: Any) -> bool:
    import sympy as sp

    return bool(sp.expand(multiplier - problem.scale**2 * sp.Add(*problem.params) ** 2) == 0)


def _case(name: str, kind: str, d: int) -> tuple[Callable[[], Any], Callable[[Any], bool]]:
    """(the timed call, a check of its result) for one function; inputs built here, untimed."""
    import sympy as sp

    from egmlib import symbolic as sym

    if name in ("lemma41_problem", "theorem3_problem"):
        build = getattr(sym, name)
        return (lambda: build(d)), (lambda P: P.d == d)
    if name in ("arrowhead_matrix", "arrowhead_det_closed_form"):
        a, c = sp.symbols(f"a1:{d + 1}"), sp.symbols(f"c1:{d + 1}")
        fn = getattr(sym, name)
        check = (lambda M: M.shape == (d + 1, d + 1)) if name == "arrowhead_matrix" else (lambda e: len(e.args) == d)
        return (lambda: fn(a, c=c)), check
    if name == "lemma41_minor_closed_form":
        sig, s = sp.symbols(f"sigma1:{d + 1}", positive=True), sp.Symbol("s", positive=True)
        return (lambda: sym.lemma41_minor_closed_form(d + 1, sigma=sig, s=s)), (lambda e: bool(e.is_negative))
    if name == "theorem3_minor_closed_form":
        dl, so = sp.symbols(f"Delta1:{d + 1}", positive=True), sp.Symbol("sigma_opt", positive=True)
        return (lambda: sym.theorem3_minor_closed_form(d + 1, Delta=dl, sigma_opt=so)), (lambda e: bool(e.is_negative))
    if name == "report_appendix_a_matrix":
        return (lambda: sym.report_appendix_a_matrix(d)), (lambda r: r.H.shape == (d + 1, d + 1))
    P = _problem(kind, d)
    if name == "stationarity_system":
        return (lambda: sym.stationarity_system(P)), (lambda eqs: len(eqs) == d + 1)
    if name == "multiplier_at_stationarity":
        expected = sym.expected_stationary_point(P)
        return (lambda: sym.multiplier_at_stationarity(P)), (
            lambda lams: len(lams) == d
            and sp.simplify(lams[-1].xreplace(expected.as_dict(P)) - expected.multiplier) == 0)
    if name == "solve_stationary_point":
        return (lambda: sym.solve_stationary_point(P)), (lambda pt: _multiplier_ok(P, pt.multiplier))
    if name == "expected_stationary_point":
        return (lambda: sym.expected_stationary_point(P)), (lambda pt: _multiplier_ok(P, pt.multiplier))
    if name == "report_printed_steps":
        return (lambda: sym.report_printed_steps(P)), (lambda st: len(st.eq16) == d)
    if name == "bordered_hessian":
        return (lambda: sym.bordered_hessian(P)), (lambda H: H.shape == (d + 1, d + 1) and H[0, 0] == 0)
    if name == "bordered_hessian at the point":
        point = sym.expected_stationary_point(P)
        return (lambda: sym.bordered_hessian(P, point=point)), (lambda H: H.shape == (d + 1, d + 1))
    if name == "leading_principal_minors":
        H = sym.bordered_hessian(P, point=sym.expected_stationary_point(P))
        return (lambda: sym.leading_principal_minors(H)), (
            lambda minors: len(minors) == d and all(m.is_negative for m in minors.values()))
    if name == "squared_variable_form":
        return (lambda: sym.squared_variable_form(P)), (lambda f: f.convex)
    if name == "cauchy_schwarz_certificate":
        return (lambda: sym.cauchy_schwarz_certificate(P)), (lambda c: c.holds)
    # the functions without a dimension, at their largest arguments
    fixed: dict[str, tuple[Callable[[], Any], Callable[[Any], bool]]] = {
        "chi2_moment": (lambda: sym.chi2_moment(1000), lambda m: m > 0),
        "chi2_abs_central_moment": (lambda: sym.chi2_abs_central_moment(100), lambda m: m > 0),
        "prove_arrowhead_determinant": (lambda: sym.prove_arrowhead_determinant(max_explicit=10),
                                        lambda p: p.verified),
        "general_stationary_point": (lambda: sym.general_stationary_point(kind=kind),
                                     lambda g: g.residual_b == 0 and g.residual_constraint == 0),
        "general_minor_closed_form": (lambda: sym.general_minor_closed_form(kind=kind), lambda g: g.equal),
        "general_bordered_hessian": (sym.general_bordered_hessian, lambda g: g.matches_closed_form),
        "prove_arrowhead_recurrence": (sym.prove_arrowhead_recurrence, lambda p: p.verified),
        "general_minors": (sym.general_minors, lambda g: g.verified),
        "laurent_massart_steps": (sym.laurent_massart_steps, lambda s: s.verified),
    }
    return fixed[name]


#: (function, problems it runs on: both, Lemma 4.1's only, or none: no dimension)
CASES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("lemma41_problem", ("lemma4.1",), True),
    ("theorem3_problem", ("theorem3",), True),
    ("stationarity_system", ("lemma4.1", "theorem3"), True),
    ("multiplier_at_stationarity", ("lemma4.1", "theorem3"), True),
    ("solve_stationary_point", ("lemma4.1", "theorem3"), True),
    ("expected_stationary_point", ("lemma4.1", "theorem3"), True),
    ("report_printed_steps", ("lemma4.1",), True),
    ("bordered_hessian", ("lemma4.1", "theorem3"), True),
    ("bordered_hessian at the point", ("lemma4.1", "theorem3"), True),
    ("leading_principal_minors", ("lemma4.1", "theorem3"), True),
    ("arrowhead_matrix", ("-",), True),
    ("arrowhead_det_closed_form", ("-",), True),
    ("lemma41_minor_closed_form", ("-",), True),
    ("theorem3_minor_closed_form", ("-",), True),
    ("report_appendix_a_matrix", ("-",), True),
    ("squared_variable_form", ("lemma4.1", "theorem3"), True),
    ("cauchy_schwarz_certificate", ("lemma4.1", "theorem3"), True),
    ("chi2_moment", ("-",), False),
    ("chi2_abs_central_moment", ("-",), False),
    ("prove_arrowhead_determinant", ("-",), False),
    ("general_stationary_point", ("lemma4.1", "theorem3"), False),
    ("general_minor_closed_form", ("lemma4.1", "theorem3"), False),
    ("general_bordered_hessian", ("-",), False),
    ("prove_arrowhead_recurrence", ("-",), False),
    ("general_minors", ("-",), False),
    ("laurent_massart_steps", ("-",), False),
)


def run_one(name: str, kind: str, d: int) -> dict[str, float | bool | str]:
    """One call in this process."""
    from egmlib import symbolic

    call, check = _case(name, kind, d)
    t0, c0 = time.perf_counter(), time.process_time()
    result = call()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "ok": bool(check(result)), "engine": symbolic.__file__}


def main() -> None:
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    ap = argument_parser(doc=__doc__)
    ap.add_argument("--d", type=int, nargs="+", default=[D_MAX], help="dimensions")
    ap.add_argument("--only", nargs="+", default=None, help="these functions only (default: every one)")
    ap.add_argument("--cap", type=float, default=120.0, help="CPU seconds allowed per call")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # internal: NAME KIND D in this process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], args.one[1], int(args.one[2]))))
        return
    cap = int(args.cap)
    names = [c[0] for c in CASES]
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        ap.error(f"--only: no such function {unknown}; choose from {names}")
    say(f"egmlib.symbolic, one process per call, CPU capped at {cap} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    say(f"{'function':<32} {'problem':<9} {'d':>5} {'CPU s':>8} {'wall s':>8}  check")
    engine = "?"
    for name, kinds, sized in CASES:
        if args.only and name not in args.only:
            continue
        for kind in kinds:
            for d in (args.d if sized else [0]):
                proc = subprocess.run([sys.executable, __file__, "--one", name, kind, str(d)], capture_output=True,
                                      text=True, check=False,
                                      preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 5)))
                dd = str(d) if sized else "-"
                if proc.returncode != 0:
                    why = "stopped at the CPU cap" if proc.returncode < 0 else proc.stderr.strip().splitlines()[-1]
                    say(f"{name:<32} {kind:<9} {dd:>5} {'> ' + str(cap) if proc.returncode < 0 else 'error':>8} "
                        f"{'':>8}  ({why})")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                engine = str(r["engine"])
                say(f"{name:<32} {kind:<9} {dd:>5} {r['cpu']:>8.2f} {r['wall']:>8.2f}  {'yes' if r['ok'] else 'NO'}")
    say(f"library: {engine}")
    _save(lines, engine, full=args.d == [D_MAX] and not args.only)


def _save(lines: list[str], used: str, *, full: bool) -> None:
    """Keep the output in benchmarks/results/symbolic_stationary.txt when every function of this
    checkout's library was measured at the default dimension; say where it went otherwise."""
    here = Path(__file__).resolve().parent
    if full and Path(used).resolve().is_relative_to(here.parent):
        out = here / "results" / "symbolic_stationary.txt"
        out.write_text("\n".join(lines) + "\n")
        print(f"saved to {out}")
    else:
        print("not saved: only a run of every function at d = 200 on this checkout's library is kept")


if __name__ == "__main__":
    main()
