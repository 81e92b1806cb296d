"""The events fleet: throughput, and what a fleet of workers loses under chaos (nothing, we hope).

Run: ``python benchmarks/events_fleet_bench.py [--phase all|throughput|chaos|standby|sentinel] [--repeat N]``
(needs the ``emulator`` and ``redis`` extras and ``redis-server`` on the PATH; every Redis,
emulator and worker runs in a process of its own, started here).

Prints ``name: value`` lines:

Throughput (``--phase throughput``), the firehose of ``benchmarks/_firehose.py`` as the
source (``--events`` ``message:new`` frames of one channel per run, ``--repeat`` runs, the
median printed with every run):

- ``fleet_events_per_s``: one worker process with a no-op ``message_create`` listener, from
  the command to the firehose until the last event is acknowledged in Redis (the publisher,
  Redis and the worker share this machine), goal >= 10,000;
- ``fleet_gateway_ratio``: this process's firehose rate with the publisher on (until the
  listener saw the last event and the publisher added it to Redis) over the rate without it,
  goal >= 0.5, measured with no worker reading meanwhile (the publisher's own cost);
  ``gateway_events_per_s`` and ``gateway_events_per_s_publishing`` are the rates,
  ``gateway_cpu_us_per_event[_publishing]`` this process's CPU time per event, and on Linux
  ``gateway_reader_cpu_us_per_event[_publishing]`` its socket reader thread's (where the
  publisher's tap runs) and ``publisher_thread_cpu_us_per_event`` the publisher's batch
  thread's (each publisher is started, connected and ready, before its run);
  ``fleet_gateway_ratio_colocated``: the same while the worker of ``fleet_events_per_s`` reads
  on the same 2 cores (it takes CPU time from this process).

Every event of the firehose is in one channel, so in one partition: the publisher of these runs
keeps up to ten times ``--events`` entries per partition (the default ``max_stream_length``,
10,000, would trim a burst the worker has not read yet, and count it as lost).

Chaos (``--phase chaos``; ``.ci/run`` runs it with ``--check``): the emulator as the source
(bulk posts of ``--chaos-events`` messages over ``--channels`` channels at ``--rate``
per second, each with its channel's sequence number), one socket process (this one: a Client and an EventPublisher of
64 partitions), 3 worker processes whose listener records each event it handles in a file
(before anything else) and replies to every 10th message; a worker is killed with SIGKILL
every 3 s and started again, and one is paused with SIGSTOP for 5 s and resumed:

- ``fleet_order_violations``: an event of a channel handled for the first time after a later
  event of its channel was handled (from the listeners' own records), goal 0;
- ``fleet_lost_events``: events never handled, goal 0;
- ``fleet_duplicate_replies``: replies posted more than once (counted in the emulator's
  message store), goal 0; ``fleet_missing_replies``: replies never posted;
- ``fleet_redelivered_events``: events handled more than once (at least once: expected);
- ``fleet_redelivery_p99_ms``: from a worker's SIGKILL to the next event handled in each
  partition it owned (by any worker), goal <= 2,500; ``fleet_redelivery_max_ms`` too;
- ``fleet_handoff_p99_ms``: the same from a graceful ``stop()`` (SIGTERM), ``--handoffs``
  times while ``--steady-rate`` events per second flow, goal <= 500;

Each of these two delays runs to the first event of the partition handled after the kill (or
stop), from the kill, or from that event's creation when it came later (so the time an event
was not there yet is not counted);
- ``fleet_redis_restart_recovery_ms``: Redis shut down with ``SHUTDOWN SAVE`` and started
  again on its data while events flow: from the restarted Redis answering to the first event
  created after the shutdown being handled, goal <= 3,000 (``fleet_redis_outage_ms``: from the
  shutdown to that event);
- ``fleet_chaos_seconds``: wall time of the chaos phase.

Standby (``--phase standby``): two standby socket processes (``StandbySocket``, each a process
of its own with a ``Client(catch_up=CatchUp())``), one worker process recording what it handles,
``--gap-rate`` messages a second posted round robin over 8 channels; ``--takeovers`` times the
socket process that publishes is killed with SIGKILL (and a new standby started in its place):

- ``fleet_standby_takeover_ms``: from the SIGKILL to the first event the standby publishes (the
  median; ``_runs`` and ``_max_ms`` too), goal <= 3,000;
- ``fleet_gap_recovered_ratio``: of the messages posted from a SIGKILL to the standby's first
  published event (``fleet_gap_messages``; every channel was active in the last 10 minutes),
  the share a worker handled, goal >= 0.99; ``fleet_standby_lost_events``: messages of the whole
  phase never handled; ``fleet_standby_duplicate_events``: messages handled more than once (the
  worker is never stopped here, so each one was published twice: live and replayed).

Sentinel (``--phase sentinel``): a primary, a replica and three sentinels (``_sentinel_process.py``);
the publisher (in this process) and one worker process use ``Sentinel(...).master_for(...)``;
``--gap-rate`` messages a second flow; the primary is killed with SIGKILL, and once the sentinels
have promoted the replica it is started again, empty (the sentinels make it a replica). Once
without waiting for a replica, once with ``EventPublisher(wait_for_replicas=1)``:

- ``fleet_sentinel_failover_ms`` (``_wait_replica``): from the SIGKILL to the first message
  posted after it being handled;
- ``fleet_sentinel_lost_events`` (``_wait_replica``): messages never handled, goal 0 when waiting
  for a replica.

``--check`` exits 1 when order violations, lost events or duplicate replies are not 0.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import requests  # noqa: E402
from _emulator_process import EmulatorProcess, free_port  # noqa: E402

GROUP = "bench"


# -- Redis ---------------------------------------------------------------------------------------


class RedisProcess:
    """A ``redis-server`` of this benchmark on a free port, with its data in a folder of its own."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not on the PATH (Debian: apt-get install redis-server)")
        self.binary = binary
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="fleet-bench-redis-")
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> float:
        """Start (again, on the same data); the monotonic time it first answered."""
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--dbfilename", "dump.rdb", "--logfile", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return time.monotonic()
            except OSError:
                pass
            time.sleep(0.01)
        raise SystemExit("redis-server did not start")

    def shutdown_save(self) -> None:
        """``SHUTDOWN SAVE``: write the data and exit."""
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"SHUTDOWN SAVE\r\n")
            sock.recv(16)
        assert self.proc is not None
        self.proc.wait(20)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


