"""The sockets of the REST transport: which attempt each one serves, and the watchdog.

urllib3's timeouts bound each socket operation (a connect, a send, a receive),
not the sum of them: a server that sends its answer a byte at a time, each byte
within the timeout, could hold an attempt for as long as it likes. The
:class:`ConnectionRegistry` knows which attempt each socket serves, and its
watchdog thread shuts down the sockets of an attempt still running at its
deadline, whatever it is doing then (a TLS handshake, a send, reading a status
line or headers); :meth:`ConnectionRegistry.abort_all` shuts them all down
when the transport closes. :class:`TrackingAdapter` is the ``requests`` adapter
whose pools add their sockets to a registry.
"""

from __future__ import annotations

import math
import socket
import threading
import time
import weakref
from typing import Any

import requests.adapters
import urllib3.connection
import urllib3.connectionpool

__all__ = ["ConnectionRegistry", "TrackingAdapter"]

#: Longest sleep of the idle watchdog, seconds (every wait is bounded).
_IDLE_WAIT_S = 1.0


class _Attempt:
    """One attempt on the wire: whether it has ended, and whether its deadline passed first."""

    __slots__ = ("done", "expired")

    def __init__(self) -> None:
        self.done = False
        self.expired = False


def _shut_down(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways, so sends and reads blocked on it end at once; errors are ignored."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class ConnectionRegistry:
    """The sockets of one transport and the attempt each one serves, so that an attempt's
    deadline, or :meth:`abort_all`, can end the sends and reads blocked on them. Thread-safe.

    An attempt runs on one thread between :meth:`begin` and :meth:`end`; the sockets its
    connections open or reuse meanwhile are added (:meth:`add`) on that thread, by the
    connection classes of the transport's pools. A watchdog thread (``watchdog_name``,
    a daemon, started by the first attempt, stopped by :meth:`abort_all`) shuts down the
    sockets of an attempt still running at its deadline: urllib3's timeouts bound each
    socket operation, not the sum of them. It sleeps until the earliest deadline of the
    attempts running (a few at most: one per worker), so it wakes about once per timeout
    however many calls are made.
    """

    def __init__(self, *, watchdog_name: str = "service_client-rest-watchdog-1") -> None:
        """Create an empty registry; the watchdog starts with the first attempt.

        Args:
            watchdog_name: Name of the watchdog thread.
        """
        self._socks_lock = threading.Lock()  # guards every field below and the attempts' flags
        self._wake = threading.Condition(self._socks_lock)
        self._socks: weakref.WeakKeyDictionary[socket.socket, _Attempt | None] = weakref.WeakKeyDictionary()
        self._running: dict[_Attempt, float] = {}  # attempt -> its deadline, monotonic seconds
        self._wake_at = math.inf  # when the watchdog wakes next by itself, monotonic seconds
        self._closed = False
        self._watchdog_name = watchdog_name
        self._watchdog: threading.Thread | None = None
        self._current = threading.local()

    def begin(self, deadline: float) -> _Attempt:
        """Start an attempt on the calling thread, due to end by ``deadline`` (monotonic seconds).

        Returns:
            The attempt; its ``expired`` flag turns True if the watchdog shut its sockets down
            (at once when the registry is closed).
        """
        attempt = _Attempt()
        self._current.attempt = attempt
        with self._socks_lock:
            if self._closed:
                attempt.expired = True  # whatever it connects is shut down at once
                return attempt
            self._running[attempt] = deadline
            if self._watchdog is None:
                self._watchdog = threading.Thread(target=self._watch, name=self._watchdog_name, daemon=True)
                self._watchdog.start()
            elif deadline < self._wake_at:
                self._wake.notify()
        return attempt

    def end(self, attempt: _Attempt) -> None:
        """End the calling thread's attempt: the watchdog no longer touches its sockets."""
        with self._socks_lock:
            attempt.done = True
            self._running.pop(attempt, None)
        self._current.attempt = None

    def add(self, sock: socket.socket) -> None:
        """Track ``sock`` (weakly) as serving the calling thread's current attempt.

        A socket added to an attempt that has expired, or to a closed registry, is shut down at once.
        """
        attempt: _Attempt | None = getattr(self._current, "attempt", None)
        with self._socks_lock:
            self._socks[sock] = attempt
            shut = self._closed or (attempt is not None and attempt.expired)
        if shut:
            _shut_down(sock)

    def discard(self, sock: socket.socket) -> None:
        """Stop tracking ``sock``."""
        with self._socks_lock:
            self._socks.pop(sock, None)

    def _watch(self) -> None:
        """The watchdog's loop: at each deadline, shut down the sockets of the attempts past it."""
        while True:
            with self._socks_lock:
                if self._closed:
                    return
                now = time.monotonic()
                due = {attempt for attempt, deadline in self._running.items() if deadline <= now}
                if not due:
                    self._wake_at = min(min(self._running.values(), default=math.inf), now + _IDLE_WAIT_S)
                    self._wake.wait(self._wake_at - now)
                    continue
                for attempt in due:
                    del self._running[attempt]
                    attempt.expired = True
                socks = [sock for sock, owner in self._socks.items() if owner in due]
            for sock in socks:
                _shut_down(sock)

    def abort_all(self) -> None:
        """Shut every socket down so blocked sends and reads fail at once, and stop the watchdog."""
        with self._socks_lock:
            self._closed = True
            socks = list(self._socks)
            self._wake.notify_all()
        for sock in socks:
            _shut_down(sock)

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the watchdog thread to end (after :meth:`abort_all`)."""
        watchdog = self._watchdog
        if watchdog is not None and watchdog is not threading.current_thread():
            watchdog.join(timeout)


def _tracking_pools(registry: ConnectionRegistry) -> dict[str, type[urllib3.connectionpool.HTTPConnectionPool]]:
    """Pool classes whose connections add their sockets to ``registry``: a new socket as soon as
    it is connected (before a TLS handshake), a reused one before each request."""

    class _HTTPConnection(urllib3.connection.HTTPConnection):
        def _new_conn(self) -> socket.socket:
            """Connect a socket and add it to the registry."""
            sock = super()._new_conn()
            registry.add(sock)
            return sock

        def request(self, *args: Any, **kwargs: Any) -> None:
            """Add the socket (a reused connection's) to the registry, then send the request."""
            if self.sock is not None:
                registry.add(self.sock)
            super().request(*args, **kwargs)

    class _HTTPSConnection(urllib3.connection.HTTPSConnection):
        _handshake_sock: socket.socket | None = None

        def _new_conn(self) -> socket.socket:
            """Connect a socket and add a duplicate of it to the registry for the TLS handshake.

            Wrapping the socket for TLS detaches this object from its descriptor, so
            shutting it down would do nothing; the duplicate shares the connection and
            is closed once :meth:`connect` is over.
            """
            sock = super()._new_conn()
            try:
                self._handshake_sock = sock.dup()
            except OSError:  # out of descriptors: fail this connection, leak nothing
                sock.close()
                raise
            registry.add(self._handshake_sock)
            return sock

        def connect(self) -> None:
            """Connect (TLS handshake included), then add the wrapped socket to the registry."""
            try:
                super().connect()
            finally:
                dup, self._handshake_sock = self._handshake_sock, None
                if dup is not None:
                    registry.discard(dup)
                    dup.close()
            if self.sock is not None:
                registry.add(self.sock)

        def request(self, *args: Any, **kwargs: Any) -> None:
            """Add the socket (a reused connection's) to the registry, then send the request."""
            if self.sock is not None:
                registry.add(self.sock)
            super().request(*args, **kwargs)

    class _HTTPPool(urllib3.connectionpool.HTTPConnectionPool):
        ConnectionCls = _HTTPConnection

    class _HTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = _HTTPSConnection

    return {"http": _HTTPPool, "https": _HTTPSPool}


class TrackingAdapter(requests.adapters.HTTPAdapter):
    """An HTTPAdapter whose connections add their sockets to a :class:`ConnectionRegistry`."""

    def __init__(self, registry: ConnectionRegistry, **kwargs: Any) -> None:
        self._registry = registry
        super().__init__(**kwargs)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        """Build the pool manager with connection classes that register their sockets."""
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _tracking_pools(self._registry)
