"""Access rules of the emulator: membership, revoked tokens, and which sockets are in which rooms.

A token that is not a member of a server sees 403/404 on every route about that server and
changes nothing; a revoked token gets 401 everywhere; the socket never delivers a server's or a
channel's events to a non-member, and a removal takes the socket out of the rooms at once.
"""

from __future__ import annotations

import json

import pytest

from .fuzzkit import RawHttp, RawSocket, assert_error_body
from .test_fuzz import ROUTES, Route, _extra_ids

SERVER_SCOPED = [r for r in ROUTES if any(p in r.template for p in ("{sid}", "{cid}", "{rid}", "{mid}", "{cat}",
                                                                    "{oid}"))
                 or (r.method == "DELETE" and "{code}" in r.template)]


@pytest.fixture
def setup(world):
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    role = emu.create_role(sid, "mod", 2)["role"]
    message = emu.post_message(gid, world.human["publicId"], "secret words")["message"]
    invite = emu.create_invite(sid, gid, world.human["publicId"])["invite"]
    emu.react(message["publicId"], world.human["publicId"], "x")
    emu.set_override(gid, role["publicId"], "ROLE", allow=512)
    host, port = emu.socket_url.split("//")[1].split(":")
    http = RawHttp(host, int(port))
    real = {"sid": sid, "cid": gid, "uid": world.bot["publicId"], "rid": role["publicId"], "code": invite["code"],
            "mid": message["publicId"], "cat": world.general["categoryId"], "oid": emu.overrides(gid)[0]["id"]}
    real.update(_extra_ids(world))
    body = {"name": "taken over", "iconUrl": None, "imageUrl": "http://x", "type": "TEXT", "status": "idle",
            "roles": [role["publicId"]], "nickname": "pwned", "color": "#000000", "hoist": True,
            "permissions": "2147483648", "position": 3, "channelPublicId": gid, "maxAge": 60, "maxUses": 1,
            "description": "mine", "messageIds": [message["publicId"]], "isPrivate": False,
            "targetId": world.bot["publicId"], "allow": "2147483648", "deny": "0"}
    yield world, http, real, body
    http.close()


def _request(http: RawHttp, route: Route, real: dict[str, str], body: dict[str, object], token: str):
    path = route.template
    for name, value in real.items():
        path = path.replace("{" + name + "}", value)
    payload = None
    if route.schema:
        payload = json.dumps({k: v for k, v in body.items() if k in route.schema}).encode()
    return http.request(route.method, "/api/v2" + path, payload, token)


def _secrets(world):
    return ["Test Server", "general", "random", "secret words", world.server["publicId"]]


@pytest.mark.parametrize("who", ["stranger", "ex-member"])
@pytest.mark.parametrize("route", SERVER_SCOPED, ids=str)
def test_non_member_sees_nothing_and_changes_nothing(setup, route, who):
    world, http, real, body = setup
    emu = world.emulator
    user = emu.create_user("eve")
    if who == "ex-member":
        emu.add_member(world.server["publicId"], user["user"]["publicId"])
        emu.remove_member(world.server["publicId"], user["user"]["publicId"])
    before = emu.snapshot()
    status, data, ctype = _request(http, route, real, body, user["token"])
    assert status in (403, 404), (route, status, data[:300])
    assert_error_body(status, data, ctype)
    text = data.decode()
    assert not any(s in text for s in _secrets(world)), text
    assert emu.snapshot() == before


#: Routes served without ``Authorization`` (the webhook token in the path is the credential).
PUBLIC = [r for r in ROUTES if r.template.startswith("/webhooks/")]


@pytest.mark.parametrize("route", [r for r in ROUTES if r not in PUBLIC], ids=str)
def test_revoked_token_is_401_everywhere(setup, route):
    world, http, real, body = setup
    emu = world.emulator
    emu.revoke_token(world.human["publicId"])
    before = emu.snapshot()
    status, data, ctype = _request(http, route, real, body, world.human_token)
    assert status == 401, (route, status)
    assert json.loads(data) == {"error": "Unauthorized"}
    status, data, ctype = _request(http, route, real, body, "")
    assert status == 401
    assert emu.snapshot() == before


