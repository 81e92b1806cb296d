"""The emulator against a hostile web page in the same Chromium.

A page of another origin tries the control plane as a cross-site form or script would; a fault
rule tries to serve script on the emulator's own origin; a DNS-rebound name tries to reach the
emulator; a user name with right-to-left overrides tries to turn the page's own words around.
Each test looks only at what the browser did and what the emulator holds afterwards.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from service_client.emulator import Emulator

from .conftest import sign_in

pytestmark = pytest.mark.browser

expect: Any = None  # playwright's expect, imported once a test runs (playwright may be missing)

#: Right-to-left override: everything after it, to the end of its paragraph, is laid out reversed.
RLO = "\u202e"


@pytest.fixture(autouse=True)
def _expect() -> None:
    global expect
    expect = pytest.importorskip("playwright.sync_api", reason="playwright is not installed").expect


@pytest.fixture
def other_site() -> Iterator[Callable[[str], str]]:
    """Serve pages from another origin (127.0.0.1 on another free port): ``serve(html)`` returns
    the URL of a page with that HTML."""
    pages: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server naming
            body = pages.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, name="test-other-site", daemon=True)
    thread.start()

    def serve(html: str) -> str:
        path = f"/page{len(pages)}.html"
        pages[path] = html.encode()
        return f"http://127.0.0.1:{server.server_address[1]}{path}"

    try:
        yield serve
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


ATTACK = """<!DOCTYPE html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="{control}/users">
  <input name='{{"name": "mallory-form", "x": "' value='"}}'>
