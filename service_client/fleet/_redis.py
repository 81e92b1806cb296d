"""The fleet's Redis connections, JSON codec and the Lua scripts both sides run.

A connection is made from a URL (``redis://``, ``rediss://``, ``unix://``), or
from the settings of a ``redis.Redis`` client (one from redis-py's
``Sentinel(...).master_for(service_name)`` follows each new primary after a
failover), by redis-py with a bound on every reply and connect, and no retries of its own:
the fleet's threads retry themselves, with waits from 0.05 s doubling to
``FLEET_RETRY_CAP_S``. The URL's password never appears in a log line, a repr
or an exception text (:func:`shown_url`). JSON goes through msgspec when it is
installed (a dependency on CPython), else the standard library.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable
from typing import Any

from .. import _defaults
from ..rest.redis_pools import copied_options, own_pool, sentinel_service

__all__ = ["RetryWait", "command_packer", "connect", "dumps", "is_client", "loads", "redis_errors", "shown_url"]


def _codec() -> tuple[Callable[[Any], bytes], Callable[[Any], Any]]:
    try:
        msgspec = importlib.import_module("msgspec")
    except ImportError:
        def encode(value: Any) -> bytes:
            """``value`` as compact JSON bytes (standard library)."""
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

        return encode, json.loads
    encoder = msgspec.json.Encoder()
    decoder = msgspec.json.Decoder()
    return encoder.encode, decoder.decode


#: ``dumps(value) -> bytes`` and ``loads(bytes) -> value``: JSON, msgspec's when installed.
dumps, loads = _codec()


def _import_redis() -> Any:
    try:
        return importlib.import_module("redis")
    except ImportError:
        raise ImportError("the events fleet needs the redis package: pip install 'service_client[redis]'") from None


def redis_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean Redis failed (down, slow, refusing): retried by the fleet's threads."""
    mod = _import_redis()
    return (mod.RedisError, OSError)


def _parse(mod: Any, url: str) -> dict[str, Any] | None:
    """The options redis-py reads from ``url``; None when it refuses it (its error may quote the URL)."""
    try:
        options = dict(mod.connection.parse_url(url))
    except (ValueError, TypeError):
        return None
    if "@" in url and not (options.get("password") or options.get("username")):
        return None  # an '@' redis-py did not read as the end of the credentials: it would connect elsewhere
    return options


def shown_url(options: dict[str, Any]) -> str:
    """The Redis URL of parsed ``options`` with its password (if any) shown as ``***``."""
    auth = ""
    if options.get("password"):
        auth = f"{options.get('username') or ''}:***@"
    elif options.get("username"):
        auth = f"{options['username']}@"
    db = options.get("db", 0)
    if options.get("path"):
        return f"unix://{auth}{options['path']}?db={db}"
    return f"redis://{auth}{options.get('host', 'localhost')}:{options.get('port', 6379)}/{db}"


def is_client(value: object) -> bool:
    """True when ``value`` is a ``redis.Redis`` client (without importing redis when it is a str)."""
    if isinstance(value, str):
        return False
    try:
        return isinstance(value, _import_redis().Redis)
    except ImportError:
        return False