def test_servers_list_and_dm_are_private(setup):
    world, http, real, body = setup
    emu = world.emulator
    eve = emu.create_user("eve")
    status, data, _ = http.request("GET", "/api/v2/servers", None, eve["token"])
    assert status == 200 and json.loads(data) == {"servers": []}
    dm = emu.open_dm(world.human["publicId"], world.bot["publicId"])
    emu.post_message(dm["publicId"], world.human["publicId"], "dm secret")
    for method, path in (("GET", f"/channels/{dm['publicId']}"), ("GET", f"/chat/{dm['publicId']}"),
                         ("GET", f"/chat/{dm['publicId']}/search?q=secret"),
                         ("GET", f"/chat/{dm['publicId']}/pins")):
        status, data, ctype = http.request(method, "/api/v2" + path, None, eve["token"])
        assert status == 403 and b"secret" not in data, (path, status)
    status, data, _ = http.request("GET", f"/api/v2/invites/{real['code']}", None, eve["token"])
    assert status == 200 and json.loads(data)["server"]["isMember"] is False   # resolving an invite is public


# ---------------------------------------------------------------------------------- socket
def _everything_happens(world, human, bot):
    """Drive every kind of server and channel event as members."""
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    voice = next(c for c in world.channels if c["type"] == "VOICE")["publicId"]
    human.emit("message:send", {"channelPublicId": gid, "content": "hello", "embeds": [], "nonce": "n"})
    msg = human.wait("message:new")
    human.emit("message:edit", {"messagePublicId": msg["publicId"], "content": "edited", "embeds": []})
    human.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "y"})
    human.emit("typing:start", gid)
    human.emit("presence:update", {"status": "dnd"})
    human.emit("activity:update", {"type": "playing", "name": "chess", "startedAt": 1})
    bot.emit("voice:join", {"channelPublicId": voice})
    emu.create_role(sid, "new role", 0)
    emu.create_channel(sid, "new-channel")
    emu.create_category(sid, "new-category")
    emu.set_override(gid, world.bot["publicId"], "MEMBER", allow=1024)
    emu.update_server(sid, name="Renamed")
    carol = emu.create_user("carol")["user"]["publicId"]
    emu.add_member(sid, carol)
    assert human.call("server:kick", {"serverPublicId": sid, "userPublicId": carol}, timeout=5) == {}
    assert human.call("server:ban", {"serverPublicId": sid, "userPublicId": carol}, timeout=5) == {}
    assert human.call("server:unban", {"serverPublicId": sid, "userPublicId": carol}, timeout=5) == {}
    ids = _extra_ids(world)     # a pin and a webhook message
    host, port = emu.socket_url.split("//")[1].split(":")
    http = RawHttp(host, int(port))
    assert http.request("POST", f"/api/v2/chat/{gid}/pin/{msg['publicId']}", None, world.human_token)[0] == 204
    assert http.request("POST", f"/api/v2/webhooks/{ids['wid']}/{ids['token']}", b'{"content": "hook"}')[0] == 200
    http.close()
    bot.wait("message:new", check=lambda m: m["content"] == "hook")
    human.emit("message:reaction_clear", {"messagePublicId": msg["publicId"]})
    human.emit("message:delete", {"messagePublicId": msg["publicId"]})
    human.wait("message:deleted")
    bot.wait("message:deleted")


def _drain(conn):
    """Every event ``conn`` got before a marker sent now (ordered socket: no quiet period needed)."""
    return conn.before_marker()


def test_socket_never_delivers_server_events_to_non_members(world, conns):
    emu = world.emulator
    sid = world.server["publicId"]
    former = emu.create_user("former")
    emu.add_member(sid, former["user"]["publicId"])
    former_conn = conns(former["token"])
    emu.remove_member(sid, former["user"]["publicId"])
    assert former_conn.wait("server:you_removed") == {"serverPublicId": sid}
    stranger = conns(emu.create_user("eve")["token"])
    human, bot = conns(world.human_token), conns(world.bot_token)
    _everything_happens(world, human, bot)
    assert _drain(stranger) == []
    assert _drain(former_conn) == []


def test_non_member_socket_actions_change_nothing(world, conns):
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    voice = next(c for c in world.channels if c["type"] == "VOICE")["publicId"]
    msg = emu.post_message(gid, world.human["publicId"], "members only")["message"]
    human = conns(world.human_token)
    eve = RawSocket(emu, emu.create_user("eve")["token"])
    before = emu.snapshot()
    eve.emit("message:send", {"channelPublicId": gid, "content": "let me in", "embeds": [], "nonce": "e"})
    eve.emit("message:edit", {"messagePublicId": msg["publicId"], "content": "x", "embeds": []})
    eve.emit("message:delete", {"messagePublicId": msg["publicId"]})
    eve.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "z"})
    eve.emit("message:reaction_clear", {"messagePublicId": msg["publicId"]})
    eve.emit("typing:start", gid)
    eve.emit("voice:join", {"channelPublicId": voice})
    for event in ("server:kick", "server:ban", "server:unban"):
        ack = eve.emit(event, {"serverPublicId": sid, "userPublicId": world.bot["publicId"]}, ack=True)
        assert eve.wait_ack(ack) == [{"error": "servers.errors.not_found"}]
    eve.probe()
    assert emu.snapshot() == before
    assert _drain(human) == []
    assert eve.drain() == []
    eve.close()


