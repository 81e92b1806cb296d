"""service_client: a synchronous, thread-based client for bots on the chat service.

Every public name of python-api.md is importable from here::

    from service_client import Client, Message, ServiceAPIError

See README.rst for the two commands a newcomer runs.
"""

from __future__ import annotations

import logging

__version__ = "0.1.0"

from .client import MISSING, Client, ClientState
from .commands import Command, load_commands
from .errors import (
    ChannelOverwriteError,
    CommandLoadWarning,
    InsecureHostWarning,
    RateLimitError,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)
from .models import (
    AuditLogEntry,
    Ban,
    Category,
    Channel,
    Collection,
    DMChannel,
    EmbedBuilder,
    Emoji,
    Guild,
    Invite,
    Member,
    Message,
    PermissionOverwrite,
    Permissions,
    Role,
    User,
    UserProfile,
    VoiceState,
    Webhook,
)
from .voice import VoiceConnection, VoiceManager

__all__ = [
    "AuditLogEntry",
    "Ban",
    "Category",
    "Channel",
    "ChannelOverwriteError",
    "Client",
    "ClientState",
    "Collection",
    "Command",
    "CommandLoadWarning",
    "DMChannel",
    "EmbedBuilder",
    "Emoji",
    "Guild",
    "InsecureHostWarning",
    "Invite",
    "MISSING",
    "Member",
    "Message",
    "PermissionOverwrite",
    "Permissions",
    "RateLimitError",
    "Role",
    "ServiceAPIError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
    "User",
    "UserProfile",
    "VoiceConnection",
    "VoiceManager",
    "VoiceState",
    "Webhook",
    "load_commands",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
