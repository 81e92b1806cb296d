"""Scheduled work: calls run once after a delay, and repeating tasks, on the worker pool.

A :class:`Scheduler` keeps the calls to make, in order of their due time, and hands each
one to the client's :class:`~service_client.events.OrderedWorkerPool` when it is due: the
call runs on a worker thread like a listener, never on the thread that keeps time. An
exception a call raises is reported as a listener's is (the ``error`` event, else the
``service_client.events`` logger or ``sys.stderr``).

Time is read from a clock: :class:`MonotonicClock` (``time.monotonic``, the default) or a
:class:`ManualClock`, whose time moves only when :meth:`ManualClock.advance` is called.
With the real clock one daemon thread, ``service_client-scheduler-<n>``, waits for the
next due time; it starts with the first pending call and ends when none is left for a
second, or at :meth:`Scheduler.close`. With a manual clock no thread keeps time:
:meth:`ManualClock.advance` runs the due calls one after another, in due order, each on
the pool, and returns when they have run, so a test of a one-hour reminder takes
milliseconds.

The scheduler also knows when its client is ready (:meth:`Scheduler.set_ready`, called
before ``ready`` is emitted): the tasks made with ``start_on_ready=True`` start then, and
:meth:`Scheduler.wait_ready` (``client.wait_until_ready``) returns. A task's times of day
are read from the clock's wall-clock time (``utcnow()``).

The client's :meth:`~service_client.Client.call_later` and
:meth:`~service_client.Client.every` are built on this module. Every class here is
thread-safe; no lock is held while user code runs.
"""

from __future__ import annotations

import datetime as _dt
import heapq
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ServiceError, ServiceTimeoutError
from .clock import Clock, ManualClock, MonotonicClock, _check_seconds, clock_for_new_clients, utcnow_of
from .workers import _thread_ids

if TYPE_CHECKING:
    from .emitter import EventEmitter
    from .workers import OrderedWorkerPool

__all__ = ["RepeatingTask", "ScheduledCall", "Scheduler"]

log = logging.getLogger("service_client.events")

F = TypeVar("F", bound=Callable[..., Any])

#: Longest single wait of the timer thread, seconds (it wakes and looks again).
_MAX_WAIT_S = 30.0
#: Seconds the timer thread stays alive with nothing pending before it ends.
_IDLE_S = 1.0
#: Waits of the timer thread after its clock failed: the first, and the longest (doubling between).
_RETRY_FIRST_S = 0.05
_RETRY_MAX_S = 5.0
#: Shortest interval of a repeating task, seconds (1 ms).
MIN_INTERVAL_S = 0.001

#: Ties between calls due at the same time go to the one scheduled first (across schedulers).
_seq = itertools.count()

_PENDING, _QUEUED, _RUNNING, _DONE, _CANCELLED = "pending", "queued", "running", "done", "cancelled"


