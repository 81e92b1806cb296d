"""The store's database: the sqlite3 connection, ids, snapshots, and the deletes that follow the schema."""

from __future__ import annotations

import itertools
import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from .schema import _EXTRA_SCHEMA, _SCHEMA, _TABLES
from .search import SearchIndex


class Database:
    """The sqlite3 connection and the id counter shared by every repository of the store.

    Not thread-safe: use it from one thread (the emulator's loop thread). Message search runs
    elsewhere, in :attr:`search_index` (its own thread and connection).

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
        self.conn.execute("DROP TABLE IF EXISTS messages_fts")  # the index of older files: now in search_index
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
        #: User records by id, kept by the users repository (cleared by :meth:`reset`).
        self.user_cache: dict[str, dict[str, Any]] = {}
        #: The full-text index of message text (its own thread, started by the first search).
        self.search_index = SearchIndex()
        # Messages are indexed lazily (before a search), so bulk posting stays cheap: every
        # message whose seq is at most this one has been handed to the index.
        self.fts_seq = 0

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
        self.user_cache.clear()
        self.search_index.clear()
        self.fts_seq = 0

    def dump(self) -> dict[str, list[list[Any]]]:
        """Return every stored row, per table, sorted: a comparable snapshot of the whole state.

        The full-text index is not part of it (it mirrors ``messages``). Used by tests to prove
        that a refused request changed nothing.

        Returns:
            ``{table name: [[column values...], ...]}`` with rows sorted by their text form.
        """
        out: dict[str, list[list[Any]]] = {}
        for table in _TABLES:
            rows = [list(r) for r in self.conn.execute(f"SELECT * FROM {table}").fetchall()]
            rows.sort(key=repr)
            out[table] = rows
        return out

    def close(self) -> None:
        """Close the database connection and stop the search index's thread."""
        self.search_index.close()
        self.conn.close()

    def one(self, sql: str, args: Iterable[Any] = ()) -> sqlite3.Row | None:
        """The first row ``sql`` selects with ``args``, or None."""
        row: sqlite3.Row | None = self.conn.execute(sql, tuple(args)).fetchone()
        return row

    def rows(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Every row ``sql`` selects with ``args``."""
        return self.conn.execute(sql, tuple(args)).fetchall()

    def delete_channel_rows(self, cid: str) -> None:
        """Delete a channel with its messages, reactions, pins, DM link, webhooks and overrides."""
        self.conn.execute("DELETE FROM reactions WHERE message_id IN (SELECT id FROM messages WHERE channel_id=?)",
                          (cid,))
        self.conn.execute("DELETE FROM pins WHERE channel_id=?", (cid,))
        self.search_index.remove_channel(cid)
        self.conn.execute("DELETE FROM messages WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM channels WHERE id=?", (cid,))
        self.conn.execute("DELETE FROM dms WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM webhooks WHERE channel_id=?", (cid,))
        self.conn.execute("DELETE FROM overrides WHERE scope_id=?", (cid,))

    def delete_server_extras(self, sid: str) -> None:
        """Delete a server's emojis, webhooks, audit log, notification settings and vanity code."""
        for table in ("emojis", "webhooks", "audit_logs", "notification_settings", "vanity_codes"):
            self.conn.execute(f"DELETE FROM {table} WHERE server_id=?", (sid,))
