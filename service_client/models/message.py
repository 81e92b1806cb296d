"""``Message``: a chat message, and the service's escaping of message content."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._content import decode_content, encode_content
from .._state import StateLike, state_of
from .._validate import check_cache_flag
from ..errors import ServiceAPIError
from ..rest.route import Route
from ._base import Model, as_dict, parse_time, read_id, share_keys
from .embed import EmbedBuilder
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from .channel import Channel
    from .guild import Guild
    from .member import Member

__all__ = ["Message", "decode_content", "encode_content"]

_intern = sys.intern
def _copy_json(value: Any) -> Any:
    """A copy of decoded JSON: dicts and lists copied at every level, other values shared."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) if type(v) in _CONTAINERS else v for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) if type(v) in _CONTAINERS else v for v in value]
    return value


_CONTAINERS = (dict, list)


class Message(Model):
    """A message, built from ``message:new``, history or search records.

    Wire keys: ``publicId`` (also ``id``, ``messagePublicId``), ``content``
    (escaped on the wire, decoded here; ``""`` if missing), ``author`` (may
    be missing: then ``author`` is None), ``channelPublicId`` (also
    ``channelId``), ``serverPublicId`` (also ``serverId``; None in DMs),
    ``createdAt``, ``nonce``, ``embeds`` (default ``[]``), ``fileUrl``,
    ``replyToId``, ``editedAt``, ``pinned``.

    Lazy: the record is kept as it came, and only what routing a live event
    needs (id, channel, server, nonce, author) is read when the message is
    built; every other field is read from the record when first asked for
    (``content`` is decoded once, times are parsed on each access).

    Attributes:
        id: The message id.
        author: The :class:`User`, or None for system messages.
        channel_id: The channel id.
        server_id: The server id, or None for DMs.
        nonce: The nonce echoed from a ``message:send``, else None.
    """

    __slots__ = (
        "id",
        "author",
        "channel_id",
        "server_id",
        "nonce",
        "_keys",
        "_values",
        "_content",
        "_shared_author",
    )

    id: str
    author: User | None
    channel_id: str | None
    server_id: str | None
    nonce: str | None
    #: The record's keys, in order (one tuple shared by every message with the same keys).
    _keys: tuple[str, ...]
    #: The record's values, in the order of ``_keys``; ids as the interned strings of the
    #: attributes, and None for ``author`` when ``_shared_author`` (``raw`` then shows the
    #: shared user's current record).
    _values: tuple[Any, ...]
    #: The decoded content once read, else None.
    _content: str | None
    _shared_author: bool

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, author: User | None = None
    ) -> None:
        """Build from a message record; never fails on a missing or broken ``author``.

        The record's values are kept (one level): changing ``data`` afterwards
        does not change the message.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The message record.
            author: The author when already resolved (the cached user).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._build(state, as_dict(data, "message"), author)

    @classmethod
    def _from_wire(
        cls, state: StateLike, data: dict[str, Any], author: User | None, *, shared: bool | None = None
    ) -> Message:
        """Build from a decoded socket payload, its author already resolved.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The message record.
            author: The author when already resolved (the cached user).
            shared: True when ``author`` is known to be the user of the
                record's ``author`` (same id); None checks it.

        Raises:
            ValueError: The record has no id.
        """
        message = cls.__new__(cls)
        message._build(state, data, author, shared)
        return message

    def _build(self, state: StateLike, data: dict[str, Any], author: User | None, shared: bool | None = None) -> None:
        get = data.get
        ident = get("publicId")
        if type(ident) is not str or not ident:  # message ids are unique: not interned
            ident = read_id(data, "id", "messagePublicId")
            if ident is None:
                raise ValueError("message record has no publicId")
        self._state = state_of(state)
        self.id = ident
        author_data = get("author")
        if author is None and isinstance(author_data, dict):
            try:
                author = User(self._state, author_data)
            except (TypeError, ValueError):
                author = None
        self.author = author
        nonce = get("nonce")
        self.nonce = nonce if type(nonce) is str and nonce else None
        self._content = None
        if shared is None:
            shared = (
                author is not None
                and isinstance(author_data, dict)
                and read_id(author_data, "publicId", "id", "userPublicId", "userId") == author.id
            )
        self._shared_author = shared
        # The record in its compact form: a shared key tuple and a tuple of values, without the
        # author's record when it is the shared user's, and with the ids' interned strings.
        keys = share_keys(tuple(data))
        values = list(data.values())
        index = keys.index
        if shared:
            values[index("author")] = None
        value = get("channelPublicId")  # the usual spelling first, without a call
        if type(value) is str and value:
            value = values[index("channelPublicId")] = _intern(value)
        else:
            value = read_id(data, "channelPublicId", "channelId")
        self.channel_id = value
        value = get("serverPublicId")
        if type(value) is str and value:
            value = values[index("serverPublicId")] = _intern(value)
        else:
            value = read_id(data, "serverPublicId", "serverId")
        self.server_id = value
        self._keys = keys
        self._values = tuple(values)

    # -- the record ------------------------------------------------------------

    @property
    def raw(self) -> dict[str, Any]:
        """The wire record the message was built from (a new dict on each access).

        Nested lists and objects are copies too: mutating the result does not
        change the message. ``author`` is the author's current record (the
        shared cached user's, when the message was built with it).
        """
        out: dict[str, Any] = {
            key: _copy_json(value) if type(value) in _CONTAINERS else value
            for key, value in zip(self._keys, self._values, strict=True)
        }
        if self._shared_author:
            assert self.author is not None
            out["author"] = self.author.raw
        return out

    def _extra_get(self, key: str, default: Any = None) -> Any:
        """The value of a wire key, or ``default`` when absent (``author`` excepted)."""
        try:
            return self._values[self._keys.index(key)]
        except ValueError:
            return default

    # -- fields ------------------------------------------------------------------

    @property
    def content(self) -> str:
        """The text, with the service's escaping undone (``""`` when the record has none)."""
        text = self._content
        if text is None:
            value = self._extra_get("content")
            text = decode_content(value) if isinstance(value, str) else ""
            self._content = text
        return text

    @property
    def created_at(self) -> datetime | None:
        """Creation time (UTC-aware), or None when missing or unparseable."""
        return parse_time(self._extra_get("createdAt"))

    @property
    def edited_at(self) -> datetime | None:
        """Last edit time (UTC-aware), or None."""
        return parse_time(self._extra_get("editedAt"))

    @property
    def embeds(self) -> list[dict[str, Any]]:
        """The embed payloads, ``[]`` when none."""
        embeds = self._extra_get("embeds")
        if not isinstance(embeds, list):
            return []
        return [e for e in embeds if isinstance(e, dict)]

    @property
    def file_url(self) -> str | None:
        """The attachment URL, or None."""
        value = self._extra_get("fileUrl")
        return value if isinstance(value, str) else None

    @property
    def reply_to_id(self) -> str | None:
        """The id of the message this one replies to, or None."""
        value = self._extra_get("replyToId")
        return None if value is None else read_id({"replyToId": value}, "replyToId")

    @property
    def pinned(self) -> bool:
        """Whether the record says the message is pinned."""
        return self._extra_get("pinned") is True

    @property
    def channel(self) -> Channel | None:
        """The cached channel, or None."""
        if self.channel_id is None:
            return None
        return self._state.channels.cache.get(self.channel_id)

    @property
    def guild(self) -> Guild | None:
        """The cached server, or None (always None in DMs)."""
        return self._cached_guild(self.server_id)

    @property
    def member(self) -> Member | None:
        """The author's :class:`Member` in this message's server; **may block**.

        Taken from ``client.members.cache`` when cached. Otherwise fetched
        with one REST request (``client.members.fetch``) on the calling
        thread, which then blocks for the round trip (seconds at worst, under
        the REST timeouts and retries), and cached for the next time. Safe
        to read from a listener.

        Returns:
            The member; None in a direct message, for a message without an
            author, or when the service answers 404 (the author is no
            longer a member).

        Raises:
            ServiceAPIError: The service refused the fetch (other than 404).
            ServiceTimeoutError: The fetch timed out after its retries.
            ServiceError: The fetch failed on the network, or the client was
                destroyed meanwhile.
        """
        author = self.author
        if self.server_id is None or author is None:
            return None
        members = self._state.members
        cached = members.get(self.server_id, author.id)
        if cached is not None:
            return cached

        try:
            return members.fetch(self.server_id, author.id)
        except ServiceAPIError as exc:
            if exc.status == 404:
                return None
            raise

    def reply(
        self,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
    ) -> Message:
        """Send a reply in the same channel, with ``replyToId`` set to this message.

        Same arguments (minus the channel and ``reply_to_id``), result and
        errors as the client's ``send_message``. Safe to call from a listener.

        Raises:
            ValueError: The message has no channel id.
            ServiceAuthError: Not connected, or nothing to send.
            TimeoutError: No echo within 10 s.
        """
        if self.channel_id is None:
            raise ValueError("cannot reply: the message has no channel id")
        return self._state.send_message(
            self.channel_id, options, content=content, embeds=embeds, reply_to_id=self.id
        )

    def edit(self, content: str, *, embeds: Sequence[Any] | None = None) -> None:
        """Ask the service to edit this message (``message:edit``; fire-and-forget).

        The local copy is not changed; a ``message_update``
        event follows if the service accepts.

        Raises:
            TypeError: ``content`` is not a str.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        if not isinstance(content, str):
            raise TypeError("content must be a str")

        payload_embeds = [e.to_dict() if isinstance(e, EmbedBuilder) else dict(e) for e in embeds or ()]
        self._state.emit(
            "message:edit",
            {"messagePublicId": self.id, "content": content, "embeds": payload_embeds},
        )

    def delete(self) -> None:
        """Ask the service to delete this message (``message:delete``; fire-and-forget).

        Raises:
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        self._state.emit("message:delete", {"messagePublicId": self.id})

    def react(self, emoji: str) -> None:
        """Toggle a reaction (``message:react``; fire-and-forget).

        Raises:
            ValueError: ``emoji`` is empty.
            TypeError: ``emoji`` is not a str.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        if not isinstance(emoji, str):
            raise TypeError("emoji must be a str")
        if not emoji:
            raise ValueError("emoji must not be empty")
        self._state.emit("message:react", {"messagePublicId": self.id, "emoji": emoji})

    # -- pins and reactions over REST -------------------------------------------

    def pin(self) -> None:
        """Pin this message (``POST /chat/{chid}/pin/{mid}``; needs PIN_MESSAGE, or a DM participant).

        Blocks until the service answered; a ``message_pin`` event follows.
        Pinning a pinned message changes nothing.

        Raises:
            ValueError: The message has no channel id.
            ServiceAPIError: 403 without PIN_MESSAGE, 404 unknown message.
        """
        self._pin("POST")

    def unpin(self) -> None:
        """Unpin this message (``DELETE /chat/{chid}/pin/{mid}``); see :meth:`pin`."""
        self._pin("DELETE")

    def _pin(self, method: str) -> None:
        if self.channel_id is None:
            raise ValueError("the message has no channel id")
        self._state.request(
            Route(method, "/chat/{channel_id}/pin/{message_id}", channel_id=self.channel_id, message_id=self.id)
        )

    def reactions_for(self, emoji: str, *, cache: bool = True) -> list[User]:
        """The users who reacted with ``emoji`` (``GET /chat/{chid}/reactions/{mid}/details?emoji=``).

        Blocks. The service answers every emoji group of the message; the one
        whose ``emoji`` equals the argument is kept.

        Args:
            emoji: The reaction (a unicode emoji, or a custom emoji's text).
            cache: Upsert the users into ``client.users`` (the cached objects
                are returned); False builds new ones and writes nothing.

        Returns:
            The users, in the service's order; ``[]`` when nobody reacted with it.

        Raises:
            TypeError, ValueError: ``emoji`` is not a non-empty str, or the
                message has no channel id (before any request).
            ServiceAPIError: 403 the channel is not visible, 404 unknown message.
        """
        if not isinstance(emoji, str):
            raise TypeError(f"emoji must be a str, got {type(emoji).__name__}")
        if not emoji:
            raise ValueError("emoji must not be empty")
        check_cache_flag(cache)
        if self.channel_id is None:
            raise ValueError("the message has no channel id")
        data = self._state.request(
            Route("GET", "/chat/{channel_id}/reactions/{message_id}/details", channel_id=self.channel_id,
                  message_id=self.id),
            params={"emoji": emoji},
        )
        groups = data.get("reactions") if isinstance(data, dict) else data
        out: list[User] = []
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict) or group.get("emoji") != emoji:
                continue
            users = group.get("users")
            for entry in users if isinstance(users, list) else ():
                if not isinstance(entry, dict):
                    continue
                try:
                    out.append(self._state.store_user(entry, cache=cache))
                except (TypeError, ValueError):
                    continue
            break
        return out

    _REPR = ("id", "channel_id", "author")
    _HTML = ("id", "author", "content", "created_at", "channel_id")
