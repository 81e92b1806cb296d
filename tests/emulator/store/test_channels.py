"""ChannelRepository alone (with users, servers, members): channels, categories, overrides, DMs."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound
from service_client.emulator.store.channels import ChannelRepository


@pytest.fixture
def channels(db, users, servers, members):
    return ChannelRepository(db, users=users, servers=servers, members=members)


def test_a_private_channel_is_hidden_until_an_override_lets_a_member_in(users, servers, members, channels):
    owner = users.create_user("owner")[0]["publicId"]
    other = users.create_user("other")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    members.add_member(sid, other)
    cat = channels.create_category(sid, "Text")
    cid = channels.create_channel(sid, "secret", "TEXT", category_id=cat, is_private=True)
    assert channels.can_view(cid, owner) and not channels.can_view(cid, other)
    channels.set_override(sid, cid, other, "MEMBER", 512, 0)
    assert channels.can_view(cid, other)
    channels.delete_channel(cid)
    with pytest.raises(NotFound):
        channels.channel_row(cid)


def test_a_dm_is_opened_once_and_seen_by_its_two_users(users, channels):
    a = users.create_user("a")[0]["publicId"]
    b = users.create_user("b")[0]["publicId"]
    cid, created = channels.open_dm(a, b)
    assert created and channels.open_dm(b, a) == (cid, False)
    assert sorted(channels.dm_participants(cid)) == sorted([a, b])
    assert channels.can_view(cid, a) and channels.dm_channel_id(a, b) == cid
