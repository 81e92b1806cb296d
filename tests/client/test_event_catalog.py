"""The event catalog: names are checked, custom events are an explicit opt-in, ``wait_for``
returns what its overloads promise, the library emits exactly the catalog's events, and every
text derived from the catalog (overloads, ``help(Client.on)``, docs/events.rst) matches it."""

from __future__ import annotations

import ast
import pathlib
import re
import threading
from typing import Any

import pytest

from service_client import Client, ServiceError
from service_client.events import _codegen
from service_client.events._codegen import render_all, render_docs_page, render_type_imports
from service_client.events.catalog import EVENT_NAMES, EVENTS, EventArg, EventSpec, event_spec

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCAL = {"base_url": "http://127.0.0.1:1/api/v2", "socket_url": "http://127.0.0.1:1"}


@pytest.fixture
def client():
    c = Client(**LOCAL)
    yield c
    c.destroy()


# -- names are checked ------------------------------------------------------------------


def test_an_unknown_name_raises_value_error_naming_the_closest_event(client):
    with pytest.raises(ValueError) as raised:
        client.on("mesage_create", lambda message: None)
    text = str(raised.value)
    assert "'mesage_create'" in text and "did you mean 'message_create'" in text
    assert "register_event" in text
    assert client.listeners("message_create") == []  # nothing registered


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("on_message", "message_create"),
        ("message", "message_create"),
        ("on_message_create", "message_create"),
        ("onMessage", "message_create"),
        ("on_ready", "ready"),
        ("member_join", "guild_member_add"),
        ("on_member_join", "guild_member_add"),
        ("memberJoin", "guild_member_add"),
        ("on_member_remove", "guild_member_remove"),
        ("guild_join", "guild_create"),
        ("on_guild_remove", "guild_delete"),
        ("reaction_add", "message_reaction_add"),
        ("on_raw_reaction_add", "message_reaction_add"),
        ("message_edit", "message_update"),
        ("member_ban", "guild_ban_add"),
    ],
)
def test_names_from_other_libraries_and_on_prefixes_suggest_this_clients_event_first(client, name, first):
    with pytest.raises(ValueError) as raised:
        client.on(name, lambda *args: None)
    assert f"unknown event {name!r}: did you mean {first!r}" in str(raised.value)
    assert client.listeners(first) == []  # a suggestion only: nothing registered


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.on("guild_memeber_add"),
        lambda c: c.once("guild_memeber_add", lambda member: None),
        lambda c: c.off("guild_memeber_add"),
        lambda c: c.listeners("guild_memeber_add"),
        lambda c: c.wait_for("guild_memeber_add", timeout=0),
    ],
    ids=["on", "once", "off", "listeners", "wait_for"],
)
def test_every_method_taking_an_event_name_checks_it(client, call):
    with pytest.raises(ValueError, match="did you mean 'guild_member_add'"):
        call(client)


def test_a_name_far_from_every_event_points_to_the_list(client):
    with pytest.raises(ValueError, match=r"none of the client's events \(listed in help\(Client.on\)\)"):
        client.on("zzz", lambda: None)


@pytest.mark.parametrize("bad", [None, "", 3, b"ready"])
def test_a_name_that_is_not_a_non_empty_str_raises_type_error(client, bad):
    with pytest.raises(TypeError, match="event must be a non-empty str"):
        client.on(bad, lambda: None)


def test_every_catalog_event_is_accepted(client):
    def listener(*args: Any) -> None:
        """Accept any arguments."""

    for name in EVENT_NAMES:
        assert client.on(name, listener) is listener
        assert client.listeners(name) == [listener]
        client.off(name, listener)


def test_event_spec_refuses_an_unknown_name():
    assert event_spec("ready").args == ()
    with pytest.raises(ValueError, match="did you mean 'ready'"):
        event_spec("redy")


# -- custom events ------------------------------------------------------------------------


