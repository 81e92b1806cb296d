"""One connection attempt of a gateway connection: TCP, TLS, websocket upgrade, Engine.IO handshake.

The TCP connection is opened here (so ``close()`` can interrupt it by shutting
the registered socket down); the CONNECT packet, which carries the token,
lives only inside ``ConnectionDialer._send_connect``, so no traceback's
frame locals show it.

An attempt is bounded as a whole: a guard thread shuts its socket down at the
attempt's deadline, so a server answering one byte at a time (the HTTP
upgrade's answer, the open packet, the CONNECT answer) cannot hold it longer
than its timeout. A redirect answer to the upgrade is refused, never followed:
the CONNECT packet goes only to the socket host given.

The upgrade answer's head is capped too: websocket-client reads it one byte at
a time and keeps every line whole, so a header line that never ends would grow
the process until the deadline. The attempt fails at once with a
:class:`~service_client.ServiceError` when a line of the head goes over
:data:`MAX_UPGRADE_LINE_BYTES` or the whole head over
:data:`MAX_UPGRADE_HEAD_BYTES` (then the usual reconnect policy applies).
"""

from __future__ import annotations

import functools
import socket
import ssl
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

import websocket

from .._defaults import DESTROY_JOIN_S
from ..errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from . import framing
from .framing import ConnectErrorPacket, ConnectPacket, EnginePacket, EngineType, FramingError, OpenPacket
from .parts import (
    _RAW_FRAME,
    _TIMEOUT_ERRORS,
    _TRANSPORT_ERRORS,
    _WATCH_TICK_S,
    ConnectionScope,
    _Link,
    _remaining,
    _short,
    _shutdown,
    _Stopped,
    _thread_numbers,
)
from .reader import MIN_MESSAGE_CAP, FrameReader, message_cap
from .writer import ConnectionWriter

__all__ = ["MAX_UPGRADE_HEAD_BYTES", "MAX_UPGRADE_LINE_BYTES", "ConnectionDialer"]

#: Longest line (status line or one header, its CRLF included) of the socket upgrade's answer, bytes.
MAX_UPGRADE_LINE_BYTES: Final = 8 * 1024
#: Longest head (status line and every header) of the socket upgrade's answer, bytes.
MAX_UPGRADE_HEAD_BYTES: Final = 64 * 1024

#: HTTP statuses websocket-client treats as redirects of the upgrade (none is followed here).
_REDIRECTS: Final = frozenset((301, 302, 303, 307, 308))


class _Guard:
    """The deadline of one connection attempt: past it, the attempt's socket is shut down.

    Shutting the socket down (as ``close()`` does) wakes whatever read or
    write of the attempt is blocked; the attempt then reports a timeout.
    """

    __slots__ = ("deadline", "expired", "finished", "lock", "settled", "sock")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        #: The deadline passed before the attempt settled (its socket was shut down).
        self.expired = False
        #: The attempt settled (succeeded or failed): the deadline no longer applies.
        self.settled = False
        #: Set when the attempt settled: the guard thread ends.
        self.finished = threading.Event()

    def arm(self, sock: socket.socket) -> None:
        """Watch ``sock`` (shut it down at once when the deadline already passed)."""
        with self.lock:
            self.sock = sock
            if self.expired:
                _shutdown(sock)

    def expire(self) -> None:
        """The deadline passed: shut the socket down unless the attempt settled first."""
        with self.lock:
            if self.settled:
                return
            self.expired = True
            sock = self.sock
            if sock is not None:
                _shutdown(sock)

    def settle(self) -> bool:
        """The attempt is over; False when the deadline passed first (its socket is shut down)."""
        with self.lock:
            self.settled = True
        self.finished.set()
        return not self.expired


