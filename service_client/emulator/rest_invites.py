"""REST routes of the emulator: invites: listing, creation, resolution and revocation."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops_invites import InviteOps
from .routing import Ctx, Handler, json_response, no_content
from .store import Forbidden
from .store.invites import InviteRepository
from .store.members import MemberRepository


class InviteRoutes:
    """Invites: listing, creation, resolution and revocation.

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        members: The members repository.
        invites: The invites repository.
        invite_ops: The operations on invites.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, members: MemberRepository, invites: InviteRepository, invite_ops: InviteOps,
                 access: Access) -> None:
        self.members = members
        self.invites = invites
        self.invite_ops = invite_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.LIST_INVITES, self.get_invites),
            (endpoints.CREATE_INVITE, self.post_invite),
            (endpoints.GET_INVITE, self.get_invite),
            (endpoints.DELETE_INVITE, self.delete_invite),
        ]

    async def get_invites(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/invites?all=true`` -> ``{"invites"}`` (MANAGE_INVITES);
        without ``all=true`` -> ``{"invite": own invite | null}``. Invites to channels the caller
        may not view are left out."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        if ctx.q("all") == "true":
            self.access.need_perm(sid, ctx)
            invites = self.invites.invites(sid)
        else:
            invites = self.invites.invites(sid, inviter=ctx.uid)
        shown = [i for i in invites if self.access.invite_visible((i["channel"] or {}).get("publicId"), ctx.uid)]
        if ctx.q("all") == "true":
            return json_response({"invites": shown})
        return json_response({"invite": shown[-1] if shown else None})

    async def post_invite(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/invites {channelPublicId, maxAge?, maxUses?}`` -> 201 ``{"invite"}``;
        403 to a channel the caller may not view."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        body = ctx.body()
        result = await self.invite_ops.create_invite(sid, body.get("channelPublicId"), ctx.uid,
                                                      max_age=body.get("maxAge"), max_uses=body.get("maxUses"),
                                                      viewer=ctx.uid)
        return json_response(result, 201)

    async def get_invite(self, ctx: Ctx) -> Response:
        """``GET /invites/{code}`` -> resolved invite; 404 unknown or expired; 403 for a member of
        its server who may not view its channel. Anyone outside the server may resolve it."""
        row = self.invites.invite_row(ctx.params["code"])
        if self.members.is_member(row["server_id"], ctx.uid) and not self.access.invite_visible(row["channel_id"], ctx.uid):
            raise Forbidden("channels.errors.no_access")
        return json_response(self.invites.resolved_invite(ctx.params["code"], ctx.uid))

    async def delete_invite(self, ctx: Ctx) -> Response:
        """``DELETE /invites/{code}`` -> 204; MANAGE_INVITES on the invite's server."""
        row = self.invites.invite_row(ctx.params["code"])
        self.access.need_perm(row["server_id"], ctx)
        self.invites.delete_invite(ctx.params["code"])
        return no_content()
