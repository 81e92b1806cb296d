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

__all__ = ["ListenerErrors"]


class ListenerErrors:
    """The exceptions raised by listeners during one test, and those the test expects.

    Thread-safe: listeners record from worker threads while the test reads.
    """

    def __init__(self) -> None:
        self._lock = threading.Condition()
        # (event, exception, str(exception), redacted traceback text): the message is taken
        # when recorded, outside the lock, so matching never runs an exception's __str__.
        self._errors: list[tuple[str, BaseException, str, str]] = []
        self._expected: list[tuple[type[BaseException], re.Pattern[str] | None]] = []

    def _record(self, event: str, exc: BaseException, text: str) -> None:
        """The emitter's hook: keep a listener's exception with its redacted traceback ``text``."""
        try:
            message = str(exc)
        except Exception:  # noqa: BLE001 - an exception whose __str__ fails still counts
            message = f"<{type(exc).__name__} whose str() failed>"
        with self._lock:
            self._errors.append((event, exc, message, text))
            self._lock.notify_all()

    @staticmethod
    def _matches(
        exc: BaseException, message: str, kind: type[BaseException], pattern: re.Pattern[str] | None
    ) -> bool:
        return isinstance(exc, kind) and (pattern is None or pattern.search(message) is not None)

    @property
    def errors(self) -> list[BaseException]:
        """Every exception raised by a listener so far in this test, in order (a copy)."""
        with self._lock:
            return [exc for _, exc, _, _ in self._errors]

    def expect(self, exc_type: type[BaseException] = Exception, *, match: str | None = None) -> None:
        """Declare that listeners may raise ``exc_type`` in this test without failing it.

        Args:
            exc_type: The exception class expected (subclasses match too).
            match: A regular expression searched in ``str(exc)``; None accepts any text.

        Raises:
            TypeError: ``exc_type`` is not an exception class or ``match`` is not a str.
            re.error: ``match`` is not a valid regular expression.
        """
        self._expect(exc_type, match)

    def _expect(self, exc_type: type[BaseException], match: str | None) -> re.Pattern[str] | None:
        """:meth:`expect`; returns the compiled ``match``."""
        if not (isinstance(exc_type, type) and issubclass(exc_type, BaseException)):
            raise TypeError(f"exc_type must be an exception class, got {exc_type!r}")
        if match is not None and not isinstance(match, str):
            raise TypeError(f"match must be a str or None, got {type(match).__name__}")
        pattern = None if match is None else re.compile(match)
        with self._lock:
            self._expected.append((exc_type, pattern))
        return pattern

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
            TypeError: As :meth:`expect`.
            AssertionError: No listener raised a matching exception within ``timeout``.
        """
        pattern = self._expect(exc_type, match)

        def found() -> BaseException | None:
            """The first recorded error that matches, or None (called with the lock held; no user code)."""
            for _, exc, message, _ in self._errors:
                if self._matches(exc, message, exc_type, pattern):
                    return exc
            return None

        with self._lock:
            if not self._lock.wait_for(lambda: found() is not None, timeout):
                raise AssertionError(f"no listener raised {exc_type.__name__} within {timeout} s")
            exc = found()
            assert exc is not None
            return exc

    def _unexpected(self) -> list[tuple[str, str]]:
        """``(event, redacted traceback)`` of each recorded exception no :meth:`expect` covers."""
        with self._lock:
            errors, expected = list(self._errors), list(self._expected)
        return [
            (event, text)
            for event, exc, message, text in errors
            if not any(self._matches(exc, message, kind, pattern) for kind, pattern in expected)
        ]

    def _brief(self, limit: int = 5) -> list[str]:
        """One line per exception recorded so far (the last ``limit``), for a failure report:
        ``ValueError: boom (a 'message_create' listener; expected)``."""
        with self._lock:
            errors, expected = list(self._errors), list(self._expected)
        lines = []
        for event, exc, message, _ in errors[-limit:]:
            allowed = any(self._matches(exc, message, kind, pattern) for kind, pattern in expected)
            lines.append(f"{type(exc).__name__}: {message} ({_where(event)}{'; expected' if allowed else ''})")
        if len(errors) > limit:
            lines.insert(0, f"({len(errors) - limit} earlier ones left out)")
        return lines

    def _failure_text(self, unexpected: list[tuple[str, str]]) -> str:
        """The text a test fails with: each unexpected exception's redacted traceback."""
        parts = [
            f"{len(unexpected)} exception(s) raised by event listeners or scheduled work during this test; "
            "a test that expects them calls listener_errors.expect(...)"
        ]
        for event, text in unexpected:
            parts.append(f"--- in {_where(event)}:")
            parts.append(text.rstrip())
        return "\n".join(parts)


#: The labels the client's scheduler reports its work's exceptions under.
_SCHEDULED = {"call_later": "scheduled work (client.call_later)", "every": "a repeating task (client.every)"}


def _where(event: str) -> str:
    """Where an exception was raised, as a failure report says it: ``a 'message_create' listener``."""
    return _SCHEDULED.get(event, f"a {event!r} listener")
