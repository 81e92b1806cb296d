"""The emulator's state: a stdlib ``sqlite3`` database and the wire records built from it.

It holds the ids (18-digit decimal strings) and times (ISO-8601 UTC, milliseconds), escapes
message content on store, builds every record the service answers, and computes permissions
(roles, owner, ADMINISTRATOR, and channel overrides for VIEW_CHANNELS and SEND_MESSAGES).

The store is **not** thread-safe: the emulator only touches it from its event-loop thread
(the control class hops onto that loop). Every method is synchronous and fast; message
search uses an FTS5 table over the *unescaped* text.
"""

from __future__ import annotations

import itertools
import json
import secrets
import sqlite3
import string
import time
from collections.abc import Iterable
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
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(body);
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
                            "channels", "dms", "messages", "messages_fts", "invites", "reactions", "pins", "bans")

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


class Store:
    """sqlite3-backed state of the emulator with the builders of the records it answers.

    Not thread-safe: use it from one thread (the emulator's loop thread).

    Args:
        db: ``":memory:"`` (default) or a file path; a file keeps state across restarts.
    """

    def __init__(self, db: str = ":memory:") -> None:
        self.db_path = db
        self.conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        if db != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=OFF")
        self.conn.executescript(_SCHEMA)
        self.conn.executescript(_EXTRA_SCHEMA)
        self._add_missing_columns()
        start = 10**17 + int((time.time() - 1_577_836_800) * 1000) * 100
        row = self.conn.execute(
            "SELECT MAX(CAST(id AS INTEGER)) FROM (SELECT id FROM users UNION ALL "
            "SELECT id FROM servers UNION ALL SELECT id FROM messages UNION ALL "
            "SELECT id FROM channels UNION ALL SELECT id FROM roles UNION ALL "
            "SELECT id FROM members UNION ALL SELECT id FROM categories UNION ALL "
            "SELECT id FROM reactions UNION ALL SELECT id FROM bans)").fetchone()
        if row[0] is not None and int(row[0]) >= start:
            start = int(row[0]) + 1
        self._ids = itertools.count(start)
        self._user_cache: dict[str, dict[str, Any]] = {}
        # FTS rows are indexed lazily (before a search), so bulk posting stays cheap.
        row = self._one("SELECT MAX(rowid) FROM messages_fts")
        self._fts_seq = int(row[0]) if row is not None and row[0] is not None else 0

    def _add_missing_columns(self) -> None:
        """Add the columns a database file written by an older emulator lacks (``--db PATH``)."""
        columns = {str(r[1]) for r in self.conn.execute("PRAGMA table_info(messages)")}
        if "webhook_id" not in columns:
            self.conn.execute("ALTER TABLE messages ADD COLUMN webhook_id TEXT")

    # ------------------------------------------------------------------ basics
    def new_id(self) -> str:
        """Return a fresh 18-digit decimal id (a string), increasing over time."""
        return str(next(self._ids))

    def reset(self) -> None:
        """Delete every row of every table (ids keep increasing)."""
        with self.conn:
            for table in _TABLES:
                self.conn.execute(f"DELETE FROM {table}")
        self._user_cache.clear()
        self._fts_seq = 0

    def dump(self) -> dict[str, list[list[Any]]]:
        """Return every stored row, per table, sorted: a comparable snapshot of the whole state.

        The lazy full-text index is left out (it mirrors ``messages``). Used by tests to prove
        that a refused request changed nothing.

        Returns:
            ``{table name: [[column values...], ...]}`` with rows sorted by their text form.
        """
        out: dict[str, list[list[Any]]] = {}
        for table in _TABLES:
            if table == "messages_fts":
                continue
            rows = [list(r) for r in self.conn.execute(f"SELECT * FROM {table}").fetchall()]
            rows.sort(key=repr)
            out[table] = rows
        return out

    def close(self) -> None:
        """Close the database connection."""
        self.conn.close()

    def _one(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.conn.execute(sql, tuple(args)).fetchone()
        return row

    def _all(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, tuple(args)).fetchall()

    # ------------------------------------------------------------------ users
    def create_user(self, name: str, *, bot: bool = False, image: str | None = None) -> tuple[dict[str, Any], str]:
        """Create a user and its token.

        Returns:
            ``(User record, token)``.
        """
        uid = self.new_id()
        token = secrets.token_urlsafe(24)
        tag = f"{secrets.randbelow(10000):04d}"
        self.conn.execute(
            "INSERT INTO users(id, name, tag, image, is_bot, token, created_at) VALUES (?,?,?,?,?,?,?)",
            (uid, name, tag, image, int(bool(bot)), token, iso_now()))
        return self.user(uid), token

    def user_row(self, uid: str) -> sqlite3.Row:
        """Return the row of a user. Raises NotFound."""
        row = self._one("SELECT * FROM users WHERE id=?", (uid,))
        if row is None:
            raise NotFound("users.errors.not_found")
        return row

    def user(self, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return a User record; ``invisible`` shows as ``offline`` to other viewers.

        Raises:
            NotFound: Unknown user.
        """
        cached = self._user_cache.get(uid)
        if cached is None:
            row = self.user_row(uid)
            cached = {
                "publicId": row["id"], "name": row["name"], "tag": row["tag"],
                "image": row["image"], "isBot": bool(row["is_bot"]), "status": row["status"],
                "createdAt": row["created_at"],
            }
            self._user_cache[uid] = cached
        rec = dict(cached)
        if viewer != uid and rec["status"] == "invisible":
            rec["status"] = "offline"
        return rec

    def user_by_token(self, token: Any) -> str | None:
        """Return the user id owning a valid (non-revoked) token, else None."""
        if not isinstance(token, str) or not token:
            return None
        row = self._one("SELECT id FROM users WHERE token=? AND revoked=0", (token,))
        return None if row is None else str(row["id"])

    def revoke_token(self, uid: str) -> None:
        """Revoke a user's token (later requests and connects are refused)."""
        self.user_row(uid)
        self.conn.execute("UPDATE users SET revoked=1 WHERE id=?", (uid,))

    def set_status(self, uid: str, status: str) -> None:
        """Store a user's presence status (``PATCH /users/settings``, ``presence:update``)."""
        self.conn.execute("UPDATE users SET status=? WHERE id=?", (status, uid))
        self._user_cache.pop(uid, None)

    def set_activity(self, uid: str, activity: dict[str, Any] | None) -> None:
        """Store a user's activity (None clears)."""
        self.conn.execute("UPDATE users SET activity=? WHERE id=?",
                          (None if activity is None else json.dumps(activity), uid))

    def activity(self, uid: str) -> dict[str, Any] | None:
        """Return a user's stored activity or None."""
        row = self.user_row(uid)
        return None if row["activity"] is None else json.loads(row["activity"])

    def update_user(self, uid: str, **fields: Any) -> dict[str, Any]:
        """Change ``name``, ``tag`` or ``image`` of a user; returns the new User record."""
        self.user_row(uid)
        for key in ("name", "tag", "image"):
            if key in fields:
                self.conn.execute(f"UPDATE users SET {key}=? WHERE id=?", (fields[key], uid))
        self._user_cache.pop(uid, None)
        return self.user(uid)

    def users_with_tokens(self) -> list[dict[str, Any]]:
        """Return every user with its token, oldest first, for the web page's user picker.

        Returns:
            ``[{"user": User, "token": str | None}]``; ``token`` is None once revoked.
        """
        rows = self._all("SELECT id, token, revoked FROM users ORDER BY created_at, id")
        return [{"user": self.user(r["id"], viewer=r["id"]), "token": None if r["revoked"] else r["token"]}
                for r in rows]

    # ------------------------------------------------------------------ servers
    def create_server(self, name: str, owner_id: str, *, image_url: str | None = None) -> str:
        """Create a server with its ``@everyone`` role and the owner as member; return its id."""
        self.user_row(owner_id)
        sid = self.new_id()
        now = iso_now()
        with self.conn:
            self.conn.execute("INSERT INTO servers(id, name, image_url, owner_id, created_at) VALUES (?,?,?,?,?)",
                              (sid, name, image_url, owner_id, now))
            self.conn.execute(
                "INSERT INTO roles(id, server_id, name, color, hoist, position, permissions, everyone) "
                "VALUES (?,?,?,?,?,?,?,1)", (self.new_id(), sid, "@everyone", None, 0, 0, str(DEFAULT_PERMISSIONS)))
            self.conn.execute("INSERT INTO members(id, server_id, user_id, joined_at) VALUES (?,?,?,?)",
                              (self.new_id(), sid, owner_id, now))
        return sid

    def server_row(self, sid: str) -> sqlite3.Row:
        """Return a server row. Raises NotFound."""
        row = self._one("SELECT * FROM servers WHERE id=?", (sid,))
        if row is None:
            raise NotFound("servers.errors.not_found")
        return row

    def server(self, sid: str) -> dict[str, Any]:
        """Return a Server record. Raises NotFound."""
        row = self.server_row(sid)
        count = self._one("SELECT COUNT(*) FROM members WHERE server_id=?", (sid,))
        return self._server_rec(row, int(count[0]) if count else 0)

    @staticmethod
    def _server_rec(row: sqlite3.Row, member_count: int) -> dict[str, Any]:
        return {"publicId": row["id"], "name": row["name"], "imageUrl": row["image_url"],
                "memberCount": member_count, "ownerId": row["owner_id"], "createdAt": row["created_at"]}

    def servers_of(self, uid: str) -> list[dict[str, Any]]:
        """Return the Server records of every server the user is a member of, by creation."""
        rows = self._all(
            "SELECT s.*, (SELECT COUNT(*) FROM members m2 WHERE m2.server_id=s.id) AS mc "
            "FROM servers s JOIN members m ON m.server_id=s.id WHERE m.user_id=? ORDER BY s.created_at, s.id",
            (uid,))
        return [self._server_rec(r, int(r["mc"])) for r in rows]

    def server_ids_of(self, uid: str) -> list[str]:
        """Return the ids of the servers a user belongs to."""
        return [r[0] for r in self._all("SELECT server_id FROM members WHERE user_id=?", (uid,))]

    def update_server(self, sid: str, fields: dict[str, Any]) -> None:
        """Change a server's ``name`` and/or ``imageUrl`` (None clears the icon)."""
        self.server_row(sid)
        if "name" in fields:
            self.conn.execute("UPDATE servers SET name=? WHERE id=?", (fields["name"], sid))
        if "imageUrl" in fields:
            self.conn.execute("UPDATE servers SET image_url=? WHERE id=?", (fields["imageUrl"], sid))

    def delete_server(self, sid: str) -> None:
        """Delete a server and everything in it."""
        self.server_row(sid)
        chans = [r[0] for r in self._all("SELECT id FROM channels WHERE server_id=?", (sid,))]
        with self.conn:
            for cid in chans:
                self._delete_channel_rows(cid)
            for table in ("roles", "members", "member_roles", "categories", "invites", "bans", "overrides"):
                self.conn.execute(f"DELETE FROM {table} WHERE server_id=?", (sid,))
            self._delete_server_extra_rows(sid)
            self.conn.execute("DELETE FROM servers WHERE id=?", (sid,))

    def member_ids(self, sid: str) -> list[str]:
        """Return the user ids of a server's members."""
        return [r[0] for r in self._all("SELECT user_id FROM members WHERE server_id=?", (sid,))]

    # ------------------------------------------------------------------ roles
    def role_row(self, sid: str, rid: str) -> sqlite3.Row:
        """Return a role row of a server. Raises NotFound."""
        row = self._one("SELECT * FROM roles WHERE id=? AND server_id=?", (rid, sid))
        if row is None:
            raise NotFound("roles.errors.not_found")
        return row

    @staticmethod
    def _role_rec(row: sqlite3.Row) -> dict[str, Any]:
        return {"publicId": row["id"], "name": row["name"], "color": row["color"], "hoist": bool(row["hoist"]),
                "serverPublicId": row["server_id"], "position": row["position"],
                "permissions": str(row["permissions"])}

    def role(self, sid: str, rid: str) -> dict[str, Any]:
        """Return a Role record. Raises NotFound."""
        return self._role_rec(self.role_row(sid, rid))

    def roles(self, sid: str) -> list[dict[str, Any]]:
        """Return a server's roles ordered by position."""
        return [self._role_rec(r) for r in
                self._all("SELECT * FROM roles WHERE server_id=? ORDER BY position, id", (sid,))]

    def create_role(self, sid: str, name: str, permissions: int, *, color: str | None = None,
                    hoist: bool = False) -> dict[str, Any]:
        """Create a role at the next position; return its Role record."""
        self.server_row(sid)
        rid = self.new_id()
        pos = self._one("SELECT COALESCE(MAX(position), 0) + 1 FROM roles WHERE server_id=?", (sid,))
        self.conn.execute(
            "INSERT INTO roles(id, server_id, name, color, hoist, position, permissions) VALUES (?,?,?,?,?,?,?)",
            (rid, sid, name, color, int(hoist), int(pos[0]) if pos else 1, str(permissions)))
        return self.role(sid, rid)

    def update_role(self, sid: str, rid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change ``name``, ``color``, ``hoist``, ``permissions`` or ``position`` of a role."""
        self.role_row(sid, rid)
        mapping = {"name": "name", "color": "color", "hoist": "hoist", "permissions": "permissions",
                   "position": "position"}
        for key, col in mapping.items():
            if key in fields:
                value = fields[key]
                if key == "hoist":
                    value = int(bool(value))
                elif key == "permissions":
                    value = str(parse_permissions(value))
                self.conn.execute(f"UPDATE roles SET {col}=? WHERE id=?", (value, rid))
        return self.role(sid, rid)

    def delete_role(self, sid: str, rid: str) -> None:
        """Delete a role (``@everyone`` cannot be deleted: Forbidden)."""
        row = self.role_row(sid, rid)
        if row["everyone"]:
            raise Forbidden("roles.errors.cannot_delete_everyone")
        with self.conn:
            self.conn.execute("DELETE FROM roles WHERE id=?", (rid,))
            self.conn.execute("DELETE FROM member_roles WHERE role_id=?", (rid,))
            self.conn.execute("DELETE FROM overrides WHERE target_id=? AND type='ROLE'", (rid,))

    # ------------------------------------------------------------------ members
    def is_member(self, sid: str, uid: str) -> bool:
        """Whether the user is a member of the server."""
        return self._one("SELECT 1 FROM members WHERE server_id=? AND user_id=?", (sid, uid)) is not None

    def add_member(self, sid: str, uid: str, role_ids: Iterable[str] = ()) -> bool:
        """Add a member (with extra roles); return False if it was already a member."""
        self.server_row(sid)
        self.user_row(uid)
        role_ids = list(role_ids)
        for rid in role_ids:
            self.role_row(sid, rid)
        if self.is_member(sid, uid):
            for rid in role_ids:
                self.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))
            return False
        with self.conn:
            self.conn.execute("INSERT INTO members(id, server_id, user_id, joined_at) VALUES (?,?,?,?)",
                              (self.new_id(), sid, uid, iso_now()))
            for rid in role_ids:
                self.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))
        return True

    def remove_member(self, sid: str, uid: str) -> bool:
        """Remove a member; return False if it was not a member."""
        if not self.is_member(sid, uid):
            return False
        with self.conn:
            self.conn.execute("DELETE FROM members WHERE server_id=? AND user_id=?", (sid, uid))
            self.conn.execute("DELETE FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid))
        return True

    def set_member_roles(self, sid: str, uid: str, role_ids: list[str]) -> None:
        """Replace a member's role set (``@everyone`` always stays)."""
        for rid in role_ids:
            self.role_row(sid, rid)
        with self.conn:
            self.conn.execute("DELETE FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid))
            for rid in role_ids:
                self.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))

    def set_nickname(self, sid: str, uid: str, nickname: str | None) -> None:
        """Set or clear a member's nickname."""
        self.conn.execute("UPDATE members SET nickname=? WHERE server_id=? AND user_id=?", (nickname, sid, uid))

    def member(self, sid: str, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return the nested Member record (with ``user`` and full ``roles``), ``@everyone`` first in ``roles``.

        Raises:
            NotFound: Not a member.
        """
        row = self._one("SELECT * FROM members WHERE server_id=? AND user_id=?", (sid, uid))
        if row is None:
            raise NotFound("members.errors.not_found")
        srv = self.server_row(sid)
        return self._member_rec(row, srv["owner_id"], self._member_roles(sid, uid), viewer)

    def _member_roles(self, sid: str, uid: str) -> list[dict[str, Any]]:
        rows = self._all(
            "SELECT r.* FROM roles r WHERE r.server_id=? AND (r.everyone=1 OR r.id IN "
            "(SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?)) ORDER BY r.position, r.id",
            (sid, sid, uid))
        return [self._role_rec(r) for r in rows]

    def _member_rec(self, row: sqlite3.Row, owner_id: str, roles: list[dict[str, Any]],
                    viewer: str | None) -> dict[str, Any]:
        return {"publicId": row["id"], "userId": row["user_id"], "user": self.user(row["user_id"], viewer=viewer),
                "serverPublicId": row["server_id"], "roles": roles, "joinedAt": row["joined_at"],
                "nickname": row["nickname"], "isOwner": row["user_id"] == owner_id}

    def members(self, sid: str, *, viewer: str | None = None) -> list[dict[str, Any]]:
        """Return every Member record of a server, by join order."""
        srv = self.server_row(sid)
        roles = {r["publicId"]: r for r in self.roles(sid)}
        everyone = [r for r in roles.values() if self._is_everyone(sid, r["publicId"])]
        extra: dict[str, list[str]] = {}
        for r in self._all("SELECT user_id, role_id FROM member_roles WHERE server_id=?", (sid,)):
            extra.setdefault(r[0], []).append(r[1])
        out = []
        for row in self._all("SELECT * FROM members WHERE server_id=? ORDER BY joined_at, id", (sid,)):
            mine = everyone + [roles[rid] for rid in extra.get(row["user_id"], []) if rid in roles]
            mine.sort(key=lambda r: (r["position"], r["publicId"]))
            out.append(self._member_rec(row, srv["owner_id"], mine, viewer))
        return out

    def _is_everyone(self, sid: str, rid: str) -> bool:
        row = self._one("SELECT everyone FROM roles WHERE id=? AND server_id=?", (rid, sid))
        return bool(row and row[0])

    def permissions(self, sid: str, uid: str) -> int:
        """Compute a member's server permissions; 0 for a non-member.

        Owner gives ALL; otherwise the OR of ``@everyone`` and the member's roles, and
        ``ADMINISTRATOR`` widens to ALL.
        """
        srv = self._one("SELECT owner_id FROM servers WHERE id=?", (sid,))
        if srv is None or not self.is_member(sid, uid):
            return 0
        if srv[0] == uid:
            return ALL_PERMISSIONS
        value = 0
        for r in self._all(
                "SELECT permissions FROM roles WHERE server_id=? AND (everyone=1 OR id IN "
                "(SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?))", (sid, sid, uid)):
            value |= int(r[0])
        if value & PERM["ADMINISTRATOR"]:
            return ALL_PERMISSIONS
        return value

    def has_perm(self, sid: str, uid: str, name: str) -> bool:
        """Whether the member holds permission ``name`` on the server."""
        return bool(self.permissions(sid, uid) & PERM[name])

    # ------------------------------------------------------------------ channels
    def create_category(self, sid: str, name: str, *, is_private: bool = False) -> str:
        """Create a category at the next position; return its id."""
        self.server_row(sid)
        cid = self.new_id()
        pos = self._one("SELECT COUNT(*) FROM categories WHERE server_id=?", (sid,))
        self.conn.execute("INSERT INTO categories(id, server_id, name, position, is_private) VALUES (?,?,?,?,?)",
                          (cid, sid, name, int(pos[0]) if pos else 0, int(is_private)))
        return cid

    def category_row(self, sid: str, cid: str) -> sqlite3.Row:
        """Return a category row of a server. Raises NotFound."""
        row = self._one("SELECT * FROM categories WHERE id=? AND server_id=?", (cid, sid))
        if row is None:
            raise NotFound("categories.errors.not_found")
        return row

    def category(self, sid: str, cid: str) -> dict[str, Any]:
        """Return a Category record with its channels."""
        row = self.category_row(sid, cid)
        return self._category_rec(row)

    def _category_rec(self, row: sqlite3.Row) -> dict[str, Any]:
        chans = self._all("SELECT * FROM channels WHERE category_id=? ORDER BY position, id", (row["id"],))
        return {"publicId": row["id"], "name": row["name"], "position": row["position"],
                "isPrivate": bool(row["is_private"]), "serverPublicId": row["server_id"],
                "channels": [self._channel_rec(c, listing=True) for c in chans]}

    def create_channel(self, sid: str, name: str, ctype: str, *, category_id: str | None = None,
                       is_private: bool = False, description: str | None = None) -> str:
        """Create a channel in a server (optionally in a category); return its id."""
        self.server_row(sid)
        if category_id is not None:
            self.category_row(sid, category_id)
        cid = self.new_id()
        if category_id is None:
            pos = self._one("SELECT COUNT(*) FROM channels WHERE server_id=? AND category_id IS NULL", (sid,))
        else:
            pos = self._one("SELECT COUNT(*) FROM channels WHERE category_id=?", (category_id,))
        self.conn.execute(
            "INSERT INTO channels(id, server_id, category_id, name, type, position, is_private, description, "
            "created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (cid, sid, category_id, name, ctype, int(pos[0]) if pos else 0, int(is_private), description, iso_now()))
        return cid

    def channel_row(self, cid: str) -> sqlite3.Row:
        """Return a channel row (server channel or DM). Raises NotFound."""
        row = self._one("SELECT * FROM channels WHERE id=?", (cid,))
        if row is None:
            raise NotFound("channels.errors.not_found")
        return row

    @staticmethod
    def _channel_rec(row: sqlite3.Row, *, listing: bool = False) -> dict[str, Any]:
        rec: dict[str, Any] = {"publicId": row["id"], "name": row["name"], "type": row["type"]}
        if not listing:
            rec["serverPublicId"] = row["server_id"]
        rec.update({"categoryId": row["category_id"], "isPrivate": bool(row["is_private"]),
                    "description": row["description"], "position": row["position"],
                    "createdAt": row["created_at"]})
        return rec

    def channel(self, cid: str) -> dict[str, Any]:
        """Return a Channel record with ``serverPublicId`` (null for a DM)."""
        return self._channel_rec(self.channel_row(cid))

    def channels_of(self, sid: str) -> list[dict[str, Any]]:
        """Return every channel record of a server (categorised first, then uncategorised)."""
        listing = self.listing(sid)
        out: list[dict[str, Any]] = ([c for cat in listing["categories"] for c in cat["channels"]]
                                     + listing["uncategorizedChannels"])
        for c in out:
            c["serverPublicId"] = sid
        return out

    def channel_ids_of(self, sid: str) -> list[str]:
        """Return the ids of a server's channels."""
        return [r[0] for r in self._all("SELECT id FROM channels WHERE server_id=?", (sid,))]

    def listing(self, sid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return the category listing ``{categories, uncategorizedChannels}``, sorted by position.

        With ``viewer``, only the channels that user may view are listed, and a category the
        user may not view is left out when none of its channels is visible.
        """
        self.server_row(sid)
        cats = [self._category_rec(r) for r in
                self._all("SELECT * FROM categories WHERE server_id=? ORDER BY position, id", (sid,))]
        unc = [self._channel_rec(r, listing=True) for r in self._all(
            "SELECT * FROM channels WHERE server_id=? AND category_id IS NULL ORDER BY position, id", (sid,))]
        if viewer is not None:
            visible = set(self.visible_channel_ids_in(sid, viewer))
            unc = [c for c in unc if c["publicId"] in visible]
            kept = []
            for cat in cats:
                cat["channels"] = [c for c in cat["channels"] if c["publicId"] in visible]
                if cat["channels"] or self.category_permissions(sid, cat["publicId"], viewer) & PERM["VIEW_CHANNELS"]:
                    kept.append(cat)
            cats = kept
        return {"categories": cats, "uncategorizedChannels": unc}

    def update_channel(self, cid: str, fields: dict[str, Any]) -> None:
        """Change a channel's ``name`` and/or ``description``."""
        self.channel_row(cid)
        for key, col in (("name", "name"), ("description", "description")):
            if key in fields:
                self.conn.execute(f"UPDATE channels SET {col}=? WHERE id=?", (fields[key], cid))

    def _delete_channel_rows(self, cid: str) -> None:
        self.conn.execute("DELETE FROM reactions WHERE message_id IN (SELECT id FROM messages WHERE channel_id=?)",
                          (cid,))
        self.conn.execute("DELETE FROM pins WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM messages_fts WHERE rowid IN (SELECT seq FROM messages WHERE channel_id=?)",
                          (cid,))
        self.conn.execute("DELETE FROM messages WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM channels WHERE id=?", (cid,))
        self.conn.execute("DELETE FROM dms WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM webhooks WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM overrides WHERE scope_id=?", (cid,))

    def delete_channel(self, cid: str) -> None:
        """Delete a channel and its messages."""
        self.channel_row(cid)
        with self.conn:
            self._delete_channel_rows(cid)

    def can_view(self, cid: str, uid: str) -> bool:
        """Whether the user may see a channel (DM participant, or member with VIEW_CHANNELS once
        the channel's overrides and ``isPrivate`` are applied: :meth:`channel_permissions`)."""
        row = self._one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None:
            return False
        if row[0] is None:
            return self._one("SELECT 1 FROM dms WHERE channel_id=? AND (user_a=? OR user_b=?)",
                             (cid, uid, uid)) is not None
        return bool(self.channel_permissions(cid, uid) & PERM["VIEW_CHANNELS"])

    def visible_channel_ids(self, uid: str) -> list[str]:
        """Return every channel id (server channels and DMs) the user may view."""
        out = [r[0] for r in self._all("SELECT channel_id FROM dms WHERE user_a=? OR user_b=?", (uid, uid))]
        for sid in self.server_ids_of(uid):
            out.extend(self.visible_channel_ids_in(sid, uid))
        return out

    # ------------------------------------------------------------------ DMs
    def open_dm(self, uid: str, other: str) -> tuple[str, bool]:
        """Return ``(channel id, created)`` of the DM between two users."""
        self.user_row(other)
        a, b = sorted((uid, other))
        row = self._one("SELECT channel_id FROM dms WHERE user_a=? AND user_b=?", (a, b))
        if row is not None:
            return str(row[0]), False
        cid = self.new_id()
        with self.conn:
            self.conn.execute(
                "INSERT INTO channels(id, server_id, category_id, name, type, position, created_at) "
                "VALUES (?,NULL,NULL,?,?,0,?)", (cid, "DM", "DM", iso_now()))
            self.conn.execute("INSERT INTO dms VALUES (?,?,?)", (cid, a, b))
        return cid, True

    def dm_record(self, cid: str, viewer: str) -> dict[str, Any]:
        """Return the DM record (with ``recipient``) from ``viewer``'s side."""
        row = self._one("SELECT * FROM dms WHERE channel_id=?", (cid,))
        if row is None:
            raise NotFound("channels.errors.not_found")
        other = row["user_b"] if row["user_a"] == viewer else row["user_a"]
        recipient = self.user(other, viewer=viewer)
        recipient.update({"friendshipStatus": "NONE", "friendshipId": None})
        return {"publicId": cid, "type": "DM", "name": recipient["name"], "serverPublicId": None,
                "recipient": recipient}

    def dm_participants(self, cid: str) -> list[str]:
        """Return the two user ids of a DM channel ([] if not a DM)."""
        row = self._one("SELECT user_a, user_b FROM dms WHERE channel_id=?", (cid,))
        return [] if row is None else [row[0], row[1]]

    # ------------------------------------------------------------------ messages
    def insert_messages(self, cid: str, author_id: str, contents: list[str],
                        embeds: list[Any] | None = None, reply_to_id: str | None = None) -> list[dict[str, Any]]:
        """Store messages in one transaction; return their Message records.

        ``contents`` are the raw texts: they are escaped on store and indexed (lazily, before the
        next search) unescaped.
        """
        chan = self.channel_row(cid)
        author = self.user(author_id)
        author_json = json.dumps(author)
        sid = chan["server_id"]
        embeds = list(embeds or [])
        embeds_json = json.dumps(embeds)
        now = iso_now()
        records = []
        rows = []
        ids = self._ids
        for text in contents:
            mid = str(next(ids))
            esc = escape_content(text)
            rows.append((mid, cid, sid, author_id, esc, embeds_json, reply_to_id, now, author_json, text))
            records.append({"publicId": mid, "content": esc, "author": author, "channelPublicId": cid,
                            "serverPublicId": sid, "createdAt": now, "embeds": embeds, "fileUrl": None,
                            "replyToId": reply_to_id, "editedAt": None, "pinned": False})
        with self.conn:
            self.conn.executemany(
                "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                "created_at, author_json, raw) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        return records

    def insert_bulk(self, cid: str, author_id: str, contents: list[str]) -> tuple[list[str], list[str],
                                                                                dict[str, Any]]:
        """Store many plain messages (no embeds, no reply) in one transaction, cheaply.

        Args:
            cid: Channel (or DM) id.
            author_id: The author's user id.
            contents: Raw texts, in order; escaped on store, indexed (lazily) unescaped.

        Returns:
            ``(ids, escaped contents, shared fields)``: the records are
            ``{"publicId": id, "content": escaped, **shared}``, in this order (what
            :meth:`insert_messages` returns, field for field).

        Raises:
            NotFound: Unknown channel or author.
        """
        chan = self.channel_row(cid)
        author = self.user(author_id)
        sid = chan["server_id"]
        now = iso_now()
        escaped = [escape_content(text) for text in contents]
        first = next(self._ids)
        self._ids = itertools.count(first + len(contents))
        ids = [str(first + i) for i in range(len(contents))]
        author_json = json.dumps(author)
        with self.conn:
            if _JSON_BULK and not any("\x00" in text for text in contents):
                # One statement over a JSON array: about a third of the cost of one executemany
                # row per message. (SQLite's JSON functions stop a string at NUL, hence the check.)
                pairs = json.dumps([[esc, raw] for esc, raw in zip(escaped, contents, strict=True)], ensure_ascii=False)
                self.conn.execute(
                    "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                    "created_at, author_json, raw) SELECT CAST(?1 + key AS TEXT), ?2, ?3, ?4, "
                    "json_extract(value, '$[0]'), '[]', NULL, ?5, ?6, json_extract(value, '$[1]') "
                    "FROM json_each(?7) ORDER BY key", (first, cid, sid, author_id, now, author_json, pairs))
            else:
                self.conn.executemany(
                    "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                    "created_at, author_json, raw) VALUES (?,?,?,?,?,'[]',NULL,?,?,?)",
                    [(mid, cid, sid, author_id, esc, now, author_json, raw)
                     for mid, esc, raw in zip(ids, escaped, contents, strict=True)])
        shared = {"author": author, "channelPublicId": cid, "serverPublicId": sid, "createdAt": now, "embeds": [],
                  "fileUrl": None, "replyToId": None, "editedAt": None, "pinned": False}
        return ids, escaped, shared

    def _sync_fts(self) -> None:
        """Index every message stored since the last search (FTS5 over the unescaped text)."""
        with self.conn:
            self.conn.execute("INSERT INTO messages_fts(rowid, body) SELECT seq, raw FROM messages WHERE seq>?",
                              (self._fts_seq,))
            row = self._one("SELECT MAX(seq) FROM messages")
        if row is not None and row[0] is not None:
            self._fts_seq = max(self._fts_seq, int(row[0]))

    @staticmethod
    def _message_rec(row: sqlite3.Row) -> dict[str, Any]:
        """The Message record of a stored row. A message posted through a webhook also carries
        ``webhookId`` (the webhook's id, which is also its pseudo-author's ``publicId``)."""
        rec = {"publicId": row["id"], "content": row["content"],
               "author": None if row["author_json"] is None else json.loads(row["author_json"]),
               "channelPublicId": row["channel_id"], "serverPublicId": row["server_id"],
               "createdAt": row["created_at"], "embeds": json.loads(row["embeds"]), "fileUrl": None,
               "replyToId": row["reply_to_id"], "editedAt": row["edited_at"], "pinned": bool(row["pinned"])}
        if row["webhook_id"] is not None:
            rec["webhookId"] = row["webhook_id"]
        return rec

    def message_row(self, mid: str) -> sqlite3.Row:
        """Return a message row. Raises NotFound."""
        row = self._one("SELECT * FROM messages WHERE id=?", (mid,))
        if row is None:
            raise NotFound("messages.errors.not_found")
        return row

    def message(self, mid: str) -> dict[str, Any]:
        """Return a stored Message record (no nonce)."""
        return self._message_rec(self.message_row(mid))

    def messages(self, cid: str) -> list[dict[str, Any]]:
        """Return every stored message of a channel in chronological order."""
        return [self._message_rec(r) for r in
                self._all("SELECT * FROM messages WHERE channel_id=? ORDER BY seq", (cid,))]

    def history(self, cid: str, limit: int, before: str | None = None) -> list[dict[str, Any]]:
        """Return the newest ``limit`` messages before ``before`` (a message id), chronological."""
        if before is not None:
            row = self._one("SELECT seq FROM messages WHERE id=? AND channel_id=?", (before, cid))
            if row is None:
                return []
            rows = self._all("SELECT * FROM messages WHERE channel_id=? AND seq<? ORDER BY seq DESC LIMIT ?",
                             (cid, row[0], limit))
        else:
            rows = self._all("SELECT * FROM messages WHERE channel_id=? ORDER BY seq DESC LIMIT ?", (cid, limit))
        return [self._message_rec(r) for r in reversed(rows)]

    def search(self, cid: str, query: str, limit: int, before: str | None = None,
               after: str | None = None) -> list[dict[str, Any]]:
        """Full-text search (FTS5) over the unescaped text of a channel's messages, newest first.

        ``before`` / ``after`` (message ids) keep only the messages posted before / after that
        message; an id that is not a message of this channel matches nothing (``[]``), as in
        :meth:`history`."""
        terms = [t for t in query.split() if t]
        if not terms:
            return []
        self._sync_fts()
        match = " ".join('"' + t.replace('"', '""') + '"' for t in terms)
        sql = ("SELECT m.* FROM messages_fts f JOIN messages m ON m.seq=f.rowid "
               "WHERE messages_fts MATCH ? AND m.channel_id=?")
        args: list[Any] = [match, cid]
        for ref, op in ((before, "<"), (after, ">")):
            if ref is not None:
                # Like history: a bound must be a message of this channel, else nothing matches.
                row = self._one("SELECT seq FROM messages WHERE id=? AND channel_id=?", (ref, cid))
                if row is None:
                    return []
                sql += f" AND m.seq{op}?"
                args.append(row[0])
        sql += " ORDER BY m.seq DESC LIMIT ?"
        args.append(limit)
        return [self._message_rec(r) for r in self._all(sql, args)]

    def edit_message(self, mid: str, content: str, embeds: list[Any] | None) -> dict[str, Any]:
        """Replace a message's content (escaped) and embeds; return the new record."""
        row = self.message_row(mid)
        with self.conn:
            self.conn.execute("UPDATE messages SET content=?, raw=?, embeds=?, edited_at=? WHERE id=?",
                              (escape_content(content), content, json.dumps(embeds if embeds is not None
                                                                            else json.loads(row["embeds"])),
                               iso_now(), mid))
            self.conn.execute("UPDATE messages_fts SET body=? WHERE rowid=?", (content, row["seq"]))
        return self.message(mid)

    def delete_message(self, mid: str) -> None:
        """Delete one message with its reactions and pin."""
        row = self.message_row(mid)
        with self.conn:
            self.conn.execute("DELETE FROM messages_fts WHERE rowid=?", (row["seq"],))
            self.conn.execute("DELETE FROM messages WHERE id=?", (mid,))
            self.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,))
            self.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))

    def delete_messages(self, mids: list[str]) -> None:
        """Delete several messages (with reactions and pins) in one transaction."""
        with self.conn:
            for mid in mids:
                row = self._one("SELECT seq FROM messages WHERE id=?", (mid,))
                if row is None:
                    continue
                self.conn.execute("DELETE FROM messages_fts WHERE rowid=?", (row[0],))
                self.conn.execute("DELETE FROM messages WHERE id=?", (mid,))
                self.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,))
                self.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))

    def message_ids_by(self, sid: str, uid: str, since_iso: str) -> list[tuple[str, str]]:
        """Return ``(message id, channel id)`` of a user's messages in a server since a time."""
        return [(r[0], r[1]) for r in self._all(
            "SELECT id, channel_id FROM messages WHERE server_id=? AND author_id=? AND created_at>=? ORDER BY seq",
            (sid, uid, since_iso))]

    # ------------------------------------------------------------------ reactions
    def toggle_reaction(self, mid: str, emoji: str, uid: str) -> bool:
        """Add the (emoji, user) reaction, or remove it if present; return True when added."""
        row = self._one("SELECT seq FROM reactions WHERE message_id=? AND emoji=? AND user_id=?", (mid, emoji, uid))
        if row is not None:
            self.conn.execute("DELETE FROM reactions WHERE seq=?", (row[0],))
            return False
        self.conn.execute("INSERT INTO reactions(id, message_id, emoji, user_id) VALUES (?,?,?,?)",
                          (self.new_id(), mid, emoji, uid))
        return True

    def reactions(self, mid: str) -> list[dict[str, Any]]:
        """Return the full reaction list of a message (the ``message:reaction`` event's list), oldest first."""
        out = []
        for r in self._all("SELECT * FROM reactions WHERE message_id=? ORDER BY seq", (mid,)):
            try:
                name = self.user(r["user_id"])["name"]
            except NotFound:
                name = None
            out.append({"publicId": r["id"], "emoji": r["emoji"], "userPublicId": r["user_id"], "userName": name,
                        "messagePublicId": mid})
        return out

    def reaction_details(self, mid: str) -> list[dict[str, Any]]:
        """Return every emoji group of a message: ``[{emoji, count, users: [{publicId, name, tag, image}]}]``."""
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in self._all("SELECT emoji, user_id FROM reactions WHERE message_id=? ORDER BY seq", (mid,)):
            try:
                u = self.user(r[1])
            except NotFound:
                continue
            groups.setdefault(r[0], []).append({k: u[k] for k in ("publicId", "name", "tag", "image")})
        return [{"emoji": e, "count": len(us), "users": us} for e, us in groups.items()]

    def clear_reactions(self, mid: str) -> int:
        """Remove every reaction of a message; return how many there were."""
        return self.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,)).rowcount

    # ------------------------------------------------------------------ pins
    def set_pinned(self, mid: str, pinned: bool) -> bool:
        """Pin or unpin a message; return True when that changed something."""
        row = self.message_row(mid)
        if bool(row["pinned"]) == pinned:
            return False
        with self.conn:
            self.conn.execute("UPDATE messages SET pinned=? WHERE id=?", (int(pinned), mid))
            if pinned:
                seq = self._one("SELECT COALESCE(MAX(seq), 0) + 1 FROM pins")
                self.conn.execute("INSERT OR REPLACE INTO pins VALUES (?,?,?)",
                                  (mid, row["channel_id"], int(seq[0]) if seq else 1))
            else:
                self.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))
        return True

    def pins(self, cid: str) -> list[dict[str, Any]]:
        """Return a channel's pinned messages, most recently pinned first."""
        return [self._message_rec(r) for r in self._all(
            "SELECT m.* FROM pins p JOIN messages m ON m.id=p.message_id WHERE p.channel_id=? ORDER BY p.seq DESC",
            (cid,))]

    # ------------------------------------------------------------------ bans
    def is_banned(self, sid: str, uid: str) -> bool:
        """Whether a user is banned from a server."""
        return self._one("SELECT 1 FROM bans WHERE server_id=? AND user_id=?", (sid, uid)) is not None

    def add_ban(self, sid: str, uid: str, reason: str | None) -> None:
        """Record a ban (the caller removes the membership)."""
        self.conn.execute("INSERT INTO bans(id, server_id, user_id, reason, created_at) VALUES (?,?,?,?,?)",
                          (self.new_id(), sid, uid, reason, iso_now()))

    def remove_ban(self, sid: str, uid: str) -> bool:
        """Lift a ban; return False if there was none."""
        return self.conn.execute("DELETE FROM bans WHERE server_id=? AND user_id=?", (sid, uid)).rowcount > 0

    def bans(self, sid: str) -> list[dict[str, Any]]:
        """Return a server's Ban records, oldest first."""
        out = []
        for r in self._all("SELECT * FROM bans WHERE server_id=? ORDER BY created_at, id", (sid,)):
            try:
                u = self.user(r["user_id"])
                user = {k: u[k] for k in ("publicId", "name", "tag", "image")}
            except NotFound:
                user = {"publicId": r["user_id"], "name": None, "tag": None, "image": None}
            out.append({"publicId": r["id"], "reason": r["reason"], "createdAt": r["created_at"], "user": user})
        return out

    # ------------------------------------------------------------------ invites
    def create_invite(self, sid: str, channel_id: str | None, inviter_id: str | None, *,
                      max_age_s: int | None = None, max_uses: int | None = None) -> str:
        """Create an invite with an 8-alphanumeric code; return the code."""
        self.server_row(sid)
        code = "".join(secrets.choice(_ALNUM) for _ in range(8))
        expires = time.time() + max_age_s if max_age_s else None
        self.conn.execute(
            "INSERT INTO invites(code, server_id, channel_id, inviter_id, uses, max_uses, expires_at, created_at) "
            "VALUES (?,?,?,?,0,?,?,?)", (code, sid, channel_id, inviter_id, max_uses or None, expires, iso_now()))
        return code

    def invite_row(self, code: str) -> sqlite3.Row:
        """Return a live (unexpired, not used up) invite row. Raises NotFound."""
        row = self._one("SELECT * FROM invites WHERE code=?", (code,))
        if row is None or (row["expires_at"] is not None and row["expires_at"] <= time.time()) or (
                row["max_uses"] is not None and row["uses"] >= row["max_uses"]):
            raise NotFound("invites.errors.not_found")
        return row

    def server_invite(self, code: str) -> dict[str, Any]:
        """Return the server-invite record (the form of the invite list and of invite creation)."""
        row = self._one("SELECT * FROM invites WHERE code=?", (code,))
        if row is None:
            raise NotFound("invites.errors.not_found")
        inviter = None
        if row["inviter_id"] is not None:
            try:
                u = self.user(row["inviter_id"])
                inviter = {"publicId": u["publicId"], "name": u["name"], "image": u["image"], "tag": u["tag"]}
            except NotFound:
                inviter = None
        channel = None
        if row["channel_id"] is not None:
            c = self._one("SELECT id, name FROM channels WHERE id=?", (row["channel_id"],))
            if c is not None:
                channel = {"publicId": c[0], "name": c[1]}
        return {"code": row["code"], "uses": row["uses"], "maxUses": row["max_uses"],
                "expiresAt": None if row["expires_at"] is None else iso_at(row["expires_at"]),
                "createdAt": row["created_at"], "inviter": inviter, "channel": channel,
                "serverPublicId": row["server_id"]}

    def resolved_invite(self, code: str, viewer: str) -> dict[str, Any]:
        """Return the resolved invite (``GET /invites/{code}``) for ``viewer``."""
        row = self.invite_row(code)
        srv = self.server(row["server_id"])
        rec = self.server_invite(code)
        rec["server"] = {"publicId": srv["publicId"], "name": srv["name"], "imageUrl": srv["imageUrl"],
                         "memberCount": srv["memberCount"], "isMember": self.is_member(srv["publicId"], viewer),
                         "channelPublicId": row["channel_id"]}
        return rec

    def invites(self, sid: str, inviter: str | None = None) -> list[dict[str, Any]]:
        """Return the live invites of a server (optionally only one inviter's)."""
        sql = "SELECT code FROM invites WHERE server_id=?"
        args: list[Any] = [sid]
        if inviter is not None:
            sql += " AND inviter_id=?"
            args.append(inviter)
        out = []
        for (code,) in self._all(sql + " ORDER BY created_at, code", args):
            try:
                self.invite_row(code)
            except NotFound:
                continue
            out.append(self.server_invite(code))
        return out

    def delete_invite(self, code: str) -> None:
        """Delete an invite."""
        self.conn.execute("DELETE FROM invites WHERE code=?", (code,))

    # ------------------------------------------------------------------ server extras
    # Custom emojis, webhooks, the audit log, notification settings, vanity codes, profiles.
    def _delete_server_extra_rows(self, sid: str) -> None:
        """Delete a server's emojis, webhooks, audit log, notification settings and vanity code."""
        for table in ("emojis", "webhooks", "audit_logs", "notification_settings", "vanity_codes"):
            self.conn.execute(f"DELETE FROM {table} WHERE server_id=?", (sid,))

    @staticmethod
    def _emoji_rec(row: sqlite3.Row) -> dict[str, Any]:
        return {"publicId": row["id"], "name": row["name"], "url": row["url"], "serverPublicId": row["server_id"],
                "animated": bool(row["animated"])}

    def emojis(self, sid: str) -> list[dict[str, Any]]:
        """Return a server's Emoji records, oldest first."""
        return [self._emoji_rec(r) for r in self._all("SELECT * FROM emojis WHERE server_id=? ORDER BY created_at, id",
                                                       (sid,))]

    def emoji_row(self, sid: str, eid: str) -> sqlite3.Row:
        """Return an emoji row of a server. Raises NotFound."""
        row = self._one("SELECT * FROM emojis WHERE id=? AND server_id=?", (eid, sid))
        if row is None:
            raise NotFound("emojis.errors.not_found")
        return row

    def emoji_named(self, sid: str, name: str) -> bool:
        """Whether a server already has an emoji with this name."""
        return self._one("SELECT 1 FROM emojis WHERE server_id=? AND name=?", (sid, name)) is not None

    def create_emoji(self, sid: str, name: str, url: str, *, animated: bool = False,
                     creator_id: str | None = None) -> dict[str, Any]:
        """Create a custom emoji; return its Emoji record."""
        self.server_row(sid)
        eid = self.new_id()
        self.conn.execute("INSERT INTO emojis(id, server_id, name, url, animated, creator_id, created_at) "
                          "VALUES (?,?,?,?,?,?,?)", (eid, sid, name, url, int(animated), creator_id, iso_now()))
        return self._emoji_rec(self.emoji_row(sid, eid))

    def delete_emoji(self, sid: str, eid: str) -> None:
        """Delete a custom emoji. Raises NotFound."""
        self.emoji_row(sid, eid)
        self.conn.execute("DELETE FROM emojis WHERE id=?", (eid,))

    @staticmethod
    def _webhook_rec(row: sqlite3.Row, *, with_token: bool = False) -> dict[str, Any]:
        rec = {"publicId": row["id"], "name": row["name"], "avatarUrl": row["avatar_url"],
               "channelPublicId": row["channel_id"], "serverPublicId": row["server_id"],
               "createdAt": row["created_at"]}
        if with_token:
            rec["token"] = row["token"]
        return rec

    def webhooks(self, cid: str) -> list[dict[str, Any]]:
        """Return a channel's Webhook records without their tokens, oldest first."""
        return [self._webhook_rec(r) for r in
                self._all("SELECT * FROM webhooks WHERE channel_id=? ORDER BY created_at, id", (cid,))]

    def webhook_row(self, wid: str) -> sqlite3.Row:
        """Return a webhook row. Raises NotFound."""
        row = self._one("SELECT * FROM webhooks WHERE id=?", (wid,))
        if row is None:
            raise NotFound("webhooks.errors.not_found")
        return row

    def create_webhook(self, cid: str, name: str, avatar_url: str | None, creator_id: str | None) -> dict[str, Any]:
        """Create a webhook on a server channel; return its record **with** the token (creation only)."""
        chan = self.channel_row(cid)
        wid = self.new_id()
        self.conn.execute(
            "INSERT INTO webhooks(id, server_id, channel_id, name, avatar_url, token, creator_id, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (wid, chan["server_id"], cid, name, avatar_url, secrets.token_urlsafe(32), creator_id, iso_now()))
        return self._webhook_rec(self.webhook_row(wid), with_token=True)

    def update_webhook(self, wid: str, fields: dict[str, Any]) -> None:
        """Change a webhook's ``name`` and/or ``avatarUrl`` (None clears the avatar)."""
        self.webhook_row(wid)
        for key, col in (("name", "name"), ("avatarUrl", "avatar_url")):
            if key in fields:
                self.conn.execute(f"UPDATE webhooks SET {col}=? WHERE id=?", (fields[key], wid))

    def delete_webhook(self, wid: str) -> None:
        """Delete a webhook (its token stops working at once)."""
        self.webhook_row(wid)
        self.conn.execute("DELETE FROM webhooks WHERE id=?", (wid,))

    def webhook_for_token(self, wid: str, token: str) -> sqlite3.Row:
        """Return the webhook row when ``token`` is its token (constant-time compare). Raises NotFound
        for an unknown webhook and a wrong token alike."""
        row = self._one("SELECT * FROM webhooks WHERE id=?", (wid,))
        if row is None or not secrets.compare_digest(row["token"].encode(), token.encode("utf-8", "replace")):
            raise NotFound("webhooks.errors.not_found")
        return row

    def insert_webhook_message(self, row: sqlite3.Row, content: str, embeds: list[Any], *,
                               username: str | None = None, avatar_url: str | None = None) -> dict[str, Any]:
        """Store a message executed through a webhook; return its Message record.

        The author is the webhook's pseudo-user ``{publicId: webhook id, name, tag: "0000", image,
        isBot: true}``; ``username`` and ``avatar_url`` override the name and image for this message.
        The record also carries ``webhookId`` (in every later read too), so that a client can tell
        a webhook's message, whose author name may differ per message, from a user's.
        """
        author = {"publicId": row["id"], "name": username if username is not None else row["name"], "tag": "0000",
                  "image": avatar_url if avatar_url is not None else row["avatar_url"], "isBot": True}
        mid = self.new_id()
        now = iso_now()
        esc = escape_content(content)
        with self.conn:
            self.conn.execute(
                "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                "created_at, author_json, raw, webhook_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (mid, row["channel_id"], row["server_id"], row["id"], esc, json.dumps(embeds), None, now,
                 json.dumps(author), content, row["id"]))
        return self.message(mid)

    def add_audit(self, sid: str, executor_id: str | None, action: str, target_type: str | None,
                  target_id: str | None, details: dict[str, Any] | None = None) -> None:
        """Record one audit log entry of a server (``action`` in upper snake case, e.g. ``MEMBER_BAN``)."""
        if self._one("SELECT 1 FROM servers WHERE id=?", (sid,)) is None:
            return
        self.conn.execute(
            "INSERT INTO audit_logs(id, server_id, executor_id, action, target_type, target_id, details, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (self.new_id(), sid, executor_id, action, target_type, target_id, json.dumps(details or {}), iso_now()))

    def audit_logs(self, sid: str, limit: int, action: str | None = None) -> list[dict[str, Any]]:
        """Return a server's newest ``limit`` AuditEntry records, newest first, optionally of one action."""
        sql = "SELECT * FROM audit_logs WHERE server_id=?"
        args: list[Any] = [sid]
        if action is not None:
            sql += " AND action=?"
            args.append(action)
        out = []
        for r in self._all(sql + " ORDER BY seq DESC LIMIT ?", [*args, limit]):
            executor = None
            if r["executor_id"] is not None:
                try:
                    u = self.user(r["executor_id"])
                    executor = {k: u[k] for k in ("publicId", "name", "tag", "image")}
                except NotFound:
                    executor = {"publicId": r["executor_id"], "name": None, "tag": None, "image": None}
            out.append({"publicId": r["id"], "actionType": r["action"], "targetType": r["target_type"],
                        "targetId": r["target_id"], "details": json.loads(r["details"]), "executor": executor,
                        "createdAt": r["created_at"]})
        return out

    def notifications(self, sid: str, uid: str) -> dict[str, Any]:
        """Return a member's notification settings ``{muted, muteUntil, mentionsOnly}`` of a server."""
        row = self._one("SELECT * FROM notification_settings WHERE server_id=? AND user_id=?", (sid, uid))
        if row is None:
            return {"muted": False, "muteUntil": None, "mentionsOnly": False}
        return {"muted": bool(row["muted"]), "muteUntil": row["mute_until"], "mentionsOnly": bool(row["mentions_only"])}

    def set_notifications(self, sid: str, uid: str, fields: dict[str, Any]) -> None:
        """Change some of ``muted``, ``muteUntil`` (ISO or None) and ``mentionsOnly`` for a member."""
        current = self.notifications(sid, uid)
        current.update(fields)
        self.conn.execute("INSERT OR REPLACE INTO notification_settings VALUES (?,?,?,?,?)",
                          (sid, uid, int(current["muted"]), current["muteUntil"], int(current["mentionsOnly"])))

    def vanity_code(self, sid: str) -> str | None:
        """Return a server's vanity invite code, or None."""
        row = self._one("SELECT code FROM vanity_codes WHERE server_id=?", (sid,))
        return None if row is None else str(row[0])

    def set_vanity_code(self, sid: str, code: str | None) -> None:
        """Set (or with None remove) a server's vanity code. Raises NotFound, BadRequest (code taken)."""
        self.server_row(sid)
        if code is None:
            self.conn.execute("DELETE FROM vanity_codes WHERE server_id=?", (sid,))
            return
        taken = self._one("SELECT server_id FROM vanity_codes WHERE code=?", (code,))
        if taken is not None and taken[0] != sid:
            raise BadRequest("servers.errors.vanity_taken")
        self.conn.execute("INSERT OR REPLACE INTO vanity_codes VALUES (?,?)", (sid, code))

    def profile(self, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return a user's profile: the User record plus ``banner, bannerColor, bio, followersCount,
        followingCount, mutualFriendsCount``. Raises NotFound."""
        rec = self.user(uid, viewer=viewer)
        row = self._one("SELECT * FROM user_profiles WHERE user_id=?", (uid,))
        for key, col in PROFILE_FIELDS.items():
            rec[key] = (0 if key.endswith("Count") else None) if row is None else row[col]
        return rec

    def set_profile(self, uid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change profile fields (keys of :data:`PROFILE_FIELDS`); return the profile."""
        self.user_row(uid)
        self.conn.execute("INSERT OR IGNORE INTO user_profiles(user_id) VALUES (?)", (uid,))
        for key, col in PROFILE_FIELDS.items():
            if key in fields:
                self.conn.execute(f"UPDATE user_profiles SET {col}=? WHERE user_id=?", (fields[key], uid))
        return self.profile(uid)

    def mutual_servers(self, uid: str, viewer: str) -> list[dict[str, Any]]:
        """Return ``[{publicId, name, imageUrl}]`` of the servers both users belong to, by creation."""
        self.user_row(uid)
        rows = self._all(
            "SELECT s.id, s.name, s.image_url FROM servers s JOIN members a ON a.server_id=s.id AND a.user_id=? "
            "JOIN members b ON b.server_id=s.id AND b.user_id=? ORDER BY s.created_at, s.id", (uid, viewer))
        return [{"publicId": r[0], "name": r[1], "imageUrl": r[2]} for r in rows]
    # ------------------------------------------------------------------ permission overwrites
    # Channel and category overrides, private channels and categories, and the channel-level
    # permission computation that makes them take effect for VIEW_CHANNELS and SEND_MESSAGES.

    def _member_context(self, sid: str, uid: str) -> tuple[int, str | None, frozenset[str]] | None:
        """``(server permissions, @everyone role id, the member's other role ids)``, or None when
        ``uid`` is not a member of ``sid``."""
        if not self.is_member(sid, uid):
            return None
        everyone = self._one("SELECT id FROM roles WHERE server_id=? AND everyone=1", (sid,))
        roles = frozenset(r[0] for r in self._all(
            "SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid)))
        return self.permissions(sid, uid), None if everyone is None else str(everyone[0]), roles

    @staticmethod
    def _apply_overrides(base: int, everyone_id: str | None, role_ids: frozenset[str], uid: str,
                         rows: list[sqlite3.Row], private: bool) -> int:
        """Apply a scope's overrides to a member's server permissions.

        Owner and ``ADMINISTRATOR`` (``base`` with the ADMINISTRATOR bit) keep everything.
        Otherwise, in order: a private scope drops VIEW_CHANNELS; the ``@everyone`` override
        (deny, then allow); the member's role overrides together (every deny, then every allow);
        the member's own override (deny, then allow).
        """
        if base & PERM["ADMINISTRATOR"]:
            return ALL_PERMISSIONS
        if private:
            base &= ~PERM["VIEW_CHANNELS"]
        everyone = member = None
        role_allow = role_deny = 0
        for r in rows:
            if r["type"] == "ROLE":
                if r["target_id"] == everyone_id:
                    everyone = r
                elif r["target_id"] in role_ids:
                    role_allow |= int(r["allow"])
                    role_deny |= int(r["deny"])
            elif r["target_id"] == uid:
                member = r
        if everyone is not None:
            base = (base & ~int(everyone["deny"])) | int(everyone["allow"])
        base = (base & ~role_deny) | role_allow
        if member is not None:
            base = (base & ~int(member["deny"])) | int(member["allow"])
        return base

    def _override_rows(self, scope_id: str) -> list[sqlite3.Row]:
        return self._all("SELECT * FROM overrides WHERE scope_id=? ORDER BY seq", (scope_id,))

    def channel_permissions(self, cid: str, uid: str) -> int:
        """A member's permissions in one server channel, overrides and ``isPrivate`` applied.

        0 for an unknown channel, a DM or a non-member. Only VIEW_CHANNELS and SEND_MESSAGES
        are checked per channel; every other check uses the server permissions.
        """
        row = self._one("SELECT server_id, is_private FROM channels WHERE id=?", (cid,))
        if row is None or row[0] is None:
            return 0
        ctx = self._member_context(row[0], uid)
        if ctx is None:
            return 0
        base, everyone_id, roles = ctx
        return self._apply_overrides(base, everyone_id, roles, uid, self._override_rows(cid), bool(row[1]))

    def category_permissions(self, sid: str, cat_id: str, uid: str) -> int:
        """A member's permissions in a category (its overrides and ``isPrivate`` applied); 0 if unknown."""
        row = self._one("SELECT is_private FROM categories WHERE id=? AND server_id=?", (cat_id, sid))
        ctx = self._member_context(sid, uid)
        if row is None or ctx is None:
            return 0
        base, everyone_id, roles = ctx
        return self._apply_overrides(base, everyone_id, roles, uid, self._override_rows(cat_id), bool(row[0]))

    def visible_channel_ids_in(self, sid: str, uid: str) -> list[str]:
        """The ids of the channels of one server that a user may view (overrides applied)."""
        ctx = self._member_context(sid, uid)
        if ctx is None:
            return []
        base, everyone_id, roles = ctx
        channels = self._all("SELECT id, is_private FROM channels WHERE server_id=?", (sid,))
        if base & PERM["ADMINISTRATOR"]:
            return [str(c[0]) for c in channels]
        rows: dict[str, list[sqlite3.Row]] = {}
        for r in self._all("SELECT * FROM overrides WHERE server_id=? ORDER BY seq", (sid,)):
            rows.setdefault(r["scope_id"], []).append(r)
        return [str(c[0]) for c in channels
                if self._apply_overrides(base, everyone_id, roles, uid, rows.get(c[0], []), bool(c[1]))
                & PERM["VIEW_CHANNELS"]]

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel: a DM participant, or VIEW_CHANNELS and
        SEND_MESSAGES once overrides are applied."""
        row = self._one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None:
            return False
        if row[0] is None:
            return uid in self.dm_participants(cid)
        perms = self.channel_permissions(cid, uid)
        return bool(perms & PERM["VIEW_CHANNELS"]) and bool(perms & PERM["SEND_MESSAGES"])

    def override_scope(self, scope_id: str) -> tuple[str, str]:
        """``("channel" | "category", server id)`` of a server channel or category id.

        Raises:
            NotFound: Neither a server channel nor a category (a DM counts as not found).
        """
        row = self._one("SELECT server_id FROM channels WHERE id=?", (scope_id,))
        if row is not None and row[0] is not None:
            return "channel", str(row[0])
        row = self._one("SELECT server_id FROM categories WHERE id=?", (scope_id,))
        if row is not None:
            return "category", str(row[0])
        raise NotFound("channels.errors.not_found")

    def _override_rec(self, row: sqlite3.Row) -> dict[str, Any]:
        name: str | None = None
        if row["type"] == "ROLE":
            r = self._one("SELECT name FROM roles WHERE id=?", (row["target_id"],))
            name = None if r is None else r[0]
        else:
            try:
                name = self.user(row["target_id"])["name"]
            except NotFound:
                name = None
        return {"id": row["id"], "type": row["type"], "targetId": row["target_id"], "targetName": name,
                "allow": str(row["allow"]), "deny": str(row["deny"])}

    def overrides(self, scope_id: str) -> list[dict[str, Any]]:
        """The Override records of a channel or category, oldest first."""
        return [self._override_rec(r) for r in self._override_rows(scope_id)]

    def set_override(self, sid: str, scope_id: str, target_id: str, kind: str, allow: int, deny: int) -> bool:
        """Create or replace the override of ``target_id`` on a scope; return True when created.

        Raises:
            BadRequest: The scope already holds :data:`MAX_OVERRIDES` overrides.
        """
        row = self._one("SELECT id FROM overrides WHERE scope_id=? AND target_id=?", (scope_id, target_id))
        if row is not None:
            self.conn.execute("UPDATE overrides SET type=?, allow=?, deny=? WHERE id=?",
                              (kind, str(allow), str(deny), row[0]))
            return False
        count = self._one("SELECT COUNT(*) FROM overrides WHERE scope_id=?", (scope_id,))
        if count is not None and int(count[0]) >= MAX_OVERRIDES:
            raise BadRequest("channels.errors.too_many_overrides")
        seq = self._one("SELECT COALESCE(MAX(seq), 0) + 1 FROM overrides")
        self.conn.execute(
            "INSERT INTO overrides(id, server_id, scope_id, target_id, type, allow, deny, seq) VALUES (?,?,?,?,?,?,?,?)",
            (self.new_id(), sid, scope_id, target_id, kind, str(allow), str(deny), int(seq[0]) if seq else 1))
        return True

    def delete_override(self, scope_id: str, override_id: str) -> None:
        """Delete one override of a scope. Raises NotFound."""
        if self.conn.execute("DELETE FROM overrides WHERE scope_id=? AND id=?", (scope_id, override_id)).rowcount == 0:
            raise NotFound("overrides.errors.not_found")

    def _copy_overrides(self, sid: str, source: str, target: str) -> None:
        """Replace ``target``'s overrides with copies of ``source``'s (new ids)."""
        self.conn.execute("DELETE FROM overrides WHERE scope_id=?", (target,))
        for r in self._override_rows(source):
            self.set_override(sid, target, r["target_id"], r["type"], int(r["allow"]), int(r["deny"]))

    def inherit_category(self, cid: str) -> None:
        """Give a new channel its category's overrides, and make it private when the category is."""
        row = self.channel_row(cid)
        if row["category_id"] is None:
            return
        cat = self.category_row(row["server_id"], row["category_id"])
        with self.conn:
            self._copy_overrides(row["server_id"], cat["id"], cid)
            if cat["is_private"]:
                self.conn.execute("UPDATE channels SET is_private=1 WHERE id=?", (cid,))

    def sync_channel(self, cid: str) -> None:
        """Copy the parent category's overrides and ``isPrivate`` onto a channel.

        Raises:
            NotFound: Unknown channel. BadRequest: The channel has no category.
        """
        row = self.channel_row(cid)
        if row["server_id"] is None or row["category_id"] is None:
            raise BadRequest("channels.errors.no_category")
        cat = self.category_row(row["server_id"], row["category_id"])
        with self.conn:
            self._copy_overrides(row["server_id"], cat["id"], cid)
            self.conn.execute("UPDATE channels SET is_private=? WHERE id=?", (cat["is_private"], cid))

    def sync_category(self, sid: str, cat_id: str) -> list[str]:
        """Copy a category's overrides and ``isPrivate`` onto each of its channels; return their ids."""
        cat = self.category_row(sid, cat_id)
        ids = [str(r[0]) for r in self._all("SELECT id FROM channels WHERE category_id=?", (cat_id,))]
        with self.conn:
            for cid in ids:
                self._copy_overrides(sid, cat_id, cid)
                self.conn.execute("UPDATE channels SET is_private=? WHERE id=?", (cat["is_private"], cid))
        return ids

    def update_category(self, sid: str, cat_id: str, fields: dict[str, Any]) -> None:
        """Change a category's ``name`` and/or ``isPrivate``."""
        self.category_row(sid, cat_id)
        if "name" in fields:
            self.conn.execute("UPDATE categories SET name=? WHERE id=?", (fields["name"], cat_id))
        if "isPrivate" in fields:
            self.conn.execute("UPDATE categories SET is_private=? WHERE id=?", (int(fields["isPrivate"]), cat_id))

    def delete_category(self, sid: str, cat_id: str) -> list[str]:
        """Delete a category (and its overrides); its channels become uncategorised, after the
        existing uncategorised ones. Returns the ids of the channels moved."""
        self.category_row(sid, cat_id)
        moved = [str(r[0]) for r in self._all(
            "SELECT id FROM channels WHERE category_id=? ORDER BY position, id", (cat_id,))]
        count = self._one("SELECT COUNT(*) FROM channels WHERE server_id=? AND category_id IS NULL", (sid,))
        start = int(count[0]) if count else 0
        with self.conn:
            for offset, cid in enumerate(moved):
                self.conn.execute("UPDATE channels SET category_id=NULL, position=? WHERE id=?", (start + offset, cid))
            self.conn.execute("DELETE FROM overrides WHERE scope_id=?", (cat_id,))
            self.conn.execute("DELETE FROM categories WHERE id=?", (cat_id,))
        return moved

    def duplicate_channel(self, cid: str) -> str:
        """Create a copy of a server channel (name, type, category, ``isPrivate``, description and
        overrides; no messages) at the end of its category; return the new id.

        Raises:
            NotFound: Unknown channel. BadRequest: A DM.
        """
        row = self.channel_row(cid)
        if row["server_id"] is None:
            raise BadRequest("channels.errors.not_a_server_channel")
        new = self.create_channel(row["server_id"], row["name"], row["type"], category_id=row["category_id"],
                                  is_private=bool(row["is_private"]), description=row["description"])
        with self.conn:
            self._copy_overrides(row["server_id"], cid, new)
        return new
