"""service_client: a synchronous, thread-based client for bots on the chat service.

Every public name is importable from here::

    from service_client import Client, CommandDispatcher, Message, ServiceAPIError

Importing the package is light: requests, urllib3 and websocket-client load
when the first :class:`Client` is created and when it logs in; the command
framework (:class:`CommandDispatcher`, :class:`CommandContext`,
:class:`Converter` and the checks such as :func:`has_role`), :class:`RedisBucketStore` and the events fleet
(:class:`EventPublisher`, :class:`FleetWorker`) when a name of theirs is
first read from the package.

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
from typing import TYPE_CHECKING, Any

from . import rest as _rest
from ._version import __version__ as __version__
from .client import MISSING, CatchUp, Client, ClientState
from .client.voice import VoiceConnection, VoiceManager
from .commands import BucketType, Check, Cog, Command, load_commands
from .errors import (
    BadArgumentError,
    ChannelAccessError,
    ChannelOverwriteError,
    CheckFailure,
    CommandArgumentError,
    CommandCooldownError,
    CommandError,
    CommandInvokeError,
    CommandLoadWarning,
    CommandNotFoundError,
    CommandPermissionError,
    CommandSyntaxError,
    CommandUsageError,
    DuplicateClientWarning,
    EmptyMessageError,
    ExtensionAlreadyLoadedError,
    ExtensionError,
    ExtensionFailedError,
    ExtensionNotFoundError,
    ExtensionNotLoadedError,
    GatewayError,
    GatewayTimeoutError,
    InsecureHostWarning,
    MaxConcurrencyReached,
    MissingPermissions,
    MissingRole,
    NoEntryPointError,
    NoPrivateMessage,
    PrivateMessageOnly,
    RateLimitError,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    VoiceConnectionError,
    WrongChannel,
)
from .events.clock import ManualClock, MonotonicClock
from .events.scheduler import RepeatingTask, ScheduledCall
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
    ModelList,
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
from .voice import AudioFrame, AudioPlayback, AudioRecorder

if TYPE_CHECKING:  # pragma: no cover - loaded on first access, see __getattr__
    from .dispatcher import (
        CommandContext,
        CommandDispatcher,
        Converter,
        check,
        dm_only,
        guild_only,
        has_any_role,
        has_permissions,
        has_role,
        in_channel,
    )
    from .fleet import EventPublisher, FleetWorker
    from .rest.redis_buckets import RedisBucketStore

#: Names loaded on first access (PEP 562), so that ``import service_client`` stays light for
#: bots that use neither: the command framework (about 10 ms) and the Redis store.
_DISPATCHER_EXPORTS = frozenset({
    "CommandContext", "CommandDispatcher", "Converter",
    "check", "dm_only", "guild_only", "has_any_role", "has_permissions", "has_role", "in_channel",
})
#: The events fleet's names, loaded on first access too (they need the redis extra).
_FLEET_EXPORTS = frozenset({"EventPublisher", "FleetWorker"})

__all__ = [
    "AudioFrame",
    "AudioPlayback",
    "AudioRecorder",
    "AuditLogEntry",
    "BadArgumentError",
    "Ban",
    "BucketStore",
    "BucketType",
    "CatchUp",
    "Category",
    "Channel",
    "ChannelAccessError",
    "ChannelOverwriteError",
    "Check",
    "CheckFailure",
    "Client",
    "ClientState",
    "Cog",
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
    "DuplicateClientWarning",
    "EmbedBuilder",
    "Emoji",
    "EmptyMessageError",
    "EventPublisher",
    "ExtensionAlreadyLoadedError",
    "ExtensionError",
    "ExtensionFailedError",
    "ExtensionNotFoundError",
    "ExtensionNotLoadedError",
    "FleetWorker",
    "GatewayError",
    "GatewayTimeoutError",
    "Guild",
    "InsecureHostWarning",
    "Invite",
    "MISSING",
    "ManualClock",
    "MaxConcurrencyReached",
    "Member",
    "MemoryBucketStore",
    "Message",
    "MissingPermissions",
    "MissingRole",
    "ModelList",
    "MonotonicClock",
    "NoEntryPointError",
    "NoPrivateMessage",
    "PermissionOverwrite",
    "Permissions",
    "PrivateMessageOnly",
    "RateLimitError",
    "ReactionEvent",
    "RedisBucketStore",
    "RemovedMember",
    "RepeatingTask",
    "Role",
    "ScheduledCall",
    "ServiceAPIError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
    "User",
    "UserProfile",
    "VoiceConnection",
    "VoiceConnectionError",
    "VoiceManager",
    "VoiceState",
    "Webhook",
    "WrongChannel",
    "check",
    "dm_only",
    "guild_only",
    "has_any_role",
    "has_permissions",
    "has_role",
    "in_channel",
    "load_commands",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str) -> Any:
    """Load a lazily exported name (PEP 562) on first access and keep it.

    Args:
        name: The attribute read from the package.

    Returns:
        The class or function: :class:`CommandContext`, :class:`CommandDispatcher`,
        :class:`Converter`, a check (:func:`has_role`, ...), :class:`RedisBucketStore`, :class:`EventPublisher`
        or :class:`FleetWorker`.

    Raises:
        AttributeError: ``name`` is not a name of this package.
    """
    if name in _DISPATCHER_EXPORTS:
        from . import dispatcher

        value = getattr(dispatcher, name)
    elif name == "RedisBucketStore":
        value = _rest.RedisBucketStore
    elif name in _FLEET_EXPORTS:
        from . import fleet

        value = getattr(fleet, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
