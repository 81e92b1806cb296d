"""The old home of :class:`~service_client.Permissions`; it now lives in :mod:`service_client.permissions`.

Kept for one release so that ``from service_client.models.permissions import Permissions``
keeps working.
"""

from __future__ import annotations

from ..permissions import ALL, DEFAULT, Permissions, parse_permissions

__all__ = ["ALL", "DEFAULT", "Permissions", "parse_permissions"]
