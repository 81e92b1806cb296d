"""The package's structure, where import-linter cannot check it.

``lint-imports`` (setup.cfg, ``[importlinter]``) holds the layers, imports under
``TYPE_CHECKING`` included, and keeps the emulator apart. These tests check the rest:

- the package has no run-time import cycle, counting the imports inside functions and the
  package ``__init__``s an import runs (read from the source: the largest strongly connected
  part of the graph is one module); counting the
  imports under ``TYPE_CHECKING`` as well, every cycle stays inside one top-level part of the
  package (annotations between sibling modules, such as a guild and its channels), but for
  the pairs of parts listed below with their reason;
- the imports inside functions are few, and each is on the allow-list below with its reason;
- no import under ``TYPE_CHECKING`` reaches a higher layer (import-linter says so too; this
  check reads the source itself): what a lower layer needs of a higher one for its
  annotations is a small Protocol at the lower layer;
- the emulator stands apart from the layers: under ``TYPE_CHECKING`` only the top layer (the
  test world and the plugin, for annotations) names it, and it names only the leaves (L0);
- models hold a state, not the client: ``models/`` barely names the client;
- no layer of the contract joins with ``:`` two siblings that import each other;
- composition, not chains: no chain of our own classes is deeper than 2 (errors, Protocols
  and ``Model`` apart; the façade's bases count as a level, so a subclass of ``Client`` is a
  chain of 3), and only ``Client``, the façade, combines several bases of ours;
- what is built on the client (the events fleet) reads none of its private attributes: it
  uses the client's public API and its seams;
- no re-export shims: every module but a package ``__init__`` defines something.

Each check is a function over a package directory; the ``*_catches_*`` tests run it on a
small package written for the purpose, so a check that could never fail is caught too.
"""

from __future__ import annotations

import ast
import configparser
import functools
import pathlib
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator

import grimp
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "service_client"

#: Every import inside a function body of the package, with its reason. Keys are
#: ``(importing module, imported name)``; a name is ``module.attribute`` for
#: ``from module import attribute``. Keep this short: an import inside a function hides
#: a dependency from a reader, and a cycle from anything but this test.
ALLOWED_FUNCTION_IMPORTS: dict[tuple[str, str], str] = {
    ("service_client.__main__", "service_client.emulator"): (
        "optional dependency: tells whether the emulator extra is installed, to print the pip "
        "command when it is not"
    ),
    ("service_client.__main__", "service_client.emulator.Emulator"): "optional dependency: the emulator extra",
    ("service_client.__main__", "service_client.emulator.seed_demo"): "optional dependency: the emulator extra",
    ("service_client.__main__", "service_client.emulator.__main__.main"): "optional dependency: the emulator extra",
    ("service_client.__main__", "service_client.emulator.control.CONTROL_POST_MESSAGE"): (
        "optional dependency: the emulator extra (the control-plane route of the demo's curl line)"),
    ("service_client.client.lifecycle", "service_client.rest.session.RestSession"): (
        "import time: requests and urllib3 load when a Client is built, not at import service_client"
    ),
    ("service_client.client.lifecycle", "service_client.gateway.connection.GatewayConnection"): (
        "import time: websocket-client loads at login, not at import service_client"
    ),
    ("service_client.rest", "service_client.rest.session"): (
        "import time: the package exports RestSession lazily (PEP 562), so importing the routes "
        "and buckets does not load requests"
    ),
    ("service_client.rest", "service_client.rest.redis_buckets.RedisBucketStore"): (
        "import time: the package exports the Redis store lazily (PEP 562); most bots never build one"
    ),
    ("service_client", "service_client.dispatcher"): (
        "import time: the package exports the command framework lazily (PEP 562), about 10 ms "
        "that bots without commands do not pay"
    ),
    ("service_client", "service_client.fleet"): (
        "import time: the package exports the events fleet lazily (PEP 562); it needs the redis extra "
        "and most bots never run one"
    ),
    ("service_client.state.parsers", "service_client.models._message_wire"): (
        "import time: the message structs import msgspec, which loads at login, not at import service_client"
    ),
    ("service_client.fleet.publisher", "service_client.models._message_wire"): (
        "optional dependency: the message struct the publisher's tap may be given needs msgspec, which "
        "an interpreter other than CPython does not install"
    ),
    ("service_client._html", "pandas"): (
        "optional dependency: to_frame() needs pandas, which the package does not require"
    ),
    ("service_client._html", "html.escape"): (
        "import time: the html package loads when a notebook first renders a table"
    ),
    ("service_client.rest.redis_buckets", "redis"): "optional dependency: the redis extra, loaded when a store is built",
    ("service_client.rest.redis_buckets", "redis.backoff.NoBackoff"): "optional dependency: the redis extra",
    ("service_client.rest.redis_buckets", "redis.retry.Retry"): "optional dependency: the redis extra",
    ("service_client.emulator.wire", "uvicorn.protocols.websockets.websockets_sansio_impl.WebSocketsSansIOProtocol"): (
        "optional dependency: uvicorn's websockets protocol, probed for the bulk delivery path"
    ),
    ("service_client.emulator.wire", "websockets.protocol.State"): (
        "optional dependency: the websockets package, probed with uvicorn's protocol"
    ),
    ("service_client.emulator.media", "service_client.emulator.media.server.MediaServer"): (
        "optional dependency: the voice extra (aiortc, livekit-protocol); without it the emulator "
        "runs with no media server"
    ),
    ("service_client.client.voice", "service_client.voice.session.MediaSession"): (
        "import time: the voice media session brings asyncio, which loads when a bot first joins "
        "voice, not at import service_client"
    ),
    ("service_client.rest.retry", "email.utils"): "import time: the email package loads only for an HTTP-date Retry-After",
}

