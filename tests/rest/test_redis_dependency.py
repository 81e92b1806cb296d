"""The redis extra's floor: redis-py before 7.4.0 shows the Redis password in a pool's repr."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

SETUP_CFG = Path(__file__).resolve().parent.parent.parent / "setup.cfg"


def _redis_requirements() -> dict[str, str]:
    config = configparser.ConfigParser()
    config.read(SETUP_CFG, encoding="utf-8")
    found = {}
    for extra, value in config["options.extras_require"].items():
        for line in value.splitlines():
            if re.match(r"redis\b", line.strip()):
                found[extra] = line.strip()
    return found


def test_every_redis_requirement_asks_for_7_4_at_least() -> None:
    found = _redis_requirements()
    assert {"redis", "test"} <= set(found), found  # the extra itself, and the test tools
    for extra, requirement in found.items():
        match = re.fullmatch(r"redis>=(\d+)\.(\d+)(?:\.\d+)?", requirement)
        assert match, f"[{extra}] {requirement!r}: expected a floor, redis>=X.Y"
        assert (int(match[1]), int(match[2])) >= (7, 4), f"[{extra}] {requirement!r} allows a redis-py that shows passwords"
