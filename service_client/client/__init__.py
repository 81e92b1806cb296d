"""The :class:`Client`: a bot's connection to the service, and its lifecycle.

- :mod:`.lifecycle`: :class:`Client` and :class:`ClientState` (new, connecting,
  ready, destroyed), the threads and the socket callbacks;
- :mod:`.listeners`: ``on``, ``once``, ``off``, ``wait_for`` and custom events;
- :mod:`.operations`: ``api_call``, ``send_message``, presence, DMs, invites,
  search, command loading;
- :mod:`.scheduling`: ``call_later``, ``every`` and the clock of scheduled work;
- :mod:`.extensions`: ``load_extension``, ``add_cog`` and the other cog methods, handed to the
  extensions part of the client's :class:`~service_client.CommandDispatcher`;
- :mod:`.urls`: the URL checks and host warnings of the constructor;
- :mod:`.voice`: ``client.voice``, the bot's voice connection;
- :mod:`.catchup`: :class:`CatchUp`, reading back the messages missed during a gap;
- :mod:`.source`: :class:`EventSource` and :class:`EventFeed`, the seam through which a client
  is fed the service's events by something other than its socket (``Client(event_source=...)``).
"""

from __future__ import annotations

from .._defaults import MISSING
from .catchup import CatchUp
from .lifecycle import RECONCILE_MAX_RETRIES, RECONCILE_TIMEOUT_MS, Client, ClientState, _live_clients
from .source import EventFeed, EventSource

__all__ = ["MISSING", "RECONCILE_MAX_RETRIES", "RECONCILE_TIMEOUT_MS", "CatchUp", "Client", "ClientState",
           "EventFeed", "EventSource", "_live_clients"]
