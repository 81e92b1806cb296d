"""Message search: bounded queries, run off the event loop, on an index that follows every change.

A query of more than 1,024 characters or 32 terms is answered 400 before anything runs, and so
is one that runs longer than its time limit. The search itself runs on the index's own thread:
while it is held there (deterministically, by a job that waits on an event), other requests are
answered. Edits, deletes, a deleted channel and a reset reach the index too. Real HTTP.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import requests

from service_client.emulator.store import search as search_module


def call(world: Any, method: str, path: str, **kw: Any) -> requests.Response:
    return requests.request(method, world.emulator.base_url + path, timeout=10,
                            headers={"Authorization": f"Bearer {world.bot_token}"}, **kw)


def search(world: Any, q: str, cid: str | None = None, **params: Any) -> requests.Response:
    return call(world, "GET", f"/chat/{cid or world.general['publicId']}/search", params={"q": q, **params})


def found(world: Any, q: str, cid: str | None = None) -> list[str]:
    answer = search(world, q, cid)
    assert answer.status_code == 200, answer.text
    return [m["content"] for m in answer.json()["messages"]]


@pytest.mark.parametrize(("q", "said"), [
    ("x" * 1025, "1024 characters"),
    ("x" * 60_000, "1024 characters"),  # about the longest request line the HTTP server reads
    (" ".join(f"w{i}" for i in range(33)), "32 terms"),
    (" ".join(["w"] * 3000), "1024 characters"),
])
def test_a_query_over_the_bounds_is_answered_400(world, q, said):
    world.emulator.post_message(world.general["publicId"], world.human["publicId"], "w0 w1 w2")
    answer = search(world, q)
    assert answer.status_code == 400
    assert said in answer.json()["error"]


def test_a_query_at_the_bounds_is_searched(world):
    terms = [f"t{i:02d}" for i in range(32)]
    text = " ".join(terms)
    world.emulator.post_message(world.general["publicId"], world.human["publicId"], text)
    assert found(world, text) == [text]
    padded = text + " " * (1024 - len(text))  # spaces count toward the length, not the terms
    assert len(padded) == 1024 and found(world, padded) == [text]
    assert found(world, "y" * 1024) == []


def test_another_request_is_answered_while_a_search_runs(world):
    emu = world.emulator
    emu.post_messages(world.general["publicId"], world.human["publicId"], [f"needle {i}" for i in range(5)])
    assert emu.core is not None
    index = emu.core.store.search_index
    gate, held = threading.Event(), threading.Event()

    def hold(_conn: Any) -> None:  # the index's thread is busy until the test lets it go
        held.set()
        gate.wait(30)

    blocker = index._submit(hold)
    answers: list[requests.Response] = []
    searcher = threading.Thread(target=lambda: answers.append(search(world, "needle")), name="test-searcher")
    try:
        assert held.wait(10)
        searcher.start()
        for _ in range(3):  # REST and the control plane are answered while the search waits
            me = call(world, "GET", "/auth/me")
            assert me.status_code == 200 and me.json()["user"]["publicId"] == world.bot["publicId"]
            assert len(emu.messages(world.general["publicId"])) == 5
        assert searcher.is_alive() and not answers  # still held by the index: it cannot be done
    finally:
        gate.set()
    blocker.result(10)
    searcher.join(15)
    assert [m["content"] for m in answers[0].json()["messages"]] == [f"needle {i}" for i in (4, 3, 2, 1, 0)]


def test_a_query_that_runs_too_long_is_answered_400(world, monkeypatch):
    emu = world.emulator
    random_id = next(c for c in world.channels if c["name"] == "random")["publicId"]
    # matches elsewhere that the query has to step over, one by one, to find none in general
    emu.post_messages(random_id, world.human["publicId"], ["needle"] * 3000)
    assert found(world, "needle", random_id)  # indexed within the time limit
    monkeypatch.setattr(search_module, "QUERY_TIME_LIMIT_S", 0.0)
    answer = search(world, "needle")
    assert answer.status_code == 400
    assert "ran longer than" in answer.json()["error"]
    monkeypatch.undo()
    assert found(world, "needle") == []


def test_the_index_follows_edits_deletes_channels_and_resets(world, conns):
    emu = world.emulator
    gid, uid = world.general["publicId"], world.human["publicId"]
    first = emu.post_message(gid, uid, "alpha one")["message"]["publicId"]
    second = emu.post_message(gid, uid, "alpha two")["message"]["publicId"]
    assert found(world, "alpha") == ["alpha two", "alpha one"]  # both indexed now
    human = conns(world.human_token, uid)
    human.emit("message:edit", {"messagePublicId": first, "content": "beta one", "embeds": []})
    human.wait("message:updated")
    assert found(world, "alpha") == ["alpha two"]
    assert found(world, "beta") == ["beta one"]
    human.emit("message:delete", {"messagePublicId": second})
    human.wait("message:deleted")
    assert found(world, "alpha") == []
    doomed = emu.create_channel(world.server["publicId"], "doomed")["publicId"]
    emu.post_message(doomed, uid, "gamma here")
    assert found(world, "gamma", doomed) == ["gamma here"]
    index = emu.core.store.search_index if emu.core is not None else None
    assert index is not None and index.query('"gamma"', doomed, 25).result(10) != []
    gone = requests.delete(f"{emu.base_url}/channels/{doomed}", timeout=10,
                           headers={"Authorization": f"Bearer {world.human_token}"})
    assert gone.status_code == 204, gone.text
    assert index.query('"gamma"', doomed, 25).result(10) == []  # forgotten with its channel
    assert index.query('"beta"', gid, 25).result(10) != []
    emu.reset()
    assert index.query('"beta"', gid, 25).result(10) == []  # and everything with a reset