#: Most names of the package itself imported inside functions.
MAX_PACKAGE_FUNCTION_IMPORTS = 16

#: Top-level parts of the package that may share an import cycle when the imports under
#: ``TYPE_CHECKING`` count (never at run time), with the reason. Keys are sorted tuples.
TYPE_CHECKING_CYCLES_ACROSS_PARTS: dict[tuple[str, ...], str] = {}

#: Top-level parts of the package that stand apart from the layers, neither above nor below
#: them: the emulator is a server of its own. At run time it uses only the leaves (L0) and the
#: library never imports it (import-linter holds both). Under ``TYPE_CHECKING`` the top layer
#: may name it (the test world annotates with ``Emulator`` and its record types, without
#: loading it: the plugin runs in sessions without the emulator extra), no other layer may, and
#: it may name only the leaves.
APART = frozenset({"emulator"})

#: Classes of ours that may combine several bases of ours: the public façade only.
MULTIPLE_BASES_ALLOWED = frozenset({"service_client.client.lifecycle.Client"})

#: Bases that do not count as a level of a chain: the model base (every model is one).
CHAIN_EXEMPT_BASES = frozenset({"service_client.models._base.Model"})

#: Deepest chain of our own classes (a class and one base of ours).
MAX_CLASS_CHAIN = 2

#: The class whose private attributes (and its bases' of ours) no part built on it reads.
CLIENT_CLASS = "service_client.client.lifecycle.Client"

#: The top-level parts built on the client: they use its public API only.
BUILT_ON_THE_CLIENT = ("fleet",)

#: Classes still built as chains, each being rebuilt from parts by its owner. An entry must
#: still break a rule (the test says when it is stale): remove it once the class is rebuilt.
CHAINS_BEING_REBUILT: dict[str, str] = {}

#: Most lines under ``models/`` that name the client (``Client`` or ``_client``).
MAX_MODEL_LINES_NAMING_CLIENT = 5


# -- reading the package ------------------------------------------------------------------------


