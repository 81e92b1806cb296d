"""The emulator is built from parts that are passed in, never from chains of base classes.

Every class of ``service_client.emulator`` has at most one base of ours (a class and one base:
a chain of 2 at most); exceptions, Protocols and TypedDicts are exempt. The store and the
operations are façades that only hold their parts.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Protocol, is_typeddict

import service_client.emulator as emulator_package
from service_client.emulator.ops import Operations
from service_client.emulator.store import Store


def _media_without_extra(name: str) -> None:
    """walk_packages could not import a package: only the media server may lack its extra."""
    if not name.startswith("service_client.emulator.media"):
        raise ImportError(name)


def _emulator_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(emulator_package.__path__, "service_client.emulator.", onerror=_media_without_extra):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            # the media server needs the voice extra (livekit, av, aiortc); its classes are
            # checked where that extra is installed
            if info.name.startswith("service_client.emulator.media") and exc.name not in (None, "service_client"):
                continue
            raise
        for _name, value in vars(module).items():
            if inspect.isclass(value) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("service_client")


def _exempt(cls: type) -> bool:
    return issubclass(cls, BaseException) or is_typeddict(cls) or Protocol in cls.__mro__


def test_no_class_of_the_emulator_chains_more_than_one_base_of_ours():
    classes = _emulator_classes()
    assert len(classes) > 40, "the walk found too few classes"
    deep = sorted(f"{cls.__module__}.{cls.__qualname__}: {[c.__name__ for c in cls.__mro__ if _ours(c)]}"
                  for cls in classes if not _exempt(cls) and sum(map(_ours, cls.__mro__)) > 2)
    assert deep == [], "compose these from parts instead of base classes"
    several = sorted(cls.__qualname__ for cls in classes if not _exempt(cls)
                     and sum(map(_ours, cls.__bases__)) > 1)
    assert several == [], "these combine several bases of ours"


def test_the_store_and_the_operations_only_hold_their_parts():
    store = Store()
    try:
        parts = {name for name, value in vars(store).items() if not name.startswith("_")}
        assert parts == {"db", "users", "servers", "members", "channels", "messages", "invites", "extras"}
        own = {name for name, value in vars(Store).items() if callable(value) and not name.startswith("__")}
        assert own <= {"reset", "dump", "close"}, "the façade grew methods of an entity: put them in a repository"
    finally:
        store.close()
    own_ops = {name for name, value in vars(Operations).items() if callable(value) and not name.startswith("__")}
    assert own_ops == set(), "Operations only holds its parts"


def test_route_groups_and_operation_parts_are_given_parts_not_the_whole_store():
    """Each REST route group and each part of the operations names the repositories and parts
    it uses in its constructor; none takes the Store or the Operations whole."""
    from service_client.emulator import rest_api

    groups = [cls for cls in _emulator_classes()
              if cls.__module__.startswith(("service_client.emulator.rest_", "service_client.emulator.ops_"))
              and "__init__" in vars(cls) and not _exempt(cls) and cls is not rest_api.RestApi]
    assert len(groups) >= 14, [g.__name__ for g in groups]
    for cls in groups:
        hints = inspect.signature(cls.__init__).parameters
        assert "store" not in hints and "ops" not in hints, f"{cls.__name__} takes the whole store or operations"
