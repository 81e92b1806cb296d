"""The report of events dropped at the worker pool's bound: a count, and a rate-limited WARNING.

:class:`DropLog` keeps the events dropped since its last line, per ordering
key for a few keys, and logs them at most once every
``EVENT_DROP_LOG_INTERVAL_S`` (10 s): on the ``service_client.events`` logger
at WARNING level when logging reaches a handler, else on ``sys.stderr`` (in
the form of :func:`logging.basicConfig`'s lines), so that a drop is seen even
by a program that never configured logging.
Thread-safe.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Any

from .. import _defaults

__all__ = ["DropLog"]

log = logging.getLogger("service_client.events")

#: Keys named in one line (the others are counted together).
_KEYS_NAMED = 5


def _logging_reaches_a_handler(logger: logging.Logger) -> bool:
    """True when a record of ``logger`` would reach a handler other than a NullHandler.

    That is: the application configured logging (``logging.basicConfig``, a
    handler of its own, a test runner's capture). The package's own
    NullHandler does not count.
    """
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            if not isinstance(handler, logging.NullHandler):
                return True
        if not current.propagate:
            return False
        current = current.parent
    return False


class DropLog:
    """Events dropped and not reported yet, and the time the next line may be logged.

    Thread-safe: :meth:`note` may be called under the pool's lock (it takes
    only its own, briefly); :meth:`report` logs outside every lock.
    """

    __slots__ = ("_keys", "_lock", "next_at", "unreported")

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards every field
        #: Events dropped since the last line.
        self.unreported = 0
        #: The same for at most ``_KEYS_NAMED`` keys, in the order they first dropped.
        self._keys: dict[Any, int] = {}
        #: ``time.monotonic()`` before which no line is logged (0: the next drop logs at once).
        self.next_at = 0.0

    def note(self, key: Any, count: int) -> None:
        """Count ``count`` events of ``key`` dropped."""
        with self._lock:
            self.unreported += count
            keys = self._keys
            if key in keys or len(keys) < _KEYS_NAMED:
                keys[key] = keys.get(key, 0) + count

    def report(self, *, total: int, key_max: int, max_queued: int, force: bool = False) -> None:
        """Log the events dropped since the last line, unless a line was logged too recently.

        Args:
            total: Events dropped since the pool was created (named in the line).
            key_max: The bound of one ordering key (named in the line).
            max_queued: The bound of the pool (named in the line).
            force: Log now whatever the time of the last line (at shutdown).
        """
        now = time.monotonic()
        with self._lock:
            if not self.unreported or (now < self.next_at and not force):
                return
            count, keys = self.unreported, self._keys
            self.unreported, self._keys = 0, {}
            self.next_at = now + _defaults.EVENT_DROP_LOG_INTERVAL_S
        named = ", ".join(f"{key!r}: {n}" for key, n in keys.items())
        others = count - sum(keys.values())
        if others:
            named += f", other keys: {others}"
        text = (
            "dropped %d event(s) because their listeners are too far behind (by ordering key: %s);"
            " dropped events are never delivered to listeners. At most %d events of one ordering key"
            " and %d in all wait for listeners (max_queued_events); %d dropped in all"
        )
        args = (count, named, key_max, max_queued, total)
        if _logging_reaches_a_handler(log):
            log.warning(text, *args)
            return
        try:
            sys.stderr.write(f"WARNING:{log.name}:{text % args}\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - stderr closed or replaced by something broken
            pass
