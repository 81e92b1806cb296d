"""The emulator's REST API under ``/api/v2`` and the top-level ASGI application.

Every route of the service's REST API, with its permission checks and socket events, plus
fault injection, the rate limiter and the request journal. Lists are wrapped under a plural key
(``{"servers": [...]}``), creations under a singular one (``{"channel": {...}}``, status 201), a
read of one entity by id is bare; bodiless successes answer 204.

Routes are matched exactly on percent-decoded path segments of the raw path, so an id such
as ``a%2Fb`` stays one segment. A wrong method on a known path answers 405, an unknown path
404, bad JSON or fields 400, all as ``{"error": ...}``; handlers never answer 500 for bad input.

Layout: ``routing.py`` (router, request context, answers, secret redaction), ``rest_api.py``
(:class:`RestApi`: dispatch, journal, faults, limiter), ``access.py`` (membership, visibility
and the catalog's permissions), ``rest_audit.py`` (the audit trail), then one route group per
entity, each given the parts it uses: ``rest_users.py``, ``rest_servers.py``,
``rest_members.py``, ``rest_channels.py``, ``rest_messages.py``, ``rest_invites.py`` and
``rest_webhooks.py``.
"""

from __future__ import annotations

from .rest_api import RestApi
from .rest_audit import AUDITED_ROUTES
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
