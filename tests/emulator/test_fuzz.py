"""Property-based abuse of the emulator: bad input is refused cleanly and changes nothing.

Every REST route (core and extended) and every client-to-server socket event gets malformed JSON,
wrong types, huge strings (up to ~1 MB), unknown fields and odd ids. The answer is a 4xx with a
JSON ``{"error": ...}`` body, a dropped event or an error ack, never a 500 or a dead connection,
and the stored state (``Emulator.snapshot()``) is unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, get_args, get_type_hints
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service_client.endpoints import ENDPOINTS, Endpoint, Kind

from .fuzzkit import (
    _WRONG,
    ANY_JSON,
    FUZZ,
    FUZZ_BODIES,
    HUGE,
    NON_JSON,
    NON_OBJECT,
    ODD_IDS,
    SCALARS,
    RawHttp,
    RawSocket,
    assert_error_body,
    bad_object,
    encode_segment,
)


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    schema: dict[str, str] | None = None   # JSON body fields and kinds (None: no body read)
    query: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.method} {self.template}"


#: The fixtures' short name of each path parameter of the catalog (the kind of id it takes).
PARAMS = {"server_id": "sid", "channel_id": "cid", "user_id": "uid", "role_id": "rid", "message_id": "mid",
          "category_id": "cat", "override_id": "oid", "emoji_id": "eid", "webhook_id": "wid", "code": "code",
          "token": "token"}


def _kind(hint: Any) -> Kind | None:
    """The :class:`~service_client.endpoints.Kind` inside a body field's type hint."""
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, Kind):
            return meta
    for arg in get_args(hint):
        found = _kind(arg)
        if found is not None:
            return found
    return None


def _schema(body: type | None) -> dict[str, str] | None:
    """The fuzz kinds of a declared body's fields, from the catalog's TypedDict."""
    if body is None:
        return None
    kinds = {name: _kind(hint) for name, hint in get_type_hints(body, include_extras=True).items()}
    missing = [name for name, kind in kinds.items() if kind is None]
    assert not missing, f"{body.__name__}: give these fields a Kind: {missing}"
    return {name: kind.name for name, kind in kinds.items() if kind is not None}


def _route(ep: Endpoint) -> Route:
    template = re.sub(r"\{(\w+)\}", lambda m: "{" + PARAMS[m.group(1)] + "}", ep.path)
    return Route(ep.method, template, _schema(ep.body), ep.query)


#: Every REST endpoint of the catalog, with its body's fields and its query parameters.
ROUTES = [_route(ep) for ep in ENDPOINTS]
PARAM_ROUTES = [r for r in ROUTES if "{" in r.template]
BODY_ROUTES = [r for r in ROUTES if r.schema]
QUERY_ROUTES = [r for r in ROUTES if r.query]


def test_every_kind_of_body_field_has_values_the_fuzz_sends():
    """A body field of a kind the fuzz cannot break is a field no test refuses: give it wrong values."""
    kinds = {kind for r in BODY_ROUTES for kind in (r.schema or {}).values()}
    assert sorted(kinds - set(_WRONG)) == [], "add wrong values for these kinds to _WRONG"


@dataclass
class Fuzz:
    world: Any
    emu: Any
    token: str
    real: dict[str, str]       # template param -> a real id of that kind
    http: RawHttp

    def path(self, template: str, values: dict[str, str], raw: bool = False) -> str:
        out = template
        for name, value in values.items():
            out = out.replace("{" + name + "}", encode_segment(value, raw))
        return "/api/v2" + out


@pytest.fixture
def fz(world):
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    role = emu.create_role(sid, "mod", 2)["role"]
    message = emu.post_message(gid, world.human["publicId"], "hello <world>")["message"]
    invite = emu.create_invite(sid, gid, world.human["publicId"])["invite"]
    emu.set_override(gid, role["publicId"], "ROLE", allow=512)
    host, port = emu.socket_url.split("//")[1].split(":")
    http = RawHttp(host, int(port))
    real = {"sid": sid, "cid": gid, "uid": world.bot["publicId"], "rid": role["publicId"],
            "code": invite["code"], "mid": message["publicId"], "cat": world.general["categoryId"],
            "oid": emu.overrides(gid)[0]["id"]}
    real.update(_extra_ids(world))
    yield Fuzz(world=world, emu=emu, token=world.human_token, real=real, http=http)
    http.close()


