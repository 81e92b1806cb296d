"""The ordered worker pool that runs listeners, and the batched handoff to it.

:class:`OrderedWorkerPool` runs the tasks of one *key* (a channel id, else a
server id) strictly one after another in submission order, while tasks of
different keys run concurrently on up to ``workers`` threads; a task that
blocks only holds up its own key. A place in a key's order can be reserved
before its task is known (:meth:`OrderedWorkerPool.reserve`), and a barrier
task holds every later task back until it has run
(:meth:`OrderedWorkerPool.submit_barrier`).

:func:`handoff_batch` lets one thread (the socket reader) hand the tasks of a
whole batch of events over under one lock, with one wakeup, without changing
their order relative to anything else that thread does; inside it, the items
of :meth:`OrderedWorkerPool.submit_item` for one key and one function join
one task.

The events waiting for listeners are bounded (``max_queued_events``): an
event that would pass the bound is dropped, counted
(:attr:`OrderedWorkerPool.dropped_events`) and reported in a rate-limited
WARNING, so that a listener that never returns cannot make the pool grow
without end, and the thread handing events over never waits.

Import these from :mod:`service_client.events`; this module is where they live.
Thread-safe.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import _defaults
from ._drops import DropLog

__all__ = ["OrderedWorkerPool", "flush_handoff", "handoff_batch"]

log = logging.getLogger("service_client.events")

_thread_ids = itertools.count()

#: Most tasks of one key a worker takes in one go (only while no other key is waiting).
_RUN_MAX = 64


class _Noted:
    """The tasks one thread noted in its :func:`handoff_batch` block, in order."""

    __slots__ = ("runs", "tasks")

    def __init__(self) -> None:
        self.tasks: list[tuple[OrderedWorkerPool, Callable[[], None], Any]] = []
        #: Per key: its last noted task when that is a :class:`_Run` more items may join.
        self.runs: dict[Any, _Run] = {}


class _Run:
    """A task calling ``fn(items)`` once for the items of one key noted one after another."""

    __slots__ = ("fn", "items", "pool")

    def __init__(self, pool: OrderedWorkerPool, fn: Callable[[list[Any]], None], item: Any) -> None:
        self.pool = pool
        self.fn = fn
        self.items = [item]

    def __call__(self) -> None:
        self.fn(self.items)


class _Local(threading.local):
    #: What this thread noted during :func:`handoff_batch`, else None.
    batch: _Noted | None = None


_local = _Local()


class _HandoffBatch:
    """The context manager of :func:`handoff_batch`."""

    __slots__ = ("_outer",)

    def __enter__(self) -> None:
        self._outer = _local.batch is not None
        if not self._outer:
            _local.batch = _Noted()

    def __exit__(self, *exc: object) -> None:
        if not self._outer:
            try:
                flush_handoff()
            finally:
                _local.batch = None


def handoff_batch() -> _HandoffBatch:
    """Hand the tasks this thread submits to their pools together, when the block ends.

    Inside the ``with`` block, :meth:`OrderedWorkerPool.submit` made by this
    thread only notes the task; at the end of the block (or at
    :func:`flush_handoff`) they are queued in submission order under one
    lock, with one wakeup. The socket reader wraps each batch of frames it
    took from the socket in one: a worker is woken once per batch, not once
    per event. Order is kept: every other pool operation of this thread
    (``reserve``, ``submit_barrier``) queues the noted tasks first, and the
    reader flushes them before it completes an ack or a sent message's
    wait, so whatever the woken caller does comes after them. Nested blocks
    join the outermost one. Returns a context manager.
    """
    return _HandoffBatch()


def flush_handoff() -> None:
    """Queue the tasks this thread noted in its :func:`handoff_batch` block now (else nothing)."""
    noted = _local.batch
    if noted is None or not noted.tasks:
        return
    tasks = noted.tasks
    noted.tasks = []
    noted.runs.clear()
    start = 0
    for index in range(1, len(tasks) + 1):
        if index == len(tasks) or tasks[index][0] is not tasks[start][0]:
            tasks[start][0]._submit_all([(fn, key) for _, fn, key in tasks[start:index]])
            start = index


class _Slot:
    """A place in a key's order whose task is given later (:meth:`OrderedWorkerPool.reserve`)."""

    __slots__ = ("dropped", "filled", "fn", "key", "pool")

    def __init__(self, pool: OrderedWorkerPool, key: Any) -> None:
        self.pool = pool
        self.key = key
        self.fn: Callable[[], None] | None = None
        self.filled = False
        #: Dropped at the pool's bound when reserved (so filled already): its task never runs.
        self.dropped = False

    def fill(self, fn: Callable[[], None] | None) -> None:
        """Give the task (None: nothing to run); the key's later tasks may then proceed."""
        self.pool._fill(self, fn)

    def __call__(self) -> None:
        fn = self.fn
        if fn is not None:
            fn()


