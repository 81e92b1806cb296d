"""A Sentinel-managed Redis of a benchmark's own: a primary, a replica and three sentinels on free
ports of 127.0.0.1 (``redis-server`` and ``redis-server --sentinel``; no persistence). A primary is
down after 1 s without answers; two sentinels must agree."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from _emulator_process import free_port

SERVICE = "mymaster"


def ask(port: int, command: bytes) -> bytes:
    """One inline command to 127.0.0.1:``port``; its raw answer (b"" when nothing answers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(command + b"\r\n")
            time.sleep(0.02)
            return sock.recv(65536)
    except OSError:
        return b""


class SentinelProcesses:
    """Started by the constructor: the sentinels agree on the primary, its replica and each other."""

    def __init__(self, timeout: float = 30.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not on the PATH (Debian: apt-get install redis-server)")
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="fleet-bench-sentinel-"))
        self.primary_port = free_port()
        self.replica_port = free_port()
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.server(self.primary_port)
        self.server(self.replica_port, "--replicaof", "127.0.0.1", str(self.primary_port))
        for port in self.sentinel_ports:
            conf = self.dir / f"sentinel-{port}.conf"
            conf.write_text(f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                            f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 2\n"
                            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                            f"sentinel failover-timeout {SERVICE} 4000\n")
            self._start(port, [binary, str(conf), "--sentinel"])
        deadline = time.monotonic() + timeout
        while not all(b"num-slaves\r\n$1\r\n1\r\n" in (info := ask(p, f"SENTINEL MASTER {SERVICE}".encode()))
                      and b"num-other-sentinels\r\n$1\r\n2\r\n" in info for p in self.sentinel_ports):
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit("the sentinels did not find the replica and each other")
            time.sleep(0.1)

    def _start(self, port: int, argv: list[str]) -> None:
        self.procs[port] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not ask(port, b"PING").startswith(b"+PONG"):
            if time.monotonic() > deadline:
                raise SystemExit(f"redis on port {port} did not start")
            time.sleep(0.02)

    def server(self, port: int, *extra: str) -> None:
        """Start a (new, empty) redis-server on ``port``."""
        self._start(port, [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                           "no", "--dir", str(self.dir), "--dbfilename", f"dump-{port}.rdb", "--logfile", "", *extra])

    @property
    def spec(self) -> str:
        """The sentinels as ``host:port,...`` (the worker processes' ``--sentinel``)."""
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)

    def primary(self) -> int:
        """The port of the primary the sentinels name now."""
        answer = ask(self.sentinel_ports[0], f"SENTINEL GET-MASTER-ADDR-BY-NAME {SERVICE}".encode())
        try:
            return int(answer.split(b"\r\n")[-2])
        except (ValueError, IndexError):
            return 0

    def kill(self, port: int) -> None:
        """SIGKILL the server on ``port``."""
        proc = self.procs.pop(port)
        proc.kill()
        proc.wait(10)

    def stop(self) -> None:
        """Kill every process and remove the folder."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


def sentinel_client(spec: str) -> object:
    """``Sentinel(...).master_for(SERVICE)`` for ``host:port,...``."""
    from redis.sentinel import Sentinel

    hosts = [(h, int(p)) for h, p in (item.rsplit(":", 1) for item in spec.split(","))]
    return Sentinel(hosts, socket_timeout=1).master_for(SERVICE, socket_timeout=1)
