"""Every model field and wire fallback, built from dicts (protocol.md section 3)."""

from __future__ import annotations

import pickle
from datetime import datetime, timezone

import pytest

from service_client.models import (
    Category,
    Channel,
    Collection,
    DMChannel,
    Guild,
    Invite,
    Member,
    Message,
    Role,
    User,
    VoiceState,
)
from service_client.models.message import decode_content

from state.fakes import FakeState, channel_rec, member_rec, message_rec, role_rec, server_rec, user_rec

UTC = timezone.utc


@pytest.fixture
def client() -> FakeState:
    return FakeState()


# -- User --------------------------------------------------------------------

def test_user_fields(client: FakeState) -> None:
    u = User(client, {"publicId": "U1", "name": "alice", "tag": "0420", "image": "http://i/a.png", "isBot": True, "status": "idle"})
    assert (u.id, u.username, u.tag, u.avatar, u.bot, u.status) == ("U1", "alice", "0420", "http://i/a.png", True, "idle")
    assert u.tag_string == "alice#0420"
    assert u.mention == "<@U1>"
    assert u.raw["name"] == "alice"


def test_user_defaults_and_id_fallback(client: FakeState) -> None:
    u = User(client, {"id": "U2"})
    assert (u.id, u.username, u.tag, u.avatar, u.bot, u.status) == ("U2", "", None, None, False, "offline")
    assert u.tag_string == ""


def test_user_raw_equals_the_record_and_is_a_copy(client: FakeState) -> None:
    rec = {**user_rec(), "friendshipStatus": "ACCEPTED"}
    u = User(client, rec)
    assert u.raw == rec
    u.raw["name"] = "mallory"  # a copy: the model is not changed
    assert u.username == u.raw["name"] == rec["name"]


def test_user_without_id_or_not_dict_is_refused(client: FakeState) -> None:
    with pytest.raises(ValueError):
        User(client, {"name": "x"})
    with pytest.raises(TypeError):
        User(client, ["x"])  # type: ignore[arg-type]


def test_models_use_slots(client: FakeState) -> None:
    for obj in (User(client, user_rec()), Guild(client, server_rec()), Channel(client, channel_rec()),
                Role(client, role_rec()), Member(client, member_rec()), Message(client, message_rec())):
        assert not hasattr(obj, "__dict__"), type(obj)
        with pytest.raises(AttributeError):
            obj.some_new_attribute = 1  # type: ignore[attr-defined]


def test_repr_shows_class_id_name_and_no_token(client: FakeState) -> None:
    client.token = "SECRET-TOKEN"  # type: ignore[attr-defined]
    reprs = [repr(User(client, user_rec())), repr(Guild(client, server_rec(name="Home"))),
             repr(Channel(client, channel_rec())), repr(Member(client, member_rec())),
             repr(Role(client, role_rec())), repr(Message(client, message_rec()))]
    assert reprs[0] == "<User id='U1' username='alice'>"
    assert reprs[1] == "<Guild id='S1' name='Home'>"
    assert reprs[2] == "<Channel id='C1' name='general'>"
    assert reprs[3] == "<Member id='U1' server_id='S1' display_name='alice'>"
    assert reprs[5].startswith("<Message id=") and "author=<User id='U1' username='alice'>" in reprs[5]
    assert all("SECRET" not in r for r in reprs)


# -- Guild ---------------------------------------------------------------------

def test_guild_fields(client: FakeState) -> None:
    g = Guild(client, server_rec("S9", "Nine", owner="U7", imageUrl="http://i/s.png", memberCount=12))
    assert (g.id, g.name, g.icon, g.owner_id, g.member_count) == ("S9", "Nine", "http://i/s.png", "U7", 12)
    assert g.roles.server_id == "S9" and len(g.roles.cache) == 0
    assert g.invites.server_id == "S9"


def test_guild_member_count_defaults_to_zero_and_owner_from_members(client: FakeState) -> None:
    g = Guild(client, {"publicId": "S1", "name": "x", "members": [{"publicId": "U1", "isOwner": False}, {"publicId": "U2", "isOwner": True}]})
    assert g.member_count == 0
    assert g.owner_id == "U2"


def test_guild_id_fallbacks(client: FakeState) -> None:
    assert Guild(client, {"id": "A"}).id == "A"
    assert Guild(client, {"serverId": "B"}).id == "B"


