"""Socket event throughput of the client (not of a server), and send latency.

Two servers run, each in its own process, so neither shares the client's GIL:

- the emulator (``python -m service_client emulator``): REST for login, the
  message record the frames are made of, and the ``send_message`` round trips;
- a "firehose" (``benchmarks/_firehose.py``): a minimal Socket.IO server that
  accepts any token and, on command, writes N pre-encoded ``message:new``
  frames (the emulator's message record, each with its own id) straight to the
  transport, so the figures are those of the reading side.

Prints ``name: value`` lines, all measured in one run (medians of ``--repeat``
runs of each throughput figure, interleaved, every run printed too; each ratio
is the median of the per-run ratios):

- ``firehose_events_per_s``: ours, counted at a ``message_create`` listener
  (from the command to the server until the listener saw the last event);
- ``raw_events_per_s``: a bare websocket-client loop on the same firehose:
  ``recv()`` (``skip_utf8_validation=True``) and ``json.loads`` of every frame;
- ``firehose_ratio_vs_raw``: ours / raw (goal >= 2.5 with the default install);
- ``socketio_events_per_s``: python-socketio's synchronous client with a plain
  ``message:new`` handler, on the same firehose;
- ``firehose_ratio_vs_socketio``: ours / python-socketio's (goal >= 3);
  python-socketio reads ``min(--events, 20000)`` frames (it is some twenty
  times slower than ours);
- ``firehose_events_per_s_node``: the reference JS client, Node's
  ``socket.io-client`` (the version pinned in ``benchmarks/node_peer/package.json``,
  installed by ``npm`` into a temporary folder at each run), counting events
  in an ``onAny`` handler; skipped, with a line saying why, when ``node`` or
  ``npm`` is not on the ``PATH`` or the install fails;
- ``firehose_ratio_vs_node``: ours / the JS client's (goal >= 1.0 with the
  default install, msgspec's decoder);
- ``floor_events_per_s``: the floor of the socket path: our own frame reader
  (:class:`service_client.gateway.reader.FrameReader`) on a websocket
  opened the way the client opens it, splitting the frames and counting the
  ``42`` ones, with no JSON decoding, no model and no listener. It shows how
  close to the socket's limit the rest of the path is;
- ``firehose_ratio_vs_floor``: ours / the floor;
- ``firehose_cpu_us_per_event``: CPU time of this process (every thread of
  the client) per event during our runs, microseconds: a figure less
  sensitive than the wall-clock rate to other load on the machine;
- ``emulator_events_per_s`` and the other lines of ``benchmarks/emulator_bench.py``
  (the emulator's own socket throughput), relayed when that script exists;
- ``send_p50_ms``, ``send_p99_ms``: ``--sends`` sequential ``send_message``
  round trips to the emulator.
- ``json_decoder``: the decoder our reader used (``msgspec``, installed with
  the client on CPython, else ``json``; ``--decoder json`` forces the
  standard library).

Run: ``python benchmarks/gateway_bench.py [--events N] [--sends N] [--repeat N] [--decoder json] [--skip-node]
[--skip-socketio] [--skip-emulator-bench]``
(``--events`` defaults to 100,000 frames per run).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _emulator_process import EmulatorProcess, stop_process

HERE = Path(__file__).resolve().parent

#: Seconds a stream may take before the run is declared failed.
STREAM_TIMEOUT_S = 120.0
#: Most frames python-socketio's client is given per run (it is some twenty times slower).
SOCKETIO_EVENTS_MAX = 20_000
#: The reference JS client: its script and its pinned package.json.
NODE_PEER = HERE / "node_peer"
#: Seconds ``npm install`` may take.
NPM_TIMEOUT_S = 300


class _Lines:
    """The standard output of a child process, one line at a time, read on a thread."""

    def __init__(self, proc: subprocess.Popen[str], name: str) -> None:
        self.queue: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.queue.put(line.rstrip("\n"))
            self.queue.put(None)

        threading.Thread(target=read, name=f"gateway_bench-{name}-out", daemon=True).start()

    def wait_for(self, prefix: str, timeout: float) -> str:
        """The next line starting with ``prefix``; RuntimeError at EOF or after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no {prefix!r} line within {timeout} s") from None
            if line is None:
                raise RuntimeError(f"the process ended before printing {prefix!r}")
            if line.startswith(prefix):
                return line


