"""What a notebook user meets: a second live client with the same token warns, every live client
can be destroyed at once, a lost connection and its return are one WARNING line each, history
and fetch results show as tables and frames, and a 403 names the permission it lacked."""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, ClientState, DuplicateClientWarning, ModelList, ServiceAPIError
from service_client.emulator import seed_demo

from conftest import World
from gateway.frame_locals import FrameLocalsHandler


def test_a_second_live_client_with_the_same_token_warns_each_time(
    world: World, make_client: Callable[..., Client]
) -> None:
    first = make_client()
    first.login(world.bot_token, timeout=15)
    for _ in range(2):  # shown every time, never deduplicated
        again = make_client()
        with pytest.warns(DuplicateClientWarning, match=r"1 other live Client\(s\) of this process use this token") as seen:
            again.login(world.bot_token, timeout=15)
        text = str(seen[0].message)
        assert "Client.destroy_all()" in text and world.bot_token not in text
        assert seen[0].filename == __file__                     # attributed to the caller's line
        again.destroy()
    other = make_client()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateClientWarning)
        other.login(world.human_token, timeout=15)              # another token: no warning
        first.destroy()
        replacement = make_client()
        replacement.login(world.bot_token, timeout=15)          # the old one is destroyed: no warning


def test_a_warning_made_an_error_leaves_the_new_client_untouched(
    world: World, make_client: Callable[..., Client]
) -> None:
    make_client().login(world.bot_token, timeout=15)
    again = make_client()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateClientWarning)
        with pytest.raises(DuplicateClientWarning) as raised:
            again.login(world.bot_token, timeout=15)
    assert again.state is ClientState.NEW
    frames = FrameLocalsHandler(world.bot_token)               # as an error tracker would record it
    frames.emit(logging.LogRecord("t", logging.ERROR, __file__, 1, "warned", None,
                                  (DuplicateClientWarning, raised.value, raised.value.__traceback__)))
    assert frames.records == 1
    assert [hit for hit in frames.hits if hit[2] != "test_notebook_helpers.py"] == []   # no frame of the library


def test_destroy_all_destroys_every_live_client_of_the_process(
    world: World, make_client: Callable[..., Client]
) -> None:
    clients = [make_client() for _ in range(3)]
    clients[0].login(world.bot_token, timeout=15)
    clients[1].login(world.human_token, timeout=15)
    destroyed = Client.destroy_all()
    assert destroyed >= 3                                       # these three (never-logged-in ones too)
    assert all(c.state is ClientState.DESTROYED for c in clients)
    assert Client.destroy_all() == 0


def test_a_lost_connection_and_its_return_are_one_warning_line_each(
    world: World, bot: Client, caplog: pytest.LogCaptureFixture
) -> None:
    back = threading.Event()
    bot.on("reconnect", back.set)
    with caplog.at_level(logging.WARNING, logger="service_client"):
        world.emulator.drop_transport(world.bot["publicId"])
        assert back.wait(15)
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "service_client.client"]
    assert [level for level, _ in lines] == [logging.WARNING, logging.WARNING], lines
    assert lines[0][1].startswith("connection to the service lost (")
    assert lines[1][1] == "connection to the service is back (reconnected)"


def test_the_lost_connection_lines_show_with_no_logging_configured(
    world: World, bot: Client, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A notebook or a script that never configured logging: the package's NullHandler would
    # swallow a plain log.warning (Python's last-resort handler then stays quiet).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    back = threading.Event()
    bot.on("reconnect", back.set)
    world.emulator.drop_transport(world.bot["publicId"])
    assert back.wait(15)
    lines = [line for line in capsys.readouterr().err.splitlines() if "connection to the service" in line]
    assert len(lines) == 2, lines
    assert lines[0].startswith("WARNING:service_client.client:connection to the service lost (")
    assert lines[1] == "WARNING:service_client.client:connection to the service is back (reconnected)"
    logging.getLogger("service_client.client").setLevel(logging.ERROR)   # the guide's way to silence them
    try:
        back.clear()
        world.emulator.drop_transport(world.bot["publicId"])
        assert back.wait(15)
    finally:
        logging.getLogger("service_client.client").setLevel(logging.NOTSET)
    assert "connection to the service" not in capsys.readouterr().err


def test_history_shows_as_a_table_without_losing_messages_and_gives_a_frame(
    world: World, bot: Client
) -> None:
    pytest.importorskip("pandas", reason="pandas is in the test extra; to_frame() is tested with it")
    general = world.general["publicId"]
    for i in range(3):
        world.emulator.post_message(general, world.human["publicId"], f"note {i}")
    channel = bot.channels.fetch(general)
    history = channel.history(limit=10)
    table = history._repr_html_()                               # read for the display...
    assert "History of channel" in table and "note 2" in table and "more follow" not in table
    assert [m.content for m in history] == ["note 2", "note 1", "note 0"]   # ...and still yielded
    frame = channel.history(limit=2).to_frame()
    assert frame["content"].tolist() == ["note 2", "note 1"] and frame["author"].tolist() == ["alice", "alice"]
    rest = channel.history()
    assert next(rest).content == "note 2" and [m.content for m in rest.to_list()] == ["note 1", "note 0"]
    assert channel.guild is not None
    roles = channel.guild.roles.fetch_all()
    assert isinstance(roles, ModelList) and "ModelList</b> of Role" in roles._repr_html_()
    assert roles.to_frame()["name"].tolist()[0] == "@everyone"


def test_a_403_names_the_permission_it_lacked_and_the_demo_bot_can_list_members(
    emulator: Any, make_client: Callable[..., Client]
) -> None:
    demo = seed_demo(emulator)
    bot = make_client()
    bot.login(demo["bot_token"], timeout=15)
    guild = bot.guilds.cache[demo["server"]["publicId"]]
    assert sorted(m.display_name for m in guild.fetch_members()) == ["alice", "pingbot"]
    emulator.update_member(guild.id, demo["bot"]["publicId"], roles=[])
    with pytest.raises(ServiceAPIError) as refused:
        guild.fetch_members()
    assert refused.value.status == 403
    assert str(refused.value).endswith(f"(GET /servers/{guild.id}/members needs the VIEW_MEMBERS permission)")
    assert str(refused.value).startswith("API Error 403: ")
