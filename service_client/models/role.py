"""``Role``: a server role, and the wire form of its editable fields (shared with the
server's ``RoleManager``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_name
from ..permissions import Permissions, parse_permissions, permissions_value
from ..rest.route import Route
from ._base import Model, as_dict, read_bool, read_id, read_int, read_str
from ._port import StateLike, state_of
from .embed import parse_color

if TYPE_CHECKING:  # pragma: no cover
    from .guild import Guild

__all__ = ["Role", "color_wire", "edit_body", "permissions_wire", "role_record"]


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
        self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a role record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The role record.
            server_id: The server, when the record does not carry it.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._state = state_of(state)
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
        """Change this role; see :meth:`RoleManager.edit` (same keywords and errors).

        Through the cached server's ``roles`` when its server is cached (which then caches
        the answer); else the request alone.

        Raises:
            ValueError: The role has no server id (and its server is not cached).
        """
        guild = self.guild
        if guild is not None:
            return guild.roles.edit(self.id, **changes)
        server_id = self._server_id()
        check_cache_flag(changes.pop("cache", True))
        body = edit_body(**changes)
        data = self._state.request(Route(endpoints.EDIT_ROLE, server_id=server_id, role_id=self.id), json=body)
        return Role(self._state, role_record(data), server_id=server_id)

    def delete(self) -> None:
        """Delete this role; see :meth:`RoleManager.delete`.

        Raises:
            ValueError: The role has no server id (and its server is not cached).
        """
        guild = self.guild
        if guild is not None:
            guild.roles.delete(self.id)
            return
        self._state.request(Route(endpoints.DELETE_ROLE, server_id=self._server_id(), role_id=self.id))

    def _server_id(self) -> str:
        if self.server_id is None:
            raise ValueError("role has no server id")
        return self.server_id


def permissions_wire(value: Any) -> str:
    """The decimal string of a permission set; bits that are no permission raise ValueError."""
    return str(int(permissions_value(value, "permissions")))


def color_wire(value: Any) -> str | None:
    """The wire colour ``"#rrggbb"`` of ``value`` (``"#rrggbb"`` or an int); None stays None.

    Raises:
        TypeError, ValueError: Not a colour.
    """
    if value is None:
        return None
    return f"#{parse_color(value):06x}"


def edit_body(
    *,
    name: str = MISSING,
    color: str | int | None = MISSING,
    hoist: bool = MISSING,
    permissions: Any = MISSING,
) -> dict[str, Any]:
    """The JSON body of a role edit: only the given fields, in wire form.

    Args:
        name: The new name (not empty or only whitespace).
        color: ``"#rrggbb"``, an int, or None to clear the colour.
        hoist: Show separately.
        permissions: A :class:`Permissions`, int, name, or list of names/flags.

    Returns:
        The body, e.g. ``{"name": "mods", "color": "#ff0000"}``.

    Raises:
        TypeError, ValueError: A bad value, or nothing to change.
    """
    body: dict[str, Any] = {}
    if name is not MISSING:
        body["name"] = check_name(name, "name")
    if color is not MISSING:
        body["color"] = color_wire(color)
    if hoist is not MISSING:
        if not isinstance(hoist, bool):
            raise TypeError("hoist must be a bool")
        body["hoist"] = hoist
    if permissions is not MISSING:
        body["permissions"] = permissions_wire(permissions)
    if not body:
        raise ValueError("edit needs at least one of name, color, hoist, permissions")
    return body


def role_record(data: Any) -> Any:
    """The role record of a role answer: ``data["role"]`` when the answer wraps it, else ``data``."""
    if isinstance(data, dict) and isinstance(data.get("role"), dict):
        return data["role"]
    return data
