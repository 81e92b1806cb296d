"""A socket host that misbehaves on purpose: redirects, trickled answers, frames that never end."""

from __future__ import annotations

import json
import logging
import pickle
import socket
import struct
import threading
import time
import traceback
import tracemalloc
import warnings
from collections.abc import Iterator

import pytest

from service_client import Client, ServiceAuthError, ServiceError, ServiceTimeoutError, _defaults
from service_client.gateway.dialer import MAX_UPGRADE_HEAD_BYTES, MAX_UPGRADE_LINE_BYTES
from service_client.gateway.framing import encode_open

from .conftest import GOOD_TOKEN, Recorder
from .hostile import Peer, ScriptedServer, server_frame

pytestmark = pytest.mark.usefixtures("no_thread_leak")

#: A token only these tests know: it must reach no server but the one given, and no error text.
TOKEN = "hostile-test-token-5d1e"


@pytest.fixture
def servers() -> Iterator[list[ScriptedServer]]:
    """Scripted servers started by a test (append them), all closed at teardown."""
    made: list[ScriptedServer] = []
    yield made
    for server in made:
        server.close()


def _accepting(peer: Peer, number: int) -> None:
    """A socket host that accepts every CONNECT and then keeps quiet."""
    peer.open_and_accept()
    peer.wait_closed()


def _redirecting_to(location: str, status: int = 307) -> ScriptedServer:
    def script(peer: Peer, number: int) -> None:
        peer.read_request()
        peer.send(
            f"HTTP/1.1 {status} Moved\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n".encode()
        )
        peer.wait_closed()

    return ScriptedServer(script)


def _client(socket_url: str) -> Client:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a plain-HTTP local host: no host warning wanted here
        return Client(base_url="http://127.0.0.1:9/api/v2", socket_url=socket_url,
                      reconnect_base=0.05, reconnect_cap=0.2)


# --------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirected_upgrade_fails_and_sends_nothing_elsewhere(servers: list[ScriptedServer], status: int) -> None:
    other = ScriptedServer(_accepting)  # would accept the CONNECT, token and all
    location = f"ws://127.0.0.1:{other.port}/socket.io/?EIO=4&transport=websocket"
    host = _redirecting_to(location, status)
    servers += [other, host]
    recorder = Recorder(token=TOKEN)
    conn = recorder.connection(host.url)
    with pytest.raises(ServiceError) as info:
        conn.connect()
    conn.close()
    text = str(info.value)
    assert f"HTTP {status}" in text and location in text
    assert "redirects are not followed" in text
    assert TOKEN not in text and TOKEN not in repr(info.value)
    assert host.accepted == 1
    assert other.accepted == 0 and other.bytes_received == 0  # not even the upgrade request
    assert bytes(host.peers[0].received).endswith(b"\r\n\r\n")  # the upgrade request, then nothing


def test_login_refuses_a_redirect_of_the_socket_upgrade(servers: list[ScriptedServer]) -> None:
    other = ScriptedServer(_accepting)
    location = f"ws://127.0.0.1:{other.port}/socket.io/?EIO=4&transport=websocket"
    host = _redirecting_to(location)
    servers += [other, host]
    client = _client(host.url)
    try:
        with pytest.raises(ServiceError) as info:
            client.login(TOKEN)
    finally:
        client.destroy()
    text = str(info.value)
    assert "HTTP 307" in text and location in text
    assert TOKEN not in text and TOKEN not in repr(info.value)
    assert other.accepted == 0 and other.bytes_received == 0


