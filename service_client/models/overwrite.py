"""``PermissionOverwrite``: one permission override of a channel or category."""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._validate import check_id
from ..permissions import ALL, Permissions, parse_permissions
from ..rest.route import Route
from ._base import Model, as_dict, read_id, read_str
from ._port import StateLike, state_of

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State

__all__ = ["OVERWRITE_TYPES", "PermissionOverwrite", "apply_overwrites", "delete_overwrite", "fetch_overwrites"]

#: The two kinds of override target: a role, or one member (by user id).
OVERWRITE_TYPES = ("ROLE", "MEMBER")

_intern = sys.intern


class PermissionOverwrite(Model):
    """A permission override of one role or member on a channel or category.

    On the service, overrides change what a member may do in one channel:
    the server permissions are taken, then ``@everyone``'s override, then
    the member's role overrides together, then the member's own override,
    each removing its ``deny`` bits and adding its ``allow`` bits (owners and
    ``ADMINISTRATOR`` holders are never restricted). A private channel starts
    without ``VIEW_CHANNELS``, so only an override that allows it shows the
    channel. The service applies overrides to ``VIEW_CHANNELS`` and
    ``SEND_MESSAGES``; :attr:`Member.permissions` stays the server-wide value.

    Wire keys (an Override record): ``id`` (also ``publicId``), ``type``
    (``"ROLE"`` or ``"MEMBER"``), ``targetId``, ``targetName``, ``allow``
    and ``deny`` (decimal strings).

    Attributes:
        id: The override's id (used by ``delete_overwrite``).
        type: ``"ROLE"`` or ``"MEMBER"``.
        target_id: The role id, or the member's user id.
        target_name: The role's or user's name, or None.
        allow: The :class:`Permissions` granted.
        deny: The :class:`Permissions` withheld.
        scope_id: The channel or category the override belongs to (None when unknown).
    """

    __slots__ = ("id", "type", "target_id", "target_name", "allow", "deny", "scope_id")

    _WIRE = (
        ("id", "id"),
        ("type", "type"),
        ("targetId", "target_id"),
        ("targetName", "target_name"),
    )

    id: str
    type: str
    target_id: str
    target_name: str | None
    allow: Permissions
    deny: Permissions
    scope_id: str | None

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, scope_id: str | None = None) -> None:
        """Build from an Override record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The record.
            scope_id: The channel or category id it was listed for.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id or no target id.
        """
        self._state = state_of(state)
        data = as_dict(data, "override")
        ident = read_id(data, "id", "publicId")
        target = read_id(data, "targetId", "targetPublicId")
        if ident is None or target is None:
            raise ValueError("override record needs id and targetId")
        self.id = ident
        kind = read_str(data, "type") or "ROLE"
        self.type = _intern(kind.upper()) if len(kind) <= 16 else kind
        self.target_id = target
        self.target_name = read_str(data, "targetName")
        self.allow = parse_permissions(data.get("allow"))
        self.deny = parse_permissions(data.get("deny"))
        self.scope_id = scope_id
        self._split(data)

    _REPR = ("id", "type", "target_id", "target_name")
    _HTML = ("id", "type", "target_id", "target_name", "allow", "deny")

    def __repr__(self) -> str:
        return (
            f"<PermissionOverwrite id={self.id!r} type={self.type!r} target_id={self.target_id!r} "
            f"target_name={self.target_name!r} allow={int(self.allow)} deny={int(self.deny)}>"
        )

    def delete(self) -> None:
        """Delete this override (``DELETE /channels/{scope_id}/overrides/{id}``; MANAGE_CHANNELS).

        Blocks until the service answers; thread-safe.

        Raises:
            ValueError: The override was built without its channel or category id.
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown override or scope.
        """
        if self.scope_id is None:
            raise ValueError("this override does not know its channel; use channel.delete_overwrite(id)")
        delete_overwrite(self._state, self.scope_id, self.id)


def _list_route(scope_id: str, category_of: str | None) -> Route:
    if category_of is not None:
        return Route(endpoints.LIST_CATEGORY_OVERRIDES,
                     server_id=category_of, category_id=scope_id)
    return Route(endpoints.LIST_CHANNEL_OVERRIDES, channel_id=scope_id)


def fetch_overwrites(state: State, scope_id: str, *, category_of: str | None = None) -> list[PermissionOverwrite]:
    """List the overrides of a channel, or of a category when ``category_of`` (its server id) is given.

    Raises:
        ServiceAPIError: 403 for a caller who neither holds MANAGE_CHANNELS nor may view it, 404.
    """
    data = state.request(_list_route(scope_id, category_of))
    items = data.get("overrides") if isinstance(data, dict) else data
    out: list[PermissionOverwrite] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            try:
                out.append(PermissionOverwrite(state, item, scope_id=scope_id))
            except ValueError:
                continue
    return out


def delete_overwrite(state: State, scope_id: str, overwrite: Any) -> None:
    """Delete one override (``DELETE /channels/{scope_id}/overrides/{id}``).

    Args:
        overwrite: The override id, or a :class:`PermissionOverwrite`.

    Raises:
        TypeError, ValueError: Not an id or override (before any request).
        ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown override.
    """
    ident = overwrite.id if isinstance(overwrite, PermissionOverwrite) else check_id(overwrite, "overwrite id")
    state.request(Route(endpoints.DELETE_OVERRIDE,
                          channel_id=scope_id, override_id=ident))


def apply_overwrites(
    base: Permissions,
    overwrites: Iterable[PermissionOverwrite],
    *,
    member_id: str,
    role_ids: Collection[str],
    everyone_id: str | None,
    private: bool,
) -> Permissions:
    """A member's permissions in one channel, from its server permissions and the channel's
    overwrites, as the service computes them.

    ``ALL`` (the owner, or ``ADMINISTRATOR``) is never restricted. Otherwise, in order: a
    private channel drops ``VIEW_CHANNELS``; the ``@everyone`` role's overwrite applies;
    the overwrites of the member's other roles apply together (every ``deny`` removed, then
    every ``allow`` added); the member's own overwrite applies last. Pure.

    Args:
        base: The member's server permissions (:attr:`Member.permissions`).
        overwrites: The channel's overwrites.
        member_id: The member's user id.
        role_ids: The ids of the member's roles.
        everyone_id: The id of the server's ``@everyone`` role, or None when unknown.
        private: Whether the channel is private.

    Returns:
        The member's :class:`Permissions` in the channel.
    """
    if base == ALL or base & Permissions.ADMINISTRATOR:
        return ALL
    perms = int(base)
    if private:
        perms &= ~int(Permissions.VIEW_CHANNELS)
    own: PermissionOverwrite | None = None
    everyone: PermissionOverwrite | None = None
    role_allow = role_deny = 0
    for overwrite in overwrites:
        if overwrite.type == "MEMBER":
            if overwrite.target_id == member_id:
                own = overwrite
        elif overwrite.target_id == everyone_id:
            everyone = overwrite
        elif overwrite.target_id in role_ids:
            role_allow |= int(overwrite.allow)
            role_deny |= int(overwrite.deny)
    if everyone is not None:
        perms = (perms & ~int(everyone.deny)) | int(everyone.allow)
    perms = (perms & ~role_deny) | role_allow
    if own is not None:
        perms = (perms & ~int(own.deny)) | int(own.allow)
    return Permissions(perms)
