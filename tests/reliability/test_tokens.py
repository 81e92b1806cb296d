"""The token never leaks (spec: Authentication 4; issue 6), and the host check (Authentication 5)."""

from __future__ import annotations

import json
import logging
import pickle
import socket
import threading
import traceback
import warnings
from typing import Any

import pytest

from service_client import (
    Client,
    InsecureHostWarning,
    RateLimitError,
    RetryPolicy,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)

from .conftest import Recorder, wait_until

try:  # tests/ is not a package: pytest puts it on sys.path
    from gateway.frame_locals import chain
except ImportError:  # pragma: no cover - if tests/ becomes a package
    from tests.gateway.frame_locals import chain  # type: ignore[no-redef]


def _texts_of(exc: BaseException) -> list[str]:
    """Everything an exception shows: traceback (chain included), and for it and every chained
    exception str, repr, args, attributes (one level deep) and its pickle."""
    out = ["".join(traceback.format_exception(exc))]
    for item in chain(exc):
        out += [repr(item), str(item), repr(item.args)]
        for value in vars(item).values():
            out.append(repr(value))
            try:
                out.extend(repr(v) for v in vars(value).values())
            except TypeError:  # no __dict__
                pass
        try:
            data = pickle.dumps(item)
        except Exception:  # noqa: BLE001 - a third-party cause may not pickle; ours must
            assert not type(item).__module__.startswith("service_client"), f"{item!r} does not pickle"
        else:
            out.append(data.decode("latin-1"))
            if type(item).__module__.startswith("service_client"):
                copy = pickle.loads(data)
                assert type(copy) is type(item) and str(copy) == str(item)
    return out


def _snapshot(client: Client) -> list[str]:
    texts = [repr(client), str(client), client.to_json(), json.dumps(client.to_dict()), repr(vars(client))]
    texts.extend(repr(value) for value in vars(client).values())
    for value in vars(client).values():
        try:
            texts.append(repr(vars(value)))
        except TypeError:  # __slots__ objects
            pass
    return texts


def test_a_whole_session_never_shows_the_token(world, emulator, make_client, caplog):
    caplog.set_level(logging.DEBUG)  # every logger, every level
    token = world.bot_token
    wrong = token[::-1] + "x"  # also a secret: a mistyped token must not be shown either
    texts: list[str] = []
    errors: list[BaseException] = []

    def expect(exc_type: type[BaseException], fn: Any, *args: Any, **kwargs: Any) -> None:
        with pytest.raises(exc_type) as info:
            fn(*args, **kwargs)
        errors.append(info.value)

    client = make_client()
    texts += _snapshot(client)
    assert client.to_dict()["token"] is None
    client.login(token, timeout=15)
    assert client.to_dict()["token"] == "[REDACTED]"
    recorder = Recorder(client)
    texts += _snapshot(client)
    with pytest.raises(TypeError) as pickled:
        pickle.dumps(client)
    errors.append(pickled.value)
    for part in (client._token, client._rest):
        expect(TypeError, pickle.dumps, part)

    channel = world.general["publicId"]
    message = client.send_message(channel, "hello")
    texts.append(repr(message))
    # REST faults: not retried, retried then failing, timing out, a header carrying the token.
    emulator.add_fault("GET", "/auth/me", status=500, count=1)
    expect(ServiceAPIError, client.api_call, "/auth/me")
    emulator.add_fault("GET", "/auth/me", status=429, retry_after="0", count=None)
    expect(ServiceAPIError, client.api_call, "/auth/me", max_retries=1)
    emulator.clear_faults()
    emulator.add_fault("GET", "/auth/me", delay_ms=800, count=1)
    expect(ServiceError, client.api_call, "/auth/me", timeout_ms=100, max_retries=0)
    expect(ValueError, client.api_call, "/auth/me", headers={"X-Bad": token + "\n"})
    expect(ServiceAPIError, client.channels.fetch, "unknown")
    # Socket loss and reconnection.
    emulator.drop_transport(world.bot["publicId"])
    recorder.wait("reconnect")
    wait_until(lambda: client.is_connected)
    client.send_message(channel, "again")
    # A refused token, before ready and during a reconnect.
    other = make_client()
    expect(ServiceAuthError, other.login, wrong, timeout=10)
    texts += _snapshot(other)
    emulator.revoke_token(world.bot["publicId"])
    recorder.wait("error")
    errors.extend(args[0] for args in recorder.args("error"))
    expect(ServiceAuthError, client.send_message, channel, "x")
    client.destroy()
    texts += _snapshot(client)
    expect(ServiceError, client.login, token)

    for exc in errors:
        texts += _texts_of(exc)
    for record in caplog.records:
        texts.append(record.getMessage())
        texts.append(repr(record.args))
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    assert len(caplog.records) > 20  # the session did log (DEBUG included)
    for secret in (token, wrong):
        leaks = [t for t in texts if secret in t]
        assert leaks == []


