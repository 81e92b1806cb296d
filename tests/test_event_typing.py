"""Typed events as a bot author's mypy sees them: ``tests/typecheck/events_ok.py`` (listeners and
``wait_for`` results that fit their events) passes ``mypy --strict``, and every line of
``tests/typecheck/events_wrong.py`` marked ``# error: <code>`` (a listener parameter of the wrong
type, a ``wait_for`` result used as something else, a misspelt name) is reported, with nothing
else. Both are checked from a directory outside the checkout, so mypy reads the installed
package's types."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "typecheck"
#: A mypy cache of its own, so the second run of the suite takes a second or two.
MYPY_CACHE = ROOT / ".mypy_cache" / "event-typing"

_REPORTED = re.compile(r"^(?P<file>events_\w+\.py):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")


def _expected(script: pathlib.Path) -> set[tuple[str, int, str]]:
    """The (file, line, code) triples a script's ``# error: <code>`` comments announce."""
    return {
        (script.name, n, match.group(1))
        for n, line in enumerate(script.read_text().splitlines(), 1)
        if (match := re.search(r"# error: ([a-z-]+)$", line))
    }


def test_mypy_accepts_fitting_listeners_and_reports_every_misfit(tmp_path):
    for name in ("events_ok.py", "events_wrong.py"):
        shutil.copy(SCRIPTS / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERVICE_", "PYTHONPATH", "MYPYPATH"))}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         "--cache-dir", str(MYPY_CACHE), "events_ok.py", "events_wrong.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    output = done.stdout + done.stderr
    assert "Cannot find implementation or library stub" not in output, output
    reported = {
        (m.group("file"), int(m.group("line")), m.group("code"))
        for m in map(_REPORTED.match, done.stdout.splitlines())
        if m
    }
    expected = _expected(tmp_path / "events_wrong.py")
    assert len(expected) >= 10
    assert _expected(tmp_path / "events_ok.py") == set()
    assert reported == expected, output[-6000:]
    assert done.returncode == 1
