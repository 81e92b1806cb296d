"""How the text after a command's name becomes the arguments of its ``execute``.

A part of :class:`~service_client.dispatcher.CommandDispatcher`:

- :class:`ArgumentReader` reads the text one word at a time, or takes the
  rest of it as typed;
- :func:`compile_signature` reads a command function's parameters and their
  annotations once into a :class:`CommandSignature`;
- :meth:`CommandSignature.bind` reads and converts the words of one message.

The rules for words:

- Words are separated by whitespace.
- A word that starts with a quote (``"``, ``'``, ``“`` or ``‘``) runs to the
  matching closing quote that ends a word (followed by whitespace or the end
  of the text); the quotes are removed: ``"two words"`` is one word.
- A double quote (``"`` or ``“``) that is never closed is an error
  (:class:`UnclosedQuote`); a single quote or an apostrophe that is never
  closed is ordinary text, so ``didn't`` and ``'cause`` are words as typed.
- A backslash before a quote, a backslash or a space makes it ordinary
  (``\\"`` is ``"``); before anything else a backslash is kept.
- The rest of the line (a keyword-only parameter) is the text as typed, from
  the end of the previous word, whitespace stripped at both ends: quotes and
  backslashes stay.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import BadArgumentError
from .converters import ArgumentType, ConverterRegistry

if TYPE_CHECKING:  # pragma: no cover
    from .context import CommandContext

__all__ = [
    "ArgumentProblem",
    "ArgumentReader",
    "BoundArguments",
    "CommandSignature",
    "ConversionFailed",
    "MissingArgument",
    "ParameterSpec",
    "TooManyArguments",
    "UnclosedQuote",
    "compile_signature",
]

#: Opening quote -> closing quote.
_QUOTES = {'"': '"', "“": "”", "'": "'", "‘": "’"}
#: Opening quotes that must be closed (an apostrophe is ordinary text).
_MUST_CLOSE = frozenset('"“')
#: What a backslash makes ordinary (besides whitespace).
_ESCAPABLE = frozenset('"“”\'‘’\\')


class ArgumentProblem(Exception):
    """The words of a message do not fit a command (internal; the dispatcher turns it into a CommandError)."""


class UnclosedQuote(ArgumentProblem):
    """A word starts with a double quote that is never closed."""

    def __init__(self, quote: str) -> None:
        super().__init__(f"No closing quotation: the {quote} that opens a word is never closed")
        self.quote = quote


class ParameterSpec:
    """One parameter of a command after the context.

    Attributes:
        name: The parameter's name.
        kind: ``"word"`` (a positional parameter: one word), ``"words"``
            (``*name``: every word left) or ``"rest"`` (the first
            keyword-only parameter: the rest of the line as typed).
        type: How its text is converted.
        required: The command cannot run without it.
        default: The value given when it is left out (the declared default,
            else None).
        token: Its form in the usage line: ``<member>``, ``[count: integer]``,
            ``[reason...]``.
    """

    __slots__ = ("default", "kind", "name", "required", "token", "type")

    def __init__(self, name: str, kind: str, type: ArgumentType, required: bool, default: Any) -> None:
        self.name = name
        self.kind = kind
        self.type = type
        self.required = required
        self.default = default
        self.token = _token(name, kind, type, required)

    def __repr__(self) -> str:
        return f"<ParameterSpec {self.token}>"


class MissingArgument(ArgumentProblem):
    """A required parameter got no text."""

    def __init__(self, parameter: ParameterSpec) -> None:
        super().__init__(f"missing {parameter.token}")
        self.parameter = parameter


class TooManyArguments(ArgumentProblem):
    """Words are left once every parameter has its own."""

    def __init__(self, extra: str) -> None:
        super().__init__(f"too many arguments: {extra!r}")
        self.extra = extra


class ConversionFailed(ArgumentProblem):
    """A converter refused the text of a parameter.

    Attributes:
        parameter: The parameter.
        given: The text refused.
        reason: The converter's :class:`BadArgumentError` message, else None.
    """

    def __init__(self, parameter: ParameterSpec, given: str, reason: str | None) -> None:
        super().__init__(f"{parameter.token}: {given!r}")
        self.parameter = parameter
        self.given = given
        self.reason = reason


class ArgumentReader:
    """Reads a command's argument text: one word at a time, or the rest as typed (see the module docs).

    Args:
        text: The text after the command's name.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        #: Index of the next character to read.
        self.position = 0

    def _skip_space(self) -> None:
        text, i = self.text, self.position
        while i < len(text) and text[i].isspace():
            i += 1
        self.position = i

    def at_end(self) -> bool:
        """True when only whitespace is left."""
        self._skip_space()
        return self.position >= len(self.text)

    def read_word(self) -> str | None:
        """The next word (quotes removed, escapes applied), or None at the end.

        Raises:
            UnclosedQuote: The word starts with a double quote that is never closed.
        """
        if self.at_end():
            return None
        text, start = self.text, self.position
        close = _QUOTES.get(text[start])
        if close is not None:
            end = self._closing(start + 1, close)
            if end is not None:
                self.position = end + 1
                return _unescape(text[start + 1 : end])
            if text[start] in _MUST_CLOSE:
                raise UnclosedQuote(text[start])
        i = start
        while i < len(text) and not text[i].isspace():
            i += 2 if _escapes(text, i) else 1
        self.position = i
        return _unescape(text[start:i])

    def read_rest(self) -> str | None:
        """The rest of the text as typed, stripped; None when only whitespace is left."""
        rest = self.text[self.position :].strip()
        self.position = len(self.text)
        return rest or None

    def read_all(self) -> list[str]:
        """Every word left.

        Raises:
            UnclosedQuote: As :meth:`read_word`.
        """
        words = []
        while (word := self.read_word()) is not None:
            words.append(word)
        return words

    def _closing(self, i: int, close: str) -> int | None:
        """Index of the quote ``close`` that ends the word opened before ``i``, or None."""
        text = self.text
        while i < len(text):
            if _escapes(text, i):
                i += 2
                continue
            if text[i] == close and (i + 1 == len(text) or text[i + 1].isspace()):
                return i
            i += 1
        return None


