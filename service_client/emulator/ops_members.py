"""Operations on members: members and roles: joins, removals, moderation (kick, ban, unban), leaving, member and role changes."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any

from .. import endpoints
from .ops_checks import (
    MAX_NICKNAME_CHARS,
    MAX_REASON_CHARS,
    check_color,
    need_str,
    opt_int,
    opt_str,
)
from .realtime import DELETE_HISTORY_S, MAX_ID_CHARS, AckThen, Realtime, channel_room, server_room, user_room
from .store import (
    BadRequest,
    NotFound,
    iso_at,
    parse_permissions,
)
from .store.channels import ChannelRepository
from .store.database import Database
from .store.extras import ExtrasRepository
from .store.members import MemberRepository
from .store.messages import MessageRepository
from .store.servers import ServerRepository
from .store.users import UserRepository


class MemberOps:
    """Members and roles: joins, removals, moderation (kick, ban, unban), leaving, member and role changes.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        users: The users repository.
        servers: The servers repository.
        members: The members repository.
        channels: The channels repository.
        messages: The messages repository.
        extras: The extras repository.
        db: The database.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, users: UserRepository, servers: ServerRepository, members: MemberRepository,
                 channels: ChannelRepository, messages: MessageRepository, extras: ExtrasRepository, db: Database,
                 realtime: Realtime) -> None:
        self.users = users
        self.servers = servers
        self.members = members
        self.channels = channels
        self.messages = messages
        self.extras = extras
        self.db = db
        self.rt = realtime

    async def add_member(self, sid: Any, uid: Any, role_ids: Any = None) -> dict[str, Any]:
        """Add a user to a server; ``server:joined`` to it, ``server:member_add`` to the server room.

        Returns:
            ``{"member": Member}``.

        Raises:
            BadRequest: Malformed ids. NotFound: Unknown server, user or role.
        """
        need_str(sid, "serverId")
        need_str(uid, "userId")
        role_ids = [] if role_ids is None else role_ids
        if not isinstance(role_ids, list) or not all(isinstance(r, str) for r in role_ids):
            raise BadRequest("roleIds must be a list of strings")
        if self.members.is_banned(sid, uid):
            raise BadRequest("servers.errors.banned")
        added = self.members.add_member(sid, uid, role_ids)
        member = self.members.member(sid, uid)
        if added:
            await self.rt.on_member_added(sid, uid)
            await self.rt.emit(endpoints.ON_SERVER_JOINED, self.servers.server(sid), user_room(uid))
            await self.rt.emit(endpoints.ON_SERVER_MEMBER_ADD, {"serverPublicId": sid, "member": member}, server_room(sid))
        elif role_ids:
            await self.rt.refresh_visibility(sid)
            await self.rt.emit(endpoints.ON_SERVER_MEMBER_UPDATE, {"serverPublicId": sid, "memberPublicId": uid},
                               server_room(sid))
        return {"member": member}

    async def remove_member(self, sid: str, uid: str, *, reason: str = "kicked") -> bool:
        """Remove a member (kick semantics): ``server:member_removed`` to the server room,
        ``server:you_removed`` to the user. Returns False if it was not a member."""
        self.servers.server_row(sid)
        if not self.members.remove_member(sid, uid):
            return False
        await self.rt.on_member_removed(sid, uid, self.channels.channel_ids_of(sid))
        await self._announce_removal(sid, uid, reason)
        return True

    async def _announce_removal(self, sid: str, uid: str, reason: str) -> None:
        """After a kick or ban (rooms already left): leave voice, ``server:member_removed`` to the
        server room, ``server:you_removed`` to the user."""
        await self._leave_server_voice(sid, uid)
        await self.rt.emit(endpoints.ON_SERVER_MEMBER_REMOVED, {"serverPublicId": sid, "memberPublicId": uid, "reason": reason},
                           server_room(sid))
        await self.rt.emit(endpoints.ON_SERVER_YOU_REMOVED, {"serverPublicId": sid}, user_room(uid))

    async def _leave_server_voice(self, sid: str, uid: str) -> None:
        """A user who is no longer a member leaves a voice channel of that server."""
        cid = self.rt.voice_events.voice_channel_of(uid)
        if cid is None:
            return
        row = self.db.one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None or row[0] == sid:
            await self.rt.voice_events.voice_leave(uid)

    async def moderate(self, action: str, actor: str | None, data: Any) -> Any:
        """Serve the socket events ``server:kick`` / ``server:ban`` / ``server:unban`` and their control-plane twins.

        The state changes and the target leaves the server's rooms before the ack; the ack is
        ``{}`` or ``{"error": "servers.errors.<key>"}``; the fan-out follows the ack.

        Args:
            action: ``"kick"``, ``"ban"`` or ``"unban"``.
            actor: User id of the emitting socket (None if unauthenticated).
            data: The event payload as received.

        Returns:
            An :class:`AckThen` (success) or the error ack dict.
        """
        def fail(key: str) -> dict[str, str]:
            """Answer the caller's ack with an error key."""
            return {"error": f"servers.errors.{key}"}

        if actor is None or not isinstance(data, dict):
            return fail("invalid_request")
        sid, target = data.get("serverPublicId"), data.get("userPublicId")
        if not isinstance(sid, str) or not isinstance(target, str) or not sid or not target or \
                len(sid) > MAX_ID_CHARS or len(target) > MAX_ID_CHARS:
            return fail("invalid_request")
        reason = data.get("reason")
        history = data.get("deleteHistory")
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS):
            return fail("invalid_request")
        noted = {"reason": reason} if reason is not None else None
        if action == "ban":
            if history is not None and history not in DELETE_HISTORY_S:
                return fail("invalid_request")
        try:
            owner = self.servers.server_row(sid)["owner_id"]
        except NotFound:
            return fail("not_found")
        if not self.members.is_member(sid, actor):
            return fail("not_found")
        perm = "KICK_MEMBERS" if action == "kick" else "BAN_MEMBERS"
        if not self.members.has_perm(sid, actor, perm):
            return fail("missing_permission")
        if action == "unban":
            if not self.members.remove_ban(sid, target):
                return fail("not_banned")
            self.extras.add_audit(sid, actor, "MEMBER_UNBAN", "USER", target, noted)
            return AckThen({}, lambda: self.rt.emit(endpoints.ON_SERVER_BAN_REVOKED, {"serverPublicId": sid,
                                                                                      "userPublicId": target},
                                                    server_room(sid)))
        if target == owner:
            return fail("cannot_kick_owner" if action == "kick" else "cannot_ban_owner")
        if action == "kick":
            if not self.members.remove_member(sid, target):
                return fail("not_found")
            await self.rt.on_member_removed(sid, target, self.channels.channel_ids_of(sid))
            self.extras.add_audit(sid, actor, "MEMBER_KICK", "USER", target, noted)
            return AckThen({}, lambda: self._announce_removal(sid, target, "kicked"))
        try:
            self.users.user_row(target)
        except NotFound:
            return fail("not_found")
        if self.members.is_banned(sid, target):
            return fail("already_banned")
        was_member = self.members.remove_member(sid, target)
        self.members.add_ban(sid, target, reason)
        self.extras.add_audit(sid, actor, "MEMBER_BAN", "USER", target,
                                    {"reason": reason, "deleteHistory": history or "none"})
        doomed: list[tuple[str, str]] = []
        span = DELETE_HISTORY_S.get(history or "none", 0)
        if span:
            doomed = self.messages.message_ids_by(sid, target, iso_at(time.time() - span))
            self.messages.delete_messages([mid for mid, _cid in doomed])
        if was_member:
            await self.rt.on_member_removed(sid, target, self.channels.channel_ids_of(sid))

        async def after() -> None:
            """Fan the change out once the ack has been sent."""
            if was_member:
                await self._announce_removal(sid, target, "banned")
            for mid, cid in doomed:
                await self.rt.emit(endpoints.ON_MESSAGE_DELETED, {"publicId": mid, "messagePublicId": mid,
                                                                  "channelPublicId": cid, "serverPublicId": sid},
                                   channel_room(cid))
        return AckThen({}, after)

    async def ban(self, sid: str, uid: str, reason: str | None = None) -> None:
        """Control plane: ban a user as the server's owner would (same checks and fan-out)."""
        owner = self.servers.server_row(sid)["owner_id"]
        await self._acked(self.moderate("ban", owner, {"serverPublicId": sid, "userPublicId": uid,
                                                       "reason": reason}))

    async def kick(self, sid: str, uid: str) -> None:
        """Control plane: kick a member as the server's owner would (same checks and fan-out)."""
        owner = self.servers.server_row(sid)["owner_id"]
        await self._acked(self.moderate("kick", owner, {"serverPublicId": sid, "userPublicId": uid}))

    async def unban(self, sid: str, uid: str) -> None:
        """Control plane: lift a ban as the server's owner would (``server:ban_revoked``)."""
        owner = self.servers.server_row(sid)["owner_id"]
        await self._acked(self.moderate("unban", owner, {"serverPublicId": sid, "userPublicId": uid}))

    @staticmethod
    async def _acked(pending: Awaitable[Any]) -> None:
        result = await pending
        if isinstance(result, AckThen):
            await result.after()
            return
        key = result["error"]
        if key.endswith("not_found"):
            raise NotFound(key)
        raise BadRequest(key)

    async def leave_server(self, sid: str, uid: str) -> None:
        """A member leaves: ``server:you_left`` to it, ``server:member_remove`` to the server room."""
        if not self.members.remove_member(sid, uid):
            raise NotFound("members.errors.not_found")
        channels = self.channels.channel_ids_of(sid)
        await self.rt.on_member_removed(sid, uid, channels)
        await self._leave_server_voice(sid, uid)
        await self.rt.emit(endpoints.ON_SERVER_YOU_LEFT, {"serverPublicId": sid}, user_room(uid))
        await self.rt.emit(endpoints.ON_SERVER_MEMBER_REMOVE, {"serverPublicId": sid, "memberPublicId": uid}, server_room(sid))

    async def update_member(self, sid: str, uid: str, fields: dict[str, Any]) -> None:
        """Replace a member's roles and/or nickname; broadcast ``server:member_update`` (ids only)."""
        if not self.members.is_member(sid, uid):
            raise NotFound("members.errors.not_found")
        if "roles" in fields:
            roles = fields["roles"]
            if not isinstance(roles, list) or len(roles) > 250 or not all(isinstance(r, str) for r in roles):
                raise BadRequest("roles must be a list of role ids")
            for rid in roles:
                try:
                    self.members.role_row(sid, rid)
                except NotFound as exc:
                    raise BadRequest("roles.errors.not_found") from exc
        if "nickname" in fields:
            opt_str(fields["nickname"], "nickname", MAX_NICKNAME_CHARS)
        if "roles" in fields:
            self.members.set_member_roles(sid, uid, fields["roles"])
        if "nickname" in fields:
            self.members.set_nickname(sid, uid, fields["nickname"])
        await self.rt.refresh_visibility(sid)
        await self.rt.emit(endpoints.ON_SERVER_MEMBER_UPDATE, {"serverPublicId": sid, "memberPublicId": uid}, server_room(sid))

    async def create_role(self, sid: Any, name: Any, permissions: Any = 0, *, color: Any = None,
                          hoist: Any = False) -> dict[str, Any]:
        """Create a role; broadcast ``server:role_create``. Returns ``{"role"}``. Raises BadRequest, NotFound."""
        need_str(sid, "serverId")
        need_str(name, "name")
        try:
            perms = parse_permissions(0 if permissions is None else permissions)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        check_color(color)
        if not isinstance(hoist, bool):
            raise BadRequest("hoist must be a boolean")
        role = self.members.create_role(sid, name, perms, color=color, hoist=hoist)
        await self.rt.emit(endpoints.ON_SERVER_ROLE_CREATE, {"serverPublicId": sid, "role": role}, server_room(sid))
        return {"role": role}

    async def update_role(self, sid: str, rid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a role; broadcast ``server:role_update``. Returns the Role."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = need_str(fields["name"], "name")
        if "color" in fields:
            clean["color"] = check_color(fields["color"])
        if "hoist" in fields:
            if not isinstance(fields["hoist"], bool):
                raise BadRequest("hoist must be a boolean")
            clean["hoist"] = fields["hoist"]
        if "permissions" in fields:
            try:
                clean["permissions"] = parse_permissions(fields["permissions"])
            except ValueError as exc:
                raise BadRequest(str(exc)) from exc
        if "position" in fields:
            position = fields["position"]
            if position is None or opt_int(position, "position") is None:
                raise BadRequest("position must be a non-negative integer")
            clean["position"] = position
        role = self.members.update_role(sid, rid, clean)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit(endpoints.ON_SERVER_ROLE_UPDATE, {"serverPublicId": sid, "role": role}, server_room(sid))
        return role

    async def delete_role(self, sid: str, rid: str) -> None:
        """Delete a role; broadcast ``server:role_delete``."""
        self.members.delete_role(sid, rid)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit(endpoints.ON_SERVER_ROLE_DELETE, {"serverPublicId": sid, "rolePublicId": rid}, server_room(sid))

    async def reorder_roles(self, sid: str, order: list[str]) -> list[dict[str, Any]]:
        """Give the listed roles positions 1.. in order; broadcast ``server:roles_order_update``."""
        for pos, rid in enumerate(order, start=1):
            self.members.update_role(sid, rid, {"position": pos})
        roles = [{"publicId": r["publicId"], "position": r["position"]} for r in self.members.roles(sid)]
        await self.rt.emit(endpoints.ON_SERVER_ROLES_ORDER_UPDATE, {"serverPublicId": sid, "roles": roles}, server_room(sid))
        return roles
