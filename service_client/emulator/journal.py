"""The sizes the emulator keeps to, and the emit journal.

:class:`Bounds` holds the four sizes one can set (``Emulator.configure``, ``POST
/_emulator/settings``): how many entries each journal keeps, how many bytes of a body or payload
a journal entry keeps, the largest request body read at all, and how far a socket client may fall
behind. :func:`clip` cuts a journal
value to its bytes; :class:`Ring` keeps a journal's newest entries; :class:`EmitJournal` is the ring
of socket emits the clients sent (the REST journal, :class:`~.faults.RequestLog`, is a ring too).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

#: Default sizes: entries per journal, bytes of a body kept in a journal entry, bytes of a request
#: body, bytes queued for one socket client (see :mod:`.send_queue`).
DEFAULT_JOURNAL_ENTRIES = 10_000
DEFAULT_JOURNAL_BODY_BYTES = 8_192
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_SEND_QUEUE_BYTES = 16 * 1024 * 1024
#: Accepted ranges of the four sizes (inclusive).
JOURNAL_ENTRIES_RANGE = (1, 1_000_000)
JOURNAL_BODY_BYTES_RANGE = (16, 16 * 1024 * 1024)
MAX_BODY_BYTES_RANGE = (256, 1024 * 1024 * 1024)
SEND_QUEUE_BYTES_RANGE = (64 * 1024, 1024 * 1024 * 1024)

_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def size_setting(value: Any, name: str, bounds: tuple[int, int]) -> int:
    """``value`` when it is an int (not a bool) in ``bounds``.

    Raises:
        TypeError: Not an int (``name`` names the setting).
        ValueError: Outside ``bounds``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer")
    low, high = bounds
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}")
    return value


def finite_number(value: Any, name: str, low: float, high: float) -> float:
    """``value`` as a float when it is a finite int or float (not a bool) in ``low..high``.

    Raises:
        TypeError: Not a number (``name`` names the setting).
        ValueError: NaN, an infinity, or outside ``low..high``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number")
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise ValueError(f"{name} must be a finite number in {low:g}..{high:g}")
    return number


@dataclass
class Bounds:
    """The sizes the emulator keeps to. Mutable; :meth:`reset` restores the defaults.

    Attributes:
        journal_entries: Entries each journal keeps (the newest; older ones are dropped).
        journal_body_bytes: Bytes of a body (request journal) or payload (emit journal) an entry
            keeps, as compact JSON; a longer one is cut and marked (:func:`clip`).
        max_body_bytes: Largest request body read (REST and control plane); a longer one gets 413.
        send_queue_bytes: Most bytes of events queued for one socket client; a client further
            behind is disconnected (:mod:`.send_queue`).
    """

    journal_entries: int = DEFAULT_JOURNAL_ENTRIES
    journal_body_bytes: int = DEFAULT_JOURNAL_BODY_BYTES
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    send_queue_bytes: int = DEFAULT_SEND_QUEUE_BYTES

    def reset(self) -> None:
        """Restore the defaults."""
        self.journal_entries = DEFAULT_JOURNAL_ENTRIES
        self.journal_body_bytes = DEFAULT_JOURNAL_BODY_BYTES
        self.max_body_bytes = DEFAULT_MAX_BODY_BYTES
        self.send_queue_bytes = DEFAULT_SEND_QUEUE_BYTES

    @staticmethod
    def check(*, journal_entries: Any = None, journal_body_bytes: Any = None,
              max_body_bytes: Any = None, send_queue_bytes: Any = None) -> dict[str, int]:
        """The given sizes (None: not given) checked, by attribute name.

        Raises:
            TypeError: A size that is not an int. ValueError: One outside its range.
        """
        given = {"journal_entries": (journal_entries, JOURNAL_ENTRIES_RANGE),
                 "journal_body_bytes": (journal_body_bytes, JOURNAL_BODY_BYTES_RANGE),
                 "max_body_bytes": (max_body_bytes, MAX_BODY_BYTES_RANGE),
                 "send_queue_bytes": (send_queue_bytes, SEND_QUEUE_BYTES_RANGE)}
        return {name: size_setting(value, name, limits) for name, (value, limits) in given.items()
                if value is not None}


def clip(value: Any, max_bytes: int) -> Any:
    """A journal's copy of a JSON value: ``value`` itself when its compact JSON takes at most
    ``max_bytes`` UTF-8 bytes, else a string of its first bytes followed by ``…[truncated: N
    bytes in all]``. A value JSON cannot write (too deeply nested, NaN) becomes that marker alone."""
    if value is None or isinstance(value, (bool, int)):
        return value
    try:
        text = _COMPACT(value)
    except (ValueError, TypeError, RecursionError):
        return "…[truncated: not writable as JSON]"
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return value
    head = data[:max_bytes].decode("utf-8", errors="ignore")
    return f"{head}…[truncated: {len(data)} bytes in all]"


class Ring:
    """Journal entries (dicts), oldest first: the newest ``bounds.journal_entries`` of them, the
    older ones dropped as new ones come. Thread-safe (one lock, which subclasses share)."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self._lock = threading.Lock()
        self._entries: deque[dict[str, Any]] = deque()

    def _push(self, entry: dict[str, Any]) -> None:
        """Add an entry, dropping the oldest beyond the bound; call with the lock held."""
        self._entries.append(entry)
        self._drop_oldest()

    def _drop_oldest(self) -> None:
        while len(self._entries) > self.bounds.journal_entries:
            self._entries.popleft()

    def trim(self) -> None:
        """Drop the oldest entries beyond ``bounds.journal_entries`` (after the bound shrank)."""
        with self._lock:
            self._drop_oldest()


class EmitJournal(Ring):
    """The socket emits clients sent, newest last: a :class:`Ring` of entries ``{event, payload,
    sid, userId, at}`` (``at`` epoch milliseconds, ``payload`` cut by :func:`clip`). Thread-safe."""

    def record(self, event: str, payload: Any, sid: str, user_id: str | None) -> None:
        """Add one emit (the oldest entries go when the ring is full)."""
        entry = {"event": event, "payload": clip(payload, self.bounds.journal_body_bytes), "sid": sid,
                 "userId": user_id, "at": time.time() * 1000.0}
        with self._lock:
            self._push(entry)

    def entries(self) -> list[dict[str, Any]]:
        """The journal as ``[{event, payload, userId, at}]``, oldest first (no socket ids)."""
        with self._lock:
            return [{k: v for k, v in e.items() if k != "sid"} for e in self._entries]

    def clear(self) -> None:
        """Empty the journal."""
        with self._lock:
            self._entries.clear()
