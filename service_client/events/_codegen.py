"""Write everything derived from the event catalog (:mod:`service_client.events.catalog`)
and from the service's catalog (:mod:`service_client.endpoints`).

Run from the checkout after changing either catalog::

    python -m service_client.events._codegen          # rewrite the generated parts
    python -m service_client.events._codegen --check  # exit 1 and name the stale files

It rewrites, between ``<generated:NAME>`` markers, the :data:`EventName`
literal of ``events/catalog.py`` and the typed overloads of ``on``, ``once`` and
``wait_for`` in ``client/listeners.py`` with the imports of the types they name
(each found where the package defines it, read from the source); the whole of
``docs/events.rst`` (a type the package exports is linked),
the event reference of the documentation; and the whole of
``docs/endpoints.rst``, the reference of the service's REST endpoints and
socket events. Pure functions render each part, so the tests compare them with
the committed files without writing anything.
"""

from __future__ import annotations

import ast
import builtins
import functools
import pathlib
import re
import sys
import textwrap
from collections.abc import Sequence

from .. import endpoints
from .catalog import EVENTS, EventArg, EventSpec

__all__ = ["main", "render_all", "render_docs_page", "render_endpoints_page", "render_type_imports", "replace_region"]

PACKAGE = pathlib.Path(__file__).resolve().parent.parent
ROOT = PACKAGE.parent

#: Names in the catalog's argument types that are no class of the package: Python's own and ``Any``
#: (which ``client/listeners.py`` imports from typing).
_NOT_OURS = frozenset(vars(builtins)) | {"Any"}


def _type_names() -> list[str]:
    """The package's classes the catalog's argument types name, in catalog order, once each."""
    found: dict[str, None] = {}
    for entry in EVENTS:
        for arg in entry.args:
            for name in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", arg.type):
                if name not in _NOT_OURS:
                    found[name] = None
    return list(found)


