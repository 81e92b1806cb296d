"""Managers: caches plus the requests that fill them (spec: Manager convention, Managers)."""

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
