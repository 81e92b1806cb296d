"""The publisher's fence: channel marks (pure), the fenced publish script and waiting for replicas
(against a real redis-server, marked ``redis``)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from service_client import Client
from service_client.fleet import EventPublisher
from service_client.fleet.fence import FENCED_PUBLISH, channel_marks, mark_of, parse_mark


def _item(event: str, key: str, record: Any) -> tuple[int, bytes, bool, bool]:
    return 0, json.dumps([event, key, [record]], separators=(",", ":")).encode(), False, False


def _message(mid: str, channel: str, created: str) -> dict[str, Any]:
    return {"publicId": mid, "channelPublicId": channel, "content": "x", "createdAt": created}


def test_marks_name_each_channels_newest_message_and_compare_in_time_order() -> None:
    items = [
        _item("message:new", "C1", _message("M1", "C1", "2026-01-01T00:00:01.000Z")),
        _item("typing:start", "C1", {"channelPublicId": "C1"}),
        _item("message:new", "C2", _message("M2", "C2", "2026-01-01T00:00:02.000Z")),
        _item("message:new", "C1", _message("M3", "C1", "2026-01-01T00:00:03.000Z")),
        _item("message:updated", "C2", _message("M2", "C2", "2026-01-01T00:00:02.000Z")),
    ]
    marks = channel_marks(items)
    assert marks == {"C1": mark_of(1767225603000, "M3"), "C2": mark_of(1767225602000, "M2")}
    assert parse_mark(marks["C1"]) == (1767225603000, "M3")
    assert mark_of(999, "Z") < mark_of(1000, "A")  # strings in time order, whatever the ids
    assert parse_mark(b"nonsense") is None and parse_mark("12:") is None


@pytest.mark.redis
def test_the_fenced_script_writes_only_under_the_lease_and_marks_only_move_forward(raw: Any,
                                                                                   namespace: str) -> None:
    script = raw.register_script(FENCED_PUBLISH)
    stream, state, lease, marks = (f"{namespace}:{k}" for k in ("p0", "state", "lease", "marks"))
    raw.set(lease, "me:1")
    base = ["ep", 1, 0, 1, 1, b"a", 1, 0]
    new, old = mark_of(2000, "M2"), mark_of(1000, "M1")
    assert script(keys=[stream, state, lease, marks], args=[*base, "C1", new, 1, "me:1"]) == [1, 0, 0]
    assert raw.hget(marks, "C1") == new.encode()
    args = ["ep", 1, 0, 2, 1, b"b", 1, 0, "C1", old, 1, "me:1"]
    assert script(keys=[stream, state, lease, marks], args=args) == [1, 0, 0]
    assert raw.hget(marks, "C1") == new.encode()  # an older message does not move the mark back
    raw.set(lease, "other:2")
    args = ["ep", 1, 0, 3, 1, b"c", 1, 0, "C1", mark_of(3000, "M3"), 1, "me:1"]
    assert script(keys=[stream, state, lease, marks], args=args) == [-1, 0, 0]  # fenced: nothing written
    assert raw.xlen(stream) == 2 and raw.hget(marks, "C1") == new.encode()


@pytest.mark.redis
def test_waiting_for_a_replica_that_is_not_there_publishes_nothing(redis_url: str, namespace: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    client = Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9")
    publisher = EventPublisher(client, redis_url, partitions=1, namespace=namespace, wait_for_replicas=1,
                               replica_timeout=0.05)
    try:
        with caplog.at_level(logging.WARNING, logger="service_client.fleet"):
            publisher._tap("message:new", [_message("M1", "C1", "2026-01-01T00:00:01.000Z")])
            deadline = time.monotonic() + 10
            while not any("cannot reach Redis" in r.getMessage() for r in caplog.records):
                assert time.monotonic() < deadline, "the unacknowledged batch was not reported"
                time.sleep(0.01)
        # Added to the stream (a replica would get it), but not counted: it is sent again.
        assert publisher.published_events == 0
        assert not publisher.flush(0.3)
    finally:
        publisher.close(timeout=1)
    client.destroy()
    with pytest.raises(ValueError, match="wait_for_replicas must be at least 0"):
        EventPublisher(client, redis_url, wait_for_replicas=-1)
