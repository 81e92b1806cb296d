"""Typed commands as a bot author's mypy sees them: ``tests/typecheck/typed_commands.py`` (a
registered converter, a Converter subclass, typed commands, CommandArgumentError's attributes)
passes ``mypy --strict`` from a directory outside the checkout, so mypy reads the installed
package's types; a converter of the wrong shape is reported."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "typecheck" / "typed_commands.py"
#: A mypy cache of its own, so the second run of the suite takes a second or two.
MYPY_CACHE = ROOT / ".mypy_cache" / "typed-commands"


def _mypy(directory: pathlib.Path, *names: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTHONPATH", "MYPYPATH"))}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         "--cache-dir", str(MYPY_CACHE), *names],
        cwd=directory, env=env, capture_output=True, text=True, timeout=300,
    )


def test_mypy_accepts_typed_commands_and_refuses_a_converter_of_the_wrong_shape(tmp_path):
    shutil.copy(SCRIPT, tmp_path / "typed_commands.py")
    (tmp_path / "wrong_converter.py").write_text(
        "from service_client import Client, CommandDispatcher\n"
        "commands = CommandDispatcher(Client())\n"
        "\n"
        "@commands.converter(int)\n"
        "def takes_one(argument: str) -> int:\n"
        "    return int(argument)\n"
    )
    done = _mypy(tmp_path, "typed_commands.py", "wrong_converter.py")
    output = done.stdout + done.stderr
    assert "Cannot find implementation or library stub" not in output, output
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith("wrong_converter.py:4: error:"), output
    assert "[type-var]" in errors[0] or "[arg-type]" in errors[0], output