</form>
<script>
(async () => {{
  const C = "{control}";
  const results = {{}};
  const landed = new Promise((resolve) => document.getElementById("sink").addEventListener("load", resolve));
  document.getElementById("form").submit();
  const tries = {{
    textPlain: fetch(C + "/users", {{method: "POST", mode: "no-cors", body: '{{"name": "mallory-text"}}'}}),
    settings: fetch(C + "/settings", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
                                      body: '{{"refuseAuth": true}}'}}),
    emit: fetch(C + "/emit", {{method: "POST", mode: "no-cors", body: '{{"event": "pwned", "payload": 1}}'}}),
    reset: fetch(C + "/reset", {{method: "POST", mode: "no-cors"}}),
    asJson: fetch(C + "/users", {{method: "POST", headers: {{"Content-Type": "application/json"}},
                                 body: '{{"name": "mallory-json"}}'}}),
    tokens: fetch(C + "/users").then((r) => r.text()),
  }};
  for (const [name, attempt] of Object.entries(tries)) {{
    try {{ const value = await attempt; results[name] = typeof value === "string" ? value : "sent"; }}
    catch (err) {{ results[name] = "blocked: " + err.message; }}
  }}
  await landed;
  window.__results = results;
  document.title = "done";
}})();
</script></body></html>"""


def test_a_page_of_another_origin_cannot_drive_the_control_plane_or_read_tokens(
        emulator: Emulator, chromium_context: Any, other_site: Callable[[str], str]) -> None:
    alice = emulator.create_user("alice")
    before = emulator.snapshot()
    page = chromium_context.new_page()
    page.goto(other_site(ATTACK.format(control=emulator.control_url)))
    expect(page).to_have_title("done")
    results = page.evaluate("() => window.__results")
    assert alice["token"] not in results["tokens"], "a page of another origin read the tokens"
    assert [entry["user"]["name"] for entry in emulator.users()] == ["alice"], "it created users"
    assert emulator.snapshot() == before, "it changed the world (or reset it)"
    assert emulator.core is not None and emulator.core.rt.refuse_auth is False, "it changed the settings"
    # the page could send its requests (only the answers were refused): nothing was blocked earlier
    assert results["textPlain"] == "sent" and results["reset"] == "sent"


def test_a_fault_never_runs_script_on_the_emulators_origin(emulator: Emulator, chromium_context: Any) -> None:
    alice = emulator.create_user("alice")
    script = ("<script>document.title = 'ran'; fetch('/_emulator/users').then((r) => r.text())"
              ".then((t) => { document.title = 'stolen ' + t.length; });</script>")
    for content_type in ("text/html", None, "text/plain"):  # whatever the rule asks for, as a test would
        body = {"method": "GET", "path": "/servers", "status": 200, "body": script, "count": None}
        if content_type is not None:
            body["contentType"] = content_type
        made = requests.post(emulator.control_url + "/faults", json=body, timeout=5)
        if made.status_code != 201:  # refused outright: nothing is served at all
            assert made.status_code == 400 and content_type == "text/html", (content_type, made.text)
            continue
        page = chromium_context.new_page()
        fetched: list[str] = []
        page.on("request", lambda request, seen=fetched: seen.append(request.url))
        response = page.goto(emulator.base_url + "/servers")
        assert response is not None and response.status == 200
        assert page.title() not in ("ran",) and not page.title().startswith("stolen"), (content_type, page.title())
        assert not any("/_emulator/" in url for url in fetched), fetched
        assert "<script>" in page.locator("body").inner_text()  # shown as text, never run
        page.close()
        emulator.clear_faults()
    assert alice["token"]


def test_a_dns_rebound_name_reaches_nothing(emulator: Emulator, launch_chromium: Callable[..., Any]) -> None:
    alice = emulator.create_user("alice")
    context = launch_chromium("--host-resolver-rules=MAP rebind.test 127.0.0.1")
    page = context.new_page()
    for path in ("/", "/_emulator/users", "/api/v2/auth/me"):
        response = page.goto(f"http://rebind.test:{emulator.port}{path}")
        assert response is not None and response.status == 421, (path, response and response.status)
        assert alice["token"] not in page.content()
    # the same Chromium reaches the emulator by its own name
    assert page.goto(emulator.page_url).status == 200  # type: ignore[union-attr]


def test_the_page_works_under_an_allowed_name(launch_chromium: Callable[..., Any]) -> None:
    with Emulator(allowed_hosts=["emu.test"]) as emu:
        owner = emu.create_user("alice")
        emu.create_server("Named", owner["user"]["publicId"], channels=[{"name": "general", "type": "TEXT"}])
        context = launch_chromium("--host-resolver-rules=MAP emu.test 127.0.0.1")
        page = context.new_page()
        page.goto(f"http://emu.test:{emu.port}/")
        sign_in(page, "alice")
        page.locator("#admin-channel-name").fill("made-from-the-page")  # a control-plane write, same origin
        page.get_by_role("button", name="Create channel").click()
        expect(page.locator('#channels .channel[data-name="made-from-the-page"]')).to_have_count(1)


#: Left edges of the characters of ``word`` in the first text node of ``selector`` that holds it.
CHAR_LEFTS = """([selector, word]) => {
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(word);
    if (at < 0) continue;
    return [...word].map((_, k) => {
      const range = document.createRange();
      range.setStart(node, at + k);
      range.setEnd(node, at + k + 1);
      return range.getBoundingClientRect().left;
    });
  }
  return null;
}"""


def reads_left_to_right(page: Any, selector: str, word: str) -> bool:
    lefts = page.evaluate(CHAR_LEFTS, [selector, word])
    assert lefts is not None, (selector, word, page.locator(selector).inner_text())
    return bool(all(a < b for a, b in zip(lefts, lefts[1:], strict=False)))


def test_a_right_to_left_override_in_a_name_leaves_the_pages_words_alone(
        emulator: Emulator, open_page: Any) -> None:
    alice = emulator.create_user("alice")
    mallory = emulator.create_user(RLO + "mallory")
    created = emulator.create_server(RLO + "Evil Server", alice["user"]["publicId"],
                                     channels=[{"name": "general", "type": "TEXT"}])
    sid = created["server"]["publicId"]
    emulator.add_member(sid, mallory["user"]["publicId"])
    page = open_page("alice")
    page.locator(f'#rail .server-btn[data-id="{sid}"]').click()
    page.locator('#channels .channel[data-name="general"]').click()
    mallory_page = open_page(RLO + "mallory")
    mallory_page.locator('#channels .channel[data-name="general"]').click()
    mallory_page.locator("#composer").press_sequentially("hi")
    expect(page.locator("#typing")).to_contain_text("is typing")
    assert reads_left_to_right(page, "#typing", "typing"), "the name turned 'is typing' around"
    # a notice about a server whose name holds the override, with the page's words after it
    emulator.delete_server(sid)
    expect(page.locator("#notices .notice-text").filter(has_text="no longer in")).to_have_count(1)
    assert reads_left_to_right(page, "#notices", "deleted"), "the server name turned the notice around"


#: Opens a WebSocket to the socket.io path and reports what the page could see of it.
OPEN_SOCKET = """(url) => new Promise((resolve) => {
  const seen = [];
  const ws = new WebSocket(url);
  ws.onopen = () => seen.push("open");
  ws.onmessage = (event) => { seen.push("frame " + String(event.data).slice(0, 2)); ws.close(); };
  ws.onerror = () => seen.push("error");
  ws.onclose = () => resolve(seen);
})"""


def test_a_page_of_another_origin_cannot_open_the_socket(
        emulator: Emulator, chromium_context: Any, other_site: Callable[[str], str]) -> None:
    url = emulator.socket_url.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    page = chromium_context.new_page()
    page.goto(other_site("<!DOCTYPE html><title>other</title>"))
    assert page.evaluate(OPEN_SOCKET, url) == ["error"]  # refused before it opened: no frame read
    # the emulator's own page, on its own origin, opens the same socket and reads its first frame
    own = chromium_context.new_page()
    own.goto(emulator.page_url)
    assert own.evaluate(OPEN_SOCKET, url) == ["open", "frame 0{"]
