"""Reactions, pins, bulk delete, kick/ban/unban with acks, bans, echo control, limit mode and
restarts."""

from __future__ import annotations

import time

import pytest
import requests

from service_client.emulator import Emulator

from .fuzzkit import RawSocket


def call(world, method, path, token, **kw):
    return requests.request(method, world.emulator.base_url + path, headers={"Authorization": f"Bearer {token}"},
                            timeout=5, **kw)


def _post(world, content="hello", author=None):
    author = author or world.human["publicId"]
    return world.emulator.post_message(world.general["publicId"], author, content)["message"]


def _ids(records):
    return [(r["emoji"], r["userPublicId"]) for r in records]


# ---------------------------------------------------------------------------------- reactions
def test_react_toggles_and_sends_full_snapshot(world, conns):
    bot, human = conns(world.bot_token), conns(world.human_token)
    msg = _post(world)
    bot.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "\U0001F44D"})
    snap = human.wait("message:reaction")
    assert snap["messagePublicId"] == msg["publicId"]
    assert _ids(snap["reactions"]) == [("\U0001F44D", world.bot["publicId"])]
    rec = snap["reactions"][0]
    assert rec["userName"] == "pingbot" and rec["messagePublicId"] == msg["publicId"] and rec["publicId"]
    human.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "\U0001F44D"})
    snap = bot.wait("message:reaction", check=lambda d: len(d["reactions"]) == 2)
    assert _ids(snap["reactions"]) == [("\U0001F44D", world.bot["publicId"]), ("\U0001F44D", world.human["publicId"])]
    bot.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "\U0001F44D"})  # toggles off
    snap = human.wait("message:reaction", check=lambda d: len(d["reactions"]) == 1)
    assert _ids(snap["reactions"]) == [("\U0001F44D", world.human["publicId"])]
    details = call(world, "GET", f"/chat/{world.general['publicId']}/reactions/{msg['publicId']}/details",
                   world.bot_token, params={"emoji": "x"}).json()
    assert details == {"reactions": [{"emoji": "\U0001F44D", "count": 1, "users": [
        {"publicId": world.human["publicId"], "name": "alice", "tag": world.human["tag"], "image": None}]}]}


def test_react_needs_add_reaction_and_view(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    msg = _post(world)
    everyone = next(r for r in emu.member(sid, world.bot["publicId"])["roles"] if r["name"] == "@everyone")
    emu.update_role(sid, everyone["publicId"], permissions=552448 & ~524288)     # no ADD_REACTION
    bot.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "x"})
    bot.call("fuzz:sync", timeout=5)
    assert emu.reactions(msg["publicId"]) == []
    with pytest.raises(PermissionError):
        emu.react(msg["publicId"], world.bot["publicId"], "x")
    assert emu.react(msg["publicId"], world.human["publicId"], "x") is True      # the owner may
    assert emu.react(msg["publicId"], world.human["publicId"], "x") is False     # toggled off


def test_reaction_clear_needs_manage_messages(world, conns):
    emu = world.emulator
    bot, human = conns(world.bot_token), conns(world.human_token)
    msg = _post(world)
    emu.react(msg["publicId"], world.bot["publicId"], "a")
    emu.react(msg["publicId"], world.human["publicId"], "b")
    bot.emit("message:reaction_clear", {"messagePublicId": msg["publicId"]})   # no MANAGE_MESSAGES
    bot.call("fuzz:sync", timeout=5)
    assert len(emu.reactions(msg["publicId"])) == 2
    human.emit("message:reaction_clear", {"messagePublicId": msg["publicId"]})
    assert bot.wait("message:reaction_clear") == {"messagePublicId": msg["publicId"]}
    assert emu.reactions(msg["publicId"]) == []


def test_message_delete_drops_reactions_and_pin(world, conns):
    emu = world.emulator
    human = conns(world.human_token)
    msg = _post(world)
    emu.react(msg["publicId"], world.bot["publicId"], "a")
    assert call(world, "POST", f"/chat/{world.general['publicId']}/pin/{msg['publicId']}",
                world.human_token).status_code == 204
    human.emit("message:delete", {"messagePublicId": msg["publicId"]})
    human.wait("message:deleted")
    tables = emu.snapshot()["tables"]
    assert tables["reactions"] == [] and tables["pins"] == []


