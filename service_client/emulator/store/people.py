"""The store's people: users and tokens, direct-message channels, bans."""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

from .base import StoreBase
from .schema import NotFound, iso_now


class PeopleStore(StoreBase):
    """Users, DM channels and bans (see :class:`~.Store`)."""

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

    def dm_channel_id(self, uid: str, other: str) -> str | None:
        """The id of the DM between two users, or None when it was never opened (opens nothing)."""
        a, b = sorted((uid, other))
        row = self._one("SELECT channel_id FROM dms WHERE user_a=? AND user_b=?", (a, b))
        return None if row is None else str(row[0])

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
