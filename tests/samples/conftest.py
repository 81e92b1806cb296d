"""The sample bots of ``samples/`` are importable here, as a bot author imports their own bot."""

from __future__ import annotations

import pathlib
import sys

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"
if str(SAMPLES) not in sys.path:
    sys.path.insert(0, str(SAMPLES))
