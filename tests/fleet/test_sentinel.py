"""The fleet on a Sentinel-managed Redis: the rate-limit store, the publisher and a worker given
redis-py's ``Sentinel(...).master_for(...)`` go on after the primary is killed and a replica is
promoted, and with ``wait_for_replicas=1`` no event is lost.

A primary, a replica and three sentinels of the test's own (``sentinel_cluster.py``). Marked
``redis`` and ``slow`` (a failover takes a few seconds).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service_client import Client, RedisBucketStore
from service_client.fleet import EventPublisher, FleetWorker

from .sentinel_cluster import SERVICE, SentinelCluster

pytestmark = [pytest.mark.redis, pytest.mark.slow]

redis = pytest.importorskip("redis")


@pytest.fixture
def cluster() -> Iterator[SentinelCluster]:
    try:
        made = SentinelCluster()
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the Sentinel test, but {exc}")
        pytest.skip(str(exc))
    yield made
    made.stop()


def test_the_fleet_goes_on_after_a_failover_and_loses_nothing_waiting_for_a_replica(
        cluster: SentinelCluster, world: Any, emulator: Any, namespace: str) -> None:
    sentinel = redis.sentinel.Sentinel(cluster.sentinels, socket_timeout=1)
    primary = sentinel.master_for(SERVICE, socket_timeout=1)
    store = RedisBucketStore(primary, timeout=0.5)
    client = Client(base_url=emulator.base_url, socket_url=emulator.socket_url, bucket_store=store)
    publisher = EventPublisher(client, primary, partitions=8, namespace=namespace, wait_for_replicas=1,
                               replica_timeout=0.5)
    worker = FleetWorker(primary, world.bot_token, group="g", namespace=namespace, base_url=emulator.base_url,
                         workers=2)
    handled: set[str] = set()
    changed = threading.Condition()

    @worker.event
    def message_create(message: Any) -> None:
        with changed:
            handled.add(message.content)
            changed.notify_all()
        if message.content == "b9":
            message.reply("after the failover")

    def wait_handled(names: set[str], timeout: float) -> None:
        with changed:
            assert changed.wait_for(lambda: names <= handled, timeout), sorted(names - handled)

    general, human = world.general["publicId"], world.human["publicId"]
    try:
        client.login(world.bot_token, timeout=15)
        assert publisher.flush(10)
        worker.start(timeout=30)
        assert "sentinel:" in repr(worker) and "sentinel:" in repr(publisher)
        for i in range(10):
            emulator.post_message(general, human, f"a{i}")
        wait_handled({f"a{i}" for i in range(10)}, 15)
        old = cluster.primary()
        cluster.kill(old)
        for i in range(10):  # while the sentinels fail over: the events wait in the publisher's buffer
            emulator.post_message(general, human, f"b{i}")
            time.sleep(0.05)
        cluster.wait_failover(old)
        cluster.restart(old)  # empty: the sentinels make it the new primary's replica (WAIT needs one)
        wait_handled({f"b{i}" for i in range(10)}, 40)
        deadline = time.monotonic() + 15
        while not any(m["content"] == "after the failover" for m in emulator.messages(general)):
            assert time.monotonic() < deadline, "the worker's reply after the failover was not posted"
            time.sleep(0.05)
        assert publisher.dropped_events == 0
        # The rate-limit store follows the new primary too: a block it records is there.
        new_primary = redis.Redis(host="127.0.0.1", port=cluster.primary(), socket_timeout=1)
        try:
            deadline = time.monotonic() + 15
            while not list(new_primary.scan_iter(match="*after-failover*:block")):
                assert time.monotonic() < deadline, "the store wrote no block to the new primary"
                store.block("GET:after-failover", 30.0, scope="test")
                time.sleep(0.1)
            assert store.available
        finally:
            new_primary.close()
    finally:
        worker.stop(timeout=2)
        publisher.close()
        client.destroy()
        store.close()
