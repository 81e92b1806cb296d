"""Voice media figures: our client (LiveKit's SDK) against the emulator's media server.

Run inside a network namespace (WebRTC skips loopback; nothing leaves the namespace)::

    bash tests/voice/run_in_netns.sh --exec python benchmarks/voice_bench.py [--seconds 30]

The emulator runs in a child process (``python -m service_client emulator``), so the figures
of CPU and memory are those of the bot's process alone. Prints ``name: value`` lines:

- ``voice_join_to_media_ms``: ``client.voice.join()`` from the call to its return, credentials
  and media connected (median of 5 joins);
- ``voice_first_audio_ms``: from ``play()`` to the first frame of that audio heard by another
  participant (a second client's ``audio_frame`` listener; median of 5);
- ``voice_playback_cpu_per_stream``: the fraction of one core the bot's process uses while it
  plays a 48 kHz WAV file, less what it uses connected and silent;
- ``voice_frames_received_ratio``: frames a listener received over frames expected (50 a
  second per speaker) while two bots play at once for ``--seconds`` (30);
- ``voice_rss_mb_per_connection``: the bot process's resident memory per voice connection (a
  client logged in and joined), over 3 connections;
- ``node_voice_playback_cpu_per_stream``: the same playback figure for a participant built on
  ``@livekit/rtc-node``, the reference client's media stack (``benchmarks/node_voice_peer``; a
  tone made in JavaScript, no file decoding), on the same emulator; ``skipped`` with the reason
  where it is not installed (``--no-node`` leaves it out). The namespace has no network: run
  ``python benchmarks/voice_bench.py --install-node`` outside it first (npm installs it in
  ``~/.cache/service_client-voice-bench``, outside the checkout).
"""

from __future__ import annotations

import argparse
import array
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave
from typing import Any

import psutil
from _emulator_process import EmulatorProcess

from service_client import AudioFrame, Client

#: Bound on each join, seconds.
JOIN_TIMEOUT_S = 10.0
#: The JS participant's sources.
NODE_PEER = pathlib.Path(__file__).resolve().parent / "node_voice_peer"
#: Where ``--install-node`` installs it (outside the checkout: the tests read every file there).
NODE_DIR = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache")) / "service_client-voice-bench"


