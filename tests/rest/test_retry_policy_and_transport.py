"""The REST policy values and the transport seam: ``RetryPolicy``, ``Client(retry=...)``,
``Client(transport=...)`` and the in-memory ``MockTransport``.

Everything here runs in memory: the transport answers, nothing goes on the network.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service_client import (
    Client,
    RateLimitError,
    RetryPolicy,
    ServiceAPIError,
    ServiceError,
    ServiceTimeoutError,
    Webhook,
)
from service_client.rest import RETRY_STATUSES, MockTransport, Request, Response, RestSession, Route

ROOT = pathlib.Path(__file__).resolve().parents[2]
ME = Route("GET", "/auth/me")
BASE = "http://127.0.0.1:9/v2"   # never dialled: every test's transport is in memory
FAST = RetryPolicy(backoff_base=0.0)


class Handler:
    """Answers from a list, one answer per request (the last one repeats); records the requests."""

    def __init__(self, *answers: Response | BaseException) -> None:
        self.answers = list(answers)
        self.seen: list[Request] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.seen.append(request)
            answer = self.answers[min(len(self.seen), len(self.answers)) - 1]
        if isinstance(answer, BaseException):
            raise answer
        return answer


@pytest.fixture
def make_session() -> Iterator[Callable[..., RestSession]]:
    made: list[RestSession] = []

    def make(handler: Callable[[Request], Response], **options: Any) -> RestSession:
        options.setdefault("retry", FAST)
        session = RestSession(BASE, user_agent="service_client/test", transport=MockTransport(handler), **options)
        session.token = "test-token"
        made.append(session)
        return session

    yield make
    for session in made:
        session.close()


# -- RetryPolicy ---------------------------------------------------------------------------------


def test_the_policy_is_an_immutable_value_with_the_documented_defaults() -> None:
    policy = RetryPolicy()
    assert (policy.max_retries, policy.attempts, policy.statuses) == (3, 4, RETRY_STATUSES)
    assert RETRY_STATUSES == {429, 502, 503, 504}
    assert (policy.backoff_base, policy.backoff_cap, policy.jitter) == (0.5, 30.0, 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_retries = 5  # type: ignore[misc]
    assert policy == RetryPolicy() and hash(policy) == hash(RetryPolicy())
    changed = policy.replace(max_retries=1, statuses=[500])
    assert (changed.max_retries, changed.statuses, policy.max_retries) == (1, frozenset({500}), 3)
    assert policy.with_retries(3) is policy and policy.with_retries(0).max_retries == 0
    assert "max_retries=3" in repr(policy) and "[429, 502, 503, 504]" in repr(policy)


@pytest.mark.parametrize(("changes", "error", "match"), [
    ({"max_retries": -1}, ValueError, "max_retries"),
    ({"max_retries": True}, TypeError, "max_retries"),
    ({"max_retries": 1.5}, TypeError, "max_retries"),
    ({"statuses": "429"}, TypeError, "statuses"),
    ({"statuses": [429, "502"]}, TypeError, "statuses"),
    ({"statuses": [99]}, ValueError, "statuses"),
    ({"backoff_base": -0.1}, ValueError, "backoff_base"),
    ({"backoff_cap": float("inf")}, ValueError, "backoff_cap"),
    ({"jitter": "1"}, TypeError, "jitter"),
])
def test_a_bad_field_is_refused_naming_it(changes: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        RetryPolicy(**changes)
    with pytest.raises(error, match=match):
        RetryPolicy().replace(**changes)


def test_backoff_doubles_up_to_the_cap_and_jitter_adds_at_most_its_share() -> None:
    assert [RetryPolicy().backoff(n) for n in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    assert RetryPolicy(backoff_base=0.1, backoff_cap=0.3).backoff(5) == 0.3
    jittered = RetryPolicy(backoff_base=1.0, jitter=0.5)
    draws = [jittered.backoff(0) for _ in range(200)]
    assert all(1.0 <= delay <= 1.5 for delay in draws) and len(set(draws)) > 1


# -- the policy on the wire ------------------------------------------------------------------------


def test_the_policy_statuses_decide_what_is_retried(make_session: Callable[..., RestSession]) -> None:
    handler = Handler(Response(500, json={"error": "boom"}), Response(200, json={"ok": True}))
    session = make_session(handler, retry=FAST.replace(statuses={500}))
    assert session.request(ME) == {"ok": True}
    assert len(handler.seen) == 2

    handler = Handler(Response(502, json={"error": "bad gateway"}))
    session = make_session(handler, retry=FAST.replace(statuses={500}))
    with pytest.raises(ServiceAPIError) as info:
        session.request(ME)
    assert info.value.status == 502 and len(handler.seen) == 1      # 502 is not in this policy


def test_a_429_left_out_of_the_statuses_ends_the_call_at_once_as_a_rate_limit(
    make_session: Callable[..., RestSession],
) -> None:
    handler = Handler(Response(429, json={"error": "slow down"}, headers={"Retry-After": "0"}))
    session = make_session(handler, retry=FAST.replace(statuses=set()))
    with pytest.raises(RateLimitError):
        session.request(ME)
    assert len(handler.seen) == 1


def test_a_call_may_ask_for_another_count_and_keeps_the_policy_statuses(
    make_session: Callable[..., RestSession],
) -> None:
    handler = Handler(Response(500, json={}))
    session = make_session(handler, retry=FAST.replace(statuses={500}, max_retries=5))
    with pytest.raises(ServiceAPIError):
        session.request(ME, retry=1)
    assert len(handler.seen) == 2
    handler.seen.clear()
    with pytest.raises(ServiceAPIError):
        session.request(ME)
    assert len(handler.seen) == 6


def test_a_policy_may_wait_its_backoff_instead_of_retry_after(make_session: Callable[..., RestSession]) -> None:
    refusal = Response(503, json={"error": "busy"}, headers={"Retry-After": "3600"})
    handler = Handler(refusal, Response(200, json={"ok": 1}))
    session = make_session(handler, retry=FAST.replace(respect_retry_after=False))
    assert session.request(ME) == {"ok": 1} and len(handler.seen) == 2   # no hour-long wait
    handler = Handler(refusal)
    with pytest.raises(ServiceAPIError, match="over the 60 s"):            # respected: too long a wait
        make_session(handler).request(ME)
    assert len(handler.seen) == 1
    with pytest.raises(TypeError, match="respect_retry_after"):
        RetryPolicy(respect_retry_after=1)  # type: ignore[arg-type]


def test_handler_failures_play_timeouts_and_network_errors(make_session: Callable[..., RestSession]) -> None:
    session = make_session(Handler(TimeoutError("slow"), TimeoutError("slow")), retry=FAST.replace(max_retries=1))
    with pytest.raises(ServiceTimeoutError):
        session.request(ME)
    handler = Handler(ConnectionResetError("reset"), Response(204))
    assert make_session(handler).request(ME) is None and len(handler.seen) == 2
    broken = make_session(Handler(RuntimeError("a bug in the handler")))
    with pytest.raises(ServiceError, match="unexpected error: RuntimeError"):
        broken.request(ME)


def test_the_handler_sees_the_request_but_never_the_token(make_session: Callable[..., RestSession]) -> None:
    handler = Handler(Response(200, json={"id": "R1"}))
    session = make_session(handler)
    route = Route("POST", "/servers/{server_id}/roles", server_id="S 1").with_query({"x": "1"})
    assert session.request(route, json={"name": "mods"}, headers={"X-Trace": "t1"}) == {"id": "R1"}
    [request] = handler.seen
    assert (request.method, request.path, request.json()) == ("POST", "/servers/S%201/roles?x=1", {"name": "mods"})
    assert request.headers == {"X-Trace": "t1"} and request.authorized is True
    assert "test-token" not in repr(request) and "Authorization" not in request.headers


def test_response_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="status"):
        Response(99)
    with pytest.raises(TypeError, match="not both"):
        Response(200, json={}, content=b"x")
    with pytest.raises(TypeError, match="content"):
        Response(200, content=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="handler"):
        MockTransport(None)  # type: ignore[arg-type]
    assert Response(200, content="é").content == "é".encode()


# -- through the Client ----------------------------------------------------------------------------


def test_the_client_takes_the_policy_and_the_transport() -> None:
    handler = Handler(Response(503, json={"error": "busy"}), Response(200, json={"id": "M1"}))
    policy = RetryPolicy(max_retries=1, backoff_base=0.0)
    client = Client(base_url=BASE, socket_url="http://127.0.0.1:9", retry=policy, transport=MockTransport(handler))
    try:
        assert client.retry is policy
        hook = Webhook.from_token(client, "W1", "hook-token")
        assert hook.execute("hello") == "M1"
        assert [r.path for r in handler.seen] == ["/webhooks/W1/hook-token"] * 2
        assert handler.seen[0].authorized is False and handler.seen[0].json()["content"] == "hello"
    finally:
        client.destroy()
    with pytest.raises(TypeError, match="retry"):
        Client(base_url=BASE, socket_url="http://127.0.0.1:9", retry=3)  # type: ignore[arg-type]


class TimedTransport(MockTransport):
    """A MockTransport that records the bound each attempt is given, ms."""

    def __init__(self, handler: Callable[[Request], Response]) -> None:
        super().__init__(handler)
        self.bounds: list[float] = []

    def send_once(self, prepared: Request, timeout_ms: float) -> Any:
        self.bounds.append(timeout_ms)
        return super().send_once(prepared, timeout_ms)


def test_a_call_that_names_no_timeout_gets_the_sessions_from_every_layer() -> None:
    transport = TimedTransport(Handler(Response(200, json={"id": "M1"})))
    client = Client(base_url=BASE, socket_url="http://127.0.0.1:9", transport=transport)
    try:
        # A model's call goes through the state port and the connection state, naming no timeout.
        assert Webhook.from_token(client, "W1", "hook-token").execute("hello") == "M1"
    finally:
        client.destroy()
    assert transport.bounds == [15_000]
    named = TimedTransport(Handler(Response(200, json={})))
    session = RestSession(BASE, user_agent="service_client/test", transport=named)
    try:
        session.token = "test-token"
        session.request(ME, timeout_ms=700)
        session.request(ME)
    finally:
        session.close()
    assert named.bounds == [700, 15_000]


# -- written once ----------------------------------------------------------------------------------

#: Two or more of the retried statuses listed together (``429, 502``, ``502/503/504``...).
_LISTED = re.compile(r"\b(?:429|502|503|504)\b[^\n]{0,12}\b(?:502|503|504)\b")


def test_the_retried_statuses_are_written_once() -> None:
    places = [path for path in sorted(ROOT.glob("service_client/**/*.py")) if "emulator" not in path.parts]
    # The emulator's pages list the statuses it can be told to answer with, not the retried ones.
    places += [path for path in sorted(ROOT.glob("docs/**/*.rst")) if not path.name.startswith("emulator")]
    places.append(ROOT / "README.rst")
    found = [f"{path.relative_to(ROOT)}:{number}" for path in places
             for number, line in enumerate(path.read_text().splitlines(), 1) if _LISTED.search(line)]
    assert found == ["service_client/rest/retry.py:35", "service_client/rest/retry.py:37"], (
        "name RetryPolicy.statuses or RETRY_STATUSES instead of listing the statuses"
    )


def test_the_default_request_timeout_is_read_in_one_place() -> None:
    # Every layer between a model and the session passes timeout_ms=None on, so that the default
    # (or a client-wide value) is read by the session alone, not written as the default of each
    # call's signature on the way.
    numbered = []
    for path in sorted(ROOT.glob("service_client/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            # A constructor may take the value a part holds; a call's signature passes None on.
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "__init__":
                args = node.args
                defaults = dict(zip([a.arg for a in args.kwonlyargs], args.kw_defaults, strict=True))
                defaults.update(zip([a.arg for a in args.args][len(args.args) - len(args.defaults):], args.defaults, strict=True))
                default = defaults.get("timeout_ms")
                if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
                    numbered.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert numbered == [], "default timeout_ms to None: the session reads the default"
