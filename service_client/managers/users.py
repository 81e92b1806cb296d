"""``UserManager``: ``client.users``, the cache of every user the client has met."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from .. import endpoints
from .._defaults import MISSING
from .._validate import check_cache_flag, check_id
from ..errors import ServiceAPIError
from ..models._base import read_id
from ..models._port import StateLike
from ..models.guild import Guild
from ..models.profile import UserProfile, profile_record
from ..models.user import User
from ..rest.route import Route
from .base import BaseManager

__all__ = ["UserManager"]

#: Most webhook ids remembered (oldest forgotten first) to tell webhook authors from users.
KNOWN_WEBHOOKS_MAX = 10_000


class UserManager(BaseManager[str, User]):
    """The cache of every user met (message authors, members, DM recipients).

    A cached :class:`User` is updated in place by ``user:update`` and
    ``presence:update``, so members and messages that share it see the change.
    ``cache`` is keyed by user id. Thread-safe.

    The author of a message posted through a webhook is not a user: its id is
    the webhook's and its name may differ on every message, so it is never
    cached here (each such message has its own :class:`User`).
    """

    __slots__ = ("_webhook_ids", "_webhook_lock")
    model = User

    def __init__(self, state: StateLike) -> None:
        """Create the empty user cache."""
        super().__init__(state)
        self._webhook_ids: OrderedDict[str, None] = OrderedDict()
        self._webhook_lock = threading.Lock()

    def fetch(self, user_id: str, *, cache: bool = True) -> User:
        """Fetch a user (``GET /users/{user_id}``).

        Args:
            user_id: The user's public id.
            cache: Upsert the user into ``cache`` (the cached object is updated in place).

        Returns:
            The user (the cached object when ``cache`` is True).

        Raises:
            TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
            ServiceAPIError: The service refused (404 unknown user).
        """
        check_id(user_id, "user_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.GET_USER, user_id=user_id))
        if isinstance(data, dict) and isinstance(data.get("user"), dict):
            data = data["user"]
        return self.from_record(data, cache=cache)

    def fetch_profile(self, user_id: str, *, cache: bool = True) -> UserProfile:
        """Fetch a user's profile (``GET /users/{user_id}/profile``): the user plus banner, bio and counts.

        Blocks. The record may come bare or under ``user``; both are read.

        Args:
            user_id: The user's public id.
            cache: Upsert the user into :attr:`cache` (``profile.user`` is then
                the cached object); False writes nothing.

        Returns:
            The :class:`UserProfile`.

        Raises:
            TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
            ServiceAPIError: 404 unknown user; or a success whose body is not a JSON
                object (an empty body, a list...): ``status`` 200 (the exact 2xx code is
                not kept), ``body`` the answer as JSON text, ``data`` the parsed answer;
                as for a success whose body is not JSON at all. Nothing is cached then.
        """
        check_id(user_id, "user_id")
        check_cache_flag(cache)
        profile_route = Route(endpoints.GET_PROFILE, user_id=user_id)
        data = self._state.request(profile_route)
        if not isinstance(data, dict):
            text = "" if data is None else json.dumps(data)
            raise ServiceAPIError(
                200, profile_route.display_path, text, data,
                message=f"API Error 200: the profile answer is not a JSON object (got {_json_kind(data)})",
            )
        record = profile_record(data)
        user = self.from_record({k: v for k, v in record.items() if k in _USER_KEYS}, cache=cache)
        return UserProfile(self._state, record, user=user)

    def mutual_servers(self, user_id: str) -> list[Guild]:
        """The servers the bot shares with a user (``GET /users/{user_id}/mutual-servers``). Blocks.

        Args:
            user_id: The user's public id.

        Returns:
            Partial :class:`Guild` objects (``id``, ``name``, ``icon``; other
            fields empty), not cached: the full ones are in
            ``client.guilds.cache``. ``[]`` when none.

        Raises:
            TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
            ServiceAPIError: 404 unknown user.
        """
        check_id(user_id, "user_id")
        data = self._state.request(Route(endpoints.GET_MUTUAL_SERVERS, user_id=user_id))
        items = data.get("mutualServers") if isinstance(data, dict) else data
        out: list[Guild] = []
        for item in items if isinstance(items, list) else ():
            try:
                out.append(Guild(self._state, item))
            except (TypeError, ValueError):
                continue
        return out

    def note_webhook(self, webhook_id: str) -> None:
        """Remember that ``webhook_id`` is a webhook (its messages' author is no user).

        A pseudo-user cached under that id before (a message from a service that does not
        mark webhook messages) is dropped from :attr:`cache`. Thread-safe.
        """
        with self._webhook_lock:
            ids = self._webhook_ids
            ids[webhook_id] = None
            ids.move_to_end(webhook_id)
            while len(ids) > KNOWN_WEBHOOKS_MAX:
                ids.popitem(last=False)
        self.cache.pop(webhook_id, None)

    def is_webhook(self, user_id: str | None) -> bool:
        """Whether ``user_id`` is the id of a webhook this client has met. Thread-safe."""
        if user_id is None or not self._webhook_ids:
            return False
        with self._webhook_lock:
            return user_id in self._webhook_ids

    def from_record(self, data: Any, *, cache: bool) -> User:
        """A User for a record: the upserted cached one with ``cache``, else a new one."""
        if cache:
            return self.upsert(data)
        return User(self._state, data)

    def upsert(self, data: Mapping[str, Any]) -> User:
        """Insert a user, or update the cached one in place and return it.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        if isinstance(data, dict):  # the common case, a known author: no new User built
            ident = data.get("publicId")
            if type(ident) is not str:
                ident = read_id(data, "publicId", "id", "userPublicId", "userId")
            known = self.cache.get(ident or "")
            if known is not None:
                if not known._is_record(data):
                    _merge_into(known, data)  # a record's raw form is the record itself
                return known
        user = User(self._state, data)
        with self.cache.atomic():
            existing = self.cache.get(user.id)
            if existing is None:
                self.cache[user.id] = user
                return user
        _merge_into(existing, user.raw)
        return existing

    def _add(self, user: User) -> User:
        """Insert ``user`` unless one with its id is cached; return the cached one."""
        with self.cache.atomic():
            existing = self.cache.get(user.id)
            if existing is None:
                self.cache[user.id] = user
                return user
        return existing


#: The keys of a User record, as kept from a profile record for the user itself.
_USER_KEYS = frozenset({"publicId", "id", "name", "tag", "image", "isBot", "status", "createdAt"})


def _json_kind(data: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if data is None:
        return "an empty body"
    if isinstance(data, bool):
        return "a boolean"
    if isinstance(data, list):
        return "an array"
    if isinstance(data, str):
        return "a string"
    if isinstance(data, (int, float)):
        return "a number"
    return type(data).__name__


def _merge_into(user: User, data: dict[str, Any]) -> None:
    """Merge a (possibly partial) record into a cached user, only when it changes something.

    Keys absent from ``data`` keep their cached value (a message author
    without ``status`` does not reset the presence).
    """
    if user._is_record(data):  # the record the user was built from: the usual repeated author
        return
    old = user.raw
    if all(old.get(k, MISSING) == v for k, v in data.items()):
        return
    merged = dict(old)
    merged.update(data)
    user._parse(merged)
