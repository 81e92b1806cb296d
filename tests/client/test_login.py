"""Login to ready, events, send_message and destroy, over real sockets."""

from __future__ import annotations

import threading
import time

import pytest

from service_client import Client, EmptyMessageError, ServiceAPIError, ServiceAuthError, ServiceError
from service_client.client import ClientState


def test_login_fills_user_and_guilds_at_ready(world, make_client):
    client = make_client()
    seen = {}

    @client.on("ready")
    def on_ready() -> None:
        seen["user"] = client.user
        seen["guilds"] = list(client.guilds.cache)

    ready = threading.Event()
    client.on("ready", lambda: ready.set())
    client.login(world.bot_token, timeout=15)
    # login returns exactly at ready: the state is already there
    assert client.state is ClientState.READY
    assert client.ready_at is not None and client.ready_at.tzinfo is not None
    assert client.user is not None and client.user.id == world.bot["publicId"]
    assert client.user.bot is True
    assert world.server["publicId"] in client.guilds.cache
    assert client.uptime is not None and client.uptime >= 0
    assert ready.wait(5)
    assert seen["user"].id == world.bot["publicId"]
    assert world.server["publicId"] in seen["guilds"]


def test_bad_token_raises_and_leaves_nothing_running(world, make_client, client_threads):
    before = client_threads()
    client = make_client()
    with pytest.raises(ServiceAuthError):
        client.login("not-a-valid-token", timeout=15)
    assert client_threads() == before
    assert client.ready_at is None
    with pytest.raises(ServiceError):
        client.login(world.bot_token)  # a failed client never becomes ready later


@pytest.mark.parametrize("token", ["", "   ", None, 42])
def test_login_requires_a_token_string(make_client, token):
    client = make_client()
    with pytest.raises(ServiceAuthError, match="login\\(\\) requires a non-empty bot token string."):
        client.login(token)
    assert client.state is ClientState.NEW


def test_second_login_is_refused(bot, world):
    with pytest.raises(ServiceError, match="already ready"):
        bot.login(world.bot_token)


def test_user_message_reaches_message_create(bot, world, emulator):
    got = []
    arrived = threading.Event()

    @bot.on("message_create")
    def on_message(message) -> None:
        got.append(message)
        arrived.set()

    emulator.post_message(world.general["publicId"], world.human["publicId"], "hello <bot> & co")
    assert arrived.wait(10)
    message = got[0]
    assert message.content == "hello <bot> & co"  # entities decoded
    assert message.author.id == world.human["publicId"]
    assert message.author.bot is False
    assert message.channel_id == world.general["publicId"]


def test_send_message_returns_the_echoed_message(bot, world, emulator):
    message = bot.send_message(world.general["publicId"], "hi there")
    assert message.content == "hi there"
    assert message.author.id == world.bot["publicId"]
    assert message.channel_id == world.general["publicId"]
    stored = [m["publicId"] for m in emulator.messages(world.general["publicId"])]
    assert message.id in stored


def test_reply_from_inside_a_listener_does_not_deadlock(bot, human, world):
    @bot.on("message_create")
    def on_message(message) -> None:
        if message.author is not None and not message.author.bot and message.content == "!ping":
            message.reply("Pong!")

    replies = []
    arrived = threading.Event()

    @human.on("message_create")
    def on_reply(message) -> None:
        if message.author is not None and message.author.bot:
            replies.append(message)
            arrived.set()

    sent = human.send_message(world.general["publicId"], "!ping")
    assert arrived.wait(10)
    assert replies[0].content == "Pong!"
    assert sent.content == "!ping"


def test_wait_for_sees_a_later_event(bot, world, emulator):
    result = {}
    waiting = threading.Thread(
        target=lambda: result.setdefault("m", bot.wait_for("message_create", timeout=10))
    )
    waiting.start()
    deadline = time.monotonic() + 5
    while not bot._events._waiters and time.monotonic() < deadline:
        time.sleep(0.005)
    emulator.post_message(world.general["publicId"], world.human["publicId"], "for the waiter")
    waiting.join(15)
    assert result["m"].content == "for the waiter"


