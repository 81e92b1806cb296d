"""The socket connection: one websocket, one reader thread, heartbeat and reconnection.

Speaks Socket.IO v5 over Engine.IO v4 (websocket transport only) with the
framing of :mod:`service_client.gateway.framing`, on websocket-client:
connection with the bot token in the CONNECT packet, the server's heartbeat,
and reconnection with a doubling, randomised delay. Guarantees: ``close()``
stops everything; a callback exception never kills the reader; a
server-initiated disconnect is reconnected like a network loss; a token
refusal stops reconnecting; ``connected`` means the namespace is connected,
not merely that a socket exists; pending acks fail when the transport drops,
and each has its own timeout; a connection attempt is bounded as a whole
(15 s by default), however slowly the server answers; a redirect answer to
the upgrade is refused, never followed; once connected, no complete message
within the heartbeat's silence bound is a lost connection, and a message over
the server's ``maxPayload`` drops the connection (see
:func:`~.reader.message_cap`).

This module holds the lifecycle (connecting, closing, losing and
reconnecting) and the pending acks; the connection builds and holds three
parts: its dialer (:class:`~.dialer.ConnectionDialer`, one connection attempt:
TCP, TLS, upgrade, handshake), its reader (:class:`~.reader.ConnectionReader`,
the reader thread's loop over a :class:`~.reader.FrameReader`) and its writer
(:class:`~.writer.ConnectionWriter`, the bounded writes and the watchdog).
The writer and the dialer share the connection's
:class:`~.parts.ConnectionScope` (what close() must reach); the reader gets
callables only.

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
* ``<name>-gateway-handshake-<n>``: one per connection attempt, ending with
  it; shuts the attempt's socket down at its deadline.

Why our own framing: python-socketio's synchronous client hands each event to a
new thread and loses their order; here one thread decodes in arrival order.
websocket-client performs the HTTP upgrade and the writes; frames are read by
:class:`~.reader.FrameReader` (one buffered ``recv`` per 256 KiB instead of
three per frame, every frame already buffered taken per wakeup).

Limits: the TCP connection is opened by this module (so ``close()`` can
interrupt it), hence HTTP proxies from the environment are not used; DNS
resolution is bounded by the system resolver only.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, Final

import websocket

from .._defaults import (
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
from .dialer import ConnectionDialer
from .framing import AckPacket
from .parts import (
    _CLOSE_SEND_S,
    REASON_IO_SERVER_DISCONNECT,
    REASON_PING_TIMEOUT,
    REASON_TRANSPORT_CLOSE,
    REASON_TRANSPORT_ERROR,
    ConnectionScope,
    _callback,
    _check_timeout,
    _fail_acks,
    _Link,
    _log,
    _short,
    _shutdown,
    _Stopped,
    _thread_numbers,
    reconnect_delay,
    socket_endpoint,
)
from .reader import ConnectionReader
from .writer import ConnectionWriter

__all__ = [
    "REASON_IO_SERVER_DISCONNECT",
    "REASON_PING_TIMEOUT",
    "REASON_TRANSPORT_CLOSE",
    "REASON_TRANSPORT_ERROR",
    "GatewayConnection",
    "reconnect_delay",
    "socket_endpoint",
]


class GatewayConnection:
    """A Socket.IO client connection to the default namespace over one websocket.

    Built from parts it holds: a :class:`~.dialer.ConnectionDialer`, a
    :class:`~.reader.ConnectionReader` and a :class:`~.writer.ConnectionWriter`
    sharing one :class:`~.parts.ConnectionScope`.

    Thread-safe: ``emit``, ``call`` and ``close`` may be called from any thread,
    including from inside the callbacks. The callbacks run on the reader thread
    (``on_error`` on the reconnect thread) and must be quick: they delay every
    later packet.
    """

    #: The JSON decoder every connection's reader uses for event frames: ``"msgspec"`` or
    #: ``"json"`` (see :mod:`service_client.gateway.decoder`; chosen once, at import).
    json_decoder: Final[str] = decoder.NAME

    def __init__(
        self,
        socket_url: str,
        *,
        auth: Callable[[], dict[str, Any] | None],
        on_event: Callable[..., None],
        on_connect: Callable[[bool], None],
        on_disconnect: Callable[[str], None],
        on_error: Callable[[BaseException], None],
        connect_timeout: float = CONNECT_TIMEOUT_S,
        reconnect: bool = True,
        reconnect_base: float = RECONNECT_BASE_S,
        reconnect_cap: float = RECONNECT_CAP_S,
        jitter: float = RECONNECT_JITTER,
        name: str = "service_client",
        frame_decoders: Mapping[str, Callable[[bytes], list[Any]]] | None = None,
        redact: Callable[[str], str] | None = None,
        event_frames: bool = False,
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
            frame_decoders: Event name -> a decoder of that event's frames, tried
                before the general one: it gets the JSON array of a frame
                ``42["<name>",...]`` (bytes) and returns its items as a new list,
                the name first (``on_event`` then gets the rest as its args, the
                same list); anything it raises
                sends the frame the general way, as if it had not been tried. For
                a decoder into structs (see ``Parsers.frame_decoders``). A
                connection stops trying an event's decoder when it has refused
                64 frames in a row (frames no decoder refused in between), and
                says so at DEBUG on the ``service_client.gateway`` logger.
            redact: Masks the secrets ``auth`` hands out in a text (the client replaces its
                token with ``[REDACTED]``); applied to every text of the server that an
                exception of the connection quotes (a CONNECT refusal's message, a
                redirect's ``Location``). None: such texts are quoted as they are.
            event_frames: True: ``on_event`` is called ``(event name, args list,
                frame)``, ``frame`` being the event's text frame as read
                (``42["<name>",...]``, bytes) when the reader's JSON decoder is
                msgspec (the frame is then strict RFC 8259 JSON: no ``NaN``, valid
                UTF-8; a decoder of ``frame_decoders`` must be as strict), else None
                (the standard library decodes, or the frame came the general way). The
                args are that frame's array after the name, so the frame can be
                stored or forwarded in place of encoding the args again.

        Raises:
            TypeError: A callback is not callable or an argument has the wrong type.
            ValueError: ``socket_url`` is not an http(s)/ws(s) URL, a duration is
                not positive, or ``jitter`` is outside [0, 1].
        """
        self._endpoint = socket_endpoint(socket_url)
        for arg_name, callback in (
            ("auth", auth),
            ("on_event", on_event),
            ("on_connect", on_connect),
            ("on_disconnect", on_disconnect),
            ("on_error", on_error),
            ("redact", redact if redact is not None else str),
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
        if frame_decoders is not None and not isinstance(frame_decoders, Mapping):
            raise TypeError(f"frame_decoders must be a mapping of event names to decoders, got {type(frame_decoders).__name__}")
        decoders = dict(frame_decoders or {})
        for event, decode in decoders.items():
            if not isinstance(event, str) or not event:
                raise TypeError(f"frame_decoders keys must be event names (non-empty str), got {event!r}")
            if not callable(decode):
                raise TypeError(f"frame_decoders[{event!r}] must be callable")
        self._on_disconnect = on_disconnect
        self._on_error = on_error
        self._connect_timeout = float(connect_timeout)
        self._reconnect = bool(reconnect)
        self._reconnect_base = float(reconnect_base)
        self._reconnect_cap = float(reconnect_cap)
        self._jitter = float(jitter)
        self._name = name
        #: Event name -> its frames' own decoder, tried before the general one (the reader's).
        self._frame_decoders = decoders

        #: What close() must reach: the lock guarding the state below, whether the connection
        #: is closed, the stop event, the live websocket, the sockets and threads to stop.
        self._scope = ConnectionScope()
        self._started = False
        #: Pending acks by id (under the scope's lock).
        self._acks: dict[int, Future[list[Any]]] = {}
        self._ack_ids = itertools.count(1)
        #: The session id of the latest connection (shown while it is live).
        self._sid: str | None = None
        self._writer = ConnectionWriter(self._scope)
        self._reader = ConnectionReader(
            on_event=on_event,
            on_connect=on_connect,
            frame_decoders=decoders,
            event_frames=event_frames,
            pong=self._writer.pong,
            on_ack=self._resolve_ack,
            on_lost=self._lost,
        )
        self._dialer = ConnectionDialer(
            self._endpoint,
            self._scope,
            self._writer,
            auth=auth,
            name=name,
            redact=redact if redact is not None else str,
        )

    def __repr__(self) -> str:
        scope = self._scope
        state = "closed" if scope.closed else ("connected" if scope.live is not None else "disconnected")
        return f"<GatewayConnection {self._endpoint} {state}>"

    # ------------------------------------------------------------------ public

    @property
    def connected(self) -> bool:
        """True while the default namespace is connected, not merely while a socket exists."""
        return self._scope.live is not None

    @property
    def endpoint(self) -> str:
        """The websocket URL used (``ws(s)://.../socket.io/?EIO=4&transport=websocket``)."""
        return self._endpoint

    @property
    def sid(self) -> str | None:
        """The Socket.IO session id of the current connection, or None when not connected."""
        return self._sid if self._scope.live is not None else None

    def connect(self, timeout: float | None = None) -> None:
        """Open the first connection, blocking until the namespace is connected.

        Opens ``{socket_url}/socket.io/?EIO=4&transport=websocket``, reads the
        open packet (ping settings), sends ``40{auth()}`` and waits for
        ``40{sid}``. Then starts the reader thread, which calls
        ``on_connect(True)`` before any event. There is no background retry of
        a failed first connection: on failure nothing is left running, and
        ``connect`` may be called again. No frame of a traceback it raises
        holds the CONNECT packet or the token. A redirect answer to the
        upgrade is not followed: nothing is sent to another host.

        Args:
            timeout: Bound of the whole attempt, seconds (TCP, TLS, upgrade,
                open packet and CONNECT answer together, however slowly the
                server sends them; DNS resolution excepted);
                ``connect_timeout`` when None.

        Raises:
            TypeError: ``timeout`` is not a number, or ``auth()`` returned
                something other than a dict or None.
            ValueError: ``timeout`` is not positive.
            ServiceAuthError: The service refused the CONNECT (``44``; the
                message is the service's text), or ``auth()`` returned None.
            ServiceTimeoutError: No connection within ``timeout``.
            ServiceError: Network failure or a protocol violation (cause
                chained), an HTTP answer other than ``101`` to the upgrade (a
                redirect's status and Location are named), ``connect`` was
                already successful, or the connection was closed.
        """
        if timeout is None:
            timeout = self._connect_timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError("timeout must be a number of seconds")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        scope = self._scope
        with scope.lock:
            if scope.closed:
                raise ServiceError("the socket connection is closed")
            if self._started:
                raise ServiceError("connect() was already called")
            self._started = True
        try:
            link = self._dialer.establish(float(timeout))
        except _Stopped:
            with scope.lock:
                self._started = False
            raise ServiceAuthError("no credentials for the socket connection") from None
        except BaseException:
            with scope.lock:
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
        ws = self._scope.live
        if ws is None:
            raise ServiceAuthError("socket not connected")
        self._writer.send(ws, text, deadline)
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
        lock = self._scope.lock
        with lock:
            ws = self._scope.live
            if ws is None:
                raise ServiceAuthError("socket not connected")
            ack_id = next(self._ack_ids)
            self._acks[ack_id] = future
        try:
            self._writer.send(ws, f"42{ack_id}{text[2:]}", deadline)
        except BaseException:
            with lock:
                self._acks.pop(ack_id, None)
            raise
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("call %s (ack %d)", event, ack_id)
        try:
            return future.result(max(0.0, deadline - time.monotonic()))
        except FutureTimeoutError:
            with lock:
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
        scope = self._scope
        with scope.lock:
            if scope.closed:
                return
            scope.closed = True
            self._reader.close()
            scope.stop.set()
            ws = scope.live
            scope.live = None
            socks = list(scope.socks)
            acks = self._acks
            self._acks = {}
            threads = list(scope.threads)
        _log.debug("closing %s", self._endpoint)
        _fail_acks(acks, "the socket connection was closed")
        write_lock = self._writer.lock
        if ws is not None and write_lock.acquire(timeout=_CLOSE_SEND_S):
            try:
                ws.settimeout(_CLOSE_SEND_S)
                ws.send(framing.encode_disconnect())
                ws.send_close()
            except Exception as exc:  # noqa: BLE001 - best effort: the socket is shut down below anyway
                _log.debug("DISCONNECT not sent: %s", _short(exc))
            finally:
                write_lock.release()
        for sock in socks:
            _shutdown(sock)
        deadline = time.monotonic() + DESTROY_JOIN_S
        current = threading.current_thread()
        for thread in threads:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------------ connecting (see also .dialer)

    def _activate(self, link: _Link, *, first: bool) -> bool:
        """Install a connected websocket and start its reader; False when closed meanwhile."""
        ws, open_packet = link.ws, link.open_packet
        silence = (open_packet.ping_interval_ms + open_packet.ping_timeout_ms) / 1000.0
        if silence <= 0:
            silence = self._connect_timeout
        ws.settimeout(silence)
        # No complete message within the bound is silence too, however its bytes trickle in.
        link.reader.set_silence(silence)
        number = next(_thread_numbers)
        reader = threading.Thread(
            target=self._reader.run,
            args=(link, first),
            name=f"{self._name}-gateway-{number}",
            daemon=True,
        )
        scope = self._scope
        with scope.lock:
            if scope.closed:
                closed = True
            else:
                closed = False
                self._sid = link.sid
                scope.live = ws
                scope.threads = [t for t in scope.threads if t.is_alive()]
                watchdog = threading.Thread(
                    target=self._writer.watch,
                    args=(link,),
                    name=f"{self._name}-gateway-watchdog-{number}",
                    daemon=True,
                )
                link.watchdog = watchdog
                scope.threads += [watchdog, reader]
                watchdog.start()
                reader.start()
        if closed:
            self._drop(ws)
            return False
        _log.debug(
            "connected to %s (sid %s, ping %d ms + %d ms)",
            self._endpoint,
            link.sid,
            open_packet.ping_interval_ms,
            open_packet.ping_timeout_ms,
        )
        return True

    # ------------------------------------------------------------------ losing and reconnecting

    def _lost(self, ws: websocket.WebSocket, reason: str | None) -> None:
        """On the reader thread after its loop ended: clean up, report, schedule a reconnect."""
        scope = self._scope
        with scope.lock:
            if scope.live is ws:
                scope.live = None
            acks = self._acks
            self._acks = {}
            closing = scope.closed
        self._drop(ws)
        if reason is not None and self._writer.stalled is ws:
            reason = REASON_TRANSPORT_ERROR  # a write overran its bound: the watchdog dropped it
        _fail_acks(acks, f"the socket disconnected ({reason or 'closed'})")
        if closing or reason is None:
            return
        _log.debug("disconnected from %s: %s", self._endpoint, reason)
        _callback(self._on_disconnect, reason)
        if not self._reconnect:
            return
        number = next(_thread_numbers)
        thread = threading.Thread(
            target=self._reconnect_main, name=f"{self._name}-reconnect-{number}", daemon=True
        )
        scope.start_thread(thread)  # not started when closed meanwhile

    def _reconnect_main(self) -> None:
        """The reconnect thread: wait out the backoff delays, attempt, activate the first success."""
        stop = self._scope.stop
        attempt = 0
        while True:
            delay = reconnect_delay(attempt, self._reconnect_base, self._reconnect_cap, self._jitter)
            if stop.wait(delay):
                return
            attempt += 1
            _log.debug("reconnect attempt %d to %s", attempt, self._endpoint)
            try:
                link = self._dialer.establish(self._connect_timeout)
            except _Stopped:
                _log.debug("reconnect stopped: no credentials")
                return
            except ServiceAuthError as exc:
                if stop.is_set():
                    return
                _log.debug("reconnect refused by the service; attempts stop")
                _callback(self._on_error, exc)
                return
            except ServiceError as exc:
                if stop.is_set():
                    return
                _log.debug("reconnect attempt %d failed: %s", attempt, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - auth() raised or returned a wrong type
                if stop.is_set():
                    return
                _log.debug("reconnect stopped: %s", type(exc).__name__)
                _callback(self._on_error, exc)
                return
            self._activate(link, first=False)
            return

    # ------------------------------------------------------------------ helpers

    def _resolve_ack(self, packet: AckPacket) -> None:
        """On the reader thread: resolve the Future of a default-namespace ACK (ignored when none waits)."""
        with self._scope.lock:
            future = self._acks.pop(packet.ack_id, None)
        if future is None:
            _log.debug("ack %d has no waiter (timed out?)", packet.ack_id)
            return
        future.set_result(packet.args)

    def _drop(self, ws: websocket.WebSocket) -> None:
        """Shut a websocket's socket down and close it (idempotent)."""
        sock = ws.sock
        if sock is not None:
            self._scope.forget(sock)
            _shutdown(sock)
        ws.shutdown()  # type: ignore[no-untyped-call]
