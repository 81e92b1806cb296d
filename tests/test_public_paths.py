"""Every public import path of the package keeps working.

The names below are the documented import paths: the package root and the modules the API
pages document. New names may appear; none of these may disappear. The pytest plugin stays
registered under its entry point, and ``python -m service_client`` keeps its command.
"""

from __future__ import annotations

import configparser
import importlib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: Module path -> the public names it gives.
PUBLIC_PATHS: dict[str, tuple[str, ...]] = {
    "service_client": (
        "AuditLogEntry",
        "Ban",
        "BucketStore",
        "Category",
        "Channel",
        "ChannelOverwriteError",
        "Client",
        "ClientState",
        "Collection",
        "Command",
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
        "DMChannel",
        "EmbedBuilder",
        "Emoji",
        "EmptyMessageError",
        "GatewayError",
        "GatewayTimeoutError",
        "Guild",
        "InsecureHostWarning",
        "Invite",
        "MISSING",
        "Member",
        "MemoryBucketStore",
        "Message",
        "ModelList",
        "PermissionOverwrite",
        "Permissions",
        "RateLimitError",
        "RedisBucketStore",
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
    ),
    "service_client.models": (
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
        "Role",
        "User",
        "UserProfile",
        "VoiceState",
        "Webhook",
    ),
    "service_client.errors": (
        "ChannelOverwriteError",
        "CommandCooldownError",
        "CommandError",
        "CommandInvokeError",
        "CommandLoadWarning",
        "CommandNotFoundError",
        "CommandPermissionError",
        "CommandSyntaxError",
        "CommandUsageError",
        "EmptyMessageError",
        "GatewayError",
        "GatewayTimeoutError",
        "InsecureHostWarning",
        "RateLimitError",
        "ServiceAPIError",
        "ServiceAuthError",
        "ServiceError",
        "ServiceTimeoutError",
    ),
    "service_client.commands": (
        "Command",
        "load_commands",
    ),
    "service_client.pytest_plugin": (
        "BotWorld",
        "ClientLeftRunningWarning",
        "ExpectedMessage",
        "ListenerErrors",
        "WorldObject",
        "WorldUser",
        "bot_client",
        "bot_factory",
        "bot_world",
        "expect_message",
        "expect_reply",
        "listener_errors",
        "say",
        "service_emulator",
        "service_emulator_server",
    ),
    "service_client.emulator": (
        "Emulator",
        "EmulatorCore",
        "seed_demo",
    ),
    "service_client.managers": (
        "BaseManager",
        "ChannelManager",
        "EmojiManager",
        "GuildManager",
        "InviteManager",
        "MemberManager",
        "RoleManager",
        "UserManager",
        "VoiceStateManager",
    ),
    "service_client.client": (
        "Client",
        "ClientState",
        "MISSING",
    ),
    "service_client.events": (
        "EventEmitter",
        "EventSlot",
        "OrderedWorkerPool",
        "flush_handoff",
        "handoff_batch",
    ),
    "service_client.dispatcher": (
        "CommandContext",
        "CommandDispatcher",
    ),
    "service_client.rest": (
        "BucketStore",
        "MemoryBucketStore",
        "PaceWait",
        "RETRY_STATUSES",
        "RedisBucketStore",
        "RestSession",
        "Route",
        "backoff_delay",
        "bucket_key",
        "bucket_scope",
        "encode_query",
        "encode_segment",
        "parse_retry_after",
        "redact_path",
        "validate_api_call_args",
    ),
    "service_client.gateway": (
        "FramingError",
        "GatewayConnection",
        "REASON_IO_SERVER_DISCONNECT",
        "REASON_PING_TIMEOUT",
        "REASON_TRANSPORT_CLOSE",
        "REASON_TRANSPORT_ERROR",
        "UnsupportedPacketError",
        "reconnect_delay",
        "socket_endpoint",
    ),
}


@pytest.mark.parametrize("module", sorted(PUBLIC_PATHS))
def test_every_public_name_still_imports_from_its_path(module: str) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in PUBLIC_PATHS[module] if not hasattr(imported, name)]
    assert missing == [], f"{module} lost {missing}"


def test_top_level_names_are_the_same_objects_as_their_new_homes() -> None:
    import service_client
    from service_client.client import Client
    from service_client.dispatcher import CommandContext, CommandDispatcher
    from service_client.models import Message
    from service_client.permissions import Permissions

    assert service_client.Client is Client and service_client.Message is Message
    assert service_client.CommandContext is CommandContext and service_client.CommandDispatcher is CommandDispatcher
    assert service_client.Permissions is Permissions


def test_the_pytest_plugin_entry_point_names_the_plugin_module() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    entry = config["options.entry_points"]["pytest11"].strip()
    assert entry == "service_client = service_client.pytest_plugin"
    plugin = importlib.import_module("service_client.pytest_plugin")
    assert callable(plugin.bot_world) and callable(plugin.expect_reply)


def test_the_command_line_entry_point_still_answers() -> None:
    done = subprocess.run([sys.executable, "-m", "service_client", "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith("service_client "), done