# -- the worker processes ------------------------------------------------------------------------


def worker_main(args: argparse.Namespace) -> None:
    """A worker process: ``--worker``; the token comes on standard input, never on the command line."""
    import logging

    from service_client.fleet import FleetWorker

    logging.basicConfig(level=logging.WARNING,
                        format=f"%(asctime)s {args.name} %(levelname)s %(name)s: %(message)s")
    token = sys.stdin.readline().strip()
    source: Any = args.redis
    if args.sentinel:
        from _sentinel_process import sentinel_client

        source = sentinel_client(args.sentinel)
    worker = FleetWorker(source, token, group=GROUP, name=args.name, base_url=args.base,
                         workers=args.threads)
    fd = os.open(args.records, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if args.records else -1
    name = args.name
    human = args.human

    if args.mode == "chaos":
        @worker.event
        def message_create(message: Any) -> None:
            author = message.author
            if author is None or author.id != human:
                return
            channel, seq = message.content.split()
            created = message.created_at.timestamp() if message.created_at is not None else 0.0
            os.write(fd, f"{time.monotonic():.6f} {channel[1:]} {seq[1:]} {name} {created:.6f}\n".encode())
            if int(seq[1:]) % 10 == 0:
                message.reply(f"re {channel} {seq}")
    else:
        @worker.event
        def message_create(message: Any) -> None:
            pass

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    worker.start(timeout=60)
    print("ready", flush=True)
    stopping.wait()
    stopped_at = time.monotonic()
    worker.stop()
    print(f"stopped {stopped_at:.6f} {time.monotonic():.6f}", flush=True)


class Worker:
    """A worker process started by the benchmark."""

    def __init__(self, redis: RedisProcess | None, emu: EmulatorProcess, token: str, name: str, *, mode: str,
                 records: str = "", human: str = "", threads: int = 8, sentinel: str = "") -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--redis", redis.url if redis else "",
             "--base", emu.base_url, "--name", name, "--mode", mode, "--records", records, "--human", human,
             "--threads", str(threads), "--sentinel", sentinel],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(token + "\n")
        self.proc.stdin.flush()
        self._ready = threading.Event()
        self.stopped: tuple[float, float] | None = None
        threading.Thread(target=self._read, daemon=True, name=f"bench-{name}-out").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("ready"):
                self._ready.set()
            elif line.startswith("stopped"):
                parts = line.split()
                self.stopped = (float(parts[1]), float(parts[2]))
        self._ready.set()

    def wait_ready(self, timeout: float = 60) -> None:
        if not self._ready.wait(timeout) or self.proc.poll() is not None:
            raise SystemExit(f"worker {self.name} did not start")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def terminate(self, timeout: float = 30) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


def owners(redis: Any, namespace: str, partitions: int) -> dict[int, str]:
    """Partition -> the name of the worker holding its lease now."""
    keys = [f"service_client:fleet:{namespace}:lease:{GROUP}:{p}" for p in range(partitions)]
    values = redis.mget(keys)
    out = {}
    for part, value in enumerate(values):
        if value:
            out[part] = value.decode().split("/", 1)[0]
    return out


