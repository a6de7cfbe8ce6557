r"""The book's run of the black-box audit (chapter 7b), its typed setting and stored results.

``python -m egmbook.book_audit`` runs :func:`run_book_audit` and writes
``data/privacy_audit.json``; :func:`load_book_audit` reads it back as a :class:`BookAudit`.
The run has three parts, all on the same claim (``eps`` at ``delta`` of :class:`AuditSetting`):

1. Algorithm 3 and its two weakened controls on the worst-case pair
   (:func:`egmbook.privacy_audit.black_box_audit`);
2. the end-to-end pipelines (``ARMS["Alg3"]``, the robust pipeline, and chapter 8's
   :func:`egmlib.peers.algorithm3.algorithm3_private`) on the same kind of pair, at
   :math:`\rho` = :func:`egmlib.calibration.eps_to_rho` of the claim;
3. the same pipelines on issue 25's attacked pairs (:mod:`egmbook.neighbours`), a constant
   column and data far from the origin, which target their centre and radius steps, at the
   claim (``pairs_eps``, ``delta``), each also run with CoinPress's cancelling distances
   (:func:`egmbook.privacy_audit.with_cancelling_distances`), a negative control that must
   be caught.

Every bound the chapter reports holds jointly with probability at least
:data:`egmbook.privacy_audit.CONFIDENCE`: each is computed at level
:math:`(1 - \text{CONFIDENCE})/m` for the :math:`m` bounds of the run (a union bound).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from egmbook import neighbours
from egmbook import privacy_audit as pa
from egmbook.experiments import zipf_sigmas
from egmlib import calibration

__all__ = ["AuditSetting", "BookAudit", "bounds_reported", "load_book_audit", "row_from_json",
           "run_book_audit", "to_json"]

# Where the book's run is stored: data/privacy_audit.json of the repository.
_BOOK_AUDIT = Path(__file__).resolve().parents[1] / "data" / "privacy_audit.json"


@dataclass(frozen=True)
class AuditSetting:
    """The setting of chapter 7b's audit.

    eps = 8 at delta = 1e-6 is the claim; the attack's power depends on the noise
    multiplier only, and at this claim about 1.2 x 10^4 held-out outputs per dataset catch a
    10 % noise deficit at the joint level of the bounds at the expected counts
    (:func:`egmbook.privacy_audit.trials_needed`); the run holds out 4 x 10^4, enough to catch
    it in 20 of 20 simulated audits (tests/test_privacy_audit.py).  ``primary_delta`` is fixed in advance as
    the delta at which "caught" is decided; the other deltas trace the curve.
    """

    d: int = 10
    zipf_alpha: float = 1.0
    n: int = 100
    eps: float = 8.0
    delta: float = 1e-6
    trials: int = 80_000
    deltas: tuple[float, ...] = (1e-6, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.2, 0.3)
    primary_delta: float = 0.1
    seed: int = 20261127
    pipeline_n: int = 2000
    pipeline_trials: int = 1_200
    pipeline_bounds: tuple[float, float] = (-10.0, 10.0)
    #: the claim eps of issue 25's attacked pairs, at delta; the pipelines' budget is then
    #: rho = 0.068, where n sqrt(rho) = 1040 keeps the robust pipeline on Algorithm 3's path
    pairs_eps: float = 2.0
    #: a constant column (n, d, box, the moved entry's new value) ...
    constant_n: int = 4000
    constant_d: int = 4
    constant_bounds: tuple[float, float] = (-20.0, 20.0)
    constant_moved_to: float = 15.0
    #: ... and every entry at one value far from the origin of its box, one entry moved
    far_n: int = 4000
    far_d: int = 3
    far_bounds: tuple[float, float] = (0.0, 1e4)
    far_value: float = 5000.0
    far_move: float = 1e-4
    pair_trials: int = 1_200

    @property
    def rho(self) -> float:
        """The pipelines' budget, :func:`egmlib.calibration.eps_to_rho` of the claim."""
        return calibration.eps_to_rho(self.eps, delta=self.delta)

    @property
    def pairs_rho(self) -> float:
        """The pipelines' budget on the attacked pairs, eps_to_rho(pairs_eps, delta)."""
        return calibration.eps_to_rho(self.pairs_eps, delta=self.delta)