def test_a_registered_custom_event_is_listened_to_and_dispatched(client):
    opened = client.register_event("ticket_opened")
    assert opened == "ticket_opened"
    assert client.register_event("ticket_opened") == opened  # again: harmless
    got: list[tuple[str, str]] = []
    done = threading.Event()

    @client.on(opened)
    def listener(channel_id: str, opener: str) -> None:
        got.append((channel_id, opener))
        done.set()

    client.dispatch(opened, "c1", "alice", key="c1")
    assert done.wait(5)
    assert got == [("c1", "alice")]


def test_custom_names_belong_to_the_client_that_registered_them(client):
    client.register_event("ticket_opened")
    other = Client(**LOCAL)
    try:
        with pytest.raises(ValueError, match="unknown event 'ticket_opened'"):
            other.on("ticket_opened", lambda: None)
    finally:
        other.destroy()


def test_an_unregistered_name_suggests_a_registered_custom_one(client):
    client.register_event("ticket_opened")
    with pytest.raises(ValueError, match="did you mean 'ticket_opened'"):
        client.on("ticket_opend", lambda: None)


def test_register_event_refuses_the_clients_own_events_and_bad_names(client):
    with pytest.raises(ValueError, match="one of the client's own events"):
        client.register_event("message_create")
    with pytest.raises(TypeError):
        client.register_event("")
    with pytest.raises(TypeError):
        client.register_event(5)  # type: ignore[arg-type]


def test_dispatch_refuses_built_in_unregistered_and_bad_keys(client):
    with pytest.raises(ValueError, match="only the client emits it"):
        client.dispatch("message_create", object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown event 'nobody_registered_me'"):
        client.dispatch("nobody_registered_me")  # type: ignore[arg-type]
    name = client.register_event("mine")
    with pytest.raises(TypeError, match="key must be a str or None"):
        client.dispatch(name, key=3)  # type: ignore[arg-type]


def test_dispatch_after_destroy_raises(client):
    name = client.register_event("mine")
    client.destroy()
    with pytest.raises(ServiceError, match="destroyed"):
        client.dispatch(name)


# -- wait_for returns what its overloads promise ------------------------------------------


def _wait_in_thread(client: Client, event: str) -> tuple[threading.Thread, dict[str, Any]]:
    """Start ``client.wait_for(event)`` on a thread; return once the wait is registered."""
    result: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: result.setdefault("value", client.wait_for(event, timeout=5)))
    thread.start()
    pause = threading.Event()  # never set: a bounded pause between looks
    for _ in range(1000):  # the waiter is registered within microseconds; 5 s at most
        if client._events._waiters:
            break
        pause.wait(0.005)
    assert client._events._waiters, "wait_for did not register"
    return thread, result


@pytest.mark.parametrize(
    ("event", "args", "expected"),
    [
        ("ready", (), None),
        ("disconnect", ("transport close",), "transport close"),
        ("message_reaction_add", ({"emoji": "x"}, "user", "m1"), ({"emoji": "x"}, "user", "m1")),
    ],
    ids=["no-argument", "one-argument", "three-arguments"],
)
def test_wait_for_returns_none_the_argument_or_a_tuple(client, event, args, expected):
    assert len(event_spec(event).args) == len(args)
    thread, result = _wait_in_thread(client, event)
    client._dispatch(event, *args, key="k")
    thread.join(5)
    assert not thread.is_alive()
    assert result["value"] == expected


# -- the library emits exactly the catalog's events ------------------------------------------

#: Calls whose first argument is an emitted event name: the state's (and client's) dispatch, an event slot's
#: emit, the emitter's emit_one and emit_and_wait (``client_close``), and the wire handlers' factories that
#: dispatch the Python event they are given.
_EMITTERS = {"_dispatch", "dispatch", "emit", "emit_one", "emit_and_wait", "_listing_changed", "_role_upsert", "_typing", "_voice_snapshot",
             "_voice_simple", "_simple"}


