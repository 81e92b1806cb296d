"""Permission overwrites, private channels, categories and channel copies in the emulator.

Overwrites and ``isPrivate`` take effect for VIEW_CHANNELS and SEND_MESSAGES: a member who may not
view a channel does not get it in listings, is refused every read of it, receives none of its
socket events and cannot post in it; every change moves that member's sockets into or out of the
channel's room at once. Raw HTTP and raw (ordered) socket clients, real sockets.
"""

from __future__ import annotations

import json

import pytest

from .fuzzkit import RawHttp, RawSocket, assert_error_body

VIEW, SEND = 512, 1024


class Api:
    """REST calls as one user (raw HTTP, JSON in and out)."""

    def __init__(self, emu, token):
        host, port = emu.socket_url.split("//")[1].split(":")
        self.http = RawHttp(host, int(port))
        self.token = token

    def __call__(self, method, path, body=None):
        payload = None if body is None else json.dumps(body).encode()
        status, data, ctype = self.http.request(method, "/api/v2" + path, payload, self.token)
        if status >= 400:
            assert_error_body(status, data, ctype)
        return status, (json.loads(data) if data else None)


@pytest.fixture
def env(world):
    """alice (owner), the bot (member), carol and dave (plain members), a Staff role held by dave."""
    emu = world.emulator
    sid = world.server["publicId"]
    carol = emu.create_user("carol")
    dave = emu.create_user("dave")
    staff = emu.create_role(sid, "Staff", 0)["role"]
    emu.add_member(sid, carol["user"]["publicId"])
    emu.add_member(sid, dave["user"]["publicId"], role_ids=[staff["publicId"]])
    everyone = next(r for r in emu.member(sid, carol["user"]["publicId"])["roles"] if r["name"] == "@everyone")
    apis = {"alice": Api(emu, world.human_token), "carol": Api(emu, carol["token"]), "dave": Api(emu, dave["token"]),
            "bot": Api(emu, world.bot_token)}
    sockets: list[RawSocket] = []

    def sock(token):
        s = RawSocket(emu, token)
        sockets.append(s)
        return s

    ns = type("Env", (), {})()
    ns.emu, ns.world, ns.sid, ns.gid = emu, world, sid, world.general["publicId"]
    ns.carol, ns.dave, ns.staff, ns.everyone = carol, dave, staff, everyone
    ns.api, ns.sock = apis, sock
    ns.cu, ns.du = carol["user"]["publicId"], dave["user"]["publicId"]
    yield ns
    for s in sockets:
        s.close()
    for a in apis.values():
        a.http.close()


def listed(api, sid):
    status, data = api("GET", f"/servers/{sid}/categories")
    assert status == 200
    return {c["publicId"] for cat in data["categories"] for c in cat["channels"]} | \
        {c["publicId"] for c in data["uncategorizedChannels"]}


def reads(api, cid):
    """The statuses of every read of a channel's content."""
    return [api("GET", path)[0] for path in (f"/channels/{cid}", f"/chat/{cid}", f"/chat/{cid}/search?q=hello",
                                             f"/chat/{cid}/pins")]


def override(api, cid, target, kind, allow=0, deny=0):
    return api("POST", f"/channels/{cid}/overrides", {"targetId": target, "type": kind, "allow": str(allow),
                                                      "deny": str(deny)})


def saw_message(sock, viewer, send, content):
    """Post through ``send`` and report whether ``sock`` received it, with no sleep: ``viewer``
    (a socket that may view the channel) receives it first, then a probe round trip on ``sock``
    proves anything queued for it before has arrived."""
    send(content)
    while True:
        event, data = viewer.events.get(timeout=5)
        if event == "message:new" and data["content"] == content:
            break
    sock.probe()
    return any(e == "message:new" and d["content"] == content for e, d in sock.drain())