@dataclass(frozen=True)
class BookAudit:
    """The stored run: the setting, the level of each bound, and the audited rows."""

    setting: AuditSetting
    rho: float  #: the pipelines' budget
    pairs_rho: float  #: their budget on the attacked pairs
    alpha_each: float  #: the level of each bound, (1 - CONFIDENCE) / bounds
    bounds: int  #: the number of bounds the run reports
    mechanisms: tuple[pa.AuditRow, ...]  #: Algorithm 3 and its weakened controls
    pipelines: tuple[pa.AuditRow, ...]  #: the pipelines on the worst-case pair
    #: the pipelines and their cancelling-distance controls, by pair
    pairs: Mapping[str, tuple[pa.AuditRow, ...]] = field(default_factory=dict)


def _pipelines() -> list[Callable[..., Any]]:
    from egmlib.peers.algorithm3 import algorithm3_private
    from egmlib.peers.arms import ARMS

    return [ARMS["Alg3"], algorithm3_private]


def _pairs(st: AuditSetting,
           rng: np.random.Generator) -> dict[str, tuple[neighbours.NeighbourPair, tuple[float, float]]]:
    return {
        "constant column": (neighbours.constant_column_pair(n=st.constant_n, d=st.constant_d, rng=rng,
                                                            moved_to=st.constant_moved_to), st.constant_bounds),
        "far from origin": (neighbours.far_from_origin_pair(n=st.far_n, d=st.far_d, value=st.far_value,
                                                            move=st.far_move), st.far_bounds),
    }


def bounds_reported(audit_setting: AuditSetting) -> int:
    """The number of bounds of :func:`run_book_audit`: one per audited row and delta."""
    st = _check_setting(audit_setting)
    rows = 3 + len(_pipelines()) + 2 * 2 * len(_pipelines())
    return rows * len(st.deltas)


def _check_setting(audit_setting: Any) -> AuditSetting:
    if not isinstance(audit_setting, AuditSetting):
        raise TypeError(f"audit_setting must be an AuditSetting, got audit_setting of type "
                        f"{type(audit_setting).__name__}")
    return audit_setting


def run_book_audit(audit_setting: AuditSetting | None = None) -> BookAudit:
    """Chapter 7b's audit (module docstring); several minutes on one core.

    Random streams: Algorithm 3 and its controls from ``default_rng(seed)``; pipeline k on
    the worst-case pair from ``default_rng(seed + 1 + k)``; the attacked pairs from
    ``default_rng(seed + 10)``, and row j on pair i from ``default_rng(seed + 100 + 10 i + j)``.
    """
    st = AuditSetting() if audit_setting is None else _check_setting(audit_setting)
    m = bounds_reported(st)
    alpha = (1.0 - pa.CONFIDENCE) / m
    sigma = zipf_sigmas(st.d, alpha=st.zipf_alpha)
    mechanisms = pa.black_box_audit(sigma, n=st.n, eps=st.eps, delta=st.delta, trials=st.trials,
                                    rng=np.random.default_rng(st.seed), deltas=st.deltas, alpha=alpha)
    lo, hi = st.pipeline_bounds
    pipes = [pa.pipeline_audit(sigma, n=st.pipeline_n, rho=st.rho, trials=st.pipeline_trials,
                               rng=np.random.default_rng(st.seed + 1 + k), deltas=st.deltas, lower=lo, upper=hi,
                               pipeline=pipe, alpha=alpha)
             for k, pipe in enumerate(_pipelines())]
    pairs: dict[str, tuple[pa.AuditRow, ...]] = {}
    for i, (name, ((X, Xp), (plo, phi))) in enumerate(_pairs(st, np.random.default_rng(st.seed + 10)).items()):
        runs = [p for pipe in _pipelines() for p in (pipe, pa.with_cancelling_distances(pipe))]
        pairs[name] = tuple(
            pa.pair_audit(X, Xp, pipeline=pipe, rho=st.pairs_rho, trials=st.pair_trials,
                          rng=np.random.default_rng(st.seed + 100 + 10 * i + j), deltas=st.deltas,
                          lower=plo, upper=phi, alpha=alpha)
            for j, pipe in enumerate(runs))
    return BookAudit(setting=st, rho=st.rho, pairs_rho=st.pairs_rho, alpha_each=alpha, bounds=m,
                     mechanisms=tuple(mechanisms), pipelines=tuple(pipes), pairs=pairs)


