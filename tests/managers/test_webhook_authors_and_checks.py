"""Webhook message authors stay per message and out of ``client.users``; ``Webhook.edit`` returns a
new Webhook; names and role permissions are checked at the call site; ``cache=`` on emoji and
role writes; malformed list items are skipped; a non-object profile answer is a ServiceAPIError.
Real Clients against the emulator over real HTTP and socket.io."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from service_client import Client, Guild, Message, Permissions, ServiceAPIError, Webhook

from .conftest import Recorder, gid, sid

# -- webhook authors ---------------------------------------------------------------------------------

def test_webhook_messages_keep_their_own_author_names_and_stay_out_of_users(
        bot: Client, human: Client, world: Any) -> None:
    hook = human.channels.fetch(gid(world)).create_webhook("Hook")
    bot_messages, human_messages = Recorder(bot, "message_create"), Recorder(human, "message_create")
    hook.execute("first", username="Alpha")
    hook.execute("second", username="Beta")
    for messages, client in ((bot_messages, bot), (human_messages, human)):
        first, second = messages.get(), messages.get()
        assert isinstance(first, Message) and (first.content, second.content) == ("first", "second")
        assert first.raw["webhookId"] == hook.id
        assert first.author is not None and second.author is not None
        assert (first.author.id, second.author.id) == (hook.id, hook.id)
        assert (first.author.username, second.author.username) == ("Alpha", "Beta")
        assert first.author is not second.author and first.author.bot
        assert hook.id not in client.users.cache
    # a user's message still shares the cached user
    says = human_messages
    bot.send_message(gid(world), "a user")
    mine = says.get()
    assert mine.author is human.users.cache[world.bot["publicId"]]


def test_webhook_messages_without_a_mark_from_a_known_webhook_are_not_cached(
        bot: Client, human: Client, emulator: Any, world: Any) -> None:
    hook = human.channels.fetch(gid(world)).create_webhook("Hook")
    assert hook.token is not None

    def raw_message(name: str) -> dict[str, Any]:    # what a service without the mark would send
        return {"publicId": f"9{len(name)}{name.encode().hex()}", "content": name, "channelPublicId": gid(world),
                "serverPublicId": sid(world), "createdAt": "2026-01-02T03:04:05.678Z",
                "author": {"publicId": hook.id, "name": name, "tag": "0000", "image": None, "isBot": True}}

    human_messages, bot_messages = Recorder(human, "message_create"), Recorder(bot, "message_create")
    assert human.user is not None and bot.user is not None
    emulator.emit("message:new", raw_message("Gamma"), to_user=human.user.id)
    seen = human_messages.get()
    assert seen.author.username == "Gamma" and hook.id not in human.users.cache    # the creator knows it

    # the bot has never met the webhook: an unmarked message caches its pseudo-author (the bot
    # cannot tell), until a Webhook of that id is built, which drops it
    emulator.emit("message:new", raw_message("Delta"), to_user=bot.user.id)
    assert bot_messages.get().author.username == "Delta" and hook.id in bot.users.cache
    Webhook.from_token(bot, hook.id, "not-the-token")
    assert hook.id not in bot.users.cache
    emulator.emit("message:new", raw_message("Epsilon"), to_user=bot.user.id)
    assert bot_messages.get().author.username == "Epsilon" and hook.id not in bot.users.cache


# -- Webhook.edit ---------------------------------------------------------------------------------------

def test_webhook_edit_returns_a_new_webhook_holding_the_token(bot: Client, human: Client, emulator: Any,
                                                              world: Any) -> None:
    hook = human.channels.fetch(gid(world)).create_webhook("Alerts", avatar_url="http://img/a.png")
    assert hook.token is not None and repr(hook.token) == "***"
    renamed = hook.edit(name="Renamed", avatar_url=None)
    assert isinstance(renamed, Webhook) and renamed is not hook
    assert (renamed.id, renamed.name, renamed.avatar_url, renamed.channel_id) == (hook.id, "Renamed", None, gid(world))
    assert (hook.name, hook.avatar_url) == ("Alerts", "http://img/a.png")    # left as it was
    assert renamed.token is not None and renamed.token.get() == hook.token.get() and repr(renamed.token) == "***"
    assert emulator.webhooks(gid(world))[0]["name"] == "Renamed"
    messages = Recorder(bot, "message_create")
    renamed.execute("still works")
    assert messages.get().author.username == "Renamed"
    listed = human.channels.fetch(gid(world)).webhooks()[0]
    assert listed.edit(name="Again").token is None                       # no token in, none out


# -- call-site checks ----------------------------------------------------------------------------------

def test_whitespace_names_and_stray_permission_bits_are_refused_before_any_request(
        human: Client, emulator: Any, world: Any) -> None:
    guild = human.guilds.cache[sid(world)]
    channel = human.channels.fetch(gid(world))
    category = guild.categories.fetch()[0]
    role = guild.roles.create("Mods")
    emulator.clear_requests()
    for call in (
        lambda name: channel.edit(name=name),
        lambda name: human.channels.create(sid(world), name),
        lambda name: guild.channels.create(name),
        lambda name: guild.categories.create(name),
        lambda name: category.edit(name=name),
        lambda name: guild.roles.create(name),
        lambda name: role.edit(name=name),
    ):
        for blank in ("", "   ", "\t\n"):
            with pytest.raises(ValueError, match="name"):
                call(blank)
        with pytest.raises(TypeError, match="name"):
            call(None)
    for bits in (1 << 25, (1 << 40) | 1, [Permissions.MANAGE_ROLES, 1 << 21]):
        with pytest.raises(ValueError, match="no permission"):
            guild.roles.create("Bits", permissions=bits)
        with pytest.raises(ValueError, match="no permission"):
            role.edit(permissions=bits)
    with pytest.raises(ValueError, match="permission"):
        guild.roles.create("Bits", permissions=-1)
    assert emulator.requests() == []
    assert guild.roles.create("All", permissions=Permissions.ALL).permissions == Permissions.ALL


def test_client_and_guild_channel_creation_share_the_private_keyword(human: Client, emulator: Any,
                                                                     world: Any) -> None:
    guild = human.guilds.cache[sid(world)]
    emulator.clear_requests()
    secret = human.channels.create(sid(world), "secret", private=True)
    public = human.channels.create(sid(world), "public")
    hidden = guild.channels.create("hidden", private=True)
    bodies = [r["body"] for r in emulator.requests() if r["path"] == f"/servers/{sid(world)}/channels"]
    assert bodies == [{"name": "secret", "type": "TEXT", "isPrivate": True}, {"name": "public", "type": "TEXT"},
                      {"name": "hidden", "type": "TEXT", "isPrivate": True}]
    assert (secret.is_private, public.is_private, hidden.is_private) == (True, False, True)
    with pytest.raises(TypeError):
        human.channels.create(sid(world), "x", is_private=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="private"):
        human.channels.create(sid(world), "x", private="yes")  # type: ignore[arg-type]


# -- cache= on emoji and role writes -------------------------------------------------------------------

def test_emoji_and_role_writes_honour_cache_false(human: Client, emulator: Any, world: Any) -> None:
    guild = human.guilds.cache[sid(world)]
    emoji = guild.emojis.create("quiet", "http://img/q.png", cache=False)
    assert emoji.name == "quiet" and emoji.id not in guild.emojis.cache
    assert [e["name"] for e in emulator.emojis(sid(world))] == ["quiet"]
    kept = guild.emojis.create("kept", "http://img/k.png")
    assert guild.emojis.cache[kept.id] is kept

    # role events refresh the cached server's roles; a Guild object outside the cache gets none,
    # so its role cache shows exactly what the calls themselves wrote
    detached = Guild(human, emulator.server(sid(world)))
    assert detached is not guild and len(detached.roles.cache) == 0
    role = detached.roles.create("Quiet", cache=False)
    assert role.name == "Quiet" and len(detached.roles.cache) == 0
    cached = detached.roles.create("Loud")
    assert dict(detached.roles.cache) == {cached.id: cached}
    edited = detached.roles.edit(cached.id, name="Louder", cache=False)
    assert edited.name == "Louder" and dict(detached.roles.cache) == {cached.id: cached}
    renamed = detached.roles.edit(role.id, name="Quieter")
    assert dict(detached.roles.cache) == {cached.id: cached, role.id: renamed}
    for bad in ("no", 1, None):
        with pytest.raises(TypeError, match="cache"):
            guild.emojis.create("bad_cache", "http://img/b.png", cache=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="cache"):
            guild.roles.create("Bad", cache=bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="cache"):
            guild.roles.edit(cached.id, name="Bad", cache=bad)  # type: ignore[arg-type]


# -- malformed list items, profile answers --------------------------------------------------------------

def test_one_malformed_record_does_not_abort_a_listing(human: Client, emulator: Any, world: Any,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.managers")
    guild = human.guilds.cache[sid(world)]
    good_member = {"publicId": "M1", "userId": "U1", "serverPublicId": sid(world),
                   "user": {"publicId": "U1", "name": "uma", "tag": "0001"}, "roles": []}
    answers = {
        "emojis": {"emojis": [{"publicId": "E1", "name": "ok", "url": "http://e"}, 7, {"name": "no_id"}]},
        "roles": {"roles": ["R0", {"publicId": "R1", "name": "ok"}, {"name": "no id"}]},
        "members": {"members": [{"user": {"name": "no id"}}, good_member, None]},
    }
    for what, body in answers.items():
        emulator.add_fault("GET", f"/servers/{sid(world)}/{what}", status=200, body=json.dumps(body),
                           content_type="application/json")
    assert [(e.id, e.name) for e in guild.emojis.fetch_all()] == [("E1", "ok")]
    assert [(r.id, r.name) for r in guild.roles.fetch_all()] == [("R1", "ok")]
    assert [(m.id, m.server_id) for m in guild.fetch_members()] == [("U1", sid(world))]
    assert "E1" in guild.emojis.cache and "R1" in guild.roles.cache and human.members.get(sid(world), "U1")
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped")]
    assert len(skipped) == 6 and all(sid(world) in text for text in skipped)


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "3", ""])
def test_a_profile_answer_that_is_not_an_object_is_a_service_api_error(
        bot: Client, emulator: Any, world: Any, body: str) -> None:
    uid = world.human["publicId"]
    emulator.add_fault("GET", f"/users/{uid}/profile", status=200, body=body, content_type="application/json")
    with pytest.raises(ServiceAPIError, match="not a JSON object") as info:
        bot.users.fetch_profile(uid)
    assert info.value.status == 200 and info.value.path == f"/users/{uid}/profile"
    assert info.value.data == (json.loads(body) if body else None)
    assert bot.users.fetch_profile(uid).user.id == uid                    # the next answer is fine
