"""The client operations of :class:`~service_client.Client`: REST calls, sends, presence.

:class:`ClientOperations` is a mixin of :class:`~service_client.Client`
holding what a bot calls once logged in (``api_call``, ``send_message``,
``create_dm``, ``fetch_invite``, ``search_messages``, ``load_commands``,
``set_activity``, ``set_status``, ``set_presence``) and the transport helpers
the managers and models use; the lifecycle (login, connection, reconnect,
destroy, state) stays in :mod:`service_client.client`.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as _FutureTimeout
from typing import TYPE_CHECKING, Any, cast

from . import _defaults
from ._defaults import MISSING
from .errors import ServiceAuthError, ServiceTimeoutError
from .events.workers import flush_handoff
from .managers import operations as _ops
from .models.collection import Collection
from .rest.route import Route

if TYPE_CHECKING:
    from .client import Client
    from .commands import Command
    from .gateway.connection import GatewayConnection
    from .models.dm_channel import DMChannel
    from .models.invite import Invite
    from .models.message import Message
    from .models.user import User
    from .rest.session import RestSession

__all__ = ["MISSING", "ClientOperations"]

_STATUSES = frozenset({"online", "idle", "dnd", "invisible"})
_ACTIVITY_TYPES = frozenset({"using", "browsing", "listening", "playing"})


class ClientOperations:
    """REST calls, message sends and presence of a :class:`~service_client.Client`.

    Thread-safe, like the client: every method may be called from any thread,
    including from inside a listener.
    """

    # Set by Client.__init__.
    _rest: RestSession
    _gateway: GatewayConnection | None
    _destroyed: threading.Event
    _nonces_lock: threading.Lock
    _nonces: dict[str, Future[Any]]
    user: User | None
    commands: Collection[str, Command]

    def _as_client(self) -> Client:
        """This object as the :class:`~service_client.Client` it is a mixin of."""
        return cast("Client", self)

    # -- internal transport helpers (used by managers and models) -------------

    def _request(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        timeout_ms: int = _defaults.DEFAULT_TIMEOUT_MS,
        max_retries: int = _defaults.DEFAULT_MAX_RETRIES,
        authorized: bool = True,
    ) -> Any:
        """Perform one REST request through the session's queue (library use).

        ``authorized=False`` sends no ``Authorization`` header and needs no login
        (webhook execution).
        """
        return self._rest.request(
            route, params=params, json=json, timeout_ms=timeout_ms, max_retries=max_retries, authorized=authorized
        )

    def _submit(
        self,
        route: Route,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        timeout_ms: int = _defaults.DEFAULT_TIMEOUT_MS,
        max_retries: int = _defaults.DEFAULT_MAX_RETRIES,
    ) -> Future[Any]:
        """Queue one REST request and return its Future (library use)."""
        return self._rest.submit(route, params=params, json=json, timeout_ms=timeout_ms, max_retries=max_retries)

    def _require_gateway(self) -> GatewayConnection:
        gateway = self._gateway
        if gateway is None or not gateway.connected:
            if self._destroyed.is_set():
                raise ServiceAuthError("the client was destroyed; create a new Client")
            raise ServiceAuthError("the socket is not connected (call login() first, or wait for reconnect)")
        return gateway

    def _emit(self, event: str, *args: Any) -> None:
        """Emit a socket event (fire-and-forget; library use).

        Raises:
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: The write could not be done within 10 s.
        """
        self._require_gateway().emit(event, *args)

    def _call(self, event: str, *args: Any, timeout: float = _defaults.ACK_TIMEOUT_S) -> list[Any]:
        """Emit a socket event and wait for its ack (library use).

        Raises:
            ServiceAuthError: The socket is not connected.
            ServiceTimeoutError: No ack within ``timeout`` seconds.
        """
        return self._require_gateway().call(event, *args, timeout=timeout)

    def _resolve_nonce(self, nonce: str, message: Message) -> None:
        """Complete the pending ``send_message`` of ``nonce`` (reader thread)."""
        with self._nonces_lock:
            fut = self._nonces.pop(nonce, None)
        if fut is not None and not fut.done():
            # Only our own sends wake a caller (other members' echoes carry their nonces too):
            # the woken sender comes after every event read before its message.
            flush_handoff()
            try:
                fut.set_result(message)
            except Exception:  # noqa: BLE001 - completed concurrently (timeout): nothing to do
                pass

    # -- operations -----------------------------------------------------------

    def api_call(
        self,
        path: str,
        *,
        method: str = "GET",
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_ms: int = _defaults.DEFAULT_TIMEOUT_MS,
        max_retries: int = _defaults.DEFAULT_MAX_RETRIES,
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
            timeout_ms: Per-attempt timeout, milliseconds, connect and read included.
            max_retries: Retries after the first attempt (on network failure,
                timeout, 429, 502, 503, 504).

        Returns:
            Parsed JSON, or None for 204 and for an empty 2xx body.

        Raises:
            ValueError: ``path`` does not start with ``/``, or a bad method,
                ``timeout_ms`` or ``max_retries``.
            TypeError: ``body`` is not str/bytes/None, or ``headers`` is not a
                mapping of str to str.
            ServiceAuthError: No token (before login, after destroy); nothing is sent.
            RateLimitError: 429 after retries, or a 429 whose ``Retry-After``
                is beyond ``max_retry_after``.
            ServiceAPIError: Any other non-2xx after retries, or a 2xx whose body is not JSON.
            ServiceTimeoutError: The last attempt timed out.
            ServiceError: A network failure after the last retry (cause chained),
                or the client was destroyed while the call waited.
        """
        from .rest.route import Route

        # The session checks body, headers, timeout_ms and max_retries before anything is queued.
        route = Route.from_path(method, path)
        return self._rest.request(
            route,
            body=body,
            headers=headers,
            timeout_ms=timeout_ms,
            max_retries=max_retries,
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
                (naming it), before anything is sent.
            ServiceAuthError: The socket is not connected; or no content and no
                embed ("send_message requires non-empty content or at least one embed.").
            TimeoutError: No echo within 10 s ("send_message timeout after 10s";
                e.g. unknown channel or missing permission: the service says nothing).
                The 10 s include waiting for the socket while another thread writes
                and the write itself; a write that stalls past them also drops the
                connection, which is then re-established.
            ServiceError: The client was destroyed before the echo. A network cut does not
                end the wait: an echo lost with the socket gives the TimeoutError.
        """
        if not isinstance(channel_id, str):
            raise TypeError(f"channel_id must be a str, got {type(channel_id).__name__}")
        if not channel_id:
            raise ValueError("channel_id must be a non-empty str")
        nonce = uuid.uuid4().hex
        payload = _ops.build_message_payload(
            channel_id, options, content=content, embeds=embeds, reply_to_id=reply_to_id, nonce=nonce
        )
        gateway = self._require_gateway()
        bound = _defaults.SEND_TIMEOUT_S
        deadline = time.monotonic() + bound
        fut: Future[Message] = Future()
        with self._nonces_lock:
            self._nonces[nonce] = fut
        try:
            if self._destroyed.is_set():
                raise ServiceAuthError("the client was destroyed; create a new Client")
            try:
                # The 10 s cover the wait for the socket (another thread may be writing),
                # the write and the echo.
                gateway.emit("message:send", payload, timeout=bound)
                return fut.result(max(0.0, deadline - time.monotonic()))
            except (_FutureTimeout, ServiceTimeoutError):
                raise TimeoutError("send_message timeout after 10s") from None
        finally:
            with self._nonces_lock:
                self._nonces.pop(nonce, None)

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
        return _ops.create_dm(self._as_client(), user_id)

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
        return _ops.fetch_invite(self._as_client(), code)

    def search_messages(
        self,
        channel_id: str,
        query: str,
        *,
        limit: int | None = None,
        before: str | Message | None = None,
        after: str | Message | None = None,
    ) -> list[Message]:
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
        return _ops.search_messages(self._as_client(), channel_id, query, limit=limit, before=before, after=after)

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
        from .commands import load_commands

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
        self._emit("activity:update", payload)

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
        self._emit("presence:update", {"status": status})
        user = self.user
        if user is not None:
            user.status = status
        self._request(Route("PATCH", "/users/settings"), json={"status": status})

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
        self._require_gateway()
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
