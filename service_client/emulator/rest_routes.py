"""The REST routes of the service's core: auth, users, servers, members, roles, channels, messages, invites."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from .. import endpoints
from .rest_overrides import OverrideRoutes
from .rest_search import search_messages
from .routing import Ctx, json_response, no_content
from .store import STATUSES, BadRequest, Forbidden, NotFound


class CoreRoutes(OverrideRoutes):
    """Users, servers, members, roles, channels, messages, invites (see :class:`~.app.RestApi`)."""

    # ------------------------------------------------------------------ routes
    def _routes(self) -> None:
        serve = self.serve
        serve(endpoints.GET_ME, self.get_me)
        serve(endpoints.LIST_SERVERS, self.get_servers)
        serve(endpoints.CREATE_SERVER, self.post_server)
        serve(endpoints.GET_SERVER, self.get_server)
        serve(endpoints.EDIT_SERVER, self.patch_server)
        serve(endpoints.DELETE_SERVER, self.delete_server)
        serve(endpoints.LEAVE_SERVER, self.leave_server)
        serve(endpoints.BOOST_SERVER, self.noop)
        serve(endpoints.MARK_SERVER_READ, self.noop)
        serve(endpoints.LIST_MEMBERS, self.get_members)
        serve(endpoints.GET_MEMBER, self.get_member)
        serve(endpoints.EDIT_MEMBER, self.patch_member)
        serve(endpoints.LIST_CATEGORIES, self.get_categories)
        serve(endpoints.CREATE_CATEGORY, self.post_category)
        serve(endpoints.CREATE_CHANNEL, self.post_channel)
        serve(endpoints.GET_SERVER_STATS, self.get_stats)
        serve(endpoints.LIST_ROLES, self.get_roles)
        serve(endpoints.CREATE_ROLE, self.post_role)
        serve(endpoints.EDIT_ROLE, self.patch_role)
        serve(endpoints.DELETE_ROLE, self.delete_role)
        serve(endpoints.LIST_BANS, self.get_bans)
        serve(endpoints.LIST_INVITES, self.get_invites)
        serve(endpoints.CREATE_INVITE, self.post_invite)
        serve(endpoints.GET_CHANNEL, self.get_channel)
        serve(endpoints.EDIT_CHANNEL, self.patch_channel)
        serve(endpoints.DELETE_CHANNEL, self.delete_channel)
        serve(endpoints.OPEN_DM, self.get_dm)
        serve(endpoints.GET_HISTORY, self.get_history)
        serve(endpoints.SEARCH_MESSAGES, self.get_search)
        serve(endpoints.LIST_PINS, self.get_pins)
        serve(endpoints.PIN_MESSAGE, self.pin)
        serve(endpoints.UNPIN_MESSAGE, self.unpin)
        serve(endpoints.GET_REACTION_DETAILS, self.get_reaction_details)
        serve(endpoints.BULK_DELETE_MESSAGES, self.bulk_delete)
        serve(endpoints.SET_STATUS, self.patch_settings)
        serve(endpoints.GET_USER, self.get_user)
        serve(endpoints.GET_INVITE, self.get_invite)
        serve(endpoints.DELETE_INVITE, self.delete_invite)
        self._permission_routes()

    async def noop(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/boost`` and ``/read`` -> 204: membership checked, no other effect."""
        self._server_access(ctx.params["server_id"], ctx.uid)
        return no_content()

    async def get_me(self, ctx: Ctx) -> Response:
        """``GET /auth/me`` -> ``{"user": User}``."""
        return json_response({"user": self.store.users.user(ctx.uid, viewer=ctx.uid)})

    async def get_servers(self, ctx: Ctx) -> Response:
        """``GET /servers`` -> ``{"servers": [Server]}``."""
        return json_response({"servers": self.store.servers.servers_of(ctx.uid)})

    async def get_server(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}`` -> bare Server."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.servers.server(sid))

    async def post_server(self, ctx: Ctx) -> Response:
        """``POST /servers {name, iconUrl?}`` -> 201 ``{"server"}``; bots get 403."""
        body = ctx.body()
        if self.store.users.user(ctx.uid)["isBot"]:
            raise Forbidden("Bots cannot create servers.")
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.ops.create_server(body["name"], ctx.uid, image_url=body.get("iconUrl"))
        return json_response({"server": result["server"]}, 201)

    async def patch_server(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id} {name?, imageUrl?}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "imageUrl") if k in body}
        await self.ops.update_server(sid, fields)
        return no_content()

    async def delete_server(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}`` -> 204 (owner only)."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        if self.store.servers.server_row(sid)["owner_id"] != ctx.uid:
            raise Forbidden("servers.errors.not_owner")
        await self.ops.delete_server(sid)
        return no_content()

    async def leave_server(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/leave`` -> 204 (the owner cannot leave: 400)."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        if self.store.servers.server_row(sid)["owner_id"] == ctx.uid:
            raise BadRequest("servers.errors.owner_cannot_leave")
        await self.ops.leave_server(sid, ctx.uid)
        return no_content()

    async def get_members(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/members`` -> a bare array of Members; with ``?search=`` ->
        ``{"members": [...]}`` (VIEW_MEMBERS). The bare array is the service's form: clients (and
        published bots) read the list without a wrapper."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        members = self.store.members.members(sid, viewer=ctx.uid)
        search = ctx.q("search")
        if search is None:
            return json_response(members)
        needle = search.lower()
        out = []
        for m in members:
            u = m["user"]
            if needle in u["name"].lower() or (m["nickname"] or "").lower().find(needle) >= 0:
                out.append({"publicId": u["publicId"], "name": u["name"], "tag": u["tag"], "image": u["image"],
                            "isBot": u["isBot"], "isOwner": m["isOwner"],
                            "roles": [{k: r[k] for k in ("publicId", "name", "color", "hoist", "position")}
                                      for r in m["roles"]]})
        return json_response({"members": out})

    async def get_member(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/members/{user_id}`` -> bare Member; 404 if not a member."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.members.member(sid, ctx.params["user_id"], viewer=ctx.uid))

    async def patch_member(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/members/{user_id} {roles?, nickname?}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("roles", "nickname") if k in body}
        await self.ops.update_member(sid, ctx.params["user_id"], fields)
        return no_content()

    async def get_categories(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/categories`` -> ``{categories, uncategorizedChannels}``: only the
        channels the caller may view."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.channels.listing(sid, viewer=ctx.uid))

    async def post_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/categories {name, isPrivate?}`` -> 201 ``{"category"}``
        (MANAGE_CHANNELS); a private one keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        category = await self.ops.create_category(sid, body.get("name"), is_private=body.get("isPrivate", False),
                                                  creator=ctx.uid)
        return json_response({"category": category}, 201)

    async def post_channel(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/channels`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS); a private one
        keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        return json_response({"channel": await self.ops.create_channel(sid, body, creator=ctx.uid)}, 201)

    async def get_stats(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/stats`` -> bare ``{memberCount, channelCount, roleCount}``."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response({"memberCount": len(self.store.members.member_ids(sid)),
                              "channelCount": len(self.store.channels.channel_ids_of(sid)),
                              "roleCount": len(self.store.members.roles(sid))})

    async def get_roles(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/roles`` -> ``{"roles": [Role]}``."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response({"roles": self.store.members.roles(sid)})

    async def post_role(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/roles`` -> 201 ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.ops.create_role(sid, body["name"], body.get("permissions", "0"),
                                            color=body.get("color"), hoist=body.get("hoist", False))
        return json_response(result, 201)

    async def patch_role(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/roles/{role_id}`` -> ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "color", "hoist", "permissions", "position") if k in body}
        return json_response({"role": await self.ops.update_role(sid, ctx.params["role_id"], fields)})

    async def delete_role(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/roles/{role_id}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        await self.ops.delete_role(sid, ctx.params["role_id"])
        return no_content()

    async def get_bans(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/bans`` -> ``{"bans": [Ban]}`` (BAN_MEMBERS)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        return json_response({"bans": self.store.members.bans(sid)})

    def _invite_visible(self, channel_id: str | None, uid: str) -> bool:
        """Whether a member may see an invite to ``channel_id``: as it may see the channel (an
        invite to no channel, or to one deleted since, shows none)."""
        if channel_id is None or self.store.db.one("SELECT 1 FROM channels WHERE id=?", (channel_id,)) is None:
            return True
        return bool(self.store.channels.can_view(channel_id, uid))

    async def get_invites(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/invites?all=true`` -> ``{"invites"}`` (MANAGE_INVITES);
        without ``all=true`` -> ``{"invite": own invite | null}``. Invites to channels the caller
        may not view are left out."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        if ctx.q("all") == "true":
            self._need_perm(sid, ctx)
            invites = self.store.invites.invites(sid)
        else:
            invites = self.store.invites.invites(sid, inviter=ctx.uid)
        shown = [i for i in invites if self._invite_visible((i["channel"] or {}).get("publicId"), ctx.uid)]
        if ctx.q("all") == "true":
            return json_response({"invites": shown})
        return json_response({"invite": shown[-1] if shown else None})

    async def post_invite(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/invites {channelPublicId, maxAge?, maxUses?}`` -> 201 ``{"invite"}``;
        403 to a channel the caller may not view."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        body = ctx.body()
        result = await self.ops.create_invite(sid, body.get("channelPublicId"), ctx.uid,
                                              max_age=body.get("maxAge"), max_uses=body.get("maxUses"),
                                              viewer=ctx.uid)
        return json_response(result, 201)

    async def get_channel(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}`` -> bare Channel (``serverPublicId`` null for a DM)."""
        cid = ctx.params["channel_id"]
        row = self._channel_access(cid, ctx.uid)
        if row["server_id"] is None:
            return json_response(self.store.channels.dm_record(cid, ctx.uid))
        return json_response(self.store.channels.channel(cid))

    async def patch_channel(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{channel_id} {name?, description?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._manage_channel(cid, ctx)
        body = ctx.body()
        await self.ops.update_channel(cid, {k: body[k] for k in ("name", "description") if k in body})
        return no_content()

    async def delete_channel(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._manage_channel(cid, ctx)
        await self.ops.delete_channel(cid)
        return no_content()

    async def get_dm(self, ctx: Ctx) -> Response:
        """``GET /channels/dm/{user_id}`` -> bare DM record; opens it on first call (``dm:new``)."""
        return json_response(await self.ops.open_dm(ctx.uid, ctx.params["user_id"]))

    async def get_history(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}?limit=&before=`` -> ``{"messages"}`` (chronological, newest ``limit``)."""
        cid = ctx.params["channel_id"]
        self._channel_access(cid, ctx.uid)
        limit = ctx.q_int("limit", 50)
        return json_response({"messages": self.store.messages.history(cid, limit, ctx.q("before") or None)})

    async def get_search(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/search?q=&limit=&before=&after=`` -> ``{"messages"}``, newest first.

        ``limit`` defaults to 25 (clamped to 1..100); ``before`` / ``after`` are message ids of
        this channel that bound the results (any other id matches nothing). ``q`` of more than
        1024 characters or 32 terms is answered 400; the search runs off the event loop
        (:func:`~.rest_search.search_messages`)."""
        cid = ctx.params["channel_id"]
        self._channel_access(cid, ctx.uid)
        q = ctx.q("q")
        if q is None:
            raise BadRequest("q is required")
        limit = ctx.q_int("limit", 25)
        found = await search_messages(self.store, cid, q, limit, ctx.q("before") or None, ctx.q("after") or None)
        return json_response({"messages": found})

    def _channel_perm(self, cid: str, ctx: Ctx, *, dm_ok: bool) -> Any:
        """Channel access plus the endpoint's permission on the channel's server (DM
        participants pass when ``dm_ok``)."""
        row = self._channel_access(cid, ctx.uid)
        if row["server_id"] is None:
            if not dm_ok:
                raise Forbidden("servers.errors.missing_permission")
        elif not self.store.members.has_perm(row["server_id"], ctx.uid, ctx.permission):
            raise Forbidden("servers.errors.missing_permission")
        return row

    def _message_in(self, cid: str, mid: str) -> Any:
        row = self.store.messages.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        return row

    async def get_pins(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/pins`` -> ``{"pins": [Message]}``, most recently pinned first."""
        cid = ctx.params["channel_id"]
        self._channel_access(cid, ctx.uid)
        return json_response({"pins": self.store.messages.pins(cid)})

    async def pin(self, ctx: Ctx) -> Response:
        """``POST /chat/{channel_id}/pin/{message_id}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=True)
        await self.ops.set_pinned(cid, ctx.params["message_id"], True)
        return no_content()

    async def unpin(self, ctx: Ctx) -> Response:
        """``DELETE /chat/{channel_id}/pin/{message_id}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=True)
        await self.ops.set_pinned(cid, ctx.params["message_id"], False)
        return no_content()

    async def get_reaction_details(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/reactions/{message_id}/details?emoji=`` -> ``{"reactions": [ReactionDetail]}``, all emojis.

        Every emoji group of the message comes back: the ``emoji`` query is accepted and not used
        to filter, as on the service."""
        cid = ctx.params["channel_id"]
        self._channel_access(cid, ctx.uid)
        row = self._message_in(cid, ctx.params["message_id"])
        return json_response({"reactions": self.store.messages.reaction_details(row["id"])})

    async def bulk_delete(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/messages/bulk-delete {messageIds}`` (1 to 100) -> 204
        (MANAGE_MESSAGES); one ``message:deleted`` per message deleted."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=False)
        body = ctx.body()
        await self.ops.bulk_delete(cid, body.get("messageIds"))
        return no_content()

    async def patch_settings(self, ctx: Ctx) -> Response:
        """``PATCH /users/settings {status}`` -> 204 and ``presence:update``; other keys 400."""
        body = ctx.body()
        if set(body) != {"status"}:
            raise BadRequest("Only status can be changed")
        if body["status"] not in STATUSES:
            raise BadRequest("status must be online, idle, dnd or invisible")
        await self.rt.set_presence(ctx.uid, body["status"])
        return no_content()

    async def get_user(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}`` -> bare User."""
        return json_response(self.store.users.user(ctx.params["user_id"], viewer=ctx.uid))

    async def get_invite(self, ctx: Ctx) -> Response:
        """``GET /invites/{code}`` -> resolved invite; 404 unknown or expired; 403 for a member of
        its server who may not view its channel. Anyone outside the server may resolve it."""
        row = self.store.invites.invite_row(ctx.params["code"])
        if self.store.members.is_member(row["server_id"], ctx.uid) and not self._invite_visible(row["channel_id"], ctx.uid):
            raise Forbidden("channels.errors.no_access")
        return json_response(self.store.invites.resolved_invite(ctx.params["code"], ctx.uid))

    async def delete_invite(self, ctx: Ctx) -> Response:
        """``DELETE /invites/{code}`` -> 204; MANAGE_INVITES on the invite's server."""
        row = self.store.invites.invite_row(ctx.params["code"])
        self._need_perm(row["server_id"], ctx)
        self.store.invites.delete_invite(ctx.params["code"])
        return no_content()
