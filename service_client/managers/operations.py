"""The old home of ``create_dm``, ``fetch_invite``, ``search_messages`` and the send payload.

Kept for one release: the client operations live in :mod:`service_client.client.operations`,
the ``message:send`` payload in :mod:`service_client.models.outgoing`. This re-export is the
only import from here upward (the layer check lists it as an exception).
"""

from __future__ import annotations

from ..client.operations import create_dm, fetch_invite, invite_code, search_messages
from ..models.outgoing import build_message_payload

__all__ = ["build_message_payload", "create_dm", "fetch_invite", "invite_code", "search_messages"]
