"""The REST API under ``/api/v2``: the request journal, fault rules, the limiter, the route match and error answers.

The handlers are in route groups, one per entity (``rest_users.py``, ``rest_servers.py``,
``rest_members.py``, ``rest_channels.py``, ``rest_messages.py``, ``rest_invites.py``,
``rest_webhooks.py``), each given the parts it uses; :class:`RestApi` builds them and serves
each handler for its endpoint of the catalog, through the audit trail (``rest_audit.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from ..endpoints import Endpoint
from .access import Access
from .faults import FaultTable, RateLimiter, RequestLog, bucket_key, redact_webhook_path
from .ops import Operations
from .realtime import Realtime
from .rest_audit import AuditTrail
from .rest_channels import ChannelRoutes
from .rest_invites import InviteRoutes
from .rest_members import MemberRoutes
from .rest_messages import MessageRoutes
from .rest_servers import ServerRoutes
from .rest_users import UserRoutes
from .rest_webhooks import WebhookRoutes
from .routing import Ctx, Handler, HTTPError, Router, error_response, journal_body, read_body, split_path
from .store import BadRequest, Forbidden, NotFound, Store

logger = logging.getLogger("service_client.emulator.app")


class RestApi:
    """The REST routes under ``/api/v2`` with faults, limiter and journal.

    Not thread-safe on its own: it runs on the emulator's loop.

    Args:
        store: The emulator's repositories.
        ops: The operations (changes with their socket events).
        realtime: The socket.io side.
        faults, limiter, log: The fault rules, the rate limiter and the request journal.
    """

    def __init__(self, store: Store, ops: Operations, realtime: Realtime, faults: FaultTable,
                 limiter: RateLimiter, log: RequestLog) -> None:
        self.store = store
        self.ops = ops
        self.rt = realtime
        self.faults = faults
        self.limiter = limiter
        self.log = log
        self.router: Router[Handler] = Router()
        #: The handler of each endpoint of the service's catalog, as registered by :meth:`serve`.
        self.served: dict[Endpoint, Handler] = {}
        #: Handlers served without ``Authorization`` (the catalog's endpoints that are not ``authorized``).
        self._public_handlers: set[Handler] = set()
        #: The catalog's entry of each served handler (handed to the handler in :attr:`Ctx.endpoint`).
        self._endpoints: dict[Handler, Endpoint] = {}
        #: The membership, visibility and permission checks the route groups share.
        self.access = Access(servers=store.servers, members=store.members, channels=store.channels,
                             messages=store.messages, extras=store.extras, db=store.db)
        #: Writes the audit entries of the changes in :data:`~.rest_audit.AUDITED_ROUTES`.
        self.audit = AuditTrail(extras=store.extras, db=store.db)
        groups = (
            UserRoutes(users=store.users, servers=store.servers, realtime=realtime),
            ServerRoutes(users=store.users, servers=store.servers, members=store.members, channels=store.channels,
                         extras=store.extras, server_ops=ops.servers, member_ops=ops.members, extras_ops=ops.extras,
                         access=self.access),
            MemberRoutes(members=store.members, member_ops=ops.members, access=self.access),
            ChannelRoutes(channels=store.channels, channel_ops=ops.channels, access=self.access),
            MessageRoutes(messages=store.messages, message_ops=ops.messages, access=self.access),
            InviteRoutes(members=store.members, invites=store.invites, invite_ops=ops.invites, access=self.access),
            WebhookRoutes(extras=store.extras, extras_ops=ops.extras, access=self.access),
        )
        for group in groups:
            for endpoint, handler in group.routes():
                self.serve(endpoint, handler)

    def serve(self, endpoint: Endpoint, handler: Handler) -> None:
        """Serve ``endpoint`` of the service's catalog (its method and path) with ``handler``.

        The handler is passed through the audit trail first; it is served without
        ``Authorization`` when the endpoint is not ``authorized``.

        Raises:
            ValueError: The endpoint is already served.
        """
        if endpoint in self.served:
            raise ValueError(f"{endpoint.name} is already served")
        handler = self.audit.wrap(endpoint, handler)
        self.served[endpoint] = handler
        self._endpoints[handler] = endpoint
        self.router.add(endpoint.method, endpoint.path, handler)
        if not endpoint.authorized:
            self._public_handlers.add(handler)

    # ------------------------------------------------------------------ dispatch
    async def handle(self, scope: dict[str, Any], receive: Any, send: Any, rel_raw: str) -> None:
        """Serve one HTTP request whose raw path below ``/api/v2`` is ``rel_raw``."""
        method = scope["method"].upper()
        query_string = scope.get("query_string", b"").decode("latin-1")
        request = Request(scope, receive)
        headers = {k.lower(): v for k, v in request.headers.items()}
        safe_headers = {k: ("[REDACTED]" if k == "authorization" else v) for k, v in headers.items()}
        entry: dict[str, Any] = {"method": method, "path": rel_raw, "query": query_string, "status": None,
                                 "startedAt": time.time() * 1000.0, "endedAt": None, "headers": safe_headers,
                                 "body": None, "userId": None}
        self.log.begin(entry)
        ended = False

        async def logged_send(message: MutableMapping[str, Any]) -> None:
            # Complete the journal entry just before the last bytes leave, so a client that has
            # its answer always finds its entry finished. A response without a body (204, 304,
            # HEAD) is complete once its headers leave: the server may send them at once.
            """Pass the ASGI message on, recording the response status for the request journal."""
            nonlocal ended
            if not ended and (
                (message["type"] == "http.response.body" and not message.get("more_body", False))
                or (message["type"] == "http.response.start"
                    and (message.get("status") in (204, 304) or method == "HEAD"))
            ):
                ended = True
                self.log.end(entry, response_status)
            await send(message)

        response_status = 500
        try:
            try:
                response = await self._answer(scope, request, method, rel_raw, query_string, headers, entry)
            except ClientDisconnect:  # the client went away before its body arrived: nothing to answer
                response_status = 499
                return
            if response is None:  # connection reset fault: abort the TCP connection, answer nothing
                response_status = 0
                transport = getattr(getattr(send, "__self__", None), "transport", None)
                if transport is not None:
                    transport.abort()
                    await asyncio.sleep(0.01)  # let uvicorn see the connection lost
                    return
                response = Response(b"", status_code=500)  # no transport handle: best effort
            response_status = response.status_code
            await response(scope, receive, logged_send)
        finally:
            if not ended:
                self.log.end(entry, response_status)

    async def _answer(self, scope: dict[str, Any], request: Request, method: str, rel_raw: str,
                      query_string: str, headers: dict[str, str], entry: dict[str, Any]) -> Response | None:
        try:
            raw_body = await self._journal_caller(request, headers, entry, rel_raw)
        except HTTPError as exc:  # 413: the body is over the limit, and was never parsed
            return error_response(exc.status, exc.message)
        delay_ms, fault = self.faults.take(method, rel_raw)
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000.0)
        if fault is not None:
            return self._fault_response(fault, scope)
        retry_after = self.limiter.check(bucket_key(method, rel_raw))
        if retry_after is not None:
            return error_response(429, "Too many requests", {"Retry-After": retry_after})
        segments = split_path(rel_raw)
        matched = self.router.match(method, segments)
        if isinstance(matched, int):
            if matched == 405:
                return error_response(405, "Method not allowed")
            return error_response(404, "Not found")
        handler, params = matched
        uid = entry["userId"]
        if uid is None and handler not in self._public_handlers:
            return error_response(401, "Unauthorized")
        ctx = Ctx(request=request, params=params, query=parse_qs(query_string, keep_blank_values=True),
                  raw_body=raw_body, uid=uid or "", endpoint=self._endpoints.get(handler))
        try:
            return await handler(ctx)
        except HTTPError as exc:
            return error_response(exc.status, exc.message)
        except BadRequest as exc:
            return error_response(400, str(exc))
        except Forbidden as exc:
            return error_response(403, str(exc))
        except NotFound as exc:
            return error_response(404, str(exc))
        except Exception:  # a bug, never bad input: still a JSON answer
            logger.exception("emulator route %s %s failed", method, redact_webhook_path(rel_raw))
            return error_response(500, "Internal emulator error")

    async def _journal_caller(self, request: Request, headers: dict[str, str], entry: dict[str, Any],
                              rel_raw: str) -> bytes:
        """Record in the journal entry who sent what: ``userId`` (the public id of the user
        whose valid bearer token came with the request, else None), then read the body (at most
        ``bounds.max_body_bytes``) and record it as ``body`` (the parsed JSON with secrets
        redacted, None when empty or not JSON; inside strings the bearer token reads
        ``[REDACTED]`` and the webhook token of the path ``***``, as in the journal's path; cut
        to ``bounds.journal_body_bytes``).
        Every request is recorded so, faults and unknown routes included. Returns the raw body.

        Raises:
            HTTPError: 413, the body is over the limit (``userId`` is recorded, ``body`` is not).
        """
        auth = headers.get("authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        entry["userId"] = self.store.users.user_by_token(token) if token else None
        raw_body = await read_body(request, self.log.bounds.max_body_bytes)
        secrets = [token] if token else []
        webhook_tokens: list[str] = []
        segments = split_path(rel_raw)
        if len(segments) >= 3 and segments[0].lower() == "webhooks" and segments[2]:
            webhook_tokens.append(segments[2])
            raw_segment = rel_raw.split("/")[3] if len(rel_raw.split("/")) > 3 else ""
            if raw_segment and raw_segment != segments[2]:
                webhook_tokens.append(raw_segment)   # the percent-encoded form, as sent
        self.log.record_body(entry, journal_body(raw_body, secrets, webhook_tokens))
        return raw_body

    @staticmethod
    def _fault_response(fault: Any, scope: dict[str, Any]) -> Response | None:
        if fault.status == 0:
            return None
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = fault.retry_after
        if fault.body is not None:  # JSON unless the rule says text/plain; never HTML (see faults.py)
            return Response(fault.body.encode("utf-8"), status_code=fault.status, headers=headers,
                            media_type=fault.content_type or "application/json")
        if fault.content_type is not None and fault.content_type != "application/json":
            return Response(b"", status_code=fault.status, headers=headers, media_type=fault.content_type)
        return error_response(fault.status, f"Injected fault {fault.status}", headers)
