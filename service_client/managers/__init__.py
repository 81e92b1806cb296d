"""Managers: the client-wide caches plus the requests that fill them.

Every manager holds a ``cache`` keyed by id and a ``resolve()`` helper; its
``fetch*`` methods always send a request (never answering from the cache), take
a keyword-only ``cache: bool = True``, and upsert what they get without ever
purging entries missing from the answer.

The client-wide managers live here: ``client.guilds``, ``client.channels``,
``client.members``, ``client.users`` and ``client.voice_states``. The
per-server ones (``guild.roles``, ``guild.invites``, ``guild.emojis``) and the
base of all, :class:`BaseManager`, live in :mod:`service_client.server_managers`
(one layer lower, beside the models that hold them) and are re-exported here.
"""

from __future__ import annotations

from ..server_managers.base import BaseManager
from ..server_managers.emojis import EmojiManager
from ..server_managers.invites import InviteManager
from ..server_managers.roles import RoleManager
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
