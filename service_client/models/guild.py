"""``Guild``: a server of the service (protocol.md 3.2; python-api.md 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._base import Model, as_dict, read_id, read_int, read_str

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..managers.invites import InviteManager
    from ..managers.roles import RoleManager
    from .channel import Channel
    from .collection import Collection
    from .member import Member

__all__ = ["Guild"]


class Guild(Model):
    """A server (a "guild" in the client).

    Wire keys (protocol 3.2): ``publicId`` (also ``id``, ``serverPublicId``),
    ``name``, ``imageUrl`` -> ``icon``, ``memberCount`` (0 if absent, never
    updated by events), ``ownerId`` (else the ``members`` entry with
    ``isOwner: true``).

    Attributes:
        id: The server's public id.
        name: Its name.
        icon: Icon URL or None.
        owner_id: The owner's user id, or None when unknown.
        member_count: Members at fetch time.
        roles: This server's :class:`RoleManager` (empty until fetched or an
            event fills it; kept across re-fetches of the server).
        invites: This server's :class:`InviteManager`.
    """

    __slots__ = ("id", "name", "icon", "owner_id", "member_count", "roles", "invites")

    id: str
    name: str
    icon: str | None
    owner_id: str | None
    member_count: int
    roles: RoleManager
    invites: InviteManager

    def __init__(self, client: Client, data: Mapping[str, Any]) -> None:
        """Build from a server record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        from ..managers.invites import InviteManager
        from ..managers.roles import RoleManager

        self._client = client
        self._parse(as_dict(data, "server"))
        self.roles = RoleManager(client, self.id)
        self.invites = InviteManager(client, self.id)

    def _parse(self, data: dict[str, Any]) -> None:
        ident = read_id(data, "publicId", "id", "serverPublicId", "serverId")
        if ident is None:
            raise ValueError("server record has no publicId")
        self.id = ident
        self.name = read_str(data, "name") or ""
        icon = data.get("imageUrl", data.get("icon"))
        self.icon = icon if isinstance(icon, str) else None
        self.member_count = read_int(data, "memberCount", 0)
        owner = read_id(data, "ownerId", "ownerPublicId")
        if owner is None:
            members = data.get("members")
            if isinstance(members, list):
                for entry in members:
                    if isinstance(entry, dict) and entry.get("isOwner") is True:
                        owner = read_id(entry, "userId", "publicId")
                        break
        self.owner_id = owner
        self._split(data)

    def _update(self, patch: Mapping[str, Any]) -> None:
        """Apply ``server:updated``: ``name`` and ``imageUrl`` when present (null clears)."""
        merged = dict(self.raw)
        for key in ("name", "imageUrl", "memberCount", "ownerId"):
            if key in patch:
                merged[key] = patch[key]
        self._parse(merged)

    def _adopt(self, previous: Guild) -> None:
        """Keep the role and invite caches of the entry this one replaces."""
        self.roles = previous.roles
        self.invites = previous.invites

    @property
    def channels(self) -> Collection[str, Channel]:
        """The cached channels of this server: ``client.channels.cache`` filtered by ``server_id``.

        Empty until :meth:`fetch_channels` (or ``channels.fetch``) has run.
        """
        sid = self.id
        return self._client.channels.cache.filter(lambda c: c.server_id == sid)

    @property
    def members(self) -> list[Member]:
        """The cached members of this server (from ``client.members.cache``)."""
        return self._client.members.for_guild(self.id)

    @property
    def me(self) -> Member | None:
        """The bot's own cached member in this server, or None."""
        user = self._client.user
        if user is None:
            return None
        return self._client.members.get(self.id, user.id)

    def fetch_channels(self, *, cache: bool = True) -> list[Channel]:
        """Fetch this server's channels: ``client.channels.fetch_for_guild(self.id)``.

        Spec: Resources, ``fetchChannels()``. See
        :meth:`ChannelManager.fetch_for_guild` for the result and errors.
        """
        return self._client.channels.fetch_for_guild(self.id, cache=cache)

    def fetch_member(self, user_id: str, *, cache: bool = True) -> Member:
        """``client.members.fetch(self.id, user_id)``."""
        return self._client.members.fetch(self.id, user_id, cache=cache)
