"""The REST side's access checks: membership, visibility, and the permission the catalog gives an endpoint.

The permission a check asks for is never named here: it is the routed endpoint's
``permission`` in the catalog (:attr:`.routing.Ctx.permission`). What the checks decide is the
scope: the server of the path, a channel's server, an override scope's server, an invite's
server; and where a DM participant passes.
"""

from __future__ import annotations

from typing import Any

from .routing import Ctx
from .store import Forbidden, NotFound
from .store.channels import ChannelRepository
from .store.database import Database
from .store.extras import ExtrasRepository
from .store.members import MemberRepository
from .store.messages import MessageRepository
from .store.servers import ServerRepository


class Access:
    """Membership, visibility and permission checks of the REST handlers.

    Args:
        servers: The servers repository.
        members: The members repository.
        channels: The channels repository.
        messages: The messages repository.
        extras: The extras repository.
        db: The database.
    """

    def __init__(self, *, servers: ServerRepository, members: MemberRepository, channels: ChannelRepository,
                 messages: MessageRepository, extras: ExtrasRepository, db: Database) -> None:
        self.servers = servers
        self.members = members
        self.channels = channels
        self.messages = messages
        self.extras = extras
        self.db = db

    def server(self, sid: str, uid: str) -> None:
        """404 unknown server, 403 not a member."""
        self.servers.server_row(sid)
        if not self.members.is_member(sid, uid):
            raise Forbidden("servers.errors.not_member")

    def need_perm(self, sid: str, ctx: Ctx) -> None:
        """404 unknown server, 403 not a member or without the permission the catalog gives the
        request's endpoint (:attr:`Ctx.permission`)."""
        self.server(sid, ctx.uid)
        if not self.members.has_perm(sid, ctx.uid, ctx.permission):
            raise Forbidden("servers.errors.missing_permission")

    def channel(self, cid: str, uid: str) -> Any:
        """404 unknown channel, 403 not visible. Returns the channel row."""
        row = self.channels.channel_row(cid)
        if not self.channels.can_view(cid, uid):
            raise Forbidden("channels.errors.no_access")
        return row

    def channel_perm(self, cid: str, ctx: Ctx, *, dm_ok: bool) -> Any:
        """Channel access plus the endpoint's permission on the channel's server (DM
        participants pass when ``dm_ok``)."""
        row = self.channel(cid, ctx.uid)
        if row["server_id"] is None:
            if not dm_ok:
                raise Forbidden("servers.errors.missing_permission")
        elif not self.members.has_perm(row["server_id"], ctx.uid, ctx.permission):
            raise Forbidden("servers.errors.missing_permission")
        return row

    def manage_channel(self, cid: str, ctx: Ctx) -> str:
        """404 unknown channel; 403 a DM, a non-member or without the endpoint's permission
        (MANAGE_CHANNELS, a server permission). Returns the server id."""
        row = self.channels.channel_row(cid)
        if row["server_id"] is None:
            raise Forbidden("servers.errors.missing_permission")
        self.need_perm(row["server_id"], ctx)
        return str(row["server_id"])

    def manage_category(self, sid: str, cat_id: str, ctx: Ctx) -> None:
        """404 unknown server; 403 non-member or without the endpoint's permission; 404 unknown category."""
        self.need_perm(sid, ctx)
        self.channels.category_row(sid, cat_id)

    def read_overrides(self, scope_id: str, uid: str) -> None:
        """404 unknown channel or category; 403 a non-member, or a member who neither holds
        MANAGE_CHANNELS nor may view it."""
        kind, sid = self.channels.override_scope(scope_id)
        self.server(sid, uid)
        if self.members.has_perm(sid, uid, "MANAGE_CHANNELS"):
            return
        view = self.channels.can_view(scope_id, uid) if kind == "channel" else \
            bool(self.channels.category_permissions(sid, scope_id, uid) & 512)
        if not view:
            raise Forbidden("channels.errors.no_access")

    def message_in(self, cid: str, mid: str) -> Any:
        """The row of message ``mid``. Raises NotFound when it is unknown or not in channel ``cid``."""
        row = self.messages.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        return row

    def webhook_in(self, cid: str, wid: str) -> Any:
        """The row of webhook ``wid``. Raises NotFound when it is unknown or not of channel ``cid``."""
        row = self.extras.webhook_row(wid)
        if row["channel_id"] != cid:
            raise NotFound("webhooks.errors.not_found")
        return row

    def invite_visible(self, channel_id: str | None, uid: str) -> bool:
        """Whether a member may see an invite to ``channel_id``: as it may see the channel (an
        invite to no channel, or to one deleted since, shows none)."""
        if channel_id is None or self.db.one("SELECT 1 FROM channels WHERE id=?", (channel_id,)) is None:
            return True
        return bool(self.channels.can_view(channel_id, uid))
