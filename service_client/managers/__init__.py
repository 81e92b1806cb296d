"""Managers: the client-wide caches plus the requests that fill them.

Every manager holds a ``cache`` keyed by id and a ``resolve()`` helper; its
``fetch*`` methods always send a request (never answering from the cache), take
a keyword-only ``cache: bool = True``, and upsert what they get without ever
purging entries missing from the answer.

The client-wide managers live here: ``client.guilds``, ``client.channels``,
``client.members``, ``client.users`` and ``client.voice_states``. The
per-server ones (``guild.roles``, ``guild.invites``, ``guild.emojis``) live
beside their models and are re-exported here.
"""

from __future__ import annotations

from ..models._manager import BaseManager
from ..models.emoji import EmojiManager
from ..models.invite import InviteManager
from ..models.role import RoleManager
from .channels import ChannelManager
from .guilds import GuildManager
from .members import MemberManager
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
