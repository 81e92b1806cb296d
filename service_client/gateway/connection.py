"""The socket connection: one websocket, one reader thread, heartbeat and reconnection.

Speaks Socket.IO v5 over Engine.IO v4 (websocket transport only) with the
framing of :mod:`service_client.gateway.framing`, on websocket-client:
connection with the bot token in the CONNECT packet, the server's heartbeat,
and reconnection with a doubling, randomised delay. Guarantees: ``close()``
stops everything; a callback exception never kills the reader; a
server-initiated disconnect is reconnected like a network loss; a token
refusal stops reconnecting; ``connected`` means the namespace is connected,
not merely that a socket exists; pending acks fail when the transport drops,
and each has its own timeout; the CONNECT wait is bounded (15 s by default).

Writes are serialised by one lock, and every wait for it is bounded by the
caller's remaining time. The reader thread never waits for that lock: its
pongs are queued and written by whichever thread holds or next takes it. A
write still unfinished past its bound (a peer that stopped reading) counts as
a lost connection: a watchdog shuts the socket down and the connection is
re-established.

No frame that can end in an exception holds the encoded CONNECT packet (it
carries the token), so tracebacks that record frame locals never show it.

Threads (daemon, named with a per-process counter ``n``):

* ``<name>-gateway-<n>``: one per websocket; reads frames in arrival order,
  answers pings, resolves acks and calls ``on_event`` / ``on_connect`` /
  ``on_disconnect``. It never runs anything else.
* ``<name>-reconnect-<n>``: after a loss, waits out the backoff delays on an
  Event (so ``close()`` interrupts it at once) and reconnects.
* ``<name>-gateway-watchdog-<n>``: one per websocket, ending with it; checks
  four times a second whether a write has overrun its bound.

Why our own framing: python-socketio's synchronous client hands each event to a
new thread and loses their order; here one thread decodes in arrival order.
websocket-client performs the HTTP upgrade and the writes; frames are read by
:class:`_FrameReader` (one buffered ``recv`` per 256 KiB instead of three per
frame), which keeps the reader near 250,000 frames per second on one core.

Limits: the TCP connection is opened by this module (so ``close()`` can
interrupt it), hence HTTP proxies from the environment are not used; DNS
resolution is bounded by the system resolver only.
"""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, Final
from urllib.parse import urlsplit

import websocket

from .. import events
from .._config import (
    ACK_TIMEOUT_S,
    CONNECT_TIMEOUT_S,
    DESTROY_JOIN_S,
    EMIT_TIMEOUT_S,
    RECONNECT_BASE_S,
    RECONNECT_CAP_S,
    RECONNECT_JITTER,
)
from ..errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from . import decoder, framing
from .framing import (
    AckPacket,
    ConnectErrorPacket,
    ConnectPacket,
    DisconnectPacket,
    EnginePacket,
    EngineType,
    EventPacket,
    FramingError,
    OpenPacket,
)
from .reader import FrameReader, fast_event

#: The frame reader's former name, kept for code that imported it from here.
_FrameReader = FrameReader

