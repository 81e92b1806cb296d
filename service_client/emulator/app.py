"""The emulator's REST API under ``/api/v2`` and the top-level ASGI application.

Every route of the service's REST API, with its permission checks and socket events, plus
fault injection, the rate limiter and the request journal. Lists are wrapped under a plural key
(``{"servers": [...]}``), creations under a singular one (``{"channel": {...}}``, status 201), a
read of one entity by id is bare; bodiless successes answer 204.

Routes are matched exactly on percent-decoded path segments of the raw path, so an id such
as ``a%2Fb`` stays one segment. A wrong method on a known path answers 405, an unknown path
404, bad JSON or fields 400, all as ``{"error": ...}``; handlers never answer 500 for bad input.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qs, unquote

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from .faults import REDACTED_TOKEN, FaultTable, RateLimiter, RequestLog, bucket_key, redact_webhook_path
from .ops import Conflict, Operations
from .realtime import Realtime
from .store import STATUSES, BadRequest, Forbidden, NotFound, Store

logger = logging.getLogger("service_client.emulator.app")

#: Path prefix of the REST API.
API_PREFIX = "/api/v2"
#: Path prefix of the control plane.
CONTROL_PREFIX = "/_emulator"

Handler = Callable[["Ctx"], Awaitable[Response]]
#: The handler type a :class:`Router` holds (REST handlers take a :class:`Ctx`; control ones differ).
H = TypeVar("H", bound=Callable[..., Awaitable[Response]])


class HTTPError(Exception):
    """An error answer ``{"error": message}`` with a status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Return a JSON response (compact, UTF-8)."""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """Return the emulator's error body ``{"error": message}`` with the JSON content type."""
    return json_response({"error": message}, status, headers)


def no_content() -> Response:
    """Return an empty 204."""
    return Response(status_code=204)


_MISSING = object()

#: Journal redaction: a body key whose lower-cased name contains one of these holds a secret.
SECRET_KEY_PARTS = ("token", "secret", "password", "authorization")
#: What a redacted secret reads as in the request journal (the bearer token, secret-named keys).
REDACTED = "[REDACTED]"
#: What a webhook token reads as wherever the emulator shows it (journal path and body, logs).
REDACTED_WEBHOOK_TOKEN = REDACTED_TOKEN


def redact_secrets(value: Any, tokens: list[str] | tuple[str, ...] = (),
                   webhook_tokens: list[str] | tuple[str, ...] = ()) -> Any:
    """A copy of a JSON value with secrets replaced: the value of every key whose name contains
    ``token``, ``secret``, ``password`` or ``authorization`` (any case) and every occurrence of
    one of ``tokens`` (the caller's bearer token) inside a string read ``[REDACTED]``; every
    occurrence of one of ``webhook_tokens`` inside a string reads ``***``, as the webhook token
    does in the journal's path."""
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and any(p in k.lower() for p in SECRET_KEY_PARTS)
                else redact_secrets(v, tokens, webhook_tokens) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_secrets(v, tokens, webhook_tokens) for v in value]
    if isinstance(value, str):
        for token in tokens:
            if token and token in value:
                value = value.replace(token, REDACTED)
        for token in webhook_tokens:
            if token and token in value:
                value = value.replace(token, REDACTED_WEBHOOK_TOKEN)
    return value


def journal_body(raw: bytes, tokens: list[str] | tuple[str, ...] = (),
                 webhook_tokens: list[str] | tuple[str, ...] = ()) -> Any:
    """The request journal's ``body``: the parsed JSON body with secrets redacted
    (:func:`redact_secrets`), or None when the body is empty or not JSON."""
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return redact_secrets(data, tokens, webhook_tokens)


@dataclass
class Ctx:
    """One request as seen by a handler."""

    request: Request
    params: dict[str, str]
    query: dict[str, list[str]]
    raw_body: bytes
    uid: str = ""
    _json: Any = field(default=_MISSING)

    def body(self) -> dict[str, Any]:
        """Return the JSON object body. Raises BadRequest for bad JSON or a non-object."""
        if self._json is _MISSING:
            if not self.raw_body.strip():
                raise BadRequest("A JSON object body is required")
            try:
                self._json = json.loads(self.raw_body)
            except (ValueError, UnicodeDecodeError) as exc:
                raise BadRequest("Invalid JSON body") from exc
        if not isinstance(self._json, dict):
            raise BadRequest("The JSON body must be an object")
        return dict(self._json)

    def body_or_empty(self) -> dict[str, Any]:
        """Like :meth:`body`, but an empty body gives ``{}``."""
        if not self.raw_body.strip():
            return {}
        return self.body()

    def q(self, name: str) -> str | None:
        """Return the first value of a query parameter or None."""
        values = self.query.get(name)
        return values[0] if values else None

    def q_int(self, name: str, default: int, lo: int = 1, hi: int = 100) -> int:
        """Return an integer query parameter clamped to ``lo..hi``. Raises BadRequest."""
        raw = self.q(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw, 10)
        except ValueError as exc:
            raise BadRequest(f"{name} must be a decimal integer") from exc
        return max(lo, min(hi, value))


