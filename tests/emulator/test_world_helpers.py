"""The control helpers a test world drives the emulator with: kick and leave as a person would,
typing, a private channel, the DM between two users without opening it, and the id mark."""

from __future__ import annotations

import pytest

from service_client.emulator import MemberRecord, MessageRecord


def _sid(world) -> str:
    return str(world.server["publicId"])


@pytest.fixture
def readers(world, conns):
    """Ordered socket readers of the human (the owner) and of the bot."""
    return conns(world.human_token, world.human["publicId"]), conns(world.bot_token, world.bot["publicId"])


def test_kick_is_the_owners_kick_with_its_fan_out_and_audit_entry(world, readers):
    emu, bot_id = world.emulator, world.bot["publicId"]
    human, bot = readers
    emu.kick(_sid(world), bot_id)
    assert human.wait("server:member_removed") == {"serverPublicId": _sid(world), "memberPublicId": bot_id,
                                                   "reason": "kicked"}
    assert bot.wait("server:you_removed") == {"serverPublicId": _sid(world)}
    assert [e["actionType"] for e in emu.audit_log(_sid(world))][:1] == ["MEMBER_KICK"]
    with pytest.raises(LookupError):
        emu.member(_sid(world), bot_id)
    with pytest.raises(LookupError):
        emu.kick(_sid(world), bot_id)                    # no longer a member
    with pytest.raises(ValueError, match="cannot_kick_owner"):
        emu.kick(_sid(world), world.human["publicId"])


def test_leave_server_is_the_members_own_leave(world, readers):
    emu, bot_id = world.emulator, world.bot["publicId"]
    human, bot = readers
    emu.leave_server(_sid(world), bot_id)
    assert human.wait("server:member_remove") == {"serverPublicId": _sid(world), "memberPublicId": bot_id}
    assert bot.wait("server:you_left") == {"serverPublicId": _sid(world)}
    with pytest.raises(LookupError):
        emu.leave_server(_sid(world), bot_id)
    with pytest.raises(ValueError, match="owner_cannot_leave"):
        emu.leave_server(_sid(world), world.human["publicId"])
    assert emu.member(_sid(world), world.human["publicId"])["isOwner"] is True


def test_typing_reaches_the_channel_room_as_the_users_socket_would(world, conns):
    emu = world.emulator
    human_id = world.human["publicId"]
    bot = conns(world.bot_token, world.bot["publicId"])
    general = world.general["publicId"]
    emu.typing(human_id, general)
    assert bot.wait("typing:start") == {"channelPublicId": general, "userPublicId": human_id, "userName": "alice"}
    emu.typing(human_id, general, stop=True)
    assert bot.wait("typing:stop")["userPublicId"] == human_id
    with pytest.raises(LookupError):
        emu.typing(human_id, "1")
    hidden = emu.create_channel(_sid(world), "staff", private=True)
    assert hidden["isPrivate"] is True
    assert emu.can_view(hidden["publicId"], world.bot["publicId"]) is False       # only the owner sees it
    assert emu.can_view(hidden["publicId"], human_id) is True
    with pytest.raises(PermissionError):
        emu.typing(world.bot["publicId"], hidden["publicId"])


def test_dm_channel_finds_the_dm_without_opening_it(world, conns):
    emu = world.emulator
    human_id, bot_id = world.human["publicId"], world.bot["publicId"]
    bot = conns(world.bot_token, bot_id)
    assert emu.dm_channel(human_id, bot_id) is None
    assert bot.none("dm:new")                                                 # asking opened nothing
    opened = emu.open_dm(human_id, bot_id)
    assert emu.dm_channel(human_id, bot_id) == emu.dm_channel(bot_id, human_id) == opened["publicId"]


def test_the_id_mark_orders_what_was_stored_before_and_after_it(world):
    emu = world.emulator
    general = world.general["publicId"]
    before: MessageRecord = emu.post_message(general, world.human["publicId"], "before")["message"]
    mark = emu.id_mark()
    after = emu.post_message(general, world.human["publicId"], "after")["message"]
    assert int(before["publicId"]) < int(mark) < int(after["publicId"])
    assert emu.snapshot() == emu.snapshot()                                   # a mark stores nothing
    assert len(emu.id_mark()) == len(mark)


def test_the_records_are_typed_dicts_with_the_documented_keys(world):
    emu = world.emulator
    member: MemberRecord = emu.member(_sid(world), world.bot["publicId"])
    assert set(member) == set(MemberRecord.__annotations__)
    assert set(member["user"]) == {"publicId", "name", "tag", "image", "isBot", "status", "createdAt"}
    assert set(member["roles"][0]) == {"publicId", "name", "color", "hoist", "serverPublicId", "position",
                                       "permissions"}
    posted = emu.post_message(world.general["publicId"], world.human["publicId"], "<hi>")["message"]
    required = {k for k in MessageRecord.__annotations__ if k in MessageRecord.__required_keys__}
    assert set(posted) == required
    assert emu.messages(world.general["publicId"], decoded=True)[-1]["content"] == "<hi>"
    assert emu.messages(world.general["publicId"])[-1]["content"] == "&lt;hi&gt;"
