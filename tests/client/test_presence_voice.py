"""Presence, activity and voice, seen over real sockets by a second user."""

from __future__ import annotations

import threading
import time

import pytest

from service_client import (
    ServiceAPIError,
    ServiceAuthError,
    ServiceTimeoutError,
    VoiceConnection,
)


def voice_channel(world):
    return next(c for c in world.channels if c["type"] == "VOICE")


def wait_until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# -- presence ----------------------------------------------------------------


def test_set_status_is_local_at_once_persisted_and_seen_by_another_user(bot, human, world, emulator):
    seen = threading.Event()
    updates = []
    human.users.fetch(world.bot["publicId"])  # cached, so presence events patch it

    @human.on("presence_update")
    def on_presence(raw) -> None:
        if raw.get("userPublicId") == world.bot["publicId"]:
            updates.append(raw)
            seen.set()

    bot.set_status("dnd")
    assert bot.user.status == "dnd"
    assert seen.wait(5)
    assert updates[-1]["status"] == "dnd"
    assert emulator.presence(world.bot["publicId"])["status"] == "dnd"
    assert any(r["method"] == "PATCH" and r["path"] == "/users/settings" for r in emulator.requests())
    assert wait_until(lambda: human.users.cache.get(world.bot["publicId"]) is not None
                      and human.users.cache[world.bot["publicId"]].status == "dnd")


def test_set_status_keeps_the_new_local_status_when_the_patch_fails(bot, emulator, world):
    bot.set_status("online")
    emulator.add_fault("PATCH", "/users/settings", status=500, count=1)
    with pytest.raises(ServiceAPIError) as info:
        bot.set_status("idle")
    assert info.value.status == 500
    # presence:update went out, so the service shows "idle" live: the local value agrees with it.
    assert bot.user.status == "idle"
    assert wait_until(lambda: emulator.presence(world.bot["publicId"])["status"] == "idle")


def test_set_status_rejects_unknown_values_before_sending(bot, emulator):
    emulator.clear_requests()
    with pytest.raises(ValueError, match="status"):
        bot.set_status("busy")
    assert emulator.requests() == []


def test_set_activity_truncates_defaults_and_clears(bot, human, world, emulator):
    got = []
    event = threading.Event()

    @human.on("activity_update")
    def on_activity(raw) -> None:
        if raw.get("userPublicId") == world.bot["publicId"]:
            got.append(raw)
            event.set()

    before = int(time.time() * 1000)
    bot.set_activity({"type": "playing", "name": "n" * 300, "details": "d" * 100})
    assert event.wait(5)
    activity = got[-1]["activity"]
    assert activity["name"] == "n" * 128
    assert activity["details"] == "d" * 64
    assert activity["startedAt"] >= before
    stored = emulator.presence(world.bot["publicId"])["activity"]
    assert stored["name"] == "n" * 128
    event.clear()
    bot.set_activity(None)
    assert event.wait(5)
    assert got[-1]["activity"] is None
    assert emulator.presence(world.bot["publicId"])["activity"] is None


def test_set_activity_unknown_type_sends_nothing(bot, emulator, world):
    with pytest.raises(ValueError, match="type"):
        bot.set_activity({"type": "dancing", "name": "x"})
    assert emulator.presence(world.bot["publicId"])["activity"] is None


def test_set_presence_only_touches_what_is_given(bot, emulator, world):
    bot.set_activity({"type": "listening", "name": "music"})
    assert wait_until(lambda: emulator.presence(world.bot["publicId"])["activity"] is not None)
    emulator.clear_requests()
    bot.set_presence({"status": "idle"})  # activity absent: unchanged
    assert bot.user.status == "idle"
    assert emulator.presence(world.bot["publicId"])["activity"]["name"] == "music"
    bot.set_presence(activity=None)  # clears; status absent: no PATCH
    assert wait_until(lambda: emulator.presence(world.bot["publicId"])["activity"] is None)
    patches = [r for r in emulator.requests() if r["path"] == "/users/settings"]
    assert len(patches) == 1


def test_presence_operations_raise_after_destroy(bot):
    bot.destroy()
    for call in (lambda: bot.set_status("online"), lambda: bot.set_activity(None),
                 lambda: bot.set_presence(status="idle")):
        with pytest.raises(ServiceAuthError):
            call()


# -- voice -------------------------------------------------------------------


def test_join_returns_credentials_and_feeds_voice_states(bot, human, world, emulator):
    channel = voice_channel(world)
    joined = threading.Event()
    human.on("voice_user_joined", lambda raw: joined.set())
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    assert isinstance(connection, VoiceConnection)
    assert connection.channel_id == channel["publicId"]
    assert connection.token and connection.url
    assert bot.voice.connection is connection
    assert joined.wait(5)
    assert wait_until(lambda: human.voice_states.cache.get(world.bot["publicId"]) is not None)
    state = human.voice_states.cache[world.bot["publicId"]]
    assert state.channel_id == channel["publicId"]
    assert connection.token not in repr(connection)
    # the same channel returns the existing connection
    assert bot.voice.join(channel["publicId"], media=False) is connection


