"""``Category``: a group of channels in a server, as the categories listing gives it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_name
from ..rest.route import Route
from ._base import Model, as_dict, read_bool, read_id, read_int, read_str
from ._overwrites import check_overwrite, post_overwrite
from ._port import StateLike, state_of
from .channel import Channel
from .collection import Collection
from .overwrite import PermissionOverwrite, delete_overwrite, fetch_overwrites

if TYPE_CHECKING:  # pragma: no cover
    from ._port import State
    from .guild import Guild

__all__ = ["Category"]

class Category(Model):
    """A category of the categories listing.

    Wire keys: ``publicId`` (also ``id``), ``name``, ``position``,
    ``isPrivate``, ``serverPublicId`` (optional), ``channels`` (nested
    Channel records, which carry no server id: it is set from ``server_id``).

    Attributes:
        id, name, position, is_private, server_id: As above.
        channels: The nested channels: a :class:`Collection` of :class:`Channel`
            keyed by channel id, in listing order (iterating gives ids,
            ``.values()`` the channels).
    """

    __slots__ = ("id", "name", "position", "is_private", "server_id", "channels")

    _HTML = ("id", "name", "position", "is_private", "server_id", "channels")

    id: str
    name: str
    position: int
    is_private: bool
    server_id: str | None
    channels: Collection[str, Channel]

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a category record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record or a nested channel has no id.
        """
        data = as_dict(data, "category")
        ident = read_id(data, "publicId", "id", "categoryId")
        if ident is None:
            raise ValueError("category record has no publicId")
        self._state = state_of(state)
        self.id = ident
        self.name = read_str(data, "name") or ""
        self.position = read_int(data, "position", 0)
        self.is_private = read_bool(data, "isPrivate")
        self.server_id = server_id or read_id(data, "serverPublicId", "serverId")
        nested = data.get("channels")
        channels: Collection[str, Channel] = Collection()
        for record in nested if isinstance(nested, list) else []:
            ch = Channel(self._state, record, server_id=self.server_id)
            if ch.category_id is None:
                ch.category_id = ident
            channels[ch.id] = ch
        self.channels = channels
        self._split(data)

    # -- editing, sync, permission overwrites --------------------------------

    def _server(self) -> str:
        if self.server_id is None:
            raise ValueError("this category does not know its server id")
        return self.server_id

    @property
    def guild(self) -> Guild | None:
        """The cached server of this category, or None."""
        return self._cached_guild(self.server_id)

    def edit(self, *, name: str = MISSING, private: bool = MISSING, cache: bool = True) -> Category:
        """Rename this category and/or make it private or public
        (``PATCH /servers/{sid}/categories/{id}``; MANAGE_CHANNELS).

        A category's privacy and overwrites reach its channels when a channel is created in it
        and when :meth:`sync` (or ``Channel.sync``) runs, not before. Only the given keywords
        are sent. Blocks until the service answers (204); thread-safe.

        Args:
            name: The new name (not empty or only whitespace).
            private: True to hide the category from members without an overwrite allowing
                ``VIEW_CHANNELS``.
            cache: Put the returned category in ``client.channels.categories`` in place of this one.

        Returns:
            A new :class:`Category` with the change applied (this object is left as it was).

        Raises:
            TypeError, ValueError: Bad arguments, nothing to change, or no server id (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown category.
        """
        check_cache_flag(cache)
        server_id = self._server()
        body: dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = check_name(name, "name")
        if private is not MISSING:
            if not isinstance(private, bool):
                raise TypeError(f"private must be a bool, got {type(private).__name__}")
            body["isPrivate"] = private
        if not body:
            raise ValueError("edit needs name or private")
        self._state.request(
            Route(endpoints.EDIT_CATEGORY, server_id=server_id, category_id=self.id),
            json=body,
        )
        record = self.raw
        record.update(body)
        record["channels"] = [ch.raw for ch in self.channels.values()]
        updated = Category(self._state, record, server_id=server_id)
        if cache:
            self._state.channels.categories[updated.id] = updated
        return updated

    def delete(self) -> None:
        """Delete this category (``DELETE /servers/{sid}/categories/{id}``; MANAGE_CHANNELS).

        Its channels are not deleted: they become uncategorised. The category leaves
        ``client.channels.categories`` and the cached channels that were in it are replaced by
        copies whose ``category_id`` is None. Blocks; thread-safe.

        Raises:
            ValueError: The category does not know its server id.
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown category.
        """
        server_id = self._server()
        self._state.request(
            Route(endpoints.DELETE_CATEGORY, server_id=server_id, category_id=self.id)
        )
        forget_category(self._state, self.id)

    def sync(self) -> None:
        """Copy this category's overwrites and privacy onto each of its channels
        (``POST /servers/{sid}/categories/{id}/sync``; MANAGE_CHANNELS).

        Each channel's own overwrites are replaced. Blocks until the service answers (204);
        thread-safe. Cached channels are refreshed by the ``guild_channels_update`` event that
        follows.

        Raises:
            ValueError: The category does not know its server id.
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown category.
        """
        server_id = self._server()
        self._state.request(
            Route(endpoints.SYNC_CATEGORY, server_id=server_id,
                  category_id=self.id)
        )

    def overwrites(self) -> list[PermissionOverwrite]:
        """Fetch this category's overwrites (``GET /servers/{sid}/categories/{id}/overrides``).

        Always requests; not cached. Blocks; thread-safe.

        Returns:
            The :class:`PermissionOverwrite` objects, oldest first; ``[]`` when none.

        Raises:
            ValueError: The category does not know its server id.
            ServiceAPIError: 403 for a member who neither holds MANAGE_CHANNELS nor may view
                the category, 404 unknown category.
        """
        return fetch_overwrites(self._state, self.id, category_of=self._server())

    def set_overwrite(self, target: Any, *, allow: Any = 0, deny: Any = 0, type: str | None = None) -> None:  # noqa: A002
        """Create or replace the overwrite of one role or member on this category.

        Sent as ``POST /channels/{id}/overrides`` with the category's id. This is an
        assumption about the service: its documented routes only *list* a category's
        overwrites (``GET /servers/{sid}/categories/{id}/overrides``) and define no route
        that sets one, so this call is verified only against the local emulator, which
        accepts a category id on the channel route. The real service may answer 404.

        Reaches the channels at their creation in the category and at :meth:`sync`.
        Arguments, blocking and errors as :meth:`Channel.set_overwrite`.
        """
        spec = check_overwrite(self._state, self.server_id, target, allow, deny, type)
        post_overwrite(self._state, self.id, spec)

    def delete_overwrite(self, overwrite: str | PermissionOverwrite) -> None:
        """Delete one overwrite of this category (``DELETE /channels/{id}/overrides/{overrideId}``
        with the category's id).

        Like :meth:`set_overwrite`, this is an assumption about the service, verified only
        against the local emulator: the service documents no route that deletes a category's
        overwrite, and may answer 404. Arguments, blocking and errors as
        :meth:`Channel.delete_overwrite`.
        """
        delete_overwrite(self._state, self.id, overwrite)


def forget_category(state: State, category_id: str) -> None:
    """A deleted category: drop it from ``client.channels.categories`` and replace each cached
    channel that was in it by a copy whose ``category_id`` is None."""
    channels = state.channels
    channels.categories.pop(category_id, None)
    cache = channels.cache
    with cache.atomic():
        for key, channel in cache.items():
            if channel.category_id == category_id:
                record = channel.raw
                record["categoryId"] = None
                cache[key] = channel._rebuilt(record)
