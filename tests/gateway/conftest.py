"""Servers for the gateway tests: python-socketio on uvicorn, a TCP proxy to cut transports, a raw server.

Everything binds 127.0.0.1 on port 0 and runs in background threads with a
readiness signal and a join on teardown.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest
import socketio
import uvicorn
from websockets.sync.server import Server, ServerConnection, serve

from service_client.gateway import GatewayConnection

GOOD_TOKEN = "good-token-3f9a"


class SioServer:
    """A python-socketio AsyncServer (ASGI) served by uvicorn in a thread, with test hooks."""

    def __init__(self, ping_interval: float = 25, ping_timeout: float = 20) -> None:
        self.tokens: set[str] = {GOOD_TOKEN}
        self.lock = threading.Lock()
        self.connects: list[str] = []  # sids accepted, in order
        self.refusals = 0
        self.received: list[tuple[str, list[Any]]] = []
        self.changed = threading.Condition(self.lock)
        self.sio = socketio.AsyncServer(
            async_mode="asgi", ping_interval=ping_interval, ping_timeout=ping_timeout
        )
        self._release: asyncio.Event | None = None
        #: Set when a "hold" event (answered only at shutdown) reached the server.
        self.holding = threading.Event()
        self._install_handlers()
        app = socketio.ASGIApp(self.sio)
        config = uvicorn.Config(
            app, log_level="critical", ws="wsproto", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="test-sio-server", daemon=True)

    def _install_handlers(self) -> None:
        sio = self.sio

        @sio.event
        async def connect(sid: str, environ: dict[str, Any], auth: Any) -> None:
            token = auth.get("token") if isinstance(auth, dict) else None
            with self.changed:
                if token not in self.tokens:
                    self.refusals += 1
                    self.changed.notify_all()
                    raise socketio.exceptions.ConnectionRefusedError("bad token")
                self.connects.append(sid)
                self.changed.notify_all()

        @sio.on("add")
        async def add(sid: str, a: int, b: int) -> int:
            return a + b

        @sio.on("hold")
        async def hold(sid: str, *args: Any) -> str:
            assert self._release is not None
            self.holding.set()
            await self._release.wait()
            return "released"

        @sio.on("*")
        async def anything(event: str, sid: str, *args: Any) -> None:
            with self.changed:
                self.received.append((event, list(args)))
                self.changed.notify_all()

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self._release = asyncio.Event()
            await self._server.serve(sockets=[self._sock])

        asyncio.run(main())

    def start(self) -> None:
        self._thread.start()
        ready = threading.Event()
        for _ in range(500):
            if self._server.started:
                ready.set()
                break
            ready.wait(0.01)
        assert ready.is_set(), "uvicorn did not start"

    def stop(self) -> None:
        if self.loop is not None and self._release is not None:
            self.loop.call_soon_threadsafe(self._release.set)
        self._server.should_exit = True
        self._thread.join(5)
        self._sock.close()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 10) -> Any:
        """Run a coroutine on the server's loop and return its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def emit_many(self, event: str, count: int) -> None:
        async def go() -> None:
            for i in range(count):
                await self.sio.emit(event, {"i": i})

        self.run(go())

    def disconnect_all(self) -> None:
        async def go() -> None:
            for sid in list(self.connects):
                await self.sio.disconnect(sid)

        self.run(go())


