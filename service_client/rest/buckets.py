"""Rate-limit bucket table (spec: Limits, Rate-limit bucket; protocol 4.2 and 4.3).

After a 429 the session records, per bucket key, the moment until which the
bucket is blocked. The table sits behind :class:`BucketStore` so that a store
shared between processes can be plugged in later; :class:`MemoryBucketStore`
is the default.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["BucketStore", "MemoryBucketStore"]

#: Entries kept before expired ones are swept on ``set``.
_SWEEP_AT = 1024


@runtime_checkable
class BucketStore(Protocol):
    """Blocked-until times per bucket key.

    Times are :func:`time.monotonic` seconds of the process using the store.
    Implementations must be thread-safe; ``get`` and ``set`` are called from
    the REST session's threads, never while it holds a lock.
    """

    def get(self, key: str) -> float | None:
        """The time until which ``key`` is blocked.

        Args:
            key: A bucket key such as ``"GET:servers/S1"``.

        Returns:
            The blocked-until time (monotonic seconds), or None when the bucket
            is not blocked. A time in the past may be returned; callers compare.
        """
        ...

    def set(self, key: str, until: float) -> None:
        """Block ``key`` until ``until`` (monotonic seconds).

        Args:
            key: A bucket key.
            until: The blocked-until time, replacing any earlier value.
        """
        ...


class MemoryBucketStore:
    """The default in-process :class:`BucketStore`: a dict behind a lock.

    Thread-safe. Expired entries are dropped when read, and swept when the
    table grows, so it stays small.
    """

    __slots__ = ("_buckets_lock", "_clock", "_until")

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        """Create an empty table.

        Args:
            clock: Source of the current monotonic time, seconds.
        """
        self._clock = clock
        self._buckets_lock = threading.Lock()
        self._until: dict[str, float] = {}

    def get(self, key: str) -> float | None:
        """See :meth:`BucketStore.get`; an expired entry is dropped and gives None."""
        with self._buckets_lock:
            until = self._until.get(key)
            if until is not None and until <= self._clock():
                del self._until[key]
                return None
            return until

    def set(self, key: str, until: float) -> None:
        """See :meth:`BucketStore.set`."""
        with self._buckets_lock:
            self._until[key] = float(until)
            if len(self._until) > _SWEEP_AT:
                now = self._clock()
                for stale in [k for k, v in self._until.items() if v <= now]:
                    del self._until[stale]

    def __len__(self) -> int:
        with self._buckets_lock:
            return len(self._until)

    def __repr__(self) -> str:
        return f"MemoryBucketStore(blocked={len(self)})"
