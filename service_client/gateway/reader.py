"""The socket's frame reader: WebSocket messages from the raw socket through one buffer.

websocket-client performs the HTTP upgrade and the writes; frames are read
here instead (websocket-client's own reader makes three ``recv`` system calls
and a dozen Python calls per frame). :class:`FrameReader` reads up to 256 KiB
at a time and parses frame headers in place (RFC 6455 section 5.2: server
frames unmasked, fragments reassembled, pings answered, close reported).

:meth:`FrameReader.recv_batch` hands the reader thread every message already
buffered at once, so the per-message cost is one header parse and one copy.
The reader thread's loop decodes a default-namespace Socket.IO EVENT frame
straight from its bytes, with the fast decoder of :mod:`.decoder` when there
is one, else :func:`standard_loads`.
"""

from __future__ import annotations

import json
import logging
import selectors
import socket
import struct
import time
from collections.abc import Callable
from typing import Any, Final

import websocket

from .. import events
from .._defaults import DESTROY_JOIN_S
from . import decoder, framing
from .framing import AckPacket, DisconnectPacket, EnginePacket, EngineType, EventPacket, FramingError
from .parts import (
    _TIMEOUT_ERRORS,
    _TRANSPORT_ERRORS,
    REASON_IO_SERVER_DISCONNECT,
    REASON_PING_TIMEOUT,
    REASON_TRANSPORT_CLOSE,
    REASON_TRANSPORT_ERROR,
    _callback,
    _Link,
    _log,
    _short,
)

__all__ = [
    "MAX_MESSAGE",
    "MIN_MESSAGE_CAP",
    "BinaryMessage",
    "ConnectionReader",
    "FrameReader",
    "MessageTooLargeError",
    "message_cap",
    "standard_loads",
]

#: Returned by ``_read_one`` when reading goes on (compared by identity; never a loss reason).
_GO_ON: Final = "\x00go on"

#: Waits for a socket to be readable: poll() where there is one, else select() (Windows).
_Selector: Final[type[selectors.BaseSelector]] = getattr(selectors, "PollSelector", selectors.SelectSelector)

#: Bytes asked of the socket per read.
READ_CHUNK: Final = 256 * 1024
#: Largest message ever accepted from the server, bytes (a bound against a hostile peer): the
#: cap of a connection whose server announces no ``maxPayload``, and the ceiling of any cap.
MAX_MESSAGE: Final = 64 * 1024 * 1024
#: Smallest message cap, bytes: a server announcing a smaller ``maxPayload`` still gets this much
#: (and the reader's inline path, which takes frames of up to 65,535 bytes, needs no check).
MIN_MESSAGE_CAP: Final = 64 * 1024

_DATA_OPCODES: Final = frozenset((0, 1, 2, 8, 9, 10))

#: Frames in a row an event's own decoder may refuse (each then decoded the general way)
#: before a connection stops trying it (see ``GatewayConnection``'s ``frame_decoders``).
TYPED_REFUSALS_MAX: Final = 64

#: A frame's first byte, its second byte and the 16-bit length that may follow them.
_head: Final[Callable[[bytearray, int], tuple[int, int, int]]] = struct.Struct("!BBH").unpack_from