# ---------------------------------------------------------------------------------- pins
def test_pin_unpin_and_list(world, conns):
    bot = conns(world.bot_token)
    cid = world.general["publicId"]
    first, second = _post(world, "one <b>"), _post(world, "two")
    assert call(world, "POST", f"/chat/{cid}/pin/{first['publicId']}", world.bot_token).status_code == 403
    for msg in (first, second):
        assert call(world, "POST", f"/chat/{cid}/pin/{msg['publicId']}", world.human_token).status_code == 204
        assert bot.wait("message:pinned") == {"messagePublicId": msg["publicId"], "channelPublicId": cid,
                                              "pinned": True}
    pins = call(world, "GET", f"/chat/{cid}/pins", world.bot_token).json()["pins"]
    assert [p["publicId"] for p in pins] == [second["publicId"], first["publicId"]]
    assert pins[1]["content"] == "one &lt;b&gt;" and pins[1]["pinned"] is True
    assert call(world, "POST", f"/chat/{cid}/pin/{first['publicId']}", world.human_token).status_code == 204
    assert bot.none("message:pinned")                                     # already pinned: no event
    assert call(world, "DELETE", f"/chat/{cid}/pin/{first['publicId']}", world.human_token).status_code == 204
    assert bot.wait("message:pinned")["pinned"] is False
    assert [p["publicId"] for p in world.emulator.pins(cid)] == [second["publicId"]]
    other = next(c for c in world.channels if c["name"] == "random")["publicId"]
    r = call(world, "POST", f"/chat/{other}/pin/{second['publicId']}", world.human_token)
    assert r.status_code == 404 and r.json()["error"] == "messages.errors.not_found"


def test_pin_in_dm_by_participant(world):
    emu = world.emulator
    dm = call(world, "GET", f"/channels/dm/{world.bot['publicId']}", world.human_token).json()
    msg = emu.post_message(dm["publicId"], world.human["publicId"], "psst")["message"]
    assert call(world, "POST", f"/chat/{dm['publicId']}/pin/{msg['publicId']}", world.bot_token).status_code == 204
    assert [p["publicId"] for p in call(world, "GET", f"/chat/{dm['publicId']}/pins",
                                        world.human_token).json()["pins"]] == [msg["publicId"]]


# ---------------------------------------------------------------------------------- bulk delete
def test_bulk_delete(world, conns):
    bot = conns(world.bot_token)
    cid = world.general["publicId"]
    msgs = [_post(world, f"m{i}") for i in range(4)]
    other = world.emulator.post_message(next(c for c in world.channels if c["name"] == "random")["publicId"],
                                        world.human["publicId"], "elsewhere")["message"]
    ids = [msgs[0]["publicId"], msgs[2]["publicId"], other["publicId"], "nope", msgs[0]["publicId"]]
    assert call(world, "POST", f"/channels/{cid}/messages/bulk-delete", world.bot_token,
                json={"messageIds": ids}).status_code == 403
    assert call(world, "POST", f"/channels/{cid}/messages/bulk-delete", world.human_token,
                json={"messageIds": ids}).status_code == 204
    deleted = [bot.wait("message:deleted") for _ in range(2)]
    assert [d["messagePublicId"] for d in deleted] == [msgs[0]["publicId"], msgs[2]["publicId"]]
    assert deleted[0] == {"publicId": msgs[0]["publicId"], "messagePublicId": msgs[0]["publicId"],
                          "channelPublicId": cid, "serverPublicId": world.server["publicId"]}
    assert bot.none("message:deleted")
    assert [m["content"] for m in world.emulator.messages(cid)] == ["m1", "m3"]
    for bad in ({"messageIds": []}, {"messageIds": [str(i) for i in range(101)]}, {"messageIds": "x"}, {}):
        assert call(world, "POST", f"/channels/{cid}/messages/bulk-delete", world.human_token,
                    json=bad).status_code == 400


