"""``UserProfile``: a user's public profile (``GET /users/{uid}/profile``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._base import Model, as_dict, read_int, read_str
from ._port import StateLike, state_of
from .user import User

__all__ = ["UserProfile"]


class UserProfile(Model):
    """A user's profile: the :class:`User` plus banner, bio and social counts.

    The record is a User record with ``banner``, ``bannerColor``, ``bio``,
    ``followersCount``, ``followingCount`` and ``mutualFriendsCount``, bare or
    under ``user`` (both are accepted).

    Attributes:
        user: The :class:`User` (the cached one when fetched with ``cache=True``).
        banner: Banner image URL, or None.
        banner_color: Banner colour (``"#rrggbb"``), or None.
        bio: The "about me" text, or None.
        followers_count, following_count, mutual_friends_count: Counts (0 when absent).
    """

    __slots__ = ("user", "banner", "banner_color", "bio", "followers_count", "following_count",
                 "mutual_friends_count")

    user: User
    banner: str | None
    banner_color: str | None
    bio: str | None
    followers_count: int
    following_count: int
    mutual_friends_count: int

    def __init__(self, state: StateLike, data: Mapping[str, Any], *, user: User | None = None) -> None:
        """Build from a profile record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The profile record, bare or ``{"user": {...}}``.
            user: The user when already resolved (the cached one).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no user id.
        """
        data = profile_record(as_dict(data, "profile"))
        self._state = state_of(state)
        self.user = user if user is not None else User(self._state, data)
        self.banner = read_str(data, "banner")
        self.banner_color = read_str(data, "bannerColor")
        self.bio = read_str(data, "bio")
        self.followers_count = read_int(data, "followersCount", 0)
        self.following_count = read_int(data, "followingCount", 0)
        self.mutual_friends_count = read_int(data, "mutualFriendsCount", 0)
        self._split(data)

    @property
    def id(self) -> str:
        """The user's id."""
        return self.user.id

    _REPR = ("id", "user")
    _HTML = ("id", "user", "bio", "followers_count", "following_count", "mutual_friends_count")


def profile_record(data: dict[str, Any]) -> dict[str, Any]:
    """The flat profile record: ``data["user"]`` merged with the top-level profile keys when the
    record is wrapped, else ``data`` itself."""
    inner = data.get("user")
    if isinstance(inner, dict):
        merged = dict(inner)
        merged.update({k: v for k, v in data.items() if k != "user"})
        return merged
    return data
