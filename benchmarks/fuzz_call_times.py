"""CPU time of every call of the API fuzz test (issue 19's target, issue 36's move out of the test).

Run from the repository root:

    python benchmarks/fuzz_call_times.py            # every call (writes results/fuzz_call_times.txt)
    python benchmarks/fuzz_call_times.py --only gchisq

``tests/test_fuzz_api.py`` calls every public callable of egmlib and egmbook with its valid
example and with each bad value of each parameter; there the only limit is a guard against
hangs, so that a busy machine cannot fail the test.  This script makes the same calls
(imported from the test module, one BLAS thread) and measures each one's CPU time: the
target is 1 s of CPU per call on any input of the shapes the docstrings allow, except the
calls a chapter runs (``RUN_ELSEWHERE``, and the findings that take no argument).  It prints
how many calls meet it and the slowest calls.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import importlib.util  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402

from egmbook.cli import argument_parser, result_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0


def _fuzz_module() -> ModuleType:
    """tests/test_fuzz_api.py as a module, loaded by its path (its folder is not put on sys.path)."""
    path = ROOT / "tests" / "test_fuzz_api.py"
    spec = importlib.util.spec_from_file_location("test_fuzz_api", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_fuzz_api"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argument_parser(doc=__doc__)
    ap.add_argument("--only", nargs="+", default=None, help="callables whose name contains one of these words")
    ap.add_argument("--top", type=int, default=20, help="how many of the slowest calls to list")
    args = ap.parse_args()
    fz = _fuzz_module()
    times: list[tuple[float, str]] = []
    for qualname, fn in fz.public_callables(book=True):
        if args.only and not any(word in qualname for word in args.only):
            continue
        if qualname in fz.RUN_ELSEWHERE or fz.run_by_its_chapter(qualname, fn):
            continue
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fz._instance_and_method(qualname, fn)(**fz.valid_kwargs(qualname, fn))
        times.append((time.process_time() - c0, f"{qualname} (valid example)"))
        for (name, _param), cases in fz.CASES_BY_PARAM.items():
            if name != qualname:
                continue
            for _q, f, p, label, category, bad in cases:
                c0 = time.process_time()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fz.run_case(qualname, f, p, category, bad)
                except AssertionError:
                    pass  # a finding: the test reports it
                times.append((time.process_time() - c0, f"{qualname}({p}=<{label}>)"))
    times.sort(reverse=True)
    over = [t for t in times if t[0] > TARGET_S]
    lines = [f"{len(times)} calls, {len(times) - len(over)} within {TARGET_S:g} s of CPU, {len(over)} over; "
             f"total {sum(t for t, _ in times):.1f} s; load average {os.getloadavg()[0]:.1f}",
             f"the {min(args.top, len(times))} slowest:"]
    lines += [f"  {t:7.3f} s  {what}" for t, what in times[:args.top]]
    print("\n".join(lines))
    out = result_path(ROOT / "benchmarks" / "results" / "fuzz_call_times.txt", full_run=not args.only)
    out.write_text("\n".join(lines) + "\n")
    print(f"saved to {out}")


if __name__ == "__main__":
    main()
