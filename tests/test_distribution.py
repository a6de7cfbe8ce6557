"""The test command's sharing of work between pytest-xdist's workers (issue 29, item 6).

``--dist loadgroup`` hands out the xdist groups the root ``conftest.py`` gives every item:
a file (a notebook's cells, a test module) or one page of the browser test. A pytest whose
node ids drop xdist's group (pytest 9.2 with pytest-xdist 3.8,
pytest-dev/pytest-xdist#1386) would silently split a notebook's cells between workers,
and its later cells would fail without the earlier ones' state: these tests notice first."""

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_xdist_keeps_a_group_on_one_worker(tmp_path):
    """Eight items of an explicit group, and the eight items of a file (the root conftest.py
    groups them), each run on one worker of two."""
    record = """
        def record(name):
            with open(name, "a") as f:
                f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    """
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent("""
        import os
        import pytest
    """ + record + """
        @pytest.mark.xdist_group("one")
        @pytest.mark.parametrize("i", range(8))
        def test_item(i):
            record("marked.txt")
    """))
    (tmp_path / "test_shared.py").write_text(textwrap.dedent("""
        import os
        import pytest
    """ + record + """
        @pytest.fixture(scope="module")
        def built():
            return object()

        @pytest.mark.parametrize("i", range(8))
        def test_item(built, i):
            record("shared.txt")
    """))
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    # only pytest-xdist among the installed plugins (nbval, hypothesis ... would load in
    # three processes for nothing)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "xdist.plugin", "-p", "no:cacheprovider",
                           "-c", "/dev/null", "--rootdir", str(tmp_path), "-n", "2", "--dist", "loadgroup",
                           "test_grouped.py", "test_shared.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("marked.txt", "shared.txt"):
        workers = (tmp_path / name).read_text().split()
        assert len(workers) == 8 and len(set(workers)) == 1, f"{name}: one group ran on {sorted(set(workers))}"


def _root_conftest():
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_groups_of_notebook_cells_browser_pages_and_files():
    group = _root_conftest().xdist_group
    nb = "chapters/05_empirical_evaluation.ipynb"
    assert group(f"{nb}::Cell 3", {}) == nb
    page = "tests/test_browser.py chapters/05_empirical_evaluation.html"
    assert group("tests/test_browser.py::test_layout_at_laptop_width[x]",
                 {"page": "chapters/05_empirical_evaluation.html"}) == page
    assert group("tests/test_browser.py::test_layout_at_phone_width[x]",
                 {"page": "chapters/05_empirical_evaluation.html"}) == page
    assert group("tests/test_browser.py::test_notebook_page_offers_ipynb_download[x]",
                 {"notebook": ROOT / nb}) == page
    assert group("tests/test_browser.py::test_book_has_pages", {}) == "tests/test_browser.py"
    assert group("tests/test_gchisq.py::test_round_trips[d2]", {"w": 1}) == "tests/test_gchisq.py"
    assert group("egmlib/calibration.py::egmlib.calibration.sigma_opt", {}) == "egmlib/calibration.py"
