"""The REST session: every HTTP request of the library goes through it.

Spec: ``apiCall``, Errors and Limits; protocol.md 0.3, 0.4, 1.1, 4.1-4.3 and
pitfalls 5.1 (1-10, 31-33).

How a call travels (protocol 4.3)::

    submit() --validate, build headers, no token -> ServiceAuthError
       |
       v
    bucket blocked? --yes--> DelayQueue (timer thread; holds no slot) --due--+
       | no                                                                  |
       v                                                                     |
    FifoQueue (strict FIFO) <------------------------------------------------+
       |
       v
    one of N worker threads (N = 5: the slots) re-checks the bucket, sends,
    reads the body within the per-attempt deadline, releases the slot, then:
    result / error on the Future, or a retry parked on the DelayQueue
    (after a 429 the bucket is blocked first), back at the end of the FIFO.

Threads: ``<name>-rest-<n>`` workers and one ``<name>-rest-timer-1`` timer,
all daemons, started by the first call and stopped by :meth:`RestSession.close`.
"""

from __future__ import annotations

import concurrent.futures
import json as _json
import logging
import math
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import requests
import requests.adapters
import requests.exceptions
import urllib3
import urllib3.connection
import urllib3.connectionpool
import urllib3.exceptions
from requests.structures import CaseInsensitiveDict

from .._config import (
    BACKOFF_BASE_S,
    BACKOFF_CAP_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_AFTER_S,
    DEFAULT_TIMEOUT_MS,
    DESTROY_JOIN_S,
    MAX_CONCURRENT_REQUESTS,
)
from .._secret import Secret
from ..errors import (
    RateLimitError,
    ServiceAPIError,
    ServiceAuthError,
    ServiceError,
    ServiceTimeoutError,
    error_text,
)
from .buckets import BucketStore, MemoryBucketStore, bucket_scope
from .limiter import DelayQueue, FifoQueue
from .retry import RETRY_STATUSES, backoff_delay, parse_retry_after
from .route import Route

__all__ = ["RestSession", "validate_api_call_args"]

_log = logging.getLogger("service_client.rest")

#: Bytes asked for per body read; each read is one socket receive at most.
_READ_CHUNK = 64 * 1024
#: Longest single wait of ``request()`` before it re-checks the session, seconds.
_RESULT_POLL_S = 1.0
#: A header name: an RFC 9110 token.
_HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: A header value: no CR, LF or NUL, no leading whitespace.
_HEADER_VALUE_BAD_RE = re.compile(r"[\r\n\x00]|^[ \t]")
#: A token: visible ASCII only.
_TOKEN_RE = re.compile(r"^[\x21-\x7e]+$")
#: The charset parameter of a Content-Type.
_CHARSET_RE = re.compile(r";\s*charset=\"?([\w.:-]+)", re.IGNORECASE)

#: requests exceptions that mean the request itself is malformed: never retried.
_PROGRAMMER_ERRORS: tuple[type[Exception], ...] = (
    requests.exceptions.InvalidURL,
    requests.exceptions.InvalidSchema,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidHeader,
    requests.exceptions.URLRequired,
)


#: A webhook token in a URL or path: ``/webhooks/<id>/<token>``.
_WEBHOOK_TOKEN_RE = re.compile(r"(/webhooks/[^/?#\s'\"]+/)[^/?#\s'\"]+", re.IGNORECASE)


def _redact_webhook_tokens(text: str) -> str:
    """``text`` with every ``/webhooks/<id>/<token>`` token replaced by ``***``."""
    return _WEBHOOK_TOKEN_RE.sub(r"\1***", text) if "ebhooks/" in text else text