def module_name(path: pathlib.Path, package_dir: pathlib.Path) -> str:
    """The dotted name of a source file of the package in ``package_dir``."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(package_dir: pathlib.Path) -> Iterator[tuple[str, pathlib.Path]]:
    """``(module name, path)`` of every source file, in a stable order."""
    for path in sorted(package_dir.rglob("*.py")):
        yield module_name(path, package_dir), path


@functools.cache
def parsed(path: pathlib.Path) -> ast.Module:
    """The syntax tree of a source file (read once per test session: the checks share it)."""
    return ast.parse(path.read_text(), str(path))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The names an import statement brings in, absolute: ``pkg.mod`` or ``pkg.mod.attr``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [f"{target}.{alias.name}" for alias in node.names]


@functools.cache
def classified_imports(package_dir: pathlib.Path) -> tuple[tuple[str, str, str, int], ...]:
    """Every import statement of the package (see :func:`_classified_imports`), read once."""
    return tuple(_classified_imports(package_dir))


def _classified_imports(package_dir: pathlib.Path) -> Iterator[tuple[str, str, str, int]]:
    """Every import statement of the package: ``(module, name, kind, line)``.

    ``kind`` is ``"function"`` inside a function body, ``"type_checking"`` under an
    ``if TYPE_CHECKING:`` (anywhere), else ``"module"``.
    """
    for module, path in source_files(package_dir):
        tree = parsed(path)
        is_package = path.name == "__init__.py"

        def visit(node: ast.AST, kind: str, module: str = module,
                  is_package: bool = is_package) -> Iterator[tuple[str, str, str, int]]:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for name in _imported(module, is_package, child):
                        yield module, name, kind, child.lineno
                elif isinstance(child, ast.If) and _is_type_checking(child.test):
                    for stmt in child.body:
                        yield from visit(ast.Module(body=[stmt], type_ignores=[]), "type_checking")
                    for stmt in child.orelse:
                        yield from visit(ast.Module(body=[stmt], type_ignores=[]), kind)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and kind != "type_checking":
                    yield from visit(child, "function")
                else:
                    yield from visit(child, kind)

        yield from visit(tree, "module")


@functools.cache
def type_checking_imports(package_dir: pathlib.Path) -> tuple[tuple[str, str, int], ...]:
    """``(module, name, line)`` of every import under ``TYPE_CHECKING`` (read once per package)."""
    return tuple((module, name, line) for module, name, kind, line in classified_imports(package_dir)
                 if kind == "type_checking")


def layers(setup_cfg: pathlib.Path = ROOT / "setup.cfg") -> dict[str, int]:
    """Each top-level child of the package and its layer (0 lowest), from the import-linter
    contract in setup.cfg; the parts in :data:`APART` have none."""
    config = configparser.ConfigParser()
    config.read(setup_cfg)
    lines = [line.strip() for line in config["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    out: dict[str, int] = {}
    for level, line in enumerate(reversed(lines)):
        for name in re.split(r"[|:]", line):
            out[name.strip()] = level
    return out


def layer_of(name: str, table: dict[str, int]) -> int | None:
    """The layer of a dotted name inside the package, or None for the root and outside names."""
    parts = name.split(".")
    if len(parts) < 2:
        return None
    return table.get(parts[1])


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph: its strongly connected parts of more than one module
    (or one module importing itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1 or node in edges.get(node, ()):
                found.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def runtime_import_graph(package_dir: pathlib.Path) -> dict[str, set[str]]:
    """Module -> the modules of the package that importing it runs, read from the source.

    Imports at module level and inside functions count, those under ``TYPE_CHECKING`` do
    not. An imported name is resolved to the longest prefix that is a module of the package
    (``from .models import Guild`` is ``pkg.models``); importing ``pkg.a.b`` runs the
    package ``__init__`` of ``pkg.a`` too, unless the importer is inside ``pkg.a`` (which is
    then loaded already), so an edge goes to every such enclosing package as well.
    """
    modules = {module for module, _ in source_files(package_dir)}
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, name, kind, _line in classified_imports(package_dir):
        if kind == "type_checking":
            continue
        pieces = name.split(".")
        target = next((".".join(pieces[:n]) for n in range(len(pieces), 0, -1)
                       if ".".join(pieces[:n]) in modules), None)
        if target is None:
            continue
        own = module.split(".")
        chain = target.split(".")
        for n in range(1, len(chain) + 1):
            step = ".".join(chain[:n])
            if step == module or (n < len(own) and own[:n] == chain[:n]):
                continue                            # the importer, or a package enclosing it: loaded
            graph[module].add(step)
    return graph


def largest_cycle(edges: dict[str, set[str]]) -> list[str]:
    """The largest strongly connected part of an import graph (one module when it has none)."""
    found = cycles(edges)
    return max(found, key=len) if found else []


def import_graph(package: str, *, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports, inside functions included; the imports under
    ``TYPE_CHECKING`` only with ``type_checking``."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=not type_checking, cache_dir=None)
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def part_of(module: str) -> str:
    """The top-level part of the package a module belongs to (``pkg.models.guild`` -> ``models``;
    the root package itself is ``""``)."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else ""


def cycles_across_parts(found: list[list[str]],
                        allowed: dict[tuple[str, ...], str] = TYPE_CHECKING_CYCLES_ACROSS_PARTS) -> list[str]:
    """The cycles of ``found`` that span more than one top-level part and are not ``allowed``,
    each as ``part, part: module, module, ...``."""
    out = []
    for cycle in found:
        parts = tuple(sorted({part_of(module) for module in cycle}))
        if len(parts) > 1 and parts not in allowed:
            out.append(f"{', '.join(parts)}: {', '.join(cycle)}")
    return out


def function_imports(package_dir: pathlib.Path) -> dict[tuple[str, str], int]:
    """``(module, imported name)`` -> line, for every import inside a function body."""
    return {
        (module, name): line
        for module, name, kind, line in classified_imports(package_dir)
        if kind == "function"
    }


def upward_imports(package_dir: pathlib.Path, table: dict[str, int]) -> list[str]:
    """Imports of any kind (module level, inside functions, under ``TYPE_CHECKING``) that reach
    a higher layer, as ``module:line -> name`` lines: what ``lint-imports`` holds, read from
    the source by this test too."""
    root = package_dir.name
    bad = []
    for module, name, _kind, line in classified_imports(package_dir):
        if not name.startswith(root + "."):
            continue
        source, target = layer_of(module, table), layer_of(name, table)
        if source is not None and target is not None and target > source:
            bad.append(f"{module}:{line} -> {name}")
    return bad


def imports_across_apart(package_dir: pathlib.Path, table: dict[str, int],
                         apart: frozenset[str] = APART) -> list[str]:
    """Imports at run time (module level or inside functions) between a part that stands apart
    and the layers that break :data:`APART`'s rule: the apart part importing a layer above the
    leaves, or a layer below the top importing it."""
    root = package_dir.name
    top = max(table.values())

    def part(name: str) -> str | None:
        pieces = name.split(".")
        return pieces[1] if len(pieces) > 1 and pieces[0] == root else None

    bad = []
    for module, name, kind, line in classified_imports(package_dir):
        if kind == "type_checking" or not name.startswith(root + "."):
            continue
        source, target = part(module), part(name)
        if source in apart and target not in apart:
            allowed = layer_of(name, table) in (None, 0)
        elif target in apart and source not in apart:
            allowed = layer_of(module, table) in (None, top)
        else:
            continue
        if not allowed:
            bad.append(f"{module}:{line} -> {name}")
    return bad