def _extra_ids(world: Any) -> dict[str, str]:
    """Real ids of a custom emoji and a webhook (with its token) in the world's server."""
    import requests

    sid, gid = world.server["publicId"], world.general["publicId"]
    auth = {"Authorization": f"Bearer {world.human_token}"}
    base = world.emulator.base_url
    emoji = requests.post(f"{base}/servers/{sid}/emojis", json={"name": "wave", "imageUrl": "http://img/w.png"},
                          headers=auth, timeout=5).json()["emoji"]
    hook = requests.post(f"{base}/channels/{gid}/webhooks", json={"name": "hook"}, headers=auth,
                         timeout=5).json()["webhook"]
    return {"eid": emoji["publicId"], "wid": hook["publicId"], "token": hook["token"]}


def _check_refused(fz: Fuzz, before: dict[str, Any], status: int, data: bytes, ctype: str, what: str) -> None:
    assert status < 500, (what, status, data[:300])
    if status >= 400:
        assert_error_body(status, data, ctype)
        assert fz.emu.snapshot() == before, f"{what} answered {status} but changed the state"


@pytest.mark.parametrize("route", PARAM_ROUTES, ids=str)
def test_rest_odd_ids_never_reach_an_entity(fz, route):
    """Odd ids (``../x``, ``a?b``, ``%2F``, unicode, empty) or real ids of the wrong kind, sent
    encoded or raw, with any body: always a JSON 4xx and nothing changes."""
    names = [seg[1:-1] for seg in route.template.split("/") if seg.startswith("{")]
    users = {fz.real["uid"], fz.world.human["publicId"]}
    wrong_kind = {n: sorted(v for k, v in fz.real.items() if k != n and not (n == "uid" and v in users))
                  for n in names}
    if route.template.startswith("/channels/{cid}/overrides"):
        # a category id is a valid scope there: category overrides are set through these routes
        wrong_kind["cid"].remove(fz.real["cat"])

    @FUZZ
    @given(ids=st.fixed_dictionaries({n: ODD_IDS | st.sampled_from(wrong_kind[n]) for n in names}),
           raw=st.booleans(), body=st.none() | NON_JSON | ANY_JSON.map(lambda v: json.dumps(v).encode()))
    def run(ids, raw, body):
        before = fz.emu.snapshot()
        path = fz.path(route.template, ids, raw)
        status, data, ctype = fz.http.request(route.method, path, body, fz.token)
        assert 400 <= status < 500, (path, status, data[:300])
        _check_refused(fz, before, status, data, ctype, path)

    run()


def _plausible(fz: Fuzz) -> dict[str, Any]:
    return {"name": "fine", "iconUrl": None, "imageUrl": "http://img", "type": "TEXT", "categoryId": None,
            "isPrivate": False, "status": "idle", "roles": [fz.real["rid"]], "nickname": "nick",
            "color": "#a0b0c0", "hoist": True, "permissions": "8", "position": 2,
            "channelPublicId": fz.real["cid"], "maxAge": 60, "maxUses": 3, "description": "about",
            "messageIds": [fz.real["mid"]], "muted": True, "muteUntil": "2030-01-01T00:00:00Z",
            "mentionsOnly": False, "isAnimated": False, "avatarUrl": "http://img/a.png", "content": "fine",
            "username": "Hook", "embeds": [{"title": "t"}], "targetId": fz.real["rid"], "allow": "1024", "deny": "512"}


def _send_body(fz: Fuzz, route: Route, body: bytes) -> None:
    path = fz.path(route.template, {k: v for k, v in fz.real.items() if "{" + k + "}" in route.template})
    before = fz.emu.snapshot()
    status, data, ctype = fz.http.request(route.method, path, body, fz.token)
    assert 400 <= status < 500, (route.method, path, body[:200], status, data[:300])
    _check_refused(fz, before, status, data, ctype, f"{route} {body[:100]!r}")


@pytest.mark.parametrize("route", BODY_ROUTES, ids=str)
def test_rest_non_object_bodies_are_400(fz, route):
    """Bodies that are not JSON, or JSON but not an object: 400 and nothing changes."""
    @FUZZ
    @given(body=st.one_of(NON_JSON, NON_OBJECT.map(lambda v: json.dumps(v).encode())))
    def run(body):
        _send_body(fz, route, body)

    run()


@pytest.mark.parametrize("route,field", [(r, f) for r in BODY_ROUTES for f in sorted(r.schema or {})],
                         ids=lambda v: str(v))
