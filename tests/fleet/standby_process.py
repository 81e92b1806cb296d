"""A socket process of the standby tests: ``python standby_process.py REDIS BASE SOCKET NAMESPACE NAME TTL``.

The bot token comes on standard input (never on the command line). It prints ``standing``
once it competes for the lease, ``active <epoch>`` each time it publishes, ``standby`` each
time it steps down; its log goes to standard error.
"""

from __future__ import annotations

import logging
import sys
import time

from service_client import CatchUp, Client
from service_client.fleet import StandbySocket


def main() -> None:
    redis_url, base, sock, namespace, name, ttl = sys.argv[1:7]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s {name} %(levelname)s %(name)s: %(message)s")
    token = sys.stdin.readline().strip()

    def make_client() -> Client:
        return Client(base_url=base, socket_url=sock, reconnect_base=0.05, reconnect_cap=0.3, catch_up=CatchUp())

    standby = StandbySocket(make_client, redis_url, token, namespace=namespace, name=name, lease_ttl=int(ttl),
                            publisher_options={"partitions": 8})
    standby.start()
    print("standing", flush=True)
    active = False
    while True:
        publisher = standby.publisher
        now = standby.wait_active(0) and publisher is not None
        if now and not active:
            assert publisher is not None
            print(f"active {publisher._epoch}", flush=True)
        elif active and not now:
            print("standby", flush=True)
        active = now
        time.sleep(0.01)


if __name__ == "__main__":
    main()
