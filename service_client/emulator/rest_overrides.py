"""REST routes for permission overwrites, category changes and channel copies."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from .rest_base import RestBase
from .routing import Ctx, json_response, no_content
from .store import Forbidden


class OverrideRoutes(RestBase):
    """Overwrites, categories and channel copies (see :class:`~.app.RestApi`)."""

    # ------------------------------------------------------------------ overrides, categories, channel copies
    # Permission overwrites (channels and categories), category edit/delete/sync, channel
    # duplicate/sync. Managing needs MANAGE_CHANNELS on the server (a server permission, so a
    # manager can fix a channel it cannot view); reading overrides needs MANAGE_CHANNELS or
    # the right to view the channel or category.

    def _permission_routes(self) -> None:
        serve = self.serve
        serve(endpoints.EDIT_CATEGORY, self.patch_category)
        serve(endpoints.DELETE_CATEGORY, self.delete_category)
        serve(endpoints.SYNC_CATEGORY, self.sync_category)
        serve(endpoints.LIST_CATEGORY_OVERRIDES, self.get_category_overrides)
        serve(endpoints.DUPLICATE_CHANNEL, self.duplicate_channel)
        serve(endpoints.SYNC_CHANNEL, self.sync_channel)
        serve(endpoints.LIST_CHANNEL_OVERRIDES, self.get_overrides)
        serve(endpoints.SET_OVERRIDE, self.post_override)
        serve(endpoints.DELETE_OVERRIDE, self.delete_override)

    def _manage_channel(self, cid: str, ctx: Ctx) -> str:
        """404 unknown channel; 403 a DM, a non-member or without the endpoint's permission
        (MANAGE_CHANNELS, a server permission). Returns the server id."""
        row = self.store.channels.channel_row(cid)
        if row["server_id"] is None:
            raise Forbidden("servers.errors.missing_permission")
        self._need_perm(row["server_id"], ctx)
        return str(row["server_id"])

    def _manage_category(self, sid: str, cat_id: str, ctx: Ctx) -> None:
        """404 unknown server; 403 non-member or without the endpoint's permission; 404 unknown category."""
        self._need_perm(sid, ctx)
        self.store.channels.category_row(sid, cat_id)

    def _read_overrides(self, scope_id: str, uid: str) -> None:
        """404 unknown channel or category; 403 a non-member, or a member who neither holds
        MANAGE_CHANNELS nor may view it."""
        kind, sid = self.store.channels.override_scope(scope_id)
        self._server_access(sid, uid)
        if self.store.members.has_perm(sid, uid, "MANAGE_CHANNELS"):
            return
        view = self.store.channels.can_view(scope_id, uid) if kind == "channel" else \
            bool(self.store.channels.category_permissions(sid, scope_id, uid) & 512)
        if not view:
            raise Forbidden("channels.errors.no_access")

    async def patch_category(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{server_id}/categories/{category_id} {name?, isPrivate?}`` -> 204 (MANAGE_CHANNELS);
        ``server:categories_updated``."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self._manage_category(sid, cat_id, ctx)
        body = ctx.body()
        await self.ops.update_category(sid, cat_id, {k: body[k] for k in ("name", "isPrivate") if k in body})
        return no_content()

    async def delete_category(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/categories/{category_id}`` -> 204 (MANAGE_CHANNELS); its channels
        become uncategorised."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self._manage_category(sid, cat_id, ctx)
        await self.ops.delete_category(sid, cat_id)
        return no_content()

    async def sync_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/categories/{category_id}/sync`` -> 204 (MANAGE_CHANNELS): its overrides
        and ``isPrivate`` copied to its channels."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self._manage_category(sid, cat_id, ctx)
        await self.ops.sync_category(sid, cat_id)
        return no_content()

    async def get_category_overrides(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/categories/{category_id}/overrides`` -> ``{"overrides": [Override]}``."""
        sid, cat_id = ctx.params["server_id"], ctx.params["category_id"]
        self._server_access(sid, ctx.uid)
        self.store.channels.category_row(sid, cat_id)
        self._read_overrides(cat_id, ctx.uid)
        return json_response({"overrides": self.store.channels.overrides(cat_id)})

    async def duplicate_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/duplicate`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS): same
        settings and overrides, no messages."""
        cid = ctx.params["channel_id"]
        self._manage_channel(cid, ctx)
        return json_response({"channel": await self.ops.duplicate_channel(cid)}, 201)

    async def sync_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/sync`` -> 204 (MANAGE_CHANNELS): the category's overrides and
        ``isPrivate`` copied; 400 without a category."""
        cid = ctx.params["channel_id"]
        self._manage_channel(cid, ctx)
        await self.ops.sync_channel(cid)
        return no_content()

    async def get_overrides(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}/overrides`` -> ``{"overrides": [Override]}`` (a category id works too)."""
        cid = ctx.params["channel_id"]
        self._read_overrides(cid, ctx.uid)
        return json_response({"overrides": self.store.channels.overrides(cid)})

    async def post_override(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/overrides {targetId, type, allow, deny}`` -> 204 (MANAGE_CHANNELS):
        create or replace; a category id works too; rooms follow at once."""
        cid = ctx.params["channel_id"]
        _kind, sid = self.store.channels.override_scope(cid)
        self._need_perm(sid, ctx)
        await self.ops.set_override(cid, ctx.body())
        return no_content()

    async def delete_override(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}/overrides/{override_id}`` -> 204 (MANAGE_CHANNELS); a category id works too."""
        cid = ctx.params["channel_id"]
        _kind, sid = self.store.channels.override_scope(cid)
        self._need_perm(sid, ctx)
        await self.ops.delete_override(cid, ctx.params["override_id"])
        return no_content()
