"""``message:new`` read into msgspec structs: the same messages, users and events as from dicts.

With msgspec (the default install), the reader decodes a ``message:new`` frame whose record
has exactly the service's keys into structs (``Parsers.frame_decoders``), and the parser
builds the message from them. Whatever a record holds, a client fed the struct must end up
exactly where a client fed the dict does: the same message (every field, ``raw`` included),
the same cached author, the same events, nonces and warnings.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service_client.gateway import decoder
from service_client.models import Message
from service_client.models import user as user_module
from service_client.state.parsers import Parsers

from .fakes import FakeState, message_rec, user_rec

#: Whether the reader decodes with msgspec here (installed, and SERVICE_CLIENT_JSON not json).
MSGSPEC = decoder.NAME == "msgspec"
needs_msgspec = pytest.mark.skipif(
    not MSGSPEC, reason="the reader decodes with the standard library here, which reads no structs"
)

#: The service's message record, keys in its order (what the structs take).
SERVICE_RECORD: dict[str, Any] = {
    "publicId": "M1", "content": "hi &amp; bye",
    "author": {"publicId": "U1", "name": "alice", "tag": "0001", "image": None, "isBot": False,
               "status": "online", "createdAt": "2026-01-01T00:00:00.000Z"},
    "channelPublicId": "C1", "serverPublicId": "S1", "createdAt": "2026-01-02T03:04:05.678Z",
    "embeds": [], "fileUrl": None, "replyToId": None, "editedAt": None, "pinned": False,
}


def _frame(record: Any) -> bytes:
    return json.dumps(["message:new", record], separators=(",", ":")).encode()


class Side:
    """One client's parsers: ``structs`` reads frames as the reader does with msgspec."""

    def __init__(self, structs: bool) -> None:
        self.state = FakeState()
        self.parsers = Parsers(self.state)  # type: ignore[arg-type]
        self.decode = self.parsers.frame_decoders(decoder.NAME).get("message:new") if structs else None
        self.struct_frames = 0

    def feed(self, record: Any) -> None:
        """Hand the parsers one ``message:new`` frame of ``record``, as the reader would."""
        frame = _frame(record)
        if self.decode is not None:
            try:
                items = self.decode(frame)
            except Exception:  # noqa: BLE001 - refused: the general way, as in the reader
                pass
            else:
                self.struct_frames += 1
                assert items[0] == "message:new"
                self.parsers.handle("message:new", items[1:], b"42" + frame)
                return
        self.parsers.handle("message:new", json.loads(frame)[1:])

    def messages(self) -> list[Message]:
        return [args[0] for event, args, _ in self.state.dispatched if event == "message_create"]


def _view(message: Message) -> dict[str, Any]:
    """Everything a message shows."""
    author = message.author
    return {
        "id": message.id, "channel_id": message.channel_id, "server_id": message.server_id,
        "content": message.content, "created_at": message.created_at, "edited_at": message.edited_at,
        "embeds": message.embeds, "file_url": message.file_url, "reply_to_id": message.reply_to_id,
        "pinned": message.pinned, "nonce": message.nonce, "raw": message.raw,
        "author": None if author is None else (author.id, author.raw, author.username, author.status, author.bot),
    }


def _compare(records: list[Any], caplog: pytest.LogCaptureFixture) -> tuple[Side, Side]:
    """Feed ``records`` to a dict client and a struct client; assert they end up the same."""
    caplog.clear()
    dicts = Side(structs=False)
    with caplog.at_level(logging.DEBUG, logger="service_client.state"):
        for record in records:
            dicts.feed(record)
        dict_logs = [r.getMessage() for r in caplog.records]
        caplog.clear()
        structs = Side(structs=True)
        for record in records:
            structs.feed(record)
        struct_logs = [r.getMessage() for r in caplog.records]
    assert struct_logs == dict_logs
    assert [_view(m) for m in structs.messages()] == [_view(m) for m in dicts.messages()]
    assert [(e, k) for e, _, k in structs.state.dispatched] == [(e, k) for e, _, k in dicts.state.dispatched]
    assert {uid: u.raw for uid, u in structs.state.users.cache.items()} == {
        uid: u.raw for uid, u in dicts.state.users.cache.items()
    }
    assert [(n, _view(m)) for n, m in structs.state.nonces] == [(n, _view(m)) for n, m in dicts.state.nonces]
    return dicts, structs


# -- what the structs take ---------------------------------------------------------------------

