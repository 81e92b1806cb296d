"""``Guild``: a server of the service, with its settings, members, bans, audit log and stats."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_id
from ..errors import ServiceAPIError
from ..rest.route import Route
from . import _moderation
from ._base import Model, as_dict, read_id, read_int, read_str
from ._port import EmojiCache, InviteCache, RoleCache, StateLike, state_of
from .audit_log import AuditLogEntry
from .ban import Ban
from .collection import ModelList
from .guild_channels import GuildCategories, GuildChannels
from .member import Member
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from .channel import Channel
    from .collection import Collection

__all__ = ["Guild"]

class Guild(Model):
    """A server (a "guild" in the client).

    Wire keys: ``publicId`` (also ``id``, ``serverPublicId``),
    ``name``, ``imageUrl`` -> ``icon``, ``memberCount`` (0 if absent, never
    updated by events), ``ownerId`` (else the ``members`` entry with
    ``isOwner: true``).

    Attributes:
        id: The server's public id.
        name: Its name.
        icon: Icon URL or None.
        owner_id: The owner's user id, or None when unknown.
        member_count: Members at fetch time.
        roles: This server's :class:`~service_client.managers.RoleManager` (empty until fetched or an
            event fills it; kept across re-fetches of the server).
        invites: This server's :class:`~service_client.managers.InviteManager`.
        emojis: This server's custom emojis, an :class:`~service_client.managers.EmojiManager` (empty
            until fetched; kept across re-fetches of the server).
    """

    __slots__ = ("id", "name", "icon", "owner_id", "member_count", "roles", "invites", "emojis")

    _HTML = ("id", "name", "owner_id", "member_count")

    id: str
    name: str
    icon: str | None
    owner_id: str | None
    member_count: int
    roles: RoleCache
    invites: InviteCache
    emojis: EmojiCache

    def __init__(self, state: StateLike, data: Mapping[str, Any]) -> None:
        """Build from a server record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._state = state_of(state)
        self._parse(as_dict(data, "server"))
        self.roles, self.invites, self.emojis = self._state.guild_managers(self.id)

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
        """Keep the role, invite and emoji caches of the entry this one replaces."""
        self.roles = previous.roles
        self.invites = previous.invites
        self.emojis = previous.emojis

    @property
    def channels(self) -> GuildChannels:
        """The cached channels of this server: ``client.channels.cache`` filtered by ``server_id``.

        A snapshot :class:`Collection` keyed by channel id, with ``create(name, *, type,
        category_id, private, overwrites)`` (see :class:`GuildChannels`) and ``fetch()``.
        Empty until :meth:`fetch_channels` (or ``channels.fetch``) has run.
        """

        return GuildChannels(self._state, self.id)

    @property
    def categories(self) -> GuildCategories:
        """The cached categories of this server (from ``client.channels.categories``).

        A snapshot :class:`Collection` keyed by category id, with ``create(name)`` and
        ``fetch()`` (see :class:`GuildCategories`). Empty until fetched.
        """

        return GuildCategories(self._state, self.id)

    @property
    def members(self) -> Collection[str, Member]:
        """The cached members of this server: a snapshot :class:`Collection` keyed by user id.

        Taken from ``client.members.cache`` when read (no request). Like every
        cached accessor it is a dict: iterating gives user ids, ``.values()``
        the :class:`Member` objects, ``guild.members[user_id]`` one member.
        :meth:`fetch_members` asks the service and returns a list.
        """
        return self._state.members.for_guild(self.id)

    @property
    def me(self) -> Member | None:
        """The bot's own cached member in this server, or None."""
        user = self._state.user
        if user is None:
            return None
        return self._state.members.get(self.id, user.id)

    def fetch_channels(self, *, cache: bool = True) -> ModelList[Channel]:
        """Fetch this server's channels: ``client.channels.fetch_for_guild(self.id)``.

        See :meth:`ChannelManager.fetch_for_guild` for the result and errors.
        """
        return self._state.channels.fetch_for_guild(self.id, cache=cache)

    def fetch_member(self, user_id: str, *, cache: bool = True) -> Member:
        """Fetch one member of this server: ``client.members.fetch(self.id, user_id)``. Blocks.

        Args:
            user_id: The user's id (``Member.id``).
            cache: Store the member in ``client.members`` (and its user in ``client.users``).

        Returns:
            The :class:`Member`.

        Raises:
            TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
            ServiceAPIError: ``status`` 404 when the user is not a member of this server
                (or does not exist); 403 when the server is not visible to the bot.
            ServiceTimeoutError: The last attempt timed out.
        """
        return self._state.members.fetch(self.id, user_id, cache=cache)

    # -- server settings, audit log, members, bans --------------------------------

    def edit(self, *, name: str = MISSING, image_url: str | None = MISSING) -> None:
        """Rename this server or change its icon (``PATCH /servers/{sid}``; needs MANAGE_SERVER).

        Blocks until the service answered (204). Only the given keywords are
        sent; ``image_url=None`` removes the icon. The cached guild is updated
        by the ``server:updated`` event that follows (``guild_update``), not
        by this call.

        Raises:
            TypeError: A value of the wrong type (before any request).
            ValueError: Nothing to change, or an empty ``name`` (before any request).
            ServiceAPIError: 403 without MANAGE_SERVER, 404 unknown server.
        """
        body: dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = check_id(name, "name")
        if image_url is not MISSING:
            if image_url is not None and not isinstance(image_url, str):
                raise TypeError(f"image_url must be a str or None, got {type(image_url).__name__}")
            body["imageUrl"] = image_url
        if not body:
            raise ValueError("edit needs name or image_url")
        self._state.request(Route(endpoints.EDIT_SERVER, server_id=self.id), json=body)

    def delete(self) -> None:
        """Delete this server (``DELETE /servers/{sid}``; the owner only). Blocks.

        The ``server:deleted`` event that follows evicts it (with its channels
        and members) from the caches and fires ``guild_delete``.

        Raises:
            ServiceAPIError: 403 not the owner, 404 unknown server.
        """
        self._state.request(Route(endpoints.DELETE_SERVER, server_id=self.id))

    def leave(self) -> None:
        """Leave this server (``POST /servers/{sid}/leave``). Blocks.

        The ``server:you_left`` event that follows evicts it from the caches
        and fires ``guild_delete``.

        Raises:
            ServiceAPIError: 400 the owner cannot leave, 403/404 not a member.
        """
        self._state.request(Route(endpoints.LEAVE_SERVER, server_id=self.id))

    def vanity_code(self) -> str | None:
        """This server's vanity invite code (``GET /servers/{sid}/vanity``). Blocks.

        Returns:
            The code (the part after ``/invite/``), or None when the server has none.

        Raises:
            ServiceAPIError: 403 not a member, 404 unknown server.
        """
        data = self._state.request(Route(endpoints.GET_VANITY, server_id=self.id))
        code = data.get("vanityCode") if isinstance(data, dict) else None
        return code if isinstance(code, str) and code else None

    def fetch_stats(self) -> dict[str, Any]:
        """This server's statistics (``GET /servers/{sid}/stats``), as the service sends them. Blocks.

        Always requests; nothing is cached or updated (:attr:`member_count` keeps the value
        read when the server was fetched).

        Returns:
            The raw record: ``memberCount`` (int) is the only key known on the service; the
            emulator adds ``channelCount`` and ``roleCount``. ``{}`` when the answer is not a
            JSON object.

        Raises:
            ServiceAPIError: 403 not a member, 404 unknown server.
            ServiceTimeoutError: The last attempt timed out.
        """
        data = self._state.request(Route(endpoints.GET_SERVER_STATS, server_id=self.id))
        return dict(data) if isinstance(data, dict) else {}

    def fetch_member_count(self) -> int:
        """How many members this server has now (``memberCount`` of ``GET /servers/{sid}/stats``). Blocks.

        Always requests. Does not change :attr:`member_count` (the count read when the
        server was fetched), nor anything else cached.

        Returns:
            The member count (>= 0).

        Raises:
            ServiceAPIError: 403 not a member, 404 unknown server; or an answer without an
                integer ``memberCount`` (``status`` 200, the exact 2xx code is not kept).
            ServiceTimeoutError: The last attempt timed out.
        """

        stats = self.fetch_stats()
        count = stats.get("memberCount")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ServiceAPIError(
                200, Route(endpoints.GET_SERVER_STATS, server_id=self.id).display_path,
                json.dumps(stats), stats,
                message="API Error 200: the stats answer has no member count (memberCount)",
            )
        return count

    def set_notifications(
        self,
        *,
        muted: bool = MISSING,
        mute_until: datetime | None = MISSING,
        mentions_only: bool = MISSING,
    ) -> None:
        """Change the bot's own notification settings for this server
        (``PUT /servers/{sid}/notifications``). Blocks.

        Only the given keywords are sent: ``muted`` and ``mentionsOnly`` as
        booleans, ``muteUntil`` as an ISO-8601 UTC string (``mute_until=None``
        clears it).

        Args:
            muted: Mute the server.
            mute_until: A timezone-aware datetime until which it stays muted, or None.
            mentions_only: Notify for mentions only.

        Raises:
            TypeError: A value of the wrong type, or a naive datetime (before any request).
            ValueError: Nothing to change (before any request).
            ServiceAPIError: 400 refused, 403 not a member.
        """
        body: dict[str, Any] = {}
        for key, value, what in (("muted", muted, "muted"), ("mentionsOnly", mentions_only, "mentions_only")):
            if value is MISSING:
                continue
            if not isinstance(value, bool):
                raise TypeError(f"{what} must be a bool, got {type(value).__name__}")
            body[key] = value
        if mute_until is not MISSING:
            if mute_until is None:
                body["muteUntil"] = None
            elif not isinstance(mute_until, datetime):
                raise TypeError(f"mute_until must be a datetime or None, got {type(mute_until).__name__}")
            elif mute_until.tzinfo is None or mute_until.utcoffset() is None:
                raise TypeError("mute_until must be timezone-aware (for example datetime.now(timezone.utc))")
            else:
                body["muteUntil"] = _iso_utc(mute_until)
        if not body:
            raise ValueError("set_notifications needs muted, mute_until or mentions_only")
        self._state.request(Route(endpoints.SET_NOTIFICATIONS, server_id=self.id), json=body)

    def audit_log(self, *, limit: int | None = None, action: str | None = None) -> ModelList[AuditLogEntry]:
        """Read this server's audit log (``GET /servers/{sid}/audit-logs``; needs VIEW_AUDIT_LOG). Blocks.

        Args:
            limit: Most entries wanted (1 to 100), or None for the service
                default (50 on the emulator); sent as ``limit``.
            action: Only entries of this action (``"MEMBER_BAN"``...), sent as ``action``.

        Returns:
            The entries, newest first as the service orders them; ``[]`` when none.
            Executors are not added to ``client.users``.

        Raises:
            TypeError, ValueError: A bad ``limit`` or ``action`` (before any request).
            ServiceAPIError: 403 without VIEW_AUDIT_LOG or not a member.
        """

        params: dict[str, Any] = {}
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError(f"limit must be an int or None, got {type(limit).__name__}")
            if not 1 <= limit <= 100:
                raise ValueError(f"limit must be between 1 and 100, got {limit}")
            params["limit"] = limit
        if action is not None:
            if not isinstance(action, str):
                raise TypeError(f"action must be a str or None, got {type(action).__name__}")
            if not action:
                raise ValueError("action must not be empty")
            params["action"] = action
        data = self._state.request(
            Route(endpoints.GET_AUDIT_LOG, server_id=self.id), params=params or None
        )
        items = None
        if isinstance(data, dict):
            items = data.get("logs", data.get("auditLogs"))
        elif isinstance(data, list):
            items = data
        out: list[AuditLogEntry] = []
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                try:
                    out.append(AuditLogEntry(self._state, item, server_id=self.id))
                except ValueError:
                    continue
        return ModelList(out)

    def fetch_members(self, *, cache: bool = True) -> ModelList[Member]:
        """Fetch every member of this server: ``client.members.fetch_all(self.id, cache=cache)``.

        ``GET /servers/{sid}/members`` (needs VIEW_MEMBERS); see
        :meth:`MemberManager.fetch_all` for the result and errors.
        """
        return self._state.members.fetch_all(self.id, cache=cache)

    def search_members(self, text: str) -> ModelList[Member]:
        """Find members whose name or nickname contains ``text`` (``GET /servers/{sid}/members?search=``).

        Blocks; needs VIEW_MEMBERS. The results are partial (no join time; roles
        as ``{publicId, name, color, hoist, position}``): they are not cached,
        and their :attr:`Member.permissions` are right only for roles present in
        :attr:`roles` (fill it with ``guild.roles.fetch_all()``).

        Args:
            text: The text to look for (non-empty).

        Returns:
            The matching members (``Member.id`` is the user id); ``[]`` when none.

        Raises:
            TypeError, ValueError: ``text`` is not a non-empty str (before any request).
            ServiceAPIError: 403 without VIEW_MEMBERS or not a member.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("text must not be empty")
        data = self._state.request(
            Route(endpoints.LIST_MEMBERS, server_id=self.id), params={"search": text}
        )
        items = data.get("members") if isinstance(data, dict) else data
        out: list[Member] = []
        for item in items if isinstance(items, list) else ():
            try:
                out.append(self._state.store_member(item, self.id, cache=False))
            except (TypeError, ValueError):
                continue
        return ModelList(out)

    def fetch_bans(self, *, cache: bool = True) -> ModelList[Ban]:
        """List this server's bans (``GET /servers/{sid}/bans``; needs BAN_MEMBERS). Blocks.

        Args:
            cache: Upsert each banned user into ``client.users`` (bans
                themselves are not cached); False writes nothing.

        Returns:
            The bans in the service's order; ``[]`` when none.

        Raises:
            TypeError: ``cache`` is not a bool.
            ServiceAPIError: 403 without BAN_MEMBERS or not a member.
        """

        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_BANS, server_id=self.id))
        items = data.get("bans") if isinstance(data, dict) else data
        out: list[Ban] = []
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict) or not isinstance(item.get("user"), dict):
                continue
            try:
                user = self._state.store_user(item["user"], cache=cache)
                out.append(Ban(self._state, item, server_id=self.id, user=user))
            except (TypeError, ValueError):
                continue
        return ModelList(out)

    # -- moderation (socket, acknowledged) -------------------------------------------

    def kick(self, user: User | Member | str, *, reason: str | None = None) -> None:
        """Remove a member from this server; they may join again with an invite. Needs KICK_MEMBERS.

        Emits ``server:kick`` ``{"serverPublicId", "userPublicId", "reason"?}`` over the
        socket and blocks until the service acknowledges it (10 s at most). Thread-safe. On
        success the ``guild_member_remove`` event follows (the member leaves
        ``client.members`` then, not during this call).

        Args:
            user: The member to kick: a :class:`Member`, a :class:`User` or a user id.
            reason: Why, sent with the kick (the emulator keeps it in the audit log; the
                service documents no use of it); None sends none.

        Raises:
            TypeError, ValueError: ``user`` is not a User, Member or non-empty user id, or
                ``reason`` is neither None nor a str with text (before anything is sent).
            ServiceAuthError: The socket is not connected (before login, after destroy,
                during a reconnect); nothing is sent.
            GatewayError: The service refused; ``code`` is its key:
                ``servers.errors.cannot_kick_owner`` (the target owns the server),
                ``servers.errors.missing_permission`` (the bot lacks KICK_MEMBERS),
                ``servers.errors.not_found`` (no such server, or the target is not a member).
            GatewayTimeoutError: No acknowledgement within 10 s (``code`` ``"TIMEOUT"``).
            ServiceError: The socket dropped before the acknowledgement came.
        """
        _moderation.kick(self._state, self.id, user_id_of(user), reason=reason)

    def ban(
        self,
        user: User | Member | str,
        *,
        reason: str | None = None,
        delete_history: str | None = None,
    ) -> None:
        """Ban a user from this server (a member is removed first). Needs BAN_MEMBERS.

        Emits ``server:ban`` ``{"serverPublicId", "userPublicId", "reason"?,
        "deleteHistory"?}`` over the socket and blocks until the service acknowledges it
        (10 s at most). A user who is not a member may be banned too. Thread-safe. On
        success, for a member, ``guild_member_remove`` then ``guild_ban_add`` follow; the
        ban is listed by :meth:`fetch_bans`.

        Args:
            user: Who to ban: a :class:`Member`, a :class:`User` or a user id.
            reason: Why, stored with the ban (``Ban.reason``); None sends none.
            delete_history: Delete the user's messages in this server from this far
                back: ``"none"``, ``"1d"``, ``"7d"``, ``"14d"`` or ``"30d"``; None sends
                nothing (the service keeps them).

        Raises:
            TypeError: ``user``, ``reason`` or ``delete_history`` of the wrong type
                (before anything is sent).
            ValueError: An empty ``user`` or ``reason``, or a ``delete_history`` not in the
                list above (before anything is sent).
            ServiceAuthError: The socket is not connected; nothing is sent.
            GatewayError: The service refused; ``code`` is its key:
                ``servers.errors.cannot_ban_owner``, ``servers.errors.missing_permission``
                (no BAN_MEMBERS), ``servers.errors.already_banned``,
                ``servers.errors.not_found`` (unknown server or user).
            GatewayTimeoutError: No acknowledgement within 10 s (``code`` ``"TIMEOUT"``).
            ServiceError: The socket dropped before the acknowledgement came.
        """

        _moderation.ban(self._state, self.id, user_id_of(user), reason=reason, delete_history=delete_history)

    def unban(self, user: User | Member | str, *, reason: str | None = None) -> None:
        """Lift a ban in this server. Needs BAN_MEMBERS.

        Emits ``server:unban`` ``{"serverPublicId", "userPublicId", "reason"?}`` over the
        socket and blocks until the service acknowledges it (10 s at most). Thread-safe. On
        success ``guild_ban_remove`` follows. The user is not added back: they may join again.

        Args:
            user: The banned user: a :class:`User` (for example ``Ban.user``) or a user id.
            reason: Why, sent with the unban (kept in the emulator's audit log); None sends none.

        Raises:
            TypeError, ValueError: ``user`` is not a User, Member or non-empty user id, or
                ``reason`` is neither None nor a str with text (before anything is sent).
            ServiceAuthError: The socket is not connected; nothing is sent.
            GatewayError: The service refused; ``code`` is its key:
                ``servers.errors.not_banned``, ``servers.errors.missing_permission``
                (no BAN_MEMBERS), ``servers.errors.not_found``.
            GatewayTimeoutError: No acknowledgement within 10 s (``code`` ``"TIMEOUT"``).
            ServiceError: The socket dropped before the acknowledgement came.
        """

        _moderation.unban(self._state, self.id, user_id_of(user), reason=reason)

    def boost(self) -> None:
        """Boost this server (``POST /servers/{sid}/boost``). Blocks.

        Raises:
            ServiceAPIError: 403 not a member, 404 unknown server.
        """
        self._state.request(Route(endpoints.BOOST_SERVER, server_id=self.id))

    def mark_read(self) -> None:
        """Mark every channel of this server as read for the bot (``POST /servers/{sid}/read``). Blocks.

        Raises:
            ServiceAPIError: 403 not a member, 404 unknown server.
        """
        self._state.request(Route(endpoints.MARK_SERVER_READ, server_id=self.id))


def _iso_utc(moment: datetime) -> str:
    """``moment`` as the service's ISO-8601 UTC text ``2026-01-02T03:04:05.678Z``."""

    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def user_id_of(user: Any) -> str:
    """The user id of ``user``: a :class:`User`, a :class:`Member` or a user id str.

    Raises:
        TypeError: ``user`` is none of those (the message names the argument).
        ValueError: ``user`` is an empty str.
    """
    if isinstance(user, (User, Member)):
        return user.id
    if not isinstance(user, str):
        raise TypeError(f"user must be a User, a Member or a user id str, got {type(user).__name__}")
    return check_id(user, "user")
