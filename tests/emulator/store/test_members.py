"""MemberRepository alone (with users and servers): members, roles, bans, permissions."""

from __future__ import annotations

import pytest

from service_client.emulator.store import Forbidden
from service_client.permissions import Permissions


@pytest.fixture
def guild(users, servers):
    owner = users.create_user("owner")[0]["publicId"]
    other = users.create_user("other")[0]["publicId"]
    return servers.create_server("Guild", owner), owner, other


def test_roles_add_up_to_a_members_permissions_and_the_owner_holds_all(members, guild):
    sid, owner, other = guild
    assert members.add_member(sid, other) is True and members.add_member(sid, other) is False
    assert not members.has_perm(sid, other, "MANAGE_ROLES")
    role = members.create_role(sid, "mod", int(Permissions.MANAGE_ROLES))
    members.set_member_roles(sid, other, [role["publicId"]])
    assert members.has_perm(sid, other, "MANAGE_ROLES")
    assert members.has_perm(sid, owner, "BAN_MEMBERS")
    assert sorted(members.member_ids(sid)) == sorted([owner, other])


def test_everyone_cannot_be_deleted_and_a_ban_is_listed_until_lifted(members, guild):
    sid, _owner, other = guild
    everyone = next(r for r in members.roles(sid) if r["name"] == "@everyone")
    with pytest.raises(Forbidden):
        members.delete_role(sid, everyone["publicId"])
    members.add_ban(sid, other, "spam")
    assert members.is_banned(sid, other) and [b["reason"] for b in members.bans(sid)] == ["spam"]
    assert members.remove_ban(sid, other) is True and members.bans(sid) == []
