"""How the README's test command shares its work between pytest-xdist's workers.

``pyproject.toml`` runs ``--dist loadgroup``: every test item goes to whichever worker is
free, so that the browser test's pages, the fuzz cases and the slow checks of one file
spread over all cores, except the items of one xdist group, which stay together on one
worker:

- a notebook's cells (nbval runs them in order in one kernel: each cell needs the state
  the earlier ones left);
- the browser test's checks of one page (``tests/test_browser.py`` loads a page once per
  width in a worker and every check of that page reads the result: split between
  workers, each would load it again).

xdist hands out the largest groups (the notebooks with most cells) first. This file sits
at the repository root so that it applies however the tests are selected
(``python -m pytest chapters/05_empirical_evaluation.ipynb`` too);
``tests/test_distribution.py`` checks that the groups hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest

BROWSER_TEST = "tests/test_browser.py"


def xdist_group(nodeid: str, params: dict[str, object]) -> str | None:
    """The group of a test item (None: any worker), from its node id and parameters."""
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return path
    if path == BROWSER_TEST:
        if "page" in params:
            return f"{BROWSER_TEST} {params['page']}"
        if "notebook" in params:  # the download check of a notebook's page
            return f"{BROWSER_TEST} chapters/{Path(str(params['notebook'])).stem}.html"
    return None


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the item with its xdist group, as it is collected (xdist reads the groups when
    the collection is modified)."""
    callspec = getattr(item, "callspec", None)
    group = xdist_group(item.nodeid, dict(callspec.params) if callspec is not None else {})
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))
