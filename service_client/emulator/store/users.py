"""The store's users repository: users: their records and tokens, status, activity and profile."""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

from .database import Database
from .schema import (
    PROFILE_FIELDS,
    NotFound,
    iso_now,
)


class UserRepository:
    """Users: their records and tokens, status, activity and profile.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    def create_user(self, name: str, *, bot: bool = False, image: str | None = None) -> tuple[dict[str, Any], str]:
        """Create a user and its token.

        Returns:
            ``(User record, token)``.
        """
        uid = self.db.new_id()
        token = secrets.token_urlsafe(24)
        tag = f"{secrets.randbelow(10000):04d}"
        self.db.conn.execute(
            "INSERT INTO users(id, name, tag, image, is_bot, token, created_at) VALUES (?,?,?,?,?,?,?)",
            (uid, name, tag, image, int(bool(bot)), token, iso_now()))
        return self.user(uid), token

    def user_row(self, uid: str) -> sqlite3.Row:
        """Return the row of a user. Raises NotFound."""
        row = self.db.one("SELECT * FROM users WHERE id=?", (uid,))
        if row is None:
            raise NotFound("users.errors.not_found")
        return row

    def user(self, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return a User record; ``invisible`` shows as ``offline`` to other viewers.

        Raises:
            NotFound: Unknown user.
        """
        cached = self.db.user_cache.get(uid)
        if cached is None:
            row = self.user_row(uid)
            cached = {
                "publicId": row["id"], "name": row["name"], "tag": row["tag"],
                "image": row["image"], "isBot": bool(row["is_bot"]), "status": row["status"],
                "createdAt": row["created_at"],
            }
            self.db.user_cache[uid] = cached
        rec = dict(cached)
        if viewer != uid and rec["status"] == "invisible":
            rec["status"] = "offline"
        return rec

    def user_by_token(self, token: Any) -> str | None:
        """Return the user id owning a valid (non-revoked) token, else None."""
        if not isinstance(token, str) or not token:
            return None
        row = self.db.one("SELECT id FROM users WHERE token=? AND revoked=0", (token,))
        return None if row is None else str(row["id"])

    def revoke_token(self, uid: str) -> None:
        """Revoke a user's token (later requests and connects are refused)."""
        self.user_row(uid)
        self.db.conn.execute("UPDATE users SET revoked=1 WHERE id=?", (uid,))

    def set_status(self, uid: str, status: str) -> None:
        """Store a user's presence status (``PATCH /users/settings``, ``presence:update``)."""
        self.db.conn.execute("UPDATE users SET status=? WHERE id=?", (status, uid))
        self.db.user_cache.pop(uid, None)

    def set_activity(self, uid: str, activity: dict[str, Any] | None) -> None:
        """Store a user's activity (None clears)."""
        self.db.conn.execute("UPDATE users SET activity=? WHERE id=?",
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
                self.db.conn.execute(f"UPDATE users SET {key}=? WHERE id=?", (fields[key], uid))
        self.db.user_cache.pop(uid, None)
        return self.user(uid)

    def users_with_tokens(self) -> list[dict[str, Any]]:
        """Return every user with its token, oldest first, for the web page's user picker.

        Returns:
            ``[{"user": User, "token": str | None}]``; ``token`` is None once revoked.
        """
        rows = self.db.rows("SELECT id, token, revoked FROM users ORDER BY created_at, id")
        return [{"user": self.user(r["id"], viewer=r["id"]), "token": None if r["revoked"] else r["token"]}
                for r in rows]

    def profile(self, uid: str, *, viewer: str | None = None) -> dict[str, Any]:
        """Return a user's profile: the User record plus ``banner, bannerColor, bio, followersCount,
        followingCount, mutualFriendsCount``. Raises NotFound."""
        rec = self.user(uid, viewer=viewer)
        row = self.db.one("SELECT * FROM user_profiles WHERE user_id=?", (uid,))
        for key, col in PROFILE_FIELDS.items():
            rec[key] = (0 if key.endswith("Count") else None) if row is None else row[col]
        return rec

    def set_profile(self, uid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change profile fields (keys of :data:`PROFILE_FIELDS`); return the profile."""
        self.user_row(uid)
        self.db.conn.execute("INSERT OR IGNORE INTO user_profiles(user_id) VALUES (?)", (uid,))
        for key, col in PROFILE_FIELDS.items():
            if key in fields:
                self.db.conn.execute(f"UPDATE user_profiles SET {col}=? WHERE user_id=?", (fields[key], uid))
        return self.profile(uid)
