"""The emulator's state: a stdlib ``sqlite3`` database and the wire records built from it.

It holds the ids (18-digit decimal strings) and times (ISO-8601 UTC, milliseconds), escapes
message content on store, builds every record the service answers, and computes permissions
(roles, owner, ADMINISTRATOR, and channel overrides for VIEW_CHANNELS and SEND_MESSAGES).

The store is **not** thread-safe: the emulator only touches it from its event-loop thread
(the control class hops onto that loop). Every method is synchronous and fast; message
search uses an FTS5 table over the *unescaped* text.

Layout: ``schema.py`` (tables, constants, helpers, errors), ``database.py`` (the connection,
ids, snapshots, deletes that follow the schema), then one repository per entity, each given
the database and the repositories it reads: ``users.py`` (users, tokens, profiles),
``servers.py`` (servers, notification settings, vanity codes), ``members.py`` (members, roles,
bans, permissions), ``channels.py`` (channels, categories, overrides, DMs, who may view),
``messages.py`` (messages, reactions, pins), ``invites.py`` and ``extras.py`` (emojis,
webhooks, audit log). :class:`Store` only builds and holds them (``store.channels.channel(cid)``).
"""

from __future__ import annotations

from typing import Any

from .channels import ChannelRepository
from .database import Database
from .extras import ExtrasRepository
from .invites import InviteRepository
from .members import MemberRepository
from .messages import MessageRepository
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
from .search import SearchIndex
from .servers import ServerRepository
from .users import UserRepository

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


class Store:
    """sqlite3-backed state of the emulator: one repository per entity, sharing one database.

    Not thread-safe: use it from one thread (the emulator's loop thread).

    Args:
        db: ``":memory:"`` (default) or a file path; a file keeps state across restarts.

    Attributes:
        db: The connection, ids and snapshots (:class:`~.database.Database`).
        users, servers, members, channels, messages, invites, extras: The repositories.
    """

    def __init__(self, db: str = ":memory:") -> None:
        self.db = Database(db)
        self.users = UserRepository(self.db)
        self.servers = ServerRepository(self.db, users=self.users)
        self.members = MemberRepository(self.db, users=self.users, servers=self.servers)
        self.channels = ChannelRepository(self.db, users=self.users, servers=self.servers, members=self.members)
        self.messages = MessageRepository(self.db, users=self.users, channels=self.channels)
        self.invites = InviteRepository(self.db, users=self.users, servers=self.servers, members=self.members)
        self.extras = ExtrasRepository(self.db, users=self.users, servers=self.servers, channels=self.channels,
                                       messages=self.messages)

    @property
    def search_index(self) -> SearchIndex:
        """The full-text index of message text (its own thread, started by the first search)."""
        return self.db.search_index

    def reset(self) -> None:
        """Delete every row of every table (ids keep increasing)."""
        self.db.reset()

    def dump(self) -> dict[str, list[list[Any]]]:
        """Every stored row, per table, sorted: see :meth:`~.database.Database.dump`."""
        return self.db.dump()

    def close(self) -> None:
        """Close the database connection and stop the search index's thread."""
        self.db.close()