class Router(Generic[H]):
    """Exact segment router: literal segments beat ``{param}`` ones; knows 404 from 405.

    Generic in the handler type ``H`` it stores and hands back from :meth:`match`.
    """

    def __init__(self) -> None:
        self._routes: list[tuple[str, tuple[str, ...], H]] = []

    def add(self, method: str, template: str, handler: H) -> None:
        """Register ``handler`` for ``method`` and a template like ``/servers/{sid}``."""
        segs = tuple(s for s in template.split("/")[1:])
        self._routes.append((method, segs, handler))
        self._routes.sort(key=lambda r: tuple(1 if s.startswith("{") else 0 for s in r[1]))

    def match(self, method: str, segments: list[str]) -> tuple[H, dict[str, str]] | int:
        """Return ``(handler, params)``, or 405 (known path, wrong method) or 404."""
        path_known = False
        for r_method, r_segs, handler in self._routes:
            if len(r_segs) != len(segments):
                continue
            params: dict[str, str] = {}
            for tpl, seg in zip(r_segs, segments, strict=True):
                if tpl.startswith("{"):
                    if not seg:
                        break
                    params[tpl[1:-1]] = seg
                elif tpl != seg:
                    break
            else:
                if r_method == method:
                    return handler, params
                path_known = True
        return 405 if path_known else 404


def split_path(raw_path: str) -> list[str]:
    """Split a raw (encoded) path into percent-decoded segments (no leading empty one)."""
    return [unquote(s, errors="replace") for s in raw_path.split("/")[1:]]