# ---------------------------------------------------------------------------------- kick, ban, unban
def test_kick_acks_then_fans_out(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    human = RawSocket(emu, world.human_token)
    carol = emu.create_user("carol")
    emu.add_member(sid, carol["user"]["publicId"])
    target = conns(carol["token"])
    ack_id = human.emit("server:kick", {"serverPublicId": sid, "userPublicId": carol["user"]["publicId"]}, ack=True)
    assert human.wait_ack(ack_id) == [{}]
    removed = bot.wait("server:member_removed")
    assert removed == {"serverPublicId": sid, "memberPublicId": carol["user"]["publicId"], "reason": "kicked"}
    assert target.wait("server:you_removed") == {"serverPublicId": sid}
    human.probe()
    wire = [f for f in human.frames if f.startswith(f"3{ack_id}") or "server:member_removed" in f]
    assert wire[0].startswith(f"3{ack_id}") and "server:member_removed" in wire[1]      # the ack comes first
    human.close()
    with pytest.raises(LookupError):
        emu.member(sid, carol["user"]["publicId"])
    emu.post_message(world.general["publicId"], world.human["publicId"], "after the kick")
    bot.wait("message:new")
    assert target.none("message:new")                                    # out of the rooms at once


@pytest.mark.parametrize("event,payload,error", [
    ("server:kick", {"userPublicId": "OWNER"}, "servers.errors.cannot_kick_owner"),
    ("server:ban", {"userPublicId": "OWNER"}, "servers.errors.cannot_ban_owner"),
    ("server:kick", {"userPublicId": "123"}, "servers.errors.not_found"),
    ("server:kick", {"serverPublicId": "999"}, "servers.errors.not_found"),
    ("server:unban", {}, "servers.errors.not_banned"),
    ("server:ban", {"deleteHistory": "2d"}, "servers.errors.invalid_request"),
    ("server:kick", {"userPublicId": 5}, "servers.errors.invalid_request"),
])
def test_moderation_error_acks(world, conns, event, payload, error):
    human = conns(world.human_token)
    body = {"serverPublicId": world.server["publicId"], "userPublicId": world.bot["publicId"]}
    body.update(payload)
    if body["userPublicId"] == "OWNER":
        body["userPublicId"] = world.human["publicId"]
    before = world.emulator.snapshot()
    assert human.call(event, body, timeout=5) == {"error": error}
    assert world.emulator.snapshot() == before


def test_moderation_needs_permission(world, conns):
    bot = conns(world.bot_token)
    sid = world.server["publicId"]
    carol = world.emulator.create_user("carol")
    world.emulator.add_member(sid, carol["user"]["publicId"])
    for event in ("server:kick", "server:ban", "server:unban"):
        assert bot.call(event, {"serverPublicId": sid, "userPublicId": carol["user"]["publicId"]},
                               timeout=5) == {"error": "servers.errors.missing_permission"}
    stranger = world.emulator.create_user("eve")
    eve = conns(stranger["token"])
    assert eve.call("server:kick", {"serverPublicId": sid, "userPublicId": carol["user"]["publicId"]},
                           timeout=5) == {"error": "servers.errors.not_found"}


def test_ban_unban_bans_list_and_history(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    human, bot = conns(world.human_token), conns(world.bot_token)
    carol = emu.create_user("carol")
    cu = carol["user"]["publicId"]
    emu.add_member(sid, cu)
    target = conns(carol["token"])
    old = emu.post_message(world.general["publicId"], cu, "spam")["message"]
    bot.wait("message:new")
    ack = human.call("server:ban", {"serverPublicId": sid, "userPublicId": cu, "reason": "spam",
                                           "deleteHistory": "1d"}, timeout=5)
    assert ack == {}
    assert bot.wait("server:member_removed") == {"serverPublicId": sid, "memberPublicId": cu, "reason": "banned"}
    assert bot.wait("message:deleted")["messagePublicId"] == old["publicId"]
    assert target.wait("server:you_removed") == {"serverPublicId": sid}
    assert emu.messages(world.general["publicId"]) == []
    bans = call(world, "GET", f"/servers/{sid}/bans", world.human_token).json()["bans"]
    assert len(bans) == 1 and bans[0]["reason"] == "spam" and bans[0]["user"] == {
        "publicId": cu, "name": "carol", "tag": carol["user"]["tag"], "image": None}
    assert bans[0]["publicId"] and bans[0]["createdAt"].endswith("Z")
    assert call(world, "GET", f"/servers/{sid}/bans", world.bot_token).status_code == 403
    assert human.call("server:ban", {"serverPublicId": sid, "userPublicId": cu}, timeout=5) == \
        {"error": "servers.errors.already_banned"}
    with pytest.raises(ValueError):
        emu.add_member(sid, cu)                                       # banned users cannot join
    assert human.call("server:unban", {"serverPublicId": sid, "userPublicId": cu}, timeout=5) == {}
    assert bot.wait("server:ban_revoked") == {"serverPublicId": sid, "userPublicId": cu}
    assert emu.bans(sid) == []
    emu.add_member(sid, cu)


def test_control_ban_of_a_non_member(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    bot = conns(world.bot_token)
    dave = emu.create_user("dave")["user"]["publicId"]
    emu.ban(sid, dave, reason=None)
    assert bot.none("server:member_removed")                          # was not a member
    assert [b["user"]["publicId"] for b in emu.bans(sid)] == [dave]
    r = requests.delete(f"{emu.control_url}/servers/{sid}/bans/{dave}", json={}, timeout=5)
    assert r.status_code == 204 and bot.wait("server:ban_revoked")["userPublicId"] == dave
    with pytest.raises(ValueError):
        emu.unban(sid, dave)


def test_kicked_voice_user_leaves_voice(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    voice = next(c for c in world.channels if c["type"] == "VOICE")["publicId"]
    human, bot = conns(world.human_token), conns(world.bot_token)
    bot.emit("voice:join", {"channelPublicId": voice})
    bot.wait("voice:livekit-token")
    assert human.call("server:kick", {"serverPublicId": sid, "userPublicId": world.bot["publicId"]},
                             timeout=5) == {}
    left = bot.wait("voice:user-left")                                # the leaver itself learns it
    assert left["userPublicId"] == world.bot["publicId"] and left["users"] == []
    assert emu.voice_users(voice) == []


# ---------------------------------------------------------------------------------- echo control
def _send(conn, world, nonce, content="hi"):
    conn.emit("message:send", {"channelPublicId": world.general["publicId"], "content": content,
                                      "embeds": [], "nonce": nonce})


def test_echo_drop_and_duplicate(world, conns):
    emu = world.emulator
    bot, human = conns(world.bot_token), conns(world.human_token)
    emu.configure(echo="drop")
    _send(bot, world, "n1")
    assert human.wait("message:new")["nonce"] == "n1"                # others still get it
    assert bot.none("message:new")
    emu.configure(echo="duplicate")
    _send(bot, world, "n2")
    assert [bot.wait("message:new")["nonce"] for _ in range(2)] == ["n2", "n2"]
    assert human.wait("message:new")["nonce"] == "n2" and human.none("message:new")
    emu.configure(echo="normal")
    _send(bot, world, "n3")
    assert bot.wait("message:new")["nonce"] == "n3" and bot.none("message:new")


def test_echo_delay(world, conns):
    emu = world.emulator
    bot, human = conns(world.bot_token), conns(world.human_token)
    emu.configure(echo="delay", echo_delay_ms=400)
    start = time.monotonic()
    _send(bot, world, "late")
    assert human.wait("message:new")["nonce"] == "late"               # others get it without the delay
    assert bot.wait("message:new")["nonce"] == "late"
    assert time.monotonic() - start >= 0.4                             # the sender's echo waited its delay
    assert time.monotonic() - start >= 0.4
    with pytest.raises(ValueError):
        emu.configure(echo="sometimes")
    r = requests.post(f"{emu.control_url}/settings", json={"echo": "drop", "echoDelayMs": 10}, timeout=5)
    assert r.status_code == 204
    assert requests.post(f"{emu.control_url}/settings", json={"echoDelayMs": -1}, timeout=5).status_code == 400
    emu.reset()
    assert emu.core.rt.echo == "normal"


# ---------------------------------------------------------------------------------- limit mode
@pytest.mark.parametrize("content,embeds", [
    ("x" * 4001, []),
    ("ok", [{"title": "t" * 257}]),
    ("ok", [{"description": "d" * 4097}]),
    ("ok", [{"fields": [{"name": "n", "value": "v"}] * 26}]),
    ("ok", [{"fields": [{"name": "n" * 257, "value": "v"}]}]),
    ("ok", [{"fields": [{"name": "n", "value": "v" * 1025}]}]),
    ("ok", [{"description": "d" * 4000, "fields": [{"name": "n", "value": "v" * 1000}] * 3}]),   # total > 6000
    ("ok", [{}] * 11),
])
def test_limit_mode_drops_sends(world, conns, content, embeds):
    emu = world.emulator
    bot = conns(world.bot_token)
    emu.configure(limits=True, send_errors=True)
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": content,
                                     "embeds": embeds, "nonce": "big"})
    assert bot.wait("message:error")["nonce"] == "big"
    assert emu.messages(world.general["publicId"]) == []
    emu.configure(limits=False)
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": content,
                                     "embeds": embeds, "nonce": "fine"})
    assert bot.wait("message:new")["nonce"] == "fine"                 # accepted without the limits


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_an_empty_or_whitespace_send_is_answered_with_an_error_event(world, conns, content):
    # never dropped silently: message:error names the rule, with send_errors off (the default)
    bot = conns(world.bot_token)
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": content, "nonce": "blank"})
    assert bot.wait("message:error") == {"nonce": "blank", "error": "messages.errors.empty"}
    assert world.emulator.messages(world.general["publicId"]) == []


