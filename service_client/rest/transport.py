"""The transport of the REST session: one HTTP attempt, from connect to the last body byte.

:class:`HttpTransport` owns the ``requests.Session`` (configured once, never
changed afterwards), prepares requests with the default headers and the
``Authorization`` header, and makes one attempt at a time per calling thread:
connect, send, read the headers and read the body, all within one per-attempt
deadline. The outcome is a :class:`~.answer.Reply` (any HTTP status; the body
read in full, or up to the size limit) or an :class:`AttemptError` saying what
kind of failure it was: ``"timeout"``, ``"network"`` (both retried by the
session), ``"programmer"`` (a malformed request, never retried) or ``"other"``.
Redirects are never followed: a 3xx is an answer like any other.

It knows nothing of queues, buckets, retries or Futures; the session
(:mod:`.session`) schedules the attempts, and :mod:`.answer` says what an
answer means. Its sockets register in a
:class:`~.connections.ConnectionRegistry`: a watchdog thread shuts down the
sockets of an attempt whose deadline has passed (a server that trickles its
answer a byte at a time cannot hold it longer), and
:meth:`HttpTransport.close` shuts them all down, ending sends and reads
blocked on them at once.

Webhook tokens travel in URL paths (``/webhooks/<id>/<token>``): the request
lines urllib3 logs at DEBUG and the transport errors chained to the library's
exceptions have them replaced by ``***``.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Mapping
from typing import Any

import requests
import requests.exceptions
import urllib3
import urllib3.exceptions
from requests.structures import CaseInsensitiveDict

from .._defaults import DEFAULT_MAX_BODY_BYTES
from .._secret import Secret
from ..errors import ServiceAuthError, ServiceError, ServiceTimeoutError
from .answer import Reply, has_path_secret, redact_webhook_tokens, shown_text
from .connections import ConnectionRegistry, TrackingAdapter
from .route import Route
from .seam import AttemptError

__all__ = [
    "HttpTransport",
    "RedactedCause",
    "chained",
    "final_error",
    "prepare_base_url",
    "sanitized",
]

#: How long after an attempt's deadline the watchdog shuts its socket down, seconds. A server
#: that is silent is timed out first by the socket timeout (its error is the cause the caller
#: sees); the watchdog ends what that cannot: an answer that trickles in.
_WATCHDOG_GRACE_S = 0.05
#: Bytes asked for per body read: each read is one socket receive at most, and
#: decodes (gzip, deflate) to this many bytes at most.
_READ_CHUNK = 64 * 1024

#: requests exceptions that mean the request itself is malformed: never retried.
_PROGRAMMER_ERRORS: tuple[type[Exception], ...] = (
    requests.exceptions.InvalidURL,
    requests.exceptions.InvalidSchema,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidHeader,
    requests.exceptions.URLRequired,
)

class _WebhookTokenLogFilter(logging.Filter):
    """Redacts webhook tokens from the request lines urllib3 logs (at DEBUG) with the URL path.

    Installed once on urllib3's ``connectionpool`` and ``util.retry`` loggers; it only
    rewrites ``/webhooks/<id>/<token>`` in a record's message and arguments.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message and string arguments; always keep the record."""
        if isinstance(record.msg, str):
            record.msg = redact_webhook_tokens(record.msg)
        args = record.args
        if isinstance(args, tuple) and any(isinstance(a, str) and "ebhooks/" in a for a in args):
            record.args = tuple(redact_webhook_tokens(a) if isinstance(a, str) else a for a in args)
        return True


def _install_log_filter() -> None:
    for name in ("urllib3.connectionpool", "urllib3.util.retry"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _WebhookTokenLogFilter) for f in logger.filters):
            logger.addFilter(_WebhookTokenLogFilter())


_install_log_filter()


class RedactedCause(Exception):
    """Stands in for a transport error whose text held a secret of the request path.

    Its message is the original type name and text with the secret replaced by ``***``.
    """


