"""``Member``: a user's membership of one server, its roles and permissions."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from .. import endpoints
from .._validate import check_id
from ..errors import ServiceError
from ..permissions import ALL, Permissions
from ..rest.route import Route
from . import _moderation
from ._base import Model, as_dict, pack_time, parse_time, read_id, read_str, time_of_ms, unpack_time
from ._port import StateLike, state_of
from .collection import Collection
from .role import Role
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from .guild import Guild
    from .voice_state import VoiceState

__all__ = ["ROLE_EDIT_ATTEMPTS", "Member", "RemovedMember", "member_ids"]

_intern = sys.intern


def member_ids(data: Mapping[str, Any], server_id: str | None = None) -> tuple[str | None, str | None]:
    """The (server id, user id) of a member record, nested or flat (both shapes the service sends).

    User id: ``userId``, else ``user.publicId``, else (flat shape) ``publicId``.
    Server id: ``serverPublicId``, else ``serverId``, else ``server_id`` (the
    event envelope).
    """
    user = data.get("user")
    uid = read_id(data, "userId", "userPublicId")
    if uid is None and isinstance(user, dict):
        uid = read_id(user, "publicId", "id")
    if uid is None and not isinstance(user, dict):
        uid = read_id(data, "publicId", "id")
    sid = read_id(data, "serverPublicId", "serverId") or server_id
    return sid, uid


#: Shared role tuples: members with the same roles (embedded records equal)
#: share one tuple and one dict per role. Bounded: cleared when full.
_ROLE_SETS: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_ROLE_SETS_MAX = 8192

#: Writes :meth:`Member.add_roles` and :meth:`Member.remove_roles` make at most when other
#: changes keep landing between their read and their write.
ROLE_EDIT_ATTEMPTS = 3
#: Longest wait of one role change for its turn and its requests, seconds (each request has
#: its own REST bounds, and a change waits for those queued before it).
ROLE_EDIT_WAIT_S = 600.0


def _share_roles(entries: list[Any]) -> tuple[Any, ...]:
    """The role entries as a shared tuple (id strings interned, equal role dicts shared).

    The shared dicts are never mutated: :attr:`Member.raw` copies them.
    """
    try:
        # Value types are part of the key: True == 1 must not share a record.
        key = tuple(
            tuple((k, type(v), v) for k, v in e.items()) if isinstance(e, dict) else (type(e), e)
            for e in entries
        )
        hash(key)
    except TypeError:  # an unhashable value inside a role record: no sharing
        return tuple(entries)
    shared = _ROLE_SETS.get(key)
    if shared is None:
        if len(_ROLE_SETS) >= _ROLE_SETS_MAX:
            _ROLE_SETS.clear()
        shared = tuple(_intern(e) if isinstance(e, str) else e for e in entries)
        _ROLE_SETS[key] = shared
    return shared


class Member(Model):
    """A member of a server, keyed by (server id, user id) everywhere (one user is a member of many servers).

    Accepts the nested shape ``{publicId (membership), userId, user,
    serverPublicId, roles, joinedAt, nickname, isOwner}`` and the flat shape
    ``{publicId (user), name, tag, image?, isBot}``.

    Roles: :attr:`roles` resolves each role id through ``guild.roles`` first
    (so role events keep permissions true), falling back to the copy embedded
    in this member's record; bare id strings unknown to ``guild.roles`` grant
    nothing. Embedded copies are not refreshed by role events:
    only roles present in ``guild.roles`` are.

    Memory: the nested ``user`` record is not kept (``raw["user"]`` is the
    shared :class:`User`'s record), the role list is one tuple shared by all
    members with the same roles, ``joinedAt`` is kept as epoch ms.

    Attributes:
        id: The user id.
        server_id: The server id.
        user: The :class:`User` (the cached one when the manager built it).
        nickname: The server nickname, or None.
    """

    __slots__ = ("id", "server_id", "user", "nickname", "_mid", "_roles", "_joined", "_owner")

    _WIRE = (
        ("publicId", "_mid"),
        ("userId", "id"),
        ("user", "_wire_user"),
        ("serverPublicId", "server_id"),
        ("roles", "_wire_roles"),
        ("joinedAt", "_wire_joined"),
        ("nickname", "nickname"),
        ("isOwner", "_owner"),
    )
    _FORCE_USER = 1 << 2
    _FORCE_ROLES = 1 << 4
    _FORCE_JOINED = 1 << 5

    id: str
    server_id: str
    user: User
    nickname: str | None
    _mid: str | None
    _roles: tuple[Any, ...]
    _joined: float | None
    _owner: bool

    def __init__(
        self,
        state: StateLike,
        data: Mapping[str, Any],
        *,
        server_id: str | None = None,
        user: User | None = None,
    ) -> None:
        """Build from a member record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The member record (nested or flat).
            server_id: The server when the record lacks ``serverPublicId``.
            user: The already resolved user (shared with ``client.users``).

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: No user id or no server id can be found.
        """
        data = as_dict(data, "member")
        sid, uid = member_ids(data, server_id)
        if uid is None:
            raise ValueError("member record has no user id")
        if sid is None:
            raise ValueError("member record has no server id")
        self._state = state_of(state)
        self.id = uid
        self.server_id = sid
        nested = data.get("user")
        if user is None:
            user = User(self._state, member_user_record(data, uid))
        self.user = user
        force = 0
        if isinstance(nested, dict) and read_id(nested, "publicId", "id") == uid:
            force |= self._FORCE_USER
        if isinstance(nested, dict) or "userId" in data:
            mid = data.get("publicId")
            if not isinstance(mid, str) or not mid:
                mid = read_str(data, "id") or None
            self._mid = mid
        else:
            self._mid = None
        nickname = data.get("nickname")
        self.nickname = nickname if isinstance(nickname, str) else None
        entries = data.get("roles")
        if isinstance(entries, list):
            self._roles = _share_roles(entries)
            force |= self._FORCE_ROLES
        else:
            self._roles = ()
        self._joined = pack_time(data.get("joinedAt"))
        if self._joined is not None:  # pack_time checked that it rebuilds the text
            force |= self._FORCE_JOINED
        owner = data.get("isOwner")
        self._owner = owner if isinstance(owner, bool) else False
        self._split(data, force)

    # -- wire values rebuilt for raw ------------------------------------------

    @property
    def _wire_user(self) -> dict[str, Any]:
        return self.user.raw

    @property
    def _wire_roles(self) -> list[Any]:
        return [dict(e) if isinstance(e, dict) else e for e in self._roles]

    @property
    def _wire_joined(self) -> str | None:
        return unpack_time(self._joined) if self._joined is not None else None

    # -- fields ------------------------------------------------------------------

    @property
    def membership_id(self) -> str | None:
        """The membership's own ``publicId`` (nested shape only), never used as a key."""
        return self._mid

    @property
    def display_name(self) -> str:
        """The nickname, else the username."""
        return self.nickname or self.user.username

    @property
    def joined_at(self) -> datetime | None:
        """When the user joined (UTC), or None when missing."""
        if self._joined is not None:
            return time_of_ms(self._joined)
        return parse_time(self._extra_get("joinedAt"))

    @property
    def is_owner(self) -> bool:
        """True when the user owns the server (record flag or the guild's ``owner_id``)."""
        guild = self.guild
        if guild is not None and guild.owner_id is not None:
            return guild.owner_id == self.id
        return self._owner

    @property
    def guild(self) -> Guild | None:
        """The cached server, or None."""
        return self._cached_guild(self.server_id)

    @property
    def role_ids(self) -> list[str]:
        """The ids of this member's roles, in record order."""
        out: list[str] = []
        for entry in self._roles:
            if isinstance(entry, str) and entry:
                out.append(entry)
            elif isinstance(entry, dict):
                rid = read_id(entry, "publicId", "id")
                if rid is not None:
                    out.append(rid)
        return out

    @property
    def roles(self) -> Collection[str, Role]:
        """This member's roles: a new :class:`Collection` keyed by role id, in record order.

        Like every cached accessor it is a dict: iterating gives role ids, use
        ``.values()`` for the :class:`Role` objects. Each id resolves through
        the cached guild's ``roles`` cache first, else the embedded record; a
        bare id unknown to the cache is left out. No request.
        """
        guild = self.guild
        cached = guild.roles.cache if guild is not None else {}
        out: Collection[str, Role] = Collection()
        for entry in self._roles:
            if isinstance(entry, str):
                role = cached.get(entry)
                if role is not None:
                    out[role.id] = role
            elif isinstance(entry, dict):
                rid = read_id(entry, "publicId", "id")
                if rid is None:
                    continue
                role = cached.get(rid)
                if role is None:
                    try:
                        role = Role(self._state, entry, server_id=self.server_id)
                    except (TypeError, ValueError):
                        continue
                out[role.id] = role
        return out

    @property
    def permissions(self) -> Permissions:
        """The member's server-wide permissions.

        0 when the server is not cached; ALL for the owner; else the OR of the
        role objects, and ALL when that includes ADMINISTRATOR. Channel
        overrides are ignored.
        """
        guild = self.guild
        if guild is None:
            return Permissions(0)
        if guild.owner_id is not None and guild.owner_id == self.id:
            return ALL
        value = 0
        for role in self.roles.values():
            value |= int(role.permissions)
        if value & Permissions.ADMINISTRATOR:
            return ALL
        return Permissions(value)

    def has_permission(self, *permissions: str | int | Permissions) -> bool:
        """True when the member holds every given permission.

        Args:
            *permissions: Names (``"MANAGE_INVITES"``, case-insensitive),
                :class:`Permissions` flags or int bitfields; all must be held.

        Returns:
            Whether :attr:`permissions` contains all of them.

        Raises:
            ValueError: No argument, an unknown name, or a negative int.
            TypeError: An argument of another type.
        """
        if not permissions:
            raise ValueError("has_permission requires at least one permission")
        wanted = 0
        for item in permissions:
            wanted |= int(Permissions.resolve(item))
        return (int(self.permissions) & wanted) == wanted

    @property
    def voice(self) -> VoiceState | None:
        """This user's voice state from ``client.voice_states``, or None.

        None as well when the state's channel is cached and belongs to another server.
        """
        state = self._state.voice_states.cache.get(self.id)
        if state is None:
            return None
        channel = self._state.channels.cache.get(state.channel_id) if state.channel_id else None
        if channel is not None and channel.server_id not in (None, self.server_id):
            return None
        return state

    @property
    def mention(self) -> str:
        """The mention text ``<@user id>``."""
        return f"<@{self.id}>"

    def _drop_role(self, role_id: str) -> None:
        """Forget a deleted role (``server:role_delete``)."""
        entries = self._roles
        kept = [
            e
            for e in entries
            if not (e == role_id or (isinstance(e, dict) and read_id(e, "publicId", "id") == role_id))
        ]
        if len(kept) != len(entries):
            self._roles = _share_roles(kept)

    _REPR: ClassVar[tuple[str, ...]] = ("id", "server_id", "display_name")
    _HTML = ("id", "display_name", "nickname", "server_id", "roles", "joined_at")
    _DICT = ("id", "server_id", "display_name", "nickname", "username=user.username", "bot=user.bot",
             "roles", "joined_at")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Member):
            return NotImplemented
        return (self.server_id, self.id) == (other.server_id, other.id)

    def __hash__(self) -> int:
        return hash(("Member", self.server_id, self.id))

    # -- changes --------------------------------------------------------------

    def edit(self, *, roles: list[Any] | None = None, nickname: Any = ...) -> None:
        """Change this member's roles and/or nickname: ``client.members.edit(server_id, id, ...)``.

        ``roles`` replaces the whole set (Role objects or ids; ``@everyone`` always stays), as
        the service does: a set built from this object may be stale, and a change made
        meanwhile is lost. To give or take some roles, use :meth:`add_roles` and
        :meth:`remove_roles`, which read the set fresh and never lose a change of this
        client. ``nickname=None`` clears it. Needs MANAGE_ROLES. Blocks until the service answers
        (204); thread-safe. This object is not changed: the ``guild_member_update`` event that
        follows refetches the member into ``client.members``; role changes also change which
        channels the member may view (overwrites), at once.

        Raises:
            TypeError, ValueError: Bad role entries or nothing to change (before any request).
            ServiceAPIError: 400 unknown role, 403 without MANAGE_ROLES, 404 not a member.
        """
        self._state.members.edit(self.server_id, self.id, roles=roles, nickname=nickname)


    def add_roles(self, *roles: Role | str, reason: str | None = None) -> Member:
        """Give this member roles, keeping every role it has; blocks. Needs MANAGE_ROLES.

        The service has one route for a member's roles, ``PATCH
        /servers/{sid}/members/{uid} {"roles": [...]}``, and it replaces the whole set: it
        offers no way to add one role, and no check that the set did not change meanwhile.
        So this call reads the member's roles from the service (not from this object or the
        cache, which may be stale), writes them with ``roles`` added, and reads them back.
        Role changes of one member made in this process never run concurrently: calls made
        while one is writing are combined into the next read and write, so none is lost.
        When a change from elsewhere (another bot) landed between the read and the write,
        the read-back shows it and the call writes again (at most
        :data:`ROLE_EDIT_ATTEMPTS` times in all). A change made elsewhere in the same few
        milliseconds as the final write can still be lost: the service guarantees no more.

        Args:
            *roles: :class:`Role` objects or role ids (at least one); roles the member
                already has are left as they are.
            reason: Why, for the audit log (sent in the ``X-Audit-Log-Reason`` header).

        Returns:
            The member as the service has it after the change (a new object, also put in
            ``client.members``).

        Raises:
            TypeError, ValueError: No role, a role that is neither a Role nor a non-empty id,
                or a bad ``reason`` (before any request).
            ServiceAPIError: 400 an unknown role, 403 without MANAGE_ROLES (or a role above
                the bot's own), 404 not a member.
            ServiceError: The roles kept changing under the call for every attempt.
        """
        return self._change_roles(roles, add=True, reason=reason)

    def remove_roles(self, *roles: Role | str, reason: str | None = None) -> Member:
        """Take roles from this member, keeping the others; blocks. Needs MANAGE_ROLES.

        The read, write and read-back of :meth:`add_roles`, with ``roles`` removed; roles
        the member does not have are ignored. The ``@everyone`` role is never removed.

        Args:
            *roles: :class:`Role` objects or role ids (at least one).
            reason: Why, for the audit log (sent in the ``X-Audit-Log-Reason`` header).

        Returns:
            The member as the service has it after the change (a new object, also put in
            ``client.members``).

        Raises:
            TypeError, ValueError: As :meth:`add_roles`.
            ServiceAPIError: As :meth:`add_roles`.
            ServiceError: The roles kept changing under the call for every attempt.
        """
        return self._change_roles(roles, add=False, reason=reason)

    def _change_roles(self, roles: tuple[Any, ...], *, add: bool, reason: str | None) -> Member:
        if not roles:
            raise ValueError(f"{'add' if add else 'remove'}_roles needs at least one role")
        wanted = tuple(dict.fromkeys(
            check_id(getattr(role, "id", role), f"roles[{index}]") for index, role in enumerate(roles)
        ))
        headers = _moderation.reason_headers(reason)
        return _ROLE_EDITS.apply(self, _RoleChange(wanted, add, headers))

    def _write_roles(self, changes: list[_RoleChange]) -> Member:
        """Apply ``changes`` in order: read the roles, write them changed, read them back;
        again while another change undid one of them. The member as the service has it."""
        members = self._state.members
        for _attempt in range(ROLE_EDIT_ATTEMPTS):
            current = members.fetch(self.server_id, self.id).role_ids
            target = list(current)
            for change in changes:
                if change.add:
                    target += [rid for rid in change.roles if rid not in target]
                else:
                    target = [rid for rid in target if rid not in change.roles or _is_everyone(self, rid)]
            if target != current:
                headers = next((c.headers for c in reversed(changes) if c.headers), None)
                self._state.request(
                    Route(endpoints.EDIT_MEMBER, server_id=self.server_id,
                          user_id=self.id),
                    json={"roles": target},
                    headers=headers,
                )
            after = members.fetch(self.server_id, self.id)
            if set(after.role_ids) == set(target):
                return after
        raise ServiceError(
            f"the roles of member {self.id} in server {self.server_id} kept changing while they were "
            f"edited ({ROLE_EDIT_ATTEMPTS} attempts); try again"
        )

    def kick(self, *, reason: str | None = None) -> None:
        """Kick this member: :meth:`Guild.kick <Guild.kick>` for this server.

        Needs KICK_MEMBERS; blocks until acknowledged (10 s at most). ``reason`` and the
        exceptions are those of ``Guild.kick`` (:class:`GatewayError` with the service's
        ``code``, ``GatewayTimeoutError``, ``ServiceAuthError`` when not connected).
        """
        _moderation.kick(self._state, self.server_id, self.id, reason=reason)

    def ban(self, *, reason: str | None = None, delete_history: str | None = None) -> None:
        """Ban this member: :meth:`Guild.ban <Guild.ban>` for this server.

        Needs BAN_MEMBERS; blocks until acknowledged (10 s at most). ``reason`` and
        ``delete_history`` (``"none"``, ``"1d"``, ``"7d"``, ``"14d"``, ``"30d"``) and the
        exceptions are those of ``Guild.ban``.
        """
        _moderation.ban(self._state, self.server_id, self.id, reason=reason, delete_history=delete_history)


