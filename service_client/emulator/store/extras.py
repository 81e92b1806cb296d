"""The store's extras repository: custom emojis, webhooks and the audit log."""

from __future__ import annotations

import json
import secrets
import sqlite3
from typing import Any

from .channels import ChannelRepository
from .database import Database
from .messages import MessageRepository
from .schema import (
    NotFound,
    escape_content,
    iso_now,
)
from .servers import ServerRepository
from .users import UserRepository


class ExtrasRepository:
    """Custom emojis, webhooks and the audit log.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
        servers: The servers repository.
        channels: The channels repository.
        messages: The messages repository.
    """

    def __init__(self, db: Database, users: UserRepository, servers: ServerRepository, channels: ChannelRepository, messages: MessageRepository) -> None:
        self.db = db
        self.users = users
        self.servers = servers
        self.channels = channels
        self.messages = messages

    @staticmethod
    def _emoji_rec(row: sqlite3.Row) -> dict[str, Any]:
        return {"publicId": row["id"], "name": row["name"], "url": row["url"], "serverPublicId": row["server_id"],
                "animated": bool(row["animated"])}

    def emojis(self, sid: str) -> list[dict[str, Any]]:
        """Return a server's Emoji records, oldest first."""
        return [self._emoji_rec(r) for r in self.db.rows("SELECT * FROM emojis WHERE server_id=? ORDER BY created_at, id",
                                                         (sid,))]

    def emoji_row(self, sid: str, eid: str) -> sqlite3.Row:
        """Return an emoji row of a server. Raises NotFound."""
        row = self.db.one("SELECT * FROM emojis WHERE id=? AND server_id=?", (eid, sid))
        if row is None:
            raise NotFound("emojis.errors.not_found")
        return row

    def emoji_named(self, sid: str, name: str) -> bool:
        """Whether a server already has an emoji with this name."""
        return self.db.one("SELECT 1 FROM emojis WHERE server_id=? AND name=?", (sid, name)) is not None

    def create_emoji(self, sid: str, name: str, url: str, *, animated: bool = False,
                     creator_id: str | None = None) -> dict[str, Any]:
        """Create a custom emoji; return its Emoji record."""
        self.servers.server_row(sid)
        eid = self.db.new_id()
        self.db.conn.execute("INSERT INTO emojis(id, server_id, name, url, animated, creator_id, created_at) "
                          "VALUES (?,?,?,?,?,?,?)", (eid, sid, name, url, int(animated), creator_id, iso_now()))
        return self._emoji_rec(self.emoji_row(sid, eid))

    def delete_emoji(self, sid: str, eid: str) -> None:
        """Delete a custom emoji. Raises NotFound."""
        self.emoji_row(sid, eid)
        self.db.conn.execute("DELETE FROM emojis WHERE id=?", (eid,))

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
                self.db.rows("SELECT * FROM webhooks WHERE channel_id=? ORDER BY created_at, id", (cid,))]

    def webhook_row(self, wid: str) -> sqlite3.Row:
        """Return a webhook row. Raises NotFound."""
        row = self.db.one("SELECT * FROM webhooks WHERE id=?", (wid,))
        if row is None:
            raise NotFound("webhooks.errors.not_found")
        return row

    def create_webhook(self, cid: str, name: str, avatar_url: str | None, creator_id: str | None) -> dict[str, Any]:
        """Create a webhook on a server channel; return its record **with** the token (creation only)."""
        chan = self.channels.channel_row(cid)
        wid = self.db.new_id()
        self.db.conn.execute(
            "INSERT INTO webhooks(id, server_id, channel_id, name, avatar_url, token, creator_id, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (wid, chan["server_id"], cid, name, avatar_url, secrets.token_urlsafe(32), creator_id, iso_now()))
        return self._webhook_rec(self.webhook_row(wid), with_token=True)

    def update_webhook(self, wid: str, fields: dict[str, Any]) -> None:
        """Change a webhook's ``name`` and/or ``avatarUrl`` (None clears the avatar)."""
        self.webhook_row(wid)
        for key, col in (("name", "name"), ("avatarUrl", "avatar_url")):
            if key in fields:
                self.db.conn.execute(f"UPDATE webhooks SET {col}=? WHERE id=?", (fields[key], wid))

    def delete_webhook(self, wid: str) -> None:
        """Delete a webhook (its token stops working at once)."""
        self.webhook_row(wid)
        self.db.conn.execute("DELETE FROM webhooks WHERE id=?", (wid,))

    def webhook_for_token(self, wid: str, token: str) -> sqlite3.Row:
        """Return the webhook row when ``token`` is its token (constant-time compare). Raises NotFound
        for an unknown webhook and a wrong token alike."""
        row = self.db.one("SELECT * FROM webhooks WHERE id=?", (wid,))
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
        mid = self.db.new_id()
        now = iso_now()
        esc = escape_content(content)
        with self.db.conn:
            self.db.conn.execute(
                "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                "created_at, author_json, raw, webhook_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (mid, row["channel_id"], row["server_id"], row["id"], esc, json.dumps(embeds), None, now,
                 json.dumps(author), content, row["id"]))
        return self.messages.message(mid)

    def add_audit(self, sid: str, executor_id: str | None, action: str, target_type: str | None,
                  target_id: str | None, details: dict[str, Any] | None = None) -> None:
        """Record one audit log entry of a server (``action`` in upper snake case, e.g. ``MEMBER_BAN``)."""
        if self.db.one("SELECT 1 FROM servers WHERE id=?", (sid,)) is None:
            return
        self.db.conn.execute(
            "INSERT INTO audit_logs(id, server_id, executor_id, action, target_type, target_id, details, created_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (self.db.new_id(), sid, executor_id, action, target_type, target_id, json.dumps(details or {}), iso_now()))

    def audit_logs(self, sid: str, limit: int, action: str | None = None) -> list[dict[str, Any]]:
        """Return a server's newest ``limit`` AuditEntry records, newest first, optionally of one action."""
        sql = "SELECT * FROM audit_logs WHERE server_id=?"
        args: list[Any] = [sid]
        if action is not None:
            sql += " AND action=?"
            args.append(action)
        out = []
        for r in self.db.rows(sql + " ORDER BY seq DESC LIMIT ?", [*args, limit]):
            executor = None
            if r["executor_id"] is not None:
                try:
                    u = self.users.user(r["executor_id"])
                    executor = {k: u[k] for k in ("publicId", "name", "tag", "image")}
                except NotFound:
                    executor = {"publicId": r["executor_id"], "name": None, "tag": None, "image": None}
            out.append({"publicId": r["id"], "actionType": r["action"], "targetType": r["target_type"],
                        "targetId": r["target_id"], "details": json.loads(r["details"]), "executor": executor,
                        "createdAt": r["created_at"]})
        return out
