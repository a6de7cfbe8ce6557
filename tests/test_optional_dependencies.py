"""egmlib without its optional dependencies (issue 29, item 4).

sympy is needed only by ``egmlib.symbolic`` and comes with the extra ``egmlib[symbolic]``;
mpmath is used only by the tests, the benchmarks and the chapters.  In a subprocess where
importing sympy (or mpmath) fails as it does where they are not installed, the rest of
egmlib imports and works, and ``import egmlib.symbolic`` raises an ImportError that names
the extra.
"""

import subprocess
import sys
import textwrap

#: Make `import sympy` and `import mpmath` fail as if they were not installed.
_HIDE = textwrap.dedent("""
    import sys

    class _Hide:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("sympy", "mpmath"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _Hide())
""")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _HIDE + textwrap.dedent(code)], capture_output=True, text=True,
                          check=False, timeout=300)


def test_egmlib_works_without_sympy_and_mpmath():
    proc = _run("""
        import importlib, pkgutil, sys
        import egmlib
        names = [m.name for m in pkgutil.walk_packages(egmlib.__path__, "egmlib.")]
        for name in names:
            if name != "egmlib.symbolic":
                importlib.import_module(name)
        from egmlib import calibration, gchisq, mechanisms
        assert abs(gchisq.isf(1e-6, w=[1.0, 0.5]) - 24.6355) < 1e-4
        assert calibration.sigma_opt(eps=1.0, delta=1e-6, sensitivity=1.0) > 0
        assert "sympy" not in sys.modules and "mpmath" not in sys.modules
        print(len(names))
    """)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split()[-1]) > 10


def test_symbolic_without_sympy_names_the_extra():
    proc = _run("""
        try:
            import egmlib.symbolic
        except ImportError as exc:
            print("ImportError:", exc)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "ImportError:" in proc.stdout and "egmlib[symbolic]" in proc.stdout, proc.stdout
