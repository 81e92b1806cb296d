"""The parts a GatewayConnection is built from, each alone: its scope, writer, reader and dialer.

The writer and the reader run on stand-ins for a websocket (what they use of
one: ``send`` and ``sock``) and, for the reader, a socket pair carrying real
WebSocket frames; the dialer runs against a real python-socketio server.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import websocket

from service_client.errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from service_client.gateway.dialer import ConnectionDialer
from service_client.gateway.framing import AckPacket, OpenPacket
from service_client.gateway.parts import ConnectionScope, _Link, _Stopped, socket_endpoint
from service_client.gateway.reader import ConnectionReader, FrameReader
from service_client.gateway.writer import ConnectionWriter

from .conftest import GOOD_TOKEN, SioServer

TEXT = websocket.ABNF.OPCODE_TEXT
OPEN = OpenPacket(sid="s", ping_interval_ms=25_000, ping_timeout_ms=20_000, max_payload=0, upgrades=[])


class FakeSocket:
    """The raw socket of a FakeWebSocket: records being shut down."""

    def __init__(self) -> None:
        self.down = threading.Event()

    def shutdown(self, how: int) -> None:
        self.down.set()


class FakeWebSocket:
    """What the writer uses of a websocket: ``send(data, opcode)`` and ``sock``."""

    def __init__(self, on_send: Callable[[FakeWebSocket, str | bytes], None] | None = None) -> None:
        self.sock = FakeSocket()
        self.sent: list[tuple[str | bytes, int]] = []
        self.on_send = on_send

    def send(self, data: str | bytes, opcode: int) -> None:
        if self.on_send is not None:
            self.on_send(self, data)
        self.sent.append((data, opcode))


# -- the scope ----------------------------------------------------------------------------------


def test_a_closed_scope_refuses_a_new_socket_and_closes_it() -> None:
    scope = ConnectionScope()
    scope.closed = True
    sock = socket.socket()
    with pytest.raises(ServiceError, match="closed"):
        scope.add_socket(sock)
    assert sock.fileno() == -1
    assert scope.socks == set()


def test_the_scope_tracks_sockets_until_forgotten_and_says_when_a_replacement_comes_too_late() -> None:
    scope = ConnectionScope()
    plain, tls = socket.socket(), socket.socket()
    try:
        scope.add_socket(plain)
        assert scope.replace_socket(plain, tls) is False
        assert scope.socks == {tls}
        scope.closed = True
        assert scope.replace_socket(tls, plain) is True  # the caller shuts it down
        scope.forget(plain)
        scope.forget(plain)  # idempotent
        assert scope.socks == set()
    finally:
        plain.close()
        tls.close()


def test_the_scope_starts_the_threads_it_keeps_and_drops_only_ended_ones() -> None:
    scope = ConnectionScope()
    release = threading.Event()
    ended = threading.Thread(target=lambda: None, name="test-ended")
    running = threading.Thread(target=release.wait, args=(5,), name="test-running")
    later = threading.Thread(target=lambda: None, name="test-later")
    try:
        assert scope.start_thread(ended) is True
        ended.join(5)
        assert scope.start_thread(running) is True
        assert running.is_alive()  # started as it was registered: close() can always join it
        assert scope.threads == [running]
        scope.closed = True
        assert scope.start_thread(later) is False  # closed: not started, not kept
        assert later.ident is None and scope.threads == [running]
    finally:
        release.set()
        running.join(5)


# -- the writer ---------------------------------------------------------------------------------


def _writer(live: Any) -> ConnectionWriter:
    scope = ConnectionScope()
    scope.live = live
    return ConnectionWriter(scope)


def test_a_pong_is_written_at_once_when_the_socket_is_free() -> None:
    ws = FakeWebSocket()
    writer = _writer(ws)
    assert writer.pong(ws) is True  # type: ignore[arg-type]
    assert ws.sent == [("3", TEXT)]


def test_a_pong_never_waits_for_another_write_and_follows_it() -> None:
    release = threading.Event()
    writing = threading.Event()

    def hold(ws: FakeWebSocket, data: str | bytes) -> None:
        if data == "big":
            writing.set()
            assert release.wait(5)

    ws = FakeWebSocket(hold)
    writer = _writer(ws)
    thread = threading.Thread(
        target=writer.send, args=(ws, "big", time.monotonic() + 5), name="test-writer", daemon=True
    )
    thread.start()
    assert writing.wait(5)
    started = time.monotonic()
    assert writer.pong(ws) is True  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.0
    assert ws.sent == []
    release.set()
    thread.join(5)
    assert ws.sent == [("big", TEXT), ("3", TEXT)]


def test_control_frames_of_a_websocket_no_longer_live_are_dropped() -> None:
    ws = FakeWebSocket()
    writer = _writer(FakeWebSocket())
    writer.pong(ws)  # type: ignore[arg-type]
    writer.control(ws, websocket.ABNF.OPCODE_PING, b"p")  # type: ignore[arg-type]
    assert ws.sent == []


def test_a_websocket_ping_is_answered_with_a_pong_and_a_close_echoed() -> None:
    ws = FakeWebSocket()
    writer = _writer(ws)
    writer.control(ws, websocket.ABNF.OPCODE_PING, b"p")  # type: ignore[arg-type]
    writer.control(ws, websocket.ABNF.OPCODE_CLOSE, b"\x03\xe8bye")  # type: ignore[arg-type]
    assert ws.sent == [(b"p", websocket.ABNF.OPCODE_PONG), (b"\x03\xe8", websocket.ABNF.OPCODE_CLOSE)]


def test_a_write_waits_for_the_socket_no_longer_than_its_deadline() -> None:
    ws = FakeWebSocket()
    writer = _writer(ws)
    assert writer.lock.acquire(timeout=5)  # another thread's write
    try:
        started = time.monotonic()
        with pytest.raises(ServiceTimeoutError):
            writer.send(ws, "x", time.monotonic() + 0.2)  # type: ignore[arg-type]
        assert time.monotonic() - started < 2.0
    finally:
        writer.lock.release()
    assert ws.sent == []


def test_a_failed_write_shuts_the_socket_down_and_says_it_is_not_connected() -> None:
    def fail(ws: FakeWebSocket, data: str | bytes) -> None:
        raise BrokenPipeError("gone")

    ws = FakeWebSocket(fail)
    writer = _writer(ws)
    with pytest.raises(ServiceAuthError, match="not connected"):
        writer.send(ws, "x", time.monotonic() + 5)  # type: ignore[arg-type]
    assert ws.sock.down.is_set()  # the reader notices the loss at once


def test_the_watchdog_drops_a_write_stalled_past_its_bound() -> None:
    def stall(ws: FakeWebSocket, data: str | bytes) -> None:
        assert ws.sock.down.wait(5), "the watchdog never shut the socket down"
        raise OSError("the socket was shut down")

    ws = FakeWebSocket(stall)
    writer = _writer(ws)
    link = _Link(ws, None, OPEN)  # type: ignore[arg-type]
    watchdog = threading.Thread(target=writer.watch, args=(link,), name="test-watchdog", daemon=True)
    watchdog.start()
    try:
        started = time.monotonic()
        with pytest.raises(ServiceTimeoutError, match="stalled"):
            writer.send(ws, "x", time.monotonic() + 0.1)  # type: ignore[arg-type]
        assert time.monotonic() - started < 4.0
        assert writer.stalled is ws
    finally:
        link.lost.set()
        watchdog.join(5)
    assert not watchdog.is_alive()


def test_the_watchdog_ends_when_the_scope_stops() -> None:
    ws = FakeWebSocket()
    scope = ConnectionScope()
    writer = ConnectionWriter(scope)
    watchdog = threading.Thread(
        target=writer.watch, args=(_Link(ws, None, OPEN),), name="test-watchdog", daemon=True  # type: ignore[arg-type]
    )
    watchdog.start()
    scope.stop.set()
    watchdog.join(5)
    assert not watchdog.is_alive()


# -- the reader ---------------------------------------------------------------------------------


def _frame(text: str) -> bytes:
    data = text.encode()
    assert len(data) < 126
    return bytes((0x81, len(data))) + data


class ReaderCalls:
    """The callables a ConnectionReader is given, recording every call in one list, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail_on: str | None = None

    def on_event(self, event: str, args: list[Any]) -> None:
        self.calls.append(("event", event, args, threading.current_thread().name))
        if event == self.fail_on:
            raise RuntimeError("a listener bug")

    def on_connect(self, first: bool) -> None:
        self.calls.append(("connect", first))

    def pong(self, ws: Any) -> bool:
        self.calls.append(("pong", ws))
        return True

    def on_ack(self, packet: AckPacket) -> None:
        self.calls.append(("ack", packet.ack_id, packet.args))

    def on_lost(self, ws: Any, reason: str | None) -> None:
        self.calls.append(("lost", ws, reason))

    def reader(self, frame_decoders: dict[str, Callable[[bytes], list[Any]]] | None = None) -> ConnectionReader:
        return ConnectionReader(
            on_event=self.on_event, on_connect=self.on_connect, frame_decoders=frame_decoders or {},
            pong=self.pong, on_ack=self.on_ack, on_lost=self.on_lost,
        )


