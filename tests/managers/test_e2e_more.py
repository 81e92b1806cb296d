"""More end-to-end cases for issue 4 (spec: Manager convention, Managers, Resources).

A real Client over real HTTP and socket.io against the in-process emulator;
requests are counted from the emulator's journal. Covers what test_e2e.py does
not: ``cache=False`` on empty caches, ``fetch*`` never purging, ``resolve``,
the ``fetch_all`` member preload (skipped without ``client.user``, concurrent),
``get_or_fetch`` on a miss, access errors, ``guilds.create`` for a user,
``users.fetch``, ``Guild.fetch_channels`` / ``member_count``, ``User.tag_string``,
``Channel.delete``, the message/reaction/typing events, and malformed payloads.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client
from service_client.errors import ServiceAPIError
from service_client.models import Channel, Guild, Member, Message, Permissions, User

from .conftest import TIMEOUT, Recorder, paths, sid

UNKNOWN = "999999999999999999"


def channel_id(world: Any, name: str) -> str:
    return str(next(c for c in world.channels if c["name"] == name)["publicId"])


def max_overlap(records: list[dict[str, Any]]) -> int:
    """The highest number of journal records in flight at once (from startedAt / endedAt)."""
    edges = sorted([(r["startedAt"], 1) for r in records] + [(r["endedAt"], -1) for r in records],
                   key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


# -- cache=False writes nothing, starting from empty caches -------------------------------------

def test_guilds_fetch_cache_false_on_an_uncached_server(bot: Client, emulator: Any, world: Any) -> None:
    bot.guilds.cache.pop(sid(world))
    emulator.clear_requests()
    guild = bot.guilds.fetch(sid(world), cache=False)
    assert isinstance(guild, Guild) and guild.id == sid(world) and guild.name == "Test Server"
    assert paths(emulator) == [f"GET /servers/{sid(world)}"]
    assert sid(world) not in bot.guilds.cache


def test_guilds_fetch_all_cache_false_on_empty_caches(bot: Client, emulator: Any, world: Any) -> None:
    bot.guilds.cache.clear()
    bot.members.cache.clear()
    emulator.clear_requests()
    guilds = bot.guilds.fetch_all(cache=False)
    assert [g.id for g in guilds] == [sid(world)]
    assert paths(emulator) == ["GET /servers"]  # no member preload
    assert len(bot.guilds.cache) == 0 and len(bot.members.cache) == 0


def test_channels_fetch_cache_false(bot: Client, emulator: Any, world: Any) -> None:
    cid = world.general["publicId"]
    assert len(bot.channels.cache) == 0
    emulator.clear_requests()
    channel = bot.channels.fetch(cid, cache=False)
    assert isinstance(channel, Channel) and channel.id == cid and channel.name == "general"
    assert len(emulator.requests()) == 1
    assert len(bot.channels.cache) == 0


def test_channels_fetch_for_guild_cache_false(bot: Client, emulator: Any, world: Any) -> None:
    assert len(bot.channels.cache) == 0
    emulator.clear_requests()
    channels = bot.channels.fetch_for_guild(sid(world), cache=False)
    assert [c.name for c in channels] == ["general", "random", "voice"]
    assert all(c.server_id == sid(world) for c in channels)
    assert paths(emulator) == [f"GET /servers/{sid(world)}/categories"]
    assert len(bot.channels.cache) == 0 and len(bot.guilds.cache[sid(world)].channels) == 0


def test_members_fetch_cache_false_writes_neither_member_nor_user(bot: Client, emulator: Any, world: Any) -> None:
    alice_id = world.human["publicId"]
    assert bot.members.get(sid(world), alice_id) is None and alice_id not in bot.users.cache
    members_before = set(bot.members.cache)
    emulator.clear_requests()
    alice = bot.members.fetch(sid(world), alice_id, cache=False)
    assert isinstance(alice, Member) and alice.id == alice_id and alice.user.username == "alice"
    assert len(emulator.requests()) == 1
    assert set(bot.members.cache) == members_before
    assert alice_id not in bot.users.cache


def test_users_fetch_cache_false(bot: Client, emulator: Any, world: Any) -> None:
    alice_id = world.human["publicId"]
    assert alice_id not in bot.users.cache
    emulator.clear_requests()
    alice = bot.users.fetch(alice_id, cache=False)
    assert isinstance(alice, User) and alice.id == alice_id and alice.username == "alice"
    assert paths(emulator) == [f"GET /users/{alice_id}"]
    assert alice_id not in bot.users.cache


# -- fetch* never purges -------------------------------------------------------------------------

def test_fetch_for_guild_keeps_a_channel_deleted_on_the_service(bot: Client, human: Client, emulator: Any,
                                                                world: Any) -> None:
    random_id = channel_id(world, "random")
    updated = Recorder(bot, "guild_channels_update")
    before = bot.channels.fetch_for_guild(sid(world))
    assert random_id in {c.id for c in before}
    stale = bot.channels.cache[random_id]
    human.channels.fetch(random_id).delete()
    updated.get()  # the event's refresh evicts it ...
    assert random_id not in bot.channels.cache
    bot.channels.cache[random_id] = stale  # ... so put it back, as if the event had been missed
    emulator.clear_requests()
    after = bot.channels.fetch_for_guild(sid(world))
    # The bot's own requests: the human client caches the channel too, so its own listing
    # refresh for the deletion may still land in the journal now.
    mine = [f"{r['method']} {r['path']}" for r in emulator.requests() if r["userId"] == world.bot["publicId"]]
    assert mine == [f"GET /servers/{sid(world)}/categories"]
    assert random_id not in {c.id for c in after}
    assert random_id in bot.channels.cache  # stale, but fetch never purges
    assert {c.id for c in after} <= set(bot.channels.cache)


def test_fetch_all_keeps_a_server_absent_from_the_listing(bot: Client, emulator: Any, world: Any) -> None:
    bot_id = world.bot["publicId"]
    created = Recorder(bot, "guild_create")
    deleted = Recorder(bot, "guild_delete")
    other = emulator.create_server("other", world.human["publicId"])["server"]["publicId"]
    emulator.add_member(other, bot_id)
    stale = created.get()
    assert stale.id == other
    emulator.remove_member(other, bot_id)  # the bot leaves; the event evicts it
    assert deleted.get() is stale
    bot.guilds.cache[other] = stale  # as if the event had been missed: a stale entry
    emulator.clear_requests()
    guilds = bot.guilds.fetch_all()
    assert [g.id for g in guilds] == [sid(world)]
    assert sorted(paths(emulator)) == sorted(["GET /servers", f"GET /servers/{sid(world)}/members/{bot_id}"])
    assert bot.guilds.cache[other] is stale


# -- resolve() ------------------------------------------------------------------------------------

def test_resolve_ids_and_objects_without_any_request(bot: Client, emulator: Any, world: Any) -> None:
    channel = bot.channels.fetch(world.general["publicId"])
    alice = bot.members.fetch(sid(world), world.human["publicId"])
    guild = bot.guilds.cache[sid(world)]
    emulator.clear_requests()
    assert bot.guilds.resolve(sid(world)) is guild
    assert bot.guilds.resolve(guild) is guild
    assert bot.guilds.resolve(UNKNOWN) is None
    stranger = Guild(bot, {"publicId": UNKNOWN, "name": "elsewhere"})
    assert bot.guilds.resolve(stranger) is stranger  # an uncached model is returned as is
    copy = Guild(bot, {"publicId": sid(world), "name": "copy"})
    assert bot.guilds.resolve(copy) is guild  # the cached entry wins
    assert bot.channels.resolve(channel.id) is channel and bot.channels.resolve(channel) is channel
    assert bot.channels.resolve(UNKNOWN) is None
    assert bot.users.resolve(alice.user.id) is alice.user and bot.users.resolve(alice.user) is alice.user
    assert bot.members.resolve(alice) is alice
    assert bot.members.resolve((sid(world), alice.id)) is alice
    assert bot.members.resolve(sid(world), alice.id) is alice
    assert bot.members.resolve(sid(world), UNKNOWN) is None
    assert emulator.requests() == []


# -- fetch_all member preload ---------------------------------------------------------------------

def test_fetch_all_skips_the_member_preload_without_client_user(bot: Client, emulator: Any, world: Any) -> None:
    user = bot.user
    bot.members.cache.clear()
    bot.guilds.cache.clear()
    emulator.clear_requests()
    bot.user = None
    try:
        guilds = bot.guilds.fetch_all()
    finally:
        bot.user = user
    assert [g.id for g in guilds] == [sid(world)]
    assert paths(emulator) == ["GET /servers"]
    assert len(emulator.requests()) == 1
    assert set(bot.guilds.cache) == {sid(world)} and len(bot.members.cache) == 0


def test_fetch_all_member_fetches_overlap(emulator: Any, world: Any, make_client: Callable[..., Client]) -> None:
    bot_id = world.bot["publicId"]
    extra = [emulator.create_server(f"extra{i}", world.human["publicId"])["server"]["publicId"] for i in range(4)]
    for server_id in extra:
        emulator.add_member(server_id, bot_id)
    client = make_client()
    client.login(world.bot_token, timeout=15)
    client.members.cache.clear()
    emulator.add_fault("GET", "/servers/*/members/*", delay_ms=200, count=None)
    emulator.clear_requests()
    guilds = client.guilds.fetch_all()
    assert len(guilds) == 5
    member_gets = [r for r in emulator.requests() if r["method"] == "GET" and "/members/" in r["path"]]
    assert len(member_gets) == 5 and all(r["status"] == 200 for r in member_gets)
    assert max_overlap(member_gets) > 1, "the bot-member fetches ran one after another"
    assert set(client.members.cache) == {(s, bot_id) for s in [sid(world), *extra]}


# -- get_or_fetch --------------------------------------------------------------------------------

def test_get_or_fetch_a_server_not_cached(bot: Client, emulator: Any, world: Any) -> None:
    bot.guilds.cache.pop(sid(world))
    emulator.clear_requests()
    guild = bot.guilds.get_or_fetch(sid(world))
    assert isinstance(guild, Guild) and guild.name == "Test Server"
    assert paths(emulator) == [f"GET /servers/{sid(world)}"]
    assert bot.guilds.cache[sid(world)] is guild
    assert bot.guilds.get_or_fetch(sid(world)) is guild
    assert len(emulator.requests()) == 1
    assert bot.guilds.get_or_fetch(UNKNOWN) is None  # no raise
    hidden = emulator.create_server("hidden", world.human["publicId"])["server"]["publicId"]
    assert bot.guilds.get_or_fetch(hidden) is None  # exists, not visible to the bot
    assert UNKNOWN not in bot.guilds.cache and hidden not in bot.guilds.cache


# -- access errors -------------------------------------------------------------------------------

def test_channels_fetch_in_a_server_the_bot_is_not_in(bot: Client, emulator: Any, world: Any) -> None:
    created = emulator.create_server("private", world.human["publicId"], channels=[{"name": "secret", "type": "TEXT"}])
    secret = created["channels"][0]["publicId"]
    emulator.clear_requests()
    with pytest.raises(ServiceAPIError) as info:
        bot.channels.fetch(secret)
    assert info.value.status == 403
    assert str(info.value).startswith("API Error 403: ")
    assert paths(emulator) == [f"GET /channels/{secret}"]
    assert secret not in bot.channels.cache


# -- guilds.create for a user ---------------------------------------------------------------------

def test_guilds_create_refused_by_the_service_for_a_user(human: Client, emulator: Any) -> None:
    before = set(human.guilds.cache)
    emulator.clear_requests()
    with pytest.raises(ServiceAPIError) as info:
        human.guilds.create("   ")  # the service wants a non-blank name
    assert info.value.status == 400
    assert str(info.value).startswith("API Error 400: ")
    assert paths(emulator) == ["POST /servers"]
    assert set(human.guilds.cache) == before


def test_guilds_create_for_a_bot_without_user_is_refused_by_the_service(bot: Client, emulator: Any) -> None:
    before = set(bot.guilds.cache)
    user = bot.user
    bot.user = None  # the local check cannot run: the service refuses instead
    emulator.clear_requests()
    try:
        with pytest.raises(ServiceAPIError) as info:
            bot.guilds.create("mine")
    finally:
        bot.user = user
    assert info.value.status == 403 and str(info.value).startswith("API Error 403: ")
    assert set(bot.guilds.cache) == before


def test_guilds_create_success_for_a_user(human: Client, emulator: Any) -> None:
    # The service announces the new server with server:joined, whose handler would cache
    # it too; ignore that event here so that only create() can have filled the cache.
    human._connection.parsers._table["server:joined"] = lambda payload: None
    emulator.clear_requests()
    guild = human.guilds.create("alice's place", icon_url="https://example.invalid/i.png")
    assert paths(emulator) == ["POST /servers"]
    assert isinstance(guild, Guild) and guild.name == "alice's place"
    assert human.guilds.cache[guild.id] is guild and human.guilds.resolve(guild.id) is guild
    assert emulator.server(guild.id)["name"] == "alice's place"
    assert human.user is not None and guild.owner_id == human.user.id and guild.member_count == 1
    assert guild.icon == "https://example.invalid/i.png" == emulator.server(guild.id)["imageUrl"]


def test_guilds_create_then_server_joined_keeps_one_entry(human: Client, emulator: Any) -> None:
    joined = Recorder(human, "guild_create")
    before = set(human.guilds.cache)
    guild = human.guilds.create("alice's other place")
    assert guild.id in human.guilds.cache
    assert joined.get().id == guild.id  # server:joined follows; the entry may be replaced
    assert set(human.guilds.cache) == before | {guild.id}
    assert human.guilds.cache[guild.id].name == "alice's other place"


# -- users, Guild, User, Channel ------------------------------------------------------------------

def test_users_fetch_always_requests_and_updates_the_cached_user(bot: Client, emulator: Any, world: Any) -> None:
    alice_id = world.human["publicId"]
    record = emulator.user(alice_id)
    emulator.clear_requests()
    alice = bot.users.fetch(alice_id)
    assert isinstance(alice, User) and alice.username == "alice" and alice.bot is False
    assert bot.users.cache[alice_id] is alice
    emulator.update_user(alice_id, name="alicia")
    again = bot.users.fetch(alice_id)
    assert again is alice and alice.username == "alicia"  # the cached object, updated in place
    assert paths(emulator) == [f"GET /users/{alice_id}"] * 2
    assert alice.tag == record["tag"] and alice.tag_string == f"alicia#{record['tag']}"
    with pytest.raises(ServiceAPIError) as info:
        bot.users.fetch(UNKNOWN)
    assert info.value.status == 404


def test_user_tag_string(bot: Client, world: Any, emulator: Any) -> None:
    me = bot.user
    assert me is not None and me.bot is True
    tag = emulator.user(world.bot["publicId"])["tag"]
    assert tag and me.tag_string == f"pingbot#{tag}" and str(me) == me.tag_string


def test_guild_fetch_channels_is_fetch_for_guild(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    assert len(guild.channels) == 0
    emulator.clear_requests()
    channels = guild.fetch_channels()
    assert paths(emulator) == [f"GET /servers/{sid(world)}/categories"]
    assert [c.name for c in channels] == ["general", "random", "voice"]
    assert all(c.server_id == guild.id for c in channels)
    assert set(guild.channels) == {c.id for c in channels}
    assert all(guild.channels[c.id] is c for c in channels)


def test_guild_member_count(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    assert guild.member_count == emulator.server(sid(world))["memberCount"] == 2
    emulator.add_member(sid(world), emulator.create_user("carol")["user"]["publicId"])
    assert bot.guilds.fetch(sid(world)).member_count == 3


def test_channel_delete_needs_manage_channels(bot: Client, human: Client, emulator: Any, world: Any) -> None:
    random_id = channel_id(world, "random")
    general_id = world.general["publicId"]
    channel = bot.channels.fetch(random_id)
    with pytest.raises(ServiceAPIError) as info:
        channel.delete()
    assert info.value.status == 403 and str(info.value).startswith("API Error 403: ")
    assert random_id in bot.channels.cache
    # the owner may
    owned = human.channels.fetch(random_id)
    owned.delete()
    assert random_id not in human.channels.cache
    with pytest.raises(ServiceAPIError) as info:
        human.channels.fetch(random_id)
    assert info.value.status == 404
    # and the bot may once a role gives it MANAGE_CHANNELS
    role = emulator.create_role(sid(world), "channel admins", int(Permissions.MANAGE_CHANNELS))["role"]["publicId"]
    everyone = [r["publicId"] for r in emulator.member(sid(world), world.bot["publicId"])["roles"]]
    member_updates = Recorder(bot, "guild_member_update")
    emulator.update_member(sid(world), world.bot["publicId"], roles=[*everyone, role])
    assert member_updates.get().has_permission("MANAGE_CHANNELS")  # the refetch is done
    general = bot.channels.fetch(general_id)
    emulator.clear_requests()
    general.delete()
    assert [p for p in paths(emulator) if not p.startswith("GET ")] == [f"DELETE /channels/{general_id}"]
    assert general_id not in bot.channels.cache
    with pytest.raises(ServiceAPIError) as info:
        bot.channels.fetch(general_id)
    assert info.value.status == 404


# -- socket events -------------------------------------------------------------------------------

def _human_message(bot: Client, human: Client, world: Any, text: str) -> Message:
    seen = Recorder(bot, "message_create")
    sent = human.send_message(world.general["publicId"], text)
    got = seen.get()
    while got.id != sent.id:
        got = seen.get()
    return got


def test_message_update_over_the_socket(bot: Client, human: Client, world: Any) -> None:
    updates = Recorder(bot, "message_update")
    msg = _human_message(bot, human, world, "before")
    human_copy = Message(human, {"publicId": msg.id, "channelPublicId": msg.channel_id})
    human_copy.edit("after <b>")
    raw = updates.get()
    assert isinstance(raw, dict)
    assert (raw.get("publicId") or raw.get("messagePublicId")) == msg.id
    assert raw["content"] == "after &lt;b&gt;"  # the raw record, as the service stores it
    assert raw.get("editedAt")


def test_message_delete_drops_the_reaction_tracker_before_listeners(bot: Client, human: Client, emulator: Any,
                                                                    world: Any) -> None:
    msg = _human_message(bot, human, world, "short lived")
    added = Recorder(bot, "message_reaction_add")
    tracker = bot._connection.parsers.reactions
    deletes = Recorder(bot, "message_delete", probe=lambda raw: msg.id in tracker)
    emulator.react(msg.id, world.human["publicId"], "👍")
    added.get()
    assert msg.id in tracker
    Message(human, {"publicId": msg.id, "channelPublicId": msg.channel_id}).delete()
    raw, tracked_in_listener = deletes.get()
    assert (raw.get("messagePublicId") or raw.get("publicId")) == msg.id
    assert tracked_in_listener is False  # dropped before the listener ran
    assert all(m["publicId"] != msg.id for m in emulator.messages(world.general["publicId"]))
    # the same snapshot again is new to the client (the entry was dropped): one add
    emulator.emit("message:reaction", {"messagePublicId": msg.id, "reactions": [
        {"emoji": "👍", "userPublicId": world.human["publicId"], "userName": "alice", "messagePublicId": msg.id}]},
        to_user=world.bot["publicId"])
    info, user, message_id = added.get()
    assert message_id == msg.id and info["emoji"] == "👍" and user.id == world.human["publicId"]


def test_reaction_snapshots_are_diffed_per_emoji_and_user(bot: Client, human: Client, emulator: Any,
                                                          world: Any) -> None:
    msg = _human_message(bot, human, world, "react to me")
    alice_id, bot_id = world.human["publicId"], world.bot["publicId"]
    events: queue.Queue[tuple[str, str, str, int, Any]] = queue.Queue()
    bot.on("message_reaction_add", lambda info, user, mid: events.put(("add", info["emoji"], user.id, info["count"], user)))
    bot.on("message_reaction_remove",
           lambda info, user, mid: events.put(("remove", info["emoji"], user.id, info["count"], user)))

    def next_event() -> tuple[str, str, str, int]:
        kind, emoji, uid, count, _user = events.get(timeout=TIMEOUT)
        return kind, emoji, uid, count

    assert emulator.react(msg.id, alice_id, "👍") is True
    kind, emoji, uid, count, user = events.get(timeout=TIMEOUT)
    assert (kind, emoji, uid, count) == ("add", "👍", alice_id, 1)
    assert user is bot.users.cache[alice_id]  # the cached author
    assert emulator.react(msg.id, bot_id, "👍") is True  # snapshot now holds both: only the bot is new
    assert next_event() == ("add", "👍", bot_id, 2)
    human_msg = Message(human, {"publicId": msg.id, "channelPublicId": msg.channel_id})
    human_msg.react("🎉")  # over the human's socket
    assert next_event() == ("add", "🎉", alice_id, 1)
    human_msg.react("👍")  # toggles alice's thumbs off
    assert next_event() == ("remove", "👍", alice_id, 1)
    assert emulator.react(msg.id, bot_id, "👍") is False
    assert next_event() == ("remove", "👍", bot_id, 0)
    assert events.empty()
    assert bot._connection.parsers.reactions._entries[msg.id] == {"🎉": {alice_id}}


def test_typing_start_over_the_socket(bot: Client, human: Client, world: Any) -> None:
    typing = Recorder(bot, "typing_start")
    human._connection.emit("typing:start", world.general["publicId"])
    raw = typing.get()
    assert raw["channelPublicId"] == world.general["publicId"]
    assert raw["userPublicId"] == world.human["publicId"] and raw["userName"] == "alice"


# -- malformed payloads through the real reader ---------------------------------------------------

def test_malformed_payloads_do_not_stop_the_reader(bot: Client, emulator: Any, world: Any) -> None:
    cid = world.general["publicId"]
    created = Recorder(bot, "message_create")
    members = Recorder(bot, "guild_member_add")
    disconnects = Recorder(bot, "disconnect")
    emulator.emit("message:new", {"content": "x", "channelPublicId": cid}, to_channel=cid)
    emulator.emit("message:new", {"publicId": "m-no-author", "content": "y &amp; z", "channelPublicId": cid},
                  to_channel=cid)
    emulator.emit("message:new", {"publicId": "m-bad-author", "content": "w", "channelPublicId": cid,
                                  "author": "not an object"}, to_channel=cid)
    emulator.emit("server:member_add", 5, to_server=sid(world))
    emulator.emit("message:new", "garbage", to_channel=cid)
    emulator.emit("server:member_add", {"serverPublicId": sid(world), "member": ["no"]}, to_server=sid(world))
    emulator.post_message(cid, world.human["publicId"], "still alive")
    got: list[Message] = []
    while not got or got[-1].content != "still alive":
        got.append(created.get())
    assert got[-1].author is not None and got[-1].author.id == world.human["publicId"]
    by_id = {m.id: m for m in got[:-1]}
    assert by_id["m-no-author"].author is None and by_id["m-no-author"].content == "y & z"
    assert by_id["m-bad-author"].author is None
    assert all(m.author is None and m.content in ("x", "y & z", "w") for m in got[:-1])
    assert members.empty()
    assert disconnects.empty()
    assert bot.ready_at is not None
