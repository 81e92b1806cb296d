"""The usual ``message:new`` frame read straight into a message, with msgspec.

A frame ``["message:new", record]`` whose record has exactly the service's message keys
(:data:`MESSAGE_KEYS`, and maybe a ``webhookId``, a ``nonce``), each of the type the service sends, is decoded
by msgspec into two small structs (the record and its author) instead of two dicts: no key
strings, no dict, no generic values, and the structs are not tracked by the cyclic garbage
collector. :func:`build_message` then fills a :class:`~.message.Message` from the struct the
way ``Message._build`` fills it from the record, so the message is the same either way (its
``raw`` included, keys in :data:`MESSAGE_KEYS` order, ``nonce`` last).

Anything else (another key, a missing key, another type, malformed JSON) makes
:func:`decode_frame` raise: the caller then decodes the frame the general way, with the same
outcome as if this module did not exist. Importing this module imports msgspec: the socket's
parsers import it at the first connection, when msgspec is the reader's decoder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from ._base import _MILLIS, _SECONDS, pack_time
from ._message_layout import _CREATED, _NO_EMBEDS, _SERVER, _SLOT_BITS, _UNPINNED, _last_ids, _layout, _remember_id

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State
    from .message import Message
    from .user import User

__all__ = ["MESSAGE_KEYS", "UNSET", "AuthorWire", "MessageWire", "build_message", "decode_frame", "record_of"]

class AuthorWire(msgspec.Struct, forbid_unknown_fields=True, gc=False, rename="camel"):
    """A message's author record with exactly the service's user keys (``createdAt`` optional, last)."""

    public_id: str
    name: str
    tag: str | None
    image: str | None
    is_bot: bool
    status: str
    created_at: str | UnsetType = UNSET


class MessageWire(msgspec.Struct, forbid_unknown_fields=True, gc=False, rename="camel"):
    """A message record with exactly the service's message keys (``webhookId``, ``nonce`` optional, last)."""

    public_id: str
    content: str
    author: AuthorWire
    channel_public_id: str
    server_public_id: str | None
    created_at: str
    embeds: list[Any]
    file_url: str | None
    reply_to_id: str | None
    edited_at: str | None
    pinned: bool
    webhook_id: str | None | UnsetType = UNSET
    nonce: str | UnsetType = UNSET


#: The record keys of :class:`MessageWire`, in the order the service writes them.
MESSAGE_KEYS = (
    "publicId", "content", "author", "channelPublicId", "serverPublicId", "createdAt", "embeds",
    "fileUrl", "replyToId", "editedAt", "pinned",
)

#: Decode a frame's JSON array (bytes) into a list, its strings as str and its objects as
#: :class:`MessageWire` (``["message:new", MessageWire]`` for the usual frame); raises
#: (``msgspec.DecodeError``, ``msgspec.ValidationError``) on anything else.
decode_frame: Callable[[bytes], list[Any]] = msgspec.json.Decoder(list[str | MessageWire]).decode

#: The record a struct was decoded from, as the general decoder gives it (a dict per object,
#: keys in field order, an absent ``nonce`` left out).
record_of: Callable[[Any], dict[str, Any]] = msgspec.to_builtins

_PLAIN = _layout(MESSAGE_KEYS)
_NONCE = _layout((*MESSAGE_KEYS, "nonce"))
_BITS = tuple(_SLOT_BITS.get(key, 0) for key in (*MESSAGE_KEYS, "nonce"))


def build_message(message: Message, state: State, wire: MessageWire, author: User) -> bool:
    """Fill the slots of ``message`` (made by ``Message.__new__``) from ``wire``.

    ``author`` is the record's author, already resolved (the cached user).
    Returns False, having set nothing, for a record ``Message._build`` reads
    in a way of its own (a webhook's, or an empty id, channel id or server
    id): the caller then builds the message from :func:`record_of` the
    general way.
    """
    ident = wire.public_id
    channel_id = wire.channel_public_id
    server_id = wire.server_public_id
    if not ident or not channel_id or server_id == "" or wire.webhook_id is not UNSET:
        return False
    nonce = wire.nonce
    layout = _PLAIN if nonce is UNSET else _NONCE
    mask = layout.full
    message._state = state
    message.id = ident
    message.author = author
    # Interned ids, the last met compared first (as Message._build does).
    last = _last_ids[0]
    message.channel_id = last if channel_id == last else _remember_id(0, channel_id)
    if server_id is None:
        message.server_id = None
        mask &= ~_SERVER
    else:
        last = _last_ids[1]
        message.server_id = last if server_id == last else _remember_id(1, server_id)
    message._text = wire.content
    # pack_time, its usual case inline (as Message._build does).
    created = wire.created_at
    base = _SECONDS.get(created[:19])
    millis = _MILLIS.get(created[19:])
    packed = base + millis if base is not None and millis is not None else pack_time(created)
    message._created = packed
    if packed is None:
        mask &= ~_CREATED
    embeds = wire.embeds
    if embeds:
        mask &= ~_NO_EMBEDS
    pinned = wire.pinned
    if pinned:
        mask &= ~_UNPINNED
    message._wire_mask = mask
    file_url = wire.file_url
    reply_to = wire.reply_to_id
    edited = wire.edited_at
    if mask != layout.full:  # the values the slots do not keep, in key order
        values = (ident, None, None, channel_id, server_id, created, embeds, file_url, reply_to, edited, pinned, nonce)
        message._extra = (layout.keys, *(v for v, bit in zip(values, _BITS, strict=True) if not mask & bit and v is not UNSET))
    elif nonce is not UNSET:
        message._extra = (layout.keys, file_url, reply_to, edited, nonce)
    elif file_url is None and reply_to is None and edited is None:
        message._extra = layout.nulls
    else:
        message._extra = (layout.keys, file_url, reply_to, edited)
    return True
