"""The message rules count and trim as JavaScript does, on the client's side and the emulator's.

The service runs on JavaScript: its lengths are ``String.prototype.length`` (UTF-16 code units)
and its blank check is ``String.prototype.trim()``. Both sides share ``_message_rules``.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from service_client import EmptyMessageError
from service_client._message_rules import JS_WHITESPACE, is_blank, js_length, message_problem
from service_client.models.outgoing import build_message_payload, check_message

GRIN = "\U0001F600"  # outside the Basic Multilingual Plane: 2 UTF-16 code units, 1 code point


@pytest.mark.parametrize(("text", "units"), [
    ("", 0), ("abc", 3), ("é", 1), ("e\u0301", 2), (GRIN, 2), (GRIN * 3 + "x", 7), ("\U00020000", 2),
    ("\ud800", 1),  # a lone surrogate is one unit, as in JavaScript
])
def test_js_length_counts_utf16_code_units(text: str, units: int) -> None:
    assert js_length(text) == units


@pytest.mark.parametrize("text", ["", " ", "\t\n\x0b\x0c\r", "\xa0", "\ufeff", "\u1680", "\u2000\u200a",
                                  "\u2028\u2029", "\u202f\u205f\u3000", " \ufeff\u3000 "])
def test_what_javascript_trims_is_blank(text: str) -> None:
    assert is_blank(text)


@pytest.mark.parametrize("text", ["\u0085", "\u180e", "\x1c", "\x1d", "\x1e", "\x1f", "\u200b", "\u2060", "x"])
def test_what_javascript_keeps_is_not_blank(text: str) -> None:
    # Python's str.strip() removes U+0085 and U+001C..U+001F, and keeps U+FEFF: JavaScript the reverse.
    assert not is_blank(text)
    assert message_problem(text, []) is None
    assert build_message_payload("C1", text, nonce="n")["content"] == text


def test_a_byte_order_mark_alone_is_only_whitespace() -> None:
    with pytest.raises(ValueError, match=r"^send_message: a message needs content that is not only whitespace") as info:
        build_message_payload("C1", "\ufeff", nonce="n")
    assert not isinstance(info.value, EmptyMessageError)
    assert message_problem("\ufeff", [], limits=False) == (
        "messages.errors.empty", "the content '\\ufeff' is only whitespace and there is no embed")


def test_content_length_counts_astral_characters_twice() -> None:
    assert message_problem(GRIN * 2000, []) is None  # 4000 units
    assert message_problem("x" * 3999 + GRIN, []) == (  # 4000 code points, 4001 units
        "messages.errors.too_long",
        "the content is 4001 characters as JavaScript counts them (UTF-16 code units; 4000 code points)",
    )
    with pytest.raises(ValueError, match=r"^send_message: a message's content is at most 4000 characters "
                                         r"\(the content is 4002 characters as JavaScript counts them"):
        build_message_payload("C1", GRIN * 2001, nonce="n")


def test_embed_lengths_count_utf16_code_units() -> None:
    assert message_problem("", [{"title": GRIN * 128}]) is None  # 256 units
    assert message_problem("", [{"title": GRIN * 128 + "x"}]) == (
        "messages.errors.embed_limit",
        "embeds[0]: its title is 257 characters as JavaScript counts them (UTF-16 code units; 129 code points)",
    )
    fields = [{"name": "n", "value": GRIN * 512}] * 5  # 5 x 1025 units = 5125, plus a 1000-unit description
    assert message_problem("", [{"description": "d" * 1000, "fields": fields}]) == (
        "messages.errors.embed_limit", "embeds[0]: its texts add up to 6125 characters")


def test_a_long_whitespace_content_is_not_quoted_whole() -> None:
    with pytest.raises(ValueError, match=r"\(the content \(5000 characters\) is only whitespace"):
        check_message(" " * 5000, [], "send_message")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the comparison with "
                    "JavaScript itself needs it (the other tests pin the same behaviour)")
def test_the_whitespace_set_is_what_node_trims() -> None:
    script = ("const w=[];for(let c=0;c<=0xFFFF;c++){if(String.fromCharCode(c).trim()==='')w.push(c)}"
              "console.log(JSON.stringify(w))")
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=30, check=True)
    assert "".join(chr(c) for c in json.loads(done.stdout)) == JS_WHITESPACE
    assert [c for c in range(0x10000) if is_blank(chr(c)) and chr(c)] == json.loads(done.stdout)
