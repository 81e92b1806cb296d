"""State changes with their socket fan-out, shared by the REST routes and the control plane.

Every change sends the events the service sends for it, to the rooms it sends them to (the
author's own sockets included). Every method is a coroutine that must run on the emulator's
event loop; ``Emulator`` (``emulator.py``) wraps them for other threads.

Layout: ``ops_checks.py`` (field limits and validators), then one part per entity, each given
the repositories it changes and the realtime side: ``ops_users.py``, ``ops_servers.py``, ``ops_members.py``
(members, roles, moderation), ``ops_channels.py`` (channels, categories, overrides, DMs),
``ops_messages.py``, ``ops_invites.py`` and ``ops_extras.py`` (emojis, webhooks, notification
settings, raw emits). :class:`Operations` only builds and holds them (``ops.members.kick(...)``).
"""

from __future__ import annotations

from .ops_channels import ChannelOps
from .ops_checks import MAX_NAME_CHARS, Conflict
from .ops_extras import ExtrasOps
from .ops_invites import InviteOps
from .ops_members import MemberOps
from .ops_messages import MessageOps
from .ops_servers import ServerOps
from .ops_users import UserOps
from .realtime import Realtime
from .store import Store

__all__ = ["MAX_NAME_CHARS", "Conflict", "Operations"]


class Operations:
    """Mutations of the emulator's state plus the socket events they cause, one part per entity.

    Not thread-safe: call on the emulator's loop.

    Args:
        store: The emulator's repositories.
        realtime: The socket.io side; its ``ops`` is set to this object (socket moderation
            calls ``ops.members.moderate``).
    """

    def __init__(self, store: Store, realtime: Realtime) -> None:
        self.users = UserOps(users=store.users, realtime=realtime)
        self.servers = ServerOps(users=store.users, servers=store.servers, members=store.members,
                                 channels=store.channels, realtime=realtime)
        self.members = MemberOps(users=store.users, servers=store.servers, members=store.members,
                                 channels=store.channels, messages=store.messages, extras=store.extras, db=store.db,
                                 realtime=realtime)
        self.channels = ChannelOps(members=store.members, channels=store.channels, realtime=realtime)
        self.messages = MessageOps(users=store.users, channels=store.channels, messages=store.messages,
                                   realtime=realtime)
        self.invites = InviteOps(channels=store.channels, invites=store.invites, realtime=realtime)
        self.extras = ExtrasOps(servers=store.servers, channels=store.channels, extras=store.extras,
                                realtime=realtime)
        realtime.ops = self
