"""The client's seams for parts built on it (the events fleet's publisher and standby socket):
``connection_state``, ``use_token`` and ``catch_up_from``, against the emulator.

A part built on the client uses these instead of the client's private attributes (the
architecture test reads the fleet for any such use).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from conftest import World

from service_client import CatchUp, Client, ClientState, ServiceAuthError, ServiceError, endpoints
from service_client.client.catchup import ChannelMark
from service_client.client.source import EventFeed
from service_client.rest.route import Route


class _Silent:
    """An event source that feeds nothing: the client sees no live event."""

    def open(self, feed: EventFeed, deadline: float | None) -> None:
        pass

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_use_token_authenticates_rest_requests_without_logging_in(world: World, make_client: Any) -> None:
    client = make_client()
    client.use_token(world.bot_token)
    me = client.connection_state.request(Route(endpoints.GET_ME))
    assert me["user"]["publicId"] == world.bot["publicId"]
    assert client.state is ClientState.NEW and not client.is_connected and client.user is None
    assert world.bot_token not in repr(client) and world.bot_token not in str(client.to_dict())
    client.login(world.bot_token, timeout=15)  # a client given a token may still log in
    assert client.state is ClientState.READY
    with pytest.raises(ServiceError, match="is ready"):
        client.use_token(world.bot_token)
    client.destroy()
    with pytest.raises(ServiceError, match="is destroyed"):
        client.use_token(world.bot_token)


def test_use_token_refuses_what_cannot_be_a_token(make_client: Any) -> None:
    client = make_client()
    with pytest.raises(ServiceAuthError, match="non-empty"):
        client.use_token("  ")
    with pytest.raises(ServiceAuthError, match="visible ASCII") as caught:
        client.use_token("sekret\nvalue")
    assert "sekret" not in str(caught.value)
    with pytest.raises(ServiceAuthError):  # nothing was set: no request goes out
        client.connection_state.request(Route(endpoints.GET_ME))


def test_catch_up_from_hands_on_the_messages_after_each_mark_once(world: World, emulator: Any,
                                                                   make_client: Any) -> None:
    client = make_client(event_source=_Silent(), catch_up=CatchUp())
    client.login(world.bot_token, timeout=15)
    general, human = world.general["publicId"], world.human["publicId"]
    mark = emulator.post_message(general, human, "already handled")["message"]
    for text in ("missed 0", "missed 1"):
        emulator.post_message(general, human, text)
    got: list[tuple[str, bool]] = []
    tapped: list[str] = []
    both = threading.Event()

    def on_message(message: Any) -> None:
        got.append((message.content, message.replayed))
        if len(got) == 2:
            both.set()

    client.on("message_create", on_message)
    client.connection_state.event_tap = lambda event, args: tapped.append(args[0]["content"])
    result = client.catch_up_from([ChannelMark(general, mark["publicId"], None)])
    assert both.wait(10)
    assert got == [("missed 0", True), ("missed 1", True)]  # oldest first, marked replayed
    assert tapped == ["missed 0", "missed 1"]  # an event publisher's tap sees them too
    assert result.replayed == 2 and result.channels == 1 and result.incomplete == []
    again = client.catch_up_from([ChannelMark(general, mark["publicId"], None)], CatchUp(max_requests=5))
    assert again.replayed == 0 and len(got) == 2  # the client's catch-up memory: never twice


def test_catch_up_from_checks_its_policy(make_client: Any) -> None:
    client: Client = make_client()
    with pytest.raises(TypeError, match="policy must be a CatchUp"):
        client.catch_up_from([], policy="everything")  # type: ignore[arg-type]


def test_a_token_given_by_use_token_is_redacted_in_listener_tracebacks(
    world: World, make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    client.use_token(world.bot_token)
    boom = client.register_event("boom")
    reported = threading.Event()

    def failing() -> None:
        raise RuntimeError(f"the request with {world.bot_token} failed")

    client.on(boom, failing)
    client.on("error", lambda exc: reported.set())
    with caplog.at_level("ERROR"):
        client.dispatch(boom)
        assert reported.wait(10)
    assert "the request with [REDACTED] failed" in caplog.text
    assert world.bot_token not in caplog.text


def test_catch_up_from_checks_its_marks_before_any_request(make_client: Any) -> None:
    client: Client = make_client()
    with pytest.raises(TypeError, match="marks must be an iterable of ChannelMark"):
        client.catch_up_from(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="marks must be an iterable of ChannelMark"):
        client.catch_up_from([("channel", "message", None)])  # type: ignore[list-item]
