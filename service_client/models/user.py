"""``User``: a user or bot account, as the service's user records describe it."""

from __future__ import annotations

import itertools
import operator
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .._defaults import MISSING
from ._base import Model, as_dict, read_bool, read_id, read_str
from ._port import StateLike, state_of

__all__ = ["User"]

_STATUSES = ("online", "idle", "dnd", "invisible", "offline")
#: The values of a user record's own keys, in the order ``User._is_record`` compares them.
_RECORD_VALUES: Callable[[Mapping[str, Any]], tuple[Any, ...]] = operator.itemgetter("publicId", "name", "status", "tag", "image", "isBot")
_intern = sys.intern

#: A new value after every change of any user's fields (a user built, updated or merged by
#: ``User._parse``, or its status set by ``User._set_status``), written once the fields are
#: set: the socket's parser remembers that a message's author record equals the cached user
#: only while this is unchanged. Each change writes a value of its own from a sequence
#: (``next`` on it is atomic), so two threads changing users at once can leave a smaller value
#: than before, never one that a remembered author was read with.
changes: list[int] = [0]
_sequence = itertools.count(1)


def _changed() -> None:
    """Give :data:`changes` its next value: call after a user's fields changed."""
    changes[0] = next(_sequence)


class User(Model):
    """A user or bot account.

    Wire keys: ``publicId`` (also ``id``, ``userPublicId``) ->
    ``id``; ``name`` (also ``userName``, ``username``) -> ``username``;
    ``tag`` -> ``tag``; ``image`` (also ``avatar``, ``userImage``) ->
    ``avatar``; ``isBot`` -> ``bot``; ``status`` -> ``status`` (default
    ``"offline"``).

    Attributes:
        id: The user's public id.
        username: Display name ("" when missing).
        tag: 4-digit discriminator, or None.
        avatar: Image URL, or None.
        bot: True for bot accounts.
        status: ``online``/``idle``/``dnd``/``invisible``/``offline``.
        raw: The wire record (rebuilt on access; see :class:`Model`).
    """

    __slots__ = ("id", "username", "tag", "avatar", "bot", "status")

    _WIRE = (
        ("publicId", "id"),
        ("name", "username"),
        ("tag", "tag"),
        ("image", "avatar"),
        ("isBot", "bot"),
        ("status", "status"),
    )

    id: str
    username: str
    tag: str | None
    avatar: str | None
    bot: bool
    status: str

    def __init__(self, state: StateLike, data: Mapping[str, Any]) -> None:
        """Build from a user record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._state = state_of(state)
        self._parse(as_dict(data, "user"))

    def _parse(self, data: dict[str, Any]) -> None:
        ident = read_id(data, "publicId", "id", "userPublicId", "userId")
        if ident is None:
            raise ValueError("user record has no publicId")
        self.id = ident
        self.username = (
            read_str(data, "name") or read_str(data, "username") or read_str(data, "userName") or ""
        )
        tag = read_str(data, "tag") or read_str(data, "userTag")
        # 4-digit discriminators and the few statuses: a bounded set, shared.
        self.tag = _intern(tag) if tag is not None and len(tag) <= 4 else tag
        avatar = data.get("image", data.get("avatar", data.get("userImage")))
        self.avatar = avatar if isinstance(avatar, str) else None
        self.bot = read_bool(data, "isBot", read_bool(data, "bot"))
        status = read_str(data, "status")
        self.status = _intern(status) if status in _STATUSES else (status or "offline")
        self._split(data)
        _changed()

    def _set_status(self, status: str) -> None:
        """Set the status alone (the bot's own, by ``set_status``): the other fields are kept."""
        self.status = status
        _changed()

    def _update(self, patch: Mapping[str, Any]) -> None:
        """Merge a partial record (``user:update``, ``presence:update``) into this user.

        A key present with null clears the field; an absent key keeps its value.
        """
        merged = dict(self.raw)
        for key in ("name", "tag", "image", "isBot", "status"):
            if key in patch:
                merged[key] = patch[key]
        self._parse(merged)

    def _is_record(self, data: Mapping[str, Any]) -> bool:
        """True when ``data`` equals :attr:`raw`, checked without building it; False may be wrong.

        Exact for a record holding every key of ``_WIRE`` in its parsed form and at most one
        other key (what the service sends); any other record answers False, and the caller
        compares the slow way.
        """
        # The six values first (one C call and one tuple compare), which settles most records.
        if self._wire_mask != 63:
            return False
        try:
            if _RECORD_VALUES(data) != (self.id, self.username, self.status, self.tag, self.avatar, self.bot):
                return False
        except KeyError:
            return False
        extra = self._extra
        if extra is None:
            return len(data) == 6
        return len(extra) == 2 and len(data) == 7 and data.get(extra[0][0], MISSING) == extra[1]

    @property
    def tag_string(self) -> str:
        """``name#tag`` (just the name when the tag is unknown)."""
        return f"{self.username}#{self.tag}" if self.tag else self.username

    @property
    def mention(self) -> str:
        """The mention text ``<@id>`` (how the service's messages mention a user)."""
        return f"<@{self.id}>"

    _REPR = ("id", "username")
    _HTML = ("id", "username", "tag", "bot", "status")

    def __str__(self) -> str:
        return self.tag_string