def test_guild_channels_property_filters_the_client_cache(client: FakeState) -> None:
    g = Guild(client, server_rec("S1"))
    client.channels.cache["C1"] = Channel(client, channel_rec("C1", sid="S1"))
    client.channels.cache["C2"] = Channel(client, channel_rec("C2", sid="S2"))
    client.channels.cache["C3"] = Channel(client, channel_rec("C3", sid="S1"))
    assert list(g.channels) == ["C1", "C3"]


def test_guild_update_null_clears_icon(client: FakeState) -> None:
    g = Guild(client, server_rec(imageUrl="http://i"))
    g._update({"serverPublicId": "S1", "imageUrl": None})
    assert g.icon is None and g.name == "Guild"
    g._update({"name": "Renamed"})
    assert g.name == "Renamed"


# -- Channel, DM, Category -----------------------------------------------------

def test_channel_fields_and_fallbacks(client: FakeState) -> None:
    ch = Channel(client, {"id": "C1", "name": "voice", "type": "VOICE", "serverId": "S1", "categoryId": "K1", "position": 2, "isPrivate": True})
    assert (ch.id, ch.name, ch.type, ch.server_id, ch.category_id, ch.position, ch.is_private) == ("C1", "voice", "VOICE", "S1", "K1", 2, True)
    assert Channel(client, {"channelId": "C2", "type": "ANNOUNCEMENT"}).type == "ANNOUNCEMENT"
    assert Channel(client, {"publicId": "C3"}, server_id="S5").server_id == "S5"


def test_channel_send_delegates_to_send_message(client: FakeState) -> None:
    ch = Channel(client, channel_rec())
    assert ch.send("hello", reply_to_id="M1") == "sent"
    assert client.sent == [("C1", "hello", {"content": None, "embeds": None, "reply_to_id": "M1"})]


def test_channel_delete_requests_and_evicts(client: FakeState) -> None:
    ch = Channel(client, channel_rec())
    client.channels.cache["C1"] = ch
    client.routes[("DELETE", "/channels/C1")] = None
    ch.delete()
    assert client.requests == [("DELETE", "/channels/C1", None, None)]
    assert "C1" not in client.channels.cache


def test_dm_channel(client: FakeState) -> None:
    dm = DMChannel(client, {"publicId": "D1", "type": "DM", "recipient": user_rec("U2", "bob", friendshipStatus="ACCEPTED")})
    assert (dm.id, dm.type, dm.server_id, dm.name) == ("D1", "DM", None, "bob")
    assert isinstance(dm.recipient, User) and dm.recipient.id == "U2"
    assert DMChannel(client, {"publicId": "D2", "type": "GROUP_DM"}).name == "DM"
    assert DMChannel(client, {"publicId": "D2", "type": "GROUP_DM"}).type == "DM"
    dm.send(content="yo")
    assert client.sent[-1][0] == "D1"


def test_category_nests_channels_with_server_id(client: FakeState) -> None:
    cat = Category(client, {"publicId": "K1", "name": "Text", "position": 1, "isPrivate": False,
                            "channels": [{"publicId": "C1", "name": "a", "type": "TEXT"}]}, server_id="S1")
    assert (cat.id, cat.name, cat.position, cat.server_id) == ("K1", "Text", 1, "S1")
    assert isinstance(cat.channels, Collection) and list(cat.channels) == ["C1"]   # keyed by id
    assert cat.channels["C1"].server_id == "S1" and cat.channels["C1"].category_id == "K1"


# -- Role ------------------------------------------------------------------------

def test_role_fields(client: FakeState) -> None:
    r = Role(client, role_rec("R1", "1040", hoist=True, position=3))
    assert (r.id, r.name, r.color, r.hoist, r.server_id, r.position, int(r.permissions)) == ("R1", "role-R1", "#112233", True, "S1", 3, 1040)


def test_role_hoise_misspelling_defaults_and_numeric_permissions(client: FakeState) -> None:
    r = Role(client, {"publicId": "R2", "hoise": True, "permissions": 16})
    assert r.hoist is True and r.position == 0 and int(r.permissions) == 16 and r.color is None
    assert int(Role(client, {"publicId": "R3"}).permissions) == 0
    assert int(Role(client, {"publicId": "R4", "permissions": "garbage"}).permissions) == 0


# -- Member -------------------------------------------------------------------------

def test_member_nested_shape(client: FakeState) -> None:
    m = Member(client, member_rec("U1", "S1", nickname="Al"))
    assert (m.id, m.server_id, m.nickname, m.membership_id) == ("U1", "S1", "Al", "M-U1")
    assert m.user.id == "U1" and m.user.username == "alice"
    assert m.joined_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    assert isinstance(m.roles, Collection) and list(m.roles) == ["R1"]  # keyed by role id
    assert m.roles["R1"].name == "role-R1"
    assert m.display_name == "Al"


