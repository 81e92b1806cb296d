"""Socket writes are bounded: a peer that stops reading never wedges other emits or the reader."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import queue
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service_client.errors import ServiceAuthError, ServiceTimeoutError

from .conftest import Recorder

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _frame(text: str) -> bytes:
    """An unmasked server text frame."""
    data = text.encode()
    if len(data) < 126:
        head = bytes([0x81, len(data)])
    elif len(data) < 65536:
        head = bytes([0x81, 126]) + len(data).to_bytes(2, "big")
    else:
        head = bytes([0x81, 127]) + len(data).to_bytes(8, "big")
    return head + data


def _read_exact(conn: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed")
        out += chunk
    return out


def _read_client_frame(conn: socket.socket) -> str:
    b0, b1 = _read_exact(conn, 2)
    length = b1 & 0x7F
    if length == 126:
        length = int.from_bytes(_read_exact(conn, 2), "big")
    elif length == 127:
        length = int.from_bytes(_read_exact(conn, 8), "big")
    mask = _read_exact(conn, 4)
    payload = _read_exact(conn, length)
    return bytes(b ^ mask[i % 4] for i, b in enumerate(payload)).decode()


class StallingServer:
    """Does the websocket upgrade, the Engine.IO open and the Socket.IO CONNECT, then never reads
    again (a tiny receive buffer), while the test can still write frames to the client."""

    def __init__(self) -> None:
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections: queue.Queue[socket.socket] = queue.Queue()
        self._all: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="test-stalling-server", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self._all.append(conn)
            try:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                key = next(line.split(":", 1)[1].strip() for line in request.decode().split("\r\n")
                           if line.lower().startswith("sec-websocket-key:"))
                accept = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()
                conn.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              f"Sec-WebSocket-Accept: {accept}\r\n\r\n").encode())
                conn.sendall(_frame('0{"sid":"stall","upgrades":[],"pingInterval":25000,"pingTimeout":20000,'
                                    '"maxPayload":1000000}'))
                assert _read_client_frame(conn).startswith("40")
                conn.sendall(_frame('40{"sid":"stalled-namespace"}'))
            except (OSError, AssertionError, StopIteration, ConnectionError):
                conn.close()
                continue
            self.connections.put(conn)  # from here on nothing is read from it

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop
        with contextlib.suppress(OSError):
            self.listener.close()
        for conn in self._all:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        self._thread.join(5)


@pytest.fixture
def stalling_server() -> Iterator[StallingServer]:
    server = StallingServer()
    yield server
    server.close()


def test_a_stalled_write_bounds_other_emits_frees_the_reader_and_reconnects(stalling_server: StallingServer) -> None:
    recorder = Recorder()
    gateway = recorder.connection(stalling_server.url)
    gateway.connect()
    first = stalling_server.connections.get(timeout=5)
    outcome: dict[str, Any] = {}
    big_done = threading.Event()

    def big_send() -> None:
        try:
            gateway.emit("big", "x" * 16_000_000, timeout=2.5)  # far more than the socket buffers hold
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            outcome["big"] = exc
        finally:
            big_done.set()

    writer = threading.Thread(target=big_send, name="test-big-writer")
    writer.start()
    try:
        deadline = time.monotonic() + 5
        while not gateway._writer.lock.locked():
            assert time.monotonic() < deadline, "the big write never started"
            time.sleep(0.005)
        # Another emit waits for the socket only as long as its own bound, and says it timed out.
        started = time.monotonic()
        with pytest.raises(ServiceTimeoutError):
            gateway.emit("small", {"n": 1}, timeout=0.3)
        assert time.monotonic() - started < 2.0, "the small emit waited for the stalled write"
        # The reader answers a ping without waiting for the writer, and keeps delivering events.
        first.sendall(_frame("2") + _frame('42["after",{"ok":true}]'))
        assert recorder.wait_for(lambda: ("event", "after") in recorder.log, timeout=2.0), \
            "the reader waited behind the stalled writer"
        assert not big_done.is_set()
        # The stalled write ends at its bound, as a timeout, and the connection is re-established.
        assert big_done.wait(10)
        assert isinstance(outcome.get("big"), ServiceTimeoutError), outcome
        assert not isinstance(outcome.get("big"), ServiceAuthError)
        assert recorder.wait_count("disconnect", 1)
        assert recorder.kinds("disconnect") == ["transport error"]
        assert recorder.wait_count("connect", 2)
        stalling_server.connections.get(timeout=5)
        assert gateway.connected
    finally:
        gateway.close()
        writer.join(10)


def test_emit_timeout_is_checked(stalling_server: StallingServer) -> None:
    recorder = Recorder()
    gateway = recorder.connection(stalling_server.url, reconnect=False)
    gateway.connect()
    try:
        with pytest.raises(ValueError):
            gateway.emit("x", timeout=0)
        with pytest.raises(TypeError):
            gateway.emit("x", timeout="1")  # type: ignore[arg-type]
    finally:
        gateway.close()


def test_send_message_behind_a_stalled_writer_times_out_at_its_bound(world, emulator, bot, monkeypatch):
    from service_client import _defaults

    monkeypatch.setattr(_defaults, "SEND_TIMEOUT_S", 0.5)  # the 10 s bound, shortened for the test
    cid = world.general["publicId"]
    got = threading.Event()
    bot.on("message_create", lambda m: got.set() if m.content == "from alice" else None)
    gateway = bot._gateway
    assert gateway is not None
    outcome: dict[str, Any] = {}

    def send() -> None:
        started = time.monotonic()
        try:
            bot.send_message(cid, "behind a stalled write")
        except BaseException as exc:  # noqa: BLE001 - recorded for the test
            outcome["error"] = exc
        outcome["took"] = time.monotonic() - started

    assert gateway._writer.lock.acquire(timeout=5)  # another thread's write that never ends
    try:
        sender = threading.Thread(target=send, name="test-sender")
        sender.start()
        sender.join(5)
        assert not sender.is_alive(), "send_message waited for the stalled writer"
        assert isinstance(outcome["error"], TimeoutError), outcome
        assert not isinstance(outcome["error"], ServiceAuthError)
        assert str(outcome["error"]).startswith("send_message timeout after 10s: no echo of nonce ")
        assert outcome["took"] < 3.0
        # The reader is not behind the writer: events keep arriving.
        emulator.post_message(cid, world.human["publicId"], "from alice")
        assert got.wait(10)
    finally:
        gateway._writer.lock.release()
        sender.join(10)
