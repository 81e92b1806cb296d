"""A logging handler that looks for a secret in the frame locals of every record's exception.

It does at emit time what error trackers do with a record's ``exc_info``: walk
every frame of the traceback, and of every exception chained to it
(``__cause__``, ``__context__``), the library's frames included, and record
each local's ``repr`` (containers walked item by item, an object's attributes
one level deep). A frame still running when the record is emitted is seen with
the locals it has then.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

_CONTAINERS = (dict, list, tuple, set, frozenset)


def chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and every exception chained to it, each once."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo.extend((item.__cause__, item.__context__))
    return seen


class FrameLocalsHandler(logging.Handler):
    """Records where a secret shows in the frame locals of records' exceptions.

    Args:
        secrets: The strings that must never show.
    """

    def __init__(self, *secrets: str) -> None:
        super().__init__(logging.DEBUG)
        self.secrets = secrets
        #: (record message, exception type, file, function, local name) of every sighting.
        self.hits: list[tuple[str, str, str, str, str]] = []
        #: Records with an exception walked, and the files of every frame walked.
        self.records = 0
        self.files: set[str] = set()

    def _shows(self, value: Any, depth: int, seen: set[int]) -> bool:
        if id(value) in seen or depth > 6 or value is self:  # this handler holds the secrets itself
            return False
        seen.add(id(value))
        if isinstance(value, (bytes, bytearray, memoryview)):
            text = bytes(value).decode("latin-1")
        else:
            try:
                text = repr(value)
            except Exception:  # noqa: BLE001 - a broken repr shows nothing
                text = ""
        if any(secret in text for secret in self.secrets):
            return True
        if isinstance(value, dict):
            return any(self._shows(k, depth + 1, seen) or self._shows(v, depth + 1, seen) for k, v in value.items())
        if isinstance(value, _CONTAINERS):
            return any(self._shows(item, depth + 1, seen) for item in value)
        if depth == 0:
            try:
                attributes = vars(value)
            except TypeError:  # no __dict__
                return False
            return any(self._shows(v, depth + 1, seen) for v in list(attributes.values()))
        return False

    def _walk(self, record: logging.LogRecord, exc: BaseException) -> None:
        for item in chain(exc):
            tb: TracebackType | None = item.__traceback__
            while tb is not None:
                frame = tb.tb_frame
                self.files.add(frame.f_code.co_filename)
                for name, value in list(frame.f_locals.items()):
                    if self._shows(value, 0, set()):
                        self.hits.append((record.getMessage()[:80], type(item).__name__,
                                          frame.f_code.co_filename.rsplit("/", 1)[-1], frame.f_code.co_name, name))
                tb = tb.tb_next

    def emit(self, record: logging.LogRecord) -> None:
        exc_info = record.exc_info
        if not exc_info or exc_info[1] is None:
            return
        self.records += 1  # handle() holds the handler's lock around emit()
        self._walk(record, exc_info[1])
