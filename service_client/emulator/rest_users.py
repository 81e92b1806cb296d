"""REST routes of the emulator: the bot and users: who is calling, its status, other users and their profiles."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .realtime import Realtime
from .routing import Ctx, Handler, json_response, no_content
from .store import STATUSES, BadRequest
from .store.servers import ServerRepository
from .store.users import UserRepository


class UserRoutes:
    """The bot and users: who is calling, its status, other users and their profiles.

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        users: The users repository.
        servers: The servers repository.
        realtime: The socket.io side (rooms, emits).
    """

    def __init__(self, *, users: UserRepository, servers: ServerRepository, realtime: Realtime) -> None:
        self.users = users
        self.servers = servers
        self.rt = realtime

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.GET_ME, self.get_me),
            (endpoints.SET_STATUS, self.patch_settings),
            (endpoints.GET_USER, self.get_user),
            (endpoints.GET_PROFILE, self.get_profile),
            (endpoints.GET_MUTUAL_SERVERS, self.get_mutual_servers),
        ]

    async def get_me(self, ctx: Ctx) -> Response:
        """``GET /auth/me`` -> ``{"user": User}``."""
        return json_response({"user": self.users.user(ctx.uid, viewer=ctx.uid)})

    async def patch_settings(self, ctx: Ctx) -> Response:
        """``PATCH /users/settings {status}`` -> 204 and ``presence:update``; other keys 400."""
        body = ctx.body()
        if set(body) != {"status"}:
            raise BadRequest("Only status can be changed")
        if body["status"] not in STATUSES:
            raise BadRequest("status must be online, idle, dnd or invisible")
        await self.rt.presence_events.set_presence(ctx.uid, body["status"])
        return no_content()

    async def get_user(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}`` -> bare User."""
        return json_response(self.users.user(ctx.params["user_id"], viewer=ctx.uid))

    async def get_profile(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}/profile`` -> bare User plus ``banner, bannerColor, bio, followersCount,
        followingCount, mutualFriendsCount``."""
        return json_response(self.users.profile(ctx.params["user_id"], viewer=ctx.uid))

    async def get_mutual_servers(self, ctx: Ctx) -> Response:
        """``GET /users/{user_id}/mutual-servers`` -> ``{"mutualServers": [{publicId, name, imageUrl}]}``."""
        return json_response({"mutualServers": self.servers.mutual_servers(ctx.params["user_id"], ctx.uid)})
