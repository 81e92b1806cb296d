"""The cheap ``message:new`` path: a lazy Message and the remembered author merge.

What a message shows must not depend on how cheaply it was built: every field
read later equals what the record says, and the author in ``client.users`` is
the same as if every author record had been merged.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from service_client.models import Message, User
from service_client.state.parsers import Parsers

from .fakes import FakeState, message_rec, user_rec


@pytest.fixture
def client() -> FakeState:
    return FakeState()


@pytest.fixture
def h(client: FakeState) -> Parsers:
    return Parsers(client)  # type: ignore[arg-type]


def _last_message(client: FakeState) -> Message:
    event, args, _key = client.dispatched[-1]
    assert event == "message_create"
    message = args[0]
    assert isinstance(message, Message)
    return message


# -- lazy fields -------------------------------------------------------------------------

def test_every_field_reads_the_record(client: FakeState) -> None:
    rec = message_rec("M1", "a &lt;b&gt; &amp; c", nonce="n1", replyToId="M0", pinned=True,
                      editedAt="2026-01-03T00:00:00.000Z", fileUrl="https://f.example/x.png",
                      embeds=[{"title": "t"}, "not an embed"])
    msg = Message(client, rec)
    assert (msg.id, msg.channel_id, msg.server_id, msg.nonce) == ("M1", "C1", "S1", "n1")
    assert msg.content == "a <b> & c"
    assert msg.created_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    assert msg.edited_at == datetime(2026, 1, 3, tzinfo=timezone.utc)
    assert msg.embeds == [{"title": "t"}]
    assert (msg.file_url, msg.reply_to_id, msg.pinned) == ("https://f.example/x.png", "M0", True)
    assert msg.raw == json.loads(json.dumps(rec))


@pytest.mark.parametrize("created", ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.678+02:00", "x", None, 5,
                                     "2026-01-02T03:04:05,678Z", "2026-01-02T03:04:05.6\u0667\u0668Z"])
def test_any_created_at_form_is_kept_and_parsed_on_access(client: FakeState, created: Any) -> None:
    msg = Message(client, message_rec(createdAt=created))
    assert msg.raw["createdAt"] == created
    if created == "2026-01-02T03:04:05Z":
        assert msg.created_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    elif created == "2026-01-02T03:04:05,678Z":  # kept as it came (not packed), parsed on access
        assert msg.created_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    elif created == "2026-01-02T03:04:05.678+02:00":
        assert msg.created_at == datetime(2026, 1, 2, 1, 4, 5, 678000, tzinfo=timezone.utc)
    elif created == 5:
        assert msg.created_at == datetime(1970, 1, 1, 0, 0, 0, 5000, tzinfo=timezone.utc)
    else:
        assert msg.created_at is None


def test_changing_the_record_or_raw_afterwards_changes_nothing(client: FakeState) -> None:
    rec = message_rec("M1", "before", embeds=[{"title": "t"}])
    msg = Message(client, rec)
    rec["content"] = "after"
    rec["publicId"] = "M2"
    raw = msg.raw
    raw["embeds"][0]["title"] = "changed"
    raw["embeds"].append({"title": "more"})
    raw["author"]["name"] = "changed"
    assert (msg.id, msg.content) == ("M1", "before")
    assert msg.embeds == [{"title": "t"}]
    assert msg.raw["author"]["name"] == "alice"


def test_content_missing_or_not_text_is_empty(client: FakeState) -> None:
    assert Message(client, {"publicId": "M1", "channelPublicId": "C1"}).content == ""
    assert Message(client, {"publicId": "M1", "channelPublicId": "C1", "content": 5}).content == ""


# -- the remembered author merge --------------------------------------------------------------

def test_a_repeated_author_record_leaves_the_cached_user_as_merging_would(client: FakeState,
                                                                        h: Parsers) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    cached = client.users.cache["U1"]
    h.handle("message:new", [message_rec("M2", author=dict(author))])
    assert _last_message(client).author is cached
    assert cached.raw == author


def test_an_author_changed_by_user_update_is_merged_again(client: FakeState, h: Parsers) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    h.handle("user:update", [{"userPublicId": "U1", "name": "alicia"}])
    assert client.users.cache["U1"].username == "alicia"
    h.handle("message:new", [message_rec("M2", author=dict(author))])
    assert client.users.cache["U1"].username == "alice"  # the newer record wins, as without the memo


def test_a_changed_author_record_is_merged(client: FakeState, h: Parsers) -> None:
    h.handle("message:new", [message_rec("M1", author=user_rec("U1", "alice"))])
    h.handle("message:new", [message_rec("M2", author=user_rec("U1", "alice2", image="a.png"))])
    cached = client.users.cache["U1"]
    assert (cached.username, cached.avatar) == ("alice2", "a.png")
    assert _last_message(client).author is cached


def test_an_author_evicted_from_the_cache_is_cached_again(client: FakeState, h: Parsers) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    first = client.users.cache.pop("U1")
    h.handle("message:new", [message_rec("M2", author=dict(author))])
    again = client.users.cache["U1"]
    assert again is not first
    assert _last_message(client).author is again


def test_a_user_replaced_in_the_cache_is_the_author(client: FakeState, h: Parsers) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    replacement = User(client, author)  # type: ignore[arg-type]
    client.users.cache["U1"] = replacement
    h.handle("message:new", [message_rec("M2", author=dict(author))])
    assert _last_message(client).author is replacement


def test_the_record_kept_for_comparison_is_a_copy(client: FakeState, h: Parsers) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=author)])
    author["name"] = "mutated by the caller"
    h.handle("message:new", [message_rec("M2", author=user_rec("U1", "mutated by the caller"))])
    assert client.users.cache["U1"].username == "mutated by the caller"


def test_the_handler_keeps_the_record_without_changing_it(client: FakeState, h: Parsers) -> None:
    rec = message_rec("M1")
    before = json.loads(json.dumps(rec))
    h.handle("message:new", [rec])
    assert rec == before
    assert _last_message(client).raw == before


def test_raw_keeps_every_value_and_key_order_whatever_the_id_spellings(client: FakeState, h: Parsers) -> None:
    rec = {"publicId": "M1", "channelPublicId": "", "channelId": "C2", "serverPublicId": 7,
           "author": user_rec("U1"), "content": "x", "extra": {"nested": [1]}}
    h.handle("message:new", [json.loads(json.dumps(rec))])
    msg = _last_message(client)
    assert (msg.channel_id, msg.server_id) == ("C2", "7")
    assert msg.raw == rec
    assert list(msg.raw) == list(rec)
    client.users.cache["U1"]._update({"name": "renamed"})
    assert msg.raw["author"]["name"] == "renamed"  # the shared user's current record


@pytest.mark.parametrize("missing", ["tag", "image", "isBot", "status", "name"])
def test_an_author_record_with_another_key_instead_of_a_known_one_is_merged(client: FakeState, h: Parsers,
                                                                           missing: str) -> None:
    author = user_rec("U1", "alice", tag=None, image=None)
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    other = {k: v for k, v in author.items() if k != missing}
    other["badge"] = "gold"
    h.handle("message:new", [message_rec("M2", author=other)])
    assert client.users.cache["U1"].raw["badge"] == "gold"


@pytest.mark.parametrize("change", [
    {"name": "alicia"}, {"status": "idle"}, {"tag": "0002"}, {"image": "b.png"}, {"isBot": True},
    {"createdAt": "2026-02-02T00:00:00.000Z"},
])
def test_each_changed_author_field_is_merged(client: FakeState, h: Parsers, change: dict[str, Any]) -> None:
    author = user_rec("U1", "alice")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    cached = client.users.cache["U1"]
    h.handle("message:new", [message_rec("M2", author={**author, **change})])
    assert client.users.cache["U1"] is cached
    assert cached.raw == {**author, **change}
    assert _last_message(client).author is cached


@pytest.mark.parametrize("missing", ["name", "status", "tag", "image", "isBot"])
def test_an_author_record_lacking_a_key_keeps_the_cached_value(client: FakeState, h: Parsers,
                                                               missing: str) -> None:
    author = user_rec("U1", "alice", image="a.png", tag="0001")
    h.handle("message:new", [message_rec("M1", author=dict(author))])
    cached = client.users.cache["U1"]
    before = cached.raw
    partial = {k: v for k, v in author.items() if k != missing}
    h.handle("message:new", [message_rec("M2", author=partial)])
    assert client.users.cache["U1"] is cached and cached.raw == before  # a merge keeps absent keys
    assert _last_message(client).author is cached


def test_ids_alternating_between_channels_and_servers_stay_exact_and_shared(client: FakeState,
                                                                          h: Parsers) -> None:
    places = [("C1", "S1"), ("C2", "S2"), ("C1", "S1"), ("C3", None), ("C2", "S2"), ("C2", "S2")]
    for number, (channel_id, server_id) in enumerate(places):
        # Built ids (not literals): equal texts, distinct objects, as decoded JSON gives them.
        record = message_rec(f"M{number}", channelPublicId="".join(["C", channel_id[1:]]),
                             serverPublicId=None if server_id is None else "".join(["S", server_id[1:]]))
        h.handle("message:new", [record])
    messages = [args[0] for event, args, _ in client.dispatched if event == "message_create"]
    assert [(m.channel_id, m.server_id) for m in messages] == places
    assert [m.channel_id for m in messages if m.channel_id == "C2"][0] is messages[-1].channel_id
    assert messages[0].channel_id is messages[2].channel_id
    assert messages[1].server_id is messages[4].server_id
    assert [key for event, _, key in client.dispatched if event == "message_create"] == [c for c, _ in places]


def test_a_destroyed_state_ignores_every_event(client: FakeState, h: Parsers) -> None:
    client.closed = True
    h.handle("message:new", [message_rec("M1", author=user_rec("U1", "alice"))])
    h.handle("user:update", [{"userPublicId": "U1", "name": "alicia"}])
    assert client.dispatched == []
    assert "U1" not in client.users.cache
