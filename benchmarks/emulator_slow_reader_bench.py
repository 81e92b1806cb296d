"""What a socket client that never reads costs the emulator, and whether the others are served.

Run: ``python benchmarks/emulator_slow_reader_bench.py [--events N]``

The emulator runs in its own process (``python -m service_client emulator``), twice. Each time a
reader that reads every frame (``emulator_bench.OrderedReader``) is a member of a server; ``--events`` messages of 1 KB are posted
to its channel, in bulk posts of 10,000 through the control plane, and the emulator process's
resident memory is read before and after. The second time another member's client
(websocket-client, 4 KiB receive buffer) joins just before the posts and never reads again.
The emulator's journals are set to 100 entries, so that they do not keep the bodies.

Prints ``name: value`` lines:

- ``slow_reader_events``: messages posted;
- ``slow_reader_rss_growth_mb`` / ``slow_reader_rss_growth_alone_mb``: growth of the
  emulator's resident memory, MB, with and without the client that never reads (the messages
  themselves are stored: both include them);
- ``slow_reader_extra_rss_mb``: the difference, what that client cost;
- ``slow_reader_seconds``: from its join to the reader's last message (under 45 s, the
  emulator's ping interval and timeout, so it was not dropped for missing pings);
- ``slow_reader_disconnected``: 1 when it was no longer connected then;
- ``slow_reader_other_ok``: 1 when the reader got every message, in order, both times.

Exit status 1 when the reader did not get every message.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import threading
import time

import psutil
import websocket
from _emulator_process import EmulatorProcess
from emulator_bench import OrderedReader

#: Messages per bulk post (10,000 of 1 KB: under the 16 MiB body bound).
BULK = 10_000
#: Seconds the reader may take to get every message.
READ_TIMEOUT_S = 300.0


def connect(root: str, token: str, *, rcvbuf: int | None = None) -> websocket.WebSocket:
    """A websocket-client connection joined as ``token`` (Engine.IO OPEN and socket.io CONNECT read)."""
    options = {} if rcvbuf is None else {"sockopt": ((socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf),)}
    ws = websocket.create_connection(root.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket",
                                     timeout=30, **options)
    if not ws.recv().startswith("0{"):
        raise RuntimeError("no Engine.IO OPEN")
    ws.send("40" + json.dumps({"token": token}))
    if not ws.recv().startswith("40"):
        raise RuntimeError("no socket.io CONNECT answer")
    return ws


def one_phase(events: int, stalled_client: bool) -> dict[str, float]:
    """Post ``events`` messages to a reader, with or without a client that never reads.

    Returns:
        ``{"rss_growth_mb", "seconds", "disconnected", "ordered"}``: the emulator's memory growth,
        the seconds from the stalled client's join to the reader's last message, whether the
        stalled client was no longer connected then, whether the reader got everything in order.
    """
    emu = EmulatorProcess()
    try:
        emu.post("/settings", {"journalEntries": 100})  # the request journal would keep the bodies
        human = emu.post("/users", {"name": "alice"})
        other = emu.post("/users", {"name": "stalled"})
        created = emu.post("/servers", {"name": "Slow", "ownerId": human["user"]["publicId"],
                                        "channels": [{"name": "general", "type": "TEXT"}]})
        emu.post(f"/servers/{created['server']['publicId']}/members", {"userId": other["user"]["publicId"]})
        cid = created["channels"][0]["publicId"]
        reader = OrderedReader(emu.root, human["token"])
        got: list[str] = []
        done = threading.Event()

        def read() -> None:
            try:
                frames, _end = reader.read_events(events, time.perf_counter() + READ_TIMEOUT_S)
                got.extend(json.loads(frame[2:])[1]["content"].split(" ", 1)[0] for frame in frames)
            finally:
                done.set()

        threading.Thread(target=read, name="slow_reader_bench-reader", daemon=True).start()
        process = psutil.Process(emu.proc.pid)
        before = process.memory_info().rss
        stalled = connect(emu.root, other["token"], rcvbuf=4096) if stalled_client else None
        start = time.monotonic()
        for first in range(0, events, BULK):
            contents = [f"{i} " + "m" * 1000 for i in range(first, min(events, first + BULK))]
            emu.post("/messages/bulk", {"channelId": cid, "authorId": human["user"]["publicId"], "contents": contents})
        done.wait(READ_TIMEOUT_S)
        seconds = time.monotonic() - start
        count = emu.call("GET", "/connections")["count"]
        after = process.memory_info().rss
        if stalled is not None:
            stalled.close(timeout=1)
        reader.close()
    finally:
        emu.stop()
    return {"rss_growth_mb": (after - before) / 1e6, "seconds": seconds, "disconnected": float(count == 1),
            "ordered": float(got == [str(i) for i in range(events)])}


def main(argv: list[str] | None = None) -> int:
    """Print the figures as ``name: value`` lines; 1 when the reader missed messages."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=40_000, help="messages posted (default 40000)")
    args = parser.parse_args(argv)
    if args.events < 1:
        parser.error("--events must be positive")
    alone = one_phase(args.events, stalled_client=False)
    stalled = one_phase(args.events, stalled_client=True)
    print(f"slow_reader_events: {args.events}")
    print(f"slow_reader_rss_growth_mb: {stalled['rss_growth_mb']:.0f}")
    print(f"slow_reader_rss_growth_alone_mb: {alone['rss_growth_mb']:.0f}")
    print(f"slow_reader_extra_rss_mb: {stalled['rss_growth_mb'] - alone['rss_growth_mb']:.0f}")
    print(f"slow_reader_seconds: {stalled['seconds']:.1f}")
    print(f"slow_reader_disconnected: {int(stalled['disconnected'])}")
    print(f"slow_reader_other_ok: {int(stalled['ordered'] and alone['ordered'])}", flush=True)
    return 0 if stalled["ordered"] and alone["ordered"] else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
