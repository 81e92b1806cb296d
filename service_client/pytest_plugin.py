"""pytest fixtures for bot authors: test a bot against the local emulator.

Registered as a ``pytest11`` entry point, so installing ``service_client``
makes the fixtures available in any test suite. Import-light: the emulator is
imported only when a fixture is used, and a missing ``emulator`` extra skips
the test with its reason printed.

Example::

    def test_ping(service_emulator):
        human = service_emulator.create_user("alice")
        bot = service_emulator.create_user("mybot", bot=True)
        ...  # create_server, add_member, then Client(base_url=service_emulator.base_url, ...)

Listener errors fail tests: when a listener of any client raises while a test
runs (its setup, call and teardown included), the test fails and the report
shows each exception with its traceback, even when an ``error`` listener
handled it. A listener that fails because its client is being destroyed (for
example ``destroy()`` at teardown ended the reply it was waiting for) does not
count. A test that provokes listener errors on purpose says so with the
``listener_errors`` fixture::

    def test_bad_command(service_emulator, listener_errors):
        listener_errors.expect(ValueError, match="unknown command")
        ...  # make the bot's listener raise ValueError("unknown command: !nope")
        exc = listener_errors.wait(ValueError)  # optional: block until it happened
"""

from __future__ import annotations

import re
import threading
import traceback
from collections.abc import Iterator
from typing import Any

import pytest

__all__ = ["ListenerErrors", "listener_errors", "service_emulator", "service_emulator_server"]


class ListenerErrors:
    """The exceptions raised by listeners during one test, and those the test expects.

    Thread-safe: listeners record from worker threads while the test reads.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._errors: list[tuple[str, BaseException]] = []
        self._expected: list[tuple[type[BaseException], re.Pattern[str] | None]] = []

    def _record(self, event: str, exc: BaseException) -> None:
        with self._lock:
            self._errors.append((event, exc))
            self._lock.notify_all()

    @property
    def errors(self) -> list[BaseException]:
        """Every exception raised by a listener so far in this test, in order (a copy)."""
        with self._lock:
            return [exc for _, exc in self._errors]

    def expect(self, exc_type: type[BaseException] = Exception, *, match: str | None = None) -> None:
        """Declare that listeners may raise ``exc_type`` in this test without failing it.

        Args:
            exc_type: The exception class expected (subclasses match too).
            match: A regular expression searched in ``str(exc)``; None accepts any text.

        Raises:
            TypeError: ``exc_type`` is not an exception class or ``match`` is not a str.
        """
        if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
            raise TypeError(f"exc_type must be an exception class, got {exc_type!r}")
        if match is not None and not isinstance(match, str):
            raise TypeError(f"match must be a str or None, got {type(match).__name__}")
        with self._lock:
            self._expected.append((exc_type, None if match is None else re.compile(match)))

    def wait(
        self, exc_type: type[BaseException] = Exception, *, match: str | None = None, timeout: float = 10.0
    ) -> BaseException:
        """Expect ``exc_type`` (as :meth:`expect`) and block until a listener raised one.

        Args:
            exc_type: The exception class awaited.
            match: A regular expression searched in ``str(exc)``.
            timeout: Seconds to wait.

        Returns:
            The first matching exception raised in this test (possibly before the call).

        Raises:
            AssertionError: No listener raised a matching exception within ``timeout``.
        """
        self.expect(exc_type, match=match)
        pattern = None if match is None else re.compile(match)

        def found() -> BaseException | None:
            for _, exc in self._errors:
                if isinstance(exc, exc_type) and (pattern is None or pattern.search(str(exc))):
                    return exc
            return None

        with self._lock:
            if not self._lock.wait_for(lambda: found() is not None, timeout):
                raise AssertionError(f"no listener raised {exc_type.__name__} within {timeout} s")
            exc = found()
            assert exc is not None
            return exc

    def _unexpected(self) -> list[tuple[str, BaseException]]:
        with self._lock:
            return [
                (event, exc)
                for event, exc in self._errors
                if not any(
                    isinstance(exc, kind) and (pattern is None or pattern.search(str(exc)))
                    for kind, pattern in self._expected
                )
            ]

    def _failure_text(self, unexpected: list[tuple[str, BaseException]]) -> str:
        parts = [
            f"{len(unexpected)} exception(s) raised by event listeners during this test; "
            "a test that expects them calls listener_errors.expect(...)"
        ]
        for event, exc in unexpected:
            parts.append(f"--- in a {event!r} listener:")
            parts.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip())
        return "\n".join(parts)


_RECORDER_KEY = pytest.StashKey[ListenerErrors]()


@pytest.fixture(autouse=True)
def _service_client_listener_errors(request: pytest.FixtureRequest) -> Iterator[ListenerErrors]:
    """Record listener exceptions for the whole test; fail it on unexpected ones at teardown."""
    from . import events

    recorder = ListenerErrors()
    request.node.stash[_RECORDER_KEY] = recorder
    events._add_listener_error_hook(recorder._record)
    try:
        yield recorder
    finally:
        events._remove_listener_error_hook(recorder._record)
    reported = getattr(request.node, "_service_client_reported", 0)
    unexpected = recorder._unexpected()[reported:]
    if unexpected:
        pytest.fail(recorder._failure_text(unexpected), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail the test call itself when its listeners raised unexpectedly so far."""
    outcome: Any = yield
    recorder = item.stash.get(_RECORDER_KEY, None)
    if recorder is None or outcome.excinfo is not None or not hasattr(outcome, "force_exception"):
        return
    unexpected = recorder._unexpected()
    if unexpected:
        item._service_client_reported = len(unexpected)  # type: ignore[attr-defined]
        outcome.force_exception(pytest.fail.Exception(recorder._failure_text(unexpected), pytrace=False))


@pytest.fixture
def listener_errors(_service_client_listener_errors: ListenerErrors) -> ListenerErrors:
    """The listener exceptions of this test; call ``expect()`` or ``wait()`` to allow them.

    Returns:
        The test's :class:`ListenerErrors`.
    """
    return _service_client_listener_errors


@pytest.fixture(scope="session")
def service_emulator_server() -> Iterator[Any]:
    """A running in-process emulator (127.0.0.1, free port, in-memory), shared by the session.

    Yields:
        A started :class:`service_client.emulator.Emulator`; stopped at the end.
    """
    module = pytest.importorskip(
        "service_client.emulator",
        reason="the emulator extra is not installed: pip install 'service_client[emulator]'",
    )
    with module.Emulator() as emu:
        yield emu


@pytest.fixture
def service_emulator(service_emulator_server: Any) -> Any:
    """The session's emulator, reset (state, faults, limiter, journal, sockets) before the test."""
    service_emulator_server.reset()
    return service_emulator_server
