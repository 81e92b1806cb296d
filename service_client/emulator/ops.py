"""State changes with their socket fan-out, shared by the REST routes and the control plane.

Protocol: section 4.4 (fan-out table). Every method is a coroutine that must run on the
emulator's event loop; ``Emulator`` (control.py) wraps them for other threads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable
from datetime import datetime
from typing import Any

from .realtime import DELETE_HISTORY_S, MAX_ID_CHARS, AckThen, Realtime, channel_room, server_room, user_room
from .store import (
    ALL_PERMISSIONS,
    CREATABLE_CHANNEL_TYPES,
    OVERRIDE_TYPES,
    BadRequest,
    NotFound,
    Store,
    iso_at,
    parse_permissions,
)

#: Longest accepted name or id string, characters (longer is a 400, never stored).
MAX_NAME_CHARS = 10_000
#: Longest URL (icon, image, avatar), characters.
MAX_URL_CHARS = 2048
#: Longest channel description, nickname, ban reason, characters.
MAX_DESCRIPTION_CHARS = 1024
MAX_NICKNAME_CHARS = 64
MAX_REASON_CHARS = 512
#: Largest integer accepted for counts and durations (``maxAge``, ``maxUses``, ``position``).
MAX_INT = 2**31 - 1
_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
#: A custom emoji name: 2 to 32 letters, digits or underscores.
_EMOJI_NAME = re.compile(r"[A-Za-z0-9_]{2,32}")
#: Most custom emojis per server, webhooks per channel; longest webhook (or override user) name.
MAX_EMOJIS = 200
MAX_WEBHOOKS = 15
MAX_WEBHOOK_NAME_CHARS = 80


class Conflict(Exception):
    """The change clashes with existing state (mapped to HTTP 409)."""


def _need_str(value: Any, name: str, *, allow_empty: bool = False, limit: int = MAX_NAME_CHARS) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise BadRequest(f"{name} must be a non-empty string")
    if len(value) > limit:
        raise BadRequest(f"{name} is too long")
    return value


def _opt_str(value: Any, name: str, limit: int) -> str | None:
    """A string of at most ``limit`` characters, or None (null clears)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string or null")
    if len(value) > limit:
        raise BadRequest(f"{name} is too long")
    return value


def _opt_int(value: Any, name: str) -> int | None:
    """A non-negative integer up to :data:`MAX_INT`, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise BadRequest(f"{name} must be a non-negative integer")
    return value


def _color(value: Any) -> str | None:
    """A role colour ``"#rrggbb"`` or None (protocol 0.1)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _COLOR.fullmatch(value):
        raise BadRequest("color must be \"#rrggbb\" or null")
    return value