def wait_owned(redis: Any, namespace: str, partitions: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while len(owners(redis, namespace, partitions)) < partitions:
        if time.monotonic() > deadline:
            raise SystemExit("the workers did not take every partition")
        time.sleep(0.05)


#: The threads whose CPU time the throughput phase reports, by their names.
_TIMED_THREADS = {"reader": re.compile(r"service_client-gateway-\d+"),
                  "publisher": re.compile(r"service_client-fleet-publisher-\d+")}


def thread_cpu_ns() -> dict[str, int]:
    """CPU time (ns, user and system) of this process's socket reader and publisher threads so
    far, from Linux's ``/proc/self/task/<tid>/schedstat``; {} elsewhere."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    out = dict.fromkeys(_TIMED_THREADS, 0)
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return {}
    for tid in tids:
        name = names.get(int(tid), "")
        for kind, pattern in _TIMED_THREADS.items():
            if pattern.fullmatch(name):
                try:
                    with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as file:
                        out[kind] += int(file.read().split()[0])
                except (OSError, ValueError, IndexError):
                    return {}
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


# -- throughput ----------------------------------------------------------------------------------


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    import redis as redis_module
    from gateway_bench import FirehoseProcess, make_world

    from service_client import Client
    from service_client.fleet import EventPublisher, partition_of

    srv = RedisProcess()
    emu = EmulatorProcess()
    hose = None
    worker = None
    raw = redis_module.Redis.from_url(srv.url)
    try:
        world = make_world(emu)
        hose = FirehoseProcess(world["record"])
        client = Client(base_url=emu.base_url, socket_url=hose.url, workers=2)
        seen = [0]
        target = [0]
        done = threading.Event()

        @client.on("message_create")
        def on_message(message: Any) -> None:
            seen[0] += 1
            if seen[0] >= target[0]:
                done.set()

        client.login(world["bot_token"], timeout=30)
        hose.wait_sessions(1)
        part = partition_of(world["channel_id"], 64)
        namespace = client.user.id if client.user else ""
        stream = f"service_client:fleet:{namespace}:p:{part}"
        plain: list[float] = []
        publishing: list[float] = []
        acked: list[float] = []
        hose.prepare(args.events)

        cpu: dict[str, list[float]] = {"plain": [], "publishing": []}
        threads: dict[str, list[float]] = {"plain": [], "publishing": [], "publisher": []}  # us per event
        listened = [0.0]  # seconds until the listener saw the last event, in the last run

        def fire(publisher: Any, timed: bool = True) -> tuple[float, float]:
            """One run; its CPU figures are kept when ``timed`` (the runs with no worker reading)."""
            done.clear()
            target[0] = seen[0] + args.events
            base = publisher.published_events if publisher else 0
            threads_start = thread_cpu_ns()
            cpu_start = time.process_time()
            start = time.perf_counter()
            hose.fire(args.events)
            if not done.wait(120):
                raise SystemExit(f"the client received {seen[0]} of {target[0]} events")
            listened[0] = time.perf_counter() - start
            if publisher is not None:
                while publisher.published_events < base + args.events:
                    if time.perf_counter() - start > 120:
                        raise SystemExit("the publisher did not add every event")
                    time.sleep(0.001)
            end = time.perf_counter()
            cpu_used = (time.process_time() - cpu_start) / args.events * 1e6
            threads_end = thread_cpu_ns()
            if timed:
                cpu["publishing" if publisher else "plain"].append(cpu_used)
            if timed and threads_start and threads_end:
                used = {kind: (threads_end[kind] - threads_start[kind]) / args.events / 1000 for kind in threads_end}
                threads["publishing" if publisher else "plain"].append(used["reader"])
                if publisher is not None:
                    threads["publisher"].append(used["publisher"])
            hose.fired()
            return start, end

        colocated: list[float] = []
        # The publisher's cost in this process: runs with the publisher on and no worker reading
        # (on this 2-core machine a worker would take the CPU the socket's process uses).
        for run in range(args.repeat + 1):  # the first run of each kind warms up
            start, end = fire(None)
            if run:
                plain.append(args.events / (end - start))
            publisher = EventPublisher(client, srv.url, partitions=64, max_stream_length=10 * args.events)
            # Started before the run (connected, sequences read, its threads running): a socket
            # process starts its publisher once, and the ratio is its cost per event.
            if not publisher._ready.wait(30):
                raise SystemExit("the publisher did not start (is Redis up?)")
            start, end = fire(publisher)
            publisher.close()
            if run:
                publishing.append(args.events / (end - start))
            print(f"# gateway run {run}: plain {plain[-1] if plain else 0:.0f}/s, publishing "
                  f"{args.events / (end - start):.0f}/s (listener {args.events / listened[0]:.0f}/s)", flush=True)
        raw.delete(*[f"service_client:fleet:{namespace}:p:{p}" for p in range(64)])
        # End to end: one worker reads, this process publishes.
        for run in range(args.repeat + 1):
            publisher = EventPublisher(client, srv.url, partitions=64, max_stream_length=10 * args.events)
            if worker is None:
                publisher.flush(10)
                worker = Worker(srv, emu, world["bot_token"], "tput", mode="noop")
                worker.wait_ready()
                wait_owned(raw, namespace, 64)
            start, end = fire(publisher, timed=False)
            last = f"{publisher._seqs[part]}-0"
            while True:
                groups = {g["name"].decode(): g for g in raw.xinfo_groups(stream)}
                group = groups.get(GROUP)
                if group and group["pending"] == 0 and group["last-delivered-id"].decode() == last:
                    break
                if time.perf_counter() - start > 180:
                    raise SystemExit(f"the worker did not acknowledge every event: {group}")
                time.sleep(0.002)
            done_at = time.perf_counter()
            publisher.close()
            if run:
                colocated.append(args.events / (end - start))
                acked.append(args.events / (done_at - start))
            print(f"# end-to-end run {run}: publishing {args.events / (end - start):.0f}/s, acknowledged "
                  f"{args.events / (done_at - start):.0f}/s", flush=True)
        client.destroy()
        cpu_figures = cpu
        thread_figures = threads
        colocated_runs = colocated
    finally:
        if worker is not None:
            worker.terminate()
        if hose is not None:
            hose.stop()
        emu.stop()
        raw.close()
        srv.stop()
    ratios = [p / q for p, q in zip(publishing, plain, strict=True)]
    colocated = colocated_runs
    return {
        "events": args.events,
        "fleet_events_per_s_runs": " ".join(f"{v:.0f}" for v in acked),
        "fleet_events_per_s": statistics.median(acked),
        "gateway_events_per_s_runs": " ".join(f"{v:.0f}" for v in plain),
        "gateway_events_per_s": statistics.median(plain),
        "gateway_events_per_s_publishing_runs": " ".join(f"{v:.0f}" for v in publishing),
        "gateway_events_per_s_publishing": statistics.median(publishing),
        "gateway_cpu_us_per_event": statistics.median(cpu_figures["plain"][1:]),
        "gateway_cpu_us_per_event_publishing": statistics.median(cpu_figures["publishing"][1:]),
        **({
            "gateway_reader_cpu_us_per_event": statistics.median(thread_figures["plain"][1:]),
            "gateway_reader_cpu_us_per_event_publishing": statistics.median(thread_figures["publishing"][1:]),
            "publisher_thread_cpu_us_per_event": statistics.median(thread_figures["publisher"][1:]),
        } if len(thread_figures["publisher"]) > 1 else {}),
        "fleet_gateway_ratio_runs": " ".join(f"{v:.2f}" for v in ratios),
        "fleet_gateway_ratio": statistics.median(ratios),
        "gateway_events_per_s_colocated_runs": " ".join(f"{v:.0f}" for v in colocated),
        "fleet_gateway_ratio_colocated": statistics.median(colocated) / statistics.median(plain),
    }


# -- chaos ---------------------------------------------------------------------------------------


class Records:
    """The listeners' records of every worker process: ``(time, channel index, seq, worker, created)``.

    ``time`` is the system's monotonic clock when the listener started; ``created`` the
    message's creation time in the emulator, on the same clock.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._count = 0

    def path(self, name: str) -> str:
        self._count += 1
        return os.path.join(self.folder, f"{name}-{self._count}.rec")

    def read(self) -> list[tuple[float, int, int, str, float]]:
        offset = time.time() - time.monotonic()
        out = []
        for entry in os.listdir(self.folder):
            with open(os.path.join(self.folder, entry), encoding="utf-8") as handle:
                for line in handle:
                    parts = line.split()
                    if len(parts) == 5:
                        out.append((float(parts[0]), int(parts[1]), int(parts[2]), parts[3],
                                    float(parts[4]) - offset))
        out.sort()
        return out


def first_after(records: list[tuple[float, int, int, str, float]], since: float, channels: set[int],
                created_after: float = 0.0) -> tuple[float, float] | None:
    """The first record after ``since`` of one of ``channels`` (of an event created after
    ``created_after``): ``(handled at, created at)``."""
    for at, channel, _seq, _who, created in records:
        if at > since and channel in channels and created > created_after:
            return at, created
    return None


def chaos(args: argparse.Namespace) -> dict[str, Any]:
    import redis as redis_module

    from service_client import Client
    from service_client.fleet import EventPublisher, partition_of

    started = time.monotonic()
    srv = RedisProcess()
    emu = EmulatorProcess()
    folder = tempfile.mkdtemp(prefix="fleet-bench-records-")
    records = Records(folder)
    raw = redis_module.Redis.from_url(srv.url, socket_timeout=5)
    workers: dict[str, Worker] = {}
    client = None
    publisher = None
    try:
        human = emu.post("/users", {"name": "alice"})["user"]["publicId"]
        bot = emu.post("/users", {"name": "fleetbot", "bot": True})
        created = emu.post("/servers", {"name": "Fleet", "ownerId": human, "channels": [
            {"name": f"c{i}", "type": "TEXT"} for i in range(args.channels)]})
        server_id = created["server"]["publicId"]
        emu.post(f"/servers/{server_id}/members", {"userId": bot["user"]["publicId"]})
        channels = [c["publicId"] for c in created["channels"]]
        token = bot["token"]
        client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        publisher = EventPublisher(client, srv.url, partitions=64)
        client.login(token, timeout=30)
        namespace = client.user.id if client.user else ""
        publisher.flush(10)
        part_of = {i: partition_of(cid, 64) for i, cid in enumerate(channels)}
        channels_of: dict[int, set[int]] = {}
        for i, part in part_of.items():
            channels_of.setdefault(part, set()).add(i)

        def spawn(name: str) -> Worker:
            worker = Worker(srv, emu, token, name, mode="chaos", records=records.path(name), human=human)
            workers[name] = worker
            return worker

        for name in ("w0", "w1", "w2"):
            spawn(name)
        for worker in list(workers.values()):
            worker.wait_ready()
        wait_owned(raw, namespace, 64)
        per_channel = args.chaos_events // args.channels
        total = per_channel * args.channels
        stop_source = threading.Event()
        source_done = threading.Event()

        def post(ci: int, first: int, n: int) -> None:
            response = requests.post(emu.control_url + "/messages/bulk", timeout=60, json={
                "channelId": channels[ci], "authorId": human,
                "contents": [f"c{ci} s{s}" for s in range(first, first + n)]})
            response.raise_for_status()

        def source(rate: float, count: int, first: int) -> None:
            """Post ``count`` messages per channel from seq ``first``, at ``rate`` per second in all:
            two rounds a second, each one bulk post per channel (four at a time)."""
            chunk = max(1, int(rate / args.channels / 2))
            seq = first
            began = time.monotonic()
            posted = 0
            with concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="bench-post") as pool:
                while seq < first + count and not stop_source.is_set():
                    n = min(chunk, first + count - seq)
                    for future in [pool.submit(post, ci, seq, n) for ci in range(args.channels)]:
                        future.result()
                    seq += n
                    posted += n * args.channels
                    ahead = posted / rate - (time.monotonic() - began)
                    if ahead > 0:
                        stop_source.wait(ahead)
            source_done.set()

        # Kills every 3 s (round robin), one pause of 5 s, while the source runs.
        kills: list[tuple[float, str, set[int]]] = []
        feeder = threading.Thread(target=source, args=(args.rate, per_channel, 1), daemon=True)
        feeder.start()
        victim = 0
        paused = False
        next_kill = time.monotonic() + 3
        while not source_done.is_set():
            time.sleep(0.05)
            now = time.monotonic()
            if not paused and now - started > 0 and len(kills) == 2:
                # Pause the worker that is not killed next, for 5 s.
                name = f"w{(victim + 1) % 3}"
                workers[name].proc.send_signal(signal.SIGSTOP)
                resume_at = now + 5
                paused = True
                threading.Timer(max(0.0, resume_at - time.monotonic()),
                                lambda w=workers[name]: w.proc.send_signal(signal.SIGCONT)).start()
            if now >= next_kill:
                name = f"w{victim % 3}"
                held = {p for p, who in owners(raw, namespace, 64).items() if who == name}
                workers[name].kill()
                kills.append((time.monotonic(), name, held))
                spawn(name)
                victim += 1
                next_kill = now + 3
        for worker in list(workers.values()):
            with contextlib.suppress(SystemExit):
                worker.wait_ready()
        # Wait until every event is handled (or a minute without progress).
        expected = {(ci, s) for ci in range(args.channels) for s in range(1, per_channel + 1)}
        last_count, last_change = -1, time.monotonic()
        while True:
            handled = {(r[1], r[2]) for r in records.read()}
            if expected <= handled:
                break
            if len(handled) != last_count:
                last_count, last_change = len(handled), time.monotonic()
            elif time.monotonic() - last_change > 60:
                break
            time.sleep(0.25)
        chaos_seconds = time.monotonic() - started

        # Graceful hand-offs: SIGTERM a worker while events flow, start it again.
        stop_source.clear()
        source_done.clear()
        feeder = threading.Thread(target=source, args=(args.steady_rate, 10**9, per_channel + 1), daemon=True)
        feeder.start()
        time.sleep(1)
        handoffs: list[tuple[float, str, set[int]]] = []
        for k in range(args.handoffs):
            name = f"w{k % 3}"
            held = {p for p, who in owners(raw, namespace, 64).items() if who == name}
            worker = workers[name]
            worker.terminate()
            if worker.stopped is not None:
                handoffs.append((worker.stopped[0], name, held))
            spawn(name).wait_ready()
            time.sleep(1.5)

        # Redis restarted with its data while events flow.
        time.sleep(0.5)
        down_at = time.monotonic()
        srv.shutdown_save()
        up_at = srv.start()
        time.sleep(4)
        stop_source.set()
        feeder.join(30)
        time.sleep(2)
        final = records.read()

        # Replies in the emulator's store.
        replies: dict[str, int] = {}
        for cid in channels:
            for message in emu.call("GET", f"/channels/{cid}/messages")["messages"]:
                content = message.get("content", "")
                if content.startswith("re "):
                    replies[content] = replies.get(content, 0) + 1
    finally:
        for worker in list(workers.values()):
            worker.terminate(10)
        if publisher is not None:
            publisher.close()
        if client is not None:
            client.destroy()
        emu.stop()
        raw.close()
        srv.stop()
        shutil.rmtree(folder, ignore_errors=True)

    # Order and loss, from the listeners' records of the chaos phase's events.
    chaos_records = [r for r in final if r[2] <= per_channel]
    seen: set[tuple[int, int]] = set()
    highest: dict[int, int] = {}
    violations = 0
    redelivered = 0
    for _at, ci, seq, _who, _created in chaos_records:
        if (ci, seq) in seen:
            redelivered += 1
            continue
        seen.add((ci, seq))
        if seq < highest.get(ci, 0):
            violations += 1
        highest[ci] = max(highest.get(ci, 0), seq)
    lost = total - len(seen)
    wanted = {f"re c{ci} s{s}" for ci in range(args.channels) for s in range(10, per_channel + 1, 10)}
    duplicates = sum(n - 1 for content, n in replies.items() if n > 1 and content in wanted)
    missing = len(wanted - set(replies))

    def delays(events: list[tuple[float, str, set[int]]], what: str) -> list[float]:
        out = []
        for at, name, held in events:
            mine = []
            for part in held:
                chans = channels_of.get(part)
                if not chans:
                    continue
                nxt = first_after(final, at, chans)
                if nxt is not None:
                    # From the stop, or from the event's creation when it came later.
                    mine.append((nxt[0] - max(at, nxt[1])) * 1000)
            if mine:
                print(f"# {what} of {name}: {len(mine)} partitions, {min(mine):.0f} to {max(mine):.0f} ms",
                      file=sys.stderr)
            out += mine
        return out

    redelivery = delays(kills, "redelivery")
    handoff = delays(handoffs, "hand-off")
    # The first event created after the shutdown (so it went through the restarted Redis).
    after_restart = first_after(final, up_at, set(range(args.channels)), created_after=down_at)
    recovered = after_restart[0] if after_restart else None
    return {
        "fleet_chaos_events": total,
        "fleet_chaos_kills": len(kills),
        "fleet_order_violations": violations,
        "fleet_lost_events": lost,
        "fleet_duplicate_replies": duplicates,
        "fleet_missing_replies": missing,
        "fleet_redelivered_events": redelivered,
        "fleet_redelivery_samples": len(redelivery),
        "fleet_redelivery_p99_ms": percentile(redelivery, 0.99),
        "fleet_redelivery_max_ms": max(redelivery) if redelivery else float("nan"),
        "fleet_handoff_samples": len(handoff),
        "fleet_handoff_p99_ms": percentile(handoff, 0.99),
        "fleet_handoff_max_ms": max(handoff) if handoff else float("nan"),
        "fleet_redis_restart_recovery_ms": (recovered - up_at) * 1000 if recovered else float("nan"),
        "fleet_redis_outage_ms": (recovered - down_at) * 1000 if recovered else float("nan"),
        "fleet_chaos_seconds": chaos_seconds,
    }


