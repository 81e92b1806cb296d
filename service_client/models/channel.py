"""``Channel``: a server channel (protocol.md 3.3; python-api.md 4)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._base import Model, as_dict, read_bool, read_id, read_int, read_str

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .embed import EmbedBuilder
    from .guild import Guild
    from .message import Message

__all__ = ["Channel"]

_intern = sys.intern


class Channel(Model):
    """A channel of a server (or, for :class:`DMChannel`, a DM).

    Wire keys (protocol 3.3): ``publicId`` (also ``id``, ``channelPublicId``),
    ``name``, ``type`` (any string; ``"TEXT"``, ``"VOICE"``...),
    ``serverPublicId`` (also ``serverId``; absent in the category listing,
    where the manager sets it), ``categoryId``, ``position``, ``isPrivate``,
    ``description``.

    Attributes:
        id, name, type, server_id, category_id, position, is_private: As above.
        description: The channel topic, or None.
    """

    __slots__ = ("id", "name", "type", "server_id", "category_id", "position", "is_private", "description")

    _WIRE = (
        ("publicId", "id"),
        ("name", "name"),
        ("type", "type"),
        ("serverPublicId", "server_id"),
        ("categoryId", "category_id"),
        ("position", "position"),
        ("isPrivate", "is_private"),
        ("description", "description"),
    )

    id: str
    name: str
    type: str
    server_id: str | None
    category_id: str | None
    position: int
    is_private: bool
    description: str | None

    def __init__(
        self, client: Client, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a channel record.

        Args:
            client: The owning client.
            data: The channel record.
            server_id: Set explicitly (category listing), overriding the record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._client = client
        self._parse(as_dict(data, "channel"), server_id)

    def _parse(self, data: dict[str, Any], server_id: str | None) -> None:
        ident = read_id(data, "publicId", "id", "channelPublicId", "channelId")
        if ident is None:
            raise ValueError("channel record has no publicId")
        self.id = ident
        self.name = read_str(data, "name") or ""
        kind = read_str(data, "type")
        self.type = _intern(kind) if kind and len(kind) <= 16 else (kind or "TEXT")
        self.server_id = server_id or read_id(data, "serverPublicId", "serverId")
        self.category_id = read_id(data, "categoryId", "categoryPublicId", "parentId")
        self.position = read_int(data, "position", 0)
        self.is_private = read_bool(data, "isPrivate")
        self.description = read_str(data, "description")
        self._split(data)

    @property
    def guild(self) -> Guild | None:
        """The cached server of this channel, or None."""
        return self._cached_guild(self.server_id)

    @property
    def mention(self) -> str:
        """The mention text ``<#id>``."""
        return f"<#{self.id}>"

    def send(
        self,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """Send a message here: ``client.send_message(self.id, ...)``.

        Same arguments, result and errors as :meth:`Client.send_message`
        (``ServiceAuthError`` when not connected or empty, ``TimeoutError``
        after 10 s without the echo).
        """
        return self._client.send_message(
            self.id, options, content=content, embeds=embeds, reply_to_id=reply_to_id
        )

    def delete(self) -> None:
        """Delete this channel (``DELETE /channels/{id}``) and drop it from the cache.

        Raises:
            ServiceAPIError: The service refused (403 without MANAGE_CHANNELS, 404).
        """
        from ..managers.base import route

        self._client._request(route("DELETE", "/channels/{channel_id}", channel_id=self.id))
        self._client.channels.cache.pop(self.id, None)