class RemovedMember(Member):
    """A member that left its server, as ``guild_member_remove`` gives it: a :class:`Member`
    plus :attr:`reason`.

    The one the cache held until the event (a copy of it, with its roles and nickname), else
    one built from what the event tells: the user (the cached :class:`User` when known, else
    one that knows only its id) and the server id. It is not in ``client.members`` any more.

    Attributes:
        reason: How the member left: ``"left"`` (of its own accord), ``"kicked"`` or
            ``"banned"`` (a ``guild_ban_add`` event follows); another reason the service gives
            is kept as it is.
    """

    __slots__ = ("reason",)

    reason: str

    _REPR = ("id", "server_id", "display_name", "reason")

    @classmethod
    def _of(cls, state: StateLike, server_id: str, user_id: str, reason: str,
            member: Member | None, user: User | None) -> RemovedMember:
        """The removed member of an event: a copy of ``member`` when it was cached."""
        if member is not None:
            removed = cls(state, member.raw, server_id=server_id, user=member.user)
        else:
            record: dict[str, Any] = {"userId": user_id, "serverPublicId": server_id}
            removed = cls(state, record, server_id=server_id,
                          user=user if user is not None else User(state, {"publicId": user_id}))
        removed.reason = reason
        return removed


class _RoleChange:
    """One ``add_roles`` / ``remove_roles`` call waiting to be written."""

    __slots__ = ("add", "done", "headers", "roles")

    def __init__(self, roles: tuple[str, ...], add: bool, headers: dict[str, str] | None) -> None:
        self.roles = roles
        self.add = add
        self.headers = headers
        self.done: Future[Member] = Future()


