"""The listener registry: :class:`EventEmitter`, which hands events to the ordered worker pool.

Listeners never run on the socket reader thread: :class:`EventEmitter` hands
each emitted event to an :class:`OrderedWorkerPool` (it lives in
:mod:`service_client.events.workers`), which runs the tasks
of one *key* (a channel id, else a server id) strictly one after another in
submission order while tasks of different keys run concurrently on up to
``workers`` threads. A listener that blocks only holds up its own key. An
event whose arguments are not known yet (a member to refetch) reserves its
place in its key's order with :meth:`EventEmitter.reserve` and is filled in
later. The socket reader hands the events of each batch of frames over
together (:func:`handoff_batch`). The events waiting for listeners are
bounded by the pool (``max_queued_events``): one past the bound is dropped for
the listeners, counted and logged, while ``wait_for`` waiters still see it.

``wait_for`` waiters are completed off the pool, on a dedicated thread, so a
listener may wait for a later event of its own channel without deadlock. An
event only completes waiters that were registered when it was emitted.

A listener that raises never goes unseen: it is logged and emitted as
``error`` when an ``error`` listener is registered; otherwise its traceback is
reported once, through the ``service_client`` logger when logging is
configured to reach a handler, else printed to ``sys.stderr`` (as
:func:`threading.excepthook` does), with the bot token replaced by
``[REDACTED]``.

Every class here is thread-safe.
"""

from __future__ import annotations

import collections
import functools
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from .._secret import REDACTED
from ..errors import ServiceError
from ._drops import _logging_reaches_a_handler
from .workers import OrderedWorkerPool, _Slot, _thread_ids, flush_handoff, handoff_batch

__all__ = ["Captured", "CapturedSlot", "EventEmitter", "EventSlot", "OrderedWorkerPool", "flush_handoff",
           "handoff_batch"]

log = logging.getLogger("service_client.events")

F = TypeVar("F", bound=Callable[..., Any])

#: Runs an event's listeners for each argument tuple of a list (:meth:`EventEmitter._run_each`).
_Runner = Callable[[list[tuple[Any, ...]]], None]

#: Called as ``hook(event, exc)`` for every exception a listener raises (the pytest plugin
#: uses this to fail a test whose listeners raised). A hook must be quick and never raise.
_listener_error_hooks: list[Callable[[str, BaseException, str], None]] = []
_hooks_lock = threading.Lock()


def _add_listener_error_hook(hook: Callable[[str, BaseException, str], None]) -> None:
    """Call ``hook(event, exc, text)`` whenever a listener raises, on the thread that ran it.

    ``text`` is the exception's traceback with the bot token redacted: a hook that
    shows the error shows ``text``, never its own formatting of ``exc``.
    """
    with _hooks_lock:
        _listener_error_hooks.append(hook)


def _remove_listener_error_hook(hook: Callable[[str, BaseException, str], None]) -> None:
    """Undo :func:`_add_listener_error_hook` (no error when absent)."""
    with _hooks_lock:
        if hook in _listener_error_hooks:
            _listener_error_hooks.remove(hook)


def _check_event(event: Any) -> None:
    if not isinstance(event, str) or not event:
        raise TypeError(f"event must be a non-empty str, got {event!r}")


class _Waiter:
    __slots__ = ("event", "check", "future")

    def __init__(self, event: str, check: Callable[..., bool] | None) -> None:
        self.event = event
        self.check = check
        self.future: Future[Any] = Future()


class _Capturing(threading.local):
    #: The events emitted on this thread inside :meth:`EventEmitter.capture`, else None.
    events: list[Captured] | None = None
    #: What listeners raise on this thread inside :meth:`EventEmitter.collect_failures`, else None.
    failures: list[Exception] | None = None


_capturing = _Capturing()


