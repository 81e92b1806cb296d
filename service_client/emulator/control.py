"""The emulator's control plane: ``EmulatorCore`` (everything on the server's loop) and its
``/_emulator`` JSON routes.

``EmulatorCore`` is the ASGI application uvicorn serves: the outage window and frame checks for
WebSockets, socket.io, REST under ``/api/v2`` (``app.py``), the web page, and the control routes
below ``/_emulator``, which seed the world, inject faults and read state for tests. The
in-process ``Emulator`` (``emulator.py``) drives the same core from other threads.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import socketio  # type: ignore[import-untyped]
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from .faults import FaultTable, RateLimiter, RequestLog
from .guard import HostRules, JsonErrors, StrictHeaders, control_refusal, refuse, socket_refusal
from .journal import Bounds, finite_number
from .media import media_server
from .ops import Operations
from .realtime import DEFAULT_VOICE_URL, ECHO_MODES, Realtime, eio_frame_ok
from .rest_api import RestApi
from .routing import (
    API_PREFIX,
    CONTROL_PREFIX,
    HTTPError,
    Router,
    error_response,
    json_object,
    json_response,
    no_content,
    read_body,
    split_path,
)
from .store import BadRequest, Forbidden, NotFound, Store
from .webui import page_file
from .wire import Wire

logger = logging.getLogger("service_client.emulator")

#: Path prefix of socket.io (its polling transport and its WebSocket upgrades).
SOCKETIO_PREFIX = "/socket.io"
#: Path of the media server's signalling WebSocket (LiveKit's ``/rtc``; ``/rtc/v1`` answers 404).
MEDIA_PREFIX = "/rtc"
#: The control-plane route that posts a message as any user (below ``CONTROL_PREFIX``).
CONTROL_POST_MESSAGE = "/messages"


class _Body:
    """The raw body of a control request, parsed on demand."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def obj(self, *, optional: bool = False) -> dict[str, Any]:
        """The JSON body as a dict (:func:`~.routing.json_object`: 400 when it is not an object,
        nested too deeply, holds NaN, or is missing unless ``optional``)."""
        return json_object(self.raw, optional=optional)


#: A control route handler: ``(path params, body, request) -> response``.
ControlHandler = Callable[[dict[str, str], _Body, Request], Awaitable[Response]]


