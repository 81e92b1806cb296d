"""Scheduling parts of the REST session: the strict FIFO and the timer heap.

At most 5 REST requests are on the wire at once; extra calls wait in a
first-in first-out queue and are released one at a time, and a call waiting
for its bucket or for a retry holds no slot.

- :class:`FifoQueue`: jobs ready to go on the wire, taken one at a time, in
  arrival order, by a fixed set of worker threads (one worker = one slot). It
  is a deque behind a condition, not a semaphore, so no newcomer can jump the
  queue.
- :class:`DelayQueue`: jobs that must wait (a blocked bucket, a retry delay)
  are parked here, holding no slot and no worker; one timer thread hands each
  back when its time comes, in time order and, for equal times, in the order
  they were parked.
- :class:`Job`: one call as the session schedules it.
"""

from __future__ import annotations

import concurrent.futures
import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .._secret import Secret
from .buckets import BucketStore, PaceWait
from .retry import RetryPolicy
from .route import Route

__all__ = ["DelayQueue", "FifoQueue", "Job"]

_log = logging.getLogger("service_client.rest")

T = TypeVar("T")

#: Longest single wait of an idle thread, seconds (every wait is bounded).
_IDLE_WAIT_S = 1.0


class Job:
    """One call as the session schedules it: its Future, its prepared request and its attempt count.

    Its ``repr`` shows the method, the redacted path and the attempts, never the request's headers.
    """

    __slots__ = (
        "attempts",
        "bearer",
        "future",
        "pace_deadline",
        "pace_turn",
        "prepared",
        "ready_since",
        "retry",
        "route",
        "timeout_ms",
    )

    def __init__(
        self, route: Route, prepared: Any, timeout_ms: float, retry: RetryPolicy,
        bearer: Secret | None = None,
    ) -> None:
        """A job not yet attempted, ready now.

        Args:
            route: The call's route.
            prepared: The request every attempt sends, as the transport prepared it (it carries
                the ``Authorization`` header).
            timeout_ms: Bound of each attempt, milliseconds.
            retry: The call's retry policy.
            bearer: The token the request carries, or None: masked in every text of its
                answers that an error shows.
        """
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.route = route
        self.prepared = prepared
        self.bearer = bearer
        self.timeout_ms = timeout_ms
        self.retry = retry
        self.attempts = 0
        self.ready_since = time.monotonic()
        #: The latest instant (monotonic s) this attempt may wait for a pace slot; None until its first pace wait.
        self.pace_deadline: float | None = None
        #: Its turn in its bucket's line (from the store's PaceWait), passed back to the store; None without one.
        #: Kept across attempts: a retry (after a 429, a 5xx, a timeout) keeps its place in the line.
        self.pace_turn: int | None = None

    def acquire(self, store: BucketStore, scope: str) -> float:
        """Ask ``store`` to send this job on its bucket now (see :meth:`BucketStore.acquire`).

        The job's turn in the bucket's line goes back with it once a :class:`PaceWait` gave one
        (a store that gave none never sees a turn); a new turn is kept until the call ends, so
        a retry keeps its place in the line.

        Returns:
            The store's answer, seconds (0 or less when the bucket is clear).

        Raises:
            Exception: Whatever the store raises.
        """
        turn = self.pace_turn
        key = self.route.bucket
        wait = store.acquire(key, scope=scope) if turn is None else store.acquire(key, scope=scope, turn=turn)
        if isinstance(wait, PaceWait) and wait.turn is not None:
            self.pace_turn = wait.turn
        return wait

    def __repr__(self) -> str:
        return f"<Job {self.route.method} {self.route.display_path} attempts={self.attempts}>"


