"""The command lines of the book's benchmarks and pipeline scripts (``benchmarks/``, ``scripts/``).

Every script is a thin argparse shell over functions of egmbook and egmlib; its module
docstring is its help: :func:`argument_parser` takes the first paragraph as the description
and the rest as the epilog, and shows every default that is set.  ``--help`` prints and
exits before anything runs, and :func:`result_path` says where a run's result goes: a
partial run never writes over a committed result.

Examples
--------
>>> p = argument_parser(doc="Time one thing.\\n\\nRun:  python benchmarks/x.py [--reps 5]")
>>> _ = p.add_argument("--reps", type=int, default=5, help="repetitions")
>>> "(default: 5)" in p.format_help()
True
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["argument_parser", "result_path"]


def _shows_default(action: argparse.Action) -> bool:
    return action.default not in (None, False) and action.default is not argparse.SUPPRESS


class _Formatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The docstring as written; ``(default: ...)`` after every option whose default is set."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if not _shows_default(action) or "%(default)" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """An option given no help text still shows its default."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.help is None and _shows_default(action):
            action.help = "(default: %(default)s)"
        return action


def argument_parser(*, doc: str) -> argparse.ArgumentParser:
    """A parser for a benchmark or pipeline script of the book (chapters 5 to 9) whose module
    docstring is ``doc``: its first paragraph as the description, the rest as the epilog,
    with the defaults shown."""
    if not isinstance(doc, str):
        raise TypeError(f"doc must be a str (the script's docstring), got doc of type {type(doc).__name__}")
    first, _, rest = doc.strip().partition("\n\n")
    if not first:
        raise ValueError("doc must be a non-empty docstring, got an empty doc")
    return _Parser(description=first, epilog=rest or None, formatter_class=_Formatter)


def result_path(path: str | Path, *, full_run: bool) -> Path:
    """Where a benchmark or pipeline script of the book (chapters 5 to 9) writes its result
    ``path``: ``path`` itself after a full run, whose output is the committed result; after a
    slice (fewer runs, repetitions or points than the committed run) the same file name in a
    ``scratch`` folder beside it, created here and ignored by git, so that a slice never
    overwrites a committed result. Says where a slice goes."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a Path, got path of type {type(path).__name__}")
    if not isinstance(full_run, bool):
        raise TypeError(f"full_run must be True or False, got full_run of type {type(full_run).__name__}")
    target = Path(path)
    if full_run:
        return target
    scratch = target.parent / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    print(f"a partial run: its result goes to {scratch / target.name}, not over {target}")
    return scratch / target.name