def test_redirect_without_location_is_named(servers: list[ScriptedServer]) -> None:
    def script(peer: Peer, number: int) -> None:
        peer.read_request()
        peer.send(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n")
        peer.wait_closed()

    host = ScriptedServer(script)
    servers.append(host)
    conn = Recorder().connection(host.url)
    with pytest.raises(ServiceError, match=r"HTTP 302 \(no Location\)"):
        conn.connect()
    conn.close()


# --------------------------------------------------------------------------- the token quoted back


def _refusing_with_the_token(peer: Peer, number: int) -> None:
    """A host that refuses the CONNECT with a message quoting the token it was sent (JSON-escaped)."""
    peer.accept_upgrade()
    peer.send(server_frame(encode_open("sid", 5000, 5000)))
    peer.read_frame()
    peer.send(server_frame("44" + json.dumps({"message": f"unknown token {TOKEN.upper()} ({TOKEN})"})))
    peer.wait_closed()


def _redirecting_with_the_token(peer: Peer, number: int) -> None:
    peer.read_request()
    peer.send(f"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.test/?t={TOKEN}\r\nContent-Length: 0\r\n\r\n".encode())
    peer.wait_closed()


def _bad_status_line_with_the_token(peer: Peer, number: int) -> None:
    peer.read_request()
    peer.send(f"HTTP/1.1 {TOKEN}\r\n\r\n".encode())  # websocket-client quotes a status line it cannot read
    peer.wait_closed()


@pytest.mark.parametrize("script", [_refusing_with_the_token, _redirecting_with_the_token, _bad_status_line_with_the_token],
                         ids=["refusal", "redirect", "status line"])
def test_a_socket_host_quoting_the_token_in_an_error_shows_it_redacted(servers: list[ScriptedServer], script) -> None:
    host = ScriptedServer(script)
    servers.append(host)
    client = _client(host.url)
    try:
        with pytest.raises(ServiceError) as info:
            client.login(TOKEN)
    finally:
        client.destroy()
    assert "[REDACTED]" in str(info.value)
    if script is _refusing_with_the_token:
        assert type(info.value) is ServiceAuthError
        assert str(info.value) == "unknown token [REDACTED] ([REDACTED])"
    shown = [str(info.value), repr(info.value), pickle.dumps(info.value).decode("latin-1"),
             "".join(traceback.TracebackException.from_exception(info.value, capture_locals=True).format())]
    assert [text for text in shown if TOKEN.lower() in text.lower()] == []


# --------------------------------------------------------------------------- handshake deadline

#: The bound given to connect() in the trickle tests, seconds, and the slack allowed past it.
BOUND_S = 0.5
SLACK_S = 1.5


def _trickle_upgrade_answer(peer: Peer, number: int) -> None:
    """The 101 answer one byte every 50 ms, padded with a header so it lasts about 10 s."""
    answer = peer.upgrade_answer(peer.read_request())
    answer = answer[:-2] + b"X-Padding: " + b"p" * 160 + b"\r\n\r\n"
    peer.trickle(answer, 0.05)
    peer.wait_closed()


def _trickle_open_packet(peer: Peer, number: int) -> None:
    """A prompt 101, then the open packet one byte every 50 ms (about 10 s)."""
    peer.accept_upgrade()
    packet = encode_open("s" * 150, 5000, 5000)
    peer.trickle(server_frame(packet), 0.05)
    peer.wait_closed()


def _trickle_connect_answer(peer: Peer, number: int) -> None:
    """The open packet at once, then the CONNECT answer one byte every 50 ms (about 10 s)."""
    peer.accept_upgrade()
    peer.send(server_frame(encode_open("sid", 5000, 5000)))
    peer.read_frame()
    peer.trickle(server_frame('40{"sid":"' + "n" * 180 + '"}'), 0.05)
    peer.wait_closed()


@pytest.mark.parametrize(
    "script", [_trickle_upgrade_answer, _trickle_open_packet, _trickle_connect_answer],
    ids=["upgrade answer", "open packet", "connect answer"],
)
def test_trickled_handshake_times_out_within_the_bound(servers: list[ScriptedServer], script) -> None:
    host = ScriptedServer(script)
    servers.append(host)
    conn = Recorder().connection(host.url, connect_timeout=BOUND_S)
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError, match="timed out after 0.5 s"):
        conn.connect()
    elapsed = time.monotonic() - started
    conn.close()
    assert BOUND_S - 0.05 <= elapsed < BOUND_S + SLACK_S
    assert host.bytes_received > 0  # the server was reached and was answering, slowly


