"""A "firehose" Socket.IO server for ``gateway_bench.py``: it measures the client, not a server.

Run in its own process: ``python benchmarks/_firehose.py --record FILE [--port N]``.

A minimal websocket server (wsproto on blocking sockets, one thread per
connection) that speaks just enough Engine.IO v4 / Socket.IO v5 for a client
to connect: it accepts any token, sends the Engine.IO open packet, answers the
Socket.IO CONNECT of the default namespace with ``40{"sid":...}``, sends an
Engine.IO ping every ``pingInterval`` (the client's pong is read and
ignored), answers websocket pings and close frames, and ignores every event a
client sends.

Commands come on standard input, one a line; each answer is one line on
standard output:

- ``fire N``: write N ``message:new`` frames to every connected session as
  one ``sendall`` of one blob; answers ``fired N S`` (S: sessions written
  to) once written. The frames are encoded the first time a count is asked
  (``prepare N`` does it ahead, to keep it out of a timing).
- ``prepare N``: encode the frames for ``fire N`` now; answers ``ready N``.
- ``sessions``: answers ``sessions S``.
- ``quit`` (or end of input): stop.

The frames are the message record given in ``--record`` (a JSON file holding
one message record as the service sends it), each with its own ``publicId``
and ``content`` (``"firehose message <i>"``), written in order.

At start it prints ``listening <port>``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import sys
import threading
from typing import Any

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Ping,
    Request,
    TextMessage,
)
from wsproto.frame_protocol import FrameProtocol

#: Engine.IO ping interval and timeout announced in the open packet, ms.
PING_INTERVAL_MS = 25_000
PING_TIMEOUT_MS = 20_000

_sids = itertools.count(1)


class Session:
    """One websocket connection: its socket, its wsproto state and its write lock."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.ws = WSConnection(ConnectionType.SERVER)
        self.lock = threading.Lock()  # every write (wsproto's own and the blobs) goes under it
        self.connected = False  # the default namespace is connected
        self.closed = threading.Event()

    def send_event(self, event: Any) -> None:
        """Encode a wsproto event and write it."""
        with self.lock:
            data = self.ws.send(event)
            if data:
                self.sock.sendall(data)

    def send_text(self, text: str) -> None:
        """Write one text message."""
        from wsproto.events import Message

        self.send_event(Message(data=text))

    def write_blob(self, blob: bytes) -> None:
        """Write already encoded frames."""
        with self.lock:
            self.sock.sendall(blob)


class Firehose:
    """The listening socket, the sessions and the pre-encoded frame blobs."""

    def __init__(self, record: dict[str, Any], port: int) -> None:
        self.record = record
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port = self.listener.getsockname()[1]
        self.sessions: set[Session] = set()
        self.sessions_lock = threading.Lock()
        self.blobs: dict[int, bytes] = {}
        self.counter = itertools.count()

    def blob(self, count: int) -> bytes:
        """``count`` ``message:new`` frames, each with a new id, as one bytes object."""
        cached = self.blobs.get(count)
        if cached is not None:
            return cached
        encoder = FrameProtocol(client=False, extensions=[])
        base = int(self.record.get("publicId") or "700000000000000000")
        parts: list[bytes] = []
        for _ in range(count):
            i = next(self.counter)
            record = dict(self.record, publicId=str(base + 1 + i), content=f"firehose message {i}")
            text = "42" + json.dumps(["message:new", record], separators=(",", ":"), ensure_ascii=False)
            parts.append(encoder.send_data(text, fin=True))
        blob = b"".join(parts)
        self.blobs = {count: blob}  # one cached size: a second fire of it sends the same frames
        return blob

    def serve(self) -> None:
        """Accept connections forever (daemon thread)."""
        while True:
            sock, _ = self.listener.accept()
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            session = Session(sock)
            threading.Thread(target=self.handle, args=(session,), name="firehose-conn", daemon=True).start()

    def handle(self, session: Session) -> None:
        """Read one connection: handshake, CONNECT, pongs; until it closes."""
        sid = f"firehose{next(_sids)}"
        try:
            while True:
                data = session.sock.recv(65536)
                if not data:
                    return
                session.ws.receive_data(data)
                for event in session.ws.events():
                    if isinstance(event, Request):
                        session.send_event(AcceptConnection())
                        session.send_text("0" + json.dumps({
                            "sid": sid, "upgrades": [], "pingInterval": PING_INTERVAL_MS,
                            "pingTimeout": PING_TIMEOUT_MS, "maxPayload": 1_000_000,
                        }, separators=(",", ":")))
                        threading.Thread(target=self.pinger, args=(session,), name="firehose-ping",
                                         daemon=True).start()
                    elif isinstance(event, TextMessage):
                        self.on_text(session, sid, event.data)
                    elif isinstance(event, Ping):
                        session.send_event(event.response())
                    elif isinstance(event, CloseConnection):
                        session.send_event(event.response())
                        return
        except OSError:
            return
        finally:
            session.closed.set()
            with self.sessions_lock:
                self.sessions.discard(session)
            try:
                session.sock.close()
            except OSError:
                pass

    def on_text(self, session: Session, sid: str, text: str) -> None:
        """A client message: the namespace CONNECT and DISCONNECT matter; the rest is ignored."""
        if text.startswith("40"):
            session.connected = True  # counted before the client can see the answer
            with self.sessions_lock:
                self.sessions.add(session)
            session.send_text("40" + json.dumps({"sid": sid + "-io"}, separators=(",", ":")))
        elif text.startswith("41"):
            session.connected = False
            with self.sessions_lock:
                self.sessions.discard(session)

    @staticmethod
    def pinger(session: Session) -> None:
        """Send an Engine.IO ping every ping interval until the session ends."""
        while not session.closed.wait(PING_INTERVAL_MS / 1000):
            try:
                session.send_text("2")
            except Exception:  # noqa: BLE001 - the session is ending
                return

    def fire(self, count: int) -> int:
        """Write ``count`` frames to every connected session; how many sessions were written to."""
        blob = self.blob(count)
        with self.sessions_lock:
            sessions = [s for s in self.sessions if s.connected]
        written = 0
        for session in sessions:
            try:
                session.write_blob(blob)
                written += 1
            except OSError:
                pass
        return written


def main() -> None:
    """Serve until ``quit`` or the end of standard input."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", required=True, help="JSON file with one message record")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with open(args.record, encoding="utf-8") as handle:
        record = json.load(handle)
    hose = Firehose(record, args.port)
    threading.Thread(target=hose.serve, name="firehose-accept", daemon=True).start()
    print(f"listening {hose.port}", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "fire":
            count = int(words[1])
            print(f"fired {count} {hose.fire(count)}", flush=True)
        elif words[0] == "prepare":
            count = int(words[1])
            hose.blob(count)
            print(f"ready {count}", flush=True)
        elif words[0] == "sessions":
            with hose.sessions_lock:
                print(f"sessions {sum(1 for s in hose.sessions if s.connected)}", flush=True)
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
