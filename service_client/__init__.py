"""service_client: a synchronous, thread-based client for bots on the chat service.

Every public name is importable from here::

    from service_client import Client, CommandDispatcher, Message, ServiceAPIError

Importing the package is light: requests, urllib3 and websocket-client load
when the first :class:`Client` is created and when it logs in.

To see a bot at work, install the ``emulator`` extra
(``pip install 'service_client[emulator]'``) and run::

    python -m service_client demo       # a local emulator, a sample bot, and a user it answers
    python -m service_client emulator   # the emulator alone, to point your own bot at

``python -m service_client demo --help`` and ``emulator --help`` list their
options; the pytest plugin (fixtures ``bot_world``, ``say``, ``expect_reply``)
tests a bot against the same emulator.
"""

from __future__ import annotations

import logging

from ._version import __version__ as __version__
from .client import MISSING, Client, ClientState
from .client.voice import VoiceConnection, VoiceManager
from .commands import Command, load_commands
from .dispatcher import CommandContext, CommandDispatcher, Converter
from .errors import (
    BadArgumentError,
    ChannelAccessError,
    ChannelOverwriteError,
    CommandArgumentError,
    CommandCooldownError,
    CommandError,
    CommandInvokeError,
    CommandLoadWarning,
    CommandNotFoundError,
    CommandPermissionError,
    CommandSyntaxError,
    CommandUsageError,
    GatewayError,
    GatewayTimeoutError,
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
    ReactionEvent,
    RemovedMember,
    Role,
    User,
    UserProfile,
    VoiceState,
    Webhook,
)
from .rest.buckets import BucketStore, MemoryBucketStore
from .rest.redis_buckets import RedisBucketStore

__all__ = [
    "AuditLogEntry",
    "BadArgumentError",
    "Ban",
    "BucketStore",
    "Category",
    "Channel",
    "ChannelAccessError",
    "ChannelOverwriteError",
    "Client",
    "ClientState",
    "Collection",
    "Command",
    "CommandArgumentError",
    "CommandContext",
    "CommandCooldownError",
    "CommandDispatcher",
    "CommandError",
    "CommandInvokeError",
    "CommandLoadWarning",
    "CommandNotFoundError",
    "CommandPermissionError",
    "CommandSyntaxError",
    "CommandUsageError",
    "Converter",
    "DMChannel",
    "EmbedBuilder",
    "Emoji",
    "GatewayError",
    "GatewayTimeoutError",
    "Guild",
    "InsecureHostWarning",
    "Invite",
    "MISSING",
    "Member",
    "MemoryBucketStore",
    "Message",
    "PermissionOverwrite",
    "Permissions",
    "RateLimitError",
    "ReactionEvent",
    "RedisBucketStore",
    "RemovedMember",
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
