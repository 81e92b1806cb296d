"""``Invite``: an invite resolved by code (``client.fetch_invite``) or listed by its server."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import endpoints
from ..rest.route import Route
from ._base import Model, as_dict, parse_time, read_id, read_str
from ._port import StateLike, state_of
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from .guild import Guild

__all__ = ["Invite"]


class Invite(Model):
    """An invite, identified by its ``code``.

    Two record shapes: the resolved invite of ``GET /invites/{code}``
    with the server under ``server`` (or ``guild``), and the server invite of
    the list/create routes with ``inviter`` and ``channel``. ``uses`` is read
    from the top level, else ``server.uses``, else None.

    Attributes:
        code: The invite code (its identity).
        guild: A partial :class:`Guild` (``id``, ``name``, ``icon``,
            ``member_count``) from the record, the cached guild when known, or None.
        uses: Times used, or None when the record does not say.
        max_uses: Use limit, or None.
        inviter: The creating :class:`User`, or None.
        channel_id: The invite's channel, or None.
    """

    __slots__ = ("code", "guild", "uses", "max_uses", "inviter", "channel_id")

    code: str
    guild: Guild | None
    uses: int | None
    max_uses: int | None
    inviter: User | None
    channel_id: str | None

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, guild: Guild | None = None
    ) -> None:
        """Build from an invite record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The invite record.
            guild: The server when the record does not carry it (server invites).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no code.
        """
        data = as_dict(data, "invite")
        code = read_str(data, "code")
        if not code:
            raise ValueError("invite record has no code")
        self._state = state_of(state)
        self.code = code
        server = data.get("server")
        if not isinstance(server, dict):
            server = data.get("guild")
        if guild is None and isinstance(server, dict):
            try:
                guild = self._state.build_guild(server)
            except (TypeError, ValueError):
                guild = None
        self.guild = guild
        uses = data.get("uses")
        if not _is_int(uses) and isinstance(server, dict):
            uses = server.get("uses")
        self.uses = uses if _is_int(uses) else None
        max_uses = data.get("maxUses")
        self.max_uses = max_uses if _is_int(max_uses) else None
        inviter = data.get("inviter")
        try:
            self.inviter = User(self._state, inviter) if isinstance(inviter, dict) else None
        except ValueError:
            self.inviter = None
        channel = data.get("channel")
        channel_id = read_id(data, "channelPublicId", "channelId")
        if channel_id is None and isinstance(channel, dict):
            channel_id = read_id(channel, "publicId", "id")
        if channel_id is None and isinstance(server, dict):
            channel_id = read_id(server, "channelPublicId")
        self.channel_id = channel_id
        self._split(data)

    @property
    def id(self) -> str:
        """Alias of :attr:`code` (the identity)."""
        return self.code

    @property
    def server_id(self) -> str | None:
        """The invite's server id, or None."""
        return self.guild.id if self.guild is not None else None

    @property
    def expires_at(self) -> datetime | None:
        """Expiry (UTC), or None for no expiry."""
        return parse_time(self._extra_get("expiresAt"))

    @property
    def url(self) -> str:
        """The invite link ``{site_url}/invite/<code>`` (``site_url`` from the client when set)."""
        base = self._state.site_url.rstrip("/")
        return f"{base}/invite/{self.code}"

    def revoke(self) -> None:
        """Revoke the invite (``DELETE /invites/{code}``) and drop it from the server's cache.

        Needs ``MANAGE_INVITES`` on the invite's server; a bot can inspect or
        revoke an invite, never accept one.

        Raises:
            ServiceAPIError: 403 without MANAGE_INVITES, 404 unknown or expired code.
        """
        self._state.request(Route(endpoints.DELETE_INVITE, code=self.code))
        sid = self.server_id
        cached = self._state.guilds.cache.get(sid) if sid is not None else None
        if cached is not None:
            cached.invites.cache.pop(self.code, None)

    _REPR = ("code", "guild", "uses")
    _HTML = ("code", "guild", "uses", "max_uses", "inviter", "channel_id", "expires_at")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
