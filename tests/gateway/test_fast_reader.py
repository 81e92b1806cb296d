"""The reader's fast paths: batches of buffered frames, the optional msgspec decoder, ordered handoff.

Whatever path a frame takes, what the connection reports must be what the
standard path reports: the same events in the same order, the same frames
dropped with the same warnings.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
import websocket
from websockets.sync.server import ServerConnection

from service_client.events import OrderedWorkerPool
from service_client.gateway import decoder
from service_client.gateway.reader import BinaryMessage, standard_loads

from .conftest import RawServer, Recorder, stay_silent
from .test_frame_reader import Pair, frame

HAVE_MSGSPEC = importlib.util.find_spec("msgspec") is not None


@pytest.fixture
def pair() -> Any:
    p = Pair()
    yield p
    p.close()


def _msgspec_loads() -> Callable[[Any], Any]:
    import msgspec

    return msgspec.json.Decoder().decode  # type: ignore[no-any-return]


# -- recv_batch --------------------------------------------------------------------------------


def test_batch_takes_every_buffered_message_in_order(pair: Pair) -> None:
    pair.send(frame('42["a"]') + frame(b"\x00", opcode=2) + frame("he", fin=False) + frame("llo", opcode=0)
              + frame(b"p", opcode=9) + frame("x" * 70_000))
    batch = pair.reader.recv_batch()
    assert batch == [b'42["a"]', b"\x00", b"hello", b"x" * 70_000]
    assert [type(m) for m in batch] == [bytes, BinaryMessage, bytes, bytes]
    assert pair.control == [(9, b"p")]


def test_batches_of_frames_cut_anywhere_give_every_message_once_in_order(pair: Pair) -> None:
    texts = [f"{i}:" + "y" * size for i, size in enumerate([0, 1, 100, 123, 124, 125, 126, 300, 65_533, 70_000])]
    data = b"".join(frame(t) for t in texts) + frame(b"\x07", opcode=2) + frame("end")
    got: list[bytes] = []
    for cut in (1, 2, 3, 5, 127, 4096):
        got.clear()
        pieces = [data[i : i + cut] for i in range(0, len(data), cut)] if cut < 4096 else [data]
        sender = threading.Thread(target=lambda pieces=pieces: [pair.send(p) for p in pieces], daemon=True)
        sender.start()
        while not got or got[-1] != b"end":
            got.extend(pair.reader.recv_batch())
        sender.join(5)
        assert got == [t.encode() for t in texts] + [b"\x07", b"end"], cut


def test_frames_shorter_than_four_bytes_are_taken_anywhere_in_a_batch(pair: Pair) -> None:
    pair.send(frame("") + frame("a") + frame("x" * 200) + frame("") + frame("b") + frame(""))
    got: list[bytes] = []
    while len(got) < 6:  # one batch when the bytes arrive in one read
        got.extend(pair.reader.recv_batch())
    assert got == [b"", b"a", b"x" * 200, b"", b"b", b""]


def test_batch_stops_at_a_partial_frame_and_resumes(pair: Pair) -> None:
    data = frame("one") + frame("two")
    pair.send(data[:-2])
    assert pair.reader.recv_batch() == [b"one"]
    pair.send(data[-2:])
    assert pair.reader.recv_batch() == [b"two"]


def test_a_close_after_messages_is_reported_by_the_next_call(pair: Pair) -> None:
    pair.send(frame("one") + frame("two") + frame(struct.pack("!H", 1000), opcode=8))
    assert pair.reader.recv_batch() == [b"one", b"two"]
    assert pair.control == []
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        pair.reader.recv_batch()
    assert pair.control == [(8, struct.pack("!H", 1000))]


@pytest.mark.parametrize(
    "bad",
    [frame("masked", mask=b"\x01\x02\x03\x04"), frame("x", opcode=3), frame("c", opcode=0),
     b"\x81\x7f" + struct.pack("!Q", 1 << 40)],
)
def test_a_protocol_violation_after_messages_is_raised_by_the_next_call(pair: Pair, bad: bytes) -> None:
    pair.send(frame("kept") + bad)
    assert pair.reader.recv_batch() == [b"kept"]
    with pytest.raises(websocket.WebSocketProtocolException):
        pair.reader.recv_batch()


def test_a_batch_never_waits_past_its_first_message(pair: Pair) -> None:
    pair.client.settimeout(0.05)
    pair.send(frame("only"))
    assert pair.reader.recv_batch() == [b"only"]
    with pytest.raises(TimeoutError):
        pair.reader.recv_batch()


def test_text_messages_are_not_decoded_in_a_batch(pair: Pair) -> None:
    pair.send(frame(b"\xff\xfe") + frame("ok"))
    assert pair.reader.recv_batch() == [b"\xff\xfe", b"ok"]


# -- standard_loads ------------------------------------------------------------------------------


def test_standard_loads_reads_one_json_value_and_refuses_the_rest() -> None:
    assert standard_loads(b'["message:new",{"a":[1,2]},null]') == ["message:new", {"a": [1, 2]}, None]
    assert standard_loads(b'"\\ud800"') == "\ud800"  # a lone surrogate, as json.loads reads it
    with pytest.raises(ValueError, match="trailing data"):
        standard_loads(b'["ws"] ')
    with pytest.raises(UnicodeDecodeError):
        standard_loads(b'["bad \xff"]')
    with pytest.raises(StopIteration):
        standard_loads(b"[not json]")
    with pytest.raises(ValueError, match="Expecting"):
        standard_loads(b'{"a" 1}')
    with pytest.raises(StopIteration):
        standard_loads(b"")


# -- the decoder module ------------------------------------------------------------------------------


def _decoder_name(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    code = ("import logging; logging.basicConfig(); from service_client.gateway import decoder; "
            "print(decoder.NAME, decoder.fast_loads is None)")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env}, check=False)


def test_decoder_is_msgspec_when_installed_unless_the_environment_says_json() -> None:
    assert _decoder_name({"SERVICE_CLIENT_JSON": "json"}).stdout.strip() == "json True"
    expected = "msgspec False" if HAVE_MSGSPEC else "json True"
    assert _decoder_name({"SERVICE_CLIENT_JSON": ""}).stdout.strip() == expected
    assert _decoder_name({"SERVICE_CLIENT_JSON": "auto"}).stdout.strip() == expected
    odd = _decoder_name({"SERVICE_CLIENT_JSON": "simdjson"})
    assert odd.stdout.strip() == expected
    assert "SERVICE_CLIENT_JSON='simdjson' is not json, msgspec or auto: taken as auto" in odd.stderr


def test_decoder_forced_to_msgspec_is_msgspec_or_a_clear_import_error() -> None:
    forced = _decoder_name({"SERVICE_CLIENT_JSON": "msgspec"})
    if HAVE_MSGSPEC:
        assert forced.stdout.strip() == "msgspec False"
    else:
        assert forced.returncode != 0
        assert "ImportError: SERVICE_CLIENT_JSON=msgspec, but msgspec is not installed" in forced.stderr


# -- through a connection, with each decoder ----------------------------------------------------------

DECODERS = ["json"] + (["msgspec"] if HAVE_MSGSPEC else [])


@pytest.fixture(params=DECODERS)
def reader_decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with the reader using the standard library, then msgspec (when installed)."""
    monkeypatch.setattr(decoder, "fast_loads", None if request.param == "json" else _msgspec_loads())
    return str(request.param)