def test_rest_fault_exceptions_never_show_the_token(world, emulator, bot, caplog):
    """Every REST fault kind (issue 3's error table), provoked for real: nothing it raises or logs
    shows the token, in str, repr, args, attributes, traceback (causes included) or pickle."""
    caplog.set_level(logging.DEBUG)
    token = world.bot_token
    errors: list[BaseException] = []

    def provoke(exc_type: type[BaseException], fn: Any, *args: Any, **kwargs: Any) -> BaseException:
        with pytest.raises(exc_type) as info:
            fn(*args, **kwargs)
        errors.append(info.value)
        return info.value

    emulator.add_fault("GET", "/auth/me", status=429, retry_after="0", count=None)
    limited = provoke(RateLimitError, bot.api_call, "/auth/me", max_retries=1)  # 429 past the retries
    assert limited.status == 429 and limited.retry_after is not None
    emulator.clear_faults()
    # beyond max_retry_after: raised at once (its own bucket, which now stays blocked for 120 s)
    emulator.add_fault("GET", "/servers", status=429, retry_after="120", count=1)
    assert provoke(RateLimitError, bot.api_call, "/servers").retry_after == 120
    emulator.clear_faults()
    emulator.add_fault("GET", "/auth/me", status=500, count=1)
    assert provoke(ServiceAPIError, bot.api_call, "/auth/me").status == 500
    emulator.add_fault("GET", "/servers/*", status=503, retry_after="0", count=None)
    unavailable = provoke(ServiceAPIError, bot.guilds.fetch, world.server["publicId"])  # retries exhausted
    assert unavailable.status == 503
    emulator.clear_faults()
    emulator.add_fault("GET", "/auth/me", delay_ms=800, count=None)
    provoke(ServiceTimeoutError, bot.api_call, "/auth/me", timeout_ms=100, max_retries=1)
    emulator.clear_faults()
    emulator.add_fault("GET", "/auth/me", status=0, count=None)  # connection reset
    reset = provoke(ServiceError, bot.api_call, "/auth/me", max_retries=1)
    assert type(reset) is ServiceError and reset.__cause__ is not None
    emulator.clear_faults()
    assert bot.api_call("/auth/me")["user"]["publicId"] == world.bot["publicId"]

    texts: list[str] = []
    for exc in errors:
        texts += _texts_of(exc)
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args)]
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    assert any("/auth/me" in t for t in texts)  # the scan did see the failures
    assert [t for t in texts if token in t] == []


