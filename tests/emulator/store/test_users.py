"""UserRepository alone: records, tokens, status and profile."""

from __future__ import annotations

import pytest

from service_client.emulator.store import NotFound


def test_a_created_user_is_found_by_its_token_until_revoked(users):
    record, token = users.create_user("alice")
    assert record["name"] == "alice" and record["isBot"] is False
    assert users.user_by_token(token) == record["publicId"]
    users.revoke_token(record["publicId"])
    assert users.user_by_token(token) is None
    assert users.user_by_token(12) is None


def test_update_user_changes_the_record_it_answers(users):
    record, _token = users.create_user("bob", bot=True)
    assert users.update_user(record["publicId"], name="robert")["name"] == "robert"
    assert users.user(record["publicId"])["name"] == "robert" and users.user(record["publicId"])["isBot"] is True


def test_activity_is_set_and_cleared(users):
    record, _token = users.create_user("carol")
    users.set_activity(record["publicId"], {"type": "playing", "name": "chess"})
    assert users.activity(record["publicId"]) == {"type": "playing", "name": "chess"}
    users.set_activity(record["publicId"], None)
    assert users.activity(record["publicId"]) is None


def test_an_unknown_user_is_not_found(users):
    with pytest.raises(NotFound):
        users.user("1")
