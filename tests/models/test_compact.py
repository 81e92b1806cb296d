"""Compact models: ``raw`` rebuilt exactly, small cached members, the public ``client``.

protocol.md 0.1 ("every model keeps its raw dict"; unknown keys survive),
python-api.md 4 (each model keeps a reference to its client), issue 4
benchmark (bytes per cached member).
"""

from __future__ import annotations

import json
import tracemalloc
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service_client.models import (
    Category,
    Channel,
    DMChannel,
    Guild,
    Invite,
    Member,
    Message,
    Role,
    User,
    VoiceState,
    _base,
)
from service_client.models._base import pack_time, time_of_ms, unpack_time
from service_client.state.parsers import Parsers

from state.fakes import FakeState, channel_rec, member_rec, message_rec, role_rec, server_rec, user_rec


@pytest.fixture
def client() -> FakeState:
    return FakeState()


def _nested_member(uid: str = "U1", sid: str = "S1", **extra: Any) -> dict[str, Any]:
    """The emulator's nested member shape (protocol 3.4)."""
    extra.setdefault("roles", [role_rec("R1", sid=sid)])
    return member_rec(uid, sid, **extra)


# -- raw equals the record, unknown keys included -----------------------------------

def test_raw_round_trips_every_model(client: FakeState) -> None:
    records: list[tuple[Any, dict[str, Any]]] = [
        (User, {**user_rec(), "friendshipStatus": "ACCEPTED", "friendshipId": "F1"}),
        (Member, _nested_member(extraKey={"a": [1, 2]})),
        (Member, {"publicId": "U7", "name": "flat", "tag": "0007", "isBot": True, "serverPublicId": "S1"}),
        (Channel, channel_rec(categoryId="K1", position=3, isPrivate=True, description="topic", slowmode=5)),
        (Message, message_rec(content="a &lt;b&gt; &amp; c", nonce="n1", replyToId="M0", pinned=True,
                              editedAt="2026-01-03T00:00:00.000Z", reactions=[{"emoji": "x"}])),
        (Role, role_rec(hoise=True, unknown=1)),
        (Guild, server_rec(banner="b.png")),
        (Invite, {"code": "Ab3dE6gH", "uses": 3, "maxUses": None, "expiresAt": None, "server": server_rec()}),
        (VoiceState, {"userPublicId": "U1", "userName": "alice", "muted": True, "joinedAt": 1767323045678}),
        (Category, {"publicId": "K1", "name": "cat", "position": 0, "channels": [channel_rec(sid=None)]}),
    ]
    for model, record in records:
        expected = json.loads(json.dumps(record))
        assert model(client, record).raw == expected, model.__name__


def test_raw_is_a_new_dict_and_mutating_it_changes_nothing(client: FakeState) -> None:
    member = Member(client, _nested_member())
    first = member.raw
    first["nickname"] = "changed"
    first["roles"][0]["name"] = "changed"
    first["user"]["name"] = "changed"
    assert member.raw == _nested_member()
    assert member.nickname is None
    assert member.roles["R1"].name == "role-R1"


def test_member_raw_shows_the_shared_users_current_record(client: FakeState) -> None:
    member = client.members.from_record(_nested_member(), None, cache=True)
    client.users.cache["U1"]._update({"name": "renamed"})
    assert member.user is client.users.cache["U1"]
    assert member.raw["user"]["name"] == "renamed"


def test_message_raw_keeps_the_escaped_content_and_the_author(client: FakeState) -> None:
    rec = message_rec(content="x &amp;lt; <raw> &gt;")  # not what the service would escape: kept as is
    msg = Message(client, rec)
    assert msg.content == "x &lt; <raw> >"
    assert msg.raw["content"] == "x &amp;lt; <raw> &gt;"
    assert msg.raw == json.loads(json.dumps(rec))


@pytest.mark.parametrize(
    "joined",
    ["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.678+02:00",
     "garbage", None, 1767323045678, ""],
)
def test_member_times_round_trip_in_any_form(client: FakeState, joined: Any) -> None:
    rec = _nested_member(joinedAt=joined)
    member = Member(client, rec)
    assert member.raw["joinedAt"] == joined
    assert type(member.raw["joinedAt"]) is type(joined)
    if joined == "2026-01-02T03:04:05.678Z":
        assert member.joined_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    if joined == "2026-01-02T03:04:05.678+02:00":
        assert member.joined_at == datetime(2026, 1, 2, 1, 4, 5, 678000, tzinfo=timezone.utc)
    if joined in ("garbage", None, ""):
        assert member.joined_at is None


def test_message_created_at_from_the_compact_form(client: FakeState) -> None:
    msg = Message(client, message_rec(createdAt="1999-12-31T23:59:59.999Z"))
    assert msg.created_at == datetime(1999, 12, 31, 23, 59, 59, 999000, tzinfo=timezone.utc)
    assert msg.raw["createdAt"] == "1999-12-31T23:59:59.999Z"


