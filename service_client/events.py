"""Listener registry and the ordered worker pool that runs listeners.

Spec: Events; python-api.md section 6. Listeners never run on the socket
reader thread: :class:`EventEmitter` hands each emitted event to an
:class:`OrderedWorkerPool`, which runs the tasks of one *key* (a channel id,
else a server id) strictly one after another in submission order while tasks of
different keys run concurrently on up to ``workers`` threads. A listener that
blocks only holds up its own key.

``wait_for`` waiters are completed off the pool, on a dedicated thread, so a
listener may wait for a later event of its own channel without deadlock.

Both classes are thread-safe.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["EventEmitter", "OrderedWorkerPool"]

log = logging.getLogger("service_client.events")

F = TypeVar("F", bound=Callable[..., Any])

_thread_ids = itertools.count()


class OrderedWorkerPool:
    """A fixed pool of daemon threads that keeps the order of tasks sharing a key.

    Thread-safe. Tasks with the same ``key`` run one at a time in the order they
    were submitted; tasks with different keys (or ``key=None``) may run
    concurrently. Threads are named ``<name>-events-<n>`` and start lazily.

    Args:
        workers: Number of threads (at least 1).
        name: Thread name prefix.
    """

    def __init__(self, workers: int = 8, *, name: str = "service_client") -> None:
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        self._workers = workers
        self._name = name
        self._lock = threading.Condition(threading.Lock())  # guards every field below
        self._pending: dict[Any, collections.deque[Callable[[], None]]] = {}
        self._ready: collections.deque[Any] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._busy = 0  # tasks running now
        self._anon = itertools.count()
        self._gates = 0  # barriers queued or running: later submissions are held
        self._held: collections.deque[tuple[Callable[[], None], Any]] = collections.deque()
        self._barrier_threads: set[int] = set()  # idents of threads running a barrier

    def submit(self, fn: Callable[[], None], *, key: Any = None) -> bool:
        """Queue ``fn`` to run on the pool after every earlier task of ``key``.

        Args:
            fn: A callable taking no argument; its exceptions are logged.
            key: Ordering key (hashable); None means "no ordering".

        Returns:
            True when queued, False when the pool is shut down (nothing runs).
        """
        with self._lock:
            if self._closed:
                return False
            if self._gates and threading.get_ident() not in self._barrier_threads:
                self._held.append((fn, key))
                return True
            self._enqueue(fn, key)
            return True

    def submit_barrier(self, fn: Callable[[], None], *, key: Any = None) -> bool:
        """Queue ``fn`` so that every task submitted after it waits until it has run.

        ``fn`` itself runs after the earlier tasks of ``key`` (as with
        :meth:`submit`). Until it returns, tasks submitted by other threads are
        held back, in order, whatever their key; tasks that ``fn`` submits
        itself are not held, so they start before the held ones. Used to
        reconcile caches after a reconnect before later events reach listeners
        (issue 6). ``fn`` must be bounded in time: it delays every later event.

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
        queue = self._pending.get(key)
        if queue is None:
            self._pending[key] = collections.deque((fn,))
            self._ready.append(key)
            if len(self._threads) < self._workers and len(self._ready) > self._idle_estimate():
                self._spawn()
            self._lock.notify()
        else:
            queue.append(fn)

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
                    lock.wait()
                if self._closed:
                    return
                key = self._ready.popleft()
                fn = self._pending[key].popleft()
                self._busy += 1
            try:
                fn()
            except BaseException:  # a task must never kill the worker
                log.exception("event task failed")
            with lock:
                self._busy -= 1
                queue = self._pending.get(key)
                if queue is None:  # shut down while the task ran
                    continue
                if queue:
                    self._ready.append(key)  # back of the line: fairness between keys
                    lock.notify()
                else:
                    del self._pending[key]

    def shutdown(self, timeout: float = 1.0) -> None:
        """Drop queued tasks and stop every thread.

        Idempotent; safe from inside a task (the calling thread is not joined).

        Args:
            timeout: Seconds to wait, in all, for the threads to end.
        """
        with self._lock:
            self._closed = True
            self._pending.clear()
            self._ready.clear()
            self._held.clear()
            threads = list(self._threads)
            self._lock.notify_all()
        deadline = time.monotonic() + timeout
        me = threading.current_thread()
        for thread in threads:
            if thread is not me:
                thread.join(max(0.0, deadline - time.monotonic()))

    @property
    def threads(self) -> list[threading.Thread]:
        """The pool's threads started so far (a copy)."""
        with self._lock:
            return list(self._threads)


