"""How long other requests wait while the emulator runs message searches.

Run: ``python benchmarks/emulator_search_bench.py [--messages N] [--seconds S]``

The emulator runs in its own process (``python -m service_client emulator``). A channel gets
``--messages`` messages of about 1 KB each (words drawn from a vocabulary of 5,000, so that
every word matches about a fortieth of them), posted in bulk through the control plane. Then one
thread searches that channel without a pause for ``--seconds`` seconds, with the costliest
queries the emulator accepts, in turn: 32 common words (every one must match), one term of
1,024 characters, and a single word that matches about a fortieth of the messages. Meanwhile
another thread sends ``GET /api/v2/auth/me`` (a request that reads the store) every 10 ms and
times each answer. The same probe runs during the first search (when the index takes in every
message), and for as long as the busy phase with no search, for comparison.

Prints ``name: value`` lines:

- ``search_messages``: messages in the channel;
- ``search_first_ms``: the first search, which has the index take in every message first;
- ``search_first_other_p99_ms``: answer time of the other requests meanwhile;
- ``search_ms_p50`` / ``search_ms_p99``: answer time of the searches of the busy phase;
- ``searches``: how many searches the busy phase ran;
- ``search_other_p50_ms`` / ``search_other_p99_ms`` / ``search_other_max_ms``: answer time of
  the other requests while searches ran;
- ``idle_other_p99_ms``: the same with no search running;
- ``search_refused_ok``: 1 when a query of 1,025 characters and one of 33 terms were answered 400.

Exit status 1 when a search or a probe failed.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from typing import Any

import requests
from _emulator_process import EmulatorProcess

#: Words of the vocabulary the messages are drawn from.
VOCABULARY = [f"w{i}" for i in range(5000)]
#: Messages per bulk post (each about 1 KB: well under the 16 MiB body bound).
BULK = 5000
#: Interval of the probe requests, seconds.
PROBE_EVERY_S = 0.01


def message(rng: random.Random, size: int = 1000) -> str:
    """About ``size`` characters of vocabulary words."""
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(VOCABULARY)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def build_world(emu: EmulatorProcess, count: int) -> dict[str, str]:
    """A human owning a server with one TEXT channel of ``count`` messages; a bot member."""
    human = emu.post("/users", {"name": "alice"})
    bot = emu.post("/users", {"name": "searchbot", "bot": True})
    created = emu.post("/servers", {"name": "Search", "ownerId": human["user"]["publicId"],
                                    "channels": [{"name": "general", "type": "TEXT"}]})
    emu.post(f"/servers/{created['server']['publicId']}/members", {"userId": bot["user"]["publicId"]})
    cid = created["channels"][0]["publicId"]
    rng = random.Random(27)
    for start in range(0, count, BULK):
        contents = [message(rng) for _ in range(min(BULK, count - start))]
        emu.post("/messages/bulk", {"channelId": cid, "authorId": human["user"]["publicId"], "contents": contents})
    return {"token": bot["token"], "channel_id": cid}


class Probe(threading.Thread):
    """Sends ``GET /auth/me`` every :data:`PROBE_EVERY_S` until stopped; keeps each answer time (ms)."""

    def __init__(self, base_url: str, token: str) -> None:
        super().__init__(name="search_bench-probe", daemon=True)
        self.url = base_url + "/auth/me"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.stop = threading.Event()
        self.times_ms: list[float] = []
        self.failures: list[str] = []

    def run(self) -> None:
        while not self.stop.wait(PROBE_EVERY_S):
            start = time.perf_counter()
            try:
                status = self.session.get(self.url, timeout=60).status_code
            except requests.RequestException as exc:
                self.failures.append(repr(exc))
                continue
            self.times_ms.append((time.perf_counter() - start) * 1000)
            if status != 200:
                self.failures.append(f"status {status}")


def search(session: requests.Session, url: str, q: str) -> tuple[int, float]:
    """One search; its status and answer time (ms)."""
    start = time.perf_counter()
    status = session.get(url, params={"q": q, "limit": "25"}, timeout=120).status_code
    return status, (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    """Print the figures as ``name: value`` lines; 1 when a search or a probe failed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=30_000, help="messages in the channel (default 30000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase (default 10)")
    args = parser.parse_args(argv)
    if args.messages < 1 or args.seconds <= 0:
        parser.error("--messages and --seconds must be positive")
    emu = EmulatorProcess()
    try:
        world = build_world(emu, args.messages)
        url = f"{emu.base_url}/chat/{world['channel_id']}/search"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {world['token']}"
        first = Probe(emu.base_url, world["token"])
        first.start()
        status, first_ms = search(session, url, "w1")
        first.stop.set()
        first.join(60)
        refused = [search(session, url, "x" * 1025)[0], search(session, url, " ".join(VOCABULARY[:33]))[0]]
        queries = [" ".join(VOCABULARY[:32]), "y" * 1024, "w7"]
        failures: list[str] = [] if status == 200 else [f"first search: status {status}"]

        idle = Probe(emu.base_url, world["token"])
        idle.start()
        time.sleep(args.seconds)
        idle.stop.set()
        idle.join(60)

        busy = Probe(emu.base_url, world["token"])
        busy.start()
        search_ms: list[float] = []
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            status, took = search(session, url, queries[len(search_ms) % len(queries)])
            if status != 200:
                failures.append(f"search: status {status}")
            search_ms.append(took)
        busy.stop.set()
        busy.join(60)
        failures += first.failures + idle.failures + busy.failures
    finally:
        emu.stop()
    if failures or not busy.times_ms or not idle.times_ms or not first.times_ms:
        print(f"emulator_search_bench: {failures[:3] or 'no probe answered'}", file=sys.stderr)
        return 1
    figures: dict[str, Any] = {
        "search_messages": args.messages,
        "search_first_ms": round(first_ms, 1),
        "search_first_other_p99_ms": round(percentile(first.times_ms, 0.99), 1),
        "search_ms_p50": round(statistics.median(search_ms), 1),
        "search_ms_p99": round(percentile(search_ms, 0.99), 1),
        "searches": len(search_ms),
        "search_other_p50_ms": round(statistics.median(busy.times_ms), 1),
        "search_other_p99_ms": round(percentile(busy.times_ms, 0.99), 1),
        "search_other_max_ms": round(max(busy.times_ms), 1),
        "idle_other_p99_ms": round(percentile(idle.times_ms, 0.99), 1),
        "search_refused_ok": int(refused == [400, 400]),
    }
    for name, value in figures.items():
        print(f"{name}: {value}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
