"""The worker pool's barrier (used to reconcile caches after a reconnect before later events run)."""

from __future__ import annotations

import threading

from service_client.events import OrderedWorkerPool


def test_barrier_holds_later_tasks_of_every_key_until_it_returns():
    pool = OrderedWorkerPool(4)
    order: list[str] = []
    lock = threading.Lock()
    release = threading.Event()
    started = threading.Event()
    done = threading.Event()

    def log(name: str) -> None:
        with lock:
            order.append(name)

    def barrier() -> None:
        started.set()
        assert release.wait(5)
        pool.submit(lambda: log("from-barrier"), key="g")  # not held: runs before the held ones
        log("barrier")

    try:
        pool.submit(lambda: log("before"), key="a")
        pool.submit_barrier(barrier, key="life")
        assert started.wait(5)
        pool.submit(lambda: log("after-a"), key="a")
        pool.submit(lambda: log("after-b"), key="b")
        pool.submit(done.set, key="a")
        assert not done.wait(0.2)  # held while the barrier runs, whatever the key
        assert "after-a" not in order and "after-b" not in order
        release.set()
        assert done.wait(5)
        assert order.index("barrier") < order.index("after-a")
        assert order.index("barrier") < order.index("after-b")
        assert order.index("before") < order.index("barrier")
    finally:
        pool.shutdown()


def test_failing_barrier_still_releases_and_shutdown_drops_held():
    pool = OrderedWorkerPool(2)
    ran = threading.Event()

    def broken() -> None:
        raise RuntimeError("boom")

    try:
        pool.submit_barrier(broken, key="life")
        pool.submit(ran.set, key="x")
        assert ran.wait(5)
    finally:
        pool.shutdown()
    assert all(not t.is_alive() for t in pool.threads)
    assert pool.submit(ran.set) is False and pool.submit_barrier(ran.set) is False
