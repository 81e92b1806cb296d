"""The old home of :class:`RoleManager`, now :mod:`service_client.models.role` beside :class:`Role`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from ..models.role import RoleManager

__all__ = ["RoleManager"]
