"""A webhook token is a secret like the bot token: it never shows in a path, a repr, a log line,
an exception (text, attributes, traceback with its frame locals, pickle) or the emulator's
request journal, through a whole webhook session with every kind of failure."""

from __future__ import annotations

import html
import json
import logging
import pickle
import socket
import traceback
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from service_client import Client, RateLimitError, RetryPolicy, ServiceAPIError, ServiceError, Webhook
from service_client._secret import Secret
from service_client.rest.route import Route

from .test_tokens import _texts_of


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _with_locals(exc: BaseException) -> str:
    """The traceback with every frame's locals, as ``traceback`` renders them."""
    return "".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format())


def test_route_with_a_secret_segment_shows_stars_everywhere() -> None:
    token = "s3cr3t/t0ken?x"
    r = Route("POST", "/webhooks/{wid}/{token}", wid="W1", token=Secret(token)).with_query({"wait": "true"})
    assert r.path == "/webhooks/W1/***?wait=true" and r.display_path == "/webhooks/W1/***"
    assert r.bucket == "POST:webhooks/W1" and r.has_secret
    assert r.wire_path() == "/webhooks/W1/s3cr3t%2Ft0ken%3Fx?wait=true"
    assert token not in repr(r) and "s3cr3t" not in repr(r)
    assert r.redact("GET http://h/webhooks/W1/s3cr3t%2Ft0ken%3Fx and s3cr3t/t0ken?x") == \
        "GET http://h/webhooks/W1/*** and ***"
    with pytest.raises(ValueError, match="token"):
        Route("POST", "/webhooks/{wid}/{token}", wid="W1", token=Secret(""))
    plain = Route("GET", "/servers/{sid}", sid="S1")
    assert not plain.has_secret and plain.wire_path() == plain.path == "/servers/S1"

    from service_client.rest.transport import chained

    raw = Route.from_path("POST", f"/webhooks/W1/{token[:6]}")    # a raw api_call path holding a token
    cause = OSError(f"Max retries exceeded with url: /api/v2/webhooks/W1/{token[:6]}")
    linked = chained(ServiceError("failed"), cause, raw).__cause__
    assert linked is not None and token[:6] not in str(linked) and "/webhooks/W1/***" in str(linked)


def test_a_webhook_session_never_shows_its_token(world: Any, emulator: Any, human: Client, make_client: Any,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)          # every logger, urllib3's request lines included
    channel = human.channels.fetch(world.general["publicId"])
    hook = channel.create_webhook("Secretive")
    assert hook.token is not None
    token = hook.token.get()
    assert token
    wrong = token[::-1] + "x"                # a mistyped token is a secret too
    texts: list[str] = []
    errors: list[BaseException] = []

    def expect(exc_type: type[BaseException], fn: Any, *args: Any, **kwargs: Any) -> BaseException:
        with pytest.raises(exc_type) as info:
            fn(*args, **kwargs)
        errors.append(info.value)
        return info.value

    texts += [repr(hook), str(hook), json.dumps(hook.raw), repr(hook.token), str(hook.token)]
    assert repr(hook.token) == str(hook.token) == "***"          # a webhook token reads *** everywhere
    renamed = hook.edit(name="Secretive 2")                        # a new Webhook, same token
    assert renamed.token is not None and renamed.token.get() == token
    texts += [repr(renamed), str(renamed), json.dumps(renamed.raw), repr(renamed.token)]
    texts += [repr(getattr(hook, name)) for name in ("id", "name", "avatar_url", "channel_id", "server_id")]
    expect(TypeError, pickle.dumps, hook)
    expect(TypeError, pickle.dumps, hook.token)
    # A success, then the service's refusals: wrong token (404), 500, 429 and 503 past the retries.
    human._rest._retry = RetryPolicy(backoff_base=0.0)  # retries at once (the backoff maths is tested elsewhere)
    assert hook.execute("hello", username="Secretive")
    liar = Webhook.from_token(human, hook.id, wrong)
    texts += [repr(liar), repr(liar.token)]
    assert expect(ServiceAPIError, liar.execute, "x").status == 404   # type: ignore[attr-defined]
    emulator.add_fault("POST", "/webhooks/*", status=500, count=1)
    expect(ServiceAPIError, hook.execute, "x")
    emulator.add_fault("POST", "/webhooks/*", status=429, retry_after="0", count=None)
    expect(RateLimitError, hook.execute, "x")
    emulator.clear_faults()
    emulator.add_fault("POST", "/webhooks/*", status=503, retry_after="0", count=None)
    expect(ServiceAPIError, hook.execute, "x")
    emulator.clear_faults()
    emulator.add_fault("POST", "/webhooks/*", status=0, count=None)      # connection reset
    expect(ServiceError, hook.execute, "x")
    emulator.clear_faults()
    # Nothing listening: urllib3's connection error quotes the whole URL, token included.
    offline = make_client(base_url=f"http://127.0.0.1:{_free_port()}/api/v2", retry=RetryPolicy(backoff_base=0.0))
    refused = expect(ServiceError, Webhook.from_token(offline, hook.id, token).execute, "x")
    assert refused.__cause__ is not None and "***" in str(refused.__cause__)
    hook.delete()
    gone = expect(ServiceAPIError, hook.execute, "x")
    assert gone.path == f"/webhooks/{hook.id}/***"   # type: ignore[attr-defined]

    for exc in errors:
        texts += _texts_of(exc)
        texts.append(_with_locals(exc))
    texts.append(json.dumps(emulator.requests()))
    texts.append(json.dumps(emulator.snapshot()["tables"]["messages"]))
    for record in caplog.records:
        texts += [record.getMessage(), repr(record.args)]
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    assert any(f"/webhooks/{hook.id}/***" in t for t in texts)       # the scan saw the requests
    assert any("urllib3" in r.name and "webhooks" in r.getMessage() for r in caplog.records)
    for secret in (token, wrong):
        # a failure shows where the token leaked, with the token itself masked
        assert [t.replace(secret, "<TOKEN>")[:300] for t in texts if secret in t] == []