@needs_msgspec
def test_the_service_record_is_read_into_structs_and_gives_the_same_message(caplog: pytest.LogCaptureFixture) -> None:
    variants = [
        SERVICE_RECORD,
        dict(SERVICE_RECORD, publicId="M2", nonce="n1"),
        dict(SERVICE_RECORD, publicId="M3", serverPublicId=None),
        dict(SERVICE_RECORD, publicId="M4", embeds=[{"title": "t"}], pinned=True, fileUrl="https://f/x.png",
             replyToId="M1", editedAt="2026-01-03T00:00:00.000Z"),
        dict(SERVICE_RECORD, publicId="M5", createdAt="2026-01-02T03:04:05Z"),  # not the exact form
        dict(SERVICE_RECORD, publicId="M6", content=""),
        dict(SERVICE_RECORD, publicId="M7", author={k: v for k, v in SERVICE_RECORD["author"].items()
                                                   if k != "createdAt"}),
    ]
    _dicts, structs = _compare(variants, caplog)
    assert structs.struct_frames == len(variants)
    message = structs.messages()[0]
    assert list(message.raw) == list(SERVICE_RECORD)
    assert message.raw == SERVICE_RECORD
    assert list(structs.messages()[1].raw) == [*SERVICE_RECORD, "nonce"]


@needs_msgspec
def test_a_record_with_another_key_or_type_is_read_the_general_way(caplog: pytest.LogCaptureFixture) -> None:
    refused = [
        dict(SERVICE_RECORD, extra={"nested": [1]}),  # a key the structs do not know: kept in raw
        {k: v for k, v in SERVICE_RECORD.items() if k != "fileUrl"},  # a key missing
        dict(SERVICE_RECORD, pinned=None),
        dict(SERVICE_RECORD, content=None),
        dict(SERVICE_RECORD, author=None),
        dict(SERVICE_RECORD, author=dict(SERVICE_RECORD["author"], bio="x")),
        dict(SERVICE_RECORD, nonce=None),
    ]
    _dicts, structs = _compare(refused, caplog)
    assert structs.struct_frames == 0
    first = structs.messages()[0].raw  # its author is the shared user, which later records changed
    assert (list(first), first["extra"]) == (list(refused[0]), {"nested": [1]})


@needs_msgspec
def test_structs_read_their_own_way_give_what_dicts_give(caplog: pytest.LogCaptureFixture) -> None:
    # Read into structs, then handed to the general way: empty ids, a webhook's message.
    odd = [
        dict(SERVICE_RECORD, publicId=""),
        dict(SERVICE_RECORD, channelPublicId=""),
        dict(SERVICE_RECORD, serverPublicId=""),
        dict(SERVICE_RECORD, author=dict(SERVICE_RECORD["author"], publicId="")),
        dict(SERVICE_RECORD, publicId="W1", webhookId="WH1", author=dict(SERVICE_RECORD["author"], publicId="WH1")),
        dict(SERVICE_RECORD, publicId="W2", webhookId=None),
    ]
    _dicts, structs = _compare(odd, caplog)
    assert structs.struct_frames == len(odd)


@needs_msgspec
def test_keys_in_another_order_give_the_same_values_in_the_service_order(caplog: pytest.LogCaptureFixture) -> None:
    shuffled = dict(reversed(list(SERVICE_RECORD.items())))
    dicts, structs = _compare([shuffled], caplog)
    assert structs.struct_frames == 1
    assert list(dicts.messages()[0].raw) == list(shuffled)
    assert list(structs.messages()[0].raw) == list(SERVICE_RECORD)  # as documented on Message.raw


_TEXT = st.sampled_from(["", "x", "M1", "&lt;b&gt;", "\u00e9\U0001f389"])
_AUTHOR = st.fixed_dictionaries(
    {"publicId": st.sampled_from(["U1", "U2", ""]), "name": st.sampled_from(["alice", "bob", ""]),
     "tag": st.sampled_from(["0001", None]), "image": st.sampled_from([None, "a.png"]),
     "isBot": st.booleans(), "status": st.sampled_from(["online", "dnd", "weird"])},
    optional={"createdAt": st.sampled_from(["2026-01-01T00:00:00.000Z", "x"])},
)
_RECORD = st.fixed_dictionaries(
    {"publicId": st.sampled_from(["M1", "M2", ""]), "content": _TEXT, "author": _AUTHOR,
     "channelPublicId": st.sampled_from(["C1", "C2", ""]), "serverPublicId": st.sampled_from(["S1", None, ""]),
     "createdAt": st.sampled_from(["2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05Z", "2026-13-02T03:04:05.678Z",
                                   "2026-01-02T03:04:05.678+02:00"]),
     "embeds": st.sampled_from([[], [{"title": "t"}], ["not an embed"]]),
     "fileUrl": st.sampled_from([None, "https://f/x.png"]), "replyToId": st.sampled_from([None, "M0"]),
     "editedAt": st.sampled_from([None, "2026-01-03T00:00:00.000Z"]), "pinned": st.booleans()},
    optional={"webhookId": st.sampled_from(["U1", None]), "nonce": st.sampled_from(["n1", ""])},
)