def test_member_flat_shape_and_envelope_server(client: FakeState) -> None:
    m = Member(client, {"publicId": "U5", "name": "flat", "tag": "0005", "isBot": True}, server_id="S3")
    assert (m.id, m.server_id, m.user.username, m.user.bot) == ("U5", "S3", "flat", True)
    assert m.joined_at is None and m.roles == {} and m.membership_id is None


def test_member_user_id_from_user_object(client: FakeState) -> None:
    rec = member_rec("U1")
    del rec["userId"]
    assert Member(client, rec).id == "U1"
    rec["serverId"] = rec.pop("serverPublicId")
    assert Member(client, rec).server_id == "S1"


def test_member_without_server_or_user_is_refused(client: FakeState) -> None:
    rec = member_rec()
    del rec["serverPublicId"]
    with pytest.raises(ValueError):
        Member(client, rec)
    with pytest.raises(ValueError):
        Member(client, {"serverPublicId": "S1"})


def test_member_voice_from_voice_states(client: FakeState) -> None:
    m = Member(client, member_rec("U1"))
    assert m.voice is None
    client.voice_states.replace_channel("V1", [{"userPublicId": "U1", "muted": True}])
    assert m.voice is not None and m.voice.muted and m.voice.channel_id == "V1"
    client.channels.cache["V1"] = Channel(client, channel_rec("V1", sid="OTHER", type="VOICE"))
    assert m.voice is None  # a voice channel of another server


# -- Message -------------------------------------------------------------------------

def test_message_fields(client: FakeState) -> None:
    m = Message(client, message_rec("M1", "hello", "C1", "S1", nonce="abc", fileUrl="http://f", replyToId="M0",
                                    embeds=[{"title": "t"}]))
    assert (m.id, m.content, m.channel_id, m.server_id, m.nonce, m.file_url, m.reply_to_id) == ("M1", "hello", "C1", "S1", "abc", "http://f", "M0")
    assert m.author is not None and m.author.id == "U1" and m.author.bot is False
    assert m.created_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    assert m.created_at.tzinfo is not None
    assert m.embeds == [{"title": "t"}]


def test_message_defaults_and_no_author(client: FakeState) -> None:
    m = Message(client, {"publicId": "M2", "channelPublicId": "C1"})
    assert (m.content, m.author, m.channel_id, m.server_id, m.nonce, m.embeds, m.created_at) == ("", None, "C1", None, None, [], None)
    assert Message(client, {"publicId": "M3", "channelPublicId": "C1", "author": {"name": "no id"}}).author is None
    assert Message(client, {"publicId": "M4", "channelPublicId": "C1", "author": "weird"}).author is None
    with pytest.raises(ValueError, match="channelPublicId"):                # every message has a channel
        Message(client, {"publicId": "M6"})
    assert Message(client, {"id": "M5", "channelId": "C9", "serverId": "S9"}).channel_id == "C9"


def test_message_dm_has_no_server(client: FakeState) -> None:
    assert Message(client, message_rec(sid=None)).server_id is None


def test_message_created_at_other_zone_is_converted_to_utc(client: FakeState) -> None:
    m = Message(client, message_rec(createdAt="2026-01-02T05:04:05+02:00"))
    assert m.created_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert m.created_at.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("wire", "text"),
    [
        ("a &lt;b&gt; c", "a <b> c"),
        ("fish &amp; chips", "fish & chips"),
        ("&amp;lt;", "&lt;"),
        ("&amp;amp;", "&amp;"),
        ("&quot;x&quot; &#39;", "&quot;x&quot; &#39;"),
        ("&lt;&lt;&gt;", "<<>"),
        ("plain", "plain"),
    ],
)
def test_content_entities_decoded_exactly(wire: str, text: str, client: FakeState) -> None:
    assert decode_content(wire) == text
    assert Message(client, message_rec(content=wire)).content == text


def test_message_raw_left_undecoded(client: FakeState) -> None:
    rec = message_rec(content="&lt;")
    assert Message(client, rec).raw["content"] == "&lt;"


def test_message_reply_sends_with_reply_to(client: FakeState) -> None:
    m = Message(client, message_rec("M1", cid="C1"))
    m.reply("pong")
    assert client.sent == [("C1", "pong", {"content": None, "embeds": None, "reply_to_id": "M1"})]


