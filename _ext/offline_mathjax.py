"""Serve MathJax from the built book itself, so the math renders with no network.

Sphinx's default ``mathjax_path`` is a CDN address: a reader offline, or a reader of an
archived copy once the CDN is gone, would see raw TeX. This extension

* takes MathJax 3.2.2 from the PyPI package ``django-static-mathjax`` (pinned in
  requirements.txt; it installs the unmodified MathJax distribution, Apache-2.0, as the
  import package ``mathjax`` and depends on nothing, Django included), so
  ``pip install -r requirements.txt`` alone brings it and nothing of MathJax is kept in git;
* copies the one component the pages load, ``es5/tex-svg-full.js`` (2.2 MB), and the
  licence to ``_build/html/_static/mathjax/`` after a successful HTML build (the whole
  ``es5/`` tree is 24 MB, most of it speech-rule data for optional accessibility tools);
* points ``mathjax_path`` at ``mathjax/tex-svg-full.js`` under ``_static``. The SVG output
  needs no web fonts (Chromium refuses ``@font-face`` loads across ``file://`` paths),
  and the "full" component contains every TeX extension and the context menu, so
  nothing is loaded lazily while the page is typeset.

A ``mathjax_path`` set to a network address in ``_config.yml`` is an error: the book must
not depend on one.
"""

from __future__ import annotations

import shutil
from importlib import metadata, resources
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError, ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

COMPONENT = "tex-svg-full.js"
STATIC_SUBDIR = "mathjax"
DISTRIBUTION = "django-static-mathjax"
_SPHINX_CDN_DEFAULT = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"


def mathjax_root() -> Path:
    """Directory of the installed MathJax distribution (it holds ``es5/`` and ``LICENSE``)."""
    try:
        package = resources.files("mathjax")
    except ModuleNotFoundError as exc:
        raise ExtensionError(
            f"offline_mathjax: the Python package {DISTRIBUTION} is not installed; "
            "run `pip install -r requirements.txt`"
        ) from exc
    root = Path(str(package)) / "static" / "mathjax"
    if not (root / "es5" / COMPONENT).is_file():
        raise ExtensionError(
            f"offline_mathjax: {root / 'es5' / COMPONENT} not found; the installed "
            f"'mathjax' package is not {DISTRIBUTION}'s MathJax 3 distribution"
        )
    return root


def _use_local_mathjax(app: Sphinx, config: Config) -> None:
    path = str(config.mathjax_path or "")
    if path and path != _SPHINX_CDN_DEFAULT and not path.startswith(STATIC_SUBDIR + "/"):
        if "://" in path or path.startswith("//"):
            raise ConfigError(
                f"offline_mathjax: mathjax_path={path!r} loads MathJax over the network; "
                "remove it from _config.yml (this extension serves a local copy)"
            )
    config.mathjax_path = f"{STATIC_SUBDIR}/{COMPONENT}"
    root = mathjax_root()  # fail at start-up, not after a full build
    try:
        version = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = "unknown version"
    logger.info(f"offline_mathjax: MathJax from {root} ({DISTRIBUTION} {version})")


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    root = mathjax_root()
    target = Path(app.outdir) / "_static" / STATIC_SUBDIR
    if target.exists():  # a full copy left by an older build
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy2(root / "es5" / COMPONENT, target / COMPONENT)
    shutil.copy2(root / "LICENSE", target / "LICENSE")


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _use_local_mathjax, priority=900)
    app.connect("build-finished", _copy_mathjax)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
