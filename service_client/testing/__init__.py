"""Testing a bot against the local emulator: the seeded world and the listener error record.

The pytest plugin (``service_client.pytest_plugin``, loaded by pytest) gives these as fixtures:

- :mod:`.world`: :class:`BotWorld`, a seeded server with the bot and a human, and the
  ``say`` / ``expect_reply`` helpers;
- :mod:`.listener_errors`: :class:`ListenerErrors`, the exceptions listeners raised
  during a test.
"""

from __future__ import annotations

from .listener_errors import ListenerErrors
from .world import LOGIN_TIMEOUT_S, REPLY_TIMEOUT_S, BotWorld, ExpectedMessage, WorldObject, WorldUser

__all__ = ["LOGIN_TIMEOUT_S", "REPLY_TIMEOUT_S", "BotWorld", "ExpectedMessage", "ListenerErrors", "WorldObject", "WorldUser"]
