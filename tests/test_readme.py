"""README.rst and the emulator's docstring document every emulator route (REST and control plane) as served."""

from __future__ import annotations

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _routes(router):
    for method, segments, _handler in router._routes:
        yield method, "/" + "/".join(segments)


def test_every_emulator_route_is_in_the_readme(emulator):
    readme = (ROOT / "README.rst").read_text()
    core = emulator.core
    missing = [
        f"{method} /api/v2{path}"
        for method, path in _routes(core.rest.router)
        if f"{method} /api/v2{path}" not in readme
    ]
    missing += [
        f"{method} /_emulator{path}"
        for method, path in _routes(core.control)
        if f"{method} /_emulator{path}" not in readme
    ]
    assert missing == [], "document these routes in README.rst"


def test_every_emulator_route_is_in_the_emulator_docstring(emulator):
    import service_client.emulator as package

    doc = package.__doc__ or ""
    core = emulator.core
    missing = [
        f"{method} {path}"
        for router in (core.rest.router, core.control)
        for method, path in _routes(router)
        if f"{method} {path}" not in doc and f"{method}`` ``{path}" not in doc
    ]
    assert missing == [], "document these routes in service_client/emulator/__init__.py"
