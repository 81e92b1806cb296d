"""Fault injection, the limiter and the request journal ."""

from __future__ import annotations

import math
import threading
import time

import pytest
import requests

from service_client.emulator.faults import RateLimiter, bucket_key


def _get(world, path, **kw):
    return requests.get(world.emulator.base_url + path, headers={"Authorization": f"Bearer {world.bot_token}"},
                        timeout=10, **kw)


@pytest.mark.parametrize(("method", "path", "key"), [
    ("get", "/servers", "GET:servers"),
    ("GET", "/servers/S1/members/U1", "GET:servers/S1"),
    ("POST", "/servers/S1/roles", "POST:servers/S1"),
    ("GET", "/chat/C1?limit=50", "GET:chat/C1"),
    ("GET", "/channels/dm/U2", "GET:channels/dm"),
    ("PATCH", "/users/settings", "PATCH:users/settings"),
    ("POST", "/webhooks/W1/tok", "POST:webhooks/W1"),
])
def test_bucket_key(method, path, key):
    assert bucket_key(method, path) == key


def test_fault_count_then_normal(world):
    emu = world.emulator
    emu.add_fault("GET", "/auth/me", status=503, count=2, retry_after="1.5")
    first, second, third = (_get(world, "/auth/me") for _ in range(3))
    assert first.status_code == second.status_code == 503
    assert first.headers["Retry-After"] == "1.5" and "error" in first.json()
    assert third.status_code == 200


def test_fault_glob_and_method(world):
    emu = world.emulator
    emu.add_fault("*", "/servers/*", status=500, count=None)
    sid = world.server["publicId"]
    assert _get(world, f"/servers/{sid}").status_code == 500
    assert _get(world, f"/servers/{sid}").status_code == 500
    assert _get(world, "/servers").status_code == 200  # glob needs a second segment
    emu.clear_faults()
    assert _get(world, f"/servers/{sid}").status_code == 200
    emu.add_fault("POST", "/servers", status=429, retry_after="Wed, 21 Oct 2015 07:28:00 GMT")
    assert _get(world, "/servers").status_code == 200
    r = requests.post(emu.base_url + "/servers", json={"name": "x"},
                      headers={"Authorization": f"Bearer {world.human_token}"}, timeout=5)
    assert r.status_code == 429 and r.headers["Retry-After"] == "Wed, 21 Oct 2015 07:28:00 GMT"


def test_fault_non_json_200_and_empty(world):
    emu = world.emulator
    emu.add_fault("GET", "/auth/me", status=200, body="<html>proxy</html>", content_type="text/plain")
    r = _get(world, "/auth/me")
    assert r.status_code == 200 and r.text == "<html>proxy</html>"
    assert r.headers["content-type"].startswith("text/plain")  # never text/html: see test_web_surface
    emu.add_fault("GET", "/auth/me", status=200, body="")
    r = _get(world, "/auth/me")
    assert r.status_code == 200 and r.content == b""


def test_fault_delay_only_then_normal(world):
    emu = world.emulator
    emu.add_fault("GET", "/auth/me", delay_ms=300)
    start = time.monotonic()
    r = _get(world, "/auth/me")
    elapsed = time.monotonic() - start
    assert r.status_code == 200 and 0.3 <= elapsed < 2.0
    entry = emu.requests()[-1]
    assert entry["endedAt"] - entry["startedAt"] >= 290


def test_fault_delay_then_status(world):
    emu = world.emulator
    emu.add_fault("GET", "/auth/me", delay_ms=200)
    emu.add_fault("GET", "/auth/me", status=502, body="<h1>bad gateway</h1>")
    start = time.monotonic()
    r = _get(world, "/auth/me")
    assert r.status_code == 502 and r.text == "<h1>bad gateway</h1>"
    assert time.monotonic() - start >= 0.2


def test_fault_connection_reset(world):
    world.emulator.add_fault("GET", "/auth/me", status=0)
    with pytest.raises(requests.ConnectionError):
        _get(world, "/auth/me")
    assert _get(world, "/auth/me").status_code == 200


def test_fault_bad_arguments():
    from service_client.emulator.faults import FaultTable
    table = FaultTable()
    with pytest.raises(ValueError):
        table.add("GET", "/x", status=700)
    with pytest.raises(ValueError):
        table.add("GET", "/x", status=500, count=0)
    with pytest.raises(ValueError):
        table.add("GET", "/x")


