"""The listener registry and the ordered worker pool (python-api.md section 6)."""

from __future__ import annotations

import threading
import time

import pytest

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


def test_listener_that_raises_is_emitted_as_error(emitter):
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


def test_raising_error_listener_is_only_logged(emitter, caplog):
    calls = []
    second = threading.Event()

    def bad(exc: BaseException) -> None:
        calls.append(exc)
        if len(calls) == 2:
            second.set()
        raise RuntimeError("error listener failed")

    emitter.on("error", bad)
    emitter.emit("error", ValueError("x"), key="k")
    emitter.emit("error", ValueError("y"), key="k")
    assert second.wait(5)
    # no recursion: a raising error listener is not re-emitted as an error
    assert [str(c) for c in calls] == ["x", "y"]
    assert "an 'error' listener raised" in caplog.text


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
