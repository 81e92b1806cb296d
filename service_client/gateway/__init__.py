"""The socket: Engine.IO v4 / Socket.IO v5 client over websocket-client (protocol.md section 2).

* :mod:`.framing`: pure packet encoding and decoding.
* :mod:`.connection`: :class:`GatewayConnection`, one websocket with one reader
  thread (arrival order), heartbeat and reconnection.
* ``handlers``: the wire event -> model mapping (separate module).
"""

from __future__ import annotations

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
