"""The REST session against a hostile server, on real port-0 sockets.

What a server (or anything on the network between) can send to hurt a bot:
a redirect to another host, a status line, headers or TLS handshake trickled a
byte at a time, an endless body, a compression bomb, JSON nested deeper than
the parser can go. Each ends the call with a clear error, within its timeout,
with bounded memory, and with no ERROR line. Also: header values HTTP does not
allow are refused at the call site, and no traceback a handler or the caller
can see (frame locals included) holds the token.
"""

from __future__ import annotations

import gzip
import html
import json
import logging
import pickle
import select
import socket
import socketserver
import threading
import time
import traceback
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
import urllib3.connectionpool

from service_client.errors import ServiceAPIError, ServiceAuthError, ServiceError, ServiceTimeoutError
from service_client.rest import MemoryBucketStore, RestSession, RetryPolicy, Route, validate_api_call_args

#: The bot token of every session here (a module constant: no test frame holds it in a local).
TOKEN = "tok-HOSTILE-71c0e2"
#: The size limit of the body tests, bytes (small, so that they stay fast and light).
LIMIT = 1024 * 1024

Answer = Callable[[socket.socket, threading.Event], None]


# ============================================================================ a scriptable raw server


class _Handler(socketserver.BaseRequestHandler):
    server: _RawServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(2.0)
        try:
            if self.server.read_head:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                self.server.heads.append(data.split(b"\r\n\r\n", 1)[0].decode("latin-1"))
            else:
                sock.recv(4096)  # a TLS ClientHello, say: whatever the client opens with
            self.server.arrived.set()
            self.server.answer(sock, self.server.stop)
        except OSError:
            return


class _RawServer(socketserver.ThreadingTCPServer):
    """Answers each connection with ``answer(sock, stop)``; handler threads are joined at close."""

    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, answer: Answer, *, read_head: bool) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.read_head = read_head
        self.heads: list[str] = []
        self.arrived = threading.Event()
        self.stop = threading.Event()

    @property
    def port(self) -> int:
        return int(self.server_address[1])


@pytest.fixture
def serve() -> Iterator[Callable[..., _RawServer]]:
    """Start raw servers (one thread each, plus one per connection); all are stopped and joined at teardown."""
    running: list[tuple[_RawServer, threading.Thread]] = []

    def start(answer: Answer, *, read_head: bool = True) -> _RawServer:
        server = _RawServer(answer, read_head=read_head)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        running.append((server, thread))
        return server

    yield start
    for server, thread in running:
        server.stop.set()
        server.shutdown()
        server.server_close()  # joins the handler threads
        thread.join(2.0)


@pytest.fixture
def session_for() -> Iterator[Callable[..., RestSession]]:
    made: list[RestSession] = []

    def make(server: _RawServer, *, scheme: str = "http", **kwargs: Any) -> RestSession:
        kwargs.setdefault("retry", RetryPolicy(backoff_base=0.01))
        rest = RestSession(f"{scheme}://127.0.0.1:{server.port}/v2", user_agent="service_client/test", **kwargs)
        rest.token = TOKEN
        made.append(rest)
        return rest

    yield make
    for rest in made:
        rest.close()


