"""HTTP plumbing of the emulator: a router on raw path segments, the request context, JSON answers, secret redaction."""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Generic, TypeVar
from urllib.parse import unquote

from starlette.requests import Request
from starlette.responses import Response

from ..endpoints import Endpoint
from .faults import REDACTED_TOKEN
from .store import BadRequest

#: Path prefix of the REST API.
API_PREFIX = "/api/v2"
#: Path prefix of the control plane.
CONTROL_PREFIX = "/_emulator"

Handler = Callable[["Ctx"], Awaitable[Response]]
#: The handler type a :class:`Router` holds (REST handlers take a :class:`Ctx`; control ones differ).
H = TypeVar("H", bound=Callable[..., Awaitable[Response]])


class HTTPError(Exception):
    """An error answer ``{"error": message}`` with a status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Return a JSON response (compact, UTF-8)."""
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """Return the emulator's error body ``{"error": message}`` with the JSON content type."""
    return json_response({"error": message}, status, headers)


def no_content() -> Response:
    """Return an empty 204."""
    return Response(status_code=204)


_MISSING = object()

#: Journal redaction: a body key whose lower-cased name contains one of these holds a secret.
SECRET_KEY_PARTS = ("token", "secret", "password", "authorization")
#: What a redacted secret reads as in the request journal (the bearer token, secret-named keys).
REDACTED = "[REDACTED]"
#: What a webhook token reads as wherever the emulator shows it (journal path and body, logs).
REDACTED_WEBHOOK_TOKEN = REDACTED_TOKEN


def redact_secrets(value: Any, tokens: list[str] | tuple[str, ...] = (),
                   webhook_tokens: list[str] | tuple[str, ...] = ()) -> Any:
    """A copy of a JSON value with secrets replaced: the value of every key whose name contains
    ``token``, ``secret``, ``password`` or ``authorization`` (any case) and every occurrence of
    one of ``tokens`` (the caller's bearer token) inside a string read ``[REDACTED]``; every
    occurrence of one of ``webhook_tokens`` inside a string reads ``***``, as the webhook token
    does in the journal's path."""
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and any(p in k.lower() for p in SECRET_KEY_PARTS)
                else redact_secrets(v, tokens, webhook_tokens) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_secrets(v, tokens, webhook_tokens) for v in value]
    if isinstance(value, str):
        for token in tokens:
            if token and token in value:
                value = value.replace(token, REDACTED)
        for token in webhook_tokens:
            if token and token in value:
                value = value.replace(token, REDACTED_WEBHOOK_TOKEN)
    return value


def journal_body(raw: bytes, tokens: list[str] | tuple[str, ...] = (),
                 webhook_tokens: list[str] | tuple[str, ...] = ()) -> Any:
    """The request journal's ``body``: the parsed JSON body with secrets redacted
    (:func:`redact_secrets`), or None when the body is empty or not JSON (:func:`parse_json`)."""
    if not raw.strip():
        return None
    try:
        data = parse_json(raw)
    except BadRequest:
        return None
    return redact_secrets(data, tokens, webhook_tokens)


#: Deepest nesting of arrays and objects a JSON body may have (the body itself is level 1).
MAX_JSON_DEPTH = 64


