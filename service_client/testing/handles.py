"""The handles of a test world's users, servers, channels and roles.

:class:`~service_client.testing.world.BotWorld` makes them; import them from
``service_client.pytest_plugin`` (or ``service_client.testing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._secret import Secret
from ..permissions import Permissions, parse_permissions

if TYPE_CHECKING:  # pragma: no cover - annotations only: the plugin loads without the emulator extra
    from ..emulator import CreatedUser, UserRecord

__all__ = ["WorldObject", "WorldRole", "WorldUser"]


class WorldUser:
    """A user of a :class:`~service_client.testing.world.BotWorld`; its token is held as a secret.

    Attributes:
        id: The user's public id.
        name: The user's name.
        bot: True for the bot account.
        record: The :class:`~service_client.emulator.UserRecord` the emulator returned when the
            user was made (a dict; its ``status`` is the one of that moment).
    """

    __slots__ = ("id", "name", "bot", "record", "_token")

    def __init__(self, created: CreatedUser) -> None:
        record: UserRecord = created["user"].copy()
        self.id: str = record["publicId"]
        self.name: str = record["name"]
        self.bot: bool = bool(record.get("isBot"))
        self.record = record
        self._token = Secret(created["token"])

    @property
    def token(self) -> Secret:
        """The user's token, a :class:`~service_client._secret.Secret` (``token.get()`` gives the text)."""
        return self._token

    @property
    def mention(self) -> str:
        """The mention text ``<@id>``."""
        return f"<@{self.id}>"

    def __repr__(self) -> str:
        return f"<WorldUser id={self.id!r} name={self.name!r} bot={self.bot!r}>"


class WorldObject:
    """A server, channel or role of a :class:`~service_client.testing.world.BotWorld`.

    Attributes:
        id: Its public id.
        name: Its name.
        kind: ``"server"``, ``"channel"`` or ``"role"``.
        record: The record the emulator returned when it was made (a dict).
    """

    __slots__ = ("id", "name", "kind", "record")

    def __init__(self, kind: str, record: Mapping[str, Any]) -> None:
        self.kind = kind
        self.record = dict(record)
        self.id: str = self.record["publicId"]
        self.name: str = self.record["name"]

    def __repr__(self) -> str:
        return f"<WorldObject kind={self.kind!r} id={self.id!r} name={self.name!r}>"


class WorldRole(WorldObject):
    """A role of a :class:`~service_client.testing.world.BotWorld`: the seeded ones, those made
    with :meth:`~service_client.testing.world.BotWorld.create_role`, and those the bot or the
    emulator's control plane made, once the world has looked them up.

    Attributes:
        id, name, kind, record: As :class:`WorldObject` (``kind`` is ``"role"``).
        permissions: The role's :class:`~service_client.Permissions` when it was made (or
            looked up).
        color: Its colour, ``"#rrggbb"``, or None.
        position: Its position in the server's role order (``@everyone`` is 0).
    """

    __slots__ = ("permissions", "color", "position")

    def __init__(self, record: Mapping[str, Any]) -> None:
        super().__init__("role", record)
        self.permissions: Permissions = parse_permissions(self.record.get("permissions"))
        color = self.record.get("color")
        self.color: str | None = color if isinstance(color, str) else None
        position = self.record.get("position")
        self.position: int = position if isinstance(position, int) else 0

    @property
    def mention(self) -> str:
        """The mention text ``<@&id>``."""
        return f"<@&{self.id}>"

    def __repr__(self) -> str:
        return f"<WorldRole id={self.id!r} name={self.name!r} permissions={int(self.permissions)}>"
