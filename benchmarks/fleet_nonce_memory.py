"""Redis memory of the fleet's reply nonces: what one costs, and what a reply rate keeps.

Run: ``python benchmarks/fleet_nonce_memory.py [--rate 100]`` (needs the ``redis`` extra and
``redis-server`` on the PATH; it starts its own). A reply made while a worker handles an event
is claimed under a nonce key holding its result (the message record); the key is kept a
minute once the event is acknowledged, ``nonce_ttl`` (an hour) at most when it never is.

Prints ``name: value`` lines:

- ``fleet_nonce_bytes``: ``MEMORY USAGE`` of one nonce key holding the result of a typical reply
  (the emulator's echo of a reply, as the socket's process keeps it);
- ``fleet_nonce_bytes_full_record``: the same with the whole record (its send nonce and null
  fields too), as it was kept before;
- ``fleet_nonce_mb_acknowledged``: what ``--rate`` replies a second keep when their events are
  acknowledged (a minute each);
- ``fleet_nonce_mb_unacknowledged``: the bound when none is (an hour each).
"""

from __future__ import annotations

import argparse
import json

import redis
from events_fleet_bench import RedisProcess

from service_client.fleet._redis import dumps
from service_client.fleet.sends import _compact

#: A reply's echo as the emulator sends it (the socket's process keeps this record).
_ECHO = json.loads(
    '{"ok":{"publicId":"100021882429208911","content":"answered","author":{"publicId":"100021882429208901",'
    '"name":"pingbot","tag":"7239","image":null,"isBot":true,"status":"online","createdAt":"2026-12-07T16:31:'
    '32.179Z"},"channelPublicId":"100021882429208906","serverPublicId":"100021882429208902","createdAt":'
    '"2026-12-07T16:31:32.601Z","embeds":[],"fileUrl":null,"replyToId":"100021882429208910","editedAt":null,'
    '"pinned":false,"nonce":"e56e9a851457412d8be22e7a00a71757"}}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100.0, help="replies per second")
    args = parser.parse_args()
    server = RedisProcess()
    try:
        conn = redis.Redis.from_url(server.url)
        key = "service_client:fleet:100021882429208901:nonce:" + "0123456789abcdef" * 2
        conn.set(key, dumps(_ECHO), px=3_600_000)
        full = int(conn.memory_usage(key))
        conn.set(key, dumps(_compact(_ECHO)), px=3_600_000)
        kept = int(conn.memory_usage(key))
        conn.close()
    finally:
        server.stop()
    print(f"fleet_nonce_bytes: {kept}")
    print(f"fleet_nonce_bytes_full_record: {full}")
    print(f"fleet_nonce_mb_acknowledged: {args.rate * 60 * kept / 1e6:.1f}")
    print(f"fleet_nonce_mb_unacknowledged: {args.rate * 3600 * kept / 1e6:.0f}")


if __name__ == "__main__":
    main()
