"""Pure policy of the REST session: routes, bucket keys, backoff, Retry-After, the bucket table."""

from __future__ import annotations

import email.utils
import threading

import pytest

from service_client.rest import (
    MemoryBucketStore,
    Route,
    backoff_delay,
    bucket_key,
    encode_query,
    encode_segment,
    parse_retry_after,
    redact_path,
    validate_api_call_args,
)
from service_client.rest.queue import DelayQueue, FifoQueue

# ----------------------------------------------------------------------------- encode_segment


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        ("../x", "..%2Fx"),
        ("a?b", "a%3Fb"),
        ("#", "%23"),
        ("a b", "a%20b"),
        ("a+b", "a%2Bb"),
        ("100%", "100%25"),
        ("é€", "%C3%A9%E2%82%AC"),
        ("..", "%2E%2E"),
        (".", "%2E"),
        ("123456789012345678", "123456789012345678"),
        ("a&b=c", "a%26b%3Dc"),
    ],
)
def test_encode_segment(raw: str, encoded: str) -> None:
    assert encode_segment(raw) == encoded


def test_encode_segment_rejects_non_str_and_empty() -> None:
    with pytest.raises(TypeError):
        encode_segment(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_segment(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        encode_segment("")


# ----------------------------------------------------------------------------- bucket_key


@pytest.mark.parametrize(
    ("method", "path", "bucket"),
    [
        ("GET", "/servers", "GET:servers"),
        ("GET", "/servers/S1", "GET:servers/S1"),
        ("GET", "/servers/S1/members/U1", "GET:servers/S1"),
        ("GET", "/servers/S1/categories", "GET:servers/S1"),
        ("POST", "/servers/S1/roles", "POST:servers/S1"),
        ("GET", "/chat/C1?limit=50", "GET:chat/C1"),
        ("GET", "/chat/C1/search?q=x", "GET:chat/C1"),
        ("GET", "/chat/C1/pins", "GET:chat/C1"),
        ("GET", "/channels/dm/U1", "GET:channels/dm"),
        ("GET", "/channels/dm/U2", "GET:channels/dm"),
        ("GET", "/channels/C1", "GET:channels/C1"),
        ("PATCH", "/users/settings", "PATCH:users/settings"),
        ("GET", "/auth/me", "GET:auth/me"),
        ("GET", "/invites/AbC", "GET:invites/AbC"),
        ("DELETE", "/invites/AbC", "DELETE:invites/AbC"),
        ("POST", "/webhooks/W1/secret-token", "POST:webhooks/W1"),
        ("get", "//servers//S1/", "GET:servers/S1"),
        ("GET", "/servers?x=/y/z", "GET:servers"),
    ],
)
def test_bucket_key_of_each_route_shape(method: str, path: str, bucket: str) -> None:
    assert bucket_key(method, path) == bucket


def test_bucket_key_is_per_method() -> None:
    assert bucket_key("POST", "/servers/S1") != bucket_key("GET", "/servers/S1")


# ----------------------------------------------------------------------------- Route


def test_route_encodes_every_param_and_keys_the_bucket() -> None:
    route = Route("get", "/servers/{server_id}/members/{user_id}", server_id="S 1", user_id="../x?y#z")
    assert route.method == "GET"
    assert route.path == "/servers/S%201/members/..%2Fx%3Fy%23z"
    assert route.bucket == "GET:servers/S%201"


def test_route_id_cannot_change_the_route() -> None:
    route = Route("GET", "/channels/{channel_id}", channel_id="../servers/S1")
    assert route.bucket == "GET:channels/..%2Fservers%2FS1"
    assert route.path.count("/") == 2


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({}, ValueError),  # missing value
        ({"server_id": "S1", "other": "x"}, ValueError),  # unused value
        ({"server_id": 12}, TypeError),
        ({"server_id": ""}, ValueError),
    ],
)
def test_route_rejects_bad_params(kwargs: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        Route("GET", "/servers/{server_id}", **kwargs)  # type: ignore[arg-type]


def test_route_type_error_names_the_param() -> None:
    with pytest.raises(TypeError, match="server_id"):
        Route("GET", "/servers/{server_id}", server_id=5)  # type: ignore[arg-type]


@pytest.mark.parametrize("template", ["servers", "/servers/{x", "/servers/}"])
def test_route_rejects_bad_templates(template: str) -> None:
    with pytest.raises(ValueError):
        Route("GET", template, x="1")


@pytest.mark.parametrize("method", ["", "GE T", "GET\r\n"])
def test_route_rejects_bad_methods(method: str) -> None:
    with pytest.raises(ValueError):
        Route(method, "/auth/me")


def test_route_is_immutable_and_hashable() -> None:
    route = Route("GET", "/auth/me")
    with pytest.raises(AttributeError):
        route.path = "/x"
    assert route == Route.from_path("get", "/auth/me")
    assert len({route, Route("GET", "/auth/me")}) == 1


def test_route_from_path_keeps_the_raw_path_and_query() -> None:
    route = Route.from_path("delete", "/invites/AbC?x=1&y=a+b")
    assert (route.method, route.path, route.bucket) == ("DELETE", "/invites/AbC?x=1&y=a+b", "DELETE:invites/AbC")
    assert route.display_path == "/invites/AbC"
    assert Route.from_path("GET", "/servers/%2E%2E").path == "/servers/%2E%2E"


def test_route_from_path_encodes_what_is_not_url_safe() -> None:
    assert Route.from_path("GET", "/chat/C1/search?q=a b").path == "/chat/C1/search?q=a%20b"
    assert Route.from_path("GET", "/users/é\n").path == "/users/%C3%A9%0A"


@pytest.mark.parametrize("path", ["auth/me", "", "http://evil/x"])
def test_route_from_path_must_start_with_a_slash(path: str) -> None:
    with pytest.raises(ValueError, match="start with '/'"):
        Route.from_path("GET", path)


def test_route_from_path_type_errors() -> None:
    with pytest.raises(TypeError):
        Route.from_path("GET", b"/auth/me")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Route.from_path(None, "/auth/me")  # type: ignore[arg-type]


def test_webhook_tokens_are_redacted_everywhere_shown() -> None:
    route = Route("POST", "/webhooks/{wid}/{token}", wid="W1", token="hook-secret")
    assert route.path == "/webhooks/W1/hook-secret"
    assert route.bucket == "POST:webhooks/W1"
    assert route.display_path == "/webhooks/W1/***"
    assert "hook-secret" not in repr(route)
    assert redact_path("/webhooks/W1/hook-secret/github?wait=true") == "/webhooks/W1/***/github"
    assert redact_path("/servers/S1/webhooks") == "/servers/S1/webhooks"


def test_with_query_form_encodes_and_omits_none() -> None:
    route = Route("GET", "/chat/{c}/search", c="C1")
    assert route.with_query({"q": "hello world", "limit": None}).path == "/chat/C1/search?q=hello+world"
    assert route.with_query({"q": "x", "limit": 10}).path == "/chat/C1/search?q=x&limit=10"
    assert route.with_query({"limit": None}).path == "/chat/C1/search"  # never a bare "?"
    assert route.with_query({}) is route
    assert route.with_query({"q": "x"}).bucket == route.bucket
    assert Route.from_path("GET", "/x?a=1").with_query({"b": True}).path == "/x?a=1&b=true"


def test_encode_query_rejects_bad_values() -> None:
    assert encode_query(None) == ""
    assert encode_query({"all": True, "ids": ["1", "2"]}) == "all=true&ids=1&ids=2"
    with pytest.raises(TypeError):
        encode_query({"x": object()})
    with pytest.raises(TypeError):
        encode_query([("x", "1")])  # type: ignore[arg-type]


def test_validate_api_call_args() -> None:
    route = validate_api_call_args("/auth/me", method="get")
    assert (route.method, route.path) == ("GET", "/auth/me")
    with pytest.raises(ValueError):
        validate_api_call_args("auth/me")
    with pytest.raises(TypeError, match="body"):
        validate_api_call_args("/x", body={"a": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="headers"):
        validate_api_call_args("/x", headers={"X-A": 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="headers"):
        validate_api_call_args("/x", headers={"X-A": "a\r\nb"})
    with pytest.raises(ValueError, match="timeout_ms"):
        validate_api_call_args("/x", timeout_ms=0)
    with pytest.raises(TypeError, match="timeout_ms"):
        validate_api_call_args("/x", timeout_ms="15")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        validate_api_call_args("/x", max_retries=-1)
    with pytest.raises(TypeError, match="max_retries"):
        validate_api_call_args("/x", max_retries=1.5)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- backoff


def test_backoff_delay_doubles_from_half_a_second_and_caps_at_30() -> None:
    assert [backoff_delay(n) for n in range(8)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert backoff_delay(10_000) == 30.0
    assert backoff_delay(2, base=0.01, cap=1.0) == 0.04


def test_backoff_delay_rejects_bad_index() -> None:
    with pytest.raises(ValueError):
        backoff_delay(-1)
    with pytest.raises(TypeError):
        backoff_delay(1.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        backoff_delay(True)


# ----------------------------------------------------------------------------- Retry-After


NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 7 ", 7.0),
        ("1.5", 1.5),
        (".25", 0.25),
        ("0", 0.0),
        ("120", 120.0),  # never capped at 30 s
        ("-2", 0.0),
        ("-0.5", 0.0),
        (email.utils.formatdate(NOW + 42, usegmt=True), 42.0),
        (email.utils.formatdate(NOW - 42, usegmt=True), 0.0),
        (email.utils.formatdate(NOW + 5), 5.0),  # numeric zone
        (None, None),
        ("", None),
        ("soon", None),
        ("1,5", None),
        ("nan", None),
        ("inf", None),
        ("0x10", None),
        ("Mon, 99 Foo 2024 25:61:61 GMT", None),
    ],
)
def test_parse_retry_after(value: str | None, seconds: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == seconds


def test_parse_retry_after_http_date_uses_the_wall_clock_by_default() -> None:
    import time

    delay = parse_retry_after(email.utils.formatdate(time.time() + 100, usegmt=True))
    assert delay is not None and 98 <= delay <= 100


# ----------------------------------------------------------------------------- bucket store


def test_memory_bucket_store_expires_entries() -> None:
    now = [100.0]
    store = MemoryBucketStore(clock=lambda: now[0])
    assert store.get("GET:x") is None
    store.set("GET:x", 105.0)
    assert store.get("GET:x") == 105.0
    assert store.get("GET:y") is None
    now[0] = 105.0
    assert store.get("GET:x") is None
    assert len(store) == 0


def test_memory_bucket_store_sweeps_when_large() -> None:
    now = [0.0]
    store = MemoryBucketStore(clock=lambda: now[0])
    for i in range(1500):
        store.set(f"GET:{i}", 1.0)
    now[0] = 2.0
    store.set("GET:last", 3.0)
    assert len(store) == 1


# ----------------------------------------------------------------------------- FIFO and timer heap


def test_fifo_queue_is_strict_fifo_and_closable() -> None:
    fifo: FifoQueue[int] = FifoQueue()
    for i in range(5):
        assert fifo.put(i)
    assert [fifo.get(0) for _ in range(3)] == [0, 1, 2]
    assert fifo.close() == [3, 4]
    assert fifo.get(0) is None
    assert not fifo.put(9)


def test_fifo_queue_wakes_waiters_on_close() -> None:
    fifo: FifoQueue[int] = FifoQueue()
    got: list[int | None] = []
    waiter = threading.Thread(target=lambda: got.append(fifo.get(5.0)))
    waiter.start()
    fifo.close()
    waiter.join(1.0)
    assert got == [None]


def test_delay_queue_hands_back_in_time_then_park_order() -> None:
    import time

    out: list[str] = []
    done = threading.Event()

    def on_due(item: str) -> None:
        out.append(item)
        if len(out) == 4:
            done.set()

    delays: DelayQueue[str] = DelayQueue(on_due, thread_name="service_client-resttest-1")
    start = time.monotonic()
    delays.put(start + 0.10, "b1")
    delays.put(start + 0.05, "a")
    delays.put(start + 0.10, "b2")
    delays.put(start + 0.10, "b3")
    assert done.wait(2.0)
    assert out == ["a", "b1", "b2", "b3"]
    assert time.monotonic() - start >= 0.1
    assert delays.close() == []
    delays.join(1.0)
    assert delays.thread is not None and not delays.thread.is_alive()
    assert not delays.put(0.0, "late")
