"""Invites never reveal a channel the caller may not view; the member list comes as the service
sends it."""

from __future__ import annotations

import pytest
import requests

VIEW, MANAGE_INVITES = 512, 16


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
