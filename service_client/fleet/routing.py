"""Where each event goes: its ordering key, its partition, and who owns a partition (pure).

Nothing here does I/O; the publisher and the workers share these functions, so
both sides agree on every partition and every lane.

- :func:`partition_of`: a stable hash (CRC-32) of an ordering key, modulo the
  number of partitions. Never Python's ``hash()``, which differs between
  processes.
- :func:`rendezvous_owner`: the live worker a partition belongs to (highest
  random weight hashing): every worker computes the same answer from the same
  member list, and when a worker joins or leaves only the partitions it gains
  or loses move.
- :class:`EventRouter`: the ordering key of a socket event (its channel, else
  its server, else its user). Where the key is, whether the event changes
  shared state (it then also reaches every worker's caches), whether it may be
  dropped first when the publisher's buffer is full (typing, presence,
  activity), or why it is not published at all, is declared beside the event
  in the catalog (:class:`~service_client.endpoints.FleetRoute`); nothing here
  lists events by hand.
- :class:`FleetKeys`: the Redis key of everything the fleet stores.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from .. import endpoints

__all__ = [
    "DROPPABLE_EVENTS",
    "PUBLISHED_EVENTS",
    "STATE_EVENTS",
    "EventRouter",
    "FleetKeys",
    "check_name",
    "partition_of",
    "rendezvous_owner",
]

#: Every socket event the service sends, with its fleet routing, as the catalog declares it
#: (``SocketEvent.fleet``, see :class:`~service_client.endpoints.FleetRoute`).
_ROUTES: dict[str, endpoints.FleetRoute] = {
    spec.event: spec.fleet for spec in endpoints.SOCKET_EVENTS
    if spec.direction == endpoints.SERVICE_TO_CLIENT and spec.fleet is not None
}
#: Socket events that change state every worker caches (servers, channels, roles, members,
#: users, presence): published to their partition and to the shared-state stream.
STATE_EVENTS = frozenset(event for event, route in _ROUTES.items() if route.published and route.state)
#: Socket events dropped first when the publisher's buffer is full.
DROPPABLE_EVENTS = frozenset(event for event, route in _ROUTES.items() if route.published and route.droppable)
#: Every socket event a publisher publishes (the catalog says why each other one is not).
PUBLISHED_EVENTS = frozenset(event for event, route in _ROUTES.items() if route.published)
#: Per published event, where its ordering key is (a :data:`~service_client.endpoints.FleetKey`).
_KEY_OF: dict[str, str] = {event: route.key for event, route in _ROUTES.items() if route.key is not None}

#: What a namespace, a group or a worker name may hold (they go into Redis keys).
_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
#: Message ids whose channel the router remembers (two generations: at least this many).
_REMEMBERED = 10_000


def check_name(what: str, value: object) -> str:
    """``value`` when it is a valid namespace, group or worker name.

    Args:
        what: The argument's name, for the error.
        value: The value given.

    Returns:
        ``value``.

    Raises:
        TypeError: ``value`` is not a str.
        ValueError: It is empty, longer than 64 characters, or holds a character other
            than ASCII letters, digits, ``_``, ``.`` and ``-``.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not _NAME.fullmatch(value):
        raise ValueError(f"{what} must be 1 to 64 ASCII letters, digits, '_', '.' or '-', got {value!r}")
    return value


def partition_of(key: str, partitions: int) -> int:
    """The partition of an ordering key: CRC-32 of its UTF-8 bytes modulo ``partitions``.

    Stable across processes, machines and Python versions.

    Args:
        key: The ordering key (a channel id, else a server id...).
        partitions: The number of partitions (at least 1).

    Returns:
        An int in ``range(partitions)``.
    """
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % partitions


def _weight(member: str, partition: int) -> bytes:
    return hashlib.blake2b(f"{member}\0{partition}".encode(), digest_size=8).digest()


def rendezvous_owner(partition: int, members: Iterable[str]) -> str | None:
    """The member a partition belongs to: the highest random weight of ``(member, partition)``.

    Args:
        partition: The partition number.
        members: The live members' names (any order; duplicates ignored).

    Returns:
        The owning member's name, or None when ``members`` is empty.
    """
    best: str | None = None
    best_weight = b""
    for member in members:
        weight = _weight(member, partition)
        if best is None or weight > best_weight or (weight == best_weight and member > best):
            best, best_weight = member, weight
    return best


def _id(data: Any, *keys: str) -> str | None:
    if not isinstance(data, dict):
        return None
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


