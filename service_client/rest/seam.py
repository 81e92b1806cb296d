"""The REST transport seam: what sends one attempt of a call, and an in-memory transport for tests.

The session (:class:`~.session.RestSession`) schedules the calls: the queue, the buckets,
the retries and the Futures. Each attempt goes through a :class:`Transport`, which prepares
a call's request once and sends it once per attempt. The default is
:class:`~.transport.HttpTransport` (requests and urllib3, the network); a client built with
``Client(transport=MockTransport(handler))`` sends nothing over the network: ``handler``
gets every :class:`Request` and returns the :class:`Response`, like httpx's
``MockTransport``. Everything above the transport (the queue, the buckets, the retries, the
errors, the models) works as it does against the service::

    from service_client import Client
    from service_client.rest import MockTransport, Request, Response

    def handler(request: Request) -> Response:
        if request.method == "GET" and request.path == "/auth/me":
            return Response(200, json={"publicId": "U1", "username": "bot"})
        return Response(404, json={"error": "not found"})

    client = Client(transport=MockTransport(handler))
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .._secret import Secret
from ..errors import ServiceAuthError, ServiceTimeoutError
from .answer import Reply
from .route import Route

__all__ = ["AttemptError", "MockTransport", "Request", "Response", "Transport"]


class AttemptError(Exception):
    """One attempt failed before an HTTP answer was read in full (raised by a :class:`Transport`).

    Attributes:
        kind: ``"timeout"`` (the per-attempt deadline passed), ``"network"``
            (connection refused, reset or broken), ``"programmer"`` (a
            malformed request) or ``"other"`` (any other transport error).
        cause: The underlying exception.
    """

    def __init__(self, kind: str, cause: BaseException) -> None:
        """A failure of ``kind``, caused by ``cause``."""
        super().__init__(kind)
        self.kind = kind
        self.cause = cause

    @property
    def retryable(self) -> bool:
        """True for a timeout or a network failure, which the session retries while attempts remain."""
        return self.kind in ("timeout", "network")


class Transport(Protocol):
    """What sends the attempts of a REST call. Thread-safe: the session's workers call
    :meth:`send_once` at once."""

    def prepare(self, route: Route, data: bytes | None, headers: Mapping[str, str], bearer: Secret | None) -> Any:
        """The request of one call, sent unchanged by each of its attempts.

        Args:
            route: Method and encoded path (query included).
            data: The body bytes, or None for no body.
            headers: The caller's checked headers (never an ``Authorization`` one).
            bearer: The bot token to send as ``Authorization: Bearer <token>``, or None.

        Raises:
            ValueError: The transport refuses a header.
            ServiceAuthError: ``bearer`` holds no token any more.
        """

    def send_once(self, prepared: Any, timeout_ms: float) -> Reply:
        """One attempt of ``prepared`` within ``timeout_ms``: the answer, whatever its status.

        Raises:
            AttemptError: The attempt failed before an answer was read (a timeout, a
                network failure...).
        """

    def close(self) -> None:
        """End every attempt in progress at once and free the transport's resources."""

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the transport's threads to end, after :meth:`close`."""


class Request:
    """A request as a :class:`MockTransport`'s handler sees it.

    Its repr shows the method and the redacted path only; the bot token is never kept.

    Attributes:
        method: The HTTP method, upper case (``"GET"``).
        path: The encoded path below the REST base URL, with its query (``"/servers/S1?x=1"``).
        headers: The caller's headers (``api_call(headers=...)``), without ``Authorization``.
        content: The body bytes, ``b""`` for none.
        authorized: True when the call carries the bot token (``Authorization: Bearer ...``);
            False for a call made without one (a webhook execution).
        route: The call's :class:`~.route.Route` (its ``bucket``, ``display_path``...).
    """

    __slots__ = ("authorized", "content", "headers", "method", "path", "route")

    def __init__(self, route: Route, content: bytes, headers: Mapping[str, str], authorized: bool) -> None:
        """Build from what the session prepares (see :meth:`Transport.prepare`)."""
        self.route = route
        self.method = route.method
        self.path = route.wire_path()
        self.content = content
        self.headers = dict(headers)
        self.authorized = authorized

    def json(self) -> Any:
        """The body parsed as JSON, or None for no body.

        Raises:
            ValueError: The body is not JSON.
        """
        return _json.loads(self.content) if self.content else None

    def __repr__(self) -> str:
        return f"<Request {self.method} {self.route.display_path}>"