@pytest.mark.parametrize("options", ["", None, {"content": ""}, {"content": "", "embeds": []}, {}])
def test_empty_content_raises_the_specs_error_before_anything_is_sent(bot, world, options, emulator):
    before = len(emulator.messages(world.general["publicId"]))
    with pytest.raises(ServiceAuthError) as info:
        bot.send_message(world.general["publicId"], options)
    assert str(info.value) == "send_message requires non-empty content or at least one embed."
    assert isinstance(info.value, EmptyMessageError) and isinstance(info.value, ValueError)
    assert len(emulator.messages(world.general["publicId"])) == before


@pytest.mark.parametrize("options", ["   ", {"content": " \n"}, "\ufeff"])
def test_whitespace_content_raises_value_error_before_anything_is_sent(bot, world, options, emulator):
    before = len(emulator.messages(world.general["publicId"]))
    with pytest.raises(ValueError, match="^send_message: a message needs content that is not only whitespace"):
        bot.send_message(world.general["publicId"], options)
    assert len(emulator.messages(world.general["publicId"])) == before


def test_send_message_before_login_raises_auth_error(make_client):
    client = make_client()
    with pytest.raises(ServiceAuthError):
        client.send_message("123", "hi")


def test_destroy_stops_every_thread(world, make_client, emulator, client_threads):
    before = client_threads()
    client = make_client()
    client.login(world.bot_token, timeout=15)
    woke = threading.Event()
    client.on("message_create", lambda m: woke.set())
    emulator.post_message(world.general["publicId"], world.human["publicId"], "wake the pool")
    assert woke.wait(10)
    assert len(client_threads()) > len(before)
    started = time.monotonic()
    client.destroy()
    assert time.monotonic() - started < 2.0
    assert client_threads() == before
    assert client.state is ClientState.DESTROYED
    assert client.ready_at is None
    assert client.listeners("message_create") == []
    client.destroy()  # idempotent
    with pytest.raises(ServiceAuthError):
        client.send_message(world.general["publicId"], "after destroy")
    with pytest.raises(ServiceAuthError):
        client.api_call("/auth/me")


def test_destroy_from_inside_a_listener(world, make_client, emulator, client_threads):
    client = make_client()
    client.login(world.bot_token, timeout=15)
    done = threading.Event()

    @client.on("message_create")
    def on_message(message) -> None:
        client.destroy()
        done.set()

    emulator.post_message(world.general["publicId"], world.human["publicId"], "stop")
    assert done.wait(10)
    deadline = time.monotonic() + 2
    while client_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client_threads() == []


def test_context_manager_destroys(world, emulator, client_threads):
    with Client(base_url=emulator.base_url, socket_url=emulator.socket_url) as client:
        client.login(world.bot_token, timeout=15)
        assert client.is_connected
    assert client.state is ClientState.DESTROYED
    assert client_threads() == []


def test_a_base_url_without_its_api_prefix_names_the_url_and_the_prefix(world, emulator, make_client):
    base = emulator.base_url.rsplit("/api/v2", 1)[0]
    client = make_client(base_url=base)
    with pytest.raises(ServiceAPIError) as info:
        client.login(world.bot_token, timeout=15)
    text = str(info.value)
    assert info.value.status == 404 and text.startswith("API Error 404: ")
    assert f"{base}/auth/me" in text and "/api/v2" in text
    assert client.state is ClientState.DESTROYED


def test_a_socket_url_with_a_path_is_a_library_error_naming_the_url(world, emulator, make_client):
    client = make_client(socket_url=emulator.socket_url + "/socket")
    with pytest.raises(ServiceError) as info:
        client.login(world.bot_token, timeout=15)
    text = str(info.value)
    assert type(info.value) is ServiceError
    assert f"{emulator.socket_url.replace('http', 'ws')}/socket/socket.io/" in text
    assert f"try {emulator.socket_url}" in text and "'/socket'" in text
    assert "-+-+-" not in text  # not websocket-client's header dump