def test_limit_mode_refusals_are_answered_without_send_errors(world, conns):
    world.emulator.configure(limits=True)
    bot = conns(world.bot_token)
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": "x" * 4001, "nonce": "long"})
    assert bot.wait("message:error") == {"nonce": "long", "error": "messages.errors.too_long"}


def test_an_edit_to_whitespace_is_answered_with_an_error_event(world, conns):
    bot = conns(world.bot_token)
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": "first", "nonce": "a"})
    mid = bot.wait("message:new")["publicId"]
    bot.emit("message:edit", {"messagePublicId": mid, "content": "  ", "embeds": []})
    assert bot.wait("message:error") == {"messagePublicId": mid, "error": "messages.errors.empty"}
    assert world.emulator.messages(world.general["publicId"])[0]["content"] == "first"


def test_limit_mode_accepts_at_the_limits(world, conns):
    world.emulator.configure(limits=True)
    bot = conns(world.bot_token)
    embed = {"title": "t" * 256, "description": "d" * 2000, "fields": [{"name": "n", "value": "v" * 1024}] * 3,
             "footer": {"text": "f" * 100}}
    bot.emit("message:send", {"channelPublicId": world.general["publicId"], "content": "c" * 4000,
                                     "embeds": [embed], "nonce": "edge"})
    assert bot.wait("message:new")["nonce"] == "edge"