def test_rest_bad_field_is_400_and_changes_nothing(fz, route, field):
    """Real ids, a caller with every permission (the owner), a body that is valid except for one
    field: wrong type, empty, huge (up to ~1 MB) or out of range, plus unknown fields."""
    plausible = _plausible(fz)
    if route.template.endswith("/overrides"):
        plausible["type"] = "ROLE"                  # an override's type, not a channel's

    @FUZZ_BODIES
    @given(body=bad_object(route.schema, plausible, field).map(lambda v: json.dumps(v).encode()))
    def run(body):
        _send_body(fz, route, body)

    run()


QUERY_VALUES = st.one_of(st.text(max_size=20), ODD_IDS, st.integers(-10**6, 10**6).map(str),
                         st.just("9" * 5000), st.just(""), st.just("\u00e9" * 2000))


@pytest.mark.parametrize("route", QUERY_ROUTES, ids=str)
def test_rest_odd_queries_never_fail(fz, route):
    """Any query (odd values, repeated or unknown names, broken escapes): never a 5xx; a refusal
    is a JSON error; a read changes nothing. (Request lines over about 64 KB are refused by
    uvicorn's HTTP parser itself with a plain-text 400, before the emulator sees them.)"""
    path = fz.path(route.template, {k: v for k, v in fz.real.items() if "{" + k + "}" in route.template})

    @FUZZ
    @given(pairs=st.lists(st.tuples(st.sampled_from(route.query) | st.text(max_size=5), QUERY_VALUES), max_size=4),
           junk=st.sampled_from(["", "&&", "%zz", "=x", "a=%", "&q", "limit"]))
    def run(pairs, junk):
        before = fz.emu.snapshot()
        query = urlencode(pairs) + ("&" + junk if junk else "")
        status, data, ctype = fz.http.request("GET", path + "?" + query, None, fz.token)
        assert status < 500, (query[:200], status, data[:300])
        json.loads(data)
        _check_refused(fz, before, status, data, ctype, f"{route}?{query[:100]}")
        assert fz.emu.snapshot() == before

    run()


def test_rest_unknown_paths_and_methods(fz):
    """Unknown paths answer a JSON 404, wrong methods on known paths a JSON 405."""
    @FUZZ
    @given(segs=st.lists(ODD_IDS.map(lambda s: encode_segment(s, False)), min_size=1, max_size=4),
           method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    def run(segs, method):
        before = fz.emu.snapshot()
        status, data, ctype = fz.http.request(method, "/api/v2/zz/" + "/".join(segs), b"{}", fz.token)
        assert status == 404
        _check_refused(fz, before, status, data, ctype, "/zz/" + "/".join(segs))

    run()
    for method, path, expected in (("PUT", "/api/v2/servers", 405), ("GET", f"/api/v2/servers/{fz.real['sid']}/channels", 405),
                                   ("DELETE", f"/api/v2/servers/{fz.real['sid']}/members/{fz.real['uid']}", 405),
                                   ("PUT", f"/api/v2/servers/{fz.real['sid']}/bans/{fz.real['uid']}", 404)):
        status, data, ctype = fz.http.request(method, path, None, fz.token)
        assert status == expected, (method, path, status)
        assert_error_body(status, data, ctype)


# ---------------------------------------------------------------------------------- socket
@dataclass(frozen=True)
class Event:
    name: str
    schema: dict[str, str]
    ack: bool = False


EVENTS = [
    Event("message:send", {"channelPublicId": "str", "content": "content", "embeds": "objlist", "replyToId": "id?",
                           "nonce": "id?"}),
    Event("message:edit", {"messagePublicId": "str", "content": "content", "embeds": "objlist"}),
    Event("message:delete", {"messagePublicId": "str"}),
    Event("message:react", {"messagePublicId": "str", "emoji": "emoji"}),
    Event("message:reaction_clear", {"messagePublicId": "str"}),
    Event("presence:update", {"status": "status"}),
    Event("activity:update", {"type": "activity", "name": "nonstr", "details": "nonstr?", "startedAt": "int?"}),
    Event("server:kick", {"serverPublicId": "str", "userPublicId": "str"}, ack=True),
    Event("server:ban", {"serverPublicId": "str", "userPublicId": "str", "reason": "str?",
                         "deleteHistory": "history"}, ack=True),
    Event("server:unban", {"serverPublicId": "str", "userPublicId": "str"}, ack=True),
    Event("voice:join", {"channelPublicId": "str"}),
    Event("voice:state", {"muted": "bool", "deafened": "bool", "speaking": "bool", "isStreaming": "bool",
                          "isCameraOn": "bool", "cameraStreamId": "str?", "screenTrackId": "str?"}),
]

# kinds used only by the override routes
_WRONG.setdefault("otype", st.one_of(st.none(), st.integers(), st.sampled_from(["role", "USER", "", "EVERYONE"]),
                                     st.lists(SCALARS, max_size=2)))
# kinds used only by socket payloads
_WRONG.setdefault("content", st.one_of(st.booleans(), st.integers(), st.floats(allow_nan=False),
                                       st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                                       st.sampled_from([70_000, 300_000, 1_000_000]).map(lambda n: "\u00e9" * n)))
_WRONG.setdefault("id?", st.one_of(st.booleans(), st.integers(), st.lists(st.integers(), max_size=2),
                                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), HUGE))