class EventSlot:
    """An event's place in its key's order, reserved before its arguments are known.

    Returned by :meth:`EventEmitter.reserve`. Exactly one of :meth:`emit` or
    :meth:`cancel` takes effect; later calls do nothing. Thread-safe.
    """

    __slots__ = ("_emitter", "_slot")

    def __init__(self, emitter: EventEmitter, slot: _Slot) -> None:
        self._emitter = emitter
        self._slot = slot

    def emit(self, event: str, *args: Any) -> None:
        """Emit ``event`` now, its listeners running at the reserved place.

        The event counts as emitted at this call, not at the reservation: the
        listeners and ``wait_for`` waiters registered by now receive it.
        Waiters are completed at once (they do not wait for the earlier events
        of the key). When the place was dropped at the pool's bound (see
        :class:`OrderedWorkerPool`), no listener runs, but the waiters still
        receive the event.
        """
        slot = self._slot
        if slot.filled:  # emitted or cancelled already: no listener or waiter is touched
            if slot.dropped:  # dropped at the pool's bound: no listener runs, waiters see it (once)
                slot.dropped = False
                self._emitter._prepare(event, args)
            return
        runner = self._emitter._prepare(event, args)
        slot.fill(None if runner is None else functools.partial(runner, [args]))

    def cancel(self) -> None:
        """Give the place up: nothing is emitted, the key's later events proceed."""
        self._slot.dropped = False
        self._slot.fill(None)


class CapturedSlot(EventSlot):
    """A place reserved inside :meth:`EventEmitter.capture`: its event, once known, in :attr:`future`.

    Attributes:
        future: Completes with ``(event, args)`` when the event is emitted, or None when the
            place is cancelled.
    """

    __slots__ = ("future",)

    def __init__(self) -> None:  # noqa: D107 - no emitter: nothing is queued
        self.future: Future[tuple[str, tuple[Any, ...]] | None] = Future()

    def emit(self, event: str, *args: Any) -> None:
        """The event is known: :attr:`future` completes with it."""
        if not self.future.done():
            self.future.set_result((event, args))

    def cancel(self) -> None:
        """Nothing is emitted for this place: :attr:`future` completes with None."""
        if not self.future.done():
            self.future.set_result(None)


#: One event :meth:`EventEmitter.capture` caught: ``(event, args)``, or the
#: :class:`CapturedSlot` of an event whose arguments come later.
Captured = tuple[str, tuple[Any, ...]] | CapturedSlot


