"""The one type that holds a secret (a bot token or a webhook token).

A :class:`Secret` keeps its value out of every ``repr``, ``str``, log line,
exception text and pickle: it shows as ``[REDACTED]`` (the bot token), or as
the mask it was given (``***`` for a webhook token, as in request paths), or
``None`` when empty, and it refuses to be pickled. Code that needs the value
calls :meth:`Secret.get` at the last moment and keeps the result in no
long-lived local. Text that comes from a server (an error body, a redirect's
``Location``) goes through :meth:`Secret.mask` before it is shown anywhere.
"""

from __future__ import annotations

import json
import re
from typing import NoReturn
from urllib.parse import quote, quote_plus

__all__ = ["REDACTED", "REDACTED_WEBHOOK_TOKEN", "Secret"]

#: What a secret (the bot token) shows as wherever it would be printed.
REDACTED = "[REDACTED]"
#: What a webhook token shows as wherever it would be printed (reprs, request paths, errors, logs).
REDACTED_WEBHOOK_TOKEN = "***"


class Secret:
    """Holds one secret string; its repr, str and pickle never show it.

    Thread-safe for the single-reference reads and writes it does.

    Args:
        value: The secret, or None for "no secret yet".
        shown: What its repr and str show while it holds a value
            (:data:`REDACTED` by default).
    """

    __slots__ = ("_shown", "_value")

    def __init__(self, value: str | None = None, *, shown: str = REDACTED) -> None:
        self._value = value
        self._shown = shown

    def get(self) -> str | None:
        """The secret, or None when it is empty or was cleared."""
        return self._value

    def clear(self) -> None:
        """Forget the secret (``destroy()`` calls this for the bot token)."""
        self._value = None

    def mask(self, text: str) -> str:
        """``text`` with every occurrence of the secret replaced by what the secret shows as.

        A server may quote the secret as it was sent or escaped: the forms masked are the
        value itself, its percent-encodings (in a URL's path or query, either letter case
        of the hex digits), its JSON string escapes (``\\"``, ``\\\\``, ``\\/``) and its
        HTML escapes. Letter case is ignored throughout (a text is never shown with a
        variant of the secret in it).

        Args:
            text: Any text, e.g. an error body or a header a server sent.

        Returns:
            ``text`` unchanged when the secret is empty or absent from it, else the masked text.
        """
        value = self._value
        if not value or not text:
            return text
        escaped = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # as html.escape
        escaped = escaped.replace('"', "&quot;").replace("'", "&#x27;")
        forms = {value, quote(value, safe=""), quote(value), quote_plus(value), escaped,
                 json.dumps(value)[1:-1], json.dumps(value)[1:-1].replace("/", "\\/")}
        pattern = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
        shown = self._shown
        return re.sub(pattern, lambda _: shown, text, flags=re.IGNORECASE)

    def __bool__(self) -> bool:
        return self._value is not None

    def __repr__(self) -> str:
        return self._shown if self._value is not None else "None"

    __str__ = __repr__

    def __reduce__(self) -> NoReturn:
        raise TypeError("a secret (token) cannot be pickled")
