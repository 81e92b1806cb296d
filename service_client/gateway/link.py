"""The old name of :mod:`service_client.gateway.transport` (what the parts of a gateway connection share).

Kept for one release: import from :mod:`service_client.gateway.transport`.
"""

from __future__ import annotations

from .transport import (
    REASON_IO_SERVER_DISCONNECT,
    REASON_PING_TIMEOUT,
    REASON_TRANSPORT_CLOSE,
    REASON_TRANSPORT_ERROR,
    ConnectionParts,
    reconnect_delay,
    socket_endpoint,
)

__all__ = [
    "REASON_IO_SERVER_DISCONNECT",
    "REASON_PING_TIMEOUT",
    "REASON_TRANSPORT_CLOSE",
    "REASON_TRANSPORT_ERROR",
    "ConnectionParts",
    "reconnect_delay",
    "socket_endpoint",
]
