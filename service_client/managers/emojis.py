"""``EmojiManager``: the custom emojis of one server (``guild.emojis``)."""

from __future__ import annotations

import logging
import re
from typing import Any

from .. import endpoints
from .._validate import check_cache_flag, check_id
from ..models._port import StateLike
from ..models.collection import ModelList
from ..models.emoji import Emoji
from ..rest.route import Route
from .base import BaseManager

__all__ = ["EMOJI_NAME_RE", "EmojiManager"]

log = logging.getLogger(__name__.partition(".")[0] + ".managers")  # the managers' logger

#: A valid custom emoji name: 2 to 32 letters, digits or underscores.
EMOJI_NAME_RE = re.compile(r"[A-Za-z0-9_]{2,32}")


class EmojiManager(BaseManager[str, Emoji]):
    """The custom emojis of one server, keyed by emoji id (``guild.emojis``).

    Empty until :meth:`fetch_all`; :meth:`create` and :meth:`delete` keep it
    in step with what this client changes (the service sends no emoji events,
    so changes made elsewhere show only after the next :meth:`fetch_all`).
    Thread-safe.

    Attributes:
        server_id: The server these emojis belong to.
    """

    __slots__ = ("server_id",)
    model = Emoji

    def __init__(self, state: StateLike, server_id: str) -> None:
        """Create the empty emoji cache of ``server_id``."""
        super().__init__(state)
        self.server_id = server_id

    def fetch_all(self, *, cache: bool = True) -> ModelList[Emoji]:
        """List the server's custom emojis (``GET /servers/{sid}/emojis``). Blocks.

        A malformed record (not an object, no id) is skipped and logged at DEBUG; the others
        are kept.

        Args:
            cache: Upsert every emoji into :attr:`cache` (never purges).

        Returns:
            The emojis in the service's order; ``[]`` when none.

        Raises:
            TypeError: ``cache`` is not a bool.
            ServiceAPIError: 403 not a member, 404 unknown server.
            ServiceTimeoutError: The last attempt timed out.
        """
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_EMOJIS, server_id=self.server_id))
        items = data.get("emojis") if isinstance(data, dict) else data
        emojis: list[Emoji] = []
        for index, item in enumerate(items if isinstance(items, list) else ()):
            try:
                emojis.append(Emoji(self._state, item, server_id=self.server_id))
            except (TypeError, ValueError) as exc:
                log.debug("skipped emoji record %d of server %s: %s", index, self.server_id, exc)
        if cache:
            self.cache.update((emoji.id, emoji) for emoji in emojis)
        return ModelList(emojis)

    def create(self, name: str, image_url: str, *, animated: bool = False, cache: bool = True) -> Emoji:
        """Create a custom emoji (``POST /servers/{sid}/emojis``; needs MANAGE_SERVER).

        Blocks until the service answered. Sends ``{name, imageUrl, isAnimated}``.

        Args:
            name: 2 to 32 characters of ``[A-Za-z0-9_]``, checked before any request.
            image_url: The image URL.
            animated: True for an animated image.
            cache: Add the emoji to :attr:`cache`; False writes nothing.

        Returns:
            The created :class:`Emoji`.

        Raises:
            TypeError: An argument of the wrong type (before any request).
            ValueError: ``name`` is not 2 to 32 letters, digits or underscores, or
                ``image_url`` is empty (before any request).
            ServiceAPIError: 403 without MANAGE_SERVER, 409 name already used, 400 refused.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        if not EMOJI_NAME_RE.fullmatch(name):
            raise ValueError(f"name must be 2 to 32 letters, digits or underscores, got {name!r}")
        check_id(image_url, "image_url")
        if not isinstance(animated, bool):
            raise TypeError(f"animated must be a bool, got {type(animated).__name__}")
        check_cache_flag(cache)
        body: dict[str, Any] = {"name": name, "imageUrl": image_url, "isAnimated": animated}
        data = self._state.request(
            Route(endpoints.CREATE_EMOJI, server_id=self.server_id), json=body
        )
        if isinstance(data, dict) and isinstance(data.get("emoji"), dict):
            data = data["emoji"]
        emoji = Emoji(self._state, data, server_id=self.server_id)
        if cache:
            self.cache[emoji.id] = emoji
        return emoji

    def delete(self, emoji_id: str | Emoji) -> None:
        """Delete a custom emoji (``DELETE /servers/{sid}/emojis/{eid}``) and drop it from the cache.

        Blocks until the service answered.

        Args:
            emoji_id: The emoji's id, or the :class:`Emoji`.

        Raises:
            TypeError, ValueError: Not a non-empty id (before any request).
            ServiceAPIError: 403 without MANAGE_SERVER, 404 unknown emoji.
        """
        eid = emoji_id.id if isinstance(emoji_id, Emoji) else emoji_id
        check_id(eid, "emoji_id")
        self._state.request(
            Route(endpoints.DELETE_EMOJI, server_id=self.server_id, emoji_id=eid)
        )
        self.cache.pop(eid, None)

    def __repr__(self) -> str:
        return f"<EmojiManager server_id={self.server_id!r} cached={len(self.cache)}>"
