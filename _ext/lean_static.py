"""Ship only what the built pages use.

The themes copy files into ``_build/html/_static`` that no page loads: source maps of
their minified scripts and styles (``*.map``, 3.4 MB, fetched only by a browser's
developer tools) and the message catalogues of the theme's translations (``locales/``,
used by Sphinx when it builds a page in another language, never by the browser), and the
TrueType copies of the icon fonts whose WOFF2 versions every browser takes first. After
a successful HTML build this extension removes them, which keeps the book under 15 MB;
``tests/test_browser.py`` checks the total and that every page still loads everything it
asks for.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx


def _trim(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for path in static.rglob("*.map"):
        path.unlink()
    # web fonts: every browser that runs the theme's scripts reads WOFF2, so the
    # TrueType fallbacks listed after it in the theme's @font-face rules are never fetched
    for path in static.rglob("webfonts/*.ttf"):
        if path.with_suffix(".woff2").is_file():
            path.unlink()
    shutil.rmtree(static / "locales", ignore_errors=True)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _trim)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
