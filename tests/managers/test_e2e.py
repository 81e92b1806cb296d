"""Managers, models and live caches end to end: a real Client logged in to the
emulator over real HTTP and socket.io; requests counted from the emulator's journal."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client
from service_client.errors import ServiceAPIError
from service_client.models import Channel, DMChannel, Guild, Member, Message, Permissions, Role

from .conftest import TIMEOUT, Recorder, paths, sid

# -- login and fetch_all --------------------------------------------------------------

def test_login_fills_guilds_and_bot_members_with_one_plus_n_requests(emulator: Any, world: Any, make_client: Callable[..., Client]) -> None:
    human_id = world.human["publicId"]
    bot_id = world.bot["publicId"]
    extra = [emulator.create_server(f"extra{i}", human_id)["server"]["publicId"] for i in range(3)]
    for server_id in extra:
        emulator.add_member(server_id, bot_id)
    emulator.clear_requests()
    client = make_client()
    client.login(world.bot_token, timeout=15)
    got = paths(emulator)
    assert got[:2] == ["GET /auth/me", "GET /servers"]
    assert sorted(got[2:]) == sorted(f"GET /servers/{s}/members/{bot_id}" for s in [sid(world), *extra])
    assert len(got) == 1 + 1 + 4
    assert set(client.guilds.cache) == {sid(world), *extra}
    assert set(client.members.cache) == {(s, bot_id) for s in [sid(world), *extra]}
    assert len(client.channels.cache) == 0
    assert all(len(g.roles.cache) == 0 for g in client.guilds.cache.values())
    me = client.members.get(sid(world), bot_id)
    assert me is not None and me.user is client.user and me.has_permission("SEND_MESSAGES")


def test_fetch_all_cache_false_is_one_request(bot: Client, emulator: Any) -> None:
    emulator.clear_requests()
    guilds = bot.guilds.fetch_all(cache=False)
    assert [g.id for g in guilds] == list(bot.guilds.cache)
    assert paths(emulator) == ["GET /servers"]


def test_fetch_all_isolates_a_failing_member_fetch(emulator: Any, world: Any, make_client: Callable[..., Client]) -> None:
    bot_id = world.bot["publicId"]
    other = emulator.create_server("other", world.human["publicId"])["server"]["publicId"]
    emulator.add_member(other, bot_id)
    emulator.add_fault("GET", f"/servers/{other}/members/{bot_id}", status=500, count=None)
    client = make_client()
    client.login(world.bot_token, timeout=15)
    assert set(client.guilds.cache) == {sid(world), other}
    assert set(client.members.cache) == {(sid(world), bot_id)}
    emulator.clear_faults()


# -- GuildManager ---------------------------------------------------------------------

def test_guilds_fetch_always_requests_and_get_or_fetch(bot: Client, emulator: Any, world: Any) -> None:
    emulator.clear_requests()
    a = bot.guilds.fetch(sid(world))
    b = bot.guilds.fetch(sid(world))
    assert a is not b and bot.guilds.cache[sid(world)] is b and b.name == "Test Server"
    assert paths(emulator) == [f"GET /servers/{sid(world)}"] * 2
    assert bot.guilds.get_or_fetch(sid(world)) is b
    assert len(emulator.requests()) == 2  # cached: no request
    assert bot.guilds.get_or_fetch("999999999999999999") is None
    with pytest.raises(ServiceAPIError) as info:
        bot.guilds.fetch("999999999999999999")
    assert info.value.status in (403, 404)


def test_guilds_create_refused_for_a_bot_before_any_request(bot: Client, emulator: Any) -> None:
    emulator.clear_requests()
    with pytest.raises(PermissionError, match="Bots cannot create servers."):
        bot.guilds.create("mine")
    assert emulator.requests() == []


def test_guilds_create_for_a_user(world: Any, make_client: Callable[..., Client], emulator: Any) -> None:
    human = make_client(workers=2)
    human.login(world.human_token, timeout=15)
    guild = human.guilds.create("Made by alice")
    # cached on return; the server:joined that follows may replace the entry with an equal Guild
    assert isinstance(guild, Guild) and guild.id in human.guilds.cache
    assert human.guilds.cache[guild.id].name == "Made by alice"
    assert emulator.server(guild.id)["name"] == "Made by alice"


# -- ChannelManager ----------------------------------------------------------------------

def test_fetch_for_guild_is_one_request_flattened(bot: Client, emulator: Any, world: Any) -> None:
    emulator.clear_requests()
    channels = bot.channels.fetch_for_guild(sid(world))
    assert paths(emulator) == [f"GET /servers/{sid(world)}/categories"]
    assert [c.name for c in channels] == ["general", "random", "voice"]
    assert all(isinstance(c, Channel) and c.server_id == sid(world) for c in channels)
    assert [c.type for c in channels] == ["TEXT", "TEXT", "VOICE"]
    guild = bot.guilds.cache[sid(world)]
    assert sorted(c.name for c in guild.channels.values()) == ["general", "random", "voice"]


def test_fetch_for_guild_empty_server(emulator: Any, world: Any, make_client: Callable[..., Client]) -> None:
    empty = emulator.create_server("empty", world.human["publicId"])["server"]["publicId"]
    emulator.add_member(empty, world.bot["publicId"])
    client = make_client()
    client.login(world.bot_token, timeout=15)
    assert client.channels.fetch_for_guild(empty) == []


def test_channels_fetch_new_each_call_and_errors(bot: Client, emulator: Any, world: Any) -> None:
    cid = world.general["publicId"]
    emulator.clear_requests()
    a = bot.channels.fetch(cid)
    b = bot.channels.fetch(cid)
    assert a is not b and bot.channels.cache[cid] is b and b.server_id == sid(world)
    assert len(emulator.requests()) == 2
    with pytest.raises(ServiceAPIError) as info:
        bot.channels.fetch("999999999999999999")
    assert info.value.status == 404
    assert str(info.value).startswith("API Error 404: ")


def test_channel_send_and_message_reply(bot: Client, emulator: Any, world: Any) -> None:
    channel = bot.channels.fetch(world.general["publicId"])
    sent = channel.send("hello <world> & co")
    assert isinstance(sent, Message) and sent.content == "hello <world> & co"
    assert sent.author is not None and sent.author.bot
    reply = sent.reply("a reply")
    assert reply.reply_to_id == sent.id
    stored = emulator.messages(world.general["publicId"])
    assert [m["content"] for m in stored][-2:] == ["hello &lt;world&gt; &amp; co", "a reply"]


# -- MemberManager and permissions --------------------------------------------------------

def test_members_fetch_and_permissions(bot: Client, emulator: Any, world: Any) -> None:
    emulator.clear_requests()
    alice = bot.members.fetch(sid(world), world.human["publicId"])
    assert isinstance(alice, Member) and alice.user.username == "alice"
    assert bot.members.get(sid(world), world.human["publicId"]) is alice
    assert alice.permissions == Permissions.ALL  # the owner
    me = bot.members.get(sid(world), world.bot["publicId"])
    assert me is not None and me.permissions == Permissions.DEFAULT
    assert not me.has_permission("MANAGE_INVITES")
    bot.members.fetch(sid(world), world.human["publicId"])
    assert len(emulator.requests()) == 2


# -- socket events keep caches exact -------------------------------------------------------

def test_message_create_from_a_user(bot: Client, emulator: Any, world: Any) -> None:
    rec = Recorder(bot, "message_create")
    emulator.post_message(world.general["publicId"], world.human["publicId"], "a &lt; b")
    msg = rec.get()
    assert isinstance(msg, Message) and msg.content == "a &lt; b" and msg.author.id == world.human["publicId"]
    assert bot.users.cache[world.human["publicId"]] is msg.author


def test_role_events_keep_permissions_true(bot: Client, emulator: Any, world: Any) -> None:
    created = Recorder(bot, "role_create")
    updated = Recorder(bot, "role_update")
    member_updates = Recorder(bot, "guild_member_update")
    guild = bot.guilds.cache[sid(world)]
    role = emulator.create_role(sid(world), "inviters", 16)["role"]
    assert created.get().id == role["publicId"] and role["publicId"] in guild.roles.cache
    everyone = [r["publicId"] for r in emulator.member(sid(world), world.bot["publicId"])["roles"]]
    emulator.update_member(sid(world), world.bot["publicId"], roles=[*everyone, role["publicId"]])
    me = member_updates.get()
    assert isinstance(me, Member) and bot.members.get(sid(world), world.bot["publicId"]) is me
    assert me.has_permission("MANAGE_INVITES")
    emulator.update_role(sid(world), role["publicId"], permissions="0")
    assert updated.get().permissions == 0
    assert not me.has_permission("MANAGE_INVITES")  # the guild's role cache wins
    deleted = Recorder(bot, "role_delete")
    emulator.update_role(sid(world), role["publicId"], permissions="16")
    assert updated.get().permissions == 16 and me.has_permission("MANAGE_INVITES")
    emulator.delete_role(sid(world), role["publicId"])
    deleted.get()
    assert role["publicId"] not in guild.roles.cache
    assert not me.has_permission("MANAGE_INVITES")


def test_member_add_and_remove_keep_the_member_cache_exact(bot: Client, emulator: Any, world: Any) -> None:
    added = Recorder(bot, "guild_member_add")
    removed = Recorder(bot, "guild_member_remove")
    carol = emulator.create_user("carol")["user"]
    emulator.add_member(sid(world), carol["publicId"])
    member = added.get()
    assert isinstance(member, Member) and member.id == carol["publicId"]
    assert bot.members.get(sid(world), carol["publicId"]) is member
    emulator.remove_member(sid(world), carol["publicId"])
    gone = removed.get()
    assert gone == member and gone.reason == "kicked" and bot.members.get(sid(world), carol["publicId"]) is None


def test_guild_create_update_delete(bot: Client, emulator: Any, world: Any) -> None:
    created = Recorder(bot, "guild_create")
    updated = Recorder(bot, "guild_update")
    deleted = Recorder(bot, "guild_delete")
    new = emulator.create_server("later", world.human["publicId"])["server"]["publicId"]
    emulator.add_member(new, world.bot["publicId"])
    guild = created.get()
    assert isinstance(guild, Guild) and bot.guilds.cache[new] is guild
    assert bot.members.get(new, world.bot["publicId"]) is not None  # fetched before listeners ran
    emulator.update_server(new, name="renamed")
    assert updated.get() is guild and guild.name == "renamed"
    emulator.delete_server(new)
    assert deleted.get() is guild
    assert new not in bot.guilds.cache and bot.members.get(new, world.bot["publicId"]) is None


def test_user_and_presence_updates_patch_the_cached_user(bot: Client, emulator: Any, world: Any) -> None:
    alice = bot.members.fetch(sid(world), world.human["publicId"]).user
    users = Recorder(bot, "user_update")
    presences = Recorder(bot, "presence_update")
    emulator.update_user(world.human["publicId"], name="alicia")
    assert users.get() is alice and alice.username == "alicia"
    emulator.set_presence(world.human["publicId"], "dnd")
    assert presences.get()["status"] == "dnd" and alice.status == "dnd"


def test_voice_states_follow_voice_events(bot: Client, emulator: Any, world: Any) -> None:
    voice = next(c for c in world.channels if c["type"] == "VOICE")["publicId"]
    human_id = world.human["publicId"]
    joined = Recorder(bot, "voice_user_joined")
    states = Recorder(bot, "voice_user_state")
    left = Recorder(bot, "voice_user_left")
    assert emulator.voice_join(human_id, voice)
    joined.get()
    state = bot.voice_states.cache[human_id]
    assert state.channel_id == voice and not state.muted
    alice = bot.members.fetch(sid(world), human_id)
    assert alice.voice is state
    emulator.voice_state(human_id, muted=True)
    states.get()
    assert bot.voice_states.cache[human_id].muted
    emulator.voice_leave(human_id)
    left.get()
    assert human_id not in bot.voice_states.cache and alice.voice is None


def test_caches_iterate_safely_while_events_flood_them(bot: Client, emulator: Any, world: Any) -> None:
    added = Recorder(bot, "guild_member_add")
    total = 300
    done = threading.Event()

    def flood() -> None:
        for i in range(total):
            uid = str(800_000_000_000_000_000 + i)
            emulator.emit("server:member_add", {"serverPublicId": sid(world),
                                                "member": {"publicId": uid, "name": f"f{i}", "tag": "0001", "isBot": False}},
                          to_server=sid(world))
        done.set()

    thread = threading.Thread(target=flood, name="service_client-test-flood", daemon=True)
    thread.start()
    iterations = 0
    while not done.is_set() or iterations < 10:
        for _key, member in bot.members.cache.items():
            assert member.server_id
        for user in bot.users.cache.values():
            assert user.id
        _ = [k for k in bot.members.cache]
        iterations += 1
    thread.join(TIMEOUT)
    for _ in range(total):
        added.get()
    assert len(bot.members.for_guild(sid(world))) >= total


# -- invites, DMs, search ---------------------------------------------------------------------

def test_fetch_invite_and_revoke_rules(bot: Client, emulator: Any, world: Any) -> None:
    code = emulator.create_invite(sid(world), world.general["publicId"], world.human["publicId"])["invite"]["code"]
    invite = bot.fetch_invite(f"{bot.site_url}/invite/{code}")
    assert invite.code == code and invite.guild is not None and invite.guild.name == "Test Server"
    assert invite.uses == 0
    with pytest.raises(ServiceAPIError) as info:
        invite.revoke()
    assert info.value.status == 403
    role = emulator.create_role(sid(world), "inviters", 16)["role"]["publicId"]
    everyone = [r["publicId"] for r in emulator.member(sid(world), world.bot["publicId"])["roles"]]
    emulator.update_member(sid(world), world.bot["publicId"], roles=[*everyone, role])
    invite.revoke()
    with pytest.raises(ServiceAPIError) as info:
        bot.fetch_invite(code)
    assert info.value.status == 404


def test_guild_invites_manager(bot: Client, emulator: Any, world: Any) -> None:
    role = emulator.create_role(sid(world), "inviters", 16)["role"]["publicId"]
    everyone = [r["publicId"] for r in emulator.member(sid(world), world.bot["publicId"])["roles"]]
    emulator.update_member(sid(world), world.bot["publicId"], roles=[*everyone, role])
    guild = bot.guilds.cache[sid(world)]
    created = guild.invites.create(world.general["publicId"], max_uses=3)
    listed = guild.invites.fetch_all()
    assert created.code in [i.code for i in listed]
    lists = [r for r in emulator.requests() if r["method"] == "GET" and r["path"].endswith("/invites")]
    assert [r["query"] for r in lists] == ["all=true"]
    guild.invites.revoke(created.code)
    assert created.code not in guild.invites.cache


def test_roles_manager_fetch_all(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    roles = guild.roles.fetch_all()
    assert any(r.name == "@everyone" and r.permissions == Permissions.DEFAULT for r in roles)
    assert all(isinstance(r, Role) for r in roles) and set(guild.roles.cache) == {r.id for r in roles}


def test_create_dm_and_send(bot: Client, emulator: Any, world: Any) -> None:
    dm = bot.create_dm(world.human["publicId"])
    assert isinstance(dm, DMChannel) and dm.recipient is not None and dm.recipient.id == world.human["publicId"]
    assert dm.type == "DM" and dm.server_id is None
    msg = dm.send("psst")
    assert msg.channel_id == dm.id and msg.server_id is None


def test_search_messages(bot: Client, emulator: Any, world: Any) -> None:
    cid = world.general["publicId"]
    emulator.post_message(cid, world.human["publicId"], "find the <needle> here")
    emulator.post_message(cid, world.human["publicId"], "nothing to see")
    emulator.clear_requests()
    found = bot.search_messages(cid, "needle")
    assert [m.content for m in found] == ["find the <needle> here"] and isinstance(found[0], Message)
    assert bot.search_messages(cid, "absent words", limit=5) == []
    searches = [r["query"] for r in emulator.requests() if r["path"] == f"/chat/{cid}/search"]
    assert searches == ["q=needle", "q=absent+words&limit=5"]