class _WebhookTokenLogFilter(logging.Filter):
    """Redacts webhook tokens from the request lines urllib3 logs (at DEBUG) with the URL path.

    Installed once on urllib3's ``connectionpool`` and ``util.retry`` loggers; it only
    rewrites ``/webhooks/<id>/<token>`` in a record's message and arguments.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = _redact_webhook_tokens(record.msg)
        args = record.args
        if isinstance(args, tuple) and any(isinstance(a, str) and "ebhooks/" in a for a in args):
            record.args = tuple(_redact_webhook_tokens(a) if isinstance(a, str) else a for a in args)
        return True


def _install_log_filter() -> None:
    for name in ("urllib3.connectionpool", "urllib3.util.retry"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _WebhookTokenLogFilter) for f in logger.filters):
            logger.addFilter(_WebhookTokenLogFilter())


_install_log_filter()


class _RedactedCause(Exception):
    """Stands in for a transport error whose text held a secret of the request path.

    Its message is the original type name and text with the secret replaced by ``***``.
    """


# --------------------------------------------------------------------------- helpers


class _ConnectionRegistry:
    """The live connections of one session, so ``close()`` can abort reads on them."""

    def __init__(self) -> None:
        self._conns_lock = threading.Lock()
        self._conns: weakref.WeakSet[urllib3.connection.HTTPConnection] = weakref.WeakSet()

    def add(self, conn: urllib3.connection.HTTPConnection) -> None:
        """Track a connection so close() can abort it."""
        with self._conns_lock:
            self._conns.add(conn)

    def abort_all(self) -> None:
        """Shut every socket down so blocked sends and reads fail at once."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            sock = getattr(conn, "sock", None)
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _tracking_pools(registry: _ConnectionRegistry) -> dict[str, type[urllib3.connectionpool.HTTPConnectionPool]]:
    class _HTTPConnection(urllib3.connection.HTTPConnection):
        def connect(self) -> None:
            """Connect, then register the socket with the session's registry."""
            super().connect()
            registry.add(self)

    class _HTTPSConnection(urllib3.connection.HTTPSConnection):
        def connect(self) -> None:
            """Connect, then register the socket with the session's registry."""
            super().connect()
            registry.add(self)

    class _HTTPPool(urllib3.connectionpool.HTTPConnectionPool):
        ConnectionCls = _HTTPConnection

    class _HTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = _HTTPSConnection

    return {"http": _HTTPPool, "https": _HTTPSPool}


class _TrackingAdapter(requests.adapters.HTTPAdapter):
    """An HTTPAdapter whose connections register in a :class:`_ConnectionRegistry`."""

    def __init__(self, registry: _ConnectionRegistry, **kwargs: Any) -> None:
        self._registry = registry
        super().__init__(**kwargs)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        """Build the pool manager with connection classes that register their sockets."""
        super().init_poolmanager(connections, maxsize, block=block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _tracking_pools(self._registry)


class _AttemptError(Exception):
    """One attempt failed before an HTTP answer was read in full."""

    def __init__(self, kind: str, cause: BaseException) -> None:
        super().__init__(kind)
        self.kind = kind  # "timeout", "network", "programmer" or "other"
        self.cause = cause


class _Reply:
    __slots__ = ("body", "content_type", "retry_after", "status")

    def __init__(self, status: int, body: bytes, content_type: str, retry_after: str | None) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.retry_after = retry_after

    def text(self) -> str:
        """The frame's text, or None for a frame that is not text."""
        match = _CHARSET_RE.search(self.content_type)
        encoding = match.group(1) if match else "utf-8"
        try:
            text = self.body.decode(encoding, errors="replace")
        except LookupError:
            text = self.body.decode("utf-8", errors="replace")
        return text.lstrip("\ufeff")


class _Job:
    """One call: its Future, its prepared request and its attempt count."""

    __slots__ = (
        "attempts",
        "future",
        "max_retries",
        "prepared",
        "ready_since",
        "route",
        "timeout_ms",
    )

    def __init__(
        self, route: Route, prepared: requests.PreparedRequest, timeout_ms: float, max_retries: int
    ) -> None:
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.route = route
        self.prepared = prepared
        self.timeout_ms = timeout_ms
        self.max_retries = max_retries
        self.attempts = 0
        self.ready_since = time.monotonic()

    def __repr__(self) -> str:
        return f"<_Job {self.route.method} {self.route.display_path} attempts={self.attempts}>"


def _sanitized(exc: BaseException) -> BaseException:
    """Drop the request/response a requests exception carries (their headers hold the token)."""
    if isinstance(exc, requests.exceptions.RequestException):
        exc.request = None
        exc.response = None
    return exc


def _chained(err: BaseException, cause: BaseException, route: Route | None = None) -> BaseException:
    """``err`` with ``cause`` chained, as ``raise err from cause`` would.

    For a route with a secret segment (a webhook token, given as a secret or in a raw
    ``api_call`` path) the cause is replaced by a :class:`_RedactedCause` carrying its
    redacted text: transport errors quote the URL.
    """
    if route is not None and (route.has_secret or route.display_path != route.path.split("?", 1)[0]):
        text = route.redact(_redact_webhook_tokens(f"{type(cause).__name__}: {cause}"))
        err.__cause__ = _RedactedCause(text)
        return err
    err.__cause__ = _sanitized(cause)
    return err


def _check_timeout_ms(timeout_ms: Any) -> float:
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)):
        raise TypeError(f"timeout_ms must be an int (milliseconds), not {type(timeout_ms).__name__}")
    if not math.isfinite(timeout_ms) or timeout_ms <= 0:
        raise ValueError(f"timeout_ms must be a positive number of milliseconds, got {timeout_ms!r}")
    return float(timeout_ms)


