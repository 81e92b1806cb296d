"""The clocks scheduled work is timed by: the real one, and one that tests move by hand.

:class:`MonotonicClock` reads :func:`time.monotonic`; every client starts with one.
:class:`ManualClock` stands still until :meth:`ManualClock.advance` moves it, running the
scheduled work that falls due on the way (the test world's ``bot_world.advance``).
Import them from ``service_client``.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .scheduler import Scheduler

__all__ = ["Clock", "ManualClock", "MonotonicClock"]


class Clock(Protocol):
    """What a :class:`Scheduler` reads time from.

    ``now()`` is called while the scheduler keeps its books: it must return at once and
    never call into the client.
    """

    def now(self) -> float:
        """The current time, seconds, on a clock that never goes back (its origin is arbitrary)."""
        ...


class MonotonicClock:
    """The real clock: :func:`time.monotonic`, seconds. The default of every client."""

    def now(self) -> float:
        """``time.monotonic()``, seconds."""
        return time.monotonic()

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



class ManualClock:
    """A clock that stands still until :meth:`advance` moves it: scheduled work in tests.

    Give it to a client (``client.set_clock(clock)``; the test world's ``bot_world`` does it
    for the bot's client): from then on nothing the client schedules runs by itself, and
    :meth:`advance` runs what falls due, without waiting. Thread-safe, but advance it from
    one thread at a time, never from scheduled work itself.

    Args:
        start: The time it shows at first, seconds.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = _check_seconds("start", start)
        self._lock = threading.Lock()  # guards _now and _schedulers
        self._schedulers: weakref.WeakSet[Scheduler] = weakref.WeakSet()

    def now(self) -> float:
        """The time it shows, seconds."""
        return self._now

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
        due now.

        Args:
            seconds: How far to move, seconds (>= 0).
            timeout: Longest wait for one call to end, seconds.

        Returns:
            How many calls ran.

        Raises:
            TypeError: ``seconds`` or ``timeout`` is not a number.
            ValueError: ``seconds`` or ``timeout`` is negative or not finite.
            TimeoutError: A call did not end within ``timeout`` (the clock stays at its due time).
        """
        step = _check_seconds("seconds", seconds)
        wait = _check_seconds("timeout", timeout)
        with self._lock:
            target = self._now + step
        ran = 0
        while True:
            with self._lock:
                schedulers = list(self._schedulers)
            best: tuple[float, int] | None = None
            owner: Scheduler | None = None
            for scheduler in schedulers:
                head = scheduler._peek()
                if head is not None and head[0] <= target and (best is None or head < best):
                    best, owner = head, scheduler
            if best is None or owner is None:
                break
            with self._lock:
                self._now = max(self._now, best[0])
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
        return f"<ManualClock now={self._now:g}>"
