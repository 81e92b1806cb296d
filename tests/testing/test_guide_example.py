"""The testing guide's example of every world action, ``docs/examples/test_world_events.py``,
passes as the guide shows it."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "test_world_events.py"


def test_the_guides_world_example_passes_and_every_test_of_it_is_shown() -> None:
    guide = (ROOT / "docs" / "guides" / "testing.rst").read_text()
    tests = re.findall(r"^def (test_\w+)", EXAMPLE.read_text(), re.MULTILINE)
    shown = set(re.findall(r":pyobject: (\w+)", guide))
    assert set(tests) <= shown, "show every test of the example in docs/guides/testing.rst"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(rf"\b{len(tests)} passed\b", run.stdout), run.stdout[-1000:]
