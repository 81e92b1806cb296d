"""Test helpers for the Redis bucket store: a redis-server of a test's own, and a TCP proxy to one.

:class:`RedisServer` starts ``redis-server`` on a free port of 127.0.0.1 (no persistence,
optionally with a password) and stops it. :class:`RedisProxy` sits between a store and a
Redis server and misbehaves on request:

- ``forward``: passes bytes both ways;
- ``stall``: accepts connections and never answers;
- ``reset``: refuses (resets) every connection;
- ``forward`` with ``slow_fraction``: passes bytes, but holds a random fraction of the
  replies for ``slow_delay`` seconds first (a partly slow Redis).

The fleet benchmark imports both; they need nothing but the standard library.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import threading
import time

__all__ = ["RedisProxy", "RedisServer", "free_port"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """A ``redis-server`` of its own on 127.0.0.1 (no persistence), stopped by :meth:`stop`.

    Args:
        password: ``requirepass``, or None for none.
        timeout: Seconds to wait for the server to answer PING before giving up.

    Raises:
        FileNotFoundError: No ``redis-server`` on the PATH.
        RuntimeError: The server did not answer within ``timeout``.
    """

    def __init__(self, password: str | None = None, timeout: float = 10.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not on the PATH (Debian: apt-get install redis-server)")
        self.port = free_port()
        self.password = password
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", "/tmp", "--logfile", ""]
        if password is not None:
            args += ["--requirepass", password]
        self._proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not start")
            time.sleep(0.02)

    @property
    def url(self) -> str:
        """``redis://[:password@]127.0.0.1:<port>/0``."""
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
        except OSError:
            return False
        return reply.startswith((b"+PONG", b"-NOAUTH"))

    def stop(self) -> None:
        """Stop the server (within 10 s; killed otherwise)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)


class RedisProxy:
    """A TCP proxy to a Redis server on 127.0.0.1 (see the module docstring for its modes).

    Args:
        upstream_port: The Redis server's port on 127.0.0.1.
        seed: Seed of the choice of the slow replies.
    """

    def __init__(self, upstream_port: int, seed: int = 1) -> None:
        self.upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._mode = "forward"
        self._slow_fraction = 0.0
        self._slow_delay = 0.0
        self._random = random.Random(seed)
        self._sockets: list[socket.socket] = []
        #: Replies held back so far (partly slow mode).
        self.delayed = 0
        threading.Thread(target=self._accept, name="test-redis-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<proxy port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def set_mode(self, mode: str) -> None:
        """Switch to ``forward``, ``stall`` or ``reset``; every connection open so far is reset."""
        if mode not in ("forward", "stall", "reset"):
            raise ValueError(mode)
        with self._lock:
            self._mode = mode
            old, self._sockets = self._sockets, []
        for sock in old:
            _reset(sock)

    def set_slow(self, fraction: float, delay: float) -> None:
        """Hold ``fraction`` (0..1) of the replies ``delay`` seconds each; 0 turns it off."""
        with self._lock:
            self._slow_fraction, self._slow_delay = float(fraction), float(delay)

    def close(self) -> None:
        """Stop listening and reset every connection."""
        self._listener.close()
        self.set_mode("reset")

    def _slow_for(self) -> float:
        with self._lock:
            if self._slow_fraction > 0 and self._random.random() < self._slow_fraction:
                self.delayed += 1
                return self._slow_delay
            return 0.0

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                mode = self._mode
                if mode != "reset":
                    self._sockets.append(client)
            if mode == "reset":
                _reset(client)
            elif mode == "forward":
                try:
                    upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                    upstream.settimeout(None)
                except OSError:
                    _reset(client)
                    continue
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with self._lock:
                    self._sockets.append(upstream)
                threading.Thread(target=self._pump, args=(client, upstream, False), name="test-redis-proxy-up",
                                 daemon=True).start()
                threading.Thread(target=self._pump, args=(upstream, client, True), name="test-redis-proxy-down",
                                 daemon=True).start()
            # stall: keep the connection open and never answer

    def _pump(self, src: socket.socket, dst: socket.socket, replies: bool) -> None:
        try:
            while data := src.recv(65536):
                if replies and (delay := self._slow_for()) > 0:
                    time.sleep(delay)  # this reply (and what follows it on the connection) is late
                dst.sendall(data)
        except OSError:
            pass
        _reset(dst)


def _reset(sock: socket.socket) -> None:
    """Reset the connection, even while another thread is blocked reading it (a close alone would
    leave it open until that read returns: a Redis connection would outlive its client)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # not connected (any more)
    sock.close()

