"""Catch-up after a gap: messages posted while the socket was away, read back from history.

The service replays nothing a socket missed. With ``Client(catch_up=CatchUp())``
a client remembers, when its socket drops, the newest message of each channel
it saw one in (within :attr:`CatchUp.window`, 10 minutes); once the socket is
back, a thread of its own (``service_client-catchup-<n>``) reads each of those
channels' history newest first (``GET /chat/{channel_id}``, 100 messages a
request) down to that message, and hands each message it finds to the
listeners as ``message_create``, oldest first, with
:attr:`Message.replayed <service_client.Message.replayed>` True. A message is
replayed once: never twice, and never one the socket delivered live before
the catch-up reached it (a message posted in the instant the socket came back
may come both ways, live and replayed; its id tells). An event
publisher on the client publishes the replayed messages too (see
:class:`~service_client.fleet.EventPublisher`), and a standby socket process
taking over catches up from where the previous one stopped (see
:class:`~service_client.fleet.StandbySocket`).

The budget: at most :attr:`CatchUp.max_requests` requests (50) per catch-up,
at most :attr:`CatchUp.max_pages` (10) per channel, channels most recently
active first; every request goes through the REST session, its rate-limit
buckets (one per channel) and retries. A channel the budget did not reach to
its end is logged at WARNING with what was not read back.

Only new messages are caught up: edits, deletions and reactions made during
the gap are not replayed. Replayed messages come after the live events that
arrived meanwhile, so a channel's order holds only among the replayed ones.
"""

from __future__ import annotations

import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import endpoints
from ..errors import ServiceError
from ..models._base import parse_time
from ..models.message import Message
from ..rest.route import Route
from ..state.connection import ConnectionState

__all__ = ["CatchUp", "CatchUpResult", "CatchUpRunner", "ChannelMark", "catch_up", "marks_from_state"]

log = logging.getLogger("service_client.catchup")

#: Messages a history request asks for (the service's most).
_PAGE = 100
#: Replayed message ids remembered (two generations: at least this many), so none is replayed twice.
_REMEMBERED = 10_000
#: The record key that marks a replayed message (read by :attr:`Message.replayed`).
REPLAYED_KEY = "replayed"
_thread_ids = itertools.count()


@dataclass(frozen=True)
class CatchUp:
    """What a catch-up after a gap reads back, and its budget (an immutable policy value).

    Args:
        window: Seconds: channels whose newest message seen is older than this, when
            the gap begins, are not caught up (default 600).
        max_requests: History requests one catch-up makes at most, all channels together
            (default 50; each returns up to 100 messages).
        max_pages: History requests per channel at most (default 10: 1,000 messages).

    Raises:
        TypeError: An argument is not a number (``max_requests``, ``max_pages``: an int).
        ValueError: ``window`` is not a finite number > 0, or a count is below 1.
    """

    window: float = 600.0
    max_requests: int = 50
    max_pages: int = 10

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, (int, float)):
            raise TypeError(f"window must be a number of seconds, got {type(self.window).__name__}")
        if not math.isfinite(self.window) or self.window <= 0:
            raise ValueError(f"window must be a finite number of seconds > 0, got {self.window!r}")
        for name in ("max_requests", "max_pages"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value!r}")


@dataclass(frozen=True)
class ChannelMark:
    """Where a channel's catch-up stops: the newest message already delivered there.

    Attributes:
        channel_id: The channel.
        message_id: The newest message delivered (or published) before the gap.
        created_ms: Its creation time, epoch ms, or None when unknown.
    """

    channel_id: str
    message_id: str
    created_ms: int | None


@dataclass
class CatchUpResult:
    """What one catch-up did.

    Attributes:
        channels: Channels read back.
        requests: History requests made.
        replayed: Messages handed on as replayed.
        incomplete: Channels the budget (or an error) stopped before their mark.
    """

    channels: int = 0
    requests: int = 0
    replayed: int = 0
    incomplete: list[str] = field(default_factory=list)


def _created_ms(record: dict[str, Any]) -> int | None:
    created = parse_time(record.get("createdAt"))
    return None if created is None else int(created.timestamp() * 1000)


