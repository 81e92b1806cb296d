"""The store's servers: servers, roles, members and invites."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from .people import PeopleStore
from .schema import (
    _ALNUM,
    ALL_PERMISSIONS,
    DEFAULT_PERMISSIONS,
    PERM,
    Forbidden,
    NotFound,
    iso_at,
    iso_now,
    parse_permissions,
)


class ServerStore(PeopleStore):
    """Servers, roles, members and invites (see :class:`~.Store`)."""

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
