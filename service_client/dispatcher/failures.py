"""What a :class:`~service_client.CommandDispatcher` says when a command message goes wrong.

The errors for arguments that do not fit, for a failure of the bot's own code,
and the report of every failure: a reply to the author, the ``command_error``
event, and the ``error`` event for the failures of the bot (see
:mod:`service_client.dispatcher.core` for when each is sent).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import (
    CommandArgumentError,
    CommandError,
    CommandInvokeError,
    CommandNotFoundError,
    CommandSyntaxError,
    CommandUsageError,
    ServiceError,
)
from .context import CommandContext
from .parsing import ConversionFailed, MissingArgument, TooManyArguments, UnclosedQuote

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client

__all__ = ["argument_error", "internal_error", "report", "reply_unknown", "syntax_error"]

_log = logging.getLogger("service_client.dispatcher")

#: Characters of a refused argument quoted in the reply.
_GIVEN_SHOWN = 100


def internal_error(ctx: CommandContext, name: str, word: str, exc: Exception) -> CommandInvokeError:
    """Log ``exc`` (a failure of the bot's code) with its traceback; the error to report."""
    _log.error("command %r raised", name, exc_info=exc)
    return CommandInvokeError(
        f"Sorry, {ctx.prefix}{word} failed because of an internal error.",
        original=exc,
        command_name=name,
        context=ctx,
    )


def syntax_error(ctx: CommandContext, exc: UnclosedQuote) -> CommandSyntaxError:
    """The error for a double quote never closed."""
    return CommandSyntaxError(
        f"Could not read the arguments of {ctx.prefix}{ctx.invoked_with}: {exc}. "
        'Put quotes around text with spaces, e.g. "two words", and close every quote.',
        command_name=ctx.command.name if ctx.command is not None else None,
        context=ctx,
    )


def argument_error(
    ctx: CommandContext,
    name: str,
    text: str,
    exc: UnclosedQuote | MissingArgument | TooManyArguments | ConversionFailed,
    usage: str,
) -> CommandError:
    """The error for arguments ``text`` of command ``name`` that do not fit its parameters (``usage``)."""
    if isinstance(exc, UnclosedQuote):
        return syntax_error(ctx, exc)
    if isinstance(exc, MissingArgument):
        missing = "" if not text.strip() else f"Missing {exc.parameter.token}. "  # bare "!cmd": the usage says it
        return CommandUsageError(
            f"{missing}Usage: {usage}", usage=usage, parameter=exc.parameter.name, command_name=name, context=ctx
        )
    if isinstance(exc, TooManyArguments):
        return CommandUsageError(f"Too many arguments. Usage: {usage}", usage=usage, command_name=name, context=ctx)
    param = exc.parameter
    given = exc.given if len(exc.given) <= _GIVEN_SHOWN else exc.given[: _GIVEN_SHOWN - 1] + "…"
    reason = (exc.reason or "").rstrip(". ")  # the reply puts its own full stop
    because = f": {reason}" if reason else ""
    return CommandArgumentError(
        f'Bad argument {param.token}: expected {param.type.expected}, got "{given}"{because}. Usage: {usage}',
        usage=usage,
        parameter=param.name,
        expected=param.type.expected,
        given=exc.given,
        command_name=name,
        context=ctx,
    )


def reply_unknown(ctx: CommandContext, error: CommandNotFoundError, *, reply: bool) -> None:
    """Log a word that names no command; answer it when ``reply``."""
    _log.debug("no command %r in channel %s: %s", error.name, ctx.message.channel_id, error)
    if reply:
        try:
            ctx.message.reply(str(error))
        except Exception:  # noqa: BLE001 - nothing else to report to
            _log.warning("could not answer an unknown command", exc_info=True)


def report(client: Client, ctx: CommandContext, error: CommandError, *, reply: bool) -> None:
    """Reply ``str(error)`` to the author (when ``reply``), then emit ``command_error`` and maybe ``error``.

    ``command_error`` is always emitted. ``error`` gets a :class:`CommandInvokeError`
    (the bot failed), and a refusal only while the client has an ``error`` listener and
    no ``command_error`` listener (bots written before ``command_error`` existed). A
    refusal that no listener receives is logged at INFO.
    """
    command_listened = _listened(client, "command_error")
    emit_error = isinstance(error, CommandInvokeError) or (not command_listened and _listened(client, "error"))
    if not emit_error and not command_listened:  # the author typed something the command does not take
        author = ctx.message.author
        _log.info(
            "refused %s%s from %s in channel %s: %s", ctx.prefix, ctx.invoked_with,
            author.id if author is not None else None, ctx.message.channel_id, error,
        )
    if reply:
        try:
            ctx.message.reply(str(error))
        except Exception:  # noqa: BLE001 - the error itself is still emitted below
            _log.warning("could not report a command error to its author", exc_info=True)
    key = ctx.message.channel_id
    try:
        client.dispatch("command_error", error, key=key)
        if emit_error:
            client.dispatch("error", error, key=key)
    except ServiceError:  # the client was destroyed meanwhile: nobody is left to tell
        _log.debug("not emitted (client destroyed): %s", error)


def _listened(client: Client, event: str) -> bool:
    """Whether the client has a listener of ``event`` (True when it cannot tell)."""
    listeners = getattr(client, "listeners", None)
    return not callable(listeners) or bool(listeners(event))
