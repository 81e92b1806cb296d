"""The store's server extras: emojis, webhooks, audit log, notification settings, vanity codes, profiles."""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

from .messages import MessageStore
from .schema import PROFILE_FIELDS, BadRequest, NotFound, escape_content, iso_now


class ExtrasStore(MessageStore):
    """Emojis, webhooks, audit log, notification settings, vanity codes and profiles (see :class:`~.Store`)."""

    # ------------------------------------------------------------------ server extras
    # Custom emojis, webhooks, the audit log, notification settings, vanity codes, profiles.
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
