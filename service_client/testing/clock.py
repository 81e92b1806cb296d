"""The test world's clock: the bot's scheduled work runs when the test says so.

:class:`WorldClock` is a base of :class:`~service_client.pytest_plugin.BotWorld`: it gives the
bot's client a :class:`~service_client.ManualClock` when the client is handed
to the world, and :meth:`WorldClock.advance` moves it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events.clock import ManualClock

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ADVANCE_TIMEOUT_S", "WorldClock"]

#: Seconds :meth:`WorldClock.advance` waits, by default, for one scheduled call to end.
ADVANCE_TIMEOUT_S = 10.0


class WorldClock:
    """The clock of the bot's scheduled work in the test world: it stands still until :meth:`advance`.

    Attributes:
        clock: The :class:`~service_client.ManualClock` (at 0 s when the
            world is made).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock = ManualClock()

    def attach_bot(self, client: Client, *, factory: Callable[..., Client] | None = None) -> None:
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
            factory: What made ``client``, called as ``factory(base_url=..., socket_url=...)``:
                what :meth:`~service_client.testing.world.BotWorld.restart_bot` calls to build
                the bot again (the ``bot_client`` fixture passes its ``bot_factory``).

        Raises:
            TypeError: Not a :class:`~service_client.Client`; ``factory`` not callable.
            ValueError: Another client was handed over already.
        """
        super().attach_bot(client, factory=factory)  # type: ignore[misc]
        self._give_clock(client)

    def _give_clock(self, client: Client) -> None:
        """Time ``client``'s scheduled work by the world's :attr:`clock` (at handing over, and
        for the client :meth:`~service_client.testing.world.BotWorld.restart_bot` builds)."""
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
