"""``Message``: a chat message, and the service's escaping of message content."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._content import decode_content, encode_content
from .._validate import check_cache_flag
from ..errors import ChannelAccessError, ServiceAPIError, ServiceAuthError
from ..permissions import Permissions
from ..rest.route import Route
from ._base import (
    _MILLIS,
    _SECONDS,
    Model,
    as_dict,
    pack_time,
    parse_time,
    read_id,
    time_of_ms,
    unpack_time,
)
from ._message_layout import (
    _AUTHOR,
    _CHANNEL,
    _CONTAINERS,
    _CREATED,
    _ID,
    _LAYOUTS,
    _NO_EMBEDS,
    _SERVER,
    _SLOT_BITS,
    _TEXT,
    _UNPINNED,
    _copy_json,
    _last_ids,
    _Layout,
    _layout,
    _remember_id,
)
from ._port import State, StateLike, state_of
from .collection import ModelList
from .embed import EmbedBuilder
from .outgoing import check_message, embed_payloads
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from .channel import Channel
    from .guild import Guild
    from .member import Member

__all__ = ["Message", "decode_content", "encode_content"]

class Message(Model):
    """A message, built from ``message:new``, history or search records.

    Wire keys: ``publicId`` (also ``id``, ``messagePublicId``), ``content``
    (escaped on the wire, decoded here; ``""`` if missing), ``author`` (may
    be missing: then ``author`` is None), ``channelPublicId`` (also
    ``channelId``), ``serverPublicId`` (also ``serverId``; None in DMs),
    ``createdAt``, ``nonce``, ``embeds`` (default ``[]``), ``fileUrl``,
    ``replyToId``, ``editedAt``, ``pinned``.

    Lazy: the record is kept as it came, and only what routing a live event
    needs (id, channel, server, author) is read when the message is built;
    every other field is read from the record when asked for (``content``
    is decoded and times are parsed on each access).

    Attributes:
        id: The message id.
        author: The :class:`User`, or None for system messages.
        channel_id: The channel id (a server channel's, or a DM channel's): every message has one.
        server_id: The server id; None exactly for a message of a DM channel.
    """

    # The record is kept compact: the keys the slots below hold are marked in ``_wire_mask``
    # (the ids as their interned strings, ``createdAt`` packed, the author's record not copied
    # when it is the shared cached user's); ``_extra`` is the record's key tuple followed by the
    # other values in key order (one tuple shared by every message whose other values are null).
    __slots__ = ("id", "author", "channel_id", "server_id", "_text", "_created")

    id: str
    author: User | None
    channel_id: str
    server_id: str | None
    #: ``content`` as on the wire, when a str (bit ``_TEXT``), else None.
    _text: str | None
    #: ``createdAt`` in epoch ms, when packed (bit ``_CREATED``), else None.
    _created: float | None
    _extra: tuple[Any, ...]

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
            ValueError: The record has no id or no channel id.
        """
        self._build(state_of(state), as_dict(data, "message"), author, False)

    def _build(
        self, state: State, data: dict[str, Any], author: User | None, shared: bool, layout: _Layout | None = None
    ) -> None:
        """Fill the slots from ``data``; ``shared``: ``author`` is known to be the record's author.

        The socket's ``message:new`` parser calls this on ``Message.__new__(Message)``
        with ``shared`` True (the author already resolved, None to build an uncached one)
        and the record's ``layout``, which it has looked up already.

        Raises:
            ValueError: The record has no id or no channel id.
        """
        if layout is None:
            keys = tuple(data)
            layout = _LAYOUTS.get(keys) or _layout(keys)
        mask = layout.full  # every slot key of the record, a bit cleared for a value kept as it came
        self._state = state
        if layout.slots is not None:  # the usual record: every slot key, read in one call
            ident, author_data, channel_id, server_id, text, created, embeds, pinned = layout.slots(data)
        else:
            get = data.get
            ident = get("publicId")
            author_data = get("author")
            channel_id = get("channelPublicId")
            server_id = get("serverPublicId")
            text = get("content")
            created = get("createdAt")
            embeds = get("embeds")
            pinned = get("pinned")
        if type(ident) is not str or not ident:  # message ids are unique: not interned
            ident = read_id(data, "id", "messagePublicId")
            if ident is None:
                raise ValueError("message record has no publicId")
            mask &= ~_ID
        self.id = ident
        if author is None or not shared:
            if author is None and isinstance(author_data, dict):
                try:
                    author = User(state, author_data)
                except (TypeError, ValueError):
                    author = None
            if not (
                author is not None
                and isinstance(author_data, dict)
                and read_id(author_data, "publicId", "id", "userPublicId", "userId") == author.id
            ):
                mask &= ~_AUTHOR
        self.author = author
        # Ids are shared (interned); the last channel and server met are compared first, which
        # spares most messages the hash of an intern.
        last = _last_ids[0]
        if channel_id == last and last:  # the channel of the last message (a str, not empty)
            channel_id = last
        elif type(channel_id) is str and channel_id:
            channel_id = _remember_id(0, channel_id)
        else:
            channel_id = read_id(data, "channelPublicId", "channelId")
            if channel_id is None:
                raise ValueError("message record has no channelPublicId")
            mask &= ~_CHANNEL
        self.channel_id = channel_id
        last = _last_ids[1]
        if server_id == last and last:
            server_id = last
        elif type(server_id) is str and server_id:
            server_id = _remember_id(1, server_id)
        else:
            server_id = read_id(data, "serverPublicId", "serverId")
            mask &= ~_SERVER
        self.server_id = server_id
        if type(text) is not str:
            text = None
            mask &= ~_TEXT
        self._text = text
        # pack_time, its usual case inline: a second met lately and an exact fraction.
        if type(created) is str:
            base = _SECONDS.get(created[:19])
            millis = _MILLIS.get(created[19:])
            packed = base + millis if base is not None and millis is not None else pack_time(created)
        else:
            packed = pack_time(created)
        self._created = packed
        if packed is None:
            mask &= ~_CREATED
        if type(embeds) is not list or embeds:
            mask &= ~_NO_EMBEDS
        if pinned is not False:
            mask &= ~_UNPINNED
        self._wire_mask = mask
        if mask == layout.full:  # the usual record: its other values in one call, shared when null
            rest = layout.rest(data)
            self._extra = layout.nulls if rest == layout.null_values else (layout.keys, *rest)
        else:
            self._extra = (layout.keys, *(v for k, v in data.items() if not mask & _SLOT_BITS.get(k, 0)))

    # -- the record ------------------------------------------------------------

    @property
    def raw(self) -> dict[str, Any]:
        """The wire record the message was built from (a new dict on each access).

        Nested lists and objects are copies too: mutating the result does not
        change the message. ``author`` is the author's current record (the
        shared cached user's, when the message was built with it). Keys come
        in the record's order, except for a socket record with exactly the
        service's keys (``publicId``, ``content``, ``author``,
        ``channelPublicId``, ``serverPublicId``, ``createdAt``, ``embeds``,
        ``fileUrl``, ``replyToId``, ``editedAt``, ``pinned``, then maybe
        ``webhookId`` and ``nonce``) read by msgspec: its keys come in that
        order, the service's, whatever order the frame had them in.
        """
        extra = self._extra
        mask = self._wire_mask
        out: dict[str, Any] = {}
        index = 1
        for key in extra[0]:
            bit = mask & _SLOT_BITS.get(key, 0)
            if not bit:
                value = extra[index]
                index += 1
                out[key] = _copy_json(value) if type(value) in _CONTAINERS else value
            elif bit == _ID:
                out[key] = self.id
            elif bit == _AUTHOR:
                assert self.author is not None
                out[key] = self.author.raw
            elif bit == _CHANNEL:
                out[key] = self.channel_id
            elif bit == _SERVER:
                out[key] = self.server_id
            elif bit == _TEXT:
                out[key] = self._text
            elif bit == _CREATED:
                assert self._created is not None
                out[key] = unpack_time(self._created)
            elif bit == _NO_EMBEDS:
                out[key] = []
            else:
                out[key] = False
        return out

    def _extra_get(self, key: str, default: Any = None) -> Any:
        """The value of a wire key kept as it came, or ``default`` when absent (or kept in a slot)."""
        extra = self._extra
        index = (_LAYOUTS.get(extra[0]) or _layout(extra[0])).position(self._wire_mask, key)
        return extra[index] if index else default

    # -- fields ------------------------------------------------------------------

    @property
    def nonce(self) -> str | None:
        """The nonce echoed from a ``message:send``, else None."""
        value = self._extra_get("nonce")
        return value if type(value) is str and value else None

    @property
    def content(self) -> str:
        """The text, with the service's escaping undone (``""`` when the record has none)."""
        text = self._text
        return "" if text is None else decode_content(text)

    @property
    def created_at(self) -> datetime | None:
        """Creation time (UTC-aware), or None when missing or unparseable."""
        if self._created is not None:
            return time_of_ms(self._created)
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
    def replayed(self) -> bool:
        """True for a message the socket did not deliver live: read back from the channel's
        history after a gap (a reconnect, or a standby socket process taking over), by the
        ``catch_up`` option. Its listeners may see it after later messages."""
        return self._extra_get("replayed") is True

    @property
    def pinned(self) -> bool:
        """Whether the record says the message is pinned."""
        return not self._wire_mask & _UNPINNED and self._extra_get("pinned") is True

    @property
    def channel(self) -> Channel | None:
        """The message's channel from ``client.channels``; **may block** the first time a
        channel of its server is needed, while that server's channels are listed (one request
        per server, see ``client.channels.get_or_list``). None when the channel is hidden from
        the bot, or for a DM channel not cached."""
        return self._state.channels.get_or_list(self.channel_id, self.server_id)

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
            ValueError: The message has no channel id; or only whitespace and no embed, or
                over the message limits (nothing is sent).
            EmptyMessageError: No content and no embed (``"send_message requires non-empty
                content or at least one embed."``; a ServiceAuthError and a ValueError).
            ServiceAuthError: Not connected.
            TimeoutError: No echo within 10 s.
        """
        return self._state.send_message(
            self.channel_id, options, content=content, embeds=embeds, reply_to_id=self.id
        )

    def edit(self, content: str, *, embeds: Sequence[Any] | None = None) -> None:
        """Ask the service to edit this message (``message:edit``; fire-and-forget).

        Only the author may edit a message: an edit of another user's message raises at
        once, since the service would drop it without a word. The local copy is not
        changed; a ``message_update`` event follows if the service accepts.

        Args:
            content: The new text.
            embeds: The new embeds (:class:`EmbedBuilder` or mappings), which replace the
                message's; None sends none.

        Raises:
            TypeError: ``content`` is not a str, or ``embeds`` not a list of embeds.
            ValueError: The edited message would break a message rule: only whitespace and
                no embed, or over the message limits; the text starts ``edit:`` and names
                the rule. Nothing is sent.
            EmptyMessageError: No content and no embed (``"edit requires non-empty content or
                at least one embed."``; also a ValueError). Nothing is sent.
            ChannelAccessError: The message is not the bot's own (``reason``
                ``"not_the_author"``); nothing is sent.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        if not isinstance(content, str):
            raise TypeError("content must be a str")
        me = self._state.user
        if me is not None and self.author is not None and self.author.id != me.id:
            raise ChannelAccessError(self.channel_id, action="edit", reason="not_the_author",
                                     detail=f"message {self.id} is {self.author.tag_string}'s, and only "
                                     "the author may edit a message")
        payload_embeds = embed_payloads(embeds)
        check_message(content, payload_embeds, "edit")
        self._state.emit(
            endpoints.EMIT_MESSAGE_EDIT,
            {"messagePublicId": self.id, "content": content, "embeds": payload_embeds},
        )

    def delete(self) -> None:
        """Ask the service to delete this message (``message:delete``; fire-and-forget).

        The bot may delete its own messages, and others' with MANAGE_MESSAGES in the
        channel: when the caches show that it lacks it (see :meth:`Channel.permissions_for`),
        this raises at once instead of sending what the service would drop.

        Raises:
            ChannelAccessError: Another user's message, and the bot lacks MANAGE_MESSAGES
                there as far as the caches show; nothing is sent.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        me = self._state.user
        if me is None or self.author is None or self.author.id != me.id:
            self._check_permission("delete", Permissions.MANAGE_MESSAGES)
        self._state.emit(endpoints.EMIT_MESSAGE_DELETE, {"messagePublicId": self.id})

    def react(self, emoji: str) -> None:
        """Toggle the bot's reaction with ``emoji`` (``message:react``; fire-and-forget).

        The service has one reaction event, which adds the bot's reaction when it is not
        there and removes it when it is. :meth:`add_reaction` and :meth:`remove_reaction`
        say which one you want.

        Raises:
            ValueError: ``emoji`` is empty.
            TypeError: ``emoji`` is not a str.
            ChannelAccessError: The caches show that the bot lacks ADD_REACTION in the
                channel; nothing is sent.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        if not isinstance(emoji, str):
            raise TypeError("emoji must be a str")
        if not emoji:
            raise ValueError("emoji must not be empty")
        self._check_permission("react", Permissions.ADD_REACTION)
        self._state.emit(endpoints.EMIT_MESSAGE_REACT, {"messagePublicId": self.id, "emoji": emoji})

    def add_reaction(self, emoji: str) -> None:
        """Add the bot's reaction with ``emoji``; nothing when it is there already. Blocks.

        Asks the service who reacted with ``emoji`` (one request, as :meth:`reactions_for`),
        then sends the reaction (``message:react``, which toggles) only when the bot is not
        among them. A ``message_reaction_add`` event follows when the service applied it.
        The reaction is sent, not awaited: a second call made before that event may find
        the bot not among the users yet and toggle the reaction off again, so wait for the
        event before acting on the same reaction again.

        Raises:
            ValueError, TypeError: As :meth:`react`.
            ChannelAccessError: As :meth:`react`.
            ServiceAPIError: The reactions could not be read (403 the channel is hidden).
            ServiceAuthError: The socket is not connected.
        """
        if not self._bot_reacted(emoji):
            self.react(emoji)

    def remove_reaction(self, emoji: str) -> None:
        """Remove the bot's reaction with ``emoji``; nothing when it is not there. Blocks.

        The request and the toggle of :meth:`add_reaction`, the other way round. A
        ``message_reaction_remove`` event follows.

        Raises:
            ValueError, TypeError: As :meth:`react`.
            ChannelAccessError: As :meth:`react`.
            ServiceAPIError: The reactions could not be read (403 the channel is hidden).
            ServiceAuthError: The socket is not connected.
        """
        if self._bot_reacted(emoji):
            self.react(emoji)

    def _bot_reacted(self, emoji: str) -> bool:
        """Whether the bot is among the users who reacted with ``emoji`` (one request)."""
        me = self._state.user
        if me is None:
            raise ServiceAuthError("the bot is not logged in")
        return any(user.id == me.id for user in self.reactions_for(emoji, cache=False))

    def _check_permission(self, action: str, needed: Permissions) -> None:
        """Raise when the caches show that the bot lacks ``needed`` in this message's channel.

        Raises:
            ChannelAccessError: The bot's permissions there are known and lack ``needed``.
        """
        me = self._state.user
        channel = self._state.channels.cache.get(self.channel_id)
        if me is None or channel is None or self.server_id is None:
            return
        member = self._state.members.get(self.server_id, me.id)
        perms = channel.permissions_for(member) if member is not None else None
        if perms is None:
            return
        missing = (needed | Permissions.VIEW_CHANNELS) & ~perms
        if missing:
            names = " and ".join(flag.name or "" for flag in Permissions if flag in missing)
            raise ChannelAccessError(self.channel_id, action=action, reason="missing_permissions", missing=missing,
                                     detail=f"the bot lacks {names} there (its roles and the channel's overwrites)")

    # -- pins and reactions over REST -------------------------------------------

    def pin(self) -> None:
        """Pin this message (``POST /chat/{chid}/pin/{mid}``; needs PIN_MESSAGE, or a DM participant).

        Blocks until the service answered; a ``message_pin`` event follows.
        Pinning a pinned message changes nothing.

        Raises:
            ValueError: The message has no channel id.
            ServiceAPIError: 403 without PIN_MESSAGE, 404 unknown message.
        """
        self._pin(endpoints.PIN_MESSAGE)

    def unpin(self) -> None:
        """Unpin this message (``DELETE /chat/{chid}/pin/{mid}``); see :meth:`pin`."""
        self._pin(endpoints.UNPIN_MESSAGE)

    def _pin(self, endpoint: endpoints.Endpoint) -> None:
        self._state.request(Route(endpoint, channel_id=self.channel_id, message_id=self.id))

    def reactions_for(self, emoji: str, *, cache: bool = True) -> ModelList[User]:
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
        data = self._state.request(
            Route(endpoints.GET_REACTION_DETAILS, channel_id=self.channel_id,
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
        return ModelList(out)

    _REPR = ("id", "channel_id", "author")
    _HTML = ("id", "author", "content", "created_at", "channel_id")
    _DICT = ("id", "channel_id", "server_id", "author.id", "author", "content", "created_at", "edited_at",
             "pinned", "reply_to_id")
