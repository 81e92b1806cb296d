"""Permission overwrites of channels and categories: argument checks and the three requests.

Routes: ``GET /channels/{id}/overrides`` -> ``{"overrides": [Override]}``, ``POST
/channels/{id}/overrides {targetId, type, allow, deny}`` (create or replace; 204) and ``DELETE
/channels/{id}/overrides/{overrideId}`` (204). A category's overrides are listed with ``GET
/servers/{sid}/categories/{cid}/overrides``; they are set and deleted through the channel routes
with the category's id. That is an assumption about the service, verified only against the local
emulator: the service documents no route that sets or deletes a category's overwrite.

Every function blocks, is thread-safe and goes through the REST session (queue, buckets,
retries, errors).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._validate import check_id
from ..permissions import Permissions, permissions_value
from ..rest.route import Route
from .member import Member
from .overwrite import OVERWRITE_TYPES, PermissionOverwrite, delete_overwrite, fetch_overwrites
from .role import Role
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State

__all__ = [
    "OverwriteSpec",
    "delete_overwrite",
    "fetch_overwrites",
    "normalize_overwrites",
    "overwrite_body",
    "permissions_value",
    "post_overwrite",
]

#: One checked overwrite: ``(type, target id, allow, deny)``.
OverwriteSpec = tuple[str, str, Permissions, Permissions]


def resolve_target(state: State, server_id: str | None, target: Any, type: str | None = None) -> tuple[str, str]:  # noqa: A002
    """``(type, target id)`` of an override target.

    Args:
        client: The client (its caches tell a role id from a member id).
        server_id: The server of the channel, for the cache lookups.
        target: A :class:`Role`, a :class:`Member` or :class:`User` (a member override), a
            :class:`PermissionOverwrite` (its target), a ``(type, id)`` pair, or an id str.
        type: ``"ROLE"`` or ``"MEMBER"``; needed for an id str that is neither a cached role of
            the server nor a cached member or user.

    Raises:
        TypeError: ``target`` of another type.
        ValueError: A bad ``type``, an empty id, or an id str whose kind cannot be told.
    """
    if type is not None and type not in OVERWRITE_TYPES:
        raise ValueError(f"type must be 'ROLE' or 'MEMBER', got {type!r}")
    kind: str | None
    if isinstance(target, Role):
        kind, ident = "ROLE", target.id
    elif isinstance(target, (Member, User)):
        kind, ident = "MEMBER", target.id
    elif isinstance(target, PermissionOverwrite):
        kind, ident = target.type, target.target_id
    elif isinstance(target, tuple) and len(target) == 2:
        kind, ident = target
        if kind not in OVERWRITE_TYPES:
            raise ValueError(f"an overwrite target pair must start with 'ROLE' or 'MEMBER', got {kind!r}")
        check_id(ident, "overwrite target id")
    elif isinstance(target, str):
        check_id(target, "overwrite target")
        ident, kind = target, type
        if kind is None:
            guild = state.guilds.cache.get(server_id) if server_id is not None else None
            if guild is not None and target in guild.roles.cache:
                kind = "ROLE"
            elif (server_id is not None and state.members.get(server_id, target) is not None) or \
                    target in state.users.cache:
                kind = "MEMBER"
            else:
                raise ValueError(
                    f"cannot tell whether {target!r} is a role or a member: pass the Role or Member, "
                    "a ('ROLE' | 'MEMBER', id) pair, or type="
                )
    else:
        raise TypeError(
            "overwrite target must be a Role, Member, User, PermissionOverwrite, (type, id) pair or id str, "
            f"got {type_name(target)}"
        )
    if type is not None and type != kind:
        raise ValueError(f"target is a {kind} but type={type!r} was given")
    return kind, ident


def type_name(value: Any) -> str:
    """The class name of ``value`` (for error messages)."""
    return type(value).__name__


def overwrite_body(kind: str, target_id: str, allow: Permissions, deny: Permissions) -> dict[str, Any]:
    """The ``POST /channels/{id}/overrides`` body: ``{targetId, type, allow, deny}`` (decimal strings)."""
    return {"targetId": target_id, "type": kind, "allow": str(int(allow)), "deny": str(int(deny))}


def check_overwrite(
    state: State, server_id: str | None, target: Any, allow: Any, deny: Any, type: str | None = None  # noqa: A002
) -> OverwriteSpec:
    """Check one overwrite before any request.

    Raises:
        TypeError, ValueError: A bad target, bitfield, or ``allow`` and ``deny`` sharing a bit.
    """
    kind, ident = resolve_target(state, server_id, target, type)
    allow_p = permissions_value(allow, "allow")
    deny_p = permissions_value(deny, "deny")
    if int(allow_p) & int(deny_p):
        raise ValueError(f"allow and deny share permissions: {Permissions(int(allow_p) & int(deny_p))!r}")
    return kind, ident, allow_p, deny_p


def normalize_overwrites(state: State, server_id: str | None, overwrites: Any) -> list[OverwriteSpec]:
    """Check a whole ``overwrites=`` argument before any request.

    Args:
        overwrites: A mapping from target (see :func:`resolve_target`) to an ``(allow, deny)``
            pair or a mapping with ``allow`` and/or ``deny``; or an iterable of
            :class:`PermissionOverwrite` (copied). None gives ``[]``.

    Returns:
        The checked overwrites, in the given order.

    Raises:
        TypeError, ValueError: The first bad entry (the message names its position).
    """
    if overwrites is None:
        return []
    out: list[OverwriteSpec] = []
    if isinstance(overwrites, Mapping):
        for index, (target, value) in enumerate(overwrites.items()):
            if isinstance(value, Mapping):
                unknown = set(value) - {"allow", "deny"}
                if unknown:
                    raise ValueError(f"overwrites[{index}]: unknown keys {sorted(unknown)}")
                allow, deny = value.get("allow", 0), value.get("deny", 0)
            elif isinstance(value, tuple) and len(value) == 2:
                allow, deny = value
            else:
                raise TypeError(f"overwrites[{index}] must map its target to an (allow, deny) pair or a "
                                f"{{'allow': ..., 'deny': ...}} mapping, got {type_name(value)}")
            try:
                out.append(check_overwrite(state, server_id, target, allow, deny))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"overwrites[{index}]: {exc}") from None
        return out
    if isinstance(overwrites, Iterable) and not isinstance(overwrites, (str, bytes)):
        for index, item in enumerate(overwrites):
            if not isinstance(item, PermissionOverwrite):
                raise TypeError(f"overwrites[{index}] must be a PermissionOverwrite (or pass a mapping), "
                                f"got {type_name(item)}")
            out.append((item.type, item.target_id, item.allow, item.deny))
        return out
    raise TypeError(f"overwrites must be a mapping or a list of PermissionOverwrite, got {type_name(overwrites)}")


def post_overwrite(state: State, scope_id: str, spec: OverwriteSpec) -> None:
    """Create or replace one override (``POST /channels/{scope_id}/overrides``).

    Raises:
        ServiceAPIError: 400 unknown role or non-member target, 403 without MANAGE_CHANNELS, 404.
    """
    state.request(Route(endpoints.SET_OVERRIDE, channel_id=scope_id), json=overwrite_body(*spec))
