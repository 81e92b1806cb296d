"""A hostile socket host for the gateway tests: raw TCP, scripted byte by byte.

:class:`ScriptedServer` binds 127.0.0.1 on a free port and runs a script for
each connection on its own thread, through a :class:`Peer` that records every
byte the client sent. The script decides everything the client sees: an HTTP
answer to the upgrade (a redirect, a refusal, a ``101`` sent one byte at a
time), then Engine.IO frames, whole or never finished.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from service_client.gateway.framing import encode_open

_WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def server_frame(payload: bytes | str, opcode: int = 1, fin: bool = True) -> bytes:
    """One unmasked server frame (RFC 6455 section 5.2)."""
    data = payload.encode() if isinstance(payload, str) else payload
    head = bytes([(0x80 if fin else 0) | opcode])
    size = len(data)
    if size < 126:
        head += bytes([size])
    elif size < 65536:
        head += bytes([126]) + struct.pack("!H", size)
    else:
        head += bytes([127]) + struct.pack("!Q", size)
    return head + data


class Peer:
    """The server's side of one connection; everything received is kept in :attr:`received`."""

    def __init__(self, sock: socket.socket, server: ScriptedServer) -> None:
        self.sock = sock
        self.server = server
        self.received = bytearray()
        self._buf = bytearray()

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the client went away")
        self._buf += chunk
        self.received += chunk
        self.server.got_bytes(len(chunk))

    def read_request(self) -> dict[str, str]:
        """The client's HTTP request head: header names lower-cased (``:request`` is the request line)."""
        while b"\r\n\r\n" not in self._buf:
            self._more()
        head, _, rest = bytes(self._buf).partition(b"\r\n\r\n")
        self._buf = bytearray(rest)
        lines = head.decode("latin-1").split("\r\n")
        headers = {":request": lines[0]}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return headers

    @staticmethod
    def upgrade_answer(headers: dict[str, str]) -> bytes:
        """The ``101 Switching Protocols`` answer to the request ``headers``."""
        accept = base64.b64encode(hashlib.sha1(headers["sec-websocket-key"].encode() + _WS_GUID).digest())
        return (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )

    def accept_upgrade(self) -> None:
        """Read the upgrade request and answer ``101`` at once."""
        self.send(self.upgrade_answer(self.read_request()))

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def trickle(self, data: bytes, interval: float, stop: threading.Event | None = None) -> None:
        """Send ``data`` one byte every ``interval`` seconds (until ``stop`` is set or the client leaves)."""
        stop = stop if stop is not None else self.server.stopping
        for i in range(len(data)):
            if stop.wait(interval):
                return
            self.sock.sendall(data[i : i + 1])

    def read_frame(self) -> str:
        """The client's next text frame (masked, as a client sends it)."""
        while len(self._buf) < 2:
            self._more()
        size = self._buf[1] & 0x7F
        head = 2
        if size == 126:
            head = 4
        elif size == 127:
            head = 10
        while len(self._buf) < head + 4:
            self._more()
        if head > 2:
            size = int.from_bytes(self._buf[2:head], "big")
        while len(self._buf) < head + 4 + size:
            self._more()
        mask = self._buf[head : head + 4]
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(self._buf[head + 4 : head + 4 + size]))
        del self._buf[: head + 4 + size]
        return data.decode()

    def open_and_accept(self, ping_interval_ms: int = 5000, ping_timeout_ms: int = 5000) -> str:
        """Upgrade, send the open packet, read the CONNECT and accept it; the CONNECT's text."""
        self.accept_upgrade()
        self.send(server_frame(encode_open("hostile-sid", ping_interval_ms, ping_timeout_ms)))
        connect = self.read_frame()
        self.send(server_frame('40{"sid":"hostile-namespace-sid"}'))
        return connect

    def wait_closed(self, timeout: float = 10) -> None:
        """Read (and record) until the client closes the connection or ``timeout`` passes."""
        self.sock.settimeout(timeout)
        with contextlib.suppress(OSError, ConnectionError):
            while True:
                self._more()


class ScriptedServer:
    """A TCP server on 127.0.0.1 running ``script(peer, number)`` per connection (1-based number).

    Args:
        script: What to do with one connection; an exception ends it quietly.
    """

    def __init__(self, script: Callable[[Peer, int], Any]) -> None:
        self.script = script
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.accepted = 0
        self.bytes_received = 0
        #: Set when the test ends: trickles and waits stop.
        self.stopping = threading.Event()
        self.peers: list[Peer] = []
        self._socks: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept_loop, name="test-hostile-accept", daemon=True)
        self._accepter.start()

    def got_bytes(self, count: int) -> None:
        with self.changed:
            self.bytes_received += count
            self.changed.notify_all()

    def _accept_loop(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            with self.changed:
                if self.stopping.is_set():
                    sock.close()
                    return
                self.accepted += 1
                number = self.accepted
                peer = Peer(sock, self)
                self.peers.append(peer)
                self._socks.append(sock)
                thread = threading.Thread(target=self._run, args=(peer, number), name="test-hostile-peer", daemon=True)
                self._threads.append(thread)
                self.changed.notify_all()
            thread.start()

    def _run(self, peer: Peer, number: int) -> None:
        with contextlib.suppress(Exception):
            self.script(peer, number)

    def wait_accepted(self, count: int, timeout: float = 10) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.accepted >= count, timeout)

    def close(self) -> None:
        self.stopping.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._accepter.join(5)
        with self.lock:
            socks = list(self._socks)
            threads = list(self._threads)
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(5)
        for sock in socks:
            sock.close()
