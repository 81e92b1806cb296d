"""REST routes of the emulator: channels, categories, permission overrides and DMs."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops_channels import ChannelOps
from .routing import Ctx, Handler, json_response, no_content
from .store.channels import ChannelRepository


class ChannelRoutes:
    """Channels, categories, permission overrides and DMs.

    Managing a channel, a category or an override needs MANAGE_CHANNELS on the server (a server
    permission, so a manager can fix a channel it cannot view); reading overrides needs
    MANAGE_CHANNELS or the right to view the channel or category.

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        channels: The channels repository.
        channel_ops: The operations on channels.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, channels: ChannelRepository, channel_ops: ChannelOps, access: Access) -> None:
        self.channels = channels
        self.channel_ops = channel_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.LIST_CATEGORIES, self.get_categories),
            (endpoints.CREATE_CATEGORY, self.post_category),
            (endpoints.EDIT_CATEGORY, self.patch_category),
            (endpoints.DELETE_CATEGORY, self.delete_category),
            (endpoints.SYNC_CATEGORY, self.sync_category),
            (endpoints.LIST_CATEGORY_OVERRIDES, self.get_category_overrides),
            (endpoints.CREATE_CHANNEL, self.post_channel),
            (endpoints.GET_CHANNEL, self.get_channel),
            (endpoints.EDIT_CHANNEL, self.patch_channel),
            (endpoints.DELETE_CHANNEL, self.delete_channel),
            (endpoints.OPEN_DM, self.get_dm),
            (endpoints.DUPLICATE_CHANNEL, self.duplicate_channel),
            (endpoints.SYNC_CHANNEL, self.sync_channel),
            (endpoints.LIST_CHANNEL_OVERRIDES, self.get_overrides),
            (endpoints.SET_OVERRIDE, self.post_override),
            (endpoints.DELETE_OVERRIDE, self.delete_override),
        ]

    async def get_categories(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/categories`` -> ``{categories, uncategorizedChannels}``: only the
        channels the caller may view."""
        sid = ctx.params["server_id"]
        self.access.server(sid, ctx.uid)
        return json_response(self.channels.listing(sid, viewer=ctx.uid))

    async def post_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/categories {name, isPrivate?}`` -> 201 ``{"category"}``
        (MANAGE_CHANNELS); a private one keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        category = await self.channel_ops.create_category(sid, body.get("name"), is_private=body.get("isPrivate", False),
                                                           creator=ctx.uid)
        return json_response({"category": category}, 201)

    async def patch_category(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/categories/{category_id} {name?, isPrivate?}`` -> 204 (MANAGE_CHANNELS);
        ``server:categories_updated``."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self.access.manage_category(sid, cat_id, ctx)
        body = ctx.body()
        await self.channel_ops.update_category(sid, cat_id, {k: body[k] for k in ("name", "isPrivate") if k in body})
        return no_content()

    async def delete_category(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/categories/{category_id}`` -> 204 (MANAGE_CHANNELS); its channels
        become uncategorised."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self.access.manage_category(sid, cat_id, ctx)
        await self.channel_ops.delete_category(sid, cat_id)
        return no_content()

    async def sync_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/categories/{category_id}/sync`` -> 204 (MANAGE_CHANNELS): its overrides
        and ``isPrivate`` copied to its channels."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self.access.manage_category(sid, cat_id, ctx)
        await self.channel_ops.sync_category(sid, cat_id)
        return no_content()

    async def get_category_overrides(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/categories/{category_id}/overrides`` -> ``{"overrides": [Override]}``."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self.access.server(sid, ctx.uid)
        self.channels.category_row(sid, cat_id)
        self.access.read_overrides(cat_id, ctx.uid)
        return json_response({"overrides": self.channels.overrides(cat_id)})

    async def post_channel(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/channels`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS); a private one
        keeps the caller in (its own MEMBER override)."""
        sid = ctx.params["server_id"]
        self.access.need_perm(sid, ctx)
        body = ctx.body()
        return json_response({"channel": await self.channel_ops.create_channel(sid, body, creator=ctx.uid)}, 201)

    async def get_channel(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}`` -> bare Channel (``serverPublicId`` null for a DM)."""
        cid = ctx.params["channel_id"]
        row = self.access.channel(cid, ctx.uid)
        if row["server_id"] is None:
            return json_response(self.channels.dm_record(cid, ctx.uid))
        return json_response(self.channels.channel(cid))

    async def patch_channel(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{channel_id} {name?, description?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.manage_channel(cid, ctx)
        body = ctx.body()
        await self.channel_ops.update_channel(cid, {k: body[k] for k in ("name", "description") if k in body})
        return no_content()

    async def delete_channel(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.manage_channel(cid, ctx)
        await self.channel_ops.delete_channel(cid)
        return no_content()

    async def get_dm(self, ctx: Ctx) -> Response:
        """``GET /channels/dm/{user_id}`` -> bare DM record; opens it on first call (``dm:new``)."""
        return json_response(await self.channel_ops.open_dm(ctx.uid, ctx.params["user_id"]))

    async def duplicate_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/duplicate`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS): same
        settings and overrides, no messages."""
        cid = ctx.params["channel_id"]
        self.access.manage_channel(cid, ctx)
        return json_response({"channel": await self.channel_ops.duplicate_channel(cid)}, 201)

    async def sync_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/sync`` -> 204 (MANAGE_CHANNELS): the category's overrides and
        ``isPrivate`` copied; 400 without a category."""
        cid = ctx.params["channel_id"]
        self.access.manage_channel(cid, ctx)
        await self.channel_ops.sync_channel(cid)
        return no_content()

    async def get_overrides(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}/overrides`` -> ``{"overrides": [Override]}`` (a category id works too)."""
        cid = ctx.params["channel_id"]
        self.access.read_overrides(cid, ctx.uid)
        return json_response({"overrides": self.channels.overrides(cid)})

    async def post_override(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/overrides {targetId, type, allow, deny}`` -> 204 (MANAGE_CHANNELS):
        create or replace; a category id works too; rooms follow at once."""
        cid = ctx.params["channel_id"]
        _kind, sid = self.channels.override_scope(cid)
        self.access.need_perm(sid, ctx)
        await self.channel_ops.set_override(cid, ctx.body())
        return no_content()

    async def delete_override(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}/overrides/{override_id}`` -> 204 (MANAGE_CHANNELS); a category id works too."""
        cid = ctx.params["channel_id"]
        _kind, sid = self.channels.override_scope(cid)
        self.access.need_perm(sid, ctx)
        await self.channel_ops.delete_override(cid, ctx.params["override_id"])
        return no_content()
