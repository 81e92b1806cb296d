"""The old home of :class:`InviteManager`, now :mod:`service_client.models.invite` beside :class:`Invite`.

Kept for one release; import from the new place.
"""

from __future__ import annotations

from ..models.invite import InviteManager

__all__ = ["InviteManager"]