def marks_from_state(state: ConnectionState, window: float, now: float | None = None) -> list[ChannelMark]:
    """The newest message of each channel among the messages ``state`` received, newest channel first.

    Reads the state's record of recent message ids (the last 10,000 to 20,000
    messages); a channel whose newest message is kept whole and is older than
    ``window`` seconds is left out. Call it on the socket's reader thread (its
    disconnect callback), so that no event is applied meanwhile.

    Args:
        state: The client's connection state.
        window: Seconds (see :attr:`CatchUp.window`).
        now: The time, epoch seconds (default: now).

    Returns:
        One mark per channel.
    """
    oldest_ms = ((time.time() if now is None else now) - window) * 1000
    marks: list[ChannelMark] = []
    done: set[str] = set()
    for generation in (state._message_channels, state._message_channels_old):
        for message_id, channel_id in reversed(list(generation.items())):
            if channel_id in done:
                continue
            done.add(channel_id)
            message = state.cached_message(message_id)
            created_at = None if message is None else message.created_at
            created_ms = None if created_at is None else int(created_at.timestamp() * 1000)
            if created_ms is not None and created_ms < oldest_ms:
                continue
            marks.append(ChannelMark(channel_id, message_id, created_ms))
    return marks


def _read_channel(state: ConnectionState, mark: ChannelMark, pages: int,
                  take: Callable[[], bool]) -> tuple[list[dict[str, Any]], bool]:
    """The records of ``mark``'s channel newer than its mark, newest first, and whether the mark was reached.

    ``take`` is called before each request and answers False when the budget is spent.
    """
    out: list[dict[str, Any]] = []
    before: str | None = None
    for _ in range(pages):
        if not take():
            return out, False
        params: dict[str, Any] = {"limit": _PAGE}
        if before is not None:
            params["before"] = before
        data = state.request(Route(endpoints.GET_HISTORY, channel_id=mark.channel_id), params=params)
        items = data.get("messages") if isinstance(data, dict) else data
        page = [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
        if len(page) > 1 and (_created_ms(page[0]) or 0) <= (_created_ms(page[-1]) or 0):
            page.reverse()  # chronological: newest first from here on
        for record in page:
            message_id = record.get("publicId")
            if message_id == mark.message_id:
                return out, True
            created = _created_ms(record)
            if mark.created_ms is not None and created is not None and created < mark.created_ms:
                return out, True  # older than the mark: the mark itself was deleted
            if isinstance(message_id, str) and message_id:
                out.append(record)
        if len(page) < _PAGE:
            return out, True  # the channel's whole history was read
        last_id = page[-1].get("publicId")
        if not isinstance(last_id, str) or last_id == before:
            return out, True
        before = last_id
    return out, False


def catch_up(state: ConnectionState, policy: CatchUp, marks: Iterable[ChannelMark], *,
             seen: Callable[[str], bool], emit: Callable[[dict[str, Any]], None],
             stopped: Callable[[], bool]) -> CatchUpResult:
    """Read back each channel of ``marks`` after its mark and hand on what was missed.

    Blocks (one request at a time). Channels go in the order given (most
    recently active first), within ``policy``'s budget.

    Args:
        state: The connection state whose REST session reads the history.
        policy: The window and the budget.
        marks: Where each channel stops.
        seen: True for a message id already delivered (live, or replayed before): skipped.
        emit: Called with each missed message's record (a copy with ``"replayed": True``),
            oldest first per channel.
        stopped: True once the caller stops (checked between requests).

    Returns:
        What was done. Errors of one channel (a 403, a timeout) are logged and end that
        channel only.
    """
    result = CatchUpResult()

    def take() -> bool:
        """Count one request against the budget; False once it is spent or the client stopped."""
        if stopped() or result.requests >= policy.max_requests:
            return False
        result.requests += 1
        return True

    for mark in marks:
        if stopped():
            result.incomplete.append(mark.channel_id)
            continue
        try:
            records, complete = _read_channel(state, mark, policy.max_pages, take)
        except (ServiceError, TimeoutError) as exc:
            result.incomplete.append(mark.channel_id)
            if stopped():
                continue  # the client was destroyed meanwhile: its REST session refuses
            log.warning("catch-up of channel %s failed (%s): messages posted there during the gap are "
                        "not replayed", mark.channel_id, type(exc).__name__)
            continue
        result.channels += 1
        if not complete:
            result.incomplete.append(mark.channel_id)
        for record in reversed(records):
            message_id = record["publicId"]
            if seen(message_id):
                continue
            emit({**record, REPLAYED_KEY: True})
            result.replayed += 1
    if stopped():
        log.info("catch-up stopped (the client was destroyed) after %d replayed messages", result.replayed)
        return result
    if result.incomplete:
        log.warning("catch-up stopped before the gap's start in %d channels (budget: %d requests, %d per "
                    "channel): older messages missed there are not replayed (first: %s)",
                    len(result.incomplete), policy.max_requests, policy.max_pages, result.incomplete[0])
    log.info("caught up %d messages missed in %d channels (%d history requests)", result.replayed,
             result.channels, result.requests)
    return result


class CatchUpRunner:
    """A client's catch-up: marks taken when its socket drops, read back once it is back.

    Thread-safe: the socket's callbacks call :meth:`disconnected` and
    :meth:`reconnected`; the catch-up runs on ``service_client-catchup-<n>``
    (a daemon; it stops between requests once ``closed`` is set, and
    :meth:`close` waits for it).

    Args:
        state: The client's connection state.
        policy: The window and the budget.
        closed: Set when the client is destroyed.
    """

    def __init__(self, state: ConnectionState, policy: CatchUp, closed: threading.Event) -> None:
        self._state = state
        self.policy = policy
        self._closed = closed
        self._marks_lock = threading.Lock()  # guards _marks
        self._marks: list[ChannelMark] | None = None
        self._replayed_lock = threading.Lock()  # guards _replayed, _replayed_old
        self._replayed: set[str] = set()
        self._replayed_old: set[str] = set()
        #: The last catch-up's result (None before the first).
        self.last: CatchUpResult | None = None
        self._threads_lock = threading.Lock()  # guards _threads; a thread starts under it
        self._threads: list[threading.Thread] = []

    def disconnected(self) -> None:
        """The socket dropped (its reader thread): remember each channel's newest message."""
        marks = marks_from_state(self._state, self.policy.window)
        with self._marks_lock:
            if self._marks is None:  # a second drop before the catch-up began keeps the first marks
                self._marks = marks

    def reconnected(self) -> None:
        """The socket is back: catch up on a thread of its own."""
        with self._marks_lock:
            marks, self._marks = self._marks, None
        if not marks:
            return
        thread = threading.Thread(target=self.replay, args=(marks,),
                                  name=f"service_client-catchup-{next(_thread_ids)}", daemon=True)
        with self._threads_lock:
            if self._closed.is_set():
                return  # destroyed meanwhile: close() has run or is waiting for the others
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            thread.start()

    def close(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds in all for the catch-up threads to end (after
        ``closed`` was set: each ends at its next request, which a closed client refuses)."""
        with self._threads_lock:
            threads, self._threads = self._threads, []
        deadline = time.monotonic() + timeout
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def seen(self, message_id: str) -> bool:
        """True for a message delivered live (still remembered by the state) or replayed already."""
        if self._state.message_channel(message_id) is not None:
            return True
        with self._replayed_lock:
            return message_id in self._replayed or message_id in self._replayed_old

    def _remember(self, message_id: str) -> bool:
        """Remember a replayed id; False when it was already."""
        with self._replayed_lock:
            if message_id in self._replayed or message_id in self._replayed_old:
                return False
            self._replayed.add(message_id)
            if len(self._replayed) >= _REMEMBERED:
                self._replayed_old, self._replayed = self._replayed, set()
            return True

    def emit(self, record: dict[str, Any]) -> None:
        """Hand one replayed record on: to the event tap (a publisher) and as ``message_create``."""
        if not self._remember(record["publicId"]):
            return
        state = self._state
        tap = state.event_tap
        if tap is not None:
            # From this thread, beside the reader's: a publisher's tap only appends to its buffer
            # (thread-safe) and routes (a lost race there only forgets one message's channel).
            try:
                if state.event_tap_frames:  # the tap takes a frame too: this record came in none
                    tap(endpoints.ON_MESSAGE_NEW, [record], None)
                else:
                    tap(endpoints.ON_MESSAGE_NEW, [record])
            except Exception:  # noqa: BLE001 - as on the reader thread: a tap never stops the events
                log.exception("the event tap failed on a replayed message")
        try:
            message = Message(state, record)
        except (TypeError, ValueError) as exc:
            log.warning("dropped a malformed message record read back from history: %s", exc)
            return
        state.dispatch("message_create", message, key=message.channel_id)

    def replay(self, marks: Iterable[ChannelMark]) -> CatchUpResult:
        """Catch up from ``marks`` now, on this thread (see :func:`catch_up`)."""
        result = catch_up(self._state, self.policy, marks, seen=self.seen, emit=self.emit,
                          stopped=self._closed.is_set)
        self.last = result
        return result
