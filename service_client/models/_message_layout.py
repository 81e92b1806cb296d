"""How a :class:`~.message.Message` keeps its record compactly.

A message keeps the values of a few record keys in its own slots (each with its bit in the
message's ``_wire_mask``), and the other values in a tuple whose layout (the record's key
tuple) every message with the same keys shares (:class:`_Layout`). The channel and server ids
of consecutive messages are interned and shared. Pure: no I/O.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable
from typing import Any

from ._base import share_keys

_intern = sys.intern
_getter = operator.itemgetter


def _copy_json(value: Any) -> Any:
    """A copy of decoded JSON: dicts and lists copied at every level, other values shared."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = (dict, list)

# The record keys a message keeps in its own slots, each with its bit in ``_wire_mask`` (set
# when the record held that key in the form the slot keeps; otherwise the value stays with the
# other values, as it came).
_ID = 1  # publicId: a non-empty str, in ``id``
_AUTHOR = 2  # author: the record of the shared cached ``author`` (raw shows its current record)
_CHANNEL = 4  # channelPublicId: a non-empty str, interned, in ``channel_id``
_SERVER = 8  # serverPublicId: a non-empty str, interned, in ``server_id``
_TEXT = 16  # content: a str, as on the wire, in ``_text``
_CREATED = 32  # createdAt: the service's exact time format, packed into ``_created`` (epoch ms)
_NO_EMBEDS = 64  # embeds: an empty list (kept as this bit alone)
_UNPINNED = 128  # pinned: false (kept as this bit alone)
_SLOT_BITS: dict[str, int] = {
    "publicId": _ID,
    "author": _AUTHOR,
    "channelPublicId": _CHANNEL,
    "serverPublicId": _SERVER,
    "content": _TEXT,
    "createdAt": _CREATED,
    "embeds": _NO_EMBEDS,
    "pinned": _UNPINNED,
}
_ALL_SLOTS = sum(_SLOT_BITS.values())

#: Most record layouts (key tuples) remembered: when full, a new one clears the table (only
#: sharing is lost).
_LAYOUTS_MAX = 1024


def _values_of(keys: tuple[str, ...]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A function giving the values of ``keys`` of a record, as a tuple, in that order."""
    if not keys:
        return lambda data: ()
    if len(keys) == 1:
        key = keys[0]
        return lambda data: (data[key],)
    return _getter(*keys)


class _Layout:
    """What every message whose record has one key tuple shares.

    ``full``: the bits of the slot keys among ``keys``; ``rest``: the values
    of the other keys, in order, for a message whose mask is ``full``;
    ``nulls``: the ``_extra`` of such a message when those values are all
    null (the usual record), shared.
    """

    __slots__ = ("keys", "full", "slots", "rest", "null_values", "nulls", "positions", "webhook", "nonce")

    def __init__(self, keys: tuple[str, ...], seen: tuple[str, ...]) -> None:
        self.keys = keys
        bits = [_SLOT_BITS.get(key, 0) for key in keys]
        self.full = sum(bits)
        # The getters read the key objects of the record met (``seen``), not equal copies: a
        # decoder that hands out the same key objects again (msgspec caches them) is then
        # read with no string comparison.
        own = dict(zip(seen, seen, strict=True))
        #: The values of the slot keys, in ``_SLOT_BITS`` order, when the record has them all.
        self.slots = _getter(*(own[key] for key in _SLOT_BITS)) if self.full == _ALL_SLOTS else None
        others = tuple(key for key, bit in zip(seen, bits, strict=True) if not bit)
        self.rest = _values_of(others)
        self.null_values: tuple[None, ...] = (None,) * len(others)
        self.nulls = (keys, *self.null_values)
        #: Per mask: each key kept among the other values -> its index in ``_extra``.
        self.positions: dict[int, dict[str, int]] = {}
        #: Whether the records of this layout have a ``webhookId``, a ``nonce`` (else the
        #: socket's parser need not look them up).
        self.webhook = "webhookId" in keys
        self.nonce = "nonce" in keys

    def position(self, mask: int, key: str) -> int:
        """The index in ``_extra`` of ``key``'s value for a message of ``mask``; 0 when absent."""
        positions = self.positions.get(mask)
        if positions is None:
            positions = {}
            index = 1
            for each in self.keys:
                if not mask & _SLOT_BITS.get(each, 0):
                    positions.setdefault(each, index)
                    index += 1
            self.positions[mask] = positions
        return positions.get(key, 0)


_LAYOUTS: dict[tuple[str, ...], _Layout] = {}

#: The channel id and the server id of the last message built ("" before the first), interned.
_last_ids: list[str] = ["", ""]


def _remember_id(index: int, value: str) -> str:
    """``value`` interned, remembered as ``_last_ids[index]``."""
    value = _last_ids[index] = _intern(value)
    return value


def _layout(keys: tuple[str, ...]) -> _Layout:
    """The layout of the records whose key tuple is ``keys`` (made and remembered when new)."""
    layout = _LAYOUTS.get(keys)
    if layout is None:
        if len(_LAYOUTS) >= _LAYOUTS_MAX:
            _LAYOUTS.clear()
        # Filed under the key objects met, for the same reason as the getters.
        layout = _LAYOUTS[keys] = _Layout(share_keys(keys), keys)
    return layout
