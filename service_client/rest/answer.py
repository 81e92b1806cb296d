"""What an HTTP answer means for its call: the value, a final error, or a retryable refusal.

Pure policy: no I/O, no ``requests`` import. :class:`Reply` is an answer read by
the transport (status, body up to the size limit, a few headers);
:func:`classify` turns it into an :class:`Answer`. This is where a server's
text becomes an error, so it is where secrets are masked: webhook tokens a body
or a header may quote (``/webhooks/<id>/<token>``) are replaced by ``***``, and
the bot token the request carried (as sent, percent-encoded, JSON- or
HTML-escaped; a 401 body quoting the ``Authorization`` header, a redirect's
``Location``) by ``[REDACTED]``, in everything built here (:func:`shown_text`):
the message, ``body``, ``data``, hence the repr and the pickled form.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._secret import Secret
from ..errors import RateLimitError, ServiceAPIError, error_text
from ..permissions import Permissions
from .retry import RETRY_STATUSES
from .route import Route

__all__ = [
    "Answer",
    "Reply",
    "classify",
    "has_path_secret",
    "redact_webhook_tokens",
    "refusal_error",
    "shown_text",
]

#: The charset parameter of a Content-Type.
_CHARSET_RE = re.compile(r";\s*charset=\"?([\w.:-]+)", re.IGNORECASE)
#: A webhook token in a URL or path: ``/webhooks/<id>/<token>``.
_WEBHOOK_TOKEN_RE = re.compile(r"(/webhooks/[^/?#\s'\"]+/)[^/?#\s'\"]+", re.IGNORECASE)
#: Characters of a redirect's ``Location`` quoted in its error message.
_LOCATION_SHOWN = 300


def redact_webhook_tokens(text: str) -> str:
    """Replace the token of every ``/webhooks/<id>/<token>`` in ``text`` by ``***``.

    Args:
        text: Any text, e.g. a log line or an exception message quoting a URL.

    Returns:
        ``text`` with each webhook token replaced (``text`` itself when it names no webhook).
    """
    return _WEBHOOK_TOKEN_RE.sub(r"\1***", text) if "ebhooks/" in text else text


def has_path_secret(route: Route) -> bool:
    """True when the route's path holds a secret (a webhook token, given as a secret or in a raw path)."""
    return route.has_secret or route.display_path != route.path.split("?", 1)[0]


def shown_text(text: str, route: Route, bearer: Secret | None = None) -> str:
    """``text`` as it may be shown for ``route``: a webhook token of the route's path (raw or
    percent-encoded), and any webhook token quoted in a URL, replaced by ``***``; the bot
    token ``bearer`` holds replaced by ``[REDACTED]`` (see :meth:`Secret.mask`).

    An answer's body may quote the path it was asked for (an error page or a proxy's text),
    or the request's headers (a 401 that echoes ``Authorization``): error messages, bodies
    and parsed data are made of this text.
    """
    if bearer is not None:
        text = bearer.mask(text)
    return route.redact(redact_webhook_tokens(text)) if has_path_secret(route) else text