def test_removed_author_cannot_touch_its_old_messages(world, conns):
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    carol = emu.create_user("carol")
    cu = carol["user"]["publicId"]
    emu.add_member(sid, cu)
    msg = emu.post_message(gid, cu, "mine")["message"]
    emu.remove_member(sid, cu)
    human = conns(world.human_token)
    sock = RawSocket(emu, carol["token"])
    before = emu.snapshot()
    sock.emit("message:edit", {"messagePublicId": msg["publicId"], "content": "changed", "embeds": []})
    sock.emit("message:react", {"messagePublicId": msg["publicId"], "emoji": "z"})
    sock.emit("message:delete", {"messagePublicId": msg["publicId"]})
    sock.probe()
    assert emu.snapshot() == before
    assert _drain(human) == []
    sock.close()


@pytest.mark.parametrize("how", ["kick", "ban", "control", "leave", "view-revoked", "override", "private"])
def test_removal_leaves_the_rooms_at_once(world, conns, how):
    emu = world.emulator
    sid, gid = world.server["publicId"], world.general["publicId"]
    carol = emu.create_user("carol")
    cu = carol["user"]["publicId"]
    emu.add_member(sid, cu)
    human, target = conns(world.human_token), conns(carol["token"])
    if how in ("kick", "ban"):
        assert human.call(f"server:{how}", {"serverPublicId": sid, "userPublicId": cu}, timeout=5) == {}
    elif how == "control":
        emu.remove_member(sid, cu)
    elif how == "leave":
        host, port = emu.socket_url.split("//")[1].split(":")
        http = RawHttp(host, int(port))
        assert http.request("POST", f"/api/v2/servers/{sid}/leave", None, carol["token"])[0] == 204
        http.close()
    elif how == "override":
        emu.set_override(gid, cu, "MEMBER", deny=512)                           # VIEW_CHANNELS denied
    elif how == "private":
        cat = world.general["categoryId"]
        host, port = emu.socket_url.split("//")[1].split(":")
        http = RawHttp(host, int(port))
        assert http.request("PATCH", f"/api/v2/servers/{sid}/categories/{cat}", b'{"isPrivate": true}',
                            world.human_token)[0] == 204
        assert http.request("POST", f"/api/v2/channels/{gid}/sync", None, world.human_token)[0] == 204
        http.close()
    else:
        everyone = next(r for r in emu.member(sid, cu)["roles"] if r["name"] == "@everyone")
        emu.update_role(sid, everyone["publicId"], permissions=552448 & ~512)   # no VIEW_CHANNELS
    human.emit("message:send", {"channelPublicId": gid, "content": "after", "embeds": [], "nonce": "a"})
    human.emit("typing:start", gid)
    assert human.wait("message:new")["content"] == "after"
    got = [e for e, _ in _drain(target)]
    assert "message:new" not in got and "typing:start" not in got, got


def test_webhook_execution_needs_the_webhook_token_not_a_user_token(setup):
    """The one unauthenticated route: a wrong or missing webhook token is a 404 that changes
    nothing, whatever the ``Authorization``; a deleted webhook's token stops working."""
    world, http, real, body = setup
    emu = world.emulator
    payload = json.dumps({"content": "hi"}).encode()
    before = emu.snapshot()
    for path, token in ((f"/webhooks/{real['wid']}/wrong", None), (f"/webhooks/{real['wid']}/wrong", world.human_token),
                        (f"/webhooks/{real['mid']}/{real['token']}", None),
                        (f"/webhooks/{real['wid']}/{real['token'][:-1]}", None)):
        status, data, ctype = http.request("POST", "/api/v2" + path, payload, token)
        assert status == 404, (path, status)
        assert_error_body(status, data, ctype)
    assert emu.snapshot() == before
    emu.revoke_token(world.human["publicId"])   # the webhook's creator losing its token does not matter
    status, data, _ = http.request("POST", f"/api/v2/webhooks/{real['wid']}/{real['token']}", payload, None)
    assert status == 200 and set(json.loads(data)) == {"id"}