class EventRouter:
    """The ordering key of each socket event, as the publisher sees them in arrival order.

    A message's events (edits, deletions, reactions, pins) take its channel: from
    the payload, else from the ``message:new`` that announced the message (the
    last 10,000 to 20,000 messages routed here are remembered, and so are deleted
    ones; ``channel_of`` answers for the others), else its server, else the
    message id. Server, member and role events take the server; presence,
    activity and user updates the user; typing and voice events the channel.
    Which of these an event takes is declared beside it in the catalog
    (:attr:`FleetRoute.key <service_client.endpoints.FleetRoute>`). Not thread-safe: one thread (the socket reader) routes.

    Args:
        channel_of: Asked for the channel of a message id that the router does not remember
            (returns None when it does not know either): the client's own memory of recent
            messages (``ConnectionState.message_channel``), so that a publisher need not
            remember again the messages its client keeps. None: the router's memory only.
    """

    def __init__(self, channel_of: Callable[[str], str | None] | None = None) -> None:
        self._channels: dict[str, str] = {}
        self._channels_old: dict[str, str] = {}
        self._lookup = channel_of

    def remember(self, message_id: str, channel_id: str) -> None:
        """Remember that message ``message_id`` is in channel ``channel_id``, so that its later
        events (an edit, a reaction) go to the channel's partition. Single-threaded: the
        socket's reader thread only (the publisher's tap)."""
        channels = self._channels
        channels[message_id] = channel_id
        if len(channels) >= _REMEMBERED:
            self._channels_old = channels
            self._channels = {}

    def _channel_of(self, message_id: str | None) -> str | None:
        if message_id is None:
            return None
        channel = self._channels.get(message_id)
        if channel is None:
            channel = self._channels_old.get(message_id)
            if channel is None and self._lookup is not None:
                channel = self._lookup(message_id)
        return channel

    def key(self, event: str, args: list[Any]) -> str | None:
        """The ordering key of a socket event, or None when it names nothing to order by.

        Args:
            event: The socket event name (``"message:new"``...).
            args: Its arguments as received.

        Returns:
            A channel, server, user or message id.
        """
        data = args[0] if args else None
        if event == endpoints.ON_MESSAGE_NEW:
            if type(data) is dict:  # the usual record, inline (once per message of a firehose)
                channel = data.get("channelPublicId")
                message = data.get("publicId")
                if type(channel) is str and channel and type(message) is str and message:
                    channels = self._channels
                    channels[message] = channel
                    if len(channels) >= _REMEMBERED:
                        self._channels_old = channels
                        self._channels = {}
                    return channel
            channel = _id(data, "channelPublicId", "channelId")
            message = _id(data, "publicId", "id")
            if channel is not None and message is not None:
                self.remember(message, channel)
            return channel or _id(data, "serverPublicId", "serverId") or message
        kind = _KEY_OF.get(event)
        if kind == "message":
            message = _id(data, "messagePublicId", "messageId", "publicId")
            channel = _id(data, "channelPublicId", "channelId") or self._channel_of(message)
            if event == endpoints.ON_MESSAGE_DELETED and channel is not None and message is not None:
                # The client forgets a deleted message (channel_of no longer knows it): its later
                # events (a reaction racing the deletion, a second deletion) still go where it went.
                self.remember(message, channel)
            return channel or _id(data, "serverPublicId", "serverId") or message
        if kind == "user":
            return _id(data, "userPublicId", "userId", "publicId")
        if kind == "server":
            return _id(data, "serverPublicId", "serverId", "publicId")
        if kind == "channel" and isinstance(data, str) and data:
            return data  # the bare channel id form (typing)
        return (_id(data, "channelPublicId", "channelId") or _id(data, "serverPublicId", "serverId")
                or _id(data, "publicId", "userPublicId", "userId"))


class FleetKeys:
    """The Redis keys of one namespace (one bot's events) and one consumer group.

    Every key starts with ``service_client:fleet:<namespace>:``:

    ``meta``                      hash: ``partitions``, set once by the first publisher
    ``p:<n>``                     stream: partition ``n``'s events, entry id ``<seq>-0``
    ``state``                     stream: the shared-state events, for every worker's caches
    ``commands``                  stream: the workers' sends, run by the socket's process
    ``nonce:<nonce>``             a reply claimed once (then its result), with a TTL
    ``gateway:<process>``         a socket process running sends is alive (a 3 s TTL, renewed)
    ``reply:<worker>``            list: the answers to one worker's sends, with a TTL
    ``members:<group>``           sorted set: the group's live workers, scored by expiry
    ``lease:<group>:<n>``         a partition's lease ``<worker>/<instance>.<hold>:<token>``, with a TTL
    ``fence:<group>:<n>``         the partition's last fencing token (a counter)
    ``dead:<group>``              stream: the group's dead letters
    ``seq:<group>``               hash: per partition, the last sequence number the group read
    ``deaths:<group>:<n>``        hash: per redelivered entry of partition ``n``, its runs begun and not ended
    ``rebalance:<group>``         stream: a worker joined or left (the others look again at once)
    ``wake:<worker>``             stream: wakes one worker's reader (a partition newly owned), with a TTL

    Args:
        namespace: The namespace (see :func:`check_name`).
        group: The consumer group, or None for the publisher's keys only.
    """

    def __init__(self, namespace: str, group: str | None = None) -> None:
        self.namespace = namespace
        self.group = group
        self.prefix = f"service_client:fleet:{namespace}:"
        self.meta = self.prefix + "meta"
        self.state = self.prefix + "state"
        self.commands = self.prefix + "commands"
        self.members = f"{self.prefix}members:{group}"
        self.dead = f"{self.prefix}dead:{group}"
        self.rebalance = f"{self.prefix}rebalance:{group}"
        self.seqs = f"{self.prefix}seq:{group}"

    def stream(self, partition: int) -> str:
        """The stream of partition ``partition``."""
        return f"{self.prefix}p:{partition}"

    def lease(self, partition: int) -> str:
        """The lease of partition ``partition`` for this group."""
        return f"{self.prefix}lease:{self.group}:{partition}"

    def fence(self, partition: int) -> str:
        """The fencing token counter of partition ``partition`` for this group."""
        return f"{self.prefix}fence:{self.group}:{partition}"

    def deaths(self, partition: int) -> str:
        """The runs of partition ``partition``'s redelivered entries that began and did not end."""
        return f"{self.prefix}deaths:{self.group}:{partition}"

    def nonce(self, nonce: str) -> str:
        """The claim of reply nonce ``nonce``."""
        return f"{self.prefix}nonce:{nonce}"

    def wake(self, worker: str) -> str:
        """The stream that wakes worker instance ``worker``'s reader."""
        return f"{self.prefix}wake:{worker}"

    def reply(self, worker: str) -> str:
        """The list of answers to worker instance ``worker``'s sends."""
        return f"{self.prefix}reply:{worker}"
