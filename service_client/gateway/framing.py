"""Engine.IO v4 / Socket.IO v5 packet encoding and decoding (pure: no I/O).

Implements the Engine.IO v4 / Socket.IO v5 framing the service speaks, for the
websocket transport with text frames only:

* An Engine.IO packet is one WebSocket text frame whose first character is its
  type: ``0`` open, ``1`` close, ``2`` ping, ``3`` pong, ``4`` message,
  ``5`` upgrade, ``6`` noop.
* A Socket.IO packet is the text after the Engine.IO ``4``:
  ``<type>[<attachments>-][<namespace>,][<ack id>][<JSON>]`` with the types
  ``0`` CONNECT, ``1`` DISCONNECT, ``2`` EVENT, ``3`` ACK, ``4`` CONNECT_ERROR,
  ``5`` BINARY_EVENT and ``6`` BINARY_ACK. The default namespace ``/`` is
  written as nothing.

Binary packets (types 5 and 6, and binary WebSocket frames) are recognised and
rejected with :class:`UnsupportedPacketError`: every payload of the service is
JSON. JSON is written compactly (``separators=(",", ":")``, ``ensure_ascii=False``,
no NaN or infinity).

:func:`decode` is on the reader thread's hot path: it uses no regular
expression and parses the JSON payload in place (no slice of the frame text).

Every function here is pure and thread-safe.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "DEFAULT_NAMESPACE",
    "PING",
    "PONG",
    "AckPacket",
    "ConnectErrorPacket",
    "ConnectPacket",
    "DisconnectPacket",
    "EnginePacket",
    "EngineType",
    "EventPacket",
    "FramingError",
    "OpenPacket",
    "Packet",
    "SocketType",
    "UnsupportedPacketError",
    "decode",
    "encode_ack",
    "encode_connect",
    "encode_connect_error",
    "encode_disconnect",
    "encode_event",
    "encode_open",
]

#: The default Socket.IO namespace, written as nothing on the wire.
DEFAULT_NAMESPACE: Final = "/"


class EngineType(enum.IntEnum):
    """Engine.IO v4 packet types (the first character of a frame)."""

    OPEN = 0
    CLOSE = 1
    PING = 2
    PONG = 3
    MESSAGE = 4
    UPGRADE = 5
    NOOP = 6


class SocketType(enum.IntEnum):
    """Socket.IO v5 packet types (the first character after the Engine.IO ``4``)."""

    CONNECT = 0
    DISCONNECT = 1
    EVENT = 2
    ACK = 3
    CONNECT_ERROR = 4
    BINARY_EVENT = 5
    BINARY_ACK = 6


#: The Engine.IO ping frame the server sends.
PING: Final = "2"
#: The Engine.IO pong frame the client answers a ping with.
PONG: Final = "3"


class FramingError(ValueError):
    """A frame that is not a valid Engine.IO v4 / Socket.IO v5 text packet.

    The message describes the defect and never quotes the frame's payload (it
    may carry credentials or user data).
    """


class UnsupportedPacketError(FramingError):
    """A valid but unsupported packet: BINARY_EVENT, BINARY_ACK, or a binary frame."""


# --------------------------------------------------------------------------- packets


@dataclass(slots=True)
class OpenPacket:
    """Engine.IO open packet (``0{...}``), the server's first frame.

    Attributes:
        sid: The Engine.IO session id.
        ping_interval_ms: Milliseconds between the server's pings.
        ping_timeout_ms: Milliseconds the server waits for a pong; the client
            treats silence longer than ``ping_interval_ms + ping_timeout_ms``
            as a lost connection.
        max_payload: Largest payload the server accepts, bytes (0 when not given).
        upgrades: Transport upgrades offered (empty on the websocket transport).
    """

    sid: str
    ping_interval_ms: int
    ping_timeout_ms: int
    max_payload: int = 0
    upgrades: list[str] = field(default_factory=list)


@dataclass(slots=True)
class EnginePacket:
    """An Engine.IO packet other than open and message: close, ping, pong, upgrade, noop.

    Attributes:
        type: The Engine.IO packet type.
        data: The text after the type character ("" when none; ``probe`` in
            an upgrade probe ping).
    """

    type: EngineType
    data: str = ""


@dataclass(slots=True)
class ConnectPacket:
    """Socket.IO CONNECT: the client's request (auth) or the server's acceptance (sid).

    Attributes:
        namespace: The namespace (``/`` by default).
        data: The JSON object carried (``{"sid": ...}`` from the server, the
            auth object from the client), or None when there is none.
    """

    namespace: str = DEFAULT_NAMESPACE
    data: dict[str, Any] | None = None


@dataclass(slots=True)
class DisconnectPacket:
    """Socket.IO DISCONNECT (``41``): leaving, or a server-initiated disconnect.

    Attributes:
        namespace: The namespace (``/`` by default).
    """

    namespace: str = DEFAULT_NAMESPACE


@dataclass(slots=True)
class EventPacket:
    """Socket.IO EVENT (``42[...]``).

    Attributes:
        event: The event name (first element of the JSON array).
        args: The remaining elements, in order (possibly empty).
        ack_id: The ack id the sender asks an answer for, or None.
        namespace: The namespace (``/`` by default).
    """

    event: str
    args: list[Any]
    ack_id: int | None = None
    namespace: str = DEFAULT_NAMESPACE


@dataclass(slots=True)
class AckPacket:
    """Socket.IO ACK (``43<id>[...]``).

    Attributes:
        ack_id: The id of the EVENT this answers.
        args: The ack's arguments (the JSON array).
        namespace: The namespace (``/`` by default).
    """

    ack_id: int
    args: list[Any]
    namespace: str = DEFAULT_NAMESPACE


@dataclass(slots=True)
class ConnectErrorPacket:
    """Socket.IO CONNECT_ERROR (``44{"message": ...}``): the server refused the connection.

    Attributes:
        message: The refusal text ("" when the server gave none).
        data: The whole payload (an object, or the bare string of older servers).
        namespace: The namespace (``/`` by default).
    """

    message: str
    data: Any = None
    namespace: str = DEFAULT_NAMESPACE


#: Any decoded packet.
Packet = (
    OpenPacket
    | EnginePacket
    | ConnectPacket
    | DisconnectPacket
    | EventPacket
    | AckPacket
    | ConnectErrorPacket
)

# --------------------------------------------------------------------------- JSON

_encode_json = json.JSONEncoder(
    separators=(",", ":"), ensure_ascii=False, allow_nan=False
).encode
_raw_decode = json.JSONDecoder().raw_decode

#: Longest ack id accepted, decimal digits (bounds int() on hostile input).
_MAX_ACK_DIGITS: Final = 18

_ENGINE_TYPES: Final = {
    "1": EngineType.CLOSE,
    "2": EngineType.PING,
    "3": EngineType.PONG,
    "5": EngineType.UPGRADE,
    "6": EngineType.NOOP,
}


def _dumps(value: Any, what: str) -> str:
    try:
        return _encode_json(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} is not JSON-serialisable: {exc}") from exc


def _check_namespace(namespace: str) -> str:
    """The wire prefix for ``namespace``: "" for ``/``, else ``<namespace>,``."""
    if namespace == DEFAULT_NAMESPACE:
        return ""
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a str, not {type(namespace).__name__}")
    if not namespace.startswith("/") or "," in namespace:
        raise ValueError(f"namespace must start with '/' and contain no ',': {namespace!r}")
    return namespace + ","


def _check_ack_id(ack_id: int) -> str:
    if isinstance(ack_id, bool) or not isinstance(ack_id, int):
        raise TypeError(f"ack_id must be an int, not {type(ack_id).__name__}")
    if ack_id < 0:
        raise ValueError(f"ack_id must be >= 0, got {ack_id}")
    return str(ack_id)


# --------------------------------------------------------------------------- encoders


def encode_open(
    sid: str,
    ping_interval_ms: int,
    ping_timeout_ms: int,
    max_payload: int = 1_000_000,
) -> str:
    """Encode an Engine.IO open packet (what a server sends first; used by test servers).

    Args:
        sid: The Engine.IO session id.
        ping_interval_ms: Milliseconds between pings.
        ping_timeout_ms: Milliseconds the server waits for a pong.
        max_payload: Largest accepted payload, bytes.

    Returns:
        ``0{"sid":...,"upgrades":[],"pingInterval":...,"pingTimeout":...,"maxPayload":...}``.
    """
    return "0" + _encode_json(
        {
            "sid": sid,
            "upgrades": [],
            "pingInterval": ping_interval_ms,
            "pingTimeout": ping_timeout_ms,
            "maxPayload": max_payload,
        }
    )


def encode_connect(data: dict[str, Any] | None = None, namespace: str = DEFAULT_NAMESPACE) -> str:
    """Encode a Socket.IO CONNECT in an Engine.IO message (the bot's auth object goes in it).

    Args:
        data: The auth object a client sends (``{"token": ...}``), or the
            ``{"sid": ...}`` a server answers; None for none.
        namespace: The namespace (``/`` is written as nothing).

    Returns:
        For example ``40{"token":"t"}`` or ``40/admin,{"token":"t"}``.

    Raises:
        TypeError: ``data`` is not a dict or None, or is not JSON-serialisable.
        ValueError: ``namespace`` does not start with ``/`` or contains ``,``.
    """
    prefix = _check_namespace(namespace)
    if data is None:
        return "40" + prefix
    if not isinstance(data, dict):
        raise TypeError(f"data must be a dict or None, not {type(data).__name__}")
    return "40" + prefix + _dumps(data, "data")


def encode_disconnect(namespace: str = DEFAULT_NAMESPACE) -> str:
    """Encode a Socket.IO DISCONNECT (``41``) in an Engine.IO message.

    Args:
        namespace: The namespace (``/`` is written as nothing).

    Returns:
        ``41`` or ``41/admin,``.

    Raises:
        ValueError: ``namespace`` does not start with ``/`` or contains ``,``.
    """
    return "41" + _check_namespace(namespace)


def encode_event(
    event: str,
    *args: Any,
    ack_id: int | None = None,
    namespace: str = DEFAULT_NAMESPACE,
) -> str:
    """Encode a Socket.IO EVENT in an Engine.IO message (``42[...]``, or ``42<ack id>[...]``).

    Args:
        event: The event name, for example ``message:send``.
        *args: The event's JSON-serialisable arguments, in order.
        ack_id: Ask the receiver for an ACK with this id (an int >= 0), or None.
        namespace: The namespace (``/`` is written as nothing).

    Returns:
        For example ``42["message:send",{"content":"hi"}]`` or, with
        ``ack_id=7``, ``427["server:kick",{...}]``.

    Raises:
        TypeError: ``event`` is not a str, ``ack_id`` is not an int, or an
            argument is not JSON-serialisable (NaN and infinity included).
        ValueError: ``event`` is empty, ``ack_id`` is negative, or
            ``namespace`` is malformed.
    """
    if not isinstance(event, str):
        raise TypeError(f"event must be a str, not {type(event).__name__}")
    if not event:
        raise ValueError("event must not be empty")
    prefix = _check_namespace(namespace)
    if ack_id is not None:
        prefix += _check_ack_id(ack_id)
    return "42" + prefix + _dumps([event, *args], f"arguments of event {event!r}")


def encode_ack(ack_id: int, args: list[Any] | tuple[Any, ...] = (), namespace: str = DEFAULT_NAMESPACE) -> str:
    """Encode a Socket.IO ACK in an Engine.IO message.

    Args:
        ack_id: The id of the EVENT answered (an int >= 0).
        args: The ack's JSON-serialisable arguments.
        namespace: The namespace (``/`` is written as nothing).

    Returns:
        For example ``437[{}]``.

    Raises:
        TypeError: ``ack_id`` is not an int or ``args`` is not JSON-serialisable.
        ValueError: ``ack_id`` is negative or ``namespace`` is malformed.
    """
    prefix = _check_namespace(namespace) + _check_ack_id(ack_id)
    return "43" + prefix + _dumps(list(args), "args")


def encode_connect_error(message: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """Encode a Socket.IO CONNECT_ERROR (what a server sends to refuse; used by test servers).

    Args:
        message: The refusal text.
        namespace: The namespace (``/`` is written as nothing).

    Returns:
        For example ``44{"message":"bad token"}``.

    Raises:
        TypeError: ``message`` is not a str.
        ValueError: ``namespace`` is malformed.
    """
    if not isinstance(message, str):
        raise TypeError(f"message must be a str, not {type(message).__name__}")
    return "44" + _check_namespace(namespace) + _encode_json({"message": message})


# --------------------------------------------------------------------------- decoder


def _json_at(text: str, pos: int) -> Any:
    """Parse the JSON value filling ``text[pos:]`` without copying the text."""
    try:
        value, end = _raw_decode(text, pos)
    except ValueError as exc:  # json.JSONDecodeError, RecursionError is not a ValueError
        raise FramingError(f"invalid JSON payload at offset {pos}") from exc
    except RecursionError as exc:
        raise FramingError("JSON payload nested too deeply") from exc
    if end != len(text):
        raise FramingError(f"trailing data after the JSON payload at offset {end}")
    return value


def _decode_open(text: str) -> OpenPacket:
    data = _json_at(text, 1) if len(text) > 1 else None
    if not isinstance(data, dict):
        raise FramingError("open packet payload must be a JSON object")
    sid = data.get("sid")
    interval = data.get("pingInterval")
    timeout = data.get("pingTimeout")
    max_payload = data.get("maxPayload", 0)
    upgrades = data.get("upgrades", [])
    if not isinstance(sid, str):
        raise FramingError("open packet has no string 'sid'")
    for name, value in (("pingInterval", interval), ("pingTimeout", timeout), ("maxPayload", max_payload)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise FramingError(f"open packet field {name!r} must be an integer >= 0")
    if not isinstance(upgrades, list):
        raise FramingError("open packet field 'upgrades' must be a list")
    return OpenPacket(sid, interval, timeout, max_payload, upgrades)  # type: ignore[arg-type]


def _decode_message(text: str) -> Packet:
    """Decode the Socket.IO packet in an Engine.IO message (``text[0] == "4"``)."""
    n = len(text)
    if n < 2:
        raise FramingError("empty Engine.IO message")
    kind = text[1]
    if kind == "5" or kind == "6":
        raise UnsupportedPacketError("binary Socket.IO packets are not supported")
    if kind < "0" or kind > "4":
        raise FramingError("unknown Socket.IO packet type")
    pos = 2
    namespace = DEFAULT_NAMESPACE
    if pos < n and text[pos] == "/":
        comma = text.find(",", pos)
        if comma < 0:
            namespace = text[pos:]
            pos = n
        else:
            namespace = text[pos:comma]
            pos = comma + 1
    start = pos
    while pos < n and "0" <= text[pos] <= "9":
        pos += 1
    if pos - start > _MAX_ACK_DIGITS:
        raise FramingError("ack id too long")
    ack_id = int(text[start:pos]) if pos > start else None
    payload: Any = _json_at(text, pos) if pos < n else None
    has_payload = pos < n

    if kind == "2":  # EVENT
        if type(payload) is not list or not payload or not isinstance(payload[0], str):
            raise FramingError("EVENT payload must be a JSON array starting with the event name")
        event = payload.pop(0)
        return EventPacket(event, payload, ack_id, namespace)
    if kind == "3":  # ACK
        if ack_id is None:
            raise FramingError("ACK without an ack id")
        if type(payload) is not list:
            raise FramingError("ACK payload must be a JSON array")
        return AckPacket(ack_id, payload, namespace)
    if ack_id is not None:
        raise FramingError("ack id on a packet type that takes none")
    if kind == "0":  # CONNECT
        if has_payload and not isinstance(payload, dict):
            raise FramingError("CONNECT payload must be a JSON object")
        return ConnectPacket(namespace, payload)
    if kind == "1":  # DISCONNECT
        if has_payload:
            raise FramingError("DISCONNECT takes no payload")
        return DisconnectPacket(namespace)
    # CONNECT_ERROR
    if isinstance(payload, str):
        return ConnectErrorPacket(payload, payload, namespace)
    if isinstance(payload, dict):
        message = payload.get("message")
        return ConnectErrorPacket(message if isinstance(message, str) else "", payload, namespace)
    raise FramingError("CONNECT_ERROR payload must be a JSON object or string")


def decode(text: str) -> Packet:
    """Decode one WebSocket text frame into a packet.

    Args:
        text: The frame's text.

    Returns:
        An :class:`OpenPacket`, an :class:`EnginePacket` (close, ping, pong,
        upgrade, noop), or, for an Engine.IO message, the Socket.IO packet:
        :class:`ConnectPacket`, :class:`DisconnectPacket`, :class:`EventPacket`,
        :class:`AckPacket` or :class:`ConnectErrorPacket`.

    Raises:
        UnsupportedPacketError: A BINARY_EVENT / BINARY_ACK packet, or ``text``
            is bytes (a binary frame).
        FramingError: Anything malformed: empty text, unknown packet type,
            invalid or trailing JSON, a payload of the wrong shape (an EVENT
            that is not a non-empty array starting with a string, an ACK
            without id or array, a CONNECT payload that is not an object, a
            DISCONNECT with a payload, an open packet missing its fields).
    """
    if type(text) is not str:
        if isinstance(text, (bytes, bytearray, memoryview)):
            raise UnsupportedPacketError("binary frames are not supported")
        if not isinstance(text, str):
            raise FramingError(f"frame must be text, not {type(text).__name__}")
    # Hot path: a default-namespace EVENT without ack id.
    if text.startswith("42["):
        payload = _json_at(text, 2)
        if type(payload) is list and payload and type(payload[0]) is str:
            event = payload.pop(0)
            return EventPacket(event, payload)
        raise FramingError("EVENT payload must be a JSON array starting with the event name")
    if not text:
        raise FramingError("empty frame")
    head = text[0]
    if head == "4":
        return _decode_message(text)
    if head == "0":
        return _decode_open(text)
    engine_type = _ENGINE_TYPES.get(head)
    if engine_type is None:
        raise FramingError("unknown Engine.IO packet type")
    return EnginePacket(engine_type, text[1:])