class Response:
    """The answer a :class:`MockTransport`'s handler gives to one request.

    Args:
        status: The HTTP status code (100-599).
        json: A value sent as the JSON body (``Content-Type: application/json``); not together
            with ``content``.
        content: The body bytes (``str`` is sent as UTF-8).
        headers: Answer headers, e.g. ``{"Retry-After": "2"}`` or a ``Content-Type``.

    Raises:
        TypeError: ``status`` is not an int, ``content`` not str/bytes, or ``json`` and
            ``content`` both given.
        ValueError: ``status`` outside 100-599, or ``json`` cannot be serialised.
    """

    __slots__ = ("content", "headers", "status")

    _NO_JSON: Any = object()

    def __init__(
        self,
        status: int = 200,
        *,
        json: Any = _NO_JSON,
        content: str | bytes = b"",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """See the class."""
        if isinstance(status, bool) or not isinstance(status, int):
            raise TypeError(f"status must be an int, not {type(status).__name__}")
        if not 100 <= status <= 599:
            raise ValueError(f"status must be an HTTP status (100-599), got {status}")
        if not isinstance(content, (str, bytes)):
            raise TypeError(f"content must be str or bytes, not {type(content).__name__}")
        found = {str(key).lower(): str(value) for key, value in (headers or {}).items()}
        if json is not Response._NO_JSON:
            if content:
                raise TypeError("give json or content, not both")
            try:
                content = _json.dumps(json)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"json cannot be serialised: {exc}") from None
            found.setdefault("content-type", "application/json")
        self.status = status
        self.content = content.encode() if isinstance(content, str) else content
        self.headers = found

    def __repr__(self) -> str:
        return f"<Response {self.status} {len(self.content)} bytes>"


class MockTransport:
    """An in-memory :class:`Transport`: ``handler`` answers every request, nothing goes on the network.

    For users' unit tests: ``Client(transport=MockTransport(handler))``. The handler runs on
    the session's worker threads (up to 5 at once: make it thread-safe) and returns a
    :class:`Response`. To play a failure, it raises: :class:`TimeoutError` is a timed-out
    attempt and any other :class:`OSError` (``ConnectionError``...) a network failure, both
    retried as the client's retry policy says; any other exception ends the call with
    :class:`~service_client.ServiceError` (``unexpected error: <type>``, the exception chained),
    and is logged.

    Args:
        handler: ``handler(request) -> Response``.

    Raises:
        TypeError: ``handler`` is not callable.
    """

    def __init__(self, handler: Callable[[Request], Response]) -> None:
        """See the class."""
        if not callable(handler):
            raise TypeError(f"handler must be callable, not {type(handler).__name__}")
        self._handler = handler

    def prepare(self, route: Route, data: bytes | None, headers: Mapping[str, str], bearer: Secret | None) -> Request:
        """The :class:`Request` the handler will get (see :meth:`Transport.prepare`).

        Raises:
            ServiceAuthError: ``bearer`` holds no token any more.
        """
        if bearer is not None and not bearer:
            raise ServiceAuthError("no token: log in before making REST calls")
        return Request(route, data or b"", headers, bearer is not None)

    def send_once(self, prepared: Request, timeout_ms: float) -> Reply:
        """Ask the handler (see :meth:`Transport.send_once`).

        Raises:
            AttemptError: The handler raised :class:`OSError` (``"timeout"`` for a
                :class:`TimeoutError`, else ``"network"``), or returned no :class:`Response`.
        """
        try:
            response = self._handler(prepared)
        except TimeoutError as exc:
            raise AttemptError("timeout", ServiceTimeoutError(f"the handler timed out: {exc}")) from None
        except OSError as exc:
            raise AttemptError("network", exc) from None
        if not isinstance(response, Response):
            raise TypeError(f"the MockTransport handler must return a Response, not {type(response).__name__}")
        headers = response.headers
        return Reply(response.status, response.content, headers.get("content-type", ""),
                     headers.get("retry-after"), location=headers.get("location"))

    def close(self) -> None:
        """Nothing to free."""

    def join(self, timeout: float) -> None:
        """No thread to wait for."""