class _RoleEdits:
    """The role changes of each member, written one batch at a time.

    The service replaces a member's whole role set with each write and cannot check that the
    set is still the one the writer read. Changes of one member made in this process are
    therefore never written concurrently: the first caller writes every change queued for
    that member while it works (several calls combined into one read and one write), the
    others wait for their result. No lock is held during the requests. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _queues
        #: Per member (state, server id, user id): the changes not yet taken by a writer.
        self._queues: dict[tuple[int, str, str], list[_RoleChange]] = {}

    def apply(self, member: Member, change: _RoleChange) -> Member:
        """Queue ``change``; write the queue when no other thread does; wait for the result."""
        key = (id(member._state), member.server_id, member.id)
        with self._lock:
            queue = self._queues.get(key)
            writer = queue is None
            if writer:
                queue = self._queues[key] = []
            queue.append(change)  # type: ignore[union-attr]
        if writer:
            self._write(member, key)
        return change.done.result(ROLE_EDIT_WAIT_S)

    def _write(self, member: Member, key: tuple[int, str, str]) -> None:
        while True:
            with self._lock:
                batch = self._queues[key]
                if not batch:
                    del self._queues[key]
                    return
                self._queues[key] = []
            try:
                result = member._write_roles(batch)
            except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
                for change in batch:
                    change.done.set_exception(exc)
            else:
                for change in batch:
                    change.done.set_result(result)


_ROLE_EDITS = _RoleEdits()


def _is_everyone(member: Member, role_id: str) -> bool:
    """Whether ``role_id`` is the ``@everyone`` role of the member's server (never removed)."""
    guild = member.guild
    role = guild.roles.cache.get(role_id) if guild is not None else None
    if role is None:
        role = member.roles.get(role_id)
    return role is not None and role.name == "@everyone"


def member_user_record(data: Mapping[str, Any], user_id: str) -> dict[str, Any]:
    """The user record inside a member record: ``user``, else the (flat) dict itself."""
    user = data.get("user")
    if isinstance(user, dict):
        return user
    if "publicId" in data and read_id(data, "publicId") == user_id:
        return data if isinstance(data, dict) else dict(data)  # flat: the record is the user
    return {"publicId": user_id, **{k: data[k] for k in ("name", "tag", "image", "isBot") if k in data}}
