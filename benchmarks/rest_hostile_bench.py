"""What a hostile REST server costs a call: time held and memory taken, with the default limits.

Run: ``python benchmarks/rest_hostile_bench.py``. Each scenario runs in a fresh
process of its own (so that its peak memory is its own) against a raw server on a
port-0 socket, and prints one ``name: value`` line:

- ``endless_body_peak_mb``: growth of the peak resident memory of a process
  whose one call gets a 200 whose body never ends (the server stops at 256 MiB).
  The default body limit is 16 MiB.
- ``gzip_bomb_peak_mb``: the same for a 200 whose gzip body (about 256 KiB)
  decodes to 256 MiB.
- ``trickled_head_call_s``: how long ``timeout_ms=2000`` holds a call whose
  server sends its status line and headers one byte every 50 ms (for 12 s).
- ``*_error``: how each call ended (the exception's type).
"""

from __future__ import annotations

import argparse
import resource
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service_client.rest import RestSession, Route

SCENARIOS = ("endless_body", "gzip_bomb", "trickled_head")
#: Bytes the hostile bodies stop at, so that a client with no limit still ends.
HOSTILE_BYTES = 256 * 1024 * 1024


def _answer(name: str, conn: socket.socket) -> None:
    if name == "endless_body":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
        chunk = b" " * (1024 * 1024)
        for _ in range(HOSTILE_BYTES // len(chunk)):
            conn.sendall(chunk)
    elif name == "gzip_bomb":
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        block = b" " * (1024 * 1024)
        bomb = b"".join([packer.compress(block) for _ in range(HOSTILE_BYTES // len(block))] + [packer.flush()])
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(bomb)}\r\n\r\n".encode()
            + bomb
        )
    else:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Filler: " + b"a" * 200 + b"\r\n"
        for byte in head:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)


def _serve(name: str, listener: socket.socket) -> None:
    conn, _ = listener.accept()
    with conn:
        conn.settimeout(30.0)
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(4096)
        try:
            _answer(name, conn)
        except OSError:
            pass  # the client hung up: what it is meant to do


def run_one(name: str) -> None:
    """Run one scenario in this process and print its lines."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = threading.Thread(target=_serve, args=(name, listener), name="bench-server", daemon=True)
    server.start()
    rest = RestSession(f"http://127.0.0.1:{listener.getsockname()[1]}/v2", user_agent="service_client/bench")
    rest.token = "bench-token"
    before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    outcome = "none"
    try:
        rest.request(Route("GET", "/chat/C1"), timeout_ms=2000 if name == "trickled_head" else 30_000, retry=0)
    except Exception as exc:  # noqa: BLE001 - the outcome is a figure
        outcome = type(exc).__name__
    elapsed = time.monotonic() - started
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_kb) / 1024
    rest.close()
    listener.close()
    if name == "trickled_head":
        print(f"trickled_head_call_s: {elapsed:.2f}")
    else:
        print(f"{name}_peak_mb: {grown_mb:.1f}")
    print(f"{name}_error: {outcome}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", choices=SCENARIOS, help="run one scenario in this process")
    args = parser.parse_args(argv)
    if args.one:
        run_one(args.one)
        return 0
    for name in SCENARIOS:
        done = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, check=True)
        sys.stdout.write(done.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
