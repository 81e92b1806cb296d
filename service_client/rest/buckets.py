"""Rate-limit bucket table: what the REST session knows of each bucket.

After a 429 the session records, per bucket key, how long the bucket is
blocked; every request on the bucket waits until then, holding no slot.

The table sits behind :class:`BucketStore`, which speaks in **delays**
(seconds from now), never in instants: a store shared by several processes
keeps its instants on its own clock, so processes whose clocks disagree never
compare instants. :class:`MemoryBucketStore` is the default, one per client;
:class:`~service_client.rest.redis_buckets.RedisBucketStore` shares the table
between the processes of a fleet.

Every call carries a ``scope``: an opaque name of the bot the request is made
for (the REST session passes a hash of its token, never the token), so that a
store shared by several bots keeps their buckets apart.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["BucketStore", "MemoryBucketStore", "PaceWait", "bucket_scope"]

#: Entries kept before expired ones are swept on ``set``.
_SWEEP_AT = 1024


def bucket_scope(token: str) -> str:
    """The bucket scope of a bot: a one-way hash of its token.

    Buckets are per bot, so a store shared by several bots keys them by this
    scope. The token cannot be recovered from it.

    Args:
        token: The bot token.

    Returns:
        32 lower-case hex digits (the first 128 bits of a SHA-256 of the token
        with a fixed label).
    """
    return hashlib.sha256(b"service_client bucket scope\x00" + token.encode("utf-8")).hexdigest()[:32]


class PaceWait(float):
    """A wait for a pace slot, seconds: what a pacing store's ``acquire`` answers when a window's permits are taken.

    A plain positive float from :meth:`BucketStore.acquire` is a block (a 429's
    ``Retry-After``): the REST session waits it out, up to its
    ``max_retry_after``. A ``PaceWait`` means the bucket is not blocked, but
    the permits of its current window are all taken (by this process or
    others sharing the store): the request may ask again after this many
    seconds. The session waits for a pace slot only within the call's own
    timeout (``timeout_ms``, counted from the first pace wait of an attempt);
    when the slot cannot come within it, the call ends with
    :class:`~service_client.errors.ServiceTimeoutError`.
    """

    __slots__ = ("turn",)

    #: The caller's place in the bucket's waiting line, or None: the REST session
    #: passes it back to the store's :meth:`~BucketStore.acquire` after the wait,
    #: so that the bucket's waiters are served first come, first served.
    turn: int | None

    def __new__(cls, seconds: float, turn: int | None = None) -> PaceWait:
        """A wait of ``seconds`` for a pace slot, with the caller's ``turn`` (or None)."""
        wait = super().__new__(cls, seconds)
        wait.turn = turn
        return wait

    def __reduce__(self) -> tuple[type[PaceWait], tuple[float, int | None]]:
        return (PaceWait, (float(self), self.turn))

    def __repr__(self) -> str:
        return f"PaceWait({float(self)!r})" if self.turn is None else f"PaceWait({float(self)!r}, turn={self.turn})"


@runtime_checkable
class BucketStore(Protocol):
    """Where the REST session keeps what it learned of each rate-limit bucket.

    Implementations must be thread-safe: the session calls them from its
    worker, timer and submitting threads, never while it holds a lock. They
    must never block for long (a shared store bounds each call by a timeout)
    and should not raise: the session treats an exception as "bucket clear"
    and logs it.
    """

    def wait_time(self, key: str, *, scope: str = "") -> float:
        """How long ``key`` is known to be blocked, from a cheap (possibly local) look.

        Called when a request enters the queue, to park it early; takes no
        permit. :meth:`acquire` has the final word.

        Args:
            key: A bucket key such as ``"GET:servers/S1"``.
            scope: The bot the request is made for (an opaque hash), ``""``
                when unknown.

        Returns:
            Seconds from now, ``0.0`` when the bucket looks clear.
        """
        ...

    def acquire(self, key: str, *, scope: str = "", turn: int | None = None) -> float:
        """Ask to send one request on ``key`` now.

        Called by a worker right before it sends. A store that paces the
        bucket counts the request when it answers ``0.0``.

        Args:
            key: A bucket key.
            scope: The bot the request is made for, ``""`` when unknown.
            turn: The ``turn`` of the :class:`PaceWait` this store answered
                the same request before (its place in the bucket's line). The
                session passes it only back to a store that gave one, so a
                store that gives no turns never receives one.

        Returns:
            ``0.0``: send now. A positive number: seconds to wait before
            asking again (the request is not counted); a :class:`PaceWait`
            when the wait is for a pace slot rather than a block.
        """
        ...

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        """Record a 429: ``key`` is blocked for ``delay`` seconds from now.

        A block only ever moves later: a ``delay`` ending before the current
        block leaves it as it is.

        Args:
            key: A bucket key.
            delay: Seconds from now (the parsed ``Retry-After``, or the backoff).
            scope: The bot the request is made for, ``""`` when unknown.
        """
        ...


class MemoryBucketStore:
    """The default in-process :class:`BucketStore`: a dict behind a lock.

    Thread-safe. Expired entries are dropped when read, and swept when the
    table grows, so it stays small. It keeps blocked-until times only (no
    pacing: a bucket is clear until a 429 blocks it) and ignores ``scope``:
    share one between clients of the same bot only.
    """

    __slots__ = ("_buckets_lock", "_clock", "_until")

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        """Create an empty table.

        Args:
            clock: Source of the current monotonic time, seconds.
        """
        self._clock = clock
        self._buckets_lock = threading.RLock()
        self._until: dict[str, float] = {}

    # -- the BucketStore interface ---------------------------------------------

    def wait_time(self, key: str, *, scope: str = "") -> float:
        """See :meth:`BucketStore.wait_time`: seconds left of the block, ``0.0`` when clear."""
        until = self.get(key)
        return 0.0 if until is None else max(0.0, until - self._clock())

    def acquire(self, key: str, *, scope: str = "", turn: int | None = None) -> float:
        """See :meth:`BucketStore.acquire`: the same answer as :meth:`wait_time` (nothing is counted, no turns)."""
        return self.wait_time(key, scope=scope)

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        """See :meth:`BucketStore.block`: ``set(key, now + delay)`` unless the bucket is blocked longer."""
        with self._buckets_lock:  # re-entrant: get and set take it too, so the compare and set are one step
            until = self._clock() + max(0.0, float(delay))
            current = self.get(key)
            if current is None or current < until:
                self.set(key, until)

    # -- direct access, in this process's monotonic time ------------------------

    def get(self, key: str) -> float | None:
        """The time until which ``key`` is blocked.

        Args:
            key: A bucket key such as ``"GET:servers/S1"``.

        Returns:
            The blocked-until time (monotonic seconds of ``clock``), or None
            when the bucket is not blocked; an expired entry is dropped.
        """
        with self._buckets_lock:
            until = self._until.get(key)
            if until is not None and until <= self._clock():
                del self._until[key]
                return None
            return until

    def set(self, key: str, until: float) -> None:
        """Block ``key`` until ``until`` (monotonic seconds of ``clock``), replacing any earlier value.

        Args:
            key: A bucket key.
            until: The blocked-until time.
        """
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