def _check_max_retries(max_retries: Any) -> int:
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(f"max_retries must be an int, not {type(max_retries).__name__}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be >= 0, got {max_retries}")
    return max_retries


def _check_body(body: Any) -> bytes | None:
    if body is None:
        return None
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise TypeError(
        f"body must be a str or bytes holding serialised JSON, not {type(body).__name__} "
        "(the body is never serialised for the caller; use json.dumps)"
    )


def _check_headers(headers: Any) -> dict[str, str]:
    """Caller headers, validated, without any ``Authorization`` variant (pitfall 7)."""
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a mapping of str to str, not {type(headers).__name__}")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str):
            raise TypeError(f"headers: header names must be str, not {type(name).__name__}")
        if not isinstance(value, str):
            raise TypeError(f"headers: the value of {name!r} must be a str, not {type(value).__name__}")
        if not _HEADER_NAME_RE.match(name):
            raise ValueError(f"headers: {name!r} is not a valid header name")
        if _HEADER_VALUE_BAD_RE.search(value):
            raise ValueError(
                f"headers: the value of {name!r} holds CR, LF or NUL or starts with whitespace"
            )
        if name.lower() == "authorization":
            continue
        checked[name] = value
    return checked


def validate_api_call_args(
    path: str,
    *,
    method: str = "GET",
    body: str | bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    max_retries: int = DEFAULT_MAX_RETRIES,
) -> Route:
    """Check the arguments of ``Client.api_call`` before any I/O, and build its route.

    Spec: ``apiCall``; python-api.md 2 (``api_call``).

    Args:
        path: The path below the base URL, starting with ``/``; may carry a query.
        method: The HTTP method, any letter case.
        body: An already serialised JSON body, ``str`` or ``bytes``, or None.
        headers: Extra headers, ``str`` to ``str``.
        timeout_ms: Per-attempt timeout, milliseconds, > 0.
        max_retries: Retries after the first attempt, >= 0.

    Returns:
        ``Route.from_path(method, path)``.

    Raises:
        TypeError: A wrong type: ``path`` or ``method`` not ``str``, ``body``
            not ``str``/``bytes``, ``headers`` not a ``str`` mapping,
            ``timeout_ms`` or ``max_retries`` not a number.
        ValueError: ``path`` does not start with ``/``, a bad method or header,
            ``timeout_ms`` <= 0 or ``max_retries`` < 0.
    """
    route = Route.from_path(method, path)
    _check_body(body)
    _check_headers(headers)
    _check_timeout_ms(timeout_ms)
    _check_max_retries(max_retries)
    return route


# --------------------------------------------------------------------------- the session


