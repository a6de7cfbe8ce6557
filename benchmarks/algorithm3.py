"""Benchmark: Algorithm 3 (egmlib.mechanisms.algorithm3) on data larger than RAM
would comfortably copy: n = 10^6 rows, d = 1000, float64 (X is 8 GB).

The data (rows from N(mu, diag(sigma^2)) with Zipf(1) sigmas) is generated in chunks
into a np.memmap file under /tmp and the mechanism runs on the memmap.  Each
measurement runs in a fresh child process, so its peak memory is its own:

- time: wall clock of one algorithm3 call (includes the radius C from
  gchisq.isf, reported separately), with the file's pages first evicted from the page
  cache (posix_fadvise DONTNEED on this file only: "cold", data read from disk; one
  call) and right after ("warm", data in the page cache; best of four calls);
- baseline: np.sum(X, axis=0) on the same memmap, warm, best of three: one read of X,
  the floor;
- memory: the peaks of the child's private (anonymous) and total resident memory,
  sampled from /proc/self/status every 2 ms during the call, minus their values
  before it; the tracemalloc peak of the call (numpy's allocations); and the child's
  peak RSS (ru_maxrss).  Total RSS counts the memmap's file pages while they are
  mapped: that is the OS page cache of the file on disk, shared and reclaimable, not
  a copy of X.  The acceptance target ("no more than about
  two copies of X") concerns private memory.

Run:  python benchmarks/algorithm3.py [--n-max 1000000] [--d 1000] [--keep]
      (writes benchmarks/results/algorithm3.txt when run with the defaults)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np

from egmbook.cli import argument_parser

EPS, DELTA = 1.0, 1e-8
SEED = 20230120
GEN_ROWS = 2**14


def model(d: int) -> tuple[np.ndarray, np.ndarray]:
    from egmbook.experiments import zipf_sigmas

    sigma = zipf_sigmas(d, alpha=1.0)
    mu = np.random.default_rng(SEED).normal(size=d)
    return sigma, mu


def generate(path: Path, n: int, d: int) -> float:
    """Write n rows of N(mu, diag(sigma^2)) to a float64 memmap, chunk by chunk."""
    sigma, mu = model(d)
    rng = np.random.default_rng(SEED + 1)
    t0 = time.perf_counter()
    mm = np.memmap(path, dtype=np.float64, mode="w+", shape=(n, d))
    for s in range(0, n, GEN_ROWS):
        m = min(GEN_ROWS, n - s)
        block = rng.standard_normal((m, d))
        block *= sigma
        block += mu
        mm[s:s + m] = block
    mm.flush()
    del mm
    with open(path, "rb") as f:
        os.fsync(f.fileno())
    return time.perf_counter() - t0


def evict(path: Path) -> None:
    """Drop this file's pages from the page cache (affects no other file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class RssSampler:
    """Peaks of RssAnon (private) and VmRSS (all resident) minus their starting values,
    sampled in a background thread every 2 ms."""

    FIELDS = ("RssAnon", "VmRSS")

    def __init__(self, every: float = 0.002) -> None:
        self.every, self._stop = every, threading.Event()

    def _read(self) -> dict[str, int]:
        return {f: _status_kb(f) for f in self.FIELDS}

    def _update(self) -> None:
        now = self._read()
        for f in self.FIELDS:
            self.peak[f] = max(self.peak[f], now[f])

    def __enter__(self) -> RssSampler:
        self.start = self._read()
        self.peak = dict(self.start)
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self._update()
            time.sleep(self.every)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()
        self._update()

    def delta_kb(self, field: str) -> int:
        return self.peak[field] - self.start[field]


def child(path: str, n_total: int, n: int, d: int, cold: bool) -> dict:
    """One measurement in a fresh process; prints a JSON record."""
    import tracemalloc

    from egmlib import calibration, gchisq
    from egmlib.mechanisms import algorithm3

    sigma, mu = model(d)
    X = np.memmap(path, dtype=np.float64, mode="r", shape=(n_total, d))[:n]
    # warm up imports and the calibration outside the measured call
    calibration.sigma_opt(eps=EPS, delta=DELTA)
    t0 = time.perf_counter()
    gchisq.isf(1.0 / n, w=sigma / sigma.sum())
    t_isf = time.perf_counter() - t0
    if cold:
        evict(Path(path))
    rng = np.random.default_rng(SEED + n)
    with RssSampler() as samp:
        t0 = time.perf_counter()
        r = algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng)
        t_call = time.perf_counter() - t0
    rec = dict(n=n, d=d, cold=cold, t_call=t_call, t_isf=t_isf, C=r.C, n_clipped=r.n_clipped,
               p_clip=r.p_clip, anon_peak_kb=samp.delta_kb("RssAnon"), rss_peak_kb=samp.delta_kb("VmRSS"),
               maxrss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               finite=bool(np.all(np.isfinite(r.sum))))
    if not cold:  # best of three more warm calls, then tracemalloc and the baseline
        for _ in range(3):
            t0 = time.perf_counter()
            algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng)
            rec["t_call"] = min(rec["t_call"], time.perf_counter() - t0)
        tracemalloc.start()
        algorithm3(X, sigma=sigma, mu_hat=mu, eps=EPS, delta=DELTA, rng=rng)
        rec["tracemalloc_peak_kb"] = tracemalloc.get_traced_memory()[1] / 1024
        tracemalloc.stop()
        rec["t_sum"] = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            s = np.sum(X, axis=0)
            rec["t_sum"] = min(rec["t_sum"], time.perf_counter() - t0)
        # accuracy of the release against the exact column sum: the noise std (eq. (9))
        err2 = float(np.sum((r.sum - s) ** 2))
        rec["sq_error"] = err2
        rec["expected_noise_error"] = r.expected_noise_error
    return rec


