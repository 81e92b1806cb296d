"""The pytest plugin that ships with the package gives bot authors a clean emulator per test."""

from __future__ import annotations

import re
import subprocess
import sys

import requests


def test_plugin_fixture_is_a_running_reset_emulator(service_emulator):
    created = service_emulator.create_user("plugin-user")
    me = requests.get(
        service_emulator.base_url + "/auth/me",
        headers={"Authorization": f"Bearer {created['token']}"},
        timeout=10,
    )
    assert me.status_code == 200
    assert me.json()["user"]["publicId"] == created["user"]["publicId"]


def test_plugin_fixture_resets_between_tests(service_emulator):
    assert service_emulator.requests() == []


INNER_TESTS = '''
import threading

from service_client.events import EventEmitter, OrderedWorkerPool


def _raise_in_listener(exc, *, error_listener=False, closing=None):
    pool = OrderedWorkerPool(1, name="inner")
    emitter = EventEmitter(pool, name="inner", closing=closing)
    done = threading.Event()
    handled = []

    def broken():
        raise exc

    emitter.on("x", broken)
    emitter.on("x", done.set)
    if error_listener:
        emitter.on("error", handled.append)
    emitter.emit("x", key="k")
    assert done.wait(5)
    emitter.close()
    pool.shutdown()


def test_unexpected_listener_error_fails():
    _raise_in_listener(ValueError("surprise"))


def test_handled_by_an_error_listener_still_fails():
    _raise_in_listener(ValueError("handled but unexpected"), error_listener=True)


def test_expected_listener_error_passes(listener_errors):
    listener_errors.expect(ValueError, match="planned")
    _raise_in_listener(ValueError("a planned failure"))
    assert [str(e) for e in listener_errors.errors] == ["a planned failure"]


def test_wait_for_a_listener_error(listener_errors):
    thread = threading.Thread(target=_raise_in_listener, args=(KeyError("late"),))
    thread.start()
    assert isinstance(listener_errors.wait(KeyError, timeout=5), KeyError)
    thread.join(5)


def test_another_type_than_expected_fails(listener_errors):
    listener_errors.expect(KeyError)
    _raise_in_listener(ValueError("not a key error"))


def test_no_listener_error_passes():
    pass


def test_a_listener_failing_while_its_client_is_destroyed_does_not_count():
    _raise_in_listener(RuntimeError("the client was destroyed before the message was echoed"),
                       closing=lambda: True)
'''


def test_a_test_whose_listeners_raised_fails_unless_it_expected_it(tmp_path):
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    outcomes = dict(re.findall(r"test_inner\.py::(\w+) (PASSED|FAILED|ERROR)", proc.stdout))
    assert outcomes == {
        "test_unexpected_listener_error_fails": "FAILED",
        "test_handled_by_an_error_listener_still_fails": "FAILED",
        "test_expected_listener_error_passes": "PASSED",
        "test_wait_for_a_listener_error": "PASSED",
        "test_another_type_than_expected_fails": "FAILED",
        "test_no_listener_error_passes": "PASSED",
        "test_a_listener_failing_while_its_client_is_destroyed_does_not_count": "PASSED",
    }, proc.stdout
    assert "ValueError: surprise" in proc.stdout
    assert "exception(s) raised by event listeners during this test" in proc.stdout