def rules_of_the_docs(page: pathlib.Path) -> list[tuple[str, str]]:
    """``(rule, test)`` of every row of the rules table of ``docs/architecture.rst``: the
    lines ``- <rule>: ``tests/<file>.py::<test>``.`` of its "The rules and their tests" section."""
    text = page.read_text()
    section = text.split("The rules and their tests", 1)[1]
    section = re.split(r"\n[^\n]+\n-{4,}\n", section[section.index("\n", section.index("---")):], maxsplit=1)[0]
    items = re.split(r"\n- ", "\n" + section)
    return [(" ".join(item.split("``tests/", 1)[0].split()).rstrip(": "), test) for item in items
            for test in re.findall(r"``(tests/[\w/]+\.py::\w+)``", item)]


def defined_tests(path: pathlib.Path) -> set[str]:
    """The test functions a test file defines at its top level."""
    return {node.name for node in ast.parse(path.read_text()).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")}


def upward_type_imports(package_dir: pathlib.Path, table: dict[str, int]) -> list[str]:
    """``TYPE_CHECKING`` imports that reach a higher layer, as ``module:line -> name`` lines."""
    root = package_dir.name
    bad = []
    for module, name, line in type_checking_imports(package_dir):
        if not name.startswith(root + "."):
            continue
        source, target = layer_of(module, table), layer_of(name, table)
        if source is not None and target is not None and target > source:
            bad.append(f"{module}:{line} -> {name}")
    return bad


def type_imports_across_apart(package_dir: pathlib.Path, table: dict[str, int],
                              apart: frozenset[str] = APART) -> list[str]:
    """``TYPE_CHECKING`` imports between a layered module and a part that stands apart that
    break :data:`APART`'s rule (a layer below the top naming the apart part, or the apart part
    naming a layer above the leaves), as ``module:line -> name`` lines."""
    root = package_dir.name
    top = max(table.values())

    def part(name: str) -> str | None:
        pieces = name.split(".")
        return pieces[1] if len(pieces) > 1 and pieces[0] == root else None

    bad = []
    for module, name, line in type_checking_imports(package_dir):
        if not name.startswith(root + "."):
            continue
        source, target = part(module), part(name)
        if source in apart and target not in apart:
            allowed = layer_of(name, table) in (None, 0)
        elif target in apart and source not in apart:
            allowed = layer_of(module, table) in (None, top)
        else:
            continue
        if not allowed:
            bad.append(f"{module}:{line} -> {name}")
    return bad


def _class_table(package_dir: pathlib.Path) -> tuple[dict[str, tuple[str, list[str]]], dict[str, dict[str, str]]]:
    """The package's top-level classes, ``qualified name -> (module, base expressions)``, and
    each module's names, ``module -> local name -> qualified name`` (imports and classes)."""
    classes: dict[str, tuple[str, list[str]]] = {}
    names: dict[str, dict[str, str]] = {}
    for module, path in source_files(package_dir):
        tree = parsed(path)
        is_package = path.name == "__init__.py"
        local = names.setdefault(module, {})
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias, full in zip(node.names, _imported(module, is_package, node), strict=True):
                    local[alias.asname or alias.name] = full
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    local[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                local[node.name] = f"{module}.{node.name}"
                bases = [ast.unparse(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]
                classes[f"{module}.{node.name}"] = (module, bases)
    return classes, names


def _resolve(name: str, module: str, classes: dict[str, tuple[str, list[str]]],
             names: dict[str, dict[str, str]]) -> str:
    """The qualified name a base expression of ``module`` stands for, re-exports followed."""
    head, _, rest = name.partition(".")
    qualified = names.get(module, {}).get(head, head) + ("." + rest if rest else "")
    for _ in range(10):
        if qualified in classes:
            break
        owner, _, attr = qualified.rpartition(".")
        following = names.get(owner, {}).get(attr)
        if following is None or following == qualified:
            break
        qualified = following
    return qualified


def class_chains(package_dir: pathlib.Path, exempt_bases: frozenset[str] = CHAIN_EXEMPT_BASES,
                 several_allowed: frozenset[str] = MULTIPLE_BASES_ALLOWED) -> dict[str, tuple[int, list[str]]]:
    """Each class of ours that is not an error or a Protocol: ``(depth, bases of ours)``.

    The depth counts the class and its chain of bases of ours (1 for a class with none);
    errors (anything that reaches a built-in exception), Protocols and ``exempt_bases``
    do not count. A class in ``several_allowed`` may have several bases of ours (the façade's
    slices); they count as one level below it, so a subclass of the façade is a chain of 3.
    """
    classes, names = _class_table(package_dir)
    bases = {name: [_resolve(b, module, classes, names) for b in raw] for name, (module, raw) in classes.items()}

    @functools.cache
    def special(name: str) -> bool:
        own = bases.get(name, [])
        return any(b.rpartition(".")[2] in {"Protocol", "BaseException"}
                   or (b not in classes and re.search(r"(Error|Exception|Warning)$", b))
                   or (b in classes and special(b)) for b in own)

    @functools.cache
    def depth(name: str) -> int:
        counted = [b for b in bases[name] if b in classes and b not in exempt_bases and not special(b)]
        return 1 + max((depth(b) for b in counted), default=0)

    return {name: (depth(name), [b for b in bases[name] if b in classes and b not in exempt_bases])
            for name in classes if not special(name)}


def chain_problems(chains: dict[str, tuple[int, list[str]]], max_depth: int = MAX_CLASS_CHAIN,
                   several_allowed: frozenset[str] = MULTIPLE_BASES_ALLOWED) -> dict[str, str]:
    """Classes that break the composition rules, with what they break."""
    out = {}
    for name, (deep, own) in sorted(chains.items()):
        if deep > max_depth:
            out[name] = f"a chain of {deep} classes of ours"
        elif len(own) > 1 and name not in several_allowed:
            out[name] = f"{len(own)} bases of ours: {', '.join(own)}"
    return out


def private_names(package_dir: pathlib.Path, qualified: str) -> set[str]:
    """The private names of a class of the package and of its bases of ours: the attributes its
    methods assign on ``self``, its methods and its annotated class attributes (``_x``, not
    dunder names)."""
    classes, names = _class_table(package_dir)
    paths = dict(source_files(package_dir))
    found: set[str] = set()
    todo, done = [qualified], set()
    while todo:
        name = todo.pop()
        if name in done or name not in classes:
            continue
        done.add(name)
        module, raw = classes[name]
        todo.extend(_resolve(b, module, classes, names) for b in raw)
        node = next(n for n in parsed(paths[module]).body if isinstance(n, ast.ClassDef)
                    and f"{module}.{n.name}" == name)
        for inner in ast.walk(node):
            if (isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store)
                    and isinstance(inner.value, ast.Name) and inner.value.id == "self"):
                found.add(inner.attr)
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(inner.name)
            elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                found.add(inner.target.id)
    return {name for name in found if name.startswith("_") and not name.startswith("__")}


def private_reads(package_dir: pathlib.Path, owner: str, parts: Iterable[str]) -> list[str]:
    """Where the modules of ``parts`` (top-level parts of the package) use a private name of the
    class ``owner``, as ``module:line expression``: any ``x._name`` that is one of its names,
    unless ``x`` is ``self`` (or ``cls``) and the module defines ``_name`` itself (its own
    attribute of the same name)."""
    private = private_names(package_dir, owner)
    wanted = set(parts)
    out: list[tuple[str, int, str]] = []
    for module, path in source_files(package_dir):
        if part_of(module) not in wanted:
            continue
        tree = parsed(path)
        own = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        own |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in private:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") and node.attr in own:
                continue
            out.append((module, node.lineno, ast.unparse(node)))
    return [f"{module}:{line} {text}" for module, line, text in sorted(out)]


def sibling_lines(setup_cfg: pathlib.Path = ROOT / "setup.cfg") -> list[list[str]]:
    """The layers of the import-linter contract, each as its list of siblings (joined by ``:``)."""
    config = configparser.ConfigParser()
    config.read(setup_cfg)
    text = config["importlinter:contract:layers"]["layers"]
    return [[name.strip() for name in re.split(r"[|:]", line)] for line in text.splitlines() if line.strip()]


def mutual_siblings(edges: dict[str, set[str]], siblings: list[list[str]], root: str) -> list[str]:
    """Pairs of siblings of one layer that import each other, as ``a <-> b``: a ``:`` would
    hide the loop between them."""
    reaches = {(part_of(source), part_of(target)) for source, targets in edges.items() for target in targets
               if source.startswith(root + ".") and target.startswith(root + ".")}
    return [f"{a} <-> {b}" for line in siblings for i, a in enumerate(line) for b in line[i + 1:]
            if (a, b) in reaches and (b, a) in reaches]


def reexport_shims(package_dir: pathlib.Path) -> list[str]:
    """Modules (not package ``__init__``s) that define nothing: a docstring, imports and
    ``__all__`` only, a shim that keeps an old import path alive."""
    out = []
    for module, path in source_files(package_dir):
        if path.name == "__init__.py":
            continue
        body = parsed(path).body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        imports = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))
                   and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
        rest = [node for node in body if not isinstance(node, (ast.Import, ast.ImportFrom))
                and not (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"])]
        if imports and not rest:
            out.append(module)
    return out


def lines_naming_the_client(models_dir: pathlib.Path) -> list[str]:
    """Lines under ``models/`` that name ``Client`` or ``_client`` (not the package name ``service_client``), apart from the State port
    (``_port.py``), which declares the small protocol of the client its owner is."""
    return [
        f"{path.name}:{number}: {text.strip()}"
        for path in sorted(models_dir.glob("*.py"))
        if path.name != "_port.py"
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"Client|(?<!service)_client", text)
    ]


# -- the package --------------------------------------------------------------------------------


def test_no_import_cycle_even_counting_imports_inside_functions() -> None:
    found = cycles(import_graph("service_client"))
    assert found == [], "import cycles (imports inside functions count):\n" + "\n".join(map(str, found))


def test_no_import_cycle_counting_package_inits_and_imports_inside_functions() -> None:
    largest = largest_cycle(runtime_import_graph(PACKAGE))
    assert largest == [], (
        f"a run-time import cycle of {len(largest)} modules (package __init__s and imports inside "
        "functions count; it works only by import order):\n" + "\n".join(largest)
    )


def test_counting_type_checking_imports_every_cycle_stays_inside_one_part() -> None:
    found = cycles(import_graph("service_client", type_checking=True))
    across = cycles_across_parts(found)
    assert across == [], (
        "import cycles across parts of the package when TYPE_CHECKING imports count (name what a "
        "lower layer needs of a higher one by a Protocol at the lower layer):\n" + "\n".join(across)
    )
    spans = {tuple(sorted({part_of(module) for module in cycle})) for cycle in found}
    stale = sorted(pair for pair in TYPE_CHECKING_CYCLES_ACROSS_PARTS if pair not in spans)
    assert stale == [], f"TYPE_CHECKING_CYCLES_ACROSS_PARTS entries with no such cycle left: {stale}"


def test_every_import_inside_a_function_is_allowed_with_its_reason() -> None:
    found = function_imports(PACKAGE)
    unlisted = sorted(f"{module}:{line} imports {name}" for (module, name), line in found.items()
                      if (module, name) not in ALLOWED_FUNCTION_IMPORTS)
    assert unlisted == [], (
        "imports inside functions that are not on ALLOWED_FUNCTION_IMPORTS (move them to the top of "
        "the module, or list them with the reason: an optional dependency or import time):\n"
        + "\n".join(unlisted)
    )
    stale = sorted(f"{module} -> {name}" for module, name in ALLOWED_FUNCTION_IMPORTS if (module, name) not in found)
    assert stale == [], "allow-list entries no longer in the code:\n" + "\n".join(stale)


def test_few_package_names_are_imported_inside_functions() -> None:
    own = [key for key in function_imports(PACKAGE) if key[1].startswith("service_client")]
    assert len(own) <= MAX_PACKAGE_FUNCTION_IMPORTS, own


def test_no_type_checking_import_reaches_a_higher_layer() -> None:
    assert upward_type_imports(PACKAGE, layers()) == []


def test_no_import_of_any_kind_reaches_a_higher_layer() -> None:
    assert upward_imports(PACKAGE, layers()) == []


def test_the_emulator_stands_apart_at_run_time() -> None:
    assert imports_across_apart(PACKAGE, layers()) == []


def test_every_rule_of_the_architecture_page_names_a_test_that_exists() -> None:
    rules = rules_of_the_docs(ROOT / "docs" / "architecture.rst")
    assert len(rules) >= 10, rules
    missing = [f"{rule}: {test}" for rule, test in rules
               if test.split("::")[1] not in defined_tests(ROOT / test.split("::")[0])]
    assert missing == [], "rules of docs/architecture.rst whose test does not exist:\n" + "\n".join(missing)


def test_import_linter_counts_type_checking_imports() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["importlinter"].getboolean("exclude_type_checking_imports") is False


def test_only_the_top_layer_names_the_emulator_under_type_checking() -> None:
    assert type_imports_across_apart(PACKAGE, layers()) == []


def test_every_module_has_a_layer() -> None:
    table = layers()
    orphans = sorted({module.split(".")[1] for module, _ in source_files(PACKAGE)
                      if module.count(".") >= 1 and layer_of(module, table) is None
                      and module.split(".")[1] not in APART})
    assert orphans == [], f"top-level modules with no layer in setup.cfg: {orphans}"


def test_no_class_chain_of_ours_is_deeper_than_two_and_only_the_client_combines_bases() -> None:
    problems = chain_problems(class_chains(PACKAGE))
    unlisted = {name: why for name, why in problems.items() if name not in CHAINS_BEING_REBUILT}
    assert unlisted == {}, (
        "split by concept into parts that are passed in, never into chains of base classes:\n"
        + "\n".join(f"{name}: {why}" for name, why in unlisted.items())
    )
    stale = sorted(set(CHAINS_BEING_REBUILT) - set(problems))
    assert stale == [], f"CHAINS_BEING_REBUILT entries that are rebuilt (remove them): {stale}"


def test_what_is_built_on_the_client_reads_none_of_its_private_attributes() -> None:
    assert {"_connection", "_destroyed", "_rest", "_set_rest_token", "_events"} <= private_names(PACKAGE, CLIENT_CLASS)
    found = private_reads(PACKAGE, CLIENT_CLASS, BUILT_ON_THE_CLIENT)
    assert found == [], ("the fleet reads private attributes of the client (use its public API, or add a "
                         "documented seam to it):\n" + "\n".join(found))


def test_no_layer_joins_siblings_that_import_each_other() -> None:
    found = mutual_siblings(import_graph("service_client", type_checking=True), sibling_lines(), "service_client")
    assert found == [], "siblings of one layer that import each other (split or layer them):\n" + "\n".join(found)


def test_no_reexport_shims() -> None:
    assert reexport_shims(PACKAGE) == [], "import each name from the module that defines it"


def test_models_hold_a_state_not_the_client() -> None:
    named = lines_naming_the_client(PACKAGE / "models")
    assert len(named) <= MAX_MODEL_LINES_NAMING_CLIENT, "\n".join(named)


# -- the checks catch what they are for ---------------------------------------------------------


def _write_package(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    package = tmp_path / "toypkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return package


def test_the_cycle_check_catches_a_cycle_through_a_function_import(tmp_path: pathlib.Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _write_package(tmp_path, {
        "__init__.py": "",
        "low.py": "def helper():\n    from .high import thing\n    return thing\n",
        "high.py": "from .low import helper\nthing = 1\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles(import_graph("toypkg")) == [["toypkg.high", "toypkg.low"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_runtime_graph_counts_package_inits(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "from .models.thing import Thing\n",
        "models/__init__.py": "from .thing import Thing\nfrom .holder import Holder\n",
        "models/thing.py": "from .. import leaf\n",
        "models/holder.py": "from ..managers.roles import Roles\n",
        "managers/__init__.py": "",
        "managers/roles.py": "from ..models.thing import Thing\n",
        "leaf.py": "",
    })
    graph = runtime_import_graph(package)
    assert graph["toypkg.models.thing"] == {"toypkg.leaf"}          # its own packages are loaded
    assert graph["toypkg.managers.roles"] == {"toypkg.models", "toypkg.models.thing"}
    assert largest_cycle(graph) == ["toypkg.managers.roles", "toypkg.models", "toypkg.models.holder"]
    # Without package __init__s (grimp's view) the same package has no cycle:
    assert cycles({m: {t for t in ts if t != "toypkg.models"} for m, ts in graph.items()}) == []


def test_the_type_checking_cycle_check_catches_a_cycle_across_parts(tmp_path: pathlib.Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _write_package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high.b import B\n",
        "low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "low/d.py": "from .c import *\n",
        "high/__init__.py": "",
        "high/b.py": "from ..low.a import *\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cycles(import_graph("toypkg")) == []                 # at run time: none
    found = cycles(import_graph("toypkg", type_checking=True))
    assert found == [["toypkg.high.b", "toypkg.low.a"], ["toypkg.low.c", "toypkg.low.d"]]
    assert cycles_across_parts(found, {}) == ["high, low: toypkg.high.b, toypkg.low.a"]
    assert cycles_across_parts(found, {("high", "low"): "a reason"}) == []


def test_the_function_import_check_sees_imports_in_methods_but_not_type_checking(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "mod.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .other import Hidden
            class K:
                def method(self):
                    from . import other
                    from .other import thing as alias
            """,
    })
    assert set(function_imports(package)) == {("toypkg.mod", "toypkg.other"), ("toypkg.mod", "toypkg.other.thing")}


def test_the_type_checking_check_catches_an_upward_name(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "low.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .high import Client, Manager
            from .high import Other
            """,
        "high.py": "",
        "higher.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .low import Thing
            """,
    })
    assert upward_type_imports(package, {"low": 0, "high": 1, "higher": 2}) == [
        "toypkg.low:3 -> toypkg.high.Client",
        "toypkg.low:3 -> toypkg.high.Manager",
    ]


def test_the_apart_check_lets_only_the_top_layer_name_the_emulator(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "leaf.py": "",
        "middle.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .emu import Emulator
            """,
        "top.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .emu import Emulator, Record
            """,
        "emu/__init__.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from ..leaf import Secret
                from ..middle import Helper
            """,
    })
    table = {"leaf": 0, "middle": 1, "top": 2}
    assert type_imports_across_apart(package, table, frozenset({"emu"})) == [
        "toypkg.emu:4 -> toypkg.middle.Helper",
        "toypkg.middle:3 -> toypkg.emu.Emulator",
    ]
    assert upward_type_imports(package, table) == []          # apart: never "above" or "below"


def test_the_chain_check_catches_deep_chains_and_several_bases(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "from .base import Base as Base\n",
        "base.py": "from typing import Protocol\nclass Base: ...\nclass Port(Protocol): ...\nclass Model: ...\n",
        "errors.py": "class Oops(Exception): ...\nclass Deeper(Oops): ...\nclass Deepest(Deeper): ...\n",
        "mid.py": "from . import Base\nfrom .base import Model, Port\nclass Mid(Base): ...\nclass M1(Model): ...\n"
                  "class P2(Port, Protocol): ...\nfrom typing import Protocol\n",
        "top.py": "from .mid import Mid, M1\nfrom . import base\nclass Top(Mid): ...\nclass Both(M1, base.Base): ...\n"
                  "class M2(M1): ...\n",
        "shim.py": '\"\"\"Old path.\"\"\"\nfrom .mid import Mid\n__all__ = ["Mid"]\n',
    })
    chains = class_chains(package, frozenset({"toypkg.base.Model"}), frozenset())
    assert chains["toypkg.mid.Mid"] == (2, ["toypkg.base.Base"])
    assert chains["toypkg.top.M2"] == (2, ["toypkg.mid.M1"])          # Model does not count
    assert "toypkg.errors.Deepest" not in chains and "toypkg.mid.P2" not in chains
    assert chain_problems(chains, several_allowed=frozenset()) == {
        "toypkg.top.Both": "2 bases of ours: toypkg.mid.M1, toypkg.base.Base",
        "toypkg.top.Top": "a chain of 3 classes of ours",
    }
    assert reexport_shims(package) == ["toypkg.shim"]


def test_the_chain_check_counts_a_subclass_of_the_facade(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "client.py": "class Events: ...\nclass Operations: ...\nclass Client(Events, Operations): ...\n",
        "worker.py": "from .client import Client\nclass Worker(Client): ...\nclass Holder:\n"
                     "    def __init__(self):\n        self.client = Client()\n",
    })
    facade = frozenset({"toypkg.client.Client"})
    chains = class_chains(package, frozenset(), facade)
    assert chains["toypkg.client.Client"] == (2, ["toypkg.client.Events", "toypkg.client.Operations"])
    assert chain_problems(chains, several_allowed=facade) == {"toypkg.worker.Worker": "a chain of 3 classes of ours"}


def test_the_private_read_check_catches_reads_of_the_clients_private_names(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "client/__init__.py": "",
        "client/core.py": "class Base:\n    _flag: bool = False\n    def _hidden(self): ...\n"
                          "class Client(Base):\n    def __init__(self):\n        self._conn = 1\n"
                          "        self.public = 2\n",
        "fleet/__init__.py": "",
        "fleet/worker.py": "class Worker:\n    def __init__(self, client):\n        self._client = client\n"
                           "        self._conn = client.public\n"
                           "    def go(self, client):\n        client._hidden()\n        self._conn\n"
                           "        self._client._flag\n        self.client._conn\n        self._hidden()\n",
        "models/user.py": "def f(client):\n    return client._conn\n",
    })
    assert private_names(package, "toypkg.client.core.Client") == {"_conn", "_hidden", "_flag"}
    assert private_reads(package, "toypkg.client.core.Client", ["fleet"]) == [
        "toypkg.fleet.worker:6 client._hidden",
        "toypkg.fleet.worker:8 self._client._flag",      # a private of the client's base
        "toypkg.fleet.worker:9 self.client._conn",       # through a public attribute holding the client
        "toypkg.fleet.worker:10 self._hidden",           # the worker defines no _hidden: a subclass's read
    ]                                                    # self._conn is the worker's own; models/ not checked