class TcpProxy:
    """A TCP relay whose connections can be cut abruptly, and which can refuse for a while."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.refusing = False
        self.accepted = 0
        self._lock = threading.Lock()
        self.changed = threading.Condition(self._lock)
        self._socks: list[socket.socket] = []
        self._all: list[socket.socket] = []  # closed in close()
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._accepter = threading.Thread(target=self._accept_loop, name="test-proxy-accept", daemon=True)
        self._accepter.start()

    def _accept_loop(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closed:
                    client.close()
                    return
                self.accepted += 1
                self.changed.notify_all()
                refusing = self.refusing
            if refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._socks += [client, upstream]
                self._all += [client, upstream]
                for src, dst in ((client, upstream), (upstream, client)):
                    thread = threading.Thread(target=self._pump, args=(src, dst), name="test-proxy-pump", daemon=True)
                    self._threads.append(thread)
                    thread.start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def wait_accepted(self, count: int, timeout: float = 5) -> bool:
        """Wait until ``count`` connections in all were accepted."""
        with self.changed:
            return self.changed.wait_for(lambda: self.accepted >= count, timeout)

    def drop(self) -> None:
        """Cut every relayed connection at once (both sides see the TCP connection end)."""
        with self._lock:
            socks, self._socks = self._socks, []
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self.drop()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._accepter.join(5)
        for thread in self._threads:
            thread.join(5)
        for sock in self._all:
            sock.close()


def stay_silent(conn: ServerConnection) -> None:
    """Read and drop whatever the client sends, without answering, until it goes away (or sends
    nothing for 5 s); returns then, never raises."""
    with contextlib.suppress(Exception):
        while True:
            conn.recv(timeout=5)


class RawServer:
    """A bare websocket server speaking just enough Engine.IO to connect, then running a script."""

    def __init__(
        self,
        script: Callable[[ServerConnection], None],
        ping_interval_ms: int = 100,
        ping_timeout_ms: int = 100,
        hang_from: int | None = None,
    ) -> None:
        from service_client.gateway.framing import encode_open

        self.script = script
        #: Connections from this number on (1-based) get the open packet, then silence.
        self.hang_from = hang_from
        #: Set when a connection is left hanging before its CONNECT answer.
        self.hanging = threading.Event()
        self.open_text = encode_open("raw-sid", ping_interval_ms, ping_timeout_ms)
        self.connections = 0
        self.done = threading.Event()
        self._server: Server = serve(self._handler, "127.0.0.1", 0)
        self.port: int = self._server.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="test-raw-server", daemon=True)
        self._thread.start()

    def _handler(self, conn: ServerConnection) -> None:
        self.connections += 1
        conn.send(self.open_text)
        if self.hang_from is not None and self.connections >= self.hang_from:
            self.hanging.set()
            stay_silent(conn)
            return
        connect = conn.recv(timeout=5)
        assert isinstance(connect, str) and connect.startswith("40")
        conn.send('40{"sid":"raw-namespace-sid"}')
        try:
            self.script(conn)
        finally:
            self.done.set()

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(5)


@pytest.fixture
def sio_server() -> Iterator[SioServer]:
    server = SioServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fast_ping_server() -> Iterator[SioServer]:
    # A ping every 0.1 s, 0.8 s to answer each: a client that never answers is dropped after
    # 0.9 s, while a busy machine (two suites at once on 2 cores) may stall a pong past 0.2 s.
    server = SioServer(ping_interval=0.1, ping_timeout=0.8)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def proxy(sio_server: SioServer) -> Iterator[TcpProxy]:
    relay = TcpProxy(sio_server.port)
    yield relay
    relay.close()


class Recorder:
    """Callbacks of a GatewayConnection, recording what happened with Events to await."""

    def __init__(self, token: str | None = GOOD_TOKEN) -> None:
        self.token = token
        self.lock = threading.Lock()
        self.log: list[tuple[str, Any]] = []
        self.events: list[tuple[str, list[Any]]] = []
        self.changed = threading.Condition(self.lock)
        self.threads: list[str] = []
        self.on_event_hook: Callable[[str, list[Any]], None] | None = None
        self.auth_calls = 0

    def auth(self) -> dict[str, Any] | None:
        with self.changed:
            self.auth_calls += 1
            self.changed.notify_all()
        return None if self.token is None else {"token": self.token}

    def _add(self, kind: str, value: Any) -> None:
        with self.changed:
            self.log.append((kind, value))
            self.threads.append(threading.current_thread().name)
            self.changed.notify_all()

    def on_event(self, event: str, args: list[Any]) -> None:
        with self.changed:
            self.events.append((event, args))
            self.log.append(("event", event))
            self.changed.notify_all()
        if self.on_event_hook is not None:
            self.on_event_hook(event, args)

    def on_connect(self, first: bool) -> None:
        self._add("connect", first)

    def on_disconnect(self, reason: str) -> None:
        self._add("disconnect", reason)

    def on_error(self, exc: BaseException) -> None:
        self._add("error", exc)

    def kinds(self, kind: str) -> list[Any]:
        with self.lock:
            return [value for k, value in self.log if k == kind]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5) -> bool:
        with self.changed:
            return self.changed.wait_for(predicate, timeout)

    def wait_count(self, kind: str, count: int, timeout: float = 5) -> bool:
        with self.changed:
            return self.changed.wait_for(
                lambda: sum(1 for k, _ in self.log if k == kind) >= count, timeout
            )

    def connection(self, url: str, **options: Any) -> GatewayConnection:
        options.setdefault("reconnect_base", 0.05)
        options.setdefault("reconnect_cap", 0.2)
        options.setdefault("connect_timeout", 5.0)
        return GatewayConnection(
            url,
            auth=self.auth,
            on_event=self.on_event,
            on_connect=self.on_connect,
            on_disconnect=self.on_disconnect,
            on_error=self.on_error,
            **options,
        )


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def gateway_threads() -> list[threading.Thread]:
    """Alive threads of the gateway (any name prefix), by the role part of the name."""
    return [
        t for t in threading.enumerate() if "-gateway-" in t.name or "-reconnect-" in t.name
    ]


@pytest.fixture
def no_thread_leak() -> Iterator[None]:
    before = set(gateway_threads())
    yield
    left = [t for t in gateway_threads() if t not in before]
    assert not left, f"gateway threads left running: {[t.name for t in left]}"