# -- standby socket processes, catch-up, Sentinel ------------------------------------------------


def socket_main(args: argparse.Namespace) -> None:
    """A standby socket process: ``--socket``; the token comes on standard input.

    Prints ``standing`` once it competes for the lease, then ``published <monotonic time> <epoch>``
    when its publisher first adds an event after each takeover."""
    import logging

    from service_client import CatchUp, Client
    from service_client.fleet import StandbySocket

    logging.basicConfig(level=logging.WARNING,
                        format=f"%(asctime)s {args.name} %(levelname)s %(name)s: %(message)s")
    token = sys.stdin.readline().strip()
    root = args.base.rsplit("/api/", 1)[0]

    def make_client() -> Client:
        return Client(base_url=args.base, socket_url=root, catch_up=CatchUp())

    standby = StandbySocket(make_client, args.redis, token, name=args.name)
    standby.start()
    print("standing", flush=True)
    announced = None
    while True:
        publisher = standby.publisher
        if publisher is not None and publisher is not announced and publisher.published_events > 0:
            print(f"published {time.monotonic():.6f} {publisher._epoch}", flush=True)
            announced = publisher
        time.sleep(0.002)


class SocketProcess:
    """A standby socket process started by the benchmark (``--socket``)."""

    def __init__(self, redis: RedisProcess, emu: EmulatorProcess, token: str, name: str) -> None:
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--socket", "--redis", redis.url, "--base",
             emu.base_url, "--name", name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None
        self.proc.stdin.write(token + "\n")
        self.proc.stdin.flush()
        self.standing = threading.Event()
        self.published: list[float] = []
        self.changed = threading.Event()
        threading.Thread(target=self._read, daemon=True, name=f"bench-{name}-out").start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("standing"):
                self.standing.set()
            elif line.startswith("published"):
                self.published.append(float(line.split()[1]))
                self.changed.set()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


