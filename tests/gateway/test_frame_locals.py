"""No frame local of a logged socket error shows the token, read when the record is emitted.

Error trackers record the locals of every frame of a logged exception (its
chained causes and contexts included, the libraries' frames too) at the moment
the record is emitted. Every error path of the socket that logs with an
exception, or raises one that the caller logs, is provoked here under a
handler doing just that.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import websocket

from service_client import Client, ServiceAuthError, ServiceError, ServiceTimeoutError
from service_client._secret import Secret
from service_client.gateway import GatewayConnection
from service_client.gateway.framing import encode_open

from .conftest import Recorder, SioServer
from .frame_locals import FrameLocalsHandler
from .hostile import Peer, ScriptedServer, server_frame

pytestmark = pytest.mark.usefixtures("no_thread_leak")

TOKEN = "frame-locals-token-77c2"

#: The caller's logger: it logs what the library raised, as an application would.
_app_log = logging.getLogger("tests.application")


@pytest.fixture
def frames() -> Iterator[FrameLocalsHandler]:
    handler = FrameLocalsHandler(TOKEN)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


def _auth(secret: Secret) -> Callable[[], dict[str, Any] | None]:
    """An auth() like the client's: the token comes out of a Secret at the last moment."""

    def auth() -> dict[str, Any] | None:
        token = secret.get()
        return None if token is None else {"token": token}

    return auth


def _connection(url: str, recorder: Recorder, auth: Callable[[], dict[str, Any] | None], **options: Any) -> GatewayConnection:
    options.setdefault("reconnect_base", 0.05)
    options.setdefault("reconnect_cap", 0.2)
    options.setdefault("connect_timeout", 5.0)
    return GatewayConnection(url, auth=auth, on_event=recorder.on_event, on_connect=recorder.on_connect,
                             on_disconnect=recorder.on_disconnect, on_error=recorder.on_error, **options)


def _report(exc: BaseException) -> None:
    """What an application does with an error it caught (from a frame holding no token)."""
    _app_log.error("the socket failed", exc_info=exc)


def _refuse_upgrade(peer: Peer, number: int) -> None:
    peer.read_request()
    peer.send(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
    peer.wait_closed()


def _redirect(peer: Peer, number: int) -> None:
    peer.read_request()
    peer.send(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: ws://127.0.0.1:9/x\r\nContent-Length: 0\r\n\r\n")
    peer.wait_closed()


def _open(peer: Peer) -> None:
    peer.accept_upgrade()
    peer.send(server_frame(encode_open("sid", 5000, 5000)))


def _connect_error(peer: Peer, number: int) -> None:
    _open(peer)
    peer.read_frame()
    peer.send(server_frame('44{"message":"bad token"}'))
    peer.wait_closed()


def _malformed_first_frame(peer: Peer, number: int) -> None:
    peer.accept_upgrade()
    peer.send(server_frame("not an open packet"))
    peer.wait_closed()


def _reset_after_open(peer: Peer, number: int) -> None:
    _open(peer)
    peer.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    peer.sock.close()  # a reset: the CONNECT write or the read after it fails


def _trickle_connect_answer(peer: Peer, number: int) -> None:
    _open(peer)
    peer.read_frame()
    peer.trickle(server_frame('40{"sid":"' + "n" * 100 + '"}'), 0.05)


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"  # nobody listens once it is closed


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (None, ServiceError),
        (_refuse_upgrade, ServiceError),
        (_redirect, ServiceError),
        (_connect_error, ServiceAuthError),
        (_malformed_first_frame, ServiceError),
        (_reset_after_open, ServiceError),
        (_trickle_connect_answer, ServiceTimeoutError),
    ],
    ids=["dial failure", "refused upgrade", "redirect", "connect_error", "malformed first frame",
         "reset after the open packet", "handshake timeout"],
)
def test_failed_connects_leave_no_token_in_frame_locals(
    frames: FrameLocalsHandler, script: Callable[[Peer, int], None] | None, expected: type[Exception]
) -> None:
    server = None if script is None else ScriptedServer(script)
    try:
        url = _closed_port() if server is None else server.url
        conn = _connection(url, Recorder(), _auth(Secret(TOKEN)), connect_timeout=0.5)
        try:
            conn.connect()
        except expected as exc:
            _report(exc)
        else:
            pytest.fail("connect() succeeded")
        finally:
            conn.close()
    finally:
        if server is not None:
            server.close()
    assert frames.records >= 1
    assert frames.hits == []


def test_an_auth_that_cannot_be_sent_leaves_no_token_in_frame_locals(frames: FrameLocalsHandler) -> None:
    secret = Secret(TOKEN)
    server = ScriptedServer(_connect_error)
    conn = _connection(server.url, Recorder(), lambda: {"token": secret.get(), "extra": object()})
    try:
        with pytest.raises(TypeError, match="not JSON-serialisable") as info:
            conn.connect()
        _report(info.value)
    finally:
        conn.close()
        server.close()
    assert frames.records == 1 and frames.hits == []


