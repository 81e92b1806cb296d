"""The old home of the socket event parsers, now :mod:`service_client.state.parsers`.

Kept for one release. Parsing events into the caches is the connection state's work, so the
parsers moved up from the transport; this re-export is the only import from here upward (the
layer check lists it as an exception).
"""

from __future__ import annotations

from ..state.parsers import Parsers, ReactionTracker, diff_reactions

#: The old name of :class:`~service_client.state.parsers.Parsers`.
WireHandlers = Parsers

__all__ = ["ReactionTracker", "WireHandlers", "diff_reactions"]
