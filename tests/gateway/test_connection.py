"""GatewayConnection against a real python-socketio server: connect, auth, events, acks, emits."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from service_client.errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from service_client.gateway import GatewayConnection, reconnect_delay, socket_endpoint

from .conftest import GOOD_TOKEN, Recorder, SioServer, gateway_threads

pytestmark = pytest.mark.usefixtures("no_thread_leak")


# --------------------------------------------------------------------------- pure helpers


def test_socket_endpoint() -> None:
    assert socket_endpoint("http://127.0.0.1:5000") == "ws://127.0.0.1:5000/socket.io/?EIO=4&transport=websocket"
    assert socket_endpoint("https://rt.example.com/") == "wss://rt.example.com/socket.io/?EIO=4&transport=websocket"
    assert socket_endpoint("wss://h/prefix/") == "wss://h/prefix/socket.io/?EIO=4&transport=websocket"
    for bad in ("ftp://h", "127.0.0.1:5000", "http://", "http://h/?q=1"):
        with pytest.raises(ValueError, match="socket_url"):
            socket_endpoint(bad)
    with pytest.raises(TypeError, match="socket_url"):
        socket_endpoint(None)  # type: ignore[arg-type]


def test_reconnect_delay_doubles_to_cap_without_jitter() -> None:
    delays = [reconnect_delay(n, 1.0, 30.0, 0.0) for n in range(8)]
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert reconnect_delay(10_000, 1.0, 30.0, 0.0) == 30.0


def test_reconnect_delay_jitter_bounds() -> None:
    assert reconnect_delay(0, 1.0, 30.0, 0.5, rand=lambda: 0.0) == 0.5
    assert reconnect_delay(0, 1.0, 30.0, 0.5, rand=lambda: 0.5) == 1.0
    assert reconnect_delay(0, 1.0, 30.0, 0.5, rand=lambda: 0.999999) == pytest.approx(1.5, abs=1e-5)
    assert reconnect_delay(3, 1.0, 30.0, 0.5, rand=lambda: 0.0) == 4.0
    assert reconnect_delay(9, 1.0, 30.0, 0.5, rand=lambda: 0.999999) == 30.0  # capped after jitter
    samples = [reconnect_delay(2, 1.0, 30.0, 0.5) for _ in range(200)]
    assert all(2.0 <= d <= 6.0 for d in samples) and len(set(samples)) > 100


def test_constructor_validates_before_io(recorder: Recorder) -> None:
    with pytest.raises(ValueError, match="socket_url"):
        recorder.connection("ftp://127.0.0.1:1")
    with pytest.raises(TypeError, match="on_event"):
        GatewayConnection(
            "http://127.0.0.1:1",
            auth=recorder.auth,
            on_event=None,  # type: ignore[arg-type]
            on_connect=recorder.on_connect,
            on_disconnect=recorder.on_disconnect,
            on_error=recorder.on_error,
        )
    with pytest.raises(ValueError, match="connect_timeout"):
        recorder.connection("http://127.0.0.1:1", connect_timeout=0)
    with pytest.raises(ValueError, match="jitter"):
        recorder.connection("http://127.0.0.1:1", jitter=1.5)


# --------------------------------------------------------------------------- connecting


def test_connect_ok(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    assert not conn.connected
    conn.connect()
    try:
        assert conn.connected
        assert recorder.wait_count("connect", 1)
        assert recorder.kinds("connect") == [True]
        assert sio_server.wait_for(lambda: len(sio_server.connects) == 1)
        assert conn.sid == sio_server.connects[0]
        readers = [t for t in gateway_threads() if t.name.startswith("service_client-gateway-")]
        assert readers and all(t.daemon for t in readers)
        assert recorder.threads[0].startswith("service_client-gateway-")
        assert GOOD_TOKEN not in repr(conn)
    finally:
        conn.close()
    assert not conn.connected
    assert recorder.kinds("disconnect") == []  # close() is not a loss


def test_bad_token_raises_auth_error_and_leaves_nothing(sio_server: SioServer) -> None:
    recorder = Recorder(token="wrong-token-77")
    before = set(threading.enumerate())
    conn = recorder.connection(sio_server.url)
    with pytest.raises(ServiceAuthError, match="bad token") as info:
        conn.connect()
    assert "wrong-token-77" not in str(info.value)
    assert not conn.connected
    assert sio_server.refusals == 1
    assert [t for t in threading.enumerate() if t not in before] == []
    assert recorder.log == []
    conn.close()


def test_auth_none_refuses_before_io(sio_server: SioServer) -> None:
    recorder = Recorder(token=None)
    conn = recorder.connection(sio_server.url)
    with pytest.raises(ServiceAuthError):
        conn.connect()
    assert sio_server.refusals == 0 and sio_server.connects == []


def test_unreachable_host_raises_service_error_with_cause(recorder: Recorder) -> None:
    with socket.create_server(("127.0.0.1", 0)) as placeholder:
        port = placeholder.getsockname()[1]
    conn = recorder.connection(f"http://127.0.0.1:{port}", reconnect_base=0.01)
    with pytest.raises(ServiceError) as info:
        conn.connect()
    assert not isinstance(info.value, (ServiceTimeoutError, ServiceAuthError))
    assert isinstance(info.value.__cause__, OSError)
    assert recorder.log == [] and not conn.connected


def test_silent_server_raises_timeout(recorder: Recorder) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        conn = recorder.connection(f"http://127.0.0.1:{port}")
        started = time.monotonic()
        with pytest.raises(ServiceTimeoutError):
            conn.connect(timeout=0.3)
        assert 0.25 <= time.monotonic() - started < 3
    assert not conn.connected


def test_connect_twice_refused(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        with pytest.raises(ServiceError, match="already"):
            conn.connect()
    finally:
        conn.close()
    with pytest.raises(ServiceError, match="closed"):
        conn.connect()


# --------------------------------------------------------------------------- events, emits, acks


def test_thousand_events_arrive_in_order_after_on_connect(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        sio_server.emit_many("tick", 1000)
        assert recorder.wait_for(lambda: len(recorder.events) >= 1000, timeout=10)
        assert [args[0]["i"] for _, args in recorder.events] == list(range(1000))
        assert {name for name, _ in recorder.events} == {"tick"}
        assert recorder.log[0] == ("connect", True)
    finally:
        conn.close()


def test_emit_reaches_server(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        conn.emit("message:send", {"content": "héllo", "nonce": "n1"})
        conn.emit("typing:start", "chan-1")
        conn.emit("voice:leave")
        assert sio_server.wait_for(lambda: len(sio_server.received) == 3)
        assert sio_server.received == [
            ("message:send", [{"content": "héllo", "nonce": "n1"}]),
            ("typing:start", ["chan-1"]),
            ("voice:leave", []),
        ]
    finally:
        conn.close()


def test_emits_from_many_threads_are_not_interleaved(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        big = "x" * 70_000  # several TCP segments per frame

        def sender(k: int) -> None:
            for i in range(25):
                conn.emit("m", {"k": k, "i": i, "pad": big})

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sio_server.wait_for(lambda: len(sio_server.received) == 100, timeout=10)
        for k in range(4):
            assert [a[0]["i"] for e, a in sio_server.received if a[0]["k"] == k] == list(range(25))
        assert conn.connected
    finally:
        conn.close()


def test_emit_rejects_bad_input_before_io(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    with pytest.raises(TypeError, match="JSON"):
        conn.emit("x", object())
    with pytest.raises(ValueError, match="event"):
        conn.emit("")


def test_emit_while_not_connected_raises_auth_error_at_once(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    started = time.monotonic()
    with pytest.raises(ServiceAuthError, match="not connected"):
        conn.emit("message:send", {})
    with pytest.raises(ServiceAuthError, match="not connected"):
        conn.call("server:kick", {})
    conn.connect()
    conn.close()
    with pytest.raises(ServiceAuthError, match="not connected"):
        conn.emit("message:send", {})
    with pytest.raises(ServiceAuthError, match="not connected"):
        conn.call("server:kick", {})
    assert time.monotonic() - started < 2


def test_call_returns_ack_args(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        assert conn.call("add", 2, 3) == [5]
        results: list[Any] = []

        def caller(k: int) -> None:
            results.append((k, conn.call("add", k, 1000)))

        threads = [threading.Thread(target=caller, args=(k,)) for k in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(results) == [(k, [k + 1000]) for k in range(20)]
    finally:
        conn.close()


def test_call_timeout_raises_service_timeout(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        started = time.monotonic()
        with pytest.raises(ServiceTimeoutError, match="hold"):
            conn.call("hold", timeout=0.2)
        assert 0.2 <= time.monotonic() - started < 2
        assert conn.connected
        assert conn.call("add", 1, 1) == [2]  # still usable
    finally:
        conn.close()


def test_close_fails_pending_acks_at_once(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    outcome: list[BaseException] = []
    waiting = threading.Event()

    def caller() -> None:
        waiting.set()
        try:
            conn.call("hold", timeout=30)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
            outcome.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    assert waiting.wait(5)
    assert sio_server.holding.wait(5)  # the call's packet reached the server
    started = time.monotonic()
    conn.close()
    thread.join(5)
    assert time.monotonic() - started < 1.5
    assert len(outcome) == 1 and type(outcome[0]) is ServiceError


def test_callback_exception_does_not_kill_reader(sio_server: SioServer, recorder: Recorder) -> None:
    def boom(event: str, args: list[Any]) -> None:
        if args[0]["i"] % 2 == 0:
            raise RuntimeError("listener bug")

    recorder.on_event_hook = boom
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        sio_server.emit_many("tick", 10)
        assert recorder.wait_for(lambda: len(recorder.events) == 10)
        assert conn.connected
    finally:
        conn.close()


def test_close_from_event_callback(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    closed = threading.Event()

    def close_on_event(event: str, args: list[Any]) -> None:
        conn.close()
        conn.close()  # idempotent
        closed.set()

    recorder.on_event_hook = close_on_event
    conn.connect()
    sio_server.emit_many("tick", 5)
    assert closed.wait(5)
    deadline = time.monotonic() + 1.0
    for thread in gateway_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    assert gateway_threads() == []
    assert not conn.connected
    assert recorder.kinds("disconnect") == []
    assert len(recorder.events) == 1  # nothing dispatched after close()


def test_close_stops_every_thread_within_one_second(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    assert gateway_threads()
    started = time.monotonic()
    conn.close()
    assert time.monotonic() - started < 1.0
    assert gateway_threads() == []
    conn.close()  # second call does nothing
