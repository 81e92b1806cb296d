"""Permission overwrites, categories, channel edits and copies, member and role changes: the
client's methods against the emulator over real sockets, with the caches the events keep fresh."""

from __future__ import annotations

import pickle
import queue
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from service_client import (
    Category,
    Channel,
    ChannelOverwriteError,
    Client,
    PermissionOverwrite,
    Permissions,
    ServiceAPIError,
)

from .conftest import TIMEOUT, Recorder

VIEW, SEND = Permissions.VIEW_CHANNELS, Permissions.SEND_MESSAGES


def wait_until(event: Recorder, check: Callable[[], bool], what: str) -> None:
    """Take events until ``check()`` holds (the cache effect runs before each dispatch)."""
    while not check():
        try:
            event.get()
        except queue.Empty:
            raise AssertionError(f"{what}: not seen within {TIMEOUT} s") from None


def settle(client: Client, env: Any) -> None:
    """Wait until ``client`` has handled every channel event sent to it so far: a marker
    ``server:channels_updated`` sent to its user after them comes out last, once the listing
    refreshes of the earlier ones (same server, same order) are done and its own refresh ran."""
    marker = uuid.uuid4().hex
    done = threading.Event()

    def listener(payload: Any) -> None:
        if isinstance(payload, dict) and payload.get("marker") == marker:
            done.set()

    client.on("guild_channels_update", listener)
    try:
        assert client.user is not None
        env.emu.emit("server:channels_updated", {"serverPublicId": env.sid, "marker": marker}, to_user=client.user.id)
        assert done.wait(TIMEOUT), "the marker event did not come back"
    finally:
        client.off("guild_channels_update", listener)


def journal(emulator: Any) -> list[tuple[str, str, Any, Any]]:
    """The journal without reads (a client that caches a server's channels refetches its listing
    on each channel event, interleaved with the writes)."""
    return [(r["method"], r["path"], r["body"], r["userId"]) for r in emulator.requests() if r["method"] != "GET"]


@pytest.fixture
def env(world: Any, make_client: Callable[..., Client]) -> Any:
    """The bot holds a "manager" role (MANAGE_CHANNELS | MANAGE_ROLES); carol and dave are plain
    members, dave has the "Staff" role; all four are logged in."""
    emu = world.emulator
    sid = world.server["publicId"]
    manager = emu.create_role(sid, "manager", int(Permissions.MANAGE_CHANNELS | Permissions.MANAGE_ROLES))["role"]
    staff = emu.create_role(sid, "Staff", 0)["role"]
    emu.update_member(sid, world.bot["publicId"], roles=[manager["publicId"]])
    carol, dave = emu.create_user("carol"), emu.create_user("dave")
    emu.add_member(sid, carol["user"]["publicId"])
    emu.add_member(sid, dave["user"]["publicId"], role_ids=[staff["publicId"]])
    ns = type("Env", (), {})()
    ns.emu, ns.world, ns.sid, ns.gid = emu, world, sid, world.general["publicId"]
    ns.staff_id, ns.cu, ns.du = staff["publicId"], carol["user"]["publicId"], dave["user"]["publicId"]
    ns.bot = make_client()
    ns.bot.login(world.bot_token, timeout=15)
    ns.carol = make_client(workers=2)
    ns.carol.login(carol["token"], timeout=15)
    ns.dave = make_client(workers=2)
    ns.dave.login(dave["token"], timeout=15)
    ns.guild = ns.bot.guilds.cache[sid]
    ns.guild.roles.fetch_all()
    return ns


def can_read(client: Client, channel_id: str) -> bool:
    try:
        client.channels.fetch(channel_id, cache=False)
    except ServiceAPIError as exc:
        assert exc.status == 403, exc
        return False
    return True


def listed(client: Client, server_id: str) -> set[str]:
    return {c.id for c in client.channels.fetch_for_guild(server_id, cache=False)}


