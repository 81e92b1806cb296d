"""The emulator's state: a stdlib ``sqlite3`` database and the wire records built from it.

It holds the ids (18-digit decimal strings) and times (ISO-8601 UTC, milliseconds), escapes
message content on store, builds every record the service answers, and computes permissions
(roles, owner, ADMINISTRATOR, and channel overrides for VIEW_CHANNELS and SEND_MESSAGES).

The store is **not** thread-safe: the emulator only touches it from its event-loop thread
(the control class hops onto that loop). Every method is synchronous and fast; message
search uses an FTS5 table over the *unescaped* text.

Layout: ``schema.py`` (tables, constants, helpers, errors), ``base.py`` (the connection,
ids, snapshots), then one module per family of entities, each a layer of :class:`Store`:
``people.py`` (users, DMs, bans), ``servers.py`` (servers, roles, members, invites),
``channels.py`` (channels, categories, overwrites), ``messages.py`` (messages, reactions,
pins) and ``extras.py`` (emojis, webhooks, audit log, settings, vanity codes, profiles).
"""

from __future__ import annotations

from .extras import ExtrasStore
from .schema import (
    ALL_PERMISSIONS,
    CREATABLE_CHANNEL_TYPES,
    DEFAULT_PERMISSIONS,
    MAX_OVERRIDES,
    OVERRIDE_TYPES,
    PERM,
    PROFILE_FIELDS,
    STATUSES,
    BadRequest,
    Forbidden,
    NotFound,
    escape_content,
    iso_at,
    iso_now,
    parse_permissions,
)

__all__ = [
    "ALL_PERMISSIONS",
    "BadRequest",
    "CREATABLE_CHANNEL_TYPES",
    "DEFAULT_PERMISSIONS",
    "Forbidden",
    "MAX_OVERRIDES",
    "NotFound",
    "OVERRIDE_TYPES",
    "PERM",
    "PROFILE_FIELDS",
    "STATUSES",
    "Store",
    "escape_content",
    "iso_at",
    "iso_now",
    "parse_permissions",
]


class Store(ExtrasStore):
    """sqlite3-backed state of the emulator with the builders of the records it answers.

    Not thread-safe: use it from one thread (the emulator's loop thread).

    Args:
        db: ``":memory:"`` (default) or a file path; a file keeps state across restarts.
    """

