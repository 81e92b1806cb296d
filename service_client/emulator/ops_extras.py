"""Operations on extras: custom emojis, webhooks, notification settings and raw emits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

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
from .realtime import Realtime, channel_room, server_room, user_room
from .store import (
    BadRequest,
    iso_at,
)
from .store.channels import ChannelRepository
from .store.extras import ExtrasRepository
from .store.servers import ServerRepository


class ExtrasOps:
    """Custom emojis, webhooks, notification settings and raw emits.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        servers: The servers repository.
        channels: The channels repository.
        extras: The extras repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, servers: ServerRepository, channels: ChannelRepository, extras: ExtrasRepository,
                 realtime: Realtime) -> None:
        self.servers = servers
        self.channels = channels
        self.extras = extras
        self.rt = realtime

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
        if len(self.extras.emojis(sid)) >= MAX_EMOJIS:
            raise BadRequest("emojis.errors.limit_reached")
        if self.extras.emoji_named(sid, name):
            raise Conflict("emojis.errors.name_taken")
        return self.extras.create_emoji(sid, name, url, animated=animated, creator_id=creator_id)

    async def create_webhook(self, cid: str, body: dict[str, Any], creator_id: str | None) -> dict[str, Any]:
        """Create a webhook on a server channel from ``{name, avatarUrl?}``; return it with its token.

        Raises:
            BadRequest: A bad field, a DM channel, or :data:`MAX_WEBHOOKS` on the channel already.
        """
        name = need_str(body.get("name"), "name", limit=MAX_WEBHOOK_NAME_CHARS)
        avatar = opt_str(body.get("avatarUrl"), "avatarUrl", MAX_URL_CHARS)
        if self.channels.channel_row(cid)["server_id"] is None:
            raise BadRequest("webhooks.errors.not_a_server_channel")
        if len(self.extras.webhooks(cid)) >= MAX_WEBHOOKS:
            raise BadRequest("webhooks.errors.limit_reached")
        return self.extras.create_webhook(cid, name, avatar, creator_id)

    async def update_webhook(self, wid: str, body: dict[str, Any]) -> dict[str, Any]:
        """Change a webhook from ``{name?, avatarUrl?}`` (null clears the avatar); return the changes."""
        clean: dict[str, Any] = {}
        if "name" in body:
            clean["name"] = need_str(body["name"], "name", limit=MAX_WEBHOOK_NAME_CHARS)
        if "avatarUrl" in body:
            clean["avatarUrl"] = opt_str(body["avatarUrl"], "avatarUrl", MAX_URL_CHARS)
        self.extras.update_webhook(wid, clean)
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
        row = self.extras.webhook_for_token(wid, token)
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
        error = self.rt.message_events.check_content(content, embeds)
        if error is not None:
            raise BadRequest(f"{error}: {RULES[error]}" if error in RULES else error)
        record = self.extras.insert_webhook_message(row, content, embeds, username=username, avatar_url=avatar)
        await self.rt.message_events.deliver_messages([record])
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
        self.servers.set_notifications(sid, uid, clean)

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