__all__ = [
    "REASON_IO_SERVER_DISCONNECT",
    "REASON_PING_TIMEOUT",
    "REASON_TRANSPORT_CLOSE",
    "REASON_TRANSPORT_ERROR",
    "GatewayConnection",
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

#: Per-process counter of gateway threads (the ``n`` in thread names).
_thread_numbers = itertools.count(1)

_TIMEOUT_ERRORS: Final = (websocket.WebSocketTimeoutException, TimeoutError)
#: Returned by ``_read_one`` when reading goes on (compared by identity; never a loss reason).
_GO_ON: Final = "\x00go on"
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
    """One established connection: the websocket (for writes), its reader, its open packet."""

    __slots__ = ("lost", "open_packet", "reader", "watchdog", "ws")

    def __init__(self, ws: websocket.WebSocket, reader: FrameReader, open_packet: OpenPacket) -> None:
        self.ws = ws
        self.reader = reader
        self.open_packet = open_packet
        #: Set when the connection ends: its watchdog stops.
        self.lost = threading.Event()
        self.watchdog: threading.Thread | None = None


class GatewayConnection:
    """A Socket.IO client connection to the default namespace over one websocket.

    Thread-safe: ``emit``, ``call`` and ``close`` may be called from any thread,
    including from inside the callbacks. The callbacks run on the reader thread
    (``on_error`` on the reconnect thread) and must be quick: they delay every
    later packet.
    """

    def __init__(
        self,
        socket_url: str,
        *,
        auth: Callable[[], dict[str, Any] | None],
        on_event: Callable[[str, list[Any]], None],
        on_connect: Callable[[bool], None],
        on_disconnect: Callable[[str], None],
        on_error: Callable[[BaseException], None],
        connect_timeout: float = CONNECT_TIMEOUT_S,
        reconnect: bool = True,
        reconnect_base: float = RECONNECT_BASE_S,
        reconnect_cap: float = RECONNECT_CAP_S,
        jitter: float = RECONNECT_JITTER,
        name: str = "service_client",
    ) -> None:
        """Configure a connection; nothing is opened before :meth:`connect`.

        Args:
            socket_url: The socket host, ``http(s)://host[:port]`` (or ws/wss).
            auth: Returns the CONNECT auth object (``{"token": ...}``), called
                at every connection attempt; None means the owner is gone:
                ``connect`` then raises ``ServiceAuthError`` and a reconnect
                loop stops silently. Never logged.
            on_event: ``(event name, args list)`` for every EVENT of the
                default namespace, on the reader thread, in arrival order. An
                ack the server asks for is not answered (the service asks none).
            on_connect: ``True`` on the first connection, ``False`` on each
                reconnection; on the reader thread before any event of that
                connection.
            on_disconnect: The loss reason (``transport close``, ``transport
                error``, ``ping timeout``, ``io server disconnect``), on the
                reader thread after pending acks failed. Not called after
                :meth:`close`.
            on_error: An error that ends reconnection: ``ServiceAuthError``
                when the service refuses a reconnect, or the exception ``auth``
                raised; on the reconnect thread.
            connect_timeout: Bound of each connection attempt (TCP, TLS,
                upgrade, open packet and CONNECT answer), seconds.
            reconnect: Reconnect after a loss.
            reconnect_base: First reconnect delay, seconds (doubles per attempt).
            reconnect_cap: Longest reconnect delay, seconds.
            jitter: Randomisation of each delay, 0 to 1 (0.5 = +/- 50 %).
            name: Thread name prefix (``<name>-gateway-<n>``).

        Raises:
            TypeError: A callback is not callable or an argument has the wrong type.
            ValueError: ``socket_url`` is not an http(s)/ws(s) URL, a duration is
                not positive, or ``jitter`` is outside [0, 1].
        """
        self._endpoint = socket_endpoint(socket_url)
        parts = urlsplit(self._endpoint)
        self._host: str = parts.hostname or ""
        self._port: int = parts.port or (443 if parts.scheme == "wss" else 80)
        self._secure = parts.scheme == "wss"
        for arg_name, callback in (
            ("auth", auth),
            ("on_event", on_event),
            ("on_connect", on_connect),
            ("on_disconnect", on_disconnect),
            ("on_error", on_error),
        ):
            if not callable(callback):
                raise TypeError(f"{arg_name} must be callable")
        for arg_name, value in (
            ("connect_timeout", connect_timeout),
            ("reconnect_base", reconnect_base),
            ("reconnect_cap", reconnect_cap),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{arg_name} must be a number of seconds")
            if not value > 0:
                raise ValueError(f"{arg_name} must be > 0 seconds, got {value!r}")
        if isinstance(jitter, bool) or not isinstance(jitter, (int, float)) or not 0 <= jitter <= 1:
            raise ValueError(f"jitter must be a number in [0, 1], got {jitter!r}")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty str")
        self._auth = auth
        self._on_event = on_event
        self._on_connect = on_connect
        self._on_disconnect = on_disconnect
        self._on_error = on_error
        self._connect_timeout = float(connect_timeout)
        self._reconnect = bool(reconnect)
        self._reconnect_base = float(reconnect_base)
        self._reconnect_cap = float(reconnect_cap)
        self._jitter = float(jitter)
        self._name = name

        # _state_lock guards every attribute below; never held during I/O or callbacks.
        self._state_lock = threading.Lock()
        # _emit_lock serialises writes to the websocket; never held while waiting for anything
        # but the write itself, and never waited for by the reader thread.
        self._emit_lock = threading.Lock()
        #: The write in progress and its bound (monotonic), read by the watchdog; else None.
        self._writing: tuple[websocket.WebSocket, float] | None = None
        #: The websocket the watchdog dropped because a write overran its bound.
        self._stalled: websocket.WebSocket | None = None
        #: Control frames (websocket, data, opcode) the reader queued for the next lock holder.
        self._control_queue: collections.deque[tuple[websocket.WebSocket, str | bytes, int]] = (
            collections.deque(maxlen=_CONTROL_QUEUE_MAX)
        )
        #: Set by close(): every wait and loop ends.
        self._stop = threading.Event()
        self._closed = False
        self._started = False
        #: The websocket while the namespace is connected, else None.
        self._live: websocket.WebSocket | None = None
        #: Raw sockets being opened or in use, shut down by close() to wake blocked I/O.
        self._socks: set[socket.socket] = set()
        self._acks: dict[int, Future[list[Any]]] = {}
        self._ack_ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._sid: str | None = None

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("connected" if self._live is not None else "disconnected")
        return f"<GatewayConnection {self._endpoint} {state}>"

    # ------------------------------------------------------------------ public

    @property
    def connected(self) -> bool:
        """True while the default namespace is connected, not merely while a socket exists."""
        return self._live is not None

    @property
    def endpoint(self) -> str:
        """The websocket URL used (``ws(s)://.../socket.io/?EIO=4&transport=websocket``)."""
        return self._endpoint

    @property
    def sid(self) -> str | None:
        """The Socket.IO session id of the current connection, or None when not connected."""
        return self._sid if self._live is not None else None

    def connect(self, timeout: float | None = None) -> None:
        """Open the first connection, blocking until the namespace is connected.

        Opens ``{socket_url}/socket.io/?EIO=4&transport=websocket``, reads the
        open packet (ping settings), sends ``40{auth()}`` and waits for
        ``40{sid}``. Then starts the reader thread, which calls
        ``on_connect(True)`` before any event. There is no background retry of
        a failed first connection: on failure nothing is left running, and
        ``connect`` may be called again. No frame of a traceback it raises
        holds the CONNECT packet or the token.

        Args:
            timeout: Bound of the whole attempt, seconds; ``connect_timeout``
                when None.

        Raises:
            TypeError: ``timeout`` is not a number, or ``auth()`` returned
                something other than a dict or None.
            ValueError: ``timeout`` is not positive.
            ServiceAuthError: The service refused the CONNECT (``44``; the
                message is the service's text), or ``auth()`` returned None.
            ServiceTimeoutError: No connection within ``timeout``.
            ServiceError: Network failure or a protocol violation (cause
                chained), ``connect`` was already successful, or the connection
                was closed.
        """
        if timeout is None:
            timeout = self._connect_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError("timeout must be a number of seconds")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        with self._state_lock:
            if self._closed:
                raise ServiceError("the socket connection is closed")
            if self._started:
                raise ServiceError("connect() was already called")
            self._started = True
        try:
            link = self._establish(float(timeout))
        except _Stopped:
            with self._state_lock:
                self._started = False
            raise ServiceAuthError("no credentials for the socket connection") from None
        except BaseException:
            with self._state_lock:
                self._started = False
            raise
        if not self._activate(link, first=True):
            raise ServiceError("the socket connection was closed while connecting")

    def emit(self, event: str, *args: Any, timeout: float | None = None) -> None:
        """Send an EVENT without ack ("fire-and-forget").

        Returns once the packet is written; the service sends no reply. The
        wait for the socket (another thread may be writing) and the write
        itself are bounded by ``timeout``.

        Args:
            event: The event name, for example ``message:send``.
            *args: JSON-serialisable arguments.
            timeout: Bound in seconds; None means 10 s.

        Raises:
            TypeError: ``event`` is not a str, an argument is not
                JSON-serialisable, or ``timeout`` is not a number.
            ValueError: ``event`` is empty or ``timeout`` is not positive.
            ServiceAuthError: The namespace is not connected (at once, nothing
                buffered), or the write failed because the transport just dropped.
            ServiceTimeoutError: The socket stayed busy with another write, or
                this write did not finish, within ``timeout``; a write stalled
                past its bound also drops the connection, which then reconnects.
        """
        deadline = time.monotonic() + _check_timeout(EMIT_TIMEOUT_S if timeout is None else timeout)
        text = framing.encode_event(event, *args)
        ws = self._live
        if ws is None:
            raise ServiceAuthError("socket not connected")
        self._send(ws, text, deadline)
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("emit %s", event)

    def call(self, event: str, *args: Any, timeout: float = ACK_TIMEOUT_S) -> list[Any]:
        """Send an EVENT asking for an ack and wait for it.

        Args:
            event: The event name, for example ``server:kick``.
            *args: JSON-serialisable arguments.
            timeout: Longest time in all, seconds: the wait for the socket,
                the write and the wait for the ack.

        Returns:
            The ACK's arguments (the JSON array as a list).

        Raises:
            TypeError: ``event`` is not a str, an argument is not
                JSON-serialisable, or ``timeout`` is not a number.
            ValueError: ``event`` is empty or ``timeout`` is not positive.
            ServiceAuthError: The namespace is not connected (at once).
            ServiceTimeoutError: No ack within ``timeout`` (or the write could
                not be done within it, as in :meth:`emit`).
            ServiceError: The transport dropped or :meth:`close` ran before the
                ack arrived (at once: a lost transport never leaves an ack
                wait hanging).
        """
        deadline = time.monotonic() + _check_timeout(timeout)
        text = framing.encode_event(event, *args)  # validates before anything is registered
        future: Future[list[Any]] = Future()
        with self._state_lock:
            ws = self._live
            if ws is None:
                raise ServiceAuthError("socket not connected")
            ack_id = next(self._ack_ids)
            self._acks[ack_id] = future
        try:
            self._send(ws, f"42{ack_id}{text[2:]}", deadline)
        except BaseException:
            with self._state_lock:
                self._acks.pop(ack_id, None)
            raise
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("call %s (ack %d)", event, ack_id)
        try:
            return future.result(max(0.0, deadline - time.monotonic()))
        except FutureTimeoutError:
            with self._state_lock:
                self._acks.pop(ack_id, None)
            raise ServiceTimeoutError(f"no ack for {event!r} within {timeout:g} s") from None

    def close(self) -> None:
        """Leave and stop everything; idempotent; callable from any thread, callbacks included.

        Sends ``41`` (when connected) and a websocket close, shuts the socket
        down, fails pending acks with ``ServiceError``, stops the reader and
        reconnect threads and joins them within 1 s (not the calling thread
        itself). No reconnection and no callback happen afterwards, except a
        callback already running.
        """
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            ws = self._live
            self._live = None
            socks = list(self._socks)
            acks = self._acks
            self._acks = {}
            threads = list(self._threads)
        _log.debug("closing %s", self._endpoint)
        self._fail_acks(acks, "the socket connection was closed")
        if ws is not None and self._emit_lock.acquire(timeout=_CLOSE_SEND_S):
            try:
                ws.settimeout(_CLOSE_SEND_S)
                ws.send(framing.encode_disconnect())
                ws.send_close()
            except Exception as exc:  # noqa: BLE001 - best effort: the socket is shut down below anyway
                _log.debug("DISCONNECT not sent: %s", _short(exc))
            finally:
                self._emit_lock.release()
        for sock in socks:
            _shutdown(sock)
        deadline = time.monotonic() + DESTROY_JOIN_S
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------------ connecting

    def _establish(self, timeout: float) -> _Link:
        """One connection attempt: TCP, TLS, upgrade, open packet, CONNECT.

        Raises:
            _Stopped: ``auth()`` returned None.
            TypeError: ``auth()`` returned something other than a dict or None,
                or a dict that is not JSON-serialisable.
            ServiceAuthError: CONNECT_ERROR from the service.
            ServiceTimeoutError, ServiceError: See :meth:`connect`.
        """
        deadline = time.monotonic() + timeout
        sock: socket.socket | None = None
        ws: websocket.WebSocket | None = None
        try:
            sock = self._dial(deadline)
            ws = websocket.WebSocket(enable_multithread=True, skip_utf8_validation=True)
            ws.connect(  # type: ignore[no-untyped-call]
                self._endpoint, socket=sock, timeout=_remaining(deadline), suppress_origin=True
            )
            assert ws.sock is not None
            reader = FrameReader(ws.sock, functools.partial(self._control, ws))
            open_packet = self._handshake(ws, reader, deadline)
            return _Link(ws, reader, open_packet)
        except BaseException as exc:
            if ws is not None:
                ws.shutdown()  # type: ignore[no-untyped-call]
            if sock is not None:
                self._forget(sock)
                _shutdown(sock)
                sock.close()
            if self._stop.is_set():
                raise ServiceError("the socket connection was closed while connecting") from exc
            if isinstance(exc, ServiceError):
                raise
            if isinstance(exc, _TIMEOUT_ERRORS):
                raise ServiceTimeoutError(
                    f"socket connection to {self._endpoint} timed out after {timeout:g} s"
                ) from exc
            if isinstance(exc, (*_TRANSPORT_ERRORS, FramingError, UnicodeDecodeError)):
                raise ServiceError(
                    f"socket connection to {self._endpoint} failed: {type(exc).__name__}: {_short(exc)}"
                ) from exc
            raise

    def _dial(self, deadline: float) -> socket.socket:
        """TCP (and TLS) connection, registered so close() can interrupt it."""
        infos = socket.getaddrinfo(self._host, self._port, 0, socket.SOCK_STREAM)
        last: BaseException | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            with self._state_lock:
                if self._closed:
                    sock.close()
                    raise ServiceError("the socket connection was closed")
                self._socks.add(sock)
            try:
                sock.settimeout(_remaining(deadline))
                sock.connect(address)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self._secure:
                    context = ssl.create_default_context()
                    tls = context.wrap_socket(sock, server_hostname=self._host)
                    with self._state_lock:
                        self._socks.discard(sock)
                        self._socks.add(tls)
                        closed = self._closed
                    if closed:
                        _shutdown(tls)
                    sock = tls
                return sock
            except OSError as exc:
                last = exc
                self._forget(sock)
                sock.close()
                if isinstance(exc, TimeoutError) or self._stop.is_set():
                    raise
        raise last if last is not None else OSError(f"no address for {self._host}")

    def _handshake(self, ws: websocket.WebSocket, reader: FrameReader, deadline: float) -> OpenPacket:
        """Read the open packet, send CONNECT, wait for its answer."""
        open_packet: OpenPacket | None = None
        while True:
            ws.settimeout(_remaining(deadline))
            text = reader.recv()
            if type(text) is not str:
                continue  # a binary frame: nothing of ours
            packet = framing.decode(text)
            if open_packet is None:
                if not isinstance(packet, OpenPacket):
                    raise FramingError("the first frame is not an Engine.IO open packet")
                open_packet = packet
                self._send_connect(ws, deadline)
                continue
            if isinstance(packet, ConnectPacket) and packet.namespace == "/":
                sid = packet.data.get("sid") if packet.data else None
                self._sid = sid if isinstance(sid, str) else None
                return open_packet
            if isinstance(packet, ConnectErrorPacket) and packet.namespace == "/":
                raise ServiceAuthError(packet.message or "the service refused the socket connection")
            if isinstance(packet, EnginePacket):
                if packet.type == EngineType.PING:
                    self._write(ws, framing.PONG, websocket.ABNF.OPCODE_TEXT, deadline)
                elif packet.type == EngineType.CLOSE:
                    raise websocket.WebSocketConnectionClosedException("Engine.IO close during the handshake")

    def _send_connect(self, ws: websocket.WebSocket, deadline: float) -> None:
        """Send the CONNECT packet built from ``auth()``.

        The packet holds the token, so it lives only inside this frame, which
        drops it before raising anything: a failure raises a new exception of
        the same kind, with no traceback or context leading to frames (this
        one's or websocket-client's) that held the packet.

        Raises:
            _Stopped: ``auth()`` returned None.
            TypeError: ``auth()`` returned a wrong type or an unserialisable dict.
            TimeoutError: The write did not finish in time.
            OSError: The write failed.
            Exception: Whatever ``auth()`` itself raised.
        """
        auth: Any = self._auth()  # an exception of auth() itself propagates unchanged
        if auth is None:
            raise _Stopped
        if not isinstance(auth, dict):
            kind = type(auth).__name__
            auth = None
            raise TypeError(f"auth() must return a dict or None, not {kind}")
        error: BaseException | None = None
        packet: str | None = None
        try:
            packet = framing.encode_connect(auth)
            auth = None
            self._write(ws, packet, websocket.ABNF.OPCODE_TEXT, deadline)
        except _TIMEOUT_ERRORS:
            error = TimeoutError("sending the CONNECT packet timed out")
        except (TypeError, ValueError):
            error = TypeError("auth() returned a dict that is not JSON-serialisable")
        except _TRANSPORT_ERRORS as exc:
            error = OSError(f"sending the CONNECT packet failed ({type(exc).__name__})")
        except Exception as exc:  # noqa: BLE001 - re-raised below as a fresh exception
            error = ServiceError(f"sending the CONNECT packet failed ({type(exc).__name__})")
        finally:
            auth = packet = None
        if error is not None:
            raise error

    def _activate(self, link: _Link, *, first: bool) -> bool:
        """Install a connected websocket and start its reader; False when closed meanwhile."""
        ws, open_packet = link.ws, link.open_packet
        silence = (open_packet.ping_interval_ms + open_packet.ping_timeout_ms) / 1000.0
        if silence <= 0:
            silence = self._connect_timeout
        ws.settimeout(silence)
        number = next(_thread_numbers)
        reader = threading.Thread(
            target=self._reader_main,
            args=(link, first),
            name=f"{self._name}-gateway-{number}",
            daemon=True,
        )
        with self._state_lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._live = ws
                self._threads = [t for t in self._threads if t.is_alive()]
                watchdog = threading.Thread(
                    target=self._watch_main,
                    args=(link,),
                    name=f"{self._name}-gateway-watchdog-{number}",
                    daemon=True,
                )
                link.watchdog = watchdog
                self._threads += [watchdog, reader]
                watchdog.start()
                reader.start()
        if closed:
            self._drop(ws)
            return False
        _log.debug(
            "connected to %s (sid %s, ping %d ms + %d ms)",
            self._endpoint,
            self._sid,
            open_packet.ping_interval_ms,
            open_packet.ping_timeout_ms,
        )
        return True

    # ------------------------------------------------------------------ reading

    def _reader_main(self, link: _Link, first: bool) -> None:
        reason: str | None = REASON_TRANSPORT_ERROR
        try:
            self._callback(self._on_connect, first)
            reason = self._read_loop(link)
        except BaseException:  # noqa: BLE001 - a bug of ours: still report the loss and reconnect
            _log.exception("socket reader failed")
        finally:
            link.lost.set()
            if link.watchdog is not None:
                link.watchdog.join(DESTROY_JOIN_S)  # the reader outlives its watchdog
            self._lost(link.ws, reason)

    def _read_loop(self, link: _Link) -> str | None:
        """Read frames in order until the transport is lost; the loss reason, None when closing.

        Every message already buffered is taken at once, and the events they
        carry are handed to the worker pool together when the batch is done
        (see :func:`service_client.events.handoff_batch`).
        """
        recv_batch = link.reader.recv_batch
        loads = decoder.fast_loads
        on_event = self._on_event
        while True:
            try:
                batch = recv_batch()
            except _TIMEOUT_ERRORS:
                return None if self._closed else REASON_PING_TIMEOUT
            except websocket.WebSocketConnectionClosedException:
                return None if self._closed else REASON_TRANSPORT_CLOSE
            except _TRANSPORT_ERRORS as exc:
                if self._closed:
                    return None
                _log.debug("socket read failed: %s: %s", type(exc).__name__, _short(exc))
                return REASON_TRANSPORT_ERROR
            debug = _log.isEnabledFor(logging.DEBUG)
            with events.handoff_batch():
                for message in batch:
                    if self._closed:
                        return None
                    if loads is not None and type(message) is bytes:
                        payload = fast_event(message, loads)
                        if payload is not None:
                            event = payload[0]
                            if debug:
                                _log.debug("event %s", event)
                            try:
                                on_event(event, payload[1:])
                            except Exception:  # noqa: BLE001 - a callback failure never kills the reader
                                _log.exception("on_event callback failed for %s", event)
                            continue
                    reason = self._read_one(link.ws, message, debug)
                    if reason is not _GO_ON:
                        return reason

    def _read_one(self, ws: websocket.WebSocket, message: bytes, debug: bool) -> str | None:
        """Act on one message the standard way; ``_GO_ON``, or the loss reason (None when closing)."""
        if type(message) is not bytes:
            _log.debug("ignored a binary socket frame of %d bytes", len(message))
            return _GO_ON
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError:
            _log.warning("dropped a socket frame that is not valid UTF-8")
            return _GO_ON
        if text == "2":  # ping: answer at once
            if not self._pong(ws):
                return None if self._closed else REASON_TRANSPORT_ERROR
            return _GO_ON
        try:
            packet = framing.decode(text)
        except FramingError as exc:
            _log.warning("dropped a malformed socket frame (%d chars): %s", len(text), exc)
            return _GO_ON
        kind = type(packet)
        if kind is EventPacket:
            if packet.namespace == "/":  # type: ignore[union-attr]
                if debug:
                    _log.debug("event %s", packet.event)  # type: ignore[union-attr]
                try:
                    self._on_event(packet.event, packet.args)  # type: ignore[union-attr]
                except Exception:  # noqa: BLE001 - a callback failure never kills the reader
                    _log.exception("on_event callback failed for %s", packet.event)  # type: ignore[union-attr]
        elif kind is AckPacket:
            events.flush_handoff()  # the caller it wakes comes after every event read before
            self._resolve_ack(packet)  # type: ignore[arg-type]
        elif kind is EnginePacket:
            if packet.type == EngineType.CLOSE:  # type: ignore[union-attr]
                return None if self._closed else REASON_TRANSPORT_CLOSE
        elif kind is DisconnectPacket:
            if packet.namespace == "/":  # type: ignore[union-attr]
                return None if self._closed else REASON_IO_SERVER_DISCONNECT
        else:
            _log.debug("ignored a %s packet", kind.__name__)
        return _GO_ON

    def _control(self, ws: websocket.WebSocket, opcode: int, payload: bytes) -> None:
        """Answer a websocket ping with a pong, echo a close frame (best effort, never waits)."""
        if opcode == websocket.ABNF.OPCODE_PING:
            self._queue_control(ws, payload, websocket.ABNF.OPCODE_PONG)
        else:
            self._queue_control(ws, payload[:2], websocket.ABNF.OPCODE_CLOSE)

    def _pong(self, ws: websocket.WebSocket) -> bool:
        """Answer an Engine.IO ping; False when the write failed (the transport is gone)."""
        return self._queue_control(ws, framing.PONG, websocket.ABNF.OPCODE_TEXT)

    def _queue_control(self, ws: websocket.WebSocket, data: str | bytes, opcode: int) -> bool:
        """Queue a control frame and write it now if the socket is free (reader thread).

        The reader never waits for the write lock: when another thread holds
        it, that thread writes the frame when its own write is done.

        Returns:
            False when writing the queued frames failed, else True.
        """
        self._control_queue.append((ws, data, opcode))
        try:
            self._flush_control()
        except _TRANSPORT_ERRORS as exc:
            _log.debug("control frame not sent: %s", _short(exc))
            return False
        return True

    def _flush_control(self) -> None:
        """Write queued control frames while the write lock is free; never waits for it.

        Called after queueing and after every release of the lock, so a frame
        queued while another thread wrote is sent by one of the two.

        Raises:
            OSError, websocket.WebSocketException: A write failed.
        """
        queue = self._control_queue
        while queue and self._emit_lock.acquire(blocking=False):
            try:
                self._drain_control(time.monotonic() + _CONTROL_WRITE_S)
            finally:
                self._emit_lock.release()

    def _drain_control(self, deadline: float) -> None:
        """Write every queued control frame of the live websocket (``_emit_lock`` held)."""
        queue = self._control_queue
        while queue:
            try:
                ws, data, opcode = queue.popleft()
            except IndexError:
                return
            if ws is self._live:
                self._write_locked(ws, data, opcode, deadline)

    def _resolve_ack(self, packet: AckPacket) -> None:
        if packet.namespace != "/":
            return
        with self._state_lock:
            future = self._acks.pop(packet.ack_id, None)
        if future is None:
            _log.debug("ack %d has no waiter (timed out?)", packet.ack_id)
            return
        future.set_result(packet.args)

    # ------------------------------------------------------------------ losing and reconnecting

    def _lost(self, ws: websocket.WebSocket, reason: str | None) -> None:
        """On the reader thread after its loop ended: clean up, report, schedule a reconnect."""
        with self._state_lock:
            if self._live is ws:
                self._live = None
            acks = self._acks
            self._acks = {}
            closing = self._closed
        self._drop(ws)
        if reason is not None and self._stalled is ws:
            reason = REASON_TRANSPORT_ERROR  # a write overran its bound: the watchdog dropped it
        self._fail_acks(acks, f"the socket disconnected ({reason or 'closed'})")
        if closing or reason is None:
            return
        _log.debug("disconnected from %s: %s", self._endpoint, reason)
        self._callback(self._on_disconnect, reason)
        if not self._reconnect:
            return
        number = next(_thread_numbers)
        thread = threading.Thread(
            target=self._reconnect_main, name=f"{self._name}-reconnect-{number}", daemon=True
        )
        with self._state_lock:
            if self._closed:
                return
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            thread.start()

    def _reconnect_main(self) -> None:
        attempt = 0
        while True:
            delay = reconnect_delay(attempt, self._reconnect_base, self._reconnect_cap, self._jitter)
            if self._stop.wait(delay):
                return
            attempt += 1
            _log.debug("reconnect attempt %d to %s", attempt, self._endpoint)
            try:
                link = self._establish(self._connect_timeout)
            except _Stopped:
                _log.debug("reconnect stopped: no credentials")
                return
            except ServiceAuthError as exc:
                if self._stop.is_set():
                    return
                _log.debug("reconnect refused by the service; attempts stop")
                self._callback(self._on_error, exc)
                return
            except ServiceError as exc:
                if self._stop.is_set():
                    return
                _log.debug("reconnect attempt %d failed: %s", attempt, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - auth() raised or returned a wrong type
                if self._stop.is_set():
                    return
                _log.debug("reconnect stopped: %s", type(exc).__name__)
                self._callback(self._on_error, exc)
                return
            self._activate(link, first=False)
            return

    # ------------------------------------------------------------------ helpers

    def _send(self, ws: websocket.WebSocket, text: str, deadline: float) -> None:
        """Write one text frame for :meth:`emit` / :meth:`call`, errors translated."""
        try:
            self._write(ws, text, websocket.ABNF.OPCODE_TEXT, deadline)
        except _TIMEOUT_ERRORS:
            raise ServiceTimeoutError(
                "the socket write did not finish in time (another write held the socket, or the "
                "service stopped reading; a stalled connection is dropped and re-established)"
            ) from None
        except _TRANSPORT_ERRORS as exc:
            sock = ws.sock
            if sock is not None:
                _shutdown(sock)  # the reader notices the loss at once
            if self._stalled is ws:
                raise ServiceTimeoutError(
                    "the socket write stalled past its bound; the connection was dropped and is "
                    "being re-established"
                ) from None
            raise ServiceAuthError("socket not connected (the write failed)") from exc

    def _write(self, ws: websocket.WebSocket, data: str | bytes, opcode: int, deadline: float) -> None:
        """Take the write lock (waiting until ``deadline`` at most), write one frame, release.

        Raises:
            TimeoutError: The lock was not free before ``deadline``.
            OSError, websocket.WebSocketException: The write failed (the
                watchdog shut the socket down when it overran its bound).
        """
        wait = deadline - time.monotonic()
        if wait <= 0 or not self._emit_lock.acquire(timeout=wait):
            raise TimeoutError("the socket stayed busy with another write")
        try:
            self._write_locked(ws, data, opcode, max(deadline, time.monotonic() + _MIN_WRITE_S))
            try:
                self._drain_control(time.monotonic() + _CONTROL_WRITE_S)
            except _TRANSPORT_ERRORS as exc:  # our frame is out; the reader will see the loss
                _log.debug("control frame not sent: %s", _short(exc))
        finally:
            self._emit_lock.release()
        try:
            self._flush_control()  # frames queued by the reader while the lock was held
        except _TRANSPORT_ERRORS as exc:
            _log.debug("control frame not sent: %s", _short(exc))

    def _write_locked(self, ws: websocket.WebSocket, data: str | bytes, opcode: int, deadline: float) -> None:
        """Write one frame under ``_emit_lock``; the watchdog drops the socket past ``deadline``."""
        self._writing = (ws, deadline)
        try:
            ws.send(data, opcode)
        finally:
            self._writing = None

    def _watch_main(self, link: _Link) -> None:
        """Watchdog of one connection: a write unfinished past its bound drops the socket.

        The reader then sees the loss and the connection is re-established.
        Ends with the connection (or at :meth:`close`).
        """
        while not link.lost.wait(_WATCH_TICK_S) and not self._stop.is_set():
            writing = self._writing
            if writing is None or time.monotonic() <= writing[1]:
                continue
            ws = writing[0]
            if ws is not link.ws or self._writing is not writing or self._stalled is ws:
                continue
            self._stalled = ws
            _log.warning("a socket write stalled past its bound; dropping the connection to re-establish it")
            sock = ws.sock
            if sock is not None:
                _shutdown(sock)

    def _drop(self, ws: websocket.WebSocket) -> None:
        """Shut a websocket's socket down and close it (idempotent)."""
        sock = ws.sock
        if sock is not None:
            self._forget(sock)
            _shutdown(sock)
        ws.shutdown()  # type: ignore[no-untyped-call]

    def _forget(self, sock: socket.socket) -> None:
        with self._state_lock:
            self._socks.discard(sock)

    @staticmethod
    def _fail_acks(acks: dict[int, Future[list[Any]]], why: str) -> None:
        for future in acks.values():
            if not future.done():
                future.set_exception(ServiceError(why))

    @staticmethod
    def _callback(callback: Callable[..., None], *args: Any) -> None:
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
