"""The audit log of REST changes: which endpoints write an entry, and the wrapper that writes it."""

from __future__ import annotations

import json
from urllib.parse import unquote

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .ops_checks import MAX_REASON_CHARS
from .routing import Ctx, Handler
from .store import BadRequest
from .store.database import Database
from .store.extras import ExtrasRepository


class AuditTrail:
    """Wraps the handlers of :data:`AUDITED_ROUTES` so that a success writes a server audit entry.

    Args:
        extras: The extras repository.
        db: The database.
    """

    def __init__(self, *, extras: ExtrasRepository, db: Database) -> None:
        self.extras = extras
        self.db = db

    def wrap(self, endpoint: Endpoint, handler: Handler) -> Handler:
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
            row = self.db.one("SELECT server_id FROM channels WHERE id=?", (params["channel_id"],))
            if row is None:  # the override routes also take a category id
                row = self.db.one("SELECT server_id FROM categories WHERE id=?", (params["channel_id"],))
        elif "code" in params:
            row = self.db.one("SELECT server_id FROM invites WHERE code=?", (params["code"],))
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
            self.extras.add_audit(sid, ctx.uid or None, action, target_type, target, details)
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