def sanitized(exc: BaseException) -> BaseException:
    """``exc`` with no secret left in it or in what it chains.

    A requests exception drops the request and response it carries (their headers hold the
    token). The frames of ``exc`` and of every exception it chains (``__cause__``,
    ``__context__``) lose their locals: urllib3's and requests' frames hold the
    ``Authorization`` header there, and error trackers, ``pytest --showlocals`` and
    ``TracebackException(capture_locals=True)`` record frame locals. Types, messages and the
    traceback lines themselves are kept.
    """
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, requests.exceptions.RequestException):
            item.request = None
            item.response = None
        if item.__traceback__ is not None:
            traceback.clear_frames(item.__traceback__)
        todo.extend((item.__cause__, item.__context__))
    return exc


def chained(
    err: BaseException, cause: BaseException, route: Route | None = None, bearer: Secret | None = None
) -> BaseException:
    """``err`` with ``cause`` chained, as ``raise err from cause`` would, and no secret in the chain.

    A requests exception loses its request and response (their headers hold the
    token), and the frames of the cause and of everything it chains lose their locals
    (see :func:`sanitized`). For a route with a secret segment (a webhook token, given as a
    secret or in a raw ``api_call`` path) the cause is replaced by a
    :class:`RedactedCause` carrying its redacted text: transport errors quote the URL. So it
    is when the text of an exception of the chain quotes the bot token (a status line the
    server made of it, quoted back by ``http.client``).

    Args:
        err: The exception the caller will see.
        cause: The transport error behind it.
        route: The call's route, or None when no path secret can be involved.
        bearer: The bot token the request carried, or None.

    Returns:
        ``err`` itself, its ``__cause__`` set.
    """
    quoted = bearer is not None and any(bearer.mask(text) != text for text in _chain_texts(cause))
    if quoted or (route is not None and has_path_secret(route)):
        text = f"{type(cause).__name__}: {cause}"
        if bearer is not None:
            text = bearer.mask(text)
        err.__cause__ = RedactedCause(shown_text(text, route) if route is not None else text)
        return err
    err.__cause__ = sanitized(cause)
    return err


def _chain_texts(exc: BaseException) -> list[str]:
    """The text of ``exc`` and of every exception it chains."""
    seen: set[int] = set()
    texts: list[str] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        texts.append(str(item))
        todo.extend((item.__cause__, item.__context__))
    return texts


def final_error(
    err: AttemptError, route: Route, attempts: int, timeout_ms: float, bearer: Secret | None = None
) -> BaseException:
    """The exception a call ends with when the failure ``err`` is its last attempt.

    Args:
        err: The failure of the last attempt.
        route: The call's route (its redacted path goes in the message).
        attempts: Attempts made, this one included.
        timeout_ms: The per-attempt timeout, milliseconds.
        bearer: The bot token the request carried, or None (see :func:`chained`).

    Returns:
        :class:`ServiceTimeoutError` for a timeout, :class:`ServiceError`
        for a network failure or any other transport error, ``ValueError``
        for a malformed request; :attr:`AttemptError.cause` chained with no secret in
        it (see :func:`chained`).
    """
    what = f"{route.method} {route.display_path}"
    cause = type(err.cause).__name__
    count = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    exc: BaseException
    if err.kind == "timeout":
        exc = ServiceTimeoutError(f"{what} timed out after {timeout_ms:g} ms ({count})")
    elif err.kind == "network":
        exc = ServiceError(f"{what} failed: network error after {count} ({cause})")
    elif err.kind == "programmer":
        exc = ValueError(f"{what}: the request is malformed ({cause}); not retried")
    else:
        exc = ServiceError(f"{what} failed ({cause}); not retried")
    return chained(exc, err.cause, route, bearer)


