"""Exact HTTP cases of the REST session, with ``responses`` (no network).

Each test names the rule it proves: headers, results and error answers,
retries, Retry-After and backoff, timeouts, and what is never retried.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import email.utils
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
import responses
from responses import matchers

from service_client.errors import (
    RateLimitError,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)
from service_client.rest import MemoryBucketStore, RestSession, RetryPolicy, Route

BASE = "http://api.test/v2"
TOKEN = "tok-SECRET-5e3c1f"
UA = "service_client/9.9.9"
NOW = 1_700_000_000.0

Script = list[Any]  # items: (status, headers, body) or an exception instance


_BEFORE: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _threads_before_test() -> None:
    """Remember the threads alive before the test (other tests may leave REST sessions open)."""
    _BEFORE.clear()
    _BEFORE.update(threading.enumerate())


def _rest_threads() -> list[threading.Thread]:
    """REST threads started during this test and still alive."""
    return [t for t in threading.enumerate() if t.name.startswith("service_client-rest") and t not in _BEFORE]


@pytest.fixture
def rsps() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def make_session() -> Iterator[Callable[..., RestSession]]:
    made: list[RestSession] = []

    def make(**kwargs: Any) -> RestSession:
        kwargs.setdefault("user_agent", UA)
        kwargs.setdefault("retry", RetryPolicy(backoff_base=0.01))
        session = RestSession(BASE, **kwargs)
        session.token = TOKEN
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()


@pytest.fixture
def session(make_session: Callable[..., RestSession]) -> RestSession:
    return make_session()


class Scripted:
    """A responses callback answering from a script and recording arrival times."""

    def __init__(self, script: Script, *, repeat_last: bool = True) -> None:
        self.script = list(script)
        self.repeat_last = repeat_last
        self.times: list[float] = []
        self.requests: list[requests.PreparedRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: requests.PreparedRequest) -> tuple[int, dict[str, str], str | bytes]:
        with self._lock:
            self.times.append(time.monotonic())
            self.requests.append(request)
            item = self.script.pop(0) if len(self.script) > 1 or not self.repeat_last else self.script[0]
        if isinstance(item, BaseException):
            raise item
        return item  # type: ignore[no-any-return]

    @property
    def count(self) -> int:
        return len(self.times)


def _scripted(rsps: responses.RequestsMock, method: str, path: str, script: Script) -> Scripted:
    handler = Scripted(script)
    rsps.add_callback(method, BASE + path, callback=handler)
    return handler


@contextlib.contextmanager
def _retries_parked(*prefixes: str) -> Iterator[threading.Event]:
    """An event set once the session logged a retry line starting with each of ``prefixes``.

    The session logs that line (debug level) when it has handled an attempt's
    answer (a 429 has blocked its bucket by then) and is parking the call
    until its retry.
    """
    parked = threading.Event()
    waiting = set(prefixes)
    lock = threading.Lock()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage()
            with lock:
                waiting.difference_update([p for p in waiting if text.startswith(p)])
                if not waiting:
                    parked.set()

    logger = logging.getLogger("service_client.rest")
    watch = Watch(logging.DEBUG)
    level = logger.level
    logger.addHandler(watch)
    logger.setLevel(logging.DEBUG)
    try:
        yield parked
    finally:
        logger.removeHandler(watch)
        logger.setLevel(level)


def _json_body(data: Any) -> str:
    return json.dumps(data)


JSON = {"Content-Type": "application/json"}

# ============================================================================ headers (a caller's Authorization never overrides the token)


EXPECTED_HEADERS = {
    "Authorization": f"Bearer {TOKEN}",
    "Content-Type": "application/json",
    "X-Service-SDK": "true",
    "User-Agent": UA,
    "Accept": "*/*",
    "Accept-Encoding": requests.utils.DEFAULT_ACCEPT_ENCODING,
    "Connection": "keep-alive",
}


def test_default_headers_on_get_exactly(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(
        BASE + "/auth/me",
        json={"user": {"id": "1"}},
        match=[matchers.header_matcher(EXPECTED_HEADERS, strict_match=True)],
    )
    assert session.request(Route("GET", "/auth/me")) == {"user": {"id": "1"}}
    assert len(rsps.calls) == 1


@pytest.mark.parametrize("spelling", ["Authorization", "authorization", "AUTHORIZATION", "aUtHoRiZaTiOn"])
def test_authorization_cannot_be_overridden_in_any_case(
    rsps: responses.RequestsMock, session: RestSession, spelling: str
) -> None:
    rsps.get(
        BASE + "/auth/me",
        json={},
        match=[matchers.header_matcher({**EXPECTED_HEADERS, "X-Extra": "1"}, strict_match=True)],
    )
    session.request(Route("GET", "/auth/me"), headers={spelling: "Bearer evil", "X-Extra": "1"})
    assert rsps.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_caller_headers_are_merged_on_top(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.post(BASE + "/servers", json={})
    session.request(
        Route("POST", "/servers"),
        body="{}",
        headers={"X-Audit-Reason": "tests", "user-agent": "custom/1", "authorization": "nope"},
    )
    sent = rsps.calls[0].request.headers
    assert sent["X-Audit-Reason"] == "tests"
    assert sent["User-Agent"] == "custom/1"
    assert sent["Authorization"] == f"Bearer {TOKEN}"
    assert sent["X-Service-SDK"] == "true"
    assert sent["Content-Type"] == "application/json"


# ============================================================================ no token: nothing is sent


def test_no_token_raises_auth_error_and_sends_nothing(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    rsps.get(BASE + "/auth/me", json={})
    session = make_session()
    session.token = None
    with pytest.raises(ServiceAuthError):
        session.request(Route("GET", "/auth/me"))
    with pytest.raises(ServiceAuthError):
        session.submit(Route("GET", "/auth/me"))
    assert len(rsps.calls) == 0
    assert _rest_threads() == []  # nothing was started either


def test_closed_session_raises_auth_error_and_sends_nothing(
    rsps: responses.RequestsMock, session: RestSession
) -> None:
    rsps.get(BASE + "/auth/me", json={})
    session.close()
    assert session.token is None
    with pytest.raises(ServiceAuthError):
        session.request(Route("GET", "/auth/me"))
    assert len(rsps.calls) == 0


def test_token_setter_validates_without_quoting(session: RestSession) -> None:
    with pytest.raises(TypeError):
        session.token = 123  # type: ignore[assignment]
    with pytest.raises(ValueError) as info:
        session.token = "bad\ntoken-VALUE"
    assert "token-VALUE" not in str(info.value)
    with pytest.raises(ValueError):
        session.token = ""


# ============================================================================ body and arguments


@pytest.mark.parametrize("body", [{"a": 1}, [1], 5, 1.5, object()])
def test_body_that_is_not_str_or_bytes_is_a_type_error(
    rsps: responses.RequestsMock, session: RestSession, body: Any
) -> None:
    rsps.post(BASE + "/servers", json={})
    with pytest.raises(TypeError, match="body"):
        session.request(Route("POST", "/servers"), body=body)
    assert len(rsps.calls) == 0


def test_str_body_is_sent_as_utf8_bytes_as_is(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.post(BASE + "/servers", json={})
    raw = '{"name":"caf\u00e9 \u20ac",  "x": null}'
    session.request(Route("POST", "/servers"), body=raw)
    request = rsps.calls[0].request
    assert request.body == raw.encode("utf-8")
    assert request.headers["Content-Length"] == str(len(raw.encode("utf-8")))


def test_bytes_body_is_sent_as_is(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.post(BASE + "/servers", json={})
    session.request(Route("POST", "/servers"), body=b'{"a":1}')
    assert rsps.calls[0].request.body == b'{"a":1}'


def test_json_argument_keeps_none_values(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.patch(BASE + "/servers/S1", status=204)
    assert session.request(Route("PATCH", "/servers/{s}", s="S1"), json={"imageUrl": None, "name": "é"}) is None
    sent = rsps.calls[0].request.body
    assert isinstance(sent, bytes) and json.loads(sent) == {"imageUrl": None, "name": "é"}
    with pytest.raises(ValueError):
        session.submit(Route("PATCH", "/servers/S1"), json={}, body="{}")
    with pytest.raises(TypeError, match="json"):
        session.submit(Route("PATCH", "/servers/S1"), json={"x": object()})


def test_bad_arguments_raise_before_sending(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(BASE + "/auth/me", json={})
    route = Route("GET", "/auth/me")
    with pytest.raises(TypeError):
        session.submit("/auth/me")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout_ms"):
        session.submit(route, timeout_ms=-1)
    with pytest.raises(ValueError, match="max_retries"):
        session.submit(route, retry=-1)
    with pytest.raises(TypeError, match="headers"):
        session.submit(route, headers=[("X", "1")])  # type: ignore[arg-type]
    assert len(rsps.calls) == 0


@pytest.mark.parametrize(
    "headers",
    [{"X-Bad": "a\r\nInjected: 1"}, {"X-Bad": "a\nb"}, {"Bad Name": "x"}, {"X-Nul": "a\x00"}],
)
def test_invalid_header_is_a_value_error_never_sent_or_retried(
    rsps: responses.RequestsMock, session: RestSession, headers: dict[str, str]
) -> None:
    rsps.get(BASE + "/auth/me", json={})
    with pytest.raises(ValueError, match="header"):
        session.request(Route("GET", "/auth/me"), headers=headers)
    assert len(rsps.calls) == 0


def test_programmer_error_at_send_time_is_not_retried(rsps: responses.RequestsMock, session: RestSession) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [requests.exceptions.InvalidURL("bad url")])
    with pytest.raises(ValueError, match="malformed") as info:
        session.request(Route("GET", "/auth/me"), retry=3)
    assert handler.count == 1
    assert isinstance(info.value.__cause__, requests.exceptions.InvalidURL)


# ============================================================================ query and path encoding (1.1)


def test_params_form_encoded_none_omitted(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(BASE + "/chat/C1/search", json={"messages": []})
    session.request(Route("GET", "/chat/{c}/search", c="C1"), params={"q": "hello world", "limit": None})
    assert rsps.calls[0].request.url == BASE + "/chat/C1/search?q=hello+world"


def test_no_bare_question_mark(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(BASE + "/servers", json={"servers": []})
    session.request(Route("GET", "/servers"), params={"limit": None})
    assert rsps.calls[0].request.url == BASE + "/servers"


def test_ids_are_encoded_on_the_request_url(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(BASE + "/channels/..%2Fservers%3Fx%23y", json={})
    rsps.get(BASE + "/channels/%2E%2E", json={})
    session.request(Route("GET", "/channels/{c}", c="../servers?x#y"))
    session.request(Route("GET", "/channels/{c}", c=".."))
    assert rsps.calls[0].request.url == BASE + "/channels/..%2Fservers%3Fx%23y"
    assert rsps.calls[1].request.url == BASE + "/channels/%2E%2E"


# ============================================================================ results (2xx bodies, 204, error bodies)


def test_204_returns_none(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.delete(BASE + "/invites/AbC", status=204)
    assert session.request(Route("DELETE", "/invites/{c}", c="AbC")) is None


@pytest.mark.parametrize(("status", "body"), [(200, ""), (201, ""), (200, "  \n"), (202, "")])
def test_empty_2xx_returns_none(rsps: responses.RequestsMock, session: RestSession, status: int, body: str) -> None:
    rsps.get(BASE + "/x", status=status, body=body)
    assert session.request(Route("GET", "/x")) is None


def test_2xx_json_is_parsed(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.post(BASE + "/servers", status=201, json={"server": {"id": "S1", "name": "é"}})
    assert session.request(Route("POST", "/servers"), body="{}") == {"server": {"id": "S1", "name": "é"}}


def test_non_json_2xx_raises_api_error_not_decode_error(rsps: responses.RequestsMock, session: RestSession) -> None:
    html = "<html><body>proxy says hi</body></html>"
    handler = _scripted(rsps, "GET", "/auth/me", [(200, {"Content-Type": "text/html"}, html)])
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/auth/me"))
    err = info.value
    assert not isinstance(err, json.JSONDecodeError)
    assert (err.status, err.path, err.body, err.data) == (200, "/auth/me", html, None)
    assert str(err).startswith("API Error 200: ")
    assert handler.count == 1  # not retried


def test_500_is_not_retried_and_uses_the_json_error(rsps: responses.RequestsMock, session: RestSession) -> None:
    handler = _scripted(rsps, "GET", "/servers/S1", [(500, JSON, _json_body({"error": "boom"}))])
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/servers/{s}", s="S1"), retry=3)
    err = info.value
    assert type(err) is ServiceAPIError
    assert str(err) == "API Error 500: boom"
    assert (err.status, err.path, err.data) == (500, "/servers/S1", {"error": "boom"})
    assert handler.count == 1


def test_error_text_falls_back_to_message_then_body(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/a", [(404, JSON, _json_body({"message": "not here"}))])
    _scripted(rsps, "GET", "/b", [(403, {"Content-Type": "text/html"}, "x" * 900)])
    with pytest.raises(ServiceAPIError, match="^API Error 404: not here$"):
        session.request(Route("GET", "/a"))
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/b"))
    assert str(info.value) == "API Error 403: " + "x" * 500
    assert info.value.body == "x" * 900


def test_error_path_has_no_query(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/chat/C1/search", [(400, JSON, _json_body({"error": "bad q"}))])
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/chat/{c}/search", c="C1"), params={"q": "x"})
    assert info.value.path == "/chat/C1/search"


# ============================================================================ retries (429, 502, 503, 504; Retry-After; backoff)


def test_503_503_200_succeeds_on_the_third_attempt(rsps: responses.RequestsMock, session: RestSession) -> None:
    handler = _scripted(
        rsps, "GET", "/auth/me", [(503, {}, "down"), (503, {}, "down"), (200, JSON, _json_body({"ok": 1}))]
    )
    assert session.request(Route("GET", "/auth/me")) == {"ok": 1}
    assert handler.count == 3


@pytest.mark.parametrize("status", [429, 502, 503, 504])
@pytest.mark.parametrize("max_retries", [0, 1, 3])
def test_at_most_one_plus_max_retries_attempts(
    rsps: responses.RequestsMock, session: RestSession, status: int, max_retries: int
) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [(status, JSON, _json_body({"error": "busy"}))])
    expected = RateLimitError if status == 429 else ServiceAPIError
    with pytest.raises(expected) as info:
        session.request(Route("GET", "/auth/me"), retry=max_retries)
    assert handler.count == 1 + max_retries
    assert str(info.value) == f"API Error {status}: busy"
    assert info.value.status == status


def test_default_max_retries_is_three(rsps: responses.RequestsMock, session: RestSession) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [(502, {}, "")])
    with pytest.raises(ServiceAPIError):
        session.request(Route("GET", "/auth/me"))
    assert handler.count == 4


def test_backoff_doubles_between_attempts(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    session = make_session(retry=RetryPolicy(backoff_base=0.1))
    handler = _scripted(rsps, "GET", "/auth/me", [(503, {}, "")])
    with pytest.raises(ServiceAPIError):
        session.request(Route("GET", "/auth/me"), retry=3)
    gaps = [b - a for a, b in zip(handler.times, handler.times[1:], strict=False)]
    for gap, expected in zip(gaps, [0.1, 0.2, 0.4], strict=True):
        assert expected <= gap <= expected * 1.5 + 0.3


def test_429_after_retries_carries_retry_after(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": "0.05"}, _json_body({"error": "slow down"}))])
    with pytest.raises(RateLimitError) as info:
        session.request(Route("GET", "/auth/me"), retry=1)
    assert info.value.retry_after == 0.05
    assert info.value.status == 429


def test_429_without_retry_after_has_none(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/auth/me", [(429, {}, "")])
    with pytest.raises(RateLimitError) as info:
        session.request(Route("GET", "/auth/me"), retry=0)
    assert info.value.retry_after is None


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_fractional_retry_after_is_honoured(
    rsps: responses.RequestsMock, session: RestSession, status: int
) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [(status, {"Retry-After": "0.4"}, ""), (200, JSON, "{}")])
    assert session.request(Route("GET", "/auth/me")) == {}
    gap = handler.times[1] - handler.times[0]
    assert 0.4 <= gap <= 0.4 * 1.5 + 0.3


def test_http_date_retry_after_is_honoured(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    session = make_session(wall_clock=lambda: NOW)
    date = email.utils.formatdate(NOW + 1, usegmt=True)
    handler = _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": date}, ""), (200, JSON, "{}")])
    assert session.request(Route("GET", "/auth/me")) == {}
    gap = handler.times[1] - handler.times[0]
    assert 1.0 <= gap <= 1.0 * 1.5 + 0.3


def test_retry_after_over_the_limit_raises_at_once(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    session = make_session(max_retry_after=60.0)
    handler = _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": "120"}, _json_body({"error": "later"}))])
    started = time.monotonic()
    with pytest.raises(RateLimitError) as info:
        session.request(Route("GET", "/auth/me"), retry=3)
    assert time.monotonic() - started < 1.0
    assert info.value.retry_after == 120.0
    assert str(info.value).startswith("API Error 429: later")
    assert handler.count == 1
    # The bucket stays blocked: the next call to it fails fast too, without a request.
    with pytest.raises(RateLimitError) as again:
        session.request(Route("GET", "/auth/me"))
    assert again.value.retry_after is not None and 119 < again.value.retry_after <= 120
    assert handler.count == 1


@pytest.mark.parametrize("status", [502, 503, 504])
def test_5xx_retry_after_over_the_limit_is_an_api_error_not_a_rate_limit(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession], status: int
) -> None:
    session = make_session(max_retry_after=60.0)
    handler = _scripted(rsps, "GET", "/auth/me", [(status, {"Retry-After": "120"}, "<html>down</html>")])
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/auth/me"), retry=3)
    assert not isinstance(info.value, RateLimitError), "RateLimitError is reserved for 429"
    assert info.value.status == status
    assert str(info.value).startswith(f"API Error {status}: ")
    assert "Retry-After 120 s" in str(info.value)
    assert handler.count == 1
    # A 5xx never blocks the bucket: the next call is sent.
    rsps.reset()
    again = _scripted(rsps, "GET", "/auth/me", [(200, JSON, "{}")])
    assert session.request(Route("GET", "/auth/me")) == {}
    assert again.count == 1


def test_default_ceiling_is_60_s_and_61_fails_fast(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    session = make_session()  # no max_retry_after: the 60 s default
    handler = _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": "61"}, _json_body({"error": "later"}))])
    started = time.monotonic()
    future = session.submit(Route("GET", "/auth/me"))  # default max_retries: retries were allowed
    done, _ = concurrent.futures.wait([future], timeout=2.0)  # bounded even if it waits 61 s
    assert done and time.monotonic() - started < 0.5, "a 61 s Retry-After was waited out"
    error = future.exception()
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 61.0
    assert error.status == 429
    assert handler.count == 1  # no second request


def test_default_ceiling_waits_out_exactly_60_s(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    session = make_session()  # no max_retry_after: 60 s is not "longer than 60 s"
    handler = _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": "60"}, "")])
    future = session.submit(Route("GET", "/auth/me"))
    done, _ = concurrent.futures.wait([future], timeout=0.3)
    assert not done and handler.count == 1  # sleeping on the Retry-After, not failed
    session.close()
    with pytest.raises(ServiceError) as info:
        future.result(timeout=1.0)
    assert not isinstance(info.value, RateLimitError)


def test_retry_after_above_30s_is_not_capped(
    rsps: responses.RequestsMock, make_session: Callable[..., RestSession]
) -> None:
    blocks: list[tuple[str, float]] = []

    class RecordingStore(MemoryBucketStore):
        def set(self, key: str, until: float) -> None:
            blocks.append((key, until - time.monotonic()))
            super().set(key, until)

    session = make_session(bucket_store=RecordingStore())
    handler = _scripted(rsps, "GET", "/auth/me", [(429, {"Retry-After": "45"}, "")])
    future = session.submit(Route("GET", "/auth/me"))
    done, _ = concurrent.futures.wait([future], timeout=0.5)
    assert not done and handler.count == 1  # 45 s is under the 60 s ceiling: it waits
    assert len(blocks) == 1 and blocks[0][0] == "GET:auth/me"
    assert 44.0 <= blocks[0][1] <= 45.0  # the bucket is blocked 45 s, not 30
    session.close()
    with pytest.raises(ServiceError):
        future.result(timeout=1.0)


def test_502_503_do_not_block_the_bucket(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/servers/S1", [(503, {"Retry-After": "1"}, "")])
    other = _scripted(rsps, "GET", "/servers/S1/categories", [(200, JSON, "{}")])
    with _retries_parked("GET /servers/S1: attempt 2/2 in ") as parked:
        future = session.submit(Route("GET", "/servers/S1"), retry=1)
        assert parked.wait(5)  # the 503 was handled: its retry waits out the Retry-After
    started = time.monotonic()
    session.request(Route("GET", "/servers/S1/categories"))
    assert time.monotonic() - started < 0.5
    assert other.count == 1
    with pytest.raises(ServiceAPIError):
        future.result(timeout=5)


# ============================================================================ network failures and timeouts


def test_connection_errors_end_as_service_error_with_cause(
    rsps: responses.RequestsMock, session: RestSession
) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [requests.exceptions.ConnectionError("refused")])
    with pytest.raises(ServiceError) as info:
        session.request(Route("GET", "/auth/me"), retry=2)
    err = info.value
    assert type(err) is ServiceError
    assert isinstance(err.__cause__, requests.exceptions.ConnectionError)
    assert "network" in str(err) and "3 attempts" in str(err)
    assert handler.count == 3


def test_connection_error_then_success(rsps: responses.RequestsMock, session: RestSession) -> None:
    handler = _scripted(
        rsps, "GET", "/auth/me", [requests.exceptions.ConnectionError("reset"), (200, JSON, '{"a":1}')]
    )
    assert session.request(Route("GET", "/auth/me")) == {"a": 1}
    assert handler.count == 2


@pytest.mark.parametrize("exc", [requests.exceptions.ReadTimeout("slow"), requests.exceptions.ConnectTimeout("slow")])
def test_timeouts_end_as_service_timeout_error(
    rsps: responses.RequestsMock, session: RestSession, exc: Exception
) -> None:
    handler = _scripted(rsps, "GET", "/auth/me", [exc])
    with pytest.raises(ServiceTimeoutError) as info:
        session.request(Route("GET", "/auth/me"), retry=1, timeout_ms=250)
    assert isinstance(info.value, TimeoutError)
    assert "250 ms" in str(info.value)
    assert handler.count == 2


def test_timeout_then_network_error_reports_the_last(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(
        rsps,
        "GET",
        "/auth/me",
        [requests.exceptions.ReadTimeout("slow"), requests.exceptions.ConnectionError("gone")],
    )
    with pytest.raises(ServiceError) as info:
        session.request(Route("GET", "/auth/me"), retry=1)
    assert not isinstance(info.value, ServiceTimeoutError)


# ============================================================================ close()


def test_close_ends_queued_and_sleeping_calls_at_once(rsps: responses.RequestsMock, session: RestSession) -> None:
    _scripted(rsps, "GET", "/auth/me", [(503, {"Retry-After": "30"}, "")])
    _scripted(rsps, "GET", "/servers", [(429, {"Retry-After": "30"}, "")])
    with _retries_parked("GET /auth/me: attempt 2/", "GET /servers: attempt 2/") as parked:
        sleeping = session.submit(Route("GET", "/auth/me"))
        blocked_first = session.submit(Route("GET", "/servers"))
        assert parked.wait(5)  # both answered: one sleeps on its Retry-After, the other's 429 blocks the bucket
    waiting_on_bucket = [session.submit(Route("GET", "/servers")) for _ in range(3)]
    assert _rest_threads()
    started = time.monotonic()
    session.close()
    futures = [sleeping, blocked_first, *waiting_on_bucket]
    done, _ = concurrent.futures.wait(futures, timeout=0.5)
    assert len(done) == len(futures)
    for future in futures:
        assert type(future.exception()) is ServiceError
    assert time.monotonic() - started < 1.2
    assert _rest_threads() == []


def test_close_is_idempotent_and_starts_no_thread(make_session: Callable[..., RestSession]) -> None:
    session = make_session()
    session.close()
    session.close()
    assert _rest_threads() == []


def test_threads_are_named_daemons(rsps: responses.RequestsMock, session: RestSession) -> None:
    rsps.get(BASE + "/auth/me", json={})
    session.request(Route("GET", "/auth/me"))
    names = sorted(t.name for t in _rest_threads())
    # Five workers, and the watchdog that ends an attempt at its deadline.
    assert names == [*(f"service_client-rest-{n}" for n in range(1, 6)), "service_client-rest-watchdog-1"]
    assert all(t.daemon for t in _rest_threads())


# ============================================================================ token and webhook secrecy, logs


def _strings_of(exc: BaseException) -> Iterator[str]:
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield str(current)
        yield repr(current)
        yield repr(current.args)
        yield repr(vars(current)) if hasattr(current, "__dict__") else ""
        stack.extend([current.__cause__, current.__context__])


def test_token_never_in_exceptions_or_debug_logs(
    rsps: responses.RequestsMock, session: RestSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _scripted(rsps, "GET", "/a", [(500, JSON, _json_body({"error": "x"}))])
    _scripted(rsps, "GET", "/b", [(429, {"Retry-After": "0"}, "")])
    _scripted(rsps, "GET", "/c", [requests.exceptions.ConnectionError("down")])
    _scripted(rsps, "GET", "/d", [requests.exceptions.ReadTimeout("slow")])
    _scripted(rsps, "GET", "/e", [(200, {}, "<html>")])
    _scripted(rsps, "GET", "/f", [requests.exceptions.InvalidHeader("bad")])
    errors: list[BaseException] = []
    for path in "abcdef":
        with pytest.raises(Exception) as info:
            session.request(Route("GET", "/" + path), retry=1)
        errors.append(info.value)
    for bad in ({"X": "\n"}, {"X": 1}):
        with pytest.raises(Exception) as info:
            session.request(Route("GET", "/a"), headers=bad)  # type: ignore[arg-type]
        errors.append(info.value)
    assert len(errors) == 8
    for err in errors:
        for text in _strings_of(err):
            assert TOKEN not in text
    assert TOKEN not in repr(session) and TOKEN not in repr(vars(session))
    assert caplog.records, "DEBUG lines expected"
    assert all(TOKEN not in record.getMessage() for record in caplog.records)
    assert TOKEN not in caplog.text


def test_debug_log_line_per_attempt_and_per_retry(
    rsps: responses.RequestsMock, session: RestSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest")
    _scripted(rsps, "GET", "/servers/S1/members/U1", [(503, {}, ""), (200, JSON, "{}")])
    session.request(Route("GET", "/servers/{s}/members/{u}", s="S1", u="U1"))
    lines = [r.getMessage() for r in caplog.records if r.name == "service_client.rest"]
    assert len(lines) == 3
    assert lines[0].startswith("GET /servers/S1/members/U1 -> 503 (attempt 1/4, bucket GET:servers/S1, waited ")
    assert re.fullmatch(r"GET /servers/S1/members/U1: attempt 2/4 in \d+ ms", lines[1]), lines[1]
    assert lines[2].startswith("GET /servers/S1/members/U1 -> 200 (attempt 2/4, bucket GET:servers/S1, waited ")
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "service_client.rest")


def test_webhook_token_is_redacted_in_errors_and_logs(
    rsps: responses.RequestsMock, session: RestSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest")
    _scripted(rsps, "POST", "/webhooks/W1/hook-SECRET",
              [(503, {}, ""), (404, JSON, _json_body({"error": "unknown webhook"}))])  # a retry is logged too
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("POST", "/webhooks/{w}/{t}", w="W1", t="hook-SECRET"), body="{}")
    assert info.value.path == "/webhooks/W1/***"
    for text in _strings_of(info.value):
        assert "hook-SECRET" not in text
    assert "hook-SECRET" not in caplog.text
    assert "POST /webhooks/W1/***: attempt 2/" in caplog.text


def test_session_cannot_be_pickled(session: RestSession) -> None:
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(session)


def test_errors_round_trip_through_pickle(rsps: responses.RequestsMock, session: RestSession) -> None:
    import pickle

    _scripted(rsps, "GET", "/b", [(429, {"Retry-After": "0"}, '{"error":"slow"}')])
    with pytest.raises(RateLimitError) as info:
        session.request(Route("GET", "/b"), retry=0)
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.status, copy.path, copy.retry_after, str(copy)) == (429, "/b", 0.0, "API Error 429: slow")
