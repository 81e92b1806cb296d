"""load_commands and Command (spec: loadCommands)."""

from __future__ import annotations

import os
import pickle
import re
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

from service_client import Permissions
from service_client.commands import Command, load_commands
from service_client.errors import CommandLoadWarning

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "commands"


def write(directory: Path, name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def simple(name: str, reply: str | None = None) -> str:
    """A module-level command named ``name`` whose execute returns ``reply`` (else the name)."""
    return (
        f"name = {name!r}\ndef execute(message, args):\n    return {reply or name!r}\n"
    )


def load_quietly(
    directory: Path | str, commands: dict[str, Command]
) -> dict[str, Command]:
    """Load and fail on any warning (the suite turns warnings into errors anyway)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return load_commands(directory, commands)


# --- Command ---------------------------------------------------------------


def test_command_fields_and_defaults() -> None:
    def run(message: Any, args: list[str]) -> str:
        return "ran"

    cmd = Command("ping", run)
    assert (cmd.name, cmd.execute, cmd.aliases, cmd.description, cmd.extra) == (
        "ping",
        run,
        (),
        "",
        {},
    )
    assert cmd.execute(None, []) == "ran"
    assert "ping" in repr(cmd)


def test_command_aliases_normalised() -> None:
    assert Command("help", print, aliases="h").aliases == ("h",)
    assert Command("help", print, aliases=["h", "?", "h"]).aliases == ("h", "?")
    assert Command("help", print, aliases=None).aliases == ()
    assert Command("help", print, aliases=iter(["x"])).aliases == ("x",)
    assert Command("help", print, description=None).description == ""


def test_command_extra_is_copied() -> None:
    source = {"category": "fun"}
    cmd = Command("ping", print, extra=source)
    source["category"] = "admin"
    assert cmd.extra == {"category": "fun"}


def test_command_matches_name_and_aliases() -> None:
    cmd = Command("help", print, aliases=("h",))
    assert cmd.matches("help") and cmd.matches("h")
    assert not cmd.matches("HELP") and not cmd.matches("x")


def test_command_is_immutable() -> None:
    cmd = Command("ping", print)
    with pytest.raises(AttributeError, match="immutable"):
        cmd.name = "pong"
    with pytest.raises(AttributeError, match="immutable"):
        del cmd.execute
    with pytest.raises(AttributeError):
        cmd.other = 1
    assert cmd.name == "ping"


def test_command_pickles_and_compares_by_identity() -> None:
    cmd = Command("ping", print, aliases=["p"], description="d", extra={"k": 1})
    copy = pickle.loads(pickle.dumps(cmd))
    assert (copy.name, copy.execute, copy.aliases, copy.description, copy.extra) == (
        "ping",
        print,
        ("p",),
        "d",
        {"k": 1},
    )
    assert copy != cmd and len({cmd, copy}) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "word"),
    [
        ({"name": 3, "execute": print}, TypeError, "name"),
        ({"name": "", "execute": print}, ValueError, "name"),
        ({"name": "x", "execute": "print"}, TypeError, "execute"),
        ({"name": "x", "execute": print, "aliases": 5}, TypeError, "aliases"),
        ({"name": "x", "execute": print, "aliases": ["a", 1]}, TypeError, "alias"),
        ({"name": "x", "execute": print, "aliases": [""]}, ValueError, "alias"),
        ({"name": "x", "execute": print, "description": 1}, TypeError, "description"),
        ({"name": "x", "execute": print, "extra": []}, TypeError, "extra"),
    ],
)
def test_command_rejects_bad_fields(
    kwargs: dict[str, Any], error: type, word: str
) -> None:
    with pytest.raises(error, match=word):
        Command(**kwargs)


def test_from_object_command_is_returned_as_is() -> None:
    cmd = Command("ping", print)
    assert Command.from_object(cmd) is cmd


def test_from_object_mapping_keeps_other_keys_in_extra() -> None:
    cmd = Command.from_object(
        {
            "name": "ban",
            "execute": print,
            "aliases": ["b"],
            "description": "Ban",
            "cooldown": 5,
            "requires": "BAN_MEMBERS",
            "category": "moderation",
        }
    )
    assert cmd is not None
    assert (cmd.name, cmd.execute, cmd.aliases, cmd.description) == (
        "ban",
        print,
        ("b",),
        "Ban",
    )
    assert (cmd.cooldown, cmd.requires) == (5.0, Permissions.BAN_MEMBERS)
    assert cmd.extra == {"category": "moderation"}


def test_from_object_plain_object_uses_bound_execute() -> None:
    class Ping:
        name = "ping"
        description = "Pong"
        aliases = ("p",)

        def execute(self, message: Any, args: list[str]) -> str:
            return f"pong from {type(self).__name__}"

    cmd = Command.from_object(Ping())
    assert cmd is not None
    assert (cmd.name, cmd.aliases, cmd.description) == ("ping", ("p",), "Pong")
    assert cmd.execute(None, []) == "pong from Ping"


@pytest.mark.parametrize(
    "obj",
    [
        None,
        "ping",
        {"execute": print},
        {"name": "x"},
        {"name": 1, "execute": print},
        {"name": "x", "execute": 1},
        object(),
        type("NoExec", (), {"name": "x"})(),
        type("BadName", (), {"name": 1, "execute": print})(),
    ],
)
def test_from_object_invalid_gives_none(obj: object) -> None:
    assert Command.from_object(obj) is None


def test_from_object_never_raises_on_a_raising_attribute() -> None:
    class Broken:
        @property
        def name(self) -> str:
            raise RuntimeError("boom")

        def execute(self) -> None:
            pass

    assert Command.from_object(Broken()) is None


# --- load_commands: valid files --------------------------------------------


def test_loads_every_accepted_shape(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a_command.py",
        """
        from service_client.commands import Command
        def run(message, args):
            return "a:" + " ".join(args)
        command = Command(name="a", execute=run, aliases=("aa",), description="A")
        """,
    )
    write(
        tmp_path,
        "b_mapping.py",
        """
        command = {"name": "b", "execute": lambda m, a: "b", "description": "B", "level": 2}
        """,
    )
    write(
        tmp_path,
        "c_object.py",
        """
        class C:
            name = "c"
            def execute(self, message, args):
                return "c"
        command = C()
        """,
    )
    write(
        tmp_path, "d_module.py", simple("d") + "\naliases = ['dd']\ndescription = 'D'\n"
    )
    commands: dict[str, Command] = {}
    result = load_quietly(tmp_path, commands)
    assert result is commands
    assert list(commands) == ["a", "b", "c", "d"]
    assert all(isinstance(cmd, Command) for cmd in commands.values())
    assert commands["a"].execute(None, ["x", "y"]) == "a:x y"
    assert commands["a"].aliases == ("aa",)
    assert commands["b"].extra == {"level": 2}
    assert commands["c"].execute(None, []) == "c"
    assert (commands["d"].execute(None, []), commands["d"].aliases) == ("d", ("dd",))
    assert commands["d"].description == "D"


def test_accepts_str_and_pathlike(tmp_path: Path) -> None:
    write(tmp_path, "ping.py", simple("ping"))
    assert list(load_quietly(str(tmp_path), {})) == ["ping"]
    assert list(load_quietly(tmp_path, {})) == ["ping"]


def test_relative_directory_is_resolved_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path / "cmds", "ping.py", "import os\nCWD = os.getcwd()\n" + simple("ping")
    )
    monkeypatch.chdir(tmp_path)
    cmd = load_quietly("cmds", {})["ping"]
    monkeypatch.chdir(tmp_path / "cmds")  # later cwd changes do not matter
    module = sys.modules[cmd.execute.__module__]
    assert module.__file__ == str(tmp_path / "cmds" / "ping.py")


def test_command_attribute_wins_over_module_name(tmp_path: Path) -> None:
    write(
        tmp_path,
        "both.py",
        simple("module_level") + "\ncommand = {'name': 'attr', 'execute': execute}\n",
    )
    assert list(load_quietly(tmp_path, {})) == ["attr"]


def test_sorted_order_and_side_effect_order(tmp_path: Path) -> None:
    order: list[str] = []
    sys.modules["_cmd_test_order"] = order  # type: ignore[assignment]
    try:
        for stem in ["zeta", "alpha", "Mid", "beta2", "beta10"]:
            write(
                tmp_path,
                f"{stem}.py",
                f"import sys\nsys.modules['_cmd_test_order'].append({stem!r})\n"
                + simple(stem),
            )
        commands = load_quietly(tmp_path, {})
    finally:
        del sys.modules["_cmd_test_order"]
    expected = sorted(["zeta", "alpha", "Mid", "beta2", "beta10"])
    assert order == expected
    assert list(commands) == expected


def test_nested_private_and_other_files_are_ignored(tmp_path: Path) -> None:
    write(tmp_path, "ping.py", simple("ping"))
    write(tmp_path / "sub", "nested.py", simple("nested"))
    write(tmp_path / "dir.py", "inner.py", simple("inner"))  # a directory named *.py
    write(tmp_path, "_private.py", simple("private"))
    write(tmp_path, "__init__.py", simple("init"))
    write(tmp_path, "notes.txt", simple("text"))
    write(tmp_path, "script.pyc", "")
    write(tmp_path, "broken.py.bak", "this is not python (")
    write(tmp_path, "upper.PY", simple("upper"))
    assert list(load_quietly(tmp_path, {})) == ["ping"]


def test_empty_directory_loads_nothing(tmp_path: Path) -> None:
    commands: dict[str, Command] = {}
    assert load_quietly(tmp_path, commands) is commands
    assert commands == {}


def test_each_file_is_its_own_module_and_same_stem_does_not_clash(
    tmp_path: Path,
) -> None:
    one = write(tmp_path / "one", "ping.py", "STATE = 'one'\n" + simple("ping", "one"))
    two = write(tmp_path / "two", "ping.py", "STATE = 'two'\n" + simple("pong", "two"))
    commands = load_quietly(tmp_path / "one", {})
    load_quietly(tmp_path / "two", commands)
    assert commands["ping"].execute(None, []) == "one"
    assert commands["pong"].execute(None, []) == "two"
    mod_one = sys.modules[commands["ping"].execute.__module__]
    mod_two = sys.modules[commands["pong"].execute.__module__]
    assert mod_one is not mod_two
    assert (mod_one.STATE, mod_two.STATE) == ("one", "two")
    assert os.path.samefile(str(mod_one.__file__), one)
    assert os.path.samefile(str(mod_two.__file__), two)
    assert "ping" not in sys.modules or sys.modules["ping"] not in (mod_one, mod_two)
    assert mod_one.__name__.startswith("service_client_commands.")


def test_loaded_module_objects_pickle_by_reference(tmp_path: Path) -> None:
    write(tmp_path, "ping.py", simple("ping"))
    cmd = load_quietly(tmp_path, {})["ping"]
    assert pickle.loads(pickle.dumps(cmd.execute)) is cmd.execute


def test_dataclass_in_a_command_file_works(tmp_path: Path) -> None:
    # dataclasses look the defining module up in sys.modules while the file runs
    write(
        tmp_path,
        "dc.py",
        """
        from __future__ import annotations
        import dataclasses
        from typing import ClassVar

        @dataclasses.dataclass
        class Settings:
            limit: ClassVar[int] = 3
            prefix: str = "!"

        name = "dc"
        def execute(message, args):
            return Settings().prefix
        """,
    )
    assert load_quietly(tmp_path, {})["dc"].execute(None, []) == "!"


# --- load_commands: bad files ----------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("x = 1\n", "no command"),
        ("def execute(m, a): pass\n", "no command"),
        ("name = 'only_name'\n", "no command"),
        ("name = 5\ndef execute(m, a): pass\n", "name must be a str"),
        ("name = ''\ndef execute(m, a): pass\n", "name must not be empty"),
        ("name = 'x'\nexecute = 'not callable'\n", "execute must be callable"),
        ("command = {'execute': print}\n", "no 'name' key"),
        ("command = {'name': 1, 'execute': print}\n", "name must be a str"),
        ("command = {'name': 'x', 'execute': None}\n", "execute must be callable"),
        ("command = None\n", "has no 'name'"),
        ("command = 42\n" + simple("fallback"), "is not a valid command"),
        (
            "command = {'name': 'x', 'execute': print, 'aliases': 3}\n",
            "aliases must be",
        ),
    ],
)
def test_invalid_file_is_skipped_with_warning(
    tmp_path: Path, source: str, reason: str
) -> None:
    write(tmp_path, "bad.py", source)
    write(tmp_path, "good.py", simple("good"))
    with pytest.warns(CommandLoadWarning, match=r"bad\.py") as record:
        commands = load_commands(tmp_path, dict[str, Command]())
    assert list(commands) == ["good"]
    assert len(record) == 1
    assert reason in str(record[0].message)
    assert "Skipped" in str(record[0].message)
    assert not [m for m in sys.modules if m.endswith("_bad") and "_commands." in m]


def test_file_raising_at_import_is_skipped_and_others_load(tmp_path: Path) -> None:
    write(tmp_path, "a.py", simple("a"))
    write(tmp_path, "boom.py", "x = 1\nraise RuntimeError('exploded on import')\n")
    write(tmp_path, "z.py", simple("z"))
    with pytest.warns(CommandLoadWarning, match=r"boom\.py") as record:
        commands = load_commands(tmp_path, dict[str, Command]())
    assert list(commands) == ["a", "z"]
    (warning,) = record
    assert "RuntimeError: exploded on import" in str(warning.message)
    assert warning.filename == str(tmp_path / "boom.py")
    assert warning.lineno == 2
    assert not [
        m
        for m in sys.modules
        if m.startswith("service_client_commands.") and m.endswith("_boom")
    ]


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("def execute(:\n", "SyntaxError"),
        ("import _no_such_module_for_commands_test\n", "ModuleNotFoundError"),
        ("import sys\nsys.exit(3)\n", "SystemExit"),
        (
            "name = 'x'\nexecute = lambda m, a: None\n\tbad_indent = 1\n",
            "IndentationError",
        ),
    ],
)
def test_failing_import_kinds_are_skipped(
    tmp_path: Path, source: str, kind: str
) -> None:
    write(tmp_path, "fails.py", source)
    write(tmp_path, "ok.py", simple("ok"))
    with pytest.warns(CommandLoadWarning, match=r"fails\.py") as record:
        commands = load_commands(tmp_path, dict[str, Command]())
    assert list(commands) == ["ok"]
    assert len(record) == 1 and kind in str(record[0].message)


def test_each_bad_file_gets_its_own_warning_every_call(tmp_path: Path) -> None:
    write(tmp_path, "bad1.py", "x = 1\n")
    write(tmp_path, "bad2.py", "raise ValueError('nope')\n")
    for _ in range(2):  # never deduplicated between calls
        with pytest.warns(CommandLoadWarning) as record:
            assert load_commands(tmp_path, dict[str, Command]()) == {}
        messages = [str(w.message) for w in record]
        assert len(messages) == 2
        assert "bad1.py" in messages[0] and "bad2.py" in messages[1]


def test_warning_is_an_error_under_error_filter(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", "x = 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CommandLoadWarning)
        with pytest.raises(CommandLoadWarning, match=r"bad\.py"):
            load_commands(tmp_path, {})


# --- duplicates and repeated calls -----------------------------------------


def test_duplicate_name_in_one_directory_later_file_wins(tmp_path: Path) -> None:
    write(tmp_path, "a_first.py", simple("ping", "first"))
    write(tmp_path, "b_second.py", simple("ping", "second"))
    with pytest.warns(CommandLoadWarning, match=r"b_second\.py.*'ping'") as record:
        commands = load_commands(tmp_path, dict[str, Command]())
    assert len(record) == 1 and "replaces" in str(record[0].message)
    assert list(commands) == ["ping"]
    assert commands["ping"].execute(None, []) == "second"


def test_repeated_calls_add_to_the_same_object(tmp_path: Path) -> None:
    write(tmp_path / "first", "ping.py", simple("ping"))
    write(tmp_path / "second", "echo.py", simple("echo"))
    commands: dict[str, Command] = {}
    assert load_quietly(tmp_path / "first", commands) is commands
    assert load_quietly(tmp_path / "second", commands) is commands
    assert sorted(commands) == ["echo", "ping"]


def test_duplicate_across_calls_replaces_with_warning(tmp_path: Path) -> None:
    write(tmp_path / "old", "ping.py", simple("ping", "old"))
    write(tmp_path / "new", "ping.py", simple("ping", "new"))
    commands = load_quietly(tmp_path / "old", {})
    with pytest.warns(CommandLoadWarning, match=r"ping\.py.*already loaded"):
        load_commands(tmp_path / "new", commands)
    assert commands["ping"].execute(None, []) == "new"


def test_reloading_a_directory_after_clear_reimports(tmp_path: Path) -> None:
    path = write(tmp_path, "ping.py", simple("ping", "v1"))
    commands = load_quietly(tmp_path, {})
    path.write_text(textwrap.dedent(simple("ping", "version-two")), encoding="utf-8")
    os.utime(
        path, (os.stat(path).st_atime, os.stat(path).st_mtime + 10)
    )  # defeat stale bytecode
    commands.clear()
    load_quietly(tmp_path, commands)
    assert commands["ping"].execute(None, []) == "version-two"


def test_existing_entries_of_other_names_are_kept(tmp_path: Path) -> None:
    write(tmp_path, "ping.py", simple("ping"))
    manual = Command("manual", print)
    commands = {"manual": manual}
    load_quietly(tmp_path, commands)
    assert commands["manual"] is manual and "ping" in commands


def test_dict_subclass_is_returned_as_is(tmp_path: Path) -> None:
    class Collection(dict[str, Command]):
        pass

    write(tmp_path, "ping.py", simple("ping"))
    commands = Collection()
    result = load_quietly(tmp_path, commands)
    assert result is commands and type(result) is Collection


def test_no_dispatch_execute_is_never_called(tmp_path: Path) -> None:
    write(
        tmp_path,
        "trap.py",
        """
        name = "trap"
        calls = []
        def execute(*args, **kwargs):
            calls.append(args)
            raise AssertionError("execute must not be called by the loader")
        """,
    )
    cmd = load_quietly(tmp_path, {})["trap"]
    assert sys.modules[cmd.execute.__module__].calls == []


# --- bad arguments ----------------------------------------------------------


def test_missing_directory_raises_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        load_commands(missing, {})
    with pytest.raises(FileNotFoundError, match="nope"):
        load_commands("nope", {})


def test_file_path_raises_not_a_directory(tmp_path: Path) -> None:
    path = write(tmp_path, "ping.py", simple("ping"))
    with pytest.raises(NotADirectoryError, match=re.escape(str(path))):
        load_commands(path, {})


@pytest.mark.parametrize("bad", [None, 3, b"/tmp", ["dir"]])
def test_non_path_directory_raises_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match="directory"):
        load_commands(bad, {})


def test_bytes_pathlike_raises_type_error() -> None:
    class BytesPath:
        def __fspath__(self) -> bytes:
            return b"/tmp"

    with pytest.raises(TypeError, match="directory"):
        load_commands(BytesPath(), {})  # type: ignore[arg-type]


def test_empty_directory_string_raises_value_error() -> None:
    with pytest.raises(ValueError, match="directory"):
        load_commands("", {})


@pytest.mark.parametrize("bad", [None, [], "commands", {"a"}])
def test_non_mapping_commands_raises_type_error(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(TypeError, match="commands"):
        load_commands(tmp_path, bad)


# --- the sample commands ----------------------------------------------------


class FakeContext:
    """Stands in for a CommandContext: ``reply(text)`` records the text."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    def reply(self, text: str) -> None:
        self.replies.append(text)


def test_samples_load_and_answer() -> None:
    commands = load_quietly(SAMPLES, {})
    assert sorted(commands) == ["echo", "ping"]
    assert commands["ping"].aliases == ("p",)
    assert all(cmd.description for cmd in commands.values())

    def run(word: str, *args: str) -> list[str]:
        ctx = FakeContext()
        (cmd,) = [c for c in commands.values() if c.matches(word)]
        cmd.execute(ctx, *args)
        return ctx.replies

    assert run("ping") == ["Pong!"]
    assert run("p") == ["Pong!"]
    assert run("echo", "hello", "world") == ["hello world"]
