"""Kick, ban and unban from the client's side: a real bot Client logged in to the emulator, the
socket emits read from its emit journal, the effects seen by real listeners and REST reads."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from service_client import (
    Client,
    GatewayError,
    GatewayTimeoutError,
    Guild,
    Member,
    Permissions,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
)

from .conftest import Recorder, sid


def grant(bot: Client, emulator: Any, world: Any, permissions: Permissions) -> None:
    """Give the bot a role with ``permissions`` and wait until its member cache shows it."""
    role = emulator.create_role(sid(world), "moderators", int(permissions))["role"]["publicId"]
    everyone = [r["publicId"] for r in emulator.member(sid(world), world.bot["publicId"])["roles"]]
    updated = Recorder(bot, "guild_member_update")
    emulator.update_member(sid(world), world.bot["publicId"], roles=[*everyone, role])
    assert updated.get().has_permission(permissions)


def carol(bot: Client, emulator: Any, world: Any) -> Member:
    """Add a third user to the server; returns the bot's cached Member for her."""
    added = Recorder(bot, "guild_member_add")
    user = emulator.create_user("carol")["user"]
    emulator.add_member(sid(world), user["publicId"])
    member = added.get()
    assert isinstance(member, Member) and member.id == user["publicId"]
    return member


def moderation_emits(emulator: Any) -> list[tuple[str, Any]]:
    return [(e["event"], e["payload"]) for e in emulator.emits() if e["event"].startswith("server:")]


def test_kick_removes_the_member_and_fires_guild_member_remove(bot: Client, emulator: Any, world: Any) -> None:
    grant(bot, emulator, world, Permissions.KICK_MEMBERS)
    member = carol(bot, emulator, world)
    removed = Recorder(bot, "guild_member_remove")
    guild = bot.guilds.cache[sid(world)]
    guild.kick(member)
    gone = removed.get()
    assert gone == member and gone.reason == "kicked" and gone.display_name == member.display_name
    assert bot.members.get(sid(world), member.id) is None
    with pytest.raises(LookupError):
        emulator.member(sid(world), member.id)
    assert moderation_emits(emulator) == [("server:kick", {"serverPublicId": sid(world),
                                                           "userPublicId": member.id})]
    # kicked, not banned: she may come back, and Member.kick kicks her again
    added = Recorder(bot, "guild_member_add")
    emulator.add_member(sid(world), member.id)
    again = added.get()
    again.kick()
    assert removed.get() == again and bot.members.get(sid(world), member.id) is None
    assert emulator.bans(sid(world)) == []


def test_ban_fires_guild_ban_add_and_is_listed_then_unban_fires_guild_ban_remove(
    bot: Client, emulator: Any, world: Any
) -> None:
    grant(bot, emulator, world, Permissions.BAN_MEMBERS)
    member = carol(bot, emulator, world)
    removed = Recorder(bot, "guild_member_remove")
    banned = Recorder(bot, "guild_ban_add")
    lifted = Recorder(bot, "guild_ban_remove")
    guild = bot.guilds.cache[sid(world)]
    member.ban(reason="spam", delete_history="1d")
    gone = removed.get()
    assert gone == member and gone.reason == "banned"
    assert banned.get()["memberPublicId"] == member.id
    bans = guild.fetch_bans()
    assert [(b.user.id, b.reason) for b in bans] == [(member.id, "spam")]
    with pytest.raises(GatewayError) as info:
        guild.ban(member.id)
    assert info.value.code == "servers.errors.already_banned" and info.value.event == "server:ban"
    guild.unban(bans[0].user)
    assert lifted.get()["userPublicId"] == member.id
    assert guild.fetch_bans() == []
    with pytest.raises(GatewayError) as info:
        guild.unban(member.id)
    assert info.value.code == "servers.errors.not_banned"
    assert moderation_emits(emulator) == [
        ("server:ban", {"serverPublicId": sid(world), "userPublicId": member.id, "reason": "spam",
                        "deleteHistory": "1d"}),
        ("server:ban", {"serverPublicId": sid(world), "userPublicId": member.id}),
        ("server:unban", {"serverPublicId": sid(world), "userPublicId": member.id}),
        ("server:unban", {"serverPublicId": sid(world), "userPublicId": member.id}),
    ]


