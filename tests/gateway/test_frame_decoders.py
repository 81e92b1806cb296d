"""A connection's own frame decoders (``frame_decoders``): tried first, never changing the outcome.

An event's decoder gets the JSON array of each frame of that event; what it reads reaches
``on_event`` as the rest of its list, in arrival order with every other event; whatever it
refuses goes the general way as if it had not been tried. Real sockets, a bare server.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from websockets.sync.server import ServerConnection

from service_client.gateway.reader import TYPED_REFUSALS_MAX

from .conftest import RawServer, Recorder, stay_silent


class Decoder:
    """A frame decoder that records what it was given: reads ``{"typed": n}`` arguments, refuses the rest."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[bytes] = []
        self.lock = threading.Lock()

    def __call__(self, data: bytes) -> list[Any]:
        with self.lock:
            self.seen.append(bytes(data))
        items = json.loads(data)
        if len(items) != 2 or not isinstance(items[1], dict) or "typed" not in items[1]:
            raise ValueError("not mine")
        return [items[0], ("read", items[1]["typed"])]


def _run(recorder: Recorder, frames: list[str | bytes], decoders: dict[str, Callable[[bytes], list[Any]]]) -> None:
    def script(conn: ServerConnection) -> None:
        for frame in frames:
            conn.send(frame)
        conn.send('42["last"]')
        stay_silent(conn)

    server = RawServer(script, ping_interval_ms=5000, ping_timeout_ms=5000)
    try:
        conn = recorder.connection(server.url, reconnect=False, frame_decoders=decoders)
        conn.connect()
        assert recorder.wait_for(lambda: bool(recorder.events) and recorder.events[-1][0] == "last")
        conn.close()
    finally:
        server.stop()


def test_a_decoder_reads_its_events_and_what_it_refuses_goes_the_general_way(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    decode = Decoder("note")
    frames: list[str | bytes] = [
        '42["note",{"typed":1}]',
        '42["note",{"other":2}]',  # refused: the general way
        '42["other",{"typed":3}]',  # another event: never tried
        b'42["note",{"typed":4}]',  # a binary message: never an event
        '42["note",{"typed":5}] ',  # never tried (text after the array): the general way drops it
        '42/ns,["note",{"typed":6}]',  # another namespace: never tried
        '421["note",{"typed":7}]',  # with an ack id: never tried
        '42["note",{"typed":8}]',
    ]
    with caplog.at_level(logging.WARNING, logger="service_client.gateway"):
        _run(recorder, frames, {"note": decode})
    assert recorder.events == [
        ("note", [("read", 1)]),
        ("note", [{"other": 2}]),
        ("other", [{"typed": 3}]),
        ("note", [{"typed": 7}]),
        ("note", [("read", 8)]),
        ("last", []),
    ]
    assert decode.seen == [b'["note",{"typed":1}]', b'["note",{"other":2}]', b'["note",{"typed":8}]']
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "dropped a malformed socket frame (23 chars): trailing data after the JSON payload at offset 22",
    ]


def test_names_of_any_length_and_script_find_their_decoder(recorder: Recorder) -> None:
    short, long, accented = Decoder("a"), Decoder("a-much-longer-name"), Decoder("\u00e9t\u00e9")
    frames: list[str | bytes] = [
        '42["a-much-longer-name",{"typed":1}]', '42["a",{"typed":2}]', '42["\u00e9t\u00e9",{"typed":3}]',
        '42["ab",{"typed":4}]',
    ]
    _run(recorder, frames, {"a": short, "a-much-longer-name": long, "\u00e9t\u00e9": accented})
    assert recorder.events == [
        ("a-much-longer-name", [("read", 1)]), ("a", [("read", 2)]), ("\u00e9t\u00e9", [("read", 3)]),
        ("ab", [{"typed": 4}]), ("last", []),
    ]
    assert (len(short.seen), len(long.seen), len(accented.seen)) == (1, 1, 1)


