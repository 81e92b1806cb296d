"""``Channel``: a server channel, with its history, pins, webhooks, edits and overwrites."""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from .. import endpoints
from .._defaults import MISSING
from .._html import MAX_ROWS, class_columns, data_frame, frame_columns, frame_rows, list_html, require_pandas
from .._validate import check_cache_flag, check_id, check_name
from ..permissions import ALL, Permissions
from ..rest.route import Route
from ._base import Model, as_dict, read_bool, read_id, read_int, read_str
from ._overwrites import check_overwrite, post_overwrite
from ._port import StateLike, state_of
from .collection import ModelList
from .member import Member
from .message import Message
from .overwrite import PermissionOverwrite, apply_overwrites, delete_overwrite, fetch_overwrites
from .webhook import Webhook, _check_name

if TYPE_CHECKING:  # pragma: no cover
    from .embed import EmbedBuilder
    from .guild import Guild

__all__ = ["BULK_DELETE_MAX", "Channel", "HISTORY_PAGE"]

#: Messages asked for per history request (the service's maximum).
HISTORY_PAGE = 100
#: Most messages one bulk delete may name (the service's maximum).
BULK_DELETE_MAX = 100

_intern = sys.intern
class Channel(Model):
    """A channel of a server (or, for :class:`DMChannel`, a DM).

    Wire keys: ``publicId`` (also ``id``, ``channelPublicId``),
    ``name``, ``type`` (any string; ``"TEXT"``, ``"VOICE"``...),
    ``serverPublicId`` (also ``serverId``; absent in the category listing,
    where the manager sets it), ``categoryId``, ``position``, ``isPrivate``,
    ``description``.

    Attributes:
        id, name, type, server_id, category_id, position, is_private: As above.
        description: The channel topic, or None.
    """

    __slots__ = ("id", "name", "type", "server_id", "category_id", "position", "is_private", "description",
                 "_known_overwrites")

    _HTML: ClassVar[tuple[str, ...]] = ("id", "name", "type", "server_id", "category_id", "is_private")

    _WIRE = (
        ("publicId", "id"),
        ("name", "name"),
        ("type", "type"),
        ("serverPublicId", "server_id"),
        ("categoryId", "category_id"),
        ("position", "position"),
        ("isPrivate", "is_private"),
        ("description", "description"),
    )

    id: str
    name: str
    type: str
    server_id: str | None
    category_id: str | None
    position: int
    is_private: bool
    description: str | None
    #: The overwrites last fetched through this object (:meth:`overwrites`), else None.
    _known_overwrites: tuple[PermissionOverwrite, ...] | None

    def __init__(
        self, state: StateLike, data: Mapping[str, Any], *, server_id: str | None = None
    ) -> None:
        """Build from a channel record.

        Args:
            state: The connection state of the client this model belongs to (the client
                itself is accepted too).
            data: The channel record.
            server_id: Set explicitly (category listing), overriding the record.

        Raises:
            TypeError: ``data`` is not a dict.
            ValueError: The record has no id.
        """
        self._state = state_of(state)
        self._parse(as_dict(data, "channel"), server_id)

    def _parse(self, data: dict[str, Any], server_id: str | None) -> None:
        ident = read_id(data, "publicId", "id", "channelPublicId", "channelId")
        if ident is None:
            raise ValueError("channel record has no publicId")
        self.id = ident
        self.name = read_str(data, "name") or ""
        kind = read_str(data, "type")
        self.type = _intern(kind) if kind and len(kind) <= 16 else (kind or "TEXT")
        self.server_id = server_id or read_id(data, "serverPublicId", "serverId")
        self.category_id = read_id(data, "categoryId", "categoryPublicId", "parentId")
        self.position = read_int(data, "position", 0)
        self.is_private = read_bool(data, "isPrivate")
        self.description = read_str(data, "description")
        self._known_overwrites = None
        self._split(data)

    @property
    def guild(self) -> Guild | None:
        """The cached server of this channel, or None."""
        return self._cached_guild(self.server_id)

    @property
    def mention(self) -> str:
        """The mention text ``<#id>``."""
        return f"<#{self.id}>"

    def send(
        self,
        options: str | EmbedBuilder | Mapping[str, Any] | None = None,
        *,
        content: str | None = None,
        embeds: Sequence[EmbedBuilder | Mapping[str, Any]] | None = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """Send a message here: ``client.send_message(self.id, ...)``.

        Same arguments, result and errors as the client's ``send_message``
        (``EmptyMessageError``, a ``ServiceAuthError`` and a ``ValueError``,
        when there is no content and no embed; ``ValueError`` when the content is only whitespace
        or the message is over the limits; ``ServiceAuthError`` when not connected;
        ``TimeoutError`` after 10 s without the echo).
        """
        return self._state.send_message(
            self.id, options, content=content, embeds=embeds, reply_to_id=reply_to_id
        )

    def delete(self) -> None:
        """Delete this channel (``DELETE /channels/{id}``) and drop it from the cache.

        Raises:
            ServiceAPIError: The service refused (403 without MANAGE_CHANNELS, 404).
        """
        self._state.request(Route(endpoints.DELETE_CHANNEL, channel_id=self.id))
        self._state.channels.cache.pop(self.id, None)

    # -- history, pins, webhooks -------------------------------------------------

    def history(self, limit: int | None = None, *, before: str | Message | None = None) -> History:
        """Iterate over this channel's messages, newest first (``GET /chat/{chid}``).

        Pages lazily: each page is one blocking request of up to 100 messages
        (``limit`` and ``before`` query), made when the iteration needs it, each
        through the REST session (queue, buckets, retries). Stops after
        ``limit`` messages, or when the service has no older ones. Whatever
        order a page comes in, the iterator yields newest first; each next page
        asks for the messages before the oldest one seen. Message authors are
        not added to ``client.users``. The iterator may be used from any thread
        (one thread at a time).

        Args:
            limit: Most messages to yield (>= 0), or None for the whole history.
            before: Start below this message (a :class:`Message` or its id);
                None starts from the newest.

        Returns:
            A :class:`History`: an iterator of :class:`Message` (content decoded) that also
            gives the messages as a list (``to_list()``), a ``pandas.DataFrame``
            (``to_frame()``), and shows as a table in Jupyter.

        Raises:
            TypeError, ValueError: A bad ``limit`` or ``before``, raised here,
                before any request.
            ServiceAPIError: From the iteration: 403 the channel is not
                visible, 404 unknown channel.
            ServiceTimeoutError: From the iteration: the last attempt timed out.
        """
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError(f"limit must be an int or None, got {type(limit).__name__}")
            if limit < 0:
                raise ValueError(f"limit must be >= 0, got {limit}")
        start = None if before is None else check_id(getattr(before, "id", before), "before")
        return History(self._history_pages(limit, start), self.id, limit)

    def _history_pages(self, limit: int | None, before: str | None) -> Iterator[Message]:
        remaining = limit
        seen: set[str] = set()
        while remaining is None or remaining > 0:
            ask = HISTORY_PAGE if remaining is None else min(HISTORY_PAGE, remaining)
            data = self._state.request(
                Route(endpoints.GET_HISTORY, channel_id=self.id), params={"limit": ask, "before": before}
            )
            items = data.get("messages") if isinstance(data, dict) else data
            page: list[Message] = []
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict):
                    try:
                        page.append(Message(self._state, item))
                    except ValueError:
                        continue
            if _chronological(page):
                page.reverse()
            fresh = [m for m in page if m.id not in seen]
            for message in fresh:
                seen.add(message.id)
                yield message
                if remaining is not None:
                    remaining -= 1
                    if remaining == 0:
                        return
            if len(page) < ask or not fresh:
                return
            before = page[-1].id

    def pins(self) -> ModelList[Message]:
        """The pinned messages of this channel (``GET /chat/{chid}/pins``). Blocks.

        Returns:
            The pinned messages in the service's order (most recently pinned
            first on the emulator); ``[]`` when none.

        Raises:
            ServiceAPIError: 403 the channel is not visible, 404 unknown channel.
        """
        data = self._state.request(Route(endpoints.LIST_PINS, channel_id=self.id))
        items = data.get("pins") if isinstance(data, dict) else data
        out: list[Message] = []
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                try:
                    out.append(Message(self._state, item))
                except ValueError:
                    continue
        return ModelList(out)

    def delete_messages(self, messages: Iterable[str | Message]) -> None:
        """Delete messages of this channel, 100 per request
        (``POST /channels/{chid}/messages/bulk-delete {"messageIds": [...]}``; needs MANAGE_MESSAGES).

        Blocks until the service answered every request (204); thread-safe. Repeated ids are
        sent once, in the order first given, in requests of at most :data:`BULK_DELETE_MAX`
        ids. The service deletes the messages of this channel among them (ids it does not
        know are skipped) and sends one ``message:deleted`` per message deleted: listeners
        get one ``message_delete`` event for each (a raw dict with ``publicId`` and
        ``channelPublicId``). When a request fails, the requests after it are not sent and
        the messages of the requests before it stay deleted.

        Args:
            messages: Message ids and/or :class:`Message` objects of this channel (at least one).

        Raises:
            TypeError: ``messages`` is a str or not iterable, or an item is neither a str nor
                a :class:`Message` (before any request).
            ValueError: No message, an empty id, or a :class:`Message` of another channel
                (before any request).
            ServiceAPIError: 403 without MANAGE_MESSAGES (or a DM, or a channel the bot may
                not view), 400 refused, 404 unknown channel.
            ServiceTimeoutError: The last attempt of a request timed out.
        """
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
            raise TypeError(
                f"messages must be an iterable of message ids or Message objects, got {type(messages).__name__}"
            )
        ids: dict[str, None] = {}
        for index, item in enumerate(messages):
            if isinstance(item, Message):
                if item.channel_id != self.id:
                    raise ValueError(
                        f"messages[{index}] belongs to channel {item.channel_id}, not {self.id}"
                    )
                ident = item.id
            elif isinstance(item, str):
                ident = check_id(item, f"messages[{index}]")
            else:
                raise TypeError(f"messages[{index}] must be a message id or a Message, got {type(item).__name__}")
            ids[ident] = None
        if not ids:
            raise ValueError("messages must name at least one message")
        order = list(ids)
        route = Route(endpoints.BULK_DELETE_MESSAGES, channel_id=self.id)
        for start in range(0, len(order), BULK_DELETE_MAX):
            self._state.request(route, json={"messageIds": order[start:start + BULK_DELETE_MAX]})

    def purge(
        self,
        limit: int = 100,
        *,
        check: Callable[[Message], bool] | None = None,
        before: str | Message | None = None,
    ) -> list[Message]:
        """Delete recent messages of this channel that ``check`` accepts; blocks.

        Reads the channel's history newest first (:meth:`history`, a page of up to 100 per
        request), at most ``limit`` messages, calls ``check`` on each one, then deletes the
        accepted ones with :meth:`delete_messages` (100 per request). ``check`` runs on the
        calling thread, between the requests, with no lock held. Needs MANAGE_MESSAGES
        (and to view the channel). Thread-safe.

        Args:
            limit: How many of the newest messages to look at (>= 0); not how many to delete.
            check: Called with each :class:`Message`; True deletes it. None deletes them all.
            before: Start below this message (a :class:`Message` or its id); None starts
                from the newest.

        Returns:
            The deleted messages, newest first; ``[]`` when none was accepted (then no
            delete request is made).

        Raises:
            TypeError, ValueError: A bad ``limit``, ``check`` or ``before`` (before any request).
            ServiceAPIError: Reading or deleting was refused (403 without MANAGE_MESSAGES or
                view access, 404 unknown channel); what a refused delete request held is not
                deleted, what earlier requests held is.
            ServiceTimeoutError: The last attempt of a request timed out.
            Exception: Whatever ``check`` raises; nothing has been deleted then.
        """
        if check is not None and not callable(check):
            raise TypeError(f"check must be callable or None, got {type(check).__name__}")
        chosen = [message for message in self.history(limit, before=before) if check is None or check(message)]
        if chosen:
            self.delete_messages(chosen)
        return chosen

    def webhooks(self) -> ModelList[Webhook]:
        """The webhooks of this channel (``GET /channels/{chid}/webhooks``; needs MANAGE_CHANNELS). Blocks.

        Listed webhooks carry no token (only the one returned by
        :meth:`create_webhook` does), so they can be edited and deleted but
        not executed. Webhooks are not cached.

        Returns:
            The webhooks; ``[]`` when none.

        Raises:
            ServiceAPIError: 403 without MANAGE_CHANNELS (or a DM), 404 unknown channel.
        """
        data = self._state.request(Route(endpoints.LIST_WEBHOOKS, channel_id=self.id))
        items = data.get("webhooks") if isinstance(data, dict) else data
        out: list[Webhook] = []
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                try:
                    out.append(Webhook(self._state, item, channel_id=self.id))
                except ValueError:
                    continue
        return ModelList(out)

    def create_webhook(self, name: str, avatar_url: str | None = None) -> Webhook:
        """Create a webhook on this channel (``POST /channels/{chid}/webhooks``; needs MANAGE_CHANNELS).

        Blocks. The returned webhook holds its token (a secret, shown as
        ``***``; the service returns it only here), so it can
        :meth:`Webhook.execute` at once.

        Args:
            name: The webhook's name (1 to 80 characters, not only spaces).
            avatar_url: Its avatar URL (omitted when None).

        Returns:
            The new :class:`Webhook`.

        Raises:
            TypeError, ValueError: A bad ``name`` or ``avatar_url`` (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS (or a DM), 400 refused, 404 unknown channel.
        """
        body: dict[str, Any] = {"name": _check_name(name, "name")}
        if avatar_url is not None:
            if not isinstance(avatar_url, str):
                raise TypeError(f"avatar_url must be a str or None, got {type(avatar_url).__name__}")
            body["avatarUrl"] = avatar_url
        data = self._state.request(
            Route(endpoints.CREATE_WEBHOOK, channel_id=self.id), json=body
        )
        if isinstance(data, dict) and isinstance(data.get("webhook"), dict):
            data = data["webhook"]
        return Webhook(self._state, data, channel_id=self.id)

    # -- editing, copies, permission overwrites ------------------------------

    def edit(self, *, name: str = MISSING, description: str | None = MISSING, cache: bool = True) -> Channel:
        """Rename this channel and/or change its description (``PATCH /channels/{id}``; MANAGE_CHANNELS).

        Only the given keywords are sent; ``description=None`` clears it. Blocks until the
        service answers (204); thread-safe.

        Args:
            name: The new name (not empty or only whitespace).
            description: The new topic text, or None to clear it.
            cache: Put the returned channel in ``client.channels.cache`` in place of this one.

        Returns:
            A new :class:`Channel` with the change applied (this object is left as it was).

        Raises:
            TypeError, ValueError: Bad arguments or nothing to change (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS (or a DM), 404 unknown channel.
        """
        check_cache_flag(cache)
        body: dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = check_name(name, "name")
        if description is not MISSING:
            if description is not None and not isinstance(description, str):
                raise TypeError(f"description must be a str or None, got {type(description).__name__}")
            body["description"] = description
        if not body:
            raise ValueError("edit needs name or description")
        self._state.request(Route(endpoints.EDIT_CHANNEL, channel_id=self.id), json=body)
        record = self.raw
        record.update(body)
        updated = self._rebuilt(record)
        if cache:
            self._state.channels.cache[updated.id] = updated
        return updated

    def _rebuilt(self, record: dict[str, Any]) -> Channel:
        """A new channel of this class from ``record``, keeping the server id (a DM channel
        keeps its recipient)."""
        return Channel(self._state, record, server_id=self.server_id)

    def duplicate(self, *, cache: bool = True) -> Channel:
        """Create a copy of this channel (``POST /channels/{id}/duplicate``; MANAGE_CHANNELS).

        The copy has the same name, type, category, privacy, description and overwrites, and
        no messages. Blocks until the service answers; thread-safe.

        Args:
            cache: Add the copy to ``client.channels.cache``.

        Returns:
            The new :class:`Channel`.

        Raises:
            ServiceAPIError: 403 without MANAGE_CHANNELS (or a DM), 404 unknown channel.
        """
        check_cache_flag(cache)
        data = self._state.request(Route(endpoints.DUPLICATE_CHANNEL, channel_id=self.id))
        if isinstance(data, dict) and isinstance(data.get("channel"), dict):
            data = data["channel"]
        copy = Channel(self._state, data, server_id=self.server_id)
        if cache:
            self._state.channels.cache[copy.id] = copy
        return copy

    def sync(self) -> None:
        """Give this channel its category's overwrites and privacy (``POST /channels/{id}/sync``).

        Needs MANAGE_CHANNELS. The channel's own overwrites are replaced by copies of the
        category's. Blocks until the service answers; thread-safe. Cached copies are refreshed
        by the ``guild_channels_update`` event that follows.

        Raises:
            ServiceAPIError: 400 when the channel has no category, 403 without
                MANAGE_CHANNELS, 404 unknown channel.
        """
        self._state.request(Route(endpoints.SYNC_CHANNEL, channel_id=self.id))
        self._remember_overwrites(None)

    def overwrites(self) -> list[PermissionOverwrite]:
        """Fetch this channel's permission overwrites (``GET /channels/{id}/overrides``).

        Always requests. The answer is remembered by this channel (and by the cached one of
        the same id) until an overwrite is set or deleted through it, so that
        :meth:`permissions_for` and ``send_message`` can tell what the bot may do here
        without a request. Blocks; thread-safe.

        Returns:
            The :class:`PermissionOverwrite` objects, oldest first; ``[]`` when none.

        Raises:
            ServiceAPIError: 403 for a member who neither holds MANAGE_CHANNELS nor may view
                the channel, 404 unknown channel.
        """
        found = fetch_overwrites(self._state, self.id)
        self._remember_overwrites(tuple(found))
        return found

    def _remember_overwrites(self, overwrites: tuple[PermissionOverwrite, ...] | None) -> None:
        self._known_overwrites = overwrites
        cached = self._state.channels.cache.get(self.id)
        if cached is not None and cached is not self:
            cached._known_overwrites = overwrites

    def permissions_for(self, member: Member) -> Permissions | None:
        """What ``member`` may do in this channel, or None when the client cannot tell.

        Its server permissions (:attr:`Member.permissions`, from its roles) with this
        channel's privacy and overwrites applied, as the service computes them (see
        :class:`PermissionOverwrite`). The overwrites are those :meth:`overwrites` fetched
        last; before that, the answer is known only for a member who is never restricted
        (the owner, ``ADMINISTRATOR``). No request. A DM gives None.

        Args:
            member: A member of this channel's server.

        Returns:
            The :class:`Permissions`, or None when the overwrites are not known (or for a DM).
        """
        if self.server_id is None:
            return None
        base = member.permissions
        if base == ALL:
            return ALL
        overwrites = self._known_overwrites
        if overwrites is None:
            return None
        roles = member.roles
        everyone = next((role.id for role in roles.values() if role.name == "@everyone"), None)
        return apply_overwrites(base, overwrites, member_id=member.id, role_ids=roles.keys(),
                                everyone_id=everyone, private=self.is_private)

    def set_overwrite(self, target: Any, *, allow: Any = 0, deny: Any = 0, type: str | None = None) -> None:  # noqa: A002
        """Create or replace the overwrite of one role or member (``POST /channels/{id}/overrides``).

        The service then recomputes who may view and post here, at once: a member denied
        ``VIEW_CHANNELS`` no longer gets the channel in listings, cannot read it and receives
        none of its events. Needs MANAGE_CHANNELS. Blocks until the service answers (204);
        thread-safe.

        Args:
            target: A :class:`Role` (``@everyone`` included), a :class:`Member` or
                :class:`User`, a ``("ROLE" | "MEMBER", id)`` pair, or an id str (a cached
                role of the server, else a cached member or user; otherwise give ``type``).
            allow: Permissions granted: :class:`Permissions`, an int, a name, or a list of them.
            deny: Permissions withheld, same forms; must not share a bit with ``allow``.
            type: ``"ROLE"`` or ``"MEMBER"`` when ``target`` is a bare id.

        Raises:
            TypeError, ValueError: A bad target or bitfield (before any request).
            ServiceAPIError: 400 for a role that is not the server's or a user who is not a
                member, 403 without MANAGE_CHANNELS, 404 unknown channel.
        """
        spec = check_overwrite(self._state, self.server_id, target, allow, deny, type)
        post_overwrite(self._state, self.id, spec)
        self._remember_overwrites(None)

    def delete_overwrite(self, overwrite: str | PermissionOverwrite) -> None:
        """Delete one overwrite (``DELETE /channels/{id}/overrides/{overrideId}``; MANAGE_CHANNELS).

        Blocks until the service answers (204); thread-safe.

        Args:
            overwrite: The override's id (from :meth:`overwrites`) or the
                :class:`PermissionOverwrite` itself.

        Raises:
            TypeError, ValueError: Not an id or overwrite (before any request).
            ServiceAPIError: 403 without MANAGE_CHANNELS, 404 unknown channel or overwrite.
        """
        delete_overwrite(self._state, self.id, overwrite)
        self._remember_overwrites(None)


