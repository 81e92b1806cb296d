"""The service's escaping of message content: ``&``, ``<`` and ``>`` travel as entities.

Pure functions shared by the client's :class:`~service_client.Message` and the emulator,
which stores content escaped exactly as the service does.
"""

from __future__ import annotations

import re

__all__ = ["decode_content", "encode_content"]

_ENTITY = re.compile(r"&(lt|gt|amp);")
_ENTITY_TEXT = {"lt": "<", "gt": ">", "amp": "&"}


def encode_content(text: str) -> str:
    """The service's escaping of message content: ``& < >`` as entities.

    The inverse of :func:`decode_content` for text the service escaped.
    """
    if "&" not in text and "<" not in text and ">" not in text:
        return text
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def decode_content(text: str) -> str:
    """Undo the service's escaping of message content (it stores ``&``, ``<``, ``>`` as entities).

    Decodes exactly ``&lt;``, ``&gt;`` and ``&amp;`` in a single pass, so a
    typed ``&amp;lt;`` comes back as ``&lt;``; no other entity is touched.
    """
    if "&" not in text:
        return text
    return _ENTITY.sub(lambda m: _ENTITY_TEXT[m.group(1)], text)
