"""Import time of the package, measured with ``python -X importtime``.

Run: ``python benchmarks/import_bench.py [--runs N]`` from the checkout (the
package of the checkout is the one imported). Each figure comes from N fresh
interpreters; the script prints one ``name: value`` line per figure:

- ``import_ms_median`` / ``import_ms_min``: the cumulative time of
  ``import service_client`` as reported by ``-X importtime`` (goal: median
  <= 150 ms).
- ``transport_modules_at_import``: how many of requests, urllib3 and
  websocket-client a bare ``import service_client`` loads (goal: 0; they load
  on first use).
- ``voice_modules_at_import``: how many of livekit, av, numpy and aiortc (the voice extra)
  a bare ``import service_client`` loads (goal: 0; they load when a bot first joins voice).
- ``transport_import_ms_median``: what ``import requests, websocket`` alone
  costs, i.e. what the first ``Client()`` and ``login()`` pay instead.
- ``first_client_ms_median``: ``import service_client`` then ``Client()``
  (wall clock, perf_counter): the first use, which loads the REST stack.
- ``socket_reader_import_ms_median`` / ``socket_reader_import_ms_median_json``:
  what the first ``login()`` pays to import the socket reader after
  ``import service_client`` (wall clock), with its JSON decoder as installed
  (msgspec on CPython) and with ``SERVICE_CLIENT_JSON=json`` (the standard
  library's, msgspec not imported): their difference is msgspec's import.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: ``import time: self [us] | cumulative | imported package`` lines of ``-X importtime``.
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)\s*$")

_FIRST_CLIENT = """
import time, warnings
started = time.perf_counter()
import service_client
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    client = service_client.Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9")
took = time.perf_counter() - started
client.destroy()
print(took * 1000)
"""

_SOCKET_READER = """
import time
import service_client
started = time.perf_counter()
import service_client.gateway.reader
print((time.perf_counter() - started) * 1000)
"""

_LOADED = """
import sys
import service_client
print(sum(name in sys.modules for name in ("requests", "urllib3", "websocket")))
"""

_VOICE_LOADED = """
import sys
import service_client
print(sum(name in sys.modules for name in ("livekit", "av", "numpy", "aiortc")))
"""


def _env() -> dict[str, str]:
    # Bytecode caching on, as for any installed package: the first (warm-up) run writes the .pyc files.
    skip = ("PYTHONPATH", "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in os.environ.items() if k not in skip}


def _importtime_ms(code: str, modules: tuple[str, ...]) -> float:
    """Cumulative ms of the top-level imports named ``modules`` in a fresh interpreter running ``code``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120, check=True,
    )
    total = 0
    for line in done.stderr.splitlines():
        match = _LINE.match(line)
        if match and len(match.group(3)) == 1 and match.group(4) in modules:  # top level: no indent
            total += int(match.group(2))
    return total / 1000


def _run(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**_env(), **env}, capture_output=True, text=True, timeout=120,
        check=True,
    )
    return done.stdout.strip()


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per figure (default 15)")
    args = parser.parse_args()
    runs = max(1, args.runs)

    for code in ("import service_client", "import requests, websocket", _FIRST_CLIENT):
        _run(code)  # warm-up: writes the bytecode caches, as after any installation
    package = [_importtime_ms("import service_client", ("service_client",)) for _ in range(runs)]
    transports = [_importtime_ms("import requests, websocket", ("requests", "websocket")) for _ in range(runs)]
    first_client = [float(_run(_FIRST_CLIENT)) for _ in range(runs)]
    _run(_SOCKET_READER)  # warm-up
    reader: list[float] = []
    reader_json: list[float] = []
    for _ in range(runs):  # alternating, so a change in the machine's load hits both alike
        reader.append(float(_run(_SOCKET_READER, SERVICE_CLIENT_JSON="auto")))
        reader_json.append(float(_run(_SOCKET_READER, SERVICE_CLIENT_JSON="json")))
    loaded = int(_run(_LOADED))
    voice_loaded = int(_run(_VOICE_LOADED))

    print(f"import_ms_median: {statistics.median(package):.1f}")
    print(f"import_ms_min: {min(package):.1f}")
    print(f"transport_modules_at_import: {loaded}")
    print(f"voice_modules_at_import: {voice_loaded}")
    print(f"transport_import_ms_median: {statistics.median(transports):.1f}")
    print(f"first_client_ms_median: {statistics.median(first_client):.1f}")
    print(f"socket_reader_import_ms_median: {statistics.median(reader):.1f}")
    print(f"socket_reader_import_ms_median_json: {statistics.median(reader_json):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