class _CappedHead:
    """A socket as websocket-client sees it during the upgrade: its reads count toward the caps.

    Every read goes to the real socket (asking no more than the caps leave), and the bytes
    read are counted, in all and since the last line feed; past a cap the read raises
    :class:`~service_client.ServiceError` before more is read. Anything else (send,
    timeouts, fileno, close) is the real socket's.
    """

    __slots__ = ("_endpoint", "_line", "_sock", "_total")

    def __init__(self, sock: socket.socket, endpoint: str) -> None:
        self._sock = sock
        self._endpoint = endpoint
        self._total = 0
        self._line = 0

    def recv(self, bufsize: int) -> bytes:
        """At most ``bufsize`` bytes of the answer; raises ServiceError past a cap."""
        allowed = min(MAX_UPGRADE_HEAD_BYTES - self._total, MAX_UPGRADE_LINE_BYTES - self._line) + 1
        data = self._sock.recv(max(1, min(bufsize, allowed)))
        self._total += len(data)
        end = data.rfind(b"\n")
        self._line = self._line + len(data) if end < 0 else len(data) - end - 1
        if self._line > MAX_UPGRADE_LINE_BYTES:
            raise ServiceError(_oversized_head(self._endpoint, f"a line over {MAX_UPGRADE_LINE_BYTES} bytes"))
        if self._total > MAX_UPGRADE_HEAD_BYTES:
            raise ServiceError(_oversized_head(self._endpoint, f"a head over {MAX_UPGRADE_HEAD_BYTES} bytes"))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class ConnectionDialer:
    """The connection attempts of a :class:`~service_client.gateway.connection.GatewayConnection`.

    Thread-safe: attempts may run on several threads (each has its own socket
    and guard); close() interrupts them through the scope.

    Args:
        endpoint: The websocket URL (see :func:`~.parts.socket_endpoint`).
        scope: The connection's scope: its sockets and threads are registered
            there, so close() shuts them down and joins them; its ``stop``
            event ends an attempt.
        writer: Writes the CONNECT packet and the handshake's pongs, and
            answers the websocket pings the frame reader meets.
        auth: Returns the CONNECT auth object (see ``GatewayConnection``); None: stop.
        name: Thread name prefix (``<name>-gateway-handshake-<n>``).
        redact: Masks secrets in a server's text an exception quotes.
    """

    def __init__(
        self,
        endpoint: str,
        scope: ConnectionScope,
        writer: ConnectionWriter,
        *,
        auth: Callable[[], dict[str, Any] | None],
        name: str,
        redact: Callable[[str], str],
    ) -> None:
        parts = urlsplit(endpoint)
        self._endpoint = endpoint
        self._host: str = parts.hostname or ""
        self._port: int = parts.port or (443 if parts.scheme == "wss" else 80)
        self._secure = parts.scheme == "wss"
        self._scope = scope
        self._writer = writer
        self._auth = auth
        self._name = name
        self._redact = redact

    def establish(self, timeout: float) -> _Link:
        """One connection attempt, bounded by ``timeout`` seconds: TCP, TLS, upgrade, open packet, CONNECT.

        Returns:
            The link: the websocket, its frame reader (capped at the server's
            ``maxPayload``), its open packet and the session id.

        Raises:
            _Stopped: ``auth()`` returned None.
            TypeError: ``auth()`` returned something other than a dict or None,
                or a dict that is not JSON-serialisable.
            ServiceAuthError: CONNECT_ERROR from the service.
            ServiceTimeoutError: The attempt did not end within ``timeout``.
            ServiceError: Network failure, a protocol violation, an upgrade
                refused or redirected, or the scope stopped (see ``GatewayConnection.connect``).
            Exception: Whatever ``auth()`` raised.
        """
        deadline = time.monotonic() + timeout
        sock: socket.socket | None = None
        ws: websocket.WebSocket | None = None
        guard = _Guard(deadline)
        watcher = self._start_guard(guard)
        try:
            sock = self._dial(deadline)
            guard.arm(sock)
            ws = websocket.WebSocket(enable_multithread=True, skip_utf8_validation=True)
            ws.connect(  # type: ignore[no-untyped-call]
                self._endpoint, socket=_CappedHead(sock, self._endpoint), timeout=_remaining(deadline),
                suppress_origin=True, redirect_limit=0,
            )
            ws.sock = sock  # the head was read: frames go to the socket itself
            assert ws.sock is not None
            reader = FrameReader(ws.sock, functools.partial(self._writer.control, ws), max_message=MIN_MESSAGE_CAP)
            open_packet, sid = self._handshake(ws, reader, deadline)
            if not guard.settle():
                raise TimeoutError("the deadline passed as the handshake ended")
            return _Link(ws, reader, open_packet, sid)
        except BaseException as exc:
            expired = not guard.settle()
            if ws is not None:
                ws.shutdown()  # type: ignore[no-untyped-call]
            if sock is not None:
                self._scope.forget(sock)
                _shutdown(sock)
                sock.close()
            if self._scope.stop.is_set():
                raise ServiceError("the socket connection was closed while connecting") from exc
            if isinstance(exc, (ServiceError, _Stopped)):
                raise
            failed = isinstance(exc, (*_TRANSPORT_ERRORS, FramingError, UnicodeDecodeError))
            if isinstance(exc, _TIMEOUT_ERRORS) or (expired and failed):
                raise ServiceTimeoutError(
                    f"socket connection to {self._endpoint} timed out after {timeout:g} s"
                ) from exc
            if isinstance(exc, websocket.WebSocketBadStatusException):
                raise ServiceError(_refused_upgrade(self._endpoint, exc.status_code)) from exc
            refused = self._refused_redirect(ws)
            if refused is not None:
                raise ServiceError(refused) from exc
            if failed:
                shown = self._redact(_short(exc))
                if shown != _short(exc):  # the server's text quoted a secret: the causes must not show it
                    _redact_chain(exc, self._redact)
                raise ServiceError(f"socket connection to {self._endpoint} failed: {type(exc).__name__}: {shown}") from exc
            raise
        finally:
            guard.finished.set()
            watcher.join(DESTROY_JOIN_S)

    def _refused_redirect(self, ws: websocket.WebSocket | None) -> str | None:
        """The message of an upgrade answered with a redirect (its ``Location`` redacted), else None."""
        response = getattr(ws, "handshake_response", None)
        if response is None or response.status not in _REDIRECTS:
            return None
        location = response.headers.get("location")
        return _refused_redirect(self._endpoint, response.status, None if location is None else self._redact(location))

    def _start_guard(self, guard: _Guard) -> threading.Thread:
        """Start the thread enforcing ``guard``'s deadline (joined by the attempt and by close()).

        Raises:
            ServiceError: The connection is closed (no thread is started).
        """
        thread = threading.Thread(
            target=self._guard_main,
            args=(guard,),
            name=f"{self._name}-gateway-handshake-{next(_thread_numbers)}",
            daemon=True,
        )
        if not self._scope.start_thread(thread):
            raise ServiceError("the socket connection was closed while connecting")
        return thread

    def _guard_main(self, guard: _Guard) -> None:
        """Wait for the attempt to settle; at its deadline, shut its socket down."""
        stop = self._scope.stop
        while not stop.is_set():
            remaining = guard.deadline - time.monotonic()
            if remaining <= 0:
                guard.expire()
                return
            if guard.finished.wait(min(remaining, _WATCH_TICK_S)):
                return

    def _dial(self, deadline: float) -> socket.socket:
        """TCP (and TLS) connection, registered so close() can interrupt it."""
        infos = socket.getaddrinfo(self._host, self._port, 0, socket.SOCK_STREAM)
        last: BaseException | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            self._scope.add_socket(sock)  # ServiceError when closed
            try:
                sock.settimeout(_remaining(deadline))
                sock.connect(address)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if self._secure:
                    sock.settimeout(_remaining(deadline))  # the TLS handshake: what is left
                    context = ssl.create_default_context()
                    tls = context.wrap_socket(sock, server_hostname=self._host)
                    if self._scope.replace_socket(sock, tls):  # closed meanwhile
                        _shutdown(tls)
                    sock = tls
                return sock
            except OSError as exc:
                last = exc
                self._scope.forget(sock)
                sock.close()
                if isinstance(exc, TimeoutError) or self._scope.stop.is_set():
                    raise
        raise last if last is not None else OSError(f"no address for {self._host}")

    def _handshake(self, ws: websocket.WebSocket, reader: FrameReader, deadline: float) -> tuple[OpenPacket, str | None]:
        """Read the open packet, send CONNECT, wait for its answer; the open packet and the sid."""
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
                reader.set_max_message(message_cap(packet.max_payload))
                self._send_connect(ws, deadline)
                continue
            if isinstance(packet, ConnectPacket) and packet.namespace == "/":
                sid = packet.data.get("sid") if packet.data else None
                return open_packet, sid if isinstance(sid, str) else None
            if isinstance(packet, ConnectErrorPacket) and packet.namespace == "/":
                refusal = self._redact(packet.message) if packet.message else "the service refused the socket connection"
                del packet, text  # the server's own text: no frame local of the traceback keeps it
                raise ServiceAuthError(refusal)
            if isinstance(packet, EnginePacket):
                if packet.type == EngineType.PING:
                    self._writer.write(ws, framing.PONG, websocket.ABNF.OPCODE_TEXT, deadline)
                elif packet.type == EngineType.CLOSE:
                    raise websocket.WebSocketConnectionClosedException("Engine.IO close during the handshake")

    def _send_connect(self, ws: websocket.WebSocket, deadline: float) -> None:
        """Send the CONNECT packet built from ``auth()``.

        The packet holds the token, so it lives only inside this frame, which
        drops it before raising anything: a failure raises a new exception of
        the same kind, with no traceback or context leading to frames (this
        one's or websocket-client's) that held the packet. The frame is
        written already formatted, so websocket-client's trace log (which
        prints the frames its ``send`` writes) never shows it either.

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
        packet: str | bytes | None = None
        try:
            packet = framing.encode_connect(auth)
            auth = None
            # Formatted (and masked) here and written as it is: websocket-client's trace log,
            # when turned on, prints every frame its send() writes, this one's token included.
            packet = websocket.ABNF.create_frame(packet, websocket.ABNF.OPCODE_TEXT).format()
            self._writer.write(ws, packet, _RAW_FRAME, deadline)
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


def _redact_chain(exc: BaseException, redact: Callable[[str], str]) -> None:
    """Mask secrets in the text of ``exc`` and of every exception it chains, and clear their
    frames' locals (websocket-client's hold the line it could not read)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        text = str(item)
        if redact(text) != text:
            item.args = (redact(text),)
        if item.__traceback__ is not None:
            traceback.clear_frames(item.__traceback__)
        todo.extend((item.__cause__, item.__context__))


