"""The store's messages repository: messages, reactions and pins, and the feeding of the full-text index."""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import sqlite3
from typing import Any

from .channels import ChannelRepository
from .database import Database
from .schema import (
    _JSON_BULK,
    NotFound,
    escape_content,
    iso_now,
)
from .search import INDEX_CHUNK_ROWS
from .users import UserRepository


class MessageRepository:
    """Messages, reactions and pins, and the feeding of the full-text index.

    Not thread-safe: used from the emulator's loop thread, as the whole store is.

    Args:
        db: The database connection and id counter shared by every repository.
        users: The users repository.
        channels: The channels repository.
    """

    def __init__(self, db: Database, users: UserRepository, channels: ChannelRepository) -> None:
        self.db = db
        self.users = users
        self.channels = channels

    def insert_messages(self, cid: str, author_id: str, contents: list[str],
                        embeds: list[Any] | None = None, reply_to_id: str | None = None) -> list[dict[str, Any]]:
        """Store messages in one transaction; return their Message records.

        ``contents`` are the raw texts: they are escaped on store and indexed (lazily, before the
        next search) unescaped.
        """
        chan = self.channels.channel_row(cid)
        author = self.users.user(author_id)
        author_json = json.dumps(author)
        sid = chan["server_id"]
        embeds = list(embeds or [])
        embeds_json = json.dumps(embeds)
        now = iso_now()
        records = []
        rows = []
        ids = self.db._ids
        for text in contents:
            mid = str(next(ids))
            esc = escape_content(text)
            rows.append((mid, cid, sid, author_id, esc, embeds_json, reply_to_id, now, author_json, text))
            records.append({"publicId": mid, "content": esc, "author": author, "channelPublicId": cid,
                            "serverPublicId": sid, "createdAt": now, "embeds": embeds, "fileUrl": None,
                            "replyToId": reply_to_id, "editedAt": None, "pinned": False})
        with self.db.conn:
            self.db.conn.executemany(
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
        chan = self.channels.channel_row(cid)
        author = self.users.user(author_id)
        sid = chan["server_id"]
        now = iso_now()
        escaped = [escape_content(text) for text in contents]
        first = next(self.db._ids)
        self.db._ids = itertools.count(first + len(contents))
        ids = [str(first + i) for i in range(len(contents))]
        author_json = json.dumps(author)
        with self.db.conn:
            if _JSON_BULK and not any("\x00" in text for text in contents):
                # One statement over a JSON array: about a third of the cost of one executemany
                # row per message. (SQLite's JSON functions stop a string at NUL, hence the check.)
                pairs = json.dumps([[esc, raw] for esc, raw in zip(escaped, contents, strict=True)], ensure_ascii=False)
                self.db.conn.execute(
                    "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                    "created_at, author_json, raw) SELECT CAST(?1 + key AS TEXT), ?2, ?3, ?4, "
                    "json_extract(value, '$[0]'), '[]', NULL, ?5, ?6, json_extract(value, '$[1]') "
                    "FROM json_each(?7) ORDER BY key", (first, cid, sid, author_id, now, author_json, pairs))
            else:
                self.db.conn.executemany(
                    "INSERT INTO messages(id, channel_id, server_id, author_id, content, embeds, reply_to_id, "
                    "created_at, author_json, raw) VALUES (?,?,?,?,?,'[]',NULL,?,?,?)",
                    [(mid, cid, sid, author_id, esc, now, author_json, raw)
                     for mid, esc, raw in zip(ids, escaped, contents, strict=True)])
        shared = {"author": author, "channelPublicId": cid, "serverPublicId": sid, "createdAt": now, "embeds": [],
                  "fileUrl": None, "replyToId": None, "editedAt": None, "pinned": False}
        return ids, escaped, shared

    def index_next_chunk(self) -> concurrent.futures.Future[None] | None:
        """Hand the search index the next :data:`~.search.INDEX_CHUNK_ROWS` messages it has not
        seen (their unescaped text), oldest first; the Future of that job, or None when the index
        has every message already. Call it until it returns None before a query."""
        rows = [(int(r[0]), str(r[1]), str(r[2])) for r in self.db.rows(
            "SELECT seq, channel_id, raw FROM messages WHERE seq>? ORDER BY seq LIMIT ?",
            (self.db.fts_seq, INDEX_CHUNK_ROWS))]
        if not rows:
            return None
        self.db.fts_seq = rows[-1][0]
        return self.db.search_index.add(rows)

    def search_bounds(self, cid: str, before: str | None, after: str | None) -> tuple[int | None, int | None] | None:
        """The ``(low, high)`` seq bounds of a search of channel ``cid`` between two of its
        messages (None: unbounded on that side); None when ``before`` or ``after`` is not a
        message of this channel (the search then matches nothing, as :meth:`history` does)."""
        found: list[int | None] = []
        for ref in (after, before):
            if ref is None:
                found.append(None)
                continue
            row = self.db.one("SELECT seq FROM messages WHERE id=? AND channel_id=?", (ref, cid))
            if row is None:
                return None
            found.append(int(row[0]))
        return found[0], found[1]

    def messages_by_seq(self, cid: str, seqs: list[int]) -> list[dict[str, Any]]:
        """The Message records of the messages of channel ``cid`` with these ``seq`` numbers,
        in the order given (one deleted since is left out)."""
        if not seqs:
            return []
        marks = ",".join("?" * len(seqs))
        rows = {int(r["seq"]): r for r in self.db.rows(
            f"SELECT * FROM messages WHERE channel_id=? AND seq IN ({marks})", (cid, *seqs))}
        return [self._message_rec(rows[seq]) for seq in seqs if seq in rows]

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
        row = self.db.one("SELECT * FROM messages WHERE id=?", (mid,))
        if row is None:
            raise NotFound("messages.errors.not_found")
        return row

    def message(self, mid: str) -> dict[str, Any]:
        """Return a stored Message record (no nonce)."""
        return self._message_rec(self.message_row(mid))

    def messages(self, cid: str) -> list[dict[str, Any]]:
        """Return every stored message of a channel in chronological order."""
        return [self._message_rec(r) for r in
                self.db.rows("SELECT * FROM messages WHERE channel_id=? ORDER BY seq", (cid,))]

    def history(self, cid: str, limit: int, before: str | None = None) -> list[dict[str, Any]]:
        """Return the newest ``limit`` messages before ``before`` (a message id), chronological."""
        if before is not None:
            row = self.db.one("SELECT seq FROM messages WHERE id=? AND channel_id=?", (before, cid))
            if row is None:
                return []
            rows = self.db.rows("SELECT * FROM messages WHERE channel_id=? AND seq<? ORDER BY seq DESC LIMIT ?",
                                (cid, row[0], limit))
        else:
            rows = self.db.rows("SELECT * FROM messages WHERE channel_id=? ORDER BY seq DESC LIMIT ?", (cid, limit))
        return [self._message_rec(r) for r in reversed(rows)]

    def edit_message(self, mid: str, content: str, embeds: list[Any] | None) -> dict[str, Any]:
        """Replace a message's content (escaped) and embeds; return the new record."""
        row = self.message_row(mid)
        with self.db.conn:
            self.db.conn.execute("UPDATE messages SET content=?, raw=?, embeds=?, edited_at=? WHERE id=?",
                                 (escape_content(content), content, json.dumps(embeds if embeds is not None
                                                                               else json.loads(row["embeds"])),
                                  iso_now(), mid))
        self.db.search_index.replace(int(row["seq"]), str(row["channel_id"]), content)
        return self.message(mid)

    def delete_message(self, mid: str) -> None:
        """Delete one message with its reactions and pin."""
        row = self.message_row(mid)
        with self.db.conn:
            self.db.conn.execute("DELETE FROM messages WHERE id=?", (mid,))
            self.db.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,))
            self.db.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))
        self.db.search_index.remove([int(row["seq"])])

    def delete_messages(self, mids: list[str]) -> None:
        """Delete several messages (with reactions and pins) in one transaction."""
        gone: list[int] = []
        with self.db.conn:
            for mid in mids:
                row = self.db.one("SELECT seq FROM messages WHERE id=?", (mid,))
                if row is None:
                    continue
                gone.append(int(row[0]))
                self.db.conn.execute("DELETE FROM messages WHERE id=?", (mid,))
                self.db.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,))
                self.db.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))
        self.db.search_index.remove(gone)

    def message_ids_by(self, sid: str, uid: str, since_iso: str) -> list[tuple[str, str]]:
        """Return ``(message id, channel id)`` of a user's messages in a server since a time."""
        return [(r[0], r[1]) for r in self.db.rows(
            "SELECT id, channel_id FROM messages WHERE server_id=? AND author_id=? AND created_at>=? ORDER BY seq",
            (sid, uid, since_iso))]

    def toggle_reaction(self, mid: str, emoji: str, uid: str) -> bool:
        """Add the (emoji, user) reaction, or remove it if present; return True when added."""
        row = self.db.one("SELECT seq FROM reactions WHERE message_id=? AND emoji=? AND user_id=?", (mid, emoji, uid))
        if row is not None:
            self.db.conn.execute("DELETE FROM reactions WHERE seq=?", (row[0],))
            return False
        self.db.conn.execute("INSERT INTO reactions(id, message_id, emoji, user_id) VALUES (?,?,?,?)",
                             (self.db.new_id(), mid, emoji, uid))
        return True

    def reactions(self, mid: str) -> list[dict[str, Any]]:
        """Return the full reaction list of a message (the ``message:reaction`` event's list), oldest first."""
        out = []
        for r in self.db.rows("SELECT * FROM reactions WHERE message_id=? ORDER BY seq", (mid,)):
            try:
                name = self.users.user(r["user_id"])["name"]
            except NotFound:
                name = None
            out.append({"publicId": r["id"], "emoji": r["emoji"], "userPublicId": r["user_id"], "userName": name,
                        "messagePublicId": mid})
        return out

    def reaction_details(self, mid: str) -> list[dict[str, Any]]:
        """Return every emoji group of a message: ``[{emoji, count, users: [{publicId, name, tag, image}]}]``."""
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in self.db.rows("SELECT emoji, user_id FROM reactions WHERE message_id=? ORDER BY seq", (mid,)):
            try:
                u = self.users.user(r[1])
            except NotFound:
                continue
            groups.setdefault(r[0], []).append({k: u[k] for k in ("publicId", "name", "tag", "image")})
        return [{"emoji": e, "count": len(us), "users": us} for e, us in groups.items()]

    def clear_reactions(self, mid: str) -> int:
        """Remove every reaction of a message; return how many there were."""
        return self.db.conn.execute("DELETE FROM reactions WHERE message_id=?", (mid,)).rowcount

    def set_pinned(self, mid: str, pinned: bool) -> bool:
        """Pin or unpin a message; return True when that changed something."""
        row = self.message_row(mid)
        if bool(row["pinned"]) == pinned:
            return False
        with self.db.conn:
            self.db.conn.execute("UPDATE messages SET pinned=? WHERE id=?", (int(pinned), mid))
            if pinned:
                seq = self.db.one("SELECT COALESCE(MAX(seq), 0) + 1 FROM pins")
                self.db.conn.execute("INSERT OR REPLACE INTO pins VALUES (?,?,?)",
                                     (mid, row["channel_id"], int(seq[0]) if seq else 1))
            else:
                self.db.conn.execute("DELETE FROM pins WHERE message_id=?", (mid,))
        return True

    def pins(self, cid: str) -> list[dict[str, Any]]:
        """Return a channel's pinned messages, most recently pinned first."""
        return [self._message_rec(r) for r in self.db.rows(
            "SELECT m.* FROM pins p JOIN messages m ON m.id=p.message_id WHERE p.channel_id=? ORDER BY p.seq DESC",
            (cid,))]
