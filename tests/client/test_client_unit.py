"""Client behaviour that needs no server: host warnings, secrets, argument checks."""

from __future__ import annotations

import json
import pickle
import warnings

import pytest

from service_client import Client, InsecureHostWarning, ServiceAuthError
from service_client.client.operations import _activity_payload
from service_client.client import MISSING

LOCAL = {"base_url": "http://127.0.0.1:1/api/v2", "socket_url": "http://127.0.0.1:1"}


def make(**kw):
    client = Client(**{**LOCAL, **kw})
    return client


def test_service_and_local_hosts_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client().destroy()
        make().destroy()
        make(base_url="http://localhost:9/v2", socket_url="http://localhost:9").destroy()


def test_foreign_host_and_plain_http_warn_separately_at_every_construction():
    for _ in range(2):  # never deduplicated
        with pytest.warns(InsecureHostWarning) as record:
            Client(base_url="http://evil.example/v2", socket_url="https://rt.service-chat.app").destroy()
        messages = [str(w.message) for w in record]
        assert len(messages) == 2
        assert any("not the service's" in m and "evil.example" in m for m in messages)
        assert any("unencrypted" in m for m in messages)
    with pytest.warns(InsecureHostWarning) as record:
        Client(base_url="https://evil.example/v2", socket_url="https://rt.evil.example").destroy()
    assert len(record) == 1


@pytest.mark.parametrize(
    ("given", "named", "host"),
    [
        ({"base_url": "http://127.0.0.1:8080/api/v2"}, "base_url", "127.0.0.1"),
        ({"socket_url": "http://localhost:8080"}, "socket_url", "localhost"),
        ({"base_url": "https://staging.example/v2"}, "base_url", "staging.example"),
    ],
)
def test_half_a_configuration_pointing_elsewhere_is_refused_before_the_token_can_leave(given, named, host):
    # The other URL would be the real service's default: login would send the token there.
    with pytest.raises(ValueError, match="pass both base_url and socket_url") as info:
        Client(**given)
    assert named in str(info.value) and host in str(info.value)
    assert "service-chat.app" in str(info.value)


def test_half_a_configuration_on_the_real_service_or_both_urls_given_is_accepted():
    Client(base_url="https://api.service-chat.app/v2").destroy()
    Client(socket_url="https://rt.service-chat.app").destroy()
    Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9").destroy()

    class Local(Client):  # a subclass whose defaults are both local: one override is fine
        base_url = "http://127.0.0.1:9/api/v2"
        socket_url = "http://127.0.0.1:9"

    Local(base_url="http://127.0.0.1:10/api/v2").destroy()


def test_token_is_never_shown():
    client = make()
    secret = "tok-SECRET-123456"
    client._token = type(client._token)(secret)  # as login would hold it
    client._rest.token = secret
    texts = [repr(client), str(client), client.to_json(), json.dumps(client.to_dict()), repr(vars(client))]
    assert all(secret not in t for t in texts)
    assert client.to_dict()["token"] == "[REDACTED]"
    with pytest.raises(TypeError):
        pickle.dumps(client)
    client.destroy()
    assert client.to_dict()["token"] is None


def test_to_dict_before_login():
    client = make()
    data = client.to_dict()
    assert data["token"] is None and data["user"] is None and data["ready_at"] is None
    assert data["guilds"] == 0
    client.destroy()


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"path": "auth/me"}, ValueError, "path"),
        ({"path": 3}, TypeError, "path"),
        ({"path": "/x", "body": {"a": 1}}, TypeError, "body"),
        ({"path": "/x", "headers": {"X": 1}}, TypeError, "headers"),
        ({"path": "/x", "timeout_ms": 0}, ValueError, "timeout_ms"),
        ({"path": "/x", "max_retries": -1}, ValueError, "max_retries"),
        ({"path": "/x", "method": "G T"}, ValueError, "method"),
    ],
)
def test_api_call_bad_arguments(kwargs, exc, match):
    client = make()
    path = kwargs.pop("path")
    with pytest.raises(exc, match=match):
        client.api_call(path, **kwargs)
    client.destroy()


def test_api_call_without_token_raises_auth_error():
    client = make()
    with pytest.raises(ServiceAuthError):
        client.api_call("/auth/me")
    client.destroy()


def test_constructor_arguments():
    with pytest.raises(TypeError, match="base_url"):
        Client(base_url=3)
    with pytest.raises(ValueError, match="socket_url"):
        Client(socket_url="ftp://x")
    with pytest.raises(ValueError, match="workers"):
        Client(workers=0)


def test_subclass_overrides_default_urls():
    class Local(Client):
        base_url = LOCAL["base_url"]
        socket_url = LOCAL["socket_url"]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = Local()
    assert client.base_url == LOCAL["base_url"]
    client.destroy()


def test_activity_payload_rules():
    assert _activity_payload(None) == {"type": "none", "name": ""}
    p = _activity_payload({"type": "playing", "name": "x" * 200, "details": "d" * 100})
    assert len(p["name"]) == 128 and len(p["details"]) == 64 and isinstance(p["startedAt"], int)
    assert _activity_payload({"type": "using", "name": "n", "started_at": 5})["startedAt"] == 5
    with pytest.raises(ValueError, match="type"):
        _activity_payload({"type": "dancing", "name": "n"})
    with pytest.raises(TypeError):
        _activity_payload("playing")


def test_presence_operations_require_a_connection():
    client = make()
    with pytest.raises(ServiceAuthError):
        client.set_status("idle")
    with pytest.raises(ServiceAuthError):
        client.set_activity({"type": "playing", "name": "chess"})
    with pytest.raises(ServiceAuthError):
        client.set_presence(status="online")
    with pytest.raises(ValueError):
        client.set_status("busy")
    assert repr(MISSING) == "MISSING"
    client.destroy()
