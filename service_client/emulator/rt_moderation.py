"""Moderation over the socket: kick, ban and unban, acknowledged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import endpoints

if TYPE_CHECKING:
    from .realtime import Realtime


class ModerationEvents:
    """Moderation over the socket: kick, ban and unban, acknowledged.

    Given the :class:`~.realtime.Realtime` it belongs to (sessions, rooms, emits, settings, the
    other groups); runs on the emulator's loop.

    Args:
        rt: The socket side.
    """

    def __init__(self, rt: Realtime) -> None:
        self.rt = rt

    def handlers(self) -> dict[str, Any]:
        """The socket event handlers of this group, by the catalog's event name."""
        return {
            endpoints.EMIT_SERVER_KICK: self._on_kick,
            endpoints.EMIT_SERVER_BAN: self._on_ban,
            endpoints.EMIT_SERVER_UNBAN: self._on_unban,
        }

    async def _on_kick(self, sid: str, data: Any = None) -> Any:
        return await self.rt.ops.members.moderate("kick", self.rt.sessions.get(sid), data)

    async def _on_ban(self, sid: str, data: Any = None) -> Any:
        return await self.rt.ops.members.moderate("ban", self.rt.sessions.get(sid), data)

    async def _on_unban(self, sid: str, data: Any = None) -> Any:
        return await self.rt.ops.members.moderate("unban", self.rt.sessions.get(sid), data)
