"""The socket: Engine.IO v4 / Socket.IO v5 client over websocket-client.

* :mod:`.framing`: pure packet encoding and decoding.
* :mod:`.connection`: :class:`GatewayConnection`, one websocket with one reader
  thread (arrival order), heartbeat and reconnection; built from parts it
  holds: :mod:`.dialer` (one connection attempt), :mod:`.reader` (the frame
  reader and the reader thread's loop), :mod:`.writer` (bounded writes, the
  watchdog), :mod:`.parts` (what they share: the connection's scope, helpers).
* :mod:`.decoder`: the fast JSON decoder (msgspec, a dependency on CPython), when installed.

What an event means for the caches is the connection state's work
(:mod:`service_client.state.parsers`); this package only moves packets.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - the names below load on first use
    from .connection import (
        REASON_IO_SERVER_DISCONNECT,
        REASON_PING_TIMEOUT,
        REASON_TRANSPORT_CLOSE,
        REASON_TRANSPORT_ERROR,
        GatewayConnection,
        reconnect_delay,
        socket_endpoint,
    )
    from .framing import FramingError, UnsupportedPacketError

#: Where each exported name lives. Importing this package does not import
#: websocket-client: :mod:`.connection` loads on first access to one of its names.
_EXPORTS = {
    "REASON_IO_SERVER_DISCONNECT": "connection",
    "REASON_PING_TIMEOUT": "connection",
    "REASON_TRANSPORT_CLOSE": "connection",
    "REASON_TRANSPORT_ERROR": "connection",
    "GatewayConnection": "connection",
    "reconnect_delay": "connection",
    "socket_endpoint": "connection",
    "FramingError": "framing",
    "UnsupportedPacketError": "framing",
}


def __getattr__(name: str) -> Any:
    """Load an exported name from its submodule on first access (PEP 562).

    Raises:
        AttributeError: ``name`` is not exported by this package.
    """
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "REASON_IO_SERVER_DISCONNECT",
    "REASON_PING_TIMEOUT",
    "REASON_TRANSPORT_CLOSE",
    "REASON_TRANSPORT_ERROR",
    "FramingError",
    "GatewayConnection",
    "UnsupportedPacketError",
    "reconnect_delay",
    "socket_endpoint",
]