@pytest.mark.parametrize(
    ("base_url", "socket_url", "expected"),
    [
        ("https://api.service-chat.app/v2", "https://rt.service-chat.app", set()),
        ("http://localhost:8080/v2", "http://localhost:8080", set()),
        ("http://127.0.0.1:8080/v2", "ws://127.0.0.1:8080", set()),
        ("https://LOCALHOST/v2", "https://localhost", set()),
        ("http://api.service-chat.app/v2", "https://rt.service-chat.app", {"unencrypted"}),
        ("https://api.service-chat.app/v2", "https://evil.example", {"not the service's"}),
        ("http://evil.example/v2", "http://evil.example", {"not the service's", "unencrypted"}),
        ("https://api.service-chat.app.evil.example/v2", "https://rt.service-chat.app", {"not the service's"}),
    ],
)
def test_host_check_warns_per_rule_at_every_construction_and_never_blocks(base_url, socket_url, expected):
    for _ in range(2):  # shown at every construction, never deduplicated
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            client = Client(base_url=base_url, socket_url=socket_url)  # never blocks
        client.destroy()
        found = {kind for w in caught for kind in ("not the service's", "unencrypted") if kind in str(w.message)}
        assert all(issubclass(w.category, InsecureHostWarning) for w in caught)
        assert found == expected and len(caught) == len(expected)


#: A token the service does not know (a module constant: no test frame local holds it).
UNKNOWN_TOKEN = "tok-unknown-" + "6a1f0c9e4b7d2a58"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("timeout", [None, 15])
@pytest.mark.parametrize("kind", ["bad token", "unreachable host", "refused CONNECT", "auth/me 500"])
def test_login_failure_tracebacks_hold_no_token_in_frame_locals(world, emulator, make_client, kind, timeout):
    """What Sentry, ``pytest --showlocals`` and ``TracebackException(capture_locals=True)`` record."""
    if kind == "unreachable host":
        client = make_client(socket_url=f"http://127.0.0.1:{_closed_port()}")
    else:
        client = make_client()
    if kind == "refused CONNECT":
        emulator.configure(refuse_auth=True)
    elif kind == "auth/me 500":
        emulator.add_fault("GET", "/auth/me", status=500, count=None)
    with pytest.raises(ServiceError) as info:
        client.login(UNKNOWN_TOKEN if kind == "bad token" else world.bot_token, timeout=timeout)
    text = "".join(traceback.TracebackException.from_exception(info.value, capture_locals=True).format())
    assert "login" in text and " = " in text  # frames and their locals were recorded
    if kind != "auth/me 500":
        assert "in establish" in text  # the socket dialer's connection frames are part of it
    for secret in (world.bot_token, UNKNOWN_TOKEN):
        assert secret not in text
    assert '{"token"' not in text and "'token'" not in text


def test_a_listener_failing_while_destroy_runs_shows_no_token(world, emulator, make_client, caplog):
    """destroy() forgets the token at once, but a listener still running on the pool may raise
    afterwards: its traceback is still redacted."""
    caplog.set_level(logging.DEBUG)
    token = world.bot_token
    client = make_client()
    client.login(token, timeout=15)
    entered, release = threading.Event(), threading.Event()

    @client.on("message_create")
    def leaky(message: Any) -> None:
        entered.set()
        release.wait(10)
        raise RuntimeError(f"bad header {token}")

    client.send_message(world.general["publicId"], "trigger")
    assert entered.wait(10)
    destroyer = threading.Thread(target=client.destroy, name="test-destroyer")
    destroyer.start()
    wait_until(lambda: client._token.get() is None)  # destroy has begun and forgotten the token
    release.set()
    destroyer.join(10)
    report = wait_until(lambda: [r for r in caplog.records if "leaky" in r.getMessage()])
    text = report[0].getMessage()
    assert "bad header [REDACTED]" in text and token not in text and token not in caplog.text


def _locals_text(exc: BaseException) -> str:
    """Every frame of ``exc`` and of the exceptions it chains, with their locals: what
    ``TracebackException(capture_locals=True)``, ``pytest --showlocals`` and Sentry record."""
    return "".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format())


