"""Message search for the REST route, with the event loop kept free while it runs.

:func:`search_messages` checks the query's bounds, hands the search index the messages it has
not seen yet (one chunk per loop turn, at most two chunks waiting at a time), then awaits the
query, which runs on the index's own thread (:class:`~.store.search.SearchIndex`). Other requests
are answered meanwhile; a search waits at most :data:`SEARCH_WAIT_S` in all.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, TypeVar

from .routing import HTTPError
from .store import BadRequest
from .store.messages import MessageRepository
from .store.search import QUERY_TIME_LIMIT_S, SearchTimeout, match_expression

__all__ = ["SEARCH_WAIT_S", "search_messages"]

T = TypeVar("T")

#: Longest a search may wait for the index (indexing new messages, then its query), seconds;
#: then it is answered 503.
SEARCH_WAIT_S = 60.0


async def _wait(future: concurrent.futures.Future[T], deadline: float) -> T:
    """The result of an index job, awaited until ``deadline`` (loop time).

    Raises:
        HTTPError: 503 when the deadline passes first (the job is cancelled if it has not started).
        Whatever the job raised.
    """
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), max(0.0, deadline - loop.time()))
    except asyncio.TimeoutError:
        raise HTTPError(503, f"The search index did not answer within {SEARCH_WAIT_S:g} s; try again later") \
            from None


async def search_messages(messages: MessageRepository, cid: str, query: str, limit: int, before: str | None = None,
                          after: str | None = None) -> list[dict[str, Any]]:
    """Full-text search (FTS5) over the unescaped text of a channel's messages, newest first.

    Every whitespace-separated term of ``query`` must appear (as a phrase of its words). The
    loop stays free: only reading new messages for the index (a chunk per turn) and the final
    records run on it.

    Args:
        messages: The messages repository (and through its database, the search index).
        cid: The channel id (access already checked).
        query: The search text.
        limit: Most results.
        before: A message id of this channel: only messages posted before it.
        after: A message id of this channel: only messages posted after it.

    Returns:
        Message records, newest first; ``[]`` for a query without terms, and when ``before`` or
        ``after`` is not a message of this channel (as history does).

    Raises:
        BadRequest: The query is over :data:`~.store.search.MAX_QUERY_CHARS` characters or
            :data:`~.store.search.MAX_QUERY_TERMS` terms, or it ran longer than
            :data:`~.store.search.QUERY_TIME_LIMIT_S` (both answered 400).
        HTTPError: 503 when the index took longer than :data:`SEARCH_WAIT_S`.
    """
    match = match_expression(query)
    if match is None:
        return []
    bounds = messages.search_bounds(cid, before, after)
    if bounds is None:
        return []
    deadline = asyncio.get_running_loop().time() + SEARCH_WAIT_S
    waiting: concurrent.futures.Future[None] | None = None
    while True:
        chunk = messages.index_next_chunk()
        if waiting is not None:
            await _wait(waiting, deadline)  # at most two chunks queued: memory stays bounded
        elif chunk is not None:
            await asyncio.sleep(0)  # a loop turn between two chunk reads
        if chunk is None:
            break
        waiting = chunk
    try:
        seqs = await _wait(messages.db.search_index.query(match, cid, limit, *bounds), deadline)
    except SearchTimeout:
        raise BadRequest(f"The search ran longer than {QUERY_TIME_LIMIT_S:g} s: use fewer or more specific terms") \
            from None
    return messages.messages_by_seq(cid, seqs)
