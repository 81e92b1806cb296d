"""The emulator's database schema, constants, record helpers and errors.

Tables (``CREATE TABLE IF NOT EXISTS``, so a database file from an earlier run is reused), the
permission bits, the field limits shared by the store's families, the ISO-8601 time and
content escaping helpers, and the exceptions the store raises (mapped to HTTP 404, 403, 400).
"""

from __future__ import annotations

import sqlite3
import string
import time
from datetime import datetime, timezone
from typing import Any

#: Every permission flag OR'd together.
ALL_PERMISSIONS = 2149580799
#: The DEFAULT permission set held by ``@everyone``.
DEFAULT_PERMISSIONS = 552448
#: Permission bits used by the emulator's checks.
PERM = {
    "MANAGE_SERVER": 1,
    "MANAGE_ROLES": 2,
    "MANAGE_CHANNELS": 4,
    "VIEW_AUDIT_LOG": 8,
    "MANAGE_INVITES": 16,
    "VIEW_MEMBERS": 32,
    "KICK_MEMBERS": 64,
    "BAN_MEMBERS": 128,
    "MANAGE_MESSAGES": 256,
    "VIEW_CHANNELS": 512,
    "SEND_MESSAGES": 1024,
    "UPLOAD_FILES": 2048,
    "MENTION_EVERYONE": 4096,
    "CONNECT": 8192,
    "SPEAK": 16384,
    "MUTE_MEMBERS": 32768,
    "DEAFEN_MEMBERS": 65536,
    "MOVE_MEMBERS": 131072,
    "PIN_MESSAGE": 262144,
    "ADD_REACTION": 524288,
    "MANAGE_APPLICATIONS": 1048576,
    "ADMINISTRATOR": 2147483648,
}
#: Channel types accepted on creation (``POST /servers/{sid}/channels``).
CREATABLE_CHANNEL_TYPES = ("TEXT", "VOICE")
#: User statuses accepted by presence updates (``PATCH /users/settings``).
STATUSES = ("online", "idle", "dnd", "invisible")