# ---------------------------------------------------------------------------------- records and rules
def test_override_records_create_replace_delete(env):
    alice, gid = env.api["alice"], env.gid
    assert alice("GET", f"/channels/{gid}/overrides") == (200, {"overrides": []})
    assert override(alice, gid, env.staff["publicId"], "ROLE", allow=VIEW | SEND) == (204, None)
    assert override(alice, gid, env.cu, "MEMBER", deny=SEND) == (204, None)
    status, data = alice("GET", f"/channels/{gid}/overrides")
    first, second = data["overrides"]
    assert first == {"id": first["id"], "type": "ROLE", "targetId": env.staff["publicId"], "targetName": "Staff",
                     "allow": str(VIEW | SEND), "deny": "0"}
    assert second["type"] == "MEMBER" and second["targetName"] == "carol" and second["deny"] == str(SEND)
    assert override(alice, gid, env.staff["publicId"], "ROLE", deny=VIEW)[0] == 204      # replaces, keeps the id
    data = alice("GET", f"/channels/{gid}/overrides")[1]["overrides"]
    assert [o["id"] for o in data] == [first["id"], second["id"]] and data[0]["deny"] == str(VIEW)
    assert alice("DELETE", f"/channels/{gid}/overrides/{first['id']}") == (204, None)
    assert alice("DELETE", f"/channels/{gid}/overrides/{first['id']}")[0] == 404
    assert [o["id"] for o in alice("GET", f"/channels/{gid}/overrides")[1]["overrides"]] == [second["id"]]


@pytest.mark.parametrize("body,error", [
    ({"targetId": "nope", "type": "ROLE"}, "roles.errors.not_found"),
    ({"type": "MEMBER"}, "targetId"),
    ({"targetId": "x", "type": "USER"}, "type"),
    ({"targetId": "x", "type": "ROLE", "allow": "512", "deny": "512"}, "allow and deny"),
    ({"targetId": "x", "type": "ROLE", "allow": str(1 << 25)}, "unknown permission bits"),
    ({"targetId": "x", "type": "ROLE", "deny": "-1"}, "deny"),
])
def test_bad_override_bodies_are_400(env, body, error):
    before = env.emu.snapshot()
    status, data = env.api["alice"]("POST", f"/channels/{env.gid}/overrides", body)
    assert status == 400 and error in data["error"]
    assert env.emu.snapshot() == before


def test_override_targets_must_belong_to_the_server(env):
    eve = env.emu.create_user("eve")["user"]["publicId"]
    other = env.emu.create_server("other", env.world.human["publicId"])["server"]["publicId"]
    foreign_role = env.emu.create_role(other, "foreign", 0)["role"]["publicId"]
    assert override(env.api["alice"], env.gid, eve, "MEMBER", allow=VIEW)[1] == {"error": "members.errors.not_found"}
    assert override(env.api["alice"], env.gid, foreign_role, "ROLE")[1] == {"error": "roles.errors.not_found"}


def test_managing_needs_manage_channels_reading_needs_view_or_manage(env):
    gid = env.gid
    assert override(env.api["carol"], gid, env.cu, "MEMBER", allow=VIEW)[0] == 403
    assert env.api["carol"]("GET", f"/channels/{gid}/overrides")[0] == 200           # a viewer may read them
    override(env.api["alice"], gid, env.everyone["publicId"], "ROLE", deny=VIEW)
    assert env.api["carol"]("GET", f"/channels/{gid}/overrides")[0] == 403           # not any more
    manager = env.emu.create_role(env.sid, "manager", 4)["role"]["publicId"]          # MANAGE_CHANNELS only
    env.emu.update_member(env.sid, env.cu, roles=[manager])
    assert env.api["carol"]("GET", f"/channels/{gid}/overrides")[0] == 200           # a manager may, unseen
    assert reads(env.api["carol"], gid) == [403, 403, 403, 403]
    assert override(env.api["carol"], gid, env.cu, "MEMBER", allow=VIEW)[0] == 204
    assert reads(env.api["carol"], gid) == [200, 200, 200, 200]


