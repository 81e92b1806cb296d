"""Managers against a recording fake client: one test per bullet of the spec's
Manager convention and Managers tables (plus the EXT managers)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

try:  # tests/ is not a package: pytest puts it on sys.path
    from state.fakes import (
        FakeState,
        channel_rec,
        connection_state,
        member_rec,
        message_rec,
        role_rec,
        server_rec,
        user_rec,
    )
except ImportError:  # pragma: no cover - if tests/ becomes a package
    from tests.state.fakes import (  # type: ignore[no-redef]
        FakeState,
        channel_rec,
        connection_state,
        member_rec,
        message_rec,
        role_rec,
        server_rec,
        user_rec,
    )

from service_client.client.operations import create_dm, fetch_invite, invite_code, search_messages
from service_client.errors import ServiceAPIError
from service_client.models import Channel, DMChannel, Guild, Invite, Member, Message, Permissions, Role, User


@pytest.fixture
def client() -> FakeState:
    return FakeState()


def as_bot(client: FakeState, uid: str = "BOT", bot: bool = True) -> User:
    client.user = User(client, user_rec(uid, "bot", isBot=bot))
    client.users._add(client.user)
    return client.user


def err(status: int, path: str = "/x") -> ServiceAPIError:
    return ServiceAPIError(status, path, '{"error": "e"}', {"error": "e"})


# -- manager convention -----------------------------------------------------------

def test_fetch_always_requests_even_when_cached(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1")] = server_rec("S1")
    client.routes[("GET", "/channels/C1")] = channel_rec("C1")
    client.routes[("GET", "/servers/S1/members/U1")] = member_rec("U1", "S1")
    for _ in range(3):
        client.guilds.fetch("S1")
        client.channels.fetch("C1")
        client.members.fetch("S1", "U1")
    assert len(client.requests) == 9


def test_fetch_with_cache_false_writes_nothing_anywhere(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1")] = server_rec("S1")
    client.routes[("GET", "/channels/C1")] = channel_rec("C1")
    client.routes[("GET", "/servers/S1/members/U1")] = member_rec("U1", "S1")
    client.routes[("GET", "/servers/S1/categories")] = {"categories": [], "uncategorizedChannels": [channel_rec("C2")]}
    client.routes[("GET", "/users/U1")] = user_rec("U1")
    client.guilds.fetch("S1", cache=False)
    client.channels.fetch("C1", cache=False)
    client.channels.fetch_for_guild("S1", cache=False)
    m = client.members.fetch("S1", "U1", cache=False)
    client.users.fetch("U1", cache=False)
    assert m.user.id == "U1"
    for manager in (client.guilds, client.channels, client.members, client.users, client.voice_states):
        assert len(manager.cache) == 0, manager


def test_fetch_never_purges(client: FakeState) -> None:
    client.channels.cache["OLD"] = Channel(client, channel_rec("OLD", sid="S1"))
    client.routes[("GET", "/servers/S1/categories")] = {"categories": [], "uncategorizedChannels": [channel_rec("C1")]}
    client.channels.fetch_for_guild("S1")
    assert set(client.channels.cache) == {"OLD", "C1"}


def test_resolve_never_requests(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    assert client.guilds.resolve("S1") is None
    client.guilds.cache["S1"] = g
    assert client.guilds.resolve("S1") is g
    other = Guild(client, server_rec("S1"))
    assert client.guilds.resolve(other) is g  # the cached entry for a model
    assert client.guilds.resolve(Guild(client, server_rec("S2"))).id == "S2"
    assert client.guilds.resolve(["unhashable"]) is None
    assert client.guilds.resolve_id(g) == "S1"
    assert client.requests == []


def test_bad_ids_raise_before_any_request(client: FakeState) -> None:
    for call, name in [
        (lambda: client.guilds.fetch(""), "server_id"),
        (lambda: client.guilds.fetch(5), "server_id"),  # type: ignore[arg-type]
        (lambda: client.channels.fetch(None), "channel_id"),  # type: ignore[arg-type]
        (lambda: client.channels.fetch_for_guild(""), "server_id"),
        (lambda: client.members.fetch("S1", ""), "user_id"),
        (lambda: client.users.fetch(3), "user_id"),  # type: ignore[arg-type]
        (lambda: client.guilds.fetch("S1", cache="yes"), "cache"),  # type: ignore[arg-type]
    ]:
        with pytest.raises((TypeError, ValueError), match=name):
            call()
    assert client.requests == []


def test_ids_are_percent_encoded(client: FakeState) -> None:
    client.routes[("GET", "/servers/..%2Fx%3Fa/members/b%20c")] = member_rec("b c", "../x?a")
    client.members.fetch("../x?a", "b c")
    assert client.requests[0][1] == "/servers/..%2Fx%3Fa/members/b%20c"


# -- ChannelManager ----------------------------------------------------------------------

def test_channels_fetch_returns_a_new_channel_each_call_and_overwrites(client: FakeState) -> None:
    client.routes[("GET", "/channels/C1")] = channel_rec("C1", "general")
    a = client.channels.fetch("C1")
    b = client.channels.fetch("C1")
    assert a is not b and isinstance(b, Channel)
    assert client.channels.cache["C1"] is b
    assert (b.name, b.type, b.server_id) == ("general", "TEXT", "S1")


def test_channels_fetch_dm_record_gives_dm_channel(client: FakeState) -> None:
    client.routes[("GET", "/channels/D1")] = {"publicId": "D1", "type": "DM", "serverPublicId": None, "recipient": user_rec("U2", "bob")}
    dm = client.channels.fetch("D1")
    assert isinstance(dm, DMChannel) and dm.recipient is not None and dm.recipient.id == "U2"


@pytest.mark.parametrize("status", [404, 403])
def test_channels_fetch_errors_surface(client: FakeState, status: int) -> None:
    client.routes[("GET", "/channels/C1")] = err(status, "/channels/C1")
    with pytest.raises(ServiceAPIError) as info:
        client.channels.fetch("C1")
    assert info.value.status == status
    assert "C1" not in client.channels.cache


def test_fetch_for_guild_one_request_flattened_in_order(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1/categories")] = {
        "categories": [
            {"publicId": "K1", "name": "A", "position": 0, "isPrivate": False, "channels": [{"publicId": "C1", "name": "a", "type": "TEXT"}, {"publicId": "C2", "name": "b", "type": "VOICE"}]},
            {"publicId": "K2", "name": "B", "position": 1, "isPrivate": False, "channels": [{"publicId": "C3", "name": "c", "type": "TEXT"}]},
        ],
        "uncategorizedChannels": [{"publicId": "C4", "name": "d", "type": "TEXT"}],
    }
    channels = client.channels.fetch_for_guild("S1")
    assert client.requests == [("GET", "/servers/S1/categories", None, None)]
    assert [c.id for c in channels] == ["C1", "C2", "C3", "C4"]
    assert all(c.server_id == "S1" for c in channels)
    assert [c.category_id for c in channels] == ["K1", "K1", "K2", None]
    assert set(client.channels.cache) == {"C1", "C2", "C3", "C4"}


@pytest.mark.parametrize("answer", [{"categories": [], "uncategorizedChannels": []}, {}, None])
def test_fetch_for_guild_empty_is_a_list(client: FakeState, answer: Any) -> None:
    client.routes[("GET", "/servers/S1/categories")] = answer
    assert client.channels.fetch_for_guild("S1") == []


def test_guild_channels_and_fetch_channels(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    client.routes[("GET", "/servers/S1/categories")] = {"categories": [], "uncategorizedChannels": [channel_rec("C1", sid=None)]}
    assert len(g.channels) == 0
    assert [c.id for c in g.fetch_channels()] == ["C1"]
    assert list(g.channels) == ["C1"]
    assert len(client.requests) == 1


def test_channels_create(client: FakeState) -> None:
    client.routes[("POST", "/servers/S1/channels")] = {"channel": channel_rec("C9", "new", type="VOICE")}
    ch = client.channels.create("S1", "new", type="VOICE")
    assert client.requests == [("POST", "/servers/S1/channels", None, {"name": "new", "type": "VOICE"})]
    assert client.channels.cache["C9"] is ch
    with pytest.raises(ValueError, match="type"):
        client.channels.create("S1", "x", type="DM")


# -- GuildManager ---------------------------------------------------------------------------

def test_guilds_fetch_new_each_call_keeps_role_cache(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1")] = server_rec("S1", "One")
    a = client.guilds.fetch("S1")
    a.roles.cache["R1"] = Role(client, role_rec("R1"))
    b = client.guilds.fetch("S1")
    assert a is not b and client.guilds.cache["S1"] is b
    assert "R1" in b.roles.cache and b.name == "One"


@pytest.mark.parametrize("status", [404, 403])
def test_guilds_fetch_errors(client: FakeState, status: int) -> None:
    client.routes[("GET", "/servers/S1")] = err(status)
    with pytest.raises(ServiceAPIError):
        client.guilds.fetch("S1")


def test_get_or_fetch_cached_no_request(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    client.guilds.cache["S1"] = g
    assert client.guilds.get_or_fetch("S1") is g
    assert client.requests == []


def test_get_or_fetch_fetches_when_missing(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1")] = server_rec("S1")
    g = client.guilds.get_or_fetch("S1")
    assert g is not None and client.guilds.cache["S1"] is g and len(client.requests) == 1


@pytest.mark.parametrize("bad", ["S404", "", None, 5, ["x"]])
def test_get_or_fetch_never_raises(client: FakeState, bad: Any) -> None:
    client.routes[("GET", "/servers/S404")] = RuntimeError("network down")
    assert client.guilds.get_or_fetch(bad) is None


def test_fetch_all_is_one_plus_n_with_member_fetches_submitted(client: FakeState) -> None:
    as_bot(client)
    client.routes[("GET", "/servers")] = {"servers": [server_rec("S1"), server_rec("S2"), server_rec("S3")]}
    for sid in ("S1", "S2", "S3"):
        client.routes[("GET", f"/servers/{sid}/members/BOT")] = member_rec("BOT", sid)
    guilds = client.guilds.fetch_all()
    assert [g.id for g in guilds] == ["S1", "S2", "S3"]
    assert len(client.requests) == 1 + 3
    assert client.submitted == [("GET", "/servers/S1/members/BOT"), ("GET", "/servers/S2/members/BOT"), ("GET", "/servers/S3/members/BOT")]
    assert set(client.guilds.cache) == {"S1", "S2", "S3"}
    assert set(client.members.cache) == {("S1", "BOT"), ("S2", "BOT"), ("S3", "BOT")}
    assert client.members.get("S1", "BOT").user is client.users.cache["BOT"]  # type: ignore[union-attr]


def test_fetch_all_member_failures_are_isolated_and_logged(client: FakeState, caplog: pytest.LogCaptureFixture) -> None:
    as_bot(client)
    client.routes[("GET", "/servers")] = {"servers": [server_rec("S1"), server_rec("S2"), server_rec("S3")]}
    client.routes[("GET", "/servers/S1/members/BOT")] = err(500)
    client.routes[("GET", "/servers/S2/members/BOT")] = member_rec("BOT", "S2")
    client.routes[("GET", "/servers/S3/members/BOT")] = {"garbage": True}
    with caplog.at_level(logging.WARNING, logger="service_client.managers"):
        guilds = client.guilds.fetch_all()
    assert len(guilds) == 3 and set(client.guilds.cache) == {"S1", "S2", "S3"}
    assert list(client.members.cache) == [("S2", "BOT")]
    assert sum(1 for r in caplog.records if r.levelno == logging.WARNING) == 2


def test_fetch_all_skips_member_preload_without_user(client: FakeState) -> None:
    client.routes[("GET", "/servers")] = {"servers": [server_rec("S1"), server_rec("S2")]}
    client.guilds.fetch_all()
    assert len(client.requests) == 1 and len(client.members.cache) == 0
    assert set(client.guilds.cache) == {"S1", "S2"}


def test_fetch_all_cache_false_one_request_nothing_cached(client: FakeState) -> None:
    as_bot(client)
    client.routes[("GET", "/servers")] = {"servers": [server_rec("S1"), server_rec("S2")]}
    guilds = client.guilds.fetch_all(cache=False)
    assert len(guilds) == 2 and len(client.requests) == 1
    assert len(client.guilds.cache) == 0 and len(client.members.cache) == 0


def test_fetch_all_never_purges_and_handles_no_servers(client: FakeState) -> None:
    client.guilds.cache["OLD"] = Guild(client, server_rec("OLD"))
    client.routes[("GET", "/servers")] = {"servers": []}
    assert client.guilds.fetch_all() == []
    assert "OLD" in client.guilds.cache


def test_create_by_a_bot_raises_before_any_request(client: FakeState) -> None:
    as_bot(client)
    with pytest.raises(PermissionError, match=r"^Bots cannot create servers\.$"):
        client.guilds.create("x")
    assert client.requests == []


def test_create_by_a_user(client: FakeState) -> None:
    as_bot(client, "HUMAN", bot=False)
    client.routes[("POST", "/servers")] = {"server": server_rec("S5", "Mine")}
    g = client.guilds.create("Mine", icon_url="http://i")
    assert client.requests == [("POST", "/servers", None, {"name": "Mine", "iconUrl": "http://i"})]
    assert client.guilds.cache["S5"] is g
    client.guilds.create("Other")
    assert client.requests[-1][3] == {"name": "Other"}
    with pytest.raises(ValueError, match="name"):
        client.guilds.create("")


# -- MemberManager ------------------------------------------------------------------------------

def test_members_fetch_keyed_by_server_and_user(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1/members/U1")] = member_rec("U1", "S1")
    client.routes[("GET", "/servers/S2/members/U1")] = member_rec("U1", "S2")
    a = client.members.fetch("S1", "U1")
    b = client.members.fetch("S2", "U1")
    assert isinstance(a, Member) and a.id == "U1" and a.membership_id == "M-U1"
    assert client.members.cache[("S1", "U1")] is a and client.members.get("S2", "U1") is b
    assert client.members.resolve("S1", "U1") is a and client.members.resolve(("S2", "U1")) is b
    assert a.user is b.user is client.users.cache["U1"]
    assert {uid: m.server_id for uid, m in client.members.for_guild("S1").items()} == {"U1": "S1"}


def test_members_fetch_404(client: FakeState) -> None:
    client.routes[("GET", "/servers/S1/members/U1")] = err(404)
    with pytest.raises(ServiceAPIError):
        client.members.fetch("S1", "U1")


@pytest.mark.parametrize("wrap", [lambda ms: {"members": ms}, lambda ms: ms])
def test_members_fetch_all_both_shapes(client: FakeState, wrap: Any) -> None:
    client.routes[("GET", "/servers/S1/members")] = wrap([member_rec("U1", "S1"), member_rec("U2", "S1")])
    assert [m.id for m in client.members.fetch_all("S1")] == ["U1", "U2"]
    assert len(client.members.cache) == 2


def test_members_edit_sends_role_ids(client: FakeState) -> None:
    client.routes[("PATCH", "/servers/S1/members/U1")] = None
    client.members.edit("S1", "U1", roles=[Role(client, role_rec("R1")), "R2"], nickname=None)
    assert client.requests == [("PATCH", "/servers/S1/members/U1", None, {"roles": ["R1", "R2"], "nickname": None})]


# -- UserManager / VoiceStateManager -------------------------------------------------------------

def test_users_fetch_and_upsert_in_place(client: FakeState) -> None:
    cached = client.users.upsert(user_rec("U1", "old"))
    client.routes[("GET", "/users/U1")] = user_rec("U1", "new")
    u = client.users.fetch("U1")
    assert u is cached and cached.username == "new"


def test_voice_states_keyed_by_user(client: FakeState) -> None:
    client.voice_states.replace_channel("V1", [{"userPublicId": "U1"}, {"userPublicId": "U2"}])
    client.voice_states.replace_channel("V2", [{"userPublicId": "U2"}])  # moved
    assert {k: s.channel_id for k, s in client.voice_states.cache.items()} == {"U1": "V1", "U2": "V2"}
    assert list(client.voice_states.in_channel("V1")) == ["U1"]  # a Collection keyed by user id
    assert client.voice_states.in_channel("V1")["U1"].channel_id == "V1"
    assert client.voice_states.remove("U1", "V9") is None and "U1" in client.voice_states.cache
    assert client.voice_states.remove("U1").user_id == "U1"  # type: ignore[union-attr]


# -- RoleManager / InviteManager ------------------------------------------------------------------

def test_roles_fetch_all_upserts_without_purge(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    g.roles.cache["OLD"] = Role(client, role_rec("OLD"))
    client.routes[("GET", "/servers/S1/roles")] = {"roles": [role_rec("R1", "16"), role_rec("R2")]}
    roles = g.roles.fetch_all()
    assert [r.id for r in roles] == ["R1", "R2"]
    assert set(g.roles.cache) == {"OLD", "R1", "R2"}
    assert g.roles.fetch("R1").permissions == Permissions.MANAGE_INVITES
    with pytest.raises(ServiceAPIError) as info:
        g.roles.fetch("NOPE")
    assert info.value.status == 404
    g.roles.fetch_all(cache=False)
    assert len(client.requests) == 4


def test_roles_create_edit_delete(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    client.routes[("POST", "/servers/S1/roles")] = {"role": role_rec("R5", "16")}
    client.routes[("PATCH", "/servers/S1/roles/R5")] = {"role": role_rec("R5", "1040", name="mods")}
    client.routes[("DELETE", "/servers/S1/roles/R5")] = None
    r = g.roles.create("mods", color="#ABCDEF", hoist=True, permissions=["MANAGE_INVITES"])
    assert client.requests[-1][3] == {"name": "mods", "color": "#abcdef", "hoist": True, "permissions": "16"}
    assert g.roles.cache["R5"] is r
    g.roles.edit("R5", color=None, permissions=Permissions.MANAGE_INVITES | Permissions.SEND_MESSAGES)
    assert client.requests[-1][3] == {"color": None, "permissions": "1040"}
    assert g.roles.cache["R5"].name == "mods"
    g.roles.delete("R5")
    assert "R5" not in g.roles.cache
    with pytest.raises(ValueError):
        g.roles.edit("R5")


def test_invites_fetch_all_sends_all_true_create_revoke(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    client.guilds.cache["S1"] = g
    inv_rec = {"code": "AAA", "uses": 2, "maxUses": None, "expiresAt": None, "inviter": user_rec(), "channel": {"publicId": "C1", "name": "g"}}
    client.routes[("GET", "/servers/S1/invites")] = {"invites": [inv_rec]}
    client.routes[("POST", "/servers/S1/invites")] = {"invite": dict(inv_rec, code="BBB", uses=0)}
    client.routes[("DELETE", "/invites/AAA")] = None
    invites = g.invites.fetch_all()
    assert client.requests[0] == ("GET", "/servers/S1/invites", {"all": "true"}, None)
    assert [i.code for i in invites] == ["AAA"] and invites[0].uses == 2 and invites[0].guild is g
    created = g.invites.create("C1", max_age=3600, max_uses=5)
    assert client.requests[1][3] == {"channelPublicId": "C1", "maxAge": 3600, "maxUses": 5}
    assert set(g.invites.cache) == {"AAA", "BBB"} and created.uses == 0
    g.invites.revoke("AAA")
    assert set(g.invites.cache) == {"BBB"}


def test_invite_revoke_without_permission_raises_403(client: FakeState) -> None:
    client.routes[("DELETE", "/invites/AAA")] = err(403, "/invites/AAA")
    inv = Invite(client, {"code": "AAA"})
    with pytest.raises(ServiceAPIError) as info:
        inv.revoke()
    assert info.value.status == 403


# -- operations -----------------------------------------------------------------------------------

def test_create_dm(client: FakeState) -> None:
    client.routes[("GET", "/channels/dm/U2")] = {"publicId": "D1", "type": "DM", "recipient": user_rec("U2", "bob", friendshipStatus="NONE")}
    dm = create_dm(client, "U2")  # type: ignore[arg-type]
    assert isinstance(dm, DMChannel) and dm.recipient is client.users.cache["U2"]
    assert client.channels.cache["D1"] is dm and dm.server_id is None and dm.type == "DM"
    with pytest.raises(ValueError, match="user_id"):
        create_dm(client, "")  # type: ignore[arg-type]


@pytest.mark.parametrize("given", ["AbC123", "https://site.example/invite/AbC123", "http://other/x/invite/AbC123?utm=1", "/invite/AbC123"])
def test_fetch_invite_code_or_link(client: FakeState, given: str) -> None:
    client.routes[("GET", "/invites/AbC123")] = {"code": "AbC123", "uses": 1, "server": {"publicId": "S1", "name": "G"}}
    inv = fetch_invite(client, given)  # type: ignore[arg-type]
    assert inv.code == "AbC123" and inv.uses == 1 and inv.guild is not None and inv.guild.name == "G"
    assert client.requests == [("GET", "/invites/AbC123", None, None)]


def test_invite_code_errors() -> None:
    assert invite_code("  Ab ") == "Ab"
    with pytest.raises(ValueError):
        invite_code("https://site.example/servers/1")
    with pytest.raises(ValueError):
        invite_code("")
    with pytest.raises(TypeError):
        invite_code(3)  # type: ignore[arg-type]


def test_search_messages(client: FakeState) -> None:
    client.routes[("GET", "/chat/C1/search")] = {"messages": [message_rec("M1", "a &lt;b&gt;"), message_rec("M2")]}
    found = search_messages(client, "C1", "hello world", limit=10)  # type: ignore[arg-type]
    assert [m.id for m in found] == ["M1", "M2"] and all(isinstance(m, Message) for m in found)
    assert found[0].content == "a <b>"
    assert client.requests[-1][2] == {"q": "hello world", "limit": 10}
    search_messages(client, "C1", "x")  # type: ignore[arg-type]
    assert client.requests[-1][2] == {"q": "x"}  # limit omitted


def test_search_messages_empty_and_bad_input(client: FakeState) -> None:
    client.routes[("GET", "/chat/C1/search")] = {"messages": []}
    assert search_messages(client, "C1", "x") == []  # type: ignore[arg-type]
    client.routes[("GET", "/chat/C1/search")] = {}
    assert search_messages(client, "C1", "x") == []  # type: ignore[arg-type]
    n = len(client.requests)
    for kwargs, name in [({"limit": 0}, "limit"), ({"limit": "5"}, "limit"), ({"limit": True}, "limit")]:
        with pytest.raises((TypeError, ValueError), match=name):
            search_messages(client, "C1", "x", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query"):
        search_messages(client, "C1", "")  # type: ignore[arg-type]
    assert len(client.requests) == n


def test_reconcile_evicts_left_and_announces_joined(client: FakeState) -> None:
    state = connection_state(client)
    state.user = User(state, user_rec("BOT", "bot", isBot=True))
    old = Guild(state, server_rec("S1"))
    state.guilds.cache["S1"] = old
    state.guilds.cache["S2"] = Guild(state, server_rec("S2"))
    old.roles.cache["R1"] = Role(state, role_rec("R1"))
    state.members.from_record(member_rec("BOT", "S2"), None, cache=True)
    client.routes[("GET", "/servers")] = {"servers": [server_rec("S1", "Renamed"), server_rec("S3")]}
    client.routes[("GET", "/servers/S3/members/BOT")] = member_rec("BOT", "S3")
    state.begin_reconcile()
    state.reconcile_guilds()
    assert set(state.guilds.cache) == {"S1", "S3"}
    assert state.guilds.cache["S1"].name == "Renamed" and "R1" in state.guilds.cache["S1"].roles.cache
    assert set(state.members.cache) == {("S3", "BOT")}
    assert [(e, a[0].id, k) for e, a, k in client.dispatched] == [("guild_delete", "S2", "S2"), ("guild_create", "S3", "S3")]
    assert [r[1] for r in client.requests] == ["/servers", "/servers/S3/members/BOT"]