def test_state_changes_merge_and_leave_removes(bot, human, world, emulator):
    channel = voice_channel(world)
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    bot_id = world.bot["publicId"]
    assert wait_until(lambda: human.voice_states.cache.get(bot_id) is not None)
    connection.set_muted(True)
    connection.set_speaking(True)
    assert wait_until(lambda: human.voice_states.cache[bot_id].muted and human.voice_states.cache[bot_id].speaking)
    assert any(u["userPublicId"] == bot_id and u["muted"] for u in emulator.voice_users(channel["publicId"]))
    connection.leave()
    assert not connection.connected and bot.voice.connection is None
    assert wait_until(lambda: human.voice_states.cache.get(bot_id) is None)
    assert emulator.voice_users(channel["publicId"]) == []
    with pytest.raises(Exception):
        connection.set_muted(False)


def test_a_server_side_leave_of_the_bot_ends_the_connection(bot, world, emulator):
    channel = voice_channel(world)
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    emulator.voice_leave(world.bot["publicId"])
    assert wait_until(lambda: bot.voice.connection is None)
    assert not connection.connected


def test_snapshot_on_connect_and_member_voice(human, world, emulator, make_client):
    channel = voice_channel(world)
    assert emulator.voice_join(world.human["publicId"], channel["publicId"])
    client = make_client()
    client.login(world.bot_token, timeout=15)  # the emulator sends a snapshot after connect
    human_id = world.human["publicId"]
    assert wait_until(lambda: client.voice_states.cache.get(human_id) is not None)
    assert client.voice_states.cache[human_id].channel_id == channel["publicId"]
    member = client.members.fetch(world.server["publicId"], human_id)
    assert member.voice is not None and member.voice.channel_id == channel["publicId"]


def test_join_a_text_channel_raises_value_error_before_sending(bot, world):
    with pytest.raises(ValueError, match="not a voice channel"):
        bot.voice.join(world.general["publicId"], media=False)
    assert bot.voice.connection is None


def test_join_without_credentials_times_out(bot, world, emulator):
    channel = voice_channel(world)
    bot.channels.fetch(channel["publicId"])
    # the emulator refuses a join silently (no credentials) for a channel the bot cannot see
    other = emulator.create_server("Elsewhere", world.human["publicId"], channels=[{"name": "v", "type": "VOICE"}])
    foreign = other["channels"][0]
    # the bot cannot fetch it (not a member): inject it into the cache as a VOICE channel
    from service_client import Channel

    bot.channels.cache[foreign["publicId"]] = Channel(bot, {**foreign, "serverPublicId": other["server"]["publicId"]})
    started = time.monotonic()
    with pytest.raises(ServiceTimeoutError, match="Timed out joining voice channel"):
        bot.voice.join(foreign["publicId"], timeout=0.5, media=False)
    assert time.monotonic() - started < 2.0


def test_switching_channels_leaves_the_first(bot, world, emulator):
    first = voice_channel(world)
    second = emulator.create_channel(world.server["publicId"], "voice-2", "VOICE")
    second = second.get("channel", second)
    a = bot.voice.join(first["publicId"], timeout=5, media=False)
    b = bot.voice.join(second["publicId"], timeout=5, media=False)
    assert not a.connected and b.connected and bot.voice.connection is b
    assert wait_until(lambda: emulator.voice_users(first["publicId"]) == [])
    assert [u["userPublicId"] for u in emulator.voice_users(second["publicId"])] == [world.bot["publicId"]]


def test_destroy_leaves_voice_first(bot, world, emulator):
    channel = voice_channel(world)
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    bot.destroy()
    assert not connection.connected and bot.voice.connection is None
    # the leave was said on the socket, not inferred by the service from the disconnect
    assert wait_until(lambda: any(e["event"] == "voice:leave" for e in emulator.emits()))
    assert wait_until(lambda: emulator.voice_users(channel["publicId"]) == [])


# -- presence while reconnecting; unknown activity type --------------------------------------------


def _offline(bot, world, emulator):
    """Drop the bot's transport and hold it offline (outage); returns once ``disconnect`` was emitted."""
    lost = threading.Event()
    bot.on("disconnect", lambda *args: lost.set())
    emulator.set_outage(30)
    assert emulator.drop_transport(world.bot["publicId"]) == 1
    assert lost.wait(10)
    assert not bot.is_connected


