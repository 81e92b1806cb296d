"""Models tested through their ``State`` alone: no Client, no socket, no server.

Every model holds a state (``model._state``); here it is :class:`FakeState`, which answers
requests from a table and records requests, emits, acknowledged calls, dispatches and
sends. Each test checks what a model asks of its state and what it makes of the answer.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

try:  # tests/ is not a package: pytest puts it on sys.path
    from state.fakes import FakeState, channel_rec, member_rec, message_rec, role_rec, server_rec, user_rec
except ImportError:  # pragma: no cover - if tests/ becomes a package
    from tests.state.fakes import (  # type: ignore[no-redef]
        FakeState,
        channel_rec,
        member_rec,
        message_rec,
        role_rec,
        server_rec,
        user_rec,
    )

from service_client import Client, GatewayError, Permissions, ServiceAPIError
from service_client.models import Channel, Guild, Member, Message, Role
from service_client.models import channel as channel_module


@pytest.fixture
def state() -> FakeState:
    return FakeState()


def _clients_alive() -> int:
    gc.collect()
    return sum(isinstance(obj, Client) for obj in gc.get_objects())


def test_models_hold_the_state_they_were_built_with_and_no_client_is_built(state: FakeState) -> None:
    before = _clients_alive()
    models: list[Any] = [
        Message(state, message_rec()),
        Member(state, member_rec()),
        Channel(state, channel_rec()),
        Guild(state, server_rec()),
        Role(state, role_rec()),
    ]
    for model in models:
        assert model._state is state
    guild = models[3]
    assert guild.roles._state is state and guild.invites._state is state and guild.emojis._state is state
    assert _clients_alive() == before


# -- Message ---------------------------------------------------------------------------------------


def test_message_reply_goes_to_the_state_send_with_the_reply_target(state: FakeState) -> None:
    message = Message(state, message_rec(mid="M9", cid="C7"))
    assert message.reply("pong") == "sent"
    assert state.sent == [("C7", "pong", {"content": None, "embeds": None, "reply_to_id": "M9"})]


def test_message_edit_delete_react_are_socket_emits(state: FakeState) -> None:
    message = Message(state, message_rec(mid="M1"))
    message.edit("new text")
    message.delete()
    message.react("👍")
    assert state.emitted == [
        ("message:edit", ({"messagePublicId": "M1", "content": "new text", "embeds": []},)),
        ("message:delete", ({"messagePublicId": "M1"},)),
        ("message:react", ({"messagePublicId": "M1", "emoji": "👍"},)),
    ]
    assert state.requests == []


def test_message_pin_and_unpin_request_the_singular_pin_route(state: FakeState) -> None:
    state.routes[("POST", "/chat/C1/pin/M1")] = None
    state.routes[("DELETE", "/chat/C1/pin/M1")] = None
    message = Message(state, message_rec(mid="M1", cid="C1"))
    message.pin()
    message.unpin()
    assert [(m, p) for m, p, _, _ in state.requests] == [("POST", "/chat/C1/pin/M1"), ("DELETE", "/chat/C1/pin/M1")]


def test_message_reactions_for_caches_the_users_through_the_state(state: FakeState) -> None:
    state.routes[("GET", "/chat/C1/reactions/M1/details")] = {
        "reactions": [{"emoji": "🎉", "count": 1, "users": [{"publicId": "U5", "name": "eve", "tag": "0005"}]}]
    }
    users = Message(state, message_rec(mid="M1", cid="C1")).reactions_for("🎉")
    assert [u.username for u in users] == ["eve"]
    assert state.users.cache["U5"] is users[0]
    assert state.requests[0][2] == {"emoji": "🎉"}


def test_message_member_is_read_from_the_cache_else_fetched_once(state: FakeState) -> None:
    state.routes[("GET", "/servers/S1/members/U1")] = member_rec("U1", "S1")
    message = Message(state, message_rec())
    member = message.member
    assert member is not None and member.id == "U1" and member.server_id == "S1"
    assert message.member is member
    assert len(state.requests) == 1


def test_message_member_is_none_when_the_author_left(state: FakeState) -> None:
    state.routes[("GET", "/servers/S1/members/U1")] = ServiceAPIError(404, "/servers/S1/members/U1", "{}", {})
    assert Message(state, message_rec()).member is None


# -- Member ----------------------------------------------------------------------------------------


def test_member_permissions_come_from_the_cached_guild_roles(state: FakeState) -> None:
    guild = Guild(state, server_rec("S1", owner="OWNER"))
    state.guilds.cache["S1"] = guild
    mods = Role(state, role_rec("R2", perms=str(int(Permissions.KICK_MEMBERS))))
    guild.roles.cache["R2"] = mods
    member = Member(state, member_rec("U1", "S1", roles=[role_rec("R1"), role_rec("R2", perms="0")]))
    assert member.has_permission("KICK_MEMBERS")
    assert member.has_permission("SEND_MESSAGES")
    assert not member.has_permission("BAN_MEMBERS")
    assert Member(state, member_rec("OWNER", "S1")).permissions == Permissions.ALL


def test_member_kick_and_ban_are_acknowledged_calls(state: FakeState) -> None:
    member = Member(state, member_rec("U1", "S1"))
    member.kick()
    member.ban(reason="spam", delete_history="1d")
    assert [(event, args[0]) for event, args, _ in state.calls] == [
        ("server:kick", {"serverPublicId": "S1", "userPublicId": "U1"}),
        ("server:ban", {"serverPublicId": "S1", "userPublicId": "U1", "reason": "spam", "deleteHistory": "1d"}),
    ]
    assert all(timeout == 10.0 for _, _, timeout in state.calls)


def test_member_ban_refused_by_the_service_raises_its_code(state: FakeState) -> None:
    state.acks["server:ban"] = [{"error": "servers.errors.cannot_ban_owner"}]
    with pytest.raises(GatewayError) as info:
        Member(state, member_rec("U1", "S1")).ban()
    assert info.value.code == "servers.errors.cannot_ban_owner"


def test_member_edit_asks_the_member_cache_with_role_ids(state: FakeState) -> None:
    state.routes[("PATCH", "/servers/S1/members/U1")] = None
    Member(state, member_rec("U1", "S1")).edit(roles=[Role(state, role_rec("R2")), "R3"], nickname="Al")
    assert state.requests == [("PATCH", "/servers/S1/members/U1", None, {"roles": ["R2", "R3"], "nickname": "Al"})]


# -- Channel ---------------------------------------------------------------------------------------


def test_channel_history_pages_through_the_state_newest_first(state: FakeState,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel_module, "HISTORY_PAGE", 3)
    pages = {
        None: {"messages": [message_rec(mid=f"M{i}") for i in (3, 4, 5)]},
        "M3": {"messages": [message_rec(mid=f"M{i}") for i in (1, 2)]},
    }
    state.routes[("GET", "/chat/C1")] = lambda route, params, json: pages[params["before"]]
    ids = [m.id for m in Channel(state, channel_rec("C1")).history(limit=5)]
    assert ids == ["M5", "M4", "M3", "M2", "M1"]
    assert [params for _, _, params, _ in state.requests] == [{"limit": 3, "before": None}, {"limit": 2, "before": "M3"}]


def test_channel_edit_replaces_the_cached_channel(state: FakeState) -> None:
    state.routes[("PATCH", "/channels/C1")] = None
    old = Channel(state, channel_rec("C1", "old"))
    state.channels.cache["C1"] = old
    new = old.edit(name="new")
    assert new is not old and new.name == "new" and state.channels.cache["C1"] is new
    assert old.name == "old"


def test_channel_delete_evicts_it_from_the_state_cache(state: FakeState) -> None:
    state.routes[("DELETE", "/channels/C1")] = None
    channel = Channel(state, channel_rec("C1"))
    state.channels.cache["C1"] = channel
    channel.delete()
    assert "C1" not in state.channels.cache


def test_channel_set_overwrite_resolves_the_target_from_the_state_caches(state: FakeState) -> None:
    state.routes[("POST", "/channels/C1/overrides")] = None
    guild = Guild(state, server_rec("S1"))
    state.guilds.cache["S1"] = guild
    guild.roles.cache["R1"] = Role(state, role_rec("R1"))
    channel = Channel(state, channel_rec("C1", sid="S1"))
    channel.set_overwrite("R1", allow=Permissions.SEND_MESSAGES, deny="VIEW_CHANNELS")
    assert state.requests == [("POST", "/channels/C1/overrides", None,
                               {"targetId": "R1", "type": "ROLE", "allow": "1024", "deny": "512"})]


def test_channel_overwrites_and_one_overwrite_delete(state: FakeState) -> None:
    state.routes[("GET", "/channels/C1/overrides")] = {"overrides": [
        {"id": "O1", "type": "MEMBER", "targetId": "U1", "targetName": "alice", "allow": "1024", "deny": "0"}]}
    state.routes[("DELETE", "/channels/C1/overrides/O1")] = None
    [overwrite] = Channel(state, channel_rec("C1")).overwrites()
    assert overwrite.allow == Permissions.SEND_MESSAGES and overwrite.target_id == "U1"
    overwrite.delete()
    assert state.requests[-1][:2] == ("DELETE", "/channels/C1/overrides/O1")


# -- Guild -----------------------------------------------------------------------------------------


def test_guild_kick_ban_unban_take_users_members_and_ids(state: FakeState) -> None:
    guild = Guild(state, server_rec("S1"))
    guild.kick(Member(state, member_rec("U1", "S1")))
    guild.ban("U2", reason="raid")
    guild.unban(Message(state, message_rec()).author)  # type: ignore[arg-type]
    assert [(e, a[0]["userPublicId"]) for e, a, _ in state.calls] == [
        ("server:kick", "U1"), ("server:ban", "U2"), ("server:unban", "U1")]
    with pytest.raises(TypeError, match="user must be"):
        guild.kick(Role(state, role_rec()))  # type: ignore[arg-type]
    assert len(state.calls) == 3


def test_guild_edit_sends_only_the_given_keywords(state: FakeState) -> None:
    state.routes[("PATCH", "/servers/S1")] = None
    guild = Guild(state, server_rec("S1"))
    guild.edit(image_url=None)
    assert state.requests == [("PATCH", "/servers/S1", None, {"imageUrl": None})]
    with pytest.raises(ValueError, match="needs name or image_url"):
        guild.edit()


def test_guild_fetch_member_count_reads_the_stats(state: FakeState) -> None:
    state.routes[("GET", "/servers/S1/stats")] = {"memberCount": 42, "roleCount": 3}
    guild = Guild(state, server_rec("S1"))
    assert guild.fetch_member_count() == 42
    assert guild.member_count == 3  # the count read when the server was fetched


def test_guild_fetch_bans_caches_the_banned_users(state: FakeState) -> None:
    state.routes[("GET", "/servers/S1/bans")] = {"bans": [
        {"publicId": "B1", "reason": "spam", "createdAt": "2026-01-02T03:04:05.678Z", "user": user_rec("U9", "mallory")}]}
    [ban] = Guild(state, server_rec("S1")).fetch_bans()
    assert ban.reason == "spam" and ban.user is state.users.cache["U9"]


def test_guild_roles_create_edit_delete_keep_the_role_cache(state: FakeState) -> None:
    guild = Guild(state, server_rec("S1"))
    state.routes[("POST", "/servers/S1/roles")] = {"role": role_rec("R5", name="mods")}
    state.routes[("PATCH", "/servers/S1/roles/R5")] = {"role": role_rec("R5", name="moderators")}
    state.routes[("DELETE", "/servers/S1/roles/R5")] = None
    role = guild.roles.create("mods", permissions=["KICK_MEMBERS", "BAN_MEMBERS"])
    assert state.requests[0][3] == {"name": "mods", "permissions": str(int(Permissions.KICK_MEMBERS | Permissions.BAN_MEMBERS))}
    assert guild.roles.cache["R5"] is role
    renamed = guild.roles.edit("R5", name="moderators")
    assert guild.roles.cache["R5"] is renamed and renamed.name == "moderators"
    guild.roles.delete("R5")
    assert "R5" not in guild.roles.cache


# -- Role ------------------------------------------------------------------------------------------


def test_role_edit_and_delete_go_through_the_cached_guild_roles(state: FakeState) -> None:
    guild = Guild(state, server_rec("S1"))
    state.guilds.cache["S1"] = guild
    role = Role(state, role_rec("R1", sid="S1"))
    guild.roles.cache["R1"] = role
    state.routes[("PATCH", "/servers/S1/roles/R1")] = {"role": role_rec("R1", sid="S1", hoist=True)}
    state.routes[("DELETE", "/servers/S1/roles/R1")] = None
    edited = role.edit(hoist=True)
    assert edited.hoist and guild.roles.cache["R1"] is edited
    role.delete()
    assert "R1" not in guild.roles.cache


def test_role_of_an_uncached_guild_still_edits_through_the_state(state: FakeState) -> None:
    state.routes[("PATCH", "/servers/S7/roles/R1")] = {"role": role_rec("R1", sid="S7", name="renamed")}
    edited = Role(state, role_rec("R1", sid="S7")).edit(name="renamed")
    assert edited.name == "renamed" and edited._state is state
    assert state.requests == [("PATCH", "/servers/S7/roles/R1", None, {"name": "renamed"})]


def test_role_without_a_server_refuses_before_any_request(state: FakeState) -> None:
    role = Role(state, {"publicId": "R1", "name": "loose"})
    with pytest.raises(ValueError, match="server"):
        role.delete()
    assert state.requests == []
