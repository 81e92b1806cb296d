"""The service's catalog (``service_client/endpoints.py``) against the client and the emulator.

Every REST endpoint and socket event is declared once, in the catalog. These tests hold both
sides to it:

- every endpoint has an emulator handler, and the emulator serves no route of the service that
  the catalog lacks (its control plane, under ``/_emulator``, is its own);
- every endpoint has a caller in the client, found by reading the package's source (a reference
  to ``endpoints.NAME``), except those named in :data:`NO_CLIENT_CALLER` with their reason;
- every socket event the client emits has a handler in the emulator and a sender in the client,
  every event the service sends a parser in the client and a sender in the emulator, except
  those named with their reason;
- no REST path and no socket event name is written anywhere else, in the client or in the
  emulator (the emulator's control plane aside);
- the catalog is consistent: unique names and routes, each bucket scope the parameter that
  ``Route`` puts in the bucket key, and the bucket keys and encoding the client always sent.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re
import typing
from collections.abc import Iterator

import pytest

from service_client import endpoints
from service_client._secret import Secret
from service_client.endpoints import ENDPOINTS, Endpoint
from service_client.permissions import Permissions
from service_client.rest.route import Route

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "service_client"

#: Endpoints the client does not call, each with its reason.
NO_CLIENT_CALLER: dict[str, str] = {}

#: Socket events the client does not emit, each with its reason.
NO_CLIENT_SENDER: dict[str, str] = {
    "EMIT_MESSAGE_REACTION_CLEAR": "the client has no method that clears every reaction of a message",
    "EMIT_TYPING_START": "the client sends no typing indicator",
    "EMIT_TYPING_STOP": "the client sends no typing indicator",
}

#: Socket events of the service the emulator never sends, each with its reason.
NO_EMULATOR_SENDER: dict[str, str] = {
    "ON_VOICE_INCOMING_CALL": "the emulator has no calls between users (its media server serves voice channels only)",
    "ON_VOICE_CALL_CANCELLED": "the emulator has no calls between users (its media server serves voice channels only)",
}

#: Socket events only the emulator sends, each with its reason: not the service's.
EMULATOR_ONLY_EVENTS: dict[str, str] = {
    "message:error": "the emulator's answer to a message that breaks the message rules (always) or is "
                     "refused otherwise (with send_errors): the service answers a refused send with nothing",
}

#: Modules of the emulator that hold its own control plane, whose routes are not the service's.
EMULATOR_CONTROL_MODULES = frozenset({"control.py"})


# -- reading the source --------------------------------------------------------------------------


def _modules(*, emulator: bool) -> Iterator[pathlib.Path]:
    """The client's modules (``emulator=False``: every module but the emulator's and the catalog
    itself) or the emulator's."""
    for path in sorted(PACKAGE.rglob("*.py")):
        inside = "emulator" in path.relative_to(PACKAGE).parts
        if inside == emulator and path != PACKAGE / "endpoints.py":
            yield path


@functools.cache
def _parsed(path: pathlib.Path) -> ast.Module:
    """A module's syntax tree (each module is read once per session)."""
    return ast.parse(path.read_text())