@pytest.mark.parametrize("kind", ["refused", "reset", "timeout", "503"])
def test_api_call_failures_chain_no_token_in_any_frame_locals(world, emulator, make_client, kind):
    """A transport failure keeps its cause's type and message, but the cause's frames (urllib3's
    and requests', whose locals hold the Authorization header) are cleared."""
    # No local of this test holds the token: its frame is part of the recorded traceback.
    if kind == "refused":
        client = make_client(base_url=f"http://127.0.0.1:{_closed_port()}/v2")
        client._rest.token = world.bot_token  # logged in as far as REST goes; no socket needed
    else:
        client = make_client()
        client.login(world.bot_token, timeout=15)
        status = {"reset": 0, "503": 503}.get(kind)
        emulator.add_fault("GET", "/servers/*/stats", status=status, delay_ms=2000 if kind == "timeout" else 0,
                           count=None)
    path = f"/servers/{world.server['publicId']}/stats"
    expected = {"refused": ServiceError, "reset": ServiceError, "timeout": ServiceTimeoutError, "503": ServiceAPIError}
    with pytest.raises(expected[kind]) as info:
        client.api_call(path, timeout_ms=300, max_retries=0)
    text = _locals_text(info.value)
    assert "api_call" in text and " = " in text  # frames and their locals were recorded
    if kind in ("refused", "reset", "timeout"):
        cause = info.value.__cause__
        assert cause is not None and type(cause).__module__.split(".")[0] in ("requests", "urllib3")
        assert str(cause)  # the cause keeps its type and message
    assert world.bot_token not in text


@pytest.mark.parametrize("kind", ["refused", "reset", "timeout", "503"])
def test_login_rest_failures_chain_no_token_in_any_frame_locals(world, emulator, make_client, kind):
    fast = RetryPolicy(backoff_base=0.02)  # the same four attempts, without 3.5 s of backoff
    if kind == "refused":
        client = make_client(base_url=f"http://127.0.0.1:{_closed_port()}/v2", retry=fast)
    else:
        client = make_client(retry=fast)
        emulator.add_fault("GET", "/auth/me", status={"reset": 0, "503": 503}.get(kind),
                           delay_ms=3000 if kind == "timeout" else 0, count=None)
    with pytest.raises(ServiceError) as info:
        client.login(world.bot_token, timeout=1.5 if kind == "timeout" else 15)
    text = _locals_text(info.value)
    assert "login" in text and " = " in text
    assert world.bot_token not in text


def _strings_reachable_from(root: Any) -> list[str]:
    """Every str reachable from ``root`` through ``gc.get_referents``, not following classes,
    modules, functions or code (what a heap walk from the client itself would find)."""
    import gc
    import types

    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType,
            types.FrameType, types.WrapperDescriptorType, types.MethodDescriptorType)
    seen: set[int] = set()
    todo = [root]
    found = []
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.append(obj)
        elif not isinstance(obj, skip):
            todo.extend(gc.get_referents(obj))
    return found


def test_once_its_listeners_end_a_destroyed_client_holds_no_token(world, make_client):
    """destroy() forgets the token at once; the copy that keeps a still-running listener's
    traceback redacted lives only until the listeners that started before destroy() end."""
    client = make_client()
    client.login(world.bot_token, timeout=15)
    entered, release = threading.Event(), threading.Event()

    def slow() -> None:
        entered.set()
        release.wait(10)

    name = client.register_event("slow")
    client.on(name, slow)
    client.dispatch(name)
    assert entered.wait(5)
    client.destroy()
    assert not any(world.bot_token in s for s in _strings_reachable_from(client._token))
    release.set()
    for thread in client._pool.threads:
        thread.join(5)
        assert not thread.is_alive()
    leaks = [s for s in _strings_reachable_from(client) if world.bot_token in s]
    assert leaks == []


def test_a_destroyed_client_that_never_ran_a_listener_holds_no_token(world, make_client):
    client = make_client()
    client.login(world.bot_token, timeout=15)
    client.destroy()
    assert [s for s in _strings_reachable_from(client) if world.bot_token in s] == []
