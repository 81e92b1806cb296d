"""``GuildManager``: ``client.guilds``, the servers the bot is in (filled at login)."""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from typing import Any

from .. import endpoints
from .._validate import check_cache_flag, check_id
from ..models._port import StateLike
from ..models.collection import ModelList
from ..models.guild import Guild
from ..rest.route import Route
from .base import BaseManager

__all__ = ["GuildManager"]

log = logging.getLogger(__name__.rpartition(".")[0])

#: Give up the login member preload when no fetch completes for this long, seconds.
PRELOAD_STALL_S = 120.0


class GuildManager(BaseManager[str, Guild]):
    """The cache of the servers the bot is in, keyed by server id.

    Filled at login by :meth:`fetch_all`; kept fresh by ``server:*`` events
    and, after a reconnect, by a reconcile against the service's list. A
    re-fetched guild replaces the cached object but keeps its ``roles`` and
    ``invites`` caches. Thread-safe.
    """

    __slots__ = ("_live_changed", "_live_lock", "_reconciles")
    model = Guild

    def __init__(self, state: StateLike) -> None:
        """Create an empty manager bound to ``state`` (the connection state)."""
        super().__init__(state)
        # Guards the two fields below, and makes a live event's cache change and a
        # reconcile's apply step happen one after the other, never interleaved.
        self._live_lock = threading.Lock()
        #: Servers changed by live events since the running reconciles began.
        self._live_changed: set[str] = set()
        #: Reconciles begun and not yet ended (0: no tracking).
        self._reconciles = 0

    def fetch(self, server_id: str, *, cache: bool = True) -> Guild:
        """Fetch one server (``GET /servers/{server_id}``); a new Guild each call.

        Always requests, even when the server is cached.

        Args:
            server_id: The server's public id.
            cache: Insert or overwrite the cache entry.

        Returns:
            A new :class:`Guild`.

        Raises:
            TypeError, ValueError: ``server_id`` is not a non-empty str (before any request).
            ServiceAPIError: 404 unknown server, 403 not visible to the bot.
        """
        check_id(server_id, "server_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.GET_SERVER, server_id=server_id))
        if isinstance(data, dict) and isinstance(data.get("server"), dict):
            data = data["server"]
        guild = Guild(self._state, data)
        if cache:
            self._store(guild)
        return guild

    def get_or_fetch(self, server_id: str) -> Guild | None:
        """The cached server, else :meth:`fetch`; never raises.

        Returns:
            The Guild, or None on any failure (bad id, network, 403/404...).
        """
        try:
            cached = self.cache.get(server_id)
            if cached is not None:
                return cached
            return self.fetch(server_id)
        except Exception as exc:  # noqa: BLE001 - documented to never raise
            log.debug("get_or_fetch(%r) failed: %s", server_id, type(exc).__name__)
            return None

    def fetch_all(self, *, cache: bool = True) -> ModelList[Guild]:
        """Fetch every server of the bot (``GET /servers``) and preload the bot's members.

        Login calls it once the socket is connected.

        With ``cache`` True: each server is upserted (no purge) and, when
        ``client.user`` is set, the bot's member of every server is fetched
        (``GET /servers/{server_id}/members/{user_id}``) concurrently through
        the REST queue (:meth:`preload_members`) and put in
        ``client.members.cache``: 1 + N requests. A failing member fetch is
        logged at WARNING and skipped; the others and the result are not
        affected. With ``cache`` False: one request, no member preload,
        nothing cached.

        Returns:
            The servers in the service's order; ``[]`` when none.

        Raises:
            TypeError: ``cache`` is not a bool.
            ServiceAPIError: ``GET /servers`` failed (member fetch failures never raise).
        """
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_SERVERS))
        items = data.get("servers") if isinstance(data, dict) else data
        guilds: list[Guild] = []
        for item in items if isinstance(items, list) else ():
            try:
                guilds.append(Guild(self._state, item))
            except (TypeError, ValueError) as exc:
                log.warning("skipped a malformed server record: %s", exc)
        if not cache:
            return ModelList(guilds)
        for guild in guilds:
            self._store(guild)
        user = self._state.user
        if user is not None and guilds:
            self.preload_members(guilds, user.id)
        return ModelList(guilds)

    def preload_members(self, guilds: list[Guild], user_id: str, **request_options: Any) -> None:
        """Fetch the member ``user_id`` (the bot) of each server in ``guilds`` and cache it.

        The requests go out together (``request_options`` passed to each); a failure is
        logged and skips its server only, and a wait longer than ``PRELOAD_STALL_S`` seconds
        for one answer cancels the rest. Blocks until done; raises nothing.
        """
        state = self._state
        pending: dict[concurrent.futures.Future[Any], str] = {}
        for guild in guilds:
            try:
                future = state.submit(
                    Route(endpoints.GET_MEMBER, server_id=guild.id, user_id=user_id),
                    **request_options,
                )
            except Exception as exc:  # noqa: BLE001 - isolated per server: one failure never fails the rest
                log.warning("bot member fetch for server %s not submitted: %s", guild.id, exc)
                continue
            pending[future] = guild.id
        # Futures complete about in submission order (FIFO queue): waiting on each
        # in turn is O(N), where a wait() over the whole pending set is O(N^2).
        futures = list(pending)
        for index, future in enumerate(futures):
            done, _ = concurrent.futures.wait((future,), timeout=PRELOAD_STALL_S)
            if not done:
                log.warning("bot member preload stalled; %d server(s) skipped", len(futures) - index)
                for rest in futures[index:]:
                    rest.cancel()
                break
            server_id = pending[future]
            try:
                data = future.result(timeout=0)
                if isinstance(data, dict) and isinstance(data.get("member"), dict):
                    data = data["member"]
                state.store_member(data, server_id, cache=True)
            except Exception as exc:  # noqa: BLE001 - isolated per server: one failure never fails the rest
                log.warning("bot member fetch for server %s failed: %s", server_id, exc)

    def create(self, name: str, *, icon_url: str | None = None) -> Guild:
        """Create a server (``POST /servers``) and cache it.

        Args:
            name: The server name.
            icon_url: An icon URL (sent as ``iconUrl``; omitted when None).

        Returns:
            The created :class:`Guild`.

        Raises:
            PermissionError: "Bots cannot create servers." when ``client.user.bot``
                is true, before any request.
            TypeError, ValueError: ``name`` is not a non-empty str or ``icon_url``
                not a str (before any request).
            ServiceAPIError: The service refused.
        """
        user = self._state.user
        if user is not None and user.bot:
            raise PermissionError("Bots cannot create servers.")
        check_id(name, "name")
        body: dict[str, Any] = {"name": name}
        if icon_url is not None:
            if not isinstance(icon_url, str):
                raise TypeError(f"icon_url must be a str or None, got {type(icon_url).__name__}")
            body["iconUrl"] = icon_url
        data = self._state.request(Route(endpoints.CREATE_SERVER), json=body)
        if isinstance(data, dict) and isinstance(data.get("server"), dict):
            data = data["server"]
        guild = Guild(self._state, data)
        self._store(guild)
        return guild

    def begin_reconcile(self) -> None:
        """Start tracking live changes for a reconcile (reader thread, at reconnect).

        Called before any event of the new connection is applied, and paired
        with one :meth:`end_reconcile`.
        """
        with self._live_lock:
            if not self._reconciles:
                self._live_changed = set()
            self._reconciles += 1

    def end_reconcile(self) -> None:
        """Stop the tracking begun by :meth:`begin_reconcile` (once the last reconcile ends)."""
        with self._live_lock:
            self._reconciles = max(0, self._reconciles - 1)
            if not self._reconciles:
                self._live_changed = set()

    def store_live(self, guild: Guild) -> Guild:
        """:meth:`_store` for a live event (``server:joined``); a running reconcile leaves it alone."""
        with self._live_lock:
            if self._reconciles:
                self._live_changed.add(guild.id)
            return self._store(guild)

    def update_live(self, server_id: str, data: dict[str, Any]) -> Guild | None:
        """Patch a cached server from a live ``server:updated``; the patched Guild or None."""
        with self._live_lock:
            if self._reconciles:
                self._live_changed.add(server_id)
            guild = self.cache.get(server_id)
            if guild is not None:
                guild._update(data)
            return guild

    def evict_live(self, server_id: str) -> Guild | None:
        """:meth:`_evict` for a live event (the bot left, or the server was deleted)."""
        with self._live_lock:
            if self._reconciles:
                self._live_changed.add(server_id)
            return self._evict(server_id)

    def apply_reconcile(self, fresh: dict[str, Guild]) -> tuple[list[tuple[str, Guild | None]], list[Guild]]:
        """Bring the cache in line with the service's list after a reconnect.

        Servers no longer listed are evicted; listed ones are stored (new ones
        cached, known ones refreshed in place of the old entry, role and invite
        caches kept). A server changed by a live event since
        :meth:`begin_reconcile` keeps what that event did: the list may
        predate the event, and the event, announced by itself, wins.

        Args:
            fresh: The listed servers by id.

        Returns:
            ``(deleted, joined)``: the evicted server ids with the Guild that
            was cached (or None), and the servers that were not cached before.
        """
        deleted: list[tuple[str, Guild | None]] = []
        with self._live_lock:
            changed = self._live_changed if self._reconciles else set()
            known = set(self.cache.keys())
            for server_id in sorted(known - set(fresh) - changed):
                deleted.append((server_id, self._evict(server_id)))
            joined = [g for sid, g in fresh.items() if sid not in known and sid not in changed]
            for guild in fresh.values():
                if guild.id not in changed:
                    self._store(guild)
        return deleted, joined

    # -- internal -------------------------------------------------------------

    def _store(self, guild: Guild) -> Guild:
        """Insert or overwrite, keeping the previous entry's role and invite caches."""
        with self.cache.atomic():
            previous = self.cache.get(guild.id)
            if previous is not None and previous is not guild:
                guild._adopt(previous)
            self.cache[guild.id] = guild
        return guild

    def _evict(self, server_id: str) -> Guild | None:
        """Remove a server from this cache (the connection state evicts its channels and members)."""
        return self.cache.pop(server_id, None)
