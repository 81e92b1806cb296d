"""Invites never reveal a channel the caller may not view; the creator of a private channel or
category keeps access to it; the member list comes as the service sends it."""

from __future__ import annotations

import pytest
import requests

VIEW, SEND, MANAGE_CHANNELS, MANAGE_INVITES = 512, 1024, 4, 16


def call(world, method, path, token, **kw):
    return requests.request(method, world.emulator.base_url + path, timeout=5,
                            headers={"Authorization": f"Bearer {token}"}, **kw)


@pytest.fixture
def hidden(world):
    """A private channel ``secret-plans`` that the bot (a plain member) may not view."""
    emu, sid = world.emulator, world.server["publicId"]
    channel = emu.create_channel(sid, "secret-plans")
    everyone = next(r for r in emu.member(sid, world.bot["publicId"])["roles"] if r["name"] == "@everyone")
    emu.set_override(channel["publicId"], everyone["publicId"], "ROLE", deny=VIEW)
    assert not emu.can_view(channel["publicId"], world.bot["publicId"])
    return channel


# ---------------------------------------------------------------------------------- invites
def test_a_member_who_may_not_view_a_channel_cannot_create_an_invite_to_it(world, hidden):
    sid = world.server["publicId"]
    before = world.emulator.snapshot()
    r = call(world, "POST", f"/servers/{sid}/invites", world.bot_token, json={"channelPublicId": hidden["publicId"]})
    assert r.status_code == 403 and r.json() == {"error": "channels.errors.no_access"}
    assert "secret-plans" not in r.text
    assert world.emulator.snapshot() == before
    # to a channel it sees, as before
    r = call(world, "POST", f"/servers/{sid}/invites", world.bot_token,
             json={"channelPublicId": world.general["publicId"]})
    assert r.status_code == 201 and r.json()["invite"]["channel"]["name"] == "general"


def test_reading_an_invite_needs_the_right_to_view_its_channel(world, hidden):
    emu, sid = world.emulator, world.server["publicId"]
    code = emu.create_invite(sid, hidden["publicId"], world.human["publicId"])["invite"]["code"]
    r = call(world, "GET", f"/invites/{code}", world.bot_token)
    assert r.status_code == 403 and "secret-plans" not in r.text and r.json()["error"]
    owner = call(world, "GET", f"/invites/{code}", world.human_token).json()
    assert owner["channel"]["name"] == "secret-plans"
    # someone outside the server resolves an invite it was given, as anyone may
    stranger = emu.create_user("eve")
    assert call(world, "GET", f"/invites/{code}", stranger["token"]).json()["server"]["isMember"] is False
    # a manager of invites who may not view the channel does not get that invite in the list
    role = emu.create_role(sid, "invites", MANAGE_INVITES)["role"]
    emu.update_member(sid, world.bot["publicId"], roles=[role["publicId"]])
    visible = emu.create_invite(sid, world.general["publicId"], world.human["publicId"])["invite"]["code"]
    listed = call(world, "GET", f"/servers/{sid}/invites", world.bot_token, params={"all": "true"})
    assert [i["code"] for i in listed.json()["invites"]] == [visible] and "secret-plans" not in listed.text
    assert {i["code"] for i in call(world, "GET", f"/servers/{sid}/invites", world.human_token,
                                     params={"all": "true"}).json()["invites"]} == {code, visible}


# ---------------------------------------------------------------------------------- the member list
def test_the_member_list_is_a_bare_array_and_a_search_is_wrapped(world):
    sid = world.server["publicId"]
    listed = call(world, "GET", f"/servers/{sid}/members", world.human_token).json()
    assert isinstance(listed, list)
    assert sorted(m["user"]["publicId"] for m in listed) == sorted([world.human["publicId"], world.bot["publicId"]])
    found = call(world, "GET", f"/servers/{sid}/members", world.human_token, params={"search": "ali"}).json()
    assert [m["publicId"] for m in found["members"]] == [world.human["publicId"]]


