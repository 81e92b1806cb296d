"""History, pins, reactions, server settings, audit log, members, bans, profiles, emojis and
webhooks from the client's side: real Clients logged in to the emulator over real HTTP and
socket.io; requests read from the emulator's journal; events seen by real listeners."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from service_client import (
    AuditLogEntry,
    Ban,
    Client,
    Emoji,
    Guild,
    Member,
    Message,
    ServiceAPIError,
    User,
    UserProfile,
    Webhook,
)

from .conftest import Recorder, gid, sid


def journal(emulator: Any, prefix: str = "") -> list[dict[str, Any]]:
    return [r for r in emulator.requests() if r["path"].startswith(prefix)]


# -- history and pins ---------------------------------------------------------------------------

def test_history_is_newest_first_in_pages_of_100_and_stops_at_limit(bot: Client, emulator: Any, world: Any) -> None:
    emulator.post_messages(gid(world), world.human["publicId"], [f"m{i} <&>" for i in range(250)])
    channel = bot.channels.fetch(gid(world))
    emulator.clear_requests()
    everything = list(channel.history())
    assert [m.content for m in everything] == [f"m{i} <&>" for i in reversed(range(250))]
    assert all(isinstance(m, Message) and m.channel_id == gid(world) for m in everything)
    asked = [r["query"] for r in journal(emulator, f"/chat/{gid(world)}")]
    assert len(asked) == 3 and asked[0] == "limit=100"
    assert asked[1] == f"limit=100&before={everything[99].id}" and asked[2] == f"limit=100&before={everything[199].id}"

    emulator.clear_requests()
    some = channel.history(limit=120)
    assert journal(emulator) == []                      # lazy: nothing asked before iterating
    assert [m.id for m in some] == [m.id for m in everything[:120]]
    assert [r["query"] for r in journal(emulator)] == ["limit=100", f"limit=20&before={everything[99].id}"]

    older = list(channel.history(limit=5, before=everything[247]))
    assert [m.content for m in older] == ["m1 <&>", "m0 <&>"]
    assert list(channel.history(before=everything[0].id, limit=1))[0].id == everything[1].id


def test_history_edge_cases_and_bad_arguments(bot: Client, emulator: Any, world: Any) -> None:
    channel = bot.channels.fetch(gid(world))
    emulator.clear_requests()
    assert list(channel.history(limit=0)) == []
    for bad, exc in ((-1, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(exc, match="limit"):
            channel.history(limit=bad)
    with pytest.raises(TypeError, match="before"):
        channel.history(before=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="before"):
        channel.history(before="")
    assert journal(emulator) == []
    assert list(channel.history()) == []               # an empty channel: one request
    assert len(journal(emulator)) == 1
    emulator.post_messages(gid(world), world.human["publicId"], [f"x{i}" for i in range(100)])
    emulator.clear_requests()
    assert len(list(channel.history())) == 100          # a full last page: one more request finds nothing
    assert len(journal(emulator)) == 2


def test_history_of_a_channel_the_bot_cannot_see(bot: Client, emulator: Any, world: Any) -> None:
    other = emulator.create_server("private", world.human["publicId"], channels=[{"name": "hidden"}])
    hidden = other["channels"][0]["publicId"]
    emulator.post_message(hidden, world.human["publicId"], "secret")
    from service_client.models import Channel

    channel = Channel(bot, {"publicId": hidden, "name": "hidden", "type": "TEXT"})
    with pytest.raises(ServiceAPIError) as info:
        next(channel.history())
    assert info.value.status == 403 and "secret" not in info.value.body
    with pytest.raises(ServiceAPIError):
        channel.pins()


def test_pin_unpin_pins_and_the_message_pin_event(bot: Client, human: Client, emulator: Any, world: Any) -> None:
    pins = Recorder(bot, "message_pin")
    posted = emulator.post_message(gid(world), world.bot["publicId"], "pin me")["message"]
    message = next(human.channels.fetch(gid(world)).history(limit=1))
    assert message.id == posted["publicId"]
    message.pin()
    assert pins.get() == {"messagePublicId": message.id, "channelPublicId": gid(world), "pinned": True}
    listed = bot.channels.fetch(gid(world)).pins()
    assert [m.id for m in listed] == [message.id] and listed[0].pinned and listed[0].content == "pin me"
    message.pin()                                       # already pinned: nothing changes, no event
    message.unpin()
    assert pins.get()["pinned"] is False
    assert bot.channels.fetch(gid(world)).pins() == []
    own = next(bot.channels.fetch(gid(world)).history(limit=1))
    with pytest.raises(ServiceAPIError) as info:        # the bot lacks PIN_MESSAGE
        own.pin()
    assert info.value.status == 403
    actions = [e["actionType"] for e in emulator.audit_log(sid(world))]
    assert actions == ["MESSAGE_UNPIN", "MESSAGE_PIN", "MESSAGE_PIN"]     # every accepted request is logged


def test_reactions_for_keeps_the_matching_group(bot: Client, emulator: Any, world: Any) -> None:
    posted = emulator.post_message(gid(world), world.human["publicId"], "react")["message"]
    emulator.react(posted["publicId"], world.human["publicId"], "\U0001F44D")
    emulator.react(posted["publicId"], world.bot["publicId"], "\U0001F44D")
    emulator.react(posted["publicId"], world.bot["publicId"], "x")
    message = next(bot.channels.fetch(gid(world)).history(limit=1))
    users = message.reactions_for("\U0001F44D")
    assert [u.id for u in users] == [world.human["publicId"], world.bot["publicId"]]
    assert users[1] is bot.user and bot.users.cache[world.human["publicId"]] is users[0]
    assert [u.id for u in message.reactions_for("x", cache=False)] == [world.bot["publicId"]]
    assert message.reactions_for("\U0001F389") == []
    query = journal(emulator, f"/chat/{gid(world)}/reactions/")[-1]["query"]
    assert query == "emoji=%F0%9F%8E%89"
    with pytest.raises(ValueError):
        message.reactions_for("")


# -- the server -----------------------------------------------------------------------------------

def test_guild_edit_reaches_every_cache_through_guild_update(bot: Client, human: Client, world: Any) -> None:
    updates = Recorder(bot, "guild_update")
    guild = human.guilds.cache[sid(world)]
    guild.edit(name="Renamed", image_url="http://img/icon.png")
    seen = updates.get()
    assert isinstance(seen, Guild) and seen is bot.guilds.cache[sid(world)]
    assert seen.name == "Renamed" and seen.icon == "http://img/icon.png"
    guild.edit(image_url=None)
    assert updates.get().icon is None
    with pytest.raises(ServiceAPIError) as info:
        bot.guilds.cache[sid(world)].edit(name="mine")  # no MANAGE_SERVER
    assert info.value.status == 403
    with pytest.raises(ValueError):
        guild.edit()
    with pytest.raises(TypeError):
        guild.edit(image_url=5)  # type: ignore[arg-type]


def test_guild_leave_and_delete_evict_and_announce(bot: Client, human: Client, emulator: Any, world: Any) -> None:
    other = emulator.create_server("Other", world.human["publicId"])["server"]["publicId"]
    joined = Recorder(bot, "guild_create")
    emulator.add_member(other, world.bot["publicId"])
    assert joined.get().id == other
    gone = Recorder(bot, "guild_delete")
    left = Recorder(human, "guild_member_remove")
    with pytest.raises(ServiceAPIError) as info:
        bot.guilds.cache[other].delete()                # only the owner may
    assert info.value.status == 403
    bot.guilds.cache[other].leave()
    assert gone.get().id == other and other not in bot.guilds.cache
    assert bot.members.get(other, world.bot["publicId"]) is None
    removed = left.get()
    assert removed == {"serverPublicId": other, "memberPublicId": world.bot["publicId"]} or (
        isinstance(removed, Member) and removed.id == world.bot["publicId"])
    with pytest.raises(ServiceAPIError) as info:
        human.guilds.cache[other].leave()               # the owner cannot leave
    assert info.value.status == 400
    deleted = Recorder(human, "guild_delete")
    human.guilds.cache[other].delete()
    assert deleted.get().id == other and other not in human.guilds.cache


def test_vanity_notifications_boost_and_read(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    assert guild.vanity_code() is None
    emulator.set_vanity_code(sid(world), "test-srv")
    assert guild.vanity_code() == "test-srv"
    until = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=2)))
    guild.set_notifications(muted=True, mute_until=until, mentions_only=True)
    rows = emulator.snapshot()["tables"]["notification_settings"]
    assert rows == [[sid(world), world.bot["publicId"], 1, "2031-05-06T05:08:09.123Z", 1]]
    guild.set_notifications(mute_until=None)
    assert emulator.snapshot()["tables"]["notification_settings"][0][3] is None
    emulator.clear_requests()
    with pytest.raises(TypeError, match="timezone"):
        guild.set_notifications(mute_until=datetime(2031, 1, 1))
    with pytest.raises(TypeError):
        guild.set_notifications(muted="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        guild.set_notifications()
    assert journal(emulator) == []
    guild.boost()
    guild.mark_read()
    assert [(r["method"], r["path"], r["status"]) for r in journal(emulator)] == [
        ("POST", f"/servers/{sid(world)}/boost", 204), ("POST", f"/servers/{sid(world)}/read", 204)]


def test_audit_log_entries(bot: Client, human: Client, emulator: Any, world: Any) -> None:
    guild = human.guilds.cache[sid(world)]
    role = guild.roles.create("mods")
    guild.edit(name="Audited")
    carol = emulator.create_user("carol")["user"]["publicId"]
    emulator.add_member(sid(world), carol)
    human._connection.call("server:kick", {"serverPublicId": sid(world), "userPublicId": carol})
    entries = guild.audit_log()
    assert [e.action for e in entries] == ["MEMBER_KICK", "SERVER_UPDATE", "ROLE_CREATE"]
    kick = entries[0]
    assert isinstance(kick, AuditLogEntry) and kick.target_type == "USER" and kick.target_id == carol
    assert isinstance(kick.executor, User) and kick.executor.id == world.human["publicId"]
    assert kick.created_at is not None and kick.created_at.tzinfo is not None
    assert entries[1].details == {"name": "Audited"} and entries[2].target_id == role.id
    assert [e.action for e in guild.audit_log(limit=1)] == ["MEMBER_KICK"]
    assert [e.target_id for e in guild.audit_log(action="ROLE_CREATE")] == [role.id]
    assert journal(emulator, f"/servers/{sid(world)}/audit-logs")[-1]["query"] == "action=ROLE_CREATE"
    with pytest.raises(ValueError):
        guild.audit_log(limit=0)
    with pytest.raises(ServiceAPIError) as info:
        bot.guilds.cache[sid(world)].audit_log()        # no VIEW_AUDIT_LOG
    assert info.value.status == 403


def test_fetch_members_search_members_and_bans(bot: Client, human: Client, emulator: Any, world: Any) -> None:
    guild = human.guilds.cache[sid(world)]
    members = guild.fetch_members()
    assert {m.id for m in members} == {world.human["publicId"], world.bot["publicId"]}
    assert all(human.members.get(sid(world), m.id) is m for m in members)
    found = guild.search_members("ping")
    assert [m.id for m in found] == [world.bot["publicId"]] and found[0].user.username == "pingbot"
    assert found[0].user.bot is True and found[0].server_id == sid(world)
    assert human.members.get(sid(world), world.bot["publicId"]) is not found[0]   # partial: not cached
    assert guild.search_members("nobody-here") == []
    assert journal(emulator, f"/servers/{sid(world)}/members")[-1]["query"] == "search=nobody-here"
    with pytest.raises(ValueError):
        guild.search_members(" ")
    with pytest.raises(ServiceAPIError) as info:
        bot.guilds.cache[sid(world)].fetch_members()    # no VIEW_MEMBERS
    assert info.value.status == 403
    carol = emulator.create_user("carol")["user"]
    emulator.ban(sid(world), carol["publicId"], reason="spam")
    bans = guild.fetch_bans()
    assert len(bans) == 1 and isinstance(bans[0], Ban)
    assert bans[0].user.id == carol["publicId"] and bans[0].reason == "spam" and bans[0].created_at is not None
    assert human.users.cache[carol["publicId"]] is bans[0].user
    with pytest.raises(ServiceAPIError):
        bot.guilds.cache[sid(world)].fetch_bans()


# -- users ----------------------------------------------------------------------------------------

def test_fetch_profile_and_mutual_servers(bot: Client, emulator: Any, world: Any) -> None:
    emulator.set_profile(world.human["publicId"], bio="hello", bannerColor="#112233", followersCount=7)
    profile = bot.users.fetch_profile(world.human["publicId"])
    assert isinstance(profile, UserProfile) and profile.id == world.human["publicId"]
    assert profile.user is bot.users.cache[world.human["publicId"]] and profile.user.username == "alice"
    assert (profile.bio, profile.banner, profile.banner_color, profile.followers_count,
            profile.following_count) == ("hello", None, "#112233", 7, 0)
    uncached = bot.users.fetch_profile(world.human["publicId"], cache=False)
    assert uncached.user is not bot.users.cache[world.human["publicId"]]
    other = emulator.create_server("Other", world.human["publicId"])["server"]["publicId"]
    assert other not in bot.guilds.cache
    mutual = bot.users.mutual_servers(world.human["publicId"])
    assert [(g.id, g.name) for g in mutual] == [(sid(world), "Test Server")]
    assert isinstance(mutual[0], Guild) and mutual[0] is not bot.guilds.cache[sid(world)]
    with pytest.raises(ServiceAPIError) as info:
        bot.users.fetch_profile("unknown")
    assert info.value.status == 404


# -- emojis ---------------------------------------------------------------------------------------

def test_emojis_create_list_delete_with_name_validation(bot: Client, human: Client, emulator: Any,
                                                        world: Any) -> None:
    emojis = human.guilds.cache[sid(world)].emojis
    emulator.clear_requests()
    for bad in ("a", "x" * 33, "with space", "dash-name", "\u00e9t\u00e9", ""):
        with pytest.raises(ValueError, match="name"):
            emojis.create(bad, "http://img/e.png")
    with pytest.raises(TypeError):
        emojis.create(5, "http://img/e.png")  # type: ignore[arg-type]
    assert journal(emulator) == []
    party = emojis.create("party_time", "http://img/p.gif", animated=True)
    assert isinstance(party, Emoji) and str(party) == ":party_time:" and party.animated
    assert party.url == "http://img/p.gif" and party.server_id == sid(world) and party.guild is not None
    assert emojis.cache[party.id] is party
    assert journal(emulator)[-1]["status"] == 201
    with pytest.raises(ServiceAPIError) as info:
        emojis.create("party_time", "http://img/other.png")
    assert info.value.status == 409
    listed = bot.guilds.cache[sid(world)].emojis.fetch_all()
    assert [(e.id, e.name) for e in listed] == [(party.id, "party_time")]
    assert bot.guilds.cache[sid(world)].emojis.cache[party.id].name == "party_time"
    with pytest.raises(ServiceAPIError) as info:
        listed[0].delete()                                # no MANAGE_SERVER
    assert info.value.status == 403
    party.delete()
    assert party.id not in emojis.cache and emulator.emojis(sid(world)) == []


# -- webhooks -------------------------------------------------------------------------------------

def test_webhook_lifecycle_and_execution_without_authorization(bot: Client, human: Client, emulator: Any,
                                                                world: Any) -> None:
    messages = Recorder(bot, "message_create")
    channel = human.channels.fetch(gid(world))
    hook = channel.create_webhook("Alerts", avatar_url="http://img/a.png")
    assert isinstance(hook, Webhook) and hook.token is not None and repr(hook.token) == "***"
    assert hook.channel_id == gid(world) and hook.avatar_url == "http://img/a.png"
    assert "token" not in hook.raw and hook.token.get() not in repr(hook)
    emulator.clear_requests()
    message_id = hook.execute("deploy <done> & dusted", username="CI")
    seen = messages.get()
    assert isinstance(seen, Message) and seen.id == message_id and seen.content == "deploy <done> & dusted"
    assert seen.author is not None and seen.author.id == hook.id and seen.author.bot and seen.author.username == "CI"
    entry = journal(emulator, "/webhooks/")[0]
    assert entry["path"] == f"/webhooks/{hook.id}/***" and entry["status"] == 200
    assert "authorization" not in entry["headers"] and entry["headers"]["x-service-sdk"] == "true"
    hook.execute(embeds=[{"title": "only an embed"}])
    assert messages.get().embeds == [{"title": "only an embed"}]

    listed = channel.webhooks()
    assert [(w.id, w.name, w.token) for w in listed] == [(hook.id, "Alerts", None)]
    with pytest.raises(ValueError, match="token"):
        listed[0].execute("no token")
    hook = hook.edit(name="Renamed", avatar_url=None)
    assert (hook.name, hook.avatar_url) == ("Renamed", None)
    assert emulator.webhooks(gid(world))[0]["name"] == "Renamed"
    with pytest.raises(ServiceAPIError) as info:
        bot.channels.fetch(gid(world)).webhooks()        # no MANAGE_CHANNELS
    assert info.value.status == 403
    for bad, exc in (({}, ValueError), ({"content": ""}, ValueError), ({"content": 5}, TypeError),
                     ({"content": "x", "username": ""}, ValueError), ({"content": "x", "embeds": "no"}, TypeError)):
        with pytest.raises(exc):
            hook.execute(**bad)
    hook.delete()
    with pytest.raises(ServiceAPIError) as info:
        hook.execute("too late")
    assert info.value.status == 404 and info.value.path == f"/webhooks/{hook.id}/***"
    assert emulator.webhooks(gid(world)) == []


def test_webhook_from_token_executes_before_login(make_client: Any, human: Client, emulator: Any,
                                                  world: Any) -> None:
    hook = human.channels.fetch(gid(world)).create_webhook("Hook")
    assert hook.token is not None
    fresh = make_client()                                # never logged in
    stored = Webhook.from_token(fresh, hook.id, hook.token.get() or "", channel_id=gid(world))
    message_id = stored.execute("from a script")
    assert emulator.messages(gid(world))[-1]["publicId"] == message_id
    with pytest.raises(ValueError):
        Webhook.from_token(fresh, hook.id, "")


def test_webhook_execution_goes_through_buckets_and_retries(human: Client, emulator: Any, world: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    hook = human.channels.fetch(gid(world)).create_webhook("Retry")
    blocked: list[str] = []
    session = human._rest
    real_block = session._block_bucket
    monkeypatch.setattr(session, "_block_bucket", lambda key, until: (blocked.append(key), real_block(key, until)))
    emulator.add_fault("POST", "/webhooks/*", status=429, retry_after="0", count=1)
    emulator.add_fault("POST", "/webhooks/*", status=503, retry_after="0", count=1)
    emulator.clear_requests()
    assert hook.execute("third time lucky")
    assert [r["status"] for r in journal(emulator, "/webhooks/")] == [429, 503, 200]
    assert blocked == [f"POST:webhooks/{hook.id}"]      # the 429 blocked the webhook's bucket, token-free
    emulator.add_fault("POST", "/webhooks/*", status=500, count=1)
    with pytest.raises(ServiceAPIError) as info:
        hook.execute("boom")
    assert info.value.status == 500 and info.value.path == f"/webhooks/{hook.id}/***"
