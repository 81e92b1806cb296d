"""The server events: a part that :class:`~service_client.state.parsers.Parsers` holds.

Servers joined, updated and left; members added, removed and updated (the
member refetch); bans revoked; channel and category listings changed; roles
created, updated, deleted and reordered. Each applies its cache effect, then
queues its Python event under the server's ordering key. An event that needs
a request first reserves its place in that order and fills it when the
request ends; no worker thread waits for it meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import EVENT_FETCH_MAX_RETRIES, EVENT_FETCH_TIMEOUT_MS
from ..models._base import read_id
from ..models.guild import Guild
from ..models.member import RemovedMember
from ..models.role import Role
from ..rest.route import Route
from .payload import _CHANNEL_KEYS, _SERVER_KEYS, _USER_KEYS, MalformedPayload, _need_id, _obj

if TYPE_CHECKING:  # pragma: no cover
    from .connection import ConnectionState

__all__ = ["ServerParsers", "event_key"]

log = logging.getLogger("service_client.state")


def event_key(data: Mapping[str, Any], *fallback_keys: str) -> str | None:
    """The ordering key of an event: its channel, else its server, else the first of
    ``fallback_keys`` the payload has."""
    return read_id(data, *_CHANNEL_KEYS) or read_id(data, *_SERVER_KEYS) or (
        read_id(data, *fallback_keys) if fallback_keys else None
    )


class ServerParsers:
    """The server, member, listing and role handlers: a part :class:`Parsers` holds and
    whose :meth:`table` it serves.

    Args:
        state: The connection state whose caches, requests and dispatcher are used.
    """

    def __init__(self, state: ConnectionState) -> None:
        """Bind to ``state``."""
        self._state = state

    def table(self) -> dict[str, Callable[[Any], None]]:
        """Socket event name -> its handler, for every server event."""
        return {
            endpoints.ON_SERVER_JOINED: self._server_joined,
            endpoints.ON_SERVER_UPDATED: self._server_updated,
            endpoints.ON_SERVER_DELETED: self._server_gone,
            endpoints.ON_SERVER_YOU_REMOVED: self._server_gone,
            endpoints.ON_SERVER_YOU_LEFT: self._server_gone,
            endpoints.ON_SERVER_MEMBER_ADD: self._member_add,
            endpoints.ON_SERVER_MEMBER_REMOVE: self._member_remove,
            endpoints.ON_SERVER_MEMBER_REMOVED: self._member_removed,
            endpoints.ON_SERVER_MEMBER_UPDATE: self._member_update,
            endpoints.ON_SERVER_BAN_REVOKED: self._ban_revoked,
            endpoints.ON_SERVER_CHANNELS_UPDATED: self._listing_changed("guild_channels_update"),
            endpoints.ON_SERVER_CATEGORIES_UPDATED: self._listing_changed("guild_categories_update"),
            endpoints.ON_SERVER_ROLE_CREATE: self._role_upsert("role_create"),
            endpoints.ON_SERVER_ROLE_UPDATE: self._role_upsert("role_update"),
            endpoints.ON_SERVER_ROLE_DELETE: self._role_delete,
            endpoints.ON_SERVER_ROLES_ORDER_UPDATE: self._roles_order,
        }

    def _dispatch(self, event: str, *args: Any, key: str | None) -> None:
        self._state.dispatch(event, *args, key=key)


    # -- servers ------------------------------------------------------------------

    def _server_joined(self, payload: Any) -> None:
        state = self._state
        guild = state.guilds.store_live(Guild(state, _obj(payload)))
        user = state.user
        if user is None:
            self._dispatch("guild_create", guild, key=guild.id)
            return
        # The bot's member is fetched first, so guild_create listeners find it cached; the
        # event keeps its place in the server's order meanwhile.
        server_id = guild.id
        slot = state.reserve_dispatch(key=server_id)

        def cache_member(record: Any) -> None:
            """Cache the fetched bot member (best effort), then emit guild_create in its place."""
            try:
                if isinstance(record, BaseException):
                    raise record
                if isinstance(record, dict) and isinstance(record.get("member"), dict):
                    record = record["member"]
                state.members.from_record(record, server_id, cache=True)
            except Exception as exc:  # noqa: BLE001 - best effort: guild_create goes out anyway
                log.warning("bot member fetch for joined server %s failed: %s", server_id, exc)
            slot.emit("guild_create", guild)

        self._fetch_then(
            Route(endpoints.GET_MEMBER, server_id=server_id, user_id=user.id),
            cache_member,
            slot,
        )

    def _fetch_then(self, route: Route, then: Callable[[Any], None], slot: Any) -> None:
        """Queue ``route`` on the REST session; call ``then(result)``, or ``then(exc)`` on failure.

        ``then`` runs on the REST thread that completed the request (or here,
        when it could not be queued); if ``then`` itself fails, ``slot`` is
        cancelled so the key's later events are never held up.
        """
        def done(result: Any) -> None:
            """Run ``then`` on the outcome; release the slot if that fails."""
            try:
                then(result)
            except Exception:  # noqa: BLE001 - never leave the slot (and its key) waiting
                log.exception("completing a fetched event failed")
                slot.cancel()

        try:
            future = self._state.submit(
                route, timeout_ms=EVENT_FETCH_TIMEOUT_MS, retry=EVENT_FETCH_MAX_RETRIES
            )
        except Exception as exc:  # noqa: BLE001 - not queued (destroyed): complete with the error
            done(exc)
            return

        def on_done(fut: Any) -> None:
            """Hand the request's result or exception to ``done``."""
            try:
                result = fut.result()
            except BaseException as exc:  # noqa: BLE001 - the failure is the outcome
                result = exc
            done(result)

        future.add_done_callback(on_done)

    def _server_updated(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS + ("publicId",), "serverPublicId")
        guild = self._state.guilds.update_live(server_id, data)
        self._dispatch("guild_update", guild if guild is not None else data, key=server_id)

    def _server_gone(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS + ("publicId",), "serverPublicId")
        guild = self._state.evict_guild(server_id)
        self._dispatch("guild_delete", guild if guild is not None else data, key=server_id)

    def _member_add(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
        record = data.get("member")
        if not isinstance(record, dict):
            # Flat variant: the member fields sit in the envelope itself.
            record = {k: v for k, v in data.items() if k not in _SERVER_KEYS}
        member = self._state.members.from_record(record, server_id, cache=True)
        self._dispatch("guild_member_add", member, key=server_id)

    def _evict_member(self, data: dict[str, Any], reason: str) -> tuple[str, RemovedMember]:
        """Evict the member an event names; the :class:`RemovedMember` its listeners get."""
        server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
        user_id = _need_id(data, ("memberPublicId",) + _USER_KEYS, "memberPublicId")
        state = self._state
        member = state.members.cache.pop((server_id, user_id), None)
        removed = RemovedMember._of(state, server_id, user_id, reason, member, state.users.cache.get(user_id))
        return server_id, removed

    def _member_remove(self, payload: Any) -> None:
        server_id, subject = self._evict_member(_obj(payload), "left")
        self._dispatch("guild_member_remove", subject, key=server_id)

    def _member_removed(self, payload: Any) -> None:
        data = _obj(payload)
        reason = data.get("reason")
        server_id, subject = self._evict_member(data, reason if isinstance(reason, str) and reason else "removed")
        self._dispatch("guild_member_remove", subject, key=server_id)
        if data.get("reason") == "banned":
            self._dispatch("guild_ban_add", data, key=server_id)

    def _member_update(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
        user_id = _need_id(data, ("memberPublicId",) + _USER_KEYS, "memberPublicId")
        state = self._state
        # The payload carries ids only: the member is refetched on the REST session while
        # the event holds its place in the server's order (raw payload if the fetch fails).
        slot = state.reserve_dispatch(key=server_id)

        def emit_member(record: Any) -> None:
            """Cache the refetched member and emit guild_member_update in its place."""
            try:
                if isinstance(record, BaseException):
                    raise record
                if isinstance(record, dict) and isinstance(record.get("member"), dict):
                    record = record["member"]
                member: Any = state.members.from_record(record, server_id, cache=True)
            except Exception as exc:  # noqa: BLE001 - dispatch the raw payload instead
                log.warning("member refetch for %s in %s failed: %s", user_id, server_id, exc)
                member = data
            slot.emit("guild_member_update", member)

        self._fetch_then(
            Route(endpoints.GET_MEMBER, server_id=server_id, user_id=user_id),
            emit_member,
            slot,
        )

    def _ban_revoked(self, payload: Any) -> None:
        data = _obj(payload)
        self._dispatch("guild_ban_remove", data, key=event_key(data))

    # -- channels and categories ---------------------------------------------------

    def _listing_changed(self, python_event: str) -> Callable[[Any], None]:
        """``server:channels_updated`` / ``server:categories_updated`` ``{serverPublicId}``.

        When the bot caches channels or categories of that (cached) server, they are refreshed
        first: one listing request on the REST session replaces them (deleted or now hidden ones
        are evicted) while the event keeps its place in the server's order, then the raw
        payload is dispatched there. Otherwise, or when the refresh fails (logged at WARNING),
        the payload is dispatched as it is.
        """

        def handler(payload: Any) -> None:
            """Refresh the server's cached channels and categories if tracked, then dispatch."""
            data = _obj(payload)
            server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
            state = self._state
            channels = state.channels
            if not channels.tracks_guild(server_id):
                self._dispatch(python_event, data, key=server_id)
                return
            slot = state.reserve_dispatch(key=server_id)

            def apply_listing(listing: Any) -> None:
                """Replace the cached listing (best effort), then emit the event in its place."""
                try:
                    if isinstance(listing, BaseException):
                        raise listing
                    channels.apply_listing(server_id, listing)
                except Exception as exc:  # noqa: BLE001 - dispatch anyway; the cache stays as it was
                    log.warning("channel refresh of server %s failed: %s", server_id, exc)
                slot.emit(python_event, data)

            self._fetch_then(
                Route(endpoints.LIST_CATEGORIES, server_id=server_id), apply_listing, slot
            )

        return handler

    # -- roles --------------------------------------------------------------------

    def _role_upsert(self, python_event: str) -> Callable[[Any], None]:
        def handler(payload: Any) -> None:
            """Apply this event's cache effect, then dispatch it."""
            data = _obj(payload)
            server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
            record = _obj(data.get("role"), "role")
            guild = self._state.guilds.cache.get(server_id)
            if guild is None:
                log.debug("%s for an uncached server ignored", python_event)
                return
            role = Role(self._state, record, server_id=server_id)
            guild.roles.cache[role.id] = role
            self._dispatch(python_event, role, key=server_id)

        return handler

    def _role_delete(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
        role_id = _need_id(data, ("rolePublicId", "roleId"), "rolePublicId")
        guild = self._state.guilds.cache.get(server_id)
        if guild is None:
            log.debug("role_delete for an uncached server ignored")
            return
        role = guild.roles.cache.pop(role_id, None)
        for member in self._state.members.for_guild(server_id).values():
            member._drop_role(role_id)
        self._dispatch("role_delete", role if role is not None else role_id, key=server_id)

    def _roles_order(self, payload: Any) -> None:
        data = _obj(payload)
        server_id = _need_id(data, _SERVER_KEYS, "serverPublicId")
        entries = data.get("roles")
        guild = self._state.guilds.cache.get(server_id)
        if guild is None or not isinstance(entries, list):
            return
        for entry in entries:
            entry = _obj(entry, "role position")
            role_id = read_id(entry, "publicId", "id")
            position = entry.get("position")
            if role_id is None or not isinstance(position, int) or isinstance(position, bool):
                raise MalformedPayload("role position needs publicId and an int position")
            role = guild.roles.cache.get(role_id)
            if role is not None:
                role._update({"position": position})
        self._dispatch("role_order_update", data, key=server_id)
