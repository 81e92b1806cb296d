"""The lease thread replaces a worker's reader thread only once it has ended.

A reader created and not yet started is not a dead one: under CPU starvation the lease thread
once ran between the reader's creation and its start, took it for dead and started a second
reader, and two readers of the same partitions handled events out of order.
No Redis server is needed: the consumer is built on a stand-in client.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

from service_client.fleet.consumer import Consumer
from service_client.fleet.routing import FleetKeys


class _Redis:
    def register_script(self, text: str) -> Any:
        return lambda **kwargs: None


def _consumer() -> Consumer:
    worker: Any = SimpleNamespace(group="g", name="w0", instance="w0/1", lease_ttl_ms=3000, max_in_flight=64)
    return Consumer(worker, feed=SimpleNamespace(redact=str), redis=_Redis(), keys=FleetKeys("ns", "g"), partitions=4)  # type: ignore[arg-type]


def test_a_reader_created_and_not_yet_started_is_not_replaced() -> None:
    consumer = _consumer()
    ran = threading.Event()
    reader = threading.Thread(target=ran.set, name="service_client-fleet-reader-test", daemon=True)
    consumer._reader = reader  # as start() leaves it just before reader.start()
    consumer._watch_reader()
    assert consumer._reader is reader, "a second reader was started beside one not yet running"
    reader.start()
    assert ran.wait(5)


def test_a_reader_that_ended_is_replaced_once() -> None:
    consumer = _consumer()
    consumer._read_loop = lambda: None  # type: ignore[method-assign]  # the reader ends at once
    first = threading.Thread(target=consumer._reader_main, name="service_client-fleet-reader-test", daemon=True)
    consumer._reader = first
    first.start()
    first.join(5)
    consumer._watch_reader()
    second = consumer._reader
    assert second is not first and second is not None
    second.join(5)
    consumer._watch_reader()  # the second one ended too: one more, never two at once
    third = consumer._reader
    assert third is not second
    third.join(5)
    consumer._stop_reading.set()  # a graceful stop: a reader that ended is not replaced
    consumer._watch_reader()
    assert consumer._reader is third
