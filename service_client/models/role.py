"""``Role``: a server role, cached in ``guild.roles``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..permissions import Permissions, parse_permissions
from ._base import Model, as_dict, read_bool, read_id, read_int, read_str

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..managers.roles import RoleManager
    from .guild import Guild

__all__ = ["Role"]


class Role(Model):
    """A role of one server.

    Wire keys: ``publicId`` (also ``id``), ``name``, ``color``
    (``"#rrggbb"`` or null), ``hoist`` (the misspelling ``hoise`` accepted),
    ``serverPublicId`` (also ``serverId``), ``position`` (default 0),
    ``permissions`` (decimal string or number, default 0).

    Attributes:
        id, name, color, hoist, server_id, position: As above.
        permissions: The role's :class:`Permissions`.
    """

    __slots__ = ("id", "name", "color", "hoist", "server_id", "position", "permissions")

    _HTML = ("id", "name", "position", "color", "hoist", "permissions")

    id: str
    name: str
    color: str | None
    hoist: bool
    server_id: str | None
    position: int
    permissions: Permissions

    def __init__(
        self, client: Client, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a role record.

        Args:
            client: The owning client.
            data: The role record.
            server_id: The server, when the record does not carry it.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._client = client
        self._parse(as_dict(data, "role"), server_id)

    def _parse(self, data: dict[str, Any], server_id: str | None = None) -> None:
        ident = read_id(data, "publicId", "id", "rolePublicId")
        if ident is None:
            raise ValueError("role record has no publicId")
        self.id = ident
        self.name = read_str(data, "name") or ""
        self.color = read_str(data, "color")
        self.hoist = read_bool(data, "hoist", read_bool(data, "hoise"))
        self.server_id = read_id(data, "serverPublicId", "serverId") or server_id
        self.position = read_int(data, "position", 0)
        self.permissions = parse_permissions(data.get("permissions"))
        self._split(data)

    def _update(self, patch: Mapping[str, Any]) -> None:
        merged = dict(self.raw)
        merged.update(patch)
        self._parse(merged, self.server_id)

    @property
    def guild(self) -> Guild | None:
        """The cached server of this role, or None."""
        return self._cached_guild(self.server_id)

    @property
    def mention(self) -> str:
        """The mention text ``<@&id>``."""
        return f"<@&{self.id}>"

    def edit(self, **changes: Any) -> Role:
        """Change this role; see :meth:`RoleManager.edit` (same keywords and errors)."""
        return self._manager().edit(self.id, **changes)

    def delete(self) -> None:
        """Delete this role; see :meth:`RoleManager.delete`."""
        self._manager().delete(self.id)

    def _manager(self) -> RoleManager:
        from ..managers.roles import RoleManager  # noqa: F811 - runtime import (cycle)

        guild = self.guild
        if guild is not None:
            return guild.roles
        if self.server_id is None:
            raise ValueError("role has no server id")
        return RoleManager(self._client, self.server_id)