#: The standard library's JSON scanner without its Python wrapper (``raw_decode`` minus the
#: leading-space skip, which an event's JSON, starting with its ``[``, does not need):
#: ``(value, end)``, or StopIteration (no value at the offset), ValueError (malformed JSON).
_scan_once: Final[Callable[[str, int], tuple[Any, int]]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def message_cap(max_payload: int) -> int:
    """The largest message accepted on a connection whose open packet announced ``max_payload``.

    The server's ``maxPayload`` (the largest message it accepts) bounds what it
    is trusted to send, within :data:`MIN_MESSAGE_CAP` and :data:`MAX_MESSAGE`.

    Args:
        max_payload: The open packet's ``maxPayload``, bytes (0 when not announced).

    Returns:
        The cap in bytes: :data:`MAX_MESSAGE` when ``max_payload`` is 0, else
        ``max_payload`` clamped to ``[MIN_MESSAGE_CAP, MAX_MESSAGE]``.
    """
    if max_payload <= 0:
        return MAX_MESSAGE
    return max(MIN_MESSAGE_CAP, min(max_payload, MAX_MESSAGE))


class MessageTooLargeError(websocket.WebSocketProtocolException):
    """A message (one frame, or the fragments of one message together) over the reader's cap.

    The message is not read: the connection cannot go on past it.
    """


class BinaryMessage(bytes):
    """A binary WebSocket message as :meth:`FrameReader.recv_batch` returns it.

    Text messages come back as plain ``bytes`` (their UTF-8, not yet
    decoded); a binary one is this subclass, so ``type(m) is bytes`` tells a
    text message.
    """

    __slots__ = ()


class FrameReader:
    """Reads the server's WebSocket messages from the raw socket through one buffer.

    A timeout keeps the partial frame buffered, so a later call resumes where
    it stopped.

    Two bounds hold against a hostile server: a message's size (one frame, or
    a fragmented message's frames together) is capped (``max_message``), and,
    once :meth:`set_silence` gave a bound, every wait for a message ends with
    ``TimeoutError`` when no complete message came within it, however the
    bytes trickle in (bytes of an unfinished frame, and control frames, do
    not count as hearing from the server). Fragments are reassembled in time
    linear in their number.

    Not thread-safe: only the thread that owns the connection reads.

    Args:
        sock: The connected socket (its timeout bounds each blocking read
            until :meth:`set_silence` is called).
        on_control: Called with ``(opcode, payload)`` for a ping (9: answer
            it) or a close frame (8: echo it), on the reading thread.
        max_message: The largest message accepted, bytes (see
            :meth:`set_max_message`).
    """

    __slots__ = (
        "_buf",
        "_deadline",
        "_max_message",
        "_on_control",
        "_opcode",
        "_parts",
        "_poller",
        "_pos",
        "_silence",
        "_size",
        "_sock",
    )

    def __init__(
        self, sock: socket.socket, on_control: Callable[[int, bytes], None], *, max_message: int = MAX_MESSAGE
    ) -> None:
        self._sock = sock
        self._buf = bytearray()
        self._pos = 0
        self._parts: list[bytes] = []
        #: Bytes of the fragmented message being reassembled (its parts' total).
        self._size = 0
        self._opcode = 0
        self._on_control = on_control
        self._max_message = MAX_MESSAGE
        #: The silence bound, seconds (0.0: none, each read waits the socket's timeout).
        self._silence = 0.0
        #: When the current wait for a message ends (monotonic), 0.0 before its first read.
        self._deadline = 0.0
        self._poller: selectors.BaseSelector | None = None
        self.set_max_message(max_message)

    def set_max_message(self, size: int) -> None:
        """Cap the size of every message read from now on.

        A frame whose length is over the cap, or a fragment that brings its
        message over it, raises :class:`MessageTooLargeError` when it is
        reached, before its payload is read.

        Args:
            size: The largest message accepted, bytes (at least
                :data:`MIN_MESSAGE_CAP`, at most :data:`MAX_MESSAGE`).

        Raises:
            ValueError: ``size`` is outside ``[MIN_MESSAGE_CAP, MAX_MESSAGE]``.
        """
        if not MIN_MESSAGE_CAP <= size <= MAX_MESSAGE:
            raise ValueError(f"size must be in [{MIN_MESSAGE_CAP}, {MAX_MESSAGE}] bytes, got {size!r}")
        self._max_message = size

    def set_silence(self, seconds: float) -> None:
        """Bound every wait for a message by ``seconds`` from its start.

        Sets the socket's timeout to ``seconds`` (the first read of a wait
        relies on it); further reads of the same wait, while an unfinished
        frame or message is buffered, wait only for the time left. A wait
        past the bound raises ``TimeoutError``.

        Args:
            seconds: The bound, > 0 (the heartbeat's pingInterval + pingTimeout).

        Raises:
            ValueError: ``seconds`` is not positive.
        """
        if not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds!r}")
        self._sock.settimeout(seconds)
        self._silence = seconds

    def _fill(self, need: int) -> None:
        """Block until ``need`` bytes are buffered past the read position."""
        buf = self._buf
        if self._pos:
            del buf[: self._pos]
            self._pos = 0
        recv = self._sock.recv
        while len(buf) < need:
            if self._silence:
                if self._deadline:
                    self._await_bytes()
                else:  # the first read of a wait for a message: the socket's timeout is the bound
                    self._deadline = time.monotonic() + self._silence
            chunk = recv(READ_CHUNK)
            if not chunk:
                raise websocket.WebSocketConnectionClosedException("connection closed by the peer")
            buf += chunk

    def _await_bytes(self) -> None:
        """Wait until the socket is readable, at most until the current wait for a message ends.

        Called before every read of a wait but its first, which started the
        wait's clock (see :meth:`_fill`).

        Raises:
            TimeoutError: The wait's bound has passed.
        """
        remaining = self._deadline - time.monotonic()
        if remaining > 0:
            sock = self._sock
            pending = getattr(sock, "pending", None)  # TLS: bytes already decrypted
            if pending is not None and pending():
                return
            poller = self._poller
            if poller is None:
                poller = self._poller = _Selector()
                poller.register(sock, selectors.EVENT_READ)
            if poller.select(remaining):
                return
        raise TimeoutError(f"no complete message within {self._silence:g} s")

    def recv(self) -> str | bytes:
        """The next message: str for text, bytes for binary.

        Raises:
            websocket.WebSocketConnectionClosedException: EOF or a close frame.
            websocket.WebSocketProtocolException: A frame breaking RFC 6455.
            TimeoutError: The socket timeout, or the silence bound, passed
                (partial data is kept).
            UnicodeDecodeError: A text message that is not UTF-8 (consumed).
            OSError: The socket failed.
            MessageTooLargeError: A message over the cap (see :meth:`set_max_message`).
        """
        self._deadline = 0.0
        message = self._take(True)
        assert message is not None
        if type(message) is bytes:
            return message.decode("utf-8")
        return bytes(message)

    def recv_batch(self) -> list[bytes]:
        """Wait for the next message, then take every further message already buffered.

        Only the first message may wait for the socket; the rest are those
        whose bytes are already read. A frame that would raise (a close, a
        protocol violation) ends the batch unread when messages were already
        taken: the next call raises for it, so no message before it is lost.

        Returns:
            One message or more, in arrival order: a text message as ``bytes``
            (its UTF-8, not validated), a binary one as :class:`BinaryMessage`.

        Raises:
            websocket.WebSocketConnectionClosedException: EOF or a close frame.
            websocket.WebSocketProtocolException: A frame breaking RFC 6455.
            TimeoutError: The socket timeout, or the silence bound, passed
                (partial data is kept).
            OSError: The socket failed.
            MessageTooLargeError: A message over the cap (see :meth:`set_max_message`).
        """
        self._deadline = 0.0
        first = self._take(True)
        assert first is not None
        out = [first]
        take = self._take
        buf = self._buf
        append = out.append
        while True:
            if not self._parts:
                # The common frame inline: a final, unmasked text frame under 64 KiB, copied
                # once (through a view of the buffer, released before the buffer changes).
                pos = self._pos
                size = len(buf)
                with memoryview(buf) as view:
                    # The first four bytes in one call (a bytearray's index is a generic
                    # lookup); a message whose frame is shorter than four bytes and is the
                    # last one buffered goes the general way below.
                    while pos + 4 <= size:
                        flags, length, extended = _head(buf, pos)
                        if flags != 0x81:  # FIN, text
                            break
                        if length < 126:
                            start = pos + 2
                        elif length == 126:
                            length = extended
                            start = pos + 4
                        else:
                            break
                        end = start + length
                        if end > size:
                            break
                        append(view[start:end].tobytes())
                        pos = end
                self._pos = pos
            message = take(False)
            if message is None:
                return out
            append(message)

    def _take(self, block: bool) -> bytes | None:
        """The next message (text as bytes, binary as BinaryMessage).

        With ``block`` False: None instead of reading the socket, and None
        (nothing consumed) instead of raising.
        """
        while True:
            buf = self._buf
            pos = self._pos
            avail = len(buf) - pos
            if avail < 2:
                if not block:
                    return None
                self._fill(2)
                continue
            b0 = buf[pos]
            b1 = buf[pos + 1]
            length = b1 & 0x7F
            head = 2
            if length >= 126:
                head = 4 if length == 126 else 10
                if avail < head:
                    if not block:
                        return None
                    self._fill(head)
                    continue
                length = int.from_bytes(buf[pos + 2 : pos + head], "big")
                if length > self._max_message:  # a shorter length is under MIN_MESSAGE_CAP
                    if not block:
                        return None
                    raise MessageTooLargeError(
                        f"a frame of {length} bytes is over the message limit of {self._max_message} bytes"
                    )
            opcode = b0 & 0x0F
            if b1 & 0x80 or b0 & 0x70 or opcode not in _DATA_OPCODES:
                if not block:
                    return None
                if opcode not in _DATA_OPCODES:
                    raise websocket.WebSocketProtocolException(f"unknown opcode {opcode}")
                raise websocket.WebSocketProtocolException("masked server frame or reserved bits set")
            if opcode == 1 or opcode == 2:
                if self._parts:
                    if not block:
                        return None
                    raise websocket.WebSocketProtocolException("data frame inside a fragmented message")
            elif opcode == 0:
                if not self._parts:
                    if not block:
                        return None
                    raise websocket.WebSocketProtocolException("continuation frame without a message")
                if self._size + length > self._max_message:  # a running total: linear reassembly
                    if not block:
                        return None
                    raise MessageTooLargeError(
                        f"a fragmented message is over the message limit of {self._max_message} bytes"
                    )
            elif length > 125 or not b0 & 0x80:  # RFC 6455 5.5: control frames are short and whole
                if not block:
                    return None
                raise websocket.WebSocketProtocolException("control frame too long or fragmented")
            elif opcode == 8 and not block:
                return None  # the close is reported by the next call, after this batch
            end = pos + head + length
            if len(buf) < end:
                if not block:
                    return None
                self._fill(end - pos)
                continue
            payload = bytes(buf[pos + head : end])
            self._pos = end
            if opcode == 1:
                if b0 & 0x80:
                    return payload
                self._opcode = 1
                self._parts.append(payload)
                self._size = length
            elif opcode == 2:
                if b0 & 0x80:
                    return BinaryMessage(payload)
                self._opcode = 2
                self._parts.append(payload)
                self._size = length
            elif opcode == 0:
                self._parts.append(payload)
                if b0 & 0x80:
                    data = b"".join(self._parts)
                    self._parts = []
                    self._size = 0
                    return data if self._opcode == 1 else BinaryMessage(data)
                self._size += length
            elif opcode == 9:
                self._on_control(opcode, payload)
            elif opcode == 8:
                self._on_control(opcode, payload)
                raise websocket.WebSocketConnectionClosedException("close frame from the peer")
            # opcode 10 (pong): nothing to do


