"""The publisher against a real redis-server: entries, retried batches, the bounded buffer, trimming.

The tap is called here as the socket's reader calls it (``publisher._tap``), so these tests need
no emulator. Marked ``redis``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from service_client import CatchUp, Client
from service_client.client.catchup import CatchUpRunner
from service_client.fleet import EventPublisher, partition_of
from service_client.fleet._redis import loads
from service_client.fleet.scripts import PUBLISH

from .redis_server import free_port

pytestmark = pytest.mark.redis

pytest.importorskip("redis")


def _message(mid: str, channel: str) -> dict[str, Any]:
    return {"publicId": mid, "channelPublicId": channel, "serverPublicId": "S1", "content": f"m {mid}",
            "author": {"publicId": "U1", "name": "alice"}}


@pytest.fixture
def client() -> Any:
    client = Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9")
    yield client
    client.destroy()


def _published(publisher: EventPublisher, count: int) -> None:
    deadline = time.monotonic() + 10
    while publisher.published_events < count:
        assert time.monotonic() < deadline, f"{publisher.published_events} of {count} published"
        time.sleep(0.01)


def test_each_event_gets_its_partition_a_sequence_and_an_event_id(client: Client, redis_url: str, raw: Any,
                                                                  namespace: str) -> None:
    publisher = EventPublisher(client, redis_url, partitions=4, namespace=namespace)
    try:
        for i in range(3):
            publisher._tap("message:new", [_message(f"M{i}", "C1")])
        publisher._tap("message:new", [_message("M9", "C2")])
        publisher._tap("server:member_add", [{"serverPublicId": "S1", "member": {"userPublicId": "U2"}}])
        _published(publisher, 5)
    finally:
        publisher.close()
    part = partition_of("C1", 4)
    entries = raw.xrange(f"service_client:fleet:{namespace}:p:{part}")
    c1 = [e for e in entries if b'"C1"' in e[1][b"d"]]
    assert [e[0] for e in c1][:3] == [b"1-0", b"2-0", b"3-0"] or len(c1) == 3
    ids = [e[1][b"i"].decode() for e in c1]
    assert all(i.endswith(f":{part}:{e[0].decode()[:-2]}") for i, e in zip(ids, c1, strict=True))
    assert len(set(ids)) == 3
    # A shared-state event also reaches the shared-state stream, with the same event id.
    state = raw.xrange(f"service_client:fleet:{namespace}:state")
    assert len(state) == 1 and b"server:member_add" in state[0][1][b"d"]
    spart = partition_of("S1", 4)
    [copy] = [e for e in raw.xrange(f"service_client:fleet:{namespace}:p:{spart}") if b"member_add" in e[1][b"d"]]
    assert copy[1][b"i"] == state[0][1][b"i"]
    assert raw.hget(f"service_client:fleet:{namespace}:meta", "partitions") == b"4"


#: A message record with exactly the service's keys: the socket's reader decodes it into a struct.
_SERVICE_RECORD: dict[str, Any] = {
    "publicId": "M1", "content": "hi", "author": {"publicId": "U1", "name": "alice", "tag": "0001", "image": None,
                                                 "isBot": False, "status": "online"},
    "channelPublicId": "C1", "serverPublicId": "S1", "createdAt": "2026-01-02T03:04:05.678Z",
    "embeds": [], "fileUrl": None, "replyToId": None, "editedAt": None, "pinned": False,
}


@pytest.mark.parametrize("channel", ["C1", ""])
def test_a_record_struct_is_published_and_routed_as_its_dict(client: Client, redis_url: str, raw: Any,
                                                             namespace: str, channel: str) -> None:
    wire = pytest.importorskip("service_client.models._message_wire")
    publisher = EventPublisher(client, redis_url, partitions=8, namespace=namespace)
    assert client._connection.event_tap_frames  # the reader hands its structs and frames over as they are
    try:
        record = dict(_SERVICE_RECORD, channelPublicId=channel)
        dict_args = [dict(record, publicId="M1")]
        frame = json.dumps(["message:new", dict(record, publicId="M2")]).encode()
        struct_args = wire.decode_frame(frame)[1:]
        assert type(struct_args[0]) is wire.MessageWire
        # As the socket's reader hands them on: the tap, then the cache effect.
        parsers = client._connection.parsers
        parsers.frame_decoders("msgspec")
        parsers.handle("message:new", dict_args)
        parsers.handle("message:new", struct_args, b"42" + frame)
        # A later event naming the message only goes where the message went.
        parsers.handle("message:reaction", [{"messagePublicId": "M2", "reactions": []}])
        _published(publisher, 3)
    finally:
        publisher.close()
    assert not client._connection.event_tap_frames
    where = {e[1][b"d"]: part for part in range(8) for e in raw.xrange(f"service_client:fleet:{namespace}:p:{part}")}
    first, second, reaction = sorted(where, key=lambda data: (b"reaction" in data, b'"M2"' in data))
    assert loads(second) == loads(first.replace(b'"M1"', b'"M2"'))  # the same JSON value as the dict's
    assert where[first] == where[second] == partition_of(channel or "S1", 8)
    # With a channel, the message's channel was remembered; without one, the reaction goes by its id.
    assert where[reaction] == partition_of(channel or "M2", 8)


def test_an_event_that_comes_with_its_frame_is_published_as_the_frames_own_json(
        client: Client, redis_url: str, raw: Any, namespace: str) -> None:
    wire = pytest.importorskip("service_client.models._message_wire")
    record = dict(_SERVICE_RECORD, content="caf\u00e9 \U0001f600 \"quoted\"")
    compact = b"42" + json.dumps(["message:new", record], separators=(",", ":"), ensure_ascii=False).encode()
    spaced = b"42" + json.dumps(["message:new", dict(record, publicId="M2")]).encode()  # ", " and ": "
    typing = b'42["typing:start", {"channelPublicId":"C2","userPublicId":"U1"}]'
    escaped = b'42["message\\u003anew",' + json.dumps(dict(record, publicId="M3")).encode() + b"]"
    sent = [
        ("message:new", wire.decode_frame(compact[2:])[1:], compact),
        ("message:new", wire.decode_frame(spaced[2:])[1:], spaced),
        ("typing:start", json.loads(typing[2:])[1:], typing),
        ("message:new", [dict(record, publicId="M3")], escaped),  # its start is not the name's usual one
        ("message:new", [dict(record, publicId="M4")], None),  # no frame (a catch-up's record)
    ]
    publisher = EventPublisher(client, redis_url, partitions=1, namespace=namespace)
    try:
        for event, args, frame in sent:
            publisher._tap(event, args, frame)
        _published(publisher, len(sent))
    finally:
        publisher.close()
    datas = [entry[1][b"d"] for entry in raw.xrange(f"service_client:fleet:{namespace}:p:0")]
    assert [loads(data) for data in datas] == [
        ["message:new", "C1", [record]],
        ["message:new", "C1", [dict(record, publicId="M2")]],
        ["typing:start", "C2", [{"channelPublicId": "C2", "userPublicId": "U1"}]],
        ["message:new", "C1", [dict(record, publicId="M3")]],
        ["message:new", "C1", [dict(record, publicId="M4")]],
    ]
    # The frames' own JSON, not encoded again (the spaces of the second one are still there).
    assert datas[0] == b'["message:new","C1",[' + compact[len(b'42["message:new",'):] + b"]"
    assert datas[1].endswith(spaced[len(b'42["message:new",'):] + b"]")


def test_a_batch_sent_again_adds_nothing_twice(raw: Any, namespace: str) -> None:
    script = raw.register_script(PUBLISH)
    keys = [f"{namespace}:p:0", f"{namespace}:state"]
    args = ["ep", 1, 0, 1, 2, b"a", b"b", 1, 0]  # partition 0: seq 1 and 2, their data
    assert script(keys=keys, args=args) == [2, 0, 0]
    assert script(keys=keys, args=args) == [0, 2, 0]  # the same ids: refused as already there
    assert raw.xlen(keys[0]) == 2


def test_the_buffer_is_bounded_and_drops_typing_and_presence_first(client: Client, namespace: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there: events wait in the buffer
    publisher = EventPublisher(client, dead, partitions=4, namespace=namespace, max_buffered_events=10)
    try:
        with caplog.at_level(logging.WARNING, logger="service_client.fleet"):
            for _ in range(4):
                publisher._tap("typing:start", ["C1"])
            for i in range(6):
                publisher._tap("message:new", [_message(f"M{i}", "C1")])
            assert publisher.buffered_events == 10 and publisher.dropped_events == 0
            publisher._tap("message:new", [_message("M6", "C1")])  # full: the typing events go
            assert publisher.dropped_events == 4 and publisher.buffered_events == 7
            for i in range(7, 10):
                publisher._tap("message:new", [_message(f"M{i}", "C1")])
            publisher._tap("presence:update", [{"userPublicId": "U1", "status": "idle"}])  # full: itself
            publisher._tap("message:new", [_message("M10", "C1")])  # full, nothing to drop first: the newest
            assert publisher.dropped_events == 6 and publisher.buffered_events == 10
        assert any("buffer is full" in r.getMessage() for r in caplog.records)
    finally:
        publisher.close(timeout=1)
    assert publisher.dropped_events == 16  # what was never added is counted at close too


def test_streams_are_trimmed_at_the_acknowledged_low_water_mark_and_at_the_cap(
        client: Client, redis_url: str, raw: Any, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    publisher = EventPublisher(client, redis_url, partitions=1, namespace=namespace, max_stream_length=20)
    stream = f"service_client:fleet:{namespace}:p:0"
    try:
        for i in range(15):
            publisher._tap("message:new", [_message(f"M{i}", "C1")])
        _published(publisher, 15)
        publisher.trimmer.trim_once()
        assert raw.xlen(stream) == 15  # no group yet, under the cap: everything stays
        raw.xgroup_create(stream, "g", id="0")
        got = raw.xreadgroup("g", "p0", {stream: ">"}, count=10)[0][1]
        raw.xack(stream, "g", *[e[0] for e in got[:6]])  # 1..6 done, 7..10 pending, 11..15 unread
        assert publisher.trimmer.trim_once() == 6
        assert raw.xrange(stream)[0][0] == b"7-0"
        raw.xack(stream, "g", *[e[0] for e in got[6:]])
        publisher.trimmer.trim_once()
        assert raw.xrange(stream)[0][0] == b"11-0"  # read and acknowledged: gone; unread: kept
        with caplog.at_level(logging.WARNING, logger="service_client.fleet"):
            for i in range(15, 40):
                publisher._tap("message:new", [_message(f"M{i}", "C1")])
            _published(publisher, 40)
            publisher.trimmer.trim_once()
        assert raw.xlen(stream) == 20  # the cap holds whatever the workers do
        assert publisher.trimmed_unacknowledged == 10
        assert any("no worker group had acknowledged" in r.getMessage() for r in caplog.records)
    finally:
        publisher.close()


def test_one_publisher_per_client_and_clear_argument_errors(client: Client, redis_url: str) -> None:
    with pytest.raises(ValueError, match="partitions must be at least 1"):
        EventPublisher(client, redis_url, partitions=0)
    with pytest.raises(ValueError, match="redis_url must be a Redis URL"):
        EventPublisher(client, "http://example.com")
    with pytest.raises(TypeError, match="client must be a Client"):
        EventPublisher("client", redis_url)  # type: ignore[arg-type]
    publisher = EventPublisher(client, redis_url, namespace="one")
    try:
        with pytest.raises(ValueError, match="already has an event publisher"):
            EventPublisher(client, redis_url, namespace="two")
        assert "***" not in repr(publisher) and "one" in repr(publisher)
    finally:
        publisher.close()
    secret = redis_url.replace("redis://", "redis://:hunter2@")
    other = EventPublisher(client, secret, namespace="three")
    try:
        assert "hunter2" not in repr(other) and ":***@" in repr(other)
    finally:
        other.close(timeout=1)
    # A refused argument's traceback holds the password in no frame's locals.
    with pytest.raises(ValueError) as caught:
        EventPublisher(client, secret, partitions=0)
    tb = caught.value.__traceback__.tb_next  # the library's frames (this test's holds the URL)
    while tb is not None:
        assert "hunter2" not in repr(tb.tb_frame.f_locals)
        tb = tb.tb_next


def test_a_message_both_delivered_live_and_caught_up_is_published_once(client: Client, redis_url: str, raw: Any,
                                                                       namespace: str) -> None:
    # A message posted as the socket comes back reaches the client both ways: live on the socket
    # and read back from history by a catch-up (a standby's takeover, a reconnect). Whichever comes
    # first is published; the other is not, in either order.
    publisher = EventPublisher(client, redis_url, partitions=4, namespace=namespace)
    runner = CatchUpRunner(client._connection, CatchUp(), client._destroyed)
    live = client._connection.parsers.handle  # as the socket's reader applies an event
    try:
        runner.emit({**_message("M1", "C1"), "replayed": True})  # read back first...
        live("message:new", [_message("M1", "C1")])  # ...then live
        live("message:new", [_message("M2", "C1")])  # live first...
        runner.emit({**_message("M2", "C1"), "replayed": True})  # ...read back before its cache effect
        live("message:new", [_message("M3", "C1")])
        assert publisher.flush(10)
    finally:
        publisher.close()
    entries = raw.xrange(f"service_client:fleet:{namespace}:p:{partition_of('C1', 4)}")
    records = [json.loads(fields[b"d"])[2][0] for _id, fields in entries]
    assert [(r["publicId"], r.get("replayed") is True) for r in records] == [
        ("M1", True), ("M2", False), ("M3", False)]
    assert publisher.published_events == 3 and publisher.dropped_events == 0


def test_a_caught_up_message_delivered_live_as_the_readers_struct_is_published_once(
        client: Client, redis_url: str, raw: Any, namespace: str) -> None:
    wire = pytest.importorskip("service_client.models._message_wire")
    publisher = EventPublisher(client, redis_url, partitions=4, namespace=namespace)
    runner = CatchUpRunner(client._connection, CatchUp(), client._destroyed)

    def struct_args(message_id: str) -> list[Any]:
        args = wire.decode_frame(json.dumps(["message:new", dict(_SERVICE_RECORD, publicId=message_id)]).encode())[1:]
        assert type(args[0]) is wire.MessageWire
        return list(args)

    try:
        runner.emit({**_SERVICE_RECORD, "replayed": True})  # read back first...
        publisher._tap("message:new", struct_args("M1"))  # ...then live, as the reader hands it over
        publisher._tap("message:new", struct_args("M2"))
        assert publisher.flush(10)
    finally:
        publisher.close()
    entries = raw.xrange(f"service_client:fleet:{namespace}:p:{partition_of('C1', 4)}")
    records = [json.loads(fields[b"d"])[2][0] for _id, fields in entries]
    assert [(r["publicId"], r.get("replayed") is True) for r in records] == [("M1", True), ("M2", False)]


def test_flush_waits_for_the_buffered_events_whatever_was_dropped_before(client: Client, namespace: str) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there: events wait in the buffer
    publisher = EventPublisher(client, dead, partitions=4, namespace=namespace, max_buffered_events=2)
    try:
        for i in range(4):
            publisher._tap("message:new", [_message(f"M{i}", "C1")])
        assert publisher.dropped_events == 2 and publisher.buffered_events == 2
        assert not publisher.flush(0.3)  # two events are still not in Redis
    finally:
        publisher.close(timeout=1)


def test_scripts_gone_from_redis_are_loaded_again_and_every_event_goes_once_in_order(
        client: Client, redis_url: str, raw: Any, namespace: str) -> None:
    publisher = EventPublisher(client, redis_url, partitions=1, namespace=namespace)
    try:
        for i in range(5):
            publisher._tap("message:new", [_message(f"M{i}", "C1")])
        assert publisher.flush(10)
        raw.script_flush()  # as a Redis restarted on its data has no script
        for i in range(5, 10):
            publisher._tap("message:new", [_message(f"M{i}", "C1")])
        assert publisher.flush(10)
    finally:
        publisher.close()
    entries = raw.xrange(f"service_client:fleet:{namespace}:p:0")
    assert [json.loads(fields[b"d"])[2][0]["publicId"] for _id, fields in entries] == [f"M{i}" for i in range(10)]
    assert [entry_id for entry_id, _ in entries] == [f"{i}-0".encode() for i in range(1, 11)]
    assert publisher.published_events == 10 and publisher.dropped_events == 0



@pytest.mark.parametrize("count", [0, 1, 254, 255, 256, 1000])
def test_a_batch_packed_in_pieces_is_the_command_redis_py_would_send(count: int) -> None:
    from redis.connection import Encoder, PythonRespSerializer

    from service_client.fleet._redis import command_packer

    packer = command_packer()
    assert packer is not None, "the redis extra installs hiredis"
    command = ("EVALSHA", "a" * 40, 1, "k", "caf\u00e9", *[b"\r\n$3\r\n\x00" + b"%d" % i * 40 for i in range(count)], -7)
    expected = b"".join(PythonRespSerializer(6000, Encoder("utf-8", "strict", False).encode).pack(*command))
    assert b"".join(packer(command)) == expected
