"""The store's invites repository: invites to servers."""

from __future__ import annotations

import secrets
import sqlite3
import time
from typing import Any

from .database import Database
from .members import MemberRepository
from .schema import (
    _ALNUM,
    NotFound,
    iso_at,
    iso_now,
)
from .servers import ServerRepository
from .users import UserRepository


class InviteRepository:
    """Invites to servers.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
        servers: The servers repository.
        members: The members repository.
    """

    def __init__(self, db: Database, users: UserRepository, servers: ServerRepository, members: MemberRepository) -> None:
        self.db = db
        self.users = users
        self.servers = servers
        self.members = members

    def create_invite(self, sid: str, channel_id: str | None, inviter_id: str | None, *,
                      max_age_s: int | None = None, max_uses: int | None = None) -> str:
        """Create an invite with an 8-alphanumeric code; return the code."""
        self.servers.server_row(sid)
        code = "".join(secrets.choice(_ALNUM) for _ in range(8))
        expires = time.time() + max_age_s if max_age_s else None
        self.db.conn.execute(
            "INSERT INTO invites(code, server_id, channel_id, inviter_id, uses, max_uses, expires_at, created_at) "
            "VALUES (?,?,?,?,0,?,?,?)", (code, sid, channel_id, inviter_id, max_uses or None, expires, iso_now()))
        return code

    def invite_row(self, code: str) -> sqlite3.Row:
        """Return a live (unexpired, not used up) invite row. Raises NotFound."""
        row = self.db.one("SELECT * FROM invites WHERE code=?", (code,))
        if row is None or (row["expires_at"] is not None and row["expires_at"] <= time.time()) or (
                row["max_uses"] is not None and row["uses"] >= row["max_uses"]):
            raise NotFound("invites.errors.not_found")
        return row

    def server_invite(self, code: str) -> dict[str, Any]:
        """Return the server-invite record (the form of the invite list and of invite creation)."""
        row = self.db.one("SELECT * FROM invites WHERE code=?", (code,))
        if row is None:
            raise NotFound("invites.errors.not_found")
        inviter = None
        if row["inviter_id"] is not None:
            try:
                u = self.users.user(row["inviter_id"])
                inviter = {"publicId": u["publicId"], "name": u["name"], "image": u["image"], "tag": u["tag"]}
            except NotFound:
                inviter = None
        channel = None
        if row["channel_id"] is not None:
            c = self.db.one("SELECT id, name FROM channels WHERE id=?", (row["channel_id"],))
            if c is not None:
                channel = {"publicId": c[0], "name": c[1]}
        return {"code": row["code"], "uses": row["uses"], "maxUses": row["max_uses"],
                "expiresAt": None if row["expires_at"] is None else iso_at(row["expires_at"]),
                "createdAt": row["created_at"], "inviter": inviter, "channel": channel,
                "serverPublicId": row["server_id"]}

    def resolved_invite(self, code: str, viewer: str) -> dict[str, Any]:
        """Return the resolved invite (``GET /invites/{code}``) for ``viewer``."""
        row = self.invite_row(code)
        srv = self.servers.server(row["server_id"])
        rec = self.server_invite(code)
        rec["server"] = {"publicId": srv["publicId"], "name": srv["name"], "imageUrl": srv["imageUrl"],
                         "memberCount": srv["memberCount"], "isMember": self.members.is_member(srv["publicId"], viewer),
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
        for (code,) in self.db.rows(sql + " ORDER BY created_at, code", args):
            try:
                self.invite_row(code)
            except NotFound:
                continue
            out.append(self.server_invite(code))
        return out

    def delete_invite(self, code: str) -> None:
        """Delete an invite."""
        self.db.conn.execute("DELETE FROM invites WHERE code=?", (code,))
