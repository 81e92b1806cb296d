"""Shared plumbing of the models: the base class and payload readers.

Pure: no I/O. The readers implement the service's identifier and value rules
(``publicId`` with the ``id`` / ``serverId`` / ``channelId`` fallbacks,
ISO-8601 UTC times, decimal-string bitfields).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from .._defaults import MISSING
from .._html import model_dict, model_html

if TYPE_CHECKING:  # pragma: no cover
    from ._port import ClientLike, State
    from .guild import Guild

__all__ = [
    "Model",
    "pack_time",
    "parse_time",
    "read_bool",
    "read_id",
    "read_int",
    "read_str",
    "same_value",
    "share_keys",
    "time_of_ms",
    "unpack_time",
]

_intern = sys.intern


def read_id(data: Mapping[str, Any], *keys: str) -> str | None:
    """The first string value among ``keys``, interned (ids are strings on the wire).

    Args:
        data: A wire record.
        *keys: Keys tried in order, e.g. ``"serverPublicId", "serverId"``.

    Returns:
        The interned id, or None when no key holds a non-empty string. An int
        id (not seen on the wire) is accepted and turned into its decimal text.
    """
    first = data.get(keys[0]) if keys else None
    if type(first) is str and first:  # the common case: the first key holds the id
        return _intern(first)
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
    """A timezone-aware UTC datetime from a wire time (the service writes ISO-8601 UTC).

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


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_ONE_MS = timedelta(milliseconds=1)
_fromisoformat = datetime.fromisoformat


#: Epoch ms of the whole seconds met lately, by their wire text (a time's first 19
#: characters, ``2026-01-02T03:04:05``): messages that arrive together share their second, so
#: most times are packed without a date parse. Cleared when full (only speed is lost).
_SECONDS: dict[str, float] = {}
_SECONDS_MAX = 1024
#: A wire time's end, its fraction and zone (``.000Z`` to ``.999Z``) -> its milliseconds.
_MILLIS: dict[str, int] = {f".{ms:03d}Z": ms for ms in range(1000)}


def pack_time(value: Any) -> float | None:
    """Epoch milliseconds (a float) for a wire time in the service's exact format.

    The service writes ``2026-01-02T03:04:05.678Z``. Such a
    string is stored as a float (24 bytes instead of a 73-byte string) and
    rebuilt by :func:`unpack_time`. Thread-safe.

    Returns:
        The instant in epoch ms, or None when ``value`` is not a string that
        :func:`unpack_time` reproduces character for character (the caller then
        keeps the original value).
    """
    if type(value) is not str:
        return None
    millis = _MILLIS.get(value[19:])  # found: 24 characters, the last five ".dddZ"
    if millis is None:
        return None
    second = value[:19]
    base = _SECONDS.get(second)
    if base is None:
        base = _pack_second(second)
        if base is None:
            return None
    return base + millis


