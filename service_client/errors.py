"""Every exception and warning the library raises.

The tree::

    ServiceError(Exception)
    ├── ServiceAPIError          .status, .path, .body, .data; str(e) starts "API Error <status>: "
    │   └── RateLimitError       .retry_after (seconds or None)
    ├── ServiceAuthError
    │   └── EmptyMessageError    (also a ValueError) a send with no content and no embed
    ├── ServiceTimeoutError      (also a builtin TimeoutError)
    ├── GatewayError             .code, .event; a socket operation the service refused
    │   └── GatewayTimeoutError  code "TIMEOUT" (also a ServiceTimeoutError)
    ├── ChannelOverwriteError    .channel, .channel_id, .index, .target_type, .target_id; __cause__
    ├── ChannelAccessError       .channel_id, .action, .reason, .missing; a send, reaction or edit
    │                            that cannot succeed there (known before anything is sent)
    ├── BadArgumentError         (also a ValueError) raised by an argument converter
    ├── ExtensionError           .name (the extension's module); loading cogs from a module
    │   ├── ExtensionNotFoundError       (no module of that name)
    │   ├── ExtensionAlreadyLoadedError
    │   ├── ExtensionNotLoadedError
    │   ├── NoEntryPointError            (the module has no setup(client) function)
    │   └── ExtensionFailedError         .original (also the __cause__): importing the module,
    │                                    or its setup(client), raised
    ├── VoiceConnectionError     .channel_id, .cause; the voice media could not connect
    └── CommandError             .command_name, .context; str(e) is the text shown to the author
        ├── CommandNotFoundError     .name
        ├── CommandSyntaxError       (an opening double quote never closed)
        ├── CommandUsageError        .usage, .parameter
        │   └── CommandArgumentError .parameter, .expected, .given
        ├── CheckFailure             a check refused the author, the place or the moment
        │   ├── NoPrivateMessage         (a server-only command in a DM)
        │   ├── PrivateMessageOnly       (a DM-only command in a server)
        │   ├── MissingRole              .roles (names or ids; any one would do)
        │   ├── WrongChannel             .channels (names or ids)
        │   └── CommandPermissionError   .missing (Permissions)
        │       └── MissingPermissions
        ├── CommandCooldownError     .retry_after (seconds), .per (the BucketType)
        ├── MaxConcurrencyReached    .number, .per (the BucketType)
        └── CommandInvokeError       .original (also the __cause__)

    InsecureHostWarning(UserWarning)
    DuplicateClientWarning(UserWarning)
    CommandLoadWarning(UserWarning)

The command errors are raised by
:class:`~service_client.dispatcher.CommandDispatcher` for a message that
names a command but cannot run it; the dispatcher reports each one to the
author in the channel and emits it as the client's ``command_error`` event,
and as its ``error`` event (a refusal, anything but
:class:`CommandInvokeError`, only while the client has an ``error`` listener
and no ``command_error`` listener; else it is logged at INFO). The
exception is :class:`CommandNotFoundError` (a word that names no command):
the dispatcher only logs it at DEBUG, or replies its text with
``reply_unknown=True``, and never emits it, since several bots may share a
prefix.

The extension errors are raised by ``client.load_extension``,
``unload_extension`` and ``reload_extension`` (see
:mod:`service_client.dispatcher.extensions`); each names the extension's
module in its text and in :attr:`ExtensionError.name`.

Two failures are plain builtins rather than library errors: a bot calling
``client.guilds.create`` gets :class:`PermissionError` ("Bots cannot create
servers.") before any request, and a ``send_message`` whose echo does not
arrive within 10 s gets :class:`TimeoutError` ("send_message timeout after
10s"). The errors guide (``docs/guides/errors.rst``) tells which call raises
what.

No exception text, attribute or ``repr`` ever contains the bot token: the
library never passes it to an exception, and a server's text that quotes it
back (an error body echoing the ``Authorization`` header, a redirect's
``Location``, a socket refusal) shows it as ``[REDACTED]`` in the message,
``body`` and ``data``. Every error round-trips through :mod:`pickle` with its
attributes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from .permissions import Permissions

__all__ = [
    "BadArgumentError",
    "ChannelAccessError",
    "ChannelOverwriteError",
    "CheckFailure",
    "CommandArgumentError",
    "CommandCooldownError",
    "CommandError",
    "CommandInvocation",
    "CommandInvokeError",
    "CommandLoadWarning",
    "CommandNotFoundError",
    "CommandPermissionError",
    "CommandSyntaxError",
    "CommandUsageError",
    "DuplicateClientWarning",
    "EmptyMessageError",
    "ExtensionAlreadyLoadedError",
    "ExtensionError",
    "ExtensionFailedError",
    "ExtensionNotFoundError",
    "ExtensionNotLoadedError",
    "GatewayError",
    "GatewayTimeoutError",
    "InsecureHostWarning",
    "MaxConcurrencyReached",
    "MissingPermissions",
    "MissingRole",
    "NoEntryPointError",
    "NoPrivateMessage",
    "PrivateMessageOnly",
    "RateLimitError",
    "ServiceAPIError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceTimeoutError",
    "VoiceConnectionError",
    "WrongChannel",
]

#: Characters of a non-JSON error body quoted in an error message.
_BODY_EXCERPT = 500


class ServiceError(Exception):
    """Base of every error raised by the library; ``except ServiceError`` catches them all."""


class ServiceAuthError(ServiceError):
    """Missing or rejected credentials, or a socket operation while not connected.

    Raised for an empty or non-string token at ``login``, a token the service
    refuses, a message with no content and no embed (:class:`EmptyMessageError`),
    and every socket operation (``send_message``, ``set_activity``,
    ``set_status``, typing, voice, ``Guild.kick``/``ban``/``unban`` and the
    ``Member`` shortcuts) while the socket is not connected.
    """


class EmptyMessageError(ServiceAuthError, ValueError):
    """A send with no content and no embed: there is nothing to send, and nothing was sent.

    It is a :class:`ServiceAuthError`, as in the service's official JavaScript client, and also
    a builtin :class:`ValueError`, like the errors of the other message rules (content that is only
    whitespace, content or embeds over their limits), so ``except ValueError`` catches every
    refused message. Raised at once by every send (``send_message``, ``Channel.send``,
    ``Message.reply``, a DM, a command context's ``reply`` and ``send``) with the text
    ``"send_message requires non-empty content or at least one embed."``; by
    ``Message.edit`` and ``Webhook.execute`` with ``edit`` or ``execute`` in place of
    ``send_message``.
    """


class ServiceTimeoutError(ServiceError, TimeoutError):
    """A request or wait that ran out of time after every retry; also a builtin :class:`TimeoutError`."""


class VoiceConnectionError(ServiceError):
    """The voice media (the LiveKit connection behind a voice channel) failed or was lost.

    Raised by ``client.voice.join`` when the media does not connect within the join timeout
    (nothing is left running and the channel is left again), and by playback and recording
    calls on a connection whose media is closed. ``str(e)`` names the cause.

    Attributes:
        channel_id: The voice channel, or None.
        cause: A short description of what failed (the SDK's message, a timeout).
    """

    def __init__(self, message: str, *, channel_id: str | None = None, cause: str | None = None) -> None:
        super().__init__(message)
        self.channel_id = channel_id
        self.cause = cause

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_voice_error, (str(self), self.channel_id, self.cause))


def _rebuild_voice_error(message: str, channel_id: str | None, cause: str | None) -> VoiceConnectionError:
    return VoiceConnectionError(message, channel_id=channel_id, cause=cause)


class ServiceAPIError(ServiceError):
    """A non-OK REST answer after retries, or a 2xx whose body is not JSON.

    ``str(e)`` starts with ``"API Error <status>: "`` followed by the
    service's error text (or the start of the body).

    Attributes:
        status: The HTTP status code.
        path: The request path (no query, webhook tokens redacted).
        body: The raw response body as text ("" when none).
        data: The parsed JSON body, or None when the body is not JSON.
    """

    def __init__(
        self,
        status: int,
        path: str,
        body: str = "",
        data: Any = None,
        *,
        message: str | None = None,
    ) -> None:
        self.status = int(status)
        self.path = path
        self.body = body
        self.data = data
        if message is None:
            message = f"API Error {self.status}: {error_text(body, data)}"
        self.message = message
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_from_state, (type(self), self.__dict__.copy()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, path={self.path!r})"


class RateLimitError(ServiceAPIError):
    """A 429 answer after retries, or a ``Retry-After`` longer than the session allows.

    Attributes:
        retry_after: Seconds the service asked to wait, or None when it gave no
            usable ``Retry-After``.
    """

    def __init__(
        self,
        status: int,
        path: str,
        body: str = "",
        data: Any = None,
        *,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(status, path, body, data, message=message)


_E = TypeVar("_E", bound=ServiceError)


def _rebuild_from_state(cls: type[_E], state: dict[str, Any]) -> _E:
    """An error of ``cls`` with the attributes of ``state`` (its ``message`` as its text): how
    the errors with keyword attributes come back from :mod:`pickle`."""
    err = cls.__new__(cls)
    Exception.__init__(err, state.get("message", ""))
    err.__dict__.update(state)
    return err


def error_text(body: str, data: Any = None) -> str:
    """The service's error text from a response body.

    Args:
        body: The raw body text.
        data: The parsed JSON body, if already parsed (parsed here otherwise).

    Returns:
        The JSON ``error`` (else ``message``) field when the body is a JSON
        object carrying one, else the first 500 characters of the body (also
        for JSON nested too deeply to parse), else ``"(empty body)"``.
    """
    if data is None and body:
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            data = None
    if isinstance(data, dict):
        for key in ("error", "message"):
            value = data.get(key)
            if isinstance(value, str) and value:
                return value
    text = body.strip()
    return text[:_BODY_EXCERPT] if text else "(empty body)"


class GatewayError(ServiceError):
    """A socket operation answered with an acknowledgement was refused, or never answered.

    Raised by the moderation calls (:meth:`Guild.kick <service_client.Guild.kick>`,
    :meth:`~service_client.Guild.ban`, :meth:`~service_client.Guild.unban` and the
    :class:`~service_client.Member` shortcuts), which wait for the service's
    acknowledgement. ``str(e)`` is ``"<event> refused: <code>"``.

    Args:
        code: The service's error key, or ``"TIMEOUT"``.
        event: The socket event that was refused, e.g. ``"server:kick"``.

    Attributes:
        code: The error key the service answered, for example
            ``"servers.errors.cannot_kick_owner"``, ``"servers.errors.cannot_ban_owner"``,
            ``"servers.errors.missing_permission"``, ``"servers.errors.not_found"``,
            ``"servers.errors.already_banned"`` or ``"servers.errors.not_banned"``;
            ``"TIMEOUT"`` (a :class:`GatewayTimeoutError`) when no answer came in time.
        event: The socket event name, e.g. ``"server:ban"``.
    """

    def __init__(self, code: str, *, event: str) -> None:
        self.code = code
        self.event = event
        self.message = f"{event} refused: {code}"
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_from_state, (type(self), self.__dict__.copy()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, event={self.event!r})"


class GatewayTimeoutError(GatewayError, ServiceTimeoutError):
    """No acknowledgement arrived in time (10 s); :attr:`code` is ``"TIMEOUT"``.

    Also a :class:`ServiceTimeoutError` and a builtin :class:`TimeoutError`.
    The service may still have done the operation: the events that follow tell.
    """

    def __init__(self, code: str = "TIMEOUT", *, event: str, timeout: float = 10.0) -> None:
        super().__init__(code, event=event)
        self.timeout = timeout
        self.message = f"{event}: no answer within {timeout:g} s (code {code})"
        Exception.__init__(self, self.message)


class ChannelAccessError(ServiceError):
    """A send, reaction, edit or delete that cannot succeed in its channel, known at once.

    The service answers nothing to a message it refuses (the sender would only time out), so
    the client checks what its caches can tell before sending, and raises this error instead
    of waiting: the channel is unknown, the bot is not in its server, or the bot lacks a
    permission there (its roles and the channel's overwrites, when the client knows them).
    ``send_message`` also raises it about a second after sending, when no echo came and the
    service says the channel does not exist or is hidden from the bot.

    Args:
        channel_id: The channel.
        action: ``"send"``, ``"react"``, ``"edit"`` or ``"delete"``.
        reason: ``"unknown_channel"``, ``"not_a_member"``, ``"missing_permissions"`` or
            ``"not_the_author"`` (an edit of another user's message).
        detail: The sentence that says why, shown after the channel.
        missing: The permissions the bot lacks (``reason`` ``"missing_permissions"``), else None.

    Attributes:
        channel_id, action, reason, missing: As above.
    """

    def __init__(self, channel_id: str, *, action: str, reason: str, detail: str, missing: Any = None) -> None:
        self.channel_id = channel_id
        self.action = action
        self.reason = reason
        self.missing = missing
        verb = {"send": "send to", "react": "react in", "edit": "edit a message in", "delete": "delete a message in"}
        self.message = f"cannot {verb.get(action, action)} channel {channel_id}: {detail}"
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_from_state, (type(self), self.__dict__.copy()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(channel_id={self.channel_id!r}, action={self.action!r}, reason={self.reason!r})"


class ChannelOverwriteError(ServiceError):
    """A channel was created but one of its permission overwrites could not be set.

    Raised by ``guild.channels.create(..., overwrites=...)``, which creates the
    channel first and then sends one request per overwrite: the channel is kept
    (delete it with ``error.channel.delete()`` if it must not stay), the
    overwrites before ``index`` are set, the later ones were not sent. The
    request's own error (a :class:`ServiceAPIError`, a
    :class:`ServiceTimeoutError`...) is ``__cause__``.

    Attributes:
        channel: The created :class:`~service_client.Channel` (None after unpickling).
        channel_id: Its id.
        index: 0-based position of the failed overwrite in the given order.
        total: How many overwrites were asked for.
        target_type: ``"ROLE"`` or ``"MEMBER"``.
        target_id: The role id or user id of the failed overwrite.
    """

    def __init__(self, channel: Any, channel_id: str, index: int, total: int, target_type: str,
                 target_id: str, cause: BaseException | None = None) -> None:
        self.channel = channel
        self.channel_id = channel_id
        self.index = index
        self.total = total
        self.target_type = target_type
        self.target_id = target_id
        reason = f": {cause}" if cause is not None else ""
        self.message = (
            f"channel {channel_id} was created and kept, but its overwrite {index + 1} of {total} "
            f"({target_type} {target_id}) failed{reason}"
        )
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        state = {k: v for k, v in self.__dict__.items() if k != "channel"}
        return (_rebuild_from_state, (type(self), {**state, "channel": None}))


class InsecureHostWarning(UserWarning):
    """The client is configured to send its token to an unexpected host or over plain HTTP.

    Checked on the URLs actually used, at every construction: one warning when
    a host is neither the service's own (``api.service-chat.app``,
    ``rt.service-chat.app``) nor localhost/127.0.0.1, another when a URL is
    not https outside localhost. Shown every time, never deduplicated; it
    never blocks.
    """


class DuplicateClientWarning(UserWarning):
    """A client logs in with the token of another client of this process that is still live.

    Both clients then receive every event, so a listener registered on both runs twice (the
    usual cause: a notebook cell that creates and logs in a client, run again). Shown at every
    such login, never deduplicated; it never blocks. Destroy the old client first
    (``client.destroy()``), or every client of the process with ``Client.destroy_all()``.
    """


class CommandLoadWarning(UserWarning):
    """A command file was skipped, or replaced an earlier command, in ``load_commands``."""


class CommandInvocation(Protocol):
    """The command invocation a :class:`CommandError` came from, by what it offers.

    The errors sit below every other part of the library, so they name the invocation by
    this protocol rather than by its class. At run time ``error.context`` is the
    :class:`~service_client.dispatcher.CommandContext` the dispatcher built, with all of its
    attributes (``author``, ``member``, ``client``, ``send``...); a type checker knows the
    members below, and the others after ``isinstance(error.context, CommandContext)``.
    """

    @property
    def message(self) -> Any:
        """The :class:`~service_client.Message` that carried the command."""

    @property
    def args(self) -> Sequence[str]:
        """The text read for each argument, as typed, in order."""

    @property
    def prefix(self) -> str:
        """The prefix the message started with."""

    @property
    def invoked_with(self) -> str:
        """The command word as typed (a name or an alias)."""

    @property
    def channel_id(self) -> str:
        """The channel the command was written in."""

    @property
    def server_id(self) -> str | None:
        """The server the command was written in; None in a DM."""

    def reply(self, options: Any = None, *, content: str | None = None,
              embeds: Sequence[Any] | None = None) -> Any:
        """Reply to the command's message; returns the sent :class:`~service_client.Message`."""


class CommandError(ServiceError):
    """A message named a command that could not run; ``str(e)`` is the text for the author.

    Raised inside :class:`~service_client.dispatcher.CommandDispatcher`, or by
    a command itself to refuse in its own words (``raise CommandError("count
    must be between 1 and 100")``; the dispatcher fills in ``command_name``
    and ``context``). The dispatcher replies ``str(e)`` to the message and
    emits the error as ``command_error`` and ``error`` (see the module's text).
    Pickling keeps every attribute except :attr:`context` (it becomes None).

    Args:
        text: The message shown to the author.
        command_name: The command's name (None when no command was found).
        context: The invocation, when there is one.

    Attributes:
        command_name: The command's name, or None.
        context: The :class:`~service_client.dispatcher.CommandContext`
            (message, author, channel) of the failed invocation, or None; typed as a
            :class:`CommandInvocation`.
    """

    def __init__(
        self,
        text: str,
        *,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text)
        self.command_name = command_name
        self.context = context

    def __reduce__(self) -> tuple[Any, ...]:
        state = {k: v for k, v in self.__dict__.items() if k != "context"}
        state["context"] = None
        return (_rebuild_command_error, (type(self), str(self), state))


def _rebuild_command_error(cls: type[CommandError], text: str, state: dict[str, Any]) -> CommandError:
    err = cls.__new__(cls)
    Exception.__init__(err, text)
    err.__dict__.update(state)
    return err


class CommandNotFoundError(CommandError):
    """The word after the prefix is no command name or alias.

    Not emitted as ``error``: the dispatcher ignores such a message (logging
    it at DEBUG), or replies ``str(e)`` when created with ``reply_unknown=True``.

    Attributes:
        name: The word as typed.
    """

    def __init__(self, text: str, *, name: str, context: CommandInvocation | None = None) -> None:
        super().__init__(text, context=context)
        self.name = name


class CommandSyntaxError(CommandError):
    """The arguments cannot be read: a word starts with a double quote that is never closed.

    Only double quotes (``"`` and ``“``) must be closed; an apostrophe or a
    single quote that is not closed is ordinary text.
    """


class CommandUsageError(CommandError):
    """The arguments do not fit the command's parameters (too few or too many).

    Attributes:
        usage: The usage line, e.g. ``"!warn <user_id> [reason...]"``.
        parameter: The name of the required parameter that got no argument,
            or None (too many words).
    """

    def __init__(
        self,
        text: str,
        *,
        usage: str,
        parameter: str | None = None,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.usage = usage
        self.parameter = parameter


class CommandArgumentError(CommandUsageError):
    """An argument could not be converted to the type its parameter is annotated with.

    For example ``!roll ten`` for ``def roll(ctx, sides: int)``, or a member
    mention that names nobody of the server. ``str(e)`` names the parameter,
    what it expected and what was given, then the usage line::

        Bad argument <sides: integer>: expected a whole number, got "ten". Usage: !roll <sides: integer>

    Not logged as an error: the author typed something wrong, the bot did not
    fail. The converter's own exception, if any, is ``__cause__``.

    Attributes:
        parameter: The parameter's name (``"sides"``).
        expected: What the parameter accepts, in words (``"a whole number"``).
        given: The text the author typed for it, exactly.
        usage: The command's usage line.
    """

    parameter: str

    def __init__(
        self,
        text: str,
        *,
        usage: str,
        parameter: str,
        expected: str,
        given: str,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text, usage=usage, parameter=parameter, command_name=command_name, context=context)
        self.expected = expected
        self.given = given


class BadArgumentError(ServiceError, ValueError):
    """Raised by an argument converter: the text cannot become a value of its type.

    Raise it from a converter of your own (see
    :meth:`CommandDispatcher.converter <service_client.CommandDispatcher.converter>`)
    with a message for the author, saying why: the dispatcher then answers with a
    :class:`CommandArgumentError` whose text ends with that message. A converter
    may also raise a plain :class:`ValueError` or :class:`TypeError`; its text
    is then not shown to the author (it may be an internal detail). Also a
    :class:`ValueError`.

    Args:
        reason: Why the text was refused, written for the author, e.g.
            ``"several members are named bob: use a mention or an id"``.
    """


class CheckFailure(CommandError):
    """A check of the command refused this author, place or moment, before its arguments were read.

    The dispatcher raises it when a check (:func:`~service_client.check`,
    :func:`~service_client.has_role`, ...) says no; a check may raise it itself, or a
    subclass, with its own text for the author.
    """


class NoPrivateMessage(CheckFailure):
    """The command works only in a server, and was written in a direct message."""


class PrivateMessageOnly(CheckFailure):
    """The command works only in direct messages, and was written in a server."""


class MissingRole(CheckFailure):
    """The author holds none of the roles the command needs.

    Attributes:
        roles: The roles needed, as the check was given them (names or ids); any one would do.
    """

    def __init__(self, text: str, *, roles: Sequence[str], command_name: str | None = None,
                 context: CommandInvocation | None = None) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.roles = tuple(roles)


class WrongChannel(CheckFailure):
    """The command works only in some channels, and was written in another one.

    Attributes:
        channels: The channels allowed, as the check was given them (names or ids).
    """

    def __init__(self, text: str, *, channels: Sequence[str], command_name: str | None = None,
                 context: CommandInvocation | None = None) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.channels = tuple(channels)


class CommandPermissionError(CheckFailure):
    """The author lacks a server permission the command requires; raised as :class:`MissingPermissions`.

    Attributes:
        missing: The required :class:`~service_client.Permissions` the author
            does not hold.
    """

    def __init__(
        self,
        text: str,
        *,
        missing: Permissions,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.missing = missing


class MissingPermissions(CommandPermissionError):
    """The author lacks server permissions the command needs (``requires=`` or ``has_permissions``)."""


class CommandCooldownError(CommandError):
    """The command ran less than its cooldown ago in the author's bucket (by default, by the author).

    Attributes:
        retry_after: Seconds until it may run again there (> 0).
        per: Who shares the cooldown: a :class:`~service_client.BucketType` (None when not given).
    """

    def __init__(
        self,
        text: str,
        *,
        retry_after: float,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
        per: Any = None,
    ) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.retry_after = retry_after
        self.per = per


class MaxConcurrencyReached(CommandError):
    """As many runs of the command as its ``max_concurrency`` allows are going on in the author's bucket.

    Attributes:
        number: The limit (``max_concurrency``).
        per: Who shares it: a :class:`~service_client.BucketType`.
    """

    def __init__(
        self,
        text: str,
        *,
        number: int,
        per: Any,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.number = number
        self.per = per


class CommandInvokeError(CommandError):
    """The command raised, or the author's permissions could not be read.

    The author sees a short notice without the exception's text; the full
    exception is :attr:`original` (also chained as ``__cause__``) and is
    logged with its traceback.

    Attributes:
        original: The exception raised.
    """

    def __init__(
        self,
        text: str,
        *,
        original: BaseException,
        command_name: str | None = None,
        context: CommandInvocation | None = None,
    ) -> None:
        super().__init__(text, command_name=command_name, context=context)
        self.original = original


class ExtensionError(ServiceError):
    """Loading, unloading or reloading an extension (a module of cogs) failed.

    Raised by ``client.load_extension``, ``unload_extension`` and
    ``reload_extension`` (see :class:`~service_client.dispatcher.extensions.Extensions`);
    the text names the extension and says in which state it is left.

    Args:
        text: What happened, naming the extension.
        name: The extension's module name (``"bot.economy"``).

    Attributes:
        name: The extension's module name.
    """

    def __init__(self, text: str, *, name: str) -> None:
        super().__init__(text)
        self.name = name

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_extension_error, (type(self), str(self), dict(self.__dict__)))


def _rebuild_extension_error(cls: type[ExtensionError], text: str, state: dict[str, Any]) -> ExtensionError:
    err = cls.__new__(cls)
    Exception.__init__(err, text)
    err.__dict__.update(state)
    return err


class ExtensionNotFoundError(ExtensionError):
    """No module of the extension's name can be found (nothing was imported, nothing changed)."""


class ExtensionAlreadyLoadedError(ExtensionError):
    """``load_extension`` of an extension that is loaded already (use ``reload_extension``)."""


class ExtensionNotLoadedError(ExtensionError):
    """``unload_extension`` or ``reload_extension`` of an extension that is not loaded."""


class NoEntryPointError(ExtensionError):
    """The extension's module has no ``setup(client)`` function (it was not kept loaded)."""


class ExtensionFailedError(ExtensionError):
    """Importing the extension's module, or its ``setup(client)``, raised.

    What the extension had added before it failed (cogs, commands, listeners,
    tasks) was removed again; the text says in which state the extension is
    left (not loaded, or, for a reload, its old version loaded again).

    Attributes:
        original: The exception raised (also chained as ``__cause__``).
    """

    def __init__(self, text: str, *, name: str, original: BaseException) -> None:
        super().__init__(text, name=name)
        self.original = original
