"""The buffered RFC 6455 frame reader of the connection, over a socketpair (no server)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import websocket

from service_client.gateway.reader import (
    MAX_MESSAGE,
    MIN_MESSAGE_CAP,
    FrameReader,
    MessageTooLargeError,
    message_cap,
)


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
        self._senders: list[threading.Thread] = []
        self._closed = threading.Event()

    def send(self, data: bytes) -> None:
        self.server.sendall(data)

    def in_background(self, send: Callable[..., object], *args: object) -> None:
        """Run ``send`` (which writes to ``server``) on a thread of its own; a write cut off by
        :meth:`close` (the test read what it needed and ended) is no error."""

        def run() -> None:
            try:
                send(*args)
            except OSError:
                if not self._closed.is_set():
                    raise

        thread = threading.Thread(target=run, daemon=True, name="test-frame-sender")
        self._senders.append(thread)
        thread.start()

    def close(self) -> None:
        self._closed.set()
        self.client.close()
        self.server.shutdown(socket.SHUT_RDWR)  # a sender blocked in sendall returns
        for thread in self._senders:
            thread.join(5)
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
    pair.in_background(pair.send, frame(text) + frame("next"))
    assert pair.reader.recv() == text
    assert pair.reader.recv() == "next"


def test_byte_by_byte_delivery(pair: Pair) -> None:
    data = frame("a" * 200) + frame("b")

    def trickle() -> None:
        for i in range(len(data)):
            pair.server.sendall(data[i : i + 1])

    pair.in_background(trickle)
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


# --------------------------------------------------------------------------- fragments and caps


def _fragments(count: int) -> bytes:
    """A text message of ``count`` one-byte fragments: a first frame, then continuations."""
    parts = [frame("a", fin=False)]
    parts += [frame(bytes([0x61 + i % 26]), opcode=0, fin=False) for i in range(1, count - 1)]
    parts.append(frame("z", opcode=0))
    return b"".join(parts)


def test_sixteen_thousand_one_byte_fragments_reassemble(pair: Pair) -> None:
    data = _fragments(16_000)
    pair.in_background(pair.send, data + frame("next"))
    message = pair.reader.recv()
    assert isinstance(message, str) and len(message) == 16_000
    assert message[0] == "a" and message[-1] == "z"
    assert message[1:27] == "bcdefghijklmnopqrstuvwxyza"
    assert pair.reader.recv() == "next"


def test_reassembly_work_is_linear_in_the_fragments(monkeypatch: pytest.MonkeyPatch) -> None:
    # Counts the reader's calls to len and sum (map(len, ...) included): what measuring the
    # parts costs. Twice the fragments must cost about twice the calls, not four times.
    from service_client.gateway import reader as reader_module

    calls = [0]

    def counting(function):  # type: ignore[no-untyped-def]
        def wrapper(*args):  # type: ignore[no-untyped-def]
            calls[0] += 1
            return function(*args)

        return wrapper

    monkeypatch.setattr(reader_module, "len", counting(len), raising=False)
    monkeypatch.setattr(reader_module, "sum", counting(sum), raising=False)

    def work(count: int) -> int:
        client, server = socket.socketpair()
        try:
            client.settimeout(5)
            data = _fragments(count)
            threading.Thread(target=server.sendall, args=(data,), daemon=True).start()
            calls[0] = 0
            assert len(FrameReader(client, lambda op, payload: None).recv()) == count
            return calls[0]
        finally:
            client.close()
            server.close()

    small, large = work(1_000), work(2_000)
    assert small > 0
    assert large <= 2.5 * small, (small, large)


def test_a_frame_over_the_cap_is_refused_before_its_payload(pair: Pair) -> None:
    pair.reader.set_max_message(100_000)
    pair.send(b"\x81\x7f" + struct.pack("!Q", 100_001))  # the header alone: no payload is awaited
    with pytest.raises(MessageTooLargeError, match="100001 bytes is over the message limit of 100000"):
        pair.reader.recv()


def test_a_fragmented_message_over_the_cap_is_refused(pair: Pair) -> None:
    pair.reader.set_max_message(MIN_MESSAGE_CAP)
    half = MIN_MESSAGE_CAP // 2
    whole = frame("x" * half, fin=False) + frame("y" * half, opcode=0)  # exactly the cap: accepted
    over = frame("x" * half, fin=False) + frame("y" * half, opcode=0, fin=False) + frame("z", opcode=0)
    pair.in_background(pair.send, whole + over)
    assert pair.reader.recv() == "x" * half + "y" * half
    with pytest.raises(MessageTooLargeError, match="fragmented message is over the message limit"):
        pair.reader.recv()


def test_message_cap_follows_max_payload_within_bounds() -> None:
    assert message_cap(1_000_000) == 1_000_000
    assert message_cap(0) == MAX_MESSAGE  # none announced
    assert message_cap(10) == MIN_MESSAGE_CAP
    assert message_cap(1 << 40) == MAX_MESSAGE
    reader = FrameReader(socket.socket(), lambda op, payload: None)
    try:
        for bad in (MIN_MESSAGE_CAP - 1, MAX_MESSAGE + 1):
            with pytest.raises(ValueError, match="size must be in"):
                reader.set_max_message(bad)
        with pytest.raises(ValueError, match="seconds must be > 0"):
            reader.set_silence(0)
    finally:
        reader._sock.close()


@pytest.mark.parametrize(
    "data", [frame(b"p" * 126, opcode=9), frame(b"p", opcode=9, fin=False)], ids=["long ping", "fragmented ping"]
)
def test_control_frames_must_be_short_and_whole(pair: Pair, data: bytes) -> None:
    pair.send(data)
    with pytest.raises(websocket.WebSocketProtocolException, match="control frame"):
        pair.reader.recv()
    assert pair.control == []


# --------------------------------------------------------------------------- the silence bound


def test_silence_bound_counts_from_the_start_of_the_wait_not_per_read(pair: Pair) -> None:
    pair.reader.set_silence(0.3)
    data = frame("x" * 100)
    stop = threading.Event()

    def trickle() -> None:  # a byte every 50 ms: each read alone is well within 0.3 s
        for i in range(len(data)):
            if stop.wait(0.05):
                return
            pair.server.sendall(data[i : i + 1])

    sender = threading.Thread(target=trickle, daemon=True, name="test-trickle")
    sender.start()
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match="no complete message within 0.3 s"):
            pair.reader.recv_batch()
    finally:
        stop.set()
        sender.join(5)  # before the fixture closes the socket it writes to
    assert 0.25 <= time.monotonic() - started < 1.5


def test_silence_bound_lets_messages_in_time_through(pair: Pair) -> None:
    pair.reader.set_silence(2.0)
    data = frame("y" * 300) + frame("next")

    def trickle() -> None:
        for start in range(0, len(data), 100):
            time.sleep(0.01)
            pair.server.sendall(data[start : start + 100])

    sender = threading.Thread(target=trickle, daemon=True, name="test-trickle")
    sender.start()
    got: list[bytes] = []
    while len(got) < 2:
        got += pair.reader.recv_batch()
    sender.join(5)
    assert got == [b"y" * 300, b"next"]