def prepare_base_url(base_url: str) -> str:
    """Normalise a REST base URL as requests would send it, without a trailing ``/``.

    Raises:
        ValueError: ``base_url`` is not a valid http or https URL.
    """
    try:
        prepared_base = requests.Request("GET", base_url).prepare().url or ""
    except requests.exceptions.RequestException as exc:
        raise ValueError(f"base_url is not a valid http(s) URL: {base_url!r}") from exc
    if not prepared_base.lower().startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http or https URL, got {base_url!r}")
    return prepared_base.rstrip("/")


class HttpTransport:
    """Sends one prepared request at a time per calling thread over a pooled ``requests.Session``.

    Thread-safe: several workers call :meth:`send_once` at once (the pool keeps
    ``pool_maxsize`` connections per host). Proxies, certificate verification
    and client certificates come from the environment (``HTTPS_PROXY``,
    ``REQUESTS_CA_BUNDLE``, ...) once, at construction; redirects are never
    followed; no cookie is kept or sent. Its watchdog thread
    (``<name>-rest-watchdog-1``) starts with the first attempt and stops at
    :meth:`close`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        user_agent: str,
        pool_maxsize: int,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        name: str = "service_client",
    ) -> None:
        """Build the ``requests.Session``; nothing is sent.

        Args:
            base_url: The REST base as returned by :func:`prepare_base_url`.
            user_agent: The ``User-Agent`` header.
            pool_maxsize: Connections kept per host.
            max_body_bytes: Largest answer body read, in bytes once decoded (gzip,
                deflate); a longer one is not read further (see :attr:`Reply.over_limit`).
            name: Prefix of the watchdog thread's name.
        """
        self._base_url = base_url
        self._max_body_bytes = max_body_bytes
        self._registry = ConnectionRegistry(watchdog_name=f"{name}-rest-watchdog-1")
        self._http = requests.Session()
        adapter = TrackingAdapter(self._registry, pool_connections=4, pool_maxsize=pool_maxsize)
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

    def prepare(
        self, route: Route, data: bytes | None, headers: Mapping[str, str], bearer: Secret | None
    ) -> requests.PreparedRequest:
        """Build the request of one call, sent unchanged by every attempt.

        The ``Authorization`` header is added last, once everything that could
        raise has run, and no local variable holds the token: a traceback of a
        refused request records no token among its frames' locals.

        Args:
            route: Method and encoded path (query included).
            data: The body bytes, or None for no body.
            headers: Validated caller headers, merged on top of the defaults
                (without any ``Authorization`` variant).
            bearer: The token sent as ``Authorization: Bearer <token>``, or
                None to send no ``Authorization`` header.

        Returns:
            The prepared request.

        Raises:
            ValueError: requests refused a header (the message quotes no value).
            ServiceAuthError: ``bearer`` holds no token any more.
        """
        merged: CaseInsensitiveDict[str] = CaseInsensitiveDict(self._default_headers)
        merged.update(headers)
        prepared = requests.PreparedRequest()
        prepared.prepare_method(route.method)
        prepared.url = self._base_url + route.wire_path()
        try:
            prepared.prepare_headers(merged)
        except requests.exceptions.InvalidHeader:
            # The requests message quotes the value.
            raise ValueError("headers: a header name or value is not valid") from None
        prepared.prepare_body(data, None)
        if bearer is not None:
            if not bearer:
                raise ServiceAuthError("no token: log in before making REST calls")
            prepared.headers["Authorization"] = f"Bearer {bearer.get()}"
        return prepared

    def send_once(self, prepared: requests.PreparedRequest, timeout_ms: float) -> Reply:
        """One attempt within ``timeout_ms``: connect, send, headers and body together.

        The watchdog shuts the attempt's socket down at the deadline (50 ms after
        it, so that a silent server is timed out by the socket timeout first),
        whatever the attempt is doing then: connecting, in a TLS handshake,
        sending, or reading a status line or headers that arrive a byte at a time.

        Args:
            prepared: A request from :meth:`prepare`.
            timeout_ms: Bound of the whole attempt, milliseconds.

        Returns:
            The answer, whatever its status (a 3xx is not followed), its body read
            in full, or up to the size limit (then :attr:`Reply.over_limit` is set).

        Raises:
            AttemptError: The attempt failed before a full answer was read.
        """
        timeout_s = timeout_ms / 1000.0
        deadline = time.monotonic() + timeout_s
        attempt = self._registry.begin(deadline + _WATCHDOG_GRACE_S)
        try:
            reply = self._exchange(prepared, timeout_s, deadline)
        except AttemptError as err:
            if err.kind == "timeout" or not attempt.expired:
                raise
        else:
            if not attempt.expired and time.monotonic() <= deadline:
                return reply
        finally:
            self._registry.end(attempt)
        # The watchdog shut the socket down: whatever failure or short body that caused is the timeout.
        raise AttemptError(
            "timeout",
            ServiceTimeoutError(f"the attempt ran past its {timeout_ms:g} ms deadline; its connection was shut down"),
        )

    def _exchange(self, prepared: requests.PreparedRequest, timeout_s: float, deadline: float) -> Reply:
        """Send ``prepared`` through the pool's adapter (never following a redirect) and read the answer."""
        try:
            # The pool's adapter itself: requests.Session.send would start resolving a redirect
            # (reading its body, extracting cookies) even with allow_redirects=False.
            adapter = self._http.get_adapter(prepared.url or "")
            timeout: Any = urllib3.Timeout(total=timeout_s)  # requests passes it on as is
            response = adapter.send(prepared, stream=True, timeout=timeout, **self._send_kwargs)
        except requests.exceptions.Timeout as exc:
            raise AttemptError("timeout", exc) from None
        except _PROGRAMMER_ERRORS as exc:
            raise AttemptError("programmer", exc) from None
        except (
            requests.exceptions.ConnectionError,
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            raise AttemptError("network", exc) from None
        except requests.exceptions.RequestException as exc:
            raise AttemptError("other", exc) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise AttemptError("network", exc) from None
        try:
            body, over_limit = self._read_body(response, deadline)
        finally:
            # A fully read body has already returned its connection to the pool;
            # a partly read one is closed here rather than reused mid-answer.
            response.close()
        headers = response.headers
        return Reply(
            response.status_code,
            body,
            headers.get("Content-Type", ""),
            headers.get("Retry-After"),
            location=headers.get("Location"),
            over_limit=over_limit,
        )

    def _read_body(self, response: requests.Response, deadline: float) -> tuple[bytes, int | None]:
        """Read the body, decoded, each socket receive bounded by the time left.

        Returns:
            ``(body, None)``, or ``(b"", limit)`` as soon as the decoded body goes over
            the size limit (nothing more is read or decoded).
        """
        limit = self._max_body_bytes
        raw = response.raw
        declared = getattr(raw, "length_remaining", None)
        if isinstance(declared, int) and declared > limit and not response.headers.get("Content-Encoding"):
            return b"", limit
        chunks: list[bytes] = []
        size = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AttemptError("timeout", ServiceTimeoutError("the body read ran past the deadline"))
            conn = getattr(raw, "connection", None)
            sock = getattr(conn, "sock", None)
            try:
                if sock is not None:
                    sock.settimeout(remaining)
                # At most this many decoded bytes per read (urllib3 decompresses no more than asked).
                chunk = raw.read1(min(_READ_CHUNK, limit - size + 1), decode_content=True)
            except (TimeoutError, urllib3.exceptions.ReadTimeoutError) as exc:
                raise AttemptError("timeout", exc) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise AttemptError("network", exc) from None
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                return b"", limit
            chunks.append(chunk)
        return b"".join(chunks), None

    def close(self) -> None:
        """Shut every connection's socket down (blocked sends and reads fail at once), stop the
        watchdog, then close the pool."""
        self._registry.abort_all()
        self._http.close()

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the watchdog thread to end (after :meth:`close`)."""
        self._registry.join(timeout)
