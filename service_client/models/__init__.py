"""The object model: one module per model.

Each record model (:class:`User`, :class:`Guild`, :class:`Channel`,
:class:`Message`, :class:`Invite`...) is built from a wire record (a dict of
camelCase keys), exposes its fields as snake_case attributes, keeps the whole
record in ``raw``, and holds a *state* in ``_state`` (never the client) for the
methods that send requests (``channel.send``, ``invite.revoke``...): the State
port, :mod:`._port`, declares what a model may ask of it. Beside them: their
value types (:class:`Collection`, the dict every cache is made of;
:class:`EmbedBuilder`; :class:`Permissions`), and the views of a server's channels and
categories (``guild.channels``, ``guild.categories``). The managers a server holds
(``guild.roles``...) live one layer up, in :mod:`service_client.managers`: a
:class:`Guild` gets them from its state (:meth:`State.guild_managers
<service_client.models._port.State.guild_managers>`) and names them by the protocols of the
port, so nothing here imports a manager.
"""

from __future__ import annotations

from ..permissions import Permissions
from .audit_log import AuditLogEntry
from .ban import Ban
from .category import Category
from .channel import Channel
from .collection import Collection, ModelList
from .dm_channel import DMChannel
from .embed import EmbedBuilder
from .emoji import Emoji
from .guild import Guild
from .invite import Invite
from .member import Member, RemovedMember
from .message import Message
from .overwrite import PermissionOverwrite
from .profile import UserProfile
from .reaction import ReactionEvent
from .role import Role
from .user import User
from .voice_state import VoiceState
from .webhook import Webhook

__all__ = [
    "AuditLogEntry",
    "Ban",
    "Category",
    "Channel",
    "Collection",
    "DMChannel",
    "EmbedBuilder",
    "Emoji",
    "Guild",
    "Invite",
    "Member",
    "Message",
    "ModelList",
    "PermissionOverwrite",
    "Permissions",
    "ReactionEvent",
    "RemovedMember",
    "Role",
    "User",
    "UserProfile",
    "VoiceState",
    "Webhook",
]