def _answer_with(raw: bytes) -> Answer:
    def answer(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(raw)

    return answer


def _trickled(first: bytes, rest: bytes, every_s: float = 0.05) -> Answer:
    """Send ``first`` at once, then ``rest`` one byte per ``every_s`` (each receive well within any timeout)."""

    def answer(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(first)
        for byte in rest:
            if stop.wait(every_s):
                return
            sock.sendall(bytes([byte]))

    return answer


def _http(status: str, body: bytes = b"", *headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers, f"Content-Length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# ============================================================================ redirects


@pytest.mark.parametrize("status", ["301 Moved Permanently", "302 Found", "303 See Other",
                                    "307 Temporary Redirect", "308 Permanent Redirect"])
def test_a_redirect_ends_the_call_naming_it_and_is_never_followed(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    caplog: pytest.LogCaptureFixture, status: str,
) -> None:
    other = socket.socket()  # the host the redirect points to: it must see no connection at all
    other.bind(("127.0.0.1", 0))
    other.listen(8)
    try:
        location = f"http://127.0.0.1:{other.getsockname()[1]}/v2/servers/S1/roles"
        server = serve(_answer_with(_http(status, b'{"error":"moved"}', f"Location: {location}")))
        session = session_for(server)
        with pytest.raises(ServiceAPIError) as info:
            session.request(Route("POST", "/servers/{s}/roles", s="S1"), json={"name": "x"}, retry=3)
        code = int(status.split()[0])
        assert type(info.value) is ServiceAPIError and info.value.status == code
        assert str(info.value) == (
            f"API Error {code}: POST /servers/S1/roles was redirected to {location!r}; redirects are not followed"
        )
        assert info.value.path == "/servers/S1/roles" and info.value.data == {"error": "moved"}
        assert len(server.heads) == 1  # not retried
        assert select.select([other], [], [], 0)[0] == [], "a connection was made to the redirect's host"
    finally:
        other.close()
    assert _errors_logged(caplog) == []


def test_a_redirect_quoting_a_webhook_token_shows_it_masked(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    server = serve(_answer_with(_http("302 Found", b"", "Location: https://elsewhere.test/webhooks/W1/hook-SECRET")))
    session = session_for(server)
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("POST", "/webhooks/{w}/{t}", w="W1", t="hook-SECRET"), body="{}", authorized=False)
    assert "was redirected to 'https://elsewhere.test/webhooks/W1/***'" in str(info.value)
    assert "hook-SECRET" not in str(info.value) and info.value.path == "/webhooks/W1/***"


def test_a_redirect_without_location_says_so(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    session = session_for(serve(_answer_with(_http("301 Moved Permanently"))))
    with pytest.raises(ServiceAPIError, match=r"^API Error 301: GET /auth/me was redirected \(no Location\)"):
        session.request(Route("GET", "/auth/me"))


# ============================================================================ the whole attempt is bounded


_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"


@pytest.mark.parametrize(
    ("first", "rest"),
    [
        (b"", _HEAD + b"\r\n{}"),  # the status line itself, a byte at a time
        (_HEAD, b"X-Filler: " + b"a" * 80 + b"\r\n\r\n{}"),  # the headers
    ],
    ids=["status-line", "headers"],
)
def test_timeout_bounds_an_answer_head_trickled_a_byte_at_a_time(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession], first: bytes, rest: bytes
) -> None:
    session = session_for(serve(_trickled(first, rest)))  # 3.5 s of trickle or more
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError, match=r"^GET /auth/me timed out after 500 ms \(1 attempt\)"):
        session.request(Route("GET", "/auth/me"), timeout_ms=500, retry=0)
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed <= 0.5 + 1.5  # slack for a loaded machine


def test_each_retry_has_its_own_whole_deadline(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    server = serve(_trickled(b"", _HEAD + b"\r\n{}"))
    session = session_for(server)
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError, match=r"timed out after 400 ms \(2 attempts\)"):
        session.request(Route("GET", "/auth/me"), timeout_ms=400, retry=1)
    elapsed = time.monotonic() - started
    assert len(server.heads) == 2
    assert 0.8 <= elapsed <= 0.8 + 1.5


def test_timeout_bounds_a_tls_handshake_trickled_a_byte_at_a_time(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    # A TLS record header announcing 16 KiB of handshake, then its bytes one by one.
    server = serve(_trickled(b"\x16\x03\x03\x40\x00", b"\x02" * 100), read_head=False)
    session = session_for(server, scheme="https")
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError, match="timed out after 500 ms"):
        session.request(Route("GET", "/auth/me"), timeout_ms=500, retry=0)
    assert server.arrived.is_set()
    assert time.monotonic() - started <= 0.5 + 1.5


# ============================================================================ body size


def _endless_body(sock: socket.socket, stop: threading.Event) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
    chunk = b" " * 65536
    for _ in range(1024):  # 64 MiB at most, should the client read on
        if stop.is_set():
            return
        sock.sendall(chunk)


def _endless_chunks(sock: socket.socket, stop: threading.Event) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b" " * 65536 + b"\r\n"
    for _ in range(1024):  # 64 MiB at most, should the client read on
        if stop.is_set():
            return
        sock.sendall(chunk)


def _gzip_bomb() -> bytes:
    """16 MiB of spaces (16 times the limit), gzip-compressed to about 16 KiB without holding the 16 MiB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1024 * 1024)
    parts = [packer.compress(block) for _ in range(16)]
    parts.append(packer.flush())
    return b"".join(parts)


def _bomb_answer(sock: socket.socket, stop: threading.Event) -> None:
    bomb = _gzip_bomb()
    sock.sendall(_http("200 OK", bomb, "Content-Type: application/json", "Content-Encoding: gzip"))


@pytest.mark.parametrize(
    "answer", [_endless_body, _endless_chunks, _bomb_answer], ids=["endless", "endless-chunked", "gzip-bomb"]
)
def test_a_body_over_the_limit_ends_the_call_without_reading_it(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    caplog: pytest.LogCaptureFixture, answer: Answer,
) -> None:
    session = session_for(serve(answer), max_body_bytes=LIMIT)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        with pytest.raises(ServiceAPIError) as info:
            session.request(Route("GET", "/chat/C1"), timeout_ms=10_000, retry=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.status == 200
    assert str(info.value) == (
        f"API Error 200: the answer to GET /chat/C1 has a body over the {LIMIT} byte limit (max_body_bytes); "
        "it was not read further"
    )
    assert peak < 4 * LIMIT, f"reading the answer took {peak} bytes"
    assert _errors_logged(caplog) == []


def test_a_declared_length_over_the_limit_is_refused_before_reading(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    def answer(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n")
        stop.wait(5.0)  # and then nothing: a reader waiting for the body would time out

    session = session_for(serve(answer), max_body_bytes=LIMIT)
    started = time.monotonic()
    with pytest.raises(ServiceAPIError, match=f"over the {LIMIT} byte limit"):
        session.request(Route("GET", "/chat/C1"), timeout_ms=3000, retry=0)
    assert time.monotonic() - started < 1.5


def test_a_body_of_exactly_the_limit_is_read(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    body = b'"' + b"a" * 98 + b'"'
    packed = gzip.compress(body)
    session = session_for(serve(_answer_with(_http("200 OK", packed, "Content-Encoding: gzip"))), max_body_bytes=100)
    assert session.request(Route("GET", "/chat/C1")) == "a" * 98


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_max_body_bytes_is_checked(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_body_bytes"):
        RestSession("http://127.0.0.1:1/v2", user_agent="t", max_body_bytes=value)


# ============================================================================ odd answers


_DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("status", ["200 OK", "201 Created"])
def test_a_2xx_nested_too_deeply_is_an_api_error_naming_the_cause(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    caplog: pytest.LogCaptureFixture, status: str,
) -> None:
    session = session_for(serve(_answer_with(_http(status, _DEEP, "Content-Type: application/json"))))
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/chat/C1"))
    code = int(status.split()[0])
    assert info.value.status == code and info.value.data is None
    assert str(info.value).startswith(
        f"API Error {code}: the response body is JSON nested too deeply to parse (RecursionError): [[["
    )
    assert _errors_logged(caplog) == []


@pytest.mark.parametrize("status", ["400 Bad Request", "503 Service Unavailable"])
def test_an_error_answer_nested_too_deeply_keeps_its_status(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    caplog: pytest.LogCaptureFixture, status: str,
) -> None:
    session = session_for(serve(_answer_with(_http(status, _DEEP, "Content-Type: application/json"))))
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/chat/C1"), retry=0)
    code = int(status.split()[0])
    assert info.value.status == code and info.value.data is None
    assert str(info.value) == f"API Error {code}: " + "[" * 500
    assert _errors_logged(caplog) == []


# ============================================================================ header values


@pytest.mark.parametrize(
    "value",
    [
        "\x0bv", "v\x0bw", "\x1cv", "v\x1f", "v\x7f", "v\x85", "v\x00", "v\rw", "v\nw",  # control characters
        "\xa0v", "v\xa0",  # a no-break space at either end (requests reads it as whitespace)
        "\u3000v", "v\u3000w", "caf\u00e9 \u0101", "\u2028", "\U0001f600",  # outside Latin-1
        " v", "v ", "\tv", "v\t",  # whitespace at either end
    ],
)
def test_a_header_value_http_does_not_allow_is_refused_at_the_call_site(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    caplog: pytest.LogCaptureFixture, value: str,
) -> None:
    server = serve(_answer_with(_http("200 OK", b"{}")))
    session = session_for(server)
    message = r"^headers: the value of 'X-Test' is not a valid HTTP header value"
    with pytest.raises(ValueError, match=message):
        validate_api_call_args("/auth/me", headers={"X-Test": value})
    with pytest.raises(ValueError, match=message) as info:
        session.request(Route("GET", "/auth/me"), headers={"X-Test": value})
    assert repr(value) not in str(info.value)
    assert TOKEN not in _locals_of(info.value)
    assert server.heads == [] and _errors_logged(caplog) == []


def test_header_values_http_allows_are_sent_as_given(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]
) -> None:
    server = serve(_answer_with(_http("200 OK", b"{}")))
    session = session_for(server)
    values = {"X-A": "caf\u00e9 \xa0 \u00ff", "X-B": "a\tb c", "X-C": "", "X-D": "!~"}
    session.request(Route("GET", "/auth/me"), headers=values)
    (head,) = server.heads
    for name, value in values.items():
        assert f"\r\n{name}: {value}\r\n" in head + "\r\n"


# ============================================================================ no token in frame locals


def _locals_of(exc: BaseException) -> str:
    """Every local of every frame of ``exc`` and of the exceptions it chains, as error trackers,
    ``pytest --showlocals`` and ``TracebackException(capture_locals=True)`` record them."""
    record = traceback.TracebackException.from_exception(exc, capture_locals=True)
    return "".join(record.format())


class _LocalsRecorder(logging.Handler):
    """Records, when each line is emitted, the frame locals of its ``exc_info`` (as error trackers do)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.traces: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.traces.append(_locals_of(record.exc_info[1]))


@pytest.fixture
def recorder() -> Iterator[_LocalsRecorder]:
    handler = _LocalsRecorder()
    logger = logging.getLogger("service_client")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


class _FailingStore(MemoryBucketStore):
    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing
        self.looks = 0

    def wait_time(self, key: str, *, scope: str = "") -> float:
        if self.failing == "wait_time":  # park the call once, then break the timer's dispatch of it
            self.looks += 1
            return 0.05 if self.looks == 1 else "soon"  # type: ignore[return-value]
        return super().wait_time(key, scope=scope)

    def acquire(self, key: str, *, scope: str = "") -> float:
        if self.failing == "acquire":
            raise RuntimeError("store down")
        return super().acquire(key, scope=scope)

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        if self.failing == "block":
            raise RuntimeError("store down")
        super().block(key, delay, scope=scope)


def _failing_urlopen(self: Any, method: str, url: str, body: Any = None, headers: Any = None, **kw: Any) -> Any:
    raise RuntimeError("the pool broke")  # its frame holds the request's headers, as urllib3's own do


@pytest.mark.parametrize("path", ["worker", "timer", "store-acquire", "store-block"])
def test_no_logged_traceback_holds_the_token_in_its_frame_locals(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession],
    recorder: _LocalsRecorder, monkeypatch: pytest.MonkeyPatch, path: str,
) -> None:
    server = serve(_answer_with(_http("429 Too Many Requests", b"{}", "Retry-After: 0")))
    if path == "worker":
        monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool, "urlopen", _failing_urlopen)
        session = session_for(server)
        with pytest.raises(ServiceError, match="^unexpected error: RuntimeError$"):
            session.request(Route("GET", "/auth/me"), retry=0)
    elif path == "timer":  # the call ends (its Future is not left pending) and the timer lives on
        session = session_for(server, bucket_store=_FailingStore("wait_time"))
        with pytest.raises(ServiceError, match="^unexpected error: TypeError$"):
            session.submit(Route("GET", "/auth/me"), retry=0).result(timeout=5)
        assert "service_client-rest-timer-1" in [t.name for t in threading.enumerate()]
    else:
        session = session_for(server, bucket_store=_FailingStore(path.split("-")[1]))
        with pytest.raises(ServiceAPIError):
            session.request(Route("GET", "/auth/me"), retry=0)
    assert recorder.traces, "a line with a traceback was expected"
    for trace in recorder.traces:
        assert " = " in trace  # frames and their locals were recorded
        assert TOKEN not in trace


