"""The emulator's socket side: python-socketio ``AsyncServer`` (ASGI), rooms and fan-out.

The socket events of the service (messages, reactions, moderation with acks, typing, presence,
activity, voice signalling), each fanned out to the rooms the service uses. Rooms are internal:
``u:<user id>`` (every socket of a user), ``s:<server id>`` (members of a server) and
``c:<channel id>`` (sockets that may view a channel, DM participants included). Everything here
runs on the emulator's event loop; nothing is thread-safe on its own (``Emulator`` hops onto the
loop).

Layout: ``socket_server.py`` (limits, the python-socketio server subclass, frame checks, room
names), then the layers of :class:`Realtime`: ``rt_base.py`` (sessions, emits, rooms),
``rt_voice.py`` (presence, activity, voice), ``rt_messages.py`` (connections, messages,
reactions, moderation) and this module (event registration).
"""

from __future__ import annotations

import logging
from typing import Any

from .. import endpoints
from .journal import Bounds
from .rt_messages import MessageEvents
from .socket_server import (
    ACTIVITY_TYPES,
    DEFAULT_VOICE_URL,
    DELETE_HISTORY_S,
    ECHO_MODES,
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    AckThen,
    channel_room,
    eio_frame_ok,
    server_room,
    user_room,
)
from .store import Store

__all__ = ["ACTIVITY_TYPES", "DEFAULT_VOICE_URL", "DELETE_HISTORY_S", "ECHO_MODES", "MAX_CONTENT_CHARS", "MAX_ID_CHARS",
           "AckThen", "Realtime", "channel_room", "eio_frame_ok", "server_room", "user_room"]

logger = logging.getLogger("service_client.emulator.realtime")


class Realtime(MessageEvents):
    """Socket.IO server of the emulator: auth on connect, rooms, socket events and fan-out.

    Not thread-safe: use it on the emulator's event loop only.

    Args:
        store: The shared state.
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.
    """

    def __init__(self, store: Store, *, ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 bounds: Bounds | None = None) -> None:
        super().__init__(store, ping_interval=ping_interval, ping_timeout=ping_timeout, bounds=bounds)
        self._register()

    def _register(self) -> None:
        sio = self.sio
        sio.on("connect", self._on_connect)
        sio.on("disconnect", self._on_disconnect)
        handlers = {
            endpoints.EMIT_MESSAGE_SEND: self._on_message_send,
            endpoints.EMIT_MESSAGE_EDIT: self._on_message_edit,
            endpoints.EMIT_MESSAGE_DELETE: self._on_message_delete,
            endpoints.EMIT_MESSAGE_REACT: self._on_message_react,
            endpoints.EMIT_MESSAGE_REACTION_CLEAR: self._on_reaction_clear,
            endpoints.EMIT_SERVER_KICK: self._on_kick,
            endpoints.EMIT_SERVER_BAN: self._on_ban,
            endpoints.EMIT_SERVER_UNBAN: self._on_unban,
            endpoints.EMIT_PRESENCE_UPDATE: self._on_presence,
            endpoints.EMIT_ACTIVITY_UPDATE: self._on_activity,
            endpoints.EMIT_TYPING_START: self._on_typing_start,
            endpoints.EMIT_TYPING_STOP: self._on_typing_stop,
            endpoints.EMIT_VOICE_JOIN: self._on_voice_join,
            endpoints.EMIT_VOICE_LEAVE: self._on_voice_leave,
            endpoints.EMIT_VOICE_STATE: self._on_voice_state,
        }
        for name, handler in handlers.items():
            sio.on(name, self._journaled(name, handler))
        sio.on("*", self._on_unknown)

    def _journaled(self, name: str, handler: Any) -> Any:
        async def wrapper(sid: str, *args: Any) -> Any:
            """Call the socket event handler, dropping malformed input instead of raising."""
            self.journal.record(name, args[0] if args else None, sid, self.sessions.get(sid))
            try:
                return await handler(sid, *args)
            except Exception:  # a bad payload must never kill the connection
                logger.debug("socket event %s dropped", name, exc_info=True)
                return {"error": "servers.errors.invalid_request"} if name.startswith("server:") else None
        return wrapper

    async def _on_unknown(self, event: str, sid: str, *args: Any) -> None:
        self.journal.record(event, args[0] if args else None, sid, self.sessions.get(sid))