_WRONG.setdefault("nonstr", st.one_of(st.none(), st.booleans(), st.integers(), st.lists(st.integers(), max_size=2)))
_WRONG.setdefault("nonstr?", st.one_of(st.booleans(), st.integers(), st.lists(st.integers(), max_size=2),
                                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)))


@pytest.fixture
def sock(fz):
    emu, world = fz.emu, fz.world
    voice = next(c for c in world.channels if c["type"] == "VOICE")
    fz.real.update({"voice": voice["publicId"]})
    conn = RawSocket(emu, fz.token)
    emu.voice_join(world.human["publicId"], voice["publicId"])   # so voice:state has something to change
    yield conn
    conn.close()


def _payloads(ev: Event, real: dict[str, Any], field: str | None) -> st.SearchStrategy[list[Any]]:
    """Argument lists for an event that the server must refuse: with ``field`` an otherwise
    valid object with that field broken (sometimes followed by an extra argument), else no
    argument or a non-object."""
    if field is not None:
        return st.tuples(bad_object(ev.schema, real, field), st.lists(ANY_JSON, max_size=1)).map(
            lambda t: [t[0], *t[1]])
    return st.one_of(st.just([]), NON_OBJECT.map(lambda v: [v]))


@pytest.mark.parametrize("ev,field", [(e, f) for e in EVENTS for f in [None, *sorted(e.schema)]],
                         ids=lambda v: v.name if isinstance(v, Event) else str(v))
def test_socket_bad_payloads_are_dropped(fz, sock, ev, field):
    """Bad payloads for every client event (no argument, not an object, one broken field in an
    otherwise valid payload, extra arguments): dropped or an error ack, the connection stays up,
    the stored state is unchanged."""
    real = {"channelPublicId": fz.real["cid"], "messagePublicId": fz.real["mid"], "serverPublicId": fz.real["sid"],
            "userPublicId": fz.real["uid"], "content": "fine", "embeds": [], "emoji": "\U0001F600", "status": "idle",
            "type": "playing", "name": "game"}
    if ev.name == "voice:join":
        real["channelPublicId"] = fz.real["voice"]

    @(FUZZ if field is None else FUZZ_BODIES)
    @given(args=_payloads(ev, real, field), with_ack=st.booleans())
    def run(args, with_ack):
        before = fz.emu.snapshot()
        ack_id = sock.emit(ev.name, *args, ack=ev.ack or with_ack)
        if ev.ack:
            answer = sock.wait_ack(ack_id)
            assert len(answer) == 1 and isinstance(answer[0], dict) and \
                isinstance(answer[0].get("error"), str) and answer[0]["error"].startswith("servers.errors."), answer
        elif ack_id is not None:
            assert sock.wait_ack(ack_id) == []
        sock.probe()
        assert fz.emu.snapshot() == before, f"{ev.name} {str(args)[:200]} changed the state"

    run()
    assert not sock.closed.is_set()
    assert fz.emu.connection_count() == 1


def test_socket_typing_and_unknown_events_are_dropped(fz, sock):
    """Typing with anything but a visible channel id, unknown or reserved event names, and
    ``voice:leave`` with junk arguments: nothing breaks."""
    known = {e.name for e in EVENTS} | {"typing:start", "typing:stop", "voice:leave"}

    @FUZZ
    @given(name=st.one_of(st.sampled_from(["typing:start", "typing:stop", "connect", "disconnect",
                                           "connect_error", "server:join", "server:subscribe", "", "message"]),
                          st.text(max_size=20).filter(lambda n: n not in known)),
           args=st.lists(ANY_JSON, max_size=3))
    def run(name, args):
        before = fz.emu.snapshot()
        sock.emit(name, *args)
        sock.probe()
        assert fz.emu.snapshot() == before

    run()
    sock.emit("voice:leave", {"junk": [1, 2]}, 5)
    sock.probe()
    assert fz.emu.voice_users(fz.real["voice"]) == []
    assert fz.emu.connection_count() == 1


