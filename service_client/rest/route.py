"""Routes: an HTTP method plus a path, with encoded segments and a bucket key.

Pure policy: no I/O, no ``requests`` import. Every variable path segment is
percent-encoded with no safe characters (an id such as ``../x`` stays one
segment), the query is form-encoded and never a bare ``?``, the bucket key is the
method plus the first two path segments, and webhook tokens are redacted (as
``***``) from everything shown to people.

Example::

    >>> route = Route("GET", "/servers/{server_id}/members/{user_id}", server_id="S1", user_id="../x")
    >>> route.path, route.bucket
    ('/servers/S1/members/..%2Fx', 'GET:servers/S1')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, overload
from urllib.parse import quote, unquote, urlencode

from .._secret import REDACTED_WEBHOOK_TOKEN, Secret
from ..endpoints import Endpoint
from ..permissions import Permissions

__all__ = [
    "Route",
    "bucket_key",
    "encode_query",
    "encode_segment",
    "redact_path",
]

#: Characters a raw ``api_call`` path keeps as they are (RFC 3986 reserved and
#: unreserved characters, plus ``%`` so existing escapes survive); anything else
#: (spaces, non-ASCII, control characters) is percent-encoded.
_RAW_PATH_SAFE = "/:@!$&'()*+,;=?%-._~[]"

#: An HTTP method is an RFC 9110 token.
_METHOD_RE = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

#: A ``{name}`` placeholder of a path template.
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: Shown instead of a webhook token, in paths, reprs, errors and logs.
REDACTED = REDACTED_WEBHOOK_TOKEN


def encode_segment(value: str) -> str:
    """Percent-encode one variable path segment (an id, an invite code, a token).

    Every variable segment is encoded with no safe characters, so
    ``/``, ``?``, ``#``, ``%``, spaces and non-ASCII text (as UTF-8) cannot change
    the route. The dot segments ``.`` and ``..`` are encoded as ``%2E`` too, so no
    URL normaliser can resolve them.

    Args:
        value: The raw segment value.

    Returns:
        The encoded segment, ASCII only (``"../x"`` gives ``"..%2Fx"``,
        ``"a b"`` gives ``"a%20b"``).

    Raises:
        TypeError: ``value`` is not a ``str``.
        ValueError: ``value`` is empty.
    """
    if not isinstance(value, str):
        raise TypeError(f"path segment must be a str, not {type(value).__name__}")
    if not value:
        raise ValueError("path segment must not be empty")
    encoded = quote(value, safe="")
    if encoded in (".", ".."):
        encoded = encoded.replace(".", "%2E")
    return encoded


def _split_path(path: str) -> str:
    """The path without its query and fragment."""
    for mark in ("?", "#"):
        cut = path.find(mark)
        if cut >= 0:
            path = path[:cut]
    return path


def bucket_key(method: str, path: str) -> str:
    """The rate-limit bucket of a request.

    Args:
        method: The HTTP method, any letter case.
        path: The encoded request path, starting with ``/``; a query or fragment
            is ignored.

    Returns:
        ``"METHOD:"`` plus the first two non-empty path segments joined by ``/``
        (one segment when the path has only one): ``GET /servers/S1/members/U1``
        gives ``"GET:servers/S1"``, ``GET /chat/C1?limit=50`` gives
        ``"GET:chat/C1"``, ``POST /webhooks/W1/<token>`` gives
        ``"POST:webhooks/W1"`` (the token never enters the key).

    Raises:
        TypeError: ``method`` or ``path`` is not a ``str``.
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, not {type(method).__name__}")
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, not {type(path).__name__}")
    segments = [seg for seg in _split_path(path).split("/") if seg]
    return f"{method.upper()}:{'/'.join(segments[:2])}"


def redact_path(path: str) -> str:
    """The path as shown to people: no query, webhook tokens replaced by ``***``.

    A webhook token is a secret: ``/webhooks/{id}/{token}`` (and anything below
    it) shows as ``/webhooks/{id}/***``.

    Args:
        path: A request path, encoded or not, with or without a query.

    Returns:
        The path without query or fragment, with the webhook token redacted.

    Raises:
        TypeError: ``path`` is not a ``str``.
    """
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, not {type(path).__name__}")
    path = _split_path(path)
    parts = path.split("/")
    non_empty = [i for i, seg in enumerate(parts) if seg]
    if len(non_empty) >= 3 and parts[non_empty[0]].lower() == "webhooks":
        parts[non_empty[2]] = REDACTED
    return "/".join(parts)


