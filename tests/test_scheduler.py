"""Scheduled work (events/scheduler.py): due order, cancel, repeating tasks, errors, the clocks."""

from __future__ import annotations

import datetime
import logging
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from service_client.errors import ServiceError
from service_client.events import EventEmitter, OrderedWorkerPool
from service_client.events.clock import ManualClock, MonotonicClock
from service_client.events.scheduler import Scheduler


class Rig:
    """A pool, an emitter and a scheduler on a manual clock, as a client builds them."""

    def __init__(self) -> None:
        self.pool = OrderedWorkerPool(4, name="sched-test")
        self.emitter = EventEmitter(self.pool, name="sched-test")
        self.clock = ManualClock()
        self.scheduler = Scheduler(self.pool, self.emitter, clock=self.clock, name="sched-test")
        self.errors: list[BaseException] = []
        self.error_seen = threading.Event()

        @self.emitter.on("error")
        def on_error(exc: BaseException) -> None:
            self.errors.append(exc)
            self.error_seen.set()

    def close(self) -> None:
        self.scheduler.close()
        self.emitter.close()
        self.pool.shutdown()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


def test_calls_run_in_due_order_on_pool_workers_and_ties_in_scheduling_order(rig: Rig) -> None:
    ran: list[tuple[str, float, str]] = []

    def note(name: str) -> None:
        ran.append((name, rig.clock.now(), threading.current_thread().name))

    rig.scheduler.call_later(30, note, "c")
    rig.scheduler.call_later(10, note, "a")
    rig.scheduler.call_later(20, note, "b1")
    rig.scheduler.call_later(20, note, "b2")
    rig.scheduler.call_later(31, note, "later")
    assert rig.clock.advance(30) == 4
    assert [(n, t) for n, t, _ in ran] == [("a", 10.0), ("b1", 20.0), ("b2", 20.0), ("c", 30.0)]
    assert all(thread.startswith("sched-test-events-") for _, _, thread in ran)
    assert rig.clock.now() == 30.0
    assert rig.clock.advance(1) == 1 and ran[-1][:2] == ("later", 31.0)


def test_a_manual_clock_runs_nothing_by_itself_and_advance_zero_runs_what_is_due(rig: Rig) -> None:
    ran = threading.Event()
    call = rig.scheduler.call_later(0, ran.set)
    assert not ran.wait(0.1)  # time stands still: nothing runs until the clock is advanced
    assert rig.scheduler.thread is None
    assert rig.clock.advance(0) == 1 and ran.is_set() and call.done() and not call.cancelled()


def test_cancel_before_the_time_and_after_it(rig: Rig) -> None:
    ran: list[str] = []
    first = rig.scheduler.call_later(5, ran.append, "first")
    second = rig.scheduler.call_later(5, ran.append, "second")
    assert first.cancel() is True and first.cancelled() and first.done()
    assert first.cancel() is False  # once
    assert rig.scheduler.pending == 1
    assert rig.clock.advance(10) == 1 and ran == ["second"]
    assert second.cancel() is False and not second.cancelled()
    assert second.when() == 5.0


def test_a_call_may_cancel_another_due_at_the_same_time_and_schedule_more(rig: Rig) -> None:
    ran: list[str] = []
    handles: dict[str, Any] = {}

    def first() -> None:
        ran.append("first")
        assert handles["second"].cancel() is True  # no lock is held while a call runs
        rig.scheduler.call_later(1, ran.append, "scheduled from inside")

    handles["first"] = rig.scheduler.call_later(5, first)
    handles["second"] = rig.scheduler.call_later(5, ran.append, "second")
    assert rig.clock.advance(6) == 2
    assert ran == ["first", "scheduled from inside"]


def test_a_repeating_task_runs_the_right_number_of_times_over_a_long_advance(rig: Rig) -> None:
    times: list[float] = []

    @rig.scheduler.every(minutes=1)
    def tick() -> None:
        times.append(rig.clock.now())

    assert rig.clock.advance(600) == 0  # not started: nothing runs
    tick.start()
    assert tick.is_running() and tick.next_run == 600.0
    assert rig.clock.advance(3600) == 61  # at start, then every 60 s up to and including +3600 s
    assert times[:3] == [600.0, 660.0, 720.0] and times[-1] == 4200.0
    assert tick.runs == 61 and tick.next_run == 4260.0


def test_count_stops_a_task_and_start_passes_its_arguments(rig: Rig) -> None:
    got: list[str] = []

    @rig.scheduler.every(seconds=10, count=3)
    def say(word: str) -> None:
        got.append(word)

    say.start("hi")
    assert rig.clock.advance(100) == 3 and got == ["hi", "hi", "hi"]
    assert not say.is_running() and say.next_run is None
    say("direct")  # calling the task calls the function
    assert got[-1] == "direct"


