"""How fast the emulator delivers a bulk post to one ordered reader.

Run: ``python benchmarks/emulator_bench.py [--events N] [--runs N]``

The emulator runs in its own process (``python -m service_client emulator``), so it does not
share the reader's GIL. The world (a human, a bot, one server with one TEXT channel) is built
through the control plane (``/_emulator``). One reader connects as the bot: a plain
websocket-client loop that does the Engine.IO / Socket.IO handshake itself, answers pings and
keeps every frame in arrival order. Each run posts ``--events`` messages in one
``POST /_emulator/messages/bulk`` and waits for the last ``message:new``.

Prints ``name: value`` lines:

- ``emulator_events_per_s``: median over the runs of ``events / (last event received - post
  sent)``, seconds from just before the bulk request is sent to the moment the reader has
  the last frame;
- ``emulator_events_per_s_min`` / ``emulator_events_per_s_max``: the spread of the runs;
- ``emulator_order_ok``: 1 when every run delivered exactly the posted contents, in order.

Exit status 1 when a run times out or delivers out of order.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from typing import Any

import requests
import websocket
from _emulator_process import EmulatorProcess

#: Seconds one run may take before it is declared failed.
RUN_TIMEOUT_S = 120.0
#: Seconds the emulator process may take to start listening.
START_TIMEOUT_S = 30.0


def _frame_end(buf: bytearray, pos: int) -> int:
    """Where the frame starting at ``buf[pos]`` ends; -1 when it is not wholly buffered yet."""
    have = len(buf) - pos
    if have < 2:
        return -1
    length = buf[pos + 1] & 0x7F
    head = 2
    if length >= 126:
        head = 4 if length == 126 else 10
        if have < head:
            return -1
        length = int.from_bytes(buf[pos + 2:pos + head], "big")
    end = pos + head + length
    return end if end <= len(buf) else -1


class OrderedReader:
    """One websocket-client connection read on the calling thread, frames kept in arrival order.

    Args:
        root: ``http://127.0.0.1:PORT``.
        token: The bot's token (sent in the Socket.IO CONNECT packet).

    Raises:
        RuntimeError: The handshake was refused.
    """

    def __init__(self, root: str, token: str) -> None:
        url = root.replace("http://", "ws://", 1) + "/socket.io/?EIO=4&transport=websocket"
        self.ws = websocket.WebSocket(skip_utf8_validation=True)
        self.ws.connect(url, timeout=10)
        opened = self.ws.recv()
        if not opened.startswith("0"):
            raise RuntimeError(f"expected an Engine.IO open packet, got {opened[:40]!r}")
        self.ws.send("40" + json.dumps({"token": token}))
        while True:
            frame = self.ws.recv()
            if frame.startswith("40"):
                break
            if frame.startswith("44"):
                raise RuntimeError("the emulator refused the token")
        self.ws.settimeout(RUN_TIMEOUT_S)
        self._buf = bytearray()

    def read_events(self, count: int, deadline: float) -> tuple[list[str], float]:
        """Read until ``count`` ``message:new`` frames arrived.

        websocket-client's own ``recv`` makes two or three system calls per frame and caps a
        reader near 60,000 frames per second, below what the emulator sends; here the socket
        is read 256 KiB at a time and the frames (RFC 6455: server frames are unmasked) are
        cut out of that buffer, as our client's gateway reader does.

        Returns:
            ``(frames, perf_counter time of the last one)``; frames are the raw Socket.IO
            event texts (after the Engine.IO ``4``).

        Raises:
            TimeoutError: Not all arrived before ``deadline`` (a ``perf_counter`` time).
            RuntimeError: A frame that is not an unfragmented text or ping frame, or EOF.
        """
        frames: list[str] = []
        append = frames.append
        sock = self.ws.sock
        buf = self._buf
        pos = 0
        prefix = '42["message:new"'
        while len(frames) < count:
            end = _frame_end(buf, pos)
            if end < 0:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{len(frames)} of {count} events before the deadline")
                del buf[:pos]
                pos = 0
                chunk = sock.recv(262_144)
                if not chunk:
                    raise RuntimeError("the emulator closed the connection")
                buf += chunk
                continue
            if buf[pos] != 0x81:
                raise RuntimeError(f"unexpected websocket frame byte {buf[pos]:#x}")
            length = buf[pos + 1] & 0x7F
            head = 2 if length < 126 else 4 if length == 126 else 10
            text = buf[pos + head:end].decode("utf-8")
            pos = end
            if text.startswith(prefix):
                append(text)
            elif text == "2":
                self.ws.send("3")
        del buf[:pos]
        return frames, time.perf_counter()

    def close(self) -> None:
        """Leave (Socket.IO DISCONNECT) and close the websocket."""
        try:
            self.ws.send("41")
        finally:
            self.ws.close()


def build_world(control_url: str) -> dict[str, str]:
    """A human (owner), a bot member and one TEXT channel, made through the control plane.

    Returns:
        ``{"bot_token", "human_id", "channel_id"}``.
    """
    with requests.Session() as session:
        def post(path: str, body: dict[str, Any]) -> Any:
            response = session.post(control_url + path, json=body, timeout=30)
            response.raise_for_status()
            return response.json()

        human = post("/users", {"name": "alice"})
        bot = post("/users", {"name": "benchbot", "bot": True})
        created = post("/servers", {"name": "Bench", "ownerId": human["user"]["publicId"],
                                    "channels": [{"name": "general", "type": "TEXT"}]})
        post(f"/servers/{created['server']['publicId']}/members", {"userId": bot["user"]["publicId"]})
    return {"bot_token": bot["token"], "human_id": human["user"]["publicId"],
            "channel_id": created["channels"][0]["publicId"]}


def one_run(control_url: str, reader: OrderedReader, world: dict[str, str], events: int, tag: str) -> float:
    """Post ``events`` messages in bulk and read them all; return events per second.

    Raises:
        RuntimeError: The reader got other contents than posted, or in another order, or the post failed.
        TimeoutError: The events did not all arrive within ``RUN_TIMEOUT_S``.
    """
    contents = [f"{tag} message {i}" for i in range(events)]
    body = json.dumps({"channelId": world["channel_id"], "authorId": world["human_id"], "contents": contents})
    failure: list[BaseException] = []

    def post() -> None:
        try:
            response = requests.post(control_url + "/messages/bulk", data=body,
                                     headers={"Content-Type": "application/json"}, timeout=RUN_TIMEOUT_S)
            response.raise_for_status()
        except Exception as exc:  # noqa: BLE001 - reported by the reader's side
            failure.append(exc)

    poster = threading.Thread(target=post, name="emulator_bench-post", daemon=True)
    start = time.perf_counter()
    poster.start()
    frames, end = reader.read_events(events, start + RUN_TIMEOUT_S)
    poster.join(RUN_TIMEOUT_S)
    if failure:
        raise RuntimeError(f"the bulk post failed: {failure[0]!r}")
    got = [json.loads(frame[2:])[1]["content"] for frame in frames]
    if got != contents:
        raise RuntimeError("the reader got other contents than posted, or in another order")
    return events / (end - start)


def main(argv: list[str] | None = None) -> int:
    """Print the figures as ``name: value`` lines; 1 when a run failed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=20_000, help="messages per bulk post (default 20000)")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is printed (default 5)")
    args = parser.parse_args(argv)
    if args.events < 1 or args.runs < 1:
        parser.error("--events and --runs must be positive")
    emu = EmulatorProcess()
    try:
        world = build_world(emu.control_url)
        reader = OrderedReader(emu.root, world["bot_token"])
        try:
            rates = [one_run(emu.control_url, reader, world, args.events, f"r{run}") for run in range(args.runs)]
        except (RuntimeError, TimeoutError) as exc:
            print(f"emulator_bench: {exc}", file=sys.stderr)
            print("emulator_order_ok: 0", flush=True)
            return 1
        finally:
            reader.close()
    finally:
        emu.stop()
    print(f"emulator_events_per_s: {statistics.median(rates):.0f}")
    print(f"emulator_events_per_s_min: {min(rates):.0f}")
    print(f"emulator_events_per_s_max: {max(rates):.0f}")
    print("emulator_order_ok: 1", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
