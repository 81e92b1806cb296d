"""A ``redis-server`` of a test module's own on a free port of 127.0.0.1 (no persistence)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

__all__ = ["RedisServer", "free_port"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """Started by the constructor (it answers PING when it returns), stopped by :meth:`stop`.

    Args:
        timeout: Seconds to wait for it to answer.
        port: The port (default: a free one); a server stopped and started again on its port
            comes back empty.

    Raises:
        FileNotFoundError: No ``redis-server`` on the PATH.
        RuntimeError: It did not answer within ``timeout`` seconds.
    """

    def __init__(self, timeout: float = 10.0, *, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server is not on the PATH (Debian: apt-get install redis-server)")
        self.port = free_port() if port is None else port
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", "/tmp", "--logfile", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not start")
            time.sleep(0.02)

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Kill the server and wait for it."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait(10)
