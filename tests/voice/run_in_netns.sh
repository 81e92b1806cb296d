#!/usr/bin/env bash
# Run pytest inside a network namespace of its own that has a veth pair at 198.18.0.1/24 (the
# benchmarking range), so that WebRTC, which skips the loopback interface, finds a host
# candidate while every packet stays inside the namespace. Needs root (unshare -n, ip).
#
#   bash tests/voice/run_in_netns.sh -n 0 -p no:cacheprovider -m voice tests/voice
#   bash tests/voice/run_in_netns.sh --exec python benchmarks/voice_bench.py   # any command
#
# Where no namespace can be made the tests still run, and the voice tests skip with the reason.
set -euo pipefail
PYTHON="${PYTHON:-python}"
if [ "${SERVICE_CLIENT_NETNS:-}" != "1" ]; then
    if unshare -n true 2>/dev/null && command -v ip >/dev/null; then
        exec unshare -n env SERVICE_CLIENT_NETNS=1 PYTHON="$PYTHON" bash "$0" "$@"
    fi
    echo "run_in_netns.sh: cannot make a network namespace (needs root, unshare and ip); the voice tests will skip" >&2
    if [ "${1:-}" = "--exec" ]; then shift; exec "$@"; fi
    exec "$PYTHON" -m pytest "$@"
fi
ip link add v0 type veth peer name v1
ip addr add 198.18.0.1/24 dev v0
ip link set v0 up
ip link set v1 up
ip link set lo up
if [ "${1:-}" = "--exec" ]; then shift; exec "$@"; fi
exec "$PYTHON" -m pytest "$@"
