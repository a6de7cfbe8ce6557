#!/usr/bin/env python
"""Chapter 7b's audit of ESM with power: a likelihood-ratio attack on its final release, with controls.

Runs egmbook.power_audit.run_power_audit at its setting (10^5 releases of ESM per dataset, through
its public stage's IOME; about 20 min of CPU on one idle core) and stores the result under "power"
in data/privacy_audit.json (the file's other keys, chapter 7's stored audits, are kept).  Each block
of runs is cached in a scratch folder, so an interrupted run resumes where it stopped (empty the
folder after changing ESM).
Run from the repository root:

    python scripts/privacy_power_audit.py                 # the book's run, writes data/privacy_audit.json
    python scripts/privacy_power_audit.py --trials 2000   # a slice: writes power_audit.json in --scratch only

A run with fewer trials than the setting's never writes the committed file.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import joblib
import numpy as np

from egmbook import power_audit as pw
from egmbook.cli import argument_parser


def _block(st: pw.PowerSetting, block: tuple[int, int], path: Path) -> None:
    part = path.with_suffix(".part.npy")
    np.save(part, pw.power_releases(st, start=block[0], stop=block[1]).values)
    part.replace(path)  # whole blocks only: an interrupted run resumes from them


def main() -> None:
    parser = argument_parser(doc=__doc__)
    parser.add_argument("--trials", type=int, default=pw.PowerSetting().trials, help="releases per dataset")
    parser.add_argument("--block", type=int, default=500, help="runs per cached block")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (blocks are seeded by their runs)")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "egm-power-audit",
                        help="folder of the cached blocks")
    args = parser.parse_args()
    full = pw.PowerSetting()
    st = dataclasses.replace(full, trials=args.trials)
    out = pw.POWER_FILE if st.trials == full.trials else args.scratch / "power_audit.json"
    args.scratch.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    blocks = [(start, min(st.trials, start + args.block)) for start in range(0, st.trials, args.block)]
    path = {b: args.scratch / f"block_{st.seed}_{b[0]}_{b[1]}.npy" for b in blocks}
    todo = [b for b in blocks if not path[b].exists()]
    work = joblib.Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
        joblib.delayed(_block)(st, b, path[b]) for b in todo)
    for done, _ in enumerate(work, start=len(blocks) - len(todo) + 1):
        spent = time.perf_counter() - t0
        print(f"\r{done} of {len(blocks)} blocks of {args.block} runs per dataset, {spent / 60:.1f} min",
              end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    parts = [pw.PowerReleases(start=b[0], stop=b[1], values=np.load(path[b])) for b in blocks]
    audit = pw.audit_from_releases(pw.join_releases(parts), st)
    rec = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    rec["power"] = pw.power_to_json(audit)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    for r in audit.rows:
        a = {x.delta: x for x in r.attacks}[st.primary_delta]
        claim = r.claim[st.primary_delta]
        print(f"{r.name:30s} rho x{r.rho_true / st.rho:6.3g}  bound {a.eps_lb:.3f}  claim {claim:.3f}"
              f"  caught {r.caught[st.primary_delta]}")
    print(f"wrote {out} in {(time.perf_counter() - t0) / 60:.1f} min")


if __name__ == "__main__":
    main()
