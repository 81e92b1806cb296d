"""``InviteManager``: the invites of one server (``guild.invites``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._validate import check_cache_flag, check_id
from ..models._port import StateLike
from ..models.collection import ModelList
from ..models.invite import Invite
from ..rest.route import Route
from .base import BaseManager

if TYPE_CHECKING:  # pragma: no cover
    from ..models.guild import Guild

__all__ = ["InviteManager"]


class InviteManager(BaseManager[str, Invite]):
    """The invites of one server, keyed by code (``guild.invites``). Thread-safe.

    Attributes:
        server_id: The server these invites belong to.
    """

    __slots__ = ("server_id",)
    model = Invite

    def __init__(self, state: StateLike, server_id: str) -> None:
        """Create the empty invite cache of ``server_id``."""
        super().__init__(state)
        self.server_id = server_id

    def _key_of(self, obj: Any) -> str:
        return obj.code  # type: ignore[no-any-return]

    def _guild(self) -> Guild | None:
        return self._state.guilds.cache.get(self.server_id)

    def fetch_all(self, *, cache: bool = True) -> ModelList[Invite]:
        """List the server's invites (``GET /servers/{sid}/invites?all=true``).

        Always sends ``all=true``: without it the service answers only the
        bot's own invite. Upserts into the cache and never purges: an invite
        missing from the answer stays cached until :meth:`revoke` drops it.

        Returns:
            The invites; ``[]`` when none.

        Raises:
            TypeError: ``cache`` is not a bool.
            ServiceAPIError: 403 without MANAGE_INVITES or not a member.
        """
        check_cache_flag(cache)
        data = self._state.request(
            Route(endpoints.LIST_INVITES, server_id=self.server_id), params={"all": "true"}
        )
        items = data.get("invites") if isinstance(data, dict) else data
        guild = self._guild()
        invites = [Invite(self._state, item, guild=guild) for item in (items if isinstance(items, list) else ())]
        if cache:
            self.cache.update((inv.code, inv) for inv in invites)
        return ModelList(invites)

    def create(self, channel_id: str, *, max_age: int | None = None, max_uses: int | None = None) -> Invite:
        """Create an invite (``POST /servers/{sid}/invites``) and cache it.

        Args:
            channel_id: The channel the invite leads to.
            max_age: Lifetime in seconds (omitted when None; 0 = no limit).
            max_uses: Use limit (omitted when None; 0 = no limit).

        Returns:
            The created :class:`Invite`.

        Raises:
            TypeError, ValueError: Bad arguments (before any request).
            ServiceAPIError: 403 without MANAGE_INVITES.
        """
        check_id(channel_id, "channel_id")
        body: dict[str, Any] = {"channelPublicId": channel_id}
        for key, value, name in (("maxAge", max_age, "max_age"), ("maxUses", max_uses, "max_uses")):
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an int or None")
            if value < 0:
                raise ValueError(f"{name} must be >= 0")
            body[key] = value
        data = self._state.request(
            Route(endpoints.CREATE_INVITE, server_id=self.server_id), json=body
        )
        if isinstance(data, dict) and isinstance(data.get("invite"), dict):
            data = data["invite"]
        invite = Invite(self._state, data, guild=self._guild())
        self.cache[invite.code] = invite
        return invite

    def revoke(self, code: str) -> None:
        """Revoke an invite (``DELETE /invites/{code}``) and drop it from the cache.

        Needs ``MANAGE_INVITES`` on this server.

        Raises:
            TypeError, ValueError: ``code`` is not a non-empty str.
            ServiceAPIError: 403 without MANAGE_INVITES, 404 unknown code.
        """
        code = getattr(code, "code", code)
        check_id(code, "code")
        self._state.request(Route(endpoints.DELETE_INVITE, code=code))
        self.cache.pop(code, None)

    def __repr__(self) -> str:
        return f"<InviteManager server_id={self.server_id!r} cached={len(self.cache)}>"