class Source:
    """Posts ``c<channel> s<seq>`` messages round robin over the channels at ``rate`` per second,
    one bulk post per channel per tick; remembers when each was posted (monotonic)."""

    def __init__(self, emu: EmulatorProcess, channels: list[str], human: str, rate: float) -> None:
        self.emu, self.channels, self.human = emu, channels, human
        self.tick = max(0.02, len(channels) / rate)
        self.posted: dict[tuple[int, int], float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="bench-source")
        self.thread.start()

    def _run(self) -> None:
        seq = 0
        session = requests.Session()
        while not self.stop.is_set():
            seq += 1
            for ci, cid in enumerate(self.channels):
                at = time.monotonic()
                try:
                    session.post(self.emu.control_url + "/messages/bulk", timeout=30, json={
                        "channelId": cid, "authorId": self.human, "contents": [f"c{ci} s{seq}"]}).raise_for_status()
                except requests.RequestException:
                    continue
                self.posted[(ci, seq)] = at
            self.stop.wait(self.tick)
        session.close()

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(30)


def _small_world(emu: EmulatorProcess, channels: int) -> tuple[str, str, str, list[str]]:
    """A human, a bot in a server of ``channels`` text channels: ``(human id, bot token, bot id, channel ids)``."""
    human = emu.post("/users", {"name": "alice"})["user"]["publicId"]
    bot = emu.post("/users", {"name": "fleetbot", "bot": True})
    created = emu.post("/servers", {"name": "Fleet", "ownerId": human, "channels": [
        {"name": f"c{i}", "type": "TEXT"} for i in range(channels)]})
    emu.post(f"/servers/{created['server']['publicId']}/members", {"userId": bot["user"]["publicId"]})
    return human, bot["token"], bot["user"]["publicId"], [c["publicId"] for c in created["channels"]]


