"""build_message_payload: the message:send payload of protocol 2.3."""

from __future__ import annotations

import pickle

import pytest

from service_client import EmptyMessageError, ServiceAuthError
from service_client.models import EmbedBuilder
from service_client.models.outgoing import build_message_payload


def test_string_gives_content() -> None:
    assert build_message_payload("C1", "hi", nonce="n") == {"channelPublicId": "C1", "content": "hi", "embeds": [], "nonce": "n"}


def test_single_embed_builder() -> None:
    e = EmbedBuilder().set_title("t")
    assert build_message_payload("C1", e, nonce="n") == {"channelPublicId": "C1", "content": "", "embeds": [{"title": "t"}], "nonce": "n"}


def test_mapping_with_both_reply_spellings() -> None:
    p = build_message_payload("C1", {"content": "x", "embeds": [EmbedBuilder().set_title("a"), {"title": "b", "extra": 1}], "replyToId": "M1"}, nonce="n")
    assert p == {"channelPublicId": "C1", "content": "x", "embeds": [{"title": "a"}, {"title": "b", "extra": 1}], "replyToId": "M1", "nonce": "n"}
    assert build_message_payload("C1", {"content": "x", "reply_to_id": "M2"}, nonce="n")["replyToId"] == "M2"


def test_keywords() -> None:
    p = build_message_payload("C1", content="x", embeds=[{"title": "t"}], reply_to_id="M1", nonce="n")
    assert p["content"] == "x" and p["embeds"] == [{"title": "t"}] and p["replyToId"] == "M1"
    assert "replyToId" not in build_message_payload("C1", content="x", nonce="n")


def test_embed_only_allows_empty_content() -> None:
    assert build_message_payload("C1", embeds=[{"title": "t"}], nonce="n")["content"] == ""


@pytest.mark.parametrize("args", [((), {}), (("",), {}), ((), {"content": ""}), (({},), {}), ((), {"embeds": []}),
                                  (({"content": "", "embeds": []},), {}), (({"content": None},), {})])
def test_empty_content_without_embed_raises_the_specs_error(args: tuple) -> None:
    pos, kw = args
    with pytest.raises(EmptyMessageError) as info:
        build_message_payload("C1", *pos, nonce="n", **kw)
    assert str(info.value) == "send_message requires non-empty content or at least one embed."
    # the spec's ServiceAuthError, and a ValueError like the other message rules
    assert isinstance(info.value, ServiceAuthError) and isinstance(info.value, ValueError)
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is EmptyMessageError and str(copy) == str(info.value)


@pytest.mark.parametrize("content", ["   ", "\n\t ", "\ufeff", "\u3000\u2028", "\xa0"])
def test_whitespace_only_raises_value_error_naming_the_rule(content: str) -> None:
    with pytest.raises(ValueError, match=r"^send_message: a message needs content that is not only whitespace, "
                                         r"or at least one embed \(the content .* and there is no embed\)$") as info:
        build_message_payload("C1", content, nonce="n")
    assert not isinstance(info.value, ServiceAuthError)


def test_whitespace_content_with_an_embed_is_sent() -> None:
    assert build_message_payload("C1", content="  ", embeds=[{"title": "t"}], nonce="n")["content"] == "  "


@pytest.mark.parametrize(("kw", "rule"), [
    ({"content": "x" * 4001}, r"content is at most 4000 characters \(the content is 4001 characters\)"),
    ({"embeds": [{"title": "t"}] * 11}, r"at most 10 embeds \(there are 11 embeds\)"),
    ({"embeds": [{"title": "t" * 257}]}, r"\(embeds\[0\]: its title is 257 characters\)"),
    ({"embeds": [{"fields": [{"name": "n", "value": "v" * 1025}]}]}, r"the value of its field 0 is 1025"),
    ({"embeds": [{"description": "d" * 4000, "fields": [{"name": "n", "value": "v" * 1000}] * 3}]},
     r"its texts add up to 7003 characters"),
])
def test_over_the_limits_raises_value_error(kw: dict, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        build_message_payload("C1", nonce="n", **kw)
    # at the limit, the message is sent
    assert build_message_payload("C1", content="x" * 4000, embeds=[{"title": "t" * 256}] * 10, nonce="n")


def test_wrong_types_name_the_argument() -> None:
    with pytest.raises(TypeError, match="options"):
        build_message_payload("C1", 42, nonce="n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content"):
        build_message_payload("C1", content=3, nonce="n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="embeds"):
        build_message_payload("C1", content="x", embeds=EmbedBuilder(), nonce="n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"embeds\[0\]"):
        build_message_payload("C1", content="x", embeds=[3], nonce="n")  # type: ignore[list-item]
    with pytest.raises(TypeError, match="channel_id"):
        build_message_payload(5, "x", nonce="n")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="channel_id"):
        build_message_payload("", "x", nonce="n")
    with pytest.raises(TypeError, match="reply_to_id"):
        build_message_payload("C1", "x", reply_to_id=7, nonce="n")  # type: ignore[arg-type]
