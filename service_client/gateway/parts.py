"""What the parts of one gateway connection share: constants, helpers, one websocket's link.

:class:`~service_client.gateway.connection.GatewayConnection` holds the
lifecycle (connecting, closing, losing and reconnecting) and three parts it
builds: its dialer (:mod:`.dialer`: one connection attempt), its reader
(:mod:`.reader`: the reader thread's loop) and its writer (:mod:`.writer`:
bounded writes, the pongs the reader queues, the watchdog). The writer and
the dialer get the connection's :class:`ConnectionScope` (what close() must
reach); the reader gets only callables. The names the package exports are
re-exported by :mod:`.connection`.
"""

from __future__ import annotations

import itertools
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import websocket

from .._defaults import (
    EMIT_TIMEOUT_S,
    RECONNECT_BASE_S,
    RECONNECT_CAP_S,
    RECONNECT_JITTER,
)
from ..errors import ServiceError
from .framing import OpenPacket

if TYPE_CHECKING:  # pragma: no cover
    from .reader import FrameReader

__all__ = [
    "REASON_IO_SERVER_DISCONNECT",
    "REASON_PING_TIMEOUT",
    "REASON_TRANSPORT_CLOSE",
    "REASON_TRANSPORT_ERROR",
    "ConnectionScope",
    "reconnect_delay",
    "socket_endpoint",
]

_log = logging.getLogger("service_client.gateway")

#: Disconnect reason: the peer closed the transport (EOF, close frame, Engine.IO close).
REASON_TRANSPORT_CLOSE: Final = "transport close"
#: Disconnect reason: the transport failed (reset, send error).
REASON_TRANSPORT_ERROR: Final = "transport error"
#: Disconnect reason: nothing heard for pingInterval + pingTimeout.
REASON_PING_TIMEOUT: Final = "ping timeout"
#: Disconnect reason: the server sent a Socket.IO DISCONNECT.
REASON_IO_SERVER_DISCONNECT: Final = "io server disconnect"

#: Engine.IO path and query of the websocket transport.
_ENGINE_PATH: Final = "/socket.io/?EIO=4&transport=websocket"
#: Longest time close() waits to write the DISCONNECT packet, seconds.
_CLOSE_SEND_S: Final = 0.25
#: Shortest bound of one write once it started, seconds (a caller with almost no time
#: left must not make a healthy but momentarily slow socket count as lost).
_MIN_WRITE_S: Final = 1.0
#: How often the watchdog looks for a write past its bound, seconds.
_WATCH_TICK_S: Final = 0.25
#: Bound of the reader's own control writes (pongs, close echo), seconds.
_CONTROL_WRITE_S: Final = EMIT_TIMEOUT_S
#: Control frames waiting for the write lock, at most (a stalled socket is dropped anyway).
_CONTROL_QUEUE_MAX: Final = 64
#: The "opcode" of a frame given already formatted and masked: written to the socket as it is,
#: so websocket-client's trace log (``websocket.enableTrace``), which prints every frame it
#: sends, never sees it (the CONNECT frame carries the token).
_RAW_FRAME: Final = -1

#: Per-process counter of gateway threads (the ``n`` in thread names).
_thread_numbers = itertools.count(1)

_TIMEOUT_ERRORS: Final = (websocket.WebSocketTimeoutException, TimeoutError)
_TRANSPORT_ERRORS: Final = (OSError, websocket.WebSocketException)


def socket_endpoint(socket_url: str) -> str:
    """The Engine.IO websocket URL for a socket host URL.

    Args:
        socket_url: ``http(s)://host[:port][/prefix]`` or ``ws(s)://...``.

    Returns:
        ``ws(s)://host[:port][/prefix]/socket.io/?EIO=4&transport=websocket``
        (http becomes ws, https becomes wss).

    Raises:
        TypeError: ``socket_url`` is not a str.
        ValueError: Another scheme, no host, or a query or fragment in ``socket_url``.
    """
    if not isinstance(socket_url, str):
        raise TypeError(f"socket_url must be a str, not {type(socket_url).__name__}")
    parts = urlsplit(socket_url.strip())
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(f"socket_url must be an http(s):// or ws(s):// URL, got {socket_url!r}")
    if not parts.hostname:
        raise ValueError(f"socket_url has no host: {socket_url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"socket_url must not carry a query or fragment: {socket_url!r}")
    return f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}{_ENGINE_PATH}"


