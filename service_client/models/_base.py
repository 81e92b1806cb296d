"""Shared plumbing of the models: the base class and payload readers.

Pure: no I/O. The readers implement the identifier and value rules of
protocol.md section 0.1 (``publicId`` with the ``id`` / ``serverId`` /
``channelId`` fallbacks, ISO-8601 UTC times, decimal-string bitfields).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

__all__ = ["Model", "parse_time", "read_bool", "read_id", "read_int", "read_str"]

_intern = sys.intern


def read_id(data: Mapping[str, Any], *keys: str) -> str | None:
    """The first string value among ``keys``, interned (protocol 0.1).

    Args:
        data: A wire record.
        *keys: Keys tried in order, e.g. ``"serverPublicId", "serverId"``.

    Returns:
        The interned id, or None when no key holds a non-empty string. An int
        id (not seen on the wire) is accepted and turned into its decimal text.
    """
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            if value:
                return _intern(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            return _intern(str(value))
    return None


def read_str(data: Mapping[str, Any], key: str, default: str | None = None) -> str | None:
    """``data[key]`` when it is a str, else ``default``."""
    value = data.get(key)
    return value if isinstance(value, str) else default


def read_bool(data: Mapping[str, Any], key: str, default: bool = False) -> bool:
    """``data[key]`` when it is a bool, else ``default``."""
    value = data.get(key)
    return value if isinstance(value, bool) else default


def read_int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    """``data[key]`` as an int (ints and decimal strings accepted), else ``default``."""
    value = data.get(key)
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def parse_time(value: Any) -> datetime | None:
    """A timezone-aware UTC datetime from a wire time (protocol 0.1).

    Args:
        value: An ISO-8601 string (``2026-01-02T03:04:05.678Z`` or any zoned
            form; a naive one is taken as UTC) or epoch milliseconds (int/float).

    Returns:
        The instant in UTC, or None when ``value`` is missing or unparseable.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return datetime.fromtimestamp(value / 1000.0, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


class Model:
    """Base of every client-bound model (python-api.md section 4).

    Each model keeps a reference to its client (``_client``, for its methods)
    and to the wire record it was built from (``raw``, never copied; patches
    replace it with a merged copy). Parsed fields live in ``__slots__``,
    sharing the string objects of ``raw`` (ids are interned), so a cached
    model costs little more than its record. Models compare equal when they
    have the same class and ``id``. Thread-safety: reads are safe from any
    thread; the library mutates cached models only from its reader thread.
    """

    __slots__ = ("_client", "raw")

    _client: Client
    raw: dict[str, Any]

    def _repr_name(self) -> str | None:
        return getattr(self, "name", None)

    def __repr__(self) -> str:
        ident = getattr(self, "id", None)
        return f"<{type(self).__name__} id={ident!r} name={self._repr_name()!r}>"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return getattr(self, "id", None) == getattr(other, "id", None)

    def __hash__(self) -> int:
        return hash((type(self).__name__, getattr(self, "id", None)))


def as_dict(value: Any, what: str) -> dict[str, Any]:
    """``value`` itself when it is a dict, else TypeError naming ``what``."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value