def test_the_owner_cannot_be_kicked_or_banned(bot: Client, emulator: Any, world: Any) -> None:
    grant(bot, emulator, world, Permissions.KICK_MEMBERS | Permissions.BAN_MEMBERS)
    guild = bot.guilds.cache[sid(world)]
    with pytest.raises(GatewayError) as info:
        guild.kick(world.human["publicId"])
    assert info.value.code == "servers.errors.cannot_kick_owner"
    assert "cannot_kick_owner" in str(info.value) and not isinstance(info.value, TimeoutError)
    with pytest.raises(GatewayError) as info:
        guild.ban(world.human["publicId"])
    assert info.value.code == "servers.errors.cannot_ban_owner"
    emulator.member(sid(world), world.human["publicId"])   # still a member


def test_without_the_permission_the_service_refuses(bot: Client, emulator: Any, world: Any) -> None:
    member = carol(bot, emulator, world)
    guild = bot.guilds.cache[sid(world)]
    for call in (lambda: guild.kick(member), lambda: guild.ban(member), lambda: guild.unban(member)):
        with pytest.raises(GatewayError) as info:
            call()
        assert info.value.code == "servers.errors.missing_permission"
    emulator.member(sid(world), member.id)   # still a member
    assert emulator.bans(sid(world)) == []


def test_bad_arguments_raise_at_the_call_site_and_send_nothing(bot: Client, emulator: Any, world: Any) -> None:
    guild = bot.guilds.cache[sid(world)]
    cases: list[tuple[Any, type[Exception], str]] = [
        (lambda: guild.kick(42), TypeError, "user must be a User, a Member or a user id"),
        (lambda: guild.kick(""), ValueError, "user must not be empty"),
        (lambda: guild.unban(None), TypeError, "user must be"),
        (lambda: guild.ban("u1", reason=5), TypeError, "reason must be a str or None"),
        (lambda: guild.ban("u1", reason="  "), ValueError, "reason must not be empty"),
        (lambda: guild.ban("u1", delete_history=7), TypeError, "delete_history must be one of"),
        (lambda: guild.ban("u1", delete_history="2d"), ValueError,
         "delete_history must be one of 'none', '1d', '7d', '14d', '30d' or None, got '2d'"),
    ]
    for call, kind, text in cases:
        with pytest.raises(kind, match=text.replace("(", r"\(").replace(")", r"\)")):
            call()
    assert moderation_emits(emulator) == []


def test_when_not_connected_nothing_is_sent_and_service_auth_error_is_raised() -> None:
    client = Client(base_url="http://127.0.0.1:9/v2", socket_url="http://127.0.0.1:9")
    try:
        guild = Guild(client, {"publicId": "s1", "name": "x"})
        for call in (lambda: guild.kick("u1"), lambda: guild.ban("u1"), lambda: guild.unban("u1")):
            with pytest.raises(ServiceAuthError, match="not connected"):
                call()
    finally:
        client.destroy()


class _SilentService:
    """A connection state stand-in whose acknowledged emits never get an answer."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any, float]] = []

    def call(self, event: str, payload: Any, *, timeout: float) -> list[Any]:
        self.sent.append((event, payload, timeout))
        raise ServiceTimeoutError(f"no ack for {event!r} within {timeout:g} s")


def test_no_acknowledgement_in_10_s_raises_code_timeout() -> None:
    from service_client.models import _moderation

    silent = _SilentService()
    with pytest.raises(GatewayTimeoutError) as info:
        _moderation.kick(silent, "s1", "u1")  # type: ignore[arg-type]
    assert info.value.code == "TIMEOUT" and info.value.event == "server:kick"
    assert isinstance(info.value, ServiceTimeoutError) and isinstance(info.value, TimeoutError)
    assert silent.sent == [("server:kick", {"serverPublicId": "s1", "userPublicId": "u1"}, 10.0)]


def test_gateway_errors_round_trip_through_pickle() -> None:
    for err in (GatewayError("servers.errors.not_found", event="server:ban"),
                GatewayTimeoutError(event="server:unban")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and (back.code, back.event, str(back)) == (err.code, err.event, str(err))
        assert isinstance(back, ServiceError)


def test_fetch_member_of_a_kicked_user_raises_the_documented_404(bot: Client, emulator: Any, world: Any) -> None:
    from service_client import ServiceAPIError

    grant(bot, emulator, world, Permissions.KICK_MEMBERS)
    member = carol(bot, emulator, world)
    guild = bot.guilds.cache[sid(world)]
    assert guild.fetch_member(member.id).id == member.id
    removed = Recorder(bot, "guild_member_remove")
    guild.kick(member.id)
    removed.get()
    with pytest.raises(ServiceAPIError) as info:
        guild.fetch_member(member.id)
    assert info.value.status == 404
    assert "404" in (Guild.fetch_member.__doc__ or "")