def _query_value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TypeError(f"query parameter {name!r} must be a str, int, float or bool, not {type(value).__name__}")


def encode_query(params: Mapping[str, Any] | None) -> str:
    """Form-encode query parameters (a space becomes ``+``; ``None`` values are left out).

    Args:
        params: Names to values. ``None`` values are omitted; booleans are
            written ``true``/``false``; numbers in decimal; a list or tuple
            repeats the name once per item.

    Returns:
        The query without the leading ``?`` (a space becomes ``+``); ``""`` when
        nothing is left, so a bare ``?`` is never sent.

    Raises:
        TypeError: ``params`` is not a mapping, a name is not a ``str``, or a
            value has another type.
    """
    if params is None:
        return ""
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping, not {type(params).__name__}")
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError(f"query parameter names must be str, not {type(name).__name__}")
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            pairs.extend((name, _query_value(name, item)) for item in value if item is not None)
        else:
            pairs.append((name, _query_value(name, value)))
    return urlencode(pairs)


def _check_method(method: str) -> str:
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, not {type(method).__name__}")
    if not _METHOD_RE.match(method):
        raise ValueError(f"method must be an HTTP method name such as 'GET', got {method!r}")
    return method.upper()


class Route:
    """An HTTP method and an encoded path, with its rate-limit bucket.

    Immutable and thread-safe. Build one from an endpoint of the service's
    catalog (:mod:`service_client.endpoints`) whose ``{name}`` placeholders are
    filled with percent-encoded values, ``Route(endpoints.GET_MEMBER,
    server_id="S1", user_id="U1")``; from a method and a template of the same
    form; or from a raw ``api_call`` path with :meth:`from_path`.

    Attributes:
        method: The upper-case HTTP method.
        path: The encoded path, starting with ``/``, possibly with a query.
        bucket: The bucket key, e.g. ``"GET:servers/S1"``.
        display_path: The path as shown in errors and logs: no query, webhook
            token shown as ``***``.
        permission: The permission the service checks for this request, from the
            catalog endpoint the route was built from (named in a 403's error
            text), or None (none, or a route not built from the catalog).
    """

    __slots__ = ("_wire", "bucket", "display_path", "method", "path", "permission")

    method: str
    path: str
    bucket: str
    display_path: str
    permission: Permissions | None
    _wire: Secret | None

    @overload
    def __init__(self, endpoint: Endpoint, /, **params: str | Secret) -> None:
        """The route of a catalog endpoint: its method, its path filled with ``params``."""

    @overload
    def __init__(self, method: str, template: str, /, **params: str | Secret) -> None:
        """The route of a method and a path template filled with ``params``."""

    def __init__(self, method: str | Endpoint, template: str | None = None, /, **params: str | Secret) -> None:
        """Fill a path template: an endpoint's, or one given with its method.

        Args:
            method: An :class:`~service_client.endpoints.Endpoint` of the
                catalog (its method and path template are used; ``template``
                is then left out), or the HTTP method, any letter case (stored
                upper-case).
            template: With a method: a path starting with ``/`` whose variable
                segments are ``{name}`` placeholders, e.g.
                ``"/servers/{server_id}/members/{user_id}"``.
            **params: One value per placeholder, each encoded with
                :func:`encode_segment`: a ``str``, or a :class:`Secret` (a
                webhook token) that is shown as ``***`` in :attr:`path`,
                :attr:`display_path`, :attr:`bucket` and the repr, and sent
                only through :meth:`wire_path`.

        Raises:
            TypeError: ``method`` is neither an endpoint nor a ``str``,
                ``template`` is not a ``str`` (or is given with an endpoint),
                or a value is not a ``str`` or a :class:`Secret` (the message
                names the parameter).
            ValueError: The method is not an HTTP token, the template does not
                start with ``/`` or has stray braces, a placeholder has no
                value, a value is unused, or a value is empty.
        """
        permission = None
        if isinstance(method, Endpoint):
            if template is not None:
                raise TypeError(f"Route({method.name}, ...) takes no template: the endpoint has its path")
            template = method.path
            permission = method.permission
            method = method.method
        method = _check_method(method)
        if not isinstance(template, str):
            raise TypeError(f"template must be a str, not {type(template).__name__}")
        if not template.startswith("/"):
            raise ValueError(f"template must start with '/', got {template!r}")
        used: set[str] = set()
        secret = False

        def fill(match: re.Match[str]) -> str:
            """The percent-encoded value of one template placeholder (``***`` for a secret)."""
            nonlocal secret
            name = match.group(1)
            if name not in params:
                raise ValueError(f"template {template!r} needs a value for {name!r}")
            value = params[name]
            if isinstance(value, Secret):
                if not value.get():
                    raise ValueError(f"{name} must not be empty")
                used.add(name)
                secret = True
                return REDACTED
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, not {type(value).__name__}")
            if not value:
                raise ValueError(f"{name} must not be empty")
            used.add(name)
            return encode_segment(value)

        def fill_secret(match: re.Match[str]) -> str:
            """The percent-encoded value of one placeholder, secrets included."""
            value = params[match.group(1)]
            return encode_segment(value.get() or "" if isinstance(value, Secret) else value)

        path = _PLACEHOLDER_RE.sub(fill, template)
        # Only the template can hold stray braces: filled values are encoded.
        if "{" in _PLACEHOLDER_RE.sub("", template) or "}" in _PLACEHOLDER_RE.sub("", template):
            raise ValueError(f"template {template!r} has a malformed placeholder")
        unused = set(params) - used
        if unused:
            raise ValueError(f"template {template!r} has no placeholder for {sorted(unused)}")
        self._set(method, path, Secret(_PLACEHOLDER_RE.sub(fill_secret, template), shown=REDACTED) if secret else None,
                  permission)

    def _set(self, method: str, path: str, wire: Secret | None = None, permission: Permissions | None = None) -> None:
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "permission", permission)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "bucket", bucket_key(method, path))
        object.__setattr__(self, "display_path", redact_path(path))
        object.__setattr__(self, "_wire", wire)

    @property
    def has_secret(self) -> bool:
        """True when a segment is a secret (shown as ``***``; sent through :meth:`wire_path`)."""
        return self._wire is not None

    def wire_path(self) -> str:
        """The path actually sent: :attr:`path`, with secret segments filled in.

        Only the REST session calls this, when it builds the request; the result
        is never logged or shown.
        """
        wire = self._wire
        value = wire.get() if wire is not None else None
        return value if value is not None else self.path

    def redact(self, text: str) -> str:
        """``text`` with every secret segment of this route (raw or encoded) replaced by ``***``."""
        wire = self._wire
        real = wire.get() if wire is not None else None
        if real is None:
            return text
        shown = self.path.split("?", 1)[0].split("/")
        for index, segment in enumerate(real.split("?", 1)[0].split("/")):
            if index < len(shown) and shown[index] == REDACTED and segment:
                for form in {segment, unquote(segment)}:
                    if form:
                        text = text.replace(form, REDACTED)
        return text

    @classmethod
    def from_path(cls, method: str, path: str) -> Route:
        """A route for a raw ``api_call`` path, used as given.

        Characters outside RFC 3986 (spaces, non-ASCII, control characters) are
        percent-encoded; existing escapes and reserved characters are kept.

        Args:
            method: The HTTP method, any letter case.
            path: The path below the base URL, starting with ``/``; may carry a
                query.

        Returns:
            The route.

        Raises:
            TypeError: ``method`` or ``path`` is not a ``str``.
            ValueError: ``path`` does not start with ``/``, or the method is not
                an HTTP token.
        """
        method = _check_method(method)
        if not isinstance(path, str):
            raise TypeError(f"path must be a str, not {type(path).__name__}")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {redact_path(path)!r}")
        route = cls.__new__(cls)
        route._set(method, quote(path, safe=_RAW_PATH_SAFE))
        return route

    def with_query(self, params: Mapping[str, Any] | None) -> Route:
        """This route with form-encoded query parameters appended.

        Args:
            params: As for :func:`encode_query`; ``None`` values are omitted.

        Returns:
            A new route (or this one when no parameter is left); the bucket is
            unchanged.

        Raises:
            TypeError: As for :func:`encode_query`.
        """
        query = encode_query(params)
        if not query:
            return self
        sep = "&" if "?" in self.path else "?"
        route = Route.__new__(Route)
        wire = self._wire
        real = wire.get() if wire is not None else None
        route._set(self.method, f"{self.path}{sep}{query}",
                   Secret(f"{real}{sep}{query}", shown=REDACTED) if real is not None else None, self.permission)
        return route

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Route is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Route):
            return NotImplemented
        return (self.method, self.path) == (other.method, other.path)

    def __hash__(self) -> int:
        return hash((self.method, self.path))

    def __repr__(self) -> str:
        return f"Route({self.method!r}, {self.display_path!r}, bucket={self.bucket!r})"
