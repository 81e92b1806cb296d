"""The publisher's fence: a socket process publishes only while it holds the socket lease.

With standby socket processes (:class:`~service_client.fleet.leader.StandbySocket`)
one process at a time holds the namespace's socket lease in Redis, a value
``<instance>:<fencing token>`` with a TTL. Its publisher then adds each batch
with :data:`FENCED_PUBLISH`, which checks the lease in the same atomic step as
it adds the entries: a process that lost the lease (paused past its TTL, cut
off from Redis) has every later batch refused, so two sockets never publish at
once, even for an instant.

The same step records, per channel, the newest message published
(:func:`channel_marks`): after a takeover, the new holder catches up each
recently active channel from exactly there (see :mod:`service_client.client.catchup`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..models._base import parse_time
from ._redis import loads
from .scripts import PUBLISH

__all__ = ["FENCED_PUBLISH", "PublishFence", "channel_marks", "mark_of", "parse_mark"]

log = logging.getLogger("service_client.fleet")

#: :data:`~service_client.fleet.scripts.PUBLISH` behind a check of the socket lease. Its KEYS and
#: ARGV are PUBLISH's, then two more keys: the socket lease and the channel marks hash; then more
#: ARGV: pairs (channel id, mark), their count, and the lease value expected last. Returns
#: ``{-1, 0, 0}`` (nothing written) when the lease is not the caller's; else PUBLISH's answer, each
#: channel's mark raised to the pair's when greater (marks compare as strings, see :func:`mark_of`).
FENCED_PUBLISH = """
local nk, na = #KEYS, #ARGV
if redis.call('GET', KEYS[nk - 1]) ~= ARGV[na] then return {-1, 0, 0} end
local marks = tonumber(ARGV[na - 1])
local first = na - 1 - 2 * marks
for m = 0, marks - 1 do
  local channel, mark = ARGV[first + 2 * m], ARGV[first + 1 + 2 * m]
  local current = redis.call('HGET', KEYS[nk], channel)
  if not current or current < mark then redis.call('HSET', KEYS[nk], channel, mark) end
end
""" + PUBLISH

_MESSAGE_NEW = b'["message:new","'


def mark_of(created_ms: int, message_id: str) -> str:
    """A channel mark: a message's creation time (epoch ms, 15 digits) and its id.

    Marks of one channel compare as strings in the order of their messages' times.
    """
    return f"{max(0, created_ms):015d}:{message_id}"


def parse_mark(mark: bytes | str) -> tuple[int, str] | None:
    """``(created epoch ms, message id)`` of a mark, or None when it is not one."""
    text = mark.decode("utf-8", "replace") if isinstance(mark, bytes) else mark
    ms, sep, message_id = text.partition(":")
    if not sep or not ms.isdigit() or not message_id:
        return None
    return int(ms), message_id


def _record_mark(data: bytes) -> tuple[str, str] | None:
    """``(channel id, mark)`` of a published ``message:new`` entry's data, or None."""
    try:
        event = loads(data)
        record = event[2][0]
        channel = record["channelPublicId"]
        message_id = record["publicId"]
    except (ValueError, TypeError, LookupError):
        return None
    if not isinstance(channel, str) or not isinstance(message_id, str) or not channel or not message_id:
        return None
    created = parse_time(record.get("createdAt"))
    return channel, mark_of(0 if created is None else int(created.timestamp() * 1000), message_id)


def channel_marks(items: list[tuple[int, bytes, bool, bool]]) -> dict[str, str]:
    """The mark of each channel's newest ``message:new`` among a batch's items.

    Only the last message of each ordering key is decoded (the key is read from the
    entry's first bytes), so a burst in one channel costs one decode per batch.

    Args:
        items: The publisher's buffered items ``(partition, data, state event, droppable)``.

    Returns:
        Channel id -> mark (see :func:`mark_of`).
    """
    out: dict[str, str] = {}
    keys_done: set[bytes] = set()
    start = len(_MESSAGE_NEW)
    for _part, data, _state, _drop in reversed(items):
        if not data.startswith(_MESSAGE_NEW):
            continue
        end = data.find(b'"', start)
        key = data[start:end]
        if b"\\" not in key:  # an escaped key: decoded whole below
            if key in keys_done:
                continue
            keys_done.add(key)
        found = _record_mark(data)
        if found is not None and found[0] not in out:
            out[found[0]] = found[1]
    return out


class PublishFence:
    """What a publisher needs to publish under a socket lease (see the module).

    Thread-safe: the publisher's batch thread calls :meth:`extend` and :meth:`refused`.

    Args:
        lease_key: The socket lease's Redis key.
        marks_key: The hash of channel marks.
        value: The lease value this process holds (``<instance>:<token>``).
        on_refused: Called once, on the batch thread, when a batch is refused (the lease is
            another's now); it must not block.
    """

    #: The script the publisher runs instead of PUBLISH.
    script = FENCED_PUBLISH

    def __init__(self, lease_key: str, marks_key: str, value: str, on_refused: Callable[[], None]) -> None:
        self.lease_key = lease_key
        self.marks_key = marks_key
        self.value = value
        self._on_refused = on_refused
        self.refusals = 0

    def extend(self, batch: tuple[list[str], list[Any], int],
               items: list[tuple[int, bytes, bool, bool]]) -> tuple[list[str], list[Any], int]:
        """The keys and arguments of one PUBLISH call, extended for :data:`FENCED_PUBLISH`."""
        keys, args, count = batch
        marks = channel_marks(items)
        extra: list[Any] = []
        for channel, mark in marks.items():
            extra += [channel, mark]
        return [*keys, self.lease_key, self.marks_key], [*args, *extra, len(marks), self.value], count

    def refused(self, count: int) -> None:
        """A batch of ``count`` events was refused: the lease is another process's now."""
        self.refusals += 1
        log.error("the socket lease is no longer this process's: %d events were refused (not published; "
                  "the socket process holding the lease now catches them up); stepping down", count)
        if self.refusals == 1:
            self._on_refused()
