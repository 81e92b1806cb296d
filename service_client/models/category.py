"""``Category``: a group of channels in a server (protocol.md 3.3, C6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._base import Model, as_dict, read_bool, read_id, read_int, read_str
from .channel import Channel

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

__all__ = ["Category"]


class Category(Model):
    """A category of the categories listing.

    Wire keys: ``publicId`` (also ``id``), ``name``, ``position``,
    ``isPrivate``, ``serverPublicId`` (optional), ``channels`` (nested
    Channel records, which carry no server id: it is set from ``server_id``).

    Attributes:
        id, name, position, is_private, server_id: As above.
        channels: The nested channels as :class:`Channel` objects, in order.
    """

    __slots__ = ("id", "name", "position", "is_private", "server_id", "channels")

    id: str
    name: str
    position: int
    is_private: bool
    server_id: str | None
    channels: list[Channel]

    def __init__(
        self, client: Client, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a category record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record or a nested channel has no id.
        """
        data = as_dict(data, "category")
        ident = read_id(data, "publicId", "id", "categoryId")
        if ident is None:
            raise ValueError("category record has no publicId")
        self._client = client
        self.id = ident
        self.name = read_str(data, "name") or ""
        self.position = read_int(data, "position", 0)
        self.is_private = read_bool(data, "isPrivate")
        self.server_id = server_id or read_id(data, "serverPublicId", "serverId")
        nested = data.get("channels")
        self.channels = [
            Channel(client, ch, server_id=self.server_id)
            for ch in (nested if isinstance(nested, list) else [])
        ]
        for ch in self.channels:
            if ch.category_id is None:
                ch.category_id = ident
        self._split(data)