def _settle(records: Records, expected: set[tuple[int, int]], idle: float = 15.0) -> set[tuple[int, int]]:
    """Wait until every expected event is handled, or ``idle`` seconds without progress; the handled set."""
    last_count, last_change = -1, time.monotonic()
    while True:
        handled = {(r[1], r[2]) for r in records.read()}
        if expected <= handled:
            return handled
        if len(handled) != last_count:
            last_count, last_change = len(handled), time.monotonic()
        elif time.monotonic() - last_change > idle:
            return handled
        time.sleep(0.25)


def standby(args: argparse.Namespace) -> dict[str, Any]:
    """Two standby socket processes, one worker; the active socket process SIGKILLed ``--takeovers`` times
    while messages flow (``--gap-rate`` per second over 8 channels)."""
    import redis as redis_module

    srv = RedisProcess()
    emu = EmulatorProcess()
    folder = tempfile.mkdtemp(prefix="fleet-bench-standby-")
    records = Records(folder)
    sockets: list[SocketProcess] = []
    worker = None
    source = None
    takeovers: list[float] = []
    gaps: list[tuple[float, float]] = []
    try:
        human, token, bot_id, channels = _small_world(emu, 8)
        first = SocketProcess(srv, emu, token, "s0")
        sockets.append(first)
        second = SocketProcess(srv, emu, token, "s1")
        sockets.append(second)
        worker = Worker(srv, emu, token, "w0", mode="chaos", records=records.path("w0"), human=human)
        worker.wait_ready()
        raw = redis_module.Redis.from_url(srv.url, socket_timeout=5)
        wait_owned(raw, bot_id, 64)
        raw.close()
        source = Source(emu, channels, human, args.gap_rate)
        names = 2
        for _ in range(args.takeovers):
            time.sleep(2.0)
            live = [s for s in sockets if s.proc.poll() is None]
            active = max((s for s in live if s.published), key=lambda s: s.published[-1])
            others = [s for s in live if s is not active]
            for other in others:
                other.changed.clear()
            killed_at = time.monotonic()
            active.kill()
            deadline = killed_at + 30
            took = None
            while took is None and time.monotonic() < deadline:
                for other in others:
                    if other.published and other.published[-1] > killed_at:
                        took = other.published[-1]
                time.sleep(0.002)
            if took is None:
                raise SystemExit("no standby published within 30 s of the kill")
            takeovers.append((took - killed_at) * 1000)
            gaps.append((killed_at, took))
            print(f"# takeover: {takeovers[-1]:.0f} ms", flush=True)
            replacement = SocketProcess(srv, emu, token, f"s{names}")
            names += 1
            sockets.append(replacement)
            replacement.standing.wait(30)
        time.sleep(2.0)
        source.halt()
        expected = set(source.posted)
        handled = _settle(records, expected)
        keys = [(r[1], r[2]) for r in records.read()]
    finally:
        if source is not None:
            source.halt()
        if worker is not None:
            worker.terminate(10)
        for sock in sockets:
            sock.kill()
        emu.stop()
        srv.stop()
        shutil.rmtree(folder, ignore_errors=True)
    in_gap = {key for key, at in source.posted.items() if any(start <= at <= end for start, end in gaps)}

    return {
        "fleet_standby_takeovers": len(takeovers),
        "fleet_standby_takeover_ms_runs": " ".join(f"{v:.0f}" for v in takeovers),
        "fleet_standby_takeover_ms": statistics.median(takeovers),
        "fleet_standby_takeover_max_ms": max(takeovers),
        "fleet_gap_messages": len(in_gap),
        "fleet_gap_recovered_ratio": len(in_gap & handled) / len(in_gap) if in_gap else float("nan"),
        "fleet_standby_lost_events": len(expected - handled),
        "fleet_standby_duplicate_events": len(keys) - len(set(keys)),
    }