# ---------------------------------------------------------------------------------- visibility
def test_denied_view_hides_the_channel_everywhere_for_that_member_only(env):
    alice, carol, dave = env.api["alice"], env.api["carol"], env.api["dave"]
    gid = env.gid
    msg = env.emu.post_message(gid, env.world.human["publicId"], "hello there")["message"]
    env.emu.react(msg["publicId"], env.world.human["publicId"], "x")
    override(alice, gid, env.everyone["publicId"], "ROLE", deny=VIEW)
    override(alice, gid, env.staff["publicId"], "ROLE", allow=VIEW)
    assert gid not in listed(carol, env.sid) and gid in listed(dave, env.sid) and gid in listed(alice, env.sid)
    assert reads(carol, gid) == [403, 403, 403, 403]
    assert carol("GET", f"/chat/{gid}/reactions/{msg['publicId']}/details?emoji=x")[0] == 403
    assert reads(dave, gid) == [200, 200, 200, 200]
    assert reads(alice, gid) == [200, 200, 200, 200]                                    # the owner sees all
    # A member override beats the role overrides, both ways.
    override(alice, gid, env.cu, "MEMBER", allow=VIEW)
    override(alice, gid, env.du, "MEMBER", deny=VIEW)
    assert reads(carol, gid) == [200, 200, 200, 200] and reads(dave, gid) == [403, 403, 403, 403]
    # ADMINISTRATOR is never restricted.
    admin = env.emu.create_role(env.sid, "admin", 2147483648)["role"]["publicId"]
    env.emu.update_member(env.sid, env.du, roles=[admin])
    assert reads(dave, gid) == [200, 200, 200, 200]


def test_private_channel_is_seen_only_through_an_allow(env):
    alice, carol, dave = env.api["alice"], env.api["carol"], env.api["dave"]
    status, data = alice("POST", f"/servers/{env.sid}/channels", {"name": "secret", "type": "TEXT",
                                                                   "isPrivate": True})
    cid = data["channel"]["publicId"]
    assert status == 201 and data["channel"]["isPrivate"] is True
    assert cid not in listed(carol, env.sid) and cid not in listed(dave, env.sid) and cid in listed(alice, env.sid)
    override(alice, cid, env.staff["publicId"], "ROLE", allow=VIEW)
    assert cid in listed(dave, env.sid) and cid not in listed(carol, env.sid)
    assert reads(carol, cid) == [403, 403, 403, 403]
    # an @everyone allow opens it to all
    override(alice, cid, env.everyone["publicId"], "ROLE", allow=VIEW)
    assert cid in listed(carol, env.sid)


def test_denied_send_refuses_posts_but_keeps_reading(env):
    gid = env.gid
    override(env.api["alice"], gid, env.cu, "MEMBER", deny=SEND)
    carol, alice = env.sock(env.carol["token"]), env.sock(env.world.human_token)
    before = env.emu.snapshot()
    carol.emit("message:send", {"channelPublicId": gid, "content": "blocked", "embeds": [], "nonce": "n1"})
    carol.probe()
    assert env.emu.snapshot() == before and alice.drain() == []
    assert reads(env.api["carol"], gid) == [200, 200, 200, 200]
    assert saw_message(carol, alice, lambda c: env.emu.post_message(gid, env.du, c), "still delivered")


def test_hidden_member_gets_no_channel_events_and_cannot_act(env):
    gid = env.gid
    carol, alice = env.sock(env.carol["token"]), env.sock(env.world.human_token)
    msg = env.emu.post_message(gid, env.cu, "mine")["message"]
    override(env.api["alice"], gid, env.cu, "MEMBER", deny=VIEW)
    carol.probe()
    carol.drain()
    before = env.emu.snapshot()
    for event, payload in (("message:send", {"channelPublicId": gid, "content": "x", "embeds": [], "nonce": "n"}),
                           ("message:edit", {"messagePublicId": msg["publicId"], "content": "edited", "embeds": []}),
                           ("message:react", {"messagePublicId": msg["publicId"], "emoji": "z"}),
                           ("message:delete", {"messagePublicId": msg["publicId"]})):
        carol.emit(event, payload)
    carol.emit("typing:start", gid)
    carol.probe()
    assert env.emu.snapshot() == before
    alice.emit("typing:start", gid)
    alice.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "y"})
    assert not saw_message(carol, alice, lambda c: env.emu.post_message(gid, env.du, c), "hidden")
    assert [e for e, _ in carol.drain()] == []


