"""The listener registry and the ordered worker pool: order per key, wait_for, listener errors."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from service_client.events import emitter as events
from service_client.errors import ServiceError
from service_client.events import EventEmitter, OrderedWorkerPool


@pytest.fixture
def emitter():
    pool = OrderedWorkerPool(4, name="test")
    em = EventEmitter(pool, name="test")
    yield em
    em.close()
    pool.shutdown()


def test_same_key_keeps_order_and_different_keys_run_concurrently(emitter):
    seen: dict[str, list[int]] = {"a": [], "b": []}
    release = threading.Event()
    b_done = threading.Event()

    @emitter.on("msg")
    def listener(key: str, i: int) -> None:
        if key == "a" and i == 0:
            assert release.wait(5)  # channel a is blocked ...
        seen[key].append(i)
        if key == "b" and i == 199:
            b_done.set()

    for i in range(200):
        emitter.emit("msg", "a", i, key="a")
        emitter.emit("msg", "b", i, key="b")
    assert b_done.wait(5), "channel b must flow while channel a is blocked"
    assert seen["a"] == []
    release.set()
    deadline = time.monotonic() + 5
    while len(seen["a"]) < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen["a"] == list(range(200))
    assert seen["b"] == list(range(200))


def test_listener_that_raises_is_emitted_as_error(emitter, listener_errors):
    listener_errors.expect(ValueError, match="boom")
    boom = ValueError("boom")
    emitter.on("x", lambda: (_ for _ in ()).throw(boom))
    got = []
    emitter.on("x", lambda: got.append("second listener still runs"))
    err = threading.Event()
    errors = []

    @emitter.on("error")
    def on_error(exc: BaseException) -> None:
        errors.append(exc)
        err.set()

    emitter.emit("x")
    assert err.wait(5)
    assert errors == [boom]
    assert got == ["second listener still runs"]


def test_raising_error_listener_is_only_logged(emitter, caplog, listener_errors):
    listener_errors.expect(RuntimeError, match="error listener failed")
    calls = []
    flushed = threading.Event()

    def bad(exc: BaseException) -> None:
        calls.append(exc)
        raise RuntimeError("error listener failed")

    emitter.on("error", bad)
    emitter.on("flush", flushed.set)
    emitter.emit("error", ValueError("x"), key="k")
    emitter.emit("error", ValueError("y"), key="k")
    emitter.emit("flush", key="k")  # same key: runs once both error tasks (and their reports) are done
    assert flushed.wait(5)
    # no recursion: a raising error listener is not re-emitted as an error
    assert [str(c) for c in calls] == ["x", "y"]
    assert "Exception in the 'error' listener" in caplog.text
    assert caplog.text.count("RuntimeError: error listener failed") == 2  # once per exception


def test_once_and_off_and_decorator(emitter):
    calls = []
    done = threading.Event()
    emitter.once("e", lambda v: calls.append(("once", v)))

    @emitter.on("e")
    def always(v: int) -> None:
        calls.append(("on", v))
        if v == 2:
            done.set()

    assert emitter.listeners("e")[-1] is always
    emitter.emit("e", 1, key="k")
    emitter.emit("e", 2, key="k")
    assert done.wait(5)
    assert calls == [("once", 1), ("on", 1), ("on", 2)]
    emitter.off("e", always)
    assert emitter.listeners("e") == []


def test_wait_for_from_inside_a_listener_of_the_same_key(emitter):
    result = {}
    done = threading.Event()

    @emitter.on("msg")
    def listener(i: int) -> None:
        if i == 0:
            result["next"] = emitter.wait_for("msg", check=lambda j: j == 1, timeout=5)
            done.set()

    emitter.emit("msg", 0, key="c")
    time.sleep(0.05)
    emitter.emit("msg", 1, key="c")
    assert done.wait(5)
    assert result["next"] == 1


def test_wait_for_timeout_and_close(emitter):
    with pytest.raises(TimeoutError):
        emitter.wait_for("never", timeout=0.05)
    errors = []

    def waiter() -> None:
        try:
            emitter.wait_for("never", timeout=5)
        except ServiceError as exc:
            errors.append(exc)

    t = threading.Thread(target=waiter)
    t.start()
    deadline = time.monotonic() + 5
    while not emitter._waiters and time.monotonic() < deadline:
        time.sleep(0.01)
    emitter.close()
    t.join(5)
    assert len(errors) == 1


def test_bad_arguments():
    with pytest.raises(ValueError):
        OrderedWorkerPool(0)
    em = EventEmitter(OrderedWorkerPool(1))
    with pytest.raises(TypeError, match="event"):
        em.on("", lambda: None)
    with pytest.raises(TypeError, match="listener"):
        em.on("x", 3)  # type: ignore[arg-type]


def test_shutdown_stops_every_thread():
    pool = OrderedWorkerPool(4, name="stoptest")
    em = EventEmitter(pool, name="stoptest")
    em.on("x", lambda: None)
    for i in range(50):
        em.emit("x", key=i)
    em.close()
    pool.shutdown(1.0)
    assert not [t for t in threading.enumerate() if t.name.startswith("stoptest-")]
    assert pool.submit(lambda: None) is False


# -- wait_for sees only events emitted after it was called -------------------------------


def test_wait_for_never_gets_an_event_emitted_before_it_was_called(emitter):
    # Another waiter exists and its check holds the waiter thread, so the thread is behind:
    # "old" is still queued for it when the new waiter registers.
    holding = threading.Event()
    release = threading.Event()

    def slow_check(value):
        if value == "first":
            holding.set()
            assert release.wait(5)
        return value == "stop"

    other = threading.Thread(target=lambda: _swallow(lambda: emitter.wait_for("m", check=slow_check, timeout=5)))
    other.start()
    _wait_waiters(emitter, 1)
    emitter.emit("m", "first")
    assert holding.wait(5)
    emitter.emit("m", "old")  # emitted before the new waiter exists
    got = {}
    asker = threading.Thread(target=lambda: got.setdefault("value", emitter.wait_for("m", timeout=5)))
    asker.start()
    _wait_waiters(emitter, 2)
    release.set()
    emitter.emit("m", "new")
    asker.join(5)
    assert got == {"value": "new"}
    emitter.emit("m", "stop")
    other.join(5)


def _swallow(fn):
    try:
        fn()
    except TimeoutError:
        pass


def _wait_waiters(emitter, count):
    deadline = time.monotonic() + 5
    while len(emitter._waiters) < count:
        assert time.monotonic() < deadline, "waiter not registered"
        time.sleep(0.005)


# -- reserved places in a key's order -------------------------------------------------------


def test_reserved_event_keeps_its_place_and_no_worker_waits_for_it():
    pool = OrderedWorkerPool(1, name="slottest")
    em = EventEmitter(pool, name="slottest")
    seen = []
    done = threading.Event()
    em.on("e", lambda v: seen.append(v))
    em.on("other", lambda: done.set())
    try:
        em.emit("e", 1, key="S")
        slot = em.reserve(key="S")
        em.emit("e", 3, key="S")
        em.emit("other", key="T")  # the only worker is free: another key is not held up
        assert done.wait(5)
        assert seen == [1]  # 3 waits for the reserved place
        got = {}
        waiter = threading.Thread(target=lambda: got.setdefault("v", em.wait_for("e", check=lambda v: v == 2,
                                                                                  timeout=5)))
        waiter.start()
        _wait_waiters(em, 1)
        slot.emit("e", 2)
        waiter.join(5)
        assert got == {"v": 2}
        deadline = time.monotonic() + 5
        while len(seen) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert seen == [1, 2, 3]
        cancelled = em.reserve(key="S")
        em.emit("e", 4, key="S")
        cancelled.cancel()
        cancelled.emit("e", 99)  # ignored: the slot is used up
        deadline = time.monotonic() + 5
        while len(seen) < 4 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert seen == [1, 2, 3, 4]
    finally:
        em.close()
        pool.shutdown()


def test_reserved_event_behind_a_barrier_and_after_shutdown():
    pool = OrderedWorkerPool(2, name="slotbarrier")
    order = []
    release = threading.Event()
    pool.submit_barrier(lambda: (release.wait(5), order.append("barrier")), key="L")
    slot = pool.reserve(key="S")  # held behind the barrier
    pool.submit(lambda: order.append("after"), key="S")
    slot.fill(lambda: order.append("slot"))
    release.set()
    deadline = time.monotonic() + 5
    while len(order) < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert order == ["barrier", "slot", "after"]
    pool.shutdown()
    late = pool.reserve(key="S")
    late.fill(lambda: order.append("never"))
    assert order == ["barrier", "slot", "after"]


# -- listener errors are never silent -------------------------------------------------------


@pytest.fixture
def no_logging_configured(monkeypatch):
    """As in a plain script without logging setup (pytest itself attaches log handlers)."""
    monkeypatch.setattr(events, "_logging_reaches_a_handler", lambda logger: False)


def test_logging_check_ignores_the_package_null_handler():
    logger = logging.getLogger("service_client.test-isolated")
    parent = logging.getLogger("service_client")
    saved = parent.propagate
    parent.propagate = False
    try:
        only_null = all(isinstance(h, logging.NullHandler) for h in parent.handlers)
        assert events._logging_reaches_a_handler(logger) is not only_null
        handler = logging.StreamHandler()
        logger.addHandler(handler)
        assert events._logging_reaches_a_handler(logger) is True
        logger.removeHandler(handler)
    finally:
        parent.propagate = saved


def test_listener_error_without_error_listener_goes_to_stderr_once(
    emitter, capsys, no_logging_configured, listener_errors
):
    listener_errors.expect(ZeroDivisionError)
    after = threading.Event()

    @emitter.on("tick")
    def broken(n: int) -> None:
        1 / n

    emitter.on("tick", lambda n: after.set())
    emitter.emit("tick", 0, key="k")
    assert after.wait(5)
    emitter.emit("later", key="k")  # nothing listens: flushes nothing, proves no second report
    err = capsys.readouterr().err
    assert err.count("Traceback (most recent call last)") == 1
    assert "ZeroDivisionError" in err and "broken" in err and "'tick' listener" in err


def test_listener_error_with_error_listener_is_not_printed(emitter, capsys, no_logging_configured,
                                                            listener_errors):
    listener_errors.expect(KeyError)
    got = threading.Event()
    emitter.on("error", lambda exc: got.set())
    emitter.on("tick", lambda: {}["missing"])
    emitter.emit("tick")
    assert got.wait(5)
    assert capsys.readouterr().err == ""


def test_printed_listener_error_has_no_token(capsys, no_logging_configured, listener_errors):
    secret = "tok-" + "9f8e7d6c5b4a"
    pool = OrderedWorkerPool(1, name="redact")
    em = EventEmitter(pool, name="redact", redact=lambda text: text.replace(secret, "[REDACTED]"))
    listener_errors.expect(RuntimeError)
    done = threading.Event()

    def leaky() -> None:
        raise RuntimeError("failed with token " + secret)

    em.on("x", leaky)
    em.on("x", done.set)
    em.emit("x")
    assert done.wait(5)
    em.close()
    pool.shutdown()
    err = capsys.readouterr().err
    assert secret not in err and "failed with token [REDACTED]" in err


def test_a_script_without_logging_setup_prints_the_listener_traceback(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(textwrap.dedent('''
        import threading
        from service_client import Client
        from service_client.emulator import Emulator

        with Emulator() as emu:
            human = emu.create_user("alice")
            bot = emu.create_user("bot", bot=True)
            made = emu.create_server("S", human["user"]["publicId"], channels=[{"name": "g", "type": "TEXT"}])
            emu.add_member(made["server"]["publicId"], bot["user"]["publicId"])
            client = Client(base_url=emu.base_url, socket_url=emu.socket_url)
            done = threading.Event()
            token = bot["token"]

            @client.on("message_create")
            def on_message(message):
                raise RuntimeError("cannot handle " + message.content + " with " + token)

            client.on("message_create", lambda message: done.set())
            client.login(token, timeout=15)
            emu.post_message(made["channels"][0]["publicId"], human["user"]["publicId"], "!hello")
            assert done.wait(15)
            client.destroy()
            print("TOKEN=" + token)
    '''))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    token = proc.stdout.strip().rsplit("TOKEN=", 1)[1]
    assert proc.stderr.count("Traceback (most recent call last)") == 1, proc.stderr
    assert "RuntimeError: cannot handle !hello with [REDACTED]" in proc.stderr
    assert "on_message" in proc.stderr and "'message_create' listener" in proc.stderr
    assert token not in proc.stderr


def test_a_used_event_slot_ignores_later_emits():
    pool = OrderedWorkerPool(1, name="slot-test")
    emitter = EventEmitter(pool, name="slot-test")
    try:
        first = threading.Event()
        emitter.once("x", lambda value: first.set())
        slot = emitter.reserve(key="k")
        slot.emit("x", 1)
        assert first.wait(5)
        late: list[Any] = []
        emitter.once("x", late.append)
        slot.emit("x", 2)  # the slot is used: the new once listener is neither run nor removed
        assert emitter.listeners("x") == [late.append] and late == []
    finally:
        emitter.close()
        pool.shutdown()


# -- the events of a handoff batch: one pool task per key and listener set -----------------------


def test_events_of_a_batch_keep_their_order_per_key_and_interleave_across_keys(emitter):
    from service_client.events import handoff_batch

    seen: list[tuple[str, int]] = []
    lock = threading.Lock()
    done = threading.Event()

    @emitter.on("msg")
    def listener(key: str, i: int) -> None:
        with lock:
            seen.append((key, i))
            if len(seen) == 600:
                done.set()

    with handoff_batch():
        for i in range(200):
            emitter.emit("msg", "a", i, key="a")
            emitter.emit("msg", "b", i, key="b")
            emitter.emit("msg", "a", 1000 + i, key="a")
    assert done.wait(5)
    a_order = [i for key, i in seen if key == "a"]
    assert a_order == [n for i in range(200) for n in (i, 1000 + i)]
    assert [i for key, i in seen if key == "b"] == list(range(200))


def test_a_raising_listener_in_a_batch_spoils_neither_the_other_listeners_nor_later_events(
    emitter, listener_errors
):
    from service_client.events import handoff_batch

    listener_errors.expect(ValueError, match="bad 3")
    got: list[int] = []
    done = threading.Event()

    @emitter.on("msg")
    def first(i: int) -> None:
        if i == 3:
            raise ValueError("bad 3")

    @emitter.on("msg")
    def second(i: int) -> None:
        got.append(i)
        if i == 9:
            done.set()

    with handoff_batch():
        for i in range(10):
            emitter.emit("msg", i, key="k")
    assert done.wait(5)
    assert got == list(range(10))


def test_a_listener_added_during_a_batch_gets_only_the_events_emitted_after(emitter):
    from service_client.events import handoff_batch

    early: list[int] = []
    late: list[int] = []
    done = threading.Event()
    emitter.on("msg", early.append)
    with handoff_batch():
        emitter.emit("msg", 1, key="k")
        emitter.on("msg", lambda i: (late.append(i), i == 2 and done.set()))
        emitter.emit("msg", 2, key="k")
    assert done.wait(5)
    assert early == [1, 2]
    assert late == [2]


def test_a_shutdown_during_a_batch_run_drops_its_later_events():
    from service_client.events import handoff_batch

    pool = OrderedWorkerPool(1, name="test-run")
    em = EventEmitter(pool, name="test-run")
    gate = threading.Event()
    ran: list[int] = []

    def listener(i: int) -> None:
        if i == 0:
            assert gate.wait(5)
            pool.shutdown(0)
        ran.append(i)

    em.on("msg", listener)
    try:
        with handoff_batch():
            for i in range(5):
                em.emit("msg", i, key="k")
        gate.set()
        for thread in pool.threads:
            thread.join(5)
        assert ran == [0]
    finally:
        em.close()
        pool.shutdown()


def test_emit_one_is_emit_of_one_argument_in_order_with_emit_once_and_wait_for(emitter):
    seen: list[Any] = []
    done = threading.Event()
    emitter.on("message_create", lambda arg: seen.append(("on", arg)))
    emitter.once("message_create", lambda arg: seen.append(("once", arg)))
    waiter: list[Any] = []
    ready = threading.Event()

    def wait() -> None:
        ready.set()
        waiter.append(emitter.wait_for("message_create", check=lambda arg: arg == 2, timeout=10))

    thread = threading.Thread(target=wait, name="test-waiter", daemon=True)
    thread.start()
    ready.wait(5)
    while not emitter._waiters:  # registered before the events below
        time.sleep(0.001)
    with events.handoff_batch():
        emitter.emit_one("message_create", 1, "k")
        emitter.emit("message_create", 2, key="k")
        emitter.emit_one("message_create", 3, "k")
    emitter.on("done", lambda: done.set())
    emitter.emit("done", key="k")
    assert done.wait(10)
    thread.join(10)
    assert seen == [("on", 1), ("once", 1), ("on", 2), ("on", 3)]
    assert waiter == [2]


def test_emit_one_goes_through_a_subclass_emit() -> None:
    captured: list[tuple[str, tuple[Any, ...], Any]] = []

    class Capturing(EventEmitter):
        def emit(self, event: str, *args: Any, key: Any = None) -> None:
            captured.append((event, args, key))

    pool = OrderedWorkerPool(1, name="test-capturing")
    try:
        capturing = Capturing(pool)
        capturing.on("message_create", lambda arg: None)
        capturing.emit_one("message_create", "m", "k")
        assert captured == [("message_create", ("m",), "k")]
    finally:
        pool.shutdown()