def _bounded(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the fleet's bound on every reply and connect, and no retries."""
    for name in ("socket_timeout", "socket_connect_timeout"):
        given = options.get(name)
        bound = _defaults.FLEET_REDIS_TIMEOUT_S
        options[name] = bound if given is None else min(bound, float(given))
    from_retry = importlib.import_module("redis.retry").Retry
    no_backoff = importlib.import_module("redis.backoff").NoBackoff
    options["retry"] = from_retry(no_backoff(), 0)
    return options


def connect(url: object, *, what: str = "redis_url") -> tuple[Any, str]:
    """A redis-py client for ``url``, and the URL as it may be shown.

    Args:
        url: A Redis URL, or a ``redis.Redis`` client whose settings are copied into a pool
            of the fleet's own (a Sentinel-managed client's pool asks the same sentinels).
        what: The argument's name, for the errors.

    Returns:
        ``(client, shown URL)``; ``sentinel:<service name>`` for a Sentinel-managed
        client. Nothing is sent until the client is used.

    Raises:
        ImportError: The redis package is not installed.
        TypeError: ``url`` is neither a str nor a ``redis.Redis``.
        ValueError: It is not a Redis URL redis-py can read (the text never quotes it).
    """
    if is_client(url):
        mod = _import_redis()
        source = url.connection_pool  # type: ignore[attr-defined]
        copied = _bounded(copied_options(source))
        service = sentinel_service(source)
        shown = shown_url(copied) if service is None else f"sentinel:{service}"
        return mod.Redis(connection_pool=own_pool(mod, source, source.connection_class, copied)), shown
    if not isinstance(url, str):
        raise TypeError(f"{what} must be a Redis URL str or a redis.Redis client, got {type(url).__name__}")
    mod = _import_redis()
    options = _parse(mod, url)
    del url  # it may hold a password: not kept in this frame's locals
    if options is None:
        raise ValueError(f"{what} must be a Redis URL redis-py can read (redis://, rediss:// or unix://); "
                         "percent-encode any '/', '?', '#' or '@' in its password")
    shown = shown_url(options)
    _bounded(options)
    connection_class = options.pop("connection_class", mod.Connection)
    pool = mod.ConnectionPool(connection_class=connection_class, **options)
    return mod.Redis(connection_pool=pool), shown


class RetryWait:
    """The wait before the next attempt while Redis fails: 0.05 s doubling up to a cap.

    Not thread-safe: one per thread. :meth:`wait` returns False at once when
    ``stop`` is set.
    """

    def __init__(self, stop: threading.Event, cap: float = _defaults.FLEET_RETRY_CAP_S) -> None:
        self._stop = stop
        self._cap = cap
        self._next = 0.05
        self.failures = 0

    def wait(self) -> bool:
        """Count a failure and wait; False when stopped meanwhile."""
        self.failures += 1
        delay, self._next = self._next, min(self._cap, self._next * 2)
        return not self._stop.wait(delay)

    def reset(self) -> None:
        """Redis answered: the next failure waits the shortest time again."""
        self.failures = 0
        self._next = 0.05


#: Arguments hiredis packs in one call at most: for a publisher's batch of a thousand events of a
#: few hundred bytes each, packing them in one call took about three times as long per event as
#: 256 at a time (0.34 against 0.13 microseconds, measured), as its C code grows one buffer.
PACK_CHUNK = 256


def command_packer() -> Callable[[tuple[Any, ...]], list[bytes]] | None:
    """A packer of one Redis command (its arguments str, bytes or int) into its protocol bytes,
    by hiredis's ``pack_command`` (in C), for ``Connection.send_packed_command``; None without
    hiredis (then ``Connection.send_command`` packs).

    The packer returns the command as a list of one bytes: its arguments are packed
    ``PACK_CHUNK`` at a time, then joined behind one array header (each piece's own header
    left out).
    """
    try:
        hiredis = importlib.import_module("hiredis")
    except ImportError:
        return None
    pack: Callable[[tuple[Any, ...]], bytes] | None = getattr(hiredis, "pack_command", None)
    if pack is None:
        return None

    def packed(command: tuple[Any, ...], pack: Callable[[tuple[Any, ...]], bytes] = pack) -> list[bytes]:
        """``command`` (its name, then its arguments: str, bytes or int) as the protocol's bytes,
        in a list of one, for ``Connection.send_packed_command``. Raises what hiredis raises
        for an argument of another type (TypeError)."""
        if len(command) <= PACK_CHUNK:
            return [pack(command)]
        pieces: list[bytes | memoryview] = [b"*%d\r\n" % len(command)]
        for start in range(0, len(command), PACK_CHUNK):
            piece = pack(command[start:start + PACK_CHUNK])
            pieces.append(memoryview(piece)[piece.index(b"\r\n") + 2:])  # after its own "*<n>\r\n"
        # One piece: each sendall lets go of the GIL, and a thread that waits for it again while
        # the socket's reader runs may wait the whole switch interval (5 ms).
        return [b"".join(pieces)]

    return packed
