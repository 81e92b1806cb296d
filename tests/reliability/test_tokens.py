"""The token never leaks (spec: Authentication 4; issue 6), and the host check (Authentication 5)."""

from __future__ import annotations

import json
import logging
import pickle
import traceback
import warnings
from typing import Any

import pytest

from service_client import Client, InsecureHostWarning, ServiceAPIError, ServiceAuthError, ServiceError

from .conftest import Recorder, wait_until


def _texts_of(exc: BaseException) -> list[str]:
    out = ["".join(traceback.format_exception(exc)), repr(exc), str(exc), repr(exc.args)]
    out.extend(repr(v) for v in vars(exc).values())
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
