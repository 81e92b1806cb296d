"""The rules a message must follow to be sent, stated once.

The client checks them at the call site of every send (a channel send, a reply, a DM, an edit, a
webhook post: :func:`service_client.models.outgoing.check_message`) and raises before anything is
sent; the emulator enforces the same rules (the emptiness rule always, the limits in its limit
mode, ``configure(limits=True)``, which the pytest plugin's test world turns on).

What is known of the real service: it refuses a message with no content (or only whitespace) and
no embed, and says nothing when it refuses a message sent over the socket. Its length limits are
not published; the limits below are plausible values of the chat services of its kind, the ones
the emulator's limit mode applies.

The service runs on JavaScript, so both sides count and trim as JavaScript does: a length is
JavaScript's ``String.prototype.length``, in UTF-16 code units (:func:`js_length`: a character
outside the Basic Multilingual Plane, such as most emoji, counts 2), and "only whitespace" is
what ``String.prototype.trim()`` removes entirely (:func:`is_blank`: :data:`JS_WHITESPACE`, which
holds U+FEFF but not U+0085 or U+001C to U+001F, unlike Python's :meth:`str.strip`). Lengths are
of the text as typed, before the service escapes ``& < >``.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "CONTENT_MAX_CHARS",
    "EMBEDS_MAX",
    "EMBED_LIMITS",
    "JS_WHITESPACE",
    "RULES",
    "embed_problem",
    "is_blank",
    "js_length",
    "message_problem",
]

#: What JavaScript's ``String.prototype.trim()`` removes (ECMAScript's WhiteSpace and
#: LineTerminator): tab, line feed, vertical tab, form feed, carriage return, space, U+00A0,
#: U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF. Python's
#: :meth:`str.strip` removes U+001C to U+001F and U+0085 too, and not U+FEFF; neither removes
#: U+180E (no longer a space since Unicode 6.3) or U+200B.
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_length(text: str) -> int:
    """The length of ``text`` as JavaScript counts it: UTF-16 code units.

    A code point above U+FFFF (an emoji such as U+1F600, a CJK extension character) counts 2,
    every other one 1; so ``js_length("\U0001F600") == 2`` while ``len()`` gives 1.
    """
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for char in text if char > "\uffff")


def is_blank(text: str) -> bool:
    """True when JavaScript's ``text.trim()`` would be empty: ``text`` is empty or only
    :data:`JS_WHITESPACE`."""
    return not text.strip(JS_WHITESPACE)

#: Longest content of a message, characters (UTF-16 code units, as JavaScript counts them).
CONTENT_MAX_CHARS = 4000
#: Most embeds in one message.
EMBEDS_MAX = 10
#: Embed limits, characters (UTF-16 code units) except ``fields`` (a count): the title, the description, the number
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


def _characters(text: str) -> str:
    """``"<n> characters"`` as JavaScript counts them, with the code points when they differ."""
    units = js_length(text)
    if units == len(text):
        return f"{units} characters"
    return f"{units} characters as JavaScript counts them (UTF-16 code units; {len(text)} code points)"


def embed_problem(embed: Mapping[str, Any]) -> str | None:
    """What breaks the embed limits in one embed payload (``"its title is 300 characters"``), or None.

    Lengths are JavaScript's (:func:`js_length`).
    """
    title, description = _text(embed.get("title")), _text(embed.get("description"))
    raw_footer, raw_author, raw_fields = embed.get("footer"), embed.get("author"), embed.get("fields")
    footer = _text(raw_footer.get("text")) if isinstance(raw_footer, Mapping) else ""
    author = _text(raw_author.get("name")) if isinstance(raw_author, Mapping) else ""
    fields: Sequence[Any] = raw_fields if isinstance(raw_fields, list) else []
    for what, text, key in (("title", title, "title"), ("description", description, "description"),
                            ("footer text", footer, "footer"), ("author name", author, "author")):
        if js_length(text) > EMBED_LIMITS[key]:
            return f"its {what} is {_characters(text)}"
    if len(fields) > EMBED_LIMITS["fields"]:
        return f"it has {len(fields)} fields"
    total = js_length(title) + js_length(description) + js_length(footer) + js_length(author)
    for index, field in enumerate(fields):
        if not isinstance(field, Mapping):
            return f"its field {index} is not an object"
        name, value = _text(field.get("name")), _text(field.get("value"))
        if js_length(name) > EMBED_LIMITS["field_name"]:
            return f"the name of its field {index} is {_characters(name)}"
        if js_length(value) > EMBED_LIMITS["field_value"]:
            return f"the value of its field {index} is {_characters(value)}"
        total += js_length(name) + js_length(value)
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
        description of what breaks it (``"the content is 4001 characters"``). No content,
        or only whitespace (:func:`is_blank`), and no embed is ``"messages.errors.empty"``;
        lengths are JavaScript's (:func:`js_length`).
    """
    if not embeds and is_blank(content):
        return "messages.errors.empty", (
            "the content is empty" if not content
            else f"the content {content!r} is only whitespace" if len(content) <= 40
            else f"the content ({len(content)} characters) is only whitespace"
        ) + " and there is no embed"
    if not limits:
        return None
    if js_length(content) > CONTENT_MAX_CHARS:
        return "messages.errors.too_long", f"the content is {_characters(content)}"
    if len(embeds) > EMBEDS_MAX:
        return "messages.errors.too_many_embeds", f"there are {len(embeds)} embeds"
    for index, embed in enumerate(embeds):
        problem = embed_problem(embed)
        if problem is not None:
            return "messages.errors.embed_limit", f"embeds[{index}]: {problem}"
    return None
