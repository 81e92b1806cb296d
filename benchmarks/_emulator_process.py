"""The emulator in a child process, shared by the benchmarks.

``python -m service_client emulator --port N`` runs in its own process so that
it does not share the measured client's GIL. Imported by the benchmark scripts
of this folder (``python benchmarks/<name>.py`` puts the folder on
``sys.path``).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
from typing import Any

import requests

#: Seconds the emulator process may take to print its ``Serving`` line.
START_TIMEOUT_S = 30.0


def free_port() -> int:
    """A TCP port of 127.0.0.1 free at the time of the call."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(proc: subprocess.Popen[str]) -> None:
    """Ctrl-C ``proc``; kill it if it has not ended 10 s later. Nothing when it has ended."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


class EmulatorProcess:
    """The emulator in a child process, started and ready when the constructor returns.

    Attributes:
        port: Its port on 127.0.0.1.
        root: ``http://127.0.0.1:PORT`` (socket.io lives there).
        socket_url: The same as ``root``, under the name ``Client`` uses.
        base_url: ``ROOT/api/v2``, the REST API.
        control_url: ``ROOT/_emulator``, the control plane.

    Raises:
        RuntimeError: The process ended, or printed no ``Serving`` line within
            ``start_timeout`` seconds (it is stopped first).
    """

    def __init__(self, *, start_timeout: float = START_TIMEOUT_S) -> None:
        self.port = free_port()
        self.root = self.socket_url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/api/v2"
        self.control_url = self.root + "/_emulator"
        self._control = requests.Session()
        self._control.headers["Content-Type"] = "application/json"  # control-plane writes need it, bodiless ones too
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service_client", "emulator", "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                if line.startswith("Serving"):
                    ready.set()
            ready.set()  # EOF: the process ended

        threading.Thread(target=read, name="benchmark-emulator-out", daemon=True).start()
        if not ready.wait(start_timeout) or self.proc.poll() is not None:
            self.stop()
            raise RuntimeError("the emulator process did not start")

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """A control-plane request (``path`` below ``/_emulator``); the decoded JSON answer, None when empty.

        Raises:
            requests.HTTPError: The answer was 4xx or 5xx.
        """
        response = self._control.request(method, self.control_url + path, json=body, timeout=60)
        response.raise_for_status()
        return response.json() if response.content else None

    def post(self, path: str, body: Any) -> Any:
        """``call("POST", path, body)``."""
        return self.call("POST", path, body)

    def stop(self) -> None:
        """End the process (Ctrl-C, then kill after 10 s) and close the control session."""
        stop_process(self.proc)
        self._control.close()