def reconnect_delay(
    attempt: int,
    base: float = RECONNECT_BASE_S,
    cap: float = RECONNECT_CAP_S,
    jitter: float = RECONNECT_JITTER,
    rand: Callable[[], float] = random.random,
) -> float:
    """The wait before reconnection attempt ``attempt``.

    ``base * 2**attempt`` randomised by +/- ``jitter`` (a fraction), then capped.
    Pure: the random source is injectable.

    Args:
        attempt: 0 for the first attempt after a loss, then 1, 2, ...
        base: First delay, seconds.
        cap: Longest delay, seconds.
        jitter: Randomisation factor, 0 to 1 (0.5 = +/- 50 %).
        rand: Returns a float in [0, 1).

    Returns:
        The delay in seconds, in ``[0, cap]``.
    """
    raw = base * (2.0 ** min(max(attempt, 0), 62))
    if jitter:
        raw *= 1.0 + jitter * (2.0 * rand() - 1.0)
    return max(0.0, min(cap, raw))


class _Stopped(Exception):
    """auth() returned None: the owner is gone, stop without reporting."""


class _Link:
    """One established connection: the websocket (for writes), its reader, its open packet, its sid."""

    __slots__ = ("lost", "open_packet", "reader", "sid", "watchdog", "ws")

    def __init__(
        self, ws: websocket.WebSocket, reader: FrameReader, open_packet: OpenPacket, sid: str | None = None
    ) -> None:
        self.ws = ws
        self.reader = reader
        self.open_packet = open_packet
        #: The Socket.IO session id the CONNECT answer gave, if any.
        self.sid = sid
        #: Set when the connection ends: its watchdog stops.
        self.lost = threading.Event()
        self.watchdog: threading.Thread | None = None


class ConnectionScope:
    """What close() must reach, shared by a connection and the parts it holds.

    A :class:`~service_client.gateway.connection.GatewayConnection` builds one
    and hands it to its writer and its dialer: whether the connection is
    closed, the event that stops every wait, the websocket while the namespace
    is connected, the raw sockets being opened or in use (close() shuts them
    down to wake blocked I/O) and the threads close() joins. ``lock`` guards
    them (and the connection's pending acks); it is never held during I/O or
    callbacks.
    """

    __slots__ = ("closed", "live", "lock", "socks", "stop", "threads")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: Set by close(): every wait and loop ends.
        self.stop = threading.Event()
        self.closed = False
        #: The websocket while the namespace is connected, else None.
        self.live: websocket.WebSocket | None = None
        #: Raw sockets being opened or in use, shut down by close() to wake blocked I/O.
        self.socks: set[socket.socket] = set()
        self.threads: list[threading.Thread] = []

    def add_socket(self, sock: socket.socket) -> None:
        """Register a socket being opened, so close() shuts it down.

        Raises:
            ServiceError: The connection is closed (``sock`` is closed, not registered).
        """
        with self.lock:
            if self.closed:
                sock.close()
                raise ServiceError("the socket connection was closed")
            self.socks.add(sock)

    def replace_socket(self, old: socket.socket, new: socket.socket) -> bool:
        """Register ``new`` (a TLS wrapper) in place of ``old``; True when the connection is closed."""
        with self.lock:
            self.socks.discard(old)
            self.socks.add(new)
            return self.closed

    def forget(self, sock: socket.socket) -> None:
        """Unregister a socket (idempotent)."""
        with self.lock:
            self.socks.discard(sock)

    def start_thread(self, thread: threading.Thread) -> bool:
        """Start ``thread`` and register it for close() to join, unless the connection is closed.

        Registered and started under the lock (with the threads that ended dropped), so
        close() never sees a registered thread that has not started (which it could not
        join) and dropping the ended ones never drops one about to start.

        Returns:
            True when ``thread`` was started; False when the connection is closed (it is
            not started).
        """
        with self.lock:
            if self.closed:
                return False
            self.threads = [t for t in self.threads if t.is_alive()]
            self.threads.append(thread)
            thread.start()
        return True


def _fail_acks(acks: dict[int, Future[list[Any]]], why: str) -> None:
    """Fail every pending ack's Future with ``ServiceError(why)``."""
    for future in acks.values():
        if not future.done():
            future.set_exception(ServiceError(why))


def _callback(callback: Callable[..., None], *args: Any) -> None:
    """Call a user callback; an exception is logged, never raised (it never kills our threads)."""
    try:
        callback(*args)
    except Exception:  # noqa: BLE001 - a callback never kills our threads
        _log.exception("socket callback %s failed", getattr(callback, "__name__", "?"))


def _check_timeout(timeout: Any) -> float:
    """``timeout`` as a float of seconds; TypeError / ValueError for anything else."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError("timeout must be a number of seconds")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    return float(timeout)


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("connection attempt timed out")
    return remaining


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _short(exc: BaseException) -> str:
    text = str(exc).replace("\r", " ").replace("\n", " ")
    return text if len(text) <= 200 else text[:200] + "..."
