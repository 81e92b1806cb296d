"""The pandas path: ``to_dict()`` of models (Python names, parsed times), ``to_frame()`` of
collections and result lists, result lists that show as tables, and a clear error without pandas."""

from __future__ import annotations

import builtins
import sys
from datetime import datetime, timezone
from typing import Any

import pytest

from service_client import Permissions
from service_client.models import Collection, Member, Message, ModelList, Role, User, Webhook
from service_client.models.channel import History

from state.fakes import FakeState, member_rec, message_rec, role_rec, user_rec

pd = pytest.importorskip("pandas", reason="pandas is in the test extra; to_frame() is tested with it")

WHEN = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)


@pytest.fixture
def client() -> FakeState:
    return FakeState()


def test_a_message_as_a_dict_has_python_names_parsed_times_and_the_author_by_name_and_id(
    client: FakeState,
) -> None:
    message = Message(client, message_rec("M1", content="a &lt;b&gt;", replyToId="M0"))
    assert message.to_dict() == {
        "id": "M1", "channel_id": "C1", "server_id": "S1", "author_id": "U1", "author": "alice",
        "content": "a <b>", "created_at": WHEN, "edited_at": None, "pinned": False, "reply_to_id": "M0",
    }
    assert message.to_dict()["created_at"].tzinfo is not None           # aware, UTC


def test_a_member_and_a_role_as_dicts(client: FakeState) -> None:
    client.guilds.cache.clear()
    member = Member(client, member_rec("U1", roles=[role_rec("R1")], nickname="Al"))
    assert member.to_dict() == {
        "id": "U1", "server_id": "S1", "display_name": "Al", "nickname": "Al", "username": "alice",
        "bot": False, "roles": ["role-R1"], "joined_at": WHEN,
    }
    role = Role(client, role_rec("R2", "64")).to_dict()
    assert role["permissions"] == Permissions.KICK_MEMBERS and isinstance(role["permissions"], int)
    assert User(client, user_rec("U2", "bob", isBot=True)).to_dict() == {
        "id": "U2", "username": "bob", "tag": "0001", "bot": True, "status": "online"}


def test_a_token_never_reaches_a_dict_or_a_frame(client: FakeState) -> None:
    hook = Webhook(client, {"publicId": "W1", "name": "CI", "channelPublicId": "C1", "token": "tok-123456789"})
    assert "tok-123456789" not in repr(hook.to_dict())
    assert "tok-123456789" not in Collection({"W1": hook}).to_frame().to_string()


def test_a_collection_of_members_is_a_frame_one_row_each(client: FakeState) -> None:
    members = Collection(
        (uid, Member(client, member_rec(uid, user=user_rec(uid, name, isBot=bot))))
        for uid, name, bot in [("U1", "alice", False), ("U2", "pingbot", True)]
    )
    frame = members.to_frame()
    assert list(frame.columns) == ["id", "server_id", "display_name", "nickname", "username", "bot", "roles",
                                   "joined_at"]
    assert frame["username"].tolist() == ["alice", "pingbot"]
    assert frame[frame["bot"]]["id"].tolist() == ["U2"]
    assert str(frame["joined_at"].dtype).startswith("datetime64") and "UTC" in str(frame["joined_at"].dtype)
    assert members.to_dicts()[1]["username"] == "pingbot"
    assert Collection({"a": 1, "b": 2}).to_frame()["value"].tolist() == [1, 2]
    assert list(Collection().to_frame().columns) == ["value"]


def test_a_list_of_messages_is_a_frame_and_a_table(client: FakeState) -> None:
    messages: ModelList[Message] = ModelList(Message(client, message_rec(f"M{i}", f"text {i}")) for i in range(3))
    assert messages == [messages[0], messages[1], messages[2]] and isinstance(messages, list)
    frame = messages.to_frame()
    assert frame["content"].tolist() == ["text 0", "text 1", "text 2"] and len(frame) == 3
    assert "author_id" in frame.columns and "created_at" in frame.columns
    table = messages._repr_html_()
    assert "<table" in table and "ModelList</b> of Message: 3 entries" in table and "text 2" in table
    assert ">0<" not in table                                    # positions are not shown for models with ids
    assert messages.to_dicts()[1]["content"] == "text 1"


def test_a_value_that_is_not_a_model_keeps_its_column_in_a_mixed_frame(client: FakeState) -> None:
    mixed = ModelList([Message(client, message_rec("M1", "text")), 5]).to_frame()
    assert mixed["content"].tolist()[0] == "text"
    assert mixed["value"].tolist()[1] == 5                       # not a row of NaN: nothing is lost


def test_an_empty_history_is_a_frame_with_the_columns_of_messages(client: FakeState) -> None:
    frame = History(iter([]), "C1", 10).to_frame()               # a quiet channel
    assert list(frame.columns) == list(Message(client, message_rec()).to_dict()) and len(frame) == 0
    assert frame[frame["author"] == "alice"].empty              # filtering works: no KeyError


def test_showing_a_history_again_reads_nothing_more(client: FakeState) -> None:
    pulled: list[int] = []

    def pages() -> Any:
        for i in range(80):
            pulled.append(i)
            yield Message(client, message_rec(f"M{i}", f"text {i}"))

    history = History(pages(), "C1", None)
    first = history._repr_html_()
    assert "(more follow)" in first and len(pulled) == 51      # 50 shown, one to know more follow
    assert history._repr_html_() == first and len(pulled) == 51  # shown again: no further read
    assert [m.id for m in history] == [f"M{i}" for i in range(80)]


def test_without_pandas_to_frame_raises_an_import_error_naming_pandas(
    client: FakeState, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_pandas(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pandas")
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"to_frame\(\) needs pandas.*pip install pandas") as raised:
        ModelList([Message(client, message_rec())]).to_frame()
    assert raised.value.name == "pandas"
    assert Message(client, message_rec()).to_dict()["id"] == "MSG1"      # to_dict needs no pandas
    history = History(iter([Message(client, message_rec("M1"))]), "C1", 10)
    with pytest.raises(ImportError, match=r"to_frame\(\) needs pandas"):
        history.to_frame()
    assert [m.id for m in history] == ["M1"]                    # the history was not read away for nothing