def _where(path: pathlib.Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def catalog_references(paths: list[pathlib.Path]) -> dict[str, list[str]]:
    """The catalog's names each module refers to (``endpoints.NAME``, or ``NAME`` imported from
    the catalog), with where: ``{name: ["path:line", ...]}``."""
    found: dict[str, list[str]] = {}
    for path in paths:
        tree = _parsed(path)
        where = _where(path)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "endpoints"):
                found.setdefault(node.attr, []).append(f"{where}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("endpoints"):
                for alias in node.names:
                    found.setdefault(alias.name, []).append(f"{where}:{node.lineno}")
    return found


def _catalog_heads() -> set[str]:
    """The first path segments of the catalog's endpoints (``servers``, ``chat``...)."""
    return {ep.path.split("/")[1].split("{")[0] for ep in ENDPOINTS}


def path_literals(paths: list[pathlib.Path], heads: set[str]) -> list[str]:
    """String constants outside docstrings (f-string parts included) that are REST paths of the
    service: they start with ``/`` and a first segment of the catalog's, as ``path:line text``."""
    found = []
    for path in paths:
        tree = _parsed(path)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                text = node.value
                head = re.split(r"[/{?\s]", text[1:], maxsplit=1)[0] if text.startswith("/") else ""
                if head in heads:
                    found.append(f"{_where(path)}:{node.lineno} {text[:60]!r}")
    return found


def wire_literals(paths: list[pathlib.Path], names: set[str]) -> list[str]:
    """String constants outside docstrings that are one of the socket event ``names`` (wire
    names), and string constants with a ``:`` (as every socket event name has; Python event
    names have none) passed first to an ``emit`` call, as ``path:line text``."""
    found = []
    for path in paths:
        tree = _parsed(path)
        docs = _docstrings(tree)
        emitted = {id(node.args[0]) for node in ast.walk(tree)
                   if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)
                   and node.func.attr == "emit"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if node.value in names or (id(node) in emitted and ":" in node.value):
                    found.append(f"{_where(path)}:{node.lineno} {node.value!r}")
    return found


# -- the catalog ---------------------------------------------------------------------------------


def test_each_endpoint_is_named_for_its_constant_and_declared_once() -> None:
    names = [ep.name for ep in ENDPOINTS]
    assert len(names) == len(set(names))
    assert all(getattr(endpoints, ep.name) is ep for ep in ENDPOINTS)
    routes = [(ep.method, ep.path) for ep in ENDPOINTS]
    assert len(routes) == len(set(routes)), "two endpoints share a method and path"
    declared = [v for v in vars(endpoints).values() if isinstance(v, Endpoint)]
    assert len(declared) == len(ENDPOINTS)


def test_each_endpoint_has_a_description_and_a_single_permission() -> None:
    for ep in ENDPOINTS:
        assert ep.description.endswith(".") and "\n" not in ep.description, ep.name
        assert ep.answer, ep.name
        if ep.permission is not None:
            assert isinstance(ep.permission, Permissions) and ep.permission.name in Permissions.__members__, ep.name
    assert endpoints.PIN_MESSAGE.permission is Permissions.PIN_MESSAGE
    assert [ep.name for ep in ENDPOINTS if not ep.authorized] == ["EXECUTE_WEBHOOK"]


def _sample(ep: Endpoint) -> dict[str, str]:
    return {name: f"v-{name}" for name in ep.params}


@pytest.mark.parametrize("ep", ENDPOINTS, ids=lambda ep: ep.name)
def test_the_bucket_scope_is_the_parameter_route_puts_in_the_bucket_key(ep: Endpoint) -> None:
    route = Route(ep, **_sample(ep))
    segments = ep.path.split("/")[1:3]
    if ep.major is None:
        assert not any(seg.startswith("{") for seg in segments), f"{ep.name}: its bucket holds a parameter"
    else:
        assert segments[1] == "{" + ep.major + "}"
    expected = "/".join(f"v-{seg[1:-1]}" if seg.startswith("{") else seg for seg in segments)
    assert route.bucket == f"{ep.method}:{expected}"
    assert (route.method, route.path) == (ep.method, Route(ep.method, ep.path, **_sample(ep)).path)


@pytest.mark.parametrize(
    ("ep", "params", "path", "bucket"),
    [
        (endpoints.LIST_SERVERS, {}, "/servers", "GET:servers"),
        (endpoints.GET_SERVER, {"server_id": "S1"}, "/servers/S1", "GET:servers/S1"),
        (endpoints.GET_MEMBER, {"server_id": "S1", "user_id": "U1"}, "/servers/S1/members/U1", "GET:servers/S1"),
        (endpoints.LIST_CATEGORIES, {"server_id": "S1"}, "/servers/S1/categories", "GET:servers/S1"),
        (endpoints.CREATE_ROLE, {"server_id": "S1"}, "/servers/S1/roles", "POST:servers/S1"),
        (endpoints.SEARCH_MESSAGES, {"channel_id": "C1"}, "/chat/C1/search", "GET:chat/C1"),
        (endpoints.LIST_PINS, {"channel_id": "C1"}, "/chat/C1/pins", "GET:chat/C1"),
        (endpoints.OPEN_DM, {"user_id": "U1"}, "/channels/dm/U1", "GET:channels/dm"),
        (endpoints.OPEN_DM, {"user_id": "U2"}, "/channels/dm/U2", "GET:channels/dm"),
        (endpoints.GET_CHANNEL, {"channel_id": "C1"}, "/channels/C1", "GET:channels/C1"),
        (endpoints.SET_STATUS, {}, "/users/settings", "PATCH:users/settings"),
        (endpoints.GET_ME, {}, "/auth/me", "GET:auth/me"),
        (endpoints.GET_INVITE, {"code": "AbC"}, "/invites/AbC", "GET:invites/AbC"),
        (endpoints.DELETE_INVITE, {"code": "AbC"}, "/invites/AbC", "DELETE:invites/AbC"),
        (endpoints.PIN_MESSAGE, {"channel_id": "C 1", "message_id": "../m"}, "/chat/C%201/pin/..%2Fm",
         "POST:chat/C%201"),
        (endpoints.GET_MEMBER, {"server_id": "é/?#", "user_id": ".."}, "/servers/%C3%A9%2F%3F%23/members/%2E%2E",
         "GET:servers/%C3%A9%2F%3F%23"),
    ],
)
def test_routes_of_the_catalog_keep_their_paths_encoding_and_bucket_keys(
        ep: Endpoint, params: dict[str, str], path: str, bucket: str) -> None:
    route = Route(ep, **params)
    assert (route.path, route.bucket) == (path, bucket)


def test_a_webhook_token_stays_out_of_the_path_bucket_and_repr() -> None:
    route = Route(endpoints.EXECUTE_WEBHOOK, webhook_id="W1", token=Secret("tok-123"))
    assert (route.path, route.bucket) == ("/webhooks/W1/***", "POST:webhooks/W1")
    assert "tok-123" not in repr(route) + route.display_path
    assert route.wire_path() == "/webhooks/W1/tok-123"


def test_a_route_of_an_endpoint_takes_no_template() -> None:
    with pytest.raises(TypeError, match="PIN_MESSAGE"):
        Route(endpoints.PIN_MESSAGE, "/chat/{channel_id}", channel_id="C1")  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="message_id"):
        Route(endpoints.PIN_MESSAGE, channel_id="C1")


