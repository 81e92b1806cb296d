"""State changes of server extras (emojis, webhooks, notification settings), overwrites and categories, and raw emits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import endpoints
from .._message_rules import RULES
from .ops_checks import (
    EMOJI_NAME_RE,
    MAX_EMOJIS,
    MAX_URL_CHARS,
    MAX_WEBHOOK_NAME_CHARS,
    MAX_WEBHOOKS,
    Conflict,
    need_str,
    opt_str,
)
from .ops_content import ContentOps
from .realtime import MAX_ID_CHARS, channel_room, server_room, user_room
from .store import (
    ALL_PERMISSIONS,
    OVERRIDE_TYPES,
    BadRequest,
    NotFound,
    iso_at,
    parse_permissions,
)


class ExtraOps(ContentOps):
    """Emojis, webhooks, notifications, overwrites, categories, raw emits (see :class:`~.ops.Operations`)."""

    # ------------------------------------------------------------------ emojis, webhooks, notifications
    async def create_emoji(self, sid: str, body: dict[str, Any], creator_id: str | None) -> dict[str, Any]:
        """Create a custom emoji from ``{name, imageUrl, isAnimated?}``; return the Emoji record.

        Raises:
            BadRequest: ``name`` is not 2 to 32 characters of ``[A-Za-z0-9_]``, ``imageUrl`` is not a
                URL string, ``isAnimated`` is not a boolean, or the server has :data:`MAX_EMOJIS`.
            Conflict: The server already has an emoji with that name.
        """
        name = body.get("name")
        if not isinstance(name, str) or not EMOJI_NAME_RE.fullmatch(name):
            raise BadRequest("name must be 2 to 32 characters of letters, digits and underscores")
        url = need_str(body.get("imageUrl"), "imageUrl", limit=MAX_URL_CHARS)
        animated = body.get("isAnimated", False)
        if not isinstance(animated, bool):
            raise BadRequest("isAnimated must be a boolean")
        if len(self.store.extras.emojis(sid)) >= MAX_EMOJIS:
            raise BadRequest("emojis.errors.limit_reached")
        if self.store.extras.emoji_named(sid, name):
            raise Conflict("emojis.errors.name_taken")
        return self.store.extras.create_emoji(sid, name, url, animated=animated, creator_id=creator_id)

    async def create_webhook(self, cid: str, body: dict[str, Any], creator_id: str | None) -> dict[str, Any]:
        """Create a webhook on a server channel from ``{name, avatarUrl?}``; return it with its token.

        Raises:
            BadRequest: A bad field, a DM channel, or :data:`MAX_WEBHOOKS` on the channel already.
        """
        name = need_str(body.get("name"), "name", limit=MAX_WEBHOOK_NAME_CHARS)
        avatar = opt_str(body.get("avatarUrl"), "avatarUrl", MAX_URL_CHARS)
        if self.store.channels.channel_row(cid)["server_id"] is None:
            raise BadRequest("webhooks.errors.not_a_server_channel")
        if len(self.store.extras.webhooks(cid)) >= MAX_WEBHOOKS:
            raise BadRequest("webhooks.errors.limit_reached")
        return self.store.extras.create_webhook(cid, name, avatar, creator_id)

    async def update_webhook(self, wid: str, body: dict[str, Any]) -> dict[str, Any]:
        """Change a webhook from ``{name?, avatarUrl?}`` (null clears the avatar); return the changes."""
        clean: dict[str, Any] = {}
        if "name" in body:
            clean["name"] = need_str(body["name"], "name", limit=MAX_WEBHOOK_NAME_CHARS)
        if "avatarUrl" in body:
            clean["avatarUrl"] = opt_str(body["avatarUrl"], "avatarUrl", MAX_URL_CHARS)
        self.store.extras.update_webhook(wid, clean)
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
        row = self.store.extras.webhook_for_token(wid, token)
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
            need_str(username, "username", limit=MAX_WEBHOOK_NAME_CHARS)
        avatar = opt_str(body.get("avatarUrl"), "avatarUrl", MAX_URL_CHARS)
        error = self.rt.check_content(content, embeds)
        if error is not None:
            raise BadRequest(f"{error}: {RULES[error]}" if error in RULES else error)
        record = self.store.extras.insert_webhook_message(row, content, embeds, username=username, avatar_url=avatar)
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
        self.store.servers.set_notifications(sid, uid, clean)

    # ------------------------------------------------------------------ overrides, categories, channel copies
    # Permission overwrites of channels and categories, category edit/delete/sync, channel
    # sync/duplicate. Every change refreshes the affected channel rooms at once and tells the
    # server room ``server:channels_updated`` / ``server:categories_updated``.

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
        kind_of_scope, sid = self.store.channels.override_scope(scope_id)
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
                self.store.members.role_row(sid, target)
            except NotFound as exc:
                raise BadRequest("roles.errors.not_found") from exc
        elif not self.store.members.is_member(sid, target):
            raise BadRequest("members.errors.not_found")
        created = self.store.channels.set_override(sid, scope_id, target, kind, allow, deny)
        await self._scope_changed(kind_of_scope, sid, scope_id)
        return created

    async def delete_override(self, scope_id: str, override_id: str) -> None:
        """Delete one override of a channel or category. Raises NotFound."""
        kind_of_scope, sid = self.store.channels.override_scope(scope_id)
        self.store.channels.delete_override(scope_id, override_id)
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
        self.store.channels.update_category(sid, cat_id, clean)
        await self._categories_changed(sid)

    async def delete_category(self, sid: str, cat_id: str) -> None:
        """Delete a category; its channels become uncategorised. ``server:categories_updated``,
        then ``server:channels_updated`` when channels moved."""
        moved = self.store.channels.delete_category(sid, cat_id)
        await self._categories_changed(sid)
        if moved:
            await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))

    async def sync_category(self, sid: str, cat_id: str) -> None:
        """Copy a category's overrides and ``isPrivate`` onto its channels; rooms follow at once."""
        ids = self.store.channels.sync_category(sid, cat_id)
        await self._channels_changed(sid, ids)

    async def sync_channel(self, cid: str) -> None:
        """Copy the parent category's overrides and ``isPrivate`` onto a channel.

        Raises:
            BadRequest: The channel has no category. NotFound: Unknown channel.
        """
        self.store.channels.sync_channel(cid)
        await self._channels_changed(self.store.channels.channel_row(cid)["server_id"], [cid])

    async def duplicate_channel(self, cid: str) -> dict[str, Any]:
        """Copy a channel (settings and overrides, not messages); return the new Channel record."""
        new = self.store.channels.duplicate_channel(cid)
        sid = self.store.channels.channel_row(new)["server_id"]
        await self.rt.on_channel_created(sid, new)
        await self.rt.emit(endpoints.ON_SERVER_CHANNELS_UPDATED, {"serverPublicId": sid}, server_room(sid))
        return self.store.channels.channel(new)

    # ------------------------------------------------------------------ raw emit
    async def emit(self, event: Any, payload: Any, *, to_user: Any = None, to_server: Any = None,
                   to_channel: Any = None) -> None:
        """Send a raw event to a user, server room, channel room, or (none given) every socket."""
        need_str(event, "event")
        rooms: list[str] = []
        if to_user is not None:
            rooms.append(user_room(need_str(to_user, "toUser")))
        if to_server is not None:
            rooms.append(server_room(need_str(to_server, "toServer")))
        if to_channel is not None:
            rooms.append(channel_room(need_str(to_channel, "toChannel")))
        if rooms:
            await self.rt.emit(event, payload, rooms)
        else:
            await self.rt.sio.emit(event, payload)