def test_a_call_raced_by_close_raises_with_no_token_in_its_frame_locals(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(_answer_with(_http("200 OK", b"{}")))
    session = session_for(server)
    prepare = session._transport.prepare

    def prepare_while_closing(*args: Any, **kwargs: Any) -> Any:
        session.close()  # close() lands between the call's two checks of the session
        return prepare(*args, **kwargs)

    monkeypatch.setattr(session._transport, "prepare", prepare_while_closing)
    with pytest.raises(ServiceAuthError, match="closed") as info:
        session.request(Route("GET", "/auth/me"))
    trace = _locals_of(info.value)
    assert "submit" in trace and " = " in trace
    assert TOKEN not in trace
    assert server.heads == []


# ============================================================================ the bot token quoted back

#: A token with characters servers escape (percent-encoding, JSON, HTML) when they quote it.
ODD_TOKEN = 'tok/ODD+"quoted"&<x>'
_TOKENS = {"plain": TOKEN, "odd": ODD_TOKEN}


def _quoting(kind: str, which: str) -> Answer:
    """An answer whose body or ``Location`` quotes the token as a server might (built here, so
    that no test frame holds it)."""
    token = _TOKENS[which]
    header = f"Authorization: Bearer {token}"
    answers = {
        "401 json": _http("401 Unauthorized", json.dumps({"error": f"bad credentials ({header})"}).encode(),
                          "Content-Type: application/json"),
        "401 json escaped": _http("401 Unauthorized", json.dumps({"error": header}).replace("/", "\\/").encode(),
                                  "Content-Type: application/json"),
        "401 text": _http("401 Unauthorized", f"refused: {header}".encode(), "Content-Type: text/plain"),
        "403 html": _http("403 Forbidden", f"<p>{html.escape(header)}</p>".encode(), "Content-Type: text/plain"),
        "302 location": _http("302 Found", b"", f"Location: https://elsewhere.test/login?t={quote(token, safe='')}"),
        "307 raw location": _http("307 Temporary Redirect", b"", f"Location: https://elsewhere.test/{token}/in"),
        "503 retried": _http("503 Service Unavailable", json.dumps({"error": header}).encode(),
                             "Content-Type: application/json", "Retry-After: 0"),
        "200 not json": _http("200 OK", f"<oops {header}>".encode(), "Content-Type: application/json"),
    }
    return _answer_with(answers[kind])


def _shown_by(exc: ServiceAPIError) -> list[str]:
    """Everything the error shows: text, repr, args, attributes, pickle, traceback with frame locals."""
    copy = pickle.loads(pickle.dumps(exc))
    assert str(copy) == str(exc) and copy.body == exc.body and copy.data == exc.data
    return [str(exc), repr(exc), repr(exc.args), repr(vars(exc)), pickle.dumps(exc).decode("latin-1"),
            _locals_of(exc), repr(vars(copy))]


@pytest.mark.parametrize("which", ["plain", "odd"])
@pytest.mark.parametrize(
    "kind", ["401 json", "401 json escaped", "401 text", "403 html", "302 location", "307 raw location",
             "503 retried", "200 not json"],
)
def test_an_answer_quoting_the_bot_token_shows_it_redacted(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession], kind: str, which: str
) -> None:
    session = session_for(serve(_quoting(kind, which)))
    session.token = _TOKENS[which]
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/auth/me"), retry=0)
    assert info.value.status == int(kind.split()[0])
    assert "[REDACTED]" in str(info.value) + info.value.body
    if kind.startswith("401 json"):
        assert info.value.data == {"error": ("Authorization: Bearer [REDACTED]" if "escaped" in kind
                                             else "bad credentials (Authorization: Bearer [REDACTED])")}
    leaks = [text for text in _shown_by(info.value) if _TOKENS[which] in text or quote(_TOKENS[which]) in text]
    assert leaks == []


