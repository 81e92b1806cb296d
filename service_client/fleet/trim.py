"""Trimming the streams: at the acknowledged low-water mark, and at a hard cap.

Every ``FLEET_TRIM_INTERVAL_S`` the publisher's trim thread looks at each
partition stream's consumer groups: the low-water mark is the lowest entry
some group still has pending (read, not acknowledged), else the entry after
the last one the slowest group read. Entries below it are acknowledged by
every group and go (``XTRIM MINID``). A stream still longer than
``max_stream_length`` then loses its oldest entries even though a group has
not acknowledged them (a group far behind, or none reading): they are counted
and logged at WARNING, at most one line every 10 s. The shared-state stream
keeps its last ``DEFAULT_FLEET_MAX_STATE_LENGTH`` entries.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from .. import _defaults
from ._redis import RetryWait

if TYPE_CHECKING:
    from .publisher import EventPublisher

__all__ = ["Trimmer", "after", "low_water"]

log = logging.getLogger("service_client.fleet")

#: Shortest time between two WARNING lines about entries trimmed unacknowledged, seconds.
_WARN_EVERY_S = 10.0


def after(entry_id: bytes | str) -> str:
    """The smallest stream id after ``entry_id`` (``"5-0"`` gives ``"5-1"``)."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    ms, _, seq = text.partition("-")
    return f"{ms}-{int(seq or 0) + 1}"


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def low_water(groups: list[dict[str, Any]], smallest_pending: dict[str, bytes | None]) -> str | None:
    """The low-water mark of a stream from its consumer groups: entries below it may go.

    Args:
        groups: ``XINFO GROUPS`` of the stream (``name``, ``pending``, ``last-delivered-id``).
        smallest_pending: Per group name with pending entries, the smallest pending id.

    Returns:
        The lowest id any group still needs, or None when the stream has no group.
    """
    marks: list[str] = []
    for group in groups:
        name = group["name"]
        name = name.decode() if isinstance(name, bytes) else name
        smallest = smallest_pending.get(name)
        if group.get("pending") and smallest:
            marks.append(smallest.decode() if isinstance(smallest, bytes) else smallest)
        else:
            marks.append(after(group.get("last-delivered-id") or b"0-0"))
    return min(marks, key=_id_key) if marks else None


class Trimmer:
    """The trim thread's work for one publisher (see the module docs).

    Attributes:
        lost: Entries trimmed at the cap before every group acknowledged them.
    """

    def __init__(self, publisher: EventPublisher) -> None:
        self._publisher = publisher
        self.lost = 0
        self._unlogged = 0
        self._logged_at = -_WARN_EVERY_S

    def run(self) -> None:
        """Trim every ``FLEET_TRIM_INTERVAL_S`` until the publisher stops."""
        publisher = self._publisher
        stop = publisher._stop
        retry = RetryWait(stop)
        while not stop.wait(_defaults.FLEET_TRIM_INTERVAL_S):
            if not publisher._ready.is_set():
                continue
            try:
                self.trim_once()
            except publisher._errors:
                if not retry.wait():
                    return
                continue
            retry.reset()

    def trim_once(self) -> int:
        """One round over every stream.

        Returns:
            The entries trimmed in this round.

        Raises:
            redis.RedisError, OSError: Redis failed (the round stops; the next one starts over).
        """
        publisher = self._publisher
        keys = publisher._keys
        if keys is None:
            return 0
        redis = publisher._redis
        streams = [keys.stream(part) for part in range(publisher.partitions)]
        pipe = redis.pipeline(transaction=False)
        for stream in streams:
            pipe.xinfo_groups(stream)
        infos = pipe.execute(raise_on_error=False)
        pending_of: list[tuple[int, str]] = []
        pipe = redis.pipeline(transaction=False)
        for index, groups in enumerate(infos):
            if isinstance(groups, list):
                for group in groups:
                    if group.get("pending"):
                        name = group["name"]
                        name = name.decode() if isinstance(name, bytes) else name
                        pending_of.append((index, name))
                        pipe.xpending(streams[index], name)
        summaries = pipe.execute(raise_on_error=False) if pending_of else []
        smallest: list[dict[str, bytes | None]] = [{} for _ in streams]
        for (index, name), summary in zip(pending_of, summaries, strict=True):
            if isinstance(summary, dict):
                smallest[index][name] = summary.get("min")
        pipe = redis.pipeline(transaction=False)
        ops: list[tuple[int, bool]] = []  # per command: its stream, and whether it trims at the cap
        has_groups = []
        for index, groups in enumerate(infos):
            mark = low_water(groups, smallest[index]) if isinstance(groups, list) else None
            has_groups.append(mark is not None)
            if mark is not None:
                pipe.xtrim(streams[index], minid=mark, approximate=False)
                ops.append((index, False))
            pipe.xtrim(streams[index], maxlen=publisher._max_stream, approximate=False)
            ops.append((index, True))
        pipe.xtrim(keys.state, maxlen=_defaults.DEFAULT_FLEET_MAX_STATE_LENGTH, approximate=True)
        pipe.hsetnx(keys.meta, "partitions", publisher.partitions)  # again, should Redis have lost it
        results = pipe.execute(raise_on_error=False)
        trimmed = 0
        lost = 0
        for (index, at_cap), result in zip(ops, results, strict=False):
            if isinstance(result, int):
                trimmed += result
                if at_cap and has_groups[index]:
                    lost += result
        if lost:
            self._note_lost(lost)
        return trimmed

    def _note_lost(self, count: int) -> None:
        self.lost += count
        self._unlogged += count
        now = time.monotonic()
        if now - self._logged_at >= _WARN_EVERY_S:
            self._logged_at = now
            count, self._unlogged = self._unlogged, 0
            log.warning(
                "trimmed %d events no worker group had acknowledged (a partition stream reached its "
                "max_stream_length of %d: workers too slow, or stopped); %d in all",
                count, self._publisher._max_stream, self.lost,
            )
