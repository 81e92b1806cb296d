"""Checks of the URLs a :class:`~service_client.Client` is given: shape, and where the token goes."""

from __future__ import annotations

import sys
import warnings
from typing import Any
from urllib.parse import urlsplit

from .. import _defaults
from ..errors import InsecureHostWarning

__all__ = ["check_hosts", "check_pair", "validate_url"]


def check_hosts(base_url: str, socket_url: str) -> None:
    """Warn (never block) about where the token goes.

    One warning when a URL's host is neither the service's two hosts nor
    localhost/127.0.0.1, and a separate one when a URL is not https (or wss)
    outside localhost/127.0.0.1.
    """
    foreign: list[str] = []
    plain: list[str] = []
    for label, url in (("base_url", base_url), ("socket_url", socket_url)):
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        local = host in _defaults.LOCAL_HOSTS
        if host not in _defaults.SERVICE_HOSTS and not local:
            foreign.append(f"{label}={host}")
        if parts.scheme not in ("https", "wss") and not local:
            plain.append(f"{label}={parts.scheme}://{host}")
    if foreign:
        warn_always(
            "the bot token will be sent to a host that is not the service's: " + ", ".join(foreign)
        )
    if plain:
        warn_always(
            "the bot token will travel unencrypted (not https): " + ", ".join(plain)
        )


def check_pair(base_url: str | None, socket_url: str | None, resolved_base: str, resolved_socket: str) -> None:
    """Refuse half a configuration that would send the token to the real service.

    Refused: exactly one of ``base_url`` / ``socket_url`` is given, it points at a
    host other than the service's (the emulator on 127.0.0.1, a staging host...), and
    the other one falls back to the real service's default. The client would then log
    in to the real service with a token meant for the other host.

    Args:
        base_url: ``base_url`` as given to the constructor (None when not given).
        socket_url: ``socket_url`` as given (None when not given).
        resolved_base: The REST base the client would use.
        resolved_socket: The socket URL the client would use.

    Raises:
        ValueError: The case above; the message says to pass both.
    """
    if (base_url is None) == (socket_url is None):
        return
    given_name, given, other_name, other, default = (
        ("base_url", resolved_base, "socket_url", resolved_socket, _defaults.DEFAULT_SOCKET_URL)
        if base_url is not None
        else ("socket_url", resolved_socket, "base_url", resolved_base, _defaults.DEFAULT_BASE_URL)
    )
    host = (urlsplit(given).hostname or "").lower()
    if host in _defaults.SERVICE_HOSTS or other.rstrip("/") != default.rstrip("/"):
        return
    raise ValueError(
        f"{given_name} points at {host} but {other_name} was not given, so it would be the real "
        f"service's {default} and the bot token would be sent there: pass both base_url and "
        f"socket_url (for the emulator: base_url=emu.base_url, socket_url=emu.socket_url)"
    )


def warn_always(message: str, category: type[Warning] = InsecureHostWarning) -> None:
    """Issue a warning of ``category`` (default :class:`InsecureHostWarning`) attributed to the
    first caller outside this package.

    Shown at every call: the "default" warning filter never deduplicates it.
    """
    # warn_explicit with a fresh registry: shown at every construction, never
    # deduplicated by the "default" filter action.
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith("service_client"):
        frame = frame.f_back
    warnings.warn_explicit(
        category(message),
        category,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__", "__main__"),
        registry={},
    )


def validate_url(name: str, url: Any) -> str:
    """``url`` when it is an absolute http(s) or ws(s) URL.

    Args:
        name: The argument's name, for the error message.
        url: The value given.

    Returns:
        ``url`` unchanged.

    Raises:
        TypeError: ``url`` is not a str.
        ValueError: ``url`` is not an absolute http, https, ws or wss URL.
    """
    if not isinstance(url, str):
        raise TypeError(f"{name} must be a str, got {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
        raise ValueError(f"{name} must be an absolute http(s) or ws(s) URL, got {url!r}")
    return url
