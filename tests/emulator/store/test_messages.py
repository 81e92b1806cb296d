"""MessageRepository alone (with users and channels): messages, reactions, pins."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound
from service_client.emulator.store.channels import ChannelRepository
from service_client.emulator.store.messages import MessageRepository


@pytest.fixture
def chat(db, users, servers, members):
    channels = ChannelRepository(db, users=users, servers=servers, members=members)
    owner = users.create_user("owner")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    cid = channels.create_channel(sid, "general", "TEXT")
    return MessageRepository(db, users=users, channels=channels), cid, owner


def test_history_is_chronological_and_content_is_escaped(chat):
    messages, cid, owner = chat
    records = messages.insert_messages(cid, owner, ["one", "<b>two</b>", "three"])
    assert [m["content"] for m in messages.history(cid, 2)] == ["&lt;b&gt;two&lt;/b&gt;", "three"]
    assert [m["publicId"] for m in messages.history(cid, 5, before=records[1]["publicId"])] == \
        [records[0]["publicId"]]


def test_reactions_toggle_pins_change_once_and_delete_removes(chat):
    messages, cid, owner = chat
    [record] = messages.insert_messages(cid, owner, ["hi"])
    mid = record["publicId"]
    assert messages.toggle_reaction(mid, "x", owner) is True and len(messages.reactions(mid)) == 1
    assert messages.toggle_reaction(mid, "x", owner) is False and messages.reactions(mid) == []
    assert messages.set_pinned(mid, True) is True and messages.set_pinned(mid, True) is False
    assert [p["publicId"] for p in messages.pins(cid)] == [mid]
    messages.delete_message(mid)
    with pytest.raises(NotFound):
        messages.message(mid)
