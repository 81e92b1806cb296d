"""Testing a bot against the local emulator: the world, its people and the listener error record.

The pytest plugin (``service_client.pytest_plugin``, loaded by pytest) gives these as fixtures:

- :mod:`.world`: :class:`BotWorld`, a seeded server with the bot and people who act
  (``say``, ``dm``, ``react``, ``join``...) and the expectations that read what the bot did
  (``expect_reply``, ``expect_message``, ``expect_dm``, ``expect_reaction``);
- :mod:`.actions`: the people's actions, part of :class:`BotWorld`;
- :mod:`.handles`: :class:`WorldUser`, :class:`WorldObject` and :class:`WorldRole`;
- :mod:`.recorder`: what the world's clients saw, and :class:`SeenReaction`;
- :mod:`.listener_errors`: :class:`ListenerErrors`, the exceptions listeners raised
  during a test;
- :mod:`.voice`: the world's voice part (``join_voice``, ``speak``, ``expect_audio``), which
  needs the voice extra.

The emulator's record types (``MessageRecord``, ``MemberRecord``...) are in
``service_client.emulator``, which needs the ``emulator`` extra.
"""

from __future__ import annotations

from .base import EVENT_TIMEOUT_S, LOGIN_TIMEOUT_S
from .handles import WorldObject, WorldRole, WorldUser
from .listener_errors import ListenerErrors
from .recorder import SeenReaction
from .voice import VoiceParticipant
from .world import REPLY_TIMEOUT_S, BotWorld, ExpectedMessage

__all__ = [
    "EVENT_TIMEOUT_S",
    "LOGIN_TIMEOUT_S",
    "REPLY_TIMEOUT_S",
    "BotWorld",
    "ExpectedMessage",
    "ListenerErrors",
    "SeenReaction",
    "VoiceParticipant",
    "WorldObject",
    "WorldRole",
    "WorldUser",
]