def test_a_decoder_refusing_frames_in_a_row_is_no_longer_tried_on_that_connection(recorder: Recorder) -> None:
    decode = Decoder("note")
    refused = [f'42["note",{{"other":{i}}}]' for i in range(TYPED_REFUSALS_MAX + 20)]
    # Refusals broken by a frame it reads start counting again.
    frames: list[str | bytes] = [*refused[:TYPED_REFUSALS_MAX - 1], '42["note",{"typed":0}]', *refused]
    _run(recorder, frames, {"note": decode})
    assert recorder.events == [
        *[("note", [{"other": i}]) for i in range(TYPED_REFUSALS_MAX - 1)],
        ("note", [("read", 0)]),
        *[("note", [{"other": i}]) for i in range(TYPED_REFUSALS_MAX + 20)],
        ("last", []),
    ]
    assert len(decode.seen) == TYPED_REFUSALS_MAX - 1 + 1 + TYPED_REFUSALS_MAX


@pytest.mark.parametrize(("decoders", "message"), [
    ({"": lambda data: []}, "frame_decoders keys must be event names"),
    ({5: lambda data: []}, "frame_decoders keys must be event names"),
    ({"note": "not callable"}, "frame_decoders['note'] must be callable"),
    ([("note", lambda data: [])], "frame_decoders must be a mapping of event names to decoders, got list"),
])
def test_a_bad_decoder_table_is_refused_at_construction(recorder: Recorder, decoders: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        recorder.connection("http://127.0.0.1:1", frame_decoders=decoders)


HAVE_MSGSPEC = importlib.util.find_spec("msgspec") is not None


@pytest.mark.skipif(not HAVE_MSGSPEC, reason="msgspec is not installed: the standard-library run, with no structs")
def test_the_message_structs_change_no_outcome_of_odd_message_frames(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    from service_client.models import _message_wire

    author = {"publicId": "U1", "name": "a", "tag": None, "image": None, "isBot": False, "status": "online",
              "createdAt": "2026-01-01T00:00:00.000Z"}
    record = {"publicId": "M1", "content": "hi", "author": author, "channelPublicId": "C1", "serverPublicId": "S1",
              "createdAt": "2026-01-02T03:04:05.678Z", "embeds": [], "fileUrl": None, "replyToId": None,
              "editedAt": None, "pinned": False}
    plain = json.dumps(["message:new", record], separators=(",", ":"))
    frames: list[str | bytes] = [
        "42" + plain,
        "42" + plain + " ",  # text after the array: dropped
        "42" + plain.replace('"content":"hi"', '"content":"x","content":"hi"'),  # a repeated key: the last wins
        "42" + plain.replace('"content":"hi"', '"content":"\\ud800"'),  # a lone surrogate: the standard way
        "42" + plain.replace('"embeds":[]', '"embeds":[12345678901234567890123]'),  # a number only json takes
        "42" + plain.replace('"hi"', '"hi"', 1)[:-1] + ',"more"]',  # a second argument
        "42" + json.dumps(["message:new", record], indent=1),  # whitespace between tokens
    ]
    with caplog.at_level(logging.WARNING, logger="service_client.gateway"):
        _run(recorder, frames, {"message:new": _message_wire.decode_frame})
    events = [(name, [_message_wire.record_of(a) if isinstance(a, _message_wire.MessageWire) else a for a in args])
              for name, args in recorder.events]
    structs = [type(args[0]).__name__ for name, args in recorder.events if name == "message:new"]
    assert events == [
        ("message:new", [record]),
        ("message:new", [record]),
        ("message:new", [dict(record, content="\ud800")]),
        ("message:new", [dict(record, embeds=[12345678901234567890123])]),
        ("message:new", [record, "more"]),
        ("message:new", [record]),
        ("last", []),
    ]
    assert structs[:3] == ["MessageWire", "MessageWire", "dict"]  # the structs were tried, and refused the surrogate
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"dropped a malformed socket frame ({len(plain) + 3} chars): trailing data after the JSON payload at offset"
        f" {len(plain) + 2}",
    ]
