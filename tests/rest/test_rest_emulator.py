"""End-to-end rules of the REST session against the emulator (real HTTP, faults, limiter, journal).

Covers: 5 requests at once and a strict FIFO behind them, retries and
Retry-After, buckets (a bucket wait holds no slot and is re-checked after each
wake-up), error answers, 204 giving None, encoded path segments, and close()
cancelling queued calls, bucket waits and retry sleeps.
The emulator's journal gives arrival (``startedAt``) and completion
(``endedAt``) times in epoch milliseconds.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service_client.emulator import Emulator
from service_client.errors import (
    RateLimitError,
    ServiceAPIError,
    ServiceError,
    ServiceTimeoutError,
)
from service_client.rest import RestSession, RetryPolicy, Route, bucket_scope

ME = Route("GET", "/auth/me")


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
def bot_token(emulator: Emulator) -> str:
    token: str = emulator.create_user("restbot", bot=True)["token"]
    emulator.clear_requests()
    return token


@pytest.fixture
def make_session(emulator: Emulator, bot_token: str) -> Iterator[Callable[..., RestSession]]:
    made: list[RestSession] = []

    def make(**kwargs: Any) -> RestSession:
        kwargs.setdefault("user_agent", "service_client/test")
        kwargs.setdefault("retry", RetryPolicy(backoff_base=0.05))
        rest = RestSession(emulator.base_url, **kwargs)
        rest.token = bot_token
        made.append(rest)
        return rest

    yield make
    for rest in made:
        rest.close()


@pytest.fixture
def session(make_session: Callable[..., RestSession]) -> RestSession:
    return make_session()


def _entries(emulator: Emulator, path: str | None = None) -> list[dict[str, Any]]:
    """The journal sorted by arrival; waits (bounded) until the server has logged every completion."""
    deadline = time.monotonic() + 2.0
    entries = emulator.requests()
    while any(e["endedAt"] is None for e in entries) and time.monotonic() < deadline:
        time.sleep(0.01)  # the server logs a completion just after the client has its answer
        entries = emulator.requests()
    entries = sorted(entries, key=lambda e: e["startedAt"])
    return [e for e in entries if path is None or e["path"] == path]


def _overlap(entries: list[dict[str, Any]]) -> int:
    """The most requests in flight at once according to the server's journal."""
    events = sorted([(e["startedAt"], 1) for e in entries] + [(e["endedAt"], -1) for e in entries])
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak


def _until_blocked(session: RestSession, route: Route, token: str) -> None:
    """Wait (bounded) until a 429 has blocked ``route``'s bucket in the session's bucket store."""
    scope = bucket_scope(token)
    deadline = time.monotonic() + 5.0
    while session.bucket_store.wait_time(route.bucket, scope=scope) <= 0.0:
        assert time.monotonic() < deadline, f"no 429 blocked the bucket {route.bucket}"
        time.sleep(0.005)


def _wait_all(futures: list[concurrent.futures.Future[Any]], timeout: float = 20.0) -> None:
    _, pending = concurrent.futures.wait(futures, timeout=timeout)
    assert not pending, f"{len(pending)} calls still pending"


# ============================================================================ 5 slots, FIFO


