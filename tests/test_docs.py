"""The documentation site in docs/ stays whole: every guide is in the index, every public name in the
API reference, every emulator route in the route reference (and every control route in its guide and
in the emulator's docstring), no page cites material users do not have, and the testing guide's
complete example passes. CI builds the site itself with ``sphinx -W``."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: The guides the site promises, in the order of its index.
GUIDES = [
    "events",
    "threads",
    "notebooks",
    "messages",
    "servers",
    "commands",
    "scheduled-work",
    "presence-voice",
    "voice-media",
    "errors",
    "common-errors",
    "rate-limits",
    "scaling-out",
    "testing",
    "emulator-control",
    "emulator-page",
    "performance",
]


def _toctree_entries(page: pathlib.Path) -> list[str]:
    """The document names listed by the toctree directives of an .rst page."""
    entries: list[str] = []
    in_toctree = False
    for line in page.read_text().splitlines():
        if line.startswith(".. toctree::"):
            in_toctree = True
            continue
        if in_toctree:
            if line and not line.startswith(" "):
                in_toctree = False
            elif line.strip() and not line.strip().startswith(":"):
                entries.append(line.strip())
    return entries


def test_the_index_names_every_guide_and_every_page_it_names_exists():
    entries = _toctree_entries(DOCS / "index.rst")
    assert [e.removeprefix("guides/") for e in entries if e.startswith("guides/")] == GUIDES
    assert {"quickstart", "events", "api/index"} <= set(entries)
    for entry in entries:
        assert (DOCS / f"{entry}.rst").is_file(), f"docs/index.rst names {entry}, which does not exist"
    on_disk = {p.stem for p in (DOCS / "guides").glob("*.rst")}
    assert on_disk == set(GUIDES), "every guide in docs/guides/ is listed in GUIDES and in the index"
    for entry in _toctree_entries(DOCS / "api" / "index.rst"):
        assert (DOCS / "api" / f"{entry}.rst").is_file(), f"docs/api/index.rst names {entry}"


def _documented_names() -> set[str]:
    """Every dotted name documented by an ``auto*`` directive of docs/api/, resolved."""
    names: set[str] = set()
    for page in (DOCS / "api").glob("*.rst"):
        module = ""
        for line in page.read_text().splitlines():
            current = re.match(r"\.\. currentmodule:: (\S+)", line)
            if current:
                module = current.group(1)
                continue
            auto = re.match(r"\.\. auto(?:class|exception|function|data):: (\S+)", line)
            if auto:
                name = auto.group(1)
                names.add(name if "." in name else f"{module}.{name}")
    return names


def test_the_api_reference_documents_every_public_name():
    import service_client
    import service_client.emulator

    documented = _documented_names()
    missing = [f"service_client.{n}" for n in service_client.__all__ if f"service_client.{n}" not in documented]
    missing += [
        f"service_client.emulator.{n}"
        for n in service_client.emulator.__all__
        if f"service_client.emulator.{n}" not in documented
    ]
    assert missing == [], "add these names to a page of docs/api/"


def _routes(router):
    """``(method, path)`` of every route of an emulator router, the path with its ``{name}`` fields."""
    for method, segments, _handler in router._routes:
        yield method, "/" + "/".join(segments)


def test_every_emulator_route_is_in_the_route_reference(emulator):
    # The service's endpoints are on the page generated from the catalog; the control plane's on
    # the emulator's own page.
    endpoints_page = (DOCS / "endpoints.rst").read_text()
    page = (DOCS / "emulator-routes.rst").read_text()
    core = emulator.core
    missing = [f"{method} {path} (docs/endpoints.rst)" for method, path in _routes(core.rest.router)
               if f"``{method} {path}``" not in endpoints_page]
    missing += [f"{method} /_emulator{path}" for method, path in _routes(core.control)
                if f"{method} /_emulator{path}" not in page]
    assert missing == [], "document these routes in docs/emulator-routes.rst (or the catalog)"


def test_every_control_route_is_in_the_emulator_docstring(emulator):
    import service_client.emulator as package

    doc = package.__doc__ or ""
    missing = [
        f"{method} {path}"
        for method, path in _routes(emulator.core.control)
        if f"{method} {path}" not in doc and f"{method}`` ``{path}" not in doc
    ]
    assert missing == [], "document these routes in service_client/emulator/__init__.py"
    assert ":mod:`service_client.endpoints`" in doc  # the service's endpoints: the catalog


def test_every_control_route_is_in_the_control_plane_guide(emulator):
    guide = (DOCS / "guides" / "emulator-control.rst").read_text()
    missing = [
        f"{method} {'/' + '/'.join(segments)}"
        for method, segments, _handler in emulator.core.control._routes
        if "/" + "/".join(segments) not in guide
    ]
    assert missing == [], "document these control routes in docs/guides/emulator-control.rst"


def test_no_page_cites_material_users_do_not_have():
    cited = re.compile(r"python-api|protocol\.md|protocol \d|pitfall|issue \d|issues/\d", re.IGNORECASE)
    pages = [*DOCS.rglob("*.rst"), *(DOCS / "examples").glob("*.py")]
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
        for page in pages
        if "_build" not in page.parts
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if cited.search(line)
    ]
    assert found == [], "say what is meant instead of citing design notes or issues"


@pytest.mark.timeout(150)  # a pytest process of its own: slower than 60 s on a busy machine
def test_the_testing_guides_complete_example_passes():
    example = DOCS / "examples" / "test_ping_bot.py"
    assert "literalinclude:: ../examples/test_ping_bot.py" in (DOCS / "guides" / "testing.rst").read_text()
    run = subprocess.run(
        # One process (-n 0): two xdist workers for three tests only cost start-up time.
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", str(example)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"\b3 passed\b", run.stdout), run.stdout[-1000:]


def test_the_api_reference_shows_the_clients_methods_from_its_mixins():
    # Client takes its event methods and operations from mixins; autodoc shows inherited
    # members only when asked, so without the option on, send_message and friends would vanish.
    from service_client import Client

    inherited = sorted(
        name
        for klass in Client.__mro__[1:-1]
        for name, value in vars(klass).items()
        if not name.startswith("_") and callable(value)
    )
    assert {"on", "once", "wait_for", "send_message", "api_call"} <= set(inherited)
    page = (DOCS / "api" / "client.rst").read_text()
    directive = re.search(r"^\.\. autoclass:: Client\n((?:   :.*\n)*)", page, re.MULTILINE)
    assert directive is not None and ":inherited-members:" in directive.group(1)
