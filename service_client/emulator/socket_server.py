"""The socket server itself: limits, the python-socketio ``AsyncServer`` made robust to bad packets, frame checks, room names."""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any

import socketio  # type: ignore[import-untyped]
from socketio import packet as sio_packet

from .send_queue import BoundedEngineServer

logger = logging.getLogger("service_client.emulator.realtime")

#: Activity types accepted by ``activity:update``; ``none`` clears.
ACTIVITY_TYPES = ("using", "browsing", "listening", "playing")
#: Voice state keys accepted by ``voice:state``: booleans, then strings.
VOICE_BOOL_KEYS = ("muted", "deafened", "speaking", "isStreaming", "isCameraOn")
VOICE_STR_KEYS = ("cameraStreamId", "screenStreamId", "cameraTrackId", "screenTrackId")
#: Placeholder media URL sent in ``voice:livekit-token`` (nothing listens there).
DEFAULT_VOICE_URL = "ws://127.0.0.1:9/livekit"
#: Echo modes for the sender's own ``message:new`` (``Emulator.configure(echo=...)``).
ECHO_MODES = ("normal", "drop", "duplicate", "delay")
#: Hard caps, always on: longer content or larger embeds are refused (never stored).
MAX_CONTENT_CHARS = 65_536
MAX_EMBEDS_JSON_CHARS = 131_072
#: Longest id, nonce or emoji accepted in a socket payload, characters.
MAX_ID_CHARS = 256
MAX_EMOJI_CHARS = 64
#: ``deleteHistory`` values of ``server:ban`` and their span in seconds.
DELETE_HISTORY_S = {"none": 0, "1d": 86_400, "7d": 7 * 86_400, "14d": 14 * 86_400, "30d": 30 * 86_400}


#: Largest Engine.IO packet accepted, bytes (python-socketio's default of 1 MB would close the
#: connection of a client that sends a ~1 MB string; the emulator refuses such events instead).
MAX_PACKET_BYTES = 16 * 1024 * 1024


#: Lifecycle event names a client may never trigger by emitting them.
RESERVED_EVENTS = frozenset({"connect", "disconnect", "connect_error"})


class AckThen:
    """A socket handler result: answer the ack with ``value`` first, then run ``after()``.

    The service answers ``server:kick`` / ``server:ban`` / ``server:unban`` with the ack first,
    *then* fans out ``server:member_removed`` / ``server:ban_revoked``.
    """

    __slots__ = ("value", "after")

    def __init__(self, value: Any, after: Any) -> None:
        self.value = value
        self.after = after


class SocketServer(socketio.AsyncServer):  # type: ignore[misc]
    """python-socketio server that survives malformed packets and supports :class:`AckThen`.

    A packet that python-socketio cannot decode (bad JSON, an event that is not a list, an
    unknown packet type) is logged at debug level and dropped; the connection stays up. Its
    Engine.IO server is a :class:`~.send_queue.BoundedEngineServer`: every socket's send queue
    is bounded.
    """

    def _engineio_server_class(self) -> type:
        return BoundedEngineServer

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