def run_child(path: Path, n_total: int, n: int, d: int, cold: bool) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), str(n_total), str(n), str(d), str(int(cold))],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argument_parser(doc=__doc__)
    ap.add_argument("--n-max", type=int, default=10**6)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--keep", action="store_true", help="keep the data file")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--generate", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.generate:
        p, n, d = a.generate
        print(json.dumps({"t_gen": generate(Path(p), int(n), int(d))}))
        return
    if a.child:
        p, nt, n, d, cold = a.child
        print(json.dumps(child(p, int(nt), int(n), int(d), bool(int(cold)))))
        return

    n_max, d = a.n_max, a.d
    path = Path(a.dir) / f"egm_alg3_bench_{n_max}x{d}.f64"
    size_gb = n_max * d * 8 / 1e9
    lines: list[str] = []

    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)

    say("Algorithm 3 (algorithm3) on a np.memmap: time and peak memory")
    say(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 1e9:.1f} GB RAM; "
        f"python {platform.python_version()}, numpy {np.__version__}")
    say(f"data: rows ~ N(mu, diag(sigma^2)), sigma = Zipf(alpha=1) normalised, d = {d}; "
        f"mu_hat = mu, p_clip = 1/n, eps = {EPS}, delta = {DELTA}")
    # in a child too: a parent's peak RSS is inherited by the children it starts
    out = subprocess.run([sys.executable, __file__, "--generate", str(path), str(n_max), str(d)],
                         check=True, capture_output=True, text=True)
    t_gen = json.loads(out.stdout.strip().splitlines()[-1])["t_gen"]
    say(f"generated {path} ({size_gb:.2f} GB) in {t_gen:.1f} s; "
        f"load average before the runs {os.getloadavg()[0]:.2f} (shared machine)")
    say("")
    ns = [n for n in (10**4, 10**5, 10**6, 10**7) if n < n_max] + [n_max]
    hdr = (f"{'n':>9} {'X GB':>6} {'cold s':>7} {'warm s':>7} {'sum s':>6} {'isf s':>6} "
           f"{'anon MB':>8} {'tracemalloc MB':>14} {'RSS GB':>7} {'maxrss GB':>9} {'clipped':>7} {'C':>7} {'err/E':>6}")
    say(hdr)
    say("-" * len(hdr))
    try:
        for n in ns:
            c = run_child(path, n_max, n, d, cold=True)
            w = run_child(path, n_max, n, d, cold=False)
            anon = max(c["anon_peak_kb"], w["anon_peak_kb"]) / 1024
            say(f"{n:>9} {n * d * 8 / 1e9:>6.2f} {c['t_call']:>7.2f} {w['t_call']:>7.2f} {w['t_sum']:>6.2f} "
                f"{w['t_isf']:>6.2f} {anon:>8.1f} {w['tracemalloc_peak_kb'] / 1024:>14.1f} "
                f"{max(c['rss_peak_kb'], w['rss_peak_kb']) / 1024**2:>7.2f} "
                f"{max(c['maxrss_kb'], w['maxrss_kb']) / 1024**2:>9.2f} {w['n_clipped']:>7} "
                f"{w['C']:>7.4f} {w['sq_error'] / w['expected_noise_error']:>6.2f}")
            if not (c["finite"] and w["finite"]):
                raise RuntimeError("non-finite estimate")
    finally:
        if not a.keep:
            path.unlink(missing_ok=True)
    say("")
    notes = (
        "cold: one call with the file's pages evicted from the page cache first (read from disk; "
        "varies with the disk and other load); warm: best of four calls right after, data in the "
        "page cache.  sum s: best of three np.sum(X, axis=0) on the same memmap (one read of X, "
        "the floor).  isf s: the radius C = sqrt(gchisq.isf(1/n, w=sigma/sum sigma)), included in "
        "the call times.  anon MB: peak private (anonymous) memory during the call minus before.  "
        "tracemalloc MB: peak of numpy's allocations in the call (incl. gchisq.isf).  RSS GB: peak "
        "resident memory during the call minus before; maxrss GB: the child's peak RSS "
        "(ru_maxrss).  Both RSS columns include the memmap's resident file pages (the page cache "
        "of the file, shared and reclaimable by the OS), not copies of X.  err/E: squared error "
        "of the release against the exact sum over its expectation, eq. (9); one draw each, so "
        "about 1 +- sqrt(2/d_eff) with d_eff = (sum sigma)^2 / sum sigma^2."
    )
    for line in textwrap.wrap(notes, 92):
        say(line)
    if n_max == 10**6 and d == 1000:
        saved = Path(__file__).resolve().parent / "results" / "algorithm3.txt"
        saved.parent.mkdir(exist_ok=True)
        saved.write_text("\n".join(lines) + "\n")
        print(f"written to {saved}")


if __name__ == "__main__":
    main()
