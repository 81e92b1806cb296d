"""REST routes of the emulator: members, roles and bans of a server."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops_members import MemberOps
from .routing import Ctx, Handler, json_response, no_content
from .store import BadRequest
from .store.members import MemberRepository


class MemberRoutes:
    """Members, roles and bans of a server.

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        members: The members repository.
        member_ops: The operations on members.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, members: MemberRepository, member_ops: MemberOps, access: Access) -> None:
        self.members = members
        self.member_ops = member_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.LIST_MEMBERS, self.get_members),
            (endpoints.GET_MEMBER, self.get_member),
            (endpoints.EDIT_MEMBER, self.patch_member),
            (endpoints.LIST_ROLES, self.get_roles),
            (endpoints.CREATE_ROLE, self.post_role),
            (endpoints.EDIT_ROLE, self.patch_role),
            (endpoints.DELETE_ROLE, self.delete_role),
            (endpoints.LIST_BANS, self.get_bans),
        ]

    async def get_members(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/members`` -> a bare array of Members; with ``?search=`` ->
        ``{"members": [...]}`` (VIEW_MEMBERS). The bare array is the service's form: clients (and
        published bots) read the list without a wrapper."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        members = self.members.members(sid, viewer=ctx.uid)
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
        self.access.server(sid, ctx.uid)
        return json_response(self.members.member(sid, ctx.params["user_id"], viewer=ctx.uid))

    async def patch_member(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/members/{user_id} {roles?, nickname?}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("roles", "nickname") if k in body}
        await self.member_ops.update_member(sid, ctx.params["user_id"], fields)
        return no_content()

    async def get_roles(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/roles`` -> ``{"roles": [Role]}``."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response({"roles": self.members.roles(sid)})

    async def post_role(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/roles`` -> 201 ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        if "name" not in body:
            raise BadRequest("name is required")
        result = await self.member_ops.create_role(sid, body["name"], body.get("permissions", "0"),
                                                    color=body.get("color"), hoist=body.get("hoist", False))
        return json_response(result, 201)

    async def patch_role(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/roles/{role_id}`` -> ``{"role"}`` (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "color", "hoist", "permissions", "position") if k in body}
        return json_response({"role": await self.member_ops.update_role(sid, ctx.params["role_id"], fields)})

    async def delete_role(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/roles/{role_id}`` -> 204 (MANAGE_ROLES)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        await self.member_ops.delete_role(sid, ctx.params["role_id"])
        return no_content()

    async def get_bans(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/bans`` -> ``{"bans": [Ban]}`` (BAN_MEMBERS)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        return json_response({"bans": self.members.bans(sid)})