def test_odd_value_types_are_kept_verbatim(client: FakeState) -> None:
    rec = {"publicId": "U1", "name": 5, "tag": None, "image": 3, "isBot": "yes", "status": ""}
    user = User(client, rec)
    assert (user.username, user.tag, user.avatar, user.bot, user.status) == ("", None, None, False, "offline")
    assert user.raw == rec
    mrec = _nested_member(nickname=7, isOwner="no", roles="R1")
    member = Member(client, mrec)
    assert (member.nickname, member.role_ids) == (None, [])
    assert member.raw == json.loads(json.dumps(mrec))


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_KEYS = st.sampled_from([
    "publicId", "id", "name", "username", "tag", "image", "avatar", "isBot", "bot", "status",
    "userId", "user", "serverPublicId", "serverId", "roles", "joinedAt", "nickname", "isOwner",
    "content", "author", "channelPublicId", "channelId", "createdAt", "nonce", "embeds", "fileUrl",
    "type", "categoryId", "position", "isPrivate", "description", "other",
]) | st.text(max_size=6)
_TIMES = st.sampled_from(["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05Z", "x"])


@settings(max_examples=300, deadline=None)
@given(
    record=st.dictionaries(_KEYS, _VALUES | _TIMES, max_size=10),
    ident=st.text(min_size=1, max_size=6),
    nested=st.booleans(),
)
def test_raw_equals_any_record(record: dict[str, Any], ident: str, nested: bool) -> None:
    client = FakeState()
    record["publicId"] = ident
    if nested:
        record["user"] = {"publicId": ident, "name": "n", "status": "idle", "extra": [1]}
        record["author"] = dict(record["user"])
    record.setdefault("serverPublicId", "S1")
    for model in (User, Channel, Message, Member, Role, Guild):
        try:
            built = model(client, dict(record))
        except (TypeError, ValueError):
            continue
        assert built.raw == record, model.__name__


# -- small cached members ---------------------------------------------------------------

def test_members_share_role_records_and_keep_no_nested_user_dict(client: FakeState) -> None:
    a = client.members.from_record(_nested_member("U1"), None, cache=True)
    b = client.members.from_record(_nested_member("U2"), None, cache=True)
    assert a._roles is b._roles  # one shared tuple for the same role set
    assert a.user is client.users.cache["U1"]
    assert not hasattr(a, "__dict__")
    assert a._extra is None  # every key of the emulator's record is rebuilt from slots


def test_role_sharing_respects_value_types(client: FakeState) -> None:
    a = Member(client, _nested_member("U1", roles=[role_rec("R1", hoist=True)]))
    b = Member(client, _nested_member("U2", roles=[role_rec("R1", hoist=1)]))
    assert a.raw["roles"][0]["hoist"] is True
    assert b.raw["roles"][0]["hoist"] == 1 and b.raw["roles"][0]["hoist"] is not True


def test_drop_role_leaves_other_members_untouched(client: FakeState) -> None:
    a = Member(client, _nested_member("U1", roles=[role_rec("R1"), role_rec("R2")]))
    b = Member(client, _nested_member("U2", roles=[role_rec("R1"), role_rec("R2")]))
    a._drop_role("R1")
    assert a.role_ids == ["R2"]
    assert b.role_ids == ["R1", "R2"]


def test_a_cached_member_costs_under_600_bytes(client: FakeState) -> None:
    count = 3000
    for i in range(count):
        client.users.upsert(user_rec(f"1000000000000{i:05d}", name=f"user{i}"))
    texts = [
        json.dumps(_nested_member(f"1000000000000{i:05d}", f"S{i % 10}", publicId=f"9000000000000{i:05d}",
                                  joinedAt=f"2026-01-02T03:04:{i % 60:02d}.{i % 1000:03d}Z"))
        for i in range(count)
    ]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for text in texts:
            client.members.from_record(json.loads(text), None, cache=True)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    per_member = sum(s.size_diff for s in after.compare_to(before, "filename")) / count
    assert len(client.members.cache) == count
    assert per_member < 600


def test_message_from_the_handler_shares_the_cached_author(client: FakeState) -> None:
    handlers = Parsers(client)  # type: ignore[arg-type]
    handlers.handle("message:new", [message_rec()])
    (event, (message,), _key) = client.dispatched[-1]
    assert event == "message_create"
    assert message.author is client.users.cache[message.author.id]
    assert message.raw["author"] == client.users.cache[message.author.id].raw


# -- the public client attribute ------------------------------------------------------------

def test_every_model_exposes_its_client_read_only(client: FakeState) -> None:
    models = [
        User(client, user_rec()),
        Member(client, _nested_member()),
        Channel(client, channel_rec()),
        DMChannel(client, {"publicId": "D1", "type": "DM", "recipient": user_rec()}),
        Message(client, message_rec()),
        Role(client, role_rec()),
        Guild(client, server_rec()),
        Invite(client, {"code": "Ab3dE6gH", "server": server_rec()}),
        VoiceState(client, {"userPublicId": "U1"}),
        Category(client, {"publicId": "K1", "name": "cat", "channels": []}),
    ]
    for model in models:
        assert model.client is client, type(model).__name__
        with pytest.raises(AttributeError):
            model.client = FakeState()  # type: ignore[misc]
        assert model.client is client