def test_login_is_bounded_by_the_socket_connect_bound(
    servers: list[ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The documented bound of login()'s socket step (15 s), shortened to keep the test fast.
    monkeypatch.setattr(_defaults, "CONNECT_TIMEOUT_S", BOUND_S)
    host = ScriptedServer(_trickle_open_packet)
    servers.append(host)
    client = _client(host.url)
    started = time.monotonic()
    try:
        with pytest.raises(ServiceTimeoutError):
            client.login(TOKEN)
    finally:
        client.destroy()
    assert time.monotonic() - started < BOUND_S + SLACK_S


@pytest.mark.slow
def test_login_with_default_bounds_gives_up_on_a_trickled_upgrade(servers: list[ScriptedServer]) -> None:
    def script(peer: Peer, number: int) -> None:
        answer = peer.upgrade_answer(peer.read_request())
        peer.trickle(answer[:-2] + b"X-Padding: " + b"p" * 4000 + b"\r\n\r\n", 0.01)  # about 40 s

    host = ScriptedServer(script)
    servers.append(host)
    client = _client(host.url)
    started = time.monotonic()
    try:
        with pytest.raises(ServiceTimeoutError):
            client.login(TOKEN)
    finally:
        client.destroy()
    assert time.monotonic() - started < _defaults.CONNECT_TIMEOUT_S + SLACK_S


# --------------------------------------------------------------------------- an endless upgrade answer


def _endless_head(chunk: bytes, start: bytes = b"HTTP/1.1 101 Switching Protocols\r\n"):
    """A host whose answer to the upgrade is ``start`` then ``chunk`` over and over, as fast as it is read."""

    def script(peer: Peer, number: int) -> None:
        peer.read_request()
        peer.send(start)
        while not peer.server.stopping.is_set():
            peer.send(chunk)  # blocks while the client does not read; ends when it goes away

    return script


def _failed_upgrade(host: ScriptedServer) -> tuple[ServiceError, float]:
    """The error of one connection attempt to ``host`` (10 s bound) and how long it took, seconds."""
    conn = Recorder().connection(host.url, connect_timeout=10)
    started = time.monotonic()
    try:
        with pytest.raises(ServiceError) as info:
            conn.connect()
        return info.value, time.monotonic() - started
    finally:
        conn.close()


@pytest.mark.parametrize(
    "start", [b"HTTP/1.1 101 Switching Protocols\r\nX-Endless: ", b"HTTP/1.1 101 "], ids=["header line", "status line"]
)
def test_an_endless_upgrade_answer_line_fails_the_attempt_at_its_cap(servers: list[ScriptedServer], start: bytes) -> None:
    host = ScriptedServer(_endless_head(b"x" * 4096, start))
    servers.append(host)
    tracemalloc.start()
    try:
        error, elapsed = _failed_upgrade(host)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not isinstance(error, ServiceTimeoutError)
    assert f"a line over {MAX_UPGRADE_LINE_BYTES} bytes" in str(error) and "socket upgrade" in str(error)
    assert elapsed < 5.0  # at the cap, not at the 10 s deadline (tracemalloc and a busy machine slow it)
    assert peak < 2_000_000  # unbounded, the line alone grew by hundreds of MB


def test_an_upgrade_answer_with_endless_headers_fails_the_attempt_at_its_cap(servers: list[ScriptedServer]) -> None:
    host = ScriptedServer(_endless_head(b"X-Many: header\r\n" * 256))
    servers.append(host)
    error, elapsed = _failed_upgrade(host)
    assert not isinstance(error, ServiceTimeoutError)
    assert f"a head over {MAX_UPGRADE_HEAD_BYTES} bytes" in str(error)
    assert elapsed < 5.0  # at the cap, not at the 10 s deadline


def test_an_endless_upgrade_answer_is_one_failed_attempt_then_the_client_reconnects(
    servers: list[ScriptedServer],
) -> None:
    endless = _endless_head(b"x" * 4096, b"HTTP/1.1 101 Switching Protocols\r\nX-Endless: ")

    def script(peer: Peer, number: int) -> None:
        if number == 2:  # the first reconnect attempt meets the endless line
            endless(peer, number)
            return
        peer.open_and_accept()
        if number == 1:
            peer.sock.shutdown(socket.SHUT_RDWR)  # the connection drops: the client reconnects
            return
        peer.wait_closed()

    host = ScriptedServer(script)
    servers.append(host)
    recorder = Recorder()
    conn = recorder.connection(host.url, connect_timeout=10)
    conn.connect()
    try:
        assert recorder.wait_count("connect", 2, timeout=5)
        assert recorder.kinds("connect") == [True, False]
        assert host.accepted == 3
        assert recorder.kinds("error") == []
    finally:
        conn.close()


# --------------------------------------------------------------------------- frames that never end

#: The heartbeat of the hostile host once connected: 100 ms + 100 ms of silence allowed.
PING_MS = 100


def _connected_then(stall: str, stalled: threading.Event, connects: list[str]):
    """A host that accepts; on the first connection it then starts a message and never ends it.

    The reconnection gets a healthy host with a long heartbeat (no ping timeout under load).
    """

    def script(peer: Peer, number: int) -> None:
        peer.accept_upgrade()
        ping_ms = PING_MS if number == 1 else 5000
        peer.send(server_frame(encode_open("sid", ping_ms, ping_ms)))
        connects.append(peer.read_frame())
        accepted = server_frame('40{"sid":"ns"}')
        if number > 1:
            peer.send(accepted)
            peer.wait_closed()
            return
        # The answer, an event and the start of the message in one write: nothing before it is late.
        if stall == "frame":  # a 1,000-byte frame, then one byte every 40 ms (each read well within the bound)
            peer.send(accepted + server_frame('42["before",1]') + b"\x81\x7e\x03\xe8")
            stalled.set()
            peer.trickle(b"4" * 1000, 0.04)
        else:  # a fragmented message: a whole fragment every 40 ms, the last never sent
            peer.send(accepted + server_frame('42["before",1]') + server_frame('42["never",', fin=False))
            stalled.set()
            for _ in range(250):
                if peer.server.stopping.wait(0.04):
                    return
                peer.send(server_frame("1", opcode=0, fin=False))

    return script


@pytest.mark.parametrize("stall", ["frame", "fragments"])
def test_a_message_that_never_ends_is_silence_and_reconnects(servers: list[ScriptedServer], stall: str) -> None:
    stalled = threading.Event()
    connects: list[str] = []
    host = ScriptedServer(_connected_then(stall, stalled, connects))
    servers.append(host)
    recorder = Recorder()
    conn = recorder.connection(host.url)
    conn.connect()
    try:
        assert stalled.wait(5)
        started = time.monotonic()
        assert recorder.wait_count("disconnect", 1, timeout=5), "the client stayed deaf"
        assert recorder.kinds("disconnect") == ["ping timeout"]
        assert time.monotonic() - started < 2 * PING_MS / 1000 + SLACK_S
        assert recorder.wait_count("connect", 2, timeout=5)
        assert recorder.kinds("connect") == [True, False]
        assert [event for event, _ in recorder.events] == ["before"]
        assert conn.connected
    finally:
        conn.close()
    assert len(connects) == 2 and GOOD_TOKEN in connects[1]  # it did log in again


# --------------------------------------------------------------------------- message size


def test_a_message_over_max_payload_drops_the_connection_visibly_and_reconnects(
    servers: list[ScriptedServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="service_client.gateway")
    connects: list[str] = []

    def script(peer: Peer, number: int) -> None:
        peer.accept_upgrade()
        peer.send(server_frame(encode_open("sid", 5000, 5000, max_payload=100_000)))
        connects.append(peer.read_frame())
        peer.send(server_frame('40{"sid":"ns"}'))
        if number == 1:
            peer.send(server_frame('42["fits","' + "f" * 99_000 + '"]'))
            peer.send(b"\x81\x7f" + struct.pack("!Q", 100_001))  # announced: over the cap
            peer.send(b"x" * 100_001)
        peer.wait_closed()

    host = ScriptedServer(script)
    servers.append(host)
    recorder = Recorder()
    conn = recorder.connection(host.url)
    conn.connect()
    try:
        assert recorder.wait_count("connect", 2, timeout=5)
        assert recorder.kinds("disconnect") == ["transport error"]
        assert [(event, len(args[0])) for event, args in recorder.events] == [("fits", 99_000)]
    finally:
        conn.close()
    warnings_logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "over the message limit of 100000 bytes" in text and "reconnecting" in text for text in warnings_logged
    ), warnings_logged
    assert len(connects) == 2
