"""The event-source seam: a client fed recorded socket frames instead of its socket.

The client logs in over REST on the emulator (the bot's user, its servers), opens no socket,
and takes its events from the source: caches, listeners (in order), ``wait_for`` and commands
work as they do for the socket's events.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from conftest import World

from service_client import Client, ClientState, CommandDispatcher, ServiceAuthError, ServiceError
from service_client.client import EventFeed, EventSource


class Recorded:
    """An event source replaying recorded frames ``(wire name, arguments)`` once started."""

    def __init__(self, frames: list[tuple[str, list[Any]]], *, fail_open: bool = False) -> None:
        self.frames = frames
        self.fail_open = fail_open
        self.feed: EventFeed | None = None
        self.calls: list[str] = []

    def open(self, feed: EventFeed, deadline: float | None) -> None:
        self.calls.append("open")
        if self.fail_open:
            raise ServiceError("the source could not connect")
        assert feed.user is not None  # the bot's user is known before the source opens
        self.feed = feed

    def start(self) -> None:
        self.calls.append("start")
        assert self.feed is not None
        for event, args in self.frames:
            self.feed.feed(event, *args)

    def close(self) -> None:
        self.calls.append("close")


def _message(world: World, mid: str, content: str) -> dict[str, Any]:
    human = world.human
    return {"publicId": mid, "content": content, "channelPublicId": world.general["publicId"],
            "serverPublicId": world.server["publicId"], "createdAt": "2026-01-02T03:04:05.678Z", "embeds": [],
            "author": {"publicId": human["publicId"], "name": human["name"], "tag": human.get("tag", "0001"),
                       "isBot": False}}


def test_a_client_fed_recorded_frames_runs_its_caches_listeners_and_commands(
        world: World, make_client: Any) -> None:
    server_id, channel_id = world.server["publicId"], world.general["publicId"]
    frames: list[tuple[str, list[Any]]] = [
        ("message:new", [_message(world, f"M{i}", f"hello {i}")]) for i in range(20)
    ]
    frames.append(("message:new", [_message(world, "M99", "!echo from the recording")]))
    frames.append(("server:role_create", [{"serverPublicId": server_id,
                                           "role": {"publicId": "R1", "name": "recorded", "position": 1}}]))
    frames.append(("no:such-event", [{}]))  # unknown to the client: ignored, as from the socket
    source = Recorded(frames)
    assert isinstance(source, EventSource)
    client = make_client(event_source=source)
    seen: list[str] = []
    channels: list[str] = []
    done = threading.Event()
    roles: list[str] = []
    echoed: list[str] = []

    @client.on("message_create")
    def on_message(message: Any) -> None:
        seen.append(message.id)
        channels.append(message.channel.name)  # resolved from the cache the login filled
        if message.id == "M99":
            done.set()

    client.on("role_create", lambda role: roles.append(role.name))
    ready = threading.Event()
    client.on("ready", ready.set)
    dispatcher = CommandDispatcher(client, prefix="!", reply_errors=False)

    @dispatcher.command()
    def echo(ctx: Any, *words: str) -> None:
        echoed.append(" ".join(words))

    client.login(world.bot_token, timeout=15)
    assert done.wait(5) and ready.wait(5)
    assert seen == [f"M{i}" for i in range(20)] + ["M99"]  # one channel's events in order
    assert set(channels) == {"general"}
    assert source.calls == ["open", "start"]
    assert client.state is ClientState.READY and client.is_connected
    assert client.guilds.get(server_id) is not None
    assert channel_id in client.channels.cache
    pause = threading.Event()
    for _ in range(100):  # the command and the role run in their own lanes: wait for them
        if echoed and roles:
            break
        pause.wait(0.05)
    assert echoed == ["from the recording"]
    assert roles == ["recorded"]
    with pytest.raises(ServiceAuthError):  # no socket: socket operations refuse at once
        client.send_message(channel_id, "over a socket it does not hold")
    client.destroy()
    assert source.calls == ["open", "start", "close"]
    assert not client.is_connected


def test_feed_delivers_one_frame_to_wait_for(world: World, make_client: Any) -> None:
    source = Recorded([])
    client = make_client(event_source=source)
    client.login(world.bot_token, timeout=15)
    assert source.feed is not None
    feed = source.feed
    threading.Timer(0.05, lambda: feed.feed("message:new", _message(world, "W1", "waited"))).start()
    message = client.wait_for("message_create", check=lambda m: m.id == "W1", timeout=5)
    assert message.content == "waited" and message.author.id == world.human["publicId"]


def test_a_source_that_fails_to_open_fails_the_login_and_is_closed(world: World, make_client: Any) -> None:
    source = Recorded([], fail_open=True)
    client = make_client(event_source=source)
    with pytest.raises(ServiceError, match="could not connect"):
        client.login(world.bot_token, timeout=15)
    assert client.state is ClientState.DESTROYED
    assert source.calls == ["open", "close"]


def test_a_refused_token_is_an_auth_error_with_an_event_source(world: World, make_client: Any) -> None:
    source = Recorded([])
    client = make_client(event_source=source)
    with pytest.raises(ServiceAuthError, match="refused the bot token"):
        client.login("not-a-token", timeout=15)
    assert "start" not in source.calls


def test_event_source_must_be_a_source() -> None:
    with pytest.raises(TypeError, match="event_source must have open"):
        Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9",
               event_source=object())  # type: ignore[arg-type]


def test_a_source_can_run_the_listeners_itself_and_learn_their_failures(world: World, make_client: Any) -> None:
    # What an at-least-once source needs: apply now, run the listeners later where it wants,
    # know when they have returned and whether one raised (then it delivers the event again).
    source = Recorded([])
    client = make_client(event_source=source)
    client.login(world.bot_token, timeout=15)
    feed = source.feed
    assert feed is not None
    ran: list[tuple[str, str]] = []

    @client.on("message_create")
    def on_message(message: Any) -> None:
        ran.append((threading.current_thread().name, message.content))
        if message.content == "boom":
            raise RuntimeError("listener failed")

    record = _message(world, "A1", "fine")
    record["author"] = {"publicId": "U-recorded", "name": "someone", "tag": "0002", "isBot": False}
    assert "U-recorded" not in client.users.cache
    captured = feed.apply("message:new", record)
    assert ran == [] and len(captured) == 1  # applied but not queued
    assert "U-recorded" in client.users.cache  # the cache effect: its author is known now
    prepared = feed.prepare(captured, timeout=1)
    assert feed.run(prepared) == []
    assert ran == [(threading.current_thread().name, "fine")]  # on the calling thread
    failed = feed.run(feed.prepare(feed.apply("message:new", _message(world, "A2", "boom")), timeout=1))
    assert [str(exc) for exc in failed] == ["listener failed"]
    assert feed.apply("no:such-event") == []
    assert not feed.on_worker_thread()
    with pytest.raises(ServiceAuthError, match="fed by an event source and holds no socket"):
        client.set_status("idle")


def test_the_feed_masks_the_bot_token_in_what_a_source_writes_elsewhere(world: World, make_client: Any) -> None:
    source = Recorded([])
    client = make_client(event_source=source)
    client.login(world.bot_token, timeout=15)
    assert source.feed is not None
    masked = source.feed.redact(f"Traceback ... token {world.bot_token} ...")
    ok = world.bot_token not in masked and "token [REDACTED] ..." in masked
    assert ok, "the feed left the token in the text"  # never printed: a failure must not show it
