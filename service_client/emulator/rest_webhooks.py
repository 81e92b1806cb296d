"""REST routes of the emulator: webhooks of a channel, and posting through one (no ``Authorization``: its token is in the path)."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops_extras import ExtrasOps
from .routing import Ctx, Handler, json_response, no_content
from .store.extras import ExtrasRepository


class WebhookRoutes:
    """Webhooks of a channel, and posting through one (no ``Authorization``: its token is in the path).

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        extras: The extras repository.
        extras_ops: The operations on extras.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, extras: ExtrasRepository, extras_ops: ExtrasOps, access: Access) -> None:
        self.extras = extras
        self.extras_ops = extras_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.LIST_WEBHOOKS, self.get_webhooks),
            (endpoints.CREATE_WEBHOOK, self.post_webhook),
            (endpoints.EDIT_WEBHOOK, self.patch_webhook),
            (endpoints.DELETE_WEBHOOK, self.delete_webhook),
            (endpoints.EXECUTE_WEBHOOK, self.execute_webhook),
        ]

    async def get_webhooks(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}/webhooks`` -> ``{"webhooks": [Webhook]}``, no tokens (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=False)
        return json_response({"webhooks": self.extras.webhooks(cid)})

    async def post_webhook(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/webhooks {name, avatarUrl?}`` -> 201 ``{"webhook"}`` with its
        ``token`` (the only answer that carries it; MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=False)
        return json_response({"webhook": await self.extras_ops.create_webhook(cid, ctx.body(), ctx.uid)}, 201)

    async def patch_webhook(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{channel_id}/webhooks/{webhook_id} {name?, avatarUrl?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=False)
        self.access.webhook_in(cid, ctx.params["webhook_id"])
        await self.extras_ops.update_webhook(ctx.params["webhook_id"], ctx.body())
        return no_content()

    async def delete_webhook(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}/webhooks/{webhook_id}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=False)
        self.access.webhook_in(cid, ctx.params["webhook_id"])
        self.extras.delete_webhook(ctx.params["webhook_id"])
        return no_content()

    async def execute_webhook(self, ctx: Ctx) -> Response:
        """``POST /webhooks/{webhook_id}/{token} {content?, username?, avatarUrl?, embeds?}`` -> ``{"id"}``:
        no ``Authorization``; 404 for an unknown webhook or a wrong token; the message (author: the
        webhook's pseudo-user) is broadcast as ``message:new``."""
        body = ctx.body()
        record = await self.extras_ops.execute_webhook(ctx.params["webhook_id"], ctx.params["token"], body)
        return json_response({"id": record["publicId"]})
