"""The buffered RFC 6455 frame reader of the connection, over a socketpair (no server)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
import websocket

from service_client.gateway.reader import FrameReader


def frame(payload: bytes | str, opcode: int = 1, fin: bool = True, mask: bytes | None = None, rsv: int = 0) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    mask_bit = 0x80 if mask else 0
    n = len(data)
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", n)
    if mask:
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        head += mask
    return head + data


class Pair:
    def __init__(self) -> None:
        self.client, self.server = socket.socketpair()
        self.client.settimeout(2)
        self.control: list[tuple[int, bytes]] = []
        self.reader = FrameReader(self.client, lambda op, data: self.control.append((op, data)))

    def send(self, data: bytes) -> None:
        self.server.sendall(data)

    def close(self) -> None:
        self.client.close()
        self.server.close()


@pytest.fixture
def pair() -> Iterator[Pair]:
    p = Pair()
    yield p
    p.close()


def test_text_and_binary_messages(pair: Pair) -> None:
    pair.send(frame('42["a"]') + frame(b"\x00\x01", opcode=2) + frame("é🎉"))
    assert pair.reader.recv() == '42["a"]'
    assert pair.reader.recv() == b"\x00\x01"
    assert pair.reader.recv() == "é🎉"


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 300_000])
def test_length_encodings(pair: Pair, size: int) -> None:
    text = "x" * size
    threading.Thread(target=pair.send, args=(frame(text) + frame("next"),), daemon=True).start()
    assert pair.reader.recv() == text
    assert pair.reader.recv() == "next"


def test_byte_by_byte_delivery(pair: Pair) -> None:
    data = frame("a" * 200) + frame("b")

    def trickle() -> None:
        for i in range(len(data)):
            pair.server.sendall(data[i : i + 1])

    threading.Thread(target=trickle, daemon=True).start()
    assert pair.reader.recv() == "a" * 200
    assert pair.reader.recv() == "b"


def test_fragmented_message_with_interleaved_ping(pair: Pair) -> None:
    pair.send(frame("he", fin=False) + frame(b"hi", opcode=9) + frame("ll", opcode=0, fin=False) + frame("o", opcode=0))
    assert pair.reader.recv() == "hello"
    assert pair.control == [(9, b"hi")]


def test_fragmented_binary(pair: Pair) -> None:
    pair.send(frame(b"\x01", opcode=2, fin=False) + frame(b"\x02", opcode=0))
    assert pair.reader.recv() == b"\x01\x02"


def test_pong_frames_are_skipped(pair: Pair) -> None:
    pair.send(frame(b"", opcode=10) + frame("after"))
    assert pair.reader.recv() == "after"
    assert pair.control == []


def test_close_frame_is_echoed_and_ends(pair: Pair) -> None:
    pair.send(frame(struct.pack("!H", 1000) + b"bye", opcode=8))
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        pair.reader.recv()
    assert pair.control == [(8, struct.pack("!H", 1000) + b"bye")]


def test_eof_is_connection_closed(pair: Pair) -> None:
    pair.send(frame("last") + b"\x81")  # a truncated frame, then EOF
    pair.server.shutdown(socket.SHUT_WR)
    assert pair.reader.recv() == "last"
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        pair.reader.recv()


def test_timeout_keeps_partial_frame(pair: Pair) -> None:
    pair.client.settimeout(0.05)
    data = frame("complete-after-timeout")
    pair.send(data[:5])
    with pytest.raises(TimeoutError):
        pair.reader.recv()
    pair.send(data[5:])
    assert pair.reader.recv() == "complete-after-timeout"


def test_invalid_utf8_is_consumed(pair: Pair) -> None:
    pair.send(frame(b"\xff\xfe") + frame("ok"))
    with pytest.raises(UnicodeDecodeError):
        pair.reader.recv()
    assert pair.reader.recv() == "ok"


@pytest.mark.parametrize(
    "data",
    [
        frame("masked", mask=b"\x01\x02\x03\x04"),
        frame("rsv", rsv=0x40),
        frame("cont", opcode=0),
        frame("a", fin=False) + frame("b"),  # new data frame inside a fragmented message
        frame("x", opcode=3),  # reserved opcode
        b"\x81\x7f" + struct.pack("!Q", 1 << 40),  # absurd length
    ],
)
def test_protocol_violations(pair: Pair, data: bytes) -> None:
    pair.send(data)
    with pytest.raises(websocket.WebSocketProtocolException):
        pair.reader.recv()
