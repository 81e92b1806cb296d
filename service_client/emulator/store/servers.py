"""The store's servers repository: servers: their records, notification settings, vanity codes, the servers two users share."""

from __future__ import annotations

import sqlite3
from typing import Any

from .database import Database
from .schema import (
    DEFAULT_PERMISSIONS,
    BadRequest,
    NotFound,
    iso_now,
)
from .users import UserRepository


class ServerRepository:
    """Servers: their records, notification settings, vanity codes, the servers two users share.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
    """

    def __init__(self, db: Database, users: UserRepository) -> None:
        self.db = db
        self.users = users

    def create_server(self, name: str, owner_id: str, *, image_url: str | None = None) -> str:
        """Create a server with its ``@everyone`` role and the owner as member; return its id."""
        self.users.user_row(owner_id)
        sid = self.db.new_id()
        now = iso_now()
        with self.db.conn:
            self.db.conn.execute("INSERT INTO servers(id, name, image_url, owner_id, created_at) VALUES (?,?,?,?,?)",
                                 (sid, name, image_url, owner_id, now))
            self.db.conn.execute(
                "INSERT INTO roles(id, server_id, name, color, hoist, position, permissions, everyone) "
                "VALUES (?,?,?,?,?,?,?,1)", (self.db.new_id(), sid, "@everyone", None, 0, 0, str(DEFAULT_PERMISSIONS)))
            self.db.conn.execute("INSERT INTO members(id, server_id, user_id, joined_at) VALUES (?,?,?,?)",
                                 (self.db.new_id(), sid, owner_id, now))
        return sid

    def server_row(self, sid: str) -> sqlite3.Row:
        """Return a server row. Raises NotFound."""
        row = self.db.one("SELECT * FROM servers WHERE id=?", (sid,))
        if row is None:
            raise NotFound("servers.errors.not_found")
        return row

    def server(self, sid: str) -> dict[str, Any]:
        """Return a Server record. Raises NotFound."""
        row = self.server_row(sid)
        count = self.db.one("SELECT COUNT(*) FROM members WHERE server_id=?", (sid,))
        return self._server_rec(row, int(count[0]) if count else 0)

    @staticmethod
    def _server_rec(row: sqlite3.Row, member_count: int) -> dict[str, Any]:
        return {"publicId": row["id"], "name": row["name"], "imageUrl": row["image_url"],
                "memberCount": member_count, "ownerId": row["owner_id"], "createdAt": row["created_at"]}

    def servers_of(self, uid: str) -> list[dict[str, Any]]:
        """Return the Server records of every server the user is a member of, by creation."""
        rows = self.db.rows(
            "SELECT s.*, (SELECT COUNT(*) FROM members m2 WHERE m2.server_id=s.id) AS mc "
            "FROM servers s JOIN members m ON m.server_id=s.id WHERE m.user_id=? ORDER BY s.created_at, s.id",
            (uid,))
        return [self._server_rec(r, int(r["mc"])) for r in rows]

    def server_ids_of(self, uid: str) -> list[str]:
        """Return the ids of the servers a user belongs to."""
        return [r[0] for r in self.db.rows("SELECT server_id FROM members WHERE user_id=?", (uid,))]

    def update_server(self, sid: str, fields: dict[str, Any]) -> None:
        """Change a server's ``name`` and/or ``imageUrl`` (None clears the icon)."""
        self.server_row(sid)
        if "name" in fields:
            self.db.conn.execute("UPDATE servers SET name=? WHERE id=?", (fields["name"], sid))
        if "imageUrl" in fields:
            self.db.conn.execute("UPDATE servers SET image_url=? WHERE id=?", (fields["imageUrl"], sid))

    def delete_server(self, sid: str) -> None:
        """Delete a server and everything in it."""
        self.server_row(sid)
        chans = [r[0] for r in self.db.rows("SELECT id FROM channels WHERE server_id=?", (sid,))]
        with self.db.conn:
            for cid in chans:
                self.db.delete_channel_rows(cid)
            for table in ("roles", "members", "member_roles", "categories", "invites", "bans", "overrides"):
                self.db.conn.execute(f"DELETE FROM {table} WHERE server_id=?", (sid,))
            self.db.delete_server_extras(sid)
            self.db.conn.execute("DELETE FROM servers WHERE id=?", (sid,))

    def notifications(self, sid: str, uid: str) -> dict[str, Any]:
        """Return a member's notification settings ``{muted, muteUntil, mentionsOnly}`` of a server."""
        row = self.db.one("SELECT * FROM notification_settings WHERE server_id=? AND user_id=?", (sid, uid))
        if row is None:
            return {"muted": False, "muteUntil": None, "mentionsOnly": False}
        return {"muted": bool(row["muted"]), "muteUntil": row["mute_until"], "mentionsOnly": bool(row["mentions_only"])}

    def set_notifications(self, sid: str, uid: str, fields: dict[str, Any]) -> None:
        """Change some of ``muted``, ``muteUntil`` (ISO or None) and ``mentionsOnly`` for a member."""
        current = self.notifications(sid, uid)
        current.update(fields)
        self.db.conn.execute("INSERT OR REPLACE INTO notification_settings VALUES (?,?,?,?,?)",
                             (sid, uid, int(current["muted"]), current["muteUntil"], int(current["mentionsOnly"])))

    def vanity_code(self, sid: str) -> str | None:
        """Return a server's vanity invite code, or None."""
        row = self.db.one("SELECT code FROM vanity_codes WHERE server_id=?", (sid,))
        return None if row is None else str(row[0])

    def set_vanity_code(self, sid: str, code: str | None) -> None:
        """Set (or with None remove) a server's vanity code. Raises NotFound, BadRequest (code taken)."""
        self.server_row(sid)
        if code is None:
            self.db.conn.execute("DELETE FROM vanity_codes WHERE server_id=?", (sid,))
            return
        taken = self.db.one("SELECT server_id FROM vanity_codes WHERE code=?", (code,))
        if taken is not None and taken[0] != sid:
            raise BadRequest("servers.errors.vanity_taken")
        self.db.conn.execute("INSERT OR REPLACE INTO vanity_codes VALUES (?,?)", (sid, code))

    def mutual_servers(self, uid: str, viewer: str) -> list[dict[str, Any]]:
        """Return ``[{publicId, name, imageUrl}]`` of the servers both users belong to, by creation."""
        self.users.user_row(uid)
        rows = self.db.rows(
            "SELECT s.id, s.name, s.image_url FROM servers s JOIN members a ON a.server_id=s.id AND a.user_id=? "
            "JOIN members b ON b.server_id=s.id AND b.user_id=? ORDER BY s.created_at, s.id", (uid, viewer))
        return [{"publicId": r[0], "name": r[1], "imageUrl": r[2]} for r in rows]