class FifoQueue(Generic[T]):
    """A strict first-in first-out queue of jobs for worker threads.

    Thread-safe. ``get`` hands out one item per call in the order ``put``
    received them; a closed queue accepts nothing and wakes every waiter.
    """

    def __init__(self) -> None:
        """Create an empty, open queue."""
        self._queue_lock = threading.Lock()
        self._not_empty = threading.Condition(self._queue_lock)
        self._items: deque[T] = deque()
        self._closed = False

    def put(self, item: T) -> bool:
        """Append ``item`` at the back of the queue.

        Args:
            item: The job.

        Returns:
            True when queued, False when the queue is closed (the item is
            dropped; the caller ends it).
        """
        with self._queue_lock:
            if self._closed:
                return False
            self._items.append(item)
            self._not_empty.notify()
            return True

    def get(self, timeout: float = _IDLE_WAIT_S) -> T | None:
        """Take the item at the front, waiting up to ``timeout`` seconds.

        Args:
            timeout: Longest wait, seconds.

        Returns:
            The oldest item, or None on timeout or when the queue is closed.
        """
        with self._queue_lock:
            if not self._items and not self._closed:
                self._not_empty.wait(timeout)
            if self._closed or not self._items:
                return None
            return self._items.popleft()

    def close(self) -> list[T]:
        """Close the queue and wake every waiter.

        Returns:
            The items that were still queued, oldest first.
        """
        with self._queue_lock:
            self._closed = True
            left = list(self._items)
            self._items.clear()
            self._not_empty.notify_all()
            return left

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __len__(self) -> int:
        with self._queue_lock:
            return len(self._items)


class DelayQueue(Generic[T]):
    """Items parked until a monotonic time, handed back by one timer thread.

    Thread-safe. The timer thread (named ``<thread_name>``, daemon) calls
    ``on_due(item)`` without holding any lock, in due-time order; items with
    the same due time come back in the order they were parked. Exceptions of
    ``on_due`` are logged, never fatal. Started lazily by the first ``put``.
    """

    def __init__(
        self,
        on_due: Callable[[T], None],
        *,
        thread_name: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create an empty queue; no thread runs until the first ``put``.

        Args:
            on_due: Called on the timer thread with each item when due.
            thread_name: Name of the timer thread.
            clock: Monotonic time source, seconds (waits use real time).
        """
        self._on_due = on_due
        self._thread_name = thread_name
        self._clock = clock
        self._heap_lock = threading.Lock()
        self._changed = threading.Condition(self._heap_lock)
        self._heap: list[tuple[float, int, T]] = []
        self._seq = itertools.count()
        self._closed = False
        self._thread: threading.Thread | None = None

    def put(self, due: float, item: T) -> bool:
        """Park ``item`` until the monotonic time ``due``.

        Args:
            due: Monotonic seconds at which ``on_due(item)`` runs.
            item: The job.

        Returns:
            True when parked, False when the queue is closed.
        """
        with self._heap_lock:
            if self._closed:
                return False
            entry = (due, next(self._seq), item)
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
                self._thread.start()
            elif self._heap[0] is entry:
                self._changed.notify()
            return True

    def _run(self) -> None:
        while True:
            due_items: list[T] = []
            with self._heap_lock:
                if self._closed:
                    return
                now = self._clock()
                while self._heap and self._heap[0][0] <= now:
                    due_items.append(heapq.heappop(self._heap)[2])
                if not due_items:
                    wait = self._heap[0][0] - now if self._heap else _IDLE_WAIT_S
                    self._changed.wait(min(wait, _IDLE_WAIT_S))
                    continue
            for item in due_items:
                try:
                    self._on_due(item)
                except Exception:  # noqa: BLE001 - the timer thread must survive
                    _log.exception("REST scheduler callback failed")

    def close(self) -> list[T]:
        """Close the queue and stop the timer thread (without waiting for it).

        Returns:
            The items still parked, in due order.
        """
        with self._heap_lock:
            self._closed = True
            left = [entry[2] for entry in sorted(self._heap)]
            self._heap.clear()
            self._changed.notify_all()
            return left

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the timer thread to end."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def thread(self) -> threading.Thread | None:
        """The timer thread, or None before the first ``put``."""
        return self._thread

    def __len__(self) -> int:
        with self._heap_lock:
            return len(self._heap)