class RestSession:
    """A thread-safe REST session with a 5-slot strict FIFO, retries and buckets.

    Spec: ``apiCall``, Errors, Limits; protocol 1.1 and 4.1-4.3. Thread-safe:
    any thread may call :meth:`submit`, :meth:`request` and :meth:`close`.

    The token is held by :attr:`token` and never appears in a repr, a log
    line or an exception. Closed sessions cannot be reopened.
    """

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str,
        max_concurrency: int = MAX_CONCURRENT_REQUESTS,
        max_retry_after: float = DEFAULT_MAX_RETRY_AFTER_S,
        bucket_store: BucketStore | None = None,
        backoff_base: float = BACKOFF_BASE_S,
        backoff_cap: float = BACKOFF_CAP_S,
        wall_clock: Callable[[], float] = time.time,
        name: str = "service_client",
    ) -> None:
        """Configure the session; no thread starts and nothing is sent yet.

        Args:
            base_url: The REST base, e.g. ``https://api.service-chat.app/v2``
                (a trailing ``/`` is ignored).
            user_agent: The ``User-Agent`` header, e.g. ``service_client/0.1.0``.
            max_concurrency: Requests on the wire at once (worker threads).
            max_retry_after: Longest ``Retry-After`` waited out, seconds; a
                longer one ends the call at once: :class:`RateLimitError` for a
                429, :class:`ServiceAPIError` for a 502, 503 or 504.
            bucket_store: Where blocked buckets are recorded (any
                :class:`BucketStore`, e.g. a ``RedisBucketStore`` shared by
                several processes); a private :class:`MemoryBucketStore` by
                default. Calls carry a hash of the token as their scope.
            backoff_base: First computed backoff, seconds (tests shrink it).
            backoff_cap: Cap of the computed backoff, seconds.
            wall_clock: Current UTC time, epoch seconds; used only to turn an
                HTTP-date ``Retry-After`` into a delay (tests inject it).
            name: Prefix of the thread names.

        Raises:
            TypeError: An argument has the wrong type.
            ValueError: ``base_url`` is not an http(s) URL, ``max_concurrency``
                < 1, or a delay is negative or not finite.
        """
        if not isinstance(base_url, str):
            raise TypeError(f"base_url must be a str, not {type(base_url).__name__}")
        if not isinstance(user_agent, str) or not user_agent:
            raise TypeError("user_agent must be a non-empty str")
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int):
            raise TypeError(f"max_concurrency must be an int, not {type(max_concurrency).__name__}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        for arg, value in (
            ("max_retry_after", max_retry_after),
            ("backoff_base", backoff_base),
            ("backoff_cap", backoff_cap),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{arg} must be a number of seconds, not {type(value).__name__}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{arg} must be a finite number of seconds >= 0, got {value!r}")
        if not isinstance(name, str) or not name:
            raise TypeError("name must be a non-empty str")
        try:
            prepared_base = requests.Request("GET", base_url).prepare().url or ""
        except requests.exceptions.RequestException as exc:
            raise ValueError(f"base_url is not a valid http(s) URL: {base_url!r}") from exc
        if not prepared_base.lower().startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http or https URL, got {base_url!r}")

        self._base_url = prepared_base.rstrip("/")
        self._max_concurrency = max_concurrency
        self._max_retry_after = float(max_retry_after)
        self._backoff_base = float(backoff_base)
        self._backoff_cap = float(backoff_cap)
        self._wall_clock = wall_clock
        self._name = name
        if bucket_store is not None and not isinstance(bucket_store, BucketStore):
            raise TypeError(
                "bucket_store must implement BucketStore (wait_time, acquire, block), "
                f"not {type(bucket_store).__name__}"
            )
        self._buckets: BucketStore = bucket_store if bucket_store is not None else MemoryBucketStore()
        self._scope = ""  # the token's bucket scope (a hash), set with the token

        # Configured once, never mutated afterwards (STYLE: requests.Session).
        self._registry = _ConnectionRegistry()
        self._http = requests.Session()
        adapter = _TrackingAdapter(
            self._registry, pool_connections=4, pool_maxsize=max(max_concurrency, 5)
        )
        self._http.mount("http://", adapter)
        self._http.mount("https://", adapter)
        self._default_headers: dict[str, str] = {
            "User-Agent": user_agent,
            "Accept": "*/*",
            "Accept-Encoding": requests.utils.DEFAULT_ACCEPT_ENCODING,
            "Connection": "keep-alive",
            "Content-Type": "application/json",
            "X-Service-SDK": "true",
        }
        self._http.headers = CaseInsensitiveDict(self._default_headers)
        env = self._http.merge_environment_settings(self._base_url, {}, None, None, None)
        self._send_kwargs: dict[str, Any] = {
            "proxies": env.get("proxies") or {},
            "verify": env.get("verify", True),
            "cert": env.get("cert"),
        }

        self._state_lock = threading.Lock()
        self._closed = False
        self._token: Secret | None = None
        self._live: set[_Job] = set()
        self._fifo: FifoQueue[_Job] = FifoQueue()
        self._delays: DelayQueue[_Job] = DelayQueue(
            self._dispatch, thread_name=f"{name}-rest-timer-1"
        )
        self._workers: list[threading.Thread] = []

    # ------------------------------------------------------------------ token

    @property
    def token(self) -> str | None:
        """The bot token sent as ``Authorization: Bearer <token>``, or None.

        Set by the client at login and cleared at destroy. Without a token
        every call raises :class:`ServiceAuthError` and nothing is sent
        (pitfall 8).

        Raises:
            TypeError: (setter) the value is neither a ``str`` nor None.
            ValueError: (setter) the token is empty or holds characters not
                allowed in a header (the message never quotes it).
        """
        secret = self._token
        return None if secret is None else secret.get()

    @token.setter
    def token(self, value: str | None) -> None:
        """Set or clear the token (validated; never echoed in errors)."""
        if value is None:
            self._token = None
            return
        if not isinstance(value, str):
            raise TypeError(f"token must be a str or None, not {type(value).__name__}")
        if not _TOKEN_RE.match(value):
            raise ValueError("token must be a non-empty string of visible ASCII characters")
        self._scope = bucket_scope(value)
        self._token = Secret(value)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def base_url(self) -> str:
        """The REST base URL, without a trailing ``/``."""
        return self._base_url

    @property
    def bucket_store(self) -> BucketStore:
        """The bucket table in use."""
        return self._buckets

    # ------------------------------------------------------------------ public calls

    def submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        body: str | bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: float = DEFAULT_TIMEOUT_MS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        authorized: bool = True,
    ) -> concurrent.futures.Future[Any]:
        """Queue one call and return its Future at once.

        Spec: ``apiCall`` and Limits. The Future is
        already running (it cannot be cancelled); its result is what
        :meth:`request` returns or raises.

        Args:
            route: Method and encoded path (:class:`Route`).
            params: Query parameters, form-encoded; ``None`` values omitted,
                never a bare ``?``.
            body: An already serialised JSON body (``str`` sent as UTF-8, or
                ``bytes``), sent as is.
            json: For the library's own methods: a value serialised to JSON
                here (``None`` values inside it kept as given); ``json=None``
                means no body. Not together with ``body``.
            headers: Extra headers merged on top of the defaults; any
                ``Authorization`` variant (any letter case) is dropped.
            timeout_ms: Bound of each whole attempt (connect, send, headers
                and body), milliseconds.
            max_retries: Retries after the first attempt (1 + max_retries
                requests at most).
            authorized: False sends no ``Authorization`` header at all and
                needs no token (webhook execution, whose token is in the
                path); the call still goes through the queue, the buckets
                and the retries.

        Returns:
            A Future resolving to the parsed JSON, or None for a 204 or an
            empty 2xx body. It fails with :class:`ServiceAPIError` (non-OK
            answer after retries, or a 2xx that is not JSON),
            :class:`RateLimitError` (429 after retries, or a 429 whose
            ``Retry-After`` is over ``max_retry_after`` seconds; a 502, 503 or
            504 asking for longer gives :class:`ServiceAPIError`), :class:`ServiceTimeoutError`
            (the last attempt timed out), :class:`ServiceError` (network
            failure after the last retry, cause chained; or the session was
            closed), or :class:`ValueError` (a malformed request, never retried).

        Raises:
            TypeError: ``route`` is not a :class:`Route`; ``body`` is not
                ``str``/``bytes``; ``json`` cannot be serialised; ``headers``,
                ``params``, ``timeout_ms`` or ``max_retries`` have a wrong type.
            ValueError: ``body`` and ``json`` both given; a bad header name or
                value; ``timeout_ms`` <= 0; ``max_retries`` < 0.
            ServiceAuthError: No token is set (``authorized`` calls only), or
                the session is closed (nothing is sent).
        """
        if not isinstance(route, Route):
            raise TypeError(f"route must be a Route, not {type(route).__name__}")
        data = _check_body(body)
        if json is not None:
            if data is not None:
                raise ValueError("pass either body or json, not both")
            try:
                data = _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            except (TypeError, ValueError) as exc:
                raise TypeError(f"json: value is not JSON serialisable ({exc})") from None
        caller_headers = _check_headers(headers)
        timeout_ms = _check_timeout_ms(timeout_ms)
        max_retries = _check_max_retries(max_retries)
        if params is not None:
            route = route.with_query(params)

        secret = self._token
        if self._closed:
            raise ServiceAuthError("the REST session is closed (the client was destroyed); create a new Client")
        if secret is None and authorized:
            raise ServiceAuthError("no token: log in before making REST calls")

        merged: CaseInsensitiveDict[str] = CaseInsensitiveDict(self._default_headers)
        merged.update(caller_headers)
        if authorized and secret is not None:
            merged["Authorization"] = f"Bearer {secret.get()}"
        prepared = requests.PreparedRequest()
        prepared.prepare_method(route.method)
        prepared.url = self._base_url + route.wire_path()
        try:
            prepared.prepare_headers(merged)
        except requests.exceptions.InvalidHeader:
            # The requests message quotes the value, which may be the token.
            raise ValueError("headers: a header name or value is not valid") from None
        prepared.prepare_body(data, None)

        job = _Job(route, prepared, timeout_ms, max_retries)
        job.future.set_running_or_notify_cancel()
        with self._state_lock:
            if self._closed:
                raise ServiceAuthError("the REST session is closed (the client was destroyed); create a new Client")
            self._live.add(job)
            if not self._workers:
                self._start_workers()
        self._dispatch(job)
        return job.future

    def request(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        body: str | bytes | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: float = DEFAULT_TIMEOUT_MS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        authorized: bool = True,
    ) -> Any:
        """Make one call and wait for its result (``submit(...)`` then its result).

        Spec: ``apiCall``. Arguments are those of :meth:`submit`.

        Returns:
            The parsed JSON body, or None for a 204 or an empty 2xx body.

        Raises:
            TypeError, ValueError, ServiceAuthError: As :meth:`submit`, before
                anything is sent.
            ServiceAPIError: A non-OK answer after retries (``str(e)`` starts
                ``"API Error <status>: "``), or a 2xx whose body is not JSON.
            RateLimitError: A 429 after retries, or a 429 whose ``Retry-After``
                is longer than ``max_retry_after`` (a 502, 503 or 504 asking for
                longer raises :class:`ServiceAPIError` with its status).
            ServiceTimeoutError: The last attempt timed out.
            ServiceError: A network failure after the last retry (cause
                chained), or the session was closed meanwhile.
        """
        future = self.submit(
            route,
            params=params,
            body=body,
            json=json,
            headers=headers,
            timeout_ms=timeout_ms,
            max_retries=max_retries,
            authorized=authorized,
        )
        closed_polls = 0
        while True:
            done, _ = concurrent.futures.wait([future], timeout=_RESULT_POLL_S)
            if done:
                return future.result()
            if self._closed:
                closed_polls += 1
                if closed_polls > 1:  # close() ends every Future; this is a safety net
                    raise ServiceError("the REST session was closed; the call was cancelled")

    def close(self) -> None:
        """End the session (destroy semantics; pitfall 11). Idempotent.

        Queued calls, bucket waits and retry sleeps end at once with
        :class:`ServiceError`, as do calls on the wire (their sockets are shut
        down); the token is cleared; every REST thread has stopped when this
        returns (joined within 1 s). Later calls raise :class:`ServiceAuthError`.
        """
        with self._state_lock:
            first = not self._closed
            self._closed = True
            self._token = None
            jobs = list(self._live)
            self._live.clear()
            workers = list(self._workers)
        if first:
            for job in jobs:
                self._set_exception(job, ServiceError("the REST session was closed; the call was cancelled"))
            self._fifo.close()
            self._delays.close()
            self._registry.abort_all()
            self._http.close()
        deadline = time.monotonic() + DESTROY_JOIN_S
        current = threading.current_thread()
        for thread in workers:
            if thread is not current:
                thread.join(max(0.0, deadline - time.monotonic()))
        self._delays.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> RestSession:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"<RestSession {state} base_url={self._base_url!r} "
            f"queued={len(self._fifo)} parked={len(self._delays)} calls={len(self._live)}>"
        )

    def __reduce__(self) -> NoReturn:
        raise TypeError("RestSession cannot be pickled")

    # ------------------------------------------------------------------ internals

    def _start_workers(self) -> None:
        """Start the worker threads (called once, under ``_state_lock``)."""
        for n in range(1, self._max_concurrency + 1):
            thread = threading.Thread(target=self._work, name=f"{self._name}-rest-{n}", daemon=True)
            self._workers.append(thread)
            thread.start()

    def _bucket_wait(self, job: _Job, *, acquire: bool = False) -> float:
        """Seconds ``job`` must still wait for its bucket (0 when clear).

        With ``acquire`` (a worker about to send) the store may count the
        request; otherwise it is a look that takes nothing.
        """
        store = self._buckets
        key = job.route.bucket
        try:
            if acquire:
                wait = store.acquire(key, scope=self._scope)
            else:
                wait = store.wait_time(key, scope=self._scope)
        except Exception:  # noqa: BLE001 - a failing store must not wedge calls
            _log.warning("bucket store %s(%r) failed; treating the bucket as clear",
                         "acquire" if acquire else "wait_time", key, exc_info=True)
            return 0.0
        return wait if wait > 0 else 0.0

    def _block_bucket(self, key: str, delay: float) -> None:
        try:
            self._buckets.block(key, delay, scope=self._scope)
        except Exception:  # noqa: BLE001
            _log.warning("bucket store block(%r) failed", key, exc_info=True)

    def _dispatch(self, job: _Job) -> None:
        """Send ``job`` to the back of the FIFO, or park it while its bucket is blocked.

        Runs on the submitting thread, the timer thread and the workers; takes
        no slot (protocol 4.3 steps 2-3; pitfalls 1 and 2: re-checked after
        every wake-up).
        """
        if job.future.done():
            return
        wait = self._bucket_wait(job)
        if wait > 0:
            self._park_on_bucket(job, wait)
        elif not self._fifo.put(job):
            self._end_closed(job)

    def _park_on_bucket(self, job: _Job, wait: float) -> None:
        if wait > self._max_retry_after:
            self._set_exception(
                job,
                RateLimitError(
                    429,
                    job.route.display_path,
                    retry_after=wait,
                    message=(
                        f"API Error 429: bucket {job.route.bucket} is rate limited for {wait:.1f} s more, "
                        f"over the {self._max_retry_after:g} s this session waits"
                    ),
                ),
            )
            return
        if not self._delays.put(time.monotonic() + wait, job):
            self._end_closed(job)

    def _end_closed(self, job: _Job) -> None:
        self._set_exception(job, ServiceError("the REST session was closed; the call was cancelled"))

    def _settle(self, job: _Job) -> bool:
        """Claim the right to complete ``job`` (exactly once)."""
        with self._state_lock:
            if job not in self._live:
                return False
            self._live.discard(job)
            return True

    def _set_result(self, job: _Job, value: Any) -> None:
        if self._settle(job):
            try:
                job.future.set_result(value)
            except concurrent.futures.InvalidStateError:
                pass

    def _set_exception(self, job: _Job, exc: BaseException) -> None:
        # close() removed every job from _live before failing them itself.
        if self._settle(job) or not job.future.done():
            try:
                job.future.set_exception(exc)
            except concurrent.futures.InvalidStateError:
                pass

    def _work(self) -> None:
        """Worker loop: one worker is one slot (protocol 4.3 steps 3-6)."""
        while True:
            job = self._fifo.get()
            if job is None:
                if self._fifo.closed:
                    return
                continue
            if job.future.done():
                continue
            wait = self._bucket_wait(job, acquire=True)
            if wait > 0:  # blocked while it sat in the FIFO: park again, free the slot
                self._park_on_bucket(job, wait)
                continue
            try:
                self._attempt(job)
            except Exception as exc:  # noqa: BLE001 - a worker never dies of one call
                # A traceback may quote the URL: none for a route with a secret segment.
                _log.error("unexpected error in a REST worker", exc_info=not job.route.has_secret)
                self._set_exception(
                    job, _chained(ServiceError(f"unexpected error: {type(exc).__name__}"), exc, job.route)
                )

    def _attempt(self, job: _Job) -> None:
        """Send one attempt of ``job`` and classify the outcome (protocol 4.1)."""
        job.attempts += 1
        route = job.route
        started = time.monotonic()
        waited_ms = (started - job.ready_since) * 1000.0
        try:
            reply = self._send_once(job)
        except _AttemptError as err:
            self._log_attempt(job, err.kind, waited_ms, started)
            self._after_failure(job, err)
            return
        finally:
            job.ready_since = time.monotonic()
        self._log_attempt(job, reply.status, waited_ms, started)
        status = reply.status
        if 200 <= status < 300:
            if status == 204 or not reply.body.strip():
                self._set_result(job, None)
                return
            text = reply.text()
            try:
                value = _json.loads(text)
            except ValueError:
                self._set_exception(
                    job,
                    ServiceAPIError(
                        status,
                        route.display_path,
                        text,
                        None,
                        message=f"API Error {status}: the response body is not JSON: {error_text(text)}",
                    ),
                )
                return
            self._set_result(job, value)
            return

        text = reply.text()
        try:
            data = _json.loads(text) if text.strip() else None
        except ValueError:
            data = None
        if status not in RETRY_STATUSES:
            self._set_exception(job, ServiceAPIError(status, route.display_path, text, data))
            return

        retry_after = parse_retry_after(reply.retry_after, now=self._wall_clock())
        delay = (
            retry_after
            if retry_after is not None
            else backoff_delay(job.attempts - 1, base=self._backoff_base, cap=self._backoff_cap)
        )
        now = time.monotonic()
        if status == 429:
            self._block_bucket(route.bucket, delay)
        retries_left = job.attempts <= job.max_retries
        if retries_left and retry_after is not None and retry_after > self._max_retry_after:
            message = (
                f"API Error {status}: {error_text(text, data)} (Retry-After {retry_after:g} s is "
                f"over the {self._max_retry_after:g} s this session waits)"
            )
            # RateLimitError means a 429 only; a 502/503/504 asking for too long a wait
            # is an ordinary API error carrying its status.
            self._set_exception(
                job,
                RateLimitError(status, route.display_path, text, data, retry_after=retry_after, message=message)
                if status == 429
                else ServiceAPIError(status, route.display_path, text, data, message=message),
            )
        elif retries_left:
            self._retry_later(job, now + delay)
        elif status == 429:
            self._set_exception(
                job, RateLimitError(status, route.display_path, text, data, retry_after=retry_after)
            )
        else:
            self._set_exception(job, ServiceAPIError(status, route.display_path, text, data))

    def _after_failure(self, job: _Job, err: _AttemptError) -> None:
        route = job.route
        what = f"{route.method} {route.display_path}"
        if self._closed:
            self._end_closed(job)
            return
        if err.kind in ("timeout", "network"):
            if job.attempts <= job.max_retries:
                delay = backoff_delay(job.attempts - 1, base=self._backoff_base, cap=self._backoff_cap)
                self._retry_later(job, time.monotonic() + delay)
                return
            attempts = f"{job.attempts} attempt{'s' if job.attempts != 1 else ''}"
            if err.kind == "timeout":
                exc: BaseException = ServiceTimeoutError(
                    f"{what} timed out after {job.timeout_ms:g} ms ({attempts})"
                )
            else:
                exc = ServiceError(f"{what} failed: network error after {attempts} ({type(err.cause).__name__})")
        elif err.kind == "programmer":
            exc = ValueError(f"{what}: the request is malformed ({type(err.cause).__name__}); not retried")
        else:
            exc = ServiceError(f"{what} failed ({type(err.cause).__name__}); not retried")
        self._set_exception(job, _chained(exc, err.cause, route))

    def _retry_later(self, job: _Job, due: float) -> None:
        """Park ``job`` until ``due``; it then goes through the bucket check and the FIFO again."""
        if not self._delays.put(due, job):
            self._end_closed(job)

    def _log_attempt(self, job: _Job, outcome: int | str, waited_ms: float, started: float) -> None:
        if _log.isEnabledFor(logging.DEBUG):
            route = job.route
            _log.debug(
                "%s %s -> %s (attempt %d/%d, bucket %s, waited %.0f ms, took %.0f ms)",
                route.method,
                route.display_path,
                outcome,
                job.attempts,
                job.max_retries + 1,
                route.bucket,
                waited_ms,
                (time.monotonic() - started) * 1000.0,
            )

    def _send_once(self, job: _Job) -> _Reply:
        """One attempt within ``timeout_ms``: connect, send, headers and body (pitfall 33).

        Raises:
            _AttemptError: The attempt failed before a full answer was read.
        """
        timeout_s = job.timeout_ms / 1000.0
        deadline = time.monotonic() + timeout_s
        try:
            response = self._http.send(
                job.prepared,
                stream=True,
                allow_redirects=False,
                timeout=urllib3.Timeout(total=timeout_s),
                **self._send_kwargs,
            )
        except requests.exceptions.Timeout as exc:
            raise _AttemptError("timeout", exc) from None
        except _PROGRAMMER_ERRORS as exc:
            raise _AttemptError("programmer", exc) from None
        except (
            requests.exceptions.ConnectionError,
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            raise _AttemptError("network", exc) from None
        except requests.exceptions.RequestException as exc:
            raise _AttemptError("other", exc) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise _AttemptError("network", exc) from None
        try:
            body = self._read_body(response, deadline)
        finally:
            # Pitfall 32: a fully read body has already returned the connection
            # to the pool; a partly read one is closed here.
            response.close()
        return _Reply(
            response.status_code,
            body,
            response.headers.get("Content-Type", ""),
            response.headers.get("Retry-After"),
        )

    @staticmethod
    def _read_body(response: requests.Response, deadline: float) -> bytes:
        """Read the whole body, each socket receive bounded by the time left."""
        raw = response.raw
        read1 = getattr(raw, "read1", None)
        chunks: list[bytes] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _AttemptError("timeout", ServiceTimeoutError("the body read ran past the deadline"))
            conn = getattr(raw, "connection", None)
            sock = getattr(conn, "sock", None)
            try:
                if sock is not None:
                    sock.settimeout(remaining)
                chunk = (
                    read1(_READ_CHUNK, decode_content=True)
                    if read1 is not None
                    else raw.read(_READ_CHUNK, decode_content=True)
                )
            except (TimeoutError, urllib3.exceptions.ReadTimeoutError) as exc:
                raise _AttemptError("timeout", exc) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise _AttemptError("network", exc) from None
            if not chunk:
                break
            chunks.append(chunk)
        if time.monotonic() > deadline:
            raise _AttemptError("timeout", ServiceTimeoutError("the body read ran past the deadline"))
        return b"".join(chunks)