def _check_event(event: Any) -> None:
    if not isinstance(event, str) or not event:
        raise TypeError(f"event must be a non-empty str, got {event!r}")


class _Waiter:
    __slots__ = ("event", "check", "future")

    def __init__(self, event: str, check: Callable[..., bool] | None) -> None:
        self.event = event
        self.check = check
        self.future: Future[Any] = Future()


class EventEmitter:
    """Event listeners, run on an :class:`OrderedWorkerPool`.

    Thread-safe. Listeners of one event run in registration order inside one
    pool task, so the order of events sharing a key is kept for every listener.
    A listener that raises is logged and emitted as ``error`` (a raising
    ``error`` listener is only logged).

    Args:
        pool: The pool that runs listeners.
        name: Thread name prefix for the ``wait_for`` thread.
    """

    def __init__(self, pool: OrderedWorkerPool, *, name: str = "service_client") -> None:
        self._pool = pool
        self._name = name
        self._listeners_lock = threading.Lock()  # guards _listeners and _waiters
        self._listeners: dict[str, list[tuple[Callable[..., Any], bool]]] = {}
        self._waiters: list[_Waiter] = []
        self._waiter_queue: collections.deque[tuple[str, tuple[Any, ...]] | None] = collections.deque()
        self._waiter_wake = threading.Event()
        self._waiter_thread: threading.Thread | None = None
        self._closed = False

    # -- registry ------------------------------------------------------------

    def on(self, event: str, listener: Callable[..., Any] | None = None) -> Any:
        """Register ``listener`` for ``event``; usable as a decorator.

        Args:
            event: Event name, snake_case (``"message_create"``).
            listener: A callable taking the event's arguments; omitted when used
                as ``@client.on("ready")``.

        Returns:
            The listener (so the decorator leaves the function usable).

        Raises:
            TypeError: ``event`` is not a non-empty str or ``listener`` is not callable.
        """
        return self._add(event, listener, once=False)

    def once(self, event: str, listener: Callable[..., Any] | None = None) -> Any:
        """Like :meth:`on`, but the listener is removed after its first call."""
        return self._add(event, listener, once=True)

    def _add(self, event: str, listener: Callable[..., Any] | None, *, once: bool) -> Any:
        if not isinstance(event, str) or not event:
            raise TypeError(f"event must be a non-empty str, got {event!r}")
        if listener is None:
            def decorator(fn: F) -> F:
                """Register the decorated function and return it unchanged."""
                self._add(event, fn, once=once)
                return fn

            return decorator
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {type(listener).__name__}")
        with self._listeners_lock:
            self._listeners.setdefault(event, []).append((listener, once))
        return listener

    def off(self, event: str, listener: Callable[..., Any] | None = None) -> None:
        """Remove ``listener`` from ``event``, or every listener of ``event`` when omitted.

        Raises:
            TypeError: ``event`` is not a non-empty str or ``listener`` is not callable.
        """
        _check_event(event)
        if listener is not None and not callable(listener):
            raise TypeError(f"listener must be callable or None, got {type(listener).__name__}")
        with self._listeners_lock:
            if listener is None:
                self._listeners.pop(event, None)
                return
            entries = self._listeners.get(event, [])
            for i, (fn, _) in enumerate(entries):
                if fn == listener:
                    del entries[i]
                    break

    def listeners(self, event: str) -> list[Callable[..., Any]]:
        """The listeners of ``event`` in call order (a copy).

        Raises:
            TypeError: ``event`` is not a non-empty str.
        """
        _check_event(event)
        with self._listeners_lock:
            return [fn for fn, _ in self._listeners.get(event, [])]

    def remove_all_listeners(self) -> None:
        """Remove every listener and fail every pending ``wait_for`` (spec: destroy)."""
        with self._listeners_lock:
            self._listeners.clear()
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.future.cancel()

    # -- emitting ------------------------------------------------------------

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        """Run the listeners of ``event`` on the pool, after earlier events of ``key``.

        Called by the library (usually on the socket reader thread); returns at
        once. Pending ``wait_for`` calls for ``event`` are completed on the
        waiter thread.

        Args:
            event: Event name.
            *args: The listener arguments.
            key: Ordering key (channel id, else server id), or None.
        """
        with self._listeners_lock:
            entries = self._listeners.get(event)
            if entries:
                if any(once for _, once in entries):
                    self._listeners[event] = [e for e in entries if not e[1]]
                fns = [fn for fn, _ in entries]
            else:
                fns = []
            has_waiters = bool(self._waiters)
        if has_waiters:
            self._waiter_queue.append((event, args))
            self._waiter_wake.set()
        if fns:
            self._pool.submit(lambda: self._run(event, fns, args), key=key)
        elif event == "error" and args:
            log.error("unhandled error event: %r", args[0])

    def _run(self, event: str, fns: list[Callable[..., Any]], args: tuple[Any, ...]) -> None:
        for fn in fns:
            try:
                fn(*args)
            except Exception as exc:
                if event == "error":
                    log.exception("an 'error' listener raised")
                else:
                    log.exception("a %r listener raised", event)
                    self.emit("error", exc)

    # -- wait_for ------------------------------------------------------------

    def wait_for(
        self,
        event: str,
        *,
        check: Callable[..., bool] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Block until ``event`` is emitted (and ``check`` accepts it).

        Safe from inside a listener: waiters are completed on their own thread,
        not on the worker pool.

        Args:
            event: Event name.
            check: Predicate taking the event's arguments; quick and non-blocking.
            timeout: Seconds to wait; None waits until the client is destroyed.

        Returns:
            The single argument of the event, a tuple when it has several, or
            None when it has none.

        Raises:
            TimeoutError: ``timeout`` passed first.
            ServiceError: The emitter was shut down (``destroy()``) while waiting.
        """
        from .errors import ServiceError

        if not isinstance(event, str) or not event:
            raise TypeError(f"event must be a non-empty str, got {event!r}")
        if check is not None and not callable(check):
            raise TypeError("check must be callable or None")
        if timeout is not None and (not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
        waiter = _Waiter(event, check)
        with self._listeners_lock:
            if self._closed:
                raise ServiceError("the client is destroyed")
            self._waiters.append(waiter)
            self._ensure_waiter_thread()
        try:
            return waiter.future.result(timeout)
        except TimeoutError:
            raise TimeoutError(f"wait_for({event!r}) timed out after {timeout}s") from None
        except Exception as exc:  # CancelledError on shutdown
            if waiter.future.cancelled():
                raise ServiceError("the client was destroyed while waiting") from None
            raise exc
        finally:
            with self._listeners_lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _ensure_waiter_thread(self) -> None:
        if self._waiter_thread is None:
            self._waiter_thread = threading.Thread(
                target=self._waiter_loop,
                name=f"{self._name}-waiters-{next(_thread_ids)}",
                daemon=True,
            )
            self._waiter_thread.start()

    def _waiter_loop(self) -> None:
        while True:
            self._waiter_wake.wait()
            self._waiter_wake.clear()
            while self._waiter_queue:
                item = self._waiter_queue.popleft()
                if item is None:
                    return
                event, args = item
                with self._listeners_lock:
                    candidates = [w for w in self._waiters if w.event == event]
                for waiter in candidates:
                    if waiter.future.done():
                        continue
                    try:
                        ok = waiter.check is None or bool(waiter.check(*args))
                    except Exception as exc:  # noqa: BLE001 - a failing check fails its own waiter only
                        waiter.future.set_exception(exc)
                        continue
                    if ok:
                        with self._listeners_lock:
                            if waiter in self._waiters:
                                self._waiters.remove(waiter)
                        value = None if not args else args[0] if len(args) == 1 else args
                        try:
                            waiter.future.set_result(value)
                        except Exception:  # noqa: BLE001 - cancelled concurrently
                            pass

    def close(self, timeout: float = 1.0) -> None:
        """Remove listeners, fail waiters and stop the waiter thread (idempotent)."""
        with self._listeners_lock:
            self._closed = True
            thread = self._waiter_thread
        self.remove_all_listeners()
        self._waiter_queue.append(None)
        self._waiter_wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
