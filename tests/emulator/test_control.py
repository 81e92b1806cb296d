"""The /_emulator JSON control plane and the Emulator class lifecycle ."""

from __future__ import annotations

import logging
import threading
import time

import pytest
import requests
import socketio

from service_client.emulator import Emulator, seed_demo

#: Every control-plane write carries a JSON content type (the emulator refuses others: 415).
JSON = {"Content-Type": "application/json"}


def test_control_seed_flow(emulator):
    c = emulator.control_url
    alice = requests.post(c + "/users", json={"name": "alice"}, timeout=5).json()
    bot = requests.post(c + "/users", json={"name": "bot", "bot": True}, timeout=5).json()
    assert bot["user"]["isBot"] is True and isinstance(bot["token"], str)
    made = requests.post(c + "/servers", json={
        "name": "S", "ownerId": alice["user"]["publicId"],
        "categories": [{"name": "Cat", "channels": [{"name": "a", "type": "TEXT"}]}],
        "channels": [{"name": "v", "type": "VOICE"}]}, timeout=5).json()
    assert made["server"]["name"] == "S" and [c_["name"] for c_ in made["channels"]] == ["a", "v"]
    assert made["categories"][0]["channels"][0]["name"] == "a"
    sid = made["server"]["publicId"]
    role = requests.post(c + f"/servers/{sid}/roles", json={"name": "r", "permissions": "16"}, timeout=5).json()
    assert role["role"]["permissions"] == "16"
    member = requests.post(c + f"/servers/{sid}/members",
                           json={"userId": bot["user"]["publicId"], "roleIds": [role["role"]["publicId"]]},
                           timeout=5).json()["member"]
    assert [r["name"] for r in member["roles"]] == ["@everyone", "r"]
    cid = made["channels"][0]["publicId"]
    msg = requests.post(c + "/messages", json={"channelId": cid, "authorId": alice["user"]["publicId"],
                                               "content": "x & y"}, timeout=5).json()["message"]
    assert msg["content"] == "x &amp; y"
    bulk = requests.post(c + "/messages/bulk", json={"channelId": cid, "authorId": alice["user"]["publicId"],
                                                     "contents": ["1", "2"]}, timeout=5).json()
    assert bulk == {"count": 2}
    msgs = requests.get(c + f"/channels/{cid}/messages", timeout=5).json()["messages"]
    assert [m["content"] for m in msgs] == ["x &amp; y", "1", "2"]
    r = requests.delete(c + f"/servers/{sid}/members/{bot['user']['publicId']}", headers=JSON, timeout=5)
    assert r.status_code == 204
    assert requests.delete(c + f"/servers/{sid}/members/{bot['user']['publicId']}", headers=JSON,
                           timeout=5).status_code == 404
    assert requests.get(c + "/connections", timeout=5).json() == {"count": 0}
    assert requests.post(c + "/reset", headers=JSON, timeout=5).status_code == 204
    assert requests.get(c + f"/channels/{cid}/messages", timeout=5).status_code == 404


def test_control_errors(emulator):
    c = emulator.control_url
    assert requests.post(c + "/users", data=b"{bad", headers=JSON, timeout=5).status_code == 400
    assert requests.post(c + "/users", json={"name": ""}, timeout=5).status_code == 400
    assert requests.post(c + "/servers", json={"name": "S", "ownerId": "nope"}, timeout=5).status_code == 404
    assert requests.put(c + "/users", headers=JSON, timeout=5).status_code == 405  # GET lists the users (the web page)
    assert requests.get(c + "/nothing", timeout=5).status_code == 404
    assert requests.post(c + "/messages", json={"channelId": "1", "authorId": "2", "content": 5},
                         timeout=5).status_code == 400


def test_python_errors(emulator):
    with pytest.raises(ValueError):
        emulator.create_user("")
    with pytest.raises(LookupError):
        emulator.create_server("S", "123")
    with pytest.raises(ValueError):
        Emulator(port=-1)


