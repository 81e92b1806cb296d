"""Reassembly time of a message of one-byte fragments by the socket's frame reader.

A text message sent as N one-byte frames (a first frame, then continuation
frames) is read by :class:`~service_client.gateway.reader.FrameReader` from a
stand-in socket that hands it everything at once, for N and for twice N. The
process CPU time of each read is the median of ``--runs`` reads. Work linear
in the fragments gives a ratio near 2; work that goes over the earlier
fragments again at each new one gives about 4.

Prints ``name: value`` lines:

- ``fragments``: N;
- ``reassembly_ms``: milliseconds to reassemble N fragments;
- ``reassembly_double_ms``: milliseconds for 2 N fragments;
- ``reassembly_ratio``: the second over the first.

Run: ``python benchmarks/reassembly_bench.py [--fragments N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from service_client.gateway.reader import FrameReader


def _message(count: int) -> bytes:
    """A text message of ``count`` one-byte fragments, as a server sends it (unmasked)."""
    return b"\x01\x01a" + b"\x00\x01b" * (count - 2) + b"\x80\x01c"


class _Socket:
    """Hands out the whole blob at the first read, then EOF."""

    def __init__(self, blob: bytes) -> None:
        self._blob = blob

    def recv(self, size: int) -> bytes:
        blob, self._blob = self._blob, b""
        return blob


def _read_ms(blob: bytes, count: int, runs: int) -> float:
    """Median CPU milliseconds of ``runs`` reads of the message in ``blob``."""
    times: list[float] = []
    for _ in range(runs):
        reader = FrameReader(_Socket(blob), lambda opcode, payload: None)  # type: ignore[arg-type]
        started = time.process_time()
        message = reader.recv()
        times.append((time.process_time() - started) * 1000)
        if len(message) != count:
            raise SystemExit(f"reassembled {len(message)} bytes of {count}")
    return statistics.median(times)


def main() -> None:
    """Read the messages and print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--fragments", type=int, default=16_000, help="fragments of the smaller message")
    parser.add_argument("--runs", type=int, default=5, help="reads of each message (the median is kept)")
    args = parser.parse_args()
    if args.fragments < 2 or args.runs < 1:
        parser.error("--fragments must be at least 2 and --runs at least 1")
    single = _read_ms(_message(args.fragments), args.fragments, args.runs)
    double = _read_ms(_message(2 * args.fragments), 2 * args.fragments, args.runs)
    print(f"fragments: {args.fragments}")
    print(f"reassembly_ms: {single:.1f}")
    print(f"reassembly_double_ms: {double:.1f}")
    print(f"reassembly_ratio: {double / single:.2f}")


if __name__ == "__main__":
    main()
