"""Sphinx configuration of the opweave documentation (``make docs``).

The pages are MyST Markdown (the guides in this folder are pages of the site as they are);
the API reference, the capability matrix and the flags page are generated at build time by
the extensions in ``_ext/``.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "opweave"
author = "the opweave developers"
copyright = "the opweave developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "opweave_api",
    "reference_pages",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "opweave"

# numpydoc-style docstrings throughout.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# "Attributes" sections as fields of their class: an attribute that is also a property
# would otherwise be described twice.
napoleon_use_ivar = True
# "More than one target found" for a bare attribute name (``inputs`` is an attribute of
# several documented classes, as in PyTensor): Sphinx picks one, which is harmless.
suppress_warnings = ["ref.python"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autosummary_generate = False

# Intersphinx links to Python's and NumPy's documentation. The build must work offline (CI
# reaches only the package index), so conf.py fetches each inventory itself, with a short
# timeout, into docs/_build/intersphinx/ and hands Sphinx the local file; an inventory that
# cannot be fetched (and was never cached) is left out, its references render as plain text
# and no warning is raised. ``OPWEAVE_DOCS_OFFLINE=1`` skips the fetch.
INVENTORIES = {
    "python": "https://docs.python.org/3",
    "numpy": "https://numpy.org/doc/stable",
}
INVENTORY_CACHE = HERE / "_build" / "intersphinx"
INVENTORY_MAX_AGE = 7 * 24 * 3600


def _local_inventory(name: str, url: str) -> str | None:
    """The path of a cached ``objects.inv`` of ``url``, fetching it if needed; or ``None``."""
    path = INVENTORY_CACHE / f"{name}.inv"
    fresh = path.exists() and time.time() - path.stat().st_mtime < INVENTORY_MAX_AGE
    if not fresh and os.environ.get("OPWEAVE_DOCS_OFFLINE") != "1":
        try:
            with urllib.request.urlopen(f"{url}/objects.inv", timeout=3) as response:
                data = response.read()
            if data.startswith(b"# Sphinx inventory version"):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        except (OSError, ValueError):
            pass  # offline: use a stale copy if there is one
    return str(path) if path.exists() else None


intersphinx_mapping = {
    name: (url, local)
    for name, url in INVENTORIES.items()
    if (local := _local_inventory(name, url)) is not None
}
intersphinx_timeout = 5
