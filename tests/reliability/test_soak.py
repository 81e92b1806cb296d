"""The 60-second soak (benchmarks/soak.py) in a subprocess: nothing lost, nothing answered twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_soak_60_seconds_with_transport_drops():
    done = subprocess.run(
        [sys.executable, str(SOAK), "--seconds", "60"], capture_output=True, text=True, timeout=170
    )
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert {"sent", "answered", "lost", "duplicated", "threads_start", "threads_end",
            "rss_mb_start", "rss_mb_end"} <= figures.keys(), done.stdout + done.stderr
    assert int(figures["sent"]) >= 2900  # 50 per second
    assert int(figures["drops"]) >= 3
    assert int(figures["lost"]) == 0, done.stdout + done.stderr
    assert int(figures["duplicated"]) == 0, done.stdout + done.stderr
    assert int(figures["answered"]) == int(figures["sent"])
    assert int(figures["threads_end"]) <= int(figures["threads_start"]) + 2
    assert done.returncode == 0, done.stderr
