"""The REST session against a tiny raw HTTP server on a port-0 socket.

For what neither ``responses`` nor the emulator can show: a body dripped
slowly (the per-attempt timeout covers the body read, pitfall 33), a server
that never answers while ``close()`` runs, and the exact request line on the
wire (dot segments stay encoded).
"""

from __future__ import annotations

import concurrent.futures
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from service_client.errors import ServiceError, ServiceTimeoutError
from service_client.rest import RestSession, RetryPolicy, Route

TOKEN = "tok-SOCKET-8d1e"


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        self.request.settimeout(5.0)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = self.request.recv(4096)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return
        request_line = data.split(b"\r\n", 1)[0].decode("latin-1")
        self.server.lines.append(request_line)
        self.server.arrived.set()
        path = request_line.split(" ")[1]
        try:
            if path.endswith("/drip"):
                body = b'"' + b"a" * 98 + b'"'
                self.request.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                )
                for byte in body:  # one byte per 50 ms: 5 s in all, each read well under any timeout
                    if self.server.stop.wait(0.05):
                        return
                    self.request.sendall(bytes([byte]))
            elif path.endswith("/hang"):
                self.server.stop.wait(10.0)
            else:
                self.request.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                )
        except OSError:
            return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lines: list[str] = []
        self.arrived = threading.Event()
        self.stop = threading.Event()


@pytest.fixture
def raw_server() -> Iterator[_Server]:
    server = _Server()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(2.0)


@pytest.fixture
def session(raw_server: _Server) -> Iterator[RestSession]:
    port = raw_server.server_address[1]
    rest = RestSession(f"http://127.0.0.1:{port}/v2", user_agent="service_client/test", retry=RetryPolicy(backoff_base=0.01))
    rest.token = TOKEN
    yield rest
    rest.close()


_BEFORE: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _threads_before_test() -> None:
    """Remember the threads alive before the test (other tests may leave REST sessions open)."""
    _BEFORE.clear()
    _BEFORE.update(threading.enumerate())


def _rest_threads() -> list[threading.Thread]:
    """REST threads started during this test and still alive."""
    return [t for t in threading.enumerate() if t.name.startswith("service_client-rest") and t not in _BEFORE]


def test_timeout_covers_a_slowly_dripped_body(session: RestSession) -> None:
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError):
        session.request(Route("GET", "/drip"), timeout_ms=500, retry=0)
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed <= 0.5 * 2 + 1.0  # the drip lasts 5 s; slack for a loaded machine


def test_timeout_covers_waiting_for_the_answer(session: RestSession, raw_server: _Server) -> None:
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError):
        session.request(Route("GET", "/hang"), timeout_ms=300, retry=1)
    elapsed = time.monotonic() - started
    assert len(raw_server.lines) == 2
    assert 0.6 <= elapsed <= 0.6 * 2 + 1.0  # the hang lasts 10 s; slack for a loaded machine


@pytest.fixture
def full_backlog_port() -> Iterator[int]:
    """A listening port whose accept queue is full: a new connect never completes its handshake."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port: int = listener.getsockname()[1]
    fillers: list[socket.socket] = []
    try:
        for _ in range(64):
            filler = socket.socket()
            filler.settimeout(0.2)
            try:
                filler.connect(("127.0.0.1", port))
            except OSError:  # this one no longer completes: the queue is full
                filler.close()
                break
            fillers.append(filler)
        else:
            pytest.skip("could not fill the accept queue of a listening socket on this system")
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


@pytest.mark.parametrize("max_retries", [0, 1])
def test_timeout_covers_connecting(full_backlog_port: int, max_retries: int) -> None:
    rest = RestSession(
        f"http://127.0.0.1:{full_backlog_port}/v2", user_agent="service_client/test", retry=RetryPolicy(backoff_base=0.01)
    )
    rest.token = TOKEN
    try:
        started = time.monotonic()
        future = rest.submit(Route("GET", "/auth/me"), timeout_ms=300, retry=max_retries)
        done, _ = concurrent.futures.wait([future], timeout=3.0)  # bounded even if connect is not
        elapsed = time.monotonic() - started
        assert done, "the connect phase is not bounded by timeout_ms"
        error = future.exception()
        assert isinstance(error, ServiceTimeoutError)
        assert "300 ms" in str(error) and TOKEN not in str(error)
        expected = 0.3 * (1 + max_retries)
        assert expected <= elapsed <= expected * 2 + 1.0  # slack for a loaded machine
    finally:
        rest.close()


def test_close_ends_a_call_on_the_wire_and_stops_every_thread(session: RestSession, raw_server: _Server) -> None:
    future = session.submit(Route("GET", "/hang"), timeout_ms=30_000)
    assert raw_server.arrived.wait(2.0)
    started = time.monotonic()
    session.close()
    assert time.monotonic() - started < 1.0
    done, _ = concurrent.futures.wait([future], timeout=0.5)
    assert done
    assert type(future.exception()) is ServiceError
    assert _rest_threads() == []


def test_dot_segments_stay_encoded_on_the_wire(session: RestSession, raw_server: _Server) -> None:
    session.request(Route("GET", "/channels/{c}", c=".."))
    session.request(Route("GET", "/channels/{c}", c="../x"))
    session.request(Route.from_path("GET", "/channels/%2E%2E/y"))
    assert raw_server.lines == [
        "GET /v2/channels/%2E%2E HTTP/1.1",
        "GET /v2/channels/..%2Fx HTTP/1.1",
        "GET /v2/channels/%2E%2E/y HTTP/1.1",
    ]


def test_connection_refused_is_a_service_error_with_cause() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    rest = RestSession(f"http://127.0.0.1:{port}/v2", user_agent="service_client/test", retry=RetryPolicy(backoff_base=0.01))
    rest.token = TOKEN
    try:
        with pytest.raises(ServiceError) as info:
            rest.request(Route("GET", "/auth/me"), retry=1)
    finally:
        rest.close()
    assert info.value.__cause__ is not None
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value.__cause__)
