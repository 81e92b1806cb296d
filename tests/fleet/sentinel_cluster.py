"""A Sentinel-managed Redis of a test's own: a primary, a replica and three sentinels on free ports of
127.0.0.1 (``redis-server``, and ``redis-server --sentinel`` for the sentinels; no persistence).

Failover settings: a primary is down after 1 s without answers; two sentinels must agree.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .redis_server import free_port

__all__ = ["SentinelCluster"]

SERVICE = "mymaster"


def _ask(port: int, command: bytes) -> bytes:
    """One inline command to 127.0.0.1:``port``; its raw answer (b"" when nothing answers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(command + b"\r\n")
            time.sleep(0.02)
            return sock.recv(65536)
    except OSError:
        return b""


class SentinelCluster:
    """Started by the constructor (sentinels agree on the primary, its replica and each other).

    Raises:
        FileNotFoundError: No ``redis-server`` on the PATH.
        RuntimeError: It did not come up within ``timeout`` seconds.
    """

    def __init__(self, timeout: float = 30.0) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not on the PATH (Debian: apt-get install redis-server)")
        self.binary = binary
        self.dir = Path(tempfile.mkdtemp(prefix="sentinel-test-"))
        self.primary_port = free_port()
        self.replica_port = free_port()
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        try:
            self._server(self.primary_port)
            self._server(self.replica_port, "--replicaof", "127.0.0.1", str(self.primary_port))
            for port in self.sentinel_ports:
                conf = self.dir / f"sentinel-{port}.conf"
                conf.write_text(
                    f"port {port}\nbind 127.0.0.1\ndir {self.dir}\n"
                    f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary_port} 2\n"
                    f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                    f"sentinel failover-timeout {SERVICE} 4000\n"
                    f"sentinel parallel-syncs {SERVICE} 1\n")
                self._start(port, [self.binary, str(conf), "--sentinel"])
            deadline = time.monotonic() + timeout
            while not self._agreed():
                if time.monotonic() > deadline:
                    raise RuntimeError("the sentinels did not find the replica and each other")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise

    def _start(self, port: int, argv: list[str]) -> None:
        self.procs[port] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not _ask(port, b"PING").startswith(b"+PONG"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis on port {port} did not start")
            time.sleep(0.02)

    def _server(self, port: int, *extra: str) -> None:
        self._start(port, [self.binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", str(self.dir), "--dbfilename", f"dump-{port}.rdb",
                           "--logfile", "", *extra])

    def _agreed(self) -> bool:
        for port in self.sentinel_ports:
            info = _ask(port, f"SENTINEL MASTER {SERVICE}".encode())
            if b"num-slaves\r\n$1\r\n1\r\n" not in info or b"num-other-sentinels\r\n$1\r\n2\r\n" not in info:
                return False
        return True

    @property
    def sentinels(self) -> list[tuple[str, int]]:
        """The sentinels' addresses, for ``redis.sentinel.Sentinel``."""
        return [("127.0.0.1", port) for port in self.sentinel_ports]

    def primary(self) -> int:
        """The port of the primary the sentinels name now."""
        answer = _ask(self.sentinel_ports[0], f"SENTINEL GET-MASTER-ADDR-BY-NAME {SERVICE}".encode())
        return int(answer.split(b"\r\n")[-2])

    def wait_failover(self, old: int, timeout: float = 20.0) -> int:
        """Wait until the sentinels name a primary other than ``old``; its port.

        Raises:
            RuntimeError: Not within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                now = self.primary()
            except (ValueError, IndexError):
                now = old
            if now != old:
                return now
            if time.monotonic() > deadline:
                raise RuntimeError("the sentinels did not fail over")
            time.sleep(0.05)

    def kill(self, port: int) -> None:
        """SIGKILL the server on ``port``."""
        proc = self.procs.pop(port)
        proc.kill()
        proc.wait(10)

    def restart(self, port: int) -> None:
        """Start an empty server again on ``port`` (the sentinels make it a replica of the primary)."""
        self._server(port)

    def stop(self) -> None:
        """Kill every process and remove the folder."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(10)
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)