def test_message_edit_delete_react_emit(client: FakeState) -> None:
    m = Message(client, message_rec("M1"))
    m.edit("new")
    m.delete()
    m.react("👍")
    assert client.emitted == [
        ("message:edit", ({"messagePublicId": "M1", "content": "new", "embeds": []},)),
        ("message:delete", ({"messagePublicId": "M1"},)),
        ("message:react", ({"messagePublicId": "M1", "emoji": "👍"},)),
    ]
    with pytest.raises(ValueError):
        m.react("")


# -- Invite ------------------------------------------------------------------------------

def test_resolved_invite(client: FakeState) -> None:
    inv = Invite(client, {"code": "Ab3dE6gH", "uses": 3, "maxUses": None, "expiresAt": "2026-02-01T00:00:00.000Z",
                          "server": {"publicId": "S1", "name": "Home", "imageUrl": None, "memberCount": 4, "isMember": True, "channelPublicId": "C1"}})
    assert (inv.code, inv.uses, inv.max_uses, inv.channel_id) == ("Ab3dE6gH", 3, None, "C1")
    assert inv.guild is not None and (inv.guild.id, inv.guild.name, inv.guild.member_count) == ("S1", "Home", 4)
    assert inv.expires_at == datetime(2026, 2, 1, tzinfo=UTC)
    assert inv.url == "https://site.example/invite/Ab3dE6gH"


def test_invite_guild_key_and_uses_fallbacks(client: FakeState) -> None:
    inv = Invite(client, {"code": "X", "guild": {"publicId": "S2", "name": "G", "uses": 7}})
    assert inv.guild is not None and inv.guild.id == "S2"
    assert inv.uses == 7
    assert Invite(client, {"code": "Y"}).uses is None
    assert Invite(client, {"code": "Y"}).guild is None


def test_server_invite_shape(client: FakeState) -> None:
    g = Guild(client, server_rec())
    inv = Invite(client, {"code": "Z", "uses": 0, "maxUses": 5, "expiresAt": None,
                          "inviter": {"publicId": "U1", "name": "alice", "tag": "0001", "image": None},
                          "channel": {"publicId": "C1", "name": "general"}}, guild=g)
    assert inv.guild is g and inv.uses == 0 and inv.max_uses == 5 and inv.expires_at is None
    assert inv.inviter is not None and inv.inviter.id == "U1" and inv.channel_id == "C1"


def test_invite_revoke_requests_delete_and_evicts(client: FakeState) -> None:
    g = Guild(client, server_rec())
    client.guilds.cache["S1"] = g
    inv = Invite(client, {"code": "a/b?", "server": {"publicId": "S1", "name": "G"}})
    g.invites.cache[inv.code] = inv
    client.routes[("DELETE", "/invites/a%2Fb%3F")] = None
    inv.revoke()
    assert client.requests == [("DELETE", "/invites/a%2Fb%3F", None, None)]
    assert inv.code not in g.invites.cache


# -- VoiceState --------------------------------------------------------------------------

def test_voice_state_fields(client: FakeState) -> None:
    vs = VoiceState(client, {"userPublicId": "U1", "userName": "alice", "userTag": "0001", "userImage": None, "socketId": "sk",
                             "muted": True, "deafened": False, "speaking": True, "joinedAt": 1767323045678, "isStreaming": False,
                             "isCameraOn": True, "cameraStreamId": "cs", "screenStreamId": "ss", "cameraTrackId": "ct", "screenTrackId": "st"},
                    channel_id="V1")
    assert (vs.user_id, vs.channel_id, vs.user_name, vs.user_tag, vs.socket_id) == ("U1", "V1", "alice", "0001", "sk")
    assert (vs.muted, vs.deafened, vs.speaking, vs.is_streaming, vs.is_camera_on) == (True, False, True, False, True)
    assert (vs.camera_stream_id, vs.screen_stream_id, vs.camera_track_id, vs.screen_track_id) == ("cs", "ss", "ct", "st")
    assert vs.joined_at_ms == 1767323045678
    assert vs.joined_at == datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    assert "U1" in repr(vs)


def test_collection_of_models_pickles_ids_only_not_required(client: FakeState) -> None:
    # Models hold a client reference; only Collection itself must pickle (plain values).
    from service_client.models import Collection

    col = Collection({"a": 1})
    assert pickle.loads(pickle.dumps(col)) == {"a": 1}