class EventEmitter:
    """Event listeners, run on an :class:`OrderedWorkerPool`.

    Thread-safe. Listeners of one event run in registration order inside one
    pool task, so the order of events sharing a key is kept for every listener.
    A listener that raises is emitted as ``error`` (and logged when logging
    is configured); with no ``error`` listener registered its traceback is
    logged when logging is configured, else printed to ``sys.stderr``, once,
    after ``redact``. A raising ``error`` listener is reported the same way,
    never re-emitted.

    Args:
        pool: The pool that runs listeners.
        name: Thread name prefix for the ``wait_for`` thread.
        redact: Applied to a traceback's text before it is logged or printed
            (the client replaces its token with ``[REDACTED]``).
        closing: True once the owner is being shut down (``destroy()``): a
            listener failing from then on is still reported, but not passed to
            the listener error hooks (the pytest plugin's test failure), since
            the shutdown itself ended what the listener was doing. A
            ``client_close`` listener, which runs because of the shutdown, is
            passed to them all the same.
    """

    def __init__(
        self,
        pool: OrderedWorkerPool,
        *,
        name: str = "service_client",
        redact: Callable[[str], str] | None = None,
        closing: Callable[[], bool] | None = None,
    ) -> None:
        self._pool = pool
        self._name = name
        self._redact = redact
        self._closing = closing
        self._listeners_lock = threading.Lock()  # guards _listeners and _waiters
        self._listeners: dict[str, list[tuple[Callable[..., Any], bool]]] = {}
        #: Per event: its listeners in call order, whether one is a ``once`` listener, the
        #: function running them for a list of argument tuples, and the one running them for a
        #: list of single arguments (:meth:`emit_one`). An immutable snapshot replaced (under the
        #: lock) at every change, read by emit without it.
        self._calls: dict[str, tuple[tuple[Callable[..., Any], ...], bool, _Runner, _Runner]] = {}
        self._waiters: list[_Waiter] = []
        # Events for the waiter thread, each with the waiters registered when it was emitted.
        self._waiter_queue: collections.deque[tuple[tuple[Any, ...], list[_Waiter]] | None] = collections.deque()
        self._waiter_wake = threading.Event()
        self._waiter_thread: threading.Thread | None = None
        self._closed = False
        #: :meth:`capture` was used: :meth:`emit` and :meth:`reserve` look for a capture first.
        self._capture = False
        #: :meth:`emit` is this class's own and nothing is captured: :meth:`emit_one` may skip it.
        self._plain = type(self).emit is EventEmitter.emit

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
            self._refresh(event)
        return listener

    def _refresh(self, event: str) -> None:
        """Rebuild the call snapshot of ``event`` (``_listeners_lock`` held)."""
        entries = self._listeners.get(event)
        if entries:
            fns = tuple(fn for fn, _ in entries)
            self._calls[event] = (
                fns,
                any(once for _, once in entries),
                self._runner(event, fns),
                functools.partial(self._run_each_one, event, fns),
            )
        else:
            self._calls.pop(event, None)

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
                self._calls.pop(event, None)
                return
            entries = self._listeners.get(event, [])
            for i, (fn, _) in enumerate(entries):
                if fn == listener:
                    del entries[i]
                    break
            self._refresh(event)

    def listeners(self, event: str) -> list[Callable[..., Any]]:
        """The listeners of ``event`` in call order (a copy).

        Raises:
            TypeError: ``event`` is not a non-empty str.
        """
        _check_event(event)
        with self._listeners_lock:
            return [fn for fn, _ in self._listeners.get(event, [])]

    def remove_all_listeners(self) -> None:
        """Remove every listener and fail every pending ``wait_for`` (``destroy()`` calls this)."""
        with self._listeners_lock:
            self._listeners.clear()
            self._calls.clear()
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.future.cancel()

    # -- emitting ------------------------------------------------------------

    def emit(self, event: str, *args: Any, key: Any = None) -> None:
        """Run the listeners of ``event`` on the pool, after earlier events of ``key``.

        Called by the library (usually on the socket reader thread); returns at
        once. Pending ``wait_for`` calls for ``event`` registered before this
        call are completed on the waiter thread; later ones are not. When the
        pool's bound is reached, the listeners' call is dropped (see
        :class:`OrderedWorkerPool`); the waiters still receive the event.

        Args:
            event: Event name.
            *args: The listener arguments.
            key: Ordering key (channel id, else server id), or None.
        """
        if self._capture:
            captured = _capturing.events
            if captured is not None:  # inside capture() on this thread: kept, not queued
                captured.append((event, args))
                return
        # Inside the reader's handoff batch, the events of one key for the same listeners join
        # one pool task (run in order by _run_each).
        calls = self._calls.get(event)
        if calls is not None and not calls[1] and not self._waiters:  # the common case
            self._pool._submit_item(calls[2], args, key)
            return
        runner = self._prepare(event, args)
        if runner is not None:
            self._pool.submit_item(runner, args, key=key)

    def emit_and_wait(self, event: str, *args: Any, timeout: float) -> bool:
        """Run the listeners of ``event`` now and return once they have run (``destroy()``'s last event).

        On the calling thread when it is a worker of the pool, else on a worker, out of any
        key's order; waiters are completed as by :meth:`emit`.

        Args:
            event: Event name.
            *args: The listener arguments.
            timeout: Longest wait for the listeners, seconds.

        Returns:
            True when they have run (or there were none); False when ``timeout`` passed first
            or the pool is shut down.
        """
        runner = self._prepare(event, args)
        if runner is None:
            return True
        if threading.current_thread() in self._pool.threads:
            runner([args])
            return True
        done = threading.Event()

        def task() -> None:
            """Run the listeners, then wake the caller."""
            try:
                runner([args])
            finally:
                done.set()

        return self._pool.submit(task) and done.wait(timeout)

    def emit_one(self, event: str, arg: Any, key: Any) -> None:
        """:meth:`emit` of an event with one argument, every argument positional.

        The same as ``emit(event, arg, key=key)`` (which it calls when a
        subclass overrides :meth:`emit`), for the socket reader's hottest
        events: a positional call, and no argument tuple to pack.
        """
        calls = self._calls.get(event)
        if calls is not None and not calls[1] and not self._waiters and self._plain:  # the common case
            self._pool._submit_item(calls[3], arg, key)  # the argument itself: no tuple
            return
        self.emit(event, arg, key=key)

    def reserve(self, *, key: Any = None) -> EventSlot:
        """Reserve the next place in ``key``'s order for an event emitted later.

        Events of ``key`` emitted after this call reach listeners only after
        the reserved one (or after :meth:`EventSlot.cancel`). No worker thread
        waits meanwhile. Called on the socket reader thread when an event's
        arguments need a request first.

        Args:
            key: Ordering key (channel id, else server id), or None.

        Returns:
            The :class:`EventSlot` to fill.
        """
        if self._capture:
            captured = _capturing.events
            if captured is not None:  # inside capture() on this thread
                slot = CapturedSlot()
                captured.append(slot)
                return slot
        return EventSlot(self, self._pool.reserve(key=key))

    # -- running events elsewhere (an event source that runs listeners itself) -------------

    def capture(self, fn: Callable[..., None], *args: Any) -> list[Captured]:
        """Run ``fn(*args)`` and return the events emitted (or reserved) on this thread meanwhile, in order.

        They are not queued: the caller runs their listeners later, where it wants
        (:meth:`prepared`). Events other threads emit meanwhile are queued as usual.

        Args:
            fn: What emits the events (the parsers applying one socket event).
            *args: Its arguments.

        Returns:
            ``(event, args)`` pairs, and a :class:`CapturedSlot` for each reserved place.
        """
        if not self._capture:
            self._capture = True
            self._plain = False  # emit_one goes through emit, which looks for a capture
        captured: list[Captured] = []
        previous = _capturing.events
        _capturing.events = captured
        try:
            fn(*args)
        finally:
            _capturing.events = previous
        return captured

    def prepared(self, event: str, args: tuple[Any, ...]) -> Callable[[list[tuple[Any, ...]]], None] | None:
        """The function running ``event``'s listeners registered now, for a list of argument
        tuples, or None when it has none; the ``wait_for`` waiters registered now are completed
        with the event."""
        return self._prepare(event, args)

    @staticmethod
    def collect_failures(fn: Callable[..., None], *args: Any) -> list[Exception]:
        """Run ``fn(*args)`` and return what the listeners it runs on this thread raised.

        Each exception is still reported as usual (see the class).

        Returns:
            The exceptions, in order (empty: none raised).
        """
        failures: list[Exception] = []
        previous = _capturing.failures
        _capturing.failures = failures
        try:
            fn(*args)
        finally:
            _capturing.failures = previous
        return failures

    def _prepare(self, event: str, args: tuple[Any, ...]) -> _Runner | None:
        """Queue ``event`` for the waiters registered now; the function running its listeners, if any.

        The listeners are those registered when this runs (an immutable
        snapshot, read without the lock unless a ``once`` listener must be
        removed exactly once). The function takes a list of argument tuples.
        """
        calls = self._calls.get(event)
        runner: _Runner | None = None
        if calls is not None and calls[1]:
            with self._listeners_lock:
                entries = self._listeners.get(event)
                if entries:
                    runner = self._runner(event, tuple(fn for fn, _ in entries))
                    self._listeners[event] = [e for e in entries if not e[1]]
                    self._refresh(event)
        elif calls is not None:
            runner = calls[2]
        if self._waiters:
            with self._listeners_lock:
                waiters = [w for w in self._waiters if w.event == event]
            if waiters:
                self._waiter_queue.append((args, waiters))
                self._waiter_wake.set()
        if runner is not None:
            return runner
        if event == "error" and args and isinstance(args[0], BaseException):
            self._report("an 'error' event had no listener", args[0])
        elif event == "error" and args:
            self._report(f"an 'error' event had no listener: {args[0]!r}", None)
        return None

    def _runner(self, event: str, fns: tuple[Callable[..., Any], ...]) -> _Runner:
        """The function running ``fns`` for each argument tuple of a list."""
        return functools.partial(self._run_each, event, fns)

    def _run_each(self, event: str, fns: tuple[Callable[..., Any], ...], items: list[tuple[Any, ...]]) -> None:
        """Call every listener with each argument tuple in turn; stop when the pool is shut down."""
        pool = self._pool
        for args in items:
            if pool._closed:  # shut down meanwhile: the rest is dropped like queued tasks
                return
            for fn in fns:
                try:
                    fn(*args)
                except Exception as exc:  # noqa: BLE001 - reported by _listener_failed, never lost
                    self._listener_failed(event, fn, exc)

    def _run_each_one(self, event: str, fns: tuple[Callable[..., Any], ...], items: list[Any]) -> None:
        """:meth:`_run_each` for items that are each the event's single argument."""
        pool = self._pool
        for arg in items:
            if pool._closed:  # shut down meanwhile: the rest is dropped like queued tasks
                return
            for fn in fns:
                try:
                    fn(arg)
                except Exception as exc:  # noqa: BLE001 - reported by _listener_failed, never lost
                    self._listener_failed(event, fn, exc)

    def _listener_failed(self, event: str, fn: Callable[..., Any], exc: Exception) -> None:
        """One report per exception: to the ``error`` listeners, else to the log or stderr."""
        failures = _capturing.failures
        if failures is not None:  # inside collect_failures() on this thread
            failures.append(exc)
        self.report_failure(event, fn, exc)

    def report_failure(self, event: str, fn: Callable[..., Any], exc: Exception, *, what: str = "listener") -> None:
        """Report what ``fn`` raised as a listener's exception is reported (see the class).

        Args:
            event: The event (or, for scheduled work, ``"call_later"`` / ``"every"``).
            fn: The function that raised; its name is shown.
            exc: The exception.
            what: The kind of function, as the report names it (``"listener"``, ``"task"``).
        """
        closing = event != "client_close" and (self._closed or (self._closing is not None and self._closing()))
        with _hooks_lock:
            hooks = [] if closing else list(_listener_error_hooks)
        text = self._traceback_text(exc)
        for hook in hooks:
            try:
                hook(event, exc, text)
            except Exception:  # noqa: BLE001 - a hook never breaks event delivery
                log.debug("a listener error hook failed", exc_info=True)
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        if event != "error":
            handled = "error" in self._calls
            if handled:
                self._report(f"Exception in the {event!r} {what} {name}", exc, stderr=False, text=text)
                self.emit("error", exc)
                return
            self._report(
                f"Exception in the {event!r} {what} {name} (no 'error' listener is registered)", exc, text=text
            )
        else:
            self._report(f"Exception in the 'error' listener {name}", exc, text=text)

    def _traceback_text(self, exc: BaseException | None) -> str:
        """``exc``'s formatted traceback, through ``redact``; ``""`` for None."""
        text = "" if exc is None else "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return self._redact(text) if self._redact is not None else text

    def _report(
        self, what: str, exc: BaseException | None, *, stderr: bool = True, text: str | None = None
    ) -> None:
        """Make an error visible once: the logger when logging is configured, else stderr.

        The traceback text goes through ``redact`` first (``text``, when given, is
        that redacted text already); with ``stderr`` False (an ``error`` listener
        handles it) nothing is printed when logging is not configured.
        """
        redacted = self._traceback_text(exc) if text is None else text
        if _logging_reaches_a_handler(log):
            if exc is not None and REDACTED not in redacted:  # nothing was redacted: keep exc_info
                log.error("%s", what, exc_info=exc)
            else:
                log.error("%s\n%s", what, redacted.rstrip("\n"))
            return
        if not stderr:
            return
        try:
            sys.stderr.write(f"{what}:\n{redacted}" if redacted else f"{what}\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - stderr closed or replaced by something broken
            pass

    # -- wait_for ------------------------------------------------------------

    def wait_for(
        self,
        event: str,
        *,
        check: Callable[..., bool] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Block until ``event`` is emitted (and ``check`` accepts it).

        Only events emitted after this call count: an event emitted before,
        even one still on its way to listeners, never completes it. Safe from
        inside a listener: waiters are completed on their own thread, not on
        the worker pool.

        Args:
            event: Event name.
            check: Predicate taking the event's arguments; quick and non-blocking.
                An exception it raises ends this wait with that exception.
            timeout: Seconds to wait; None waits until the client is destroyed.

        Returns:
            The single argument of the event, a tuple when it has several, or
            None when it has none.

        Raises:
            TypeError: ``event`` is not a non-empty str or ``check`` is not callable.
            ValueError: ``timeout`` is negative or not a number.
            TimeoutError: ``timeout`` passed first.
            ServiceError: The emitter was shut down (``destroy()``) while waiting.
        """
        if not isinstance(event, str) or not event:
            raise TypeError(f"event must be a non-empty str, got {event!r}")
        if check is not None and not callable(check):
            raise TypeError("check must be callable or None")
        if timeout is not None and (not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be a non-negative number of seconds, got {timeout!r}")
        waiter = _Waiter(event, check)
        with self._listeners_lock:
            if self._closed:
                raise ServiceError("the client was destroyed; create a new Client")
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
                args, candidates = item
                for waiter in candidates:
                    if waiter.future.done():
                        continue
                    try:
                        ok = waiter.check is None or bool(waiter.check(*args))
                    except Exception as exc:  # noqa: BLE001 - a failing check fails its own waiter only
                        try:
                            waiter.future.set_exception(exc)
                        except Exception:  # noqa: BLE001 - cancelled concurrently
                            pass
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
