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
import base64
import binascii
import json
import logging
import secrets
import time
from collections.abc import Iterable
from typing import Any

import socketio  # type: ignore[import-untyped]
from engineio import packet as eio_packet  # type: ignore[import-untyped]
from socketio import packet as sio_packet

from .store import STATUSES, NotFound, Store
from .wire import RUN_SIZE, MessageRun, RunPacket, Wire

logger = logging.getLogger("service_client.emulator.realtime")

#: Activity types accepted by ``activity:update`` (protocol 2.3); ``none`` clears.
ACTIVITY_TYPES = ("using", "browsing", "listening", "playing")
#: Voice state keys accepted by ``voice:state`` and their types (protocol 2.3).
VOICE_BOOL_KEYS = ("muted", "deafened", "speaking", "isStreaming", "isCameraOn")
VOICE_STR_KEYS = ("cameraStreamId", "screenStreamId", "cameraTrackId", "screenTrackId")
#: Placeholder media URL sent in ``voice:livekit-token`` (nothing listens there).
DEFAULT_VOICE_URL = "ws://127.0.0.1:9/livekit"
#: Echo modes for the sender's own ``message:new`` (protocol 4.4, "Echo control").
ECHO_MODES = ("normal", "drop", "duplicate", "delay")
#: Hard caps, always on: longer content or larger embeds are refused (never stored).
MAX_CONTENT_CHARS = 65_536
MAX_EMBEDS_JSON_CHARS = 131_072
#: Longest id, nonce or emoji accepted in a socket payload, characters.
MAX_ID_CHARS = 256
MAX_EMOJI_CHARS = 64
#: Limit mode (``configure(limits=True)``): content and embed limits (protocol 3.8; all uncertain).
LIMIT_CONTENT_CHARS = 4000
LIMIT_EMBEDS = 10
LIMIT_EMBED = {"title": 256, "description": 4096, "fields": 25, "field_name": 256, "field_value": 1024,
               "footer": 2048, "author": 256, "total": 6000}
#: ``deleteHistory`` values of ``server:ban`` and their span in seconds.
DELETE_HISTORY_S = {"none": 0, "1d": 86_400, "7d": 7 * 86_400, "14d": 14 * 86_400, "30d": 30 * 86_400}


#: Largest Engine.IO packet accepted, bytes (python-socketio's default of 1 MB would close the
#: connection of a client that sends a ~1 MB string; the emulator refuses such events instead).
MAX_PACKET_BYTES = 16 * 1024 * 1024


#: Lifecycle event names a client may never trigger by emitting them.
RESERVED_EVENTS = frozenset({"connect", "disconnect", "connect_error"})


class AckThen:
    """A socket handler result: answer the ack with ``value`` first, then run ``after()``.

    Protocol 4.4: ``server:kick`` / ``server:ban`` / ``server:unban`` answer the ack, *then*
    fan out ``server:member_removed`` / ``server:ban_revoked``.
    """

    __slots__ = ("value", "after")

    def __init__(self, value: Any, after: Any) -> None:
        self.value = value
        self.after = after


