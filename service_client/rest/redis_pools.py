"""A pool of one's own for a redis-py client given by the user, Redis Sentinel included.

The library's Redis users (:class:`~service_client.rest.RedisBucketStore`, the
events fleet) never send through a client they were given: each copies its
connection settings into a pool of its own, with its own timeouts and no
retries. A client from redis-py's ``Sentinel.master_for(service_name)`` keeps
following the primary its sentinels name: its copy is a
``SentinelConnectionPool`` of the same sentinels and service, so after a
failover the next connection goes to the new primary.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["POOL_OWN_KEYS", "copied_options", "own_pool", "sentinel_service"]

#: Connection settings a pool adds by itself; a pool of one's own makes its own.
POOL_OWN_KEYS = ("maint_notifications", "oss_cluster_maint", "orig_", "himport_registry", "event_dispatcher",
                 "connection_pool")


def _sentinel_pool_class() -> Any:
    try:
        return importlib.import_module("redis.sentinel").SentinelConnectionPool
    except (ImportError, AttributeError):
        return None


def sentinel_service(pool: Any) -> str | None:
    """The Sentinel service name of a redis-py pool, or None when it is not Sentinel-managed."""
    cls = _sentinel_pool_class()
    if cls is not None and isinstance(pool, cls):
        return str(pool.service_name)
    return None


def copied_options(pool: Any) -> dict[str, Any]:
    """The connection settings of a redis-py pool, without those a pool adds by itself."""
    return {k: v for k, v in pool.connection_kwargs.items() if not k.startswith(POOL_OWN_KEYS)}


def own_pool(mod: Any, source: Any | None, connection_class: type, options: dict[str, Any]) -> Any:
    """A new pool with ``options``: Sentinel-managed like ``source`` when it is, else a plain one.

    Args:
        mod: The redis module.
        source: The pool of the client given, or None (from a URL).
        connection_class: The connection class (a Sentinel-managed one for a Sentinel pool).
        options: The connection settings (timeouts, retry, credentials...).

    Returns:
        A ``redis.ConnectionPool`` or ``redis.sentinel.SentinelConnectionPool``.
    """
    if source is not None and sentinel_service(source) is not None:
        cls = _sentinel_pool_class()
        assert cls is not None
        return cls(source.service_name, source.sentinel_manager, connection_class=connection_class, **options)
    return mod.ConnectionPool(connection_class=connection_class, **options)
