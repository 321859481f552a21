"""The theme's stylesheets cut to the rules the pages use.

pydata-sphinx-theme ships all of Bootstrap and its own styles for every component it offers
(0.40 MB, on every page), sphinx-design 55 kB for components this book does not use, myst-nb
43 kB. After the pages are written, ``purge.js`` (PurgeCSS under node, ``_build/node``) rewrites
those files in the output with only the rules whose selectors can match the built pages or a
class a script of the site adds; rules for the dark theme are kept. The source files are not
touched. The book's own stylesheets are left whole.
"""
import os
import shutil
import subprocess
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

from static_math import node_modules

HERE = Path(__file__).resolve().parent
PURGED = ["_static/styles/pydata-sphinx-theme.css", "_static/styles/sphinx-book-theme.css",
          "_static/sphinx-design.min.css", "_static/mystnb.*.css", "_static/basic.css"]
logger = logging.getLogger(__name__)


def _slim(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    files = [str(f) for pattern in PURGED for f in sorted(out.glob(pattern))]
    if not files:
        return
    proc = subprocess.run([shutil.which("node") or "node", str(HERE / "purge.js"), str(out), *files],
                          capture_output=True, text=True, env={**os.environ, "NODE_PATH": str(node_modules(app.srcdir))})
    if proc.returncode:
        raise ExtensionError("slim_css: purge.js failed:\n" + proc.stderr[-2000:])
    logger.info("slim_css: " + "; ".join(proc.stdout.split("\n")).strip("; "))


def setup(app):
    app.connect("build-finished", _slim, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