class _SocketServer(socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio server that survives malformed packets and supports :class:`AckThen`.

    A packet that python-socketio cannot decode (bad JSON, an event that is not a list, an
    unknown packet type) is logged at debug level and dropped; the connection stays up.
    """

    async def _handle_eio_message(self, eio_sid: str, data: Any) -> None:
        if isinstance(data, str) and eio_sid in self._binary_packet:
            # attachments are binary frames: a text packet abandons the unfinished binary one
            self._binary_packet.pop(eio_sid, None)
        try:
            await super()._handle_eio_message(eio_sid, data)
        except Exception:  # bad input from a client must never surface as a server error
            self._binary_packet.pop(eio_sid, None)
            logger.debug("malformed socket.io packet dropped", exc_info=True)
        pending = self._binary_packet.get(eio_sid)
        if pending is not None and not pending.attachment_count:
            self._binary_packet.pop(eio_sid, None)  # a binary header announcing no attachment

    async def _handle_event_internal(self, server: Any, sid: str, eio_sid: str, data: Any, namespace: str,
                                     id: Any) -> None:
        if not isinstance(data, list) or not data or not isinstance(data[0], str) or data[0] in RESERVED_EVENTS:
            return  # an event packet must be ["name", ...] and may not fake a lifecycle event
        r = await server._trigger_event(data[0], namespace, sid, *data[1:])
        after = None
        if isinstance(r, AckThen):
            r, after = r.value, r.after
        if r is not self.not_handled and id is not None:
            payload = [] if r is None else list(r) if isinstance(r, tuple) else [r]
            await server._send_packet(eio_sid, self.packet_class(sio_packet.ACK, namespace=namespace, id=id,
                                                                 data=payload))
        if after is not None:
            try:
                await after()
            except Exception:
                logger.debug("socket fan-out after ack failed", exc_info=True)


def embed_within_limits(embed: dict[str, Any]) -> bool:
    """Whether one embed respects the limit mode of protocol 3.8 (title 256, description 4096,
    25 fields, field name 256, field value 1024, footer 2048, author 256, 6000 in all)."""
    def text(value: Any) -> str:
        """The frame's text, or None for a frame that is not text."""
        return value if isinstance(value, str) else ""

    title, description = text(embed.get("title")), text(embed.get("description"))
    raw_footer, raw_author, raw_fields = embed.get("footer"), embed.get("author"), embed.get("fields")
    footer: dict[str, Any] = raw_footer if isinstance(raw_footer, dict) else {}
    author: dict[str, Any] = raw_author if isinstance(raw_author, dict) else {}
    fields: list[Any] = raw_fields if isinstance(raw_fields, list) else []
    total = len(title) + len(description) + len(text(footer.get("text"))) + len(text(author.get("name")))
    if len(title) > LIMIT_EMBED["title"] or len(description) > LIMIT_EMBED["description"] or \
            len(text(footer.get("text"))) > LIMIT_EMBED["footer"] or \
            len(text(author.get("name"))) > LIMIT_EMBED["author"] or len(fields) > LIMIT_EMBED["fields"]:
        return False
    for f in fields:
        if not isinstance(f, dict):
            return False
        name, value = text(f.get("name")), text(f.get("value"))
        if len(name) > LIMIT_EMBED["field_name"] or len(value) > LIMIT_EMBED["field_value"]:
            return False
        total += len(name) + len(value)
    return total <= LIMIT_EMBED["total"]


_EIO_TYPES = frozenset("0123456")


def eio_frame_ok(message: dict[str, Any]) -> bool:
    """Whether an ASGI ``websocket.receive`` message carries a decodable Engine.IO packet.

    python-engineio decodes a text frame's packet type outside its error handling, so a frame
    such as ``x`` or an empty one would end the connection; the emulator drops such frames.
    """
    text = message.get("text")
    if text is None:
        return True  # binary frame: an attachment or a binary message
    if not text or (text[0] not in _EIO_TYPES and text[0] != "b"):
        return False
    if text[0] == "b":
        try:
            base64.b64decode(text[1:], validate=True)
        except (ValueError, binascii.Error):
            return False
    return True


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
        self.sio = _SocketServer(async_mode="asgi", cors_allowed_origins="*", logger=False,
                                 engineio_logger=False, ping_interval=ping_interval,
                                 ping_timeout=ping_timeout, transports=["websocket", "polling"],
                                 max_http_buffer_size=MAX_PACKET_BYTES)
        self.sessions: dict[str, str] = {}          # socket sid -> user id
        self.transports: dict[str, Any] = {}        # socket sid -> asyncio transport (for drops)
        self.wires: dict[str, Wire] = {}            # socket sid -> its websocket's Wire (bulk writes)
        self.realistic_rooms = False
        self.send_errors = False
        self.refuse_auth = False
        self.voice_url = DEFAULT_VOICE_URL
        self.echo = "normal"
        self.echo_delay_ms = 0.0
        self.limits = False
        self.ops: Any = None                        # Operations, set by Operations.__init__
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
            "message:react": self._on_message_react,
            "message:reaction_clear": self._on_reaction_clear,
            "server:kick": self._on_kick,
            "server:ban": self._on_ban,
            "server:unban": self._on_unban,
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
            """Call the socket event handler, dropping malformed input instead of raising."""
            self.journal.append({"event": name, "payload": args[0] if args else None, "sid": sid,
                                 "userId": self.sessions.get(sid), "at": time.time() * 1000.0})
            if len(self.journal) > 10_000:
                del self.journal[:5_000]
            try:
                return await handler(sid, *args)
            except Exception:  # a bad payload must never kill the connection
                logger.debug("socket event %s dropped", name, exc_info=True)
                return {"error": "servers.errors.invalid_request"} if name.startswith("server:") else None
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

    async def emit_run(self, run: MessageRun, room: str) -> None:
        """Send a run of ``message:new`` events to every socket in ``room``, in order.

        Each socket gets the run through its Engine.IO send queue, behind whatever was queued
        before: as one packet written whole (:mod:`.wire`) when its connection is a websocket
        with a :class:`Wire`, else as one packet per event.
        """
        if not len(run):
            return
        targets = self.sio.manager.get_participants("/", room)
        whole: RunPacket | None = None
        single: list[Any] | None = None
        send = self.sio.eio.send_packet
        for sid, eio_sid in targets:
            if sid in self.wires:
                whole = whole or RunPacket(run)
                await send(eio_sid, whole)
            else:
                if single is None:
                    single = [eio_packet.Packet(eio_packet.MESSAGE, text) for text in run.packets()]
                for pkt in single:
                    await send(eio_sid, pkt)

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
        channels = self.store.visible_channel_ids_in(server_id, uid)
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

    async def refresh_visibility(self, server_id: str, channel_ids: list[str] | None = None) -> None:
        """Recompute channel-room membership after a permission change (roles, overrides,
        ``isPrivate``): each member's sockets enter the rooms of the channels it may now view
        (immediate mode only) and leave the others at once.

        Args:
            server_id: The server whose channels changed.
            channel_ids: Only these channels (default: every channel of the server).
        """
        channels = self.store.channel_ids_of(server_id) if channel_ids is None else channel_ids
        visible: dict[str, set[str] | None] = {}
        for sid, uid in list(self.sessions.items()):
            if uid not in visible:
                visible[uid] = set(self.store.visible_channel_ids_in(server_id, uid)) \
                    if self.store.is_member(server_id, uid) else None
            mine = visible[uid]
            if mine is None:
                continue
            for cid in channels:
                if cid in mine:
                    if not self.realistic_rooms:
                        await self._enter(sid, channel_room(cid))
                else:
                    await self._leave(sid, channel_room(cid))

    # ------------------------------------------------------------------ connection
    async def _on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        token = auth.get("token") if isinstance(auth, dict) else None
        uid = self.store.user_by_token(token)
        if uid is None or self.refuse_auth:
            raise socketio.exceptions.ConnectionRefusedError("Authentication failed")
        self.sessions[sid] = uid
        protocol = getattr(environ.get("asgi.send"), "__self__", None)
        if isinstance(protocol, Wire):
            self.wires[sid] = protocol
        transport = getattr(protocol, "transport", None)
        if transport is not None:
            self.transports[sid] = transport
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
                if chan["server_id"] in servers and self.store.can_view(cid, uid):
                    await self.emit("voice:state-update",
                                    {"channelPublicId": cid, "users": list(users.values())}, user_room(uid))
        except Exception:
            logger.debug("after-connect voice snapshot failed", exc_info=True)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        uid = self.sessions.pop(sid, None)
        self.transports.pop(sid, None)
        self.wires.pop(sid, None)
        if uid is None:
            return
        for users in list(self.voice.values()):
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
    async def deliver_messages(self, records: list[dict[str, Any]], nonce: Any = None,
                               sender_sid: str | None = None) -> None:
        """Broadcast stored messages as ``message:new`` to their channel room (sender included).

        With ``sender_sid`` (a ``message:send``), the echo to that socket follows the echo mode:
        ``normal``, ``drop`` (not sent), ``duplicate`` (sent twice) or ``delay`` (sent
        ``echo_delay_ms`` later, the others at once).
        """
        if not records:
            return
        if len(records) == 1:
            rec = records[0]
            if nonce is not None:
                rec = dict(rec, nonce=nonce)
            room = channel_room(rec["channelPublicId"])
            if sender_sid is None or self.echo == "normal":
                await self.emit("message:new", rec, room)
                return
            in_room = any(s == sender_sid for s, _e in self.sio.manager.get_participants("/", room))
            await self.emit("message:new", rec, room, skip=[sender_sid])
            if not in_room or self.echo == "drop":
                return
            if self.echo == "duplicate":
                await self.sio.emit("message:new", rec, to=sender_sid)
                await self.sio.emit("message:new", rec, to=sender_sid)
            else:
                asyncio.get_running_loop().create_task(self._late_echo(rec, sender_sid, self.echo_delay_ms))
            return
        for rec in records:
            await self.emit("message:new", rec, channel_room(rec["channelPublicId"]))

    async def deliver_bulk(self, cid: str, ids: list[str], contents: list[str], shared: dict[str, Any]) -> None:
        """Broadcast stored messages of one bulk post as ``message:new`` to their channel room, in
        order, in runs of :data:`~.wire.RUN_SIZE` (arguments as :meth:`Store.insert_bulk` returns them)."""
        room = channel_room(cid)
        for start in range(0, len(ids), RUN_SIZE):
            await self.emit_run(MessageRun(ids[start:start + RUN_SIZE], contents[start:start + RUN_SIZE], shared),
                                room)

    async def _late_echo(self, rec: dict[str, Any], sid: str, delay_ms: float) -> None:
        await asyncio.sleep(max(0.0, delay_ms) / 1000.0)
        if sid in self.sessions:
            await self.sio.emit("message:new", rec, to=sid)

    def check_content(self, content: str, embeds: list[Any]) -> str | None:
        """Return an error key when content or embeds break the hard caps or (limit mode) the
        content and embed limits of protocol 3.8; None when acceptable."""
        if len(content) > MAX_CONTENT_CHARS:
            return "messages.errors.too_long"
        try:
            size = len(json.dumps(embeds))
        except (TypeError, ValueError):
            return "messages.errors.invalid"
        if size > MAX_EMBEDS_JSON_CHARS:
            return "messages.errors.embed_too_large"
        if not self.limits:
            return None
        if len(content) > LIMIT_CONTENT_CHARS:
            return "messages.errors.too_long"
        if len(embeds) > LIMIT_EMBEDS:
            return "messages.errors.too_many_embeds"
        for embed in embeds:
            if not embed_within_limits(embed):
                return "messages.errors.embed_limit"
        return None

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
        if nonce is not None and (not isinstance(nonce, str) or len(nonce) > MAX_ID_CHARS):
            await self._refuse(sid, None, "messages.errors.invalid")
            return
        if not isinstance(cid, str) or not isinstance(content, str) or not isinstance(embeds, list) \
                or not all(isinstance(e, dict) for e in embeds) \
                or (reply_to is not None and (not isinstance(reply_to, str) or len(reply_to) > MAX_ID_CHARS)):
            await self._refuse(sid, nonce, "messages.errors.invalid")
            return
        if not content.strip() and not embeds:
            await self._refuse(sid, nonce, "messages.errors.empty")
            return
        error = self.check_content(content, embeds)
        if error is not None:
            await self._refuse(sid, nonce, error)
            return
        if not self.may_send(cid, uid):
            await self._refuse(sid, nonce, "messages.errors.missing_permission")
            return
        records = self.store.insert_messages(cid, uid, [content], embeds, reply_to)
        await self.deliver_messages(records, nonce, sender_sid=sid)

    def may_send(self, cid: str, uid: str) -> bool:
        """Whether a user may post in a channel (DM participant, or VIEW + SEND_MESSAGES with the
        channel's overrides applied)."""
        return self.store.may_send(cid, uid)

    async def _on_message_edit(self, sid: str, data: Any = None) -> None:
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        mid, content, embeds = data.get("messagePublicId"), data.get("content"), data.get("embeds")
        if not isinstance(mid, str) or not isinstance(content, str) or \
                (embeds is not None and (not isinstance(embeds, list) or
                                         not all(isinstance(e, dict) for e in embeds))):
            return
        try:
            row = self.store.message_row(mid)
        except NotFound:
            return
        if row["author_id"] != uid or not self.store.can_view(row["channel_id"], uid) or \
                (not content.strip() and not (embeds or json.loads(row["embeds"]))) or \
                self.check_content(content, embeds or []) is not None:
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
        if not self.store.can_view(row["channel_id"], uid):
            return
        if row["author_id"] != uid and not (row["server_id"] and
                                            self.store.has_perm(row["server_id"], uid, "MANAGE_MESSAGES")):
            return
        self.store.delete_message(mid)
        await self.emit("message:deleted", {"publicId": mid, "messagePublicId": mid,
                                            "channelPublicId": row["channel_id"],
                                            "serverPublicId": row["server_id"]}, channel_room(row["channel_id"]))

    # ------------------------------------------------------------------ reactions
    def _reactable(self, uid: str, mid: Any, perm: str) -> Any:
        """The message row when ``uid`` may act on it with ``perm`` (DM participants may react
        but never clear), else None."""
        if not isinstance(mid, str) or not mid or len(mid) > MAX_ID_CHARS:
            return None
        try:
            row = self.store.message_row(mid)
        except NotFound:
            return None
        if not self.store.can_view(row["channel_id"], uid):
            return None
        if row["server_id"] is None:
            return row if perm == "ADD_REACTION" else None
        return row if self.store.has_perm(row["server_id"], uid, perm) else None

    async def _on_message_react(self, sid: str, data: Any = None) -> None:
        """``message:react {messagePublicId, emoji}``: toggle the caller's reaction, then send the
        full snapshot ``message:reaction {messagePublicId, reactions}`` to the channel room."""
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        emoji = data.get("emoji")
        if not isinstance(emoji, str) or not emoji.strip() or len(emoji) > MAX_EMOJI_CHARS:
            return
        row = self._reactable(uid, data.get("messagePublicId"), "ADD_REACTION")
        if row is None:
            return
        await self.toggle_reaction(row, emoji, uid)

    async def toggle_reaction(self, row: Any, emoji: str, uid: str) -> bool:
        """Toggle one reaction and broadcast the snapshot; return True when it was added."""
        added = self.store.toggle_reaction(row["id"], emoji, uid)
        await self.emit("message:reaction", {"messagePublicId": row["id"], "reactions": self.store.reactions(row["id"])},
                        channel_room(row["channel_id"]))
        return added

    async def _on_reaction_clear(self, sid: str, data: Any = None) -> None:
        """``message:reaction_clear {messagePublicId}`` (MANAGE_MESSAGES): remove every reaction,
        broadcast ``message:reaction_clear {messagePublicId}``."""
        uid = self.sessions.get(sid)
        if uid is None or not isinstance(data, dict):
            return
        row = self._reactable(uid, data.get("messagePublicId"), "MANAGE_MESSAGES")
        if row is None:
            return
        await self.clear_reactions(row)

    async def clear_reactions(self, row: Any) -> None:
        """Remove every reaction of a message and broadcast ``message:reaction_clear``."""
        self.store.clear_reactions(row["id"])
        await self.emit("message:reaction_clear", {"messagePublicId": row["id"]}, channel_room(row["channel_id"]))

    # ------------------------------------------------------------------ moderation (acks)
    async def _on_kick(self, sid: str, data: Any = None) -> Any:
        return await self.ops.moderate("kick", self.sessions.get(sid), data)

    async def _on_ban(self, sid: str, data: Any = None) -> Any:
        return await self.ops.moderate("ban", self.sessions.get(sid), data)

    async def _on_unban(self, sid: str, data: Any = None) -> Any:
        return await self.ops.moderate("unban", self.sessions.get(sid), data)

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
        if started is not None and (isinstance(started, bool) or not isinstance(started, int) or
                                    not 0 <= started < 2**53):
            return
        if started is None:
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

    def hidden_from(self, cid: str) -> list[str]:
        """The connected sockets whose user may not view channel ``cid`` (its voice events skip them)."""
        seen: dict[str, bool] = {}
        out = []
        for sid, uid in list(self.sessions.items()):
            if uid not in seen:
                seen[uid] = self.store.can_view(cid, uid)
            if not seen[uid]:
                out.append(sid)
        return out

    async def voice_join(self, uid: str, cid: str, sid: str | None = None) -> bool:
        """Put a user in a voice channel (leaving any other); return False if refused.

        Sends ``voice:livekit-token`` to the joiner (when ``sid`` is given, that socket, else
        the user room) and ``voice:user-joined`` to the server room (protocol 2.6), but for the
        members who may not view the channel (as ``voice:user-left`` and ``voice:user-state``).
        """
        try:
            chan = self.store.channel_row(cid)
        except NotFound:
            return False
        if chan["type"] != "VOICE" or chan["server_id"] is None or \
                not self.store.has_perm(chan["server_id"], uid, "CONNECT") or not self.store.can_view(cid, uid):
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
                        server_room(chan["server_id"]), skip=self.hidden_from(cid))
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
                        [server_room(server_id), user_room(uid)],
                        skip=[s for s in self.hidden_from(cid) if self.sessions.get(s) != uid])
        return True

    async def voice_state(self, uid: str, changes: dict[str, Any]) -> bool:
        """Merge voice state changes and broadcast ``voice:user-state``; False if not in voice."""
        cid = self.voice_channel_of(uid)
        if cid is None:
            return False
        clean: dict[str, Any] = {}
        for key, value in changes.items():
            if key in VOICE_BOOL_KEYS:
                if not isinstance(value, bool):
                    return False  # one bad field refuses the whole update
                clean[key] = value
            elif key in VOICE_STR_KEYS:
                if value is not None and (not isinstance(value, str) or len(value) > MAX_ID_CHARS):
                    return False
                clean[key] = value
        if not clean:
            return False
        self.voice[cid][uid].update(clean)
        server_id = self.store.channel_row(cid)["server_id"]
        await self.emit("voice:user-state", dict({"channelPublicId": cid, "userPublicId": uid}, **clean),
                        server_room(server_id), skip=self.hidden_from(cid))
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
