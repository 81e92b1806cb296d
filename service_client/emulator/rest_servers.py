"""REST routes of the emulator: servers: listing, creation, settings, leaving, stats, vanity code, notification settings, audit log and custom emojis."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops import Conflict
from .ops_extras import ExtrasOps
from .ops_members import MemberOps
from .ops_servers import ServerOps
from .routing import Ctx, Handler, HTTPError, json_response, no_content
from .store import BadRequest, Forbidden
from .store.channels import ChannelRepository
from .store.extras import ExtrasRepository
from .store.members import MemberRepository
from .store.servers import ServerRepository
from .store.users import UserRepository


class ServerRoutes:
    """Servers: listing, creation, settings, leaving, stats, vanity code, notification settings, audit log and custom emojis.

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        users: The users repository.
        servers: The servers repository.
        members: The members repository.
        channels: The channels repository.
        extras: The extras repository.
        server_ops: The operations on servers.
        member_ops: The operations on members.
        extras_ops: The operations on extras.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, users: UserRepository, servers: ServerRepository, members: MemberRepository,
                 channels: ChannelRepository, extras: ExtrasRepository, server_ops: ServerOps, member_ops: MemberOps,
                 extras_ops: ExtrasOps, access: Access) -> None:
        self.users = users
        self.servers = servers
        self.members = members
        self.channels = channels
        self.extras = extras
        self.server_ops = server_ops
        self.member_ops = member_ops
        self.extras_ops = extras_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.LIST_SERVERS, self.get_servers),
            (endpoints.CREATE_SERVER, self.post_server),
            (endpoints.GET_SERVER, self.get_server),
            (endpoints.EDIT_SERVER, self.patch_server),
            (endpoints.DELETE_SERVER, self.delete_server),
            (endpoints.LEAVE_SERVER, self.leave_server),
            (endpoints.BOOST_SERVER, self.noop),
            (endpoints.MARK_SERVER_READ, self.noop),
            (endpoints.GET_SERVER_STATS, self.get_stats),
            (endpoints.GET_VANITY, self.get_vanity),
            (endpoints.SET_NOTIFICATIONS, self.put_notifications),
            (endpoints.GET_AUDIT_LOG, self.get_audit_logs),
            (endpoints.LIST_EMOJIS, self.get_emojis),
            (endpoints.CREATE_EMOJI, self.post_emoji),
            (endpoints.DELETE_EMOJI, self.delete_emoji),
        ]

    async def get_servers(self, ctx: Ctx) -> Response:
        """``GET /servers`` -> ``{"servers": [Server]}``."""
        return json_response({"servers": self.servers.servers_of(ctx.uid)})

    async def post_server(self, ctx: Ctx) -> Response:
        """``POST /servers {name, iconUrl?}`` -> 201 ``{"server"}``; bots get 403."""
        body = ctx.body()
        if self.users.user(ctx.uid)["isBot"]:
            raise Forbidden("Bots cannot create servers.")
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.server_ops.create_server(body["name"], ctx.uid, image_url=body.get("iconUrl"))
        return json_response({"server": result["server"]}, 201)

    async def get_server(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}`` -> bare Server."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response(self.servers.server(sid))

    async def patch_server(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id} {name?, imageUrl?}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "imageUrl") if k in body}
        await self.server_ops.update_server(sid, fields)
        return no_content()

    async def delete_server(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}`` -> 204 (owner only)."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        if self.servers.server_row(sid)["owner_id"] != ctx.uid:
            raise Forbidden("servers.errors.not_owner")
        await self.server_ops.delete_server(sid)
        return no_content()

    async def leave_server(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/leave`` -> 204 (the owner cannot leave: 400)."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        if self.servers.server_row(sid)["owner_id"] == ctx.uid:
            raise BadRequest("servers.errors.owner_cannot_leave")
        await self.member_ops.leave_server(sid, ctx.uid)
        return no_content()

    async def noop(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/boost`` and ``/read`` -> 204: membership checked, no other effect."""
        self.access.server(ctx.params["server_id"], ctx.uid)
        return no_content()

    async def get_stats(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/stats`` -> bare ``{memberCount, channelCount, roleCount}``."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response({"memberCount": len(self.members.member_ids(sid)),
                              "channelCount": len(self.channels.channel_ids_of(sid)),
                              "roleCount": len(self.members.roles(sid))})

    async def get_vanity(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/vanity`` -> ``{"vanityCode": str | null}`` (members)."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response({"vanityCode": self.servers.vanity_code(sid)})

    async def put_notifications(self, ctx: Ctx) -> Response:
        """``PUT /servers/{server_id}/notifications {muted?, muteUntil?, mentionsOnly?}`` -> 204: the
        caller's own settings for the server."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        await self.extras_ops.set_notifications(sid, ctx.uid, ctx.body())
        return no_content()

    async def get_audit_logs(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/audit-logs?limit=&action=`` -> ``{"logs": [AuditEntry]}``, newest
        first (VIEW_AUDIT_LOG; ``limit`` default 50, clamped to 1..100; ``action`` an exact name)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        limit = ctx.q_int("limit", 50)
        action = ctx.q("action") or None
        return json_response({"logs": self.extras.audit_logs(sid, limit, action)})

    async def get_emojis(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/emojis`` -> ``{"emojis": [Emoji]}`` (members)."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response({"emojis": self.extras.emojis(sid)})

    async def post_emoji(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/emojis {name, imageUrl, isAnimated?}`` -> 201 ``{"emoji"}``
        (MANAGE_SERVER; name 2 to 32 of ``[A-Za-z0-9_]``; a name already used: 409)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        try:
            emoji = await self.extras_ops.create_emoji(sid, ctx.body(), ctx.uid)
        except Conflict as exc:
            raise HTTPError(409, str(exc)) from exc
        return json_response({"emoji": emoji}, 201)

    async def delete_emoji(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/emojis/{emoji_id}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        self.extras.delete_emoji(sid, ctx.params["emoji_id"])
        return no_content()
