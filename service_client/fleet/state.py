"""A worker's entries as its event source runs them, and its sends and shared requests.

A worker applies every stream entry with the client's parsers, on one thread,
as the socket's reader does, through the client's event feed
(:meth:`EventFeed.apply <service_client.client.source.EventFeed.apply>`): the
events the parsers dispatch (``message_create`` with its :class:`Message`...)
come back instead of being queued, so that the worker runs them in the entry's
lane, knows when their listeners have returned (then the entry is
acknowledged) and whether one raised. :class:`FleetSends` carries the worker's
messages to the socket's process
(:class:`~service_client.fleet.sends.SendClient`) and makes the requests the
parsers need once per fleet; the client's other socket operations raise, since
a worker holds no socket.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from .sends import reply_nonce

if TYPE_CHECKING:
    from ..rest.route import Route
    from .fetches import SharedFetches
    from .sends import SendClient

__all__ = ["EntryContext", "FleetSends", "current_entry"]

#: Why a worker refuses socket operations.
NO_SOCKET = ("a fleet worker holds no socket: only send_message and Message.reply go to the socket's process; "
             "do other socket operations (presence, typing, voice, kicks and bans) there, or over REST")


class _Local(threading.local):
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


def apply_captured(apply: Callable[..., list[Any]], event: str, args: list[Any], event_id: str = "") -> list[Any]:
    """``apply(event, *args)`` (the feed applying one entry, event ``event_id``: the requests it
    makes are shared), and what it returns."""
    _local.event_id = event_id
    try:
        return apply(event, *args)
    finally:
        _local.event_id = ""


def run_in(entry: EntryContext | None, fn: Callable[[], None]) -> None:
    """Run ``fn`` with ``entry`` as this thread's current entry."""
    previous = _local.entry
    _local.entry = entry
    try:
        fn()
    finally:
        _local.entry = previous


class FleetSends:
    """A worker's sends and shared requests: the hooks of its client's connection state.

    Set as ``state.send_hook`` and ``state.fetch_hook`` while the worker runs.

    Args:
        sender: The command stream's client.
        fetches: The requests shared-state events need, made once per fleet.
    """

    def __init__(self, sender: SendClient, fetches: SharedFetches) -> None:
        self.sender = sender
        self.fetches = fetches

    def fetch(self, route: Route, params: Mapping[str, Any] | None,
              request: Callable[[], Future[Any]]) -> Future[Any]:
        """A GET the parsers make while applying an event (a member refetch) is made once per
        fleet (see :mod:`service_client.fleet.fetches`); any other, as a client's.

        Raises:
            ServiceError: The session is closed (the worker stopped).
        """
        event_id = _local.event_id
        if not event_id:
            return request()
        return self.fetches.submit(event_id, route, params, request)

    def send(self, payload: dict[str, Any]) -> Mapping[str, Any]:
        """Send a ``message:send`` payload through the socket's process; the message's record.

        While an event is handled on this thread, the send carries a nonce derived
        from the worker's group, the event and the send's index in that handling, and the worker's
        lease on the event's partition: a redelivered event's reply is not posted
        twice, and a worker that lost the partition cannot reply.

        Raises:
            ServiceError: The socket's process refused or failed it (its own error), or
                Redis failed.
            TimeoutError: No answer within 10 s.
        """
        sender = self.sender
        entry = _local.entry
        nonce: str | None = None
        lease: tuple[str, str] | None = None
        if entry is not None:
            nonce = reply_nonce(sender.group, entry.event_id, entry.replies)
            entry.replies += 1
            lease = entry.lease
        args = {"channel": payload["channelPublicId"], "content": payload["content"], "embeds": payload["embeds"],
                "replyTo": payload.get("replyToId")}
        return sender.send(args, nonce=nonce, lease=lease)
