"""The JSON decoder of the socket reader's fast path: msgspec when installed, else none.

``pip install service_client`` installs msgspec wherever it is built for the
interpreter (CPython: a dependency with an environment marker), whose JSON
decoder reads a frame's bytes straight into Python objects about twice as fast
as :func:`json.loads` (no UTF-8 decoding of the frame first). Without it (on
another interpreter, or when it was uninstalled) the reader decodes every
frame with the standard library. The standard library is the reference: the
fast decoder is only used where it gives the same result, and any frame it
refuses (malformed JSON, invalid UTF-8, a number or nesting it does not take,
a lone surrogate escape) goes the standard library's way, with the same
outcome and log lines as without it.

The environment variable ``SERVICE_CLIENT_JSON``, read when the socket
reader is first imported (at the first ``login()``), chooses:

- ``json``: the standard library, even when msgspec is installed;
- ``msgspec``: msgspec, and an :class:`ImportError` at that first import
  when it is not installed;
- unset, empty or ``auto``: msgspec when installed, else the standard
  library. Any other value is taken as ``auto``, with a WARNING on the
  ``service_client.gateway`` logger.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from typing import Any, Final

__all__ = ["NAME", "fast_loads"]


def _load() -> tuple[str, Callable[[Any], Any] | None]:
    choice = os.environ.get("SERVICE_CLIENT_JSON", "").strip().lower()
    if choice == "json":
        return "json", None
    if choice not in ("", "auto", "msgspec"):
        logging.getLogger("service_client.gateway").warning(
            "SERVICE_CLIENT_JSON=%r is not json, msgspec or auto: taken as auto", choice
        )
    try:
        msgspec = importlib.import_module("msgspec")
    except ImportError:
        if choice == "msgspec":
            raise ImportError(
                "SERVICE_CLIENT_JSON=msgspec, but msgspec is not installed (pip install msgspec)"
            ) from None
        return "json", None
    decoder = msgspec.json.Decoder()
    decode: Callable[[Any], Any] = decoder.decode
    return "msgspec", decode


_name, _decode = _load()

#: The decoder the reader uses for event frames: ``"msgspec"`` or ``"json"``.
NAME: Final[str] = _name

#: Decode JSON from a bytes-like object (raises on anything it refuses), or None
#: when the standard library is used. Read by each connection when its reader starts.
fast_loads: Callable[[Any], Any] | None = _decode
