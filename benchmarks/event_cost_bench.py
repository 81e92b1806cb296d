"""CPU cost of one ``message:new`` event in the client, with no socket and no server.

The firehose of ``gateway_bench.py`` measured in-process: the client's own
reader loop (:class:`service_client.gateway.reader.ConnectionReader`) reads
pre-encoded WebSocket frames of an emulator message record from an in-memory
stand-in for the socket (256 KiB a read, as the real reader asks), and every
event goes through the real parsers, the author merge into ``client.users``,
the :class:`~service_client.Message`, the event emitter and the worker pool
to a ``message_create`` listener that counts it. No other process shares the
work and no socket or scheduler of another process is timed; the CPU time
per instruction still varies with the machine's load, so compare two
versions with alternating runs, or count instructions
(``benchmarks/event_instructions.py`` runs this replay under valgrind) where
the load is high.

Prints ``name: value`` lines:

- ``events``: events per run; ``json_decoder``: ``msgspec`` or ``json``;
- ``event_cpu_us_runs``, ``event_cpu_us_min``, ``event_cpu_us_median``: CPU
  time of the process (reader and worker threads) per event, microseconds;
- ``event_wall_us_median``: wall-clock time per event, from the first read to
  the listener's last call.

Run: ``python benchmarks/event_cost_bench.py [--events N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from typing import Any

from service_client.events import EventEmitter, OrderedWorkerPool
from service_client.gateway import decoder
from service_client.gateway.reader import ConnectionReader, FrameReader
from service_client.state.connection import ConnectionState

#: A message record as the emulator sends it in ``message:new`` (ids and content vary per frame).
RECORD: dict[str, Any] = {
    "publicId": "100021779438839907",
    "content": "a message of the firehose &amp;amp; more",
    "author": {"publicId": "100021779438839900", "name": "alice", "tag": "9380", "image": None,
               "isBot": False, "status": "offline", "createdAt": "2026-11-25T18:26:28.429Z"},
    "channelPublicId": "100021779438839905",
    "serverPublicId": "100021779438839902",
    "createdAt": "2026-11-25T18:26:28.445Z",
    "embeds": [],
    "fileUrl": None,
    "replyToId": None,
    "editedAt": None,
    "pinned": False,
}

#: Bytes a read of the stand-in socket returns at most (what the reader asks for).
READ_SIZE = 256 * 1024


def frames(count: int, first: int) -> bytes:
    """``count`` unmasked WebSocket text frames of ``42["message:new", record]``, each its own id."""
    base = int(RECORD["publicId"])
    parts: list[bytes] = []
    for i in range(first, first + count):
        record = dict(RECORD, publicId=str(base + 1 + i), content=f"firehose message {i}")
        data = ("42" + json.dumps(["message:new", record], separators=(",", ":"))).encode()
        size = len(data)
        head = bytes((0x81, size)) if size < 126 else bytes((0x81, 126, size >> 8, size & 0xFF))
        parts.append(head + data)
    return b"".join(parts)


class _Socket:
    """The frames, given ``READ_SIZE`` bytes at a time; then EOF."""

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        self._pos = 0

    def recv(self, size: int) -> bytes:
        chunk = self._blob[self._pos : self._pos + min(size, READ_SIZE)]
        self._pos += len(chunk)
        return chunk


class _Link:
    def __init__(self, blob: bytes) -> None:
        self.reader = FrameReader(_Socket(blob), lambda opcode, payload: None)  # type: ignore[arg-type]
        self.ws = None


def run(count: int, blob: bytes) -> tuple[float, float]:
    """CPU and wall microseconds per event of one run over ``blob`` (``count`` frames)."""
    pool = OrderedWorkerPool(8, name="event_cost_bench")
    emitter = EventEmitter(pool, name="event_cost_bench")
    state = ConnectionState(None, rest=None, events=emitter, pool=pool, site_url="")  # type: ignore[arg-type]
    done = threading.Event()
    seen = [0]

    def on_message(message: Any) -> None:
        seen[0] += 1  # one channel: one worker at a time
        if seen[0] == count:
            done.set()

    emitter.on("message_create", on_message)
    reader = ConnectionReader.__new__(ConnectionReader)
    reader._closed = False
    reader._on_event = state.parsers.handle  # as the client wires it
    reader._frame_decoders = state.parsers.frame_decoders(decoder.NAME)
    try:
        cpu = time.process_time()
        start = time.perf_counter()
        reader._read_loop(_Link(blob))  # type: ignore[arg-type]
        if not done.wait(120):
            raise SystemExit(f"the listener saw {seen[0]} of {count} events")
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
    finally:
        emitter.close()
        pool.shutdown()
    return cpu / count * 1e6, wall / count * 1e6


def main() -> None:
    """Run the replay ``--repeat`` times after a warm-up and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    blobs = [frames(args.events, i * args.events) for i in range(args.repeat + 1)]
    run(args.events, blobs[0])  # warm-up: the caches and the record's layout
    results = [run(args.events, blob) for blob in blobs[1:]]
    cpu = [r[0] for r in results]
    print(f"events: {args.events}")
    print(f"json_decoder: {decoder.NAME}")
    print(f"event_cpu_us_runs: {' '.join(f'{c:.2f}' for c in cpu)}")
    print(f"event_cpu_us_min: {min(cpu):.2f}")
    print(f"event_cpu_us_median: {statistics.median(cpu):.2f}")
    print(f"event_wall_us_median: {statistics.median(r[1] for r in results):.2f}")


if __name__ == "__main__":
    main()
