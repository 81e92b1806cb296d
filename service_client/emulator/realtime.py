"""The emulator's socket side: python-socketio ``AsyncServer`` (ASGI), rooms and fan-out.

Protocol: sections 2 (socket events), 2.6 (voice signalling), 4.4 (rooms, fan-out table,
test controls).

Rooms are internal: ``u:<user id>`` (every socket of a user), ``s:<server id>`` (members of a
server) and ``c:<channel id>`` (sockets that may view a channel, DM participants included).
Everything here runs on the emulator's event loop; nothing is thread-safe on its own (the
control class hops onto the loop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from typing import Any, Iterable

import socketio
from engineio import packet as eio_packet
from socketio import packet as sio_packet

from .store import STATUSES, NotFound, Store

logger = logging.getLogger("service_client.emulator.realtime")

#: Activity types accepted by ``activity:update`` (protocol 2.3); ``none`` clears.
ACTIVITY_TYPES = ("using", "browsing", "listening", "playing")
#: Voice state keys accepted by ``voice:state`` and their types (protocol 2.3).
VOICE_BOOL_KEYS = ("muted", "deafened", "speaking", "isStreaming", "isCameraOn")
VOICE_STR_KEYS = ("cameraStreamId", "screenStreamId", "cameraTrackId", "screenTrackId")
#: Placeholder media URL sent in ``voice:livekit-token`` (nothing listens there).
DEFAULT_VOICE_URL = "ws://127.0.0.1:9/livekit"


_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode_message_events(records: list[dict[str, Any]]) -> list[str]:
    """Encode ``message:new`` Socket.IO EVENT packets (``2["message:new",{...}]``) for records that
    share author, channel, time and embeds (a bulk post), serialising the shared parts once."""
    first = records[0]
    shared = {k: v for k, v in first.items() if k not in ("publicId", "content")}
    tail = _DUMPS(shared)[1:]  # '"author":...}' without the opening brace
    out = []
    for rec in records:
        out.append('2["message:new",{"publicId":' + _DUMPS(rec["publicId"]) + ',"content":'
                   + _DUMPS(rec["content"]) + "," + tail + "]")
    return out


def _ws_text_frame(payload: bytes) -> bytes:
    """One unmasked, final WebSocket text frame (RFC 6455 5.2) carrying ``payload``."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 65536:
        return bytes((0x81, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + n.to_bytes(8, "big") + payload


def _can_write_directly(protocol: Any, sock: Any) -> bool:
    """Whether frames may bypass the Engine.IO queue without reordering: a uvicorn protocol whose
    sends are plain transport writes, no extension negotiated, writable, and nothing queued."""
    if type(protocol).__name__ not in ("WebSocketsSansIOProtocol", "WSProtocol"):
        return False
    writable = getattr(protocol, "writable", None)
    transport = getattr(protocol, "transport", None)
    if writable is None or not writable.is_set() or transport is None or transport.is_closing():
        return False
    conn = getattr(protocol, "conn", None)
    if getattr(conn, "extensions", None) or getattr(conn, "_extensions", None):
        return False
    return bool(sock.upgraded) and sock.queue.empty() and transport.get_write_buffer_size() == 0


def user_room(uid: str) -> str:
    """Room of every socket of one user."""
    return f"u:{uid}"


def server_room(sid: str) -> str:
    """Room of the sockets of a server's members."""
    return f"s:{sid}"


def channel_room(cid: str) -> str:
    """Room of the sockets that may view a channel (or take part in a DM)."""
    return f"c:{cid}"


class Realtime:
    """Socket.IO server of the emulator: auth on connect, rooms, socket events and fan-out.

    Not thread-safe: use it on the emulator's event loop only.

    Args:
        store: The shared state.
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
    """

    def __init__(self, store: Store, *, ping_interval: float = 25.0, ping_timeout: float = 20.0) -> None:
        self.store = store
        self.sio = socketio.AsyncServer(async_mode="asgi", cors_allowed_origins="*", logger=False,
                                        engineio_logger=False, ping_interval=ping_interval,
                                        ping_timeout=ping_timeout, transports=["websocket", "polling"])
        self.sessions: dict[str, str] = {}          # socket sid -> user id
        self.transports: dict[str, Any] = {}        # socket sid -> asyncio transport (for drops)
        self.protocols: dict[str, Any] = {}         # socket sid -> uvicorn WebSocket protocol
        self.realistic_rooms = False
        self.send_errors = False
        self.refuse_auth = False
        self.voice_url = DEFAULT_VOICE_URL
        self.voice_e2ee_key: str | None = None
        # channel id -> {user id: voice user record}
        self.voice: dict[str, dict[str, dict[str, Any]]] = {}
        # emit journal: every client emit received
        self.journal: list[dict[str, Any]] = []
        self._register()

    # ------------------------------------------------------------------ plumbing
    def _register(self) -> None:
        sio = self.sio
        sio.on("connect", self._on_connect)
        sio.on("disconnect", self._on_disconnect)
        handlers = {
            "message:send": self._on_message_send,
            "message:edit": self._on_message_edit,
            "message:delete": self._on_message_delete,
            "presence:update": self._on_presence,
            "activity:update": self._on_activity,
            "typing:start": self._on_typing_start,
            "typing:stop": self._on_typing_stop,
            "voice:join": self._on_voice_join,
            "voice:leave": self._on_voice_leave,
            "voice:state": self._on_voice_state,
        }
        for name, handler in handlers.items():
            sio.on(name, self._journaled(name, handler))
        sio.on("*", self._on_unknown)

    def _journaled(self, name: str, handler: Any) -> Any:
        async def wrapper(sid: str, *args: Any) -> Any:
            self.journal.append({"event": name, "payload": args[0] if args else None, "sid": sid,
                                 "userId": self.sessions.get(sid), "at": time.time() * 1000.0})
            if len(self.journal) > 10_000:
                del self.journal[:5_000]
            try:
                return await handler(sid, *args)
            except Exception:  # a bad payload must never kill the connection
                logger.debug("socket event %s dropped", name, exc_info=True)
                return None
        return wrapper

    async def _on_unknown(self, event: str, sid: str, *args: Any) -> None:
        self.journal.append({"event": event, "payload": args[0] if args else None, "sid": sid,
                             "userId": self.sessions.get(sid), "at": time.time() * 1000.0})

    def participants(self, rooms: str | list[str]) -> list[str]:
        """Return the engine.io sids of every socket in one or several rooms (deduplicated)."""
        return [eio for _sid, eio in self.sio.manager.get_participants("/", rooms)]

    async def emit(self, event: str, data: Any, rooms: str | list[str], *, skip: Iterable[str] = ()) -> None:
        """Send one event to every socket in ``rooms``, encoding the packet once.

        Args:
            event: Event name.
            data: JSON payload (one argument).
            rooms: Room name or list of room names (a socket in several gets it once).
            skip: Socket sids that must not receive it.
        """
        if isinstance(rooms, list) and not rooms:
            return
        skip_set = set(skip)
        targets = [(s, e) for s, e in self.sio.manager.get_participants("/", rooms) if s not in skip_set]
        if not targets:
            return
        pkt = self.sio.packet_class(sio_packet.EVENT, namespace="/", data=[event, data])
        encoded = pkt.encode()
        eio_pkt = eio_packet.Packet(eio_packet.MESSAGE, encoded)
        send = self.sio.eio.send_packet
        for _s, eio_sid in targets:
            await send(eio_sid, eio_pkt)

    async def emit_encoded(self, frames: list[str], room: str) -> None:
        """Send pre-encoded Socket.IO event packets (text after the Engine.IO ``4``) to a room, in order.

        Bulk fast path: when a socket's Engine.IO queue is empty and its WebSocket is writable,
        the frames are written to the transport in one write (same bytes the Engine.IO writer
        would produce); otherwise they go through the Engine.IO queue.
        """
        targets = [(s, e) for s, e in self.sio.manager.get_participants("/", room)]
        if not targets or not frames:
            return
        for sid, eio_sid in targets:
            try:
                sock = self.sio.eio._get_socket(eio_sid)
            except KeyError:
                continue
            if sock.closed or sock.closing:
                continue
            protocol = self.protocols.get(sid)
            if protocol is not None and _can_write_directly(protocol, sock):
                protocol.transport.write(b"".join(_ws_text_frame(b"4" + f.encode("utf-8")) for f in frames))
                continue
            for frame in frames:
                sock.queue.put_nowait(eio_packet.Packet(eio_packet.MESSAGE, frame))

    def sids_of(self, uid: str | None = None) -> list[str]:
        """Return the socket sids of one user (every connected socket when ``uid`` is None)."""
        return [s for s, u in list(self.sessions.items()) if uid is None or u == uid]

    def connection_count(self) -> int:
        """Number of connected (authenticated) socket.io clients."""
        return len(self.sessions)

    # ------------------------------------------------------------------ rooms
    async def _enter(self, sid: str, room: str) -> None:
        await self.sio.enter_room(sid, room)

    async def _leave(self, sid: str, room: str) -> None:
        await self.sio.leave_room(sid, room)

    async def join_user_rooms(self, sid: str, uid: str) -> None:
        """Put a socket in its user room, server rooms and visible channel rooms."""
        await self._enter(sid, user_room(uid))
        for srv in self.store.server_ids_of(uid):
            await self._enter(sid, server_room(srv))
        for cid in self.store.visible_channel_ids(uid):
            await self._enter(sid, channel_room(cid))

    async def on_member_added(self, server_id: str, uid: str) -> None:
        """Immediate mode: a new member's sockets join the server's rooms."""
        if self.realistic_rooms:
            return
        channels = self.store.channel_ids_of(server_id) if self.store.has_perm(server_id, uid, "VIEW_CHANNELS") \
            else []
        for sid in self.sids_of(uid):
            await self._enter(sid, server_room(server_id))
            for cid in channels:
                await self._enter(sid, channel_room(cid))

    async def on_member_removed(self, server_id: str, uid: str, channel_ids: list[str]) -> None:
        """A removed member's sockets leave the server's rooms (always immediate)."""
        for sid in self.sids_of(uid):
            await self._leave(sid, server_room(server_id))
            for cid in channel_ids:
                await self._leave(sid, channel_room(cid))

    async def on_channel_created(self, server_id: str, cid: str) -> None:
        """Immediate mode: members who may view a new channel join its room."""
        if self.realistic_rooms:
            return
        for sid, uid in list(self.sessions.items()):
            if self.store.can_view(cid, uid):
                await self._enter(sid, channel_room(cid))

    async def on_dm_opened(self, cid: str, users: list[str]) -> None:
        """Both participants of a DM join its room (always, a DM is personal)."""
        for uid in users:
            for sid in self.sids_of(uid):
                await self._enter(sid, channel_room(cid))

    async def refresh_visibility(self, server_id: str) -> None:
        """Recompute channel-room membership for a server after a permission change."""
        channels = self.store.channel_ids_of(server_id)
        for sid, uid in list(self.sessions.items()):
            if not self.store.is_member(server_id, uid):
                continue
            view = self.store.has_perm(server_id, uid, "VIEW_CHANNELS")
            for cid in channels:
                if view and not self.realistic_rooms:
                    await self._enter(sid, channel_room(cid))
                elif not view:
                    await self._leave(sid, channel_room(cid))

    # ------------------------------------------------------------------ connection
    async def _on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        token = auth.get("token") if isinstance(auth, dict) else None
        uid = self.store.user_by_token(token)
        if uid is None or self.refuse_auth:
            raise socketio.exceptions.ConnectionRefusedError("Authentication failed")
        self.sessions[sid] = uid
        send = environ.get("asgi.send")
        transport = getattr(getattr(send, "__self__", None), "transport", None)
        if transport is not None:
            self.transports[sid] = transport
            self.protocols[sid] = send.__self__
        await self.join_user_rooms(sid, uid)
        asyncio.get_running_loop().create_task(self._after_connect(sid, uid))

    async def _after_connect(self, sid: str, uid: str) -> None:
        """Send one ``voice:state-update`` per non-empty voice channel of the user's servers."""
        try:
            servers = set(self.store.server_ids_of(uid))
            for cid, users in list(self.voice.items()):
                if not users:
                    continue
                try:
                    chan = self.store.channel_row(cid)
                except NotFound:
                    continue
                if chan["server_id"] in servers:
                    await self.emit("voice:state-update",
                                    {"channelPublicId": cid, "users": list(users.values())}, user_room(uid))
        except Exception:
            logger.debug("after-connect voice snapshot failed", exc_info=True)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        uid = self.sessions.pop(sid, None)
        self.transports.pop(sid, None)
        self.protocols.pop(sid, None)
        if uid is None:
            return
        for cid, users in list(self.voice.items()):
            entry = users.get(uid)
            if entry is not None and entry.get("socketId") == sid:
                await self.voice_leave(uid)

    async def drop(self, uid: str | None = None) -> int:
        """Close matching sockets at the transport level (no socket.io / Engine.IO close packet).

        Returns:
            The number of sockets dropped.
        """
        count = 0
        for sid in self.sids_of(uid):
            transport = self.transports.get(sid)
            if transport is not None:
                transport.abort()
            else:  # fall back to an engine.io abort without a close packet
                eio_sid = self.sio.manager.eio_sid_from_sid(sid, "/")
                try:
                    sock = self.sio.eio._get_socket(eio_sid)
                except KeyError:
                    continue
                await sock.close(wait=False, abort=True)
            count += 1
        return count

    async def server_disconnect(self, uid: str | None = None) -> int:
        """Send socket.io DISCONNECT to matching sockets; return how many."""
        sids = self.sids_of(uid)
        for sid in sids:
            await self.sio.disconnect(sid)
        return len(sids)

    # ------------------------------------------------------------------ messages
    async def deliver_messages(self, records: list[dict[str, Any]], nonce: Any = None) -> None:
        """Broadcast stored messages as ``message:new`` to their channel room (sender included)."""
        if not records:
            return
        if len(records) == 1:
            rec = records[0]
            if nonce is not None:
                rec = dict(rec, nonce=nonce)
            await self.emit("message:new", rec, channel_room(rec["channelPublicId"]))
            return
        await self.emit_encoded(encode_message_events(records), channel_room(records[0]["channelPublicId"]))

    async def _refuse(self, sid: str, nonce: Any, error: str) -> None:
        if self.send_errors:
            await self.sio.emit("message:error", {"nonce": nonce, "error": error}, to=sid)

    async def _on_message_send(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        nonce = data.get("nonce")
        cid = data.get("channelPublicId")
        content = data.get("content", "")
        embeds = data.get("embeds", [])
        reply_to = data.get("replyToId")
        if content is None:
            content = ""
        if embeds is None:
            embeds = []
        if not isinstance(cid, str) or not isinstance(content, str) or not isinstance(embeds, list) \
                or not all(isinstance(e, dict) for e in embeds) \
                or (reply_to is not None and not isinstance(reply_to, str)):
            await self._refuse(sid, nonce, "messages.errors.invalid")
            return
        if not content.strip() and not embeds:
            await self._refuse(sid, nonce, "messages.errors.empty")
            return
        if not self.may_send(cid, uid):
            await self._refuse(sid, nonce, "messages.errors.missing_permission")
            return
        records = self.store.insert_messages(cid, uid, [content], embeds, reply_to)
        await self.deliver_messages(records, nonce)

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel (DM participant, or VIEW + SEND_MESSAGES)."""
        try:
            chan = self.store.channel_row(cid)
        except NotFound:
            return False
        if chan["server_id"] is None:
            return uid in self.store.dm_participants(cid)
        perms = self.store.permissions(chan["server_id"], uid)
        return bool(perms & 512) and bool(perms & 1024)

    async def _on_message_edit(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        mid, content, embeds = data.get("messagePublicId"), data.get("content"), data.get("embeds")
        if not isinstance(mid, str) or not isinstance(content, str) or \
                (embeds is not None and not isinstance(embeds, list)):
            return
        try:
            row = self.store.message_row(mid)
        except NotFound:
            return
        if row["author_id"] != uid or (not content.strip() and not (embeds or [])):
            return
        rec = self.store.edit_message(mid, content, embeds)
        await self.emit("message:updated", rec, channel_room(rec["channelPublicId"]))

    async def _on_message_delete(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("messagePublicId"), str):
            return
        mid = data["messagePublicId"]
        try:
            row = self.store.message_row(mid)
        except NotFound:
            return
        if row["author_id"] != uid and not (row["server_id"] and
                                            self.store.has_perm(row["server_id"], uid, "MANAGE_MESSAGES")):
            return
        self.store.delete_message(mid)
        await self.emit("message:deleted", {"publicId": mid, "messagePublicId": mid,
                                            "channelPublicId": row["channel_id"],
                                            "serverPublicId": row["server_id"]}, channel_room(row["channel_id"]))

    async def _typing(self, sid: str, data: Any, event: str) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, str) or not self.store.can_view(data, uid):
            return
        user = self.store.user(uid)
        await self.emit(event, {"channelPublicId": data, "userPublicId": uid, "userName": user["name"]},
                        channel_room(data), skip=[sid])

    async def _on_typing_start(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, "typing:start")

    async def _on_typing_stop(self, sid: str, data: Any = None) -> None:
        await self._typing(sid, data, "typing:stop")

    # ------------------------------------------------------------------ presence
    def presence_rooms(self, uid: str) -> list[str]:
        """The rooms a user's presence and activity go to: its server rooms and its own room."""
        return [server_room(s) for s in self.store.server_ids_of(uid)] + [user_room(uid)]

    async def set_presence(self, uid: str, status: str) -> None:
        """Store a status and broadcast ``presence:update`` (``invisible`` shown as ``offline``)."""
        self.store.set_status(uid, status)
        shown = "offline" if status == "invisible" else status
        await self.emit("presence:update", {"userPublicId": uid, "status": shown}, self.presence_rooms(uid))

    async def _on_presence(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or data.get("status") not in STATUSES:
            return
        await self.set_presence(uid, data["status"])

    async def set_activity(self, uid: str, activity: dict[str, Any] | None) -> None:
        """Store an activity (None clears) and broadcast ``activity:update``."""
        self.store.set_activity(uid, activity)
        await self.emit("activity:update", {"userPublicId": uid, "activity": activity}, self.presence_rooms(uid))

    async def _on_activity(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        kind = data.get("type")
        if kind == "none":
            await self.set_activity(uid, None)
            return
        name = data.get("name", "")
        details = data.get("details")
        started = data.get("startedAt")
        if kind not in ACTIVITY_TYPES or not isinstance(name, str) or \
                (details is not None and not isinstance(details, str)):
            return
        if started is None or isinstance(started, bool) or not isinstance(started, (int, float)):
            started = int(time.time() * 1000)
        activity: dict[str, Any] = {"type": kind, "name": name[:128]}
        if details is not None:
            activity["details"] = details[:64]
        activity["startedAt"] = int(started)
        await self.set_activity(uid, activity)

    # ------------------------------------------------------------------ voice
    def _voice_user(self, uid: str, sid: str | None) -> dict[str, Any]:
        user = self.store.user(uid)
        return {"userPublicId": uid, "userName": user["name"], "userTag": user["tag"], "userImage": user["image"],
                "socketId": sid, "muted": False, "deafened": False, "speaking": False,
                "joinedAt": int(time.time() * 1000), "isStreaming": False, "isCameraOn": False}

    def voice_channel_of(self, uid: str) -> str | None:
        """Return the voice channel a user is in, else None."""
        for cid, users in self.voice.items():
            if uid in users:
                return cid
        return None

    async def voice_join(self, uid: str, cid: str, sid: str | None = None) -> bool:
        """Put a user in a voice channel (leaving any other); return False if refused.

        Sends ``voice:livekit-token`` to the joiner (when ``sid`` is given, that socket, else
        the user room) and ``voice:user-joined`` to the server room (protocol 2.6).
        """
        try:
            chan = self.store.channel_row(cid)
        except NotFound:
            return False
        if chan["type"] != "VOICE" or chan["server_id"] is None or \
                not self.store.has_perm(chan["server_id"], uid, "CONNECT"):
            return False
        current = self.voice_channel_of(uid)
        if current is not None and current != cid:
            await self.voice_leave(uid)
        users = self.voice.setdefault(cid, {})
        entry = users.get(uid) or self._voice_user(uid, sid)
        entry["socketId"] = sid
        users[uid] = entry
        token = secrets.token_urlsafe(32)
        creds = {"channelPublicId": cid, "token": token, "url": self.voice_url, "e2eeKey": self.voice_e2ee_key}
        if sid is not None:
            await self.sio.emit("voice:livekit-token", creds, to=sid)
        else:
            await self.emit("voice:livekit-token", creds, user_room(uid))
        await self.emit("voice:user-joined", {"channelPublicId": cid, "user": entry, "users": list(users.values())},
                        server_room(chan["server_id"]))
        return True

    async def voice_leave(self, uid: str) -> bool:
        """Take a user out of its voice channel; broadcast ``voice:user-left``. False if not in one."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        users = self.voice[cid]
        users.pop(uid, None)
        if not users:
            self.voice.pop(cid, None)
        try:
            server_id = self.store.channel_row(cid)["server_id"]
        except NotFound:
            return True
        await self.emit("voice:user-left", {"channelPublicId": cid, "userPublicId": uid, "users": list(users.values())},
                        server_room(server_id))
        return True

    async def voice_state(self, uid: str, changes: dict[str, Any]) -> bool:
        """Merge voice state changes and broadcast ``voice:user-state``; False if not in voice."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        clean: dict[str, Any] = {}
        for key, value in changes.items():
            if key in VOICE_BOOL_KEYS and isinstance(value, bool):
                clean[key] = value
            elif key in VOICE_STR_KEYS and (value is None or isinstance(value, str)):
                clean[key] = value
        if not clean:
            return False
        self.voice[cid][uid].update(clean)
        server_id = self.store.channel_row(cid)["server_id"]
        await self.emit("voice:user-state", dict({"channelPublicId": cid, "userPublicId": uid}, **clean),
                        server_room(server_id))
        return True

    async def _on_voice_join(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict) or not isinstance(data.get("channelPublicId"), str):
            return
        await self.voice_join(uid, data["channelPublicId"], sid)

    async def _on_voice_leave(self, sid: str, *args: Any) -> None:
        uid = self.sessions.get(sid)
        if uid is not None:
            await self.voice_leave(uid)

    async def _on_voice_state(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is not None and isinstance(data, dict):
            await self.voice_state(uid, data)
