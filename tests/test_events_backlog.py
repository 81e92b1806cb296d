"""The bound of the events waiting for listeners, and what happens to the events past it.

A listener that never returns must not make the pool hold every later event
of its channel: past ``max_queued_events`` (in all; ``max_queued_events //
workers`` per ordering key) the newest events are dropped, counted, and
reported in a rate-limited WARNING, while the other channels go on and the
thread handing events over never waits.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service_client import _defaults
from service_client.events import EventEmitter, OrderedWorkerPool, _drops, handoff_batch

#: The dropped-events line: the count since the last line, then the count since the start.
DROP_LINE = re.compile(r"^dropped (\d+) event\(s\) because their listeners are too far behind .* (\d+) dropped in all$",
                       re.DOTALL)


class Seen:
    """What a listener received per key, with an Event set once a key has ``want[key]`` of them."""

    def __init__(self, want: dict[str, int]) -> None:
        self.lock = threading.Lock()
        self.items: dict[str, list[int]] = {key: [] for key in want}
        self.want = want
        self.done = {key: threading.Event() for key in want}

    def add(self, key: str, i: int) -> None:
        with self.lock:
            got = self.items[key]
            got.append(i)
            if len(got) == self.want[key]:
                self.done[key].set()


class Blocker:
    """A listener that blocks on its first call until released, recording what it is given."""

    def __init__(self, seen: Seen, blocked_key: str) -> None:
        self.seen = seen
        self.blocked_key = blocked_key
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, key: str, i: int) -> None:
        if key == self.blocked_key and not self.started.is_set():
            self.started.set()
            assert self.release.wait(30)
        self.seen.add(key, i)


def drop_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, int]]:
    """(count since the last line, count since the start) of every dropped-events WARNING so far."""
    lines = []
    for record in caplog.records:
        match = DROP_LINE.match(record.getMessage())
        if record.name == "service_client.events" and match:
            assert record.levelno == logging.WARNING
            lines.append((int(match[1]), int(match[2])))
    return lines


@pytest.fixture
def caplog_events(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="service_client.events")
    return caplog


def test_a_blocked_listener_keeps_its_bound_while_200000_events_arrive(caplog_events):
    """The default bound: 12,500 events of the blocked channel are kept, the rest dropped and logged."""
    pool = OrderedWorkerPool(_defaults.DEFAULT_WORKERS, name="test-backlog")  # the Client's defaults
    emitter = EventEmitter(pool, name="test-backlog")
    key_max = _defaults.DEFAULT_MAX_QUEUED_EVENTS // _defaults.DEFAULT_WORKERS
    total, every = 200_000, 100  # every 100th event is of the other channel "b"
    b_count = total // every
    seen = Seen({"a": key_max, "b": b_count})
    listener = Blocker(seen, "a")
    emitter.on("message_create", listener)
    try:
        emitter.emit("message_create", "a", 0, key="a")  # blocks its worker
        assert listener.started.wait(10)
        started = time.monotonic()
        most_queued = 0
        for start in range(1, total + 1, 600):  # batches as the socket reader hands them over
            with handoff_batch():
                for i in range(start, min(start + 600, total + 1)):
                    key = "b" if i % every == 0 else "a"
                    emitter.emit("message_create", key, i, key=key)
            most_queued = max(most_queued, pool.queued_events)
        assert most_queued <= _defaults.DEFAULT_MAX_QUEUED_EVENTS
        assert most_queued <= key_max + b_count  # the blocked channel's share, and "b" not run yet
        a_count = total - b_count + 1
        assert pool.dropped_events == a_count - key_max
        first = drop_lines(caplog_events)
        assert first and first[0][0] >= 1  # logged at the first drop, not at the end

        # The other channel was not starved: all its events ran, in order, while "a" was blocked.
        assert seen.done["b"].wait(10)
        assert seen.items["b"] == list(range(every, total + 1, every))
        assert seen.items["a"] == []

        listener.release.set()
        assert seen.done["a"].wait(10)
        # Once released, the listener gets the events kept, the oldest ones, in arrival order ...
        assert seen.items["a"] == [0, *[i for i in range(1, total + 1) if i % every][: key_max - 1]]
        # ... and later events of its channel are accepted again.
        seen.want["a"] = key_max + 1
        seen.done["a"].clear()
        emitter.emit("message_create", "a", total + 1, key="a")
        assert seen.done["a"].wait(10)
        assert seen.items["a"][-1] == total + 1
    finally:
        listener.release.set()
        emitter.close()
        pool.shutdown()
    lines = drop_lines(caplog_events)
    # Rate-limited: the first drop, at most one line per interval meanwhile, and the rest at shutdown;
    # the lines count every drop exactly once.
    elapsed = time.monotonic() - started
    assert 2 <= len(lines) <= 2 + int(elapsed // _defaults.EVENT_DROP_LOG_INTERVAL_S)
    assert sum(count for count, _ in lines) == pool.dropped_events
    assert lines[-1][1] == pool.dropped_events


def test_the_line_names_the_key_the_count_and_the_bounds(caplog_events):
    pool = OrderedWorkerPool(2, name="test-backlog", max_queued_events=10)
    emitter = EventEmitter(pool, name="test-backlog")
    seen = Seen({"slow": 5})
    listener = Blocker(seen, "slow")
    emitter.on("tick", listener)
    try:
        emitter.emit("tick", "slow", 0, key="slow")
        assert listener.started.wait(10)
        for i in range(1, 8):
            emitter.emit("tick", "slow", i, key="slow")  # outside a batch: each checked at once
        assert pool.dropped_events == 3  # 5 of "slow" at most (10 // 2 workers), the running one included
        [record] = [r for r in caplog_events.records if r.name == "service_client.events"]
        assert record.levelno == logging.WARNING
        text = record.getMessage()
        assert text.startswith("dropped 1 event(s)")  # the first drop, at once
        assert "'slow': 1" in text and "never delivered" in text
        assert "At most 5 events of one ordering key and 10 in all" in text and "max_queued_events" in text
        listener.release.set()
        assert seen.done["slow"].wait(10)
        assert seen.items["slow"] == [0, 1, 2, 3, 4]
    finally:
        listener.release.set()
        emitter.close()
        pool.shutdown()
    assert [count for count, _ in drop_lines(caplog_events)] == [1, 2]  # the other two, at shutdown


def test_the_total_bound_holds_across_keys_and_unordered_events(caplog_events):
    pool = OrderedWorkerPool(1, name="test-backlog", max_queued_events=6)
    release = threading.Event()
    started = threading.Event()
    ran: list[Any] = []

    def run(items: list[Any]) -> None:
        if items[0] == "block":
            started.set()
            assert release.wait(10)
        ran.extend(items)

    try:
        assert pool.submit_item(run, "block", key="x")
        assert started.wait(10)
        accepted = [pool.submit_item(run, f"k{i}", key=f"k{i}") for i in range(4)]
        accepted += [pool.submit_item(run, "none", key=None), pool.submit_item(run, "late", key="k9")]
        assert accepted == [True, True, True, True, True, False]  # 6 in all, the running one included
        assert pool.queued_events == 6 and pool.dropped_events == 1
        release.set()
        deadline = time.monotonic() + 10
        while pool.queued_events and time.monotonic() < deadline:
            time.sleep(0.01)  # the count is only observable by polling
        assert pool.queued_events == 0
        assert sorted(ran) == sorted(["block", "k0", "k1", "k2", "k3", "none"])
        assert pool.submit_item(run, "again", key="k9")  # room again
    finally:
        release.set()
        pool.shutdown()


def test_a_reserved_place_past_the_bound_is_dropped_and_counted(caplog_events):
    pool = OrderedWorkerPool(2, name="test-backlog", max_queued_events=4)  # 2 per key
    emitter = EventEmitter(pool, name="test-backlog")
    seen = Seen({"k": 2})
    listener = Blocker(seen, "k")
    emitter.on("tick", listener)
    try:
        emitter.emit("tick", "k", 0, key="k")
        assert listener.started.wait(10)
        kept = emitter.reserve(key="k")
        lost = emitter.reserve(key="k")
        assert pool.dropped_events == 1
        registered = threading.Event()
        got: list[Any] = []

        def check(key: str, i: int) -> bool:
            registered.set()
            return i == 99

        waiting = threading.Thread(target=lambda: got.append(emitter.wait_for("tick", check=check, timeout=10)))
        waiting.start()
        while not registered.wait(0.05):  # until the waiter sees events (these are dropped for "k")
            emitter.emit("tick", "k", -1, key="k")
        lost.emit("tick", "k", 99)  # no listener runs: its place was dropped; the waiter sees it
        waiting.join(10)
        assert got == [("k", 99)]
        kept.emit("tick", "k", 1)
        listener.release.set()
        assert seen.done["k"].wait(10)
        seen.want["k"] = 3
        seen.done["k"].clear()
        emitter.emit("tick", "k", 2, key="k")  # 99 would have run before it
        assert seen.done["k"].wait(10)
        assert seen.items["k"] == [0, 1, 2]
    finally:
        listener.release.set()
        emitter.close()
        pool.shutdown()


def test_wait_for_still_sees_an_event_its_listeners_lost(caplog_events):
    pool = OrderedWorkerPool(2, name="test-backlog", max_queued_events=2)  # 1 per key
    emitter = EventEmitter(pool, name="test-backlog")
    seen = Seen({"k": 1})
    listener = Blocker(seen, "k")
    emitter.on("tick", listener)
    got: list[Any] = []
    waiting = threading.Thread(target=lambda: got.append(emitter.wait_for("tick", check=lambda k, i: i == 7,
                                                                          timeout=10)))
    try:
        emitter.emit("tick", "k", 0, key="k")
        assert listener.started.wait(10)
        waiting.start()
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:  # until the waiter is registered
            emitter.emit("tick", "k", 7, key="k")
            waiting.join(0.05)
        assert got == [("k", 7)]
        assert pool.dropped_events >= 1
    finally:
        listener.release.set()
        waiting.join(10)
        emitter.close()
        pool.shutdown()


def test_an_idle_worker_reports_the_rest_once_the_interval_has_passed(caplog_events, monkeypatch):
    monkeypatch.setattr(_defaults, "EVENT_DROP_LOG_INTERVAL_S", 0.3)
    pool = OrderedWorkerPool(2, name="test-backlog", max_queued_events=2)  # 1 per key
    release = threading.Event()
    started = threading.Event()
    hold = threading.Event()

    def block(items: list[Any]) -> None:
        started.set()
        assert release.wait(10)

    try:
        assert pool.submit(lambda: hold.wait(10), key="other")  # so that a second worker starts
        pool.submit_item(block, 0, key="k")
        assert started.wait(10)
        hold.set()  # one worker idle, the other blocked
        assert not pool.submit_item(block, 1, key="k")  # logged at once
        assert [count for count, _ in drop_lines(caplog_events)] == [1]
        for i in range(2, 6):
            assert not pool.submit_item(block, i, key="k")  # within the interval: counted only
        assert [count for count, _ in drop_lines(caplog_events)] == [1]
        deadline = time.monotonic() + 10
        while len(drop_lines(caplog_events)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # nothing else happens: the idle worker logs the rest by itself
        assert [count for count, _ in drop_lines(caplog_events)] == [1, 4]
    finally:
        release.set()
        pool.shutdown()


def test_drops_are_printed_on_stderr_when_logging_is_not_configured(monkeypatch, capsys):
    monkeypatch.setattr(_drops, "_logging_reaches_a_handler", lambda logger: False)
    pool = OrderedWorkerPool(1, name="test-backlog", max_queued_events=1)
    release = threading.Event()
    started = threading.Event()

    def block(items: list[Any]) -> None:
        started.set()
        assert release.wait(10)

    try:
        pool.submit_item(block, 0, key="k")
        assert started.wait(10)
        assert not pool.submit_item(block, 1, key="k")
    finally:
        release.set()
        pool.shutdown()
    err = capsys.readouterr().err
    assert err.startswith("WARNING:service_client.events:") and err.count("\n") == 1
    assert DROP_LINE.match(err.strip().split(":", 2)[2])


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-5, ValueError), (True, TypeError), ("100", TypeError), (1.5, TypeError)],
)
def test_max_queued_events_is_checked(value, error):
    with pytest.raises(error, match="max_queued_events"):
        OrderedWorkerPool(2, max_queued_events=value)