# ---------------------------------------------------------------------------------- create with overwrites
def test_create_private_channel_with_overwrites(env: Any) -> None:
    guild, emu = env.guild, env.emu
    carol = env.bot.members.fetch(env.sid, env.cu)
    staff = guild.roles.cache[env.staff_id]
    emu.clear_requests()
    channel = guild.channels.create("ticket-1", private=True, overwrites={
        guild.roles.everyone: (0, VIEW),
        carol: (VIEW | SEND, 0),
        staff: (["VIEW_CHANNELS", "SEND_MESSAGES"], 0),
        guild.me: {"allow": VIEW | SEND},
    })
    assert isinstance(channel, Channel) and channel.name == "ticket-1" and channel.is_private
    assert channel.server_id == env.sid
    bot_id = env.world.bot["publicId"]
    assert journal(emu) == [
        ("POST", f"/servers/{env.sid}/channels", {"name": "ticket-1", "type": "TEXT", "isPrivate": True}, bot_id),
        ("POST", f"/channels/{channel.id}/overrides", {"targetId": guild.roles.everyone.id, "type": "ROLE",
                                                        "allow": "0", "deny": "512"}, bot_id),
        ("POST", f"/channels/{channel.id}/overrides", {"targetId": env.cu, "type": "MEMBER",
                                                        "allow": "1536", "deny": "0"}, bot_id),
        ("POST", f"/channels/{channel.id}/overrides", {"targetId": env.staff_id, "type": "ROLE",
                                                        "allow": "1536", "deny": "0"}, bot_id),
        ("POST", f"/channels/{channel.id}/overrides", {"targetId": bot_id, "type": "MEMBER",
                                                        "allow": "1536", "deny": "0"}, bot_id),
    ]
    got = channel.overwrites()
    assert all(isinstance(o, PermissionOverwrite) for o in got)
    # the creator's own override comes first: creating a private channel made it
    assert [(o.type, o.target_id, o.allow, o.deny) for o in got] == [
        ("MEMBER", bot_id, VIEW | SEND, Permissions(0)), ("ROLE", guild.roles.everyone.id, Permissions(0), VIEW),
        ("MEMBER", env.cu, VIEW | SEND, Permissions(0)), ("ROLE", env.staff_id, VIEW | SEND, Permissions(0))]
    assert got[2].target_name == "carol" and got[3].target_name == "Staff"
    # the opener, staff and the bot read it; another member neither sees nor reads it
    eve = env.emu.create_user("eve")
    env.emu.add_member(env.sid, eve["user"]["publicId"])
    eve_client = env.carol.__class__(base_url=emu.base_url, socket_url=emu.socket_url)
    try:
        eve_client.login(eve["token"], timeout=15)
        assert not can_read(eve_client, channel.id) and channel.id not in listed(eve_client, env.sid)
    finally:
        eve_client.destroy()
    assert can_read(env.carol, channel.id) and can_read(env.dave, channel.id) and can_read(env.bot, channel.id)
    assert channel.send("welcome").content == "welcome"


def test_a_failed_overwrite_is_named_and_the_channel_kept(env: Any) -> None:
    guild, emu = env.guild, env.emu
    stranger = emu.create_user("stranger")["user"]["publicId"]          # not a member: refused with 400
    emu.clear_requests()
    with pytest.raises(ChannelOverwriteError) as info:
        guild.channels.create("half-done", overwrites={
            guild.roles.cache[env.staff_id]: (VIEW, 0),
            ("MEMBER", stranger): (VIEW, 0),
            ("MEMBER", env.cu): (VIEW, 0),
        })
    err = info.value
    assert (err.index, err.total, err.target_type, err.target_id) == (1, 3, "MEMBER", stranger)
    assert isinstance(err.__cause__, ServiceAPIError) and err.__cause__.status == 400
    assert f"overwrite 2 of 3 (MEMBER {stranger})" in str(err) and "members.errors.not_found" in str(err)
    channel = err.channel
    assert isinstance(channel, Channel) and channel.id == err.channel_id and channel.name == "half-done"
    assert emu.channel_ids_of_rooms(env.world.bot["publicId"]) >= {channel.id}   # kept, and live
    assert [(o["targetId"]) for o in emu.overrides(channel.id)] == [env.staff_id]
    assert [r[0] for r in journal(emu)] == ["POST", "POST", "POST"]                 # the third was not sent
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == str(err) and copy.target_id == stranger and copy.channel is None


@pytest.mark.parametrize("overwrites,error", [
    ({"nobody-knows": (VIEW, 0)}, ValueError),
    ({("ROLE", "x"): (VIEW, VIEW)}, ValueError),
    ({("USER", "x"): (VIEW, 0)}, ValueError),
    ({("ROLE", "x"): (VIEW, 0, 0)}, TypeError),
    ({("ROLE", "x"): ("NOT_A_PERMISSION", 0)}, ValueError),
    ({("ROLE", "x"): (1 << 25, 0)}, ValueError),
    ({("ROLE", "x"): {"allow": VIEW, "mode": 1}}, ValueError),
    ({3: (VIEW, 0)}, TypeError),
    (["not an overwrite"], TypeError),
    ("everyone", TypeError),
])
def test_bad_overwrites_are_refused_before_any_request(env: Any, overwrites: Any, error: type) -> None:
    env.emu.clear_requests()
    with pytest.raises(error):
        env.guild.channels.create("never", overwrites=overwrites)
    with pytest.raises((TypeError, ValueError)):
        env.guild.channels.create("never", private="yes")
    assert env.emu.requests() == []


