"""The listener exceptions of one test, as the pytest plugin records them.

The plugin (:mod:`service_client.pytest_plugin`) makes one :class:`ListenerErrors`
per test, hooks it into every client's event emitter for the test's setup, call
and teardown, and fails the test on the exceptions it did not declare with
:meth:`ListenerErrors.expect` or :meth:`ListenerErrors.wait`. Import it from
``service_client.pytest_plugin``.
"""

from __future__ import annotations

import re
import threading
import traceback

__all__ = ["ListenerErrors"]


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
            """The first recorded error that matches, or None."""
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
