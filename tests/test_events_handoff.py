"""Handing tasks to the worker pool in batches, and workers running several tasks of a key at once.

Neither may change what runs or in which order: a batch only delays when the
noted tasks are queued, never their order relative to anything the same
thread does, and a worker's run never passes an unfilled slot nor outlives
a shutdown.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from service_client.events import OrderedWorkerPool, flush_handoff, handoff_batch


@pytest.fixture
def pool() -> Iterator[OrderedWorkerPool]:
    p = OrderedWorkerPool(4, name="test-handoff")
    yield p
    p.shutdown()


class Order:
    """Names appended by tasks, with an Event per name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: list[str] = []
        self.seen: dict[str, threading.Event] = {}

    def task(self, name: str) -> threading.Event:
        self.seen[name] = threading.Event()
        return self.seen[name]

    def __call__(self, name: str) -> None:
        with self.lock:
            self.names.append(name)
        self.seen[name].set()

    def add(self, pool: OrderedWorkerPool, name: str, key: str = "k") -> threading.Event:
        event = self.task(name)
        assert pool.submit(lambda: self(name), key=key)
        return event


def test_noted_tasks_run_when_the_block_ends(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        first = order.add(pool, "a")
        order.add(pool, "b")
        assert not first.wait(0.2)  # noted, not queued yet
    assert order.seen["b"].wait(5)
    assert order.names == ["a", "b"]


def test_a_reservation_inside_a_block_keeps_its_place(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        order.add(pool, "a")
        slot = pool.reserve(key="k")
        order.add(pool, "c")
    assert order.seen["a"].wait(5)
    assert not order.seen["c"].wait(0.2)  # behind the unfilled slot
    order.task("b")
    slot.fill(lambda: order("b"))
    assert order.seen["c"].wait(5)
    assert order.names == ["a", "b", "c"]


def test_a_barrier_inside_a_block_keeps_its_place(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        order.add(pool, "before")
        order.task("barrier")
        pool.submit_barrier(lambda: order("barrier"), key="k")
        order.add(pool, "after", key="other")  # another key: held until the barrier returns
    assert order.seen["after"].wait(5)
    assert order.names == ["before", "barrier", "after"]


def test_flush_queues_the_noted_tasks_before_another_threads_task(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        order.add(pool, "noted")
        flush_handoff()
        other = threading.Thread(target=order.add, args=(pool, "other"))
        other.start()
        other.join(5)
        assert order.seen["other"].wait(5)
    assert order.names == ["noted", "other"]


def test_other_threads_are_not_held_by_a_block(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        order.add(pool, "held")
        other = threading.Thread(target=order.add, args=(pool, "free", "z"))
        other.start()
        other.join(5)
        assert order.seen["free"].wait(5)
        assert "held" not in order.names
    assert order.seen["held"].wait(5)


def test_nested_blocks_join_the_outermost(pool: OrderedWorkerPool) -> None:
    order = Order()
    with handoff_batch():
        with handoff_batch():
            order.add(pool, "inner")
        assert not order.seen["inner"].wait(0.2)
    assert order.seen["inner"].wait(5)


def test_an_exception_in_the_block_still_hands_the_tasks_over(pool: OrderedWorkerPool) -> None:
    order = Order()
    with pytest.raises(RuntimeError), handoff_batch():
        order.add(pool, "a")
        raise RuntimeError("boom")
    assert order.seen["a"].wait(5)


def test_a_shut_down_pool_refuses_inside_a_block_too(pool: OrderedWorkerPool) -> None:
    pool.shutdown()
    with handoff_batch():
        assert pool.submit(lambda: None, key="k") is False


def test_tasks_noted_for_a_pool_shut_down_before_the_block_ends_never_run(pool: OrderedWorkerPool) -> None:
    ran: list[str] = []
    with handoff_batch():
        pool.submit(lambda: ran.append("x"), key="k")
        pool.shutdown()
    assert ran == []
    assert not pool.threads


# -- a worker's run of several tasks -------------------------------------------------------------


def test_a_shutdown_inside_a_run_drops_the_rest_of_it() -> None:
    pool = OrderedWorkerPool(1, name="test-run")
    ran: list[int] = []
    gate = threading.Event()
    try:
        with handoff_batch():  # queued together: one worker takes them in one run
            pool.submit(lambda: gate.wait(5), key="k")
            pool.submit(lambda: (ran.append(1), pool.shutdown(0)), key="k")
            for i in range(2, 6):
                pool.submit(lambda i=i: ran.append(i), key="k")  # type: ignore[misc]
        gate.set()
        for thread in pool.threads:
            thread.join(5)
        assert ran == [1]
    finally:
        pool.shutdown()


def test_a_run_stops_before_an_unfilled_slot() -> None:
    pool = OrderedWorkerPool(1, name="test-run")
    order = Order()
    try:
        with handoff_batch():
            order.add(pool, "a")
            slot = pool.reserve(key="k")
            order.add(pool, "c")
        assert order.seen["a"].wait(5)
        assert not order.seen["c"].wait(0.2)
        order.task("b")
        slot.fill(lambda: order("b"))
        assert order.seen["c"].wait(5)
        assert order.names == ["a", "b", "c"]
    finally:
        pool.shutdown()


def test_a_waiting_key_runs_before_the_next_task_of_a_busy_one() -> None:
    pool = OrderedWorkerPool(1, name="test-run")  # one worker: the order shows the choice it makes
    order = Order()
    try:
        with handoff_batch():
            order.add(pool, "a1", key="a")
            order.add(pool, "b1", key="b")
            order.add(pool, "a2", key="a")
            order.add(pool, "b2", key="b")
        assert order.seen["b2"].wait(5) and order.seen["a2"].wait(5)
        assert order.names == ["a1", "b1", "a2", "b2"]
    finally:
        pool.shutdown()


# -- items of one key joining one task ------------------------------------------------------------


class Items:
    """A function for submit_item: records every call's items, and an Event once ``count`` items ran."""

    def __init__(self, count: int) -> None:
        self.calls: list[list[int]] = []
        self.lock = threading.Lock()
        self.called = threading.Event()
        self.done = threading.Event()
        self.count = count

    def __call__(self, items: list[int]) -> None:
        with self.lock:
            self.calls.append(list(items))
            self.called.set()
            if sum(map(len, self.calls)) >= self.count:
                self.done.set()

    @property
    def ran(self) -> list[int]:
        return [item for call in self.calls for item in call]


def test_items_of_one_key_join_one_call_in_order(pool: OrderedWorkerPool) -> None:
    items = Items(100)
    with handoff_batch():
        for i in range(100):
            assert pool.submit_item(items, i, key="k")
    assert items.done.wait(5)
    assert items.ran == list(range(100))
    assert [len(call) for call in items.calls] == [64, 36]  # at most 64 items a call


def test_items_never_join_across_another_task_of_their_key(pool: OrderedWorkerPool) -> None:
    items = Items(4)
    order = Order()
    with handoff_batch():
        pool.submit_item(items, 1, key="k")
        pool.submit_item(items, 2, key="k")
        event = order.add(pool, "between")
        pool.submit_item(lambda batch: (order("after"), items(batch)), 3, key="k")
        order.task("after")
        pool.submit_item(items, 4, key="k")
    assert items.done.wait(5) and event.wait(5)
    assert items.ran == [1, 2, 3, 4]
    assert items.calls[0] == [1, 2]
    assert order.names == ["between", "after"]


def test_items_never_join_across_a_reservation(pool: OrderedWorkerPool) -> None:
    items = Items(2)
    with handoff_batch():
        pool.submit_item(items, 1, key="k")
        slot = pool.reserve(key="k")
        pool.submit_item(items, 2, key="k")
    assert items.called.wait(5)
    assert not items.done.wait(0.2)  # 2 waits behind the unfilled slot
    assert items.calls == [[1]]
    slot.fill(None)
    assert items.done.wait(5)
    assert items.calls == [[1], [2]]


def test_items_without_key_or_outside_a_block_run_alone(pool: OrderedWorkerPool) -> None:
    items = Items(4)
    with handoff_batch():
        pool.submit_item(items, 1)
        pool.submit_item(items, 2)
    pool.submit_item(items, 3, key="k")
    pool.submit_item(items, 4, key="k")
    assert items.done.wait(5)
    assert sorted(map(tuple, items.calls)) == [(1,), (2,), (3,), (4,)]


def test_items_of_different_keys_or_functions_do_not_join(pool: OrderedWorkerPool) -> None:
    first, second = Items(2), Items(1)
    with handoff_batch():
        pool.submit_item(first, 1, key="a")
        pool.submit_item(first, 2, key="b")
        pool.submit_item(second, 3, key="a")
    assert first.done.wait(5) and second.done.wait(5)
    assert sorted(map(tuple, first.calls)) == [(1,), (2,)]
    assert second.calls == [[3]]


def test_a_shut_down_pool_refuses_items(pool: OrderedWorkerPool) -> None:
    pool.shutdown()
    assert pool.closed
    with handoff_batch():
        assert pool.submit_item(Items(1), 1, key="k") is False
    assert pool.submit_item(Items(1), 1, key="k") is False


def test_when_idle_runs_at_once_after_shutdown_when_no_task_runs():
    pool = OrderedWorkerPool(2, name="idle")
    pool.submit(lambda: None, key="a")
    pool.shutdown(1.0)
    called = []
    pool.when_idle(lambda: called.append(threading.current_thread().name))
    assert called == [threading.current_thread().name]


def test_when_idle_waits_for_the_task_that_runs_at_shutdown():
    pool = OrderedWorkerPool(1, name="idle")
    entered, release, idle = threading.Event(), threading.Event(), threading.Event()

    def running() -> None:
        entered.set()
        release.wait(5)

    pool.submit(running, key="a")
    assert entered.wait(5)
    pool.shutdown(0.05)                                  # the task goes on running
    calls = []
    pool.when_idle(lambda: (calls.append("idle"), idle.set()))
    assert calls == []                                   # not while the task runs
    release.set()
    assert idle.wait(5) and calls == ["idle"]