def standard_loads(data: bytes) -> Any:
    """The JSON value of ``data`` by the standard library; raises on anything it refuses.

    The reader's decoder when msgspec is not used: the UTF-8 text is decoded
    strictly, then one JSON value is parsed in place, as :func:`.framing.decode`
    does.

    Raises:
        UnicodeDecodeError: ``data`` is not UTF-8.
        ValueError: Malformed JSON, or anything after the value.
        StopIteration: No JSON value where one must start (at the start, or
            inside an array or object).
        RecursionError: Nesting too deep.
    """
    text = data.decode("utf-8")
    value, end = _scan_once(text, 0)
    if end != len(text):
        raise ValueError("trailing data after the JSON value")
    return value


class ConnectionReader:
    """The reader thread of a :class:`~service_client.gateway.connection.GatewayConnection`.

    One thread per websocket runs :meth:`run`: it reads frames in arrival
    order, answers pings, resolves acks and calls ``on_event`` /
    ``on_connect``; it never runs anything else. One reader serves every
    websocket of its connection in turn (a reconnection starts a new thread
    on the same reader).

    Args:
        on_event: ``(event name, args list)`` for every EVENT of the default
            namespace, in arrival order; an exception is logged, never raised.
            With ``event_frames``, ``(event name, args list, frame)``: see
            ``GatewayConnection``'s ``event_frames``.
        on_connect: Called with ``first`` when a thread starts, before any event.
        frame_decoders: Event name -> its frames' own decoder (see
            ``GatewayConnection``'s ``frame_decoders``); not copied.
        pong: Answers an Engine.IO ping on a websocket without waiting; False
            when the transport is gone.
        on_ack: Gets every default-namespace ACK packet, after the events read
            before it were handed on.
        on_lost: ``(websocket, loss reason)`` when a thread's loop ended
            (reason None when closing), after its watchdog ended.
    """

    def __init__(
        self,
        *,
        on_event: Callable[..., None],
        on_connect: Callable[[bool], None],
        frame_decoders: dict[str, Callable[[bytes], list[Any]]],
        pong: Callable[[websocket.WebSocket], bool],
        on_ack: Callable[[AckPacket], None],
        on_lost: Callable[[websocket.WebSocket, str | None], None],
        event_frames: bool = False,
    ) -> None:
        #: Set by :meth:`close`: the loop ends at the next message, with no loss reason.
        self._closed = False
        if not event_frames:
            def plain(event: str, args: list[Any], frame: bytes | None, on_event: Any = on_event) -> None:
                """``on_event(event, args)``: the frame is left out for a callback that takes none."""
                on_event(event, args)

            on_event = plain
        #: ``(event name, args list, frame or None)``.
        self._on_event: Callable[[str, list[Any], bytes | None], None] = on_event
        self._on_connect = on_connect
        self._frame_decoders = frame_decoders
        self._pong = pong
        self._on_ack = on_ack
        self._on_lost = on_lost

    def close(self) -> None:
        """Stop reading: a running loop ends at its next message and reports no loss reason."""
        self._closed = True

    def run(self, link: _Link, first: bool) -> None:
        """The reader thread of one websocket: ``on_connect(first)``, the loop, then ``on_lost``.

        Never raises: a failure of ours is logged and reported as a transport error.
        """
        reason: str | None = REASON_TRANSPORT_ERROR
        try:
            _callback(self._on_connect, first)
            reason = self._read_loop(link)
        except BaseException:  # noqa: BLE001 - a bug of ours: still report the loss and reconnect
            _log.exception("socket reader failed")
        finally:
            link.lost.set()
            if link.watchdog is not None:
                link.watchdog.join(DESTROY_JOIN_S)  # the reader outlives its watchdog
            self._on_lost(link.ws, reason)

    def _read_loop(self, link: _Link) -> str | None:
        """Read frames in order until the transport is lost; the loss reason, None when closing.

        Every message already buffered is taken at once, and the events they
        carry are handed to the worker pool together when the batch is done
        (see :func:`service_client.events.handoff_batch`).
        """
        recv_batch = link.reader.recv_batch
        loads = decoder.fast_loads or standard_loads
        strict = decoder.fast_loads is not None  # msgspec: a frame it took is strict JSON
        on_event = self._on_event
        # The events with a decoder of their own, by the start of their frames (42["<name>",);
        # one that refuses TYPED_REFUSALS_MAX frames in a row is not tried again on this connection.
        typed = {
            b"42[" + json.dumps(name, ensure_ascii=False).encode() + b",": decode
            for name, decode in self._frame_decoders.items()
        }
        cut, *other_cuts = sorted({len(start) for start in typed}) or [0]
        refusals = 0
        while True:
            try:
                batch = recv_batch()
            except _TIMEOUT_ERRORS:
                return None if self._closed else REASON_PING_TIMEOUT
            except websocket.WebSocketConnectionClosedException:
                return None if self._closed else REASON_TRANSPORT_CLOSE
            except websocket.WebSocketProtocolException as exc:  # a message over the cap included
                if self._closed:
                    return None
                _log.warning("the socket server broke the protocol (%s); reconnecting", _short(exc))
                return REASON_TRANSPORT_ERROR
            except _TRANSPORT_ERRORS as exc:
                if self._closed:
                    return None
                _log.debug("socket read failed: %s: %s", type(exc).__name__, _short(exc))
                return REASON_TRANSPORT_ERROR
            debug = _log.isEnabledFor(logging.DEBUG)
            with events.handoff_batch():
                for message in batch:
                    if self._closed:
                        return None
                    # A plain event (a text message ``42[...]``, a default-namespace EVENT
                    # without ack id) is decoded here, in place (a slice and an index are
                    # cheaper than startswith/endswith, which parse their arguments), by the
                    # event's own decoder when it has one and takes the frame, else by the fast
                    # decoder; any other message, or one the decoders refuse or whose array does
                    # not start with an event name, goes the standard way (_read_one), which
                    # decides and reports it exactly as without this path.
                    if type(message) is bytes and message[:3] == b"42[" and message[-1] == 0x5D:  # "]"
                        payload = None
                        if typed:
                            # An event with a decoder of its own: the frame's start, cut at the typed
                            # events' length (at each length when their names differ in length).
                            start = message[:cut]
                            decode = typed.get(start)
                            if decode is None and other_cuts:
                                for each in other_cuts:
                                    start = message[:each]
                                    decode = typed.get(start)
                                    if decode is not None:
                                        break
                            if decode is not None:
                                try:
                                    payload = decode(message[2:])
                                except Exception:  # noqa: BLE001 - refused: decoded the general way below
                                    refusals += 1
                                    if refusals >= TYPED_REFUSALS_MAX:
                                        del typed[start]
                                        refusals = 0
                                        _log.debug("stopped trying the own decoder of %r on this connection", start)
                                else:
                                    if refusals:
                                        refusals = 0
                        if payload is None:
                            try:
                                payload = loads(message[2:])  # a copy: cheaper than a memoryview and its slice
                            except Exception:  # noqa: BLE001 - refused: the standard path decides and reports
                                payload = None
                        if type(payload) is list and payload and type(payload[0]) is str:
                            event = payload[0]
                            del payload[0]  # the arguments, in place (a slice would copy them)
                            if debug:
                                _log.debug("event %s", event)
                            try:
                                on_event(event, payload, message if strict else None)
                            except Exception:  # noqa: BLE001 - a callback failure never kills the reader
                                _log.exception("on_event callback failed for %s", event)
                            continue
                    reason = self._read_one(link.ws, message, debug)
                    if reason is not _GO_ON:
                        return reason

    def _read_one(self, ws: websocket.WebSocket, message: bytes, debug: bool) -> str | None:
        """Act on one message the standard way; ``_GO_ON``, or the loss reason (None when closing)."""
        if type(message) is not bytes:
            _log.debug("ignored a binary socket frame of %d bytes", len(message))
            return _GO_ON
        try:
            text = message.decode("utf-8")
        except UnicodeDecodeError:
            _log.warning("dropped a socket frame that is not valid UTF-8")
            return _GO_ON
        if text == "2":  # ping: answer at once
            if not self._pong(ws):
                return None if self._closed else REASON_TRANSPORT_ERROR
            return _GO_ON
        try:
            packet = framing.decode(text)
        except FramingError as exc:
            _log.warning("dropped a malformed socket frame (%d chars): %s", len(text), exc)
            return _GO_ON
        kind = type(packet)
        if kind is EventPacket:
            if packet.namespace == "/":  # type: ignore[union-attr]
                if debug:
                    _log.debug("event %s", packet.event)  # type: ignore[union-attr]
                try:
                    self._on_event(packet.event, packet.args, None)  # type: ignore[union-attr]
                except Exception:  # noqa: BLE001 - a callback failure never kills the reader
                    _log.exception("on_event callback failed for %s", packet.event)  # type: ignore[union-attr]
        elif kind is AckPacket:
            events.flush_handoff()  # the caller it wakes comes after every event read before
            if packet.namespace == "/":  # type: ignore[union-attr]
                self._on_ack(packet)  # type: ignore[arg-type]
        elif kind is EnginePacket:
            if packet.type == EngineType.CLOSE:  # type: ignore[union-attr]
                return None if self._closed else REASON_TRANSPORT_CLOSE
        elif kind is DisconnectPacket:
            if packet.namespace == "/":  # type: ignore[union-attr]
                return None if self._closed else REASON_IO_SERVER_DISCONNECT
        else:
            _log.debug("ignored a %s packet", kind.__name__)
        return _GO_ON
