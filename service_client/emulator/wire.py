"""Bulk delivery: a run of ``message:new`` events written to a websocket as whole frames at once.

python-socketio sends every event as its own Engine.IO packet: one queue entry, one ASGI
``websocket.send``, one WebSocket frame built and one ``write`` system call per event and per
recipient. A bulk post of 20,000 messages to a channel spends most of its time there. Here a
:class:`MessageRun` (up to :data:`RUN_SIZE` messages) is encoded once, its WebSocket frames are
built once and shared by every recipient, and each recipient gets it as one write.

Order: a run travels through the recipient's Engine.IO send queue as one packet
(:class:`RunPacket`), behind everything queued before it and ahead of everything queued after
it, so a reader sees exactly the order in which the emulator emitted. Only the last step
changes: the connection's ASGI ``send`` is wrapped by a :class:`Wire`, which recognises the run
and writes its frames to the transport itself instead of handing uvicorn one frame per event.

Connections that a :class:`Wire` cannot write to directly (an Engine.IO long-polling client, a
WebSocket implementation other than uvicorn's ``websockets`` one) get the run's packets one by
one through the ordinary path, in the same order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from engineio import packet as eio_packet  # type: ignore[import-untyped]

from .. import endpoints


def _sansio() -> tuple[type | None, Any]:
    """uvicorn's default WebSocket protocol class (with the ``websockets`` package) and the
    ``websockets`` OPEN state; ``(None, None)`` without them (runs then take the ordinary path)."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
        from websockets.protocol import State
    except ImportError:  # pragma: no cover - another WebSocket implementation
        return None, None
    return WebSocketsSansIOProtocol, State.OPEN


_SANSIO_PROTOCOL, _OPEN = _sansio()

#: Messages per run: one queue entry and one write per recipient for this many events.
RUN_SIZE = 1000

_DUMPS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
#: The start of a bulk post's Socket.IO EVENT packet, up to the message's id.
_NEW_MESSAGE_HEAD = "2[" + _DUMPS(endpoints.ON_MESSAGE_NEW) + ',{"publicId":'

#: An ASGI ``send`` callable.
AsgiSend = Callable[[dict[str, Any]], Awaitable[None]]


def text_frame(payload: bytes) -> bytes:
    """One unfragmented, unmasked WebSocket text frame (RFC 6455 section 5.2) carrying ``payload``.

    Args:
        payload: UTF-8 text, at most 2**63 - 1 bytes.

    Returns:
        The frame bytes: FIN + text opcode, the 7-, 16- or 64-bit length, the payload. A server
        never masks its frames, so the same bytes serve every recipient.
    """
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 65_536:
        return b"\x81\x7e" + size.to_bytes(2, "big") + payload
    return b"\x81\x7f" + size.to_bytes(8, "big") + payload


class MessageRun:
    """Consecutive ``message:new`` events of one bulk post, encoded on first use and then shared.

    Args:
        ids: The messages' ids, in order.
        contents: Their stored (escaped) contents, same length and order.
        shared: Every other field of their Message records (identical for all of them: author,
            channel, server, time, embeds...), in record order.

    The Socket.IO packets are ``2["message:new",{"publicId":...,"content":...,<shared>}]``: the
    same record, field for field, that a single post sends.
    """

    __slots__ = ("_contents", "_frames", "_ids", "_nbytes", "_packets", "_tail")

    def __init__(self, ids: list[str], contents: list[str], shared: dict[str, Any]) -> None:
        if len(ids) != len(contents):
            raise ValueError("ids and contents differ in length")
        self._ids = ids
        self._contents = contents
        self._tail = _DUMPS(shared)[1:]  # '"author":...}' without the opening brace
        self._packets: list[str] | None = None
        self._frames: bytes | None = None
        self._nbytes: int | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def packets(self) -> list[str]:
        """The Socket.IO EVENT packets (the text after the Engine.IO ``4``), in order."""
        if self._packets is None:
            dumps = _DUMPS
            tail = self._tail
            head = _NEW_MESSAGE_HEAD
            self._packets = [head + dumps(mid) + ',"content":' + dumps(text) + ","
                             + tail + "]" for mid, text in zip(self._ids, self._contents, strict=True)]
        return self._packets

    @property
    def nbytes(self) -> int:
        """Bytes of all the run's Engine.IO message packets as UTF-8 (computed once)."""
        if self._nbytes is None:
            self._nbytes = len(self) + sum(len(text) if text.isascii() else len(text.encode("utf-8"))
                                           for text in self.packets())
        return self._nbytes

    def payloads(self) -> list[bytes]:
        """The Engine.IO message packets as UTF-8 (``4`` + Socket.IO packet), in order."""
        return [("4" + text).encode("utf-8") for text in self.packets()]

    def frames(self) -> bytes:
        """Every packet as a WebSocket text frame, concatenated (built once, for every recipient)."""
        if self._frames is None:
            self._frames = b"".join([text_frame(payload) for payload in self.payloads()])
        return self._frames