def test_a_task_stopping_itself_from_inside_runs_no_more_and_can_start_again(rig: Rig) -> None:
    runs: list[float] = []

    @rig.scheduler.every(seconds=10)
    def tick() -> None:
        runs.append(rig.clock.now())
        if len(runs) == 3:
            tick.stop()

    tick.start()
    assert rig.clock.advance(100) == 3 and runs == [0.0, 10.0, 20.0]
    assert not tick.is_running()
    tick.start()
    assert rig.clock.advance(0) == 1 and runs[-1] == 100.0
    with pytest.raises(RuntimeError, match="running already"):
        tick.start()


def test_change_interval_moves_the_pending_run_and_the_later_ones(rig: Rig) -> None:
    times: list[float] = []

    @rig.scheduler.every(seconds=60)
    def tick() -> None:
        times.append(rig.clock.now())

    tick.start()
    rig.clock.advance(60)
    assert times == [0.0, 60.0] and tick.next_run == 120.0
    tick.change_interval(seconds=10)
    assert tick.interval == 10.0 and tick.next_run == 70.0
    rig.clock.advance(30)
    assert times == [0.0, 60.0, 70.0, 80.0, 90.0]

    @rig.scheduler.every(seconds=10)
    def slower() -> None:
        times.append(-rig.clock.now())
        if rig.clock.now() == 100.0:
            slower.change_interval(minutes=1)  # from inside its own run: the next run obeys it

    times.clear()
    slower.start()
    rig.clock.advance(70)
    assert [t for t in times if t <= 0] == [-90.0, -100.0, -160.0]


def test_a_repeating_task_runs_again_after_an_exception_which_is_reported(rig: Rig) -> None:
    runs: list[int] = []

    @rig.scheduler.every(seconds=1)
    def flaky() -> None:
        runs.append(1)
        if len(runs) == 1:
            raise ValueError("first run failed")

    flaky.start()
    assert rig.clock.advance(2) == 3
    assert len(runs) == 3
    assert rig.error_seen.wait(5)
    assert [str(e) for e in rig.errors] == ["first run failed"]


