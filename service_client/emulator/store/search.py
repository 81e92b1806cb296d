"""Message search off the event loop: an FTS5 index on its own sqlite3 connection and thread.

The store's connection belongs to the emulator's event loop, and one SQLite statement holds it
for as long as it runs, so a search there made every other request wait. The index here lives
in a database of its own (in memory), touched only by its thread,
``service_client-emulator-search-<n>``, which starts with the first search. The store hands it
the text of new messages lazily, in chunks before a search, and mirrors edits and deletes; the
index answers a query with message ``seq`` numbers, newest first, which the store turns into
records. Every job goes through one FIFO queue, so a query sees every change submitted before it.

A query is bounded twice: its text (:data:`MAX_QUERY_CHARS`, :data:`MAX_QUERY_TERMS`, checked by
:func:`match_expression` before anything runs) and its run time (:data:`QUERY_TIME_LIMIT_S`,
after which SQLite interrupts it).
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import math
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .schema import BadRequest

__all__ = ["CLOSE_TIMEOUT_S", "INDEX_CHUNK_ROWS", "MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "QUERY_TIME_LIMIT_S",
           "SearchIndex", "SearchTimeout", "match_expression"]

logger = logging.getLogger("service_client.emulator")

T = TypeVar("T")

#: Longest search query, characters; a longer one is answered 400.
MAX_QUERY_CHARS = 1024
#: Most terms (runs of non-space characters) in a query; more are answered 400.
MAX_QUERY_TERMS = 32
#: Longest a query may run in the index, seconds; SQLite interrupts it then (:class:`SearchTimeout`).
QUERY_TIME_LIMIT_S = 5.0
#: Messages read from the store and handed to the index per chunk (one chunk read per loop turn).
INDEX_CHUNK_ROWS = 2000
#: Bound on :meth:`SearchIndex.close` waiting for the thread to end, seconds.
CLOSE_TIMEOUT_S = 5.0
#: SQLite virtual-machine steps between two looks at the query's deadline.
_PROGRESS_STEPS = 1000

_thread_ids = itertools.count(1)


class SearchTimeout(Exception):
    """A query ran longer than :data:`QUERY_TIME_LIMIT_S` and was interrupted."""


def match_expression(query: str) -> str | None:
    """The FTS5 ``MATCH`` expression of a search query: every whitespace-separated term as a
    quoted phrase, all of them required. None when the query holds no term (it matches nothing).

    Raises:
        BadRequest: The query is longer than :data:`MAX_QUERY_CHARS` characters or holds more
            than :data:`MAX_QUERY_TERMS` terms.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise BadRequest(f"q must be at most {MAX_QUERY_CHARS} characters")
    terms = query.split()
    if len(terms) > MAX_QUERY_TERMS:
        raise BadRequest(f"q must hold at most {MAX_QUERY_TERMS} terms")
    if not terms:
        return None
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


