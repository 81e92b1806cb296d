"""The REST rules seen through ``Client.api_call`` and the session defaults, against the emulator.

Covers the headers, the default timeout (15 000 ms per attempt), the 60 s
Retry-After ceiling, and ``Authorization``, which caller headers cannot
override. The emulator's journal has the request headers lower-cased,
with ``authorization`` redacted.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
import requests.adapters
import urllib3

from service_client import Client, __version__
from service_client.emulator import Emulator
from service_client._defaults import DEFAULT_MAX_BODY_BYTES
from service_client.errors import RateLimitError, ServiceAPIError
from service_client.rest import RestSession, Route, validate_api_call_args

ME = Route("GET", "/auth/me")


@pytest.fixture
def session(emulator: Emulator) -> Iterator[RestSession]:
    rest = RestSession(emulator.base_url, user_agent="service_client/test")
    rest.token = emulator.create_user("restbot", bot=True)["token"]
    yield rest
    rest.close()


def _bound_s(timeout: Any) -> float | None:
    """The longest any phase of an attempt may take under ``timeout`` as given to requests."""
    if isinstance(timeout, urllib3.Timeout):
        if timeout.total is not None:
            return float(timeout.total)
        phases = [t for t in (timeout.connect_timeout, timeout.read_timeout) if isinstance(t, (int, float))]
        return max(phases) if phases else None
    if isinstance(timeout, tuple):
        return max(float(t) for t in timeout if t is not None)
    return None if timeout is None else float(timeout)


@pytest.fixture
def sent_timeouts(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Records, per request URL query, the ``timeout`` that reaches the transport adapter."""
    seen: dict[str, Any] = {}
    original = requests.adapters.HTTPAdapter.send

    def spy(self: requests.adapters.HTTPAdapter, request: requests.PreparedRequest, **kwargs: Any) -> Any:
        seen[(request.url or "").rpartition("?")[2]] = kwargs.get("timeout")
        return original(self, request, **kwargs)

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", spy)
    return seen


# ============================================================================ default timeout_ms (Limits)


@pytest.mark.parametrize(
    "function", [RestSession.submit, RestSession.request, Client.api_call, validate_api_call_args]
)
def test_default_timeout_ms_is_the_sessions_in_the_signature(function: Callable[..., Any]) -> None:
    # None, as for max_retries: the session reads the 15,000 ms default (on the wire below).
    assert inspect.signature(function).parameters["timeout_ms"].default is None
    assert "None (the default): the session's, 15,000 ms" in (Client.api_call.__doc__ or "")


def test_default_timeout_reaches_the_transport_as_15_s(
    session: RestSession, bot: Client, sent_timeouts: dict[str, Any]
) -> None:
    session.submit(ME, params={"via": "submit"}).result(timeout=5)
    session.request(ME, params={"via": "request"})
    bot.api_call("/auth/me?via=api_call")
    assert set(sent_timeouts) >= {"via=submit", "via=request", "via=api_call"}
    for via in ("via=submit", "via=request", "via=api_call"):
        assert _bound_s(sent_timeouts[via]) == 15.0, via


def test_default_timeout_does_not_cut_a_slow_answer(emulator: Emulator, session: RestSession, bot: Client) -> None:
    emulator.add_fault("GET", "/auth/me", delay_ms=1200, count=None)
    emulator.clear_requests()
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(3) as pool:  # the three run side by side
        calls = [
            pool.submit(lambda: session.submit(ME, retry=0).result(timeout=10)),
            pool.submit(lambda: session.request(ME, retry=0)),
            pool.submit(lambda: bot.api_call("/auth/me", max_retries=0)),
        ]
        results = [call.result(timeout=10) for call in calls]
    elapsed = time.monotonic() - started
    emulator.clear_faults()
    assert [r["user"]["name"] for r in results] == ["restbot", "restbot", "pingbot"]
    assert 1.2 <= elapsed <= 1.2 * 1.5 + 0.3
    entries = [e for e in emulator.requests() if e["path"] == "/auth/me"]
    assert [e["status"] for e in entries] == [200, 200, 200]  # one attempt each, none cut


# ============================================================================ headers through api_call


def test_api_call_sends_the_library_headers(emulator: Emulator, bot: Client) -> None:
    emulator.clear_requests()
    assert bot.api_call("/auth/me")["user"]["name"] == "pingbot"
    (entry,) = [e for e in emulator.requests() if e["path"] == "/auth/me"]
    headers = entry["headers"]
    agent = headers["user-agent"]
    assert agent.startswith(f"service_client/{__version__}")
    assert agent[len(f"service_client/{__version__}") :][:1] in ("", " ")
    assert headers["x-service-sdk"] == "true"
    assert headers["content-type"] == "application/json"
    assert "authorization" in headers  # the journal redacts its value; the 200 proves it was ours


@pytest.mark.parametrize("spelling", ["authorization", "Authorization", "AUTHORIZATION", "aUtHoRiZaTiOn"])
def test_api_call_ignores_a_caller_authorization_header(
    emulator: Emulator, world: Any, bot: Client, spelling: str
) -> None:
    emulator.clear_requests()
    # A valid token of another user: had it been sent, the call would answer as alice.
    me = bot.api_call("/auth/me", headers={spelling: f"Bearer {world.human_token}", "X-Extra": "1"})
    assert me["user"]["name"] == "pingbot"
    (entry,) = [e for e in emulator.requests() if e["path"] == "/auth/me"]
    assert entry["headers"]["x-extra"] == "1"  # the other caller headers are merged
    assert entry["headers"]["authorization"] == "[REDACTED]"


# ============================================================================ default Retry-After ceiling


def test_api_call_fails_fast_on_retry_after_61_by_default(emulator: Emulator, bot: Client) -> None:
    emulator.add_fault("GET", "/auth/me", status=429, retry_after="61")
    emulator.clear_requests()
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        call = pool.submit(bot.api_call, "/auth/me")
        done, _ = concurrent.futures.wait([call], timeout=2.0)  # bounded even if it waits 61 s
        if not done:
            bot.destroy()  # ends the waiting call so the pool can shut down
        assert done and time.monotonic() - started < 0.5, "a 61 s Retry-After was waited out"
    error = call.exception()
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 61.0
    assert len([e for e in emulator.requests() if e["path"] == "/auth/me"]) == 1


# ============================================================================ the body size limit (Client option)


def test_max_body_bytes_is_a_client_option_of_16_mib_by_default() -> None:
    assert inspect.signature(Client).parameters["max_body_bytes"].default == DEFAULT_MAX_BODY_BYTES == 16 * 1024 * 1024
    assert inspect.signature(RestSession).parameters["max_body_bytes"].default == DEFAULT_MAX_BODY_BYTES


def test_max_body_bytes_caps_the_answers_of_a_client(world: Any, emulator: Emulator, make_client: Any) -> None:
    client = make_client(max_body_bytes=20_000)
    client.login(world.bot_token, timeout=15)  # the login's own answers are well under the limit
    assert client.api_call("/auth/me")["user"]["name"] == "pingbot"
    channel_id = world.general["publicId"]
    emulator.post_messages(channel_id, world.human["publicId"], ["x" * 1000] * 30)
    with pytest.raises(ServiceAPIError, match=r"has a body over the 20000 byte limit \(max_body_bytes\)") as info:
        client.api_call(f"/chat/{channel_id}?limit=50")
    assert info.value.status == 200


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), ("1", TypeError)])
def test_max_body_bytes_of_a_client_is_checked(make_client: Any, value: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_body_bytes"):
        make_client(max_body_bytes=value)