def test_an_exception_is_reported_like_a_listener_s_without_an_error_listener(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = OrderedWorkerPool(2, name="sched-log")
    emitter = EventEmitter(pool, name="sched-log")
    scheduler = Scheduler(pool, emitter, clock=ManualClock())
    try:

        def remind() -> None:
            raise KeyError("gone")

        scheduler.call_later(1, remind)
        with caplog.at_level(logging.ERROR, logger="service_client.events"):
            assert scheduler.clock.advance(1) == 1  # type: ignore[attr-defined]
        assert any("Exception in the 'call_later' callback" in r.getMessage() and "remind" in r.getMessage()
                   for r in caplog.records)
    finally:
        scheduler.close()
        emitter.close()
        pool.shutdown()


def test_advance_raises_when_a_call_does_not_end_in_time(rig: Rig) -> None:
    release = threading.Event()
    rig.scheduler.call_later(1, release.wait, 5)
    with pytest.raises(TimeoutError, match="did not end within 0.1 s"):
        rig.clock.advance(5, timeout=0.1)
    release.set()


@pytest.mark.parametrize(
    ("delay", "error", "text"),
    [
        ("1", TypeError, "delay_s must be a number of seconds"),
        (True, TypeError, "delay_s must be a number of seconds"),
        (None, TypeError, "delay_s must be a number of seconds"),
        (-1, ValueError, "delay_s must be a finite number of seconds >= 0"),
        (math.nan, ValueError, "delay_s must be a finite number"),
        (math.inf, ValueError, "delay_s must be a finite number"),
        pytest.param(10**400, ValueError, "delay_s must be a finite number of seconds >= 0, got an int too large",
                     id="int-too-large-for-a-float"),
    ],
)
def test_call_later_refuses_a_bad_delay(rig: Rig, delay: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        rig.scheduler.call_later(delay, print)
    assert rig.scheduler.pending == 0


def test_bad_functions_and_intervals_are_refused_naming_the_argument(rig: Rig) -> None:
    with pytest.raises(TypeError, match="fn must be callable, got str"):
        rig.scheduler.call_later(1, "print")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval .* must be at least 0.001 seconds"):
        rig.scheduler.every()
    with pytest.raises(ValueError, match="minutes must be a finite number of seconds >= 0"):
        rig.scheduler.every(minutes=-1)
    with pytest.raises(TypeError, match="hours must be a number"):
        rig.scheduler.every(hours="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="count must be at least 1"):
        rig.scheduler.every(seconds=1, count=0)
    with pytest.raises(TypeError, match="count must be an int"):
        rig.scheduler.every(seconds=1, count=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decorated object must be callable"):
        rig.scheduler.every(seconds=1)(42)  # type: ignore[arg-type]
    task = rig.scheduler.every(seconds=1)(print)
    with pytest.raises(ValueError, match="seconds must be a finite number"):
        task.change_interval(seconds=math.nan)
    assert task.interval == 1.0
    with pytest.raises(ValueError, match="seconds must be a finite number of seconds >= 0"):
        rig.clock.advance(-1)


def test_close_cancels_everything_and_refuses_more(rig: Rig) -> None:
    ran: list[str] = []
    call = rig.scheduler.call_later(5, ran.append, "never")
    task = rig.scheduler.every(seconds=1)(ran.append)
    task.start("never either")
    rig.scheduler.close()
    assert call.cancelled() and not task.is_running()
    assert rig.clock.advance(100) == 0 and ran == []
    with pytest.raises(ServiceError, match="destroyed"):
        rig.scheduler.call_later(1, print)
    with pytest.raises(ServiceError, match="destroyed"):
        task.start()


def test_the_real_clock_runs_calls_on_time_from_one_named_thread_that_ends_when_idle() -> None:
    pool = OrderedWorkerPool(2, name="sched-real")
    emitter = EventEmitter(pool, name="sched-real")
    scheduler = Scheduler(pool, emitter, name="sched-real")
    try:
        assert isinstance(scheduler.clock, MonotonicClock)
        done = threading.Event()
        start = scheduler.clock.now()
        seen: list[float] = []
        scheduler.call_later(0.05, lambda: (seen.append(scheduler.clock.now() - start), done.set()))
        thread = scheduler.thread
        assert thread is not None and thread.name.startswith("sched-real-scheduler-") and thread.daemon
        assert done.wait(5) and seen[0] >= 0.05

        ticks = threading.Event()
        count: list[int] = []

        @scheduler.every(seconds=0.01, count=3)
        def tick() -> None:
            count.append(1)
            if len(count) == 3:
                ticks.set()

        tick.start()
        assert ticks.wait(5)
        thread = scheduler.thread
        assert thread is not None
        thread.join(5)  # nothing pending: the thread ends by itself after a second
        assert not thread.is_alive() and scheduler.thread is None
        assert len(count) == 3
    finally:
        scheduler.close()
        emitter.close()
        pool.shutdown()


def test_switching_clocks_keeps_the_delay_left() -> None:
    pool = OrderedWorkerPool(1, name="sched-switch")
    emitter = EventEmitter(pool, name="sched-switch")
    scheduler = Scheduler(pool, emitter, name="sched-switch")
    try:
        ran: list[float] = []
        scheduler.call_later(3600, lambda: ran.append(clock.now()))
        clock = ManualClock(start=100.0)
        scheduler.set_clock(clock)
        assert clock.advance(3599) == 0
        assert clock.advance(1) == 1 and ran == [pytest.approx(3700.0, abs=0.5)]
        with pytest.raises(TypeError, match="now\\(\\) method"):
            scheduler.set_clock(object())  # type: ignore[arg-type]
        scheduler.set_clock(None)
        assert isinstance(scheduler.clock, MonotonicClock)
    finally:
        scheduler.close()
        emitter.close()
        pool.shutdown()


def test_huge_ints_are_refused_with_a_value_error_naming_the_argument(rig: Rig) -> None:
    with pytest.raises(ValueError, match="seconds must be a finite number of seconds >= 0, got an int too large"):
        rig.scheduler.every(seconds=10**400)
    with pytest.raises(ValueError, match="hours must be a finite number"):
        rig.scheduler.every(hours=-(10**400))
    with pytest.raises(ValueError, match="must be finite"):
        rig.scheduler.every(hours=1e306)  # each part is finite, the sum in seconds is not
    with pytest.raises(ValueError, match="seconds must be a finite number"):
        rig.clock.advance(10**400)
    assert rig.scheduler.pending == 0 and rig.clock.now() == 0.0


def test_an_interval_below_1_ms_is_refused_and_a_task_always_moves_forward(rig: Rig) -> None:
    with pytest.raises(ValueError, match="interval .* must be at least 0.001 seconds, got 1e-14"):
        rig.scheduler.every(seconds=1e-14)
    with pytest.raises(ValueError, match="interval .* must be at least 0.001 seconds"):
        rig.scheduler.every(seconds=1)(print).change_interval(seconds=0.0009)
    rig.clock = ManualClock(start=1e14)  # 1 ms is below half a float step here: when + interval == when
    rig.scheduler.set_clock(rig.clock)
    task = rig.scheduler.every(seconds=0.001)(lambda: None)
    task.start()
    done = threading.Event()
    ran: list[int] = []
    advancing = threading.Thread(target=lambda: (ran.append(rig.clock.advance(0)), done.set()), daemon=True)
    advancing.start()
    finished = done.wait(5)
    task.stop()  # lets a looping advance end
    assert finished and ran == [1]
    assert task.runs == 1


class FlakyClock:
    """The real clock, but ``now()`` raises ``fail`` times once armed."""

    def __init__(self) -> None:
        self.fail = 0
        self.lock = threading.Lock()

    def now(self) -> float:
        with self.lock:
            if self.fail:
                self.fail -= 1
                raise RuntimeError("the clock is broken")
        return MonotonicClock().now()


def test_the_timer_thread_survives_a_failing_clock_reports_it_and_runs_the_call(rig: Rig) -> None:
    clock = FlakyClock()
    rig.scheduler.set_clock(clock)
    ran = threading.Event()
    rig.scheduler.call_later(0.05, ran.set)
    thread = rig.scheduler.thread
    with clock.lock:
        clock.fail = 2  # the timer thread reads it next: it fails twice, then works again
    assert rig.error_seen.wait(5)
    assert isinstance(rig.errors[0], RuntimeError) and str(rig.errors[0]) == "the clock is broken"
    assert ran.wait(5)  # the call still runs, on the same thread
    assert thread is not None and rig.scheduler.thread in (thread, None)
    assert thread.is_alive() or rig.scheduler.thread is None
    again = threading.Event()
    rig.scheduler.call_later(0, again.set)
    assert again.wait(5)


def test_a_dead_timer_thread_is_replaced(rig: Rig) -> None:
    rig.scheduler.set_clock(None)
    dead = threading.Thread(target=lambda: None, name="sched-test-dead")
    dead.start()
    dead.join()
    with rig.scheduler._lock:
        rig.scheduler._thread = dead  # what a thread killed by an exception leaves behind
    ran = threading.Event()
    rig.scheduler.call_later(0, ran.set)
    assert ran.wait(5)
    assert rig.scheduler.thread is not dead


def test_close_cancels_a_call_handed_to_the_pool_and_not_started(rig: Rig) -> None:
    gate = threading.Event()
    busy = [threading.Event() for _ in range(4)]
    for started in busy:
        rig.pool.submit(lambda started=started: (started.set(), gate.wait(10)))  # type: ignore[misc]
    assert all(started.wait(5) for started in busy)
    ran: list[str] = []
    call = rig.scheduler.call_later(0, ran.append, "never")
    outcome: list[object] = []

    def advance() -> None:
        try:
            outcome.append(rig.clock.advance(0, timeout=10))
        except Exception as exc:  # noqa: BLE001 - the test asserts on it
            outcome.append(exc)

    advancing = threading.Thread(target=advance, daemon=True)
    advancing.start()
    deadline = MonotonicClock().now() + 5
    while "queued" not in repr(call) and MonotonicClock().now() < deadline:
        advancing.join(0.01)  # no event tells when the call reaches the pool's queue
    assert "queued" in repr(call)
    rig.scheduler.close()
    assert call.done() and call.cancelled()
    advancing.join(5)
    assert not advancing.is_alive() and outcome == [1]
    gate.set()
    rig.pool.shutdown()
    assert ran == []


def test_a_bad_clock_is_refused_and_the_old_one_stays(rig: Rig) -> None:
    class WrongType:
        def now(self) -> Any:
            return "oops"

    class NotFinite:
        def now(self) -> float:
            return math.nan

    class Raises:
        def now(self) -> float:
            raise RuntimeError("no time")

    ran = threading.Event()
    rig.scheduler.call_later(5, ran.set)
    with pytest.raises(TypeError, match="clock.now\\(\\) must return a number of seconds .*got str"):
        rig.scheduler.set_clock(WrongType())
    with pytest.raises(ValueError, match="clock.now\\(\\) must return a finite number of seconds, got nan"):
        rig.scheduler.set_clock(NotFinite())
    with pytest.raises(RuntimeError, match="no time"):
        rig.scheduler.set_clock(Raises())
    assert rig.scheduler.clock is rig.clock
    assert rig.clock.advance(5) == 1 and ran.is_set()
    rig.scheduler.set_clock(None)
    assert isinstance(rig.scheduler.clock, MonotonicClock)


def test_set_clock_leaves_a_clock_that_fails_keeping_the_calls_apart(rig: Rig) -> None:
    broken = FlakyClock()
    rig.scheduler.set_clock(broken)
    first = rig.scheduler.call_later(10, print)
    second = rig.scheduler.call_later(20, print)
    with broken.lock:
        broken.fail = 10**6
    manual = ManualClock(start=50.0)
    rig.scheduler.set_clock(manual)
    assert rig.scheduler.clock is manual
    assert first.when() == 50.0 and second.when() == pytest.approx(60.0, abs=0.1)


# -- stop and start during a run, set_clock during a run -----------------------------------------


def test_stop_then_start_during_a_run_never_lets_two_runs_overlap() -> None:
    pool = OrderedWorkerPool(4, name="sched-overlap")
    emitter = EventEmitter(pool, name="sched-overlap")
    scheduler = Scheduler(pool, emitter, name="sched-overlap")  # the real clock: due runs start by themselves
    active, most = [0], [0]
    lock = threading.Lock()
    release = threading.Event()
    first_in, second_done = threading.Event(), threading.Event()
    try:
        @scheduler.every(seconds=30)
        def slow(label: str) -> None:
            with lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
            if label == "first":
                first_in.set()
                release.wait(5)
            with lock:
                active[0] -= 1
            if label == "second":
                second_done.set()

        slow.start("first")
        assert first_in.wait(5)
        slow.stop()
        slow.start("second")  # its first run waits for the first start's run to end
        assert slow.is_running() and slow.next_run is None
        assert not second_done.wait(0.2)  # would have run by now on another worker
        release.set()
        assert second_done.wait(5)
        assert most[0] == 1
        assert slow.next_run is not None and slow.runs == 1
    finally:
        release.set()
        scheduler.close()
        emitter.close()
        pool.shutdown()


def test_set_clock_during_a_run_plans_the_next_run_on_the_new_clock(rig: Rig) -> None:
    new = ManualClock(start=1000.0)

    @rig.scheduler.every(seconds=60)
    def switch() -> None:
        if switch.runs == 0:
            rig.scheduler.set_clock(new)

    switch.start()
    assert rig.clock.advance(0) == 1
    assert rig.scheduler.clock is new
    assert switch.next_run == 1060.0  # the interval counted from the run's due time, moved to the new clock
    assert new.advance(59) == 0 and new.advance(1) == 1


# -- wall-clock time and times of day ------------------------------------------------------------

T0 = datetime.datetime(2030, 3, 30, 8, 0, tzinfo=datetime.timezone.utc)  # a Saturday; summer time starts in Paris on the 31st


def test_a_manual_clock_moves_its_wall_clock_time_with_its_seconds() -> None:
    clock = ManualClock(start=5.0, utc=T0.astimezone(datetime.timezone(datetime.timedelta(hours=2))))
    assert clock.utcnow() == T0 and clock.utcnow().tzinfo == datetime.timezone.utc
    clock.advance(90.5)
    assert clock.now() == 95.5 and clock.utcnow() == T0 + datetime.timedelta(seconds=90.5)
    assert clock.advance_to(T0 - datetime.timedelta(hours=1)) == 0 and clock.now() == 95.5  # the past: nothing
    clock.advance_to(T0 + datetime.timedelta(hours=1))
    assert clock.now() == 3605.0
    with pytest.raises(TypeError, match="aware datetime"):
        ManualClock(utc=datetime.datetime(2030, 1, 1))
    with pytest.raises(TypeError, match="aware datetime"):
        clock.advance_to(datetime.datetime(2030, 1, 1))
    real = MonotonicClock().utcnow()
    assert real.tzinfo == datetime.timezone.utc
    assert abs((real - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) < 5
    assert abs((ManualClock().utcnow() - real).total_seconds()) < 5  # starts at the real time by default


@pytest.fixture
def wall_rig() -> Iterator[Rig]:
    r = Rig()
    r.clock = ManualClock(utc=T0)
    r.scheduler.set_clock(r.clock)
    yield r
    r.close()


def test_a_task_runs_at_its_times_of_day(wall_rig: Rig) -> None:
    rig = wall_rig
    seen: list[datetime.datetime] = []
    nine_utc = datetime.time(9, 0)  # naive: UTC
    evening = datetime.time(18, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-2)))  # 20:30 UTC

    @rig.scheduler.every(time=[evening, nine_utc, datetime.time(9, 0, tzinfo=datetime.timezone.utc)])
    def post() -> None:
        seen.append(rig.clock.utcnow())

    assert post.interval is None and post.times is not None and len(post.times) == 2  # the 9:00 twice is once
    post.start()
    assert post.next_run == 3600.0  # 9:00 is an hour after 8:00
    assert rig.clock.advance(3599) == 0
    assert rig.clock.advance(1) == 1 and seen == [T0 + datetime.timedelta(hours=1)]
    assert rig.clock.advance(2 * 86400) == 4
    hours = [(s - T0) / datetime.timedelta(hours=1) for s in seen]
    assert hours == [1, 12.5, 25, 36.5, 49]
    assert "at 18:30:00-02:00, 09:00:00+00:00" in repr(post)


def test_a_time_of_day_in_a_zone_follows_its_summer_time(wall_rig: Rig) -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        paris = zoneinfo.ZoneInfo("Europe/Paris")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("the time zone database has no Europe/Paris (install tzdata)")
    rig = wall_rig
    seen: list[datetime.datetime] = []

    @rig.scheduler.every(time=datetime.time(9, 0, tzinfo=paris))
    def morning() -> None:
        seen.append(rig.clock.utcnow())

    morning.start()
    rig.clock.advance(3 * 86400)
    # 9:00 in Paris is 8:00 UTC in winter (the 30th: now, so the first is the 31st) and 7:00 UTC in summer
    assert [s.isoformat() for s in seen] == ["2030-03-31T07:00:00+00:00", "2030-04-01T07:00:00+00:00",
                                             "2030-04-02T07:00:00+00:00"]


def test_time_and_an_interval_are_exclusive_and_times_are_checked(rig: Rig) -> None:
    with pytest.raises(ValueError, match="either time= or an interval"):
        rig.scheduler.every(minutes=5, time=datetime.time(9))
    with pytest.raises(TypeError, match="datetime.time"):
        rig.scheduler.every(time="09:00")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="every time must be a datetime.time"):
        rig.scheduler.every(time=[datetime.time(9), 10])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one"):
        rig.scheduler.every(time=[])
    with pytest.raises(TypeError, match="start_on_ready must be a bool"):
        rig.scheduler.every(minutes=1, start_on_ready=1)  # type: ignore[arg-type]


def test_change_interval_switches_between_an_interval_and_times_of_day(wall_rig: Rig) -> None:
    rig = wall_rig
    runs: list[float] = []

    @rig.scheduler.every(minutes=10)
    def job() -> None:
        runs.append(rig.clock.now())

    job.start()
    rig.clock.advance(0)
    job.change_interval(time=datetime.time(8, 30))
    assert job.next_run == 1800.0 and job.interval is None
    rig.clock.advance(1800)
    job.change_interval(hours=1)
    assert job.next_run == 1800.0 + 3600.0 and job.times is None
    assert runs == [0.0, 1800.0]


def test_new_clients_use_a_clock_given_for_the_context() -> None:
    from service_client.events.clock import clock_for_new_clients, new_clients_use

    clock = ManualClock()
    pool = OrderedWorkerPool(1, name="sched-ctx")
    emitter = EventEmitter(pool, name="sched-ctx")
    with new_clients_use(clock):
        assert clock_for_new_clients() is clock
        inside = Scheduler(pool, emitter, name="sched-ctx")
        other: list[object] = []
        thread = threading.Thread(target=lambda: other.append(Scheduler(pool, emitter).clock), name="test-ctx")
        thread.start()
        thread.join(5)
    outside = Scheduler(pool, emitter, name="sched-ctx")
    try:
        assert inside.clock is clock and isinstance(outside.clock, MonotonicClock)
        assert isinstance(other[0], MonotonicClock)  # another thread is another context
        assert clock_for_new_clients() is None
    finally:
        for scheduler in (inside, outside):
            scheduler.close()
        emitter.close()
        pool.shutdown()


# -- found in review: stop() and destroy() while a before_loop waits, times in several zones ----------


def test_a_task_stopped_while_its_before_loop_runs_never_runs_its_function(rig: Rig) -> None:
    entered, release = threading.Event(), threading.Event()
    runs: list[str] = []

    @rig.scheduler.every(hours=1)
    def leaderboard() -> None:
        runs.append("run")

    @leaderboard.before_loop
    def wait_for_the_client() -> None:
        entered.set()
        release.wait(5)

    leaderboard.start()
    advancing = threading.Thread(target=rig.clock.advance, args=(0,), name="test-advance")
    advancing.start()
    try:
        assert entered.wait(5)
        leaderboard.stop()  # say, its extension is unloaded before the client is ready
    finally:
        release.set()
        advancing.join(5)
    assert runs == [] and not leaderboard.is_running()
    assert rig.clock.advance(7200) == 0


def test_a_before_loop_stopping_its_own_task_prevents_the_first_run(rig: Rig) -> None:
    runs: list[str] = []

    @rig.scheduler.every(hours=1)
    def job() -> None:
        runs.append("run")

    @job.before_loop
    def not_today() -> None:
        job.stop()

    job.start()
    assert rig.clock.advance(3600) == 1 and runs == []
    assert job.runs == 0 and not job.is_running()


def test_destroy_while_a_before_loop_waits_until_ready_reports_nothing(rig: Rig) -> None:
    entered = threading.Event()
    runs: list[str] = []

    @rig.scheduler.every(hours=1)
    def job() -> None:
        runs.append("run")

    @job.before_loop
    def wait_for_the_client() -> None:
        entered.set()
        rig.scheduler.wait_ready(5)

    job.start()
    advancing = threading.Thread(target=rig.clock.advance, args=(0,), name="test-advance")
    advancing.start()
    assert entered.wait(5)
    rig.scheduler.close()  # the client's destroy(): a bad token, the end of a test
    advancing.join(5)
    assert not advancing.is_alive()
    assert runs == [] and rig.errors == []  # a normal shutdown, not an error


def test_a_start_on_ready_task_stopped_before_ready_stays_stopped(rig: Rig) -> None:
    @rig.scheduler.every(hours=1, start_on_ready=True)
    def job() -> None:
        """Stopped before ready (its extension unloaded): ready must not start it again."""

    job.stop()
    rig.scheduler.set_ready()
    assert not job.is_running() and rig.clock.advance(3600) == 0


def test_the_same_clock_time_in_two_zones_is_two_times(wall_rig: Rig) -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        paris, new_york = zoneinfo.ZoneInfo("Europe/Paris"), zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("the time zone database lacks Europe/Paris or America/New_York (install tzdata)")
    rig = wall_rig
    seen: list[str] = []

    @rig.scheduler.every(time=[datetime.time(9, 0, tzinfo=paris), datetime.time(9, 0, tzinfo=new_york),
                               datetime.time(9, 0, tzinfo=paris)])
    def open_markets() -> None:
        seen.append(rig.clock.utcnow().strftime("%H:%M"))

    assert open_markets.times is not None and len(open_markets.times) == 2  # Paris twice is once
    assert "at 09:00:00 Europe/Paris, 09:00:00 America/New_York" in repr(open_markets)
    open_markets.start()
    rig.clock.advance(86400)
    assert seen == ["13:00", "07:00"]  # 9:00 in New York (EDT from 10 March) on the 30th, 9:00 in Paris on the 31st


def test_an_advance_past_the_last_datetime_is_refused_and_leaves_the_clock_working() -> None:
    clock = ManualClock(utc=T0)
    with pytest.raises(ValueError, match="seconds=.* past the latest datetime"):
        clock.advance(1e12)  # some 31 700 years
    assert clock.now() == 0.0 and clock.utcnow() == T0 and "ManualClock" in repr(clock)
    with pytest.raises(ValueError, match="utc .* out of range"):
        ManualClock(utc=datetime.datetime.max.replace(tzinfo=datetime.timezone(datetime.timedelta(hours=-5))))


def test_a_repeating_task_goes_on_after_its_clock_failed_once_when_planning(rig: Rig) -> None:
    clock = FlakyClock()
    rig.scheduler.set_clock(clock)
    runs: list[float] = []
    three = threading.Event()

    @rig.scheduler.every(seconds=0.02)
    def tick() -> None:
        runs.append(1)
        if len(runs) == 1:
            with clock.lock:
                clock.fail = 1  # the next read is the planning of the run after this one
        if len(runs) == 3:
            three.set()

    tick.start()
    try:
        assert three.wait(5), f"the task stopped after {len(runs)} runs (next_run={tick.next_run})"
        assert rig.error_seen.wait(5) and str(rig.errors[0]) == "the clock is broken"  # reported, not lost
    finally:
        tick.stop()


def test_a_start_refused_by_a_failing_clock_leaves_the_task_stopped(rig: Rig) -> None:
    clock = FlakyClock()
    rig.scheduler.set_clock(clock)

    @rig.scheduler.every(minutes=1)
    def job() -> None:
        """Never runs here."""

    with clock.lock:
        clock.fail = 1
    with pytest.raises(RuntimeError, match="the clock is broken"):
        job.start()
    assert not job.is_running()  # nothing half-applied: start() works once the clock does
    job.start()
    # Its first run is due at once: a worker may already hold it (next_run is None meanwhile).
    assert job.is_running()
    job.stop()


def test_set_ready_starts_the_other_tasks_when_one_cannot_start_and_reports_it(rig: Rig) -> None:
    clock = FlakyClock()
    rig.scheduler.set_clock(clock)
    made = []
    for _ in range(2):
        @rig.scheduler.every(minutes=1, start_on_ready=True)
        def job() -> None:
            """Started at ready."""

        made.append(job)
    with clock.lock:
        clock.fail = 1  # the first task's start fails
    rig.scheduler.set_ready()  # called by the client's login: it must not raise
    assert [task.is_running() for task in made] == [False, True]
    assert rig.error_seen.wait(5) and str(rig.errors[0]) == "the clock is broken"
    made[1].stop()


def test_a_time_in_the_hour_summer_time_skips_runs_once_the_hour_after(wall_rig: Rig) -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        paris = zoneinfo.ZoneInfo("Europe/Paris")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("the time zone database has no Europe/Paris (install tzdata)")
    rig = wall_rig
    seen: list[str] = []

    @rig.scheduler.every(time=datetime.time(2, 30, tzinfo=paris))  # 2:30 does not exist in Paris on 31 March 2030
    def night() -> None:
        seen.append(rig.clock.utcnow().astimezone(paris).strftime("%d %H:%M"))

    night.start()
    rig.clock.advance(3 * 86400)
    assert seen == ["31 03:30", "01 02:30", "02 02:30"]


def test_set_clock_during_a_run_plans_the_next_time_of_day_on_the_new_clock_s_wall_time(wall_rig: Rig) -> None:
    rig = wall_rig
    new = ManualClock(start=1000.0, utc=T0 - datetime.timedelta(days=365))  # 8:00 UTC, a year earlier

    @rig.scheduler.every(time=datetime.time(9, 0))
    def switch() -> None:
        rig.scheduler.set_clock(new)

    switch.start()
    assert rig.clock.advance(3600) == 1 and rig.scheduler.clock is new
    assert switch.next_run == 1000.0 + 3600.0  # 9:00 on the new clock's day, not a year and a day away


def test_stop_while_a_worker_takes_the_run_still_keeps_the_next_start_from_overlapping(rig: Rig) -> None:
    blockers_go, entered, release, stop_returned = (threading.Event() for _ in range(4))
    active, most = [0], [0]
    lock = threading.Lock()

    @rig.scheduler.every(hours=1)
    def job() -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        if not stop_returned.is_set():  # a run that began during stop(): it goes on for a while
            entered.set()
            release.wait(5)
        with lock:
            active[0] -= 1

    for _ in range(4):  # every worker busy: the due run waits in the pool's queue
        rig.pool.submit(lambda: blockers_go.wait(5))
    job.start()
    first = threading.Thread(target=rig.clock.advance, args=(0,), kwargs={"timeout": 5}, name="test-advance")
    first.start()
    deadline = time.monotonic() + 5
    while not rig.scheduler._queued and time.monotonic() < deadline:  # handed to the pool, not started
        time.sleep(0.001)
    original = rig.scheduler._cancel

    def late_cancel(call: Any) -> bool:
        """The worker starts the run between stop()'s look at it and its cancel."""
        blockers_go.set()
        entered.wait(1)
        return original(call)

    rig.scheduler._cancel = late_cancel  # type: ignore[method-assign]
    try:
        job.stop()
        stop_returned.set()
        blockers_go.set()
        job.start()
        rig.clock.advance(0, timeout=5)
    finally:
        release.set()
        first.join(5)
        job.stop()
    assert most[0] == 1  # never two runs at once


def test_advance_to_a_time_of_day_runs_the_task_due_then_whatever_the_float_rounding(rig: Rig) -> None:
    nine = datetime.datetime(2030, 1, 1, 9, 0, tzinfo=datetime.timezone.utc)
    missed = []
    for case in range(100):
        clock = ManualClock(start=case * 7.77, utc=datetime.datetime(2030, 1, 1, 7, 13, 12, case * 9973,
                                                                       tzinfo=datetime.timezone.utc))
        rig.scheduler.set_clock(clock)
        clock.advance(case * 0.37)

        @rig.scheduler.every(time=datetime.time(9, 0))
        def at_nine() -> None:
            """Due at 9:00 on the clock's wall-clock time."""

        at_nine.start()
        clock.advance(case * 1.13)
        if clock.advance_to(nine) != 1:
            missed.append(case)
        at_nine.stop()
        assert clock.utcnow() == nine
    assert missed == []


def test_wait_ready_with_a_huge_timeout_waits_instead_of_overflowing(rig: Rig) -> None:
    outcome: list[object] = []

    def wait() -> None:
        try:
            rig.scheduler.wait_ready(1e300)  # longer than the platform's lock timeout
            outcome.append("ready")
        except Exception as exc:  # noqa: BLE001 - the test reads it
            outcome.append(exc)

    waiter = threading.Thread(target=wait, name="test-wait-ready")
    waiter.start()
    deadline = time.monotonic() + 5
    while not rig.scheduler._lock._waiters and waiter.is_alive() and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.001)
    rig.scheduler.set_ready()
    waiter.join(5)
    assert outcome == ["ready"]


def test_advance_with_a_huge_timeout_runs_the_calls(rig: Rig) -> None:
    ran = threading.Event()
    rig.scheduler.call_later(0, ran.set)
    assert rig.clock.advance(0, timeout=1e300) == 1 and ran.is_set()  # longer than the platform's lock timeout


def test_start_on_ready_on_a_destroyed_client_is_refused_not_ignored(rig: Rig) -> None:
    rig.scheduler.close()  # the client's destroy()

    def job() -> None:
        """Would never run."""

    with pytest.raises(ServiceError, match="destroyed"):
        rig.scheduler.every(minutes=1, start_on_ready=True)(job)