def _escapes(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a backslash that makes the next character ordinary."""
    return text[i] == "\\" and i + 1 < len(text) and (text[i + 1] in _ESCAPABLE or text[i + 1].isspace())


def _unescape(word: str) -> str:
    if "\\" not in word:
        return word
    out, i = [], 0
    while i < len(word):
        if _escapes(word, i):
            i += 1
        out.append(word[i])
        i += 1
    return "".join(out)


class BoundArguments:
    """The arguments of one call of ``execute`` after the context.

    Attributes:
        args: The positional values (the context excluded).
        kwargs: The keyword values (the rest-of-line parameter).
        texts: The text read for each parameter, as typed, in order.
    """

    __slots__ = ("args", "kwargs", "texts")

    def __init__(self) -> None:
        self.args: list[Any] = []
        self.kwargs: dict[str, Any] = {}
        self.texts: list[str] = []


class CommandSignature:
    """A command's parameters after the context, compiled once.

    Args:
        parameters: The parameters read from a message, in order.
        passthrough: ``execute`` could not be introspected: every word is
            passed as it is, nothing is checked.
    """

    __slots__ = ("parameters", "passthrough")

    def __init__(self, parameters: tuple[ParameterSpec, ...] = (), *, passthrough: bool = False) -> None:
        self.parameters = parameters
        self.passthrough = passthrough

    @property
    def tokens(self) -> list[str]:
        """The parameters' usage tokens, in order."""
        return [p.token for p in self.parameters]

    def bind(self, ctx: CommandContext, text: str) -> BoundArguments:
        """Read and convert the arguments of one message.

        A parameter that may be left out (``Optional[X]`` or with a default)
        and whose word does not convert is given its default, and the word is
        read again for the next parameter; the refusal is reported only if no
        later parameter takes the word.

        Args:
            ctx: The invocation, handed to each converter.
            text: The text after the command's name.

        Returns:
            The arguments.

        Raises:
            UnclosedQuote, MissingArgument, TooManyArguments, ConversionFailed:
                The text does not fit (the dispatcher answers the author).
            Exception: What a converter raised other than ``ValueError`` or
                ``TypeError`` (a failed request...): a failure of the bot.
        """
        reader = ArgumentReader(text)
        bound = BoundArguments()
        if self.passthrough:
            bound.texts = reader.read_all()
            bound.args = list(bound.texts)
            return bound
        skipped: ConversionFailed | None = None  # an optional parameter's refusal, for its word
        for param in self.parameters:
            if param.kind == "word":
                mark = reader.position
                word = reader.read_word()
                if word is None:
                    if param.required:
                        raise MissingArgument(param)
                    bound.args.append(param.default)
                    continue
                try:
                    bound.args.append(_convert(ctx, param, word))
                except ConversionFailed as refused:
                    if param.required:
                        raise
                    skipped = skipped or refused
                    reader.position = mark  # the next parameter reads the word again
                    bound.args.append(param.default)
                    continue
                bound.texts.append(word)
            elif param.kind == "words":
                for word in reader.read_all():
                    bound.args.append(_convert(ctx, param, word))
                    bound.texts.append(word)
            else:
                rest = reader.read_rest()
                if rest is None:
                    if param.required:
                        raise MissingArgument(param)
                    if param.type.optional:
                        bound.kwargs[param.name] = param.default
                    continue
                bound.kwargs[param.name] = _convert(ctx, param, rest)
                bound.texts.append(rest)
            skipped = None  # whatever an optional parameter refused was taken by this one
        if not reader.at_end():
            if skipped is not None:
                raise skipped
            extra = reader.read_word()
            raise TooManyArguments(extra or "")
        return bound


def _convert(ctx: CommandContext, param: ParameterSpec, text: str) -> Any:
    try:
        return param.type.convert(ctx, text)
    except (ValueError, TypeError) as exc:  # BadArgumentError is a ValueError
        reason = str(exc) if isinstance(exc, BadArgumentError) else None
        raise ConversionFailed(param, text, reason) from exc


# -- compiling a command's signature ------------------------------------------------------------------


def compile_signature(execute: Callable[..., Any], converters: ConverterRegistry) -> CommandSignature:
    """Read the parameters of ``execute`` after the context, with their converters.

    String annotations (``from __future__ import annotations``) are resolved
    with :func:`typing.get_type_hints` against the function's module.

    Args:
        execute: The command function, called ``execute(ctx, *args, **kwargs)``.
        converters: The converters to use.

    Returns:
        The compiled signature; a passthrough one when ``execute`` cannot be
        introspected (a builtin).

    Raises:
        TypeError: ``execute`` cannot take the context as its first positional
            argument; an annotation cannot be resolved or has no converter; a
            keyword-only parameter without a default could never be filled.
    """
    try:
        signature = inspect.signature(execute)
    except (TypeError, ValueError):  # builtins and odd callables: words as they are
        return CommandSignature(passthrough=True)
    params = list(signature.parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    ):
        raise TypeError("execute must take the context as its first positional parameter")
    if params[0].kind is not inspect.Parameter.VAR_POSITIONAL:
        params = params[1:]  # the context; a *args first takes the context and the words
    namespace = _module_namespace(execute)
    specs: list[ParameterSpec] = []
    has_words = has_rest = False
    for param in params:
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if param.kind is inspect.Parameter.KEYWORD_ONLY and (has_rest or has_words):
            if param.default is inspect.Parameter.empty:
                before = "the rest of the line" if has_rest else "*" + next(s.name for s in specs if s.kind == "words")
                raise TypeError(
                    f"the keyword-only parameter {param.name!r} can never be filled ({before} takes the words "
                    "before it): give it a default"
                )
            continue
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            kind = "words"
        elif param.kind is inspect.Parameter.KEYWORD_ONLY:
            kind = "rest"
        else:
            kind = "word"
        try:
            converter = converters.resolve(_resolve_annotation(param, namespace))
        except TypeError as exc:
            raise TypeError(f"parameter {param.name!r}: {exc}") from exc
        has_words = has_words or kind == "words"
        has_rest = has_rest or kind == "rest"
        declared = param.default is not inspect.Parameter.empty
        required = kind != "words" and not declared and not converter.optional
        specs.append(ParameterSpec(param.name, kind, converter, required, param.default if declared else None))
    return CommandSignature(tuple(specs))


def _token(name: str, kind: str, converter: ArgumentType, required: bool) -> str:
    label = converter.label
    inner = name if label is None or label == name else f"{name}: {label}"
    if kind != "word":
        inner += "..."
    return f"<{inner}>" if required else f"[{inner}]"


def _module_namespace(execute: Callable[..., Any]) -> dict[str, Any]:
    """The globals the annotations of ``execute`` were written in."""
    target: Any = inspect.unwrap(execute)
    while isinstance(target, (types.MethodType, functools.partial)):
        target = target.__func__ if isinstance(target, types.MethodType) else target.func
    found = getattr(target, "__globals__", None)
    if found is None:  # a callable object: its __call__'s module
        call = next((vars(k)["__call__"] for k in type(target).__mro__ if "__call__" in vars(k)), None)
        found = getattr(call, "__globals__", None)
    if found is None:
        module = sys.modules.get(getattr(target, "__module__", None) or "")
        found = vars(module) if module is not None else {}
    return dict(found)


def _resolve_annotation(param: inspect.Parameter, namespace: dict[str, Any]) -> Any:
    """``param``'s annotation with string and forward references resolved."""
    if param.annotation is inspect.Parameter.empty:
        return param.annotation
    holder = types.SimpleNamespace(__annotations__={param.name: param.annotation})
    try:
        return typing.get_type_hints(holder, globalns=namespace)[param.name]
    except Exception as exc:  # noqa: BLE001 - NameError, SyntaxError...: say which annotation
        raise TypeError(f"cannot resolve the annotation {param.annotation!r}: {exc}") from exc
