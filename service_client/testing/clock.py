"""The test world's clock: the bot's scheduled work runs when the test says so.

:class:`WorldClock` is a base of :class:`~service_client.pytest_plugin.BotWorld`: it holds the
world's :class:`~service_client.ManualClock`, gives it to every client made while the world is
open (:meth:`WorldClock.new_clients_use_clock`) and to the bot's client when it is handed to the
world, and :meth:`WorldClock.advance` moves it. :func:`login_bot` logs the bot in and returns
once its ``ready`` listeners have run.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..events.clock import ManualClock, new_clients_use

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ADVANCE_TIMEOUT_S", "READY_LISTENERS_TIMEOUT_S", "WorldClock", "login_bot"]

#: Seconds :meth:`WorldClock.advance` waits, by default, for one scheduled call to end.
ADVANCE_TIMEOUT_S = 10.0

#: Seconds :func:`login_bot` waits, after ``login()`` returned, for the ``ready`` listeners to end.
READY_LISTENERS_TIMEOUT_S = 10.0


def login_bot(client: Client, token: str, *, timeout: float, listeners_timeout: float = READY_LISTENERS_TIMEOUT_S) -> None:
    """Log ``client`` in and return once its ``ready`` listeners have run.

    The listeners of one event run one after another in registration order, so a listener
    registered just before ``login()`` runs after the bot's own: when it has run, so have they
    (what they started, a task or a first message, is started). It is removed afterwards.

    Args:
        client: A client not logged in.
        token: Its token.
        timeout: Seconds for ``login()``.
        listeners_timeout: Seconds for the ``ready`` listeners once ``login()`` returned.

    Raises:
        TimeoutError: The ``ready`` listeners did not end within ``listeners_timeout``.
        Exception: What ``login()`` raised.
    """
    ran = threading.Event()

    def ready_listeners_ran() -> None:
        """The last ``ready`` listener: the bot's own have returned."""
        ran.set()

    client.on("ready", ready_listeners_ran)
    try:
        client.login(token, timeout=timeout)
        if not ran.wait(listeners_timeout):
            raise TimeoutError(f"the bot's ready listeners did not end within {listeners_timeout:g} s after "
                               "login(); a ready listener that waits for the test cannot work in a fixture")
    finally:
        client.off("ready", ready_listeners_ran)


class WorldClock:
    """The clock of the bot's scheduled work in the test world: it stands still until :meth:`advance`.

    Attributes:
        clock: The world's :class:`~service_client.ManualClock`: ``clock.now()`` is 0 s when
            the world is made and ``clock.utcnow()`` the real time then; both move only with
            :meth:`advance` (or ``clock.advance_to(datetime)``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock = ManualClock()

    @contextlib.contextmanager
    def new_clients_use_clock(self) -> Iterator[None]:
        """Within the block, every client made on this thread is timed by :attr:`clock` from its construction on.

        The ``bot_world`` fixture holds it open for the whole test, so the bot's factory, a
        restart of the bot and a client the test builds itself all get the world's clock
        without being told.
        """
        with new_clients_use(self.clock):
            yield

    def attach_bot(self, client: Client) -> None:
        """Hand the bot's client to the world; the ``bot_client`` fixture does it before login.

        From then on the world records every message and reaction that client receives (its
        own messages included), every action waits until the bot's listeners of the event it
        caused have run, and the client's scheduled work (``call_later``, ``every``) is timed
        by :attr:`clock`: it runs only when the test calls :meth:`advance`
        (``client.set_clock(None)`` goes back to real time). Hand it over before ``login()``
        to record what the bot does in its ``ready`` listener.

        Args:
            client: The bot's :class:`~service_client.Client` (logged in as the world's bot,
                or about to be). The world does not destroy it.

        Raises:
            TypeError: Not a :class:`~service_client.Client`.
            ValueError: Another client was handed over already.
        """
        super().attach_bot(client)  # type: ignore[misc]
        client.set_clock(self.clock)

    def advance(self, seconds: float, *, timeout: float = ADVANCE_TIMEOUT_S) -> int:
        """Move the bot's clock ``seconds`` forward, running its scheduled work that falls due.

        No real time passes: the due calls (``call_later``, runs of ``every`` tasks) run on the
        bot's worker pool one after another in due order, and this returns once they have
        ended, so whatever they sent is sent::

            say("general", "!remind 3600 stretch")
            with bot_world.expect_message("general") as got:
                bot_world.advance(3600)              # milliseconds, not an hour
            assert got.result().content.endswith("stretch")

        A task every 60 s runs 60 times over ``advance(3600)`` (plus its first run, due at
        ``start()``, if that had not run yet). ``advance(0)`` runs what is due now.

        Args:
            seconds: How far to move, seconds (>= 0).
            timeout: Longest wait for one call to end, seconds.

        Returns:
            How many calls ran.

        Raises:
            TypeError, ValueError: ``seconds`` or ``timeout`` is not a number >= 0.
            TimeoutError: A call did not end within ``timeout``.
        """
        return self.clock.advance(seconds, timeout=timeout)
