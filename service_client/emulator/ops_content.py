"""State changes of roles, channels, messages and invites, and their socket events."""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .._message_rules import CONTENT_MAX_CHARS, RULES, is_blank, js_length
from .ops_checks import MAX_DESCRIPTION_CHARS, check_color, need_str, opt_int, opt_str
from .ops_members import MemberOps
from .realtime import MAX_ID_CHARS, channel_room, server_room, user_room
from .store import (
    CREATABLE_CHANNEL_TYPES,
    BadRequest,
    Forbidden,
    NotFound,
    parse_permissions,
)


class ContentOps(MemberOps):
    """Roles, channels, messages and invites (see :class:`~.ops.Operations`)."""

    # ------------------------------------------------------------------ roles
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
        role = self.store.members.create_role(sid, name, perms, color=color, hoist=hoist)
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
        role = self.store.members.update_role(sid, rid, clean)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit(endpoints.ON_SERVER_ROLE_UPDATE, {"serverPublicId": sid, "role": role}, server_room(sid))
        return role

    async def delete_role(self, sid: str, rid: str) -> None:
        """Delete a role; broadcast ``server:role_delete``."""
        self.store.members.delete_role(sid, rid)
        await self.rt.refresh_visibility(sid)
        await self.rt.emit(endpoints.ON_SERVER_ROLE_DELETE, {"serverPublicId": sid, "rolePublicId": rid}, server_room(sid))

    async def reorder_roles(self, sid: str, order: list[str]) -> list[dict[str, Any]]:
        """Give the listed roles positions 1.. in order; broadcast ``server:roles_order_update``."""
        for pos, rid in enumerate(order, start=1):
            self.store.members.update_role(sid, rid, {"position": pos})
        roles = [{"publicId": r["publicId"], "position": r["position"]} for r in self.store.members.roles(sid)]
        await self.rt.emit(endpoints.ON_SERVER_ROLES_ORDER_UPDATE, {"serverPublicId": sid, "roles": roles}, server_room(sid))
        return roles

    # ------------------------------------------------------------------ channels
    async def create_channel(self, sid: str, body: dict[str, Any], *, creator: str | None = None) -> dict[str, Any]:
        """Create a channel from a ``POST /servers/{sid}/channels`` body (``{name, type?, categoryId?,
        isPrivate?}``); join rooms; broadcast ``server:channels_updated``.

        A private channel made by a member (``creator``, the REST caller) also gets that member's
        own override allowing VIEW_CHANNELS and SEND_MESSAGES (:meth:`~.Store.grant_creator`).
        """
        name = need_str(body.get("name"), "name")
        ctype = body.get("type", "TEXT")
        if ctype not in CREATABLE_CHANNEL_TYPES:
            raise BadRequest("type must be TEXT or VOICE")
        category_id = body.get("categoryId")
        if category_id is not None:
            need_str(category_id, "categoryId")
            try:
                self.store.channels.category_row(sid, category_id)
            except NotFound as exc:
                raise BadRequest("categories.errors.not_found") from exc
        is_private = body.get("isPrivate", False)
        if not isinstance(is_private, bool):
            raise BadRequest("isPrivate must be a boolean")
        cid = self.store.channels.create_channel(sid, name, ctype, category_id=category_id, is_private=is_private)
        self.store.channels.inherit_category(cid)
        if is_private and creator is not None:
            self.store.channels.grant_creator(sid, cid, creator)
        await self.rt.on_channel_created(sid, cid)
        await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.store.channels.channel(cid)

    async def create_category(self, sid: str, name: Any, *, is_private: Any = False,
                              creator: str | None = None) -> dict[str, Any]:
        """Create a category; broadcast ``server:categories_updated``. A private one made by a
        member (``creator``) also gets that member's own override allowing VIEW_CHANNELS and
        SEND_MESSAGES, which its new channels inherit.

        Raises:
            BadRequest: A bad name, or ``is_private`` not a bool. NotFound: Unknown server.
        """
        need_str(name, "name")
        if not isinstance(is_private, bool):
            raise BadRequest("isPrivate must be a boolean")
        cat_id = self.store.channels.create_category(sid, name, is_private=is_private)
        if is_private and creator is not None:
            self.store.channels.grant_creator(sid, cat_id, creator)
        await self.rt.emit(endpoints.ON_SERVER_CATEGORIES_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.store.channels.category(sid, cat_id)

    async def update_channel(self, cid: str, fields: dict[str, Any]) -> None:
        """Rename a channel or change its description; broadcast ``server:channels_updated``."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = need_str(fields["name"], "name")
        if "description" in fields:
            clean["description"] = opt_str(fields["description"], "description", MAX_DESCRIPTION_CHARS)
        row = self.store.channels.channel_row(cid)
        self.store.channels.update_channel(cid, clean)
        if row["server_id"] is not None:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def delete_channel(self, cid: str) -> None:
        """Delete a channel; broadcast ``server:channels_updated`` and close its room."""
        row = self.store.channels.channel_row(cid)
        for uid in list(self.rt.voice.get(cid, {})):
            await self.rt.voice_leave(uid)
        self.store.channels.delete_channel(cid)
        await self.rt.sio.close_room(channel_room(cid))
        if row["server_id"] is not None:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def open_dm(self, uid: str, other: str) -> dict[str, Any]:
        """Open (or return) the DM between two users; the first open sends ``dm:new`` to ``other``."""
        if other == uid:
            raise BadRequest("channels.errors.cannot_dm_self")
        cid, created = self.store.channels.open_dm(uid, other)
        if created:
            await self.rt.on_dm_opened(cid, [uid, other])
            await self.rt.emit(endpoints.ON_DM_NEW, self.store.channels.dm_record(cid, other), user_room(other))
        return self.store.channels.dm_record(cid, uid)

    # ------------------------------------------------------------------ messages
    async def post_message(self, cid: Any, author_id: Any, content: Any, embeds: Any = None) -> dict[str, Any]:
        """Store and deliver a message as if ``author_id`` had sent it (no permission check).

        Returns:
            ``{"message": Message}``.

        Raises:
            BadRequest: Bad types, or a message that breaks the message rules (empty content
                without embeds; in limit mode, over the limits). NotFound: Unknown channel or author.
        """
        need_str(cid, "channelId")
        need_str(author_id, "authorId")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise BadRequest("content must be a string")
        embeds = [] if embeds is None else embeds
        if not isinstance(embeds, list) or not all(isinstance(e, dict) for e in embeds):
            raise BadRequest("embeds must be a list of objects")
        error = self.rt.check_content(content, embeds)
        if error is not None:
            raise BadRequest(f"{error}: {RULES[error]}" if error in RULES else error)
        self.store.users.user_row(author_id)
        records = self.store.messages.insert_messages(cid, author_id, [content], embeds)
        await self.rt.deliver_messages(records)
        return {"message": records[0]}

    async def post_messages(self, cid: Any, author_id: Any, contents: Any) -> int:
        """Store many messages in one transaction and deliver them in order; return the count."""
        need_str(cid, "channelId")
        need_str(author_id, "authorId")
        if not isinstance(contents, list) or not all(isinstance(c, str) and not is_blank(c) for c in contents):
            raise BadRequest("contents must be a list of non-empty strings")
        if self.rt.limits:
            for index, content in enumerate(contents):
                if js_length(content) > CONTENT_MAX_CHARS:
                    raise BadRequest(f"contents[{index}]: messages.errors.too_long: {RULES['messages.errors.too_long']}")
        self.store.users.user_row(author_id)
        ids, escaped, shared = self.store.messages.insert_bulk(cid, author_id, contents)
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
        chan = self.store.channels.channel_row(cid)
        found = []
        for mid in dict.fromkeys(ids):
            try:
                row = self.store.messages.message_row(mid)
            except NotFound:
                continue
            if row["channel_id"] == cid:
                found.append(mid)
        self.store.messages.delete_messages(found)
        for mid in found:
            await self.rt.emit(endpoints.ON_MESSAGE_DELETED, {"publicId": mid, "messagePublicId": mid, "channelPublicId": cid,
                                                   "serverPublicId": chan["server_id"]}, channel_room(cid))
        return len(found)

    async def set_pinned(self, cid: str, mid: str, pinned: bool) -> None:
        """Pin or unpin a message of a channel; ``message:pinned {messagePublicId, channelPublicId,
        pinned}`` to the channel room when that changed something.

        Raises:
            NotFound: No such message in this channel.
        """
        row = self.store.messages.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        if self.store.messages.set_pinned(mid, pinned):
            await self.rt.emit(endpoints.ON_MESSAGE_PINNED, {"messagePublicId": mid, "channelPublicId": cid, "pinned": pinned},
                               channel_room(cid))

    # ------------------------------------------------------------------ invites
    async def create_invite(self, sid: str, channel_id: Any, inviter_id: Any, *, max_age: Any = None,
                            max_uses: Any = None, viewer: str | None = None) -> dict[str, Any]:
        """Create an invite; return ``{"invite": ServerInvite}``.

        Raises:
            BadRequest: A bad field, or a channel of another server. NotFound: Unknown channel.
            Forbidden: ``viewer`` (the member asking) may not view the channel: an invite would
                reveal its name.
        """
        if channel_id is not None:
            need_str(channel_id, "channelPublicId")
            chan = self.store.channels.channel_row(channel_id)
            if chan["server_id"] != sid:
                raise BadRequest("channels.errors.not_in_server")
            if viewer is not None and not self.store.channels.can_view(channel_id, viewer):
                raise Forbidden("channels.errors.no_access")
        opt_int(max_age, "maxAge")
        opt_int(max_uses, "maxUses")
        code = self.store.invites.create_invite(sid, channel_id, inviter_id, max_age_s=max_age, max_uses=max_uses)
        return {"invite": self.store.invites.server_invite(code)}
