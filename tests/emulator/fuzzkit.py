"""Helpers for the emulator's tests: raw HTTP and raw socket.io clients (``Conn``: an ordered reader), strategies.

Raw clients on purpose: ``requests`` (urllib3) normalises ``..`` segments and a socket.io client
library refuses to send malformed packets, and the point here is to send exactly the bytes we
choose.
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
from typing import Any
from urllib.parse import quote

import requests
import websocket
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile(
    "emulator-fuzz", max_examples=25, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                           HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FUZZ = settings.get_profile("emulator-fuzz")
#: More examples where one near-valid body hides one broken field.
FUZZ_BODIES = settings(FUZZ, max_examples=20)

# ---------------------------------------------------------------------------------- strategies
#: Ids that try to escape their path segment or confuse a lookup.
ODD_IDS = st.one_of(
    st.sampled_from(["../x", "..", ".", "a?b", "a#b", "%2F", "a/b", "a%2Fb", "", " ", "é", "\u2603", "\x00",
                     "123456789012345678", "-1", "0", "null", "undefined", "[]", "{}", "%", "%zz", "a b",
                     "' OR 1=1 --", "x" * 300]),
    st.text(max_size=20),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                    st.text(max_size=30))
ANY_JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                        max_leaves=12)
#: Strings far over every length limit (up to ~1 MB).
HUGE = st.sampled_from([10_001, 70_000, 250_000, 1_000_000]).map(lambda n: "\u00e9" * n)
NON_JSON = st.one_of(st.sampled_from([b"{", b"{'a': 1}", b"[1,", b"nul", b"\xff\xfe", b"{\"a\":}", b"NaN"]),
                     st.binary(min_size=1, max_size=40).filter(lambda b: not _is_json(b)))
NON_OBJECT = st.one_of(SCALARS, st.lists(ANY_JSON, max_size=3))

_WRONG = {
    # expected kind -> values that kind never accepts
    "str": st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.lists(SCALARS, max_size=3), st.dictionaries(st.text(max_size=5), SCALARS, max_size=3),
                     st.just(""), st.just("   "), HUGE),
    "str?": st.one_of(st.booleans(), st.integers(), st.floats(allow_nan=False), st.lists(SCALARS, max_size=3),
                      st.dictionaries(st.text(max_size=5), SCALARS, max_size=3), HUGE),
    "bool": st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(SCALARS, max_size=2)),
    "int?": st.one_of(st.booleans(), st.floats(allow_nan=False).filter(lambda f: not f.is_integer()),
                      st.integers(max_value=-1), st.text(max_size=5), st.lists(SCALARS, max_size=2)),
    "strlist": st.one_of(st.none(), st.text(max_size=5), st.integers(), st.dictionaries(st.text(max_size=3), SCALARS),
                         st.lists(st.one_of(st.integers(), st.none(), st.lists(SCALARS, max_size=1)),
                                  min_size=1, max_size=3)),
    "objlist": st.one_of(st.text(max_size=5), st.integers(), st.dictionaries(st.text(max_size=3), SCALARS),
                         st.lists(st.one_of(st.integers(), st.text(max_size=3), st.none()), min_size=1, max_size=3)),
    "perm": st.one_of(st.booleans(), st.floats(allow_nan=False), st.integers(max_value=-1), st.just("12a"),
                      st.just("-5"), st.just(""), st.lists(SCALARS, max_size=2), st.just(str(2**80))),
    "color": st.one_of(st.integers(), st.booleans(), st.just("red"), st.just("#12345"), st.just("#gggggg"),
                       st.lists(SCALARS, max_size=2), HUGE),
    "status": st.one_of(st.none(), st.integers(), st.sampled_from(["offline", "ONLINE", "", "away"]),
                        st.lists(SCALARS, max_size=2)),
    "ctype": st.one_of(st.none(), st.integers(), st.sampled_from(["DM", "text", "", "GROUP_DM", "ANNOUNCEMENT"]),
                       st.lists(SCALARS, max_size=2)),
    "activity": st.one_of(st.none(), st.integers(), st.sampled_from(["PLAYING", "", "watching"]),
                          st.lists(SCALARS, max_size=2)),
    "history": st.one_of(st.integers(), st.sampled_from(["2d", "", "forever", "1D"]),
                         st.lists(SCALARS, max_size=2)),
    "emoji": st.one_of(st.none(), st.integers(), st.just(""), st.lists(SCALARS, max_size=2),
                       st.dictionaries(st.text(max_size=3), SCALARS, max_size=2), HUGE),
    "iso?": st.one_of(st.booleans(), st.integers(), st.sampled_from(["tomorrow", "2030-01-02T03:04:05", "", "1/2/2030"]),
                      st.lists(SCALARS, max_size=2), HUGE),
    "emojiname": st.one_of(st.none(), st.integers(), st.booleans(), st.sampled_from(["a", "x" * 33, "has space",
                                                                                    "dash-no", "\u00e9moji", ""]),
                           st.lists(SCALARS, max_size=2), HUGE),
    "ids100": st.one_of(st.none(), st.text(max_size=5), st.integers(), st.just([]),
                        st.lists(st.integers(), min_size=1, max_size=3),
                        st.just([str(i) for i in range(101)])),
}


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return False
    return True


@st.composite
def bad_object(draw: Any, schema: dict[str, str], real: dict[str, Any] | None = None,
               broken: str | None = None) -> dict[str, Any]:
    """An object that breaks ``schema`` in at least one field (``broken``, else drawn): wrong
    type, empty, huge or out of range; the other fields mostly plausible, sometimes absent or
    random; plus some unknown fields."""
    real = real or {}
    names = sorted(schema)
    if broken is None:
        broken = draw(st.sampled_from(names))
    obj: dict[str, Any] = {}
    for name in names:
        if name == broken:
            obj[name] = draw(_WRONG[schema[name]])
            continue
        mode = draw(st.sampled_from(["real", "real", "real", "absent", "absent", "junk"]))
        if mode == "real" and name in real:
            obj[name] = real[name]
        elif mode == "junk":
            obj[name] = draw(ANY_JSON)
    extra = draw(st.dictionaries(st.text(max_size=10).filter(lambda k: k not in schema), ANY_JSON, max_size=3))
    obj.update(extra)
    return obj


def bad_body(schema: dict[str, str], real: dict[str, Any] | None = None) -> st.SearchStrategy[bytes]:
    """Request bodies that a route with ``schema`` must refuse: not JSON, not an object, or a
    bad object."""
    return st.one_of(
        NON_JSON,
        NON_OBJECT.map(lambda v: json.dumps(v).encode()),
        bad_object(schema, real).map(lambda v: json.dumps(v).encode()),
    )


def encode_segment(value: str, raw: bool) -> str:
    """Percent-encode one path segment; ``raw`` leaves ``/ ? # . %`` as they are (a hostile client)."""
    return quote(value, safe="/?#.%" if raw else "")


