"""The operations a logged-in bot calls on its :class:`~service_client.Client`.

:class:`ClientOperations` is a base of :class:`~service_client.Client` holding
``api_call``, ``send_message``, ``create_dm``, ``fetch_invite``,
``search_messages``, ``load_commands``, ``set_activity``, ``set_status`` and
``set_presence``. Each goes through the client's connection state (REST
session, socket, caches); the lifecycle (login, connection, reconnect,
destroy) stays in :mod:`service_client.client.lifecycle`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from .. import _defaults, endpoints
from .._defaults import MISSING
from .._validate import check_id
from ..commands import load_commands
from ..models.collection import Collection, ModelList
from ..models.dm_channel import DMChannel
from ..models.invite import Invite
from ..models.message import Message
from ..rest.route import Route

if TYPE_CHECKING:  # pragma: no cover
    from ..commands import Command
    from ..state.connection import ConnectionState

__all__ = ["MISSING", "ClientOperations", "create_dm", "fetch_invite", "invite_code", "search_messages"]

_STATUSES = frozenset({"online", "idle", "dnd", "invisible"})
_ACTIVITY_TYPES = frozenset({"using", "browsing", "listening", "playing"})


class ClientOperations:
    """REST calls, message sends and presence of a :class:`~service_client.Client`.

    Thread-safe, like the client: every method may be called from any thread,
    including from inside a listener.
    """

    # Set by Client.__init__.
    _connection: ConnectionState
    commands: Collection[str, Command]

    # -- operations -----------------------------------------------------------

    def api_call(
        self,
        path: str,
        *,
        method: str = "GET",
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        max_retries: int | None = None,
    ) -> Any:
        """Call a REST route directly.

        The request goes through the session's strict FIFO queue (5 on the
        wire at most), rate-limit buckets and retries.

        Args:
            path: Path below ``base_url``, starting with ``/``; may carry a query.
            method: HTTP method.
            body: An already-serialised JSON str, or bytes; never serialised here.
            headers: Extra headers, merged on top of ours; ``Authorization`` is
                never overridden, whatever its letter case.
            timeout_ms: Per-attempt timeout, milliseconds: it bounds the whole
                attempt (connect, send, headers and body), however slowly the
                answer arrives. None (the default): the session's, 15,000 ms.
            max_retries: Retries after the first attempt (on a network failure,
                a timeout, or a status the client's :attr:`retry` policy retries):
                the client's policy with this many retries; None (the default)
                the policy's own count (3 unless ``Client(retry=...)`` says otherwise).

        Returns:
            Parsed JSON, or None for 204 and for an empty 2xx body.

        Raises:
            ValueError: ``path`` does not start with ``/``, or a bad method,
                ``timeout_ms`` or ``max_retries``, or a header value HTTP does not
                allow (a control character, a character outside Latin-1,
                whitespace at either end; the message names the header only).
            TypeError: ``body`` is not str/bytes/None, or ``headers`` is not a
                mapping of str to str.
            ServiceAuthError: No token (before login, after destroy); nothing is sent.
            RateLimitError: 429 after retries, or a 429 whose ``Retry-After``
                is beyond ``max_retry_after``.
            ServiceAPIError: Any other non-2xx after retries (a 3xx is never
                followed: the message names it and its ``Location``), an answer
                whose body is over ``Client(max_body_bytes=...)``, or a 2xx whose
                body is not JSON or is nested too deeply to parse.
            ServiceTimeoutError: The last attempt timed out; or, with a shared
                bucket store (``RedisBucketStore``), the fleet's pace had no slot
                for the call within ``timeout_ms`` (nothing was sent).
            ServiceError: A network failure after the last retry (cause chained),
                or the client was destroyed while the call waited.
        """
        # The session checks body, headers, timeout_ms and max_retries before anything is queued.
        route = Route.from_path(method, path)
        # A raw path may hold a webhook token: from here on only the route (which masks it)
        # keeps it, so no frame of a traceback this call raises shows it among its locals.
        del path
        return self._connection.rest.request(
            route,
            body=body,
            headers=headers,
            timeout_ms=timeout_ms,
            retry=max_retries,
        )

    def send_message(
        self,
        channel_id: str,
        options: Any = None,
        *,
        content: str | None = None,
        embeds: Any = None,
        reply_to_id: str | None = None,
    ) -> Message:
        """Send a message over the socket and return it once the service echoes it.

        Sent as the socket event ``message:send``.

        Args:
            channel_id: Target channel (or DM channel) id.
            options: A str (text), an ``EmbedBuilder`` (one embed, no text), or a
                mapping with ``content``, ``embeds``, ``replyToId``/``reply_to_id``.
            content: Text (keyword form).
            embeds: A list of ``EmbedBuilder`` or embed dicts (keyword form).
            reply_to_id: Id of the message replied to.

        Returns:
            The :class:`Message` built from the ``message:new`` echo carrying this
            send's nonce.

        Raises:
            TypeError / ValueError: An argument has the wrong type or is empty
                (naming it), before anything is sent. ``ValueError`` too when the message
                breaks a message rule (see the messages guide), its text starting
                ``send_message:`` and naming the rule: only whitespace and no embed; content
                over 4000 characters (UTF-16 code units, as JavaScript counts them); more
                than 10 embeds; an embed over its limits.
            EmptyMessageError: No content and no embed: ``"send_message requires non-empty
                content or at least one embed."``, at once, nothing sent (a ServiceAuthError
                and a ValueError).
            ServiceAuthError: The socket is not connected.
            ChannelAccessError: The send cannot succeed. Raised at once, with nothing sent,
                when the caches show that the channel's server is not the bot's, or that the
                bot lacks VIEW_CHANNELS or SEND_MESSAGES there (its roles, and the channel's
                overwrites once ``channel.overwrites()`` fetched them). Raised about a second
                after the send when no echo came and the service answers that the channel
                does not exist (``reason`` ``"unknown_channel"``) or is hidden from the bot.
            TimeoutError: No echo within 10 s. The text starts "send_message timeout after
                10s" and names the channel, the nonce and the likely causes (the service says
                nothing when it refuses a message). The 10 s include waiting for the socket
                while another thread writes and the write itself; a write that stalls past
                them also drops the connection, which is then re-established.
            ServiceError: The client was destroyed before the echo. A network cut does not
                end the wait: an echo lost with the socket gives the TimeoutError.
        """
        return self._connection.send_message(
            channel_id, options, content=content, embeds=embeds, reply_to_id=reply_to_id
        )

    def create_dm(self, user_id: str) -> DMChannel:
        """Open (or get) the DM channel with a user (``GET /channels/dm/{user_id}``).

        Args:
            user_id: The user's id.

        Returns:
            The :class:`DMChannel`.

        Raises:
            TypeError / ValueError: ``user_id`` is not a non-empty str.
            ServiceAPIError: The service refused (e.g. 404 unknown user).
            ServiceAuthError: Not logged in.
        """
        return create_dm(self._connection, user_id)

    def fetch_invite(self, code: str) -> Invite:
        """Resolve an invite, read-only (``GET /invites/{code}``).

        A bot cannot accept an invite.

        Args:
            code: The invite code, or a full link whose path ends in ``/invite/CODE``.

        Returns:
            The :class:`Invite`.

        Raises:
            TypeError / ValueError: ``code`` is not a non-empty str or link.
            ServiceAPIError: 404 for an unknown or expired code.
        """
        return fetch_invite(self._connection, code)

    def search_messages(
        self,
        channel_id: str,
        query: str,
        *,
        limit: int | None = None,
        before: str | Message | None = None,
        after: str | Message | None = None,
    ) -> ModelList[Message]:
        """Search one channel's messages (``GET /chat/{channel_id}/search``). Blocks.

        Args:
            channel_id: Channel id.
            query: Free text (non-empty).
            limit: Most results wanted (>= 1); omitted from the request when None.
            before: Only messages posted before this one (a :class:`Message` or its id);
                omitted when None.
            after: Only messages posted after this one (a :class:`Message` or its id);
                omitted when None.

        Returns:
            :class:`Message` instances, newest first as the service orders them; ``[]``
            when none.

        Raises:
            TypeError / ValueError: Bad arguments (named), before any request.
            ServiceAPIError: The service refused (403/404).
        """
        return search_messages(self._connection, channel_id, query, limit=limit, before=before, after=after)

    def load_commands(self, directory: str | os.PathLike[str]) -> Collection[str, Command]:
        """Load command files into :attr:`commands`.

        Non-recursive, ``*.py`` not starting with ``_``, bad files skipped
        with a :class:`CommandLoadWarning`; no dispatch.

        Args:
            directory: The folder to scan.

        Returns:
            :attr:`commands`, the same object at every call.

        Raises:
            TypeError: ``directory`` is not a str or path.
            FileNotFoundError: The folder does not exist.
            NotADirectoryError: The path is a file.
        """
        return load_commands(directory, self.commands)

    # -- presence: activity and status -----------------------------------------

    def set_activity(self, activity: Mapping[str, Any] | None) -> None:
        """Set or clear the bot's activity (socket event ``activity:update``).

        Fire-and-forget: returns once ``activity:update`` is written.

        Args:
            activity: A mapping with ``type`` (``using``, ``browsing``,
                ``listening``, ``playing``), ``name`` (cut to 128 characters),
                optional ``details`` (cut to 64) and ``startedAt``/``started_at``
                (epoch milliseconds, default now); or None to clear.

        Raises:
            TypeError: ``activity`` is not a mapping or None, or a field has the wrong type.
            ValueError: Unknown ``type`` or missing ``name``; nothing is sent.
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The socket stayed busy with another write for 10 s.
        """
        payload = _activity_payload(activity)
        self._connection.emit(endpoints.EMIT_ACTIVITY_UPDATE, payload)

    def set_status(self, status: str) -> None:
        """Set the bot's status (``presence:update``, then ``PATCH /users/settings``).

        Emits ``presence:update``, sets ``client.user.status`` at once, then
        persists with ``PATCH /users/settings``. If the PATCH fails, the error
        is raised and the new local status stays: the ``presence:update`` has
        already gone out, so the service shows the new status live, and putting
        the old one back locally would disagree with it. Call again to retry
        the persistence.

        Args:
            status: ``online``, ``idle``, ``dnd`` or ``invisible``.

        Raises:
            TypeError: ``status`` is not a str; nothing is sent.
            ValueError: Any other status; nothing is sent.
            ServiceAuthError: The socket is not connected; nothing is sent and
                the local status is unchanged.
            ServiceTimeoutError: The socket stayed busy with another write for
                10 s; the local status is unchanged.
            ServiceAPIError / ServiceTimeoutError / ServiceError: The PATCH
                failed (the new status was emitted and is kept locally).
        """
        _check_status(status)
        state = self._connection
        state.emit(endpoints.EMIT_PRESENCE_UPDATE, {"status": status})
        user = state.user
        if user is not None:
            user._set_status(status)
        state.request(Route(endpoints.SET_STATUS), json={"status": status})

    def set_presence(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        status: Any = MISSING,
        activity: Any = MISSING,
    ) -> None:
        """Set status and/or activity in one call.

        A key that is absent (or :data:`MISSING`) is left unchanged;
        ``activity=None`` clears the activity.

        Args:
            data: Optional mapping with ``status`` and/or ``activity``.
            status: As :meth:`set_status`.
            activity: As :meth:`set_activity`; None clears.

        Raises:
            TypeError / ValueError: Bad values (nothing is sent).
            ServiceAuthError: The socket is not connected.
            ServiceAPIError: The status PATCH failed (the new status is kept
                locally, as :meth:`set_status` explains).
        """
        if data is not None:
            if not isinstance(data, Mapping):
                raise TypeError(f"data must be a mapping or None, got {type(data).__name__}")
            if status is MISSING and "status" in data:
                status = data["status"]
            if activity is MISSING and "activity" in data:
                activity = data["activity"]
        if status is not MISSING and status is not None:
            _check_status(status)
        if activity is not MISSING:
            _activity_payload(activity)  # validate before anything is sent
        self._connection.require_gateway()
        # The activity first: set_status ends with the only REST call, so a failed PATCH comes
        # after both socket events were sent, never between them.
        if activity is not MISSING:
            self.set_activity(activity)
        if status is not MISSING and status is not None:
            self.set_status(status)


def _check_status(status: Any) -> None:
    """Raise when ``status`` is not one of the four presence statuses.

    Raises:
        TypeError: ``status`` is not a str.
        ValueError: Any other str.
    """
    if not isinstance(status, str):
        raise TypeError(f"status must be a str, got {type(status).__name__}")
    if status not in _STATUSES:
        raise ValueError(f"status must be one of {sorted(_STATUSES)}, got {status!r}")


def _activity_payload(activity: Any) -> dict[str, Any]:
    """Build the ``activity:update`` payload, validating first."""
    if activity is None:
        return {"type": "none", "name": ""}
    if not isinstance(activity, Mapping):
        to_dict = getattr(activity, "to_dict", None)
        if callable(to_dict):
            activity = to_dict()
        else:
            raise TypeError(f"activity must be a mapping or None, got {type(activity).__name__}")
    kind = activity.get("type")
    if kind not in _ACTIVITY_TYPES:
        raise ValueError(f"activity type must be one of {sorted(_ACTIVITY_TYPES)}, got {kind!r}")
    name = activity.get("name")
    if not isinstance(name, str):
        raise TypeError(f"activity name must be a str, got {type(name).__name__}")
    payload: dict[str, Any] = {"type": kind, "name": name[: _defaults.ACTIVITY_NAME_MAX]}
    details = activity.get("details")
    if details is not None:
        if not isinstance(details, str):
            raise TypeError(f"activity details must be a str or None, got {type(details).__name__}")
        payload["details"] = details[: _defaults.ACTIVITY_DETAILS_MAX]
    started = activity.get("startedAt", activity.get("started_at"))
    if started is None:
        started = int(time.time() * 1000)
    elif not isinstance(started, (int, float)) or isinstance(started, bool):
        raise TypeError("activity startedAt must be epoch milliseconds (int)")
    payload["startedAt"] = int(started)
    return payload


def create_dm(state: ConnectionState, user_id: str) -> DMChannel:
    """Open (or get) the DM with a user: ``GET /channels/dm/{user_id}``.

    The recipient is upserted into ``client.users`` and the DM into
    ``client.channels.cache``.

    Args:
        state: The client's connection state.
        user_id: The other user's public id.

    Returns:
        The :class:`DMChannel` (type ``"DM"``, ``server_id`` None).

    Raises:
        TypeError, ValueError: ``user_id`` is not a non-empty str (before any request).
        ServiceAPIError: 404 unknown user, 403 refused.
    """
    check_id(user_id, "user_id")
    data = state.request(Route(endpoints.OPEN_DM, user_id=user_id))
    if isinstance(data, dict) and isinstance(data.get("channel"), dict):
        data = data["channel"]
    if not isinstance(data, dict):
        raise TypeError(f"DM record must be a JSON object, got {type(data).__name__}")
    recipient_data = data.get("recipient")
    recipient = state.store_user(recipient_data) if isinstance(recipient_data, dict) else None
    channel = DMChannel(state, data, recipient=recipient)
    state.channels.cache[channel.id] = channel
    return channel


def invite_code(code_or_link: str) -> str:
    """The invite code of a code or a link whose path ends in ``/invite/CODE``.

    Raises:
        TypeError: Not a str.
        ValueError: Empty, or a link without ``/invite/<code>``.
    """
    if not isinstance(code_or_link, str):
        raise TypeError(f"code must be a str, got {type(code_or_link).__name__}")
    text = code_or_link.strip()
    if not text:
        raise ValueError("code must not be empty")
    if "/" not in text:
        return text
    path = urlsplit(text).path if "://" in text else text.split("?", 1)[0].split("#", 1)[0]
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[-2] == "invite":
        return unquote(parts[-1])
    raise ValueError(f"code must be an invite code or a link ending in /invite/<code>, got {code_or_link!r}")


def fetch_invite(state: ConnectionState, code_or_link: str) -> Invite:
    """Resolve an invite read-only: ``GET /invites/{code}`` (a bot cannot accept invites).

    Args:
        state: The client's connection state.
        code_or_link: The code, or a full link ``{site_url}/invite/CODE``.

    Returns:
        The :class:`Invite` with its partial ``guild`` and ``uses``.

    Raises:
        TypeError, ValueError: Not a code or invite link (before any request).
        ServiceAPIError: 404 unknown or expired code.
    """
    code = invite_code(code_or_link)
    data = state.request(Route(endpoints.GET_INVITE, code=code))
    if isinstance(data, dict) and isinstance(data.get("invite"), dict) and "code" not in data:
        data = data["invite"]
    return Invite(state, data)


def search_messages(
    state: ConnectionState,
    channel_id: str,
    query: str,
    *,
    limit: int | None = None,
    before: str | Message | None = None,
    after: str | Message | None = None,
) -> ModelList[Message]:
    """Keyword search in one channel: ``GET /chat/{channel_id}/search?q=&limit=&before=&after=``.

    ``limit``, ``before`` and ``after`` are omitted from the query when None. Message authors
    are not added to ``client.users``.

    Args:
        state: The client's connection state.
        channel_id: The channel's public id.
        query: The search text (non-empty).
        limit: Most results wanted (>= 1), or None for the service default (25 on the
            emulator, which caps it at 100).
        before: Only messages posted before this message (a :class:`Message` or its id).
        after: Only messages posted after this message (a :class:`Message` or its id).

    Returns:
        The matching messages (content decoded), newest first as the service orders them;
        ``[]`` when none (also when ``before`` / ``after`` is not a message of this channel,
        on the emulator).

    Raises:
        TypeError, ValueError: Bad arguments (before any request).
        ServiceAPIError: 403/404 for an inaccessible channel.
    """
    check_id(channel_id, "channel_id")
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must not be empty")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise TypeError(f"limit must be an int or None, got {type(limit).__name__}")
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
    params: dict[str, Any] = {"q": query}
    if limit is not None:
        params["limit"] = limit
    for name, bound in (("before", before), ("after", after)):
        if bound is not None:
            params[name] = check_id(bound.id if isinstance(bound, Message) else bound, name)
    data = state.request(Route(endpoints.SEARCH_MESSAGES, channel_id=channel_id), params=params)
    items = data.get("messages") if isinstance(data, dict) else data
    out: list[Message] = []
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict):
            try:
                out.append(Message(state, item))
            except ValueError:
                continue
    return ModelList(out)
