"""Serve each figure's phone rendition to narrow screens.

``egmbook.display`` draws every figure of a notebook twice: for the text column of a laptop
(the ``image/png`` output) and for a phone's column, its panels stacked (the PNG under
``egm_phone`` in that output's metadata). A figure shown from a file (the landing page's
Figure 2) has its phone rendition beside it, ``<stem>-phone.png``
(``egmbook.display.save_figure``). This extension finds the rendition of each image of a
page and writes the image as

.. code-block:: html

   <picture><source media="(max-width: 600px)" srcset="phone.png"><img src="laptop.png"></picture>

so that a phone loads only the rendition drawn for it, and a laptop, a printer and the PDF
edition only the other. An image without a rendition is left as it is.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import posixpath
from pathlib import Path
from urllib.parse import quote

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

PHONE_MEDIA = "(max-width: 600px)"  # the phone width of _static/egm.js and _static/egm.css
PHONE_KEY = "egm_phone"  # egmbook.display.PHONE_KEY


class picture(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes in lower case
    """An image (its second child) with its phone rendition (its first child)."""


def _notebook_renditions(path: Path) -> dict[str, bytes]:
    """sha256 of each PNG output of a notebook -> the PNG of its phone rendition."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return {}
    out = {}
    for cell in cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get("image/png")
            phone = output.get("metadata", {}).get("image/png", {}).get(PHONE_KEY)
            if not data or not phone:
                continue
            try:
                png = base64.b64decode("".join(data) if isinstance(data, list) else data)
                out[hashlib.sha256(png).hexdigest()] = base64.b64decode(phone["png"])
            except (binascii.Error, KeyError, TypeError):
                logger.warning(f"phone_figures: unreadable phone rendition in {path.name}")
    return out


def add_renditions(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    docname = env.docname
    source = Path(env.doc2path(docname))
    renditions = _notebook_renditions(source) if source.suffix == ".ipynb" else {}
    for image in list(doctree.findall(nodes.image)):
        uri = image["uri"]
        if "://" in uri or isinstance(image.parent, picture):
            continue
        phone_uri = None
        stem = posixpath.basename(uri).rsplit(".", 1)[0]
        if stem in renditions:  # a notebook output: write the rendition beside it
            _, path = env.relfn2path(uri, docname)
            png = renditions[stem]
            name = hashlib.sha256(png).hexdigest() + ".png"
            target = Path(path).with_name(name)
            if not target.is_file():
                target.write_bytes(png)
            phone_uri = posixpath.join(posixpath.dirname(uri), name)
        else:  # a file of the book: its rendition beside it, if there is one
            _, path = env.relfn2path(uri, docname)
            sibling = Path(path).with_name(Path(path).stem + "-phone" + Path(path).suffix)
            if sibling.is_file():
                phone_uri = posixpath.join(posixpath.dirname(uri), sibling.name)
        if phone_uri is None:
            continue
        wrapper = picture()
        image.replace_self(wrapper)
        # <img> must be the child of <picture>: no link to the full-size image around it
        # (_static/egm.js puts one around the whole picture)
        image["classes"] = [*image.get("classes", []), "no-scaled-link"]
        wrapper += nodes.image(uri=phone_uri, alt=image.get("alt", ""), classes=["egm-phone-rendition"])
        wrapper += image


def visit_picture_html(self, node: picture) -> None:  # noqa: ANN001
    phone = node[0]
    src = phone["candidates"]["*"] if "candidates" in phone else phone["uri"]
    if src in self.builder.images:
        src = posixpath.join(self.builder.imgpath, quote(self.builder.images[src]))
    self.body.append(f'<picture class="egm-picture"><source media="{PHONE_MEDIA}" srcset="{src}">')
    node[1].walkabout(self)
    self.body.append("</picture>")
    raise nodes.SkipNode


def visit_picture_other(self, node: picture) -> None:  # noqa: ANN001
    node[1].walkabout(self)
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict:
    other = (visit_picture_other, None)
    app.add_node(picture, html=(visit_picture_html, None), latex=other, text=other, man=other, texinfo=other)
    # before Sphinx's image collector (priority 500), which registers both images for copying
    app.connect("doctree-read", add_renditions, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