def _refused_upgrade(endpoint: str, status: int) -> str:
    """What to tell about a socket upgrade the server refused with an HTTP ``status``."""
    parts = urlsplit(endpoint)
    prefix = parts.path.removesuffix("/socket.io/")
    scheme = "https" if parts.scheme == "wss" else "http"
    host = f"{scheme}://{parts.netloc}"
    if prefix:
        hint = (f"socket_url is the socket host alone, with no path: try {host} "
                f"(the path {prefix!r} was given)")
    else:
        hint = "socket_url should be the service's socket host (for the emulator, its socket_url)"
    return f"socket connection to {endpoint} failed: the server answered HTTP {status} to the socket upgrade; {hint}"


def _oversized_head(endpoint: str, what: str) -> str:
    """What to tell about an upgrade answer whose head went over a cap (``what`` says which)."""
    return (
        f"socket connection to {endpoint} failed: the server's answer to the socket upgrade has {what} "
        "(not read further); socket_url should be the service's socket host"
    )


def _refused_redirect(endpoint: str, status: int, location: str | None) -> str:
    """What to tell about a socket upgrade the server answered with a redirect (never followed)."""
    if location is None:
        target = "no Location"
    else:
        shown = location if len(location) <= 200 else location[:200] + "..."
        target = f"Location {shown!r}"
    return (
        f"socket connection to {endpoint} failed: the server answered HTTP {status} ({target}) to the "
        "socket upgrade; redirects are not followed, since the connection then carries the token: "
        "socket_url must be the socket host itself"
    )
