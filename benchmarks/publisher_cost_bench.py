"""The event publisher's cost in the socket's process, per ``message:new`` event, with no socket.

The in-process replay of ``event_cost_bench.py`` (the client's reader loop, parsers, messages,
emitter and worker pool, a counting ``message_create`` listener), run with and without an
:class:`~service_client.fleet.EventPublisher` tapping the events into a ``redis-server`` that
this script starts on a free port: the difference is what the publisher costs the socket's
process (its tap on the reader thread, its batches on a thread of its own). A run with the
publisher ends once every event is in Redis.

Prints ``name: value`` lines:

- ``events``, ``runs``, ``json_decoder``;
- ``plain_cpu_us``, ``publishing_cpu_us``: this process's CPU time per event (median of
  ``--runs`` runs, plain and publishing runs alternating); ``publisher_cpu_us``: their difference;
- ``redis_script_us_per_event``: Redis's own time in the ``PUBLISH`` script per event (its
  ``INFO commandstats``), CPU that Redis takes from the same cores;
- with ``--redis-instructions`` (valgrind installed): ``redis_instructions``, the instructions
  ``redis-server`` (run under ``valgrind --tool=callgrind``) spends per event in the publisher's
  script, its arguments built by the publisher's own code, in batches of 100 events of one
  partition (two servers: 10 batches, then 110; the difference over 10,000 events);
- with ``--instructions`` (valgrind installed): ``plain_instructions``,
  ``publishing_instructions`` and ``publisher_instructions`` per event, counted by
  ``valgrind --tool=callgrind`` (load-proof: compare two versions with these on a busy
  machine). Each mode is run twice under valgrind (a warm-up replay only, then the warm-up and
  ``--runs`` more replays); the difference divided by the extra events is the count per event.

Run: ``python benchmarks/publisher_cost_bench.py [--events N] [--runs N] [--instructions]
[--redis-instructions]``
(needs the ``redis`` extra and ``redis-server`` on the PATH).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def replay(url: str, blob: bytes, count: int, publish: bool) -> float:
    """One replay of ``blob`` (``count`` frames); this process's CPU microseconds per event."""
    import event_cost_bench  # noqa: PLC0415 - the benchmark directory is not a package

    from service_client import Client
    from service_client.events import EventEmitter, OrderedWorkerPool
    from service_client.fleet import EventPublisher
    from service_client.gateway import decoder
    from service_client.gateway.reader import ConnectionReader
    from service_client.state.connection import ConnectionState

    pool = OrderedWorkerPool(8, name="publisher_cost_bench")
    emitter = EventEmitter(pool, name="publisher_cost_bench")
    state = ConnectionState(None, rest=None, events=emitter, pool=pool, site_url="")  # type: ignore[arg-type]
    done = threading.Event()
    seen = [0]

    def on_message(message: Any) -> None:
        seen[0] += 1  # one channel: one worker at a time
        if seen[0] == count:
            done.set()

    emitter.on("message_create", on_message)
    client = publisher = None
    if publish:
        # The publisher needs a client (never logged in here); its tap is moved to the replay's state.
        client = Client(base_url="http://127.0.0.1:9", socket_url="http://127.0.0.1:9")
        publisher = EventPublisher(client, url, partitions=64, namespace="publisher_cost_bench",
                                   max_stream_length=10 * count)
        deadline = time.monotonic() + 30
        while not publisher._ready.is_set():
            if time.monotonic() > deadline:
                raise SystemExit("the publisher did not start (is Redis up?)")
            time.sleep(0.005)
        state.event_tap, client._connection.event_tap = client._connection.event_tap, None
        state.event_tap_frames = client._connection.event_tap_frames
    reader = ConnectionReader.__new__(ConnectionReader)
    reader._closed = False
    reader._on_event = state.parsers.handle  # as the client wires it
    reader._frame_decoders = state.parsers.frame_decoders(decoder.NAME)
    try:
        cpu = time.process_time()
        reader._read_loop(event_cost_bench._Link(blob))  # type: ignore[arg-type]
        if not done.wait(120):
            raise SystemExit(f"the listener saw {seen[0]} of {count} events")
        if publisher is not None and not publisher.flush(120):
            raise SystemExit("the publisher did not add every event")
        cpu = time.process_time() - cpu
    finally:
        if publisher is not None:
            publisher.close()
        if client is not None:
            client.destroy()
        emitter.close()
        pool.shutdown()
    if publisher is not None and publisher.published_events != count:
        raise SystemExit(f"the publisher added {publisher.published_events} of {count} events")
    return cpu / count * 1e6


#: The replay run under valgrind: argv = Redis URL, frames file, mode, number of extra replays.
_REPLAY = """
import pickle, sys
sys.path.insert(0, {here!r})
import publisher_cost_bench
with open(sys.argv[2], "rb") as file:
    count, blobs = pickle.load(file)
publish = sys.argv[3] == "publish"
for blob in blobs[: 1 + int(sys.argv[4])]:
    publisher_cost_bench.replay(sys.argv[1], blob, count, publish)
"""


def _instructions(valgrind: str, script: str, url: str, frames: str, mode: str, runs: int, workdir: str) -> int:
    out = os.path.join(workdir, f"callgrind.{mode}.{runs}.out")
    result = subprocess.run(
        [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, script, url, frames, mode,
         str(runs)],
        capture_output=True, text=True, timeout=1800, check=False,
    )
    match = _COLLECTED.search(result.stderr)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"valgrind failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return int(match.group(1))