def test_the_layer_checks_catch_upward_and_apart_imports(tmp_path: pathlib.Path) -> None:
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "leaf.py": "",
        "low.py": "def later():\n    from .high import thing\n",
        "high.py": "from .low import later\nfrom .emu import Server\n",
        "top.py": "from .emu import Server\n",
        "emu/__init__.py": "from ..leaf import x\nfrom ..high import y\n",
    })
    table = {"leaf": 0, "low": 1, "high": 2, "top": 3}
    assert upward_imports(package, table) == ["toypkg.low:2 -> toypkg.high.thing"]
    assert imports_across_apart(package, table, frozenset({"emu"})) == [
        "toypkg.emu:2 -> toypkg.high.y",
        "toypkg.high:2 -> toypkg.emu.Server",
    ]


def test_the_rules_table_is_read_from_its_section(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "architecture.rst"
    page.write_text(
        "Intro\n=====\n\nThe rules and their tests\n-------------------------\n\n"
        "- No cycle: ``tests/test_architecture.py::test_a``.\n"
        "- Layers, two ways:\n  ``tests/a.py::test_b`` and ``tests/a.py::test_c``.\n\n"
        "Next\n----\n\n- Not a rule: ``tests/x.py::test_d``.\n")
    assert rules_of_the_docs(page) == [
        ("No cycle", "tests/test_architecture.py::test_a"),
        ("Layers, two ways", "tests/a.py::test_b"),
        ("Layers, two ways", "tests/a.py::test_c"),
    ]


def test_the_sibling_check_catches_a_loop_between_siblings() -> None:
    edges = {"p.a.x": {"p.b.y"}, "p.b.y": {"p.a.z", "p.c"}, "p.c": {"p.b"}}
    assert mutual_siblings(edges, [["a", "b"], ["c"]], "p") == ["a <-> b"]
    assert mutual_siblings(edges, [["a"], ["b", "c"]], "p") == ["b <-> c"]
    assert mutual_siblings({"p.a.x": {"p.b.y"}}, [["a", "b"]], "p") == []


def test_the_naming_check_counts_lines_that_name_the_client(tmp_path: pathlib.Path) -> None:
    (tmp_path / "m.py").write_text("self._client = client\nstate = 1\nx: Client\n")
    assert [line.split(":")[1] for line in lines_naming_the_client(tmp_path)] == ["1", "3"]
