"""Operations on servers: servers: creation (with channels and categories), changes, deletion."""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .ops_checks import (
    MAX_URL_CHARS,
    need_str,
    opt_str,
)
from .realtime import Realtime, server_room, user_room
from .store import (
    CREATABLE_CHANNEL_TYPES,
    BadRequest,
)
from .store.channels import ChannelRepository
from .store.members import MemberRepository
from .store.servers import ServerRepository
from .store.users import UserRepository


class ServerOps:
    """Servers: creation (with channels and categories), changes, deletion.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        users: The users repository.
        servers: The servers repository.
        members: The members repository.
        channels: The channels repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, users: UserRepository, servers: ServerRepository, members: MemberRepository,
                 channels: ChannelRepository, realtime: Realtime) -> None:
        self.users = users
        self.servers = servers
        self.members = members
        self.channels = channels
        self.rt = realtime

    async def create_server(self, name: Any, owner_id: Any, *, categories: Any = None, channels: Any = None,
                            image_url: Any = None) -> dict[str, Any]:
        """Create a server with categories and channels; return ``{"server", "categories", "channels"}``.

        The owner becomes a member and receives ``server:joined``.

        Raises:
            BadRequest: A malformed argument. NotFound: Unknown owner.
        """
        need_str(name, "name")
        need_str(owner_id, "ownerId")
        opt_str(image_url, "iconUrl", MAX_URL_CHARS)
        categories = [] if categories is None else categories
        channels = [] if channels is None else channels
        if not isinstance(categories, list) or not isinstance(channels, list):
            raise BadRequest("categories and channels must be lists")
        for cat in categories:
            if not isinstance(cat, dict):
                raise BadRequest("each category must be an object")
            need_str(cat.get("name"), "category name")
            if not isinstance(cat.get("channels", []), list):
                raise BadRequest("category channels must be a list")
            for ch in cat.get("channels", []):
                self._check_channel_spec(ch)
        for ch in channels:
            self._check_channel_spec(ch)
        self.users.user_row(owner_id)
        sid = self.servers.create_server(name, owner_id, image_url=image_url)
        cat_out = []
        for cat in categories:
            cat_id = self.channels.create_category(sid, cat["name"])
            for ch in cat.get("channels", []):
                self.channels.create_channel(sid, ch["name"], ch.get("type", "TEXT"), category_id=cat_id)
            cat_out.append(self.channels.category(sid, cat_id))
        for ch in channels:
            self.channels.create_channel(sid, ch["name"], ch.get("type", "TEXT"))
        server = self.servers.server(sid)
        all_channels = self.channels.channels_of(sid)
        await self.rt.on_member_added(sid, owner_id)
        await self.rt.emit(endpoints.ON_SERVER_JOINED, server, user_room(owner_id))
        return {"server": server, "categories": cat_out, "channels": all_channels}

    @staticmethod
    def _check_channel_spec(ch: Any) -> None:
        if not isinstance(ch, dict):
            raise BadRequest("each channel must be an object")
        need_str(ch.get("name"), "channel name")
        if ch.get("type", "TEXT") not in CREATABLE_CHANNEL_TYPES:
            raise BadRequest("channel type must be TEXT or VOICE")

    async def update_server(self, sid: str, fields: dict[str, Any]) -> None:
        """Rename a server or change/clear its icon; broadcast ``server:updated``."""
        clean: dict[str, Any] = {}
        if "name" in fields:
            clean["name"] = need_str(fields["name"], "name")
        if "imageUrl" in fields:
            clean["imageUrl"] = opt_str(fields["imageUrl"], "imageUrl", MAX_URL_CHARS)
        self.servers.update_server(sid, clean)
        await self.rt.emit(endpoints.ON_SERVER_UPDATED, dict({"serverPublicId": sid}, **clean), server_room(sid))

    async def delete_server(self, sid: str) -> None:
        """Delete a server; broadcast ``server:deleted`` and empty its rooms."""
        self.servers.server_row(sid)
        channels = self.channels.channel_ids_of(sid)
        members = self.members.member_ids(sid)
        await self.rt.emit(endpoints.ON_SERVER_DELETED, {"serverPublicId": sid}, server_room(sid))
        for cid in channels:
            for uid in list(self.rt.voice.get(cid, {})):
                await self.rt.voice_events.voice_leave(uid)
        self.servers.delete_server(sid)
        for uid in members:
            await self.rt.on_member_removed(sid, uid, channels)
