"""``ChannelManager``: ``client.channels``, one cache of the channels of every server and DM."""

from __future__ import annotations

import logging
import threading
from typing import Any

from .. import _defaults, endpoints
from .._validate import check_cache_flag, check_id, check_name
from ..models._port import State, StateLike
from ..models.category import Category
from ..models.channel import Channel
from ..models.collection import Collection, ModelList
from ..models.dm_channel import DMChannel
from ..rest.route import Route
from .base import BaseManager

__all__ = ["ChannelManager", "build_channel"]

log = logging.getLogger(__name__.rpartition(".")[0])

#: Longest wait for a server's channel listing that another thread asked for, seconds: the
#: request's attempts with their timeouts, plus a margin.
_LISTING_WAIT_S = (_defaults.EVENT_FETCH_MAX_RETRIES + 1) * _defaults.EVENT_FETCH_TIMEOUT_MS / 1000 + 5

#: Channel types the service lets a client create (``POST /servers/{sid}/channels``).
CREATABLE_TYPES = ("TEXT", "VOICE")


def build_channel(state: State, data: Any) -> Channel:
    """A :class:`DMChannel` for a DM record (``type`` DM or a ``recipient``), else a :class:`Channel`.

    Raises:
        TypeError: ``data`` is not a dict.
        ValueError: The record has no id.
    """
    if isinstance(data, dict) and (data.get("type") == "DM" or isinstance(data.get("recipient"), dict)):
        recipient = data.get("recipient")
        user = state.store_user(recipient, cache=False) if isinstance(recipient, dict) else None
        return DMChannel(state, data, recipient=user)
    return Channel(state, data)


