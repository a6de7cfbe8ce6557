"""The engine's certification checks, and the switch that turns them off.

Private helper of :mod:`egmlib.gchisq`; the public switch is
:func:`egmlib.gchisq.engine_checks`. The flags live in a :class:`contextvars.ContextVar`,
read where each check runs (the planner's hump analysis, the check contour, the
certifier's repairs), so that switching a check off inside a ``with`` block touches no
module attribute and ends with the block, also when it raises.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineChecks:
    """Which of the engine's checks run (all of them unless switched off)."""

    hump_analysis: bool = True
    check_contour: bool = True
    repairs: bool = True


_CURRENT: ContextVar[EngineChecks] = ContextVar(  # the default is a frozen dataclass, immutable
    "egmlib_gchisq_engine_checks", default=EngineChecks())  # noqa: B039


def current() -> EngineChecks:
    """The checks in force in this context."""
    return _CURRENT.get()


def enter(checks: EngineChecks) -> Token[EngineChecks]:
    """Put ``checks`` in force; returns the token that :func:`leave` takes to restore the previous ones."""
    return _CURRENT.set(checks)


def leave(token: Token[EngineChecks]) -> None:
    """Restore the checks in force before the :func:`enter` that returned ``token``."""
    _CURRENT.reset(token)
