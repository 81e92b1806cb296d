"""A worker's emitter and connection state: the client's own, with events captured per entry.

A worker applies every stream entry with the client's parsers, on one thread,
as the socket's reader does; :class:`FleetEmitter` then captures the events
the parsers dispatch (``message_create`` with its :class:`Message`...)
instead of queueing them, so that the worker runs them in the entry's lane,
knows when their listeners have returned (then the entry is acknowledged) and
whether one raised. :class:`FleetState` sends messages through the socket's
process (:class:`~service_client.fleet.sends.SendClient`); every other socket
operation raises, since a worker holds no socket.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from .. import _defaults
from ..errors import ServiceAuthError
from ..events.emitter import EventEmitter, EventSlot
from ..models.message import Message
from ..models.outgoing import build_message_payload
from ..state.connection import ConnectionState
from .sends import reply_nonce

if TYPE_CHECKING:
    from ..gateway.connection import GatewayConnection
    from ..models.embed import EmbedBuilder
    from ..rest.route import Route
    from .fetches import SharedFetches
    from .sends import SendClient

__all__ = ["CapturedSlot", "EntryContext", "FleetEmitter", "FleetState", "current_entry"]


class _Local(threading.local):
    #: The events the parsers dispatch on this thread go here (while a worker applies an entry).
    capture: list[tuple[str, tuple[Any, ...]] | CapturedSlot] | None = None
    #: The entry whose listeners run on this thread (its replies' nonces, its failures).
    entry: EntryContext | None = None
    #: The event id of the entry the parsers apply on this thread (its requests are shared).
    event_id: str = ""


_local = _Local()


def current_entry() -> EntryContext | None:
    """The stream entry whose listeners run on this thread, or None."""
    return _local.entry


class EntryContext:
    """One stream entry as a worker handles it: where it came from, its replies, its failures.

    Attributes:
        partition: The partition number.
        entry_id: The stream entry id (``<seq>-0``).
        event_id: The publisher's event id.
        event: The socket event name.
        data: The entry's raw data (JSON bytes).
        lease: ``(lease key, lease value)`` the worker held when it read the entry.
        owner: The worker's hold on the partition (checked before each run).
        deliveries: Deliveries so far (Redis's count, plus retries here).
        replies: Sends made in the current run (the next reply's index).
        failures: Exceptions the listeners raised in the current run.
        lane: The lane it runs in (its channel id, else its server's...).
        redelivered: It was pending at a previous owner (read from the partition's history with
            a delivery count of 2 or more): its runs are counted in Redis, so that only an entry
            whose worker died while running it counts that death.
    """

    __slots__ = ("data", "deliveries", "entry_id", "event", "event_id", "failures", "lane", "lease", "owner",
                 "partition", "redelivered", "replies")

    def __init__(self, owner: Any, partition: int, entry_id: bytes, event_id: str, event: str, data: bytes,
                 lease: tuple[str, str], deliveries: int) -> None:
        self.owner = owner
        self.partition = partition
        self.entry_id = entry_id
        self.event_id = event_id
        self.event = event
        self.data = data
        self.lease = lease
        self.deliveries = deliveries
        self.replies = 0
        self.failures: list[BaseException] = []
        self.lane = ""
        self.redelivered = False


class CapturedSlot(EventSlot):
    """A reserved event place captured while applying an entry: its event, once known, in a Future."""

    __slots__ = ("future",)

    def __init__(self) -> None:  # noqa: D107 - no emitter: nothing is queued
        self.future: Future[tuple[str, tuple[Any, ...]] | None] = Future()

    def emit(self, event: str, *args: Any) -> None:
        """The event is known: its listeners run in the entry's lane."""
        if not self.future.done():
            self.future.set_result((event, args))

    def cancel(self) -> None:
        """Nothing is emitted for this place."""
        if not self.future.done():
            self.future.set_result(None)


class FleetEmitter(EventEmitter):
    """The client's emitter, which captures the events of an entry being applied (see the module).

    Thread-safe, like :class:`EventEmitter`.
    """

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        """Capture the event when this thread applies an entry; else as :meth:`EventEmitter.emit`."""
        capture = _local.capture
        if capture is not None:
            capture.append((event, args))
            return
        super().emit(event, *args, key=key)

    def reserve(self, *, key: Any = None) -> EventSlot:
        """Capture the place when this thread applies an entry; else as :meth:`EventEmitter.reserve`."""
        capture = _local.capture
        if capture is not None:
            slot = CapturedSlot()
            capture.append(slot)
            return slot
        return super().reserve(key=key)

    def prepared(self, event: str, args: tuple[Any, ...]) -> Callable[[list[tuple[Any, ...]]], None] | None:
        """The function running ``event``'s listeners registered now (``wait_for`` waiters are
        completed), or None when it has none."""
        return self._prepare(event, args)

    def _listener_failed(self, event: str, fn: Callable[..., Any], exc: Exception) -> None:
        entry = _local.entry
        if entry is not None:
            entry.failures.append(exc)
        super()._listener_failed(event, fn, exc)


def apply_captured(parse: Callable[[], None], event_id: str = "") -> list[tuple[str, tuple[Any, ...]] | CapturedSlot]:
    """Run ``parse`` (the parsers on one entry, event ``event_id``) and return the events it
    dispatched, in order."""
    captured: list[tuple[str, tuple[Any, ...]] | CapturedSlot] = []
    _local.capture = captured
    _local.event_id = event_id
    try:
        parse()
    finally:
        _local.capture = None
        _local.event_id = ""
    return captured


def run_in(entry: EntryContext | None, fn: Callable[[], None]) -> None:
    """Run ``fn`` with ``entry`` as this thread's current entry."""
    previous = _local.entry
    _local.entry = entry
    try:
        fn()
    finally:
        _local.entry = previous


class FleetState(ConnectionState):
    """A worker's connection state: the client's caches and parsers; sends go to the socket's process.

    Attributes:
        sender: The command stream's client, set while the worker runs.
        fetches: The requests shared-state events need, made once per fleet (set while the
            worker runs).
    """

    sender: SendClient | None = None
    fetches: SharedFetches | None = None

    def submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        timeout_ms: int = _defaults.DEFAULT_TIMEOUT_MS,
        max_retries: int = _defaults.DEFAULT_MAX_RETRIES,
    ) -> Future[Any]:
        """Queue one REST request, as a client's; a GET the parsers make while applying an event
        (a member refetch) is made once per fleet (see :mod:`service_client.fleet.fetches`).

        Raises:
            ServiceError: The session is closed (the worker stopped).
        """
        request = functools.partial(super().submit, route, params=params, json=json, timeout_ms=timeout_ms,
                                    max_retries=max_retries)
        fetches = self.fetches
        event_id = _local.event_id
        if fetches is None or not event_id or route.method != "GET" or json is not None:
            return request()
        return fetches.submit(event_id, route, params, request)

    def require_gateway(self) -> GatewayConnection:
        """A worker holds no socket.

        Raises:
            ServiceAuthError: Always: only ``send_message`` (and ``reply``) go to the socket's process.
        """
        raise ServiceAuthError(
            "a fleet worker holds no socket: only send_message and Message.reply go to the socket's process; "
            "do other socket operations (presence, typing, voice, kicks and bans) there, or over REST")

    def send_message(
        self,
        channel_id: str,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """Send through the socket's process; same arguments, result, 10 s bound and errors as a client's.

        While an event is handled on this thread, the send carries a nonce derived
        from the worker's group, the event and the send's index in that handling, and the worker's
        lease on the event's partition: a redelivered event's reply is not posted
        twice, and a worker that lost the partition cannot reply.

        Raises:
            ValueError: Nothing to send (no content, or only whitespace, and no embed) or over
                the message limits; nothing is sent.
            ServiceAuthError: The worker is not running.
            ServiceError: The socket's process refused or failed it (its own error), or
                Redis failed.
            TimeoutError: No answer within 10 s.
        """
        if not isinstance(channel_id, str):
            raise TypeError(f"channel_id must be a str, got {type(channel_id).__name__}")
        if not channel_id:
            raise ValueError("channel_id must be a non-empty str")
        payload = build_message_payload(channel_id, options, content=content, embeds=embeds,
                                        reply_to_id=reply_to_id, nonce="fleet")
        sender = self.sender
        if sender is None or self.closed:
            raise ServiceAuthError("the fleet worker is not running (start() it first)")
        self._check_send(channel_id)
        entry = _local.entry
        nonce: str | None = None
        lease: tuple[str, str] | None = None
        if entry is not None:
            nonce = reply_nonce(sender.group, entry.event_id, entry.replies)
            entry.replies += 1
            lease = entry.lease
        args = {"channel": channel_id, "content": payload["content"], "embeds": payload["embeds"],
                "replyTo": payload.get("replyToId")}
        record = sender.send(args, nonce=nonce, lease=lease)
        return Message(self, record)
