"""The writing part of a gateway connection: bounded writes, queued control frames, the watchdog.

Writes are serialised by one lock, and every wait for it is bounded by the
caller's remaining time. The reader thread never waits for that lock: the
pongs and close echoes it sends are queued and written by whichever thread
holds or next takes it. A write still unfinished past its bound (a peer that
stopped reading) counts as a lost connection: the watchdog shuts the socket
down and the connection is re-established.
"""

from __future__ import annotations

import collections
import threading
import time

import websocket

from ..errors import ServiceAuthError, ServiceTimeoutError
from . import framing
from .parts import (
    _CONTROL_QUEUE_MAX,
    _CONTROL_WRITE_S,
    _MIN_WRITE_S,
    _RAW_FRAME,
    _TIMEOUT_ERRORS,
    _TRANSPORT_ERRORS,
    _WATCH_TICK_S,
    ConnectionScope,
    _Link,
    _log,
    _short,
    _shutdown,
)

__all__ = ["ConnectionWriter"]


class ConnectionWriter:
    """The writes of a :class:`~service_client.gateway.connection.GatewayConnection`.

    Thread-safe. Writes only to the scope's live websocket what the reader
    queues (pongs, close echoes); the watchdog stops with the scope's
    ``stop`` event.

    Args:
        scope: The connection's scope (its ``live`` websocket and ``stop`` event are read).
    """

    def __init__(self, scope: ConnectionScope) -> None:
        self._scope = scope
        #: Serialises writes to the websocket; never held while waiting for anything but the
        #: write itself, and never waited for by the reader thread.
        self.lock = threading.Lock()
        #: The write in progress and its bound (monotonic), read by the watchdog; else None.
        self._writing: tuple[websocket.WebSocket, float] | None = None
        #: The websocket the watchdog dropped because a write overran its bound.
        self.stalled: websocket.WebSocket | None = None
        #: Control frames (websocket, data, opcode) the reader queued for the next lock holder.
        self._control_queue: collections.deque[tuple[websocket.WebSocket, str | bytes, int]] = (
            collections.deque(maxlen=_CONTROL_QUEUE_MAX)
        )

    def send(self, ws: websocket.WebSocket, text: str, deadline: float) -> None:
        """Write one text frame for ``emit`` / ``call`` by ``deadline`` (monotonic), errors translated.

        Raises:
            ServiceTimeoutError: The lock was not free before ``deadline``, or
                the write stalled past its bound (the connection is dropped).
            ServiceAuthError: The write failed: the transport is gone (its
                socket is shut down so the reader notices at once).
        """
        try:
            self.write(ws, text, websocket.ABNF.OPCODE_TEXT, deadline)
        except _TIMEOUT_ERRORS:
            raise ServiceTimeoutError(
                "the socket write did not finish in time (another write held the socket, or the "
                "service stopped reading; a stalled connection is dropped and re-established)"
            ) from None
        except _TRANSPORT_ERRORS as exc:
            sock = ws.sock
            if sock is not None:
                _shutdown(sock)  # the reader notices the loss at once
            if self.stalled is ws:
                raise ServiceTimeoutError(
                    "the socket write stalled past its bound; the connection was dropped and is "
                    "being re-established"
                ) from None
            raise ServiceAuthError("socket not connected (the write failed)") from exc

    def write(self, ws: websocket.WebSocket, data: str | bytes, opcode: int, deadline: float) -> None:
        """Take the write lock (waiting until ``deadline`` at most), write one frame, release.

        Then writes the control frames queued meanwhile. With ``opcode``
        ``_RAW_FRAME``, ``data`` is a whole formatted frame, written as it is.

        Raises:
            TimeoutError: The lock was not free before ``deadline``.
            OSError, websocket.WebSocketException: The write failed (the
                watchdog shut the socket down when it overran its bound).
        """
        wait = deadline - time.monotonic()
        if wait <= 0 or not self.lock.acquire(timeout=wait):
            raise TimeoutError("the socket stayed busy with another write")
        try:
            self._write_locked(ws, data, opcode, max(deadline, time.monotonic() + _MIN_WRITE_S))
            try:
                self._drain_control(time.monotonic() + _CONTROL_WRITE_S)
            except _TRANSPORT_ERRORS as exc:  # our frame is out; the reader will see the loss
                _log.debug("control frame not sent: %s", _short(exc))
        finally:
            self.lock.release()
        try:
            self._flush_control()  # frames queued by the reader while the lock was held
        except _TRANSPORT_ERRORS as exc:
            _log.debug("control frame not sent: %s", _short(exc))

    def _write_locked(self, ws: websocket.WebSocket, data: str | bytes, opcode: int, deadline: float) -> None:
        """Write one frame under ``lock``; the watchdog drops the socket past ``deadline``.

        With ``opcode`` ``_RAW_FRAME``, ``data`` is a whole formatted frame,
        written as it is (websocket-client's trace log does not see it).
        """
        self._writing = (ws, deadline)
        try:
            if opcode == _RAW_FRAME:
                sock = ws.sock
                if sock is None:
                    raise websocket.WebSocketConnectionClosedException("the socket is already closed")
                sock.sendall(data if isinstance(data, bytes) else data.encode("utf-8"))
            else:
                ws.send(data, opcode)
        finally:
            self._writing = None

    def watch(self, link: _Link) -> None:
        """Watchdog of one connection (its thread's target): a write unfinished past its bound drops the socket.

        The reader then sees the loss and the connection is re-established.
        Ends with the connection (``link.lost``) or when the scope stops.
        """
        stop = self._scope.stop
        while not link.lost.wait(_WATCH_TICK_S) and not stop.is_set():
            writing = self._writing
            if writing is None or time.monotonic() <= writing[1]:
                continue
            ws = writing[0]
            if ws is not link.ws or self._writing is not writing or self.stalled is ws:
                continue
            self.stalled = ws
            _log.warning("a socket write stalled past its bound; dropping the connection to re-establish it")
            sock = ws.sock
            if sock is not None:
                _shutdown(sock)

    def control(self, ws: websocket.WebSocket, opcode: int, payload: bytes) -> None:
        """Answer a websocket ping (opcode 9) with a pong, echo a close frame (best effort, never waits).

        The :class:`~.reader.FrameReader`'s ``on_control``, with ``ws`` bound.
        """
        if opcode == websocket.ABNF.OPCODE_PING:
            self._queue_control(ws, payload, websocket.ABNF.OPCODE_PONG)
        else:
            self._queue_control(ws, payload[:2], websocket.ABNF.OPCODE_CLOSE)

    def pong(self, ws: websocket.WebSocket) -> bool:
        """Answer an Engine.IO ping (never waits for the lock); False when the write failed (the transport is gone)."""
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
        while queue and self.lock.acquire(blocking=False):
            try:
                self._drain_control(time.monotonic() + _CONTROL_WRITE_S)
            finally:
                self.lock.release()

    def _drain_control(self, deadline: float) -> None:
        """Write every queued control frame of the live websocket (``lock`` held)."""
        queue = self._control_queue
        while queue:
            try:
                ws, data, opcode = queue.popleft()
            except IndexError:
                return
            if ws is self._scope.live:
                self._write_locked(ws, data, opcode, deadline)