def redis_instructions(valgrind: str, workdir: str) -> float:
    """Instructions ``redis-server`` spends per event in the publisher's script (see the module)."""
    import types

    import event_cost_bench  # noqa: PLC0415
    import redis
    from _emulator_process import free_port  # noqa: PLC0415

    from service_client.fleet import EventPublisher
    from service_client.fleet._redis import dumps
    from service_client.fleet.routing import FleetKeys
    from service_client.fleet.scripts import PUBLISH

    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on the PATH")
    counts: dict[int, int] = {}
    for batches in (10, 110):
        port = free_port()
        err = os.path.join(workdir, f"redis.{batches}.err")
        with open(err, "w", encoding="utf-8") as log:
            proc = subprocess.Popen(
                [valgrind, "--tool=callgrind", f"--callgrind-out-file={workdir}/callgrind.redis.{batches}", binary,
                 "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL, stderr=log)
        raw = redis.Redis(port=port)
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    raw.ping()
                    break
                except redis.ConnectionError:
                    if time.monotonic() > deadline:
                        raise SystemExit("redis-server did not start under valgrind") from None
                    time.sleep(0.2)
            script = raw.register_script(PUBLISH)
            # The publisher's own _build makes the arguments, as each version of it does.
            stub = types.SimpleNamespace(_keys=FleetKeys("bench"), _epoch="e", _seqs=[0], _state_seq=0)
            for b in range(batches):
                items = []
                for i in range(100):
                    record = dict(event_cost_bench.RECORD, publicId=str(b * 100 + i))
                    items.append((0, dumps(["message:new", record["channelPublicId"], [record]]), False, False, None))
                keys, args, _ = EventPublisher._build(stub, items)  # type: ignore[arg-type]
                script(keys=keys, args=args)
            raw.shutdown(nosave=True)
        except redis.ConnectionError:
            pass  # the shutdown closes the connection
        finally:
            raw.close()
            proc.wait(120)
        with open(err, encoding="utf-8") as log:
            match = _COLLECTED.search(log.read())
        if match is None:
            raise SystemExit("valgrind printed no count for redis-server")
        counts[batches] = int(match.group(1))
    return (counts[110] - counts[10]) / 10_000


def main() -> None:
    """Start Redis, run the replays and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=20_000, help="frames per replay")
    parser.add_argument("--runs", type=int, default=5, help="replays of each kind counted (after a warm-up)")
    parser.add_argument("--instructions", action="store_true", help="also count instructions under valgrind")
    parser.add_argument("--redis-instructions", action="store_true",
                        help="also count Redis's instructions per event under valgrind")
    args = parser.parse_args()
    if args.events < 1 or args.runs < 1:
        parser.error("--events and --runs must be at least 1")
    import event_cost_bench  # noqa: PLC0415
    import redis
    from events_fleet_bench import RedisProcess  # noqa: PLC0415

    from service_client.gateway import decoder

    srv = RedisProcess()
    raw = redis.Redis.from_url(srv.url)
    try:
        blobs = [event_cost_bench.frames(args.events, i * args.events) for i in range(args.runs + 1)]
        replay(srv.url, blobs[0], args.events, False)  # warm-up
        replay(srv.url, blobs[0], args.events, True)
        raw.config_resetstat()
        plain: list[float] = []
        publishing: list[float] = []
        for blob in blobs[1:]:
            plain.append(replay(srv.url, blob, args.events, False))
            publishing.append(replay(srv.url, blob, args.events, True))
        stats = raw.info("commandstats")
        script_us = sum(v["usec"] for k, v in stats.items() if k.startswith("cmdstat_eval"))
        print(f"events: {args.events}")
        print(f"runs: {args.runs}")
        print(f"json_decoder: {decoder.NAME}")
        print(f"plain_cpu_us_runs: {' '.join(f'{v:.2f}' for v in plain)}")
        print(f"publishing_cpu_us_runs: {' '.join(f'{v:.2f}' for v in publishing)}")
        print(f"plain_cpu_us: {statistics.median(plain):.2f}")
        print(f"publishing_cpu_us: {statistics.median(publishing):.2f}")
        print(f"publisher_cpu_us: {statistics.median(publishing) - statistics.median(plain):.2f}")
        print(f"redis_script_us_per_event: {script_us / (args.events * args.runs):.2f}")
        if args.redis_instructions:
            valgrind = shutil.which("valgrind")
            if valgrind is None:
                print("redis_instructions: skipped (valgrind is not installed)")
            else:
                with tempfile.TemporaryDirectory(prefix="publisher_cost_bench-") as workdir:
                    print(f"redis_instructions: {redis_instructions(valgrind, workdir):.0f}")
        if args.instructions:
            valgrind = shutil.which("valgrind")
            if valgrind is None:
                print("publisher_instructions: skipped (valgrind is not installed)")
                return
            import pickle

            with tempfile.TemporaryDirectory(prefix="publisher_cost_bench-") as workdir:
                frames = os.path.join(workdir, "frames.pickle")
                with open(frames, "wb") as file:
                    pickle.dump((args.events, blobs[:2]), file)
                script = os.path.join(workdir, "replay.py")
                with open(script, "w", encoding="utf-8") as file:
                    file.write(_REPLAY.format(here=str(HERE)))
                per: dict[str, float] = {}
                for mode in ("plain", "publish"):
                    base = _instructions(valgrind, script, srv.url, frames, mode, 0, workdir)
                    total = _instructions(valgrind, script, srv.url, frames, mode, 1, workdir)
                    per[mode] = (total - base) / args.events
            print(f"plain_instructions: {per['plain']:.0f}")
            print(f"publishing_instructions: {per['publish']:.0f}")
            print(f"publisher_instructions: {per['publish'] - per['plain']:.0f}")
    finally:
        raw.close()
        srv.stop()


if __name__ == "__main__":
    main()
