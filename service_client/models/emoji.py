"""``Emoji``: a custom emoji of a server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from ..rest.route import Route
from ._base import Model, as_dict, read_bool, read_id, read_str
from ._port import StateLike, state_of

if TYPE_CHECKING:  # pragma: no cover
    from .guild import Guild

__all__ = ["Emoji"]


class Emoji(Model):
    """A custom emoji of one server. ``str(emoji)`` is ``:name:``.

    Wire keys: ``publicId`` (also ``id``), ``name``, ``url`` (also
    ``imageUrl``), ``serverPublicId`` (also ``serverId``), ``animated``.

    Attributes:
        id: The emoji's public id.
        name: Its name (2 to 32 characters of ``[A-Za-z0-9_]``).
        url: The image URL ("" when missing).
        server_id: The server it belongs to, or None when unknown.
        animated: True for an animated image.
    """

    __slots__ = ("id", "name", "url", "server_id", "animated")

    _HTML = ("id", "name", "animated", "url", "server_id")

    _WIRE = (
        ("publicId", "id"),
        ("name", "name"),
        ("url", "url"),
        ("serverPublicId", "server_id"),
        ("animated", "animated"),
    )

    id: str
    name: str
    url: str
    server_id: str | None
    animated: bool

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None) -> None:
        """Build from an emoji record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The emoji record.
            server_id: The server, when the record does not carry it.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        data = as_dict(data, "emoji")
        ident = read_id(data, "publicId", "id", "emojiPublicId")
        if ident is None:
            raise ValueError("emoji record has no publicId")
        self._state = state_of(state)
        self.id = ident
        self.name = read_str(data, "name") or ""
        self.url = read_str(data, "url") or read_str(data, "imageUrl") or ""
        self.server_id = read_id(data, "serverPublicId", "serverId") or server_id
        self.animated = read_bool(data, "animated", read_bool(data, "isAnimated"))
        self._split(data)

    @property
    def guild(self) -> Guild | None:
        """The cached server of this emoji, or None."""
        return self._cached_guild(self.server_id)

    def delete(self) -> None:
        """Delete this emoji: ``guild.emojis.delete(self.id)`` (``DELETE /servers/{sid}/emojis/{eid}``).

        Blocks until the service answered; drops the emoji from the server's emoji cache.

        Raises:
            ValueError: The emoji has no server id.
            ServiceAPIError: 403 without MANAGE_SERVER, 404 unknown emoji.
        """
        guild = self.guild
        if guild is not None:
            guild.emojis.delete(self.id)
            return
        if self.server_id is None:
            raise ValueError("emoji has no server id")
        self._state.request(Route(endpoints.DELETE_EMOJI, server_id=self.server_id, emoji_id=self.id))

    def __str__(self) -> str:
        return f":{self.name}:"
