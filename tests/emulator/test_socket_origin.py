"""WebSocket upgrades and socket.io requests from another web origin are refused, quietly.

A browser lets any page open a WebSocket to any host and read its frames; only the ``Origin``
header it sends tells the page's site. The emulator accepts upgrades that carry its own origin
(its web page) or none at all (bots, ``websocket-client``, node) and answers every other one
403, with the same rule as the control plane. A refused upgrade leaves no ERROR in uvicorn's log.
Raw sockets, so that any ``Host`` and ``Origin`` can be sent.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator

import pytest
import requests
import websocket

from service_client.emulator import Emulator


def upgrade(emu: Emulator, origin: str | None, *, host: str | None = None) -> tuple[int, bytes]:
    """Send a WebSocket upgrade of the socket.io path; return its status and the answer's bytes
    (the head, then the body when the answer is a refusal with a length)."""
    extra = f"Origin: {origin}\r\n" if origin is not None else ""
    with socket.create_connection(("127.0.0.1", emu.port), timeout=10) as sock:
        sock.sendall((f"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
                      f"Host: {host or f'127.0.0.1:{emu.port}'}\r\n{extra}"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while status != 101 and len(body) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            body += chunk
        return status, body


@pytest.fixture
def uvicorn_errors() -> Iterator[list[logging.LogRecord]]:
    """Records of ERROR or above that uvicorn logs while the test runs (its loggers do not
    propagate to the root logger, so caplog would not see them)."""
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    handler = Keep(logging.ERROR)
    target = logging.getLogger("uvicorn.error")
    target.addHandler(handler)
    try:
        yield seen
    finally:
        target.removeHandler(handler)


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost.evil",
                                    "http://127.0.0.1:{port}.evil.example"])
def test_an_upgrade_from_another_origin_is_refused(world, origin, uvicorn_errors):
    emu = world.emulator
    status, body = upgrade(emu, origin.format(port=emu.port))
    assert status == 403
    assert "origin" in json.loads(body)["error"]
    assert emu.connection_count() == 0
    assert [r.getMessage() for r in uvicorn_errors] == []


@pytest.mark.parametrize("origin", [None, "http://127.0.0.1:{port}", "http://localhost:{port}",
                                    "http://[::1]:{port}", "HTTP://LOCALHOST:{port}"])
def test_an_upgrade_with_the_emulators_own_origin_or_none_is_accepted(world, origin):
    emu = world.emulator
    status, _ = upgrade(emu, None if origin is None else origin.format(port=emu.port))
    assert status == 101


def test_an_allowed_host_is_an_own_origin_too():
    with Emulator(allowed_hosts=["emu.test"]) as emu:
        assert upgrade(emu, f"http://emu.test:{emu.port}", host=f"emu.test:{emu.port}")[0] == 101
        assert upgrade(emu, "http://other.test", host=f"emu.test:{emu.port}")[0] == 403


def test_socket_io_polling_from_another_origin_is_refused_too(world):
    url = world.emulator.socket_url + "/socket.io/?EIO=4&transport=polling"
    refused = requests.get(url, headers={"Origin": "http://evil.example"}, timeout=5)
    assert refused.status_code == 403 and "origin" in refused.json()["error"]
    assert "access-control-allow-origin" not in refused.headers
    assert requests.get(url, timeout=5).status_code == 200  # no Origin: a program
    own = requests.get(url, headers={"Origin": world.emulator.socket_url}, timeout=5)
    assert own.status_code == 200


def test_a_refused_upgrade_logs_no_uvicorn_error(world, uvicorn_errors):
    emu = world.emulator
    assert upgrade(emu, None, host=f"evil.example:{emu.port}")[0] == 421
    assert upgrade(emu, "http://evil.example")[0] == 403
    emu.set_outage(60)
    try:
        assert upgrade(emu, None)[0] == 503
    finally:
        emu.set_outage(None)
    assert upgrade(emu, None)[0] == 101  # a last exchange, after which every refusal has returned
    assert [r.getMessage() for r in uvicorn_errors] == []


def test_websocket_client_and_the_library_still_connect(world, bot):
    """websocket-client sends the URL's own origin; ``suppress_origin`` sends none. Both are
    answered, and the library's client (the ``bot`` fixture) has joined."""
    emu = world.emulator
    url = emu.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    for options in ({}, {"suppress_origin": True}):
        ws = websocket.create_connection(url, timeout=10, **options)
        try:
            assert ws.recv().startswith("0{")  # Engine.IO OPEN
        finally:
            ws.close()
    assert emu.connection_count() == 1