# ---------------------------------------------------------------------------------- set / delete
def test_set_and_delete_overwrite_move_a_member_out_and_back(env: Any) -> None:
    bot, carol_client = env.bot, env.carol
    general = bot.channels.fetch(env.gid)
    carol_client.channels.fetch_for_guild(env.sid)           # carol caches the server's channels
    updates = Recorder(carol_client, "guild_channels_update")
    messages = Recorder(carol_client, "message_create")
    carol = bot.members.fetch(env.sid, env.cu)
    general.set_overwrite(carol, deny="VIEW_CHANNELS")
    wait_until(updates, lambda: env.gid not in carol_client.channels.cache, "general evicted from carol's cache")
    assert not can_read(carol_client, env.gid)
    bot.send_message(env.gid, "carol cannot see this")
    (overwrite,) = general.overwrites()
    assert overwrite.target_id == env.cu and overwrite.deny == VIEW and overwrite.scope_id == env.gid
    general.delete_overwrite(overwrite.id)
    wait_until(updates, lambda: env.gid in carol_client.channels.cache, "general back in carol's cache")
    assert can_read(carol_client, env.gid)
    bot.send_message(env.gid, "carol sees this")
    assert messages.get().content == "carol sees this"            # the hidden one never arrived
    general.set_overwrite(env.cu, allow=SEND)                    # a cached member id: MEMBER
    general.set_overwrite(env.staff_id, allow=VIEW)             # a cached role id: ROLE
    overwrite = next(o for o in general.overwrites() if o.target_id == env.staff_id)
    assert overwrite.type == "ROLE"
    overwrite.delete()
    assert [o.target_id for o in general.overwrites()] == [env.cu]
    with pytest.raises(ServiceAPIError) as info:
        general.delete_overwrite(overwrite)
    assert info.value.status == 404


def test_overwrite_arguments_are_checked_first(env: Any) -> None:
    general = env.bot.channels.fetch(env.gid)
    env.emu.clear_requests()
    with pytest.raises(ValueError, match="cannot tell"):
        general.set_overwrite("unknown-id", allow=VIEW)
    with pytest.raises(ValueError, match="share"):
        general.set_overwrite(("ROLE", env.staff_id), allow=VIEW, deny=VIEW | SEND)
    with pytest.raises(ValueError, match="type"):
        general.set_overwrite(env.guild.roles.cache[env.staff_id], allow=VIEW, type="MEMBER")
    with pytest.raises(TypeError):
        general.set_overwrite(3.5, allow=VIEW)
    with pytest.raises(TypeError):
        general.delete_overwrite(42)  # type: ignore[arg-type]
    assert env.emu.requests() == []
    with pytest.raises(ServiceAPIError) as info:                  # the service checks the target
        general.set_overwrite("unknown-id", allow=VIEW, type="ROLE")
    assert info.value.status == 400


def test_a_member_without_manage_channels_is_refused(env: Any) -> None:
    general = env.carol.channels.fetch(env.gid)
    with pytest.raises(ServiceAPIError) as info:
        general.set_overwrite(("MEMBER", env.cu), allow=VIEW)
    assert info.value.status == 403
    with pytest.raises(ServiceAPIError) as info:
        env.carol.guilds.cache[env.sid].channels.create("mine")
    assert info.value.status == 403


