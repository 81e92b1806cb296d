"""Heartbeat, loss and reconnection of GatewayConnection."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

import pytest
from websockets.sync.server import ServerConnection

from service_client.errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from service_client.gateway import framing

from .conftest import (
    GOOD_TOKEN,
    RawServer,
    Recorder,
    SioServer,
    TcpProxy,
    gateway_threads,
    stay_silent,
)

pytestmark = pytest.mark.usefixtures("no_thread_leak")

LOSS_REASONS = ("transport close", "transport error")


# --------------------------------------------------------------------------- heartbeat


def test_pongs_keep_connection_alive_past_several_intervals(fast_ping_server: SioServer, recorder: Recorder) -> None:
    # ping every 0.1 s, 0.8 s to answer: 1.5 s is 15 intervals, and without pongs the server
    # would have dropped the connection after 0.9 s.
    conn = recorder.connection(fast_ping_server.url)
    conn.connect()
    try:
        assert not recorder.wait_count("disconnect", 1, timeout=1.5)
        assert conn.connected
        assert fast_ping_server.connects == [conn.sid]  # never reconnected
        assert conn.call("add", 20, 22) == [42]
    finally:
        conn.close()


def test_silence_past_interval_plus_timeout_is_ping_timeout(recorder: Recorder) -> None:
    server = RawServer(stay_silent, ping_interval_ms=100, ping_timeout_ms=100)
    try:
        conn = recorder.connection(server.url, reconnect=False)
        conn.connect()
        started = time.monotonic()
        assert recorder.wait_count("disconnect", 1, timeout=5)
        elapsed = time.monotonic() - started
        assert recorder.kinds("disconnect") == ["ping timeout"]
        assert 0.18 <= elapsed < 1.5
        assert not conn.connected
        with pytest.raises(ServiceAuthError):
            conn.emit("x")
        conn.close()
    finally:
        server.stop()


def test_pings_from_raw_server_are_answered_and_garbage_is_dropped(recorder: Recorder) -> None:
    pongs: list[str] = []

    def script(conn: ServerConnection) -> None:
        conn.send("2")
        pongs.append(conn.recv(timeout=2))  # type: ignore[arg-type]
        conn.send(b"\x00\x01binary")  # ignored
        conn.send("42[not json")  # malformed: dropped
        conn.send('451-["bin",{"_placeholder":true,"num":0}]')  # binary event: unsupported, dropped
        conn.send("6")  # noop
        conn.send('42/other,["elsewhere"]')  # other namespace: not ours
        conn.send('42["after",1]')
        stay_silent(conn)

    server = RawServer(script, ping_interval_ms=5000, ping_timeout_ms=5000)
    try:
        conn = recorder.connection(server.url, reconnect=False)
        conn.connect()
        assert recorder.wait_for(lambda: len(recorder.events) == 1)
        assert recorder.events == [("after", [1])]
        assert pongs == ["3"]
        assert conn.connected
        conn.close()
        assert server.done.wait(5)
    finally:
        server.stop()


# --------------------------------------------------------------------------- server disconnect, transport loss


def test_server_disconnect_then_reconnect(sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(sio_server.url)
    conn.connect()
    try:
        assert recorder.wait_count("connect", 1)
        first_sid = conn.sid
        sio_server.disconnect_all()
        assert recorder.wait_count("connect", 2)
        assert [(k, v) for k, v in recorder.log if k in ("connect", "disconnect")] == [
            ("connect", True),
            ("disconnect", "io server disconnect"),
            ("connect", False),
        ]
        assert conn.connected and conn.sid != first_sid
        assert sio_server.wait_for(lambda: len(sio_server.connects) == 2)
        assert conn.call("add", 1, 2) == [3]
        assert all(name.startswith("service_client-gateway-") for name in recorder.threads)
        assert recorder.threads[0] != recorder.threads[-1]  # one reader per websocket
    finally:
        conn.close()


def test_transport_drop_reconnects_with_on_connect_false(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url)
    conn.connect()
    try:
        sio_server.emit_many("before", 3)
        assert recorder.wait_for(lambda: len(recorder.events) == 3)
        proxy.drop()
        assert recorder.wait_count("connect", 2)
        assert recorder.kinds("disconnect")[0] in LOSS_REASONS
        assert recorder.kinds("connect") == [True, False]
        assert conn.connected
        sio_server.emit_many("after", 3)
        assert recorder.wait_for(lambda: len(recorder.events) == 6)
        conn.emit("still:here")
        assert sio_server.wait_for(lambda: ("still:here", []) in sio_server.received)
        # disconnect is reported before the reconnect's connect, and the events of the
        # new connection come after its on_connect(False)
        kinds = [k if k != "event" else v for k, v in recorder.log]
        assert kinds.index("disconnect") < len(kinds) - 1 - kinds[::-1].index("connect") < kinds.index("after")
    finally:
        conn.close()


def test_pending_ack_fails_at_once_when_transport_drops(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=5, reconnect_cap=5)
    conn.connect()
    outcome: list[BaseException] = []

    def caller() -> None:
        try:
            conn.call("hold", timeout=30)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
            outcome.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        assert sio_server.holding.wait(5)
        started = time.monotonic()
        proxy.drop()
        thread.join(5)
        assert time.monotonic() - started < 1.5
        assert len(outcome) == 1 and type(outcome[0]) is ServiceError
        assert "disconnected" in str(outcome[0])
    finally:
        conn.close()


def test_reconnect_waits_out_unreachable_service(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=0.02, reconnect_cap=0.05)
    conn.connect()
    try:
        proxy.refusing = True
        accepted = proxy.accepted
        proxy.drop()
        assert recorder.wait_count("disconnect", 1)
        with pytest.raises(ServiceAuthError, match="not connected"):
            conn.emit("x")  # at once while reconnecting: nothing is buffered
        # several failed attempts, nothing reported to on_error
        assert proxy.wait_accepted(accepted + 3)
        assert recorder.kinds("error") == [] and not conn.connected
        proxy.refusing = False
        assert recorder.wait_count("connect", 2)
        assert conn.connected
        assert recorder.kinds("error") == []
    finally:
        conn.close()


def test_refused_reconnect_reports_auth_error_and_stops(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=0.02, reconnect_cap=0.05)
    conn.connect()
    try:
        sio_server.tokens.clear()  # the token is revoked
        proxy.drop()
        assert recorder.wait_count("error", 1)
        (error,) = recorder.kinds("error")
        assert isinstance(error, ServiceAuthError) and "bad token" in str(error)
        assert sio_server.refusals == 1
        # attempts stop: no further refusal, no reconnect thread
        assert not sio_server.wait_for(lambda: sio_server.refusals > 1, timeout=0.4)
        assert [t for t in gateway_threads() if "-reconnect-" in t.name and t.is_alive()] == []
        assert recorder.kinds("connect") == [True] and not conn.connected
    finally:
        conn.close()


def test_auth_none_during_reconnect_stops_silently(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=0.02, reconnect_cap=0.05)
    conn.connect()
    try:
        calls = recorder.auth_calls
        recorder.token = None  # the owner was destroyed
        proxy.drop()
        assert recorder.wait_for(lambda: recorder.auth_calls > calls)
        deadline = time.monotonic() + 2
        for thread in [t for t in gateway_threads() if "-reconnect-" in t.name]:
            thread.join(max(0.0, deadline - time.monotonic()))
        assert [t for t in gateway_threads() if "-reconnect-" in t.name] == []
        assert recorder.kinds("error") == [] and recorder.auth_calls == calls + 1
    finally:
        conn.close()


def test_auth_called_at_each_attempt(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url)
    conn.connect()
    try:
        assert recorder.auth_calls == 1
        proxy.drop()
        assert recorder.wait_count("connect", 2)
        assert recorder.auth_calls == 2
    finally:
        conn.close()


def test_close_interrupts_reconnect_wait_at_once(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=30, reconnect_cap=30, jitter=0)
    conn.connect()
    proxy.drop()
    assert recorder.wait_count("disconnect", 1)
    assert recorder.wait_for(lambda: any("-reconnect-" in t.name for t in gateway_threads()))
    started = time.monotonic()
    conn.close()
    assert time.monotonic() - started < 1.0
    assert gateway_threads() == []
    assert recorder.kinds("connect") == [True]


def test_close_during_handshake_of_reconnect(recorder: Recorder) -> None:
    # the second connection gets its open packet but never a CONNECT answer
    server = RawServer(stay_silent, ping_interval_ms=100, ping_timeout_ms=100, hang_from=2)
    try:
        conn = recorder.connection(server.url, reconnect_base=0.01, reconnect_cap=0.01, connect_timeout=10)
        conn.connect()
        assert recorder.wait_count("disconnect", 1)  # ping timeout
        assert server.hanging.wait(5)
        started = time.monotonic()
        conn.close()
        assert time.monotonic() - started < 1.0
        assert gateway_threads() == []
        assert recorder.kinds("connect") == [True] and recorder.kinds("error") == []
    finally:
        server.stop()


def test_close_from_disconnect_callback_prevents_reconnect(proxy: TcpProxy, sio_server: SioServer) -> None:
    holder: dict[str, Any] = {}

    class Closing(Recorder):
        def on_disconnect(self, reason: str) -> None:
            super().on_disconnect(reason)
            holder["conn"].close()

    recorder = Closing()
    conn = recorder.connection(proxy.url, reconnect_base=0.01)
    holder["conn"] = conn
    conn.connect()
    proxy.drop()
    assert recorder.wait_count("disconnect", 1)
    deadline = time.monotonic() + 1
    for thread in gateway_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    assert gateway_threads() == []
    assert recorder.kinds("connect") == [True]
    assert len(sio_server.connects) == 1


def test_no_reconnect_when_disabled(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect=False)
    conn.connect()
    proxy.drop()
    assert recorder.wait_count("disconnect", 1)
    deadline = time.monotonic() + 1
    for thread in gateway_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    assert gateway_threads() == []
    assert not conn.connected
    conn.close()


def test_repeated_drops_recover_each_time(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=0.01, reconnect_cap=0.02)
    conn.connect()
    try:
        for round_ in range(1, 4):
            assert recorder.wait_count("connect", round_)
            proxy.drop()
            assert recorder.wait_count("connect", round_ + 1)
        assert recorder.kinds("connect") == [True, False, False, False]
        assert len(recorder.kinds("disconnect")) == 3
        assert conn.call("add", 1, 1) == [2]
    finally:
        conn.close()


def test_event_with_ack_request_is_delivered(recorder: Recorder) -> None:
    def script(conn: ServerConnection) -> None:
        conn.send(framing.encode_event("ask", {"q": 1}, ack_id=12))
        stay_silent(conn)

    server = RawServer(script, ping_interval_ms=5000, ping_timeout_ms=5000)
    try:
        conn = recorder.connection(server.url, reconnect=False)
        conn.connect()
        assert recorder.wait_for(lambda: len(recorder.events) == 1)
        assert recorder.events == [("ask", [{"q": 1}])]
        conn.close()
    finally:
        server.stop()


def test_close_during_first_connect_aborts_it(recorder: Recorder) -> None:
    server = RawServer(stay_silent, hang_from=1)  # never answers the CONNECT
    try:
        conn = recorder.connection(server.url, connect_timeout=10)
        failure: list[BaseException] = []

        def connecting() -> None:
            try:
                conn.connect()
            except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
                failure.append(exc)

        thread = threading.Thread(target=connecting)
        thread.start()
        assert server.hanging.wait(5)
        started = time.monotonic()
        conn.close()
        thread.join(5)
        assert time.monotonic() - started < 1.0
        assert len(failure) == 1 and type(failure[0]) is ServiceError and "closed" in str(failure[0])
        assert not conn.connected and recorder.log == []
    finally:
        server.stop()


def test_reconnect_thread_name(proxy: TcpProxy, sio_server: SioServer, recorder: Recorder) -> None:
    conn = recorder.connection(proxy.url, reconnect_base=30, reconnect_cap=30, jitter=0)
    conn.connect()
    try:
        proxy.drop()
        assert recorder.wait_for(lambda: any("-reconnect-" in t.name for t in gateway_threads()))
        (thread,) = [t for t in gateway_threads() if "-reconnect-" in t.name]
        assert re.fullmatch(r"service_client-reconnect-\d+", thread.name) and thread.daemon
    finally:
        conn.close()


def test_token_never_logged_or_in_errors(
    proxy: TcpProxy, sio_server: SioServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    errors: list[BaseException] = []
    recorder = Recorder()
    conn = recorder.connection(proxy.url)
    conn.connect()
    try:
        conn.emit("message:send", {"content": "x"})
        assert conn.call("add", 1, 2) == [3]
        with pytest.raises(ServiceTimeoutError) as timeout_info:
            conn.call("hold", timeout=0.05)
        errors.append(timeout_info.value)
        sio_server.emit_many("tick", 3)
        assert recorder.wait_for(lambda: len(recorder.events) == 3)
        proxy.drop()
        assert recorder.wait_count("connect", 2)
        sio_server.tokens.clear()
        proxy.drop()
        assert recorder.wait_count("error", 1)
        errors += recorder.kinds("error")
    finally:
        conn.close()
    bad = Recorder(token="another-secret-token-9")
    with pytest.raises(ServiceAuthError) as info:
        bad.connection(sio_server.url).connect()
    errors.append(info.value)
    text = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "emit message:send" in text and "event tick" in text  # DEBUG logging happened
    for secret in (GOOD_TOKEN, "another-secret-token-9"):
        assert secret not in text
        for error in errors:
            assert secret not in str(error) and secret not in repr(error)


def test_close_racing_the_start_of_a_connection_attempt_leaves_nothing(
    sio_server: SioServer, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # close() runs just as the attempt's guard thread is being started: close() must neither
    # fail (a registered thread not yet started cannot be joined) nor leave the thread running.
    from service_client.gateway import dialer

    conn = recorder.connection(sio_server.url)
    scope_lock = conn._scope.lock
    failures: list[BaseException] = []

    def closing() -> None:
        try:
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertions
            failures.append(exc)

    closer = threading.Thread(target=closing, name="test-closer")

    class Racing(threading.Thread):
        def start(self) -> None:
            if "-gateway-handshake-" in self.name and not closer.is_alive() and closer.ident is None:
                closer.start()
                if not scope_lock.locked():  # started outside the lock: close() runs in between
                    closer.join(5)
            super().start()

    monkeypatch.setattr(dialer, "threading", type("Shim", (), {
        "Thread": Racing, "Lock": threading.Lock, "Event": threading.Event,
    }))
    try:
        conn.connect()  # fails, unless it was through before close() (the fixed order lets it go first)
    except ServiceError as exc:
        assert "closed" in str(exc)
    closer.join(5)
    assert not closer.is_alive()
    assert failures == []
    assert not conn.connected
    assert gateway_threads() == []
