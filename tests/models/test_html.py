"""Jupyter rendering: models, collections and managers as small HTML tables, escaped, never a token."""

from __future__ import annotations

import html.parser

import pytest

from service_client._html import MAX_ROWS
from service_client.models import (
    Category,
    Collection,
    Guild,
    Member,
    Message,
    PermissionOverwrite,
    Role,
    User,
    VoiceState,
    Webhook,
)

from state.fakes import FakeState, member_rec, message_rec, role_rec, server_rec, user_rec

HOOK_TOKEN = "hook-token-0123456789"


@pytest.fixture
def client() -> FakeState:
    return FakeState()


class _Cells(html.parser.HTMLParser):
    """The text of every cell, and the tags seen (to prove no markup leaked from the data)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.tags: set[str] = set()
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag in ("td", "th"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1] += data


def parse(text: str) -> _Cells:
    parser = _Cells()
    parser.feed(text)
    parser.close()
    return parser


def test_a_model_renders_its_attributes_escaped(client: FakeState) -> None:
    user = User(client, {**user_rec("U1"), "name": "<script>alert('x')</script> & co"})
    text = user._repr_html_()
    cells = parse(text)
    assert cells.tags == {"table", "caption", "b", "tr", "th", "td"}     # no <script> from the data
    assert "<script>" not in text and "&lt;script&gt;" in text
    pairs = dict(zip(cells.cells[::2], cells.cells[1::2], strict=True))
    assert pairs["id"] == "U1" and pairs["username"] == "<script>alert('x')</script> & co"
    assert pairs["bot"] == "False"


def test_message_content_is_shown_as_typed_and_escaped_once(client: FakeState) -> None:
    message = Message(client, message_rec(content="a &lt;b&gt; &amp; c"))
    assert message.content == "a <b> & c"
    text = message._repr_html_()
    assert "a &lt;b&gt; &amp; c" in text and "&amp;lt;" not in text
    pairs = dict(zip(parse(text).cells[::2], parse(text).cells[1::2], strict=True))
    assert pairs["content"] == "a <b> & c" and pairs["author"] == "alice"


def test_a_webhook_never_shows_its_token(client: FakeState) -> None:
    hook = Webhook(client, {"publicId": "W1", "name": "CI", "channelPublicId": "C1", "token": HOOK_TOKEN})
    assert hook.token is not None and hook.token.get() == HOOK_TOKEN
    shown = [repr(hook), hook._repr_html_(), Collection({"W1": hook})._repr_html_()]
    assert all(HOOK_TOKEN not in text for text in shown)
    assert repr(hook) == "<Webhook id='W1' name='CI' channel_id='C1'>"


def test_a_collection_of_models_is_a_table_with_their_columns(client: FakeState) -> None:
    roles = Collection((f"R{i}", Role(client, role_rec(f"R{i}", "64"))) for i in range(3))
    cells = parse(roles._repr_html_())
    assert cells.cells[:6] == ["id", "name", "position", "color", "hoist", "permissions"]  # keys are the ids
    assert cells.cells[6:8] == ["R0", "role-R0"] and "KICK_MEMBERS" in cells.cells
    other = parse(Collection({"first": Role(client, role_rec("R1"))})._repr_html_()).cells
    assert other[:2] == ["key", "id"] and other[7:9] == ["first", "R1"]       # other keys get a column
    assert "Collection</b> of Role: 3 entries" in roles._repr_html_()


def test_a_long_collection_is_cut_and_plain_values_are_shown(client: FakeState) -> None:
    many = Collection((f"k{i}", i) for i in range(MAX_ROWS + 7))
    text = many._repr_html_()
    assert text.count("<tr>") == 1 + MAX_ROWS + 1 and "and 7 more" in text
    assert parse(Collection({"<k>": "<v>"})._repr_html_()).cells == ["key", "value", "<k>", "<v>"]
    assert "0 entries" in Collection()._repr_html_()


def test_managers_and_nested_values_render(client: FakeState) -> None:
    guild = Guild(client, server_rec("S1", "Home"))
    client.guilds.cache["S1"] = guild
    guild.roles.cache["R1"] = Role(client, role_rec("R1"))
    member = Member(client, member_rec("U1", "S1"))
    client.members.cache[("S1", "U1")] = member
    text = client.members._repr_html_()
    assert "MemberManager.cache" in text and "S1, U1" in text               # the (server, user) key
    assert "role-R1" in member._repr_html_()                                # roles by name
    category = Category(client, {"publicId": "K1", "name": "Text", "channels": [
        {"publicId": "C1", "name": "a"}, {"publicId": "C2", "name": "b"}]}, server_id="S1")
    assert "a, b" in category._repr_html_()
    state = VoiceState(client, {"userPublicId": "U1", "userName": "alice"}, channel_id="V1")
    assert "user_name" in state._repr_html_() and repr(state).startswith("<VoiceState user_id='U1' user_name='alice'")
    overwrite = PermissionOverwrite(client, {"id": "O1", "type": "ROLE", "targetId": "R1", "allow": "512",
                                             "deny": "0"}, scope_id="C1")
    assert "VIEW_CHANNELS" in overwrite._repr_html_()
    assert "target_name=None" in repr(overwrite)
