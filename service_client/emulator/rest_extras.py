"""REST routes of server extras (emojis, webhooks, notifications, vanity, profiles) and the audit log."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

from starlette.responses import Response

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
        add = self.router.add
        add("GET", "/servers/{sid}/vanity", self.get_vanity)
        add("PUT", "/servers/{sid}/notifications", self.put_notifications)
        add("GET", "/servers/{sid}/audit-logs", self.get_audit_logs)
        add("GET", "/servers/{sid}/emojis", self.get_emojis)
        add("POST", "/servers/{sid}/emojis", self.post_emoji)
        add("DELETE", "/servers/{sid}/emojis/{eid}", self.delete_emoji)
        add("GET", "/channels/{cid}/webhooks", self.get_webhooks)
        add("POST", "/channels/{cid}/webhooks", self.post_webhook)
        add("PATCH", "/channels/{cid}/webhooks/{wid}", self.patch_webhook)
        add("DELETE", "/channels/{cid}/webhooks/{wid}", self.delete_webhook)
        add("POST", "/webhooks/{wid}/{token}", self.execute_webhook)
        self._public_handlers.add(self.execute_webhook)
        add("GET", "/users/{uid}/profile", self.get_profile)
        add("GET", "/users/{uid}/mutual-servers", self.get_mutual_servers)

    async def get_vanity(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/vanity`` -> ``{"vanityCode": str | null}`` (members)."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response({"vanityCode": self.store.vanity_code(sid)})

    async def put_notifications(self, ctx: Ctx) -> Response:
        """``PUT /servers/{sid}/notifications {muted?, muteUntil?, mentionsOnly?}`` -> 204: the
        caller's own settings for the server."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        await self.ops.set_notifications(sid, ctx.uid, ctx.body())
        return no_content()

    async def get_audit_logs(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/audit-logs?limit=&action=`` -> ``{"logs": [AuditEntry]}``, newest
        first (VIEW_AUDIT_LOG; ``limit`` default 50, clamped to 1..100; ``action`` an exact name)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "VIEW_AUDIT_LOG")
        limit = ctx.q_int("limit", 50)
        action = ctx.q("action") or None
        return json_response({"logs": self.store.audit_logs(sid, limit, action)})

    async def get_emojis(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/emojis`` -> ``{"emojis": [Emoji]}`` (members)."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        return json_response({"emojis": self.store.emojis(sid)})

    async def post_emoji(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/emojis {name, imageUrl, isAnimated?}`` -> 201 ``{"emoji"}``
        (MANAGE_SERVER; name 2 to 32 of ``[A-Za-z0-9_]``; a name already used: 409)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_SERVER")
        try:
            emoji = await self.ops.create_emoji(sid, ctx.body(), ctx.uid)
        except Conflict as exc:
            raise HTTPError(409, str(exc)) from exc
        return json_response({"emoji": emoji}, 201)

    async def delete_emoji(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{sid}/emojis/{eid}`` -> 204 (MANAGE_SERVER)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_SERVER")
        self.store.delete_emoji(sid, ctx.params["eid"])
        return no_content()

    def _webhook_in(self, cid: str, wid: str) -> Any:
        row = self.store.webhook_row(wid)
        if row["channel_id"] != cid:
            raise NotFound("webhooks.errors.not_found")
        return row

    async def get_webhooks(self, ctx: Ctx) -> Response:
        """``GET /channels/{chid}/webhooks`` -> ``{"webhooks": [Webhook]}``, no tokens (MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "MANAGE_CHANNELS", dm_ok=False)
        return json_response({"webhooks": self.store.webhooks(cid)})

    async def post_webhook(self, ctx: Ctx) -> Response:
        """``POST /channels/{chid}/webhooks {name, avatarUrl?}`` -> 201 ``{"webhook"}`` with its
        ``token`` (the only answer that carries it; MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "MANAGE_CHANNELS", dm_ok=False)
        return json_response({"webhook": await self.ops.create_webhook(cid, ctx.body(), ctx.uid)}, 201)

    async def patch_webhook(self, ctx: Ctx) -> Response:
        """``PATCH /channels/{chid}/webhooks/{wid} {name?, avatarUrl?}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "MANAGE_CHANNELS", dm_ok=False)
        self._webhook_in(cid, ctx.params["wid"])
        await self.ops.update_webhook(ctx.params["wid"], ctx.body())
        return no_content()

    async def delete_webhook(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{chid}/webhooks/{wid}`` -> 204 (MANAGE_CHANNELS)."""
        cid = ctx.params["cid"]
        self._channel_perm(cid, ctx.uid, "MANAGE_CHANNELS", dm_ok=False)
        self._webhook_in(cid, ctx.params["wid"])
        self.store.delete_webhook(ctx.params["wid"])
        return no_content()

    async def execute_webhook(self, ctx: Ctx) -> Response:
        """``POST /webhooks/{wid}/{token} {content?, username?, avatarUrl?, embeds?}`` -> ``{"id"}``:
        no ``Authorization``; 404 for an unknown webhook or a wrong token; the message (author: the
        webhook's pseudo-user) is broadcast as ``message:new``."""
        body = ctx.body()
        record = await self.ops.execute_webhook(ctx.params["wid"], ctx.params["token"], body)
        return json_response({"id": record["publicId"]})

    async def get_profile(self, ctx: Ctx) -> Response:
        """``GET /users/{uid}/profile`` -> bare User plus ``banner, bannerColor, bio, followersCount,
        followingCount, mutualFriendsCount``."""
        return json_response(self.store.profile(ctx.params["uid"], viewer=ctx.uid))

    async def get_mutual_servers(self, ctx: Ctx) -> Response:
        """``GET /users/{uid}/mutual-servers`` -> ``{"mutualServers": [{publicId, name, imageUrl}]}``."""
        return json_response({"mutualServers": self.store.mutual_servers(ctx.params["uid"], ctx.uid)})

    # ------------------------------------------------------------------ audit log
    def _audit_routes(self) -> None:
        """Wrap every route of :data:`AUDITED_ROUTES` so that a success writes an audit log entry.

        Call after every route is registered.
        """
        routes = self.router._routes
        for index, (method, segs, handler) in enumerate(routes):
            spec = AUDITED_ROUTES.get((method, "/" + "/".join(segs)))
            if spec is not None:
                routes[index] = (method, segs, self._audited(handler, *spec))

    def _audit_server(self, params: dict[str, str]) -> str | None:
        """The server a request is about (looked up before the handler runs: a delete removes it)."""
        if "sid" in params:
            return params["sid"]
        row = None
        if "cid" in params:
            row = self.store._one("SELECT server_id FROM channels WHERE id=?", (params["cid"],))
            if row is None:  # the override routes also take a category id
                row = self.store._one("SELECT server_id FROM categories WHERE id=?", (params["cid"],))
        elif "code" in params:
            row = self.store._one("SELECT server_id FROM invites WHERE code=?", (params["code"],))
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
            self.store.add_audit(sid, ctx.uid or None, action, target_type, target, details)
            return response

        audited.__doc__ = handler.__doc__
        return audited


#: The header a REST change carries its reason in; kept in the audit entry's ``details``.
AUDIT_REASON_HEADER = "X-Audit-Log-Reason"

#: REST actions written to a server's audit log when they succeed: ``(method, route template) ->
#: (action, target type, target id source)``. The source is a path parameter, or ``"=<key>"``
#: (``"=<key>:<field>"``) for the ``publicId`` (``<field>``) of the record created under
#: ``<key>`` in the answer. Socket moderation writes ``MEMBER_KICK``, ``MEMBER_BAN`` and
#: ``MEMBER_UNBAN`` itself.
AUDITED_ROUTES: dict[tuple[str, str], tuple[str, str, str]] = {
    ("PATCH", "/servers/{sid}"): ("SERVER_UPDATE", "SERVER", "sid"),
    ("POST", "/servers/{sid}/channels"): ("CHANNEL_CREATE", "CHANNEL", "=channel"),
    ("PATCH", "/channels/{cid}"): ("CHANNEL_UPDATE", "CHANNEL", "cid"),
    ("DELETE", "/channels/{cid}"): ("CHANNEL_DELETE", "CHANNEL", "cid"),
    ("POST", "/servers/{sid}/categories"): ("CATEGORY_CREATE", "CATEGORY", "=category"),
    ("POST", "/servers/{sid}/roles"): ("ROLE_CREATE", "ROLE", "=role"),
    ("PATCH", "/servers/{sid}/roles/{rid}"): ("ROLE_UPDATE", "ROLE", "rid"),
    ("DELETE", "/servers/{sid}/roles/{rid}"): ("ROLE_DELETE", "ROLE", "rid"),
    ("PATCH", "/servers/{sid}/members/{uid}"): ("MEMBER_UPDATE", "USER", "uid"),
    ("POST", "/servers/{sid}/invites"): ("INVITE_CREATE", "INVITE", "=invite:code"),
    ("DELETE", "/invites/{code}"): ("INVITE_DELETE", "INVITE", "code"),
    ("POST", "/chat/{cid}/pin/{mid}"): ("MESSAGE_PIN", "MESSAGE", "mid"),
    ("DELETE", "/chat/{cid}/pin/{mid}"): ("MESSAGE_UNPIN", "MESSAGE", "mid"),
    ("POST", "/channels/{cid}/messages/bulk-delete"): ("MESSAGE_BULK_DELETE", "CHANNEL", "cid"),
    ("POST", "/servers/{sid}/emojis"): ("EMOJI_CREATE", "EMOJI", "=emoji"),
    ("DELETE", "/servers/{sid}/emojis/{eid}"): ("EMOJI_DELETE", "EMOJI", "eid"),
    ("POST", "/channels/{cid}/webhooks"): ("WEBHOOK_CREATE", "WEBHOOK", "=webhook"),
    ("PATCH", "/channels/{cid}/webhooks/{wid}"): ("WEBHOOK_UPDATE", "WEBHOOK", "wid"),
    ("DELETE", "/channels/{cid}/webhooks/{wid}"): ("WEBHOOK_DELETE", "WEBHOOK", "wid"),
    ("PATCH", "/servers/{sid}/categories/{cat}"): ("CATEGORY_UPDATE", "CATEGORY", "cat"),
    ("DELETE", "/servers/{sid}/categories/{cat}"): ("CATEGORY_DELETE", "CATEGORY", "cat"),
    ("POST", "/servers/{sid}/categories/{cat}/sync"): ("CATEGORY_SYNC", "CATEGORY", "cat"),
    ("POST", "/channels/{cid}/duplicate"): ("CHANNEL_CREATE", "CHANNEL", "=channel"),
    ("POST", "/channels/{cid}/sync"): ("CHANNEL_SYNC", "CHANNEL", "cid"),
    ("POST", "/channels/{cid}/overrides"): ("CHANNEL_OVERWRITE_UPDATE", "CHANNEL", "cid"),
    ("DELETE", "/channels/{cid}/overrides/{oid}"): ("CHANNEL_OVERWRITE_DELETE", "CHANNEL", "cid"),
}
