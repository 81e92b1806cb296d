"""The test world's time and the bot's login: the bot's scheduled work runs when the test says so.

:class:`~service_client.pytest_plugin.BotWorld` holds a :class:`~service_client.ManualClock`
(``bot_world.clock``), gives it to every client made while the world is open and to the bot's
client when it is handed over, and ``bot_world.advance()`` moves it. :func:`login_bot` logs
the bot in and returns once its ``ready`` listeners have run.
"""

from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["ADVANCE_TIMEOUT_S", "READY_LISTENERS_TIMEOUT_S", "login_bot"]

#: Seconds ``BotWorld.advance`` waits, by default, for one scheduled call to end.
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
        TypeError: ``listeners_timeout`` is not a number (checked before logging in).
        ValueError: ``listeners_timeout`` is not finite and > 0 (checked before logging in).
        TimeoutError: The ``ready`` listeners did not end within ``listeners_timeout``.
        Exception: What ``login()`` raised.
    """
    # A wait longer than the platform's longest is that longest (threading.TIMEOUT_MAX, about
    # 292 years on Linux): Event.wait() raises OverflowError past it.
    if isinstance(listeners_timeout, bool) or not isinstance(listeners_timeout, (int, float)):
        raise TypeError(f"listeners_timeout must be a number of seconds, got {type(listeners_timeout).__name__}")
    if not 0 < listeners_timeout < math.inf:
        raise ValueError(f"listeners_timeout must be a finite number of seconds > 0, got {listeners_timeout!r}")
    wait_s = threading.TIMEOUT_MAX if listeners_timeout >= threading.TIMEOUT_MAX else float(listeners_timeout)
    ran = threading.Event()

    def ready_listeners_ran() -> None:
        """The last ``ready`` listener: the bot's own have returned."""
        ran.set()

    client.on("ready", ready_listeners_ran)
    try:
        client.login(token, timeout=timeout)
        if not ran.wait(wait_s):
            raise TimeoutError(f"the bot's ready listeners did not end within {listeners_timeout:g} s after "
                               "login(); a ready listener that waits for the test cannot work in a fixture")
    finally:
        client.off("ready", ready_listeners_ran)