# ---------------------------------------------------------------------------------- restarts
def test_new_emulator_on_the_port_of_a_stopped_one_with_a_client_connected():
    first = Emulator().start()
    port = first.port
    user = first.create_user("u")
    conn = RawSocket(first, user["token"])
    first.stop()
    assert not first.running
    assert conn.closed.wait(5)                                        # its connection was closed
    second = Emulator(port=port).start()
    try:
        assert second.port == port
        again = second.create_user("v")
        r = requests.get(second.base_url + "/auth/me", headers={"Authorization": f"Bearer {again['token']}"},
                         timeout=5)
        assert r.status_code == 200
    finally:
        conn.close()
        second.stop()


def test_restart_keeps_state_and_port():
    emu = Emulator().start()
    try:
        port = emu.port
        user = emu.create_user("kept")
        emu.add_fault("GET", "/servers", status=503, count=None)
        conn = RawSocket(emu, user["token"])
        emu.restart()
        assert emu.running and emu.port == port
        assert conn.closed.wait(5)                                    # its connection was closed
        headers = {"Authorization": f"Bearer {user['token']}"}
        assert requests.get(emu.base_url + "/auth/me", headers=headers, timeout=5).json()["user"]["name"] == "kept"
        assert requests.get(emu.base_url + "/servers", headers=headers, timeout=5).status_code == 503
        again = RawSocket(emu, user["token"])
        again.probe()
        assert emu.connection_count() == 1
        again.close()
        conn.close()
        emu.stop(keep_state=True)
        emu.start()                                                   # stop + start also keeps it
        assert emu.user(user["user"]["publicId"])["name"] == "kept"
    finally:
        emu.stop()
    with pytest.raises(RuntimeError):
        emu.restart()
