"""The emulator's web surface against a hostile page in the same browser.

Only the web page itself is HTML; every other answer is JSON or plain text with ``nosniff`` and
a content security policy that allows nothing, fault answers included. Control-plane writes need
a JSON body from the emulator's own origin. Only the hosts the emulator was started for are
answered, so a DNS-rebound name reaches nothing. Raw ``http.client`` requests, so that any
``Host``, ``Origin`` or ``Content-Type`` can be sent.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import pytest
import requests

from service_client.emulator import Emulator, EmulatorCore
from service_client.emulator import __main__ as emulator_cli

STRICT_CSP = "default-src 'none'; frame-ancestors 'none'"


class Answer:
    """One raw HTTP answer: status, headers (lower-cased names) and body."""

    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = response.status
        self.headers = {k.lower(): v for k, v in response.getheaders()}
        self.data = response.read()

    def json(self) -> Any:
        assert self.headers.get("content-type", "").startswith("application/json"), (self.status, self.headers)
        return json.loads(self.data)


def send(emu: Emulator, method: str, path: str, *, body: bytes | None = None, host: str | None = None,
         headers: dict[str, str] | None = None) -> Answer:
    """One request on a new connection; ``host`` replaces the ``Host`` header (None: the emulator's)."""
    conn = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    try:
        sent = dict(headers or {})
        if host is not None:
            sent["Host"] = host
        conn.request(method, path, body=body, headers=sent)
        return Answer(conn.getresponse())
    finally:
        conn.close()


def own(emu: Emulator) -> str:
    return f"http://127.0.0.1:{emu.port}"


def as_json(value: Any) -> dict[str, Any]:
    return {"body": json.dumps(value).encode(), "headers": {"Content-Type": "application/json"}}


def auth(world: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.bot_token}"}


def user_names(emu: Emulator) -> list[str]:
    return [entry["user"]["name"] for entry in emu.users()]


# ---------------------------------------------------------------------------------- only the page is HTML
def _answers(world: Any) -> dict[str, Answer]:
    emu, sid = world.emulator, world.server["publicId"]
    emu.add_fault("GET", "/servers", status=503, count=1)
    emu.add_fault("GET", "/servers/*/roles", status=200, body="<script>alert(1)</script>", count=1)
    emu.add_fault("GET", "/servers/*/stats", status=502, body="<h1>bad gateway</h1>", content_type="text/plain")
    return {
        "REST 200": send(emu, "GET", "/api/v2/auth/me", headers=auth(world)),
        "REST 204": send(emu, "PATCH", "/api/v2/users/settings", headers=auth(world),
                         body=b'{"status": "idle"}'),
        "REST 401": send(emu, "GET", "/api/v2/auth/me"),
        "REST 404": send(emu, "GET", "/api/v2/nothing", headers=auth(world)),
        "fault, JSON": send(emu, "GET", "/api/v2/servers", headers=auth(world)),
        "fault with a body": send(emu, "GET", f"/api/v2/servers/{sid}/roles", headers=auth(world)),
        "fault as plain text": send(emu, "GET", f"/api/v2/servers/{sid}/stats", headers=auth(world)),
        "control read": send(emu, "GET", "/_emulator/users"),
        "control 404": send(emu, "GET", "/_emulator/nothing"),
        "page script": send(emu, "GET", "/_emulator/ui/app.js"),
        "outside every prefix": send(emu, "GET", "/favicon.ico"),
        "socket.io polling": send(emu, "GET", "/socket.io/?EIO=4&transport=polling"),
    }


def test_every_answer_but_the_page_is_nosniff_with_a_policy_that_allows_nothing(world):
    answers = _answers(world)
    for name, answer in answers.items():
        assert answer.headers.get("x-content-type-options") == "nosniff", name
        assert answer.headers.get("content-security-policy") == STRICT_CSP, (name, answer.headers)
        assert not answer.headers.get("content-type", "").startswith("text/html"), (name, answer.headers)
    # the page itself keeps the policy it needs to run its own script, and only its own
    page = send(world.emulator, "GET", "/")
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"


def test_a_fault_body_is_served_as_json_or_plain_text_never_html(world):
    emu = world.emulator
    with pytest.raises(ValueError, match="text/plain"):
        emu.add_fault("GET", "/auth/me", status=200, body="<html>proxy</html>", content_type="text/html")
    for refused in ("text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "", 5):
        answer = send(emu, "POST", "/_emulator/faults", **as_json(
            {"method": "GET", "path": "/auth/me", "status": 200, "body": "<b>x</b>", "contentType": refused}))
        assert answer.status == 400, (refused, answer.status)
        assert "error" in answer.json()
    assert emu.requests() == [] and send(emu, "GET", "/_emulator/faults").json() == {"faults": []}
    # an HTML-looking proxy page is still possible: its text comes as JSON (invalid) or plain text
    emu.add_fault("GET", "/auth/me", status=200, body="<html>proxy</html>")
    emu.add_fault("GET", "/auth/me", status=502, body="<h1>bad gateway</h1>", content_type="text/plain")
    as_json_type = send(emu, "GET", "/api/v2/auth/me", headers=auth(world))
    as_text = send(emu, "GET", "/api/v2/auth/me", headers=auth(world))
    assert (as_json_type.status, as_json_type.data) == (200, b"<html>proxy</html>")
    assert as_json_type.headers["content-type"] == "application/json"
    assert (as_text.status, as_text.data) == (502, b"<h1>bad gateway</h1>")
    assert as_text.headers["content-type"] == "text/plain; charset=utf-8"
    listed = emu.add_fault("GET", "/x", status=500, body="x", content_type="Text/Plain; charset=UTF-8")
    assert [f["contentType"] for f in send(emu, "GET", "/_emulator/faults").json()["faults"] if f["id"] == listed] \
        == ["text/plain"]


# ---------------------------------------------------------------------------------- control-plane CSRF
def _writes() -> list[tuple[str, str]]:
    core = EmulatorCore()
    core.store.close()
    return sorted({(m, "/" + "/".join(s)) for m, s, _h in core.control._routes if m != "GET"})


@pytest.mark.parametrize("route", _writes(), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_control_write_needs_a_json_content_type(world, route):
    """What a cross-site form or a "simple" fetch can send (no type, text/plain, form data) is
    refused before anything happens, on every write route."""
    emu = world.emulator
    method, template = route
    ids = iter([world.server["publicId"], world.human["publicId"], world.general["publicId"]])
    path = "/_emulator" + "/".join(next(ids) if seg.startswith("{") else seg for seg in template.split("/"))
    before = emu.snapshot()
    for content_type in (None, "text/plain", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", "application/json-seq", "text/json"):
        headers = {} if content_type is None else {"Content-Type": content_type}
        answer = send(emu, method, path, body=b'{"name": "mallory", "userId": "x", "seconds": 60}',
                      headers=headers)
        assert answer.status == 415, (content_type, answer.status, answer.data[:200])
        assert answer.json()["error"]
    assert emu.snapshot() == before
    assert emu.users() and emu.server(world.server["publicId"])  # not reset either


def test_a_control_request_from_another_origin_is_forbidden_and_changes_nothing(world):
    emu = world.emulator
    before = emu.snapshot()
    for origin in ("http://evil.example", f"http://evil.example:{emu.port}", "null",
                   f"http://127.0.0.1:{emu.port + 1 if emu.port < 65535 else 1}", f"https://127.0.0.1:{emu.port}x"):
        made = send(emu, "POST", "/_emulator/users", body=b'{"name": "mallory"}',
                    headers={"Content-Type": "application/json", "Origin": origin})
        read = send(emu, "GET", "/_emulator/users", headers={"Origin": origin})
        for answer in (made, read):
            assert answer.status == 403, (origin, answer.status)
            assert world.human_token.encode() not in answer.data and answer.json()["error"]
    assert emu.snapshot() == before and "mallory" not in user_names(emu)


def test_the_emulators_own_origin_may_write(world):
    emu = world.emulator
    for origin in (own(emu), f"http://localhost:{emu.port}", f"http://[::1]:{emu.port}"):
        answer = send(emu, "POST", "/_emulator/users", body=json.dumps({"name": f"u{len(origin)}"}).encode(),
                      headers={"Content-Type": "application/json; charset=utf-8", "Origin": origin})
        assert answer.status == 201, (origin, answer.data)
    # a request without Origin (curl, a test, the Python API) is the normal case
    assert send(emu, "POST", "/_emulator/users", **as_json({"name": "plain"})).status == 201
    assert send(emu, "DELETE", "/_emulator/faults", headers={"Content-Type": "application/json"}).status == 204


# ---------------------------------------------------------------------------------- unknown hosts
REBOUND = ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost:1", "127.0.0.2:{port}",
           "127.0.0.1.evil.example:{port}", "", "[::1]"]


@pytest.mark.parametrize("host", REBOUND)
def test_an_unknown_host_is_refused_everywhere(world, host):
    emu = world.emulator
    host = host.format(port=emu.port)
    for method, path, headers, body in (
        ("GET", "/", {}, None),
        ("GET", "/_emulator/ui/app.js", {}, None),
        ("GET", "/_emulator/users", {}, None),
        ("POST", "/_emulator/reset", {"Content-Type": "application/json"}, None),
        ("GET", "/api/v2/auth/me", auth(world), None),
        ("GET", "/socket.io/?EIO=4&transport=polling", {}, None),
    ):
        answer = send(emu, method, path, host=host, headers=headers, body=body)
        assert answer.status == 421, (host, path, answer.status)
        assert answer.json()["error"]
        assert world.bot_token.encode() not in answer.data and world.human_token.encode() not in answer.data
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert emu.users() and emu.requests() == []  # nothing reset, nothing reached the REST API


def _upgrade(emu: Emulator, host: str) -> bytes:
    """The first bytes of the answer to a WebSocket upgrade of the socket.io path sent with ``host``."""
    with socket.create_connection(("127.0.0.1", emu.port), timeout=10) as sock:
        sock.sendall((f"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: {host}\r\n"
                      "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


def test_the_socket_upgrade_is_refused_for_an_unknown_host(world):
    emu = world.emulator
    assert _upgrade(emu, f"evil.example:{emu.port}").startswith(b"HTTP/1.1 421 ")
    assert _upgrade(emu, f"127.0.0.1:{emu.port}").startswith(b"HTTP/1.1 101 ")
    assert emu.connection_count() == 0


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LocalHost:{port}", "[::1]:{port}"])
def test_the_loopback_names_with_the_emulators_port_are_answered(world, host):
    answer = send(world.emulator, "GET", "/api/v2/auth/me", host=host.format(port=world.emulator.port),
                  headers=auth(world))
    assert answer.status == 200 and answer.json()["user"]["publicId"] == world.bot["publicId"]


def test_allowed_hosts_adds_names_the_emulator_answers_to():
    with Emulator(allowed_hosts=["emu.test", "proxy.test:8443", "::1", "[fd00::5]"]) as emu:
        for host in ("emu.test", f"emu.test:{emu.port}", "EMU.TEST:80", "proxy.test:8443", "[fd00::5]:1",
                     f"127.0.0.1:{emu.port}"):
            assert send(emu, "GET", "/_emulator/connections", host=host).status == 200, host
        for host in ("proxy.test", "proxy.test:8444", "other.test", "emu.test.evil.example"):
            assert send(emu, "GET", "/_emulator/connections", host=host).status == 421, host
        # the page served under an allowed name may drive the control plane from there
        made = send(emu, "POST", "/_emulator/users", host=f"emu.test:{emu.port}", body=b'{"name": "a"}',
                    headers={"Content-Type": "application/json", "Origin": f"http://emu.test:{emu.port}"})
        assert made.status == 201


@pytest.mark.parametrize("bad", [["*"], ["*.example"], ["a b"], ["a/b"], ["host:port"], ["host:99999"], [""],
                                 "emu.test", [5], ["http://emu.test"]])
def test_allowed_hosts_refuses_what_is_not_a_host(bad):
    with pytest.raises((TypeError, ValueError), match=r"allowed_hosts (entry|entries|must be a list)"):
        Emulator(allowed_hosts=bad)


def test_the_command_line_passes_allowed_hosts_to_the_emulator(monkeypatch):
    seen: dict[str, Any] = {}

    class Refusing:
        def __init__(self, **options: Any) -> None:
            seen.update(options)

        def start(self) -> None:
            raise OSError("port taken")

        def stop(self) -> None:
            seen["stopped"] = True

    monkeypatch.setattr(emulator_cli, "Emulator", Refusing)
    assert emulator_cli.main(["--allowed-host", "emu.test", "--allowed-host", "proxy.test:8443"]) == 1
    assert seen["allowed_hosts"] == ["emu.test", "proxy.test:8443"]
    seen.clear()
    assert emulator_cli.main([]) == 1 and seen["allowed_hosts"] == []
    monkeypatch.undo()
    assert emulator_cli.main(["--allowed-host", "http://emu.test/"]) == 2  # refused before it starts


def test_socket_io_grants_no_other_origin_cross_site_reads(world):
    """No ``Access-Control-Allow-Origin`` for another site's page on the socket.io path: only the
    emulator's own page, on its own origin, reads its answers."""
    answer = send(world.emulator, "GET", "/socket.io/?EIO=4&transport=polling",
                  headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in answer.headers
    assert "access-control-allow-credentials" not in answer.headers


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/socket.io/?EIO=4&transport=bogus", 400),
    ("GET", "/socket.io/?EIO=4&transport=polling&sid=nope", 400),
    ("GET", "/socket.io/?EIO=3&transport=polling", 400),
    ("PUT", "/socket.io/?EIO=4&transport=polling", 405),
])
def test_socket_io_refusals_are_json_errors_too(world, method, path, status):
    answer = send(world.emulator, method, path)
    assert answer.status == status
    assert isinstance(answer.json()["error"], str) and answer.json()["error"]
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_requests_library_calls_keep_working(world):
    """What tests and tools send (no Origin, a JSON body) still works on every plane."""
    emu = world.emulator
    assert requests.post(emu.control_url + "/users", json={"name": "tool"}, timeout=5).status_code == 201
    assert requests.get(emu.base_url + "/auth/me", headers=auth(world), timeout=5).status_code == 200
    assert requests.get(emu.page_url, timeout=5).status_code == 200
