"""Operations on channels: channels, categories, permission overrides and DMs, with the room changes they cause."""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .ops_checks import (
    MAX_DESCRIPTION_CHARS,
    need_str,
    opt_str,
)
from .realtime import MAX_ID_CHARS, Realtime, channel_room, server_room, user_room
from .store import (
    ALL_PERMISSIONS,
    CREATABLE_CHANNEL_TYPES,
    OVERRIDE_TYPES,
    BadRequest,
    NotFound,
    parse_permissions,
)
from .store.channels import ChannelRepository
from .store.members import MemberRepository


class ChannelOps:
    """Channels, categories, permission overrides and DMs, with the room changes they cause.

    Every change of an override, a category or a channel copy refreshes the affected channel
    rooms at once and tells the server room ``server:channels_updated`` /
    ``server:categories_updated``.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        members: The members repository.
        channels: The channels repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, members: MemberRepository, channels: ChannelRepository, realtime: Realtime) -> None:
        self.members = members
        self.channels = channels
        self.rt = realtime

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
                self.channels.category_row(sid, category_id)
            except NotFound as exc:
                raise BadRequest("categories.errors.not_found") from exc
        is_private = body.get("isPrivate", False)
        if not isinstance(is_private, bool):
            raise BadRequest("isPrivate must be a boolean")
        cid = self.channels.create_channel(sid, name, ctype, category_id=category_id, is_private=is_private)
        self.channels.inherit_category(cid)
        if is_private and creator is not None:
            self.channels.grant_creator(sid, cid, creator)
        await self.rt.on_channel_created(sid, cid)
        await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.channels.channel(cid)

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
        cat_id = self.channels.create_category(sid, name, is_private=is_private)
        if is_private and creator is not None:
            self.channels.grant_creator(sid, cat_id, creator)
        await self.rt.emit(endpoints.ON_SERVER_CATEGORIES_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.channels.category(sid, cat_id)

    async def update_channel(self, cid: str, fields: dict[str, Any]) -> None:
        """Rename a channel or change its description; broadcast ``server:channels_updated``."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = need_str(fields["name"], "name")
        if "description" in fields:
            clean["description"] = opt_str(fields["description"], "description", MAX_DESCRIPTION_CHARS)
        row = self.channels.channel_row(cid)
        self.channels.update_channel(cid, clean)
        if row["server_id"] is not None:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def delete_channel(self, cid: str) -> None:
        """Delete a channel; broadcast ``server:channels_updated`` and close its room."""
        row = self.channels.channel_row(cid)
        for uid in list(self.rt.voice.get(cid, {})):
            await self.rt.voice_events.voice_leave(uid)
        self.channels.delete_channel(cid)
        await self.rt.sio.close_room(channel_room(cid))
        if row["server_id"] is not None:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": row["server_id"]},
                               server_room(row["server_id"]))

    async def open_dm(self, uid: str, other: str) -> dict[str, Any]:
        """Open (or return) the DM between two users; the first open sends ``dm:new`` to ``other``."""
        if other == uid:
            raise BadRequest("channels.errors.cannot_dm_self")
        cid, created = self.channels.open_dm(uid, other)
        if created:
            await self.rt.on_dm_opened(cid, [uid, other])
            await self.rt.emit(endpoints.ON_DM_NEW, self.channels.dm_record(cid, other), user_room(other))
        return self.channels.dm_record(cid, uid)

    async def _channels_changed(self, sid: str, channel_ids: list[str] | None = None) -> None:
        await self.rt.refresh_visibility(sid, channel_ids)
        await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))

    async def _categories_changed(self, sid: str) -> None:
        await self.rt.emit(endpoints.ON_SERVER_CATEGORIES_UPDATED, {"serverPublicId": sid}, server_room(sid))

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
        kind_of_scope, sid = self.channels.override_scope(scope_id)
        target = need_str(body.get("targetId"), "targetId", limit=MAX_ID_CHARS)
        kind = body.get("type")
        if kind not in OVERRIDE_TYPES:
            raise BadRequest("type must be ROLE or MEMBER")
        allow = self._override_bits(body.get("allow", "0"), "allow")
        deny = self._override_bits(body.get("deny", "0"), "deny")
        if allow & deny:
            raise BadRequest("allow and deny must not share a permission")
        if kind == "ROLE":
            try:
                self.members.role_row(sid, target)
            except NotFound as exc:
                raise BadRequest("roles.errors.not_found") from exc
        elif not self.members.is_member(sid, target):
            raise BadRequest("members.errors.not_found")
        created = self.channels.set_override(sid, scope_id, target, kind, allow, deny)
        await self._scope_changed(kind_of_scope, sid, scope_id)
        return created

    async def delete_override(self, scope_id: str, override_id: str) -> None:
        """Delete one override of a channel or category. Raises NotFound."""
        kind_of_scope, sid = self.channels.override_scope(scope_id)
        self.channels.delete_override(scope_id, override_id)
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
            clean["name"] = need_str(fields["name"], "name")
        if "isPrivate" in fields:
            if not isinstance(fields["isPrivate"], bool):
                raise BadRequest("isPrivate must be a boolean")
            clean["isPrivate"] = fields["isPrivate"]
        self.channels.update_category(sid, cat_id, clean)
        await self._categories_changed(sid)

    async def delete_category(self, sid: str, cat_id: str) -> None:
        """Delete a category; its channels become uncategorised. ``server:categories_updated``,
        then ``server:channels_updated`` when channels moved."""
        moved = self.channels.delete_category(sid, cat_id)
        await self._categories_changed(sid)
        if moved:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))

    async def sync_category(self, sid: str, cat_id: str) -> None:
        """Copy a category's overrides and ``isPrivate`` onto its channels; rooms follow at once."""
        ids = self.channels.sync_category(sid, cat_id)
        await self._channels_changed(sid, ids)

    async def sync_channel(self, cid: str) -> None:
        """Copy the parent category's overrides and ``isPrivate`` onto a channel.

        Raises:
            BadRequest: The channel has no category. NotFound: Unknown channel.
        """
        self.channels.sync_channel(cid)
        await self._channels_changed(self.channels.channel_row(cid)["server_id"], [cid])

    async def duplicate_channel(self, cid: str) -> dict[str, Any]:
        """Copy a channel (settings and overrides, not messages); return the new Channel record."""
        new = self.channels.duplicate_channel(cid)
        sid = self.channels.channel_row(new)["server_id"]
        await self.rt.on_channel_created(sid, new)
        await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.channels.channel(new)