@pytest.mark.parametrize("how", ["member override", "role override", "private flag", "role given"])
def test_rooms_follow_every_visibility_change_at_once(env, how):
    """The member's socket leaves the room the moment it loses the view and enters it the moment
    it gains it back, with no reconnect."""
    alice_api, gid, emu = env.api["alice"], env.gid, env.emu
    carol, alice = env.sock(env.carol["token"]), env.sock(env.world.human_token)

    def post(content):
        emu.post_message(gid, env.du, content)

    assert saw_message(carol, alice, post, "before")
    if how == "member override":
        override(alice_api, gid, env.cu, "MEMBER", deny=VIEW)
    elif how == "private flag":          # a private category, then a channel sync
        cat = env.world.general["categoryId"]
        assert alice_api("PATCH", f"/servers/{env.sid}/categories/{cat}", {"isPrivate": True})[0] == 204
        assert gid in emu.channel_ids_of_rooms(env.cu)
        assert alice_api("POST", f"/channels/{gid}/sync")[0] == 204
    else:
        override(alice_api, gid, env.everyone["publicId"], "ROLE", deny=VIEW)
    assert gid not in emu.channel_ids_of_rooms(env.cu)
    assert not saw_message(carol, alice, post, "while hidden")
    if how == "role given":
        override(alice_api, gid, env.staff["publicId"], "ROLE", allow=VIEW)
        assert gid not in emu.channel_ids_of_rooms(env.cu)
        emu.update_member(env.sid, env.cu, roles=[env.staff["publicId"]])
    else:
        override(alice_api, gid, env.cu, "MEMBER", allow=VIEW)
    assert gid in emu.channel_ids_of_rooms(env.cu)
    assert saw_message(carol, alice, post, "after")


def test_realistic_rooms_never_add_but_always_remove(env):
    env.emu.configure(realistic_rooms=True)
    gid = env.gid
    carol, alice = env.sock(env.carol["token"]), env.sock(env.world.human_token)
    override(env.api["alice"], gid, env.cu, "MEMBER", deny=VIEW)
    assert gid not in env.emu.channel_ids_of_rooms(env.cu)
    override(env.api["alice"], gid, env.cu, "MEMBER", allow=VIEW)
    assert gid not in env.emu.channel_ids_of_rooms(env.cu)       # until a reconnect
    assert not saw_message(carol, alice, lambda c: env.emu.post_message(gid, env.du, c), "unseen")
    again = env.sock(env.carol["token"])
    assert gid in env.emu.channel_ids_of_rooms(env.cu)
    assert saw_message(again, alice, lambda c: env.emu.post_message(gid, env.du, c), "seen")


# ---------------------------------------------------------------------------------- categories and copies
def test_category_edit_delete_and_the_listing(env):
    alice, carol = env.api["alice"], env.api["carol"]
    sid = env.sid
    bot = env.sock(env.world.bot_token)
    status, data = alice("POST", f"/servers/{sid}/categories", {"name": "Ops"})
    cat = data["category"]
    assert status == 201 and cat["channels"] == [] and cat["isPrivate"] is False
    assert bot.events.get(timeout=5) == ("server:categories_updated", {"serverPublicId": sid})
    chan = alice("POST", f"/servers/{sid}/channels", {"name": "ops-chat", "type": "TEXT",
                                                      "categoryId": cat["publicId"]})[1]["channel"]
    assert bot.events.get(timeout=5) == ("server:channels_updated", {"serverPublicId": sid})
    assert alice("PATCH", f"/servers/{sid}/categories/{cat['publicId']}", {"name": "Operations",
                                                                          "isPrivate": True}) == (204, None)
    assert bot.events.get(timeout=5) == ("server:categories_updated", {"serverPublicId": sid})
    cats = {c["publicId"]: c for c in alice("GET", f"/servers/{sid}/categories")[1]["categories"]}
    assert cats[cat["publicId"]]["name"] == "Operations" and cats[cat["publicId"]]["isPrivate"] is True
    # a private category is not pushed onto its existing channels until a sync
    assert chan["publicId"] in listed(carol, sid)
    assert alice("PATCH", f"/servers/{sid}/categories/{cat['publicId']}", {"name": ""})[0] == 400
    assert alice("PATCH", f"/servers/{sid}/categories/{cat['publicId']}", {"isPrivate": "yes"})[0] == 400
    assert carol("PATCH", f"/servers/{sid}/categories/{cat['publicId']}", {"name": "mine"})[0] == 403
    assert alice("DELETE", f"/servers/{sid}/categories/{cat['publicId']}") == (204, None)
    assert [bot.events.get(timeout=5) for _ in range(2)] == [
        ("server:categories_updated", {"serverPublicId": sid}), ("server:channels_updated", {"serverPublicId": sid})]
    data = alice("GET", f"/servers/{sid}/categories")[1]
    assert cat["publicId"] not in {c["publicId"] for c in data["categories"]}
    moved = next(c for c in data["uncategorizedChannels"] if c["publicId"] == chan["publicId"])
    assert moved["categoryId"] is None
    assert alice("DELETE", f"/servers/{sid}/categories/{cat['publicId']}")[0] == 404


