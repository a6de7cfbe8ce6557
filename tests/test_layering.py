"""The library egmlib never depends on the book's own code in egmbook.

Two routes, so that neither a lazy import inside a function nor a string import hides a
dependency: every ``import`` statement of egmlib's source is read, and every egmlib module
is imported in a fresh interpreter in which importing egmbook fails.
"""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import egmlib

LIBRARY = Path(egmlib.__file__).parent
MODULES = sorted(m.name for m in pkgutil.walk_packages([str(LIBRARY)], prefix="egmlib."))


def _imported_names(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", sorted(LIBRARY.rglob("*.py")), ids=lambda p: str(p.relative_to(LIBRARY)))
def test_library_source_never_imports_the_book_layer(path):
    book = [n for n in _imported_names(path) if n == "egmbook" or n.startswith("egmbook.")]
    assert not book, f"{path} imports {book}: egmlib must not depend on egmbook"


def test_every_library_module_imports_without_the_book_layer():
    assert len(MODULES) > 10  # the walk found the library's modules
    code = (
        "import sys\n"
        "sys.modules['egmbook'] = None  # any 'import egmbook...' now raises ImportError\n"
        f"for name in {MODULES!r}:\n"
        "    __import__(name)\n"
        "assert not any(k.startswith('egmbook') and sys.modules[k] is not None for k in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_library_reads_no_file_outside_itself():
    """No module of egmlib builds a path from its own location to a folder above it."""
    offenders = []
    for path in LIBRARY.rglob("*.py"):
        text = path.read_text()
        for token in (".parent.parent", "parents[1]", "parents[2]", '"data"', '"benchmarks"'):
            if token in text:
                offenders.append(f"{path.relative_to(LIBRARY)}: {token}")
    assert not offenders, offenders