RAW_FRAMES = st.one_of(
    st.sampled_from(["42", "42[", '42["message:send",{bad', "42{}", '42{"a":1}', "42[]", "42[5]", "42[null]",
                     '42[["x"]]', "4x", "4", "49", "43", "431", "431[", "44", '45-["x"]', "46", "40",
                     '40{"token":5}', "48", "4" + "9" * 30, '42999999999999999999999["x"]', "42-1[\"x\"]",
                     '42/nsp,["x"]', '42/,["x"]', "5", "6", "3", "9", "x", "", "b", "b!!", "bAAAA", "0", "2",
                     '451-["x",{"_placeholder":true,"num":0}]', '460-[]', "42" + "[" * 5000]),
    st.binary(max_size=20),
    st.text(max_size=40).map(lambda t: "42" + t),
    st.text(max_size=40).map(lambda t: "4" + t),
)


def test_socket_malformed_frames_are_dropped(fz, sock):
    """Malformed Engine.IO and socket.io packets (unknown or empty types, bad base64, bad JSON,
    non-list events, stray acks, binary headers with or without attachments, stray binary
    frames, other namespaces, deep nesting): dropped; the connection stays up. (``1`` and
    ``41``, a client's own close, are the only frames that end it, as they should.)"""
    @FUZZ
    @given(frame=RAW_FRAMES)
    def run(frame):
        before = fz.emu.snapshot()
        sock.send(frame)
        sock.probe()
        assert fz.emu.snapshot() == before

    run()
    assert fz.emu.connection_count() == 1


def test_socket_huge_payload_keeps_connection(fz, sock):
    """A ~1 MB string is refused as content over the limit, not by closing the connection."""
    before = fz.emu.snapshot()
    sock.emit("message:send", {"channelPublicId": fz.real["cid"], "content": "x" * 1_000_000, "embeds": [],
                               "nonce": "n"})
    sock.probe()
    assert fz.emu.snapshot() == before
    sock.emit("message:send", {"channelPublicId": fz.real["cid"], "content": "ok", "embeds": [], "nonce": "n2"})
    got = sock.events.get(timeout=5)
    while got[0] != "message:new":
        got = sock.events.get(timeout=5)
    assert got[1]["nonce"] == "n2"


def _control_routes() -> list[tuple[str, str]]:
    from service_client.emulator import EmulatorCore
    core = EmulatorCore()
    core.store.close()
    return [(m, "/" + "/".join(segs)) for m, segs, _h in core.control._routes if segs != ("reset",)]


@pytest.mark.parametrize("route", _control_routes(), ids=lambda r: f"{r[0]} {r[1]}")
def test_control_routes_never_answer_500(fz, route):
    """Every ``/_emulator`` route (but ``/reset``) with odd ids and any body: a JSON answer below
    500. (The control plane is a test tool: valid bodies do change state; the fixture resets.)"""
    method, template = route

    @settings(FUZZ, max_examples=12)
    @given(ids=st.lists(ODD_IDS | st.sampled_from(sorted(fz.real.values())), min_size=3, max_size=3),
           body=st.none() | NON_JSON | NON_OBJECT.map(lambda v: json.dumps(v).encode())
           | st.dictionaries(st.sampled_from(["userId", "channelId", "authorId", "name", "content", "event",
                                              "payload", "seconds", "limit", "windowMs", "status", "state",
                                              "emoji", "roleIds", "permissions", "contents", "method", "path",
                                              "count", "delayMs", "echo", "echoDelayMs", "limits", "reason"]),
                             ANY_JSON, max_size=4).map(lambda v: json.dumps(v).encode()))
    def run(ids, body):
        segs = [encode_segment(ids.pop(), False) if s.startswith("{") else s for s in template.split("/")]
        status, data, ctype = fz.http.request(method, "/_emulator" + "/".join(segs), body)
        assert status < 500, (method, segs, body, status, data[:300])
        if status >= 400:
            assert_error_body(status, data, ctype)

    try:
        run()
    finally:
        fz.emu.reset()