def test_hidden_category_without_visible_channels_is_left_out(env):
    alice, carol = env.api["alice"], env.api["carol"]
    cat = alice("POST", f"/servers/{env.sid}/categories", {"name": "Staff room"})[1]["category"]["publicId"]
    alice("PATCH", f"/servers/{env.sid}/categories/{cat}", {"isPrivate": True})
    names = lambda api: {c["publicId"] for c in api("GET", f"/servers/{env.sid}/categories")[1]["categories"]}  # noqa: E731
    assert cat in names(alice) and cat not in names(carol)
    assert carol("GET", f"/servers/{env.sid}/categories/{cat}/overrides")[0] == 403
    assert alice("GET", f"/servers/{env.sid}/categories/{cat}/overrides") == (200, {"overrides": []})


def test_channels_inherit_and_sync_their_category(env):
    alice, carol = env.api["alice"], env.api["carol"]
    sid = env.sid
    cat = alice("POST", f"/servers/{sid}/categories", {"name": "Tickets"})[1]["category"]["publicId"]
    # category overrides go through the channel routes with the category's id
    assert override(alice, cat, env.staff["publicId"], "ROLE", allow=VIEW | SEND) == (204, None)
    assert override(alice, cat, env.everyone["publicId"], "ROLE", deny=VIEW) == (204, None)
    listed_cat = alice("GET", f"/servers/{sid}/categories/{cat}/overrides")[1]["overrides"]
    assert [(o["targetId"], o["allow"], o["deny"]) for o in listed_cat] == [
        (env.staff["publicId"], str(VIEW | SEND), "0"), (env.everyone["publicId"], "0", str(VIEW))]
    assert alice("GET", f"/channels/{cat}/overrides")[1]["overrides"] == listed_cat
    born = alice("POST", f"/servers/{sid}/channels", {"name": "t-1", "type": "TEXT", "categoryId": cat})[1]
    born_id = born["channel"]["publicId"]
    got = alice("GET", f"/channels/{born_id}/overrides")[1]["overrides"]
    assert [(o["targetId"], o["allow"], o["deny"]) for o in got] == \
        [(o["targetId"], o["allow"], o["deny"]) for o in listed_cat]
    assert {o["id"] for o in got}.isdisjoint({o["id"] for o in listed_cat})          # copies, not shared rows
    assert born_id not in listed(carol, sid) and born_id in listed(env.api["dave"], sid)
    # a channel's own change, then a sync puts the category's back
    override(alice, born_id, env.cu, "MEMBER", allow=VIEW)
    assert born_id in listed(carol, sid)
    assert alice("POST", f"/channels/{born_id}/sync") == (204, None)
    assert born_id not in listed(carol, sid)
    assert len(alice("GET", f"/channels/{born_id}/overrides")[1]["overrides"]) == 2
    # a category sync reaches every channel of the category, privacy included
    other = alice("POST", f"/servers/{sid}/channels", {"name": "t-2", "type": "TEXT", "categoryId": cat})[1]
    other_id = other["channel"]["publicId"]
    override(alice, other_id, env.everyone["publicId"], "ROLE", allow=VIEW)
    alice("PATCH", f"/servers/{sid}/categories/{cat}", {"isPrivate": True})
    assert other_id in listed(carol, sid)
    assert alice("POST", f"/servers/{sid}/categories/{cat}/sync") == (204, None)
    assert other_id not in listed(carol, sid)
    assert alice("GET", f"/channels/{other_id}")[1]["isPrivate"] is True
    assert alice("POST", f"/channels/{env.gid}/sync")[0] == 204                        # general has a category
    uncategorised = next(c for c in env.world.channels if c["name"] == "voice")["publicId"]
    assert alice("POST", f"/channels/{uncategorised}/sync")[1] == {"error": "channels.errors.no_category"}