class Reply:
    """An HTTP answer, its body read in full or up to the size limit.

    Attributes:
        status: The HTTP status code.
        body: The body, content-decoded (gzip, deflate), as bytes; ``b""`` when
            it went over the limit.
        content_type: The ``Content-Type`` header, ``""`` when absent.
        retry_after: The raw ``Retry-After`` header, or None.
        location: The raw ``Location`` header, or None.
        over_limit: The size limit in bytes the decoded body went over (the
            rest of it was not read), or None when it was read in full.
    """

    __slots__ = ("body", "content_type", "location", "over_limit", "retry_after", "status")

    def __init__(
        self,
        status: int,
        body: bytes,
        content_type: str,
        retry_after: str | None,
        *,
        location: str | None = None,
        over_limit: int | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.retry_after = retry_after
        self.location = location
        self.over_limit = over_limit

    def text(self) -> str:
        """The body decoded with the charset of its ``Content-Type`` (UTF-8 by default).

        Undecodable bytes become U+FFFD; an unknown charset falls back to UTF-8; a
        leading byte-order mark is dropped.
        """
        match = _CHARSET_RE.search(self.content_type)
        encoding = match.group(1) if match else "utf-8"
        try:
            text = self.body.decode(encoding, errors="replace")
        except LookupError:
            text = self.body.decode("utf-8", errors="replace")
        return text.lstrip("\ufeff")


class Answer:
    """What one HTTP answer means for its call (see :func:`classify`).

    Exactly one of three cases:

    - a value: ``error`` is None and ``retryable`` False; ``value`` is the
      parsed JSON body, or None for a 204 or an empty 2xx body;
    - a final error: ``error`` is the :class:`ServiceAPIError` to raise;
    - a retryable refusal (a 429, or a status the call's retry policy retries): ``retryable`` is True.

    Attributes:
        status: The HTTP status code.
        text: The decoded body (``""`` for a value).
        data: The body parsed as JSON, or None when it is empty or not JSON.
        value: The call's result (the value case only).
        error: The final error, or None.
        retryable: True for a status the session may retry.
    """

    __slots__ = ("data", "error", "retryable", "status", "text", "value")

    def __init__(
        self,
        status: int,
        *,
        text: str = "",
        data: Any = None,
        value: Any = None,
        error: ServiceAPIError | None = None,
        retryable: bool = False,
    ) -> None:
        self.status = status
        self.text = text
        self.data = data
        self.value = value
        self.error = error
        self.retryable = retryable


def _parse_json(text: str) -> tuple[Any, str | None]:
    """``(value, None)`` for a JSON text, else ``(None, why it cannot be read)``.

    A document nested deeper than the interpreter's recursion limit is refused
    (``RecursionError``), as is anything that is not JSON.
    """
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "is JSON nested too deeply to parse (RecursionError)"
    except ValueError:
        return None, "is not JSON"


def _final(status: int, route: Route, message: str, text: str = "", data: Any = None) -> Answer:
    return Answer(
        status, text=text, data=data, error=ServiceAPIError(status, route.display_path, text, data, message=message)
    )


def classify(
    reply: Reply, route: Route, bearer: Secret | None = None, statuses: frozenset[int] = RETRY_STATUSES
) -> Answer:
    """Classify an HTTP answer: the call's value, a final error, or a retryable refusal.

    A 2xx gives its JSON body as the value (None for a 204 or an empty body);
    a 2xx whose body is not JSON, or is JSON nested too deeply to parse, is a
    final :class:`ServiceAPIError` naming the cause. A 3xx is a final
    :class:`ServiceAPIError` naming the method, the path and the ``Location``
    (redirects are never followed). An answer whose body went over the size
    limit is a final :class:`ServiceAPIError` saying so, whatever its status.
    A 429 or a status of ``statuses`` is retryable; any other status is a final
    :class:`ServiceAPIError` (a 403 of a route that knows the permission the
    service checks names it: ``... (GET /servers/S1/members needs the
    VIEW_MEMBERS permission)``). Every message starts ``"API Error <status>: "``.

    Args:
        reply: The answer.
        route: The call's route (its redacted path goes in errors; a webhook token quoted
            in the body or the ``Location`` is masked, see :func:`shown_text`).
        bearer: The bot token the request carried, or None: masked in the text, the parsed
            data and the ``Location`` of an answer that is not a value.
        statuses: The statuses the call's retry policy retries.

    Returns:
        The :class:`Answer`.
    """
    status = reply.status
    what = f"{route.method} {route.display_path}"
    if reply.over_limit is not None:
        return _final(
            status,
            route,
            f"API Error {status}: the answer to {what} has a body over the {reply.over_limit} byte limit "
            "(max_body_bytes); it was not read further",
        )
    if 200 <= status < 300:
        if status == 204 or not reply.body.strip():
            return Answer(status)
        text = reply.text()
        if has_path_secret(route):  # a webhook execution's answer never needs the token
            text = shown_text(text, route)
        value, problem = _parse_json(text)
        if problem is not None:
            text = shown_text(text, route, bearer)
            message = f"API Error {status}: the response body {problem}: {error_text(text)}"
            return _final(status, route, message, text)
        return Answer(status, text=text, value=value)

    text = shown_text(reply.text(), route, bearer)
    data = _parse_json(text)[0] if text.strip() else None
    if 300 <= status < 400:
        where = "(no Location)" if reply.location is None else f"to {_shown_location(reply.location, route, bearer)!r}"
        message = f"API Error {status}: {what} was redirected {where}; redirects are not followed"
        return _final(status, route, message, text, data)
    if status not in statuses and status != 429:
        refused: str | None = None
        if status == 403 and route.permission is not None:
            refused = (f"API Error 403: {error_text(text, data)} ({route.method} {route.display_path} "
                       f"needs the {_permission_names(route.permission)} permission)")
        return Answer(status, text=text, data=data,
                      error=ServiceAPIError(status, route.display_path, text, data, message=refused))
    return Answer(status, text=text, data=data, retryable=True)


def _permission_names(permission: Permissions) -> str:
    """``VIEW_MEMBERS``, or ``KICK_MEMBERS | BAN_MEMBERS`` for several bits."""
    names = [flag.name for flag in Permissions if flag.name and flag in permission and flag.value.bit_count() == 1]
    return " | ".join(names) if names else str(int(permission))


def _shown_location(location: str, route: Route, bearer: Secret | None) -> str:
    """A ``Location`` header as quoted in an error: tokens masked, cut to 300 characters."""
    shown = shown_text(location, route, bearer)
    return shown if len(shown) <= _LOCATION_SHOWN else shown[:_LOCATION_SHOWN] + "..."


def refusal_error(
    answer: Answer, route: Route, retry_after: float | None, *, retries_left: bool, max_retry_after: float
) -> ServiceAPIError | None:
    """The error a retryable refusal (see :func:`classify`) ends its call with, or None to retry it.

    Args:
        answer: A retryable answer (see :func:`classify`).
        route: The call's route.
        retry_after: Its ``Retry-After``, seconds, or None when absent or unusable.
        retries_left: True while the call may make another attempt.
        max_retry_after: Longest ``Retry-After`` waited out, seconds.

    Returns:
        None while retries are left and ``Retry-After`` (if any) is within
        ``max_retry_after``; else :class:`RateLimitError` for a 429 (it carries
        ``retry_after``) or :class:`ServiceAPIError` for any other status, the
        message saying when the wait asked for was too long.
    """
    status, text, data = answer.status, answer.text, answer.data
    if retries_left and (retry_after is None or retry_after <= max_retry_after):
        return None
    message = None
    if retries_left:
        message = (
            f"API Error {status}: {error_text(text, data)} (Retry-After {retry_after:g} s is "
            f"over the {max_retry_after:g} s this session waits)"
        )
    # RateLimitError means a 429 only; another status asking for too long a wait is an
    # ordinary API error carrying its status.
    if status == 429:
        return RateLimitError(status, route.display_path, text, data, retry_after=retry_after, message=message)
    return ServiceAPIError(status, route.display_path, text, data, message=message)
