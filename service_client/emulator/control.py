"""The emulator's control plane: the in-process ``Emulator`` class and the ``/_emulator`` JSON routes.

``Emulator`` runs uvicorn on its own event loop in a daemon thread named
``service_client-emulator-<n>``; every control method is thread-safe (it runs on that loop
through ``run_coroutine_threadsafe`` and waits a bounded time).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import socketio  # type: ignore[import-untyped]
import uvicorn
from starlette.requests import Request
from starlette.responses import Response

from .app import (
    API_PREFIX,
    CONTROL_PREFIX,
    HTTPError,
    RestApi,
    Router,
    error_response,
    json_response,
    no_content,
    split_path,
)
from .faults import FaultTable, RateLimiter, RequestLog
from .ops import Operations
from .realtime import DEFAULT_VOICE_URL, ECHO_MODES, Realtime, eio_frame_ok
from .store import PROFILE_FIELDS, BadRequest, Forbidden, NotFound, Store
from .webui import page_file
from .wire import Wire

logger = logging.getLogger("service_client.emulator")

T = TypeVar("T")

#: Bound on one control call, seconds.
CONTROL_TIMEOUT_S = 60.0
#: Bound on start-up (listening), seconds.
START_TIMEOUT_S = 15.0
#: Bound on stop (thread joined), seconds.
STOP_TIMEOUT_S = 10.0

_thread_ids = itertools.count(1)


class _Body:
    """Parsed JSON body of a control request."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def obj(self, *, optional: bool = False) -> dict[str, Any]:
        """The JSON body as a dict (400 when it is not an object, or missing unless optional)."""
        if not self.raw.strip():
            if optional:
                return {}
            raise BadRequest("A JSON object body is required")
        try:
            data = json.loads(self.raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BadRequest("Invalid JSON body") from exc
        if not isinstance(data, dict):
            raise BadRequest("The JSON body must be an object")
        return data


#: A control route handler: ``(path params, body, request) -> response``.
ControlHandler = Callable[[dict[str, str], _Body, Request], Awaitable[Response]]


def _id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{name} must be a non-empty string")
    return value


class EmulatorCore:
    """Everything that lives on the emulator's loop: store, socket server, REST and control routes.

    Not thread-safe: use from the loop (``Emulator`` hops there for you).

    Args:
        db: sqlite3 database (``":memory:"`` or a file path).
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
    """

    def __init__(self, db: str = ":memory:", *, ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 carry_from: EmulatorCore | None = None) -> None:
        self.store: Store = Store(db) if carry_from is None else carry_from.store
        self.rt = Realtime(self.store, ping_interval=ping_interval, ping_timeout=ping_timeout)
        self.ops = Operations(self.store, self.rt)
        self.faults: FaultTable = FaultTable() if carry_from is None else carry_from.faults
        self.limiter: RateLimiter = RateLimiter() if carry_from is None else carry_from.limiter
        self.log: RequestLog = RequestLog() if carry_from is None else carry_from.log
        if carry_from is not None:
            for attr in ("realistic_rooms", "send_errors", "refuse_auth", "voice_url", "voice_e2ee_key", "echo",
                         "echo_delay_ms", "limits"):
                setattr(self.rt, attr, getattr(carry_from.rt, attr))
        self.rest = RestApi(self.store, self.ops, self.rt, self.faults, self.limiter, self.log)
        self.outage_until: float | None = None
        self.control: Router[ControlHandler] = Router()
        self._control_routes()
        self._page_routes()
        self.asgi = socketio.ASGIApp(self.rt.sio, other_asgi_app=self._http, socketio_path="socket.io")

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Top-level ASGI entry: outage window for WebSockets, then socket.io or HTTP."""
        if scope["type"] == "websocket" and self.outage_until is not None and time.monotonic() < self.outage_until:
            await receive()  # websocket.connect
            if "websocket.http.response" in scope.get("extensions", {}):
                await send({"type": "websocket.http.response.start", "status": 503,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "websocket.http.response.body", "body": b'{"error":"outage"}'})
            else:
                await send({"type": "websocket.close", "code": 1013})
            return
        if scope["type"] == "websocket":
            send = Wire(send).send  # bulk posts write whole runs of frames (see wire.py)
            inner = receive

            async def receive() -> Any:  # drop frames Engine.IO cannot decode (they would end the connection)
                """Hand the ASGI app the buffered request body."""
                while True:
                    message = await inner()
                    if message.get("type") != "websocket.receive" or eio_frame_ok(message):
                        return message
                    logger.debug("undecodable Engine.IO frame dropped")
        await self.asgi(scope, receive, send)

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw_path = raw.decode("latin-1").split("?", 1)[0]
        if raw_path == API_PREFIX or raw_path.startswith(API_PREFIX + "/"):
            await self.rest.handle(scope, receive, send, raw_path[len(API_PREFIX):] or "/")
        elif raw_path == CONTROL_PREFIX or raw_path.startswith(CONTROL_PREFIX + "/"):
            response = await self._control(scope, receive, raw_path[len(CONTROL_PREFIX):] or "/")
            await response(scope, receive, send)
        elif raw_path == "/":
            await self._page_root(scope["method"].upper())(scope, receive, send)
        else:
            await error_response(404, "Not found")(scope, receive, send)

    async def _control(self, scope: dict[str, Any], receive: Any, rel_raw: str) -> Response:
        request = Request(scope, receive)
        matched = self.control.match(scope["method"].upper(), split_path(rel_raw))
        if isinstance(matched, int):
            return error_response(matched, "Method not allowed" if matched == 405 else "Not found")
        handler, params = matched
        try:
            body = _Body(await request.body())
            return await handler(params, body, request)
        except HTTPError as exc:
            return error_response(exc.status, exc.message)
        except BadRequest as exc:
            return error_response(400, str(exc))
        except (ValueError, TypeError) as exc:
            return error_response(400, str(exc))
        except Forbidden as exc:
            return error_response(403, str(exc))
        except NotFound as exc:
            return error_response(404, str(exc))
        except Exception:
            logger.exception("control route %s failed", rel_raw)
            return error_response(500, "Internal emulator error")

    # ------------------------------------------------------------------ plain operations
    async def reset(self) -> None:
        """Delete all state, faults, limiter, journal; server-disconnect every socket."""
        await self.rt.server_disconnect(None)
        self.rt.voice.clear()
        self.rt.journal.clear()
        self.rt.realistic_rooms = False
        self.rt.send_errors = False
        self.rt.refuse_auth = False
        self.rt.echo = "normal"
        self.rt.echo_delay_ms = 0.0
        self.rt.limits = False
        self.rt.voice_url = DEFAULT_VOICE_URL
        self.rt.voice_e2ee_key = None
        self.store.reset()
        self.faults.clear()
        self.limiter.configure(None)
        self.log.clear()
        self.outage_until = None

    async def create_user(self, name: Any, bot: Any = False) -> dict[str, Any]:
        """See :meth:`Operations.create_user`."""
        return await self.ops.create_user(name, bot)

    async def snapshot(self) -> dict[str, Any]:
        """Every piece of stored state: sqlite rows per table plus the in-memory voice rooms."""
        voice = {cid: {uid: {k: v for k, v in entry.items() if k != "joinedAt"} for uid, entry in users.items()}
                 for cid, users in self.rt.voice.items()}
        return {"tables": self.store.dump(), "voice": voice}

    async def messages(self, cid: str) -> list[dict[str, Any]]:
        """Every stored message of a channel, chronological."""
        self.store.channel_row(cid)
        return self.store.messages(cid)

    # ------------------------------------------------------------------ the web page
    def _page_routes(self) -> None:
        """The web page (``/_emulator/ui``, its assets) and the user list its picker reads."""
        add = self.control.add
        add("GET", "/ui", self._c_page)
        add("GET", "/ui/{name}", self._c_page_file)
        add("GET", "/users", self._c_users_list)

    @staticmethod
    def _page_root(method: str) -> Response:
        """``GET /``: the web page; any other method 405."""
        if method != "GET":
            return error_response(405, "Method not allowed")
        response = page_file("index.html")
        assert response is not None
        return response

    async def _c_page(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return self._page_root("GET")

    async def _c_page_file(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        response = page_file(p["name"])
        if response is None:
            raise NotFound("Not found")
        return response

    async def _c_users_list(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"users": self.store.users_with_tokens()})

    # ------------------------------------------------------------------ control routes
    def _control_routes(self) -> None:
        add = self.control.add
        add("POST", "/reset", self._c_reset)
        add("POST", "/users", self._c_users)
        add("PATCH", "/users/{uid}", self._c_user_patch)
        add("POST", "/users/{uid}/revoke", self._c_revoke)
        add("POST", "/users/{uid}/presence", self._c_presence)
        add("GET", "/users/{uid}/presence", self._c_presence_get)
        add("POST", "/servers", self._c_servers)
        add("PATCH", "/servers/{sid}", self._c_server_patch)
        add("DELETE", "/servers/{sid}", self._c_server_delete)
        add("POST", "/servers/{sid}/members", self._c_members)
        add("DELETE", "/servers/{sid}/members/{uid}", self._c_member_delete)
        add("PATCH", "/servers/{sid}/members/{uid}", self._c_member_patch)
        add("POST", "/servers/{sid}/roles", self._c_roles)
        add("PATCH", "/servers/{sid}/roles/{rid}", self._c_role_patch)
        add("DELETE", "/servers/{sid}/roles/{rid}", self._c_role_delete)
        add("POST", "/servers/{sid}/channels", self._c_channels)
        add("POST", "/servers/{sid}/invites", self._c_invites)
        add("POST", "/messages", self._c_messages)
        add("POST", "/messages/bulk", self._c_messages_bulk)
        add("GET", "/snapshot", self._c_snapshot)
        add("POST", "/servers/{sid}/bans", self._c_ban)
        add("DELETE", "/servers/{sid}/bans/{uid}", self._c_unban)
        add("GET", "/servers/{sid}/bans", self._c_bans)
        add("POST", "/messages/{mid}/reactions", self._c_react)
        add("GET", "/channels/{cid}/messages", self._c_channel_messages)
        add("GET", "/requests", self._c_requests)
        add("DELETE", "/requests", self._c_requests_clear)
        add("GET", "/connections", self._c_connections)
        add("POST", "/drop", self._c_drop)
        add("POST", "/disconnect", self._c_disconnect)
        add("POST", "/emit", self._c_emit)
        add("GET", "/emits", self._c_emits)
        add("POST", "/faults", self._c_faults)
        add("GET", "/faults", self._c_faults_list)
        add("DELETE", "/faults", self._c_faults_clear)
        add("POST", "/ratelimit", self._c_ratelimit)
        add("POST", "/outage", self._c_outage)
        add("POST", "/settings", self._c_settings)
        add("POST", "/voice/join", self._c_voice_join)
        add("POST", "/voice/leave", self._c_voice_leave)
        add("POST", "/voice/state", self._c_voice_state)

    async def _c_reset(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.reset()
        return no_content()

    async def _c_users(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.create_user(body.get("name"), body.get("bot", False)), 201)

    async def _c_user_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "tag", "image") if k in body}
        return json_response({"user": await self.ops.update_user(p["uid"], fields)})

    async def _c_revoke(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.revoke_token(p["uid"])
        return no_content()

    async def _c_presence(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        self.store.user_row(p["uid"])
        if "status" in body:
            if body["status"] not in ("online", "idle", "dnd", "invisible"):
                raise BadRequest("bad status")
            await self.rt.set_presence(p["uid"], body["status"])
        if "activity" in body:
            if body["activity"] is not None and not isinstance(body["activity"], dict):
                raise BadRequest("activity must be an object or null")
            await self.rt.set_activity(p["uid"], body["activity"])
        return no_content()

    async def _c_presence_get(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        user = self.store.user(p["uid"], viewer=p["uid"])
        return json_response({"status": user["status"], "activity": self.store.activity(p["uid"])})

    async def _c_servers(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        result = await self.ops.create_server(body.get("name"), body.get("ownerId"),
                                              categories=body.get("categories"), channels=body.get("channels"),
                                              image_url=body.get("imageUrl"))
        return json_response(result, 201)

    async def _c_server_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.update_server(p["sid"], {k: body[k] for k in ("name", "imageUrl") if k in body})
        return json_response({"server": self.store.server(p["sid"])})

    async def _c_server_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.delete_server(p["sid"])
        return no_content()

    async def _c_members(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.ops.add_member(p["sid"], body.get("userId"), body.get("roleIds")), 201)

    async def _c_member_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        if not await self.ops.remove_member(p["sid"], p["uid"]):
            raise NotFound("members.errors.not_found")
        return no_content()

    async def _c_member_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.update_member(p["sid"], p["uid"], {k: body[k] for k in ("roles", "nickname") if k in body})
        return json_response({"member": self.store.member(p["sid"], p["uid"])})

    async def _c_roles(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.ops.create_role(p["sid"], body.get("name"), body.get("permissions", "0"),
                                                        color=body.get("color"), hoist=body.get("hoist", False)),
                             201)

    async def _c_role_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response({"role": await self.ops.update_role(p["sid"], p["rid"], body)})

    async def _c_role_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.delete_role(p["sid"], p["rid"])
        return no_content()

    async def _c_channels(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.store.server_row(p["sid"])
        return json_response({"channel": await self.ops.create_channel(p["sid"], b.obj())}, 201)

    async def _c_invites(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        self.store.server_row(p["sid"])
        return json_response(await self.ops.create_invite(p["sid"], body.get("channelId"), body.get("inviterId"),
                                                          max_age=body.get("maxAge"), max_uses=body.get("maxUses")),
                             201)

    async def _c_messages(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.ops.post_message(body.get("channelId"), body.get("authorId"),
                                                         body.get("content"), body.get("embeds")), 201)

    async def _c_messages_bulk(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        count = await self.ops.post_messages(body.get("channelId"), body.get("authorId"), body.get("contents"))
        return json_response({"count": count}, 201)

    async def _c_channel_messages(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"messages": await self.messages(p["cid"])})

    async def _c_ban(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.ban(p["sid"], _id(body.get("userId"), "userId"), body.get("reason"))
        return no_content()

    async def _c_unban(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.unban(p["sid"], p["uid"])
        return no_content()

    async def _c_bans(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.store.server_row(p["sid"])
        return json_response({"bans": self.store.bans(p["sid"])})

    async def _c_react(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response({"added": await self.react(p["mid"], _id(body.get("userId"), "userId"),
                                                        body.get("emoji"))})

    async def react(self, mid: str, uid: str, emoji: Any) -> bool:
        """Toggle a user's reaction as its ``message:react`` would (view and ADD_REACTION checked)."""
        if not isinstance(emoji, str) or not emoji.strip() or len(emoji) > 64:
            raise BadRequest("emoji must be a non-empty string of at most 64 characters")
        self.store.user_row(uid)
        row = self.store.message_row(mid)
        if self.rt._reactable(uid, mid, "ADD_REACTION") is None:
            raise Forbidden("messages.errors.missing_permission")
        return await self.rt.toggle_reaction(row, emoji, uid)

    async def _c_snapshot(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response(await self.snapshot())

    async def _c_requests(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"requests": self.log.snapshot(), "maxInFlight": self.log.peak()})

    async def _c_requests_clear(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.log.clear()
        return no_content()

    async def _c_connections(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"count": self.rt.connection_count()})

    async def _c_drop(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        return json_response({"count": await self.rt.drop(body.get("userId"))})

    async def _c_disconnect(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        return json_response({"count": await self.rt.server_disconnect(body.get("userId"))})

    async def _c_emit(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.emit(body.get("event"), body.get("payload"), to_user=body.get("toUser"),
                            to_server=body.get("toServer"), to_channel=body.get("toChannel"))
        return no_content()

    async def _c_emits(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"emits": [{k: v for k, v in e.items() if k != "sid"} for e in self.rt.journal]})

    async def _c_faults(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        fault = self.faults.add(body.get("method", "*"), body.get("path", "*"), status=body.get("status"),
                                count=body.get("count", 1), retry_after=body.get("retryAfter"),
                                delay_ms=body.get("delayMs", 0), body=body.get("body"),
                                content_type=body.get("contentType"))
        return json_response({"fault": fault.to_dict()}, 201)

    async def _c_faults_list(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"faults": self.faults.list()})

    async def _c_faults_clear(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.faults.clear()
        return no_content()

    async def _c_ratelimit(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        window_ms = body.get("windowMs", 1000)
        if isinstance(window_ms, bool) or not isinstance(window_ms, (int, float)):
            raise BadRequest("windowMs must be a number")
        self.limiter.configure(body.get("limit"), window_ms / 1000.0,
                               retry_after_fraction=bool(body.get("retryAfterFraction", False)))
        return no_content()

    async def _c_outage(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        seconds = body.get("seconds")
        if seconds is None:
            self.outage_until = None
        elif isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise BadRequest("seconds must be a number or null")
        else:
            self.outage_until = time.monotonic() + float(seconds)
        return no_content()

    async def _c_settings(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        for key in ("realisticRooms", "sendErrors", "refuseAuth", "limits"):
            if key in body and not isinstance(body[key], bool):
                raise BadRequest(f"{key} must be a boolean")
        _apply_settings(self.rt, realistic_rooms=body.get("realisticRooms"), send_errors=body.get("sendErrors"),
                        refuse_auth=body.get("refuseAuth"), limits=body.get("limits"), echo=body.get("echo"),
                        echo_delay_ms=body.get("echoDelayMs"))
        if "voiceUrl" in body:
            self.rt.voice_url = str(body["voiceUrl"])
        if "voiceE2eeKey" in body:
            self.rt.voice_e2ee_key = body["voiceE2eeKey"]
        return no_content()

    async def _c_voice_join(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        ok = await self.rt.voice_join(str(body.get("userId")), str(body.get("channelId")))
        if not ok:
            raise BadRequest("voice join refused")
        return no_content()

    async def _c_voice_leave(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.rt.voice_leave(str(body.get("userId")))
        return no_content()

    async def _c_voice_state(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        if not await self.rt.voice_state(str(body.get("userId")), dict(body.get("state") or {})):
            raise BadRequest("user not in voice or nothing to change")
        return no_content()


class _Server(uvicorn.Server):
    """uvicorn server that signals readiness through a threading.Event."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start serving, then signal readiness."""
        await super().startup(sockets)
        self._ready.set()

    def install_signal_handlers(self) -> None:  # pragma: no cover - never in a thread
        """Install none: the server runs on a thread and the host program owns signals."""
        return None


class Emulator:
    """A local emulator of the chat service, served in-process on its own thread.

    Thread-safe: every method may be called from any thread except the emulator's own loop.
    Usable as a context manager (``with Emulator() as emu:``).

    Args:
        host: Interface to bind (default ``127.0.0.1``).
        port: TCP port; 0 (default) picks a free one.
        db: sqlite3 database: ``":memory:"`` (default) or a file path.
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, db: str = ":memory:",
                 ping_interval: float = 25.0, ping_timeout: float = 20.0) -> None:
        if not isinstance(host, str) or not host:
            raise TypeError("host must be a non-empty string")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError("port must be an integer in 0..65535")
        if not isinstance(db, str) or not db:
            raise TypeError("db must be a non-empty string")
        for value, name in ((ping_interval, "ping_interval"), (ping_timeout, "ping_timeout")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds")
        self.host = host
        self.port = port
        self.db = db
        self.ping_interval = float(ping_interval)
        self.ping_timeout = float(ping_timeout)
        self.core: EmulatorCore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: _Server | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._keep_state = False
        self._kept: EmulatorCore | None = None

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<Emulator {state} {self.host}:{self.port}>"

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        """Whether the server thread is alive and listening."""
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    @property
    def base_url(self) -> str:
        """REST base URL, ``http://127.0.0.1:PORT/api/v2``."""
        return f"http://{self.host}:{self.port}{API_PREFIX}"

    @property
    def socket_url(self) -> str:
        """Socket.IO URL, ``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def control_url(self) -> str:
        """Control-plane URL, ``http://127.0.0.1:PORT/_emulator``."""
        return f"http://{self.host}:{self.port}{CONTROL_PREFIX}"

    @property
    def page_url(self) -> str:
        """URL of the web page (chat in a browser as any user), ``http://127.0.0.1:PORT/``."""
        return f"http://{self.host}:{self.port}/"

    def start(self, timeout: float = START_TIMEOUT_S) -> Emulator:
        """Start serving; block until listening (at most ``timeout`` seconds).

        Returns:
            self.

        Raises:
            RuntimeError: Already running, or the server failed to start in time.
            OSError: The port could not be bound.
        """
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("Emulator already running")
        # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted sockets (else ~40 ms per request)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        sock.listen(2048)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        self.core = EmulatorCore(self.db, ping_interval=self.ping_interval, ping_timeout=self.ping_timeout,
                                 carry_from=self._kept)
        self._kept = None
        self._keep_state = False
        config = uvicorn.Config(self.core, log_level="warning", lifespan="off", access_log=False,
                                timeout_graceful_shutdown=1, ws_ping_interval=None, ws_ping_timeout=None)
        self._ready.clear()
        self._error = None
        self._server = _Server(config, self._ready)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, args=(sock,), daemon=True,
                                        name=f"service_client-emulator-{next(_thread_ids)}")
        self._thread.start()
        if not self._ready.wait(timeout) or not self._thread.is_alive():
            self.stop()
            raise RuntimeError(f"Emulator did not start within {timeout} s: {self._error!r}")
        return self

    def _run(self, sock: socket.socket) -> None:
        loop = self._loop
        server = self._server
        assert loop is not None and server is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException as exc:  # reported by start()
            self._error = exc
            logger.exception("emulator server stopped with an error")
        finally:
            try:
                if self.core is not None:
                    loop.run_until_complete(asyncio.wait_for(self.core.rt.sio.shutdown(), 2))
            except BaseException:  # noqa: BLE001 - best-effort shutdown of a server that may be half-started
                logger.debug("socket.io shutdown did not complete", exc_info=True)
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            sock.close()
            if self.core is not None and not self._keep_state:
                self.core.store.close()

    def stop(self, timeout: float = STOP_TIMEOUT_S, *, keep_state: bool = False) -> None:
        """Stop serving and join the thread (at most ``timeout`` seconds). Idempotent.

        Every connection is closed and the port is released (it can be bound again at once:
        ``SO_REUSEADDR``).

        Args:
            timeout: Bound on each join, seconds.
            keep_state: Keep the stored state (also an in-memory database), fault rules,
                limiter, journal and toggles for the next :meth:`start` of this object, which
                binds the same port. Sockets and voice rooms are not kept.
        """
        thread = self._thread
        if keep_state and thread is not None and self.core is not None:
            self._keep_state = True
            self._kept = self.core
        if self._server is not None:
            self._server.should_exit = True
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                thread.join(timeout)
        self._thread = None
        self._ready.clear()

    def restart(self, timeout: float = START_TIMEOUT_S) -> Emulator:
        """Stop (closing every connection, as a service restart would) and start again on the
        same port with the same state. Returns self.

        Raises:
            RuntimeError: Not running, or the restart failed. OSError: The port was taken meanwhile.
        """
        if not self.running:
            raise RuntimeError("Emulator is not running")
        self.stop(keep_state=True)
        return self.start(timeout)

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ loop hop
    def _call(self, fn: Callable[[EmulatorCore], Awaitable[T]], timeout: float = CONTROL_TIMEOUT_S) -> T:
        if self._loop is None or self.core is None or not self.running:
            raise RuntimeError("Emulator is not running")
        core = self.core

        async def runner() -> T:
            """Run the blocking work on this thread and complete the Future with its outcome."""
            return await fn(core)

        future = asyncio.run_coroutine_threadsafe(runner(), self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise
        except BadRequest as exc:
            raise ValueError(str(exc)) from exc
        except Forbidden as exc:
            raise PermissionError(str(exc)) from exc
        except NotFound as exc:
            raise LookupError(str(exc)) from exc

    # ------------------------------------------------------------------ seeding
    def reset(self) -> None:
        """Delete all state (users, servers, messages), faults, limiter, journal; disconnect sockets."""
        self._call(lambda c: c.reset())

    def create_user(self, name: str, *, bot: bool = False) -> dict[str, Any]:
        """Create a user. Returns ``{"user": User, "token": str}``. Raises ValueError for a bad name."""
        return self._call(lambda c: c.create_user(name, bot))

    def users(self) -> list[dict[str, Any]]:
        """Every user with its token, oldest first: ``[{"user": User, "token": str | None}]``
        (``token`` None once revoked); what the web page's "who are you" picker lists."""
        return self._call(lambda c: _value(c.store.users_with_tokens()))

    def update_user(self, user_id: str, **fields: Any) -> dict[str, Any]:
        """Change ``name``/``tag``/``image`` of a user and broadcast ``user:update``; returns the User."""
        return self._call(lambda c: c.ops.update_user(user_id, fields))

    def revoke_token(self, user_id: str) -> None:
        """Revoke a user's token; its sockets get a server disconnect and reconnects are refused."""
        self._call(lambda c: c.ops.revoke_token(user_id))

    def create_server(self, name: str, owner_id: str, *, categories: list[dict[str, Any]] | None = None,
                      channels: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Create a server owned (and joined) by ``owner_id``.

        Args:
            name: Server name.
            owner_id: Owner's user id.
            categories: ``[{name, channels: [{name, type}]}]``.
            channels: Uncategorised channels ``[{name, type}]``.

        Returns:
            ``{"server": Server, "categories": [Category], "channels": [Channel]}`` (every channel).

        Raises:
            ValueError: Malformed arguments. LookupError: Unknown owner.
        """
        return self._call(lambda c: c.ops.create_server(name, owner_id, categories=categories, channels=channels))

    def server(self, server_id: str) -> dict[str, Any]:
        """Return the current Server record. Raises LookupError for an unknown server."""
        return self._call(lambda c: _value(c.store.server(server_id)))

    def user(self, user_id: str) -> dict[str, Any]:
        """Return the current User record (own view). Raises LookupError for an unknown user."""
        return self._call(lambda c: _value(c.store.user(user_id, viewer=user_id)))

    def member(self, server_id: str, user_id: str) -> dict[str, Any]:
        """Return the nested Member record. Raises LookupError when not a member."""
        return self._call(lambda c: _value(c.store.member(server_id, user_id)))

    def update_server(self, server_id: str, **fields: Any) -> dict[str, Any]:
        """Rename a server (``name=``) or change its icon (``imageUrl=``); broadcasts ``server:updated``."""
        async def run(c: EmulatorCore) -> dict[str, Any]:
            """The control step, run on the emulator's event loop."""
            await c.ops.update_server(server_id, fields)
            return c.store.server(server_id)
        return self._call(run)

    def delete_server(self, server_id: str) -> None:
        """Delete a server; broadcasts ``server:deleted``."""
        self._call(lambda c: c.ops.delete_server(server_id))

    def create_channel(self, server_id: str, name: str, type: str = "TEXT", *,
                       category_id: str | None = None) -> dict[str, Any]:
        """Create a channel; returns the Channel record (broadcasts ``server:channels_updated``)."""
        body: dict[str, Any] = {"name": name, "type": type}
        if category_id is not None:
            body["categoryId"] = category_id
        return self._call(lambda c: c.ops.create_channel(server_id, body))

    def add_member(self, server_id: str, user_id: str, *, role_ids: list[str] | None = None) -> dict[str, Any]:
        """Add a user to a server (``server:joined`` to it, ``server:member_add`` to the server room).

        Returns:
            ``{"member": Member}``.
        """
        return self._call(lambda c: c.ops.add_member(server_id, user_id, role_ids))

    def remove_member(self, server_id: str, user_id: str) -> bool:
        """Remove a member (kick semantics: ``server:member_removed`` and ``server:you_removed``)."""
        return self._call(lambda c: c.ops.remove_member(server_id, user_id))

    def update_member(self, server_id: str, user_id: str, *, roles: list[str] | None = None,
                      nickname: Any = ...) -> dict[str, Any]:
        """Replace a member's roles and/or nickname; broadcasts ``server:member_update``. Returns the Member."""
        fields: dict[str, Any] = {}
        if roles is not None:
            fields["roles"] = roles
        if nickname is not ...:
            fields["nickname"] = nickname

        async def run(c: EmulatorCore) -> dict[str, Any]:
            """The control step, run on the emulator's event loop."""
            await c.ops.update_member(server_id, user_id, fields)
            return c.store.member(server_id, user_id)
        return self._call(run)

    def create_role(self, server_id: str, name: str, permissions: int | str = 0, *, color: str | None = None,
                    hoist: bool = False) -> dict[str, Any]:
        """Create a role (``permissions`` int or decimal string). Returns ``{"role": Role}``."""
        return self._call(lambda c: c.ops.create_role(server_id, name, permissions, color=color, hoist=hoist))

    def update_role(self, server_id: str, role_id: str, **fields: Any) -> dict[str, Any]:
        """Change a role (``name``, ``color``, ``hoist``, ``permissions``, ``position``); returns the Role."""
        return self._call(lambda c: c.ops.update_role(server_id, role_id, fields))

    def delete_role(self, server_id: str, role_id: str) -> None:
        """Delete a role; broadcasts ``server:role_delete``."""
        self._call(lambda c: c.ops.delete_role(server_id, role_id))

    def reorder_roles(self, server_id: str, role_ids: list[str]) -> list[dict[str, Any]]:
        """Give roles positions 1.. in the given order; broadcasts ``server:roles_order_update``."""
        return self._call(lambda c: c.ops.reorder_roles(server_id, role_ids))

    def create_invite(self, server_id: str, channel_id: str | None = None, inviter_id: str | None = None, *,
                      max_age: int | None = None, max_uses: int | None = None) -> dict[str, Any]:
        """Create an invite (``max_age`` seconds). Returns ``{"invite": ServerInvite}``."""
        return self._call(lambda c: c.ops.create_invite(server_id, channel_id, inviter_id, max_age=max_age,
                                                        max_uses=max_uses))

    def open_dm(self, user_id: str, other_id: str) -> dict[str, Any]:
        """Open the DM between two users (as ``user_id``); returns the DM record from its side."""
        return self._call(lambda c: c.ops.open_dm(user_id, other_id))

    # ------------------------------------------------------------------ messages
    def post_message(self, channel_id: str, author_id: str, content: str, *,
                     embeds: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Store and deliver a message as ``author_id`` (as a socket send would). Returns ``{"message"}``."""
        return self._call(lambda c: c.ops.post_message(channel_id, author_id, content, embeds))

    def post_messages(self, channel_id: str, author_id: str, contents: list[str]) -> int:
        """Store many messages in one transaction and deliver them in order; returns the count."""
        return self._call(lambda c: c.ops.post_messages(channel_id, author_id, list(contents)))

    def messages(self, channel_id: str, *, decoded: bool = False) -> list[dict[str, Any]]:
        """Every stored Message record of a channel, chronological.

        Args:
            channel_id: The channel (or DM) id.
            decoded: False (default): the records as the service sends them,
                ``content`` escaped (``&`` ``<`` ``>`` as ``&amp;`` ``&lt;``
                ``&gt;``). True: copies whose ``content`` is the text as typed
                (what ``Message.content`` holds on the client side).

        Raises:
            LookupError: Unknown channel.
        """
        records = self._call(lambda c: c.messages(channel_id))
        if not decoded:
            return records
        from ..models.message import decode_content

        return [
            {**r, "content": decode_content(r["content"])} if isinstance(r.get("content"), str) else dict(r)
            for r in records
        ]

    def ban(self, server_id: str, user_id: str, *, reason: str | None = None) -> None:
        """Ban a user as the server's owner would with ``server:ban`` (member removed, reason
        ``banned``, ``server:you_removed``).

        Raises:
            LookupError: Unknown server or user. ValueError: Already banned, the owner, bad reason.
        """
        self._call(lambda c: c.ops.ban(server_id, user_id, reason))

    def unban(self, server_id: str, user_id: str) -> None:
        """Lift a ban (``server:ban_revoked``). Raises LookupError / ValueError (not banned)."""
        self._call(lambda c: c.ops.unban(server_id, user_id))

    def bans(self, server_id: str) -> list[dict[str, Any]]:
        """Return the Ban records of a server ``[{publicId, reason, createdAt, user}]``, oldest first."""
        return self._call(lambda c: _value(c.store.bans(server_id)))

    def react(self, message_id: str, user_id: str, emoji: str) -> bool:
        """Toggle ``user_id``'s ``emoji`` reaction on a message as a ``message:react`` would;
        broadcasts the ``message:reaction`` snapshot. Returns True when added, False when removed.

        Raises:
            LookupError: Unknown message or user. PermissionError: The user may not react there.
            ValueError: Bad emoji.
        """
        return self._call(lambda c: c.react(message_id, user_id, emoji))

    def reactions(self, message_id: str) -> list[dict[str, Any]]:
        """Return the stored reaction list of a message (the ``message:reaction`` snapshot form)."""
        return self._call(lambda c: _value(c.store.reactions(message_id)))

    def pins(self, channel_id: str) -> list[dict[str, Any]]:
        """Return a channel's pinned messages, most recently pinned first."""
        return self._call(lambda c: _value(c.store.pins(channel_id)))

    def snapshot(self) -> dict[str, Any]:
        """Return the whole stored state, for before/after comparisons (a refused request changes nothing).

        Returns:
            ``{"tables": {table: [[column values...]] sorted}, "voice": {channel id: {user id:
            voice user without joinedAt}}}``; two snapshots are equal when nothing changed.
        """
        return self._call(lambda c: c.snapshot())

    # ------------------------------------------------------------------ presence and voice
    def set_presence(self, user_id: str, status: str) -> None:
        """Set a user's status and broadcast ``presence:update``."""
        if status not in ("online", "idle", "dnd", "invisible"):
            raise ValueError("status must be online, idle, dnd or invisible")
        self._call(lambda c: c.rt.set_presence(user_id, status))

    def set_activity(self, user_id: str, activity: dict[str, Any] | None) -> None:
        """Set (or clear with None) a user's activity and broadcast ``activity:update``."""
        self._call(lambda c: c.rt.set_activity(user_id, activity))

    def presence(self, user_id: str) -> dict[str, Any]:
        """Return ``{"status", "activity"}`` as stored for a user."""
        async def run(c: EmulatorCore) -> dict[str, Any]:
            """The control step, run on the emulator's event loop."""
            return {"status": c.store.user(user_id, viewer=user_id)["status"], "activity": c.store.activity(user_id)}
        return self._call(run)

    def voice_join(self, user_id: str, channel_id: str) -> bool:
        """Make a user join a voice channel (credentials to its user room); False if refused."""
        return self._call(lambda c: c.rt.voice_join(user_id, channel_id))

    def voice_leave(self, user_id: str) -> bool:
        """Make a user leave voice; False if it was in none."""
        return self._call(lambda c: c.rt.voice_leave(user_id))

    def voice_state(self, user_id: str, **changes: Any) -> bool:
        """Change a user's voice state (``muted=True`` ...); False if not in voice."""
        return self._call(lambda c: c.rt.voice_state(user_id, changes))

    def voice_users(self, channel_id: str) -> list[dict[str, Any]]:
        """Return the voice users of a channel."""
        async def run(c: EmulatorCore) -> list[dict[str, Any]]:
            """The control step, run on the emulator's event loop."""
            return [dict(u) for u in c.rt.voice.get(channel_id, {}).values()]
        return self._call(run)

    # ------------------------------------------------------------------ journal, faults, limiter
    def requests(self) -> list[dict[str, Any]]:
        """The REST journal: ``[{method, path, query, status, startedAt, endedAt, headers, body, userId}]``.

        ``path`` is the raw path below ``/api/v2``, ``query`` the raw query string, times are epoch
        milliseconds (floats), ``status`` 0 for a reset fault; ``headers`` are lower-cased with
        ``authorization`` redacted; ``body`` is the parsed JSON body with secrets redacted (the
        value of any key naming a token, secret, password or authorization, and the caller's own
        token inside strings, read ``[REDACTED]``; the webhook token of a webhook execution's path
        reads ``***`` inside strings, as in ``path``), None when empty or not JSON; ``userId`` is the
        public id of the user whose valid token came with the request, else None. Every request
        is recorded with both, faults and unknown routes included.
        """
        assert self.core is not None
        return self.core.log.snapshot()

    def clear_requests(self) -> None:
        """Empty the journal and reset the in-flight peak."""
        assert self.core is not None
        self.core.log.clear()

    def max_in_flight(self) -> int:
        """The highest number of REST requests in flight at once since the last clear."""
        assert self.core is not None
        return self.core.log.peak()

    def add_fault(self, method: str, path: str, *, status: int | None = None, count: int | None = 1,
                  retry_after: str | int | float | None = None, delay_ms: float = 0, body: str | None = None,
                  content_type: str | None = None) -> str:
        """Add a REST fault rule; returns its id.

        Args:
            method: HTTP method or ``"*"``.
            path: fnmatch glob on the path below ``/api/v2`` (e.g. ``/servers/*``).
            status: Status to answer (429, 500, 502, 503, 504, 200 ... ; 0 resets the connection);
                None with ``delay_ms`` only delays.
            count: Requests affected; None = all until :meth:`clear_faults`.
            retry_after: Raw ``Retry-After`` header value.
            delay_ms: Delay before answering, milliseconds.
            body: Body text instead of ``{"error": ...}`` (e.g. HTML, ``""``).
            content_type: Content type of ``body``.

        Raises:
            TypeError, ValueError: Bad arguments.
        """
        assert self.core is not None
        return self.core.faults.add(method, path, status=status, count=count, retry_after=retry_after,
                                    delay_ms=delay_ms, body=body, content_type=content_type).id

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        assert self.core is not None
        self.core.faults.clear()

    def set_rate_limit(self, limit: int | None, window_s: float = 1.0, *, retry_after_fraction: bool = False) -> None:
        """Enforce ``limit`` requests per ``window_s`` seconds per bucket (method plus the first two path segments); None = off.

        Over the limit: 429 with ``Retry-After`` = ceil(seconds left) or, with
        ``retry_after_fraction``, the exact fraction.
        """
        assert self.core is not None
        self.core.limiter.configure(limit, window_s, retry_after_fraction=retry_after_fraction)

    def set_outage(self, seconds: float | None) -> None:
        """Refuse WebSocket upgrades (503) for ``seconds``; None lifts it."""
        assert self.core is not None
        self.core.outage_until = None if seconds is None else time.monotonic() + float(seconds)

    def configure(self, *, realistic_rooms: bool | None = None, send_errors: bool | None = None,
                  refuse_auth: bool | None = None, voice_url: str | None = None, echo: str | None = None,
                  echo_delay_ms: float | None = None, limits: bool | None = None) -> None:
        """Emulator settings; None leaves a setting unchanged; ``reset()`` restores the defaults.

        Args:
            realistic_rooms: Rooms computed only at connect time.
            send_errors: ``message:error {nonce, error}`` to the sender of a refused send.
            refuse_auth: Refuse every CONNECT.
            voice_url: Media URL sent in ``voice:livekit-token``.
            echo: What the *sending socket* gets of its own ``message:send``: ``"normal"``,
                ``"drop"`` (nothing; others still get it), ``"duplicate"`` (twice) or ``"delay"``
                (after ``echo_delay_ms``; others at once).
            echo_delay_ms: Delay of the ``"delay"`` echo mode, milliseconds (>= 0).
            limits: Limit mode: content over 4000 characters, more than 10 embeds or an embed
                over the embed limits (title 256, description 4096, 25 fields, field name 256,
                field value 1024, footer 2048, author 256, 6000 in all) is refused (silently, or ``message:error``).

        Raises:
            ValueError: Unknown echo mode or a negative delay. TypeError: A flag is not a bool.
        """
        assert self.core is not None
        _apply_settings(self.core.rt, realistic_rooms=realistic_rooms, send_errors=send_errors,
                        refuse_auth=refuse_auth, echo=echo, echo_delay_ms=echo_delay_ms, limits=limits)
        rt = self.core.rt
        if realistic_rooms is not None:
            rt.realistic_rooms = realistic_rooms
        if send_errors is not None:
            rt.send_errors = send_errors
        if refuse_auth is not None:
            rt.refuse_auth = refuse_auth
        if voice_url is not None:
            rt.voice_url = voice_url

    # ------------------------------------------------------------------ sockets
    def connection_count(self) -> int:
        """Number of connected (authenticated) socket.io clients."""
        return self._call(lambda c: _value(c.rt.connection_count()))

    def drop_transport(self, user_id: str | None = None) -> int:
        """Close matching sockets abruptly at the transport level (no close packet); returns how many."""
        return self._call(lambda c: c.rt.drop(user_id))

    def server_disconnect(self, user_id: str | None = None) -> int:
        """Send socket.io DISCONNECT to matching sockets; returns how many."""
        return self._call(lambda c: c.rt.server_disconnect(user_id))

    def emit(self, event: str, payload: Any, *, to_user: str | None = None, to_server: str | None = None,
             to_channel: str | None = None) -> None:
        """Send a raw event to a user, a server room, a channel room, or (none given) every socket."""
        self._call(lambda c: c.ops.emit(event, payload, to_user=to_user, to_server=to_server,
                                        to_channel=to_channel))

    def emits(self) -> list[dict[str, Any]]:
        """The emit journal: every client emit received ``[{event, payload, userId, at}]``."""
        async def run(c: EmulatorCore) -> list[dict[str, Any]]:
            """The control step, run on the emulator's event loop."""
            return [{k: v for k, v in e.items() if k != "sid"} for e in c.rt.journal]
        return self._call(run)

    # ------------------------------------------------------------------ server extras
    def set_vanity_code(self, server_id: str, code: str | None) -> None:
        """Give a server a vanity invite code (None removes it), as ``GET /servers/{sid}/vanity`` shows.

        Raises:
            LookupError: Unknown server. ValueError: The code is not 2 to 32 characters of
                ``[A-Za-z0-9-]``, or another server uses it.
        """
        if code is not None and (not isinstance(code, str) or not 2 <= len(code) <= 32
                                 or not all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in code)):
            raise ValueError("code must be 2 to 32 characters of letters, digits and dashes, or None")
        async def run(c: EmulatorCore) -> None:
            """The control step, run on the emulator's event loop."""
            c.store.set_vanity_code(server_id, code)
        self._call(run)

    def set_profile(self, user_id: str, **fields: Any) -> dict[str, Any]:
        """Set profile fields of a user (``banner``, ``bannerColor``, ``bio`` as str or None;
        ``followersCount``, ``followingCount``, ``mutualFriendsCount`` as ints >= 0); returns the
        profile as ``GET /users/{uid}/profile`` shows it.

        Raises:
            LookupError: Unknown user. ValueError: An unknown field or a value of the wrong type.
        """
        for key, value in fields.items():
            if key not in PROFILE_FIELDS:
                raise ValueError(f"unknown profile field {key!r}")
            if key.endswith("Count"):
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{key} must be an int >= 0")
            elif value is not None and not isinstance(value, str):
                raise ValueError(f"{key} must be a str or None")
        return self._call(lambda c: _value(c.store.set_profile(user_id, fields)))

    def audit_log(self, server_id: str, *, limit: int = 100, action: str | None = None) -> list[dict[str, Any]]:
        """Return a server's newest audit log entries (AuditEntry records), newest first."""
        return self._call(lambda c: _value(c.store.audit_logs(server_id, limit, action)))

    def webhooks(self, channel_id: str) -> list[dict[str, Any]]:
        """Return a channel's webhooks (without tokens), oldest first."""
        return self._call(lambda c: _value(c.store.webhooks(channel_id)))

    def emojis(self, server_id: str) -> list[dict[str, Any]]:
        """Return a server's custom emojis, oldest first."""
        return self._call(lambda c: _value(c.store.emojis(server_id)))
    # ------------------------------------------------------------------ permission overwrites
    def create_category(self, server_id: str, name: str) -> dict[str, Any]:
        """Create a category; returns its record (broadcasts ``server:categories_updated``)."""
        return self._call(lambda c: c.ops.create_category(server_id, name))

    def set_override(self, scope_id: str, target_id: str, type: str, *, allow: int | str = 0,
                     deny: int | str = 0) -> bool:
        """Create or replace the override of a role (``type="ROLE"``) or member (``"MEMBER"``) on a
        channel or category, as a manager would; channel rooms follow at once. True when created.

        Raises:
            ValueError: A bad target, type or bitfield. LookupError: Unknown channel or category.
        """
        body = {"targetId": target_id, "type": type, "allow": str(allow), "deny": str(deny)}
        return self._call(lambda c: c.ops.set_override(scope_id, body))

    def overrides(self, scope_id: str) -> list[dict[str, Any]]:
        """The Override records ``{id, type, targetId, targetName, allow, deny}`` of a channel or category."""
        return self._call(lambda c: _value(c.store.overrides(scope_id)))

    def can_view(self, channel_id: str, user_id: str) -> bool:
        """Whether a user may view a channel now (overrides and ``isPrivate`` applied)."""
        return self._call(lambda c: _value(c.store.can_view(channel_id, user_id)))

    def channel_ids_of_rooms(self, user_id: str) -> set[str]:
        """The channel ids whose socket room holds at least one socket of ``user_id``."""
        async def run(c: EmulatorCore) -> set[str]:
            """The control step, run on the emulator's event loop."""
            out: set[str] = set()
            for sid in c.rt.sids_of(user_id):
                out.update(room[2:] for room in c.rt.sio.rooms(sid, "/") if room.startswith("c:"))
            return out
        return self._call(run)


def _apply_settings(rt: Realtime, **settings: Any) -> None:
    """Check then apply toggles (all or nothing). Raises TypeError / ValueError."""
    for key in ("realistic_rooms", "send_errors", "refuse_auth", "limits"):
        value = settings.get(key)
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{key} must be a bool")
    echo, delay = settings.get("echo"), settings.get("echo_delay_ms")
    if echo is not None and echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, (int, float))
                              or not 0 <= delay <= 600_000):
        raise ValueError("echo_delay_ms must be a number of milliseconds in 0..600000")
    for key, attr in (("realistic_rooms", "realistic_rooms"), ("send_errors", "send_errors"),
                      ("refuse_auth", "refuse_auth"), ("limits", "limits"), ("echo", "echo")):
        if settings.get(key) is not None:
            setattr(rt, attr, settings[key])
    if delay is not None:
        rt.echo_delay_ms = float(delay)


async def _value(value: T) -> T:
    return value