class SearchIndex:
    """The full-text index of message text, on its own thread and sqlite3 connection.

    Thread-safe: every method only queues a job for the index's thread (started by the first
    one) and returns at once; :meth:`add` and :meth:`query` return a
    :class:`concurrent.futures.Future` of the job. Jobs run one at a time, in the order they
    were queued. Rows are keyed by the message's ``seq`` and carry its channel id.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[sqlite3.Connection], Any],
                                            concurrent.futures.Future[Any]] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._deadline = math.inf  # of the query running; read by SQLite's progress handler

    @property
    def started(self) -> bool:
        """Whether the index's thread was started (by a first job): before that it holds nothing."""
        return self._thread is not None

    def _submit(self, job: Callable[[sqlite3.Connection], T]) -> concurrent.futures.Future[T]:
        """Queue ``job(connection)`` for the index's thread; a Future of its result.

        Raises:
            RuntimeError: The index is closed.
        """
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the search index is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"service_client-emulator-search-{next(_thread_ids)}")
                self._thread.start()
            self._jobs.put((job, future))
        return future

    def add(self, rows: list[tuple[int, str, str]]) -> concurrent.futures.Future[None]:
        """Index messages not indexed yet, given as ``(seq, channel id, unescaped text)``."""
        def job(conn: sqlite3.Connection) -> None:
            """Insert the rows in one transaction."""
            conn.execute("BEGIN")
            try:
                conn.executemany("INSERT INTO fts(rowid, channel, body) VALUES (?,?,?)", rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return self._submit(job)

    def replace(self, seq: int, cid: str, text: str) -> None:
        """A message's new text (an edit), when the message is indexed already (else a later
        :meth:`add` brings its current text)."""
        if not self.started:
            return

        def job(conn: sqlite3.Connection) -> None:
            """Swap the indexed text of one message."""
            if conn.execute("DELETE FROM fts WHERE rowid=?", (seq,)).rowcount:
                conn.execute("INSERT INTO fts(rowid, channel, body) VALUES (?,?,?)", (seq, cid, text))
        self._submit(job).add_done_callback(_log_failure)

    def remove(self, seqs: list[int]) -> None:
        """Forget deleted messages (by ``seq``)."""
        if not self.started or not seqs:
            return

        def job(conn: sqlite3.Connection) -> None:
            """Delete the rows."""
            conn.executemany("DELETE FROM fts WHERE rowid=?", [(seq,) for seq in seqs])
        self._submit(job).add_done_callback(_log_failure)

    def remove_channel(self, cid: str) -> None:
        """Forget every message of a deleted channel."""
        if not self.started:
            return

        def job(conn: sqlite3.Connection) -> None:
            """Delete the channel's rows."""
            conn.execute("DELETE FROM fts WHERE channel=?", (cid,))
        self._submit(job).add_done_callback(_log_failure)

    def clear(self) -> None:
        """Forget everything (the store was reset)."""
        if not self.started:
            return

        def job(conn: sqlite3.Connection) -> None:
            """Drop and recreate the table (faster than deleting each row)."""
            conn.execute("DROP TABLE fts")
            _create(conn)
        self._submit(job).add_done_callback(_log_failure)

    def query(self, match: str, cid: str, limit: int, low: int | None = None,
              high: int | None = None) -> concurrent.futures.Future[list[int]]:
        """Find the messages of channel ``cid`` whose text matches ``match`` (an FTS5 expression,
        :func:`match_expression`).

        Args:
            match: The ``MATCH`` expression.
            cid: The channel id.
            limit: Most results.
            low: Only messages whose ``seq`` is greater (None: no lower bound).
            high: Only messages whose ``seq`` is smaller (None: no upper bound).

        Returns:
            A Future of the matching ``seq`` numbers, newest (greatest) first, at most ``limit``;
            it fails with :class:`SearchTimeout` when the query ran longer than
            :data:`QUERY_TIME_LIMIT_S`.
        """
        sql = "SELECT rowid FROM fts WHERE fts MATCH ? AND channel=?"
        args: list[Any] = [match, cid]
        if low is not None:
            sql += " AND rowid>?"
            args.append(low)
        if high is not None:
            sql += " AND rowid<?"
            args.append(high)
        sql += " ORDER BY rowid DESC LIMIT ?"
        args.append(limit)

        def job(conn: sqlite3.Connection) -> list[int]:
            """Run the query against its deadline."""
            self._deadline = time.monotonic() + QUERY_TIME_LIMIT_S
            try:
                return [int(row[0]) for row in conn.execute(sql, args).fetchall()]
            except sqlite3.OperationalError as exc:
                if time.monotonic() >= self._deadline:
                    raise SearchTimeout(f"the search ran longer than {QUERY_TIME_LIMIT_S:g} s") from None
                raise BadRequest(f"q cannot be searched: {exc}") from None
            finally:
                self._deadline = math.inf
        return self._submit(job)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop the thread after the jobs already queued (waits at most ``timeout`` seconds);
        later jobs raise RuntimeError. Idempotent."""
        with self._lock:
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._jobs.put(None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _over_time(self) -> int:
        """SQLite's progress handler: nonzero (interrupt) once the running query's deadline passed."""
        return 1 if time.monotonic() > self._deadline else 0

    def _run(self) -> None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            _create(conn)
            conn.set_progress_handler(self._over_time, _PROGRESS_STEPS)
            while True:
                item = self._jobs.get()
                if item is None:
                    return
                job, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(job(conn))
                except Exception as exc:  # noqa: BLE001 - handed to whoever waits on the job
                    future.set_exception(exc)
        finally:
            conn.close()


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(body, channel UNINDEXED)")


def _log_failure(future: concurrent.futures.Future[Any]) -> None:
    """Log a mirrored change (edit, delete, reset) the index failed to apply: nobody waits on it."""
    if not future.cancelled() and future.exception() is not None:
        logger.error("the search index failed to apply a change", exc_info=future.exception())
