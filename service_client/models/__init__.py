"""The object model: one module per model (python-api.md section 4; protocol.md section 3)."""

from __future__ import annotations

from .category import Category
from .channel import Channel
from .collection import Collection
from .dm_channel import DMChannel
from .embed import EmbedBuilder
from .guild import Guild
from .invite import Invite
from .member import Member
from .message import Message
from .permissions import Permissions
from .role import Role
from .user import User
from .voice_state import VoiceState

__all__ = [
    "Category",
    "Channel",
    "Collection",
    "DMChannel",
    "EmbedBuilder",
    "Guild",
    "Invite",
    "Member",
    "Message",
    "Permissions",
    "Role",
    "User",
    "VoiceState",
]