def test_message_client_reaches_the_bot(client: FakeState) -> None:
    client.commands = {"help": object()}  # type: ignore[attr-defined]
    message = Message(client, message_rec())
    assert message.client.commands is client.commands  # type: ignore[attr-defined]


def test_a_kept_message_from_the_handler_costs_under_300_bytes(client: FakeState) -> None:
    for i in range(100):
        client.users.upsert(user_rec(f"U{i}", name=f"user{i}"))
    handlers = Parsers(client)  # type: ignore[arg-type]
    count = 3000
    texts = [
        json.dumps(message_rec(f"6000000000000{i:05d}", f"message number {i} &amp; more", author=user_rec(f"U{i % 100}",
                               name=f"user{i % 100}"), createdAt=f"2026-01-02T03:04:{i % 60:02d}.{i % 1000:03d}Z",
                               fileUrl=None))
        for i in range(count)
    ]
    for text in texts[:10]:  # the record's layout and shared values exist before counting
        handlers.handle("message:new", [json.loads(text)])
    client.dispatched.clear()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for text in texts:
            handlers.handle("message:new", [json.loads(text)])
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    kept = [args[0] for _event, args, _key in client.dispatched]
    assert len(kept) == count
    # Not counted: the fake's record of each dispatch and the handler's recent message -> channel map.
    mine = [tracemalloc.Filter(False, "*fakes.py"), tracemalloc.Filter(False, "*parsers.py")]
    diff = after.filter_traces(mine).compare_to(before.filter_traces(mine), "filename")
    per_message = sum(s.size_diff for s in diff) / count
    assert per_message < 300
    assert kept[5].raw == json.loads(texts[5])


_WIRE_TIMES = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))


@given(moment=_WIRE_TIMES)
def test_packed_times_rebuild_their_exact_text(moment: datetime) -> None:
    text = moment.isoformat(timespec="milliseconds") + "Z"
    packed = pack_time(text)
    assert packed is not None
    assert unpack_time(packed) == text
    assert time_of_ms(packed) == moment.replace(microsecond=moment.microsecond // 1000 * 1000, tzinfo=timezone.utc)


@pytest.mark.parametrize("text", [
    "2026-W01-1T03:04:05.678Z",  # a week date
    "2026-01-02T03:04:05,678Z",  # a comma before the fraction
    "2026-01-02 03:04:05.678Z",
    "2026-01-02T24:00:00.000Z",
    "2026-01-02T03:04:05.678+",
    "2026-02-30T03:04:05.678Z",
    "2026-01-02T03:04:6\u0660.678Z",  # an Arabic-Indic digit
    "2026-01-02T03:04:05.67Z",
    "2026-01-02T03:04:Z\x00.678Z",  # fromisoformat reads this as 03:04:00
    None, 5, 1.5,
])
def test_times_in_any_other_form_are_not_packed(text: Any) -> None:
    assert pack_time(text) is None


def test_a_known_second_still_checks_each_fraction() -> None:
    first = pack_time("2031-07-08T09:10:11.000Z")
    assert first is not None
    assert pack_time("2031-07-08T09:10:11.999Z") == first + 999
    for text in ("2031-07-08T09:10:11.\u0661\u0662\u0663Z", "2031-07-08T09:10:11,123Z",
                 "2031-07-08T09:10:11.12Z", "2031-07-08T09:10:11.+12Z", "2031-07-08T09:10:11.1234",
                 "2031-07-08T09:10:11.123Z ", "2031-07-08T09:10:11.123z", "2031-07-08T09:10:11.123ZZ",
                 "2031-07-08T09:10:11"):
        assert pack_time(text) is None, text


def test_the_memo_of_seconds_is_bounded_and_loses_no_exactness() -> None:
    start = datetime(2030, 1, 1)
    for second in range(_base._SECONDS_MAX + 10):
        moment = start + timedelta(seconds=second, milliseconds=second % 1000)
        text = moment.isoformat(timespec="milliseconds") + "Z"
        packed = pack_time(text)
        assert packed is not None and unpack_time(packed) == text
    assert len(_base._SECONDS) <= _base._SECONDS_MAX


@pytest.mark.parametrize("value", [False, 0, 0.0, None, True, 1, 1.0])
def test_values_equal_to_a_shared_constant_keep_their_own_type(client: FakeState, value: Any) -> None:
    handlers = Parsers(client)  # type: ignore[arg-type]
    for pinned in (False, True, None, value):
        handlers.handle("message:new", [message_rec(pinned=pinned, fileUrl=None)])
    raw = client.dispatched[-1][1][0].raw
    assert raw["pinned"] == value and type(raw["pinned"]) is type(value)
    assert client.dispatched[-1][1][0].pinned is (value is True)