def _pack_second(second: str) -> float | None:
    """Epoch ms of ``YYYY-MM-DDTHH:MM:SS`` in the exact wire form (remembered), else None."""
    # Most other forms are refused at once ("-", "-", "T", ":", ":" every third character
    # from the fifth, and no hour 24); the exact check is the round trip, since fromisoformat
    # takes some texts it does not write back (a NUL in some places). Once per second met.
    if second[4:19:3] != "--T::" or second[11:13] == "24":
        return None
    try:
        parsed = _fromisoformat(second + "Z")
    except ValueError:
        return None
    if parsed.replace(tzinfo=None).isoformat() != second:
        return None
    base = float((parsed - _EPOCH) // _ONE_MS)
    if len(_SECONDS) >= _SECONDS_MAX:
        _SECONDS.clear()
    _SECONDS[second] = base
    return base


def unpack_time(ms: float) -> str:
    """The wire text ``YYYY-MM-DDTHH:MM:SS.mmmZ`` of epoch milliseconds (inverse of :func:`pack_time`)."""
    m = _EPOCH_NAIVE + timedelta(milliseconds=int(ms))
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


def time_of_ms(ms: float) -> datetime:
    """The UTC datetime of epoch milliseconds (exact, no float rounding)."""
    return _EPOCH + timedelta(milliseconds=int(ms))


#: Shared int objects for wire masks (ints above 256 are otherwise allocated per model).
_MASKS = tuple(range(1 << 12))

#: Per model class: wire key -> its index in ``_WIRE`` (built once per class).
_POSITIONS: dict[type, dict[str, int]] = {}


def _wire_positions(cls: type) -> dict[str, int]:
    positions = _POSITIONS.get(cls)
    if positions is None:
        positions = {key: index for index, (key, _) in enumerate(cls._WIRE)}  # type: ignore[attr-defined]
        _POSITIONS[cls] = positions
    return positions

#: Interned key tuples of the extra (unparsed) keys, shared by every model with
#: the same leftover keys. Bounded: cleared when full (only sharing is lost).
_KEYSETS: dict[tuple[str, ...], tuple[str, ...]] = {}
_KEYSETS_MAX = 4096


def same_value(parsed: Any, wire: Any) -> bool:
    """True when ``parsed`` reproduces the wire value exactly (same type and value)."""
    return parsed is wire or (type(parsed) is type(wire) and parsed == wire)


def share_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """One shared tuple object (of interned strings) per distinct key tuple."""
    shared = _KEYSETS.get(keys)
    if shared is None:
        if len(_KEYSETS) >= _KEYSETS_MAX:
            _KEYSETS.clear()
        shared = tuple(_intern(k) if isinstance(k, str) else k for k in keys)
        _KEYSETS[shared] = shared
    return shared


class Model:
    """Base of every client-bound model: a user, member, channel, message, server...

    Each model keeps the connection state of the client it came from (the
    ``_state`` its methods send requests and emits through; :attr:`client`
    gives the client itself) and its wire record (:attr:`raw`). To keep a cached model small
    the record is not stored as a dict (a :class:`Message`, which is not
    cached, keeps its record as it came and reads its fields lazily): the keys a model parses into its
    slots are rebuilt from those slots, and only the keys it does not parse
    (unknown keys included) are kept, as one tuple of values beside a shared
    tuple of key names. A key is counted as parsed only when the slot
    reproduces the wire value exactly (same type and value), so ``raw``
    equals the record the model was built from; the exceptions are the
    nested records of shared objects (a member's ``user``, a message's
    ``author``), which ``raw`` shows as the shared object's current record.
    Ids are interned, so the same id string is shared across caches.

    Models compare equal when they have the same class and ``id``.
    Thread-safety: reads are safe from any thread; the library mutates cached
    models only from its reader thread.
    """

    __slots__ = ("_state", "_extra", "_wire_mask")

    #: ``(wire key, attribute)`` pairs: the keys rebuilt from parsed slots
    #: (the attribute gives the wire value). At most 12 per class.
    _WIRE: tuple[tuple[str, str], ...] = ()

    _state: State
    _extra: tuple[Any, ...] | None
    _wire_mask: int

    @property
    def client(self) -> ClientLike:
        """The client this model belongs to (read-only): the :class:`~service_client.Client`.

        A command or listener can reach the bot through it (``message.client``). Typed as
        :class:`~service_client.models._port.ClientLike` (the caches, ``user``, ``send_message``):
        the models sit below the client and do not name its class.
        """
        return self._state.client

    @property
    def raw(self) -> dict[str, Any]:
        """The wire record the model was built from (every model keeps it).

        A new dict on each access, rebuilt from the parsed fields plus the
        keys this model does not parse (unknown keys survive). Mutating it
        does not change the model.
        """
        out: dict[str, Any] = {}
        mask = self._wire_mask
        if mask:
            for index, (key, attr) in enumerate(self._WIRE):
                if mask >> index & 1:
                    out[key] = getattr(self, attr)
        extra = self._extra
        if extra is not None:
            for index, key in enumerate(extra[0], 1):
                out[key] = extra[index]
        return out

    def _split(self, data: dict[str, Any], force: int = 0) -> None:
        """Keep what the parsed slots cannot rebuild of ``data`` (call after parsing).

        Args:
            data: The record the slots were just parsed from.
            force: Bits (indexes into ``_WIRE``) of keys taken as parsed
                without comparing values (nested records of shared objects).
        """
        mask = 0
        for index, (key, attr) in enumerate(self._WIRE):
            value = data.get(key, MISSING)
            if value is MISSING:
                continue
            if force >> index & 1 or same_value(getattr(self, attr), value):
                mask |= 1 << index
        self._wire_mask = _MASKS[mask]
        if mask and len(data) == mask.bit_count():
            self._extra = None
            return
        positions = _wire_positions(type(self))
        keys: list[str] = []
        values: list[Any] = [None]
        for key, value in data.items():
            if mask:
                index = positions.get(key, -1)
                if index >= 0 and mask >> index & 1:
                    continue
            keys.append(key)
            values.append(value)
        if not keys:
            self._extra = None
            return
        values[0] = share_keys(tuple(keys))
        self._extra = tuple(values)

    def _cached_guild(self, server_id: str | None) -> Guild | None:
        """The cached server ``server_id`` from ``client.guilds``, or None (no request)."""
        if server_id is None:
            return None
        return self._state.guilds.cache.get(server_id)

    def _extra_get(self, key: str, default: Any = None) -> Any:
        """The value of an unparsed wire key, or ``default`` when absent."""
        extra = self._extra
        if extra is None:
            return default
        try:
            return extra[extra[0].index(key) + 1]
        except ValueError:
            return default

    #: The attributes ``repr()`` shows, in order, each as ``attribute=repr(value)``
    #: under the attribute's own name (so what a repr shows can be read back by
    #: that name). None of them may make a request or hold a secret.
    _REPR: ClassVar[tuple[str, ...]] = ("id", "name")
    #: The attributes of the HTML table Jupyter shows (:meth:`_repr_html_`) and
    #: the columns of a :class:`Collection` of this model; empty: :attr:`_REPR`.
    #: Same rules: no request, no secret.
    _HTML: ClassVar[tuple[str, ...]] = ()

    #: The fields of :meth:`to_dict` (a ``"user.id"`` path gives the key ``"user_id"``,
    #: ``"name=user.username"`` the key ``"name"``);
    #: empty: :attr:`_HTML`, else :attr:`_REPR`. Same rules: no request, no secret.
    _DICT: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """This model's main attributes as a dict of plain values, for pandas or a quick look.

        The keys are the Python attribute names (``created_at``, not the wire's
        ``createdAt``), the same attributes as the HTML table Jupyter shows, plus a few ids;
        times are timezone-aware :class:`~datetime.datetime` objects in UTC (None when
        unknown); a nested model (a message's ``author``) is given by its name, with its id
        beside it where the model lists it (``author_id``); a list of models (a member's
        ``roles``) is a list of names; a ``Permissions`` value stays one.
        No request is made and no secret is included. :attr:`raw` is the wire record instead.

        Returns:
            A new dict, e.g. for a ``Message`` ``{"id", "channel_id",
            "server_id", "author_id", "author", "content", "created_at", "edited_at",
            "pinned", "reply_to_id"}``.
        """
        return model_dict(self)

    def __repr__(self) -> str:
        shown = " ".join(f"{name}={getattr(self, name, None)!r}" for name in self._REPR)
        return f"<{type(self).__name__} {shown}>"

    def _repr_html_(self) -> str:
        """A small HTML table of this model's main attributes, for Jupyter.

        Every value is HTML-escaped; secrets (tokens) are never shown, and no
        attribute read by it makes a request.
        """
        return model_html(self)

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
