"""Socket throughput and send latency against the in-process emulator (issue 2).

Prints ``name: value`` lines, all measured in one run:

- ``events_per_s``: 20,000 messages posted by the emulator in bulk, counted at
  a ``message_create`` listener of our client (first post to last event);
- ``socketio_events_per_s``: the same stream received by python-socketio's
  synchronous client with a plain ``message:new`` handler;
- ``events_ratio_vs_socketio``: ours divided by theirs (goal >= 2.0);
- ``send_p50_ms``, ``send_p99_ms``: 2,000 sequential ``send_message`` round trips.

Run: ``python benchmarks/gateway_bench.py [--events N] [--sends N]``.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from typing import Any

import socketio

from service_client import Client
from service_client.emulator import Emulator

#: Seconds a stream may take before the run is declared failed.
STREAM_TIMEOUT_S = 120.0


def _world(emu: Emulator) -> dict[str, Any]:
    human = emu.create_user("alice")
    bot = emu.create_user("benchbot", bot=True)
    created = emu.create_server(
        "Bench", human["user"]["publicId"], channels=[{"name": "general", "type": "TEXT"}]
    )
    server_id = created["server"]["publicId"]
    emu.add_member(server_id, bot["user"]["publicId"])
    return {
        "bot_token": bot["token"],
        "human_id": human["user"]["publicId"],
        "channel_id": created["channels"][0]["publicId"],
    }


def _post(emu: Emulator, world: dict[str, Any], count: int) -> None:
    contents = [f"message {i}" for i in range(count)]
    emu.post_messages(world["channel_id"], world["human_id"], contents)


def measure_ours(emu: Emulator, world: dict[str, Any], count: int) -> float:
    """Events per second at a ``message_create`` listener of our client."""
    client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
    done = threading.Event()
    seen = [0]

    @client.on("message_create")
    def on_message(message: Any) -> None:
        seen[0] += 1  # one channel: listeners run in order on one worker
        if seen[0] == count:
            done.set()

    client.login(world["bot_token"], timeout=30)
    try:
        start = time.perf_counter()
        _post(emu, world, count)
        if not done.wait(STREAM_TIMEOUT_S):
            raise SystemExit(f"our client received {seen[0]} of {count} events")
        return count / (time.perf_counter() - start)
    finally:
        client.destroy()


def measure_socketio(emu: Emulator, world: dict[str, Any], count: int) -> float:
    """Events per second at a plain handler of python-socketio's synchronous client."""
    sio = socketio.Client(reconnection=False)
    done = threading.Event()
    lock = threading.Lock()
    seen = [0]

    @sio.on("message:new")
    def on_message(data: Any) -> None:
        with lock:  # its handlers run on a thread each; count safely
            seen[0] += 1
            if seen[0] == count:
                done.set()

    sio.connect(emu.socket_url, auth={"token": world["bot_token"]}, transports=["websocket"], wait_timeout=15)
    try:
        start = time.perf_counter()
        _post(emu, world, count)
        if not done.wait(STREAM_TIMEOUT_S):
            raise SystemExit(f"python-socketio received {seen[0]} of {count} events")
        return count / (time.perf_counter() - start)
    finally:
        sio.disconnect()


def measure_sends(emu: Emulator, world: dict[str, Any], count: int) -> list[float]:
    """Milliseconds of each of ``count`` sequential ``send_message`` round trips."""
    client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
    client.login(world["bot_token"], timeout=30)
    try:
        times = []
        for i in range(count):
            start = time.perf_counter()
            client.send_message(world["channel_id"], f"send {i}")
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        client.destroy()


def main() -> None:
    """Run every measurement against one in-process emulator and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--sends", type=int, default=2_000)
    args = parser.parse_args()
    with Emulator() as emu:
        world = _world(emu)
        measure_ours(emu, world, 500)  # warm-up: imports, JIT-free caches, sqlite pages
        ours = measure_ours(emu, world, args.events)
        theirs = measure_socketio(emu, world, args.events)
        sends = sorted(measure_sends(emu, world, args.sends))
    print(f"events: {args.events}")
    print(f"events_per_s: {ours:.0f}")
    print(f"socketio_events_per_s: {theirs:.0f}")
    print(f"events_ratio_vs_socketio: {ours / theirs:.2f}")
    print(f"sends: {args.sends}")
    print(f"send_p50_ms: {statistics.median(sends):.2f}")
    print(f"send_p99_ms: {sends[min(len(sends) - 1, int(len(sends) * 0.99))]:.2f}")


if __name__ == "__main__":
    main()