class FirehoseProcess:
    """``benchmarks/_firehose.py`` in a child process, driven through its standard input."""

    def __init__(self, record: dict[str, Any]) -> None:
        handle, self._record_path = tempfile.mkstemp(suffix=".json", prefix="firehose-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(record, out)
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "_firehose.py"), "--record", self._record_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self._lines = _Lines(self.proc, "firehose")
        port = int(self._lines.wait_for("listening", 30).split()[1])
        self.url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}/socket.io/?EIO=4&transport=websocket"

    def _command(self, line: str, answer: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self._lines.wait_for(answer, STREAM_TIMEOUT_S)

    def prepare(self, count: int) -> None:
        """Have the frames of ``fire count`` encoded now."""
        self._command(f"prepare {count}", "ready")

    def sessions(self) -> int:
        """Connected sessions."""
        return int(self._command("sessions", "sessions").split()[1])

    def fire(self, count: int) -> None:
        """Ask for ``count`` frames to every session; returns at once (the answer is read later)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"fire {count}\n")
        self.proc.stdin.flush()

    def fired(self) -> int:
        """Wait for the answer of :meth:`fire`; the sessions written to."""
        return int(self._lines.wait_for("fired", STREAM_TIMEOUT_S).split()[2])

    def wait_sessions(self, count: int, timeout: float = 15.0) -> None:
        """Wait until ``count`` sessions are connected (a client's CONNECT answer may precede it)."""
        deadline = time.monotonic() + timeout
        while self.sessions() != count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the firehose did not see {count} session(s)")
            time.sleep(0.01)

    def stop(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            stop_process(self.proc)
        os.unlink(self._record_path)


def make_world(emu: EmulatorProcess) -> dict[str, Any]:
    """A human, a bot in the human's server, and one message record of the human in its channel."""
    human = emu.post("/users", {"name": "alice"})
    bot = emu.post("/users", {"name": "benchbot", "bot": True})
    created = emu.post("/servers", {"name": "Bench", "ownerId": human["user"]["publicId"],
                                    "channels": [{"name": "general", "type": "TEXT"}]})
    server_id = created["server"]["publicId"]
    emu.post(f"/servers/{server_id}/members", {"userId": bot["user"]["publicId"]})
    channel_id = created["channels"][0]["publicId"]
    posted = emu.post("/messages", {"channelId": channel_id, "authorId": human["user"]["publicId"],
                                    "content": "a message of the firehose &amp; more"})
    return {"bot_token": bot["token"], "channel_id": channel_id, "record": posted["message"]}


def measure_ours(
    emu: EmulatorProcess, hose: FirehoseProcess, world: dict[str, Any], count: int
) -> tuple[float, float]:
    """Events per second at a ``message_create`` listener of our client, and CPU microseconds per event."""
    from service_client import Client

    hose.wait_sessions(0)  # the previous client is gone: every frame goes to this one
    client = Client(base_url=emu.base_url, socket_url=hose.url)
    done = threading.Event()
    seen = [0]

    @client.on("message_create")
    def on_message(message: Any) -> None:
        seen[0] += 1  # one channel: listeners run in order on one worker
        if seen[0] == count:
            done.set()

    client.login(world["bot_token"], timeout=30)
    try:
        hose.wait_sessions(1)
        hose.prepare(count)
        cpu = time.process_time()
        start = time.perf_counter()
        hose.fire(count)
        if not done.wait(STREAM_TIMEOUT_S):
            raise SystemExit(f"our client received {seen[0]} of {count} events")
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        hose.fired()
        return count / elapsed, cpu / count * 1e6
    finally:
        client.destroy()


def _join_and_prepare(hose: FirehoseProcess, ws: Any, recv: Any, count: int) -> None:
    """Read the open packet, join the default namespace, and have the run's frames encoded."""
    recv()  # the open packet
    ws.send("40")
    recv()  # the CONNECT answer
    hose.wait_sessions(1)
    hose.prepare(count)


def measure_raw(hose: FirehoseProcess, count: int) -> float:
    """Events per second of a bare websocket-client ``recv()`` + ``json.loads`` loop."""
    import websocket

    hose.wait_sessions(0)
    ws = websocket.create_connection(hose.ws_url, skip_utf8_validation=True, timeout=30)
    try:
        _join_and_prepare(hose, ws, ws.recv, count)
        recv = ws.recv
        loads = json.loads
        seen = 0
        start = time.perf_counter()
        deadline = time.monotonic() + STREAM_TIMEOUT_S
        hose.fire(count)
        while seen < count:
            text = recv()  # no frame for 30 s: the socket timeout ends the run
            if text == "2":
                if time.monotonic() > deadline:  # pings but no frames
                    raise SystemExit(f"the bare loop received {seen} of {count} events")
                ws.send("3")
                continue
            if text[:2] == "42":
                loads(text[2:])
                seen += 1
        elapsed = time.perf_counter() - start
        hose.fired()
        return count / elapsed
    finally:
        ws.close()


def measure_socketio(hose: FirehoseProcess, world: dict[str, Any], count: int) -> float:
    """Events per second at a plain handler of python-socketio's synchronous client."""
    import socketio

    hose.wait_sessions(0)
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

    sio.connect(hose.url, auth={"token": world["bot_token"]}, transports=["websocket"], wait_timeout=15)
    try:
        hose.wait_sessions(1)
        hose.prepare(count)
        start = time.perf_counter()
        hose.fire(count)
        if not done.wait(STREAM_TIMEOUT_S):
            raise SystemExit(f"python-socketio received {seen[0]} of {count} events")
        elapsed = time.perf_counter() - start
        hose.fired()
        return count / elapsed
    finally:
        sio.disconnect()


def measure_floor(hose: FirehoseProcess, count: int) -> float:
    """Events per second of our frame reader alone: frames split and counted, nothing decoded."""
    import websocket

    from service_client.gateway.reader import FrameReader

    hose.wait_sessions(0)
    ws = websocket.WebSocket(skip_utf8_validation=True)
    ws.connect(hose.ws_url, timeout=30)
    try:
        assert ws.sock is not None
        reader = FrameReader(ws.sock, lambda opcode, payload: None)
        _join_and_prepare(hose, ws, reader.recv_batch, count)
        recv_batch = reader.recv_batch
        seen = 0
        start = time.perf_counter()
        hose.fire(count)
        while seen < count:  # no frame for 30 s: the socket timeout ends the run
            for message in recv_batch():
                if message[:2] == b"42":
                    seen += 1
        elapsed = time.perf_counter() - start
        hose.fired()
        return count / elapsed
    finally:
        ws.close()


class NodePeer:
    """The reference JS client (``benchmarks/node_peer``), installed with npm into a temporary folder.

    Attributes:
        skipped: Why the JS client cannot run here, else None.
    """

    def __init__(self) -> None:
        self.skipped: str | None = None
        self._dir: str | None = None
        node, npm = shutil.which("node"), shutil.which("npm")
        if node is None or npm is None:
            self.skipped = "node and npm are not both on the PATH"
            return
        self._node = node
        self._dir = tempfile.mkdtemp(prefix="gateway-bench-node-")
        for name in ("package.json", "firehose_client.js"):
            shutil.copy(NODE_PEER / name, self._dir)
        try:
            result = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
                cwd=self._dir, capture_output=True, text=True, timeout=NPM_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            self.skipped = f"npm install took more than {NPM_TIMEOUT_S} s"
            return
        if result.returncode:
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            self.skipped = f"npm install failed ({last})"

    @property
    def version(self) -> str:
        """The installed socket.io-client version."""
        assert self._dir is not None
        path = Path(self._dir, "node_modules", "socket.io-client", "package.json")
        return str(json.loads(path.read_text(encoding="utf-8"))["version"])

    def measure(self, hose: FirehoseProcess, world: dict[str, Any], count: int) -> float:
        """Events per second counted by the JS client's ``onAny`` handler."""
        assert self._dir is not None
        hose.wait_sessions(0)
        proc = subprocess.Popen(
            [self._node, "firehose_client.js", hose.url, world["bot_token"], str(count)],
            cwd=self._dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        try:
            lines = _Lines(proc, "node")
            lines.wait_for("connected", 30)
            hose.wait_sessions(1)
            hose.prepare(count)
            start = time.perf_counter()
            hose.fire(count)
            lines.wait_for("done", STREAM_TIMEOUT_S)
            elapsed = time.perf_counter() - start
            hose.fired()
            return count / elapsed
        finally:
            assert proc.stdin is not None
            proc.stdin.close()  # the script exits when its input ends
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def remove(self) -> None:
        """Delete the temporary folder."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


def measure_sends(emu: EmulatorProcess, world: dict[str, Any], count: int) -> list[float]:
    """Milliseconds of each of ``count`` sequential ``send_message`` round trips to the emulator."""
    from service_client import Client

    client = Client(base_url=emu.base_url, socket_url=emu.root)
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


def relay_emulator_bench() -> None:
    """Run ``benchmarks/emulator_bench.py`` (when it exists) and print its lines."""
    script = HERE / "emulator_bench.py"
    if not script.exists():
        print("emulator_events_per_s: n/a (benchmarks/emulator_bench.py not present)")
        return
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    for line in result.stdout.splitlines():
        if ":" in line:
            print(line)
    if result.returncode:
        print(f"emulator_bench_exit: {result.returncode}")


def _median_of(name: str, runs: list[float]) -> float:
    print(f"{name}_runs: {' '.join(f'{r:.0f}' for r in runs)}")
    return statistics.median(runs)


def _print_ratio(name: str, ours: list[float], other: list[float]) -> None:
    """Print the per-run ratios ours / other (``NAME_runs``) and their median (``NAME``)."""
    ratios = [o / r for o, r in zip(ours, other, strict=True)]
    print(f"{name}_runs: {' '.join(f'{r:.2f}' for r in ratios)}")
    print(f"{name}: {statistics.median(ratios):.2f}")


def main() -> None:
    """Start both servers, run every measurement and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--sends", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each throughput figure (median shown)")
    parser.add_argument("--decoder", choices=("auto", "json"), default="auto",
                        help="json: our reader uses the standard library even when msgspec is installed")
    parser.add_argument("--skip-emulator-bench", action="store_true")
    parser.add_argument("--skip-node", action="store_true", help="do not install and run the JS client")
    parser.add_argument("--skip-socketio", action="store_true",
                        help="do not run python-socketio's client (the slowest peer, and the first to lose its "
                             "connection on a loaded machine)")
    args = parser.parse_args()
    if args.decoder == "json":
        os.environ["SERVICE_CLIENT_JSON"] = "json"
    node = None if args.skip_node else NodePeer()
    node_version: str | None = None
    emu = EmulatorProcess()
    hose: FirehoseProcess | None = None
    sio_count = min(args.events, SOCKETIO_EVENTS_MAX)
    try:
        world = make_world(emu)
        hose = FirehoseProcess(world["record"])
        measure_ours(emu, hose, world, 500)  # warm-up: imports, caches
        ours_runs: list[float] = []
        cpu_runs: list[float] = []
        raw_runs: list[float] = []
        sio_runs: list[float] = []
        node_runs: list[float] = []
        floor_runs: list[float] = []
        for _ in range(args.repeat):  # interleaved, so load changes hit every figure alike
            rate, cpu = measure_ours(emu, hose, world, args.events)
            ours_runs.append(rate)
            cpu_runs.append(cpu)
            raw_runs.append(measure_raw(hose, args.events))
            if node is not None and node.skipped is None:
                node_runs.append(node.measure(hose, world, args.events))
            floor_runs.append(measure_floor(hose, args.events))
            if not args.skip_socketio:
                sio_runs.append(measure_socketio(hose, world, sio_count))
        sends = sorted(measure_sends(emu, world, args.sends))
    finally:
        if hose is not None:
            hose.stop()
        emu.stop()
        if node is not None:
            if node.skipped is None:
                node_version = node.version
            node.remove()
    try:
        from service_client.gateway import decoder as _decoder

        decoder_name = _decoder.NAME
    except ImportError:
        decoder_name = "json"
    print(f"events: {args.events}")
    print(f"json_decoder: {decoder_name}")
    ours = _median_of("firehose_events_per_s", ours_runs)
    raw = _median_of("raw_events_per_s", raw_runs)
    floor = _median_of("floor_events_per_s", floor_runs)
    print(f"firehose_cpu_us_per_event_runs: {' '.join(f'{c:.2f}' for c in cpu_runs)}")
    print(f"firehose_events_per_s: {ours:.0f}")
    print(f"firehose_cpu_us_per_event: {statistics.median(cpu_runs):.2f}")
    print(f"raw_events_per_s: {raw:.0f}")
    _print_ratio("firehose_ratio_vs_raw", ours_runs, raw_runs)
    if node is None:
        print("firehose_events_per_s_node: skipped (--skip-node)")
    elif node.skipped is not None:
        print(f"firehose_events_per_s_node: skipped ({node.skipped})")
    else:
        print(f"node_socketio_client_version: {node_version}")
        node_rate = _median_of("firehose_events_per_s_node", node_runs)
        print(f"firehose_events_per_s_node: {node_rate:.0f}")
        _print_ratio("firehose_ratio_vs_node", ours_runs, node_runs)
    print(f"floor_events_per_s: {floor:.0f}")
    _print_ratio("firehose_ratio_vs_floor", ours_runs, floor_runs)
    if args.skip_socketio:
        print("socketio_events_per_s: skipped (--skip-socketio)")
    else:
        print(f"socketio_events: {sio_count}")
        print(f"socketio_events_per_s: {_median_of('socketio_events_per_s', sio_runs):.0f}")
        _print_ratio("firehose_ratio_vs_socketio", ours_runs, sio_runs)
    print(f"sends: {args.sends}")
    print(f"send_p50_ms: {statistics.median(sends):.2f}")
    print(f"send_p99_ms: {sends[min(len(sends) - 1, int(len(sends) * 0.99))]:.2f}")
    if not args.skip_emulator_bench:
        relay_emulator_bench()


if __name__ == "__main__":
    main()
