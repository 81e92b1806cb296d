"""ExtrasRepository alone (with the repositories it reads): emojis, webhooks, audit log."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound
from service_client.emulator.store.channels import ChannelRepository
from service_client.emulator.store.extras import ExtrasRepository
from service_client.emulator.store.messages import MessageRepository


@pytest.fixture
def setup(db, users, servers, members):
    channels = ChannelRepository(db, users=users, servers=servers, members=members)
    messages = MessageRepository(db, users=users, channels=channels)
    extras = ExtrasRepository(db, users=users, servers=servers, channels=channels, messages=messages)
    owner = users.create_user("owner")[0]["publicId"]
    sid = servers.create_server("Guild", owner)
    return extras, sid, channels.create_channel(sid, "general", "TEXT"), owner


def test_emojis_and_webhooks_come_and_go(setup):
    extras, sid, cid, owner = setup
    emoji = extras.create_emoji(sid, "wave", "http://img/w.png")
    assert extras.emoji_named(sid, "wave") and [e["publicId"] for e in extras.emojis(sid)] == [emoji["publicId"]]
    extras.delete_emoji(sid, emoji["publicId"])
    assert extras.emojis(sid) == []
    hook = extras.create_webhook(cid, "hook", None, owner)
    assert extras.webhook_for_token(hook["publicId"], hook["token"])["id"] == hook["publicId"]
    with pytest.raises(NotFound):
        extras.webhook_for_token(hook["publicId"], "wrong")
    assert "token" not in extras.webhooks(cid)[0]


def test_the_audit_log_is_newest_first_and_filtered_by_action(setup):
    extras, sid, _cid, owner = setup
    extras.add_audit(sid, owner, "ROLE_CREATE", "ROLE", "1", {})
    extras.add_audit(sid, owner, "ROLE_DELETE", "ROLE", "1", {})
    assert [e["actionType"] for e in extras.audit_logs(sid, 10)] == ["ROLE_DELETE", "ROLE_CREATE"]
    assert [e["actionType"] for e in extras.audit_logs(sid, 10, "ROLE_CREATE")] == ["ROLE_CREATE"]