def _chronological(page: list[Message]) -> bool:
    """Whether a page runs oldest to newest: its first message is older than its last, or (equal or
    unknown times) the service's documented default, chronological."""
    if len(page) < 2:
        return True
    first, last = page[0].created_at, page[-1].created_at
    if first is None or last is None or first == last:
        return True
    return first < last


class History(Iterator[Message]):
    """What :meth:`Channel.history` returns: its messages, newest first, read page by page.

    An iterator (``for message in channel.history(limit=500)``) that reads a page of up to
    100 messages from the service when the iteration needs it. Besides:

    - :meth:`to_list` reads the messages not read yet into a :class:`ModelList`;
    - :meth:`to_frame` gives them as a ``pandas.DataFrame`` (pandas optional);
    - as a Jupyter cell's value it shows as a table: showing reads the messages not read yet
      (at most 50, plus one to tell whether more follow; these requests are made by the
      display), and keeps them, so a later iteration still yields them, in order.

    For a progress bar over a long read, wrap it in ``tqdm``:
    ``tqdm(channel.history(limit=5000), total=5000)``. Use it from one thread at a time.
    """

    __slots__ = ("_pages", "_read", "_channel_id", "_limit")

    def __init__(self, pages: Iterator[Message], channel_id: str, limit: int | None) -> None:
        self._pages = pages
        self._read: deque[Message] = deque()  # read for a display, not yet yielded
        self._channel_id = channel_id
        self._limit = limit

    def __iter__(self) -> History:
        return self

    def __next__(self) -> Message:
        if self._read:
            return self._read.popleft()
        return next(self._pages)

    def to_list(self) -> ModelList[Message]:
        """Every message not yielded yet, newest first (the requests are made now).

        Raises:
            ServiceAPIError: 403 the channel is not visible, 404 unknown channel.
            ServiceTimeoutError: The last attempt timed out.
        """
        out: ModelList[Message] = ModelList(self._read)
        self._read.clear()
        out.extend(self._pages)
        return out

    def to_frame(self) -> Any:
        """:meth:`to_list` as a ``pandas.DataFrame``: one row per message (see
        ``Message.to_dict()``), newest first.

        With no message (a quiet channel) the frame still has the columns of a message.

        Raises:
            ImportError: pandas is not installed (``pip install pandas``); checked before
                anything is read, so the history is left as it was.
            ServiceAPIError, ServiceTimeoutError: As :meth:`to_list`.
        """
        require_pandas()
        messages = self.to_list()
        return data_frame(frame_rows(messages), frame_columns(messages) or class_columns(Message))

    def _repr_html_(self) -> str:
        """A table of the messages not yielded yet (read now, at most 50 shown), for Jupyter."""
        wanted = MAX_ROWS + 1
        while len(self._read) < wanted:  # shown again, it reads nothing more
            message = next(self._pages, None)
            if message is None:
                break
            self._read.append(message)
        shown = list(self._read)[:MAX_ROWS]
        more = " (more follow)" if len(self._read) > MAX_ROWS else ""
        return list_html(shown, len(shown), title=f"History of channel {self._channel_id}{more}")

    def __repr__(self) -> str:
        limit = "no limit" if self._limit is None else f"limit={self._limit}"
        return f"<History channel_id={self._channel_id!r} {limit}>"