# ---------------------------------------------------------------------------------- edit, duplicate, sync
def test_edit_duplicate_and_sync_a_channel(env: Any) -> None:
    bot = env.bot
    uncached = bot.channels.fetch(env.gid, cache=False)
    lobby = uncached.edit(name="lobby", cache=False)
    assert (lobby.name, uncached.name) == ("lobby", "general") and env.gid not in bot.channels.cache
    general = bot.channels.fetch(env.gid)
    renamed = general.edit(description="say hi")
    assert renamed is not general and (renamed.name, renamed.description) == ("lobby", "say hi")
    assert general.description is None
    # the cache holds this copy or the one the following event refetched: the same values
    assert (bot.channels.cache[env.gid].name, bot.channels.cache[env.gid].description) == ("lobby", "say hi")
    assert env.carol.channels.fetch(env.gid).description == "say hi"
    cleared = renamed.edit(description=None)
    assert cleared.description is None and env.carol.channels.fetch(env.gid).description is None
    with pytest.raises(ValueError):
        renamed.edit()
    general.set_overwrite(("MEMBER", env.cu), deny=SEND)
    copy = renamed.duplicate()
    assert copy.id != env.gid and copy.name == "lobby" and copy.category_id == general.category_id
    assert copy.id in bot.channels.cache
    assert [(o.target_id, o.deny) for o in copy.overwrites()] == [(env.cu, SEND)]
    copy.sync()                                                     # back to the category's (none)
    assert copy.overwrites() == []
    voice = next(c for c in env.world.channels if c["type"] == "VOICE")["publicId"]
    with pytest.raises(ServiceAPIError) as info:
        bot.channels.fetch(voice).sync()                            # no category
    assert info.value.status == 400
    copy.delete()
    assert copy.id not in bot.channels.cache
    with pytest.raises(ServiceAPIError) as info:
        env.carol.channels.fetch(env.gid).edit(name="mine")
    assert info.value.status == 403


# ---------------------------------------------------------------------------------- categories
def test_categories_create_edit_sync_delete(env: Any) -> None:
    bot, guild = env.bot, env.guild
    carol_client = env.carol
    tickets = guild.categories.create("Tickets")
    assert isinstance(tickets, Category) and tickets.server_id == env.sid and tickets.channels == {}
    settle(bot, env)
    assert tickets.id in guild.categories and bot.channels.categories[tickets.id].name == "Tickets"
    tickets.set_overwrite(guild.roles.everyone, deny=VIEW)
    tickets.set_overwrite(guild.roles.cache[env.staff_id], allow=VIEW | SEND)
    tickets.set_overwrite(guild.me, allow=VIEW)
    assert [(o.target_id, o.allow, o.deny) for o in tickets.overwrites()] == [
        (guild.roles.everyone.id, Permissions(0), VIEW), (env.staff_id, VIEW | SEND, Permissions(0)),
        (env.world.bot["publicId"], VIEW, Permissions(0))]
    private = tickets.edit(private=True, name="Support")
    assert (private.name, private.is_private) == ("Support", True) and (tickets.name, tickets.is_private) == (
        "Tickets", False)
    inside = guild.channels.create("t-1", category_id=private)
    assert inside.category_id == tickets.id and inside.is_private                  # inherited
    assert len(inside.overwrites()) == 3
    assert not can_read(carol_client, inside.id) and can_read(env.dave, inside.id)
    tickets.delete_overwrite(tickets.overwrites()[0])
    tickets.sync()
    assert [o.target_id for o in inside.overwrites()] == [env.staff_id, env.world.bot["publicId"]]
    assert not can_read(carol_client, inside.id)                                   # still private
    fetched = {c.id: c for c in guild.categories.fetch()}
    assert fetched[tickets.id].name == "Support" and list(fetched[tickets.id].channels) == [inside.id]
    settle(bot, env)
    assert bot.channels.categories[tickets.id].name == "Support"
    assert bot.channels.cache[inside.id].category_id == tickets.id
    private.delete()
    settle(bot, env)
    assert tickets.id not in bot.channels.categories and tickets.id not in guild.categories
    assert bot.channels.cache[inside.id].category_id is None
    assert all(c.id != tickets.id for c in guild.categories.fetch())
    with pytest.raises(ServiceAPIError) as info:
        carol_client.guilds.cache[env.sid].categories.create("mine")
    assert info.value.status == 403