def _not_json(name: str) -> Any:
    raise BadRequest(f"Invalid JSON body: {name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BadRequest(f"Invalid JSON body: {text} is too large a number")
    return value


def parse_json(raw: bytes) -> Any:
    """Parse a JSON request body strictly.

    ``NaN``, ``Infinity`` and numbers too large for a float are refused (Python's ``json`` reads
    them), as is nesting deeper than :data:`MAX_JSON_DEPTH`, so no setting can become NaN and no
    later step can exhaust the stack.

    Raises:
        BadRequest: Not UTF-8 JSON, one of the values above, or nested too deeply.
    """
    try:
        value = json.loads(raw, parse_constant=_not_json, parse_float=_finite_float)
    except RecursionError as exc:
        raise BadRequest(f"Invalid JSON body: nested deeper than {MAX_JSON_DEPTH} levels") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest("Invalid JSON body") from exc
    level: list[tuple[Any, int]] = [(value, 1)]
    while level:
        node, depth = level.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            raise BadRequest(f"Invalid JSON body: nested deeper than {MAX_JSON_DEPTH} levels")
        level.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return value


def json_object(raw: bytes, *, optional: bool = False) -> dict[str, Any]:
    """The JSON object of a request body (:func:`parse_json`); an empty body gives ``{}`` when
    ``optional``.

    Raises:
        BadRequest: Empty (unless ``optional``), not JSON, or not an object.
    """
    if not raw.strip():
        if optional:
            return {}
        raise BadRequest("A JSON object body is required")
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise BadRequest("The JSON body must be an object")
    return data


async def read_body(request: Request, limit: int) -> bytes:
    """Read a request body of at most ``limit`` bytes, as it streams in.

    Raises:
        HTTPError: 413 when the body (announced by ``Content-Length`` or as it arrives) is
            longer: nothing of it is parsed.
        starlette.requests.ClientDisconnect: The client went away first.
    """
    too_long = HTTPError(413, f"The request body is over the limit of {limit} bytes")
    announced = request.headers.get("content-length", "")
    if announced.isdigit() and int(announced) > limit:
        raise too_long
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_long
        chunks.append(chunk)
    return b"".join(chunks)


_msgspec: ModuleType | None
try:  # a dependency on CPython; elsewhere (or uninstalled) the operations' own checks answer alone
    _msgspec = importlib.import_module("msgspec")
except ImportError:
    _msgspec = None


def check_body(data: dict[str, Any], shape: type) -> None:
    """Check a JSON object body against an endpoint's declared body (a TypedDict of the catalog).

    Only the JSON type of each field is checked here (strictly: no bool for an int, no float
    for an int); what the value must be beyond that (a non-blank name, a known status) is the
    operation's to check. Unknown fields are let through. Without msgspec (an interpreter it is
    not built for) nothing is checked here: the operations still refuse a field of the wrong
    type with a 400, in their own words.

    Raises:
        BadRequest: A required field is missing or a field has the wrong type; the message names
            the field (``"Expected `str`, got `int` - at `$.name`"``).
    """
    if _msgspec is None:
        return
    try:
        _msgspec.convert(data, shape, strict=True)
    except _msgspec.ValidationError as exc:
        raise BadRequest(str(exc)) from None


@dataclass
class Ctx:
    """One request as seen by a handler.

    ``endpoint`` is the catalog's entry the request was routed to (None for a context built
    outside the router): its ``permission`` is the one the handler's access checks ask for, and
    its ``body`` the shape :meth:`body` checks.
    """

    request: Request
    params: dict[str, str]
    query: dict[str, list[str]]
    raw_body: bytes
    uid: str = ""
    endpoint: Endpoint | None = None
    _json: Any = field(default=_MISSING)

    def body(self) -> dict[str, Any]:
        """Return the JSON object body (:func:`json_object`), checked against the endpoint's
        declared body (:func:`check_body`).

        Raises:
            BadRequest: An empty body, bad JSON (:func:`parse_json`), a non-object, or a field
                missing or of the wrong type.
        """
        if self._json is _MISSING:
            data = json_object(self.raw_body)
            if self.endpoint is not None and self.endpoint.body is not None:
                check_body(data, self.endpoint.body)
            self._json = data
        return dict(self._json)

    @property
    def permission(self) -> str:
        """The name of the permission the catalog gives this request's endpoint (``"MANAGE_ROLES"``).

        Raises:
            LookupError: The endpoint declares none (a handler that asks for one is wrong).
        """
        permission = None if self.endpoint is None else self.endpoint.permission
        if permission is None or permission.name is None:
            raise LookupError(f"{self.endpoint!r} declares no permission")
        return permission.name

    def body_or_empty(self) -> dict[str, Any]:
        """Like :meth:`body`, but an empty body gives ``{}``."""
        if not self.raw_body.strip():
            return {}
        return self.body()

    def q(self, name: str) -> str | None:
        """Return the first value of a query parameter or None."""
        values = self.query.get(name)
        return values[0] if values else None

    def q_int(self, name: str, default: int, lo: int = 1, hi: int = 100) -> int:
        """Return an integer query parameter clamped to ``lo..hi``. Raises BadRequest."""
        raw = self.q(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw, 10)
        except ValueError as exc:
            raise BadRequest(f"{name} must be a decimal integer") from exc
        return max(lo, min(hi, value))


class Router(Generic[H]):
    """Exact segment router: literal segments beat ``{param}`` ones; knows 404 from 405.

    Generic in the handler type ``H`` it stores and hands back from :meth:`match`.
    """

    def __init__(self) -> None:
        self._routes: list[tuple[str, tuple[str, ...], H]] = []

    def add(self, method: str, template: str, handler: H) -> None:
        """Register ``handler`` for ``method`` and a template like ``/servers/{sid}``."""
        segs = tuple(s for s in template.split("/")[1:])
        self._routes.append((method, segs, handler))
        self._routes.sort(key=lambda r: tuple(1 if s.startswith("{") else 0 for s in r[1]))

    def match(self, method: str, segments: list[str]) -> tuple[H, dict[str, str]] | int:
        """Return ``(handler, params)``, or 405 (known path, wrong method) or 404."""
        path_known = False
        for r_method, r_segs, handler in self._routes:
            if len(r_segs) != len(segments):
                continue
            params: dict[str, str] = {}
            for tpl, seg in zip(r_segs, segments, strict=True):
                if tpl.startswith("{"):
                    if not seg:
                        break
                    params[tpl[1:-1]] = seg
                elif tpl != seg:
                    break
            else:
                if r_method == method:
                    return handler, params
                path_known = True
        return 405 if path_known else 404


def split_path(raw_path: str) -> list[str]:
    """Split a raw (encoded) path into percent-decoded segments (no leading empty one)."""
    return [unquote(s, errors="replace") for s in raw_path.split("/")[1:]]
