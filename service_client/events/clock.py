"""The clocks scheduled work is timed by: the real one, and one that tests move by hand.

A clock tells two times: ``now()``, monotonic seconds from an arbitrary origin (what delays
and intervals are measured on), and ``utcnow()``, the wall-clock time as an aware UTC
:class:`~datetime.datetime` (what times of day and expiry dates are read from).

:class:`MonotonicClock` reads :func:`time.monotonic` and the system's wall clock; every client
starts with one. :class:`ManualClock` stands still until :meth:`ManualClock.advance` moves
both of its times, running the scheduled work that falls due on the way (the test world's
``bot_world.advance``). Import them from ``service_client``.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import math
import threading
import time
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["Clock", "ManualClock", "MonotonicClock", "clock_for_new_clients", "new_clients_use", "utcnow_of"]


class Clock(Protocol):
    """What a :class:`Scheduler` reads time from.

    ``now()`` and ``utcnow()`` are called while the scheduler keeps its books: they must
    return at once and never call into the client. A clock without ``utcnow()`` is accepted
    by ``set_clock``; its wall-clock time is then the system's.
    """

    def now(self) -> float:
        """The current time, seconds, on a clock that never goes back (its origin is arbitrary)."""
        ...

    def utcnow(self) -> _dt.datetime:
        """The current wall-clock time, an aware :class:`~datetime.datetime` in UTC."""
        ...


def utcnow_of(clock: object) -> _dt.datetime:
    """``clock.utcnow()`` as an aware UTC datetime; the system's when ``clock`` has no ``utcnow``.

    Raises:
        TypeError: ``utcnow()`` returned something other than an aware datetime.
        Exception: What ``utcnow()`` raised.
    """
    read = getattr(clock, "utcnow", None)
    if read is None:
        return _dt.datetime.now(_dt.timezone.utc)
    value = read()
    if not isinstance(value, _dt.datetime) or value.utcoffset() is None:
        raise TypeError(f"clock.utcnow() must return an aware datetime, got {value!r}")
    return value.astimezone(_dt.timezone.utc)


class MonotonicClock:
    """The real clock: :func:`time.monotonic` seconds and the system's wall clock. The default of every client."""

    def now(self) -> float:
        """``time.monotonic()``, seconds."""
        return time.monotonic()

    def utcnow(self) -> _dt.datetime:
        """The system's wall-clock time, an aware UTC datetime (``datetime.now(timezone.utc)``)."""
        return _dt.datetime.now(_dt.timezone.utc)

    def __repr__(self) -> str:
        return "<MonotonicClock>"


