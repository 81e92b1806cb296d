"""Cogs: a class that groups a bot's commands, listeners and repeating tasks.

A :class:`Cog` is a class whose methods are marked as commands
(:meth:`Cog.command`), event listeners (:meth:`Cog.listener`) and repeating
tasks (:meth:`Cog.every`)::

    from service_client import Cog, Member

    class Economy(Cog):
        \"\"\"Coins, a daily reward and an hourly leaderboard.\"\"\"

        def __init__(self, client, store):
            self.client = client
            self.store = store

        @Cog.command(aliases=["bal"])
        def balance(self, ctx, member: Member | None = None):
            \"\"\"Show a balance.\"\"\"
            who = member or ctx.author
            ctx.reply(f"{who.display_name} has {self.store.balance(who.id)} coins")

        @Cog.listener()
        def on_guild_member_add(self, member):
            self.store.open_account(member.id)

        @Cog.every(hours=1, start_on_ready=True)   # started when the client is ready
        def leaderboard(self):
            self.client.send_message(self.store.channel_id, self.store.top_ten())

    client.add_cog(Economy(client, store))

Like a :class:`~service_client.Command`, a cog only describes: this module
runs nothing and knows no client. Adding the cog to a client
(``client.add_cog``, or an extension's ``setup(client)``; see
:mod:`service_client.dispatcher.extensions`) registers its commands with the
client's :class:`~service_client.CommandDispatcher`, its listeners with the
client, and makes its tasks on the client's scheduler; removing it undoes all
three. The marks are read once, when the class is created, from the class
and its bases (a subclass may override a marked method with a plain one,
which unmarks it).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from ..permissions import Permissions
from .record import CHECKS_ATTRIBUTE, Check, Command

if TYPE_CHECKING:  # pragma: no cover
    from ..events.scheduler import RepeatingTask

__all__ = ["Cog", "CogTask"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: The attribute under which :meth:`Cog.command` keeps a method's command options.
_COMMAND_ATTRIBUTE = "__cog_command__"
#: The attribute under which :meth:`Cog.listener` keeps the events a method listens to.
_LISTENER_ATTRIBUTE = "__cog_listener__"

#: Guards building a cog instance's records once (rare: at the first add or read).
_BUILD_LOCK = threading.Lock()


class _CommandOptions:
    """What :meth:`Cog.command` was given, checked when the class body ran."""

    __slots__ = ("aliases", "checks", "cooldown", "description", "hidden", "name", "requires")

    def __init__(self, template: Command, checks: tuple[Check, ...]) -> None:
        self.name = template.name
        self.aliases = template.aliases
        self.description = template.description
        self.requires = template.requires
        self.cooldown = template.cooldown
        self.hidden = template.hidden
        self.checks = checks  # those of checks=; the check decorators' stay on the function


class CogTask:
    """A repeating task declared in a cog class, made by :meth:`Cog.every`.

    On the class, the attribute is this declaration. On a cog added to a
    client, the same attribute is the cog's own
    :class:`~service_client.RepeatingTask` (``self.leaderboard.start()``,
    ``.stop()``, ``.is_running()``, ...), made by the client's
    :meth:`~service_client.Client.every` with the options given here and the
    method bound to the cog. Before the cog is added, reading it raises
    :class:`AttributeError` saying so. Immutable.

    Attributes:
        function: The decorated method (unbound).
        options: The keyword arguments for :meth:`~service_client.Client.every`.
        name: The attribute's name in the class.
    """

    __slots__ = ("function", "name", "options")

    function: Callable[..., Any]
    options: Mapping[str, Any]
    name: str

    def __init__(self, function: Callable[..., Any], options: Mapping[str, Any]) -> None:
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "options", dict(options))
        object.__setattr__(self, "name", getattr(function, "__name__", "task"))

    def __set_name__(self, owner: type, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"CogTask is immutable; cannot set {attr!r}")

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> CogTask:
        """Read on the class: the declaration."""

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> RepeatingTask:
        """Read on a cog: its task (a cog added to a client has one in its own attributes)."""

    def __get__(self, instance: object | None, owner: type | None = None) -> CogTask | RepeatingTask:
        if instance is None:
            return self
        shown = getattr(instance, "qualified_name", type(instance).__name__)
        raise AttributeError(
            f"the task {self.name!r} of the cog {shown!r} exists once the cog is added to a client "
            "(client.add_cog, or an extension's setup); start it in cog_load()"
        )

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<CogTask {self.name} every({shown})>"


class Cog:
    """A group of commands, listeners and repeating tasks, added to and removed from a client as one.

    Subclass it; mark methods with :meth:`command`, :meth:`listener` and
    :meth:`every` (see the module's example). The class keywords name the cog
    and describe it: ``class Economy(Cog, name="Money", description="...")``;
    by default the name is the class's and the description its docstring.

    While the cog is added to a client (``client.add_cog(cog)``):

    - each command method is a :class:`~service_client.Command` of the client's
      :class:`~service_client.CommandDispatcher`, called with the context
      after ``self``: ``balance(self, ctx, member: Member)``; when the cog
      overrides :meth:`cog_check`, it runs before each of its commands'
      own checks;
    - each listener method is a listener of its event on the client;
    - each task is a :class:`~service_client.RepeatingTask`, read as the
      attribute of the cog (``self.leaderboard.start()``); it does not start
      by itself: start it in :meth:`cog_load` or later.

    Removing the cog (``client.remove_cog("Economy")``, or unloading its
    extension) removes its commands and listeners, stops its tasks (a run
    going on ends normally), then calls :meth:`cog_unload`. An instance may be
    added to one client at a time. The class is not thread-safe by itself;
    the client's ``add_cog`` and ``remove_cog`` are.
    """

    __cog_name__: ClassVar[str] = "Cog"
    __cog_description__: ClassVar[str] = ""
    #: Attribute name -> command options, from the class and its bases.
    __cog_commands__: ClassVar[Mapping[str, _CommandOptions]] = {}
    #: Attribute name -> the events the method listens to.
    __cog_listeners__: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: Attribute name -> task declaration.
    __cog_tasks__: ClassVar[Mapping[str, CogTask]] = {}

    def __init_subclass__(cls, *, name: str | None = None, description: str | None = None, **kwargs: Any) -> None:
        """Read the marks of the class body and its bases; ``name`` and ``description`` are the class keywords.

        Raises:
            TypeError: ``name`` or ``description`` is not a str.
            ValueError: ``name`` is empty or holds whitespace.
        """
        super().__init_subclass__(**kwargs)
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"a cog's name must be a str, not {type(name).__name__}")
            if not name or any(ch.isspace() for ch in name):
                raise ValueError(f"a cog's name must be non-empty text without whitespace, got {name!r}")
            cls.__cog_name__ = name
        else:
            cls.__cog_name__ = cls.__name__
        if description is not None:
            if not isinstance(description, str):
                raise TypeError(f"a cog's description must be a str, not {type(description).__name__}")
            cls.__cog_description__ = description
        else:
            doc = cls.__dict__.get("__doc__")
            cls.__cog_description__ = inspect.cleandoc(doc) if isinstance(doc, str) else ""
        commands: dict[str, _CommandOptions] = {}
        listeners: dict[str, tuple[str, ...]] = {}
        tasks: dict[str, CogTask] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                if attr.startswith("__") and attr.endswith("__"):
                    continue
                commands.pop(attr, None)
                listeners.pop(attr, None)
                tasks.pop(attr, None)
                if isinstance(value, CogTask):
                    tasks[attr] = value
                    continue
                target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                options = getattr(target, _COMMAND_ATTRIBUTE, None) if callable(target) else None
                if isinstance(options, _CommandOptions):
                    commands[attr] = options
                events = getattr(target, _LISTENER_ATTRIBUTE, None) if callable(target) else None
                if isinstance(events, list) and events:
                    listeners[attr] = tuple(events)
        cls.__cog_commands__ = commands
        cls.__cog_listeners__ = listeners
        cls.__cog_tasks__ = tasks

    # -- the marks -----------------------------------------------------------------------------

    @overload
    @staticmethod
    def command(name: _F, /) -> _F:
        """Bare decorator form: the method is a command under its own name."""

    @overload
    @staticmethod
    def command(
        name: str | None = None,
        *,
        aliases: str | Iterable[str] | None = (),
        description: str | None = None,
        requires: Permissions | str | int | Iterable[Permissions | str | int] | None = None,
        cooldown: float | None = None,
        checks: Check | Callable[[Any], object] | Iterable[Check | Callable[[Any], object]] | None = None,
        hidden: bool = False,
    ) -> Callable[[_F], _F]:
        """Decorator factory form: ``@Cog.command("name", ...)``."""

    @staticmethod
    def command(
        name: Any = None,
        *,
        aliases: str | Iterable[str] | None = (),
        description: str | None = None,
        requires: Permissions | str | int | Iterable[Permissions | str | int] | None = None,
        cooldown: float | None = None,
        checks: Check | Callable[[Any], object] | Iterable[Check | Callable[[Any], object]] | None = None,
        hidden: bool = False,
    ) -> Any:
        """Decorator: mark a cog method as a command, ``method(self, ctx, *args)``.

        The options are those of
        :meth:`CommandDispatcher.command <service_client.CommandDispatcher.command>`,
        checked here, when the class body runs; the method is returned
        unchanged (a test may call it directly). Check decorators
        (:func:`~service_client.has_role`, ...) go below this one. The command
        exists while the cog is added to a client.

        Args:
            name: The command's name; default the method's name. (With the
                bare form ``@Cog.command``, this is the method itself.)
            aliases: Other names.
            description: One line for the help; default the first line of the
                method's docstring.
            requires: Permissions the author must hold in the server.
            cooldown: Seconds between two runs by one user.
            checks: Conditions on running it (:class:`~service_client.Check`
                objects or predicates ``predicate(ctx) -> bool``).
            hidden: Leave it out of the help's list of commands.

        Returns:
            A decorator returning the method unchanged (the bare form: the method).

        Raises:
            TypeError, ValueError: An option is invalid (as for
                :class:`~service_client.Command`), or the decorated object is
                not a function (write ``@Cog.command()`` above ``@Cog.every``?
                a task cannot be a command).
        """

        def decorator(fn: _F) -> _F:
            """Check the options and mark ``fn`` as a command."""
            if isinstance(fn, CogTask) or not callable(fn):
                raise TypeError(f"@Cog.command() marks a method, not {type(fn).__name__}")
            text = description
            if text is None:
                doc = (getattr(fn, "__doc__", None) or "").strip()
                text = doc.splitlines()[0].strip() if doc else ""
            template = Command(
                name if name is not None else getattr(fn, "__name__", ""),
                fn,
                aliases=aliases,
                description=text,
                requires=requires,
                cooldown=cooldown,
                checks=checks,
                hidden=hidden,
            )
            attached = getattr(fn, CHECKS_ATTRIBUTE, ())
            explicit = template.checks[: len(template.checks) - len(attached)] if attached else template.checks
            try:
                setattr(fn, _COMMAND_ATTRIBUTE, _CommandOptions(template, explicit))
            except (AttributeError, TypeError):
                raise TypeError(f"cannot mark {type(fn).__name__} as a cog command: write a method") from None
            return fn

        if callable(name) and not isinstance(name, str):  # bare @Cog.command: name is the method
            fn, name = name, None
            return decorator(fn)
        return decorator

    @overload
    @staticmethod
    def listener(name: _F, /) -> _F:
        """Bare decorator form: the event is the method's name, without ``on_``."""

    @overload
    @staticmethod
    def listener(name: str | None = None) -> Callable[[_F], _F]:
        """Decorator factory form: ``@Cog.listener("message_create")``."""

    @staticmethod
    def listener(name: Any = None) -> Any:
        """Decorator: mark a cog method as a listener of a client event.

        The event is ``name``, else the method's name without a leading
        ``on_``: ``def on_message_create(self, message)`` listens to
        ``message_create``. Several listener marks on one method listen to
        several events. The name is checked against the client's events when
        the cog is added (an unknown one makes ``add_cog`` raise
        :class:`ValueError`, nothing added). The listener runs like any other:
        on the client's worker pool, its exceptions reported as a listener's.
        The method is returned unchanged.

        Args:
            name: The event (``"message_create"``, or a custom event the client
                registered); None takes it from the method's name. (With the
                bare form ``@Cog.listener``, this is the method itself.)

        Returns:
            A decorator returning the method unchanged (the bare form: the method).

        Raises:
            TypeError: ``name`` is not a str, or the decorated object is not a function.
            ValueError: ``name`` is empty, or the event taken from the method's name is.
        """
        if name is not None and not isinstance(name, str) and not callable(name):
            raise TypeError(f"the event name must be a str, not {type(name).__name__}")
        if isinstance(name, str) and not name:
            raise ValueError("the event name must not be empty")

        def decorator(fn: _F) -> _F:
            """Mark ``fn`` as a listener of the event."""
            if isinstance(fn, CogTask) or not callable(fn):
                raise TypeError(f"@Cog.listener() marks a method, not {type(fn).__name__}")
            event = name
            if event is None:
                own = getattr(fn, "__name__", "")
                event = own[3:] if own.startswith("on_") else own
                if not event:
                    raise ValueError(f"cannot take an event name from the method name {own!r}; pass it")
            events = getattr(fn, _LISTENER_ATTRIBUTE, None)
            events = events if isinstance(events, list) else []
            if event not in events:
                events.append(event)
            try:
                setattr(fn, _LISTENER_ATTRIBUTE, events)
            except (AttributeError, TypeError):
                raise TypeError(f"cannot mark {type(fn).__name__} as a cog listener: write a method") from None
            return fn

        if callable(name) and not isinstance(name, str):  # bare @Cog.listener
            fn, name = name, None
            return decorator(fn)
        return decorator

    @staticmethod
    def every(
        *, seconds: float = 0, minutes: float = 0, hours: float = 0, count: int | None = None, **options: Any
    ) -> Callable[[Callable[..., Any]], CogTask]:
        """Decorator: declare a cog method as a repeating task (a :class:`CogTask`).

        When the cog is added, the client's :meth:`~service_client.Client.every`
        is called with these options and the method bound to the cog; the
        :class:`~service_client.RepeatingTask` it makes is the cog's attribute
        of the same name until the cog is added again. With
        ``start_on_ready=True`` it starts by itself when the client becomes
        ready, or at once when the cog is added to a ready client (loaded or
        reloaded while the bot runs); else call ``self.<name>.start()`` in
        :meth:`cog_load` or later. Removing the cog stops it. Options other
        than those named here are passed on to
        :meth:`~service_client.Client.every` as given.

        Args:
            seconds, minutes, hours: The interval, added up.
            count: Stop after this many runs; None runs until stopped.
            **options: More options of :meth:`~service_client.Client.every`.

        Returns:
            The decorator, which returns a :class:`CogTask`.

        Raises:
            TypeError: The decorated object is not a function (a task cannot
                also be a command or a listener). The options are checked when
                the cog is added: ``add_cog`` raises what ``client.every``
                raises for them, nothing added.
        """
        given: dict[str, Any] = dict(options)
        for key, value, default in (("seconds", seconds, 0), ("minutes", minutes, 0), ("hours", hours, 0),
                                    ("count", count, None)):
            if value is not default and value != default:
                given[key] = value

        def decorator(fn: Callable[..., Any]) -> CogTask:
            """Wrap ``fn`` in a :class:`CogTask`."""
            if isinstance(fn, CogTask) or not inspect.isfunction(fn):
                raise TypeError(f"@Cog.every() declares a task from a method, not {type(fn).__name__}")
            if getattr(fn, _COMMAND_ATTRIBUTE, None) is not None or getattr(fn, _LISTENER_ATTRIBUTE, None):
                raise TypeError(f"{fn.__name__!r} is a command or a listener already; a task is a method of its own")
            return CogTask(fn, given)

        return decorator

    # -- what the cog is -------------------------------------------------------------------------

    @property
    def qualified_name(self) -> str:
        """The cog's name (the class keyword ``name``, else the class's name): ``client.get_cog`` finds it."""
        return type(self).__cog_name__

    @property
    def description(self) -> str:
        """The cog's description (the class keyword ``description``, else its docstring, else ``""``)."""
        return type(self).__cog_description__

    def get_commands(self) -> list[Command]:
        """The cog's commands, bound to this cog, in the order of the class body.

        The same :class:`~service_client.Command` objects every call, whether
        the cog is added to a client or not; added, they are in the
        dispatcher's registry.

        Raises:
            TypeError, ValueError: A command of a subclass's ``cog_check`` could
                not be made (as for :class:`~service_client.Command`).
        """
        return list(self._cog_records()[0])

    def get_listeners(self) -> list[tuple[str, Callable[..., Any]]]:
        """``(event, bound method)`` of each of the cog's listeners; the same objects every call.

        Added to a client, each is registered wrapped: the wrapper (its name,
        module and ``__wrapped__`` those of the method) calls the method only
        while the cog is added, so an event that arrived before the cog's
        removal and was still waiting for the worker pool does not reach it.
        """
        return list(self._cog_records()[1])

    def get_tasks(self) -> dict[str, RepeatingTask]:
        """The cog's tasks by attribute name, as made when it was last added; ``{}`` before."""
        tasks = self.__dict__.get("_Cog__tasks")
        return dict(tasks) if isinstance(tasks, dict) else {}

    # -- hooks ----------------------------------------------------------------------------------

    def cog_load(self) -> None:
        """Called when the cog is added, after its tasks were made, before its commands and listeners exist.

        Start tasks here. An exception aborts the add: nothing of the cog
        stays (its tasks are stopped) and ``add_cog`` raises it. Runs on the
        thread that adds the cog, with no lock of the library held.
        """

    def cog_unload(self) -> None:
        """Called when the cog is removed, after its commands, listeners and tasks are gone.

        Release what :meth:`cog_load` took. An exception here is reported
        like a listener's (the ``error`` event, else the log) and the removal
        stands. Runs on the thread that removes the cog (at
        ``client.destroy()``, a worker thread while ``destroy()`` waits), with
        no lock of the library held.
        """

    def cog_check(self, ctx: Any) -> bool:
        """A check every command of the cog runs first (override it; the default allows all).

        Like a :class:`~service_client.Check` predicate: return False to
        refuse (a :class:`~service_client.errors.CheckFailure`), or raise a
        :class:`~service_client.errors.CommandError` with your own text.

        Args:
            ctx: The :class:`~service_client.CommandContext` of the invocation.
        """
        return True

    # -- internals --------------------------------------------------------------------------------

    def _cog_records(self) -> tuple[tuple[Command, ...], tuple[tuple[str, Callable[..., Any]], ...]]:
        """The cog's commands and listeners, built once per instance (identity matters to ``off``)."""
        built = self.__dict__.get("_Cog__records")
        if built is not None:
            return built  # type: ignore[no-any-return]
        cls = type(self)
        first: tuple[Check, ...] = ()
        if cls.cog_check is not Cog.cog_check:
            first = (Check(self.cog_check, description=None),)
        commands = tuple(
            Command(
                options.name,
                getattr(self, attr),
                aliases=options.aliases,
                description=options.description,
                requires=options.requires,
                cooldown=options.cooldown,
                checks=first + options.checks,
                hidden=options.hidden,
            )
            for attr, options in cls.__cog_commands__.items()
        )
        listeners = tuple(
            (event, getattr(self, attr)) for attr, events in cls.__cog_listeners__.items() for event in events
        )
        with _BUILD_LOCK:
            return self.__dict__.setdefault("_Cog__records", (commands, listeners))  # type: ignore[no-any-return]

    def _cog_claim(self, owner: object) -> bool:
        """Mark the cog as added by ``owner`` unless another owner has it; True when marked (or already ``owner``'s).

        For the extensions part that adds the cog: one cog instance serves one client at a time.
        """
        with _BUILD_LOCK:
            current = self.__dict__.get("_Cog__owner")
            if current is not None and current is not owner:
                return False
            self.__dict__["_Cog__owner"] = owner
            return True

    def _cog_release(self, owner: object) -> None:
        """Clear the mark of :meth:`_cog_claim` when ``owner`` holds it."""
        with _BUILD_LOCK:
            if self.__dict__.get("_Cog__owner") is owner:
                del self.__dict__["_Cog__owner"]

    def _cog_make_tasks(self, make: Callable[[Callable[..., Any], Mapping[str, Any]], RepeatingTask]) -> dict[str, RepeatingTask]:
        """Make the cog's tasks with ``make(bound method, options)`` and set them as its attributes.

        For the extensions part that adds the cog. All or nothing: when one
        cannot be made, the attributes are left as they were and the error raised.
        """
        made = {attr: make(task.function.__get__(self, type(self)), task.options)
                for attr, task in type(self).__cog_tasks__.items()}
        for attr, task in made.items():
            self.__dict__[attr] = task
        self.__dict__["_Cog__tasks"] = made
        return dict(made)

    def __repr__(self) -> str:
        cls = type(self)
        return (f"<Cog {self.qualified_name} commands={len(cls.__cog_commands__)} "
                f"listeners={len(cls.__cog_listeners__)} tasks={len(cls.__cog_tasks__)}>")