@needs_msgspec
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_RECORD, min_size=1, max_size=4))
def test_any_service_record_gives_the_same_messages_users_and_events(
    records: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    _compare(records, caplog)


# -- the remembered author --------------------------------------------------------------------

@needs_msgspec
def test_a_repeated_author_is_the_cached_user_and_changes_to_it_are_merged_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    author = SERVICE_RECORD["author"]
    side = Side(structs=True)
    side.feed(dict(SERVICE_RECORD, publicId="M1"))
    cached = side.state.users.cache["U1"]
    side.feed(dict(SERVICE_RECORD, publicId="M2"))
    assert side.messages()[-1].author is cached
    # Changed by another event, then the same author record again: the record wins, as with dicts.
    side.parsers.handle("user:update", [{"userPublicId": "U1", "name": "alicia"}])
    assert cached.username == "alicia"
    side.feed(dict(SERVICE_RECORD, publicId="M3"))
    assert (cached.username, side.messages()[-1].author) == ("alice", cached)
    side.parsers.handle("presence:update", [{"userPublicId": "U1", "status": "dnd"}])
    side.feed(dict(SERVICE_RECORD, publicId="M4"))
    assert cached.status == "online"
    cached._set_status("idle")  # what set_status does to the bot's own user
    side.feed(dict(SERVICE_RECORD, publicId="M5"))
    assert cached.status == "online"
    # Gone from the cache: cached again, a new user.
    side.state.users.cache.pop("U1")
    side.feed(dict(SERVICE_RECORD, publicId="M6"))
    again = side.state.users.cache["U1"]
    assert again is not cached and side.messages()[-1].author is again
    # A changed record is merged.
    side.feed(dict(SERVICE_RECORD, publicId="M7", author=dict(author, name="alice2", image="a.png")))
    assert (again.username, again.avatar) == ("alice2", "a.png")
    assert side.struct_frames == 7


@needs_msgspec
def test_an_author_known_as_a_webhook_is_not_cached() -> None:
    side = Side(structs=True)
    side.state.users.note_webhook("U1")
    side.feed(SERVICE_RECORD)
    assert "U1" not in side.state.users.cache
    assert side.messages()[0].author is not None and side.messages()[0].author.username == "alice"
    assert side.struct_frames == 1


@needs_msgspec
@pytest.mark.parametrize("structs", [False, True])
def test_a_user_change_on_another_thread_during_a_merge_is_merged_over_by_the_next_record(
    monkeypatch: pytest.MonkeyPatch, structs: bool
) -> None:
    # Another thread changes the cached author (paused in the middle of it) while the reader merges
    # the same record: the next message with that record merges it again, structs or dicts.
    side = Side(structs)
    side.feed(dict(SERVICE_RECORD, publicId="M1"))
    cached = side.state.users.cache["U1"]
    paused, go = threading.Event(), threading.Event()
    real_read_id = user_module.read_id

    def pausing_read_id(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == "test-user-change":
            paused.set()
            assert go.wait(5)
        return real_read_id(*args, **kwargs)

    monkeypatch.setattr(user_module, "read_id", pausing_read_id)
    changer = threading.Thread(target=cached._update, args=({"status": "idle"},), name="test-user-change", daemon=True)
    changer.start()
    assert paused.wait(5)
    side.feed(dict(SERVICE_RECORD, publicId="M2"))  # the author record again, mid-change
    go.set()
    changer.join(5)
    assert not changer.is_alive() and cached.status == "idle"
    side.feed(dict(SERVICE_RECORD, publicId="M3"))
    assert cached.status == "online"
    assert side.struct_frames == (3 if structs else 0)


@needs_msgspec
def test_set_status_changes_the_status_alone_and_the_next_record_merges_over_it() -> None:
    side = Side(structs=True)
    side.feed(dict(SERVICE_RECORD, publicId="M1", author=dict(SERVICE_RECORD["author"], name="alice2")))
    cached = side.state.users.cache["U1"]
    cached._set_status("dnd")
    assert (cached.username, cached.status) == ("alice2", "dnd")
    side.feed(dict(SERVICE_RECORD, publicId="M2", author=dict(SERVICE_RECORD["author"], name="alice2")))
    assert (cached.username, cached.status) == ("alice2", "online")


# -- what else sees the event -----------------------------------------------------------------

@needs_msgspec
def test_an_event_tap_gets_the_record_as_a_dict() -> None:
    side = Side(structs=True)
    taps: list[tuple[str, list[Any]]] = []
    side.state.event_tap = lambda event, args: taps.append((event, args))
    side.feed(dict(SERVICE_RECORD, nonce="n1"))
    assert side.struct_frames == 1
    assert taps == [("message:new", [dict(SERVICE_RECORD, nonce="n1")])]
    assert type(taps[0][1][0]) is dict and type(taps[0][1][0]["author"]) is dict
    assert list(taps[0][1][0]) == [*SERVICE_RECORD, "nonce"]


@needs_msgspec
def test_a_tap_that_takes_structs_gets_the_struct_which_encodes_as_its_dict() -> None:
    import msgspec

    from service_client.models._message_wire import MessageWire

    side = Side(structs=True)
    taps: list[list[Any]] = []
    side.state.event_tap = lambda event, args: taps.append(args)  # called as before: no frame
    side.state.event_tap_wire = True
    side.feed(dict(SERVICE_RECORD, nonce="n1"))
    assert side.struct_frames == 1 and len(taps) == 1
    [record] = taps[0]
    assert type(record) is MessageWire  # no dict made for the tap
    assert msgspec.json.encode(record) == msgspec.json.encode(dict(SERVICE_RECORD, nonce="n1"))
    assert [m.id for m in side.messages()] == ["M1"]  # the event goes on as usual


@needs_msgspec
def test_a_tap_that_takes_frames_gets_the_struct_and_the_frame_it_came_in() -> None:
    from service_client.models._message_wire import MessageWire

    side = Side(structs=True)
    taps: list[tuple[list[Any], bytes | None]] = []
    side.state.event_tap = lambda event, args, frame: taps.append((args, frame))
    side.state.event_tap_frames = True
    side.feed(dict(SERVICE_RECORD, nonce="n1"))
    assert side.struct_frames == 1 and len(taps) == 1
    [record], frame = taps[0]
    assert type(record) is MessageWire  # as with event_tap_wire
    assert frame == b"42" + _frame(dict(SERVICE_RECORD, nonce="n1"))  # the frame it came in, with it
    assert [m.id for m in side.messages()] == ["M1"]


def test_a_tap_that_takes_frames_gets_none_when_there_was_none() -> None:
    side = Side(structs=False)
    taps: list[tuple[str, list[Any], bytes | None]] = []
    side.state.event_tap = lambda event, args, frame: taps.append((event, args, frame))
    side.state.event_tap_frames = True
    side.parsers.handle("message:new", [dict(SERVICE_RECORD)])  # as the general way hands it on
    assert taps == [("message:new", [dict(SERVICE_RECORD)], None)]


@needs_msgspec
@pytest.mark.parametrize("args", [[SERVICE_RECORD, SERVICE_RECORD], ["x", SERVICE_RECORD], []])
def test_an_event_tap_gets_dicts_whatever_the_arguments(args: list[Any], caplog: pytest.LogCaptureFixture) -> None:
    taps: list[list[list[Any]]] = [[], []]
    sides = [Side(structs=False), Side(structs=True)]
    for side, seen in zip(sides, taps, strict=True):
        side.state.event_tap = lambda event, got, seen=seen: seen.append(got)
        items = json.loads(json.dumps(["message:new", *args]))
        if side.decode is not None:
            items = side.decode(json.dumps(["message:new", *args]).encode())
        side.parsers.handle(items[0], items[1:])
    assert taps[1] == taps[0] == [json.loads(json.dumps(args))]
    assert all(type(arg) in (dict, str) for arg in taps[1][0])
    assert [_view(m) for m in sides[1].messages()] == [_view(m) for m in sides[0].messages()]


@needs_msgspec
def test_a_nonce_resolves_the_send_waiting_for_it() -> None:
    side = Side(structs=True)
    side.feed(dict(SERVICE_RECORD, nonce="n1"))
    assert [(n, m.id) for n, m in side.state.nonces] == [("n1", "M1")]


def test_no_structs_with_the_standard_library_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decoder, "NAME", "json")
    side = Side(structs=True)
    assert side.parsers.frame_decoders("json") == {}
    side.feed(message_rec(author=user_rec()))
    assert side.struct_frames == 0 and len(side.messages()) == 1


# -- over a real socket ------------------------------------------------------------------------

def test_a_logged_in_client_reads_messages_into_structs_with_msgspec_only(bot_world: Any, bot_client: Any) -> None:
    arrived: queue.Queue[Message] = queue.Queue()
    bot_client.on("message_create", arrived.put)
    said = bot_world.say("general", "a &lt;b&gt; here")
    message = arrived.get(timeout=10)
    assert (message.id, message.content, message.author.username) == (said.id, "a &lt;b&gt; here", "alice")
    assert message.author is bot_client.users.cache[message.author.id]
    assert message.raw == said.raw and list(message.raw) == list(said.raw)
    decoders = bot_client._connection.gateway._frame_decoders
    assert list(decoders) == (["message:new"] if MSGSPEC else [])
