"""``RoleManager``: the roles of one server (``guild.roles``)."""

from __future__ import annotations

import logging
from typing import Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_id, check_name
from ..errors import ServiceAPIError
from ..models._port import StateLike
from ..models.collection import ModelList
from ..models.role import Role, edit_body, role_record
from ..rest.route import Route
from .base import BaseManager

__all__ = ["RoleManager"]

log = logging.getLogger(__name__.partition(".")[0] + ".managers")  # the managers' logger


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

    def fetch_all(self, *, cache: bool = True) -> ModelList[Role]:
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
        return ModelList(roles)

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
        # The body of an edit that gives every field; None here means "leave out".
        body = edit_body(name=name, color=MISSING if color is None else color,
                         hoist=MISSING if hoist is None else hoist,
                         permissions=MISSING if permissions is None else permissions)
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
        body = edit_body(name=name, color=color, hoist=hoist, permissions=permissions)
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
        role = Role(self._state, role_record(data), server_id=self.server_id)
        if cache:
            self.cache[role.id] = role
        return role

    def __repr__(self) -> str:
        return f"<RoleManager server_id={self.server_id!r} cached={len(self.cache)}>"
