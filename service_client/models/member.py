"""``Member``: a user's membership of one server (protocol.md 3.4, 3.10)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._base import Model, as_dict, parse_time, read_bool, read_id, read_str
from .permissions import ALL, Permissions
from .role import Role
from .user import User

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from .guild import Guild
    from .voice_state import VoiceState

__all__ = ["Member", "member_ids"]


def member_ids(data: Mapping[str, Any], server_id: str | None = None) -> tuple[str | None, str | None]:
    """The (server id, user id) of a member record, nested or flat (protocol 3.4).

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


class Member(Model):
    """A member of a server, keyed by (server id, user id) everywhere (pitfall 26).

    Accepts the nested shape ``{publicId (membership), userId, user,
    serverPublicId, roles, joinedAt, nickname, isOwner}`` and the flat shape
    ``{publicId (user), name, tag, image?, isBot}`` (protocol 3.4).

    Roles: :attr:`roles` resolves each role id through ``guild.roles`` first
    (so role events keep permissions true), falling back to the copy embedded
    in this member's record; bare id strings unknown to ``guild.roles`` grant
    nothing. Embedded copies are not refreshed by role events (pitfall 29):
    only roles present in ``guild.roles`` are.

    Attributes:
        id: The user id.
        server_id: The server id.
        user: The :class:`User` (the cached one when the manager built it).
    """

    __slots__ = ("id", "server_id", "user")

    id: str
    server_id: str
    user: User

    def __init__(
        self,
        client: Client,
        data: Mapping[str, Any],
        *,
        server_id: str | None = None,
        user: User | None = None,
    ) -> None:
        """Build from a member record.

        Args:
            client: The owning client.
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
        self._client = client
        self.raw = data
        self.id = uid
        self.server_id = sid
        if user is None:
            user = User(client, member_user_record(data, uid))
        self.user = user

    # -- fields read lazily from raw (keeps a cached member small) -----------

    @property
    def membership_id(self) -> str | None:
        """The membership's own ``publicId`` (nested shape only), never used as a key."""
        if isinstance(self.raw.get("user"), dict) or "userId" in self.raw:
            return read_id(self.raw, "publicId", "id")
        return None

    @property
    def nickname(self) -> str | None:
        """The server nickname, or None."""
        return read_str(self.raw, "nickname")

    @property
    def display_name(self) -> str:
        """The nickname, else the username."""
        return self.nickname or self.user.username

    @property
    def joined_at(self) -> datetime | None:
        """When the user joined (UTC), or None when missing."""
        return parse_time(self.raw.get("joinedAt"))

    @property
    def is_owner(self) -> bool:
        """True when the user owns the server (record flag or the guild's ``owner_id``)."""
        guild = self.guild
        if guild is not None and guild.owner_id is not None:
            return guild.owner_id == self.id
        return read_bool(self.raw, "isOwner")

    @property
    def guild(self) -> Guild | None:
        """The cached server, or None."""
        return self._client.guilds.cache.get(self.server_id)

    @property
    def role_ids(self) -> list[str]:
        """The ids of this member's roles, in record order."""
        out: list[str] = []
        entries = self.raw.get("roles")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, str) and entry:
                out.append(entry)
            elif isinstance(entry, dict):
                rid = read_id(entry, "publicId", "id")
                if rid is not None:
                    out.append(rid)
        return out

    @property
    def roles(self) -> list[Role]:
        """This member's roles as :class:`Role` objects.

        Each id resolves through the cached guild's ``roles`` cache first, else
        the embedded record; a bare id unknown to the cache is left out.
        """
        guild = self.guild
        cached = guild.roles.cache if guild is not None else {}
        out: list[Role] = []
        entries = self.raw.get("roles")
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, str):
                role = cached.get(entry)
                if role is not None:
                    out.append(role)
            elif isinstance(entry, dict):
                rid = read_id(entry, "publicId", "id")
                if rid is None:
                    continue
                role = cached.get(rid)
                if role is None:
                    try:
                        role = Role(self._client, entry, server_id=self.server_id)
                    except (TypeError, ValueError):
                        continue
                out.append(role)
        return out

    @property
    def permissions(self) -> Permissions:
        """The member's permissions (protocol 3.10).

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
        for role in self.roles:
            value |= int(role.permissions)
        if value & Permissions.ADMINISTRATOR:
            return ALL
        return Permissions(value)

    def has_permission(self, *permissions: str | int | Permissions) -> bool:
        """True when the member holds every given permission.

        Spec: Resources, ``hasPermission``.

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
        state = self._client.voice_states.cache.get(self.id)
        if state is None:
            return None
        channel = self._client.channels.cache.get(state.channel_id) if state.channel_id else None
        if channel is not None and channel.server_id not in (None, self.server_id):
            return None
        return state

    @property
    def mention(self) -> str:
        """The mention text ``<@user id>``."""
        return f"<@{self.id}>"

    def _drop_role(self, role_id: str) -> None:
        """Forget a deleted role (``server:role_delete``)."""
        entries = self.raw.get("roles")
        if not isinstance(entries, list):
            return
        kept = [
            e
            for e in entries
            if not (e == role_id or (isinstance(e, dict) and read_id(e, "publicId", "id") == role_id))
        ]
        if len(kept) != len(entries):
            merged = dict(self.raw)
            merged["roles"] = kept
            self.raw = merged

    def _repr_name(self) -> str | None:
        return self.display_name

    def __repr__(self) -> str:
        return (
            f"<Member id={self.id!r} server_id={self.server_id!r} name={self._repr_name()!r}>"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Member):
            return NotImplemented
        return (self.server_id, self.id) == (other.server_id, other.id)

    def __hash__(self) -> int:
        return hash(("Member", self.server_id, self.id))


def member_user_record(data: Mapping[str, Any], user_id: str) -> dict[str, Any]:
    """The user record inside a member record: ``user``, else the (flat) dict itself."""
    user = data.get("user")
    if isinstance(user, dict):
        return user
    if "publicId" in data and read_id(data, "publicId") == user_id:
        return data if isinstance(data, dict) else dict(data)  # flat: the record is the user
    return {"publicId": user_id, **{k: data[k] for k in ("name", "tag", "image", "isBot") if k in data}}
