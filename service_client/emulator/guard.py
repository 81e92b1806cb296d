"""The emulator's web surface: which hosts and origins it answers, and the headers of every answer.

The emulator is a server on a developer's machine, and a web page open in the same browser can
send it requests. So:

- only the hosts it was started for are answered (:class:`HostRules`): a name an attacker
  rebinds to ``127.0.0.1`` gets ``421`` on every path, the socket.io upgrade included;
- every answer but the web page itself carries ``X-Content-Type-Options: nosniff`` and a
  content security policy that lets nothing load, run or frame it (:class:`StrictHeaders`);
- a control-plane request that comes with an ``Origin`` other than the emulator's own is
  refused (``403``), and a control-plane write needs ``Content-Type: application/json``
  (``415``), which neither a cross-site form nor a "simple" cross-site ``fetch`` can send
  (:func:`control_refusal`);
- a WebSocket upgrade or a socket.io request that comes with an ``Origin`` other than the
  emulator's own is refused (``403``) by the same rule (:func:`socket_refusal`): a browser
  sends the page's origin with every upgrade, and no CORS rule keeps a page of another site
  from reading a WebSocket's frames. Programs send no ``Origin`` and are not affected.

Starlette's ``TrustedHostMiddleware`` checks host names too, but it answers a plain-text 400
and ignores the port; the emulator answers every refusal as JSON ``{"error": ...}``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, MutableMapping
from typing import Any

from starlette.datastructures import Headers, MutableHeaders

from .routing import error_response

__all__ = ["LOOPBACK_HOSTS", "STRICT_CSP", "HostRules", "JsonErrors", "StrictHeaders", "control_refusal",
           "foreign_origin", "refuse", "socket_refusal"]

#: The names every emulator answers to, with its port.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: The policy of every answer but the web page: nothing may load, run, or frame it.
STRICT_CSP = "default-src 'none'; frame-ancestors 'none'"
#: Methods of the control plane that change something.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _split(netloc: str, default_port: int | None) -> tuple[str, int | None] | None:
    """``(lower-cased host, port)`` of ``host[:port]`` or ``[v6][:port]``; the port is
    ``default_port`` when absent; None when malformed."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            return None
        host, rest = netloc[:end + 1], netloc[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, sep, port_text_ = netloc.partition(":")
        port_text = port_text_ if sep else None
    if not host or any(ch.isspace() or ch in "/\\@?#*" for ch in host):
        return None
    if port_text is None:
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return host, int(port_text)


def _allowed_host(value: Any) -> tuple[str, int | None]:
    """One ``allowed_hosts`` entry as ``(host, port or None for any port)``."""
    if not isinstance(value, str):
        raise TypeError(f"allowed_hosts entries must be strings, got {type(value).__name__}")
    text = value.strip()
    try:
        if ":" in text and not text.startswith("["):
            text = f"[{ipaddress.IPv6Address(text)}]"  # a bare IPv6 address
    except ValueError:
        pass
    parsed = _split(text, None)
    if parsed is None or parsed[0].startswith("*"):
        raise ValueError(f"allowed_hosts entry {value!r} is not a host name, host:port or [IPv6 address]")
    return parsed


class HostRules:
    """The ``Host`` headers and origins the emulator answers.

    Args:
        bind_host: The interface the emulator listens on; it is answered with ``port``.
        port: The emulator's port; None answers the loopback names on any port.
        allowed_hosts: More names: ``"name"`` (any port), ``"name:port"`` (that port only),
            ``"[v6]"`` or a bare IPv6 address.

    Raises:
        TypeError: ``allowed_hosts`` is a string rather than a list, or holds a non-string.
        ValueError: An entry that is not a host (a URL, a wildcard, a bad port, blank).
    """

    def __init__(self, bind_host: str = "127.0.0.1", port: int | None = None,
                 allowed_hosts: Iterable[str] = ()) -> None:
        if isinstance(allowed_hosts, (str, bytes)):
            raise TypeError("allowed_hosts must be a list of host names, not a string")
        extra = [_allowed_host(entry) for entry in allowed_hosts]
        own = {_allowed_host(name)[0] for name in (*LOOPBACK_HOSTS, bind_host)}
        self._rules: set[tuple[str, int | None]] = {(name, port) for name in own} | set(extra)

    def allows(self, netloc: str, default_port: int = 80) -> bool:
        """Whether ``netloc`` (a ``Host`` header value) names this emulator."""
        parsed = _split(netloc, default_port)
        if parsed is None:
            return False
        host, port = parsed
        return (host, port) in self._rules or (host, None) in self._rules

    def allows_origin(self, origin: str) -> bool:
        """Whether an ``Origin`` header value is one of the emulator's own (http or https)."""
        scheme, sep, netloc = origin.partition("://")
        default = _DEFAULT_PORTS.get(scheme.lower())
        if not sep or default is None or "/" in netloc:
            return False
        return self.allows(netloc, default)


async def refuse(scope: MutableMapping[str, Any], receive: Any, send: Any, status: int, message: str,
                 close_code: int = 1008) -> None:
    """Answer an HTTP request or a WebSocket upgrade with ``status`` and ``{"error": message}``
    (with the strict headers). Without the server's WebSocket denial extension the upgrade is
    closed with ``close_code`` instead."""
    response = error_response(status, message, {"X-Content-Type-Options": "nosniff",
                                                 "Content-Security-Policy": STRICT_CSP})
    if scope["type"] != "websocket":
        await response(scope, receive, send)
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": response.raw_headers})
        await send({"type": "websocket.http.response.body", "body": response.body})
        _denial_sent(send)
    else:
        await send({"type": "websocket.close", "code": close_code})


def _denial_sent(send: Any) -> None:
    """Tell uvicorn's ``websockets`` (sans-I/O) protocol that a denial response ended the handshake.

    That protocol writes the denial and closes the connection but leaves its
    ``handshake_complete`` flag unset, so when the application returns it logs "ASGI callable
    returned without completing handshake." at ERROR for every refused upgrade (its ``wsproto``
    protocol sets the flag). The flag is set here once the answer is on its way; a protocol
    without these attributes is left alone.
    """
    protocol: Any = getattr(send, "__self__", None)
    answered = getattr(protocol, "initial_response", None) is not None
    if answered and getattr(protocol, "handshake_complete", True) is False:
        protocol.handshake_complete = True


def foreign_origin(scope: MutableMapping[str, Any], rules: HostRules) -> str | None:
    """The request's ``Origin`` when it is not one of the emulator's own (``null`` included), else
    None (no ``Origin``, as programs send, or the emulator's own page)."""
    origin = Headers(scope=scope).get("origin")
    if origin is not None and not rules.allows_origin(origin):
        return origin
    return None


def control_refusal(scope: MutableMapping[str, Any], rules: HostRules) -> tuple[int, str] | None:
    """Why a control-plane request is refused, as ``(status, message)``, or None.

    403 for an ``Origin`` that is not the emulator's own (``null`` included): a page of another
    site. 415 for a write (POST, PUT, PATCH, DELETE) whose ``Content-Type`` is not
    ``application/json``: what a cross-site form or "simple" request sends.
    """
    if foreign_origin(scope, rules) is not None:
        return 403, "The control plane answers only the emulator's own origin"
    if scope["method"].upper() in WRITE_METHODS:
        headers = Headers(scope=scope)
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            return 415, "A control-plane write needs Content-Type: application/json"
    return None


def socket_refusal(scope: MutableMapping[str, Any], rules: HostRules) -> tuple[int, str] | None:
    """Why a WebSocket upgrade or a socket.io request is refused, as ``(status, message)``, or None.

    403 for an ``Origin`` that is not the emulator's own (``null`` included): a page of another
    site, which a browser lets open a WebSocket to any host and read its frames. No ``Origin``
    (a bot, ``websocket-client``, node) and the emulator's own page are accepted.
    """
    if foreign_origin(scope, rules) is not None:
        return 403, "The socket server answers only the emulator's own origin"
    return None


class _SendWrapper:
    """Base of the ASGI ``send`` wrappers: ``Wrapper(send).send`` replaces ``send`` and, like the
    server's own, its ``__self__`` has the connection's ``transport`` (the emulator aborts
    connections through it)."""

    __slots__ = ("_send", "transport")

    def __init__(self, send: Any) -> None:
        self._send = send
        self.transport: Any = getattr(getattr(send, "__self__", None), "transport", None)


class StrictHeaders(_SendWrapper):
    """Wraps an HTTP connection's ASGI ``send``: every answer gets ``nosniff``, and a content
    security policy that allows nothing unless it sets its own (the web page does)."""

    __slots__ = ()

    async def send(self, message: MutableMapping[str, Any]) -> None:
        """Add the headers to the response start, then pass every message on."""
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            headers["X-Content-Type-Options"] = "nosniff"
            if "content-security-policy" not in headers:
                headers["Content-Security-Policy"] = STRICT_CSP
        await self._send(message)


class JsonErrors(_SendWrapper):
    """Wraps the ASGI ``send`` of socket.io's HTTP side: its 4xx and 5xx answers (plain text
    from python-engineio, such as ``"Invalid transport"``) go out as ``{"error": text}`` with the
    JSON content type, as every other error of the emulator."""

    __slots__ = ("_start", "_body")

    def __init__(self, send: Any) -> None:
        super().__init__(send)
        self._start: MutableMapping[str, Any] | None = None
        self._body = b""

    async def send(self, message: MutableMapping[str, Any]) -> None:
        """Hold an error answer until its body is complete, then send it as JSON."""
        if message["type"] == "http.response.start" and message["status"] >= 400:
            self._start = message
            return
        if self._start is None or message["type"] != "http.response.body":
            await self._send(message)
            return
        self._body += message.get("body", b"")
        if message.get("more_body", False):
            return
        text = self._body.decode("utf-8", errors="replace")
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and "error" in decoded:  # already the emulator's form
            await self._send(self._start)
            await self._send({"type": "http.response.body", "body": self._body})
            return
        body = json.dumps({"error": decoded if isinstance(decoded, str) else text}).encode("utf-8")
        headers = MutableHeaders(scope=self._start)
        headers["Content-Type"] = "application/json"
        headers["Content-Length"] = str(len(body))
        await self._send(self._start)
        await self._send({"type": "http.response.body", "body": body})
