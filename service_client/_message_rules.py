"""The rules a message must follow to be sent, stated once.

The client checks them at the call site of every send (a channel send, a reply, a DM, an edit, a
webhook post) and raises :class:`ValueError` naming the rule, before anything is sent; the
emulator enforces the same rules (the emptiness rule always, the limits in its limit mode,
``configure(limits=True)``, which the pytest plugin's test world turns on).

What is known of the real service: it refuses a message with no content (or only whitespace) and
no embed, and says nothing when it refuses a message sent over the socket. Its length limits are
not published; the limits below are plausible values of the chat services of its kind, the ones
the emulator's limit mode applies.

Pure: no I/O. Lengths are counted in characters (Python ``len``, code points) of the text as
typed, before the service escapes ``& < >``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONTENT_MAX_CHARS",
    "EMBED_LIMITS",
    "EMBEDS_MAX",
    "RULES",
    "check_message",
    "embed_problem",
    "message_problem",
]

#: Longest content of a message, characters.
CONTENT_MAX_CHARS = 4000
#: Most embeds in one message.
EMBEDS_MAX = 10
#: Embed limits, characters except ``fields`` (a count): the title, the description, the number
#: of fields, a field's name and value, the footer text, the author name, and ``total``: the sum
#: of every text of one embed (title, description, field names and values, footer, author).
EMBED_LIMITS: Mapping[str, int] = {
    "title": 256,
    "description": 4096,
    "fields": 25,
    "field_name": 256,
    "field_value": 1024,
    "footer": 2048,
    "author": 256,
    "total": 6000,
}

#: Every rule: its error key (the emulator's ``message:error`` / 400 text) and the sentence the
#: client's :class:`ValueError` starts with.
RULES: Mapping[str, str] = {
    "messages.errors.empty": "a message needs content that is not only whitespace, or at least one embed",
    "messages.errors.too_long": f"a message's content is at most {CONTENT_MAX_CHARS} characters",
    "messages.errors.too_many_embeds": f"a message has at most {EMBEDS_MAX} embeds",
    "messages.errors.embed_limit": (
        "an embed's title is at most 256 characters, its description 4096, its footer 2048, its author "
        "name 256; it has at most 25 fields, each name at most 256 characters and each value 1024; "
        "all its texts add up to at most 6000 characters"
    ),
}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def embed_problem(embed: Mapping[str, Any]) -> str | None:
    """What breaks the embed limits in one embed payload (``"title is 300 characters"``), or None."""
    title, description = _text(embed.get("title")), _text(embed.get("description"))
    raw_footer, raw_author, raw_fields = embed.get("footer"), embed.get("author"), embed.get("fields")
    footer = _text(raw_footer.get("text")) if isinstance(raw_footer, Mapping) else ""
    author = _text(raw_author.get("name")) if isinstance(raw_author, Mapping) else ""
    fields: Sequence[Any] = raw_fields if isinstance(raw_fields, list) else []
    for what, text, key in (("title", title, "title"), ("description", description, "description"),
                            ("footer text", footer, "footer"), ("author name", author, "author")):
        if len(text) > EMBED_LIMITS[key]:
            return f"its {what} is {len(text)} characters"
    if len(fields) > EMBED_LIMITS["fields"]:
        return f"it has {len(fields)} fields"
    total = len(title) + len(description) + len(footer) + len(author)
    for index, field in enumerate(fields):
        if not isinstance(field, Mapping):
            return f"its field {index} is not an object"
        name, value = _text(field.get("name")), _text(field.get("value"))
        if len(name) > EMBED_LIMITS["field_name"]:
            return f"the name of its field {index} is {len(name)} characters"
        if len(value) > EMBED_LIMITS["field_value"]:
            return f"the value of its field {index} is {len(value)} characters"
        total += len(name) + len(value)
    if total > EMBED_LIMITS["total"]:
        return f"its texts add up to {total} characters"
    return None


def message_problem(content: str, embeds: Sequence[Mapping[str, Any]], *,
                    limits: bool = True) -> tuple[str, str] | None:
    """The first rule a message breaks, as ``(error key, what is wrong)``, or None.

    Args:
        content: The text, as typed ("" for none).
        embeds: The embed payloads (mappings, as sent).
        limits: Check the length limits too; with False only the emptiness rule.

    Returns:
        None when the message may be sent; else a key of :data:`RULES` and a short
        description of what breaks it (``"the content is 4001 characters"``).
    """
    if not embeds and not content.strip():
        return "messages.errors.empty", (
            "the content is empty" if not content else f"the content {content!r} is only whitespace"
        ) + " and there is no embed"
    if not limits:
        return None
    if len(content) > CONTENT_MAX_CHARS:
        return "messages.errors.too_long", f"the content is {len(content)} characters"
    if len(embeds) > EMBEDS_MAX:
        return "messages.errors.too_many_embeds", f"there are {len(embeds)} embeds"
    for index, embed in enumerate(embeds):
        problem = embed_problem(embed)
        if problem is not None:
            return "messages.errors.embed_limit", f"embeds[{index}]: {problem}"
    return None


def check_message(content: str, embeds: Sequence[Mapping[str, Any]], action: str) -> None:
    """Raise when a message breaks a rule of :data:`RULES`; nothing is sent then.

    Args:
        content: The text, as typed.
        embeds: The embed payloads.
        action: The call, for the message (``"send_message"``, ``"edit"``, ``"execute"``).

    Raises:
        ValueError: ``"<action>: <rule> (<what is wrong>)"``, for example
            ``send_message: a message needs content that is not only whitespace, or at least one
            embed (the content '   ' is only whitespace and there is no embed)``; or
            content with a lone surrogate, which UTF-8 cannot encode (the index is named).
    """
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: no wire can carry it
        raise ValueError(f"{action}: content must be text that UTF-8 can encode "
                         f"(a lone surrogate at index {exc.start})") from None
    found = message_problem(content, embeds)
    if found is not None:
        key, detail = found
        raise ValueError(f"{action}: {RULES[key]} ({detail})")
