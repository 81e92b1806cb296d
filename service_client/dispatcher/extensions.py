"""Cogs and extensions: add, remove, load, unload and reload a bot's parts while it runs.

A :class:`~service_client.Cog` groups commands, listeners and repeating
tasks; an *extension* is a module with a ``setup(client)`` function that adds
its cogs (and an optional ``teardown(client)``)::

    # bot/economy.py
    from service_client import Cog

    class Economy(Cog):
        ...

    def setup(client):
        client.add_cog(Economy(client))

    # bot/main.py
    client = Client()
    commands = CommandDispatcher(client, prefix="!")
    client.load_extension("bot.economy")
    ...
    client.reload_extension("bot.economy")    # the edited file's new code, while the bot runs

Where the work lives: a cog's commands are run by a
:class:`~service_client.CommandDispatcher`, which sits a layer above the
client (the client never imports it). So each dispatcher has an
:class:`Extensions` part (``dispatcher.extensions``) that does the work, and
the first dispatcher of a client hands its part to the client; the client's
``load_extension``, ``add_cog``, ``cogs`` and the others call it. There is no
``Bot`` class: the client and its dispatcher together are the bot.

What belongs to an extension ``bot.economy``: the cogs its ``setup`` added
(on its own thread), the cogs whose class is defined in the module or one of
its submodules (``bot.economy.shop``), and the
commands and listeners whose function is defined there (a ``setup`` may add
them without a cog: ``client.on("ready", greet)``). Unloading removes all of
them, then calls ``teardown(client)``. Repeating tasks made outside a cog are
not known to the client: stop them in ``teardown``.

Thread-safety: every method may be called from any thread, from a command or
a listener included, while messages flow. No lock is held while user code
runs (the module's import, ``setup``, ``teardown``, ``cog_load``,
``cog_unload``); instead each extension name and cog name being worked on is
marked busy, and a second operation on the same name from another thread
meanwhile is refused (:class:`~service_client.errors.ExtensionError`, or
:class:`ValueError` for a cog) rather than waited for. Operations on other
names, a ``setup`` loading another extension included, go ahead.

When the client is destroyed, its extensions are unloaded and its cogs
removed by a ``client_close`` listener: ``teardown`` and ``cog_unload`` run
then on a worker thread, while ``destroy()`` waits for the ``client_close``
listeners (5 s at most), after the scheduled work was cancelled.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from ..commands import Command
from ..commands.cog import Cog
from ..errors import (
    ExtensionAlreadyLoadedError,
    ExtensionError,
    ExtensionFailedError,
    ExtensionNotFoundError,
    ExtensionNotLoadedError,
    NoEntryPointError,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..events.scheduler import RepeatingTask
    from .core import CommandDispatcher

__all__ = ["Extensions"]

_log = logging.getLogger("service_client.dispatcher")

_CogT = TypeVar("_CogT", bound=Cog)

#: The state a failed load leaves, and a failed reload before the old version was touched.
_NOT_LOADED = "it is not loaded"
_OLD_STAYS = "the old version stays loaded"


class _Added:
    """A cog while it is added: what was registered for it, to be undone at its removal."""

    __slots__ = ("cog", "commands", "extension", "gate", "listeners", "tasks")

    def __init__(self, cog: Cog, commands: tuple[Command, ...],
                 listeners: tuple[tuple[str, Callable[..., Any]], ...], tasks: dict[str, RepeatingTask],
                 gate: threading.Event) -> None:
        self.cog = cog
        self.gate = gate  # set while the cog's listeners may run
        self.commands = commands
        self.listeners = listeners
        self.tasks = tasks
        #: The extension whose setup() added the cog on its own thread, if any.
        self.extension: str | None = None


class _GatedListener:
    """A cog's listener as registered with the client: it calls the method only while the cog is added.

    The client hands each event to the listeners registered when it arrived; an event queued
    before the cog's removal would otherwise reach the method after ``remove_cog`` returned
    (after its ``cog_unload`` closed what the method uses). Name, module and docstring are the
    method's, so reports and ``client.listeners()`` show it.
    """

    def __init__(self, method: Callable[..., Any], gate: threading.Event) -> None:
        functools.update_wrapper(self, method)
        self._method = method
        self._gate = gate

    def __call__(self, *args: Any) -> Any:
        if self._gate.is_set():
            return self._method(*args)
        return None

    def __repr__(self) -> str:
        return f"<cog listener {self._method!r}>"


def _in_module(owner: object, name: str) -> bool:
    """Whether the module name ``owner`` is ``name`` or one of its submodules."""
    return isinstance(owner, str) and (owner == name or owner.startswith(name + "."))


class Extensions:
    """The cogs and extensions of one :class:`~service_client.CommandDispatcher` (``dispatcher.extensions``).

    Made by the dispatcher; the first dispatcher of a client hands it to the
    client, whose ``load_extension``, ``add_cog`` and other cog methods call
    it (see the module docs). A second dispatcher's part serves that
    dispatcher only: ``second.extensions.add_cog(cog)`` registers the cog's
    commands with it. Thread-safe (see the module docs).

    Args:
        dispatcher: The dispatcher whose registry receives the cogs' commands;
            its client receives their listeners and makes their tasks.

    Attributes:
        client: The dispatcher's client.
        installed: True when this part serves the client's cog methods.
    """

    def __init__(self, dispatcher: CommandDispatcher) -> None:
        self._dispatcher = dispatcher
        self.client: Client = dispatcher.client
        self._lock = threading.Lock()  # guards _cogs, _extensions, _busy_cogs, _busy_extensions, _watching
        self._cogs: dict[str, _Added] = {}
        self._extensions: dict[str, ModuleType] = {}
        self._busy_cogs: set[str] = set()
        self._busy_extensions: set[str] = set()
        self._watching = False  # the client_close listener is registered
        self._setting_up = threading.local()  # .name: the extension whose setup() runs on this thread
        install = getattr(self.client, "_set_extension_host", None)
        self.installed: bool = bool(callable(install) and install(self))

    # -- reading ----------------------------------------------------------------------------------

    @property
    def cogs(self) -> Mapping[str, Cog]:
        """The added cogs by name, in the order they were added (a read-only copy)."""
        with self._lock:
            return MappingProxyType({name: added.cog for name, added in self._cogs.items()})

    @property
    def extensions(self) -> Mapping[str, ModuleType]:
        """The loaded extensions' modules by name, in load order (a read-only copy)."""
        with self._lock:
            return MappingProxyType(dict(self._extensions))

    def get_cog(self, name: str) -> Cog | None:
        """The added cog named ``name`` (its ``qualified_name``), or None."""
        with self._lock:
            added = self._cogs.get(name)
        return None if added is None else added.cog

    # -- cogs ---------------------------------------------------------------------------------------

    def add_cog(self, cog: _CogT, *, override: bool = False) -> _CogT:
        """Add a cog: make its tasks, call ``cog_load``, then register its commands and listeners.

        All or nothing: when a step fails, the steps done are undone (its
        commands and listeners removed, its tasks stopped, ``cog_unload``
        called when ``cog_load`` had run) and the error is raised.

        Args:
            cog: The cog.
            override: Replace a cog of the same name (removed first, as by
                :meth:`remove_cog`) instead of refusing. When the new cog then
                fails, the old one stays removed.

        Returns:
            ``cog``.

        Raises:
            TypeError: ``cog`` is not a :class:`~service_client.Cog` instance or
                ``override`` not a bool; a command cannot be called from a
                message (see :meth:`CommandDispatcher.add
                <service_client.CommandDispatcher.add>`); a task option has the
                wrong type.
            ValueError: A cog of that name is added already (without
                ``override``) or busy on another thread; this very cog is
                added already, here or to another client; a command's name or
                alias is taken; a listener names an unknown event; a task
                option is out of range.
            Exception: What ``cog_load`` raised.
        """
        if isinstance(cog, type) and issubclass(cog, Cog):
            raise TypeError(f"cog must be a Cog instance, not the class: add_cog({cog.__name__}(...))")
        if not isinstance(cog, Cog):
            raise TypeError(f"cog must be a Cog (a subclass instance), not {type(cog).__name__}")
        if not isinstance(override, bool):
            raise TypeError(f"override must be a bool, not {type(override).__name__}")
        name = cog.qualified_name
        with self._lock:
            if name in self._busy_cogs:
                raise ValueError(f"the cog {name!r} is being added or removed on another thread")
            if any(added.cog is cog for added in self._cogs.values()):
                raise ValueError(f"this {name} cog is added already")
            old = self._cogs.get(name)
            if old is not None and not override:
                raise ValueError(
                    f"a cog named {name!r} is added already: remove_cog({name!r}) first, "
                    "or add_cog(cog, override=True)"
                )
            if not cog._cog_claim(self):
                raise ValueError(f"this {name} cog is added to another client (or dispatcher); remove it there first")
            if old is not None:
                del self._cogs[name]
            self._busy_cogs.add(name)
        added: _Added | None = None
        try:
            self._watch_close()
            if old is not None:
                self._eject(old)
            added = self._inject(cog)
            added.extension = getattr(self._setting_up, "name", None)
            with self._lock:
                self._cogs[name] = added
        finally:
            with self._lock:
                self._busy_cogs.discard(name)
            if added is None:
                cog._cog_release(self)
        return cog

    def remove_cog(self, name: str) -> Cog | None:
        """Remove the cog named ``name``: its listeners, commands and tasks, then call its ``cog_unload``.

        Runs of its commands, listeners and tasks going on end normally; none
        starts after this returns. What ``cog_unload`` raises is reported
        like a listener's exception (the client's ``error`` event, else the
        log), and the removal stands.

        Args:
            name: The cog's ``qualified_name``.

        Returns:
            The removed cog, or None when no cog has that name.

        Raises:
            TypeError: ``name`` is not a str.
            ValueError: The cog is being added or removed on another thread.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str (the cog's qualified_name), not {type(name).__name__}")
        with self._lock:
            if name in self._busy_cogs:
                raise ValueError(f"the cog {name!r} is being added or removed on another thread")
            added = self._cogs.pop(name, None)
            if added is None:
                return None
            self._busy_cogs.add(name)
        try:
            self._eject(added)
        finally:
            with self._lock:
                self._busy_cogs.discard(name)
        return added.cog

    def _inject(self, cog: Cog) -> _Added:
        """Make the tasks, call ``cog_load``, register commands and listeners; undo all on failure."""
        client = self.client
        tasks = cog._cog_make_tasks(lambda fn, options: client.every(**options)(fn))
        commands: list[Command] = []
        listeners: list[tuple[str, Callable[..., Any]]] = []
        gate = threading.Event()
        gate.set()
        loaded = False
        try:
            cog.cog_load()
            loaded = True
            for command in cog.get_commands():
                self._dispatcher.add(command)
                commands.append(command)
            for event, method in cog.get_listeners():
                listener = _GatedListener(method, gate)
                client.on(event, listener)  # type: ignore[call-overload]
                listeners.append((event, listener))
        except BaseException:
            gate.clear()
            self._undo(cog, commands, listeners, tasks, unload=loaded)
            raise
        return _Added(cog, tuple(commands), tuple(listeners), tasks, gate)

    def _eject(self, added: _Added) -> None:
        """Remove what ``added`` registered, then call ``cog_unload`` (its exception reported)."""
        added.gate.clear()  # events queued before now no longer reach the cog
        try:
            self._undo(added.cog, added.commands, added.listeners, added.tasks, unload=True)
        finally:
            added.cog._cog_release(self)

    def _undo(self, cog: Cog, commands: Any, listeners: Any, tasks: Mapping[str, RepeatingTask], *,
              unload: bool) -> None:
        for event, listener in listeners:
            try:
                self.client.off(event, listener)
            except Exception as exc:  # noqa: BLE001 - the rest is still undone
                self._report(f"cog {cog.qualified_name}", self.client.off, exc, "removing a listener")
        for command in commands:
            self._dispatcher.remove(command)
        for task in tasks.values():
            task.stop()
        if unload:
            try:
                cog.cog_unload()
            except Exception as exc:  # noqa: BLE001 - reported, the removal stands
                self._report(f"cog {cog.qualified_name}", cog.cog_unload, exc, "cog_unload")

    # -- extensions -------------------------------------------------------------------------------

    def load_extension(self, name: str, *, package: str | None = None) -> None:
        """Import the module ``name`` afresh and call its ``setup(client)``.

        See :meth:`Client.load_extension <service_client.Client.load_extension>`.

        Raises:
            TypeError: ``name`` is not a str.
            ExtensionNotFoundError: No module of that name.
            ExtensionAlreadyLoadedError: It is loaded already.
            ExtensionError: It is busy on another thread.
            NoEntryPointError: The module has no ``setup`` (nothing kept).
            ExtensionFailedError: The import or ``setup`` raised (nothing kept).

        A load that fails leaves :data:`sys.modules` as it found it: the modules of that name
        imported before (by the program itself) are the ones there again.
        """
        name = self._resolve(name, package)
        with self._lock:
            self._check_idle(name)
            if name in self._extensions:
                raise ExtensionAlreadyLoadedError(
                    f"extension {name!r} is loaded already; reload_extension({name!r}) loads its new code",
                    name=name,
                )
            self._busy_extensions.add(name)
        # What sys.modules held of the name before: a failed load puts it back, so a module the
        # program had imported (a typo naming one of its own modules, or a library's) keeps its
        # module objects instead of being evicted with its submodules.
        saved = _modules_of(name)
        try:
            self._watch_close()
            try:
                module = self._import(name, _NOT_LOADED)
                setup = self._entry_point(name, module, _NOT_LOADED)
            except BaseException:
                _forget_modules(name)
                sys.modules.update(saved)
                raise
            failure = self._run_setup(name, module, setup)
            if failure is not None:
                _forget_modules(name)
                sys.modules.update(saved)
                raise ExtensionFailedError(
                    f"extension {name!r}: setup(client) raised {type(failure).__name__}: {failure}; "
                    f"what it had added was removed and {_NOT_LOADED}",
                    name=name, original=failure,
                ) from failure
            with self._lock:
                self._extensions[name] = module
        finally:
            with self._lock:
                self._busy_extensions.discard(name)

    def unload_extension(self, name: str, *, package: str | None = None) -> None:
        """Remove an extension's cogs, commands and listeners, call its ``teardown``, forget its modules.

        See :meth:`Client.unload_extension <service_client.Client.unload_extension>`.

        Raises:
            TypeError: ``name`` is not a str.
            ExtensionNotLoadedError: It is not loaded.
            ExtensionError: It is busy on another thread.
        """
        name = self._resolve(name, package)
        with self._lock:
            self._check_idle(name)
            module = self._extensions.pop(name, None)
            if module is None:
                raise ExtensionNotLoadedError(f"extension {name!r} is not loaded", name=name)
            self._busy_extensions.add(name)
        try:
            self._remove_module(name, module)
            _forget_modules(name)
        finally:
            with self._lock:
                self._busy_extensions.discard(name)

    def reload_extension(self, name: str, *, package: str | None = None) -> None:
        """Swap a loaded extension for its module's current code; a failure keeps (or restores) the old one.

        See :meth:`Client.reload_extension <service_client.Client.reload_extension>`.

        Raises:
            TypeError: ``name`` is not a str.
            ExtensionNotLoadedError: It is not loaded.
            ExtensionError: It is busy on another thread.
            ExtensionNotFoundError: Its module is gone (the old version stays loaded).
            NoEntryPointError: The new code has no ``setup`` (the old version stays loaded).
            ExtensionFailedError: The new code's import or ``setup`` raised; the text says
                whether the old version is loaded again.
        """
        name = self._resolve(name, package)
        with self._lock:
            self._check_idle(name)
            old = self._extensions.get(name)
            if old is None:
                raise ExtensionNotLoadedError(f"extension {name!r} is not loaded; load_extension() it", name=name)
            self._busy_extensions.add(name)
        try:
            self._reload(name, old)
        finally:
            with self._lock:
                self._busy_extensions.discard(name)

    def _reload(self, name: str, old: ModuleType) -> None:
        # 1. The new code, imported while the old version runs on (its submodules afresh too).
        saved = _modules_of(name)
        _forget_modules(name)
        try:
            new = self._import(name, _OLD_STAYS)
            setup = self._entry_point(name, new, _OLD_STAYS)
        except BaseException:
            _forget_modules(name)
            sys.modules.update(saved)
            raise
        # 2. The swap: the old version out, the new one's setup.
        with self._lock:
            self._extensions.pop(name, None)
        self._remove_module(name, old)
        failure = self._run_setup(name, new, setup)
        if failure is None:
            with self._lock:
                self._extensions[name] = new
            return
        # 3. The new setup failed (what it added is removed): the old version again.
        _forget_modules(name)
        sys.modules.update(saved)
        old_setup = getattr(old, "setup", None)
        again = self._run_setup(name, old, old_setup) if callable(old_setup) else None
        if again is None:
            with self._lock:
                self._extensions[name] = old
            state = "the old version was set up again and is loaded"
        else:
            _forget_modules(name)
            state = (f"setting the old version up again raised {type(again).__name__}: {again} too, "
                     "so the extension is not loaded")
        raise ExtensionFailedError(
            f"extension {name!r}: the new setup(client) raised {type(failure).__name__}: {failure}; "
            f"what it had added was removed and {state}",
            name=name, original=failure,
        ) from failure

    # -- the steps ---------------------------------------------------------------------------------

    @staticmethod
    def _resolve(name: object, package: str | None) -> str:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str (a module's dotted name), not {type(name).__name__}")
        if package is not None and not isinstance(package, str):
            raise TypeError(f"package must be a str or None, not {type(package).__name__}")
        if not name.startswith("."):
            if not name:
                raise ExtensionNotFoundError("extension '': an extension's name must not be empty", name=name)
            return name
        try:
            return importlib.util.resolve_name(name, package)
        except (ImportError, ValueError) as exc:
            raise ExtensionNotFoundError(
                f"extension {name!r}: a relative name needs its package (package=...): {exc}", name=name
            ) from exc

    def _check_idle(self, name: str) -> None:
        """Refuse when ``name`` is busy (``_lock`` held)."""
        if name in self._busy_extensions:
            raise ExtensionError(
                f"extension {name!r} is being loaded, unloaded or reloaded on another thread; "
                "try again once that is done", name=name,
            )

    @staticmethod
    def _import(name: str, state: str) -> ModuleType:
        """The module ``name``, executed afresh and put in :data:`sys.modules`.

        Raises:
            ExtensionNotFoundError: No module of that name.
            ExtensionFailedError: Executing it (or its parent package) raised; it left ``sys.modules``.
        """
        importlib.invalidate_caches()  # files written since the folder was last read are found
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError as exc:
            raise ExtensionNotFoundError(f"extension {name!r} not found ({exc}); {state}", name=name) from exc
        except Exception as exc:  # noqa: BLE001 - a parent package failed to import
            raise ExtensionFailedError(
                f"extension {name!r}: importing its package raised {type(exc).__name__}: {exc}; {state}",
                name=name, original=exc,
            ) from exc
        if spec is None or spec.loader is None:
            raise ExtensionNotFoundError(
                f"extension {name!r} not found: no module of that name on sys.path; {state}", name=name
            )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        done = False
        try:
            spec.loader.exec_module(module)
            done = True
        except Exception as exc:
            raise ExtensionFailedError(
                f"extension {name!r}: importing it raised {type(exc).__name__}: {exc}; {state}",
                name=name, original=exc,
            ) from exc
        finally:
            if not done and sys.modules.get(name) is module:
                del sys.modules[name]
        return module

    @staticmethod
    def _entry_point(name: str, module: ModuleType, state: str) -> Callable[[Any], object]:
        setup = getattr(module, "setup", None)
        if not callable(setup):
            raise NoEntryPointError(
                f"extension {name!r} has no setup(client) function, which adds its cogs; {state}", name=name
            )
        return setup  # type: ignore[no-any-return]

    def _run_setup(self, name: str, module: ModuleType, setup: Callable[[Any], object]) -> Exception | None:
        """Call ``setup(client)``; when it raises, remove what it added and return the exception."""
        outer = getattr(self._setting_up, "name", None)  # a setup() that loads another extension
        self._setting_up.name = name
        try:
            setup(self.client)
        except Exception as exc:  # noqa: BLE001 - returned to the caller, which raises it chained
            self._setting_up.name = outer
            self._remove_module(name, module)
            return exc
        finally:
            self._setting_up.name = outer
        return None

    def _remove_module(self, name: str, module: ModuleType) -> None:
        """Remove the cogs, commands and listeners of ``name``'s modules, then call its ``teardown``."""
        with self._lock:
            cogs = [cog_name for cog_name, added in self._cogs.items()
                    if (added.extension == name or _in_module(type(added.cog).__module__, name))
                    and cog_name not in self._busy_cogs]
            taken = [self._cogs.pop(cog_name) for cog_name in cogs]
            self._busy_cogs.update(cogs)
        try:
            for added in reversed(taken):
                self._eject(added)
        finally:
            with self._lock:
                self._busy_cogs.difference_update(cogs)
        listeners_of = getattr(self.client, "_listeners_of_module", None)
        if callable(listeners_of):
            for event, listener in listeners_of(name):
                self.client.off(event, listener)
        for command in list(self._dispatcher.commands.values()):
            if isinstance(command, Command) and _in_module(getattr(command.execute, "__module__", None), name):
                self._dispatcher.remove(command)
        teardown = getattr(module, "teardown", None)
        if callable(teardown):
            try:
                teardown(self.client)
            except Exception as exc:  # noqa: BLE001 - reported, the unload stands
                self._report(f"extension {name}", teardown, exc, "teardown")

    # -- shutdown and reports -----------------------------------------------------------------------

    def _watch_close(self) -> None:
        """Register the ``client_close`` listener that unloads everything, once."""
        with self._lock:
            if self._watching:
                return
            self._watching = True
        self.client.on("client_close", self._on_client_close)

    def _on_client_close(self) -> None:
        """At ``destroy()``: unload every extension (last loaded first), then remove the other cogs."""
        for name in reversed(list(self.extensions)):
            try:
                self.unload_extension(name)
            except ExtensionError:  # busy on another thread, or unloaded meanwhile
                _log.warning("extension %r was not unloaded at destroy(): it was busy", name)
        for name in reversed(list(self.cogs)):
            try:
                self.remove_cog(name)
            except ValueError:
                _log.warning("cog %r was not removed at destroy(): it was busy", name)

    def _report(self, label: str, fn: Callable[..., Any], exc: Exception, what: str) -> None:
        report = getattr(self.client, "_report_extension_failure", None)
        if callable(report):
            try:
                report(label, fn, exc, what)
                return
            except Exception:  # noqa: BLE001 - the log below is the last resort
                pass
        _log.error("%s: %s raised", label, what, exc_info=exc)

    def __repr__(self) -> str:
        with self._lock:
            return f"<Extensions cogs={list(self._cogs)} extensions={list(self._extensions)}>"


def _modules_snapshot() -> dict[str, ModuleType]:
    """A copy of :data:`sys.modules`, taken while no other thread can change it.

    Other threads import and forget modules meanwhile (another extension's load or unload).
    ``dict.copy()`` runs no Python code, so no thread switch can happen during it; iterating
    ``sys.modules`` itself (``list(sys.modules.items())`` included: each item is a new tuple,
    whose allocation may run the garbage collector and its callbacks) may let another thread
    change it, and the iteration raise ``RuntimeError: dictionary changed size during iteration``.
    """
    return sys.modules.copy()


def _modules_of(name: str) -> dict[str, ModuleType]:
    """The modules ``name`` and its submodules now in :data:`sys.modules`, by name."""
    return {key: mod for key, mod in _modules_snapshot().items() if _in_module(key, name)}


def _forget_modules(name: str) -> None:
    """Take the module ``name`` and its submodules out of :data:`sys.modules`."""
    for key in _modules_of(name):
        sys.modules.pop(key, None)
