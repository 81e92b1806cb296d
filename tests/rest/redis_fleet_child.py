"""A second bot process for the Redis bucket store tests: one Client on a RedisBucketStore.

Protocol on stdin/stdout, one JSON object per line (the token travels on stdin only):
reads ``{base_url, socket_url, token, redis_url, namespace}``, logs in, prints
``{"ready": true}``; then for each ``{"path": ...}`` line makes that call and prints
``{"sent_at": epoch s, "done_at": epoch s, "error": null or text}``; stops at EOF.
"""

from __future__ import annotations

import json
import sys
import time

from service_client import Client, RedisBucketStore


def main() -> int:
    config = json.loads(sys.stdin.readline())
    store = RedisBucketStore(config["redis_url"], namespace=config["namespace"])
    client = Client(base_url=config["base_url"], socket_url=config["socket_url"], bucket_store=store)
    try:
        client.login(config["token"], timeout=30)
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
            sent_at = time.time()
            error = None
            try:
                client.api_call(request["path"], max_retries=0)
            except Exception as exc:  # noqa: BLE001 - reported to the test
                error = f"{type(exc).__name__}: {exc}"
            print(json.dumps({"sent_at": sent_at, "done_at": time.time(), "error": error}), flush=True)
    finally:
        client.destroy()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
