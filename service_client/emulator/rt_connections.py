"""Socket connections: auth on connect, the rooms joined, disconnects and drops."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import socketio  # type: ignore[import-untyped]

from .. import endpoints
from .socket_server import (
    user_room,
)
from .store import NotFound
from .wire import Wire

if TYPE_CHECKING:
    from .realtime import Realtime

logger = logging.getLogger("service_client.emulator.realtime")


class ConnectionEvents:
    """Socket connections: auth on connect, the rooms joined, disconnects and drops.

    Given the :class:`~.realtime.Realtime` it belongs to (sessions, rooms, emits, settings, the
    other groups); runs on the emulator's loop.

    Args:
        rt: The socket side.
    """

    def __init__(self, rt: Realtime) -> None:
        self.rt = rt

    async def _on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        token = auth.get("token") if isinstance(auth, dict) else None
        uid = self.rt.store.users.user_by_token(token)
        if uid is None or self.rt.refuse_auth:
            raise socketio.exceptions.ConnectionRefusedError("Authentication failed")
        self.rt.sessions[sid] = uid
        protocol = getattr(environ.get("asgi.send"), "__self__", None)
        if isinstance(protocol, Wire):
            self.rt.wires[sid] = protocol
        transport = getattr(protocol, "transport", None)
        if transport is not None:
            self.rt.transports[sid] = transport
        await self.rt.join_user_rooms(sid, uid)
        asyncio.get_running_loop().create_task(self._after_connect(sid, uid))

    async def _after_connect(self, sid: str, uid: str) -> None:
        """Show the user online (:meth:`came_online`), then send one ``voice:state-update`` per
        non-empty voice channel of the user's servers."""
        try:
            if sid in self.rt.sessions:  # still connected
                await self.rt.presence_events.came_online(uid)
            servers = set(self.rt.store.servers.server_ids_of(uid))
            for cid, users in list(self.rt.voice.items()):
                if not users:
                    continue
                try:
                    chan = self.rt.store.channels.channel_row(cid)
                except NotFound:
                    continue
                if chan["server_id"] in servers and self.rt.store.channels.can_view(cid, uid):
                    await self.rt.emit(endpoints.ON_VOICE_STATE_UPDATE,
                                       {"channelPublicId": cid, "users": list(users.values())}, user_room(uid))
        except Exception:
            logger.debug("after-connect voice snapshot failed", exc_info=True)

    async def _on_disconnect(self, sid: str, reason: Any = None) -> None:
        uid = self.rt.sessions.pop(sid, None)
        self.rt.transports.pop(sid, None)
        self.rt.wires.pop(sid, None)
        if uid is None:
            return
        await self.rt.presence_events.went_offline(uid)
        for users in list(self.rt.voice.values()):
            entry = users.get(uid)
            if entry is not None and entry.get("socketId") == sid:
                await self.rt.voice_events.voice_leave(uid)

    async def drop(self, uid: str | None = None) -> int:
        """Close matching sockets at the transport level (no socket.io / Engine.IO close packet).

        Returns:
            The number of sockets dropped.
        """
        count = 0
        for sid in self.rt.sids_of(uid):
            transport = self.rt.transports.get(sid)
            if transport is not None:
                transport.abort()
            else:  # fall back to an engine.io abort without a close packet
                eio_sid = self.rt.sio.manager.eio_sid_from_sid(sid, "/")
                try:
                    sock = self.rt.sio.eio._get_socket(eio_sid)
                except KeyError:
                    continue
                await sock.close(wait=False, abort=True)
            count += 1
        return count

    async def server_disconnect(self, uid: str | None = None) -> int:
        """Send socket.io DISCONNECT to matching sockets; return how many."""
        sids = self.rt.sids_of(uid)
        for sid in sids:
            await self.rt.sio.disconnect(sid)
        return len(sids)