def test_an_error_body_that_echoes_the_path_shows_no_webhook_token(world: Any, emulator: Any, human: Client) -> None:
    """A service (or a proxy before it) that quotes the requested path in its error body: the
    token is masked in the message, the body, the parsed data and the traceback's frame locals,
    for the webhook API and for a raw ``api_call`` of the same route."""
    hook = human.channels.fetch(world.general["publicId"]).create_webhook("Echoed")
    assert hook.token is not None
    # No local of this test holds the token: its frame is part of the recorded traceback.
    emulator.add_fault("POST", "/webhooks/*", status=404, content_type="application/json", count=None,
                       body=f'{{"error": "no webhook at /api/v2/webhooks/{hook.id}/{hook.token.get()}"}}')
    errors = []
    with pytest.raises(ServiceAPIError) as info:
        hook.execute("x")
    errors.append(info.value)
    with pytest.raises(ServiceAPIError) as info:
        human.api_call(f"/webhooks/{hook.id}/{hook.token.get()}", method="POST", body='{"content": "x"}')
    errors.append(info.value)
    texts = []
    for exc in errors:
        assert "/webhooks/" in str(exc) and "***" in str(exc)   # the echo is kept, the token masked
        texts += _texts_of(exc) + [_with_locals(exc), repr(exc.body), repr(exc.data)]  # type: ignore[attr-defined]
    leaks = [t.replace(hook.token.get() or "", "<TOKEN>")[:300] for t in texts if (hook.token.get() or "") in t]
    assert leaks == []


@pytest.mark.parametrize(
    "quoted",
    [
        "Bearer {t}",                                  # as sent
        "/login?t={pct}",                              # percent-encoded, upper-case hex
        "/login?t={pct_lower}",                        # percent-encoded, lower-case hex
        "/login?t={plus}",                             # a form-encoded query
        '{{"error": "{json}"}}',                       # a JSON string
        '{{"error": "{json_slash}"}}',                 # a JSON string with escaped slashes
        "<p>{html}</p>",                               # HTML-escaped
        "BEARER {upper}",                              # another letter case
    ],
)
def test_secret_mask_hides_every_form_a_server_may_quote(quoted: str) -> None:
    value = 'tok/ODD+"q"&<x> y'
    text = quoted.format(
        t=value, pct=quote(value, safe=""), pct_lower=quote(value, safe="").lower(), plus=quote_plus(value),
        json=json.dumps(value)[1:-1], json_slash=json.dumps(value)[1:-1].replace("/", "\\/"),
        html=html.escape(value), upper=value.upper(),
    )
    masked = Secret(value).mask("before " + text + " after")
    assert "[REDACTED]" in masked and masked.startswith("before ") and masked.endswith(" after")
    assert "tok" not in masked.lower()
    assert Secret(value, shown="***").mask(text).count("***") == 1
    assert Secret(None).mask(text) == text and Secret(value).mask("") == ""
