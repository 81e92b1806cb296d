"""``MemberManager``: ``client.members``, the members of every server, keyed by server and user."""

from __future__ import annotations

import logging
from typing import Any

from .. import endpoints
from .._validate import check_cache_flag, check_id
from ..models.collection import Collection, ModelList
from ..models.member import Member, member_ids, member_user_record
from ..rest.route import Route
from .base import BaseManager

__all__ = ["MemberManager"]

log = logging.getLogger(__name__.rpartition(".")[0])

MemberKey = tuple[str, str]


class MemberManager(BaseManager[MemberKey, Member]):
    """The cache of members of every server, keyed by ``(server_id, user_id)``.

    ``cache`` is a :class:`Collection` whose keys are ``(server id, user id)``
    tuples (the membership record's own ``publicId`` is never a key):
    ``client.members.cache[("S1", "U1")]``, or ``client.members.get("S1", "U1")``.
    At ready it holds the bot's own member in every server. Thread-safe.
    """

    __slots__ = ()
    model = Member

    def _key_of(self, obj: Any) -> MemberKey:
        return (obj.server_id, obj.id)

    def get(self, server_id: str, user_id: str | None = None) -> Member | None:  # type: ignore[override]
        """The cached member of ``user_id`` in ``server_id`` (no request), or None.

        Also accepts one ``(server_id, user_id)`` tuple.
        """
        if user_id is None and isinstance(server_id, tuple):
            return self.cache.get(server_id)
        return self.cache.get((server_id, user_id))  # type: ignore[arg-type]

    def resolve(self, id_or_object: Any, user_id: str | None = None) -> Member | None:
        """The cached member for a Member, a ``(server_id, user_id)`` tuple, or two ids."""
        if user_id is not None:
            return self.cache.get((id_or_object, user_id))
        return super().resolve(id_or_object)

    def for_guild(self, server_id: str) -> Collection[str, Member]:
        """The cached members of one server: a snapshot :class:`Collection` keyed by user id.

        No request; iterating gives user ids, ``.values()`` the members.
        """
        return Collection((uid, m) for (sid, uid), m in self.cache.items() if sid == server_id)

    def fetch(self, server_id: str, user_id: str, *, cache: bool = True) -> Member:
        """Fetch one member (``GET /servers/{server_id}/members/{user_id}``).

        Always requests, even when the member is cached.

        Args:
            server_id: The server's public id.
            user_id: The **user** public id (never the membership id).
            cache: Insert or overwrite ``cache[(server_id, user_id)]`` and
                upsert the user into ``client.users``; False writes nothing.

        Returns:
            A new :class:`Member`.

        Raises:
            TypeError, ValueError: An id is not a non-empty str (before any request).
            ServiceAPIError: 404 when the user is not a member, 403 when the
                server is not visible.
        """
        check_id(server_id, "server_id")
        check_id(user_id, "user_id")
        check_cache_flag(cache)
        data = self._state.request(
            Route(endpoints.GET_MEMBER, server_id=server_id, user_id=user_id)
        )
        if isinstance(data, dict) and isinstance(data.get("member"), dict):
            data = data["member"]
        return self.from_record(data, server_id, cache=cache)

    def fetch_all(self, server_id: str, *, cache: bool = True) -> ModelList[Member]:
        """Fetch every member of a server (``GET /servers/{server_id}/members``).

        Accepts ``{"members": [...]}`` and a bare array (the service's form is not
        known for sure). Upserts without purging. A malformed record (not an
        object, no user id) is skipped and logged at DEBUG; the others are kept.

        Args:
            server_id: The server's public id.
            cache: Upsert each member (and its user); False writes nothing.

        Returns:
            The members in the service's order; ``[]`` when none.

        Raises:
            TypeError, ValueError: ``server_id`` is not a non-empty str.
            ServiceAPIError: 403 without VIEW_MEMBERS or not a member.
        """
        check_id(server_id, "server_id")
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.LIST_MEMBERS, server_id=server_id))
        items = data.get("members") if isinstance(data, dict) else data
        out: list[Member] = []
        for index, item in enumerate(items if isinstance(items, list) else ()):
            try:
                out.append(self.from_record(item, server_id, cache=cache))
            except (TypeError, ValueError) as exc:
                log.debug("skipped member record %d of server %s: %s", index, server_id, exc)
        return ModelList(out)

    def edit(
        self,
        server_id: str,
        user_id: str,
        *,
        roles: list[Any] | None = None,
        nickname: Any = ...,
    ) -> None:
        """Change a member's roles and/or nickname (``PATCH /servers/{sid}/members/{uid}``).

        Fire-and-check: the service answers 204; a ``server:member_update``
        event then refetches the member. Not patched locally.

        Args:
            server_id: The server's public id.
            user_id: The user's public id.
            roles: The new full set of roles (Role objects or ids); None leaves it.
            nickname: The new nickname, None to clear; omitted leaves it.

        Raises:
            TypeError, ValueError: Bad ids or role entries (before any request).
            ServiceAPIError: 403 without MANAGE_ROLES, 404.
        """
        check_id(server_id, "server_id")
        check_id(user_id, "user_id")
        body: dict[str, Any] = {}
        if roles is not None:
            if not isinstance(roles, (list, tuple)):
                raise TypeError("roles must be a list of Role objects or ids")
            ids = []
            for role in roles:
                rid = getattr(role, "id", role)
                ids.append(check_id(rid, "roles[]"))
            body["roles"] = ids
        if nickname is not ...:
            if nickname is not None and not isinstance(nickname, str):
                raise TypeError("nickname must be a str or None")
            body["nickname"] = nickname
        if not body:
            raise ValueError("edit needs roles or nickname")
        self._state.request(
            Route(endpoints.EDIT_MEMBER, server_id=server_id, user_id=user_id),
            json=body,
        )

    # -- internal -------------------------------------------------------------

    def from_record(self, data: Any, server_id: str | None, *, cache: bool) -> Member:
        """A Member from a record; with ``cache`` its user is upserted and it is stored.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: No user id or server id.
        """
        if not isinstance(data, dict):
            raise TypeError(f"member must be a JSON object, got {type(data).__name__}")
        sid, uid = member_ids(data, server_id)
        if uid is None:
            raise ValueError("member record has no user id")
        user = self._state.store_user(member_user_record(data, uid), cache=cache)
        member = Member(self._state, data, server_id=sid, user=user)
        if cache:
            self.cache[(member.server_id, member.id)] = member
        return member

    def remove_guild(self, server_id: str) -> None:
        """Evict every member of a server (the bot left it)."""
        with self.cache.atomic():
            for key in [k for k in self.cache.keys() if k[0] == server_id]:
                del self.cache[key]