def test_every_frame_is_reported_as_the_standard_path_reports_it(
    reader_decoder: str, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    def script(conn: ServerConnection) -> None:
        conn.send('42["first",{"n":1}]')
        conn.send('42["ws"] ')  # trailing whitespace: malformed
        conn.send(b'42["bad \xff"]', text=True)  # not UTF-8
        conn.send('42["big",1e400]')  # json: inf; msgspec refuses it
        conn.send('42["surrogate","\\ud800"]')  # json: a lone surrogate; msgspec refuses it
        conn.send('42["n",12345678901234567890123,-0,1.5]')
        conn.send('42/other,["elsewhere"]')
        conn.send(b'42["binary"]')  # a binary message is never an event, whatever its bytes
        for refused in ("42[1]", "42[]", '421["acked"]', '43["x"]', "", "42[", "42]", '42["x"]]'):
            conn.send(refused)  # not a plain event with a name: the standard path decides
        for i in range(500):
            conn.send(f'42["seq",{i}]')
        conn.send('42["last"]')
        stay_silent(conn)

    server = RawServer(script, ping_interval_ms=5000, ping_timeout_ms=5000)
    try:
        with caplog.at_level(logging.WARNING, logger="service_client.gateway"):
            conn = recorder.connection(server.url, reconnect=False)
            conn.connect()
            assert recorder.wait_for(lambda: bool(recorder.events) and recorder.events[-1][0] == "last")
            conn.close()
        assert recorder.events == [
            ("first", [{"n": 1}]),
            ("big", [float("inf")]),
            ("surrogate", ["\ud800"]),
            ("n", [12345678901234567890123, 0, 1.5]),
            ("acked", []),
            *[("seq", [i]) for i in range(500)],
            ("last", []),
        ]
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == [
            "dropped a malformed socket frame (9 chars): trailing data after the JSON payload at offset 8",
            "dropped a socket frame that is not valid UTF-8",
            *["dropped a malformed socket frame (5 chars): EVENT payload must be a JSON array starting with the"
              " event name", "dropped a malformed socket frame (4 chars): EVENT payload must be a JSON array"
              " starting with the event name"],
            "dropped a malformed socket frame (7 chars): ACK without an ack id",
            "dropped a malformed socket frame (0 chars): empty frame",
            *["dropped a malformed socket frame (3 chars): invalid JSON payload at offset 2"] * 2,
            "dropped a malformed socket frame (8 chars): trailing data after the JSON payload at offset 7",
        ]
    finally:
        server.stop()


def test_a_caller_woken_by_an_ack_comes_after_the_events_read_before_it(
    reader_decoder: str, recorder: Recorder
) -> None:
    pool = OrderedWorkerPool(2, name="test-handoff")
    order: list[str] = []
    recorder.on_event_hook = lambda event, args: pool.submit(lambda: order.append(event), key="k")

    def script(conn: ServerConnection) -> None:
        call = conn.recv(timeout=5)
        assert isinstance(call, str) and call.startswith("421")
        # One write: the event, the ack and a long tail arrive as one batch of the reader,
        # so the woken caller runs while the reader is still in it.
        conn.socket.sendall(frame('42["before-ack"]') + frame('431["ok"]') + frame('42["after-ack"]') * 5000)
        stay_silent(conn)

    server = RawServer(script, ping_interval_ms=5000, ping_timeout_ms=5000)
    done = threading.Event()
    try:
        conn = recorder.connection(server.url, reconnect=False)
        conn.connect()
        assert conn.call("question", timeout=5) == ["ok"]
        pool.submit(lambda: order.append("caller"), key="k")
        pool.submit(done.set, key="k")
        assert done.wait(5)
        assert order.index("before-ack") < order.index("caller")
        conn.close()
    finally:
        pool.shutdown()
        server.stop()