def test_duplicate_copies_settings_and_overrides_not_messages(env):
    alice, gid = env.api["alice"], env.gid
    alice("PATCH", f"/channels/{gid}", {"description": "about general"})
    override(alice, gid, env.cu, "MEMBER", deny=VIEW)
    env.emu.post_message(gid, env.world.human["publicId"], "not copied")
    bot = env.sock(env.world.bot_token)
    status, data = alice("POST", f"/channels/{gid}/duplicate")
    copy = data["channel"]
    assert status == 201 and copy["publicId"] != gid
    original = alice("GET", f"/channels/{gid}")[1]
    for key in ("name", "type", "categoryId", "isPrivate", "description", "serverPublicId"):
        assert copy[key] == original[key], key
    assert alice("GET", f"/chat/{copy['publicId']}?limit=10")[1] == {"messages": []}
    got = alice("GET", f"/channels/{copy['publicId']}/overrides")[1]["overrides"]
    assert [(o["targetId"], o["deny"]) for o in got] == [(env.cu, str(VIEW))]
    assert copy["publicId"] not in listed(env.api["carol"], env.sid)
    assert bot.events.get(timeout=5) == ("server:channels_updated", {"serverPublicId": env.sid})
    assert env.api["carol"]("POST", f"/channels/{gid}/duplicate")[0] == 403
    dm = env.emu.open_dm(env.world.human["publicId"], env.cu)
    assert alice("POST", f"/channels/{dm['publicId']}/duplicate")[0] == 403


def test_deleting_channels_roles_and_categories_drops_their_overrides(env):
    alice, sid = env.api["alice"], env.sid
    override(alice, env.gid, env.staff["publicId"], "ROLE", allow=VIEW)
    assert alice("DELETE", f"/servers/{sid}/roles/{env.staff['publicId']}") == (204, None)
    assert alice("GET", f"/channels/{env.gid}/overrides")[1] == {"overrides": []}
    override(alice, env.gid, env.cu, "MEMBER", allow=VIEW)
    assert alice("DELETE", f"/channels/{env.gid}") == (204, None)
    cat = alice("POST", f"/servers/{sid}/categories", {"name": "c"})[1]["category"]["publicId"]
    override(alice, cat, env.cu, "MEMBER", allow=VIEW)
    alice("DELETE", f"/servers/{sid}/categories/{cat}")
    assert env.emu.snapshot()["tables"]["overrides"] == []


# ---------------------------------------------------------------------------------- request journal
def test_journal_records_body_and_caller(env):
    emu = env.emu
    emu.clear_requests()
    alice = env.api["alice"]
    alice("PATCH", f"/channels/{env.gid}", {"name": "renamed", "description": None})
    alice("POST", f"/channels/{env.gid}/overrides", {"targetId": env.cu, "type": "MEMBER", "allow": "512",
                                                     "nested": {"apiToken": "s3cret", "list": [{"password": 1}]},
                                                     "note": f"my token is {env.world.human_token}!"})
    env.api["carol"]("GET", "/auth/me")
    alice.http.request("POST", "/api/v2/servers/x/categories", b"{not json", alice.token)
    alice.http.request("GET", "/api/v2/auth/me", None, "wrong-token")
    emu.add_fault("GET", "/servers", status=503)
    alice("GET", "/servers")
    entries = emu.requests()
    assert [(e["method"], e["body"], e["userId"]) for e in entries] == [
        ("PATCH", {"name": "renamed", "description": None}, env.world.human["publicId"]),
        ("POST", {"targetId": env.cu, "type": "MEMBER", "allow": "512",
                  "nested": {"apiToken": "[REDACTED]", "list": [{"password": "[REDACTED]"}]},
                  "note": "my token is [REDACTED]!"}, env.world.human["publicId"]),
        ("GET", None, env.cu),
        ("POST", None, env.world.human["publicId"]),
        ("GET", None, None),
        ("GET", None, env.world.human["publicId"]),
    ]
    assert [e["status"] for e in entries] == [204, 204, 200, 404, 401, 503]
    text = json.dumps(entries)
    assert env.world.human_token not in text and "s3cret" not in text
    # the control plane shows the same
    host, port = emu.socket_url.split("//")[1].split(":")
    http = RawHttp(host, int(port))
    status, data, _ = http.request("GET", "/_emulator/requests")
    http.close()
    assert status == 200 and [r["userId"] for r in json.loads(data)["requests"]] == [e["userId"] for e in entries]


