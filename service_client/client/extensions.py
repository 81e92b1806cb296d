"""Cogs and extensions on :class:`~service_client.Client`: the methods, handed to an extensions part.

:class:`ClientExtensions` is a base of :class:`~service_client.Client`. Its
methods (``load_extension``, ``add_cog``, ``cogs``, ...) do no work of their
own: they call the client's *extension host*, the
:class:`~service_client.dispatcher.extensions.Extensions` part of the first
:class:`~service_client.CommandDispatcher` created for the client. The work
lives with the dispatcher because a cog's commands are the dispatcher's to
run, and the client, a layer below the dispatcher, does not know it: the
dispatcher hands its part to the client (:meth:`ClientExtensions._set_extension_host`),
and the client knows the part only through the :class:`ExtensionHost`
protocol declared here. Without a dispatcher, these methods raise
:class:`RuntimeError` saying to create one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..events.catalog import EVENT_NAMES

if TYPE_CHECKING:
    from ..commands.cog import Cog
    from ..events.emitter import EventEmitter

__all__ = ["ClientExtensions", "ExtensionHost"]

log = logging.getLogger("service_client.client")

_CogT = TypeVar("_CogT", bound="Cog")

#: Guards installing a client's extension host (rare: once per client).
_HOST_LOCK = threading.Lock()

_NO_HOST = (
    "this client has no CommandDispatcher, which runs cogs and extensions: create one first "
    "(commands = CommandDispatcher(client, prefix='!'))"
)


class ExtensionHost(Protocol):
    """What a client's cog and extension methods are handed to (an ``Extensions`` part)."""

    @property
    def cogs(self) -> Mapping[str, Cog]:
        """The added cogs by name (a read-only copy)."""

    @property
    def extensions(self) -> Mapping[str, ModuleType]:
        """The loaded extensions' modules by name (a read-only copy)."""

    def get_cog(self, name: str) -> Cog | None:
        """The added cog named ``name``, or None."""

    def add_cog(self, cog: _CogT, *, override: bool = False) -> _CogT:
        """Add a cog (see ``Client.add_cog``)."""

    def remove_cog(self, name: str) -> Cog | None:
        """Remove a cog (see ``Client.remove_cog``)."""

    def load_extension(self, name: str, *, package: str | None = None) -> None:
        """Load an extension (see ``Client.load_extension``)."""

    def unload_extension(self, name: str, *, package: str | None = None) -> None:
        """Unload an extension (see ``Client.unload_extension``)."""

    def reload_extension(self, name: str, *, package: str | None = None) -> None:
        """Reload an extension (see ``Client.reload_extension``)."""