class ChannelManager(BaseManager[str, Channel]):
    """One global cache of channels from every server (and DMs), keyed by channel id.

    Empty at ready; filled by :meth:`fetch`, :meth:`fetch_for_guild` and
    ``create_dm``, and for a server the first time one of its channels is needed
    (:meth:`get_or_list`: ``message.channel``, ``ctx.channel``, ``ReactionEvent.channel``).
    Thread-safe.
    """

    __slots__ = ("categories", "_listed", "_listed_lock")
    model = Channel

    def __init__(self, state: StateLike) -> None:
        """Create the empty channel cache and the empty category cache."""
        super().__init__(state)
        #: Servers whose listing was asked for by :meth:`get_or_list`: set once it is applied
        #: (or failed). Guarded by ``_listed_lock``.
        self._listed: dict[str, threading.Event] = {}
        self._listed_lock = threading.Lock()
        #: Every cached :class:`Category` of every server, keyed by category id: filled by
        #: :meth:`fetch_for_guild`, :meth:`fetch_categories` and ``guild.categories.create``,
        #: kept fresh by the ``guild_channels_update`` / ``guild_categories_update`` events.
        #: Thread-safe.
        self.categories: Collection[str, Category] = Collection()

    def fetch(self, channel_id: str, *, cache: bool = True) -> Channel:
        """Fetch one channel (``GET /channels/{channel_id}``); a new Channel each call.

        Always requests, even when the channel is cached.

        Args:
            channel_id: The channel's public id.
            cache: Overwrite the cache entry.

        Returns:
            A new :class:`Channel` (a :class:`DMChannel` for a DM).

        Raises:
            TypeError, ValueError: ``channel_id`` is not a non-empty str (before any request).
            ServiceAPIError: 404 unknown channel, 403 not accessible.
        """
        check_id(channel_id, "channel_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.GET_CHANNEL, channel_id=channel_id))
        if isinstance(data, dict) and isinstance(data.get("channel"), dict):
            data = data["channel"]
        channel = build_channel(self._state, data)
        if cache:
            if isinstance(channel, DMChannel) and channel.recipient is not None:
                channel.recipient = self._state.users.cache.setdefault(channel.recipient.id, channel.recipient)
            self.cache[channel.id] = channel
        return channel

    def get_or_list(self, channel_id: str | None, server_id: str | None) -> Channel | None:
        """The cached channel; when it is not cached, the channels of its server are listed
        first, once: **may block** the first time.

        The listing (``GET /servers/{server_id}/categories``, one request) is asked for at most
        once per server while it succeeds, by the first caller that needs a channel of that
        server; callers that need one meanwhile wait for it (at most about 30 s, the request's
        timeout and retries). Then the server's channels are cached and kept fresh by the
        channel events, like those of :meth:`fetch_for_guild`. Nothing is asked for a DM, for a
        server that is not among the bot's cached servers, or for a channel not in the listing
        (hidden from the bot: the answer is None, with no further request).

        Args:
            channel_id: The channel's id (None gives None).
            server_id: Its server's id; None for a DM (then only the cache is read).

        Returns:
            The :class:`Channel`, or None when it is not cached and the listing did not bring it
            (or failed: logged at WARNING, and asked again at the next need).
        """
        if channel_id is None:
            return None
        found = self.cache.get(channel_id)
        if found is not None or server_id is None or server_id not in self._state.guilds.cache:
            return found
        with self._listed_lock:
            done = self._listed.get(server_id)
            owner = done is None
            if done is None:
                done = self._listed[server_id] = threading.Event()
        if owner:
            try:
                data = self._state.request(Route(endpoints.LIST_CATEGORIES, server_id=server_id),
                                           timeout_ms=_defaults.EVENT_FETCH_TIMEOUT_MS,
                                           retry=_defaults.EVENT_FETCH_MAX_RETRIES)
                self.apply_listing(server_id, data)
            except Exception as exc:  # noqa: BLE001 - a property's lookup: None, and a later need asks again
                log.warning("channel listing of server %s failed: %s", server_id, exc)
                with self._listed_lock:
                    self._listed.pop(server_id, None)
            finally:
                done.set()
        else:
            done.wait(_LISTING_WAIT_S)
        return self.cache.get(channel_id)

    def fetch_for_guild(self, server_id: str, *, cache: bool = True) -> ModelList[Channel]:
        """Fetch every channel of a server with one request to its categories listing
        (``GET /servers/{server_id}/categories``, the only route that lists a server's channels).

        Thread-safe.

        Args:
            server_id: The server's public id.
            cache: Write every returned channel into ``client.channels.cache`` (and the
                categories into ``client.channels.categories``; no purge).

        Returns:
            Categorized channels in category order, then uncategorized ones, each
            with ``server_id`` set; an empty list, never None.

        Raises:
            TypeError, ValueError: ``server_id`` is not a non-empty str (before any request).
            ServiceAPIError: The service refused (404 unknown server, 403 not a member).
        """
        channels = [ch for cat in self._fetch_listing(server_id, cache) for ch in cat]
        return ModelList(channels)

    def fetch_categories(self, server_id: str, *, cache: bool = True) -> ModelList[Category]:
        """Fetch a server's categories with their channels (one request to the categories listing).

        Args:
            server_id: The server's public id.
            cache: Write every channel into ``client.channels.cache`` and every category into
                ``client.channels.categories`` (no purge).

        Returns:
            The categories in order (uncategorized channels are not included).

        Raises:
            TypeError, ValueError, ServiceAPIError: As :meth:`fetch_for_guild`.
        """
        check_id(server_id, "server_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_CATEGORIES, server_id=server_id))
        categories, uncategorized = self._parse_listing(data, server_id)
        if cache:
            self._store_all([ch for cat in categories for ch in cat.channels.values()] + uncategorized)
            self.categories.update((cat.id, cat) for cat in categories)
        return ModelList(categories)

    def _fetch_listing(self, server_id: str, cache: bool) -> list[list[Channel]]:
        check_id(server_id, "server_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_CATEGORIES, server_id=server_id))
        categories, uncategorized = self._parse_listing(data, server_id)
        groups = [cat.channels.values() for cat in categories] + [uncategorized]
        if cache:
            self._store_all([ch for group in groups for ch in group])
            self.categories.update((cat.id, cat) for cat in categories)
        return groups

    def _parse_listing(self, data: Any, server_id: str) -> tuple[list[Category], list[Channel]]:
        categories: list[Category] = []
        uncategorized: list[Channel] = []
        if isinstance(data, dict):
            for item in data.get("categories") or ():
                categories.append(Category(self._state, item, server_id=server_id))
            for item in data.get("uncategorizedChannels") or ():
                uncategorized.append(Channel(self._state, item, server_id=server_id))
        return categories, uncategorized

    def create(
        self,
        server_id: str,
        name: str,
        *,
        type: str = "TEXT",  # noqa: A002 - the wire name
        category_id: str | None = None,
        private: bool | None = None,
        cache: bool = True,
    ) -> Channel:
        """Create a channel (``POST /servers/{server_id}/channels``; MANAGE_CHANNELS) and cache it.

        Blocks until the service answers; thread-safe. See also
        ``guild.channels.create``, which also sets permission overwrites.

        Args:
            server_id: The server's public id.
            name: The channel name (not empty or only whitespace).
            type: ``"TEXT"`` or ``"VOICE"``.
            category_id: The parent category (sent only when given). The channel starts with
                the category's overwrites, and is private when the category is.
            private: Sent as ``isPrivate`` only when given (None sends nothing). A private
                channel is visible only to the owner, ``ADMINISTRATOR`` holders and members an
                overwrite allows ``VIEW_CHANNELS``.
            cache: Add the channel to ``client.channels.cache``.

        Returns:
            The created :class:`Channel`.

        Raises:
            TypeError, ValueError: Bad arguments, such as a name that is only whitespace
                (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 400 refused, 404 unknown server.
        """
        check_id(server_id, "server_id")
        check_name(name, "name")
        check_cache_flag(cache)
        if type not in CREATABLE_TYPES:
            raise ValueError(f"type must be one of {CREATABLE_TYPES}, got {type!r}")
        body: dict[str, Any] = {"name": name, "type": type}
        if category_id is not None:
            body["categoryId"] = check_id(category_id, "category_id")
        if private is not None:
            if not isinstance(private, bool):
                raise TypeError(f"private must be a bool or None, got {type_name(private)}")
            body["isPrivate"] = private
        data = self._state.request(
            Route(endpoints.CREATE_CHANNEL, server_id=server_id), json=body
        )
        if isinstance(data, dict) and isinstance(data.get("channel"), dict):
            data = data["channel"]
        channel = Channel(self._state, data, server_id=server_id)
        if cache:
            self.cache[channel.id] = channel
        return channel

    # -- internal -------------------------------------------------------------

    def _store_all(self, channels: list[Channel]) -> None:
        self.cache.update((ch.id, ch) for ch in channels)

    def remove_guild(self, server_id: str) -> None:
        """Evict every channel of a server (the bot left it); a later need lists them again."""
        with self._listed_lock:
            self._listed.pop(server_id, None)
        with self.cache.atomic():
            for key in [k for k, ch in self.cache.items() if ch.server_id == server_id]:
                del self.cache[key]
        with self.categories.atomic():
            for key in [k for k, cat in self.categories.items() if cat.server_id == server_id]:
                del self.categories[key]

    # -- cache upkeep for channel and category events ------------------------

    def tracks_guild(self, server_id: str) -> bool:
        """Whether any channel or category of a cached server is cached (then events refresh it)."""
        if server_id not in self._state.guilds.cache:
            return False
        return any(ch.server_id == server_id for ch in self.cache.values()) or any(
            cat.server_id == server_id for cat in self.categories.values()
        )

    def apply_listing(self, server_id: str, data: Any) -> None:
        """Replace a server's cached channels and categories by a listing answer: the listing holds exactly what the bot may
        view now, so cached channels and categories of that server missing from it (deleted,
        or hidden from the bot) are evicted.

        Raises:
            TypeError, ValueError: The listing is malformed (the caches are left as they were).
        """
        categories, uncategorized = self._parse_listing(data, server_id)
        channels = [ch for cat in categories for ch in cat.channels.values()] + uncategorized
        keep = {ch.id for ch in channels}
        with self.cache.atomic():
            for key in [k for k, ch in self.cache.items() if ch.server_id == server_id and k not in keep]:
                del self.cache[key]
            self._store_all(channels)
        keep_cats = {cat.id for cat in categories}
        with self.categories.atomic():
            for key in [k for k, cat in self.categories.items()
                        if cat.server_id == server_id and k not in keep_cats]:
                del self.categories[key]
            self.categories.update((cat.id, cat) for cat in categories)


def type_name(value: Any) -> str:
    """The class name of ``value`` (for error messages)."""
    return type(value).__name__