def _class_modules(package: pathlib.Path) -> dict[str, list[str]]:
    """Class name -> the dotted modules (below the package) that define it at top level.

    The emulator is left out: it stands apart, and the client never imports it.
    """
    defined: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).with_suffix("")
        if relative.parts[0] == "emulator":
            continue
        module = ".".join(part for part in relative.parts if part != "__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append(module)
    return defined


@functools.lru_cache(maxsize=4)
def _exported(package: pathlib.Path) -> frozenset[str]:
    """The names of the package's ``__all__`` (read from its source)."""
    for node in ast.parse((package / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def render_type_imports(package: pathlib.Path = PACKAGE) -> str:
    """The ``TYPE_CHECKING`` imports of ``client/listeners.py``: every class the overloads name.

    Raises:
        ValueError: A type of the catalog is defined by no module of the package, or by several.
    """
    defined = _class_modules(package)
    by_module: dict[str, list[str]] = {}
    for name in _type_names():
        modules = defined.get(name, [])
        if len(modules) != 1:
            where = ", ".join(modules) or "no module"
            raise ValueError(f"the catalog names {name!r}, defined by {where}: it must be defined by one module")
        by_module.setdefault(modules[0], []).append(name)
    lines = []
    # Relative to client/listeners.py, in the order ruff's isort keeps: ``..`` modules, then ``.``.
    relative = {module: (f".{module[len('client.'):]}" if module.startswith("client.") else f"..{module}")
                for module in by_module}
    ordered = sorted(by_module, key=lambda m: (not relative[m].startswith(".."), relative[m]))
    for module in ordered:
        lines.append(f"    from {relative[module]} import {', '.join(sorted(by_module[module]))}  # noqa: F401")
    return "\n".join(lines) or "    pass"


# -- typing ------------------------------------------------------------------------


def _groups() -> list[tuple[tuple[str, ...], list[EventSpec]]]:
    """The catalog's events grouped by listener signature (argument types), in catalog order."""
    groups: dict[tuple[str, ...], list[EventSpec]] = {}
    for entry in EVENTS:
        groups.setdefault(tuple(a.type for a in entry.args), []).append(entry)
    return list(groups.items())


def _callable(types: Sequence[str], result: str = "object") -> str:
    return f"Callable[[{', '.join(types)}], {result}]"


def _result(types: Sequence[str]) -> str:
    """What ``wait_for`` returns: None for no argument, the argument, else a tuple of them."""
    if not types:
        return "None"
    if len(types) == 1:
        return types[0]
    return f"tuple[{', '.join(types)}]"


def render_event_name() -> str:
    """The :data:`EventName` block of ``events/catalog.py``."""
    lines = ["#: Every name of :data:`EVENTS`, as a type: annotate a variable holding an event name with it.",
             "EventName = Literal["]
    lines += [f'    "{entry.name}",' for entry in EVENTS]
    lines.append("]")
    return "\n".join(lines)


def render_aliases() -> str:
    """The module-level literal and listener type variables of ``client/listeners.py``."""
    lines: list[str] = []
    for i, (types, entries) in enumerate(_groups()):
        lines.append(f"# listener({', '.join(types)})")
        names = [f'"{s.name}"' for s in entries]
        one_line = f"_Events{i} = Literal[{', '.join(names)}]"
        if len(one_line) <= 110:
            lines.append(one_line)
        else:
            lines += [f"_Events{i} = Literal[", *(f"    {n}," for n in names), "]"]
        lines.append(f'_Listener{i} = TypeVar("_Listener{i}", bound="{_callable(types)}")')
    return "\n".join(lines)


def _doc(text: str, indent: str = "        ") -> list[str]:
    """``text`` as the lines of a docstring at ``indent``, wrapped to the line length."""
    wrapped = textwrap.wrap(text, 110 - len(indent))
    if len(wrapped) == 1:
        return [f'{indent}"""{wrapped[0]}"""']
    return [f'{indent}"""{wrapped[0]}', *(indent + line for line in wrapped[1:]), f'{indent}"""']


def _names(specs: Sequence[EventSpec]) -> str:
    return ", ".join(s.name for s in specs)


def _render_register(method: str) -> str:
    # Decorator form: the decorated function comes back unchanged (a type variable bound to the
    # event's listener type). Call form: the listener parameter has the event's callable type, so
    # a lambda's parameters get the event's argument types too. Each overload says which events
    # it types, for editors that show an overload's own docstring.
    lines: list[str] = []
    for i, (types, specs) in enumerate(_groups()):
        listener = _callable(types, "_R")
        takes = f"a listener taking ({', '.join(types)})" if types else "a listener taking no arguments"
        lines += [
            "    @overload",
            f"    def {method}(self, event: _Events{i}) -> Callable[[_Listener{i}], _Listener{i}]:",
            *_doc(f"Decorator form for {_names(specs)}: {takes}."),
            "    @overload",
            f"    def {method}(self, event: _Events{i}, listener: {listener}) -> {listener}:",
            *_doc(f"Call form for {_names(specs)}: {takes}."),
        ]
    lines += [
        "    @overload",
        f"    def {method}(self, event: CustomEvent) -> Callable[[_AnyListener], _AnyListener]:",
        *_doc("Decorator form for a registered custom event: any listener."),
        "    @overload",
        f"    def {method}(self, event: CustomEvent, listener: _AnyListener) -> _AnyListener:",
        *_doc("Call form for a registered custom event: any listener."),
    ]
    return "\n".join(lines)


def render_wait_for() -> str:
    """The overloads of ``wait_for``: each event's ``check`` signature and result."""
    lines: list[str] = []
    variants = [
        (f"_Events{i}", _callable(types), _result(types), _names(specs))
        for i, (types, specs) in enumerate(_groups())
    ]
    variants.append(("CustomEvent", "Callable[..., object]", "Any", "a registered custom event"))
    for event_type, check, result, names in variants:
        lines += [
            "    @overload",
            "    def wait_for(",
            f"        self, event: {event_type}, *, check: {check} | None = None, timeout: float | None = None",
            f"    ) -> {result}:",
            *_doc(f"Wait for {names}; returns {result}."),
        ]
    return "\n".join(lines)


def replace_region(text: str, tag: str, body: str) -> str:
    """``text`` with the lines between ``# <generated:tag>`` and ``# </generated:tag>`` replaced.

    Raises:
        ValueError: The markers are missing.
    """
    pattern = re.compile(
        rf"^(?P<indent>[ \t]*)# <generated:{re.escape(tag)}>[^\n]*\n(?P<body>.*?)^[ \t]*# </generated:{re.escape(tag)}>",
        re.MULTILINE | re.DOTALL,
    )
    match = pattern.search(text)
    if match is None:
        raise ValueError(f"no <generated:{tag}> region")
    start, end = match.span("body")
    return text[:start] + (body + "\n" if body else "") + text[end:]


# -- documentation -------------------------------------------------------------------


def _type_rst(annotation: str) -> str:
    """A type for the documentation: the package's exported classes linked, the rest as literals."""
    exported = _exported(PACKAGE)
    parts = []
    for part in annotation.split(" | "):
        parts.append(f":class:`~service_client.{part}`" if part in exported else f"``{part}``")
    return " or ".join(parts)


def _arg_rst(arg: EventArg) -> str:
    return f"``{arg.name}`` ({_type_rst(arg.type)}): {arg.doc}"


def _args_cell(entry: EventSpec, indent: str) -> list[str]:
    if not entry.args:
        return ["none"]
    if len(entry.args) == 1:
        return [_arg_rst(entry.args[0])]
    cell = [f"1. {_arg_rst(entry.args[0])}"]
    for i, arg in enumerate(entry.args[1:], 2):
        cell += ["", f"{indent}{i}. {_arg_rst(arg)}"]
    return cell


def render_event_table() -> str:
    """The event reference as a ``list-table`` (name, listener arguments, when, ordering key)."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 18 34 34 14",
        "",
        "   * - Event",
        "     - Listener arguments",
        "     - When it fires (the cache effect is applied before listeners run)",
        "     - Ordering key",
    ]
    for entry in EVENTS:
        cell = _args_cell(entry, "       ")
        lines += [
            f"   * - ``{entry.name}``",
            f"     - {cell[0]}",
            *cell[1:],
            f"     - {entry.when}",
            f"     - {entry.key}",
        ]
    return "\n".join(lines)


def render_docs_page() -> str:
    """The whole of ``docs/events.rst``."""
    return f""".. This page is generated from the event catalog, service_client/events/catalog.py,
   by "python -m service_client.events._codegen"; edit the catalog, not this page.
   Keep the label below: the guides link to it.

.. _event-reference:

Event reference
===============

Every event the client emits, with the arguments its listeners receive, when
it fires and its ordering key. Register a listener with ``client.on(name)``;
``help(Client.on)`` shows the same list. A raw payload is the service's
record as a ``dict[str, Any]`` (keys such as ``serverPublicId``,
``channelPublicId``, ``userPublicId``); the socket event each one comes from is
named in parentheses. How events are ordered and where listeners run is
explained in :doc:`guides/events`.

{render_event_table()}

Ordering keys
-------------

Events that share an ordering key reach listeners one at a time, in arrival
order; events with different keys run concurrently. An event that needs a
request first (``guild_member_update``, ``guild_create``,
``guild_channels_update``, ``guild_categories_update``) keeps its place in its
server's order meanwhile.

Names are checked
-----------------

:meth:`~service_client.Client.on`, :meth:`~service_client.Client.once`,
:meth:`~service_client.Client.off`, :meth:`~service_client.Client.listeners`
and :meth:`~service_client.Client.wait_for` refuse a name that is not in the
table above with a :class:`ValueError` naming the closest ones, so a typo
fails when the listener is registered instead of never firing:

.. code-block:: text

    ValueError: unknown event 'mesage_create': did you mean 'message_create'? For an event ...

Names written as other libraries write them are pointed to this client's
event first: a leading ``on_`` is dropped and ``"on_message"`` suggests
``message_create``, ``"member_join"`` ``guild_member_add``, ``"guild_join"``
``guild_create``, ``"reaction_add"`` ``message_reaction_add`` (the whole list
is ``service_client.events.catalog.OTHER_LIBRARY_NAMES``). They are only
suggestions: such a name is still refused.

Type checkers (mypy, pyright) see each event's listener signature: a listener
of ``message_create`` must accept a :class:`~service_client.Message`, and
``client.wait_for("message_create")`` is a ``Message``; ``wait_for`` returns
the event's single argument, a tuple when it has several, None when it has
none. A variable holding an event name is annotated with
``service_client.events.catalog.EventName``, the literal type of every name
above.

Events of your own
------------------

Any other name is an explicit opt-in: register it with
:meth:`~service_client.Client.register_event`, which returns it typed as a
``service_client.events.catalog.CustomEvent``, and emit it with
:meth:`~service_client.Client.dispatch`. Its listeners run on the worker pool
like the client's own, ``wait_for`` works the same, and the ordering key is
yours to choose:

.. code-block:: python

    TICKET_OPENED = client.register_event("ticket_opened")

    @client.on(TICKET_OPENED)
    def announce(channel_id: str, opener: str) -> None:
        print(opener, "opened", channel_id)

    client.dispatch(TICKET_OPENED, channel_id, opener, key=channel_id)
"""


# -- the service's endpoints ---------------------------------------------------------------


def _endpoint_rows() -> list[str]:
    lines: list[str] = []
    for ep in endpoints.ENDPOINTS:
        what = ep.description + (f" Takes {ep.takes}." if ep.takes else "")
        if not ep.authorized:
            what += " Sent without ``Authorization``."
        lines += [
            f"   * - ``{ep.method} {ep.path}``",
            "",
            f"       ``{ep.name}``",
            f"     - {what}",
            f"     - {ep.permission.name if ep.permission is not None else 'none'}",
            f"     - ``{ep.major}``" if ep.major else "     - none",
            f"     - {ep.answer}",
        ]
    return lines


def _socket_rows(direction: str) -> list[str]:
    lines: list[str] = []
    for event in endpoints.SOCKET_EVENTS:
        if event.direction != direction:
            continue
        what = event.description + (" Acknowledged: ``{}`` or ``{\"error\": key}``." if event.ack else "")
        lines += [
            f"   * - ``{event.event}``",
            "",
            f"       ``{event.name}``",
            f"     - {event.record}",
            f"     - {what}",
        ]
        if direction == endpoints.SERVICE_TO_CLIENT:
            lines.append(f"     - {_fleet_cell(event.fleet)}")
    return lines


def _fleet_cell(route: endpoints.FleetRoute | None) -> str:
    """How the events fleet routes a socket event, for the table."""
    if route is None:
        return "undeclared"
    if route.excluded is not None:
        return f"not published: {route.excluded}"
    extra = "".join(part for flag, part in ((route.state, ", shared state"), (route.droppable, ", droppable"))
                    if flag)
    return f"by {route.key}{extra}"


def _socket_table(direction: str) -> str:
    fleet = direction == endpoints.SERVICE_TO_CLIENT
    return "\n".join([
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 22 36 26 16" if fleet else "   :widths: 26 40 34",
        "",
        "   * - Event and constant",
        "     - Payload",
        "     - Meaning",
        *(["     - Fleet routing"] if fleet else []),
        *_socket_rows(direction),
    ])


def render_endpoints_page() -> str:
    """The whole of ``docs/endpoints.rst``."""
    rest = "\n".join([
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 24 30 12 10 24",
        "",
        "   * - Endpoint and constant",
        "     - What it does",
        "     - Permission",
        "     - Bucket scope",
        "     - Answer",
        *_endpoint_rows(),
    ])
    return f""".. This page is generated from the service's catalog, service_client/endpoints.py,
   by "python -m service_client.events._codegen"; edit the catalog, not this page.
   Keep the label below: other pages link to it.

.. _endpoint-reference:

The service's endpoints and socket events
=========================================

Every REST endpoint and socket event of the service, declared once in the
catalog, ``service_client/endpoints.py``. The client builds each request from
an endpoint there (``Route(endpoints.PIN_MESSAGE, channel_id=...,
message_id=...)``) and the emulator serves exactly these endpoints (plus its
own control plane, see :doc:`emulator-routes`); a test holds the three
together. To call an endpoint the library has no method for, use
:meth:`~service_client.Client.api_call` with its path.

REST endpoints
--------------

Paths are below the REST base URL (the emulator's is
``http://127.0.0.1:PORT/api/v2``); each ``{{name}}`` is one percent-encoded
path segment. Requests carry ``Authorization: Bearer <token>``, except where
said. The permission is the one the service checks on the server the
request is about (403 without it); every endpoint about a server also needs
membership, and one about a channel the right to view it. The bucket scope
is the parameter whose value shares a rate-limit bucket: the bucket key is the
method plus the path's first two segments (``GET /servers/S1/roles`` and
``GET /servers/S1/members`` share ``GET:servers/S1``; see
:doc:`guides/rate-limits`). Errors answer ``{{"error": text}}``.

{rest}

Socket events the client emits
------------------------------

Fire-and-forget unless acknowledged: the service sends no reply or error, and
a refused emit has no effect.

{_socket_table(endpoints.CLIENT_TO_SERVICE)}

Socket events the service sends
-------------------------------

What the client turns each into (its cache effect and the Python event
listeners receive) is in :doc:`events`. Other event names are logged at debug
level and ignored. The fleet routing is how the events fleet (see
:doc:`guides/scaling-out`) publishes each: by the ordering key its partition
comes from (the channel; a message's channel; the server; the user), also to
the shared-state stream every worker's caches read, dropped first when the
publisher's buffer is full, or not published, with the reason.

{_socket_table(endpoints.SERVICE_TO_CLIENT)}
"""


# -- files -----------------------------------------------------------------------------


def render_all(root: pathlib.Path = ROOT) -> dict[pathlib.Path, str]:
    """Every generated file's expected content, from the files under ``root``.

    Returns:
        {path: content}: ``events/catalog.py`` and ``client/listeners.py`` with
        their regions filled, and ``docs/events.rst`` and ``docs/endpoints.rst``
        whole.
    """
    package = root / "service_client"
    names = package / "events" / "catalog.py"
    methods = package / "client" / "listeners.py"
    text = replace_region(names.read_text(), "EventName", render_event_name())
    code = methods.read_text()
    code = replace_region(code, "imports", render_type_imports(package))
    code = replace_region(code, "aliases", render_aliases())
    code = replace_region(code, "on", _render_register("on"))
    code = replace_region(code, "once", _render_register("once"))
    code = replace_region(code, "wait_for", render_wait_for())
    return {
        names: text,
        methods: code,
        root / "docs" / "events.rst": render_docs_page(),
        root / "docs" / "endpoints.rst": render_endpoints_page(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated files (``--check``: only report the stale ones).

    Returns:
        0 when everything is (now) up to date; 1 with ``--check`` when a file differs.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    stale = []
    for path, content in render_all().items():
        current = path.read_text() if path.exists() else ""
        if current == content:
            continue
        stale.append(path)
        if not check:
            path.write_text(content)
    for path in stale:
        print(f"{'stale' if check else 'rewrote'}: {path.relative_to(ROOT)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
