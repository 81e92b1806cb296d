"""The emulator's socket side: python-socketio ``AsyncServer`` (ASGI), rooms and fan-out.

The socket events of the service (messages, reactions, moderation with acks, typing, presence,
activity, voice signalling), each fanned out to the rooms the service uses. Rooms are internal:
``u:<user id>`` (every socket of a user), ``s:<server id>`` (members of a server) and
``c:<channel id>`` (sockets that may view a channel, DM participants included). Everything here
runs on the emulator's event loop; nothing is thread-safe on its own (``Emulator`` hops onto the
loop).

Layout: ``socket_server.py`` (limits, the python-socketio server subclass, frame checks, room
names), ``rt_base.py`` (sessions, emits, rooms: the base of :class:`Realtime`), then one group
of event handlers per entity, each given the :class:`Realtime` it belongs to:
``rt_connections.py`` (connect, disconnect, drops), ``rt_messages.py`` (messages, reactions,
typing), ``rt_moderation.py`` (kick, ban, unban), ``rt_presence.py`` (presence, activity) and
``rt_voice.py`` (voice signalling); this module builds them and registers their handlers.
"""

from __future__ import annotations

import logging
from typing import Any

from .journal import Bounds
from .rt_base import RealtimeBase
from .rt_connections import ConnectionEvents
from .rt_messages import MessageEvents
from .rt_moderation import ModerationEvents
from .rt_presence import PresenceEvents
from .rt_voice import VoiceEvents
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


class Realtime(RealtimeBase):
    """Socket.IO server of the emulator: auth on connect, rooms, socket events and fan-out.

    Not thread-safe: use it on the emulator's event loop only.

    Args:
        store: The shared state.
        ping_interval: Engine.IO ping interval, seconds.
        ping_timeout: Engine.IO ping timeout, seconds.

    Attributes:
        connection_events, message_events, moderation_events, presence_events, voice_events:
            The groups of event handlers (``rt.voice_events.voice_join(...)``).
    """

    def __init__(self, store: Store, *, ping_interval: float = 25.0, ping_timeout: float = 20.0,
                 bounds: Bounds | None = None) -> None:
        super().__init__(store, ping_interval=ping_interval, ping_timeout=ping_timeout, bounds=bounds)
        self.connection_events = ConnectionEvents(self)
        self.message_events = MessageEvents(self)
        self.moderation_events = ModerationEvents(self)
        self.presence_events = PresenceEvents(self)
        self.voice_events = VoiceEvents(self)
        self._register()

    def _register(self) -> None:
        sio = self.sio
        sio.on("connect", self.connection_events._on_connect)
        sio.on("disconnect", self.connection_events._on_disconnect)
        handlers = {**self.message_events.handlers(), **self.moderation_events.handlers(),
                    **self.presence_events.handlers(), **self.voice_events.handlers()}
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
