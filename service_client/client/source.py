"""The event-source seam: a client fed the service's events by something other than its socket.

A :class:`~service_client.Client` built with ``event_source=`` opens no socket.
Its :meth:`~service_client.Client.login` authenticates over REST (``GET
/auth/me``), hands the source an :class:`EventFeed`, fills the server cache, and
asks the source to start; :meth:`~service_client.Client.destroy` closes it. The
source then calls :meth:`EventFeed.feed` with each socket event (its wire name and
arguments, as the service sends them): the caches change, listeners run on the
worker pool in each channel's order, and ``wait_for`` and commands work as they do
for events read from the socket. The events fleet's workers are built this way
(their source is a Redis consumer group); so are tests that replay recorded frames::

    class Recorded:
        def __init__(self, frames):
            self.frames = frames  # [("message:new", [record]), ...]

        def open(self, feed, deadline):
            self.feed = feed

        def start(self):
            for event, args in self.frames:
                self.feed.feed(event, *args)

        def close(self):
            pass

    client = Client(base_url=..., socket_url=..., event_source=Recorded(frames))
    client.login(token)

Socket operations (presence, typing, voice, ``send_message`` over the socket) raise
:class:`~service_client.ServiceAuthError` on such a client, since it holds no socket;
REST calls work as usual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..events.workers import OrderedWorkerPool
    from ..models.user import User
    from ..state.connection import ConnectionState

__all__ = ["EventFeed", "EventSource"]


@runtime_checkable
class EventSource(Protocol):
    """Where a client built with ``event_source=`` gets the service's events instead of its socket.

    The client calls the three methods in this order, each once at most, and
    never while holding a lock; an exception raised by :meth:`open` or
    :meth:`start` fails the login (and the client is destroyed, which calls
    :meth:`close`).
    """

    def open(self, feed: EventFeed, deadline: float | None) -> None:
        """During ``login()``, once the bot's user is known (``feed.user``) and before the
        server cache is filled: connect, and remember ``feed``.

        Args:
            feed: Where the events go.
            deadline: ``time.monotonic()`` by which the login must be done, or None for the
                source's own bounds.
        """

    def start(self) -> None:
        """During ``login()``, once the caches are filled, just before ``ready``: start feeding."""

    def close(self) -> None:
        """During ``destroy()`` (also after a failed login, maybe without :meth:`open`): stop
        feeding and release what the source holds. Must return within a few seconds."""


class EventFeed:
    """The way into a client for the service's events, given to its :class:`EventSource`.

    Thread-safe, except that :meth:`feed` is called by one thread at a time (events
    are applied in the order they are fed, as the socket reader applies them).
    """

    __slots__ = ("_pool", "_state")

    def __init__(self, state: ConnectionState, pool: OrderedWorkerPool) -> None:
        """Built by the client (a source never builds one)."""
        self._state = state
        self._pool = pool

    @property
    def state(self) -> ConnectionState:
        """The client's connection state: its caches, parsers, REST session and listener registry."""
        return self._state

    @property
    def user(self) -> User | None:
        """The bot's own user (known from :meth:`EventSource.open` on)."""
        return self._state.user

    def feed(self, event: str, *args: Any) -> None:
        """Apply one socket event as if the socket had read it.

        Its cache effect is applied now, on this thread; its listeners are queued
        on the client's worker pool, after the earlier events of its channel (else
        server). An event name the client does not know is ignored (logged at DEBUG),
        as is every event once the client is destroyed. Never raises for a bad
        payload (the parsers log it).

        Args:
            event: The socket event's wire name (``"message:new"``; see
                :data:`service_client.endpoints.SOCKET_EVENTS`).
            *args: Its arguments as the service sends them (usually one record, a dict).
        """
        self._state.parsers.handle(event, list(args))

    def submit(self, fn: Callable[[], None], *, key: str | None = None) -> bool:
        """Run ``fn`` on the client's worker pool, after the earlier tasks and events of ``key``.

        Args:
            fn: What to run (an exception it raises is logged).
            key: The lane (a channel id...), or None for no order.

        Returns:
            False when the pool is shut down or full (``max_queued_events``): ``fn`` does not run.
        """
        return self._pool.submit(fn, key=key)

    def on_worker_thread(self) -> bool:
        """True when the calling thread is one of the client's listener threads."""
        return threading.current_thread() in self._pool.threads

    def __repr__(self) -> str:
        return f"<EventFeed of {self._state!r}>"
