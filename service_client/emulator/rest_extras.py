"""REST routes of server extras (emojis, webhooks, notifications, vanity, profiles) and the audit log."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .ops import Conflict
from .ops_checks import MAX_REASON_CHARS
from .rest_routes import CoreRoutes
from .routing import Ctx, Handler, HTTPError, json_response, no_content
from .store import BadRequest, NotFound


class ExtraRoutes(CoreRoutes):
    """Server extras and the audit log (see :class:`~.app.RestApi`)."""

    # ------------------------------------------------------------------ server extras
    # Vanity code, notification settings, audit log, custom emojis, webhooks, user profiles.
    def _extra_routes(self) -> None:
        serve = self.serve
        serve(endpoints.GET_VANITY, self.get_vanity)
        serve(endpoints.SET_NOTIFICATIONS, self.put_notifications)
        serve(endpoints.GET_AUDIT_LOG, self.get_audit_logs)
        serve(endpoints.LIST_EMOJIS, self.get_emojis)
        serve(endpoints.CREATE_EMOJI, self.post_emoji)
        serve(endpoints.DELETE_EMOJI, self.delete_emoji)
        serve(endpoints.LIST_WEBHOOKS, self.get_webhooks)
        serve(endpoints.CREATE_WEBHOOK, self.post_webhook)
        serve(endpoints.EDIT_WEBHOOK, self.patch_webhook)
        serve(endpoints.DELETE_WEBHOOK, self.delete_webhook)
        serve(endpoints.EXECUTE_WEBHOOK, self.execute_webhook)
        serve(endpoints.GET_PROFILE, self.get_profile)
        serve(endpoints.GET_MUTUAL_SERVERS, self.get_mutual_servers)

    async def get_vanity(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/vanity`` -> ``{"vanityCode": str | null}`` (members)."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response({"vanityCode": self.store.servers.vanity_code(sid)})

    async def put_notifications(self, ctx: Ctx) -> Response:
        """``PUT /servers/{server_id}/notifications {muted?, muteUntil?, mentionsOnly?}`` -> 204: the
        caller's own settings for the server."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        await self.ops.set_notifications(sid, ctx.uid, ctx.body())
        return no_content()

    async def get_audit_logs(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/audit-logs?limit=&action=`` -> ``{"logs": [AuditEntry]}``, newest
        first (VIEW_AUDIT_LOG; ``limit`` default 50, clamped to 1..100; ``action`` an exact name)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        limit = ctx.q_int("limit", 50)
        action = ctx.q("action") or None
        return json_response({"logs": self.store.extras.audit_logs(sid, limit, action)})

    async def get_emojis(self, ctx: Ctx) -> Response:
        """``GET /servers/{server_id}/emojis`` -> ``{"emojis": [Emoji]}`` (members)."""
        sid = ctx.params["server_id"]
        self._server_access(sid, ctx.uid)
        return json_response({"emojis": self.store.extras.emojis(sid)})

    async def post_emoji(self, ctx: Ctx) -> Response:
        """``POST /servers/{server_id}/emojis {name, imageUrl, isAnimated?}`` -> 201 ``{"emoji"}``
        (MANAGE_SERVER; name 2 to 32 of ``[A-Za-z0-9_]``; a name already used: 409)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        try:
            emoji = await self.ops.create_emoji(sid, ctx.body(), ctx.uid)
        except Conflict as exc:
            raise HTTPError(409, str(exc)) from exc
        return json_response({"emoji": emoji}, 201)

    async def delete_emoji(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{server_id}/emojis/{emoji_id}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["server_id"]
        self._need_perm(sid, ctx)
        self.store.extras.delete_emoji(sid, ctx.params["emoji_id"])
        return no_content()

    def _webhook_in(self, cid: str, wid: str) -> Any:
        row = self.store.extras.webhook_row(wid)
        if row["channel_id"] != cid:
            raise NotFound("webhooks.errors.not_found")
        return row

    async def get_webhooks(self, ctx: Ctx) -> Response:
        """``GET /channels/{channel_id}/webhooks`` -> ``{"webhooks": [Webhook]}``, no tokens (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=False)
        return json_response({"webhooks": self.store.extras.webhooks(cid)})

    async def post_webhook(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/webhooks {name, avatarUrl?}`` -> 201 ``{"webhook"}`` with its
        ``token`` (the only answer that carries it; MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=False)
        return json_response({"webhook": await self.ops.create_webhook(cid, ctx.body(), ctx.uid)}, 201)

    async def patch_webhook(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{channel_id}/webhooks/{webhook_id} {name?, avatarUrl?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=False)
        self._webhook_in(cid, ctx.params["webhook_id"])
        await self.ops.update_webhook(ctx.params["webhook_id"], ctx.body())
        return no_content()

    async def delete_webhook(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{channel_id}/webhooks/{webhook_id}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["channel_id"]
        self._channel_perm(cid, ctx, dm_ok=False)
        self._webhook_in(cid, ctx.params["webhook_id"])
        self.store.extras.delete_webhook(ctx.params["webhook_id"])
        return no_content()

    async def execute_webhook(self, ctx: Ctx) -> Response:
        """``POST /webhooks/{webhook_id}/{token} {content?, username?, avatarUrl?, embeds?}`` -> ``{"id"}``:
        no ``Authorization``; 404 for an unknown webhook or a wrong token; the message (author: the
        webhook's pseudo-user) is broadcast as ``message:new``."""
        body = ctx.body()
        record = await self.ops.execute_webhook(ctx.params["webhook_id"], ctx.params["token"], body)
        return json_response({"id": record["publicId"]})

    async def get_profile(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}/profile`` -> bare User plus ``banner, bannerColor, bio, followersCount,
        followingCount, mutualFriendsCount``."""
        return json_response(self.store.users.profile(ctx.params["user_id"], viewer=ctx.uid))

    async def get_mutual_servers(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}/mutual-servers`` -> ``{"mutualServers": [{publicId, name, imageUrl}]}``."""
        return json_response({"mutualServers": self.store.servers.mutual_servers(ctx.params["user_id"], ctx.uid)})

    # ------------------------------------------------------------------ audit log
    def _wrap(self, endpoint: Endpoint, handler: Handler) -> Handler:
        """``handler``, made to write an audit log entry on success when ``endpoint`` is in
        :data:`AUDITED_ROUTES`."""
        spec = AUDITED_ROUTES.get(endpoint)
        return handler if spec is None else self._audited(handler, *spec)

    def _audit_server(self, params: dict[str, str]) -> str | None:
        """The server a request is about (looked up before the handler runs: a delete removes it)."""
        if "server_id" in params:
            return params["server_id"]
        row = None
        if "channel_id" in params:
            row = self.store.db.one("SELECT server_id FROM channels WHERE id=?", (params["channel_id"],))
            if row is None:  # the override routes also take a category id
                row = self.store.db.one("SELECT server_id FROM categories WHERE id=?", (params["channel_id"],))
        elif "code" in params:
            row = self.store.db.one("SELECT server_id FROM invites WHERE code=?", (params["code"],))
        return None if row is None or row[0] is None else str(row[0])

    def _audited(self, handler: Handler, action: str, target_type: str, source: str) -> Handler:
        async def audited(ctx: Ctx) -> Response:
            """Run the route; on a 2xx answer record ``action`` in the server's audit log."""
            sid = self._audit_server(ctx.params)
            response = await handler(ctx)
            if sid is None or not 200 <= response.status_code < 300:
                return response
            target: str | None
            if source.startswith("="):
                key, _, field_name = source[1:].partition(":")
                try:
                    created = json.loads(bytes(response.body)).get(key) or {}
                    target = created.get(field_name or "publicId")
                except (ValueError, AttributeError):
                    target = None
            else:
                target = ctx.params.get(source)
            try:
                details = ctx.body_or_empty()
            except BadRequest:
                details = {}
            reason = ctx.request.headers.get(AUDIT_REASON_HEADER)
            if reason:
                details["reason"] = unquote(reason)[:MAX_REASON_CHARS]
            self.store.extras.add_audit(sid, ctx.uid or None, action, target_type, target, details)
            return response

        audited.__doc__ = handler.__doc__
        return audited


#: The header a REST change carries its reason in; kept in the audit entry's ``details``.
AUDIT_REASON_HEADER = "X-Audit-Log-Reason"

#: REST actions written to a server's audit log when they succeed: ``endpoint -> (action, target
#: type, target id source)``. The source is a path parameter, or ``"=<key>"``
#: (``"=<key>:<field>"``) for the ``publicId`` (``<field>``) of the record created under
#: ``<key>`` in the answer. Socket moderation writes ``MEMBER_KICK``, ``MEMBER_BAN`` and
#: ``MEMBER_UNBAN`` itself.
AUDITED_ROUTES: dict[Endpoint, tuple[str, str, str]] = {
    endpoints.EDIT_SERVER: ("SERVER_UPDATE", "SERVER", "server_id"),
    endpoints.CREATE_CHANNEL: ("CHANNEL_CREATE", "CHANNEL", "=channel"),
    endpoints.EDIT_CHANNEL: ("CHANNEL_UPDATE", "CHANNEL", "channel_id"),
    endpoints.DELETE_CHANNEL: ("CHANNEL_DELETE", "CHANNEL", "channel_id"),
    endpoints.CREATE_CATEGORY: ("CATEGORY_CREATE", "CATEGORY", "=category"),
    endpoints.CREATE_ROLE: ("ROLE_CREATE", "ROLE", "=role"),
    endpoints.EDIT_ROLE: ("ROLE_UPDATE", "ROLE", "role_id"),
    endpoints.DELETE_ROLE: ("ROLE_DELETE", "ROLE", "role_id"),
    endpoints.EDIT_MEMBER: ("MEMBER_UPDATE", "USER", "user_id"),
    endpoints.CREATE_INVITE: ("INVITE_CREATE", "INVITE", "=invite:code"),
    endpoints.DELETE_INVITE: ("INVITE_DELETE", "INVITE", "code"),
    endpoints.PIN_MESSAGE: ("MESSAGE_PIN", "MESSAGE", "message_id"),
    endpoints.UNPIN_MESSAGE: ("MESSAGE_UNPIN", "MESSAGE", "message_id"),
    endpoints.BULK_DELETE_MESSAGES: ("MESSAGE_BULK_DELETE", "CHANNEL", "channel_id"),
    endpoints.CREATE_EMOJI: ("EMOJI_CREATE", "EMOJI", "=emoji"),
    endpoints.DELETE_EMOJI: ("EMOJI_DELETE", "EMOJI", "emoji_id"),
    endpoints.CREATE_WEBHOOK: ("WEBHOOK_CREATE", "WEBHOOK", "=webhook"),
    endpoints.EDIT_WEBHOOK: ("WEBHOOK_UPDATE", "WEBHOOK", "webhook_id"),
    endpoints.DELETE_WEBHOOK: ("WEBHOOK_DELETE", "WEBHOOK", "webhook_id"),
    endpoints.EDIT_CATEGORY: ("CATEGORY_UPDATE", "CATEGORY", "category_id"),
    endpoints.DELETE_CATEGORY: ("CATEGORY_DELETE", "CATEGORY", "category_id"),
    endpoints.SYNC_CATEGORY: ("CATEGORY_SYNC", "CATEGORY", "category_id"),
    endpoints.DUPLICATE_CHANNEL: ("CHANNEL_CREATE", "CHANNEL", "=channel"),
    endpoints.SYNC_CHANNEL: ("CHANNEL_SYNC", "CHANNEL", "channel_id"),
    endpoints.SET_OVERRIDE: ("CHANNEL_OVERWRITE_UPDATE", "CHANNEL", "channel_id"),
    endpoints.DELETE_OVERRIDE: ("CHANNEL_OVERWRITE_DELETE", "CHANNEL", "channel_id"),
}
