"""Bad input raises TypeError / ValueError naming the argument before any I/O; ids cannot change the route."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, EmbedBuilder


def _cases(bot: Client, world: Any) -> list[tuple[str, Callable[[], Any], type[BaseException], str]]:
    """(label, call, exception, name the message must contain)."""
    channel = bot.channels.cache[world.general["publicId"]]
    voice_id = next(c["publicId"] for c in world.channels if c["type"] == "VOICE")
    guild = bot.guilds.cache[world.server["publicId"]]
    return [
        ("on event", lambda: bot.on(None, print), TypeError, "event"),
        ("on empty event", lambda: bot.on("", print), TypeError, "event"),
        ("on listener", lambda: bot.on("ready", 3), TypeError, "listener"),
        ("once listener", lambda: bot.once("ready", "x"), TypeError, "listener"),
        ("off event", lambda: bot.off(5), TypeError, "event"),
        ("off listener", lambda: bot.off("ready", "x"), TypeError, "listener"),
        ("listeners event", lambda: bot.listeners(None), TypeError, "event"),
        ("run token", lambda: Client(base_url=bot.base_url, socket_url=bot.socket_url).run(None), Exception,
         "token"),
        ("Client workers", lambda: Client(base_url=bot.base_url, socket_url=bot.socket_url, workers=0), ValueError,
         "workers"),
        ("Client base_url", lambda: Client(base_url=5), TypeError, "base_url"),
        ("Client reconnect_base",
         lambda: Client(base_url=bot.base_url, socket_url=bot.socket_url, reconnect_base="1"), TypeError,
         "reconnect_base"),
        ("Client reconnect_cap",
         lambda: Client(base_url=bot.base_url, socket_url=bot.socket_url, reconnect_cap=-1), ValueError,
         "reconnect_cap"),
        ("wait_for event", lambda: bot.wait_for(5), TypeError, "event"),
        ("wait_for check", lambda: bot.wait_for("ready", check=1), TypeError, "check"),
        ("wait_for timeout", lambda: bot.wait_for("ready", timeout=-1), ValueError, "timeout"),
        ("login timeout", lambda: Client(base_url=bot.base_url, socket_url=bot.socket_url).login("t", timeout=0),
         ValueError, "timeout"),
        ("api_call path type", lambda: bot.api_call(5), TypeError, "path"),
        ("api_call path", lambda: bot.api_call("auth/me"), ValueError, "path"),
        ("api_call empty path", lambda: bot.api_call(""), ValueError, "path"),
        ("api_call method", lambda: bot.api_call("/auth/me", method=3), TypeError, "method"),
        ("api_call body", lambda: bot.api_call("/auth/me", body={"a": 1}), TypeError, "body"),
        ("api_call headers", lambda: bot.api_call("/auth/me", headers=[("a", "b")]), TypeError, "headers"),
        ("api_call timeout_ms", lambda: bot.api_call("/auth/me", timeout_ms=0), ValueError, "timeout_ms"),
        ("api_call max_retries", lambda: bot.api_call("/auth/me", max_retries=-1), ValueError, "max_retries"),
        ("send_message channel_id", lambda: bot.send_message(None, "x"), TypeError, "channel_id"),
        ("send_message empty channel_id", lambda: bot.send_message("", "x"), ValueError, "channel_id"),
        ("send_message options", lambda: bot.send_message("1", 42), TypeError, "options"),
        ("send_message content", lambda: bot.send_message("1", content=42), TypeError, "content"),
        ("send_message embeds", lambda: bot.send_message("1", content="x", embeds="e"), TypeError, "embeds"),
        ("send_message reply_to_id", lambda: bot.send_message("1", "x", reply_to_id=5), TypeError, "reply_to_id"),
        ("create_dm", lambda: bot.create_dm(None), TypeError, "user_id"),
        ("create_dm empty", lambda: bot.create_dm(""), ValueError, "user_id"),
        ("fetch_invite", lambda: bot.fetch_invite(7), TypeError, "code"),
        ("fetch_invite empty", lambda: bot.fetch_invite(""), ValueError, "code"),
        ("search channel_id", lambda: bot.search_messages(None, "q"), TypeError, "channel_id"),
        ("search query", lambda: bot.search_messages("1", None), TypeError, "query"),
        ("search limit", lambda: bot.search_messages("1", "q", limit="5"), TypeError, "limit"),
        ("search limit range", lambda: bot.search_messages("1", "q", limit=0), ValueError, "limit"),
        ("load_commands", lambda: bot.load_commands(None), TypeError, "directory"),
        ("set_activity", lambda: bot.set_activity(5), TypeError, "activity"),
        ("set_activity type", lambda: bot.set_activity({"type": "dancing", "name": "x"}), ValueError, "type"),
        ("set_status type", lambda: bot.set_status(None), TypeError, "status"),
        ("set_status value", lambda: bot.set_status("busy"), ValueError, "status"),
        ("set_presence data", lambda: bot.set_presence(5), TypeError, "data"),
        ("set_presence status", lambda: bot.set_presence(status="busy"), ValueError, "status"),
        ("guilds.fetch", lambda: bot.guilds.fetch(None), TypeError, "server_id"),
        ("guilds.fetch empty", lambda: bot.guilds.fetch(""), ValueError, "server_id"),
        ("guilds.fetch cache", lambda: bot.guilds.fetch("1", cache="yes"), TypeError, "cache"),
        ("guilds.fetch_all cache", lambda: bot.guilds.fetch_all(cache=1), TypeError, "cache"),
        ("channels.fetch", lambda: bot.channels.fetch(3), TypeError, "channel_id"),
        ("channels.fetch empty", lambda: bot.channels.fetch(""), ValueError, "channel_id"),
        ("channels.fetch_for_guild", lambda: bot.channels.fetch_for_guild(None), TypeError, "server_id"),
        ("members.fetch server", lambda: bot.members.fetch(None, "u"), TypeError, "server_id"),
        ("members.fetch user", lambda: bot.members.fetch("s", ""), ValueError, "user_id"),
        ("voice.join", lambda: bot.voice.join(None, media=False), TypeError, "channel_id"),
        ("voice.join empty", lambda: bot.voice.join("", media=False), ValueError, "channel_id"),
        ("voice.join timeout", lambda: bot.voice.join(voice_id, timeout=0, media=False), ValueError, "timeout"),
        ("Channel.send", lambda: channel.send(42), TypeError, "options"),
        ("Channel.send content", lambda: channel.send(content=["x"]), TypeError, "content"),
        ("Guild.fetch_channels via fetch_for_guild", lambda: bot.channels.fetch_for_guild(""), ValueError,
         "server_id"),
        ("EmbedBuilder color", lambda: EmbedBuilder().set_color("#zzzzzz"), ValueError, "color"),
        ("guild.roles.fetch", lambda: guild.roles.fetch(None), TypeError, "role_id"),
        ("guild.roles.fetch cache", lambda: guild.roles.fetch("1", cache=None), TypeError, "cache"),
        ("guild.invites.create", lambda: guild.invites.create(5), TypeError, "channel_id"),
        ("guild.invites.revoke", lambda: guild.invites.revoke(""), ValueError, "code"),
    ]


def test_bad_arguments_raise_naming_the_argument_before_any_io(world, emulator, bot):
    bot.channels.fetch_for_guild(world.server["publicId"])
    message = bot.send_message(world.general["publicId"], "a message to reply to")
    cases = _cases(bot, world) + [
        ("Message.reply", lambda: message.reply(42), TypeError, "options"),
        ("Message.reply content", lambda: message.reply(content=3), TypeError, "content"),
        ("Message.edit", lambda: message.edit(None), TypeError, "content"),
        ("Message.react", lambda: message.react(""), ValueError, "emoji"),
    ]
    emulator.clear_requests()
    emits_before = len(emulator.emits())
    failures = []
    for label, call, exc_type, name in cases:
        try:
            call()
        except exc_type as exc:
            if name not in str(exc):
                failures.append(f"{label}: message does not name {name!r}: {exc}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
        else:
            failures.append(f"{label}: no error")
    assert failures == []
    assert emulator.requests() == []
    assert len(emulator.emits()) == emits_before
    assert bot.is_connected


BAD_IDS = ["../servers", "a/b", "x?y=1", "h#frag", "sp ace", "..", "%2F"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_ids_are_encoded_and_cannot_reach_another_route(world, emulator, bot, bad):
    server_id = world.server["publicId"]
    calls = {
        "/channels/": lambda: bot.channels.fetch(bad),
        "/servers/": lambda: bot.guilds.fetch(bad),
        "/servers/" + server_id + "/members/": lambda: bot.members.fetch(server_id, bad),
        "/channels/dm/": lambda: bot.create_dm(bad),
        "/chat/": lambda: bot.search_messages(bad, "q"),
    }
    for prefix, call in calls.items():
        emulator.clear_requests()
        with pytest.raises(Exception) as info:  # 400/403/404 from the service, never a success elsewhere
            call()
        assert getattr(info.value, "status", None) in (400, 403, 404), (prefix, info.value)
        requests = emulator.requests()
        assert len(requests) == 1, requests
        path = requests[0]["path"]
        assert path.startswith(prefix), (prefix, path)
        rest = path[len(prefix):]
        assert "/" not in rest.removesuffix("/search") and "?" not in path and "#" not in path and " " not in path
        assert requests[0]["query"] in ("", "q=q"), requests[0]


def _check_cases(cases: list[tuple[str, Callable[[], Any], type[BaseException], str]]) -> list[str]:
    failures = []
    for label, call, exc_type, name in cases:
        try:
            call()
        except exc_type as exc:
            if name not in str(exc):
                failures.append(f"{label}: message does not name {name!r}: {exc}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(f"{label}: {type(exc).__name__}: {exc}")
        else:
            failures.append(f"{label}: no error")
    return failures


def test_more_bad_arguments_raise_naming_the_argument_before_any_io(world, emulator, bot, human):
    """The methods the first table missed: users, guilds.create (as a human), once, members.edit, invites."""
    server_id, user_id = world.server["publicId"], world.human["publicId"]
    guild = bot.guilds.cache[server_id]
    human_guilds = human.guilds
    cases = [
        ("users.fetch", lambda: bot.users.fetch(None), TypeError, "user_id"),
        ("users.fetch int", lambda: bot.users.fetch(42), TypeError, "user_id"),
        ("users.fetch empty", lambda: bot.users.fetch(""), ValueError, "user_id"),
        ("users.fetch cache", lambda: bot.users.fetch(user_id, cache="yes"), TypeError, "cache"),
        ("guilds.create name", lambda: human_guilds.create(None), TypeError, "name"),
        ("guilds.create empty name", lambda: human_guilds.create(""), ValueError, "name"),
        ("guilds.create icon_url", lambda: human_guilds.create("x", icon_url=5), TypeError, "icon_url"),
        ("guilds.create by a bot", lambda: bot.guilds.create("x"), PermissionError, "Bots cannot create servers."),
        ("guilds.create by a bot, bad name", lambda: bot.guilds.create(None), PermissionError, "Bots"),
        ("once event", lambda: bot.once(None, print), TypeError, "event"),
        ("once empty event", lambda: bot.once("", print), TypeError, "event"),
        ("once event int", lambda: bot.once(3), TypeError, "event"),
        ("members.edit server_id", lambda: bot.members.edit(None, user_id, nickname="n"), TypeError, "server_id"),
        ("members.edit user_id", lambda: bot.members.edit(server_id, "", nickname="n"), ValueError, "user_id"),
        ("members.edit roles str", lambda: bot.members.edit(server_id, user_id, roles="admin"), TypeError, "roles"),
        ("members.edit roles dict", lambda: bot.members.edit(server_id, user_id, roles={"a": 1}), TypeError,
         "roles"),
        ("members.edit role entry", lambda: bot.members.edit(server_id, user_id, roles=[None]), TypeError, "roles"),
        ("members.edit empty role", lambda: bot.members.edit(server_id, user_id, roles=[""]), ValueError, "roles"),
        ("members.edit nickname", lambda: bot.members.edit(server_id, user_id, nickname=5), TypeError, "nickname"),
        ("members.edit nickname list", lambda: bot.members.edit(server_id, user_id, nickname=["n"]), TypeError,
         "nickname"),
        ("members.edit nothing", lambda: bot.members.edit(server_id, user_id), ValueError, "roles or nickname"),
        ("invites.revoke None", lambda: guild.invites.revoke(None), TypeError, "code"),
        ("invites.revoke object", lambda: guild.invites.revoke(object()), TypeError, "code"),
        ("invites.revoke code attr", lambda: guild.invites.revoke(type("I", (), {"code": 7})()), TypeError,
         "code"),
    ]
    emulator.clear_requests()
    emits_before = len(emulator.emits())
    listeners_before = len(bot.listeners("ready"))
    assert _check_cases(cases) == []
    assert emulator.requests() == []
    assert len(emulator.emits()) == emits_before
    assert len(bot.listeners("ready")) == listeners_before  # no half-registered once()
    assert server_id in human.guilds.cache and len(human.guilds.cache) == 1  # nothing created


def test_get_or_fetch_never_raises_and_bad_ids_send_nothing(world, emulator, bot):
    """Spec: guilds.getOrFetch never rejects; its docstring: None on any failure, a bad id included."""
    emulator.clear_requests()
    for bad in (None, "", 42, ["x"], b"id"):
        assert bot.guilds.get_or_fetch(bad) is None, bad
    assert emulator.requests() == []  # a bad id is refused before any I/O
    cached = bot.guilds.cache[world.server["publicId"]]
    assert bot.guilds.get_or_fetch(world.server["publicId"]) is cached
    assert emulator.requests() == []  # cached: no request
    assert bot.guilds.get_or_fetch("404404404") is None  # a service failure: None too, one request
    assert len(emulator.requests()) == 1


def test_voice_connection_state_setters_reject_non_bools_before_sending(world, emulator, bot):
    voice_id = next(c["publicId"] for c in world.channels if c["type"] == "VOICE")
    connection = bot.voice.join(voice_id, timeout=5, media=False)
    cases = []
    for setter in ("muted", "deafened", "speaking"):
        method = getattr(connection, f"set_{setter}")
        for bad in (None, 1, 0, "true", "", [True]):
            cases.append((f"set_{setter}({bad!r})", lambda m=method, b=bad: m(b), TypeError, setter))
    emulator.clear_requests()
    emits_before = len(emulator.emits())
    assert _check_cases(cases) == []
    assert len(emulator.emits()) == emits_before
    assert emulator.requests() == []
    assert connection.connected
    users = emulator.voice_users(voice_id)
    assert [(u["muted"], u["deafened"], u["speaking"]) for u in users] == [(False, False, False)]
