"""The emulator's REST API under ``/api/v2`` and the top-level ASGI application.

Every route of the service's REST API, with its permission checks and socket events, plus
fault injection, the rate limiter and the request journal. Lists are wrapped under a plural key
(``{"servers": [...]}``), creations under a singular one (``{"channel": {...}}``, status 201), a
read of one entity by id is bare; bodiless successes answer 204.

Routes are matched exactly on percent-decoded path segments of the raw path, so an id such
as ``a%2Fb`` stays one segment. A wrong method on a known path answers 405, an unknown path
404, bad JSON or fields 400, all as ``{"error": ...}``; handlers never answer 500 for bad input.

Layout: ``routing.py`` (router, request context, answers, secret redaction), ``rest_base.py``
(dispatch, journal, faults, limiter, access checks), then the route groups, each a layer of
:class:`RestApi`: ``rest_overrides.py``, ``rest_routes.py`` and ``rest_extras.py``.
"""

from __future__ import annotations

from .faults import FaultTable, RateLimiter, RequestLog
from .ops import Operations
from .realtime import Realtime
from .rest_extras import AUDITED_ROUTES, ExtraRoutes
from .routing import (
    API_PREFIX,
    CONTROL_PREFIX,
    HTTPError,
    Router,
    error_response,
    json_response,
    no_content,
    split_path,
)

__all__ = ["API_PREFIX", "AUDITED_ROUTES", "CONTROL_PREFIX", "HTTPError", "RestApi", "Router", "error_response",
           "json_response", "no_content", "split_path"]
from .store import Store


class RestApi(ExtraRoutes):
    """The REST routes under ``/api/v2`` with faults, limiter and journal.

    Not thread-safe on its own: it runs on the emulator's loop.
    """

    def __init__(self, store: Store, ops: Operations, realtime: Realtime, faults: FaultTable,
                 limiter: RateLimiter, log: RequestLog) -> None:
        super().__init__(store, ops, realtime, faults, limiter, log)
        self._routes()
        self._extra_routes()
