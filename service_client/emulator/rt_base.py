"""The socket server's state and plumbing: sessions, emits (one event, or a run of ``message:new`` written whole) and rooms."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from engineio import packet as eio_packet  # type: ignore[import-untyped]
from socketio import packet as sio_packet  # type: ignore[import-untyped]

from .journal import Bounds, EmitJournal
from .send_queue import SendQueue
from .socket_server import (
    DEFAULT_VOICE_URL,
    MAX_PACKET_BYTES,
    SocketServer,
    channel_room,
    server_room,
    user_room,
)
from .store import Store
from .wire import MessageRun, RunPacket, Wire

logger = logging.getLogger("service_client.emulator.realtime")

#: A bulk post waits for a recipient whose send queue is full as long as the recipient keeps
#: reading: until it has read nothing for this long, seconds. Then the post queues its next run
#: anyway, which disconnects that recipient.
BULK_WAIT_S = 10.0


class RealtimeBase:
    """Sessions, emits and rooms (see :class:`~.realtime.Realtime`)."""

    def __init__(self, store: Store, *, ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 bounds: Bounds | None = None) -> None:
        self.store = store
        # cors_allowed_origins=[]: no CORS headers, so no page of another site reads socket.io's
        # answers (the emulator's own page is same-origin and needs none). It also turns off
        # Engine.IO's own Origin check: the core refuses other origins before socket.io sees
        # the request (guard.socket_refusal, the control plane's rule).
        self.sio = SocketServer(async_mode="asgi", cors_allowed_origins=[], logger=False,
                                 engineio_logger=False, ping_interval=ping_interval,
                                 ping_timeout=ping_timeout, transports=["websocket", "polling"],
                                 max_http_buffer_size=MAX_PACKET_BYTES)
        #: The sizes the emulator keeps to; ``send_queue_bytes`` bounds each client's send queue.
        self.bounds = bounds if bounds is not None else Bounds()
        self.sio.eio.bounds = self.bounds
        self.sio.eio.on_overflow = self._fell_behind
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
        #: The media server (:mod:`.media`), or None without the voice extra; ``media_url`` is
        #: its WebSocket URL once the emulator listens (``ws://host:port``).
        self.media: Any = None
        self.media_url: str | None = None
        # channel id -> {user id: voice user record}
        self.voice: dict[str, dict[str, dict[str, Any]]] = {}
        #: Every client emit received, a ring bounded by ``bounds`` (see :class:`~.journal.EmitJournal`).
        self.journal = EmitJournal(self.bounds)
        #: Users shown ``online`` because a socket of theirs connected while they had no chosen
        #: status (stored ``offline``); they go back to ``offline`` when their last socket goes.
        self.auto_online: set[str] = set()

    # ------------------------------------------------------------------ plumbing
    def _fell_behind(self, eio_sid: str, queued: int) -> None:
        """A client's send queue passed ``bounds.send_queue_bytes``: log why, then disconnect it
        (its transport aborted; an Engine.IO socket without one is closed without a close packet)."""
        sid = self.sio.manager.sid_from_eio_sid(eio_sid, "/")
        logger.warning("socket %s (user %s) disconnected: it fell behind, %d bytes of events queued for it "
                       "and not read (send_queue_bytes is %d)", sid or eio_sid, self.sessions.get(sid) if sid else None,
                       queued, self.bounds.send_queue_bytes)
        transport = self.transports.get(sid) if sid is not None else None
        if transport is not None:
            transport.abort()
        else:
            self.sio.eio.abort(eio_sid)

    def send_queue(self, eio_sid: str) -> SendQueue | None:
        """The send queue of an Engine.IO socket (None once it is gone)."""
        sock = self.sio.eio.sockets.get(eio_sid)
        queue = getattr(sock, "queue", None)
        return queue if isinstance(queue, SendQueue) else None


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
        with a :class:`Wire`, else as one packet per event. A bulk post may queue far more than
        a client's bound at once, so first it waits (other requests served meanwhile) for every
        recipient whose queue is at its bound, for as long as that recipient keeps reading
        (:meth:`_wait_for_readers`); one that has read nothing for :data:`BULK_WAIT_S` is
        disconnected by the run it then gets.
        """
        if not len(run):
            return
        targets = list(self.sio.manager.get_participants("/", room))
        await self._wait_for_readers(targets)
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

    async def _wait_for_readers(self, targets: list[tuple[str, str]]) -> None:
        """Wait until no ``(sid, engine.io sid)`` target's send queue is at its bound, but stop
        waiting for one that reads nothing (takes nothing from its queue, writes nothing to its
        connection) for :data:`BULK_WAIT_S` seconds."""
        def progress(sid: str, queue: SendQueue) -> tuple[int, int]:
            """How far a reader has come: (items taken from its queue, bytes written to it)."""
            wire = self.wires.get(sid)
            return queue.taken, wire.written if wire is not None else 0

        full = [(sid, q) for sid, eio_sid in targets
                if (q := self.send_queue(eio_sid)) is not None and q.nbytes >= q.bound and not q.overflowed]
        while full:
            marks = [progress(sid, q) for sid, q in full]
            await asyncio.wait([asyncio.ensure_future(q.room(BULK_WAIT_S)) for _sid, q in full])
            full = [(sid, q) for (sid, q), mark in zip(full, marks, strict=True)
                    if q.nbytes >= q.bound and not q.overflowed and progress(sid, q) != mark]

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
        for srv in self.store.servers.server_ids_of(uid):
            await self._enter(sid, server_room(srv))
        for cid in self.store.channels.visible_channel_ids(uid):
            await self._enter(sid, channel_room(cid))

    async def on_member_added(self, server_id: str, uid: str) -> None:
        """Immediate mode: a new member's sockets join the server's rooms."""
        if self.realistic_rooms:
            return
        channels = self.store.channels.visible_channel_ids_in(server_id, uid)
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
            if self.store.channels.can_view(cid, uid):
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
        channels = self.store.channels.channel_ids_of(server_id) if channel_ids is None else channel_ids
        visible: dict[str, set[str] | None] = {}
        for sid, uid in list(self.sessions.items()):
            if uid not in visible:
                visible[uid] = set(self.store.channels.visible_channel_ids_in(server_id, uid)) \
                    if self.store.members.is_member(server_id, uid) else None
            mine = visible[uid]
            if mine is None:
                continue
            for cid in channels:
                if cid in mine:
                    if not self.realistic_rooms:
                        await self._enter(sid, channel_room(cid))
                else:
                    await self._leave(sid, channel_room(cid))
