"""The connection state: caches, socket event parsers, reconcile and the nonce-keyed sends.

- :mod:`.connection`: :class:`ConnectionState`, which implements the models' ``State`` port.
- :mod:`.parsers`: :class:`Parsers`, every socket event's cache update and Python event
  (the server events in :mod:`.server_parsers`, a part it holds; the payload keys in :mod:`.payload`).
"""

from __future__ import annotations

from .connection import ConnectionState
from .parsers import Parsers, ReactionTracker, diff_reactions

__all__ = ["ConnectionState", "Parsers", "ReactionTracker", "diff_reactions"]
