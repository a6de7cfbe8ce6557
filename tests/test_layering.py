"""The library egmlib never depends on the book's own code in egmbook, and no private module
is imported across a package.

Two routes, so that neither a lazy import inside a function nor a string import hides a
dependency: every ``import`` statement of egmlib's source is read, and every egmlib module
is imported in a fresh interpreter in which importing egmbook fails.

A module whose name starts with an underscore (``egmlib.gchisq._planner``) belongs to its
package: it may be imported from inside that package's folder only. Every ``import``
statement of the repository's Python (the two packages, tests, benchmarks, scripts, the
Sphinx extensions) and of the notebooks' code cells is read; what code built on egmlib
needs is public (``egmlib.validation``, ``egmlib.gchisq.engine_checks``).
"""

import ast
import importlib.util
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import egmlib

LIBRARY = Path(egmlib.__file__).parent
ROOT = LIBRARY.parent
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


def _python_sources() -> list[Path]:
    """Every Python file of the repository outside virtual environments and build folders."""
    skip = {".venv", "_build", ".git", "build", "dist", "node_modules", ".ipynb_checkpoints"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def _notebook_sources() -> list[tuple[Path, str]]:
    """(notebook, its code cells joined) for every chapter notebook, IPython magics dropped."""
    out = []
    for nb in sorted((ROOT / "chapters").rglob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        out.append((nb, "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))))
    return out


def _package_of(path: Path) -> str | None:
    """The dotted package a file of egmlib or egmbook lives in (None elsewhere)."""
    rel = path.relative_to(ROOT)
    if rel.parts[0] not in ("egmlib", "egmbook"):
        return None
    parts = list(rel.parts[:-1])
    if rel.parts[0] == "egmbook" and len(parts) == 1:
        return "egmbook"
    return ".".join(parts)


def _names_a_private_module(module: str, name: str) -> bool:
    """Whether ``from module import name`` imports a private module of egmlib or egmbook: a
    private name taken from a package (a submodule, or one that was), or a private submodule."""
    if not (name.startswith("_") and not name.startswith("__")) or module.split(".")[0] not in ("egmlib", "egmbook"):
        return False
    try:
        spec = importlib.util.find_spec(module)
        return spec is not None and (spec.submodule_search_locations is not None
                                     or importlib.util.find_spec(f"{module}.{name}") is not None)
    except (ImportError, ValueError):
        return False


def _imported_modules(tree: ast.AST, package: str | None) -> list[str]:
    """Every module an import statement names, relative imports resolved against ``package``;
    ``from a import _b`` names ``a._b`` when that is a private module (see
    :func:`_names_a_private_module`)."""
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:
                    continue
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.append(module)
            names += [f"{module}.{alias.name}" for alias in node.names if _names_a_private_module(module, alias.name)]
    return names


def _private_owner(module: str) -> str | None:
    """The package that owns a private module of egmlib or egmbook (None if it is public)."""
    parts = module.split(".")
    if parts[0] not in ("egmlib", "egmbook"):
        return None
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _inside(path: Path, package: str) -> bool:
    return (ROOT / Path(*package.split("."))) in path.parents


def _crossings(path: Path, tree: ast.AST) -> list[str]:
    out = []
    for module in _imported_modules(tree, _package_of(path) if path.suffix == ".py" else None):
        owner = _private_owner(module)
        if owner is not None and not _inside(path, owner):
            out.append(f"{path.relative_to(ROOT)} imports {module}, private to {owner}")
    return out


def test_no_private_module_is_imported_across_a_package():
    sources = _python_sources()
    assert any(p.parts[-2:] == ("benchmarks", "gchisq.py") for p in sources)  # the walk found the tree
    found = []
    for path in sources:
        found += _crossings(path, ast.parse(path.read_text(), filename=str(path)))
    notebooks = _notebook_sources()
    assert len(notebooks) > 10
    for nb, code in notebooks:
        found += _crossings(nb, ast.parse(code, filename=str(nb)))
    assert not found, "\n".join(found)


@pytest.mark.parametrize("statement,where,crosses", [
    ("from egmlib import _validation", "benchmarks/x.py", True),
    ("import egmlib._validation", "egmbook/x.py", True),
    ("from egmlib.gchisq import _planner", "benchmarks/gchisq.py", True),
    ("from egmlib.gchisq._planner import plan_contours", "egmlib/peers/x.py", True),
    ("from egmlib.gchisq import _planner", "egmlib/gchisq/__init__.py", False),
    ("from ._planner import plan_contours", "egmlib/gchisq/_certify.py", False),
    ("from .gchisq import _planner", "egmlib/x.py", True),
    ("from egmlib import validation, gchisq", "tests/test_x.py", False),
])
def test_the_crossing_rule(statement, where, crosses):
    """The rule itself: a private module imported from outside its package's folder is found,
    relative imports included; one imported inside it, or a public one, is not."""
    assert bool(_crossings(ROOT / where, ast.parse(statement))) is crosses