_ALNUM = string.ascii_letters + string.digits
#: SQLite's JSON functions are built in from 3.38 (bulk inserts go through ``json_each``).
_JSON_BULK = sqlite3.sqlite_version_info >= (3, 38, 0)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, tag TEXT NOT NULL, image TEXT,
    is_bot INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'offline',
    token TEXT UNIQUE, revoked INTEGER NOT NULL DEFAULT 0, activity TEXT,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS servers (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, image_url TEXT, owner_id TEXT NOT NULL,
    created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roles (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, name TEXT NOT NULL, color TEXT,
    hoist INTEGER NOT NULL DEFAULT 0, position INTEGER NOT NULL DEFAULT 0,
    permissions TEXT NOT NULL, everyone INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS roles_server ON roles(server_id);
CREATE TABLE IF NOT EXISTS members (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, user_id TEXT NOT NULL, nickname TEXT,
    joined_at TEXT NOT NULL, UNIQUE(server_id, user_id));
CREATE INDEX IF NOT EXISTS members_user ON members(user_id);
CREATE TABLE IF NOT EXISTS member_roles (
    server_id TEXT NOT NULL, user_id TEXT NOT NULL, role_id TEXT NOT NULL,
    PRIMARY KEY(server_id, user_id, role_id));
CREATE TABLE IF NOT EXISTS categories (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, name TEXT NOT NULL,
    position INTEGER NOT NULL, is_private INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS channels (
    id TEXT PRIMARY KEY, server_id TEXT, category_id TEXT, name TEXT NOT NULL,
    type TEXT NOT NULL, position INTEGER NOT NULL DEFAULT 0,
    is_private INTEGER NOT NULL DEFAULT 0, description TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS channels_server ON channels(server_id);
CREATE TABLE IF NOT EXISTS dms (
    channel_id TEXT PRIMARY KEY, user_a TEXT NOT NULL, user_b TEXT NOT NULL,
    UNIQUE(user_a, user_b));
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, channel_id TEXT NOT NULL,
    server_id TEXT, author_id TEXT, content TEXT NOT NULL, embeds TEXT NOT NULL,
    reply_to_id TEXT, created_at TEXT NOT NULL, edited_at TEXT,
    pinned INTEGER NOT NULL DEFAULT 0, author_json TEXT, raw TEXT NOT NULL DEFAULT '',
    webhook_id TEXT);
CREATE INDEX IF NOT EXISTS messages_channel ON messages(channel_id, seq);
CREATE TABLE IF NOT EXISTS reactions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, message_id TEXT NOT NULL,
    emoji TEXT NOT NULL, user_id TEXT NOT NULL, UNIQUE(message_id, emoji, user_id));
CREATE TABLE IF NOT EXISTS pins (
    message_id TEXT PRIMARY KEY, channel_id TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bans (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, user_id TEXT NOT NULL, reason TEXT,
    created_at TEXT NOT NULL, UNIQUE(server_id, user_id));
CREATE TABLE IF NOT EXISTS invites (
    code TEXT PRIMARY KEY, server_id TEXT NOT NULL, channel_id TEXT, inviter_id TEXT,
    uses INTEGER NOT NULL DEFAULT 0, max_uses INTEGER, expires_at REAL,
    created_at TEXT NOT NULL);
"""

_TABLES: tuple[str, ...] = ("users", "servers", "roles", "members", "member_roles", "categories",
                            "channels", "dms", "messages", "invites", "reactions", "pins", "bans")

# Permission overwrites of channels and categories: ``scope_id`` is the channel or category id,
# ``target_id`` a role id (type ROLE) or a user id (type MEMBER); one row per (scope, target).
_SCHEMA += """
CREATE TABLE IF NOT EXISTS overrides (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, scope_id TEXT NOT NULL, target_id TEXT NOT NULL,
    type TEXT NOT NULL, allow TEXT NOT NULL, deny TEXT NOT NULL, seq INTEGER NOT NULL,
    UNIQUE(scope_id, target_id));
CREATE INDEX IF NOT EXISTS overrides_server ON overrides(server_id);
"""
_TABLES += ("overrides",)
#: Override target types (an override applies to a role or to one member).
OVERRIDE_TYPES = ("ROLE", "MEMBER")
#: Most overrides one channel or category may hold.
MAX_OVERRIDES = 250

# Server extras: custom emojis, channel webhooks, the audit log, per-member notification
# settings, vanity codes and user profile fields.
_EXTRA_SCHEMA = """
CREATE TABLE IF NOT EXISTS emojis (
    id TEXT PRIMARY KEY, server_id TEXT NOT NULL, name TEXT NOT NULL, url TEXT NOT NULL,
    animated INTEGER NOT NULL DEFAULT 0, creator_id TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS emojis_server ON emojis(server_id);
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY, server_id TEXT, channel_id TEXT NOT NULL, name TEXT NOT NULL,
    avatar_url TEXT, token TEXT NOT NULL, creator_id TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS webhooks_channel ON webhooks(channel_id);
CREATE TABLE IF NOT EXISTS audit_logs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, server_id TEXT NOT NULL,
    executor_id TEXT, action TEXT NOT NULL, target_type TEXT, target_id TEXT,
    details TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_logs_server ON audit_logs(server_id, seq);
CREATE TABLE IF NOT EXISTS notification_settings (
    server_id TEXT NOT NULL, user_id TEXT NOT NULL, muted INTEGER NOT NULL DEFAULT 0,
    mute_until TEXT, mentions_only INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(server_id, user_id));
CREATE TABLE IF NOT EXISTS vanity_codes (server_id TEXT PRIMARY KEY, code TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS user_profiles (
    user_id TEXT PRIMARY KEY, banner TEXT, banner_color TEXT, bio TEXT,
    followers_count INTEGER NOT NULL DEFAULT 0, following_count INTEGER NOT NULL DEFAULT 0,
    mutual_friends_count INTEGER NOT NULL DEFAULT 0);
"""
_EXTRA_TABLES = ("emojis", "webhooks", "audit_logs", "notification_settings", "vanity_codes", "user_profiles")
_TABLES = _TABLES + _EXTRA_TABLES
#: Profile fields a seeded profile may set, wire key -> column.
PROFILE_FIELDS = {"banner": "banner", "bannerColor": "banner_color", "bio": "bio",
                  "followersCount": "followers_count", "followingCount": "following_count",
                  "mutualFriendsCount": "mutual_friends_count"}


def iso_now() -> str:
    """Return the current UTC time as ``2026-01-02T03:04:05.678Z`` (milliseconds, ``Z``)."""
    return iso_at(time.time())


def iso_at(epoch_s: float) -> str:
    """Format an epoch time (seconds) as the emulator's ISO-8601 UTC string (``...T03:04:05.678Z``)."""
    dt = datetime.fromtimestamp(epoch_s, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def escape_content(text: str) -> str:
    """Escape ``&`` (first), ``<`` and ``>`` as the service does when it stores message content."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def parse_permissions(value: Any) -> int:
    """Parse a permission bitfield given as an int or a decimal string (as on the wire).

    Raises:
        ValueError: Not a non-negative int or decimal string.
    """
    if isinstance(value, bool):
        raise ValueError("permissions must be an integer or a decimal string")
    if isinstance(value, int):
        result = value
    elif isinstance(value, str) and value.strip().isdigit():
        result = int(value.strip())
    else:
        raise ValueError("permissions must be an integer or a decimal string")
    if result < 0 or result > ALL_PERMISSIONS | (1 << 62):
        raise ValueError("permissions out of range")
    return result


class NotFound(Exception):
    """An entity does not exist (mapped to HTTP 404)."""


class Forbidden(Exception):
    """The caller may not see or change an entity (mapped to HTTP 403)."""


class BadRequest(Exception):
    """The request body or query is invalid (mapped to HTTP 400)."""

