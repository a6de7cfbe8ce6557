"""How the README's test command shares its work between pytest-xdist's workers.

``pyproject.toml`` runs ``--dist loadgroup``: every test item goes to whichever worker is
free, so that the browser test's pages, the fuzz cases and the slow checks of one file
spread over all cores, except the items of one xdist group, which stay together on one
worker:

- a notebook's cells (nbval runs them in order in one kernel: each cell needs the state
  the earlier ones left);
- the browser test's checks of one page (``tests/test_browser.py`` loads a page once per
  width in a worker and every check of that page reads the result: split between
  workers, each would load it again);
- the tests of one file that share a module-scoped fixture (a dask cluster, Theorem 4's
  grid, sympy's general minors ...): split between workers, each would build it again,
  and a test could find the fixture in a state no earlier test of the file left it in.
  The browser test's two browsers are the exception: every worker starts its own, so
  that the pages spread.

xdist hands out the largest groups (the notebooks with most cells) first. This file sits
at the repository root so that it applies however the tests are selected
(``python -m pytest chapters/05_empirical_evaluation.ipynb`` too);
``tests/test_distribution.py`` checks that the groups hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

BROWSER_TEST = "tests/test_browser.py"

#: fixture scopes wider than one test and narrower than the process
SHARED_SCOPES = frozenset({"class", "module", "package"})


def xdist_group(nodeid: str, params: dict[str, object], shares_fixture: bool = False) -> str | None:
    """The group of a test item (None: any worker), from its node id, its parameters and
    whether it uses a fixture of a shared scope (class, module, package)."""
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return path
    if path == BROWSER_TEST:
        if "page" in params:
            return f"{BROWSER_TEST} {params['page']}"
        if "notebook" in params:  # the download check of a notebook's page
            return f"{BROWSER_TEST} chapters/{Path(str(params['notebook'])).stem}.html"
        return None
    return path if shares_fixture else None


def _shares_fixture(item: pytest.Item) -> bool:
    """Whether the item uses a fixture of class, module or package scope."""
    info = getattr(item, "_fixtureinfo", None)  # nbval's cells and doctests may have none
    if info is None:
        return False
    return any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the item with its xdist group, as it is collected (xdist reads the groups when
    the collection is modified)."""
    callspec = getattr(item, "callspec", None)
    group = xdist_group(item.nodeid, dict(callspec.params) if callspec is not None else {}, _shares_fixture(item))
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))
