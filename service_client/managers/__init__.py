"""Managers: caches plus the requests that fill them.

Every manager holds a ``cache`` keyed by id and a ``resolve()`` helper; its
``fetch*`` methods always send a request (never answering from the cache), take
a keyword-only ``cache: bool = True``, and upsert what they get without ever
purging entries missing from the answer.
"""

from __future__ import annotations

from .base import BaseManager
from .channels import ChannelManager
from .emojis import EmojiManager
from .guilds import GuildManager
from .invites import InviteManager
from .members import MemberManager
from .roles import RoleManager
from .users import UserManager
from .voice_states import VoiceStateManager

__all__ = [
    "BaseManager",
    "ChannelManager",
    "EmojiManager",
    "GuildManager",
    "InviteManager",
    "MemberManager",
    "RoleManager",
    "UserManager",
    "VoiceStateManager",
]
