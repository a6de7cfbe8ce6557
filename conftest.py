"""How the README's test command shares its work between pytest-xdist's workers.

``pyproject.toml`` runs ``--dist loadgroup``, and this file gives every test item an xdist
group; xdist hands out whole groups, the largest (by number of items) first, each to
whichever worker is free:

- the browser test's checks of one page (``tests/test_browser.py`` loads each page once
  per width in a worker, and every check of that page reads the result): its pages, about
  a third of the suite's time, spread over the workers, each worker starting its own
  browsers;
- every other file as a whole, a notebook (nbval runs its cells in order in one kernel:
  each cell needs the state the earlier ones left) like a test module (which builds its
  module-scoped fixtures, a dask cluster or Theorem 4's grid, once).

Groups of whole files rather than single items keep the scheduling cheap: handed out one
by one, the suite's 11,800 items cost about 20 s more CPU than a few hundred groups.
It also gives every test process one BLAS thread (below).
This file sits at the repository root so that it applies however the tests are selected
(``python -m pytest chapters/05_empirical_evaluation.ipynb`` too);
``tests/test_distribution.py`` checks that the groups hold.
"""

from __future__ import annotations

import os
from pathlib import Path

# One BLAS (and OpenMP) thread per test process, unless the environment says otherwise:
# set here, before anything imports numpy, so that it holds in the pytest-xdist workers and
# in what they start (notebook kernels, dask workers, scripts).  The README's command runs
# one worker per core already; with OpenBLAS's own threads on top, small matrix products
# repeated thousands of times spent most of their CPU time handing work between threads
# (the second-contour check of egmlib.gchisq: 8.7 s of CPU for one reference tail, 0.8 s
# with one thread).  The notebooks' stored outputs pass nbval either way.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402

BROWSER_TEST = "tests/test_browser.py"


def xdist_group(nodeid: str, params: dict[str, object]) -> str:
    """The group of a test item, from its node id and parameters."""
    path = nodeid.split("::")[0]
    if path == BROWSER_TEST:
        if "page" in params:
            return f"{BROWSER_TEST} {params['page']}"
        if "notebook" in params:  # the download check of a notebook's page
            return f"{BROWSER_TEST} chapters/{Path(str(params['notebook'])).stem}.html"
    return path


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the item with its xdist group, as it is collected (xdist reads the groups when
    the collection is modified)."""
    callspec = getattr(item, "callspec", None)
    item.add_marker(pytest.mark.xdist_group(xdist_group(item.nodeid, dict(callspec.params) if callspec else {})))