def _kind_of(hint: object) -> endpoints.Kind | None:
    for meta in getattr(hint, "__metadata__", ()):
        if isinstance(meta, endpoints.Kind):
            return meta
    return next((k for k in map(_kind_of, typing.get_args(hint)) if k is not None), None)


def test_each_endpoint_declares_its_permission_and_its_body() -> None:
    """Every entry names one permission or None, and its body as a TypedDict of the catalog
    (each field with its Kind) or None; a JSON body in ``takes`` has a declared body, and the
    query parameters in ``takes`` are listed in ``query``."""
    for ep in ENDPOINTS:
        assert ep.permission is None or (isinstance(ep.permission, Permissions) and ep.permission.name), ep.name
        takes_body = "``{" in ep.takes
        assert (ep.body is not None) == takes_body, f"{ep.name}: declare body= as its takes says"
        if ep.body is not None:
            assert typing.is_typeddict(ep.body) and getattr(endpoints, ep.body.__name__) is ep.body, ep.name
            hints = typing.get_type_hints(ep.body, include_extras=True)
            assert hints and all(_kind_of(h) is not None for h in hints.values()), f"{ep.name}: a field lacks its Kind"
            assert all(f"{name}" in ep.takes for name in hints), f"{ep.name}: takes and body disagree"
        assert sorted(ep.query) == sorted(re.findall(r"[?&](\w+)=", ep.takes)), f"{ep.name}: query= and takes disagree"