def _sentinel_run(args: argparse.Namespace, emu: EmulatorProcess, wait_replicas: int) -> tuple[float, int]:
    """One failover: ``(ms from the kill to the first event created after it handled, events lost)``."""
    from _sentinel_process import SentinelProcesses, sentinel_client

    from service_client import Client
    from service_client.fleet import EventPublisher

    cluster = SentinelProcesses()
    folder = tempfile.mkdtemp(prefix="fleet-bench-sentinel-records-")
    records = Records(folder)
    client = publisher = worker = source = None
    try:
        human, token, bot_id, channels = _small_world(emu, 8)
        primary = sentinel_client(cluster.spec)
        client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
        publisher = EventPublisher(client, primary, wait_for_replicas=wait_replicas, replica_timeout=0.5)
        client.login(token, timeout=30)
        publisher.flush(10)
        worker = Worker(None, emu, token, "w0", mode="chaos", records=records.path("w0"), human=human,
                        sentinel=cluster.spec)
        worker.wait_ready()
        wait_owned(primary, bot_id, 64)
        source = Source(emu, channels, human, args.gap_rate)
        time.sleep(2.0)
        old = cluster.primary()
        killed_at = time.monotonic()
        cluster.kill(old)
        while cluster.primary() in (old, 0):
            if time.monotonic() - killed_at > 30:
                raise SystemExit("the sentinels did not fail over")
            time.sleep(0.05)
        cluster.server(old)  # back, empty: the sentinels make it the new primary's replica
        time.sleep(4.0)
        source.halt()
        expected = set(source.posted)
        handled = _settle(records, expected)
        after_kill = [r for r in records.read() if source.posted.get((r[1], r[2]), 0) > killed_at]
        recovered = min((r[0] for r in after_kill), default=None)
    finally:
        if source is not None:
            source.halt()
        if worker is not None:
            worker.terminate(10)
        if publisher is not None:
            publisher.close()
        if client is not None:
            client.destroy()
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
    failover_ms = (recovered - killed_at) * 1000 if recovered is not None else float("nan")
    print(f"# sentinel failover (wait_for_replicas={wait_replicas}): {failover_ms:.0f} ms, "
          f"{len(expected - handled)} of {len(expected)} lost", flush=True)
    return failover_ms, len(expected - handled)