def test_presence_operations_raise_at_once_while_reconnecting_and_send_nothing(bot, world, emulator):
    bot.set_status("online")
    assert wait_until(lambda: emulator.presence(world.bot["publicId"])["status"] == "online")
    back = threading.Event()
    bot.on("reconnect", lambda *args: back.set())
    _offline(bot, world, emulator)
    try:
        emulator.clear_requests()
        emits_before = emulator.emits()
        calls = {
            "set_status": lambda: bot.set_status("dnd"),
            "set_activity": lambda: bot.set_activity({"type": "playing", "name": "chess"}),
            "set_activity None": lambda: bot.set_activity(None),
            "set_presence status": lambda: bot.set_presence(status="idle"),
            "set_presence activity": lambda: bot.set_presence(activity={"type": "playing", "name": "go"}),
            "set_presence both": lambda: bot.set_presence({"status": "dnd", "activity": None}),
        }
        for label, call in calls.items():
            started = time.monotonic()
            with pytest.raises(ServiceAuthError):
                call()
            assert time.monotonic() - started < 0.5, label  # at once, not after a timeout
            assert bot.user.status == "online", label  # the local status is unchanged
        assert emulator.requests() == []  # no PATCH /users/settings
        assert emulator.emits() == emits_before
        assert emulator.presence(world.bot["publicId"])["status"] == "online"
    finally:
        emulator.set_outage(None)
    assert back.wait(10)
    bot.set_status("idle")  # works again once reconnected
    assert bot.user.status == "idle"


def test_set_activity_with_an_unknown_type_emits_nothing(bot, world, emulator):
    def activity_emits():
        return [e["payload"] for e in emulator.emits() if e["event"] == "activity:update"]

    bot.set_activity({"type": "playing", "name": "first"})
    assert wait_until(lambda: len(activity_emits()) == 1)
    for bad in ({"type": "dancing", "name": "x"}, {"type": None, "name": "x"}, {"name": "no type"}):
        with pytest.raises(ValueError, match="type"):
            bot.set_activity(bad)
        with pytest.raises(ValueError, match="type"):
            bot.set_presence(activity=bad)
    # a later valid emit on the same socket: once it is journaled, an earlier bad one would be too
    bot.set_activity({"type": "listening", "name": "sentinel"})
    assert wait_until(lambda: len(activity_emits()) >= 2)
    assert [p.get("name") for p in activity_emits()] == ["first", "sentinel"]
    assert emulator.presence(world.bot["publicId"])["activity"]["name"] == "sentinel"


# -- voice: leave(), deafened, e2ee key ------------------------------------------------------------


def test_voice_manager_leave_ends_the_connection_and_says_so(bot, human, world, emulator):
    channel = voice_channel(world)
    bot_id = world.bot["publicId"]
    bot.voice.leave()  # no connection: nothing happens, nothing is sent
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    assert wait_until(lambda: human.voice_states.cache.get(bot_id) is not None)
    bot.voice.leave()
    assert bot.voice.connection is None and not connection.connected
    assert wait_until(lambda: emulator.voice_users(channel["publicId"]) == [])
    assert wait_until(lambda: human.voice_states.cache.get(bot_id) is None)
    leaves = [e for e in emulator.emits() if e["event"] == "voice:leave"]
    assert len(leaves) == 1
    bot.voice.leave()  # idempotent
    connection.leave()
    with pytest.raises(Exception):
        connection.set_deafened(True)
    # joining again works after a leave
    again = bot.voice.join(channel["publicId"], timeout=5, media=False)
    assert again is not connection and again.connected
    assert len([e for e in emulator.emits() if e["event"] == "voice:leave"]) == 1


def test_set_deafened_is_seen_by_the_service_and_another_user(bot, human, world, emulator):
    channel = voice_channel(world)
    bot_id = world.bot["publicId"]
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    assert wait_until(lambda: human.voice_states.cache.get(bot_id) is not None)
    assert not human.voice_states.cache[bot_id].deafened
    connection.set_deafened(True)
    assert wait_until(lambda: any(u["userPublicId"] == bot_id and u["deafened"]
                                  for u in emulator.voice_users(channel["publicId"])))
    assert wait_until(lambda: human.voice_states.cache[bot_id].deafened)
    assert not human.voice_states.cache[bot_id].muted  # merged, nothing else changed
    connection.set_deafened(False)
    assert wait_until(lambda: not human.voice_states.cache[bot_id].deafened)
    assert [e["payload"] for e in emulator.emits() if e["event"] == "voice:state"] == [
        {"deafened": True}, {"deafened": False}]


def test_e2ee_key_is_none_by_default_and_carried_when_the_service_sends_one(bot, world, emulator):
    import requests

    channel = voice_channel(world)
    connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
    assert connection.e2ee_key is None
    connection.leave()
    key = "c2VjcmV0LWUyZWUta2V5LWZvci10ZXN0cw=="
    answer = requests.post(emulator.control_url + "/settings", json={"voiceE2eeKey": key}, timeout=5)
    assert answer.status_code in (200, 204), answer.text
    try:
        connection = bot.voice.join(channel["publicId"], timeout=5, media=False)
        assert connection.e2ee_key == key
    finally:
        requests.post(emulator.control_url + "/settings", json={"voiceE2eeKey": None}, timeout=5)