# ---------------------------------------------------------------------------------- raw HTTP
class RawHttp:
    """A keep-alive ``http.client`` connection that sends paths byte for byte."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.conn = http.client.HTTPConnection(host, port, timeout=10)

    def request(self, method: str, path: str, body: bytes | None = None,
                token: str | None = None) -> tuple[int, bytes, str]:
        """Send one request; return ``(status, body, content type)``. Reconnects once if the
        server closed the idle connection."""
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in (0, 1):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
                return resp.status, data, resp.getheader("content-type") or ""
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def assert_error_body(status: int, data: bytes, ctype: str) -> Any:
    """A refused request answers JSON ``{"error": <str>}``, as every error of the service does."""
    assert ctype.startswith("application/json"), (status, ctype, data[:200])
    parsed = json.loads(data)
    assert isinstance(parsed, dict) and isinstance(parsed.get("error"), str) and parsed["error"], parsed
    return parsed


# ---------------------------------------------------------------------------------- raw socket.io
class RawSocket:
    """A raw Engine.IO v4 / Socket.IO v5 WebSocket client: send any text frame, await acks.

    A reader thread answers pings, files acks by id and queues every other packet.
    """

    def __init__(self, emu: Any, token: str) -> None:
        url = emu.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
        self.ws = websocket.create_connection(url, timeout=10, skip_utf8_validation=True)
        opened = self.ws.recv()
        assert opened.startswith("0"), opened
        self.ws.send("40" + json.dumps({"token": token}))
        connected = self.ws.recv()
        assert connected.startswith("40"), connected
        self.ws.settimeout(None)  # the reader waits as long as the test does; close() shuts it down
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.frames: list[str] = []              # every socket.io packet received, in wire order
        self.acks: dict[int, Any] = {}
        self._ack_cond = threading.Condition()
        self._next_id = 1000
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True, name="fuzz-socket-reader")
        self._reader.start()

    def _read(self) -> None:
        try:
            while True:
                frame = self.ws.recv()
                if not isinstance(frame, str) or not frame:
                    continue
                if frame.startswith("4"):
                    self.frames.append(frame[1:])
                if frame == "2":
                    self.send("3")
                elif frame.startswith("43"):
                    body = frame[2:]
                    digits = len(body) - len(body.lstrip("0123456789"))
                    with self._ack_cond:
                        self.acks[int(body[:digits])] = json.loads(body[digits:])
                        self._ack_cond.notify_all()
                elif frame.startswith("42"):
                    data = json.loads(frame[2:])
                    self.events.put((data[0], data[1] if len(data) > 1 else None))
                elif frame.startswith("41") or frame == "1":
                    break
        except Exception:
            pass
        finally:
            self.closed.set()

    def send(self, frame: str | bytes) -> None:
        with self._lock:
            if isinstance(frame, bytes):
                self.ws.send_binary(frame)
            else:
                self.ws.send(frame)

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def emit(self, event: str, *args: Any, ack: bool = False) -> int | None:
        """Emit ``[event, *args]``; with ``ack`` request an ack and return its id."""
        ack_id = self.new_id() if ack else None
        self.send("42" + ("" if ack_id is None else str(ack_id)) + json.dumps([event, *args]))
        return ack_id

    def wait_ack(self, ack_id: int, timeout: float = 5.0) -> Any:
        """Return the ack arguments (a list) for ``ack_id``. Raises AssertionError on timeout."""
        with self._ack_cond:
            if not self._ack_cond.wait_for(lambda: ack_id in self.acks or self.closed.is_set(), timeout):
                raise AssertionError(f"no ack {ack_id} within {timeout} s")
            assert ack_id in self.acks, "connection closed before the ack"
            return self.acks.pop(ack_id)

    def probe(self) -> None:
        """Prove the connection is alive and the server has handled what came before: an unknown
        event with an ack id is answered with an empty ack."""
        ack_id = self.emit("fuzz:probe", ack=True)
        assert ack_id is not None
        assert self.wait_ack(ack_id) == []

    def drain(self) -> list[tuple[str, Any]]:
        out = []
        while True:
            try:
                out.append(self.events.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        try:
            self.ws.close(timeout=1)
        except Exception:
            pass
        finally:
            self.ws.shutdown()          # close() skips the socket when the server already dropped it
            self._reader.join(5)


#: Name of the marker event a test sends after an action that must produce nothing.
MARKER = "test:marker"


class Conn(RawSocket):
    """An ordered socket.io reader for one user, with waits by event name."""

    def __init__(self, emu, token, user_id=None):
        super().__init__(emu, token)
        self.emu = emu
        if user_id is None:
            me = requests.get(emu.base_url + "/auth/me", headers={"Authorization": "Bearer " + token}, timeout=10)
            user_id = me.json()["user"]["publicId"]
        self.user_id = user_id
        self._markers = 0

    def wait(self, name, timeout=10.0, check=lambda d: True):
        """The next event called ``name`` that ``check`` accepts; earlier other events are skipped."""
        while True:
            try:
                event, data = self.events.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {name!r} event within {timeout} s") from None
            if event == name and check(data):
                return data

    def call(self, event, *args, timeout=5.0):
        """Emit with an ack request and return the ack's value (a tuple when it has several)."""
        ack_id = self.emit(event, *args, ack=True)
        data = self.wait_ack(ack_id, timeout)
        return None if not data else data[0] if len(data) == 1 else tuple(data)

    def before_marker(self):
        """Every event received before a marker that the emulator sends to this user now.

        The server writes to one socket in order, so whatever an earlier action made it send to
        this socket is in the list, and "nothing arrived" needs no quiet period.
        """
        self.probe()  # the server has handled what this socket sent before
        self._markers += 1
        number = self._markers
        self.emu.emit(MARKER, {"n": number}, to_user=self.user_id)
        seen = []
        while True:
            try:
                event, data = self.events.get(timeout=10)
            except queue.Empty:
                raise AssertionError(f"marker {number} not received") from None
            if event == MARKER and data == {"n": number}:
                return seen
            seen.append((event, data))

    def none(self, name):
        """True when no ``name`` event arrived before a marker sent now (see :meth:`before_marker`)."""
        return name not in [event for event, _ in self.before_marker()]