def test_voice_of_a_hidden_channel_is_not_shown_and_cannot_be_joined(env):
    emu = env.emu
    voice = next(c for c in env.world.channels if c["type"] == "VOICE")["publicId"]
    override(env.api["alice"], voice, env.cu, "MEMBER", deny=VIEW)
    carol, dave = env.sock(env.carol["token"]), env.sock(env.dave["token"])
    assert emu.voice_join(env.du, voice)
    assert dave.events.get(timeout=5)[0] in ("voice:livekit-token", "voice:user-joined")
    emu.voice_state(env.du, muted=True)
    emu.voice_leave(env.du)
    while dave.events.get(timeout=5)[0] != "voice:user-left":
        pass
    carol.probe()
    assert [e for e, _ in carol.drain() if e.startswith("voice:")] == []
    assert not emu.voice_join(env.cu, voice)                       # cannot join what it cannot see
    carol.emit("voice:join", {"channelPublicId": voice})
    carol.probe()
    assert emu.voice_users(voice) == []
    # a voice snapshot at connect time leaves the hidden channel out too
    assert emu.voice_join(env.du, voice)
    again = env.sock(env.carol["token"])
    again.probe()
    assert [d["channelPublicId"] for e, d in again.drain() if e == "voice:state-update"] == []
    visible = env.sock(env.world.human_token)
    visible.probe()
    while True:
        event, data = visible.events.get(timeout=5)
        if event == "voice:state-update":
            assert data["channelPublicId"] == voice
            break


def test_override_category_and_copy_changes_are_audited(env):
    alice, sid, gid = env.api["alice"], env.sid, env.gid
    cat = env.world.general["categoryId"]
    override(alice, cat, env.cu, "MEMBER", allow=VIEW)                    # a category scope
    override(alice, gid, env.cu, "MEMBER", allow=VIEW)
    oid = alice("GET", f"/channels/{gid}/overrides")[1]["overrides"][0]["id"]
    alice("DELETE", f"/channels/{gid}/overrides/{oid}")
    copy = alice("POST", f"/channels/{gid}/duplicate")[1]["channel"]["publicId"]
    alice("POST", f"/channels/{gid}/sync")
    alice("PATCH", f"/servers/{sid}/categories/{cat}", {"name": "Chat"})
    alice("POST", f"/servers/{sid}/categories/{cat}/sync")
    alice("DELETE", f"/servers/{sid}/categories/{cat}")
    assert override(env.api["carol"], gid, env.cu, "MEMBER", allow=VIEW)[0] == 403   # refused: not logged
    logs = alice("GET", f"/servers/{sid}/audit-logs?limit=100")[1]["logs"]
    got = [(e["actionType"], e["targetId"]) for e in reversed(logs)]
    assert got == [("CHANNEL_OVERWRITE_UPDATE", cat), ("CHANNEL_OVERWRITE_UPDATE", gid),
                   ("CHANNEL_OVERWRITE_DELETE", gid), ("CHANNEL_CREATE", copy), ("CHANNEL_SYNC", gid),
                   ("CATEGORY_UPDATE", cat), ("CATEGORY_SYNC", cat), ("CATEGORY_DELETE", cat)]
    assert all(e["executor"]["publicId"] == env.world.human["publicId"] for e in logs)
