"""Managers: the client-wide caches plus the requests that fill them.

Every manager holds a ``cache`` keyed by id and a ``resolve()`` helper; its
``fetch*`` methods always send a request (never answering from the cache), take
a keyword-only ``cache: bool = True``, and upsert what they get without ever
purging entries missing from the answer.

The client-wide managers (``client.guilds``, ``client.channels``,
``client.members``, ``client.users``, ``client.voice_states``), the per-server
ones (``guild.roles``, ``guild.invites``, ``guild.emojis``) and the base of all,
:class:`BaseManager`, live here, one layer above the models they build: a
:class:`~service_client.Guild` gets its managers from its state, which builds them
(:meth:`~service_client.state.ConnectionState.guild_managers`).
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
