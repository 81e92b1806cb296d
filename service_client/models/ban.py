"""``Ban``: a ban of a server."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._base import Model, as_dict, parse_time, read_id, read_str
from ._port import StateLike, state_of
from .user import User

__all__ = ["Ban"]


class Ban(Model):
    """One banned user of a server, from ``GET /servers/{sid}/bans``.

    Wire keys: ``publicId`` (the ban's id; also ``id``), ``reason``,
    ``createdAt``, ``user`` (``{publicId, name, tag, image}``).

    Attributes:
        id: The ban's id, or the user's id when the record has none.
        user: The banned :class:`User` (partial: no status).
        reason: The reason given, or None.
        server_id: The server.
    """

    __slots__ = ("id", "user", "reason", "server_id")

    id: str
    user: User
    reason: str | None
    server_id: str | None

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None,
                 user: User | None = None) -> None:
        """Build from a ban record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The ban record.
            server_id: The server the ban belongs to.
            user: The banned user when already resolved (the cached one).

        Raises:
            TypeError: ``data`` (or its ``user``) is not a dict.
            ValueError: The record has no user id.
        """
        data = as_dict(data, "ban")
        self._state = state_of(state)
        self.user = user if user is not None else User(self._state, as_dict(data.get("user"), "ban user"))
        self.id = read_id(data, "publicId", "id") or self.user.id
        self.reason = read_str(data, "reason")
        self.server_id = read_id(data, "serverPublicId", "serverId") or server_id
        self._split(data)

    @property
    def created_at(self) -> datetime | None:
        """When the ban was made (UTC), or None."""
        return parse_time(self._extra_get("createdAt"))

    _REPR = ("id", "user")
    _HTML = ("id", "user", "reason", "created_at")
