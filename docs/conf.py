"""Sphinx configuration of the service_client documentation.

Build it from the project root (the ``docs`` extra installs Sphinx and furo)::

    pip install -e '.[docs]'
    python -m sphinx -W -b html docs docs/_build

``-W`` turns every warning into an error; CI builds the site that way.
"""

from __future__ import annotations

import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The checkout itself, so that autodoc imports this tree's package even without an install.
sys.path.insert(0, str(ROOT))

import service_client  # noqa: E402

project = "service_client"
author = "the service_client authors"
copyright = "the service_client authors, ISC licence"  # noqa: A001
release = service_client.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

# No network at build time: no intersphinx inventories are fetched.
exclude_patterns = ["_build"]
templates_path: list[str] = []
html_static_path = ["_static"]
html_theme = "furo"
html_title = f"service_client {release}"

# The docstrings are Google style, types in the annotations.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# "Attributes:" sections become :ivar: fields, not attribute directives that
# would clash with the attributes autodoc documents itself.
napoleon_use_ivar = True
napoleon_use_rtype = False

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
autodoc_default_options = {
    "members": True,
}

default_role = "literal"

#: An "Attributes:" entry that names several attributes at once
#: (``id, name, position: As above.``), as some model docstrings do.
_SHARED_ENTRY = re.compile(r"^(\s+)([A-Za-z_]\w*(?:, [A-Za-z_]\w*)+): (.*)$")


def _split_shared_attributes(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Give each attribute of a shared "Attributes:" entry a line of its own.

    napoleon reads ``a, b, c: text`` in an Attributes section as one attribute
    whose type is ``a, b``; one line per name renders each attribute properly.
    """
    out: list[str] = []
    in_attributes = False
    for line in lines:
        stripped = line.strip()
        if stripped.endswith(":") and not line.startswith(" "):
            in_attributes = stripped == "Attributes:"
        match = _SHARED_ENTRY.match(line) if in_attributes else None
        if match is None:
            out.append(line)
            continue
        indent, names, text = match.groups()
        out.extend(f"{indent}{attr}: {text}" for attr in names.split(", "))
    lines[:] = out


def _keep_attribute_colons(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Keep the first line of a property or attribute docstring whole.

    napoleon reads ``text: more`` on the first line of such a docstring as
    ``type: description``, so "The lifecycle state (for example: ready)."
    would lose its start to a type. A leading ``:`` gives it an empty type.
    """
    if what in ("attribute", "property", "data") and lines and ":" in lines[0]:
        lines[0] = ": " + lines[0]


def setup(app: Any) -> None:
    """Register the docstring hooks above."""
    # Both run before napoleon (priority 500), which rewrites the docstrings.
    app.connect("autodoc-process-docstring", _split_shared_attributes, priority=400)
    app.connect("autodoc-process-docstring", _keep_attribute_colons, priority=400)
