"""The JSON decoder of the socket reader's fast path: msgspec when installed, else none.

``pip install 'service_client[speedups]'`` installs msgspec, whose JSON decoder
reads a frame's bytes straight into Python objects about three times faster
than :func:`json.loads` (no UTF-8 decoding of the frame first). Without it the
reader decodes every frame with the standard library, as it always did; that
is the default and the reference: the fast decoder is only used where it
gives the same result, and any frame it refuses (malformed JSON, invalid
UTF-8, a number or nesting it does not take, a lone surrogate escape) goes the
standard library's way, with the same outcome and log lines as without it.

Setting the environment variable ``SERVICE_CLIENT_JSON=json`` before the
first connection keeps the standard library even when msgspec is installed.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any, Final

__all__ = ["NAME", "fast_loads"]


def _load() -> tuple[str, Callable[[Any], Any] | None]:
    if os.environ.get("SERVICE_CLIENT_JSON", "").strip().lower() == "json":
        return "json", None
    try:
        msgspec = importlib.import_module("msgspec")
    except ImportError:
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