class RestApi:
    """The REST routes under ``/api/v2`` with faults, limiter and journal.

    Not thread-safe on its own: it runs on the emulator's loop.
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
        #: Handlers served without ``Authorization`` (webhook execution).
        self._public_handlers: set[Handler] = set()
        self._routes()
        self._extra_routes()
        self._audit_routes()

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
        raw_body = await self._journal_caller(request, headers, entry, rel_raw)
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
                  raw_body=raw_body, uid=uid or "")
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
        """Read the request body and record in the journal entry who sent what: ``userId`` (the
        public id of the user whose valid bearer token came with the request, else None) and
        ``body`` (the parsed JSON with secrets redacted, None when empty or not JSON; inside
        strings the bearer token reads ``[REDACTED]`` and the webhook token of the path ``***``,
        as in the journal's path).
        Every request is recorded so, faults and unknown routes included. Returns the raw body."""
        raw_body = await request.body()
        auth = headers.get("authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        entry["userId"] = self.store.user_by_token(token) if token else None
        secrets = [token] if token else []
        webhook_tokens: list[str] = []
        segments = split_path(rel_raw)
        if len(segments) >= 3 and segments[0].lower() == "webhooks" and segments[2]:
            webhook_tokens.append(segments[2])
            raw_segment = rel_raw.split("/")[3] if len(rel_raw.split("/")) > 3 else ""
            if raw_segment and raw_segment != segments[2]:
                webhook_tokens.append(raw_segment)   # the percent-encoded form, as sent
        entry["body"] = journal_body(raw_body, secrets, webhook_tokens)
        return raw_body

    @staticmethod
    def _fault_response(fault: Any, scope: dict[str, Any]) -> Response | None:
        if fault.status == 0:
            return None
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = fault.retry_after
        if fault.body is not None:
            return Response(fault.body.encode("utf-8"), status_code=fault.status, headers=headers,
                            media_type=fault.content_type or "text/html")
        if fault.content_type is not None and fault.content_type != "application/json":
            return Response(b"", status_code=fault.status, headers=headers, media_type=fault.content_type)
        return error_response(fault.status, f"Injected fault {fault.status}", headers)

    # ------------------------------------------------------------------ access helpers
    def _server_access(self, sid: str, uid: str) -> None:
        """404 unknown server, 403 not a member."""
        self.store.server_row(sid)
        if not self.store.is_member(sid, uid):
            raise Forbidden("servers.errors.not_member")

    def _need_perm(self, sid: str, uid: str, perm: str) -> None:
        self._server_access(sid, uid)
        if not self.store.has_perm(sid, uid, perm):
            raise Forbidden("servers.errors.missing_permission")

    def _channel_access(self, cid: str, uid: str) -> Any:
        """404 unknown channel, 403 not visible. Returns the channel row."""
        row = self.store.channel_row(cid)
        if not self.store.can_view(cid, uid):
            raise Forbidden("channels.errors.no_access")
        return row

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
        """``GET /servers/{sid}/members[?search=]`` -> ``{"members": [...]}`` (VIEW_MEMBERS)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "VIEW_MEMBERS")
        members = self.store.members(sid, viewer=ctx.uid)
        search = ctx.q("search")
        if search is None:
            return json_response({"members": members})
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
        """``POST /servers/{sid}/categories {name}`` -> 201 ``{"category"}`` (MANAGE_CHANNELS)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        body = ctx.body()
        return json_response({"category": await self.ops.create_category(sid, body.get("name"))}, 201)

    async def post_channel(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/channels`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS)."""
        sid = ctx.params["sid"]
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        body = ctx.body()
        return json_response({"channel": await self.ops.create_channel(sid, body)}, 201)

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

    async def get_invites(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/invites?all=true`` -> ``{"invites"}`` (MANAGE_INVITES);
        without ``all=true`` -> ``{"invite": own invite | null}``."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        if ctx.q("all") == "true":
            self._need_perm(sid, ctx.uid, "MANAGE_INVITES")
            return json_response({"invites": self.store.invites(sid)})
        own = self.store.invites(sid, inviter=ctx.uid)
        return json_response({"invite": own[-1] if own else None})

    async def post_invite(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/invites {channelPublicId, maxAge?, maxUses?}`` -> 201 ``{"invite"}``."""
        sid = ctx.params["sid"]
        self._server_access(sid, ctx.uid)
        body = ctx.body()
        result = await self.ops.create_invite(sid, body.get("channelPublicId"), ctx.uid,
                                              max_age=body.get("maxAge"), max_uses=body.get("maxUses"))
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
        this channel that bound the results (any other id matches nothing)."""
        cid = ctx.params["cid"]
        self._channel_access(cid, ctx.uid)
        q = ctx.q("q")
        if q is None:
            raise BadRequest("q is required")
        limit = ctx.q_int("limit", 25)
        return json_response({"messages": self.store.search(cid, q, limit, ctx.q("before") or None,
                                                            ctx.q("after") or None)})

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
        """``GET /invites/{code}`` -> resolved invite; 404 unknown or expired."""
        return json_response(self.store.resolved_invite(ctx.params["code"], ctx.uid))

    async def delete_invite(self, ctx: Ctx) -> Response:
        """``DELETE /invites/{code}`` -> 204; MANAGE_INVITES on the invite's server."""
        row = self.store.invite_row(ctx.params["code"])
        self._need_perm(row["server_id"], ctx.uid, "MANAGE_INVITES")
        self.store.delete_invite(ctx.params["code"])
        return no_content()

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
            self.store.add_audit(sid, ctx.uid or None, action, target_type, target, details)
            return response

        audited.__doc__ = handler.__doc__
        return audited


    # ------------------------------------------------------------------ overrides, categories, channel copies
    # Permission overwrites (channels and categories), category edit/delete/sync, channel
    # duplicate/sync. Managing needs MANAGE_CHANNELS on the server (a server permission, so a
    # manager can fix a channel it cannot view); reading overrides needs MANAGE_CHANNELS or
    # the right to view the channel or category.

    def _permission_routes(self) -> None:
        add = self.router.add
        add("PATCH", "/servers/{sid}/categories/{cat}", self.patch_category)
        add("DELETE", "/servers/{sid}/categories/{cat}", self.delete_category)
        add("POST", "/servers/{sid}/categories/{cat}/sync", self.sync_category)
        add("GET", "/servers/{sid}/categories/{cat}/overrides", self.get_category_overrides)
        add("POST", "/channels/{cid}/duplicate", self.duplicate_channel)
        add("POST", "/channels/{cid}/sync", self.sync_channel)
        add("GET", "/channels/{cid}/overrides", self.get_overrides)
        add("POST", "/channels/{cid}/overrides", self.post_override)
        add("DELETE", "/channels/{cid}/overrides/{oid}", self.delete_override)

    def _manage_channel(self, cid: str, uid: str) -> str:
        """404 unknown channel; 403 a DM, a non-member or no MANAGE_CHANNELS. Returns the server id."""
        row = self.store.channel_row(cid)
        if row["server_id"] is None:
            raise Forbidden("servers.errors.missing_permission")
        self._need_perm(row["server_id"], uid, "MANAGE_CHANNELS")
        return str(row["server_id"])

    def _manage_category(self, sid: str, cat_id: str, uid: str) -> None:
        """404 unknown server; 403 non-member or no MANAGE_CHANNELS; 404 unknown category."""
        self._need_perm(sid, uid, "MANAGE_CHANNELS")
        self.store.category_row(sid, cat_id)

    def _read_overrides(self, scope_id: str, uid: str) -> None:
        """404 unknown channel or category; 403 a non-member, or a member who neither holds
        MANAGE_CHANNELS nor may view it."""
        kind, sid = self.store.override_scope(scope_id)
        self._server_access(sid, uid)
        if self.store.has_perm(sid, uid, "MANAGE_CHANNELS"):
            return
        view = self.store.can_view(scope_id, uid) if kind == "channel" else \
            bool(self.store.category_permissions(sid, scope_id, uid) & 512)
        if not view:
            raise Forbidden("channels.errors.no_access")

    async def patch_category(self, ctx: Ctx) -> Response:
        """``PATCH /servers/{sid}/categories/{cat} {name?, isPrivate?}`` -> 204 (MANAGE_CHANNELS);
        ``server:categories_updated``."""
        sid, cat_id = ctx.params["sid"], ctx.params["cat"]
        self._manage_category(sid, cat_id, ctx.uid)
        body = ctx.body()
        await self.ops.update_category(sid, cat_id, {k: body[k] for k in ("name", "isPrivate") if k in body})
        return no_content()

    async def delete_category(self, ctx: Ctx) -> Response:
        """``DELETE /servers/{sid}/categories/{cat}`` -> 204 (MANAGE_CHANNELS); its channels
        become uncategorised."""
        sid, cat_id = ctx.params["sid"], ctx.params["cat"]
        self._manage_category(sid, cat_id, ctx.uid)
        await self.ops.delete_category(sid, cat_id)
        return no_content()

    async def sync_category(self, ctx: Ctx) -> Response:
        """``POST /servers/{sid}/categories/{cat}/sync`` -> 204 (MANAGE_CHANNELS): its overrides
        and ``isPrivate`` copied to its channels."""
        sid, cat_id = ctx.params["sid"], ctx.params["cat"]
        self._manage_category(sid, cat_id, ctx.uid)
        await self.ops.sync_category(sid, cat_id)
        return no_content()

    async def get_category_overrides(self, ctx: Ctx) -> Response:
        """``GET /servers/{sid}/categories/{cat}/overrides`` -> ``{"overrides": [Override]}``."""
        sid, cat_id = ctx.params["sid"], ctx.params["cat"]
        self._server_access(sid, ctx.uid)
        self.store.category_row(sid, cat_id)
        self._read_overrides(cat_id, ctx.uid)
        return json_response({"overrides": self.store.overrides(cat_id)})

    async def duplicate_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{cid}/duplicate`` -> 201 ``{"channel"}`` (MANAGE_CHANNELS): same
        settings and overrides, no messages."""
        cid = ctx.params["cid"]
        self._manage_channel(cid, ctx.uid)
        return json_response({"channel": await self.ops.duplicate_channel(cid)}, 201)

    async def sync_channel(self, ctx: Ctx) -> Response:
        """``POST /channels/{cid}/sync`` -> 204 (MANAGE_CHANNELS): the category's overrides and
        ``isPrivate`` copied; 400 without a category."""
        cid = ctx.params["cid"]
        self._manage_channel(cid, ctx.uid)
        await self.ops.sync_channel(cid)
        return no_content()

    async def get_overrides(self, ctx: Ctx) -> Response:
        """``GET /channels/{cid}/overrides`` -> ``{"overrides": [Override]}`` (a category id works too)."""
        cid = ctx.params["cid"]
        self._read_overrides(cid, ctx.uid)
        return json_response({"overrides": self.store.overrides(cid)})

    async def post_override(self, ctx: Ctx) -> Response:
        """``POST /channels/{cid}/overrides {targetId, type, allow, deny}`` -> 204 (MANAGE_CHANNELS):
        create or replace; a category id works too; rooms follow at once."""
        cid = ctx.params["cid"]
        _kind, sid = self.store.override_scope(cid)
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        await self.ops.set_override(cid, ctx.body())
        return no_content()

    async def delete_override(self, ctx: Ctx) -> Response:
        """``DELETE /channels/{cid}/overrides/{oid}`` -> 204 (MANAGE_CHANNELS); a category id works too."""
        cid = ctx.params["cid"]
        _kind, sid = self.store.override_scope(cid)
        self._need_perm(sid, ctx.uid, "MANAGE_CHANNELS")
        await self.ops.delete_override(cid, ctx.params["oid"])
        return no_content()


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