# ---------------------------------------------------------------------------------- events keep caches fresh
def test_channel_and_category_events_refresh_the_cache(env: Any) -> None:
    bot, human_api = env.bot, env.emu
    guild = env.guild
    guild.fetch_channels()
    assert env.gid in bot.channels.cache
    channel_updates = Recorder(bot, "guild_channels_update")
    category_updates = Recorder(bot, "guild_categories_update")
    owner = env.carol.__class__(base_url=human_api.base_url, socket_url=human_api.socket_url)
    try:
        owner.login(env.world.human_token, timeout=15)
        owner_guild = owner.guilds.cache[env.sid]
        # a rename by someone else
        owner.channels.fetch(env.gid).edit(name="renamed")
        payload = channel_updates.get()
        assert payload == {"serverPublicId": env.sid} and bot.channels.cache[env.gid].name == "renamed"
        # a new category and a new channel appear
        cat = owner_guild.categories.create("Fresh")
        assert category_updates.get() == {"serverPublicId": env.sid} and cat.id in bot.channels.categories
        made = owner_guild.channels.create("fresh-chat", category_id=cat.id)
        wait_until(channel_updates, lambda: made.id in bot.channels.cache, "new channel cached")
        # the bot loses the view of a channel: evicted; a deleted one too
        owner.channels.fetch(made.id).set_overwrite(("MEMBER", env.world.bot["publicId"]), deny=VIEW)
        wait_until(channel_updates, lambda: made.id not in bot.channels.cache, "hidden channel evicted")
        owner.channels.fetch(env.gid).delete()
        wait_until(channel_updates, lambda: env.gid not in bot.channels.cache, "deleted channel evicted")
        cat.delete()
        wait_until(category_updates, lambda: cat.id not in bot.channels.categories, "deleted category evicted")
    finally:
        owner.destroy()


def test_events_without_cached_channels_dispatch_at_once(env: Any) -> None:
    """A client that never fetched a server's channels gets the raw event and makes no request."""
    updates = Recorder(env.dave, "guild_channels_update")
    env.emu.clear_requests()
    env.guild.channels.create("quiet")
    assert updates.get() == {"serverPublicId": env.sid}
    assert [r for r in env.emu.requests() if r["userId"] == env.du] == []


# ---------------------------------------------------------------------------------- members and roles
def test_member_edit_roles_and_nickname(env: Any) -> None:
    bot, emu = env.bot, env.emu
    staff_only = env.guild.channels.create("staff-only", private=True,
                                           overwrites={("ROLE", env.staff_id): (VIEW, 0)})
    assert not can_read(env.carol, staff_only.id)
    updates = Recorder(bot, "guild_member_update")
    carol = bot.members.fetch(env.sid, env.cu)
    carol.edit(roles=[env.guild.roles.cache[env.staff_id]], nickname="Caz")
    member = updates.get()
    assert member.id == env.cu and member.nickname == "Caz" and env.staff_id in member.role_ids
    assert bot.members.get(env.sid, env.cu) is member
    assert can_read(env.carol, staff_only.id)                    # the role opened the channel at once
    bot.members.edit(env.sid, env.cu, roles=[], nickname=None)
    member = updates.get()
    assert member.nickname is None and env.staff_id not in member.role_ids
    assert not can_read(env.carol, staff_only.id)
    with pytest.raises(ServiceAPIError) as info:
        bot.members.edit(env.sid, env.cu, roles=["no-such-role"])
    assert info.value.status == 400
    with pytest.raises(ServiceAPIError) as info:
        env.carol.members.edit(env.sid, env.du, nickname="x")
    assert info.value.status == 403
    assert emu.member(env.sid, env.du)["nickname"] is None


def test_roles_create_edit_delete_over_the_wire(env: Any) -> None:
    guild, carol = env.guild, env.carol
    carol_guild = carol.guilds.cache[env.sid]
    created, updated, deleted = (Recorder(carol, e) for e in ("role_create", "role_update", "role_delete"))
    role = guild.roles.create("helpers", color="#112233", hoist=True, permissions=["MANAGE_INVITES"])
    assert (role.name, role.color, role.hoist, role.permissions) == ("helpers", "#112233", True,
                                                                     Permissions.MANAGE_INVITES)
    # The REST answer is cached at once; the bot's own role_create event may replace the object
    # with an equal one a moment later, so the cache is checked by value, not identity.
    assert (guild.roles.cache[role.id].id, guild.roles.cache[role.id].name) == (role.id, "helpers")
    assert created.get().id == role.id and carol_guild.roles.cache[role.id].name == "helpers"
    changed = role.edit(name="helpers+", color=None, permissions=Permissions.MANAGE_INVITES | SEND)
    assert (changed.name, changed.color, changed.permissions) == ("helpers+", None, Permissions.MANAGE_INVITES | SEND)
    assert updated.get().name == "helpers+" and carol_guild.roles.cache[role.id].color is None
    assert [r.id for r in guild.roles.fetch_all() if r.id == role.id] == [role.id]
    changed.delete()
    assert deleted.get().id == role.id and role.id not in carol_guild.roles.cache and role.id not in guild.roles.cache
    with pytest.raises(ServiceAPIError) as info:
        carol_guild.roles.create("nope")
    assert info.value.status == 403
    with pytest.raises(ServiceAPIError) as info:
        guild.roles.everyone.delete()
    assert info.value.status == 403