def test_each_socket_event_is_named_for_its_constant_and_declared_once() -> None:
    events = endpoints.SOCKET_EVENTS
    assert all(getattr(endpoints, e.name) == e.event for e in events)
    assert len({(e.direction, e.event) for e in events}) == len(events)
    constants = {n for n in vars(endpoints) if n.startswith(("EMIT_", "ON_"))}
    assert constants == {e.name for e in events}
    for e in events:
        assert e.name.startswith("EMIT_" if e.direction == endpoints.CLIENT_TO_SERVICE else "ON_"), e.name
        assert type(getattr(endpoints, e.name)) is str  # a plain str: dict lookups stay fast
        assert e.record and e.description.endswith("."), e.name
    assert {e.name for e in events if e.ack} == {"EMIT_SERVER_KICK", "EMIT_SERVER_BAN", "EMIT_SERVER_UNBAN"}
    assert (endpoints.EMIT_PRESENCE_UPDATE, endpoints.ON_MESSAGE_NEW) == ("presence:update", "message:new")


# -- the emulator serves exactly the catalog -----------------------------------------------------


def test_every_endpoint_has_an_emulator_handler_and_the_emulator_serves_no_other(emulator_server) -> None:
    rest = emulator_server.core.rest
    assert [ep.name for ep in ENDPOINTS if ep not in rest.served] == [], "give these endpoints a handler"
    catalog = {(ep.method, ep.path) for ep in ENDPOINTS}
    served = {(method, "/" + "/".join(segments)) for method, segments, _handler in rest.router._routes}
    assert sorted(served - catalog) == [], "the emulator serves these routes the catalog lacks"
    assert len(rest.router._routes) == len(ENDPOINTS)
    public = {ep.name for ep, handler in rest.served.items() if handler in rest._public_handlers}
    assert public == {ep.name for ep in ENDPOINTS if not ep.authorized}


def test_the_emulator_answers_every_endpoint_and_a_route_outside_the_catalog_is_unknown(world) -> None:
    import requests

    # A route of the catalog is matched (a stranger's token still gets past the router: no 404/405
    # "Not found" / "Method not allowed"), and one the catalog lacks is not.
    emu = world.emulator
    headers = {"Authorization": f"Bearer {world.bot_token}"}
    for ep in ENDPOINTS:
        route = Route(ep, **_sample(ep))
        answer = requests.request(ep.method, emu.base_url + route.wire_path(), headers=headers, timeout=10)
        assert answer.json() not in ({"error": "Not found"}, {"error": "Method not allowed"}), ep.name
    unknown = requests.get(emu.base_url + "/servers/x/channels", headers=headers, timeout=10)
    assert (unknown.status_code, unknown.json()) == (405, {"error": "Method not allowed"})
    unknown = requests.get(emu.base_url + "/notifications/unread", headers=headers, timeout=10)
    assert (unknown.status_code, unknown.json()) == (404, {"error": "Not found"})


def test_the_emulator_handles_every_event_the_client_emits_and_sends_the_services_events(emulator_server) -> None:
    handled = set(emulator_server.core.rt.sio.handlers["/"])
    emits = {e.event for e in endpoints.SOCKET_EVENTS if e.direction == endpoints.CLIENT_TO_SERVICE}
    assert sorted(emits - handled) == [], "give these events a handler in the emulator"
    assert sorted(handled - emits - {"connect", "disconnect", "*"}) == [], "add these events to the catalog"
    refs = catalog_references(list(_modules(emulator=True)))
    missing = [e.name for e in endpoints.SOCKET_EVENTS if e.direction == endpoints.SERVICE_TO_CLIENT
               and e.name not in refs and e.name not in NO_EMULATOR_SENDER]
    assert missing == [], "send these events from the emulator, or name them in NO_EMULATOR_SENDER"
    assert [n for n in NO_EMULATOR_SENDER if n in refs] == [], "these exceptions have a sender now"


