"""``bot_world.emulator`` and the records it returns are typed as a bot author's mypy sees them:
``tests/typecheck/world_typing.py`` passes ``mypy --strict`` but for the lines marked ``# error:
<code>`` (a misspelt record key or method, a record value used as another type), each reported.
Checked from a directory outside the checkout, so mypy reads the installed package's types."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "typecheck" / "world_typing.py"
#: A mypy cache of its own, so later runs of the suite take a few seconds.
MYPY_CACHE = ROOT / ".mypy_cache" / "world-typing"

_REPORTED = re.compile(r"^world_typing\.py:(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


def test_mypy_knows_the_worlds_emulator_and_its_record_shapes(tmp_path: pathlib.Path) -> None:
    shutil.copy(SCRIPT, tmp_path / SCRIPT.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTHONPATH", "MYPYPATH"))}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         "--cache-dir", str(MYPY_CACHE), SCRIPT.name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    output = done.stdout + done.stderr
    assert "Cannot find implementation or library stub" not in output, output
    reported = {(int(m.group("line")), m.group("code")) for m in map(_REPORTED.match, done.stdout.splitlines()) if m}
    expected = {
        (n, match.group(1))
        for n, line in enumerate(SCRIPT.read_text().splitlines(), 1)
        if (match := re.search(r"# error: ([a-z-]+)$", line))
    }
    assert len(expected) == 5
    assert reported == expected, output[-4000:]
