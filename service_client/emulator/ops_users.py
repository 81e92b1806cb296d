"""Operations on users: users: creation, changes, token revocation."""

from __future__ import annotations

from typing import Any

from .. import endpoints
from .ops_checks import (
    need_str,
)
from .realtime import Realtime
from .store import (
    BadRequest,
)
from .store.users import UserRepository


class UserOps:
    """Users: creation, changes, token revocation.

    Every method is a coroutine to run on the emulator's loop; each change sends the events the
    service sends for it (see :class:`~.ops.Operations`).

    Args:
        users: The users repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, users: UserRepository, realtime: Realtime) -> None:
        self.users = users
        self.rt = realtime

    async def create_user(self, name: Any, bot: Any = False) -> dict[str, Any]:
        """Create a user; return ``{"user", "token"}``. Raises BadRequest."""
        need_str(name, "name")
        if not isinstance(bot, bool):
            raise BadRequest("bot must be a boolean")
        user, token = self.users.create_user(name, bot=bot)
        return {"user": user, "token": token}

    async def update_user(self, uid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a user's name/tag/image and broadcast ``user:update``."""
        user = self.users.update_user(uid, **fields)
        payload = {"userPublicId": uid}
        payload.update({k: user[k] for k in ("name", "tag", "image") if k in fields})
        await self.rt.emit(endpoints.ON_USER_UPDATE, payload, self.rt.presence_events.presence_rooms(uid))
        return user

    async def revoke_token(self, uid: str) -> None:
        """Revoke a user's token and server-disconnect its sockets (socket.io DISCONNECT)."""
        self.users.revoke_token(uid)
        await self.rt.connection_events.server_disconnect(uid)