# -- the client calls the catalog ----------------------------------------------------------------


def test_every_endpoint_has_a_caller_in_the_client() -> None:
    refs = catalog_references(list(_modules(emulator=False)))
    missing = [ep.name for ep in ENDPOINTS if ep.name not in refs and ep.name not in NO_CLIENT_CALLER]
    assert missing == [], "call these endpoints from the client, or name them in NO_CLIENT_CALLER with a reason"
    stale = [name for name in NO_CLIENT_CALLER if name in refs or not hasattr(endpoints, name)]
    assert stale == [], "these exceptions have a caller now (or no endpoint): remove them"


def test_the_client_parses_every_event_the_service_sends_and_emits_the_others() -> None:
    refs = catalog_references(list(_modules(emulator=False)))
    missing = [e.name for e in endpoints.SOCKET_EVENTS if e.name not in refs and e.name not in NO_CLIENT_SENDER]
    assert missing == [], "handle or emit these events in the client, or name them in NO_CLIENT_SENDER"
    assert [n for n in NO_CLIENT_SENDER if n in refs] == [], "these exceptions have a sender now: remove them"


def test_the_parsers_handle_exactly_the_events_the_service_sends() -> None:
    from service_client.state.parsers import Parsers

    parsers = Parsers.__new__(Parsers)
    Parsers.__init__(parsers, _FakeState())  # type: ignore[arg-type]
    sent = {e.event for e in endpoints.SOCKET_EVENTS if e.direction == endpoints.SERVICE_TO_CLIENT}
    assert set(parsers.events) == sent


class _FakeState:
    """What building the parsers' table needs of a state: nothing it calls."""

    closed = False


def test_no_socket_event_name_is_written_outside_the_catalog() -> None:
    names = {e.event for e in endpoints.SOCKET_EVENTS}
    found = wire_literals(list(_modules(emulator=False)) + list(_modules(emulator=True)), names)
    found = [line for line in found if line.split(" ", 1)[1].strip("'") not in EMULATOR_ONLY_EVENTS]
    assert found == [], "use the catalog's EMIT_* and ON_* constants"


def test_no_rest_path_is_written_outside_the_catalog() -> None:
    heads = _catalog_heads()
    client = path_literals(list(_modules(emulator=False)), heads)
    emulator = path_literals([p for p in _modules(emulator=True) if p.name not in EMULATOR_CONTROL_MODULES], heads)
    assert client + emulator == [], "build these from service_client.endpoints"


# -- the checks above can fail -------------------------------------------------------------------


def test_the_scans_find_references_and_path_literals(tmp_path: pathlib.Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text(
        '"""Calls ``GET /servers/{server_id}``."""\n'
        "from service_client import endpoints\n"
        "from service_client.endpoints import GET_ME\n"
        "def f(state, sid):\n"
        '    """GET /chat/{channel_id}"""\n'
        "    state.request(Route(endpoints.LIST_SERVERS))\n"
        '    state.request(Route("GET", f"/servers/{sid}/roles"))\n'
        '    return "/_emulator/servers", "/chat/x"\n'
    )
    refs = catalog_references([module])
    assert set(refs) == {"LIST_SERVERS", "GET_ME"}
    socket = tmp_path / "sock.py"
    socket.write_text(
        '"""Emits ``message:send``."""\n'
        "TABLE = {endpoints.ON_MESSAGE_NEW: 1, 'message:deleted': 2}\n"
        "def f(state, name):\n"
        '    state.emit("presence:update", {})\n'
        '    state.emit("made:up")\n'
        "    state.emit(endpoints.EMIT_MESSAGE_SEND, {})\n"
    )
    found = wire_literals([socket], {e.event for e in endpoints.SOCKET_EVENTS})
    assert sorted(line.split(" ", 1)[1] for line in found) == ["'made:up'", "'message:deleted'", "'presence:update'"]
    found = path_literals([module], _catalog_heads())
    assert sorted(line.split(" ", 1)[1] for line in found) == ["'/chat/x'", "'/servers/'"]
