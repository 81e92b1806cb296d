"""``guild.channels`` and ``guild.categories``: one server's slice of the channel caches, with
the requests that create channels (overwrites included) and categories.

Both are :class:`Collection` snapshots taken when the property is read (filtered from
``client.channels.cache`` and ``client.channels.categories``), plus methods bound to the server.
"""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .._validate import check_cache_flag, check_name
from ..errors import ChannelOverwriteError, ServiceError
from ..rest.route import Route
from ._overwrites import normalize_overwrites, post_overwrite
from ._port import StateLike, state_of
from .category import Category
from .channel import Channel
from .collection import Collection, ModelList

__all__ = ["GuildCategories", "GuildChannels"]


class GuildChannels(Collection[str, Channel]):
    """The cached channels of one server (a snapshot ``Collection`` keyed by channel id), plus
    :meth:`create` and :meth:`fetch`.

    Reading ``guild.channels`` takes a new snapshot of ``client.channels.cache``; the snapshot
    does not follow later changes. Thread-safe.

    Attributes:
        server_id: The server's id.
    """

    __slots__ = ("_state", "server_id")

    def __init__(self, state: StateLike, server_id: str) -> None:
        """Snapshot the cached channels of ``server_id``."""
        self._state = state_of(state)
        super().__init__((k, ch) for k, ch in self._state.channels.cache.items() if ch.server_id == server_id)
        self.server_id = server_id

    def fetch(self, *, cache: bool = True) -> ModelList[Channel]:
        """Fetch this server's channels: ``client.channels.fetch_for_guild(server_id, cache=cache)``."""
        return self._state.channels.fetch_for_guild(self.server_id, cache=cache)

    def create(
        self,
        name: str,
        *,
        type: str = "TEXT",  # noqa: A002 - the wire name
        category_id: str | Category | None = None,
        private: bool = False,
        overwrites: Any = None,
        cache: bool = True,
    ) -> Channel:
        """Create a channel, then set its permission overwrites one request at a time.

        ``POST /servers/{sid}/channels`` (MANAGE_CHANNELS) first, then one
        ``POST /channels/{id}/overrides`` per overwrite, in the given order: the service has
        no atomic form. Every argument is checked before the first request. Blocks until the
        last answer; thread-safe.

        A ticket channel only its opener and staff may see::

            everyone = guild.roles.everyone          # after guild.roles.fetch_all()
            guild.channels.create("ticket-1", private=True, overwrites={
                everyone: (0, Permissions.VIEW_CHANNELS),
                opener: (Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES, 0),
                staff_role: (["VIEW_CHANNELS", "SEND_MESSAGES"], 0),
                guild.me: (Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES, 0),
            })

        Args:
            name: The channel name (not empty or only whitespace).
            type: ``"TEXT"`` or ``"VOICE"``.
            category_id: The parent category (id or :class:`Category`); the channel starts
                with its overwrites, and is private when it is.
            private: True for a channel visible only to the owner, ``ADMINISTRATOR``
                holders and members an overwrite allows ``VIEW_CHANNELS`` (``isPrivate`` is
                sent only when True).
            overwrites: A mapping from target (a :class:`Role`, :class:`Member`,
                :class:`User`, ``("ROLE" | "MEMBER", id)`` pair or id str) to an
                ``(allow, deny)`` pair or ``{"allow": ..., "deny": ...}``, where each side is
                :class:`Permissions`, an int, a name or a list of them; or a list of
                :class:`PermissionOverwrite` (copied from another channel). None: no overwrite.
            cache: Add the channel to ``client.channels.cache``.

        Returns:
            The created :class:`Channel`.

        Raises:
            TypeError, ValueError: A bad argument (before any request).
            ServiceAPIError: The channel creation was refused (403 without MANAGE_CHANNELS,
                400 bad name or category, 404 unknown server): nothing was created.
            ChannelOverwriteError: The channel was created but an overwrite failed: the error
                names that overwrite (``index``, ``target_type``, ``target_id``), carries the
                kept ``channel`` and chains the request's error as ``__cause__``; the later
                overwrites were not sent.
        """
        state = self._state
        check_name(name, "name")
        check_cache_flag(cache)
        if not isinstance(private, bool):
            raise TypeError(f"private must be a bool, got {type_name(private)}")
        if isinstance(category_id, Category):
            category_id = category_id.id
        specs = normalize_overwrites(state, self.server_id, overwrites)
        channel = state.channels.create(
            self.server_id, name, type=type, category_id=category_id, private=True if private else None,
            cache=cache,
        )
        for index, spec in enumerate(specs):
            try:
                post_overwrite(state, channel.id, spec)
            except ServiceError as exc:
                raise ChannelOverwriteError(channel, channel.id, index, len(specs), spec[0], spec[1], exc) from exc
        return channel


def type_name(value: Any) -> str:
    """The class name of ``value`` (for error messages)."""
    return type(value).__name__


class GuildCategories(Collection[str, Category]):
    """The cached categories of one server (a snapshot ``Collection`` keyed by category id),
    plus :meth:`create` and :meth:`fetch`.

    Reading ``guild.categories`` takes a new snapshot of ``client.channels.categories``, which
    :meth:`fetch` (and ``fetch_for_guild``) fill. Thread-safe.

    Attributes:
        server_id: The server's id.
    """

    __slots__ = ("_state", "server_id")

    def __init__(self, state: StateLike, server_id: str) -> None:
        """Snapshot the cached categories of ``server_id``."""
        self._state = state_of(state)
        super().__init__((k, c) for k, c in self._state.channels.categories.items() if c.server_id == server_id)
        self.server_id = server_id

    def fetch(self, *, cache: bool = True) -> ModelList[Category]:
        """Fetch this server's categories with their channels (one request):
        ``client.channels.fetch_categories(server_id, cache=cache)``."""
        return self._state.channels.fetch_categories(self.server_id, cache=cache)

    def create(self, name: str, *, cache: bool = True) -> Category:
        """Create a category (``POST /servers/{sid}/categories {name}``; MANAGE_CHANNELS).

        Blocks until the service answers; thread-safe. Make it private or add overwrites with
        :meth:`Category.edit` and :meth:`Category.set_overwrite`; channels created in it then
        start with them.

        Args:
            name: The category name (not empty or only whitespace).
            cache: Add it to ``client.channels.categories``.

        Returns:
            The new :class:`Category` (no channels yet).

        Raises:
            TypeError, ValueError: ``name`` is not a str, or is empty or only whitespace
                (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown server.
        """
        check_name(name, "name")
        check_cache_flag(cache)
        data = self._state.request(
            Route(endpoints.CREATE_CATEGORY, server_id=self.server_id), json={"name": name}
        )
        if isinstance(data, dict) and isinstance(data.get("category"), dict):
            data = data["category"]
        category = Category(self._state, data, server_id=self.server_id)
        if cache:
            self._state.channels.categories[category.id] = category
        return category