def _check_seconds(name: str, value: object, *, positive: bool = False) -> float:
    """``value`` as a float number of seconds; TypeError / ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds (int or float), got {type(value).__name__}")
    wanted = "> 0" if positive else ">= 0"
    try:
        seconds = float(value)
    except OverflowError:  # an int too large for a float
        raise ValueError(f"{name} must be a finite number of seconds {wanted}, got an int too large "
                         f"for a float ({type(value).__name__} of {int(value).bit_length()} bits)") from None
    if not math.isfinite(seconds) or seconds < 0 or (positive and seconds == 0):
        raise ValueError(f"{name} must be a finite number of seconds {wanted}, got {value!r}")
    return seconds



#: A call due this little after the target of :meth:`ManualClock.advance` runs too: the
#: wall-clock time has microseconds, and a time of day planned on it lands a float rounding
#: away from the target ``advance_to`` computes for it.
_DUE_SLACK_S = 1e-6


class ManualClock:
    """A clock that stands still until :meth:`advance` moves it: scheduled work in tests.

    Give it to a client (``client.set_clock(clock)``; the test world's ``bot_world`` does it
    for the bot's client): from then on nothing the client schedules runs by itself, and
    :meth:`advance` runs what falls due, without waiting. Both of its times move together:
    ``advance(60)`` adds 60 s to :meth:`now` and one minute to :meth:`utcnow`. Thread-safe,
    but advance it from one thread at a time, never from scheduled work itself.

    Args:
        start: The time :meth:`now` shows at first, seconds.
        utc: The wall-clock time :meth:`utcnow` shows at first, an aware datetime (any time
            zone; shown in UTC); default the system's time when the clock is made.

    Raises:
        TypeError: ``start`` is not a number, or ``utc`` is not an aware datetime.
        ValueError: ``start`` is negative or not finite, or ``utc`` is out of range in UTC.
    """

    def __init__(self, start: float = 0.0, *, utc: _dt.datetime | None = None) -> None:
        self._now = self._start = _check_seconds("start", start)
        if utc is None:
            utc = _dt.datetime.now(_dt.timezone.utc)
        elif not isinstance(utc, _dt.datetime) or utc.utcoffset() is None:
            raise TypeError(f"utc must be an aware datetime (with tzinfo), got {utc!r}")
        try:
            self._utc0 = utc.astimezone(_dt.timezone.utc)
        except OverflowError:
            raise ValueError(f"utc is out of range once in UTC, got {utc!r}") from None
        self._lock = threading.Lock()  # guards _now and _schedulers
        self._schedulers: weakref.WeakSet[Scheduler] = weakref.WeakSet()

    def now(self) -> float:
        """The time it shows, seconds."""
        return self._now

    def utcnow(self) -> _dt.datetime:
        """The wall-clock time it shows: ``utc`` given at creation plus the seconds advanced since (aware, UTC)."""
        return self._utc0 + _dt.timedelta(seconds=self._now - self._start)

    def advance_to(self, when: _dt.datetime, *, timeout: float = 10.0) -> int:
        """Advance to the wall-clock time ``when`` (see :meth:`advance`).

        When ``when`` is not after :meth:`utcnow`, the clock does not move and only what is
        due now runs, as with ``advance(0)``.

        ::

            tomorrow_9am = datetime.datetime(2030, 1, 2, 9, 0, tzinfo=datetime.timezone.utc)
            clock.advance_to(tomorrow_9am)

        Args:
            when: An aware datetime (any time zone).
            timeout: Longest wait for one call to end, seconds.

        Returns:
            How many calls ran.

        Raises:
            TypeError: ``when`` is not an aware datetime.
            TimeoutError: A call did not end within ``timeout``.
        """
        if not isinstance(when, _dt.datetime) or when.utcoffset() is None:
            raise TypeError(f"when must be an aware datetime (with tzinfo), got {when!r}")
        return self.advance(max(0.0, (when - self.utcnow()).total_seconds()), timeout=timeout)

    def _attach(self, scheduler: Scheduler) -> None:
        with self._lock:
            self._schedulers.add(scheduler)

    def _detach(self, scheduler: Scheduler) -> None:
        with self._lock:
            self._schedulers.discard(scheduler)

    def advance(self, seconds: float, *, timeout: float = 10.0) -> int:
        """Move the time ``seconds`` forward, running the work that falls due on the way.

        Each due call runs on its client's worker pool, one after another in due order (ties:
        the one scheduled first), and the clock shows the call's due time while it runs, so
        work that schedules more work (a repeating task's next run, a ``call_later`` from a
        callback) is run too when it falls due within the advance. Returns when all of it has
        run; the clock then shows the old time plus ``seconds``. ``advance(0)`` runs what is
        due now. A call due less than a microsecond after that time (float rounding, as of a
        time of day reached with :meth:`advance_to`) runs too, the clock showing the target.

        Args:
            seconds: How far to move, seconds (>= 0).
            timeout: Longest wait for one call to end, seconds.

        Returns:
            How many calls ran.

        Raises:
            TypeError: ``seconds`` or ``timeout`` is not a number.
            ValueError: ``seconds`` or ``timeout`` is negative or not finite, or ``seconds``
                would move :meth:`utcnow` past :attr:`datetime.datetime.max` (nothing moves).
            TimeoutError: A call did not end within ``timeout`` (the clock stays at its due time).
        """
        step = _check_seconds("seconds", seconds)
        wait = min(_check_seconds("timeout", timeout), threading.TIMEOUT_MAX)  # a longer wait overflows
        with self._lock:
            target = self._now + step
        try:
            self._utc0 + _dt.timedelta(seconds=target - self._start)
        except OverflowError:  # its wall-clock time could not be told any more
            raise ValueError(f"seconds={seconds!r} would move the clock past the latest datetime "
                             f"({_dt.datetime.max.year}-12-31)") from None
        ran = 0
        while True:
            with self._lock:
                schedulers = list(self._schedulers)
            best: tuple[float, int] | None = None
            owner: Scheduler | None = None
            for scheduler in schedulers:
                head = scheduler._peek()
                if head is not None and head[0] <= target + _DUE_SLACK_S and (best is None or head < best):
                    best, owner = head, scheduler
            if best is None or owner is None:
                break
            with self._lock:
                self._now = max(self._now, min(best[0], target))
            with owner._lock:
                call = owner._pop_due(best[0])
            if call is None:  # cancelled or closed meanwhile
                continue
            owner._submit(call)
            if not call._done.wait(wait):
                raise TimeoutError(f"the scheduled call {call._name} did not end within {wait:g} s")
            ran += 1
        with self._lock:
            self._now = max(self._now, target)
        return ran

    def __repr__(self) -> str:
        return f"<ManualClock now={self._now:g} utc={self.utcnow().isoformat()}>"


#: The clock that clients made in this context start with (None: a new MonotonicClock each).
_NEW_CLIENTS_CLOCK: contextvars.ContextVar[Clock | None] = contextvars.ContextVar(
    "service_client_new_clients_clock", default=None)


def clock_for_new_clients() -> Clock | None:
    """The clock a client made now, on this thread, starts with; None for the real clock."""
    return _NEW_CLIENTS_CLOCK.get()


@contextlib.contextmanager
def new_clients_use(clock: Clock | None) -> Iterator[None]:
    """Within the block, on this thread (this context), every new client starts timed by ``clock``.

    The test world uses it so that a bot built during a test (by its factory, or by the test
    itself) is timed by the world's clock from its construction on. Blocks nest; the previous
    clock is back at the end. A thread started inside the block does not inherit it (each
    thread has its own context), and a client made before the block keeps its clock.

    Args:
        clock: The clock new clients start with; None for the real clock (a new
            :class:`MonotonicClock` each).

    Yields:
        None, once the clock is set for this context.
    """
    token = _NEW_CLIENTS_CLOCK.set(clock)
    try:
        yield
    finally:
        _NEW_CLIENTS_CLOCK.reset(token)
