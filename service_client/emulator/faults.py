"""Fault injection, the optional rate limiter and the request journal of the emulator.

Fault rules answer what the real service may answer (429 with ``Retry-After``, 5xx, bodies that
are not JSON, delays, connection resets), as JSON or plain text, never as HTML; the limiter counts requests per bucket (method plus the
first two path segments), as the service's rate limits do.

All three classes are thread-safe (one small lock each): the REST app uses them on the
emulator's loop, tests read them from their own threads.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from .journal import Bounds, Ring, clip, finite_number

#: Statuses a fault may answer with when no body is given.
FAULT_STATUSES = (200, 400, 401, 403, 404, 409, 429, 500, 502, 503, 504)
#: The content types a fault may answer with: never HTML, which would run on the emulator's origin.
FAULT_CONTENT_TYPES = ("application/json", "text/plain")
#: Longest delay of a fault, milliseconds (ten minutes), and longest ``Retry-After`` text.
MAX_DELAY_MS = 600_000
MAX_RETRY_AFTER_CHARS = 256


def _fault_content_type(value: Any) -> str | None:
    """The media type of a fault's ``content_type`` (lower-cased, parameters dropped), or None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("content_type must be a string")
    media = value.split(";", 1)[0].strip().lower()
    if media not in FAULT_CONTENT_TYPES:
        raise ValueError("content_type must be application/json or text/plain (a fault never serves HTML)")
    return media