def _check_fn(name: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(f"{name} must be callable, got {type(fn).__name__}")


def interval_seconds(seconds: float, minutes: float, hours: float) -> float:
    """``seconds + 60 * minutes + 3600 * hours``, each checked.

    Raises:
        TypeError: One is not a number.
        ValueError: One is negative or not finite, or the sum is below 1 ms (0.001 s) or not finite.
    """
    total = (_check_seconds("seconds", seconds) + 60 * _check_seconds("minutes", minutes)
             + 3600 * _check_seconds("hours", hours))
    if not math.isfinite(total):
        raise ValueError(f"seconds + 60 * minutes + 3600 * hours must be finite, got {total!r}")
    if not total >= MIN_INTERVAL_S:
        raise ValueError(f"the interval (seconds + 60 * minutes + 3600 * hours) must be at least "
                         f"{MIN_INTERVAL_S:g} seconds, got {total!r}")
    return total


def _read_clock(clock: Clock) -> float:
    """``clock.now()``, checked: a finite number of seconds.

    Raises:
        TypeError: It returned something other than an int or a float.
        ValueError: It returned NaN or an infinity.
        Exception: Whatever ``now()`` raised.
    """
    now = clock.now()
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise TypeError(f"clock.now() must return a number of seconds (int or float), got {type(now).__name__}")
    value = float(now)
    if not math.isfinite(value):
        raise ValueError(f"clock.now() must return a finite number of seconds, got {now!r}")
    return value


class ScheduledCall:
    """A call that runs once on the worker pool when its time comes; made by ``call_later``.

    Like :class:`asyncio.TimerHandle`: :meth:`cancel`, :meth:`cancelled` and :meth:`when`.
    Thread-safe.
    """

    __slots__ = ("_args", "_done", "_fn", "_label", "_name", "_scheduler", "_seq", "_state", "_when", "__weakref__")

    def __init__(
        self, scheduler: Scheduler, when: float, fn: Callable[..., Any], args: tuple[Any, ...], label: str,
        shown: Callable[..., Any],
    ) -> None:
        self._scheduler = scheduler
        self._when = when
        self._fn = fn
        self._args = args
        self._label = label
        self._name: str = getattr(shown, "__qualname__", None) or type(shown).__name__
        self._seq = next(_seq)
        self._state = _PENDING
        self._done = threading.Event()  # set once it has run, or will never run

    def __lt__(self, other: ScheduledCall) -> bool:
        return (self._when, self._seq) < (other._when, other._seq)

    def when(self) -> float:
        """When the call is (or was) due, seconds on the scheduler's clock (see ``client.clock``)."""
        return self._when

    def cancel(self) -> bool:
        """Cancel the call unless it has started.

        Returns:
            True when this cancelled it (it will never run); False when it has started or
            run already, or was cancelled before. A running call is never interrupted.
        """
        return self._scheduler._cancel(self)

    def cancelled(self) -> bool:
        """True when the call was cancelled (by :meth:`cancel` or the client's ``destroy()``)."""
        return self._state == _CANCELLED

    def done(self) -> bool:
        """True once the call has run (whether it raised or not) or was cancelled."""
        return self._state in (_DONE, _CANCELLED)

    def __repr__(self) -> str:
        return f"<ScheduledCall {self._name} when={self._when:.3f} {self._state}>"


class RepeatingTask:
    """A function run on the worker pool every interval, or at set times of day; made by ``client.every``.

    Nothing runs until :meth:`start` (or, with ``start_on_ready=True``, until the client is
    ready). An interval task's first run is due at once, the next ones every interval after
    the previous one was *due* (a fixed rate: a slow run does not shift the later ones). A
    task of times of day (``every(time=...)``) runs at the next of its times on the clock's
    wall-clock time (:meth:`~service_client.ManualClock.utcnow`), then at each one after.
    Runs never overlap, not even across :meth:`stop` and :meth:`start`: the next one is
    planned when the previous one ends, and a run that ends late skips the times it missed.
    An exception a run raises is reported as a listener's is, and the task goes on. Calling
    the task (``task()``) calls the function directly, on the calling thread. Thread-safe.
    """

    def __init__(
        self, scheduler: Scheduler, fn: Callable[..., Any], interval: float | None, count: int | None,
        times: tuple[_dt.time, ...] | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._fn = fn
        self._interval = interval
        self._times = times
        self._count = count
        self._args: tuple[Any, ...] = ()
        self._call: ScheduledCall | None = None  # the next run, pending or queued or running
        self._wall_due: _dt.datetime | None = None  # the wall-clock time of the next run (times of day)
        self._running = False
        self._runs = 0  # runs since the last start()
        self._generation = 0  # one per start(): a run of an earlier start plans nothing
        self._busy = False  # stop() came during a run that has not planned its end yet
        self._deferred = False  # start() came during that run: its first run waits for the run's end
        self._before: Callable[[], Any] | None = None
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function now, on this thread (not scheduled, not counted)."""
        return self._fn(*args, **kwargs)

    @property
    def interval(self) -> float | None:
        """Seconds between two runs; None for a task of times of day."""
        return self._interval

    @property
    def times(self) -> tuple[_dt.time, ...] | None:
        """The times of day it runs at (aware, naive ones given taken as UTC); None for an interval task."""
        return self._times

    @property
    def runs(self) -> int:
        """Runs ended since the last :meth:`start`."""
        return self._runs

    @property
    def next_run(self) -> float | None:
        """When the next run is due, seconds on the scheduler's clock; None when not running."""
        with self._scheduler._lock:
            call = self._call
            return call._when if self._running and call is not None and call._state == _PENDING else None

    def is_running(self) -> bool:
        """True from :meth:`start` until :meth:`stop`, the last of ``count`` runs, or ``destroy()``."""
        return self._running

    def before_loop(self, fn: F) -> F:
        """Decorator: call ``fn()`` on the worker before the first run of each :meth:`start`.

        discord.py's ``before_loop``. The first run waits for it: a function that blocks until
        the client is ready makes the task start on time wherever it was started::

            @client.every(hours=1)
            def leaderboard(): ...

            @leaderboard.before_loop
            def wait_for_the_client():
                client.wait_until_ready()

        When ``fn`` raises, the exception is reported like a listener's and the task stops
        without running; once the client is destroyed it is only logged at DEBUG level
        (``wait_until_ready`` raises then: a normal end, not an error). When the task is stopped (from ``fn`` itself or another thread) or
        the client destroyed while ``fn`` runs, the first run does not start. Returns ``fn``
        unchanged.

        Raises:
            TypeError: ``fn`` is not callable.
        """
        _check_fn("the before_loop function", fn)
        self._before = fn
        return fn

    def start(self, *args: Any) -> None:
        """Start running: the first run is due at once (at the next time of day for a task of times).

        Called while a run of an earlier start is still going on (``stop()`` from inside it,
        then ``start()``), the first run waits until that run has ended: runs never overlap.

        Args:
            *args: Passed to the function at every run.

        Raises:
            RuntimeError: The task is running already (call :meth:`stop` first).
            ServiceError: The client was destroyed.
            Exception: What the clock's ``now()`` or ``utcnow()`` raised (the task stays stopped).
        """
        scheduler = self._scheduler
        with scheduler._lock:
            if scheduler._closed:
                raise ServiceError("the client was destroyed; scheduled work cannot start")
            if self._running:
                raise RuntimeError(f"the task {self.__name__} is running already; stop() it first")
            self._generation += 1
            if self._busy:  # a run of the last start goes on: it plans this start's first run
                self._deferred = True
                self._call = None
            else:
                try:
                    self._call = self._push_first()  # reads the clock: nothing changes when it fails
                except BaseException:
                    self._generation -= 1
                    raise
            self._args = args
            self._runs = 0
            self._running = True
            scheduler._tasks.add(self)

    def _push_first(self) -> ScheduledCall:
        """Plan the first run of the current start (``_lock`` held)."""
        scheduler = self._scheduler
        now = _read_clock(scheduler._clock)
        when = now
        if self._times is not None:
            wall = utcnow_of(scheduler._clock)
            self._wall_due = _next_time_of_day(self._times, wall)
            when = now + (self._wall_due - wall).total_seconds()
        return scheduler._push_at(when, self._run_once, (self._generation,), "every", self._fn)

    def stop(self) -> None:
        """Stop: no run starts after this call; a run going on now ends normally. Idempotent.

        Safe from inside the task's own run. A task made with ``start_on_ready=True`` and
        stopped before the client is ready is not started at ready.
        """
        scheduler = self._scheduler
        with scheduler._lock:
            self._running = False
            self._deferred = False
            call, self._call = self._call, None
            scheduler._tasks.discard(self)
            if self in scheduler._on_ready:  # a start_on_ready task stopped before ready stays stopped
                scheduler._on_ready.remove(self)
            # Under the same lock as the look at its state: a worker cannot start it in between.
            cancelled = call is not None and scheduler._cancel_locked(call)
            if call is not None and call._state == _RUNNING:
                self._busy = True  # cleared when that run ends
        if cancelled and call is not None:
            call._done.set()

    def change_interval(
        self, *, seconds: float = 0, minutes: float = 0, hours: float = 0,
        time: _dt.time | Iterable[_dt.time] | None = None,
    ) -> None:
        """Set the interval, or the times of day; a pending run is moved accordingly.

        With an interval, a pending run moves to the previous due time plus the new interval;
        with ``time``, to the next of those times. A task may switch from one kind to the other.

        Args:
            seconds, minutes, hours: Added up; at least 1 ms in all (without ``time``).
            time: A :class:`datetime.time` or several (naive ones are UTC), instead of an interval.

        Raises:
            TypeError: One is not a number, or ``time`` holds something other than a time.
            ValueError: One is negative or not finite, they add up to less than 1 ms, ``time``
                is empty, or both an interval and ``time`` were given.
        """
        interval, times = _interval_or_times(seconds, minutes, hours, time)
        scheduler = self._scheduler
        with scheduler._lock:
            old, self._interval, self._times = self._interval, interval, times
            call = self._call
            if not self._running or call is None or call._state != _PENDING:
                return
            now = _read_clock(scheduler._clock)
            if times is not None:
                wall = utcnow_of(scheduler._clock)
                self._wall_due = _next_time_of_day(times, wall)
                when = now + (self._wall_due - wall).total_seconds()
            elif self._runs == 0 and old is not None:
                return  # the first run stays due at once
            else:
                base = call._when - old if old is not None else now
                when = max(base + interval if interval is not None else now, now)
            call._state = _CANCELLED
            call._done.set()
            scheduler._cancelled += 1
            self._call = scheduler._push_at(when, self._run_once, (self._generation,), "every", self._fn)

    def _run_once(self, generation: int) -> None:
        """One run (on a worker): the before_loop function first, then the function; plan the next run."""
        ran = False
        try:
            before = self._before if self._runs == 0 else None
            if before is not None:
                try:
                    before()
                except Exception as exc:  # noqa: BLE001 - reported like a listener's, never lost
                    if self._scheduler._closed:  # destroyed meanwhile (wait_until_ready raised): a normal end
                        log.debug("the before_loop of %s ended with the client's destroy(): %r", self.__name__, exc)
                        return
                    self._scheduler._report("every", "before_loop", before, exc)
                    with self._scheduler._lock:
                        if generation == self._generation:
                            self._running = False
                            self._call = None
                            self._scheduler._tasks.discard(self)
                    return
                with self._scheduler._lock:  # stop() (or destroy()) came while it ran: no run starts
                    if generation != self._generation or not self._running or self._scheduler._closed:
                        return
            ran = True
            self._fn(*self._args)
        except Exception as exc:  # noqa: BLE001 - reported like a listener's, never lost
            self._scheduler._report("every", "task", self._fn, exc)
        finally:
            self._plan_next(generation, ran=ran)

    def _plan_next(self, generation: int, *, ran: bool = True) -> None:
        """Plan the run after the one that just ended (on its worker).

        When the clock fails, the failure is reported and the next run is planned from the
        due time of the last one (the interval after it, or the next time of day after its
        time): a clock that fails once does not end the task. A task that cannot be planned
        without the clock (its first run after a deferred start, or a switch to times of day
        during a run) stops, reported.
        """
        scheduler = self._scheduler
        failure: Exception | None = None
        with scheduler._lock:
            if generation != self._generation:  # stopped (and maybe started again) during the run
                self._busy = False
                if self._deferred and self._running and not scheduler._closed:
                    self._deferred = False
                    try:
                        self._call = self._push_first()
                    except Exception as exc:  # noqa: BLE001 - reported below, never lost
                        failure = exc
                        self._stop_locked()
            else:
                self._busy = False
                if ran:  # a first run its before_loop stopped does not count
                    self._runs += 1
                call = self._call
                if not self._running or call is None or scheduler._closed:
                    return
                if self._count is not None and self._runs >= self._count:
                    self._stop_locked()
                    return
                try:
                    when: float | None = self._next_when(call._when)
                except Exception as exc:  # noqa: BLE001 - reported below, never lost
                    failure = exc
                    when = self._next_when_without_clock(call._when)
                if when is None:
                    self._stop_locked()
                else:
                    self._call = scheduler._push_at(when, self._run_once, (generation,), "every", self._fn)
        if failure is not None:
            clock = scheduler._clock
            scheduler._report("every", "clock", getattr(clock, "now", type(clock)), failure)

    def _stop_locked(self) -> None:
        """Stop (``_lock`` held): the task is no longer running."""
        self._running = False
        self._call = None
        self._scheduler._tasks.discard(self)

    def _next_when(self, due: float) -> float:
        """When the run after the one due at ``due`` is due, read from the clock (``_lock`` held).

        Raises:
            Exception: What the clock raised, or its bad answer (TypeError, ValueError).
        """
        clock = self._scheduler._clock
        now = _read_clock(clock)
        if self._times is not None:
            wall = utcnow_of(clock)
            last = self._wall_due if self._wall_due is not None and self._wall_due > wall else wall
            self._wall_due = _next_time_of_day(self._times, last)
            when = now + (self._wall_due - wall).total_seconds()
        else:
            assert self._interval is not None
            when = due + self._interval
            if when <= now:  # the run ended late: skip the times it missed, keep the phase
                when += (math.floor((now - when) / self._interval) + 1) * self._interval
        # Float rounding (a large clock value) may leave ``when`` where it was: go forward.
        return max(when, math.nextafter(max(now, due), math.inf))

    def _next_when_without_clock(self, due: float) -> float | None:
        """The next due time from the last one alone, when the clock failed; None when it cannot be told."""
        if self._times is None:
            assert self._interval is not None
            return max(due + self._interval, math.nextafter(due, math.inf))
        if self._wall_due is None:
            return None
        last, self._wall_due = self._wall_due, _next_time_of_day(self._times, self._wall_due)
        return due + (self._wall_due - last).total_seconds()

    def __repr__(self) -> str:
        state = "running" if self._running else "stopped"
        if self._times is not None:
            shown = "at " + ", ".join(_time_text(t) for t in self._times)
        else:
            shown = f"every {self._interval:g} s"
        return f"<RepeatingTask {self.__name__} {shown} {state} runs={self._runs}>"


def _check_times(time: object) -> tuple[_dt.time, ...]:
    """``time`` (a :class:`datetime.time` or an iterable of them) as a tuple of aware times, in the
    order given, each time of day once (naive ones taken as UTC).

    Raises:
        TypeError: Not a time nor an iterable of times.
        ValueError: An empty iterable.
    """
    if isinstance(time, _dt.time):
        given: list[object] = [time]
    elif isinstance(time, Iterable) and not isinstance(time, (str, bytes)):
        given = list(time)
    else:
        raise TypeError(f"time must be a datetime.time or a list of them, got {type(time).__name__}")
    if not given:
        raise ValueError("time must hold at least one datetime.time")
    out: list[_dt.time] = []
    for item in given:
        if not isinstance(item, _dt.time):
            raise TypeError(f"every time must be a datetime.time, got {type(item).__name__}")
        aware = item if item.tzinfo is not None else item.replace(tzinfo=_dt.timezone.utc)
        if not any(_same_time(aware, known) for known in out):
            out.append(aware)
    return tuple(out)


def _time_text(time_of_day: _dt.time) -> str:
    """``09:00:00+00:00``, or ``09:00:00 Europe/Paris`` for a time in a zone (which has no fixed offset)."""
    if time_of_day.utcoffset() is None and time_of_day.tzinfo is not None:
        return f"{time_of_day.isoformat()} {time_of_day.tzinfo}"
    return time_of_day.isoformat()


def _same_time(a: _dt.time, b: _dt.time) -> bool:
    """Whether two aware times are the same time of day every day.

    ``==`` is not enough: a time in a :class:`zoneinfo.ZoneInfo` has no UTC offset without a
    date, so Python compares it as naive, and 9:00 in Paris would equal 9:00 in New York.
    """
    if a.utcoffset() is not None and b.utcoffset() is not None:  # fixed offsets: the same instant
        return a == b
    return a.tzinfo == b.tzinfo and a.replace(tzinfo=None) == b.replace(tzinfo=None) and a.fold == b.fold


def _next_time_of_day(times: tuple[_dt.time, ...], after: _dt.datetime) -> _dt.datetime:
    """The first of ``times`` (each in its own time zone) strictly after ``after``, in UTC."""
    best: _dt.datetime | None = None
    for time_of_day in times:
        zone = time_of_day.tzinfo or _dt.timezone.utc
        local_day = after.astimezone(zone).date()
        for days in range(-1, 3):  # a day either side covers time zones and summer time
            candidate = _dt.datetime.combine(
                local_day + _dt.timedelta(days=days), time_of_day.replace(tzinfo=None), tzinfo=zone,
            ).astimezone(_dt.timezone.utc)
            if candidate > after:
                if best is None or candidate < best:
                    best = candidate
                break
    assert best is not None  # some day within the next three has each time after ``after``
    return best


def _interval_or_times(
    seconds: float, minutes: float, hours: float, time: object,
) -> tuple[float | None, tuple[_dt.time, ...] | None]:
    """``(interval, None)`` or ``(None, times)`` from ``every``'s arguments, checked."""
    if time is None:
        return interval_seconds(seconds, minutes, hours), None
    for name, value in (("seconds", seconds), ("minutes", minutes), ("hours", hours)):
        _check_seconds(name, value)
        if value:
            raise ValueError(f"give either time= or an interval (seconds, minutes, hours), not both; got {name}={value!r}")
    return None, _check_times(time)


class Scheduler:
    """The pending calls of one client, in due order, handed to its worker pool when due.

    Args:
        pool: The pool that runs the calls.
        emitter: Reports what a call raises, as it reports a listener's exceptions.
        clock: Where time is read; default the clock of new clients in this context
            (the test world's, inside a test of ``bot_world``), else a :class:`MonotonicClock`.
        name: Thread name prefix.
    """

    def __init__(
        self,
        pool: OrderedWorkerPool,
        emitter: EventEmitter,
        *,
        clock: Clock | None = None,
        name: str = "service_client",
    ) -> None:
        self._pool = pool
        self._emitter = emitter
        self._name = name
        self._lock = threading.Condition(threading.Lock())  # guards every field below
        if clock is None:
            clock = clock_for_new_clients()
        self._clock: Clock = MonotonicClock() if clock is None else clock
        self._ready = False  # the client is ready (set_ready)
        self._on_ready: list[RepeatingTask] = []  # tasks made with start_on_ready=True before ready
        self._heap: list[ScheduledCall] = []
        self._cancelled = 0  # cancelled calls still in the heap
        self._tasks: set[RepeatingTask] = set()  # started and not stopped
        self._queued: set[ScheduledCall] = set()  # handed to the pool, not started
        self._thread: threading.Thread | None = None
        self._closed = False
        if isinstance(self._clock, ManualClock):
            self._clock._attach(self)

    # -- the clock ---------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        """The clock scheduled times are read from."""
        return self._clock

    def set_clock(self, clock: Clock | None) -> None:
        """Read time from ``clock`` from now on (None: the real clock).

        Pending calls keep the delay they had left. With a :class:`ManualClock`, nothing runs
        until it is advanced.

        ``clock.now()`` is read once before anything changes; if it fails, the old clock
        stays. If the old clock's ``now()`` fails, the pending calls keep the delays between
        them and the earliest one falls due at once.

        Raises:
            TypeError: ``clock`` has no ``now()`` method, or its ``now()`` returned something
                other than an int or a float.
            ValueError: Its ``now()`` returned NaN or an infinity.
            Exception: What its ``now()`` raised.
        """
        new: Clock = MonotonicClock() if clock is None else clock
        if not callable(getattr(new, "now", None)):
            raise TypeError(f"clock must have a now() method returning seconds, got {type(clock).__name__}")
        with self._lock:
            new_now = _read_clock(new)  # raises before anything changed
            try:
                shift = new_now - _read_clock(self._clock)
            except Exception:  # noqa: BLE001 - a broken old clock must not keep the client on it
                log.warning("the old clock's now() failed; pending calls are timed from now", exc_info=True)
                pending = [call._when for call in self._heap if call._state == _PENDING]
                shift = new_now - min(pending) if pending else 0.0
            old, self._clock = self._clock, new
            for call in self._heap:
                call._when += shift
            for call in self._queued:  # handed to the pool, not started
                call._when += shift
            for task in self._tasks:  # a run going on plans the next one from its due time
                running = task._call
                if running is not None and running._state == _RUNNING:
                    running._when += shift
                    task._wall_due = None  # its next time of day is read from the new clock's wall time
            self._lock.notify_all()
        if isinstance(old, ManualClock) and old is not new:
            old._detach(self)
        if isinstance(new, ManualClock):
            new._attach(self)
        else:
            with self._lock:
                self._ensure_thread()

    # -- scheduling --------------------------------------------------------------------------

    def call_later(self, delay_s: float, fn: Callable[..., Any], *args: Any) -> ScheduledCall:
        """Run ``fn(*args)`` on the worker pool once ``delay_s`` seconds have passed.

        Raises:
            TypeError: ``delay_s`` is not a number, or ``fn`` is not callable.
            ValueError: ``delay_s`` is negative or not finite (or an int too large for a float).
            ServiceError: The scheduler was closed (the client destroyed).
        """
        delay = _check_seconds("delay_s", delay_s)
        _check_fn("fn", fn)
        with self._lock:
            return self._push_at(self._clock.now() + delay, fn, args, "call_later", fn)

    def every(
        self, *, seconds: float = 0, minutes: float = 0, hours: float = 0,
        time: _dt.time | Iterable[_dt.time] | None = None, count: int | None = None,
        start_on_ready: bool = False,
    ) -> Callable[[Callable[..., Any]], RepeatingTask]:
        """A decorator making a function a :class:`RepeatingTask` (not started, unless ready and ``start_on_ready``).

        Args:
            seconds, minutes, hours: The interval, added up, seconds (at least 1 ms in all).
            time: A :class:`datetime.time` or several (naive ones are UTC), instead of an interval.
            count: Stop after this many runs; None runs until stopped.
            start_on_ready: Start the task (without arguments) at :meth:`set_ready`, or at once
                when it was called already.

        Returns:
            The decorator; it raises TypeError when the decorated object is not callable, and
            ServiceError with ``start_on_ready`` once the scheduler was closed (the client destroyed).

        Raises:
            TypeError: An interval part is not a number, ``time`` not a time or times,
                ``count`` not an int, ``start_on_ready`` not a bool.
            ValueError: An interval part is negative or not finite, the interval is below 1 ms,
                both an interval and ``time`` are given, ``time`` is empty, or ``count`` is below 1.
        """
        interval, times = _interval_or_times(seconds, minutes, hours, time)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            raise TypeError(f"count must be an int or None, got {type(count).__name__}")
        if count is not None and count < 1:
            raise ValueError(f"count must be at least 1, got {count!r}")
        if not isinstance(start_on_ready, bool):
            raise TypeError(f"start_on_ready must be a bool, got {type(start_on_ready).__name__}")

        def decorator(fn: Callable[..., Any]) -> RepeatingTask:
            """Wrap ``fn`` in a :class:`RepeatingTask`."""
            _check_fn("the decorated object", fn)
            task = RepeatingTask(self, fn, interval, count, times)
            if start_on_ready:
                with self._lock:
                    if self._closed:  # it would never start: say so rather than keep it silently
                        raise ServiceError("the client was destroyed; a start_on_ready task would never start")
                    ready = self._ready
                    if not ready:
                        self._on_ready.append(task)
                if ready:
                    task.start()
            return task

        return decorator

    # -- the client's readiness ----------------------------------------------------------------

    def set_ready(self) -> None:
        """The client is ready: start the ``start_on_ready`` tasks, wake :meth:`wait_ready`. Idempotent.

        Called by the client before it emits ``ready``, so those tasks' first runs are due
        before any ``ready`` listener runs and before ``login()`` returns. Never raises: a
        task that cannot start (its clock failed) is reported like a listener's exception
        and the others start.
        """
        with self._lock:
            if self._ready or self._closed:
                return
            self._ready = True
            tasks, self._on_ready = self._on_ready, []
            self._lock.notify_all()
        for task in tasks:
            if task.is_running():
                continue  # started by hand already
            try:
                task.start()
            except ServiceError:
                return  # destroyed meanwhile
            except Exception as exc:  # noqa: BLE001 - one task's clock failure must not stop the login, nor the others
                if not task.is_running():  # else started by hand meanwhile (RuntimeError): nothing wrong
                    self._report("every", "start", task._fn, exc)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Block until :meth:`set_ready` was called.

        Args:
            timeout: Longest wait, seconds (checked by the caller, ``client.wait_until_ready``);
                None waits until ready or closed.

        Raises:
            ServiceError: The scheduler was closed (the client destroyed) first.
            ServiceTimeoutError: ``timeout`` seconds passed first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                if self._closed:
                    raise ServiceError("the client was destroyed; it will never be ready")
                if self._ready:
                    return
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise ServiceTimeoutError(f"the client was not ready within {timeout:g} s")
                self._lock.wait(_MAX_WAIT_S if left is None else min(left, _MAX_WAIT_S))  # a lock's wait has a ceiling

    def _push_at(self, when: float, fn: Callable[..., Any], args: tuple[Any, ...], label: str,
                 shown: Callable[..., Any]) -> ScheduledCall:
        """Add a call due at ``when`` (``_lock`` held); ``shown`` is the function its name shows."""
        if self._closed:
            raise ServiceError("the client was destroyed; create a new Client to schedule work")
        call = ScheduledCall(self, when, fn, args, label, shown)
        heapq.heappush(self._heap, call)
        if self._heap[0] is call:
            self._lock.notify_all()
        self._ensure_thread()
        return call

    def _cancel(self, call: ScheduledCall) -> bool:
        with self._lock:
            cancelled = self._cancel_locked(call)
        if cancelled:
            call._done.set()
        return cancelled

    def _cancel_locked(self, call: ScheduledCall) -> bool:
        """Mark ``call`` cancelled unless it has started (``_lock`` held); the caller sets ``_done``."""
        if call._state not in (_PENDING, _QUEUED):
            return False
        if call._state == _PENDING:
            self._cancelled += 1
            if self._cancelled > 64 and self._cancelled * 2 > len(self._heap):
                self._heap = [c for c in self._heap if c._state == _PENDING]
                heapq.heapify(self._heap)
                self._cancelled = 0
        self._queued.discard(call)
        call._state = _CANCELLED
        return True

    def _pop_due(self, until: float) -> ScheduledCall | None:
        """The earliest pending call due at ``until`` or before, taken out (``_lock`` held)."""
        heap = self._heap
        while heap and heap[0]._state != _PENDING:
            heapq.heappop(heap)
            self._cancelled -= 1
        if heap and heap[0]._when <= until:
            call = heapq.heappop(heap)
            call._state = _QUEUED
            self._queued.add(call)
            return call
        return None

    def _peek(self) -> tuple[float, int] | None:
        """``(when, seq)`` of the earliest pending call, or None."""
        with self._lock:
            self._pop_due(-math.inf)  # drops the cancelled calls at the head
            return (self._heap[0]._when, self._heap[0]._seq) if self._heap else None

    def _submit(self, call: ScheduledCall) -> None:
        """Hand a taken call to the pool (no lock held)."""
        if not self._pool.submit(lambda: self._run(call)):
            with self._lock:
                self._queued.discard(call)
                if call._state == _QUEUED:
                    call._state = _CANCELLED
            call._done.set()

    def _run(self, call: ScheduledCall) -> None:
        """Run a call on a worker, unless it was cancelled meanwhile."""
        with self._lock:
            self._queued.discard(call)
            if call._state != _QUEUED or self._closed:
                if call._state == _QUEUED:
                    call._state = _CANCELLED
                run = False
            else:
                call._state = _RUNNING
                run = True
        try:
            if run:
                try:
                    call._fn(*call._args)
                except Exception as exc:  # noqa: BLE001 - reported like a listener's, never lost
                    self._report(call._label, "callback", call._fn, exc)
        finally:
            if run:
                with self._lock:
                    call._state = _DONE
            call._done.set()

    def _report(self, label: str, what: str, fn: Callable[..., Any], exc: Exception) -> None:
        self._emitter.report_failure(label, fn, exc, what=what)

    # -- the timer thread (real clock) -------------------------------------------------------

    def _ensure_thread(self) -> None:
        """Start the timer thread when calls are pending on a real clock (``_lock`` held).

        A thread that is no longer alive (it should never die, see :meth:`_loop`) is replaced.
        """
        if (self._thread is None or not self._thread.is_alive()) and self._heap and not self._closed and not isinstance(self._clock, ManualClock):
            self._thread = threading.Thread(
                target=self._loop, name=f"{self._name}-scheduler-{next(_thread_ids)}", daemon=True
            )
            self._thread.start()

    def _loop(self) -> None:
        """The timer thread: hand the due calls to the pool until closed or idle.

        It never dies of an exception: what the clock (or anything else here) raises is
        reported like a listener's exception, and the thread tries again after a wait that
        doubles from 50 ms up to 5 s (shorter when the clock is replaced).
        """
        me = threading.current_thread()
        retry = 0.0
        while True:
            try:
                due = self._next_due(me)
                if due is None:
                    return
                for call in due:
                    self._submit(call)
                retry = 0.0
            except Exception as exc:  # noqa: BLE001 - reported, then the thread goes on
                retry = min(max(retry * 2, _RETRY_FIRST_S), _RETRY_MAX_S)
                self._report_loop_failure(exc, retry)
                if not self._retry_wait(me, retry):
                    return

    def _next_due(self, me: threading.Thread) -> list[ScheduledCall] | None:
        """Wait for the next due calls and take them; None when the thread must end."""
        with self._lock:
            idle_since: float | None = None
            while True:
                if self._closed or isinstance(self._clock, ManualClock) or self._thread is not me:
                    if self._thread is me:
                        self._thread = None
                    return None
                now = _read_clock(self._clock)
                due: list[ScheduledCall] = []
                while (call := self._pop_due(now)) is not None:
                    due.append(call)
                if due:
                    return due
                if not self._heap:
                    mono = time.monotonic()
                    if idle_since is None:
                        idle_since = mono
                    elif mono - idle_since >= _IDLE_S:
                        self._thread = None
                        return None
                    self._lock.wait(_IDLE_S)
                    continue
                idle_since = None
                self._lock.wait(min(max(self._heap[0]._when - now, 0.0), _MAX_WAIT_S))

    def _report_loop_failure(self, exc: Exception, retry: float) -> None:
        """Report an exception of the timer thread (no lock held); never raises."""
        try:
            clock = self._clock
            self._report("scheduler", "clock", getattr(clock, "now", type(clock)), exc)
        except Exception:  # noqa: BLE001 - the log is the last resort
            log.exception("the scheduler's timer thread failed")
        log.warning("the scheduler's timer thread failed (%s); it tries again in %g s", type(exc).__name__, retry)

    def _retry_wait(self, me: threading.Thread, seconds: float) -> bool:
        """Wait ``seconds`` after a failure, less if the clock is replaced; False when the thread must end."""
        deadline = time.monotonic() + seconds
        with self._lock:
            clock = self._clock
            while not self._closed and self._thread is me and self._clock is clock:
                left = deadline - time.monotonic()
                if left <= 0:
                    return True
                self._lock.wait(left)
            if self._thread is me and self._closed:
                self._thread = None
            return self._thread is me

    # -- shutdown ----------------------------------------------------------------------------

    def close(self, timeout: float = 1.0) -> None:
        """Cancel every pending call and repeating task, and stop the timer thread. Idempotent.

        A call running now ends normally; one handed to the pool and not started never runs
        and is marked cancelled (``done()`` and ``cancelled()`` are True at once).
        Later scheduling raises :class:`ServiceError`.

        Args:
            timeout: Seconds to wait for the timer thread to end.
        """
        with self._lock:
            self._closed = True
            calls, self._heap = self._heap, []
            self._cancelled = 0
            tasks, self._tasks = list(self._tasks), set()
            for task in tasks:
                task._running = False
                task._call = None
            thread, self._thread = self._thread, None
            queued, self._queued = list(self._queued), set()
            calls.extend(queued)  # handed to the pool, not started: their pool task will not run them
            for call in calls:
                if call._state in (_PENDING, _QUEUED):
                    call._state = _CANCELLED
            self._lock.notify_all()
        for call in calls:
            call._done.set()
        if isinstance(self._clock, ManualClock):
            self._clock._detach(self)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def pending(self) -> int:
        """Calls waiting for their time (cancelled ones not counted)."""
        with self._lock:
            return sum(1 for call in self._heap if call._state == _PENDING)

    @property
    def thread(self) -> threading.Thread | None:
        """The timer thread while it runs, else None."""
        return self._thread