def test_a_value_is_not_masked(serve: Callable[..., _RawServer], session_for: Callable[..., RestSession]) -> None:
    """Only what an error shows is masked: a 2xx value comes back as the service sent it."""
    session = session_for(serve(_answer_with(_http("200 OK", json.dumps({"echo": TOKEN}).encode()))))
    assert session.request(Route("GET", "/auth/me"))["echo"] == TOKEN


@pytest.mark.parametrize("which", ["plain", "odd"])
def test_a_status_line_quoting_the_bot_token_shows_it_redacted_in_the_chained_cause(
    serve: Callable[..., _RawServer], session_for: Callable[..., RestSession], which: str
) -> None:
    """http.client quotes a status line it cannot read in its error, which the call's error chains."""
    session = session_for(serve(_answer_with(f"HTTP/1.1 {_TOKENS[which]}\r\n\r\n".encode())))
    session.token = _TOKENS[which]
    with pytest.raises(ServiceError) as info:
        session.request(Route("GET", "/auth/me"), retry=0)
    cause = info.value.__cause__
    assert cause is not None and "[REDACTED]" in str(cause) and "BadStatusLine" in str(cause)
    shown = [str(info.value), repr(info.value), str(cause), repr(cause), _locals_of(info.value)]
    assert [text for text in shown if _TOKENS[which] in text] == []
