"""Instructions per ``message:new`` event in the client, counted by valgrind (load-proof).

The in-process replay of ``event_cost_bench.py`` (the real reader loop,
parsers, author merge, :class:`~service_client.Message`, emitter and worker
pool, a counting ``message_create`` listener), run under ``valgrind
--tool=callgrind``, which counts the instructions the process executes rather
than timing them: the count does not move with the machine's load, so two
versions can be compared on a busy machine. (It does not see cache misses, so
it complements the timed figures, it does not replace them.)

The frames are encoded before valgrind starts, into a temporary file. The
process is run twice under valgrind: once with a warm-up replay only, once
with the warm-up and ``--runs`` more replays of ``--events`` frames each; the
difference, divided by the events of the extra replays, is the count per
event (start-up, imports and the warm-up cancel out).

Prints ``name: value`` lines:

- ``events``, ``runs``, ``json_decoder`` (``msgspec`` or ``json``);
- ``event_instructions``: instructions per event (the reader thread and the
  worker threads together);
- or ``event_instructions: skipped (...)`` when valgrind is not installed.

Run: ``python benchmarks/event_instructions.py [--events N] [--runs N]`` (about
a minute with the defaults). ``SERVICE_CLIENT_JSON=json`` keeps the standard
library's decoder when msgspec is installed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import pickle
import re
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

#: The replay run under valgrind: argv = frames file, number of extra replays.
_REPLAY = """
import pickle, sys
sys.path.insert(0, {here!r})
import event_cost_bench
with open(sys.argv[1], "rb") as file:
    count, blobs = pickle.load(file)
event_cost_bench.run(count, blobs[0])
for blob in blobs[1 : 1 + int(sys.argv[2])]:
    event_cost_bench.run(count, blob)
"""

_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _instructions(valgrind: str, script: str, frames: str, runs: int, workdir: str) -> int:
    """Instructions of one replay process under callgrind (warm-up plus ``runs`` replays)."""
    out = os.path.join(workdir, f"callgrind.{runs}.out")
    result = subprocess.run(
        [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, script, frames, str(runs)],
        capture_output=True, text=True, timeout=1800, check=False,
    )
    match = _COLLECTED.search(result.stderr)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"valgrind failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    """Encode the frames, run the replay twice under valgrind and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=10_000, help="frames per replay")
    parser.add_argument("--runs", type=int, default=2, help="replays counted (after the warm-up)")
    args = parser.parse_args()
    if args.events < 1 or args.runs < 1:
        parser.error("--events and --runs must be at least 1")
    sys.path.insert(0, str(HERE))
    import event_cost_bench  # noqa: PLC0415 - the benchmark directory is not a package

    from service_client.gateway import decoder

    print(f"events: {args.events}")
    print(f"runs: {args.runs}")
    print(f"json_decoder: {decoder.NAME}")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("event_instructions: skipped (valgrind is not installed)")
        return
    with tempfile.TemporaryDirectory(prefix="event_instructions-") as workdir:
        frames = os.path.join(workdir, "frames.pickle")
        blobs = [event_cost_bench.frames(args.events, i * args.events) for i in range(args.runs + 1)]
        with open(frames, "wb") as file:
            pickle.dump((args.events, blobs), file)
        script = os.path.join(workdir, "replay.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(_REPLAY.format(here=str(HERE)))
        base = _instructions(valgrind, script, frames, 0, workdir)
        total = _instructions(valgrind, script, frames, args.runs, workdir)
    print(f"event_instructions: {(total - base) / (args.events * args.runs):.0f}")


if __name__ == "__main__":
    main()
