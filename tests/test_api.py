"""The shape of egmlib's public API (issue 10, items 2, 5 and 6), checked for every public
callable that tests/test_fuzz_api.py enumerates, so that a module added later is held to
the same rules:

* parameters are keyword-only after the first (the data argument);
* every parameter and the return value carry a type hint;
* the docstring cites what it implements: an equation, lemma, theorem, algorithm,
  definition, section, figure or appendix of the report, the paper it follows, or the
  chapter of the book that goes beyond the report;
* every public module, those of subpackages included, is listed in egmlib's docstring and
  has a page in the API reference (chapters/api/, a subpackage's modules in its folder,
  e.g. chapters/api/peers/plan.md; its index table and _toc.yml).
"""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path

import pytest

import egmlib

from test_fuzz_api import public_callables, public_modules

CITATION = re.compile(
    r"\beqs?\.|Lemma|Theorem|Proposition|Algorithm|Definition|Corollary|Section|Figure|Appendix|"
    r"Balle|Dwork|Pagh|lecture notes|chapter 7|report|"
    # the papers that egmlib.peers implements
    r"Aumuller|Huang, Liang and Yi|Biswas|Bun and Steinke|Kaplan|Smith \(2011|Laurent and Massart|"
    r"Cesar and Rogers|"
    # floating-point error analysis of the clipped sum (egmlib.clipping)
    r"Higham"
)
CALLABLES = public_callables()


PARAMS = [pytest.param(q, fn, id=q) for q, fn in CALLABLES]


def _params(fn):
    target = fn.__init__ if inspect.isclass(fn) else fn
    return [p for p in inspect.signature(target).parameters.values() if p.name != "self"], target


@pytest.mark.parametrize("qualname,fn", PARAMS)
def test_keyword_only_after_the_data_argument(qualname, fn):
    params, _ = _params(fn)
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(positional) <= 1, (
        f"{qualname}: {positional} can be passed by position; make all but the first keyword-only")


@pytest.mark.parametrize("qualname,fn", PARAMS)
def test_type_hints_on_every_parameter_and_return(qualname, fn):
    params, target = _params(fn)
    hints = typing.get_type_hints(target)
    missing = [p.name for p in params if p.name not in hints]
    if not inspect.isclass(fn) or fn.__init__ is not object.__init__:
        if "return" not in hints:
            missing.append("return")
    assert not missing, f"{qualname}: no type hint for {missing}"


@pytest.mark.parametrize("qualname,fn", PARAMS)
def test_docstring_cites_the_report(qualname, fn):
    doc = inspect.getdoc(fn) or ""
    assert CITATION.search(doc), f"{qualname}: the docstring cites no equation, lemma, section or paper"


ROOT = Path(__file__).resolve().parent.parent
PUBLIC_MODULES = public_modules()


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_module_is_listed_and_has_a_reference_page(module):
    """egmlib's docstring names the module, and the API reference has its page, in the
    index table and in the table of contents."""
    assert f":mod:`egmlib.{module}`" in (egmlib.__doc__ or ""), f"egmlib/__init__.py does not list {module}"
    page = module.replace(".", "/")
    path = ROOT / "chapters" / "api" / f"{page}.md"
    assert path.is_file() and f".. automodule:: egmlib.{module}\n" in path.read_text(encoding="utf-8")
    assert f"<{page}>`" in (ROOT / "chapters" / "api" / "index.md").read_text(encoding="utf-8")
    assert f"- file: chapters/api/{page}\n" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
