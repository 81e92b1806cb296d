"""Permissions bits (protocol 3.10) and Member.permissions / has_permission."""

from __future__ import annotations

import pytest

from service_client.models import Guild, Member, Permissions, Role
from service_client.permissions import ALL, DEFAULT, parse_permissions

from state.fakes import FakeState, member_rec, role_rec, server_rec

BITS = {
    "MANAGE_SERVER": 0, "MANAGE_ROLES": 1, "MANAGE_CHANNELS": 2, "VIEW_AUDIT_LOG": 3, "MANAGE_INVITES": 4,
    "VIEW_MEMBERS": 5, "KICK_MEMBERS": 6, "BAN_MEMBERS": 7, "MANAGE_MESSAGES": 8, "VIEW_CHANNELS": 9,
    "SEND_MESSAGES": 10, "UPLOAD_FILES": 11, "MENTION_EVERYONE": 12, "CONNECT": 13, "SPEAK": 14,
    "MUTE_MEMBERS": 15, "DEAFEN_MEMBERS": 16, "MOVE_MEMBERS": 17, "PIN_MESSAGE": 18, "ADD_REACTION": 19,
    "MANAGE_APPLICATIONS": 20, "ADMINISTRATOR": 31,
}


def test_every_bit_matches_the_protocol_table() -> None:
    assert {p.name: p.value for p in Permissions} == {k: 1 << v for k, v in BITS.items()}


def test_default_and_all() -> None:
    assert int(DEFAULT) == int(Permissions.DEFAULT) == 552448
    assert int(ALL) == int(Permissions.ALL) == 2149580799
    expected = Permissions.VIEW_CHANNELS | Permissions.SEND_MESSAGES | Permissions.UPLOAD_FILES | Permissions.CONNECT | Permissions.SPEAK | Permissions.ADD_REACTION
    assert DEFAULT == expected
    total = 0
    for p in Permissions:
        total |= p
    assert total == ALL
    assert isinstance(Permissions.MANAGE_INVITES, int)


def test_parse_permissions() -> None:
    assert parse_permissions("552448") == DEFAULT
    assert parse_permissions(16) == Permissions.MANAGE_INVITES
    assert parse_permissions(None) == 0 and parse_permissions("x") == 0 and parse_permissions(-1) == 0
    assert parse_permissions(True) == 0
    assert Permissions.MANAGE_INVITES.to_wire() == "16"


def test_resolve_names_and_errors() -> None:
    assert Permissions.resolve("manage_invites") is Permissions.MANAGE_INVITES
    assert Permissions.resolve(3) == Permissions.MANAGE_SERVER | Permissions.MANAGE_ROLES
    with pytest.raises(ValueError, match="CREATE_INVITE"):
        Permissions.resolve("CREATE_INVITE")
    with pytest.raises(TypeError):
        Permissions.resolve(1.5)


def _setup(owner: str = "OWNER", roles: list | None = None) -> tuple[FakeState, Member]:
    client = FakeState()
    client.guilds.cache["S1"] = Guild(client, server_rec(owner=owner))
    member = Member(client, member_rec("U1", roles=roles if roles is not None else [role_rec("R1", "16"), role_rec("R2", "1024")]))
    return client, member


def test_permissions_or_of_roles() -> None:
    _, m = _setup()
    assert m.permissions == Permissions.MANAGE_INVITES | Permissions.SEND_MESSAGES
    assert m.has_permission("MANAGE_INVITES")
    assert m.has_permission(Permissions.SEND_MESSAGES, "manage_invites")
    assert not m.has_permission("MANAGE_INVITES", "BAN_MEMBERS")
    assert not m.has_permission(Permissions.ADMINISTRATOR)


def test_guild_not_cached_gives_zero() -> None:
    client = FakeState()
    m = Member(client, member_rec("U1", roles=[role_rec("R1", str(int(ALL)))]))
    assert m.permissions == 0
    assert not m.has_permission("SEND_MESSAGES")


def test_owner_gets_all() -> None:
    _, m = _setup(owner="U1", roles=[])
    assert m.permissions == ALL
    assert m.has_permission("BAN_MEMBERS", "ADMINISTRATOR")


def test_administrator_gets_all() -> None:
    _, m = _setup(roles=[role_rec("R1", str(1 << 31))])
    assert m.permissions == ALL


def test_bare_role_ids_grant_nothing_unless_cached_in_guild_roles() -> None:
    client, m = _setup(roles=["R9"])
    assert m.permissions == 0
    client.guilds.cache["S1"].roles.cache["R9"] = Role(client, role_rec("R9", "4"))
    assert m.permissions == Permissions.MANAGE_CHANNELS


def test_guild_role_cache_wins_over_embedded_copy() -> None:
    client, m = _setup(roles=[role_rec("R1", "16")])
    client.guilds.cache["S1"].roles.cache["R1"] = Role(client, role_rec("R1", "0"))
    assert m.permissions == 0


def test_has_permission_bad_input() -> None:
    _, m = _setup()
    with pytest.raises(ValueError):
        m.has_permission()
    with pytest.raises(ValueError):
        m.has_permission("NOPE")
    with pytest.raises(TypeError):
        m.has_permission(None)  # type: ignore[arg-type]