def test_seed_demo(emulator):
    demo = seed_demo(emulator)
    assert set(demo) == {"bot_token", "human_token", "bot", "human", "server", "channels"}
    assert demo["bot"]["name"] == "pingbot" and demo["bot"]["isBot"] and demo["human"]["name"] == "alice"
    assert demo["server"]["name"] == "Demo Server" and demo["server"]["memberCount"] == 2
    assert {"general", "random", "dev"} <= set(demo["channels"]) and len(demo["channels"]) == 4


def test_control_emit_and_drop_routes(world):
    # python-socketio's own client, on purpose: the emulator must serve a standard socket.io
    # client. Nothing here depends on the order of events (each handler sets its own Event).
    c = world.emulator.control_url
    got = threading.Event()
    client = socketio.Client(reconnection=False)
    client.on("hello", lambda data: got.set())
    gone = threading.Event()
    client.on("disconnect", lambda *a: gone.set())
    client.connect(world.emulator.socket_url, auth={"token": world.bot_token}, transports=["websocket"],
                   wait_timeout=5)
    try:
        assert requests.get(c + "/connections", timeout=5).json() == {"count": 1}
        r = requests.post(c + "/emit", json={"event": "hello", "payload": {}, "toUser": world.bot["publicId"]},
                          timeout=5)
        assert r.status_code == 204 and got.wait(5)
        assert requests.post(c + "/drop", json={"userId": world.bot["publicId"]}, timeout=5).json() == {"count": 1}
        assert gone.wait(5)
    finally:
        client.disconnect()


def test_lifecycle_restart_same_port_and_file_db(tmp_path):
    db = str(tmp_path / "emu.sqlite")
    before = set(threading.enumerate())
    with Emulator(db=db) as emu:
        port = emu.port
        user = emu.create_user("keep")
        assert emu.base_url == f"http://127.0.0.1:{port}/api/v2"
        assert emu.control_url.endswith("/_emulator") and emu.socket_url == f"http://127.0.0.1:{port}"
        (thread,) = set(threading.enumerate()) - before
        assert thread.name.startswith("service_client-emulator-") and thread.daemon
    assert not emu.running
    assert not thread.is_alive()
    with Emulator(port=port, db=db) as again:
        r = requests.get(again.base_url + "/auth/me", headers={"Authorization": f"Bearer {user['token']}"},
                         timeout=5)
        assert r.json()["user"]["name"] == "keep"


def test_main_bad_args():
    from service_client.emulator.__main__ import main
    assert main(["--port", "notanint"]) == 2


def test_stop_with_a_delayed_request_in_flight_is_quiet_and_prompt():
    """A REST request held by a delay fault is ended when the emulator stops: its connection
    closes unanswered, at once, and the server logs nothing (no cancelled-task traceback)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "uvicorn", "service_client.emulator")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        emu = Emulator().start()
        try:
            user = emu.create_user("waiter")
            emu.add_fault("GET", "/auth/me", delay_ms=30_000)
            outcome: list[BaseException | int] = []
            polled = threading.Event()  # never set: a bounded wait between polls of the journal

            def request() -> None:
                try:
                    outcome.append(requests.get(emu.base_url + "/auth/me", timeout=30,
                                                headers={"Authorization": "Bearer " + user["token"]}).status_code)
                except requests.RequestException as exc:
                    outcome.append(exc)

            caller = threading.Thread(target=request, name="test-delayed-request", daemon=True)
            caller.start()
            deadline = time.monotonic() + 10
            while not emu.max_in_flight():  # until the request is being held by the fault
                assert time.monotonic() < deadline, "the request never reached the emulator"
                polled.wait(0.01)
        finally:
            emu.stop()
        caller.join(10)
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert len(outcome) == 1 and isinstance(outcome[0], requests.ConnectionError), outcome
    assert [r.getMessage() for r in records] == []