def test_errors_of_a_live_connection_leave_no_token_in_frame_locals(frames: FrameLocalsHandler) -> None:
    # One connection goes through every error path of a live socket in turn: callbacks that
    # raise, a malformed frame, a message over the cap, a frame that never ends (silence), a
    # dropped transport, and at last a refused reconnection reported through on_error.
    def script(peer: Peer, number: int) -> None:
        peer.accept_upgrade()
        ping_ms = 100 if number == 2 else 5000  # a short silence bound only where it is the point
        peer.send(server_frame(encode_open("sid", ping_ms, ping_ms, max_payload=100_000)))
        peer.read_frame()
        if number == 5:
            peer.send(server_frame('44{"message":"revoked"}'))
            peer.wait_closed()
            return
        accepted = server_frame('40{"sid":"ns"}')
        if number == 1:
            over_the_cap = b"\x81\x7f" + struct.pack("!Q", 200_000)
            peer.send(accepted + server_frame('42["boom",1]') + server_frame("42[malformed") + over_the_cap)
            peer.wait_closed()
        elif number == 2:
            peer.send(accepted + b"\x81\x7e\x03\xe8")  # a frame that never ends
            peer.trickle(b"4" * 1000, 0.04)
        elif number == 3:
            peer.send(accepted)
            peer.sock.shutdown(socket.SHUT_RDWR)  # the transport ends
        else:  # 4: the server disconnects the namespace, then refuses the next CONNECT
            peer.send(accepted + server_frame("41"))
            peer.wait_closed()

    errors: list[BaseException] = []

    class Raising(Recorder):
        def on_event(self, event: str, args: list[Any]) -> None:
            super().on_event(event, args)
            raise RuntimeError("a failing on_event")

        def on_connect(self, first: bool) -> None:
            super().on_connect(first)
            raise RuntimeError("a failing on_connect")

        def on_disconnect(self, reason: str) -> None:
            super().on_disconnect(reason)
            raise RuntimeError("a failing on_disconnect")

        def on_error(self, exc: BaseException) -> None:
            errors.append(exc)
            _report(exc)  # an application's error listener logging what it got
            super().on_error(exc)

    recorder = Raising()
    server = ScriptedServer(script)
    conn = _connection(server.url, recorder, _auth(Secret(TOKEN)))
    try:
        conn.connect()
        assert recorder.wait_count("error", 1, timeout=10), recorder.log
    finally:
        conn.close()
        server.close()
    assert recorder.kinds("disconnect") == ["transport error", "ping timeout", "transport close", "io server disconnect"]
    assert isinstance(errors[0], ServiceAuthError)
    assert frames.records >= 9  # the callbacks (4 connects, 1 event, 4 disconnects) and the error
    assert any("/websocket/" in name or "/service_client/gateway/" in name for name in frames.files)
    assert frames.hits == []


def test_client_login_failures_leave_no_token_in_frame_locals(frames: FrameLocalsHandler) -> None:
    for script in (_refuse_upgrade, _redirect, _connect_error, _trickle_connect_answer):
        server = ScriptedServer(script)
        client = Client(base_url="http://127.0.0.1:9/api/v2", socket_url=server.url)
        try:
            client.login(TOKEN, timeout=0.5 if script is _trickle_connect_answer else None)
        except ServiceError as exc:
            _report(exc)
        else:
            pytest.fail("login() succeeded")
        finally:
            client.destroy()
            server.close()
    assert frames.records >= 4
    assert any("/websocket/" in name for name in frames.files)  # websocket-client's frames were walked
    assert frames.hits == []


def test_the_handler_finds_a_token_a_chained_frame_holds(frames: FrameLocalsHandler) -> None:
    def write(packet: str) -> None:  # stands for a library frame holding the CONNECT packet
        raise OSError("the write failed")

    def send() -> None:
        try:
            write('40{"token":"' + TOKEN + '"}')
        except OSError as exc:
            raise ServiceError("sending failed") from exc

    try:
        send()
    except ServiceError as exc:
        _report(exc)
    assert [(hit[3], hit[4]) for hit in frames.hits] == [("write", "packet")]


def test_websocket_client_trace_log_never_shows_the_connect_frame(
    sio_server: SioServer, caplog: pytest.LogCaptureFixture
) -> None:
    # websocket-client's own debugging switch prints every frame its send() writes (and the
    # raw frame carries its mask key, so even the masked bytes give the token away).
    caplog.set_level(logging.DEBUG)
    sio_server.tokens.add(TOKEN)
    captured = logging.NullHandler()
    websocket.enableTrace(True, handler=captured)
    try:
        recorder = Recorder()
        conn = _connection(sio_server.url, recorder, _auth(Secret(TOKEN)))
        conn.connect()
        try:
            conn.emit("message:send", {"content": "traced"})
            assert sio_server.wait_for(lambda: sio_server.received)
        finally:
            conn.close()
    finally:
        websocket.enableTrace(False)
    traced = [r.getMessage() for r in caplog.records if r.name == "websocket"]
    assert any("traced" in text for text in traced)  # the trace did print the frames sent
    assert [text for text in traced if TOKEN in text or "token" in text] == []
