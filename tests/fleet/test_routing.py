"""The events fleet's pure parts: partitions, rendezvous hashing, ordering keys, nonces, errors, trim marks.

No Redis here (the default run has them): these are the rules both sides of the fleet must
agree on, byte for byte, across processes and machines.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import zlib

import pytest

from service_client import endpoints
from service_client.errors import ChannelAccessError, EmptyMessageError, ServiceAPIError, ServiceError
from service_client.fleet.routing import (
    DROPPABLE_EVENTS,
    PUBLISHED_EVENTS,
    STATE_EVENTS,
    EventRouter,
    FleetKeys,
    check_name,
    partition_of,
    rendezvous_owner,
)
from service_client.fleet.sends import decode_error, encode_error, reply_nonce
from service_client.fleet.trim import after, low_water
from service_client.permissions import Permissions


def test_partition_is_crc32_of_the_key_and_the_same_in_another_process() -> None:
    keys = [f"1000218021{i:08d}" for i in range(200)]
    mine = [partition_of(k, 64) for k in keys]
    assert mine == [zlib.crc32(k.encode()) % 64 for k in keys]
    assert set(mine) == set(range(64))  # 200 ids spread over every partition
    code = ("import sys; from service_client.fleet.routing import partition_of; "
            "print([partition_of(k, 64) for k in sys.argv[1:]])")
    other = subprocess.run([sys.executable, "-c", code, *keys], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"})
    assert other.stdout.strip() == str(mine)  # never Python's hash(), which changes per process


def test_rendezvous_gives_every_partition_one_owner_and_moves_only_what_a_join_takes() -> None:
    members = ["w0", "w1", "w2"]
    before = {p: rendezvous_owner(p, members) for p in range(64)}
    assert set(before.values()) == set(members)
    assert all(10 <= list(before.values()).count(m) <= 34 for m in members)  # a third each, give or take
    assert before == {p: rendezvous_owner(p, list(reversed(members))) for p in range(64)}  # order-free
    after_join = {p: rendezvous_owner(p, [*members, "w3"]) for p in range(64)}
    moved = [p for p in range(64) if before[p] != after_join[p]]
    assert moved and all(after_join[p] == "w3" for p in moved)  # only the newcomer gains
    after_leave = {p: rendezvous_owner(p, ["w0", "w2"]) for p in range(64)}
    assert all(after_leave[p] == before[p] for p in range(64) if before[p] != "w1")  # only w1's move
    assert rendezvous_owner(3, []) is None


def test_router_keys_messages_by_channel_and_reactions_by_the_channel_of_their_message() -> None:
    router = EventRouter()
    record = {"publicId": "M1", "channelPublicId": "C1", "serverPublicId": "S1", "content": "hi"}
    assert router.key("message:new", [record]) == "C1"
    # A reaction names its message only: it keeps the channel's order (and partition).
    assert router.key("message:reaction", [{"messagePublicId": "M1", "reactions": []}]) == "C1"
    assert router.key("message:reaction_clear", [{"messagePublicId": "M9"}]) == "M9"
    assert router.key("message:deleted", [{"publicId": "M1", "serverPublicId": "S1"}]) == "C1"
    assert router.key("typing:start", ["C2"]) == "C2"
    assert router.key("typing:stop", [{"channelPublicId": "C2", "userPublicId": "U1"}]) == "C2"
    assert router.key("server:member_add", [{"serverPublicId": "S1", "member": {}}]) == "S1"
    assert router.key("server:updated", [{"publicId": "S1"}]) == "S1"
    assert router.key("presence:update", [{"userPublicId": "U1", "status": "idle"}]) == "U1"
    assert router.key("dm:new", [{"publicId": "D1"}]) == "D1"
    assert router.key("message:new", [{"publicId": 7, "channelPublicId": 8}]) == "8"
    assert router.key("server:updated", ["not an object"]) is None


def test_shared_state_droppable_and_private_events() -> None:
    assert {"server:member_update", "server:role_create", "presence:update", "user:update"} <= STATE_EVENTS
    assert "message:new" not in STATE_EVENTS
    assert {"typing:start", "typing:stop", "presence:update"} <= DROPPABLE_EVENTS
    assert STATE_EVENTS | DROPPABLE_EVENTS <= PUBLISHED_EVENTS
    assert "voice:livekit-token" not in PUBLISHED_EVENTS  # the socket process's own voice credentials


def test_every_socket_event_the_service_sends_declares_its_fleet_routing() -> None:
    # Forgetting it would leave the event unpublished: fleet workers would never see it.
    undeclared = [spec.name for spec in endpoints.SOCKET_EVENTS
                  if spec.direction == endpoints.SERVICE_TO_CLIENT and spec.fleet is None]
    assert undeclared == [], f"declare fleet=FleetRoute(...) beside these events in endpoints.py: {undeclared}"
    sent = [spec for spec in endpoints.SOCKET_EVENTS if spec.direction == endpoints.SERVICE_TO_CLIENT]
    for spec in sent:
        route = spec.fleet
        assert route is not None
        assert route.published == (spec.event in PUBLISHED_EVENTS), spec.name
        assert route.state == (spec.event in STATE_EVENTS), spec.name
        assert route.droppable == (spec.event in DROPPABLE_EVENTS), spec.name
        if not route.published:
            assert route.excluded and route.key is None, spec.name  # excluded, with its reason
    # An emit of the client is no event of the service: it carries no routing.
    assert all(spec.fleet is None for spec in endpoints.SOCKET_EVENTS
               if spec.direction == endpoints.CLIENT_TO_SERVICE)


def test_the_router_finds_each_event_s_key_where_the_catalog_says() -> None:
    router = EventRouter()
    payload = {"channelPublicId": "C", "serverPublicId": "S", "userPublicId": "U", "messagePublicId": "M",
               "publicId": "P"}
    expected = {"channel": "C", "message": "C", "server": "S", "user": "U"}
    for spec in endpoints.SOCKET_EVENTS:
        if spec.fleet is not None and spec.fleet.key is not None:
            assert router.key(spec.event, [payload]) == expected[spec.fleet.key], spec.name


def test_a_message_named_only_by_its_id_takes_its_channel_from_the_router_then_from_channel_of() -> None:
    known = {"M2": "C2"}
    asked: list[str] = []

    def channel_of(message_id: str) -> str | None:
        asked.append(message_id)
        return known.get(message_id)

    router = EventRouter(channel_of=channel_of)
    router.key("message:new", [{"publicId": "M1", "channelPublicId": "C1"}])  # remembered by the router
    reaction = "message:reaction"
    assert router.key(reaction, [{"messagePublicId": "M1", "reactions": []}]) == "C1"
    assert asked == []  # the router's own memory first
    assert router.key(reaction, [{"messagePublicId": "M2", "reactions": []}]) == "C2"
    # Known to neither: the message's server, else its id.
    assert router.key(reaction, [{"messagePublicId": "M3", "serverPublicId": "S3"}]) == "S3"
    assert router.key(reaction, [{"messagePublicId": "M4"}]) == "M4"
    assert asked == ["M2", "M3", "M4"]
    assert EventRouter().key(reaction, [{"messagePublicId": "M2"}]) == "M2"  # no channel_of: its memory only


def test_a_deleted_message_keeps_its_channel_for_its_later_events() -> None:
    # The client forgets a deleted message right after the tap routed the deletion: a reaction
    # racing it, or a second deletion, must still go to its channel's partition.
    known = {"M1": "C1"}
    router = EventRouter(channel_of=known.get)
    assert router.key("message:deleted", [{"publicId": "M1", "messagePublicId": "M1"}]) == "C1"
    known.clear()  # the parsers' forget_message
    assert router.key("message:reaction", [{"messagePublicId": "M1", "reactions": []}]) == "C1"
    assert router.key("message:deleted", [{"publicId": "M1", "messagePublicId": "M1"}]) == "C1"


def test_a_fleet_route_is_either_keyed_or_excluded_with_a_reason() -> None:
    with pytest.raises(ValueError, match="either a key or an excluded reason"):
        endpoints.FleetRoute(None)
    with pytest.raises(ValueError, match="either a key or an excluded reason"):
        endpoints.FleetRoute("channel", excluded="private")
    with pytest.raises(ValueError, match="key must be one of"):
        endpoints.FleetRoute("guild")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="neither state nor droppable"):
        endpoints.FleetRoute(None, excluded="private", state=True)
    route = endpoints.FleetRoute("server", state=True)
    assert route.published and route.key == "server" and not route.droppable
    with pytest.raises(AttributeError):
        route.state = False  # type: ignore[misc]


def test_names_and_keys() -> None:
    assert check_name("group", "bot-1.a_b") == "bot-1.a_b"
    for bad in ("", "a b", "a:b", "x" * 65, "ü"):
        with pytest.raises(ValueError, match="group must be 1 to 64"):
            check_name("group", bad)
    with pytest.raises(TypeError, match="group must be a str"):
        check_name("group", 3)
    keys = FleetKeys("ns", "g")
    assert keys.stream(5) == "service_client:fleet:ns:p:5"
    assert keys.lease(5) == "service_client:fleet:ns:lease:g:5"
    assert keys.dead == "service_client:fleet:ns:dead:g"


def test_reply_nonce_is_stable_per_event_and_index() -> None:
    assert reply_nonce("g", "e1:3:17", 0) == reply_nonce("g", "e1:3:17", 0)
    assert len({reply_nonce("g", "e1:3:17", 0), reply_nonce("g", "e1:3:17", 1), reply_nonce("g", "e1:3:18", 0),
                reply_nonce("h", "e1:3:17", 0)}) == 4  # another group's reply is another reply
    assert len(reply_nonce("g", "e1:3:17", 0)) == 32


def test_errors_come_back_with_their_type_and_attributes() -> None:
    sent = ChannelAccessError("C1", action="send", reason="missing_permissions", detail="no",
                              missing=Permissions.SEND_MESSAGES)
    back = decode_error(pickle.loads(pickle.dumps(encode_error(sent))))
    assert type(back) is ChannelAccessError and str(back) == str(sent)
    assert back.channel_id == "C1" and back.missing == Permissions.SEND_MESSAGES
    api = decode_error(encode_error(ServiceAPIError(404, "/channels/x", '{"error": "gone"}')))
    assert isinstance(api, ServiceAPIError) and api.status == 404 and "gone" in str(api)
    timeout = decode_error(encode_error(TimeoutError("send_message timeout after 10s")))
    assert type(timeout) is TimeoutError
    empty = decode_error(encode_error(EmptyMessageError("send_message requires non-empty content or at least one embed.")))
    assert type(empty) is EmptyMessageError and isinstance(empty, ValueError)   # the spec's error, as raised
    other = decode_error(encode_error(KeyError("x")))
    assert type(other) is ServiceError  # anything unexpected: a ServiceError with its text
    assert type(decode_error("junk")) is ServiceError


def test_low_water_is_the_lowest_entry_a_group_still_needs() -> None:
    assert after(b"5-0") == "5-1"
    groups = [{"name": b"a", "pending": 2, "last-delivered-id": b"9-0"},
              {"name": b"b", "pending": 0, "last-delivered-id": b"12-0"}]
    assert low_water(groups, {"a": b"4-0"}) == "4-0"
    assert low_water([groups[1]], {}) == "12-1"  # all acknowledged up to 12
    groups[0]["last-delivered-id"] = b"3-0"
    assert low_water([{"name": b"a", "pending": 0, "last-delivered-id": b"3-0"}, groups[1]], {}) == "3-1"
    assert low_water([], {}) is None


def test_import_service_client_loads_neither_redis_nor_the_fleet() -> None:
    code = ("import sys, service_client\n"
            "print(sorted(m for m in ('redis', 'service_client.fleet') if m in sys.modules))\n"
            "service_client.EventPublisher, service_client.FleetWorker\n"
            "print('service_client.fleet' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True"]


def test_a_send_commands_time_budget_is_capped_at_a_sends_bound() -> None:
    import threading
    import time

    from service_client.fleet.sends import SendRunner

    runner = SendRunner(None, None, nonce_ttl=60, stop=threading.Event())  # type: ignore[arg-type]
    now_ms = int(time.time() * 1000)
    for budget in (10**12, float("inf"), float("nan"), "forever", None):
        left = runner._deadline(f"{now_ms}-0".encode(), {"b": budget}) - time.monotonic()
        assert 9 < left <= 10.01, budget
    future = f"{now_ms + 10**9}-0".encode()  # an id far ahead of Redis's clock
    assert runner._deadline(future, {"b": 5000}) - time.monotonic() <= 5.01
    assert runner._deadline(f"{now_ms}-0".encode(), {"b": -1}) <= time.monotonic()
