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
REST calls work as usual. A source that carries the bot's messages too sets
``feed.state.send_hook`` (see :class:`~service_client.state.ConnectionState`).

A source that must know when an event's listeners have run, and whether one
raised (to acknowledge it, or deliver it again), applies it with
:meth:`EventFeed.apply` instead of :meth:`EventFeed.feed`, and runs its
listeners itself with :meth:`EventFeed.prepare` and :meth:`EventFeed.run`, in
a lane of the pool (:meth:`EventFeed.submit`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..events.emitter import Captured, CapturedSlot

if TYPE_CHECKING:
    from ..events.workers import OrderedWorkerPool
    from ..models.user import User
    from ..state.connection import ConnectionState

__all__ = ["EventFeed", "EventSource", "PreparedEvent"]

#: An event ready to run: the function running its listeners, and its arguments (:meth:`EventFeed.run`).
PreparedEvent = tuple[Callable[[list[tuple[Any, ...]]], None], tuple[Any, ...]]


def _run_all(prepared: list[PreparedEvent]) -> None:
    for runner, args in prepared:
        runner([args])


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

    __slots__ = ("_pool", "_redact", "_state")

    def __init__(self, state: ConnectionState, pool: OrderedWorkerPool,
                 redact: Callable[[str], str] | None = None) -> None:
        """Built by the client (a source never builds one)."""
        self._state = state
        self._pool = pool
        self._redact = redact

    def redact(self, text: str) -> str:
        """``text`` with the bot token (as is, or escaped as a server may quote it) replaced by
        ``[REDACTED]``: for what a source writes elsewhere (a traceback in a dead-letter store)."""
        return text if self._redact is None else self._redact(text)

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

    def apply(self, event: str, *args: Any) -> list[Captured]:
        """Apply one socket event's cache effect now, and return its events instead of queueing them.

        As :meth:`feed`, except that the events the parsers dispatch are handed back,
        in order, for :meth:`prepare`: ``(event, args)`` pairs, and a
        :class:`~service_client.events.emitter.CapturedSlot` for an event whose
        arguments need a request first (a member to refetch).

        Args:
            event: The socket event's wire name.
            *args: Its arguments as the service sends them.

        Returns:
            The client events it dispatched (empty: none, or an unknown event).
        """
        state = self._state
        return state.events.capture(state.parsers.handle, event, list(args))

    def prepare(self, captured: list[Captured], *, timeout: float) -> list[PreparedEvent]:
        """The listeners to run for events :meth:`apply` returned: those registered now.

        The ``wait_for`` waiters registered now are completed with the events. A slot
        whose event is not known within ``timeout`` seconds (its request hangs) or was
        cancelled is left out.

        Args:
            captured: What :meth:`apply` returned.
            timeout: Longest wait for each slot's event, seconds.

        Returns:
            The events with listeners, in order, for :meth:`run` (which may run them again).
        """
        events = self._state.events
        runs: list[PreparedEvent] = []
        for item in captured:
            if isinstance(item, CapturedSlot):
                try:
                    resolved = item.future.result(timeout)
                except (_FutureTimeout, Exception):  # noqa: BLE001 - a request that never ended: not emitted
                    resolved = None
                if resolved is None:
                    continue
                item = resolved
            event, args = item
            runner = events.prepared(event, args)
            if runner is not None:
                runs.append((runner, args))
        return runs

    def run(self, prepared: list[PreparedEvent]) -> list[Exception]:
        """Run the listeners of prepared events on this thread, in order; what they raised.

        Each exception is also reported as any listener's is (``error`` event, log).

        Returns:
            The exceptions the listeners raised, in order (empty: none).
        """
        return self._state.events.collect_failures(_run_all, prepared)

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
