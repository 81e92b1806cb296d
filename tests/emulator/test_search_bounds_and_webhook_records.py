"""The emulator's message search bounds (``before`` / ``after`` stay inside the channel), the
``webhookId`` mark on webhook messages, a database file from before that mark, and the webhook
token's ``***`` in the request journal's body; over real HTTP."""

from __future__ import annotations

import json
import sqlite3

import requests

from service_client.emulator.store import Store


def call(world, method, path, token=None, **kw):
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return requests.request(method, world.emulator.base_url + path, headers=headers, timeout=5, **kw)


def search(world, cid, **params):
    r = call(world, "GET", f"/chat/{cid}/search", world.bot_token, params=params)
    assert r.status_code == 200, r.text
    return [m["content"] for m in r.json()["messages"]]


def test_search_before_and_after_bound_the_results(world):
    emu, gid = world.emulator, world.general["publicId"]
    emu.post_messages(gid, world.human["publicId"], [f"needle {i}" for i in range(6)])
    ids = [m["publicId"] for m in emu.messages(gid)]
    assert search(world, gid, q="needle") == [f"needle {i}" for i in (5, 4, 3, 2, 1, 0)]
    assert search(world, gid, q="needle", before=ids[3]) == ["needle 2", "needle 1", "needle 0"]
    assert search(world, gid, q="needle", after=ids[3]) == ["needle 5", "needle 4"]
    assert search(world, gid, q="needle", after=ids[0], before=ids[4]) == ["needle 3", "needle 2", "needle 1"]
    assert search(world, gid, q="needle", after=ids[1], before=ids[4], limit="1") == ["needle 3"]
    assert search(world, gid, q="needle", before="999999999999999999") == []


def test_search_bounds_from_another_channel_match_nothing(world):
    # history ignores a `before` of another channel; search now does the same for both bounds
    emu, gid = world.emulator, world.general["publicId"]
    rid = next(c for c in world.channels if c["name"] == "random")["publicId"]
    emu.post_message(gid, world.human["publicId"], "needle old")
    elsewhere = emu.post_message(rid, world.human["publicId"], "needle elsewhere")["message"]["publicId"]
    emu.post_message(gid, world.human["publicId"], "needle new")
    assert search(world, gid, q="needle") == ["needle new", "needle old"]
    assert search(world, gid, q="needle", before=elsewhere) == []
    assert search(world, gid, q="needle", after=elsewhere) == []
    assert call(world, "GET", f"/chat/{gid}", world.bot_token, params={"before": elsewhere}).json() == {
        "messages": []}


def test_webhook_messages_carry_webhook_id_everywhere(world):
    emu, gid = world.emulator, world.general["publicId"]
    hook = call(world, "POST", f"/channels/{gid}/webhooks", world.human_token, json={"name": "Hook"}).json()["webhook"]
    r = call(world, "POST", f"/webhooks/{hook['publicId']}/{hook['token']}", json={"content": "hooked", "username": "A"})
    mid = r.json()["id"]
    emu.post_message(gid, world.human["publicId"], "hooked by hand")
    call(world, "POST", f"/chat/{gid}/pin/{mid}", world.human_token)
    history = call(world, "GET", f"/chat/{gid}", world.bot_token).json()["messages"]
    found = call(world, "GET", f"/chat/{gid}/search", world.bot_token, params={"q": "hooked"}).json()["messages"]
    pins = call(world, "GET", f"/chat/{gid}/pins", world.bot_token).json()["pins"]
    for listing in (history, found, pins, emu.messages(gid)):
        by_id = {m["publicId"]: m for m in listing}
        assert by_id[mid]["webhookId"] == hook["publicId"] == by_id[mid]["author"]["publicId"]
        assert all("webhookId" not in m for m in listing if m["publicId"] != mid)


def test_a_webhook_post_of_whitespace_is_answered_400_naming_the_rule(world):
    gid = world.general["publicId"]
    hook = call(world, "POST", f"/channels/{gid}/webhooks", world.human_token, json={"name": "Hook"}).json()["webhook"]
    r = call(world, "POST", f"/webhooks/{hook['publicId']}/{hook['token']}", json={"content": "   "})
    assert r.status_code == 400
    assert r.json()["error"].startswith("messages.errors.empty: a message needs content that is not only whitespace")
    assert world.emulator.messages(gid) == []


def test_a_database_file_from_before_the_webhook_mark_still_opens(tmp_path):
    path = str(tmp_path / "old.db")
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, "
        "channel_id TEXT NOT NULL, server_id TEXT, author_id TEXT, content TEXT NOT NULL, embeds TEXT NOT NULL, "
        "reply_to_id TEXT, created_at TEXT NOT NULL, edited_at TEXT, pinned INTEGER NOT NULL DEFAULT 0, "
        "author_json TEXT, raw TEXT NOT NULL DEFAULT '');"
        "INSERT INTO messages(id, channel_id, content, embeds, created_at, raw) "
        "VALUES ('100000000000000001', 'C1', 'old', '[]', '2026-01-01T00:00:00.000Z', 'old');")
    conn.commit()
    conn.close()
    store = Store(path)
    try:
        [old] = store.messages.messages("C1")
        assert old["content"] == "old" and "webhookId" not in old
    finally:
        store.close()


def test_webhook_token_reads_stars_in_the_journal_body(world):
    emu, gid = world.emulator, world.general["publicId"]
    hook = call(world, "POST", f"/channels/{gid}/webhooks", world.human_token, json={"name": "Hook"}).json()["webhook"]
    token = hook["token"]
    emu.clear_requests()
    url = f"https://example.invalid/webhooks/{hook['publicId']}/{token}"
    assert call(world, "POST", f"/webhooks/{hook['publicId']}/{token}",
                json={"content": f"my url is {url}", "embeds": [{"title": token}]}).status_code == 200
    [entry] = emu.requests()
    assert entry["path"] == f"/webhooks/{hook['publicId']}/***"
    assert entry["body"] == {"content": f"my url is https://example.invalid/webhooks/{hook['publicId']}/***",
                             "embeds": [{"title": "***"}]}
    assert token not in json.dumps(emu.requests())
