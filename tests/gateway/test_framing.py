"""Unit tests of the pure Engine.IO v4 / Socket.IO v5 framing (no I/O)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service_client.gateway import framing
from service_client.gateway.framing import (
    AckPacket,
    ConnectErrorPacket,
    ConnectPacket,
    DisconnectPacket,
    EnginePacket,
    EngineType,
    EventPacket,
    FramingError,
    OpenPacket,
    UnsupportedPacketError,
    decode,
    encode_ack,
    encode_connect,
    encode_connect_error,
    encode_disconnect,
    encode_event,
    encode_open,
)

OPEN = '0{"sid":"OrJApMyh_q6C8VZ0AAAA","upgrades":[],"pingTimeout":20000,"pingInterval":25000,"maxPayload":1000000}'


# --------------------------------------------------------------------------- Engine.IO


def test_open_packet_seen_on_this_machine() -> None:
    packet = decode(OPEN)
    assert packet == OpenPacket("OrJApMyh_q6C8VZ0AAAA", 25000, 20000, 1000000, [])


def test_open_packet_without_optional_fields() -> None:
    assert decode('0{"sid":"s","pingInterval":10,"pingTimeout":5}') == OpenPacket("s", 10, 5, 0, [])


def test_encode_open_round_trip() -> None:
    assert decode(encode_open("abc", 100, 200, 5)) == OpenPacket("abc", 100, 200, 5, [])


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "0[]",
        "0{",
        '0{"pingInterval":1,"pingTimeout":1}',
        '0{"sid":5,"pingInterval":1,"pingTimeout":1}',
        '0{"sid":"s","pingTimeout":1}',
        '0{"sid":"s","pingInterval":"25000","pingTimeout":1}',
        '0{"sid":"s","pingInterval":true,"pingTimeout":1}',
        '0{"sid":"s","pingInterval":-1,"pingTimeout":1}',
        '0{"sid":"s","pingInterval":1.5,"pingTimeout":1}',
        '0{"sid":"s","pingInterval":1,"pingTimeout":1,"maxPayload":"x"}',
        '0{"sid":"s","pingInterval":1,"pingTimeout":1,"upgrades":"websocket"}',
        '0{"sid":"s","pingInterval":1,"pingTimeout":1}x',
    ],
)
def test_malformed_open_packet(text: str) -> None:
    with pytest.raises(FramingError):
        decode(text)


@pytest.mark.parametrize(
    ("text", "kind", "data"),
    [
        ("1", EngineType.CLOSE, ""),
        ("2", EngineType.PING, ""),
        ("2probe", EngineType.PING, "probe"),
        ("3", EngineType.PONG, ""),
        ("3probe", EngineType.PONG, "probe"),
        ("5", EngineType.UPGRADE, ""),
        ("6", EngineType.NOOP, ""),
    ],
)
def test_engine_packets(text: str, kind: EngineType, data: str) -> None:
    assert decode(text) == EnginePacket(kind, data)


def test_ping_pong_constants() -> None:
    assert decode(framing.PING) == EnginePacket(EngineType.PING)
    assert decode(framing.PONG) == EnginePacket(EngineType.PONG)


@pytest.mark.parametrize("text", ["", "7", "9", "x", "{}", " 42[\"a\"]", "b4"])
def test_unknown_or_empty_engine_packet(text: str) -> None:
    with pytest.raises(FramingError):
        decode(text)


def test_binary_frame_is_unsupported() -> None:
    with pytest.raises(UnsupportedPacketError):
        decode(b"\x04abc")  # type: ignore[arg-type]
    with pytest.raises(UnsupportedPacketError):
        decode(bytearray(b"42[]"))  # type: ignore[arg-type]


def test_non_text_is_framing_error() -> None:
    with pytest.raises(FramingError):
        decode(None)  # type: ignore[arg-type]


def test_framing_error_is_value_error() -> None:
    assert issubclass(FramingError, ValueError)
    assert issubclass(UnsupportedPacketError, FramingError)


# --------------------------------------------------------------------------- Socket.IO decode


def test_event_default_namespace() -> None:
    packet = decode('42["message:new",{"id":"m1","content":"hi","nonce":"n1"}]')
    assert packet == EventPacket("message:new", [{"id": "m1", "content": "hi", "nonce": "n1"}], None, "/")


def test_event_without_args() -> None:
    assert decode('42["typing"]') == EventPacket("typing", [], None, "/")


def test_event_several_args_in_order() -> None:
    assert decode('42["e",1,"two",[3],null,true]').args == [1, "two", [3], None, True]


@pytest.mark.parametrize(("digits", "value"), [("0", 0), ("7", 7), ("42", 42), ("12345", 12345), ("007", 7)])
def test_event_with_ack_id_of_several_digits(digits: str, value: int) -> None:
    assert decode(f'42{digits}["server:kick",{{"a":1}}]') == EventPacket("server:kick", [{"a": 1}], value, "/")


def test_event_with_namespace() -> None:
    assert decode('42/admin,["x",1]') == EventPacket("x", [1], None, "/admin")


def test_event_with_namespace_and_ack_id() -> None:
    assert decode('42/admin,123["x"]') == EventPacket("x", [], 123, "/admin")


def test_nested_namespace() -> None:
    assert decode('42/a/b-c,["x"]').namespace == "/a/b-c"


def test_ack() -> None:
    assert decode("437[{}]") == AckPacket(7, [{}], "/")
    assert decode('431234[{"error":"servers.errors.cannot_kick_owner"}]') == AckPacket(
        1234, [{"error": "servers.errors.cannot_kick_owner"}], "/"
    )
    assert decode("430[]") == AckPacket(0, [], "/")
    assert decode("43/admin,99[1,2]") == AckPacket(99, [1, 2], "/admin")


def test_connect_from_server() -> None:
    assert decode('40{"sid":"I81ksCr9IcVP81aTAAAB"}') == ConnectPacket("/", {"sid": "I81ksCr9IcVP81aTAAAB"})
    assert decode('40/admin,{"sid":"x"}') == ConnectPacket("/admin", {"sid": "x"})


def test_connect_without_payload() -> None:
    assert decode("40") == ConnectPacket("/", None)
    assert decode("40/admin,") == ConnectPacket("/admin", None)


def test_namespace_without_trailing_comma() -> None:
    assert decode("40/admin") == ConnectPacket("/admin", None)
    assert decode("41/admin") == DisconnectPacket("/admin")


def test_disconnect() -> None:
    assert decode("41") == DisconnectPacket("/")
    assert decode("41/admin,") == DisconnectPacket("/admin")


def test_connect_error_object() -> None:
    assert decode('44{"message":"bad token"}') == ConnectErrorPacket("bad token", {"message": "bad token"}, "/")


def test_connect_error_with_data_and_namespace() -> None:
    packet = decode('44/admin,{"message":"no","data":{"code":1}}')
    assert isinstance(packet, ConnectErrorPacket)
    assert (packet.message, packet.namespace, packet.data["data"]) == ("no", "/admin", {"code": 1})


def test_connect_error_string_payload_and_missing_message() -> None:
    assert decode('44"refused"').message == "refused"  # type: ignore[union-attr]
    assert decode("44{}").message == ""  # type: ignore[union-attr]
    assert decode('44{"message":5}').message == ""  # type: ignore[union-attr]


def test_unicode_payload() -> None:
    assert decode('42["m",{"content":"héllo 🎉 \\u00e9"}]').args == [{"content": "héllo 🎉 é"}]


@pytest.mark.parametrize("text", ["451-[\"e\",{\"_placeholder\":true,\"num\":0}]", "461-0[{}]", "45", "46/admin,1-[]"])
def test_binary_packets_rejected_as_unsupported(text: str) -> None:
    with pytest.raises(UnsupportedPacketError):
        decode(text)


@pytest.mark.parametrize(
    "text",
    [
        "4",  # empty message
        "47",  # unknown socket.io type
        "4x",
        "42",  # event without payload
        "42[]",  # empty array
        "42[1]",  # name not a string
        '42{"a":1}',  # not an array
        '42"e"',
        '42["e"',  # truncated JSON
        '42["e"]x',  # trailing garbage
        '42["e"] ',
        '42["e"][1]',
        "42[\"e\",]",
        "42abc",
        '42/admin,["e"',
        '42/admin,x["e"]',
        "43",  # ack without id or payload
        "43[]",  # ack without id
        "437",  # ack without payload
        '437{"a":1}',  # ack payload not an array
        "40[]",  # connect payload not an object
        '40"s"',
        "401{}",  # ack id on connect
        "41{}",  # disconnect with payload
        "417",
        "44",  # connect error without payload
        "441{}",
        "44[1]",
        "44null",
        "42" + "1" * 5000 + '["e"]',  # absurd ack id
        "43" + "9" * 19 + "[]",
        "4" + "[" * 100000,  # deep nesting
        "42" + "[" * 100000,
    ],
)
def test_malformed_socket_packets(text: str) -> None:
    with pytest.raises(FramingError):
        decode(text)


def test_malformed_error_text_does_not_quote_payload() -> None:
    with pytest.raises(FramingError) as info:
        decode('42["e",{"token":"secret-token-value"}')
    assert "secret-token-value" not in str(info.value)


# --------------------------------------------------------------------------- Socket.IO encode


def test_encode_event_compact_json() -> None:
    text = encode_event("message:send", {"content": "hi", "nonce": "n1", "embeds": []})
    assert text == '42["message:send",{"content":"hi","nonce":"n1","embeds":[]}]'


def test_encode_event_no_ascii_escaping() -> None:
    assert encode_event("m", "é🎉") == '42["m","é🎉"]'


def test_encode_event_no_args() -> None:
    assert encode_event("voice:leave") == '42["voice:leave"]'


def test_encode_event_bare_string_arg() -> None:
    assert encode_event("typing:start", "chan-1") == '42["typing:start","chan-1"]'


def test_encode_event_ack_id() -> None:
    assert encode_event("server:kick", {"a": 1}, ack_id=7) == '427["server:kick",{"a":1}]'
    assert encode_event("server:kick", ack_id=0) == '420["server:kick"]'
    assert encode_event("x", 1, ack_id=98765) == '4298765["x",1]'


def test_encode_event_namespace() -> None:
    assert encode_event("x", 1, namespace="/admin") == '42/admin,["x",1]'
    assert encode_event("x", ack_id=12, namespace="/admin") == '42/admin,12["x"]'


def test_encode_event_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="event"):
        encode_event(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="event"):
        encode_event("")
    with pytest.raises(TypeError, match="ack_id"):
        encode_event("x", ack_id="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ack_id"):
        encode_event("x", ack_id=True)
    with pytest.raises(ValueError, match="ack_id"):
        encode_event("x", ack_id=-1)
    with pytest.raises(ValueError, match="namespace"):
        encode_event("x", namespace="admin")
    with pytest.raises(ValueError, match="namespace"):
        encode_event("x", namespace="/a,b")
    with pytest.raises(TypeError, match="namespace"):
        encode_event("x", namespace=5)  # type: ignore[arg-type]


def test_encode_event_rejects_unserialisable_args() -> None:
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        encode_event("x", object())
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        encode_event("x", {"v": math.nan})
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        encode_event("x", {1j: 1})


def test_encode_connect() -> None:
    assert encode_connect({"token": "good"}) == '40{"token":"good"}'
    assert encode_connect() == "40"
    assert encode_connect({"token": "t"}, namespace="/admin") == '40/admin,{"token":"t"}'
    assert encode_connect(None, namespace="/admin") == "40/admin,"
    with pytest.raises(TypeError, match="data"):
        encode_connect("token")  # type: ignore[arg-type]


def test_encode_disconnect() -> None:
    assert encode_disconnect() == "41"
    assert encode_disconnect("/admin") == "41/admin,"


def test_encode_ack() -> None:
    assert encode_ack(7, [{}]) == "437[{}]"
    assert encode_ack(12, ()) == "4312[]"
    assert encode_ack(3, [1, "a"], namespace="/x") == '43/x,3[1,"a"]'
    with pytest.raises(ValueError):
        encode_ack(-2)


def test_encode_connect_error() -> None:
    assert encode_connect_error("bad token") == '44{"message":"bad token"}'
    with pytest.raises(TypeError):
        encode_connect_error(None)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- round trips

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=12,
)
_namespaces = st.just("/") | st.from_regex(r"/[a-z0-9/_-]{0,8}", fullmatch=True)


@given(
    event=st.text(min_size=1),
    args=st.lists(_json_values, max_size=4),
    ack_id=st.none() | st.integers(min_value=0, max_value=10**12),
    namespace=_namespaces,
)
def test_event_round_trip(event: str, args: list[Any], ack_id: int | None, namespace: str) -> None:
    text = encode_event(event, *args, ack_id=ack_id, namespace=namespace)
    assert decode(text) == EventPacket(event, args, ack_id, namespace)
    json.loads(text[text.index("[") :])  # the payload is plain JSON


@given(ack_id=st.integers(min_value=0, max_value=10**12), args=st.lists(_json_values, max_size=4), namespace=_namespaces)
def test_ack_round_trip(ack_id: int, args: list[Any], namespace: str) -> None:
    assert decode(encode_ack(ack_id, args, namespace=namespace)) == AckPacket(ack_id, args, namespace)


@given(data=st.none() | st.dictionaries(st.text(), _json_values, max_size=4), namespace=_namespaces)
def test_connect_round_trip(data: dict[str, Any] | None, namespace: str) -> None:
    assert decode(encode_connect(data, namespace)) == ConnectPacket(namespace, data)


@given(message=st.text(), namespace=_namespaces)
def test_connect_error_round_trip(message: str, namespace: str) -> None:
    packet = decode(encode_connect_error(message, namespace))
    assert isinstance(packet, ConnectErrorPacket)
    assert (packet.message, packet.namespace) == (message, namespace)


@given(st.text(max_size=40))
def test_decode_never_raises_anything_but_framing_error(text: str) -> None:
    try:
        decode(text)
    except FramingError:
        pass


@given(st.text(max_size=40))
def test_decode_of_message_prefix_never_crashes(text: str) -> None:
    for prefix in ("4", "42", "43", "40", "41", "44", "0"):
        try:
            decode(prefix + text)
        except FramingError:
            pass
