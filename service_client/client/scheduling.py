"""Scheduled work of :class:`~service_client.Client`: ``call_later``, ``every`` and the clock.

:class:`ClientScheduling` is a base of :class:`~service_client.Client`; the work itself is
kept by a :class:`~service_client.events.scheduler.Scheduler` that the client builds on its
worker pool. ``destroy()`` cancels it all, then emits ``client_close``.
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _defaults
from ..events.clock import Clock
from ..events.scheduler import RepeatingTask, ScheduledCall

if TYPE_CHECKING:
    from ..events.emitter import EventEmitter
    from ..events.scheduler import Scheduler

__all__ = ["ClientScheduling"]

log = logging.getLogger("service_client.client")


class ClientScheduling:
    """Work a :class:`~service_client.Client` runs later or again and again, on its worker pool.

    Scheduled functions run on the worker pool like listeners (never on the thread that keeps
    time, never on the socket's reader), may call any method of the client, and are reported
    as listeners are when they raise: the ``error`` event when an ``error`` listener is
    registered, else the ``service_client.events`` logger (``sys.stderr`` when logging is not
    configured). :meth:`~service_client.Client.destroy` cancels every pending call and stops
    every repeating task. Thread-safe.
    """

    # Set by Client.__init__.
    _scheduler: Scheduler
    _events: EventEmitter

    def call_later(self, delay_s: float, fn: Callable[..., object], *args: Any) -> ScheduledCall:
        """Run ``fn(*args)`` once, on the worker pool, ``delay_s`` seconds from now.

        ::

            def remind(channel_id, text):
                client.send_message(channel_id, f"Reminder: {text}")

            handle = client.call_later(3600, remind, channel.id, "stand-up")
            handle.cancel()          # True: it will not run

        The delay is measured on :attr:`clock` (the real monotonic clock, unaffected by changes
        of the wall clock; a test world's clock moves only when the test advances it). Calls
        due at the same time start in the order they were scheduled; each may run on its own
        worker, so two calls due together may run at the same time. Keyword arguments go
        through :func:`functools.partial`.

        Args:
            delay_s: Seconds to wait, >= 0 (a float for fractions).
            fn: What to call; its return value is ignored.
            *args: Its arguments.

        Returns:
            A :class:`~service_client.ScheduledCall`: ``cancel()``,
            ``cancelled()``, ``done()``, ``when()``.

        Raises:
            TypeError: ``delay_s`` is not a number, or ``fn`` is not callable.
            ValueError: ``delay_s`` is negative, NaN, infinite or an int too large for a float.
            ServiceError: The client was destroyed.
        """
        return self._scheduler.call_later(delay_s, fn, *args)

    def every(
        self, *, seconds: float = 0, minutes: float = 0, hours: float = 0,
        time: _dt.time | Iterable[_dt.time] | None = None, count: int | None = None,
        start_on_ready: bool = False,
    ) -> Callable[[Callable[..., object]], RepeatingTask]:
        """Decorate a function to run it every interval, or at set times of day, on the worker pool.

        ::

            @client.every(hours=1, start_on_ready=True)
            def post_leaderboard():
                client.send_message(board_channel_id, leaderboard_text())

            @client.every(time=datetime.time(9, 0, tzinfo=ZoneInfo("Europe/Paris")))
            def daily_reward():
                pay_everyone()

            @client.on("ready")
            def start_tasks():
                daily_reward.start()

        The decorated name is a :class:`~service_client.RepeatingTask`
        (``start(*args)``, ``stop()``, ``change_interval(...)``, ``before_loop``,
        ``is_running()``, ``runs``, ``next_run``); calling it calls the function directly.

        With an interval, the first run is due at
        :meth:`~service_client.RepeatingTask.start`, then one every interval after the
        previous one was due. With ``time`` (discord.py's ``tasks.loop(time=...)``), the task
        runs at each of those times of day on :attr:`clock`'s wall-clock time, the first run
        at the next of them after ``start()``; a time without ``tzinfo`` is UTC, and a
        :class:`zoneinfo.ZoneInfo` follows its summer time. Runs never overlap, a run that
        ends late skips the times it missed, and an exception a run raises is reported and
        the task goes on.

        With ``start_on_ready=True`` the task starts by itself (without arguments) when the
        client becomes ready, before any ``ready`` listener runs and before ``login()``
        returns, or at once when the client is ready already: nothing can race its first run.

        Args:
            seconds, minutes, hours: The interval, added up; at least 0.001 s (1 ms) in all.
            time: A :class:`datetime.time` or a list of them, instead of an interval.
            count: Stop after this many runs; None runs until stopped.
            start_on_ready: Start the task when the client becomes ready.

        Returns:
            The decorator.

        Raises:
            TypeError: An interval part is not a number, ``time`` is not a time or a list of
                them, ``count`` is not an int, ``start_on_ready`` not a bool, or the
                decorated object is not callable.
            ValueError: A part is negative or not finite (or an int too large for a float), the
                interval is below 1 ms, both an interval and ``time`` are given, ``time`` is
                an empty list, or ``count`` < 1.
            ServiceError: With ``start_on_ready``, the decorator raises it when the client was
                destroyed (the task would never start).
        """
        return self._scheduler.every(seconds=seconds, minutes=minutes, hours=hours, time=time, count=count,
                                     start_on_ready=start_on_ready)

    def wait_until_ready(self, timeout: float | None = None) -> None:
        """Block until the client is ready (``login()`` preloaded its user and servers).

        discord.py's ``wait_until_ready``. Returns at once when the client is ready already,
        so it is safe anywhere: a task's :meth:`~service_client.RepeatingTask.before_loop`,
        a thread of the bot, a listener. It returns before the ``ready`` listeners have run.

        Args:
            timeout: Longest wait, seconds; None waits until ready or destroyed.

        Raises:
            ServiceError: The client was destroyed, or its login failed, before it was ready.
            ServiceTimeoutError: ``timeout`` seconds passed first.
            ValueError: ``timeout`` is negative or not a finite number.
        """
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout < float("inf"):
                raise ValueError(f"timeout must be a finite number of seconds >= 0 or None, got {timeout!r}")
        self._scheduler.wait_ready(timeout)

    @property
    def clock(self) -> Clock:
        """The clock scheduled work and cooldowns are timed by.

        ``clock.now()`` gives monotonic seconds (what delays are measured on) and
        ``clock.utcnow()`` the wall-clock time, an aware UTC :class:`~datetime.datetime`
        (what times of day and dates stored in a database are read from)::

            last = db.last_daily(user_id)                       # an aware datetime
            if client.clock.utcnow() - last < datetime.timedelta(hours=24): ...

        A :class:`~service_client.MonotonicClock` unless replaced with :meth:`set_clock`; in
        the test world, the world's :class:`~service_client.ManualClock`, from the client's
        construction on, so both times move only with ``bot_world.advance``.
        """
        return self._scheduler.clock

    def set_clock(self, clock: Clock | None) -> None:
        """Time scheduled work by ``clock`` from now on; None goes back to the real clock.

        For tests: with a :class:`~service_client.ManualClock` nothing
        scheduled runs by itself, and ``clock.advance(seconds)`` runs what falls due without
        waiting (the test world's ``bot_world.advance`` does this for the bot's client).
        Pending calls keep the delay they had left. ``clock.now()`` is read and checked before
        anything changes: when it fails, the old clock stays.

        Raises:
            TypeError: ``clock`` has no ``now()`` method, or its ``now()`` did not return an
                int or a float.
            ValueError: Its ``now()`` returned NaN or an infinity.
            Exception: What its ``now()`` raised.
        """
        self._scheduler.set_clock(clock)

    def _close_scheduled_work(self) -> None:
        """At ``destroy()``: cancel the scheduled work, stop its thread, run ``client_close``."""
        self._scheduler.close(_defaults.DESTROY_JOIN_S / 2)
        if not self._events.emit_and_wait("client_close", timeout=_defaults.CLOSE_LISTENERS_S):
            log.warning("the client_close listeners did not end within %g s", _defaults.CLOSE_LISTENERS_S)