class OrderedWorkerPool:
    """A fixed pool of daemon threads that keeps the order of tasks sharing a key.

    Thread-safe. Tasks with the same ``key`` run one at a time in the order they
    were submitted; tasks with different keys (or ``key=None``) may run
    concurrently. Threads are named ``<name>-events-<n>`` and start lazily.

    The events waiting for the pool are bounded. An *event* is an item of
    :meth:`submit_item` or a place of :meth:`reserve`; it counts from its
    submission until the task holding it has run. At most
    ``max_queued_events`` of them count at once in all, and at most
    ``max_queued_events // workers`` (at least 1) for one key, so that tasks
    blocked in a few keys never take the room of the others. An event that
    would pass either bound is dropped at once, the newest first: it never
    runs, the events queued before it keep their order, and later events of
    its key are accepted again once its backlog has room. Drops are counted
    in :attr:`dropped_events` and reported on the ``service_client.events``
    logger at WARNING level (on ``sys.stderr`` when logging is not
    configured): one line at the first drop, then at most one line every
    10 seconds with the count since the last line, and a last one at
    :meth:`shutdown`. Tasks of :meth:`submit` and :meth:`submit_barrier` are
    never counted or dropped.

    Args:
        workers: Number of threads (at least 1).
        name: Thread name prefix.
        max_queued_events: Most events waiting for the pool or running, in
            all (at least 1).

    Raises:
        TypeError: ``max_queued_events`` is not an int.
        ValueError: ``workers`` is not a positive int, or ``max_queued_events`` is below 1.
    """

    def __init__(
        self,
        workers: int = 8,
        *,
        name: str = "service_client",
        max_queued_events: int = _defaults.DEFAULT_MAX_QUEUED_EVENTS,
    ) -> None:
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        if not isinstance(max_queued_events, int) or isinstance(max_queued_events, bool):
            raise TypeError(f"max_queued_events must be an int, got {type(max_queued_events).__name__}")
        if max_queued_events < 1:
            raise ValueError(f"max_queued_events must be at least 1, got {max_queued_events!r}")
        self._workers = workers
        self._name = name
        self._lock = threading.Condition(threading.Lock())  # guards every field below
        self._pending: dict[Any, collections.deque[Callable[[], None]]] = {}
        self._ready: collections.deque[Any] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._busy = 0  # tasks running now
        self._idle_callbacks: list[Callable[[], None]] = []  # when_idle() callbacks not yet called
        self._anon = itertools.count()
        self._gates = 0  # barriers queued or running: later submissions are held
        self._held: collections.deque[tuple[Callable[[], None], Any]] = collections.deque()
        self._barrier_threads: set[int] = set()  # idents of threads running a barrier
        self._parked: set[Any] = set()  # keys waiting for their first task, an unfilled slot
        self._max_queued = max_queued_events
        self._key_max = max(1, max_queued_events // workers)
        self._queued = 0  # events submitted and not yet run, in all
        self._queued_by_key: dict[Any, int] = {}  # the same per key (not None), only keys with some
        self._dropped = 0  # events dropped since the start
        self._drop_log = DropLog()  # those not reported yet

    @property
    def queued_events(self) -> int:
        """Events (:meth:`submit_item` items, :meth:`reserve` places) submitted and not yet run."""
        return self._queued

    @property
    def dropped_events(self) -> int:
        """Events dropped since the pool was created because the queue was at its bound."""
        return self._dropped

    def submit(self, fn: Callable[[], None], *, key: Any = None) -> bool:
        """Queue ``fn`` to run on the pool after every earlier task of ``key``.

        Args:
            fn: A callable taking no argument; its exceptions are logged.
            key: Ordering key (hashable); None means "no ordering".

        Returns:
            True when queued, False when the pool is shut down (nothing runs).
        """
        noted = _local.batch
        if noted is not None:  # inside handoff_batch(): queued when the block ends
            if self._closed:
                return False
            noted.tasks.append((self, fn, key))
            noted.runs.pop(key, None)  # a later item of this key must not join a run before fn
            return True
        with self._lock:
            if self._closed:
                return False
            if self._gates and threading.get_ident() not in self._barrier_threads:
                self._held.append((fn, key))
                return True
            self._enqueue(fn, key)
            return True

    def submit_item(self, fn: Callable[[list[Any]], None], item: Any, *, key: Any = None) -> bool:
        """Queue ``fn([item])`` to run on the pool after every earlier task of ``key``.

        Inside :func:`handoff_batch`, items submitted one after another for the
        same ``fn`` and ``key`` (not None) join one task: ``fn(items)`` with
        them in submission order (at most 64 items a task). Nothing else
        changes: the items keep their order relative to every other task of
        ``key``. ``fn`` should check :attr:`closed` between items, so that a
        shutdown drops the rest of them as it drops queued tasks.

        Each item is an event of the pool's bound: one that would pass it is
        dropped (see the class). Inside :func:`handoff_batch`, the bound
        applies when the block ends.

        Args:
            fn: A callable taking a list of items; its exceptions are logged.
            item: Any value.
            key: Ordering key (hashable); None means "no ordering".

        Returns:
            True when queued (or noted inside :func:`handoff_batch`); False
            when the pool is shut down or the item was dropped (nothing runs).
        """
        return self._submit_item(fn, item, key)

    def _submit_item(self, fn: Callable[[list[Any]], None], item: Any, key: Any) -> bool:
        """:meth:`submit_item` with ``key`` positional (the emitter's call for every event)."""
        noted = _local.batch
        if noted is None:
            return self._submit_all([(_Run(self, fn, item), key)])
        if self._closed:
            return False
        if key is None:
            noted.tasks.append((self, _Run(self, fn, item), key))
            return True
        run = noted.runs.get(key)
        if run is not None and run.fn is fn and run.pool is self and len(run.items) < _RUN_MAX:
            run.items.append(item)
            return True
        run = noted.runs[key] = _Run(self, fn, item)
        noted.tasks.append((self, run, key))
        return True

    @property
    def closed(self) -> bool:
        """True once :meth:`shutdown` was called."""
        return self._closed

    def _submit_all(self, tasks: list[tuple[Callable[[], None], Any]]) -> bool:
        """Queue ``(fn, key)`` tasks in order under one lock.

        The events of a :class:`_Run` past the bound are dropped (the run is
        cut, or left out). Returns False when the pool is shut down (nothing
        is queued) or an event was dropped.
        """
        with self._lock:
            if self._closed:
                return False
            dropped = self._dropped
            hold = self._gates and threading.get_ident() not in self._barrier_threads
            counts = self._queued_by_key
            key_max = self._key_max
            for fn, key in tasks:
                if type(fn) is _Run:
                    n = len(fn.items)
                    if (
                        key is not None
                        and (count := counts.get(key, 0) + n) <= key_max
                        and self._queued + n <= self._max_queued
                    ):
                        counts[key] = count
                        self._queued += n
                    else:
                        taken = self._admit(key, n)
                        if not taken:
                            continue
                        del fn.items[taken:]
                if hold:
                    self._held.append((fn, key))
                else:
                    self._enqueue(fn, key)
            dropped = self._dropped != dropped
        if self._drop_log.unreported:
            self._report_drops()
        return not dropped

    def _admit(self, key: Any, n: int) -> int:
        """How many of ``n`` new events of ``key`` fit the bounds, counted as queued (under ``_lock``).

        The rest are counted as dropped, and an idle worker is woken to report
        them when the time comes.
        """
        room = self._max_queued - self._queued
        if key is not None:
            room = min(room, self._key_max - self._queued_by_key.get(key, 0))
        taken = max(0, min(n, room))
        if taken:
            self._queued += taken
            if key is not None:
                self._queued_by_key[key] = self._queued_by_key.get(key, 0) + taken
        if taken < n:
            self._dropped += n - taken
            self._drop_log.note(key, n - taken)
            self._lock.notify()  # an idle worker reports the drop once the interval has passed
        return taken

    def _report_drops(self, *, force: bool = False) -> None:
        """Log the events dropped since the last line, at most once every 10 s (``force``: now)."""
        self._drop_log.report(
            total=self._dropped, key_max=self._key_max, max_queued=self._max_queued, force=force
        )

    def reserve(self, *, key: Any = None) -> _Slot:
        """Reserve the next place in ``key``'s order for a task given later.

        Tasks of ``key`` submitted after this call wait until the slot is
        filled with :meth:`_Slot.fill` and has run; no worker thread waits
        meanwhile, and other keys are not affected. Used for an event whose
        arguments need a request first: it keeps its arrival position.

        The place is an event of the pool's bound: when it would pass it, the
        place is dropped at once (see the class), and filling it does nothing.

        Args:
            key: Ordering key (hashable); None means "no ordering".

        Returns:
            The slot. Filling it after :meth:`shutdown` does nothing.
        """
        flush_handoff()  # this thread's noted tasks come first
        slot = _Slot(self, key)
        with self._lock:
            if self._closed:
                slot.filled = True
                return slot
            if not self._admit(key, 1):
                slot.filled = slot.dropped = True
            elif self._gates and threading.get_ident() not in self._barrier_threads:
                self._held.append((slot, key))
            else:
                self._enqueue(slot, key)
        if self._drop_log.unreported:
            self._report_drops()
        return slot

    def _fill(self, slot: _Slot, fn: Callable[[], None] | None) -> None:
        """Complete a reserved slot; wake its key when the slot is at the head of its queue."""
        with self._lock:
            if slot.filled:
                return
            slot.fn = fn
            slot.filled = True
            key = slot.key
            if key in self._parked:
                queue = self._pending.get(key)
                if queue and queue[0] is slot:
                    self._parked.discard(key)
                    self._make_ready(key)

    def submit_barrier(self, fn: Callable[[], None], *, key: Any = None) -> bool:
        """Queue ``fn`` so that every task submitted after it waits until it has run.

        ``fn`` itself runs after the earlier tasks of ``key`` (as with
        :meth:`submit`). Until it returns, tasks submitted by other threads are
        held back, in order, whatever their key; tasks that ``fn`` submits
        itself are not held, so they start before the held ones. Used to
        reconcile caches after a reconnect before later events reach
        listeners. ``fn`` must be bounded in time: it delays every later event.

        Args:
            fn: A callable taking no argument; its exceptions are logged.
            key: Ordering key of ``fn`` itself.

        Returns:
            True when queued, False when the pool is shut down.
        """

        def barrier() -> None:
            """Run the barrier task, then release the tasks queued behind it."""
            me = threading.get_ident()
            with self._lock:
                self._barrier_threads.add(me)
            try:
                fn()
            finally:
                with self._lock:
                    self._barrier_threads.discard(me)
                    self._gates -= 1
                    if not self._gates:
                        held, self._held = self._held, collections.deque()
                        if not self._closed:
                            for task, task_key in held:
                                self._enqueue(task, task_key)

        flush_handoff()  # this thread's noted tasks come first
        with self._lock:
            if self._closed:
                return False
            # Never held itself (a held barrier would wait for its own gate);
            # barriers sharing a key still run one after another.
            self._enqueue(barrier, key)
            self._gates += 1
            return True

    def _enqueue(self, fn: Callable[[], None], key: Any) -> None:
        """Queue a task (under ``_lock``)."""
        if key is None:
            key = ("anon", next(self._anon))
            if type(fn) is _Slot:
                fn.key = key
        queue = self._pending.get(key)
        if queue is None:
            self._pending[key] = collections.deque((fn,))
            if type(fn) is _Slot and not fn.filled:
                self._parked.add(key)
            else:
                self._make_ready(key)
        else:
            queue.append(fn)

    def _make_ready(self, key: Any) -> None:
        """Put a key whose next task can run in line for a worker (under ``_lock``)."""
        self._ready.append(key)
        if len(self._threads) < self._workers and len(self._ready) > self._idle_estimate():
            self._spawn()
        self._lock.notify()

    def _idle_estimate(self) -> int:
        return len(self._threads) - self._busy

    def _spawn(self) -> None:
        thread = threading.Thread(
            target=self._loop,
            name=f"{self._name}-events-{next(_thread_ids)}",
            daemon=True,
        )
        self._threads.append(thread)
        thread.start()

    def _loop(self) -> None:
        lock = self._lock
        while True:
            with lock:
                while not self._ready and not self._closed:
                    delay = None
                    if self._drop_log.unreported:  # drops to report once the interval has passed
                        delay = self._drop_log.next_at - time.monotonic()
                        if delay <= 0:
                            break
                    lock.wait(delay)
                if self._closed:
                    return
                if not self._ready:
                    report = True
                else:
                    report = False
                    key = self._ready.popleft()
                    queue = self._pending[key]
                    # The key's next task, and, while no other key waits for a worker, those queued
                    # right behind it (up to _RUN_MAX, not past an unfilled slot): one lock round
                    # trip per run instead of per task, and a waiting key still goes first.
                    tasks = [queue.popleft()]
                    while queue and not self._ready and len(tasks) < _RUN_MAX:
                        head = queue[0]
                        if type(head) is _Slot and not head.filled:
                            break
                        tasks.append(queue.popleft())
                    self._busy += 1
            if report:
                self._report_drops()
                continue
            events = 0  # of the bound, freed once the tasks have run
            for fn in tasks:
                if type(fn) is _Run:
                    events += len(fn.items)
                elif type(fn) is _Slot:
                    events += 1
            for fn in tasks:
                if self._closed:  # shut down meanwhile: the rest is dropped like queued tasks
                    break
                try:
                    fn()
                except BaseException:  # a task must never kill the worker
                    log.exception("event task failed")
            with lock:
                self._busy -= 1
                if events and not self._closed:
                    self._queued -= events
                    count = self._queued_by_key.get(key)  # None for a key of unordered tasks
                    if count is not None:
                        if count > events:
                            self._queued_by_key[key] = count - events
                        else:
                            del self._queued_by_key[key]
                rest = self._pending.get(key)
                if rest is None:  # shut down while the tasks ran
                    idle = self._take_idle_callbacks()
                    if idle:
                        lock.release()
                        try:
                            _call_each(idle)
                        finally:
                            lock.acquire()
                    continue
                if not rest:
                    del self._pending[key]
                elif type(rest[0]) is _Slot and not rest[0].filled:
                    self._parked.add(key)  # woken by _fill
                else:
                    self._ready.append(key)  # back of the line: fairness between keys
                    lock.notify()

    def shutdown(self, timeout: float = 1.0) -> None:
        """Drop queued tasks and stop every thread.

        Idempotent; safe from inside a task (the calling thread is not joined).
        Events dropped for the bound and not reported yet are reported now.

        Args:
            timeout: Seconds to wait, in all, for the threads to end.
        """
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._ready.clear()
            self._held.clear()
            self._parked.clear()
            self._queued = 0
            self._queued_by_key.clear()
            threads = list(self._threads)
            self._lock.notify_all()
        self._report_drops(force=True)
        deadline = time.monotonic() + timeout
        me = threading.current_thread()
        for thread in threads:
            if thread is not me:
                thread.join(max(0.0, deadline - time.monotonic()))

    def when_idle(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the pool is shut down and no worker runs a task any more.

        At once, on the calling thread, when that is already so; else on the worker that
        finishes the last task still running (a listener that was running when
        :meth:`shutdown` was called), right after it. A callback that raises is logged.
        Thread-safe.
        """
        with self._lock:
            self._idle_callbacks.append(callback)
            idle = self._take_idle_callbacks()
        _call_each(idle)

    def _take_idle_callbacks(self) -> list[Callable[[], None]]:
        """The callbacks to call now (under ``_lock``): all of them once closed and idle."""
        if not self._closed or self._busy or not self._idle_callbacks:
            return []
        taken, self._idle_callbacks = self._idle_callbacks, []
        return taken

    @property
    def threads(self) -> list[threading.Thread]:
        """The pool's threads started so far (a copy)."""
        with self._lock:
            return list(self._threads)


def _call_each(callbacks: list[Callable[[], None]]) -> None:
    """Call each callback; one that raises is logged and does not stop the others."""
    for callback in callbacks:
        try:
            callback()
        except Exception:  # noqa: BLE001 - an idle callback must not kill the worker
            log.exception("a pool idle callback failed")