def sentinel(args: argparse.Namespace) -> dict[str, Any]:
    """A Sentinel-managed Redis whose primary is SIGKILLed while messages flow, without and with
    ``wait_for_replicas=1``."""
    emu = EmulatorProcess()
    try:
        plain_ms, plain_lost = _sentinel_run(args, emu, 0)
        wait_ms, wait_lost = _sentinel_run(args, emu, 1)
    finally:
        emu.stop()
    return {
        "fleet_sentinel_failover_ms": plain_ms,
        "fleet_sentinel_lost_events": plain_lost,
        "fleet_sentinel_failover_ms_wait_replica": wait_ms,
        "fleet_sentinel_lost_events_wait_replica": wait_lost,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phase", choices=("all", "throughput", "chaos", "standby", "sentinel"), default="all")
    parser.add_argument("--events", type=int, default=50_000, help="firehose frames per throughput run")
    parser.add_argument("--repeat", type=int, default=3, help="throughput runs (median shown)")
    parser.add_argument("--chaos-events", type=int, default=50_000)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--rate", type=float, default=1_500.0, help="events per second the chaos source posts")
    parser.add_argument("--steady-rate", type=float, default=500.0,
                        help="events per second while the hand-offs and the Redis restart are measured")
    parser.add_argument("--handoffs", type=int, default=6)
    parser.add_argument("--check", action="store_true", help="exit 1 unless no order violation, loss or duplicate")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--redis", help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--records", default="", help=argparse.SUPPRESS)
    parser.add_argument("--human", default="", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=8, help=argparse.SUPPRESS)
    parser.add_argument("--sentinel", default="", help=argparse.SUPPRESS)
    parser.add_argument("--socket", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--takeovers", type=int, default=3, help="SIGKILLs of the active socket process")
    parser.add_argument("--gap-rate", type=float, default=100.0,
                        help="messages per second posted while the standby and Sentinel phases run")
    args = parser.parse_args()
    if args.worker:
        worker_main(args)
        return 0
    if args.socket:
        socket_main(args)
        return 0
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s bench %(levelname)s %(name)s: %(message)s")
    figures: dict[str, Any] = {}
    if args.phase in ("all", "throughput"):
        figures.update(throughput(args))
    if args.phase in ("all", "chaos"):
        figures.update(chaos(args))
    if args.phase in ("all", "standby"):
        figures.update(standby(args))
    if args.phase in ("all", "sentinel"):
        figures.update(sentinel(args))
    try:
        from redis.utils import HIREDIS_AVAILABLE
    except ImportError:
        HIREDIS_AVAILABLE = False
    import importlib.util

    figures["redis_parser"] = "hiredis" if HIREDIS_AVAILABLE else "python"
    figures["json_codec"] = "msgspec" if importlib.util.find_spec("msgspec") else "json"
    for name, value in figures.items():
        print(f"{name}: {value:.2f}" if isinstance(value, float) else f"{name}: {value}", flush=True)
    if args.check and any(figures.get(k) for k in ("fleet_order_violations", "fleet_lost_events",
                                                   "fleet_duplicate_replies")):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
