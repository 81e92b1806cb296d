"""The old home of :class:`BaseManager` and the argument checks; the base now lives in
:mod:`service_client.models._manager` (the per-server managers of a model use it too), the checks in
:mod:`service_client._validate`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from .._validate import check_cache_flag, check_id, check_name
from ..models._manager import BaseManager
from ..rest.route import Route as route

__all__ = ["BaseManager", "check_cache_flag", "check_id", "check_name", "route"]