def install_node() -> str | None:
    """Copy the JS participant to :data:`NODE_DIR` and ``npm install`` it; the reason when it fails."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on the PATH"
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "voice_peer.mjs"):
        shutil.copy(NODE_PEER / name, NODE_DIR)
    installed = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
                               cwd=NODE_DIR, capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    if installed.returncode:
        return f"npm install failed: {(installed.stderr.strip().splitlines() or ['?'])[-1]}"
    return None
#: Seconds ``npm install`` and the JS participant's run may take.
NODE_TIMEOUT_S = 300.0


def node_playback_cpu(emu: EmulatorProcess, token: str, channel_id: str) -> str:
    """``node_voice_playback_cpu_per_stream`` from the JS participant, or ``skipped (<why>)``."""
    node = shutil.which("node")
    if node is None:
        return "skipped (node is not on the PATH)"
    client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
    try:
        client.login(token, timeout=15)
        credentials = client.voice.join(channel_id, timeout=JOIN_TIMEOUT_S, media=False)
        if not (NODE_DIR / "node_modules" / "@livekit" / "rtc-node").is_dir():
            return ("skipped (not installed: run python benchmarks/voice_bench.py --install-node first, outside "
                    "the network namespace)")
        shutil.copy(NODE_PEER / "voice_peer.mjs", NODE_DIR)
        run = subprocess.run([node, "voice_peer.mjs", str(credentials.url), str(credentials.token), "5", "8"],
                             cwd=NODE_DIR, capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
        for line in run.stdout.splitlines():
            if line.startswith("node_voice_playback_cpu_per_stream: "):
                return line.split(": ", 1)[1]
        return f"skipped (the JS participant failed: {(run.stderr.strip().splitlines() or ['?'])[-1]})"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"skipped ({exc})"
    finally:
        client.destroy()


def write_tone(path: pathlib.Path, hz: float, seconds: float) -> None:
    """A 48 kHz mono 16-bit WAV of a sine tone."""
    samples = array.array("h", (int(12000 * math.sin(2 * math.pi * hz * i / 48000)) for i in range(int(48000 * seconds))))
    with wave.open(str(path), "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(48000)
        writer.writeframes(samples.tobytes())


def make_world(emu: EmulatorProcess, bots: int) -> dict[str, Any]:
    """A human owning a server with a voice channel, and ``bots`` bot members."""
    human = emu.post("/users", {"name": "alice"})
    created = emu.post("/servers", {"name": "Bench", "ownerId": human["user"]["publicId"],
                                    "channels": [{"name": "lounge", "type": "VOICE"}]})
    server_id = created["server"]["publicId"]
    tokens, ids = [], []
    for i in range(bots):
        bot = emu.post("/users", {"name": f"bench{i}", "bot": True})
        emu.post(f"/servers/{server_id}/members", {"userId": bot["user"]["publicId"]})
        tokens.append(bot["token"])
        ids.append(bot["user"]["publicId"])
    return {"channel_id": created["channels"][0]["publicId"], "tokens": tokens, "ids": ids}


class Listener:
    """A client in the channel that counts the frames it hears, per speaker."""

    def __init__(self, emu: EmulatorProcess, token: str, channel_id: str) -> None:
        self.client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        self.counts: dict[str, int] = {}
        self.first_loud: dict[str, float] = {}
        self._lock = threading.Lock()
        self.client.on("audio_frame", self._on_frame)
        self.client.login(token, timeout=15)
        self.connection = self.client.voice.join(channel_id, timeout=JOIN_TIMEOUT_S)

    def _on_frame(self, frame: AudioFrame) -> None:
        now = time.monotonic()
        loud = max(array.array("h", frame.samples), default=0) > 2000
        with self._lock:
            self.counts[frame.user_id] = self.counts.get(frame.user_id, 0) + 1
            if loud and frame.user_id not in self.first_loud:
                self.first_loud[frame.user_id] = now

    def reset(self) -> None:
        with self._lock:
            self.counts.clear()
            self.first_loud.clear()

    def wait_loud(self, user_id: str, timeout: float) -> float | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if user_id in self.first_loud:
                    return self.first_loud[user_id]
            time.sleep(0.002)
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the two-stream run (30)")
    parser.add_argument("--no-node", action="store_true", help="leave the @livekit/rtc-node participant out")
    parser.add_argument("--install-node", action="store_true",
                        help="install the @livekit/rtc-node participant with npm (outside the namespace) and exit")
    args = parser.parse_args()
    if args.install_node:
        failed = install_node()
        print(f"voice_bench: {failed}" if failed else f"voice_bench: installed in {NODE_DIR}")
        return
    process = psutil.Process()
    emu = EmulatorProcess()
    clients: list[Client] = []
    try:
        world = make_world(emu, 7)
        channel_id, tokens, ids = world["channel_id"], world["tokens"], world["ids"]
        listener = Listener(emu, tokens[0], channel_id)
        clients.append(listener.client)
        bot = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        clients.append(bot)
        bot.login(tokens[1], timeout=15)

        joins = []
        for _ in range(5):
            started = time.monotonic()
            connection = bot.voice.join(channel_id, timeout=JOIN_TIMEOUT_S)
            joins.append((time.monotonic() - started) * 1000)
            connection.leave()
        print(f"voice_join_to_media_ms: {statistics.median(joins):.0f}")

        connection = bot.voice.join(channel_id, timeout=JOIN_TIMEOUT_S)
        tone = array.array("h", (int(12000 * math.sin(2 * math.pi * 440 * i / 48000)) for i in range(48000))).tobytes()
        firsts = []
        for _ in range(5):
            time.sleep(0.5)
            listener.reset()
            started = time.monotonic()
            playback = connection.play(tone, sample_rate=48000, channels=1)
            heard = listener.wait_loud(ids[1], 5.0)
            if heard is not None:
                firsts.append((heard - started) * 1000)
            playback.wait(5)
        print(f"voice_first_audio_ms: {statistics.median(firsts):.0f}" if firsts else "voice_first_audio_ms: nan")

        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / "tone.wav"
            write_tone(path, 440, 12)
            time.sleep(1.0)
            cpu0, wall0 = process.cpu_times(), time.monotonic()
            time.sleep(5.0)
            cpu1, wall1 = process.cpu_times(), time.monotonic()
            idle = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / (wall1 - wall0)
            playback = connection.play(path)
            time.sleep(1.0)
            cpu0, wall0 = process.cpu_times(), time.monotonic()
            time.sleep(8.0)
            cpu1, wall1 = process.cpu_times(), time.monotonic()
            busy = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / (wall1 - wall0)
            playback.stop()
            playback.wait(5)
        print(f"voice_playback_cpu_per_stream: {max(busy - idle, 0.0):.3f}", flush=True)
        if not args.no_node:
            print(f"node_voice_playback_cpu_per_stream: {node_playback_cpu(emu, tokens[6], channel_id)}", flush=True)

        second = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        clients.append(second)
        second.login(tokens[2], timeout=15)
        other = second.voice.join(channel_id, timeout=JOIN_TIMEOUT_S)
        long_tone = array.array("h", (int(12000 * math.sin(2 * math.pi * 660 * i / 48000))
                                      for i in range(int(48000 * (args.seconds + 2))))).tobytes()
        first = connection.play(long_tone, sample_rate=48000, channels=1)
        other_play = other.play(long_tone, sample_rate=48000, channels=1)
        time.sleep(1.0)
        listener.reset()
        time.sleep(args.seconds)
        with listener._lock:
            received = listener.counts.get(ids[1], 0) + listener.counts.get(ids[2], 0)
        first.stop()
        other_play.stop()
        if received < 50 * args.seconds * 2 * 0.9:  # say why, on stderr
            print(f"voice_bench: frames per speaker {listener.counts}; playback errors "
                  f"{first.error!r}, {other_play.error!r}", file=sys.stderr)
        print(f"voice_frames_received_ratio: {received / (50 * args.seconds * 2):.3f}")

        rss0 = process.memory_info().rss
        for token in tokens[3:6]:
            extra = Client(base_url=emu.base_url, socket_url=emu.socket_url)
            clients.append(extra)
            extra.login(token, timeout=15)
            extra.voice.join(channel_id, timeout=JOIN_TIMEOUT_S)
        time.sleep(2.0)
        rss1 = process.memory_info().rss
        print(f"voice_rss_mb_per_connection: {(rss1 - rss0) / 3 / 2**20:.1f}")
    finally:
        for client in clients:
            client.destroy()
        emu.stop()


if __name__ == "__main__":
    if os.environ.get("SERVICE_CLIENT_NETNS") != "1" and "--install-node" not in sys.argv:
        print("voice_bench: run it in a network namespace: bash tests/voice/run_in_netns.sh --exec "
              "python benchmarks/voice_bench.py", file=sys.stderr)
    main()