def _string_values(node: ast.AST) -> list[str]:
    """The strings an expression may evaluate to: a constant, or either branch of ``a if c else b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _string_values(node.body) + _string_values(node.orelse)
    return []


def _emitted_names() -> dict[str, list[str]]:
    """Every event name the package's code passes to an emitting call, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "service_client").rglob("*.py")):
        if "emulator" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            assigned: dict[str, list[str]] = {}
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    assigned.setdefault(node.targets[0].id, []).extend(_string_values(node.value))
            for node in ast.walk(func):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name not in _EMITTERS:
                    continue
                first = node.args[0]
                values = assigned.get(first.id, []) if isinstance(first, ast.Name) else _string_values(first)
                for value in values:
                    if ":" not in value:  # "message:send" and the like are socket emits
                        found.setdefault(value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_library_emits_exactly_the_catalogs_events():
    emitted = _emitted_names()
    assert sorted(set(emitted) - EVENT_NAMES) == [], f"add these events to the catalog: {emitted}"
    assert sorted(EVENT_NAMES - set(emitted)) == [], "the catalog lists events the library never emits"


# -- derived texts match the catalog ------------------------------------------------------------


def test_the_generated_parts_match_the_catalog():
    stale = [str(path.relative_to(ROOT)) for path, content in render_all().items() if path.read_text() != content]
    assert stale == [], "run: python -m service_client.events._codegen"


def _package(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    """A small package written for a test: {path below it: source}."""
    for name, source in {"__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source)
    return tmp_path


def test_a_new_argument_type_is_imported_by_the_generated_overloads_with_no_hand_edit(tmp_path, monkeypatch):
    # A new event whose listener takes a class the overloads never named: the codegen finds the
    # module that defines it, so client/listeners.py needs no hand-written import.
    package = _package(tmp_path, {"models/sticker.py": "class Sticker:\n    pass\n",
                                  "client/voice.py": "class VoiceConnection:\n    pass\n",
                                  "emulator/records.py": "class Sticker:\n    pass\n"})
    sticker = EventSpec("sticker_create", (EventArg("sticker", "Sticker | dict[str, Any]", "it"),), "when", "key")
    voice = EventSpec("voice_ready", (EventArg("connection", "VoiceConnection", "it"),), "when", "key")
    monkeypatch.setattr(_codegen, "EVENTS", (sticker, voice))
    assert render_type_imports(package) == (
        "    from ..models.sticker import Sticker  # noqa: F401\n"
        "    from .voice import VoiceConnection  # noqa: F401"
    )
    monkeypatch.setattr(_codegen, "EVENTS", ())
    assert render_type_imports(package) == "    pass"


def test_a_type_no_module_or_two_modules_define_stops_the_codegen(tmp_path, monkeypatch):
    package = _package(tmp_path, {"models/a.py": "class Twice:\n    pass\n", "state/b.py": "class Twice:\n    pass\n"})
    for name, where in (("Nowhere", "no module"), ("Twice", "models.a, state.b")):
        monkeypatch.setattr(_codegen, "EVENTS", (EventSpec("e", (EventArg("x", name, "it"),), "when", "key"),))
        with pytest.raises(ValueError, match=f"{name}.*{re.escape(where)}"):
            render_type_imports(package)


def test_every_class_an_event_passes_is_linked_in_the_event_reference():
    page = render_docs_page()
    for spec in EVENTS:
        for arg in spec.args:
            for part in arg.type.split(" | "):
                if part[:1].isupper() and part != "Exception":
                    assert f":class:`~service_client.{part}`" in page, (spec.name, part)


def test_help_of_on_lists_every_event_with_its_arguments_and_ordering_key():
    doc = Client.on.__doc__ or ""
    for spec in EVENTS:
        assert f"``{spec.signature}``" in doc, spec.name
    assert doc.count("Ordering key:") == len(EVENTS)
    assert "<events>" not in doc
    assert "register_event" in doc  # the documented opt-in for custom events


def test_the_event_reference_page_keeps_its_label_and_lists_every_event():
    page = (ROOT / "docs" / "events.rst").read_text()
    assert page == render_docs_page()
    assert ".. _event-reference:" in page
    rows = re.findall(r"^   \* - ``([a-z_]+)``$", page, re.MULTILINE)
    assert rows == [spec.name for spec in EVENTS]
