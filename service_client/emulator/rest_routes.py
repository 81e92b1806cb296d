"""The REST routes of the service's core: auth, users, servers, members, roles, channels, messages, invites."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from .rest_overrides import OverrideRoutes
from .rest_search import search_messages
from .routing import Ctx, json_response, no_content
from .store import STATUSES, BadRequest, Forbidden, NotFound


class CoreRoutes(OverrideRoutes):
    """Users, servers, members, roles, channels, messages, invites (see :class:`~.app.RestApi`)."""

    # ------------------------------------------------------------------ routes
    def _routes(self) -> None:
        add = self.router.add
        add("GET", "/auth/me", self.get_me)
        add("GET", "/servers", self.get_servers)
        add("POST", "/servers", self.post_server)
        add("GET", "/servers/{sid}", self.get_server)
        add("PATCH", "/servers/{sid}", self.patch_server)
        add("DELETE", "/servers/{sid}", self.delete_server)
        add("POST", "/servers/{sid}/leave", self.leave_server)
        add("POST", "/servers/{sid}/boost", self.noop)
        add("POST", "/servers/{sid}/read", self.noop)
        add("GET", "/servers/{sid}/members", self.get_members)
        add("GET", "/servers/{sid}/members/{uid}", self.get_member)
        add("PATCH", "/servers/{sid}/members/{uid}", self.patch_member)
        add("GET", "/servers/{sid}/categories", self.get_categories)
        add("POST", "/servers/{sid}/categories", self.post_category)
        add("POST", "/servers/{sid}/channels", self.post_channel)
        add("GET", "/servers/{sid}/stats", self.get_stats)
        add("GET", "/servers/{sid}/roles", self.get_roles)
        add("POST", "/servers/{sid}/roles", self.post_role)
        add("PATCH", "/servers/{sid}/roles/{rid}", self.patch_role)
        add("DELETE", "/servers/{sid}/roles/{rid}", self.delete_role)
        add("GET", "/servers/{sid}/bans", self.get_bans)
        add("GET", "/servers/{sid}/invites", self.get_invites)
        add("POST", "/servers/{sid}/invites", self.post_invite)
        add("GET", "/channels/{cid}", self.get_channel)
        add("PATCH", "/channels/{cid}", self.patch_channel)
        add("DELETE", "/channels/{cid}", self.delete_channel)
        add("GET", "/channels/dm/{uid}", self.get_dm)
        add("GET", "/chat/{cid}", self.get_history)
        add("GET", "/chat/{cid}/search", self.get_search)
        add("GET", "/chat/{cid}/pins", self.get_pins)
        add("POST", "/chat/{cid}/pin/{mid}", self.pin)
        add("DELETE", "/chat/{cid}/pin/{mid}", self.unpin)
        add("GET", "/chat/{cid}/reactions/{mid}/details", self.get_reaction_details)
        add("POST", "/channels/{cid}/messages/bulk-delete", self.bulk_delete)
        add("PATCH", "/users/settings", self.patch_settings)
        add("GET", "/users/{uid}", self.get_user)
        add("GET", "/invites/{code}", self.get_invite)
        add("DELETE", "/invites/{code}", self.delete_invite)
        self._permission_routes()

    async def noop(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/boost`` and ``/read`` -> 204: membership checked, no other effect."""
        self._server_access(ctx.params["sid"], ctx.uid)
        return no_content()

    async def get_me(self, ctx: Ctx) -> Response:
        """``GET /auth/me`` -> ``{"user": User}``."""
        return json_response({"user": self.store.user(ctx.uid, viewer=ctx.uid)})

    async def get_servers(self, ctx: Ctx) -> Response:
        """``GET /servers`` -> ``{"servers": [Server]}``."""
        return json_response({"servers": self.store.servers_of(ctx.uid)})

    async def get_server(self, ctx: Ctx) -> Response:
        """``GET /servers/{id}`` -> bare Server."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.server(sid))

    async def post_server(self, ctx: Ctx) -> Response:
        """``POST /servers {name, iconUrl?}`` -> 201 ``{"server"}``; bots get 403."""
        body = ctx.body()
        if self.store.user(ctx.uid)["isBot"]:
            raise Forbidden("Bots cannot create servers.")
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.ops.create_server(body["name"], ctx.uid, image_url=body.get("iconUrl"))
        return json_response({"server": result["server"]}, 201)

    async def patch_server(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{sid} {name?, imageUrl?}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_SERVER")
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "imageUrl") if k in body}
        await self.ops.update_server(sid, fields)
        return no_content()

    async def delete_server(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{sid}`` -> 204 (owner only)."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        if self.store.server_row(sid)["owner_id"] != ctx.uid:
            raise Forbidden("servers.errors.not_owner")
        await self.ops.delete_server(sid)
        return no_content()

    async def leave_server(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/leave`` -> 204 (the owner cannot leave: 400)."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        if self.store.server_row(sid)["owner_id"] == ctx.uid:
            raise BadRequest("servers.errors.owner_cannot_leave")
        await self.ops.leave_server(sid, ctx.uid)
        return no_content()

    async def get_members(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/members`` -> a bare array of Members; with ``?search=`` ->
        ``{"members": [...]}`` (VIEW_MEMBERS). The bare array is the service's form: clients (and
        published bots) read the list without a wrapper."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "VIEW_MEMBERS")
        members = self.store.members(sid, viewer=ctx.uid)
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
        """``GET /servers/{sid}/members/{userId}`` -> bare Member; 404 if not a member."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.member(sid, ctx.params["uid"], viewer=ctx.uid))

    async def patch_member(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{sid}/members/{uid} {roles?, nickname?}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_ROLES")
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("roles", "nickname") if k in body}
        await self.ops.update_member(sid, ctx.params["uid"], fields)
        return no_content()

    async def get_categories(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/categories`` -> ``{categories, uncategorizedChannels}``: only the
        channels the caller may view."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response(self.store.listing(sid, viewer=ctx.uid))

    async def post_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/categories {name, isPrivate?}`` -> 201 ``{"category"}``
        (MANAGE_CHANNELS); a private one keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        body = ctx.body()
        category = await self.ops.create_category(sid, body.get("name"), is_private=body.get("isPrivate", False),
                                                  creator=ctx.uid)
        return json_response({"category": category}, 201)

    async def post_channel(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/channels`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS); a private one
        keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        body = ctx.body()
        return json_response({"channel": await self.ops.create_channel(sid, body, creator=ctx.uid)}, 201)

    async def get_stats(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/stats`` -> bare ``{memberCount, channelCount, roleCount}``."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response({"memberCount": len(self.store.member_ids(sid)),
                              "channelCount": len(self.store.channel_ids_of(sid)),
                              "roleCount": len(self.store.roles(sid))})

    async def get_roles(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/roles`` -> ``{"roles": [Role]}``."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response({"roles": self.store.roles(sid)})

    async def post_role(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/roles`` -> 201 ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_ROLES")
        body = ctx.body()
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.ops.create_role(sid, body["name"], body.get("permissions", "0"),
                                            color=body.get("color"), hoist=body.get("hoist", False))
        return json_response(result, 201)

    async def patch_role(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{sid}/roles/{rid}`` -> ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_ROLES")
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "color", "hoist", "permissions", "position") if k in body}
        return json_response({"role": await self.ops.update_role(sid, ctx.params["rid"], fields)})

    async def delete_role(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{sid}/roles/{rid}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_ROLES")
        await self.ops.delete_role(sid, ctx.params["rid"])
        return no_content()

    async def get_bans(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/bans`` -> ``{"bans": [Ban]}`` (BAN_MEMBERS)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "BAN_MEMBERS")
        return json_response({"bans": self.store.bans(sid)})

    def _invite_visible(self, channel_id: str | None, uid: str) -> bool:
        """Whether a member may see an invite to ``channel_id``: as it may see the channel (an
        invite to no channel, or to one deleted since, shows none)."""
        if channel_id is None or self.store._one("SELECT 1 FROM channels WHERE id=?", (channel_id,)) is None:
            return True
        return bool(self.store.can_view(channel_id, uid))

    async def get_invites(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/invites?all=true`` -> ``{"invites"}`` (MANAGE_INVITES);
        without ``all=true`` -> ``{"invite": own invite | null}``. Invites to channels the caller
        may not view are left out."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        if ctx.q("all") == "true":
            self._need_perm(sid, ctx.uid, "MANAGE_INVITES")
            invites = self.store.invites(sid)
        else:
            invites = self.store.invites(sid, inviter=ctx.uid)
        shown = [i for i in invites if self._invite_visible((i["channel"] or {}).get("publicId"), ctx.uid)]
        if ctx.q("all") == "true":
            return json_response({"invites": shown})
        return json_response({"invite": shown[-1] if shown else None})

    async def post_invite(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/invites {channelPublicId, maxAge?, maxUses?}`` -> 201 ``{"invite"}``;
        403 to a channel the caller may not view."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        body = ctx.body()
        result = await self.ops.create_invite(sid, body.get("channelPublicId"), ctx.uid,
                                              max_age=body.get("maxAge"), max_uses=body.get("maxUses"),
                                              viewer=ctx.uid)
        return json_response(result, 201)

    async def get_channel(self, ctx: Ctx) -> Response:
        """``GET /channels/{id}`` -> bare Channel (``serverPublicId`` null for a DM)."""
        cid = ctx.params["cid"]
        row = self._channel_access(cid, ctx.uid)
        if row["server_id"] is None:
            return json_response(self.store.dm_record(cid, ctx.uid))
        return json_response(self.store.channel(cid))

    async def patch_channel(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{chid} {name?, description?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._manage_channel(cid, ctx.uid)
        body = ctx.body()
        await self.ops.update_channel(cid, {k: body[k] for k in ("name", "description") if k in body})
        return no_content()

    async def delete_channel(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{chid}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._manage_channel(cid, ctx.uid)
        await self.ops.delete_channel(cid)
        return no_content()

    async def get_dm(self, ctx: Ctx) -> Response:
        """``GET /channels/dm/{userId}`` -> bare DM record; opens it on first call (``dm:new``)."""
        return json_response(await self.ops.open_dm(ctx.uid, ctx.params["uid"]))

    async def get_history(self, ctx: Ctx) -> Response:
        """``GET /chat/{chid}?limit=&before=`` -> ``{"messages"}`` (chronological, newest ``limit``)."""
        cid = ctx.params["cid"]
        self._channel_access(cid, ctx.uid)
        limit = ctx.q_int("limit", 50)
        return json_response({"messages": self.store.history(cid, limit, ctx.q("before") or None)})

    async def get_search(self, ctx: Ctx) -> Response:
        """``GET /chat/{chid}/search?q=&limit=&before=&after=`` -> ``{"messages"}``, newest first.

        ``limit`` defaults to 25 (clamped to 1..100); ``before`` / ``after`` are message ids of
        this channel that bound the results (any other id matches nothing). ``q`` of more than
        1024 characters or 32 terms is answered 400; the search runs off the event loop
        (:func:`~.rest_search.search_messages`)."""
        cid = ctx.params["cid"]
        self._channel_access(cid, ctx.uid)
        q = ctx.q("q")
        if q is None:
            raise BadRequest("q is required")
        limit = ctx.q_int("limit", 25)
        found = await search_messages(self.store, cid, q, limit, ctx.q("before") or None, ctx.q("after") or None)
        return json_response({"messages": found})

    def _channel_perm(self, cid: str, uid: str, perm: str, *, dm_ok: bool) -> Any:
        """Channel access plus a server permission (DM participants pass when ``dm_ok``)."""
        row = self._channel_access(cid, uid)
        if row["server_id"] is None:
            if not dm_ok:
                raise Forbidden("servers.errors.missing_permission")
        elif not self.store.has_perm(row["server_id"], uid, perm):
            raise Forbidden("servers.errors.missing_permission")
        return row

    def _message_in(self, cid: str, mid: str) -> Any:
        row = self.store.message_row(mid)
        if row["channel_id"] != cid:
            raise NotFound("messages.errors.not_found")
        return row

    async def get_pins(self, ctx: Ctx) -> Response:
        """``GET /chat/{chid}/pins`` -> ``{"pins": [Message]}``, most recently pinned first."""
        cid = ctx.params["cid"]
        self._channel_access(cid, ctx.uid)
        return json_response({"pins": self.store.pins(cid)})

    async def pin(self, ctx: Ctx) -> Response:
        """``POST /chat/{chid}/pin/{mid}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "PIN_MESSAGE", dm_ok=True)
        await self.ops.set_pinned(cid, ctx.params["mid"], True)
        return no_content()

    async def unpin(self, ctx: Ctx) -> Response:
        """``DELETE /chat/{chid}/pin/{mid}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "PIN_MESSAGE", dm_ok=True)
        await self.ops.set_pinned(cid, ctx.params["mid"], False)
        return no_content()

    async def get_reaction_details(self, ctx: Ctx) -> Response:
        """``GET /chat/{chid}/reactions/{mid}/details?emoji=`` -> ``{"reactions": [ReactionDetail]}``, all emojis.

        Every emoji group of the message comes back: the ``emoji`` query is accepted and not used
        to filter, as on the service."""
        cid = ctx.params["cid"]
        self._channel_access(cid, ctx.uid)
        row = self._message_in(cid, ctx.params["mid"])
        return json_response({"reactions": self.store.reaction_details(row["id"])})

    async def bulk_delete(self, ctx: Ctx) -> Response:
        """``POST /channels/{chid}/messages/bulk-delete {messageIds}`` (1 to 100) -> 204
        (MANAGE_MESSAGES); one ``message:deleted`` per message deleted."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "MANAGE_MESSAGES", dm_ok=False)
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
        """``GET /users/{uid}`` -> bare User."""
        return json_response(self.store.user(ctx.params["uid"], viewer=ctx.uid))

    async def get_invite(self, ctx: Ctx) -> Response:
        """``GET /invites/{code}`` -> resolved invite; 404 unknown or expired; 403 for a member of
        its server who may not view its channel. Anyone outside the server may resolve it."""
        row = self.store.invite_row(ctx.params["code"])
        if self.store.is_member(row["server_id"], ctx.uid) and not self._invite_visible(row["channel_id"], ctx.uid):
            raise Forbidden("channels.errors.no_access")
        return json_response(self.store.resolved_invite(ctx.params["code"], ctx.uid))

    async def delete_invite(self, ctx: Ctx) -> Response:
        """``DELETE /invites/{code}`` -> 204; MANAGE_INVITES on the invite's server."""
        row = self.store.invite_row(ctx.params["code"])
        self._need_perm(row["server_id"], ctx.uid, "MANAGE_INVITES")
        self.store.delete_invite(ctx.params["code"])
        return no_content()