class ClientExtensions:
    """The cogs and extensions of a :class:`~service_client.Client` (see the module docs).

    Thread-safe, like the client: each method may be called from any thread,
    a listener or a command included, while messages flow.
    """

    # Set by Client.__init__.
    _events: EventEmitter
    _custom_events: frozenset[str]

    #: The part that does the work; set once, by the first CommandDispatcher of the client.
    _extension_host: ExtensionHost | None = None

    def _host(self) -> ExtensionHost:
        host = self._extension_host
        if host is None:
            raise RuntimeError(_NO_HOST)
        return host

    # -- cogs -----------------------------------------------------------------------------------

    @property
    def cogs(self) -> Mapping[str, Cog]:
        """The cogs added to this client, by name (a read-only copy; empty without a dispatcher)."""
        host = self._extension_host
        return MappingProxyType({}) if host is None else host.cogs

    def get_cog(self, name: str) -> Cog | None:
        """The added cog named ``name`` (its ``qualified_name``), or None (also without a dispatcher)."""
        host = self._extension_host
        return None if host is None else host.get_cog(name)

    def add_cog(self, cog: _CogT, *, override: bool = False) -> _CogT:
        """Add a :class:`~service_client.Cog`: its commands, listeners and tasks, as one.

        In order: the cog's tasks are made (not started), :meth:`Cog.cog_load
        <service_client.Cog.cog_load>` is called, then its commands join the
        dispatcher's registry and its listeners the client. When any step
        fails, what was done is undone (tasks stopped, ``cog_unload`` called
        when ``cog_load`` had run) and the error is raised: nothing of the
        cog stays. Runs ``cog_load`` on the calling thread with no lock held,
        so it may be called from a listener or a command.

        Args:
            cog: The cog instance.
            override: Replace a cog of the same name (removed first) instead
                of refusing; when the new cog then fails, the old one stays
                removed.

        Returns:
            ``cog``.

        Raises:
            RuntimeError: The client has no :class:`~service_client.CommandDispatcher`.
            TypeError: ``cog`` is not a :class:`~service_client.Cog`; a
                command cannot be called from a message (as
                :meth:`CommandDispatcher.add <service_client.CommandDispatcher.add>`).
            ValueError: A cog of that name is added already (without
                ``override``) or is being added or removed on another thread;
                this instance is added already (here or to another client); a
                command name or alias is taken; a listener names an unknown event; a task's options are
                invalid.
            Exception: What ``cog_load`` raised.
        """
        return self._host().add_cog(cog, override=override)

    def remove_cog(self, name: str) -> Cog | None:
        """Remove the cog named ``name``: its commands, listeners and tasks, then call its ``cog_unload``.

        A command, listener or task run going on ends normally; none starts
        after this call returns. An exception of ``cog_unload`` is reported
        like a listener's (the ``error`` event, else the log) and the removal
        stands.

        Args:
            name: The cog's ``qualified_name``.

        Returns:
            The removed cog, or None when no cog has that name (also without a dispatcher).

        Raises:
            TypeError: ``name`` is not a str.
            ValueError: The cog is being added or removed on another thread.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str (the cog's qualified_name), not {type(name).__name__}")
        host = self._extension_host
        return None if host is None else host.remove_cog(name)

    # -- extensions ---------------------------------------------------------------------------

    @property
    def extensions(self) -> Mapping[str, ModuleType]:
        """The loaded extensions' modules, by name (a read-only copy; empty without a dispatcher)."""
        host = self._extension_host
        return MappingProxyType({}) if host is None else host.extensions

    def load_extension(self, name: str, *, package: str | None = None) -> None:
        """Import a module and call its ``setup(client)``, which adds its cogs (an *extension*).

        ::

            # bot/economy.py
            def setup(client):
                client.add_cog(Economy(client))

            def teardown(client):           # optional, called when unloaded
                ...

            client.load_extension("bot.economy")

        The module is imported afresh (not taken from :data:`sys.modules`)
        and kept in :data:`sys.modules` while loaded. When the import or
        ``setup`` fails, what ``setup`` added is removed again: its cogs
        (those it added, and those whose class is defined in the module or
        its submodules), and the commands and listeners whose function is
        defined there; ``teardown`` is called
        when the module has one; the module leaves :data:`sys.modules` (the
        modules of that name the program had imported before are put back); and
        :class:`~service_client.errors.ExtensionFailedError` names the
        extension, the original exception chained. ``setup`` runs on the
        calling thread with no lock held, so an extension may be loaded from
        a command or a listener while messages flow.

        Args:
            name: The module's dotted name (``"bot.economy"``), or a relative
                one (``".economy"``) with ``package``.
            package: The package a relative ``name`` is resolved in.

        Raises:
            RuntimeError: The client has no :class:`~service_client.CommandDispatcher`.
            TypeError: ``name`` is not a str.
            ExtensionNotFoundError: No module of that name.
            ExtensionAlreadyLoadedError: It is loaded already.
            ExtensionError: It is being loaded, unloaded or reloaded on another thread.
            NoEntryPointError: The module has no ``setup`` function (nothing kept).
            ExtensionFailedError: Importing it or its ``setup`` raised (nothing kept).
        """
        self._host().load_extension(name, package=package)

    def unload_extension(self, name: str, *, package: str | None = None) -> None:
        """Remove an extension: its cogs, the commands and listeners of its module, then call its ``teardown``.

        Always completes: an exception of a ``cog_unload`` or of
        ``teardown(client)`` is reported like a listener's (the ``error``
        event, else the log), not raised. The module and its submodules
        leave :data:`sys.modules`. Repeating tasks a ``setup`` started
        outside a cog are not known to the client: stop them in ``teardown``.

        Args:
            name: The extension's name, as loaded (or relative, with ``package``).
            package: The package a relative ``name`` is resolved in.

        Raises:
            RuntimeError: The client has no :class:`~service_client.CommandDispatcher`.
            TypeError: ``name`` is not a str.
            ExtensionNotLoadedError: It is not loaded.
            ExtensionError: It is being loaded, unloaded or reloaded on another thread.
        """
        self._host().unload_extension(name, package=package)

    def reload_extension(self, name: str, *, package: str | None = None) -> None:
        """Replace a loaded extension by its module's current code; on failure the old version stays loaded.

        The new code is imported first, while the old version runs on: an
        import error (a syntax error in the edited file) changes nothing.
        Then the old version is unloaded (as :meth:`unload_extension`) and
        the new ``setup(client)`` called. When it fails, what it added is
        removed and the old version's ``setup`` is called again, so the old
        cogs are back, and :class:`~service_client.errors.ExtensionFailedError`
        says so; in the unlikely case that the old ``setup`` fails too, the
        error says the extension is left unloaded. Between the old version's
        removal and the new ``setup``'s end, a message naming one of the
        extension's commands finds no command and is ignored like any
        unknown command.

        Args:
            name: The extension's name, as loaded (or relative, with ``package``).
            package: The package a relative ``name`` is resolved in.

        Raises:
            RuntimeError: The client has no :class:`~service_client.CommandDispatcher`.
            TypeError: ``name`` is not a str.
            ExtensionNotLoadedError: It is not loaded.
            ExtensionError: It is being loaded, unloaded or reloaded on another thread.
            ExtensionNotFoundError: Its module cannot be found any more (the old version stays).
            NoEntryPointError: The new code has no ``setup`` (the old version stays).
            ExtensionFailedError: Importing the new code or its ``setup`` raised
                (the text says which version is loaded now).
        """
        self._host().reload_extension(name, package=package)

    # -- the hook for the extensions part -------------------------------------------------------

    def _set_extension_host(self, host: ExtensionHost) -> bool:
        """Hand the cog and extension methods to ``host`` unless another has them; True when taken."""
        with _HOST_LOCK:
            if self._extension_host is not None:
                return False
            self._extension_host = host
            return True

    def _listeners_of_module(self, module: str) -> list[tuple[str, Callable[..., Any]]]:
        """``(event, listener)`` of every listener defined in ``module`` or one of its submodules."""
        found: list[tuple[str, Callable[..., Any]]] = []
        prefix = module + "."
        for event in (*EVENT_NAMES, *sorted(self._custom_events)):
            for listener in self._events.listeners(event):
                owner = getattr(listener, "__module__", None)
                if isinstance(owner, str) and (owner == module or owner.startswith(prefix)):
                    found.append((event, listener))
        return found

    def _report_extension_failure(self, label: str, fn: Callable[..., Any], exc: Exception, what: str) -> None:
        """Report what a cog's or extension's hook raised, as a listener's exception is reported."""
        self._events.report_failure(label, fn, exc, what=what)