# --------------------------------------------------------------------------------------- #
# JSON
# --------------------------------------------------------------------------------------- #
def _row_json(row: pa.AuditRow) -> dict[str, Any]:
    return {"name": row.name, "noise_factor": row.noise_factor,
            "claimed_eps": [[k, v] for k, v in row.claimed_eps.items()],
            "true_eps": [[k, v] for k, v in row.true_eps.items()],
            "attacks": [a._asdict() for a in row.attacks],
            "spread_ratio": row.spread_ratio, "shift_sd": row.shift_sd}


def row_from_json(rec: Mapping[str, Any]) -> pa.AuditRow:
    """Inverse of the stored record of one :class:`egmbook.privacy_audit.AuditRow`."""
    if not isinstance(rec, Mapping):
        raise TypeError(f"rec must be a mapping (a stored row), got rec of type {type(rec).__name__}")
    missing = [k for k in ("name", "noise_factor", "claimed_eps", "true_eps", "attacks") if k not in rec]
    if missing:
        raise ValueError(f"rec must be a stored audit row, got rec without {missing}")
    return pa.AuditRow(name=rec["name"], noise_factor=float(rec["noise_factor"]),
                       claimed_eps={float(k): float(v) for k, v in rec["claimed_eps"]},
                       true_eps={float(k): float(v) for k, v in rec["true_eps"]},
                       attacks=[pa.AttackResult(**a) for a in rec["attacks"]],
                       spread_ratio=rec.get("spread_ratio"), shift_sd=rec.get("shift_sd"))


def to_json(audit: BookAudit) -> dict[str, Any]:
    """Plain JSON material of a :class:`BookAudit`."""
    if not isinstance(audit, BookAudit):
        raise TypeError(f"audit must be a BookAudit, got audit of type {type(audit).__name__}")
    st = asdict(audit.setting)
    return {"setting": st, "rho": audit.rho, "pairs_rho": audit.pairs_rho, "alpha_each": audit.alpha_each,
            "bounds": audit.bounds,
            "mechanisms": [_row_json(r) for r in audit.mechanisms],
            "pipelines": [_row_json(r) for r in audit.pipelines],
            "pairs": {k: [_row_json(r) for r in rows] for k, rows in audit.pairs.items()}}


def load_book_audit(path: str | Path | None = None) -> BookAudit:
    """The stored run of :func:`run_book_audit` (default: the repository's ``data/privacy_audit.json``)."""
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str, a Path or None, got path of type {type(path).__name__}")
    rec = json.loads(Path(_BOOK_AUDIT if path is None else path).read_text(encoding="utf-8"))
    st = rec["setting"]
    setting = AuditSetting(**{k: tuple(v) if isinstance(v, list) else v for k, v in st.items()})  # type: ignore[arg-type]
    return BookAudit(setting=setting, rho=float(rec["rho"]), pairs_rho=float(rec["pairs_rho"]),
                     alpha_each=float(rec["alpha_each"]), bounds=int(rec["bounds"]),
                     mechanisms=tuple(row_from_json(r) for r in rec["mechanisms"]),
                     pipelines=tuple(row_from_json(r) for r in rec["pipelines"]),
                     pairs={k: tuple(row_from_json(r) for r in rows) for k, rows in rec["pairs"].items()})


if __name__ == "__main__":  # pragma: no cover - writes the book's stored run
    import sys
    import time

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else _BOOK_AUDIT
    t0 = time.perf_counter()
    out.write_text(json.dumps(to_json(run_book_audit()), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} in {time.perf_counter() - t0:.0f} s")