def _retry_after(value: Any) -> str | None:
    """The ``Retry-After`` header text of a fault: a string of printable ASCII, or a finite number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError("retry_after must be a string, a number or None")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("retry_after must be a finite number")
    text = str(value)
    if len(text) > MAX_RETRY_AFTER_CHARS or not all(" " <= ch <= "~" for ch in text):
        raise ValueError(f"retry_after must be at most {MAX_RETRY_AFTER_CHARS} printable ASCII characters")
    return text


def bucket_key(method: str, path: str) -> str:
    """Return the rate-limit bucket key of a request: ``METHOD:`` + the first two non-empty path segments.

    Args:
        method: HTTP method (any case).
        path: The (encoded) path below ``/api/v2``, with or without a query.
    """
    path = path.split("?", 1)[0]
    segments = [s for s in path.split("/") if s]
    return f"{method.upper()}:" + "/".join(segments[:2])


#: Shown in the journal instead of a webhook token.
REDACTED_TOKEN = "***"


def redact_webhook_path(path: str) -> str:
    """Return ``path`` with a webhook token replaced by ``***``: ``/webhooks/W1/<token>`` gives
    ``/webhooks/W1/***`` (anything below the token is kept). Other paths are returned unchanged."""
    parts = path.split("/")
    named = [i for i, seg in enumerate(parts) if seg]
    if len(named) >= 3 and parts[named[0]].lower() == "webhooks":
        parts[named[2]] = REDACTED_TOKEN
    return "/".join(parts)


@dataclass
class Fault:
    """One fault rule. ``remaining`` None means every matching request until cleared."""

    id: str
    method: str
    path: str
    status: int | None
    remaining: int | None
    retry_after: str | None
    delay_ms: float
    body: str | None
    content_type: str | None
    hits: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form used by ``/_emulator/faults``."""
        return {"id": self.id, "method": self.method, "path": self.path, "status": self.status,
                "count": self.remaining, "retryAfter": self.retry_after, "delayMs": self.delay_ms,
                "body": self.body, "contentType": self.content_type, "hits": self.hits}


class FaultTable:
    """Fault rules matched in insertion order on method and an fnmatch glob of the path.

    Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)

    def add(self, method: str, path: str, *, status: int | None = None, count: int | None = 1,
            retry_after: str | int | float | None = None, delay_ms: float = 0, body: str | None = None,
            content_type: str | None = None) -> Fault:
        """Add a rule and return it.

        Args:
            method: HTTP method, or ``"*"`` for any.
            path: fnmatch glob on the path relative to ``/api/v2`` (no query), e.g. ``/servers/*``.
            status: Status to answer with (0 resets the connection with no answer); None with
                ``delay_ms`` only delays, then answers normally.
            count: Number of matching requests affected; None for all until cleared.
            retry_after: The raw ``Retry-After`` header value (seconds, fraction or HTTP-date).
            delay_ms: Delay before answering, milliseconds.
            body: Body text to send instead of the default JSON ``{"error": ...}`` (any text: an
                invalid-JSON or HTML-looking body tests a client's handling of a proxy page).
            content_type: ``application/json`` (the default) or ``text/plain``, any case, with
                parameters ignored. Never HTML: a fault answers on the emulator's own origin.

        Raises:
            TypeError: A wrongly typed argument.
            ValueError: A bad status, count, delay, ``Retry-After`` (NaN, an infinity, a control
                character, over 256 characters) or content type.
        """
        if not isinstance(method, str) or not method:
            raise TypeError("method must be a non-empty string")
        if not isinstance(path, str) or not path.startswith(("/", "*")):
            raise ValueError("path must be a glob starting with '/' (or '*')")
        if status is not None and (isinstance(status, bool) or not isinstance(status, int)
                                   or not (status == 0 or 100 <= status <= 599)):
            raise ValueError("status must be an HTTP status code")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise ValueError("count must be a positive integer or None")
        delay = finite_number(delay_ms, "delay_ms", 0, MAX_DELAY_MS)
        if status is None and not delay:
            raise ValueError("a fault needs a status or a delay_ms")
        if body is not None and not isinstance(body, str):
            raise TypeError("body must be a string")
        fault = Fault(id=str(next(self._ids)), method=method.upper(), path=path, status=status, remaining=count,
                      retry_after=_retry_after(retry_after), delay_ms=delay, body=body,
                      content_type=_fault_content_type(content_type))
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        """Remove every rule."""
        with self._lock:
            self._faults.clear()

    def remove(self, fault_id: str) -> bool:
        """Remove one rule by id; return whether it existed."""
        with self._lock:
            before = len(self._faults)
            self._faults = [f for f in self._faults if f.id != fault_id]
            return len(self._faults) != before

    def list(self) -> list[dict[str, Any]]:
        """Return the active rules as dicts."""
        with self._lock:
            return [f.to_dict() for f in self._faults]

    def take(self, method: str, path: str) -> tuple[float, Fault | None]:
        """Consume the rules matching this request.

        Delay-only rules add their delay and matching goes on, so a delay can precede another
        fault; the first rule with a status ends the search.

        Returns:
            ``(total delay in milliseconds, the rule giving the answer or None)``.
        """
        method = method.upper()
        delay = 0.0
        with self._lock:
            for fault in list(self._faults):
                if fault.method not in ("*", method) or not fnmatch.fnmatchcase(path, fault.path):
                    continue
                fault.hits += 1
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                delay += fault.delay_ms
                if fault.status is not None:
                    return delay, fault
        return delay, None


@dataclass
class _Window:
    start: float
    count: int = 0


class RateLimiter:
    """Fixed-window limiter per bucket key (:func:`bucket_key`); off by default. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.limit: int | None = None
        self.window_s = 1.0
        self.fractional = False
        self._windows: dict[str, _Window] = {}

    def configure(self, limit: int | None, window_s: float = 1.0, *, retry_after_fraction: bool = False) -> None:
        """Set ``limit`` requests per ``window_s`` seconds per bucket; None turns it off.

        Raises:
            ValueError: A non-positive limit, or a window that is not positive and finite.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError("limit must be a positive integer or None")
        if isinstance(window_s, bool) or not isinstance(window_s, (int, float)) or not math.isfinite(window_s) \
                or window_s <= 0:
            raise ValueError("window_s must be a positive, finite number of seconds")
        with self._lock:
            self.limit = limit
            self.window_s = float(window_s)
            self.fractional = bool(retry_after_fraction)
            self._windows.clear()

    def check(self, key: str, now: float | None = None) -> str | None:
        """Count one request on ``key``; return the ``Retry-After`` text if it is over the limit."""
        with self._lock:
            if self.limit is None:
                return None
            now = time.monotonic() if now is None else now
            win = self._windows.get(key)
            if win is None or now - win.start >= self.window_s:
                win = _Window(start=now)
                self._windows[key] = win
            if win.count < self.limit:
                win.count += 1
                return None
            left = max(0.0, win.start + self.window_s - now)
            if self.fractional:
                return f"{left:.3f}"
            return str(max(1, math.ceil(left)))


class RequestLog(Ring):
    """Journal of REST requests with arrival/completion times and the peak in flight: a
    :class:`~.journal.Ring` of the newest ``bounds.journal_entries`` entries, each body cut to
    ``bounds.journal_body_bytes`` (:func:`~.journal.clip`). Thread-safe.

    Args:
        bounds: The sizes to keep to (default: a :class:`~.journal.Bounds` of its own).
    """

    def __init__(self, bounds: Bounds | None = None) -> None:
        super().__init__(bounds if bounds is not None else Bounds())
        self.max_in_flight = 0
        self._live: set[int] = set()

    def begin(self, entry: dict[str, Any]) -> None:
        """Record a request's arrival (the entry is completed by :meth:`end`). A webhook token in
        the entry's ``path`` is replaced by ``***`` first."""
        if isinstance(entry.get("path"), str):
            entry["path"] = redact_webhook_path(entry["path"])
        with self._lock:
            self._push(entry)
            self._live.add(id(entry))
            self.max_in_flight = max(self.max_in_flight, len(self._live))

    def record_body(self, entry: dict[str, Any], body: Any) -> None:
        """Set an entry's ``body`` (parsed JSON, secrets already redacted), cut to the bound."""
        clipped = clip(body, self.bounds.journal_body_bytes)
        with self._lock:
            entry["body"] = clipped

    def end(self, entry: dict[str, Any], status: int) -> None:
        """Record a request's completion with its status."""
        with self._lock:
            entry["status"] = status
            entry["endedAt"] = time.time() * 1000.0
            self._live.discard(id(entry))

    def snapshot(self) -> list[dict[str, Any]]:
        """Return a copy of the journal, oldest first."""
        with self._lock:
            return [dict(e, headers=dict(e.get("headers", {}))) for e in self._entries]

    def clear(self) -> None:
        """Empty the journal and reset the peak. Requests still in flight from before the clear
        (say, a delayed request a previous test abandoned) no longer count as in flight."""
        with self._lock:
            self._entries.clear()
            self._live = set()
            self.max_in_flight = 0

    def peak(self) -> int:
        """Return the highest number of requests in flight at once since the last clear."""
        with self._lock:
            return self.max_in_flight