class Operations:
    """Mutations of the emulator's state plus the socket events they cause (protocol 4.4).

    Not thread-safe: call on the emulator's loop.
    """

    def __init__(self, store: Store, realtime: Realtime) -> None:
        self.store = store
        self.rt = realtime
        realtime.ops = self

    # ------------------------------------------------------------------ users
    async def create_user(self, name: Any, bot: Any = False) -> dict[str, Any]:
        """Create a user; return ``{"user", "token"}``. Raises BadRequest."""
        _need_str(name, "name")
        if not isinstance(bot, bool):
            raise BadRequest("bot must be a boolean")
        user, token = self.store.create_user(name, bot=bot)
        return {"user": user, "token": token}

    async def update_user(self, uid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a user's name/tag/image and broadcast ``user:update``."""
        user = self.store.update_user(uid, **fields)
        payload = {"userPublicId": uid}
        payload.update({k: user[k] for k in ("name", "tag", "image") if k in fields})
        await self.rt.emit("user:update", payload, self.rt.presence_rooms(uid))
        return user

    async def revoke_token(self, uid: str) -> None:
        """Revoke a user's token and server-disconnect its sockets (protocol 4.4)."""
        self.store.revoke_token(uid)
        await self.rt.server_disconnect(uid)

    # ------------------------------------------------------------------ servers
    async def create_server(self, name: Any, owner_id: Any, *, categories: Any = None, channels: Any = None,
                            image_url: Any = None) -> dict[str, Any]:
        """Create a server with categories and channels; return ``{"server", "categories", "channels"}``.

        The owner becomes a member and receives ``server:joined``.

        Raises:
            BadRequest: A malformed argument. NotFound: Unknown owner.
        """
        _need_str(name, "name")
        _need_str(owner_id, "ownerId")
        _opt_str(image_url, "iconUrl", MAX_URL_CHARS)
        categories = [] if categories is None else categories
        channels = [] if channels is None else channels
        if not isinstance(categories, list) or not isinstance(channels, list):
            raise BadRequest("categories and channels must be lists")
        for cat in categories:
            if not isinstance(cat, dict):
                raise BadRequest("each category must be an object")
            _need_str(cat.get("name"), "category name")
            if not isinstance(cat.get("channels", []), list):
                raise BadRequest("category channels must be a list")
            for ch in cat.get("channels", []):
                self._check_channel_spec(ch)
        for ch in channels:
            self._check_channel_spec(ch)
        self.store.user_row(owner_id)
        sid = self.store.create_server(name, owner_id, image_url=image_url)
        cat_out = []
        for cat in categories:
            cat_id = self.store.create_category(sid, cat["name"])
            for ch in cat.get("channels", []):
                self.store.create_channel(sid, ch["name"], ch.get("type", "TEXT"), category_id=cat_id)
            cat_out.append(self.store.category(sid, cat_id))
        for ch in channels:
            self.store.create_channel(sid, ch["name"], ch.get("type", "TEXT"))
        server = self.store.server(sid)
        all_channels = self.store.channels_of(sid)
        await self.rt.on_member_added(sid, owner_id)
        await self.rt.emit("server:joined", server, user_room(owner_id))
        return {"server": server, "categories": cat_out, "channels": all_channels}

    @staticmethod
    def _check_channel_spec(ch: Any) -> None:
        if not isinstance(ch, dict):
            raise BadRequest("each channel must be an object")
        _need_str(ch.get("name"), "channel name")
        if ch.get("type", "TEXT") not in CREATABLE_CHANNEL_TYPES:
            raise BadRequest("channel type must be TEXT or VOICE")

    async def update_server(self, sid: str, fields: dict[str, Any]) -> None:
        """Rename a server or change/clear its icon; broadcast ``server:updated``."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = _need_str(fields["name"], "name")
        if "imageUrl" in fields:
            clean["imageUrl"] = _opt_str(fields["imageUrl"], "imageUrl", MAX_URL_CHARS)
        self.store.update_server(sid, clean)
        await self.rt.emit("server:updated", dict({"serverPublicId": sid}, **clean), server_room(sid))

    async def delete_server(self, sid: str) -> None:
        """Delete a server; broadcast ``server:deleted`` and empty its rooms."""
        self.store.server_row(sid)
        channels = self.store.channel_ids_of(sid)
        members = self.store.member_ids(sid)
        await self.rt.emit("server:deleted", {"serverPublicId": sid}, server_room(sid))
        for cid in channels:
            for uid in list(self.rt.voice.get(cid, {})):
                await self.rt.voice_leave(uid)
        self.store.delete_server(sid)
        for uid in members:
            await self.rt.on_member_removed(sid, uid, channels)

    # ------------------------------------------------------------------ members
    async def add_member(self, sid: Any, uid: Any, role_ids: Any = None) -> dict[str, Any]:
        """Add a user to a server; ``server:joined`` to it, ``server:member_add`` to the server room.

        Returns:
            ``{"member": Member}``.

        Raises:
            BadRequest: Malformed ids. NotFound: Unknown server, user or role.
        """
        _need_str(sid, "serverId")
        _need_str(uid, "userId")
        role_ids = [] if role_ids is None else role_ids
        if not isinstance(role_ids, list) or not all(isinstance(r, str) for r in role_ids):
            raise BadRequest("roleIds must be a list of strings")
        if self.store.is_banned(sid, uid):
            raise BadRequest("servers.errors.banned")
        added = self.store.add_member(sid, uid, role_ids)
        member = self.store.member(sid, uid)
        if added:
            await self.rt.on_member_added(sid, uid)
            await self.rt.emit("server:joined", self.store.server(sid), user_room(uid))
            await self.rt.emit("server:member_add", {"serverPublicId": sid, "member": member}, server_room(sid))
        elif role_ids:
            await self.rt.refresh_visibility(sid)
            await self.rt.emit("server:member_update", {"serverPublicId": sid, "memberPublicId": uid},
                               server_room(sid))
        return {"member": member}

    async def remove_member(self, sid: str, uid: str, *, reason: str = "kicked") -> bool:
        """Remove a member (kick semantics): ``server:member_removed`` to the server room,
        ``server:you_removed`` to the user. Returns False if it was not a member."""
        self.store.server_row(sid)
        if not self.store.remove_member(sid, uid):
            return False
        await self.rt.on_member_removed(sid, uid, self.store.channel_ids_of(sid))
        await self._announce_removal(sid, uid, reason)
        return True

    async def _announce_removal(self, sid: str, uid: str, reason: str) -> None:
        """After a kick or ban (rooms already left): leave voice, ``server:member_removed`` to the
        server room, ``server:you_removed`` to the user."""
        await self._leave_server_voice(sid, uid)
        await self.rt.emit("server:member_removed", {"serverPublicId": sid, "memberPublicId": uid, "reason": reason},
                           server_room(sid))
        await self.rt.emit("server:you_removed", {"serverPublicId": sid}, user_room(uid))

    async def _leave_server_voice(self, sid: str, uid: str) -> None:
        """A user who is no longer a member leaves a voice channel of that server."""
        cid = self.rt.voice_channel_of(uid)
        if cid is None:
            return
        row = self.store._one("SELECT server_id FROM channels WHERE id=?", (cid,))
        if row is None or row[0] == sid:
            await self.rt.voice_leave(uid)

    # ------------------------------------------------------------------ kick, ban, unban (socket, acked)
    async def moderate(self, action: str, actor: str | None, data: Any) -> Any:
        """Serve ``server:kick`` / ``server:ban`` / ``server:unban`` (protocol 2.3, 4.4).

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
        if action == "ban":
            if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS):
                return fail("invalid_request")
            if history is not None and history not in DELETE_HISTORY_S:
                return fail("invalid_request")
        try:
            owner = self.store.server_row(sid)["owner_id"]
        except NotFound:
            return fail("not_found")
        if not self.store.is_member(sid, actor):
            return fail("not_found")
        perm = "KICK_MEMBERS" if action == "kick" else "BAN_MEMBERS"
        if not self.store.has_perm(sid, actor, perm):
            return fail("missing_permission")
        if action == "unban":
            if not self.store.remove_ban(sid, target):
                return fail("not_banned")
            self.store.add_audit(sid, actor, "MEMBER_UNBAN", "USER", target)
            return AckThen({}, lambda: self.rt.emit("server:ban_revoked", {"serverPublicId": sid,
                                                                            "userPublicId": target},
                                                    server_room(sid)))
        if target == owner:
            return fail("cannot_kick_owner" if action == "kick" else "cannot_ban_owner")
        if action == "kick":
            if not self.store.remove_member(sid, target):
                return fail("not_found")
            await self.rt.on_member_removed(sid, target, self.store.channel_ids_of(sid))
            self.store.add_audit(sid, actor, "MEMBER_KICK", "USER", target)
            return AckThen({}, lambda: self._announce_removal(sid, target, "kicked"))
        try:
            self.store.user_row(target)
        except NotFound:
            return fail("not_found")
        if self.store.is_banned(sid, target):
            return fail("already_banned")
        was_member = self.store.remove_member(sid, target)
        self.store.add_ban(sid, target, reason)
        self.store.add_audit(sid, actor, "MEMBER_BAN", "USER", target,
                             {"reason": reason, "deleteHistory": history or "none"})
        doomed: list[tuple[str, str]] = []
        span = DELETE_HISTORY_S.get(history or "none", 0)
        if span:
            doomed = self.store.message_ids_by(sid, target, iso_at(time.time() - span))
            self.store.delete_messages([mid for mid, _cid in doomed])
        if was_member:
            await self.rt.on_member_removed(sid, target, self.store.channel_ids_of(sid))

        async def after() -> None:
            """Fan the change out once the ack has been sent."""
            if was_member:
                await self._announce_removal(sid, target, "banned")
            for mid, cid in doomed:
                await self.rt.emit("message:deleted", {"publicId": mid, "messagePublicId": mid,
                                                       "channelPublicId": cid, "serverPublicId": sid},
                                   channel_room(cid))
        return AckThen({}, after)

    async def ban(self, sid: str, uid: str, reason: str | None = None) -> None:
        """Control plane: ban a user as the server's owner would (same checks and fan-out)."""
        owner = self.store.server_row(sid)["owner_id"]
        await self._acked(self.moderate("ban", owner, {"serverPublicId": sid, "userPublicId": uid,
                                                       "reason": reason}))

    async def unban(self, sid: str, uid: str) -> None:
        """Control plane: lift a ban as the server's owner would (``server:ban_revoked``)."""
        owner = self.store.server_row(sid)["owner_id"]
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
        if not self.store.remove_member(sid, uid):
            raise NotFound("members.errors.not_found")
        channels = self.store.channel_ids_of(sid)
        await self.rt.on_member_removed(sid, uid, channels)
        await self._leave_server_voice(sid, uid)
        await self.rt.emit("server:you_left", {"serverPublicId": sid}, user_room(uid))
        await self.rt.emit("server:member_remove", {"serverPublicId": sid, "memberPublicId": uid}, server_room(sid))

    async def update_member(self, sid: str, uid: str, fields: dict[str, Any]) -> None:
        """Replace a member's roles and/or nickname; broadcast ``server:member_update`` (ids only)."""
        if not self.store.is_member(sid, uid):
            raise NotFound("members.errors.not_found")
        if "roles" in fields:
            roles = fields["roles"]
            if not isinstance(roles, list) or len(roles) > 250 or not all(isinstance(r, str) for r in roles):
                raise BadRequest("roles must be a list of role ids")
            for rid in roles:
                try:
                    self.store.role_row(sid, rid)
                except NotFound as exc:
                    raise BadRequest("roles.errors.not_found") from exc
        if "nickname" in fields:
            _opt_str(fields["nickname"], "nickname", MAX_NICKNAME_CHARS)
        if "roles" in fields:
            self.store.set_member_roles(sid, uid, fields["roles"])
        if "nickname" in fields:
            self.store.set_nickname(sid, uid, fields["nickname"])
        await self.rt.refresh_visibility(sid)
        await self.rt.emit("server:member_update", {"serverPublicId": sid, "memberPublicId": uid}, server_room(sid))

    # ------------------------------------------------------------------ roles
    async def create_role(self, sid: Any, name: Any, permissions: Any = 0, *, color: Any = None,
                          hoist: Any = False) -> dict[str, Any]:
        """Create a role; broadcast ``server:role_create``. Returns ``{"role"}``. Raises BadRequest, NotFound."""
        _need_str(sid, "serverId")
        _need_str(name, "name")
        try:
            perms = parse_permissions(0 if permissions is None else permissions)
        except ValueError as exc:
            raise BadRequest(str(exc)) from exc
        _color(color)
        if not isinstance(hoist, bool):
            raise BadRequest("hoist must be a boolean")
        role = self.store.create_role(sid, name, perms, color=color, hoist=hoist)
        await self.rt.emit("server:role_create", {"serverPublicId": sid, "role": role}, server_room(sid))
        return {"role": role}

    async def update_role(self, sid: str, rid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a role; broadcast ``server:role_update``. Returns the Role."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = _need_str(fields["name"], "name")
        if "color" in fields:
            clean["color"] = _color(fields["color"])
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
            if position is None or _opt_int(position, "position") is None:
                raise BadRequest("position must be a non-negative integer")
            clean["position"] = position
        role = self.store.update_role(sid, rid, clean)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit("server:role_update", {"serverPublicId": sid, "role": role}, server_room(sid))
        return role

    async def delete_role(self, sid: str, rid: str) -> None:
        """Delete a role; broadcast ``server:role_delete``."""
        self.store.delete_role(sid, rid)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit("server:role_delete", {"serverPublicId": sid, "rolePublicId": rid}, server_room(sid))

    async def reorder_roles(self, sid: str, order: list[str]) -> list[dict[str, Any]]:
        """Give the listed roles positions 1.. in order; broadcast ``server:roles_order_update``."""
        for pos, rid in enumerate(order, start=1):
            self.store.update_role(sid, rid, {"position": pos})
        roles = [{"publicId": r["publicId"], "position": r["position"]} for r in self.store.roles(sid)]
        await self.rt.emit("server:roles_order_update", {"serverPublicId": sid, "roles": roles}, server_room(sid))
        return roles

    # ------------------------------------------------------------------ channels
    async def create_channel(self, sid: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create a channel from a C7 body; join rooms; broadcast ``server:channels_updated``."""
        name = _need_str(body.get("name"), "name")
        ctype = body.get("type", "TEXT")
        if ctype not in CREATABLE_CHANNEL_TYPES:
            raise BadRequest("type must be TEXT or VOICE")
        category_id = body.get("categoryId")
        if category_id is not None:
            _need_str(category_id, "categoryId")
            try:
                self.store.category_row(sid, category_id)
            except NotFound as exc:
                raise BadRequest("categories.errors.not_found") from exc
        is_private = body.get("isPrivate", False)
        if not isinstance(is_private, bool):
            raise BadRequest("isPrivate must be a boolean")
        cid = self.store.create_channel(sid, name, ctype, category_id=category_id, is_private=is_private)
        self.store.inherit_category(cid)
        await self.rt.on_channel_created(sid, cid)
        await self.rt.emit("server:channels_updated", {"serverPublicId": sid}, server_room(sid))
        return self.store.channel(cid)

    async def create_category(self, sid: str, name: Any) -> dict[str, Any]:
        """Create a category; broadcast ``server:categories_updated``."""
        _need_str(name, "name")
        cat_id = self.store.create_category(sid, name)
        await self.rt.emit("server:categories_updated", {"serverPublicId": sid}, server_room(sid))
        return self.store.category(sid, cat_id)

    async def update_channel(self, cid: str, fields: dict[str, Any]) -> None:
        """Rename a channel or change its description; broadcast ``server:channels_updated``."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = _need_str(fields["name"], "name")
        if "description" in fields:
            clean["description"] = _opt_str(fields["description"], "description", MAX_DESCRIPTION_CHARS)
        row = self.store.channel_row(cid)
        self.store.update_channel(cid, clean)
        if row["server_id"] is not None:
            await self.rt.emit("server:channels_updated", {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def delete_channel(self, cid: str) -> None:
        """Delete a channel; broadcast ``server:channels_updated`` and close its room."""
        row = self.store.channel_row(cid)
        for uid in list(self.rt.voice.get(cid, {})):
            await self.rt.voice_leave(uid)
        self.store.delete_channel(cid)
        await self.rt.sio.close_room(channel_room(cid))
        if row["server_id"] is not None:
            await self.rt.emit("server:channels_updated", {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def open_dm(self, uid: str, other: str) -> dict[str, Any]:
        """Open (or return) the DM between two users; the first open sends ``dm:new`` to ``other``."""
        if other == uid:
            raise BadRequest("channels.errors.cannot_dm_self")
        cid, created = self.store.open_dm(uid, other)
        if created:
            await self.rt.on_dm_opened(cid, [uid, other])
            await self.rt.emit("dm:new", self.store.dm_record(cid, other), user_room(other))
        return self.store.dm_record(cid, uid)

    # ------------------------------------------------------------------ messages
    async def post_message(self, cid: Any, author_id: Any, content: Any, embeds: Any = None) -> dict[str, Any]:
        """Store and deliver a message as if ``author_id`` had sent it (no permission check).

        Returns:
            ``{"message": Message}``.

        Raises:
            BadRequest: Bad types or empty content without embeds. NotFound: Unknown channel or author.
        """
        _need_str(cid, "channelId")
        _need_str(author_id, "authorId")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        embeds = [] if embeds is None else embeds
        if not isinstance(embeds, list) or not all(isinstance(e, dict) for e in embeds):
            raise BadRequest("embeds must be a list of objects")
        if not content.strip() and not embeds:
            raise BadRequest("content or embeds required")
        self.store.user_row(author_id)
        records = self.store.insert_messages(cid, author_id, [content], embeds)
        await self.rt.deliver_messages(records)
        return {"message": records[0]}

    async def post_messages(self, cid: Any, author_id: Any, contents: Any) -> int:
        """Store many messages in one transaction and deliver them in order; return the count."""
        _need_str(cid, "channelId")
        _need_str(author_id, "authorId")
        if not isinstance(contents, list) or not all(isinstance(c, str) and c.strip() for c in contents):
            raise BadRequest("contents must be a list of non-empty strings")
        self.store.user_row(author_id)
        ids, escaped, shared = self.store.insert_bulk(cid, author_id, contents)
        await self.rt.deliver_bulk(cid, ids, escaped, shared)
        return len(ids)

    async def bulk_delete(self, cid: str, ids: Any) -> int:
        """Delete up to 100 messages of a channel; one ``message:deleted`` each. Ids that are not
        messages of this channel are skipped. Returns how many were deleted.

        Raises:
            BadRequest: ``ids`` is not a list of 1 to 100 strings.
        """
        if not isinstance(ids, list) or not 1 <= len(ids) <= 100 or \
                not all(isinstance(i, str) and 0 < len(i) <= MAX_ID_CHARS for i in ids):
            raise BadRequest("messageIds must be a list of 1 to 100 message ids")
        chan = self.store.channel_row(cid)
        found = []
        for mid in dict.fromkeys(ids):
            try:
                row = self.store.message_row(mid)
            except NotFound:
                continue
            if row["channel_id"] == cid:
                found.append(mid)
        self.store.delete_messages(found)
        for mid in found:
            await self.rt.emit("message:deleted", {"publicId": mid, "messagePublicId": mid, "channelPublicId": cid,
                                                   "serverPublicId": chan["server_id"]}, channel_room(cid))
        return len(found)

    async def set_pinned(self, cid: str, mid: str, pinned: bool) -> None:
        """Pin or unpin a message of a channel; ``message:pinned {messagePublicId, channelPublicId,
        pinned}`` to the channel room when that changed something.

        Raises:
            NotFound: No such message in this channel.
        """
        row = self.store.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        if self.store.set_pinned(mid, pinned):
            await self.rt.emit("message:pinned", {"messagePublicId": mid, "channelPublicId": cid, "pinned": pinned},
                               channel_room(cid))

    # ------------------------------------------------------------------ invites
    async def create_invite(self, sid: str, channel_id: Any, inviter_id: Any, *, max_age: Any = None,
                            max_uses: Any = None) -> dict[str, Any]:
        """Create an invite; return ``{"invite": ServerInvite}``."""
        if channel_id is not None:
            _need_str(channel_id, "channelPublicId")
            chan = self.store.channel_row(channel_id)
            if chan["server_id"] != sid:
                raise BadRequest("channels.errors.not_in_server")
        _opt_int(max_age, "maxAge")
        _opt_int(max_uses, "maxUses")
        code = self.store.create_invite(sid, channel_id, inviter_id, max_age_s=max_age, max_uses=max_uses)
        return {"invite": self.store.server_invite(code)}

    # ------------------------------------------------------------------ emojis, webhooks, notifications
    async def create_emoji(self, sid: str, body: dict[str, Any], creator_id: str | None) -> dict[str, Any]:
        """Create a custom emoji from ``{name, imageUrl, isAnimated?}``; return the Emoji record.

        Raises:
            BadRequest: ``name`` is not 2 to 32 characters of ``[A-Za-z0-9_]``, ``imageUrl`` is not a
                URL string, ``isAnimated`` is not a boolean, or the server has :data:`MAX_EMOJIS`.
            Conflict: The server already has an emoji with that name.
        """
        name = body.get("name")
        if not isinstance(name, str) or not _EMOJI_NAME.fullmatch(name):
            raise BadRequest("name must be 2 to 32 characters of letters, digits and underscores")
        url = _need_str(body.get("imageUrl"), "imageUrl", limit=MAX_URL_CHARS)
        animated = body.get("isAnimated", False)
        if not isinstance(animated, bool):
            raise BadRequest("isAnimated must be a boolean")
        if len(self.store.emojis(sid)) >= MAX_EMOJIS:
            raise BadRequest("emojis.errors.limit_reached")
        if self.store.emoji_named(sid, name):
            raise Conflict("emojis.errors.name_taken")
        return self.store.create_emoji(sid, name, url, animated=animated, creator_id=creator_id)

    async def create_webhook(self, cid: str, body: dict[str, Any], creator_id: str | None) -> dict[str, Any]:
        """Create a webhook on a server channel from ``{name, avatarUrl?}``; return it with its token.

        Raises:
            BadRequest: A bad field, a DM channel, or :data:`MAX_WEBHOOKS` on the channel already.
        """
        name = _need_str(body.get("name"), "name", limit=MAX_WEBHOOK_NAME_CHARS)
        avatar = _opt_str(body.get("avatarUrl"), "avatarUrl", MAX_URL_CHARS)
        if self.store.channel_row(cid)["server_id"] is None:
            raise BadRequest("webhooks.errors.not_a_server_channel")
        if len(self.store.webhooks(cid)) >= MAX_WEBHOOKS:
            raise BadRequest("webhooks.errors.limit_reached")
        return self.store.create_webhook(cid, name, avatar, creator_id)

    async def update_webhook(self, wid: str, body: dict[str, Any]) -> dict[str, Any]:
        """Change a webhook from ``{name?, avatarUrl?}`` (null clears the avatar); return the changes."""
        clean: dict[str, Any] = {}
        if "name" in body:
            clean["name"] = _need_str(body["name"], "name", limit=MAX_WEBHOOK_NAME_CHARS)
        if "avatarUrl" in body:
            clean["avatarUrl"] = _opt_str(body["avatarUrl"], "avatarUrl", MAX_URL_CHARS)
        self.store.update_webhook(wid, clean)
        return clean

    async def execute_webhook(self, wid: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
        """Post a message through a webhook from ``{content?, username?, avatarUrl?, embeds?}``.

        The message is stored with the webhook's pseudo-user as author and broadcast as
        ``message:new`` to the channel room (no nonce).

        Returns:
            The Message record.

        Raises:
            NotFound: Unknown webhook or wrong token.
            BadRequest: Bad field types, nothing to post, or content/embeds over the limits.
        """
        row = self.store.webhook_for_token(wid, token)
        content = body.get("content", "")
        content = "" if content is None else content
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        embeds = body.get("embeds", [])
        embeds = [] if embeds is None else embeds
        if not isinstance(embeds, list) or not all(isinstance(e, dict) for e in embeds):
            raise BadRequest("embeds must be a list of objects")
        username = body.get("username")
        if username is not None:
            _need_str(username, "username", limit=MAX_WEBHOOK_NAME_CHARS)
        avatar = _opt_str(body.get("avatarUrl"), "avatarUrl", MAX_URL_CHARS)
        if not content.strip() and not embeds:
            raise BadRequest("content or embeds required")
        error = self.rt.check_content(content, embeds)
        if error is not None:
            raise BadRequest(error)
        record = self.store.insert_webhook_message(row, content, embeds, username=username, avatar_url=avatar)
        await self.rt.deliver_messages([record])
        return record

    async def set_notifications(self, sid: str, uid: str, body: dict[str, Any]) -> None:
        """Change a member's notification settings from ``{muted?, muteUntil?, mentionsOnly?}``.

        Raises:
            BadRequest: ``muted``/``mentionsOnly`` not booleans, ``muteUntil`` not an ISO-8601 time
                with a zone (or null), or no known key at all.
        """
        clean: dict[str, Any] = {}
        for key in ("muted", "mentionsOnly"):
            if key in body:
                if not isinstance(body[key], bool):
                    raise BadRequest(f"{key} must be a boolean")
                clean[key] = body[key]
        if "muteUntil" in body:
            until = body["muteUntil"]
            if until is not None:
                if not isinstance(until, str) or len(until) > 64:
                    raise BadRequest("muteUntil must be an ISO-8601 time or null")
                try:
                    parsed = datetime.fromisoformat(until[:-1] + "+00:00" if until.endswith("Z") else until)
                except ValueError as exc:
                    raise BadRequest("muteUntil must be an ISO-8601 time or null") from exc
                if parsed.tzinfo is None:
                    raise BadRequest("muteUntil must carry a time zone")
                until = iso_at(parsed.timestamp())
            clean["muteUntil"] = until
        if not clean:
            raise BadRequest("give muted, muteUntil or mentionsOnly")
        self.store.set_notifications(sid, uid, clean)
    # ------------------------------------------------------------------ overrides, categories, channel copies
    # Permission overwrites of channels and categories, category edit/delete/sync, channel
    # sync/duplicate. Every change refreshes the affected channel rooms at once and tells the
    # server room ``server:channels_updated`` / ``server:categories_updated``.

    async def _channels_changed(self, sid: str, channel_ids: list[str] | None = None) -> None:
        await self.rt.refresh_visibility(sid, channel_ids)
        await self.rt.emit("server:channels_updated", {"serverPublicId": sid}, server_room(sid))

    async def _categories_changed(self, sid: str) -> None:
        await self.rt.emit("server:categories_updated", {"serverPublicId": sid}, server_room(sid))

    @staticmethod
    def _override_bits(value: Any, name: str) -> int:
        """A permission bitfield of known bits (int or decimal string). Raises BadRequest."""
        try:
            bits = parse_permissions(value)
        except ValueError as exc:
            raise BadRequest(f"{name} must be a permission bitfield as a decimal string") from exc
        if bits & ~ALL_PERMISSIONS:
            raise BadRequest(f"{name} has unknown permission bits")
        return bits

    async def set_override(self, scope_id: str, body: dict[str, Any]) -> bool:
        """Create or replace one override ``{targetId, type, allow, deny}`` on a channel or a
        category; return True when it was created.

        Raises:
            BadRequest: A malformed body, overlapping allow and deny, a ROLE target that is not a
                role of the server or a MEMBER target that is not a member. NotFound: Unknown scope.
        """
        kind_of_scope, sid = self.store.override_scope(scope_id)
        target = _need_str(body.get("targetId"), "targetId", limit=MAX_ID_CHARS)
        kind = body.get("type")
        if kind not in OVERRIDE_TYPES:
            raise BadRequest("type must be ROLE or MEMBER")
        allow = self._override_bits(body.get("allow", "0"), "allow")
        deny = self._override_bits(body.get("deny", "0"), "deny")
        if allow & deny:
            raise BadRequest("allow and deny must not share a permission")
        if kind == "ROLE":
            try:
                self.store.role_row(sid, target)
            except NotFound as exc:
                raise BadRequest("roles.errors.not_found") from exc
        elif not self.store.is_member(sid, target):
            raise BadRequest("members.errors.not_found")
        created = self.store.set_override(sid, scope_id, target, kind, allow, deny)
        await self._scope_changed(kind_of_scope, sid, scope_id)
        return created

    async def delete_override(self, scope_id: str, override_id: str) -> None:
        """Delete one override of a channel or category. Raises NotFound."""
        kind_of_scope, sid = self.store.override_scope(scope_id)
        self.store.delete_override(scope_id, override_id)
        await self._scope_changed(kind_of_scope, sid, scope_id)

    async def _scope_changed(self, kind_of_scope: str, sid: str, scope_id: str) -> None:
        if kind_of_scope == "channel":
            await self._channels_changed(sid, [scope_id])
        else:
            await self._categories_changed(sid)

    async def update_category(self, sid: str, cat_id: str, fields: dict[str, Any]) -> None:
        """Rename a category and/or change its ``isPrivate``; ``server:categories_updated``.

        A category's privacy and overrides reach its channels when they are created in it and
        when it is synced, not before.
        """
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = _need_str(fields["name"], "name")
        if "isPrivate" in fields:
            if not isinstance(fields["isPrivate"], bool):
                raise BadRequest("isPrivate must be a boolean")
            clean["isPrivate"] = fields["isPrivate"]
        self.store.update_category(sid, cat_id, clean)
        await self._categories_changed(sid)

    async def delete_category(self, sid: str, cat_id: str) -> None:
        """Delete a category; its channels become uncategorised. ``server:categories_updated``,
        then ``server:channels_updated`` when channels moved."""
        moved = self.store.delete_category(sid, cat_id)
        await self._categories_changed(sid)
        if moved:
            await self.rt.emit("server:channels_updated", {"serverPublicId": sid}, server_room(sid))

    async def sync_category(self, sid: str, cat_id: str) -> None:
        """Copy a category's overrides and ``isPrivate`` onto its channels; rooms follow at once."""
        ids = self.store.sync_category(sid, cat_id)
        await self._channels_changed(sid, ids)

    async def sync_channel(self, cid: str) -> None:
        """Copy the parent category's overrides and ``isPrivate`` onto a channel.

        Raises:
            BadRequest: The channel has no category. NotFound: Unknown channel.
        """
        self.store.sync_channel(cid)
        await self._channels_changed(self.store.channel_row(cid)["server_id"], [cid])

    async def duplicate_channel(self, cid: str) -> dict[str, Any]:
        """Copy a channel (settings and overrides, not messages); return the new Channel record."""
        new = self.store.duplicate_channel(cid)
        sid = self.store.channel_row(new)["server_id"]
        await self.rt.on_channel_created(sid, new)
        await self.rt.emit("server:channels_updated", {"serverPublicId": sid}, server_room(sid))
        return self.store.channel(new)

    # ------------------------------------------------------------------ raw emit
    async def emit(self, event: Any, payload: Any, *, to_user: Any = None, to_server: Any = None,
                   to_channel: Any = None) -> None:
        """Send a raw event to a user, server room, channel room, or (none given) every socket."""
        _need_str(event, "event")
        rooms: list[str] = []
        if to_user is not None:
            rooms.append(user_room(_need_str(to_user, "toUser")))
        if to_server is not None:
            rooms.append(server_room(_need_str(to_server, "toServer")))
        if to_channel is not None:
            rooms.append(channel_room(_need_str(to_channel, "toChannel")))
        if rooms:
            await self.rt.emit(event, payload, rooms)
        else:
            await self.rt.sio.emit(event, payload)
