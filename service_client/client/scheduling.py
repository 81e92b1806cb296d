"""Scheduled work of :class:`~service_client.Client`: ``call_later``, ``every`` and the clock.

:class:`ClientScheduling` is a base of :class:`~service_client.Client`; the work itself is
kept by a :class:`~service_client.events.scheduler.Scheduler` that the client builds on its
worker pool. ``destroy()`` cancels it all, then emits ``client_close``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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
        self, *, seconds: float = 0, minutes: float = 0, hours: float = 0, count: int | None = None
    ) -> Callable[[Callable[..., object]], RepeatingTask]:
        """Decorate a function to run it every interval, on the worker pool, once started.

        ::

            @client.every(minutes=5)
            def post_status():
                client.send_message(status_channel_id, f"{len(client.guilds.cache)} servers")

            @client.on("ready")
            def start_tasks():
                post_status.start()

        The decorated name is a :class:`~service_client.RepeatingTask`
        (``start(*args)``, ``stop()``, ``change_interval(...)``, ``is_running()``,
        ``runs``, ``next_run``); calling it calls the function directly. The first run is
        due at :meth:`~service_client.RepeatingTask.start`, then one every
        interval after the previous one was due; runs never overlap, a run that ends late
        skips the times it missed, and an exception a run raises is reported and the task
        goes on.

        Args:
            seconds, minutes, hours: The interval, added up; at least 0.001 s (1 ms) in all.
            count: Stop after this many runs; None runs until stopped.

        Returns:
            The decorator.

        Raises:
            TypeError: An interval part is not a number, ``count`` is not an int, or the
                decorated object is not callable.
            ValueError: A part is negative or not finite (or an int too large for a float), the
                interval is below 1 ms, or ``count`` < 1.
        """
        return self._scheduler.every(seconds=seconds, minutes=minutes, hours=hours, count=count)

    @property
    def clock(self) -> Clock:
        """The clock scheduled work is timed by (``clock.now()``: seconds, monotonic).

        A :class:`~service_client.MonotonicClock` unless replaced with
        :meth:`set_clock`.
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