def test_at_most_five_requests_in_flight(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", delay_ms=150, count=None)
    futures = [session.submit(ME) for _ in range(17)]
    _wait_all(futures)
    assert all(f.result()["user"]["name"] == "restbot" for f in futures)
    entries = _entries(emulator, "/auth/me")
    assert len(entries) == 17
    assert emulator.max_in_flight() == 5
    assert _overlap(entries) == 5


def test_calls_from_many_threads_never_exceed_five(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/servers", delay_ms=50, count=None)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: session.request(Route("GET", "/servers")), range(40)))
    assert results == [{"servers": []}] * 40
    assert emulator.max_in_flight() == 5


def test_strict_fifo_order_with_one_slot(emulator: Emulator, make_session: Callable[..., RestSession]) -> None:
    session = make_session(max_concurrency=1)
    emulator.add_fault("GET", "/auth/me", delay_ms=20, count=None)
    futures = [session.submit(ME, params={"n": n}) for n in range(12)]
    _wait_all(futures)
    assert [e["query"] for e in _entries(emulator, "/auth/me")] == [f"n={n}" for n in range(12)]


def test_fifo_batches_of_five(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", delay_ms=200, count=None)
    futures = [session.submit(ME, params={"n": n}) for n in range(15)]
    _wait_all(futures)
    order = [int(e["query"].split("=")[1]) for e in _entries(emulator, "/auth/me")]
    assert [sorted(order[i : i + 5]) for i in (0, 5, 10)] == [list(range(i, i + 5)) for i in (0, 5, 10)]


# ============================================================================ Retry-After and buckets


def test_retry_after_is_honoured(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=429, retry_after="0.6")
    assert session.request(ME)["user"]["name"] == "restbot"
    first, second = _entries(emulator, "/auth/me")
    assert first["status"] == 429 and second["status"] == 200
    gap_s = (second["startedAt"] - first["endedAt"]) / 1000.0
    assert 0.6 <= gap_s <= 0.6 * 1.5 + 0.3


def test_blocked_bucket_holds_every_call_to_it(emulator: Emulator, session: RestSession, bot_token: str) -> None:
    emulator.add_fault("GET", "/servers/*", status=429, retry_after="1")
    first_route = Route("GET", "/servers/{s}", s="S1")
    first = session.submit(first_route)
    _until_blocked(session, first_route, bot_token)  # the bucket GET:servers/S1 is blocked for 1 s
    same_bucket = [
        session.submit(Route("GET", "/servers/{s}/categories", s="S1")),
        session.submit(Route("GET", "/servers/{s}/members/{u}", s="S1", u="U1")),
    ]
    _wait_all([first, *same_bucket])
    entries = _entries(emulator)
    blocked_end = entries[0]["endedAt"]
    later = entries[1:]
    assert len(later) == 3
    for entry in later:  # nothing of that bucket went out while it was blocked
        assert 1.0 <= (entry["startedAt"] - blocked_end) / 1000.0 <= 1.0 * 1.5 + 0.3
    for future in [first, *same_bucket]:
        with pytest.raises(ServiceAPIError) as info:  # the bot is in no server: 403/404 after the wait
            future.result()
        assert info.value.status in (403, 404)


def test_other_buckets_are_not_affected_while_one_is_blocked(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/servers", status=429, retry_after="2")
    first = session.submit(Route("GET", "/servers"))
    time.sleep(0.2)
    queued = [session.submit(Route("GET", "/servers")) for _ in range(10)]
    time.sleep(0.05)
    started = time.monotonic()
    others = [session.submit(ME) for _ in range(10)]  # more than 5: they need every slot
    _wait_all(others, timeout=5.0)
    elapsed = time.monotonic() - started
    assert elapsed < 0.5
    assert not any(f.done() for f in queued)
    _wait_all([first, *queued])
    assert all(f.result() == {"servers": []} for f in [first, *queued])
    assert emulator.max_in_flight() <= 5


def test_a_worker_re_checks_the_bucket_before_sending(
    emulator: Emulator, make_session: Callable[..., RestSession]
) -> None:
    # One slot: the retry of the first call is refused again while the others sit in the FIFO;
    # they must see the new block and wait again instead of going out.
    session = make_session(max_concurrency=1)
    emulator.add_fault("GET", "/servers", status=429, retry_after="0.4", count=2)
    first = session.submit(Route("GET", "/servers"))
    time.sleep(0.15)
    others = [session.submit(Route("GET", "/servers")) for _ in range(3)]
    _wait_all([first, *others])
    entries = _entries(emulator, "/servers")
    assert [e["status"] for e in entries] == [429, 429, 200, 200, 200, 200]
    second_block_end = entries[1]["endedAt"]
    for entry in entries[2:]:
        assert 0.4 <= (entry["startedAt"] - second_block_end) / 1000.0 <= 0.4 * 1.5 + 0.3


def test_a_parked_call_re_checks_the_bucket_after_waking(
    emulator: Emulator, session: RestSession, bot_token: str
) -> None:
    # A short block, then a longer one from a call that was already on the wire: a call parked on
    # the short block must wake, see the longer block and wait again.
    # The long 429 lands 0.25 s in, well before the short block (0.6 s) ends.
    emulator.add_fault("GET", "/servers/S1", status=429, retry_after="0.6")
    emulator.add_fault("GET", "/servers/S1/categories", status=429, retry_after="1", delay_ms=250)
    short_route = Route("GET", "/servers/{s}", s="S1")
    short = session.submit(short_route)
    long = session.submit(Route("GET", "/servers/{s}/categories", s="S1"))
    _until_blocked(session, short_route, bot_token)  # the short block is in place
    parked = session.submit(Route("GET", "/servers/{s}/members/{u}", s="S1", u="U1"))
    _wait_all([short, long, parked])
    entries = _entries(emulator)
    long_429 = next(e for e in entries if e["path"] == "/servers/S1/categories" and e["status"] == 429)
    member = next(e for e in entries if e["path"] == "/servers/S1/members/U1")
    assert 1.0 <= (member["startedAt"] - long_429["endedAt"]) / 1000.0 <= 1.0 * 1.5 + 0.3


def test_503_does_not_block_the_bucket(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/servers", status=503, retry_after="1")
    first = session.submit(Route("GET", "/servers"))
    time.sleep(0.2)
    started = time.monotonic()
    assert session.request(Route("GET", "/servers")) == {"servers": []}
    assert time.monotonic() - started < 0.5
    assert first.result(timeout=5) == {"servers": []}


def test_calls_sleeping_before_a_retry_hold_no_slot(emulator: Emulator, session: RestSession) -> None:
    # Seven calls (more than the 5 slots) each get a 503 with Retry-After and go to sleep; the
    # sleepers must free their slots, so the two queued behind them go out at once
    # and later calls to another route answer at once too.
    emulator.add_fault("GET", "/servers", status=503, retry_after="1.5", count=7)
    sleepers = [session.submit(Route("GET", "/servers")) for _ in range(7)]
    deadline = time.monotonic() + 1.0  # well under the 1.5 s a slot-holding sleeper would take
    refused: list[dict[str, Any]] = []
    while len(refused) < 7 and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the server's journal: there is no event to wait on
        refused = [e for e in emulator.requests() if e["path"] == "/servers" and e["status"] == 503]
    assert len(refused) == 7, "a call sleeping before its retry kept its slot"
    started = time.monotonic()
    others = [session.submit(ME) for _ in range(6)]  # more than 5: they need every slot
    _wait_all(others, timeout=5.0)
    assert time.monotonic() - started < 0.5
    assert all(f.result()["user"]["name"] == "restbot" for f in others)
    assert not any(f.done() for f in sleepers)
    _wait_all(sleepers)
    assert all(f.result() == {"servers": []} for f in sleepers)
    entries = _entries(emulator, "/servers")
    last_refusal = max(e["endedAt"] for e in entries if e["status"] == 503)
    first_refusal = min(e["endedAt"] for e in entries if e["status"] == 503)
    retries = [e for e in entries if e["status"] == 200]
    assert len(retries) == 7
    assert all(e["startedAt"] - first_refusal >= 1500 for e in retries)
    assert all(e["startedAt"] - last_refusal <= (1.5 * 1.5 + 0.3) * 1000 for e in retries)


def test_real_rate_limit_is_respected(emulator: Emulator, session: RestSession) -> None:
    emulator.set_rate_limit(5, window_s=1.0)
    routes = [Route("GET", "/servers"), ME]
    futures = [session.submit(routes[n % 2], retry=10) for n in range(20)]
    _wait_all(futures)
    assert all(not f.exception() for f in futures)
    entries = _entries(emulator)
    assert sum(e["status"] == 200 for e in entries) == 20
    assert sum(e["status"] == 429 for e in entries) <= 8  # a block per bucket per window, not a storm


# ============================================================================ attempts, results, errors


def test_one_plus_max_retries_attempts(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=503, count=None)
    with pytest.raises(ServiceAPIError) as info:
        session.request(ME, retry=2)
    assert info.value.status == 503
    assert len(_entries(emulator, "/auth/me")) == 3


def test_429_after_every_attempt_is_a_rate_limit_error(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=429, retry_after="0.1", count=None)
    with pytest.raises(RateLimitError) as info:
        session.request(ME, retry=1)
    assert info.value.retry_after == 0.1
    assert len(_entries(emulator, "/auth/me")) == 2


def test_204_gives_none(emulator: Emulator, session: RestSession) -> None:
    assert session.request(Route("PATCH", "/users/settings"), json={"status": "idle"}) is None
    assert _entries(emulator, "/users/settings")[0]["status"] == 204


def test_empty_200_gives_none_and_html_200_raises(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=200, body="", content_type="application/json")
    assert session.request(ME) is None
    emulator.add_fault("GET", "/auth/me", status=200, body="<html>hi</html>")
    with pytest.raises(ServiceAPIError) as info:
        session.request(ME)
    assert info.value.status == 200 and info.value.body == "<html>hi</html>"
    assert len(_entries(emulator, "/auth/me")) == 2  # not retried


def test_error_body_of_the_service(emulator: Emulator, session: RestSession) -> None:
    with pytest.raises(ServiceAPIError) as info:
        session.request(Route("GET", "/channels/{c}", c="nope"))
    assert info.value.status == 404
    assert str(info.value).startswith("API Error 404: ")
    assert info.value.path == "/channels/nope"
    assert isinstance(info.value.data, dict) and "error" in info.value.data


def test_encoded_ids_cannot_reach_another_route(emulator: Emulator, session: RestSession) -> None:
    for raw in ("../auth/me", "..", "a?b", "x#y", "a b"):
        with pytest.raises(ServiceAPIError) as info:
            session.request(Route("GET", "/channels/{c}", c=raw))
        assert info.value.status == 404
    paths = [e["path"] for e in _entries(emulator)]
    assert paths == ["/channels/..%2Fauth%2Fme", "/channels/%2E%2E", "/channels/a%3Fb", "/channels/x%23y", "/channels/a%20b"]


def test_timeout_then_service_timeout_error(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", delay_ms=1500, count=None)
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError):
        session.request(ME, timeout_ms=300, retry=1)
    assert time.monotonic() - started < 0.3 * 2 * 1.5 + 0.3 + 0.05
    emulator.clear_faults()


def test_connection_reset_ends_as_service_error(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=0, count=None)
    with pytest.raises(ServiceError) as info:
        session.request(ME, retry=1)
    assert type(info.value) is ServiceError
    assert info.value.__cause__ is not None
    assert len(_entries(emulator, "/auth/me")) == 2


def test_network_failure_then_success(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", status=0, count=1)
    assert session.request(ME)["user"]["name"] == "restbot"


# ============================================================================ close()


def test_close_ends_queued_and_running_calls_at_once(emulator: Emulator, session: RestSession) -> None:
    emulator.add_fault("GET", "/auth/me", delay_ms=3000, count=None)
    emulator.add_fault("GET", "/servers", status=429, retry_after="5")
    waiting = session.submit(Route("GET", "/servers"))
    on_the_wire = [session.submit(ME) for _ in range(5)]
    queued = [session.submit(ME) for _ in range(4)]
    time.sleep(0.3)
    started = time.monotonic()
    session.close()
    futures = [waiting, *on_the_wire, *queued]
    done, _ = concurrent.futures.wait(futures, timeout=0.5)
    assert len(done) == len(futures)
    assert all(type(f.exception()) is ServiceError for f in futures)
    assert time.monotonic() - started < 1.2
    assert _rest_threads() == []
    emulator.clear_faults()