def _id(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{name} must be a non-empty string")
    return value


class EmulatorCore:
    """Everything that lives on the emulator's loop: store, socket server, REST and control routes.

    Not thread-safe: use from the loop (``Emulator`` hops there for you). Its parts: ``store``
    (one repository per entity), ``rt`` (the socket server and its event handler groups),
    ``ops`` (one part of state changes per entity), ``rest`` (the route groups) and ``control``
    (the control routes).

    Args:
        db: sqlite3 database (``":memory:"`` or a file path).
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
        carry_from: A stopped core whose state, fault rules, limiter, journal, settings and sizes
            this one takes over (a restart).
        hosts: The ``Host`` headers and origins to answer (:class:`~.guard.HostRules`); default:
            ``127.0.0.1``, ``localhost`` and ``[::1]`` on any port.
        media: Run the media server when the voice extra is installed (:mod:`.media`).
    """

    def __init__(self, db: str = ":memory:", *, ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 carry_from: EmulatorCore | None = None, hosts: HostRules | None = None,
                 media: bool = True) -> None:
        self.store: Store = Store(db) if carry_from is None else carry_from.store
        #: The sizes journals and request bodies keep to (``configure``; ``reset`` restores them).
        self.bounds: Bounds = Bounds() if carry_from is None else carry_from.bounds
        #: The ``Host`` headers and origins answered (default: the loopback names, any port).
        self.hosts = hosts if hosts is not None else HostRules()
        self.rt = Realtime(self.store, ping_interval=ping_interval, ping_timeout=ping_timeout, bounds=self.bounds)
        self.ops = Operations(self.store, self.rt)
        self.faults: FaultTable = FaultTable() if carry_from is None else carry_from.faults
        self.limiter: RateLimiter = RateLimiter() if carry_from is None else carry_from.limiter
        self.log: RequestLog = RequestLog(self.bounds) if carry_from is None else carry_from.log
        if carry_from is not None:
            for attr in ("realistic_rooms", "send_errors", "refuse_auth", "voice_url", "voice_e2ee_key", "echo",
                         "echo_delay_ms", "limits"):
                setattr(self.rt, attr, getattr(carry_from.rt, attr))
            for uid in carry_from.rt.auto_online:  # shown online by sockets that did not survive the stop
                self.store.users.set_status(uid, "offline")
        self.rt.media = media_server() if media else None
        self.rest = RestApi(self.store, self.ops, self.rt, self.faults, self.limiter, self.log)
        self.outage_until: float | None = None
        #: HTTP requests being answered (their tasks), and whether the server is stopping.
        self._requests: set[asyncio.Task[Any]] = set()
        self._wires: set[Wire] = set()  # the WebSocket connections open now
        self.closing = False
        self.control: Router[ControlHandler] = Router()
        self._control_routes()
        self._page_routes()
        self.asgi = socketio.ASGIApp(self.rt.sio, other_asgi_app=self._http, socketio_path=SOCKETIO_PREFIX[1:])

    # ------------------------------------------------------------------ ASGI
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Top-level ASGI entry: unknown hosts refused, WebSocket upgrades and socket.io requests
        from another origin refused, the outage window for WebSockets, then socket.io or HTTP
        (every HTTP answer with the strict headers, :mod:`.guard`)."""
        if scope["type"] in ("http", "websocket") and not self.hosts.allows(Headers(scope=scope).get("host", "")):
            await refuse(scope, receive, send, 421, "Misdirected request: this emulator does not answer that host")
            return
        socket_io = scope["type"] == "http" and scope["path"].startswith(SOCKETIO_PREFIX + "/")
        if scope["type"] == "websocket" or socket_io:
            refused = socket_refusal(scope, self.hosts)
            if refused is not None:
                logger.info("%s from another origin refused (%d)",
                            "socket.io request" if socket_io else "WebSocket upgrade", refused[0])
                await refuse(scope, receive, send, *refused)
                return
        if scope["type"] == "websocket" and self.outage_until is not None and time.monotonic() < self.outage_until:
            await refuse(scope, receive, send, 503, "outage", close_code=1013)
            return
        if scope["type"] == "websocket" and (scope["path"] == MEDIA_PREFIX or scope["path"].startswith(MEDIA_PREFIX + "/")):
            if self.rt.media is None:
                await refuse(scope, receive, send, 404, "no media server: install service_client[voice]")
            else:
                await self.rt.media.serve(scope, receive, send)
            return
        if scope["type"] == "http":
            send = StrictHeaders(send).send
            if scope["path"].startswith(SOCKETIO_PREFIX + "/"):
                send = JsonErrors(send).send
        if scope["type"] == "websocket":
            wire = Wire(send)
            send = wire.send  # bulk posts write whole runs of frames (see wire.py)
            inner = receive

            async def receive() -> Any:  # drop frames Engine.IO cannot decode (they would end the connection)
                """Hand the ASGI app the buffered request body."""
                while True:
                    message = await inner()
                    if message.get("type") != "websocket.receive" or eio_frame_ok(message):
                        return message
                    logger.debug("undecodable Engine.IO frame dropped")
        if scope["type"] == "websocket":
            self._wires.add(wire)
            try:
                await self.asgi(scope, receive, send)
            finally:
                self._wires.discard(wire)
            return
        if scope["type"] != "http":
            await self.asgi(scope, receive, send)
            return
        task = asyncio.current_task()
        if task is not None:
            self._requests.add(task)
        try:
            await self.asgi(scope, receive, send)
        except asyncio.CancelledError:
            if not self.closing:
                raise
            # Stopping (close_requests): end the request quietly, its connection closed unanswered.
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            if transport is not None:
                transport.abort()
                await asyncio.sleep(0.01)  # let uvicorn see the connection lost, so it answers nothing
        finally:
            self._requests.discard(task)

    async def close_requests(self) -> None:
        """Cancel every HTTP request still being answered (a delayed fault, say): the server is
        stopping. Each ends at once with its connection closed unanswered, nothing logged. The
        WebSocket clients that have stopped reading are cut off too (:meth:`.Wire.abort_if_stalled`)."""
        self.closing = True
        if self.rt.media is not None:  # its peer connections and simulated speakers end with the server
            try:
                await asyncio.wait_for(self.rt.media.close(), 2.0)
            except Exception as exc:  # noqa: BLE001 - stopping anyway
                logger.debug("closing the media server: %s", exc)
        for task in list(self._requests):
            task.cancel()
        for wire in list(self._wires):
            wire.abort_if_stalled()

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
        refused = control_refusal(scope, self.hosts)
        if refused is not None:
            return error_response(*refused)
        request = Request(scope, receive)
        matched = self.control.match(scope["method"].upper(), split_path(rel_raw))
        if isinstance(matched, int):
            return error_response(matched, "Method not allowed" if matched == 405 else "Not found")
        handler, params = matched
        try:
            body = _Body(await read_body(request, self.bounds.max_body_bytes))
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
        await self.rt.connection_events.server_disconnect(None)
        self.rt.auto_online.clear()
        self.rt.voice.clear()
        if self.rt.media is not None:
            await self.rt.media.close()
        self.rt.journal.clear()
        self.rt.realistic_rooms = False
        self.rt.send_errors = False
        self.rt.refuse_auth = False
        self.rt.echo = "normal"
        self.rt.echo_delay_ms = 0.0
        self.rt.limits = False
        self.rt.voice_url = DEFAULT_VOICE_URL
        self.rt.voice_e2ee_key = None
        self.bounds.reset()
        self.store.reset()
        self.faults.clear()
        self.limiter.configure(None)
        self.log.clear()
        self.outage_until = None

    async def create_user(self, name: Any, bot: Any = False) -> dict[str, Any]:
        """See :meth:`Operations.create_user`."""
        return await self.ops.users.create_user(name, bot)

    async def snapshot(self) -> dict[str, Any]:
        """Every piece of stored state: sqlite rows per table plus the in-memory voice rooms."""
        voice = {cid: {uid: {k: v for k, v in entry.items() if k != "joinedAt"} for uid, entry in users.items()}
                 for cid, users in self.rt.voice.items()}
        return {"tables": self.store.dump(), "voice": voice}

    async def messages(self, cid: str) -> list[dict[str, Any]]:
        """Every stored message of a channel, chronological."""
        self.store.channels.channel_row(cid)
        return self.store.messages.messages(cid)

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
        return json_response({"users": self.store.users.users_with_tokens()})

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
        add("POST", CONTROL_POST_MESSAGE, self._c_messages)
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
        add("POST", "/voice/speak", self._c_voice_speak)
        add("POST", "/voice/recording", self._c_voice_recording)

    async def _c_reset(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.reset()
        return no_content()

    async def _c_users(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.create_user(body.get("name"), body.get("bot", False)), 201)

    async def _c_user_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        fields: dict[str, Any] = {k: body[k] for k in ("name", "tag", "image") if k in body}
        return json_response({"user": await self.ops.users.update_user(p["uid"], fields)})

    async def _c_revoke(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.users.revoke_token(p["uid"])
        return no_content()

    async def _c_presence(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        self.store.users.user_row(p["uid"])
        if "status" in body:
            if body["status"] not in ("online", "idle", "dnd", "invisible"):
                raise BadRequest("bad status")
            await self.rt.presence_events.set_presence(p["uid"], body["status"])
        if "activity" in body:
            if body["activity"] is not None and not isinstance(body["activity"], dict):
                raise BadRequest("activity must be an object or null")
            await self.rt.presence_events.set_activity(p["uid"], body["activity"])
        return no_content()

    async def _c_presence_get(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        user = self.store.users.user(p["uid"], viewer=p["uid"])
        return json_response({"status": user["status"], "activity": self.store.users.activity(p["uid"])})

    async def _c_servers(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        result = await self.ops.servers.create_server(body.get("name"), body.get("ownerId"),
                                                      categories=body.get("categories"), channels=body.get("channels"),
                                                      image_url=body.get("imageUrl"))
        return json_response(result, 201)

    async def _c_server_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.servers.update_server(p["sid"], {k: body[k] for k in ("name", "imageUrl") if k in body})
        return json_response({"server": self.store.servers.server(p["sid"])})

    async def _c_server_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.servers.delete_server(p["sid"])
        return no_content()

    async def _c_members(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.ops.members.add_member(p["sid"], body.get("userId"), body.get("roleIds")), 201)

    async def _c_member_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        if not await self.ops.members.remove_member(p["sid"], p["uid"]):
            raise NotFound("members.errors.not_found")
        return no_content()

    async def _c_member_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.members.update_member(p["sid"], p["uid"], {k: body[k] for k in ("roles", "nickname") if k in body})
        return json_response({"member": self.store.members.member(p["sid"], p["uid"])})

    async def _c_roles(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        created = await self.ops.members.create_role(p["sid"], body.get("name"), body.get("permissions", "0"),
                                                     color=body.get("color"), hoist=body.get("hoist", False))
        return json_response(created, 201)

    async def _c_role_patch(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response({"role": await self.ops.members.update_role(p["sid"], p["rid"], body)})

    async def _c_role_delete(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.members.delete_role(p["sid"], p["rid"])
        return no_content()

    async def _c_channels(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.store.servers.server_row(p["sid"])
        return json_response({"channel": await self.ops.channels.create_channel(p["sid"], b.obj())}, 201)

    async def _c_invites(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        self.store.servers.server_row(p["sid"])
        created = await self.ops.invites.create_invite(p["sid"], body.get("channelId"), body.get("inviterId"),
                                                       max_age=body.get("maxAge"), max_uses=body.get("maxUses"))
        return json_response(created, 201)

    async def _c_messages(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response(await self.ops.messages.post_message(body.get("channelId"), body.get("authorId"),
                                                                  body.get("content"), body.get("embeds")), 201)

    async def _c_messages_bulk(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        count = await self.ops.messages.post_messages(body.get("channelId"), body.get("authorId"), body.get("contents"))
        return json_response({"count": count}, 201)

    async def _c_channel_messages(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"messages": await self.messages(p["cid"])})

    async def _c_ban(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.members.ban(p["sid"], _id(body.get("userId"), "userId"), body.get("reason"))
        return no_content()

    async def _c_unban(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        await self.ops.members.unban(p["sid"], p["uid"])
        return no_content()

    async def _c_bans(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        self.store.servers.server_row(p["sid"])
        return json_response({"bans": self.store.members.bans(p["sid"])})

    async def _c_react(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        return json_response({"added": await self.react(p["mid"], _id(body.get("userId"), "userId"),
                                                        body.get("emoji"))})

    async def react(self, mid: str, uid: str, emoji: Any) -> bool:
        """Toggle a user's reaction as its ``message:react`` would (view and ADD_REACTION checked)."""
        if not isinstance(emoji, str) or not emoji.strip() or len(emoji) > 64:
            raise BadRequest("emoji must be a non-empty string of at most 64 characters")
        self.store.users.user_row(uid)
        row = self.store.messages.message_row(mid)
        if self.rt.message_events._reactable(uid, mid, "ADD_REACTION") is None:
            raise Forbidden("messages.errors.missing_permission")
        return await self.rt.message_events.toggle_reaction(row, emoji, uid)

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
        return json_response({"count": await self.rt.connection_events.drop(body.get("userId"))})

    async def _c_disconnect(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        return json_response({"count": await self.rt.connection_events.server_disconnect(body.get("userId"))})

    async def _c_emit(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.ops.extras.emit(body.get("event"), body.get("payload"), to_user=body.get("toUser"),
                                   to_server=body.get("toServer"), to_channel=body.get("toChannel"))
        return no_content()

    async def _c_emits(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        return json_response({"emits": self.rt.journal.entries()})

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
        window_ms = finite_number(body.get("windowMs", 1000), "windowMs", 0, MAX_WINDOW_MS)
        fraction = body.get("retryAfterFraction", False)
        if not isinstance(fraction, bool):
            raise BadRequest("retryAfterFraction must be a boolean")
        self.limiter.configure(body.get("limit"), window_ms / 1000.0, retry_after_fraction=fraction)
        return no_content()

    async def _c_outage(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj(optional=True)
        self.set_outage(body.get("seconds"))
        return no_content()

    def set_outage(self, seconds: Any) -> None:
        """Refuse WebSocket upgrades for ``seconds`` (a finite number in 0..86400); None lifts it.

        Raises:
            TypeError: Not a number. ValueError: NaN, an infinity, negative or over a day.
        """
        if seconds is None:
            self.outage_until = None
        else:
            self.outage_until = time.monotonic() + finite_number(seconds, "seconds", 0, MAX_OUTAGE_S)

    async def _c_settings(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        for key in ("realisticRooms", "sendErrors", "refuseAuth", "limits"):
            if key in body and not isinstance(body[key], bool):
                raise BadRequest(f"{key} must be a boolean")
        for key in ("journalEntries", "journalBodyBytes", "maxBodyBytes", "sendQueueBytes"):
            if key in body and body[key] is None:
                raise BadRequest(f"{key} must be an integer")
        voice: dict[str, Any] = {}
        if "voiceUrl" in body:
            voice["voice_url"] = body["voiceUrl"]
        if "voiceE2eeKey" in body:
            voice["voice_e2ee_key"] = body["voiceE2eeKey"] if body["voiceE2eeKey"] is not None else _CLEAR
        apply_settings(self, realistic_rooms=body.get("realisticRooms"), send_errors=body.get("sendErrors"),
                       refuse_auth=body.get("refuseAuth"), limits=body.get("limits"), echo=body.get("echo"),
                       echo_delay_ms=body.get("echoDelayMs"), journal_entries=body.get("journalEntries"),
                       journal_body_bytes=body.get("journalBodyBytes"), max_body_bytes=body.get("maxBodyBytes"),
                       send_queue_bytes=body.get("sendQueueBytes"), **voice)
        return no_content()

    async def _c_voice_join(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        ok = await self.rt.voice_events.voice_join(str(body.get("userId")), str(body.get("channelId")))
        if not ok:
            raise BadRequest("voice join refused")
        return no_content()

    async def _c_voice_leave(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        await self.rt.voice_events.voice_leave(str(body.get("userId")))
        return no_content()

    async def _c_voice_state(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        if not await self.rt.voice_events.voice_state(str(body.get("userId")), dict(body.get("state") or {})):
            raise BadRequest("user not in voice or nothing to change")
        return no_content()

    def _media(self) -> Any:
        if self.rt.media is None:
            raise HTTPError(501, "no media server: the emulator runs without service_client[voice]")
        return self.rt.media

    async def voice_speak(self, user_id: str, channel_id: str, *, tone_hz: float | None = None,
                          seconds: float = 1.0, wav: bytes | None = None) -> float:
        """Make a user in a voice channel speak there: a sine tone of ``tone_hz`` for ``seconds``,
        or a WAV file. Returns the seconds of speech queued for the user.

        Raises:
            BadRequest: The user is not in that voice channel, or a bad tone, duration or file.
            HTTPError: 501 without the media server.
        """
        media = self._media()
        if user_id not in self.rt.voice.get(channel_id, {}):
            raise BadRequest("the user is not in that voice channel")
        try:
            return float(await media.say(channel_id, user_id, tone_hz=tone_hz, seconds=seconds, wav=wav,
                                         name=self.rt.voice[channel_id][user_id].get("userName", "")))
        except (TypeError, ValueError) as exc:
            raise BadRequest(str(exc)) from None

    def voice_recording(self, channel_id: str, user_id: str) -> Any:
        """What ``user_id`` last published in a voice channel's media (a :class:`.media.tracks.Recording`),
        or None."""
        return self._media().recording(channel_id, user_id)

    async def _c_voice_speak(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        wav = body.get("wavBase64")
        raw: bytes | None = None
        if wav is not None:
            if not isinstance(wav, str):
                raise BadRequest("wavBase64 must be a string")
            try:
                raw = base64.b64decode(wav, validate=True)
            except ValueError:
                raise BadRequest("wavBase64 is not base64") from None
        queued = await self.voice_speak(_id(body.get("userId"), "userId"), _id(body.get("channelId"), "channelId"),
                                        tone_hz=body.get("toneHz"), seconds=body.get("seconds", 1.0), wav=raw)
        return json_response({"queuedSeconds": queued})

    async def _c_voice_recording(self, p: dict[str, str], b: _Body, r: Request) -> Response:
        body = b.obj()
        recording = self.voice_recording(_id(body.get("channelId"), "channelId"), _id(body.get("userId"), "userId"))
        if recording is None:
            raise NotFound("that user has published no audio in that channel")
        return Response(recording.wav(), media_type="audio/wav")


#: Longest limiter window, milliseconds (a day), and longest outage, seconds (a day).
MAX_WINDOW_MS = 86_400_000
MAX_OUTAGE_S = 86_400
#: ``apply_settings(voice_e2ee_key=_CLEAR)`` sets the key back to None (None means "unchanged").
_CLEAR = object()


def apply_settings(core: EmulatorCore, **settings: Any) -> None:
    """Check every given setting, then apply them all (all or nothing); None leaves one unchanged.

    Settings: ``realistic_rooms``, ``send_errors``, ``refuse_auth``, ``limits`` (bools), ``echo``
    (:data:`~.realtime.ECHO_MODES`), ``echo_delay_ms`` (0..600000), ``voice_url`` (str),
    ``voice_e2ee_key`` (str, or ``_CLEAR``), ``journal_entries``, ``journal_body_bytes``,
    ``max_body_bytes``, ``send_queue_bytes`` (ints, see :class:`~.journal.Bounds`).

    Raises:
        TypeError: A wrongly typed value. ValueError: A value out of range, or an unknown echo mode.
    """
    rt = core.rt
    for key in ("realistic_rooms", "send_errors", "refuse_auth", "limits"):
        value = settings.get(key)
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{key} must be a bool")
    echo, delay = settings.get("echo"), settings.get("echo_delay_ms")
    if echo is not None and echo not in ECHO_MODES:
        raise ValueError(f"echo must be one of {', '.join(ECHO_MODES)}")
    if delay is not None:
        delay = finite_number(delay, "echo_delay_ms", 0, 600_000)
    voice_url, e2ee_key = settings.get("voice_url"), settings.get("voice_e2ee_key")
    if voice_url is not None and not isinstance(voice_url, str):
        raise TypeError("voice_url must be a string")
    if e2ee_key is not None and e2ee_key is not _CLEAR and not isinstance(e2ee_key, str):
        raise TypeError("voice_e2ee_key must be a string or null")
    sizes = Bounds.check(journal_entries=settings.get("journal_entries"),
                         journal_body_bytes=settings.get("journal_body_bytes"),
                         max_body_bytes=settings.get("max_body_bytes"),
                         send_queue_bytes=settings.get("send_queue_bytes"))
    for attr in ("realistic_rooms", "send_errors", "refuse_auth", "limits", "echo", "voice_url"):
        if settings.get(attr) is not None:
            setattr(rt, attr, settings[attr])
    if delay is not None:
        rt.echo_delay_ms = delay
    if e2ee_key is not None:
        rt.voice_e2ee_key = None if e2ee_key is _CLEAR else str(e2ee_key)
    for attr, value in sizes.items():
        setattr(core.bounds, attr, value)
    core.log.trim()
    rt.journal.trim()
