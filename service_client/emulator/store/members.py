"""The store's members repository: members and roles of a server, its bans, and the permissions they add up to."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from .database import Database
from .schema import (
    ALL_PERMISSIONS,
    PERM,
    Forbidden,
    NotFound,
    iso_now,
    parse_permissions,
)
from .servers import ServerRepository
from .users import UserRepository


class MemberRepository:
    """Members and roles of a server, its bans, and the permissions they add up to.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
        servers: The servers repository.
    """

    def __init__(self, db: Database, users: UserRepository, servers: ServerRepository) -> None:
        self.db = db
        self.users = users
        self.servers = servers

    def is_banned(self, sid: str, uid: str) -> bool:
        """Whether a user is banned from a server."""
        return self.db.one("SELECT 1 FROM bans WHERE server_id=? AND user_id=?", (sid, uid)) is not None

    def add_ban(self, sid: str, uid: str, reason: str | None) -> None:
        """Record a ban (the caller removes the membership)."""
        self.db.conn.execute("INSERT INTO bans(id, server_id, user_id, reason, created_at) VALUES (?,?,?,?,?)",
                             (self.db.new_id(), sid, uid, reason, iso_now()))

    def remove_ban(self, sid: str, uid: str) -> bool:
        """Lift a ban; return False if there was none."""
        return self.db.conn.execute("DELETE FROM bans WHERE server_id=? AND user_id=?", (sid, uid)).rowcount > 0

    def bans(self, sid: str) -> list[dict[str, Any]]:
        """Return a server's Ban records, oldest first."""
        out = []
        for r in self.db.rows("SELECT * FROM bans WHERE server_id=? ORDER BY created_at, id", (sid,)):
            try:
                u = self.users.user(r["user_id"])
                user = {k: u[k] for k in ("publicId", "name", "tag", "image")}
            except NotFound:
                user = {"publicId": r["user_id"], "name": None, "tag": None, "image": None}
            out.append({"publicId": r["id"], "reason": r["reason"], "createdAt": r["created_at"], "user": user})
        return out

    def member_ids(self, sid: str) -> list[str]:
        """Return the user ids of a server's members."""
        return [r[0] for r in self.db.rows("SELECT user_id FROM members WHERE server_id=?", (sid,))]

    def role_row(self, sid: str, rid: str) -> sqlite3.Row:
        """Return a role row of a server. Raises NotFound."""
        row = self.db.one("SELECT * FROM roles WHERE id=? AND server_id=?", (rid, sid))
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
                self.db.rows("SELECT * FROM roles WHERE server_id=? ORDER BY position, id", (sid,))]

    def create_role(self, sid: str, name: str, permissions: int, *, color: str | None = None,
                    hoist: bool = False) -> dict[str, Any]:
        """Create a role at the next position; return its Role record."""
        self.servers.server_row(sid)
        rid = self.db.new_id()
        pos = self.db.one("SELECT COALESCE(MAX(position), 0) + 1 FROM roles WHERE server_id=?", (sid,))
        self.db.conn.execute(
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
                self.db.conn.execute(f"UPDATE roles SET {col}=? WHERE id=?", (value, rid))
        return self.role(sid, rid)

    def delete_role(self, sid: str, rid: str) -> None:
        """Delete a role (``@everyone`` cannot be deleted: Forbidden)."""
        row = self.role_row(sid, rid)
        if row["everyone"]:
            raise Forbidden("roles.errors.cannot_delete_everyone")
        with self.db.conn:
            self.db.conn.execute("DELETE FROM roles WHERE id=?", (rid,))
            self.db.conn.execute("DELETE FROM member_roles WHERE role_id=?", (rid,))
            self.db.conn.execute("DELETE FROM overrides WHERE target_id=? AND type='ROLE'", (rid,))

    def is_member(self, sid: str, uid: str) -> bool:
        """Whether the user is a member of the server."""
        return self.db.one("SELECT 1 FROM members WHERE server_id=? AND user_id=?", (sid, uid)) is not None

    def add_member(self, sid: str, uid: str, role_ids: Iterable[str] = ()) -> bool:
        """Add a member (with extra roles); return False if it was already a member."""
        self.servers.server_row(sid)
        self.users.user_row(uid)
        role_ids = list(role_ids)
        for rid in role_ids:
            self.role_row(sid, rid)
        if self.is_member(sid, uid):
            for rid in role_ids:
                self.db.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))
            return False
        with self.db.conn:
            self.db.conn.execute("INSERT INTO members(id, server_id, user_id, joined_at) VALUES (?,?,?,?)",
                                 (self.db.new_id(), sid, uid, iso_now()))
            for rid in role_ids:
                self.db.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))
        return True

    def remove_member(self, sid: str, uid: str) -> bool:
        """Remove a member; return False if it was not a member."""
        if not self.is_member(sid, uid):
            return False
        with self.db.conn:
            self.db.conn.execute("DELETE FROM members WHERE server_id=? AND user_id=?", (sid, uid))
            self.db.conn.execute("DELETE FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid))
        return True

    def set_member_roles(self, sid: str, uid: str, role_ids: list[str]) -> None:
        """Replace a member's role set (``@everyone`` always stays)."""
        for rid in role_ids:
            self.role_row(sid, rid)
        with self.db.conn:
            self.db.conn.execute("DELETE FROM member_roles WHERE server_id=? AND user_id=?", (sid, uid))
            for rid in role_ids:
                self.db.conn.execute("INSERT OR IGNORE INTO member_roles VALUES (?,?,?)", (sid, uid, rid))

    def set_nickname(self, sid: str, uid: str, nickname: str | None) -> None:
        """Set or clear a member's nickname."""
        self.db.conn.execute("UPDATE members SET nickname=? WHERE server_id=? AND user_id=?", (nickname, sid, uid))

    def member(self, sid: str, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return the nested Member record (with ``user`` and full ``roles``), ``@everyone`` first in ``roles``.

        Raises:
            NotFound: Not a member.
        """
        row = self.db.one("SELECT * FROM members WHERE server_id=? AND user_id=?", (sid, uid))
        if row is None:
            raise NotFound("members.errors.not_found")
        srv = self.servers.server_row(sid)
        return self._member_rec(row, srv["owner_id"], self._member_roles(sid, uid), viewer)

    def _member_roles(self, sid: str, uid: str) -> list[dict[str, Any]]:
        rows = self.db.rows(
            "SELECT r.* FROM roles r WHERE r.server_id=? AND (r.everyone=1 OR r.id IN "
            "(SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?)) ORDER BY r.position, r.id",
            (sid, sid, uid))
        return [self._role_rec(r) for r in rows]

    def _member_rec(self, row: sqlite3.Row, owner_id: str, roles: list[dict[str, Any]],
                    viewer: str | None) -> dict[str, Any]:
        return {"publicId": row["id"], "userId": row["user_id"], "user": self.users.user(row["user_id"], viewer=viewer),
                "serverPublicId": row["server_id"], "roles": roles, "joinedAt": row["joined_at"],
                "nickname": row["nickname"], "isOwner": row["user_id"] == owner_id}

    def members(self, sid: str, *, viewer: str | None = None) -> list[dict[str, Any]]:
        """Return every Member record of a server, by join order."""
        srv = self.servers.server_row(sid)
        roles = {r["publicId"]: r for r in self.roles(sid)}
        everyone = [r for r in roles.values() if self._is_everyone(sid, r["publicId"])]
        extra: dict[str, list[str]] = {}
        for r in self.db.rows("SELECT user_id, role_id FROM member_roles WHERE server_id=?", (sid,)):
            extra.setdefault(r[0], []).append(r[1])
        out = []
        for row in self.db.rows("SELECT * FROM members WHERE server_id=? ORDER BY joined_at, id", (sid,)):
            mine = everyone + [roles[rid] for rid in extra.get(row["user_id"], []) if rid in roles]
            mine.sort(key=lambda r: (r["position"], r["publicId"]))
            out.append(self._member_rec(row, srv["owner_id"], mine, viewer))
        return out

    def _is_everyone(self, sid: str, rid: str) -> bool:
        row = self.db.one("SELECT everyone FROM roles WHERE id=? AND server_id=?", (rid, sid))
        return bool(row and row[0])

    def permissions(self, sid: str, uid: str) -> int:
        """Compute a member's server permissions; 0 for a non-member.

        Owner gives ALL; otherwise the OR of ``@everyone`` and the member's roles, and
        ``ADMINISTRATOR`` widens to ALL.
        """
        srv = self.db.one("SELECT owner_id FROM servers WHERE id=?", (sid,))
        if srv is None or not self.is_member(sid, uid):
            return 0
        if srv[0] == uid:
            return ALL_PERMISSIONS
        value = 0
        for r in self.db.rows(
                "SELECT permissions FROM roles WHERE server_id=? AND (everyone=1 OR id IN "
                "(SELECT role_id FROM member_roles WHERE server_id=? AND user_id=?))", (sid, sid, uid)):
            value |= int(r[0])
        if value & PERM["ADMINISTRATOR"]:
            return ALL_PERMISSIONS
        return value

    def has_perm(self, sid: str, uid: str, name: str) -> bool:
        """Whether the member holds permission ``name`` on the server."""
        return bool(self.permissions(sid, uid) & PERM[name])