# ---------------------------------------------------------------------------------- private channels
@pytest.fixture
def manager(world):
    """carol: a member whose role may manage channels, neither owner nor administrator."""
    emu, sid = world.emulator, world.server["publicId"]
    carol = emu.create_user("carol")
    role = emu.create_role(sid, "channel managers", MANAGE_CHANNELS | VIEW | SEND)["role"]
    emu.add_member(sid, carol["user"]["publicId"], role_ids=[role["publicId"]])
    return carol


def test_the_creator_of_a_private_channel_can_read_and_send_in_it(world, manager, conns):
    emu, sid = world.emulator, world.server["publicId"]
    carol_id = manager["user"]["publicId"]
    made = call(world, "POST", f"/servers/{sid}/channels", manager["token"],
                json={"name": "ticket-1", "type": "TEXT", "isPrivate": True})
    assert made.status_code == 201
    cid = made.json()["channel"]["publicId"]
    assert call(world, "GET", f"/channels/{cid}", manager["token"]).status_code == 200
    overrides = call(world, "GET", f"/channels/{cid}/overrides", manager["token"]).json()["overrides"]
    assert [(o["type"], o["targetId"], o["allow"], o["deny"]) for o in overrides] == [
        ("MEMBER", carol_id, str(VIEW | SEND), "0")]
    carol = conns(manager["token"], carol_id)
    carol.emit("message:send", {"channelPublicId": cid, "content": "opened", "embeds": [], "nonce": "t1"})
    assert carol.wait("message:new")["nonce"] == "t1"
    # others still do not see it; the override is deleted like any other, and the access goes with it
    assert call(world, "GET", f"/channels/{cid}", world.bot_token).status_code == 403
    r = call(world, "DELETE", f"/channels/{cid}/overrides/{overrides[0]['id']}", world.human_token)
    assert r.status_code == 204
    assert call(world, "GET", f"/channels/{cid}", manager["token"]).status_code == 403
    assert emu.overrides(cid) == []


def test_the_creator_of_a_private_category_keeps_it_and_its_new_channels(world, manager):
    sid = world.server["publicId"]
    carol_id = manager["user"]["publicId"]
    made = call(world, "POST", f"/servers/{sid}/categories", manager["token"], json={"name": "Staff", "isPrivate": True})
    assert made.status_code == 201 and made.json()["category"]["isPrivate"] is True
    cat = made.json()["category"]["publicId"]
    overrides = call(world, "GET", f"/servers/{sid}/categories/{cat}/overrides", manager["token"]).json()["overrides"]
    assert [(o["type"], o["targetId"], o["allow"]) for o in overrides] == [("MEMBER", carol_id, str(VIEW | SEND))]
    inside = call(world, "POST", f"/servers/{sid}/channels", manager["token"],
                  json={"name": "staff-chat", "type": "TEXT", "categoryId": cat}).json()["channel"]["publicId"]
    assert call(world, "GET", f"/channels/{inside}", manager["token"]).status_code == 200
    assert call(world, "GET", f"/channels/{inside}", world.bot_token).status_code == 403


def test_a_public_channel_and_a_control_plane_channel_get_no_creator_override(world, manager):
    emu, sid = world.emulator, world.server["publicId"]
    public = call(world, "POST", f"/servers/{sid}/channels", manager["token"], json={"name": "open"}).json()
    assert emu.overrides(public["channel"]["publicId"]) == []
    seeded = requests.post(f"{emu.control_url}/servers/{sid}/channels", timeout=5,
                           json={"name": "seeded", "type": "TEXT", "isPrivate": True}).json()["channel"]
    assert emu.overrides(seeded["publicId"]) == []  # no user created it
    r = call(world, "POST", f"/servers/{sid}/categories", manager["token"], json={"name": "C", "isPrivate": "yes"})
    assert r.status_code == 400
