"""Parsers: every socket event's cache effect and Python event (protocol 2.4, 2.5)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from service_client import endpoints
from service_client.models import Channel, Guild, Member, Message, RemovedMember, Role, User
from service_client.state.parsers import Parsers, ReactionTracker, diff_reactions

from .fakes import FakeState, member_rec, message_rec, role_rec, server_rec, user_rec


@pytest.fixture
def client() -> FakeState:
    c = FakeState()
    c.user = User(c, user_rec("BOT", "bot", isBot=True))
    c.users._add(c.user)
    return c


@pytest.fixture
def h(client: FakeState) -> Parsers:
    return Parsers(client)  # type: ignore[arg-type]


def with_guild(client: FakeState, sid: str = "S1") -> Guild:
    g = Guild(client, server_rec(sid))
    client.guilds.cache[sid] = g
    return g


# -- messages ---------------------------------------------------------------------

def test_message_new_resolves_nonce_upserts_author_and_dispatches(client: FakeState, h: Parsers) -> None:
    h.handle("message:new", [message_rec("M1", "a &amp; b", nonce="n1")])
    (event, args, key), = client.dispatched
    msg = args[0]
    assert event == "message_create" and isinstance(msg, Message) and key == "C1"
    assert msg.content == "a & b"
    assert client.nonces == [("n1", msg)]
    assert client.users.cache["U1"] is msg.author


def test_message_new_author_is_the_cached_user_updated_in_place(client: FakeState, h: Parsers) -> None:
    cached = client.users.upsert(user_rec("U1", "old", status="dnd"))
    h.handle("message:new", [message_rec(author={"publicId": "U1", "name": "new", "tag": "0001", "isBot": False})])
    msg = client.dispatched[0][1][0]
    assert msg.author is cached and cached.username == "new"
    assert cached.status == "dnd"  # absent keys keep their cached value


def test_message_new_without_author_or_with_broken_author(client: FakeState, h: Parsers) -> None:
    h.handle("message:new", [{"publicId": "M1", "channelPublicId": "C1", "content": "sys"}])
    h.handle("message:new", [{"publicId": "M2", "channelPublicId": "C1", "author": {"name": "no id"}}])
    assert [d[1][0].author for d in client.dispatched] == [None, None]
    assert client.nonces == []


def test_message_update_delete_pin_dispatch_raw(client: FakeState, h: Parsers) -> None:
    up = message_rec("M1", editedAt="2026-01-02T03:04:06.000Z")
    h.handle("message:updated", [up])
    h.handle("message:deleted", [{"publicId": "M1", "messagePublicId": "M1", "channelPublicId": "C1", "serverPublicId": "S1"}])
    h.handle("message:pinned", [{"messagePublicId": "M1", "channelPublicId": "C1", "pinned": True}])
    assert [(e, k) for e, _, k in client.dispatched] == [("message_update", "C1"), ("message_delete", "C1"), ("message_pin", "C1")]
    assert client.dispatched[0][1][0] is up


# -- reactions (2.5) ----------------------------------------------------------------

def _reaction(mid: str, *pairs: tuple[str, str]) -> dict[str, Any]:
    return {"messagePublicId": mid, "reactions": [
        {"publicId": f"r{i}", "emoji": e, "userPublicId": u, "userName": f"name-{u}", "messagePublicId": mid}
        for i, (e, u) in enumerate(pairs)]}


def test_first_snapshot_counts_as_adds_then_diffs(client: FakeState, h: Parsers) -> None:
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"), ("👍", "U2"))])
    adds = client.events_named("message_reaction_add")
    assert [(a[1][0], a[1][1].id, a[1][2]) for a in adds] == [
        ({"emoji": "👍", "messagePublicId": "M1", "count": 1}, "U1", "M1"),
        ({"emoji": "👍", "messagePublicId": "M1", "count": 2}, "U2", "M1"),
    ]
    assert adds[0][1][1].username == "name-U1"  # built from userName when not cached
    client.dispatched.clear()
    h.handle("message:reaction", [_reaction("M1", ("👍", "U2"), ("🎉", "BOT"))])
    got = [(e, a[0]["emoji"], a[1].id, a[0]["count"]) for e, a, _ in client.dispatched]
    assert got == [("message_reaction_remove", "👍", "U1", 1), ("message_reaction_add", "🎉", "BOT", 1)]
    assert client.dispatched[1][1][1] is client.user  # the cached User


def test_same_snapshot_twice_dispatches_nothing(client: FakeState, h: Parsers) -> None:
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])
    client.dispatched.clear()
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])
    assert client.dispatched == []


def test_empty_snapshot_removes_everything(client: FakeState, h: Parsers) -> None:
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"), ("❤", "U1"))])
    client.dispatched.clear()
    h.handle("message:reaction", [{"messagePublicId": "M1", "reactions": []}])
    assert sorted((a[0]["emoji"], a[0]["count"]) for _, a, _ in client.dispatched) == [("❤", 0), ("👍", 0)]
    assert {e for e, _, _ in client.dispatched} == {"message_reaction_remove"}


def test_clear_and_delete_drop_the_tracker_entry(client: FakeState, h: Parsers) -> None:
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])
    h.handle("message:reaction_clear", [{"messagePublicId": "M1"}])
    assert "M1" not in h.reactions
    assert client.events_named("message_reaction_remove_all")[0][1][0] == {"messagePublicId": "M1"}
    h.handle("message:reaction", [_reaction("M2", ("👍", "U1"))])
    h.handle("message:deleted", [{"publicId": "M2", "channelPublicId": "C1"}])
    assert "M2" not in h.reactions
    client.dispatched.clear()
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])  # like new again: an add
    assert [e for e, _, _ in client.dispatched] == ["message_reaction_add"]


def test_reaction_events_take_the_channel_of_a_recent_message(client: FakeState, h: Parsers) -> None:
    h.handle("message:new", [message_rec("M1", "target", cid="C1", sid="S1")])
    h.handle("message:reaction", [_reaction("M1", ("👍", "U1"))])
    h.handle("message:reaction", [_reaction("M9", ("👍", "U1"))])  # never seen: its own id
    h.handle("message:reaction_clear", [{"messagePublicId": "M1"}])
    h.handle("message:pinned", [{"messagePublicId": "M1", "pinned": True}])
    h.handle("message:updated", [{"publicId": "M1", "content": "edited"}])
    assert [(e, k) for e, _, k in client.dispatched] == [
        ("message_create", "C1"), ("message_reaction_add", "C1"), ("message_reaction_add", "M9"),
        ("message_reaction_remove_all", "C1"), ("message_pin", "C1"), ("message_update", "C1"),
    ]
    h.handle("message:deleted", [{"publicId": "M1"}])
    assert client.dispatched[-1][2] == "C1"
    h.handle("message:reaction", [_reaction("M1", ("🎉", "U1"))])  # forgotten once deleted
    assert client.dispatched[-1][2] == "M1"


def test_message_channel_memory_is_bounded(monkeypatch: Any) -> None:
    from service_client.state import parsers as handlers_module

    client = FakeState(max_messages=None)  # no message kept whole: the channel map alone
    h = Parsers(client)  # type: ignore[arg-type]
    monkeypatch.setattr(handlers_module, "MESSAGE_CHANNELS_MAX", 3)
    for i in range(7):  # M0-M2 fill a generation, M3-M5 the next (M0-M2 go), M6 starts a third
        h.handle("message:new", [message_rec(f"M{i}", cid=f"C{i}")])
    client.dispatched.clear()
    for i in range(7):
        h.handle("message:reaction", [_reaction(f"M{i}", ("👍", "U1"))])
    assert [k for _, _, k in client.dispatched] == ["M0", "M1", "M2", "C3", "C4", "C5", "C6"]


def test_reaction_event_carries_the_message_while_remembered_and_its_channel_longer(monkeypatch: Any) -> None:
    from service_client.state import parsers as handlers_module

    client = FakeState(max_messages=2)
    h = Parsers(client)  # type: ignore[arg-type]
    monkeypatch.setattr(handlers_module, "MESSAGE_CHANNELS_MAX", 4)
    for i in range(5):
        h.handle("message:new", [message_rec(f"M{i}", cid=f"C{i}", sid="S1")])
    client.dispatched.clear()
    for i in range(5):
        h.handle("message:reaction", [_reaction(f"M{i}", ("👍", "U1"))])
    events = [args[0] for _, args, _ in client.dispatched]
    # Two generations of 2: M2 and M3 filled the older one, M4 is in the newer one; M0 and M1 are gone.
    assert [e.message.id if e.message is not None else None for e in events] == [None, None, "M2", "M3", "M4"]
    # Channels, two generations of 4: M0-M3 filled the older one, M4 is in the newer one.
    assert [e.channel_id for e in events] == ["C0", "C1", "C2", "C3", "C4"]
    assert [k for _, _, k in client.dispatched] == ["C0", "C1", "C2", "C3", "C4"]


def test_a_deleted_message_is_forgotten_in_either_generation() -> None:
    client = FakeState(max_messages=2)
    h = Parsers(client)  # type: ignore[arg-type]
    for i in range(3):  # M0 and M1 fill a generation, which becomes the older one; M2 starts the next
        h.handle("message:new", [message_rec(f"M{i}", cid="C1", sid="S1")])
    for mid in ("M1", "M2"):
        h.handle("message:deleted", [{"publicId": mid, "channelPublicId": "C1"}])
    client.dispatched.clear()
    for mid in ("M0", "M1", "M2"):
        h.handle("message:reaction", [_reaction(mid, ("👍", "U1"))])
    events = [args[0] for _, args, _ in client.dispatched]
    assert [e.message.id if e.message is not None else None for e in events] == ["M0", None, None]


def test_max_messages_none_keeps_no_message_whole_but_keeps_their_channels() -> None:
    client = FakeState(max_messages=None)
    h = Parsers(client)  # type: ignore[arg-type]
    for i in range(5):
        h.handle("message:new", [message_rec(f"M{i}", cid=f"C{i}", sid="S1")])
        assert client._messages == {} and client._messages_old == {}
    client.dispatched.clear()
    h.handle("message:reaction", [_reaction("M3", ("👍", "U1"))])
    (_, (info, *_), key), = client.dispatched
    assert info.message is None and info.channel_id == "C3" and key == "C3"


def test_messages_kept_whole_beyond_the_channel_map_still_give_their_channel(monkeypatch: Any) -> None:
    from service_client.state import parsers as handlers_module

    client = FakeState(max_messages=6)
    h = Parsers(client)  # type: ignore[arg-type]
    monkeypatch.setattr(handlers_module, "MESSAGE_CHANNELS_MAX", 2)
    for i in range(6):  # the channel map keeps M2-M5 at most; the message cache all six
        h.handle("message:new", [message_rec(f"M{i}", cid=f"C{i}", sid="S1")])
    client.dispatched.clear()
    h.handle("message:reaction", [_reaction("M0", ("👍", "U1"))])
    (_, (info, *_), key), = client.dispatched
    assert info.message is not None and info.message.id == "M0"
    assert info.channel_id == "C0" and key == "C0"


def test_default_bounds_keep_1000_messages_and_10000_channels(client: FakeState, h: Parsers) -> None:
    for i in range(20_005):
        h.handle("message:new", [message_rec(f"M{i}", cid="C1")])
        assert min(i + 1, 1_000) <= len(client._messages) + len(client._messages_old) < 2_000
        assert min(i + 1, 10_000) <= len(client._message_channels) + len(client._message_channels_old) < 20_000
    # Generations of whole messages: ..., M19000-M19999, then M20000-; of channels: M10000-M19999, M20000-.
    assert client.cached_message("M19000") is not None and client.cached_message("M20004") is not None
    assert client.cached_message("M18999") is None
    assert client.message_channel("M10000") == "C1" and client.message_channel("M20004") == "C1"
    assert client.message_channel("M9999") is None


def test_tracker_is_a_bounded_lru() -> None:
    t = ReactionTracker(max_messages=3)
    for mid in ("a", "b", "c"):
        t.replace(mid, {"x": {"u"}})
    t.replace("a", {"x": {"u"}})  # refresh a
    t.replace("d", {"x": {"u"}})  # evicts b, the least recent
    assert len(t) == 3 and "b" not in t and "a" in t
    assert t.replace("b", {}) == {}  # an evicted message behaves like a new one


def test_default_tracker_bound_is_10000(client: FakeState, h: Parsers) -> None:
    for i in range(10_005):
        h.reactions.replace(str(i), {})
    assert len(h.reactions) == 10_000 and "0" not in h.reactions


def test_diff_reactions_pure() -> None:
    assert diff_reactions({}, {"a": {"1"}}) == [("add", "a", "1", 1)]
    assert diff_reactions({"a": {"1", "2"}}, {"a": {"2", "3"}}) == [("remove", "a", "1", 1), ("add", "a", "3", 2)]


# -- servers --------------------------------------------------------------------------

def test_server_joined_caches_fetches_bot_member_then_dispatches(client: FakeState, h: Parsers) -> None:
    client.routes[("GET", "/servers/S1/members/BOT")] = member_rec("BOT", "S1")
    h.handle("server:joined", [server_rec("S1")])
    assert "S1" in client.guilds.cache
    assert ("S1", "BOT") in client.members.cache
    assert client.reserved == ["S1"] and client.submitted == [("GET", "/servers/S1/members/BOT")]
    (event, args, key), = client.dispatched
    assert event == "guild_create" and args[0] is client.guilds.cache["S1"] and key == "S1"


def test_server_joined_member_fetch_failure_still_dispatches(client: FakeState, h: Parsers) -> None:
    h.handle("server:joined", [server_rec("S1")])  # no route: 404
    assert "S1" in client.guilds.cache and [e for e, _, _ in client.dispatched] == ["guild_create"]


def test_server_updated_patches_and_null_clears(client: FakeState, h: Parsers) -> None:
    g = Guild(client, server_rec("S1", "Old", imageUrl="http://i"))
    client.guilds.cache["S1"] = g
    h.handle("server:updated", [{"serverPublicId": "S1", "name": "New", "imageUrl": None}])
    assert (g.name, g.icon) == ("New", None)
    assert client.dispatched[-1][:2] == ("guild_update", (g,))
    h.handle("server:updated", [{"serverPublicId": "S9", "name": "x"}])
    assert client.dispatched[-1][1][0] == {"serverPublicId": "S9", "name": "x"}


@pytest.mark.parametrize("event", ["server:deleted", "server:you_removed", "server:you_left"])
def test_server_gone_evicts_guild_channels_members(client: FakeState, h: Parsers, event: str) -> None:
    g = with_guild(client, "S1")
    with_guild(client, "S2")
    client.channels.cache["C1"] = Channel(client, {"publicId": "C1", "serverPublicId": "S1"})
    client.channels.cache["C2"] = Channel(client, {"publicId": "C2", "serverPublicId": "S2"})
    client.members.from_record(member_rec("BOT", "S1"), None, cache=True)
    client.members.from_record(member_rec("BOT", "S2"), None, cache=True)
    h.handle(event, [{"serverPublicId": "S1"}])
    assert list(client.guilds.cache) == ["S2"] and list(client.channels.cache) == ["C2"]
    assert list(client.members.cache) == [("S2", "BOT")]
    assert client.dispatched == [("guild_delete", (g,), "S1")]
    h.handle(event, [{"serverPublicId": "S1"}])  # unknown now: raw
    assert client.dispatched[-1][1][0] == {"serverPublicId": "S1"}


def test_member_add_nested_and_flat(client: FakeState, h: Parsers) -> None:
    h.handle("server:member_add", [{"serverPublicId": "S1", "member": member_rec("U1", "S1")}])
    h.handle("server:member_add", [{"serverPublicId": "S1", "member": {"publicId": "U2", "name": "flat", "tag": "0002", "isBot": False}}])
    assert set(client.members.cache) == {("S1", "U1"), ("S1", "U2")}
    assert [a[0].id for _, a, _ in client.events_named("guild_member_add")] == ["U1", "U2"]
    assert client.users.cache["U2"].username == "flat"


def test_member_add_does_not_touch_member_count(client: FakeState, h: Parsers) -> None:
    g = with_guild(client)
    h.handle("server:member_add", [{"serverPublicId": "S1", "member": member_rec("U1", "S1")}])
    assert g.member_count == 3


def test_member_remove_and_removed_with_ban(client: FakeState, h: Parsers) -> None:
    m1 = client.members.from_record(member_rec("U1", "S1"), None, cache=True)
    client.members.from_record(member_rec("U2", "S1"), None, cache=True)
    h.handle("server:member_remove", [{"serverPublicId": "S1", "memberPublicId": "U1"}])
    h.handle("server:member_removed", [{"serverPublicId": "S1", "memberPublicId": "U2", "reason": "banned"}])
    h.handle("server:member_removed", [{"serverPublicId": "S1", "memberPublicId": "U3", "reason": "kicked"}])
    assert len(client.members.cache) == 0
    assert [e for e, _, _ in client.dispatched] == ["guild_member_remove", "guild_member_remove", "guild_ban_add", "guild_member_remove"]
    left, banned, unknown = (client.dispatched[i][1][0] for i in (0, 1, 3))
    assert isinstance(left, RemovedMember) and left == m1 and left.reason == "left"
    assert left.roles.keys() == m1.roles.keys() and left.user is m1.user     # a copy of the cached member
    assert banned.id == "U2" and banned.reason == "banned"
    assert isinstance(unknown, RemovedMember) and (unknown.id, unknown.server_id, unknown.reason) == ("U3", "S1", "kicked")
    assert unknown.user.id == "U3"                                          # not cached: built from the ids


def test_member_update_refetches_then_dispatches(client: FakeState, h: Parsers) -> None:
    client.members.from_record(member_rec("U1", "S1", nickname=None), None, cache=True)
    client.routes[("GET", "/servers/S1/members/U1")] = member_rec("U1", "S1", nickname="Nick")
    h.handle("server:member_update", [{"serverPublicId": "S1", "memberPublicId": "U1"}])
    assert client.ran == [] and client.reserved == ["S1"]
    assert client.submitted == [("GET", "/servers/S1/members/U1")]
    assert client.members.get("S1", "U1").nickname == "Nick"  # type: ignore[union-attr]
    (event, args, key), = client.dispatched
    assert event == "guild_member_update" and isinstance(args[0], Member) and args[0].nickname == "Nick" and key == "S1"


def test_member_update_refetch_failure_dispatches_raw(client: FakeState, h: Parsers) -> None:
    raw = {"serverPublicId": "S1", "memberPublicId": "U1"}
    h.handle("server:member_update", [raw])
    assert client.dispatched == [("guild_member_update", (raw,), "S1")]


def test_ban_revoked_and_channel_category_updates(client: FakeState, h: Parsers) -> None:
    h.handle("server:ban_revoked", [{"serverPublicId": "S1", "userPublicId": "U1"}])
    h.handle("server:channels_updated", [{"serverPublicId": "S1"}])
    h.handle("server:categories_updated", [{"serverPublicId": "S1"}])
    assert [(e, k) for e, _, k in client.dispatched] == [("guild_ban_remove", "S1"), ("guild_channels_update", "S1"), ("guild_categories_update", "S1")]


# -- roles ----------------------------------------------------------------------------------

def test_role_create_update_keep_member_permissions_true(client: FakeState, h: Parsers) -> None:
    g = with_guild(client)
    m = client.members.from_record(member_rec("U1", "S1", roles=[role_rec("R1", "16")]), None, cache=True)
    assert m.has_permission("MANAGE_INVITES")
    h.handle("server:role_update", [{"serverPublicId": "S1", "role": role_rec("R1", "1024")}])
    assert isinstance(g.roles.cache["R1"], Role)
    assert not m.has_permission("MANAGE_INVITES") and m.has_permission("SEND_MESSAGES")
    h.handle("server:role_create", [{"serverPublicId": "S1", "role": role_rec("R2", "4")}])
    assert set(g.roles.cache) == {"R1", "R2"}
    assert [(e, a[0].id) for e, a, _ in client.dispatched] == [("role_update", "R1"), ("role_create", "R2")]


def test_role_events_for_uncached_guild_are_ignored(client: FakeState, h: Parsers) -> None:
    h.handle("server:role_create", [{"serverPublicId": "S1", "role": role_rec("R2")}])
    h.handle("server:role_delete", [{"serverPublicId": "S1", "rolePublicId": "R2"}])
    h.handle("server:roles_order_update", [{"serverPublicId": "S1", "roles": []}])
    assert client.dispatched == []


def test_role_delete_removes_from_roles_and_members(client: FakeState, h: Parsers) -> None:
    g = with_guild(client)
    g.roles.cache["R1"] = Role(client, role_rec("R1", "16"))
    m = client.members.from_record(member_rec("U1", "S1", roles=[role_rec("R1", "16"), role_rec("R2", "1024")]), None, cache=True)
    h.handle("server:role_delete", [{"serverPublicId": "S1", "rolePublicId": "R1"}])
    assert "R1" not in g.roles.cache
    assert m.role_ids == ["R2"] and m.permissions == 1024
    assert client.dispatched[0][0] == "role_delete" and client.dispatched[0][1][0].id == "R1"
    h.handle("server:role_delete", [{"serverPublicId": "S1", "rolePublicId": "R7"}])
    assert client.dispatched[1][1][0] == "R7"


def test_roles_order_update_patches_position(client: FakeState, h: Parsers) -> None:
    g = with_guild(client)
    g.roles.cache["R1"] = Role(client, role_rec("R1"))
    raw = {"serverPublicId": "S1", "roles": [{"publicId": "R1", "position": 4}, {"publicId": "R9", "position": 1}]}
    h.handle("server:roles_order_update", [raw])
    assert g.roles.cache["R1"].position == 4
    assert client.dispatched == [("role_order_update", (raw,), "S1")]
    h.handle("server:roles_order_update", [{"serverPublicId": "S1"}])  # no roles: nothing
    assert len(client.dispatched) == 1


# -- users, presence, typing, activity, dm ---------------------------------------------------

def test_user_update_patches_cached_user(client: FakeState, h: Parsers) -> None:
    u = client.users.upsert(user_rec("U1", "alice", image="http://a"))
    h.handle("user:update", [{"userPublicId": "U1", "name": "alicia", "image": None}])
    assert (u.username, u.avatar, u.tag) == ("alicia", None, "0001")
    assert client.dispatched[-1][:2] == ("user_update", (u,))
    h.handle("user:update", [{"userPublicId": "U9", "name": "x"}])
    assert client.dispatched[-1][1][0] == {"userPublicId": "U9", "name": "x"}


def test_presence_update_patches_status(client: FakeState, h: Parsers) -> None:
    u = client.users.upsert(user_rec("U1", status="online"))
    raw = {"userPublicId": "U1", "status": "idle"}
    h.handle("presence:update", [raw])
    assert u.status == "idle"
    assert client.dispatched == [("presence_update", (raw,), "U1")]


def test_presence_echo_of_the_bot_itself_leaves_its_local_status(client: FakeState, h: Parsers) -> None:
    me = client.users.upsert(user_rec("B1", status="online"))
    client.user = me
    raw = {"userPublicId": "B1", "status": "idle"}
    h.handle("presence:update", [raw])
    assert me.status == "online"  # set_status owns the bot's own status
    assert client.dispatched == [("presence_update", (raw,), "B1")]


def test_typing_activity_dm_new(client: FakeState, h: Parsers) -> None:
    h.handle("typing:start", [{"channelPublicId": "C1", "userPublicId": "U1", "userName": "a"}])
    h.handle("typing:stop", [{"channelPublicId": "C1", "userPublicId": "U1"}])
    h.handle("activity:update", [{"userPublicId": "U1", "activity": None}])
    h.handle("dm:new", [{"publicId": "D1", "type": "DM", "recipient": user_rec("U1")}])
    assert [(e, k) for e, _, k in client.dispatched] == [("typing_start", "C1"), ("typing_stop", "C1"), ("activity_update", "U1"), ("dm_new", "D1")]


# -- voice (issue 5) ------------------------------------------------------------------------------

def _vu(uid: str, **kw: Any) -> dict[str, Any]:
    rec = {"userPublicId": uid, "userName": uid, "muted": False, "deafened": False, "speaking": False, "joinedAt": 1}
    rec.update(kw)
    return rec


def test_voice_snapshot_replaces_channel_entries(client: FakeState, h: Parsers) -> None:
    h.handle("voice:state-update", [{"channelPublicId": "V1", "users": [_vu("U1"), _vu("U2")]}])
    h.handle("voice:state-update", [{"channelPublicId": "V2", "users": [_vu("U3")]}])
    assert set(client.voice_states.cache) == {"U1", "U2", "U3"}
    h.handle("voice:user-joined", [{"channelPublicId": "V1", "user": _vu("U4"), "users": [_vu("U2"), _vu("U4")]}])
    assert {k: s.channel_id for k, s in client.voice_states.cache.items()} == {"U2": "V1", "U3": "V2", "U4": "V1"}
    assert [e for e, _, _ in client.dispatched] == ["voice_state_update", "voice_state_update", "voice_user_joined"]
    assert [e for e, _ in client.voice_events] == ["voice:state-update", "voice:state-update", "voice:user-joined"]


def test_voice_user_left_removes_leaver(client: FakeState, h: Parsers) -> None:
    h.handle("voice:state-update", [{"channelPublicId": "V1", "users": [_vu("U1"), _vu("U2")]}])
    h.handle("voice:user-left", [{"channelPublicId": "V1", "userPublicId": "U1", "users": [_vu("U1"), _vu("U2")]}])
    assert list(client.voice_states.cache) == ["U2"]
    assert client.dispatched[-1][0] == "voice_user_left" and client.voice_events[-1][0] == "voice:user-left"


def test_voice_user_state_merges_existing_only(client: FakeState, h: Parsers) -> None:
    h.handle("voice:state-update", [{"channelPublicId": "V1", "users": [_vu("U1")]}])
    h.handle("voice:user-state", [{"channelPublicId": "V1", "userPublicId": "U1", "muted": True, "speaking": True}])
    h.handle("voice:user-state", [{"channelPublicId": "V1", "userPublicId": "U9", "muted": True}])
    s = client.voice_states.cache["U1"]
    assert (s.muted, s.speaking, s.deafened, s.user_name) == (True, True, False, "U1")
    assert "U9" not in client.voice_states.cache
    assert [e for e, _, _ in client.dispatched].count("voice_user_state") == 2


def test_voice_calls_and_token_hook(client: FakeState, h: Parsers) -> None:
    h.handle("voice:incoming-call", [{"channelPublicId": "V1", "fromUser": {"userPublicId": "U1"}}])
    h.handle("voice:call-cancelled", [{"channelPublicId": "V1"}])
    h.handle("voice:livekit-token", [{"channelPublicId": "V1", "token": "t", "url": "wss://x", "e2eeKey": None}])
    assert [e for e, _, _ in client.dispatched] == ["voice_incoming_call", "voice_call_cancelled"]
    assert [e for e, _ in client.voice_events] == ["voice:incoming-call", "voice:call-cancelled", "voice:livekit-token"]


def test_missing_voice_hook_is_fine(h: Parsers, client: FakeState) -> None:
    client.voice_hook = None
    h.handle("voice:state-update", [{"channelPublicId": "V1", "users": [_vu("U1")]}])
    assert "U1" in client.voice_states.cache


# -- robustness --------------------------------------------------------------------------------------

MALFORMED = [
    ("message:new", []), ("message:new", ["text"]), ("message:new", [{"content": "no id"}]), ("message:new", [None]),
    ("message:reaction", [{"messagePublicId": "M1", "reactions": "x"}]), ("message:reaction", [{"reactions": []}]),
    ("message:reaction", [{"messagePublicId": "M1", "reactions": [{"emoji": 3}]}]),
    ("server:joined", [{"name": "no id"}]), ("server:updated", [{}]), ("server:deleted", [5]),
    ("server:member_add", [{"member": member_rec()}]), ("server:member_add", [{"serverPublicId": "S1", "member": {"x": 1}}]),
    ("server:member_remove", [{"serverPublicId": "S1"}]), ("server:member_update", [{}]),
    ("server:role_create", [{"serverPublicId": "S1", "role": "x"}]), ("server:role_delete", [{}]),
    ("server:roles_order_update", [{"serverPublicId": "S1", "roles": [{"publicId": "R1", "position": "x"}]}]),
    ("user:update", [{}]), ("presence:update", [{"userPublicId": "U1"}]), ("activity:update", [{"userPublicId": "U1", "activity": 3}]),
    ("voice:state-update", [{"channelPublicId": "V1", "users": None}]), ("voice:state-update", [{"users": []}]),
    ("voice:state-update", [{"channelPublicId": "V1", "users": [{"muted": True}]}]),
    ("voice:user-left", [{"channelPublicId": "V1"}]), ("voice:user-state", [[]]), ("typing:start", [7]), ("dm:new", ["x"]),
]


@pytest.mark.parametrize(("event", "args"), MALFORMED)
def test_malformed_payloads_are_logged_and_dropped(event: str, args: list, client: FakeState, h: Parsers, caplog: pytest.LogCaptureFixture) -> None:
    with_guild(client)
    h.handle("voice:state-update", [{"channelPublicId": "V1", "users": [_vu("U1")]}])
    before = list(client.voice_states.cache)
    client.dispatched.clear()
    with caplog.at_level(logging.WARNING, logger="service_client.state"):
        h.handle(event, args)  # never raises
    assert client.dispatched == []
    assert any(event in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert list(client.voice_states.cache) == before  # a bad snapshot changes nothing


def test_unknown_events_logged_at_debug(h: Parsers, client: FakeState, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="service_client.state"):
        h.handle("server:join", [{}])
        h.handle("message:error", [{"nonce": "n"}])
    assert client.dispatched == []
    assert [r.levelno for r in caplog.records] == [logging.DEBUG, logging.DEBUG]


def test_every_protocol_event_is_handled(h: Parsers) -> None:
    # Read from the catalog: a new socket event needs no second list here.
    protocol = {e.event for e in endpoints.SOCKET_EVENTS if e.direction == endpoints.SERVICE_TO_CLIENT}
    assert len(protocol) >= 35
    assert set(h.events) == protocol
