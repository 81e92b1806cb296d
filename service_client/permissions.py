"""``Permissions``: the service's permission bitfield, its named bits and its wire form.

A member's permissions are the OR of its roles' bitfields (all of them for the
server owner or with ``ADMINISTRATOR``); channel overwrites are not applied.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ALL", "DEFAULT", "Permissions", "parse_permissions", "permissions_value"]


class Permissions(enum.IntFlag):
    """Named permission bits of the service, an :class:`enum.IntFlag`.

    Wire form: a decimal string (``"552448"``); :func:`parse_permissions`
    reads it (numbers accepted too). Bits 21 to 30 are unused; unknown bits
    read from the wire are kept. Class attributes ``Permissions.DEFAULT``
    (552448) and ``Permissions.ALL`` (2149580799) are set after the class, so
    iterating the enum yields only the single-bit names.
    """

    MANAGE_SERVER = 1 << 0
    MANAGE_ROLES = 1 << 1
    MANAGE_CHANNELS = 1 << 2
    VIEW_AUDIT_LOG = 1 << 3
    MANAGE_INVITES = 1 << 4
    VIEW_MEMBERS = 1 << 5
    KICK_MEMBERS = 1 << 6
    BAN_MEMBERS = 1 << 7
    MANAGE_MESSAGES = 1 << 8
    VIEW_CHANNELS = 1 << 9
    SEND_MESSAGES = 1 << 10
    UPLOAD_FILES = 1 << 11
    MENTION_EVERYONE = 1 << 12
    CONNECT = 1 << 13
    SPEAK = 1 << 14
    MUTE_MEMBERS = 1 << 15
    DEAFEN_MEMBERS = 1 << 16
    MOVE_MEMBERS = 1 << 17
    PIN_MESSAGE = 1 << 18
    ADD_REACTION = 1 << 19
    MANAGE_APPLICATIONS = 1 << 20
    ADMINISTRATOR = 1 << 31

    DEFAULT: Permissions  # set below
    ALL: Permissions  # set below

    def to_wire(self) -> str:
        """The decimal-string wire form (``"552448"``): bitfields travel as strings."""
        return str(int(self))

    @classmethod
    def resolve(cls, value: Any) -> Permissions:
        """One permission from a name (``"MANAGE_INVITES"``, case-insensitive) or a flag/int.

        Args:
            value: A permission name, a :class:`Permissions` value or a
                non-negative int bitfield.

        Returns:
            The flag(s).

        Raises:
            ValueError: An unknown name or a negative int.
            TypeError: Any other type.
        """
        if isinstance(value, Permissions):
            return value
        if isinstance(value, str):
            member = cls.__members__.get(value.strip().upper())
            if member is None:
                raise ValueError(f"unknown permission name {value!r}")
            return member
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"permission bitfield must be >= 0, got {value}")
            return cls(value)
        raise TypeError(
            f"permission must be a name, Permissions or int, got {type(value).__name__}"
        )


#: The default permission set (552448): VIEW_CHANNELS | SEND_MESSAGES | UPLOAD_FILES | CONNECT | SPEAK | ADD_REACTION.
DEFAULT = Permissions(552448)
#: The OR of every flag: what the server owner and ``ADMINISTRATOR`` holders have.
ALL = Permissions(2149580799)
Permissions.DEFAULT = DEFAULT
Permissions.ALL = ALL


def parse_permissions(value: Any) -> Permissions:
    """The wire bitfield (of a role, an overwrite...) as :class:`Permissions`.

    Args:
        value: A decimal string (``"552448"``), an int, or None.

    Returns:
        The flags; ``Permissions(0)`` for None, negatives or anything unparseable.
    """
    if isinstance(value, bool):
        return Permissions(0)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            return Permissions(0)
    if isinstance(value, int) and value >= 0:
        return Permissions(value)
    return Permissions(0)


def permissions_value(value: Any, name: str) -> Permissions:
    """A permission set from a :class:`Permissions`, an int bitfield, a permission name, or an
    iterable of names and flags (OR'd together).

    Raises:
        TypeError: Another type (the message names ``name``).
        ValueError: An unknown name, a negative int, or bits that are no permission.
    """
    if isinstance(value, (str, int, Permissions)) and not isinstance(value, bool):
        try:
            result = Permissions.resolve(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}: {exc}") from None
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        total = 0
        for item in value:
            total |= int(permissions_value(item, name))
        result = Permissions(total)
    else:
        raise TypeError(f"{name} must be Permissions, an int, a permission name or a list of them, "
                        f"got {type(value).__name__}")
    if int(result) & ~int(ALL):
        raise ValueError(f"{name} has bits that are no permission: {int(result) & ~int(ALL)}")
    return result
