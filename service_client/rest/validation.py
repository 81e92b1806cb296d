"""Checks of the arguments of a REST call, made at the call site before anything is queued.

Each check raises ``TypeError`` or ``ValueError`` with a message naming the
argument, and never quotes a token. :func:`validate_api_call_args` runs them all
for ``Client.api_call``; :class:`~service_client.rest.session.RestSession` runs
them in ``submit()``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from .route import Route

__all__ = [
    "check_body",
    "check_count",
    "check_seconds",
    "check_headers",
    "check_max_retries",
    "check_timeout_ms",
    "check_token",
    "request_body",
    "validate_api_call_args",
]

#: A header name: an RFC 9110 token.
_HEADER_NAME_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
#: A header value HTTP allows (an RFC 9110 field-value): visible ASCII and the
#: printable Latin-1 characters (U+00A0 to U+00FF), with spaces and tabs inside but
#: not at either end (nor U+00A0, which requests reads as whitespace there), and no
#: control character (U+0000 to U+001F but the tab, U+007F to U+009F). Nothing outside
#: Latin-1 can be sent.
_HEADER_VALUE_RE = re.compile(r"(?:[\x21-\x7e\xa1-\xff](?:[\t\x20-\x7e\xa0-\xff]*[\x21-\x7e\xa1-\xff])?)?")
#: A token: visible ASCII only.
_TOKEN_RE = re.compile(r"^[\x21-\x7e]+$")


def check_timeout_ms(timeout_ms: Any) -> float:
    """A per-attempt timeout in milliseconds, as a float.

    Raises:
        TypeError: ``timeout_ms`` is not an int or float (``bool`` included).
        ValueError: It is not finite or not > 0.
    """
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)):
        raise TypeError(f"timeout_ms must be an int (milliseconds), not {type(timeout_ms).__name__}")
    if not math.isfinite(timeout_ms) or timeout_ms <= 0:
        raise ValueError(f"timeout_ms must be a positive number of milliseconds, got {timeout_ms!r}")
    return float(timeout_ms)


def check_max_retries(max_retries: Any) -> int:
    """A count of retries after the first attempt.

    Raises:
        TypeError: ``max_retries`` is not an int (``bool`` included).
        ValueError: It is < 0.
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(f"max_retries must be an int, not {type(max_retries).__name__}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be >= 0, got {max_retries}")
    return max_retries


def check_body(body: Any) -> bytes | None:
    """An already serialised JSON body as bytes (a ``str`` encoded as UTF-8), or None.

    Raises:
        TypeError: ``body`` is neither None, ``str`` nor bytes-like (the body
            is never serialised for the caller).
    """
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


def request_body(body: Any, json_value: Any) -> bytes | None:
    """The bytes sent as a call's body: ``body`` as given, or ``json_value`` serialised here.

    Args:
        body: An already serialised JSON body (``str`` sent as UTF-8, or bytes), or None.
        json_value: For the library's own methods: a value serialised to compact
            JSON (UTF-8, non-ASCII kept, ``None`` values inside it kept as given),
            or None for no body.

    Returns:
        The body bytes, or None for no body.

    Raises:
        TypeError: ``body`` is not ``str``/bytes, or ``json_value`` cannot be serialised.
        ValueError: ``body`` and ``json_value`` are both given.
    """
    data = check_body(body)
    if json_value is not None:
        if data is not None:
            raise ValueError("pass either body or json, not both")
        try:
            data = json.dumps(json_value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise TypeError(f"json: value is not JSON serialisable ({exc})") from None
    return data


def check_seconds(arg: str, value: Any) -> float:
    """A finite, non-negative number of seconds, as a float.

    Args:
        arg: The argument's name, for the messages.
        value: The value given.

    Raises:
        TypeError: ``value`` is not an int or float (``bool`` included).
        ValueError: It is negative or not finite.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{arg} must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{arg} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


def check_headers(headers: Any) -> dict[str, str]:
    """Caller headers, validated, without any ``Authorization`` variant (any letter case).

    The session sets ``Authorization`` itself from its token; a caller's one is
    dropped so that no call can go out with another identity or a stale token.

    Returns:
        A new dict of the headers kept; ``{}`` for None.

    Raises:
        TypeError: ``headers`` is not a mapping, or a name or value is not a ``str``.
        ValueError: A name is not an HTTP token, or a value is not one HTTP
            allows: it holds a control character (U+0000 to U+001F but the
            tab, such as CR, LF, NUL or a vertical tab; U+007F to U+009F) or a
            character outside Latin-1 (U+0100 and above), or starts or ends
            with whitespace. The message names the header, never its value.
    """
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
        if not _HEADER_VALUE_RE.fullmatch(value):
            raise ValueError(
                f"headers: the value of {name!r} is not a valid HTTP header value (control characters, "
                "characters outside Latin-1, and whitespace at either end are not allowed)"
            )
        if name.lower() == "authorization":
            continue
        checked[name] = value
    return checked


def check_count(arg: str, value: Any, *, minimum: int) -> int:
    """A whole number (a count, a size in bytes) of at least ``minimum``.

    Args:
        arg: The argument's name, for the messages.
        value: The value given.
        minimum: The smallest value allowed.

    Raises:
        TypeError: ``value`` is not an int (``bool`` included).
        ValueError: It is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{arg} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{arg} must be >= {minimum}, got {value}")
    return value


def check_token(value: Any) -> str:
    """A bot token fit for an ``Authorization`` header; the messages never quote it.

    Raises:
        TypeError: ``value`` is not a ``str``.
        ValueError: It is empty or holds characters other than visible ASCII.
    """
    if not isinstance(value, str):
        raise TypeError(f"token must be a str or None, not {type(value).__name__}")
    if not _TOKEN_RE.match(value):
        raise ValueError("token must be a non-empty string of visible ASCII characters")
    return value


def validate_api_call_args(
    path: str,
    *,
    method: str = "GET",
    body: str | bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_ms: int | None = None,
    max_retries: int | None = None,
) -> Route:
    """Check the arguments of ``Client.api_call`` before any I/O, and build its route.

    Args:
        path: The path below the base URL, starting with ``/``; may carry a query.
        method: The HTTP method, any letter case.
        body: An already serialised JSON body, ``str`` or ``bytes``, or None.
        headers: Extra headers, ``str`` to ``str``.
        timeout_ms: Per-attempt timeout, milliseconds, > 0; None for the session's.
        max_retries: Retries after the first attempt, >= 0, or None for the client's
            retry policy.

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
    check_body(body)
    check_headers(headers)
    if timeout_ms is not None:
        check_timeout_ms(timeout_ms)
    if max_retries is not None:
        check_max_retries(max_retries)
    return route
