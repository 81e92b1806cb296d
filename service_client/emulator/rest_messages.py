"""REST routes of the emulator: messages: history, search, pins, reactions and bulk deletes (sending and editing go over the socket)."""

from __future__ import annotations

from starlette.responses import Response

from .. import endpoints
from ..endpoints import Endpoint
from .access import Access
from .ops_messages import MessageOps
from .rest_search import search_messages
from .routing import Ctx, Handler, json_response, no_content
from .store import BadRequest
from .store.messages import MessageRepository


class MessageRoutes:
    """Messages: history, search, pins, reactions and bulk deletes (sending and editing go over the socket).

    A group of handlers given the parts it uses; :class:`~.rest_api.RestApi` serves each
    handler for its endpoint of the catalog (:meth:`routes`).

    Args:
        messages: The messages repository.
        message_ops: The operations on messages.
        access: The membership, visibility and permission checks.
    """

    def __init__(self, *, messages: MessageRepository, message_ops: MessageOps, access: Access) -> None:
        self.messages = messages
        self.message_ops = message_ops
        self.access = access

    def routes(self) -> list[tuple[Endpoint, Handler]]:
        """Each endpoint of the catalog this group serves, with its handler."""
        return [
            (endpoints.GET_HISTORY, self.get_history),
            (endpoints.SEARCH_MESSAGES, self.get_search),
            (endpoints.LIST_PINS, self.get_pins),
            (endpoints.PIN_MESSAGE, self.pin),
            (endpoints.UNPIN_MESSAGE, self.unpin),
            (endpoints.GET_REACTION_DETAILS, self.get_reaction_details),
            (endpoints.BULK_DELETE_MESSAGES, self.bulk_delete),
        ]

    async def get_history(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}?limit=&before=`` -> ``{"messages"}`` (chronological, newest ``limit``)."""
        cid = ctx.params["channel_id"]
        self.access.channel(cid, ctx.uid)
        limit = ctx.q_int("limit", 50)
        return json_response({"messages": self.messages.history(cid, limit, ctx.q("before") or None)})

    async def get_search(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/search?q=&limit=&before=&after=`` -> ``{"messages"}``, newest first.

        ``limit`` defaults to 25 (clamped to 1..100); ``before`` / ``after`` are message ids of
        this channel that bound the results (any other id matches nothing). ``q`` of more than
        1024 characters or 32 terms is answered 400; the search runs off the event loop
        (:func:`~.rest_search.search_messages`)."""
        cid = ctx.params["channel_id"]
        self.access.channel(cid, ctx.uid)
        q = ctx.q("q")
        if q is None:
            raise BadRequest("q is required")
        limit = ctx.q_int("limit", 25)
        found = await search_messages(self.messages, cid, q, limit, ctx.q("before") or None, ctx.q("after") or None)
        return json_response({"messages": found})

    async def get_pins(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/pins`` -> ``{"pins": [Message]}``, most recently pinned first."""
        cid = ctx.params["channel_id"]
        self.access.channel(cid, ctx.uid)
        return json_response({"pins": self.messages.pins(cid)})

    async def pin(self, ctx: Ctx) -> Response:
        """``POST /chat/{channel_id}/pin/{message_id}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=True)
        await self.message_ops.set_pinned(cid, ctx.params["message_id"], True)
        return no_content()

    async def unpin(self, ctx: Ctx) -> Response:
        """``DELETE /chat/{channel_id}/pin/{message_id}`` -> 204 (PIN_MESSAGE; DM participants); ``message:pinned``."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=True)
        await self.message_ops.set_pinned(cid, ctx.params["message_id"], False)
        return no_content()

    async def get_reaction_details(self, ctx: Ctx) -> Response:
        """``GET /chat/{channel_id}/reactions/{message_id}/details?emoji=`` -> ``{"reactions": [ReactionDetail]}``, all emojis.

        Every emoji group of the message comes back: the ``emoji`` query is accepted and not used
        to filter, as on the service."""
        cid = ctx.params["channel_id"]
        self.access.channel(cid, ctx.uid)
        row = self.access.message_in(cid, ctx.params["message_id"])
        return json_response({"reactions": self.messages.reaction_details(row["id"])})

    async def bulk_delete(self, ctx: Ctx) -> Response:
        """``POST /channels/{channel_id}/messages/bulk-delete {messageIds}`` (1 to 100) -> 204
        (MANAGE_MESSAGES); one ``message:deleted`` per message deleted."""
        cid = ctx.params["channel_id"]
        self.access.channel_perm(cid, ctx, dm_ok=False)
        body = ctx.body()
        await self.message_ops.bulk_delete(cid, body.get("messageIds"))
        return no_content()