def test_limiter_fixed_window(world):
    emu = world.emulator
    emu.set_rate_limit(3, 2.0)
    codes = [_get(world, "/auth/me") for _ in range(4)]
    assert [r.status_code for r in codes] == [200, 200, 200, 429]
    assert codes[3].headers["Retry-After"] in ("1", "2")
    # another bucket is independent
    assert _get(world, "/servers").status_code == 200
    emu.set_rate_limit(None)
    assert _get(world, "/auth/me").status_code == 200


def test_limiter_pure_retry_after():
    limiter = RateLimiter()
    limiter.configure(1, 1.0)
    assert limiter.check("GET:a", now=10.0) is None
    assert limiter.check("GET:a", now=10.2) == "1"
    assert limiter.check("GET:a", now=11.0) is None
    limiter.configure(1, 2.5, retry_after_fraction=True)
    assert limiter.check("GET:a", now=0.0) is None
    assert limiter.check("GET:a", now=1.0) == "1.500"
    limiter.configure(1, 2.5)
    limiter.check("GET:a", now=0.0)
    assert limiter.check("GET:a", now=0.1) == str(math.ceil(2.4))


def test_max_in_flight_and_log_of_faulted(world):
    emu = world.emulator
    emu.add_fault("GET", "/auth/me", delay_ms=300, count=None)
    emu.clear_requests()
    threads = [threading.Thread(target=_get, args=(world, "/auth/me")) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert emu.max_in_flight() == 4
    log = emu.requests()
    assert len(log) == 4 and all(e["status"] == 200 for e in log)
    emu.clear_requests()
    assert emu.max_in_flight() == 0
    emu.clear_faults()
    emu.add_fault("GET", "/auth/me", status=429, retry_after="0")
    _get(world, "/auth/me")
    assert emu.requests()[-1]["status"] == 429


def test_control_routes_for_faults_and_limiter(world):
    emu = world.emulator
    r = requests.post(emu.control_url + "/faults", json={"method": "GET", "path": "/auth/me", "status": 504,
                                                        "count": 1, "retryAfter": "2"}, timeout=5)
    assert r.status_code == 201 and r.json()["fault"]["status"] == 504 and r.json()["fault"]["id"]
    assert _get(world, "/auth/me").status_code == 504
    requests.post(emu.control_url + "/faults", json={"method": "GET", "path": "/auth/me", "status": 500,
                                                    "count": None}, timeout=5)
    assert requests.delete(emu.control_url + "/faults", json={}, timeout=5).status_code == 204
    assert _get(world, "/auth/me").status_code == 200
    assert requests.post(emu.control_url + "/faults", json={"status": "x"}, timeout=5).status_code == 400
    r = requests.post(emu.control_url + "/ratelimit", json={"limit": 1, "windowMs": 5000}, timeout=5)
    assert r.status_code == 204
    assert [_get(world, "/auth/me").status_code for _ in range(2)] == [200, 429]
    requests.post(emu.control_url + "/ratelimit", json={"limit": None, "windowMs": 1000}, timeout=5)
    assert _get(world, "/auth/me").status_code == 200
    log = requests.get(emu.control_url + "/requests", timeout=5).json()
    assert log["requests"][-1]["path"] == "/auth/me" and "maxInFlight" in log
    assert requests.delete(emu.control_url + "/requests", json={}, timeout=5).status_code == 204
    assert requests.get(emu.control_url + "/requests", timeout=5).json()["requests"] == []


def test_journal_entry_of_a_bodiless_answer_is_complete_when_the_client_has_it(world):
    """A 204 is complete once its headers leave; its journal entry must be finished by then."""
    emu, sid = world.emulator, world.server["publicId"]
    session = requests.Session()
    unfinished = 0
    for _ in range(300):
        emu.clear_requests()
        r = session.post(f"{emu.base_url}/servers/{sid}/read",
                         headers={"Authorization": f"Bearer {world.human_token}"}, timeout=5)
        assert r.status_code == 204
        unfinished += [e["status"] for e in emu.requests()] != [204]
    session.close()
    assert unfinished == 0
