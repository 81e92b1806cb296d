"""Bounded journals and bodies, and bad input that gets a 400 rather than a 500 or a lasting change.

The request journal and the emit journal are rings of a size one can set, and each keeps at most a
set number of bytes of a body or payload, cut with a marker. A request body over the body limit is
refused with 413 before it is parsed. JSON nested too deep, NaN and infinities, negative or
non-numeric settings are 400s that leave every setting as it was.
"""

from __future__ import annotations

import http.client
import json

import pytest
import requests

from service_client.emulator import Emulator

from .fuzzkit import assert_error_body


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def _raw(emu: Emulator, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _control(emu: Emulator, path: str, text: str) -> requests.Response:
    """A control-plane POST with ``text`` as its raw JSON body (so that NaN can be sent)."""
    return requests.post(emu.control_url + path, data=text.encode(), timeout=5,
                         headers={"Content-Type": "application/json"})


# ---------------------------------------------------------------------------------- journals
def test_the_request_journal_is_a_ring_of_the_newest_entries(world):
    emu = world.emulator
    emu.configure(journal_entries=3)
    for n in range(6):
        requests.get(f"{emu.base_url}/users/u{n}", headers=_auth(world.bot_token), timeout=5)
    assert [e["path"] for e in emu.requests()] == ["/users/u3", "/users/u4", "/users/u5"]
    emu.configure(journal_entries=2)  # a smaller ring drops the oldest at once
    assert [e["path"] for e in emu.requests()] == ["/users/u4", "/users/u5"]
    emu.reset()
    for n in range(12):
        requests.get(f"{emu.base_url}/users/u{n}", headers=_auth(world.bot_token), timeout=5)
    assert len(emu.requests()) == 12  # reset restores the default size


def test_a_journal_body_keeps_its_first_bytes_and_a_marker(world):
    emu, sid = world.emulator, world.server["publicId"]
    emu.configure(journal_body_bytes=200)
    small = {"name": "short"}
    big = {"name": "x" * 5000, "description": "y" * 5000}
    for body in (small, big):
        requests.post(f"{emu.base_url}/servers/{sid}/categories", json=body, headers=_auth(world.human_token),
                      timeout=5)
    kept, cut = (e["body"] for e in emu.requests())
    assert kept == small
    assert isinstance(cut, str) and cut.startswith('{"name":"xxxx') and len(cut.encode()) < 300
    size = len(json.dumps(big, separators=(",", ":")).encode())
    assert cut.endswith(f"[truncated: {size} bytes in all]"), cut[-60:]


def test_a_journal_body_is_cut_after_its_secrets_are_redacted(world):
    emu = world.emulator
    emu.configure(journal_body_bytes=64)
    token = world.bot_token
    requests.patch(f"{emu.base_url}/users/settings", json={"status": token + "x" * 500},
                   headers=_auth(token), timeout=5)
    body = emu.requests()[-1]["body"]
    assert token not in body and token[:20] not in body and body.startswith('{"status":"[REDACTED]')


def test_the_emit_journal_is_a_ring_with_cut_payloads(world, conns):
    emu = world.emulator
    emu.configure(journal_entries=3, journal_body_bytes=100)
    bot = conns(world.bot_token)
    for n in range(5):
        bot.emit("typing:start", f"channel-{n}")
    bot.emit("custom:event", {"text": "z" * 1000})
    bot.probe()
    emits = emu.emits()
    assert [e["event"] for e in emits] == ["typing:start", "custom:event", "fuzz:probe"]
    assert emits[0]["payload"] == "channel-4"
    assert isinstance(emits[1]["payload"], str) and emits[1]["payload"].startswith('{"text":"zzz')
    assert emits[1]["payload"].endswith("[truncated: 1011 bytes in all]")
    via_http = requests.get(emu.control_url + "/emits", timeout=5).json()["emits"]
    assert [e["event"] for e in via_http] == ["typing:start", "custom:event", "fuzz:probe"]


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_read(world):
    emu, sid = world.emulator, world.server["publicId"]
    emu.configure(max_body_bytes=1000)
    before = emu.snapshot()
    body = json.dumps({"name": "n" * 2000}).encode()
    status, data = _raw(emu, "POST", f"/api/v2/servers/{sid}/categories", body, _auth(world.human_token))
    assert status == 413 and "1000" in assert_error_body(status, data, "application/json")["error"]
    entry = emu.requests()[-1]
    assert (entry["status"], entry["body"], entry["userId"]) == (413, None, world.human["publicId"])
    status, data = _raw(emu, "POST", "/_emulator/users", body, {"Content-Type": "application/json"})
    assert status == 413 and json.loads(data)["error"]
    # a chunked body announces no length: it is cut off as soon as it passes the limit
    conn = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    try:
        conn.request("POST", "/_emulator/users", body=iter([b'{"name": "', b"n" * 800, b"n" * 800, b'"}']),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        response = conn.getresponse()
        assert response.status == 413 and json.loads(response.read())["error"]
    finally:
        conn.close()
    assert emu.snapshot() == before
    # at the limit it is read as usual
    fits = json.dumps({"name": "n" * 900}).encode()
    status, _ = _raw(emu, "POST", f"/api/v2/servers/{sid}/categories", fits, _auth(world.human_token))
    assert status == 201 and len(fits) <= 1000


def test_sizes_over_the_control_plane_and_their_defaults(world):
    emu = world.emulator
    r = _control(emu, "/settings", '{"journalEntries": 2, "journalBodyBytes": 64, "maxBodyBytes": 4096}')
    assert r.status_code == 204
    for n in range(3):
        requests.get(f"{emu.base_url}/users/u{n}", headers=_auth(world.bot_token), timeout=5)
    assert len(emu.requests()) == 2
    assert _raw(emu, "POST", "/_emulator/users", b" " * 5000, {"Content-Type": "application/json"})[0] == 413
    emu.reset()
    assert _raw(emu, "POST", "/_emulator/users", json.dumps({"name": "n" * 5000}).encode(),
                {"Content-Type": "application/json"})[0] == 201


@pytest.mark.parametrize("settings", [
    '{"journalEntries": 0}', '{"journalEntries": -1}', '{"journalEntries": 2.5}', '{"journalEntries": "9"}',
    '{"journalEntries": true}', '{"journalEntries": NaN}', '{"journalBodyBytes": 0}',
    '{"journalBodyBytes": 1e999}', '{"journalBodyBytes": null}', '{"maxBodyBytes": -5}', '{"maxBodyBytes": null}',
    '{"maxBodyBytes": 10}',
    '{"maxBodyBytes": 1e12}',
])
def test_bad_sizes_are_refused_and_change_nothing(world, settings):
    emu = world.emulator
    r = _control(emu, "/settings", settings)
    assert r.status_code == 400 and r.json()["error"]
    for n in range(3):
        requests.get(f"{emu.base_url}/users/u{n}", headers=_auth(world.bot_token), timeout=5)
    assert len(emu.requests()) == 3


@pytest.mark.parametrize("setting", [{"journal_entries": 0}, {"journal_entries": 2.5}, {"journal_entries": True},
                                     {"journal_body_bytes": float("nan")}, {"max_body_bytes": -1},
                                     {"max_body_bytes": 10}])
def test_the_python_api_refuses_bad_sizes(world, setting):
    with pytest.raises((TypeError, ValueError)):
        world.emulator.configure(**setting)


# ---------------------------------------------------------------------------------- bad input gets 400
def _deep(depth: int) -> bytes:
    return b'{"name": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("depth", [100, 900, 5000, 100_000])
def test_json_nested_too_deep_is_a_400_everywhere(world, depth):
    emu, sid = world.emulator, world.server["publicId"]
    hook = requests.post(f"{emu.base_url}/channels/{world.general['publicId']}/webhooks", json={"name": "hook"},
                         headers=_auth(world.human_token), timeout=5).json()["webhook"]
    emu.clear_requests()
    before = emu.snapshot()
    targets = [
        ("POST", f"/api/v2/servers/{sid}/categories", _auth(world.human_token)),
        ("PATCH", "/api/v2/users/settings", _auth(world.bot_token)),
        ("POST", "/_emulator/users", {"Content-Type": "application/json"}),
        ("POST", "/_emulator/emit", {"Content-Type": "application/json"}),
        ("POST", f"/api/v2/webhooks/{hook['publicId']}/{hook['token']}", {"Content-Type": "application/json"}),
    ]
    for method, path, headers in targets:
        status, data = _raw(emu, method, path, _deep(depth), headers)
        assert status == 400, (path, depth, status, data[:200])
        assert_error_body(status, data, "application/json")
    assert emu.snapshot() == before
    assert [e["status"] for e in emu.requests()] == [400, 400, 400]


def test_json_nested_64_deep_is_still_read(world):
    emu = world.emulator
    payload = {"a": 1}
    for _ in range(62):
        payload = {"a": payload}
    r = requests.post(emu.control_url + "/emit", json={"event": "x", "payload": payload}, timeout=5)
    assert r.status_code == 204


@pytest.mark.parametrize("window", ["NaN", "Infinity", "-Infinity", "1e999", "-1", "0", '"1000"', "true", "null"])
def test_a_bad_limiter_window_is_refused_and_leaves_the_limiter_off(world, window):
    emu = world.emulator
    r = _control(emu, "/ratelimit", f'{{"limit": 1, "windowMs": {window}}}')
    assert r.status_code == 400 and r.json()["error"]
    codes = [requests.get(f"{emu.base_url}/auth/me", headers=_auth(world.bot_token), timeout=5).status_code
             for _ in range(3)]
    assert codes == [200, 200, 200]


@pytest.mark.parametrize(("path", "body"), [
    ("/ratelimit", '{"limit": NaN, "windowMs": 1000}'),
    ("/ratelimit", '{"limit": -1, "windowMs": 1000}'),
    ("/ratelimit", '{"limit": 1.5, "windowMs": 1000}'),
    ("/ratelimit", '{"limit": "5", "windowMs": 1000}'),
    ("/ratelimit", '{"limit": 1, "windowMs": 1000, "retryAfterFraction": "yes"}'),
    ("/outage", '{"seconds": NaN}'),
    ("/outage", '{"seconds": -1}'),
    ("/outage", '{"seconds": "60"}'),
    ("/outage", '{"seconds": Infinity}'),
    ("/settings", '{"echoDelayMs": NaN}'),
    ("/settings", '{"echoDelayMs": -5}'),
    ("/settings", '{"echoDelayMs": "5"}'),
    ("/settings", '{"voiceUrl": 5}'),
    ("/settings", '{"voiceE2eeKey": {"k": 1}}'),
    ("/faults", '{"method": "GET", "path": "/auth/me", "delayMs": NaN}'),
    ("/faults", '{"method": "GET", "path": "/auth/me", "delayMs": -1}'),
    ("/faults", '{"method": "GET", "path": "/auth/me", "status": 500, "count": 1.5}'),
    ("/faults", '{"method": "GET", "path": "/auth/me", "status": 500, "retryAfter": NaN}'),
    ("/faults", '{"method": "GET", "path": "/auth/me", "status": 500, "retryAfter": {"a": 1}}'),
])
def test_bad_settings_are_refused_and_change_nothing(world, conns, path, body):
    emu = world.emulator
    r = _control(emu, path, body)
    assert r.status_code == 400 and r.json()["error"], (r.status_code, r.text)
    assert emu.core.faults.list() == []
    codes = [requests.get(f"{emu.base_url}/auth/me", headers=_auth(world.bot_token), timeout=5).status_code
             for _ in range(3)]
    assert codes == [200, 200, 200]
    bot = conns(world.bot_token)  # no outage: the socket still connects
    bot.probe()
    assert (emu.core.rt.echo_delay_ms, emu.core.rt.voice_e2ee_key) == (0.0, None)


@pytest.mark.parametrize("call", [
    lambda emu: emu.set_rate_limit(1, float("nan")),
    lambda emu: emu.set_rate_limit(1, float("inf")),
    lambda emu: emu.set_outage(float("nan")),
    lambda emu: emu.set_outage(-1),
    lambda emu: emu.configure(echo_delay_ms=float("nan")),
    lambda emu: emu.add_fault("GET", "/auth/me", delay_ms=float("nan")),
    lambda emu: emu.add_fault("GET", "/auth/me", status=500, retry_after=float("nan")),
])
def test_the_python_api_refuses_the_same_values(world, call):
    emu = world.emulator
    with pytest.raises(ValueError):
        call(emu)
    assert requests.get(f"{emu.base_url}/auth/me", headers=_auth(world.bot_token), timeout=5).status_code == 200