@pytest.fixture
def wire() -> Iterator[tuple[socket.socket, socket.socket]]:
    """(server end, client end) of a connected socket pair."""
    server, client = socket.socketpair()
    client.settimeout(5)
    yield server, client
    server.close()
    client.close()


def _run(reader: ConnectionReader, client: socket.socket, first: bool = True) -> tuple[_Link, FakeWebSocket]:
    """Run one reader thread over ``client`` to its end; the link and the websocket stand-in."""
    ws = FakeWebSocket()
    link = _Link(ws, FrameReader(client, lambda opcode, payload: None), OPEN)  # type: ignore[arg-type]
    thread = threading.Thread(target=reader.run, args=(link, first), name="test-gateway-reader", daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    return link, ws


def test_the_reader_hands_on_frames_in_arrival_order_on_its_thread_then_reports_the_loss(wire) -> None:
    server, client = wire
    server.sendall(b"".join(map(_frame, ['42["a",1]', "2", '431["ok"]', '42["b",{"x":2}]', '42["c"]'])))
    server.shutdown(socket.SHUT_WR)
    calls = ReaderCalls()
    link, ws = _run(calls.reader(), client, first=False)
    assert calls.calls == [
        ("connect", False),
        ("event", "a", [1], "test-gateway-reader"),
        ("pong", ws),
        ("ack", 1, ["ok"]),
        ("event", "b", [{"x": 2}], "test-gateway-reader"),
        ("event", "c", [], "test-gateway-reader"),
        ("lost", ws, "transport close"),
    ]
    assert link.lost.is_set()


@pytest.mark.parametrize("decoder_name", ["msgspec", "json"])
def test_with_event_frames_the_reader_hands_on_each_events_frame_when_msgspec_read_it(
    wire, monkeypatch: pytest.MonkeyPatch, decoder_name: str,
) -> None:
    from service_client.gateway import decoder

    if decoder_name == "msgspec":
        pytest.importorskip("msgspec", reason="the msgspec decoder needs msgspec")
        import msgspec

        monkeypatch.setattr(decoder, "fast_loads", msgspec.json.Decoder().decode)
    else:
        monkeypatch.setattr(decoder, "fast_loads", None)  # SERVICE_CLIENT_JSON=json
    server, client = wire
    frames = ['42["a",1]', '42["b", {"x":2}]', '42["c"]', '42/other,["d",3]']
    server.sendall(b"".join(map(_frame, frames)))
    server.shutdown(socket.SHUT_WR)
    got: list[tuple[str, list[Any], bytes | None]] = []
    calls = ReaderCalls()
    reader = ConnectionReader(
        on_event=lambda event, args, frame: got.append((event, args, frame)), on_connect=calls.on_connect,
        frame_decoders={}, pong=calls.pong, on_ack=calls.on_ack, on_lost=calls.on_lost, event_frames=True,
    )
    _run(reader, client)
    if decoder_name == "msgspec":
        assert got == [("a", [1], b'42["a",1]'), ("b", [{"x": 2}], b'42["b", {"x":2}]'), ("c", [], b'42["c"]')]
    else:  # a lenient decoder's frame may hold what strict JSON does not (NaN): none is handed on
        assert got == [("a", [1], None), ("b", [{"x": 2}], None), ("c", [], None)]


def test_a_failing_event_callback_does_not_stop_the_reader(wire, caplog: pytest.LogCaptureFixture) -> None:
    server, client = wire
    server.sendall(_frame('42["bad",1]') + _frame('42["good",2]'))
    server.shutdown(socket.SHUT_WR)
    calls = ReaderCalls()
    calls.fail_on = "bad"
    _run(calls.reader(), client)
    assert [call[1] for call in calls.calls if call[0] == "event"] == ["bad", "good"]
    assert "on_event callback failed for bad" in caplog.text


def test_the_reader_reports_the_server_disconnect_as_its_reason(wire) -> None:
    server, client = wire
    server.sendall(_frame("41") + _frame('42["never",1]'))
    calls = ReaderCalls()
    _, ws = _run(calls.reader(), client)
    assert calls.calls == [("connect", True), ("lost", ws, "io server disconnect")]


def test_a_closed_reader_hands_on_nothing_more_and_reports_no_reason(wire) -> None:
    server, client = wire
    server.sendall(_frame('42["a",1]'))
    calls = ReaderCalls()
    reader = calls.reader()
    reader.close()
    _, ws = _run(reader, client)
    assert calls.calls == [("connect", True), ("lost", ws, None)]


def test_an_events_own_decoder_is_used_for_its_frames(wire) -> None:
    server, client = wire
    server.sendall(_frame('42["typed",{"n":1}]') + _frame('42["plain",{"n":2}]'))
    server.shutdown(socket.SHUT_WR)
    seen: list[bytes] = []

    def decode(data: bytes) -> list[Any]:
        seen.append(data)
        return ["typed", "decoded"]

    calls = ReaderCalls()
    _run(calls.reader({"typed": decode}), client)
    assert seen == [b'["typed",{"n":1}]']
    assert [call[1:3] for call in calls.calls if call[0] == "event"] == [("typed", ["decoded"]), ("plain", [{"n": 2}])]


# -- the dialer ---------------------------------------------------------------------------------


def _dialer(url: str, auth: Callable[[], dict[str, Any] | None]) -> tuple[ConnectionDialer, ConnectionScope]:
    scope = ConnectionScope()
    return ConnectionDialer(socket_endpoint(url), scope, ConnectionWriter(scope), auth=auth, name="test",
                            redact=str), scope


def test_the_dialer_establishes_a_link_the_server_knows(sio_server: SioServer) -> None:
    dialer, scope = _dialer(sio_server.url, lambda: {"token": GOOD_TOKEN})
    link = dialer.establish(5)
    try:
        assert sio_server.wait_for(lambda: link.sid in sio_server.connects)
        assert link.open_packet.ping_interval_ms == 25_000
        assert link.ws.sock in scope.socks  # close() would shut it down
        assert all(t.name.startswith("test-gateway-handshake-") for t in scope.threads)
    finally:
        link.ws.shutdown()  # type: ignore[no-untyped-call]


def test_the_dialer_reports_a_refused_token(sio_server: SioServer) -> None:
    dialer, scope = _dialer(sio_server.url, lambda: {"token": "wrong"})
    with pytest.raises(ServiceAuthError):
        dialer.establish(5)
    assert scope.socks == set()


def test_the_dialer_stops_when_auth_gives_nothing(sio_server: SioServer) -> None:
    dialer, scope = _dialer(sio_server.url, lambda: None)
    with pytest.raises(_Stopped):
        dialer.establish(5)
    assert scope.socks == set()


def test_the_dialer_opens_nothing_once_its_scope_is_closed(sio_server: SioServer) -> None:
    dialer, scope = _dialer(sio_server.url, lambda: {"token": GOOD_TOKEN})
    scope.closed = True
    with pytest.raises(ServiceError, match="closed"):
        dialer.establish(5)
    assert scope.socks == set()
    assert sio_server.connects == []
