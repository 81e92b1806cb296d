"""Operations on invites: invites."""

from __future__ import annotations

from typing import Any

from .ops_checks import (
    need_str,
    opt_int,
)
from .realtime import Realtime
from .store import (
    BadRequest,
    Forbidden,
)
from .store.channels import ChannelRepository
from .store.invites import InviteRepository


class InviteOps:
    """Invites.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        channels: The channels repository.
        invites: The invites repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, channels: ChannelRepository, invites: InviteRepository, realtime: Realtime) -> None:
        self.channels = channels
        self.invites = invites
        self.rt = realtime

    async def create_invite(self, sid: str, channel_id: Any, inviter_id: Any, *, max_age: Any = None,
                            max_uses: Any = None, viewer: str | None = None) -> dict[str, Any]:
        """Create an invite; return ``{"invite": ServerInvite}``.

        Raises:
            BadRequest: A bad field, or a channel of another server. NotFound: Unknown channel.
            Forbidden: ``viewer`` (the member asking) may not view the channel: an invite would
                reveal its name.
        """
        if channel_id is not None:
            need_str(channel_id, "channelPublicId")
            chan = self.channels.channel_row(channel_id)
            if chan["server_id"] != sid:
                raise BadRequest("channels.errors.not_in_server")
            if viewer is not None and not self.channels.can_view(channel_id, viewer):
                raise Forbidden("channels.errors.no_access")
        opt_int(max_age, "maxAge")
        opt_int(max_uses, "maxUses")
        code = self.invites.create_invite(sid, channel_id, inviter_id, max_age_s=max_age, max_uses=max_uses)
        return {"invite": self.invites.server_invite(code)}