class RunPacket(eio_packet.Packet):  # type: ignore[misc]
    """An Engine.IO message packet that carries a :class:`MessageRun` through a socket's send queue.

    Queued like any packet (so it keeps its place among them); its ``encode()`` returns the run
    itself, which the connection's :class:`Wire` recognises when Engine.IO hands it over. Only
    queue it for a socket whose ASGI ``send`` is a :class:`Wire`.
    """

    def __init__(self, run: MessageRun) -> None:
        super().__init__(eio_packet.MESSAGE, data=f"<{len(run)} message:new events>")
        self.run = run

    def encode(self, b64: bool = False) -> Any:
        """Return the run (see the class docstring)."""
        return self.run


class Wire:
    """The ASGI ``send`` of one websocket connection, extended to write a :class:`MessageRun` whole.

    Pass :meth:`send` to the ASGI application in place of the server's ``send``. Every other
    message goes to the server's ``send`` unchanged.

    Args:
        send: The server's ASGI ``send`` for this connection (a bound method of its protocol).

    Attributes:
        transport: The connection's asyncio transport, or None when the server's ``send`` is not
            a bound method of a protocol with one.
        written: Messages handed on so far (a run counts one): it grows while the client reads.
    """

    __slots__ = ("_send", "protocol", "transport", "written")

    def __init__(self, send: AsgiSend) -> None:
        self._send = send
        self.protocol: Any = getattr(send, "__self__", None)
        self.transport: Any = getattr(self.protocol, "transport", None)
        self.written = 0

    async def send(self, message: dict[str, Any]) -> None:
        """ASGI ``send``: a ``websocket.send`` whose ``text`` is a :class:`MessageRun` is written
        as its frames; anything else is passed on.

        Raises:
            ConnectionResetError: The connection closed before a run could be written.
            Whatever the server's ``send`` raises for other messages.
        """
        if message.get("type") == "websocket.send":
            run = message.get("text")
            if isinstance(run, MessageRun):
                await self._write_run(run)
                self.written += 1
                return
        await self._send(message)
        self.written += 1

    def abort_if_stalled(self) -> bool:
        """Abort the connection when its client has stopped reading (uvicorn's transport paused:
        its buffer full); whether it did. For a server that is stopping: a close frame would wait
        forever behind what the client has not read, and uvicorn would cancel that wait and log
        it as an error."""
        writable = getattr(self.protocol, "writable", None)
        if isinstance(writable, asyncio.Event) and not writable.is_set() and self.transport is not None:
            self.transport.abort()
            return True
        return False

    def _direct(self) -> bool:
        """Whether the connection is served by uvicorn's ``websockets`` protocol (frames written here)."""
        return _SANSIO_PROTOCOL is not None and isinstance(self.protocol, _SANSIO_PROTOCOL)

    async def _write_run(self, run: MessageRun) -> None:
        proto: Any = self.protocol
        if self._direct():
            await proto.writable.wait()  # the transport's backpressure, as uvicorn's own send honours it
            conn = proto.conn
            if proto.disconnected or proto.close_sent or conn.state is not _OPEN:
                raise ConnectionResetError("the websocket is closed")
            if conn.extensions:  # permessage-deflate compresses each frame with the connection's context
                for payload in run.payloads():
                    conn.send_text(payload)
                proto.transport.write(b"".join(conn.data_to_send()))
            else:
                proto.transport.write(run.frames())
            return
        for text in run.packets():
            await self._send({"type": "websocket.send", "text": "4" + text})
