"""``Role``: a server role; ``RoleManager``: the roles of one server (``guild.roles``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_id, check_name
from ..errors import ServiceAPIError
from ..permissions import Permissions, parse_permissions, permissions_value
from ..rest.route import Route
from ._base import Model, as_dict, read_bool, read_id, read_int, read_str
from ._manager import BaseManager
from ._port import StateLike, state_of
from .embed import parse_color

if TYPE_CHECKING:  # pragma: no cover
    from .guild import Guild

__all__ = ["Role", "RoleManager"]


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
        """Change this role; see :meth:`RoleManager.edit` (same keywords and errors)."""
        return self._manager().edit(self.id, **changes)

    def delete(self) -> None:
        """Delete this role; see :meth:`RoleManager.delete`."""
        self._manager().delete(self.id)

    def _manager(self) -> RoleManager:
        guild = self.guild
        if guild is not None:
            return guild.roles
        if self.server_id is None:
            raise ValueError("role has no server id")
        return RoleManager(self._state, self.server_id)


log = logging.getLogger(__name__.partition(".")[0] + ".managers")  # the managers' logger

def _permissions_wire(value: Any) -> str:
    """The decimal string of a permission set; bits that are no permission raise ValueError."""
    return str(int(permissions_value(value, "permissions")))


def _color_wire(value: Any) -> str | None:
    if value is None:
        return None
    return f"#{parse_color(value):06x}"


class RoleManager(BaseManager[str, Role]):
    """The roles of one server, keyed by role id (``guild.roles``).

    Empty at ready; filled by :meth:`fetch_all` (upsert, never purge) and by
    ``server:role_*`` events, which also keep cached members' permissions
    true (members resolve their roles here first). Thread-safe.

    Attributes:
        server_id: The server these roles belong to.
    """

    __slots__ = ("server_id",)
    model = Role

    def __init__(self, state: StateLike, server_id: str) -> None:
        """Create the empty role cache of ``server_id``."""
        super().__init__(state)
        self.server_id = server_id

    def fetch_all(self, *, cache: bool = True) -> list[Role]:
        """Fetch every role of the server (``GET /servers/{sid}/roles``).

        Upserts each role (the cached object is replaced); never purges: a role missing from
        the answer stays cached until a ``server:role_delete`` event or :meth:`delete`. A
        malformed record (not an object, no id) is skipped and logged at DEBUG; the others
        are kept.

        Returns:
            The roles in the service's order; ``[]`` when none.

        Raises:
            TypeError: ``cache`` is not a bool.
            ServiceAPIError: 403 not a member, 404 unknown server.
        """
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_ROLES, server_id=self.server_id))
        items = data.get("roles") if isinstance(data, dict) else data
        roles: list[Role] = []
        for index, item in enumerate(items if isinstance(items, list) else ()):
            try:
                roles.append(Role(self._state, item, server_id=self.server_id))
            except (TypeError, ValueError) as exc:
                log.debug("skipped role record %d of server %s: %s", index, self.server_id, exc)
        if cache:
            self.cache.update((role.id, role) for role in roles)
        return roles

    def fetch(self, role_id: str, *, cache: bool = True) -> Role:
        """Fetch one role: there is no single-role route, so this lists the roles (one request).

        With ``cache`` every listed role is upserted, as :meth:`fetch_all`.

        Returns:
            The role.

        Raises:
            TypeError, ValueError: ``role_id`` is not a non-empty str (before any request).
            ServiceAPIError: The listing failed, or status 404 when the role
                is not in it (raised by the client, not the service).
        """
        check_id(role_id, "role_id")
        for role in self.fetch_all(cache=cache):
            if role.id == role_id:
                return role
        path = Route(endpoints.LIST_ROLES, server_id=self.server_id).display_path
        raise ServiceAPIError(404, path, "", {"error": "role not found"}, message=f"API Error 404: role {role_id} not found")

    def create(
        self,
        name: str,
        *,
        color: str | int | None = None,
        hoist: bool | None = None,
        permissions: Any = None,
        cache: bool = True,
    ) -> Role:
        """Create a role (``POST /servers/{sid}/roles``; needs MANAGE_ROLES). Blocks.

        Args:
            name: The role name (not empty or only whitespace).
            color: ``"#rrggbb"`` or an int (omitted when None).
            hoist: Show separately (omitted when None).
            permissions: A :class:`Permissions`, int, name, or list of names/flags
                (sent as a decimal string; omitted when None). Bits that are no
                permission (21 to 30, or above 31) are refused.
            cache: Add the role to :attr:`cache`; False writes nothing.

        Returns:
            The created :class:`Role`.

        Raises:
            TypeError, ValueError: Bad arguments (before any request).
            ServiceAPIError: 403 without MANAGE_ROLES.
        """
        check_name(name, "name")
        check_cache_flag(cache)
        body: dict[str, Any] = {"name": name}
        if color is not None:
            body["color"] = _color_wire(color)
        if hoist is not None:
            if not isinstance(hoist, bool):
                raise TypeError("hoist must be a bool")
            body["hoist"] = hoist
        if permissions is not None:
            body["permissions"] = _permissions_wire(permissions)
        data = self._state.request(
            Route(endpoints.CREATE_ROLE, server_id=self.server_id), json=body
        )
        return self._store_answer(data, cache)

    def edit(
        self,
        role_id: str,
        *,
        name: str = MISSING,
        color: str | int | None = MISSING,
        hoist: bool = MISSING,
        permissions: Any = MISSING,
        cache: bool = True,
    ) -> Role:
        """Change a role (``PATCH /servers/{sid}/roles/{rid}``; needs MANAGE_ROLES). Blocks.

        Only the given keywords are sent; ``color=None`` clears the colour. ``name`` and
        ``permissions`` are checked as in :meth:`create`.

        Args:
            role_id: The role's id.
            name, color, hoist, permissions: The changes.
            cache: Put the updated role in :attr:`cache` (replacing the cached object);
                False writes nothing.

        Returns:
            The updated :class:`Role`, a new object.

        Raises:
            TypeError, ValueError: Bad arguments or nothing to change (before any request).
            ServiceAPIError: 403 without MANAGE_ROLES, 404 unknown role.
        """
        check_id(role_id, "role_id")
        check_cache_flag(cache)
        body: dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = check_name(name, "name")
        if color is not MISSING:
            body["color"] = _color_wire(color)
        if hoist is not MISSING:
            if not isinstance(hoist, bool):
                raise TypeError("hoist must be a bool")
            body["hoist"] = hoist
        if permissions is not MISSING:
            body["permissions"] = _permissions_wire(permissions)
        if not body:
            raise ValueError("edit needs at least one of name, color, hoist, permissions")
        data = self._state.request(
            Route(endpoints.EDIT_ROLE, server_id=self.server_id, role_id=role_id),
            json=body,
        )
        return self._store_answer(data, cache)

    def delete(self, role_id: str) -> None:
        """Delete a role (``DELETE /servers/{sid}/roles/{rid}``) and drop it from the cache.

        Raises:
            TypeError, ValueError: ``role_id`` is not a non-empty str.
            ServiceAPIError: 403 without MANAGE_ROLES, 404 unknown role.
        """
        check_id(role_id, "role_id")
        self._state.request(
            Route(endpoints.DELETE_ROLE, server_id=self.server_id, role_id=role_id)
        )
        self.cache.pop(role_id, None)

    @property
    def everyone(self) -> Role | None:
        """The cached ``@everyone`` role of this server (held by every member), or None.

        Found by name among the cached roles, so :meth:`fetch_all` first. Its overwrite on a
        channel applies to every member (``channel.set_overwrite(guild.roles.everyone, ...)``).
        """
        return self.cache.find(lambda role: role.name == "@everyone")

    def _store_answer(self, data: Any, cache: bool) -> Role:
        if isinstance(data, dict) and isinstance(data.get("role"), dict):
            data = data["role"]
        role = Role(self._state, data, server_id=self.server_id)
        if cache:
            self.cache[role.id] = role
        return role

    def __repr__(self) -> str:
        return f"<RoleManager server_id={self.server_id!r} cached={len(self.cache)}>"
